#include "aggregation/findings_rules.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace findings_rules {
namespace {

// A name from the input never makes a finding's sentence huge (reliability study 2, N12: a 10 MB
// file name was printed whole); its start and end stay readable.
TEST(FindingsRulesTest, HugeNamesAreElidedInTheMiddle) {
  v1::ChunkRecord chunk;
  const std::string huge = "start_" + std::string(10 << 20, 'x') + "_end.root";
  chunk.set_file("root://eos//store/" + huge);
  chunk.set_entry_start(0);
  chunk.set_entry_stop(100);
  chunk.set_dataset(std::string(1 << 20, 'd'));
  chunk.set_worker("tcp://" + std::string(1 << 20, 'w'));
  const std::string described = DescribeChunk(chunk);
  EXPECT_LT(described.size(), 700u) << described.size();
  EXPECT_TRUE(absl::StartsWith(described, "start_")) << described.substr(0, 40);
  EXPECT_TRUE(absl::StrContains(described, "_end.root [0, 100)"));
  EXPECT_TRUE(absl::StrContains(described, " ... "));

  v1::ChunkRecord task;
  task.set_task_id(std::string(1 << 20, '7'));
  EXPECT_LT(ChunkName(task).size(), 200u);
}

TEST(FindingsRulesTest, OrdinaryNamesAreKeptWhole) {
  v1::ChunkRecord chunk;
  chunk.set_file("root://eospublic.cern.ch//eos/opendata/cms/Run2012B_SingleMu.root");
  chunk.set_entry_start(0);
  chunk.set_entry_stop(25000);
  chunk.set_dataset("SingleMu");
  chunk.set_worker("tcp://127.0.0.1:40000");
  EXPECT_EQ(DescribeChunk(chunk),
            "Run2012B_SingleMu.root [0, 25000) (SingleMu, on tcp://127.0.0.1:40000/thread-0)");
}

}  // namespace
}  // namespace findings_rules
}  // namespace aggregation_internal
}  // namespace roastcoffea
