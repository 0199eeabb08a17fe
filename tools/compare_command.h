// `collect compare A B [C ...]`: key metrics of saved runs side by side, changes against A,
// regressions marked, verdicts, and the Amdahl fit; "A1,A2" groups repeats of one configuration.
#ifndef ROASTCOFFEA_TOOLS_COMPARE_COMMAND_H_
#define ROASTCOFFEA_TOOLS_COMPARE_COMMAND_H_

#include <string>
#include <vector>

#include "tools/exit_code.h"

namespace roastcoffea {

struct CompareConfig {
  std::string tables;               // --tables: auto, unicode or ascii
  std::string format;               // --format: table, csv, json or markdown
  double regression_threshold = 0;  // --regression_threshold, percent of the baseline
  bool threshold_given = false;     // whether the user gave it (then it alone gates)
  bool fail_on_regression = false;  // --fail_on_regression: exit 5 on a regression
  std::string html_output;          // --html_output: also write the comparison as HTML
};

// `arguments`: the measurement directories as given, or "A1,A2" groups of repeats.
ExitCode CompareCommand(const CompareConfig& config, const std::vector<std::string>& arguments);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_COMPARE_COMMAND_H_
