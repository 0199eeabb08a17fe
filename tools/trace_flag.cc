#include "tools/trace_flag.h"

#include <string>

#include "absl/flags/flag.h"
#include "instrumentation/chrome_trace.h"
#include "tools/paths.h"

ABSL_FLAG(std::string, trace, "",
          "Also write the run's timeline to this file as Chrome trace-event JSON (open it in "
          "ui.perfetto.dev): each chunk and each timed section as a slice on its worker thread. "
          "Relative paths are relative to the directory you ran from. Works with `show DIR` too.");

namespace roastcoffea {

absl::Status WriteTraceIfRequested(const v1::Measurement& measurement, std::ostream& out) {
  const std::string flag = absl::GetFlag(FLAGS_trace);
  if (flag.empty()) return absl::OkStatus();
  const std::string path = ResolveUserPath(flag);
  if (absl::Status status = WriteChromeTrace(measurement.chunks(), path); !status.ok()) {
    return status;
  }
  out << "Timeline written to " << path << " (open it in ui.perfetto.dev)\n";
  return absl::OkStatus();
}

}  // namespace roastcoffea
