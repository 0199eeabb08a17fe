// Peak resident memory of the benchmark process, per measured step: ResetPeakRss() before the
// step, then ProcStatusBytes("VmHWM") - ProcStatusBytes("VmRSS") taken before it is what the step
// added at its peak. Linux only (/proc/self/status, /proc/self/clear_refs, kernel >= 4.0).
#ifndef ROASTCOFFEA_BENCH_PEAK_RSS_H_
#define ROASTCOFFEA_BENCH_PEAK_RSS_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace roastcoffea {

// A "kB" field of /proc/self/status ("VmRSS", "VmHWM") in bytes; 0 when absent.
int64_t ProcStatusBytes(absl::string_view field);

// Restarts the kernel's peak-RSS mark (VmHWM) at the current RSS.
void ResetPeakRss();

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BENCH_PEAK_RSS_H_
