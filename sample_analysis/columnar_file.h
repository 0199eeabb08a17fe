// A small columnar file format for the built-in sample analysis.
//
// A file holds a fixed number of entries (events) and a set of named columns. A column is either
// flat (one value per entry) or jagged (a variable number of values per entry, stored as per-basket
// offsets plus content). Every column is cut into baskets of `basket_entries` entries; each basket
// of each column is zstd-compressed separately and carries the CRC32 of its uncompressed bytes, so
// a reader fetches (pread) and decompresses only the baskets an entry range needs.
//
// Layout (all integers little-endian):
//   header  : magic "RCCOLF01" (8 bytes), u32 format version
//   baskets : compressed blobs, in column order
//   footer  : u64 entries, u64 basket_entries, u32 column count, then per column
//             u16 name length, name, u8 type, u8 jagged, u32 basket count, then per basket one blob
//             descriptor (flat) or two (jagged: offsets then content):
//             u64 file offset, u64 compressed size, u64 uncompressed size, u32 crc32
//   trailer : u64 footer offset, u64 footer size, u32 footer crc32, u32 version, magic (8 bytes)
//
// Thread safety: `Writer` and `Reader` are not thread-safe; use one per thread. Distinct Readers of
// the same file may be used concurrently.
#ifndef ROASTCOFFEA_SAMPLE_ANALYSIS_COLUMNAR_FILE_H_
#define ROASTCOFFEA_SAMPLE_ANALYSIS_COLUMNAR_FILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace roastcoffea {
namespace sample_analysis {

inline constexpr uint32_t kColumnarFormatVersion = 1;

enum class ColumnType : uint8_t {
  kFloat32 = 1,
  kInt32 = 2,
  kInt64 = 3,
  kUInt64 = 4,
};

// "float32", "int32", "int64", "uint64".
absl::string_view ColumnTypeName(ColumnType type);

// Maps the supported C++ element types to their ColumnType. Other types do not compile.
template <typename T>
struct ColumnTypeOf;
template <>
struct ColumnTypeOf<float> {
  static constexpr ColumnType kValue = ColumnType::kFloat32;
};
template <>
struct ColumnTypeOf<int32_t> {
  static constexpr ColumnType kValue = ColumnType::kInt32;
};
template <>
struct ColumnTypeOf<int64_t> {
  static constexpr ColumnType kValue = ColumnType::kInt64;
};
template <>
struct ColumnTypeOf<uint64_t> {
  static constexpr ColumnType kValue = ColumnType::kUInt64;
};

// Values of a jagged column for a range of entries: entry i (relative to the range start) owns
// content[offsets[i], offsets[i + 1]). offsets has (entries + 1) elements and starts at 0.
template <typename T>
struct Jagged {
  std::vector<int64_t> offsets{0};
  std::vector<T> content;

  int64_t entries() const { return static_cast<int64_t>(offsets.size()) - 1; }
};

struct WriterOptions {
  // Entries per basket; the last basket may be partial. Must be > 0.
  int64_t basket_entries = 4096;
  // zstd compression level (1 = fast ... 19 = small).
  int compression_level = 3;
};

// Collects columns in memory, then writes them all with Write(). Cost: the whole table is held in
// memory once; Write() compresses every basket (zstd) and writes the file sequentially.
class Writer {
 public:
  explicit Writer(int64_t entries, WriterOptions options = {});

  // Adds a flat column; values.size() must equal the entry count. Errors (reported here or, for
  // bad options, by Write): duplicate or empty name, wrong length.
  template <typename T>
  absl::Status AddColumn(absl::string_view name, absl::Span<const T> values);

  // Adds a jagged column from per-entry counts (counts.size() == entries, counts >= 0, their sum
  // == content.size()).
  template <typename T>
  absl::Status AddJaggedColumn(absl::string_view name, absl::Span<const int64_t> counts,
                               absl::Span<const T> content);

  // Writes the file atomically: to "<path>.tmp.<unique>" first, then renamed onto `path`, so a
  // reader never sees a half-written file. The writer may be reused to write more copies.
  absl::Status Write(const std::string& path) const;

 private:
  struct PendingColumn {
    std::string name;
    ColumnType type;
    bool jagged = false;
    std::vector<uint8_t> values;       // flat: raw values; jagged: raw content
    std::vector<int64_t> end_offsets;  // jagged only: end offset (into content) of each entry
  };
  absl::Status CheckNewName(absl::string_view name) const;
  absl::Status AddRaw(absl::string_view name, ColumnType type, const void* data, size_t bytes,
                      size_t count);
  absl::Status AddJaggedRaw(absl::string_view name, ColumnType type,
                            absl::Span<const int64_t> counts, const void* data, size_t bytes,
                            size_t count);

  int64_t entries_;
  WriterOptions options_;
  std::vector<PendingColumn> columns_;
};

// Where one compressed blob sits in the file.
struct BlobLocation {
  uint64_t offset = 0;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint32_t crc32 = 0;
};

struct BasketInfo {
  int64_t entry_start = 0;
  int64_t entry_stop = 0;
  // Jagged columns: the per-entry offsets. Flat columns: unused (all zero).
  BlobLocation offsets;
  // Flat columns: the values. Jagged columns: the content.
  BlobLocation values;
};

struct ColumnInfo {
  std::string name;
  ColumnType type = ColumnType::kFloat32;
  bool jagged = false;
  std::vector<BasketInfo> baskets;

  int64_t compressed_bytes() const;
  int64_t uncompressed_bytes() const;
};

// What a Reader did, cumulatively.
struct ReadStats {
  // Bytes pread from the file for column data (compressed), and produced by decompression.
  int64_t compressed_bytes_read = 0;
  int64_t uncompressed_bytes_read = 0;
  // Bytes pread by Open() (header, trailer, footer); not included above.
  int64_t metadata_bytes_read = 0;
  int64_t baskets_read = 0;
  // Wall time spent in pread (column data only), and in decompression + CRC checks.
  absl::Duration io_time;
  absl::Duration decompress_time;
};

class Reader {
 public:
  // Opens `path` and reads its header and footer (a few small preads). Errors name the file:
  // NotFound (missing), DataLoss (truncated, bad magic, bad footer CRC, inconsistent column table),
  // FailedPrecondition (unsupported version).
  static absl::StatusOr<std::unique_ptr<Reader>> Open(const std::string& path);

  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  const std::string& path() const { return path_; }
  int64_t entries() const { return entries_; }
  int64_t basket_entries() const { return basket_entries_; }
  int64_t file_size() const { return file_size_; }
  const std::vector<ColumnInfo>& columns() const { return columns_; }
  // nullptr when there is no such column.
  const ColumnInfo* FindColumn(absl::string_view name) const;

  // Reads entries [start, stop) of flat column `name` into *out (replacing its contents). Reads
  // only the baskets overlapping the range. Errors name the file and column: NotFound (unknown
  // column), InvalidArgument (wrong type or jagged-ness), OutOfRange (start/stop outside
  // [0, entries] or stop < start), DataLoss (short read, decompression failure, CRC mismatch).
  template <typename T>
  absl::Status Read(absl::string_view name, int64_t start, int64_t stop, std::vector<T>* out);

  // Same for a jagged column.
  template <typename T>
  absl::Status ReadJagged(absl::string_view name, int64_t start, int64_t stop, Jagged<T>* out);

  const ReadStats& stats() const { return stats_; }

 private:
  Reader(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  absl::Status LoadFooter();
  absl::StatusOr<const ColumnInfo*> Lookup(absl::string_view name, ColumnType type, bool jagged,
                                           int64_t start, int64_t stop) const;
  // preads and decompresses one blob into *out (resized to its uncompressed size).
  absl::Status ReadBlob(const ColumnInfo& column, int64_t basket, const BlobLocation& blob,
                        std::vector<uint8_t>* out);
  absl::Status PreadExactly(uint64_t offset, size_t size, uint8_t* out, absl::string_view what);

  std::string path_;
  int fd_ = -1;
  int64_t file_size_ = 0;
  int64_t entries_ = 0;
  int64_t basket_entries_ = 0;
  std::vector<ColumnInfo> columns_;
  ReadStats stats_;
  std::vector<uint8_t> scratch_;  // compressed bytes of the blob being read
};

}  // namespace sample_analysis
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_SAMPLE_ANALYSIS_COLUMNAR_FILE_H_
