// A mergeable log-bucket histogram (DDSketch-style) with a stated relative error.
//
// Values are counted in buckets whose bounds grow geometrically by gamma = (1 + a) / (1 - a),
// a = relative_accuracy (default 0.01). A bucket stands for 2 * gamma^i / (gamma + 1), which is
// within a relative error a of every value in the bucket. Hence Quantile(q) is within relative
// error a of the exact "lower" sample quantile x[floor(q * (n - 1))] (x sorted ascending).
// Negative values use mirrored buckets; exact zeros have their own counter. count, sum, min and
// max are exact (sum is the floating-point sum in insertion order).
//
// Non-finite values (NaN, +-inf) are not recorded; they are counted in nonfinite_count().
// Memory: one int64 per bucket between the smallest and largest index seen (dense, grows on
// demand): about 116 buckets per decade of magnitude at a = 0.01.
//
// Thread-safety: not synchronised. Use one histogram per thread and Merge them, or guard it.
// Cost: Add is O(1) amortised (one std::log); Merge is O(buckets); Quantile O(buckets).
#ifndef ROASTCOFFEA_STATS_LOG_HISTOGRAM_H_
#define ROASTCOFFEA_STATS_LOG_HISTOGRAM_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"

namespace roastcoffea {
namespace stats {

struct LogHistogramOptions {
  // Relative error of Quantile; must be in (0, 0.5). Histograms merge only with equal values.
  double relative_accuracy = 0.01;
};

class LogHistogram {
 public:
  LogHistogram() : LogHistogram(LogHistogramOptions()) {}
  // An invalid relative_accuracy (not in (0, 0.5), or NaN) is replaced by the default 0.01;
  // check with relative_accuracy().
  explicit LogHistogram(const LogHistogramOptions& options);

  // Records one value (see the class comment for non-finite values).
  void Add(double value);
  // Adds everything `other` recorded. InvalidArgument (naming both accuracies) when the
  // relative accuracies differ; `this` is then unchanged.
  absl::Status Merge(const LogHistogram& other);

  // Approximate quantile q in [0, 1] (clamped) within relative_accuracy() of the exact lower
  // sample quantile, and always within [min(), max()]. 0 for an empty histogram.
  double Quantile(double q) const;

  int64_t count() const { return count_; }
  double sum() const { return sum_; }
  double min() const { return count_ > 0 ? min_ : 0.0; }  // 0 when empty
  double max() const { return count_ > 0 ? max_ : 0.0; }  // 0 when empty
  double mean() const { return count_ > 0 ? sum_ / static_cast<double>(count_) : 0.0; }
  int64_t zero_count() const { return zero_count_; }
  int64_t nonfinite_count() const { return nonfinite_count_; }
  double relative_accuracy() const { return relative_accuracy_; }

  // Equal recorded contents (same accuracy, counts per bucket, count/sum/min/max).
  bool operator==(const LogHistogram& other) const;
  bool operator!=(const LogHistogram& other) const { return !(*this == other); }

 private:
  // Counts of one sign; index i covers (gamma^(i-1), gamma^i].
  struct Buckets {
    int32_t offset = 0;            // index of counts[0]
    std::vector<int64_t> counts;  // dense from offset
    void Add(int32_t index, int64_t n);
    int64_t Total() const;
    bool operator==(const Buckets& other) const;
  };
  int32_t IndexOf(double magnitude) const;
  double ValueOf(int32_t index) const;

  double relative_accuracy_;
  double gamma_;
  double inverse_log_gamma_;
  Buckets positive_;
  Buckets negative_;  // by magnitude
  int64_t zero_count_ = 0;
  int64_t nonfinite_count_ = 0;
  int64_t count_ = 0;
  double sum_ = 0;
  double min_ = 0;
  double max_ = 0;
};

}  // namespace stats
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_STATS_LOG_HISTOGRAM_H_
