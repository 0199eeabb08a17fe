#include "backends/dask/profile_merge.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "backends/dask/profile.h"

namespace roastcoffea::dask {
namespace {

std::string FrameKey(const v1::ProfileFrame& f) {
  return f.identifier().empty() ? absl::StrCat(f.function(), ";", f.file(), ";", f.line_number())
                                : f.identifier();
}

// Sums trees node-wise by frame path; parents stay before children.
class TreeSum {
 public:
  TreeSum() { out_.add_nodes()->set_parent(-1), out_.mutable_nodes(0)->set_frame(-1); }

  void Add(const v1::Profile& tree, int64_t sign) {
    std::vector<int32_t> mapped(tree.nodes_size(), 0);
    for (int i = 0; i < tree.nodes_size(); ++i) {
      const v1::ProfileNode& node = tree.nodes(i);
      int32_t at = 0;
      if (i > 0 && node.parent() >= 0 && node.parent() < i && node.frame() >= 0 &&
          node.frame() < tree.frames_size()) {
        const v1::ProfileFrame& frame = tree.frames(node.frame());
        const std::string key = FrameKey(frame);
        auto [f, new_frame] = frame_index_.try_emplace(key, out_.frames_size());
        if (new_frame) *out_.add_frames() = frame;
        auto [n, new_node] =
            child_index_.try_emplace({mapped[node.parent()], f->second}, out_.nodes_size());
        if (new_node) {
          v1::ProfileNode* added = out_.add_nodes();
          added->set_parent(mapped[node.parent()]);
          added->set_frame(f->second);
        }
        at = n->second;
      } else if (i > 0) {
        continue;  // malformed node: left out (the converter never makes one)
      }
      mapped[i] = at;
      v1::ProfileNode& target = *out_.mutable_nodes(at);
      target.set_count(target.count() + sign * node.count());
    }
  }

  // Negative counts to 0, then each parent at least its children's sum (children after
  // parents, so one backward pass sees every child before its parent).
  v1::Profile TakeConsistent() {
    const int n = out_.nodes_size();
    std::vector<int64_t> children_sum(n, 0);
    for (int i = n - 1; i >= 0; --i) {
      v1::ProfileNode& node = *out_.mutable_nodes(i);
      node.set_count(std::max<int64_t>({node.count(), 0, children_sum[i]}));
      if (i > 0) children_sum[node.parent()] += node.count();
    }
    return std::move(out_);
  }

 private:
  v1::Profile out_;
  std::unordered_map<std::string, int32_t> frame_index_;
  std::map<std::pair<int32_t, int32_t>, int32_t> child_index_;  // (parent, frame) -> node
};

// The nodes of count > 0 (and the root), renumbered; frames kept as they are.
v1::Profile WithoutEmptyNodes(const v1::Profile& tree) {
  v1::Profile out;
  *out.mutable_frames() = tree.frames();
  std::vector<int32_t> mapped(tree.nodes_size(), -1);
  for (int i = 0; i < tree.nodes_size(); ++i) {
    const v1::ProfileNode& node = tree.nodes(i);
    if (i > 0 && (node.count() == 0 || mapped[node.parent()] < 0)) continue;
    mapped[i] = out.nodes_size();
    v1::ProfileNode* added = out.add_nodes();
    *added = node;
    if (i > 0) added->set_parent(mapped[node.parent()]);
  }
  return out;
}

}  // namespace

v1::Profile WholeWorkerFromPrefixes(const v1::Profile& all_tasks,
                                    const std::vector<const v1::Profile*>& prefixes, bool restore,
                                    bool estimate) {
  TreeSum rest;
  rest.Add(all_tasks, +1);
  for (const v1::Profile* prefix : prefixes) rest.Add(*prefix, -1);
  v1::Profile rest_tree = rest.TakeConsistent();
  int64_t estimated = 0;
  if (restore) estimated += RestoreInnermostCounts(rest_tree, estimate);

  TreeSum whole;
  for (const v1::Profile* prefix : prefixes) {
    if (!restore) {
      whole.Add(*prefix, +1);
      continue;
    }
    v1::Profile restored = *prefix;
    restored.clear_estimated_innermost_samples();
    estimated += RestoreInnermostCounts(restored, estimate);
    whole.Add(restored, +1);
  }
  whole.Add(rest_tree, +1);
  v1::Profile out = WithoutEmptyNodes(whole.TakeConsistent());
  out.set_estimated_innermost_samples(estimated);
  out.set_rebuilt_from_task_prefixes(true);
  return out;
}

}  // namespace roastcoffea::dask
