// Parser of the TaskVine / Work Queue performance log: a "# timestamp col col ..." header line,
// then one row of numbers per sample. Columns are mapped by the header (their set and order
// changed five times between 7.5 and 7.17, see docs/taskvine-logs.md §3.4), never by position.
//
// Thread-safety: a PerfHeader is immutable after Parse; ParseRow is const. Cost: one pass over
// the row, no allocation.
#ifndef ROASTCOFFEA_BACKENDS_TASKVINE_PERF_LOG_H_
#define ROASTCOFFEA_BACKENDS_TASKVINE_PERF_LOG_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace roastcoffea {
namespace taskvine {

// The columns roastcoffea uses. A column the log does not have stays NaN.
struct PerfSample {
  int64_t time_us = 0;
  double workers_connected = NAN;
  double workers_joined = NAN;
  double workers_removed = NAN;
  double workers_lost = NAN;
  double tasks_waiting = NAN;
  double tasks_on_workers = NAN;
  double tasks_running = NAN;
  double tasks_with_results = NAN;
  double tasks_submitted = NAN;
  double tasks_dispatched = NAN;
  double tasks_done = NAN;
  double time_execute_us = NAN;
  double bytes_sent = NAN;
  double bytes_received = NAN;
  double total_cores = NAN;
  double committed_cores = NAN;
};

class PerfHeader {
 public:
  // Parses the header line ("# timestamp workers_connected ..."). InvalidArgument when the line
  // is not a header or has no timestamp column first.
  static absl::StatusOr<PerfHeader> Parse(absl::string_view line);

  // True for lines that look like a header ("# timestamp ...").
  static bool IsHeader(absl::string_view line);

  int columns() const { return static_cast<int>(slots_.size()); }
  const std::vector<std::string>& names() const { return names_; }

  // Parses one data row into *sample. InvalidArgument (naming the column) when the row does not
  // have exactly columns() numbers.
  absl::Status ParseRow(absl::string_view line, PerfSample* sample) const;

 private:
  std::vector<std::string> names_;
  std::vector<double PerfSample::*> slots_;  // nullptr for columns roastcoffea ignores
};

}  // namespace taskvine
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_TASKVINE_PERF_LOG_H_
