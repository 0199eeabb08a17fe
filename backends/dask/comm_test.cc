#include "backends/dask/comm.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "backends/dask/fake_scheduler.h"
#include "backends/dask/fixtures.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea::dask {
namespace {

using ::testing::Contains;
using testing::FakeScheduler;
using testing::FixtureBytes;
using ::testing::HasSubstr;
using ::testing::Not;

std::optional<std::string> CapturedReplies(const Value& request) {
  const std::string op = request.Find("op")->text();
  if (op == "identity") return FixtureBytes("identity_reply");
  if (op == "get_task_status") return FixtureBytes("error_reply_uncaught");
  if (op == "processing") return FixtureBytes("processing_reply");
  if (op == "echo") return EncodeMessage(*request.Find("data"));
  if (op == "versions") {
    Value packages = Value::Map();
    packages.Insert(Value::Str("distributed"), Value::Str("2022.12.1+ds.1"));
    Value reply = Value::Map();
    reply.Insert(Value::Str("packages"), packages);
    return EncodeMessage(reply);
  }
  return FixtureBytes("unknown_op_reply");
}

SchedulerAddress Loopback(int port) {
  return SchedulerAddress{"127.0.0.1", static_cast<uint16_t>(port)};
}

CommOptions FastOptions() {
  CommOptions options;
  options.connect_timeout = absl::Seconds(2);
  options.read_timeout = absl::Milliseconds(500);
  return options;
}

TEST(SchedulerAddressTest, ParsesAndRejects) {
  EXPECT_EQ(ParseSchedulerAddress("tcp://127.0.0.1:8786")->port, 8786);
  EXPECT_EQ(ParseSchedulerAddress("localhost:1")->host, "localhost");
  EXPECT_EQ(ParseSchedulerAddress("tcp://[::1]:8786")->host, "::1");
  EXPECT_THAT(ParseSchedulerAddress("tls://a:1").status().message(), HasSubstr("only tcp://"));
  EXPECT_THAT(ParseSchedulerAddress("tcp://a").status().message(), HasSubstr("no :PORT"));
  EXPECT_THAT(ParseSchedulerAddress("tcp://a:99999").status().message(), HasSubstr("1..65535"));
  EXPECT_FALSE(ParseSchedulerAddress("tcp://:80").ok());
}

TEST(DaskVersionTest, ParsesDebianAndDevVersions) {
  DaskVersion v = *ParseDaskVersion("2022.12.1+ds.1");
  EXPECT_EQ(v.year, 2022);
  EXPECT_EQ(v.month, 12);
  EXPECT_EQ(v.patch, 1);
  EXPECT_TRUE(v.AtLeast(2022, 10, 1));
  EXPECT_FALSE(v.AtLeast(2023, 4, 0));
  EXPECT_TRUE(ParseDaskVersion("2026.7.1.dev8")->AtLeast(2026, 6, 0));
  EXPECT_FALSE(ParseDaskVersion("garbage").ok());
}

TEST(OpPolicyTest, DeniesEveryOpThatChangesTheCluster) {
  for (const char* op :
       {"terminate", "retire_workers", "restart", "run_function", "rebalance",
        "register_scheduler_plugin", "unregister_worker_plugin", "set_metadata", "scatter",
        "cancel", "broadcast", "proxy", "memory_sampler_start", "subscribe_worker_status", "feed",
        "check_idle", "workers_to_close", "heartbeat_worker", "start_task_metadata"}) {
    EXPECT_TRUE(IsDeniedOp(op)) << op;
    EXPECT_FALSE(IsAllowedOp(op)) << op;
  }
  for (const char* op : {"identity", "versions", "get_task_stream", "processing", "dump_state",
                         "profile", "get_cluster_state"}) {
    EXPECT_TRUE(IsAllowedOp(op)) << op;
  }
  EXPECT_FALSE(IsAllowedOp("no_such_op"));
}

TEST(DaskCommTest, HandshakeCallsAndCleanClose) {
  FakeScheduler scheduler(CapturedReplies);
  absl::StatusOr<std::unique_ptr<DaskComm>> comm =
      DaskComm::Connect(Loopback(scheduler.port()), FastOptions());
  ASSERT_TRUE(comm.ok()) << comm.status();
  EXPECT_EQ((*comm)->server_handshake().Find("compression")->text(), "lz4");
  absl::StatusOr<Value> identity = (*comm)->Call("identity");
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_EQ(identity->Find("workers")->size(), 2u);
  Value args = Value::Map();
  args.Insert(Value::Str("data"), Value::Array({Value::Str("x"), Value::Int(-5)}));
  EXPECT_EQ(*(*comm)->Call("echo", args), *args.Find("data"));
  EXPECT_EQ((*comm)->ProbeVersion()->text, "2022.12.1+ds.1");
  (*comm)->Close();
  EXPECT_TRUE((*comm)->broken());
  EXPECT_TRUE(scheduler.WaitForOp("close"));
}

TEST(DaskCommTest, ErrorRepliesCarryTheExceptionText) {
  FakeScheduler scheduler(CapturedReplies);
  auto comm = *DaskComm::Connect(Loopback(scheduler.port()), FastOptions());
  absl::StatusOr<Value> reply = comm->Call("get_task_status");
  EXPECT_TRUE(absl::IsInternal(reply.status()));
  EXPECT_THAT(reply.status().message(), HasSubstr("TypeError"));
  // Quoted as io/untrusted_json.h's EchoedText quotes peer text (quotes escaped).
  EXPECT_THAT(reply.status().message(), HasSubstr("\\'NoneType\\' object is not iterable"));
  // The connection stays usable after an error reply.
  EXPECT_TRUE(comm->Call("identity").ok());
}

TEST(DaskCommTest, AHugeErrorTextIsCutAndEscaped) {
  // A hostile scheduler's error replies: 100 KB of text with control bytes, under either key.
  const std::string huge = "<script>\x1b[2J" + std::string(100000, 'E');
  FakeScheduler scheduler([&](const Value& request) -> std::optional<std::string> {
    const std::string op = request.Find("op")->text();
    Value reply = Value::Map();
    reply.Insert(Value::Str("status"), Value::Str(op == "identity" ? "uncaught-error" : "error"));
    reply.Insert(Value::Str(op == "identity" ? "exception_text" : "text"), Value::Str(huge));
    reply.Insert(Value::Str("traceback_text"), Value::Str("x\n" + huge + "\n"));
    return EncodeMessage(reply);
  });
  auto comm = *DaskComm::Connect(Loopback(scheduler.port()), FastOptions());
  for (const char* op : {"identity", "processing"}) {
    absl::StatusOr<Value> reply = comm->Call(op);
    ASSERT_TRUE(absl::IsInternal(reply.status())) << op << ": " << reply.status();
    const absl::string_view message = reply.status().message();
    // Two quotes of at most 200 bytes each (escaped: at most 4 characters a byte) and ours.
    EXPECT_LT(message.size(), 2 * 4 * 200 + 200) << op;
    EXPECT_THAT(message, HasSubstr("<script>\\x1b[2JEEE")) << op;
    EXPECT_THAT(message, HasSubstr("E... (traceback ends: <script>")) << op;
    EXPECT_EQ(message.find('\x1b'), absl::string_view::npos) << op;
  }
}

TEST(DaskCommTest, RefusesDeniedOpsWithoutSendingThem) {
  FakeScheduler scheduler(CapturedReplies);
  auto comm = *DaskComm::Connect(Loopback(scheduler.port()), FastOptions());
  for (const char* op : {"terminate", "retire_workers", "register_worker_plugin", "no_such_op"}) {
    EXPECT_TRUE(absl::IsPermissionDenied(comm->Call(op).status())) << op;
  }
  Value reserved = Value::Map();
  reserved.Insert(Value::Str("close"), Value::Bool(true));
  EXPECT_TRUE(absl::IsPermissionDenied(comm->Call("identity", reserved).status()));
  EXPECT_TRUE(comm->Call("identity").ok());
  scheduler.Stop();
  EXPECT_THAT(scheduler.ops(), Not(Contains("terminate")));
  EXPECT_EQ(scheduler.ops(), std::vector<std::string>({"identity"}));
}

TEST(DaskCommTest, HostilePeersGiveClearErrors) {
  const std::string handshake = FixtureBytes("handshake_1_server_to_client");
  // Garbage instead of a handshake.
  {
    FakeScheduler garbage([](const Value&) { return std::nullopt; }, 0, std::string(64, '\xff'));
    auto comm = DaskComm::Connect(Loopback(garbage.port()), FastOptions());
    EXPECT_THAT(comm.status().message(), HasSubstr("handshake"));
  }
  // A msgpack map that is not a handshake.
  {
    Value not_handshake = Value::Map();
    not_handshake.Insert(Value::Str("hello"), Value::Int(1));
    FakeScheduler wrong([](const Value&) { return std::nullopt; }, 0, EncodeMessage(not_handshake));
    EXPECT_THAT(DaskComm::Connect(Loopback(wrong.port()), FastOptions()).status().message(),
                HasSubstr("not a Dask handshake"));
  }
  // Silence: the read timeout fires.
  {
    FakeScheduler silent([](const Value&) { return std::nullopt; }, 0, std::string());
    EXPECT_TRUE(absl::IsDeadlineExceeded(
        DaskComm::Connect(Loopback(silent.port()), FastOptions()).status()));
  }
  // Oversized length, truncated reply, broken msgpack in frame 0.
  for (const std::string& bad :
       {std::string("\x18\0\0\0\0\0\0\0\x01\0\0\0\0\0\0\0\xff\xff\xff\xff\xff\xff\xff\x7f", 24),
        FixtureBytes("identity_reply").substr(0, 500), EncodeFrames({"\xdd\xff\xff\xff\xff"})}) {
    FakeScheduler broken([bad](const Value&) { return std::optional<std::string>(bad); });
    auto comm = *DaskComm::Connect(Loopback(broken.port()), FastOptions());
    absl::StatusOr<Value> reply = comm->Call("identity");
    EXPECT_FALSE(reply.ok());
    EXPECT_THAT(reply.status().message(), HasSubstr("reply to op 'identity'"));
    EXPECT_TRUE(comm->broken());
    EXPECT_TRUE(absl::IsUnavailable(comm->Call("identity").status()));
  }
}

// A slowloris peer (reliability study D5): every byte arrives well within the read timeout, but
// the connect + handshake and each call are bounded as wholes.
TEST(DaskCommTest, ADribblingHandshakeIsBoundedByTheConnectTimeout) {
  FakeScheduler slow(CapturedReplies);
  slow.Dribble(std::chrono::milliseconds(100), {"handshake"});
  CommOptions options;
  options.connect_timeout = absl::Seconds(1);
  options.read_timeout = absl::Seconds(1);
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<DaskComm>> comm =
      DaskComm::Connect(Loopback(slow.port()), options);
  EXPECT_TRUE(absl::IsDeadlineExceeded(comm.status())) << comm.status();
  EXPECT_THAT(comm.status().message(), HasSubstr("not complete within 1s"));
  // The captured handshake has over 60 bytes: dribbled whole it would take over 6 s.
  EXPECT_GT(FixtureBytes("handshake_1_server_to_client").size(), 60u);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST(DaskCommTest, ADribblingReplyIsBoundedByTheReadTimeout) {
  FakeScheduler slow(CapturedReplies);
  auto comm = *DaskComm::Connect(Loopback(slow.port()), FastOptions());
  slow.Dribble(std::chrono::milliseconds(50), {"identity"});
  const absl::Time start = absl::Now();
  absl::StatusOr<Value> reply = comm->Call("identity");
  EXPECT_TRUE(absl::IsDeadlineExceeded(reply.status())) << reply.status();
  EXPECT_THAT(reply.status().message(), HasSubstr("reply to op 'identity'"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_TRUE(comm->broken());
}

TEST(DaskCommTest, ACallDeadlineShortensTheReadTimeout) {
  FakeScheduler slow(CapturedReplies);
  CommOptions options = FastOptions();
  options.read_timeout = absl::Seconds(60);
  auto comm = *DaskComm::Connect(Loopback(slow.port()), options);
  slow.Dribble(std::chrono::milliseconds(50), {"identity"});
  const absl::Time start = absl::Now();
  absl::StatusOr<Value> reply =
      comm->Call("identity", Value::Nil(), DeadlineNow() + absl::Milliseconds(300));
  EXPECT_TRUE(absl::IsDeadlineExceeded(reply.status())) << reply.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST(DaskCommTest, GiveUpEndsEveryWaitSoon) {
  std::atomic<bool> stop{false};
  CommOptions options;
  options.connect_timeout = absl::Seconds(60);
  options.read_timeout = absl::Seconds(60);
  options.give_up = [&stop] { return stop.load(); };
  std::thread stopper([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;
  });
  // A handshake that never comes.
  FakeScheduler silent([](const Value&) { return std::nullopt; }, 0, std::string());
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<DaskComm>> comm =
      DaskComm::Connect(Loopback(silent.port()), options);
  stopper.join();
  EXPECT_TRUE(absl::IsCancelled(comm.status())) << comm.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));

  // A reply that never ends.
  stop = false;
  FakeScheduler slow(CapturedReplies);
  auto connected = *DaskComm::Connect(Loopback(slow.port()), options);
  slow.Dribble(std::chrono::milliseconds(50), {"identity"});
  std::thread again([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;
  });
  const absl::Time called = absl::Now();
  absl::StatusOr<Value> reply = connected->Call("identity");
  again.join();
  EXPECT_TRUE(absl::IsCancelled(reply.status())) << reply.status();
  EXPECT_LT(absl::Now() - called, absl::Seconds(5));
  EXPECT_TRUE(connected->broken());
}

TEST(DaskCommTest, ConnectToAClosedPortIsUnavailable) {
  int port;
  {
    FakeScheduler scheduler(CapturedReplies);
    port = scheduler.port();
  }
  absl::StatusOr<std::unique_ptr<DaskComm>> comm = DaskComm::Connect(Loopback(port), FastOptions());
  EXPECT_TRUE(absl::IsUnavailable(comm.status()));
  EXPECT_THAT(comm.status().message(), HasSubstr("cannot connect"));
}

}  // namespace
}  // namespace roastcoffea::dask
