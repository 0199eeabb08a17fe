#include "aggregation/timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "aggregation/plausible_time.h"
#include "schema/chunk_info_rows.h"

namespace roastcoffea {
namespace {

bool HasTimes(const TimelineChunks::Chunk& chunk) {
  return ChunkHasTimes(chunk.start_unix_ns, chunk.end_unix_ns);
}

uint32_t Intern(absl::string_view name, absl::flat_hash_map<std::string, uint32_t>& ids,
                std::vector<std::string>& names) {
  if (const auto it = ids.find(name); it != ids.end()) return it->second;
  const auto id = static_cast<uint32_t>(names.size());
  ids.emplace(std::string(name), id);
  names.emplace_back(name);
  return id;
}

// Intern through `recent`, a direct-mapped cache of ids by a cheap hash of the name's last 8
// bytes and length (kRecentNames slots, UINT32_MAX: empty; made on first use).
uint32_t InternRecent(absl::string_view name, std::vector<uint32_t>& recent, size_t slots,
                      absl::flat_hash_map<std::string, uint32_t>& ids,
                      std::vector<std::string>& names) {
  if (recent.empty()) recent.assign(slots, UINT32_MAX);
  uint64_t end = name.size();
  for (size_t i = name.size() > 8 ? name.size() - 8 : 0; i < name.size(); ++i) {
    end = end * 131 + static_cast<uint8_t>(name[i]);
  }
  uint32_t& id = recent[(end * 0x9e3779b97f4a7c15u >> 52) % slots];
  if (id != UINT32_MAX && names[id] == name) return id;
  id = Intern(name, ids, names);
  return id;
}

// 0 (unknown) for a time that is not PlausibleTime: a corrupt saved start must neither overflow
// nor move the origin of every plot billions of seconds away.
int64_t TimestampNs(const google::protobuf::Timestamp& time) {
  const std::optional<absl::Time> instant = PlausibleTime(time);
  return instant.has_value() ? absl::ToUnixNanos(*instant) : 0;
}

// Packs one (worker, thread) lane's chunks, sorted by start, into slots.
std::vector<Lane> PackIntoSlots(const std::vector<LaneChunk>& chunks, absl::string_view worker,
                                int64_t thread_index) {
  // Chunks that overlap go to further slots: the first slot whose last chunk has ended. Busy
  // slots wait in a heap by end time and move to a heap of free slot numbers once ended, so a
  // lane with thousands of overlapping chunks costs O(n log slots), not O(n x slots).
  using EndAndSlot = std::pair<double, size_t>;
  std::priority_queue<EndAndSlot, std::vector<EndAndSlot>, std::greater<EndAndSlot>> busy;
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> free_slots;
  std::vector<Lane> slots;
  std::vector<double> slot_end;
  for (const LaneChunk& chunk : chunks) {
    while (!busy.empty() && busy.top().first <= chunk.start_seconds) {
      free_slots.push(busy.top().second);
      busy.pop();
    }
    size_t slot = slots.size();
    if (!free_slots.empty()) {
      slot = free_slots.top();
      free_slots.pop();
    } else {
      Lane lane;
      lane.worker = std::string(worker);
      lane.thread_index = thread_index;
      lane.slot = static_cast<int>(slot);
      slots.push_back(std::move(lane));
      slot_end.push_back(chunk.end_seconds);
    }
    slot_end[slot] = std::max(slot_end[slot], chunk.end_seconds);
    busy.push({slot_end[slot], slot});
    slots[slot].busy_seconds += chunk.end_seconds - chunk.start_seconds;
    slots[slot].chunks.push_back(chunk);
  }
  return slots;
}

}  // namespace

bool ChunkHasTimes(int64_t start_unix_ns, int64_t end_unix_ns) {
  return start_unix_ns != 0 && end_unix_ns >= start_unix_ns;
}

void TimelineChunks::Add(const v1::ChunkRecord& record) {
  Chunk chunk;
  chunk.start_unix_ns = record.start_unix_ns();
  chunk.end_unix_ns = record.end_unix_ns();
  chunk.compressed_bytes_read = record.compressed_bytes_read();
  chunk.thread_index = record.thread_index();
  Add(chunk, record.worker(), record.dataset());
}

void TimelineChunks::Add(Chunk chunk, absl::string_view worker, absl::string_view dataset) {
  // Consecutive records often share a worker and a dataset: no lookup then.
  const bool same_worker = !chunks_.empty() && worker_names_[chunks_.back().worker] == worker;
  chunk.worker =
      same_worker ? chunks_.back().worker
                  : InternRecent(worker, recent_workers_, kRecentNames, worker_ids_, worker_names_);
  const bool same_dataset = !chunks_.empty() && dataset_names_[chunks_.back().dataset] == dataset;
  chunk.dataset = same_dataset ? chunks_.back().dataset
                               : InternRecent(dataset, recent_datasets_, kRecentNames, dataset_ids_,
                                              dataset_names_);
  chunks_.push_back(chunk);
}

TimelineChunks TimelineChunksOf(const v1::Measurement& measurement) {
  TimelineChunks chunks;
  for (const v1::ChunkRecord& record : measurement.chunks()) chunks.Add(record);
  return chunks;
}

double SecondsSince(int64_t origin_unix_ns, int64_t unix_ns) {
  // Split so that two epoch-scale instants keep their nanoseconds in a double.
  const int64_t whole = unix_ns / 1000000000 - origin_unix_ns / 1000000000;
  const int64_t nanos = unix_ns % 1000000000 - origin_unix_ns % 1000000000;
  return static_cast<double>(whole) + static_cast<double>(nanos) * 1e-9;
}

int64_t TimelineOriginUnixNs(const v1::Measurement& measurement) {
  return TimelineOriginUnixNs(measurement, TimelineChunksOf(measurement));
}

int64_t TimelineOriginUnixNs(const v1::Measurement& measurement, const TimelineChunks& chunks) {
  if (measurement.metadata().has_start_time()) {
    const int64_t start = TimestampNs(measurement.metadata().start_time());
    if (start > 0) return start;
  }
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (const TimelineChunks::Chunk& chunk : chunks.chunks()) {
    if (HasTimes(chunk)) origin = std::min(origin, chunk.start_unix_ns);
  }
  const v1::TrackingData& tracking = measurement.tracking();
  for (int64_t t : tracking.worker_count_time_unix_ns()) origin = std::min(origin, t);
  for (const v1::WorkerSeries& worker : tracking.workers()) {
    for (int64_t t : worker.time_unix_ns()) origin = std::min(origin, t);
  }
  return origin == std::numeric_limits<int64_t>::max() ? 0 : origin;
}

StepTimeline ReadRateTimeline(const v1::Measurement& measurement, int64_t origin_unix_ns,
                              int bins) {
  return ReadRateTimeline(measurement, TimelineChunksOf(measurement), origin_unix_ns, bins);
}

StepTimeline ReadRateTimeline(const v1::Measurement& measurement, const TimelineChunks& chunks,
                              int64_t origin_unix_ns, int bins) {
  struct Read {
    double start, end, bytes;
  };
  std::vector<Read> reads;
  bool any_bytes = false;
  for (const TimelineChunks::Chunk& chunk : chunks.chunks()) {
    if (!HasTimes(chunk)) continue;
    reads.push_back({SecondsSince(origin_unix_ns, chunk.start_unix_ns),
                     SecondsSince(origin_unix_ns, chunk.end_unix_ns),
                     static_cast<double>(chunk.compressed_bytes_read)});
    any_bytes = any_bytes || chunk.compressed_bytes_read > 0;
  }
  // Measurements of the original tool have only its per-chunk summary.
  if (reads.empty() && measurement.metrics().has_chunks()) {
    ForEachChunkInfo(measurement.metrics().chunks(), [&](const ChunkInfoRow& info) {
      if (info.start_unix_ns == 0 || info.end_unix_ns < info.start_unix_ns) return;
      reads.push_back({SecondsSince(origin_unix_ns, info.start_unix_ns),
                       SecondsSince(origin_unix_ns, info.end_unix_ns),
                       static_cast<double>(info.bytes_read)});
      any_bytes = any_bytes || info.bytes_read > 0;
    });
  }
  StepTimeline out;
  if (!any_bytes) return out;
  bins = std::max(bins, 1);
  double low = std::numeric_limits<double>::infinity();
  double high = -std::numeric_limits<double>::infinity();
  for (const Read& read : reads) {
    low = std::min(low, read.start);
    high = std::max(high, read.end);
  }
  if (!(high > low)) high = low + 1e-3;
  const double width = (high - low) / bins;
  std::vector<double> bytes(static_cast<size_t>(bins), 0.0);
  // Full bins inside a chunk: a difference array, so a long chunk costs O(1).
  std::vector<double> full(static_cast<size_t>(bins) + 1, 0.0);
  const auto bin_of = [&](double t) {
    return std::clamp(static_cast<int>((t - low) / width), 0, bins - 1);
  };
  for (const Read& read : reads) {
    if (read.bytes <= 0) continue;
    const int first = bin_of(read.start);
    const int last = bin_of(read.end);
    if (first == last || !(read.end > read.start)) {
      bytes[static_cast<size_t>(first)] += read.bytes;
      continue;
    }
    const double rate = read.bytes / (read.end - read.start);
    bytes[static_cast<size_t>(first)] += rate * (low + (first + 1) * width - read.start);
    bytes[static_cast<size_t>(last)] += rate * (read.end - (low + last * width));
    full[static_cast<size_t>(first) + 1] += rate * width;
    full[static_cast<size_t>(last)] -= rate * width;
  }
  double running = 0;
  for (int b = 0; b < bins; ++b) {
    running += full[static_cast<size_t>(b)];
    out.time_seconds.push_back(low + b * width);
    out.value.push_back((bytes[static_cast<size_t>(b)] + running) / width);
  }
  out.time_seconds.push_back(high);
  out.value.push_back(out.value.back());
  return out;
}

StepTimeline RunningChunksTimeline(const v1::Measurement& measurement, int64_t origin_unix_ns) {
  return RunningChunksTimeline(TimelineChunksOf(measurement), origin_unix_ns);
}

StepTimeline RunningChunksTimeline(const TimelineChunks& chunks, int64_t origin_unix_ns) {
  // The starts and the ends, each sorted (records come nearly in start order: often no sort at
  // all), then merged: every change at an instant is counted before its point.
  std::vector<int64_t> starts, ends;
  starts.reserve(chunks.chunks().size());
  ends.reserve(chunks.chunks().size());
  for (const TimelineChunks::Chunk& chunk : chunks.chunks()) {
    if (!HasTimes(chunk)) continue;
    starts.push_back(chunk.start_unix_ns);
    ends.push_back(chunk.end_unix_ns);
  }
  StepTimeline out;
  if (starts.empty()) return out;
  for (std::vector<int64_t>* instants : {&starts, &ends}) {
    if (!std::is_sorted(instants->begin(), instants->end())) {
      std::sort(instants->begin(), instants->end());
    }
  }
  int running = 0;
  for (size_t s = 0, e = 0; s < starts.size() || e < ends.size();) {
    const int64_t instant = s == starts.size() ? ends[e]
                            : e == ends.size() ? starts[s]
                                               : std::min(starts[s], ends[e]);
    for (; s < starts.size() && starts[s] == instant; ++s) ++running;
    for (; e < ends.size() && ends[e] == instant; ++e) --running;
    out.time_seconds.push_back(SecondsSince(origin_unix_ns, instant));
    out.value.push_back(running);
  }
  return out;
}

StepTimeline BinnedMean(const StepTimeline& series, int bins) {
  const size_t n = std::min(series.time_seconds.size(), series.value.size());
  if (n < 2) return series;
  bins = std::max(bins, 1);
  const double low = series.time_seconds.front();
  const double high = series.time_seconds[n - 1];
  if (!(high > low)) return series;
  const double width = (high - low) / bins;
  std::vector<double> integral(static_cast<size_t>(bins), 0.0);
  for (size_t i = 0; i + 1 < n; ++i) {
    // value[i] holds over [time[i], time[i + 1]); spread it over the bins it covers.
    double from = series.time_seconds[i];
    const double to = series.time_seconds[i + 1];
    while (to > from) {
      const int b = std::clamp(static_cast<int>((from - low) / width), 0, bins - 1);
      const double bin_end = b == bins - 1 ? high : low + (b + 1) * width;
      const double until = std::min(to, std::max(bin_end, from));
      if (!(until > from)) break;
      integral[static_cast<size_t>(b)] += series.value[i] * (until - from);
      from = until;
    }
  }
  StepTimeline out;
  for (int b = 0; b < bins; ++b) {
    out.time_seconds.push_back(low + b * width);
    out.value.push_back(integral[static_cast<size_t>(b)] / width);
  }
  out.time_seconds.push_back(high);
  out.value.push_back(out.value.back());
  return out;
}

ChunkLanes BuildChunkLanes(const v1::Measurement& measurement, int64_t origin_unix_ns) {
  return BuildChunkLanes(TimelineChunksOf(measurement), origin_unix_ns);
}

ChunkLanes BuildChunkLanes(const TimelineChunks& chunks, int64_t origin_unix_ns) {
  ChunkLanes out;
  // By the interned names; lanes are put in name order below.
  absl::flat_hash_map<std::pair<uint32_t, int64_t>, size_t> lane_ids;
  std::vector<std::pair<absl::string_view, int64_t>> lane_keys;
  std::vector<std::vector<LaneChunk>> lane_chunks;
  struct LastLane {
    bool set = false;
    int64_t thread_index = 0;
    size_t lane = 0;
  };
  std::vector<LastLane> last_lane(chunks.worker_names().size());  // per worker
  // Datasets in first-seen order among the chunks with times.
  std::vector<size_t> dataset_ids(chunks.dataset_names().size(), SIZE_MAX);
  out.dataset_index.assign(chunks.chunks().size(), 0);
  out.first_start_seconds = std::numeric_limits<double>::infinity();
  out.last_end_seconds = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < chunks.chunks().size(); ++i) {
    const TimelineChunks::Chunk& chunk = chunks.chunks()[i];
    if (!HasTimes(chunk)) continue;
    if (dataset_ids[chunk.dataset] == SIZE_MAX) {
      dataset_ids[chunk.dataset] = out.datasets.size();
      out.datasets.push_back(chunks.dataset_names()[chunk.dataset]);
    }
    out.dataset_index[i] = dataset_ids[chunk.dataset];
    LaneChunk lane_chunk{i, SecondsSince(origin_unix_ns, chunk.start_unix_ns),
                         SecondsSince(origin_unix_ns, chunk.end_unix_ns)};
    out.first_start_seconds = std::min(out.first_start_seconds, lane_chunk.start_seconds);
    out.last_end_seconds = std::max(out.last_end_seconds, lane_chunk.end_seconds);
    // A worker's chunks are mostly on the thread of its chunk before (one per TaskVine worker):
    // that lane without a lookup.
    LastLane& last = last_lane[chunk.worker];
    if (!last.set || last.thread_index != chunk.thread_index) {
      const std::pair<uint32_t, int64_t> id(chunk.worker, chunk.thread_index);
      const auto [lane, new_lane] = lane_ids.try_emplace(id, lane_keys.size());
      if (new_lane) {
        lane_keys.emplace_back(chunks.worker_names()[chunk.worker], chunk.thread_index);
        lane_chunks.emplace_back();
      }
      last = {true, chunk.thread_index, lane->second};
    }
    lane_chunks[last.lane].push_back(lane_chunk);
    ++out.chunk_count;
  }
  if (out.chunk_count == 0) {
    out.first_start_seconds = 0;
    out.last_end_seconds = 0;
    return out;
  }
  std::vector<size_t> order(lane_keys.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return lane_keys[a] < lane_keys[b]; });
  const double span = out.last_end_seconds - out.first_start_seconds;
  for (size_t k : order) {
    std::vector<LaneChunk>& chunks = lane_chunks[k];
    std::stable_sort(chunks.begin(), chunks.end(), [](const LaneChunk& a, const LaneChunk& b) {
      return a.start_seconds < b.start_seconds;
    });
    std::vector<Lane> slots = PackIntoSlots(chunks, lane_keys[k].first, lane_keys[k].second);
    for (Lane& lane : slots) {
      lane.idle_seconds = std::max(0.0, span - lane.busy_seconds);
      out.lanes.push_back(std::move(lane));
    }
    chunks = std::vector<LaneChunk>();  // release as we go
  }
  return out;
}

std::vector<LaneBins> BinChunkLanes(const ChunkLanes& lanes, int bins) {
  bins = std::max(bins, 1);
  std::vector<LaneBins> out;
  const double low = lanes.first_start_seconds;
  double high = lanes.last_end_seconds;
  if (!(high > low)) high = low + 1e-3;
  const double width = (high - low) / bins;
  const size_t datasets = std::max<size_t>(lanes.datasets.size(), 1);
  for (const Lane& lane : lanes.lanes) {
    // Seconds covered per (bin, dataset); a chunk touches the bins it overlaps (at most all of
    // them for one chunk, so a lane costs O(chunks + bins x overlap)).
    std::vector<double> covered(static_cast<size_t>(bins) * datasets, 0.0);
    for (const LaneChunk& chunk : lane.chunks) {
      const size_t dataset = lanes.dataset_index[chunk.record];
      const int first =
          std::clamp(static_cast<int>((chunk.start_seconds - low) / width), 0, bins - 1);
      const int last = std::clamp(static_cast<int>((chunk.end_seconds - low) / width), 0, bins - 1);
      for (int b = first; b <= last; ++b) {
        const double from = std::max(chunk.start_seconds, low + b * width);
        const double to = std::min(chunk.end_seconds, low + (b + 1) * width);
        if (to > from) covered[static_cast<size_t>(b) * datasets + dataset] += to - from;
      }
    }
    LaneBins lane_bins;
    for (int b = 0; b < bins; ++b) {
      double sum = 0;
      double best = 0;
      size_t dominant = SIZE_MAX;
      for (size_t d = 0; d < datasets; ++d) {
        const double seconds = covered[static_cast<size_t>(b) * datasets + d];
        sum += seconds;
        if (seconds > best) {
          best = seconds;
          dominant = d;
        }
      }
      lane_bins.busy_fraction.push_back(std::min(1.0, sum / width));
      lane_bins.dominant_dataset.push_back(dominant);
    }
    out.push_back(std::move(lane_bins));
  }
  return out;
}

}  // namespace roastcoffea
