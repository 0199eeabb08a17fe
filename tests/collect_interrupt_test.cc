// SIGINT in the middle of a real collect run, in each mode: the exit status (130), the saved
// measurement, its interrupted flag and its chunks.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "store/measurement_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"
#include "tests/child_process.h"
#include "tests/collect_runner.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;

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
    const bool connected =
        connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
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
                                            "--cache_dir=" + cache, "--threads=1",
                                            "--interval=0.05", "--output_dir=" + output};
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

// A chunk that outlives the grace period (0 s here) is left behind: the run is saved without it
// and collect exits at once, not when the chunk ends.
TEST(CollectInterruptTest, ThreadPoolChunkOutlivingTheGracePeriodIsLeftOut) {
  const std::string cache = TempDir() + "/cache-big";
  const std::string output = TempDir() + "/threadpool-big";
  const std::vector<std::string> dataset = {"--events_per_file=300000", "--files_per_dataset=1",
                                            "--chunk_size=300000", "--cache_dir=" + cache,
                                            "--threads=1", "--output_dir=" + output};
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
    left_out |= warning.message().find("still running after the grace period") !=
                std::string::npos;
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
  ASSERT_EQ(system(absl::StrCat("cp ", source, "synthetic-1-performance.txt ", logs,
                                "/performance")
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
  ChildProcess collect({Collect(), "--backend=dask",
                        absl::StrCat("--scheduler=tcp://127.0.0.1:", port), "--nodask_profiles",
                        "--interval=0.1", "--output_dir=" + output, "--name=interrupted", "--",
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
  ChildProcess collect({Collect(), "--backend=dask",
                        absl::StrCat("--scheduler=tcp://127.0.0.1:", port),
                        "--dask_connect_timeout=120", "--dask_read_timeout=120",
                        "--output_dir=" + output, "--name=hung", "--grace_period=0.5"},
                       Environment(), log);
  absl::SleepFor(absl::Seconds(1.5));
  const absl::Time sent = absl::Now();
  ASSERT_EQ(kill(collect.pid(), SIGINT), 0);
  EXPECT_EQ(collect.Wait(absl::Seconds(60)), 130) << ReadFile(log);
  EXPECT_LT(absl::Now() - sent, absl::Seconds(10));
  close(listener);
  EXPECT_THAT(ReadFile(log), HasSubstr("saved to " + output + "/hung"));
  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(output + "/hung");
  ASSERT_TRUE(saved.ok()) << saved.status() << "\n" << ReadFile(log);
  EXPECT_TRUE(saved->metadata().interrupted());
  EXPECT_EQ(saved->metadata().interruption(), "SIGINT while starting tracking");
  EXPECT_FALSE(saved->has_tracking());
}

}  // namespace
}  // namespace roastcoffea
