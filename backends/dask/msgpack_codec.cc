#include "backends/dask/msgpack_codec.h"

#include <cstdint>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace roastcoffea::dask {
namespace {

bool IsValidUtf8(absl::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t extra;
    uint32_t code;
    if ((c & 0xe0) == 0xc0) {
      extra = 1;
      code = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      extra = 2;
      code = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      extra = 3;
      code = c & 0x07;
    } else {
      return false;
    }
    if (n - i <= extra) return false;
    for (size_t k = 1; k <= extra; ++k) {
      const unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      code = (code << 6) | (cc & 0x3f);
    }
    // Overlong forms, surrogates and values beyond U+10FFFF are invalid (as in Python).
    if ((extra == 1 && code < 0x80) || (extra == 2 && code < 0x800) ||
        (extra == 3 && (code < 0x10000 || code > 0x10ffff)) || (code >= 0xd800 && code <= 0xdfff)) {
      return false;
    }
    i += extra + 1;
  }
  return true;
}

class Decoder {
 public:
  Decoder(absl::string_view in, const MsgpackLimits& limits) : in_(in), limits_(limits) {}

  absl::StatusOr<Value> DecodeDocument() {
    Value v;
    absl::Status s = Decode(v, 0);
    if (!s.ok()) return s;
    if (pos_ != in_.size()) {
      return Error(absl::StrCat(in_.size() - pos_, " trailing bytes after the msgpack document"));
    }
    return v;
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("msgpack: ", what, " (at byte ", pos_, " of ", in_.size(), ")"));
  }
  size_t remaining() const { return in_.size() - pos_; }

  absl::Status Need(size_t n) const {
    if (remaining() < n) {
      return Error(absl::StrCat("truncated input: need ", n, " more bytes, have ", remaining()));
    }
    return absl::OkStatus();
  }
  uint64_t ReadBigEndian(size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(in_[pos_ + i]);
    pos_ += n;
    return v;
  }

  absl::Status ReadLength(size_t width, uint64_t& out) {
    absl::Status s = Need(width);
    if (!s.ok()) return s;
    out = ReadBigEndian(width);
    return absl::OkStatus();
  }

  absl::Status ReadBytes(uint64_t length, bool is_str, Value& out) {
    if (length > remaining()) {
      return Error(absl::StrCat(is_str ? "str" : "bin", " of ", length,
                                " bytes exceeds the remaining input"));
    }
    absl::string_view bytes = in_.substr(pos_, static_cast<size_t>(length));
    if (is_str && !IsValidUtf8(bytes)) return Error("str is not valid UTF-8");
    pos_ += static_cast<size_t>(length);
    out = is_str ? Value::Str(std::string(bytes)) : Value::Bin(std::string(bytes));
    return absl::OkStatus();
  }

  absl::Status ReadArray(uint64_t count, int depth, Value& out) {
    // Every element takes at least one byte: a count beyond the input is a lie.
    if (count > remaining()) {
      return Error(absl::StrCat("array of ", count, " elements exceeds the remaining input"));
    }
    out = Value::Array();
    out.Reserve(static_cast<size_t>(count));
    std::vector<Value>& items = out.mutable_items();
    for (uint64_t i = 0; i < count; ++i) {
      items.emplace_back();  // decoded in place: no moves of finished subtrees
      absl::Status s = Decode(items.back(), depth + 1);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  absl::Status ReadMap(uint64_t count, int depth, Value& out) {
    if (count > remaining() / 2) {
      return Error(absl::StrCat("map of ", count, " entries exceeds the remaining input"));
    }
    out = Value::Map();
    out.Reserve(static_cast<size_t>(count));
    std::vector<Value>& items = out.mutable_items();
    for (uint64_t i = 0; i < 2 * count; ++i) {  // keys and values interleaved
      items.emplace_back();
      absl::Status s = Decode(items.back(), depth + 1);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  // The fixed-width numbers: float 32 and 64 (0xca, 0xcb), unsigned (0xcc-0xcf) and signed
  // (0xd0-0xd3) integers of 1 to 8 bytes.
  absl::Status ReadNumber(unsigned char tag, Value& out) {
    uint64_t n = 0;
    absl::Status s;
    switch (tag) {
      case 0xca: {
        if (!(s = ReadLength(4, n)).ok()) return s;
        const uint32_t bits = static_cast<uint32_t>(n);
        float f;
        std::memcpy(&f, &bits, sizeof(f));
        out = Value::Float(f);
        return absl::OkStatus();
      }
      case 0xcb: {
        if (!(s = ReadLength(8, n)).ok()) return s;
        double d;
        std::memcpy(&d, &n, sizeof(d));
        out = Value::Float(d);
        return absl::OkStatus();
      }
      case 0xcc:
      case 0xcd:
      case 0xce:
      case 0xcf:
        if (!(s = ReadLength(size_t{1} << (tag - 0xcc), n)).ok()) return s;
        out = Value::Uint(n);
        return absl::OkStatus();
      case 0xd0:
      case 0xd1:
      case 0xd2:
      case 0xd3: {
        const size_t width = size_t{1} << (tag - 0xd0);
        if (!(s = ReadLength(width, n)).ok()) return s;
        // Sign-extend from `width` bytes.
        const int shift = static_cast<int>(64 - 8 * width);
        const int64_t signed_value =
            shift == 0 ? static_cast<int64_t>(n) : static_cast<int64_t>(n << shift) >> shift;
        out = Value::Int(signed_value);
        return absl::OkStatus();
      }
      default:
        return Error(absl::StrFormat("type byte 0x%02x is not a number", tag));
    }
  }

  absl::Status Decode(Value& out, int depth) {
    if (depth > limits_.max_depth) {
      return Error(absl::StrCat("nesting deeper than ", limits_.max_depth, " levels"));
    }
    if (++values_ > limits_.max_values) {
      return Error(absl::StrCat("more than ", limits_.max_values, " values"));
    }
    absl::Status s = Need(1);
    if (!s.ok()) return s;
    const unsigned char tag = static_cast<unsigned char>(in_[pos_++]);
    uint64_t n = 0;
    if (tag <= 0x7f) {
      out = Value::Int(tag);
      return absl::OkStatus();
    }
    if (tag >= 0xe0) {
      out = Value::Int(static_cast<int8_t>(tag));
      return absl::OkStatus();
    }
    if ((tag & 0xf0) == 0x80) return ReadMap(tag & 0x0f, depth, out);
    if ((tag & 0xf0) == 0x90) return ReadArray(tag & 0x0f, depth, out);
    if ((tag & 0xe0) == 0xa0) return ReadBytes(tag & 0x1f, true, out);
    switch (tag) {
      case 0xc0:
        out = Value::Nil();
        return absl::OkStatus();
      case 0xc2:
        out = Value::Bool(false);
        return absl::OkStatus();
      case 0xc3:
        out = Value::Bool(true);
        return absl::OkStatus();
      case 0xc4:
      case 0xc5:
      case 0xc6:
        if (!(s = ReadLength(size_t{1} << (tag - 0xc4), n)).ok()) return s;
        return ReadBytes(n, false, out);
      case 0xd9:
      case 0xda:
      case 0xdb:
        if (!(s = ReadLength(size_t{1} << (tag - 0xd9), n)).ok()) return s;
        return ReadBytes(n, true, out);
      case 0xdc:
      case 0xdd:
        if (!(s = ReadLength(tag == 0xdc ? 2 : 4, n)).ok()) return s;
        return ReadArray(n, depth, out);
      case 0xde:
      case 0xdf:
        if (!(s = ReadLength(tag == 0xde ? 2 : 4, n)).ok()) return s;
        return ReadMap(n, depth, out);
      case 0xca:
      case 0xcb:
      case 0xcc:
      case 0xcd:
      case 0xce:
      case 0xcf:
      case 0xd0:
      case 0xd1:
      case 0xd2:
      case 0xd3:
        return ReadNumber(tag, out);
      case 0xc7:
      case 0xc8:
      case 0xc9:
      case 0xd4:
      case 0xd5:
      case 0xd6:
      case 0xd7:
      case 0xd8:
        --pos_;
        return Error(absl::StrFormat("ext type 0x%02x is not used by Dask and not accepted", tag));
      default:  // 0xc1
        --pos_;
        return Error(absl::StrFormat("reserved type byte 0x%02x", tag));
    }
  }

  absl::string_view in_;
  const MsgpackLimits& limits_;
  size_t pos_ = 0;
  size_t values_ = 0;
};

void PutBigEndian(uint64_t v, size_t width, std::string& out) {
  for (size_t i = width; i-- > 0;) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void EncodeUint(uint64_t u, std::string& out) {
  if (u <= 0x7f) {
    out.push_back(static_cast<char>(u));
  } else if (u <= 0xff) {
    out.push_back('\xcc');
    PutBigEndian(u, 1, out);
  } else if (u <= 0xffff) {
    out.push_back('\xcd');
    PutBigEndian(u, 2, out);
  } else if (u <= 0xffffffffu) {
    out.push_back('\xce');
    PutBigEndian(u, 4, out);
  } else {
    out.push_back('\xcf');
    PutBigEndian(u, 8, out);
  }
}

// fix_max < 0: the type has no fix form (bin).
void EncodeLength(size_t n, unsigned char fix_tag, int fix_max, unsigned char tag8,
                  unsigned char tag16, unsigned char tag32, std::string& out) {
  if (fix_max >= 0 && n <= static_cast<size_t>(fix_max)) {
    out.push_back(static_cast<char>(fix_tag | n));
  } else if (tag8 != 0 && n <= 0xff) {
    out.push_back(static_cast<char>(tag8));
    PutBigEndian(n, 1, out);
  } else if (n <= 0xffff) {
    out.push_back(static_cast<char>(tag16));
    PutBigEndian(n, 2, out);
  } else {
    out.push_back(static_cast<char>(tag32));
    PutBigEndian(n, 4, out);
  }
}

}  // namespace

absl::StatusOr<Value> DecodeMsgpack(absl::string_view bytes, const MsgpackLimits& limits) {
  return Decoder(bytes, limits).DecodeDocument();
}

void EncodeMsgpack(const Value& value, std::string& out) {
  switch (value.type()) {
    case Value::Type::kNil:
    case Value::Type::kOpaque:
      out.push_back('\xc0');
      return;
    case Value::Type::kBool:
      out.push_back(value.bool_value() ? '\xc3' : '\xc2');
      return;
    case Value::Type::kUint:
      EncodeUint(*value.AsUint64(), out);
      return;
    case Value::Type::kInt: {
      const int64_t i = *value.AsInt64();
      if (i >= 0) {
        EncodeUint(static_cast<uint64_t>(i), out);
      } else if (i >= -32) {
        out.push_back(static_cast<char>(static_cast<int8_t>(i)));
      } else if (i >= INT8_MIN) {
        out.push_back('\xd0');
        PutBigEndian(static_cast<uint64_t>(i), 1, out);
      } else if (i >= INT16_MIN) {
        out.push_back('\xd1');
        PutBigEndian(static_cast<uint64_t>(i), 2, out);
      } else if (i >= INT32_MIN) {
        out.push_back('\xd2');
        PutBigEndian(static_cast<uint64_t>(i), 4, out);
      } else {
        out.push_back('\xd3');
        PutBigEndian(static_cast<uint64_t>(i), 8, out);
      }
      return;
    }
    case Value::Type::kFloat: {
      const double d = *value.AsDouble();
      uint64_t bits;
      std::memcpy(&bits, &d, sizeof(bits));
      out.push_back('\xcb');
      PutBigEndian(bits, 8, out);
      return;
    }
    case Value::Type::kStr:
      EncodeLength(value.text().size(), 0xa0, 31, 0xd9, 0xda, 0xdb, out);
      out += value.text();
      return;
    case Value::Type::kBin:
      EncodeLength(value.text().size(), 0x00, -1, 0xc4, 0xc5, 0xc6, out);
      out += value.text();
      return;
    case Value::Type::kArray:
      EncodeLength(value.size(), 0x90, 15, 0, 0xdc, 0xdd, out);
      for (const Value& item : value.items()) EncodeMsgpack(item, out);
      return;
    case Value::Type::kMap:
      EncodeLength(value.size(), 0x80, 15, 0, 0xde, 0xdf, out);
      for (size_t i = 0; i < value.size(); ++i) {
        EncodeMsgpack(value.key(i), out);
        EncodeMsgpack(value.value(i), out);
      }
      return;
  }
}

std::string EncodeMsgpack(const Value& value) {
  std::string out;
  EncodeMsgpack(value, out);
  return out;
}

}  // namespace roastcoffea::dask
