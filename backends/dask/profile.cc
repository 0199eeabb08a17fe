#include "backends/dask/profile.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "io/untrusted_json.h"

namespace roastcoffea::dask {
namespace {

// A subtree still to visit. Children are pushed in reverse so they are visited in wire order.
struct Pending {
  const Value* tree;
  int32_t parent;    // index of the parent node; -1 for the root
  int depth;         // 0 for the root
  const Value* key;  // the key under the parent's children map; nullptr for the root
};

std::string NodeName(const Value& tree, const Value* key) {
  const Value* id = tree.is_map() ? tree.Find("identifier") : nullptr;
  std::string name = id != nullptr && id->is_str() ? id->text()
                     : key == nullptr              ? std::string("root")
                     : key->is_str()               ? key->text()
                                                   : key->DebugString(80);
  return EchoedText(name);
}

absl::Status NodeError(const Value& tree, const Value* key, int depth, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("Dask profile node '", NodeName(tree, key), "' (depth ", depth, "): ", what));
}

absl::StatusOr<int64_t> ReadCount(const Value& tree, const Value* key, int depth) {
  const Value* count = tree.Find("count");
  if (count == nullptr) return NodeError(tree, key, depth, "has no count");
  const std::optional<int64_t> value = count->AsInt64();
  if (!value.has_value()) {
    return NodeError(tree, key, depth,
                     absl::StrCat("count is not an integer: ", count->DebugString(40)));
  }
  if (*value < 0) {
    return NodeError(tree, key, depth, absl::StrCat("count is negative: ", *value));
  }
  return *value;
}

// The frame of a non-root node, from its description.
absl::StatusOr<v1::ProfileFrame> ReadFrame(const Value& tree, const Value* key, int depth,
                                           const std::string& identifier) {
  const Value* d = tree.Find("description");
  if (d == nullptr) return NodeError(tree, key, depth, "has no description");
  if (!d->is_map()) {
    return NodeError(tree, key, depth,
                     absl::StrCat("description is not a map: ", d->DebugString(60)));
  }
  v1::ProfileFrame frame;
  frame.set_identifier(identifier);
  const Value* name = d->Find("name");
  if (name == nullptr || !name->is_str()) {
    return NodeError(tree, key, depth, "description has no str name");
  }
  frame.set_function(name->text());
  if (const Value* file = d->Find("filename"); file != nullptr && !file->is_nil()) {
    if (!file->is_str()) return NodeError(tree, key, depth, "description filename is not a str");
    frame.set_file(file->text());
  }
  if (const Value* line_number = d->Find("line_number");
      line_number != nullptr && !line_number->is_nil()) {
    const std::optional<int64_t> n = line_number->AsInt64();
    if (!n.has_value()) {
      return NodeError(tree, key, depth,
                       absl::StrCat("description line_number is not an integer: ",
                                    line_number->DebugString(40)));
    }
    frame.set_line_number(*n);
  }
  if (const Value* line = d->Find("line"); line != nullptr && !line->is_nil()) {
    if (!line->is_str()) return NodeError(tree, key, depth, "description line is not a str");
    // linecache's text ends with the line terminator: not part of the source text.
    frame.set_line(std::string(absl::StripTrailingAsciiWhitespace(line->text())));
  }
  return frame;
}

// Checks each child is a map with a count and, when `check_sum`, that the children's counts
// do not add up to more than `count`.
absl::Status CheckChildCounts(const Value& node, const Value* key, int depth, const Value& children,
                              int64_t count, bool check_sum) {
  int64_t sum = 0;
  for (size_t i = 0; i < children.size(); ++i) {
    const Value& child = children.value(i);
    if (!child.is_map()) {
      return NodeError(child, &children.key(i), depth + 1,
                       absl::StrCat("is not a map: ", child.DebugString(60)));
    }
    absl::StatusOr<int64_t> c = ReadCount(child, &children.key(i), depth + 1);
    if (!c.ok()) return c.status();
    if (check_sum) {
      if (*c > count - sum) {
        return NodeError(
            node, key, depth,
            absl::StrCat("its children's counts add up to more than its count ", count));
      }
      sum += *c;
    }
  }
  return absl::OkStatus();
}

// Appends the tree's nodes to `out`, drawing on `budget` (nodes left for this conversion).
absl::Status ConvertInto(const Value& tree, const ProfileConversionOptions& options,
                         int64_t& budget, v1::Profile& out) {
  out.set_source("dask");
  std::unordered_map<std::string, int32_t> frame_index;
  std::vector<Pending> stack;
  stack.push_back({&tree, -1, 0, nullptr});
  while (!stack.empty()) {
    const Pending p = stack.back();
    stack.pop_back();
    const Value& node = *p.tree;
    if (!node.is_map()) {
      return NodeError(node, p.key, p.depth, absl::StrCat("is not a map: ", node.DebugString(60)));
    }
    if (p.depth > options.max_depth) {
      return NodeError(node, p.key, p.depth,
                       absl::StrCat("the tree is deeper than ", options.max_depth, " levels"));
    }
    if (budget <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Dask profile has more than ", options.max_nodes, " nodes"));
    }
    --budget;
    absl::StatusOr<int64_t> count = ReadCount(node, p.key, p.depth);
    if (!count.ok()) return count.status();

    int32_t frame = -1;
    if (p.parent >= 0) {
      const Value* id = node.Find("identifier");
      std::string identifier;
      if (id != nullptr && id->is_str()) {
        identifier = id->text();
      } else if (p.key != nullptr && p.key->is_str()) {
        identifier = p.key->text();
      } else {
        return NodeError(node, p.key, p.depth, "has no str identifier");
      }
      // Every node's description is checked, even when its frame is known already.
      absl::StatusOr<v1::ProfileFrame> parsed = ReadFrame(node, p.key, p.depth, identifier);
      if (!parsed.ok()) return parsed.status();
      auto [it, inserted] = frame_index.try_emplace(identifier, out.frames_size());
      if (inserted) *out.add_frames() = *std::move(parsed);
      frame = it->second;
    }
    const int32_t index = out.nodes_size();
    v1::ProfileNode* added = out.add_nodes();
    added->set_parent(p.parent);
    added->set_frame(frame);
    added->set_count(*count);

    const Value* children = node.Find("children");
    if (children == nullptr) return NodeError(node, p.key, p.depth, "has no children");
    if (!children->is_map()) {
      return NodeError(node, p.key, p.depth,
                       absl::StrCat("children is not a map: ", children->DebugString(60)));
    }
    if (static_cast<int64_t>(children->size()) > budget) {
      return absl::InvalidArgumentError(
          absl::StrCat("Dask profile has more than ", options.max_nodes, " nodes"));
    }
    // Inclusive counts: the children cannot hold more samples than their parent, except under
    // a root of count 0 ("not given").
    const bool check_sum = p.parent >= 0 || *count > 0;
    absl::Status children_ok = CheckChildCounts(node, p.key, p.depth, *children, *count, check_sum);
    if (!children_ok.ok()) return children_ok;
    for (size_t i = children->size(); i-- > 0;) {
      stack.push_back({&children->value(i), index, p.depth + 1, &children->key(i)});
    }
  }
  return absl::OkStatus();
}

int64_t NodeBudget(const ProfileConversionOptions& options) {
  // Node and frame indices are int32 in the schema.
  return std::clamp<int64_t>(options.max_nodes, 0, std::numeric_limits<int32_t>::max());
}

}  // namespace

// See profile.h: a node with a single child hands its remainder (the samples in which the child
// was the innermost frame) to that child; with estimate, a node whose callees include exactly
// one that never called anything hands it the remainder too. Computed from the counts as sent,
// in one pass over the flat tree (parents before children).
int64_t RestoreInnermostCounts(v1::Profile& profile, bool estimate) {
  const int n = profile.nodes_size();
  std::vector<int64_t> children_sum(n, 0);
  std::vector<int32_t> children(n, 0), never_called(n, 0), last_never_called(n, -1);
  for (int i = 1; i < n; ++i) ++children[profile.nodes(i).parent()];
  for (int i = 1; i < n; ++i) {
    const int parent = profile.nodes(i).parent();
    children_sum[parent] += profile.nodes(i).count();
    if (profile.nodes(i).count() == 0 && children[i] == 0) {
      ++never_called[parent];
      last_never_called[parent] = i;
    }
  }
  std::vector<int64_t> handed_down(n, 0);
  std::vector<int32_t> estimated_to(n, -1);
  int64_t estimated = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t remainder = std::max<int64_t>(0, profile.nodes(i).count() - children_sum[i]);
    if (children[i] == 1) {
      handed_down[i] = remainder;
    } else if (estimate && children[i] > 1 && never_called[i] == 1) {
      estimated_to[i] = last_never_called[i];
      estimated += remainder;
    }
  }
  for (int i = 1; i < n; ++i) {
    v1::ProfileNode& node = *profile.mutable_nodes(i);
    const int parent = node.parent();
    int64_t add = handed_down[parent];
    if (estimated_to[parent] == i) {
      add += std::max<int64_t>(0, profile.nodes(parent).count() - children_sum[parent]);
    }
    node.set_count(node.count() + add);
  }
  profile.set_estimated_innermost_samples(profile.estimated_innermost_samples() + estimated);
  return estimated;
}

absl::StatusOr<v1::Profile> ConvertProfileTree(const Value& tree,
                                               const ProfileConversionOptions& options) {
  int64_t budget = NodeBudget(options);
  v1::Profile profile;
  absl::Status s = ConvertInto(tree, options, budget, profile);
  if (!s.ok()) return s;
  if (options.restore_innermost_counts) {
    RestoreInnermostCounts(profile, options.estimate_innermost_counts);
  }
  return profile;
}

absl::StatusOr<std::vector<WorkerProfileTree>> ConvertPerWorkerProfiles(
    const Value& reply, const ProfileConversionOptions& options) {
  if (!reply.is_map()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Dask per-worker profile reply is not a map of worker to tree: ", reply.DebugString(80)));
  }
  int64_t budget = NodeBudget(options);
  std::vector<WorkerProfileTree> out;
  out.reserve(reply.size());
  for (size_t i = 0; i < reply.size(); ++i) {
    if (!reply.key(i).is_str()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Dask per-worker profile reply has a non-str worker key: ",
                       reply.key(i).DebugString(60)));
    }
    WorkerProfileTree entry;
    entry.worker = EchoedText(reply.key(i).text());  // as ParseIdentity has it
    absl::Status s = ConvertInto(reply.value(i), options, budget, entry.profile);
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat("worker ", entry.worker, ": ", s.message()));
    }
    if (options.restore_innermost_counts) {
      RestoreInnermostCounts(entry.profile, options.estimate_innermost_counts);
    }
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace roastcoffea::dask
