// Facts of the machine this process runs on, for the metadata of a measurement: CPUs (online,
// in the affinity mask, cgroup quota), memory and its cgroup limit, the load average and the
// hypervisor's steal time at the start and end of a run, the CPU model and the kernel.
//
//   const host::HostSnapshot start = host::TakeHostSnapshot();
//   ... the run ...
//   v1::HostFacts facts = host::HostFactsOverRun(start, host::TakeHostSnapshot(), elapsed);
//
// What cannot be read is left unknown (std::nullopt, absent in HostFacts), never 0.
// Thread-safety: thread-safe. Cost: a dozen small /proc and /sys reads (tens of microseconds).
#ifndef ROASTCOFFEA_HOST_HOST_FACTS_H_
#define ROASTCOFFEA_HOST_HOST_FACTS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace host {

struct HostSnapshotOptions {
  // Where /proc and the cgroup hierarchy are read from (tests point these at a fake tree).
  std::string proc_root = "/proc";
  std::string cgroup_root = "/sys/fs/cgroup";
};

// The host as seen at one instant.
struct HostSnapshot {
  std::optional<int> online_cpus;                // sysconf(_SC_NPROCESSORS_ONLN)
  std::optional<int> affinity_cpus;              // sched_getaffinity
  std::optional<double> cgroup_cpu_quota_cores;  // absent: no quota, or unreadable
  std::optional<int64_t> memory_total_bytes;
  std::optional<int64_t> cgroup_memory_limit_bytes;  // absent: no limit, or unreadable
  std::optional<double> load_average_1m;
  std::optional<int64_t> steal_ticks;  // /proc/stat, summed over CPUs
  int64_t ticks_per_second = 100;      // USER_HZ, the unit of steal_ticks
  std::string cpu_model;               // "" when unknown
  std::string kernel;                  // uname -sr; "" when unknown
};

HostSnapshot TakeHostSnapshot(const HostSnapshotOptions& options = {});

// min(affinity CPUs (else online CPUs), cgroup CPU quota): the CPUs this process can keep busy
// at once. nullopt when none of them could be read.
std::optional<double> UsableCpus(const HostSnapshot& snapshot);

// UsableCpus of this process rounded down, at least 1; std::thread::hardware_concurrency (else 1)
// when none could be read: how many worker threads or processes keep its CPUs busy without
// making them wait. The snapshot is taken once per process (flag defaults call this at start-up).
int UsableWholeCpus();

// The facts of a run that took `elapsed_seconds` between the two snapshots. Static facts come
// from `start`; the load average from both; steal time is end - start (absent when either is
// unknown or the counter went backwards), as a fraction of online CPUs x elapsed.
// usable_cpus = min(affinity CPUs, cgroup quota), falling back to online CPUs.
v1::HostFacts HostFactsOverRun(const HostSnapshot& start, const HostSnapshot& end,
                               double elapsed_seconds);

}  // namespace host
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_HOST_HOST_FACTS_H_
