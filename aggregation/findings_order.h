// The canonical order of chunk records that the findings read them in (findings_rules.h Before),
// sorted as integers wherever integers decide it: a million records of a real run share start
// instants by the thousand, and comparing their file names one pair at a time cost more than
// every rule together. Internal to //aggregation.
//
// Thread-safety: pure.
#ifndef ROASTCOFFEA_AGGREGATION_FINDINGS_ORDER_H_
#define ROASTCOFFEA_AGGREGATION_FINDINGS_ORDER_H_

#include <cstdint>
#include <vector>

#include "aggregation/chunk_columns.h"
#include "aggregation/start_order.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace findings_rules {

// The indices of `columns`' records (columns.records) in Before order, read from the columns: by
// start instant (start_order.h: a radix sort of the integers, skipped when the records are in
// start order already), then each run of one instant by file (as the rank of its interned name),
// entry start and attempt, packed into one integer where they fit; only records equal in all of
// those are compared by Before itself. Records that Before does not order (equal in every key) end
// in no particular order, as with std::sort. Cost: O(records) integer passes and a sort of the
// distinct file names.
std::vector<uint32_t> OrderBefore(const ChunkColumns& columns);
// The same from the records' start order, made beforehand (Aggregate makes it once for
// chunk_info and the findings): `by_start` must be OrderByStart(columns).
std::vector<uint32_t> OrderBefore(const ChunkColumns& columns, const StartOrder& by_start);

}  // namespace findings_rules
}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_FINDINGS_ORDER_H_
