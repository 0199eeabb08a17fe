// The formats `collect show --format=NAME` prints a saved measurement in: one table, the flat
// metrics' csv, json and markdown first, then any format registered beside them. show looks the
// name up here, and its error for an unknown name lists the table, so a new format is a
// renderer plus one entry (docs/ARCHITECTURE.md, "An output format").
//
//   const OutputFormat* format = *FindOutputFormat("json");
//   format->write(measurement, std::cout);
//
// Thread-safety: every function may be called from any thread; a found format stays valid for
// the life of the process.
#ifndef ROASTCOFFEA_EXPORT_OUTPUT_FORMATS_H_
#define ROASTCOFFEA_EXPORT_OUTPUT_FORMATS_H_

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

struct OutputFormat {
  std::string name;                  // what --format takes, lower case
  std::vector<std::string> aliases;  // other names it takes ("md"), lower case
  // Writes the whole output for one measurement to the stream, as it goes (a million chunks'
  // keys are never held at once). A writer computes no metrics (aggregation/ does).
  std::function<void(const v1::Measurement&, std::ostream&)> write;
  // False when the writer never reads metrics.chunks.chunk_info (one entry per chunk record,
  // ~150 MB for 10^6): show then loads the measurement without it.
  bool reads_chunk_info = true;
};

// The names of the table, in order (built-in first).
std::vector<std::string> OutputFormatNames();

// Adds `format` after the others. InvalidArgument naming it when it has no name or renderer,
// or a name or alias is taken (by a format, or "table": the summary tables).
absl::Status RegisterOutputFormat(OutputFormat format);

// The format `name` names (its name or an alias, any case), or InvalidArgument listing them:
// "--format must be table, csv, json or markdown, got 'x'".
absl::StatusOr<const OutputFormat*> FindOutputFormat(absl::string_view name);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_OUTPUT_FORMATS_H_
