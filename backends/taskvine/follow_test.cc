// --follow: the backend follows the run the command starts, never an earlier finished one; it
// reads the logs to their end before any figure; a truncated or rotated log is read again.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "backends/contributed_testing.h"
#include "backends/taskvine/taskvine_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "host/fake_clock.h"
#include "schema/raw_run.h"

namespace roastcoffea {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Property;

std::string TempDir(const std::string& name) {
  const char* dir = getenv("TEST_TMPDIR");
  const std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
  mkdir(path.c_str(), 0755);
  return path;
}

void Write(const std::string& path, const std::string& text, const char* mode = "wb") {
  FILE* f = fopen(path.c_str(), mode);
  ASSERT_NE(f, nullptr) << path;
  fwrite(text.data(), 1, text.size(), f);
  fclose(f);
}

// A whole run of one worker (`worker`, 2 cores) and one task of 3 s, starting at `start_us`.
std::string RunLog(int64_t start_us, const std::string& worker, bool with_end = true) {
  const auto at = [&](double s) { return absl::StrCat(start_us + static_cast<int64_t>(s * 1e6)); };
  std::string log = absl::StrCat(
      at(0), " 7 MANAGER 7 START 0\n", at(0.1),
      " 7 TASK 1 READY processing FIRST_RESOURCES 1 {\"cores\":[1,\"cores\"]}\n", at(0.2),
      " 7 WORKER ", worker, " CONNECTION 127.0.0.1:9000\n", at(0.2), " 7 WORKER ", worker,
      " RESOURCES {\"memory\":[1000,\"MB\"],\"disk\":[1000,\"MB\"],\"cores\":[2,\"cores\"]}\n",
      at(0.3), " 7 TASK 1 RUNNING ", worker, " FIRST_RESOURCES {\"cores\":[1,\"cores\"]}\n",
      at(3.4), " 7 TASK 1 WAITING_RETRIEVAL ", worker, "\n");
  const double t0 = start_us * 1e-6;
  absl::StrAppend(&log, at(3.5), " 7 TASK 1 RETRIEVED SUCCESS 0 {} {\"time_worker_start\":[",
                  absl::StrFormat("%.6f", t0 + 0.31), ",\"s\"],\"time_worker_end\":[",
                  absl::StrFormat("%.6f", t0 + 3.42), ",\"s\"]}\n", at(3.5),
                  " 7 TASK 1 DONE SUCCESS 0\n", at(4.0), " 7 WORKER ", worker,
                  " DISCONNECTION EXPLICIT\n");
  if (with_end) absl::StrAppend(&log, at(4.1), " 7 MANAGER 7 END 0\n");
  return log;
}

std::string MakeRun(const std::string& run_info, const std::string& name, const std::string& log) {
  const std::string run = run_info + "/" + name;
  mkdir(run.c_str(), 0755);
  mkdir((run + "/vine-logs").c_str(), 0755);
  Write(run + "/vine-logs/transactions", log);
  return run;
}

void PointMostRecent(const std::string& run_info, const std::string& name) {
  const std::string link = run_info + "/most-recent";
  unlink(link.c_str());
  ASSERT_EQ(symlink(name.c_str(), link.c_str()), 0);
}

double Metric(const v1::Span& span, const std::string& activity, const std::string& worker = "") {
  for (const v1::FineMetric& m : span.metrics()) {
    if (m.activity() == activity && m.worker() == worker) return m.value();
  }
  ADD_FAILURE() << "no metric " << activity << " " << worker;
  return -1;
}

const int64_t kOneHourAgoUs = absl::ToUnixMicros(absl::Now() - absl::Hours(1));

// The follow period of StartTracking(interval) for any interval of the tests (it is at most
// 0.5 s): one Advance by it is one poll of the follower.
constexpr absl::Duration kFollowPeriod = absl::Milliseconds(500);

// A clock for the follower that starts at the real time (the logs the tests write carry it).
struct FollowClock : FakeClock {
  FollowClock() : FakeClock(absl::Now()) {}
};

// Lets the follower poll `polls` more times and returns once it waits again: no sleep, and
// exactly that many polls, whatever the machine's load.
void LetTheFollowerPoll(FakeClock& clock, int polls = 1) {
  ASSERT_TRUE(clock.AdvanceInSteps(kFollowPeriod, polls));
}

TaskVineBackendOptions Following(const std::string& logs, Clock& clock) {
  TaskVineBackendOptions options;
  options.logs = logs;
  options.follow = true;
  options.clock = &clock;
  return options;
}

// Moves `clock` on by `step` whenever a thread waits on it, while it lives: for the waits of
// the end-of-run read (kDrainQuietTime), which the test's own thread is in.
class AdvanceWhileWaited {
 public:
  AdvanceWhileWaited(FakeClock& clock, absl::Duration step)
      : thread_([this, &clock, step] {
          while (!stop_) {
            if (clock.WaitForWaiters(1, absl::Milliseconds(10))) clock.Advance(step);
          }
        }) {}
  ~AdvanceWhileWaited() {
    stop_ = true;
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The README's own usage: --taskvine_logs=vine-run-info/most-recent (or vine-run-info) in a
// directory that holds an earlier, finished run. The command's run is a new directory, and
// most-recent is re-pointed to it.
void FollowsTheNewRun(const std::string& spec_suffix) {
  const std::string run_info =
      TempDir(absl::StrCat("vine-run-info", spec_suffix.empty() ? "" : "-mr"));
  MakeRun(run_info, "2026-01-01T000000", RunLog(kOneHourAgoUs, "worker-old"));
  PointMostRecent(run_info, "2026-01-01T000000");

  FollowClock clock;
  TaskVineMetricsBackend backend(Following(run_info + spec_suffix, clock));
  ASSERT_TRUE(backend.StartTracking(absl::Milliseconds(20)).ok());
  absl::StatusOr<SpanId> span = backend.CreateSpan("run");
  ASSERT_TRUE(span.ok());
  LetTheFollowerPoll(clock, 3);  // the old run is there all along: never followed
  const int64_t now_us = absl::ToUnixMicros(absl::Now());
  MakeRun(run_info, "2026-01-01T010000", RunLog(now_us, "worker-new"));
  PointMostRecent(run_info, "2026-01-01T010000");
  ASSERT_TRUE(backend.EndSpan(*span).ok());
  absl::StatusOr<v1::Span> metrics = backend.GetSpanMetrics(*span);
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  absl::StatusOr<v1::TrackingData> tracking = backend.StopTracking();
  ASSERT_TRUE(tracking.ok()) << tracking.status();
  ASSERT_EQ(tracking->workers_size(), 1);
  EXPECT_EQ(tracking->workers(0).worker(), "worker-new");
  EXPECT_EQ(backend.ModelSnapshot().Figures().start_us, now_us);
  EXPECT_NEAR(Metric(*metrics, "execute"), 3.11, 1e-6);
}

TEST(TaskVineFollow, MostRecentFollowsTheRunStartedAfterTracking) {
  FollowsTheNewRun("/most-recent");
}
TEST(TaskVineFollow, RunInfoFollowsTheRunStartedAfterTracking) { FollowsTheNewRun(""); }

// A finished run named directly is never measured as live.
TEST(TaskVineFollow, FinishedRunIsAnError) {
  const std::string run =
      MakeRun(TempDir("finished-info"), "run", RunLog(kOneHourAgoUs, "worker-old"));
  FollowClock clock;
  TaskVineMetricsBackend backend(Following(run, clock));
  ASSERT_TRUE(backend.StartTracking(absl::Milliseconds(20)).ok());
  LetTheFollowerPoll(clock, 2);
  absl::StatusOr<v1::TrackingData> tracking = backend.StopTracking();
  EXPECT_EQ(tracking.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(tracking.status().message(), HasSubstr("had already ended"));
}

// The command returns; the manager's last records (the task's retrieval, the disconnection,
// END) land after the follower's last poll. EndSpan reads them before any figure.
TEST(TaskVineFollow, ReadsToTheEndBeforeComputing) {
  const std::string run = TempDir("drain");
  mkdir((run + "/vine-logs").c_str(), 0755);
  FollowClock clock;
  TaskVineMetricsBackend backend(Following(run, clock));
  ASSERT_TRUE(backend.StartTracking(absl::Seconds(10)).ok());  // polls every 0.5 s
  absl::StatusOr<SpanId> span = backend.CreateSpan("run");
  ASSERT_TRUE(span.ok());
  const int64_t now_us = absl::ToUnixMicros(absl::Now());
  const std::string log = RunLog(now_us, "worker-a");
  const size_t cut = log.find(" 7 TASK 1 WAITING_RETRIEVAL");
  Write(run + "/vine-logs/transactions", log.substr(0, log.rfind('\n', cut) + 1));
  LetTheFollowerPoll(clock);  // the follower has read the first part
  std::thread manager([&] {
    // Still writing after the command returned: once the end-of-run read waits (beside the
    // follower) for more.
    ASSERT_TRUE(clock.WaitForWaiters(2));
    Write(run + "/vine-logs/transactions", log.substr(log.rfind('\n', cut) + 1), "ab");
    clock.Advance(absl::Milliseconds(50));
  });
  ASSERT_TRUE(backend.EndSpan(*span).ok());
  manager.join();
  absl::StatusOr<v1::Span> metrics = backend.GetSpanMetrics(*span);
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_NEAR(Metric(*metrics, "execute"), 3.11, 1e-6);
  EXPECT_NEAR(Metric(*metrics, "lifetime", "worker-a"), 3.8, 1e-6);
  ASSERT_TRUE(backend.StopTracking().ok());
}

// The transactions log is truncated (and a new run written) while it is followed: read again
// from its start, with a warning.
TEST(TaskVineFollow, TruncatedLogIsReadAgainWithAWarning) {
  const std::string run = TempDir("truncated");
  mkdir((run + "/vine-logs").c_str(), 0755);
  FollowClock clock;
  TaskVineMetricsBackend backend(Following(run, clock));
  ASSERT_TRUE(backend.StartTracking(absl::Milliseconds(20)).ok());
  const int64_t now_us = absl::ToUnixMicros(absl::Now());
  Write(run + "/vine-logs/transactions", RunLog(now_us, "worker-first-with-a-long-name", false));
  LetTheFollowerPoll(clock);
  Write(run + "/vine-logs/transactions", RunLog(now_us + 10, "worker-b"));  // "wb": truncates
  LetTheFollowerPoll(clock);
  absl::StatusOr<v1::TrackingData> tracking = backend.StopTracking();
  ASSERT_TRUE(tracking.ok()) << tracking.status();
  ASSERT_EQ(tracking->workers_size(), 1);
  EXPECT_EQ(tracking->workers(0).worker(), "worker-b");
  EXPECT_THAT(ContributedWarnings(backend),
              Contains(Property(&v1::Warning::code, "taskvine_log_restarted")));
}

// Rotated: renamed away and a new file created; the rest of the old file, then the new one.
TEST(TaskVineFollow, RotatedLogIsFollowedIntoTheNewFile) {
  const std::string run = TempDir("rotated");
  mkdir((run + "/vine-logs").c_str(), 0755);
  const std::string txn = run + "/vine-logs/transactions";
  FollowClock clock;
  TaskVineMetricsBackend backend(Following(run, clock));
  ASSERT_TRUE(backend.StartTracking(absl::Milliseconds(20)).ok());
  const std::string log = RunLog(absl::ToUnixMicros(absl::Now()), "worker-a");
  const size_t half = log.find(" 7 TASK 1 RUNNING");
  const size_t split = log.rfind('\n', half) + 1;
  Write(txn, log.substr(0, split));
  LetTheFollowerPoll(clock);
  ASSERT_EQ(rename(txn.c_str(), (txn + ".1").c_str()), 0);
  Write(txn, log.substr(split));
  LetTheFollowerPoll(clock);
  ASSERT_TRUE(backend.StopTracking().ok());
  const taskvine::RunFigures f = backend.ModelSnapshot().Figures();
  EXPECT_TRUE(f.ended);
  EXPECT_NEAR(f.execute_seconds, 3.11, 1e-6);
  EXPECT_THAT(ContributedWarnings(backend),
              Contains(Property(&v1::Warning::code, "taskvine_log_restarted")));
  // Its path was empty only between the rename and the new file: not a deleted log.
  EXPECT_THAT(ContributedWarnings(backend),
              Not(Contains(Property(&v1::Warning::code, "taskvine_log_deleted"))));
}

// Deleted while followed (reliability study 2, N12): what the file held is kept and a warning
// names the log and what the measurement holds.
TEST(TaskVineFollow, DeletedLogIsKeptWithAWarning) {
  const std::string run = TempDir("deleted");
  mkdir((run + "/vine-logs").c_str(), 0755);
  const std::string txn = run + "/vine-logs/transactions";
  const std::string log = RunLog(absl::ToUnixMicros(absl::Now()), "worker-a", false);
  const std::string half = log.substr(0, log.rfind('\n', log.find(" 7 TASK 1 RETRIEVED")) + 1);
  Write(txn, half);
  FollowClock clock;
  TaskVineMetricsBackend backend(Following(run, clock));
  ASSERT_TRUE(backend.StartTracking(absl::Milliseconds(20)).ok());
  LetTheFollowerPoll(clock);
  ASSERT_EQ(unlink(txn.c_str()), 0);
  LetTheFollowerPoll(clock);
  absl::StatusOr<v1::TrackingData> tracking = backend.StopTracking();
  ASSERT_TRUE(tracking.ok()) << tracking.status();
  ASSERT_EQ(tracking->workers_size(), 1);
  EXPECT_EQ(tracking->workers(0).worker(), "worker-a");
  bool named = false;
  for (const v1::Warning& w : ContributedWarnings(backend)) {
    if (w.code() != "taskvine_log_deleted") continue;
    named = true;
    EXPECT_THAT(w.message(), HasSubstr(txn));
    EXPECT_THAT(w.message(), HasSubstr(absl::StrCat(half.size(), " bytes")));
  }
  EXPECT_TRUE(named);
}

// The transactions log is rotated to something that is not a log (a FIFO, /dev/zero, a
// directory) while it is followed: the end of tracking comes at once, the run read so far is
// kept, and a warning names the replaced log.
void FollowIntoAReplacement(const std::string& name,
                            const std::function<void(const std::string&)>& replace,
                            const std::string& what) {
  const std::string run = TempDir(name);
  mkdir((run + "/vine-logs").c_str(), 0755);
  const std::string txn = run + "/vine-logs/transactions";
  const std::string log = RunLog(absl::ToUnixMicros(absl::Now()), "worker-a", false);
  Write(txn, log.substr(0, log.rfind('\n', log.find(" 7 TASK 1 RETRIEVED")) + 1));
  FollowClock clock;
  TaskVineMetricsBackend backend(Following(run, clock));
  ASSERT_TRUE(backend.StartTracking(absl::Milliseconds(20)).ok());
  absl::StatusOr<SpanId> span = backend.CreateSpan("run");
  ASSERT_TRUE(span.ok());
  LetTheFollowerPoll(clock);
  ASSERT_EQ(rename(txn.c_str(), (txn + ".1").c_str()), 0);
  replace(txn);
  LetTheFollowerPoll(clock);
  AdvanceWhileWaited end_of_run_read(clock, absl::Milliseconds(50));
  const absl::Time stopping = absl::Now();
  ASSERT_TRUE(backend.EndSpan(*span).ok());
  EXPECT_TRUE(backend.GetSpanMetrics(*span).ok());
  absl::StatusOr<v1::TrackingData> tracking = backend.StopTracking();
  EXPECT_LT(absl::Now() - stopping, absl::Seconds(3));
  ASSERT_TRUE(tracking.ok()) << tracking.status();
  ASSERT_EQ(tracking->workers_size(), 1);
  EXPECT_EQ(tracking->workers(0).worker(), "worker-a");
  bool named = false;
  for (const v1::Warning& w : ContributedWarnings(backend)) {
    if (w.code() != "taskvine_log_replaced") continue;
    named = true;
    EXPECT_THAT(w.message(), HasSubstr(txn));
    EXPECT_THAT(w.message(), HasSubstr(what));
  }
  EXPECT_TRUE(named);
}

TEST(TaskVineFollow, LogRotatedToAFifoIsKeptWithAWarning) {
  FollowIntoAReplacement(
      "replaced-fifo", [](const std::string& p) { ASSERT_EQ(mkfifo(p.c_str(), 0600), 0); },
      "a FIFO");
}
TEST(TaskVineFollow, LogRotatedToDevZeroIsKeptWithAWarning) {
  FollowIntoAReplacement(
      "replaced-devzero",
      [](const std::string& p) { ASSERT_EQ(symlink("/dev/zero", p.c_str()), 0); },
      "a character device");
}
TEST(TaskVineFollow, LogRotatedToADirectoryIsKeptWithAWarning) {
  FollowIntoAReplacement(
      "replaced-dir", [](const std::string& p) { ASSERT_EQ(mkdir(p.c_str(), 0700), 0); },
      "a directory");
}

// A writer that never stops (and never writes a newline): the end of tracking still comes
// within kDrainMaxTime, with a warning that the log was cut short.
TEST(TaskVineFollow, AnEndlessWriterCannotHoldTheEnd) {
  const std::string run = TempDir("endless");
  mkdir((run + "/vine-logs").c_str(), 0755);
  const std::string txn = run + "/vine-logs/transactions";
  Write(txn, RunLog(absl::ToUnixMicros(absl::Now()), "worker-a", false));
  FollowClock clock;
  TaskVineMetricsBackend backend(Following(run, clock));
  ASSERT_TRUE(backend.StartTracking(absl::Milliseconds(20)).ok());
  constexpr absl::Duration kPerMiB = absl::Milliseconds(100);
  std::atomic<bool> stop{false};
  absl::Notification writing;
  std::thread writer([&] {
    const std::string junk(1 << 20, 'x');
    // At most 512 MiB: the disk of a slow (sanitizer) run must not fill. The clock moves
    // kPerMiB per MiB written: the end-of-run read's kDrainMaxTime is over after 100 more.
    for (int mib = 0; mib < 512 && !stop.load(); ++mib) {
      Write(txn, junk, "ab");
      if (!writing.HasBeenNotified()) writing.Notify();
      clock.Advance(kPerMiB);
    }
  });
  writing.WaitForNotification();
  const absl::Duration stopping = clock.Monotonic();
  absl::StatusOr<v1::TrackingData> tracking = backend.StopTracking();
  const absl::Duration took = clock.Monotonic() - stopping;
  stop = true;
  writer.join();
  unlink(txn.c_str());  // do not leave gigabytes behind
  ASSERT_TRUE(tracking.ok()) << tracking.status();
  // The deadline is checked between polls, each of which reads at most 64 MiB (and meanwhile
  // the writer moves the clock).
  EXPECT_LE(took, TaskVineMetricsBackend::kDrainMaxTime + 64 * kPerMiB + absl::Seconds(1));
  EXPECT_EQ(tracking->workers_size(), 1);
}

// Collect started while the run is going (attached late), naming most-recent, vine-run-info or
// the run's own directory: the live run is followed from its start, every figure is framed by
// the run's own record (one window), and all three give the same figures. Earlier runs and
// entries that are not runs (vine-cache) are not followed.
v1::Span AttachLate(const std::string& name, const std::string& spec_suffix, int64_t* window_us) {
  const std::string run_info = TempDir(name);
  MakeRun(run_info, "2026-01-01T000000", RunLog(kOneHourAgoUs, "worker-old"));
  mkdir((run_info + "/vine-cache").c_str(), 0755);
  // Started 2 s ago; the first half (up to the task's retrieval) is written.
  const int64_t start_us = absl::ToUnixMicros(absl::Now() - absl::Seconds(2));
  const std::string log = RunLog(start_us, "worker-live");
  const size_t split = log.rfind('\n', log.find(" 7 TASK 1 WAITING_RETRIEVAL")) + 1;
  const std::string run = MakeRun(run_info, "2026-01-01T010000", log.substr(0, split));
  PointMostRecent(run_info, "2026-01-01T010000");

  FollowClock clock;
  TaskVineMetricsBackend backend(
      Following(spec_suffix == "DIR" ? run : run_info + spec_suffix, clock));
  EXPECT_TRUE(backend.StartTracking(absl::Milliseconds(20)).ok());
  absl::StatusOr<SpanId> span = backend.CreateSpan("run");
  EXPECT_TRUE(span.ok());
  LetTheFollowerPoll(clock, 2);
  Write(run + "/vine-logs/transactions", log.substr(split), "ab");
  EXPECT_TRUE(backend.EndSpan(*span).ok());
  absl::StatusOr<v1::Span> metrics = backend.GetSpanMetrics(*span);
  EXPECT_TRUE(metrics.ok()) << metrics.status();
  absl::StatusOr<v1::TrackingData> tracking = backend.StopTracking();
  EXPECT_TRUE(tracking.ok()) << tracking.status();
  if (!metrics.ok() || !tracking.ok()) return v1::Span();
  EXPECT_EQ(tracking->workers_size(), 1);
  if (tracking->workers_size() == 1) {
    EXPECT_EQ(tracking->workers(0).worker(), "worker-live");
  }
  const RawRun contributed = ContributedRun(backend);
  EXPECT_EQ(contributed.engine_chunks.size(), 1u);
  const std::optional<TaskVineMetricsBackend::RecordedWindow> window = backend.RecordedRunWindow();
  EXPECT_TRUE(window.has_value());
  if (window.has_value()) {
    EXPECT_EQ(absl::ToUnixMicros(window->start), start_us);
    *window_us = absl::ToUnixMicros(window->end) - absl::ToUnixMicros(window->start);
  }
  EXPECT_EQ(metrics->start_unix_ns(), start_us * 1000);
  EXPECT_THAT(contributed.warnings,
              Contains(Property(&v1::Warning::code, "taskvine_attached_late")));
  return *metrics;
}

TEST(TaskVineFollow, AttachesLateToTheRunMostRecentNames) {
  int64_t window_us = 0;
  const v1::Span span = AttachLate("late-mr", "/most-recent", &window_us);
  EXPECT_NEAR(window_us, 4100000, 1);  // START .. END
  EXPECT_NEAR(Metric(span, "execute"), 3.11, 1e-6);
  EXPECT_NEAR(Metric(span, "attempts"), 1, 1e-9);
  EXPECT_NEAR(Metric(span, "lifetime", "worker-live"), 3.8, 1e-6);
  EXPECT_NEAR(Metric(span, "busy", "worker-live"), 3.1, 1e-6);
}

TEST(TaskVineFollow, AttachingLateGivesTheSameFiguresWhateverTheSpec) {
  int64_t mr_us = 0, info_us = 0, dir_us = 0;
  const v1::Span mr = AttachLate("late-same-mr", "/most-recent", &mr_us);
  const v1::Span info = AttachLate("late-same-info", "", &info_us);
  const v1::Span dir = AttachLate("late-same-dir", "DIR", &dir_us);
  EXPECT_NEAR(mr_us, info_us, 1);
  EXPECT_NEAR(mr_us, dir_us, 1);
  for (const char* activity : {"execute", "attempts", "queue-wait"}) {
    EXPECT_NEAR(Metric(mr, activity), Metric(dir, activity), 1e-5) << activity;
    EXPECT_NEAR(Metric(info, activity), Metric(dir, activity), 1e-5) << activity;
  }
  for (const char* activity : {"lifetime", "busy", "utilisation", "allocated-core-seconds"}) {
    EXPECT_NEAR(Metric(mr, activity, "worker-live"), Metric(dir, activity, "worker-live"), 1e-5)
        << activity;
  }
  // Utilisation within [0, 1]: one window (the old defect: 132.6 % from two).
  EXPECT_LE(Metric(dir, "utilisation", "worker-live"), 1.0);
}

// A run that crashed long ago (no MANAGER END, logs untouched for hours) is not "going on":
// collect waits for the next run.
TEST(TaskVineFollow, AStaleRunWithoutEndIsNotAttachedTo) {
  const std::string run_info = TempDir("late-stale");
  const std::string stale =
      MakeRun(run_info, "2026-01-01T000000", RunLog(kOneHourAgoUs, "worker-old", false));
  PointMostRecent(run_info, "2026-01-01T000000");
  const struct timespec old_times[2] = {{0, UTIME_OMIT}, {time(nullptr) - 7200, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, (stale + "/vine-logs/transactions").c_str(), old_times, 0), 0);
  FollowClock clock;
  TaskVineMetricsBackend backend(Following(run_info + "/most-recent", clock));
  ASSERT_TRUE(backend.StartTracking(absl::Milliseconds(20)).ok());
  LetTheFollowerPoll(clock, 2);
  absl::StatusOr<v1::TrackingData> tracking = backend.StopTracking();
  EXPECT_EQ(tracking.status().code(), absl::StatusCode::kNotFound);
  // Only real run directories are counted (not most-recent, not vine-cache).
  EXPECT_THAT(tracking.status().message(), HasSubstr("(1 earlier run ignored)"));
}

// The live view (#26): as the manager logs DONE for tasks of the chunk category, LiveProgress
// counts them (a failed one as failed, a dispatched one as running), with the workers connected
// and their cores; its last counts are the chunk records of the run.
TEST(TaskVineFollow, LiveProgressCountsChunksAsTheirDoneLinesArrive) {
  const std::string run = TempDir("live");
  mkdir((run + "/vine-logs").c_str(), 0755);
  const std::string log = run + "/vine-logs/transactions";
  FollowClock clock;
  TaskVineMetricsBackend backend(Following(run, clock));
  ASSERT_TRUE(backend.StartTracking(absl::Milliseconds(20)).ok());
  EXPECT_FALSE(backend.LiveProgress().has_value()) << "no run yet";
  int64_t t = absl::ToUnixMicros(absl::Now());
  const auto line = [&](const std::string& rest) { return absl::StrCat(t += 1000, " 7 ", rest); };
  Write(log, absl::StrCat(line("MANAGER 7 START 0\n"), line("WORKER w CONNECTION 127.0.0.1:9\n"),
                          line("WORKER w RESOURCES {\"memory\":[1024,\"MB\"],\"cores\":[4,"
                               "\"cores\"]}\n")));
  // What the follower's next poll reads of what was written.
  const auto live_after_a_poll = [&] {
    LetTheFollowerPoll(clock);
    return backend.LiveProgress().value_or(BackendLiveProgress());
  };
  for (int task = 1; task <= 5; ++task) {
    const std::string id = absl::StrCat(task);
    Write(
        log,
        absl::StrCat(line("TASK " + id + " READY processing FIRST_RESOURCES 1 {}\n"),
                     line("TASK " + id + " RUNNING w FIRST_RESOURCES {\"cores\":[1,\"cores\"]}\n")),
        "ab");
    BackendLiveProgress running = live_after_a_poll();
    EXPECT_EQ(running.tasks_by_prefix["processing"].running, 1) << task;
    EXPECT_EQ(running.workers, 1);
    EXPECT_EQ(running.cores, 4);
    EXPECT_EQ(running.memory_limit_bytes, 1024.0 * 1024 * 1024);
    const std::string result = task == 3 ? "FAILURE 1" : "SUCCESS 0";
    Write(log,
          absl::StrCat(line("TASK " + id + " WAITING_RETRIEVAL w\n"),
                       line("TASK " + id + " RETRIEVED " + result + " {} {}\n"),
                       line("TASK " + id + " DONE " + result + "\n")),
          "ab");
    BackendLiveProgress done = live_after_a_poll();
    const BackendLiveProgress::TaskCounts counts = done.tasks_by_prefix["processing"];
    EXPECT_EQ(counts.done + counts.failed, task) << "rises with each DONE line";
    EXPECT_EQ(counts.failed, task >= 3 ? 1 : 0);
    EXPECT_EQ(counts.running, 0);
  }
  Write(log, absl::StrCat(line("WORKER w DISCONNECTION EXPLICIT\n"), line("MANAGER 7 END 0\n")),
        "ab");
  ASSERT_TRUE(backend.StopTracking().ok());
  const std::optional<BackendLiveProgress> last = backend.LiveProgress();
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->workers, 0);
  const std::vector<v1::ChunkRecord> chunks = RecordsOf(ContributedRun(backend).engine_chunks);
  int failed = 0;
  for (const v1::ChunkRecord& chunk : chunks) {
    failed += chunk.status() == v1::CHUNK_STATUS_FAILED ? 1 : 0;
  }
  const BackendLiveProgress::TaskCounts counts = last->tasks_by_prefix.at("processing");
  EXPECT_EQ(counts.done + counts.failed, static_cast<int64_t>(chunks.size()));
  EXPECT_EQ(counts.failed, failed);
  // Contribute after StopTracking handed the run over (#25): the session measures and saves
  // with the backend alive, which then holds neither the tasks nor the workers' steps; the
  // live view keeps its last figures.
  const taskvine::RunModel after = backend.ModelSnapshot();
  EXPECT_EQ(after.tasks().size(), 0u);
  ASSERT_EQ(after.workers().size(), 1u);
  EXPECT_THAT(after.workers()[0].series, testing::IsEmpty());
  const std::optional<BackendLiveProgress> kept = backend.LiveProgress();
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->tasks_by_prefix.at("processing").done, counts.done);
  EXPECT_EQ(kept->tasks_by_prefix.at("processing").failed, counts.failed);
}

}  // namespace
}  // namespace roastcoffea
