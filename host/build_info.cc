#include "host/build_info.h"

#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace host {

v1::BuildInfo MakeBuildInfo(const char* compiler, int major, int minor, int patch, bool optimized,
                            bool assertions, const char* compilation_mode) {
  v1::BuildInfo info;
  info.set_compiler(major < 0 ? std::string(compiler)
                              : absl::StrCat(compiler, " ", major, ".", minor, ".", patch));
  const bool mode_known = compilation_mode != nullptr && *compilation_mode != '\0';
  info.set_build_mode(mode_known ? compilation_mode : (optimized ? "optimized" : "unoptimized"));
  info.set_optimized(optimized);
  info.set_assertions(assertions);
  return info;
}

}  // namespace host
}  // namespace roastcoffea
