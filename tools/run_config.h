// The options of `collect [run]` that every backend shares: where the measurement goes, how the
// workers are sampled, the sample analysis' dataset, the live view, and each backend's own
// config. Built from the flags in one place (tools/collect_flags.h); the backends' flags are
// defined beside their factories (threadpool_collect.h, dask_collect.h, taskvine_collect.h,
// workqueue/workqueue_flags.h).
#ifndef ROASTCOFFEA_TOOLS_RUN_CONFIG_H_
#define ROASTCOFFEA_TOOLS_RUN_CONFIG_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "tools/dask_collect.h"
#include "tools/follow_up_command.h"
#include "tools/taskvine_collect.h"
#include "tools/threadpool_engine.h"
#include "tools/workqueue/workqueue_config.h"

namespace roastcoffea {

struct RunConfig {
  std::string backend;             // --backend: threadpool, dask, taskvine or workqueue
  std::string output_dir;          // --output_dir, as given (relative to where collect was run)
  std::string name;                // --name; empty: the UTC start time
  std::string label;               // --label: the measured code's version
  std::string tables;              // --tables: auto, unicode or ascii
  std::string trace;               // --trace: the timeline file; empty: none
  std::string serve;               // --serve: [HOST]:PORT of the live view; empty: none
  bool html = false;               // --html: also write the HTML report
  double interval = 0;             // --interval, seconds between two samples
  double grace_period = 0;         // --grace_period, seconds
  double checkpoint_interval = 0;  // --checkpoint_interval, seconds; 0: none
  double duration = 0;             // --duration (dask, taskvine), seconds; 0: until Ctrl-C
  double serve_linger = 0;         // --serve_linger, seconds

  // The sample analysis (threadpool, workqueue).
  int64_t events_per_file = 0;         // --events_per_file
  int files_per_dataset = 0;           // --files_per_dataset
  uint64_t seed = 0;                   // --seed
  int64_t chunk_size = 0;              // --chunk_size
  std::string cache_dir;               // --cache_dir, as given; empty: the default cache
  ThreadPoolEngineOptions threadpool;  // --threads, --profile, --profile_hz

  // The engines' own flags.
  DaskConfig dask;                       // --scheduler, --dask_*
  TaskVineConfig taskvine;               // --taskvine_logs, --follow, --taskvine_category
  workqueue::WorkQueueConfig workqueue;  // --workers, --chunks_per_task, --wq_*

  // How the user ran collect, for the commands it prints.
  LaunchContext launch;
};

// Every problem with the run's flags at once (these and the thread pool's), each naming its
// flag, as one usage error; OK when there is none. Checked before anything runs.
absl::Status ValidateRunConfig(const RunConfig& config);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_RUN_CONFIG_H_
