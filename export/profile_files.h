// The files `collect profile DIR` writes for a measurement's statistical profiles:
//   profile.folded            folded stacks merged over every worker (flamegraph.pl, speedscope)
//   flamegraph.svg            the flame graph of the same (export/flame_graph.h)
//   profile.<stem>.folded     one per profile, <stem> from its worker (and task prefix or
//   flamegraph.<stem>.svg     section), made safe as a file name and unique
// Each file is written atomically (a temporary file in the same directory, then rename) and
// replaces an earlier one of the same name.
//
// Thread-safety: no shared state; concurrent writes into one directory race on the renames
// only (last one wins). Cost: that of FoldedStacks and RenderFlameGraph per profile.
#ifndef ROASTCOFFEA_EXPORT_PROFILE_FILES_H_
#define ROASTCOFFEA_EXPORT_PROFILE_FILES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "export/flame_graph.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// `text` as a file-name part: characters other than ASCII letters, digits, '.', '_' and '-'
// become '-', runs of '-' collapse, leading/trailing '-' and '.' go, at most 64 characters;
// "" stays "".  "tcp://10.0.0.5:4123" -> "tcp-10.0.0.5-4123".
std::string SanitizeFileNamePart(absl::string_view text);

// One stem per profile of `measurement`, in order: the sanitised worker (else worker name,
// else "all-workers"), then ".<task prefix or section>" when restricted; a stem already taken
// gets "-2", "-3", ... Linear: each base stem remembers its next suffix.
std::vector<std::string> ProfileFileStems(const v1::Measurement& measurement);

struct ProfileFilesOptions {
  FlameGraphOptions flame_graph = {};  // title and subtitle are set per file
  // Folded text over all files together: stacks that do not fit are left out (counted in
  // WrittenProfileFiles). Folded text is quadratic in stack depth.
  int64_t max_folded_bytes = int64_t{256} << 20;
  // Per-profile files are written for the first this many profiles (2 files each).
  int max_profiles = 1000;
  // Keep the thread start-up, thread-pool and chunk-tracking frames in the folded stacks and
  // graphs; by default stacks start at the chunk's processor (profile_tables.h
  // ProfileForDisplay). The folded files always carry the full function names.
  bool show_wrapper_frames = false;
};

struct WrittenProfileFiles {
  std::vector<std::string> paths;  // the merged files first, then per profile
  // Why the merged files were not written (the profiles cannot be merged, e.g. their sampling
  // intervals differ); "" when they were.
  std::string merge_problem;
  // What the limits of ProfileFilesOptions left out.
  int64_t stacks_left_out = 0;
  int64_t samples_left_out = 0;
  int profiles_left_out = 0;
};

// Where `collect profile DIR` writes by default, in order of preference: "DIR/profile" (next to
// the measurement, not among its own files), then "<working_directory>/<name of DIR>-profile",
// then "<temporary_directory>/<name of DIR>-profile" (a shared measurement is often not
// writable). Empty working or temporary directories are left out.
std::vector<std::string> DefaultProfileOutputDirectories(const std::string& measurement_directory,
                                                         const std::string& working_directory,
                                                         const std::string& temporary_directory);

// The first of `candidates` that exists or can be created (its parent must exist), is a
// directory itself (a symbolic link there is passed over, never followed), and in which a file
// can be created (tested by creating one: permission bits say nothing for root).
// `problems` gets one line per candidate passed over ("'DIR/profile': Permission denied").
// FailedPrecondition listing every problem when none is writable.
absl::StatusOr<std::string> FirstWritableDirectory(const std::vector<std::string>& candidates,
                                                   std::vector<std::string>* problems);

// Writes the files above into `directory` (which must exist). FailedPrecondition when the
// measurement has no profiles; errors of the profile library name the profile; I/O errors name
// the path and the OS error.
absl::StatusOr<WrittenProfileFiles> WriteProfileFiles(const v1::Measurement& measurement,
                                                      const std::string& directory,
                                                      const ProfileFilesOptions& options = {});

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_PROFILE_FILES_H_
