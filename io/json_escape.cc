#include "io/json_escape.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/str_format.h"

namespace roastcoffea {

namespace {

// Whether any of the eight bytes of `word` is a control character, '"', '\\' or DEL: the
// bytes JSON escapes (the usual bit tricks: a zero byte of x ^ c is a byte equal to c).
bool NeedsEscape(uint64_t word) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;
  const auto zero_byte = [](uint64_t x) { return (x - kOnes) & ~x & kHighs; };
  const uint64_t below_space = (word - kOnes * 0x20) & ~word & kHighs;
  return (below_space | zero_byte(word ^ (kOnes * '"')) | zero_byte(word ^ (kOnes * '\\')) |
          zero_byte(word ^ (kOnes * 0x7f))) != 0;
}

}  // namespace

void AppendJsonString(absl::string_view text, std::string* out) {
  out->push_back('"');
  // Runs of characters that need no escape are copied whole, found eight bytes at a time:
  // flat-metric keys are all such runs, millions of them for a large run.
  size_t run = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    while (i + 8 <= text.size()) {
      uint64_t word;
      std::memcpy(&word, text.data() + i, 8);
      if (NeedsEscape(word)) break;
      i += 8;
    }
    if (i >= text.size()) break;
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f) continue;
    out->append(text.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\t':
        *out += "\\t";
        break;
      default:
        absl::StrAppendFormat(out, "\\u%04x", c);
    }
  }
  out->append(text.data() + run, text.size() - run);
  out->push_back('"');
}

std::string JsonQuote(absl::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  AppendJsonString(text, &out);
  return out;
}

}  // namespace roastcoffea
