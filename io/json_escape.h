// JSON string literals for text we write (flat JSON output, Chrome traces): the one escaper.
//
// Quotes, backslashes, control characters (U+0000-U+001F) and DEL are escaped; other bytes,
// UTF-8 sequences included, are copied as they are.
//
// Thread-safety: pure functions. Cost: linear in the text.
#ifndef ROASTCOFFEA_IO_JSON_ESCAPE_H_
#define ROASTCOFFEA_IO_JSON_ESCAPE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace roastcoffea {

// Appends `text` as a quoted JSON string to `*out`.
void AppendJsonString(absl::string_view text, std::string* out);

// `text` as a quoted JSON string: JsonQuote("a\"b") is "\"a\\\"b\"".
std::string JsonQuote(absl::string_view text);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_IO_JSON_ESCAPE_H_
