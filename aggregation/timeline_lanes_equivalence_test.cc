// BuildChunkLanes (interned lanes, heaps of busy and free slots) gives exactly what the
// straightforward algorithm (a map keyed by lane name, a linear scan for the first free slot)
// gives, on random runs with many overlapping chunks, shared instants and zero-length chunks.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "aggregation/timeline.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

constexpr int64_t kT0 = 1767268800LL * 1000000000;

bool HasTimes(const v1::ChunkRecord& chunk) {
  return chunk.start_unix_ns() != 0 && chunk.end_unix_ns() >= chunk.start_unix_ns();
}

// The algorithm BuildChunkLanes had before it was made O(n log n): the reference.
ChunkLanes ReferenceLanes(const v1::Measurement& measurement, int64_t origin_unix_ns) {
  ChunkLanes out;
  std::map<std::pair<std::string, int64_t>, std::vector<LaneChunk>> by_lane;
  std::map<std::string, size_t> dataset_ids;
  out.dataset_index.assign(static_cast<size_t>(measurement.chunks_size()), 0);
  out.first_start_seconds = std::numeric_limits<double>::infinity();
  out.last_end_seconds = -std::numeric_limits<double>::infinity();
  for (int i = 0; i < measurement.chunks_size(); ++i) {
    const v1::ChunkRecord& chunk = measurement.chunks(i);
    if (!HasTimes(chunk)) continue;
    const auto [it, added] = dataset_ids.emplace(chunk.dataset(), out.datasets.size());
    if (added) out.datasets.push_back(chunk.dataset());
    out.dataset_index[static_cast<size_t>(i)] = it->second;
    LaneChunk lane_chunk{static_cast<size_t>(i),
                         SecondsSince(origin_unix_ns, chunk.start_unix_ns()),
                         SecondsSince(origin_unix_ns, chunk.end_unix_ns())};
    out.first_start_seconds = std::min(out.first_start_seconds, lane_chunk.start_seconds);
    out.last_end_seconds = std::max(out.last_end_seconds, lane_chunk.end_seconds);
    by_lane[{chunk.worker(), chunk.thread_index()}].push_back(lane_chunk);
    ++out.chunk_count;
  }
  if (out.chunk_count == 0) {
    out.first_start_seconds = 0;
    out.last_end_seconds = 0;
    return out;
  }
  const double span = out.last_end_seconds - out.first_start_seconds;
  for (auto& [key, chunks] : by_lane) {
    std::stable_sort(chunks.begin(), chunks.end(), [](const LaneChunk& a, const LaneChunk& b) {
      return a.start_seconds < b.start_seconds;
    });
    std::vector<Lane> slots;
    std::vector<double> slot_end;
    for (const LaneChunk& chunk : chunks) {
      size_t slot = 0;
      while (slot < slots.size() && slot_end[slot] > chunk.start_seconds) ++slot;
      if (slot == slots.size()) {
        Lane lane;
        lane.worker = key.first;
        lane.thread_index = key.second;
        lane.slot = static_cast<int>(slot);
        slots.push_back(std::move(lane));
        slot_end.push_back(chunk.end_seconds);
      }
      slot_end[slot] = std::max(slot_end[slot], chunk.end_seconds);
      slots[slot].busy_seconds += chunk.end_seconds - chunk.start_seconds;
      slots[slot].chunks.push_back(chunk);
    }
    for (Lane& lane : slots) {
      lane.idle_seconds = std::max(0.0, span - lane.busy_seconds);
      out.lanes.push_back(std::move(lane));
    }
  }
  return out;
}

TEST(TimelineLanesEquivalenceTest, LanesEqualTheReferenceOnRandomRuns) {
  std::mt19937_64 rng(11);
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  const char* workers[] = {"", "b", "a", "tcp://10.0.0.1:1", "a/thread-1"};
  int runs_with_slots = 0;
  for (int run = 0; run < 300; ++run) {
    v1::Measurement m;
    const int n = pick(400);
    for (int i = 0; i < n; ++i) {
      v1::ChunkRecord& c = *m.add_chunks();
      c.set_worker(workers[pick(5)]);
      c.set_thread_index(pick(3));
      c.set_dataset(pick(4) == 0 ? "" : absl::StrCat("ds", pick(3)));
      // Few distinct instants: shared starts and ends, and chunks that end where others start.
      const int64_t start = pick(20) == 0 ? 0 : kT0 + int64_t{pick(30)} * 250'000'000;
      c.set_start_unix_ns(start);
      c.set_end_unix_ns(pick(10) == 0 ? start - 1 : start + int64_t{pick(8)} * 250'000'000);
    }
    const ChunkLanes got = BuildChunkLanes(m, kT0);
    const ChunkLanes want = ReferenceLanes(m, kT0);
    ASSERT_EQ(got.lanes.size(), want.lanes.size()) << "run " << run;
    for (size_t l = 0; l < want.lanes.size(); ++l) {
      const Lane& a = got.lanes[l];
      const Lane& b = want.lanes[l];
      ASSERT_EQ(a.worker, b.worker);
      ASSERT_EQ(a.thread_index, b.thread_index);
      ASSERT_EQ(a.slot, b.slot);
      ASSERT_EQ(a.busy_seconds, b.busy_seconds);
      ASSERT_EQ(a.idle_seconds, b.idle_seconds);
      ASSERT_EQ(a.chunks.size(), b.chunks.size()) << "run " << run << " lane " << l;
      for (size_t k = 0; k < b.chunks.size(); ++k) {
        ASSERT_EQ(a.chunks[k].record, b.chunks[k].record);
        ASSERT_EQ(a.chunks[k].start_seconds, b.chunks[k].start_seconds);
        ASSERT_EQ(a.chunks[k].end_seconds, b.chunks[k].end_seconds);
      }
      runs_with_slots += b.slot > 2 ? 1 : 0;
    }
    ASSERT_EQ(got.datasets, want.datasets);
    ASSERT_EQ(got.dataset_index, want.dataset_index);
    ASSERT_EQ(got.first_start_seconds, want.first_start_seconds);
    ASSERT_EQ(got.last_end_seconds, want.last_end_seconds);
    ASSERT_EQ(got.chunk_count, want.chunk_count);
  }
  EXPECT_GT(runs_with_slots, 100);  // the slot assignment is really exercised
}

}  // namespace
}  // namespace roastcoffea
