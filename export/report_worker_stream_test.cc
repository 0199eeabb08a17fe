#include "export/report_worker_stream.h"

#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "export/html_report.h"
#include "export/report_chunks.h"
#include "export/report_plots.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"
#include "store/segmented_measurement.h"

namespace roastcoffea {
namespace {

constexpr int64_t kT0 = 1'765'000'000'000'000'000;
constexpr int64_t kSecond = 1'000'000'000;

// A run of `workers` tracked workers with `samples` samples each, every `step_ns` apart and
// offset by `offset_ns` per worker (distinct instants across workers when not 0); every third
// worker repeats its neighbour's series (threads of one process); a few chunk records.
// `active_is_executing`: active tasks equal executing ones at every sample (a TaskVine run's),
// whose chart is a sentence.
v1::Measurement TrackedRun(int workers, int samples, int64_t offset_ns, bool step,
                           bool active_is_executing = false) {
  v1::Measurement m;
  m.mutable_metadata()->set_name("streamed");
  m.mutable_metadata()->set_schema_version(kSchemaVersion);
  m.mutable_metadata()->mutable_start_time()->set_seconds(kT0 / kSecond);
  m.mutable_metadata()->set_elapsed_seconds(samples * 10.0);
  for (int i = 0; i < 40; ++i) {
    v1::ChunkRecord& r = *m.add_chunks();
    r.set_file(absl::StrCat("f", i % 4, ".root"));
    r.set_dataset(i % 2 ? "TTbar" : "WJets");
    r.set_start_unix_ns(kT0 + i * kSecond);
    r.set_end_unix_ns(kT0 + (i + 3) * kSecond);
    r.set_events(1000 + i);
    r.set_worker(absl::StrCat("w", i % workers));
    // What the report does not read, around what it reads.
    r.set_thread_index(i % 2);
    r.set_duration_seconds(2.5 + i);
    r.set_compressed_bytes_read(1000 * i);
    r.set_uncompressed_bytes_read(3000 * i);
    r.set_accessed_bytes(500 * i);
    r.add_accessed_branches("Jet_pt");
    if (i % 7 == 3) r.set_status(v1::CHUNK_STATUS_FAILED), r.set_error_text("boom");
    v1::SectionRecord& section = *r.add_sections();
    section.set_name("jets");
    section.set_duration_seconds(0.5);
    r.mutable_file_metadata()->set_total_branches(1200);
    r.set_task_id(absl::StrCat(i + 1));
  }
  v1::TrackingData& tracking = *m.mutable_tracking();
  tracking.set_interval_seconds(10);
  for (int w = 0; w < workers; ++w) {
    v1::WorkerSeries& s = *tracking.add_workers();
    s.set_worker(absl::StrCat("w", w));
    s.set_kind(step ? v1::SERIES_KIND_STEP : v1::SERIES_KIND_SAMPLED);
    const int like = w % 3 == 2 ? w - 1 : w;  // the worker whose series it repeats
    for (int t = 0; t < samples; ++t) {
      const double x = static_cast<double>((t * 7919 + like * 31) % 1000);
      s.add_time_unix_ns(kT0 + t * 10 * kSecond + like * offset_ns);
      s.add_memory_bytes(2e9 + 1e6 * x);
      s.add_memory_limit_bytes(8e9);
      s.add_cpu_percent(x / 3);
      s.add_executing_tasks(static_cast<int>(x) % 3);
      s.add_active_tasks(static_cast<int>(x) % (active_is_executing ? 3 : 5));
      s.add_cores(4);
    }
  }
  return m;
}

// `collect report`'s way: loaded without records and, in parts, with the series cut (and
// surveyed as read, `survey_while_loading`), the records and the series streamed from the
// files. `*survey_used`: the survey made while loading stood for the first pass.
std::string StreamedReport(const std::string& directory, bool survey_while_loading,
                           bool* survey_used) {
  HtmlReportOptions html;
  WorkerLinesSurvey survey(html.plots.max_legend_entries);
  LoadOptions options;
  options.chunk_records = false;
  options.chunk_info = false;
  options.whole_worker_series = !SavedInParts(directory);
  if (survey_while_loading) {
    options.visit_whole_worker_series = [&survey](const v1::WorkerSeries& s,
                                                  const v1::Measurement& so_far) {
      survey.Visit(s, so_far);
    };
  }
  absl::StatusOr<v1::Measurement> m = LoadMeasurement(directory, options);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return "";
  ReportChunks chunks;
  EXPECT_TRUE(ForEachSerializedChunkRecord(directory, [&](absl::string_view bytes) {
                EXPECT_TRUE(chunks.AddSerialized(bytes));
                return absl::OkStatus();
              }).ok());
  absl::StatusOr<ReportWorkerLines> lines =
      StreamReportWorkerLines(directory, *m, chunks, html.plots.max_legend_entries, &survey);
  EXPECT_TRUE(lines.ok()) << lines.status();
  if (!lines.ok()) return "";
  *survey_used = survey.used();
  html.plots.worker_lines = &*lines;
  return RenderHtmlReport(*m, chunks, html);
}

// The report of `run` saved (in parts or not) is the same streamed as from the whole series;
// `binned`: its crowded charts are drawn in time bins.
void ExpectSameReport(const v1::Measurement& run, const std::string& name, bool in_parts,
                      bool binned = false) {
  if (in_parts) store_internal::SetSegmentThresholdBytesForTesting(1);
  const char* tmp = std::getenv("TEST_TMPDIR");
  absl::StatusOr<std::string> saved = SaveMeasurement(run, tmp != nullptr ? tmp : "/tmp", name);
  store_internal::SetSegmentThresholdBytesForTesting(store_internal::kDefaultSegmentThresholdBytes);
  ASSERT_TRUE(saved.ok()) << saved.status();
  absl::StatusOr<v1::Measurement> whole = LoadMeasurement(*saved);
  ASSERT_TRUE(whole.ok()) << whole.status();
  const std::string expected = RenderHtmlReport(*whole);
  ASSERT_NE(expected.find("plot-memory"), std::string::npos);
  ASSERT_EQ(expected.find("time bins (of") != std::string::npos, binned) << name;
  for (const bool survey_while_loading : {false, true}) {
    bool survey_used = false;
    EXPECT_EQ(StreamedReport(*saved, survey_while_loading, &survey_used), expected)
        << name << " " << survey_while_loading;
    // Used when made, in parts, with the start time as the plots' origin.
    EXPECT_EQ(survey_used, survey_while_loading && in_parts && run.metadata().has_start_time())
        << name;
  }
}

// Above kMaxLinePoints instants: the mean band and the sums in time bins.
TEST(ReportWorkerStreamTest, CrowdedChartsInTimeBinsAreThoseOfTheWholeSeries) {
  ExpectSameReport(TrackedRun(40, 100, 1000, /*step=*/false), "binned", /*in_parts=*/true,
                   /*binned=*/true);
  ExpectSameReport(TrackedRun(40, 100, 1000, /*step=*/true), "binned-step", /*in_parts=*/true,
                   /*binned=*/true);
}

// Without a start time the plots' origin is the earliest instant, known only once everything
// is read: the survey made while loading is not used, the series are read twice more.
TEST(ReportWorkerStreamTest, WithoutAStartTimeTheSeriesAreSurveyedAfterTheLoad) {
  v1::Measurement run = TrackedRun(40, 100, 1000, /*step=*/false);
  run.mutable_metadata()->clear_start_time();
  ExpectSameReport(run, "no-start", /*in_parts=*/true, /*binned=*/true);
}

// At most kMaxLinePoints instants (every worker sampled at the same instants): per instant.
TEST(ReportWorkerStreamTest, CrowdedChartsAtInstantsAreThoseOfTheWholeSeries) {
  ExpectSameReport(TrackedRun(30, 100, 0, /*step=*/false), "instants", /*in_parts=*/true);
}

// Few workers: one line per distinct series, the repeated ones named for all of theirs.
TEST(ReportWorkerStreamTest, FewWorkersAreDrawnOneByOneAsFromTheWholeSeries) {
  ExpectSameReport(TrackedRun(6, 50, 1000, /*step=*/true), "few", /*in_parts=*/true);
  ExpectSameReport(TrackedRun(6, 50, 1000, /*step=*/false), "few-single", /*in_parts=*/false);
}

// Active tasks equal to executing ones (a TaskVine run): said in a sentence, their lines not made.
TEST(ReportWorkerStreamTest, ActiveTasksEqualToExecutingOnesAreASentenceAsFromTheWholeSeries) {
  const v1::Measurement run =
      TrackedRun(40, 100, 1000, /*step=*/true, /*active_is_executing=*/true);
  ExpectSameReport(run, "active-is-executing", /*in_parts=*/true, /*binned=*/true);
  ReportWorkerLines lines = ReportWorkerLinesOf(run, kT0, 10);
  ASSERT_TRUE(lines.any_active());
  EXPECT_TRUE(lines.active_equals_executing());
  EXPECT_GT(lines.lines(WorkerFigure::kActive).series, 0u);
  EXPECT_TRUE(lines.lines(WorkerFigure::kActive).lines.empty());
  EXPECT_FALSE(lines.lines(WorkerFigure::kExecuting).lines.empty());
  const std::string html = RenderHtmlReport(run);
  EXPECT_NE(html.find("active tasks equal executing tasks at every sample"), std::string::npos);
}

}  // namespace
}  // namespace roastcoffea
