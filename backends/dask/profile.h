// Conversion of Dask's statistical profiles (the scheduler's `profile` op, dask-protocol.md)
// into v1::Profile call trees.
//
// A Dask profile tree is nested msgpack maps:
//   {"count": int, "identifier": "name;filename;firstlineno",
//    "description": {"filename", "name", "line_number", "line"},
//    "children": {identifier: subtree, ...}}
// with the root's identifier "root" (its description is an empty frame, or the str "root").
// `{"op": "profile", "merge_workers": false}` returns `{worker_address: tree}` instead.
//
// Counts. A worker samples with process(frame, True, ...) (distributed/worker.py
// trigger_profile), which increments every node on a sample's stack EXCEPT the innermost frame:
// a node's Dask count is the samples in which it was calling something, a hot leaf function
// gets count 0, and its samples show up as its caller's remainder (count minus the children's).
// With restore_innermost_counts (the default) the conversion gives the inclusive counts the
// schema wants wherever the tree determines them: a caller's remainder is exactly the samples
// in which its callees were innermost, so when it has ONE callee the remainder is that callee's
// and is added to it (and to nothing else: the callee's own remainder is its callees'). When it
// has several, which of them ran innermost is not recorded; the remainder stays on the caller,
// whose exclusive time then reads "in some function this line calls" (unless
// estimate_innermost_counts applies, below). The root's count is the
// number of samples; an idle window gives a root of count 0 with no children.
//
// Frames are deduplicated by identifier (the first node's description wins: Dask records the
// line being executed when the node was first sampled). `line` keeps linecache's text without
// its line terminator.
//
// The walk is iterative (explicit stack): a hostile depth costs heap, not stack.
// Thread-safety: pure functions. Cost: linear in the number of nodes.
#ifndef ROASTCOFFEA_BACKENDS_DASK_PROFILE_H_
#define ROASTCOFFEA_BACKENDS_DASK_PROFILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/dask/value.h"
#include "schema/measurement.pb.h"

namespace roastcoffea::dask {

struct ProfileConversionOptions {
  // Nodes in one conversion (all workers of a per-worker reply together), root(s) included.
  int64_t max_nodes = 1'000'000;
  // Nodes deeper than this (the root is depth 0) are refused; matches the analysis' default.
  int max_depth = 100000;
  // Give leaf functions back the samples Dask does not count on them (see above). False keeps
  // Dask's counts exactly as sent.
  bool restore_innermost_counts = true;
  // Where a caller has several callees and exactly ONE of them never called anything (count 0,
  // no children: seen only as the innermost frame), give that one the caller's remainder too.
  // An estimate: the other callees, seen calling, may also have been innermost now and then
  // (their own bytecode between calls), which then goes to the leaf. On modern Dask this is
  // what moves a task's samples from dask/_task_spec.py:__call__ (whose callees are the task
  // function and Dask's _execute_subgraph) to the task function. Counted in
  // v1::Profile.estimated_innermost_samples.
  bool estimate_innermost_counts = true;
};

// One tree. Fills source ("dask"), frames and nodes (node 0 the root, parents before
// children, children in wire order); the caller fills worker, window and interval.
// InvalidArgument naming the node's identifier and depth for: a node that is not a map,
// children that are not a map, a missing, non-integer or negative count, children whose counts
// add up to more than their parent's (except under a root of count 0, which means "not
// given"), a non-root node without a str identifier (or str key) or without a description map
// with a str `name`, description fields of the wrong type, or the limits exceeded.
absl::StatusOr<v1::Profile> ConvertProfileTree(const Value& tree,
                                               const ProfileConversionOptions& options = {});

// What restore_innermost_counts (and estimate_innermost_counts) do, on a converted tree with
// Dask's counts. Returns the samples estimated (also added to estimated_innermost_samples).
int64_t RestoreInnermostCounts(v1::Profile& profile, bool estimate = true);

struct WorkerProfileTree {
  std::string worker;  // the reply's key: the worker's address
  v1::Profile profile;
};

// The `merge_workers: false` reply, in wire order. InvalidArgument when the reply is not a map,
// a key is not a str, or a tree fails ConvertProfileTree (the message names the worker).
absl::StatusOr<std::vector<WorkerProfileTree>> ConvertPerWorkerProfiles(
    const Value& reply, const ProfileConversionOptions& options = {});

}  // namespace roastcoffea::dask

#endif  // ROASTCOFFEA_BACKENDS_DASK_PROFILE_H_
