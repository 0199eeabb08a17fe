// Parse throughput of a large transactions log: the real LNNI log (testdata, 1 MB) replicated
// into /tmp until it is 1 GiB (task ids shifted per copy so every copy adds new tasks, worker
// ids too, like one very long run), then read with LineTailer into a RunModel — the backend's
// code path. Reports bytes/second and the resident memory growth.
//
//   bazel run -c opt //backends/taskvine:parse_benchmark
//   bazel run -c opt //backends/taskvine:parse_benchmark -- --benchmark_filter=Line  (parser only)
// ROASTCOFFEA_BENCH_LOG_MIB sets the size (default 1024). The file is generated once per size.
// ROASTCOFFEA_BENCH_LOG=FILE reads that transactions log instead (e.g. a generated 10^6-task
// run: python3 /work/shared/reliability/repro-2/gen.py tasklog 1000000 DIR 100).
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "backends/taskvine/line_tailer.h"
#include "backends/taskvine/run_model.h"
#include "backends/taskvine/test_util.h"
#include "backends/taskvine/txn_record.h"
#include "benchmark/benchmark.h"

namespace roastcoffea {
namespace taskvine {
namespace {

int64_t TargetBytes() {
  const char* mib = getenv("ROASTCOFFEA_BENCH_LOG_MIB");
  return (mib != nullptr ? atoll(mib) : 1024) << 20;
}

std::string SourceLog() {
  // Under `bazel run` the working directory is the runfiles tree.
  std::string log;
  if (!ReadWholeFile("backends/taskvine/testdata/lnni-2025-03-transactions.gz", &log).ok()) {
    fprintf(stderr, "cannot read the LNNI log from the runfiles\n");
    exit(1);
  }
  return log;
}

// Rewrites task ids (TASK/LIBRARY <id>; LNNI ids are < 2000) and worker ids so that copy `k` is a
// new set of tasks numbered after the previous ones, as in one long run.
std::string ShiftCopy(const std::string& log, int k) {
  std::string out;
  out.reserve(log.size() + log.size() / 20);
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (line.empty() || line.front() == '#') continue;
    std::vector<absl::string_view> t = absl::StrSplit(line, ' ');
    if (t.size() > 3 && (t[2] == "TASK" || t[2] == "LIBRARY")) {
      int64_t id = 0;
      if (absl::SimpleAtoi(t[3], &id)) {
        const std::string shifted = absl::StrCat(id + static_cast<int64_t>(k) * 2000);
        out.append(line.data(), t[3].data() - line.data());
        out.append(shifted);
        absl::string_view rest = line.substr(t[3].data() + t[3].size() - line.data());
        // Worker ids in TASK records.
        const size_t w = rest.find("worker-");
        if (w != absl::string_view::npos) {
          out.append(rest.data(), w + 7);
          out.append(absl::StrCat(k % 10));
          out.append(rest.substr(w + 8).data(), rest.size() - w - 8);
        } else {
          out.append(rest.data(), rest.size());
        }
        out.push_back('\n');
        continue;
      }
    }
    const size_t w = line.find("worker-");
    if (w != absl::string_view::npos && t[2] == "WORKER") {
      out.append(line.data(), w + 7);
      out.append(absl::StrCat(k % 10));
      out.append(line.substr(w + 8).data(), line.size() - w - 8);
    } else if (t.size() > 3 && t[2] == "MANAGER") {
      continue;  // one START for the whole file
    } else {
      out.append(line.data(), line.size());
    }
    out.push_back('\n');
  }
  return out;
}

const std::string& BigLog() {
  static const std::string* path = [] {
    if (const char* given = getenv("ROASTCOFFEA_BENCH_LOG"); given != nullptr && *given != '\0')
      return new std::string(given);
    const int64_t target = TargetBytes();
    auto* p =
        new std::string(absl::StrCat("/tmp/roastcoffea-taskvine-bench-", target >> 20, "MiB.log"));
    FILE* existing = fopen(p->c_str(), "rb");
    if (existing != nullptr) {
      fseek(existing, 0, SEEK_END);
      const long size = ftell(existing);
      fclose(existing);
      if (size >= target) return p;
    }
    const std::string source = SourceLog();
    const std::string tmp = *p + ".tmp";
    FILE* f = fopen(tmp.c_str(), "wb");
    if (f == nullptr) {
      fprintf(stderr, "cannot write %s\n", tmp.c_str());
      exit(1);
    }
    const std::string start = "1742250321362810 318561 MANAGER 318561 START 0\n";
    fwrite(start.data(), 1, start.size(), f);
    int64_t written = static_cast<int64_t>(start.size());
    for (int k = 0; written < target; ++k) {
      const std::string copy = ShiftCopy(source, k);
      fwrite(copy.data(), 1, copy.size(), f);
      written += static_cast<int64_t>(copy.size());
    }
    fclose(f);
    rename(tmp.c_str(), p->c_str());
    return p;
  }();
  return *path;
}

int64_t MaxRssBytes() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

// Polls until the whole file is read; the bytes read.
absl::StatusOr<int64_t> ReadAll(LineTailer& tailer,
                                absl::FunctionRef<void(absl::string_view, int64_t)> on_line) {
  int64_t total = 0;
  do {
    absl::StatusOr<int64_t> read = tailer.Poll(on_line);
    if (!read.ok()) return read;
    total += *read;
  } while (tailer.more_pending());
  return total;
}

// The backend's path: LineTailer -> RunModel (parse + task state).
void BM_TransactionsLogIntoRunModel(benchmark::State& state) {
  const std::string& path = BigLog();
  int64_t bytes = 0;
  const int64_t rss_before = MaxRssBytes();
  for (auto _ : state) {
    RunModel model;
    LineTailer tailer(path);
    // One Poll reads at most LineTailer::kDefaultMaxBytesPerPoll: poll to the end, as the
    // backend does for a finished run.
    absl::StatusOr<int64_t> read = ReadAll(tailer, [&model](absl::string_view line, int64_t n) {
      model.ConsumeTransactionLine(line, n);
    });
    if (!read.ok()) state.SkipWithError("cannot read the log");
    bytes += *read;
    benchmark::DoNotOptimize(model.transaction_records());
    state.counters["records"] = static_cast<double>(model.transaction_records());
    state.counters["tasks"] = static_cast<double>(model.tasks().size());
    state.counters["malformed"] = static_cast<double>(model.malformed_count());
  }
  state.SetBytesProcessed(bytes);
  state.counters["max_rss_growth_MiB"] =
      static_cast<double>(MaxRssBytes() - rss_before) / (1 << 20);
}
BENCHMARK(BM_TransactionsLogIntoRunModel)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->MeasureProcessCPUTime();

// The line parser alone over the same file.
void BM_LineParserOnly(benchmark::State& state) {
  const std::string& path = BigLog();
  int64_t bytes = 0;
  for (auto _ : state) {
    LineTailer tailer(path);
    int64_t ok = 0;
    absl::StatusOr<int64_t> read = ReadAll(tailer, [&ok](absl::string_view line, int64_t) {
      TxnRecord record;
      ok += ParseTransactionLine(line, &record).ok();
    });
    if (!read.ok()) state.SkipWithError("cannot read the log");
    bytes += *read;
    benchmark::DoNotOptimize(ok);
  }
  state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_LineParserOnly)->Unit(benchmark::kMillisecond)->Iterations(1)->MeasureProcessCPUTime();

}  // namespace
}  // namespace taskvine
}  // namespace roastcoffea
