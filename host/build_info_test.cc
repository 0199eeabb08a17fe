// Compiled three ways (see BUILD): ROASTCOFFEA_BUILD_INFO() must describe this file's own
// compilation each time.
#include "host/build_info.h"

#include <string>

#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

TEST(BuildInfoTest, MatchesThisTranslationUnitsMacros) {
  const v1::BuildInfo info = ROASTCOFFEA_BUILD_INFO();
#ifdef __OPTIMIZE__
  EXPECT_TRUE(info.optimized());
#else
  EXPECT_FALSE(info.optimized());
#endif
#ifdef NDEBUG
  EXPECT_FALSE(info.assertions());
#else
  EXPECT_TRUE(info.assertions());
#endif
#if defined(__clang__)
  EXPECT_EQ(info.compiler().rfind("clang ", 0), 0u) << info.compiler();
#elif defined(__GNUC__)
  EXPECT_EQ(info.compiler(), "gcc " + std::to_string(__GNUC__) + "." +
                                 std::to_string(__GNUC_MINOR__) + "." +
                                 std::to_string(__GNUC_PATCHLEVEL__));
#endif
}

TEST(BuildInfoTest, BuildModeIsBazelsModeOrTheCompilersView) {
  const v1::BuildInfo info = ROASTCOFFEA_BUILD_INFO();
#if defined(ROASTCOFFEA_COMPILATION_MODE)
  const std::string mode = info.build_mode();
  EXPECT_TRUE(mode == "opt" || mode == "fastbuild" || mode == "dbg") << mode;
  // -c opt optimises; fastbuild and dbg do not (unless a --copt says otherwise).
  if (mode == "opt") {
    EXPECT_TRUE(info.optimized());
  }
#else
  EXPECT_EQ(info.build_mode(), info.optimized() ? "optimized" : "unoptimized");
#endif
}

#ifdef EXPECT_OPTIMIZED_NDEBUG
TEST(BuildInfoTest, OptimizedWithoutAssertions) {
  const v1::BuildInfo info = ROASTCOFFEA_BUILD_INFO();
  EXPECT_TRUE(info.optimized());
  EXPECT_FALSE(info.assertions());
  EXPECT_EQ(info.build_mode(), "optimized");
}
#endif

#ifdef EXPECT_UNOPTIMIZED_ASSERTIONS
TEST(BuildInfoTest, UnoptimizedWithAssertions) {
  const v1::BuildInfo info = ROASTCOFFEA_BUILD_INFO();
  EXPECT_FALSE(info.optimized());
  EXPECT_TRUE(info.assertions());
  EXPECT_EQ(info.build_mode(), "unoptimized");
}
#endif

}  // namespace
}  // namespace roastcoffea
