#include "export/output_formats.h"

#include <sstream>
#include <string>

#include "export/flat_formats.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

v1::Measurement Sample() {
  v1::Measurement m;
  m.mutable_metadata()->set_name("sample");
  m.mutable_metrics()->mutable_workflow()->set_elapsed_time_seconds(12.5);
  return m;
}

TEST(OutputFormatsTest, TheBuiltInFormatsAreTheFlatMetrics) {
  EXPECT_THAT(OutputFormatNames(), ElementsAre("csv", "json", "markdown"));
  const v1::Measurement m = Sample();
  for (const auto& [name, flat] :
       {std::make_pair("csv", FlatFormat::kCsv), std::make_pair("JSON", FlatFormat::kJson),
        std::make_pair("md", FlatFormat::kMarkdown)}) {
    absl::StatusOr<const OutputFormat*> format = FindOutputFormat(name);
    ASSERT_TRUE(format.ok()) << format.status();
    std::ostringstream written;
    (*format)->write(m, written);
    EXPECT_EQ(written.str(), FormatFlatMetrics(m, flat)) << name;
  }
}

TEST(OutputFormatsTest, AnUnknownNameIsAnErrorListingTheTable) {
  absl::StatusOr<const OutputFormat*> format = FindOutputFormat("yaml");
  ASSERT_TRUE(absl::IsInvalidArgument(format.status()));
  EXPECT_EQ(format.status().message(), "--format must be table, csv, json or markdown, got 'yaml'");
}

TEST(OutputFormatsTest, RegisteringRefusesTakenNamesAndEmptyEntries) {
  auto render = [](const v1::Measurement&, std::ostream& out) { out << "x"; };
  for (const char* taken : {"csv", "md", "table"}) {
    absl::Status status = RegisterOutputFormat(OutputFormat{taken, {}, render});
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << taken;
    EXPECT_THAT(status.message(), HasSubstr(taken));
  }
  EXPECT_TRUE(absl::IsInvalidArgument(RegisterOutputFormat(OutputFormat{"Upper", {}, render})));
  EXPECT_TRUE(absl::IsInvalidArgument(RegisterOutputFormat(OutputFormat{"", {}, render})));
  EXPECT_TRUE(absl::IsInvalidArgument(RegisterOutputFormat(OutputFormat{"none", {}, nullptr})));
  EXPECT_THAT(OutputFormatNames(), ElementsAre("csv", "json", "markdown"));
}

}  // namespace
}  // namespace roastcoffea
