#include "bench/peak_rss.h"

#include <fstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"

namespace roastcoffea {

int64_t ProcStatusBytes(absl::string_view field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    absl::string_view text(line);
    if (!absl::ConsumePrefix(&text, field) || !absl::ConsumePrefix(&text, ":")) continue;
    int64_t kib = 0;
    (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(absl::StripSuffix(text, "kB")), &kib);
    return kib * 1024;
  }
  return 0;
}

void ResetPeakRss() { std::ofstream("/proc/self/clear_refs") << "5"; }

}  // namespace roastcoffea
