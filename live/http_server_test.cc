#include "live/http_server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "live/http_test_client.h"

namespace roastcoffea {
namespace live {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::unique_ptr<HttpServer> Serve(HttpServerOptions options = {}) {
  absl::StatusOr<std::unique_ptr<HttpServer>> server =
      HttpServer::Start(options, [](const HttpRequest& request) {
        HttpResponse response;
        if (request.path == "/") {
          response.body = absl::StrCat("hello; accept=", request.accept);
        } else {
          response.status = 404;
          response.body = "no";
        }
        return response;
      });
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

TEST(HttpServerTest, AnswersGetOnLoopbackAndPicksAFreePort) {
  std::unique_ptr<HttpServer> server = Serve();
  ASSERT_NE(server, nullptr);
  EXPECT_GT(server->port(), 0);
  EXPECT_EQ(server->address(), absl::StrCat("127.0.0.1:", server->port()));
  const std::string response = Get(server->port(), "/?x=1", "text/plain");
  EXPECT_THAT(response, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(response, HasSubstr("Content-Length: 24\r\n"));
  EXPECT_EQ(Body(response), "hello; accept=text/plain");
  EXPECT_THAT(Get(server->port(), "/nope"), StartsWith("HTTP/1.1 404 "));
}

TEST(HttpServerTest, APortInUseOrABadHostIsAnErrorBeforeServing) {
  std::unique_ptr<HttpServer> first = Serve();
  ASSERT_NE(first, nullptr);
  HttpServerOptions same;
  same.port = first->port();
  absl::StatusOr<std::unique_ptr<HttpServer>> second =
      HttpServer::Start(same, [](const HttpRequest&) { return HttpResponse(); });
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.status().message(), HasSubstr(absl::StrCat("127.0.0.1:", first->port())));
  HttpServerOptions bad;
  bad.host = "localhost.example";
  EXPECT_TRUE(absl::IsInvalidArgument(
      HttpServer::Start(bad, [](const HttpRequest&) { return HttpResponse(); }).status()));
}

TEST(HttpServerTest, MalformedAndOversizedRequestsGetAnErrorNotACrash) {
  HttpServerOptions options;
  options.max_request_bytes = 1024;
  std::unique_ptr<HttpServer> server = Serve(options);
  ASSERT_NE(server, nullptr);
  EXPECT_THAT(Exchange(server->port(), "NONSENSE\r\n\r\n"), StartsWith("HTTP/1.1 400 "));
  EXPECT_THAT(Exchange(server->port(), "GET no-slash HTTP/1.1\r\n\r\n"),
              StartsWith("HTTP/1.1 400 "));
  EXPECT_THAT(Exchange(server->port(), "POST / HTTP/1.1\r\n\r\n"), StartsWith("HTTP/1.1 405 "));
  EXPECT_THAT(Exchange(server->port(), "GET / HTTP/1.1\r\nX: " + std::string(4096, 'a')),
              StartsWith("HTTP/1.1 431 "));
  EXPECT_THAT(Exchange(server->port(), std::string("GET /\0\x01 HTTP/1.1\r\n\r\n", 21)),
              StartsWith("HTTP/1.1 "));
  EXPECT_THAT(Get(server->port(), "/"), StartsWith("HTTP/1.1 200 OK"));
}

// 1,000 connections that never send a byte cannot lock a scraper out, and Stop() is prompt.
TEST(HttpServerTest, IdleConnectionsNeitherLockOutAScraperNorDelayStop) {
  HttpServerOptions options;
  options.max_connections = 64;
  std::unique_ptr<HttpServer> server = Serve(options);
  ASSERT_NE(server, nullptr);
  std::vector<int> idle;
  for (int i = 0; i < 1000; ++i) {
    const int fd = ConnectLoopback(server->port());
    if (fd >= 0) idle.push_back(fd);
  }
  EXPECT_GE(idle.size(), 900u);
  absl::SleepFor(absl::Milliseconds(300));  // let the server accept them
  EXPECT_THAT(Get(server->port(), "/"), StartsWith("HTTP/1.1 200 OK"));
  const absl::Time before = absl::Now();
  server->Stop();
  EXPECT_LT(absl::Now() - before, absl::Seconds(1));
  for (const int fd : idle) close(fd);
}

// A client that sends half a request and stops, and one that never reads its (large) answer,
// are dropped at their deadlines; others are served meanwhile.
TEST(HttpServerTest, SlowClientsAreCutAtTheirDeadlines) {
  HttpServerOptions options;
  options.request_timeout = absl::Milliseconds(300);
  options.response_timeout = absl::Milliseconds(300);
  absl::StatusOr<std::unique_ptr<HttpServer>> server =
      HttpServer::Start(options, [](const HttpRequest&) {
        HttpResponse response;
        response.body = std::string(8 << 20, 'x');  // more than the socket buffers hold
        return response;
      });
  ASSERT_TRUE(server.ok());
  const int half = ConnectLoopback((*server)->port());
  ASSERT_GE(half, 0);
  ASSERT_GT(send(half, "GET / HT", 8, MSG_NOSIGNAL), 0);
  const int never_reads = ConnectLoopback((*server)->port());
  ASSERT_GE(never_reads, 0);
  const std::string request = "GET / HTTP/1.1\r\n\r\n";
  ASSERT_GT(send(never_reads, request.data(), request.size(), MSG_NOSIGNAL), 0);
  // Meanwhile a normal client gets its 8 MiB.
  const std::string response = Get((*server)->port(), "/");
  EXPECT_EQ(Body(response).size(), 8u << 20);
  // Both are dropped at their deadlines (300 ms), whatever they do.
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while ((*server)->open_connections() > 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ((*server)->open_connections(), 0);
  close(half);
  close(never_reads);
}

}  // namespace
}  // namespace live
}  // namespace roastcoffea
