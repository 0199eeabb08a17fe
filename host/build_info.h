// How the code that includes this header was compiled: compiler and version, optimisation,
// assertions, and Bazel's compilation mode when the target passes it.
//
//   v1::BuildInfo build = ROASTCOFFEA_BUILD_INFO();
//
// A macro, so that it reports the macros of the translation unit that expands it (__OPTIMIZE__,
// NDEBUG, __clang__ / __GNUC__): a C++ analysis linking //instrumentation reports its own build,
// not ours. Bazel's mode ("opt", "fastbuild", "dbg") is known when the target has
//   load("//host:build_info.bzl", "compilation_mode_defines")
//   local_defines = compilation_mode_defines(),
// otherwise build_mode says "optimized" or "unoptimized".
//
// Thread-safety: thread-safe. Cost: builds a small message.
#ifndef ROASTCOFFEA_HOST_BUILD_INFO_H_
#define ROASTCOFFEA_HOST_BUILD_INFO_H_

#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace host {

// What ROASTCOFFEA_BUILD_INFO() expands to; `compilation_mode` "" when unknown.
v1::BuildInfo MakeBuildInfo(const char* compiler, int major, int minor, int patch, bool optimized,
                            bool assertions, const char* compilation_mode);

}  // namespace host
}  // namespace roastcoffea

#define ROASTCOFFEA_BUILD_INFO()                                             \
  ::roastcoffea::host::MakeBuildInfo(                                        \
      ROASTCOFFEA_BUILD_INFO_COMPILER_, ROASTCOFFEA_BUILD_INFO_MAJOR_,       \
      ROASTCOFFEA_BUILD_INFO_MINOR_, ROASTCOFFEA_BUILD_INFO_PATCH_,          \
      ROASTCOFFEA_BUILD_INFO_OPTIMIZED_, ROASTCOFFEA_BUILD_INFO_ASSERTIONS_, \
      ROASTCOFFEA_BUILD_INFO_MODE_)

// Implementation details below: evaluated where this header is included.
#if defined(__clang__)
#define ROASTCOFFEA_BUILD_INFO_COMPILER_ "clang"
#define ROASTCOFFEA_BUILD_INFO_MAJOR_ __clang_major__
#define ROASTCOFFEA_BUILD_INFO_MINOR_ __clang_minor__
#define ROASTCOFFEA_BUILD_INFO_PATCH_ __clang_patchlevel__
#elif defined(__GNUC__)
#define ROASTCOFFEA_BUILD_INFO_COMPILER_ "gcc"
#define ROASTCOFFEA_BUILD_INFO_MAJOR_ __GNUC__
#define ROASTCOFFEA_BUILD_INFO_MINOR_ __GNUC_MINOR__
#define ROASTCOFFEA_BUILD_INFO_PATCH_ __GNUC_PATCHLEVEL__
#else
#define ROASTCOFFEA_BUILD_INFO_COMPILER_ "unknown"
#define ROASTCOFFEA_BUILD_INFO_MAJOR_ -1
#define ROASTCOFFEA_BUILD_INFO_MINOR_ -1
#define ROASTCOFFEA_BUILD_INFO_PATCH_ -1
#endif

#ifdef __OPTIMIZE__
#define ROASTCOFFEA_BUILD_INFO_OPTIMIZED_ true
#else
#define ROASTCOFFEA_BUILD_INFO_OPTIMIZED_ false
#endif

#ifdef NDEBUG
#define ROASTCOFFEA_BUILD_INFO_ASSERTIONS_ false
#else
#define ROASTCOFFEA_BUILD_INFO_ASSERTIONS_ true
#endif

#define ROASTCOFFEA_BUILD_INFO_STRINGIFY_(x) #x
#define ROASTCOFFEA_BUILD_INFO_STRING_(x) ROASTCOFFEA_BUILD_INFO_STRINGIFY_(x)
#ifdef ROASTCOFFEA_COMPILATION_MODE
#define ROASTCOFFEA_BUILD_INFO_MODE_ ROASTCOFFEA_BUILD_INFO_STRING_(ROASTCOFFEA_COMPILATION_MODE)
#else
#define ROASTCOFFEA_BUILD_INFO_MODE_ ""
#endif

#endif  // ROASTCOFFEA_HOST_BUILD_INFO_H_
