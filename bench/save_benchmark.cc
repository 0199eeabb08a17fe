// Saving a run's chunk records (#25): from a ChunkTable beside the measurement
// (SaveMeasurement(measurement, table, ...), the records materialized one at a time) against
// from messages (the measurement holding them, SaveMeasurement(measurement, ...)) and against
// what the table save did before it streamed (copy the measurement, materialize every record
// into it with AppendRecordsTo, save that).
//   ./bazelw run -c opt //bench:save_benchmark -- --benchmark_filter=FromTable/1000000
// Run each benchmark in a process of its own (--benchmark_filter): the peak is the process's.
// Counters: records; input_B_per_record (what the input holds above the process before it was
// built: table or messages); peak_above_input_B_per_record (VmHWM during the save minus VmRSS
// just before it, per record: what the save itself adds at its peak); file_MB (the measurement
// file written: measurement.pbs over 64 MiB, else measurement.pb and .json). The save fsyncs:
// real time depends on the disk, CPU time (the main thread's) less. BM_LoadRecords: the load of
// such a measurement (in parts at 10^6) with its records into a table or into messages.
#include <malloc.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "bench/peak_rss.h"
#include "benchmark/benchmark.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"

namespace roastcoffea {
namespace {

// A record as the original's instrumentation writes it (schema/chunk_table_test.cc's typical
// record): task id, dataset, file, uuid, times, memory, bytes, two timing sections; 1 % failed.
void TypicalRecord(int i, v1::ChunkRecord* r) {
  r->Clear();
  const int file = i / 10;
  r->set_task_id(absl::StrCat(i));
  r->set_dataset(file % 2 ? "TTbar" : "WJets");
  r->set_file(absl::StrCat("root://eos.example.org//store/file_", file, ".root"));
  r->set_uuid(absl::StrCat("u-", file));
  r->set_entry_start((i % 10) * 100000);
  r->set_entry_stop((i % 10 + 1) * 100000);
  r->set_events(100000);
  r->set_start_unix_ns(int64_t{1765000000} * 1000000000 + i);
  r->set_end_unix_ns(int64_t{1765000002} * 1000000000 + i);
  r->set_duration_seconds(2.0 + i * 1e-6);
  r->set_memory_before_bytes(int64_t{2000} << 20);
  r->set_memory_after_bytes(int64_t{2000 + i % 200} << 20);
  r->set_compressed_bytes_read(50000000);
  r->set_status(i % 100 == 99 ? v1::CHUNK_STATUS_FAILED : v1::CHUNK_STATUS_OK);
  if (i % 100 == 99) r->set_error_text("OSError: XRootD timeout");
  for (const char* name : {"load_columns", "jets"}) {
    v1::SectionRecord* s = r->add_sections();
    s->set_name(name);
    s->set_kind(v1::SectionRecord::KIND_TIME);
    s->set_entries(1);
    s->set_duration_seconds(0.5 + i * 1e-6);
  }
}

v1::Measurement MeasurementWithoutRecords(int records) {
  v1::Measurement m;
  m.mutable_metadata()->set_schema_version(kSchemaVersion);
  m.mutable_metadata()->set_name("save-benchmark");
  m.mutable_metadata()->set_backend("external");
  m.mutable_report()->set_chunks(records);
  m.mutable_metrics()->mutable_chunks()->set_num_chunks(records);
  return m;
}

std::string ParentDirectory() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/roastcoffea_save_benchmark.", getpid());
}

// The size of the measurement file(s) in `directory`, then the directory removed.
double FileMegabytesThenRemove(const std::string& directory) {
  double bytes = 0;
  for (const char* name : {"FORMAT", "measurement.pb", "measurement.json", "measurement.pbs"}) {
    const std::string path = absl::StrCat(directory, "/", name);
    if (FILE* file = std::fopen(path.c_str(), "r"); file != nullptr) {
      std::fseek(file, 0, SEEK_END);
      bytes += static_cast<double>(std::ftell(file));
      std::fclose(file);
    }
    unlink(path.c_str());
  }
  rmdir(directory.c_str());
  return bytes / 1e6;
}

enum class Source { kTable, kMessages, kMaterializedTable };

template <Source kSource>
void BM_SaveRecords(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  malloc_trim(0);
  const int64_t rss_empty = ProcStatusBytes("VmRSS");
  v1::Measurement measurement = MeasurementWithoutRecords(n);
  ChunkTable table;
  if (kSource == Source::kMessages) {
    measurement.mutable_chunks()->Reserve(n);
    for (int i = 0; i < n; ++i) TypicalRecord(i, measurement.add_chunks());
  } else {
    table.Reserve(n);
    v1::ChunkRecord record;
    for (int i = 0; i < n; ++i) {
      TypicalRecord(i, &record);
      table.Append(record);
    }
  }
  malloc_trim(0);  // memory freed while building is not the save's to reuse
  const int64_t rss_input = ProcStatusBytes("VmRSS");
  const std::string parent = ParentDirectory();
  ResetPeakRss();
  double file_mb = 0;
  for (auto _ : state) {
    absl::StatusOr<std::string> saved;
    if (kSource == Source::kMessages) {
      saved = SaveMeasurement(measurement, parent, "run");
    } else if (kSource == Source::kTable) {
      saved = SaveMeasurement(measurement, table, parent, "run");
    } else {
      // The interim table save: the measurement copied, every record materialized into it.
      v1::Measurement whole = measurement;
      table.AppendRecordsTo(whole.mutable_chunks());
      saved = SaveMeasurement(whole, parent, "run");
    }
    if (!saved.ok()) {
      state.SkipWithError(saved.status().ToString().c_str());
      break;
    }
    state.PauseTiming();
    file_mb = FileMegabytesThenRemove(*saved);
    state.ResumeTiming();
  }
  const int64_t peak = ProcStatusBytes("VmHWM");
  rmdir(parent.c_str());
  state.counters["records"] = n;
  state.counters["input_B_per_record"] = static_cast<double>(rss_input - rss_empty) / n;
  state.counters["peak_above_input_B_per_record"] = static_cast<double>(peak - rss_input) / n;
  state.counters["file_MB"] = file_mb;
}

BENCHMARK_TEMPLATE(BM_SaveRecords, Source::kTable)
    ->Name("BM_SaveRecords/FromTable")
    ->Arg(100000)
    ->Arg(1000000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK_TEMPLATE(BM_SaveRecords, Source::kMessages)
    ->Name("BM_SaveRecords/FromMessages")
    ->Arg(100000)
    ->Arg(1000000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK_TEMPLATE(BM_SaveRecords, Source::kMaterializedTable)
    ->Name("BM_SaveRecords/FromTableMaterialized")
    ->Arg(100000)
    ->Arg(1000000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// Loading such a measurement back: its records into a ChunkTable (LoadOptions::chunk_table)
// against into the measurement's messages. Counters as above; the "input" is the empty process.
template <bool kIntoTable>
void BM_LoadRecords(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::string parent = ParentDirectory();
  std::string directory;
  {
    v1::Measurement measurement = MeasurementWithoutRecords(n);
    ChunkTable table;
    v1::ChunkRecord record;
    for (int i = 0; i < n; ++i) {
      TypicalRecord(i, &record);
      table.Append(record);
    }
    absl::StatusOr<std::string> saved = SaveMeasurement(measurement, table, parent, "run");
    if (!saved.ok()) {
      state.SkipWithError(saved.status().ToString().c_str());
      return;
    }
    directory = *saved;
  }
  malloc_trim(0);
  const int64_t rss_before = ProcStatusBytes("VmRSS");
  ResetPeakRss();
  size_t loaded = 0;
  for (auto _ : state) {
    ChunkTable table;
    LoadOptions options;
    if (kIntoTable) options.chunk_table = &table;
    absl::StatusOr<v1::Measurement> measurement = LoadMeasurement(directory, options);
    if (!measurement.ok()) {
      state.SkipWithError(measurement.status().ToString().c_str());
      break;
    }
    loaded = kIntoTable ? table.size() : static_cast<size_t>(measurement->chunks_size());
  }
  const int64_t peak = ProcStatusBytes("VmHWM");
  state.counters["records"] = static_cast<double>(loaded);
  state.counters["peak_above_input_B_per_record"] = static_cast<double>(peak - rss_before) / n;
  state.counters["file_MB"] = FileMegabytesThenRemove(directory);
  rmdir(parent.c_str());
}

BENCHMARK_TEMPLATE(BM_LoadRecords, true)
    ->Name("BM_LoadRecords/IntoTable")
    ->Arg(1000000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK_TEMPLATE(BM_LoadRecords, false)
    ->Name("BM_LoadRecords/IntoMessages")
    ->Arg(1000000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace roastcoffea
