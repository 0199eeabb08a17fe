#include "backends/dask/identity.h"

#include "backends/dask/fixtures.h"
#include "backends/dask/msgpack_codec.h"
#include "backends/dask/wire.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea::dask {
namespace {

using ::testing::HasSubstr;

Value Fixture(const std::string& name) {
  const std::string bytes = testing::FixtureBytes(name);
  StringByteReader reader(bytes);
  return *DecodeMessage(*ReadFrames(reader));
}

TEST(IdentityTest, ParsesTheCapturedTwoWorkerCluster) {
  absl::StatusOr<SchedulerSnapshot> s = ParseIdentity(Fixture("identity_reply"));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->address, "tcp://127.0.0.1:8786");
  ASSERT_EQ(s->workers.size(), 2u);
  const WorkerSnapshot& nanny = s->workers[0];
  EXPECT_EQ(nanny.address, "tcp://127.0.0.1:38163");
  EXPECT_EQ(nanny.name, "w-nanny");
  EXPECT_EQ(nanny.nthreads, 1);
  EXPECT_EQ(nanny.memory_limit_bytes, 2000000000);
  EXPECT_DOUBLE_EQ(nanny.last_seen_unix_seconds, 1795331015.7364202);
  EXPECT_EQ(nanny.memory_bytes, 112537600);
  EXPECT_EQ(nanny.managed_bytes, 40112);
  EXPECT_EQ(nanny.cpu_percent, 2.0);
  EXPECT_EQ(nanny.executing_tasks, 0);
  EXPECT_EQ(*nanny.spilled_bytes, 0);
  EXPECT_DOUBLE_EQ(*nanny.network_read_bytes_per_second, 3462.644911463782);
  EXPECT_EQ(*nanny.disk_write_bytes_per_second, 0.0);
  const WorkerSnapshot& busy = s->workers[1];
  EXPECT_EQ(busy.nthreads, 2);
  EXPECT_EQ(busy.executing_tasks, 1);  // slow-1 was running
  EXPECT_DOUBLE_EQ(*busy.disk_read_bytes_per_second, 49093.568245951676);
  EXPECT_TRUE(busy.digests.empty());  // 2022.12 has no digests
}

TEST(IdentityTest, ReadsNewerDigestsAndSparseTaskCounts) {
  Value metrics = Value::Map();
  Value counts = Value::Map();
  counts.Insert(Value::Str("executing"), Value::Int(3));  // ≥ 2023.2.1: only non-zero states
  metrics.Insert(Value::Str("task_counts"), counts);
  Value digests = Value::Map();
  digests.Insert(Value::Array({Value::Str("execute"), Value::Str("slowadd"),
                               Value::Str("thread-cpu"), Value::Str("seconds")}),
                 Value::Float(1.5));
  digests.Insert(
      Value::Array({Value::Str("gather-dep"), Value::Str("network"), Value::Str("bytes")}),
      Value::Int(100));
  digests.Insert(Value::Str("latency"), Value::Float(0.1));  // str labels are not activities
  metrics.Insert(Value::Str("digests_total_since_heartbeat"), digests);
  Value worker = Value::Map();
  worker.Insert(Value::Str("nthreads"), Value::Int(4));
  worker.Insert(Value::Str("last_seen"), Value::Float(10.5));
  worker.Insert(Value::Str("metrics"), metrics);
  Value workers = Value::Map();
  workers.Insert(Value::Str("tcp://w:1"), worker);
  Value reply = Value::Map();
  reply.Insert(Value::Str("workers"), workers);
  absl::StatusOr<SchedulerSnapshot> s = ParseIdentity(reply);
  ASSERT_TRUE(s.ok()) << s.status();
  const WorkerSnapshot& w = s->workers[0];
  EXPECT_EQ(w.executing_tasks, 3);
  EXPECT_FALSE(w.spilled_bytes.has_value());
  ASSERT_EQ(w.digests.size(), 2u);
  EXPECT_EQ(w.digests[0].context, "execute");
  EXPECT_EQ(w.digests[0].task_prefix, "slowadd");
  EXPECT_EQ(w.digests[0].activity, "thread-cpu");
  EXPECT_EQ(w.digests[0].value, 1.5);
  EXPECT_EQ(w.digests[1].task_prefix, "");
  EXPECT_EQ(w.digests[1].activity, "network");
}

TEST(IdentityTest, PeerTextIsCutAndEscaped) {
  Value info = Value::Map();
  info.Insert(Value::Str("nthreads"), Value::Int(1));
  info.Insert(Value::Str("last_seen"), Value::Float(1));
  info.Insert(Value::Str("name"), Value::Str("\r" + std::string(1 << 20, 'n')));
  info.Insert(Value::Str("host"), Value::Str("h\x07"));
  Value workers = Value::Map();
  workers.Insert(Value::Str(std::string(300, 'a')), info);
  Value reply = Value::Map();
  reply.Insert(Value::Str("workers"), workers);
  absl::StatusOr<SchedulerSnapshot> snapshot = ParseIdentity(reply);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  ASSERT_EQ(snapshot->workers.size(), 1u);
  const WorkerSnapshot& w = snapshot->workers[0];
  EXPECT_EQ(w.address, std::string(200, 'a') + "...");
  EXPECT_EQ(w.name, "\\r" + std::string(199, 'n') + "...");
  EXPECT_EQ(w.host, "h\\x07");
}

TEST(IdentityTest, RejectsWrongShapes) {
  EXPECT_THAT(ParseIdentity(Value::Array()).status().message(), HasSubstr("not a map"));
  EXPECT_THAT(ParseIdentity(Value::Map()).status().message(), HasSubstr("no 'workers' map"));
  Value workers = Value::Map();
  Value worker = Value::Map();
  worker.Insert(Value::Str("nthreads"), Value::Str("two"));
  workers.Insert(Value::Str("tcp://w:1"), worker);
  Value reply = Value::Map();
  reply.Insert(Value::Str("workers"), workers);
  EXPECT_THAT(ParseIdentity(reply).status().message(),
              HasSubstr("tcp://w:1 lacks a numeric nthreads"));
}

}  // namespace
}  // namespace roastcoffea::dask
