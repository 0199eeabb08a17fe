// The cpu_contention rule of the findings (internal to //aggregation; findings.cc runs it right
// after cpu_starvation, so that the stragglers can point to it): the machines the chunks ran on
// had more runnable processes than CPUs for a large share of the run.
//
// Each chunk's evidence of its host's load over its CPUs, from its own record:
//   engine chunk   the resource monitor's machine_load (highest 1-minute load average while the
//                  task ran) over machine_cpus (TaskVine / Work Queue with monitoring on);
//   in-process     the chunk thread's run-queue wait: a thread that shares C CPUs fairly with L
//                  runnable threads runs C/L of the time it is runnable, so
//                  load / CPUs = (CPU + run-queue wait) / CPU.
// A chunk is contended when that ratio is >= kContentionLoadRatio. The rule fires when the
// contended chunks cover (union of their [start, end)) >= kContentionRunShare of the span from
// the first chunk's start to the last chunk's end. Its cost in seconds of the run: the time the
// contended chunks lost waiting (the run-queue wait where measured, else duration x (1 -
// CPUs / load)) over their mean concurrency (their summed durations over the time they cover).
// Not evaluated without that evidence: Dask's heartbeats give a worker process's CPU use, not
// its machine's load; an engine run without the resource monitor has no machine load.
//
// Thread-safety: pure.
#ifndef ROASTCOFFEA_AGGREGATION_FINDINGS_CONTENTION_H_
#define ROASTCOFFEA_AGGREGATION_FINDINGS_CONTENTION_H_

#include <optional>
#include <string>
#include <vector>

#include "aggregation/findings.h"
#include "aggregation/findings_rules.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {

// Load over CPUs from which a chunk counts as contended: a quarter more runnable processes than
// CPUs (every runnable process then waits a fifth of its time).
inline constexpr double kContentionLoadRatio = 1.25;
// Share of the run the contended chunks must cover.
inline constexpr double kContentionRunShare = 0.25;

namespace findings_rules {

// The load over CPUs of the host `chunk` ran on, from its record (see above); nullopt without
// evidence.
std::optional<double> ChunkLoadOverCpus(const v1::ChunkRecord& chunk);

// ", machine load 4.00 on 2 CPUs" when the resource monitor measured it, else "".
std::string MachineLoadNote(const v1::ChunkRecord& chunk);

// When most of `named` (stragglers) ran on a machine loaded >= kContentionLoadRatio x its CPUs
// (resource monitor): a sentence saying so, pointing to the cpu_contention finding when it fired;
// else "".
std::string ContendedNote(const std::vector<const v1::ChunkRecord*>& named, const Builder& b);

// What the io_bound evidence says of off-CPU time when the run queue was not measured: part may
// be waiting for a CPU, and when cpu_contention fired (`contended`), much of it was.
std::string OffCpuNote(bool contended);
// The io_bound advice then starts with this.
inline constexpr char kFixContentionFirst[] =
    "Fix the CPU contention first (see that finding); if the chunks still wait off CPU then: ";

// False only when ChunkLoadOverCpus(chunk) is nullopt; reads only which fields are set.
inline bool MayHaveLoadEvidence(const v1::ChunkRecord& chunk) {
  return (chunk.has_machine_load() && chunk.has_machine_cpus()) ||
         chunk.has_run_queue_wait_seconds();
}

// The rule; `any_load_evidence`: whether MayHaveLoadEvidence holds for any of in.chunks (the
// caller's own pass over the records finds out: most runs have none, and then the rule reads
// no record).
void CpuContention(const FindingsInputs& in, bool any_load_evidence, Builder& b);

}  // namespace findings_rules
}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_FINDINGS_CONTENTION_H_
