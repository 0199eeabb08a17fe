// The real public logs (testdata/*.gz, unmodified logs published by the TaskVine authors;
// docs/taskvine-logs.md lists them). Expected counts come from an independent count of the same
// files (grep/awk/python over the raw lines, done once by hand), not from the code under test.
#include <string>

#include "backends/taskvine/run_model.h"
#include "backends/taskvine/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace taskvine {
namespace {

const std::string kData = "backends/taskvine/testdata/";

// LNNI: TaskVine master of March 2025, Parsl + serverless function calls, 183 workers, cut while
// running (no MANAGER END), 57-column performance log.
TEST(RealLogs, LnniTaskVine2025) {
  RunModel model;
  ASSERT_TRUE(FeedFile(kData + "lnni-2025-03-transactions.gz", false, &model).ok());
  ASSERT_TRUE(FeedFile(kData + "lnni-2025-03-performance.gz", true, &model).ok());
  EXPECT_EQ(model.malformed_count(), 0);
  EXPECT_EQ(model.partial_last_lines(), 0);
  // 6235 lines: 16 header comments + 6219 records.
  EXPECT_EQ(model.transaction_records(), 6219);
  const RunFigures f = model.Figures();
  EXPECT_FALSE(f.ended);
  EXPECT_EQ(f.start_us, 1742250321362810);
  EXPECT_EQ(f.end_us, 1742250623756164);  // the last record
  // 183 identified CONNECTIONs; 33 DISCONNECTION records of which 32 are "(null)".
  EXPECT_EQ(f.workers_joined, 183);
  EXPECT_EQ(model.null_disconnections(), 32);
  int disconnected = 0;
  for (const Worker& w : model.workers()) disconnected += w.disconnect_us != 0;
  EXPECT_EQ(disconnected, 1);  // 33 - 32
  // 1500 READY tasks (all attempt 1, category parsl-default); 366 ids RUNNING without READY
  // (library instances, each also "LIBRARY <id> SENT"); 324 RUNNING of user tasks; 231 user
  // tasks retrieved and DONE SUCCESS 0; 198 libraries reached WAITING_RETRIEVAL.
  EXPECT_EQ(f.tasks, 1500);
  EXPECT_EQ(f.libraries, 366);
  EXPECT_EQ(f.attempts, 324);
  EXPECT_EQ(f.tasks_done, 231);
  EXPECT_EQ(f.tasks_failed, 0);
  EXPECT_EQ(model.categories(), std::vector<std::string>{"parsl-default"});
  // TRANSFER: 336 INPUT records of 28059323981 bytes, 231 OUTPUT of 10857 bytes; 935 CACHE_UPDATEs.
  EXPECT_EQ(f.transfers_in, 336);
  EXPECT_EQ(f.bytes_in, 28059323981.0);
  EXPECT_EQ(f.transfers_out, 231);
  EXPECT_EQ(f.bytes_out, 10857);
  EXPECT_EQ(f.cache_updates, 935);
  // Sum of time_worker_end - time_worker_start of the 231 retrieved calls: 4866.787905 s.
  EXPECT_NEAR(f.execute_seconds, 4866.787905, 1e-5);
  // Performance log: 372 rows; last row joined 183, dispatched 690 (324 + 366 libraries), done
  // 429 (231 calls + 198 libraries), time_execute 4866787904 us, bytes as the TRANSFER sums.
  ASSERT_EQ(model.performance().size(), 372u);
  const PerfSample& last = model.performance().back();
  EXPECT_EQ(last.workers_joined, 183);
  EXPECT_EQ(last.tasks_dispatched, 690);
  EXPECT_EQ(last.tasks_done, 429);
  EXPECT_EQ(last.time_execute_us, 4866787904);
  EXPECT_EQ(last.bytes_sent, 28059323981.0);
  EXPECT_EQ(last.bytes_received, 10857);
  // So the cross-checks agree; the only remark is the missing END.
  EXPECT_THAT(model.Warnings(), testing::ElementsAre(testing::HasSubstr("no MANAGER END")));
  // Every one of the 183 workers ran something (each worker id appears in a TASK RUNNING,
  // LIBRARY, TRANSFER or CACHE_UPDATE record): none idle, so the per-worker view without idle
  // workers is the whole one.
  int idle = 0;
  for (const Worker& w : model.workers()) idle += w.Idle();
  EXPECT_EQ(idle, 0);
  const std::vector<WorkerFigures> all = model.PerWorker();
  const std::vector<WorkerFigures> ran = model.PerWorker(/*skip_idle=*/true);
  ASSERT_EQ(ran.size(), all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(ran[i].worker, all[i].worker);
    EXPECT_EQ(ran[i].busy_seconds, all[i].busy_seconds);
    EXPECT_EQ(ran[i].lifetime_seconds, all[i].lifetime_seconds);
    EXPECT_EQ(ran[i].totals.allocated_core_seconds, all[i].totals.allocated_core_seconds);
    EXPECT_EQ(ran[i].totals.execute_seconds, all[i].totals.execute_seconds);
  }
}

// Colmena: Work Queue (7.5-era master, Feb 2023): worker addresses in TASK records, WAITING
// without attempt numbers, top-level TRANSFER records with sizes in MB.
TEST(RealLogs, ColmenaWorkQueue2023) {
  RunModel model;
  ASSERT_TRUE(FeedFile(kData + "colmena-wq-2023-02-transactions.gz", false, &model).ok());
  EXPECT_EQ(model.malformed_count(), 0);
  const RunFigures f = model.Figures();
  EXPECT_TRUE(f.ended);
  EXPECT_EQ(f.start_us, 1676577218559820);
  EXPECT_EQ(f.end_us, 1676578628417310);
  // 102 worker CONNECTIONs and 102 DISCONNECTIONs.
  EXPECT_EQ(f.workers_joined, 102);
  int disconnected = 0, unresolved = 0;
  for (const Worker& w : model.workers()) disconnected += w.disconnect_us != 0;
  EXPECT_EQ(disconnected, 102);
  // 1228 tasks: 228 evaluate_mpnn + 1000 compute_atomization_energy; every state 1228 times;
  // all DONE SUCCESS 0.
  EXPECT_EQ(f.tasks, 1228);
  EXPECT_EQ(f.attempts, 1228);
  EXPECT_EQ(f.tasks_done, 1228);
  EXPECT_EQ(f.tasks_failed, 0);
  const auto per_category = model.PerCategory();
  EXPECT_EQ(per_category.at("evaluate_mpnn").attempts, 228);
  EXPECT_EQ(per_category.at("compute_atomization_energy").attempts, 1000);
  EXPECT_EQ(per_category.at("evaluate_mpnn").retrieved +
                per_category.at("compute_atomization_energy").retrieved,
            1228);
  for (const auto& [id, task] : model.tasks()) unresolved += task.attempts.back().worker < 0;
  EXPECT_EQ(unresolved, 0);  // every RUNNING address maps to a connected worker
  // TRANSFER: 3684 INPUT records totalling 288.620827 MB, 1228 OUTPUT totalling 1164.847284 MB
  // (MB = 2^20 bytes in cctools).
  EXPECT_EQ(f.transfers_in, 3684);
  EXPECT_NEAR(f.bytes_in / 1048576.0, 288.620827, 1e-5);
  EXPECT_EQ(f.transfers_out, 1228);
  EXPECT_NEAR(f.bytes_out / 1048576.0, 1164.847284, 1e-5);
  // No worker start/end in WQ logs: execution falls back to WAITING_RETRIEVAL - RUNNING (flagged).
  EXPECT_THAT(model.Warnings(),
              testing::ElementsAre(testing::HasSubstr("1228 retrieved attempts have no worker")));
}

}  // namespace
}  // namespace taskvine
}  // namespace roastcoffea
