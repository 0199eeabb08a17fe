// Reading the original Python roastcoffea's measurement directories ("roastcoffea_measurement_v1",
// docs/reference.md §1.7) into a v1::Measurement, so `collect show` and `collect compare` work on
// them.
//
// Layout of such a directory:
//   metrics.json        the flat metrics dict (json.dump after the original's encoding: tuple
//                       keys as Python repr text "('execute', 'P', 'thread-cpu', 'seconds')",
//                       datetimes as naive ISO text, NaN/Infinity as bare tokens)
//   start_end_time.txt  "t0,t1\n" (perf_counter seconds)
//   metadata.json       {"timestamp": naive local ISO, "elapsed_time_seconds", "format"}
//   config.json         optional, the run's configuration
//
// What is read, including what the original itself drops when it loads:
//   * every flat key, old names mapped by CanonicalKeyName (event_rate_core_hz is converted
//     from Hz to kHz; overall_rate_mbps gives the MB/s rate), into AggregatedMetrics (MiB
//     values of chunk memory deltas become bytes), plus a WorkflowReport built from the totals;
//   * per_dataset, sections, chunk_info (tuple-repr keys), branch coverage lists;
//   * tracking_data: worker_counts and all ten per-worker series, worker_cpu included, into
//     TrackingData (one WorkerSeries per worker; a series sampled at other instants than the
//     worker's memory series is held at its last value);
//   * raw_chunk_metrics into chunk records (the original's record format, ingest/coffea_json);
//   * raw_span_metrics (tuple-repr keys) into one Span named "legacy" with its fine metrics.
// Naive timestamps are interpreted in `LegacyLoadOptions::naive_time_zone`. NaN and Infinity
// tokens are read as absent values.
//
// Thread-safety: pure functions (LoadLegacyMeasurement reads files). Cost: linear in the size
// of metrics.json.
#ifndef ROASTCOFFEA_INGEST_LEGACY_MEASUREMENT_H_
#define ROASTCOFFEA_INGEST_LEGACY_MEASUREMENT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// The value of "format" in the original's metadata.json.
inline constexpr char kLegacyFormatName[] = "roastcoffea_measurement_v1";

struct LegacyLoadOptions {
  // Time zone of the original's naive timestamps (the scheduler host's local time).
  absl::TimeZone naive_time_zone = absl::LocalTimeZone();
};

// The files of one legacy directory, as text.
struct LegacyMeasurementFiles {
  std::string metrics_json;
  std::string start_end_time;
  std::optional<std::string> metadata_json;
  std::optional<std::string> config_json;
};

// True when `directory` holds metrics.json and start_end_time.txt and no FORMAT file of ours.
bool IsLegacyMeasurementDirectory(absl::string_view directory);

// Parses the files. `source` (the directory) names the input in errors, which are
// InvalidArgument (DataLoss for start_end_time.txt that is not "float,float", like the
// original's ValueError) and name the file and key at fault.
absl::StatusOr<v1::Measurement> ParseLegacyMeasurement(const LegacyMeasurementFiles& files,
                                                       absl::string_view source,
                                                       const LegacyLoadOptions& options = {});

// Reads and parses a legacy directory. NotFound (naming the path) when the directory,
// metrics.json or start_end_time.txt is missing, as the original's FileNotFoundError. The
// measurement's name is the directory's base name.
absl::StatusOr<v1::Measurement> LoadLegacyMeasurement(absl::string_view directory,
                                                      const LegacyLoadOptions& options = {});

// Parses a Python tuple repr such as "('execute', 'P', 'thread-cpu', 'seconds')" or
// "('data.root', 0, 1000)": its elements as text (strings unquoted and unescaped, numbers and
// None as written). InvalidArgument when it is not a tuple of strings, numbers and None.
absl::StatusOr<std::vector<std::string>> ParsePythonTupleRepr(absl::string_view repr);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INGEST_LEGACY_MEASUREMENT_H_
