// Never losing a finished run at save time: when its measurement cannot be saved where the user
// asked (a full or read-only disk, the output directory removed or replaced during the run), it
// is saved in a fallback directory instead, and collect says where and exits 6.
#ifndef ROASTCOFFEA_STORE_SAVE_FALLBACK_H_
#define ROASTCOFFEA_STORE_SAVE_FALLBACK_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// $TMPDIR/roastcoffea-unsaved, or /tmp/roastcoffea-unsaved when TMPDIR is unset or relative.
std::string FallbackSaveDirectory();

struct SaveOutcome {
  std::string path;        // where the measurement is
  bool fell_back = false;  // true: not where asked; `why` says what the first save hit
  std::string why;
};

// `save(measurement)`; if that fails, the measurement under a free name (its metadata.name, or
// "measurement") in `fallback_directory`. An error only when both fail: it names both reasons.
absl::StatusOr<SaveOutcome> SaveWithFallback(
    const v1::Measurement& measurement,
    const std::function<absl::StatusOr<std::string>(const v1::Measurement&)>& save,
    const std::string& fallback_directory);
// The same for a measurement whose chunk records are held apart in `chunks` (MeasuredRun,
// aggregation/measure.h): `save(measurement, chunks)`, else the fallback save of both.
absl::StatusOr<SaveOutcome> SaveWithFallback(
    const v1::Measurement& measurement, const ChunkTable& chunks,
    const std::function<absl::StatusOr<std::string>(const v1::Measurement&, const ChunkTable&)>&
        save,
    const std::string& fallback_directory);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_STORE_SAVE_FALLBACK_H_
