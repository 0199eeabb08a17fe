// Value: one decoded msgpack value of the Dask wire protocol.
//
// msgpack's full data model minus ext: nil, bool, signed and unsigned 64-bit integers, float
// (float32 widens to double), str (UTF-8 text) kept distinct from bin (bytes), arrays, and maps
// whose keys may be any Value (newer Dask versions key maps by arrays). A fifth kind, kOpaque,
// stands for an out-of-band `__Serialized__`/`__Pickled__` group (a Python pickle) that this
// client skips and never unpickles; its text says which placeholder it was.
//
// Maps keep wire order; Find() is a linear scan (Dask maps are small or iterated anyway).
// Thread-safety: a plain value type. Cost: about 80 bytes per node plus payload.
#ifndef ROASTCOFFEA_BACKENDS_DASK_VALUE_H_
#define ROASTCOFFEA_BACKENDS_DASK_VALUE_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace roastcoffea::dask {

class Value {
 public:
  enum class Type { kNil, kBool, kInt, kUint, kFloat, kStr, kBin, kArray, kMap, kOpaque };

  Value() = default;  // nil
  static Value Nil() { return Value(); }
  static Value Bool(bool b);
  static Value Int(int64_t i);
  // Stored as kInt when it fits in int64 (msgpack does not tell signedness apart either).
  static Value Uint(uint64_t u);
  static Value Float(double d);
  static Value Str(std::string s);
  static Value Bin(std::string bytes);
  static Value Array(std::vector<Value> items = {});
  static Value Map();  // empty; fill with Insert()
  static Value Opaque(std::string description);

  Type type() const { return type_; }
  bool is_nil() const { return type_ == Type::kNil; }
  bool is_str() const { return type_ == Type::kStr; }
  bool is_map() const { return type_ == Type::kMap; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_number() const {
    return type_ == Type::kInt || type_ == Type::kUint || type_ == Type::kFloat;
  }

  bool bool_value() const { return type_ == Type::kBool && b_; }
  // Text of a str, bytes of a bin, description of an opaque value; empty otherwise.
  const std::string& text() const { return s_; }

  // Numeric views: nullopt when the value is not a number (or not integral / out of range).
  std::optional<double> AsDouble() const;
  std::optional<int64_t> AsInt64() const;
  std::optional<uint64_t> AsUint64() const;

  // Arrays: the elements. Maps: size() pairs, key(i)/value(i).
  size_t size() const { return type_ == Type::kMap ? items_.size() / 2 : items_.size(); }
  const std::vector<Value>& items() const { return items_; }  // array elements
  const Value& key(size_t i) const { return items_[2 * i]; }
  const Value& value(size_t i) const { return items_[2 * i + 1]; }
  // First value whose key is the str `key`; nullptr when absent or not a map.
  const Value* Find(absl::string_view key) const;

  // Appends to an array / a map (no duplicate check, as on the wire).
  void Append(Value item) { items_.push_back(std::move(item)); }
  void Insert(Value key, Value value);
  void Reserve(size_t n) { items_.reserve(type_ == Type::kMap ? 2 * n : n); }
  std::vector<Value>& mutable_items() { return items_; }

  // Python-repr-like text for messages and debugging ("{'op': 'identity'}"): the first
  // max_chars bytes (then "..."), control and non-ASCII bytes escaped (io/untrusted_json.h).
  std::string DebugString(size_t max_chars = 200) const;
  // The same repr unescaped, cut at max_chars (then "..."): an identifier such as a task key's
  // display form, never a message.
  std::string Repr(size_t max_chars) const;

  friend bool operator==(const Value& a, const Value& b);
  friend bool operator!=(const Value& a, const Value& b) { return !(a == b); }

 private:
  void AppendDebug(std::string& out, size_t max_chars) const;

  Type type_ = Type::kNil;
  union {  // by type_: kBool, kInt, kUint, kFloat
    bool b_;
    int64_t i_ = 0;
    uint64_t u_;
    double d_;
  };
  std::string s_;
  std::vector<Value> items_;  // array elements, or map keys and values interleaved
};

// The argument map {"exclude": [names...]} of the scheduler's state-dump ops (dump_state,
// get_cluster_state): the parts of the state not to send.
Value ExcludeArgs(std::initializer_list<const char*> names);

}  // namespace roastcoffea::dask

#endif  // ROASTCOFFEA_BACKENDS_DASK_VALUE_H_
