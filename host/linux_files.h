// Internal to //host and //backends/threadpool: reading the Linux /proc and cgroup files that
// describe the machine and the limits of this process. Parsers take the file text so they can
// be tested on sample text; readers never crash on a missing, unreadable or malformed file.
//
// Thread-safety: every function is thread-safe (no shared state).
// Cost: one small file read per file (a few microseconds).
#ifndef ROASTCOFFEA_HOST_LINUX_FILES_H_
#define ROASTCOFFEA_HOST_LINUX_FILES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace roastcoffea {
namespace host {

// Where the files are read from; tests point these at a fake tree.
struct LinuxFileRoots {
  std::string proc = "/proc";
  std::string cgroup = "/sys/fs/cgroup";
};

// /proc/cpuinfo of a 512-CPU machine is about 1 MiB; the other files are a few lines.
inline constexpr int64_t kMaxSmallFileBytes = int64_t{4} << 20;

// The whole content of `path` (a regular file, at most kMaxSmallFileBytes; io/bounded_read.h).
// NotFound / PermissionDenied / Unavailable naming the path.
absl::StatusOr<std::string> ReadSmallFile(const std::string& path);

// Finds in /proc/self/cgroup text the cgroup path of the v2 hierarchy ("0::<path>") when
// `controller` is empty, else of the v1 hierarchy listing `controller` ("4:memory:<path>").
// NotFound when there is no such line.
absl::StatusOr<std::string> ParseCgroupPath(absl::string_view text, absl::string_view controller);

// Parses a cgroup memory limit file (v2 memory.max or v1 memory.limit_in_bytes). Returns
// std::nullopt for "max" (no limit) and for values beyond int64 (v1's "unlimited").
absl::StatusOr<std::optional<int64_t>> ParseCgroupMemoryLimit(absl::string_view text);

// Parses cgroup v2 cpu.max ("<quota> <period>" in microseconds, quota "max" for none) into
// cores (quota / period). std::nullopt for "max".
absl::StatusOr<std::optional<double>> ParseCgroupV2CpuMax(absl::string_view text);

// Parses cgroup v1 cpu.cfs_quota_us and cpu.cfs_period_us into cores. std::nullopt for a
// quota of -1 (none).
absl::StatusOr<std::optional<double>> ParseCgroupV1CpuQuota(absl::string_view quota_text,
                                                            absl::string_view period_text);

// The "model name" of the first processor in /proc/cpuinfo text (some architectures call it
// "Processor" or "cpu model"). NotFound when there is none.
absl::StatusOr<std::string> ParseCpuModel(absl::string_view text);

// Steal ticks (USER_HZ) summed over CPUs: the 8th value of the "cpu " line of /proc/stat.
absl::StatusOr<int64_t> ParseStealTicks(absl::string_view text);

// The 1-minute load average: the first value of /proc/loadavg.
absl::StatusOr<double> ParseLoadAverage1m(absl::string_view text);

// Physical memory of the machine (sysconf); at least 1.
int64_t PhysicalMemoryBytes();

// The cgroup memory limit of this process: v2 memory.max, else v1 memory.limit_in_bytes (of the
// process's own cgroup, then of the hierarchy root). The first readable file decides.
// std::nullopt when there is no limit, it is not below the physical memory, or nothing could
// be read.
std::optional<int64_t> CgroupMemoryLimitBytes(const LinuxFileRoots& roots = {});

// The cgroup CPU quota of this process in cores: v2 cpu.max, else v1 cpu.cfs_quota_us /
// cpu.cfs_period_us, searched like CgroupMemoryLimitBytes. std::nullopt when there is none or
// nothing could be read.
std::optional<double> CgroupCpuQuotaCores(const LinuxFileRoots& roots = {});

}  // namespace host
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_HOST_LINUX_FILES_H_
