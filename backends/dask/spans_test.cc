#include "backends/dask/spans.h"

#include "backends/dask/fixtures.h"
#include "backends/dask/key_split.h"
#include "backends/dask/msgpack_codec.h"
#include "backends/dask/wire.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea::dask {
namespace {

using ::testing::ElementsAre;

Value Fixture(const std::string& name) {
  const std::string bytes = testing::FixtureBytes(name);
  StringByteReader reader(bytes);
  return *DecodeMessage(*ReadFrames(reader));
}

v1::FineMetric Metric(const std::string& prefix, const std::string& activity, double value,
                      const std::string& worker = "w1") {
  v1::FineMetric m;
  m.set_context("execute");
  m.set_task_prefix(prefix);
  m.set_activity(activity);
  m.set_unit("seconds");
  m.set_value(value);
  m.set_worker(worker);
  return m;
}

std::vector<std::string> Prefixes(const v1::Span& span) {
  std::vector<std::string> out;
  for (const v1::FineMetric& m : span.metrics()) out.push_back(m.task_prefix());
  return out;
}

TEST(SpansTest, PrefixNameFromTaskPrefixRepr) {
  EXPECT_EQ(PrefixNameFromRepr("<busy: memory: 3>"), "busy");
  EXPECT_EQ(PrefixNameFromRepr("<sum-part: memory: 3, processing: 12>"), "sum-part");
  EXPECT_EQ(PrefixNameFromRepr("<no-worker: no-worker: 1>"), "no-worker");
  EXPECT_EQ(PrefixNameFromRepr("<a: b: memory: 3>"), "a: b");  // a name with ": "
  EXPECT_EQ(PrefixNameFromRepr("<idle: >"), "idle");
  EXPECT_EQ(PrefixNameFromRepr("busy"), std::nullopt);
  EXPECT_EQ(PrefixNameFromRepr("<busy>"), std::nullopt);
  EXPECT_EQ(PrefixNameFromRepr("<: memory: 1>"), std::nullopt);
}

// Recorded while holder.py kept `hold` tasks alive in span "held"/"inner" and `nap` in "long".
TEST(SpansTest, ReadsEveryModernVersionsGroupsAndSpanPaths) {
  for (const char* version : {"2024.12.1", "2025.9.3", "head"}) {
    SCOPED_TRACE(version);
    const std::string dir = std::string("modern/") + version;
    absl::StatusOr<std::vector<TaskGroupSpan>> groups =
        ParseTaskGroups(Fixture(dir + "/dump_state_task_groups.reply"));
    ASSERT_TRUE(groups.ok()) << groups.status();
    ASSERT_EQ(groups->size(), 2u);
    EXPECT_EQ((*groups)[0].group, "hold");
    EXPECT_EQ((*groups)[0].task_prefix, "hold");
    EXPECT_FALSE((*groups)[0].span_id.empty());
    EXPECT_GT((*groups)[0].stop_unix_seconds, (*groups)[0].start_unix_seconds);
    EXPECT_EQ((*groups)[1].task_prefix, "nap");
    EXPECT_EQ((*groups)[1].stop_unix_seconds, 0);  // still running

    absl::StatusOr<std::map<std::string, SpanPath>> paths =
        ParseTaskSpanPaths(Fixture(dir + "/dump_state_tasks_min.reply"));
    ASSERT_TRUE(paths.ok()) << paths.status();
    ASSERT_EQ(paths->size(), 3u);  // held, held/inner, long
    const SpanPath& inner = paths->at((*groups)[0].span_id);
    EXPECT_THAT(inner.names, ElementsAre("held", "inner"));
    EXPECT_THAT(paths->at(inner.ids[0]).names, ElementsAre("held"));
    EXPECT_THAT(paths->at((*groups)[1].span_id).names, ElementsAre("long"));
  }
}

TEST(SpansTest, Debian2022HasNoSpans) {
  const std::string dir = "modern/debian-2022.12.1";
  absl::StatusOr<std::vector<TaskGroupSpan>> groups =
      ParseTaskGroups(Fixture(dir + "/dump_state_task_groups.reply"));
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_TRUE(groups->empty());
  absl::StatusOr<std::map<std::string, SpanPath>> paths =
      ParseTaskSpanPaths(Fixture(dir + "/dump_state_tasks_min.reply"));
  ASSERT_TRUE(paths.ok()) << paths.status();
  EXPECT_TRUE(paths->empty());
}

TEST(SpansTest, RefusesMalformedReplies) {
  EXPECT_TRUE(absl::IsInvalidArgument(ParseTaskGroups(Value::Nil()).status()));
  Value groups = Value::Map();
  Value bad = Value::Map();
  bad.Insert(Value::Str("name"), Value::Str("g"));
  bad.Insert(Value::Str("prefix"), Value::Str("no repr"));
  groups.Insert(Value::Str("g"), std::move(bad));
  Value reply = Value::Map();
  reply.Insert(Value::Str("task_groups"), std::move(groups));
  absl::Status s = ParseTaskGroups(reply).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_THAT(s.message(), ::testing::HasSubstr("'g'"));
  EXPECT_TRUE(absl::IsInvalidArgument(ParseTaskSpanPaths(Value::Map()).status()));
}

TEST(SpansTest, SplitsAWindowOverNestedSpansFromRecordedReplies) {
  const std::string dir = "modern/2025.9.3";
  SpanCatalog catalog;
  std::vector<std::string> fresh =
      catalog.AddGroups(*ParseTaskGroups(Fixture(dir + "/dump_state_task_groups.reply")));
  EXPECT_EQ(fresh.size(), 2u);
  catalog.AddPaths(*ParseTaskSpanPaths(Fixture(dir + "/dump_state_tasks_min.reply")));
  EXPECT_TRUE(
      catalog.AddGroups(*ParseTaskGroups(Fixture(dir + "/dump_state_task_groups.reply"))).empty());

  v1::Span window;
  window.set_kind(v1::SPAN_KIND_COLLECT_WINDOW);
  *window.add_metrics() = Metric("hold", "thread-cpu", 0.3);
  *window.add_metrics() = Metric("nap", "thread-noncpu", 2.0, "w2");
  *window.add_metrics() = Metric("unseen", "thread-cpu", 1.0);  // no group seen: window only
  const std::vector<v1::Span> spans = catalog.Attribute(window);
  ASSERT_EQ(spans.size(), 3u);
  // held (with its child inner) started before long.
  EXPECT_EQ(spans[0].name(), "held");
  EXPECT_EQ(spans[0].kind(), v1::SPAN_KIND_WORKLOAD);
  EXPECT_EQ(spans[0].parent_id(), "");
  EXPECT_THAT(Prefixes(spans[0]), ElementsAre("hold"));
  EXPECT_EQ(spans[1].name(), "inner");
  EXPECT_THAT(spans[1].name_path(), ElementsAre("held", "inner"));
  EXPECT_EQ(spans[1].parent_id(), spans[0].id());
  EXPECT_EQ(spans[1].id(), "457e34e6-f95b-4f43-b603-bf44bf8f1122");
  EXPECT_DOUBLE_EQ(spans[1].metrics(0).value(), 0.3);
  EXPECT_NEAR(spans[1].start_unix_ns(), 1795441210651267800, 1000);
  EXPECT_NEAR(spans[1].end_unix_ns(), 1795441210806239000, 1000);
  EXPECT_EQ(spans[2].name(), "long");
  EXPECT_THAT(Prefixes(spans[2]), ElementsAre("nap"));
  EXPECT_EQ(spans[2].metrics(0).worker(), "w2");
  EXPECT_EQ(spans[2].end_unix_ns(), 0);  // its group had not stopped
  for (const v1::Span& s : spans) EXPECT_TRUE(s.ambiguous_task_prefixes().empty());
}

TEST(SpansTest, APrefixInSeveralSpansIsGivenToEachAndMarkedAmbiguous) {
  SpanCatalog catalog;
  catalog.AddGroups({{"busy-a", "busy", "s1", 10, 20},
                     {"busy-b", "busy", "s2", 30, 40},
                     {"sleepy-c", "sleepy", "s2", 30, 35},
                     {"old", "old", "", 1, 2}});
  catalog.AddPaths({{"s1", {{"load"}, {"s1"}}}});  // s2's tasks were gone: no name
  v1::Span window;
  *window.add_metrics() = Metric("busy", "thread-cpu", 5);
  *window.add_metrics() = Metric("sleepy", "thread-noncpu", 2);
  *window.add_metrics() = Metric("old", "thread-cpu", 1);
  const std::vector<v1::Span> spans = catalog.Attribute(window);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].name(), "load");
  EXPECT_THAT(Prefixes(spans[0]), ElementsAre("busy"));
  EXPECT_THAT(spans[0].ambiguous_task_prefixes(), ElementsAre("busy"));
  EXPECT_EQ(spans[1].name(), "span s2");
  EXPECT_TRUE(spans[1].name_path().empty());
  EXPECT_THAT(Prefixes(spans[1]), ElementsAre("busy", "sleepy"));
  EXPECT_THAT(spans[1].ambiguous_task_prefixes(), ElementsAre("busy"));
  EXPECT_EQ(spans[1].start_unix_ns(), 30'000'000'000);
  EXPECT_EQ(spans[1].end_unix_ns(), 40'000'000'000);
}

TEST(SpansTest, TaskGroupOfKeyIsDasksKeySplitGroup) {
  EXPECT_EQ(TaskGroupOfKey("('x-2', 1)"), "x-2");
  EXPECT_EQ(TaskGroupOfKey("(\"f-short\", 3)"), "f-short");
  EXPECT_EQ(TaskGroupOfKey("('solo',)"), "solo");
  EXPECT_EQ(TaskGroupOfKey("x-1"), "x");
  EXPECT_EQ(TaskGroupOfKey("inc-0123456789abcdef0123456789abcdef"), "inc");
  EXPECT_EQ(TaskGroupOfKey("ae05086432ca935f6eba409a8ecd4896"), "data");
  EXPECT_EQ(TaskGroupOfKey(""), KeySplit(""));
}

// shortspan.py on 2026.7.1 (real-engines-round-3 D3): span `long` (group f-long) was polled,
// span `short` (group f-short, same prefix f) was created and forgotten between two polls.
// Its tasks are in the task stream: f is no longer exact in `long`.
TEST(SpansTest, AGroupNoPollSawMakesItsPrefixAmbiguous) {
  SpanCatalog catalog;
  catalog.AddGroups({{"f-long", "f", "s-long", 10, 20}, {"g-solo", "g", "s-long", 10, 12}});
  catalog.AddPaths({{"s-long", {{"long"}, {"s-long"}}}});
  v1::Span window;
  *window.add_metrics() = Metric("f", "thread-cpu", 4.86);
  *window.add_metrics() = Metric("g", "thread-cpu", 1);
  const StreamGroups stream = {{"f", {"f-long", "f-short"}}, {"g", {"g-solo"}}, {"h", {"h-never"}}};
  EXPECT_EQ(catalog.UnseenGroups(stream), (StreamGroups{{"f", {"f-short"}}}))
      << "h: no group of it was seen, its metrics stay in the window only";
  const std::vector<v1::Span> spans = catalog.Attribute(window, stream);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].name(), "long");
  EXPECT_THAT(Prefixes(spans[0]), ElementsAre("f", "g"));
  EXPECT_THAT(spans[0].ambiguous_task_prefixes(), ElementsAre("f"));
  // Without the task stream's groups the span would claim f exactly.
  EXPECT_TRUE(catalog.Attribute(window)[0].ambiguous_task_prefixes().empty());
}

TEST(SpansTest, HostileParentCycleStillGivesEverySpan) {
  SpanCatalog catalog;
  catalog.AddGroups({{"a", "a", "x", 1, 2}, {"b", "b", "y", 1, 2}});
  catalog.AddPaths({{"x", {{"Y", "X"}, {"y", "x"}}}, {"y", {{"X", "Y"}, {"x", "y"}}}});
  v1::Span window;
  *window.add_metrics() = Metric("a", "thread-cpu", 1);
  EXPECT_EQ(catalog.Attribute(window).size(), 2u);
}

}  // namespace
}  // namespace roastcoffea::dask
