// `collect [run]` with --backend=workqueue: the built-in sample analysis as Work Queue tasks on
// local (or remote) workers.
#ifndef ROASTCOFFEA_TOOLS_WORKQUEUE_COMMAND_H_
#define ROASTCOFFEA_TOOLS_WORKQUEUE_COMMAND_H_

#include "tools/exit_code.h"
#include "tools/run_config.h"

namespace roastcoffea {

// Exit status as the thread pool's; 3 when chunks never came back (the measurement is saved
// without them). `argc`/`argv`: the command line, recorded in the measurement.
ExitCode RunSampleOnWorkQueue(const RunConfig& config, int argc, char** argv);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_WORKQUEUE_COMMAND_H_
