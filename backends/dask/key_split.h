// key_split: Dask's task prefix of a task key (dask.utils.key_split; docs/dask-protocol.md §5.2).
//
// Keys arrive as str (≤ 2023.8: tuples stringified as Python's str(tuple)), or natively as
// int, float or arrays (tuples) in ≥ 2023.9. The result is exactly Dask's, quirks included:
// "my-database-1" → "my" (8-letter words starting a–f are taken for hashes), 32 hex chars →
// "data", "<mod.Cls object at 0x1>" → "Cls", anything non-string → "Other". Tuples: the first
// element, applied recursively (newest Dask; 2022.12 gives "Other" for a nested tuple).
// Thread-safety: pure functions. Cost: linear in the key.
#ifndef ROASTCOFFEA_BACKENDS_DASK_KEY_SPLIT_H_
#define ROASTCOFFEA_BACKENDS_DASK_KEY_SPLIT_H_

#include <string>

#include "absl/strings/string_view.h"
#include "backends/dask/value.h"

namespace roastcoffea::dask {

std::string KeySplit(absl::string_view key);
std::string KeySplit(const Value& key);

// A display form of a key: the text of a str key, Python-repr-like otherwise.
std::string KeyToString(const Value& key);

}  // namespace roastcoffea::dask

#endif  // ROASTCOFFEA_BACKENDS_DASK_KEY_SPLIT_H_
