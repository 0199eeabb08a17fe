#include "export/display_width.h"

#include "gtest/gtest.h"

namespace roastcoffea {
namespace export_internal {
namespace {

TEST(DisplayWidthTest, AsciiCountsOneColumnPerByte) {
  EXPECT_EQ(DisplayWidth(""), 0u);
  EXPECT_EQ(DisplayWidth("Data Rate"), 9u);
}

TEST(DisplayWidthTest, MultiByteCharactersCountOneColumn) {
  EXPECT_EQ(DisplayWidth("\xE2\x94\x82"), 1u);        // U+2502 box drawing
  EXPECT_EQ(DisplayWidth("  \xE2\x80\xA2 Min"), 7u);  // bullet
  EXPECT_EQ(DisplayWidth("\xC3\xA9t\xC3\xA9"), 3u);   // "été"
  EXPECT_EQ(DisplayWidth("\xE2\x94\x8F\xE2\x94\x81"), 2u);
}

TEST(DisplayWidthTest, WideCharactersCountTwoColumns) {
  EXPECT_EQ(DisplayWidth("\xE6\x95\xB0\xE6\x8D\xAE"), 4u);  // CJK "数据"
  EXPECT_EQ(DisplayWidth("\xF0\x9F\x9A\x80"), 2u);          // U+1F680 rocket
}

TEST(DisplayWidthTest, CombiningMarksCountZero) {
  EXPECT_EQ(DisplayWidth("e\xCC\x81"), 1u);  // e + U+0301 combining acute
  EXPECT_EQ(DisplayWidth("a\xE2\x80\x8B"
                         "b"),
            2u);  // zero-width space
}

TEST(DisplayWidthTest, InvalidBytesCountOneEach) {
  EXPECT_EQ(DisplayWidth("\xFF\xFE"), 2u);
  EXPECT_EQ(DisplayWidth("\xE2\x94"), 2u);      // truncated 3-byte sequence
  EXPECT_EQ(DisplayWidth("\xC0\xAF"), 2u);      // overlong encoding of '/'
  EXPECT_EQ(DisplayWidth("\xED\xA0\x80"), 3u);  // UTF-16 surrogate
  EXPECT_EQ(DisplayWidth("a\x80"
                         "b"),
            3u);  // stray continuation byte
}

TEST(ReplaceControlCharactersTest, ReplacesOnlyControlCharacters) {
  EXPECT_EQ(ReplaceControlCharacters("a\nb\tc\x1B[31m\x7F"), "a?b?c?[31m?");
  EXPECT_EQ(ReplaceControlCharacters("ttbar \xC3\xA9"), "ttbar \xC3\xA9");
}

TEST(ReplaceControlCharactersTest, ReplacesC1ControlsAndBytesThatAreNotUtf8) {
  // U+009B (8-bit CSI) and U+0080, U+009F as UTF-8; U+00A0 is the first character after C1.
  EXPECT_EQ(ReplaceControlCharacters("X\xC2\x9B"
                                     "31m\xC2\x80\xC2\x9F\xC2\xA0"),
            "X?31m??\xC2\xA0");
  // A raw 0x9B byte (CSI to an 8-bit terminal) and a truncated sequence.
  EXPECT_EQ(ReplaceControlCharacters("a\x9B"
                                     "2Jb\xE2\x82"),
            "a?2Jb??");
}

}  // namespace
}  // namespace export_internal
}  // namespace roastcoffea

namespace roastcoffea {
namespace export_internal {
namespace {

TEST(ElideMiddleTest, KeepsHeadAndTail) {
  EXPECT_EQ(ElideMiddle("short", 10, "..."), "short");
  EXPECT_EQ(ElideMiddle("/data/store/mc/file3.root", 15, "..."), "/data/...3.root");
  EXPECT_EQ(ElideMiddle("/data/store/mc/file3.root", 15, "\u2026"), "/data/s\u2026e3.root");
  EXPECT_EQ(DisplayWidth(ElideMiddle("\u6F22\u5B57\u6F22\u5B57\u6F22\u5B57", 7, "\u2026")), 7u);
  EXPECT_EQ(ElideMiddle("abcdef", 2, "..."), "..");
}

}  // namespace
}  // namespace export_internal
}  // namespace roastcoffea
