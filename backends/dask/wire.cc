#include "backends/dask/wire.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace roastcoffea::dask {
namespace {

uint64_t LoadLittleEndian(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void PutLittleEndian(uint64_t v, std::string& out) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

absl::Status ReadU64(ByteReader& reader, const char* field, uint64_t& out) {
  char buffer[8];
  absl::Status s = reader.ReadExact(buffer, sizeof(buffer));
  if (!s.ok()) {
    return absl::Status(s.code(),
                        absl::StrCat("reading the frame header field ", field, ": ", s.message()));
  }
  out = LoadLittleEndian(buffer);
  return absl::OkStatus();
}

// Resolves magic maps in place. `frames` are the message's frames.
absl::Status Resolve(Value& value, const Frames& frames, const MsgpackLimits& limits, int depth) {
  if (value.is_array()) {
    for (Value& item : value.mutable_items()) {
      absl::Status s = Resolve(item, frames, limits, depth + 1);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }
  if (!value.is_map()) return absl::OkStatus();
  if (value.size() == 1 && value.key(0).is_str() &&
      (value.key(0).text() == "__Serialized__" || value.key(0).text() == "__Pickled__")) {
    const std::string kind = value.key(0).text();
    const std::optional<int64_t> k = value.value(0).AsInt64();
    if (k.has_value() && value.value(0).type() == Value::Type::kInt) {
      if (*k < 1 || static_cast<uint64_t>(*k) >= frames.size()) {
        return absl::InvalidArgumentError(absl::StrCat(kind, " placeholder points at frame ", *k,
                                                       " of a ", frames.size(), "-frame message"));
      }
      absl::StatusOr<Value> header = DecodeMsgpack(frames[static_cast<size_t>(*k)], limits);
      if (!header.ok() || !header->is_map()) {
        return absl::InvalidArgumentError(
            absl::StrCat(kind, " sub-header in frame ", *k, " is not a msgpack map",
                         header.ok() ? "" : absl::StrCat(": ", header.status().message())));
      }
      const Value* count = header->Find("num-sub-frames");
      const std::optional<int64_t> m = count != nullptr ? count->AsInt64() : std::nullopt;
      if (!m.has_value() || *m < 0 ||
          static_cast<uint64_t>(*m) >= frames.size() - static_cast<size_t>(*k)) {
        return absl::InvalidArgumentError(
            absl::StrCat(kind, " sub-header in frame ", *k, " has a bad num-sub-frames (",
                         count != nullptr ? count->DebugString(40) : "missing", ") for a ",
                         frames.size(), "-frame message"));
      }
      value = Value::Opaque(absl::StrCat(kind, " frames ", *k, "..", *k + *m));
      return absl::OkStatus();
    }
    // {"__Serialized__": true, "data": ...} occurs only inside sub-headers: leave it opaque too.
    value = Value::Opaque(kind);
    return absl::OkStatus();
  }
  // Magic maps have at most 4 keys: skip the key scans on every larger map.
  const bool small = value.size() <= 4;
  if (const Value* set = small ? value.Find("__Set__") : nullptr;
      set != nullptr && value.Find("as-list") != nullptr) {
    Value list = *value.Find("as-list");
    value = std::move(list);
    return Resolve(value, frames, limits, depth + 1);
  }
  if (const Value* is_enum = small ? value.Find("__Enum__") : nullptr; is_enum != nullptr) {
    const Value* name = value.Find("name");
    value = name != nullptr && name->is_str() ? *name : Value::Opaque("__Enum__");
    return absl::OkStatus();
  }
  for (Value& item : value.mutable_items()) {
    absl::Status s = Resolve(item, frames, limits, depth + 1);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status StringByteReader::ReadExact(char* dst, size_t n) {
  if (bytes_.size() - pos_ < n) {
    return absl::OutOfRangeError(
        absl::StrCat("end of input: needed ", n, " bytes, ", bytes_.size() - pos_, " left"));
  }
  if (n > 0) std::memcpy(dst, bytes_.data() + pos_, n);
  pos_ += n;
  return absl::OkStatus();
}

absl::StatusOr<Frames> ReadFrames(ByteReader& reader, const FrameLimits& limits) {
  uint64_t total_length = 0, n = 0;
  absl::Status s = ReadU64(reader, "L", total_length);
  if (!s.ok()) return s;
  if (!(s = ReadU64(reader, "n (frame count)", n)).ok()) return s;
  if (n == 0 || n > limits.max_frames) {
    return absl::InvalidArgumentError(
        absl::StrCat("frame count n = ", n, " is outside [1, ", limits.max_frames, "]"));
  }
  std::vector<uint64_t> lengths(static_cast<size_t>(n));
  uint64_t sum = 0;
  for (uint64_t i = 0; i < n; ++i) {
    if (!(s = ReadU64(reader, "frame length", lengths[i])).ok()) return s;
    if (lengths[i] > limits.max_message_bytes - sum) {
      return absl::InvalidArgumentError(absl::StrCat("frame ", i, " length ", lengths[i],
                                                     " makes the message exceed the cap of ",
                                                     limits.max_message_bytes, " bytes"));
    }
    sum += lengths[i];
  }
  const uint64_t prelude = 8 + 8 * n;
  if (total_length < prelude || total_length > prelude + sum) {
    return absl::InvalidArgumentError(absl::StrCat("length field L = ", total_length,
                                                   " is outside [", prelude, ", ", prelude + sum,
                                                   "] for ", n, " frames"));
  }
  Frames frames(static_cast<size_t>(n));
  constexpr size_t kStep = size_t{1} << 20;
  for (size_t i = 0; i < frames.size(); ++i) {
    std::string& frame = frames[i];
    const size_t length = static_cast<size_t>(lengths[i]);
    // Grow with the data actually received, so a lying length cannot allocate ahead.
    while (frame.size() < length) {
      const size_t old_size = frame.size();
      const size_t step = std::min(kStep, length - old_size);
      frame.resize(old_size + step);
      if (!(s = reader.ReadExact(frame.data() + old_size, step)).ok()) {
        return absl::Status(
            s.code(), absl::StrCat("reading frame ", i, " (", length, " bytes): ", s.message()));
      }
    }
  }
  return frames;
}

std::string EncodeFrames(const Frames& frames) {
  uint64_t sum = 0;
  for (const std::string& f : frames) sum += f.size();
  std::string out;
  out.reserve(16 + 8 * frames.size() + sum);
  PutLittleEndian(8 + 8 * frames.size() + sum, out);
  PutLittleEndian(frames.size(), out);
  for (const std::string& f : frames) PutLittleEndian(f.size(), out);
  for (const std::string& f : frames) out += f;
  return out;
}

absl::StatusOr<Value> DecodeMessage(const Frames& frames, const MsgpackLimits& limits) {
  if (frames.empty()) return absl::InvalidArgumentError("message has no frames");
  absl::StatusOr<Value> value = DecodeMsgpack(frames[0], limits);
  if (!value.ok()) {
    return absl::Status(value.status().code(), absl::StrCat("frame 0: ", value.status().message()));
  }
  absl::Status s = Resolve(*value, frames, limits, 0);
  if (!s.ok()) return s;
  return value;
}

std::string EncodeMessage(const Value& value) { return EncodeFrames({EncodeMsgpack(value)}); }

}  // namespace roastcoffea::dask
