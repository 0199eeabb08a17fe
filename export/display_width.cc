#include "export/display_width.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace export_internal {
namespace {

struct Range {
  uint32_t first;
  uint32_t last;
};

// Combining marks and zero-width characters.
constexpr Range kZeroWidth[] = {
    {0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x0610, 0x061A}, {0x064B, 0x065F},
    {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF}, {0x200B, 0x200F}, {0x202A, 0x202E}, {0x2060, 0x2064},
    {0x20D0, 0x20FF}, {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F}, {0xFEFF, 0xFEFF}, {0xE0100, 0xE01EF},
};

// East Asian Wide and Fullwidth blocks, and the emoji blocks terminals draw two columns wide.
constexpr Range kDoubleWidth[] = {
    {0x1100, 0x115F},   {0x231A, 0x231B},   {0x2329, 0x232A},   {0x23E9, 0x23EC},
    {0x2E80, 0x303E},   {0x3041, 0x33FF},   {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},
    {0xA000, 0xA4CF},   {0xA960, 0xA97F},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},
    {0xFE10, 0xFE19},   {0xFE30, 0xFE6F},   {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},
    {0x1F300, 0x1F64F}, {0x1F680, 0x1F6FF}, {0x1F900, 0x1F9FF}, {0x20000, 0x2FFFD},
    {0x30000, 0x3FFFD},
};

template <size_t N>
bool InRanges(uint32_t code_point, const Range (&ranges)[N]) {
  for (const Range& range : ranges) {
    if (code_point >= range.first && code_point <= range.last) return true;
  }
  return false;
}

size_t CodePointWidth(uint32_t code_point) {
  if (InRanges(code_point, kZeroWidth)) return 0;
  if (InRanges(code_point, kDoubleWidth)) return 2;
  return 1;
}

// Decodes the UTF-8 sequence at the start of `text`. Returns its length in bytes, or 0 when
// the bytes there are not a valid (shortest-form, non-surrogate) sequence.
size_t DecodeUtf8(absl::string_view text, uint32_t* code_point) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t lead = byte(0);
  size_t length;
  uint32_t value;
  uint32_t minimum;
  if (lead < 0x80) {
    *code_point = lead;
    return 1;
  } else if ((lead & 0xE0) == 0xC0) {
    length = 2, value = lead & 0x1F, minimum = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, value = lead & 0x0F, minimum = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, value = lead & 0x07, minimum = 0x10000;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
    value = (value << 6) | (byte(i) & 0x3F);
  }
  if (value < minimum || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return 0;
  *code_point = value;
  return length;
}

}  // namespace

size_t DisplayWidth(absl::string_view utf8) {
  size_t width = 0;
  while (!utf8.empty()) {
    uint32_t code_point = 0;
    const size_t length = DecodeUtf8(utf8, &code_point);
    if (length == 0) {
      width += 1;
      utf8.remove_prefix(1);
      continue;
    }
    width += CodePointWidth(code_point);
    utf8.remove_prefix(length);
  }
  return width;
}

std::string ReplaceControlCharacters(absl::string_view text) {
  std::string result;
  result.reserve(text.size());
  while (!text.empty()) {
    uint32_t code_point = 0;
    const size_t length = DecodeUtf8(text, &code_point);
    // C0, DEL and C1 (U+0080..U+009F: U+009B is an 8-bit CSI that some terminals obey), and a
    // byte that is not UTF-8 (a raw 0x9B is the same CSI to an 8-bit terminal): one '?' each.
    if (length == 0 || code_point < 0x20 || (code_point >= 0x7F && code_point <= 0x9F)) {
      result.push_back('?');
      text.remove_prefix(length == 0 ? 1 : length);
      continue;
    }
    result.append(text.data(), length);
    text.remove_prefix(length);
  }
  return result;
}

std::string ElideMiddle(absl::string_view utf8, size_t max_width, absl::string_view ellipsis) {
  if (DisplayWidth(utf8) <= max_width) return std::string(utf8);
  const size_t ellipsis_width = DisplayWidth(ellipsis);
  if (max_width <= ellipsis_width) return std::string(ellipsis.substr(0, max_width));
  // Whole characters (an invalid byte is one character of width 1).
  std::vector<absl::string_view> characters;
  for (size_t i = 0; i < utf8.size();) {
    uint32_t code_point;
    const size_t length = std::max<size_t>(1, DecodeUtf8(utf8.substr(i), &code_point));
    characters.push_back(utf8.substr(i, length));
    i += length;
  }
  // The head gets the odd column: "long_na…_name".
  const size_t budget = max_width - ellipsis_width;
  const size_t head_budget = budget - budget / 2;
  std::string head, tail;
  size_t head_width = 0, tail_width = 0, front = 0, back = characters.size();
  while (front < back && head_width + DisplayWidth(characters[front]) <= head_budget) {
    head_width += DisplayWidth(characters[front]);
    absl::StrAppend(&head, characters[front++]);
  }
  std::vector<absl::string_view> tail_characters;
  while (back > front && head_width + tail_width + DisplayWidth(characters[back - 1]) <= budget) {
    tail_width += DisplayWidth(characters[back - 1]);
    tail_characters.push_back(characters[--back]);
  }
  for (auto it = tail_characters.rbegin(); it != tail_characters.rend(); ++it) {
    absl::StrAppend(&tail, *it);
  }
  return absl::StrCat(head, ellipsis, tail);
}

}  // namespace export_internal
}  // namespace roastcoffea
