// Writing measurement.json of a run of 10^5 and 10^6 chunks (issue #16: a run is never lost):
// time, and how far the process's peak resident memory rises above its level before the write.
//   bazel run -c opt //store:measurement_json_benchmark
// WriteAsSaveMeasurement is store/json_stream_writer.h as SaveMeasurement uses it (every record
// printed by the writer itself); WriteDelegatingSmallMessages is the same writer at its default
// options (submessages under 64 KiB converted by libprotobuf); WritePerTopLevelField is the
// writer SaveMeasurement used before (libprotobuf's MessageToJsonString once per top-level field
// and per record of a repeated one), kept here as the baseline. peak_rss_growth_MB is measured per
// benchmark (the kernel's peak is reset before each), so each benchmark is best run in a process of
// its own (--benchmark_filter) for numbers that do not depend on what ran before.
#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "benchmark/benchmark.h"
#include "google/protobuf/util/json_util.h"
#include "io/atomic_write.h"
#include "schema/measurement.pb.h"
#include "store/json_stream_writer.h"

namespace roastcoffea {
namespace {

// A run of `chunks` external chunk records as `collect` saves it: one ChunkRecord and one
// metrics ChunkInfo per chunk, and a worker's tracking series.
const v1::Measurement& RunOfChunks(int64_t chunks) {
  static auto* cache = new std::pair<int64_t, v1::Measurement>{-1, {}};
  if (cache->first == chunks) return cache->second;
  v1::Measurement& m = cache->second;
  m.Clear();
  cache->first = chunks;
  m.mutable_metadata()->set_schema_version(1);
  m.mutable_metadata()->set_name("r1e6");
  m.mutable_metadata()->mutable_start_time()->set_seconds(1742250330);
  v1::WorkerSeries& worker = *m.mutable_tracking()->add_workers();
  worker.set_worker("worker-1");
  for (int i = 0; i < 10000; ++i) {
    worker.add_time_unix_ns(int64_t{1742250330} * 1000000000 + int64_t{1000000000} * i);
    worker.add_memory_bytes(1e9 + i);
    worker.add_cpu_percent(99.5);
  }
  v1::ChunkMetrics& metrics = *m.mutable_metrics()->mutable_chunks();
  metrics.set_num_chunks(chunks);
  for (int64_t i = 0; i < chunks; ++i) {
    v1::ChunkRecord& chunk = *m.add_chunks();
    chunk.set_dataset("d");
    chunk.set_file("f");
    chunk.set_entry_start(i * 10);
    chunk.set_entry_stop(i * 10 + 10);
    chunk.set_events(10);
    chunk.set_start_unix_ns((1742250330 + i % 100) * int64_t{1000000000});
    chunk.set_end_unix_ns(chunk.start_unix_ns() + 500000000);
    chunk.set_duration_seconds(0.5);
    chunk.set_status(v1::CHUNK_STATUS_OK);
    // chunk_info as Aggregate writes it: columns (#25).
    v1::ChunkInfoColumns& info = *metrics.mutable_chunk_info_columns();
    if (info.files().empty()) info.add_files("f");
    info.add_file_index(0);
    info.add_entry_start(chunk.entry_start());
    info.add_entry_stop(chunk.entry_stop());
    info.add_attempt(0);
    info.add_start_unix_ns(chunk.start_unix_ns());
    info.add_end_unix_ns(chunk.end_unix_ns());
    info.add_bytes_read(0);
  }
  return m;
}

int64_t StatusKilobytes(absl::string_view key) {
  FILE* file = fopen("/proc/self/status", "r");
  if (file == nullptr) return -1;
  char line[256];
  int64_t kilobytes = -1;
  while (fgets(line, sizeof(line), file) != nullptr) {
    absl::string_view text(line);
    if (!absl::ConsumePrefix(&text, key)) continue;
    absl::ConsumePrefix(&text, ":");
    absl::ConsumeSuffix(&text, "\n");
    absl::ConsumeSuffix(&text, " kB");
    if (!absl::SimpleAtoi(text, &kilobytes)) kilobytes = -1;
    break;
  }
  fclose(file);
  return kilobytes;
}

// Starts a new peak of resident memory (Linux: "5" to clear_refs) and returns the current level,
// or -1 where the kernel cannot.
int64_t ResetPeakRss() {
  malloc_trim(0);  // so that memory freed earlier is not counted as this benchmark's
  const int fd = open("/proc/self/clear_refs", O_WRONLY);
  if (fd < 0) return -1;
  const bool reset = write(fd, "5", 1) == 1;
  close(fd);
  return reset ? StatusKilobytes("VmRSS") : -1;
}

absl::Status WritePerTopLevelField(const v1::Measurement& measurement, AtomicFileWriter& out) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  const google::protobuf::Descriptor* descriptor = measurement.GetDescriptor();
  const google::protobuf::Reflection* reflection = measurement.GetReflection();
  std::string piece;
  const auto message_json = [&](const google::protobuf::Message& message) -> absl::Status {
    piece.clear();
    const auto status = google::protobuf::util::MessageToJsonString(message, &piece, options);
    if (!status.ok()) return absl::InternalError(status.ToString());
    return out.Append(piece);
  };
  if (absl::Status s = out.Append("{"); !s.ok()) return s;
  for (int f = 0; f < descriptor->field_count(); ++f) {
    const google::protobuf::FieldDescriptor* field = descriptor->field(f);
    if (!field->is_repeated() && !reflection->HasField(measurement, field)) continue;
    if (absl::Status s = out.Append(absl::StrCat("\"", field->name(), "\": ")); !s.ok()) return s;
    if (!field->is_repeated()) {
      if (absl::Status s = message_json(reflection->GetMessage(measurement, field)); !s.ok()) {
        return s;
      }
      continue;
    }
    for (int i = 0; i < reflection->FieldSize(measurement, field); ++i) {
      if (absl::Status s = message_json(reflection->GetRepeatedMessage(measurement, field, i));
          !s.ok()) {
        return s;
      }
    }
  }
  return out.Append("}\n");
}

absl::Status WriteStreamed(const v1::Measurement& measurement, size_t delegate_below_bytes,
                           AtomicFileWriter& out) {
  store_internal::JsonStreamOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  options.delegate_below_bytes = delegate_below_bytes;
  return store_internal::WriteMessageJson(
      measurement, options, [&out](absl::string_view piece) { return out.Append(piece); });
}

absl::Status WriteAsSaveMeasurement(const v1::Measurement& measurement, AtomicFileWriter& out) {
  return WriteStreamed(measurement, 0, out);
}

absl::Status WriteDelegatingSmallMessages(const v1::Measurement& measurement,
                                          AtomicFileWriter& out) {
  return WriteStreamed(measurement, store_internal::JsonStreamOptions().delegate_below_bytes, out);
}

template <absl::Status (*kWrite)(const v1::Measurement&, AtomicFileWriter&)>
void BM_WriteMeasurementJson(benchmark::State& state) {
  const v1::Measurement& measurement = RunOfChunks(state.range(0));
  const std::string path =
      absl::StrCat(getenv("TEST_TMPDIR") != nullptr ? getenv("TEST_TMPDIR") : "/tmp",
                   "/measurement_json_benchmark.", getpid(), ".json");
  AtomicWriteOptions write_options;
  write_options.sync = false;  // the disk's speed is not what is measured
  const int64_t rss_before = ResetPeakRss();
  int64_t bytes = 0;
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<AtomicFileWriter>> out =
        AtomicFileWriter::Create(path, write_options);
    absl::Status written = out.ok() ? kWrite(measurement, **out) : out.status();
    if (written.ok()) written = (*out)->Commit();
    if (!written.ok()) {
      state.SkipWithError(written.ToString().c_str());
      break;
    }
    FILE* file = fopen(path.c_str(), "r");
    if (file != nullptr) {
      fseek(file, 0, SEEK_END);
      bytes = ftell(file);
      fclose(file);
    }
  }
  unlink(path.c_str());
  const int64_t peak = StatusKilobytes("VmHWM");
  state.counters["json_MB"] = bytes / 1e6;
  state.counters["peak_rss_growth_MB"] =
      rss_before < 0 || peak < 0 ? -1 : (peak - rss_before) / 1e3;
  state.counters["peak_rss_growth_B_per_chunk"] =
      rss_before < 0 || peak < 0 ? -1 : (peak - rss_before) * 1e3 / state.range(0);
}

BENCHMARK_TEMPLATE(BM_WriteMeasurementJson, WriteAsSaveMeasurement)
    ->Arg(100000)
    ->Arg(1000000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK_TEMPLATE(BM_WriteMeasurementJson, WriteDelegatingSmallMessages)
    ->Arg(100000)
    ->Arg(1000000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK_TEMPLATE(BM_WriteMeasurementJson, WritePerTopLevelField)
    ->Arg(100000)
    ->Arg(1000000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace roastcoffea
