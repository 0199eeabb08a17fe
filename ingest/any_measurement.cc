#include "ingest/any_measurement.h"

#include "store/measurement_io.h"

namespace roastcoffea {

absl::StatusOr<v1::Measurement> LoadAnyMeasurement(absl::string_view directory,
                                                   const LegacyLoadOptions& legacy_options) {
  if (IsLegacyMeasurementDirectory(directory)) {
    return LoadLegacyMeasurement(directory, legacy_options);
  }
  return LoadMeasurement(directory);
}

}  // namespace roastcoffea
