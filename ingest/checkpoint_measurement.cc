#include "ingest/checkpoint_measurement.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "aggregation/aggregate.h"
#include "aggregation/report_from_chunks.h"
#include "store/checkpoint.h"

namespace roastcoffea {
namespace {

// The value of --taskvine_logs on the run's command line; empty when it is not there.
std::string TaskVineLogsFlag(const v1::MeasurementMetadata& metadata) {
  const auto& args = metadata.command_line();
  for (int i = 0; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (!absl::ConsumePrefix(&arg, "--") && !absl::ConsumePrefix(&arg, "-")) continue;
    if (absl::ConsumePrefix(&arg, "taskvine_logs=")) return std::string(arg);
    if (arg == "taskvine_logs" && i + 1 < args.size()) return args[i + 1];
  }
  return "";
}

// A TaskVine run's chunk records reach collect only at its end (the engine's, from its logs,
// and the command's): a killed run's checkpoint has none. Says so, and how to rebuild the run.
v1::Warning TaskVineChunksAtTheEnd(const v1::MeasurementMetadata& metadata) {
  std::string logs = TaskVineLogsFlag(metadata);
  if (logs.empty()) logs = "<the run's log directory>";
  v1::Warning warning;
  warning.set_code("taskvine_chunks_at_end");
  warning.set_message(absl::StrCat(
      "no chunk records: a TaskVine run's chunks reach collect only when the run ends, so this "
      "partial has none; the engine's logs are on disk: rebuild the whole run from them with "
      "`collect --backend=taskvine --taskvine_logs=",
      logs, "` (without --follow)"));
  return warning;
}

}  // namespace

absl::StatusOr<v1::Measurement> LoadCheckpointMeasurement(absl::string_view directory) {
  absl::StatusOr<Checkpoint> checkpoint = ReadCheckpoint(directory);
  if (!checkpoint.ok()) return checkpoint.status();
  v1::Measurement measurement;
  v1::MeasurementMetadata& metadata = *measurement.mutable_metadata();
  metadata = std::move(checkpoint->metadata);
  const absl::Time start = absl::FromUnixSeconds(metadata.start_time().seconds()) +
                           absl::Nanoseconds(metadata.start_time().nanos());
  const bool have_checkpoint = checkpoint->last_checkpoint != absl::InfinitePast();
  const absl::Time end = have_checkpoint ? checkpoint->last_checkpoint : start;
  const int64_t end_ns = absl::ToUnixNanos(end);
  metadata.mutable_end_time()->set_seconds(end_ns / 1000000000);
  metadata.mutable_end_time()->set_nanos(static_cast<int32_t>(end_ns % 1000000000));
  const double elapsed = std::max(0.0, absl::ToDoubleSeconds(end - start));
  metadata.set_elapsed_seconds(elapsed);
  metadata.set_interrupted(true);
  const std::string what =
      have_checkpoint ? absl::StrFormat("its last checkpoint, %.1f s after the start (%d chunks)",
                                        elapsed, checkpoint->chunks.size())
                      : std::string("its start only: it ended before its first checkpoint");
  metadata.set_interruption(absl::StrCat(
      "the run ended without saving (killed by SIGKILL or the OOM killer, a crash, or a failed "
      "save); this is ",
      what,
      checkpoint->tracking.has_value() ? ", with the tracking series checkpointed so far but "
                                         "without spans and profiles"
                                       : ", without tracking series, spans and profiles"));
  v1::Warning& warning = *measurement.add_warnings();
  warning.set_code("partial_checkpoint");
  warning.set_message(
      absl::StrCat("partial: read from the checkpoint ", directory, ": ", metadata.interruption(),
                   checkpoint->dropped_tail_bytes > 0
                       ? absl::StrCat("; a torn last write of ", checkpoint->dropped_tail_bytes,
                                      " bytes was left out")
                       : ""));
  if (metadata.backend() == "taskvine" && checkpoint->chunks.empty()) {
    *measurement.add_warnings() = TaskVineChunksAtTheEnd(metadata);
  }
  if (checkpoint->tracking.has_value()) {
    *measurement.mutable_tracking() = std::move(*checkpoint->tracking);
  }
  if (!checkpoint->chunks.empty()) {
    *measurement.mutable_report() = BuildWorkflowReport(checkpoint->chunks);
  }
  measurement.mutable_chunks()->Reserve(static_cast<int>(checkpoint->chunks.size()));
  for (v1::ChunkRecord& chunk : checkpoint->chunks) {
    *measurement.add_chunks() = std::move(chunk);
  }
  std::vector<v1::ChunkRecord>().swap(checkpoint->chunks);
  for (v1::Warning& repaired : RepairForAggregation(&measurement)) {
    *measurement.add_warnings() = std::move(repaired);
  }
  absl::StatusOr<v1::AggregatedMetrics> metrics =
      Aggregate(AggregationInputFromMeasurement(measurement));
  if (!metrics.ok()) {
    return absl::Status(metrics.status().code(),
                        absl::StrCat(directory, ": ", metrics.status().message()));
  }
  *measurement.mutable_metrics() = *std::move(metrics);
  return measurement;
}

}  // namespace roastcoffea
