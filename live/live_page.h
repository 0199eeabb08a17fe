// The live page at "/": one self-contained HTML page (no script, style or font from anywhere;
// it reloads itself every 2 s with a meta refresh) showing the run's progress, rates, chunk
// durations, the workers now and over time (where the backend knows them live) and the findings
// of the chunks so far, readable from 800 to 1400 px.
//
// Thread-safety: pure.
#ifndef ROASTCOFFEA_LIVE_LIVE_PAGE_H_
#define ROASTCOFFEA_LIVE_LIVE_PAGE_H_

#include <string>

#include "collector/live_status.h"

namespace roastcoffea {
namespace live {

std::string RenderLivePage(const LiveStatus& status);

}  // namespace live
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_LIVE_LIVE_PAGE_H_
