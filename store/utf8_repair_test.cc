#include "store/utf8_repair.h"

#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace store_internal {
namespace {

TEST(IsValidUtf8Test, AcceptsUtf8AndRefusesTheRest) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("\xE6\x95\xB0\xE6\x8D\xAE \xF0\x9F\x98\x80 \xC3\xA9"));
  EXPECT_FALSE(IsValidUtf8("bad\xFFname"));
  EXPECT_FALSE(IsValidUtf8("/tmp/cache\xE9"));    // Latin-1 e-acute
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // a UTF-16 surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xE6\x95"));          // truncated
}

TEST(RepairUtf8Test, EachBadByteBecomesAReplacementCharacter) {
  EXPECT_EQ(RepairUtf8("bad\xFFname"), "bad\xEF\xBF\xBDname");
  EXPECT_EQ(RepairUtf8("\xE6\x95"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(RepairUtf8("\xC3\xA9"), "\xC3\xA9");
  EXPECT_TRUE(IsValidUtf8(RepairUtf8("\xC0\xAF\xED\xA0\x80\x80")));
}

TEST(RepairStringsUtf8Test, EveryStringFieldAtAnyDepthIncludingMaps) {
  v1::Measurement m;
  m.mutable_metadata()->set_name("bad\xFFname");
  m.mutable_metadata()->add_command_line("--cache_dir=/tmp/c\xE9");
  (*m.mutable_metadata()->mutable_configuration())["k\xFF"] = "v\xFF";
  m.add_chunks()->set_worker("ok");
  m.add_chunks()->set_worker("w\xFE");
  EXPECT_FALSE(AllStringsValidUtf8(m));
  std::string first;
  EXPECT_EQ(RepairStringsUtf8(&m, &first), 4);  // a configuration entry counts once
  EXPECT_EQ(first, "metadata.name");
  EXPECT_TRUE(AllStringsValidUtf8(m));
  EXPECT_EQ(m.metadata().name(), "bad\xEF\xBF\xBDname");
  EXPECT_EQ(m.chunks(1).worker(), "w\xEF\xBF\xBD");
  // It now serialises to something that parses back.
  v1::Measurement back;
  ASSERT_TRUE(back.ParseFromString(m.SerializeAsString()));
  EXPECT_EQ(back.metadata().configuration().at("k\xEF\xBF\xBD"), "v\xEF\xBF\xBD");
}

}  // namespace
}  // namespace store_internal
}  // namespace roastcoffea
