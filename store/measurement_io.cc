#include "store/measurement_io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/util/json_util.h"
#include "io/atomic_write.h"
#include "io/bounded_read.h"
#include "schema/chunk_info_rows.h"
#include "store/json_stream_writer.h"
#include "store/measurement_to_save.h"
#include "store/record_stream.h"
#include "store/segmented_measurement.h"
#include "store/utf8_repair.h"
#include "store/worker_series_ends.h"

namespace roastcoffea {
namespace {

constexpr absl::string_view kFormatFile = "FORMAT";
constexpr absl::string_view kBinaryFile = "measurement.pb";
constexpr absl::string_view kJsonFile = "measurement.json";
// A measurement over store_internal::SegmentThresholdBytes(), in parts instead of the two above.
constexpr absl::string_view kPartsFile = "measurement.pbs";
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
  for (absl::string_view file : {kFormatFile, kBinaryFile, kJsonFile, kPartsFile}) {
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

// Size limits of a measurement directory's files. FORMAT is one short line. protobuf parses no
// message over 2 GiB, so a larger measurement.pb could never load; the JSON form of such a
// message is a few times larger.
constexpr int64_t kMaxFormatFileBytes = 64;
constexpr int64_t kMaxBinaryFileBytes = (int64_t{2} << 30) - 1;
constexpr int64_t kMaxJsonFileBytes = int64_t{4} << 30;

// Parses FORMAT ("roastcoffea-measurement <version>\n") and returns the version.
absl::StatusOr<uint32_t> ParseFormatFile(absl::string_view contents, const std::string& path) {
  absl::string_view line = contents;
  absl::ConsumeSuffix(&line, "\n");
  const std::vector<absl::string_view> words = absl::StrSplit(line, ' ');
  uint32_t version = 0;
  if (words.size() != 2 || words[0] != kFormatMagic || !absl::SimpleAtoi(words[1], &version)) {
    // What was found is never quoted: the file may be a link to anything the user can read.
    return absl::DataLossError(absl::StrCat("'", path, "' is corrupt: expected one line \"",
                                            kFormatMagic, " <version>\""));
  }
  return version;
}

// Partial directories older than this are leftovers of a killed save, never a save in progress
// (a save takes seconds), and are removed by the next save into the same parent.
constexpr int64_t kStalePartialSeconds = 3600;

void SweepStalePartialDirectories(const std::string& parent) {
  DIR* directory = opendir(parent.c_str());
  if (directory == nullptr) return;
  const time_t now = time(nullptr);
  while (const dirent* entry = readdir(directory)) {
    const absl::string_view name = entry->d_name;
    if (!absl::StartsWith(name, ".") || !absl::StrContains(name, kPartialMarker)) continue;
    const std::string path = JoinPath(parent, name);
    struct stat info;
    if (lstat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) continue;
    if (info.st_uid != geteuid() || now - info.st_mtime < kStalePartialSeconds) continue;
    RemovePartialDirectory(path);  // only our three files, then rmdir: nothing else is touched
  }
  closedir(directory);
}

// measurement.json: the message's protobuf JSON with the schema's field names, pretty-printed,
// written in bounded pieces (store/json_stream_writer.h), so that a run of a million chunks is
// never held as one JSON tree (libprotobuf's converter needs KBs per field of the tree).
absl::Status WriteMeasurementJson(const store_internal::MeasurementToSave& to_save,
                                  AtomicFileWriter& out) {
  store_internal::JsonStreamOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  // Every record printed by the streaming writer itself: it prints the same bytes as
  // libprotobuf (store/json_stream_writer_test.cc) about six times faster
  // (store/measurement_json_benchmark.cc); only the well-known types (Timestamp) go to
  // libprotobuf.
  options.delegate_below_bytes = 0;
  // The pieces held apart, printed in their fields' places.
  using M = v1::Measurement;
  std::vector<store_internal::JsonFieldSubstitute> substitutes;
  if (to_save.metadata != nullptr) {
    substitutes.emplace_back().field_number = M::kMetadataFieldNumber;
    substitutes.back().message = to_save.metadata;
  }
  if (const v1::Warning* warning = to_save.appended_warning; warning != nullptr) {
    substitutes.emplace_back().field_number = M::kWarningsFieldNumber;
    substitutes.back().appended = 1;
    substitutes.back().element = [warning](size_t) -> const google::protobuf::Message& {
      return *warning;
    };
  }
  if (store_internal::TableRecords* records = to_save.chunks; records != nullptr) {
    substitutes.emplace_back().field_number = M::kChunksFieldNumber;
    substitutes.back().appended = records->size();
    substitutes.back().element = [records](size_t i) -> const google::protobuf::Message& {
      return records->Read(i);
    };
  }
  return store_internal::WriteMessageJson(
      *to_save.measurement, options, substitutes,
      [&out](absl::string_view piece) { return out.Append(piece); });
}

// The JSON copy: written once, synced, rarely read back soon, so around the page cache (the
// kernel's copy into it was half the CPU time of a large save). The parts switch to it after
// their first part (store/segmented_measurement.cc).
AtomicWriteOptions LargeFile() {
  AtomicWriteOptions options;
  options.direct = true;
  return options;
}

// Writes <parent>/<name> (parent exists) from the pieces of a message ready to save.
absl::StatusOr<std::string> SaveInto(const store_internal::MeasurementToSave& to_save,
                                     const std::string& parent, absl::string_view name) {
  const std::string final_path = JoinPath(parent, name);
  struct stat info;
  if (lstat(final_path.c_str(), &info) == 0) {
    return absl::AlreadyExistsError(absl::StrCat("measurement directory '", final_path,
                                                 "' already exists; it is never overwritten"));
  }
  // Too large for one message (libprotobuf's 2 GiB), or close: saved in parts. BytesOver caches
  // every message's size, which the writers use (nothing changes `to_save` until then).
  const bool in_parts =
      to_save.BytesOver(static_cast<uint64_t>(store_internal::SegmentThresholdBytes()));

  std::string partial = JoinPath(parent, absl::StrCat(".", name, kPartialMarker, "XXXXXX"));
  if (mkdtemp(&partial[0]) == nullptr) {
    return OsError(errno, "create directory", partial);
  }
  auto remove_partial = absl::MakeCleanup([&partial] { RemovePartialDirectory(partial); });
  // mkdtemp makes it 0700; a measurement on a shared facility is read by others as the umask
  // allows, like any file the user creates.
  if (chmod(partial.c_str(), 0777 & ~io_internal::ProcessUmask()) != 0) {
    return OsError(errno, "set the permissions of", partial);
  }
  const std::string format_line = absl::StrCat(kFormatMagic, " ", kSchemaVersion, "\n");
  if (absl::Status s = WriteFileAtomically(JoinPath(partial, kFormatFile), format_line); !s.ok()) {
    return s;
  }
  if (in_parts) {
    absl::StatusOr<std::unique_ptr<AtomicFileWriter>> parts =
        AtomicFileWriter::Create(JoinPath(partial, kPartsFile));
    if (!parts.ok()) return parts.status();
    if (absl::Status s = store_internal::WriteMeasurementParts(to_save, **parts,
                                                               /*records_sized=*/true);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = (*parts)->Commit(); !s.ok()) return s;
  } else {
    // Serialized straight into the file, never held as one string.
    absl::StatusOr<std::unique_ptr<AtomicFileWriter>> binary =
        AtomicFileWriter::Create(JoinPath(partial, kBinaryFile));
    if (!binary.ok()) return binary.status();
    if (absl::Status s = store_internal::WriteMeasurementBinary(to_save, **binary); !s.ok()) {
      return s;
    }
    if (absl::Status s = (*binary)->Commit(); !s.ok()) return s;
    const std::string json_path = JoinPath(partial, kJsonFile);
    absl::StatusOr<std::unique_ptr<AtomicFileWriter>> json =
        AtomicFileWriter::Create(json_path, LargeFile());
    if (!json.ok()) return json.status();
    if (absl::Status s = WriteMeasurementJson(to_save, **json); !s.ok()) return s;
    if (absl::Status s = (*json)->Commit(); !s.ok()) return s;
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

// Whether the field `path` names ("metadata.name", "spans[2].name") is saved before the chunk
// records: the repair walks a measurement's fields in number order.
bool SavedBeforeChunks(absl::string_view path) {
  const google::protobuf::FieldDescriptor* field = v1::Measurement::descriptor()->FindFieldByName(
      std::string(path.substr(0, path.find_first_of(".["))));
  return field != nullptr && field->number() < v1::Measurement::kChunksFieldNumber;
}

// Text that is not UTF-8 (which libprotobuf would write but never read back), repaired: the
// measurement's in `*copy` (copied only then), a table's records as they are read (`records`,
// surveyed). Returns the warning that says so, as the repair of the one message holding the
// records would word it, or nothing when all is UTF-8.
std::optional<v1::Warning> RepairTextForSave(const v1::Measurement& measurement,
                                             const store_internal::TableRecords* records,
                                             std::optional<v1::Measurement>* copy) {
  int repaired = 0;
  std::string first_path;
  if (!store_internal::AllStringsValidUtf8(measurement)) {
    *copy = measurement;
    repaired = store_internal::RepairStringsUtf8(&**copy, &first_path);
  }
  if (records != nullptr && records->repaired() > 0) {
    if (repaired == 0 || !SavedBeforeChunks(first_path)) {
      first_path = records->first_repaired_path();
    }
    repaired += records->repaired();
  }
  if (repaired == 0) return std::nullopt;
  v1::Warning warning;
  warning.set_code("invalid_utf8");
  warning.set_message(
      absl::StrCat(repaired, " text field(s) held bytes that are not UTF-8 (first: ", first_path,
                   "); each such byte was saved as U+FFFD"));
  return warning;
}

// Saves `measurement`, with the records of `table` (when given) as its chunks.
absl::StatusOr<std::string> Save(const v1::Measurement& measurement, const ChunkTable* table,
                                 absl::string_view parent_dir, absl::string_view name,
                                 bool unique_name) {
  absl::Status valid_name = ValidateMeasurementName(name);
  if (!valid_name.ok()) return valid_name;
  const uint32_t version = measurement.metadata().schema_version();
  if (version != 0 && version != kSchemaVersion) {
    return absl::InvalidArgumentError(absl::StrCat("cannot save measurement '", name,
                                                   "': metadata.schema_version is ", version,
                                                   ", this build writes version ", kSchemaVersion));
  }
  if (table != nullptr && measurement.chunks_size() > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot save measurement '", name, "': it has ", measurement.chunks_size(),
                     " chunk record(s) of its own and a chunk table of ", table->size(),
                     " beside; its records go in one or the other"));
  }
  const std::string parent =
      parent_dir.empty() ? std::string(".") : StripTrailingSlashes(parent_dir);
  absl::Status made = MakeDirectories(parent);
  if (!made.ok()) return made;
  SweepStalePartialDirectories(parent);

  // The table's records are read one at a time, never held as messages; the measurement is
  // copied only to repair text in it, and only its metadata to edit it.
  std::optional<store_internal::TableRecords> records;
  if (table != nullptr) {
    records.emplace(*table);
    records->Survey();
  }
  std::optional<v1::Measurement> repaired;
  const std::optional<v1::Warning> utf8_warning =
      RepairTextForSave(measurement, records.has_value() ? &*records : nullptr, &repaired);
  const v1::Measurement& base = repaired.has_value() ? *repaired : measurement;
  std::optional<v1::MeasurementMetadata> metadata;
  if (version == 0) {
    metadata = base.metadata();
    metadata->set_schema_version(kSchemaVersion);
  }
  // Two runs started in the same second get the same default name: the later one takes the
  // next free "-2", "-3", ... rather than losing its measurement.
  constexpr int kMaxSuffix = 1000;
  for (int suffix = 1; suffix <= (unique_name ? kMaxSuffix : 1); ++suffix) {
    const std::string attempt = suffix == 1 ? std::string(name) : absl::StrCat(name, "-", suffix);
    if (suffix > 1 && measurement.metadata().name() == name) {
      if (!metadata.has_value()) metadata = base.metadata();
      metadata->set_name(attempt);
    }
    store_internal::MeasurementToSave to_save;
    to_save.measurement = &base;
    to_save.metadata = metadata.has_value() ? &*metadata : nullptr;
    to_save.appended_warning = utf8_warning.has_value() ? &*utf8_warning : nullptr;
    to_save.chunks = records.has_value() ? &*records : nullptr;
    absl::StatusOr<std::string> saved = SaveInto(to_save, parent, attempt);
    if (!absl::IsAlreadyExists(saved.status()) || !unique_name) return saved;
  }
  return absl::AlreadyExistsError(absl::StrCat("measurement directories '", JoinPath(parent, name),
                                               "' to '-", kMaxSuffix, "' all exist"));
}

// The checks every reader of a directory makes first: not an unfinished save, a directory, a
// FORMAT file naming kSchemaVersion. Returns that version.
absl::StatusOr<uint32_t> CheckMeasurementDirectory(const std::string& path) {
  const absl::string_view base_name = absl::string_view(path).substr(path.find_last_of('/') + 1);
  if (absl::StrContains(base_name, kPartialMarker)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "'", path, "' is an unfinished save (a temporary directory), not a measurement"));
  }
  struct stat info;
  if (stat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) {
      return absl::NotFoundError(absl::StrCat("measurement directory '", path, "' does not exist"));
    }
    return OsError(errno, "access", path);
  }
  if (!S_ISDIR(info.st_mode)) {
    return absl::NotFoundError(absl::StrCat("'", path, "' is not a measurement directory"));
  }
  const std::string format_path = JoinPath(path, kFormatFile);
  absl::StatusOr<std::string> format =
      ReadBoundedFile(format_path, kMaxFormatFileBytes, "a FORMAT file");
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
    return absl::FailedPreconditionError(absl::StrCat("'", path, "' has schema version ", *version,
                                                      "; this build reads version ",
                                                      kSchemaVersion));
  }
  return version;
}

// measurement.json into `measurement` (the fields `parts` skips are cleared by the caller).
absl::Status LoadJsonFile(const std::string& json_path, v1::Measurement* measurement) {
  absl::StatusOr<std::string> json =
      ReadBoundedFile(json_path, kMaxJsonFileBytes, "measurement JSON");
  if (!json.ok()) return json.status();
  google::protobuf::util::JsonParseOptions json_options;
  json_options.ignore_unknown_fields = true;  // Written by a newer v1.
  if (!google::protobuf::util::JsonStringToMessage(*json, measurement, json_options).ok()) {
    // Not libprotobuf's message: it quotes the file (a link to /etc/shadow would be printed).
    return absl::DataLossError(absl::StrCat(
        "'", json_path, "' is corrupt: not the protobuf JSON of a roastcoffea.v1.Measurement"));
  }
  return absl::OkStatus();
}

// measurement.pb, or measurement.json when the .pb is missing or corrupt (then with a warning
// "measurement_pb_corrupt"), into `measurement`. Returns the path read.
absl::StatusOr<std::string> LoadSingleFile(const std::string& path,
                                           const store_internal::MeasurementParts& parts,
                                           v1::Measurement* measurement) {
  const std::string binary_path = JoinPath(path, kBinaryFile);
  const std::string json_path = JoinPath(path, kJsonFile);
  absl::StatusOr<std::string> binary =
      ReadBoundedFile(binary_path, kMaxBinaryFileBytes, "measurement");
  if (absl::IsNotFound(binary.status())) {
    absl::Status loaded = LoadJsonFile(json_path, measurement);
    if (absl::IsNotFound(loaded)) {
      return absl::NotFoundError(
          absl::StrCat("'", path, "' has neither ", kBinaryFile, " nor ", kJsonFile));
    }
    if (!loaded.ok()) return loaded;
    return json_path;
  }
  if (!binary.ok()) return binary.status();
  google::protobuf::io::CodedInputStream coded(reinterpret_cast<const uint8_t*>(binary->data()),
                                               static_cast<int>(binary->size()));
  coded.SetTotalBytesLimit(INT_MAX);
  if (store_internal::MergeMeasurementFrom(coded, parts, measurement)) return binary_path;
  // The JSON copy is complete too: a damaged .pb costs nothing when it still reads.
  measurement->Clear();
  if (parts.chunk_table != nullptr) *parts.chunk_table = ChunkTable();  // records read so far
  if (!LoadJsonFile(json_path, measurement).ok()) {
    return absl::DataLossError(absl::StrCat(
        "'", binary_path, "' is corrupt: not a valid roastcoffea.v1.Measurement, and '", json_path,
        "' cannot stand in for it"));
  }
  v1::Warning& warning = *measurement->add_warnings();
  warning.set_code("measurement_pb_corrupt");
  warning.set_message(
      absl::StrCat("'", binary_path, "' is corrupt; read from '", json_path, "' instead"));
  return json_path;
}

// The records of `from` appended to `to` (moved whole when `to` is empty).
void AppendTable(ChunkTable&& from, ChunkTable* to) {
  if (to->empty()) {
    *to = std::move(from);
    return;
  }
  ChunkRow row;
  for (size_t i = 0; i < from.size(); ++i) {
    from.ReadRow(i, &row);
    to->Append(row);
  }
}

}  // namespace

absl::Status ValidateMeasurementName(absl::string_view name) {
  const auto is_control = [&name](size_t i) {
    const auto byte = static_cast<unsigned char>(name[i]);
    const bool c1 = byte == 0xC2 && i + 1 < name.size() &&
                    static_cast<unsigned char>(name[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(name[i + 1]) <= 0x9F;
    return byte < 0x20 || byte == 0x7F || c1;
  };
  bool control = false;
  for (size_t i = 0; i < name.size() && !control; ++i) control = is_control(i);
  if (name.empty() || name == "." || name == ".." || absl::StartsWith(name, ".") ||
      absl::StrContains(name, '/') || control || absl::StrContains(name, kPartialMarker) ||
      name.size() > kMaxMeasurementNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid measurement name '", absl::CHexEscape(name.substr(0, 64)),
                     name.size() > 64 ? "...' (" : "' (", name.size(),
                     " bytes): it must be non-empty, at most ", kMaxMeasurementNameBytes,
                     " bytes, not start with '.', and contain no '/', NUL or control character"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> SaveMeasurement(const v1::Measurement& measurement,
                                            absl::string_view parent_dir, absl::string_view name) {
  return Save(measurement, nullptr, parent_dir, name, /*unique_name=*/false);
}

absl::StatusOr<std::string> SaveMeasurementUnderFreeName(const v1::Measurement& measurement,
                                                         absl::string_view parent_dir,
                                                         absl::string_view name) {
  return Save(measurement, nullptr, parent_dir, name, /*unique_name=*/true);
}

absl::StatusOr<std::string> SaveMeasurement(const v1::Measurement& measurement,
                                            const ChunkTable& chunks, absl::string_view parent_dir,
                                            absl::string_view name) {
  return Save(measurement, &chunks, parent_dir, name, /*unique_name=*/false);
}

absl::StatusOr<std::string> SaveMeasurementUnderFreeName(const v1::Measurement& measurement,
                                                         const ChunkTable& chunks,
                                                         absl::string_view parent_dir,
                                                         absl::string_view name) {
  return Save(measurement, &chunks, parent_dir, name, /*unique_name=*/true);
}

absl::StatusOr<v1::Measurement> LoadMeasurement(absl::string_view directory,
                                                const LoadOptions& options) {
  const std::string path = StripTrailingSlashes(directory);
  absl::StatusOr<uint32_t> version = CheckMeasurementDirectory(path);
  if (!version.ok()) return version.status();
  store_internal::MeasurementParts parts;
  parts.chunk_records = options.chunk_records;
  parts.chunk_info = options.chunk_info;
  parts.whole_worker_series = options.whole_worker_series;
  if (options.visit_whole_worker_series) {
    parts.visit_whole_series = &options.visit_whole_worker_series;
  }
  // Read into a table of their own: the caller's gets them only once all are read.
  ChunkTable loaded_records;
  if (options.chunk_records && options.chunk_table != nullptr) parts.chunk_table = &loaded_records;
  v1::Measurement measurement;
  std::string source_path = JoinPath(path, kPartsFile);
  // A measurement saved in parts has neither measurement.pb nor measurement.json.
  if (struct stat info; lstat(source_path.c_str(), &info) == 0) {
    if (absl::Status read = store_internal::ReadMeasurementParts(source_path, &measurement, parts);
        !read.ok()) {
      return read;
    }
  } else {
    absl::StatusOr<std::string> source = LoadSingleFile(path, parts, &measurement);
    if (!source.ok()) return source.status();
    source_path = *std::move(source);
  }
  if (measurement.metadata().schema_version() != *version) {
    return absl::DataLossError(
        absl::StrCat("'", source_path, "' is corrupt or foreign: its metadata.schema_version is ",
                     measurement.metadata().schema_version(), " but '", JoinPath(path, kFormatFile),
                     "' says ", *version));
  }
  if (!options.chunk_records) {  // read from the JSON copy
    measurement.clear_chunks();
    measurement.clear_rejected_chunks();
  }
  if (parts.chunk_table != nullptr) {
    // Records read from the JSON copy are messages until here.
    for (const v1::ChunkRecord& record : measurement.chunks()) loaded_records.Append(record);
    measurement.clear_chunks();
    AppendTable(std::move(loaded_records), options.chunk_table);
  }
  if (!options.chunk_info && measurement.metrics().has_chunks()) {
    ClearChunkInfo(measurement.mutable_metrics()->mutable_chunks());
  }
  if (measurement.metrics().chunks().has_chunk_info_columns()) {  // readable, with a warning
    if (std::optional<std::string> problem = RepairChunkInfoColumns(
            measurement.mutable_metrics()->mutable_chunks()->mutable_chunk_info_columns())) {
      v1::Warning& warning = *measurement.add_warnings();
      warning.set_code("chunk_info_columns_invalid");
      warning.set_message(absl::StrCat("'", source_path, "': metrics.chunks.", *problem));
    }
  }
  if (!options.whole_worker_series && measurement.has_tracking()) {  // read from the JSON copy
    for (v1::WorkerSeries& series : *measurement.mutable_tracking()->mutable_workers()) {
      CutWorkerSeriesToEnds(&series);
    }
  }
  return measurement;
}

absl::Status ForEachChunkRecord(absl::string_view directory,
                                absl::FunctionRef<absl::Status(const v1::ChunkRecord&)> visit) {
  const std::string path = StripTrailingSlashes(directory);
  absl::StatusOr<uint32_t> version = CheckMeasurementDirectory(path);
  if (!version.ok()) return version.status();
  if (const std::string parts_path = JoinPath(path, kPartsFile);
      access(parts_path.c_str(), F_OK) == 0) {
    return store_internal::ForEachChunkRecordInParts(parts_path, visit);
  }
  // One file of at most 64 MiB in binary (larger ones are saved in parts): read whole.
  absl::StatusOr<v1::Measurement> measurement = LoadMeasurement(path);
  if (!measurement.ok()) return measurement.status();
  for (const v1::ChunkRecord& record : measurement->chunks()) {
    if (absl::Status visited = visit(record); !visited.ok()) return visited;
  }
  return absl::OkStatus();
}

absl::Status ForEachSerializedChunkRecord(
    absl::string_view directory, absl::FunctionRef<absl::Status(absl::string_view)> visit) {
  const std::string path = StripTrailingSlashes(directory);
  absl::StatusOr<uint32_t> version = CheckMeasurementDirectory(path);
  if (!version.ok()) return version.status();
  if (const std::string parts_path = JoinPath(path, kPartsFile);
      access(parts_path.c_str(), F_OK) == 0) {
    return store_internal::ForEachSerializedChunkRecordInParts(parts_path, visit);
  }
  std::string bytes;
  return ForEachChunkRecord(directory, [&](const v1::ChunkRecord& record) {
    bytes.clear();
    record.AppendToString(&bytes);
    return visit(bytes);
  });
}

bool SavedInParts(absl::string_view directory) {
  return access(JoinPath(StripTrailingSlashes(directory), kPartsFile).c_str(), F_OK) == 0;
}

absl::Status ForEachWorkerSeries(absl::string_view directory,
                                 absl::FunctionRef<absl::Status(const v1::WorkerSeries&)> visit) {
  const std::string path = StripTrailingSlashes(directory);
  absl::StatusOr<uint32_t> version = CheckMeasurementDirectory(path);
  if (!version.ok()) return version.status();
  if (const std::string parts_path = JoinPath(path, kPartsFile);
      access(parts_path.c_str(), F_OK) == 0) {
    return store_internal::ForEachWorkerSeriesInParts(parts_path, visit);
  }
  // One file of at most 64 MiB in binary (larger ones are saved in parts): read whole.
  LoadOptions without_records;
  without_records.chunk_records = false;
  without_records.chunk_info = false;
  absl::StatusOr<v1::Measurement> measurement = LoadMeasurement(path, without_records);
  if (!measurement.ok()) return measurement.status();
  for (const v1::WorkerSeries& series : measurement->tracking().workers()) {
    if (absl::Status visited = visit(series); !visited.ok()) return visited;
  }
  return absl::OkStatus();
}

absl::Status ForEachWorkerSeriesColumns(
    absl::string_view directory, const std::vector<int>& double_columns,
    absl::FunctionRef<absl::Status(const v1::WorkerSeries&)> visit) {
  if (SavedInParts(directory)) {
    const std::string path = StripTrailingSlashes(directory);
    if (absl::StatusOr<uint32_t> version = CheckMeasurementDirectory(path); !version.ok()) {
      return version.status();
    }
    return store_internal::ForEachWorkerSeriesColumnsInParts(JoinPath(path, kPartsFile),
                                                             double_columns, visit);
  }
  return ForEachWorkerSeries(directory, visit);
}

std::string MeasurementDirectoryName(absl::Time start) {
  if (start == absl::InfinitePast()) return "infinite-past";
  if (start == absl::InfiniteFuture()) return "infinite-future";
  return absl::FormatTime("%Y-%m-%dT%H-%M-%SZ", start, absl::UTCTimeZone());
}

}  // namespace roastcoffea
