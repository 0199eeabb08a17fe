#include "store/checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/util/delimited_message_util.h"
#include "io/regular_file_stream.h"
#include "store/tracking_segments.h"
#include "store/utf8_repair.h"

namespace roastcoffea {
namespace {

constexpr char kFileName[] = "checkpoint.pbs";
constexpr char kSuffix[] = ".checkpoint";
// One entry is one chunk record or the metadata: far below this unless the file is damaged.
constexpr int kMaxEntryBytes = 256 << 20;

absl::Status OsError(absl::string_view action, absl::string_view path) {
  const int error = errno;
  return absl::Status(absl::ErrnoToStatus(error, "").code(),
                      absl::StrCat("cannot ", action, " '", path, "': ", std::strerror(error)));
}

void AppendEntry(const v1::CheckpointEntry& entry, std::string* out) {
  google::protobuf::io::StringOutputStream stream(out);
  if (store_internal::AllStringsValidUtf8(entry)) {
    google::protobuf::util::SerializeDelimitedToZeroCopyStream(entry, &stream);
    return;
  }
  // proto3 refuses to parse a string that is not UTF-8: the whole checkpoint would be lost.
  v1::CheckpointEntry repaired = entry;
  store_internal::RepairStringsUtf8(&repaired, nullptr);
  google::protobuf::util::SerializeDelimitedToZeroCopyStream(repaired, &stream);
}

absl::Status WriteAll(int fd, const std::string& bytes, absl::string_view path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return OsError("write", path);
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) return OsError("sync", path);
  return absl::OkStatus();
}

// The first byte of a chunk entry: field 2 (CheckpointEntry.chunk), length-delimited.
constexpr uint8_t kChunkEntryTag = (2 << 3) | 2;

// True when the entry `coded` is at (within its limit) is a chunk record: skipped unparsed.
bool AtChunkEntry(google::protobuf::io::CodedInputStream& coded) {
  const void* data = nullptr;
  int size = 0;
  return coded.GetDirectBufferPointer(&data, &size) && size > 0 &&
         *static_cast<const uint8_t*>(data) == kChunkEntryTag;
}

// Reads a checkpoint from `fd` (at its start; closed when done), named `path` in errors;
// without its chunk records unless `with_chunks`.
absl::StatusOr<Checkpoint> ReadCheckpointFrom(int fd, const std::string& path, bool with_chunks) {
  absl::StatusOr<RegularFileStream> file = RegularFileStreamOf(fd, path);
  if (!file.ok()) return file.status();
  google::protobuf::io::FileInputStream& input = *file->stream;
  Checkpoint checkpoint;
  std::vector<v1::ChunkRecord> pending;  // since the last completed checkpoint entry
  std::vector<v1::TrackingData> pending_tracking;
  int64_t consumed = 0;
  int64_t committed = 0;
  bool first = true;
  while (true) {
    v1::CheckpointEntry entry;
    bool clean_eof = false;
    {
      google::protobuf::io::CodedInputStream coded(&input);
      coded.SetTotalBytesLimit(kMaxEntryBytes + 16);
      uint32_t size = 0;
      if (!coded.ReadVarint32(&size)) {
        clean_eof = coded.CurrentPosition() == 0;
        if (!clean_eof) break;
      } else if (size > static_cast<uint32_t>(kMaxEntryBytes)) {
        break;
      } else {
        const auto limit = coded.PushLimit(static_cast<int>(size));
        if (!with_chunks && !first && AtChunkEntry(coded)) {
          if (!coded.Skip(static_cast<int>(size))) break;  // torn
        } else if (!entry.MergeFromCodedStream(&coded) || !coded.ConsumedEntireMessage() ||
                   coded.BytesUntilLimit() != 0) {
          break;
        }
        coded.PopLimit(limit);
        consumed += coded.CurrentPosition();
      }
    }
    if (clean_eof) break;
    if (first) {
      if (!entry.has_metadata()) {
        return absl::DataLossError(
            absl::StrCat("'", path, "' is not a checkpoint: it does not start with the metadata"));
      }
      checkpoint.metadata = std::move(*entry.mutable_metadata());
      first = false;
      committed = consumed;
      continue;
    }
    if (entry.has_chunk()) {
      pending.push_back(std::move(*entry.mutable_chunk()));
    } else if (entry.has_tracking()) {
      pending_tracking.push_back(std::move(*entry.mutable_tracking()));
    } else if (entry.entry_case() == v1::CheckpointEntry::kCheckpointUnixNs) {
      for (v1::ChunkRecord& chunk : pending) checkpoint.chunks.push_back(std::move(chunk));
      pending.clear();
      for (v1::TrackingData& segment : pending_tracking) {
        if (!checkpoint.tracking.has_value()) checkpoint.tracking.emplace();
        MergeTrackingSegment(std::move(segment), &*checkpoint.tracking);
      }
      pending_tracking.clear();
      checkpoint.last_checkpoint = absl::FromUnixNanos(entry.checkpoint_unix_ns());
      ++checkpoint.checkpoints;
      committed = consumed;
    }
  }
  if (first) {
    return absl::DataLossError(absl::StrCat("'", path, "' is empty or damaged at its start"));
  }
  checkpoint.dropped_tail_bytes = file->size - committed;
  return checkpoint;
}

}  // namespace

std::string CheckpointDirectoryFor(absl::string_view measurement_directory) {
  std::string path(measurement_directory);
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return absl::StrCat(path, kSuffix);
}

bool IsCheckpointDirectory(absl::string_view directory) {
  struct stat info;
  const std::string file = absl::StrCat(directory, "/", kFileName);
  // Of any type: ReadCheckpoint then says what is wrong with it (a FIFO, a link, a directory).
  return lstat(file.c_str(), &info) == 0;
}

absl::StatusOr<CheckpointWriter> CheckpointWriter::Create(const std::string& directory,
                                                          const v1::MeasurementMetadata& metadata) {
  if (mkdir(directory.c_str(), 0777) != 0) return OsError("create", directory);
  const std::string path = absl::StrCat(directory, "/", kFileName);
  // Read and write: ReadBack reads through it, whatever happens to the path meanwhile.
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0) {
    absl::Status error = OsError("create", path);
    rmdir(directory.c_str());
    return error;
  }
  CheckpointWriter writer(directory, fd);
  v1::CheckpointEntry entry;
  *entry.mutable_metadata() = metadata;
  std::string bytes;
  AppendEntry(entry, &bytes);
  if (absl::Status status = WriteAll(fd, bytes, path); !status.ok()) {
    writer.Remove();
    return status;
  }
  writer.synced_bytes_ = static_cast<int64_t>(bytes.size());
  // The directory entry itself, so that a crash right after keeps the file.
  const std::string parent = std::filesystem::path(directory).parent_path().string();
  if (const int dir_fd = open(parent.empty() ? "." : parent.c_str(), O_RDONLY | O_DIRECTORY);
      dir_fd >= 0) {
    fsync(dir_fd);
    close(dir_fd);
  }
  return writer;
}

CheckpointWriter::CheckpointWriter(CheckpointWriter&& other) noexcept
    : directory_(std::move(other.directory_)),
      fd_(std::exchange(other.fd_, -1)),
      synced_bytes_(other.synced_bytes_) {}

CheckpointWriter& CheckpointWriter::operator=(CheckpointWriter&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    directory_ = std::move(other.directory_);
    fd_ = std::exchange(other.fd_, -1);
    synced_bytes_ = other.synced_bytes_;
  }
  return *this;
}

CheckpointWriter::~CheckpointWriter() {
  if (fd_ >= 0) close(fd_);
}

absl::Status CheckpointWriter::Append(const std::vector<const v1::ChunkRecord*>& chunks,
                                      absl::Time now, const v1::TrackingData* tracking) {
  if (fd_ < 0) return absl::FailedPreconditionError("checkpoint: closed");
  std::string bytes;
  v1::CheckpointEntry entry;
  for (const v1::ChunkRecord* chunk : chunks) {
    *entry.mutable_chunk() = *chunk;
    AppendEntry(entry, &bytes);
  }
  if (tracking != nullptr) {
    v1::TrackingData& counts = *entry.mutable_tracking();
    counts = *tracking;
    counts.clear_workers();
    AppendEntry(entry, &bytes);
    for (const v1::WorkerSeries& series : tracking->workers()) {
      v1::TrackingData& one = *entry.mutable_tracking();
      one.Clear();
      *one.add_workers() = series;
      AppendEntry(entry, &bytes);
    }
  }
  entry.set_checkpoint_unix_ns(absl::ToUnixNanos(now));
  AppendEntry(entry, &bytes);
  const std::string path = absl::StrCat(directory_, "/", kFileName);
  // What a failed append left (part of it on a full disk) goes first: the reader stops at a
  // torn entry, so every later append would be lost behind it.
  if (ftruncate(fd_, synced_bytes_) != 0) return OsError("truncate", path);
  absl::Status written = WriteAll(fd_, bytes, path);
  if (!written.ok()) {
    if (ftruncate(fd_, synced_bytes_) != 0) {
      // Not cut now: the next append cuts it first, or fails naming the file.
    }
    return written;
  }
  synced_bytes_ += static_cast<int64_t>(bytes.size());
  return absl::OkStatus();
}

void CheckpointWriter::Remove() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  if (directory_.empty()) return;
  unlink(absl::StrCat(directory_, "/", kFileName).c_str());
  rmdir(directory_.c_str());
}

absl::StatusOr<Checkpoint> ReadCheckpoint(absl::string_view directory) {
  const std::string path = absl::StrCat(directory, "/", kFileName);
  // Only a regular file, never through a link: the checkpoint is ours.
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) {
      return absl::NotFoundError(absl::StrCat("no checkpoint in '", directory, "'"));
    }
    if (errno == ELOOP) {
      return absl::FailedPreconditionError(
          absl::StrCat("'", path, "' is a symbolic link, not a regular file (never followed)"));
    }
    return OsError("open", path);
  }
  return ReadCheckpointFrom(fd, path, /*with_chunks=*/true);
}

absl::StatusOr<Checkpoint> CheckpointWriter::ReadBack(bool with_chunks) const {
  const std::string path = absl::StrCat(directory_, "/", kFileName);
  if (fd_ < 0) return absl::FailedPreconditionError(absl::StrCat("'", path, "' is closed"));
  // Its own descriptor (the appends go to the end whatever the offset): the directory may have
  // been removed or replaced since.
  const int fd = fcntl(fd_, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return OsError("read back", path);
  if (lseek(fd, 0, SEEK_SET) != 0) {
    absl::Status error = OsError("read back", path);
    close(fd);
    return error;
  }
  return ReadCheckpointFrom(fd, path, with_chunks);
}

}  // namespace roastcoffea
