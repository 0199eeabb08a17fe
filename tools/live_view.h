// collect --serve: the live view of a run (or of a saved measurement, for `show`), one per
// process, and waiting while it serves.
#ifndef ROASTCOFFEA_TOOLS_LIVE_VIEW_H_
#define ROASTCOFFEA_TOOLS_LIVE_VIEW_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "live/live_server.h"

namespace roastcoffea {

// The live view, when one was started; lives until collect exits.
std::unique_ptr<live::LiveServer>& LiveView();

// Starts the live view at `serve` ("[HOST]:PORT"; empty: none), before anything runs: a bad
// address or a port in use is a usage error now, not after the run.
absl::Status StartLiveView(const std::string& serve);

// Waits `duration` (InfiniteDuration: until a signal), or until SIGINT or SIGTERM, which end
// the wait instead of the process; the previous handlers are back afterwards.
void ServeUntilSignal(absl::Duration duration);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_LIVE_VIEW_H_
