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

// The order of int64 values as unsigned integers.
uint64_t Unsigned(int64_t value) { return static_cast<uint64_t>(value) ^ (uint64_t{1} << 63); }

bool ByBefore(const v1::ChunkRecord* a, const v1::ChunkRecord* c) { return Before(*a, *c); }

// Sorts `items` by key, stably: a least-significant-digit radix sort over only the bits in which
// the keys differ (a run of one hour in nanoseconds differs in 42 bits: four passes).
void RadixSortByKey(std::vector<Keyed>& items) {
  if (items.size() < 256) {
    std::stable_sort(items.begin(), items.end(),
                     [](const Keyed& a, const Keyed& c) { return a.key < c.key; });
    return;
  }
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const Keyed& item : items) {
    lo = std::min(lo, item.key);
    hi = std::max(hi, item.key);
  }
  if (lo == hi) return;
  const int bits = 64 - absl::countl_zero(hi - lo);
  const int passes = (bits + 10) / 11;
  const int digit_bits = (bits + passes - 1) / passes;
  const uint64_t mask = (uint64_t{1} << digit_bits) - 1;
  std::vector<Keyed> buffer(items.size());
  std::vector<size_t> offsets(size_t{1} << digit_bits);
  for (int shift = 0; shift < bits; shift += digit_bits) {
    std::fill(offsets.begin(), offsets.end(), 0);
    for (const Keyed& item : items) ++offsets[((item.key - lo) >> shift) & mask];
    size_t sum = 0;
    for (size_t& offset : offsets) sum += std::exchange(offset, sum);
    for (const Keyed& item : items) buffer[offsets[((item.key - lo) >> shift) & mask]++] = item;
    items.swap(buffer);
  }
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

}  // namespace findings_rules
}  // namespace aggregation_internal
}  // namespace roastcoffea
