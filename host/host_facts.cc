#include "host/host_facts.h"

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "host/linux_files.h"

namespace roastcoffea {
namespace host {
namespace {

std::optional<int> AffinityCpus() {
  // A fixed cpu_set_t holds 1024 CPUs; larger machines need a dynamically sized set.
  for (int cpus = CPU_SETSIZE; cpus <= (1 << 16); cpus *= 2) {
    const size_t size = CPU_ALLOC_SIZE(cpus);
    cpu_set_t* set = CPU_ALLOC(cpus);
    if (set == nullptr) return std::nullopt;
    CPU_ZERO_S(size, set);
    const int result = sched_getaffinity(0, size, set);
    const int count = result == 0 ? CPU_COUNT_S(size, set) : 0;
    CPU_FREE(set);
    if (result == 0) return count > 0 ? std::optional<int>(count) : std::nullopt;
    if (errno != EINVAL) return std::nullopt;
  }
  return std::nullopt;
}

template <typename T, typename Parser>
std::optional<T> ReadAndParse(const std::string& path, Parser parse) {
  absl::StatusOr<std::string> text = ReadSmallFile(path);
  if (!text.ok()) return std::nullopt;
  absl::StatusOr<T> value = parse(*text);
  if (!value.ok()) return std::nullopt;
  return *std::move(value);
}

}  // namespace

HostSnapshot TakeHostSnapshot(const HostSnapshotOptions& options) {
  HostSnapshot snapshot;
  const LinuxFileRoots roots{options.proc_root, options.cgroup_root};
  if (const long online = sysconf(_SC_NPROCESSORS_ONLN); online > 0) {
    snapshot.online_cpus = static_cast<int>(online);
  }
  snapshot.affinity_cpus = AffinityCpus();
  snapshot.cgroup_cpu_quota_cores = CgroupCpuQuotaCores(roots);
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) {
    snapshot.memory_total_bytes = static_cast<int64_t>(pages) * page_size;
  }
  snapshot.cgroup_memory_limit_bytes = CgroupMemoryLimitBytes(roots);
  snapshot.load_average_1m =
      ReadAndParse<double>(options.proc_root + "/loadavg", ParseLoadAverage1m);
  snapshot.steal_ticks = ReadAndParse<int64_t>(options.proc_root + "/stat", ParseStealTicks);
  if (const long ticks = sysconf(_SC_CLK_TCK); ticks > 0) snapshot.ticks_per_second = ticks;
  snapshot.cpu_model =
      ReadAndParse<std::string>(options.proc_root + "/cpuinfo", ParseCpuModel).value_or("");
  struct utsname name;
  if (uname(&name) == 0) snapshot.kernel = absl::StrCat(name.sysname, " ", name.release);
  return snapshot;
}

std::optional<double> UsableCpus(const HostSnapshot& snapshot) {
  // The CPUs this process can run on at once: its affinity mask, capped by its cgroup quota.
  std::optional<double> usable;
  if (snapshot.affinity_cpus.has_value()) {
    usable = *snapshot.affinity_cpus;
  } else if (snapshot.online_cpus.has_value()) {
    usable = *snapshot.online_cpus;
  }
  if (snapshot.cgroup_cpu_quota_cores.has_value()) {
    usable = std::min(usable.value_or(*snapshot.cgroup_cpu_quota_cores),
                      *snapshot.cgroup_cpu_quota_cores);
  }
  return usable;
}

int UsableWholeCpus() {
  static const int cpus = [] {
    if (const std::optional<double> usable = UsableCpus(TakeHostSnapshot())) {
      return std::max(1, static_cast<int>(std::floor(*usable)));
    }
    const unsigned online = std::thread::hardware_concurrency();
    return online == 0 ? 1 : static_cast<int>(online);
  }();
  return cpus;
}

v1::HostFacts HostFactsOverRun(const HostSnapshot& start, const HostSnapshot& end,
                               double elapsed_seconds) {
  v1::HostFacts facts;
  if (start.online_cpus.has_value()) facts.set_online_cpus(*start.online_cpus);
  facts.set_cpu_model(start.cpu_model);
  if (start.affinity_cpus.has_value()) facts.set_affinity_cpus(*start.affinity_cpus);
  if (start.cgroup_cpu_quota_cores.has_value()) {
    facts.set_cgroup_cpu_quota_cores(*start.cgroup_cpu_quota_cores);
  }
  const std::optional<double> usable = UsableCpus(start);
  if (usable.has_value()) facts.set_usable_cpus(*usable);
  if (start.memory_total_bytes.has_value()) facts.set_memory_total_bytes(*start.memory_total_bytes);
  if (start.cgroup_memory_limit_bytes.has_value()) {
    facts.set_cgroup_memory_limit_bytes(*start.cgroup_memory_limit_bytes);
  }
  if (start.load_average_1m.has_value()) facts.set_load_average_1m_start(*start.load_average_1m);
  if (end.load_average_1m.has_value()) facts.set_load_average_1m_end(*end.load_average_1m);
  if (start.steal_ticks.has_value() && end.steal_ticks.has_value() &&
      *end.steal_ticks >= *start.steal_ticks && start.ticks_per_second > 0) {
    const double steal = static_cast<double>(*end.steal_ticks - *start.steal_ticks) /
                         static_cast<double>(start.ticks_per_second);
    facts.set_steal_seconds(steal);
    if (start.online_cpus.has_value() && elapsed_seconds > 0) {
      facts.set_steal_fraction(steal / (*start.online_cpus * elapsed_seconds));
    }
  }
  facts.set_kernel(start.kernel);
  return facts;
}

}  // namespace host
}  // namespace roastcoffea
