#include "ingest/json_tree.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;

// The members of the root object as "key=kind:value" (strings and numbers), in order.
std::string Describe(const JsonTree& tree) {
  std::string out;
  const JsonNode& root = tree.root();
  for (uint32_t child = root.first_child; child != JsonNode::kNone;
       child = tree.node(child).next_sibling) {
    const JsonNode& node = tree.node(child);
    absl::StrAppend(&out, out.empty() ? "" : " ", tree.key(node), "=");
    switch (node.kind) {
      case JsonNode::Kind::kNull:
        out += "null";
        break;
      case JsonNode::Kind::kBool:
        out += node.boolean ? "true" : "false";
        break;
      case JsonNode::Kind::kNumber:
        absl::StrAppend(&out, node.number);
        break;
      case JsonNode::Kind::kString:
        absl::StrAppend(&out, "'", tree.text(node), "'");
        break;
      case JsonNode::Kind::kList:
        out += "list";
        break;
      case JsonNode::Kind::kObject:
        out += "object";
        break;
    }
  }
  return out;
}

TEST(JsonTreeTest, ReadsValuesInOrder) {
  JsonTree tree;
  ASSERT_TRUE(tree.Parse(R"( {"b": 1.5, "a": "x\"\u00e9\ud83d\ude00", "c": [1, {"d": null}],
                              "e": {}, "f": true, "g": -0, "h": 12345678901234567890} )")
                  .ok());
  EXPECT_EQ(Describe(tree),
            "b=1.5 a='x\"\xc3\xa9\xf0\x9f\x98\x80' c=list e=object f=true g=-0 "
            "h=1.23457e+19");
  // Reused: the second parse replaces the first.
  ASSERT_TRUE(tree.Parse(R"({"only": 2})").ok());
  EXPECT_EQ(Describe(tree), "only=2");
}

// protobuf's JSON parser accepts these; so must this one (the old reader used it).
TEST(JsonTreeTest, KeepsProtobufsLeniencies) {
  JsonTree tree;
  ASSERT_TRUE(
      tree.Parse("{'a': 'q', b$_1: 1., \"c\": -.5e1, \"d\": [1,],\v\f\"e\": 1e-400,}").ok());
  EXPECT_EQ(Describe(tree), "a='q' b$_1=1 c=-5 d=list e=0");
}

TEST(JsonTreeTest, RefusesWhatProtobufRefuses) {
  JsonTree tree;
  for (const char* bad : {"{\"a\": 1, \"a\": 2}",
                          "01",
                          "-01",
                          "1e400",
                          "-",
                          "\"\\ud800\"",
                          "\"\\udc00\"",
                          "\"a\xff\"",
                          "\"\xc0\x80\"",
                          "\"\xed\xa0\x80\"",
                          "{true: 1}",
                          "[1 2]",
                          "{\"a\" 1}",
                          "nulls",
                          "+1",
                          ".5",
                          "\"abc",
                          "\"\\u12\"",
                          "NaN",
                          "[",
                          ""}) {
    EXPECT_FALSE(tree.Parse(bad).ok()) << bad;
  }
  const absl::Status repeated = tree.Parse(R"({"k": 1, "k": 2})");
  EXPECT_THAT(std::string(repeated.message()), HasSubstr("repeated key 'k' at byte 9"));
}

TEST(JsonTreeTest, RepeatedKeysInLargeObjects) {
  std::string json = "{";
  for (int i = 0; i < 100; ++i) absl::StrAppend(&json, i > 0 ? "," : "", "\"k", i, "\": ", i);
  JsonTree tree;
  ASSERT_TRUE(tree.Parse(json + "}").ok());
  EXPECT_FALSE(tree.Parse(json + ", \"k50\": 1}").ok());
}

TEST(JsonTreeTest, NestingIsLimited) {
  JsonTree tree;
  const auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  EXPECT_TRUE(tree.Parse(nested(kMaxJsonDepth)).ok());
  EXPECT_THAT(std::string(tree.Parse(nested(kMaxJsonDepth + 1)).message()),
              HasSubstr("nested too deep"));
}

}  // namespace
}  // namespace roastcoffea
