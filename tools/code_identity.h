// The measured code's identity, recorded in a run's configuration so that `collect compare`
// never takes two versions of an analysis for repeats of one: the ELF build-id of the
// analysis executable (collect itself for the built-in sample analysis, the command's
// executable for `-- COMMAND` runs) and the user's --label.
//
// Thread-safety: pure functions and file reads. Cost: reads the ELF and program headers and
// the notes of one file.
#ifndef ROASTCOFFEA_TOOLS_CODE_IDENTITY_H_
#define ROASTCOFFEA_TOOLS_CODE_IDENTITY_H_

#include <string>

#include "absl/status/statusor.h"

namespace roastcoffea {

// The configuration keys (export/compare.h reads them as part of the workload).
inline constexpr char kCodeBuildIdKey[] = "code build-id";
inline constexpr char kLabelKey[] = "label";

// The GNU build-id note (NT_GNU_BUILD_ID) of the ELF file at `path`, as lowercase hex.
// NotFound when the file is ELF without a build-id; InvalidArgument when it is not a readable
// 32- or 64-bit little-endian ELF file (e.g. a script); each message names the path.
absl::StatusOr<std::string> ElfBuildId(const std::string& path);

// The executable a command's first word runs: the word itself when it holds a '/', else the
// first regular executable file of that name on `search_path` (a PATH value). NotFound naming
// the word otherwise.
absl::StatusOr<std::string> FindExecutable(const std::string& word, const std::string& search_path);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_CODE_IDENTITY_H_
