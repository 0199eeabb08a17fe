// `collect [run]`: checks the run's flags and output directory, makes the backend, starts the
// live view, then runs the sample analysis (threadpool, workqueue) or tracks an engine (dask,
// taskvine).
#ifndef ROASTCOFFEA_TOOLS_RUN_COMMAND_H_
#define ROASTCOFFEA_TOOLS_RUN_COMMAND_H_

#include "tools/collect_commands.h"
#include "tools/exit_code.h"
#include "tools/run_config.h"

namespace roastcoffea {

ExitCode RunCommand(const RunConfig& config, const Invocation& invocation);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_RUN_COMMAND_H_
