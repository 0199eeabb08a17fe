// The workflow report of a run that has none (in-process, TaskVine), built from its chunk
// records: what Coffea's Runner reports for a Dask run (events, bytes read, process time,
// chunks), with per-dataset counters.
#ifndef ROASTCOFFEA_AGGREGATION_REPORT_FROM_CHUNKS_H_
#define ROASTCOFFEA_AGGREGATION_REPORT_FROM_CHUNKS_H_

#include <vector>

#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// Events and bytes are left unknown (absent) when no record counts them. Events count
// successful chunks only (a failed chunk produced no output); bytes read and
// process time count every attempt, since that I/O and time were really spent; chunks counts
// every record. Datasets appear in order of first appearance. Records with an impossible value
// (ValidateChunkRecord: they end in rejected_chunks) are not counted at all.
v1::WorkflowReport BuildWorkflowReport(const std::vector<v1::ChunkRecord>& chunks);
// The same, over records already in a measurement (Measure builds it from Measurement.chunks).
v1::WorkflowReport BuildWorkflowReportOfRecords(
    const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks);
// The same, over records held as a table (MeasureRun builds it from the joined table).
v1::WorkflowReport BuildWorkflowReportOfRecords(const ChunkTable& chunks);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_REPORT_FROM_CHUNKS_H_
