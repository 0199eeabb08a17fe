// --tables=auto|unicode|ascii as the table options of export/tables.h.
#ifndef ROASTCOFFEA_TOOLS_TABLE_STYLE_H_
#define ROASTCOFFEA_TOOLS_TABLE_STYLE_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "export/tables.h"

namespace roastcoffea {

// auto: Unicode boxes on a terminal unless NO_COLOR is set, else ASCII. Any other value is a
// usage error naming --tables.
absl::StatusOr<TableOptions> TableStyle(absl::string_view style);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_TABLE_STYLE_H_
