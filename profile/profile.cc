#include "profile/profile.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "profile/profile_frames.h"
#include "profile/profile_paths.h"

namespace roastcoffea {
namespace {

using profile_internal::LabelPaths;

// Path ids are shifted left by one in LabelPaths' ordering, so keep node counts well inside int.
constexpr int64_t kMaxRepresentableNodes = std::numeric_limits<int32_t>::max() / 2;

// What validation learns on the way and analysis reuses.
struct TreeShape {
  std::vector<int> depth;
  std::vector<int64_t> child_sum;  // sum of the children's counts
  int64_t total = 0;               // the root's count, or the children's sum when it is 0
};

bool AddOverflows(int64_t a, int64_t b, int64_t* sum) { return __builtin_add_overflow(a, b, sum); }

absl::StatusOr<TreeShape> CheckTree(const v1::Profile& profile,
                                    const ProfileAnalysisOptions& options) {
  const double interval = profile.sampling_interval_seconds();
  if (!std::isfinite(interval) || interval < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("profile: sampling_interval_seconds must be finite and >= 0, got ", interval));
  }
  const int64_t n = profile.nodes_size();
  if (n > options.max_nodes || n > kMaxRepresentableNodes) {
    return absl::InvalidArgumentError(
        absl::StrCat("profile: ", n, " nodes, more than the limit of ",
                     std::min(options.max_nodes, kMaxRepresentableNodes)));
  }
  TreeShape shape;
  shape.depth.assign(n, 0);
  shape.child_sum.assign(n, 0);
  const int frames = profile.frames_size();
  for (int i = 0; i < n; ++i) {
    const v1::ProfileNode& node = profile.nodes(i);
    if (node.count() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("profile node ", i, ": negative count ", node.count()));
    }
    if (i == 0) {
      if (node.parent() != -1 || node.frame() != -1) {
        return absl::InvalidArgumentError(
            absl::StrCat("profile node 0 (the root): parent and frame must be -1, got parent ",
                         node.parent(), " and frame ", node.frame()));
      }
      continue;
    }
    const int parent = node.parent();
    if (parent == -1) {
      return absl::InvalidArgumentError(
          absl::StrCat("profile node ", i, ": parent -1 on a node other than 0 (a second root)"));
    }
    if (parent < -1 || parent >= n) {
      return absl::InvalidArgumentError(absl::StrCat("profile node ", i, ": parent index ", parent,
                                                     " out of range [0, ", n, ")"));
    }
    if (parent >= i) {
      return absl::InvalidArgumentError(absl::StrCat("profile node ", i, ": parent ", parent,
                                                     " does not come before it (parents first)"));
    }
    if (node.frame() < 0 || node.frame() >= frames) {
      return absl::InvalidArgumentError(absl::StrCat(
          "profile node ", i, ": frame index ", node.frame(), " out of range [0, ", frames, ")"));
    }
    const int depth = shape.depth[parent] + 1;
    if (depth > options.max_depth) {
      return absl::InvalidArgumentError(absl::StrCat("profile node ", i, ": depth ", depth,
                                                     " exceeds the limit of ", options.max_depth));
    }
    shape.depth[i] = depth;
    if (AddOverflows(shape.child_sum[parent], node.count(), &shape.child_sum[parent])) {
      return absl::InvalidArgumentError(
          absl::StrCat("profile node ", parent, ": the counts of its children overflow int64"));
    }
  }
  for (int i = 0; i < n; ++i) {
    const int64_t count = profile.nodes(i).count();
    // A root count of 0 means "not given"; every other count bounds its children's.
    if (i == 0 && count == 0) continue;
    if (shape.child_sum[i] > count) {
      return absl::InvalidArgumentError(absl::StrCat(
          "profile node ", i, ": children count ", shape.child_sum[i],
          " samples, more than the node's own ", count, " (inclusive counts are inconsistent)"));
    }
  }
  if (n > 0) {
    const int64_t root = profile.nodes(0).count();
    shape.total = root == 0 ? shape.child_sum[0] : root;
  }
  return shape;
}

double Percent(int64_t part, int64_t total) {
  return total == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(total);
}

// Every node's label path, and the exclusive samples summed per path.
struct PathSums {
  LabelPaths paths;
  std::vector<int> node_path;
  std::vector<int64_t> exclusive;  // per path
  std::vector<int> label_frame;    // per label id: the first frame with that label
};

PathSums SumByPath(const v1::Profile& profile, const TreeShape& shape) {
  PathSums sums;
  const int n = profile.nodes_size();
  std::vector<int> frame_label(profile.frames_size());
  for (int f = 0; f < profile.frames_size(); ++f) {
    frame_label[f] = sums.paths.InternLabel(FrameLabel(profile.frames(f)));
    if (frame_label[f] == static_cast<int>(sums.label_frame.size())) {
      sums.label_frame.push_back(f);
    }
  }
  std::vector<int> parent(n, -1), label(n, -1);
  for (int i = 1; i < n; ++i) {
    parent[i] = profile.nodes(i).parent();
    label[i] = frame_label[profile.nodes(i).frame()];
  }
  sums.node_path = sums.paths.AddTree(parent, label);
  sums.exclusive.assign(sums.paths.size(), 0);
  for (int i = 1; i < n; ++i) {
    // Cannot overflow: the exclusive counts of a consistent tree sum to its total.
    sums.exclusive[sums.node_path[i]] += profile.nodes(i).count() - shape.child_sum[i];
  }
  return sums;
}

std::string Joined(const std::vector<std::string>& frames) { return absl::StrJoin(frames, ";"); }

// The length of every path's folded string: its parent's, ';' and its label.
std::vector<size_t> FoldedLengths(const LabelPaths& paths) {
  std::vector<size_t> length(paths.size(), 0);
  for (int p = 1; p < paths.size(); ++p) {
    const int parent = paths.parent(p);
    length[p] = (parent == 0 ? 0 : length[parent] + 1) + paths.label(p).size();
  }
  return length;
}

// Above this many bytes of folded strings, ties are ranked by ordering the whole tree instead.
constexpr size_t kTieStringBudget = size_t{16} << 20;

// The (at most) `keep` paths with the most exclusive samples, ties by folded string.
std::vector<int> TopPaths(const PathSums& sums, size_t keep) {
  const int paths = sums.paths.size();
  std::vector<int> candidates;
  for (int p = 1; p < paths; ++p) {
    if (sums.exclusive[p] > 0) candidates.push_back(p);
  }
  keep = std::min(keep, candidates.size());
  if (keep == 0) return {};
  const auto heavier = [&](int a, int b) { return sums.exclusive[a] > sums.exclusive[b]; };
  std::nth_element(candidates.begin(), candidates.begin() + (keep - 1), candidates.end(), heavier);
  const int64_t threshold = sums.exclusive[candidates[keep - 1]];
  // Only paths at or above the keep-th count can make it; usually few, so compare their
  // folded strings directly.
  const auto end = std::partition(candidates.begin(), candidates.end(),
                                  [&](int p) { return sums.exclusive[p] >= threshold; });
  candidates.erase(end, candidates.end());
  const std::vector<size_t> length = FoldedLengths(sums.paths);
  size_t bytes = 0;
  for (int p : candidates) bytes += length[p];
  if (bytes <= kTieStringBudget) {
    std::vector<std::pair<int64_t, std::string>> keyed;
    keyed.reserve(candidates.size());
    for (int p : candidates) keyed.emplace_back(-sums.exclusive[p], Joined(sums.paths.Frames(p)));
    std::vector<int> order(candidates.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::partial_sort(order.begin(), order.begin() + keep, order.end(),
                      [&](int a, int b) { return keyed[a] < keyed[b]; });
    std::vector<int> top(keep);
    for (size_t k = 0; k < keep; ++k) top[k] = candidates[order[k]];
    return top;
  }
  // Many or deep ties: rank them in folded order over the whole tree, which never builds or
  // walks a stack per comparison.
  std::vector<int> rank(paths, 0);
  std::vector<bool> wanted(paths, false);
  for (int p : candidates) wanted[p] = true;
  int next_rank = 0;
  sums.paths.ForEachInFoldedOrder(wanted, /*with_prefix=*/false,
                                  [&](int path, const std::string&) { rank[path] = next_rank++; });
  std::partial_sort(candidates.begin(), candidates.begin() + keep, candidates.end(),
                    [&](int a, int b) {
                      if (sums.exclusive[a] != sums.exclusive[b]) {
                        return sums.exclusive[a] > sums.exclusive[b];
                      }
                      return rank[a] < rank[b];
                    });
  candidates.resize(keep);
  return candidates;
}

}  // namespace

int64_t ProfileSampleCount(const v1::Profile& profile) {
  if (profile.nodes_size() == 0) return 0;
  if (profile.nodes(0).count() != 0) return profile.nodes(0).count();
  int64_t total = 0;
  for (int i = 1; i < profile.nodes_size(); ++i) {
    const v1::ProfileNode& node = profile.nodes(i);
    if (node.parent() != 0 || node.count() <= 0) continue;
    if (AddOverflows(total, node.count(), &total)) return std::numeric_limits<int64_t>::max();
  }
  return total;
}

absl::Status ValidateProfile(const v1::Profile& profile, const ProfileAnalysisOptions& options) {
  return CheckTree(profile, options).status();
}

std::string CutFrameName(absl::string_view name) {
  if (name.size() <= kMaxFrameNameBytes) return std::string(name);
  size_t keep = kMaxFrameNameBytes;
  // Back to the start of a UTF-8 character (at most 3 continuation bytes).
  for (int i = 0; i < 3 && keep > 0 && (static_cast<unsigned char>(name[keep]) & 0xC0) == 0x80;
       ++i) {
    --keep;
  }
  return absl::StrCat(name.substr(0, keep), "...[+", name.size() - keep, " bytes]");
}

std::string FrameLabel(const v1::ProfileFrame& frame) {
  std::string label = frame.function().empty() ? "?" : CutFrameName(frame.function());
  if (!frame.file().empty()) {
    if (frame.line_number() > 0) {
      absl::StrAppend(&label, " (", CutFrameName(frame.file()), ":", frame.line_number(), ")");
    } else {
      absl::StrAppend(&label, " (", CutFrameName(frame.file()), ")");
    }
  }
  for (char& c : label) {
    if (c == ';' || c == '\n' || c == '\r') c = ' ';
  }
  return label;
}

absl::StatusOr<ProfileAnalysis> AnalyzeProfile(const v1::Profile& profile,
                                               const ProfileAnalysisOptions& options) {
  absl::StatusOr<TreeShape> shape = CheckTree(profile, options);
  if (!shape.ok()) return shape.status();
  ProfileAnalysis analysis;
  const double interval = profile.sampling_interval_seconds();
  analysis.total_samples = shape->total;
  analysis.seconds_per_sample = interval;
  analysis.total_seconds = static_cast<double>(shape->total) * interval;
  const int n = profile.nodes_size();
  analysis.nodes.resize(n);
  for (int i = 0; i < n; ++i) {
    const v1::ProfileNode& node = profile.nodes(i);
    ProfileNodeStats& s = analysis.nodes[i];
    s.parent = node.parent();
    s.frame = node.frame();
    s.depth = shape->depth[i];
    s.inclusive_samples = i == 0 ? shape->total : node.count();
    s.exclusive_samples = s.inclusive_samples - shape->child_sum[i];
    s.inclusive_seconds = static_cast<double>(s.inclusive_samples) * interval;
    s.exclusive_seconds = static_cast<double>(s.exclusive_samples) * interval;
    s.inclusive_percent = Percent(s.inclusive_samples, shape->total);
    s.exclusive_percent = Percent(s.exclusive_samples, shape->total);
  }
  if (n == 0 || options.top_stacks <= 0) return analysis;

  const PathSums sums = SumByPath(profile, *shape);
  const std::vector<int> top = TopPaths(sums, static_cast<size_t>(options.top_stacks));
  analysis.top_stacks.reserve(top.size());
  // Short labels only for the frames of the stacks shown.
  absl::flat_hash_map<int, std::string> short_labels;
  const auto short_label = [&](int label_id) -> const std::string& {
    auto [it, inserted] = short_labels.try_emplace(label_id);
    if (inserted) it->second = ShortFrameLabel(profile.frames(sums.label_frame[label_id]));
    return it->second;
  };
  std::vector<int> chain;  // a stack's paths, innermost first; reused
  for (const int path : top) {
    RankedStack stack;
    chain.clear();
    for (int p = path; p != 0; p = sums.paths.parent(p)) chain.push_back(p);
    stack.depth = static_cast<int>(chain.size());
    // The innermost frames that fit in the budget, then the outermost one.
    int64_t bytes = 0;
    size_t kept = 0;
    for (; kept + 1 < chain.size(); ++kept) {
      const int label_id = sums.paths.label_id(chain[kept]);
      const int64_t cost =
          static_cast<int64_t>(sums.paths.label(chain[kept]).size() + short_label(label_id).size());
      if (kept > 0 && bytes + cost > options.max_stack_bytes) break;
      bytes += cost;
    }
    stack.frames_left_out = static_cast<int64_t>(chain.size() - 1 - kept);
    const auto add = [&](int p) {
      stack.frames.push_back(sums.paths.label(p));
      stack.short_frames.push_back(short_label(sums.paths.label_id(p)));
    };
    add(chain.back());
    for (size_t k = kept; k-- > 0;) add(chain[k]);
    stack.folded = Joined(stack.frames);
    stack.samples = sums.exclusive[path];
    stack.seconds = static_cast<double>(stack.samples) * interval;
    stack.percent = Percent(stack.samples, shape->total);
    analysis.top_stacks.push_back(std::move(stack));
  }
  return analysis;
}

absl::StatusOr<BoundedFoldedText> BoundedFoldedStacks(const v1::Profile& profile, int64_t max_bytes,
                                                      const ProfileAnalysisOptions& options) {
  absl::StatusOr<TreeShape> shape = CheckTree(profile, options);
  if (!shape.ok()) return shape.status();
  BoundedFoldedText out;
  if (profile.nodes_size() == 0) return out;
  const size_t budget =
      static_cast<size_t>(std::max<int64_t>(0, std::min(max_bytes, options.max_folded_bytes)));
  const PathSums sums = SumByPath(profile, *shape);
  const int paths = sums.paths.size();
  std::vector<bool> wanted(paths, false);
  // Every line's length is known before it is built: lines that do not fit are never built,
  // and the text is sized once.
  const std::vector<size_t> length = FoldedLengths(sums.paths);
  std::vector<size_t> line_bytes(paths, 0);
  size_t size = 0;
  for (int p = 1; p < paths; ++p) {
    if (sums.exclusive[p] <= 0) continue;
    line_bytes[p] = length[p] + 2 + absl::StrCat(sums.exclusive[p]).size();
    size += line_bytes[p];
  }
  out.text.reserve(std::min(size, budget));
  for (int p = 1; p < paths; ++p) wanted[p] = sums.exclusive[p] > 0;
  // The prefix is only extended down the tree: a chain's is built once, not once per line.
  sums.paths.ForEachInFoldedOrder(
      wanted, /*with_prefix=*/true, [&](int path, const std::string& prefix) {
        if (out.text.size() + line_bytes[path] > budget) {
          ++out.stacks_left_out;
          out.samples_left_out += sums.exclusive[path];
          return;
        }
        absl::StrAppend(&out.text, prefix, sums.paths.label(path), " ", sums.exclusive[path], "\n");
      });
  return out;
}

absl::StatusOr<std::string> FoldedStacks(const v1::Profile& profile,
                                         const ProfileAnalysisOptions& options) {
  absl::StatusOr<BoundedFoldedText> folded =
      BoundedFoldedStacks(profile, options.max_folded_bytes, options);
  if (!folded.ok()) return folded.status();
  if (folded->stacks_left_out > 0) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "folded stacks over the limit of ", options.max_folded_bytes,
        " bytes: ", folded->stacks_left_out, " stacks would not fit (a tree too deep to fold)"));
  }
  return std::move(folded->text);
}

namespace {

// One node per path of `paths` (ids are node indices), with its count.
void AppendPathNodes(const LabelPaths& paths, const std::vector<int64_t>& counts,
                     v1::Profile& profile) {
  const int n = paths.size();
  profile.mutable_nodes()->Reserve(n);
  for (int p = 0; p < n; ++p) {
    v1::ProfileNode* node = profile.add_nodes();
    node->set_parent(paths.parent(p));
    node->set_frame(paths.label_id(p));
    node->set_count(counts[p]);
  }
}

// Profile `k`'s description into `merged`: the first one's is taken; later ones must have
// its sampling interval, keep a text field only where they agree, widen the time window and
// add their samples outside chunks and lost.
absl::Status MergeDescription(const v1::Profile& profile, size_t k, v1::Profile& merged) {
  const double interval = profile.sampling_interval_seconds();
  if (k == 0) {
    merged.set_source(profile.source());
    merged.set_task_prefix(profile.task_prefix());
    merged.set_section(profile.section());
    merged.set_sampling_interval_seconds(interval);
    merged.set_start_unix_ns(profile.start_unix_ns());
    merged.set_end_unix_ns(profile.end_unix_ns());
  } else {
    const double first = merged.sampling_interval_seconds();
    if (std::abs(interval - first) > 1e-9 * std::max(std::abs(interval), std::abs(first))) {
      return absl::InvalidArgumentError(
          absl::StrCat("profile ", k, ": sampling interval ", interval,
                       " s differs from the first profile's ", first, " s"));
    }
    if (merged.source() != profile.source()) merged.clear_source();
    if (merged.task_prefix() != profile.task_prefix()) merged.clear_task_prefix();
    if (merged.section() != profile.section()) merged.clear_section();
    // 0 means unknown.
    if (profile.start_unix_ns() != 0 &&
        (merged.start_unix_ns() == 0 || profile.start_unix_ns() < merged.start_unix_ns())) {
      merged.set_start_unix_ns(profile.start_unix_ns());
    }
    merged.set_end_unix_ns(std::max(merged.end_unix_ns(), profile.end_unix_ns()));
  }
  int64_t outside = 0, lost = 0;
  if (AddOverflows(merged.samples_outside_chunks(), profile.samples_outside_chunks(), &outside) ||
      AddOverflows(merged.lost_samples(), profile.lost_samples(), &lost)) {
    return absl::InvalidArgumentError(absl::StrCat("profile ", k, ": sample counts overflow"));
  }
  merged.set_samples_outside_chunks(outside);
  merged.set_lost_samples(lost);
  return absl::OkStatus();
}

// Profile `k`'s samples per chunk into `merged`: one entry per chunk (dataset, file, entry
// range; `chunk_index` finds it), their samples summed.
absl::Status MergeChunkSamples(const v1::Profile& profile, size_t k,
                               absl::flat_hash_map<std::string, int64_t>& chunk_index,
                               v1::Profile& merged) {
  for (const v1::ProfileChunkSamples& chunk : profile.chunk_samples()) {
    const std::string key =
        absl::StrCat(chunk.dataset().size(), ":", chunk.dataset(), chunk.file().size(), ":",
                     chunk.file(), ":", chunk.entry_start(), ":", chunk.entry_stop());
    auto [it, inserted] = chunk_index.try_emplace(key, merged.chunk_samples_size());
    if (inserted) {
      *merged.add_chunk_samples() = chunk;
    } else {
      v1::ProfileChunkSamples* into = merged.mutable_chunk_samples(it->second);
      int64_t sum = 0;
      if (AddOverflows(into->samples(), chunk.samples(), &sum)) {
        return absl::InvalidArgumentError(absl::StrCat("profile ", k, ": chunk samples overflow"));
      }
      into->set_samples(sum);
    }
  }
  return absl::OkStatus();
}

// Profile `k`'s call tree (checked, `total` samples) into the merged one: its nodes onto the
// paths of labels (`paths`, `counts`), its frames into `merged` the first time a label is
// seen.
absl::Status MergeTree(const v1::Profile& profile, size_t k, int64_t total,
                       const ProfileAnalysisOptions& options, LabelPaths& paths,
                       std::vector<int64_t>& counts, v1::Profile& merged) {
  const int n = profile.nodes_size();
  if (n == 0) return absl::OkStatus();
  std::vector<int> frame_label(profile.frames_size(), -1);
  std::vector<int> node_path(n, 0);
  if (AddOverflows(counts[0], total, &counts[0])) {
    return absl::InvalidArgumentError(absl::StrCat("profile ", k, ": total samples overflow"));
  }
  for (int i = 1; i < n; ++i) {
    const v1::ProfileNode& node = profile.nodes(i);
    int& label = frame_label[node.frame()];
    if (label < 0) {
      label = paths.InternLabel(FrameLabel(profile.frames(node.frame())));
      // The first frame seen with a label stands for all of them.
      if (label == merged.frames_size()) *merged.add_frames() = profile.frames(node.frame());
    }
    const int path = paths.Child(node_path[node.parent()], label);
    node_path[i] = path;
    if (path == static_cast<int>(counts.size())) {
      if (path >= options.max_nodes || path >= kMaxRepresentableNodes) {
        return absl::InvalidArgumentError(
            absl::StrCat("profile ", k, ": the merged tree has more nodes than the limit of ",
                         std::min(options.max_nodes, kMaxRepresentableNodes)));
      }
      counts.push_back(0);
    }
    if (AddOverflows(counts[path], node.count(), &counts[path])) {
      return absl::InvalidArgumentError(
          absl::StrCat("profile ", k, " node ", i, ": merged count overflows int64"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::Profile> ParseFoldedStacks(absl::string_view folded,
                                              double sampling_interval_seconds) {
  if (!std::isfinite(sampling_interval_seconds) || sampling_interval_seconds < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("folded stacks: sampling interval must be finite and >= 0, got ",
                     sampling_interval_seconds));
  }
  v1::Profile profile;
  profile.set_sampling_interval_seconds(sampling_interval_seconds);
  LabelPaths paths;  // path ids double as node indices: both are created parents first
  std::vector<int64_t> counts = {0};
  std::vector<int> path;  // the current line's nodes, reused
  int64_t line_number = 0;
  for (absl::string_view line : absl::StrSplit(folded, '\n')) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    const size_t space = line.rfind(' ');
    if (space == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("folded stacks line ", line_number, ": no ' COUNT' at the end"));
    }
    const absl::string_view stack = line.substr(0, space);
    const absl::string_view digits = line.substr(space + 1);
    int64_t count = 0;
    if (digits.empty() || !std::all_of(digits.begin(), digits.end(), absl::ascii_isdigit) ||
        !absl::SimpleAtoi(digits, &count)) {
      return absl::InvalidArgumentError(absl::StrCat("folded stacks line ", line_number,
                                                     ": count '", digits,
                                                     "' is not a non-negative 64-bit integer"));
    }
    path.clear();
    int node = 0;
    for (absl::string_view label : absl::StrSplit(stack, ';')) {
      if (label.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("folded stacks line ", line_number, ": empty frame in '", stack, "'"));
      }
      node = paths.Child(node, paths.InternLabel(label));
      if (node == static_cast<int>(counts.size())) {
        if (node >= kMaxRepresentableNodes) {
          return absl::InvalidArgumentError(
              absl::StrCat("folded stacks line ", line_number, ": too many distinct stacks"));
        }
        counts.push_back(0);
      }
      path.push_back(node);
    }
    if (AddOverflows(counts[0], count, &counts[0])) {
      return absl::InvalidArgumentError(
          absl::StrCat("folded stacks line ", line_number, ": total samples overflow int64"));
    }
    // Every node on the stack is at most the root, so none of these can overflow.
    for (int p : path) counts[p] += count;
  }
  // Every label belongs to some node; frames in label-id order, so a node's frame is its label.
  for (int l = 0; l < paths.label_count(); ++l) {
    profile.add_frames()->set_function(paths.label_text(l));
  }
  AppendPathNodes(paths, counts, profile);
  return profile;
}

absl::StatusOr<v1::Profile> MergeProfiles(absl::Span<const v1::Profile> profiles,
                                          const ProfileAnalysisOptions& options) {
  v1::Profile merged;
  LabelPaths paths;  // path ids are the merged node indices, labels the merged frames
  std::vector<int64_t> counts = {0};
  absl::flat_hash_map<std::string, int64_t> chunk_index;
  for (size_t k = 0; k < profiles.size(); ++k) {
    const v1::Profile& profile = profiles[k];
    absl::StatusOr<TreeShape> shape = CheckTree(profile, options);
    if (!shape.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("profile ", k, ": ", shape.status().message()));
    }
    absl::Status status = MergeDescription(profile, k, merged);
    if (status.ok()) status = MergeChunkSamples(profile, k, chunk_index, merged);
    if (status.ok()) status = MergeTree(profile, k, shape->total, options, paths, counts, merged);
    if (!status.ok()) return status;
  }
  AppendPathNodes(paths, counts, merged);
  return merged;
}

}  // namespace roastcoffea
