// `collect report DIR`: one self-contained HTML file (metadata, tables, SVG plots) for a saved
// measurement.
#ifndef ROASTCOFFEA_TOOLS_REPORT_COMMAND_H_
#define ROASTCOFFEA_TOOLS_REPORT_COMMAND_H_

#include <string>

#include "tools/exit_code.h"

namespace roastcoffea {

struct ReportConfig {
  // --html_output: the file to write; empty: <DIR>.html, else ./<name>.html, else
  // $TMPDIR/<name>.html (a shared measurement is often read-only).
  std::string html_output;
};

ExitCode ReportCommand(const ReportConfig& config, const std::string& directory);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_REPORT_COMMAND_H_
