#include "backends/dask/value.h"

#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "io/untrusted_json.h"

namespace roastcoffea::dask {

Value Value::Bool(bool b) {
  Value v;
  v.type_ = Type::kBool;
  v.b_ = b;
  return v;
}
Value Value::Int(int64_t i) {
  Value v;
  v.type_ = Type::kInt;
  v.i_ = i;
  return v;
}
Value Value::Uint(uint64_t u) {
  if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Int(static_cast<int64_t>(u));
  }
  Value v;
  v.type_ = Type::kUint;
  v.u_ = u;
  return v;
}
Value Value::Float(double d) {
  Value v;
  v.type_ = Type::kFloat;
  v.d_ = d;
  return v;
}
Value Value::Str(std::string s) {
  Value v;
  v.type_ = Type::kStr;
  v.s_ = std::move(s);
  return v;
}
Value Value::Bin(std::string bytes) {
  Value v;
  v.type_ = Type::kBin;
  v.s_ = std::move(bytes);
  return v;
}
Value Value::Array(std::vector<Value> items) {
  Value v;
  v.type_ = Type::kArray;
  v.items_ = std::move(items);
  return v;
}
Value Value::Map() {
  Value v;
  v.type_ = Type::kMap;
  return v;
}
Value Value::Opaque(std::string description) {
  Value v;
  v.type_ = Type::kOpaque;
  v.s_ = std::move(description);
  return v;
}

std::optional<double> Value::AsDouble() const {
  switch (type_) {
    case Type::kInt:
      return static_cast<double>(i_);
    case Type::kUint:
      return static_cast<double>(u_);
    case Type::kFloat:
      return d_;
    default:
      return std::nullopt;
  }
}

std::optional<int64_t> Value::AsInt64() const {
  if (type_ == Type::kInt) return i_;
  if (type_ == Type::kFloat && std::isfinite(d_) && d_ == std::floor(d_) && std::fabs(d_) < 9e18) {
    return static_cast<int64_t>(d_);
  }
  return std::nullopt;
}

std::optional<uint64_t> Value::AsUint64() const {
  if (type_ == Type::kUint) return u_;
  if (type_ == Type::kInt && i_ >= 0) return static_cast<uint64_t>(i_);
  return std::nullopt;
}

const Value* Value::Find(absl::string_view key) const {
  if (type_ != Type::kMap) return nullptr;
  for (size_t i = 0; i + 1 < items_.size(); i += 2) {
    if (items_[i].type_ == Type::kStr && items_[i].s_ == key) return &items_[i + 1];
  }
  return nullptr;
}

void Value::Insert(Value key, Value value) {
  items_.push_back(std::move(key));
  items_.push_back(std::move(value));
}

bool operator==(const Value& a, const Value& b) {
  if (a.type_ != b.type_) return false;
  switch (a.type_) {
    case Value::Type::kNil:
      return true;
    case Value::Type::kBool:
      return a.b_ == b.b_;
    case Value::Type::kInt:
      return a.i_ == b.i_;
    case Value::Type::kUint:
      return a.u_ == b.u_;
    case Value::Type::kFloat:
      return a.d_ == b.d_ || (std::isnan(a.d_) && std::isnan(b.d_));
    case Value::Type::kStr:
    case Value::Type::kBin:
    case Value::Type::kOpaque:
      return a.s_ == b.s_;
    case Value::Type::kArray:
    case Value::Type::kMap:
      return a.items_ == b.items_;
  }
  return false;
}

std::string Value::DebugString(size_t max_chars) const {
  std::string out;
  AppendDebug(out, max_chars);
  // Peer text: cut and escaped like every quote of untrusted input.
  return EchoedText(out, max_chars);
}

std::string Value::Repr(size_t max_chars) const {
  std::string out;
  AppendDebug(out, max_chars);
  if (out.size() > max_chars) {
    out.resize(max_chars);
    out += "...";
  }
  return out;
}

void Value::AppendDebug(std::string& out, size_t max_chars) const {
  if (out.size() > max_chars) return;
  switch (type_) {
    case Type::kNil:
      out += "None";
      return;
    case Type::kBool:
      out += b_ ? "True" : "False";
      return;
    case Type::kInt:
      absl::StrAppend(&out, i_);
      return;
    case Type::kUint:
      absl::StrAppend(&out, u_);
      return;
    case Type::kFloat:
      absl::StrAppend(&out, d_);
      return;
    case Type::kStr:
      absl::StrAppend(&out, "'", s_, "'");
      return;
    case Type::kBin:
      absl::StrAppend(&out, "<bin ", s_.size(), " bytes>");
      return;
    case Type::kOpaque:
      absl::StrAppend(&out, "<opaque ", s_, ">");
      return;
    case Type::kArray:
      out += "(";
      for (size_t i = 0; i < items_.size() && out.size() <= max_chars; ++i) {
        if (i > 0) out += ", ";
        items_[i].AppendDebug(out, max_chars);
      }
      if (items_.size() == 1) out += ",";
      out += ")";
      return;
    case Type::kMap:
      out += "{";
      for (size_t i = 0; i + 1 < items_.size() && out.size() <= max_chars; i += 2) {
        if (i > 0) out += ", ";
        items_[i].AppendDebug(out, max_chars);
        out += ": ";
        items_[i + 1].AppendDebug(out, max_chars);
      }
      out += "}";
      return;
  }
}

Value ExcludeArgs(std::initializer_list<const char*> names) {
  Value exclude = Value::Array();
  for (const char* name : names) exclude.Append(Value::Str(name));
  Value args = Value::Map();
  args.Insert(Value::Str("exclude"), std::move(exclude));
  return args;
}

}  // namespace roastcoffea::dask
