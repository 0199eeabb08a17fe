// The idle_tail finding once a rule has measured the tail: what held up the end is read from
// the last chunk's own record (failed, its worker died, a retry, waiting for a CPU on a loaded
// machine, a straggler), and the advice follows that cause. Only a tail of ordinary chunks is
// a chunk-size problem. Internal to //aggregation: findings.cc and the test-only
// findings_reference.cc both add the finding here.
//
// Thread-safety: pure functions.
#ifndef ROASTCOFFEA_AGGREGATION_FINDINGS_IDLE_TAIL_H_
#define ROASTCOFFEA_AGGREGATION_FINDINGS_IDLE_TAIL_H_

#include <string>

#include "aggregation/findings_rules.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace findings_rules {

// Why the last chunk of the run ended late, from its own record, most specific first.
enum class TailCause {
  kFailed,      // status FAILED (e.g. killed at a memory limit): no chunk size would help
  kWorkerDied,  // its worker died (DeadWorkers) before or as it ended
  kRetry,       // attempt > 0: its first attempt's loss delayed it
  kCpuWait,     // it mostly waited for a CPU, or ran on a machine loaded beyond its CPUs
  kStraggler,   // >= kStragglerRatio x the median successful chunk, on CPU or blocked
  kLastWave,    // an ordinary chunk: the last wave was uneven, smaller chunks even it out
};

// The tail's measured figures (IdleTailAndImbalance computes them).
struct IdleTail {
  int idle_slots = 0;
  int slots = 0;
  double idle_share = 0;                  // of the slots' time over the run
  double longest_idle = 0;                // seconds
  double span = 0;                        // seconds, first chunk start to last chunk end
  const v1::ChunkRecord* last = nullptr;  // the chunk that ended last (Before breaks ties)
  bool last_worker_died = false;
  double median_successful_seconds = 0;  // 0 when unknown
};

// Whether a tail whose first idle slot waited `longest_idle` seconds can matter to a user: at
// least kIdleTailMinSeconds, and kIdleTailMinRunShare of the run (its elapsed time, or `span`,
// first chunk start to last chunk end, where that is longer or the elapsed time is unknown).
bool IdleTailMatters(double longest_idle, double span, double elapsed_seconds);

TailCause CauseOfTail(const IdleTail& tail);

// Adds the idle_tail finding (tail.last must be set), with the cause in its evidence and
// advice, and the number "last_chunk_cause" (the TailCause's value).
void AddIdleTail(const IdleTail& tail, Builder& b);

}  // namespace findings_rules
}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_FINDINGS_IDLE_TAIL_H_
