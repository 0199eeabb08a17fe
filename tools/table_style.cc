#include "tools/table_style.h"

#include "absl/strings/str_cat.h"
#include "tools/exit_code.h"

namespace roastcoffea {

absl::StatusOr<TableOptions> TableStyle(absl::string_view style) {
  TableOptions options;
  if (style == "auto") {
    options.unicode = UseUnicodeTables();
  } else if (style == "unicode") {
    options.unicode = true;
  } else if (style == "ascii") {
    options.unicode = false;
  } else {
    return UsageError(absl::StrCat("--tables must be auto, unicode or ascii, got '", style, "'"));
  }
  return options;
}

}  // namespace roastcoffea
