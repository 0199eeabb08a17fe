#include "io/untrusted_json.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Nested(int depth, char open, char close) {
  return absl::StrCat(std::string(depth, open), std::string(depth, close));
}

// Reliability study D7: 200 KB of nested arrays took protobuf over 600 s; now refused in one pass.
TEST(CheckJsonDepthTest, DeepNestingIsRefusedQuickly) {
  EXPECT_TRUE(CheckJsonDepth(Nested(kMaxJsonDepth, '[', ']'), "f").ok());
  const absl::Status deep = CheckJsonDepth(Nested(kMaxJsonDepth + 1, '{', '}'), "f.json");
  EXPECT_EQ(deep.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(deep.message(), HasSubstr("f.json: nested too deep: more than 32 levels"));
  // Brackets inside strings do not count.
  EXPECT_TRUE(CheckJsonDepth(absl::StrCat("[\"", std::string(500, '['), "\\\"\"]"), "f").ok());
  const absl::Time start = absl::Now();
  const absl::StatusOr<google::protobuf::Value> parsed =
      ParseUntrustedJson(Nested(100000, '[', ']'), "records.json");
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  EXPECT_THAT(parsed.status().message(), HasSubstr("records.json: nested too deep"));
}

// Whatever depth the limit allows, protobuf's parser accepts: the message is never protobuf's
// "JSON transcoder produced invalid protobuf output" (reliability study D19).
TEST(ParseUntrustedJsonTest, EveryDepthWithinTheLimitParses) {
  for (int depth = 1; depth <= kMaxJsonDepth; ++depth) {
    EXPECT_TRUE(ParseUntrustedJson(Nested(depth, '[', ']'), "f").ok()) << depth;
    std::string object;
    for (int i = 0; i < depth; ++i) object += "{\"a\":";
    object += "1" + std::string(depth, '}');
    EXPECT_TRUE(ParseUntrustedJson(object, "f").ok()) << depth;
  }
}

// Reliability study D16: Python's json.dump writes NaN and Infinity.
TEST(ReplaceNonFiniteTokensTest, BecomeNullAndAreReportedWithTheirKey) {
  std::vector<NonFiniteToken> found;
  EXPECT_EQ(ReplaceNonFiniteTokens(
                R"({"a": NaN, "b": [1, -Infinity], "c": "NaN:", "d": {"e": Infinity}})", &found),
            R"({"a": null, "b": [1, null], "c": "NaN:", "d": {"e": null}})");
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].key, "a");
  EXPECT_EQ(found[0].token, "NaN");
  EXPECT_EQ(found[1].key, "b");
  EXPECT_EQ(found[1].token, "-Infinity");
  EXPECT_EQ(found[2].key, "e");
  EXPECT_EQ(ReplaceNonFiniteTokens("[NaN]", nullptr), "[null]");
}

TEST(ParseUntrustedJsonTest, ErrorsNameTheSourceAndEchoLittle) {
  const absl::StatusOr<google::protobuf::Value> bad =
      ParseUntrustedJson(absl::StrCat("root:*:20228:0:99999", std::string(5000, 'x')), "r.json");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("r.json: not valid JSON: "));
  EXPECT_LT(bad.status().message().size(), 300u);
  // Never the file's text (a symlink to /etc/shadow was quoted).
  EXPECT_EQ(bad.status().message().find("root:"), absl::string_view::npos) << bad.status();
  std::vector<NonFiniteToken> found;
  const absl::StatusOr<google::protobuf::Value> ok =
      ParseUntrustedJson(R"({"processtime": NaN, "entries": 3})", "r.json", &found);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(ok->struct_value().fields().at("processtime").has_null_value());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].key, "processtime");
}

TEST(EchoedTextTest, CutsAndEscapes) {
  EXPECT_EQ(EchoedText("a\x1b-"), "a\\x1b-");
  EXPECT_EQ(EchoedText(std::string(300, 'x')), std::string(200, 'x') + "...");
}

TEST(SplitJsonArrayTest, ElementsWithoutParsing) {
  const absl::StatusOr<std::vector<absl::string_view>> parts =
      SplitJsonArray(R"( [ {"a": "],["}, [1, 2] ,3, "x\"]" , NaN ] )", "f");
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_THAT(*parts, ElementsAre(R"({"a": "],["})", "[1, 2]", "3", R"("x\"]")", "NaN"));
  EXPECT_TRUE(SplitJsonArray("[]", "f")->empty());
  for (const char* bad : {"", "{}", "[1 2]", "[1,]", "[1] x", "[{]", "[\"a]"}) {
    EXPECT_EQ(SplitJsonArray(bad, "f.json").status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_THAT(SplitJsonArray("[1] x", "f.json").status().message(),
              HasSubstr("f.json: not valid JSON: unexpected text after the array at byte 4"));
}

TEST(FindJsonMemberTest, FindsATopLevelMember) {
  const std::string json = R"({"x": {"__m__": 1}, "__m__": [1, {"y": 2}], "z": 3})";
  EXPECT_EQ(**FindJsonMember(json, "__m__", "f"), R"([1, {"y": 2}])");
  EXPECT_EQ(*FindJsonMember(json, "w", "f"), std::nullopt);
  EXPECT_EQ(*FindJsonMember("[1]", "w", "f"), std::nullopt);
  EXPECT_EQ(*FindJsonMember("{}", "w", "f"), std::nullopt);
  EXPECT_FALSE(FindJsonMember(R"({"a" 1})", "w", "f").ok());
}

}  // namespace
}  // namespace roastcoffea
