// A run whose chunks failed: what collect says about them and the exit status it gives.
#ifndef ROASTCOFFEA_TOOLS_FAILED_CHUNKS_H_
#define ROASTCOFFEA_TOOLS_FAILED_CHUNKS_H_

#include <string>

#include "absl/strings/string_view.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"
#include "tools/exit_code.h"

namespace roastcoffea {

// When a chunk of the sample analysis failed on damaged data in collect's own cache
// (`cache_dir`: a file changed after it was generated, or the storage failed), the way out:
// regenerate it. Empty when that is not the cause.
std::string SampleCacheHint(const v1::ChunkRecord& failed, absl::string_view cache_dir);

// kOk when no chunk failed; else kFailure, after naming on stderr how many failed and the first
// failure (and, for the sample analysis in `sample_cache_dir`, how to mend a damaged cache).
ExitCode ReportFailedChunks(const v1::Measurement& measurement,
                            absl::string_view sample_cache_dir = "");
// The same for a run's records held as a table (MeasuredRun::chunks): only the first failed
// one is materialized.
ExitCode ReportFailedChunks(const ChunkTable& chunks, absl::string_view sample_cache_dir = "");

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_FAILED_CHUNKS_H_
