// Test helpers: feed (optionally gzip-compressed) log files into a RunModel.
#ifndef ROASTCOFFEA_BACKENDS_TASKVINE_TEST_UTIL_H_
#define ROASTCOFFEA_BACKENDS_TASKVINE_TEST_UTIL_H_

#include <string>

#include "absl/status/status.h"
#include "backends/taskvine/run_model.h"

namespace roastcoffea {
namespace taskvine {

// Feeds every line of `path` (plain or .gz) to model as the transactions (or performance) log.
absl::Status FeedFile(const std::string& path, bool performance, RunModel* model);

// Reads a whole (plain or .gz) file.
absl::Status ReadWholeFile(const std::string& path, std::string* contents);

}  // namespace taskvine
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_TASKVINE_TEST_UTIL_H_
