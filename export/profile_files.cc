#include "export/profile_files.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "export/profile_tables.h"
#include "profile/profile.h"
#include "profile/profile_frames.h"
#include "store/atomic_file.h"

namespace roastcoffea {
namespace {

constexpr size_t kMaxStemPart = 64;

// What a profile is called in titles and errors.
std::string Describe(const v1::Profile& profile) {
  std::string out =
      profile.worker().empty() ? "all workers" : absl::StrCat("worker ", profile.worker());
  if (!profile.task_prefix().empty())
    absl::StrAppend(&out, ", task prefix ", profile.task_prefix());
  if (!profile.section().empty()) absl::StrAppend(&out, ", section ", profile.section());
  return out;
}

// Writes one profile's files; its folded text comes out of `*folded_budget`.
absl::Status WriteOne(const v1::Profile& profile, const std::string& folded_path,
                      const std::string& svg_path, const std::string& subtitle,
                      const ProfileFilesOptions& options, int64_t* folded_budget,
                      WrittenProfileFiles* written) {
  // The folded text keeps the full names; it is collapsed like the graph so both agree.
  const v1::Profile* shown = &profile;
  absl::StatusOr<v1::Profile> collapsed;
  if (!options.show_wrapper_frames && HasWrapperFrames(profile)) {
    collapsed = CollapseWrapperFrames(profile);
    if (!collapsed.ok()) {
      return absl::Status(collapsed.status().code(),
                          absl::StrCat(subtitle, ": ", collapsed.status().message()));
    }
    shown = &*collapsed;
  }
  absl::StatusOr<BoundedFoldedText> folded = BoundedFoldedStacks(*shown, *folded_budget);
  if (!folded.ok()) {
    return absl::Status(folded.status().code(),
                        absl::StrCat(subtitle, ": ", folded.status().message()));
  }
  *folded_budget -= static_cast<int64_t>(folded->text.size());
  written->stacks_left_out += folded->stacks_left_out;
  written->samples_left_out += folded->samples_left_out;
  FlameGraphOptions graph_options = options.flame_graph;
  graph_options.subtitle = subtitle;
  // Already collapsed (or kept on purpose).
  graph_options.show_wrapper_frames = true;
  absl::StatusOr<FlameGraph> graph = RenderFlameGraph(*shown, graph_options);
  if (!graph.ok()) {
    return absl::Status(graph.status().code(),
                        absl::StrCat(subtitle, ": ", graph.status().message()));
  }
  if (absl::Status status = WriteOutputFileAtomically(folded_path, folded->text); !status.ok()) {
    return status;
  }
  return WriteOutputFileAtomically(svg_path, graph->svg);
}

}  // namespace

std::string SanitizeFileNamePart(absl::string_view text) {
  std::string out;
  for (char c : text) {
    const bool keep =
        absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
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
    const std::string scope = SanitizeFileNamePart(
        !profile.task_prefix().empty() ? profile.task_prefix() : profile.section());
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

std::vector<std::string> DefaultProfileOutputDirectories(const std::string& measurement_directory,
                                                         const std::string& working_directory,
                                                         const std::string& temporary_directory) {
  std::string directory = measurement_directory;
  while (directory.size() > 1 && directory.back() == '/') directory.pop_back();
  const size_t slash = directory.rfind('/');
  std::string name = slash == std::string::npos ? directory : directory.substr(slash + 1);
  if (name.empty() || name == "." || name == "..") name = "measurement";
  std::vector<std::string> candidates = {absl::StrCat(directory, "/profile")};
  for (const std::string* base : {&working_directory, &temporary_directory}) {
    if (base->empty()) continue;
    const std::string candidate =
        absl::StrCat(*base, base->back() == '/' ? "" : "/", name, "-profile");
    if (std::find(candidates.begin(), candidates.end(), candidate) == candidates.end()) {
      candidates.push_back(candidate);
    }
  }
  return candidates;
}

absl::StatusOr<std::string> FirstWritableDirectory(const std::vector<std::string>& candidates,
                                                   std::vector<std::string>* problems) {
  std::vector<std::string> reasons;
  for (const std::string& candidate : candidates) {
    if (mkdir(candidate.c_str(), 0777) != 0 && errno != EEXIST) {
      reasons.push_back(absl::StrCat("'", candidate, "': ", strerror(errno)));
      continue;
    }
    struct stat info;
    // lstat: a link planted at M/profile would send the files (and their replacements) into
    // whatever it points to.
    const bool exists = lstat(candidate.c_str(), &info) == 0;
    if (!exists || !S_ISDIR(info.st_mode)) {
      reasons.push_back(absl::StrCat("'", candidate, "': ",
                                     exists && S_ISLNK(info.st_mode)
                                         ? "a symbolic link (never followed)"
                                         : "not a directory"));
      continue;
    }
    const std::string probe = absl::StrCat(candidate, "/.roastcoffea-write-test-", getpid());
    const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
      reasons.push_back(absl::StrCat("'", candidate, "': ", strerror(errno)));
      continue;
    }
    close(fd);
    unlink(probe.c_str());
    if (problems != nullptr) *problems = std::move(reasons);
    return candidate;
  }
  if (problems != nullptr) *problems = reasons;
  return absl::FailedPreconditionError(
      absl::StrCat("no writable directory for the profile files: ", absl::StrJoin(reasons, "; ")));
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
    if (absl::Status status =
            WriteOne(measurement.profiles(i), folded, svg, Describe(measurement.profiles(i)),
                     options, &folded_budget, &written);
        !status.ok()) {
      return status;
    }
    written.paths.push_back(folded);
    written.paths.push_back(svg);
  }
  return written;
}

}  // namespace roastcoffea
