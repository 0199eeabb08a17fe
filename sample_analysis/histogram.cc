#include "sample_analysis/histogram.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace sample_analysis {

absl::StatusOr<Histogram> Histogram::Create(int bins, double low, double high) {
  if (bins <= 0 || !std::isfinite(low) || !std::isfinite(high) || !(low < high)) {
    return absl::InvalidArgumentError(
        absl::StrCat("histogram needs bins > 0 and finite low < high, got ", bins, " bins over [",
                     low, ", ", high, ")"));
  }
  return Histogram(bins, low, high);
}

absl::StatusOr<Histogram> Histogram::FromCounts(double low, double high,
                                                std::vector<int64_t> counts, int64_t underflow,
                                                int64_t overflow) {
  if (counts.empty() && underflow == 0 && overflow == 0) return Histogram();
  absl::StatusOr<Histogram> histogram = Create(static_cast<int>(counts.size()), low, high);
  if (!histogram.ok()) return histogram.status();
  bool negative = underflow < 0 || overflow < 0;
  for (int64_t count : counts) negative = negative || count < 0;
  if (negative) return absl::InvalidArgumentError("histogram counts must not be negative");
  histogram->counts_ = std::move(counts);
  histogram->underflow_ = underflow;
  histogram->overflow_ = overflow;
  return histogram;
}

void Histogram::Fill(double x) {
  if (x < low_) {
    ++underflow_;
    return;
  }
  if (!(x < high_)) {  // also NaN
    ++overflow_;
    return;
  }
  int bin = static_cast<int>((x - low_) / (high_ - low_) * bins());
  if (bin >= bins()) bin = bins() - 1;  // rounding just below high
  ++counts_[bin];
}

int64_t Histogram::entries() const {
  int64_t total = underflow_ + overflow_;
  for (int64_t c : counts_) total += c;
  return total;
}

absl::Status Histogram::Merge(const Histogram& other) {
  if (other.empty_binning()) return absl::OkStatus();
  if (empty_binning()) {
    *this = other;
    return absl::OkStatus();
  }
  if (other.bins() != bins() || other.low_ != low_ || other.high_ != high_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot merge histograms with different binnings: ", bins(), " bins over [", low_, ", ",
        high_, ") and ", other.bins(), " bins over [", other.low_, ", ", other.high_, ")"));
  }
  for (int i = 0; i < bins(); ++i) counts_[i] += other.counts_[i];
  underflow_ += other.underflow_;
  overflow_ += other.overflow_;
  return absl::OkStatus();
}

Histogram& Histogram::operator+=(const Histogram& other) {
  if (absl::Status s = Merge(other); !s.ok()) throw std::invalid_argument(std::string(s.message()));
  return *this;
}

}  // namespace sample_analysis
}  // namespace roastcoffea
