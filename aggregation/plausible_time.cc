#include "aggregation/plausible_time.h"

#include <cmath>

namespace roastcoffea {

bool PlausibleUnixSeconds(double seconds) {
  return std::isfinite(seconds) && seconds >= 0 &&
         seconds < static_cast<double>(kLatestPlausibleUnixSeconds);
}

std::optional<absl::Time> PlausibleTime(const google::protobuf::Timestamp& time) {
  if (time.seconds() < 0 || time.seconds() >= kLatestPlausibleUnixSeconds || time.nanos() < 0 ||
      time.nanos() >= 1000000000) {
    return std::nullopt;
  }
  return absl::FromUnixSeconds(time.seconds()) + absl::Nanoseconds(time.nanos());
}

}  // namespace roastcoffea
