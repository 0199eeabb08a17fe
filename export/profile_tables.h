// Terminal tables of statistical profiles (`collect profile DIR`, the HTML report): for each
// profile a header line (worker, its name and host, threads, memory limit, task prefix or
// section, sampling interval, total samples and seconds) and its heaviest exclusive stacks
// (rank, samples, seconds, percent, innermost frame, the stack elided to fit), then the same
// merged over every worker. Drawn with export/tables.h FormatTextTable (Unicode or ASCII).
//
// Thread-safety: pure functions. Cost: that of profile/profile.h (linear in the nodes, the
// merge n log n).
#ifndef ROASTCOFFEA_EXPORT_PROFILE_TABLES_H_
#define ROASTCOFFEA_EXPORT_PROFILE_TABLES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "export/tables.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

struct ProfileTableOptions {
  TableOptions table = {};  // `unicode`: box characters, and "…" rather than "..." in elisions
  int top = 20;             // rows (stacks) per table
  // Display columns of the "Innermost Frame" and "Stack" cells; longer text is elided in the
  // middle of the stack (its root and innermost frames are kept) or at the end of a frame.
  int max_frame_width = 32;
  int max_stack_width = 60;
  // Display columns of the "Function" cell of the top-functions table.
  int max_function_width = 56;
  // Keep the thread start-up, thread-pool and chunk-tracking frames below the chunk's
  // processor (profile/profile_frames.h CollapseWrapperFrames removes them by default).
  bool show_wrapper_frames = false;
};

// Sets the Function, Innermost Frame and Stack widths so that the tables use `width` display
// columns (a terminal's): names are cut only where the terminal is too narrow for them. Never
// below the defaults (a table that does not fit is shrunk by FormatTextTable). `width` <= 0
// leaves the options as they are.
void FitProfileTablesToWidth(int width, ProfileTableOptions* options);

// `profile` as the tables and flame graphs show it: CollapseWrapperFrames unless
// `show_wrapper_frames`. Errors of the profile library.
absl::StatusOr<v1::Profile> ProfileForDisplay(const v1::Profile& profile, bool show_wrapper_frames);

// The top-functions table of `profile` (profile/profile_frames.h TopFunctions, after
// ProfileForDisplay): Rank, Self s, Self %, Total s, Total %, Function (short name; the
// full names are in the folded files). Errors name the title.
absl::StatusOr<TextTable> TopFunctionsTable(const v1::Profile& profile, const std::string& title,
                                            const ProfileTableOptions& options = {});

// The profiles merged into "all workers": those not restricted to a task prefix or section
// (they cover everything their worker did); when every profile is restricted, all of them.
std::vector<const v1::Profile*> ProfilesToMerge(const v1::Measurement& measurement);

// MergeProfiles of ProfilesToMerge. FailedPrecondition when the measurement has no profiles;
// the library's InvalidArgument (e.g. sampling intervals disagree) otherwise.
absl::StatusOr<v1::Profile> MergedProfile(const v1::Measurement& measurement);

// One line describing `profile` (truncated stacks, when the profile marks them, are counted:
// "12 truncated stacks (3.1 %)"), e.g. "Worker tcp://10.0.0.5:4123 (name w-1) on node-7: 4
// threads, memory limit 2.00 GiB; task prefix process; sampling interval 10 ms; 1,234 samples
// = 12.340 s". Text from the measurement has control characters replaced. No newline.
std::string ProfileHeader(const v1::Profile& profile);

// The top-stacks table of `profile` under `title`, as data (the HTML report renders it too).
// Columns: Rank, Samples, Seconds, Percent, Innermost Frame, Stack (root first, ';'-separated,
// short names, after ProfileForDisplay).
// Errors from AnalyzeProfile (an inconsistent profile), naming the title.
absl::StatusOr<TextTable> TopStacksTable(const v1::Profile& profile, const std::string& title,
                                         const ProfileTableOptions& options = {});

// Every profile of the measurement (header line, top functions and top stacks), then, with
// more than one profile to merge, the merged one ("all workers"), or a line saying why they
// cannot be merged (e.g. sampling intervals differ). "" when the measurement has no
// profiles. Ends in '\n'. Errors (an inconsistent profile) name the profile's table.
absl::StatusOr<std::string> FormatProfileTables(const v1::Measurement& measurement,
                                                const ProfileTableOptions& options = {});

// Removes from `measurement` each profile that ValidateProfile refuses (a node whose parent does
// not come before it, an index out of range, ...), so that the others can still be shown, and
// returns one warning per profile removed, naming `source` (the measurement directory), the
// profile's index and worker, and the problem.
std::vector<std::string> LeaveOutCorruptProfiles(v1::Measurement* measurement,
                                                 absl::string_view source);

// `text` elided to at most `max_width` display columns: the stack's root and as many innermost
// frames as fit, with the ellipsis in between ("a;…;y;z"); when not even the root and the
// innermost frame fit, "…;" and the innermost frame cut at its end. Exposed for tests.
std::string ElideStack(const std::vector<std::string>& frames, size_t max_width, bool unicode);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_PROFILE_TABLES_H_
