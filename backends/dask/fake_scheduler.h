// Test helper: a fake Dask scheduler on 127.0.0.1 (free port) that speaks the wire protocol.
//
// On each accepted connection it writes `greeting` (by default the captured 2022.12 handshake),
// reads the client's handshake, then answers each request with responder(request): the raw
// bytes to write (use EncodeMessage or fixture bytes), or nullopt to close the connection.
// Stop() closes the listener and every connection (a "dead scheduler"). Dribble() makes it a
// slowloris: chosen messages written one byte at a time.
#ifndef ROASTCOFFEA_BACKENDS_DASK_FAKE_SCHEDULER_H_
#define ROASTCOFFEA_BACKENDS_DASK_FAKE_SCHEDULER_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backends/dask/value.h"

namespace roastcoffea::dask::testing {

class FakeScheduler {
 public:
  using Responder = std::function<std::optional<std::string>(const Value& request)>;

  // port 0: pick a free one.
  FakeScheduler(Responder responder, int port = 0, std::optional<std::string> greeting = {});
  ~FakeScheduler();

  int port() const { return port_; }
  std::string address() const { return "tcp://127.0.0.1:" + std::to_string(port_); }
  void Stop();
  // From now on, the greeting (op "handshake") and the replies to the ops in `ops` are written
  // one byte every `gap` (each byte well within a per-read timeout, the message far beyond it).
  void Dribble(std::chrono::milliseconds gap, std::vector<std::string> ops);
  // Requests received so far (op names), in order.
  std::vector<std::string> ops() const;
  // Waits (at most 10 s) until a request with this op arrived; false on timeout.
  bool WaitForOp(const std::string& op) const;

 private:
  void AcceptLoop();
  void Serve(int fd);
  // Writes `bytes` to fd, dribbled when `op` is one of dribble_ops_; false when it broke.
  bool Send(int fd, const std::string& op, const std::string& bytes);

  Responder responder_;
  std::string greeting_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  mutable std::mutex mutex_;
  std::vector<int> connections_;
  std::vector<std::thread> servers_;
  std::vector<std::string> ops_;
  std::chrono::milliseconds dribble_gap_{0};
  std::vector<std::string> dribble_ops_;
};

}  // namespace roastcoffea::dask::testing

#endif  // ROASTCOFFEA_BACKENDS_DASK_FAKE_SCHEDULER_H_
