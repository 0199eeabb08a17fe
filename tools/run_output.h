// What every `collect [run]` does around its backend's run: plan where the measurement goes
// (checked before the run), describe the run in the session's options and the measurement's
// configuration, then print the tables, save, and say where and what next.
#ifndef ROASTCOFFEA_TOOLS_RUN_OUTPUT_H_
#define ROASTCOFFEA_TOOLS_RUN_OUTPUT_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "aggregation/measure.h"
#include "collector/measurement_session.h"
#include "export/tables.h"
#include "schema/measurement.pb.h"
#include "store/name_claim.h"
#include "tools/exit_code.h"
#include "tools/run_config.h"

namespace roastcoffea {

// Where a run's measurement goes; checked before the run so that it fails early.
struct OutputPlan {
  std::string directory;
  std::string requested_name;
  TableOptions tables;
  // Held for the whole run when --name is given: a second run with that name is refused at its
  // start instead of running in full and failing to save.
  std::optional<NameClaim> name_claim;
  // Set when the measurement went to the fallback directory (store/save_fallback.h): the run
  // then exits 6 whatever else happened, so that a script looks for it there.
  mutable bool saved_elsewhere = false;
};

// The output directory (created, writable) and the claimed --name. Usage errors for a bad
// --tables or a name another run holds.
absl::StatusOr<OutputPlan> PlanOutput(const RunConfig& config);

// `code`, or 6 when the measurement was saved in the fallback directory.
ExitCode WithSaveOutcome(const OutputPlan& plan, ExitCode code);

// How the measurement is made and where it goes: everything a save needs, even one the
// session makes by itself after an interruption. `argc`/`argv`: the command line, recorded.
SessionOptions MakeSessionOptions(const RunConfig& config, const OutputPlan& plan, int argc,
                                  char** argv);

// The measured code's identity (tools/code_identity.h): `label` (--label) and the ELF build-id
// of `executable` ("" when there is none, e.g. tracking until Ctrl-C).
void RecordCodeIdentity(const std::string& label, const std::string& executable,
                        google::protobuf::Map<std::string, std::string>* configuration);

// Exit 130: the run was cut short, or a signal came while it was being saved. Not when the
// signal was how the run was meant to end (tracking until Ctrl-C).
bool Interrupted(const MeasurementSession& session, const v1::Measurement& measurement);

// Prints the tables (and `extra_output`) and the warnings, saves the run with `save` (falling
// back to another directory when that fails), writes the trace and the HTML report if asked.
// The records stay in run.chunks: only --trace materializes them, into run.measurement for the
// time of writing it (run.measurement.chunks() is empty again on return). `session`: the run's
// session, or null. Returns the directory written.
absl::StatusOr<std::string> FinishSaving(
    const RunConfig& config, const OutputPlan& plan, MeasuredRun& run,
    const std::string& extra_output,
    const std::function<absl::StatusOr<std::string>(const MeasuredRun&)>& save,
    const MeasurementSession* session);

// FinishSaving, saved through `session`.
absl::StatusOr<std::string> Finish(const RunConfig& config, const OutputPlan& plan,
                                   MeasurementSession& session, MeasuredRun& run,
                                   const std::string& extra_output);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_RUN_OUTPUT_H_
