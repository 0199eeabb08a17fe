// Profile frames as a reader wants them: short C++ names, the executor and chunk-tracking
// plumbing collapsed so that stacks start at the chunk's processor, pseudo-frames for timed
// sections and truncated stacks.
//
// The full names stay in the saved profile, the folded files and the flame graph's hover
// titles; the short names are for tables and the flame graph's boxes. Frames of interpreted
// code (Dask: a Python function with its file and line) are never shortened: `<lambda>` or
// `<listcomp>` are their real names.
//
// Thread-safety: pure functions. Cost: linear in the name or in the profile's nodes.
#ifndef ROASTCOFFEA_PROFILE_PROFILE_FRAMES_H_
#define ROASTCOFFEA_PROFILE_PROFILE_FRAMES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// The root frame the threadpool profiler puts above a stack whose unwind did not reach the
// thread's entry (depth limit, or code without unwind tables): such stacks are incomplete and
// counted as truncated.
inline constexpr char kTruncatedStackFrame[] = "(truncated stack)";
// The frame that collects the samples taken in collapsed plumbing itself (the executor waiting
// for work, chunk tracking's own bookkeeping frames).
inline constexpr char kCollapsedFramesFrame[] = "(executor and wrappers)";

// The pseudo-frame of a timed section ("[section: dijet_mass]"), and whether a function name
// is one.
std::string SectionFrameName(absl::string_view section);
bool IsSectionFrameName(absl::string_view function);

// A demangled C++ name without template arguments, parameters, return type, cv-qualifiers
// and clone suffixes: "double ns::A<int>::f(long) const [clone .isra.0]" -> "ns::A::f";
// "(anonymous namespace)" becomes "(anon)", a lambda "{lambda#2}". Operators keep their
// symbol ("ns::V::operator()", "operator<<"). Names that do not look like C++ (no '(' or
// '<'), and anything the rules would empty, are returned unchanged.
std::string ShortFunctionName(absl::string_view function);

// Whether `frame` is code of an interpreted language (a line number, an engine identifier or
// a .py file): its name is already short and must not be rewritten.
bool IsInterpretedFrame(const v1::ProfileFrame& frame);

// Whether `frame` is a function of a stripped library named by the threadpool symbolizer as
// "<file>+0x<start>" (function starting with its file's name and "+0x").
bool IsUnnamedLibraryFunction(const v1::ProfileFrame& frame);

// FrameLabel (profile/profile.h) with ShortFunctionName for compiled frames; a stripped
// library's "libzstd.so.1+0x1a2b0" without the repeated " (libzstd.so.1)". Names are cut
// like FrameLabel's (CutFrameName), after shortening.
std::string ShortFrameLabel(const v1::ProfileFrame& frame);

// The frames below a chunk's processor: chunk tracking's wrappers
// (roastcoffea::instrumentation_internal TrackChunkErased, InvokeCapturingFailure,
// ChunkTrackingProcessor). A stack's frames down to its last chunk wrapper are plumbing.
bool IsChunkWrapperFrame(const v1::ProfileFrame& frame);

// Frames of thread start-up and the thread pool that sit below any chunk: the thread entry in
// libc/libstdc++ (`clone`, `start_thread`, an unnamed function of libc.so or libstdc++.so),
// `std::thread` / `std::function` / `std::__invoke` machinery, roastcoffea::ThreadPoolExecutor
// and the sample run's driver lambdas (roastcoffea::RunSampleAnalysis).
bool IsPlumbingFrame(const v1::ProfileFrame& frame);

// false only for frames that can be neither a chunk wrapper nor plumbing; a quick test that
// does not shorten the name.
bool MaybeWrapperOrPlumbing(const v1::ProfileFrame& frame);

// Whether any frame of `profile` is a chunk wrapper or plumbing: without one,
// CollapseWrapperFrames would change nothing (callers skip the copy).
bool HasWrapperFrames(const v1::Profile& profile);

// `profile` with each stack starting at its chunk's processor: on every path from the root,
// the leading frames that are plumbing or lie at or above a chunk wrapper (of the same
// leading run) are removed, and the paths that then coincide are merged. Samples that ended
// in a removed frame go to one kCollapsedFramesFrame frame under the root, so totals are
// unchanged. Other fields are copied. Errors of ValidateProfile.
absl::StatusOr<v1::Profile> CollapseWrapperFrames(const v1::Profile& profile);

// One function of the top-functions view (pprof's `top`, perf report's children view).
struct FunctionCost {
  std::string label;          // ShortFrameLabel: instantiations and overloads of a function are one
  std::string full_label;     // FrameLabel of the first frame seen with that short label
  int64_t self_samples = 0;   // samples taken in the function itself
  int64_t total_samples = 0;  // samples with the function anywhere on the stack (once each)
  double self_seconds = 0;
  double total_seconds = 0;
  double self_percent = 0;  // of the profile's total samples
  double total_percent = 0;
};

// The `top` functions with the most self samples (ties: more total samples, then label),
// after the functions are grouped by ShortFrameLabel. Recursion counts a sample once in
// total. Pseudo-frames (sections, truncated stacks, collapsed wrappers) are functions like
// any other. Errors of ValidateProfile. O(nodes) plus sorting the functions.
absl::StatusOr<std::vector<FunctionCost>> TopFunctions(const v1::Profile& profile, int top);

// Samples whose stack starts with kTruncatedStackFrame (the root's children with that
// function, summed). 0 for profiles of engines that do not mark truncation.
int64_t TruncatedStackSamples(const v1::Profile& profile);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_PROFILE_PROFILE_FRAMES_H_
