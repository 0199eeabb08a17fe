// What a backend hands the run through AbstractMetricsBackend::Contribute, read the way the
// session reads it: tests and benchmarks see a backend's chunk records and warnings only there.
#ifndef ROASTCOFFEA_BACKENDS_CONTRIBUTED_TESTING_H_
#define ROASTCOFFEA_BACKENDS_CONTRIBUTED_TESTING_H_

#include <string>
#include <vector>

#include "backends/metrics_backend.h"
#include "schema/measurement.pb.h"
#include "schema/raw_run.h"

namespace roastcoffea {

// A fresh run with what `backend` contributes. A backend's chunk records are taken once: a
// second call has none.
inline RawRun ContributedRun(AbstractMetricsBackend& backend) {
  RawRun run;
  backend.Contribute(run);
  return run;
}

// The coded warnings `backend` contributes (taking its chunk records too).
inline std::vector<v1::Warning> ContributedWarnings(AbstractMetricsBackend& backend) {
  return ContributedRun(backend).warnings;
}

// Their sentences, in order.
inline std::vector<std::string> ContributedWarningSentences(AbstractMetricsBackend& backend) {
  return WarningSentences(ContributedWarnings(backend));
}

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_CONTRIBUTED_TESTING_H_
