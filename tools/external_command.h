// `collect [run]` with --backend=dask or --backend=taskvine: the backend tracks the engine while
// COMMAND runs (or for --duration, or until Ctrl-C), or reads a finished run's record.
#ifndef ROASTCOFFEA_TOOLS_EXTERNAL_COMMAND_H_
#define ROASTCOFFEA_TOOLS_EXTERNAL_COMMAND_H_

#include <string>
#include <vector>

#include "backends/metrics_backend.h"
#include "collector/measurement_session.h"
#include "tools/exit_code.h"
#include "tools/run_config.h"
#include "tools/run_output.h"

namespace roastcoffea {

// Exit status: 0; 3 when the measurement is partial (the backend lost sight of the engine for a
// while); 4 when the command failed; 130 when interrupted; the measurement is saved in every
// case (6: elsewhere).
ExitCode RunWithEngineBackend(const RunConfig& config, const OutputPlan& plan,
                              SessionOptions session_options, AbstractMetricsBackend& backend,
                              const std::vector<std::string>& command);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_EXTERNAL_COMMAND_H_
