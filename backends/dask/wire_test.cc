#include "backends/dask/wire.h"

#include <string>

#include "backends/dask/fixtures.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea::dask {
namespace {

using testing::FixtureBytes;
using ::testing::HasSubstr;

absl::StatusOr<Value> DecodeFixture(const std::string& name, size_t* consumed = nullptr) {
  const std::string bytes = FixtureBytes(name);
  StringByteReader reader(bytes);
  absl::StatusOr<Frames> frames = ReadFrames(reader);
  if (!frames.ok()) return frames.status();
  if (consumed != nullptr) *consumed = reader.position();
  return DecodeMessage(*frames);
}

std::string U64(uint64_t v) {
  std::string s;
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return s;
}

TEST(WireTest, EveryCaptureIsOneCompleteMessage) {
  for (const char* name :
       {"handshake_1_server_to_client", "handshake_2_client_to_server", "identity_request",
        "identity_reply", "identity_reply_idle", "get_task_stream_reply",
        "get_task_stream_reply_first_call", "get_task_stream_count3_reply", "error_reply_uncaught",
        "error_reply_lz4_negotiated", "unknown_op_reply", "close_request", "close_reply",
        "processing_reply", "dump_state_workers_reply"}) {
    size_t consumed = 0;
    absl::StatusOr<Value> v = DecodeFixture(name, &consumed);
    ASSERT_TRUE(v.ok()) << name << ": " << v.status();
    EXPECT_EQ(consumed, FixtureBytes(name).size()) << name;
  }
}

TEST(WireTest, HandshakeAndRequestsMatchTheCapturedBytes) {
  Value hs = *DecodeFixture("handshake_1_server_to_client");
  EXPECT_EQ(hs.Find("compression")->text(), "lz4");
  EXPECT_EQ(*hs.Find("pickle-protocol")->AsInt64(), 5);

  Value mine = Value::Map();
  mine.Insert(Value::Str("compression"), Value::Nil());
  mine.Insert(Value::Str("python"), Value::Array({Value::Int(3), Value::Int(11), Value::Int(2)}));
  mine.Insert(Value::Str("pickle-protocol"), Value::Int(5));
  EXPECT_EQ(EncodeMessage(mine), FixtureBytes("handshake_2_client_to_server"));

  Value close = Value::Map();
  close.Insert(Value::Str("op"), Value::Str("close"));
  close.Insert(Value::Str("reply"), Value::Bool(true));
  EXPECT_EQ(EncodeMessage(close), FixtureBytes("close_request"));
  EXPECT_EQ(DecodeFixture("close_reply")->text(), "OK");
  EXPECT_TRUE(DecodeFixture("unknown_op_reply")->is_nil());
}

TEST(WireTest, SerializedGroupsBecomeOpaque) {
  Value error = *DecodeFixture("error_reply_uncaught");
  EXPECT_EQ(error.Find("status")->text(), "uncaught-error");
  EXPECT_EQ(error.Find("exception")->type(), Value::Type::kOpaque);
  EXPECT_EQ(error.Find("exception")->text(), "__Serialized__ frames 1..2");
  EXPECT_EQ(error.Find("traceback")->text(), "__Serialized__ frames 3..4");
  EXPECT_THAT(error.Find("exception_text")->text(), HasSubstr("TypeError"));
  // lz4-compressed payloads are skipped just the same.
  Value lz4 = *DecodeFixture("error_reply_lz4_negotiated");
  EXPECT_EQ(lz4.Find("exception")->type(), Value::Type::kOpaque);
}

TEST(WireTest, ResolvesSetAndEnumMagicMaps) {
  Value set = Value::Map();
  set.Insert(Value::Str("__Set__"), Value::Bool(true));
  set.Insert(Value::Str("as-list"), Value::Array({Value::Int(1)}));
  Value e = Value::Map();
  e.Insert(Value::Str("__Enum__"), Value::Bool(true));
  e.Insert(Value::Str("name"), Value::Str("running"));
  Value top = Value::Array({set, e});
  Value back = *DecodeMessage({EncodeMsgpack(top)});
  EXPECT_EQ(back, Value::Array({Value::Array({Value::Int(1)}), Value::Str("running")}));
}

TEST(WireTest, RejectsBadPlaceholders) {
  Value placeholder = Value::Map();
  placeholder.Insert(Value::Str("__Pickled__"), Value::Int(3));
  EXPECT_THAT(DecodeMessage({EncodeMsgpack(placeholder)}).status().message(),
              HasSubstr("points at frame 3 of a 1-frame message"));
  Value header = Value::Map();
  header.Insert(Value::Str("num-sub-frames"), Value::Int(5));
  placeholder = Value::Map();
  placeholder.Insert(Value::Str("__Serialized__"), Value::Int(1));
  EXPECT_THAT(DecodeMessage({EncodeMsgpack(placeholder), EncodeMsgpack(header)}).status().message(),
              HasSubstr("bad num-sub-frames"));
  EXPECT_THAT(DecodeMessage({EncodeMsgpack(placeholder), "\xc1"}).status().message(),
              HasSubstr("not a msgpack map"));
}

TEST(WireTest, UniversalReaderAcceptsAPartialL) {
  // 2023.11+ writers may set L to the prelude plus the first frames only.
  const Frames frames = {std::string("\xa1x", 2), std::string(100, 'z')};
  std::string bytes = EncodeFrames(frames);
  bytes.replace(0, 8, U64(8 + 16 + 2));
  StringByteReader reader(bytes);
  absl::StatusOr<Frames> back = ReadFrames(reader);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, frames);
}

TEST(WireTest, RejectsHostileHeaders) {
  auto error_of = [](const std::string& bytes) {
    StringByteReader reader(bytes);
    return std::string(ReadFrames(reader).status().message());
  };
  EXPECT_THAT(error_of(U64(8) + U64(0)), HasSubstr("frame count n = 0"));
  EXPECT_THAT(error_of(U64(8) + U64(uint64_t{1} << 40)), HasSubstr("outside [1, 1000000]"));
  EXPECT_THAT(error_of(U64(24) + U64(1) + U64(uint64_t{1} << 62)), HasSubstr("exceed the cap"));
  EXPECT_THAT(error_of(U64(5) + U64(1) + U64(1) + "x"), HasSubstr("length field L = 5"));
  EXPECT_THAT(error_of(EncodeFrames({"abcdef"}).substr(0, 27)), HasSubstr("reading frame 0"));
  EXPECT_THAT(error_of("\x01\x02"), HasSubstr("field L"));
}

}  // namespace
}  // namespace roastcoffea::dask
