#include "io/json_escape.h"

#include "absl/strings/str_format.h"

namespace roastcoffea {

void AppendJsonString(absl::string_view text, std::string* out) {
  out->push_back('"');
  // Runs of characters that need no escape are copied whole: flat-metric keys are all such
  // runs, millions of them for a large run.
  size_t run = 0;
  for (size_t i = 0; i < text.size(); ++i) {
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
