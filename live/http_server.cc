#include "live/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace roastcoffea {
namespace live {
namespace {

using Clock = std::chrono::steady_clock;

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK); }

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

std::string Serialize(const HttpResponse& response) {
  return absl::StrCat("HTTP/1.1 ", response.status, " ", Reason(response.status),
                      "\r\nContent-Type: ", response.content_type,
                      "\r\nContent-Length: ", response.body.size(),
                      "\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n", response.body);
}

HttpResponse Plain(int status, absl::string_view text) {
  HttpResponse response;
  response.status = status;
  response.body = absl::StrCat(text, "\n");
  return response;
}

// The request line and the Accept header of a complete request head; nullopt-like status 400
// for anything that is not "METHOD SP TARGET SP HTTP/1.x".
int ParseHead(absl::string_view head, HttpRequest* request) {
  const std::vector<absl::string_view> lines = absl::StrSplit(head, "\r\n");
  if (lines.empty()) return 400;
  const std::vector<absl::string_view> parts = absl::StrSplit(lines[0], ' ');
  if (parts.size() != 3 || parts[0].empty() || parts[1].empty() || parts[1][0] != '/' ||
      !absl::StartsWith(parts[2], "HTTP/1.")) {
    return 400;
  }
  request->method = std::string(parts[0]);
  absl::string_view target = parts[1];
  target = target.substr(0, target.find('?'));
  request->path = std::string(target);
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    if (colon == absl::string_view::npos) continue;
    if (absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(lines[i].substr(0, colon)), "accept")) {
      request->accept = std::string(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
    }
  }
  return 200;
}

struct Connection {
  int fd = -1;
  Clock::time_point accepted;
  Clock::time_point deadline;
  std::string in;
  std::string out;
  size_t sent = 0;
  bool writing = false;
};

// Milliseconds until the nearest connection deadline, at most 250.
int PollTimeoutMs(const std::vector<Connection>& connections, Clock::time_point now) {
  int timeout_ms = 250;
  for (const Connection& c : connections) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(c.deadline - now);
    timeout_ms = std::max(0, std::min<int>(timeout_ms, static_cast<int>(left.count()) + 1));
  }
  return timeout_ms;
}

// Reads what the client sent; once the head is complete (or too large, or malformed) prepares
// the answer and switches the connection to writing. False: close it (the client left).
bool ReadRequest(Connection& c, const HttpServerOptions& options, const HttpHandler& handler,
                 Clock::time_point now) {
  char buffer[4096];
  const ssize_t n = recv(c.fd, buffer, sizeof(buffer), 0);
  if (n <= 0) return n < 0 && (errno == EAGAIN || errno == EINTR);
  c.in.append(buffer, static_cast<size_t>(n));
  const size_t end = c.in.find("\r\n\r\n");
  HttpResponse response;
  if (end == std::string::npos) {
    if (c.in.size() <= options.max_request_bytes) return true;
    response = Plain(431, "request head too large");
  } else if (end > options.max_request_bytes) {
    response = Plain(431, "request head too large");
  } else {
    HttpRequest request;
    if (ParseHead(absl::string_view(c.in).substr(0, end), &request) != 200) {
      response = Plain(400, "malformed request");
    } else if (request.method != "GET" && request.method != "HEAD") {
      response = Plain(405, "only GET");
    } else {
      response = handler(request);
      if (request.method == "HEAD") response.body.clear();
    }
  }
  c.in.clear();
  c.in.shrink_to_fit();
  c.out = Serialize(response);
  c.writing = true;
  c.deadline = now + absl::ToChronoNanoseconds(options.response_timeout);
  return true;
}

// Sends what the socket takes. False: the answer is out, or the client is gone (close it).
bool WriteResponse(Connection& c) {
  const ssize_t n = send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
  if (n < 0) return errno == EAGAIN || errno == EINTR;
  c.sent += static_cast<size_t>(n);
  if (c.sent < c.out.size()) return true;
  shutdown(c.fd, SHUT_WR);
  return false;
}

// Accepts what is waiting. When full, drops the connection that has waited longest without
// finishing its request, so that idle connections cannot lock a scraper out; if every one is
// being answered, the new one is refused.
template <typename CloseAt>
void AcceptNew(int listen_fd, const HttpServerOptions& options,
               std::vector<Connection>& connections, const CloseAt& close_at) {
  for (int accepted = 0; accepted < 64; ++accepted) {
    const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    if (static_cast<int>(connections.size()) >= options.max_connections) {
      size_t oldest = connections.size();
      for (size_t i = 0; i < connections.size(); ++i) {
        if (connections[i].writing) continue;
        if (oldest == connections.size() ||
            connections[i].accepted < connections[oldest].accepted) {
          oldest = i;
        }
      }
      if (oldest == connections.size()) {
        close(fd);
        continue;
      }
      close_at(oldest);
    }
    Connection c;
    c.fd = fd;
    c.accepted = Clock::now();
    c.deadline = c.accepted + absl::ToChronoNanoseconds(options.request_timeout);
    connections.push_back(std::move(c));
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpServerOptions& options,
                                                              HttpHandler handler) {
  sockaddr_storage storage{};
  socklen_t length = 0;
  std::string host = options.host;
  if (absl::StartsWith(host, "[") && absl::EndsWith(host, "]")) {
    host = host.substr(1, host.size() - 2);
  }
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("port ", options.port, " is not in 0..65535"));
  }
  auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(options.port));
    length = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(options.port));
    length = sizeof(sockaddr_in6);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("'", options.host, "' is not an IP address (e.g. 127.0.0.1, 0.0.0.0, [::1])"));
  }
  const int fd = socket(storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  const int yes = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  if (bind(fd, reinterpret_cast<sockaddr*>(&storage), length) != 0 || listen(fd, 128) != 0) {
    const int error = errno;
    close(fd);
    return absl::FailedPreconditionError(absl::StrCat("cannot serve on ", options.host, ":",
                                                      options.port, ": ", std::strerror(error)));
  }
  SetNonBlocking(fd);
  sockaddr_storage bound{};
  socklen_t bound_length = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &bound_length);
  const int port =
      ntohs(bound.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&bound)->sin_port
                                       : reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  int wake[2];
  if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    close(fd);
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  const std::string address = storage.ss_family == AF_INET6 ? absl::StrCat("[", host, "]:", port)
                                                            : absl::StrCat(host, ":", port);
  std::unique_ptr<HttpServer> server(
      new HttpServer(fd, wake[0], wake[1], options, std::move(handler), port, address));
  server->thread_ = std::thread([s = server.get()] { s->Serve(); });
  return server;
}

HttpServer::HttpServer(int listen_fd, int wake_read, int wake_write, HttpServerOptions options,
                       HttpHandler handler, int port, std::string address)
    : listen_fd_(listen_fd),
      wake_read_(wake_read),
      wake_write_(wake_write),
      options_(std::move(options)),
      handler_(std::move(handler)),
      port_(port),
      address_(std::move(address)) {}

HttpServer::~HttpServer() {
  Stop();
  close(listen_fd_);
  close(wake_read_);
  close(wake_write_);
}

void HttpServer::Stop() {
  if (stopping_.exchange(true)) {
    if (thread_.joinable()) thread_.join();
    return;
  }
  const char byte = 1;
  (void)!write(wake_write_, &byte, 1);
  if (thread_.joinable()) thread_.join();
}

void HttpServer::Serve() {
  std::vector<Connection> connections;
  const auto close_at = [&](size_t i) {
    close(connections[i].fd);
    connections[i] = std::move(connections.back());
    connections.pop_back();
  };
  std::vector<pollfd> fds;
  while (!stopping_.load()) {
    open_.store(static_cast<int>(connections.size()));
    fds.clear();
    fds.push_back({wake_read_, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    for (const Connection& c : connections) {
      fds.push_back({c.fd, static_cast<short>(c.writing ? POLLOUT : POLLIN), 0});
    }
    const int ready = poll(fds.data(), fds.size(), PollTimeoutMs(connections, Clock::now()));
    if (ready < 0 && errno != EINTR) break;
    if (stopping_.load()) break;
    // Connections first (their indices match fds[2..]), from the back so that closing (which
    // moves the last one into the hole) never skips one.
    const Clock::time_point now = Clock::now();
    for (size_t k = connections.size(); k-- > 0;) {
      Connection& c = connections[k];
      const short events = fds[k + 2].revents;
      bool keep = !(events & (POLLERR | POLLHUP | POLLNVAL)) || (events & POLLIN);
      if (keep && !c.writing && (events & POLLIN)) {
        keep = ReadRequest(c, options_, handler_, now);
        if (c.writing) served_.fetch_add(1);
      }
      if (keep && c.writing && (events & POLLOUT)) keep = WriteResponse(c);
      // Too slow to ask, or to read the answer.
      if (!keep || now >= c.deadline) close_at(k);
    }
    if (fds[1].revents & POLLIN) AcceptNew(listen_fd_, options_, connections, close_at);
  }
  for (Connection& c : connections) close(c.fd);
  open_.store(0);
}

}  // namespace live
}  // namespace roastcoffea
