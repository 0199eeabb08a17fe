// Test helper: random chunk records that reach every branch of the chunk figures (testonly).
#ifndef ROASTCOFFEA_AGGREGATION_RANDOM_CHUNK_RECORDS_H_
#define ROASTCOFFEA_AGGREGATION_RANDOM_CHUNK_RECORDS_H_

#include <cstdint>

#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace testing_internal {

// Records meant to reach every branch of the chunk figures: several datasets (one empty),
// failures, retries, records without memory, without times, without a file, files with and
// without a size, overlapping entry ranges, threads of one process, sections of every kind,
// peak live bytes and run-queue waits on some records only, CPU on some records only.
// A measurement of `n` such records (elapsed 100 s), the same for the same `seed`; `shuffle`:
// in random order.
v1::Measurement RandomRecords(uint64_t seed, int n, bool shuffle);

}  // namespace testing_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_RANDOM_CHUNK_RECORDS_H_
