// Label paths of a profile (internal to //profile): nodes reached through the same
// frame labels from the root share one path, so duplicate siblings and identical frames at
// different places are summed by what a reader sees, not by how the engine stored them.
#ifndef ROASTCOFFEA_PROFILE_PROFILE_PATHS_H_
#define ROASTCOFFEA_PROFILE_PROFILE_PATHS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace roastcoffea {
namespace profile_internal {

// Interns (parent path, label) pairs. Path 0 is the root (no label); a path is always created
// after its parent, so parents have smaller ids. Labels never contain ';'.
class LabelPaths {
 public:
  LabelPaths();

  // The id of `label` (interned).
  int InternLabel(absl::string_view label);
  // The path of `label` below `parent_path` (created on first use).
  int Child(int parent_path, int label_id);

  // All paths of a whole tree at once, faster than Child per node (no hashing): node 0 is the
  // root, node_parent[i] < i, node_label[i] an interned label id (both ignored for node 0).
  // Returns every node's path. Only on a LabelPaths without paths yet; Child must not be used
  // afterwards. O(nodes log(children per path)), iterative.
  std::vector<int> AddTree(absl::Span<const int> node_parent, absl::Span<const int> node_label);

  int size() const { return static_cast<int>(parent_.size()); }
  int label_count() const { return static_cast<int>(labels_.size()); }
  int parent(int path) const { return parent_[path]; }
  int label_id(int path) const { return label_[path]; }
  const std::string& label(int path) const { return labels_[label_[path]]; }
  const std::string& label_text(int label_id) const { return labels_[label_id]; }

  // The labels of `path`, root first (empty for the root). O(depth).
  std::vector<std::string> Frames(int path) const;

  // Calls visit(path, prefix) for every non-root path in ascending byte order of its folded
  // string ("a;b;c"); `prefix` is the folded string of its parent followed by ';' ("" at the
  // top), so prefix + label(path) is the path's folded string. Iterative: memory O(paths).
  // `wanted` (indexed by path) limits the calls to those paths. Without `with_prefix` the
  // prefix is always "" (cheaper when only the order matters). O(labels log labels) string
  // comparisons, O(paths log paths) integer ones, plus each inner path's label appended once.
  template <typename Visit>
  void ForEachInFoldedOrder(const std::vector<bool>& wanted, bool with_prefix, Visit visit) const;

 private:
  // Children of every path as "items" (child << 1 | is_block), each parent's items sorted by
  // key: a child's own folded string sorts by its label, its descendants as a block by
  // label + ';' (every descendant's string starts so, and no other string does).
  void SortedItems(std::vector<int>* offsets, std::vector<int>* items) const;

  std::vector<std::string> labels_;
  absl::flat_hash_map<std::string, int> label_ids_;
  std::vector<int> parent_;
  std::vector<int> label_;
  absl::flat_hash_map<uint64_t, int> children_;
};

template <typename Visit>
void LabelPaths::ForEachInFoldedOrder(const std::vector<bool>& wanted, bool with_prefix,
                                      Visit visit) const {
  std::vector<int> offsets, items;
  SortedItems(&offsets, &items);
  struct Level {
    int next;  // index into items
    int end;
    size_t prefix_size;
  };
  std::string prefix;
  std::vector<Level> stack = {{offsets[0], offsets[1], 0}};
  while (!stack.empty()) {
    Level& level = stack.back();
    if (level.next == level.end) {
      prefix.resize(level.prefix_size);
      stack.pop_back();
      continue;
    }
    const int item = items[level.next++];
    const int path = item >> 1;
    if ((item & 1) == 0) {
      if (wanted[path]) visit(path, static_cast<const std::string&>(prefix));
      continue;
    }
    // Descend into the block of `path`'s descendants.
    const size_t size = prefix.size();
    if (with_prefix) {
      prefix.append(label(path));
      prefix.push_back(';');
    }
    stack.push_back({offsets[path], offsets[path + 1], size});
  }
}

}  // namespace profile_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_PROFILE_PROFILE_PATHS_H_
