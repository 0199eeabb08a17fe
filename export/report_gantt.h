// The report's chunk Gantt chart (export/report_plots.h, "chunk-gantt"), internal to
// //export:report_plots: one lane per worker thread, each chunk a bar up to kMaxGanttChunks;
// above, time bins per lane, and above kMaxGanttRows lanes runs of consecutive lanes per row.
#ifndef ROASTCOFFEA_EXPORT_REPORT_GANTT_H_
#define ROASTCOFFEA_EXPORT_REPORT_GANTT_H_

#include <cstdint>
#include <string>

#include "export/report_chunks.h"
#include "export/report_plots.h"
#include "export/svg_plot.h"

namespace roastcoffea {
namespace export_internal {

// "1,234,567".
std::string ThousandsText(int64_t value);

// Fills plot->svg and plot->note with the Gantt chart of `chunks` in `frame` (its title and
// time range); leaves them empty when no chunk has times.
void BuildChunkGantt(const ReportChunks& chunks, int64_t origin_unix_ns, ChartFrame frame,
                     ReportPlot* plot);

}  // namespace export_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_REPORT_GANTT_H_
