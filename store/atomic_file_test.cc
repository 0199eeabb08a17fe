#include "store/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"

namespace roastcoffea {
namespace {

std::string SavedMeasurement(const std::string& name) {
  v1::Measurement measurement;
  measurement.mutable_metadata()->set_name(name);
  absl::StatusOr<std::string> saved =
      SaveMeasurement(measurement, std::string(std::getenv("TEST_TMPDIR")) + "/m", name);
  EXPECT_TRUE(saved.ok()) << saved.status();
  return saved.ok() ? *saved : "";
}

std::string Read(const std::string& path) {
  std::ostringstream out;
  out << std::ifstream(path, std::ios::binary).rdbuf();
  return out.str();
}

TEST(WriteOutputFileAtomicallyTest, NeverOverwritesAMeasurementsOwnFiles) {
  const std::string m = SavedMeasurement("own");
  const std::string pb = Read(m + "/measurement.pb");
  mkdir((m + "/workqueue").c_str(), 0777);
  { std::ofstream(m + "/kept.log") << "engine log"; }
  for (const std::string& path : {m + "/measurement.pb", m + "/measurement.json", m + "/FORMAT",
                                  m + "//./measurement.pb", m + "/kept.log", m + "/workqueue"}) {
    const absl::Status written = WriteOutputFileAtomically(path, "overwritten");
    EXPECT_EQ(written.code(), absl::StatusCode::kInvalidArgument) << path;
    EXPECT_TRUE(absl::StrContains(written.message(), "file of a saved measurement") ||
                absl::StrContains(written.message(), "inside a saved measurement directory"))
        << written;
  }
  EXPECT_EQ(Read(m + "/measurement.pb"), pb);
  EXPECT_EQ(Read(m + "/kept.log"), "engine log");
  // Through a link to the directory too.
  const std::string link = std::string(std::getenv("TEST_TMPDIR")) + "/link-to-m";
  ASSERT_EQ(symlink(m.c_str(), link.c_str()), 0);
  EXPECT_FALSE(WriteOutputFileAtomically(link + "/measurement.json", "x").ok());
  // A new file in the directory, or a file elsewhere with the same name, is an output.
  EXPECT_TRUE(WriteOutputFileAtomically(m + "/trace.json", "{}").ok());
  const std::string elsewhere = std::string(std::getenv("TEST_TMPDIR")) + "/measurement.json";
  EXPECT_TRUE(WriteOutputFileAtomically(elsewhere, "{}").ok());
  EXPECT_TRUE(LoadMeasurement(m).ok());
}

}  // namespace
}  // namespace roastcoffea
