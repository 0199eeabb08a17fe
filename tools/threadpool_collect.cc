#include "tools/threadpool_collect.h"

#include "absl/flags/flag.h"
#include "host/host_facts.h"

ABSL_FLAG(int, threads, roastcoffea::host::UsableWholeCpus(),
          "Worker threads that process chunks (default: the CPUs this process may use: its "
          "affinity mask and cgroup CPU quota).");
ABSL_FLAG(bool, profile, false,
          "threadpool: also take a statistical CPU profile of the worker threads (call trees "
          "per worker and per timed section, samples per chunk; under 1 % overhead at 100 Hz). "
          "Read it with `collect profile DIR`.");
ABSL_FLAG(int, profile_hz, 100,
          "threadpool with --profile: samples per second of each worker thread's CPU time, "
          "1..1000.");
