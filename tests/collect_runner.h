// Test helper: runs the real `collect` binary (a data dependency of the test) and captures its
// exit status, stdout and stderr separately.
#ifndef ROASTCOFFEA_TESTS_COLLECT_RUNNER_H_
#define ROASTCOFFEA_TESTS_COLLECT_RUNNER_H_

#include <string>
#include <vector>

namespace roastcoffea {

struct CollectOutcome {
  int exit_code = -1;  // 128 + signal when it was killed
  std::string out;
  std::string err;
};

// Runs $TEST_SRCDIR/roastcoffea/tools/collect with `arguments`, no standard input.
CollectOutcome RunCollect(const std::vector<std::string>& arguments);

// $TEST_TMPDIR.
std::string TempDir();

// The whole file, or "" when it cannot be read.
std::string ReadFile(const std::string& path);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TESTS_COLLECT_RUNNER_H_
