#include "backends/dask/spans.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "backends/dask/key_split.h"
#include "io/untrusted_json.h"

namespace roastcoffea::dask {
namespace {

// "state: 3, state: 12" (possibly empty): the part of TaskPrefix's repr after the name.
bool IsStateCounts(absl::string_view s) {
  while (!s.empty()) {
    const size_t colon = s.find(": ");
    if (colon == 0 || colon == absl::string_view::npos) return false;
    for (char c : s.substr(0, colon)) {
      if (!absl::ascii_isalpha(static_cast<unsigned char>(c)) && c != '-' && c != '_') {
        return false;
      }
    }
    s.remove_prefix(colon + 2);
    size_t digits = 0;
    while (digits < s.size() && absl::ascii_isdigit(static_cast<unsigned char>(s[digits]))) {
      ++digits;
    }
    if (digits == 0) return false;
    s.remove_prefix(digits);
    if (s.empty()) return true;
    if (s.size() < 2 || s.substr(0, 2) != ", ") return false;
    s.remove_prefix(2);
  }
  return true;
}

std::optional<double> Seconds(const Value& group, absl::string_view field) {
  const Value* v = group.Find(field);
  if (v == nullptr) return 0.0;
  std::optional<double> d = v->AsDouble();
  if (!d.has_value() || !std::isfinite(*d) || *d < 0) return std::nullopt;
  return d;
}

}  // namespace

std::string TaskGroupOfKey(absl::string_view key) {
  if (!key.empty() && key.front() == '(') {
    absl::string_view first = key.substr(0, key.find(','));
    const absl::string_view strip = "()\"'";
    while (!first.empty() && strip.find(first.front()) != absl::string_view::npos) {
      first.remove_prefix(1);
    }
    while (!first.empty() && strip.find(first.back()) != absl::string_view::npos) {
      first.remove_suffix(1);
    }
    return std::string(first);
  }
  return KeySplit(key);
}

Value TaskGroupsRequestArgs() {
  // Scheduler._to_dict applies `exclude` at every level: this keeps the groups' scalars.
  return ExcludeArgs(
      {"tasks",      "transition_log", "workers",   "clients",           "events",
       "extensions", "memory",         "has_what",  "needs_what",        "actors",
       "versions",   "long_running",   "scheduler", "processing",        "executing",
       "bandwidth",  "metrics",        "extra",     "task_prefix_count", "dependencies",
       "types",      "all_durations",  "states",    "last_worker",       "last_worker_tasks_left"});
}

Value TaskAnnotationsRequestArgs() {
  return ExcludeArgs({"transition_log",
                      "workers",
                      "clients",
                      "events",
                      "extensions",
                      "memory",
                      "task_groups",
                      "has_what",
                      "needs_what",
                      "actors",
                      "versions",
                      "long_running",
                      "scheduler",
                      "processing",
                      "executing",
                      "bandwidth",
                      "metrics",
                      "extra",
                      "task_prefix_count",
                      "dependencies",
                      "dependents",
                      "waiting_on",
                      "waiters",
                      "who_has",
                      "who_wants",
                      "processing_on",
                      "exception",
                      "traceback",
                      "exception_blame",
                      "erred_on",
                      "run_spec",
                      "type",
                      "host_restrictions",
                      "worker_restrictions",
                      "resource_restrictions",
                      "loose_restrictions",
                      "metadata",
                      "has_lost_dependencies",
                      "actor",
                      "retries",
                      "suspicious",
                      "nbytes",
                      "priority",
                      "run_id",
                      "queueable",
                      "prefix",
                      "group",
                      "group_key",
                      "_rootish",
                      "exception_text",
                      "traceback_text",
                      "_hash",
                      "_token",
                      "homes",
                      "stimulus_id",
                      "state"});
}

std::optional<std::string> PrefixNameFromRepr(absl::string_view repr) {
  if (repr.size() < 4 || repr.front() != '<' || repr.back() != '>') return std::nullopt;
  absl::string_view inner = repr.substr(1, repr.size() - 2);
  // The first ": " whose remainder is state counts: a name may itself hold ": ".
  for (size_t at = inner.find(": "); at != absl::string_view::npos; at = inner.find(": ", at + 1)) {
    if (at > 0 && IsStateCounts(inner.substr(at + 2))) return std::string(inner.substr(0, at));
  }
  // "<name: >": a prefix with no task in any state (the repr keeps the trailing space).
  if (inner.size() > 2 && inner.substr(inner.size() - 2) == ": ") {
    return std::string(inner.substr(0, inner.size() - 2));
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<TaskGroupSpan>> ParseTaskGroups(const Value& reply) {
  const Value* groups = reply.Find("task_groups");
  if (groups == nullptr || !groups->is_map()) {
    return absl::InvalidArgumentError(
        absl::StrCat("dump_state reply has no task_groups map: ", reply.DebugString()));
  }
  std::vector<TaskGroupSpan> out;
  for (size_t i = 0; i < groups->size(); ++i) {
    const Value& g = groups->value(i);
    const Value* name = g.Find("name");
    const Value* prefix = g.Find("prefix");
    const std::string key = groups->key(i).is_str() ? EchoedText(groups->key(i).text()) : "";
    if (name == nullptr || !name->is_str() || prefix == nullptr || !prefix->is_str()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dump_state task group '", key, "' has no str name and prefix: ", g.DebugString()));
    }
    std::optional<std::string> prefix_name = PrefixNameFromRepr(prefix->text());
    if (!prefix_name.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("dump_state task group '", EchoedText(name->text()),
                       "' has a prefix of unknown shape: '", EchoedText(prefix->text()), "'"));
    }
    std::optional<double> start = Seconds(g, "start"), stop = Seconds(g, "stop");
    if (!start.has_value() || !stop.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("dump_state task group '", EchoedText(name->text()),
                       "' has a bad start or stop: ", g.DebugString()));
    }
    TaskGroupSpan& t = out.emplace_back();
    // Peer text, shown and saved: cut and escaped like the task stream's prefixes.
    t.group = EchoedText(name->text());
    t.task_prefix = EchoedText(*prefix_name);
    if (const Value* span = g.Find("span_id"); span != nullptr && span->is_str()) {
      t.span_id = EchoedText(span->text());
    }
    t.start_unix_seconds = *start;
    t.stop_unix_seconds = *stop;
  }
  return out;
}

absl::StatusOr<std::map<std::string, SpanPath>> ParseTaskSpanPaths(const Value& reply) {
  const Value* tasks = reply.Find("tasks");
  if (tasks == nullptr || !tasks->is_map()) {
    return absl::InvalidArgumentError(
        absl::StrCat("dump_state reply has no tasks map: ", reply.DebugString()));
  }
  std::map<std::string, SpanPath> out;
  for (size_t i = 0; i < tasks->size(); ++i) {
    const Value* annotations = tasks->value(i).Find("annotations");
    const Value* span = annotations != nullptr ? annotations->Find("span") : nullptr;
    const Value* names = span != nullptr ? span->Find("name") : nullptr;
    const Value* ids = span != nullptr ? span->Find("ids") : nullptr;
    if (names == nullptr || ids == nullptr || !names->is_array() || !ids->is_array() ||
        names->size() != ids->size() || ids->size() == 0) {
      continue;
    }
    bool all_str = true;
    for (size_t k = 0; k < ids->size(); ++k) {
      all_str = all_str && names->items()[k].is_str() && ids->items()[k].is_str();
    }
    if (!all_str) continue;
    // Every enclosing span is named by the prefix of the path.
    for (size_t depth = 1; depth <= ids->size(); ++depth) {
      auto [it, inserted] = out.try_emplace(EchoedText(ids->items()[depth - 1].text()));
      if (!inserted) continue;
      for (size_t k = 0; k < depth; ++k) {
        it->second.names.push_back(EchoedText(names->items()[k].text()));
        it->second.ids.push_back(EchoedText(ids->items()[k].text()));
      }
    }
  }
  return out;
}

std::vector<std::string> SpanCatalog::AddGroups(const std::vector<TaskGroupSpan>& groups) {
  std::set<std::string> known;
  for (const auto& [name, g] : groups_) known.insert(g.span_id);
  for (const auto& [id, path] : paths_) known.insert(id);
  std::vector<std::string> fresh;
  for (const TaskGroupSpan& g : groups) {
    if (!g.span_id.empty() && known.insert(g.span_id).second) fresh.push_back(g.span_id);
    TaskGroupSpan& kept = groups_[g.group];
    // A group's span never changes; its start/stop do until it is done. Keep what we knew
    // when a later reply lost it.
    const double start = kept.start_unix_seconds, stop = kept.stop_unix_seconds;
    kept = g;
    if (kept.start_unix_seconds == 0) kept.start_unix_seconds = start;
    if (kept.stop_unix_seconds == 0) kept.stop_unix_seconds = stop;
  }
  return fresh;
}

void SpanCatalog::AddPaths(const std::map<std::string, SpanPath>& paths) {
  for (const auto& [id, path] : paths) paths_.try_emplace(id, path);
}

StreamGroups SpanCatalog::UnseenGroups(const StreamGroups& stream_groups) const {
  std::set<std::string> seen_prefixes;
  for (const auto& [name, g] : groups_) {
    if (!g.span_id.empty()) seen_prefixes.insert(g.task_prefix);
  }
  StreamGroups unseen;
  for (const auto& [prefix, groups] : stream_groups) {
    if (seen_prefixes.count(prefix) == 0) continue;
    for (const std::string& group : groups) {
      if (groups_.count(group) == 0) unseen[prefix].insert(group);
    }
  }
  return unseen;
}

namespace {

// The span tree: every id a group or a path names, and its parent ("" at the top).
class SpanTree {
 public:
  SpanTree(const std::map<std::string, TaskGroupSpan>& groups,
           const std::map<std::string, SpanPath>& paths) {
    for (const auto& [name, g] : groups) {
      if (!g.span_id.empty()) parent_.try_emplace(g.span_id, "");
    }
    for (const auto& [id, path] : paths) {
      parent_[id] = path.ids.size() >= 2 ? path.ids[path.ids.size() - 2] : "";
      for (const std::string& up : path.ids) parent_.try_emplace(up, "");
    }
  }

  const std::map<std::string, std::string>& parents() const { return parent_; }

  // Is `id` the span `ancestor` or inside it? (Bounded walk: a hostile cycle ends.)
  bool Within(std::string id, const std::string& ancestor) const {
    for (size_t steps = 0; !id.empty() && steps <= parent_.size(); ++steps) {
      if (id == ancestor) return true;
      auto it = parent_.find(id);
      if (it == parent_.end()) return false;
      id = it->second;
    }
    return false;
  }

 private:
  std::map<std::string, std::string> parent_;
};

struct BuiltSpan {
  v1::Span span;
  double start = 0;
};

// The task prefixes whose spans all lie within `id` (exact; none of their groups unseen) and
// those with only some of them there (ambiguous).
struct PrefixesWithin {
  std::set<std::string> exact, ambiguous;
};

PrefixesWithin PrefixesOf(const std::string& id, const SpanTree& tree,
                          const std::map<std::string, std::set<std::string>>& prefix_spans,
                          const StreamGroups& unseen) {
  PrefixesWithin out;
  for (const auto& [prefix, spans] : prefix_spans) {
    size_t inside = 0;
    for (const std::string& s : spans) inside += tree.Within(s, id) ? 1 : 0;
    if (inside == spans.size() && unseen.count(prefix) == 0) {
      out.exact.insert(prefix);
    } else if (inside > 0) {
      out.ambiguous.insert(prefix);
    }
  }
  return out;
}

// The earliest start and latest stop of the groups within span `id`, 0 when unknown.
std::pair<double, double> SpanInterval(const std::string& id, const SpanTree& tree,
                                       const std::map<std::string, TaskGroupSpan>& groups) {
  double start = 0, stop = 0;
  for (const auto& [name, g] : groups) {
    if (g.span_id.empty() || !tree.Within(g.span_id, id)) continue;
    if (g.start_unix_seconds > 0 && (start == 0 || g.start_unix_seconds < start)) {
      start = g.start_unix_seconds;
    }
    stop = std::max(stop, g.stop_unix_seconds);
  }
  return {start, stop};
}

// Parents before children, siblings by start then id. A span whose parent has no metrics
// (impossible unless the tree is inconsistent) is placed at the top.
std::vector<v1::Span> InTreeOrder(const std::map<std::string, BuiltSpan>& built) {
  std::map<std::string, std::vector<std::string>> children;
  for (const auto& [id, b] : built) {
    const std::string& up = b.span.parent_id();
    children[built.count(up) > 0 ? up : ""].push_back(id);
  }
  std::vector<v1::Span> out;
  std::vector<std::string> stack;
  auto push_children = [&](const std::string& of) {
    std::vector<std::string>& kids = children[of];
    std::sort(kids.begin(), kids.end(), [&](const std::string& a, const std::string& b) {
      // A span none of whose tasks has started yet (start 0) comes last.
      const double sa = built.at(a).start, sb = built.at(b).start;
      return std::make_tuple(sa == 0, sa, a) < std::make_tuple(sb == 0, sb, b);
    });
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back(*it);
  };
  push_children("");
  std::set<std::string> emitted;
  while (!stack.empty()) {
    const std::string id = stack.back();
    stack.pop_back();
    if (!emitted.insert(id).second) continue;
    out.push_back(built.at(id).span);
    push_children(id);
  }
  for (const auto& [id, b] : built) {  // left by a cycle in hostile parents
    if (emitted.count(id) == 0) out.push_back(b.span);
  }
  return out;
}

}  // namespace

std::vector<v1::Span> SpanCatalog::Attribute(const v1::Span& window,
                                             const StreamGroups& stream_groups) const {
  const StreamGroups unseen = UnseenGroups(stream_groups);
  const SpanTree tree(groups_, paths_);
  std::map<std::string, std::set<std::string>> prefix_spans;
  for (const auto& [name, g] : groups_) {
    if (!g.span_id.empty()) prefix_spans[g.task_prefix].insert(g.span_id);
  }
  std::map<std::string, BuiltSpan> built;
  for (const auto& [id, up] : tree.parents()) {
    const PrefixesWithin prefixes = PrefixesOf(id, tree, prefix_spans, unseen);
    BuiltSpan b;
    v1::Span& span = b.span;
    for (const v1::FineMetric& m : window.metrics()) {
      if (prefixes.exact.count(m.task_prefix()) > 0 ||
          prefixes.ambiguous.count(m.task_prefix()) > 0) {
        *span.add_metrics() = m;
      }
    }
    if (span.metrics_size() == 0) continue;
    for (const std::string& prefix : prefixes.ambiguous) span.add_ambiguous_task_prefixes(prefix);
    span.set_id(id);
    span.set_kind(v1::SPAN_KIND_WORKLOAD);
    span.set_parent_id(up);
    auto path = paths_.find(id);
    if (path != paths_.end()) {
      for (const std::string& n : path->second.names) span.add_name_path(n);
      span.set_name(path->second.names.back());
    } else {
      span.set_name(absl::StrCat("span ", id));
    }
    const auto [start, stop] = SpanInterval(id, tree, groups_);
    span.set_start_unix_ns(static_cast<int64_t>(std::llround(start * 1e9)));
    span.set_end_unix_ns(static_cast<int64_t>(std::llround(stop * 1e9)));
    b.start = start;
    built.emplace(id, std::move(b));
  }
  return InTreeOrder(built);
}

}  // namespace roastcoffea::dask
