// Test helper: the captured Dask messages in backends/dask/testdata/ (copied from the shared
// fixtures; see /work/shared/fixtures/dask/README.md for what each one is).
#ifndef ROASTCOFFEA_BACKENDS_DASK_FIXTURES_H_
#define ROASTCOFFEA_BACKENDS_DASK_FIXTURES_H_

#include <string>

namespace roastcoffea::dask::testing {

// The raw wire bytes of testdata/<name>.bin; aborts the test binary when missing.
std::string FixtureBytes(const std::string& name);

}  // namespace roastcoffea::dask::testing

#endif  // ROASTCOFFEA_BACKENDS_DASK_FIXTURES_H_
