#include "store/name_claim.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

std::string TestDirectory(const std::string& leaf) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + leaf;
  mkdir(path.c_str(), 0777);
  return path;
}

bool Exists(const std::string& path) {
  struct stat info;
  return lstat(path.c_str(), &info) == 0;
}

TEST(NameClaimTest, SecondClaimOfTheSameNameIsRefusedUntilTheFirstIsReleased) {
  const std::string parent = TestDirectory("twice");
  {
    absl::StatusOr<NameClaim> first = NameClaim::Claim(parent, "run");
    ASSERT_TRUE(first.ok()) << first.status();
    EXPECT_TRUE(Exists(first->path()));
    absl::StatusOr<NameClaim> second = NameClaim::Claim(parent, "run");
    EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_TRUE(absl::StrContains(second.status().message(), parent + "/run"));
    EXPECT_TRUE(NameClaim::Claim(parent, "other").ok());
  }
  EXPECT_FALSE(Exists(parent + "/.run.roastcoffea-claim"));
  EXPECT_TRUE(NameClaim::Claim(parent, "run").ok());
}

TEST(NameClaimTest, AClaimOfAKilledProcessIsFreeAgain) {
  const std::string parent = TestDirectory("killed");
  const pid_t child = fork();
  if (child == 0) {
    absl::StatusOr<NameClaim> claim = NameClaim::Claim(parent, "run");
    _exit(claim.ok() ? 0 : 1);  // no destructor: the file stays, the kernel drops the lock
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(Exists(parent + "/.run.roastcoffea-claim"));
  EXPECT_TRUE(NameClaim::Claim(parent, "run").ok());
}

TEST(NameClaimTest, RefusesAnExistingMeasurementAndABadName) {
  const std::string parent = TestDirectory("existing");
  mkdir((parent + "/done").c_str(), 0777);
  EXPECT_EQ(NameClaim::Claim(parent, "done").status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(NameClaim::Claim(parent, ".x").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(NameClaimTest, NeverFollowsALinkAtTheClaimPath) {
  const std::string parent = TestDirectory("link");
  const std::string victim = parent + "/victim";
  ASSERT_EQ(symlink(victim.c_str(), (parent + "/.run.roastcoffea-claim").c_str()), 0);
  EXPECT_FALSE(NameClaim::Claim(parent, "run").ok());
  EXPECT_FALSE(Exists(victim));
}

}  // namespace
}  // namespace roastcoffea
