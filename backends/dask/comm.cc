#include "backends/dask/comm.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "io/untrusted_json.h"

namespace roastcoffea::dask {
namespace {

constexpr absl::string_view kAllowedOps[] = {
    "identity",
    "versions",
    "get_task_stream",
    "get_task_stream_index",
    "ncores",
    "ncores_running",
    "processing",
    "get_task_prefix_states",
    "dump_state",
    "who_has",
    "has_what",
    "nbytes",
    "get_task_status",
    "events",
    "echo",
    "close",
    // Merges the workers' statistical profiles; reads only (each worker's get_profile).
    "profile",
    // Each worker's dump_state and versions (a fan-out: called at a span's start and end only).
    "get_cluster_state",
};

std::string ErrnoText(int error) { return std::strerror(error); }

// How often a wait asks give_up.
constexpr absl::Duration kGiveUpCheck = absl::Milliseconds(100);

enum class Waited { kReady, kTimedOut, kGaveUp, kFailed };

// Waits for `events` on fd until `deadline`, in slices that ask give_up in between.
Waited WaitFor(int fd, short events, absl::Time deadline, const std::function<bool()>& give_up) {
  while (true) {
    if (give_up && give_up()) return Waited::kGaveUp;
    const absl::Duration left = deadline - DeadlineNow();
    if (left <= absl::ZeroDuration()) return Waited::kTimedOut;
    const absl::Duration slice = give_up ? std::min(left, kGiveUpCheck) : left;
    pollfd p{fd, events, 0};
    const int ready = poll(
        &p, 1, static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(slice) + 1, 1 << 30)));
    if (ready > 0) return Waited::kReady;
    if (ready < 0 && errno != EINTR) return Waited::kFailed;
  }
}

absl::Status GaveUp() {
  return absl::CancelledError("gave up waiting for the scheduler (the run is being stopped)");
}

// Reads from a socket; every ReadExact of one message shares the message's deadline.
class SocketReader : public ByteReader {
 public:
  SocketReader(int fd, absl::Time deadline, absl::Duration timeout,
               const std::function<bool()>& give_up)
      : fd_(fd), deadline_(deadline), timeout_(timeout), give_up_(give_up) {}
  absl::Status ReadExact(char* dst, size_t n) override {
    size_t done = 0;
    while (done < n) {
      switch (WaitFor(fd_, POLLIN, deadline_, give_up_)) {
        case Waited::kReady:
          break;
        case Waited::kTimedOut:
          return absl::DeadlineExceededError(
              absl::StrCat("the scheduler's message was not complete within ",
                           absl::FormatDuration(timeout_), " (", read_, " bytes of it read)"));
        case Waited::kGaveUp:
          return GaveUp();
        case Waited::kFailed:
          return absl::UnavailableError(absl::StrCat("poll failed: ", ErrnoText(errno)));
      }
      const ssize_t got = recv(fd_, dst + done, n - done, 0);
      if (got == 0) {
        return absl::UnavailableError(
            absl::StrCat("the scheduler closed the connection (", done, " of ", n, " bytes read)"));
      }
      if (got < 0) {
        if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
        return absl::UnavailableError(absl::StrCat("recv failed: ", ErrnoText(errno)));
      }
      done += static_cast<size_t>(got);
      read_ += static_cast<size_t>(got);
    }
    return absl::OkStatus();
  }

 private:
  int fd_;
  absl::Time deadline_;
  absl::Duration timeout_;  // for the message only
  const std::function<bool()>& give_up_;
  size_t read_ = 0;
};

}  // namespace

absl::StatusOr<SchedulerAddress> ParseSchedulerAddress(absl::string_view address) {
  absl::string_view rest = address;
  if (absl::ConsumePrefix(&rest, "tcp://")) {
  } else if (absl::StrContains(rest, "://")) {
    return absl::InvalidArgumentError(
        absl::StrCat("scheduler address '", address, "': only tcp://HOST:PORT is supported"));
  }
  SchedulerAddress out;
  absl::string_view port_text;
  if (absl::StartsWith(rest, "[")) {
    const size_t close = rest.find(']');
    if (close == absl::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':') {
      return absl::InvalidArgumentError(
          absl::StrCat("scheduler address '", address, "': expected [IPv6]:PORT"));
    }
    out.host = std::string(rest.substr(1, close - 1));
    port_text = rest.substr(close + 2);
  } else {
    const size_t colon = rest.rfind(':');
    if (colon == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("scheduler address '", address, "' has no :PORT"));
    }
    out.host = std::string(rest.substr(0, colon));
    port_text = rest.substr(colon + 1);
  }
  int port = 0;
  if (out.host.empty() || !absl::SimpleAtoi(port_text, &port) || port < 1 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("scheduler address '", address, "': needs a host and a port in 1..65535"));
  }
  out.port = static_cast<uint16_t>(port);
  return out;
}

bool IsDeniedOp(absl::string_view op) {
  static constexpr absl::string_view kDenied[] = {
      "terminate",
      "retire_workers",
      "restart",
      "restart_workers",
      "rebalance",
      "replicate",
      "run_function",
      "broadcast",
      "proxy",
      "cancel",
      "retry",
      "update_data",
      "scatter",
      "feed",
      "benchmark_hardware",
      "dump_cluster_state_to_url",
      "log_event",
      "connection_stream",
      "subscribe_worker_status",
      "gather",
      "stimulus",
      "close_worker",
      "remove_worker",
      "add_worker",
      // Closes a scheduler that has an idle timeout and is idle, and resets its idle clock.
      "check_idle",
      // Read-only, but unpickles the bytes of its `key` argument.
      "workers_to_close",
      // Send arbitrary messages to workers or change state (distributed 2024-2026 handlers).
      "heartbeat_worker",
      "start_task_metadata",
      "stop_task_metadata",
  };
  for (absl::string_view d : kDenied) {
    if (op == d) return true;
  }
  return absl::StartsWith(op, "register") || absl::StartsWith(op, "unregister") ||
         absl::EndsWith(op, "_plugin") || absl::StartsWith(op, "set_") ||
         absl::StartsWith(op, "memory_sampler") || absl::StrContains(op, "plugin");
}

bool IsAllowedOp(absl::string_view op) {
  if (IsDeniedOp(op)) return false;
  for (absl::string_view a : kAllowedOps) {
    if (op == a) return true;
  }
  return false;
}

bool DaskVersion::AtLeast(int y, int m, int p) const {
  if (year != y) return year > y;
  if (month != m) return month > m;
  return patch >= p;
}

absl::StatusOr<DaskVersion> ParseDaskVersion(absl::string_view text) {
  DaskVersion v;
  v.text = EchoedText(text);
  absl::string_view core = text.substr(0, text.find_first_of("+-"));
  std::vector<absl::string_view> parts = absl::StrSplit(core, '.');
  if (parts.size() < 2 || !absl::SimpleAtoi(parts[0], &v.year) ||
      !absl::SimpleAtoi(parts[1], &v.month)) {
    return absl::InvalidArgumentError(
        absl::StrCat("distributed version '", v.text, "' is not YEAR.MONTH[.PATCH]"));
  }
  if (parts.size() >= 3) {
    // "1rc1" or "0.dev12": keep the leading digits.
    absl::string_view p = parts[2];
    size_t digits = 0;
    while (digits < p.size() && p[digits] >= '0' && p[digits] <= '9') ++digits;
    if (digits > 0) (void)absl::SimpleAtoi(p.substr(0, digits), &v.patch);
  }
  return v;
}

absl::StatusOr<std::unique_ptr<DaskComm>> DaskComm::Connect(const SchedulerAddress& address,
                                                            const CommOptions& options) {
  // One deadline for the connect and the handshake (--dask_connect_timeout).
  const absl::Time deadline = DeadlineNow() + options.connect_timeout;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* results = nullptr;
  const std::string port = std::to_string(address.port);
  const int rc = getaddrinfo(address.host.c_str(), port.c_str(), &hints, &results);
  if (rc != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot resolve scheduler host '", address.host, "': ", gai_strerror(rc)));
  }
  std::string last_error = "no address";
  int fd = -1;
  for (addrinfo* ai = results; ai != nullptr && fd < 0; ai = ai->ai_next) {
    int s = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (s < 0) {
      last_error = ErrnoText(errno);
      continue;
    }
    if (connect(s, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
      last_error = ErrnoText(errno);
      close(s);
      continue;
    }
    const Waited waited = WaitFor(s, POLLOUT, deadline, options.give_up);
    int error = 0;
    socklen_t len = sizeof(error);
    if (waited == Waited::kGaveUp) {
      close(s);
      freeaddrinfo(results);
      return GaveUp();
    }
    if (waited != Waited::kReady) {
      last_error =
          waited == Waited::kTimedOut
              ? absl::StrCat("timed out after ", absl::FormatDuration(options.connect_timeout))
              : ErrnoText(errno);
      close(s);
      continue;
    }
    if (getsockopt(s, SOL_SOCKET, SO_ERROR, &error, &len) != 0 || error != 0) {
      last_error = ErrnoText(error != 0 ? error : errno);
      close(s);
      continue;
    }
    fd = s;
  }
  freeaddrinfo(results);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("cannot connect to the scheduler at tcp://",
                                               address.host, ":", address.port, ": ", last_error));
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  std::unique_ptr<DaskComm> comm(new DaskComm(fd, options));
  absl::Status s = comm->Handshake(deadline);
  if (!s.ok()) {
    return absl::Status(s.code(), absl::StrCat("handshake with tcp://", address.host, ":",
                                               address.port, " failed: ", s.message()));
  }
  return comm;
}

DaskComm::~DaskComm() { Shutdown(); }

void DaskComm::Shutdown() {
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
  }
}

absl::Status DaskComm::WriteAll(absl::string_view bytes, absl::Time deadline) {
  if (fd_ < 0) return absl::UnavailableError("connection is closed");
  size_t done = 0;
  while (done < bytes.size()) {
    const Waited waited = WaitFor(fd_, POLLOUT, deadline, options_.give_up);
    if (waited != Waited::kReady) {
      const std::string error = ErrnoText(errno);
      Shutdown();
      if (waited == Waited::kGaveUp) return GaveUp();
      if (waited == Waited::kFailed) {
        return absl::UnavailableError(absl::StrCat("poll failed: ", error));
      }
      return absl::DeadlineExceededError("timed out writing to the scheduler");
    }
    const ssize_t sent = send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      const std::string error = ErrnoText(errno);
      Shutdown();
      return absl::UnavailableError(absl::StrCat("send to the scheduler failed: ", error));
    }
    done += static_cast<size_t>(sent);
  }
  return absl::OkStatus();
}

absl::StatusOr<Value> DaskComm::ReadMessage(absl::Time deadline, absl::Duration budget) {
  if (fd_ < 0) return absl::UnavailableError("connection is closed");
  SocketReader reader(fd_, deadline, budget, options_.give_up);
  absl::StatusOr<Frames> frames = ReadFrames(reader, options_.frame_limits);
  if (!frames.ok()) {
    Shutdown();  // the stream position is lost: the connection cannot be reused
    return frames.status();
  }
  absl::StatusOr<Value> value = DecodeMessage(*frames, options_.msgpack_limits);
  if (!value.ok()) Shutdown();
  return value;
}

absl::Status DaskComm::Handshake(absl::Time deadline) {
  absl::StatusOr<Value> server = ReadMessage(deadline, options_.connect_timeout);
  if (!server.ok()) return server.status();
  if (!server->is_map() || server->Find("compression") == nullptr ||
      server->Find("pickle-protocol") == nullptr) {
    Shutdown();
    return absl::InvalidArgumentError(absl::StrCat(
        "the peer's first message is not a Dask handshake: ", server->DebugString(120)));
  }
  server_handshake_ = *server;
  Value mine = Value::Map();
  mine.Insert(Value::Str("compression"), Value::Nil());
  const Value* python = server->Find("python");
  mine.Insert(Value::Str("python"),
              python != nullptr && python->is_array()
                  ? *python
                  : Value::Array({Value::Int(3), Value::Int(11), Value::Int(2)}));
  mine.Insert(Value::Str("pickle-protocol"), Value::Int(5));
  return WriteAll(EncodeMessage(mine), deadline);
}

absl::StatusOr<Value> DaskComm::Call(absl::string_view op, const Value& args, absl::Time deadline) {
  if (!IsAllowedOp(op)) {
    return absl::PermissionDeniedError(
        absl::StrCat("op '", op, "' is not on the read-only allow-list of this monitoring client"));
  }
  if (!args.is_nil() && !args.is_map()) {
    return absl::InvalidArgumentError(
        absl::StrCat("arguments of op '", op, "' must be a map, got ", args.DebugString(60)));
  }
  Value request = Value::Map();
  request.Insert(Value::Str("op"), Value::Str(std::string(op)));
  for (size_t i = 0; i < args.size() && args.is_map(); ++i) {
    const Value& key = args.key(i);
    if (!key.is_str() || key.text() == "op" || key.text() == "reply" || key.text() == "close" ||
        absl::StartsWith(key.text(), "__")) {
      return absl::PermissionDeniedError(absl::StrCat(
          "argument key ", key.DebugString(60), " of op '", op, "' is reserved or not a str"));
    }
    request.Insert(key, args.value(i));
  }
  request.Insert(Value::Str("reply"), Value::Bool(true));
  // One deadline for the request and the whole reply.
  const absl::Time start = DeadlineNow();
  deadline = std::min(deadline, start + options_.read_timeout);
  absl::Status s = WriteAll(EncodeMessage(request), deadline);
  if (!s.ok()) return s;
  absl::StatusOr<Value> reply =
      ReadMessage(deadline, absl::Trunc(deadline - start, absl::Milliseconds(1)));
  if (!reply.ok()) {
    return absl::Status(reply.status().code(),
                        absl::StrCat("reply to op '", op, "': ", reply.status().message()));
  }
  if (reply->is_map()) {
    const Value* status = reply->Find("status");
    // distributed's error_message() sends exception_text; some handlers answer {"status":
    // "error", "text": ...} instead.
    const Value* text = reply->Find("exception_text");
    if (text == nullptr) text = reply->Find("text");
    if (status != nullptr && status->is_str() &&
        (status->text() == "uncaught-error" || status->text() == "error") && text != nullptr) {
      std::string traceback_tail;
      if (const Value* tb = reply->Find("traceback_text"); tb != nullptr && tb->is_str()) {
        // The last non-empty line of a Python traceback names the exception; keep it short.
        absl::string_view tbv = tb->text();
        while (!tbv.empty() && tbv.back() == '\n') tbv.remove_suffix(1);
        const size_t nl = tbv.rfind('\n');
        traceback_tail = std::string(nl == absl::string_view::npos ? tbv : tbv.substr(nl + 1));
      }
      // The peer's text is quoted cut and escaped: it ends up in warnings and measurements.
      return absl::InternalError(absl::StrCat(
          "scheduler error for op '", op, "': ", text->is_str() ? EchoedText(text->text()) : "?",
          traceback_tail.empty()
              ? ""
              : absl::StrCat(" (traceback ends: ", EchoedText(traceback_tail), ")")));
    }
  }
  return reply;
}

absl::StatusOr<DaskVersion> DaskComm::ProbeVersion() {
  absl::StatusOr<Value> reply = Call("versions");
  if (!reply.ok()) return reply.status();
  const Value* packages = reply->Find("packages");
  const Value* distributed = packages != nullptr ? packages->Find("distributed") : nullptr;
  if (distributed == nullptr || !distributed->is_str()) {
    return absl::InvalidArgumentError(
        absl::StrCat("versions reply lacks packages.distributed: ", reply->DebugString(120)));
  }
  return ParseDaskVersion(distributed->text());
}

void DaskComm::Close() {
  if (fd_ < 0) return;
  Value request = Value::Map();
  request.Insert(Value::Str("op"), Value::Str("close"));
  request.Insert(Value::Str("reply"), Value::Bool(false));
  (void)WriteAll(EncodeMessage(request), DeadlineNow() + options_.read_timeout);
  Shutdown();
}

}  // namespace roastcoffea::dask
