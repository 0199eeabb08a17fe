#include "aggregation/start_order.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "aggregation/radix_sort.h"

namespace roastcoffea {
namespace aggregation_internal {

StartOrder OrderByStart(const ChunkColumns& chunks) {
  StartOrder order;
  const std::vector<int64_t>& start = chunks.start_unix_ns;
  order.size = start.size();
  if (std::is_sorted(start.begin(), start.end())) return order;
  order.in_order = false;
  struct Item {
    uint64_t key;    // start_unix_ns, ordered as unsigned
    uint32_t index;  // the record
  };
  std::vector<Item> items, buffer;
  items.reserve(start.size());
  for (size_t i = 0; i < start.size(); ++i) {
    items.push_back({OrderedUnsigned(start[i]), static_cast<uint32_t>(i)});
  }
  RadixSortByKey(items, buffer);
  buffer = std::vector<Item>();
  order.records.reserve(items.size());
  for (const Item& item : items) order.records.push_back(item.index);
  return order;
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
