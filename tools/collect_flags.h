// The one reader of collect's flags: every absl::GetFlag of the tool is in collect_flags.cc
// (tools/check_layering.sh fails on one anywhere else). It reads collect's own flags (defined
// there) and the backends' (defined beside their factories: threadpool_collect.h,
// dask_collect.h, taskvine_collect.h, workqueue/workqueue_flags.h; --trace beside its writer,
// trace_flag.h) into each mode's typed config; the modes and factories take configs, never
// flags.
// Thread-safety: call from the main thread after absl::ParseCommandLine.
#ifndef ROASTCOFFEA_TOOLS_COLLECT_FLAGS_H_
#define ROASTCOFFEA_TOOLS_COLLECT_FLAGS_H_

#include <string>
#include <vector>

#include "tools/compare_command.h"
#include "tools/profile_command.h"
#include "tools/report_command.h"
#include "tools/run_config.h"
#include "tools/show_command.h"

namespace roastcoffea {

// A flag of `run`: which backends it applies to and where in RunConfig it goes.
struct RunFlag {
  std::string name;
  std::vector<std::string> backends;  // empty: every backend
  void (*read)(RunConfig& config);    // reads the flag into its field of `config`
  bool hidden = false;                // accepted, not in the help: fault injection for the tests
};

// The flags of `run`, in the order its help lists them: the one list that gives the mode its
// flags, its hidden flags, which backend each needs, and the run's config.
const std::vector<RunFlag>& RunFlags();

// Every field but `launch`, which the caller sets.
RunConfig RunConfigFromFlags();
ShowConfig ShowConfigFromFlags();
ReportConfig ReportConfigFromFlags();
ProfileConfig ProfileConfigFromFlags();
// `argc`/`argv`: the command line, to tell whether --regression_threshold was given.
CompareConfig CompareConfigFromFlags(int argc, char** argv);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_COLLECT_FLAGS_H_
