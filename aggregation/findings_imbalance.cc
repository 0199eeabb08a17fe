// The load_imbalance finding's measure of a slot's work and its text (findings_rules.h): shared
// by findings.cc and the test-only reference, so that both say the same.
#include <algorithm>
#include <cstddef>
#include <string>

#include "absl/strings/str_cat.h"
#include "aggregation/findings_rules.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace findings_rules {

double ImbalanceWork(double duration_seconds, double cpu_seconds, double run_queue_wait_seconds) {
  if (!PlausibleWait(duration_seconds, cpu_seconds, run_queue_wait_seconds)) {
    return duration_seconds;
  }
  return std::max(0.0, duration_seconds - std::max(0.0, run_queue_wait_seconds));
}

std::string ImbalanceEvidencePrefix(bool waited) {
  return waited ? "Chunk time less its wait for a CPU, per slot: busiest "
                : "Chunk time per slot: busiest ";
}

std::string ConcurrentNote(size_t concurrent) {
  if (concurrent <= 1) return "";
  return absl::StrCat(" (a slot that ran several chunks at once, up to ", concurrent,
                      ", counts as that many slots: an engine worker without thread identity "
                      "runs its tasks on one named slot)");
}

std::string ImbalanceSuggestion(bool in_process, bool churn, const Builder& b) {
  if (churn) {
    return "Check whether the least busy workers ran slower (another job on their node); "
           "more, smaller chunks let the engine balance the work.";
  }
  if (in_process) {
    const bool tail = b.Fired("idle_tail"), stragglers = b.Fired("stragglers");
    return absl::StrCat(
        "The worker threads take the next chunk when they are free, so the busiest one ran "
        "longer chunks, mostly at the end",
        tail && stragglers ? " (see the idle tail and stragglers findings)"
        : tail             ? " (see the idle tail finding)"
        : stragglers       ? " (see the stragglers finding)"
                           : "",
        ": more, smaller chunks, or the longest files first, balance the work.");
  }
  return "Check whether the least busy workers joined late or ran slower (another job on their "
         "node); more, smaller chunks let the engine balance the work.";
}

}  // namespace findings_rules
}  // namespace aggregation_internal
}  // namespace roastcoffea
