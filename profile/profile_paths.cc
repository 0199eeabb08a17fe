#include "profile/profile_paths.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace roastcoffea {
namespace profile_internal {
namespace {

// Byte order of `a` + (a_block ? ";" : "") against `b` + (b_block ? ";" : ""), as
// std::string::compare would order them (unsigned bytes), without building the strings.
bool KeyLess(absl::string_view a, bool a_block, absl::string_view b, bool b_block) {
  const size_t common = std::min(a.size(), b.size());
  if (common > 0) {
    const int c = std::memcmp(a.data(), b.data(), common);
    if (c != 0) return c < 0;
  }
  const size_t a_size = a.size() + (a_block ? 1 : 0);
  const size_t b_size = b.size() + (b_block ? 1 : 0);
  for (size_t i = common; i < std::min(a_size, b_size); ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : ';';
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : ';';
    if (x != y) return x < y;
  }
  return a_size < b_size;
}

}  // namespace

LabelPaths::LabelPaths() : parent_{-1}, label_{-1} {}

int LabelPaths::InternLabel(absl::string_view label) {
  auto [it, inserted] = label_ids_.try_emplace(label, static_cast<int>(labels_.size()));
  if (inserted) labels_.emplace_back(label);
  return it->second;
}

int LabelPaths::Child(int parent_path, int label_id) {
  const uint64_t key = (static_cast<uint64_t>(parent_path) << 32) | static_cast<uint32_t>(label_id);
  auto [it, inserted] = children_.try_emplace(key, size());
  if (inserted) {
    parent_.push_back(parent_path);
    label_.push_back(label_id);
  }
  return it->second;
}

std::vector<int> LabelPaths::AddTree(absl::Span<const int> node_parent,
                                     absl::Span<const int> node_label) {
  const int n = static_cast<int>(node_parent.size());
  std::vector<int> node_path(n, 0);
  if (n == 0) return node_path;
  // Children of every node, in node order.
  std::vector<int> offsets(n + 1, 0);
  for (int i = 1; i < n; ++i) ++offsets[node_parent[i] + 1];
  for (int i = 0; i < n; ++i) offsets[i + 1] += offsets[i];
  std::vector<int> children(n - 1);
  {
    std::vector<int> fill(offsets.begin(), offsets.end() - 1);
    for (int i = 1; i < n; ++i) children[fill[node_parent[i]]++] = i;
  }
  // Breadth-first over paths: the nodes of path P sit in nodes[begin[P], begin[P + 1]); their
  // children grouped by label become P's child paths, appended in turn.
  std::vector<int> nodes = {0};
  nodes.reserve(n);
  std::vector<int> begin = {0, 1};
  std::vector<std::pair<int, int>> group;  // (label, node), reused
  for (int path = 0; path < size(); ++path) {
    group.clear();
    for (int k = begin[path]; k < begin[path + 1]; ++k) {
      const int node = nodes[k];
      for (int c = offsets[node]; c < offsets[node + 1]; ++c) {
        group.emplace_back(node_label[children[c]], children[c]);
      }
    }
    std::sort(group.begin(), group.end());
    for (size_t g = 0; g < group.size(); ++g) {
      if (g == 0 || group[g].first != group[g - 1].first) {
        parent_.push_back(path);
        label_.push_back(group[g].first);
        begin.push_back(begin.back());
      }
      node_path[group[g].second] = size() - 1;
      nodes.push_back(group[g].second);
      ++begin.back();
    }
  }
  return node_path;
}

std::vector<std::string> LabelPaths::Frames(int path) const {
  std::vector<std::string> frames;
  for (int p = path; p > 0; p = parent_[p]) frames.push_back(label(p));
  std::reverse(frames.begin(), frames.end());
  return frames;
}

void LabelPaths::SortedItems(std::vector<int>* offsets, std::vector<int>* items) const {
  const int n = size();
  std::vector<int> child_count(n, 0);
  std::vector<bool> has_children(n, false);
  for (int p = 1; p < n; ++p) has_children[parent_[p]] = true;
  for (int p = 1; p < n; ++p) child_count[parent_[p]] += has_children[p] ? 2 : 1;
  offsets->assign(n + 1, 0);
  for (int p = 0; p < n; ++p) (*offsets)[p + 1] = (*offsets)[p] + child_count[p];
  items->assign((*offsets)[n], 0);
  std::vector<int> fill(offsets->begin(), offsets->end() - 1);
  for (int p = 1; p < n; ++p) {
    (*items)[fill[parent_[p]]++] = p << 1;
    // A childless path has no block to descend into.
    if (has_children[p]) (*items)[fill[parent_[p]]++] = (p << 1) | 1;
  }
  // Rank the keys of the distinct labels once (label_id << 1 | is_block), so sorting the
  // items compares integers, not strings.
  std::vector<int> keys(2 * labels_.size());
  for (size_t k = 0; k < keys.size(); ++k) keys[k] = static_cast<int>(k);
  std::sort(keys.begin(), keys.end(), [this](int x, int y) {
    return KeyLess(labels_[x >> 1], (x & 1) != 0, labels_[y >> 1], (y & 1) != 0);
  });
  std::vector<int> key_rank(keys.size());
  for (size_t r = 0; r < keys.size(); ++r) key_rank[keys[r]] = static_cast<int>(r);
  const auto item_rank = [&](int item) { return key_rank[(label_[item >> 1] << 1) | (item & 1)]; };
  for (int p = 0; p < n; ++p) {
    std::sort(items->begin() + (*offsets)[p], items->begin() + (*offsets)[p + 1],
              [&](int x, int y) { return item_rank(x) < item_rank(y); });
  }
}

}  // namespace profile_internal
}  // namespace roastcoffea
