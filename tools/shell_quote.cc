#include "tools/shell_quote.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"

namespace roastcoffea {
namespace {

bool SafeInShell(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
         absl::string_view("_@%+=:,./-").find(c) != absl::string_view::npos;
}

}  // namespace

std::string ShellQuote(absl::string_view word) {
  bool safe = !word.empty();
  for (char c : word) safe = safe && SafeInShell(c);
  if (safe) return std::string(word);
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  quoted += "'";
  return quoted;
}

}  // namespace roastcoffea
