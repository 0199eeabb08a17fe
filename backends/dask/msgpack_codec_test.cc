#include "backends/dask/msgpack_codec.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea::dask {
namespace {

using ::testing::HasSubstr;

std::string Bytes(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

TEST(MsgpackCodecTest, DecodesEveryScalarFormat) {
  EXPECT_EQ(*DecodeMsgpack(Bytes({0xc0})), Value::Nil());
  EXPECT_EQ(*DecodeMsgpack(Bytes({0xc3})), Value::Bool(true));
  EXPECT_EQ(*DecodeMsgpack(Bytes({0x7f})), Value::Int(127));
  EXPECT_EQ(*DecodeMsgpack(Bytes({0xe0})), Value::Int(-32));
  EXPECT_EQ(*DecodeMsgpack(Bytes({0xcc, 0xff})), Value::Int(255));
  EXPECT_EQ(*DecodeMsgpack(Bytes({0xcd, 0x01, 0x00})), Value::Int(256));
  EXPECT_EQ(*DecodeMsgpack(Bytes({0xce, 0xff, 0xff, 0xff, 0xff})), Value::Int(4294967295LL));
  const Value big = *DecodeMsgpack(Bytes({0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}));
  EXPECT_EQ(big.type(), Value::Type::kUint);
  EXPECT_EQ(*big.AsUint64(), 18446744073709551615ULL);
  EXPECT_EQ(*DecodeMsgpack(Bytes({0xd0, 0x80})), Value::Int(-128));
  EXPECT_EQ(*DecodeMsgpack(Bytes({0xd1, 0x80, 0x00})), Value::Int(-32768));
  EXPECT_EQ(*DecodeMsgpack(Bytes({0xd2, 0xff, 0xff, 0xff, 0xfe})), Value::Int(-2));
  EXPECT_EQ(*DecodeMsgpack(Bytes({0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0})), Value::Int(INT64_MIN));
  EXPECT_EQ(*DecodeMsgpack(Bytes({0xca, 0x3f, 0xc0, 0x00, 0x00})), Value::Float(1.5));
  EXPECT_EQ(*DecodeMsgpack(Bytes({0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0})), Value::Float(1.5));
}

TEST(MsgpackCodecTest, StrAndBinStayDistinct) {
  const Value str = *DecodeMsgpack(Bytes({0xa2, 'O', 'K'}));
  const Value bin = *DecodeMsgpack(Bytes({0xc4, 0x02, 'O', 'K'}));
  EXPECT_EQ(str.type(), Value::Type::kStr);
  EXPECT_EQ(bin.type(), Value::Type::kBin);
  EXPECT_EQ(str.text(), bin.text());
  EXPECT_NE(str, bin);
  EXPECT_EQ(DecodeMsgpack(Bytes({0xd9, 0x01, 'x'}))->text(), "x");
  EXPECT_EQ(DecodeMsgpack(Bytes({0xda, 0x00, 0x01, 'x'}))->text(), "x");
  EXPECT_EQ(DecodeMsgpack(Bytes({0xdb, 0, 0, 0, 0x01, 'x'}))->text(), "x");
  EXPECT_EQ(DecodeMsgpack(Bytes({0xc5, 0x00, 0x01, 'x'}))->type(), Value::Type::kBin);
  EXPECT_EQ(DecodeMsgpack(Bytes({0xc6, 0, 0, 0, 0x01, 'x'}))->type(), Value::Type::kBin);
}

TEST(MsgpackCodecTest, MapsAcceptAnyKeyType) {
  // {[1, "a"]: 2, 3: nil} as a map32 and an array32.
  const Value m = *DecodeMsgpack(
      Bytes({0xdf, 0, 0, 0, 2, 0xdd, 0, 0, 0, 2, 0x01, 0xa1, 'a', 0x02, 0x03, 0xc0}));
  ASSERT_TRUE(m.is_map());
  ASSERT_EQ(m.size(), 2u);
  EXPECT_TRUE(m.key(0).is_array());
  EXPECT_EQ(m.value(0), Value::Int(2));
  EXPECT_EQ(m.key(1), Value::Int(3));
  EXPECT_EQ(m.Find("a"), nullptr);
}

TEST(MsgpackCodecTest, RoundTripsEncodedValues) {
  Value map = Value::Map();
  map.Insert(Value::Str("op"), Value::Str("identity"));
  map.Insert(Value::Str("n"), Value::Int(-70000));
  map.Insert(Value::Str("u"), Value::Uint(UINT64_MAX));
  map.Insert(Value::Str("f"), Value::Float(-0.25));
  map.Insert(Value::Str("b"), Value::Bin(std::string(300, '\0')));
  map.Insert(Value::Str("s"), Value::Str(std::string(70000, 'x')));
  std::vector<Value> many;
  for (int i = 0; i < 20; ++i) many.push_back(Value::Int(i * 1000));
  map.Insert(Value::Array(many), Value::Bool(false));
  for (int i = 0; i < 20; ++i) map.Insert(Value::Int(-i), Value::Nil());
  const absl::StatusOr<Value> back = DecodeMsgpack(EncodeMsgpack(map));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, map);
}

TEST(MsgpackCodecTest, EncodesTheCapturedRequestExactly) {
  Value request = Value::Map();
  request.Insert(Value::Str("op"), Value::Str("identity"));
  request.Insert(Value::Str("reply"), Value::Bool(true));
  EXPECT_EQ(EncodeMsgpack(request), Bytes({0x82, 0xa2, 'o', 'p',  0xa8, 'i', 'd', 'e', 'n', 't',
                                           'i',  't',  'y', 0xa5, 'r',  'e', 'p', 'l', 'y', 0xc3}));
}

TEST(MsgpackCodecTest, RejectsBadInputWithClearErrors) {
  EXPECT_THAT(DecodeMsgpack("").status().message(), HasSubstr("truncated"));
  EXPECT_THAT(DecodeMsgpack(Bytes({0xd4, 0x01, 0x02})).status().message(), HasSubstr("ext"));
  EXPECT_THAT(DecodeMsgpack(Bytes({0xc7, 0x01, 0x01, 0x00})).status().message(), HasSubstr("ext"));
  EXPECT_THAT(DecodeMsgpack(Bytes({0xc1})).status().message(), HasSubstr("reserved"));
  EXPECT_THAT(DecodeMsgpack(Bytes({0xa2, 0xff, 0xfe})).status().message(), HasSubstr("UTF-8"));
  EXPECT_THAT(DecodeMsgpack(Bytes({0xc0, 0xc0})).status().message(), HasSubstr("trailing"));
  // Lying lengths never allocate: a 4 GiB str, a 4-billion-element array and map.
  EXPECT_THAT(DecodeMsgpack(Bytes({0xdb, 0xff, 0xff, 0xff, 0xff})).status().message(),
              HasSubstr("exceeds the remaining input"));
  EXPECT_THAT(DecodeMsgpack(Bytes({0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0})).status().message(),
              HasSubstr("exceeds the remaining input"));
  EXPECT_THAT(DecodeMsgpack(Bytes({0xdf, 0xff, 0xff, 0xff, 0xff, 0xc0})).status().message(),
              HasSubstr("exceeds the remaining input"));
  EXPECT_THAT(DecodeMsgpack(Bytes({0xcb, 0x00})).status().message(), HasSubstr("byte 1"));
}

TEST(MsgpackCodecTest, BoundsNestingAndValueCount) {
  const std::string deep(10000, '\x91');  // [[[[...
  EXPECT_THAT(DecodeMsgpack(deep + '\xc0').status().message(), HasSubstr("nesting deeper"));
  MsgpackLimits limits;
  limits.max_values = 3;
  EXPECT_THAT(DecodeMsgpack(Bytes({0x93, 1, 2, 3}), limits).status().message(),
              HasSubstr("more than 3 values"));
  EXPECT_TRUE(DecodeMsgpack(Bytes({0x92, 1, 2}), limits).ok());
}

// One byte on the wire (nil) is a 72-byte Value in memory: the default value cap, not the
// 256 MiB message cap, is what bounds a hostile peer's decoded tree (about 300 MB).
TEST(MsgpackCodecTest, DefaultValueCapBoundsDecodedMemory) {
  const size_t cap = MsgpackLimits().max_values;
  EXPECT_LE(cap * sizeof(Value), size_t{320} << 20);
  const auto array_of_nils = [](uint32_t n) {
    std::string bytes = {'\xdd', static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                         static_cast<char>(n >> 8), static_cast<char>(n)};
    bytes.append(n, '\xc0');
    return bytes;
  };
  // The array itself is one value.
  EXPECT_THAT(DecodeMsgpack(array_of_nils(static_cast<uint32_t>(cap))).status().message(),
              HasSubstr(absl::StrCat("more than ", cap, " values")));
  absl::StatusOr<Value> fits = DecodeMsgpack(array_of_nils(static_cast<uint32_t>(cap - 1)));
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_EQ(fits->size(), cap - 1);
}

}  // namespace
}  // namespace roastcoffea::dask
