// Internal to //export:compare: the text of a comparison (compare_text.cc) and the few text
// helpers compare.cc shares with it.
#ifndef ROASTCOFFEA_EXPORT_COMPARE_TEXT_H_
#define ROASTCOFFEA_EXPORT_COMPARE_TEXT_H_

#include <string>
#include <vector>

#include "export/compare.h"

namespace roastcoffea {
namespace compare_internal {

// "12", "2.41" (4 significant digits), "N/A" when not finite.
std::string Number(double value);

// 15 significant digits, as the flat formats print numbers.
std::string Exact(double value);

// `items` joined by spaces in lines of at most about 100 columns, the first starting with
// `first`, the others with `indent`; an item is never split.
std::string Wrap(const std::string& first, const std::string& indent,
                 const std::vector<std::string>& items);

// `text` split at spaces.
std::vector<std::string> Words(const std::string& text);

// The regression rule in words, with the options' threshold.
std::string NoiseRule(const ComparisonOptions& options);

// `result` in `options.format`: what ComparisonResult::text holds.
std::string ComparisonText(const ComparisonResult& result, const ComparisonOptions& options);

}  // namespace compare_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_COMPARE_TEXT_H_
