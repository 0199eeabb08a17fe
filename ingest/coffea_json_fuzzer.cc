// Fuzzes the readers of what a user's command leaves for collect ($ROASTCOFFEA_REPORT,
// $ROASTCOFFEA_CHUNK_RECORDS) and the untrusted-JSON checks under them: any input gives values
// and warnings or an error, never a crash; deep nesting never reaches protobuf's parser. Chunk
// records read from a file in pieces of a few bytes (records straddle pieces) must give exactly
// what the same text in memory gives.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ingest/coffea_json.h"
#include "io/untrusted_json.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

std::string ScratchFile() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/coffea_json_fuzzer_input.json";
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
  // The streaming reader over a file, in pieces of 1 to 16 bytes, against the text in memory.
  const std::string path = ScratchFile();
  // Removed, not truncated: ext4 flushes a truncated and rewritten file to disk on close.
  std::remove(path.c_str());
  if (FILE* file = std::fopen(path.c_str(), "wb"); file != nullptr) {
    Check(std::fwrite(text.data(), 1, text.size(), file) == text.size());
    Check(std::fclose(file) == 0);
    roastcoffea::ChunkRecordsOptions options;
    options.piece_bytes = 1 + size % 16;
    const auto in_memory = roastcoffea::ParseChunkRecords(text, path);
    const auto from_file = roastcoffea::ReadChunkRecords(path, options);
    Check(in_memory.ok() == from_file.ok());
    if (in_memory.ok()) {
      Check(in_memory->warnings == from_file->warnings);
      Check(in_memory->records.size() == from_file->records.size());
      for (size_t i = 0; i < in_memory->records.size(); ++i) {
        Check(in_memory->records[i].SerializeAsString() ==
              from_file->records[i].SerializeAsString());
      }
    } else {
      Check(in_memory.status() == from_file.status());
    }
  }
  std::vector<roastcoffea::NonFiniteToken> found;
  const std::string replaced = roastcoffea::ReplaceNonFiniteTokens(text, &found);
  Check(replaced.size() <= text.size() + found.size());
  (void)roastcoffea::SplitJsonArray(text, "f");
  return 0;
}
