// The workload's own Dask spans (`with distributed.span("load"):`, distributed ≥ 2023.6), read
// without pickle, and the split of a window's fine metrics over them.
//
// No read-only op returns spans or their metrics (dask/spans.py registers no handler), so they
// are rebuilt from `dump_state` (docs/modern-dask-study.md §7):
//   * task_groups[*]: the group's prefix (the repr "<busy: memory: 3>") and `span_id`, the
//     innermost span its tasks were submitted in. Groups vanish once their tasks are forgotten,
//     so the catalog keeps every group seen during the run.
//   * tasks[*].annotations.span = {"name": ["held", "inner"], "ids": [outer, inner]}: names and
//     parents, read once when a new span id appears (the span's tasks must still be alive).
// Fine metrics are keyed by task prefix, not span: a prefix whose groups all belong to one
// span (or to its descendants) is that span's exactly; a prefix that ran in several spans is
// given to each of them with its totals, and listed in Span.ambiguous_task_prefixes.
//
// A span shorter than the poll interval can be missed: its groups are created and forgotten
// between two polls. Its tasks are still in the task stream, whose keys name their groups
// (TaskGroupOfKey): a prefix with a group the polls never saw is not exact in any span
// (UnseenGroups, and Attribute marks it ambiguous wherever it is given).
//
// Thread-safety: plain values; SpanCatalog is not synchronised. Cost: linear in groups, spans
// and metrics.
#ifndef ROASTCOFFEA_BACKENDS_DASK_SPANS_H_
#define ROASTCOFFEA_BACKENDS_DASK_SPANS_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "backends/dask/value.h"
#include "schema/measurement.pb.h"

namespace roastcoffea::dask {

// One task group of a dump_state reply.
struct TaskGroupSpan {
  std::string group;              // the group's name
  std::string task_prefix;        // Dask's key_split of its keys
  std::string span_id;            // "" before distributed 2023.6
  double start_unix_seconds = 0;  // 0 until a task of the group started
  double stop_unix_seconds = 0;
};

// The `dump_state` arguments that leave the task groups' names, prefixes, span ids, start and
// stop (about 300 B per group).
Value TaskGroupsRequestArgs();
// InvalidArgument naming the field for a reply that is not a map with a `task_groups` map, or
// a group without a str name and prefix. A group without span_id has span_id "".
absl::StatusOr<std::vector<TaskGroupSpan>> ParseTaskGroups(const Value& reply);
// The name in TaskPrefix's repr "<name: state: n, ...>" ("<name: >" when it has no tasks);
// nullopt when the text has another shape.
std::optional<std::string> PrefixNameFromRepr(absl::string_view repr);

// The task group of a key in its display form (task_stream.h's TaskRecord::key): Dask's
// key_split_group ("('x-2', 1)" -> "x-2", else key_split).
std::string TaskGroupOfKey(absl::string_view key);

// Task prefix -> the groups the task stream saw it run in.
using StreamGroups = std::map<std::string, std::set<std::string>>;

// A span's name path and ids path, outermost first (the span is the last element).
struct SpanPath {
  std::vector<std::string> names;
  std::vector<std::string> ids;
};

// The `dump_state` arguments that leave the live tasks' annotations (about 250 B per task).
Value TaskAnnotationsRequestArgs();
// Every span (and enclosing span) named by a live task's annotations.span, by id.
// InvalidArgument for a reply that is not a map with a `tasks` map; tasks without a well-formed
// annotation are skipped.
absl::StatusOr<std::map<std::string, SpanPath>> ParseTaskSpanPaths(const Value& reply);

// What the polls of one run saw.
class SpanCatalog {
 public:
  // Records (or updates) the groups; returns the span ids seen for the first time.
  std::vector<std::string> AddGroups(const std::vector<TaskGroupSpan>& groups);
  void AddPaths(const std::map<std::string, SpanPath>& paths);
  bool empty() const { return groups_.empty(); }

  // The workload spans with `window`'s metrics split over them (kind SPAN_KIND_WORKLOAD),
  // parents before children, siblings by start. Only spans with at least one metric are given.
  // A span whose name was never read is named "span <id>". Metrics of prefixes no group was
  // seen for stay in the window only. A prefix with a group in `stream_groups` that no poll saw
  // (a missed span) is ambiguous wherever it is given.
  std::vector<v1::Span> Attribute(const v1::Span& window,
                                  const StreamGroups& stream_groups = {}) const;

  // The groups of `stream_groups` no poll saw, by prefix, for the prefixes some poll saw a
  // group of (those whose tasks would otherwise go silently to a seen span).
  StreamGroups UnseenGroups(const StreamGroups& stream_groups) const;

 private:
  std::map<std::string, TaskGroupSpan> groups_;  // by group name
  std::map<std::string, SpanPath> paths_;        // by span id
};

}  // namespace roastcoffea::dask

#endif  // ROASTCOFFEA_BACKENDS_DASK_SPANS_H_
