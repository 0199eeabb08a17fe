#include "backends/dask/fake_scheduler.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

#include "backends/dask/fixtures.h"
#include "backends/dask/wire.h"

namespace roastcoffea::dask::testing {
namespace {

class FdReader : public ByteReader {
 public:
  FdReader(int fd, const std::atomic<bool>& stopping) : fd_(fd), stopping_(stopping) {}
  absl::Status ReadExact(char* dst, size_t n) override {
    size_t done = 0;
    while (done < n) {
      if (stopping_) return absl::CancelledError("stopping");
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      const ssize_t got = recv(fd_, dst + done, n - done, 0);
      if (got <= 0) return absl::UnavailableError("closed");
      done += static_cast<size_t>(got);
    }
    return absl::OkStatus();
  }

 private:
  int fd_;
  const std::atomic<bool>& stopping_;
};

bool WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t sent = send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (sent <= 0) return false;
    done += static_cast<size_t>(sent);
  }
  return true;
}

}  // namespace

FakeScheduler::FakeScheduler(Responder responder, int port, std::optional<std::string> greeting)
    : responder_(std::move(responder)),
      greeting_(greeting.has_value() ? *greeting : FixtureBytes("handshake_1_server_to_client")) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(listen_fd_, 16) != 0) {
    std::abort();
  }
  socklen_t len = sizeof(addr);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

FakeScheduler::~FakeScheduler() { Stop(); }

void FakeScheduler::Stop() {
  if (stopping_.exchange(true)) return;
  acceptor_.join();
  close(listen_fd_);
  std::vector<std::thread> servers;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int fd : connections_) shutdown(fd, SHUT_RDWR);
    servers.swap(servers_);
  }
  for (std::thread& t : servers) t.join();
}

std::vector<std::string> FakeScheduler::ops() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return ops_;
}

bool FakeScheduler::WaitForOp(const std::string& op) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    for (const std::string& seen : ops()) {
      if (seen == op) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

void FakeScheduler::Dribble(std::chrono::milliseconds gap, std::vector<std::string> ops) {
  std::lock_guard<std::mutex> lock(mutex_);
  dribble_gap_ = gap;
  dribble_ops_ = std::move(ops);
}

bool FakeScheduler::Send(int fd, const std::string& op, const std::string& bytes) {
  std::chrono::milliseconds gap{0};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::string& slow : dribble_ops_) {
      if (slow == op) gap = dribble_gap_;
    }
  }
  if (gap.count() == 0) return WriteAll(fd, bytes);
  for (char byte : bytes) {
    if (stopping_ || send(fd, &byte, 1, MSG_NOSIGNAL) != 1) return false;
    // In slices, so that Stop() is not held up.
    for (auto slept = std::chrono::milliseconds(0); slept < gap && !stopping_;
         slept += std::chrono::milliseconds(10)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  return true;
}

void FakeScheduler::AcceptLoop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 20) <= 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::lock_guard<std::mutex> lock(mutex_);
    connections_.push_back(fd);
    servers_.emplace_back([this, fd] { Serve(fd); });
  }
}

void FakeScheduler::Serve(int fd) {
  FdReader reader(fd, stopping_);
  if (Send(fd, "handshake", greeting_) && ReadFrames(reader).ok()) {
    while (!stopping_) {
      absl::StatusOr<Frames> frames = ReadFrames(reader);
      if (!frames.ok()) break;
      absl::StatusOr<Value> request = DecodeMessage(*frames);
      if (!request.ok()) break;
      const Value* op = request->Find("op");
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ops_.push_back(op != nullptr ? op->text() : "?");
      }
      const Value* reply = request->Find("reply");
      if (reply != nullptr && reply->type() == Value::Type::kBool && !reply->bool_value()) {
        if (op != nullptr && op->text() == "close") break;
        continue;
      }
      std::optional<std::string> answer = responder_(*request);
      if (!answer.has_value() || !Send(fd, op != nullptr ? op->text() : "?", *answer)) break;
    }
  }
  shutdown(fd, SHUT_RDWR);
  // The fd is closed by the owner of connections_ only after the threads are joined.
  std::lock_guard<std::mutex> lock(mutex_);
  for (int& c : connections_) {
    if (c == fd) {
      close(fd);
      c = -1;
    }
  }
}

}  // namespace roastcoffea::dask::testing
