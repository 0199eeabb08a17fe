// A small HTTP/1.1 server for the live view (GET /metrics, GET /): one thread of its own, one
// poll loop, every connection bounded in bytes and time, so that no client can hold memory, a
// thread or a lock the measured run needs, and Stop() returns at once whatever clients do.
//
// Why not a library: Debian's cpp-httplib gives each connection a pool thread until its read
// timeout, so 1,000 idle connections queue behind 8 threads and its shutdown waits for them;
// prometheus-cpp's exposer brings civetweb and a registry that would duplicate the session's
// own counters. What this needs (two GET routes, hostile clients, prompt shutdown) is ~300
// lines here, with its limits in one place.
//
// Limits: a request head (request line and headers) of at most max_request_bytes, received
// within request_timeout of the connection's accept; a response sent within response_timeout;
// at most max_connections open at once (the oldest connection still waiting for its request is
// dropped to make room, so idle connections cannot lock out a scraper). One request per
// connection ("Connection: close"). Bodies of requests are not read.
//
// Thread-safety: Start/Stop from one thread; the handler runs on the server's thread.
#ifndef ROASTCOFFEA_LIVE_HTTP_SERVER_H_
#define ROASTCOFFEA_LIVE_HTTP_SERVER_H_

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace roastcoffea {
namespace live {

struct HttpServerOptions {
  // Address to bind: "127.0.0.1" (loopback only) unless the user names another.
  std::string host = "127.0.0.1";
  int port = 0;  // 0: any free port (port() says which)
  int max_connections = 64;
  size_t max_request_bytes = 8192;
  absl::Duration request_timeout = absl::Seconds(5);
  absl::Duration response_timeout = absl::Seconds(10);
};

struct HttpRequest {
  std::string method;  // "GET"
  std::string path;    // "/metrics" (without the query)
  std::string accept;  // the Accept header, "" without one
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

class HttpServer {
 public:
  // Binds and listens before returning, so that a bad host or a port in use is an error now,
  // before the run starts (InvalidArgument for a host that is not an IPv4/IPv6 address,
  // FailedPrecondition naming the address for a port in use); then serves on its own thread.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const HttpServerOptions& options,
                                                           HttpHandler handler);
  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }
  // "127.0.0.1:8000" ("[::1]:8000" for IPv6).
  std::string address() const { return address_; }
  // Closes the listening socket and every connection and joins the thread; prompt whatever the
  // clients do. Idempotent.
  void Stop();

  // Requests answered so far, and connections open now (for tests and the live page).
  int64_t requests_served() const { return served_.load(); }
  int open_connections() const { return open_.load(); }

 private:
  HttpServer(int listen_fd, int wake_read, int wake_write, HttpServerOptions options,
             HttpHandler handler, int port, std::string address);
  void Serve();

  const int listen_fd_;
  const int wake_read_;
  const int wake_write_;
  const HttpServerOptions options_;
  const HttpHandler handler_;
  const int port_;
  const std::string address_;
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> served_{0};
  std::atomic<int> open_{0};
  std::thread thread_;
};

}  // namespace live
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_LIVE_HTTP_SERVER_H_
