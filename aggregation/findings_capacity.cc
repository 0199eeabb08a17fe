#include "aggregation/findings_capacity.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "aggregation/capacity.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace findings_rules {
namespace {

constexpr absl::string_view kNoTimeline = "no task timeline (engine worker slots and ready queue)";

// Lost-task-seconds of `worker` ("" sums every worker), from the per-worker fine metrics.
std::optional<double> LostSeconds(const FindingsInputs& in, absl::string_view worker) {
  if (in.metrics == nullptr || !in.metrics->has_fine()) return std::nullopt;
  std::optional<double> lost;
  for (const v1::ActivityTotal& t : in.metrics->fine().by_worker()) {
    if (t.activity() != "lost-task-seconds" || t.worker().empty()) continue;
    if (!worker.empty() && t.worker() != worker) continue;
    lost = lost.value_or(0) + t.value();
  }
  return lost;
}

// Chunks as replay tasks in the order they were submitted (engine task ids are handed out at
// submission; records without one keep their stored order after those with one), each ready
// from its submission (seconds after the timeline's start; 0 when not recorded).
std::vector<ReplayTask> TasksInSubmitOrder(const FindingsInputs& in, const CapacityTimeline& t) {
  std::vector<std::pair<int64_t, ReplayTask>> keyed;
  if (!in.has_chunks()) return {};
  int64_t next = INT64_MAX / 2;
  const ChunkReader chunks(in);
  for (size_t i = 0; i < chunks.size(); ++i) {
    int64_t id = 0;
    if (!absl::SimpleAtoi(chunks.task_id(i), &id)) id = next++;
    const std::optional<int64_t> ready_ns = chunks.ready_unix_ns(i);
    const double ready = ready_ns.has_value()
                             ? std::max(0.0, 1e-9 * static_cast<double>(*ready_ns - t.start_ns))
                             : 0.0;
    keyed.emplace_back(id, ReplayTask{ready, chunks.duration_seconds(i)});
  }
  const auto by_id = [](const auto& a, const auto& c) { return a.first < c.first; };
  // A log's tasks mostly come in submit order already: checked in one pass, not merge-sorted.
  if (!std::is_sorted(keyed.begin(), keyed.end(), by_id)) {
    std::stable_sort(keyed.begin(), keyed.end(), by_id);
  }
  std::vector<ReplayTask> tasks;
  tasks.reserve(keyed.size());
  for (const auto& [id, task] : keyed) tasks.push_back(task);
  return tasks;
}

// Run-queue wait over wall time of the chunks that measured it: slots that wait for a CPU are
// not short of workers.
std::optional<double> RunQueueShare(const FindingsInputs& in) {
  if (!in.has_chunks()) return std::nullopt;
  double wait = 0, wall = 0;
  const ChunkReader chunks(in);
  for (size_t i = 0; i < chunks.size(); ++i) {
    const std::optional<double> plausible = chunks.plausible_run_queue_wait(i);
    if (!plausible.has_value()) continue;
    wait += *plausible;
    wall += chunks.duration_seconds(i);
  }
  if (wall <= 0) return std::nullopt;
  return wait / wall;
}

// The number `key` of the finding `code` when that rule fired.
std::optional<double> FiredNumber(const Builder& b, absl::string_view code, absl::string_view key) {
  const v1::Finding* f = b.Find(code);
  if (f == nullptr) return std::nullopt;
  for (const v1::FindingNumber& n : f->numbers()) {
    if (n.key() == key) return n.value();
  }
  return std::nullopt;
}

struct Cause {
  std::string name;
  double seconds = 0;
};

std::string At(const CapacityTimeline& t, int64_t ns) {
  return absl::StrCat(Seconds(1e-9 * static_cast<double>(ns - t.start_ns)), " into the run");
}

// Stalls that ended when a retried chunk (attempt > 0) was dispatched: the engine held the
// failed task back (TaskVine's transient-error interval) while slots sat free. Returns the cost
// in seconds of the run (the matched stalls' length).
double RetryPenalty(const FindingsInputs& in, const CapacityTimeline& t, Builder& b) {
  if (in.num_chunks() == 0) {
    b.NotEvaluated("retry_penalty", "no chunk records");
    return 0;
  }
  b.Evaluated("retry_penalty");
  const int64_t tolerance = static_cast<int64_t>(kRetryDispatchToleranceSeconds * 1e9);
  double held = 0;
  std::vector<std::string> named;
  int64_t matched = 0;
  // Retried chunks by start: each stall looks up the ones starting just after it.
  std::vector<const v1::ChunkRecord*> retries;
  const ChunkReader chunks(in);
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (chunks.attempt(i) > 0) retries.push_back(&chunks.record(i));
  }
  std::sort(retries.begin(), retries.end(), [](const auto* a, const auto* c) {
    return a->start_unix_ns() != c->start_unix_ns() ? a->start_unix_ns() < c->start_unix_ns()
                                                    : Before(*a, *c);
  });
  for (const Stretch& stall : t.dispatch_stalls) {
    const auto first = std::lower_bound(
        retries.begin(), retries.end(), stall.end_ns,
        [](const v1::ChunkRecord* c, int64_t ns) { return c->start_unix_ns() < ns; });
    if (first == retries.end() || (*first)->start_unix_ns() > stall.end_ns + tolerance) continue;
    const v1::ChunkRecord* retry = *first;
    held += stall.Seconds();
    ++matched;
    if (static_cast<int>(named.size()) < kNamedItems) {
      named.push_back(absl::StrCat(DescribeChunk(*retry), ": ", Seconds(stall.Seconds()), " from ",
                                   At(t, stall.start_ns)));
    }
  }
  const double span = 1e-9 * static_cast<double>(t.end_ns - t.start_ns);
  if (held < kMinStallSeconds || held < kRetryPenaltyShare * span) return 0;
  v1::Finding& f = b.Add(
      v1::Finding::SEVERITY_WARNING, "retry_penalty",
      absl::StrCat("Retry penalty: slots sat free for ", Seconds(held),
                   " while the engine held failed tasks back before retrying them"),
      absl::StrCat("Tasks waited with slots free until a retried chunk was dispatched (", matched,
                   matched == 1 ? " stall" : " stalls", "): ", absl::StrJoin(named, "; "),
                   matched > static_cast<int64_t>(named.size()) ? "; ..." : "", "."),
      "Avoid the first failure (a task exceeding its resources is retried only after the "
      "engine's back-off: TaskVine's transient-error interval), or shorten that interval.");
  Number(f, "retry_penalty_seconds", held, "s");
  Number(f, "stalls", static_cast<double>(matched), "stalls");
  return held;
}

// Workers that connected while tasks waited but ran their first task only much later. Returns
// the cost in seconds of the run (their idle cores' waiting time over the mean slots).
double SlowStart(const CapacityTimeline& t, Builder& b, bool* held_back_out) {
  b.Evaluated("slow_start");
  double slot_seconds = 0;
  std::vector<const CapacityTimeline::Startup*> slow;
  for (const CapacityTimeline::Startup& s : t.startups) {
    if (s.waited_seconds < kSlowStartSeconds) continue;
    slow.push_back(&s);
    slot_seconds += s.waited_seconds * std::max(1.0, s.cores);
  }
  if (slow.empty()) return 0;
  std::sort(slow.begin(), slow.end(), [](const auto* a, const auto* c) {
    return a->waited_seconds != c->waited_seconds ? a->waited_seconds > c->waited_seconds
                                                  : a->worker < c->worker;
  });
  std::vector<std::string> named;
  for (size_t i = 0; i < slow.size() && static_cast<int>(i) < kNamedItems; ++i) {
    named.push_back(absl::StrCat(slow[i]->worker, " (connected ", At(t, slow[i]->connect_ns), ") ",
                                 Seconds(slow[i]->waited_seconds)));
  }
  const double cost = t.mean_slots > 0 ? slot_seconds / t.mean_slots : 0;
  // Workers that joined at different times but all began at one instant did not each take that
  // long to start: the tasks were held back until then.
  int64_t first_min = INT64_MAX, first_max = INT64_MIN, connect_min = INT64_MAX,
          connect_max = INT64_MIN;
  for (const auto* s : slow) {
    first_min = std::min(first_min, s->first_task_ns);
    first_max = std::max(first_max, s->first_task_ns);
    connect_min = std::min(connect_min, s->connect_ns);
    connect_max = std::max(connect_max, s->connect_ns);
  }
  const int64_t together = static_cast<int64_t>(kSimultaneousStartSeconds * 1e9);
  const bool held_back =
      slow.size() >= 2 && first_max - first_min <= together && connect_max - connect_min > together;
  *held_back_out = held_back;
  if (held_back) {
    v1::Finding& f = b.Add(
        v1::Finding::SEVERITY_WARNING, "slow_start",
        absl::StrCat("Slow start: ", Count(static_cast<int64_t>(slow.size()), "worker", "workers"),
                     " sat idle while tasks waited until ", At(t, first_min)),
        absl::StrCat("They connected between ", At(t, connect_min), " and ", At(t, connect_max),
                     ", yet all ran their first task within ", Seconds(kSimultaneousStartSeconds),
                     " of ", At(t, first_min), ": ", absl::StrJoin(named, "; "),
                     slow.size() > named.size() ? "; ..." : "", "."),
        "Not the workers' start-up: the manager or the application held the tasks back until "
        "then (a wait for a number of workers, inputs staged first); dispatch as workers "
        "arrive.");
    Number(f, "slow_start_workers", static_cast<double>(slow.size()), "workers");
    Number(f, "longest_start_seconds", slow.front()->waited_seconds, "s");
    Number(f, "start_slot_seconds", slot_seconds, "slot-s");
    return cost;
  }
  v1::Finding& f = b.Add(
      v1::Finding::SEVERITY_WARNING, "slow_start",
      absl::StrCat("Slow start: ", Count(static_cast<int64_t>(slow.size()), "worker", "workers"),
                   " took up to ", Seconds(slow.front()->waited_seconds),
                   " to run a first task while tasks waited"),
      absl::StrCat("Time from a worker's connection to its first task, counted while tasks "
                   "waited: ",
                   absl::StrJoin(named, "; "), slow.size() > named.size() ? "; ..." : "", "."),
      "Start-up is environment or library set-up and first input transfers: ship a smaller "
      "environment (or cache it on the workers), or start workers before submitting.");
  Number(f, "slow_start_workers", static_cast<double>(slow.size()), "workers");
  Number(f, "longest_start_seconds", slow.front()->waited_seconds, "s");
  Number(f, "start_slot_seconds", slot_seconds, "slot-s");
  return cost;
}

// Workers that were quiet before they left with tasks running: the last message the engine had
// from them (WorkerSeries.last_seen_unix_seconds), or a silent death the backend inferred.
void SilentWorkers(const FindingsInputs& in, const CapacityTimeline& t, Builder& b) {
  const v1::Warning* inferred = FindWarning(in, "taskvine_worker_silent_death");
  bool any_last_seen = false;
  std::vector<std::string> named;
  double quiet_total = 0;
  int64_t quiet_workers = 0;
  for (const DeadWorker& w : DeadWorkers(*in.tracking)) {
    if (w.last_seen_unix_seconds <= 0) continue;
    any_last_seen = true;
    const double quiet = w.QuietSeconds();
    if (quiet < kSilentMinSeconds) continue;
    quiet_total += quiet;
    ++quiet_workers;
    if (static_cast<int>(named.size()) < kNamedItems) {
      named.push_back(absl::StrCat(
          w.worker, " silent since ", At(t, static_cast<int64_t>(w.last_seen_unix_seconds * 1e9)),
          ", quiet ", Seconds(quiet), " before it was declared lost at ", At(t, w.end_ns)));
    }
  }
  if (!any_last_seen && inferred == nullptr) {
    b.NotEvaluated("silent_workers",
                   "no worker last-message times in the measurement, and no silent death found");
    return;
  }
  b.Evaluated("silent_workers");
  if (quiet_workers == 0 && inferred == nullptr) return;
  std::string evidence = absl::StrJoin(named, "; ");
  if (inferred != nullptr) {
    absl::StrAppend(
        &evidence, evidence.empty() ? "" : ". ",
        "The engine never declared a worker lost: ", ElideMiddle(inferred->message(), 240));
  }
  v1::Finding& f = b.Add(
      v1::Finding::SEVERITY_WARNING, "silent_workers",
      quiet_workers > 0
          ? absl::StrCat("Silent workers: ", Count(quiet_workers, "worker", "workers"),
                         " went quiet with tasks running ", Seconds(quiet_total),
                         " before the engine declared them lost")
          : std::string("Silent worker: a worker died without the engine noticing"),
      std::move(evidence),
      "A worker whose process died while its children kept the connection open counts as busy "
      "until the keepalive timeout (TaskVine's default: up to 15 min): lower the keepalive "
      "timeout, and kill a worker's whole process group.");
  if (quiet_workers > 0) Number(f, "quiet_seconds", quiet_total, "s");
}

// Stragglers that share a host: a host whose median chunk is >= kSlowHostRatio x the median of
// the other hosts' chunks.
// The successful chunks' durations by the host of their worker (the tracking's), in record
// order. From the columns when the caller has them: each worker's host looked up once, not a
// hash and a map lookup of strings per chunk.
std::map<std::string, std::vector<double>> DurationsByHost(const FindingsInputs& in) {
  absl::flat_hash_map<std::string, std::string> host_of;
  for (const v1::WorkerSeries& w : in.tracking->workers()) {
    if (!w.host().empty()) host_of[w.worker()] = w.host();
  }
  std::map<std::string, std::vector<double>> by_host;
  const ChunkColumns* c = in.columns;
  if (c != nullptr && c->BuiltFrom(in.chunks, in.chunk_table)) {
    std::vector<const std::string*> host_of_worker(c->worker_names.size(), nullptr);
    for (size_t w = 0; w < c->worker_names.size(); ++w) {
      const auto it = host_of.find(c->worker_names[w]);
      if (it != host_of.end()) host_of_worker[w] = &it->second;
    }
    // A host's entry is made at its first successful chunk, as below.
    std::vector<std::vector<double>*> durations_of(c->worker_names.size(), nullptr);
    for (size_t i = 0; i < c->size(); ++i) {
      if (c->failed(i)) continue;
      const uint32_t w = c->worker[i];
      if (host_of_worker[w] == nullptr) continue;
      if (durations_of[w] == nullptr) durations_of[w] = &by_host[*host_of_worker[w]];
      durations_of[w]->push_back(c->duration_seconds[i]);
    }
    return by_host;
  }
  const ChunkReader records(in);
  for (size_t i = 0; i < records.size(); ++i) {
    if (records.failed(i)) continue;
    const auto it = host_of.find(records.worker(i));
    if (it != host_of.end()) by_host[it->second].push_back(records.duration_seconds(i));
  }
  return by_host;
}

void SlowHosts(const FindingsInputs& in, Builder& b) {
  if (in.num_chunks() == 0) {
    b.NotEvaluated("slow_hosts", "no chunk records");
    return;
  }
  std::map<std::string, std::vector<double>> by_host = DurationsByHost(in);
  if (by_host.size() < 2) {
    b.NotEvaluated("slow_hosts", "the chunks ran on fewer than 2 hosts");
    return;
  }
  b.Evaluated("slow_hosts");
  std::string slowest;
  double worst = 0, host_median = 0, others_median = 0;
  size_t chunks = 0;
  // Only the hosts with the slowest medians are compared with the rest (each comparison reads
  // every chunk once).
  std::vector<std::pair<double, const std::string*>> candidates;
  for (const auto& [host, durations] : by_host) {
    if (static_cast<int>(durations.size()) < kMinChunksPerHost) continue;
    candidates.emplace_back(Median(durations), &host);
  }
  std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& c) {
    return a.first != c.first ? a.first > c.first : *a.second < *c.second;
  });
  if (candidates.size() > static_cast<size_t>(kNamedItems)) candidates.resize(kNamedItems);
  for (const auto& [median, host_name] : candidates) {
    const std::string& host = *host_name;
    const std::vector<double>& durations = by_host[host];
    std::vector<double> others;
    for (const auto& [other, d] : by_host) {
      if (other != host) others.insert(others.end(), d.begin(), d.end());
    }
    const double mine = Median(durations), rest = Median(others);
    if (rest <= 0 || mine / rest <= worst) continue;
    worst = mine / rest, slowest = host, host_median = mine, others_median = rest;
    chunks = durations.size();
  }
  if (worst < kSlowHostRatio) return;
  v1::Finding& f = b.Add(
      v1::Finding::SEVERITY_WARNING, "slow_hosts",
      absl::StrFormat("Slow host: chunks on %s took %.1fx the other hosts' median", slowest, worst),
      absl::StrCat(chunks, " chunks on ", slowest, ": median ", Seconds(host_median),
                   "; chunks on the other hosts: median ", Seconds(others_median), "."),
      "The host, not the files, is slow: look for other jobs, thermal limits or a slow disk on "
      "it, or leave it out.");
  Number(f, "host_over_others", worst, "ratio");
}

}  // namespace

std::optional<double> LostWorkSeconds(const FindingsInputs& in) { return LostSeconds(in, ""); }

// A serverless run: function calls run in library instances' slots, which the worker series do
// not show as executing tasks.
bool HasLibraries(const FindingsInputs& in) {
  if (in.metrics == nullptr || !in.metrics->has_fine()) return false;
  for (const v1::ActivityTotal& t : in.metrics->fine().by_task_prefix()) {
    if (t.context() == "taskvine-run" && t.activity() == "function-slot-seconds" && t.value() > 0) {
      return true;
    }
  }
  return false;
}

void NotEvaluatedAll(absl::string_view reason, Builder& b) {
  for (absl::string_view code : {"worker_bound", "dispatch_bound", "retry_penalty", "slow_start",
                                 "dead_workers", "silent_workers", "slow_hosts"}) {
    b.NotEvaluated(code, reason);
  }
  b.NotEvaluated("limiting_cause", reason);
}

// Worker-bound: every slot busy while tasks waited; what twice the slots would give.
void WorkerBound(const FindingsInputs& in, const CapacityTimeline& t, double span, Builder& b,
                 std::vector<Cause>& causes) {
  const std::vector<ReplayTask> tasks = TasksInSubmitOrder(in, t);
  if (tasks.empty()) {
    b.NotEvaluated("worker_bound", "no chunk records to replay");
  } else {
    b.Evaluated("worker_bound");
    const int slots = std::max(1, static_cast<int>(std::lround(t.mean_slots)));
    const double now = ReplayMakespan(tasks, slots);
    const double doubled = ReplayMakespan(tasks, 2 * slots);
    const double saving = now - doubled;
    const std::optional<double> starved = RunQueueShare(in);
    if (t.worker_bound_seconds >= kWorkerBoundShare * span && now > 0 &&
        saving >= kMinSavingShare * now) {
      v1::Finding& f = b.Add(
          v1::Finding::SEVERITY_WARNING, "worker_bound",
          absl::StrCat("Worker-bound: every slot was busy while tasks waited for ",
                       Pct(t.worker_bound_seconds / span), " of the run"),
          absl::StrCat(
              "Tasks waited with all slots busy for ", Seconds(t.worker_bound_seconds), " of ",
              Seconds(span), " (", absl::StrFormat("%.1f", t.mean_slots),
              " slots on average). Replaying the ", tasks.size(),
              " observed chunk durations in submit order (none before its submission) onto ", slots,
              " slots takes ", Seconds(now), "; onto ", 2 * slots, " slots ", Seconds(doubled),
              ", ", Seconds(saving), " (", Pct(saving / now), ") shorter."),
          b.Fired("cpu_contention")
              ? absl::StrCat("Not more workers on the same machines: they ran more processes "
                             "than CPUs (see CPU contention); on machines of their own twice the "
                             "slots would save about ",
                             Seconds(saving), ".")
          : starved.has_value() && *starved >= kStarvationShare
              ? absl::StrCat("Not more workers on the same CPUs: the chunks waited for a CPU ",
                             Pct(*starved),
                             " of their time (see CPU starvation); on free cores twice the slots "
                             "would save about ",
                             Seconds(saving), ".")
              : absl::StrCat(
                    "More workers or cores shorten this run: twice the slots would save about ",
                    Seconds(saving), "."));
      Number(f, "worker_bound_seconds", t.worker_bound_seconds, "s");
      Number(f, "mean_slots", t.mean_slots, "slots");
      Number(f, "replayed_makespan_seconds", now, "s");
      Number(f, "replayed_makespan_2x_seconds", doubled, "s");
      Number(f, "saving_seconds", saving, "s");
      causes.push_back({"worker-bound (all slots busy)", saving});
    }
  }
}

// Dispatch-bound or underfed: slots free while tasks waited, or while none were queued yet.
void DispatchBound(const CapacityTimeline& t, double span, double retry_cost, double startup_cost,
                   Builder& b, std::vector<Cause>& causes) {
  b.Evaluated("dispatch_bound");
  // Free slot time in seconds of the run; the part a retry penalty or start-ups explain is
  // theirs, not counted twice.
  const double dispatch_cost =
      t.mean_slots > 0 ? t.free_slot_seconds_while_waiting / t.mean_slots : 0;
  const double unexplained = std::max(0.0, dispatch_cost - retry_cost - startup_cost);
  const bool dispatch = t.slot_seconds > 0 && t.dispatch_bound_seconds >= kMinStallSeconds &&
                        unexplained * t.mean_slots >= kDispatchBoundShare * t.slot_seconds &&
                        unexplained >= kMinStallSeconds;
  const bool underfed =
      t.underfed_seconds >= kDispatchBoundShare * span && t.underfed_seconds >= kMinStallSeconds;
  if (dispatch || underfed) {
    const bool dispatch_first = dispatch && (!underfed || unexplained >= t.underfed_seconds);
    const Stretch& longest = dispatch_first ? t.longest_dispatch_stall : t.longest_underfed_stall;
    const double longest_from = 1e-9 * static_cast<double>(longest.start_ns - t.start_ns);
    std::string evidence;
    if (dispatch) {
      absl::StrAppend(&evidence, "Tasks waited while slots were free for ",
                      Seconds(t.dispatch_bound_seconds), " of the ", Seconds(span), " run (",
                      Seconds(t.free_slot_seconds_while_waiting), " of free slot time, ",
                      Pct(t.free_slot_seconds_while_waiting / t.slot_seconds), "). ");
    }
    if (underfed) {
      absl::StrAppend(&evidence,
                      "No task was queued while slots were free, and tasks came later, "
                      "for ",
                      Seconds(t.underfed_seconds), ". ");
    }
    absl::StrAppend(&evidence, "Longest stall ", Seconds(longest.Seconds()), " from ",
                    Seconds(longest_from), " into the run.");
    v1::Finding& f = b.Add(
        v1::Finding::SEVERITY_WARNING, "dispatch_bound",
        dispatch_first ? absl::StrCat("Dispatch-bound: slots sat free while tasks waited (",
                                      Seconds(t.free_slot_seconds_while_waiting), " of slot time)")
                       : absl::StrCat("Underfed: slots sat free with no task queued for ",
                                      Seconds(t.underfed_seconds)),
        std::move(evidence),
        dispatch_first
            ? "More workers would not help: the manager did not hand out waiting tasks fast "
              "enough (fewer, longer tasks; check the manager's host for load and its input "
              "transfers)."
            : "More workers would not help: the application submitted nothing for a while "
              "(submit every chunk up front; look for a step that waits for results).");
    Number(f, "dispatch_bound_seconds", t.dispatch_bound_seconds, "s");
    Number(f, "free_slot_seconds_while_waiting", t.free_slot_seconds_while_waiting, "slot-s");
    Number(f, "underfed_seconds", t.underfed_seconds, "s");
    Number(f, "longest_stall_seconds", longest.Seconds(), "s");
    if (dispatch) causes.push_back({"dispatch-bound (slots free while tasks waited)", unexplained});
    if (underfed) causes.push_back({"underfed (no task queued)", t.underfed_seconds});
  }
}

// Dead workers: left with tasks executing; their slots are gone, their attempts lost.
void DeadWorkersRule(const FindingsInputs& in, const CapacityTimeline& t, Builder& b,
                     std::vector<Cause>& causes) {
  b.Evaluated("dead_workers");
  const std::vector<DeadWorker> dead = DeadWorkers(*in.tracking);
  if (!dead.empty()) {
    std::vector<std::string> named;
    double lost_total = 0;
    bool lost_known = false;
    for (const DeadWorker& w : dead) {
      const std::optional<double> lost = LostSeconds(in, w.worker);
      lost_known |= lost.has_value();
      lost_total += lost.value_or(0);
      if (static_cast<int>(named.size()) < kNamedItems) {
        named.push_back(absl::StrCat(
            w.worker, w.host.empty() ? "" : absl::StrCat(" (", w.host, ")"), " at ",
            Seconds(1e-9 * static_cast<double>(w.end_ns - t.start_ns)), " with ",
            static_cast<int64_t>(w.executing_at_end), " running",
            lost.has_value() ? absl::StrCat(", ", Seconds(*lost), " of work lost") : ""));
      }
    }
    v1::Finding& f = b.Add(
        v1::Finding::SEVERITY_WARNING, "dead_workers",
        absl::StrCat(Count(static_cast<int64_t>(dead.size()), "worker", "workers"),
                     " died with tasks running",
                     lost_known ? absl::StrCat(": ", Seconds(lost_total), " of work lost") : ""),
        absl::StrCat("Left the run (disconnected, lost, or declared dead at a keepalive timeout) "
                     "while executing: ",
                     absl::StrJoin(named, "; "), dead.size() > named.size() ? "; ..." : "",
                     ". Their slots are not counted as idle after they left."),
        "Find why the workers died (the worker logs, the batch system's preemption or memory "
        "kills); a shorter keepalive timeout notices a silent death sooner.");
    Number(f, "dead_workers", static_cast<double>(dead.size()), "workers");
    if (lost_known) Number(f, "lost_work_seconds", lost_total, "s");
    if (lost_known && t.mean_slots > 0) {
      causes.push_back({"dead workers (lost work)", lost_total / t.mean_slots});
    }
  }
}

// The cause that cost the most.
void LimitingCause(const std::vector<Cause>& causes, double span, Builder& b) {
  b.Evaluated("limiting_cause");
  if (causes.empty()) return;
  const Cause& top =
      *std::max_element(causes.begin(), causes.end(),
                        [](const Cause& a, const Cause& c) { return a.seconds < c.seconds; });
  std::vector<std::string> all;
  for (const Cause& c : causes) all.push_back(absl::StrCat(c.name, " ", Seconds(c.seconds)));
  v1::Finding& f = b.Add(
      v1::Finding::SEVERITY_INFO, "limiting_cause",
      absl::StrCat("What limited the run most: ", top.name, ", about ", Seconds(top.seconds),
                   " of the ", Seconds(span), " run"),
      absl::StrCat("Cost in seconds of the run, per cause found: ", absl::StrJoin(all, "; "), "."),
      "Start with this cause; its finding above says what to change.");
  Number(f, "cost_seconds", top.seconds, "s");
}

void Capacity(const FindingsInputs& in, Builder& b) {
  if (HasLibraries(in)) {
    NotEvaluatedAll("serverless run: library function slots are not in the task timeline", b);
    return;
  }
  // A task may take several cores (a whole worker, a GPU task): slots are counted in tasks.
  const CoresPerTask cores_per_task =
      in.tracking != nullptr && in.metrics->has_fine()
          ? CoresPerTaskFromAllocation(*in.tracking, in.metrics->fine())
          : CoresPerTask();
  const std::optional<CapacityTimeline> timeline =
      in.tracking == nullptr ? std::nullopt : AnalyseCapacity(*in.tracking, &cores_per_task);
  if (!timeline.has_value()) {
    NotEvaluatedAll(kNoTimeline, b);
    return;
  }
  const CapacityTimeline& t = *timeline;
  const double span = 1e-9 * static_cast<double>(t.end_ns - t.start_ns);
  std::vector<Cause> causes;

  WorkerBound(in, t, span, b, causes);

  // Retry penalty and slow starts: parts of the dispatch-bound time with a known cause.
  const double retry_cost = RetryPenalty(in, t, b);
  bool held_back = false;
  const double startup_cost = SlowStart(t, b, &held_back);

  DispatchBound(t, span, retry_cost, startup_cost, b, causes);
  DeadWorkersRule(in, t, b, causes);

  if (retry_cost > 0) causes.push_back({"retry penalty (a failed task held back)", retry_cost});
  if (startup_cost > 0) {
    causes.push_back(
        {held_back ? "tasks held back from idle workers" : "slow worker start-up", startup_cost});
  }
  SilentWorkers(in, t, b);
  SlowHosts(in, b);
  // CPU contention ran earlier (findings_contention.h); its cost competes here.
  const std::optional<double> contention = FiredNumber(b, "cpu_contention", "cost_seconds");
  if (contention.has_value() && *contention > 0) {
    causes.push_back({"CPU contention on the workers", *contention});
  }

  LimitingCause(causes, span, b);
}

}  // namespace findings_rules
}  // namespace aggregation_internal
}  // namespace roastcoffea
