// Fuzz target: any bytes, read as folded stacks or as a serialized v1::Profile, must give a
// clear error or a consistent analysis, never a crash, hang or stack overflow. Checks:
// a parsed profile validates, FoldedStacks is a fixed point after one parse, and the exclusive
// samples of every node and of the ranked stacks add up to the total.
#include <cstddef>
#include <cstdint>
#include <string>

#include "google/protobuf/stubs/logging.h"
#include "profile/profile.h"
#include "profile/profile_frames.h"
#include "schema/measurement.pb.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

// Analysis of any profile: errors are fine, inconsistent numbers are not.
void Analyze(const roastcoffea::v1::Profile& profile) {
  using namespace roastcoffea;
  ProfileAnalysisOptions options;
  options.max_depth = 1000;
  options.max_nodes = 100000;
  options.top_stacks = 1000000;
  absl::StatusOr<ProfileAnalysis> analysis = AnalyzeProfile(profile, options);
  Check(analysis.ok() == ValidateProfile(profile, options).ok());
  absl::StatusOr<std::string> folded = FoldedStacks(profile, options);
  Check(folded.ok() == analysis.ok());
  if (!analysis.ok()) return;
  int64_t node_sum = 0;
  for (const ProfileNodeStats& node : analysis->nodes) {
    Check(node.exclusive_samples >= 0 && node.inclusive_samples >= node.exclusive_samples);
    node_sum += node.exclusive_samples;
  }
  int64_t stack_sum = analysis->nodes.empty() ? 0 : analysis->nodes[0].exclusive_samples;
  for (const RankedStack& stack : analysis->top_stacks) stack_sum += stack.samples;
  Check(node_sum == analysis->total_samples && stack_sum == analysis->total_samples);

  // Merging one profile changes how it is stored, not its stacks.
  absl::StatusOr<v1::Profile> merged = MergeProfiles({profile}, options);
  Check(merged.ok() && ValidateProfile(*merged, options).ok());
  Check(*FoldedStacks(*merged, options) == *folded);
  // Twice: every count doubles, unless that overflows (then an error).
  merged = MergeProfiles({profile, profile}, options);
  if (merged.ok())
    Check(AnalyzeProfile(*merged, options)->total_samples == 2 * analysis->total_samples);
  // Collapsing the plumbing moves samples, never loses them; top functions stay in bounds.
  absl::StatusOr<v1::Profile> collapsed = CollapseWrapperFrames(profile);
  if (collapsed.ok()) {
    absl::StatusOr<ProfileAnalysis> after = AnalyzeProfile(*collapsed, options);
    Check(after.ok() && after->total_samples == analysis->total_samples);
  }
  absl::StatusOr<std::vector<FunctionCost>> functions = TopFunctions(profile, 5);
  if (functions.ok()) {
    for (const FunctionCost& function : *functions) {
      Check(function.self_samples <= function.total_samples &&
            function.total_samples <= analysis->total_samples);
    }
  }
  for (const v1::ProfileFrame& frame : profile.frames()) (void)ShortFrameLabel(frame);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roastcoffea;
  // Invalid UTF-8 in string fields is a parse failure; its log line is only noise here.
  static const bool quiet = [] {
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)quiet;
  const std::string bytes(reinterpret_cast<const char*>(data), size);

  absl::StatusOr<v1::Profile> parsed = ParseFoldedStacks(bytes, 0.01);
  if (parsed.ok()) {
    ProfileAnalysisOptions deep;
    deep.max_depth = 1 << 30;
    Check(ValidateProfile(*parsed, deep).ok());
    Analyze(*parsed);
    absl::StatusOr<std::string> folded = FoldedStacks(*parsed, deep);
    Check(folded.ok());
    absl::StatusOr<v1::Profile> again = ParseFoldedStacks(*folded, 0.01);
    Check(again.ok());
    Check(*FoldedStacks(*again, deep) == *folded);
    Check(AnalyzeProfile(*again, deep)->total_samples ==
          AnalyzeProfile(*parsed, deep)->total_samples);
  }

  v1::Profile profile;
  if (profile.ParseFromString(bytes)) Analyze(profile);
  return 0;
}
