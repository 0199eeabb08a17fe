// The live view as Prometheus metrics: the text format 0.0.4, or OpenMetrics 1.0 when the
// scraper asks for it (Prometheus sends "Accept: application/openmetrics-text; ...").
//
// Names follow Prometheus conventions: the roastcoffea_ prefix, base units (seconds, bytes),
// _total for counters. Every sample carries the labels backend and run; a finding's gauge adds
// code and severity. Cardinality is bounded: no label per chunk, file, dataset or worker (the
// saved measurement has those), so a run of any size gives the same few dozen series.
//
//   roastcoffea_info{backend,run,version}            gauge, 1
//   roastcoffea_elapsed_seconds                      gauge
//   roastcoffea_run_finished, _run_interrupted       gauge, 0 or 1
//   roastcoffea_chunks_total{status="ok"|"failed"}   counter (Dask, TaskVine: the engine's
//                                                    finished processor tasks until the end)
//   roastcoffea_chunks_expected                      gauge (when the run knows its chunks)
//   roastcoffea_chunks_pending                       gauge: expected - finished (queued or running)
//   roastcoffea_events_total                         counter (successful chunks)
//   roastcoffea_read_bytes_total                     counter (compressed bytes the chunks read)
//   roastcoffea_chunk_duration_seconds               histogram (chunk wall time)
//   roastcoffea_chunk_cpu_seconds_total              counter (where chunks measure it)
//   roastcoffea_chunk_run_queue_wait_seconds_total   counter (waiting for a CPU)
//   roastcoffea_worker_threads                       gauge (in-process runs)
//   roastcoffea_process_resident_memory_bytes        gauge (this process: the analysis, in-process)
//   roastcoffea_chunks_running                       gauge (the engine's running processor tasks)
//   roastcoffea_workers, _worker_cores               gauge (workers connected now, their cores)
//   roastcoffea_worker_memory_bytes, _limit_bytes    gauge (their memory and limits, summed)
//   roastcoffea_finding{code,severity}               gauge, 1 per finding of the chunks so far
//   roastcoffea_rule_evaluated{code}                 gauge, 1 checked / 0 not evaluated yet
//
// Thread-safety: pure. Cost: linear in the findings.
#ifndef ROASTCOFFEA_LIVE_EXPOSITION_H_
#define ROASTCOFFEA_LIVE_EXPOSITION_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "collector/live_status.h"

namespace roastcoffea {
namespace live {

enum class ExpositionFormat { kPrometheusText, kOpenMetrics };

// OpenMetrics when `accept` names application/openmetrics-text, else the text format.
ExpositionFormat NegotiateFormat(absl::string_view accept);
// The Content-Type of a format.
const char* ContentType(ExpositionFormat format);

struct ExpositionExtras {
  std::string version;                           // the tool's version, for roastcoffea_info
  std::optional<int64_t> resident_memory_bytes;  // this process's RSS, when read
};

std::string FormatExposition(const LiveStatus& status, const ExpositionExtras& extras,
                             ExpositionFormat format);

}  // namespace live
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_LIVE_EXPOSITION_H_
