// JsonTree: a small strict parser of one JSON value written by someone else (a chunk record),
// into a flat tree that is reused from one value to the next, so that reading a million
// records allocates nothing per record once the buffers have grown.
//
// It accepts what protobuf's JSON parser (behind io/untrusted_json.h's ParseUntrustedJson)
// accepts into a google.protobuf.Value, and refuses what it refuses:
// - strings must be valid UTF-8 (after \u escapes; surrogates must pair), a repeated key in
//   one object is an error, numbers outside the range of double are errors (underflow is 0);
// - protobuf's leniencies are kept: a trailing comma before ']' or '}', numbers as strtod reads
//   them ("1.", "-.5"), strings in single quotes, keys without quotes, \v and \f as space;
// - nesting deeper than kMaxJsonDepth is an error.
// Bare NaN and Infinity (Python's json.dump) are the caller's: io/untrusted_json.h's
// ReplaceNonFiniteTokens first, as ParseUntrustedJson does.
//
// Thread-safety: one JsonTree per thread. Cost: linear in the text; memory: the nodes and the
// unescaped strings of the last value parsed.
#ifndef ROASTCOFFEA_INGEST_JSON_TREE_H_
#define ROASTCOFFEA_INGEST_JSON_TREE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "io/untrusted_json.h"

namespace roastcoffea {

struct JsonNode {
  enum class Kind : uint8_t { kNull, kBool, kNumber, kString, kList, kObject };
  static constexpr uint32_t kNone = ~uint32_t{0};

  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  // The unescaped string value (kString) and member key (in an object), in JsonTree's text.
  uint32_t text_begin = 0;
  uint32_t text_size = 0;
  uint32_t key_begin = 0;
  uint32_t key_size = 0;
  // Children of a list or object, in the order written.
  uint32_t first_child = kNone;
  uint32_t next_sibling = kNone;
};

// The length of the well-formed UTF-8 sequence at text[i] (a byte >= 0x80), or 0: no overlong
// forms, no surrogates, nothing above U+10FFFF. What JsonTree accepts in a string.
size_t Utf8SequenceLength(absl::string_view text, size_t i);

class JsonTree {
 public:
  JsonTree() = default;
  JsonTree(const JsonTree&) = delete;
  JsonTree& operator=(const JsonTree&) = delete;

  // Parses `json` (one value, whitespace around it allowed), replacing the previous tree.
  // InvalidArgument "<reason> at byte <offset>" when it is not valid JSON.
  absl::Status Parse(absl::string_view json);

  // Valid after a successful Parse.
  const JsonNode& root() const { return nodes_[0]; }
  const JsonNode& node(uint32_t index) const { return nodes_[index]; }
  absl::string_view text(const JsonNode& node) const {
    return absl::string_view(text_).substr(node.text_begin, node.text_size);
  }
  absl::string_view key(const JsonNode& node) const {
    return absl::string_view(text_).substr(node.key_begin, node.key_size);
  }

 private:
  class Parser;

  std::vector<JsonNode> nodes_;
  std::string text_;
  // Scratch: (begin, size) in text_ of the keys of the objects being parsed.
  std::vector<std::pair<uint32_t, uint32_t>> keys_;
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INGEST_JSON_TREE_H_
