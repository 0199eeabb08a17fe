// End to end: `collect --serve` watched by Debian's real Prometheus (started here on 127.0.0.1
// with a scrape config written here, stopped after), by headless Chromium, and by hostile
// clients, during a real thread-pool run.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "live/http_test_client.h"
#include "store/measurement_io.h"
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

// Waits for `needle` in the file; what follows it on its line.
std::string WaitForLine(const std::string& path, const std::string& needle,
                        absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    const std::string text = ReadFile(path);
    const size_t at = text.find(needle);
    if (at != std::string::npos && text.find('\n', at) != std::string::npos) {
      return text.substr(at + needle.size(), text.find('\n', at) - at - needle.size());
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  return "";
}

// The value of the first sample of an instant query's reply ("value":[ts,"V"]), or -1.
double QueryValue(int prometheus_port, const std::string& query) {
  std::string encoded;
  for (const char c : query) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      encoded += c;
    } else {
      encoded += absl::StrFormat("%%%02X", static_cast<unsigned char>(c));
    }
  }
  const std::string body = live::Body(live::Get(prometheus_port, "/api/v1/query?query=" + encoded));
  const size_t value = body.find("\"value\":[");
  if (value == std::string::npos) return -1;
  const size_t quote = body.find('"', body.find(',', value));
  double v = -1;
  if (!absl::SimpleAtod(body.substr(quote + 1, body.find('"', quote + 1) - quote - 1), &v)) {
    return -1;
  }
  return v;
}

class CollectServeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // A dataset generated first: the measured run (5.4 M events on one thread) then lasts about
    // 9 s from its start on an idle machine, long enough for Chromium to render the live page.
    ASSERT_EQ(RunCollect({"--events_per_file=600000", "--files_per_dataset=3", "--threads=1",
                          "--cache_dir=" + Cache(), "--output_dir=" + TempDir() + "/gen",
                          "--name=generate", "--checkpoint_interval=0"})
                  .exit_code,
              0);
  }
  static std::string Cache() { return TempDir() + "/serve-cache"; }
  // `chunk_size`: 3,000 runs about 5 s on a quiet machine; the page test wants a run that is
  // still going when a headless Chromium (slow to start under the sanitizers) renders, and
  // smaller chunks re-read their compressed blocks, so the same dataset (the test's disk is
  // small) takes longer.
  std::vector<std::string> Run(const std::string& name, int chunk_size = 3000) {
    return {Collect(),
            "--events_per_file=600000",
            "--files_per_dataset=3",
            absl::StrCat("--chunk_size=", chunk_size),
            "--threads=1",
            "--cache_dir=" + Cache(),
            "--output_dir=" + TempDir() + "/serve",
            "--name=" + name,
            "--serve=127.0.0.1:0",
            "--serve_linger=4"};
  }
};

TEST_F(CollectServeTest, ARealPrometheusScrapesTheRunAndItsLastValueIsTheSavedCount) {
  // Prometheus first, scraping the port collect will serve on: its target discovery takes a
  // few seconds, which must not eat the run.
  const int port = FreeLoopbackPort();
  const int prometheus_port = FreeLoopbackPort();
  const std::string config = TempDir() + "/prometheus.yml";
  std::ofstream(config) << "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n"
                           "scrape_configs:\n  - job_name: roastcoffea\n    static_configs:\n"
                           "      - targets: ['127.0.0.1:"
                        << port << "']\n";
  ChildProcess prometheus({"/usr/bin/prometheus", "--config.file=" + config,
                           "--storage.tsdb.path=" + TempDir() + "/tsdb",
                           absl::StrCat("--web.listen-address=127.0.0.1:", prometheus_port)},
                          Environment(), TempDir() + "/prometheus.log");
  ASSERT_TRUE(prometheus.started());
  const absl::Time discovery = absl::Now() + absl::Seconds(60);
  while (absl::Now() < discovery &&
         !absl::StrContains(live::Body(live::Get(prometheus_port, "/api/v1/targets")),
                            absl::StrCat("127.0.0.1:", port))) {
    absl::SleepFor(absl::Milliseconds(200));
  }

  const std::string log = TempDir() + "/scraped.log";
  std::vector<std::string> argv = Run("scraped");
  std::replace(argv.begin(), argv.end(), std::string("--serve=127.0.0.1:0"),
               absl::StrCat("--serve=127.0.0.1:", port));
  ChildProcess collect(argv, Environment(), log);
  ASSERT_TRUE(collect.started());
  ASSERT_FALSE(WaitForLine(log, "serving live at http://", absl::Seconds(30)).empty())
      << ReadFile(log);

  // promtool accepts the exposition.
  const std::string exposition = live::Body(live::Get(port, "/metrics"));
  ASSERT_THAT(exposition, HasSubstr("roastcoffea_chunks_total"));
  const std::string metrics_file = TempDir() + "/exposition.txt";
  std::ofstream(metrics_file) << exposition;
  EXPECT_EQ(system(absl::StrCat("/usr/bin/promtool check metrics < ", metrics_file, " > ",
                                TempDir(), "/promtool.log 2>&1")
                       .c_str()),
            0)
      << ReadFile(TempDir() + "/promtool.log");

  // While the run goes on, the counter rises.
  std::vector<double> seen;
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (absl::Now() < deadline) {
    const double finished = QueryValue(prometheus_port, "roastcoffea_run_finished");
    const double chunks = QueryValue(prometheus_port, "roastcoffea_chunks_total{status=\"ok\"}");
    if (finished == 1) break;
    if (chunks >= 0 && (seen.empty() || chunks != seen.back())) seen.push_back(chunks);
    absl::SleepFor(absl::Milliseconds(300));
  }
  ASSERT_GE(seen.size(), 2u) << "scraped values while running; prometheus:\n"
                             << ReadFile(TempDir() + "/prometheus.log") << "\ncollect:\n"
                             << ReadFile(log);
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_GT(seen[i], seen[i - 1]);

  EXPECT_EQ(collect.Wait(absl::Seconds(120)), 0) << ReadFile(log);
  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(TempDir() + "/serve/scraped");
  ASSERT_TRUE(saved.ok()) << saved.status();
  int64_t ok = 0;
  for (const v1::ChunkRecord& chunk : saved->chunks()) ok += chunk.status() == v1::CHUNK_STATUS_OK;
  // collect has exited, so Prometheus marked the series stale: the last value scraped is the
  // last one over a range (counters only grow, so it is also the largest).
  EXPECT_EQ(
      QueryValue(prometheus_port, "last_over_time(roastcoffea_chunks_total{status=\"ok\"}[10m])"),
      static_cast<double>(ok));
  EXPECT_EQ(QueryValue(prometheus_port, "last_over_time(roastcoffea_run_finished[10m])"), 1);
  EXPECT_EQ(QueryValue(prometheus_port, "last_over_time(roastcoffea_events_total[10m])"),
            static_cast<double>(saved->metrics().workflow().total_events()));
}

// The live page in headless Chromium shows the run's progress; hostile clients (1,000 idle
// connections, a slow reader, malformed requests) neither stall nor lose the run.
TEST_F(CollectServeTest, TheLivePageShowsProgressAndHostileClientsCannotHurtTheRun) {
  const std::string log = TempDir() + "/page.log";
  const absl::Time started = absl::Now();
  ChildProcess collect(Run("page", 1000), Environment(), log);
  ASSERT_TRUE(collect.started());
  const std::string port_text =
      WaitForLine(log, "serving live at http://127.0.0.1:", absl::Seconds(30));
  int port = 0;
  ASSERT_TRUE(absl::SimpleAtoi(port_text.substr(0, port_text.find('/')), &port)) << ReadFile(log);

  std::vector<int> idle;
  for (int i = 0; i < 1000; ++i) {
    const int fd = live::ConnectLoopback(port);
    if (fd >= 0) idle.push_back(fd);
  }
  const int slow = live::ConnectLoopback(port);
  const std::string request = "GET / HTTP/1.1\r\n\r\n";
  send(slow, request.data(), request.size(), MSG_NOSIGNAL);  // and never read the answer
  EXPECT_THAT(live::Exchange(port, "\x16\x03\x01 garbage\r\n\r\n"), HasSubstr("400"));

  // Chromium renders the page while the run goes on.
  const std::string profile = TempDir() + "/chromium-profile";
  ChildProcess chromium(
      {"/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
       "--disable-background-networking", "--disable-component-update", "--disable-sync",
       "--no-first-run", "--disable-dev-shm-usage", "--user-data-dir=" + profile,
       "--window-size=800,1000", "--dump-dom", absl::StrCat("http://127.0.0.1:", port, "/")},
      Environment(), TempDir() + "/chromium.log");
  ASSERT_TRUE(chromium.started());
  chromium.Wait(absl::Seconds(60));
  const std::string dom = ReadFile(TempDir() + "/chromium.log");
  EXPECT_THAT(dom, HasSubstr("roastcoffea live: page")) << dom.substr(0, 3000);
  EXPECT_THAT(dom, HasSubstr("id=\"progress\"")) << dom.substr(0, 3000);
  EXPECT_THAT(dom, ::testing::ContainsRegex("[0-9,]+ of [0-9,]+ chunks")) << dom.substr(0, 3000);

  EXPECT_EQ(collect.Wait(absl::Seconds(120)), 0) << ReadFile(log);
  // On time: the run's own length plus the linger, not the clients' patience.
  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(TempDir() + "/serve/page");
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_LT(absl::Now() - started,
            absl::Seconds(saved->metadata().elapsed_seconds() + 4 /* linger */ + 20));
  for (const int fd : idle) close(fd);
  close(slow);
}

TEST(CollectServeFlagsTest, APortInUseIsAnErrorBeforeTheRun) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  const int port = ntohs(address.sin_port);
  const CollectOutcome outcome = RunCollect(
      {"--events_per_file=1000", "--files_per_dataset=1", "--cache_dir=" + TempDir() + "/tiny",
       "--output_dir=" + TempDir() + "/busy", absl::StrCat("--serve=127.0.0.1:", port)});
  EXPECT_EQ(outcome.exit_code, 2) << outcome.err;
  EXPECT_THAT(outcome.err, HasSubstr(absl::StrCat("127.0.0.1:", port)));
  EXPECT_THAT(outcome.out, ::testing::Not(HasSubstr("Measurement saved")));
  const CollectOutcome bad = RunCollect({"--serve=:99999"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--serve=:99999"));
  close(fd);
}

}  // namespace
}  // namespace roastcoffea
