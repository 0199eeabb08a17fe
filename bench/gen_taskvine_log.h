// The synthetic TaskVine transactions log of the reliability study's generator
// (/work/shared/reliability/repro-2/gen.py "tasklog N DIR W"): W one-core workers, then N tasks
// of category "processing" in slots of W, 0.5 s each, back to back (READY, RUNNING,
// WAITING_RETRIEVAL, RETRIEVED with the resource monitor's figures, DONE), START .. END.
// Issue #25's scale input, for the benchmarks that read it as collect does.
#ifndef ROASTCOFFEA_BENCH_GEN_TASKVINE_LOG_H_
#define ROASTCOFFEA_BENCH_GEN_TASKVINE_LOG_H_

#include <cstdint>
#include <ostream>

namespace roastcoffea {

// Writes the log of `tasks` tasks (ids 1..tasks, task i+1 on worker i % workers) to `out`, a slot
// of tasks at a time. workers > 0.
void WriteGenTaskLog(int64_t tasks, int workers, std::ostream& out);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BENCH_GEN_TASKVINE_LOG_H_
