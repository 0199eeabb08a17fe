// Fuzzes the direct chunk-record parser against the reference (every record through JsonTree):
// for any input, ParseChunkRecords gives the same records, warnings and errors, to the byte; and
// ParseChunkRecordsAsTable gives what ParseChunkRecords gives.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "ingest/coffea_json.h"
#include "ingest/coffea_json_internal.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto direct = roastcoffea::ParseChunkRecords(text, "records.json");
  const auto reference =
      roastcoffea::ingest_internal::ParseChunkRecordsThroughTree(text, "records.json");
  Check(direct.ok() == reference.ok());
  if (!direct.ok()) {
    Check(direct.status() == reference.status());
    Check(roastcoffea::ParseChunkRecordsAsTable(text, "records.json").status() == direct.status());
    return 0;
  }
  Check(direct->warnings == reference->warnings);
  Check(direct->records.size() == reference->records.size());
  for (size_t i = 0; i < direct->records.size(); ++i) {
    Check(direct->records[i].SerializeAsString() == reference->records[i].SerializeAsString());
  }
  // Into a table: the same records and warnings.
  const auto table = roastcoffea::ParseChunkRecordsAsTable(text, "records.json");
  Check(table.ok());
  Check(table->warnings == direct->warnings);
  Check(table->table.size() == direct->records.size());
  for (size_t i = 0; i < direct->records.size(); ++i) {
    Check(table->table.Record(i).SerializeAsString() == direct->records[i].SerializeAsString());
  }
  return 0;
}
