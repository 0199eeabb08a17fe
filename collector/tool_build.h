// How roastcoffea itself was built: collect, or the collector linked into an analysis.
#ifndef ROASTCOFFEA_COLLECTOR_TOOL_BUILD_H_
#define ROASTCOFFEA_COLLECTOR_TOOL_BUILD_H_

#include "schema/measurement.pb.h"

namespace roastcoffea {

// Bazel's -c mode, compiler, optimisation and assertions of this library's build.
v1::BuildInfo ToolBuildInfo();

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_COLLECTOR_TOOL_BUILD_H_
