#include "backends/dask/key_split.h"

#include <vector>

#include "absl/strings/str_split.h"

namespace roastcoffea::dask {
namespace {

// Python's str.isalpha for one code point, approximated: ASCII letters, and every non-ASCII
// UTF-8 sequence counts as a letter (keys are ASCII in practice).
bool IsAlphaWord(absl::string_view word) {
  if (word.empty()) return false;
  for (char c : word) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x80) continue;
    if (!((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z'))) return false;
  }
  return true;
}

bool StartsWithAlpha(absl::string_view word) {
  if (word.empty()) return false;
  const unsigned char u = static_cast<unsigned char>(word[0]);
  return u >= 0x80 || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z');
}

bool IsHexChar(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

absl::string_view StripChars(absl::string_view s, absl::string_view chars) {
  while (!s.empty() && chars.find(s.front()) != absl::string_view::npos) s.remove_prefix(1);
  while (!s.empty() && chars.find(s.back()) != absl::string_view::npos) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string KeySplit(absl::string_view key) {
  const std::vector<absl::string_view> words = absl::StrSplit(key, '-');
  if (words[0].empty()) return "Other";  // Python: words[0][0] raises IndexError
  std::string result;
  if (StartsWithAlpha(words[0])) {
    result = std::string(words[0]);
  } else {
    absl::string_view first = words[0].substr(0, words[0].find(','));
    result = std::string(StripChars(first, "_'()\""));
  }
  for (size_t i = 1; i < words.size(); ++i) {
    const absl::string_view word = words[i];
    const bool looks_like_hash =
        word.size() == 8 && word[0] >= 'a' && word[0] <= 'f';  // Python: word[0] in "abcdef"
    if (IsAlphaWord(word) && !looks_like_hash) {
      result += "-";
      result += std::string(word);
    } else {
      break;
    }
  }
  if (result.size() == 32) {
    bool hex = true;
    for (char c : result) hex = hex && IsHexChar(c);
    if (hex) return "data";
  }
  if (!result.empty() && result[0] == '<') {
    absl::string_view inner = StripChars(result, "<>");
    inner = inner.substr(0, inner.find_first_of(" \t\n\r\f\v"));
    const size_t dot = inner.rfind('.');
    if (inner.empty()) return "Other";  // Python: split()[0] raises IndexError
    if (dot != absl::string_view::npos) inner = inner.substr(dot + 1);
    return std::string(inner);
  }
  if (result.empty()) return "Other";  // Python would still return ""; guard: empty prefix
  return result;
}

std::string KeySplit(const Value& key) {
  const Value* current = &key;
  while (current->is_array()) {
    if (current->items().empty()) return "Other";
    current = &current->items()[0];
  }
  if (current->type() == Value::Type::kStr || current->type() == Value::Type::kBin) {
    return KeySplit(current->text());
  }
  return "Other";
}

std::string KeyToString(const Value& key) {
  if (key.is_str()) return key.text();
  return key.Repr(400);
}

}  // namespace roastcoffea::dask
