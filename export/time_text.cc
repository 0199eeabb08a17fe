#include "export/time_text.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace roastcoffea {

std::string FormatUtcTimestamp(const google::protobuf::Timestamp& time) {
  const std::optional<absl::Time> instant = PlausibleTime(time);
  if (!instant.has_value()) {
    return absl::StrCat("N/A (invalid: ", time.seconds(), " s",
                        time.nanos() == 0 ? "" : absl::StrCat(" +", time.nanos(), " ns"), ")");
  }
  return absl::StrCat(absl::FormatTime("%Y-%m-%d %H:%M:%S", *instant, absl::UTCTimeZone()), " UTC");
}

std::string FormatUtcSeconds(double unix_seconds, const char* format) {
  if (!PlausibleUnixSeconds(unix_seconds)) return "N/A";
  // Rounded to the millisecond: at epoch scale a double is off by ~0.1 us, and formatting
  // truncates.
  return absl::FormatTime(format, absl::FromUnixMillis(std::llround(unix_seconds * 1e3)),
                          absl::UTCTimeZone());
}

}  // namespace roastcoffea
