#include "tools/profile_command.h"

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "export/profile_files.h"
#include "export/profile_tables.h"
#include "export/tables.h"
#include "ingest/any_measurement.h"
#include "tools/command_failure.h"
#include "tools/paths.h"
#include "tools/table_style.h"

namespace roastcoffea {
namespace {

// --output, or (a shared measurement is often read-only) the first writable of DIR/profile,
// ./<name>-profile and $TMPDIR/<name>-profile, saying which were not.
absl::StatusOr<std::string> ProfileOutputDirectory(const std::string& requested,
                                                   const std::string& directory) {
  if (!requested.empty()) {
    const std::string output = ResolveUserPath(requested);
    if (absl::Status status = EnsureWritableDirectory(output); !status.ok()) {
      return absl::Status(status.code(), absl::StrCat("--output: ", status.message()));
    }
    return output;
  }
  const char* tmpdir = std::getenv("TMPDIR");
  std::vector<std::string> problems;
  absl::StatusOr<std::string> chosen = FirstWritableDirectory(
      DefaultProfileOutputDirectories(directory, ResolveUserPath("."),
                                      tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp"),
      &problems);
  if (!chosen.ok()) return chosen.status();
  for (const std::string& problem : problems) {
    std::cerr << "collect: note: cannot write the profile files to " << problem << "\n";
  }
  return chosen;
}

// The files written, and warnings for what was left out of them.
void PrintWrittenProfileFiles(const std::string& output, const WrittenProfileFiles& written) {
  std::cout << "\nFolded stacks (flamegraph.pl, speedscope) and flame graphs written to " << output
            << ":\n";
  for (const std::string& path : written.paths) std::cout << "  " << path << "\n";
  if (!written.merge_problem.empty()) {
    std::cerr << "collect: warning: no merged profile.folded and flamegraph.svg: "
              << written.merge_problem << "\n";
  }
  if (written.stacks_left_out > 0) {
    std::cerr << "collect: warning: " << written.stacks_left_out << " stacks ("
              << written.samples_left_out
              << " samples) left out of the .folded files: they would exceed "
              << (ProfileFilesOptions().max_folded_bytes >> 20)
              << " MiB in all (each line repeats its whole stack)\n";
  }
  if (written.profiles_left_out > 0) {
    std::cerr << "collect: warning: files for " << written.profiles_left_out
              << " more profiles not written (at most " << ProfileFilesOptions().max_profiles
              << "; the merged files include them)\n";
  }
}

}  // namespace

ExitCode ProfileCommand(const ProfileConfig& config, const std::string& user_directory) {
  absl::StatusOr<TableOptions> tables = TableStyle(config.tables);
  if (!tables.ok()) return Fail(tables.status());
  if (config.top < 1) {
    return Fail(UsageError(absl::StrCat("--top must be at least 1, got ", config.top)));
  }
  const std::string directory = MeasurementDirectoryFor(ResolveUserPath(user_directory));
  absl::StatusOr<v1::Measurement> measurement = LoadAnyMeasurement(directory);
  if (!measurement.ok()) return Fail(measurement.status());
  if (measurement->profiles_size() == 0) {
    return Fail(absl::FailedPreconditionError(absl::StrCat(
        "no profiles in ", directory, ": run with --profile (threadpool) or --backend=dask")));
  }
  // Like `show` and `report`, a corrupt profile costs that profile, not the others.
  const int profiles = measurement->profiles_size();
  for (const std::string& warning : LeaveOutCorruptProfiles(&*measurement, directory)) {
    std::cerr << "collect: warning: " << ForTerminal(warning) << "\n";
  }
  if (measurement->profiles_size() == 0) {
    return Fail(absl::DataLossError(absl::StrCat("every profile in ", directory, " (", profiles,
                                                 ") is corrupt; nothing to show")));
  }
  ProfileTableOptions options;
  options.table = *tables;
  options.top = config.top;
  options.show_wrapper_frames = config.wrapper_frames;
  // Names use the width the terminal gives ($COLUMNS, the terminal, else 100).
  FitProfileTablesToWidth(options.table.width > 0 ? options.table.width : TerminalWidth(),
                          &options);
  absl::StatusOr<std::string> text = FormatProfileTables(*measurement, options);
  if (!text.ok()) {
    return Fail(
        absl::Status(text.status().code(), absl::StrCat(directory, ": ", text.status().message())));
  }
  std::cout << *text;
  absl::StatusOr<std::string> output = ProfileOutputDirectory(config.output, directory);
  if (!output.ok()) return Fail(output.status());
  ProfileFilesOptions file_options;
  file_options.show_wrapper_frames = options.show_wrapper_frames;
  absl::StatusOr<WrittenProfileFiles> written =
      WriteProfileFiles(*measurement, *output, file_options);
  if (!written.ok()) return Fail(written.status());
  PrintWrittenProfileFiles(*output, *written);
  return ExitCode::kOk;
}

}  // namespace roastcoffea
