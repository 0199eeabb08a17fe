#include "backends/dask/fixtures.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace roastcoffea::dask::testing {

std::string FixtureBytes(const std::string& name) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  std::string path = std::string(srcdir != nullptr ? srcdir : ".") + "/" +
                     (workspace != nullptr ? workspace : "roastcoffea") +
                     "/backends/dask/testdata/" + name + ".bin";
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "missing fixture %s\n", path.c_str());
    std::abort();
  }
  std::ostringstream data;
  data << in.rdbuf();
  return data.str();
}

}  // namespace roastcoffea::dask::testing
