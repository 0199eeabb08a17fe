// `collect [run]` with --backend=threadpool: the built-in sample analysis on the thread pool
// in this process, every chunk tracked and the worker threads sampled.
#ifndef ROASTCOFFEA_TOOLS_THREADPOOL_COMMAND_H_
#define ROASTCOFFEA_TOOLS_THREADPOOL_COMMAND_H_

#include "collector/measurement_session.h"
#include "tools/backend_factory.h"
#include "tools/exit_code.h"
#include "tools/run_config.h"
#include "tools/run_output.h"

namespace roastcoffea {

// Exit status: 0; 1 when a chunk failed; 130 when interrupted; 6 when saved elsewhere.
ExitCode RunSampleOnThreadPool(const RunConfig& config, const OutputPlan& plan,
                               SessionOptions session_options, CollectBackend& backend);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_THREADPOOL_COMMAND_H_
