#include "tools/trace_flag.h"

#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "store/atomic_file.h"
#include "tools/paths.h"
#include "trace/chrome_trace.h"
#include "trace/perfetto_trace.h"

ABSL_FLAG(std::string, trace, "",
          "Also write the run's timeline to this file for ui.perfetto.dev: each chunk (with its "
          "CPU time, bytes read and memory) and each timed section as a slice on its worker "
          "thread, counter tracks of per-thread CPU, process RSS and queued chunks, and the "
          "run's metadata. The extension picks the format: "
          ".json for Chrome trace-event JSON (built in memory, for small runs), .pftrace, "
          ".perfetto-trace or .pb for Perfetto's protobuf trace format (streamed, compact, for "
          "large runs). Relative paths are relative to the directory you ran from. Works with "
          "`show DIR` too.");

namespace roastcoffea {

absl::StatusOr<TraceFormat> TraceFormatForPath(const std::string& path) {
  const std::string name = absl::AsciiStrToLower(path.substr(path.find_last_of('/') + 1));
  if (absl::EndsWith(name, ".json")) return TraceFormat::kChromeJson;
  for (const char* extension : {".pftrace", ".perfetto-trace", ".pb"}) {
    if (absl::EndsWith(name, extension)) return TraceFormat::kPerfettoProto;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--trace must name a file ending in .json (Chrome trace JSON) or .pftrace, "
                   ".perfetto-trace or .pb (Perfetto protobuf), got '",
                   path, "'"));
}

absl::Status ValidateTracePath(const std::string& trace) {
  if (trace.empty()) return absl::OkStatus();
  return TraceFormatForPath(trace).status();
}

absl::Status WriteTrace(const v1::Measurement& measurement, const std::string& trace,
                        std::ostream& out) {
  if (trace.empty()) return absl::OkStatus();
  absl::StatusOr<TraceFormat> format = TraceFormatForPath(trace);
  if (!format.ok()) return format.status();
  const std::string path = ResolveUserPath(trace);
  // The trace writers (trace/) sit beside store/ and cannot ask it: the same rule as every other
  // output (never a measurement's own files), checked here.
  if (absl::Status allowed = CheckOutputPath(path); !allowed.ok()) {
    return absl::Status(allowed.code(), absl::StrCat("--trace: ", allowed.message()));
  }
  const absl::Status status = *format == TraceFormat::kPerfettoProto
                                  ? WritePerfettoTrace(measurement, path)
                                  : WriteChromeTrace(measurement, path);
  if (!status.ok()) return status;
  out << "Timeline written to " << path << " (open it in ui.perfetto.dev)\n";
  return absl::OkStatus();
}

}  // namespace roastcoffea
