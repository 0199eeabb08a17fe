#include "aggregation/metric_catalogue.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "aggregation/metric_catalogue_entries.h"

namespace roastcoffea {
namespace {

using M = v1::AggregatedMetrics;

std::vector<MetricDef>* MutableCatalogue() {
  static std::vector<MetricDef>* const catalogue = new std::vector<MetricDef>(BuiltInMetrics());
  return catalogue;
}

bool Present(const MetricDef& metric, const M& m, const std::optional<double>& value) {
  switch (metric.presence) {
    case FlatPresence::kAlways:
      return true;
    case FlatPresence::kWhenKnown:
      return value.has_value();
    case FlatPresence::kWithWorkers:
      return m.has_workers();
    case FlatPresence::kWithFine:
      return m.has_fine();
    case FlatPresence::kWithChunks:
      return m.has_chunks();
    case FlatPresence::kWithDurationStats:
      return m.has_chunks() && m.chunks().has_duration_seconds();
    case FlatPresence::kWithMemoryStats:
      return m.has_chunks() && m.chunks().has_memory_delta_bytes();
    case FlatPresence::kWithEventStats:
      return m.has_chunks() && m.chunks().has_events();
    case FlatPresence::kWithBranches:
      return m.has_branches();
    case FlatPresence::kWithFileBytes:
      return value.has_value() && m.workflow().has_read_amplification() &&
             m.workflow().has_distinct_file_bytes();
  }
  return false;
}

}  // namespace

const std::vector<MetricDef>& MetricCatalogue() { return *MutableCatalogue(); }

const MetricDef* FindMetric(const std::string& key) {
  for (const MetricDef& metric : MetricCatalogue()) {
    if (metric.key == key) return &metric;
  }
  return nullptr;
}

bool RegisterMetricForTesting(MetricDef metric) {
  if (metric.key.empty() || metric.value == nullptr || FindMetric(metric.key) != nullptr) {
    return false;
  }
  MutableCatalogue()->push_back(std::move(metric));
  return true;
}

std::optional<double> ComparedValue(const MetricDef& metric, const v1::AggregatedMetrics& m) {
  if (metric.compare_value != nullptr) return metric.compare_value(m);
  const std::optional<double> value = metric.value(m);
  if (!value.has_value()) return std::nullopt;
  return *value * metric.compare_scale;
}

std::optional<double> TableValue(const MetricDef& metric, const v1::AggregatedMetrics& m) {
  return metric.table_value != nullptr ? metric.table_value(m) : metric.value(m);
}

std::vector<const MetricDef*> TableRows(SummaryTableId table) {
  std::vector<const MetricDef*> rows;
  for (const MetricDef& metric : MetricCatalogue()) {
    if (metric.table == table && table != SummaryTableId::kNone) rows.push_back(&metric);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const MetricDef* a, const MetricDef* b) {
    return a->table_rank < b->table_rank;
  });
  return rows;
}

void AppendFlatPart(const v1::AggregatedMetrics& metrics, FlatPart part,
                    std::vector<FlatMetric>* out) {
  for (const MetricDef& metric : MetricCatalogue()) {
    if (metric.flat != part) continue;
    std::optional<double> value = metric.value(metrics);
    if (Present(metric, metrics, value)) out->push_back({metric.key, value, metric.unit});
  }
}

}  // namespace roastcoffea
