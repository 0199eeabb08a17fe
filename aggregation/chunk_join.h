// Joins the chunk records an engine backend derives from its own task records (e.g. TaskVine
// tasks of the processing category) with the chunk records the analysis' instrumentation
// wrote, by task id, and folds retries the application made under new task ids into one
// record per chunk.
//
// Why here: the engine knows attempts, workers, exit codes and manager retries but not which
// chunk a task processed; the instrumentation knows the chunk (dataset, file, entry range,
// events, sections) but not the engine's view. Neither alone gives "one record per chunk with
// all its attempts".
#ifndef ROASTCOFFEA_AGGREGATION_CHUNK_JOIN_H_
#define ROASTCOFFEA_AGGREGATION_CHUNK_JOIN_H_

#include <string>
#include <vector>

#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

struct ChunkJoinResult {
  std::vector<v1::ChunkRecord> records;
  // One sentence each: instrumented records naming a task the engine does not know, engine
  // tasks with no instrumented record while others have one, a task id used twice for one
  // chunk (a task that processed several chunks gives one record per chunk: no warning).
  std::vector<std::string> warnings;
};

// 1. An instrumented record whose task_id matches an engine record takes from it what only the
//    engine knows: the attempt count (manager retries), the worker when it has none, and a
//    failure the engine saw (a non-zero exit code after the processor returned); times, CPU
//    time and peak memory only when the instrumentation has none. Engine records left unmatched
//    are kept as they are; so are instrumented records without a task id.
// 2. Joined records of the same chunk (same dataset, file, entry_start, entry_stop) under
//    different task ids are application retries: they become one record, the last to start,
//    with `attempt` counting every attempt of every task, `retried_task_ids` the earlier tasks
//    (oldest first), and the earlier errors kept in error_text when the chunk failed anyway.
// The output keeps the input order of the records it keeps (instrumented first, then engine).
ChunkJoinResult JoinChunkRecords(std::vector<v1::ChunkRecord> engine_records,
                                 std::vector<v1::ChunkRecord> instrumented_records);

// JoinChunkRecords over tables (schema/chunk_table.h): the same records, in the same order,
// and the same warnings. The instrumented table becomes the result, changed in place (a new
// table is built only when application retries are folded).
struct ChunkTableJoinResult {
  ChunkTable table;
  std::vector<std::string> warnings;
};
ChunkTableJoinResult JoinChunkTables(const ChunkTable& engine_records,
                                     ChunkTable instrumented_records);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_CHUNK_JOIN_H_
