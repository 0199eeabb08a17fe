// docs/ARCHITECTURE.md's recipe "An output format", followed once: a renderer (here a test's),
// one entry in the export layer's format table, and `collect show --format=NAME` prints it; the
// error for an unknown name lists it. Nothing else in tools/ changes for a new format.
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "export/output_formats.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"
#include "tools/exit_code.h"
#include "tools/show_command.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;

// Step 1: a renderer, from the measurement to text, computing nothing.
void WriteKeyValue(const v1::Measurement& m, std::ostream& out) {
  out << absl::StrCat("name=", m.metadata().name(), "\nbackend=", m.metadata().backend(),
                      "\nelapsed_seconds=", m.metrics().workflow().elapsed_time_seconds(), "\n");
}

// What `collect show` prints to stdout, and its exit code.
std::pair<ExitCode, std::string> Show(const std::string& format, const std::string& directory) {
  std::ostringstream out;
  std::streambuf* saved = std::cout.rdbuf(out.rdbuf());
  ShowConfig config;
  config.tables = "ascii";
  config.format = format;
  const ExitCode code = ShowCommand(config, directory);
  std::cout.rdbuf(saved);
  return {code, out.str()};
}

std::string SavedMeasurement() {
  v1::Measurement m;
  m.mutable_metadata()->set_name("recipe");
  m.mutable_metadata()->set_backend("threadpool");
  m.mutable_metrics()->mutable_workflow()->set_elapsed_time_seconds(2.5);
  const char* tmp = std::getenv("TEST_TMPDIR");
  absl::StatusOr<std::string> saved = SaveMeasurement(m, tmp != nullptr ? tmp : "/tmp", "recipe");
  EXPECT_TRUE(saved.ok()) << saved.status();
  return saved.ok() ? *saved : "";
}

TEST(OutputFormatRecipeTest, ARegisteredFormatIsPrintedByCollectShow) {
  const std::string directory = SavedMeasurement();
  ASSERT_FALSE(directory.empty());
  // Before step 2 collect does not know the name.
  EXPECT_EQ(Show("key-value", directory).first, ExitCode::kUsage);

  // Step 2: one entry in the format table.
  ASSERT_TRUE(RegisterOutputFormat(OutputFormat{"key-value", {"kv"}, WriteKeyValue}).ok());

  const auto [code, printed] = Show("key-value", directory);
  EXPECT_EQ(code, ExitCode::kOk);
  EXPECT_EQ(printed, "name=recipe\nbackend=threadpool\nelapsed_seconds=2.5\n");
  EXPECT_EQ(Show("KV", directory).second, printed);  // an alias, any case
  absl::StatusOr<const OutputFormat*> unknown = FindOutputFormat("yaml");
  EXPECT_THAT(unknown.status().message(), HasSubstr("markdown or key-value, got 'yaml'"));
  // The built-in formats are untouched.
  EXPECT_THAT(Show("csv", directory).second, HasSubstr("elapsed_time_seconds"));
}

}  // namespace
}  // namespace roastcoffea
