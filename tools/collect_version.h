// collect's version, as `--version` prints it and every measurement records it.
#ifndef ROASTCOFFEA_TOOLS_COLLECT_VERSION_H_
#define ROASTCOFFEA_TOOLS_COLLECT_VERSION_H_

namespace roastcoffea {

inline constexpr char kToolVersion[] = "0.1.0";

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_COLLECT_VERSION_H_
