#include "backends/taskvine/log_paths.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "backends/taskvine/perf_log.h"
#include "backends/taskvine/txn_record.h"
#include "io/bounded_read.h"

namespace roastcoffea {
namespace taskvine {
namespace {

bool IsDirectory(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool IsFile(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

// Why `path` cannot be read as a log: NotFound when it does not exist, FailedPrecondition
// naming its type (io/bounded_read.h's wording) when it is neither a regular file nor, when
// `directory_allowed`, a directory. Only stat(2): a FIFO is never opened, so it cannot block.
absl::Status CheckLogPath(const std::string& path, absl::string_view what, bool directory_allowed) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR) {
      return absl::NotFoundError(absl::StrCat(what, path, " does not exist"));
    }
    return absl::UnavailableError(
        absl::StrCat("cannot read ", what, path, ": ", std::strerror(error)));
  }
  if (S_ISREG(info.st_mode) || (directory_allowed && S_ISDIR(info.st_mode))) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      what, path, " is ", FileTypeText(info.st_mode),
      directory_allowed ? ", not a regular file or a directory of logs" : ", not a regular file"));
}

// True when the file starts with a performance-log header.
bool LooksLikePerformanceLog(const std::string& path) {
  FILE* file = fopen(path.c_str(), "rb");
  if (file == nullptr) return false;
  char buffer[256] = {};
  const size_t n = fread(buffer, 1, sizeof(buffer) - 1, file);
  fclose(file);
  absl::string_view head(buffer, n);
  head = head.substr(0, head.find('\n'));
  return PerfHeader::IsHeader(head);
}

bool NameSaysPerformance(absl::string_view path) {
  const absl::string_view name =
      path.substr(path.rfind('/') == absl::string_view::npos ? 0 : path.rfind('/') + 1);
  return absl::StrContains(name, "perf") || absl::StrContains(name, "stats");
}

LogPaths FromLogsDirectory(const std::string& dir) {
  LogPaths paths;
  paths.transactions = dir + "/transactions";
  if (IsFile(dir + "/performance")) paths.performance = dir + "/performance";
  return paths;
}

}  // namespace

absl::StatusOr<LogPaths> ResolveLogPaths(absl::string_view spec) {
  spec = absl::StripAsciiWhitespace(spec);
  if (spec.empty())
    return absl::InvalidArgumentError(
        "no logs given: a run directory, a vine-logs directory or the logs");
  if (absl::StrContains(spec, ',')) {
    std::vector<std::string> files = absl::StrSplit(spec, ',', absl::SkipWhitespace());
    if (files.size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat(spec, ": give exactly two files, TRANSACTIONS,PERFORMANCE"));
    }
    for (const std::string& f : files) {
      if (absl::Status status = CheckLogPath(f, "log file ", false); !status.ok()) return status;
    }
    const bool first_perf = LooksLikePerformanceLog(files[0]) ||
                            (!LooksLikePerformanceLog(files[1]) && NameSaysPerformance(files[0]));
    const bool second_perf = LooksLikePerformanceLog(files[1]) ||
                             (!LooksLikePerformanceLog(files[0]) && NameSaysPerformance(files[1]));
    if (first_perf == second_perf) {
      return absl::InvalidArgumentError(absl::StrCat(
          spec, ": cannot tell which file is the performance log (it starts with '# timestamp')"));
    }
    return first_perf ? LogPaths{files[1], files[0]} : LogPaths{files[0], files[1]};
  }
  std::string path(spec);
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  if (IsDirectory(path)) {
    for (const std::string& candidate :
         {path, path + "/vine-logs", path + "/most-recent/vine-logs"}) {
      if (IsFile(candidate + "/transactions")) return FromLogsDirectory(candidate);
    }
    return absl::NotFoundError(absl::StrCat("no transactions log in ", path,
                                            " (looked for transactions, vine-logs/transactions and "
                                            "most-recent/vine-logs/transactions)"));
  }
  if (absl::Status status = CheckLogPath(path, "", true); !status.ok()) return status;
  if (LooksLikePerformanceLog(path)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, " is a performance log; give the transactions log (or both, separated by a comma)"));
  }
  LogPaths paths;
  paths.transactions = path;
  const size_t slash = path.rfind('/');
  const std::string sibling =
      (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + "performance";
  if (sibling != path && IsFile(sibling)) paths.performance = sibling;
  return paths;
}

bool TransactionsLogHasEnded(const std::string& path) {
  struct stat before, info;
  if (stat(path.c_str(), &before) != 0 || !S_ISREG(before.st_mode)) return false;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  std::string tail;
  if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_ino == before.st_ino) {
    const off_t size = std::min<off_t>(info.st_size, 4096);
    tail.resize(static_cast<size_t>(size));
    const ssize_t n = pread(fd, tail.data(), tail.size(), info.st_size - size);
    tail.resize(n > 0 ? static_cast<size_t>(n) : 0);
  }
  close(fd);
  absl::string_view rest = absl::StripTrailingAsciiWhitespace(tail);
  const size_t newline = rest.rfind('\n');
  if (newline != absl::string_view::npos) rest.remove_prefix(newline + 1);
  TxnRecord record;
  return ParseTransactionLine(rest, &record).ok() && record.kind == TxnKind::kManagerEnd;
}

}  // namespace taskvine
}  // namespace roastcoffea
