#include "tools/run_output.h"

#include <cstdint>
#include <iostream>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "export/html_report.h"
#include "export/recap.h"
#include "export/report_chunks.h"
#include "profile/profile.h"
#include "store/save_fallback.h"
#include "tools/code_identity.h"
#include "tools/collect_version.h"
#include "tools/command_failure.h"
#include "tools/follow_up_command.h"
#include "tools/live_view.h"
#include "tools/paths.h"
#include "tools/table_style.h"
#include "tools/trace_flag.h"

namespace roastcoffea {

ExitCode WithSaveOutcome(const OutputPlan& plan, ExitCode code) {
  return plan.saved_elsewhere ? ExitCode::kSavedElsewhere : code;
}

absl::StatusOr<OutputPlan> PlanOutput(const RunConfig& config) {
  OutputPlan plan;
  absl::StatusOr<TableOptions> tables = TableStyle(config.tables);
  if (!tables.ok()) return tables.status();
  plan.tables = *tables;
  plan.directory = ResolveUserPath(config.output_dir);
  if (absl::Status status = EnsureWritableDirectory(plan.directory); !status.ok()) {
    return absl::Status(status.code(), absl::StrCat("--output_dir: ", status.message()));
  }
  plan.requested_name = config.name;
  if (!plan.requested_name.empty()) {
    absl::StatusOr<NameClaim> claim = NameClaim::Claim(plan.directory, plan.requested_name);
    if (absl::IsUnavailable(claim.status())) return AsUsageError(claim.status());
    if (!claim.ok()) return claim.status();
    plan.name_claim = std::move(*claim);
    std::cerr << "collect: the name '" << plan.requested_name << "' is claimed for this run in "
              << plan.directory << " (another run with it is refused until this one ends)\n";
  }
  return plan;
}

SessionOptions MakeSessionOptions(const RunConfig& config, const OutputPlan& plan, int argc,
                                  char** argv) {
  SessionOptions options;
  options.interval = absl::Seconds(config.interval);
  options.output_dir = plan.directory;
  options.metadata.set_name(plan.requested_name);  // empty: the session's UTC start time
  options.metadata.set_tool_version(kToolVersion);
  for (int i = 0; i < argc; ++i) options.metadata.add_command_line(argv[i]);
  (*options.metadata.mutable_configuration())["interval_seconds"] = absl::StrCat(config.interval);
  options.grace_period = absl::Seconds(config.grace_period);
  options.checkpoint_interval = absl::Seconds(config.checkpoint_interval);
  // collect is a program: it owns its signals (first: stop and save; second: exit at once).
  options.handle_signals = true;
  if (LiveView() != nullptr) {
    options.on_start = [](const MeasurementSession* s) { LiveView()->Watch(s); };
    options.on_end = [](const MeasurementSession* s) { LiveView()->Unwatch(s); };
  }
  options.program_name = "collect";
  return options;
}

void RecordCodeIdentity(const std::string& label, const std::string& executable,
                        google::protobuf::Map<std::string, std::string>* configuration) {
  if (!label.empty()) (*configuration)[kLabelKey] = label;
  if (executable.empty()) return;
  absl::StatusOr<std::string> id = ElfBuildId(executable);
  if (id.ok()) {
    (*configuration)[kCodeBuildIdKey] = *id;
  } else if (label.empty()) {
    std::cerr << "collect: note: the measured code has no build-id (" << id.status().message()
              << "); give --label=VERSION so that compare tells versions apart\n";
  }
}

bool Interrupted(const MeasurementSession& session, const v1::Measurement& measurement) {
  return measurement.metadata().interrupted() ||
         (session.interrupted() && !session.options().signal_is_the_end);
}

namespace {

// The HTML report's view of the records (export/report_chunks.h), read from the table one at a
// time: never the whole run as messages.
ReportChunks ReportChunksOfTable(const ChunkTable& chunks) {
  ReportChunks report;
  chunks.ForEachRecord([&report](const v1::ChunkRecord& record) { report.Add(record); });
  return report;
}

// The trace writers (trace/) read measurement.chunks(): the records are materialized for them
// alone, and dropped again once the trace is written.
absl::Status WriteTraceOfRun(const std::string& trace, MeasuredRun& run) {
  if (trace.empty()) return absl::OkStatus();
  run.chunks.AppendRecordsTo(run.measurement.mutable_chunks());
  absl::Status written = WriteTrace(run.measurement, trace, std::cout);
  run.measurement.clear_chunks();
  return written;
}

// What to run next, and what the profile holds.
void PrintFollowUps(const RunConfig& config, const v1::Measurement& measurement,
                    const std::string& saved) {
  std::cout << "\nMeasurement saved to " << saved << "\n"
            << "Show it again with: "
            << FollowUpCommand(config.launch, {"show", DisplayPath(config.launch, saved)}) << "\n";
  if (!config.html) {
    std::cout << "HTML report (plots, timeline): "
              << FollowUpCommand(config.launch, {"report", DisplayPath(config.launch, saved)})
              << "\n";
  }
  if (measurement.profiles_size() > 0) {
    int64_t samples = 0;
    for (const v1::Profile& profile : measurement.profiles()) {
      // Per-worker profiles only: section and task-prefix profiles repeat their samples.
      if (!profile.section().empty() || !profile.task_prefix().empty()) continue;
      samples += ProfileSampleCount(profile);
    }
    // A profile without samples (a run too short for the sampling interval) has nothing to show.
    if (samples > 0) {
      std::cout << "Profile: " << samples << " samples; hot functions and flame graphs with: "
                << FollowUpCommand(config.launch, {"profile", DisplayPath(config.launch, saved)})
                << "\n";
    }
  }
  std::cout.flush();
}

}  // namespace

absl::StatusOr<std::string> FinishSaving(
    const RunConfig& config, const OutputPlan& plan, MeasuredRun& run,
    const std::string& extra_output,
    const std::function<absl::StatusOr<std::string>(const MeasuredRun&)>& save,
    const MeasurementSession* session) {
  const v1::Measurement& measurement = run.measurement;
  // The tables and the recap read the aggregated metrics only, never the records.
  std::cout << FormatSummaryTables(measurement, plan.tables);
  if (!extra_output.empty()) std::cout << "\n" << extra_output << "\n";
  std::cout.flush();  // the warnings follow the tables on a terminal
  for (const v1::Warning& warning : measurement.warnings()) {
    std::cerr << "collect: warning: " << ForTerminal(warning.message()) << "\n";
  }
  absl::StatusOr<SaveOutcome> outcome = SaveWithFallback(
      measurement, run.chunks,
      [&run, &save](const v1::Measurement& /*measurement*/, const ChunkTable& /*chunks*/) {
        return save(run);
      },
      FallbackSaveDirectory());
  if (!outcome.ok()) return outcome.status();
  const std::string& saved = outcome->path;
  if (outcome->fell_back) {
    plan.saved_elsewhere = true;
    std::cerr << "collect: could not save the measurement where asked (" << outcome->why
              << "); saved it instead to " << saved << " (exit status 6)\n";
  }
  if (LiveView() != nullptr) LiveView()->SetFinal(measurement, run.chunks);
  // What matters, still on screen when the tables have scrolled away.
  std::cout << "\n" << FormatRecap(measurement, plan.tables);
  PrintFollowUps(config, measurement, saved);
  if (measurement.metadata().interrupted()) {
    std::cerr << "collect: interrupted (" << measurement.metadata().interruption()
              << "): the measurement holds what was done until then: " << saved << "\n";
  } else if (session != nullptr && Interrupted(*session, measurement)) {
    std::cerr << "collect: interrupted (" << session->interruption()
              << ") after the run: the measurement is complete: " << saved << "\n";
  }
  if (absl::Status trace = WriteTraceOfRun(config.trace, run); !trace.ok()) return trace;
  if (config.html) {
    const std::string report = saved + ".html";
    if (absl::Status written =
            WriteHtmlReport(measurement, ReportChunksOfTable(run.chunks), report);
        !written.ok()) {
      return written;
    }
    std::cout << "HTML report written to " << report << "\n";
  }
  return saved;
}

absl::StatusOr<std::string> Finish(const RunConfig& config, const OutputPlan& plan,
                                   MeasurementSession& session, MeasuredRun& run,
                                   const std::string& extra_output) {
  return FinishSaving(
      config, plan, run, extra_output, [&session](const MeasuredRun& r) { return session.Save(r); },
      &session);
}

}  // namespace roastcoffea
