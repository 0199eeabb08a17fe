#include "io/untrusted_json.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace {

constexpr size_t kNone = absl::string_view::npos;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t SkipSpace(absl::string_view json, size_t i) {
  while (i < json.size() && IsSpace(json[i])) ++i;
  return i;
}

// Index just past the string that starts at json[i] == '"'; kNone when it is unterminated.
size_t SkipString(absl::string_view json, size_t i) {
  for (++i; i < json.size(); ++i) {
    if (json[i] == '\\') {
      ++i;
    } else if (json[i] == '"') {
      return i + 1;
    }
  }
  return kNone;
}

absl::Status Broken(absl::string_view source, absl::string_view what, size_t at) {
  return absl::InvalidArgumentError(
      absl::StrCat(source, ": not valid JSON: ", what, " at byte ", at));
}

// Index just past the value that starts at json[i]: a string, a bracketed block (followed by
// strings and brackets only; protobuf checks the rest), or a scalar token.
absl::StatusOr<size_t> SkipValue(absl::string_view json, size_t i, absl::string_view source) {
  if (i >= json.size()) return Broken(source, "expected a value", i);
  const char first = json[i];
  if (first == '"') {
    const size_t end = SkipString(json, i);
    if (end == kNone) return Broken(source, "unterminated string", i);
    return end;
  }
  if (first == '[' || first == '{') {
    int depth = 0;
    for (size_t j = i; j < json.size(); ++j) {
      const char c = json[j];
      if (c == '"') {
        const size_t end = SkipString(json, j);
        if (end == kNone) return Broken(source, "unterminated string", j);
        j = end - 1;
      } else if (c == '[' || c == '{') {
        ++depth;
      } else if (c == ']' || c == '}') {
        if (--depth == 0) return j + 1;
      }
    }
    return Broken(source, "unclosed bracket", i);
  }
  size_t end = i;
  while (end < json.size() && !IsSpace(json[end]) && json[end] != ',' && json[end] != ']' &&
         json[end] != '}') {
    ++end;
  }
  if (end == i) return Broken(source, "expected a value", i);
  return end;
}

}  // namespace

std::string EchoedText(absl::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return absl::CHexEscape(text);
  return absl::StrCat(absl::CHexEscape(text.substr(0, max_bytes)), "...");
}

absl::Status CheckJsonDepth(absl::string_view json, absl::string_view source, int max_depth) {
  int depth = 0;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '"') {
      i = SkipString(json, i);
      if (i == kNone) return absl::OkStatus();  // the parser reports it
      --i;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        return absl::InvalidArgumentError(
            absl::StrCat(source, ": nested too deep: more than ", max_depth,
                         " levels of arrays and objects (at byte ", i, ")"));
      }
    } else if (c == ']' || c == '}') {
      depth = std::max(0, depth - 1);
    }
  }
  return absl::OkStatus();
}

std::string ReplaceNonFiniteTokens(absl::string_view json, std::vector<NonFiniteToken>* found) {
  std::string out;
  out.reserve(json.size());
  absl::string_view last_string;  // the key, once a ':' follows it
  absl::string_view key;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '"') {
      const size_t end = SkipString(json, i);
      const size_t stop = end == kNone ? json.size() : end;
      out.append(json.data() + i, stop - i);
      last_string = json.substr(i + 1, stop - i - (end == kNone ? 1 : 2));
      i = stop - 1;
      continue;
    }
    if (c == ':') key = last_string;
    bool replaced = false;
    if (c != '-' && c != 'I' && c != 'N') {
      out.push_back(c);
      continue;
    }
    for (absl::string_view token : {"-Infinity", "Infinity", "NaN"}) {
      if (json.substr(i, token.size()) == token) {
        out += "null";
        if (found != nullptr) found->push_back({EchoedText(key), std::string(token)});
        i += token.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out.push_back(c);
  }
  return out;
}

absl::StatusOr<google::protobuf::Value> ParseUntrustedJson(
    absl::string_view json, absl::string_view source, std::vector<NonFiniteToken>* non_finite) {
  if (absl::Status depth = CheckJsonDepth(json, source); !depth.ok()) return depth;
  const std::string text = ReplaceNonFiniteTokens(json, non_finite);
  google::protobuf::Value value;
  const auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(text.data(), text.size()), &value);
  if (!status.ok()) {
    // protobuf's message is a reason, then the input around the error: the reason only, so a
    // warning never quotes a file the user may not even be allowed to read (a symlink).
    absl::string_view reason(status.message().data(), status.message().size());
    reason = reason.substr(0, reason.find('\n'));
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": not valid JSON: ", EchoedText(reason)));
  }
  return value;
}

absl::StatusOr<std::vector<absl::string_view>> SplitJsonArray(absl::string_view json,
                                                              absl::string_view source) {
  if (absl::Status depth = CheckJsonDepth(json, source); !depth.ok()) return depth;
  size_t i = SkipSpace(json, 0);
  if (i >= json.size() || json[i] != '[') return Broken(source, "expected an array", i);
  std::vector<absl::string_view> elements;
  i = SkipSpace(json, i + 1);
  if (i < json.size() && json[i] == ']') {
    ++i;
  } else {
    while (true) {
      absl::StatusOr<size_t> end = SkipValue(json, i, source);
      if (!end.ok()) return end.status();
      elements.push_back(json.substr(i, *end - i));
      i = SkipSpace(json, *end);
      if (i < json.size() && json[i] == ']') {
        ++i;
        break;
      }
      if (i >= json.size() || json[i] != ',') return Broken(source, "expected ',' or ']'", i);
      i = SkipSpace(json, i + 1);
    }
  }
  i = SkipSpace(json, i);
  if (i != json.size()) return Broken(source, "unexpected text after the array", i);
  return elements;
}

absl::StatusOr<std::optional<absl::string_view>> FindJsonMember(absl::string_view json,
                                                                absl::string_view key,
                                                                absl::string_view source) {
  size_t i = SkipSpace(json, 0);
  if (i >= json.size() || json[i] != '{') return std::nullopt;
  i = SkipSpace(json, i + 1);
  if (i < json.size() && json[i] == '}') return std::nullopt;
  while (true) {
    if (i >= json.size() || json[i] != '"') return Broken(source, "expected a key", i);
    const size_t key_end = SkipString(json, i);
    if (key_end == kNone) return Broken(source, "unterminated string", i);
    const absl::string_view name = json.substr(i + 1, key_end - i - 2);
    i = SkipSpace(json, key_end);
    if (i >= json.size() || json[i] != ':') return Broken(source, "expected ':'", i);
    i = SkipSpace(json, i + 1);
    absl::StatusOr<size_t> end = SkipValue(json, i, source);
    if (!end.ok()) return end.status();
    if (name == key) return json.substr(i, *end - i);
    i = SkipSpace(json, *end);
    if (i < json.size() && json[i] == '}') return std::nullopt;
    if (i >= json.size() || json[i] != ',') return Broken(source, "expected ',' or '}'", i);
    i = SkipSpace(json, i + 1);
  }
}

}  // namespace roastcoffea
