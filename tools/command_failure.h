// How a collect mode reports an error: one line on stderr, safe for the terminal, and the exit
// status it means (tools/exit_code.h).
#ifndef ROASTCOFFEA_TOOLS_COMMAND_FAILURE_H_
#define ROASTCOFFEA_TOOLS_COMMAND_FAILURE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "tools/exit_code.h"

namespace roastcoffea {

// Text that may carry data (an error naming a file, a warning quoting an engine's log) for the
// terminal: every control character (C0, DEL, C1 such as the 8-bit CSI U+009B) becomes '?' by
// export's one sanitiser, line by line, so that the lines themselves are kept.
std::string ForTerminal(absl::string_view text);

// Prints "collect: <message>" to stderr. Usage errors exit 2; Cancelled (a signal stopped the
// run before anything was measured) 130; every other error, bad input data included, 1.
ExitCode Fail(const absl::Status& status);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_COMMAND_FAILURE_H_
