#include "export/profile_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "profile/profile.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

v1::Profile Folded(const std::string& worker, const std::string& folded) {
  absl::StatusOr<v1::Profile> profile = ParseFoldedStacks(folded, 0.01);
  EXPECT_TRUE(profile.ok()) << profile.status();
  profile->set_worker(worker);
  return *profile;
}

TEST(SanitizeFileNamePartTest, SafeNames) {
  EXPECT_EQ(SanitizeFileNamePart("tcp://10.0.0.5:4123"), "tcp-10.0.0.5-4123");
  EXPECT_EQ(SanitizeFileNamePart("../../etc/passwd"), "etc-passwd");
  EXPECT_EQ(SanitizeFileNamePart("a b\nc\u00e9"), "a-b-c");
  EXPECT_EQ(SanitizeFileNamePart("///"), "");
  EXPECT_EQ(SanitizeFileNamePart(""), "");
  EXPECT_LE(SanitizeFileNamePart(std::string(500, 'x')).size(), 64u);
}

TEST(ProfileFileStemsTest, UniqueAndScoped) {
  v1::Measurement measurement;
  measurement.add_profiles()->set_worker("tcp://127.0.0.1:1");
  measurement.add_profiles()->set_worker("tcp://127.0.0.1/1");  // sanitises the same
  v1::Profile* prefixed = measurement.add_profiles();
  prefixed->set_worker("tcp://127.0.0.1:1");
  prefixed->set_task_prefix("process-chunk");
  measurement.add_profiles()->set_worker_name("named");
  measurement.add_profiles()->set_host("node-1");
  v1::Profile* section = measurement.add_profiles();
  section->set_host("node-1");
  section->set_section("read/decompress");
  EXPECT_EQ(ProfileFileStems(measurement),
            (std::vector<std::string>{"tcp-127.0.0.1-1", "tcp-127.0.0.1-1-2",
                                      "tcp-127.0.0.1-1.process-chunk", "named", "all-workers",
                                      "all-workers.read-decompress"}));
}

TEST(WriteProfileFilesTest, MergedAndPerWorkerFiles) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/profiles";
  mkdir(dir.c_str(), 0755);
  v1::Measurement measurement;
  *measurement.add_profiles() = Folded("tcp://h:1", "main;a 4\nmain;b 1\n");
  *measurement.add_profiles() = Folded("tcp://h:2", "main;b 2\nmain <x&y> 1\n");
  absl::StatusOr<WrittenProfileFiles> written = WriteProfileFiles(measurement, dir);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->merge_problem, "");
  EXPECT_EQ(written->paths, (std::vector<std::string>{
                                dir + "/profile.folded", dir + "/flamegraph.svg",
                                dir + "/profile.tcp-h-1.folded", dir + "/flamegraph.tcp-h-1.svg",
                                dir + "/profile.tcp-h-2.folded", dir + "/flamegraph.tcp-h-2.svg"}));
  EXPECT_EQ(Read(dir + "/profile.folded"), "main <x&y> 1\nmain;a 4\nmain;b 3\n")
      << Read(dir + "/profile.folded");
  EXPECT_EQ(Read(dir + "/profile.tcp-h-1.folded"), "main;a 4\nmain;b 1\n");
  const std::string merged_svg = Read(dir + "/flamegraph.svg");
  EXPECT_TRUE(absl::StrContains(merged_svg, "all workers (2 profiles merged)"));
  EXPECT_TRUE(absl::StrContains(merged_svg, "<title>all \u2014 8 samples"));
  const std::string worker_svg = Read(dir + "/flamegraph.tcp-h-2.svg");
  EXPECT_TRUE(absl::StrContains(worker_svg, "worker tcp://h:2"));
  EXPECT_TRUE(absl::StrContains(worker_svg, "main &lt;x&amp;y&gt;")) << worker_svg;
  // Written again: replaced, no temporary files left.
  ASSERT_TRUE(WriteProfileFiles(measurement, dir + "/").ok());
  struct stat info;
  EXPECT_NE(stat((dir + "/profile.folded.tmp-" + std::to_string(getpid())).c_str(), &info), 0);
}

TEST(WriteProfileFilesTest, FoldedStacksStartAtTheProcessorWithFullNames) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/collapsed";
  mkdir(dir.c_str(), 0755);
  v1::Measurement measurement;
  *measurement.add_profiles() =
      Folded("w",
             "start_thread;roastcoffea::ThreadPoolExecutor::WorkerLoop(int);"
             "ns::Process<int>(long) 3\nstart_thread 1\n");
  ASSERT_TRUE(WriteProfileFiles(measurement, dir).ok());
  EXPECT_EQ(Read(dir + "/profile.w.folded"),
            "(executor and wrappers) 1\nns::Process<int>(long) 3\n");
  EXPECT_TRUE(absl::StrContains(Read(dir + "/flamegraph.w.svg"), ">ns::Process</text>"));
  ProfileFilesOptions options;
  options.show_wrapper_frames = true;
  ASSERT_TRUE(WriteProfileFiles(measurement, dir, options).ok());
  EXPECT_EQ(Read(dir + "/profile.w.folded"),
            "start_thread 1\nstart_thread;roastcoffea::ThreadPoolExecutor::WorkerLoop(int);"
            "ns::Process<int>(long) 3\n");
}

TEST(ProfileOutputTest, NextToTheMeasurementThenWorkingThenTemporaryDirectory) {
  EXPECT_EQ(DefaultProfileOutputDirectories("/shared/m/run1/", "/home/me", "/tmp"),
            (std::vector<std::string>{"/shared/m/run1/profile", "/home/me/run1-profile",
                                      "/tmp/run1-profile"}));
  EXPECT_EQ(DefaultProfileOutputDirectories("/shared/m/run1", "", "/tmp/"),
            (std::vector<std::string>{"/shared/m/run1/profile", "/tmp/run1-profile"}));
}

TEST(ProfileOutputTest, FallsBackWhenTheMeasurementIsNotWritable) {
  const std::string base = std::string(std::getenv("TEST_TMPDIR")) + "/fallback";
  mkdir(base.c_str(), 0755);
  // A measurement "directory" under which nothing can be created (its parent is a file).
  const std::string blocker = base + "/not-a-directory";
  { std::ofstream(blocker) << "x"; }
  std::vector<std::string> problems;
  absl::StatusOr<std::string> chosen =
      FirstWritableDirectory({blocker + "/profile", base + "/run-profile"}, &problems);
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  EXPECT_EQ(*chosen, base + "/run-profile");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_TRUE(absl::StrContains(problems[0], blocker + "/profile")) << problems[0];
  EXPECT_TRUE(absl::StrContains(problems[0], "Not a directory")) << problems[0];
  // Nothing writable: an error naming every candidate.
  chosen = FirstWritableDirectory({blocker + "/a", blocker + "/b"}, &problems);
  ASSERT_FALSE(chosen.ok());
  EXPECT_TRUE(absl::StrContains(chosen.status().message(), blocker + "/b"));
  EXPECT_EQ(problems.size(), 2u);
  // No probe file left behind.
  struct stat info;
  EXPECT_NE(
      stat((base + "/run-profile/.roastcoffea-write-test-" + std::to_string(getpid())).c_str(),
           &info),
      0);
}

TEST(WriteProfileFilesTest, ErrorsNameTheProblem) {
  absl::StatusOr<WrittenProfileFiles> none =
      WriteProfileFiles(v1::Measurement(), std::getenv("TEST_TMPDIR"));
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(absl::StrContains(none.status().message(), "no profiles")) << none.status();
  v1::Measurement measurement;
  *measurement.add_profiles() = Folded("w", "main 1\n");
  absl::StatusOr<WrittenProfileFiles> bad = WriteProfileFiles(measurement, "/nonexistent-dir/x");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "/nonexistent-dir/x/profile.folded"))
      << bad.status();
}

TEST(WriteProfileFilesTest, UnmergeableProfilesStillWrittenPerWorker) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/unmergeable";
  mkdir(dir.c_str(), 0755);
  v1::Measurement measurement;
  *measurement.add_profiles() = Folded("a", "main 1\n");
  *measurement.add_profiles() = Folded("b", "main 2\n");
  measurement.mutable_profiles(1)->set_sampling_interval_seconds(0.5);
  // And one without samples: a valid, empty graph.
  v1::Profile empty;
  empty.set_worker("c");
  empty.add_nodes()->set_parent(-1);
  empty.mutable_nodes(0)->set_frame(-1);
  *measurement.add_profiles() = empty;
  absl::StatusOr<WrittenProfileFiles> written = WriteProfileFiles(measurement, dir);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_NE(written->merge_problem, "");
  EXPECT_EQ(written->paths.size(), 6u);
  EXPECT_EQ(written->paths[0], dir + "/profile.a.folded");
  struct stat info;
  EXPECT_NE(stat((dir + "/profile.folded").c_str(), &info), 0);
  EXPECT_EQ(Read(dir + "/profile.b.folded"), "main 2\n");
  EXPECT_EQ(Read(dir + "/profile.c.folded"), "");
  EXPECT_TRUE(absl::StrContains(Read(dir + "/flamegraph.c.svg"), "No samples"));
}

// Reliability study D11: 16,000 profiles of one worker took 39 s (a suffix search per profile).
TEST(ProfileFileStemsTest, ManyProfilesOfOneWorkerAreLinear) {
  v1::Measurement measurement;
  for (int i = 0; i < 20000; ++i) measurement.add_profiles()->set_worker("w");
  // Names that look like suffixes of another base are skipped, never reused.
  measurement.mutable_profiles(1)->set_worker("w-3");
  const std::vector<std::string> stems = ProfileFileStems(measurement);
  ASSERT_EQ(stems.size(), 20000u);
  EXPECT_EQ(stems[0], "w");
  EXPECT_EQ(stems[1], "w-3");
  EXPECT_EQ(stems[2], "w-2");
  EXPECT_EQ(stems[3], "w-4");
  EXPECT_EQ(stems.back(), "w-20000");
}

// Reliability study D6 and D11: the limits bound what `collect profile` writes.
TEST(WriteProfileFilesTest, LimitsLeaveOutStacksAndProfilesAndSayHowMany) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/limits";
  mkdir(dir.c_str(), 0755);
  v1::Measurement measurement;
  for (int i = 0; i < 5; ++i) {
    *measurement.add_profiles() = Folded("w", "main 1\nmain;a 1\nmain;a;b 1\n");
  }
  ProfileFilesOptions options;
  options.max_profiles = 2;
  options.max_folded_bytes = 40;  // the merged file (34 bytes) and one short line more
  absl::StatusOr<WrittenProfileFiles> written = WriteProfileFiles(measurement, dir, options);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->paths.size(), 6u);  // merged + 2 profiles, 2 files each
  EXPECT_EQ(written->profiles_left_out, 3);
  EXPECT_EQ(Read(dir + "/profile.folded"), "main 5\nmain;a 5\nmain;a;b 5\n");
  EXPECT_EQ(Read(dir + "/profile.w.folded"), "main 1\n");
  EXPECT_EQ(Read(dir + "/profile.w-2.folded"), "");
  EXPECT_EQ(written->stacks_left_out, 5);
  EXPECT_EQ(written->samples_left_out, 5);
}

}  // namespace
}  // namespace roastcoffea
