// Fuzz target: any bytes from a peer must give a clear error or a valid message, never a crash,
// hang or unbounded allocation. Exercises the frame reader, the msgpack decoder, placeholder
// resolution and the identity / task-stream / profile parsers.
#include <cstddef>
#include <cstdint>
#include <string>

#include "backends/dask/identity.h"
#include "backends/dask/msgpack_codec.h"
#include "backends/dask/profile.h"
#include "backends/dask/task_stream.h"
#include "backends/dask/wire.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roastcoffea::dask;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  // Small caps keep each run cheap; the code paths are the same.
  FrameLimits limits;
  limits.max_frames = 64;
  limits.max_message_bytes = size_t{1} << 20;
  StringByteReader reader(bytes);
  absl::StatusOr<Frames> frames = ReadFrames(reader, limits);
  if (frames.ok()) {
    absl::StatusOr<Value> message = DecodeMessage(*frames);
    if (message.ok()) {
      (void)ParseIdentity(*message);
      (void)ParseTaskStream(*message);
      ProfileConversionOptions profile_limits;
      profile_limits.max_nodes = 4096;
      if (absl::StatusOr<roastcoffea::v1::Profile> p = ConvertProfileTree(*message, profile_limits);
          p.ok()) {
        // The flat tree's invariants: root first, parents before children, frames in range.
        if (p->nodes_size() < 1 || p->nodes(0).parent() != -1) __builtin_trap();
        for (int i = 1; i < p->nodes_size(); ++i) {
          if (p->nodes(i).parent() < 0 || p->nodes(i).parent() >= i || p->nodes(i).frame() < 0 ||
              p->nodes(i).frame() >= p->frames_size() || p->nodes(i).count() < 0) {
            __builtin_trap();
          }
        }
      }
      (void)ConvertPerWorkerProfiles(*message, profile_limits);
      // Re-encoding a decoded value must decode to the same value.
      const std::string again = EncodeMsgpack(*message);
      absl::StatusOr<Value> back = DecodeMsgpack(again);
      if (!back.ok()) __builtin_trap();
      (void)message->DebugString();
    }
  }
  // The raw bytes as one msgpack document too.
  (void)DecodeMsgpack(bytes);
  return 0;
}
