// DaskComm: one read-only client connection to a Dask scheduler (docs/dask-protocol.md §2, §3).
//
// Connect() opens TCP to `tcp://HOST:PORT`, reads the scheduler's handshake
// (which it sends first), checks it has `compression` and `pickle-protocol`, and answers
// `{"compression": nil, "python": <the server's>, "pickle-protocol": 5}` so that no frame is
// ever compressed, all of it within the connect timeout. Call() sends `{"op": op, ...args,
// "reply": true}` and reads one reply, the request and the whole reply (frame count, lengths
// and payload) within the read timeout, and every message within the size cap: a peer that
// dribbles bytes cannot hold a call longer than that. A reply that is a map
// with `status` "uncaught-error"/"error" and `exception_text` becomes an error Status carrying
// that text. Close() sends `{"op": "close", "reply": false}` and closes the socket.
//
// Safety: only ops on a read-only allow-list may be sent, and the deny-list of ops that change
// the cluster (terminate, retire_workers, run_function, *_plugin, set_*, ...) is checked as
// well: PermissionDenied, nothing is written.
//
// Thread-safety: one thread at a time per connection. Cost: one round trip per Call.
#ifndef ROASTCOFFEA_BACKENDS_DASK_COMM_H_
#define ROASTCOFFEA_BACKENDS_DASK_COMM_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "backends/dask/msgpack_codec.h"
#include "backends/dask/value.h"
#include "backends/dask/wire.h"
#include "host/clock.h"

namespace roastcoffea::dask {

// The time every deadline of the Dask client is on: the process's monotonic clock read as an
// absl::Time, so that a step of the wall clock (NTP, `date -s`) neither stretches nor cuts a wait.
// A deadline is DeadlineNow() + timeout, compared only with DeadlineNow(), never with a wall time.
inline absl::Time DeadlineNow() { return absl::UnixEpoch() + Clock::Real()->Monotonic(); }

struct CommOptions {
  // Bounds the TCP connect and the handshake together.
  absl::Duration connect_timeout = absl::Seconds(5);
  // Bounds each call: the request and the whole reply message.
  absl::Duration read_timeout = absl::Seconds(10);
  // Asked at least every 100 ms while waiting for the scheduler: true ends the wait at once
  // with Cancelled (and closes the connection). E.g. an interrupted run that must stop.
  std::function<bool()> give_up;
  FrameLimits frame_limits;
  MsgpackLimits msgpack_limits;
};

struct SchedulerAddress {
  std::string host;
  uint16_t port = 0;
};

// Parses "tcp://HOST:PORT" (also "HOST:PORT"; IPv6 as "[::1]:PORT"). InvalidArgument naming the
// input for other schemes (tls://, ws://, ...), a missing or out-of-range port.
absl::StatusOr<SchedulerAddress> ParseSchedulerAddress(absl::string_view address);

// True for ops that change the cluster or turn the connection into a stream
// (docs/dask-protocol.md §3.5).
bool IsDeniedOp(absl::string_view op);
// True for the read-only ops this client may send.
bool IsAllowedOp(absl::string_view op);

// A parsed distributed version ("2022.12.1+ds.1" → 2022, 12, 1).
struct DaskVersion {
  int year = 0, month = 0, patch = 0;
  std::string text;
  bool AtLeast(int y, int m, int p) const;
};
absl::StatusOr<DaskVersion> ParseDaskVersion(absl::string_view text);

class DaskComm {
 public:
  static absl::StatusOr<std::unique_ptr<DaskComm>> Connect(const SchedulerAddress& address,
                                                           const CommOptions& options = {});
  ~DaskComm();  // closes the socket (without the close op)
  DaskComm(const DaskComm&) = delete;
  DaskComm& operator=(const DaskComm&) = delete;

  // Sends op with `args` (a map with str keys, or nil) and returns the decoded reply.
  // PermissionDenied for a denied or unknown op or a reserved argument key; Unavailable when the
  // connection broke; DeadlineExceeded on timeout; Internal carrying `exception_text` (and the
  // first line of the traceback) for an error reply. After a transport error the connection is
  // unusable (broken() is true). Cancelled when give_up said so. `deadline` shortens the read
  // timeout (a phase's deadline across several calls; on DeadlineNow()'s clock).
  absl::StatusOr<Value> Call(absl::string_view op, const Value& args = Value::Nil(),
                             absl::Time deadline = absl::InfiniteFuture());

  // distributed's version from the `versions` op (packages.distributed).
  absl::StatusOr<DaskVersion> ProbeVersion();

  // Clean close: {"op": "close", "reply": false}, then the socket is closed. Idempotent.
  void Close();

  // Limits for decoding the following replies (profile trees nest deeper than other replies).
  void set_msgpack_limits(const MsgpackLimits& limits) { options_.msgpack_limits = limits; }
  const MsgpackLimits& msgpack_limits() const { return options_.msgpack_limits; }

  bool broken() const { return fd_ < 0; }
  // The scheduler's handshake map.
  const Value& server_handshake() const { return server_handshake_; }

 private:
  DaskComm(int fd, CommOptions options) : fd_(fd), options_(std::move(options)) {}
  absl::Status Handshake(absl::Time deadline);
  absl::Status WriteAll(absl::string_view bytes, absl::Time deadline);
  // `budget`: how long the message was given, for the error.
  absl::StatusOr<Value> ReadMessage(absl::Time deadline, absl::Duration budget);
  void Shutdown();

  int fd_;
  CommOptions options_;
  Value server_handshake_;
};

}  // namespace roastcoffea::dask

#endif  // ROASTCOFFEA_BACKENDS_DASK_COMM_H_
