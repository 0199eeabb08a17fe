#include "backends/threadpool/symbolizer.h"

#include <gnu/libc-version.h>
#include <unistd.h>

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
  absl::StatusOr<std::vector<ElfFunctionSymbol>> symbols =
      ReadElfFunctionSymbols("/proc/self/exe");
  ASSERT_TRUE(symbols.ok()) << symbols.status();
  bool found = false;
  for (size_t i = 0; i < symbols->size(); ++i) {
    if (i > 0) {
      EXPECT_LT((*symbols)[i - 1].address, (*symbols)[i].address);
    }
    if (Demangle((*symbols)[i].name).find("StaticFunctionForSymbolizerTest") !=
        std::string::npos) {
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(SymbolizerTest, SymbolizesAStaticFunctionDemangledWithItsObject) {
  EXPECT_EQ(StaticFunctionForSymbolizerTest(2), 7);
  Symbolizer symbolizer;
  // An address inside the function, as a sampled pc would be.
  const SymbolizedFrame frame = symbolizer.Symbolize(AddressOf(&StaticFunctionForSymbolizerTest) + 1);
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
  absl::StatusOr<std::vector<ElfFunctionSymbol>> not_elf = ReadElfFunctionSymbols("/proc/self/status");
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
