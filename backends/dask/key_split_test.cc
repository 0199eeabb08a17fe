#include "backends/dask/key_split.h"

#include "gtest/gtest.h"

namespace roastcoffea::dask {
namespace {

// Every example of docs/dask-protocol.md §5.2 (verified against Python 2022.12).
TEST(KeySplitTest, MatchesDaskOnTheSpecExamples) {
  EXPECT_EQ(KeySplit("x"), "x");
  EXPECT_EQ(KeySplit("x-1"), "x");
  EXPECT_EQ(KeySplit("inc-1869629367546c5239c715fa05ca55a6"), "inc");
  EXPECT_EQ(KeySplit("('mul-1178bae06e2ba99e512008f106de13b8', 0, 0)"), "mul");
  EXPECT_EQ(KeySplit("('sum-aggregate-6195165fd2bc6457b053e75d15ce3afe',)"), "sum-aggregate");
  EXPECT_EQ(KeySplit("hello-world-1"), "hello-world");
  EXPECT_EQ(KeySplit("x-abcdefab"), "x");
  EXPECT_EQ(KeySplit("read-parquet-abcdefgh"), "read-parquet");
  EXPECT_EQ(KeySplit("my-database-1"), "my");  // the quirk: "database" looks like a hash
  EXPECT_EQ(KeySplit("x-Abcdefgh"), "x-Abcdefgh");
  EXPECT_EQ(KeySplit("0123456789abcdef0123456789abcdef"), "data");
  EXPECT_EQ(KeySplit("<module.sub.Cls object at 0x1>"), "Cls");
  EXPECT_EQ(KeySplit("_(x)"), "x");
  EXPECT_EQ(KeySplit("-x"), "Other");
  EXPECT_EQ(KeySplit(""), "Other");
  EXPECT_EQ(KeySplit("finalize-abc123"), "finalize");
  EXPECT_EQ(KeySplit("123-abc"), "123-abc");
}

TEST(KeySplitTest, NativeKeys) {
  EXPECT_EQ(KeySplit(Value::Int(42)), "Other");
  EXPECT_EQ(KeySplit(Value::Nil()), "Other");
  EXPECT_EQ(KeySplit(Value::Float(1.5)), "Other");
  EXPECT_EQ(KeySplit(Value::Array({Value::Str("mul-1178bae06e2ba99e512008f106de13b8"),
                                   Value::Int(0), Value::Int(0)})),
            "mul");
  // Newest Dask applies the tuple rule recursively.
  EXPECT_EQ(
      KeySplit(Value::Array({Value::Array({Value::Str("nested"), Value::Int(1)}), Value::Int(2)})),
      "nested");
  EXPECT_EQ(KeySplit(Value::Array()), "Other");
  EXPECT_EQ(KeyToString(Value::Array({Value::Str("x"), Value::Int(1)})), "('x', 1)");
}

}  // namespace
}  // namespace roastcoffea::dask
