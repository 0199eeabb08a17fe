#include "tools/code_identity.h"

#include <elf.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

// A minimal 64-bit ELF file: the header, one PT_NOTE program header, and a note list of an
// unrelated note followed by the GNU build-id note holding `id`.
std::string WriteElfWithBuildId(const std::string& name, const std::vector<unsigned char>& id) {
  std::vector<unsigned char> notes;
  auto word = [&notes](uint32_t value) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(&value);
    notes.insert(notes.end(), bytes, bytes + 4);
  };
  word(4), word(4), word(NT_GNU_ABI_TAG);  // another note first: skipped
  notes.insert(notes.end(), {'G', 'N', 'U', 0, 0, 0, 0, 0});
  word(4), word(static_cast<uint32_t>(id.size())), word(NT_GNU_BUILD_ID);
  notes.insert(notes.end(), {'G', 'N', 'U', 0});
  notes.insert(notes.end(), id.begin(), id.end());
  while (notes.size() % 4 != 0) notes.push_back(0);
  Elf64_Ehdr header = {};
  std::memcpy(header.e_ident, ELFMAG, SELFMAG);
  header.e_ident[EI_CLASS] = ELFCLASS64;
  header.e_ident[EI_DATA] = ELFDATA2LSB;
  header.e_phoff = sizeof(Elf64_Ehdr);
  header.e_phentsize = sizeof(Elf64_Phdr);
  header.e_phnum = 1;
  Elf64_Phdr program = {};
  program.p_type = PT_NOTE;
  program.p_offset = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr);
  program.p_filesz = notes.size();
  const std::string path = TempPath(name);
  std::ofstream file(path, std::ios::binary);
  file.write(reinterpret_cast<const char*>(&header), sizeof(header));
  file.write(reinterpret_cast<const char*>(&program), sizeof(program));
  file.write(reinterpret_cast<const char*>(notes.data()),
             static_cast<std::streamsize>(notes.size()));
  return path;
}

TEST(ElfBuildIdTest, ReadsTheGnuBuildIdNote) {
  const std::string path = WriteElfWithBuildId("with_id", {0xde, 0xad, 0xbe, 0xef, 0x01, 0x7f});
  const absl::StatusOr<std::string> id = ElfBuildId(path);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, "deadbeef017f");
}

TEST(ElfBuildIdTest, TheTestBinaryHasOneAndItIsStable) {
  // Bazel links with a build-id (sha1: 40 hex digits, md5: 32).
  const absl::StatusOr<std::string> id = ElfBuildId("/proc/self/exe");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_TRUE(id->size() == 40 || id->size() == 32) << *id;
  EXPECT_EQ(*ElfBuildId("/proc/self/exe"), *id);
}

TEST(ElfBuildIdTest, ScriptsTruncatedFilesAndMissingFilesAreErrorsNamingThePath) {
  const std::string script = TempPath("work.py");
  std::ofstream(script) << "#!/usr/bin/env python3\nprint(1)\n";
  absl::StatusOr<std::string> id = ElfBuildId(script);
  EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(id.status().message(), script)) << id.status();
  const std::string truncated = TempPath("truncated");
  std::ofstream(truncated, std::ios::binary) << "\x7f"
                                                "ELF\x02\x01";
  id = ElfBuildId(truncated);
  EXPECT_FALSE(id.ok());
  EXPECT_TRUE(absl::StrContains(id.status().message(), truncated)) << id.status();
  id = ElfBuildId(TempPath("does-not-exist"));
  EXPECT_EQ(id.status().code(), absl::StatusCode::kNotFound);
}

TEST(FindExecutableTest, SearchesThePathUnlessTheWordHasASlash) {
  EXPECT_EQ(*FindExecutable("./run.sh", "/bin"), "./run.sh");
  const absl::StatusOr<std::string> sh = FindExecutable("sh", "/nonexistent:/bin:/usr/bin");
  ASSERT_TRUE(sh.ok()) << sh.status();
  EXPECT_TRUE(absl::EndsWith(*sh, "/sh")) << *sh;
  const absl::StatusOr<std::string> none = FindExecutable("no-such-program-xyz", "/bin");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(none.status().message(), "no-such-program-xyz"));
}

}  // namespace
}  // namespace roastcoffea
