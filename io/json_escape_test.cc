#include "io/json_escape.h"

#include <cstdio>
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

// Plain text is scanned eight bytes at a time: every byte that needs an escape is found at
// any place of a long string, next to any neighbour (UTF-8 bytes, ' ', '~', the bytes around
// the escaped ones).
TEST(AppendJsonStringTest, FindsEveryEscapedByteAtAnyPlace) {
  const auto reference = [](const std::string& text) {
    std::string out = "\"";
    for (const char c : text) {
      const unsigned char u = static_cast<unsigned char>(c);
      if (c == '"') {
        out += "\\\"";
      } else if (c == '\\') {
        out += "\\\\";
      } else if (c == '\n') {
        out += "\\n";
      } else if (c == '\t') {
        out += "\\t";
      } else if (u < 0x20 || u == 0x7f) {
        char code[8];
        snprintf(code, sizeof(code), "\\u%04x", u);
        out += code;
      } else {
        out += c;
      }
    }
    return out + "\"";
  };
  for (const char filler : {'a', ' ', '~', '!', '#', '[', ']', '\x7e', '\x80', '\xff'}) {
    for (int special = 0; special < 256; ++special) {
      for (size_t at : {0, 1, 7, 8, 9, 15, 16, 22}) {
        std::string text(23, filler);
        text[at] = static_cast<char>(special);
        EXPECT_EQ(JsonQuote(text), reference(text)) << special << " at " << at;
      }
    }
  }
}

}  // namespace
}  // namespace roastcoffea
