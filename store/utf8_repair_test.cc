#include "store/utf8_repair.h"

#include <set>
#include <string>
#include <utility>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
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

TEST(IsValidUtf8Test, FindsABadByteAtAnyPlaceOfALongString) {
  const std::string ascii(40, 'a');
  for (size_t at = 0; at < ascii.size(); ++at) {
    std::string text = ascii;
    text[at] = '\xFF';
    EXPECT_FALSE(IsValidUtf8(text)) << at;
    text.replace(at, 1, "\xC3\xA9");  // e-acute, valid
    EXPECT_TRUE(IsValidUtf8(text)) << at;
  }
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

// Sets a bad string at the end of `path` (fields from `message` down), creating the messages on
// the way: one of each repeated message.
void SetBadStringAt(google::protobuf::Message* message,
                    const std::vector<const google::protobuf::FieldDescriptor*>& path) {
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    const google::protobuf::Reflection* reflection = message->GetReflection();
    message = path[i]->is_repeated() ? reflection->AddMessage(message, path[i])
                                     : reflection->MutableMessage(message, path[i]);
  }
  const google::protobuf::Reflection* reflection = message->GetReflection();
  if (path.back()->is_repeated()) {
    reflection->AddString(message, path.back(), "bad\xFF");
  } else {
    reflection->SetString(message, path.back(), "bad\xFF");
  }
}

// Every path from `type` to a string field (maps aside: the schema's one map has its own test
// above), each message type at most once on a path.
void StringPaths(const google::protobuf::Descriptor* type,
                 std::vector<const google::protobuf::FieldDescriptor*>& prefix,
                 std::set<const google::protobuf::Descriptor*>& on_path,
                 std::vector<std::vector<const google::protobuf::FieldDescriptor*>>& out) {
  if (!on_path.insert(type).second) return;
  for (int i = 0; i < type->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = type->field(i);
    if (field->is_map()) continue;
    prefix.push_back(field);
    if (field->type() == google::protobuf::FieldDescriptor::TYPE_STRING) {
      out.push_back(prefix);
    } else if (field->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) {
      StringPaths(field->message_type(), prefix, on_path, out);
    }
    prefix.pop_back();
  }
  on_path.erase(type);
}

// The check skips fields that cannot hold a string: it must never skip one that can.
TEST(AllStringsValidUtf8Test, FindsABadStringInEveryStringFieldOfTheSchema) {
  std::vector<const google::protobuf::FieldDescriptor*> prefix;
  std::set<const google::protobuf::Descriptor*> on_path;
  std::vector<std::vector<const google::protobuf::FieldDescriptor*>> paths;
  StringPaths(v1::Measurement::descriptor(), prefix, on_path, paths);
  ASSERT_GT(paths.size(), 20u);
  for (const auto& path : paths) {
    std::string name;
    for (const auto* field : path) name += "." + field->name();
    v1::Measurement m;
    m.add_chunks()->set_file("fine");  // a valid sibling before the bad one
    SetBadStringAt(&m, path);
    EXPECT_FALSE(AllStringsValidUtf8(m)) << name;
    std::string first;
    EXPECT_GE(RepairStringsUtf8(&m, &first), 1) << name;
    EXPECT_TRUE(AllStringsValidUtf8(m)) << name;
  }
}

// A string field added to ChunkRecord (or its sections, slices or file metadata) must be
// added to utf8_repair.cc's ChunkRecordStringsValid and kChunkRecordStringFields too, else
// every save checks its records through reflection.
TEST(AllStringsValidUtf8Test, ChunkRecordsAreCheckedByTheirAccessors) {
  EXPECT_TRUE(ChunkRecordsCheckedByAccessors());
}

// The map of the metadata is checked by its typed API; a bad key or value alone is found.
TEST(AllStringsValidUtf8Test, FindsABadConfigurationKeyOrValue) {
  for (const auto& [key, value] :
       {std::pair<std::string, std::string>{"k\xFF", "v"}, {"k", "v\xFF"}}) {
    v1::Measurement m;
    (*m.mutable_metadata()->mutable_configuration())["fine"] = "fine";
    (*m.mutable_metadata()->mutable_configuration())[key] = value;
    EXPECT_FALSE(AllStringsValidUtf8(m)) << key << "=" << value;
  }
  v1::Measurement fine;
  (*fine.mutable_metadata()->mutable_configuration())["k"] = "v";
  EXPECT_TRUE(AllStringsValidUtf8(fine));
}

}  // namespace
}  // namespace store_internal
}  // namespace roastcoffea
