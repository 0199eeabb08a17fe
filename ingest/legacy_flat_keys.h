// Where each flat key of the original Python tool's metrics.json goes in AggregatedMetrics:
// one setter per canonical key name (CanonicalKeyName, ingest/coffea_json.h). Values arrive in
// the original's unit (MiB for chunk memory deltas, made bytes here; counts rounded).

#ifndef ROASTCOFFEA_INGEST_LEGACY_FLAT_KEYS_H_
#define ROASTCOFFEA_INGEST_LEGACY_FLAT_KEYS_H_

#include <functional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

using LegacyFlatKeySetter = std::function<void(double, v1::AggregatedMetrics*)>;

const absl::flat_hash_map<std::string, LegacyFlatKeySetter>& LegacyFlatKeySetters();

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INGEST_LEGACY_FLAT_KEYS_H_
