// Fuzz target: any bytes as a columnar file must give a clear error or valid data, never a
// crash, hang or unbounded allocation.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "sample_analysis/columnar_file.h"

namespace roastcoffea::sample_analysis {
namespace {

const std::string& ScratchPath() {
  static const std::string path = [] {
    const char* directory = std::getenv("TEST_TMPDIR");
    return std::string(directory != nullptr ? directory : "/tmp") + "/fuzz-input-" +
           std::to_string(getpid()) + ".rcf";
  }();
  return path;
}

template <typename T>
void ReadAll(Reader& reader, const ColumnInfo& column) {
  if (column.jagged) {
    Jagged<T> values;
    (void)reader.ReadJagged<T>(column.name, 0, reader.entries(), &values);
  } else {
    std::vector<T> values;
    (void)reader.Read<T>(column.name, 0, reader.entries(), &values);
  }
}

}  // namespace
}  // namespace roastcoffea::sample_analysis

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roastcoffea::sample_analysis;
  FILE* file = std::fopen(ScratchPath().c_str(), "wb");
  if (file == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, file) != size) std::abort();
  std::fclose(file);
  absl::StatusOr<std::unique_ptr<Reader>> reader = Reader::Open(ScratchPath());
  if (!reader.ok()) return 0;
  for (const ColumnInfo& column : (*reader)->columns()) {
    switch (column.type) {
      case ColumnType::kFloat32:
        ReadAll<float>(**reader, column);
        break;
      case ColumnType::kInt32:
        ReadAll<int32_t>(**reader, column);
        break;
      case ColumnType::kInt64:
        ReadAll<int64_t>(**reader, column);
        break;
      case ColumnType::kUInt64:
        ReadAll<uint64_t>(**reader, column);
        break;
    }
  }
  return 0;
}
