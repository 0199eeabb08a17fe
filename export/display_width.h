// Terminal display width of UTF-8 text, for aligning table columns.
//
// Thread-safety: pure functions. Cost: one pass over the bytes.
#ifndef ROASTCOFFEA_EXPORT_DISPLAY_WIDTH_H_
#define ROASTCOFFEA_EXPORT_DISPLAY_WIDTH_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace roastcoffea {
namespace export_internal {

// Number of terminal columns `utf8` occupies: East Asian wide/fullwidth characters and common
// emoji count 2, combining marks and zero-width characters 0, everything else 1. A byte that is
// not part of a valid UTF-8 sequence counts 1 (terminals show one replacement character).
// An approximation of wcwidth(3) that does not depend on the process locale.
size_t DisplayWidth(absl::string_view utf8);

// `text` with every control character replaced by '?': C0 (newline, tab, escape, ...), DEL, C1
// (U+0080..U+009F, U+009B being an 8-bit CSI) and every byte that is not part of valid UTF-8, so
// that a dataset name cannot break a table row or inject terminal escape sequences.
std::string ReplaceControlCharacters(absl::string_view text);

// `utf8` if it fits in `max_width` columns, else its head and tail around `ellipsis` ("…" or
// "..."), whole characters only, in at most `max_width` columns: long names keep their start and
// their end ("/data/store/…/file3.root"), where they usually differ.
std::string ElideMiddle(absl::string_view utf8, size_t max_width, absl::string_view ellipsis);

}  // namespace export_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_DISPLAY_WIDTH_H_
