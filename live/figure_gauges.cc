#include "live/figure_gauges.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace roastcoffea {
namespace live {
namespace {

// How a catalogue unit becomes a Prometheus base unit: the key's own unit token (dropped from
// the name), the suffix of the base unit, and the factor to it.
struct BaseUnit {
  absl::string_view unit;
  absl::string_view key_token;
  absl::string_view suffix;
  double factor;
};

constexpr BaseUnit kBaseUnits[] = {
    {"s", "_seconds", "_seconds", 1.0},
    {"bytes", "_bytes", "_bytes", 1.0},
    {"MiB", "_mb", "_bytes", 1024.0 * 1024.0},
    {"fraction", "_fraction", "_ratio", 1.0},
    {"%", "_percent", "_ratio", 0.01},
    {"kHz", "_khz", "_hertz", 1e3},  // events per second
    {"Gbps", "_gbps", "_bytes_per_second", 1e9 / 8.0},
};

// Counts (events, chunks, workers, cores, ratios "x") keep their value and get no suffix.
constexpr BaseUnit kCount = {"", "", "", 1.0};

const BaseUnit& BaseUnitOf(const MetricDef& metric) {
  for (const BaseUnit& base : kBaseUnits) {
    if (metric.unit == base.unit) return base;
  }
  return kCount;
}

}  // namespace

std::string FigureGaugeName(const MetricDef& metric) {
  const BaseUnit& base = BaseUnitOf(metric);
  absl::string_view stem = metric.key;
  if (!base.key_token.empty()) absl::ConsumeSuffix(&stem, base.key_token);
  std::string name = absl::StrCat("roastcoffea_figure_", stem, base.suffix);
  // Prometheus names are [a-zA-Z_:][a-zA-Z0-9_:]*: anything else in a key becomes '_'.
  for (char& c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != ':') c = '_';
  }
  return name;
}

std::vector<FigureGauge> FigureGauges(const v1::AggregatedMetrics& metrics) {
  std::vector<FigureGauge> gauges;
  for (const MetricDef& metric : MetricCatalogue()) {
    if (!metric.live) continue;
    const std::optional<double> value = metric.value(metrics);
    if (!value.has_value()) continue;
    gauges.push_back({FigureGaugeName(metric),
                      // HELP text escapes backslash and newline in both formats.
                      absl::StrReplaceAll(absl::StrCat(metric.label, ": ", metric.description),
                                          {{"\\", "\\\\"}, {"\n", "\\n"}}),
                      *value * BaseUnitOf(metric).factor});
  }
  return gauges;
}

}  // namespace live
}  // namespace roastcoffea
