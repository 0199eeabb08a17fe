#include "bench/gen_taskvine_log.h"

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace roastcoffea {

void WriteGenTaskLog(int64_t tasks, int workers, std::ostream& out) {
  constexpr int64_t kStartUs = 1742250330000000;  // gen.py's T0
  const auto worker = [](int64_t w) { return absl::StrFormat("worker-%032x", w); };
  out << "# time manager_pid MANAGER manager_pid START|END time_from_origin\n"
      << kStartUs << " 4242 MANAGER 4242 START 0\n";
  for (int w = 0; w < workers; ++w) {
    const int64_t t = kStartUs + 100000 + w * 100;
    out << t << " 4242 WORKER " << worker(w)
        << absl::StrFormat(" CONNECTION 10.0.%d.%d:9%03d\n", w / 256, w % 256, w % 1000) << t + 10
        << " 4242 WORKER " << worker(w)
        << " RESOURCES {\"memory\":[8000,\"MB\"],\"disk\":[70001,\"MB\"],\"cores\":[1,"
           "\"cores\"]}\n";
  }
  const int64_t slots = (tasks + workers - 1) / workers;
  std::string block;
  for (int64_t s = 0; s < slots; ++s) {
    const int64_t first = s * workers, last = std::min(tasks, first + workers);
    const int64_t ts = kStartUs + 1000000 + s * 500000;  // us
    const double ts_s = static_cast<double>(ts) * 1e-6;
    block.clear();
    for (int64_t i = first; i < last; ++i) {
      absl::StrAppend(&block, ts - 5000, " 4242 TASK ", i + 1,
                      " READY processing FIRST_RESOURCES 1 {\"cores\":[1,\"cores\"]}\n");
    }
    for (int64_t i = first; i < last; ++i) {
      absl::StrAppend(&block, ts, " 4242 TASK ", i + 1, " RUNNING ", worker(i % workers),
                      absl::StrFormat(" FIRST_RESOURCES {\"time_commit_start\":[%.6f,\"s\"],"
                                      "\"time_commit_end\":[%.6f,\"s\"],\"cores\":[1,\"cores\"]}\n",
                                      ts_s, ts_s + 0.001));
    }
    for (int64_t i = first; i < last; ++i) {
      absl::StrAppend(&block, ts + 470000, " 4242 TASK ", i + 1, " WAITING_RETRIEVAL ",
                      worker(i % workers), "\n");
    }
    for (int64_t i = first; i < last; ++i) {
      absl::StrAppend(&block, ts + 480000, " 4242 TASK ", i + 1,
                      absl::StrFormat(" RETRIEVED SUCCESS 0 {} {\"time_worker_start\":[%.6f,\"s\"],"
                                      "\"time_worker_end\":[%.6f,\"s\"],\"wall_time\":[0.46,\"s\"],"
                                      "\"cpu_time\":[0.44,\"s\"],\"memory\":[530,\"MB\"],"
                                      "\"cores\":[1,\"cores\"]}\n",
                                      ts_s + 0.005, ts_s + 0.465));
    }
    for (int64_t i = first; i < last; ++i) {
      absl::StrAppend(&block, ts + 481000, " 4242 TASK ", i + 1, " DONE SUCCESS 0\n");
    }
    out << block;
  }
  out << kStartUs + 1000000 + slots * 500000 + 1000000 << " 4242 MANAGER 4242 END 0\n";
}

}  // namespace roastcoffea
