#include "aggregation/findings_idle_tail.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "aggregation/findings.h"
#include "aggregation/findings_contention.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace findings_rules {
namespace {

// At least kStragglerRatio x the median chunk.
bool Long(const IdleTail& tail) {
  const double median = tail.median_successful_seconds;
  return median > 0.0 && tail.last->duration_seconds() >= kStragglerRatio * median;
}

// Long, and by at least kStragglerMinExcessSeconds: the straggler rule's own test.
bool Slow(const IdleTail& tail) {
  return Long(tail) && tail.last->duration_seconds() - tail.median_successful_seconds >=
                           kStragglerMinExcessSeconds;
}

// Waited for a CPU more than it ran or was blocked, or ran on a machine loaded beyond its CPUs.
bool WaitedForCpu(const v1::ChunkRecord& chunk) {
  if (const std::optional<double> plausible = PlausibleRunQueueWait(chunk)) {
    const double wait = *plausible;
    const double cpu = std::max(0.0, chunk.cpu_seconds());
    return wait >= cpu && wait >= chunk.duration_seconds() - cpu - wait;
  }
  return chunk.has_machine_cpus() && ChunkLoadOverCpus(chunk).value_or(0) >= kContentionLoadRatio;
}

// ", 4.00 ms of it" where the chunk's run-queue wait was measured (plausibly), else "".
std::string WaitNote(const v1::ChunkRecord& chunk) {
  const double wait = PlausibleRunQueueWait(chunk).value_or(-1.0);
  return wait >= 0.0 ? absl::StrCat(", ", Seconds(wait), " of it") : "";
}

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string Advice(TailCause cause, const IdleTail& tail, const Builder& b) {
  const v1::ChunkRecord& last = *tail.last;
  switch (cause) {
    case TailCause::kFailed:
      return absl::StrCat(
          "The last chunk failed after ", Seconds(last.duration_seconds()),
          last.error_text().empty()
              ? ""
              : absl::StrCat(" (", ElideMiddle(FirstLine(last.error_text()), 80), ")"),
          ": its failure, not the chunk size, held up the end. Fix why it failed (a task killed "
          "at its memory or disk limit needs a larger limit; see the failed chunks finding); "
          "smaller chunks would not help.");
    case TailCause::kWorkerDied:
      return "The last chunk's worker died: the wait for it, not the chunk size, held up the "
             "end (see the dead workers finding); find why the worker died.";
    case TailCause::kRetry:
      return "The last chunk was a retry: its first attempt's failure, not the chunk size, "
             "held up the end (see the retry findings).";
    case TailCause::kCpuWait:
      // Its measured wait, where the run queue was read; else the machine's load said it.
      return absl::StrCat("The last chunk took ", Seconds(last.duration_seconds()), WaitNote(last),
                          " waiting for a CPU on a busy machine",
                          b.Fired("cpu_contention")   ? " (see the CPU contention finding)"
                          : b.Fired("cpu_starvation") ? " (see the CPU starvation finding)"
                                                      : "",
                          ": fix the contention first; smaller chunks would only share the wait.");
    case TailCause::kStraggler:
      return absl::StrCat("The last chunk was a straggler (", Seconds(last.duration_seconds()),
                          " against a median ", Seconds(tail.median_successful_seconds),
                          "; see the stragglers finding for its cause): split its file into "
                          "smaller chunks or start the longest files first.");
    case TailCause::kLastWave:
      break;
  }
  return "More, smaller chunks (a smaller chunk size) even out the last wave; start the "
         "longest files first.";
}

}  // namespace

bool IdleTailMatters(double longest_idle, double span, double elapsed_seconds) {
  const double run = std::max(span, std::isfinite(elapsed_seconds) ? elapsed_seconds : 0.0);
  return longest_idle >= kIdleTailMinSeconds && longest_idle >= kIdleTailMinRunShare * run;
}

TailCause CauseOfTail(const IdleTail& tail) {
  const v1::ChunkRecord& last = *tail.last;
  if (last.status() == v1::CHUNK_STATUS_FAILED) return TailCause::kFailed;
  if (tail.last_worker_died) return TailCause::kWorkerDied;
  if (last.attempt() > 0) return TailCause::kRetry;
  // The wait for a CPU is measured on the chunk itself, so it explains a last chunk of a few
  // milliseconds too: the straggler rule's minimum excess guards only against timer noise.
  if (Long(tail) && WaitedForCpu(last)) return TailCause::kCpuWait;
  return Slow(tail) ? TailCause::kStraggler : TailCause::kLastWave;
}

void AddIdleTail(const IdleTail& tail, Builder& b) {
  const TailCause cause = CauseOfTail(tail);
  const v1::ChunkRecord& last = *tail.last;
  const char* status = cause == TailCause::kFailed       ? " (failed)"
                       : cause == TailCause::kWorkerDied ? " (its worker died)"
                                                         : "";
  v1::Finding& f =
      b.Add(v1::Finding::SEVERITY_WARNING, "idle_tail",
            absl::StrCat("Idle tail: ", tail.idle_slots, " of ", tail.slots,
                         " worker slots sat idle at the end, ", Pct(tail.idle_share),
                         " of the worker time"),
            absl::StrCat("The first slot to run out of work waited ", Seconds(tail.longest_idle),
                         " of the ", Seconds(tail.span), " run for the last chunk, ",
                         DescribeChunk(last), " ", Seconds(last.duration_seconds()), status, "."),
            Advice(cause, tail, b));
  Number(f, "idle_at_end_fraction", tail.idle_share, "fraction");
  Number(f, "longest_idle_seconds", tail.longest_idle, "s");
  Number(f, "idle_slots", tail.idle_slots, "slots");
  Number(f, "slots", tail.slots, "slots");
  Number(f, "last_chunk_cause", static_cast<double>(cause), "cause");
}

}  // namespace findings_rules
}  // namespace aggregation_internal
}  // namespace roastcoffea
