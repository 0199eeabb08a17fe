#include "trace/perfetto_trace.h"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trace/perfetto_trace.pb.h"
#include "trace/trace_test_chunks.h"

namespace roastcoffea {
namespace {

namespace pf = ::roastcoffea::perfetto;
using ::testing::HasSubstr;

constexpr auto Chunk = testing_instrumentation::TraceChunk;

void AddSlice(v1::ChunkRecord& chunk, const std::string& name, int64_t offset_ns,
              int64_t duration_ns) {
  v1::SectionSlice* slice = chunk.add_slices();
  slice->set_name(name);
  slice->set_start_offset_ns(offset_ns);
  slice->set_duration_ns(duration_ns);
}

std::string TempPath(const std::string& name) {
  return std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
}

std::string ReadAll(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

pf::Trace WriteAndParse(const std::vector<v1::ChunkRecord>& chunks) {
  const std::string path = TempPath("trace.pftrace");
  const absl::Status status = WritePerfettoTrace(chunks, path);
  EXPECT_TRUE(status.ok()) << status;
  pf::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(ReadAll(path)));
  return trace;
}

// A slice rebuilt from BEGIN/END pairs, names and annotations resolved through the interned
// data seen so far (as a reader of the sequence would).
struct Slice {
  uint64_t track = 0;
  std::string name;
  std::string category;
  uint64_t begin_ns = 0;
  uint64_t end_ns = 0;
  int depth = 0;
  std::map<std::string, std::string> strings;
  std::map<std::string, int64_t> ints;
};

struct Decoded {
  std::vector<Slice> slices;  // in BEGIN order
  std::map<uint64_t, pf::TrackDescriptor> tracks;
  std::map<std::string, int> name_definitions;  // how often each event name was interned
};

Decoded Decode(const pf::Trace& trace) {
  Decoded decoded;
  std::map<uint64_t, std::string> names, categories, annotation_names;
  std::map<uint64_t, std::vector<size_t>> open;  // track -> indexes into slices
  for (const pf::TracePacket& packet : trace.packet()) {
    for (const pf::EventName& entry : packet.interned_data().event_names()) {
      EXPECT_EQ(names.count(entry.iid()), 0u) << "iid redefined: " << entry.iid();
      names[entry.iid()] = entry.name();
      ++decoded.name_definitions[entry.name()];
    }
    for (const pf::EventCategory& entry : packet.interned_data().event_categories()) {
      categories[entry.iid()] = entry.name();
    }
    for (const pf::DebugAnnotationName& entry : packet.interned_data().debug_annotation_names()) {
      annotation_names[entry.iid()] = entry.name();
    }
    if (packet.has_track_descriptor()) {
      EXPECT_TRUE(
          decoded.tracks.emplace(packet.track_descriptor().uuid(), packet.track_descriptor())
              .second);
    }
    if (!packet.has_track_event()) continue;
    const pf::TrackEvent& event = packet.track_event();
    EXPECT_EQ(decoded.tracks.count(event.track_uuid()), 1u) << "track described before use";
    std::vector<size_t>& stack = open[event.track_uuid()];
    if (event.type() == pf::TrackEvent::TYPE_SLICE_BEGIN) {
      Slice slice;
      slice.track = event.track_uuid();
      EXPECT_TRUE(event.has_name_iid());
      EXPECT_EQ(names.count(event.name_iid()), 1u) << "name interned before use";
      slice.name = names[event.name_iid()];
      if (event.category_iids_size() == 1) slice.category = categories[event.category_iids(0)];
      slice.begin_ns = packet.timestamp();
      slice.depth = static_cast<int>(stack.size());
      for (const pf::DebugAnnotation& annotation : event.debug_annotations()) {
        const std::string key = annotation_names.at(annotation.name_iid());
        if (annotation.has_string_value()) slice.strings[key] = annotation.string_value();
        if (annotation.has_int_value()) slice.ints[key] = annotation.int_value();
      }
      stack.push_back(decoded.slices.size());
      decoded.slices.push_back(slice);
    } else {
      EXPECT_EQ(event.type(), pf::TrackEvent::TYPE_SLICE_END);
      EXPECT_FALSE(stack.empty()) << "END without BEGIN";
      if (stack.empty()) continue;
      Slice& slice = decoded.slices[stack.back()];
      stack.pop_back();
      slice.end_ns = packet.timestamp();
      EXPECT_GE(slice.end_ns, slice.begin_ns) << slice.name;
    }
  }
  for (const auto& [track, stack] : open) EXPECT_TRUE(stack.empty()) << "unclosed on " << track;
  return decoded;
}

TEST(PerfettoTraceTest, ChunksAndSectionsBecomeNestedSlicesOnTheirThreads) {
  std::vector<v1::ChunkRecord> chunks;
  chunks.push_back(Chunk("host:1", 0, 1'000'000'000, 1'000'050'000));
  AddSlice(chunks[0], "select_jets", 20'000, 5'000);  // exit order: inner first
  AddSlice(chunks[0], "process", 10'000, 30'000);
  chunks.push_back(Chunk("host:1", 1, 1'000'010'000, 1'000'020'000));
  chunks.push_back(Chunk("host:2", 0, 1'000'005'000, 1'000'007'000));
  chunks[2].set_status(v1::CHUNK_STATUS_FAILED);
  chunks[2].set_error_text("bad basket");
  chunks[2].set_dropped_slices(4);

  const pf::Trace trace = WriteAndParse(chunks);
  const Decoded decoded = Decode(trace);

  // Tracks: two workers as processes, three (worker, thread) thread tracks.
  ASSERT_EQ(decoded.tracks.size(), 5u);
  const pf::TrackDescriptor& host1 = decoded.tracks.at(1);
  EXPECT_EQ(host1.process().pid(), 1);
  EXPECT_EQ(host1.process().process_name(), "host:1");
  const pf::TrackDescriptor& host1_thread0 = decoded.tracks.at(2);
  EXPECT_EQ(host1_thread0.parent_uuid(), 1u);
  EXPECT_EQ(host1_thread0.thread().pid(), 1);
  EXPECT_EQ(host1_thread0.thread().tid(), 2);
  EXPECT_EQ(host1_thread0.thread().thread_name(), "host:1/thread-0");
  const pf::TrackDescriptor& host1_thread1 = decoded.tracks.at(3);
  EXPECT_EQ(host1_thread1.thread().pid(), 1);
  EXPECT_EQ(host1_thread1.thread().tid(), 3);
  EXPECT_EQ(host1_thread1.thread().thread_name(), "host:1/thread-1");
  EXPECT_EQ(decoded.tracks.at(4).process().process_name(), "host:2");
  EXPECT_EQ(decoded.tracks.at(5).thread().pid(), 4);
  EXPECT_EQ(decoded.tracks.at(5).thread().tid(), 5);
  EXPECT_EQ(decoded.tracks.at(5).thread().thread_name(), "host:2/thread-0");

  ASSERT_EQ(decoded.slices.size(), 5u);
  // First chunk on host:1 thread 0, its sections nested inside, outer first.
  const Slice& chunk = decoded.slices[0];
  EXPECT_EQ(chunk.track, 2u);
  EXPECT_EQ(chunk.name, "ttbar");
  EXPECT_EQ(chunk.category, "chunk");
  EXPECT_EQ(chunk.begin_ns, 1'000'000'000u);
  EXPECT_EQ(chunk.end_ns, 1'000'050'000u);
  EXPECT_EQ(chunk.depth, 0);
  EXPECT_EQ(chunk.strings.at("uuid"), "u-1000000000");
  EXPECT_EQ(chunk.strings.at("file"), "root://eos/f.root");
  EXPECT_EQ(chunk.strings.at("status"), "CHUNK_STATUS_OK");
  EXPECT_EQ(chunk.ints.at("entry_start"), 0);
  EXPECT_EQ(chunk.ints.at("entry_stop"), 1000);
  EXPECT_EQ(chunk.ints.at("events"), 1000);
  EXPECT_EQ(chunk.strings.count("error_text"), 0u);

  const Slice& process = decoded.slices[1];
  EXPECT_EQ(process.track, 2u);
  EXPECT_EQ(process.name, "process");
  EXPECT_EQ(process.category, "section");
  EXPECT_EQ(process.begin_ns, 1'000'010'000u);
  EXPECT_EQ(process.end_ns, 1'000'040'000u);
  EXPECT_EQ(process.depth, 1);
  const Slice& select = decoded.slices[2];
  EXPECT_EQ(select.name, "select_jets");
  EXPECT_EQ(select.begin_ns, 1'000'020'000u);
  EXPECT_EQ(select.end_ns, 1'000'025'000u);
  EXPECT_EQ(select.depth, 2);

  EXPECT_EQ(decoded.slices[3].track, 3u);
  EXPECT_EQ(decoded.slices[3].begin_ns, 1'000'010'000u);
  EXPECT_EQ(decoded.slices[3].end_ns, 1'000'020'000u);
  const Slice& failed = decoded.slices[4];
  EXPECT_EQ(failed.track, 5u);
  EXPECT_EQ(failed.strings.at("status"), "CHUNK_STATUS_FAILED");
  EXPECT_EQ(failed.strings.at("error_text"), "bad basket");
  EXPECT_EQ(failed.ints.at("dropped_slices"), 4);

  // Each name is interned once, however often it is used.
  EXPECT_EQ(decoded.name_definitions.at("ttbar"), 1);
  EXPECT_EQ(decoded.name_definitions.at("process"), 1);
}

TEST(PerfettoTraceTest, PacketsAreOneSequenceThatClearsThenNeedsIncrementalState) {
  std::vector<v1::ChunkRecord> chunks;
  chunks.push_back(Chunk("w", 0, 100, 200));
  AddSlice(chunks[0], "read", 10, 20);
  chunks.push_back(Chunk("w", 0, 300, 400));
  const pf::Trace trace = WriteAndParse(chunks);
  ASSERT_GT(trace.packet_size(), 0);
  EXPECT_EQ(trace.packet(0).sequence_flags(),
            static_cast<uint32_t>(pf::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED));
  EXPECT_TRUE(trace.packet(0).first_packet_on_sequence());
  int events = 0;
  for (int i = 0; i < trace.packet_size(); ++i) {
    const pf::TracePacket& packet = trace.packet(i);
    EXPECT_EQ(packet.trusted_packet_sequence_id(), 1u);
    if (i > 0) {
      EXPECT_EQ(packet.sequence_flags() & pf::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED, 0u);
      EXPECT_FALSE(packet.first_packet_on_sequence());
    }
    if (packet.has_track_event()) {
      ++events;
      EXPECT_NE(packet.sequence_flags() & pf::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE, 0u);
    }
  }
  EXPECT_EQ(events, 2 * 3);  // BEGIN and END for two chunks and one section
}

TEST(PerfettoTraceTest, SiblingSectionsFollowEachOtherAndOverhangIsClamped) {
  std::vector<v1::ChunkRecord> chunks;
  chunks.push_back(Chunk("w", 0, 1'000, 2'000));
  AddSlice(chunks[0], "b", 300, 720);        // ends 20 ns after the chunk: clock rounding
  AddSlice(chunks[0], "a", 0, 300);          // ends exactly where b starts
  AddSlice(chunks[0], "a_inner", 100, 250);  // sticks out of a by 50 ns
  const Decoded decoded = Decode(WriteAndParse(chunks));
  ASSERT_EQ(decoded.slices.size(), 4u);
  EXPECT_EQ(decoded.slices[1].name, "a");
  EXPECT_EQ(decoded.slices[1].depth, 1);
  EXPECT_EQ(decoded.slices[1].begin_ns, 1'000u);
  EXPECT_EQ(decoded.slices[1].end_ns, 1'300u);
  EXPECT_EQ(decoded.slices[2].name, "a_inner");
  EXPECT_EQ(decoded.slices[2].depth, 2);
  EXPECT_EQ(decoded.slices[2].end_ns, 1'300u);
  EXPECT_EQ(decoded.slices[3].name, "b");
  EXPECT_EQ(decoded.slices[3].depth, 1);
  EXPECT_EQ(decoded.slices[3].begin_ns, 1'300u);
  EXPECT_EQ(decoded.slices[3].end_ns, 2'000u);
}

TEST(PerfettoTraceTest, NoChunksIsAnEmptyValidTrace) {
  const pf::Trace trace = WriteAndParse({});
  EXPECT_EQ(trace.packet_size(), 0);
}

TEST(PerfettoTraceTest, LargeTraceStreamsAcrossBufferFlushes) {
  std::vector<v1::ChunkRecord> chunks;
  for (int i = 0; i < 2'000; ++i) {
    chunks.push_back(Chunk("w", i % 4, i * 10'000, i * 10'000 + 9'000));
    for (int s = 0; s < 20; ++s) AddSlice(chunks.back(), "section", s * 400, 300);
  }
  const Decoded decoded = Decode(WriteAndParse(chunks));
  EXPECT_EQ(decoded.slices.size(), 2'000u * 21);
  EXPECT_EQ(decoded.name_definitions.at("section"), 1);
  EXPECT_EQ(decoded.slices.back().end_ns, 1'999u * 10'000 + 19 * 400 + 300);
}

TEST(PerfettoTraceTest, BothOverloadsWriteTheSameBytesAndReplaceTheFile) {
  std::vector<v1::ChunkRecord> vector = {Chunk("w", 0, 5, 10), Chunk("v", 2, 7, 9)};
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> repeated(vector.begin(), vector.end());
  const std::string a = TempPath("a.pftrace"), b = TempPath("b.pftrace");
  { std::ofstream(b) << "old contents that are longer than the new trace ....................."; }
  ASSERT_TRUE(WritePerfettoTrace(vector, a).ok());
  ASSERT_TRUE(WritePerfettoTrace(repeated, b).ok());
  EXPECT_EQ(ReadAll(a), ReadAll(b));
  // No temporary file left beside it.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::getenv("TEST_TMPDIR"))) {
    if (entry.path().filename().string().rfind("b.pftrace", 0) == 0) ++files;
  }
  EXPECT_EQ(files, 1);
}

TEST(PerfettoTraceTest, AnUnwritablePathIsAnErrorNamingIt) {
  const absl::Status status = WritePerfettoTrace(std::vector<v1::ChunkRecord>{Chunk("w", 0, 5, 10)},
                                                 "/nonexistent-dir/trace.pftrace");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("'/nonexistent-dir/trace.pftrace'"));
}

TEST(PerfettoTraceTest, MeasurementAddsCountersRunMetadataAndChunkValues) {
  const std::string path = TempPath("measurement.pftrace");
  ASSERT_TRUE(WritePerfettoTrace(testing_instrumentation::TraceMeasurement(), path).ok());
  pf::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(ReadAll(path)));
  std::map<uint64_t, pf::TrackDescriptor> tracks;
  std::map<uint64_t, std::string> names, annotation_names;
  std::map<std::string, std::vector<std::pair<uint64_t, double>>> counters;  // by track name
  std::map<std::string, std::map<std::string, pf::DebugAnnotation>> begins;  // by event name
  for (const pf::TracePacket& packet : trace.packet()) {
    for (const pf::EventName& entry : packet.interned_data().event_names()) {
      names[entry.iid()] = entry.name();
    }
    for (const pf::DebugAnnotationName& entry : packet.interned_data().debug_annotation_names()) {
      annotation_names[entry.iid()] = entry.name();
    }
    if (packet.has_track_descriptor()) {
      tracks[packet.track_descriptor().uuid()] = packet.track_descriptor();
    }
    if (!packet.has_track_event()) continue;
    const pf::TrackEvent& event = packet.track_event();
    ASSERT_EQ(tracks.count(event.track_uuid()), 1u) << "track described before use";
    if (event.type() == pf::TrackEvent::TYPE_COUNTER) {
      const pf::TrackDescriptor& track = tracks.at(event.track_uuid());
      EXPECT_TRUE(track.has_counter());
      counters[track.name()].emplace_back(packet.timestamp(), event.double_counter_value());
    } else if (event.type() == pf::TrackEvent::TYPE_SLICE_BEGIN) {
      auto& annotations = begins[names.at(event.name_iid())];
      annotations.clear();  // the last slice of that name
      for (const pf::DebugAnnotation& annotation : event.debug_annotations()) {
        annotations[annotation_names.at(annotation.name_iid())] = annotation;
      }
    }
  }
  ASSERT_EQ(counters.size(), 4u);
  using Points = std::vector<std::pair<uint64_t, double>>;
  EXPECT_EQ(counters.at("host:1/thread-0 CPU %"),
            (Points{{1'000'000'000, 50}, {2'000'000'000, 100}}));
  EXPECT_EQ(counters.at("host:1/thread-1 CPU %"),
            (Points{{1'000'000'000, 25}, {2'000'000'000, 75}}));
  EXPECT_EQ(counters.at("RSS bytes"), (Points{{1'000'000'000, 1000}, {2'000'000'000, 2000}}));
  EXPECT_EQ(counters.at("queued chunks"), (Points{{1'000'000'000, 3}, {2'000'000'000, 1}}));
  // Counter tracks sit under their process: RSS under "host:1", queued chunks under "run".
  std::map<std::string, std::string> parent_process;
  for (const auto& [uuid, track] : tracks) {
    if (!track.has_counter()) continue;
    parent_process[track.name()] = tracks.at(track.parent_uuid()).process().process_name();
  }
  EXPECT_EQ(parent_process.at("RSS bytes"), "host:1");
  EXPECT_EQ(parent_process.at("queued chunks"), "run");
  // The run slice carries the metadata; chunks their measured values.
  ASSERT_EQ(begins.count("run r1"), 1u);
  EXPECT_EQ(begins.at("run r1").at("command_line").string_value(), "collect --threads=2");
  EXPECT_EQ(begins.at("run r1").at("config.threads").string_value(), "2");
  ASSERT_EQ(begins.count("ttbar"), 1u);  // both chunks: the last one's annotations
  const auto& chunk = begins.at("ttbar");
  EXPECT_EQ(chunk.count("memory_peak_bytes"), 0u);  // the second chunk measured no memory
  EXPECT_EQ(chunk.at("cpu_seconds").double_value(), 0.0);
  // Thread tracks are named as the tables name them.
  std::vector<std::string> thread_names;
  for (const auto& [uuid, track] : tracks) {
    if (track.has_thread()) thread_names.push_back(track.thread().thread_name());
  }
  EXPECT_THAT(thread_names,
              ::testing::UnorderedElementsAre("run", "host:1/thread-0", "host:1/thread-1"));
}

TEST(PerfettoTraceTest, FirstChunkCarriesItsMeasuredValues) {
  v1::Measurement measurement = testing_instrumentation::TraceMeasurement();
  measurement.mutable_chunks()->DeleteSubrange(1, 1);
  const std::string path = TempPath("one.pftrace");
  ASSERT_TRUE(WritePerfettoTrace(measurement, path).ok());
  pf::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(ReadAll(path)));
  const Decoded decoded = Decode([&] {
    pf::Trace slices_only;  // Decode reads slices; counters are checked above
    for (const pf::TracePacket& packet : trace.packet()) {
      if (packet.has_track_event() && packet.track_event().type() == pf::TrackEvent::TYPE_COUNTER) {
        continue;
      }
      *slices_only.add_packet() = packet;
    }
    return slices_only;
  }());
  const Slice* chunk = nullptr;
  for (const Slice& slice : decoded.slices) {
    if (slice.name == "ttbar") chunk = &slice;
  }
  ASSERT_NE(chunk, nullptr);
  EXPECT_EQ(chunk->ints.at("memory_peak_bytes"), 2000);
  EXPECT_EQ(chunk->ints.at("uncompressed_bytes_read"), 8192);
  EXPECT_EQ(chunk->ints.at("memory_before_bytes"), 1000);
}

}  // namespace
}  // namespace roastcoffea
