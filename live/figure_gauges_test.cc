#include "live/figure_gauges.h"

#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "aggregation/metric_catalogue.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace live {
namespace {

std::vector<FigureGauge> GaugesOf(const v1::AggregatedMetrics& metrics) {
  return FigureGauges(metrics);
}

const FigureGauge* Find(const std::vector<FigureGauge>& gauges, const std::string& name) {
  for (const FigureGauge& gauge : gauges) {
    if (gauge.name == name) return &gauge;
  }
  return nullptr;
}

TEST(FigureGaugesTest, CatalogueFiguresInBaseUnits) {
  v1::AggregatedMetrics m;
  m.mutable_cpu()->set_cpu_efficiency_fraction(0.25);
  m.mutable_workflow()->set_data_rate_gbps(8.0);
  m.mutable_workflow()->set_event_rate_elapsed_khz(2.5);
  m.mutable_workflow()->set_total_bytes_read(1000);
  m.mutable_workflow()->set_elapsed_time_seconds(12.0);
  m.mutable_cpu()->set_chunk_wall_seconds(10.0);
  m.mutable_cpu()->set_chunk_run_queue_wait_seconds(4.0);
  const std::vector<FigureGauge> gauges = GaugesOf(m);
  const auto value = [&](const std::string& name) {
    const FigureGauge* gauge = Find(gauges, name);
    EXPECT_NE(gauge, nullptr) << name;
    return gauge == nullptr ? -1.0 : gauge->value;
  };
  EXPECT_DOUBLE_EQ(value("roastcoffea_figure_cpu_efficiency_ratio"), 0.25);
  EXPECT_DOUBLE_EQ(value("roastcoffea_figure_data_rate_bytes_per_second"), 1e9);
  EXPECT_DOUBLE_EQ(value("roastcoffea_figure_event_rate_elapsed_hertz"), 2500.0);
  EXPECT_DOUBLE_EQ(value("roastcoffea_figure_total_bytes_read_bytes"), 1000.0);
  EXPECT_DOUBLE_EQ(value("roastcoffea_figure_elapsed_time_seconds"), 12.0);
  // A percentage becomes a ratio.
  EXPECT_DOUBLE_EQ(value("roastcoffea_figure_chunk_run_queue_wait_share_ratio"), 0.4);
  const FigureGauge* rate = Find(gauges, "roastcoffea_figure_data_rate_bytes_per_second");
  ASSERT_NE(rate, nullptr);
  EXPECT_EQ(rate->help, "Data Rate: Compressed bytes read per elapsed second.");
}

TEST(FigureGaugesTest, UnknownFiguresHaveNoGauge) {
  v1::AggregatedMetrics m;  // no CPU measured, no workers tracked
  const std::vector<FigureGauge> gauges = GaugesOf(m);
  EXPECT_EQ(Find(gauges, "roastcoffea_figure_cpu_efficiency_ratio"), nullptr);
  EXPECT_EQ(Find(gauges, "roastcoffea_figure_total_cores"), nullptr);
  EXPECT_EQ(Find(gauges, "roastcoffea_figure_data_rate_bytes_per_second"), nullptr);
}

// Every live entry gives one valid, distinct name outside the fixed families of exposition.cc.
TEST(FigureGaugesTest, NamesAreValidAndDistinct) {
  std::set<std::string> names;
  int live = 0;
  for (const MetricDef& metric : MetricCatalogue()) {
    if (!metric.live) continue;
    ++live;
    const std::string name = FigureGaugeName(metric);
    EXPECT_TRUE(names.insert(name).second) << "two live metrics named " << name;
    EXPECT_EQ(name.rfind("roastcoffea_figure_", 0), 0u) << name;
    for (const char c : name) {
      EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '_') << name;
    }
    // Gauges never end in _total (promtool: reserved for counters).
    EXPECT_FALSE(name.size() >= 6 && name.compare(name.size() - 6, 6, "_total") == 0) << name;
  }
  EXPECT_GE(live, 10);
}

}  // namespace
}  // namespace live
}  // namespace roastcoffea
