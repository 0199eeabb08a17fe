// DaskMetricsBackend: spans: their heartbeats, recovered digests and fine metrics (see
// dask_backend.h).
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "backends/dask/dask_backend.h"
#include "backends/dask/dask_backend_time.h"
#include "backends/dask/spans.h"

namespace roastcoffea {

using dask_backend_internal::NowUnixNs;

absl::StatusOr<SpanId> DaskMetricsBackend::CreateSpan(absl::string_view name) {
  absl::StatusOr<backends_internal::SpanWindow> opened = spans_.Open(name, absl::Now());
  if (!opened.ok()) return opened.status();
  const SpanId id = opened->id;
  bool tracking;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    span_state_[id];
    tracking = tracking_;
  }
  if (tracking && options_.recover_lost_digests) {
    // The lossless baseline of the span's execute seconds (see FinalizeSpan).
    absl::StatusOr<dask::CumulativeExecuting> cumulative = ReadCumulative();
    std::lock_guard<std::mutex> lock(mutex_);
    SpanState& span = span_state_[id];
    if (cumulative.ok()) {
      span.start_cumulative = *std::move(cumulative);
    } else {
      span.start_cumulative_error = std::string(cumulative.status().message());
    }
  }
  return id;
}

absl::Status DaskMetricsBackend::EndSpan(const SpanId& id) {
  return spans_.Close(id, absl::Now()).status();
}

bool DaskMetricsBackend::InSpan(const backends_internal::SpanWindow& window, const SpanState& span,
                                const HeartbeatEvent& e) const {
  if (e.observed_unix_ns <= absl::ToUnixNanos(window.start)) return false;
  // A heartbeat carries what ran since the previous one: the span's last is the first one a
  // worker sent after the span's end.
  auto closing = span.closing_last_seen.find(e.worker);
  if (closing != span.closing_last_seen.end()) return e.last_seen <= closing->second;
  return e.observed_unix_ns <= absl::ToUnixNanos(window.end);
}

void DaskMetricsBackend::FinalizeSpan(const SpanId& id) {
  absl::StatusOr<backends_internal::SpanWindow> window = spans_.Ended(id);
  if (!window.ok()) return;
  double period;
  bool watch;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    SpanState& span = span_state_.at(id);
    if (span.finalized) return;
    period = HeartbeatPeriodNow();
    watch = digests_seen_;
    if (!watch) span.finalized = true;  // nothing a heartbeat could carry (< 2023.4)
  }
  if (!watch) return;

  const absl::Duration timeout = options_.final_heartbeat_timeout > absl::ZeroDuration()
                                     ? options_.final_heartbeat_timeout
                                     : std::max(absl::Seconds(2), absl::Seconds(3 * period));
  const ClosingHeartbeats closing =
      WaitForClosingHeartbeats(absl::ToUnixNanos(window->end), period, timeout);
  std::optional<dask::CumulativeExecuting> start_cumulative;
  std::string cumulative_error;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    SpanState& span = span_state_.at(id);
    span.closing_last_seen = closing.last_seen;
    start_cumulative = span.start_cumulative;
    cumulative_error = span.start_cumulative_error;
  }
  std::optional<dask::CumulativeExecuting> end_cumulative =
      ReadEndCumulative(start_cumulative.has_value(), cumulative_error);
  if (EndRanOut()) {
    WarnEndCut(absl::StrCat("finishing span '", window->name, "'"),
               "its last heartbeats or cumulative totals may be missing (said below)");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  SpanState& span = span_state_.at(id);
  span.finalized = true;
  const bool closing_missed = !closing.waiting.empty() || !closing.baseline_taken;
  if (closing_missed) {
    AddWarning(absl::StrFormat(
        "No heartbeat after the end of span '%s' from Dask worker(s) %s within %s: what they "
        "ran just before the end is missing from the fine metrics unless restored below.",
        window->name,
        closing.baseline_taken ? absl::StrJoin(closing.waiting, ", ") : "(scheduler unreachable)",
        absl::FormatDuration(timeout)));
  }
  // Digests can only be lost with a heartbeat: one missed between polls, or the closing one
  // never seen. Without either, a difference from the cumulative totals is their lag behind
  // the digests (timing, rounding), not lost data: nothing is restored, nothing reported.
  RecoverOrWarnLostDigests(*window, span, closing_missed, start_cumulative, end_cumulative,
                           cumulative_error);
}

DaskMetricsBackend::ClosingHeartbeats DaskMetricsBackend::WaitForClosingHeartbeats(
    int64_t end_ns, double period, absl::Duration timeout) {
  // One more heartbeat of every worker, sent after the end: the first one newer than what a
  // poll that started after the end saw (clock-free: no comparison with the scheduler's clock).
  // Within the end of tracking's deadline when StopTracking finalizes the span.
  const absl::Time deadline = std::min(dask::DeadlineNow() + timeout, end_deadline());
  std::map<std::string, double> baseline;
  ClosingHeartbeats closing;
  for (;;) {
    const int64_t asked = NowUnixNs();
    absl::StatusOr<dask::SchedulerSnapshot> snapshot;
    {
      std::lock_guard<std::mutex> lock(hb_mutex_);
      hb_next_connect_ = -absl::InfiniteDuration();
      snapshot = HeartbeatIdentity();
    }
    if (snapshot.ok()) {
      std::map<std::string, double> seen;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        seen = IngestHeartbeats(snapshot->workers, asked);
      }
      if (!closing.baseline_taken) {
        if (asked >= end_ns) {
          baseline = std::move(seen);
          closing.baseline_taken = true;
        }
      } else {
        closing.waiting.clear();
        for (const auto& [worker, before] : baseline) {
          auto now = seen.find(worker);
          if (now == seen.end() || closing.last_seen.count(worker) > 0) continue;  // left, done
          if (now->second > before) {
            closing.last_seen[worker] = now->second;
          } else {
            closing.waiting.push_back(worker);
          }
        }
        if (closing.waiting.empty()) break;
      }
    }
    if (dask::DeadlineNow() >= deadline) break;
    absl::SleepFor(absl::Milliseconds(std::clamp(period * 100, 10.0, 50.0)));
  }
  return closing;
}

std::optional<dask::CumulativeExecuting> DaskMetricsBackend::ReadEndCumulative(bool have_start,
                                                                               std::string& error) {
  if (!options_.recover_lost_digests) {
    error = "recovery turned off";
    return std::nullopt;
  }
  if (!have_start) return std::nullopt;
  if (EndRanOut()) {
    error = "the end of tracking ran out of time";
    return std::nullopt;
  }
  absl::StatusOr<dask::CumulativeExecuting> c = ReadCumulative();
  if (!c.ok()) {
    error = std::string(c.status().message());
    return std::nullopt;
  }
  return *std::move(c);
}

void DaskMetricsBackend::AddMeasurementWarning(absl::string_view code, std::string message) {
  AddWarning(message);
  v1::Warning w;
  w.set_code(std::string(code));
  w.set_message(std::move(message));
  measurement_warnings_.push_back(std::move(w));
}

void DaskMetricsBackend::RecoverOrWarnLostDigests(
    const backends_internal::SpanWindow& window, SpanState& span, bool closing_missed,
    const std::optional<dask::CumulativeExecuting>& start_cumulative,
    const std::optional<dask::CumulativeExecuting>& end_cumulative,
    const std::string& cumulative_error) {
  int seen_heartbeats = 0, missed = 0;
  dask::DigestTotals seen;
  for (const HeartbeatEvent& e : heartbeats_) {
    if (!InSpan(window, span, e)) continue;
    ++seen_heartbeats;
    missed += e.missed_before;
    for (const dask::DigestEntry& d : e.digests) {
      seen[{d.context, d.task_prefix, d.activity, d.unit, e.worker}] += d.value;
    }
  }
  if (end_cumulative.has_value() && (missed > 0 || closing_missed)) {
    dask::Recovery r = dask::RecoverLostDigests(seen, *start_cumulative, *end_cumulative);
    span.recovered = r.added;
    if (r.recovered_seconds <= 0) return;
    std::vector<std::string> by_prefix;
    for (const auto& [prefix, seconds] : r.recovered_by_prefix) {
      by_prefix.push_back(absl::StrFormat("%s %.3f s", prefix, seconds));
    }
    AddMeasurementWarning(
        "dask_fine_metrics_recovered",
        absl::StrFormat(
            "Dask fine metrics of span '%s': %d worker heartbeat(s) were missed (%d seen); "
            "%.3f s of the %.3f s of task execution (%.1f %%) were restored from the workers' "
            "cumulative totals (get_cluster_state): %s. Their split over activities "
            "(thread-cpu, ...) is estimated from the heartbeats seen%s; other contexts "
            "(get-data, gather-dep) of the missed heartbeats stay missing.",
            window.name, missed, seen_heartbeats, r.recovered_seconds, r.cumulative_seconds,
            r.cumulative_seconds > 0 ? 100 * r.recovered_seconds / r.cumulative_seconds : 0,
            absl::StrJoin(by_prefix, ", "),
            r.unattributed_seconds > 0
                ? absl::StrFormat(" (%.3f s with no split seen: activity 'unattributed')",
                                  r.unattributed_seconds)
                : ""));
  } else if (missed > 0) {
    AddMeasurementWarning(
        "dask_fine_metrics_lost",
        absl::StrFormat(
            "Dask fine metrics of span '%s' undercount: %d of %d worker heartbeats were missed "
            "(about %.1f %% of the digests lost) and could not be restored (%s).",
            window.name, missed, missed + seen_heartbeats,
            100.0 * missed / (missed + seen_heartbeats),
            cumulative_error.empty() ? "no cumulative totals" : cumulative_error));
  }
}

absl::StatusOr<v1::Span> DaskMetricsBackend::GetSpanMetrics(const SpanId& id) {
  absl::StatusOr<backends_internal::SpanWindow> window = spans_.Ended(id);
  if (!window.ok()) return window.status();
  bool finalize = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finalize = tracking_ && !span_state_.at(id).finalized;
  }
  if (finalize) FinalizeSpan(id);
  std::lock_guard<std::mutex> lock(mutex_);
  dask::StreamGroups stream_groups;  // of the tasks that ran in the window
  const dask::DigestTotals totals = SpanTotals(*window, span_state_.at(id), stream_groups);
  v1::Span span;
  span.set_name(window->name);
  span.set_id(id);
  span.set_start_unix_ns(absl::ToUnixNanos(window->start));
  span.set_end_unix_ns(absl::ToUnixNanos(window->end));
  // std::map keeps the output sorted.
  for (const auto& [key, value] : totals) {
    v1::FineMetric* m = span.add_metrics();
    m->set_context(std::get<0>(key));
    m->set_task_prefix(std::get<1>(key));
    m->set_activity(std::get<2>(key));
    m->set_unit(std::get<3>(key));
    m->set_worker(std::get<4>(key));
    m->set_value(value);
  }
  span.set_kind(v1::SPAN_KIND_COLLECT_WINDOW);
  NestWorkloadSpans(span, stream_groups);
  return span;
}

dask::DigestTotals DaskMetricsBackend::SpanTotals(const backends_internal::SpanWindow& window,
                                                  const SpanState& state,
                                                  dask::StreamGroups& stream_groups) const {
  const double t0 = absl::ToUnixNanos(window.start) / 1e9;
  const double t1 = absl::ToUnixNanos(window.end) / 1e9;
  // (context, prefix, activity, unit, worker) -> value.
  dask::DigestTotals totals;
  for (const dask::TaskRecord& r : records_) {
    for (const dask::StartStop& ss : r.startstops) {
      const double overlap =
          std::min(ss.stop_unix_seconds, t1) - std::max(ss.start_unix_seconds, t0);
      if (overlap > 0) {
        totals[{"task-stream", r.prefix, ss.action, "seconds", r.worker}] += overlap;
        stream_groups[r.prefix].insert(dask::TaskGroupOfKey(r.key));
      }
    }
    if (r.last_stop_unix_seconds >= t0 && r.last_stop_unix_seconds <= t1) {
      const bool erred = r.status == "error";
      totals[{"task-stream", r.prefix, erred ? "erred-tasks" : "tasks", "count", r.worker}] += 1;
      if (!erred) totals[{"task-stream", r.prefix, "output", "bytes", r.worker}] += r.nbytes;
    }
  }
  for (const HeartbeatEvent& e : heartbeats_) {
    if (!InSpan(window, state, e)) continue;
    for (const dask::DigestEntry& d : e.digests) {
      totals[{d.context, d.task_prefix, d.activity, d.unit, e.worker}] += d.value;
    }
  }
  for (const auto& [key, value] : state.recovered) totals[key] += value;
  return totals;
}

void DaskMetricsBackend::NestWorkloadSpans(v1::Span& span,
                                           const dask::StreamGroups& stream_groups) {
  std::map<std::string, std::vector<std::string>> shared;  // ambiguous prefix -> span names
  for (v1::Span& workload : workload_spans_.Attribute(span, stream_groups)) {
    for (const std::string& prefix : workload.ambiguous_task_prefixes()) {
      shared[prefix].push_back(workload.name_path_size() > 0
                                   ? absl::StrJoin(workload.name_path(), "/")
                                   : workload.name());
    }
    *span.add_workload_spans() = std::move(workload);
  }
  // A span shorter than the poll interval: its groups were never polled, but its tasks are in
  // the task stream. Its prefix's figures in the spans seen include them (marked ambiguous).
  const dask::StreamGroups unseen = workload_spans_.UnseenGroups(stream_groups);
  if (!unseen.empty()) {
    std::vector<std::string> parts;
    for (const auto& [prefix, groups] : unseen) {
      std::vector<std::string> listed(groups.begin(), groups.end());
      if (listed.size() > 5) {
        listed.resize(5);
        listed.push_back("...");
      }
      parts.push_back(absl::StrCat(
          prefix, " (task group(s) ", absl::StrJoin(listed, ", "), "; spans giving it: ",
          shared.count(prefix) > 0 ? absl::StrJoin(shared[prefix], ", ") : std::string("none"),
          ")"));
    }
    AddMeasurementWarning(
        "dask_span_missed",
        absl::StrCat(
            "A Dask span shorter than the poll interval was probably missed: tasks of these "
            "prefixes ran in task groups no poll saw, so each span given the prefix also holds "
            "those tasks (marked ambiguous): ",
            absl::StrJoin(parts, "; "), ". A shorter --interval sees shorter spans."));
    for (const auto& [prefix, groups] : unseen) shared.erase(prefix);  // said once, here
  }
  if (!shared.empty()) {
    std::vector<std::string> parts;
    for (const auto& [prefix, names] : shared) {
      parts.push_back(absl::StrCat(prefix, " (", absl::StrJoin(names, ", "), ")"));
    }
    AddWarning(absl::StrCat(
        "Task prefixes that ran in several Dask spans cannot be split between them without "
        "pickle: each of those spans shows the prefix's totals (marked ambiguous): ",
        absl::StrJoin(parts, "; "), "."));
  }
}

}  // namespace roastcoffea
