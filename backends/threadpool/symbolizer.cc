#include "backends/threadpool/symbolizer.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace roastcoffea {
namespace threadpool_internal {
namespace {

// A read-only mapping of a whole file, unmapped on destruction.
class MappedFile {
 public:
  static absl::StatusOr<MappedFile> Open(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      const int error = errno;
      const std::string message = absl::StrCat("cannot open ", path, ": ", strerror(error));
      if (error == ENOENT) return absl::NotFoundError(message);
      if (error == EACCES) return absl::PermissionDeniedError(message);
      return absl::InternalError(message);
    }
    struct stat info;
    if (fstat(fd, &info) != 0 || info.st_size <= 0) {
      close(fd);
      return absl::InvalidArgumentError(absl::StrCat(path, " is empty or cannot be read"));
    }
    const size_t size = static_cast<size_t>(info.st_size);
    void* data = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (data == MAP_FAILED) {
      return absl::InternalError(absl::StrCat("cannot map ", path, ": ", strerror(errno)));
    }
    return MappedFile(static_cast<const char*>(data), size);
  }
  MappedFile(MappedFile&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  MappedFile& operator=(MappedFile&&) = delete;
  ~MappedFile() {
    if (data_ != nullptr) munmap(const_cast<char*>(data_), size_);
  }

  const char* data() const { return data_; }
  size_t size() const { return size_; }
  // Whether [offset, offset + count * element) lies inside the file (overflow-safe).
  bool Contains(uint64_t offset, uint64_t count, uint64_t element) const {
    if (offset > size_) return false;
    if (element != 0 && count > (size_ - offset) / element) return false;
    return true;
  }

 private:
  MappedFile(const char* data, size_t size) : data_(data), size_(size) {}
  const char* data_;
  size_t size_;
};

// The ELF header of a 64-bit ELF file of this machine's byte order (the readers below copy its
// fields as native integers); InvalidArgument naming `path` otherwise.
absl::StatusOr<Elf64_Ehdr> ReadElfHeader(const MappedFile& file, const std::string& path) {
  Elf64_Ehdr header;
  if (file.size() < sizeof(header)) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is not an ELF file (too short)"));
  }
  std::memcpy(&header, file.data(), sizeof(header));
  constexpr unsigned char kNativeData =
      __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != kNativeData) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is not a 64-bit ELF file of this machine's byte order"));
  }
  return header;
}

bool IsFunction(const Elf64_Sym& symbol) {
  const int type = ELF64_ST_TYPE(symbol.st_info);
  return (type == STT_FUNC || type == STT_GNU_IFUNC) && symbol.st_shndx != SHN_UNDEF &&
         symbol.st_value != 0;
}

// The function symbols of one symbol table section; InvalidArgument when it is out of bounds.
absl::Status ReadSymbolTable(const MappedFile& file, const std::string& path,
                             const Elf64_Shdr* sections, uint16_t section_count,
                             const Elf64_Shdr& table, std::vector<ElfFunctionSymbol>& out) {
  if (table.sh_entsize != sizeof(Elf64_Sym) || table.sh_link >= section_count ||
      !file.Contains(table.sh_offset, table.sh_size / sizeof(Elf64_Sym), sizeof(Elf64_Sym))) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": malformed symbol table"));
  }
  const Elf64_Shdr& strings = sections[table.sh_link];
  if (!file.Contains(strings.sh_offset, strings.sh_size, 1)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": malformed string table"));
  }
  const char* string_data = file.data() + strings.sh_offset;
  const size_t count = table.sh_size / sizeof(Elf64_Sym);
  for (size_t i = 0; i < count; ++i) {
    Elf64_Sym symbol;
    std::memcpy(&symbol, file.data() + table.sh_offset + i * sizeof(Elf64_Sym), sizeof(symbol));
    if (!IsFunction(symbol) || symbol.st_name >= strings.sh_size) continue;
    const char* name = string_data + symbol.st_name;
    const size_t length = strnlen(name, strings.sh_size - symbol.st_name);
    if (length == 0) continue;
    out.push_back(ElfFunctionSymbol{symbol.st_value, symbol.st_size, std::string(name, length)});
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<ElfFunctionSymbol>> ReadElfFunctionSymbols(const std::string& path) {
  absl::StatusOr<MappedFile> file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  absl::StatusOr<Elf64_Ehdr> read = ReadElfHeader(*file, path);
  if (!read.ok()) return read.status();
  const Elf64_Ehdr& header = *read;
  if (header.e_shentsize != sizeof(Elf64_Shdr) ||
      !file->Contains(header.e_shoff, header.e_shnum, sizeof(Elf64_Shdr))) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": malformed section headers"));
  }
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  if (header.e_shnum > 0) {
    std::memcpy(sections.data(), file->data() + header.e_shoff,
                sections.size() * sizeof(Elf64_Shdr));
  }
  const Elf64_Shdr* symtab = nullptr;
  const Elf64_Shdr* dynsym = nullptr;
  for (const Elf64_Shdr& section : sections) {
    if (section.sh_type == SHT_SYMTAB) symtab = &section;
    if (section.sh_type == SHT_DYNSYM) dynsym = &section;
  }
  std::vector<ElfFunctionSymbol> functions;
  const Elf64_Shdr* table = symtab != nullptr ? symtab : dynsym;
  if (table != nullptr) {
    absl::Status status =
        ReadSymbolTable(*file, path, sections.data(), header.e_shnum, *table, functions);
    if (!status.ok()) return status;
  }
  // By address; at one address prefer the symbol with a size (aliases keep the first name).
  std::sort(functions.begin(), functions.end(),
            [](const ElfFunctionSymbol& a, const ElfFunctionSymbol& b) {
              if (a.address != b.address) return a.address < b.address;
              return a.size > b.size;
            });
  functions.erase(std::unique(functions.begin(), functions.end(),
                              [](const ElfFunctionSymbol& a, const ElfFunctionSymbol& b) {
                                return a.address == b.address;
                              }),
                  functions.end());
  return functions;
}

absl::StatusOr<std::vector<uint64_t>> ReadEhFrameFunctionStarts(const std::string& path) {
  absl::StatusOr<MappedFile> file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  absl::StatusOr<Elf64_Ehdr> read = ReadElfHeader(*file, path);
  if (!read.ok()) return read.status();
  const Elf64_Ehdr& header = *read;
  if (header.e_phentsize != sizeof(Elf64_Phdr) ||
      !file->Contains(header.e_phoff, header.e_phnum, sizeof(Elf64_Phdr))) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": malformed program headers"));
  }
  std::vector<uint64_t> starts;
  for (uint16_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    std::memcpy(&segment, file->data() + header.e_phoff + i * sizeof(Elf64_Phdr), sizeof(segment));
    if (segment.p_type != PT_GNU_EH_FRAME) continue;
    // version, eh_frame_ptr encoding, fde_count encoding, table encoding.
    constexpr uint8_t kUdata4 = 0x03, kSdata4 = 0x0b, kPcrel = 0x10, kDatarel = 0x30;
    if (segment.p_filesz < 12 || !file->Contains(segment.p_offset, segment.p_filesz, 1)) break;
    const unsigned char* hdr =
        reinterpret_cast<const unsigned char*>(file->data() + segment.p_offset);
    const uint8_t pointer_encoding = hdr[1];
    if (hdr[0] != 1 || (pointer_encoding & 0x0f) != kSdata4 ||
        ((pointer_encoding & 0x70) != kPcrel && (pointer_encoding & 0x70) != 0) ||
        hdr[2] != kUdata4 || hdr[3] != (kDatarel | kSdata4)) {
      break;  // an encoding compilers do not emit for this table
    }
    uint32_t count = 0;
    std::memcpy(&count, hdr + 8, sizeof(count));
    if (count > (segment.p_filesz - 12) / 8) break;
    starts.reserve(count);
    for (uint32_t k = 0; k < count; ++k) {
      int32_t initial = 0;
      std::memcpy(&initial, hdr + 12 + 8 * static_cast<size_t>(k), sizeof(initial));
      starts.push_back(segment.p_vaddr + static_cast<uint64_t>(static_cast<int64_t>(initial)));
    }
    break;
  }
  std::sort(starts.begin(), starts.end());
  return starts;
}

std::string Demangle(const std::string& name) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return name;
  std::string result(demangled);
  std::free(demangled);
  return result;
}

const Symbolizer::ObjectSymbols& Symbolizer::SymbolsOf(const std::string& key,
                                                       const std::string& file_path,
                                                       const std::string& display_path) {
  auto it = objects_.find(key);
  if (it != objects_.end()) return it->second;
  ObjectSymbols& symbols = objects_[key];
  symbols.display_path = display_path;
  // Unreadable objects (the vDSO has no file) fall back to dladdr's exported names.
  absl::StatusOr<std::vector<ElfFunctionSymbol>> functions = ReadElfFunctionSymbols(file_path);
  if (functions.ok()) symbols.functions = *std::move(functions);
  absl::StatusOr<std::vector<uint64_t>> starts = ReadEhFrameFunctionStarts(file_path);
  if (starts.ok()) symbols.unwind_starts = *std::move(starts);
  return symbols;
}

SymbolizedFrame Symbolizer::Symbolize(uintptr_t pc) {
  SymbolizedFrame frame;
  frame.function = absl::StrFormat("0x%x", pc);
  Dl_info info;
  link_map* map = nullptr;
  if (dladdr1(reinterpret_cast<void*>(pc), &info, reinterpret_cast<void**>(&map),
              RTLD_DL_LINKMAP) == 0 ||
      map == nullptr) {
    return frame;
  }
  // The main program's link map has an empty name; its file is /proc/self/exe.
  const bool main_program = map->l_name == nullptr || map->l_name[0] == '\0';
  std::string display_path;
  if (main_program) {
    char buffer[4096];
    const ssize_t length = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
    display_path = length > 0 ? std::string(buffer, static_cast<size_t>(length))
                              : std::string(info.dli_fname != nullptr ? info.dli_fname : "");
  } else {
    display_path = map->l_name;
  }
  const ObjectSymbols& symbols =
      SymbolsOf(main_program ? std::string() : display_path,
                main_program ? std::string("/proc/self/exe") : display_path, display_path);
  frame.object = symbols.display_path;

  const uint64_t relative = static_cast<uint64_t>(pc) - static_cast<uint64_t>(map->l_addr);
  const std::vector<ElfFunctionSymbol>& functions = symbols.functions;
  auto after = std::upper_bound(
      functions.begin(), functions.end(), relative,
      [](uint64_t address, const ElfFunctionSymbol& symbol) { return address < symbol.address; });
  if (after != functions.begin()) {
    const ElfFunctionSymbol& candidate = *(after - 1);
    if (candidate.size == 0 || relative < candidate.address + candidate.size) {
      frame.function = Demangle(candidate.name);
      return frame;
    }
  }
  if (info.dli_sname != nullptr && info.dli_sname[0] != '\0') {
    frame.function = Demangle(info.dli_sname);
    return frame;
  }
  // A function the object does not name (stripped library): named by its object and start,
  // one frame per function; without unwind tables one frame per object, so that its
  // addresses do not split the tree.
  const std::vector<uint64_t>& starts = symbols.unwind_starts;
  auto next = std::upper_bound(starts.begin(), starts.end(), relative);
  if (next != starts.begin()) {
    const size_t slash = symbols.display_path.rfind('/');
    const std::string object =
        slash == std::string::npos ? symbols.display_path : symbols.display_path.substr(slash + 1);
    frame.function = absl::StrFormat("%s+0x%x", object, *(next - 1));
  } else {
    frame.function = "??";
  }
  return frame;
}

}  // namespace threadpool_internal
}  // namespace roastcoffea
