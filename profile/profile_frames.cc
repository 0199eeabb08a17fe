#include "profile/profile_frames.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "profile/profile.h"

namespace roastcoffea {
namespace {

constexpr absl::string_view kSectionPrefix = "[section: ";
// Stands for "(anonymous namespace)" while parentheses are removed.
constexpr absl::string_view kAnonPlaceholder = "\x01";

bool IsIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool IsOperatorSymbol(char c) {
  return absl::string_view("<>=!+-*/%^&|~[],").find(c) != absl::string_view::npos;
}

// Removes trailing qualifiers of a member function and spaces.
void StripTrailingQualifiers(std::string& name) {
  bool changed = true;
  while (changed) {
    changed = false;
    while (!name.empty() && name.back() == ' ') name.pop_back();
    for (absl::string_view suffix : {" const", " volatile", " noexcept", " &&", " &"}) {
      if (absl::EndsWith(name, suffix)) {
        name.resize(name.size() - suffix.size());
        changed = true;
      }
    }
  }
}

}  // namespace

// A cheap test without shortening the name: false only for frames that can be neither a chunk
// wrapper nor plumbing (what every such frame's name contains).
bool MaybeWrapperOrPlumbing(const v1::ProfileFrame& frame) {
  const absl::string_view function = frame.function();
  if (function.empty() || IsUnnamedLibraryFunction(frame)) return true;
  for (absl::string_view needle :
       {"roastcoffea::", "std::", "clone", "start_thread", "execute_native_thread_routine", "??"}) {
    if (absl::StrContains(function, needle)) return true;
  }
  return false;
}

std::string SectionFrameName(absl::string_view section) {
  return absl::StrCat(kSectionPrefix, section, "]");
}

bool IsSectionFrameName(absl::string_view function) {
  return absl::StartsWith(function, kSectionPrefix) && absl::EndsWith(function, "]");
}

std::string ShortFunctionName(absl::string_view function) {
  if (function.find('(') == absl::string_view::npos &&
      function.find('<') == absl::string_view::npos) {
    return std::string(function);
  }
  std::string input = absl::StrReplaceAll(function, {{"(anonymous namespace)", kAnonPlaceholder}});
  // GCC's clone suffixes (" [clone .isra.0]", " [clone .cold]") always end the name.
  if (const size_t clone = input.find(" [clone "); clone != std::string::npos) {
    input.resize(clone);
  }
  std::string out;
  out.reserve(input.size());
  int depth = 0;  // inside <...>, (...) or [...]
  for (size_t i = 0; i < input.size(); ++i) {
    const char c = input[i];
    // An operator's name is copied as written: "operator()", "operator<<", "operator new".
    if (depth == 0 && input.compare(i, 8, "operator") == 0 &&
        (i == 0 || !IsIdentifierChar(input[i - 1])) &&
        (i + 8 >= input.size() || !IsIdentifierChar(input[i + 8]))) {
      out.append("operator");
      size_t j = i + 8;
      if (input.compare(j, 2, "()") == 0) {
        out.append("()");
        j += 2;
      } else if (j < input.size() && IsOperatorSymbol(input[j])) {
        while (j < input.size() && IsOperatorSymbol(input[j]) && input[j] != '(') {
          out.push_back(input[j++]);
        }
        // "operator< <int>": GCC separates an operator's template arguments by a space.
        if (j < input.size() && input[j] == ' ') ++j;
      } else {
        // A conversion or allocation operator: "operator bool", "operator new[]".
        while (j < input.size() && input[j] != '(' && input[j] != '<') out.push_back(input[j++]);
      }
      i = j - 1;
      continue;
    }
    if (c == '<' || c == '(' || c == '[') {
      ++depth;
      continue;
    }
    if (c == '>' || c == ')' || c == ']') {
      if (depth > 0) --depth;
      continue;
    }
    if (depth == 0) out.push_back(c);
  }
  // Unbalanced brackets: not a name these rules understand.
  if (depth != 0) return std::string(function);
  StripTrailingQualifiers(out);
  // The return type ("unsigned long ns::f", "long& std::vector::emplace_back") is what stands
  // before the last space outside an operator's name.
  size_t search_end = out.size();
  const size_t op = out.rfind("operator");
  if (op != std::string::npos && (op == 0 || !IsIdentifierChar(out[op - 1]))) search_end = op;
  const size_t space = search_end == 0 ? std::string::npos : out.rfind(' ', search_end - 1);
  if (space != std::string::npos) out.erase(0, space + 1);
  out = absl::StrReplaceAll(out, {{kAnonPlaceholder, "(anon)"}});
  if (out.empty() || out == "::") return std::string(function);
  return out;
}

bool IsInterpretedFrame(const v1::ProfileFrame& frame) {
  return frame.line_number() > 0 || !frame.identifier().empty() ||
         absl::EndsWith(frame.file(), ".py") || absl::EndsWith(frame.file(), ".pyx");
}

std::string ShortFrameLabel(const v1::ProfileFrame& frame) {
  if (IsInterpretedFrame(frame)) return FrameLabel(frame);
  // As FrameLabel, without copying the frame; "libzstd.so.1+0x1a2b0" already names its object.
  std::string label = CutFrameName(ShortFunctionName(frame.function()));
  if (label.empty()) label = "?";
  if (!frame.file().empty() && !IsUnnamedLibraryFunction(frame)) {
    absl::StrAppend(&label, " (", CutFrameName(frame.file()), ")");
  }
  for (char& c : label) {
    if (c == ';' || c == '\n' || c == '\r') c = ' ';
  }
  return label;
}

bool HasWrapperFrames(const v1::Profile& profile) {
  for (const v1::ProfileFrame& frame : profile.frames()) {
    if (MaybeWrapperOrPlumbing(frame) && (IsChunkWrapperFrame(frame) || IsPlumbingFrame(frame))) {
      return true;
    }
  }
  return false;
}

bool IsUnnamedLibraryFunction(const v1::ProfileFrame& frame) {
  return !frame.file().empty() && frame.function().size() > frame.file().size() + 3 &&
         absl::StartsWith(frame.function(), frame.file()) &&
         absl::string_view(frame.function()).substr(frame.file().size(), 3) == "+0x";
}

bool IsChunkWrapperFrame(const v1::ProfileFrame& frame) {
  if (IsInterpretedFrame(frame)) return false;
  const std::string name = ShortFunctionName(frame.function());
  if (absl::StartsWith(name, "roastcoffea::instrumentation_internal::")) {
    return absl::StrContains(name, "TrackChunk") ||
           absl::StrContains(name, "InvokeCapturingFailure") ||
           absl::StrContains(name, "ChunkTracking");
  }
  return absl::StartsWith(name, "roastcoffea::TrackChunk") ||
         absl::StartsWith(name, "roastcoffea::ChunkTracking");
}

bool IsPlumbingFrame(const v1::ProfileFrame& frame) {
  if (IsInterpretedFrame(frame)) return false;
  const std::string name = ShortFunctionName(frame.function());
  const absl::string_view file = frame.file();
  if (name == "??" || name.empty() || IsUnnamedLibraryFunction(frame)) {
    return absl::StartsWith(file, "libc.so") || absl::StartsWith(file, "libstdc++.so") ||
           absl::StartsWith(file, "libpthread.so");
  }
  for (absl::string_view entry : {"clone", "clone3", "__clone", "__clone3", "__GI___clone3",
                                  "start_thread", "execute_native_thread_routine"}) {
    if (name == entry) return true;
  }
  return absl::StartsWith(name, "std::") ||
         absl::StartsWith(name, "roastcoffea::ThreadPoolExecutor") ||
         absl::StartsWith(name, "roastcoffea::RunSampleAnalysis");
}

absl::StatusOr<v1::Profile> CollapseWrapperFrames(const v1::Profile& profile) {
  if (absl::Status valid = ValidateProfile(profile); !valid.ok()) return valid;
  v1::Profile out = profile;
  out.clear_nodes();
  const int n = profile.nodes_size();
  if (n == 0) return out;
  std::vector<bool> wrapper(profile.frames_size()), plumbing(profile.frames_size());
  for (int f = 0; f < profile.frames_size(); ++f) {
    if (!MaybeWrapperOrPlumbing(profile.frames(f))) continue;
    wrapper[f] = IsChunkWrapperFrame(profile.frames(f));
    plumbing[f] = wrapper[f] || IsPlumbingFrame(profile.frames(f));
  }
  // Whether a chunk wrapper is at or below each node (children after parents: reverse order).
  std::vector<bool> wrapper_below(n, false);
  std::vector<int64_t> child_sum(n, 0);
  for (int i = n - 1; i >= 1; --i) {
    const v1::ProfileNode& node = profile.nodes(i);
    if (wrapper[node.frame()]) wrapper_below[i] = true;
    if (wrapper_below[i]) wrapper_below[node.parent()] = true;
    child_sum[node.parent()] += node.count();
  }
  *out.add_nodes() = profile.nodes(0);
  // Per original node: its node in `out` (removed nodes map to the root).
  std::vector<int> mapped(n, 0);
  std::vector<bool> removed(n, false);
  absl::flat_hash_map<std::pair<int, int>, int> children;  // (out node, frame) -> out node
  int collapsed_frame = -1;
  int collapsed_node = -1;
  for (int i = 1; i < n; ++i) {
    const v1::ProfileNode& node = profile.nodes(i);
    const int parent = node.parent();
    const bool leading = parent == 0 || removed[parent];
    if (leading && (plumbing[node.frame()] || wrapper_below[i])) {
      removed[i] = true;
      const int64_t exclusive = node.count() - child_sum[i];
      if (exclusive > 0) {
        if (collapsed_node < 0) {
          collapsed_frame = out.frames_size();
          out.add_frames()->set_function(kCollapsedFramesFrame);
          collapsed_node = out.nodes_size();
          v1::ProfileNode* added = out.add_nodes();
          added->set_parent(0);
          added->set_frame(collapsed_frame);
        }
        v1::ProfileNode* target = out.mutable_nodes(collapsed_node);
        target->set_count(target->count() + exclusive);
      }
      continue;
    }
    const int out_parent = mapped[parent];
    auto [it, inserted] =
        children.try_emplace(std::make_pair(out_parent, node.frame()), out.nodes_size());
    if (inserted) {
      v1::ProfileNode* added = out.add_nodes();
      added->set_parent(out_parent);
      added->set_frame(node.frame());
    }
    mapped[i] = it->second;
    v1::ProfileNode* target = out.mutable_nodes(it->second);
    target->set_count(target->count() + node.count());
  }
  return out;
}

absl::StatusOr<std::vector<FunctionCost>> TopFunctions(const v1::Profile& profile, int top) {
  absl::StatusOr<ProfileAnalysis> analysis = AnalyzeProfile(profile, [] {
    ProfileAnalysisOptions options;
    options.top_stacks = 0;
    return options;
  }());
  if (!analysis.ok()) return analysis.status();
  std::vector<FunctionCost> functions;
  const int n = profile.nodes_size();
  if (n == 0 || top <= 0) return functions;
  // Function of every frame.
  absl::flat_hash_map<std::string, int> by_label;
  std::vector<int> function_of(profile.frames_size());
  for (int f = 0; f < profile.frames_size(); ++f) {
    std::string label = ShortFrameLabel(profile.frames(f));
    auto [it, inserted] = by_label.try_emplace(label, static_cast<int>(functions.size()));
    if (inserted) {
      FunctionCost& cost = functions.emplace_back();
      cost.label = std::move(label);
      cost.full_label = FrameLabel(profile.frames(f));
    }
    function_of[f] = it->second;
  }
  // Depth-first over the tree (children in CSR form), counting each function's occurrences on
  // the current path: a node adds to its function's total only when it is the outermost one.
  std::vector<int> first_child(n + 1, 0), order(n > 0 ? n - 1 : 0);
  for (int i = 1; i < n; ++i) ++first_child[profile.nodes(i).parent() + 1];
  for (int i = 0; i < n; ++i) first_child[i + 1] += first_child[i];
  std::vector<int> fill(first_child.begin(), first_child.end() - 1);
  for (int i = 1; i < n; ++i) order[fill[profile.nodes(i).parent()]++] = i;
  std::vector<int> on_path(functions.size(), 0);
  struct Visit {
    int node;
    bool exit;
  };
  std::vector<Visit> stack = {{0, false}};
  while (!stack.empty()) {
    const Visit visit = stack.back();
    stack.pop_back();
    const int node = visit.node;
    const int function = node == 0 ? -1 : function_of[profile.nodes(node).frame()];
    if (visit.exit) {
      if (function >= 0) --on_path[function];
      continue;
    }
    if (function >= 0) {
      const ProfileNodeStats& stats = analysis->nodes[node];
      FunctionCost& cost = functions[function];
      cost.self_samples += stats.exclusive_samples;
      if (on_path[function] == 0) cost.total_samples += stats.inclusive_samples;
      ++on_path[function];
    }
    stack.push_back({node, true});
    for (int c = first_child[node]; c < first_child[node + 1]; ++c) {
      stack.push_back({order[c], false});
    }
  }
  const double interval = analysis->seconds_per_sample;
  const int64_t all = analysis->total_samples;
  for (FunctionCost& cost : functions) {
    cost.self_seconds = static_cast<double>(cost.self_samples) * interval;
    cost.total_seconds = static_cast<double>(cost.total_samples) * interval;
    cost.self_percent = all == 0 ? 0 : 100.0 * static_cast<double>(cost.self_samples) / all;
    cost.total_percent = all == 0 ? 0 : 100.0 * static_cast<double>(cost.total_samples) / all;
  }
  // Frames no node uses (e.g. removed by CollapseWrapperFrames) are no functions of the profile.
  functions.erase(std::remove_if(functions.begin(), functions.end(),
                                 [](const FunctionCost& cost) { return cost.total_samples == 0; }),
                  functions.end());
  const auto heavier = [](const FunctionCost& a, const FunctionCost& b) {
    if (a.self_samples != b.self_samples) return a.self_samples > b.self_samples;
    if (a.total_samples != b.total_samples) return a.total_samples > b.total_samples;
    return a.label < b.label;
  };
  const size_t keep = std::min(functions.size(), static_cast<size_t>(top));
  std::partial_sort(functions.begin(), functions.begin() + keep, functions.end(), heavier);
  functions.resize(keep);
  return functions;
}

int64_t TruncatedStackSamples(const v1::Profile& profile) {
  int64_t total = 0;
  for (int i = 1; i < profile.nodes_size(); ++i) {
    const v1::ProfileNode& node = profile.nodes(i);
    if (node.parent() != 0 || node.frame() < 0 || node.frame() >= profile.frames_size()) continue;
    if (profile.frames(node.frame()).function() == kTruncatedStackFrame) total += node.count();
  }
  return total;
}

}  // namespace roastcoffea
