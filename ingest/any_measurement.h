// Loading a measurement directory of either kind: ours (store/measurement_io.h) or the original
// Python tool's (ingest/legacy_measurement.h). This lives in ingest, above store, so that the
// core save/load library depends on neither the foreign format nor //aggregation
// (docs/ARCHITECTURE.md, "Package map").
//
// Thread-safety: no shared state. Cost: a few stat calls, then the chosen loader's.
#ifndef ROASTCOFFEA_INGEST_ANY_MEASUREMENT_H_
#define ROASTCOFFEA_INGEST_ANY_MEASUREMENT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ingest/legacy_measurement.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"

namespace roastcoffea {

// The measurement directory a user meant: `path` itself, or its parent when `path` is a regular
// file that belongs to a measurement directory (measurement.json, measurement.pb, FORMAT, or the
// original's metrics.json / start_end_time.txt / metadata.json), so that
// `collect show DIR/measurement.json` reads DIR. Trailing slashes are dropped.
std::string MeasurementDirectoryFor(absl::string_view path);

// LoadLegacyMeasurement when `directory` is one of the original's (IsLegacyMeasurementDirectory:
// metrics.json and start_end_time.txt, no FORMAT); a run's checkpoint (a <name>.checkpoint
// directory, or <name> when only its checkpoint exists: the run was killed before it saved) as
// a partial measurement (ingest/checkpoint_measurement.h); otherwise LoadMeasurement with its
// errors. `directory` goes through MeasurementDirectoryFor first. `load_options` apply to ours
// (the others are read whole).
absl::StatusOr<v1::Measurement> LoadAnyMeasurement(absl::string_view directory,
                                                   const LegacyLoadOptions& legacy_options = {},
                                                   const LoadOptions& load_options = {});

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INGEST_ANY_MEASUREMENT_H_
