#include "export/report_mean_band.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "export/report_gantt.h"
#include "export/report_plots.h"

namespace roastcoffea {
namespace export_internal {
namespace {

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
  size_t next_first = s.x.empty() ? 0 : bins.Of(s.x[0]);  // a point's bin, found once
  for (size_t k = 0; k + 1 < s.x.size(); ++k) {
    const double from = s.x[k], to = s.x[k + 1];
    const size_t first = next_first;
    next_first = bins.Of(to);
    if (!(to > from)) continue;
    const size_t last = next_first;
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

}  // namespace

void MeanBandSurvey::Add(const LineSeries& s) {
  if (s.x.empty()) return;
  all_step_ = all_step_ && s.step;
  // A STEP series counts its instants: points sharing one are successive changes there (a
  // series saved before #25 repeated the state before each change at its instant).
  for (size_t i = 0; i < s.x.size(); ++i) samples_ += !s.step || i == 0 || s.x[i] != s.x[i - 1];
  // Instants in order (nearly always): the range from the ends, without a running minimum and
  // maximum over every instant (a chain of dependent steps per instant).
  // (Each instant <= the next: none is NaN, when there are two.)
  const bool ordered = std::adjacent_find(s.x.begin(), s.x.end(), [](double a, double b) {
                         return !(a <= b);
                       }) == s.x.end();
  if (ordered && !std::isnan(s.x.front())) {
    low_ = std::min(low_, s.x.front()), high_ = std::max(high_, s.x.back());
  }
  for (double x : s.x) {
    if (!ordered) low_ = std::min(low_, x), high_ = std::max(high_, x);
    if (many_) {
      if (ordered) break;
      continue;
    }
    instants_.insert(x);
    if (instants_.size() > kMaxLinePoints) many_ = true, instants_ = {};
  }
}

// Mean and min-max (or the sum) across the series at every instant any of them has: a STEP
// series counts with the value it holds from its first to its last point, a SAMPLED one at its
// own points. The instants are one sorted vector and the figures running totals per instant,
// added in series order. For at most kMaxLinePoints instants (MeanBandInBins above that).
class MeanBandBuilder::AtInstants {
 public:
  explicit AtInstants(const absl::flat_hash_set<double>& instants)
      : xs_(instants.begin(), instants.end()) {
    std::sort(xs_.begin(), xs_.end());
    total_.assign(xs_.size(), 0.0), low_.resize(xs_.size()), high_.resize(xs_.size());
    count_.assign(xs_.size(), 0);
  }

  void Add(const LineSeries& s) {
    if (s.x.empty()) return;
    if (!s.step) {
      // A binary search per point: walking forward would cross every other worker's instants.
      for (size_t i = 0; i < s.x.size(); ++i) Add(IndexOf(s.x[i]), s.y[i]);
      return;
    }
    size_t k = 0;
    for (size_t at = IndexOf(s.x.front()); at < xs_.size() && xs_[at] <= s.x.back(); ++at) {
      while (k < s.x.size() && s.x[k] <= xs_[at]) ++k;
      Add(at, s.y[k - 1]);
    }
  }

  void Finish(bool sum, LineSeries* out) const {
    for (size_t at = 0; at < xs_.size(); ++at) {
      if (count_[at] == 0) continue;
      out->x.push_back(xs_[at]);
      out->y.push_back(sum ? total_[at] : total_[at] / static_cast<double>(count_[at]));
      if (sum) continue;
      out->band_low.push_back(low_[at]);
      out->band_high.push_back(high_[at]);
    }
  }

 private:
  size_t IndexOf(double x) const {
    return static_cast<size_t>(std::lower_bound(xs_.begin(), xs_.end(), x) - xs_.begin());
  }
  void Add(size_t at, double y) {
    if (!std::isfinite(y)) return;
    total_[at] += y;
    low_[at] = count_[at] == 0 ? y : std::min(low_[at], y);
    high_[at] = count_[at] == 0 ? y : std::max(high_[at], y);
    ++count_[at];
  }

  std::vector<double> xs_, total_, low_, high_;
  std::vector<uint32_t> count_;
};

// For series with more than kMaxLinePoints distinct instants (10^4 workers sampled microseconds
// apart: 3.6 x 10^6), binned, never holding every instant: in kMaxLinePoints equal time bins,
// each series counts with its mean in the bin (a STEP series, or any in a sum: the time-weighted
// mean of what it holds there; a SAMPLED one: of its samples there); a bin's figure is the mean
// (or the sum) of those means and the lowest low and highest high, drawn at the bin's start, with
// a closing point at the last instant. For the mean of samples at distinct instants, at most one
// per series and bin, these are the per-instant figures averaged per bin. O(samples + spanned
// bins per series). Said in the note.
class MeanBandBuilder::InBins {
 public:
  InBins(double low, double high, bool sum)
      : bins_{low, (high - low) / static_cast<double>(kMaxLinePoints), kMaxLinePoints},
        figures_(bins_.bins, /*band=*/!sum) {}

  void Add(const LineSeries& s, bool sum) {
    if (s.x.empty()) return;
    // A sum needs every worker's value in every bin: a sample holds until the next one (the
    // sum at an instant would count only the workers sampled at that very instant).
    if (s.step || sum) {
      AddStepSeries(s, bins_, &figures_);
    } else {
      for (size_t i = 0; i < s.x.size(); ++i) figures_.Add(bins_.Of(s.x[i]), s.y[i], 0);
    }
    figures_.Close();
  }

  void Finish(bool sum, double high, LineSeries* out) {
    figures_.Finish();
    for (size_t bin = 0; bin < bins_.bins; ++bin) {
      if (figures_.count[bin] == 0) continue;
      out->x.push_back(bins_.Start(bin));
      out->y.push_back(sum ? figures_.total[bin]
                           : figures_.total[bin] / static_cast<double>(figures_.count[bin]));
      if (sum) continue;
      out->band_low.push_back(figures_.low[bin]);
      out->band_high.push_back(figures_.high[bin]);
    }
    if (out->x.empty()) return;
    out->x.push_back(high);  // closes the last bin
    out->y.push_back(out->y.back());
    if (!sum) {
      out->band_low.push_back(out->band_low.back());
      out->band_high.push_back(out->band_high.back());
    }
  }

 private:
  TimeBins bins_;
  SeriesBins figures_;
};

MeanBandBuilder::MeanBandBuilder(const MeanBandSurvey& survey, bool sum)
    : sum_(sum), all_step_(survey.all_step_), high_(survey.high_), samples_(survey.samples_) {
  if (survey.many_) {
    in_bins_ = std::make_unique<InBins>(survey.low_, survey.high_, sum);
  } else {
    at_instants_ = std::make_unique<AtInstants>(survey.instants_);
  }
}

MeanBandBuilder::~MeanBandBuilder() = default;

void MeanBandBuilder::Add(const LineSeries& s) {
  if (in_bins_ != nullptr) {
    in_bins_->Add(s, sum_);
  } else {
    at_instants_->Add(s);
  }
}

LineSeries MeanBandBuilder::Finish(std::string* note) {
  LineSeries out;
  out.name = sum_ ? "Sum over workers" : "Mean";
  out.band_name = "Min-Max Range";
  out.step = all_step_;
  out.fill = sum_;
  if (at_instants_ != nullptr) {
    at_instants_->Finish(sum_, &out);
    return out;
  }
  in_bins_->Finish(sum_, high_, &out);
  if (out.x.empty()) return out;
  absl::StrAppend(note, note->empty() ? "" : " ", "Averaged in ", kMaxLinePoints, " time bins (of ",
                  ThousandsText(samples_), " samples).");
  return out;
}

LineSeries MeanBand(const std::vector<LineSeries>& series, bool sum, std::string* note) {
  MeanBandSurvey survey;
  for (const LineSeries& s : series) survey.Add(s);
  MeanBandBuilder band(survey, sum);
  for (const LineSeries& s : series) band.Add(s);
  return band.Finish(note);
}

}  // namespace export_internal
}  // namespace roastcoffea
