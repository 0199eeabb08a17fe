// End to end: `collect profile DIR` of the real binary on saved measurements with hand-built
// profiles (two Dask-like workers), and on one without profiles.
#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"
#include "tests/collect_runner.h"

namespace roastcoffea {
namespace {

// node i+1: parent parents[i], function names[i], inclusive count counts[i].
v1::Profile ProfileOf(const std::string& worker, const std::vector<int>& parents,
                      const std::vector<std::string>& names, const std::vector<int64_t>& counts) {
  v1::Profile profile;
  profile.set_source("dask");
  profile.set_worker(worker);
  profile.set_worker_name(absl::StrCat("name-", std::string(1, worker.back())));
  profile.set_host("127.0.0.1");
  profile.set_threads(2);
  profile.set_memory_limit_bytes(int64_t{4} << 30);
  profile.set_sampling_interval_seconds(0.01);
  profile.add_nodes()->set_parent(-1);
  profile.mutable_nodes(0)->set_frame(-1);
  for (size_t i = 0; i < parents.size(); ++i) {
    v1::ProfileFrame* frame = profile.add_frames();
    frame->set_function(names[i]);
    frame->set_file("analysis.py");
    frame->set_line_number(static_cast<int64_t>(10 * (i + 1)));
    v1::ProfileNode* node = profile.add_nodes();
    node->set_parent(parents[i]);
    node->set_frame(static_cast<int>(i));
    node->set_count(counts[i]);
  }
  return profile;
}

std::string SaveWithProfiles(const std::string& name, bool profiles) {
  v1::Measurement run;
  run.mutable_metadata()->set_name(name);
  run.mutable_metadata()->set_backend("dask");
  if (profiles) {
    // w1: process(10) -> read(6) -> decompress(2); process -> fill<&>(3).
    *run.add_profiles() = ProfileOf("tcp://127.0.0.1:40001", {0, 1, 2, 1},
                                    {"process", "read", "decompress", "fill<&>"}, {10, 6, 2, 3});
    // w2: process(10) -> read(10).
    *run.add_profiles() = ProfileOf("tcp://127.0.0.1:40002", {0, 1}, {"process", "read"}, {10, 10});
  }
  const std::string parent = TempDir() + "/profile-runs";
  absl::StatusOr<std::string> saved = SaveMeasurement(run, parent, name);
  EXPECT_TRUE(saved.ok()) << saved.status();
  return parent + "/" + name;
}

bool Exists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

TEST(CollectProfileTest, TablesFoldedStacksAndFlameGraphs) {
  const std::string dir = SaveWithProfiles("with-profiles", true);
  const CollectOutcome outcome = RunCollect({"profile", dir, "--tables=ascii"});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err << outcome.out;
  const std::string& out = outcome.out;
  EXPECT_TRUE(absl::StrContains(
      out,
      "Worker tcp://127.0.0.1:40001 (name name-1) on 127.0.0.1: source dask; wall-clock "
      "samples (include sleep and waits); 2 threads; "
      "memory limit 4.00 GiB; sampling interval 10 ms; 10 samples = 0.100 s"))
      << out;
  EXPECT_TRUE(absl::StrContains(out, "Top Stacks: tcp://127.0.0.1:40001")) << out;
  EXPECT_TRUE(absl::StrContains(out, "Top Stacks: tcp://127.0.0.1:40002")) << out;
  EXPECT_TRUE(absl::StrContains(out, "Top Stacks (all workers)")) << out;
  EXPECT_TRUE(absl::StrContains(out, "| Rank | Samples | Seconds | Percent | Innermost Frame"))
      << out;
  // Merged: process;read ends 4 + 10 = 14 of 20 samples.
  EXPECT_TRUE(
      absl::StrContains(out, "|    1 |      14 |   0.140 |   70.0% | read (analysis.py:20)"))
      << out;
  EXPECT_FALSE(absl::StrContains(out, "\u2502"));  // ASCII as asked

  const std::vector<std::string> files = {
      "profile.folded",
      "flamegraph.svg",
      "profile.tcp-127.0.0.1-40001.folded",
      "flamegraph.tcp-127.0.0.1-40001.svg",
      "profile.tcp-127.0.0.1-40002.folded",
      "flamegraph.tcp-127.0.0.1-40002.svg",
  };
  // By default in DIR/profile, next to the measurement's own files.
  const std::string exports = dir + "/profile";
  for (const std::string& file : files) {
    EXPECT_TRUE(Exists(exports + "/" + file)) << file;
    EXPECT_TRUE(absl::StrContains(out, "  " + exports + "/" + file + "\n")) << file << "\n" << out;
  }
  EXPECT_TRUE(absl::StrContains(out, "Top Functions: tcp://127.0.0.1:40001")) << out;
  EXPECT_EQ(ReadFile(exports + "/profile.tcp-127.0.0.1-40002.folded"),
            "process (analysis.py:10);read (analysis.py:20) 10\n");
  const std::string merged = ReadFile(exports + "/profile.folded");
  EXPECT_TRUE(absl::StrContains(merged, "process (analysis.py:10);read (analysis.py:20) 14\n"))
      << merged;
  EXPECT_TRUE(absl::StrContains(
      merged, "process (analysis.py:10);read (analysis.py:20);decompress (analysis.py:30) 2\n"))
      << merged;
  const std::string svg = ReadFile(exports + "/flamegraph.svg");
  EXPECT_TRUE(absl::StartsWith(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\"")) << svg;
  EXPECT_TRUE(absl::StrContains(svg, "<title>all \u2014 20 samples (100.00 %, 0.200 s)</title>"));
  EXPECT_TRUE(absl::StrContains(svg, "fill&lt;&amp;&gt; (analysis.py:40)")) << svg;
  EXPECT_TRUE(absl::StrContains(svg, "<script"));

  // --output elsewhere, --top limits the rows.
  const std::string elsewhere = TempDir() + "/flames";
  const CollectOutcome top1 =
      RunCollect({"profile", dir, "--tables=ascii", "--top=1", "--output=" + elsewhere});
  ASSERT_EQ(top1.exit_code, 0) << top1.err;
  EXPECT_TRUE(Exists(elsewhere + "/flamegraph.svg"));
  EXPECT_TRUE(absl::StrContains(top1.out, "written to " + elsewhere)) << top1.out;
  EXPECT_FALSE(absl::StrContains(top1.out, "|    2 |")) << top1.out;

  // DIR/profile cannot be created (here a file stands in its way, as a read-only shared
  // measurement would refuse it): the files go to a writable place, and collect says so.
  const std::string blocked = SaveWithProfiles("blocked", true);
  { std::ofstream(blocked + "/profile") << "not a directory"; }
  const CollectOutcome fallback = RunCollect({"profile", blocked, "--tables=ascii"});
  ASSERT_EQ(fallback.exit_code, 0) << fallback.err;
  EXPECT_TRUE(absl::StrContains(fallback.err,
                                "cannot write the profile files to '" + blocked + "/profile'"))
      << fallback.err;
  EXPECT_TRUE(absl::StrContains(fallback.out, "blocked-profile:\n")) << fallback.out;
}

TEST(CollectProfileTest, ErrorsAreClear) {
  const std::string dir = SaveWithProfiles("without-profiles", false);
  const CollectOutcome none = RunCollect({"profile", dir});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(none.err, "no profiles in " + dir +
                                              ": run with --profile (threadpool) or "
                                              "--backend=dask"))
      << none.err;
  EXPECT_FALSE(Exists(dir + "/profile/profile.folded"));

  const CollectOutcome missing = RunCollect({"profile", TempDir() + "/nope"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(missing.err, "nope")) << missing.err;

  const CollectOutcome usage = RunCollect({"profile"});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(usage.err, "usage: collect profile DIR")) << usage.err;

  const CollectOutcome bad_top =
      RunCollect({"profile", SaveWithProfiles("top-zero", true), "--top=0"});
  EXPECT_EQ(bad_top.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(bad_top.err, "--top")) << bad_top.err;
}

// Issue #16: a profile whose node names itself as parent made `collect profile` exit 1 with
// "Top Functions: ...: profile node 2: parent 2 ...", naming no input. Like `show` and `report`,
// it now shows the other profiles and warns, naming the directory and the profile.
TEST(CollectProfileTest, ACorruptProfileIsLeftOutWithAWarning) {
  v1::Measurement run;
  run.mutable_metadata()->set_name("corrupt-profile");
  *run.add_profiles() = ProfileOf("tcp://127.0.0.1:40001", {0, 1}, {"process", "read"}, {10, 6});
  *run.add_profiles() =
      ProfileOf("vm:19370/thread-0", {0, 2}, {"process", "read"}, {10, 10});  // 2 is itself
  const std::string parent = TempDir() + "/profile-runs";
  ASSERT_TRUE(SaveMeasurement(run, parent, "corrupt-profile").ok());
  const std::string dir = parent + "/corrupt-profile";
  const CollectOutcome outcome = RunCollect({"profile", dir, "--tables=ascii"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_TRUE(absl::StrContains(outcome.err, "collect: warning: " + dir +
                                                 ": profile 1 (vm:19370/thread-0) is corrupt and "
                                                 "left out: profile node 2: parent 2 does not "
                                                 "come before it"))
      << outcome.err;
  EXPECT_TRUE(absl::StrContains(outcome.out, "Top Stacks: tcp://127.0.0.1:40001")) << outcome.out;
  EXPECT_FALSE(absl::StrContains(outcome.out, "vm:19370")) << outcome.out;
  EXPECT_TRUE(Exists(dir + "/profile/profile.folded"));
}

}  // namespace
}  // namespace roastcoffea
