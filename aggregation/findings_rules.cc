#include "aggregation/findings_rules.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "aggregation/findings_contention.h"
#include "aggregation/worker_names.h"
#include "schema/worker_series_columns.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace findings_rules {

std::string Pct(double fraction) {
  const double percent = 100.0 * fraction;
  return std::fabs(percent) >= 9.95 ? absl::StrFormat("%.0f%%", percent)
                                    : absl::StrFormat("%.1f%%", percent);
}

std::string ThreeDigits(double value, absl::string_view unit) {
  const double magnitude = std::fabs(value);
  // One constant format per branch: absl::StrFormat checks its format at compile time.
  if (magnitude >= 99.95) return absl::StrFormat("%.0f %s", value, unit);
  if (magnitude >= 9.995) return absl::StrFormat("%.1f %s", value, unit);
  return absl::StrFormat("%.2f %s", value, unit);
}

std::string Seconds(double seconds) {
  const double magnitude = std::fabs(seconds);
  if (magnitude == 0.0) return "0 s";
  if (magnitude < 1e-3) return ThreeDigits(seconds * 1e6, "\u00B5s");
  if (magnitude < 0.9995) return ThreeDigits(seconds * 1e3, "ms");
  return ThreeDigits(seconds, "s");
}

std::string Bytes(double bytes) {
  static constexpr absl::string_view kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t unit = 0;
  while (unit + 1 < sizeof(kUnits) / sizeof(kUnits[0]) && std::fabs(bytes) >= 1023.5) {
    bytes /= 1024.0;
    ++unit;
  }
  return ThreeDigits(bytes, kUnits[unit]);
}

std::string Count(int64_t n, absl::string_view one, absl::string_view many) {
  return absl::StrCat(n, " ", n == 1 ? one : many);
}

absl::string_view BaseName(absl::string_view path) {
  const size_t slash = path.find_last_of('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

std::string Slot(const v1::ChunkRecord& chunk) {
  // The tables', Gantt chart's and traces' naming: thread 0 is "w/thread-0" like the others.
  return WorkerThreadName(chunk.worker(), chunk.thread_index());
}

// A name from the input goes into a sentence at most this long (a 10 MB file name was printed
// whole, reliability study 2, N12); the middle goes, the start and the end stay.
constexpr size_t kMaxNameBytes = 160;

std::string ChunkName(const v1::ChunkRecord& chunk) {
  if (!chunk.file().empty()) return ElideMiddle(std::string(BaseName(chunk.file())), kMaxNameBytes);
  if (!chunk.task_id().empty())
    return absl::StrCat("task ", ElideMiddle(chunk.task_id(), kMaxNameBytes));
  if (!chunk.uuid().empty()) return absl::StrCat("chunk ", chunk.uuid().substr(0, 12));
  return "a chunk without file or task id";
}

std::string DescribeChunk(const v1::ChunkRecord& chunk) {
  std::string out = ChunkName(chunk);
  if (!chunk.file().empty() || chunk.entry_stop() > chunk.entry_start()) {
    absl::StrAppend(&out, " [", chunk.entry_start(), ", ", chunk.entry_stop(), ")");
  }
  std::vector<std::string> where;
  if (!chunk.dataset().empty()) where.push_back(ElideMiddle(chunk.dataset(), kMaxNameBytes));
  if (!chunk.worker().empty())
    where.push_back(absl::StrCat("on ", ElideMiddle(Slot(chunk), kMaxNameBytes)));
  if (!where.empty()) absl::StrAppend(&out, " (", absl::StrJoin(where, ", "), ")");
  return out;
}

bool Before(const v1::ChunkRecord& a, const v1::ChunkRecord& c) {
  return std::forward_as_tuple(a.start_unix_ns(), a.file(), a.entry_start(), a.attempt(),
                               a.worker(), a.end_unix_ns(), a.duration_seconds(), a.uuid()) <
         std::forward_as_tuple(c.start_unix_ns(), c.file(), c.entry_start(), c.attempt(),
                               c.worker(), c.end_unix_ns(), c.duration_seconds(), c.uuid());
}

std::string ElideMiddle(const std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  const auto boundary = [&](size_t i) {
    while (i > 0 && i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) --i;
    return i;
  };
  const size_t head = boundary(max_bytes / 2);
  const size_t tail = boundary(text.size() - max_bytes / 2);
  return absl::StrCat(text.substr(0, head), " ... ", text.substr(tail));
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return 0.5 * (lower + upper);
}

void Number(v1::Finding& finding, absl::string_view key, double value, absl::string_view unit) {
  v1::FindingNumber& number = *finding.add_numbers();
  number.set_key(std::string(key));
  number.set_value(value);
  number.set_unit(std::string(unit));
}

const v1::Warning* FindWarning(const FindingsInputs& in, absl::string_view code) {
  if (in.warnings == nullptr) return nullptr;
  for (const v1::Warning& warning : *in.warnings) {
    if (warning.code() == code) return &warning;
  }
  return nullptr;
}

bool InProcess(const FindingsInputs& in) {
  return in.tracking != nullptr && in.tracking->workers_share_process();
}

std::optional<double> InProcessThreads(const FindingsInputs& in) {
  const v1::AggregatedMetrics& m = *in.metrics;
  if (!InProcess(in) || !m.has_workers() || !m.workers().has_total_cores()) return std::nullopt;
  return m.workers().total_cores();
}

void CpuStarvation(const FindingsInputs& in, Builder& b) {
  const v1::CpuMetrics& cpu = in.metrics->cpu();
  const std::optional<double> threads = InProcessThreads(in);
  const bool oversubscribed =
      threads.has_value() && in.usable_cpus.has_value() && *threads > *in.usable_cpus + 1e-9;
  const std::string threads_text =
      oversubscribed ? absl::StrFormat("%g worker threads on %g usable CPU%s", *threads,
                                       *in.usable_cpus, *in.usable_cpus == 1 ? "" : "s")
                     : "";
  std::string suggestion;
  if (oversubscribed) {
    suggestion = absl::StrFormat(
        "Use at most %g worker thread%s (--threads=%g, the default): threads beyond the "
        "CPUs only wait.",
        *in.usable_cpus, *in.usable_cpus == 1 ? "" : "s", *in.usable_cpus);
  } else if (FindWarning(in, "host_overloaded") != nullptr) {
    suggestion = "Other processes competed for the CPUs: measure on an idle or dedicated machine.";
  } else {
    suggestion =
        "Something else competed for the CPUs (other processes, hypervisor steal): measure on an "
        "idle or dedicated machine, or use fewer worker threads.";
  }

  // Run-queue wait beyond the chunks' wall time counted other threads' (PlausibleWait): the
  // share would read above 100 %, so it is no evidence.
  const bool measured =
      cpu.has_chunk_run_queue_wait_seconds() && cpu.chunk_wall_seconds() > 0.0 &&
      PlausibleWait(cpu.chunk_wall_seconds(), 0.0, cpu.chunk_run_queue_wait_seconds());
  if (measured || (threads.has_value() && in.usable_cpus.has_value())) {
    b.Evaluated("cpu_starvation");
  } else {
    b.NotEvaluated("cpu_starvation", cpu.has_chunk_run_queue_wait_seconds()
                                         ? "run-queue wait above the chunks' wall time (it "
                                           "counted other threads), and no thread count"
                                         : "no run-queue figures or thread count");
  }
  if (measured) {
    const double share = cpu.chunk_run_queue_wait_seconds() / cpu.chunk_wall_seconds();
    if (share < kStarvationShare) return;
    std::string evidence =
        absl::StrCat("Run-queue delay ", Seconds(cpu.chunk_run_queue_wait_seconds()), " of ",
                     Seconds(cpu.chunk_wall_seconds()), " chunk wall time");
    if (oversubscribed) absl::StrAppend(&evidence, "; ", threads_text);
    if (FindWarning(in, "host_overloaded") != nullptr && in.host_facts != nullptr &&
        in.host_facts->has_load_average_1m_start() && in.host_facts->has_load_average_1m_end()) {
      absl::StrAppend(&evidence, absl::StrFormat("; load average %.2f -> %.2f on %d online CPUs",
                                                 in.host_facts->load_average_1m_start(),
                                                 in.host_facts->load_average_1m_end(),
                                                 in.host_facts->online_cpus()));
    }
    absl::StrAppend(&evidence, ".");
    v1::Finding& f = b.Add(
        share >= kStarvationCriticalShare ? v1::Finding::SEVERITY_CRITICAL
                                          : v1::Finding::SEVERITY_WARNING,
        "cpu_starvation",
        absl::StrCat("CPU starvation: chunks waited for a CPU ", Pct(share), " of their time"),
        std::move(evidence), std::move(suggestion));
    Number(f, "run_queue_wait_fraction", share, "fraction");
    Number(f, "run_queue_wait_seconds", cpu.chunk_run_queue_wait_seconds(), "s");
    Number(f, "chunk_wall_seconds", cpu.chunk_wall_seconds(), "s");
    if (oversubscribed) {
      Number(f, "worker_threads", *threads, "threads");
      Number(f, "usable_cpus", *in.usable_cpus, "cpus");
    }
    return;
  }
  if (!oversubscribed) return;
  // No run-queue measurement: the thread count alone says the threads had to share.
  v1::Finding& f = b.Add(v1::Finding::SEVERITY_WARNING, "cpu_starvation",
                         absl::StrCat("More worker threads than usable CPUs: ", threads_text),
                         "Run-queue delay was not measured; the threads had to share the CPUs.",
                         std::move(suggestion));
  Number(f, "worker_threads", *threads, "threads");
  Number(f, "usable_cpus", *in.usable_cpus, "cpus");
}

namespace {

// The timed section with the largest share of chunk time, as "read_columns (65%)".
std::string LargestSection(const v1::AggregatedMetrics& m) {
  if (!m.has_chunks()) return "";
  const v1::SectionStats* best = nullptr;
  for (const v1::SectionStats& section : m.chunks().section_stats()) {
    if (section.kind() != v1::SectionRecord::KIND_TIME) continue;
    if (best == nullptr ||
        section.share_of_chunk_time_fraction() > best->share_of_chunk_time_fraction()) {
      best = &section;
    }
  }
  if (best == nullptr || best->share_of_chunk_time_fraction() <= 0.0) return "";
  return absl::StrCat(best->name(), " (", Pct(best->share_of_chunk_time_fraction()),
                      " of chunk time)");
}

// Without per-chunk CPU, the engine's own split of task thread time (Dask's thread-cpu and
// thread-noncpu) says how much of it the processor spent off CPU.
void IoBoundFromFineMetrics(const FindingsInputs& in, Builder& b) {
  const v1::AggregatedMetrics& m = *in.metrics;
  const double on = m.has_fine() ? m.fine().processor_cpu_time_seconds() : 0.0;
  const double off = m.has_fine() ? m.fine().processor_io_wait_time_seconds() : 0.0;
  if (!(on >= 0.0) || !(off >= 0.0) || on + off <= 0.0) {
    b.NotEvaluated("io_bound", "no CPU figures");
    return;
  }
  b.Evaluated("io_bound");
  const double share = off / (on + off);
  if (share < kBlockedShare) return;
  std::string evidence =
      absl::StrCat("Processor off-CPU time ", Seconds(off), " of ", Seconds(on + off),
                   " task thread time (the engine's thread-cpu / thread-noncpu "
                   "accounting); it includes waiting for a CPU or the GIL");
  if (FindWarning(in, "host_overloaded") != nullptr) {
    absl::StrAppend(&evidence, ", and other work competed for the CPUs during this run");
  }
  absl::StrAppend(&evidence, ".");
  v1::Finding& f = b.Add(
      v1::Finding::SEVERITY_WARNING, "io_bound",
      absl::StrCat("Off CPU: tasks were off CPU ", Pct(share),
                   " of their time (I/O, locks, sleep or waiting for a CPU)"),
      std::move(evidence),
      "If the tasks read data: read fewer bytes (only the columns used), from closer or faster "
      "storage, or cache the input. If they should be computing: look for sleeps, locks or the "
      "GIL (more processes with fewer threads each), and measure on an idle machine.");
  Number(f, "off_cpu_fraction", share, "fraction");
  Number(f, "off_cpu_seconds", off, "s");
  Number(f, "task_thread_seconds", on + off, "s");
}

}  // namespace

void IoBound(const FindingsInputs& in, Builder& b) {
  const v1::CpuMetrics& cpu = in.metrics->cpu();
  const double wall = cpu.chunk_wall_seconds();
  if (!cpu.has_chunk_cpu_seconds() || wall <= 0.0) {
    IoBoundFromFineMetrics(in, b);
    return;
  }
  b.Evaluated("io_bound");
  const bool split = cpu.has_chunk_blocked_seconds();
  // Without the run-queue split, off-CPU time may be waiting for a CPU: say so; on machines
  // loaded beyond their CPUs (cpu_contention) it mostly is.
  const bool contended = !split && b.Fired("cpu_contention");
  const double off =
      split ? cpu.chunk_blocked_seconds() : std::max(0.0, wall - cpu.chunk_cpu_seconds());
  const double share = off / wall;
  if (share < kBlockedShare) return;
  // The rule names I/O only when the chunks are known to have read: blocked time is also locks,
  // sleeps and remote calls.
  const v1::WorkflowMetrics& workflow = in.metrics->workflow();
  double bytes_read = static_cast<double>(std::max<int64_t>(0, workflow.total_bytes_read()));
  if (bytes_read <= 0.0 && in.has_chunks()) {  // records without a report
    const ChunkReader chunks(in);
    for (size_t i = 0; i < chunks.size(); ++i) {
      bytes_read += static_cast<double>(std::max<int64_t>(0, chunks.compressed_bytes_read(i)));
    }
  }
  const bool read = bytes_read > 0.0;
  std::string evidence =
      absl::StrCat(split ? "Blocked " : "Off CPU ", Seconds(off), " of ", Seconds(wall),
                   " chunk wall time; on CPU ", Pct(cpu.chunk_cpu_seconds() / wall));
  if (!split) absl::StrAppend(&evidence, OffCpuNote(contended));
  if (read) {
    absl::StrAppend(&evidence, "; the chunks read ", Bytes(bytes_read));
  } else {
    absl::StrAppend(&evidence,
                    "; no bytes read were recorded, so the wait may be I/O, locks, "
                    "sleeps or remote calls");
  }
  if (const std::string section = LargestSection(*in.metrics); !section.empty()) {
    absl::StrAppend(&evidence, "; largest section ", section);
  }
  absl::StrAppend(&evidence, ".");
  // More threads than CPUs overlap waits only where the CPUs have room: not when chunks already
  // waited for one (cpu_starvation) or the machines ran more processes than CPUs.
  const bool cpus_full = b.Fired("cpu_starvation") || b.Fired("cpu_contention");
  v1::Finding& f = b.Add(
      v1::Finding::SEVERITY_WARNING, "io_bound",
      absl::StrCat(contended || (!split && !read) ? "Off CPU" : (read ? "I/O-bound" : "Blocked"),
                   ": chunks were ", split ? "blocked" : "off CPU", " ", Pct(share),
                   " of their time"),
      std::move(evidence),
      absl::StrCat(contended ? kFixContentionFirst : "",
                   read ? ""
                        : "Find what the chunks wait on (locks, sleeps, remote calls, reads "
                          "the records do not count); if it is reading: ",
                   "Read fewer bytes (only the columns used), read from closer or faster "
                   "storage, or cache the input",
                   cpus_full ? "; not more worker threads: the CPUs had no room to spare (see "
                               "CPU starvation / contention)."
                             : "; more worker threads than CPUs can overlap computation with "
                               "the waits."));
  Number(f, split ? "blocked_fraction" : "off_cpu_fraction", share, "fraction");
  Number(f, split ? "blocked_seconds" : "off_cpu_seconds", off, "s");
  Number(f, "chunk_wall_seconds", wall, "s");
}

namespace {
// engine_overhead asks for longer tasks; where the idle tail or the load imbalance (evaluated
// before) asked for more, smaller chunks, it says how far, instead of contradicting them.
std::string LargerChunksCaveat(const Builder& b) {
  const v1::Finding* tail = b.Find("idle_tail");
  const bool smaller =
      b.Fired("load_imbalance") ||
      (tail != nullptr && tail->suggestion().find("smaller chunk size") != std::string::npos);
  return smaller ? " Larger chunks only while every worker slot still gets several: the run's "
                   "end was already uneven (see the idle tail / load imbalance finding)."
                 : "";
}
}  // namespace

void EngineOverhead(const FindingsInputs& in, Builder& b) {
  const v1::AggregatedMetrics& m = *in.metrics;
  if (!m.has_fine()) {
    b.NotEvaluated("engine_overhead", "no fine metrics");
    return;
  }
  const v1::FineMetricsSummary& fine = m.fine();
  // Dask (and any engine in its model): time of non-processor task prefixes.
  const double processor =
      fine.processor_cpu_time_seconds() + fine.processor_io_wait_time_seconds();
  const double overhead = fine.overhead_cpu_time_seconds() + fine.overhead_io_wait_time_seconds();
  if (processor > 0.0) b.Evaluated("engine_overhead");
  if (processor > 0.0 && overhead >= kOverheadShare * processor) {
    v1::Finding& f =
        b.Add(v1::Finding::SEVERITY_WARNING, "engine_overhead",
              absl::StrCat("Engine overhead: other tasks took ", Pct(overhead / processor),
                           " of the processor's time"),
              absl::StrCat("Overhead tasks ", Seconds(overhead), " (CPU ",
                           Seconds(fine.overhead_cpu_time_seconds()), ") against the processor's ",
                           Seconds(processor), "."),
              absl::StrCat("Fewer, larger tasks (a larger chunk size), and avoid moving data "
                           "between tasks (persist or fuse the graph).",
                           LargerChunksCaveat(b)));
    Number(f, "overhead_over_processor", overhead / processor, "ratio");
    Number(f, "overhead_seconds", overhead, "s");
    Number(f, "processor_seconds", processor, "s");
    return;
  }
  // TaskVine / Work Queue activities per task.
  double execute = 0, transfers = 0, queue = 0;
  for (const v1::ActivityTotal& total : fine.by_task_prefix()) {
    if (total.unit() != "seconds") continue;
    const absl::string_view activity = total.activity();
    if (activity == "execute") execute += total.value();
    if (activity == "queue-wait") queue += total.value();
    if (activity == "commit" || activity == "worker-wait" || activity == "retrieve" ||
        activity == "output-transfer") {
      transfers += total.value();
    }
  }
  if (execute <= 0.0) {
    b.NotEvaluated("engine_overhead", "no processor or execute time");
    return;
  }
  b.Evaluated("engine_overhead");
  // Summed queue wait is no finding of its own: with every task submitted at once it grows as
  // tasks^2 / slots whatever limited the run. The capacity rules (findings_capacity.h) read the
  // task timeline instead; the sum stays here as a number, never as a share of execute.
  if (transfers < kOverheadShare * execute) return;
  v1::Finding& f =
      b.Add(v1::Finding::SEVERITY_WARNING, "engine_overhead",
            absl::StrCat("Engine overhead: dispatch and transfers took ", Pct(transfers / execute),
                         " of execute time"),
            absl::StrCat("Execute ", Seconds(execute),
                         "; commit, worker-wait, retrieve and output transfer ", Seconds(transfers),
                         " (queue wait summed over tasks ", Seconds(queue), ")."),
            absl::StrCat("Send less per task (shared inputs cached on workers, smaller outputs) "
                         "and make tasks longer (a larger chunk size).",
                         LargerChunksCaveat(b)));
  Number(f, "transfer_over_execute", transfers / execute, "ratio");
  Number(f, "queue_wait_seconds", queue, "s");
  Number(f, "execute_seconds", execute, "s");
}

void ReadAmplificationRule(const FindingsInputs& in, Builder& b) {
  const v1::WorkflowMetrics& workflow = in.metrics->workflow();
  if (!workflow.has_read_amplification() || !workflow.has_distinct_file_bytes()) {
    b.NotEvaluated("read_amplification", "no bytes read per file");
    return;
  }
  b.Evaluated("read_amplification");
  const double ratio = workflow.read_amplification();
  if (ratio < kReadAmplificationRatio) return;
  const double distinct = static_cast<double>(workflow.distinct_file_bytes());
  std::vector<double> events;
  const ChunkReader chunks(in);
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (chunks.events(i) > 0) events.push_back(static_cast<double>(chunks.events(i)));
  }
  std::string evidence = absl::StrFormat("The chunks read %s from files holding %s (%.1fx)",
                                         Bytes(ratio * distinct), Bytes(distinct), ratio);
  if (!events.empty()) {
    absl::StrAppend(&evidence, absl::StrFormat("; median chunk %.0f events", Median(events)));
  }
  absl::StrAppend(&evidence,
                  ". Each chunk reads whole compressed blocks, so chunks smaller than a block "
                  "read the blocks they share again.");
  const std::string backend = ConfiguredBackend(in);
  // collect's own backends name the knob; other engines call it differently.
  const std::string knob =
      backend == "threadpool" || backend == "workqueue" ? " (--chunk_size)" : "";
  v1::Finding& f = b.Add(
      v1::Finding::SEVERITY_WARNING, "read_amplification",
      absl::StrFormat("Read amplification: the chunks read %.1fx the bytes their files hold",
                      ratio),
      std::move(evidence),
      absl::StrCat("Use larger chunks", knob,
                   ", so each compressed block is read once; a higher data rate from re-reading "
                   "is not a faster analysis."));
  Number(f, "read_amplification", ratio, "ratio");
  Number(f, "distinct_file_bytes", distinct, "bytes");
  Number(f, "bytes_read", ratio * distinct, "bytes");
}

namespace {

// Warnings that say engine data were lost, kept out or recovered.
bool IsLostDataWarning(absl::string_view code) {
  return absl::StrContains(code, "lost") || absl::StartsWith(code, "invalid_") ||
         absl::StartsWith(code, "taskvine_") || code == "dask_fine_metrics_recovered";
}

// A warning about what an engine's log never records (Work Queue 9.9 has no worker start/end
// times): no rerun can recover it.
bool IsLogLimit(absl::string_view message) {
  return absl::StrContains(message, "have no worker start/end times");
}

// A value the engine (or the command) wrote that cannot be true and was left out: the log
// itself holds it (a TaskVine timer that underflowed to 1.8e13 s), so a rerun with the engine
// reachable would read the same value.
bool IsRejectedValue(absl::string_view code) {
  return absl::EndsWith(code, "_impossible_value") || absl::StartsWith(code, "invalid_");
}

}  // namespace

std::string ConfiguredBackend(const FindingsInputs& in) {
  if (in.configuration != nullptr) {
    const auto it = in.configuration->find("backend");
    if (it != in.configuration->end() && !it->second.empty()) return it->second;
  }
  return in.backend;
}

// data_lost when rerunning cannot help: the engine's log never records those figures (Work
// Queue 9.9 has no worker start/end times), or its records hold impossible values.
void AddNothingToRerun(const FindingsInputs& in, Builder& b, bool rejected_values,
                       const std::vector<std::string>& parts, size_t warning_codes) {
  v1::Finding* f = nullptr;
  if (rejected_values) {
    f = &b.Add(v1::Finding::SEVERITY_WARNING, "data_lost",
               "Impossible values in the engine's or the command's records were left out",
               absl::StrCat(absl::StrJoin(parts, "; "), "."),
               "Nothing to rerun: the records themselves hold these values (the WARNING lines "
               "name each); every figure leaves them out. If they are many, report them to the "
               "engine's authors.");
  } else {
    const bool work_queue = ConfiguredBackend(in) == "workqueue";
    f = &b.Add(v1::Finding::SEVERITY_INFO, "data_lost",
               "Some task times are estimates: the engine's log does not record them",
               absl::StrCat(absl::StrJoin(parts, "; "), ". ",
                            work_queue ? "The Work Queue 9.9 transactions log" : "The engine's log",
                            " never records them."),
               "Nothing to rerun: this is a limit of the log, not of this measurement.");
  }
  Number(*f, "tracking_gaps", 0, "gaps");
  Number(*f, "tracking_gap_seconds", 0, "s");
  Number(*f, "data_warnings", static_cast<double>(warning_codes), "codes");
}

void DataLost(const FindingsInputs& in, Builder& b) {
  // Tracking gaps and the warnings are always recorded: an absent list is a clean one.
  b.Evaluated("data_lost");
  double gap_seconds = 0;
  int gaps = 0;
  std::string first_reason;
  if (in.tracking != nullptr) {
    for (const v1::TrackingGap& gap : in.tracking->gaps()) {
      gap_seconds +=
          1e-9 * static_cast<double>(std::max<int64_t>(0, gap.end_unix_ns() - gap.start_unix_ns()));
      if (first_reason.empty()) first_reason = gap.reason();
      ++gaps;
    }
  }
  std::vector<std::string> codes;
  std::string first_message;
  bool only_recovered = true;
  bool only_log_limits = true;
  bool only_rejected_values = true;
  if (in.warnings != nullptr) {
    for (const v1::Warning& warning : *in.warnings) {
      if (!IsLostDataWarning(warning.code())) continue;
      only_log_limits = only_log_limits && IsLogLimit(warning.message());
      only_rejected_values = only_rejected_values && IsRejectedValue(warning.code());
      if (std::find(codes.begin(), codes.end(), warning.code()) == codes.end()) {
        codes.push_back(warning.code());
      }
      if (first_message.empty()) first_message = warning.message();
      only_recovered = only_recovered && absl::EndsWith(warning.code(), "_recovered");
    }
  }
  if (gaps == 0 && codes.empty()) return;
  std::vector<std::string> parts;
  if (gaps > 0) {
    std::string part =
        absl::StrCat(Count(gaps, "tracking gap", "tracking gaps"), " (", Seconds(gap_seconds));
    if (in.elapsed_seconds > 0.0)
      absl::StrAppend(&part, ", ", Pct(gap_seconds / in.elapsed_seconds), " of the run");
    absl::StrAppend(&part, ")");
    if (!first_reason.empty()) absl::StrAppend(&part, ": ", first_reason);
    parts.push_back(std::move(part));
  }
  if (!codes.empty()) {
    parts.push_back(absl::StrCat("warnings ", absl::StrJoin(codes, ", "), ": ", first_message));
  }
  const bool recovered = gaps == 0 && only_recovered;
  if (gaps == 0 && (only_rejected_values || only_log_limits)) {
    AddNothingToRerun(in, b, only_rejected_values, parts, codes.size());
    return;
  }
  v1::Finding& f = b.Add(
      recovered ? v1::Finding::SEVERITY_INFO : v1::Finding::SEVERITY_WARNING, "data_lost",
      recovered ? "Engine data were lost and recovered: figures are complete"
                : "Tracking was incomplete: some figures cover only what was observed",
      absl::StrCat(absl::StrJoin(parts, "; "), "."),
      recovered ? "Nothing to do; the WARNING lines say what was recovered."
                : "Read the WARNING lines for what is missing; rerun with the engine reachable "
                  "for the whole run for complete figures.");
  Number(f, "tracking_gaps", gaps, "gaps");
  Number(f, "tracking_gap_seconds", gap_seconds, "s");
  Number(f, "data_warnings", static_cast<double>(codes.size()), "codes");
}

// Reads one worker's samples in blocks: one branch-free pass rules out a block with no candidate
// sample (the usual case once the worst is known); the others are read sample by sample.
void MemoryScan::Scan(const v1::WorkerSeries& series) {
  std::vector<double> stored_once;  // a limit stored once for the series, at each point
  const absl::Span<const double> limits =
      PerPointValues(series.memory_limit_bytes(), series.time_unix_ns_size(), &stored_once);
  const int n = std::min(series.memory_bytes_size(), static_cast<int>(limits.size()));
  const double* memories = series.memory_bytes().data();
  constexpr int kBlock = 256;
  for (int first = 0; first < n; first += kBlock) {
    const int last = std::min(n, first + kBlock);
    bool any_limit = false, any_candidate = false;
    for (int i = first; i < last; ++i) {
      const bool limited = !(limits[i] <= 0.0);  // as the loop below: NaN counts
      any_limit |= limited;
      any_candidate |= limited & (memories[i] >= share * limits[i] * (1 - 1e-12));
    }
    limit_known = limit_known || any_limit;
    if (!any_candidate) continue;
    for (int i = first; i < last; ++i) {
      if (limits[i] <= 0.0) continue;
      // A share above the worst needs memory >= worst x limit: a multiplication rules out
      // most samples before the division (the margin covers both roundings).
      if (memories[i] < share * limits[i] * (1 - 1e-12)) continue;
      if (memories[i] / limits[i] > share) {
        share = memories[i] / limits[i];
        memory = memories[i];
        limit = limits[i];
        worker = series.worker();
      }
    }
  }
}

MemoryScan ScanMemory(const FindingsInputs& in) {
  MemoryScan scan;
  if (in.tracking != nullptr) {
    for (const v1::WorkerSeries& series : in.tracking->workers()) {
      scan.Scan(series);
      scan.spill_known = scan.spill_known || series.spilled_bytes_size() > 0;
      for (double s : series.spilled_bytes()) scan.spilled = std::max(scan.spilled, s);
    }
  }
  return scan;
}

void MemoryPressure(const FindingsInputs& in, Builder& b) { MemoryPressure(in, ScanMemory(in), b); }

void MemoryPressure(const FindingsInputs& in, const MemoryScan& scan, Builder& b) {
  const double spilled = scan.spilled;
  const bool spill_known = scan.spill_known;
  double worst_share = scan.share, worst_memory = scan.memory, worst_limit = scan.limit;
  bool limit_known = scan.limit_known;
  std::string worst_worker = scan.worker;
  // In-process workers: the process against its cgroup limit.
  if (InProcess(in) && in.host_facts != nullptr && in.host_facts->has_cgroup_memory_limit_bytes() &&
      in.host_facts->cgroup_memory_limit_bytes() > 0 && in.metrics->has_workers()) {
    const double limit = static_cast<double>(in.host_facts->cgroup_memory_limit_bytes());
    limit_known = true;
    const double peak = in.metrics->workers().peak_memory_bytes();
    if (peak / limit > worst_share) {
      worst_share = peak / limit;
      worst_memory = peak;
      worst_limit = limit;
      worst_worker = "the process (cgroup limit)";
    }
  }
  if (!limit_known && !spill_known) {
    b.NotEvaluated("memory_pressure", "no memory limit or spill figures");
    return;
  }
  b.Evaluated("memory_pressure");
  const bool near_limit = worst_share >= kMemoryLimitShare;
  if (!near_limit && spilled <= 0.0) return;
  std::vector<std::string> parts;
  if (worst_limit > 0.0) {
    parts.push_back(absl::StrCat("peak ", Bytes(worst_memory), " of a ", Bytes(worst_limit),
                                 " limit on ", worst_worker));
  }
  if (spilled > 0.0) parts.push_back(absl::StrCat(Bytes(spilled), " spilled to disk"));
  v1::Finding& f = b.Add(
      v1::Finding::SEVERITY_WARNING, "memory_pressure",
      near_limit ? absl::StrCat("Memory pressure: a worker reached ", Pct(worst_share),
                                " of its memory limit")
                 : absl::StrCat("Memory pressure: workers spilled ", Bytes(spilled), " to disk"),
      absl::StrCat(absl::StrJoin(parts, "; "), "."),
      // tiny_chunks (evaluated before) asks for larger chunks: smaller ones would contradict it.
      b.Fired("tiny_chunks")
          ? "Give workers more memory: the chunks are already small enough that per-chunk "
            "overhead matters (see the tiny chunks finding), so smaller ones would cost time; "
            "spilling and restarts slow the run."
          : "Give workers more memory, or process smaller chunks (memory grows with the chunk "
            "size); spilling and restarts slow the run.");
  Number(f, "memory_limit_fraction", worst_share, "fraction");
  Number(f, "peak_memory_bytes", worst_memory, "bytes");
  Number(f, "memory_limit_bytes", worst_limit, "bytes");
  Number(f, "spilled_bytes", spilled, "bytes");
}

void DebugBuild(const FindingsInputs& in, Builder& b) {
  if (in.analysis_build == nullptr) {
    b.NotEvaluated("debug_build", "no build info");
    return;
  }
  b.Evaluated("debug_build");
  if (in.analysis_build->optimized()) return;
  const v1::BuildInfo& build = *in.analysis_build;
  b.Add(v1::Finding::SEVERITY_CRITICAL, "debug_build",
        "The measured code was built without optimisation: timings are not representative",
        absl::StrCat("Build mode ", build.build_mode().empty() ? "unknown" : build.build_mode(),
                     build.compiler().empty() ? "" : absl::StrCat(", ", build.compiler()),
                     "; unoptimised C++ often runs several times slower, and its profile "
                     "ranks different code."),
        "Rebuild with optimisation (Bazel -c opt; CMake -DCMAKE_BUILD_TYPE=Release) and measure "
        "again.");
}

int64_t LargestFileEntries(const std::vector<const v1::ChunkRecord*>& records) {
  int64_t largest = 0;
  for (const v1::ChunkRecord* chunk : records) {
    if (!chunk->file().empty()) largest = std::max(largest, chunk->entry_stop());
  }
  return largest;
}

namespace {
// Larger chunks must leave every worker slot this many, so that the end of the run still balances
// (the idle tail and load imbalance rules ask for more, smaller chunks when it does not).
constexpr size_t kTasksPerSlot = 4;
}  // namespace

std::string TinyChunksSuggestion(const FindingsInputs& in, double median_events, double target,
                                 double median_seconds, int64_t largest_file_entries, size_t chunks,
                                 size_t slots) {
  const std::string backend = ConfiguredBackend(in);
  int64_t chunks_per_task = 0;
  if (in.configuration != nullptr) {
    const auto it = in.configuration->find("chunks_per_task");
    if (it != in.configuration->end() && !absl::SimpleAtoi(it->second, &chunks_per_task)) {
      chunks_per_task = 0;
    }
  }
  if (backend == "workqueue") {
    // collect's Work Queue backend: the per-task overhead is paid once per task, and more chunks
    // per task amortise it (the configuration may not be recorded yet when the run aggregates).
    const int64_t now = std::max<int64_t>(1, chunks_per_task);
    int64_t more = now + 1;
    if (median_seconds > 0.0 && target > median_seconds * static_cast<double>(now)) {
      more = std::max(more, static_cast<int64_t>(std::ceil(target / median_seconds)));
    }
    if (slots > 0) {
      const int64_t cap = static_cast<int64_t>(chunks / (kTasksPerSlot * slots));
      more = std::max(now + 1, std::min(more, cap));
    }
    return absl::StrCat("Run more chunks per Work Queue task: --chunks_per_task=", more,
                        chunks_per_task > 0 ? absl::StrCat(" (now ", chunks_per_task, ")") : "",
                        " would make a task about ",
                        Seconds(median_seconds * static_cast<double>(more)),
                        ", so per-task overhead stops mattering.");
  }
  std::string suggestion = backend == "threadpool" ? "Use larger chunks (--chunk_size)"
                                                   : "Use larger chunks (a larger chunk size)";
  if (median_events > 0.0 && target > median_seconds) {
    double size = median_events * target / median_seconds;
    const double rounded = std::pow(10.0, std::floor(std::log10(size)) - 1);
    size = std::ceil(size / rounded) * rounded;
    // At most the events of the run over kTasksPerSlot chunks per slot.
    const double most = slots > 0 ? median_events * static_cast<double>(chunks) /
                                        static_cast<double>(kTasksPerSlot * slots)
                                  : size;
    if (most <= median_events * 1.05) {
      return absl::StrFormat(
          "Larger chunks would leave fewer than %d per worker slot (%d chunks on %d slots) and "
          "an uneven end: cut the per-chunk overhead instead (the engine's dispatch and "
          "transfers, the analysis's per-chunk set-up), or split the input into more chunks of "
          "this size.",
          kTasksPerSlot, chunks, slots);
    }
    std::string capped;
    if (size > most) {
      const double down = std::pow(10.0, std::floor(std::log10(most)) - 1);
      size = std::max(median_events, std::floor(most / down) * down);
      target = median_seconds * size / median_events;
      capped = absl::StrFormat(" (no more: each of the %d worker slots still gets %d chunks)",
                               slots, kTasksPerSlot);
    }
    // Chunks cannot span files: never more events than the largest file holds.
    if (largest_file_entries > 0 && size >= static_cast<double>(largest_file_entries)) {
      absl::StrAppend(&suggestion,
                      absl::StrFormat(": up to a whole file (%d events, the largest file)",
                                      largest_file_entries));
      if (backend == "threadpool") {
        absl::StrAppend(&suggestion, ", --chunk_size=", largest_file_entries);
      }
    } else {
      absl::StrAppend(&suggestion, absl::StrFormat(": about %.0f events per chunk would take %s",
                                                   size, Seconds(target)));
      if (backend == "threadpool")
        absl::StrAppend(&suggestion, absl::StrFormat(" (--chunk_size=%.0f)", size));
      absl::StrAppend(&suggestion, capped);
    }
  }
  absl::StrAppend(&suggestion, ", so per-chunk overhead stops mattering.");
  return suggestion;
}

void SortBySeverity(std::vector<v1::Finding>& findings) {
  std::stable_sort(
      findings.begin(), findings.end(),
      [](const v1::Finding& a, const v1::Finding& c) { return a.severity() > c.severity(); });
}

}  // namespace findings_rules
}  // namespace aggregation_internal
}  // namespace roastcoffea
