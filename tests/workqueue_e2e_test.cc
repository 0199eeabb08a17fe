// End to end: `collect --backend=workqueue` runs the sample analysis as Work Queue tasks on real
// work_queue_worker processes it starts on 127.0.0.1, and its physics equals the thread pool's
// exactly; every chunk has one record, joined to its task; faults (a worker killed or hung
// mid-run, a failing processor, no workers, a port in use) end as the README says.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "live/http_test_client.h"
#include "sample_analysis/chunking.h"
#include "sample_analysis/dijet_processor.h"
#include "sample_analysis/sample_dataset.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"
#include "tests/child_process.h"
#include "tests/collect_runner.h"
#include "tools/workqueue/task_output.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;

// tests/collect_e2e_test.cc's SmallRun: 3 datasets x 2 files x 20000 events, 24 chunks.
constexpr int64_t kEventsPerFile = 20000;
constexpr int kFilesPerDataset = 2;
constexpr int64_t kChunkSize = 6000;
constexpr int kChunks = 3 * kFilesPerDataset * 4;

std::vector<std::string> SmallRun(const std::string& cache, const std::string& name,
                                  std::vector<std::string> extra) {
  std::vector<std::string> arguments = {absl::StrCat("--events_per_file=", kEventsPerFile),
                                        absl::StrCat("--files_per_dataset=", kFilesPerDataset),
                                        absl::StrCat("--chunk_size=", kChunkSize),
                                        "--interval=0.02",
                                        "--cache_dir=" + cache,
                                        "--output_dir=" + TempDir() + "/measurements",
                                        "--name=" + name,
                                        "--tables=ascii"};
  arguments.insert(arguments.end(), extra.begin(), extra.end());
  return arguments;
}

std::vector<std::string> WorkQueue(std::vector<std::string> extra) {
  extra.insert(extra.begin(),
               {"--backend=workqueue", "--wq_connect_timeout=20", "--wq_stall_timeout=20"});
  return extra;
}

// The physics result as the thread pool computes it: the same processor over the same chunks.
sample_analysis::DijetOutput Reference(const std::string& cache) {
  sample_analysis::SampleDatasetSpec spec;
  spec.events_per_file = kEventsPerFile;
  spec.files_per_dataset = kFilesPerDataset;
  absl::StatusOr<sample_analysis::SampleDataset> dataset =
      sample_analysis::EnsureSampleDataset(spec, cache);
  EXPECT_TRUE(dataset.ok()) << dataset.status();
  sample_analysis::DijetOutput total;
  if (!dataset.ok()) return total;
  absl::StatusOr<std::vector<sample_analysis::WorkItem>> items =
      sample_analysis::MakeChunks(*dataset, kChunkSize);
  EXPECT_TRUE(items.ok());
  const sample_analysis::DijetProcessor processor;
  for (const sample_analysis::WorkItem& item : *items) total += processor(item);
  return total;
}

void ExpectSamePhysics(const sample_analysis::DijetOutput& got,
                       const sample_analysis::DijetOutput& want) {
  EXPECT_EQ(got.mjj, want.mjj);
  EXPECT_EQ(got.mjj_by_dataset, want.mjj_by_dataset);
  EXPECT_EQ(got.events_processed, want.events_processed);
  EXPECT_EQ(got.events_selected, want.events_selected);
  ASSERT_EQ(got.datasets.size(), want.datasets.size());
  for (const auto& [name, counts] : want.datasets) {
    EXPECT_EQ(got.datasets.at(name).chunks, counts.chunks) << name;
    EXPECT_EQ(got.datasets.at(name).events_processed, counts.events_processed) << name;
    EXPECT_EQ(got.datasets.at(name).events_selected, counts.events_selected) << name;
  }
}

std::string Measurement(const std::string& name) { return TempDir() + "/measurements/" + name; }

workqueue::ChunkTaskOutput Physics(const std::string& name) {
  absl::StatusOr<workqueue::ChunkTaskOutput> output =
      workqueue::ReadTaskOutputFile(Measurement(name) + "/workqueue/dijet_output.pb");
  EXPECT_TRUE(output.ok()) << output.status();
  return output.ok() ? *output : workqueue::ChunkTaskOutput{};
}

// The printed physics, without the bytes-read column (reads differ with the engine).
std::vector<std::string> PrintedPhysics(const std::string& out) {
  std::vector<std::string> lines;
  bool in = false;
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (absl::StartsWith(line, "Dijet analysis")) in = true;
    // The physics summary ends where the run's recap (timings, which differ) begins.
    if (absl::StartsWith(line, "Recap:") || absl::StartsWith(line, "Measurement saved")) {
      in = false;
    }
    if (in && !absl::StrContains(line, "rcol") && !absl::StrContains(line, "read MB")) {
      std::vector<std::string> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
      // Dataset rows: name chunks events selected selected% MB peak -> drop MB.
      if (words.size() == 7 && absl::EndsWith(words[4], "%")) words.erase(words.begin() + 5);
      lines.push_back(absl::StrJoin(words, " "));
    }
  }
  return lines;
}

class WorkQueueEndToEndTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cache_ = TempDir() + "/cache";
    threadpool_ = new CollectOutcome(RunCollect(SmallRun(cache_, "threadpool", {"--threads=2"})));
    workqueue_ = new CollectOutcome(RunCollect(SmallRun(cache_, "wq", WorkQueue({"--workers=2"}))));
  }
  static void TearDownTestSuite() {
    delete threadpool_;
    delete workqueue_;
  }
  static std::string cache_;
  static CollectOutcome* threadpool_;
  static CollectOutcome* workqueue_;
};

std::string WorkQueueEndToEndTest::cache_;
CollectOutcome* WorkQueueEndToEndTest::threadpool_ = nullptr;
CollectOutcome* WorkQueueEndToEndTest::workqueue_ = nullptr;

TEST_F(WorkQueueEndToEndTest, PhysicsEqualsTheThreadPoolsExactly) {
  ASSERT_EQ(threadpool_->exit_code, 0) << threadpool_->err;
  ASSERT_EQ(workqueue_->exit_code, 0) << workqueue_->err;
  EXPECT_THAT(workqueue_->err, HasSubstr("2 local workers"));
  EXPECT_THAT(workqueue_->out, HasSubstr("Backend: workqueue"));
  ExpectSamePhysics(Physics("wq").output, Reference(cache_));
  const std::vector<std::string> printed = PrintedPhysics(workqueue_->out);
  EXPECT_GT(printed.size(), 20u);
  EXPECT_EQ(printed, PrintedPhysics(threadpool_->out));
}

TEST_F(WorkQueueEndToEndTest, EveryChunkHasOneRecordJoinedToItsTask) {
  ASSERT_EQ(workqueue_->exit_code, 0) << workqueue_->err;
  absl::StatusOr<v1::Measurement> m = LoadMeasurement(Measurement("wq"));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->metadata().backend(), "workqueue");
  ASSERT_EQ(m->chunks_size(), kChunks);
  std::set<std::string> uuids, tasks, workers;
  int64_t events = 0;
  for (const v1::ChunkRecord& chunk : m->chunks()) {
    EXPECT_EQ(chunk.status(), v1::CHUNK_STATUS_OK) << chunk.error_text();
    uuids.insert(chunk.uuid());
    tasks.insert(chunk.task_id());
    workers.insert(chunk.worker());
    EXPECT_FALSE(chunk.task_id().empty());
    EXPECT_THAT(chunk.worker(), HasSubstr("worker-")) << "the engine's worker id, joined";
    EXPECT_FALSE(chunk.sections().empty()) << "tracked inside the task";
    EXPECT_GT(chunk.duration_seconds(), 0);
    EXPECT_EQ(chunk.attempt(), 0u);
    events += chunk.events();
  }
  EXPECT_EQ(static_cast<int>(uuids.size()), kChunks);
  EXPECT_EQ(static_cast<int>(tasks.size()), kChunks) << "one task per chunk";
  EXPECT_EQ(workers.size(), 2u);
  EXPECT_EQ(events, 3 * kFilesPerDataset * kEventsPerFile);
  // Tracking and fine metrics come from the manager's logs.
  EXPECT_EQ(m->tracking().workers_size(), 2);
  bool execute = false;
  for (const v1::Span& span : m->spans()) {
    for (const v1::FineMetric& metric : span.metrics()) {
      execute = execute || (metric.task_prefix() == "processing" && metric.activity() == "execute");
    }
  }
  EXPECT_TRUE(execute);
  for (const v1::Warning& warning : m->warnings()) {
    EXPECT_NE(warning.code(), "chunk_join") << warning.message();
  }
  EXPECT_TRUE(std::filesystem::exists(Measurement("wq") + "/workqueue/transactions.log"));
  EXPECT_TRUE(std::filesystem::exists(Measurement("wq") + "/workqueue/performance.log"));
}

// Tasks ask for explicit memory and disk (tools/workqueue/task_resources.h): without them Work
// Queue gives a task on a 1-core worker the worker's whole disk, and the worker gives the task
// back (a spurious lost attempt) when it re-measures a slightly smaller disk.
TEST_F(WorkQueueEndToEndTest, TasksAskForSmallExplicitMemoryAndDisk) {
  ASSERT_EQ(workqueue_->exit_code, 0) << workqueue_->err;
  const std::string log = ReadFile(Measurement("wq") + "/workqueue/transactions.log");
  // The number after `"key":[` in a RUNNING record's allocation ({"memory":[34,"MB"],...}), or -1.
  // (Not std::regex: gcc 12 at -O1, the sanitizer builds, warns inside <regex>.)
  const auto allocated = [](absl::string_view line, absl::string_view key) -> int64_t {
    const std::string needle = absl::StrCat("\"", key, "\":[");
    const size_t at = line.find(needle);
    if (at == absl::string_view::npos) return -1;
    absl::string_view rest = line.substr(at + needle.size());
    int64_t value = -1;
    if (!absl::SimpleAtoi(rest.substr(0, rest.find_first_of(",]")), &value)) return -1;
    return value;
  };
  int running = 0;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (!absl::StrContains(line, "TASK ") || !absl::StrContains(line, " RUNNING ")) continue;
    const int64_t memory = allocated(line, "memory");
    const int64_t disk = allocated(line, "disk");
    if (memory < 0 || disk < 0 || allocated(line, "cores") != 1) continue;
    ++running;
    // 6,000-event chunks of ~1 MB files: 32 MB + 512 bytes per event; the inputs + 16 MB.
    EXPECT_GE(memory, 32) << line;
    EXPECT_LE(memory, 36) << line;
    EXPECT_GE(disk, 17) << line;
    EXPECT_LE(disk, 64) << line;
  }
  EXPECT_EQ(running, kChunks) << "one dispatch per task, none given back\n" << log;
  EXPECT_THAT(workqueue_->out, HasSubstr("0 lost attempts"));
}

TEST_F(WorkQueueEndToEndTest, CompareReadsTheTwoEngines) {
  ASSERT_EQ(workqueue_->exit_code, 0) << workqueue_->err;
  const CollectOutcome compared =
      RunCollect({"compare", Measurement("threadpool"), Measurement("wq"), "--tables=ascii"});
  ASSERT_EQ(compared.exit_code, 0) << compared.err;
  // Same work: the events and chunks do not change; the engine's overhead shows in the times.
  EXPECT_THAT(compared.out, testing::ContainsRegex(
                                "Total Events +\\| events +\\| +120000 \\| +120000 \\(\\+0.0%\\)"));
  EXPECT_THAT(compared.out,
              testing::ContainsRegex("Chunks +\\| chunks +\\| +24 \\| +24 \\(\\+0.0%\\)"));
}

TEST_F(WorkQueueEndToEndTest, SeveralChunksPerTaskGiveTheSamePhysicsAndARecordEach) {
  const CollectOutcome run =
      RunCollect(SmallRun(cache_, "grouped", WorkQueue({"--workers=2", "--chunks_per_task=5"})));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ExpectSamePhysics(Physics("grouped").output, Reference(cache_));
  absl::StatusOr<v1::Measurement> m = LoadMeasurement(Measurement("grouped"));
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->chunks_size(), kChunks);
  std::set<std::string> tasks;
  for (const v1::ChunkRecord& chunk : m->chunks()) {
    EXPECT_EQ(chunk.status(), v1::CHUNK_STATUS_OK) << chunk.error_text();
    EXPECT_THAT(chunk.worker(), HasSubstr("worker-"));
    tasks.insert(chunk.task_id());
  }
  EXPECT_EQ(tasks.size(), 5u) << "24 chunks in tasks of 5";
  for (const v1::Warning& warning : m->warnings()) {
    EXPECT_NE(warning.code(), "chunk_join") << warning.message();
  }
}

TEST_F(WorkQueueEndToEndTest, AKilledWorkersTasksRunAgainAndEveryChunkKeepsOneRecord) {
  const CollectOutcome run = RunCollect(
      SmallRun(cache_, "killed", WorkQueue({"--workers=2", "--wq_testing_fault=kill:3"})));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ExpectSamePhysics(Physics("killed").output, Reference(cache_));
  absl::StatusOr<v1::Measurement> m = LoadMeasurement(Measurement("killed"));
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->chunks_size(), kChunks);
  std::set<std::string> uuids;
  uint32_t attempts = 0;
  for (const v1::ChunkRecord& chunk : m->chunks()) {
    EXPECT_EQ(chunk.status(), v1::CHUNK_STATUS_OK) << chunk.error_text();
    uuids.insert(chunk.uuid());
    attempts += chunk.attempt();
  }
  EXPECT_EQ(static_cast<int>(uuids.size()), kChunks);
  EXPECT_GE(attempts, 1u) << "the killed worker's task was lost and ran again";
}

TEST_F(WorkQueueEndToEndTest, AHungWorkersChunkIsReportedAndTheMeasurementSaved) {
  const auto start = std::chrono::steady_clock::now();
  const CollectOutcome run = RunCollect(SmallRun(
      cache_, "hung",
      // A stall timeout of 6 s: at 3 s a loaded machine (the whole suite on 2 cores) could leave
      // the healthy worker without a returned task that long and give up the queued chunks too.
      {"--backend=workqueue", "--workers=2", "--wq_testing_fault=stop:3", "--wq_stall_timeout=6"}));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(40));
  absl::StatusOr<v1::Measurement> m = LoadMeasurement(Measurement("hung"));
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->chunks_size(), kChunks);
  int given_up = 0;
  for (const v1::ChunkRecord& chunk : m->chunks()) {
    if (chunk.status() == v1::CHUNK_STATUS_FAILED) {
      EXPECT_THAT(chunk.error_text(), HasSubstr("never came back"));
      ++given_up;
    }
  }
  // Paused while it held no task, the worker is handed the next one; the manager's send to it
  // times out after ~5 s and disconnects it, and the task runs again elsewhere before the stall
  // timeout: the engine recovered, every chunk is done, and the silent worker is reported.
  // Otherwise (paused holding a task) the stall timeout gives that task's chunk up: exit 3.
  if (run.exit_code == 0) {
    EXPECT_THAT(run.err, HasSubstr("was silent since"));
    EXPECT_EQ(given_up, 0);
    return;
  }
  ASSERT_EQ(run.exit_code, 3) << run.err;
  EXPECT_THAT(run.err, HasSubstr("never came back"));
  EXPECT_EQ(given_up, 1);
}

TEST(WorkQueueFaultsTest, AFailingProcessorGivesAFailedRecordWithItsError) {
  const std::string cache = TempDir() + "/corrupt-cache";
  sample_analysis::SampleDatasetSpec spec;
  spec.events_per_file = kEventsPerFile;
  spec.files_per_dataset = kFilesPerDataset;
  absl::StatusOr<sample_analysis::SampleDataset> dataset =
      sample_analysis::EnsureSampleDataset(spec, cache);
  ASSERT_TRUE(dataset.ok()) << dataset.status();
  // The baskets in the middle of one file (header and footer intact, so the cache is reused).
  const std::string victim = dataset->datasets[0].files[0].path;
  const auto size = std::filesystem::file_size(victim);
  {
    std::fstream file(victim, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(size / 10));
    const std::string garbage(size * 7 / 10, '\x5a');
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  const CollectOutcome run = RunCollect(SmallRun(cache, "corrupt", WorkQueue({"--workers=2"})));
  ASSERT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.err, HasSubstr("chunks failed"));
  absl::StatusOr<v1::Measurement> m = LoadMeasurement(Measurement("corrupt"));
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->chunks_size(), kChunks);
  int failed = 0;
  for (const v1::ChunkRecord& chunk : m->chunks()) {
    if (chunk.status() != v1::CHUNK_STATUS_FAILED) continue;
    ++failed;
    EXPECT_EQ(chunk.file(), victim);
    EXPECT_FALSE(chunk.error_text().empty());
    EXPECT_FALSE(chunk.task_id().empty());
  }
  EXPECT_GE(failed, 1);
  EXPECT_LE(failed, 4) << "only the corrupt file's chunks";
}

TEST(WorkQueueFaultsTest, NoWorkersIsABoundedWaitWithTheCommandToStartOne) {
  const auto start = std::chrono::steady_clock::now();
  const CollectOutcome run =
      RunCollect(SmallRun(TempDir() + "/cache", "noworkers",
                          {"--backend=workqueue", "--workers=0", "--wq_connect_timeout=2"}));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.err, HasSubstr("waiting for workers; start them with:\n  work_queue_worker "));
  EXPECT_THAT(run.err, HasSubstr("no Work Queue worker connected to port"));
  EXPECT_FALSE(std::filesystem::exists(Measurement("noworkers")));
  EXPECT_FALSE(std::filesystem::exists(Measurement("noworkers") + ".checkpoint"))
      << "nothing ran: no checkpoint is left behind";
}

// --serve watches a Work Queue run like any other (it goes through the measurement session):
// the live view counts the chunks as their tasks come back and ends on the saved count.
TEST(WorkQueueServeTest, TheLiveViewCountsTheRunsChunks) {
  const int port = FreeLoopbackPort();
  std::vector<std::string> argv = {std::string(std::getenv("TEST_SRCDIR")) +
                                   "/roastcoffea/tools/collect"};
  for (std::string& argument :
       SmallRun(TempDir() + "/cache", "served",
                WorkQueue({"--workers=2", absl::StrCat("--serve=127.0.0.1:", port),
                           "--serve_linger=120", "--checkpoint_interval=0.05"}))) {
    argv.push_back(std::move(argument));
  }
  const std::string log = TempDir() + "/served.log";
  ChildProcess collect(argv,
                       {absl::StrCat("TEST_TMPDIR=", TempDir()), "PATH=/usr/bin:/bin",
                        absl::StrCat("HOME=", TempDir())},
                       log);
  ASSERT_TRUE(collect.started());
  const absl::Time deadline = absl::Now() + absl::Seconds(120);
  while (absl::Now() < deadline &&
         !absl::StrContains(ReadFile(log), "serving the final figures at http://")) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_THAT(ReadFile(log), HasSubstr("serving the final figures at http://"));
  const std::string exposition = live::Body(live::Get(port, "/metrics"));
  EXPECT_THAT(exposition, HasSubstr(absl::StrCat(",status=\"ok\"} ", kChunks, "\n"))) << exposition;
  ASSERT_EQ(kill(collect.pid(), SIGINT), 0);  // ends the linger
  EXPECT_EQ(collect.Wait(absl::Seconds(30)), 0) << ReadFile(log);
  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(Measurement("served"));
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_EQ(saved->chunks_size(), kChunks);
  EXPECT_EQ(saved->metadata().backend(), "workqueue");
  // The session's checkpoint is removed once the run is saved.
  EXPECT_FALSE(std::filesystem::exists(Measurement("served") + ".checkpoint"));
}

TEST(WorkQueueFaultsTest, APortInUseIsNamed) {
  const int port = FreeLoopbackPort();
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  const CollectOutcome run = RunCollect(
      SmallRun(TempDir() + "/cache", "busyport",
               {"--backend=workqueue", "--workers=1", absl::StrCat("--wq_port=", port)}));
  close(fd);
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.err, HasSubstr(absl::StrCat("port ", port, " is in use")));
}

}  // namespace
}  // namespace roastcoffea
