#include "aggregation/findings_contention.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace findings_rules {
namespace {

// Why the rule cannot be decided, from what kind of run it was.
std::string NoEvidenceReason(const FindingsInputs& in, bool any_chunk) {
  const std::string backend = ConfiguredBackend(in);
  if (backend == "dask") {
    return "Dask reports each worker process's CPU use, not its machine's load";
  }
  if (backend == "taskvine" || backend == "workqueue") {
    return "no machine load in the task records (the tasks ran without the resource monitor)";
  }
  if (!any_chunk) return "no chunk records";
  return "no run-queue wait or machine load in the chunk records";
}

std::optional<double> PlausibleRunQueueWaitOf(const LoadFields& f) {
  return PlausibleRunQueueWait(f.has_run_queue_wait, f.duration_seconds, f.cpu_seconds,
                               f.run_queue_wait_seconds);
}

// Seconds a contended chunk lost waiting for a CPU.
double WaitSeconds(const LoadFields& chunk, double ratio) {
  if (const std::optional<double> wait = PlausibleRunQueueWaitOf(chunk)) return *wait;
  return std::max(0.0, chunk.duration_seconds) * (1.0 - 1.0 / ratio);
}

// ChunkLoadOverCpus from the fields.
std::optional<double> LoadOverCpus(const LoadFields& chunk) {
  if (chunk.has_machine_load && chunk.has_machine_cpus && chunk.machine_cpus > 0 &&
      chunk.machine_load >= 0) {
    return chunk.machine_load / chunk.machine_cpus;
  }
  const std::optional<double> wait = PlausibleRunQueueWaitOf(chunk);
  if (wait.has_value() && chunk.cpu_seconds > 0) {
    return (chunk.cpu_seconds + *wait) / chunk.cpu_seconds;
  }
  return std::nullopt;
}

// Total length of the union of [start, end) intervals.
double UnionSeconds(std::vector<std::pair<int64_t, int64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  double total = 0;
  int64_t from = 0, to = 0;
  bool open = false;
  for (const auto& [start, end] : intervals) {
    if (open && start <= to) {
      to = std::max(to, end);
      continue;
    }
    if (open) total += 1e-9 * static_cast<double>(to - from);
    from = start, to = end, open = true;
  }
  if (open) total += 1e-9 * static_cast<double>(to - from);
  return total;
}

std::string Suggestion(const FindingsInputs& in, bool engine) {
  if (engine) {
    return "Other processes shared the workers' machines, or the workers offered more cores "
           "than their machines have: give each worker a whole machine (or declare only the "
           "cores it may use) and run fewer tasks at once per machine; more workers on the same "
           "machines would not help.";
  }
  const std::optional<double> threads = InProcessThreads(in);
  if (threads.has_value() && in.usable_cpus.has_value() && *threads > *in.usable_cpus + 1e-9) {
    return absl::StrFormat(
        "Use at most %g worker threads (--threads=%g): threads beyond the "
        "%g usable CPUs only wait.",
        *in.usable_cpus, *in.usable_cpus, *in.usable_cpus);
  }
  return "Other processes competed for the CPUs: measure on an idle or dedicated machine, or "
         "use fewer worker threads.";
}

}  // namespace

bool PlausibleWait(double duration_seconds, double cpu_seconds, double run_queue_wait_seconds) {
  constexpr double kRelativeSlack = 1.05, kAbsoluteSlackSeconds = 1e-3;
  return std::max(0.0, cpu_seconds) + std::max(0.0, run_queue_wait_seconds) <=
         std::max(0.0, duration_seconds) * kRelativeSlack + kAbsoluteSlackSeconds;
}

std::optional<double> PlausibleRunQueueWait(bool measured, double duration_seconds,
                                            double cpu_seconds, double run_queue_wait_seconds) {
  if (!measured || !PlausibleWait(duration_seconds, cpu_seconds, run_queue_wait_seconds)) {
    return std::nullopt;
  }
  return std::max(0.0, run_queue_wait_seconds);
}

std::optional<double> PlausibleRunQueueWait(const v1::ChunkRecord& chunk) {
  return PlausibleRunQueueWait(chunk.has_run_queue_wait_seconds(), chunk.duration_seconds(),
                               chunk.cpu_seconds(), chunk.run_queue_wait_seconds());
}

LoadFields LoadFieldsOf(const v1::ChunkRecord& chunk) {
  LoadFields f;
  f.has_machine_load = chunk.has_machine_load();
  f.has_machine_cpus = chunk.has_machine_cpus();
  f.has_run_queue_wait = chunk.has_run_queue_wait_seconds();
  f.machine_load = chunk.machine_load();
  f.machine_cpus = chunk.machine_cpus();
  f.run_queue_wait_seconds = chunk.run_queue_wait_seconds();
  f.cpu_seconds = chunk.cpu_seconds();
  f.duration_seconds = chunk.duration_seconds();
  return f;
}

std::optional<double> ChunkLoadOverCpus(const v1::ChunkRecord& chunk) {
  return LoadOverCpus(LoadFieldsOf(chunk));
}

std::string MachineLoadNote(const v1::ChunkRecord& chunk) {
  if (!chunk.has_machine_cpus() || chunk.machine_cpus() <= 0) return "";
  return absl::StrFormat(", machine load %.2f on %g CPUs", chunk.machine_load(),
                         chunk.machine_cpus());
}

std::string ContendedNote(const std::vector<const v1::ChunkRecord*>& named, const Builder& b) {
  int64_t loaded = 0;
  for (const v1::ChunkRecord* chunk : named) {
    loaded +=
        chunk->has_machine_cpus() && ChunkLoadOverCpus(*chunk).value_or(0) >= kContentionLoadRatio;
  }
  if (loaded * 2 <= static_cast<int64_t>(named.size())) return "";
  return absl::StrCat(" ", Count(loaded, "named chunk", "named chunks"),
                      " ran on a machine loaded beyond its CPUs",
                      b.Fired("cpu_contention") ? " (see the CPU contention finding)" : "",
                      ": other processes slowed them.");
}

std::string OffCpuNote(bool contended) {
  return contended ? " (run-queue delay not measured, but the machines ran more processes than "
                     "CPUs: see CPU contention; much of this is waiting for a CPU, not I/O)"
                   : " (run-queue delay not measured: part may be waiting for a CPU)";
}

namespace {

void AddContentionNumbers(v1::Finding& f, double share, size_t chunks, double peak, double lost,
                          double cost) {
  Number(f, "contended_share", share, "fraction");
  Number(f, "contended_chunks", static_cast<double>(chunks), "chunks");
  Number(f, "peak_load_over_cpus", peak, "ratio");
  Number(f, "wait_seconds", lost, "s");
  Number(f, "cost_seconds", cost, "s");
}

// What CpuContention reads of the timed records, in one pass.
struct LoadScan {
  int64_t first_ns = INT64_MAX, last_ns = INT64_MIN;
  int64_t with_evidence = 0;
  bool engine = false;  // a record with machine_cpus (the resource monitor)
  std::vector<std::pair<int64_t, int64_t>> contended;
  double lost = 0, peak = 0, contended_seconds = 0;
  size_t peak_index = 0;  // the record of `peak`, when any_peak
  bool any_peak = false;
};

LoadScan ScanLoad(const ChunkReader& chunks) {
  LoadScan scan;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const int64_t start = chunks.start_unix_ns(i), end = chunks.end_unix_ns(i);
    if (end <= start) continue;
    scan.first_ns = std::min(scan.first_ns, start);
    scan.last_ns = std::max(scan.last_ns, end);
    const LoadFields chunk = chunks.load_fields(i);
    const std::optional<double> ratio = LoadOverCpus(chunk);
    if (!ratio.has_value()) continue;
    ++scan.with_evidence;
    scan.engine |= chunk.has_machine_cpus;
    if (*ratio > scan.peak) scan.peak = *ratio, scan.peak_index = i, scan.any_peak = true;
    if (*ratio < kContentionLoadRatio) continue;
    scan.contended.emplace_back(start, end);
    scan.lost += WaitSeconds(chunk, *ratio);
    scan.contended_seconds += std::max(0.0, chunk.duration_seconds);
  }
  return scan;
}

}  // namespace

void CpuContention(const FindingsInputs& in, bool any_load_evidence, Builder& b) {
  const bool any_chunk = in.num_chunks() > 0;
  if (!any_chunk || !any_load_evidence) {
    b.NotEvaluated("cpu_contention", NoEvidenceReason(in, any_chunk));
    return;
  }
  const ChunkReader chunks(in);
  const LoadScan scan = ScanLoad(chunks);
  const int64_t first_ns = scan.first_ns, last_ns = scan.last_ns;
  const int64_t with_evidence = scan.with_evidence;
  const bool engine = scan.engine;
  const std::vector<std::pair<int64_t, int64_t>>& contended = scan.contended;
  const double lost = scan.lost, peak = scan.peak, contended_seconds = scan.contended_seconds;
  const v1::ChunkRecord* peak_chunk = scan.any_peak ? &chunks.record(scan.peak_index) : nullptr;
  if (with_evidence == 0 || last_ns <= first_ns) {
    b.NotEvaluated("cpu_contention", NoEvidenceReason(in, true));
    return;
  }
  // Run-queue wait is cpu_starvation's evidence too: when it fired, its finding carries this
  // rule's share and cost instead of a second finding with the same cause and advice.
  v1::Finding* starvation = engine ? nullptr : b.FindMutable("cpu_starvation");
  const double span = 1e-9 * static_cast<double>(last_ns - first_ns);
  const double covered = UnionSeconds(contended);
  if (starvation == nullptr || covered < kContentionRunShare * span) {
    b.Evaluated("cpu_contention");
  }
  if (covered < kContentionRunShare * span) return;
  // The contended chunks ran `concurrency` at a time on average: their waiting, spread over
  // them, is what it added to the run.
  const double concurrency = contended_seconds / covered;
  const double cost = concurrency > 0 ? lost / concurrency : 0;
  std::string evidence = absl::StrCat(
      Count(static_cast<int64_t>(contended.size()), "chunk", "chunks"), " of ", with_evidence,
      " ran with load >= ", absl::StrFormat("%g", kContentionLoadRatio), "x the CPUs",
      engine ? " (resource monitor: machine_load over machine_cpus)"
             : " (from run-queue wait: load / CPUs = (CPU + wait) / CPU)",
      ", covering ", Seconds(covered), " of the ", Seconds(span), " run (", Pct(covered / span),
      "). Highest: ");
  if (engine && peak_chunk->has_machine_cpus()) {
    absl::StrAppend(&evidence, absl::StrFormat("load %.2f on %g CPUs", peak_chunk->machine_load(),
                                               peak_chunk->machine_cpus()));
  } else {
    absl::StrAppend(&evidence, absl::StrFormat("%.2fx", peak));
  }
  absl::StrAppend(&evidence, " (", DescribeChunk(*peak_chunk), "). They waited for a CPU ",
                  Seconds(lost), " in all, ", absl::StrFormat("%.1f", concurrency),
                  " at a time: about ", Seconds(cost), " of the run");
  if (!engine && in.host_facts != nullptr && in.host_facts->has_load_average_1m_start() &&
      in.host_facts->has_load_average_1m_end()) {
    absl::StrAppend(&evidence, absl::StrFormat("; host load average %.2f -> %.2f on %d CPUs",
                                               in.host_facts->load_average_1m_start(),
                                               in.host_facts->load_average_1m_end(),
                                               in.host_facts->online_cpus()));
  }
  absl::StrAppend(&evidence, ".");
  if (starvation != nullptr) {
    b.NotEvaluated("cpu_contention", "reported with cpu_starvation (the same run-queue wait)");
    starvation->set_evidence(absl::StrCat(starvation->evidence(), " CPU contention: ", evidence));
    AddContentionNumbers(*starvation, covered / span, contended.size(), peak, lost, cost);
    return;
  }
  v1::Finding& f =
      b.Add(v1::Finding::SEVERITY_WARNING, "cpu_contention",
            absl::StrCat("CPU contention: more runnable processes than CPUs for ",
                         Pct(covered / span), " of the run, costing about ", Seconds(cost)),
            std::move(evidence), Suggestion(in, engine));
  AddContentionNumbers(f, covered / span, contended.size(), peak, lost, cost);
}

}  // namespace findings_rules
}  // namespace aggregation_internal
}  // namespace roastcoffea
