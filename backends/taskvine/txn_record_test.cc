#include "backends/taskvine/txn_record.h"

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace taskvine {
namespace {

using ::testing::HasSubstr;

TxnRecord Parse(absl::string_view line) {
  TxnRecord r;
  absl::Status status = ParseTransactionLine(line, &r);
  EXPECT_TRUE(status.ok()) << line << ": " << status;
  return r;
}

std::string Error(absl::string_view line) {
  TxnRecord r;
  absl::Status status = ParseTransactionLine(line, &r);
  EXPECT_FALSE(status.ok()) << line;
  return std::string(status.message());
}

TEST(TxnRecord, CommentsAndBlankLines) {
  EXPECT_EQ(Parse("# time manager_pid MANAGER manager_pid START|END time_from_origin").kind,
            TxnKind::kBlankOrComment);
  EXPECT_EQ(Parse("").kind, TxnKind::kBlankOrComment);
  EXPECT_EQ(Parse("   \r").kind, TxnKind::kBlankOrComment);
}

TEST(TxnRecord, ManagerStartAndEndInEveryVersion) {
  TxnRecord r = Parse("1763035200000000 48213 MANAGER 48213 START 0");
  EXPECT_EQ(r.kind, TxnKind::kManagerStart);
  EXPECT_EQ(r.time_us, 1763035200000000);
  EXPECT_EQ(r.manager_pid, 48213);
  EXPECT_EQ(Parse("1763035260980194 48213 MANAGER 48213 END 60983299").kind, TxnKind::kManagerEnd);
  EXPECT_EQ(Parse("1676577218559820 372101 MANAGER START").kind, TxnKind::kManagerStart);  // WQ
  EXPECT_EQ(Parse("1676578628417310 372101 MANAGER END").kind, TxnKind::kManagerEnd);
  EXPECT_EQ(Parse("1676577218559820 372101 MANAGER 372101 START").kind,
            TxnKind::kManagerStart);  // 7.5.0
  EXPECT_THAT(Error("1 2 MANAGER 2 PAUSE"), HasSubstr("neither START nor END"));
}

TEST(TxnRecord, TaskVineWorkerRecords) {
  TxnRecord r = Parse("1763035204012388 48213 WORKER worker-7c2e CONNECTION 10.32.85.17:40112");
  EXPECT_EQ(r.kind, TxnKind::kWorkerConnection);
  EXPECT_EQ(r.worker, "worker-7c2e");
  EXPECT_EQ(r.address, "10.32.85.17:40112");
  r = Parse("1742250392256169 318561 WORKER (null) DISCONNECTION FAILURE");
  EXPECT_EQ(r.kind, TxnKind::kWorkerDisconnection);
  EXPECT_EQ(r.worker, "(null)");
  EXPECT_EQ(r.word, "FAILURE");
  r = Parse(
      "1 2 WORKER w RESOURCES "
      "{\"memory\":[8192,\"MB\"],\"disk\":[20000,\"MB\"],\"cores\":[4,\"cores\"]}");
  EXPECT_EQ(r.kind, TxnKind::kWorkerResources);
  EXPECT_EQ(r.json.front(), '{');
  r = Parse(
      "1763035205733290 48213 WORKER w TRANSFER INPUT file-meta-1 212860928 1720441 "
      "1763035204012836");
  EXPECT_EQ(r.kind, TxnKind::kWorkerTransfer);
  EXPECT_EQ(r.word, "INPUT");
  EXPECT_EQ(r.file, "file-meta-1");
  EXPECT_EQ(r.bytes, 212860928);
  EXPECT_DOUBLE_EQ(r.wall_seconds, 1.720441);
  EXPECT_EQ(r.start_us, 1763035204012836);
  r = Parse("1 2 WORKER w CACHE_UPDATE temp-rnd-x 3584 2426125 1763035211944535");
  EXPECT_EQ(r.kind, TxnKind::kWorkerCacheUpdate);
  EXPECT_EQ(r.bytes, 3584);
  // 7.5.0: size in MB and wall time in seconds, no start.
  r = Parse("1 2 WORKER w TRANSFER OUTPUT outfile 1.5 0.25");
  EXPECT_EQ(r.bytes, 1.5 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(r.wall_seconds, 0.25);
  EXPECT_EQ(r.start_us, 0);
  EXPECT_THAT(Error("1 2 WORKER w TRANSFER SIDEWAYS f 1 2 3"), HasSubstr("INPUT/OUTPUT"));
  EXPECT_THAT(Error("1 2 WORKER w TRANSFER INPUT f 1 2 3 4"), HasSubstr("expected 2 or 3"));
  EXPECT_THAT(Error("1 2 WORKER w TRANSFER INPUT f x 2 3"), HasSubstr("not a number"));
  EXPECT_THAT(Error("1 2 WORKER w JUMPS"), HasSubstr("unknown WORKER record"));
  EXPECT_THAT(Error("1 2 WORKER w RESOURCES nope"), HasSubstr("JSON"));
}

TEST(TxnRecord, WorkQueueRecords) {
  TxnRecord r = Parse("1676577506 372101 WORKER worker-e22c 10.32.78.147:37038  CONNECTION");
  EXPECT_EQ(r.kind, TxnKind::kWorkerConnection);
  EXPECT_EQ(r.worker, "worker-e22c");
  EXPECT_EQ(r.address, "10.32.78.147:37038");
  r = Parse(
      "1676578628412336 372101 WORKER worker-e22c 10.32.78.147:37038  DISCONNECTION EXPLICIT");
  EXPECT_EQ(r.kind, TxnKind::kWorkerDisconnection);
  EXPECT_EQ(r.word, "EXPLICIT");
  r = Parse("1676577219016047 372101 TASK 1 WAITING evaluate_mpnn FIRST_RESOURCES {}");
  EXPECT_EQ(r.kind, TxnKind::kTaskReady);
  EXPECT_EQ(r.attempt, 0);
  EXPECT_EQ(r.category, "evaluate_mpnn");
  EXPECT_EQ(r.json, "{}");
  r = Parse(
      "1676577519850797 372101 TRANSFER INPUT 100 1 0.007362 0.002679 exec_parsl_function.py");
  EXPECT_EQ(r.kind, TxnKind::kWorkerTransfer);
  EXPECT_EQ(r.task_id, 100);
  EXPECT_TRUE(r.worker.empty());
  EXPECT_DOUBLE_EQ(r.bytes, 0.007362 * 1024 * 1024);
  EXPECT_EQ(r.file, "exec_parsl_function.py");
  r = Parse(
      "1676577651012629 372101 TASK 14 DONE SUCCESS  0  {} {\"wq_output_time\":[0.028553,\"s\"]}");
  EXPECT_EQ(r.kind, TxnKind::kTaskDone);
  EXPECT_EQ(r.json2, "{\"wq_output_time\":[0.028553,\"s\"]}");
  EXPECT_THAT(Error("1 2 TRANSFER INPUT 100 1 0.1 0.2"), HasSubstr("9 fields"));
}

TEST(TxnRecord, TaskLifeCycleWithDoubleAndTrailingSpaces) {
  TxnRecord r = Parse("1 2 TASK 1 READY preprocessing FIRST_RESOURCES 1 {\"cores\":[1,\"cores\"]}");
  EXPECT_EQ(r.kind, TxnKind::kTaskReady);
  EXPECT_EQ(r.task_id, 1);
  EXPECT_EQ(r.attempt, 1);
  EXPECT_FALSE(r.max_resources);
  r = Parse("1 2 TASK 7 READY processing MAX_RESOURCES 2 {}");
  EXPECT_TRUE(r.max_resources);
  EXPECT_EQ(r.attempt, 2);
  r = Parse("1 2 TASK 3 READY my category with spaces FIRST_RESOURCES 1 {}");
  EXPECT_EQ(r.category, "my category with spaces");
  r = Parse("1 2 TASK 1 RUNNING worker-7c  FIRST_RESOURCES {\"cores\":[1,\"cores\"]}");
  EXPECT_EQ(r.kind, TxnKind::kTaskRunning);
  EXPECT_EQ(r.worker, "worker-7c");
  r = Parse("1 2 TASK 1 WAITING_RETRIEVAL worker-7c ");
  EXPECT_EQ(r.kind, TxnKind::kTaskWaitingRetrieval);
  EXPECT_EQ(r.worker, "worker-7c");
  r = Parse(
      "1 2 TASK 1 RETRIEVED SUCCESS  0  {} {\"time_worker_start\":[1763035211.944535,\"s\"]}");
  EXPECT_EQ(r.kind, TxnKind::kTaskRetrieved);
  EXPECT_EQ(r.word, "SUCCESS");
  EXPECT_EQ(r.json, "{}");
  r = Parse("1 2 TASK 5 DONE SUCCESS  1 \r");
  EXPECT_EQ(r.kind, TxnKind::kTaskDone);
  EXPECT_EQ(r.exit_code, 1);
  r = Parse("1 2 TASK 18 RETRIEVED UNKNOWN  -1  {} {}");
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_EQ(Parse("1 2 TASK 4 CANCELED").kind, TxnKind::kTaskOtherState);
  EXPECT_THAT(Error("1 2 TASK 1 READY c 1 {}"), HasSubstr("FIRST_RESOURCES"));
  EXPECT_THAT(Error("1 2 TASK 1 READY c FIRST_RESOURCES x {}"), HasSubstr("attempt"));
  EXPECT_THAT(Error("1 2 TASK 1 DONE SUCCESS zero"), HasSubstr("exit code"));
  EXPECT_THAT(Error("1 2 TASK 1 RUNN"), HasSubstr("unknown TASK state"));
  EXPECT_THAT(Error("1 2 TASK one DONE SUCCESS 0"), HasSubstr("TASK id"));
  EXPECT_THAT(Error("1 2 TASK 1 RETRIEVED SUCCESS 0 {} {} extra"), HasSubstr("after its JSON"));
}

TEST(TxnRecord, LibraryCategoryApplicationAndBadLines) {
  TxnRecord r = Parse("1742250364602214 318561 LIBRARY 1501 SENT worker-21fe");
  EXPECT_EQ(r.kind, TxnKind::kLibrary);
  EXPECT_EQ(r.task_id, 1501);
  EXPECT_EQ(r.word, "SENT");
  EXPECT_EQ(r.worker, "worker-21fe");
  r = Parse("1 2 CATEGORY processing FIRST FIXED {}");
  EXPECT_EQ(r.kind, TxnKind::kCategory);
  EXPECT_EQ(r.category, "processing");
  r = Parse("1 2 APPLICATION chunk 5 of dataset A started");
  EXPECT_EQ(r.kind, TxnKind::kApplication);
  EXPECT_EQ(r.file, "chunk 5 of dataset A started");
  EXPECT_THAT(Error("garbage"), HasSubstr("fewer than 3"));
  EXPECT_THAT(Error("12x 2 TASK 1 DONE SUCCESS 0"), HasSubstr("time"));
  EXPECT_THAT(Error("-5 2 TASK 1 DONE SUCCESS 0"), HasSubstr("time"));
  EXPECT_THAT(Error("1 pid TASK 1 DONE SUCCESS 0"), HasSubstr("pid"));
  EXPECT_THAT(Error("1 2 ROBOT 1"), HasSubstr("unknown subject"));
  EXPECT_THAT(Error("99999999999999999999 2 TASK 1 DONE SUCCESS 0"), HasSubstr("time"));
  EXPECT_THAT(Error("1 2 TASK 1 READY c FIRST_RESOURCES 1 {} a b c d e f g h i j"),
              HasSubstr("too many"));
}

TEST(TxnRecord, ResourceJson) {
  std::vector<std::pair<std::string, double>> seen;
  auto collect = [&](absl::string_view key, double value) {
    seen.emplace_back(std::string(key), value);
  };
  ASSERT_TRUE(ForEachJsonNumber("{}", collect).ok());
  EXPECT_TRUE(seen.empty());
  ASSERT_TRUE(
      ForEachJsonNumber(
          "{\"memory\":[2048,\"MB\"],\"size_output_mgr\":[4.482269287109375e-05,\"MB\"]}", collect)
          .ok());
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].first, "memory");
  EXPECT_EQ(seen[0].second, 2048);
  EXPECT_DOUBLE_EQ(seen[1].second, 4.482269287109375e-05);
  for (absl::string_view bad :
       {"", "{", "[]", "{\"a\"}", "{\"a\":[1]}", "{\"a\":[x,\"s\"]}", "{\"a\":[1,\"s\"]",
        "{\"a\":[1,\"s\"];\"b\":[2,\"s\"]}", "{\"a\":[1,\"s]}", "{a:[1,\"s\"]}"}) {
    EXPECT_FALSE(ForEachJsonNumber(bad, collect).ok()) << bad;
  }
}

// Fields end at the first space wherever it falls in the 16-byte blocks the tokenizer scans,
// and a tab inside a field keeps it one (malformed) field.
TEST(TxnRecord, FieldsOfEveryLengthAroundTheScanBlocks) {
  for (int length = 1; length <= 70; ++length) {
    const std::string worker = "worker-" + std::string(length, 'a');
    const std::string line =
        absl::StrCat("1742250331470000 4242 TASK 17 WAITING_RETRIEVAL ", worker);
    TxnRecord r = Parse(line);
    EXPECT_EQ(r.kind, TxnKind::kTaskWaitingRetrieval) << line;
    EXPECT_EQ(r.worker, worker);
    const std::string category(length, 'c');
    const std::string ready = absl::StrCat("1742250331470000 4242 TASK 18 READY ", category,
                                           "   FIRST_RESOURCES  3 {\"cores\":[1,\"cores\"]}");
    r = Parse(ready);  // views into `ready`
    EXPECT_EQ(r.category, category);
    EXPECT_EQ(r.attempt, 3);
    EXPECT_EQ(r.json, "{\"cores\":[1,\"cores\"]}");
  }
  EXPECT_THAT(Error("1742250331470000 4242 TASK\t17 WAITING_RETRIEVAL worker-1"),
              HasSubstr("unknown subject 'TASK\t17'"));
  // A space then a tab separate fields; a tab alone does not.
  EXPECT_EQ(Parse("1742250331470000 4242 TASK 17 WAITING_RETRIEVAL \tworker-1").worker, "worker-1");
  EXPECT_EQ(Parse("1742250331470000 4242 TASK 17 WAITING_RETRIEVAL w\tx").worker, "w\tx");
}

// A parsed record carries nothing over from the record it overwrites.
TEST(TxnRecord, EachParseStartsFromAnEmptyRecord) {
  TxnRecord r;
  ASSERT_TRUE(
      ParseTransactionLine(
          "1742250331480000 4242 TASK 1 RETRIEVED SUCCESS 0 {} {\"cpu_time\":[0.44,\"s\"]}", &r)
          .ok());
  ASSERT_TRUE(ParseTransactionLine("1742250331481000 4242 TASK 1 DONE SUCCESS 0", &r).ok());
  EXPECT_EQ(r.kind, TxnKind::kTaskDone);
  EXPECT_TRUE(r.json.empty());
  EXPECT_TRUE(r.json2.empty());
}

// Plain decimals take a fast path; it must give the very double SimpleAtod gives (the saved
// measurement must not change by a bit), and leave everything else to SimpleAtod.
TEST(TxnRecord, NumbersMatchSimpleAtodBitForBit) {
  auto same_as_atod = [](const std::string& text) {
    double fast = 0, reference = 0;
    const bool parsed = ParseJsonNumber(text, &fast);
    const bool atod = absl::SimpleAtod(text, &reference) && std::isfinite(reference) &&
                      std::fabs(reference) <= 1e30;
    EXPECT_EQ(parsed, atod) << text;
    if (parsed && atod) {
      EXPECT_EQ(std::memcmp(&fast, &reference, sizeof fast), 0)
          << text << ": " << fast << " vs " << reference;
    }
  };
  for (const char* text : {"0.1",
                           "0.46",
                           "-0.0",
                           "1742250331.005000",
                           "1742250331.465000",
                           "9007199254740.993",
                           "9007199254740.992",
                           "900719925474099.3",
                           "99999999999999999.9",
                           "0.000000000000000001",
                           "123456789012345678.5",
                           "1.",
                           ".5",
                           "-",
                           "-.5",
                           "1e3",
                           "+1.5",
                           "1.2.3",
                           "0x10",
                           "1 ",
                           "00012.50",
                           "4503599627370495.5",
                           "1.7976931348623157"}) {
    same_as_atod(text);
  }
  std::mt19937_64 random(25);
  for (int i = 0; i < 200000; ++i) {
    const int integer_digits = static_cast<int>(random() % 12);
    const int fraction_digits = 1 + static_cast<int>(random() % 10);
    std::string text = (random() % 4 == 0) ? "-" : "";
    text += std::to_string(random() % 1000000000000ULL).substr(0, integer_digits + 1);
    text += ".";
    for (int d = 0; d < fraction_digits; ++d) text += static_cast<char>('0' + random() % 10);
    same_as_atod(text);
  }
}

// Fields are found 64 bytes at a time from masks of the spaces: fields and runs of spaces that
// straddle those blocks, at every offset, give the same record.
TEST(TxnRecord, FieldsAndSpacesAcrossThe64ByteBlocks) {
  const std::string json2 =
      "{\"time_worker_start\":[1742250331.005000,\"s\"],\"cpu_time\":[0.44,\"s\"]}";
  for (int shift = 0; shift < 140; ++shift) {
    const std::string gap(1 + shift % 3, ' ');
    const std::string line = absl::StrCat(std::string(shift, ' '), "1742250331480000", gap, "4242",
                                          gap, "TASK", gap, "123456", gap, "RETRIEVED", gap,
                                          "SUCCESS", gap, "-7", gap, "{}", gap, json2, gap);
    TxnRecord r = Parse(line);
    EXPECT_EQ(r.kind, TxnKind::kTaskRetrieved) << line;
    EXPECT_EQ(r.time_us, 1742250331480000);
    EXPECT_EQ(r.manager_pid, 4242);
    EXPECT_EQ(r.task_id, 123456);
    EXPECT_EQ(r.word, "SUCCESS");
    EXPECT_EQ(r.exit_code, -7);
    EXPECT_EQ(r.json, "{}");
    EXPECT_EQ(r.json2, json2);
    // A tab after a space still separates (the byte loop reads lines holding a tab).
    const std::string tabbed = absl::StrCat(line.substr(0, line.size() - gap.size()), " \t{}");
    EXPECT_THAT(Error(tabbed), HasSubstr("text after its JSON objects")) << tabbed;
  }
  // 16 fields are read; a 17th is too many, wherever it starts.
  for (int shift = 0; shift < 70; ++shift) {
    std::string category = "c";
    for (int i = 6; i < 14; ++i) absl::StrAppend(&category, " c");
    const std::string line =
        absl::StrCat(std::string(shift, ' '), "1 2 TASK 3 READY ", category, " FIRST_RESOURCES {}");
    TxnRecord r = Parse(line);
    EXPECT_EQ(r.kind, TxnKind::kTaskReady) << line;
    EXPECT_EQ(r.category, category);
    EXPECT_EQ(Parse(line + "   ").category, category);
    EXPECT_THAT(Error(absl::StrCat(std::string(shift, ' '), "1 2 TASK 3 READY c ", category,
                                   " FIRST_RESOURCES {}")),
                HasSubstr("too many fields"));
  }
}

// Integers are read 8 digits at a time: every length and every non-digit at every position.
TEST(TxnRecord, IntegersOfEveryLengthAndEveryBadByte) {
  std::mt19937_64 random(25);
  for (int digits = 1; digits <= 19; ++digits) {
    for (int trial = 0; trial < 200; ++trial) {
      std::string text;
      for (int d = 0; d < digits; ++d) text += static_cast<char>('0' + random() % 10);
      if (trial % 2 == 1) text = "-" + text;
      int64_t expected = 0;
      const bool fits = absl::SimpleAtoi(text, &expected);
      double value = 0;
      if (fits) {
        ASSERT_TRUE(ParseJsonNumber(text, &value)) << text;
        EXPECT_EQ(value, static_cast<double>(expected)) << text;
        if (digits <= 18 && text[0] != '-') {
          EXPECT_EQ(Parse(absl::StrCat("1 2 TASK ", text, " DONE SUCCESS 0")).task_id, expected);
        }
      }
    }
  }
  const std::string time = "1742250331480000";
  EXPECT_EQ(Parse(time + " 4242 TASK 1 DONE SUCCESS 0").time_us, 1742250331480000);
  for (size_t at = 0; at < time.size(); ++at) {
    for (char bad : {'/', ':', 'a', static_cast<char>(0xB0), '\0', '.'}) {
      std::string line = time + " 4242 TASK 1 DONE SUCCESS 0";
      line[at] = bad;
      TxnRecord r;
      EXPECT_FALSE(ParseTransactionLine(line, &r).ok()) << line;
    }
  }
}

// The same record, field for field (views must point at the same bytes of the line).
void ExpectSameRecord(const TxnRecord& a, const TxnRecord& b, absl::string_view line) {
  auto same_view = [](absl::string_view x, absl::string_view y) {
    return x.size() == y.size() && (x.empty() || x.data() == y.data());
  };
  EXPECT_TRUE(a.kind == b.kind && a.time_us == b.time_us && a.manager_pid == b.manager_pid &&
              a.task_id == b.task_id && a.attempt == b.attempt && a.exit_code == b.exit_code &&
              a.max_resources == b.max_resources && a.start_us == b.start_us &&
              std::memcmp(&a.bytes, &b.bytes, sizeof a.bytes) == 0 &&
              std::memcmp(&a.wall_seconds, &b.wall_seconds, sizeof a.wall_seconds) == 0 &&
              same_view(a.worker, b.worker) && same_view(a.address, b.address) &&
              same_view(a.category, b.category) && same_view(a.word, b.word) &&
              same_view(a.file, b.file) && same_view(a.json, b.json) && same_view(a.json2, b.json2))
      << line;
}

// Random lines of log-like fields, spaces and tabs: the 64-byte mask scan gives the record (or
// the error) of the byte-at-a-time reference.
TEST(TxnRecord, MaskScanMatchesTheByteLoop) {
  const std::vector<std::string> words = {
      "1742250331480000",
      "4242",
      "TASK",
      "WORKER",
      "MANAGER",
      "LIBRARY",
      "CATEGORY",
      "TRANSFER",
      "APPLICATION",
      "READY",
      "RUNNING",
      "WAITING_RETRIEVAL",
      "RETRIEVED",
      "DONE",
      "SUCCESS",
      "0",
      "-3",
      "17",
      "FIRST_RESOURCES",
      "MAX_RESOURCES",
      "INPUT",
      "OUTPUT",
      "CONNECTION",
      "DISCONNECTION",
      "RESOURCES",
      "CACHE_UPDATE",
      "START",
      "END",
      "{}",
      "worker-00000000000000000000000000000007",
      "10.0.0.7:9007",
      "x\ty",
      "#",
      "{\"cores\":[1,\"cores\"],\"memory\":[8000,\"MB\"]}",
      "{\"time_worker_start\":[1742250331.005000,\"s\"],\"time_worker_end\":[1742250331.465000,"
      "\"s\"],\"cpu_time\":[0.44,\"s\"]}"};
  const std::vector<std::string> gaps = {" ", " ", " ", "  ", "   ", " \t", "\t", "\r"};
  std::mt19937_64 random(25);
  for (int i = 0; i < 200000; ++i) {
    std::string line = random() % 8 == 0 ? gaps[random() % gaps.size()] : "";
    // Mostly well-formed starts, so that the lines reach the records' own parsers.
    if (random() % 4 != 0) line += "1742250331480000 4242 TASK 12 ";
    const int fields = static_cast<int>(random() % 20);
    for (int f = 0; f < fields; ++f) {
      line += words[random() % words.size()];
      line += gaps[random() % gaps.size()];
    }
    if (random() % 2 == 0 && !line.empty()) line.pop_back();
    TxnRecord by_masks, by_bytes;
    const absl::Status masks_status = ParseTransactionLine(line, &by_masks);
    const absl::Status bytes_status = internal::ParseTransactionLineByBytes(line, &by_bytes);
    ASSERT_EQ(masks_status, bytes_status) << line;
    ExpectSameRecord(by_masks, by_bytes, line);
  }
}

}  // namespace
}  // namespace taskvine
}  // namespace roastcoffea
