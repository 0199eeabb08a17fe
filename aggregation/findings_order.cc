#include "aggregation/findings_order.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/numeric/bits.h"
#include "absl/strings/string_view.h"
#include "aggregation/findings_rules.h"
#include "aggregation/radix_sort.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace findings_rules {
namespace {

// A record of ChunkColumns by its index: 12 bytes of payload where a pointer makes 16.
struct KeyedIndex {
  uint64_t key;
  uint32_t index;
};

// The rank of each of the distinct `names` in name order. The names of one run share a long
// prefix ("root://host//store/..."): past it, their next 8 bytes as one big-endian integer
// order most pairs without reading the names again; only equal ones compare the rest.
std::vector<uint32_t> NameRanks(const std::vector<absl::string_view>& names) {
  size_t common = names.empty() ? 0 : names[0].size();
  for (const absl::string_view name : names) {
    size_t same = 0;
    const size_t limit = std::min(common, name.size());
    while (same < limit && name[same] == names[0][same]) ++same;
    common = same;
  }
  struct Named {
    uint64_t next_bytes;  // the 8 bytes after the common prefix, zero past the end
    absl::string_view rest;
    uint32_t id;
  };
  std::vector<Named> named;
  named.reserve(names.size());
  for (uint32_t id = 0; id < names.size(); ++id) {
    const absl::string_view rest = names[id].substr(common);
    uint64_t next_bytes = 0;
    for (size_t i = 0; i < 8; ++i) {
      const uint8_t byte = i < rest.size() ? static_cast<uint8_t>(rest[i]) : 0;
      next_bytes = (next_bytes << 8) | byte;
    }
    named.push_back({next_bytes, rest, id});
  }
  // Zero padding keeps the order: a name that ends inside the 8 bytes ties with any name that
  // continues with zero bytes, and the tie compares the rest (the shorter first).
  std::sort(named.begin(), named.end(), [](const Named& a, const Named& c) {
    if (a.next_bytes != c.next_bytes) return a.next_bytes < c.next_bytes;
    return a.rest < c.rest;
  });
  std::vector<uint32_t> rank(names.size());
  for (uint32_t r = 0; r < named.size(); ++r) rank[named[r].id] = r;
  return rank;
}

// Bits that hold the values lo..hi once lo is subtracted.
int BitsFor(uint64_t lo, uint64_t hi) { return hi == lo ? 0 : 64 - absl::countl_zero(hi - lo); }

// Before's keys after the start instant, read from the columns: the file as the rank of its
// interned name (ranked once, when a start instant is first shared), the entry start, the
// attempt; records equal in those compare by Before itself.
class ColumnKeys {
 public:
  explicit ColumnKeys(const ChunkColumns& columns) : c_(columns) {}

  // 0 for no file (Before compares "" first), else 1 + the name's rank.
  uint32_t FileRank(uint32_t i) {
    if (rank_.empty() && !c_.file_names.empty()) {
      rank_ = NameRanks(std::vector<absl::string_view>(c_.file_names.begin(), c_.file_names.end()));
    }
    const uint32_t file = c_.file[i];
    return file == ChunkColumns::kNone ? 0 : rank_[file] + 1;
  }
  bool Less(uint32_t a, uint32_t c) {
    const uint32_t rank_a = FileRank(a), rank_c = FileRank(c);
    if (rank_a != rank_c) return rank_a < rank_c;
    if (c_.entry_start[a] != c_.entry_start[c]) return c_.entry_start[a] < c_.entry_start[c];
    if (c_.attempt[a] != c_.attempt[c]) return c_.attempt[a] < c_.attempt[c];
    // Before's remaining keys, from the columns too (a record read whole is built on a table:
    // an engine's tasks that start at one instant without a file would build them all).
    const uint32_t worker_a = WorkerRank(a), worker_c = WorkerRank(c);
    if (worker_a != worker_c) return worker_a < worker_c;
    if (c_.end_unix_ns[a] != c_.end_unix_ns[c]) return c_.end_unix_ns[a] < c_.end_unix_ns[c];
    if (c_.duration_seconds[a] != c_.duration_seconds[c]) {
      return c_.duration_seconds[a] < c_.duration_seconds[c];
    }
    return Uuid(a) < Uuid(c);
  }
  const ChunkColumns& columns() const { return c_; }

 private:
  // The rank of the record's worker name among the workers' names.
  uint32_t WorkerRank(uint32_t i) {
    if (worker_rank_.empty() && !c_.worker_names.empty()) {
      worker_rank_ =
          NameRanks(std::vector<absl::string_view>(c_.worker_names.begin(), c_.worker_names.end()));
    }
    return worker_rank_[c_.worker[i]];
  }
  absl::string_view Uuid(uint32_t i) const {
    return c_.table != nullptr ? c_.table->String(chunk_field::kUuid, i)
                               : absl::string_view(c_.records->Get(static_cast<int>(i)).uuid());
  }

  const ChunkColumns& c_;
  std::vector<uint32_t> rank_;         // by file id
  std::vector<uint32_t> worker_rank_;  // by worker id
};

using IndexIterator = std::vector<uint32_t>::iterator;

// Sorts records (indices of the columns) that share a start instant by Before's next keys:
// (file rank, entry start, attempt) packed into one integer where they fit, then the records
// equal in those by Before itself. `keyed` and `buffer`: scratch space, reused.
void SortSameStartByColumns(ColumnKeys& keys, IndexIterator first, IndexIterator last,
                            std::vector<KeyedIndex>& keyed, std::vector<KeyedIndex>& buffer) {
  const auto less = [&keys](uint32_t a, uint32_t c) { return keys.Less(a, c); };
  if (last - first < 32) {
    std::sort(first, last, less);
    return;
  }
  const ChunkColumns& c = keys.columns();
  uint64_t entry_lo = UINT64_MAX, entry_hi = 0;
  uint32_t attempt_lo = UINT32_MAX, attempt_hi = 0;
  uint32_t rank_hi = 0;
  for (auto it = first; it != last; ++it) {
    entry_lo = std::min(entry_lo, OrderedUnsigned(c.entry_start[*it]));
    entry_hi = std::max(entry_hi, OrderedUnsigned(c.entry_start[*it]));
    attempt_lo = std::min(attempt_lo, c.attempt[*it]);
    attempt_hi = std::max(attempt_hi, c.attempt[*it]);
    rank_hi = std::max(rank_hi, keys.FileRank(*it));
  }
  const int entry_bits = BitsFor(entry_lo, entry_hi);
  const int attempt_bits = BitsFor(attempt_lo, attempt_hi);
  if (BitsFor(0, rank_hi) + entry_bits + attempt_bits > 64) {
    std::sort(first, last, less);  // ranges too wide to pack
    return;
  }
  keyed.clear();
  for (auto it = first; it != last; ++it) {
    uint64_t key = keys.FileRank(*it);
    if (entry_bits > 0)
      key = (key << entry_bits) | (OrderedUnsigned(c.entry_start[*it]) - entry_lo);
    if (attempt_bits > 0) key = (key << attempt_bits) | (c.attempt[*it] - attempt_lo);
    keyed.push_back({key, *it});
  }
  RadixSortByKey(keyed, buffer);
  for (size_t i = 0; i < keyed.size(); ++i) first[static_cast<std::ptrdiff_t>(i)] = keyed[i].index;
  for (size_t i = 0; i < keyed.size();) {
    size_t end = i + 1;
    while (end < keyed.size() && keyed[end].key == keyed[i].key) ++end;
    if (end - i > 1) {
      std::sort(first + static_cast<std::ptrdiff_t>(i), first + static_cast<std::ptrdiff_t>(end),
                less);
    }
    i = end;
  }
}

}  // namespace

std::vector<uint32_t> OrderBefore(const ChunkColumns& columns) {
  return OrderBefore(columns, OrderByStart(columns));
}

std::vector<uint32_t> OrderBefore(const ChunkColumns& columns, const StartOrder& by_start) {
  const std::vector<int64_t>& start = columns.start_unix_ns;
  const size_t n = start.size();
  std::vector<uint32_t> order(n);
  std::vector<KeyedIndex> keyed, buffer;
  for (size_t k = 0; k < n; ++k) order[k] = by_start.at(k);
  if (!by_start.any_same_start) return order;  // start decides every pair
  ColumnKeys keys(columns);
  const auto less = [&keys](uint32_t a, uint32_t c) { return keys.Less(a, c); };
  for (size_t i = 0; i < n;) {
    size_t end = i + 1;
    while (end < n && start[order[end]] == start[order[i]]) ++end;
    const auto run_first = order.begin() + static_cast<std::ptrdiff_t>(i);
    const auto run_last = order.begin() + static_cast<std::ptrdiff_t>(end);
    if (end - i > 1 && !std::is_sorted(run_first, run_last, less)) {
      SortSameStartByColumns(keys, run_first, run_last, keyed, buffer);
    }
    i = end;
  }
  return order;
}

}  // namespace findings_rules
}  // namespace aggregation_internal
}  // namespace roastcoffea
