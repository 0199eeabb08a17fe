#include "aggregation/findings_order.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/numeric/bits.h"
#include "absl/strings/string_view.h"
#include "aggregation/findings_rules.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace findings_rules {
namespace {

using Iterator = std::vector<const v1::ChunkRecord*>::iterator;

struct Keyed {
  uint64_t key;
  const v1::ChunkRecord* record;
};

// A record of ChunkColumns by its index: 12 bytes of payload where a pointer makes 16.
struct KeyedIndex {
  uint64_t key;
  uint32_t index;
};

// The order of int64 values as unsigned integers.
uint64_t Unsigned(int64_t value) { return static_cast<uint64_t>(value) ^ (uint64_t{1} << 63); }

bool ByBefore(const v1::ChunkRecord* a, const v1::ChunkRecord* c) { return Before(*a, *c); }

// Sorts `items` by key, stably: a least-significant-digit radix sort over only the bits in which
// the keys differ (a run of one hour in nanoseconds differs in 42 bits: four passes). `buffer`:
// scratch space, reused across calls.
template <typename Item>
void RadixSortByKey(std::vector<Item>& items, std::vector<Item>& buffer) {
  if (items.size() < 256) {
    std::stable_sort(items.begin(), items.end(),
                     [](const Item& a, const Item& c) { return a.key < c.key; });
    return;
  }
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const Item& item : items) {
    lo = std::min(lo, item.key);
    hi = std::max(hi, item.key);
  }
  if (lo == hi) return;
  const int bits = 64 - absl::countl_zero(hi - lo);
  const int passes = (bits + 10) / 11;
  const int digit_bits = (bits + passes - 1) / passes;
  const uint64_t mask = (uint64_t{1} << digit_bits) - 1;
  buffer.resize(items.size());
  std::vector<size_t> offsets(size_t{1} << digit_bits);
  for (int shift = 0; shift < bits; shift += digit_bits) {
    std::fill(offsets.begin(), offsets.end(), 0);
    for (const Item& item : items) ++offsets[((item.key - lo) >> shift) & mask];
    size_t sum = 0;
    for (size_t& offset : offsets) sum += std::exchange(offset, sum);
    for (const Item& item : items) buffer[offsets[((item.key - lo) >> shift) & mask]++] = item;
    items.swap(buffer);
  }
}

template <typename Item>
void RadixSortByKey(std::vector<Item>& items) {
  std::vector<Item> buffer;
  RadixSortByKey(items, buffer);
}

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

// Before's keys after the start instant, of each record of a run, read in one pass over the
// records: the file as its rank among the run's distinct names, the entry start, the attempt.
struct RunKeys {
  std::vector<uint32_t> file_rank;
  std::vector<int64_t> entry_start;
  std::vector<uint32_t> attempt;
};

RunKeys ReadRunKeys(Iterator first, Iterator last) {
  RunKeys keys;
  const size_t n = static_cast<size_t>(last - first);
  keys.file_rank.reserve(n);
  keys.entry_start.reserve(n);
  keys.attempt.reserve(n);
  absl::flat_hash_map<absl::string_view, uint32_t> ids;
  std::vector<absl::string_view> files;
  absl::string_view previous;
  uint32_t previous_id = 0;
  for (auto it = first; it != last; ++it) {
    const absl::string_view file = (*it)->file();
    // Records of one file often come together: no hash for those.
    if (it == first || file != previous) {
      const auto [entry, added] = ids.try_emplace(file, static_cast<uint32_t>(files.size()));
      if (added) files.push_back(file);
      previous = file;
      previous_id = entry->second;
    }
    keys.file_rank.push_back(previous_id);
    keys.entry_start.push_back((*it)->entry_start());
    keys.attempt.push_back((*it)->attempt());
  }
  const std::vector<uint32_t> rank = NameRanks(files);
  for (uint32_t& id : keys.file_rank) id = rank[id];
  return keys;
}

// Bits that hold the values lo..hi once lo is subtracted.
int BitsFor(uint64_t lo, uint64_t hi) { return hi == lo ? 0 : 64 - absl::countl_zero(hi - lo); }

// Sorts records that share a start instant by Before's next keys (file, entry start, attempt),
// then the records equal in those by Before itself.
void SortSameStartByBefore(Iterator first, Iterator last) {
  if (last - first < 32) {
    std::sort(first, last, ByBefore);
    return;
  }
  const RunKeys keys = ReadRunKeys(first, last);
  const size_t n = keys.file_rank.size();
  uint64_t entry_lo = UINT64_MAX, entry_hi = 0;
  uint32_t attempt_lo = UINT32_MAX, attempt_hi = 0;
  uint32_t rank_hi = 0;
  for (size_t i = 0; i < n; ++i) {
    entry_lo = std::min(entry_lo, Unsigned(keys.entry_start[i]));
    entry_hi = std::max(entry_hi, Unsigned(keys.entry_start[i]));
    attempt_lo = std::min(attempt_lo, keys.attempt[i]);
    attempt_hi = std::max(attempt_hi, keys.attempt[i]);
    rank_hi = std::max(rank_hi, keys.file_rank[i]);
  }
  const int entry_bits = BitsFor(entry_lo, entry_hi);
  const int attempt_bits = BitsFor(attempt_lo, attempt_hi);
  const int rank_bits = BitsFor(0, rank_hi);
  std::vector<Keyed> keyed;
  keyed.reserve(n);
  if (rank_bits + entry_bits + attempt_bits <= 64) {
    // (file rank, entry start, attempt) packed into one integer, most significant first.
    for (size_t i = 0; i < n; ++i) {
      uint64_t key = keys.file_rank[i];
      if (entry_bits > 0) key = (key << entry_bits) | (Unsigned(keys.entry_start[i]) - entry_lo);
      if (attempt_bits > 0) key = (key << attempt_bits) | (keys.attempt[i] - attempt_lo);
      keyed.push_back({key, first[static_cast<std::ptrdiff_t>(i)]});
    }
    RadixSortByKey(keyed);
  } else {
    // Ranges too wide to pack: compare the three keys.
    struct Wide {
      uint32_t file_rank;
      uint32_t attempt;
      int64_t entry_start;
      const v1::ChunkRecord* record;
    };
    std::vector<Wide> wide;
    wide.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      wide.push_back({keys.file_rank[i], keys.attempt[i], keys.entry_start[i],
                      first[static_cast<std::ptrdiff_t>(i)]});
    }
    std::sort(wide.begin(), wide.end(), [](const Wide& a, const Wide& c) {
      return std::tie(a.file_rank, a.entry_start, a.attempt) <
             std::tie(c.file_rank, c.entry_start, c.attempt);
    });
    // Equal in the three keys exactly when equal in this running number.
    uint64_t group = 0;
    for (size_t i = 0; i < wide.size(); ++i) {
      if (i > 0 &&
          std::tie(wide[i].file_rank, wide[i].entry_start, wide[i].attempt) !=
              std::tie(wide[i - 1].file_rank, wide[i - 1].entry_start, wide[i - 1].attempt)) {
        ++group;
      }
      keyed.push_back({group, wide[i].record});
    }
  }
  for (size_t i = 0; i < keyed.size(); ++i) first[static_cast<std::ptrdiff_t>(i)] = keyed[i].record;
  for (size_t i = 0; i < keyed.size();) {
    size_t end = i + 1;
    while (end < keyed.size() && keyed[end].key == keyed[i].key) ++end;
    if (end - i > 1) {
      std::sort(first + static_cast<std::ptrdiff_t>(i), first + static_cast<std::ptrdiff_t>(end),
                ByBefore);
    }
    i = end;
  }
}

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
    return Before(c_.records->Get(static_cast<int>(a)), c_.records->Get(static_cast<int>(c)));
  }
  const ChunkColumns& columns() const { return c_; }

 private:
  const ChunkColumns& c_;
  std::vector<uint32_t> rank_;  // by file id
};

using IndexIterator = std::vector<uint32_t>::iterator;

// SortSameStartByBefore for indices of the columns: (file rank, entry start, attempt) packed
// into one integer where they fit. `keyed` and `buffer`: scratch space, reused.
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
    entry_lo = std::min(entry_lo, Unsigned(c.entry_start[*it]));
    entry_hi = std::max(entry_hi, Unsigned(c.entry_start[*it]));
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
    if (entry_bits > 0) key = (key << entry_bits) | (Unsigned(c.entry_start[*it]) - entry_lo);
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

void SortBefore(std::vector<const v1::ChunkRecord*>& records) {
  std::vector<Keyed> keyed;
  keyed.reserve(records.size());
  bool in_start_order = true;
  for (const v1::ChunkRecord* record : records) {
    const uint64_t start = Unsigned(record->start_unix_ns());
    in_start_order = in_start_order && (keyed.empty() || keyed.back().key <= start);
    keyed.push_back({start, record});
  }
  if (!in_start_order) {
    RadixSortByKey(keyed);
    for (size_t i = 0; i < keyed.size(); ++i) records[i] = keyed[i].record;
  }
  for (size_t i = 0; i < keyed.size();) {
    size_t end = i + 1;
    while (end < keyed.size() && keyed[end].key == keyed[i].key) ++end;
    const auto run_first = records.begin() + static_cast<std::ptrdiff_t>(i);
    const auto run_last = records.begin() + static_cast<std::ptrdiff_t>(end);
    if (end - i > 1 && !std::is_sorted(run_first, run_last, ByBefore)) {
      SortSameStartByBefore(run_first, run_last);
    }
    i = end;
  }
}

std::vector<uint32_t> OrderBefore(const ChunkColumns& columns) {
  const std::vector<int64_t>& start = columns.start_unix_ns;
  const size_t n = start.size();
  std::vector<uint32_t> order(n);
  std::vector<KeyedIndex> keyed, buffer;
  if (std::is_sorted(start.begin(), start.end())) {
    for (uint32_t i = 0; i < n; ++i) order[i] = i;
  } else {
    keyed.reserve(n);
    for (uint32_t i = 0; i < n; ++i) keyed.push_back({Unsigned(start[i]), i});
    RadixSortByKey(keyed, buffer);
    for (size_t i = 0; i < n; ++i) order[i] = keyed[i].index;
  }
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
