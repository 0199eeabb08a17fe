// Quoting for a POSIX shell, for every command line collect builds or prints: the follow-up
// commands it suggests and the Work Queue task and worker commands.
#ifndef ROASTCOFFEA_TOOLS_SHELL_QUOTE_H_
#define ROASTCOFFEA_TOOLS_SHELL_QUOTE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace roastcoffea {

// `word` for a POSIX shell: unchanged when it is made only of [A-Za-z0-9_@%+=:,./-] (and is
// not empty), else in single quotes with each ' written as '\''.
std::string ShellQuote(absl::string_view word);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_SHELL_QUOTE_H_
