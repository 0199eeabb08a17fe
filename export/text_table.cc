// Drawing the summary tables as text (Rich's HEAVY_HEAD box in Unicode, "+-|" in ASCII), and the
// cell formats they share.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "export/display_width.h"
#include "export/table_parts.h"

namespace roastcoffea {
namespace tables_internal {
namespace {

using export_internal::DisplayWidth;
using export_internal::ElideMiddle;

std::string Repeat(absl::string_view text, size_t count) {
  std::string result;
  result.reserve(text.size() * count);
  for (size_t i = 0; i < count; ++i) result.append(text.data(), text.size());
  return result;
}

}  // namespace

std::string PadRight(absl::string_view text, size_t width) {
  const size_t text_width = DisplayWidth(text);
  return absl::StrCat(text, std::string(text_width < width ? width - text_width : 0, ' '));
}

namespace {

std::string PadLeft(absl::string_view text, size_t width) {
  const size_t text_width = DisplayWidth(text);
  return absl::StrCat(std::string(text_width < width ? width - text_width : 0, ' '), text);
}

std::string Rule(const absl::string_view (&parts)[4], const std::vector<size_t>& widths) {
  // Each cell has one space of padding on either side.
  std::string out(parts[0]);
  for (size_t c = 0; c < widths.size(); ++c) {
    if (c > 0) absl::StrAppend(&out, parts[2]);
    absl::StrAppend(&out, Repeat(parts[1], widths[c] + 2));
  }
  absl::StrAppend(&out, parts[3], "\n");
  return out;
}

// Narrowest a column is made to fit the width; below it a cell says nothing.
constexpr size_t kMinColumnWidth = 8;

// Shrinks `widths` until the table fits `max_width` columns (0: no limit): the widest text
// column first, never a right-aligned (number) column unless nothing else can give way.
void FitWidths(const TextTable& table, size_t max_width, std::vector<size_t>* widths) {
  if (max_width == 0) return;
  const auto total = [&] {
    size_t width = 1;
    for (size_t w : *widths) width += w + 3;
    return width;
  };
  for (bool numbers_too : {false, true}) {
    while (total() > max_width) {
      size_t widest = widths->size(), second = 0;
      for (size_t c = 0; c < widths->size(); ++c) {
        const bool number = c < table.right_aligned.size() && table.right_aligned[c];
        if ((number && !numbers_too) || (*widths)[c] <= kMinColumnWidth) continue;
        if (widest == widths->size() || (*widths)[c] > (*widths)[widest]) {
          if (widest != widths->size()) second = std::max(second, (*widths)[widest]);
          widest = c;
        } else {
          second = std::max(second, (*widths)[c]);
        }
      }
      if (widest == widths->size()) break;
      const size_t excess = total() - max_width;
      size_t target = (*widths)[widest] > excess ? (*widths)[widest] - excess : 0;
      target = std::max({target, second, kMinColumnWidth});
      if (target >= (*widths)[widest]) target = (*widths)[widest] - 1;
      (*widths)[widest] = target;
    }
  }
}

}  // namespace

std::string RenderColumns(const TextTable& table, const BoxStyle& box, size_t max_width) {
  const size_t columns = table.header.size();
  std::vector<size_t> widths(columns, 0);
  for (size_t c = 0; c < columns; ++c) widths[c] = DisplayWidth(table.header[c]);
  for (const std::vector<std::string>& row : table.rows) {
    for (size_t c = 0; c < columns && c < row.size(); ++c) {
      widths[c] = std::max(widths[c], DisplayWidth(row[c]));
    }
  }
  FitWidths(table, max_width, &widths);
  const auto render_row = [&](const std::vector<std::string>& row, absl::string_view vertical,
                              bool header) {
    std::string line(vertical);
    for (size_t c = 0; c < columns; ++c) {
      const std::string cell =
          ElideMiddle(c < row.size() ? absl::string_view(row[c]) : "", widths[c], box.ellipsis);
      const bool right = !header && c < table.right_aligned.size() && table.right_aligned[c];
      absl::StrAppend(&line, " ", right ? PadLeft(cell, widths[c]) : PadRight(cell, widths[c]), " ",
                      vertical);
    }
    absl::StrAppend(&line, "\n");
    return line;
  };

  // The title is centred over the table, as rich does it.
  size_t table_width = 1;
  for (size_t width : widths) table_width += width + 3;
  const std::string title =
      max_width > 0 ? ElideMiddle(table.title, max_width, box.ellipsis) : table.title;
  const size_t title_width = DisplayWidth(title);
  std::string out = absl::StrCat(
      std::string(title_width < table_width ? (table_width - title_width) / 2 : 0, ' '), title,
      "\n");
  absl::StrAppend(&out, Rule(box.top, widths));
  absl::StrAppend(&out, render_row(table.header, box.header_vertical, true));
  absl::StrAppend(&out, Rule(box.header_rule, widths));
  for (const std::vector<std::string>& row : table.rows) {
    absl::StrAppend(&out, render_row(row, box.row_vertical, false));
  }
  absl::StrAppend(&out, Rule(box.bottom, widths));
  return out;
}

TextTable ToTextTable(Table table) {
  if (!table.header.empty()) {
    return TextTable{std::move(table.title), std::move(table.header), std::move(table.cells),
                     std::move(table.right_aligned)};
  }
  TextTable columns{std::move(table.title), {"Metric", "Value"}, {}, {}};
  columns.rows.reserve(table.rows.size());
  for (Row& row : table.rows) columns.rows.push_back({std::move(row.metric), std::move(row.value)});
  return columns;
}

// Python's "{:,}".
std::string WithThousandsSeparators(int64_t value) {
  // Through uint64_t so that the most negative value does not overflow.
  uint64_t magnitude = value < 0 ? ~static_cast<uint64_t>(value) + 1 : static_cast<uint64_t>(value);
  std::string digits = absl::StrCat(magnitude);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return value < 0 ? absl::StrCat("-", out) : out;
}

// Python's "{:.1%}".
std::string Percent(double fraction) { return absl::StrFormat("%.1f%%", fraction * 100.0); }

// `text` of figure `figure` (its flat key), marked when the invariant check found it impossible
// (aggregation/invariants.h), so no impossible value reads as a measurement.
std::string FlagIfImpossible(const v1::AggregatedMetrics& metrics, absl::string_view figure,
                             std::string text) {
  for (const v1::ImpossibleFigure& impossible : metrics.impossible_figures()) {
    if (impossible.figure() == figure) return absl::StrCat(text, " (impossible: see WARNING)");
  }
  return text;
}

std::string Bullet(const BoxStyle& box, absl::string_view label) {
  return absl::StrCat("  ", box.bullet, " ", label);
}

}  // namespace tables_internal
}  // namespace roastcoffea
