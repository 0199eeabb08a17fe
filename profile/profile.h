// Statistical profiles: from a call tree of sample counts (v1::Profile, any backend) to
// inclusive/exclusive times, ranked exclusive stacks and folded stacks.
//
// Every function here walks the flat node list (parents before children) iteratively: a tree
// of hostile depth costs memory proportional to its size, never stack. Nothing here allocates
// per sample; cost is linear in the number of nodes (ranking: n log n).
//
// Counts are the engine's inclusive counts. A node's exclusive count is its count minus the
// sum of its children's counts (Dask counts a sample once per node on its stack). A root count
// of 0 means "not given": the total is then the sum of the root's children.
#ifndef ROASTCOFFEA_PROFILE_PROFILE_H_
#define ROASTCOFFEA_PROFILE_PROFILE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

struct ProfileAnalysisOptions {
  // How many exclusive stacks ProfileAnalysis::top_stacks keeps (the heaviest first).
  int top_stacks = 20;
  // Trees deeper than this are refused (InvalidArgument), as are more nodes than max_nodes.
  int max_depth = 100000;
  int64_t max_nodes = 50'000'000;
  // Folded text is quadratic in depth (every line repeats its stack): a 40,000-deep chain of
  // one-letter frames is 1.6 GB. FoldedStacks refuses more than this; BoundedFoldedStacks
  // leaves out the lines that do not fit.
  int64_t max_folded_bytes = int64_t{256} << 20;
  // A ranked stack keeps its outermost frame and as many of its innermost frames as fit in
  // this many bytes of labels (full and short); the frames between are left out and counted
  // (RankedStack::frames_left_out). Without it, 20 stacks of a 100,000-deep tree held
  // gigabytes of labels. The innermost frame is always kept.
  int64_t max_stack_bytes = int64_t{64} << 10;
};

// One node of the analysed tree; same index as in v1::Profile::nodes.
struct ProfileNodeStats {
  int parent = -1;  // -1 for the root
  int frame = -1;   // index into v1::Profile::frames; -1 for the root
  int depth = 0;    // 0 for the root
  int64_t inclusive_samples = 0;
  int64_t exclusive_samples = 0;
  double inclusive_seconds = 0;  // samples x the profile's sampling interval
  double exclusive_seconds = 0;
  double inclusive_percent = 0;  // of the total samples (0-100)
  double exclusive_percent = 0;
};

// One distinct stack (root first, frame labels joined by ';') and the samples that ended in
// it: the exclusive count of its last node. Stacks with the same labels are summed. Samples
// that ended in the root itself (no frame at all) have no stack: they are only in
// nodes[0].exclusive_samples, never in top_stacks or FoldedStacks.
// A stack deeper than options.max_stack_bytes allows keeps only its outermost frame and its
// innermost ones: `frames_left_out` frames after frames[0] are not in `frames`,
// `short_frames` or `folded`.
struct RankedStack {
  std::string folded;               // "outer;middle;inner"
  std::vector<std::string> frames;  // the same labels, root first
  // The same frames with short C++ names (profile/profile_frames.h ShortFrameLabel), for
  // display; `frames` keeps the full ones.
  std::vector<std::string> short_frames;
  int depth = 0;                // frames of the whole stack
  int64_t frames_left_out = 0;  // depth - frames.size()
  int64_t samples = 0;
  double seconds = 0;
  double percent = 0;  // of the total samples
};

struct ProfileAnalysis {
  int64_t total_samples = 0;
  double seconds_per_sample = 0;  // the profile's sampling_interval_seconds
  double total_seconds = 0;
  std::vector<ProfileNodeStats> nodes;
  // Heaviest exclusive stacks, descending by samples, ties by `folded` ascending; at most
  // options.top_stacks of them.
  std::vector<RankedStack> top_stacks;
};

// InvalidArgument naming the first problem: a parent index not before its child, an index out
// of range, a non-root node with parent -1, a negative count, a child whose counts exceed its
// parent's (inconsistent inclusive counts), depth or size over the options' limits. Also: a
// node 0 whose parent or frame is not -1, a negative or non-finite sampling interval. An empty
// node list is a valid profile without samples.
absl::Status ValidateProfile(const v1::Profile& profile,
                             const ProfileAnalysisOptions& options = {});

absl::StatusOr<ProfileAnalysis> AnalyzeProfile(const v1::Profile& profile,
                                               const ProfileAnalysisOptions& options = {});

// The profile's sample count without analysing it: the root's count, or, when that is 0 ("not
// given"), the sum of the root's children's counts (saturating; negative counts are skipped).
// Linear in the node count; no validation.
int64_t ProfileSampleCount(const v1::Profile& profile);

// Longest function or file name a label keeps whole. A name is stored once per frame, but a
// label is repeated on every stack line, table row and flame-graph box below it: a 1 MB name
// 240 levels up a Dask tree made `collect profile` write and scan gigabytes.
inline constexpr size_t kMaxFrameNameBytes = 1024;

// `name` when at most kMaxFrameNameBytes long; otherwise its first kMaxFrameNameBytes bytes
// (fewer, so as not to split a UTF-8 character) followed by "...[+N bytes]", N the bytes cut.
// Two names with the same first bytes and the same length get the same text, so their frames
// are one in stacks and merges.
std::string CutFrameName(absl::string_view name);

// The label of a frame in stacks and flame graphs: "function (file:line)", "function (file)",
// or "function" — with ';' and line breaks replaced by ' ' so folded lines stay parseable. An
// empty function is shown as "?", so a label is never empty. Function and file are cut by
// CutFrameName, so a label is at most about 2 KiB; the saved profile keeps the full names.
std::string FrameLabel(const v1::ProfileFrame& frame);

// Folded stacks, one line per distinct stack with a non-zero exclusive count:
// "outer;middle;inner 42\n", sorted by stack. What flamegraph.pl and speedscope read.
// ResourceExhausted when the text would exceed options.max_folded_bytes.
absl::StatusOr<std::string> FoldedStacks(const v1::Profile& profile,
                                         const ProfileAnalysisOptions& options = {});

struct BoundedFoldedText {
  std::string text;
  int64_t stacks_left_out = 0;   // lines that did not fit
  int64_t samples_left_out = 0;  // their samples
};

// FoldedStacks within `max_bytes` (at most options.max_folded_bytes): in order, a line that
// does not fit in what is left is left out and counted; shorter later lines still go in.
// Cost: linear in the tree plus the text written.
absl::StatusOr<BoundedFoldedText> BoundedFoldedStacks(const v1::Profile& profile, int64_t max_bytes,
                                                      const ProfileAnalysisOptions& options = {});

// The inverse: a tree whose frames carry the labels as `function`. FoldedStacks of the result
// equals the input (sorted, merged). InvalidArgument names the line of a malformed input.
// A line is "STACK COUNT", split at its last ' '; STACK is frames joined by ';' (none empty),
// COUNT a non-negative int64 in decimal digits. Blank lines are skipped, a trailing '\r' is
// dropped. The root's count is the total.
absl::StatusOr<v1::Profile> ParseFoldedStacks(absl::string_view folded,
                                              double sampling_interval_seconds);

// One tree with the samples of all `profiles`, nodes joined by their path of frame labels.
// Worker fields are cleared; sampling intervals must agree (InvalidArgument otherwise).
// Intervals agree within a relative 1e-9. source, task_prefix and section are kept when every
// profile has the same, else cleared; start is the earliest known, end the latest; chunk
// samples are summed per (dataset, file, entry range); the root count is the sum of the totals.
// Each input is validated with `options`; errors name the profile's index.
absl::StatusOr<v1::Profile> MergeProfiles(absl::Span<const v1::Profile> profiles,
                                          const ProfileAnalysisOptions& options = {});

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_PROFILE_PROFILE_H_
