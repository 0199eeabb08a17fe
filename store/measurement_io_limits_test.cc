// LoadMeasurement on measurement directories whose files are not what they claim (reliability
// study D3, D4): a clear error naming the file, never a hang, a crash or unbounded memory.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"

namespace roastcoffea {
namespace {

// A saved measurement in a fresh directory under TEST_TMPDIR for the running test.
std::string SavedMeasurement(int case_number = 0) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string parent =
      absl::StrCat(std::getenv("TEST_TMPDIR"), "/", info->name(), "-", case_number);
  EXPECT_EQ(mkdir(parent.c_str(), 0777), 0) << parent;
  v1::Measurement measurement;
  measurement.mutable_metadata()->set_name("run");
  const absl::StatusOr<std::string> saved = SaveMeasurement(measurement, parent, "run");
  EXPECT_TRUE(saved.ok()) << saved.status();
  return saved.ok() ? *saved : "";
}

void Replace(const std::string& path, const std::string& target) {
  ASSERT_EQ(unlink(path.c_str()), 0) << path;
  if (target == "fifo") {
    ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  } else if (target == "dir") {
    ASSERT_EQ(mkdir(path.c_str(), 0700), 0);
  } else {
    ASSERT_EQ(symlink(target.c_str(), path.c_str()), 0);
  }
}

TEST(LoadMeasurementLimitsTest, FormatThatIsADeviceFifoOrDirectoryIsRefused) {
  int case_number = 0;
  for (const char* target : {"/dev/zero", "fifo", "dir"}) {
    const std::string directory = SavedMeasurement(++case_number);
    Replace(directory + "/FORMAT", target);
    const absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(directory);
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kFailedPrecondition) << target;
    EXPECT_TRUE(absl::StrContains(loaded.status().message(), directory + "/FORMAT' is "))
        << loaded.status();
    EXPECT_TRUE(absl::StrContains(loaded.status().message(), "not a regular file"))
        << loaded.status();
  }
}

TEST(LoadMeasurementLimitsTest, OversizedFormatIsRefusedBeforeReading) {
  const std::string directory = SavedMeasurement();
  std::ofstream(directory + "/FORMAT", std::ios::trunc) << std::string(100000, 'x');
  const absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(directory);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(loaded.status().message(),
                                "FORMAT' is 97.7 KiB, over the 64 B limit for a FORMAT file"))
      << loaded.status();
}

TEST(LoadMeasurementLimitsTest, MeasurementFileThatIsADeviceIsRefused) {
  const std::string directory = SavedMeasurement();
  Replace(directory + "/measurement.pb", "/dev/urandom");
  const absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(directory);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(loaded.status().message(),
                                "measurement.pb' is a character device, not a regular file"))
      << loaded.status();
}

}  // namespace
}  // namespace roastcoffea
