// End to end: `collect` on inputs that are not what they claim (reliability study D3, D4, D19):
// an error naming the file and a normal exit, never an abort, a hang or protobuf's own log.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"
#include "store/segmented_measurement.h"
#include "tests/collect_runner.h"

namespace roastcoffea {
namespace {

std::string SaveRun(const std::string& name) {
  v1::Measurement run;
  run.mutable_metadata()->set_name(name);
  const absl::StatusOr<std::string> saved = SaveMeasurement(run, TempDir() + "/runs", name);
  EXPECT_TRUE(saved.ok()) << saved.status();
  return saved.ok() ? *saved : "";
}

// `collect report` reads of each saved record only the fields its plots use: a record whose
// worker name is not UTF-8 (protobuf refuses it) still fails the report, naming the measurement
// and the record, with exit 1.
TEST(CollectInputsTest, ReportOfARecordThatDoesNotParseNamesIt) {
  v1::Measurement run;
  run.mutable_metadata()->set_name("bad-record");
  for (const char* worker : {"wA", "wB", "wC"}) {
    v1::ChunkRecord& record = *run.add_chunks();
    record.set_worker(worker);
    record.set_start_unix_ns(1'765'000'000'000'000'000);
    record.set_end_unix_ns(1'765'000'001'000'000'000);
  }
  store_internal::SetSegmentThresholdBytesForTesting(1);  // saved in parts, as a large run
  const absl::StatusOr<std::string> saved = SaveMeasurement(run, TempDir() + "/runs", "bad-record");
  store_internal::SetSegmentThresholdBytesForTesting(store_internal::kDefaultSegmentThresholdBytes);
  ASSERT_TRUE(saved.ok()) << saved.status();
  const std::string parts = *saved + "/measurement.pbs";
  std::string bytes;
  {
    std::ifstream in(parts, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const size_t at = bytes.find("wB");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 1] = '\xff';
  std::ofstream(parts, std::ios::binary | std::ios::trunc) << bytes;
  const CollectOutcome outcome =
      RunCollect({"report", *saved, "--html_output=" + TempDir() + "/bad-record.html"});
  EXPECT_EQ(outcome.exit_code, 1) << outcome.err;
  EXPECT_TRUE(absl::StrContains(outcome.err, *saved + "': chunk record 2 does not parse"))
      << outcome.err;
}

// The original's layout with metrics.json a directory: collect aborted in std::__ios_failure.
TEST(CollectInputsTest, LegacyMetricsThatIsADirectory) {
  const std::string dir = TempDir() + "/legacy";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  ASSERT_EQ(mkdir((dir + "/metrics.json").c_str(), 0755), 0);
  std::ofstream(dir + "/start_end_time.txt") << "1.0,2.0\n";
  const CollectOutcome show = RunCollect({"show", dir});
  // Bad input data, not bad flags: 1 (tools/exit_code.h).
  EXPECT_EQ(show.exit_code, 1) << show.err;
  EXPECT_TRUE(absl::StrContains(show.err, "metrics.json' is a directory, not a regular file"))
      << show.err;
}

// A legacy metrics.json that is not JSON: the data parser's InvalidArgument exits 1, not 2
// ("bad flags"), and the error names the file.
TEST(CollectInputsTest, CorruptLegacyMetricsExitsOneNamingTheFile) {
  const std::string dir = TempDir() + "/legacy-corrupt";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  std::ofstream(dir + "/metrics.json") << "{\"total_events\": 600000, \"elapsed_time";
  std::ofstream(dir + "/start_end_time.txt") << "1.0,2.0\n";
  for (const char* mode : {"show", "report", "profile"}) {
    const CollectOutcome outcome = RunCollect({mode, dir});
    EXPECT_EQ(outcome.exit_code, 1) << mode << ": " << outcome.err;
    EXPECT_TRUE(absl::StrContains(outcome.err, "metrics.json")) << mode << ": " << outcome.err;
  }
  const CollectOutcome compare = RunCollect({"compare", dir, dir});
  EXPECT_EQ(compare.exit_code, 1) << compare.err;
}

// FORMAT a FIFO blocked collect forever; /dev/zero grew it to an abort.
TEST(CollectInputsTest, FormatThatIsAFifoOrDevZero) {
  const std::string fifo_run = SaveRun("fifo");
  ASSERT_EQ(unlink((fifo_run + "/FORMAT").c_str()), 0);
  ASSERT_EQ(mkfifo((fifo_run + "/FORMAT").c_str(), 0600), 0);
  CollectOutcome show = RunCollect({"show", fifo_run});
  EXPECT_NE(show.exit_code, 0);
  EXPECT_LT(show.exit_code, 128) << show.err;
  EXPECT_TRUE(absl::StrContains(show.err, "FORMAT' is a FIFO, not a regular file")) << show.err;

  const std::string zero_run = SaveRun("zero");
  ASSERT_EQ(unlink((zero_run + "/measurement.pb").c_str()), 0);
  ASSERT_EQ(symlink("/dev/zero", (zero_run + "/measurement.pb").c_str()), 0);
  show = RunCollect({"show", zero_run});
  EXPECT_NE(show.exit_code, 0);
  EXPECT_LT(show.exit_code, 128) << show.err;
  EXPECT_TRUE(absl::StrContains(show.err, "measurement.pb' is a character device")) << show.err;
}

// A corrupt measurement.pb: collect's error only, no "[libprotobuf ERROR ...]" lines before it.
TEST(CollectInputsTest, CorruptMeasurementHasNoProtobufLogLines) {
  const std::string run = SaveRun("corrupt");
  // A string field (metadata.name, field 1 of field 1... ) holding bytes that are not UTF-8.
  std::ofstream(run + "/measurement.pb", std::ios::trunc | std::ios::binary)
      << std::string("\x0a\x04\x12\x02\xff\xfe", 6);
  // Without the JSON copy, which would otherwise stand in for the corrupt .pb.
  std::remove((run + "/measurement.json").c_str());
  const CollectOutcome show = RunCollect({"show", run});
  EXPECT_EQ(show.exit_code, 1) << show.err;
  EXPECT_TRUE(absl::StrContains(show.err, "measurement.pb")) << show.err;
  EXPECT_FALSE(absl::StrContains(show.err, "[libprotobuf")) << show.err;
}

// A "scheduler" on 127.0.0.1 that answers the handshake with garbage: the Dask protocol
// parser's InvalidArgument is bad data from a peer, exit 1 naming it, not 2 ("bad flags").
TEST(CollectInputsTest, GarbageFromTheSchedulerExitsOneNamingIt) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const std::string scheduler = absl::StrCat("tcp://127.0.0.1:", ntohs(address.sin_port));
  std::thread peer([listener] {
    const int connection = accept(listener, nullptr, nullptr);
    if (connection < 0) return;
    const std::string garbage(512, '\xff');
    (void)!write(connection, garbage.data(), garbage.size());
    char sink[4096];
    while (read(connection, sink, sizeof(sink)) > 0) {
    }
    close(connection);
  });
  const CollectOutcome run = RunCollect({"--backend=dask", "--scheduler=" + scheduler,
                                         "--dask_connect_timeout=10", "--dask_read_timeout=10",
                                         "--duration=1", "--output_dir=" + TempDir() + "/garbage"});
  shutdown(listener, SHUT_RDWR);
  close(listener);
  peer.join();
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_TRUE(absl::StrContains(run.err, scheduler)) << run.err;
}

// report --html_output pointing into the measurement must not destroy it.
TEST(CollectInputsTest, ReportNeverOverwritesTheMeasurementItself) {
  const std::string run = SaveRun("overwrite");
  const CollectOutcome report =
      RunCollect({"report", run, "--html_output=" + run + "/measurement.pb"});
  EXPECT_NE(report.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(report.err, "never overwritten")) << report.err;
  const CollectOutcome show = RunCollect({"show", run});
  EXPECT_EQ(show.exit_code, 0) << show.err;
}

}  // namespace
}  // namespace roastcoffea
