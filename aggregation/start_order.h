// The chunk records by start instant: the one sort of a million records that chunk_info's order
// and the findings' order both begin with (issue #25), made once per Aggregate and handed to
// both. Internal to //aggregation.
//
// Thread-safety: pure.
#ifndef ROASTCOFFEA_AGGREGATION_START_ORDER_H_
#define ROASTCOFFEA_AGGREGATION_START_ORDER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "aggregation/chunk_columns.h"

namespace roastcoffea {
namespace aggregation_internal {

// Every record of some ChunkColumns in order of start_unix_ns; records that start at the same
// instant keep their own order (a stable sort).
struct StartOrder {
  // The records were in start order already: `records` is empty, position k is record k.
  bool in_order = true;
  std::vector<uint32_t> records;  // otherwise the record of each position
  size_t size = 0;
  // Whether two records start at the same instant: only then do the orders that start from this
  // one compare anything else.
  bool any_same_start = false;

  uint32_t at(size_t k) const { return in_order ? static_cast<uint32_t>(k) : records[k]; }
};

// One pass to see whether `chunks` are in start order (then nothing is allocated), else a radix
// sort of (start, index) pairs. Cost: O(n).
StartOrder OrderByStart(const ChunkColumns& chunks);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_START_ORDER_H_
