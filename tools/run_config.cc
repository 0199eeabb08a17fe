#include "tools/run_config.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "store/measurement_io.h"
#include "tools/exit_code.h"
#include "tools/threadpool_engine.h"
#include "tools/trace_flag.h"

namespace roastcoffea {

absl::Status ValidateRunConfig(const RunConfig& config) {
  std::vector<std::string> problems = ThreadPoolEngineProblems(config.threadpool);
  const std::string& label = config.label;
  if (label.size() > 200 || std::any_of(label.begin(), label.end(),
                                        [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
    problems.push_back("--label must be one line of at most 200 characters");
  }
  // Below a millisecond a sample costs more than the interval (and 1e-12 s is no duration).
  if (!(config.interval >= 0.001) || config.interval > 3600) {
    problems.push_back(absl::StrCat("--interval must be a number of seconds in [0.001, 3600], got ",
                                    config.interval));
  }
  if (!(config.checkpoint_interval >= 0) || config.checkpoint_interval > 3600) {
    problems.push_back(
        absl::StrCat("--checkpoint_interval must be a number of seconds in [0, 3600], got ",
                     config.checkpoint_interval));
  }
  if (!(config.grace_period >= 0) || config.grace_period > 3600) {
    problems.push_back(absl::StrCat("--grace_period must be a number of seconds in [0, 3600], got ",
                                    config.grace_period));
  }
  if (config.chunk_size < 1) {
    problems.push_back(absl::StrCat("--chunk_size must be at least 1, got ", config.chunk_size));
  }
  if (config.events_per_file < 1) {
    problems.push_back(
        absl::StrCat("--events_per_file must be at least 1, got ", config.events_per_file));
  }
  if (config.files_per_dataset < 1) {
    problems.push_back(
        absl::StrCat("--files_per_dataset must be at least 1, got ", config.files_per_dataset));
  }
  if (!config.name.empty()) {
    if (absl::Status valid = ValidateMeasurementName(config.name); !valid.ok()) {
      problems.push_back(absl::StrCat("--name: ", valid.message()));
    }
  }
  if (absl::Status trace = ValidateTracePath(config.trace); !trace.ok()) {
    problems.push_back(std::string(trace.message()));
  }
  if (problems.empty()) return absl::OkStatus();
  return UsageError(absl::StrJoin(problems, "; "));
}

}  // namespace roastcoffea
