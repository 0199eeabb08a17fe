// Fuzzes the reader of the original tool's metrics.json (and, through its keys, the Python
// tuple-repr parser): any input must give a measurement or an error, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "ingest/legacy_measurement.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  roastcoffea::LegacyMeasurementFiles files;
  files.metrics_json = text;
  files.start_end_time = "1.5,2.5\n";
  roastcoffea::LegacyLoadOptions options;
  options.naive_time_zone = absl::UTCTimeZone();
  (void)roastcoffea::ParseLegacyMeasurement(files, "fuzz", options);
  (void)roastcoffea::ParsePythonTupleRepr(text);
  return 0;
}
