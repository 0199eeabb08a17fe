#include "backends/dask/digest_recovery.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace roastcoffea::dask {

double HeartbeatPeriodSeconds(int workers) {
  if (workers <= 10) return 0.5;
  if (workers < 50) return 1;
  if (workers < 200) return 2;
  return workers / 200.0 + 1;
}

int MissedHeartbeats(double gap_seconds, double period_seconds) {
  if (!(period_seconds > 0) || !(gap_seconds >= 1.5 * period_seconds)) return 0;
  return std::max(1, static_cast<int>(std::lround(gap_seconds / period_seconds)) - 1);
}

Recovery RecoverLostDigests(const DigestTotals& seen, const CumulativeExecuting& start,
                            const CumulativeExecuting& end, const RecoveryOptions& options) {
  // Seen execute seconds per (worker, prefix), and per prefix per activity (the fallback split).
  std::map<std::pair<std::string, std::string>, double> seen_seconds;
  std::map<std::string, std::map<std::string, double>> prefix_split;
  for (const auto& [key, value] : seen) {
    const auto& [context, prefix, activity, unit, worker] = key;
    if (context != "execute" || unit != "seconds" || prefix.empty()) continue;
    seen_seconds[{worker, prefix}] += value;
    prefix_split[prefix][activity] += value;
  }
  Recovery out;
  for (const auto& [worker, prefixes] : end) {
    const auto before = start.find(worker);
    for (const auto& [prefix, total] : prefixes) {
      double delta = total;
      if (before != start.end()) {
        if (auto p = before->second.find(prefix); p != before->second.end()) delta -= p->second;
      }
      if (!(delta > 0)) continue;
      out.cumulative_seconds += delta;
      const double have = seen_seconds.count({worker, prefix}) ? seen_seconds[{worker, prefix}] : 0;
      const double lost = delta - have;
      if (lost <=
          std::max(options.relative_tolerance * delta, options.absolute_tolerance_seconds)) {
        continue;
      }
      out.recovered_seconds += lost;
      out.recovered_by_prefix[prefix] += lost;
      if (have > 0) {
        // The missed heartbeats most likely split like the seen ones of the same worker and
        // prefix; counts and bytes (memory-read, ...) scale alike.
        const double factor = lost / have;
        for (const auto& [key, value] : seen) {
          if (std::get<0>(key) == "execute" && std::get<1>(key) == prefix &&
              std::get<4>(key) == worker) {
            out.added[key] += value * factor;
          }
        }
        continue;
      }
      ++out.estimated_splits;
      double split_total = 0;
      if (auto s = prefix_split.find(prefix); s != prefix_split.end()) {
        for (const auto& [activity, value] : s->second) split_total += value;
      }
      if (split_total > 0) {
        for (const auto& [activity, value] : prefix_split[prefix]) {
          out.added[{"execute", prefix, activity, "seconds", worker}] += lost * value / split_total;
        }
      } else {
        out.added[{"execute", prefix, "unattributed", "seconds", worker}] += lost;
        out.unattributed_seconds += lost;
      }
    }
  }
  return out;
}

}  // namespace roastcoffea::dask
