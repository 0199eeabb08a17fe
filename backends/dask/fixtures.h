// Test helper: the captured Dask messages in backends/dask/testdata/ (real captures from Debian's
// python3-distributed; the message layouts are described in docs/dask-protocol.md).
#ifndef ROASTCOFFEA_BACKENDS_DASK_FIXTURES_H_
#define ROASTCOFFEA_BACKENDS_DASK_FIXTURES_H_

#include <string>

namespace roastcoffea::dask::testing {

// The raw wire bytes of testdata/<name>.bin; aborts the test binary when missing.
std::string FixtureBytes(const std::string& name);

}  // namespace roastcoffea::dask::testing

#endif  // ROASTCOFFEA_BACKENDS_DASK_FIXTURES_H_
