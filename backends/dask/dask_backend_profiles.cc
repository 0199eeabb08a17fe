// DaskMetricsBackend: the workers' profiles at the end of tracking (see dask_backend.h).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/dask/dask_backend.h"
#include "backends/dask/profile_merge.h"

namespace roastcoffea {

absl::StatusOr<std::map<std::string, v1::Profile>> DaskMetricsBackend::FetchProfileSet(
    const std::vector<std::string>& workers, const std::string& prefix, int64_t start_ns,
    int64_t stop_ns, absl::Time deadline) {
  auto call = [&](const std::vector<std::string>& asked)
      -> absl::StatusOr<std::vector<dask::WorkerProfileTree>> {
    dask::Value list = dask::Value::Array();
    for (const std::string& w : asked) list.Append(dask::Value::Str(w));
    dask::Value args = dask::Value::Map();
    args.Insert(dask::Value::Str("workers"), std::move(list));
    args.Insert(dask::Value::Str("merge_workers"), dask::Value::Bool(false));
    args.Insert(dask::Value::Str("start"), dask::Value::Float(start_ns / 1e9));
    args.Insert(dask::Value::Str("stop"), dask::Value::Float(stop_ns / 1e9));
    if (!prefix.empty()) args.Insert(dask::Value::Str("key"), dask::Value::Str(prefix));
    absl::StatusOr<dask::Value> reply = comm_->Call("profile", args, deadline);
    if (!reply.ok()) return reply.status();
    // Dask's counts as sent: restored in FetchProfiles, where the per-prefix trees are known.
    dask::ProfileConversionOptions raw = options_.profile_conversion;
    raw.restore_innermost_counts = false;
    return dask::ConvertPerWorkerProfiles(*reply, raw);
  };
  std::map<std::string, v1::Profile> out;
  absl::StatusOr<std::vector<dask::WorkerProfileTree>> all = call(workers);
  if (!all.ok()) return all.status();
  if (all->size() == workers.size()) {
    for (dask::WorkerProfileTree& t : *all) out[t.worker] = std::move(t.profile);
    return out;
  }
  // Fewer trees than workers: the scheduler drops the workers that failed to answer and then
  // zips the remaining trees with the first addresses (get_profile, distributed 2022.12), so
  // the keys cannot be trusted. Each worker alone is unambiguous: {address: tree} or {}.
  std::vector<std::string> missing;
  for (size_t i = 0; i < workers.size(); ++i) {
    const std::string& w = workers[i];
    if (dask::DeadlineNow() >= deadline) {
      std::lock_guard<std::mutex> lock(mutex_);
      AddWarning(absl::StrCat("The profiles",
                              prefix.empty() ? "" : " of task prefix '" + prefix + "'", " of ",
                              workers.size() - i, " of ", workers.size(),
                              " Dask workers were not read: the profile fetch ran out of its ",
                              absl::FormatDuration(options_.profile_fetch_timeout), "."));
      break;
    }
    absl::StatusOr<std::vector<dask::WorkerProfileTree>> one = call({w});
    if (!one.ok()) {
      if (comm_->broken()) return one.status();
      std::lock_guard<std::mutex> lock(mutex_);
      AddWarning(absl::StrCat("The profile of Dask worker ", w,
                              " was not read: ", one.status().message()));
      continue;
    }
    if (one->size() == 1 && (*one)[0].worker == w) {
      out[w] = std::move((*one)[0].profile);
    } else {
      missing.push_back(w);
    }
  }
  if (!missing.empty()) {
    std::lock_guard<std::mutex> lock(mutex_);
    AddWarning(absl::StrCat("No profile", prefix.empty() ? "" : " of task prefix '" + prefix + "'",
                            " from Dask worker(s) ", absl::StrJoin(missing, ", "),
                            " (it failed to answer the scheduler or left)."));
  }
  return out;
}

std::vector<std::string> DaskMetricsBackend::PrefixesSeen(int64_t start_ns, int64_t stop_ns) {
  // The prefixes that matter for a profile: those whose tasks computed longest in the window.
  std::map<std::string, double> compute_seconds;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const double t0 = start_ns / 1e9, t1 = stop_ns / 1e9;
    for (const dask::TaskRecord& r : records_) {
      for (const dask::StartStop& ss : r.startstops) {
        const double overlap =
            std::min(ss.stop_unix_seconds, t1) - std::max(ss.start_unix_seconds, t0);
        if (overlap >= 0) {
          // Every prefix seen counts, even with no compute time (then ranked last).
          double& seconds = compute_seconds[r.prefix];
          if (ss.action == "compute") seconds += overlap;
        }
      }
    }
  }
  std::vector<std::pair<double, std::string>> ranked;
  for (auto& [prefix, seconds] : compute_seconds) ranked.emplace_back(-seconds, prefix);
  std::sort(ranked.begin(), ranked.end());  // longest first, then by name
  const size_t keep =
      std::min(ranked.size(), static_cast<size_t>(std::max(0, options_.max_auto_profile_prefixes)));
  if (keep < ranked.size()) {
    std::lock_guard<std::mutex> lock(mutex_);
    AddWarning(absl::StrCat("Per-prefix profiles were read for the ", keep,
                            " task prefixes with the most compute time of the ", ranked.size(),
                            " seen."));
  }
  std::vector<std::string> prefixes;
  for (size_t i = 0; i < keep; ++i) prefixes.push_back(std::move(ranked[i].second));
  return prefixes;
}

void DaskMetricsBackend::FetchProfiles(int64_t start_ns, int64_t stop_ns) {
  std::vector<std::string> asked;  // workers present at the last poll, in first-seen order
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::string& w : worker_order_) {
      if (present_workers_.count(w) > 0) asked.push_back(w);
    }
  }
  if (asked.empty()) return;
  dask::MsgpackLimits limits = comm_->msgpack_limits();
  limits.max_depth = std::max(limits.max_depth, options_.profile_max_msgpack_depth);
  comm_->set_msgpack_limits(limits);

  std::vector<ProfileSet> sets =
      FetchProfileSets(asked, ProfilePrefixes(start_ns, stop_ns), start_ns, stop_ns);
  RebuildAndRestoreProfiles(sets);
  std::vector<v1::Profile> fetched;
  for (auto& [prefix, set] : sets) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::string& w : asked) {
      auto it = set.find(w);
      if (it == set.end()) continue;
      v1::Profile& p = it->second;
      p.set_worker(w);
      p.set_task_prefix(prefix);
      p.set_sampling_interval_seconds(options_.profile_interval_seconds);
      p.set_start_unix_ns(start_ns);
      p.set_end_unix_ns(stop_ns);
      DescribeProfileWorker(w, p);
      fetched.push_back(std::move(p));
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  profiles_ = std::move(fetched);
}

std::vector<std::string> DaskMetricsBackend::ProfilePrefixes(int64_t start_ns, int64_t stop_ns) {
  std::vector<std::string> prefixes = {""};
  auto add = [&prefixes](std::string prefix) {
    if (std::find(prefixes.begin(), prefixes.end(), prefix) == prefixes.end()) {
      prefixes.push_back(std::move(prefix));
    }
  };
  for (const std::string& prefix : options_.profile_task_prefixes) {
    if (prefix != "*") {
      add(prefix);
      continue;
    }
    for (std::string& seen : PrefixesSeen(start_ns, stop_ns)) add(std::move(seen));
  }
  return prefixes;
}

std::vector<DaskMetricsBackend::ProfileSet> DaskMetricsBackend::FetchProfileSets(
    const std::vector<std::string>& asked, const std::vector<std::string>& prefixes,
    int64_t start_ns, int64_t stop_ns) {
  // One bounded phase: every call below ends by this deadline (or when the run gives up).
  // The end of tracking's deadline (StopTracking) comes first when it is earlier.
  const absl::Time deadline =
      std::min(dask::DeadlineNow() + options_.profile_fetch_timeout, end_deadline());
  auto sets_left = [&prefixes](size_t k) {
    return absl::StrCat("the workers' profiles of ", prefixes.size() - k, " of ", prefixes.size(),
                        " profile sets (all tasks, then one per task prefix) were not read");
  };
  const std::string fetch_ran_out = absl::StrCat(
      "the profile fetch ran out of its ", absl::FormatDuration(options_.profile_fetch_timeout));
  std::vector<ProfileSet> sets;
  for (size_t k = 0; k < prefixes.size(); ++k) {
    const std::string& prefix = prefixes[k];
    if (EndRanOut()) {
      WarnEndCut("the profile fetch", sets_left(k));
      break;
    }
    if (dask::DeadlineNow() >= deadline) {
      std::lock_guard<std::mutex> lock(mutex_);
      std::string sentence = sets_left(k);
      sentence[0] = 'T';
      AddWarning(absl::StrCat(sentence, ": ", fetch_ran_out, "."));
      break;
    }
    absl::StatusOr<std::map<std::string, v1::Profile>> set =
        FetchProfileSet(asked, prefix, start_ns, stop_ns, deadline);
    if (!set.ok() && EndRanOut()) {
      WarnEndCut("the profile fetch", sets_left(k));
      break;
    }
    if (!set.ok()) {
      std::lock_guard<std::mutex> lock(mutex_);
      const bool ran_out =
          absl::IsDeadlineExceeded(set.status()) && dask::DeadlineNow() >= deadline;
      AddWarning(
          absl::StrCat("The workers' profiles",
                       prefix.empty() ? "" : " of task prefix '" + prefix + "'", " were not read: ",
                       ran_out ? absl::StrCat(fetch_ran_out, " (", set.status().message(), ")")
                               : std::string(set.status().message())));
      if (comm_->broken()) break;
      continue;
    }
    sets.emplace_back(prefix, *std::move(set));
  }
  return sets;
}

void DaskMetricsBackend::RebuildAndRestoreProfiles(std::vector<ProfileSet>& sets) const {
  const dask::ProfileConversionOptions& conversion = options_.profile_conversion;
  // The all-tasks tree (prefix "") is rebuilt from the per-prefix ones read with it: restored
  // per prefix instead of under Dask's one frame that runs every task (dask/profile_merge.h).
  if (!sets.empty() && sets.front().first.empty() && sets.size() > 1 &&
      options_.rebuild_whole_worker_profiles) {
    for (auto& [worker, all] : sets.front().second) {
      std::vector<const v1::Profile*> parts;
      for (size_t k = 1; k < sets.size(); ++k) {
        auto it = sets[k].second.find(worker);
        if (it != sets[k].second.end()) parts.push_back(&it->second);
      }
      if (parts.size() + 1 < sets.size()) continue;  // a prefix's tree is missing: keep Dask's
      v1::Profile rebuilt = dask::WholeWorkerFromPrefixes(
          all, parts, conversion.restore_innermost_counts, conversion.estimate_innermost_counts);
      rebuilt.set_source(all.source());
      all = std::move(rebuilt);
    }
  }
  if (!conversion.restore_innermost_counts) return;
  for (auto& [prefix, set] : sets) {
    for (auto& [worker, tree] : set) {
      if (!tree.rebuilt_from_task_prefixes()) {
        dask::RestoreInnermostCounts(tree, conversion.estimate_innermost_counts);
      }
    }
  }
}

void DaskMetricsBackend::DescribeProfileWorker(const std::string& worker,
                                               v1::Profile& profile) const {
  // What the last identity said about the worker.
  auto track = workers_.find(worker);
  if (track == workers_.end()) return;
  profile.set_host(track->second.host);
  if (!track->second.sampled) return;
  profile.set_worker_name(track->second.name);
  profile.set_threads(static_cast<int32_t>(std::lround(track->second.nthreads)));
  profile.set_memory_limit_bytes(std::llround(track->second.memory_limit_bytes));
}

std::vector<v1::Profile> DaskMetricsBackend::TakeProfiles(const ChunkTable& /*chunks*/) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<v1::Profile> out;
  out.swap(profiles_);
  return out;
}

}  // namespace roastcoffea
