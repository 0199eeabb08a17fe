// Warnings about a run's host and build that every reader of its measurement should see, because
// they make timings unrepresentative (P1, P2, P4 of the UX study):
//
//   "oversubscribed"     in-process worker threads > usable CPUs: threads wait for a CPU, so CPU
//                        efficiency and speedup cannot exceed the usable CPUs.
//   "host_overloaded"    the 1-minute load average at the start or end of the run exceeded the
//                        online CPUs (at the end, less our own worker threads): other work
//                        competed for the CPUs.
//   "steal_time"         hypervisor steal above steal_fraction_threshold (5 %) of the online
//                        CPUs x elapsed: the virtual machine waited for its host.
//   "unoptimized_build"  the measured code was compiled without optimisation.
//
// Thread-safety: thread-safe (pure function). Cost: negligible.
#ifndef ROASTCOFFEA_HOST_HOST_WARNINGS_H_
#define ROASTCOFFEA_HOST_HOST_WARNINGS_H_

#include <optional>
#include <vector>

#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace host {

struct HostWarningOptions {
  // Threads of this process that ran the measured work (threadpool backend); absent for work
  // that ran elsewhere (cluster backends).
  std::optional<int> in_process_worker_threads;
  // How the measured code was built, when known. The tool's own build matters only when the
  // measured code is compiled into it (the built-in sample analysis): pass it here then.
  std::optional<v1::BuildInfo> measured_build;
  // "steal_time" above this fraction of online CPUs x elapsed.
  double steal_fraction_threshold = 0.05;
};

// The warnings that apply, in the order listed above; each message is one line with the
// numbers. Unknown facts (absent fields, 0 CPUs) trigger nothing.
std::vector<v1::Warning> HostWarnings(const v1::HostFacts& facts,
                                      const HostWarningOptions& options);

}  // namespace host
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_HOST_HOST_WARNINGS_H_
