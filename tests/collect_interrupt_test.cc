// SIGINT in the middle of a real collect run, in each mode: the exit status (130), the saved
// measurement, its interrupted flag and its chunks.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "backends/dask/fake_scheduler.h"
#include "backends/dask/fixtures.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"
#include "tests/child_process.h"
#include "tests/collect_runner.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Collect() {
  return std::string(std::getenv("TEST_SRCDIR")) + "/roastcoffea/tools/collect";
}

std::vector<std::string> Environment() {
  return {absl::StrCat("TEST_TMPDIR=", TempDir()), "PATH=/usr/bin:/bin",
          absl::StrCat("HOME=", TempDir())};
}

bool WaitForFile(const std::string& path, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (access(path.c_str(), F_OK) == 0) return true;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return false;
}

// Waits until `log` holds `text`.
bool WaitForLog(const std::string& log, const std::string& text, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (ReadFile(log).find(text) != std::string::npos) return true;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return false;
}

// True once something accepts TCP connections on 127.0.0.1:port.
bool WaitForPort(int port, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool connected = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
    close(fd);
    if (connected) return true;
    absl::SleepFor(absl::Milliseconds(100));
  }
  return false;
}

std::string ChunkRecordsCommand(const std::string& marker) {
  return absl::StrCat(R"(echo '[{"file": "a.root", "entry_start": 0, "entry_stop": 10,
                                 "num_events": 10, "t_start": 100, "t_end": 101},
                                {"file": "a.root", "entry_start": 10, "entry_stop": 20,
                                 "num_events": 10, "t_start": 101, "t_end": 102}]' \
                         > "$ROASTCOFFEA_CHUNK_RECORDS"; touch )",
                      marker, "; exec sleep 60");
}

// The sample analysis on one thread, chunks small enough that the run takes many seconds; the
// dataset generated beforehand so that the signal lands in the run, not in the generation.
TEST(CollectInterruptTest, ThreadPoolRunStopsHandingOutWorkAndSavesWhatWasDone) {
  const std::string cache = TempDir() + "/cache";
  const std::string output = TempDir() + "/threadpool";
  const std::vector<std::string> dataset = {"--events_per_file=20000", "--files_per_dataset=1",
                                            "--cache_dir=" + cache,    "--threads=1",
                                            "--interval=0.05",         "--output_dir=" + output};
  std::vector<std::string> generate = dataset;
  generate.push_back("--name=generate");
  ASSERT_EQ(RunCollect(generate).exit_code, 0);

  std::vector<std::string> argv = {Collect(), "--chunk_size=5", "--name=interrupted"};
  argv.insert(argv.end(), dataset.begin(), dataset.end());
  const std::string log = TempDir() + "/threadpool.log";
  ChildProcess collect(argv, Environment(), log);
  ASSERT_TRUE(collect.started());
  ASSERT_TRUE(WaitForLog(log, "sample dataset in", absl::Seconds(30)));
  absl::SleepFor(absl::Seconds(1.5));
  const absl::Time sent = absl::Now();
  ASSERT_EQ(kill(collect.pid(), SIGINT), 0);
  const int exit_code = collect.Wait(absl::Seconds(30));
  EXPECT_EQ(exit_code, 130) << ReadFile(log);
  EXPECT_LT(absl::Now() - sent, absl::Seconds(10)) << "honoured within the grace period";
  EXPECT_THAT(ReadFile(log), HasSubstr("interrupted (SIGINT while running)"));
  EXPECT_THAT(ReadFile(log), HasSubstr("Measurement saved to " + output + "/interrupted"));

  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(output + "/interrupted");
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_TRUE(saved->metadata().interrupted());
  EXPECT_EQ(saved->metadata().interruption(), "SIGINT while running");
  // 3 datasets x 1 file x 20000 events in chunks of 5: 12000 chunks, far from all done.
  EXPECT_GT(saved->chunks_size(), 0);
  EXPECT_LT(saved->chunks_size(), 12000);
  EXPECT_EQ(saved->metrics().chunks().num_chunks(), saved->chunks_size());
  EXPECT_TRUE(saved->has_tracking());
  bool not_started = false;
  for (const v1::Warning& warning : saved->warnings()) {
    not_started |= warning.code() == "interrupted" &&
                   warning.message().find("chunks not started") != std::string::npos;
  }
  EXPECT_TRUE(not_started);

  const CollectOutcome show = RunCollect({"show", output + "/interrupted", "--tables=ascii"});
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr("Interrupted (SIGINT while running)"));
}

// A signal while the sample dataset is generated (first use): nothing was measured, so collect
// exits 130 at the next file with a message saying so, and leaves nothing in the cache.
TEST(CollectInterruptTest, ASignalWhileTheDatasetIsGeneratedLeavesNoHalfWrittenCache) {
  const std::string cache = TempDir() + "/cache-generating";
  const std::string output = TempDir() + "/generating";
  const std::string log = TempDir() + "/generating.log";
  ChildProcess collect({Collect(), "--events_per_file=100000", "--files_per_dataset=20",
                        "--cache_dir=" + cache, "--output_dir=" + output, "--name=never"},
                       Environment(), log);
  ASSERT_TRUE(WaitForLog(log, "generating: 6/60 files", absl::Seconds(60))) << ReadFile(log);
  const absl::Time sent = absl::Now();
  ASSERT_EQ(kill(collect.pid(), SIGINT), 0);
  EXPECT_EQ(collect.Wait(absl::Seconds(60)), 130) << ReadFile(log);
  EXPECT_LT(absl::Now() - sent, absl::Seconds(3)) << "one file of 100000 events at most";
  EXPECT_THAT(ReadFile(log), HasSubstr("interrupted (SIGINT while generating the sample "
                                       "dataset): nothing was measured, so nothing is saved"));
  std::error_code error;
  EXPECT_TRUE(std::filesystem::is_empty(cache, error)) << "no half-written dataset";
  EXPECT_FALSE(std::filesystem::exists(output + "/never"));
}

// The reliability study's D8 start-up window: a signal before the run's own policy is in
// place (start-up, between the dataset preparation and the session) used to kill collect
// silently. Whatever phase it lands in, collect exits 130 and says why.
TEST(CollectInterruptTest, ASignalAtStartUpExits130WithAWord) {
  const std::string cache = TempDir() + "/cache-startup";
  // Generated first, so that the signals land at start-up, in the moment between the dataset
  // check and the session, or in the run (the generation has its own test above).
  ASSERT_EQ(RunCollect({"--events_per_file=200000", "--files_per_dataset=2", "--cache_dir=" + cache,
                        "--threads=1", "--output_dir=" + TempDir() + "/startup", "--name=generate"})
                .exit_code,
            0);
  // Before main runs (the dynamic loader) no program can catch a signal: each one is sent once
  // the process catches SIGINT (/proc/PID/status SigCgt), then after a delay.
  const auto catches_sigint = [](pid_t pid) {
    std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("SigCgt:", 0) != 0) continue;
      const uint64_t mask = std::stoull(line.substr(7), nullptr, 16);
      return (mask >> (SIGINT - 1) & 1) != 0;
    }
    return false;
  };
  for (const int delay_ms : {0, 5, 20, 80, 160}) {
    const std::string log = absl::StrCat(TempDir(), "/startup-", delay_ms, ".log");
    // 1.2 M events: the run lasts well beyond the last signal, however fast the machine.
    ChildProcess collect(
        {Collect(), "--events_per_file=200000", "--files_per_dataset=2", "--cache_dir=" + cache,
         "--threads=1", "--output_dir=" + TempDir() + "/startup",
         absl::StrCat("--name=startup-", delay_ms)},
        Environment(), log);
    ASSERT_TRUE(collect.started());
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (!catches_sigint(collect.pid()) && absl::Now() < deadline) {
      absl::SleepFor(absl::Microseconds(200));
    }
    absl::SleepFor(absl::Milliseconds(delay_ms));
    ASSERT_EQ(kill(collect.pid(), SIGINT), 0);
    EXPECT_EQ(collect.Wait(absl::Seconds(30)), 130)
        << "after " << delay_ms << " ms: " << ReadFile(log);
    EXPECT_THAT(ReadFile(log), HasSubstr("SIGINT")) << "after " << delay_ms << " ms";
  }
}

// A run killed with SIGKILL (nothing can be caught) leaves its last checkpoint, which `show`
// reads by the run's name, marked partial, with the chunks measured up to then.
TEST(CollectInterruptTest, ARunKilledWithSigkillLeavesAPartialMeasurement) {
  const std::string cache = TempDir() + "/cache-sigkill";
  const std::string out = TempDir() + "/sigkill";
  // 1.2 M events on one thread: several seconds, far beyond the first checkpoints.
  const std::vector<std::string> dataset = {"--events_per_file=200000", "--files_per_dataset=2",
                                            "--chunk_size=10000", "--cache_dir=" + cache,
                                            "--threads=1"};
  std::vector<std::string> generate = dataset;
  generate.insert(generate.end(), {"--output_dir=" + out, "--name=generate"});
  ASSERT_EQ(RunCollect(generate).exit_code, 0);
  std::vector<std::string> argv = {Collect()};
  argv.insert(argv.end(), dataset.begin(), dataset.end());
  argv.insert(argv.end(), {"--output_dir=" + out, "--name=killed", "--checkpoint_interval=0.2"});
  const std::string log = TempDir() + "/sigkill.log";
  ChildProcess collect(argv, Environment(), log);
  ASSERT_TRUE(collect.started());
  // Until a checkpoint holds chunks: its file grows past the metadata entry.
  const std::string file = out + "/killed.checkpoint/checkpoint.pbs";
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  struct stat info {};
  while (absl::Now() < deadline && (stat(file.c_str(), &info) != 0 || info.st_size < 2000)) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_GE(info.st_size, 2000) << ReadFile(log);
  collect.Kill();
  const CollectOutcome show = RunCollect({"show", out + "/killed", "--tables=ascii"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr("without saving")) << show.out;
  EXPECT_THAT(show.out + show.err, HasSubstr("partial")) << show.out << show.err;
  // The thread pool's tracking series went to the checkpoint too (#25).
  EXPECT_THAT(show.out, HasSubstr("with the tracking series checkpointed so far")) << show.out;
  const CollectOutcome csv = RunCollect({"show", out + "/killed.checkpoint", "--format=csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_THAT(csv.out, HasSubstr("\nnum_chunks,")) << csv.out;
  EXPECT_THAT(csv.out, HasSubstr("\npeak_workers,1")) << csv.out;  // --threads=1
  EXPECT_THAT(csv.out, HasSubstr("\npeak_memory_bytes,")) << csv.out;
}

// First use says the dataset is generated, with its size; the next run says it is reused.
TEST(CollectInterruptTest, TheDatasetIsGeneratedOnceAndThenReused) {
  const std::string cache = TempDir() + "/cache-first-use";
  const std::vector<std::string> flags = {"--events_per_file=2000", "--files_per_dataset=1",
                                          "--cache_dir=" + cache,
                                          "--output_dir=" + TempDir() + "/first-use"};
  std::vector<std::string> first = flags;
  first.push_back("--name=first");
  const CollectOutcome generated = RunCollect(first);
  ASSERT_EQ(generated.exit_code, 0) << generated.err;
  EXPECT_THAT(generated.err, HasSubstr("generating the sample dataset (first use: 3 datasets x "
                                       "1 files x 2000 events) in " +
                                       cache + "/"));
  EXPECT_THAT(generated.err, HasSubstr("generating: 3/3 files, 6.0 k of 6.0 k events"));
  EXPECT_THAT(generated.err, HasSubstr("sample dataset generated in " + cache + "/"));
  std::vector<std::string> second = flags;
  second.push_back("--name=second");
  const CollectOutcome reused = RunCollect(second);
  ASSERT_EQ(reused.exit_code, 0) << reused.err;
  EXPECT_THAT(reused.err, HasSubstr("reusing the sample dataset in " + cache + "/"));
  EXPECT_THAT(reused.err, Not(HasSubstr("generating")));
}

// collect --backend=workqueue assembles its own measurement: Ctrl-C there saves what the tasks
// that came back did, marked interrupted, and exits 130.
TEST(CollectInterruptTest, WorkQueueRunSavesTheChunksDone) {
  const std::string cache = TempDir() + "/cache-wq";
  const std::string output = TempDir() + "/wq";
  const std::vector<std::string> dataset = {"--events_per_file=20000", "--files_per_dataset=2",
                                            "--cache_dir=" + cache, "--output_dir=" + output};
  std::vector<std::string> generate = dataset;
  generate.push_back("--name=generate");
  ASSERT_EQ(RunCollect(generate).exit_code, 0);

  // 600 chunks, one Work Queue task each, on one worker: about 10 s on an idle machine (a
  // task costs ~17 ms), so the signal 4 s in always finds the run going.
  constexpr int kChunks = 600;
  std::vector<std::string> argv = {
      Collect(),          "--backend=workqueue", "--workers=1",       "--wq_connect_timeout=30",
      "--chunk_size=200", "--grace_period=0.5",  "--name=interrupted"};
  argv.insert(argv.end(), dataset.begin(), dataset.end());
  const std::string log = TempDir() + "/wq.log";
  ChildProcess collect(argv, Environment(), log);
  ASSERT_TRUE(WaitForLog(log, "Work Queue manager on port", absl::Seconds(30))) << ReadFile(log);
  absl::SleepFor(absl::Seconds(4));
  const absl::Time sent = absl::Now();
  ASSERT_EQ(kill(collect.pid(), SIGINT), 0);
  EXPECT_EQ(collect.Wait(absl::Seconds(60)), 130) << ReadFile(log);
  EXPECT_LT(absl::Now() - sent, absl::Seconds(6)) << ReadFile(log);
  EXPECT_THAT(ReadFile(log), HasSubstr("interrupted (SIGINT while running)"));
  // No new work after the signal: the manager's log (kept with the measurement) shows no task
  // handed out (RUNNING) after it, and tasks handed out before it.
  const int64_t sent_micros = absl::ToUnixMicros(sent);
  int dispatched_before = 0, dispatched_after = 0;
  for (absl::string_view line :
       absl::StrSplit(ReadFile(output + "/interrupted/workqueue/transactions.log"), '\n')) {
    const std::vector<absl::string_view> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
    int64_t micros = 0;
    if (words.size() < 5 || words[2] != "TASK" || words[4] != "RUNNING" ||
        !absl::SimpleAtoi(words[0], &micros)) {
      continue;
    }
    (micros > sent_micros ? dispatched_after : dispatched_before) += 1;
  }
  EXPECT_GT(dispatched_before, 0);
  // A task submitted for the free core just before the signal lands is handed out by the
  // work_queue_wait that follows (the signal is checked after submitting, not inside Work
  // Queue's wait): at most one on one worker. A run that went on would show dozens (~17 ms each).
  EXPECT_LE(dispatched_after, 1) << "tasks handed out after SIGINT";
  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(output + "/interrupted");
  ASSERT_TRUE(saved.ok()) << saved.status() << "\n" << ReadFile(log);
  EXPECT_TRUE(saved->metadata().interrupted());
  EXPECT_EQ(saved->metadata().interruption(), "SIGINT while running");
  EXPECT_GT(saved->chunks_size(), 0) << ReadFile(log);
  EXPECT_LT(saved->chunks_size(), kChunks);
  bool not_done = false;
  for (const v1::Warning& warning : saved->warnings()) {
    not_done |= warning.code() == "interrupted" &&
                warning.message().find(absl::StrCat(kChunks - saved->chunks_size(),
                                                    " chunks not done")) != std::string::npos;
  }
  EXPECT_TRUE(not_done) << ReadFile(log);
}

// A chunk that outlives the grace period (0 s here) is left behind: the run is saved without it
// and collect exits at once, not when the chunk ends.
TEST(CollectInterruptTest, ThreadPoolChunkOutlivingTheGracePeriodIsLeftOut) {
  const std::string cache = TempDir() + "/cache-big";
  const std::string output = TempDir() + "/threadpool-big";
  const std::vector<std::string> dataset = {
      // One chunk of a million events: it still runs 300 ms after the start on a quiet machine
      // (300,000 events were done by then, so nothing was left to leave out).
      "--events_per_file=1000000", "--files_per_dataset=1", "--chunk_size=1000000",
      "--cache_dir=" + cache,      "--threads=1",           "--output_dir=" + output};
  std::vector<std::string> generate = dataset;
  generate.push_back("--name=generate");
  const CollectOutcome generated = RunCollect(generate);
  ASSERT_EQ(generated.exit_code, 0) << generated.err;

  std::vector<std::string> argv = {Collect(), "--name=interrupted", "--grace_period=0"};
  argv.insert(argv.end(), dataset.begin(), dataset.end());
  const std::string log = TempDir() + "/threadpool-big.log";
  ChildProcess collect(argv, Environment(), log);
  ASSERT_TRUE(WaitForLog(log, "sample dataset in", absl::Seconds(30)));
  absl::SleepFor(absl::Milliseconds(300));
  ASSERT_EQ(kill(collect.pid(), SIGINT), 0);
  EXPECT_EQ(collect.Wait(absl::Seconds(30)), 130) << ReadFile(log);
  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(output + "/interrupted");
  ASSERT_TRUE(saved.ok()) << saved.status() << "\n" << ReadFile(log);
  EXPECT_TRUE(saved->metadata().interrupted());
  EXPECT_LT(saved->chunks_size(), 3);
  bool left_out = false;
  for (const v1::Warning& warning : saved->warnings()) {
    left_out |= warning.message().find("still running after the grace period") != std::string::npos;
  }
  EXPECT_TRUE(left_out) << ReadFile(log);
}

// A TaskVine run followed while its command runs: the signal (sent with kill) reaches the
// command, whose chunk records, written before it, are in the measurement.
TEST(CollectInterruptTest, ClusterRunForwardsTheSignalToTheCommand) {
  const std::string logs = TempDir() + "/vine";
  ASSERT_EQ(system(absl::StrCat("mkdir -p ", logs).c_str()), 0);
  // A run still going: the manager has started but not ended.
  const std::string source =
      std::string(std::getenv("TEST_SRCDIR")) + "/roastcoffea/backends/taskvine/testdata/";
  ASSERT_EQ(system(absl::StrCat("grep -v 'MANAGER [0-9]* END' ", source,
                                "synthetic-1-transactions.txt > ", logs, "/transactions")
                       .c_str()),
            0);
  ASSERT_EQ(system(absl::StrCat("cp ", source, "synthetic-1-performance.txt ", logs, "/performance")
                       .c_str()),
            0);
  const std::string marker = TempDir() + "/command-started";
  const std::string output = TempDir() + "/cluster";
  const std::string log = TempDir() + "/cluster.log";
  ChildProcess collect(
      {Collect(), "--backend=taskvine", "--follow",
       absl::StrCat("--taskvine_logs=", logs, "/transactions,", logs, "/performance"),
       "--interval=0.1", "--output_dir=" + output, "--name=interrupted", "--", "/bin/sh", "-c",
       ChunkRecordsCommand(marker)},
      Environment(), log);
  ASSERT_TRUE(collect.started());
  ASSERT_TRUE(WaitForFile(marker, absl::Seconds(30))) << ReadFile(log);
  absl::SleepFor(absl::Milliseconds(500));
  const absl::Time sent = absl::Now();
  ASSERT_EQ(kill(collect.pid(), SIGINT), 0);
  const int exit_code = collect.Wait(absl::Seconds(30));
  EXPECT_EQ(exit_code, 130) << ReadFile(log);
  EXPECT_LT(absl::Now() - sent, absl::Seconds(10));

  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(output + "/interrupted");
  ASSERT_TRUE(saved.ok()) << saved.status() << "\n" << ReadFile(log);
  EXPECT_TRUE(saved->metadata().interrupted());
  EXPECT_EQ(saved->metadata().interruption(), "SIGINT while running");
  int ours = 0;
  for (const v1::ChunkRecord& chunk : saved->chunks()) ours += chunk.file() == "a.root";
  EXPECT_EQ(ours, 2) << "the command's chunk records";
}

// Tracking until Ctrl-C: the signal is the planned end, not an interruption.
TEST(CollectInterruptTest, UntilCtrlCTheSignalIsThePlannedEnd) {
  const std::string source =
      std::string(std::getenv("TEST_SRCDIR")) + "/roastcoffea/backends/taskvine/testdata/";
  const std::string logs = TempDir() + "/vine-until";
  ASSERT_EQ(system(absl::StrCat("mkdir -p ", logs, " && grep -v 'MANAGER [0-9]* END' ", source,
                                "synthetic-1-transactions.txt > ", logs, "/transactions && cp ",
                                source, "synthetic-1-performance.txt ", logs, "/performance")
                       .c_str()),
            0);
  const std::string output = TempDir() + "/until";
  const std::string log = TempDir() + "/until.log";
  ChildProcess collect(
      {Collect(), "--backend=taskvine", "--follow",
       absl::StrCat("--taskvine_logs=", logs, "/transactions,", logs, "/performance"),
       "--interval=0.1", "--output_dir=" + output, "--name=until"},
      Environment(), log);
  ASSERT_TRUE(WaitForLog(log, "until Ctrl-C", absl::Seconds(30)));
  absl::SleepFor(absl::Seconds(1));
  ASSERT_EQ(kill(collect.pid(), SIGINT), 0);
  EXPECT_EQ(collect.Wait(absl::Seconds(30)), 0) << ReadFile(log);
  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(output + "/until");
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_FALSE(saved->metadata().interrupted());
}

// A followed TaskVine run killed with SIGKILL keeps its worker timeline up to the last
// checkpoint (#25): the checkpoint holds the series read from the logs so far, and `show` of it
// has the worker count. The log's times are moved to now, as a live run's are.
TEST(CollectInterruptTest, AFollowedTaskVineRunKilledWithSigkillKeepsItsTracking) {
  const std::string source =
      std::string(std::getenv("TEST_SRCDIR")) + "/roastcoffea/backends/taskvine/testdata/";
  const std::string logs = TempDir() + "/vine-sigkill";
  ASSERT_EQ(system(absl::StrCat("mkdir -p ", logs).c_str()), 0);
  constexpr int64_t kStartUs = 1763035200000000;  // synthetic-1's MANAGER START
  const int64_t shift_us = absl::ToUnixMicros(absl::Now()) - kStartUs;
  std::string shifted;
  for (absl::string_view line :
       absl::StrSplit(ReadFile(source + "synthetic-1-transactions.txt"), '\n', absl::SkipEmpty())) {
    int64_t us = 0;
    const size_t space = line.find(' ');
    // Not its END: the run is still going when it is killed.
    if (line.find(" MANAGER ") != absl::string_view::npos && absl::EndsWith(line, " END 0"))
      continue;
    if (space != absl::string_view::npos && absl::SimpleAtoi(line.substr(0, space), &us)) {
      absl::StrAppend(&shifted, us + shift_us, line.substr(space), "\n");
    } else {
      absl::StrAppend(&shifted, line, "\n");
    }
  }
  std::ofstream(logs + "/transactions") << shifted;
  const std::string out = TempDir() + "/vine-sigkill-out";
  const std::string log = TempDir() + "/vine-sigkill.log";
  ChildProcess collect(
      {Collect(), "--backend=taskvine", "--follow", "--taskvine_logs=" + logs + "/transactions",
       "--interval=0.1", "--checkpoint_interval=0.2", "--output_dir=" + out, "--name=killed"},
      Environment(), log);
  ASSERT_TRUE(WaitForLog(log, "until Ctrl-C", absl::Seconds(30))) << ReadFile(log);
  // Several checkpoints after the logs were read.
  absl::SleepFor(absl::Seconds(2));
  collect.Kill();
  const CollectOutcome show = RunCollect({"show", out + "/killed", "--tables=ascii"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out + show.err, HasSubstr("partial")) << show.out << show.err;
  EXPECT_THAT(show.out, HasSubstr("with the tracking series checkpointed so far")) << show.out;
  // Its chunks reach collect only at the end: the partial says how to rebuild them from the logs.
  // (show wraps the warning at spaces: the path is one word.)
  EXPECT_THAT(show.out, HasSubstr("WARNING: no chunk records")) << show.out;
  EXPECT_THAT(show.out, HasSubstr("--taskvine_logs=" + logs + "/transactions`")) << show.out;
  const CollectOutcome csv = RunCollect({"show", out + "/killed.checkpoint", "--format=csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_THAT(csv.out, HasSubstr("\npeak_workers,2,workers\n")) << csv.out;  // synthetic-1's peak
}

// A real dask-scheduler (python3-distributed), tracked while the command runs.
TEST(CollectInterruptTest, DaskRunForwardsTheSignalToTheCommand) {
  const int port = FreeLoopbackPort();
  ChildProcess scheduler({"/usr/bin/dask-scheduler", "--host", "127.0.0.1", "--port",
                          std::to_string(port), "--no-dashboard", "--no-show"},
                         Environment(), TempDir() + "/scheduler.log");
  ASSERT_TRUE(WaitForPort(port, absl::Seconds(60))) << ReadFile(TempDir() + "/scheduler.log");
  const std::string marker = TempDir() + "/dask-command-started";
  const std::string output = TempDir() + "/dask";
  const std::string log = TempDir() + "/dask.log";
  ChildProcess collect(
      {Collect(), "--backend=dask", absl::StrCat("--scheduler=tcp://127.0.0.1:", port),
       "--nodask_profiles", "--interval=0.1", "--output_dir=" + output, "--name=interrupted", "--",
       "/bin/sh", "-c", ChunkRecordsCommand(marker)},
      Environment(), log);
  ASSERT_TRUE(WaitForFile(marker, absl::Seconds(30))) << ReadFile(log);
  absl::SleepFor(absl::Milliseconds(500));
  const absl::Time sent = absl::Now();
  ASSERT_EQ(kill(collect.pid(), SIGINT), 0);
  EXPECT_EQ(collect.Wait(absl::Seconds(30)), 130) << ReadFile(log);
  EXPECT_LT(absl::Now() - sent, absl::Seconds(10));
  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(output + "/interrupted");
  ASSERT_TRUE(saved.ok()) << saved.status() << "\n" << ReadFile(log);
  EXPECT_TRUE(saved->metadata().interrupted());
  EXPECT_EQ(saved->metadata().interruption(), "SIGINT while running");
  EXPECT_EQ(saved->chunks_size(), 2);
  EXPECT_TRUE(saved->has_tracking());
}

// A "scheduler" that accepts the connection and never answers the handshake (reliability study
// D5): the signal is honoured all the same, and the run saved without tracking data.
TEST(CollectInterruptTest, ASignalDuringAHangingHandshakeIsHonoured) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  socklen_t length = sizeof(address);
  getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  const int port = ntohs(address.sin_port);

  const std::string output = TempDir() + "/handshake";
  const std::string log = TempDir() + "/handshake.log";
  ChildProcess collect(
      {Collect(), "--backend=dask", absl::StrCat("--scheduler=tcp://127.0.0.1:", port),
       "--dask_connect_timeout=120", "--dask_read_timeout=120", "--output_dir=" + output,
       "--name=hung"},
      Environment(), log);
  absl::SleepFor(absl::Seconds(1.5));
  const absl::Time sent = absl::Now();
  ASSERT_EQ(kill(collect.pid(), SIGINT), 0);
  EXPECT_EQ(collect.Wait(absl::Seconds(60)), 130) << ReadFile(log);
  // Nothing runs yet: no grace period (2 s) is waited for, the connect is given up at once.
  // About 0.7 s on an idle machine (fastbuild); reading all the records and saving them takes
  // minutes. The bound leaves room for a loaded machine.
  EXPECT_LT(absl::Now() - sent, absl::Seconds(5)) << ReadFile(log);
  close(listener);
  EXPECT_THAT(ReadFile(log), HasSubstr("saved to " + output + "/hung"));
  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(output + "/hung");
  ASSERT_TRUE(saved.ok()) << saved.status() << "\n" << ReadFile(log);
  EXPECT_TRUE(saved->metadata().interrupted());
  EXPECT_EQ(saved->metadata().interruption(), "SIGINT while starting tracking");
  EXPECT_FALSE(saved->has_tracking());
}

// A fake scheduler answering with captured replies; `dribbled` ops one byte at a time.
std::optional<std::string> CapturedReply(const dask::Value& request) {
  const std::string op = request.Find("op")->text();
  for (const char* known : {"identity", "processing", "get_task_stream"}) {
    if (op == known) return dask::testing::FixtureBytes(std::string(known) + "_reply");
  }
  if (op == "dump_state") return dask::testing::FixtureBytes("dump_state_workers_reply");
  if (op == "profile") return dask::testing::FixtureBytes("profile_per_worker_reply");
  return dask::testing::FixtureBytes("unknown_op_reply");
}

// Mid-run, every reply of the scheduler slows to a byte per 200 ms (a slowloris, reliability
// study D5) with a 120-s read timeout: the signal is honoured after the grace period all the
// same, and the run saved with the command's chunks.
TEST(CollectInterruptTest, ASignalWhileTheSchedulerDribblesIsHonoured) {
  dask::testing::FakeScheduler scheduler(CapturedReply);
  const std::string marker = TempDir() + "/dribble-started";
  const std::string output = TempDir() + "/dribble";
  const std::string log = TempDir() + "/dribble.log";
  ChildProcess collect(
      {Collect(), "--backend=dask", "--scheduler=" + scheduler.address(), "--dask_read_timeout=120",
       "--interval=0.1", "--grace_period=0.5", "--output_dir=" + output, "--name=dribbled", "--",
       "/bin/sh", "-c", ChunkRecordsCommand(marker)},
      Environment(), log);
  ASSERT_TRUE(WaitForFile(marker, absl::Seconds(30))) << ReadFile(log);
  ASSERT_TRUE(scheduler.WaitForOp("identity"));
  scheduler.Dribble(std::chrono::milliseconds(200),
                    {"identity", "processing", "get_task_stream", "dump_state", "versions",
                     "get_task_stream_index", "get_cluster_state", "profile"});
  absl::SleepFor(absl::Seconds(1));  // a reply is being dribbled now
  const absl::Time sent = absl::Now();
  ASSERT_EQ(kill(collect.pid(), SIGINT), 0);
  EXPECT_EQ(collect.Wait(absl::Seconds(60)), 130) << ReadFile(log);
  EXPECT_LT(absl::Now() - sent, absl::Seconds(3)) << ReadFile(log);
  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(output + "/dribbled");
  ASSERT_TRUE(saved.ok()) << saved.status() << "\n" << ReadFile(log);
  EXPECT_TRUE(saved->metadata().interrupted());
  EXPECT_EQ(saved->metadata().interruption(), "SIGINT while running");
  EXPECT_EQ(saved->chunks_size(), 2);
}

// The run has ended and collect fetches the workers' profiles from a scheduler that dribbles
// them (with a 600-s profile timeout): a signal then ends the fetch at once, and the run is
// saved with what it measured.
TEST(CollectInterruptTest, ASignalDuringASlowProfileFetchIsHonoured) {
  dask::testing::FakeScheduler scheduler(CapturedReply);
  scheduler.Dribble(std::chrono::milliseconds(200), {"profile"});
  const std::string output = TempDir() + "/slow-profiles";
  const std::string log = TempDir() + "/slow-profiles.log";
  ChildProcess collect(
      {Collect(), "--backend=dask", "--scheduler=" + scheduler.address(), "--dask_read_timeout=600",
       "--dask_profile_timeout=600", "--dask_end_timeout=600", "--interval=0.1",
       "--output_dir=" + output, "--name=profiles", "--", "/bin/sh", "-c",
       R"(echo '[{"file": "a.root", "entry_start": 0, "entry_stop": 10, "num_events": 10,
                  "t_start": 100, "t_end": 101}]' > "$ROASTCOFFEA_CHUNK_RECORDS"; sleep 1)"},
      Environment(), log);
  ASSERT_TRUE(scheduler.WaitForOp("profile")) << ReadFile(log);
  absl::SleepFor(absl::Milliseconds(500));
  const absl::Time sent = absl::Now();
  ASSERT_EQ(kill(collect.pid(), SIGINT), 0);
  EXPECT_EQ(collect.Wait(absl::Seconds(60)), 130) << ReadFile(log);
  // About 0.7 s on an idle machine (fastbuild); reading all the records and saving them takes
  // minutes. The bound leaves room for a loaded machine.
  EXPECT_LT(absl::Now() - sent, absl::Seconds(5)) << ReadFile(log);
  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(output + "/profiles");
  ASSERT_TRUE(saved.ok()) << saved.status() << "\n" << ReadFile(log);
  EXPECT_TRUE(saved->metadata().interrupted());
  EXPECT_EQ(saved->metadata().interruption(), "SIGINT while stopping tracking");
  EXPECT_EQ(saved->chunks_size(), 1);
  EXPECT_TRUE(saved->has_tracking());
  bool gave_up = false;
  for (const v1::Warning& warning : saved->warnings()) {
    gave_up |= warning.message().find("gave up waiting for the scheduler") != std::string::npos;
  }
  EXPECT_TRUE(gave_up) << ReadFile(log);
}

// The command makes $ROASTCOFFEA_CHUNK_RECORDS a FIFO with no writer (reliability study D4):
// collect does not wait for one; the FIFO is a warning and the run is saved.
TEST(CollectInterruptTest, AFifoAsChunkRecordsDoesNotBlock) {
  const std::string source =
      std::string(std::getenv("TEST_SRCDIR")) + "/roastcoffea/backends/taskvine/testdata/";
  const std::string output = TempDir() + "/fifo";
  const std::string log = TempDir() + "/fifo.log";
  ChildProcess collect(
      {Collect(), "--backend=taskvine",
       absl::StrCat("--taskvine_logs=", source, "synthetic-1-transactions.txt,", source,
                    "synthetic-1-performance.txt"),
       "--output_dir=" + output, "--name=fifo", "--", "/bin/sh", "-c",
       "rm -f \"$ROASTCOFFEA_CHUNK_RECORDS\" && mkfifo \"$ROASTCOFFEA_CHUNK_RECORDS\""},
      Environment(), log);
  ASSERT_TRUE(collect.started());
  const absl::Time start = absl::Now();
  EXPECT_EQ(collect.Wait(absl::Seconds(60)), 0) << ReadFile(log);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10)) << ReadFile(log);
  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(output + "/fifo");
  ASSERT_TRUE(saved.ok()) << saved.status() << "\n" << ReadFile(log);
  bool named = false;
  for (const v1::Warning& warning : saved->warnings()) {
    named |= warning.message().find("chunk records ignored") != std::string::npos &&
             warning.message().find("FIFO") != std::string::npos;
  }
  EXPECT_TRUE(named) << ReadFile(log);
}

// True once process `pid` has a descriptor open on `path` (its target, for a symlink).
bool HasOpen(pid_t pid, const std::string& path) {
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator(absl::StrCat("/proc/", pid, "/fd"), error)) {
    char target[PATH_MAX];
    const ssize_t size = readlink(entry.path().c_str(), target, sizeof(target));
    if (size > 0 && std::string(target, static_cast<size_t>(size)) == path) return true;
  }
  return false;
}

// Reliability study D10: a SIGINT while a large $ROASTCOFFEA_CHUNK_RECORDS is parsed is honoured
// within a second or two (the reader is cancelled), and the run is saved, marked interrupted,
// with the records read until then.
TEST(CollectInterruptTest, ASignalWhileChunkRecordsAreParsedIsHonoured) {
  const std::string records = TempDir() + "/many_records.json";
  constexpr int kRecords = 500000;
  {
    std::ofstream out(records, std::ios::binary);
    out << '[';
    for (int i = 0; i < kRecords; ++i) {
      out << (i > 0 ? "," : "") << R"({"t_start":1742250330.0,"t_end":1742250330.5,)"
          << R"("num_events":10,"dataset":"d","file":"f","entry_start":)" << i * 10
          << R"(,"entry_stop":)" << i * 10 + 10 << '}';
    }
    out << ']';
  }
  const std::string source =
      std::string(std::getenv("TEST_SRCDIR")) + "/roastcoffea/backends/taskvine/testdata/";
  const std::string output = TempDir() + "/parsing";
  const std::string log = TempDir() + "/parsing.log";
  // The command leaves a symlink to the big file: collect reads (and holds open) the file itself.
  ChildProcess collect({Collect(), "--backend=taskvine",
                        absl::StrCat("--taskvine_logs=", source, "synthetic-1-transactions.txt,",
                                     source, "synthetic-1-performance.txt"),
                        "--output_dir=" + output, "--name=parsing", "--", "/bin/sh", "-c",
                        absl::StrCat("ln -sf '", records, "' \"$ROASTCOFFEA_CHUNK_RECORDS\"")},
                       Environment(), log);
  ASSERT_TRUE(collect.started());
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (!HasOpen(collect.pid(), records) && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(2));
  }
  ASSERT_TRUE(HasOpen(collect.pid(), records)) << "the records were never read\n" << ReadFile(log);
  const absl::Time sent = absl::Now();
  ASSERT_EQ(kill(collect.pid(), SIGINT), 0);
  EXPECT_EQ(collect.Wait(absl::Seconds(60)), 130) << ReadFile(log);
  // About 0.7 s on an idle machine (fastbuild); reading all the records and saving them takes
  // minutes. The bound leaves room for a loaded machine.
  EXPECT_LT(absl::Now() - sent, absl::Seconds(5)) << ReadFile(log);

  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(output + "/parsing");
  ASSERT_TRUE(saved.ok()) << saved.status() << "\n" << ReadFile(log);
  EXPECT_TRUE(saved->metadata().interrupted());
  bool stopped = false;
  for (const v1::Warning& warning : saved->warnings()) {
    stopped |=
        warning.message().find("reading stopped by an interruption after") != std::string::npos;
  }
  EXPECT_TRUE(stopped) << ReadFile(log);
  int kept = 0;
  for (const v1::ChunkRecord& chunk : saved->chunks()) kept += chunk.file() == "f";
  EXPECT_LT(kept, kRecords) << "the records read before the signal, not all";
}

}  // namespace
}  // namespace roastcoffea
