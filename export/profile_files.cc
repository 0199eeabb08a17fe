#include "export/profile_files.h"

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "aggregation/profile.h"
#include "export/atomic_file.h"
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

absl::Status WriteOne(const v1::Profile& profile, const std::string& folded_path,
                      const std::string& svg_path, const std::string& subtitle,
                      const ProfileFilesOptions& options) {
  absl::StatusOr<std::string> folded = FoldedStacks(profile);
  if (!folded.ok()) {
    return absl::Status(folded.status().code(),
                        absl::StrCat(subtitle, ": ", folded.status().message()));
  }
  FlameGraphOptions graph_options = options.flame_graph;
  graph_options.subtitle = subtitle;
  absl::StatusOr<FlameGraph> graph = RenderFlameGraph(profile, graph_options);
  if (!graph.ok()) {
    return absl::Status(graph.status().code(),
                        absl::StrCat(subtitle, ": ", graph.status().message()));
  }
  if (absl::Status status = export_internal::WriteFileAtomically(folded_path, *folded); !status.ok()) {
    return status;
  }
  return export_internal::WriteFileAtomically(svg_path, graph->svg);
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
  std::set<std::string> taken;
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
    for (int n = 2; taken.count(unique) > 0; ++n) unique = absl::StrCat(stem, "-", n);
    taken.insert(unique);
    stems.push_back(unique);
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
  const std::string base =
      directory.empty() || directory.back() == '/' ? directory : directory + "/";
  absl::StatusOr<v1::Profile> merged = MergedProfile(measurement);
  if (merged.ok()) {
    const size_t count = ProfilesToMerge(measurement).size();
    const std::string subtitle =
        absl::StrCat("all workers (", count, count == 1 ? " profile)" : " profiles merged)");
    if (absl::Status status = WriteOne(*merged, base + "profile.folded",
                                       base + "flamegraph.svg", subtitle, options);
        !status.ok()) {
      return status;
    }
    written.paths.push_back(base + "profile.folded");
    written.paths.push_back(base + "flamegraph.svg");
  } else {
    written.merge_problem = std::string(merged.status().message());
  }
  const std::vector<std::string> stems = ProfileFileStems(measurement);
  for (int i = 0; i < measurement.profiles_size(); ++i) {
    const std::string folded = absl::StrCat(base, "profile.", stems[i], ".folded");
    const std::string svg = absl::StrCat(base, "flamegraph.", stems[i], ".svg");
    if (absl::Status status = WriteOne(measurement.profiles(i), folded, svg,
                                       Describe(measurement.profiles(i)), options);
        !status.ok()) {
      return status;
    }
    written.paths.push_back(folded);
    written.paths.push_back(svg);
  }
  return written;
}

}  // namespace roastcoffea
