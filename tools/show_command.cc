#include "tools/show_command.h"

#include <iostream>
#include <string>

#include "absl/status/statusor.h"
#include "export/output_formats.h"
#include "export/tables.h"
#include "ingest/any_measurement.h"
#include "tools/command_failure.h"
#include "tools/live_view.h"
#include "tools/paths.h"
#include "tools/table_style.h"
#include "tools/trace_flag.h"

namespace roastcoffea {

ExitCode ShowCommand(const ShowConfig& config, const std::string& directory) {
  if (absl::Status trace = ValidateTracePath(config.trace); !trace.ok()) {
    return Fail(AsUsageError(trace));
  }
  absl::StatusOr<TableOptions> tables = TableStyle(config.tables);
  if (!tables.ok()) return Fail(tables.status());
  const OutputFormat* format = nullptr;
  if (config.format != "table") {
    absl::StatusOr<const OutputFormat*> found = FindOutputFormat(config.format);
    if (!found.ok()) return Fail(AsUsageError(found.status()));
    format = *found;
  }
  // The tables and flat metrics read only the aggregated metrics: the chunk records (1.5 GB
  // parsed for a million chunks) are read only for the trace or the served report, the
  // metrics' per-record chunk_info only for those and the formats that print it (csv, json).
  LoadOptions load_options;
  load_options.chunk_records = !config.trace.empty() || !config.serve.empty();
  load_options.chunk_info =
      load_options.chunk_records || (format != nullptr && format->reads_chunk_info);
  // The tables read of the worker series only how workers left with tasks: the series are cut
  // to the rows that say it while read (store/worker_series_ends.h), in one read.
  load_options.whole_worker_series = load_options.chunk_records;
  absl::StatusOr<v1::Measurement> measurement =
      LoadAnyMeasurement(ResolveUserPath(directory), {}, load_options);
  if (!measurement.ok()) return Fail(measurement.status());
  if (format != nullptr) {
    format->write(*measurement, std::cout);
    // The flat metrics own stdout (a script reads them): the trace's note goes to stderr.
    if (absl::Status trace = WriteTrace(*measurement, config.trace, std::cerr); !trace.ok()) {
      return Fail(trace);
    }
    return ExitCode::kOk;
  }
  std::cout << FormatSummaryTables(*measurement, *tables);
  if (measurement->metadata().interrupted()) {
    std::cout << "\nInterrupted (" << measurement->metadata().interruption()
              << "): the measurement holds what was done until then.\n";
  }
  if (absl::Status trace = WriteTrace(*measurement, config.trace, std::cout); !trace.ok()) {
    return Fail(trace);
  }
  if (!config.serve.empty()) {
    if (absl::Status serving = StartLiveView(config.serve); !serving.ok()) return Fail(serving);
    LiveView()->SetFinal(*measurement);
    std::cout.flush();
    std::cerr << "collect: serving " << measurement->metadata().name() << " until Ctrl-C\n";
    ServeUntilSignal(absl::InfiniteDuration());
    LiveView()->Stop();
  }
  return ExitCode::kOk;
}

}  // namespace roastcoffea
