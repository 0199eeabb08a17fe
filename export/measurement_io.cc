#include "export/measurement_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "export/legacy_measurement.h"
#include "io/bounded_read.h"
#include "google/protobuf/util/json_util.h"

namespace roastcoffea {
namespace {

constexpr absl::string_view kFormatFile = "FORMAT";
constexpr absl::string_view kBinaryFile = "measurement.pb";
constexpr absl::string_view kJsonFile = "measurement.json";
constexpr absl::string_view kFormatMagic = "roastcoffea-measurement";
// Part of the name of every temporary directory a save writes into, and never of a finished one.
constexpr absl::string_view kPartialMarker = ".roastcoffea-partial-";

std::string ErrorText(int error_number) {
  char buffer[256];
  // The GNU strerror_r returns the message, not necessarily in `buffer`.
  return strerror_r(error_number, buffer, sizeof(buffer));
}

absl::Status OsError(int error_number, absl::string_view action, absl::string_view path) {
  return absl::Status(absl::ErrnoToStatusCode(error_number),
                      absl::StrCat("cannot ", action, " '", path, "': ", ErrorText(error_number)));
}

std::string JoinPath(absl::string_view directory, absl::string_view name) {
  if (directory.empty()) return std::string(name);
  if (directory.back() == '/') return absl::StrCat(directory, name);
  return absl::StrCat(directory, "/", name);
}

std::string StripTrailingSlashes(absl::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return std::string(path);
}

// mkdir -p.
absl::Status MakeDirectories(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode)) return absl::OkStatus();
    return OsError(ENOTDIR, "create directory", path);
  }
  if (errno != ENOENT) return OsError(errno, "access", path);
  const size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) {
    absl::Status parent = MakeDirectories(StripTrailingSlashes(path.substr(0, slash)));
    if (!parent.ok()) return parent;
  }
  if (mkdir(path.c_str(), 0777) != 0) {
    const int error = errno;
    // Someone else may have created it meanwhile.
    if (error == EEXIST && stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
      return absl::OkStatus();
    }
    return OsError(error, "create directory", path);
  }
  return absl::OkStatus();
}

absl::Status WriteFileDurably(const std::string& path, absl::string_view contents) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return OsError(errno, "create file", path);
  auto close_fd = absl::MakeCleanup([fd] { close(fd); });
  while (!contents.empty()) {
    const ssize_t written = write(fd, contents.data(), contents.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return OsError(errno, "write", path);
    }
    contents.remove_prefix(static_cast<size_t>(written));
  }
  if (fsync(fd) != 0) return OsError(errno, "sync", path);
  std::move(close_fd).Cancel();
  // close can report a deferred write error (e.g. on network filesystems).
  if (close(fd) != 0) return OsError(errno, "close", path);
  return absl::OkStatus();
}

// Makes the entries of `directory` (its files' names) durable.
absl::Status SyncDirectory(const std::string& directory) {
  const int fd = open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return OsError(errno, "open directory", directory);
  const int result = fsync(fd);
  const int error = errno;
  close(fd);
  if (result != 0) return OsError(error, "sync directory", directory);
  return absl::OkStatus();
}

// Best effort: removes a partial directory written by SaveMeasurement.
void RemovePartialDirectory(const std::string& directory) {
  for (absl::string_view file : {kFormatFile, kBinaryFile, kJsonFile}) {
    unlink(JoinPath(directory, file).c_str());
  }
  rmdir(directory.c_str());
}

// Renames `from` to `to` unless `to` exists, atomically where the filesystem allows.
absl::Status RenameNoReplace(const std::string& from, const std::string& to) {
  if (renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) {
    return absl::OkStatus();
  }
  int error = errno;
  if (error == EINVAL || error == ENOSYS) {
    // The filesystem cannot refuse to replace: check first (racy, but rename(2) would only
    // replace an empty directory, never a measurement).
    struct stat info;
    if (lstat(to.c_str(), &info) == 0) {
      error = EEXIST;
    } else if (rename(from.c_str(), to.c_str()) == 0) {
      return absl::OkStatus();
    } else {
      error = errno;
    }
  }
  if (error == EEXIST || error == ENOTEMPTY) {
    return absl::AlreadyExistsError(
        absl::StrCat("measurement directory '", to, "' already exists; it is never overwritten"));
  }
  return OsError(error, absl::StrCat("rename '", from, "' to"), to);
}

absl::Status ValidateName(absl::string_view name) {
  if (name.empty() || name == "." || name == ".." || absl::StartsWith(name, ".") ||
      absl::StrContains(name, '/') || absl::StrContains(name, '\0') ||
      absl::StrContains(name, kPartialMarker)) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid measurement name '", absl::CHexEscape(name),
                     "': it must be non-empty, not start with '.', and contain no '/' or NUL"));
  }
  return absl::OkStatus();
}

// Size limits of a measurement directory's files. FORMAT is one short line. protobuf parses no
// message over 2 GiB, so a larger measurement.pb could never load; the JSON form of such a
// message is a few times larger.
constexpr int64_t kMaxFormatFileBytes = 64;
constexpr int64_t kMaxBinaryFileBytes = (int64_t{2} << 30) - 1;
constexpr int64_t kMaxJsonFileBytes = int64_t{4} << 30;

absl::StatusOr<std::string> ReadFile(const std::string& path, int64_t max_bytes,
                                     absl::string_view what) {
  BoundedReadOptions options;
  options.max_bytes = max_bytes;
  options.what = what;
  return ReadBoundedFile(path, options);
}

// Parses FORMAT ("roastcoffea-measurement <version>\n") and returns the version.
absl::StatusOr<uint32_t> ParseFormatFile(absl::string_view contents, const std::string& path) {
  absl::string_view line = contents;
  absl::ConsumeSuffix(&line, "\n");
  const std::vector<absl::string_view> words = absl::StrSplit(line, ' ');
  uint32_t version = 0;
  if (words.size() != 2 || words[0] != kFormatMagic || !absl::SimpleAtoi(words[1], &version)) {
    return absl::DataLossError(absl::StrCat("'", path, "' is corrupt: expected one line \"",
                                            kFormatMagic, " <version>\", got \"",
                                            absl::CHexEscape(contents.substr(0, 80)), "\""));
  }
  return version;
}

}  // namespace

absl::StatusOr<std::string> SaveMeasurement(const v1::Measurement& measurement,
                                            absl::string_view parent_dir,
                                            absl::string_view name) {
  absl::Status valid_name = ValidateName(name);
  if (!valid_name.ok()) return valid_name;

  // Fill in the schema version without copying the message when it is already there.
  const v1::Measurement* to_save = &measurement;
  v1::Measurement stamped;
  const uint32_t version = measurement.metadata().schema_version();
  if (version == 0) {
    stamped = measurement;
    stamped.mutable_metadata()->set_schema_version(kSchemaVersion);
    to_save = &stamped;
  } else if (version != kSchemaVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot save measurement '", name, "': metadata.schema_version is ", version,
                     ", this build writes version ", kSchemaVersion));
  }

  std::string binary;
  if (!to_save->SerializeToString(&binary)) {
    return absl::InternalError(absl::StrCat("cannot serialize measurement '", name,
                                            "' (larger than 2 GiB?)"));
  }
  std::string json;
  google::protobuf::util::JsonPrintOptions json_options;
  json_options.add_whitespace = true;
  json_options.preserve_proto_field_names = true;
  json_options.always_print_primitive_fields = true;
  const auto json_status = google::protobuf::util::MessageToJsonString(*to_save, &json, json_options);
  if (!json_status.ok()) {
    return absl::InternalError(absl::StrCat("cannot convert measurement '", name, "' to JSON: ",
                                            json_status.ToString()));
  }

  const std::string parent = parent_dir.empty() ? std::string(".") : StripTrailingSlashes(parent_dir);
  absl::Status made = MakeDirectories(parent);
  if (!made.ok()) return made;
  const std::string final_path = JoinPath(parent, name);
  struct stat info;
  if (lstat(final_path.c_str(), &info) == 0) {
    return absl::AlreadyExistsError(absl::StrCat("measurement directory '", final_path,
                                                 "' already exists; it is never overwritten"));
  }

  std::string partial = JoinPath(parent, absl::StrCat(".", name, kPartialMarker, "XXXXXX"));
  if (mkdtemp(&partial[0]) == nullptr) {
    return OsError(errno, "create directory", partial);
  }
  auto remove_partial = absl::MakeCleanup([&partial] { RemovePartialDirectory(partial); });
  const std::string format_line = absl::StrCat(kFormatMagic, " ", kSchemaVersion, "\n");
  for (const auto& [file, contents] :
       {std::pair<absl::string_view, absl::string_view>{kFormatFile, format_line},
        {kBinaryFile, binary},
        {kJsonFile, json}}) {
    absl::Status written = WriteFileDurably(JoinPath(partial, file), contents);
    if (!written.ok()) return written;
  }
  absl::Status synced = SyncDirectory(partial);
  if (!synced.ok()) return synced;
  absl::Status renamed = RenameNoReplace(partial, final_path);
  if (!renamed.ok()) return renamed;
  std::move(remove_partial).Cancel();
  // Make the rename itself durable.
  synced = SyncDirectory(parent);
  if (!synced.ok()) return synced;
  return final_path;
}

absl::StatusOr<v1::Measurement> LoadMeasurement(absl::string_view directory) {
  const std::string path = StripTrailingSlashes(directory);
  const absl::string_view base_name = absl::string_view(path).substr(path.find_last_of('/') + 1);
  if (absl::StrContains(base_name, kPartialMarker)) {
    return absl::FailedPreconditionError(
        absl::StrCat("'", path, "' is an unfinished save (a temporary directory), not a measurement"));
  }
  struct stat info;
  if (stat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) {
      return absl::NotFoundError(
          absl::StrCat("measurement directory '", path, "' does not exist"));
    }
    return OsError(errno, "access", path);
  }
  if (!S_ISDIR(info.st_mode)) {
    return absl::NotFoundError(absl::StrCat("'", path, "' is not a measurement directory"));
  }

  // The original Python tool's directories (metrics.json + start_end_time.txt, no FORMAT).
  if (IsLegacyMeasurementDirectory(path)) return LoadLegacyMeasurement(path);

  const std::string format_path = JoinPath(path, kFormatFile);
  absl::StatusOr<std::string> format = ReadFile(format_path, kMaxFormatFileBytes, "a FORMAT file");
  if (!format.ok()) {
    if (absl::IsNotFound(format.status())) {
      return absl::NotFoundError(absl::StrCat("'", path, "' is not a measurement directory: '",
                                              format_path, "' is missing"));
    }
    return format.status();
  }
  absl::StatusOr<uint32_t> version = ParseFormatFile(*format, format_path);
  if (!version.ok()) return version.status();
  if (*version != kSchemaVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("'", path, "' has schema version ", *version, "; this build reads version ",
                     kSchemaVersion));
  }

  v1::Measurement measurement;
  const std::string binary_path = JoinPath(path, kBinaryFile);
  absl::StatusOr<std::string> binary = ReadFile(binary_path, kMaxBinaryFileBytes, "measurement.pb");
  std::string source_path = binary_path;
  if (binary.ok()) {
    if (!measurement.ParseFromString(*binary)) {
      return absl::DataLossError(absl::StrCat("'", binary_path,
                                              "' is corrupt: not a valid roastcoffea.v1.Measurement"));
    }
  } else if (absl::IsNotFound(binary.status())) {
    const std::string json_path = JoinPath(path, kJsonFile);
    absl::StatusOr<std::string> json = ReadFile(json_path, kMaxJsonFileBytes, "measurement.json");
    if (!json.ok()) {
      if (absl::IsNotFound(json.status())) {
        return absl::NotFoundError(absl::StrCat("'", path, "' has neither ", kBinaryFile, " nor ",
                                                kJsonFile));
      }
      return json.status();
    }
    google::protobuf::util::JsonParseOptions json_options;
    json_options.ignore_unknown_fields = true;  // Written by a newer v1.
    const auto parsed = google::protobuf::util::JsonStringToMessage(*json, &measurement, json_options);
    if (!parsed.ok()) {
      return absl::DataLossError(
          absl::StrCat("'", json_path, "' is corrupt: ", parsed.ToString()));
    }
    source_path = json_path;
  } else {
    return binary.status();
  }

  if (measurement.metadata().schema_version() != *version) {
    return absl::DataLossError(absl::StrCat(
        "'", source_path, "' is corrupt or foreign: its metadata.schema_version is ",
        measurement.metadata().schema_version(), " but '", format_path, "' says ", *version));
  }
  return measurement;
}

std::string MeasurementDirectoryName(absl::Time start) {
  if (start == absl::InfinitePast()) return "infinite-past";
  if (start == absl::InfiniteFuture()) return "infinite-future";
  return absl::FormatTime("%Y-%m-%dT%H-%M-%SZ", start, absl::UTCTimeZone());
}

}  // namespace roastcoffea
