#include "stats/log_histogram.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace stats {

void LogHistogram::Buckets::Add(int32_t index, int64_t n) {
  if (counts.empty()) {
    offset = index;
    counts.push_back(0);
  } else if (index < offset) {
    counts.insert(counts.begin(), static_cast<size_t>(offset - index), 0);
    offset = index;
  } else if (index - offset >= static_cast<int64_t>(counts.size())) {
    counts.resize(static_cast<size_t>(index - offset) + 1, 0);
  }
  counts[static_cast<size_t>(index - offset)] += n;
}

int64_t LogHistogram::Buckets::Total() const {
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  return total;
}

bool LogHistogram::Buckets::operator==(const Buckets& other) const {
  // Compare as sparse maps: leading/trailing zeros and offsets may differ.
  auto trimmed = [](const Buckets& b, int32_t* first, size_t* begin, size_t* end) {
    *begin = 0;
    *end = b.counts.size();
    while (*begin < *end && b.counts[*begin] == 0) ++*begin;
    while (*end > *begin && b.counts[*end - 1] == 0) --*end;
    *first = b.offset + static_cast<int32_t>(*begin);
  };
  int32_t first_a, first_b;
  size_t begin_a, end_a, begin_b, end_b;
  trimmed(*this, &first_a, &begin_a, &end_a);
  trimmed(other, &first_b, &begin_b, &end_b);
  if (end_a - begin_a != end_b - begin_b) return false;
  if (end_a == begin_a) return true;
  return first_a == first_b && std::equal(counts.begin() + begin_a, counts.begin() + end_a,
                                          other.counts.begin() + begin_b);
}

LogHistogram::LogHistogram(const LogHistogramOptions& options)
    : relative_accuracy_(options.relative_accuracy > 0 && options.relative_accuracy < 0.5
                             ? options.relative_accuracy
                             : 0.01),
      gamma_((1 + relative_accuracy_) / (1 - relative_accuracy_)),
      inverse_log_gamma_(1.0 / std::log(gamma_)) {}

int32_t LogHistogram::IndexOf(double magnitude) const {
  // ceil(log_gamma(x)); |index| <= 1100 / log10(gamma) stays far inside int32 for doubles.
  return static_cast<int32_t>(std::ceil(std::log(magnitude) * inverse_log_gamma_));
}

double LogHistogram::ValueOf(int32_t index) const {
  return 2 * std::pow(gamma_, index) / (gamma_ + 1);
}

void LogHistogram::Add(double value) {
  if (!std::isfinite(value)) {
    ++nonfinite_count_;
    return;
  }
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  ++count_;
  sum_ += value;
  if (value > 0) {
    positive_.Add(IndexOf(value), 1);
  } else if (value < 0) {
    negative_.Add(IndexOf(-value), 1);
  } else {
    ++zero_count_;
  }
}

absl::Status LogHistogram::Merge(const LogHistogram& other) {
  if (other.relative_accuracy_ != relative_accuracy_) {
    return absl::InvalidArgumentError(
        absl::StrCat("LogHistogram::Merge: relative_accuracy ", other.relative_accuracy_,
                     " of the other histogram differs from this one's ", relative_accuracy_));
  }
  for (size_t i = 0; i < other.positive_.counts.size(); ++i) {
    if (other.positive_.counts[i] != 0) {
      positive_.Add(other.positive_.offset + static_cast<int32_t>(i), other.positive_.counts[i]);
    }
  }
  for (size_t i = 0; i < other.negative_.counts.size(); ++i) {
    if (other.negative_.counts[i] != 0) {
      negative_.Add(other.negative_.offset + static_cast<int32_t>(i), other.negative_.counts[i]);
    }
  }
  if (other.count_ > 0) {
    min_ = count_ > 0 ? std::min(min_, other.min_) : other.min_;
    max_ = count_ > 0 ? std::max(max_, other.max_) : other.max_;
  }
  count_ += other.count_;
  sum_ += other.sum_;
  zero_count_ += other.zero_count_;
  nonfinite_count_ += other.nonfinite_count_;
  return absl::OkStatus();
}

double LogHistogram::Quantile(double q) const {
  if (count_ == 0) return 0.0;
  if (!(q > 0)) return min_;  // also NaN
  if (q >= 1) return max_;
  const int64_t rank = static_cast<int64_t>(std::floor(q * static_cast<double>(count_ - 1)));
  int64_t seen = 0;
  double value = max_;
  bool found = false;
  // Ascending order: negatives by decreasing magnitude, zeros, positives.
  for (size_t i = negative_.counts.size(); i-- > 0 && !found;) {
    seen += negative_.counts[i];
    if (seen > rank) {
      value = -ValueOf(negative_.offset + static_cast<int32_t>(i));
      found = true;
    }
  }
  if (!found) {
    seen += zero_count_;
    if (seen > rank) {
      value = 0;
      found = true;
    }
  }
  for (size_t i = 0; i < positive_.counts.size() && !found; ++i) {
    seen += positive_.counts[i];
    if (seen > rank) {
      value = ValueOf(positive_.offset + static_cast<int32_t>(i));
      found = true;
    }
  }
  return std::clamp(value, min_, max_);
}

bool LogHistogram::operator==(const LogHistogram& other) const {
  return relative_accuracy_ == other.relative_accuracy_ && count_ == other.count_ &&
         sum_ == other.sum_ && min() == other.min() && max() == other.max() &&
         zero_count_ == other.zero_count_ && nonfinite_count_ == other.nonfinite_count_ &&
         positive_ == other.positive_ && negative_ == other.negative_;
}

}  // namespace stats
}  // namespace roastcoffea
