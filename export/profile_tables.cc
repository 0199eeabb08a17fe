#include "export/profile_tables.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "export/display_width.h"
#include "profile/profile.h"
#include "profile/profile_frames.h"

namespace roastcoffea {
namespace {

using export_internal::DisplayWidth;
using export_internal::ReplaceControlCharacters;

absl::string_view Ellipsis(bool unicode) { return unicode ? "\u2026" : "..."; }

// `text` cut at its end to at most `max_width` columns, ending in the ellipsis when cut.
std::string ElideEnd(absl::string_view text, size_t max_width, bool unicode) {
  if (DisplayWidth(text) <= max_width) return std::string(text);
  const absl::string_view ellipsis = Ellipsis(unicode);
  const size_t ellipsis_width = DisplayWidth(ellipsis);
  if (max_width < ellipsis_width) return "";
  size_t width = 0;
  size_t end = 0;
  while (end < text.size()) {
    size_t next = end + 1;
    while (next < text.size() && (static_cast<unsigned char>(text[next]) & 0xC0) == 0x80) ++next;
    const size_t w = DisplayWidth(text.substr(end, next - end));
    if (width + w + ellipsis_width > max_width) break;
    width += w;
    end = next;
  }
  return absl::StrCat(text.substr(0, end), ellipsis);
}

// Python's "{:,}".
std::string Thousands(int64_t value) {
  // Through uint64_t so that the most negative value does not overflow.
  const uint64_t magnitude =
      value < 0 ? ~static_cast<uint64_t>(value) + 1 : static_cast<uint64_t>(value);
  const std::string digits = absl::StrCat(magnitude);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return value < 0 ? absl::StrCat("-", out) : out;
}

std::string Interval(double seconds) {
  if (seconds <= 0) return "unknown";
  if (seconds < 1) return absl::StrFormat("%.4g ms", seconds * 1e3);
  return absl::StrFormat("%.4g s", seconds);
}

std::string Clean(absl::string_view text) { return ReplaceControlCharacters(text); }

// Bytes in binary units, like the summary tables (FormatBytes without trailing zeros noise).
std::string Memory(int64_t bytes) { return FormatBytes(static_cast<double>(bytes)); }

// The profile as displayed: `profile` itself, or its collapsed copy kept in `storage`.
absl::StatusOr<const v1::Profile*> Displayed(const v1::Profile& profile, bool show_wrapper_frames,
                                             absl::StatusOr<v1::Profile>& storage) {
  if (show_wrapper_frames || !HasWrapperFrames(profile)) return &profile;
  storage = CollapseWrapperFrames(profile);
  if (!storage.ok()) return storage.status();
  return &*storage;
}

}  // namespace

std::string ElideStack(const std::vector<std::string>& frames, size_t max_width, bool unicode) {
  const std::string full = absl::StrJoin(frames, ";");
  if (DisplayWidth(full) <= max_width || frames.empty()) return ElideEnd(full, max_width, unicode);
  const std::string gap = absl::StrCat(";", Ellipsis(unicode), ";");
  // Root, gap, and as many innermost frames as fit. Each frame's width is measured once, and
  // only until the cell is full: the cost is bounded by max_width, not by the stack.
  const size_t head_width = DisplayWidth(frames[0]) + DisplayWidth(gap);
  size_t width = head_width;
  size_t first_kept = frames.size();
  for (size_t i = frames.size(); i-- > 1;) {
    if (width > max_width) break;
    const size_t frame_width = DisplayWidth(frames[i]) + (i + 1 == frames.size() ? 0 : 1);
    if (width + frame_width > max_width) break;
    width += frame_width;
    first_kept = i;
  }
  if (first_kept < frames.size()) {
    return absl::StrCat(frames[0], gap,
                        absl::StrJoin(frames.begin() + first_kept, frames.end(), ";"));
  }
  const std::string lead = absl::StrCat(Ellipsis(unicode), ";");
  const size_t lead_width = DisplayWidth(lead);
  if (max_width <= lead_width) return ElideEnd(frames.back(), max_width, unicode);
  return absl::StrCat(lead, ElideEnd(frames.back(), max_width - lead_width, unicode));
}

std::vector<const v1::Profile*> ProfilesToMerge(const v1::Measurement& measurement) {
  std::vector<const v1::Profile*> whole;
  std::vector<const v1::Profile*> all;
  for (const v1::Profile& profile : measurement.profiles()) {
    all.push_back(&profile);
    if (profile.task_prefix().empty() && profile.section().empty()) whole.push_back(&profile);
  }
  return whole.empty() ? all : whole;
}

absl::StatusOr<v1::Profile> MergedProfile(const v1::Measurement& measurement) {
  const std::vector<const v1::Profile*> chosen = ProfilesToMerge(measurement);
  if (chosen.empty()) {
    return absl::FailedPreconditionError("the measurement has no profiles");
  }
  std::vector<v1::Profile> copies;
  copies.reserve(chosen.size());
  for (const v1::Profile* profile : chosen) copies.push_back(*profile);
  return MergeProfiles(absl::MakeConstSpan(copies));
}

// What a sample counts: Dask's profiler samples each thread's stack on a wall clock, so a
// sleep or a wait on I/O or a lock is counted like computation; the thread pool's profiler
// samples thread CPU time, so only time on a CPU is. Readers compare the two kinds wrongly
// unless told.
absl::string_view SampleKind(const v1::Profile& profile) {
  if (profile.source() == "dask") return "wall-clock samples (include sleep and waits)";
  if (profile.source() == "threadpool") return "CPU-time samples (on-CPU time only)";
  return "";
}

std::string ProfileHeader(const v1::Profile& profile) {
  std::string out;
  if (profile.worker().empty()) {
    out = "All workers";
  } else {
    out = absl::StrCat("Worker ", Clean(profile.worker()));
  }
  if (!profile.worker_name().empty() && profile.worker_name() != profile.worker()) {
    absl::StrAppend(&out, " (name ", Clean(profile.worker_name()), ")");
  }
  if (!profile.host().empty()) absl::StrAppend(&out, " on ", Clean(profile.host()));
  std::vector<std::string> details;
  if (!profile.source().empty())
    details.push_back(absl::StrCat("source ", Clean(profile.source())));
  if (const absl::string_view kind = SampleKind(profile); !kind.empty()) {
    details.push_back(std::string(kind));
  }
  if (profile.threads() > 0) {
    details.push_back(
        absl::StrCat(profile.threads(), profile.threads() == 1 ? " thread" : " threads"));
  }
  if (profile.memory_limit_bytes() > 0) {
    details.push_back(absl::StrCat("memory limit ", Memory(profile.memory_limit_bytes())));
  }
  if (!profile.task_prefix().empty()) {
    details.push_back(absl::StrCat("task prefix ", Clean(profile.task_prefix())));
  }
  if (!profile.section().empty()) {
    details.push_back(absl::StrCat("section ", Clean(profile.section())));
  }
  details.push_back(
      absl::StrCat("sampling interval ", Interval(profile.sampling_interval_seconds())));
  absl::StatusOr<ProfileAnalysis> analysis = AnalyzeProfile(profile, [] {
    ProfileAnalysisOptions options;
    options.top_stacks = 0;
    return options;
  }());
  if (analysis.ok()) {
    details.push_back(absl::StrFormat("%s samples = %.3f s", Thousands(analysis->total_samples),
                                      analysis->total_seconds));
  }
  const int64_t truncated = TruncatedStackSamples(profile);
  if (truncated > 0 && analysis.ok()) {
    details.push_back(absl::StrFormat(
        "%s truncated %s (%.1f %%)", Thousands(truncated), truncated == 1 ? "stack" : "stacks",
        analysis->total_samples > 0
            ? 100.0 * static_cast<double>(truncated) / static_cast<double>(analysis->total_samples)
            : 0.0));
  }
  if (profile.lost_samples() > 0) {
    details.push_back(absl::StrCat(Thousands(profile.lost_samples()), " lost"));
  }
  if (profile.samples_outside_chunks() > 0) {
    details.push_back(absl::StrCat(Thousands(profile.samples_outside_chunks()), " outside chunks"));
  }
  absl::StrAppend(&out, ": ", absl::StrJoin(details, "; "));
  return out;
}

absl::StatusOr<v1::Profile> ProfileForDisplay(const v1::Profile& profile,
                                              bool show_wrapper_frames) {
  if (show_wrapper_frames || !HasWrapperFrames(profile)) {
    if (absl::Status valid = ValidateProfile(profile); !valid.ok()) return valid;
    return profile;
  }
  return CollapseWrapperFrames(profile);
}

absl::StatusOr<TextTable> TopFunctionsTable(const v1::Profile& profile, const std::string& title,
                                            const ProfileTableOptions& options) {
  absl::StatusOr<v1::Profile> storage;
  absl::StatusOr<const v1::Profile*> shown =
      Displayed(profile, options.show_wrapper_frames, storage);
  absl::StatusOr<std::vector<FunctionCost>> functions =
      shown.ok() ? TopFunctions(**shown, options.top > 0 ? options.top : 0)
                 : absl::StatusOr<std::vector<FunctionCost>>(shown.status());
  if (!functions.ok()) {
    return absl::Status(functions.status().code(),
                        absl::StrCat(title, ": ", functions.status().message()));
  }
  TextTable table;
  table.title = title;
  table.header = {"Rank", "Self s", "Self %", "Total s", "Total %", "Function"};
  table.right_aligned = {true, true, true, true, true, false};
  const size_t width =
      static_cast<size_t>(options.max_function_width > 1 ? options.max_function_width : 1);
  int rank = 0;
  for (const FunctionCost& function : *functions) {
    table.rows.push_back({
        absl::StrCat(++rank),
        absl::StrFormat("%.3f", function.self_seconds),
        absl::StrFormat("%.1f%%", function.self_percent),
        absl::StrFormat("%.3f", function.total_seconds),
        absl::StrFormat("%.1f%%", function.total_percent),
        ElideEnd(Clean(function.label), width, options.table.unicode),
    });
  }
  return table;
}

absl::StatusOr<TextTable> TopStacksTable(const v1::Profile& profile, const std::string& title,
                                         const ProfileTableOptions& options) {
  ProfileAnalysisOptions analysis_options;
  analysis_options.top_stacks = options.top > 0 ? options.top : 0;
  absl::StatusOr<v1::Profile> storage;
  absl::StatusOr<const v1::Profile*> shown =
      Displayed(profile, options.show_wrapper_frames, storage);
  absl::StatusOr<ProfileAnalysis> analysis = shown.ok()
                                                 ? AnalyzeProfile(**shown, analysis_options)
                                                 : absl::StatusOr<ProfileAnalysis>(shown.status());
  if (!analysis.ok()) {
    return absl::Status(analysis.status().code(),
                        absl::StrCat(title, ": ", analysis.status().message()));
  }
  TextTable table;
  table.title = title;
  table.header = {"Rank", "Samples", "Seconds", "Percent", "Innermost Frame", "Stack"};
  table.right_aligned = {true, true, true, true, false, false};
  const bool unicode = options.table.unicode;
  const size_t frame_width =
      static_cast<size_t>(options.max_frame_width > 1 ? options.max_frame_width : 1);
  const size_t stack_width =
      static_cast<size_t>(options.max_stack_width > 1 ? options.max_stack_width : 1);
  int rank = 0;
  for (const RankedStack& stack : analysis->top_stacks) {
    std::vector<std::string> frames;
    frames.reserve(stack.short_frames.size());
    for (const std::string& frame : stack.short_frames) frames.push_back(Clean(frame));
    // A very deep stack comes without its middle frames (ProfileAnalysisOptions
    // max_stack_bytes); say so where they were.
    if (stack.frames_left_out > 0 && !frames.empty()) {
      frames.insert(frames.begin() + 1,
                    absl::StrCat("(", Thousands(stack.frames_left_out), " frames left out)"));
    }
    table.rows.push_back({
        absl::StrCat(++rank),
        Thousands(stack.samples),
        absl::StrFormat("%.3f", stack.seconds),
        absl::StrFormat("%.1f%%", stack.percent),
        frames.empty() ? std::string() : ElideEnd(frames.back(), frame_width, unicode),
        ElideStack(frames, stack_width, unicode),
    });
  }
  return table;
}

std::vector<std::string> LeaveOutCorruptProfiles(v1::Measurement* measurement,
                                                 absl::string_view source) {
  std::vector<std::string> warnings;
  google::protobuf::RepeatedPtrField<v1::Profile>& profiles = *measurement->mutable_profiles();
  int kept = 0;
  for (int i = 0; i < profiles.size(); ++i) {
    const v1::Profile& profile = profiles.Get(i);
    if (absl::Status valid = ValidateProfile(profile); !valid.ok()) {
      std::string which = absl::StrCat("profile ", i);
      if (!profile.worker().empty()) absl::StrAppend(&which, " (", Clean(profile.worker()), ")");
      warnings.push_back(
          absl::StrCat(source, ": ", which, " is corrupt and left out: ", Clean(valid.message())));
      continue;
    }
    if (kept != i) profiles.SwapElements(kept, i);
    ++kept;
  }
  profiles.DeleteSubrange(kept, profiles.size() - kept);
  return warnings;
}

void FitProfileTablesToWidth(int width, ProfileTableOptions* options) {
  if (width <= 0) return;
  // What the other cells and the borders take: Rank, Self s, Self %, Total s, Total % (34
  // columns at their usual widths) and 6 cells' "| " ... " " plus the last "|" (19).
  constexpr int kTopFunctionsFixed = 53;
  // Rank, Samples, Seconds, Percent (25) and 6 cells' borders (19).
  constexpr int kTopStacksFixed = 44;
  // Never below the defaults: at 100 columns they read best, and FormatTextTable shrinks a
  // table that does not fit anyway.
  const ProfileTableOptions defaults;
  options->max_function_width = std::max(defaults.max_function_width, width - kTopFunctionsFixed);
  const int stacks = width - kTopStacksFixed;
  options->max_frame_width = std::max(defaults.max_frame_width, stacks * 35 / 100);
  options->max_stack_width = std::max(defaults.max_stack_width, stacks - stacks * 35 / 100);
}

absl::StatusOr<std::string> FormatProfileTables(const v1::Measurement& measurement,
                                                const ProfileTableOptions& options) {
  // The merged tables first: they are what one reads first (the per-worker ones follow).
  std::string merged_text;
  const std::vector<const v1::Profile*> chosen = ProfilesToMerge(measurement);
  if (chosen.size() > 1) {
    absl::StatusOr<v1::Profile> merged = MergedProfile(measurement);
    if (!merged.ok()) {
      // The per-worker tables below still stand.
      merged_text = absl::StrCat("No table merged over workers: ", merged.status().message(), "\n");
    } else {
      absl::StatusOr<TextTable> functions =
          TopFunctionsTable(*merged, "Top Functions (all workers)", options);
      if (!functions.ok()) return functions.status();
      absl::StatusOr<TextTable> table =
          TopStacksTable(*merged, "Top Stacks (all workers)", options);
      if (!table.ok()) return table.status();
      merged_text = absl::StrCat(ProfileHeader(*merged), " (merged over ", chosen.size(),
                                 " profiles)\n\n", FormatTextTable(*functions, options.table), "\n",
                                 FormatTextTable(*table, options.table));
    }
  }
  std::string out = merged_text;
  for (int i = 0; i < measurement.profiles_size(); ++i) {
    const v1::Profile& profile = measurement.profiles(i);
    std::string scope;
    if (!profile.worker().empty()) absl::StrAppend(&scope, ": ", Clean(profile.worker()));
    if (!profile.task_prefix().empty()) {
      absl::StrAppend(&scope, " [", Clean(profile.task_prefix()), "]");
    }
    if (!profile.section().empty()) absl::StrAppend(&scope, " [", Clean(profile.section()), "]");
    absl::StatusOr<TextTable> functions =
        TopFunctionsTable(profile, absl::StrCat("Top Functions", scope), options);
    if (!functions.ok()) return functions.status();
    absl::StatusOr<TextTable> table =
        TopStacksTable(profile, absl::StrCat("Top Stacks", scope), options);
    if (!table.ok()) return table.status();
    absl::StrAppend(&out, out.empty() ? "" : "\n", ProfileHeader(profile), "\n\n",
                    FormatTextTable(*functions, options.table), "\n",
                    FormatTextTable(*table, options.table));
  }
  return out;
}

}  // namespace roastcoffea
