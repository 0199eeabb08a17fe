// RunModel rejects values the run's own window rules out, names their line and field, and keeps
// them out of every figure; times going backwards and an early MANAGER END are flagged.
#include <string>
#include <vector>

#include "backends/taskvine/run_model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace taskvine {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::Not;

RunModel Feed(const std::vector<std::string>& lines) {
  RunModel model;
  int64_t n = 0;
  for (const std::string& line : lines) model.ConsumeTransactionLine(line, ++n);
  return model;
}

// One task on a 2-core worker: RUNNING at 2 s, WAITING_RETRIEVAL at 5 s, RETRIEVED at 5.1 s with
// `retrieved_json`, END at `end`.
std::vector<std::string> OneTaskRun(const std::string& retrieved_json,
                                    const std::string& end = "10000000") {
  return {
      "1000000 7 MANAGER 7 START 0",
      "1500000 7 TASK 1 READY processing FIRST_RESOURCES 1 {\"cores\":[1,\"cores\"]}",
      "1600000 7 WORKER worker-a CONNECTION 127.0.0.1:9000",
      "1600001 7 WORKER worker-a RESOURCES "
      "{\"memory\":[1000,\"MB\"],\"disk\":[1000,\"MB\"],\"cores\":[2,\"cores\"]}",
      "2000000 7 TASK 1 RUNNING worker-a FIRST_RESOURCES "
      "{\"cores\":[1,\"cores\"],\"time_input_mgr\":[0.5,\"s\"]}",
      "5000000 7 TASK 1 WAITING_RETRIEVAL worker-a",
      "5100000 7 TASK 1 RETRIEVED SUCCESS 0 {} " + retrieved_json,
      "5100001 7 TASK 1 DONE SUCCESS 0",
      "9000000 7 WORKER worker-a DISCONNECTION EXPLICIT",
      end + " 7 MANAGER 7 END 0",
  };
}

std::vector<CodedNote> WithCode(const RunModel& model, const std::string& code) {
  std::vector<CodedNote> out;
  for (CodedNote& note : model.CodedWarnings()) {
    if (note.code == code) out.push_back(note);
  }
  return out;
}

TEST(ImpossibleValues, PlausibleRunHasNone) {
  const RunModel model =
      Feed(OneTaskRun("{\"time_worker_start\":[2.1,\"s\"],\"time_worker_end\":[4.9,\"s\"],\"time_"
                      "output_mgr\":[0.05,\"s\"]}"));
  EXPECT_EQ(model.rejected_count(), 0);
  EXPECT_TRUE(WithCode(model, "taskvine_impossible_value").empty());
  EXPECT_NEAR(model.Figures().execute_seconds, 2.8, 1e-9);
  EXPECT_NEAR(model.PerCategory().at("processing").output_seconds, 0.05, 1e-6);
}

// TaskVine writes an unsigned underflow (~1.8e13 s) when a task exits non-zero without its
// temporary output: the figure would read "output-transfer 5123596906h".
TEST(ImpossibleValues, UnderflowedOutputTimeIsRejected) {
  const RunModel model =
      Feed(OneTaskRun("{\"time_worker_start\":[2.1,\"s\"],\"time_worker_end\":[4.9,\"s\"],"
                      "\"time_output_mgr\":[18444948632953.14,\"s\"]}"));
  ASSERT_EQ(model.rejected_count(), 1);
  EXPECT_EQ(model.rejected()[0].line_number, 7);
  EXPECT_EQ(model.rejected()[0].field, "time_output_mgr");
  EXPECT_EQ(model.PerCategory().at("processing").output_seconds, 0);
  EXPECT_THAT(WithCode(model, "taskvine_impossible_value"),
              Contains(Field(&CodedNote::message,
                             AllOf(HasSubstr("transactions line 7 field time_output_mgr"),
                                   HasSubstr("18444948632953.14")))));
}

// The underflow is said as what it is, not as 5 x 10^9 hours: the stored microseconds and the
// negative duration they stand for (2^64 us = 18446744073709.551616 s).
TEST(ImpossibleValues, UnderflowIsSaidReadably) {
  const RunModel model =
      Feed(OneTaskRun("{\"time_worker_start\":[2.1,\"s\"],\"time_worker_end\":[4.9,\"s\"],"
                      "\"time_output_mgr\":[18444948632953.14,\"s\"]}"));
  ASSERT_EQ(model.rejected_count(), 1);
  EXPECT_THAT(model.rejected()[0].what,
              AllOf(HasSubstr("a negative duration stored as an unsigned 64-bit number: "
                              "184449486329531"),
                    HasSubstr(" us (= -1795440756.4"), HasSubstr("18444948632953.14 s as logged")));
  EXPECT_THAT(
      WithCode(model, "taskvine_impossible_value"),
      Contains(Field(&CodedNote::message,
                     HasSubstr("a negative duration stored as an unsigned 64-bit number"))));
  // The same for a CPU time that underflowed.
  const RunModel cpu =
      Feed(OneTaskRun("{\"time_worker_start\":[2.1,\"s\"],\"time_worker_end\":[4.9,\"s\"],"
                      "\"cpu_time\":[18446744073709.5,\"s\"]}"));
  ASSERT_EQ(cpu.rejected_count(), 1);
  EXPECT_EQ(cpu.rejected()[0].field, "cpu_time");
  EXPECT_THAT(cpu.rejected()[0].what,
              AllOf(HasSubstr("unsigned 64-bit number: 184467440737095"), HasSubstr("(= -0.0")));
}

// A value that is merely too long for the run stays a number of seconds.
TEST(ImpossibleValues, PlainImpossibleDurationIsNoUnderflow) {
  const RunModel model =
      Feed(OneTaskRun("{\"time_worker_start\":[2.1,\"s\"],\"time_worker_end\":[4.9,\"s\"],"
                      "\"time_output_mgr\":[5000,\"s\"]}"));
  ASSERT_EQ(model.rejected_count(), 1);
  EXPECT_THAT(model.rejected()[0].what, HasSubstr(": 5000 s, outside [0, "));
  EXPECT_THAT(model.rejected()[0].what, Not(HasSubstr("unsigned")));
}

// Worker times outside the run: execution falls back to RUNNING .. WAITING_RETRIEVAL (3 s).
TEST(ImpossibleValues, WorkerTimesOutsideTheRunAreRejected) {
  const RunModel model =
      Feed(OneTaskRun("{\"time_worker_start\":[2.1,\"s\"],\"time_worker_end\":[99999.0,\"s\"]}"));
  ASSERT_EQ(model.rejected_count(), 1);
  EXPECT_EQ(model.rejected()[0].field, "time_worker_start..time_worker_end");
  EXPECT_NEAR(model.Figures().execute_seconds, 3.0, 1e-9);
}

TEST(ImpossibleValues, NegativeAndOverlongDurationsAreRejected) {
  RunModel model = Feed(OneTaskRun("{\"time_output_mgr\":[-1,\"s\"],\"cpu_time\":[1000,\"s\"]}"));
  EXPECT_EQ(model.rejected_count(), 2);  // output time < 0; cpu > 2 cores x the run so far
  EXPECT_FALSE(model.PerCategory().at("processing").monitored);
}

// An END before records written earlier (seen: 127,780 % efficiency) cannot end the run.
TEST(ImpossibleValues, EarlyEndIsFlaggedAndTheLastRecordEndsTheRun) {
  const RunModel model = Feed(
      OneTaskRun("{\"time_worker_start\":[2.1,\"s\"],\"time_worker_end\":[4.9,\"s\"]}", "1000001"));
  const RunFigures f = model.Figures();
  EXPECT_EQ(f.end_us, 9000000);
  EXPECT_LE(f.weighted_execute_seconds, f.core_seconds_available);  // efficiency <= 1
  EXPECT_NEAR(f.core_seconds_available, 2 * 7.4, 1e-6);
  EXPECT_THAT(WithCode(model, "taskvine_early_end"),
              Contains(Field(&CodedNote::message,
                             HasSubstr("transactions line 10 field MANAGER END time"))));
  // The END record also steps back in time.
  EXPECT_EQ(model.backwards_count(), 1);
}

TEST(ImpossibleValues, TimesGoingBackwardsAreFlagged) {
  std::vector<std::string> lines = OneTaskRun("{}");
  lines.insert(lines.begin() + 6, "3000000 7 WORKER worker-a CACHE_UPDATE file-x 10 100 2900000");
  const RunModel model = Feed(lines);
  EXPECT_EQ(model.backwards_count(), 1);
  EXPECT_THAT(
      WithCode(model, "taskvine_time_backwards"),
      Contains(Field(&CodedNote::message, HasSubstr("transactions line 7 goes back 2.000000 s"))));
}

}  // namespace
}  // namespace taskvine
}  // namespace roastcoffea
