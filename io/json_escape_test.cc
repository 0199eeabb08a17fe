#include "io/json_escape.h"

#include <string>

#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

TEST(JsonQuoteTest, EscapesQuotesBackslashesAndControls) {
  EXPECT_EQ(JsonQuote("a\"b\\c\nd\x01"), "\"a\\\"b\\\\c\\nd\\u0001\"");
  EXPECT_EQ(JsonQuote("tab\there, DEL\x7f, NUL" + std::string(1, '\0')),
            "\"tab\\there, DEL\\u007f, NUL\\u0000\"");
}

TEST(JsonQuoteTest, CopiesUtf8AndEmptyText) {
  EXPECT_EQ(JsonQuote("caf\xc3\xa9 \xe2\x82\xac"), "\"caf\xc3\xa9 \xe2\x82\xac\"");
  EXPECT_EQ(JsonQuote(""), "\"\"");
}

TEST(AppendJsonStringTest, AppendsAfterExistingText) {
  std::string out = "{\"k\":";
  AppendJsonString("v\r", &out);
  EXPECT_EQ(out, "{\"k\":\"v\\u000d\"");
}

}  // namespace
}  // namespace roastcoffea
