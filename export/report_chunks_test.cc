#include "export/report_chunks.h"

#include <string>
#include <vector>

#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

v1::ChunkRecord Record(int64_t start, const std::string& dataset, bool failed) {
  v1::ChunkRecord record;
  record.set_start_unix_ns(start);
  record.set_end_unix_ns(start + 10);
  record.set_dataset(dataset);
  record.set_worker("w1");
  record.set_duration_seconds(1.5);
  record.set_events(100);
  record.set_compressed_bytes_read(7);
  record.set_uncompressed_bytes_read(9);
  record.set_accessed_bytes(5);
  record.add_accessed_branches("a");
  record.add_accessed_branches("b");
  if (failed) record.set_status(v1::CHUNK_STATUS_FAILED);
  return record;
}

TEST(ReportChunksTest, KeepsTheNumbersThePlotsReadAndInternsNames) {
  ReportChunks chunks;
  chunks.Add(Record(100, "ttbar", false));
  chunks.Add(Record(200, "zjets", true));
  chunks.Add(Record(300, "ttbar", false));
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_FALSE(chunks.failed(0));
  EXPECT_TRUE(chunks.failed(1));
  EXPECT_EQ(chunks.dataset(2), "ttbar");
  EXPECT_EQ(chunks.dataset(1), "zjets");
  EXPECT_EQ(chunks.timeline().dataset_names().size(), 2u);
  EXPECT_EQ(chunks.timeline().worker_names().size(), 1u);
  EXPECT_EQ(chunks.accessed_branches(0), 2);
  EXPECT_EQ(chunks.compressed_bytes_read(0), 7);
  EXPECT_EQ(chunks.uncompressed_bytes_read(0), 9);
  EXPECT_EQ(chunks.accessed_bytes(0), 5);
  EXPECT_EQ(chunks.events(0), 100);
  EXPECT_DOUBLE_EQ(chunks.duration_seconds(0), 1.5);
  EXPECT_EQ(chunks.timeline().chunks()[2].start_unix_ns, 300);
  ASSERT_NE(chunks.record(1), nullptr);
  EXPECT_EQ(chunks.record(1)->dataset(), "zjets");
}

TEST(ReportChunksTest, WholeRecordsOnlyForTimedChunksUpToTheGanttLimit) {
  ReportChunks chunks;
  chunks.Add(Record(0, "untimed", false));  // no start: never drawn
  for (size_t i = 0; i < kMaxGanttChunks; ++i) chunks.Add(Record(1000 + i, "d", false));
  EXPECT_EQ(chunks.record(0), nullptr);
  ASSERT_NE(chunks.record(kMaxGanttChunks), nullptr);
  EXPECT_EQ(chunks.record(kMaxGanttChunks)->start_unix_ns(),
            static_cast<int64_t>(1000 + kMaxGanttChunks - 1));
  chunks.Add(Record(5, "d", false));  // one timed chunk too many: drawn in time bins instead
  EXPECT_EQ(chunks.record(1), nullptr);
  EXPECT_EQ(chunks.size(), kMaxGanttChunks + 2);
}

// What a record carries beyond the fields the report reads: sections, file metadata, names.
v1::ChunkRecord RichRecord(int64_t start, const std::string& worker, bool failed) {
  v1::ChunkRecord record = Record(start, worker == "w2" ? "zjets" : "ttbar", failed);
  record.set_worker(worker);
  record.set_thread_index(3);
  record.set_file("root://eos/store/file.root");
  record.set_uuid("u-1");
  record.set_cpu_seconds(0.25);
  record.set_task_id("17");
  record.add_retried_task_ids("16");
  record.set_error_text(failed ? "boom" : "");
  record.set_end_unix_ns(start + 1'500'000'000);
  record.set_compressed_bytes_read(1'234'567'890'123);
  record.set_events(-5);  // negative: a ten-byte varint
  v1::SectionRecord& section = *record.add_sections();
  section.set_name("jets");
  section.set_duration_seconds(0.21);
  record.mutable_file_metadata()->set_total_branches(1200);
  record.set_run_queue_wait_seconds(0.01);
  return record;
}

std::string Serialized(const v1::ChunkRecord& record) {
  std::string bytes;
  EXPECT_TRUE(record.SerializeToString(&bytes));
  return bytes;
}

// Record `i` of `a` and of `b` read the same, the whole record too when kept.
void ExpectSameChunk(const ReportChunks& a, const ReportChunks& b, size_t i) {
  ASSERT_LT(i, a.size());
  ASSERT_LT(i, b.size());
  EXPECT_EQ(a.failed(i), b.failed(i)) << i;
  EXPECT_EQ(a.duration_seconds(i), b.duration_seconds(i)) << i;
  EXPECT_EQ(a.events(i), b.events(i)) << i;
  EXPECT_EQ(a.compressed_bytes_read(i), b.compressed_bytes_read(i)) << i;
  EXPECT_EQ(a.uncompressed_bytes_read(i), b.uncompressed_bytes_read(i)) << i;
  EXPECT_EQ(a.accessed_bytes(i), b.accessed_bytes(i)) << i;
  EXPECT_EQ(a.accessed_branches(i), b.accessed_branches(i)) << i;
  EXPECT_EQ(a.dataset(i), b.dataset(i)) << i;
  const TimelineChunks::Chunk& x = a.timeline().chunks()[i];
  const TimelineChunks::Chunk& y = b.timeline().chunks()[i];
  EXPECT_EQ(x.start_unix_ns, y.start_unix_ns) << i;
  EXPECT_EQ(x.end_unix_ns, y.end_unix_ns) << i;
  EXPECT_EQ(x.thread_index, y.thread_index) << i;
  EXPECT_EQ(a.timeline().worker_names()[x.worker], b.timeline().worker_names()[y.worker]) << i;
  ASSERT_EQ(a.record(i) == nullptr, b.record(i) == nullptr) << i;
  if (a.record(i) != nullptr) {
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*a.record(i), *b.record(i)))
        << i;
  }
}

TEST(ReportChunksTest, SerializedRecordsReadAsWholeOnes) {
  const std::vector<v1::ChunkRecord> records = {
      RichRecord(100, "w1", false), RichRecord(200, "w2", true), Record(0, "untimed", false),
      RichRecord(300, "w1", false), v1::ChunkRecord()};
  ReportChunks whole, serialized;
  for (const v1::ChunkRecord& record : records) {
    whole.Add(record);
    ASSERT_TRUE(serialized.AddSerialized(Serialized(record)));
  }
  ASSERT_EQ(serialized.size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) ExpectSameChunk(whole, serialized, i);
  EXPECT_EQ(serialized.events(0), -5);
  EXPECT_EQ(serialized.compressed_bytes_read(0), 1'234'567'890'123);
  EXPECT_TRUE(serialized.failed(1));
  EXPECT_EQ(serialized.timeline().worker_names().size(), 3u);  // w1, w2, and "" of the empty
}

// Fields given twice (two records' bytes one after the other, as protobuf merges them): the last
// value, every accessed branch, the last name.
TEST(ReportChunksTest, FieldsGivenTwiceCountAsProtobufMergesThem) {
  const std::string bytes =
      Serialized(RichRecord(100, "w1", true)) + Serialized(RichRecord(900, "w2", false));
  v1::ChunkRecord merged;
  ASSERT_TRUE(merged.ParseFromString(bytes));
  ReportChunks whole, serialized;
  whole.Add(merged);
  ASSERT_TRUE(serialized.AddSerialized(bytes));
  ExpectSameChunk(whole, serialized, 0);
  EXPECT_EQ(serialized.accessed_branches(0), 4);
  EXPECT_EQ(serialized.dataset(0), "zjets");
  EXPECT_TRUE(serialized.failed(0));  // FAILED, then the default: not written, not merged
}

// A field of another wire type than its number's is kept apart by protobuf (unknown): the value
// stays; a group (never written by us) goes to protobuf's parser.
TEST(ReportChunksTest, FieldsOfAnotherWireTypeAndGroupsReadAsProtobufReadsThem) {
  const std::string base = Serialized(RichRecord(100, "w1", false));
  const std::vector<std::string> odd = {
      base + std::string("\x31\x01\x02\x03\x04\x05\x06\x07\x08", 9),  // events as fixed64
      base + std::string("\x4a\x01\x07", 3),                          // duration as bytes
      base + std::string("\x88\x01\x05", 3),                          // worker (17) as a varint
      base + std::string("\xb2\x01\x01\x08", 4),                      // accessed branch 22 as bytes
      base + std::string("\xb0\x01\x05", 3),              // accessed branch 22 as a varint
      base + std::string("\x9b\x06\x08\x01\x9c\x06", 6),  // a group, field 99
      base + std::string("\x9d\x06\x01\x02\x03\x04", 6),  // fixed32, field 99
  };
  for (size_t i = 0; i < odd.size(); ++i) {
    v1::ChunkRecord parsed;
    ASSERT_TRUE(parsed.ParseFromString(odd[i])) << i;
    ReportChunks whole, serialized;
    whole.Add(parsed);
    ASSERT_TRUE(serialized.AddSerialized(odd[i])) << i;
    ExpectSameChunk(whole, serialized, 0);
  }
}

// What protobuf refuses is refused: cut short, a varint over ten bytes, field number 0, wire
// types 6 and 7, a name that is not UTF-8.
TEST(ReportChunksTest, BytesProtobufRefusesAreRefused) {
  const std::string base = Serialized(RichRecord(100, "w1", false));
  v1::ChunkRecord bad_name = RichRecord(100, "w1", false);
  bad_name.set_worker("w\xff");  // setters do not check UTF-8; parsing does
  std::string not_utf8;
  bad_name.SerializePartialToString(&not_utf8);
  const std::vector<std::string> bad = {
      base.substr(0, base.size() - 1),
      base + std::string("\x30\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12),
      base + std::string("\x98\x06\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 13),
      base + std::string("\x98\x06\xff", 3),  // a varint not read, cut short
      base + std::string("\x02\x00", 2),
      base + std::string("\x36\x00", 2),
      base + std::string("\x37\x00", 2),
      not_utf8,
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    v1::ChunkRecord parsed;
    EXPECT_FALSE(parsed.ParseFromString(bad[i])) << i;
    ReportChunks chunks;
    EXPECT_FALSE(chunks.AddSerialized(bad[i])) << i;
  }
}

// A tag is read as protobuf reads it: a varint of at most five bytes whose value is taken
// modulo 2^32 (a fifth byte's high bits dropped), so that `collect report` reads every record
// `collect show` reads, and refuses a tag of six bytes as protobuf does.
TEST(ReportChunksTest, TagsOfFiveBytesReadAsProtobufReadsThem) {
  const std::string base = Serialized(RichRecord(100, "w1", false));
  const std::vector<std::string> read = {
      base + std::string("\xb0\x80\x80\x80\x10\x07", 6),  // events (6): 0x30 + 2^32
      base + std::string("\x98\x86\x80\x80\x70\x05", 6),  // field 99, high bits set
  };
  for (size_t i = 0; i < read.size(); ++i) {
    v1::ChunkRecord parsed;
    ASSERT_TRUE(parsed.ParseFromString(read[i])) << i;
    ReportChunks whole, serialized;
    whole.Add(parsed);
    ASSERT_TRUE(serialized.AddSerialized(read[i])) << i;
    ExpectSameChunk(whole, serialized, 0);
  }
  ReportChunks serialized;
  ASSERT_TRUE(serialized.AddSerialized(read[0]));
  EXPECT_EQ(serialized.events(0), 7);
  const std::string six_bytes = base + std::string("\xb0\x80\x80\x80\x80\x00\x07", 7);
  v1::ChunkRecord parsed;
  EXPECT_FALSE(parsed.ParseFromString(six_bytes));
  EXPECT_FALSE(serialized.AddSerialized(six_bytes));
}

// Many workers interleaved, names alike but for their start (a cache of recent names by their
// end must not mix them up).
TEST(ReportChunksTest, InterleavedWorkersKeepTheirNames) {
  ReportChunks chunks;
  std::vector<std::string> names;
  for (int i = 0; i < 600; ++i) {
    names.push_back(std::to_string(i) + "-worker.example.org:9123");
    names.push_back("worker" + std::to_string(i));
  }
  for (int round = 0; round < 3; ++round) {
    for (const std::string& name : names) {
      v1::ChunkRecord record = Record(100, "d" + std::to_string(name.size() % 7), false);
      record.set_worker(name);
      ASSERT_TRUE(chunks.AddSerialized(Serialized(record)));
    }
  }
  ASSERT_EQ(chunks.size(), 3 * names.size());
  EXPECT_EQ(chunks.timeline().worker_names().size(), names.size());
  for (size_t i = 0; i < chunks.size(); ++i) {
    const TimelineChunks::Chunk& chunk = chunks.timeline().chunks()[i];
    ASSERT_EQ(chunks.timeline().worker_names()[chunk.worker], names[i % names.size()]) << i;
    ASSERT_EQ(chunks.dataset(i), "d" + std::to_string(names[i % names.size()].size() % 7)) << i;
  }
}

}  // namespace
}  // namespace roastcoffea
