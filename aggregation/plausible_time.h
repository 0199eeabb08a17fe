// What counts as a plausible instant in a measurement: from 1970 to the start of 2255 (the range
// README.md gives for the times of external records). A corrupt or crafted saved time outside it
// is unknown to the figures (aggregation/timeline) and shown as invalid by export/time_text,
// never as a date in year 292277026596.
//
// Thread-safety: pure functions. Cost: constant.
#ifndef ROASTCOFFEA_AGGREGATION_PLAUSIBLE_TIME_H_
#define ROASTCOFFEA_AGGREGATION_PLAUSIBLE_TIME_H_

#include <google/protobuf/timestamp.pb.h>

#include <cstdint>
#include <optional>

#include "absl/time/time.h"

namespace roastcoffea {

// 2255-01-01T00:00:00Z in seconds since the epoch.
inline constexpr int64_t kLatestPlausibleUnixSeconds = 8993721600;

// True for a finite count of seconds since the epoch in [0, kLatestPlausibleUnixSeconds).
bool PlausibleUnixSeconds(double seconds);

// The instant of `time` when its seconds are plausible and its nanos in [0, 1e9).
std::optional<absl::Time> PlausibleTime(const google::protobuf::Timestamp& time);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_PLAUSIBLE_TIME_H_
