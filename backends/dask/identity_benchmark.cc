// Cost of the Dask backend's poll on the client: decoding and parsing an `identity` reply of
// 1,000 workers (built from the captured 2-worker reply), and optionally the full identity round
// trip against a running scheduler ($DASK_BENCH_SCHEDULER=tcp://HOST:PORT).
//   ./bazelw run -c opt //backends/dask:identity_benchmark
// $DASK_BENCH_DUMP=path writes the 1,000-worker message there (to time Python on the same bytes).
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "backends/dask/comm.h"
#include "backends/dask/identity.h"
#include "backends/dask/msgpack_codec.h"
#include "backends/dask/wire.h"
#include "benchmark/benchmark.h"

namespace roastcoffea::dask {
namespace {

// A worker entry shaped like the captured ones (2022.12 identity), with a distinct address.
Value WorkerEntry(int i) {
  auto num = [](double d) { return Value::Float(d); };
  auto map = [](std::initializer_list<std::pair<const char*, Value>> items) {
    Value m = Value::Map();
    for (const auto& [k, v] : items) m.Insert(Value::Str(k), v);
    return m;
  };
  Value counts = Value::Map();
  for (const char* state : {"executing", "long-running", "memory", "ready", "constrained",
                            "waiting", "fetch", "missing", "flight", "other"}) {
    counts.Insert(Value::Str(state), Value::Int(i % 3));
  }
  Value metrics =
      map({{"task_counts", counts},
           {"bandwidth", map({{"total", Value::Int(100000000)},
                              {"workers", Value::Map()},
                              {"types", Value::Map()}})},
           {"managed_bytes", Value::Int(40112 + i)},
           {"spilled_bytes", map({{"memory", Value::Int(0)}, {"disk", Value::Int(0)}})},
           {"transfer", map({{"incoming_bytes", Value::Int(0)},
                             {"incoming_count", Value::Int(0)},
                             {"incoming_count_total", Value::Int(2)},
                             {"outgoing_bytes", Value::Int(0)},
                             {"outgoing_count", Value::Int(0)},
                             {"outgoing_count_total", Value::Int(4)}})},
           {"event_loop_interval", num(0.020045862197875977)},
           {"cpu", num(2.0)},
           {"memory", Value::Int(112537600 + i)},
           {"time", num(1795331015.2365878 + i)},
           {"host_net_io", map({{"read_bps", num(3462.6)}, {"write_bps", num(3462.6)}})},
           {"host_disk_io", map({{"read_bps", num(0.0)}, {"write_bps", num(0.0)}})},
           {"num_fds", Value::Int(22)}});
  const std::string address = "tcp://10.0." + std::to_string(i / 250) + "." +
                              std::to_string(i % 250) + ":" + std::to_string(30000 + i);
  return map({{"type", Value::Str("Worker")},
              {"id", Value::Str("w-" + std::to_string(i))},
              {"host", Value::Str("10.0.0.1")},
              {"resources", Value::Map()},
              {"local_directory", Value::Str("/tmp/dask-worker-space/worker-u6vl1uxg")},
              {"name", Value::Str("w-" + std::to_string(i))},
              {"nthreads", Value::Int(4)},
              {"memory_limit", Value::Int(2000000000)},
              {"last_seen", num(1795331015.7364202 + i)},
              {"services", map({{"dashboard", Value::Int(36861)}})},
              {"metrics", metrics},
              {"status", Value::Str("running")},
              {"nanny", Value::Str(address + "1")}});
}

const std::string& IdentityBytes(int workers) {
  static const std::string* bytes = [workers] {
    Value ws = Value::Map();
    for (int i = 0; i < workers; ++i) {
      const std::string address = "tcp://10.0." + std::to_string(i / 250) + "." +
                                  std::to_string(i % 250) + ":" + std::to_string(30000 + i);
      ws.Insert(Value::Str(address), WorkerEntry(i));
    }
    Value reply = Value::Map();
    reply.Insert(Value::Str("type"), Value::Str("Scheduler"));
    reply.Insert(Value::Str("id"), Value::Str("Scheduler-a5d8144c-9b10-4ac1-8e18-0a9c416163f6"));
    reply.Insert(Value::Str("address"), Value::Str("tcp://127.0.0.1:8786"));
    reply.Insert(Value::Str("workers"), ws);
    auto* out = new std::string(EncodeMessage(reply));
    if (const char* dump = std::getenv("DASK_BENCH_DUMP"); dump != nullptr) {
      std::ofstream(dump, std::ios::binary) << *out;
    }
    return out;
  }();
  return *bytes;
}

void BM_DecodeIdentity1000(benchmark::State& state) {
  const std::string& bytes = IdentityBytes(1000);
  for (auto _ : state) {
    StringByteReader reader(bytes);
    absl::StatusOr<Value> v = DecodeMessage(*ReadFrames(reader));
    benchmark::DoNotOptimize(v);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes.size()));
  state.counters["message_bytes"] = static_cast<double>(bytes.size());
}
BENCHMARK(BM_DecodeIdentity1000)->Unit(benchmark::kMillisecond);

void BM_DecodeAndParseIdentity1000(benchmark::State& state) {
  const std::string& bytes = IdentityBytes(1000);
  for (auto _ : state) {
    StringByteReader reader(bytes);
    absl::StatusOr<SchedulerSnapshot> s = ParseIdentity(*DecodeMessage(*ReadFrames(reader)));
    if (!s.ok() || s->workers.size() != 1000) state.SkipWithError("bad parse");
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_DecodeAndParseIdentity1000)->Unit(benchmark::kMillisecond);

// A full identity RPC against a live scheduler (skipped without $DASK_BENCH_SCHEDULER).
void BM_IdentityRoundTrip(benchmark::State& state) {
  const char* address = std::getenv("DASK_BENCH_SCHEDULER");
  if (address == nullptr) {
    state.SkipWithError("set DASK_BENCH_SCHEDULER=tcp://HOST:PORT");
    return;
  }
  auto comm = DaskComm::Connect(*ParseSchedulerAddress(address));
  if (!comm.ok()) {
    state.SkipWithError("cannot connect");
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<SchedulerSnapshot> s = ParseIdentity(*(*comm)->Call("identity"));
    benchmark::DoNotOptimize(s);
  }
  (*comm)->Close();
}
BENCHMARK(BM_IdentityRoundTrip)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace roastcoffea::dask
