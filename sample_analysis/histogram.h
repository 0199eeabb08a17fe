// A fixed-binning 1D histogram of event counts, mergeable across chunks.
#ifndef ROASTCOFFEA_SAMPLE_ANALYSIS_HISTOGRAM_H_
#define ROASTCOFFEA_SAMPLE_ANALYSIS_HISTOGRAM_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace roastcoffea {
namespace sample_analysis {

// Not thread-safe; merge per-thread histograms instead of sharing one. Fill is O(1).
class Histogram {
 public:
  // An empty histogram (no bins): the identity of Merge, it adopts the other's binning.
  Histogram() = default;

  // `bins` equal bins over [low, high). InvalidArgument unless bins > 0 and low < high (finite).
  static absl::StatusOr<Histogram> Create(int bins, double low, double high);

  // A histogram with these counts (e.g. one sent between processes). InvalidArgument as Create,
  // or for a negative count. An empty `counts` gives the empty histogram.
  static absl::StatusOr<Histogram> FromCounts(double low, double high, std::vector<int64_t> counts,
                                              int64_t underflow, int64_t overflow);

  // Adds one count: to its bin, to underflow (x < low) or to overflow (x >= high or NaN).
  void Fill(double x);

  // Adds other's counts. InvalidArgument (naming both binnings) if the binnings differ, unless
  // one of the two is empty.
  absl::Status Merge(const Histogram& other);
  // Merge that throws std::invalid_argument on a binning mismatch.
  Histogram& operator+=(const Histogram& other);

  bool empty_binning() const { return counts_.empty(); }
  int bins() const { return static_cast<int>(counts_.size()); }
  double low() const { return low_; }
  double high() const { return high_; }
  double bin_width() const { return (high_ - low_) / bins(); }
  double BinLowEdge(int bin) const { return low_ + bin * bin_width(); }
  const std::vector<int64_t>& counts() const { return counts_; }
  int64_t underflow() const { return underflow_; }
  int64_t overflow() const { return overflow_; }
  // All fills, including under- and overflow.
  int64_t entries() const;

  friend bool operator==(const Histogram& a, const Histogram& b) {
    return a.low_ == b.low_ && a.high_ == b.high_ && a.counts_ == b.counts_ &&
           a.underflow_ == b.underflow_ && a.overflow_ == b.overflow_;
  }

 private:
  Histogram(int bins, double low, double high) : low_(low), high_(high), counts_(bins, 0) {}

  double low_ = 0;
  double high_ = 0;
  std::vector<int64_t> counts_;
  int64_t underflow_ = 0;
  int64_t overflow_ = 0;
};

}  // namespace sample_analysis
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_SAMPLE_ANALYSIS_HISTOGRAM_H_
