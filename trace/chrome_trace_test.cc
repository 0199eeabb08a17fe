#include "trace/chrome_trace.h"

#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "trace/trace_test_chunks.h"

namespace roastcoffea {
namespace {

using ::google::protobuf::Struct;
using ::google::protobuf::Value;
using ::testing::HasSubstr;

constexpr auto Chunk = testing_instrumentation::TraceChunk;

Struct Parse(const std::string& json) {
  Struct parsed;
  const auto status = google::protobuf::util::JsonStringToMessage(json, &parsed);
  EXPECT_TRUE(status.ok()) << status.ToString() << "\n" << json;
  return parsed;
}

// The "X" (complete) events of a parsed trace.
std::vector<const Struct*> Slices(const Struct& trace) {
  std::vector<const Struct*> slices;
  for (const Value& event : trace.fields().at("traceEvents").list_value().values()) {
    if (event.struct_value().fields().at("ph").string_value() == "X") {
      slices.push_back(&event.struct_value());
    }
  }
  return slices;
}

double Number(const Struct& event, const std::string& key) {
  return event.fields().at(key).number_value();
}
std::string Text(const Struct& event, const std::string& key) {
  return event.fields().at(key).string_value();
}

TEST(ChromeTraceTest, ChunksAndSectionsBecomeNestedSlicesOnTheirThreads) {
  std::vector<v1::ChunkRecord> chunks;
  chunks.push_back(Chunk("host:1", 0, 1'000'000'000, 1'000'050'000));
  v1::SectionSlice* inner = chunks[0].add_slices();  // exit order: inner first
  inner->set_name("select_jets");
  inner->set_start_offset_ns(20'000);
  inner->set_duration_ns(5'000);
  inner->set_depth(1);
  v1::SectionSlice* outer = chunks[0].add_slices();
  outer->set_name("process");
  outer->set_start_offset_ns(10'000);
  outer->set_duration_ns(30'000);
  chunks.push_back(Chunk("host:1", 1, 1'000'010'000, 1'000'020'000));
  chunks.push_back(Chunk("host:2", 0, 1'000'005'000, 1'000'007'000));
  chunks[2].set_status(v1::CHUNK_STATUS_FAILED);
  chunks[2].set_error_text("bad \"basket\"\nat 17\\x");
  chunks[2].set_dropped_slices(4);

  const Struct trace = Parse(ChromeTraceJson(chunks));
  const std::vector<const Struct*> slices = Slices(trace);
  ASSERT_EQ(slices.size(), 5u);
  // First chunk: at the origin, 50 us, on pid 1 / tid 1, then its sections outer first.
  EXPECT_EQ(Text(*slices[0], "name"), "ttbar");
  EXPECT_EQ(Text(*slices[0], "cat"), "chunk");
  EXPECT_DOUBLE_EQ(Number(*slices[0], "ts"), 0.0);
  EXPECT_DOUBLE_EQ(Number(*slices[0], "dur"), 50.0);
  EXPECT_DOUBLE_EQ(Number(*slices[0], "pid"), 1);
  EXPECT_DOUBLE_EQ(Number(*slices[0], "tid"), 1);
  const Struct& args = slices[0]->fields().at("args").struct_value();
  EXPECT_EQ(Text(args, "file"), "root://eos/f.root");
  EXPECT_DOUBLE_EQ(Number(args, "entry_stop"), 1000);
  EXPECT_EQ(Text(args, "status"), "CHUNK_STATUS_OK");
  EXPECT_EQ(Text(*slices[1], "name"), "process");
  EXPECT_DOUBLE_EQ(Number(*slices[1], "ts"), 10.0);
  EXPECT_DOUBLE_EQ(Number(*slices[1], "dur"), 30.0);
  EXPECT_EQ(Text(*slices[2], "name"), "select_jets");
  EXPECT_DOUBLE_EQ(Number(*slices[2], "ts"), 20.0);
  EXPECT_DOUBLE_EQ(Number(*slices[2], "tid"), 1);
  // Second thread of the same worker, and a second worker as a second process.
  EXPECT_DOUBLE_EQ(Number(*slices[3], "pid"), 1);
  EXPECT_DOUBLE_EQ(Number(*slices[3], "tid"), 2);
  EXPECT_DOUBLE_EQ(Number(*slices[4], "pid"), 2);
  const Struct& failed = slices[4]->fields().at("args").struct_value();
  EXPECT_EQ(Text(failed, "error_text"), "bad \"basket\"\nat 17\\x");
  EXPECT_DOUBLE_EQ(Number(failed, "dropped_slices"), 4);

  // Process and thread names for the UI.
  int names = 0;
  for (const Value& event : trace.fields().at("traceEvents").list_value().values()) {
    if (event.struct_value().fields().at("ph").string_value() == "M") ++names;
  }
  EXPECT_EQ(names, 2 + 3);  // two workers, three (worker, thread) tracks
}

TEST(ChromeTraceTest, NoChunksIsAnEmptyValidTrace) {
  const Struct trace = Parse(ChromeTraceJson(std::vector<v1::ChunkRecord>{}));
  EXPECT_EQ(trace.fields().at("traceEvents").list_value().values_size(), 0);
}

TEST(ChromeTraceTest, WritesTheFileAndNamesAPathItCannotWrite) {
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> chunks;
  *chunks.Add() = Chunk("w", 0, 5, 10);
  const std::string path = std::string(getenv("TEST_TMPDIR")) + "/trace.json";
  ASSERT_TRUE(WriteChromeTrace(chunks, path).ok());
  std::ifstream file(path);
  std::stringstream contents;
  contents << file.rdbuf();
  EXPECT_EQ(contents.str(), ChromeTraceJson(chunks));

  const absl::Status status = WriteChromeTrace(chunks, "/nonexistent-dir/trace.json");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("/nonexistent-dir/trace.json"));
}

// Counter ("C") events of a parsed trace, by name: (ts, value of `unit`) pairs.
std::map<std::string, std::vector<std::pair<double, double>>> Counters(const Struct& trace) {
  std::map<std::string, std::vector<std::pair<double, double>>> counters;
  for (const Value& event : trace.fields().at("traceEvents").list_value().values()) {
    const Struct& fields = event.struct_value();
    if (fields.fields().at("ph").string_value() != "C") continue;
    const Struct& args = fields.fields().at("args").struct_value();
    EXPECT_EQ(args.fields().size(), 1u);
    for (const auto& [unit, value] : args.fields()) {
      counters[Text(fields, "name") + " " + unit].emplace_back(Number(fields, "ts"),
                                                               value.number_value());
    }
  }
  return counters;
}

TEST(ChromeTraceTest, MeasurementAddsCountersRunMetadataAndChunkValues) {
  const Struct trace = Parse(ChromeTraceJson(testing_instrumentation::TraceMeasurement()));
  // Counters beside the slices; the origin is the earliest event (the run start, 1 s).
  const auto counters = Counters(trace);
  ASSERT_EQ(counters.size(), 4u);
  EXPECT_EQ(counters.at("host:1/thread-0 CPU %"),
            (std::vector<std::pair<double, double>>{{0, 50}, {1e6, 100}}));
  EXPECT_EQ(counters.at("host:1/thread-1 CPU %"),
            (std::vector<std::pair<double, double>>{{0, 25}, {1e6, 75}}));
  EXPECT_EQ(counters.at("RSS bytes"),  // once for the process its threads share
            (std::vector<std::pair<double, double>>{{0, 1000}, {1e6, 2000}}));
  EXPECT_EQ(counters.at("queued chunks"),
            (std::vector<std::pair<double, double>>{{0, 3}, {1e6, 1}}));
  // Run metadata: in otherData, and as the arguments of a run slice over the run.
  const Struct& other = trace.fields().at("otherData").struct_value();
  EXPECT_EQ(Text(other, "name"), "r1");
  EXPECT_EQ(Text(other, "command_line"), "collect --threads=2");
  EXPECT_EQ(Text(other, "config.threads"), "2");
  const std::vector<const Struct*> slices = Slices(trace);
  ASSERT_EQ(slices.size(), 3u);  // the run, two chunks
  EXPECT_EQ(Text(*slices[0], "name"), "run r1");
  EXPECT_EQ(Number(*slices[0], "dur"), 2e6);
  EXPECT_EQ(Text(slices[0]->fields().at("args").struct_value(), "backend"), "threadpool");
  // Chunk values; memory not measured (0) is left out.
  const Struct& first = slices[1]->fields().at("args").struct_value();
  EXPECT_EQ(Number(first, "cpu_seconds"), 0.25);
  EXPECT_EQ(Number(first, "run_queue_wait_seconds"), 0.125);
  EXPECT_EQ(Number(first, "memory_peak_bytes"), 2000);
  EXPECT_EQ(Number(first, "compressed_bytes_read"), 4096);
  const Struct& second = slices[2]->fields().at("args").struct_value();
  EXPECT_EQ(second.fields().count("memory_peak_bytes"), 0u);
  EXPECT_EQ(second.fields().count("run_queue_wait_seconds"), 0u);
  // Threads are named as the tables name them.
  std::vector<std::string> thread_names;
  for (const Value& event : trace.fields().at("traceEvents").list_value().values()) {
    const Struct& fields = event.struct_value();
    if (Text(fields, "ph") == "M" && Text(fields, "name") == "thread_name") {
      thread_names.push_back(Text(fields.fields().at("args").struct_value(), "name"));
    }
  }
  EXPECT_EQ(thread_names, (std::vector<std::string>{"run", "host:1/thread-0", "host:1/thread-1"}));
}

TEST(ChromeTraceTest, HostileRunTimesFallBackToTheChunks) {
  v1::Measurement measurement = testing_instrumentation::TraceMeasurement();
  measurement.mutable_metadata()->mutable_start_time()->set_seconds(
      std::numeric_limits<int64_t>::max());
  const Struct trace = Parse(ChromeTraceJson(measurement));
  const std::vector<const Struct*> slices = Slices(trace);
  ASSERT_FALSE(slices.empty());
  // The run slice spans the chunks and series instead: 1 s to 2 s.
  EXPECT_EQ(Text(*slices[0], "name"), "run r1");
  EXPECT_EQ(Number(*slices[0], "dur"), 1e6);
}

}  // namespace
}  // namespace roastcoffea
