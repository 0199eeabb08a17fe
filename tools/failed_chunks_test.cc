#include "tools/failed_chunks.h"

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schema/chunk_table.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;

std::vector<v1::ChunkRecord> Chunks(int failed_at_or_after) {
  std::vector<v1::ChunkRecord> chunks(5);
  for (int i = 0; i < 5; ++i) {
    chunks[i].set_file("f" + std::to_string(i) + ".root");
    chunks[i].set_entry_start(10 * i);
    chunks[i].set_entry_stop(10 * i + 10);
    const bool failed = i >= failed_at_or_after;
    chunks[i].set_status(failed ? v1::CHUNK_STATUS_FAILED : v1::CHUNK_STATUS_OK);
    if (failed) chunks[i].set_error_text("ValueError " + std::to_string(i));
  }
  return chunks;
}

// What ReportFailedChunks printed on stderr, and its exit code.
template <typename Records>
std::pair<ExitCode, std::string> Reported(const Records& records) {
  std::ostringstream err;
  std::streambuf* kept = std::cerr.rdbuf(err.rdbuf());
  const ExitCode code = ReportFailedChunks(records);
  std::cerr.rdbuf(kept);
  return {code, err.str()};
}

TEST(ReportFailedChunksTest, ATableIsReportedAsItsRecordsWouldBe) {
  const std::vector<v1::ChunkRecord> records = Chunks(3);
  v1::Measurement measurement;
  for (const v1::ChunkRecord& record : records) *measurement.add_chunks() = record;
  const auto [table_code, table_text] = Reported(ChunkTableOf(records));
  EXPECT_EQ(table_code, ExitCode::kFailure);
  EXPECT_THAT(table_text, HasSubstr("2 of 5 chunks failed; first failure: f3.root entries "
                                    "[30, 40): ValueError 3"));
  const auto [code, text] = Reported(measurement);
  EXPECT_EQ(code, table_code);
  EXPECT_EQ(text, table_text);
}

TEST(ReportFailedChunksTest, NoFailedChunkIsOk) {
  const auto [code, text] = Reported(ChunkTableOf(Chunks(5)));
  EXPECT_EQ(code, ExitCode::kOk);
  EXPECT_EQ(text, "");
}

}  // namespace
}  // namespace roastcoffea
