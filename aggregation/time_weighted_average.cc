#include "aggregation/time_weighted_average.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace roastcoffea {
namespace aggregation_internal {
namespace {

// Seconds from `earlier` to `later` (later >= earlier). Unsigned arithmetic keeps the
// nanosecond difference exact and free of signed overflow for any pair of int64 instants.
double SecondsBetween(int64_t earlier, int64_t later) {
  const uint64_t nanos = static_cast<uint64_t>(later) - static_cast<uint64_t>(earlier);
  return static_cast<double>(nanos) * 1e-9;
}

}  // namespace

double TimeWeightedAverage(std::vector<TimedSample> samples) {
  if (samples.empty()) return 0.0;
  if (samples.size() == 1) return samples.front().value;
  // Sorting by value too makes samples that share a timestamp order-independent.
  const auto by_time_then_value = [](const TimedSample& a, const TimedSample& b) {
    if (a.time_unix_ns != b.time_unix_ns) return a.time_unix_ns < b.time_unix_ns;
    return a.value < b.value;
  };
  // Series usually arrive in time order: check (O(n)) before sorting (O(n log n)).
  if (!std::is_sorted(samples.begin(), samples.end(), by_time_then_value)) {
    std::sort(samples.begin(), samples.end(), by_time_then_value);
  }
  const double window = SecondsBetween(samples.front().time_unix_ns, samples.back().time_unix_ns);
  if (window <= 0) {
    // Documented error of the original (reference §2.2, §6.15): a zero-length window divides by
    // zero there (nan). All samples are at one instant, so their mean is the honest average.
    double sum = 0;
    for (const TimedSample& s : samples) sum += s.value;
    return sum / static_cast<double>(samples.size());
  }
  double area = 0;
  for (size_t i = 0; i + 1 < samples.size(); ++i) {
    const double dt = SecondsBetween(samples[i].time_unix_ns, samples[i + 1].time_unix_ns);
    area += (samples[i].value + samples[i + 1].value) / 2 * dt;
  }
  return area / window;
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
