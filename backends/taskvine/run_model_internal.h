// Helpers shared by the files that implement RunModel (run_model*.cc); not for other users.
#ifndef ROASTCOFFEA_BACKENDS_TASKVINE_RUN_MODEL_INTERNAL_H_
#define ROASTCOFFEA_BACKENDS_TASKVINE_RUN_MODEL_INTERNAL_H_

#include <cstdint>

namespace roastcoffea {
namespace taskvine {
namespace internal {

// TaskVine logs sizes in MB (MiB).
inline constexpr double kBytesPerMebibyte = 1024.0 * 1024.0;

inline double Seconds(int64_t us) { return static_cast<double>(us) * 1e-6; }

}  // namespace internal
}  // namespace taskvine
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_TASKVINE_RUN_MODEL_INTERNAL_H_
