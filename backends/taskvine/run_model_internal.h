// Helpers shared by the files that implement RunModel (run_model*.cc); not for other users.
#ifndef ROASTCOFFEA_BACKENDS_TASKVINE_RUN_MODEL_INTERNAL_H_
#define ROASTCOFFEA_BACKENDS_TASKVINE_RUN_MODEL_INTERNAL_H_

#include <cstdint>
#include <string>

namespace roastcoffea {
namespace taskvine {
namespace internal {

// TaskVine logs sizes in MB (MiB).
inline constexpr double kBytesPerMebibyte = 1024.0 * 1024.0;

inline double Seconds(int64_t us) { return static_cast<double>(us) * 1e-6; }

// A logged duration as a warning that rejects it says it: "%.17g s", or, when it is an unsigned
// underflow, what it is. TaskVine keeps timers as unsigned 64-bit microseconds, so a negative
// difference (an end of 0 minus a start) is logged as ~1.8e13 s; that reads as "a negative
// duration stored as an unsigned 64-bit number: N us (= -S s)", not as 5 x 10^9 hours.
std::string RejectedSecondsText(double seconds);

}  // namespace internal
}  // namespace taskvine
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_TASKVINE_RUN_MODEL_INTERNAL_H_
