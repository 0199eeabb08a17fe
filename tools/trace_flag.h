// collect's --trace=FILE: write the run's timeline (every chunk and its timed sections as
// slices on their worker threads, named as in the tables; counter tracks of per-thread CPU,
// process RSS and queued chunks; the run's metadata) for ui.perfetto.dev, in the format the
// file's extension
// names: `.json` Chrome trace-event JSON (built in memory, for small runs), `.pftrace`,
// `.perfetto-trace` or `.pb` Perfetto's protobuf trace format (streamed, for large runs).
// Works for `collect` (the run just measured) and `collect show DIR` (a saved measurement).
#ifndef ROASTCOFFEA_TOOLS_TRACE_FLAG_H_
#define ROASTCOFFEA_TOOLS_TRACE_FLAG_H_

#include <ostream>
#include <string>

#include "absl/flags/declare.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "schema/measurement.pb.h"

// Read into the modes' configs by tools/collect_flags.cc.
ABSL_DECLARE_FLAG(std::string, trace);

namespace roastcoffea {

enum class TraceFormat { kChromeJson, kPerfettoProto };

// The format for a --trace path, by its extension (case-insensitive). Any other extension,
// none included, is InvalidArgument naming the flag, the path and the accepted extensions.
absl::StatusOr<TraceFormat> TraceFormatForPath(const std::string& path);

// OK when `trace` (the value of --trace) is empty or has an accepted extension: lets collect
// reject a bad flag before a run rather than after it.
absl::Status ValidateTracePath(const std::string& trace);

// With `trace` empty: does nothing. Else writes the trace of `measurement` to that path
// (relative to the directory the user ran from) and says where on `out`. Errors name the path.
absl::Status WriteTrace(const v1::Measurement& measurement, const std::string& trace,
                        std::ostream& out);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_TRACE_FLAG_H_
