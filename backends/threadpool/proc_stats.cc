#include "backends/threadpool/proc_stats.h"

#include <unistd.h>

#include <algorithm>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "host/linux_files.h"

namespace roastcoffea {
namespace threadpool_internal {
namespace {

using host::ReadSmallFile;

absl::StatusOr<int64_t> ParseInt(absl::string_view what, absl::string_view value) {
  int64_t parsed = 0;
  if (!absl::SimpleAtoi(value, &parsed)) {
    return absl::InvalidArgumentError(absl::StrCat("bad integer for ", what, ": \"", value, "\""));
  }
  return parsed;
}

}  // namespace

absl::StatusOr<TaskIoCounters> ParseTaskIo(absl::string_view text) {
  TaskIoCounters counters;
  struct Field {
    absl::string_view key;
    int64_t* value;
    bool seen;
  };
  Field fields[] = {{"rchar", &counters.rchar, false},
                    {"wchar", &counters.wchar, false},
                    {"read_bytes", &counters.read_bytes, false},
                    {"write_bytes", &counters.write_bytes, false}};
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(line, absl::MaxSplits(':', 1));
    absl::string_view key = absl::StripAsciiWhitespace(kv.first);
    for (Field& field : fields) {
      if (key != field.key) continue;
      absl::StatusOr<int64_t> value = ParseInt(key, absl::StripAsciiWhitespace(kv.second));
      if (!value.ok()) return value.status();
      *field.value = *value;
      field.seen = true;
    }
  }
  for (const Field& field : fields) {
    if (!field.seen) {
      return absl::InvalidArgumentError(absl::StrCat("io text has no \"", field.key, "\" line"));
    }
  }
  return counters;
}

absl::StatusOr<double> ParseTaskStatCpuSeconds(absl::string_view text, int64_t ticks_per_second) {
  if (ticks_per_second <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ticks_per_second must be > 0, got ", ticks_per_second));
  }
  size_t close = text.rfind(')');
  if (close == absl::string_view::npos) {
    return absl::InvalidArgumentError("stat text has no ')' after the command name");
  }
  // After ')' come fields 3 (state), 4, ... ; utime and stime are fields 14 and 15.
  std::vector<absl::string_view> rest =
      absl::StrSplit(text.substr(close + 1), ' ', absl::SkipWhitespace());
  constexpr size_t kUtime = 14 - 3;
  constexpr size_t kStime = 15 - 3;
  if (rest.size() <= kStime) {
    return absl::InvalidArgumentError(
        absl::StrCat("stat text has ", rest.size() + 2, " fields, need at least 15"));
  }
  absl::StatusOr<int64_t> utime = ParseInt("utime", rest[kUtime]);
  if (!utime.ok()) return utime.status();
  absl::StatusOr<int64_t> stime = ParseInt("stime", rest[kStime]);
  if (!stime.ok()) return stime.status();
  return static_cast<double>(*utime + *stime) / static_cast<double>(ticks_per_second);
}

absl::StatusOr<TaskSchedstat> ParseTaskSchedstat(absl::string_view text) {
  std::vector<absl::string_view> fields = absl::StrSplit(text, ' ', absl::SkipWhitespace());
  if (fields.size() != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("schedstat text \"", text, "\" does not have 3 fields"));
  }
  TaskSchedstat stats;
  int64_t* values[] = {&stats.exec_runtime_ns, &stats.run_delay_ns, &stats.timeslices};
  const char* names[] = {"sum_exec_runtime", "run_delay", "timeslices"};
  for (int i = 0; i < 3; ++i) {
    absl::string_view field = absl::StripAsciiWhitespace(fields[i]);
    // SimpleAtoi accepts a sign; the kernel prints unsigned numbers.
    if (field.empty() || field[0] < '0' || field[0] > '9' || !absl::SimpleAtoi(field, values[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad ", names[i], " in schedstat text \"", text, "\""));
    }
  }
  if (stats.exec_runtime_ns == 0 && stats.run_delay_ns == 0 && stats.timeslices == 0) {
    return absl::UnavailableError(
        "schedstat is \"0 0 0\": the kernel keeps no scheduler statistics");
  }
  return stats;
}

absl::StatusOr<int64_t> ParseStatmResidentBytes(absl::string_view text, int64_t page_size_bytes) {
  if (page_size_bytes <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_size_bytes must be > 0, got ", page_size_bytes));
  }
  std::vector<absl::string_view> fields = absl::StrSplit(text, ' ', absl::SkipWhitespace());
  if (fields.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("statm text \"", text, "\" has fewer than 2 fields"));
  }
  absl::StatusOr<int64_t> pages = ParseInt("resident pages", absl::StripAsciiWhitespace(fields[1]));
  if (!pages.ok()) return pages.status();
  return *pages * page_size_bytes;
}

absl::StatusOr<TaskIoCounters> ReadTaskIo(int64_t tid) {
  const std::string path = absl::StrCat("/proc/self/task/", tid, "/io");
  absl::StatusOr<std::string> text = ReadSmallFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<TaskIoCounters> counters = ParseTaskIo(*text);
  if (!counters.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", counters.status().message()));
  }
  return counters;
}

absl::StatusOr<TaskSchedstat> ReadTaskSchedstat(int64_t tid) {
  const std::string path = absl::StrCat("/proc/self/task/", tid, "/schedstat");
  absl::StatusOr<std::string> text = ReadSmallFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<TaskSchedstat> stats = ParseTaskSchedstat(*text);
  if (!stats.ok()) {
    return absl::Status(stats.status().code(), absl::StrCat(path, ": ", stats.status().message()));
  }
  return stats;
}

absl::StatusOr<double> ReadTaskCpuSeconds(int64_t tid) {
  // Nanoseconds where the kernel keeps schedstat; stat counts whole clock ticks.
  absl::StatusOr<TaskSchedstat> sched = ReadTaskSchedstat(tid);
  if (sched.ok()) return static_cast<double>(sched->exec_runtime_ns) * 1e-9;
  const std::string path = absl::StrCat("/proc/self/task/", tid, "/stat");
  absl::StatusOr<std::string> text = ReadSmallFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<double> seconds = ParseTaskStatCpuSeconds(*text, sysconf(_SC_CLK_TCK));
  if (!seconds.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", seconds.status().message()));
  }
  return seconds;
}

absl::StatusOr<int64_t> ReadResidentBytes() {
  absl::StatusOr<std::string> text = ReadSmallFile("/proc/self/statm");
  if (!text.ok()) return text.status();
  return ParseStatmResidentBytes(*text, sysconf(_SC_PAGESIZE));
}

int64_t MemoryLimitBytes() {
  const int64_t physical = host::PhysicalMemoryBytes();
  return std::min(host::CgroupMemoryLimitBytes().value_or(physical), physical);
}

}  // namespace threadpool_internal
}  // namespace roastcoffea
