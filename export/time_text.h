// Instants as text, for every output of export/ (terminal and Markdown tables, the HTML report,
// plot time axes): one check of what is a plausible time, so that a corrupt or crafted saved
// time is shown as invalid ("N/A (invalid: 9223372036854775807 s)"), never as a date in year
// 292277026596. What is plausible is aggregation/plausible_time.h's rule.
//
// Thread-safety: pure functions. Cost: constant.
#ifndef ROASTCOFFEA_EXPORT_TIME_TEXT_H_
#define ROASTCOFFEA_EXPORT_TIME_TEXT_H_

#include <google/protobuf/timestamp.pb.h>

#include <cstdint>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "aggregation/plausible_time.h"

namespace roastcoffea {

// "2025-03-17 22:25:21 UTC", or "N/A (invalid: <seconds> s)" (with "+<nanos> ns" when the
// nanos are out of range) for a time PlausibleTime refuses.
std::string FormatUtcTimestamp(const google::protobuf::Timestamp& time);

// `unix_seconds` (rounded to the millisecond) in absl::FormatTime's `format`, UTC; "N/A" when
// it is not PlausibleUnixSeconds.
std::string FormatUtcSeconds(double unix_seconds, const char* format);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_TIME_TEXT_H_
