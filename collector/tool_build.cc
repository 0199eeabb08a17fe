#include "collector/tool_build.h"

#include "host/build_info.h"

namespace roastcoffea {

// This file is compiled with Bazel's -c mode (collector/BUILD: local_defines).
v1::BuildInfo ToolBuildInfo() { return ROASTCOFFEA_BUILD_INFO(); }

}  // namespace roastcoffea
