#include "aggregation/series_reduction.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <utility>
#include <vector>

#include "aggregation/series_integral.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"
#include "schema/worker_series_columns.h"

namespace roastcoffea {
namespace {

using aggregation_internal::SecondsBetween;
using google::protobuf::FieldDescriptor;

// A series as columns: distinct-or-grouped instants and one value vector per number column.
struct Columns {
  std::vector<int64_t> times;
  std::vector<const FieldDescriptor*> fields;  // the non-empty number columns
  std::vector<std::vector<double>> values;     // per field, one value per time
};

// Reads the non-empty number columns; false when one is neither empty nor as long as times.
bool ReadColumns(const v1::WorkerSeries& series, Columns* columns) {
  const int n = series.time_unix_ns_size();
  const google::protobuf::Reflection* reflection = series.GetReflection();
  const google::protobuf::Descriptor* descriptor = series.GetDescriptor();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    if (!field->is_repeated() || field->cpp_type() != FieldDescriptor::CPPTYPE_DOUBLE) continue;
    const int size = reflection->FieldSize(series, field);
    if (size == 0) continue;
    if (size != n) return false;
    const auto column = reflection->GetRepeatedFieldRef<double>(series, field);
    columns->fields.push_back(field);
    columns->values.emplace_back(column.begin(), column.end());
  }
  columns->times.assign(series.time_unix_ns().begin(), series.time_unix_ns().end());
  return true;
}

// Replaces the series' columns by `columns` in fresh buffers: the old ones' capacity (up to
// twice the budget, from the appends) is freed, not kept for the next appends.
void WriteColumns(const Columns& columns, v1::WorkerSeries* series) {
  const google::protobuf::Reflection* reflection = series->GetReflection();
  const google::protobuf::Descriptor* descriptor = series->GetDescriptor();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    if (descriptor->field(i)->is_repeated()) reflection->ClearField(series, descriptor->field(i));
  }
  v1::WorkerSeries fresh;
  fresh.MergeFrom(*series);  // the name, kind and every other scalar
  fresh.mutable_time_unix_ns()->Reserve(static_cast<int>(columns.times.size()));
  fresh.mutable_time_unix_ns()->Add(columns.times.begin(), columns.times.end());
  for (size_t c = 0; c < columns.fields.size(); ++c) {
    auto out = reflection->GetMutableRepeatedFieldRef<double>(&fresh, columns.fields[c]);
    for (const double v : columns.values[c]) out.Add(v);
  }
  *series = std::move(fresh);
}

// By time, stably; SAMPLED samples sharing an instant become their mean (as SortedSeries).
Columns Canonical(const Columns& in, bool step) {
  const size_t n = in.times.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return in.times[a] < in.times[b]; });
  Columns out;
  out.fields = in.fields;
  out.values.resize(in.fields.size());
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && in.times[order[j]] == in.times[order[i]]) ++j;
    for (size_t k = step ? i : j - 1; k < j; ++k) out.times.push_back(in.times[order[i]]);
    for (size_t c = 0; c < in.fields.size(); ++c) {
      if (step) {
        for (size_t k = i; k < j; ++k) out.values[c].push_back(in.values[c][order[k]]);
      } else {
        double sum = 0;
        for (size_t k = i; k < j; ++k) sum += in.values[c][order[k]];
        out.values[c].push_back(sum / static_cast<double>(j - i));
      }
    }
    i = j;
  }
  return out;
}

// Index of the first sample of each distinct instant, and one past the end.
std::vector<size_t> InstantStarts(const std::vector<int64_t>& times) {
  std::vector<size_t> starts;
  for (size_t i = 0; i < times.size(); ++i) {
    if (i == 0 || times[i] != times[i - 1]) starts.push_back(i);
  }
  starts.push_back(times.size());
  return starts;
}

// Knots among `d` instants (see the header): every m-th, the first, the last, and those around
// each protected instant.
std::vector<bool> Knots(const std::vector<int64_t>& times, const std::vector<size_t>& starts,
                        size_t m, absl::Span<const int64_t> protected_instants) {
  const size_t d = starts.size() - 1;
  std::vector<bool> knot(d, false);
  for (size_t g = 0; g < d; g += m) knot[g] = true;
  knot[d - 1] = true;
  for (const int64_t p : protected_instants) {
    // First instant >= p, and the one before it (the last < p; == p is the first itself).
    size_t lo = 0, hi = d;
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (times[starts[mid]] < p) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (lo < d) knot[lo] = true;
    if (lo > 0) knot[lo - 1] = true;
  }
  return knot;
}

bool AllFinite(const Columns& columns, size_t from, size_t to) {
  for (const std::vector<double>& column : columns.values) {
    for (size_t k = from; k < to; ++k) {
      if (!std::isfinite(column[k])) return false;
    }
  }
  return true;
}

void CopySamples(const Columns& in, size_t from, size_t to, Columns* out) {
  out->times.insert(out->times.end(), in.times.begin() + from, in.times.begin() + to);
  for (size_t c = 0; c < in.values.size(); ++c) {
    out->values[c].insert(out->values[c].end(), in.values[c].begin() + from,
                          in.values[c].begin() + to);
  }
}

// SAMPLED, one sample per instant: samples a (knot), then the block's interior replaced by
// two samples of equal trapezoid, up to (not including) the knot b.
void ReduceSampledBlock(const Columns& in, size_t a, size_t b, Columns* out) {
  const int64_t ta = in.times[a];
  const int64_t tb = in.times[b];
  if (b - a <= 3 || tb - ta < 3 || !AllFinite(in, a, b + 1)) {
    CopySamples(in, a, b, out);
    return;
  }
  CopySamples(in, a, a + 1, out);
  out->times.push_back(ta + 1);
  out->times.push_back(tb - 1);
  const double tick = SecondsBetween(ta, ta + 1);
  const double inner = SecondsBetween(ta, tb) - tick;
  for (size_t c = 0; c < in.values.size(); ++c) {
    const std::vector<double>& v = in.values[c];
    double integral = 0;
    for (size_t k = a; k < b; ++k) {
      integral += (v[k] + v[k + 1]) / 2 * SecondsBetween(in.times[k], in.times[k + 1]);
    }
    // (v_a + w)/2 tick + w (T - 2 tick) + (w + v_b)/2 tick = w (T - tick) + (v_a + v_b)/2 tick.
    double w = (integral - (v[a] + v[b]) / 2 * tick) / inner;
    const auto [low, high] = std::minmax_element(v.begin() + a, v.begin() + b + 1);
    w = std::clamp(w, *low, *high);
    out->values[c].push_back(w);
    out->values[c].push_back(w);
  }
}

// STEP: the instants [ga, gb) (starting at sample starts[ga]) as one sample at the first
// instant holding their time-weighted mean until instant gb.
void ReduceStepBlock(const Columns& in, const std::vector<size_t>& starts, size_t ga, size_t gb,
                     Columns* out) {
  const size_t from = starts[ga];
  const size_t to = starts[gb];
  const int64_t ta = in.times[from];
  const int64_t tb = in.times[to];
  if (to - from <= 1 || !AllFinite(in, from, to)) {
    CopySamples(in, from, to, out);
    return;
  }
  out->times.push_back(ta);
  const double seconds = SecondsBetween(ta, tb);
  for (size_t c = 0; c < in.values.size(); ++c) {
    const std::vector<double>& v = in.values[c];
    double integral = 0;
    for (size_t g = ga; g < gb; ++g) {
      // The last sample stored at an instant holds until the next instant.
      integral +=
          v[starts[g + 1] - 1] * SecondsBetween(in.times[starts[g]], in.times[starts[g + 1]]);
    }
    out->values[c].push_back(integral / seconds);
  }
}

}  // namespace

bool ReduceWorkerSeries(int max_samples, absl::Span<const int64_t> protected_instants,
                        v1::WorkerSeries* series) {
  if (max_samples <= 0 || series->time_unix_ns_size() <= max_samples) return false;
  const size_t target = static_cast<size_t>(std::max(max_samples, kMinSamplesPerWorker) / 2);
  ExpandColumnsStoredOnce(series);  // the blocks are cut column by column, point by point
  Columns raw;
  if (!ReadColumns(*series, &raw)) return false;
  const bool step = series->kind() == v1::SERIES_KIND_STEP;
  const Columns in = Canonical(raw, step);
  const std::vector<size_t> starts = InstantStarts(in.times);
  const size_t d = starts.size() - 1;
  // SAMPLED: a block of m instants becomes 3 samples; STEP: 1. ceil(d / m) blocks (the last
  // one short) and the last instant: at most target.
  const size_t per_block = step ? 1 : 3;
  const size_t room = target - 1 - per_block;
  const size_t m = std::max<size_t>(step ? 2 : 4, (per_block * (d - 1) + room - 1) / room);
  const std::vector<bool> knot = Knots(in.times, starts, m, protected_instants);

  Columns out;
  out.fields = in.fields;
  out.values.resize(in.fields.size());
  size_t a = 0;  // the instant that opens the block
  for (size_t g = 1; g < d; ++g) {
    if (!knot[g]) continue;
    if (step) {
      ReduceStepBlock(in, starts, a, g, &out);
    } else {
      ReduceSampledBlock(in, a, g, &out);
    }
    a = g;
  }
  CopySamples(in, starts[a], in.times.size(), &out);  // the last instant, whole

  double max_memory = series->max_memory_bytes();
  for (const double bytes : series->memory_bytes()) max_memory = std::max(max_memory, bytes);
  // Once reduced, the count is kept up by whoever appends (MergeTrackingSegment).
  if (series->samples_before_reduction() == 0) {
    series->set_samples_before_reduction(series->time_unix_ns_size());
  }
  if (series->memory_bytes_size() > 0) series->set_max_memory_bytes(max_memory);
  WriteColumns(out, series);
  return true;
}

int ReduceTracking(int max_samples_per_worker, absl::Span<const int64_t> protected_instants,
                   v1::TrackingData* tracking, bool step_series_too) {
  int reduced = 0;
  for (v1::WorkerSeries& series : *tracking->mutable_workers()) {
    if (!step_series_too && series.kind() == v1::SERIES_KIND_STEP) continue;
    if (ReduceWorkerSeries(max_samples_per_worker, protected_instants, &series)) ++reduced;
  }
  return reduced;
}

}  // namespace roastcoffea
