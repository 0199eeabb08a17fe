// collect's own flags (defined in collect_flags.cc), read here and only here into each mode's
// typed config; the modes take configs, never flags. The backends' flags stay beside their
// factories (threadpool_collect.h, dask_collect.h, taskvine_collect.h,
// workqueue/workqueue_flags.h), --trace beside its writer (trace_flag.h).
// Thread-safety: call from the main thread after absl::ParseCommandLine.
#ifndef ROASTCOFFEA_TOOLS_COLLECT_FLAGS_H_
#define ROASTCOFFEA_TOOLS_COLLECT_FLAGS_H_

#include "tools/compare_command.h"
#include "tools/profile_command.h"
#include "tools/report_command.h"
#include "tools/run_config.h"
#include "tools/show_command.h"

namespace roastcoffea {

// Every field but `launch`, which the caller sets.
RunConfig RunConfigFromFlags();
ShowConfig ShowConfigFromFlags();
ReportConfig ReportConfigFromFlags();
ProfileConfig ProfileConfigFromFlags();
// `argc`/`argv`: the command line, to tell whether --regression_threshold was given.
CompareConfig CompareConfigFromFlags(int argc, char** argv);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_COLLECT_FLAGS_H_
