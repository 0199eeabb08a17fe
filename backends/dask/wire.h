// Dask message framing and frame-0 decoding (docs/dask-protocol.md §1.1, §1.2).
//
// On the wire a message is: u64le L, u64le n, n × u64le frame lengths, then the frames.
// ReadFrames is the "universal reader" that is correct for 2022.12 and for 2023.11+ peers: it
// reads n, the lengths and Σ len bytes, and uses L only as a sanity check
// (8+8n ≤ L ≤ 8+8n+Σlen). EncodeFrames writes L = 8+8n+Σlen, which every version accepts.
//
// DecodeMessage decodes frame 0 and resolves Dask's magic maps: `{"__Serialized__": k}` and
// `{"__Pickled__": k}` become Value::Opaque after checking that frame k is a msgpack
// sub-header whose `num-sub-frames` payload frames exist (payloads are pickles: skipped, never
// unpickled); `{"__Set__": true, "as-list": [...]}` becomes the array; `{"__Enum__": true,
// "name": s, ...}` becomes the str s.
//
// Thread-safety: stateless functions; a ByteReader is used by one thread. Cost: one copy of
// every frame; buffers grow as bytes arrive (≤ 1 MiB ahead), never from a length field alone.
#ifndef ROASTCOFFEA_BACKENDS_DASK_WIRE_H_
#define ROASTCOFFEA_BACKENDS_DASK_WIRE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "backends/dask/msgpack_codec.h"
#include "backends/dask/value.h"

namespace roastcoffea::dask {

using Frames = std::vector<std::string>;

struct FrameLimits {
  // Frames in one message (the spec's sane cap).
  size_t max_frames = 1000000;
  // Σ frame lengths of one message.
  size_t max_message_bytes = size_t{256} << 20;
};

// Where ReadFrames gets its bytes: a socket (comm.h) or memory (StringByteReader).
class ByteReader {
 public:
  virtual ~ByteReader() = default;
  // Fills dst[0..n) or fails (EOF mid-message is an error; timeouts are DeadlineExceeded).
  virtual absl::Status ReadExact(char* dst, size_t n) = 0;
};

// Reads from a buffer; position() tells how much was consumed.
class StringByteReader : public ByteReader {
 public:
  explicit StringByteReader(absl::string_view bytes) : bytes_(bytes) {}
  absl::Status ReadExact(char* dst, size_t n) override;
  size_t position() const { return pos_; }

 private:
  absl::string_view bytes_;
  size_t pos_ = 0;
};

// Reads one framed message. InvalidArgument (naming the field) for n = 0, n or Σlen above the
// limits, or an inconsistent L; the reader's error for short input.
absl::StatusOr<Frames> ReadFrames(ByteReader& reader, const FrameLimits& limits = {});

// The wire bytes of a message made of `frames`.
std::string EncodeFrames(const Frames& frames);

// Frame 0 decoded, placeholders resolved (see the file comment). InvalidArgument for an empty
// message, undecodable msgpack, or a placeholder that points at a missing or malformed frame.
absl::StatusOr<Value> DecodeMessage(const Frames& frames, const MsgpackLimits& limits = {});

// One-frame message holding `value` as msgpack.
std::string EncodeMessage(const Value& value);

}  // namespace roastcoffea::dask

#endif  // ROASTCOFFEA_BACKENDS_DASK_WIRE_H_
