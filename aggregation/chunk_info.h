// The original's chunk_info (docs/reference.md §2.5) from chunk records (internal to
// //aggregation).
#ifndef ROASTCOFFEA_AGGREGATION_CHUNK_INFO_H_
#define ROASTCOFFEA_AGGREGATION_CHUNK_INFO_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "aggregation/chunk_columns.h"
#include "aggregation/start_order.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {

// One chunk_info row per record with a file and end_unix_ns != 0 (the original skips records
// without file or times), failed ones included, sorted by (start_unix_ns, end_unix_ns,
// entry_start, entry_stop, attempt, file): a timeline. Retries keep their own row (the
// original keyed by (file, entry_start, entry_stop) and kept the last). Replaces `out`.
// Only reads `chunks`: may run on another thread while others read them too.
// Cost: O(n) (an order check; a radix sort by start when out of order, ties by the whole key).
void BuildChunkInfo(const ChunkColumns& chunks, v1::ChunkInfoColumns* out);

// BuildChunkInfo in steps, so that the columns can be filled by several threads: the records to
// list, in their order, then the columns started (sized; the files and file_index filled, which
// takes one pass in order), then the other columns of parts of that order filled (distinct parts
// at once by different threads).
// The order starts from the records' start order (start_order.h), which Aggregate makes once for
// chunk_info and the findings: only records sharing a start instant are compared further.
// Cost: O(n) for the order (O(k log k) for k records sharing an instant), O(n) to start,
// O(part) to fill, one column at a time (out of order, each column's reads stay in one array).
struct ChunkInfoOrdering {
  std::vector<uint32_t> records;  // the listed records' indices, in chunk_info's order
  size_t size() const { return records.size(); }
};
ChunkInfoOrdering ChunkInfoOrder(const ChunkColumns& chunks, const StartOrder& start);
// The same with the start order made here.
ChunkInfoOrdering ChunkInfoOrder(const ChunkColumns& chunks);
// Replaces `out` with columns of order.size() rows: files and file_index filled, the others
// to be filled by FillChunkInfoColumns.
void StartChunkInfoColumns(const ChunkColumns& chunks, const ChunkInfoOrdering& order,
                           v1::ChunkInfoColumns* out);
// Rows [first, last) of `out`'s numeric columns but file_index; `out` as StartChunkInfoColumns
// left it. Writes only those rows: threads may fill distinct parts at once.
void FillChunkInfoColumns(const ChunkColumns& chunks, const ChunkInfoOrdering& order, size_t first,
                          size_t last, v1::ChunkInfoColumns* out);

// Convenience for tests: the same from records (valid ones; nothing for invalid records).
void BuildChunkInfo(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks,
                    v1::ChunkInfoColumns* out);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_CHUNK_INFO_H_
