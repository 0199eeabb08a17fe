#include "export/spill_file.h"

#include <stdlib.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

std::string CopyAll(SpillFile& spill, bool* ok) {
  std::string out;
  size_t copied = 0;
  *ok = spill.CopyTo([&out](absl::string_view piece) { out.append(piece.data(), piece.size()); },
                     &copied);
  EXPECT_EQ(copied, out.size());
  return out;
}

TEST(SpillFileTest, GivesBackWhatWasAppendedAcrossManyPieces) {
  SpillFile spill;
  ASSERT_TRUE(spill.ok());
  std::string expected;
  for (int i = 0; i < 50'000; ++i) {  // ~390 KB: several 64 KiB writes and reads
    const std::string text = absl::StrCat("\"key.", i, "\", ");
    spill.Append(text);
    expected += text;
  }
  bool ok = false;
  EXPECT_EQ(CopyAll(spill, &ok), expected);
  EXPECT_TRUE(ok);
}

TEST(SpillFileTest, EmptyCopiesNothing) {
  SpillFile spill;
  bool ok = false;
  EXPECT_EQ(CopyAll(spill, &ok), "");
  EXPECT_TRUE(ok);
}

TEST(SpillFileTest, WithoutATemporaryDirectoryItSaysSoAndCopiesNothing) {
  const char* old = getenv("TMPDIR");
  const std::string saved = old != nullptr ? old : "";
  setenv("TMPDIR", "/nonexistent-roastcoffea-dir", 1);
  SpillFile spill;
  if (old != nullptr) {
    setenv("TMPDIR", saved.c_str(), 1);
  } else {
    unsetenv("TMPDIR");
  }
  EXPECT_FALSE(spill.ok());
  spill.Append("lost");
  bool ok = true;
  EXPECT_EQ(CopyAll(spill, &ok), "");
  EXPECT_FALSE(ok);
}

}  // namespace
}  // namespace roastcoffea
