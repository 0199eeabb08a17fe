// JSON written by someone else (the original Python tool, a user's command): checks that run
// before protobuf's parser sees it, each linear in the text.
//
// - Nesting depth is limited (kMaxJsonDepth): protobuf parses deep arrays into
//   google.protobuf.Value in quadratic time before failing, so deep input is refused first.
// - Python's json.dump writes bare NaN, Infinity and -Infinity (not JSON). Outside strings
//   they become null, and each is reported with the object key it was under, so one NaN loses
//   one value, not the file.
// - A top-level array can be split into its elements' texts, so a caller parses one element
//   at a time instead of materialising the whole document.
// Messages echo at most kMaxEchoedBytes of the input.
//
// Thread-safety: no shared state.
#ifndef ROASTCOFFEA_IO_UNTRUSTED_JSON_H_
#define ROASTCOFFEA_IO_UNTRUSTED_JSON_H_

#include <google/protobuf/struct.pb.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace roastcoffea {

// Arrays and objects nested deeper than this are refused. Real inputs nest fewer than 10;
// protobuf's parser itself gives up on objects nested 34 deep (three message levels each
// against its limit of 100) with an unhelpful message, so every depth allowed here parses.
inline constexpr int kMaxJsonDepth = 32;

// Text quoted from an input (a key, a parser's message) is cut to this many bytes.
inline constexpr size_t kMaxEchoedBytes = 200;

// `text` cut to `max_bytes` (then "...") with control and non-ASCII bytes escaped, for a
// message that quotes input.
std::string EchoedText(absl::string_view text, size_t max_bytes = kMaxEchoedBytes);

// InvalidArgument "<source>: nested too deep: more than <max_depth> levels of arrays and
// objects" when brackets outside strings nest deeper than `max_depth`.
absl::Status CheckJsonDepth(absl::string_view json, absl::string_view source,
                            int max_depth = kMaxJsonDepth);

// A NaN, Infinity or -Infinity token found outside strings.
struct NonFiniteToken {
  std::string key;    // the object key it was under (echoed text); "" when none
  std::string token;  // "NaN", "Infinity" or "-Infinity"
};

// `json` with bare NaN / Infinity / -Infinity replaced by null; each one is appended to
// `found` when it is not null.
std::string ReplaceNonFiniteTokens(absl::string_view json, std::vector<NonFiniteToken>* found);

// CheckJsonDepth, ReplaceNonFiniteTokens, then protobuf's parser into a Value.
// InvalidArgument "<source>: not valid JSON: <reason>": protobuf's reason without the input
// it quotes, cut to kMaxEchoedBytes.
absl::StatusOr<google::protobuf::Value> ParseUntrustedJson(
    absl::string_view json, absl::string_view source,
    std::vector<NonFiniteToken>* non_finite = nullptr);

// The texts of the elements of the JSON array `json` (surrounding whitespace allowed), not
// parsed: only strings and brackets are followed. InvalidArgument naming `source` when `json`
// is not one array (std::nullopt-free: an object is an error too) or nests too deep.
absl::StatusOr<std::vector<absl::string_view>> SplitJsonArray(absl::string_view json,
                                                              absl::string_view source);

// The text of the value of member `key` of the JSON object `json`, compared unescaped only for
// plain keys (no backslashes). std::nullopt when `json` is not an object or has no such member;
// InvalidArgument when its structure is broken.
absl::StatusOr<std::optional<absl::string_view>> FindJsonMember(absl::string_view json,
                                                                absl::string_view key,
                                                                absl::string_view source);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_IO_UNTRUSTED_JSON_H_
