// msgpack codec for the Dask wire protocol (docs/dask-protocol.md §1.3).
//
// Our own small codec rather than msgpack-cxx: it decodes straight into Value with absl::Status
// errors that name the byte offset, never throws, and bounds work by construction: nesting
// depth and node count are capped, and no container reserves more elements than the remaining
// input could hold, so a hostile length field cannot trigger a large allocation.
//
// Decoding: every msgpack type except ext (an error: Dask never sends ext); str must be valid
// UTF-8 (Python decodes with raw=False); exactly one document, no trailing bytes.
// Encoding: nil, bool, int/uint in the smallest format, float64, str, bin, array, map.
// Thread-safety: stateless functions. Cost: linear in the input.
#ifndef ROASTCOFFEA_BACKENDS_DASK_MSGPACK_CODEC_H_
#define ROASTCOFFEA_BACKENDS_DASK_MSGPACK_CODEC_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "backends/dask/value.h"

namespace roastcoffea::dask {

struct MsgpackLimits {
  // Containers nested deeper than this are rejected (protects the stack).
  int max_depth = 64;
  // Total values (nodes) in one document. A value is 72 bytes in memory but can be one byte on
  // the wire, so this, not the message size, bounds the decoded tree: 4 Mi values is at most
  // about 300 MB. An identity reply holds about 100 values per worker, so this leaves room for
  // 40,000 workers.
  size_t max_values = size_t{4} << 20;
};

// Decodes exactly one msgpack document. InvalidArgument naming the offset for truncated input,
// ext types, invalid UTF-8, reserved byte 0xc1, limits exceeded, or trailing bytes.
absl::StatusOr<Value> DecodeMsgpack(absl::string_view bytes, const MsgpackLimits& limits = {});

// Appends the msgpack encoding of `value` to `out`. Opaque values encode as nil (they have no
// wire form of their own in this client).
void EncodeMsgpack(const Value& value, std::string& out);
std::string EncodeMsgpack(const Value& value);

}  // namespace roastcoffea::dask

#endif  // ROASTCOFFEA_BACKENDS_DASK_MSGPACK_CODEC_H_
