// The `--backend=workqueue` flags of collect (defined in workqueue_flags.cc, declared below for
// the one reader, tools/collect_flags.cc), their typed config, and the options that config gives
// a Work Queue run of the sample analysis (workqueue_run.h):
//   --workers=N                 local work_queue_worker processes (default: the CPUs); 0: wait
//                               for workers started elsewhere
//   --chunks_per_task=1         chunks each task processes
//   --wq_port=0                 the manager's port (0: the first free one)
//   --wq_password_file=FILE     workers must present this password
//   --wq_connect_timeout=60     seconds to wait for the first worker
//   --wq_stall_timeout=120      seconds without a task coming back before the rest is given up
//   --wq_work_dir=DIR           logs, outputs, worker sandboxes (default: a temporary directory)
//   --wq_chunk_task=PATH        the chunk task program (default: the one built with collect)
#ifndef ROASTCOFFEA_TOOLS_WORKQUEUE_WORKQUEUE_FLAGS_H_
#define ROASTCOFFEA_TOOLS_WORKQUEUE_WORKQUEUE_FLAGS_H_

#include <functional>
#include <string>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "tools/workqueue/workqueue_config.h"
#include "tools/workqueue/workqueue_run.h"

ABSL_DECLARE_FLAG(int, workers);
ABSL_DECLARE_FLAG(int, chunks_per_task);
ABSL_DECLARE_FLAG(int, wq_port);
ABSL_DECLARE_FLAG(std::string, wq_password_file);
ABSL_DECLARE_FLAG(double, wq_connect_timeout);
ABSL_DECLARE_FLAG(double, wq_stall_timeout);
ABSL_DECLARE_FLAG(std::string, wq_work_dir);
ABSL_DECLARE_FLAG(std::string, wq_chunk_task);
ABSL_DECLARE_FLAG(std::string, wq_testing_fault);

namespace roastcoffea {
namespace workqueue {

// The Work Queue part of the options (workers, port, password, timeouts, programs, work
// directory) from `config`; the caller sets the dataset, chunk size and interval. Paths in
// `config` pass through `resolve_path` (collect: relative to where the user ran it).
// InvalidArgument naming each bad flag. Creates the temporary work directory when `work_dir` is
// empty (*temporary = true: the caller removes it).
absl::StatusOr<WorkQueueRunOptions> MakeWorkQueueRunOptions(
    const WorkQueueConfig& config,
    const std::function<std::string(const std::string&)>& resolve_path, bool* temporary);

// Where the chunk task program built with this binary is: beside it in bazel-bin, or in its
// runfiles. Empty when it is in neither place.
std::string FindChunkTaskProgram();

}  // namespace workqueue
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_WORKQUEUE_WORKQUEUE_FLAGS_H_
