// A run's checkpoint: what it measured so far, appended while it runs, so that a run killed by
// SIGKILL, the OOM killer or a crash still leaves a measurement (`collect show` reads it, marked
// partial). Layout: <output_dir>/<name>.checkpoint/checkpoint.pbs, a sequence of length-delimited
// v1::CheckpointEntry messages (schema/measurement.proto): the run's metadata first, then per
// checkpoint the chunks recorded since the last one and the checkpoint's time. Each checkpoint
// is appended and fsync'd: a kill loses at most what came after the last one, and a torn last
// entry is dropped by the reader.
//
// Thread-safety: a CheckpointWriter belongs to one thread; ReadCheckpoint shares no state.
// Cost: appending serializes only the new chunks (about 1 us each); reading is one pass.
#ifndef ROASTCOFFEA_STORE_CHECKPOINT_H_
#define ROASTCOFFEA_STORE_CHECKPOINT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// The checkpoint directory of the measurement <parent_dir>/<name>:
// "<parent_dir>/<name>.checkpoint".
std::string CheckpointDirectoryFor(absl::string_view measurement_directory);
// True when `directory` holds an entry named checkpoint.pbs, of any type (ReadCheckpoint refuses
// anything but a regular file, naming it).
bool IsCheckpointDirectory(absl::string_view directory);

struct Checkpoint;

class CheckpointWriter {
 public:
  // Creates `directory` (exclusively: AlreadyExists when it is there, e.g. another run of the
  // same name) and its checkpoint.pbs with the metadata entry, synced. Errors name the path.
  static absl::StatusOr<CheckpointWriter> Create(const std::string& directory,
                                                 const v1::MeasurementMetadata& metadata);
  CheckpointWriter(CheckpointWriter&& other) noexcept;
  CheckpointWriter& operator=(CheckpointWriter&& other) noexcept;
  ~CheckpointWriter();

  // Appends `chunks`, the tracking samples of `tracking` when given (one entry for the worker
  // counts, one per worker series: each far below the entry limit) and a checkpoint entry
  // stamped `now`, then fsyncs. After an error the
  // writer stays usable (the next append may succeed once the disk has room): what the failed
  // append wrote is cut off, and what was synced before stays readable. Strings that are not
  // UTF-8 are written repaired (U+FFFD, store/utf8_repair.h), so the file always parses.
  absl::Status Append(const std::vector<const v1::ChunkRecord*>& chunks, absl::Time now,
                      const v1::TrackingData* tracking = nullptr);
  // Closes the file and removes the directory (the finished run was saved).
  void Remove();
  // What was appended so far, as ReadCheckpoint reads it, through the writer's own descriptor:
  // the same even when the directory was removed or replaced meanwhile (a /tmp cleaner).
  // Without `with_chunks` the chunk records are skipped unparsed (the session, which holds
  // them, reads back only its tracking: 10^6 records parsed again would double its memory).
  absl::StatusOr<Checkpoint> ReadBack(bool with_chunks = true) const;

  const std::string& directory() const { return directory_; }

 private:
  CheckpointWriter(std::string directory, int fd) : directory_(std::move(directory)), fd_(fd) {}
  std::string directory_;
  int fd_ = -1;
  int64_t synced_bytes_ = 0;  // the file's length after the last append that succeeded
};

struct Checkpoint {
  v1::MeasurementMetadata metadata;
  std::vector<v1::ChunkRecord> chunks;  // up to the last complete checkpoint entry
  // The tracking segments up to the last complete checkpoint entry, joined
  // (store/tracking_segments.h); absent when the backend wrote none.
  std::optional<v1::TrackingData> tracking;
  absl::Time last_checkpoint = absl::InfinitePast();  // InfinitePast: none was completed
  int checkpoints = 0;
  // Bytes after the last complete checkpoint (a kill in the middle of an append): dropped.
  int64_t dropped_tail_bytes = 0;
};

// Reads <directory>/checkpoint.pbs. Chunks after the last completed checkpoint entry are dropped
// with the torn tail. Errors: NotFound (no checkpoint.pbs), DataLoss (no metadata entry first),
// the OS's; each names the file.
absl::StatusOr<Checkpoint> ReadCheckpoint(absl::string_view directory);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_STORE_CHECKPOINT_H_
