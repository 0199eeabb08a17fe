#include "tools/follow_up_command.h"

#include <unistd.h>

#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace roastcoffea {
namespace {

std::string Environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

std::string WithoutTrailingSlashes(absl::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return std::string(path);
}

// "../.." from `from` up to its ancestor `to`, or "" when `to` is not an ancestor (or is
// `from` itself, then "."): both absolute, without trailing slashes.
std::string UpTo(const std::string& from, const std::string& to) {
  if (from == to) return ".";
  if (to != "/" && !absl::StartsWith(from, to + "/")) return "";
  const absl::string_view below = absl::string_view(from).substr(to == "/" ? 1 : to.size() + 1);
  std::vector<std::string> ups;
  for (absl::string_view part : absl::StrSplit(below, '/', absl::SkipEmpty())) {
    (void)part;
    ups.push_back("..");
  }
  return absl::StrJoin(ups, "/");
}

}  // namespace

LaunchContext CurrentLaunchContext(const char* argv0) {
  LaunchContext context;
  context.argv0 = argv0 == nullptr ? "collect" : argv0;
  context.workspace_directory = Environment("BUILD_WORKSPACE_DIRECTORY");
  context.working_directory = Environment("BUILD_WORKING_DIRECTORY");
  if (context.workspace_directory.empty() || context.working_directory.empty()) {
    context.workspace_directory.clear();
    char buffer[4096];
    context.working_directory = getcwd(buffer, sizeof(buffer)) != nullptr ? buffer : "";
  } else {
    const std::string bazelw = context.workspace_directory + "/bazelw";
    context.workspace_has_bazelw = access(bazelw.c_str(), X_OK) == 0;
  }
  return context;
}

std::string DisplayPath(const LaunchContext& context, absl::string_view path) {
  if (context.working_directory.empty() || path.empty() || path.front() != '/') {
    return std::string(path);
  }
  const std::string base = WithoutTrailingSlashes(context.working_directory);
  const std::string full = WithoutTrailingSlashes(path);
  if (full == base) return ".";
  if (base == "/") return full.substr(1);
  if (absl::StartsWith(full, base + "/")) return full.substr(base.size() + 1);
  return std::string(path);
}

std::string FollowUpCommand(const LaunchContext& context,
                            const std::vector<std::string>& arguments) {
  std::vector<std::string> words;
  if (!context.workspace_directory.empty()) {
    const std::string workspace = WithoutTrailingSlashes(context.workspace_directory);
    if (context.workspace_has_bazelw) {
      const std::string up = UpTo(WithoutTrailingSlashes(context.working_directory), workspace);
      words.push_back(up.empty() ? workspace + "/bazelw" : up + "/bazelw");
    } else {
      words.push_back("bazel");
    }
    words.insert(words.end(), {"run", "//tools:collect", "--"});
  } else {
    words.push_back(context.argv0);
  }
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<std::string> quoted;
  quoted.reserve(words.size());
  for (const std::string& word : words) quoted.push_back(ShellQuote(word));
  return absl::StrJoin(quoted, " ");
}

}  // namespace roastcoffea
