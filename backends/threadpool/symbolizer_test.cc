#include "backends/threadpool/symbolizer.h"

#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace threadpool_internal {
namespace {

using ::testing::HasSubstr;

// Static (not exported): only the executable's .symtab knows its name.
__attribute__((noinline)) int StaticFunctionForSymbolizerTest(int x) {
  asm volatile("" : "+r"(x));
  return x * 3 + 1;
}

uintptr_t AddressOf(int (*function)(int)) { return reinterpret_cast<uintptr_t>(function); }

TEST(SymbolizerTest, ReadsStaticFunctionsFromTheExecutablesSymbolTable) {
  absl::StatusOr<std::vector<ElfFunctionSymbol>> symbols = ReadElfFunctionSymbols("/proc/self/exe");
  ASSERT_TRUE(symbols.ok()) << symbols.status();
  bool found = false;
  for (size_t i = 0; i < symbols->size(); ++i) {
    if (i > 0) {
      EXPECT_LT((*symbols)[i - 1].address, (*symbols)[i].address);
    }
    if (Demangle((*symbols)[i].name).find("StaticFunctionForSymbolizerTest") != std::string::npos) {
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(SymbolizerTest, UnwindTablesListEveryFunctionStart) {
  absl::StatusOr<std::vector<ElfFunctionSymbol>> symbols = ReadElfFunctionSymbols("/proc/self/exe");
  absl::StatusOr<std::vector<uint64_t>> starts = ReadEhFrameFunctionStarts("/proc/self/exe");
  ASSERT_TRUE(symbols.ok());
  ASSERT_TRUE(starts.ok()) << starts.status();
  ASSERT_FALSE(starts->empty());
  EXPECT_TRUE(std::is_sorted(starts->begin(), starts->end()));
  for (const ElfFunctionSymbol& symbol : *symbols) {
    if (Demangle(symbol.name).find("StaticFunctionForSymbolizerTest") == std::string::npos) {
      continue;
    }
    EXPECT_TRUE(std::binary_search(starts->begin(), starts->end(), symbol.address));
  }
  EXPECT_FALSE(ReadEhFrameFunctionStarts("/nonexistent/lib.so").ok());
}

// A function of a library that its symbol tables do not name: libc's internal functions
// (Debian ships libc.so.6 with .dynsym only) are named by library and start.
TEST(SymbolizerTest, UnnamedLibraryFunctionsGetLibraryAndOffset) {
  Dl_info info;
  link_map* map = nullptr;
  ASSERT_NE(dladdr1(reinterpret_cast<void*>(&getpid), &info, reinterpret_cast<void**>(&map),
                    RTLD_DL_LINKMAP),
            0);
  ASSERT_NE(map, nullptr);
  const std::string libc = map->l_name;
  absl::StatusOr<std::vector<ElfFunctionSymbol>> symbols = ReadElfFunctionSymbols(libc);
  absl::StatusOr<std::vector<uint64_t>> starts = ReadEhFrameFunctionStarts(libc);
  ASSERT_TRUE(symbols.ok() && starts.ok());
  // A function start no symbol covers.
  uint64_t unnamed = 0;
  for (uint64_t start : *starts) {
    bool covered = false;
    for (const ElfFunctionSymbol& symbol : *symbols) {
      if (start >= symbol.address &&
          (start < symbol.address + symbol.size || (symbol.size == 0 && start == symbol.address))) {
        covered = true;
        break;
      }
    }
    if (!covered) {
      unnamed = start;
      break;
    }
  }
  // Debian 12's libc.so.6 (the platform of this project) is stripped of .symtab.
  ASSERT_NE(unnamed, 0u) << libc << " names every function";
  Symbolizer symbolizer;
  const SymbolizedFrame frame = symbolizer.Symbolize(map->l_addr + unnamed + 1);
  const std::string file = libc.substr(libc.rfind('/') + 1);
  char expected[256];
  std::snprintf(expected, sizeof(expected), "%s+0x%llx", file.c_str(),
                static_cast<unsigned long long>(unnamed));
  EXPECT_EQ(frame.function, expected);
}

TEST(SymbolizerTest, SymbolizesAStaticFunctionDemangledWithItsObject) {
  EXPECT_EQ(StaticFunctionForSymbolizerTest(2), 7);
  Symbolizer symbolizer;
  // An address inside the function, as a sampled pc would be.
  const SymbolizedFrame frame =
      symbolizer.Symbolize(AddressOf(&StaticFunctionForSymbolizerTest) + 1);
  EXPECT_EQ(frame.function,
            "roastcoffea::threadpool_internal::(anonymous namespace)::"
            "StaticFunctionForSymbolizerTest(int)");
  char exe[4096];
  const ssize_t length = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  ASSERT_GT(length, 0);
  EXPECT_EQ(frame.object, std::string(exe, static_cast<size_t>(length)));
}

TEST(SymbolizerTest, SymbolizesSharedLibraryFunctions) {
  Symbolizer symbolizer;
  // A libc function that no sanitizer intercepts (ASan would resolve fclose to its own).
  const SymbolizedFrame frame =
      symbolizer.Symbolize(reinterpret_cast<uintptr_t>(&gnu_get_libc_version));
  EXPECT_EQ(frame.function, "gnu_get_libc_version");
  EXPECT_THAT(frame.object, HasSubstr("libc"));
}

TEST(SymbolizerTest, UnknownAddressesBecomeHexWithoutObject) {
  Symbolizer symbolizer;
  const SymbolizedFrame frame = symbolizer.Symbolize(0x10);
  EXPECT_EQ(frame.function, "0x10");
  EXPECT_EQ(frame.object, "");
}

TEST(SymbolizerTest, RejectsMissingAndNonElfFiles) {
  EXPECT_EQ(ReadElfFunctionSymbols("/nonexistent/roastcoffea").status().code(),
            absl::StatusCode::kNotFound);
  absl::StatusOr<std::vector<ElfFunctionSymbol>> not_elf =
      ReadElfFunctionSymbols("/proc/self/status");
  // /proc files report size 0: refused before parsing; a real text file is refused as non-ELF.
  EXPECT_EQ(not_elf.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string path = ::testing::TempDir() + "/not_elf.txt";
  FILE* file = std::fopen(path.c_str(), "w");
  ASSERT_NE(file, nullptr);
  std::fputs("this is not an ELF file, but it is long enough to hold an ELF header at least\n",
             file);
  std::fclose(file);
  absl::StatusOr<std::vector<ElfFunctionSymbol>> text = ReadElfFunctionSymbols(path);
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(text.status().message(), HasSubstr(path));
}

TEST(SymbolizerTest, DemanglesCppNamesAndKeepsOthers) {
  EXPECT_EQ(Demangle("_ZN11roastcoffea3FooEv"), "roastcoffea::Foo()");
  EXPECT_EQ(Demangle("main"), "main");
  EXPECT_EQ(Demangle(""), "");
}

}  // namespace
}  // namespace threadpool_internal
}  // namespace roastcoffea
