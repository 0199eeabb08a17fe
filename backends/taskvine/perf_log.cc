#include "backends/taskvine/perf_log.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "backends/taskvine/txn_record.h"

namespace roastcoffea {
namespace taskvine {
namespace {

struct Known {
  const char* name;
  double PerfSample::*slot;
};

constexpr Known kKnownColumns[] = {
    {"workers_connected", &PerfSample::workers_connected},
    {"workers_joined", &PerfSample::workers_joined},
    {"workers_removed", &PerfSample::workers_removed},
    {"workers_lost", &PerfSample::workers_lost},
    {"tasks_waiting", &PerfSample::tasks_waiting},
    {"tasks_on_workers", &PerfSample::tasks_on_workers},
    {"tasks_running", &PerfSample::tasks_running},
    {"tasks_with_results", &PerfSample::tasks_with_results},
    {"tasks_submitted", &PerfSample::tasks_submitted},
    {"tasks_dispatched", &PerfSample::tasks_dispatched},
    {"tasks_done", &PerfSample::tasks_done},
    {"time_execute", &PerfSample::time_execute_us},
    {"bytes_sent", &PerfSample::bytes_sent},
    {"bytes_received", &PerfSample::bytes_received},
    {"total_cores", &PerfSample::total_cores},
    {"committed_cores", &PerfSample::committed_cores},
};

}  // namespace

bool PerfHeader::IsHeader(absl::string_view line) {
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  if (line.empty() || line.front() != '#') return false;
  line.remove_prefix(1);
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  return absl::StartsWith(line, "timestamp");
}

absl::StatusOr<PerfHeader> PerfHeader::Parse(absl::string_view line) {
  if (!IsHeader(line)) {
    return absl::InvalidArgumentError("performance log header must start with '# timestamp'");
  }
  PerfHeader header;
  line.remove_prefix(line.find('#') + 1);
  for (absl::string_view name : absl::StrSplit(line, ' ', absl::SkipWhitespace())) {
    if (!name.empty() && name.back() == '\r') name.remove_suffix(1);
    if (name.empty()) continue;
    double PerfSample::*slot = nullptr;
    for (const Known& known : kKnownColumns) {
      if (name == known.name) slot = known.slot;
    }
    header.names_.emplace_back(name);
    header.slots_.push_back(slot);
  }
  return header;
}

absl::Status PerfHeader::ParseRow(absl::string_view line, PerfSample* sample) const {
  *sample = PerfSample();
  const char* p = line.data();
  const char* end = p + line.size();
  int column = 0;
  while (true) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) ++p;
    if (p == end) break;
    const char* start = p;
    while (p < end && *p != ' ' && *p != '\t' && *p != '\r') ++p;
    const absl::string_view token(start, p - start);
    if (column >= columns()) {
      return absl::InvalidArgumentError(
          absl::StrCat("performance row has more than the header's ", columns(), " columns"));
    }
    if (column == 0) {
      if (!absl::SimpleAtoi(token, &sample->time_us) || sample->time_us < 0 ||
          sample->time_us > kMaxTimeUs) {
        return absl::InvalidArgumentError(
            absl::StrCat("performance timestamp '", token, "' is not an integer"));
      }
    } else {
      double value = 0;
      if (!absl::SimpleAtod(token, &value)) {
        return absl::InvalidArgumentError(absl::StrCat("performance column ", names_[column],
                                                       " value '", token, "' is not a number"));
      }
      if (slots_[column] != nullptr) sample->*slots_[column] = value;
    }
    ++column;
  }
  if (column != columns()) {
    return absl::InvalidArgumentError(
        absl::StrCat("performance row has ", column, " columns, the header has ", columns()));
  }
  return absl::OkStatus();
}

}  // namespace taskvine
}  // namespace roastcoffea
