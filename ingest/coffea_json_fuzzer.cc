// Fuzzes the readers of what a user's command leaves for collect ($ROASTCOFFEA_REPORT,
// $ROASTCOFFEA_CHUNK_RECORDS) and the untrusted-JSON checks under them: any input gives values
// and warnings or an error, never a crash; deep nesting never reaches protobuf's parser.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "ingest/coffea_json.h"
#include "io/untrusted_json.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto report = roastcoffea::ParseCoffeaReport(text, "report.json");
  const auto records = roastcoffea::ParseChunkRecords(text, "records.json");
  for (const auto* warnings :
       {report.ok() ? &report->warnings : nullptr, records.ok() ? &records->warnings : nullptr}) {
    if (warnings == nullptr) continue;
    Check(warnings->size() <= static_cast<size_t>(roastcoffea::kMaxWarningsPerFile) + 2);
    // Echoed input is capped: a warning is the source, a key and a short reason.
    for (const std::string& warning : *warnings) Check(warning.size() < 2000);
  }
  std::vector<roastcoffea::NonFiniteToken> found;
  const std::string replaced = roastcoffea::ReplaceNonFiniteTokens(text, &found);
  Check(replaced.size() <= text.size() + found.size());
  (void)roastcoffea::SplitJsonArray(text, "f");
  return 0;
}
