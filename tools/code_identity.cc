#include "tools/code_identity.h"

#include <elf.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace roastcoffea {
namespace {

// Notes larger than this are not build-ids: a corrupt header never makes us read gigabytes.
constexpr uint64_t kMaxNoteBytes = 1 << 20;
constexpr uint64_t kMaxProgramHeaders = 4096;

struct NoteSegment {
  uint64_t offset = 0;
  uint64_t size = 0;
};

template <typename Ehdr, typename Phdr>
absl::StatusOr<std::vector<NoteSegment>> NoteSegments(std::ifstream& file,
                                                      const std::string& path) {
  Ehdr header;
  file.seekg(0);
  if (!file.read(reinterpret_cast<char*>(&header), sizeof(header))) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": truncated ELF header"));
  }
  if (header.e_phentsize != sizeof(Phdr) || header.e_phnum > kMaxProgramHeaders) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": malformed ELF program headers"));
  }
  std::vector<NoteSegment> notes;
  for (uint64_t i = 0; i < header.e_phnum; ++i) {
    Phdr program;
    file.seekg(static_cast<std::streamoff>(header.e_phoff + i * sizeof(Phdr)));
    if (!file.read(reinterpret_cast<char*>(&program), sizeof(program))) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": truncated ELF program headers"));
    }
    if (program.p_type == PT_NOTE && program.p_filesz <= kMaxNoteBytes) {
      notes.push_back({program.p_offset, program.p_filesz});
    }
  }
  return notes;
}

std::string Hex(const unsigned char* bytes, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (size_t i = 0; i < size; ++i) {
    hex += kDigits[bytes[i] >> 4];
    hex += kDigits[bytes[i] & 0xF];
  }
  return hex;
}

uint32_t Word(const unsigned char* bytes) {
  uint32_t value;
  std::memcpy(&value, bytes, sizeof(value));
  return value;
}

}  // namespace

absl::StatusOr<std::string> ElfBuildId(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat(path, ": cannot be opened"));
  unsigned char ident[EI_NIDENT] = {};
  if (!file.read(reinterpret_cast<char*>(ident), EI_NIDENT) ||
      std::memcmp(ident, ELFMAG, SELFMAG) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not an ELF file"));
  }
  if (ident[EI_DATA] != ELFDATA2LSB) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a little-endian ELF file"));
  }
  absl::StatusOr<std::vector<NoteSegment>> notes =
      ident[EI_CLASS] == ELFCLASS64 ? NoteSegments<Elf64_Ehdr, Elf64_Phdr>(file, path)
      : ident[EI_CLASS] == ELFCLASS32
          ? NoteSegments<Elf32_Ehdr, Elf32_Phdr>(file, path)
          : absl::InvalidArgumentError(absl::StrCat(path, ": unknown ELF class"));
  if (!notes.ok()) return notes.status();
  for (const NoteSegment& segment : *notes) {
    std::vector<unsigned char> bytes(segment.size);
    file.clear();
    file.seekg(static_cast<std::streamoff>(segment.offset));
    if (!file.read(reinterpret_cast<char*>(bytes.data()),
                   static_cast<std::streamsize>(bytes.size()))) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": truncated ELF note"));
    }
    // Each note: namesz, descsz, type, then the name and the descriptor, each 4-byte aligned.
    size_t at = 0;
    while (at + 12 <= bytes.size()) {
      const uint64_t name_size = Word(&bytes[at]);
      const uint64_t desc_size = Word(&bytes[at + 4]);
      const uint32_t type = Word(&bytes[at + 8]);
      const uint64_t name_at = at + 12;
      const uint64_t desc_at = name_at + ((name_size + 3) & ~uint64_t{3});
      const uint64_t next = desc_at + ((desc_size + 3) & ~uint64_t{3});
      if (next > bytes.size()) break;
      if (type == NT_GNU_BUILD_ID && name_size == 4 &&
          std::memcmp(&bytes[name_at], "GNU", 4) == 0 && desc_size > 0) {
        return Hex(&bytes[desc_at], desc_size);
      }
      at = next;
    }
  }
  return absl::NotFoundError(absl::StrCat(path, ": ELF file without a build-id"));
}

absl::StatusOr<std::string> FindExecutable(const std::string& word,
                                           const std::string& search_path) {
  if (word.find('/') != std::string::npos) return word;
  for (absl::string_view directory : absl::StrSplit(search_path, ':', absl::SkipEmpty())) {
    const std::string candidate = absl::StrCat(directory, "/", word);
    if (access(candidate.c_str(), X_OK) == 0) {
      std::ifstream probe(candidate);
      if (probe.good()) return candidate;
    }
  }
  return absl::NotFoundError(absl::StrCat("'", word, "' is not an executable on PATH"));
}

}  // namespace roastcoffea
