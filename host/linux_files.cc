#include "host/linux_files.h"

#include <unistd.h>

#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "io/bounded_read.h"

namespace roastcoffea {
namespace host {
namespace {

// Directories that may hold this process's cgroup files for one hierarchy, most specific
// first: the process's own cgroup, then the hierarchy root (a container's namespace root).
// `controller` empty: the v2 hierarchy at the cgroup root; else the v1 hierarchy of
// `controller`, mounted at one of `mounts` under the cgroup root.
std::vector<std::string> CgroupDirectories(const LinuxFileRoots& roots,
                                           const absl::StatusOr<std::string>& self_cgroup,
                                           absl::string_view controller,
                                           const std::vector<std::string>& mounts) {
  std::vector<std::string> directories;
  absl::StatusOr<std::string> path = self_cgroup.ok()
                                         ? ParseCgroupPath(*self_cgroup, controller)
                                         : absl::StatusOr<std::string>(self_cgroup.status());
  for (const std::string& mount : mounts) {
    const std::string base = mount.empty() ? roots.cgroup : absl::StrCat(roots.cgroup, "/", mount);
    if (path.ok() && *path != "/") directories.push_back(absl::StrCat(base, *path));
    directories.push_back(base);
  }
  return directories;
}

}  // namespace

absl::StatusOr<std::string> ReadSmallFile(const std::string& path) {
  BoundedReadOptions options;
  options.max_bytes = kMaxSmallFileBytes;
  options.what = "a /proc or cgroup file";
  options.size_from_stat = false;  // /proc files say 0 bytes
  absl::StatusOr<std::string> text = ReadBoundedFile(path, options);
  if (text.ok() || absl::IsNotFound(text.status()) || absl::IsPermissionDenied(text.status())) {
    return text;
  }
  return absl::UnavailableError(text.status().message());
}

absl::StatusOr<std::string> ParseCgroupPath(absl::string_view text, absl::string_view controller) {
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    std::vector<absl::string_view> parts = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (parts.size() != 3) continue;
    if (controller.empty()) {
      if (parts[0] == "0" && parts[1].empty()) return std::string(parts[2]);
      continue;
    }
    for (absl::string_view name : absl::StrSplit(parts[1], ',')) {
      if (name == controller) return std::string(parts[2]);
    }
  }
  return absl::NotFoundError(
      controller.empty() ? std::string("no cgroup v2 line (\"0::<path>\")")
                         : absl::StrCat("no cgroup line for controller \"", controller, "\""));
}

absl::StatusOr<std::optional<int64_t>> ParseCgroupMemoryLimit(absl::string_view text) {
  absl::string_view value = absl::StripAsciiWhitespace(text);
  if (value == "max") return std::optional<int64_t>();
  // v1 "unlimited" is close to INT64_MAX; larger texts overflow and mean unlimited too.
  uint64_t parsed = 0;
  if (!absl::SimpleAtoi(value, &parsed)) {
    return absl::InvalidArgumentError(absl::StrCat("bad memory limit \"", value, "\""));
  }
  if (parsed > static_cast<uint64_t>(INT64_MAX)) return std::optional<int64_t>();
  return std::optional<int64_t>(static_cast<int64_t>(parsed));
}

absl::StatusOr<std::optional<double>> ParseCgroupV2CpuMax(absl::string_view text) {
  std::vector<absl::string_view> fields =
      absl::StrSplit(absl::StripAsciiWhitespace(text), ' ', absl::SkipWhitespace());
  if (fields.size() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad cpu.max \"", absl::StripAsciiWhitespace(text), "\": want \"<quota> <period>\""));
  }
  int64_t period = 0;
  if (!absl::SimpleAtoi(fields[1], &period) || period <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("bad cpu.max period \"", fields[1], "\""));
  }
  if (fields[0] == "max") return std::optional<double>();
  int64_t quota = 0;
  if (!absl::SimpleAtoi(fields[0], &quota) || quota <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("bad cpu.max quota \"", fields[0], "\""));
  }
  return std::optional<double>(static_cast<double>(quota) / static_cast<double>(period));
}

absl::StatusOr<std::optional<double>> ParseCgroupV1CpuQuota(absl::string_view quota_text,
                                                            absl::string_view period_text) {
  int64_t quota = 0;
  absl::string_view quota_value = absl::StripAsciiWhitespace(quota_text);
  if (!absl::SimpleAtoi(quota_value, &quota) || quota == 0 || quota < -1) {
    return absl::InvalidArgumentError(absl::StrCat("bad cpu.cfs_quota_us \"", quota_value, "\""));
  }
  if (quota == -1) return std::optional<double>();
  int64_t period = 0;
  absl::string_view period_value = absl::StripAsciiWhitespace(period_text);
  if (!absl::SimpleAtoi(period_value, &period) || period <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("bad cpu.cfs_period_us \"", period_value, "\""));
  }
  return std::optional<double>(static_cast<double>(quota) / static_cast<double>(period));
}

absl::StatusOr<std::string> ParseCpuModel(absl::string_view text) {
  for (absl::string_view key : {"model name", "Processor", "cpu model"}) {
    for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
      std::pair<absl::string_view, absl::string_view> kv =
          absl::StrSplit(line, absl::MaxSplits(':', 1));
      if (absl::StripAsciiWhitespace(kv.first) != key) continue;
      absl::string_view value = absl::StripAsciiWhitespace(kv.second);
      if (!value.empty()) return std::string(value);
    }
  }
  return absl::NotFoundError("cpuinfo text has no \"model name\" line");
}

absl::StatusOr<int64_t> ParseStealTicks(absl::string_view text) {
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    if (!absl::ConsumePrefix(&line, "cpu ")) continue;
    // user nice system idle iowait irq softirq steal ...
    std::vector<absl::string_view> values = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    if (values.size() < 8) {
      return absl::InvalidArgumentError(
          absl::StrCat("stat \"cpu\" line has ", values.size(), " values, need 8 (steal)"));
    }
    int64_t steal = 0;
    if (!absl::SimpleAtoi(values[7], &steal) || steal < 0) {
      return absl::InvalidArgumentError(absl::StrCat("bad steal value \"", values[7], "\""));
    }
    return steal;
  }
  return absl::InvalidArgumentError("stat text has no \"cpu \" line");
}

absl::StatusOr<double> ParseLoadAverage1m(absl::string_view text) {
  std::vector<absl::string_view> values = absl::StrSplit(text, ' ', absl::SkipWhitespace());
  double load = 0;
  if (values.empty() || !absl::SimpleAtod(absl::StripAsciiWhitespace(values[0]), &load) ||
      !(load >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad loadavg \"", absl::StripAsciiWhitespace(text), "\""));
  }
  return load;
}

int64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 1;
  return static_cast<int64_t>(pages) * static_cast<int64_t>(page_size);
}

std::optional<int64_t> CgroupMemoryLimitBytes(const LinuxFileRoots& roots) {
  const absl::StatusOr<std::string> self = ReadSmallFile(roots.proc + "/self/cgroup");
  std::vector<std::string> files;
  for (const std::string& directory : CgroupDirectories(roots, self, "", {""})) {
    files.push_back(directory + "/memory.max");
  }
  for (const std::string& directory : CgroupDirectories(roots, self, "memory", {"memory"})) {
    files.push_back(directory + "/memory.limit_in_bytes");
  }
  for (const std::string& path : files) {
    absl::StatusOr<std::string> text = ReadSmallFile(path);
    if (!text.ok()) continue;
    absl::StatusOr<std::optional<int64_t>> limit = ParseCgroupMemoryLimit(*text);
    if (!limit.ok()) continue;
    // A limit at or above the machine's memory (v1's page-aligned "unlimited") limits nothing.
    if (!limit->has_value() || **limit <= 0 || **limit >= PhysicalMemoryBytes()) {
      return std::nullopt;
    }
    return *limit;
  }
  return std::nullopt;
}

std::optional<double> CgroupCpuQuotaCores(const LinuxFileRoots& roots) {
  const absl::StatusOr<std::string> self = ReadSmallFile(roots.proc + "/self/cgroup");
  for (const std::string& directory : CgroupDirectories(roots, self, "", {""})) {
    absl::StatusOr<std::string> text = ReadSmallFile(directory + "/cpu.max");
    if (!text.ok()) continue;
    absl::StatusOr<std::optional<double>> cores = ParseCgroupV2CpuMax(*text);
    if (cores.ok()) return *cores;
  }
  // v1 mounts the cpu controller alone or together with cpuacct.
  for (const std::string& directory :
       CgroupDirectories(roots, self, "cpu", {"cpu", "cpu,cpuacct", "cpuacct,cpu"})) {
    absl::StatusOr<std::string> quota = ReadSmallFile(directory + "/cpu.cfs_quota_us");
    absl::StatusOr<std::string> period = ReadSmallFile(directory + "/cpu.cfs_period_us");
    if (!quota.ok() || !period.ok()) continue;
    absl::StatusOr<std::optional<double>> cores = ParseCgroupV1CpuQuota(*quota, *period);
    if (cores.ok()) return *cores;
  }
  return std::nullopt;
}

}  // namespace host
}  // namespace roastcoffea
