#include "export/profile_files.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "aggregation/profile.h"
#include "store/atomic_file.h"
#include "export/profile_tables.h"

namespace roastcoffea {
namespace {

constexpr size_t kMaxStemPart = 64;

// What a profile is called in titles and errors.
std::string Describe(const v1::Profile& profile) {
  std::string out = profile.worker().empty() ? "all workers" : absl::StrCat("worker ", profile.worker());
  if (!profile.task_prefix().empty()) absl::StrAppend(&out, ", task prefix ", profile.task_prefix());
  if (!profile.section().empty()) absl::StrAppend(&out, ", section ", profile.section());
  return out;
}

// Writes one profile's files; its folded text comes out of `*folded_budget`.
absl::Status WriteOne(const v1::Profile& profile, const std::string& folded_path,
                      const std::string& svg_path, const std::string& subtitle,
                      const ProfileFilesOptions& options, int64_t* folded_budget,
                      WrittenProfileFiles* written) {
  absl::StatusOr<BoundedFoldedText> folded = BoundedFoldedStacks(profile, *folded_budget);
  if (!folded.ok()) {
    return absl::Status(folded.status().code(),
                        absl::StrCat(subtitle, ": ", folded.status().message()));
  }
  *folded_budget -= static_cast<int64_t>(folded->text.size());
  written->stacks_left_out += folded->stacks_left_out;
  written->samples_left_out += folded->samples_left_out;
  FlameGraphOptions graph_options = options.flame_graph;
  graph_options.subtitle = subtitle;
  absl::StatusOr<FlameGraph> graph = RenderFlameGraph(profile, graph_options);
  if (!graph.ok()) {
    return absl::Status(graph.status().code(),
                        absl::StrCat(subtitle, ": ", graph.status().message()));
  }
  if (absl::Status status = WriteOutputFileAtomically(folded_path, folded->text);
      !status.ok()) {
    return status;
  }
  return WriteOutputFileAtomically(svg_path, graph->svg);
}

}  // namespace

std::string SanitizeFileNamePart(absl::string_view text) {
  std::string out;
  for (char c : text) {
    const bool keep = absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' ||
                      c == '_' || c == '-';
    const char next = keep ? c : '-';
    if (next == '-' && !out.empty() && out.back() == '-') continue;
    out.push_back(next);
    if (out.size() >= kMaxStemPart) break;
  }
  const size_t begin = out.find_first_not_of("-.");
  if (begin == std::string::npos) return "";
  const size_t end = out.find_last_not_of("-.");
  return out.substr(begin, end - begin + 1);
}

std::vector<std::string> ProfileFileStems(const v1::Measurement& measurement) {
  std::vector<std::string> stems;
  stems.reserve(measurement.profiles_size());
  absl::flat_hash_set<std::string> taken;
  // The next suffix to try per base: counting up from 2 for every profile was quadratic
  // (16,000 profiles of one worker took 39 s). A name is skipped at most once in all.
  absl::flat_hash_map<std::string, int64_t> next_suffix;
  for (const v1::Profile& profile : measurement.profiles()) {
    std::string stem;
    // An empty worker means "every worker" (the schema), whatever host is named.
    for (const std::string* candidate : {&profile.worker(), &profile.worker_name()}) {
      stem = SanitizeFileNamePart(*candidate);
      if (!stem.empty()) break;
    }
    if (stem.empty()) stem = "all-workers";
    const std::string scope =
        SanitizeFileNamePart(!profile.task_prefix().empty() ? profile.task_prefix() : profile.section());
    if (!scope.empty()) absl::StrAppend(&stem, ".", scope);
    std::string unique = stem;
    if (taken.contains(unique)) {
      int64_t& n = next_suffix.try_emplace(stem, 2).first->second;
      do {
        unique = absl::StrCat(stem, "-", n++);
      } while (taken.contains(unique));
    }
    taken.insert(unique);
    stems.push_back(std::move(unique));
  }
  return stems;
}

absl::StatusOr<WrittenProfileFiles> WriteProfileFiles(const v1::Measurement& measurement,
                                                      const std::string& directory,
                                                      const ProfileFilesOptions& options) {
  if (measurement.profiles_size() == 0) {
    return absl::FailedPreconditionError("the measurement has no profiles");
  }
  WrittenProfileFiles written;
  int64_t folded_budget = options.max_folded_bytes;
  const std::string base =
      directory.empty() || directory.back() == '/' ? directory : directory + "/";
  absl::StatusOr<v1::Profile> merged = MergedProfile(measurement);
  if (merged.ok()) {
    const size_t count = ProfilesToMerge(measurement).size();
    const std::string subtitle =
        absl::StrCat("all workers (", count, count == 1 ? " profile)" : " profiles merged)");
    if (absl::Status status = WriteOne(*merged, base + "profile.folded", base + "flamegraph.svg",
                                       subtitle, options, &folded_budget, &written);
        !status.ok()) {
      return status;
    }
    written.paths.push_back(base + "profile.folded");
    written.paths.push_back(base + "flamegraph.svg");
  } else {
    written.merge_problem = std::string(merged.status().message());
  }
  const std::vector<std::string> stems = ProfileFileStems(measurement);
  const int per_profile = std::min(measurement.profiles_size(), std::max(0, options.max_profiles));
  written.profiles_left_out = measurement.profiles_size() - per_profile;
  for (int i = 0; i < per_profile; ++i) {
    const std::string folded = absl::StrCat(base, "profile.", stems[i], ".folded");
    const std::string svg = absl::StrCat(base, "flamegraph.", stems[i], ".svg");
    if (absl::Status status = WriteOne(measurement.profiles(i), folded, svg,
                                       Describe(measurement.profiles(i)), options,
                                       &folded_budget, &written);
        !status.ok()) {
      return status;
    }
    written.paths.push_back(folded);
    written.paths.push_back(svg);
  }
  return written;
}

}  // namespace roastcoffea
