// Capacity: what limited an engine run, from its task timeline (internal to //aggregation; the
// findings rules of findings_capacity.cc read it).
//
// The timeline is the tracking data a TaskVine / Work Queue backend writes as exact step
// functions: per worker its cores (slots) and executing tasks from CONNECTION to DISCONNECTION,
// and the manager's ready queue (TrackingData.queued_chunks). Over every interval of it:
//   worker-bound    tasks waited in the queue and every slot of the live workers was busy;
//   dispatch-bound  tasks waited while a slot was free (the manager did not hand them out);
//   underfed        no task waited, slots were free, and tasks were queued again later (the
//                   application submitted nothing for a while).
// A slot is room for one task on a connected worker: a core, or the cores a task was allocated
// there when the engine says (CoresPerTaskFromAllocation). A worker that disconnected is no slot
// after its disconnection.
//
// Thread-safety: pure. Cost: O(P log S) for P points of S series, merged where they lie (no
// copy of the points) when each series is in time order; otherwise a sorted copy, O(P log P).
#ifndef ROASTCOFFEA_AGGREGATION_CAPACITY_H_
#define ROASTCOFFEA_AGGREGATION_CAPACITY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {

// A stretch of the timeline in one state, [start_ns, end_ns).
struct Stretch {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  double Seconds() const { return 1e-9 * static_cast<double>(end_ns - start_ns); }
};

struct CapacityTimeline {
  int64_t start_ns = 0, end_ns = 0;            // from the first instant a slot existed to the last
  double slot_seconds = 0;                     // integral of live slots
  double mean_slots = 0;                       // slot_seconds over the timeline
  double waiting_seconds = 0;                  // time some task waited in the queue
  double worker_bound_seconds = 0;             // waited, every slot busy
  double dispatch_bound_seconds = 0;           // waited, a slot free
  double free_slot_seconds_while_waiting = 0;  // free slots x time while tasks waited
  double underfed_seconds = 0;                 // nothing waited, slots free, queued again later
  Stretch longest_dispatch_stall;              // longest stretch dispatch-bound
  Stretch longest_underfed_stall;              // longest stretch underfed
  // Every dispatch-bound stretch of at least kStallKeptSeconds, in time order.
  std::vector<Stretch> dispatch_stalls;
  // Per worker that connected while tasks waited: how long tasks waited after it connected
  // before it ran its first task (its start-up: environment, library, transfers), in the order
  // of tracking.workers(); workers without such a wait are left out.
  struct Startup {
    std::string worker;
    int64_t connect_ns = 0;
    int64_t first_task_ns = 0;
    double waited_seconds = 0;
    double cores = 0;
  };
  std::vector<Startup> startups;
};

// Dispatch-bound stretches shorter than this are not kept one by one (only summed).
inline constexpr double kStallKeptSeconds = 0.5;

// Mean cores a task was allocated on each worker (worker -> cores per task).
using CoresPerTask = absl::flat_hash_map<std::string, double>;

// From the engine's per-worker allocated core-seconds (cores x time of each attempt on the
// worker, the fine metric taskvine-worker/allocated-core-seconds) over the integral of the
// worker's executing tasks in `tracking`: what one task took of the worker. Workers without
// either are left out (one core per task).
CoresPerTask CoresPerTaskFromAllocation(const v1::TrackingData& tracking,
                                        const v1::FineMetricsSummary& fine);

// The timeline of `tracking`, or nullopt when it has no step worker series with cores or no
// queue series (a thread pool, a Dask run, an engine log without them). With `cores_per_task`,
// a worker offers floor(cores / its cores per task) slots (at least 1): a task that takes the
// whole worker leaves no slot free beside it.
std::optional<CapacityTimeline> AnalyseCapacity(const v1::TrackingData& tracking,
                                                const CoresPerTask* cores_per_task = nullptr);

// A task to replay: seconds from the timeline's start to its submission (when it became ready;
// 0 when unknown), and how long it ran.
struct ReplayTask {
  double ready_seconds = 0;
  double duration_seconds = 0;
};

// List scheduling: `tasks` (in submit order) each start on the slot that frees first, of `slots`
// slots, but never before the task was ready. Returns the makespan in seconds from the
// timeline's start (0 without tasks or slots): never shorter than the last submission allows.
double ReplayMakespan(const std::vector<ReplayTask>& tasks, int slots);
// The same with every task ready at time 0.
double ReplayMakespan(const std::vector<double>& durations, int slots);

// A worker that left the run while tasks were executing on it (killed, lost, or declared dead
// at a keepalive timeout): not an idle slot after it left.
struct DeadWorker {
  std::string worker;
  std::string host;
  int64_t end_ns = 0;           // its DISCONNECTION (or last evidence of a silent death)
  double executing_at_end = 0;  // tasks executing on it just before
  double cores = 0;
  // Its last message (WorkerSeries.last_seen_unix_seconds), 0 when not recorded: a worker quiet
  // long before end_ns died silently and was declared lost only at a keepalive timeout.
  double last_seen_unix_seconds = 0;
  double QuietSeconds() const {
    return last_seen_unix_seconds > 0 ? 1e-9 * static_cast<double>(end_ns) - last_seen_unix_seconds
                                      : 0;
  }
};

// Workers of `tracking` whose series ends before the run's last instant with tasks executing.
std::vector<DeadWorker> DeadWorkers(const v1::TrackingData& tracking);

// Worker -> the instant its series ends when that is before the run's last instant (the worker
// left early), for every worker with a series; used to stop counting a left worker's slots.
// Empty without step series.
std::vector<std::pair<std::string, int64_t>> WorkerEnds(const v1::TrackingData& tracking);
// Worker -> the instant its series starts (its connection), for every worker with a step series.
std::vector<std::pair<std::string, int64_t>> WorkerStarts(const v1::TrackingData& tracking);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_CAPACITY_H_
