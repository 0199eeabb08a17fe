#include "host/host_name.h"

#include <limits.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

TEST(HostNameTest, IsTheSystemsName) {
  char expected[HOST_NAME_MAX + 1] = {};
  ASSERT_EQ(gethostname(expected, sizeof(expected) - 1), 0);
  ASSERT_NE(expected[0], '\0');
  EXPECT_EQ(HostName(), expected);
}

}  // namespace
}  // namespace roastcoffea
