// Task-stream polling cost per server path (issue #13, item 1): 10 000 tasks finish while the
// backend polls; each reply is what the scheduler's TaskStreamPlugin.collect would return
// (distributed 2025.9.3 and HEAD source: the bisection on stop times, or start_index), built
// from a recorded 2025.9.3 record, with slightly unsorted stop times, encoded,
// parsed and fed to TaskStreamCursor as the backend does.
// Counters: records_per_task (received / tasks; 1.00 = each record once), bytes_per_copy
// (reply bytes / the bytes of one copy of every record), requests.
//
//   ./bazelw build -c opt //backends/dask:task_stream_benchmark
//   TEST_SRCDIR=bazel-bin/backends/dask/task_stream_benchmark.runfiles
//       bazel-bin/backends/dask/task_stream_benchmark   (one command line)
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/dask/fixtures.h"
#include "backends/dask/msgpack_codec.h"
#include "backends/dask/task_stream.h"
#include "backends/dask/value.h"
#include "backends/dask/wire.h"
#include "benchmark/benchmark.h"

namespace roastcoffea::dask {
namespace {

constexpr int kTasks = 10000;

// The recorded record, renamed and re-timed: a plausible stream of distinct tasks.
std::vector<Value> MakeStream() {
  const std::string bytes = testing::FixtureBytes("modern/2025.9.3/get_task_stream_count3.reply");
  StringByteReader reader(bytes);
  const Value recorded = *DecodeMessage(*ReadFrames(reader));
  std::vector<Value> stream;
  stream.reserve(kTasks);
  for (int i = 0; i < kTasks; ++i) {
    Value r = Value::Map();
    const Value& t = recorded.items()[i % recorded.size()];
    for (size_t k = 0; k < t.size(); ++k) {
      const std::string& name = t.key(k).text();
      if (name == "key") {
        r.Insert(t.key(k), Value::Str("inc-" + std::to_string(i)));
      } else if (name == "startstops") {
        Value ss = Value::Map();
        ss.Insert(Value::Str("action"), Value::Str("compute"));
        // Workers finish slightly out of order (stop times jitter by up to 6 ms).
        const double jitter = static_cast<double>((i * 2654435761u >> 9) % 7) * 0.001;
        ss.Insert(Value::Str("start"), Value::Float(1e9 + i * 0.002 + jitter));
        ss.Insert(Value::Str("stop"), Value::Float(1e9 + i * 0.002 + 0.001 + jitter));
        r.Insert(t.key(k), Value::Array({ss}));
      } else {
        r.Insert(t.key(k), t.value(k));
      }
    }
    stream.push_back(std::move(r));
  }
  return stream;
}

double LastStop(const Value& record) {
  double stop = 0;
  for (const Value& ss : record.Find("startstops")->items()) {
    stop = std::max(stop, *ss.Find("stop")->AsDouble());
  }
  return stop;
}

// TaskStreamPlugin.collect(start=) (its bisection) or start_index, on the first `available`.
Value Collect(const std::vector<Value>& stream, size_t available, const Value& args) {
  size_t from = 0;
  if (const Value* i = args.Find("start_index"); i != nullptr) {
    from = std::min<size_t>(available, static_cast<size_t>(*i->AsInt64()));
  } else if (const Value* start = args.Find("start"); start != nullptr) {
    size_t left = 0, right = available;
    while (left < right) {
      const size_t mid = (left + right) / 2;
      if (LastStop(stream[mid]) < *start->AsDouble()) {
        left = mid + 1;
      } else {
        right = mid;
      }
    }
    from = left;
  }
  return Value::Array(std::vector<Value>(stream.begin() + from, stream.begin() + available));
}

void BM_TaskStreamPolling(benchmark::State& state) {
  const bool start_index = state.range(0) == 1;
  const std::vector<Value> stream = MakeStream();
  const double one_copy = static_cast<double>(EncodeMessage(Value::Array(stream)).size());
  int64_t received = 0, bytes = 0, requests = 0, kept = 0;
  for (auto _ : state) {
    TaskStreamCursor cursor;
    received = bytes = requests = kept = 0;
    // Uneven arrivals between polls: 0 to 250 records (a steady ~125 per 0.25 s poll).
    size_t available = 0;
    for (uint32_t poll = 0; available < stream.size() || poll == 0; ++poll) {
      available = std::min(stream.size(), available + (poll * 2654435761u >> 7) % 251);
      for (int attempt = 0; attempt < 10; ++attempt) {
        const Value reply = Collect(stream, available, cursor.NextRequestArguments(start_index));
        const std::string wire = EncodeMessage(reply);
        ++requests;
        bytes += static_cast<int64_t>(wire.size());
        received += static_cast<int64_t>(reply.size());
        std::vector<TaskRecord> records = *ParseTaskStream(reply);
        std::optional<int64_t> index_after;
        if (start_index) index_after = cursor.next_index() + static_cast<int64_t>(records.size());
        kept += static_cast<int64_t>(cursor.Accept(std::move(records), index_after).size());
        if (!cursor.needs_retry()) break;
      }
    }
    benchmark::DoNotOptimize(kept);
  }
  if (kept != kTasks) state.SkipWithError("records lost or counted twice");
  state.counters["records_per_task"] = static_cast<double>(received) / kTasks;
  state.counters["bytes_per_copy"] = bytes / one_copy;
  state.counters["requests"] = static_cast<double>(requests);
  state.SetLabel(start_index ? "start_index (>= 2026.6)" : "start from the anchor (< 2026.6)");
}
BENCHMARK(BM_TaskStreamPolling)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace roastcoffea::dask
