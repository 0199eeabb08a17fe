#include "store/json_stream_writer.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/field_comparator.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"
#include "store/testdata/json_stream_test.pb.h"

namespace roastcoffea {
namespace store_internal {
namespace {

using google::protobuf::Message;
using google::protobuf::util::DefaultFieldComparator;
using google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// Text with everything JSON must escape or may carry raw: quotes, backslashes, every kind of
// control character, HTML-sensitive characters, non-ASCII (2-, 3- and 4-byte UTF-8) and the
// separators and format characters JavaScript mishandles.
const std::string kAwkwardText = absl::StrCat(
    "q\"b\\s/ \b\f\n\r\t", std::string(1, '\0'), "\x01\x1f\x7f <a href='x'>&amp;</a> ",
    "caf\xc3\xa9 \xc2\xad \xe2\x80\xa8 \xe2\x80\xa9 \xef\xbb\xbf \xe6\x97\xa5\xe6\x9c\xac ",
    "\xf0\x9f\x98\x80 \xf3\xa0\x80\x81 \xc2\x85 end");

const std::vector<double> kAwkwardDoubles = {0.0,
                                             -0.0,
                                             0.1,
                                             1.0 / 3.0,
                                             -2.5,
                                             1e-300,
                                             4.9e-324,
                                             1e21,
                                             1e308,
                                             1.7976931348623157e308,
                                             kNaN,
                                             kInfinity,
                                             -kInfinity,
                                             123456789012345678.0,
                                             9007199254740993.0};

struct Output {
  std::string json;
  size_t largest_piece = 0;
  int pieces = 0;
};

Output Stream(const Message& message, const JsonStreamOptions& options) {
  Output output;
  const absl::Status status = WriteMessageJson(message, options, [&](absl::string_view piece) {
    output.json.append(piece.data(), piece.size());
    output.largest_piece = std::max(output.largest_piece, piece.size());
    ++output.pieces;
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
  return output;
}

JsonStreamOptions MeasurementOptions(size_t delegate_below_bytes) {
  JsonStreamOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  options.delegate_below_bytes = delegate_below_bytes;
  return options;
}

// One of the 8 combinations of the three print options (bit 0 whitespace, 1 field names,
// 2 primitive fields), everything printed by the writer itself.
JsonStreamOptions OptionCombination(int bits) {
  JsonStreamOptions options;
  options.add_whitespace = bits & 1;
  options.preserve_proto_field_names = bits & 2;
  options.always_print_primitive_fields = bits & 4;
  options.delegate_below_bytes = 0;
  return options;
}

std::string LibraryJson(const Message& message, const JsonStreamOptions& options) {
  google::protobuf::util::JsonPrintOptions print;
  print.add_whitespace = options.add_whitespace;
  print.preserve_proto_field_names = options.preserve_proto_field_names;
  print.always_print_primitive_fields = options.always_print_primitive_fields;
  std::string json;
  const auto status = google::protobuf::util::MessageToJsonString(message, &json, print);
  EXPECT_TRUE(status.ok()) << status;
  return json;
}

google::protobuf::Value ParseValue(const std::string& json) {
  google::protobuf::Value value;
  const auto status = google::protobuf::util::JsonStringToMessage(json, &value);
  EXPECT_TRUE(status.ok()) << status << " in " << json.substr(0, 2000);
  return value;
}

// Equal as protobuf messages, NaN equal to NaN (a NaN must survive the round trip).
bool EqualWithNaN(const Message& a, const Message& b, std::string* report) {
  DefaultFieldComparator comparator;
  comparator.set_treat_nan_as_equal(true);
  MessageDifferencer differencer;
  differencer.set_field_comparator(&comparator);
  differencer.ReportDifferencesToString(report);
  return differencer.Compare(a, b);
}

// The three checks every message gets: the same JSON value as libprotobuf's, parsing back to
// the original, and the output really streamed in bounded pieces.
template <typename Proto>
void ExpectFaithful(const Proto& original, const JsonStreamOptions& options) {
  SCOPED_TRACE(absl::StrCat("delegate_below_bytes=", options.delegate_below_bytes,
                            " add_whitespace=", options.add_whitespace));
  const Output ours = Stream(original, options);
  const std::string theirs = LibraryJson(original, options);
  std::string report;
  EXPECT_TRUE(EqualWithNaN(ParseValue(ours.json), ParseValue(theirs), &report)) << report;

  Proto parsed;
  const auto status = google::protobuf::util::JsonStringToMessage(ours.json, &parsed);
  ASSERT_TRUE(status.ok()) << status;
  report.clear();
  EXPECT_TRUE(EqualWithNaN(parsed, original, &report)) << report;
}

v1::ChunkRecord AwkwardChunk(int i) {
  v1::ChunkRecord chunk;
  chunk.set_dataset(i % 2 == 0 ? "ttbar" : kAwkwardText);
  chunk.set_file(absl::StrCat("root://eos/file_", i, ".root"));
  chunk.set_entry_start(kInt64Min + i);
  chunk.set_entry_stop(kInt64Max - i);
  // Not -0.0 here: libprotobuf's JSON parser reads "-0" into a singular double as unset (0), so
  // no JSON of it round-trips; repeated doubles keep it (the tracking series hold -0.0).
  const double duration = kAwkwardDoubles[i % kAwkwardDoubles.size()];
  chunk.set_duration_seconds(duration == 0 && std::signbit(duration) ? 0.5 : duration);
  chunk.set_status(i % 3 == 0 ? v1::CHUNK_STATUS_OK : static_cast<v1::ChunkStatus>(42));
  chunk.set_error_text(kAwkwardText);
  chunk.set_attempt(std::numeric_limits<uint32_t>::max());
  // Optional fields set to their default must still be printed; unset ones never.
  if (i % 2 == 0) chunk.set_allocated_bytes(0);
  if (i % 3 == 0) chunk.set_run_queue_wait_seconds(-kInfinity);
  v1::SectionRecord& section = *chunk.add_sections();
  section.set_name(kAwkwardText);
  section.set_kind(static_cast<v1::SectionRecord::Kind>(-7));
  section.set_memory_delta_bytes(kInt64Min);
  section.set_duration_seconds(kNaN);
  chunk.add_accessed_branches("Muon_pt");
  chunk.add_accessed_branches("");
  chunk.mutable_file_metadata()->set_compression_ratio(0.25);
  return chunk;
}

// A measurement with every kind of value the schema holds, and `chunk_infos` ChunkInfo entries
// in metrics (the big part of a real run's measurement).
v1::Measurement AwkwardMeasurement(int chunk_infos) {
  v1::Measurement m;
  v1::MeasurementMetadata& metadata = *m.mutable_metadata();
  metadata.set_schema_version(1);
  metadata.set_name(kAwkwardText);
  metadata.mutable_start_time()->set_seconds(1764000000);
  metadata.mutable_start_time()->set_nanos(123456789);
  metadata.mutable_end_time()->set_seconds(253402300799);  // the last second of year 9999
  metadata.set_elapsed_seconds(kInfinity);
  metadata.add_command_line("collect");
  metadata.add_command_line(kAwkwardText);
  (*metadata.mutable_configuration())["threads"] = "4";
  (*metadata.mutable_configuration())[kAwkwardText] = kAwkwardText;
  (*metadata.mutable_configuration())[""] = "";
  metadata.mutable_host_facts()->set_cgroup_memory_limit_bytes(kInt64Max);
  metadata.mutable_host_facts()->set_steal_seconds(0.0);  // set, though zero
  metadata.mutable_tool_build()->set_optimized(true);
  // analysis_build left unset.

  v1::TrackingData& tracking = *m.mutable_tracking();
  tracking.set_backend("taskvine");
  tracking.set_interval_seconds(kNaN);
  tracking.add_worker_count_time_unix_ns(kInt64Min);
  tracking.add_worker_count_time_unix_ns(0);
  tracking.add_worker_count_time_unix_ns(kInt64Max);
  tracking.add_worker_count(std::numeric_limits<int32_t>::min());
  tracking.add_worker_count(std::numeric_limits<int32_t>::max());
  tracking.set_worker_count_kind(static_cast<v1::SeriesKind>(99));
  for (int w = 0; w < 3; ++w) {
    v1::WorkerSeries& worker = *tracking.add_workers();
    worker.set_worker(absl::StrCat("worker-", w, kAwkwardText));
    worker.set_kind(v1::SERIES_KIND_STEP);
    for (int s = 0; s < 2000; ++s) {
      worker.add_time_unix_ns(int64_t{1764000000} * 1000000000 + s);
      worker.add_memory_bytes(kAwkwardDoubles[(s + w) % kAwkwardDoubles.size()]);
      worker.add_cpu_percent(s * 0.1);
    }
    // The other series stay empty: printed as [].
  }
  tracking.add_gaps();
  // manager left unset.

  for (int i = 0; i < 12; ++i) *m.add_chunks() = AwkwardChunk(i);
  *m.add_rejected_chunks() = AwkwardChunk(99);

  v1::Span& span = *m.add_spans();
  span.set_name(kAwkwardText);
  span.set_kind(v1::SPAN_KIND_COLLECT_WINDOW);
  v1::Span& child = *span.add_workload_spans();
  child.set_name("inner");
  child.add_name_path("held");
  child.add_name_path("inner");
  child.add_workload_spans()->set_kind(static_cast<v1::SpanKind>(1000));

  v1::AggregatedMetrics& metrics = *m.mutable_metrics();
  metrics.mutable_workflow()->set_total_events(kInt64Max);
  metrics.mutable_efficiency()->set_speedup_factor(kNaN);
  metrics.set_findings_evaluated(true);
  v1::ChunkMetrics& chunks = *metrics.mutable_chunks();
  chunks.set_num_chunks(chunk_infos);
  chunks.mutable_duration_seconds()->set_max(kInfinity);
  chunks.set_memory_delta_source(v1::MEMORY_SOURCE_SHARED_PROCESS_RSS);
  for (int i = 0; i < chunk_infos; ++i) {
    v1::ChunkInfo& info = *chunks.add_chunk_info();
    info.set_file(absl::StrCat("root://eos/cms/store/file_", i % 1000, ".root"));
    info.set_entry_start(int64_t{100000} * i);
    info.set_entry_stop(int64_t{100000} * (i + 1));
    info.set_attempt(i % 3);
    info.set_start_unix_ns(int64_t{1764000000} * 1000000000 + i);
    info.set_end_unix_ns(i == 0 ? kInt64Max : int64_t{1764000001} * 1000000000 + i);
    info.set_bytes_read(i == 1 ? kInt64Min : i);
  }
  chunks.add_failed_chunks()->set_uuid(kAwkwardText);

  v1::Profile& profile = *m.add_profiles();
  profile.set_source("threadpool");
  for (int n = 0; n < 500; ++n) {
    v1::ProfileNode& node = *profile.add_nodes();
    node.set_parent(n - 1);
    node.set_frame(n == 0 ? -1 : n);
    node.set_count(n);
    profile.add_frames()->set_function(absl::StrCat("f<", n, ">() \xe2\x80\xa8"));
  }
  m.add_warnings()->set_code("invalid_utf8");
  return m;
}

TEST(WriteMessageJsonTest, MeasurementPrintedByItselfMatchesLibprotobuf) {
  ExpectFaithful(AwkwardMeasurement(3000), MeasurementOptions(0));
}

TEST(WriteMessageJsonTest, MeasurementAtDefaultThresholdMatchesLibprotobuf) {
  ExpectFaithful(AwkwardMeasurement(3000),
                 MeasurementOptions(JsonStreamOptions().delegate_below_bytes));
}

TEST(WriteMessageJsonTest, EmptyMeasurementMatchesLibprotobuf) {
  ExpectFaithful(v1::Measurement(), MeasurementOptions(0));
  ExpectFaithful(v1::Measurement(), MeasurementOptions(1 << 16));
}

TEST(WriteMessageJsonTest, EveryOptionCombinationMatchesLibprotobuf) {
  const v1::Measurement m = AwkwardMeasurement(50);
  for (int bits = 0; bits < 8; ++bits) {
    JsonStreamOptions options = OptionCombination(bits);
    ExpectFaithful(m, options);
  }
}

// Where two long texts first differ, with context (gtest's diff of megabytes takes minutes).
void ExpectSameText(const std::string& ours, const std::string& theirs) {
  size_t at = 0;
  while (at < ours.size() && at < theirs.size() && ours[at] == theirs[at]) ++at;
  if (at == ours.size() && at == theirs.size()) return;
  const size_t from = at < 200 ? 0 : at - 200;
  ADD_FAILURE() << "the texts differ at byte " << at << " (sizes " << ours.size() << " and "
                << theirs.size() << ")\nours:   " << ours.substr(from, 400)
                << "\ntheirs: " << theirs.substr(from, 400);
}

// Byte for byte what libprotobuf prints, so that measurement.json reads the same whichever
// printer wrote a part of it (maps excepted: libprotobuf's map order is its hash order).
TEST(WriteMessageJsonTest, SameBytesAsLibprotobufWithoutMaps) {
  v1::Measurement m = AwkwardMeasurement(200);
  m.mutable_metadata()->clear_configuration();
  for (int bits = 0; bits < 8; ++bits) {
    JsonStreamOptions options = OptionCombination(bits);
    SCOPED_TRACE(bits);
    ExpectSameText(Stream(m, options).json, LibraryJson(m, options));
  }
}

store_test::AllTypes AllTypesExample() {
  store_test::AllTypes all;
  all.set_single(0.1f);
  all.set_optional_single(0.0f);
  for (float value :
       {1.0f / 3.0f, -0.0f, 3.4028235e38f, 1e-45f, std::numeric_limits<float>::quiet_NaN(),
        std::numeric_limits<float>::infinity(), 16777217.0f}) {
    all.add_singles(value);
  }
  all.set_blob(std::string("\x00\xff\x10 binary", 10));
  all.add_blobs("");
  all.add_blobs("a");
  all.add_blobs("ab");
  all.add_blobs("abc");
  all.set_unsigned64(std::numeric_limits<uint64_t>::max());
  all.set_signed64(kInt64Min);
  all.set_fixed(12345678901234567890u);
  all.set_sfixed(std::numeric_limits<int32_t>::min());
  all.set_unsigned32(std::numeric_limits<uint32_t>::max());
  all.set_flag(true);
  all.add_flags(false);
  all.add_flags(true);
  (*all.mutable_maps()->mutable_by_int32())[-5] = kAwkwardText;
  (*all.mutable_maps()->mutable_by_int32())[7] = "";
  (*all.mutable_maps()->mutable_by_int64())[kInt64Min].set_text("min");
  (*all.mutable_maps()->mutable_by_int64())[kInt64Max].add_children()->set_color(
      store_test::COLOR_RED);
  (*all.mutable_maps()->mutable_by_bool())[true] = kNaN;
  (*all.mutable_maps()->mutable_by_bool())[false] = -kInfinity;
  (*all.mutable_maps()->mutable_by_uint64())[std::numeric_limits<uint64_t>::max()] =
      static_cast<store_test::Color>(12);
  (*all.mutable_maps()->mutable_by_uint64())[0] = store_test::COLOR_RED;
  (*all.mutable_maps()->mutable_by_string())[kAwkwardText].set_text(kAwkwardText);
  all.mutable_choice_inner()->set_color(static_cast<store_test::Color>(-3));
  all.mutable_when()->set_seconds(-62135596800);  // 0001-01-01T00:00:00Z
  all.add_whens()->set_nanos(1000);
  all.add_whens();
  all.mutable_wrapped()->set_value(kInt64Max);
  all.add_colors(store_test::COLOR_RED);
  all.add_colors(static_cast<store_test::Color>(77));
  all.mutable_inner();  // set, empty
  for (int i = 0; i < 100; ++i) {
    store_test::Inner& inner = *all.add_inners();
    inner.set_text(absl::StrCat(i));
    inner.add_children()->add_children()->set_text("deep");
  }
  all.set_camel_case_name("json_name differs");
  *all.add_more_maps() = all.maps();
  all.add_more_maps();
  return all;
}

TEST(WriteMessageJsonTest, EveryFieldTypeMatchesLibprotobuf) {
  const store_test::AllTypes all = AllTypesExample();
  for (int bits = 0; bits < 8; ++bits) {
    JsonStreamOptions options = OptionCombination(bits);
    ExpectFaithful(all, options);
    options.delegate_below_bytes = 200;
    ExpectFaithful(all, options);
  }
}

TEST(WriteMessageJsonTest, EveryFieldTypeSameBytesAsLibprotobufWithoutMaps) {
  store_test::AllTypes all = AllTypesExample();
  all.clear_maps();
  for (int bits = 0; bits < 8; ++bits) {
    JsonStreamOptions options = OptionCombination(bits);
    SCOPED_TRACE(bits);
    ExpectSameText(Stream(all, options).json, LibraryJson(all, options));
  }
}

TEST(WriteMessageJsonTest, OneofAlternativesAndUnsetFields) {
  store_test::AllTypes all;
  ExpectFaithful(all, MeasurementOptions(0));
  all.set_choice_number(0);  // set to the default: still printed
  ExpectFaithful(all, MeasurementOptions(0));
  EXPECT_THAT(Stream(all, MeasurementOptions(0)).json, HasSubstr("\"choice_number\": \"0\""));
  EXPECT_THAT(Stream(all, MeasurementOptions(0)).json, Not(HasSubstr("choice_text")));
  all.set_choice_text(kAwkwardText);
  ExpectFaithful(all, MeasurementOptions(0));
}

TEST(WriteMessageJsonTest, NumbersAsProtobufJsonPrintsThem) {
  v1::TrackingData tracking;
  tracking.add_worker_count_time_unix_ns(kInt64Min);
  tracking.add_worker_count(-1);
  tracking.set_interval_seconds(kNaN);
  v1::WorkerSeries& worker = *tracking.add_workers();
  worker.add_memory_bytes(kInfinity);
  worker.add_memory_bytes(-kInfinity);
  worker.add_memory_bytes(0.1);
  tracking.set_worker_count_kind(static_cast<v1::SeriesKind>(99));
  const std::string json = Stream(tracking, MeasurementOptions(0)).json;
  EXPECT_THAT(json, HasSubstr("\"-9223372036854775808\""));
  EXPECT_THAT(json, HasSubstr("\"interval_seconds\": \"NaN\""));
  EXPECT_THAT(json, HasSubstr("\"Infinity\""));
  EXPECT_THAT(json, HasSubstr("\"-Infinity\""));
  EXPECT_THAT(json, HasSubstr("0.1"));
  EXPECT_THAT(json, HasSubstr("\"worker_count_kind\": 99"));
  EXPECT_THAT(json, HasSubstr("\"gaps\": []"));
  EXPECT_THAT(json, Not(HasSubstr("manager")));
}

// Doubles are printed without printf (integral ones as integers, others by std::to_chars): the
// same text as libprotobuf's, on both sides of where %.15g turns to an exponent (10^15), at the
// edges of exactness (2^53), and for random bit patterns and random decimals.
TEST(WriteMessageJsonTest, DoublesSameBytesAsLibprotobuf) {
  v1::WorkerSeries worker;
  for (double magnitude = 1; magnitude <= 1e19; magnitude *= 10) {
    for (double value : {magnitude - 1, magnitude, magnitude + 1, magnitude * 7}) {
      worker.add_memory_bytes(value);
      worker.add_memory_bytes(-value);
    }
  }
  for (double value : {9007199254740992.0, 9007199254740993.0, 999999999999999.0, 999999999999999.5,
                       1e15 - 0.5, -0.0, 0.0, 4294967296.0, 0.5, -1.5}) {
    worker.add_memory_bytes(value);
  }
  for (int bits = 0; bits < 8; ++bits) {
    SCOPED_TRACE(bits);
    const JsonStreamOptions options = OptionCombination(bits);
    ExpectSameText(Stream(worker, options).json, LibraryJson(worker, options));
  }
}

// The point of the writer: a message far larger than a piece is handed over in bounded pieces.
TEST(WriteMessageJsonTest, BigMessageGoesOutInBoundedPieces) {
  const v1::Measurement m = AwkwardMeasurement(200000);
  JsonStreamOptions options = MeasurementOptions(64 * 1024);
  options.piece_bytes = 16 * 1024;
  const Output output = Stream(m, options);
  EXPECT_GT(output.json.size(), 40u * 1024 * 1024);
  EXPECT_GT(output.pieces, 1000);
  // A piece is at most one piece size plus one delegated submessage (< 64 KiB of binary, a
  // few times that as JSON).
  EXPECT_LT(output.largest_piece, 1024u * 1024);
  v1::Measurement parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(output.json, &parsed).ok());
  std::string report;
  EXPECT_TRUE(EqualWithNaN(parsed, m, &report)) << report;
}

// A submessage libprotobuf cannot convert (an Any of a type it does not know) fails the
// writing with an error that says where it lies.
TEST(WriteMessageJsonTest, UnconvertibleSubmessageIsAnErrorNamingIt) {
  store_test::AllTypes all = AllTypesExample();
  all.mutable_inners(3)->mutable_extra()->set_type_url("type.googleapis.com/no.such.Type");
  all.mutable_inners(3)->mutable_extra()->set_value(std::string("\x08\x01", 2));
  const absl::Status status = WriteMessageJson(all, MeasurementOptions(0),
                                               [](absl::string_view) { return absl::OkStatus(); });
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("roastcoffea.store_test.AllTypes.inners[3].extra"));
}

TEST(WriteMessageJsonTest, SinkErrorStopsTheWriting) {
  const v1::Measurement m = AwkwardMeasurement(20000);
  JsonStreamOptions options = MeasurementOptions(0);
  options.piece_bytes = 1024;
  int calls = 0;
  const absl::Status status = WriteMessageJson(m, options, [&](absl::string_view) {
    ++calls;
    return calls == 3 ? absl::ResourceExhaustedError("disk full") : absl::OkStatus();
  });
  EXPECT_EQ(status, absl::ResourceExhaustedError("disk full"));
  EXPECT_EQ(calls, 3);
}

// The fields held apart (a measurement's records in a table, its edited metadata, a warning
// appended) print as the message holding them does, byte for byte, at every option.
TEST(WriteMessageJsonTest, SubstitutedFieldsPrintAsTheMessageHoldingThem) {
  v1::Measurement whole = AwkwardMeasurement(40);
  whole.mutable_metadata()->clear_configuration();
  v1::Measurement rest = whole;
  rest.clear_chunks();
  rest.mutable_metadata()->set_name("a name to be replaced");
  rest.mutable_warnings()->RemoveLast();
  std::vector<JsonFieldSubstitute> substitutes(3);
  substitutes[0].field_number = v1::Measurement::kMetadataFieldNumber;
  substitutes[0].message = &whole.metadata();
  substitutes[1].field_number = v1::Measurement::kChunksFieldNumber;
  substitutes[1].appended = static_cast<size_t>(whole.chunks_size());
  v1::ChunkRecord reused;  // as a table's records are read: one message, refilled each time
  substitutes[1].element = [&](size_t i) -> const Message& {
    reused = whole.chunks(static_cast<int>(i));
    return reused;
  };
  substitutes[2].field_number = v1::Measurement::kWarningsFieldNumber;
  substitutes[2].appended = 1;
  substitutes[2].element = [&](size_t) -> const Message& {
    return whole.warnings(whole.warnings_size() - 1);
  };
  for (int bits = 0; bits < 8; ++bits) {
    const JsonStreamOptions options = OptionCombination(bits);
    SCOPED_TRACE(bits);
    std::string json;
    const absl::Status status =
        WriteMessageJson(rest, options, substitutes, [&](absl::string_view piece) {
          json.append(piece.data(), piece.size());
          return absl::OkStatus();
        });
    ASSERT_TRUE(status.ok()) << status;
    ExpectSameText(json, Stream(whole, options).json);
  }
}

TEST(WriteMessageJsonTest, SubstituteOfNoSuchFieldIsInvalidArgument) {
  const auto write = [](const JsonFieldSubstitute& substitute) {
    return WriteMessageJson(v1::Measurement(), MeasurementOptions(0), {substitute},
                            [](absl::string_view) { return absl::OkStatus(); });
  };
  JsonFieldSubstitute missing;
  missing.field_number = 999;
  EXPECT_EQ(write(missing).code(), absl::StatusCode::kInvalidArgument);
  JsonFieldSubstitute wrong_kind;  // a message for a repeated field
  wrong_kind.field_number = v1::Measurement::kChunksFieldNumber;
  wrong_kind.message = &v1::ChunkRecord::default_instance();
  const absl::Status status = write(wrong_kind);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("field 4"));
}

}  // namespace
}  // namespace store_internal
}  // namespace roastcoffea
