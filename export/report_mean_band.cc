#include "export/report_mean_band.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "export/report_gantt.h"
#include "export/report_plots.h"

namespace roastcoffea {
namespace export_internal {
namespace {

// Mean and min-max (or the sum) across the series at every instant any of them has: a STEP
// series counts with the value it holds from its first to its last point, a SAMPLED one at its
// own points. The instants are one sorted vector and the figures running totals per instant,
// added in series order. For at most kMaxLinePoints instants (MeanBandInBins above that).
LineSeries MeanBandAtInstants(const std::vector<LineSeries>& series, bool sum) {
  std::vector<double> xs;
  for (const LineSeries& s : series) xs.insert(xs.end(), s.x.begin(), s.x.end());
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  std::vector<double> total(xs.size(), 0.0), low(xs.size()), high(xs.size());
  std::vector<uint32_t> count(xs.size(), 0);
  const auto add = [&](size_t at, double y) {
    if (!std::isfinite(y)) return;
    total[at] += y;
    low[at] = count[at] == 0 ? y : std::min(low[at], y);
    high[at] = count[at] == 0 ? y : std::max(high[at], y);
    ++count[at];
  };
  const auto index_of = [&xs](double x) {
    return static_cast<size_t>(std::lower_bound(xs.begin(), xs.end(), x) - xs.begin());
  };
  bool all_step = true;
  for (const LineSeries& s : series) {
    if (s.x.empty()) continue;
    if (!s.step) {
      all_step = false;
      // A binary search per point: walking forward would cross every other worker's instants.
      for (size_t i = 0; i < s.x.size(); ++i) add(index_of(s.x[i]), s.y[i]);
      continue;
    }
    size_t k = 0;
    for (size_t at = index_of(s.x.front()); at < xs.size() && xs[at] <= s.x.back(); ++at) {
      while (k < s.x.size() && s.x[k] <= xs[at]) ++k;
      add(at, s.y[k - 1]);
    }
  }
  LineSeries out;
  out.name = sum ? "Sum over workers" : "Mean";
  out.band_name = "Min-Max Range";
  out.step = all_step;
  out.fill = sum;
  for (size_t at = 0; at < xs.size(); ++at) {
    if (count[at] == 0) continue;
    out.x.push_back(xs[at]);
    out.y.push_back(sum ? total[at] : total[at] / static_cast<double>(count[at]));
    if (sum) continue;
    out.band_low.push_back(low[at]);
    out.band_high.push_back(high[at]);
  }
  return out;
}

// More than kMaxLinePoints distinct instants across the series (counting stops there).
bool ManyInstants(const std::vector<LineSeries>& series) {
  absl::flat_hash_set<double> instants;
  for (const LineSeries& s : series) {
    for (double x : s.x) {
      instants.insert(x);
      if (instants.size() > kMaxLinePoints) return true;
    }
  }
  return false;
}

// Per time bin, the figures of the series that have values in it: the sum of their means
// there, their count, the lowest and the highest value. One series is added at a time, its
// bins in time order.
class SeriesBins {
 public:
  // `band`: the lows and highs are wanted (a mean), not only the totals (a sum).
  SeriesBins(size_t bins, bool band)
      : total(bins, 0.0), low(bins), high(bins), count(bins, 0), band_(band) {
    if (!band) held_total_.assign(bins + 1, 0.0), held_count_.assign(bins + 1, 0);
  }

  bool band() const { return band_; }

  // Without a band: the series holds `y` over the whole of bins [from, to). Added as two
  // running differences, not bin by bin (10^4 workers spanning 2,000 bins each).
  void AddHeld(size_t from, size_t to, double y) {
    if (!std::isfinite(y) || from >= to) return;
    held_total_[from] += y;
    held_total_[to] -= y;
    ++held_count_[from];
    --held_count_[to];
  }

  // Ends the last series and adds the held values to the totals.
  void Finish() {
    Close();
    double held = 0;
    int64_t holders = 0;
    for (size_t bin = 0; bin + 1 < held_total_.size(); ++bin) {
      held += held_total_[bin];
      holders += held_count_[bin];
      if (holders == 0) continue;
      total[bin] += held;
      count[bin] += static_cast<uint32_t>(holders);
    }
  }

  // The series holds `y` for `seconds` of `bin` (0: a sample at an instant).
  void Add(size_t bin, double y, double seconds) {
    if (!std::isfinite(y)) return;
    if (bin != bin_) Close();
    bin_ = bin;
    low_ = points_ == 0 ? y : std::min(low_, y);
    high_ = points_ == 0 ? y : std::max(high_, y);
    ++points_;
    sum_ += y;
    weighted_ += y * seconds;
    seconds_ += seconds;
  }

  // Ends the series' current bin: its mean there is time-weighted when it held values over
  // time (STEP), else the mean of its samples.
  void Close() {
    if (points_ > 0) {
      const double mean = seconds_ > 0 ? weighted_ / seconds_ : sum_ / static_cast<double>(points_);
      total[bin_] += mean;
      low[bin_] = count[bin_] == 0 ? low_ : std::min(low[bin_], low_);
      high[bin_] = count[bin_] == 0 ? high_ : std::max(high[bin_], high_);
      ++count[bin_];
    }
    points_ = 0, sum_ = 0, weighted_ = 0, seconds_ = 0;
  }

  std::vector<double> total, low, high;
  std::vector<uint32_t> count;

 private:
  bool band_;
  std::vector<double> held_total_;   // without a band: differences of the held values
  std::vector<int64_t> held_count_;  // and of their number
  size_t bin_ = 0;
  size_t points_ = 0;
  double low_ = 0, high_ = 0, sum_ = 0, weighted_ = 0, seconds_ = 0;
};

// Equal time bins from `low` to `high`.
struct TimeBins {
  double low, width;
  size_t bins;
  size_t Of(double x) const {
    return std::min(bins - 1, static_cast<size_t>(std::max(0.0, (x - low) / width)));
  }
  double Start(size_t bin) const { return low + static_cast<double>(bin) * width; }
};

// A STEP series' values over the bins it spans, each for the time it holds there (a change at
// the same instant as another: the later holds), and its last value at its last point.
void AddStepSeries(const LineSeries& s, const TimeBins& bins, SeriesBins* out) {
  for (size_t k = 0; k + 1 < s.x.size(); ++k) {
    const double from = s.x[k], to = s.x[k + 1];
    if (!(to > from)) continue;
    const size_t first = bins.Of(from), last = bins.Of(to);
    for (size_t bin = first; bin <= last; ++bin) {
      if (bin == first + 1 && bin < last && !out->band()) {
        out->AddHeld(bin, last, s.y[k]);  // the bins in between, whole
        bin = last - 1;
        continue;
      }
      const double begin = std::max(from, bins.Start(bin));
      const double end = bin == last ? to : std::min(to, bins.Start(bin + 1));
      if (end > begin || bin == first) out->Add(bin, s.y[k], std::max(0.0, end - begin));
    }
  }
  out->Add(bins.Of(s.x.back()), s.y.back(), 0);
}

// MeanBandAtInstants for series with more than kMaxLinePoints distinct instants (10^4 workers
// sampled microseconds apart: 3.6 x 10^6), binned first, never holding every instant: in
// kMaxLinePoints equal time bins, each series counts with its mean in the bin (a STEP series,
// or any in a sum: the time-weighted mean of what it holds there; a SAMPLED one: of its samples
// there); a bin's figure is the mean (or the sum) of those means and the lowest low and highest
// high, drawn at the bin's start, with a closing point at the last instant. For the mean of
// samples at distinct instants, at most one per series and bin, these are the per-instant
// figures averaged per bin, as before. O(samples + spanned bins per series). Said in `note`.
LineSeries MeanBandInBins(const std::vector<LineSeries>& series, bool sum, std::string* note) {
  double low = std::numeric_limits<double>::infinity(), high = -low;
  int64_t samples = 0;
  bool all_step = true;
  for (const LineSeries& s : series) {
    if (s.x.empty()) continue;
    all_step = all_step && s.step;
    samples += static_cast<int64_t>(s.x.size());
    for (double x : s.x) low = std::min(low, x), high = std::max(high, x);
  }
  const TimeBins bins{low, (high - low) / static_cast<double>(kMaxLinePoints), kMaxLinePoints};
  SeriesBins figures(bins.bins, /*band=*/!sum);
  for (const LineSeries& s : series) {
    if (s.x.empty()) continue;
    // A sum needs every worker's value in every bin: a sample holds until the next one (the
    // sum at an instant would count only the workers sampled at that very instant).
    if (s.step || sum) {
      AddStepSeries(s, bins, &figures);
    } else {
      for (size_t i = 0; i < s.x.size(); ++i) figures.Add(bins.Of(s.x[i]), s.y[i], 0);
    }
    figures.Close();
  }
  figures.Finish();
  LineSeries out;
  out.name = sum ? "Sum over workers" : "Mean";
  out.band_name = "Min-Max Range";
  out.step = all_step;
  out.fill = sum;
  for (size_t bin = 0; bin < bins.bins; ++bin) {
    if (figures.count[bin] == 0) continue;
    out.x.push_back(bins.Start(bin));
    out.y.push_back(sum ? figures.total[bin]
                        : figures.total[bin] / static_cast<double>(figures.count[bin]));
    if (sum) continue;
    out.band_low.push_back(figures.low[bin]);
    out.band_high.push_back(figures.high[bin]);
  }
  if (out.x.empty()) return out;
  out.x.push_back(high);  // closes the last bin
  out.y.push_back(out.y.back());
  if (!sum) {
    out.band_low.push_back(out.band_low.back());
    out.band_high.push_back(out.band_high.back());
  }
  absl::StrAppend(note, note->empty() ? "" : " ", "Averaged in ", kMaxLinePoints, " time bins (of ",
                  ThousandsText(samples), " samples).");
  return out;
}

}  // namespace

LineSeries MeanBand(const std::vector<LineSeries>& series, bool sum, std::string* note) {
  return ManyInstants(series) ? MeanBandInBins(series, sum, note) : MeanBandAtInstants(series, sum);
}

}  // namespace export_internal
}  // namespace roastcoffea
