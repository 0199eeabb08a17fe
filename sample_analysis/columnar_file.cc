#include "sample_analysis/columnar_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "io/atomic_write.h"

// Column values are stored in host byte order; the format is defined as little-endian.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "columnar files assume little-endian");

namespace roastcoffea {
namespace sample_analysis {
namespace {

constexpr char kMagic[8] = {'R', 'C', 'C', 'O', 'L', 'F', '0', '1'};
constexpr size_t kHeaderSize = 8 + 4;
constexpr size_t kTrailerSize = 8 + 8 + 4 + 4 + 8;
// Guards allocations driven by the (CRC-checked) footer: no basket of ours gets near this.
constexpr uint64_t kMaxBlobBytes = uint64_t{1} << 31;
constexpr uint64_t kMaxColumns = 100000;

size_t ElementSize(ColumnType type) {
  switch (type) {
    case ColumnType::kFloat32:
    case ColumnType::kInt32:
      return 4;
    case ColumnType::kInt64:
    case ColumnType::kUInt64:
      return 8;
  }
  return 0;
}

bool IsValidType(uint8_t raw) { return raw >= 1 && raw <= 4; }

uint32_t Crc32(const uint8_t* data, size_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths; our blobs are below kMaxBlobBytes, but stay correct regardless.
  while (size > 0) {
    const uInt step = static_cast<uInt>(std::min<size_t>(size, 1u << 30));
    crc = crc32(crc, data, step);
    data += step;
    size -= step;
  }
  return static_cast<uint32_t>(crc);
}

// Little-endian encoding, independent of the host.
void PutU8(std::string* out, uint8_t v) { out->push_back(static_cast<char>(v)); }
template <typename U>
void PutLE(std::string* out, U v) {
  for (size_t i = 0; i < sizeof(U); ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
template <typename U>
U GetLE(const uint8_t* p) {
  U v = 0;
  for (size_t i = 0; i < sizeof(U); ++i) v |= static_cast<U>(p[i]) << (8 * i);
  return v;
}

// Bounds-checked cursor over the footer.
class Cursor {
 public:
  Cursor(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  template <typename U>
  bool Get(U* v) {
    if (size_ - pos_ < sizeof(U)) return false;
    *v = GetLE<U>(data_ + pos_);
    pos_ += sizeof(U);
    return true;
  }
  bool GetString(size_t n, std::string* s) {
    if (size_ - pos_ < n) return false;
    s->assign(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return true;
  }
  bool AtEnd() const { return pos_ == size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

void PutBlob(std::string* out, const BlobLocation& b) {
  PutLE<uint64_t>(out, b.offset);
  PutLE<uint64_t>(out, b.compressed_size);
  PutLE<uint64_t>(out, b.uncompressed_size);
  PutLE<uint32_t>(out, b.crc32);
}

bool GetBlob(Cursor* c, BlobLocation* b) {
  return c->Get(&b->offset) && c->Get(&b->compressed_size) && c->Get(&b->uncompressed_size) &&
         c->Get(&b->crc32);
}

std::string ErrnoText(int err) { return std::strerror(err); }

// Appends to the file being written (io/atomic_write.h); tracks the file position.
class FileSink {
 public:
  explicit FileSink(AtomicFileWriter& file) : file_(file) {}
  absl::Status Append(const void* data, size_t size) {
    position_ += size;
    return file_.Append(absl::string_view(static_cast<const char*>(data), size));
  }
  uint64_t position() const { return position_; }

 private:
  AtomicFileWriter& file_;
  uint64_t position_ = 0;
};

absl::StatusOr<BlobLocation> CompressBlob(FileSink* sink, const uint8_t* data, size_t size,
                                          int level, std::vector<uint8_t>* buffer,
                                          const std::string& path) {
  buffer->resize(ZSTD_compressBound(size));
  const size_t compressed = ZSTD_compress(buffer->data(), buffer->size(), data, size, level);
  if (ZSTD_isError(compressed)) {
    return absl::InternalError(absl::StrCat("compressing a basket for columnar file ", path, ": ",
                                            ZSTD_getErrorName(compressed)));
  }
  BlobLocation blob;
  blob.offset = sink->position();
  blob.compressed_size = compressed;
  blob.uncompressed_size = size;
  blob.crc32 = Crc32(data, size);
  if (absl::Status s = sink->Append(buffer->data(), compressed); !s.ok()) return s;
  return blob;
}

// Compresses one column's baskets into the file and records where each blob went in the
// footer; reuses its buffers across baskets.
class BasketWriter {
 public:
  BasketWriter(FileSink& sink, int level, const std::string& path, std::string& footer)
      : sink_(sink), level_(level), path_(path), footer_(footer) {}

  // Entries [first, last) of a flat column of `elem`-byte values.
  absl::Status WriteFlat(const uint8_t* values, size_t elem, int64_t first, int64_t last) {
    absl::StatusOr<BlobLocation> blob =
        CompressBlob(&sink_, values + first * elem, (last - first) * elem, level_, &buffer_, path_);
    if (!blob.ok()) return blob.status();
    PutBlob(&footer_, *blob);
    return absl::OkStatus();
  }

  // Entries [first, last) of a jagged column: their end offsets, relative to the basket so
  // that each basket decodes on its own, then their content.
  absl::Status WriteJagged(const std::vector<int64_t>& end_offsets, const uint8_t* content,
                           size_t elem, int64_t first, int64_t last) {
    const int64_t content_start = first == 0 ? 0 : end_offsets[first - 1];
    local_offsets_.assign(1, 0);
    for (int64_t i = first; i < last; ++i) local_offsets_.push_back(end_offsets[i] - content_start);
    std::string encoded;
    for (int64_t v : local_offsets_) PutLE<uint64_t>(&encoded, static_cast<uint64_t>(v));
    absl::StatusOr<BlobLocation> offsets_blob =
        CompressBlob(&sink_, reinterpret_cast<const uint8_t*>(encoded.data()), encoded.size(),
                     level_, &buffer_, path_);
    if (!offsets_blob.ok()) return offsets_blob.status();
    absl::StatusOr<BlobLocation> content_blob =
        CompressBlob(&sink_, content + content_start * elem, local_offsets_.back() * elem, level_,
                     &buffer_, path_);
    if (!content_blob.ok()) return content_blob.status();
    PutBlob(&footer_, *offsets_blob);
    PutBlob(&footer_, *content_blob);
    return absl::OkStatus();
  }

 private:
  FileSink& sink_;
  const int level_;
  const std::string& path_;
  std::string& footer_;
  std::vector<uint8_t> buffer_;
  std::vector<int64_t> local_offsets_;
};

// The file's last bytes: where the footer is, its size and CRC, the version and the magic.
std::string Trailer(uint64_t footer_offset, const std::string& footer) {
  std::string trailer;
  PutLE<uint64_t>(&trailer, footer_offset);
  PutLE<uint64_t>(&trailer, footer.size());
  PutLE<uint32_t>(&trailer, Crc32(reinterpret_cast<const uint8_t*>(footer.data()), footer.size()));
  PutLE<uint32_t>(&trailer, kColumnarFormatVersion);
  trailer.append(kMagic, sizeof(kMagic));
  return trailer;
}

}  // namespace

absl::string_view ColumnTypeName(ColumnType type) {
  switch (type) {
    case ColumnType::kFloat32:
      return "float32";
    case ColumnType::kInt32:
      return "int32";
    case ColumnType::kInt64:
      return "int64";
    case ColumnType::kUInt64:
      return "uint64";
  }
  return "unknown";
}

int64_t ColumnInfo::compressed_bytes() const {
  int64_t total = 0;
  for (const BasketInfo& b : baskets) {
    total += static_cast<int64_t>(b.offsets.compressed_size + b.values.compressed_size);
  }
  return total;
}

int64_t ColumnInfo::uncompressed_bytes() const {
  int64_t total = 0;
  for (const BasketInfo& b : baskets) {
    total += static_cast<int64_t>(b.offsets.uncompressed_size + b.values.uncompressed_size);
  }
  return total;
}

// ---------------------------------------------------------------------------------------------
// Writer

Writer::Writer(int64_t entries, WriterOptions options) : entries_(entries), options_(options) {}

absl::Status Writer::CheckNewName(absl::string_view name) const {
  if (name.empty()) return absl::InvalidArgumentError("column name must not be empty");
  if (name.size() > 0xffff) {
    return absl::InvalidArgumentError(absl::StrCat("column name too long: ", name.size()));
  }
  for (const PendingColumn& c : columns_) {
    if (c.name == name) return absl::AlreadyExistsError(absl::StrCat("duplicate column ", name));
  }
  return absl::OkStatus();
}

absl::Status Writer::AddRaw(absl::string_view name, ColumnType type, const void* data, size_t bytes,
                            size_t count) {
  if (absl::Status s = CheckNewName(name); !s.ok()) return s;
  if (static_cast<int64_t>(count) != entries_) {
    return absl::InvalidArgumentError(absl::StrCat("column ", name, " has ", count,
                                                   " values, the file has ", entries_, " entries"));
  }
  PendingColumn column;
  column.name = std::string(name);
  column.type = type;
  const uint8_t* p = static_cast<const uint8_t*>(data);
  column.values.assign(p, p + bytes);
  columns_.push_back(std::move(column));
  return absl::OkStatus();
}

absl::Status Writer::AddJaggedRaw(absl::string_view name, ColumnType type,
                                  absl::Span<const int64_t> counts, const void* data, size_t bytes,
                                  size_t count) {
  if (absl::Status s = CheckNewName(name); !s.ok()) return s;
  if (static_cast<int64_t>(counts.size()) != entries_) {
    return absl::InvalidArgumentError(absl::StrCat("jagged column ", name, " has ", counts.size(),
                                                   " counts, the file has ", entries_, " entries"));
  }
  PendingColumn column;
  column.name = std::string(name);
  column.type = type;
  column.jagged = true;
  column.end_offsets.reserve(counts.size());
  int64_t end = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("jagged column ", name, ": negative count ", counts[i], " at entry ", i));
    }
    end += counts[i];
    column.end_offsets.push_back(end);
  }
  if (end != static_cast<int64_t>(count)) {
    return absl::InvalidArgumentError(absl::StrCat("jagged column ", name, ": counts sum to ", end,
                                                   " but content has ", count, " values"));
  }
  const uint8_t* p = static_cast<const uint8_t*>(data);
  column.values.assign(p, p + bytes);
  columns_.push_back(std::move(column));
  return absl::OkStatus();
}

template <typename T>
absl::Status Writer::AddColumn(absl::string_view name, absl::Span<const T> values) {
  return AddRaw(name, ColumnTypeOf<T>::kValue, values.data(), values.size() * sizeof(T),
                values.size());
}

template <typename T>
absl::Status Writer::AddJaggedColumn(absl::string_view name, absl::Span<const int64_t> counts,
                                     absl::Span<const T> content) {
  return AddJaggedRaw(name, ColumnTypeOf<T>::kValue, counts, content.data(),
                      content.size() * sizeof(T), content.size());
}

template absl::Status Writer::AddColumn<float>(absl::string_view, absl::Span<const float>);
template absl::Status Writer::AddColumn<int32_t>(absl::string_view, absl::Span<const int32_t>);
template absl::Status Writer::AddColumn<int64_t>(absl::string_view, absl::Span<const int64_t>);
template absl::Status Writer::AddColumn<uint64_t>(absl::string_view, absl::Span<const uint64_t>);
template absl::Status Writer::AddJaggedColumn<float>(absl::string_view, absl::Span<const int64_t>,
                                                     absl::Span<const float>);
template absl::Status Writer::AddJaggedColumn<int32_t>(absl::string_view, absl::Span<const int64_t>,
                                                       absl::Span<const int32_t>);
template absl::Status Writer::AddJaggedColumn<int64_t>(absl::string_view, absl::Span<const int64_t>,
                                                       absl::Span<const int64_t>);
template absl::Status Writer::AddJaggedColumn<uint64_t>(absl::string_view,
                                                        absl::Span<const int64_t>,
                                                        absl::Span<const uint64_t>);

absl::Status Writer::Write(const std::string& path) const {
  if (options_.basket_entries <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("writing columnar file ", path,
                                                   ": basket_entries must be > 0, got ",
                                                   options_.basket_entries));
  }
  if (entries_ < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("writing columnar file ", path, ": negative entry count ", entries_));
  }
  // Written whole or not at all: a temporary sibling renamed into place by Commit. Not synced:
  // a cache file, regenerated when damaged.
  AtomicWriteOptions no_sync;
  no_sync.sync = false;
  absl::StatusOr<std::unique_ptr<AtomicFileWriter>> file = AtomicFileWriter::Create(path, no_sync);
  if (!file.ok()) return file.status();
  {
    FileSink sink(**file);
    std::string header(kMagic, sizeof(kMagic));
    PutLE<uint32_t>(&header, kColumnarFormatVersion);
    if (absl::Status s = sink.Append(header.data(), header.size()); !s.ok()) return s;

    const int64_t be = options_.basket_entries;
    const int64_t num_baskets = (entries_ + be - 1) / be;
    std::string footer;
    PutLE<uint64_t>(&footer, static_cast<uint64_t>(entries_));
    PutLE<uint64_t>(&footer, static_cast<uint64_t>(be));
    PutLE<uint32_t>(&footer, static_cast<uint32_t>(columns_.size()));
    BasketWriter baskets(sink, options_.compression_level, path, footer);
    for (const PendingColumn& column : columns_) {
      const size_t elem = ElementSize(column.type);
      PutLE<uint16_t>(&footer, static_cast<uint16_t>(column.name.size()));
      footer += column.name;
      PutU8(&footer, static_cast<uint8_t>(column.type));
      PutU8(&footer, column.jagged ? 1 : 0);
      PutLE<uint32_t>(&footer, static_cast<uint32_t>(num_baskets));
      for (int64_t b = 0; b < num_baskets; ++b) {
        const int64_t first = b * be;
        const int64_t last = std::min(entries_, first + be);
        absl::Status s =
            column.jagged
                ? baskets.WriteJagged(column.end_offsets, column.values.data(), elem, first, last)
                : baskets.WriteFlat(column.values.data(), elem, first, last);
        if (!s.ok()) return s;
      }
    }
    const std::string trailer = Trailer(sink.position(), footer);
    if (absl::Status s = sink.Append(footer.data(), footer.size()); !s.ok()) return s;
    if (absl::Status s = sink.Append(trailer.data(), trailer.size()); !s.ok()) return s;
  }
  return (*file)->Commit();
}

// ---------------------------------------------------------------------------------------------
// Reader

namespace {
struct ThreadDecompressor {
  ZSTD_DCtx* ctx = ZSTD_createDCtx();
  ~ThreadDecompressor() { ZSTD_freeDCtx(ctx); }
};

// One decompression context per thread, reused across Readers (creating one costs ~100 KB).
ZSTD_DCtx* ThreadDecompressionContext() {
  thread_local ThreadDecompressor decompressor;
  return decompressor.ctx;
}

absl::Status Corrupt(absl::string_view path, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("columnar file ", path, " is corrupt: ", what));
}

// Where the trailer says the footer is.
struct FooterLocation {
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t crc = 0;
};

// The header's and the trailer's magic and version, and the footer between the header and
// the trailer (at `trailer_offset`).
absl::StatusOr<FooterLocation> CheckHeaderAndTrailer(absl::string_view path, const uint8_t* header,
                                                     const uint8_t* trailer,
                                                     uint64_t trailer_offset, int64_t file_size) {
  if (std::memcmp(header, kMagic, sizeof(kMagic)) != 0) {
    return absl::DataLossError(
        absl::StrCat("columnar file ", path, ": bad magic at the start (not a columnar file)"));
  }
  if (std::memcmp(trailer + kTrailerSize - sizeof(kMagic), kMagic, sizeof(kMagic)) != 0) {
    return absl::DataLossError(absl::StrCat(
        "columnar file ", path, ": bad magic at the end (truncated or not a columnar file)"));
  }
  const uint32_t version = GetLE<uint32_t>(header + 8);
  const uint32_t trailer_version = GetLE<uint32_t>(trailer + 20);
  if (version != trailer_version) return Corrupt(path, "header and trailer versions differ");
  if (version != kColumnarFormatVersion) {
    return absl::FailedPreconditionError(absl::StrCat("columnar file ", path, " has version ",
                                                      version, ", this reader supports ",
                                                      kColumnarFormatVersion));
  }
  FooterLocation footer;
  footer.offset = GetLE<uint64_t>(trailer);
  footer.size = GetLE<uint64_t>(trailer + 8);
  footer.crc = GetLE<uint32_t>(trailer + 16);
  if (footer.offset < kHeaderSize || footer.offset > trailer_offset ||
      footer.size != trailer_offset - footer.offset) {
    return Corrupt(path, absl::StrCat("footer at offset ", footer.offset, " size ", footer.size,
                                      " does not fit a file of ", file_size, " bytes"));
  }
  return footer;
}

// The footer's column table: entries, basket size and each column's baskets.
struct ColumnTable {
  int64_t entries = 0;
  int64_t basket_entries = 0;
  std::vector<ColumnInfo> columns;
};

// The locations of `column`'s baskets; each must lie between the header and the footer (at
// `footer_offset`) and have the size its entries need.
absl::Status ParseBaskets(absl::string_view path, Cursor& c, const ColumnTable& table,
                          uint64_t footer_offset, ColumnInfo& column) {
  const auto blob_ok = [&](const BlobLocation& b) {
    return b.offset >= kHeaderSize && b.offset <= footer_offset &&
           b.compressed_size <= footer_offset - b.offset && b.uncompressed_size <= kMaxBlobBytes;
  };
  const size_t elem = ElementSize(column.type);
  for (size_t b = 0; b < column.baskets.size(); ++b) {
    BasketInfo& basket = column.baskets[b];
    basket.entry_start = static_cast<int64_t>(b * static_cast<uint64_t>(table.basket_entries));
    basket.entry_stop = std::min<int64_t>(table.entries, basket.entry_start + table.basket_entries);
    const uint64_t n = static_cast<uint64_t>(basket.entry_stop - basket.entry_start);
    if (column.jagged && !GetBlob(&c, &basket.offsets)) {
      return Corrupt(path, absl::StrCat("column table truncated in column ", column.name));
    }
    if (!GetBlob(&c, &basket.values)) {
      return Corrupt(path, absl::StrCat("column table truncated in column ", column.name));
    }
    const bool sizes_ok = column.jagged ? basket.offsets.uncompressed_size == (n + 1) * 8 &&
                                              basket.values.uncompressed_size % elem == 0 &&
                                              blob_ok(basket.offsets)
                                        : basket.values.uncompressed_size == n * elem;
    if (!sizes_ok || !blob_ok(basket.values)) {
      return Corrupt(path, absl::StrCat("column ", column.name, " basket ", b,
                                        " has an inconsistent location or size"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ColumnTable> ParseColumnTable(absl::string_view path,
                                             const std::vector<uint8_t>& footer,
                                             uint64_t footer_offset) {
  Cursor c(footer.data(), footer.size());
  uint64_t entries = 0, basket_entries = 0;
  uint32_t num_columns = 0;
  if (!c.Get(&entries) || !c.Get(&basket_entries) || !c.Get(&num_columns)) {
    return Corrupt(path, "footer too short");
  }
  if (entries > (uint64_t{1} << 48) || basket_entries == 0 ||
      basket_entries > (uint64_t{1} << 40) || num_columns > kMaxColumns) {
    return Corrupt(path, absl::StrCat("implausible footer: entries=", entries, " basket_entries=",
                                      basket_entries, " columns=", num_columns));
  }
  ColumnTable table;
  table.entries = static_cast<int64_t>(entries);
  table.basket_entries = static_cast<int64_t>(basket_entries);
  const uint64_t num_baskets = (entries + basket_entries - 1) / basket_entries;
  for (uint32_t i = 0; i < num_columns; ++i) {
    ColumnInfo column;
    uint16_t name_size = 0;
    uint8_t type = 0, jagged = 0;
    uint32_t baskets = 0;
    if (!c.Get(&name_size) || !c.GetString(name_size, &column.name) || !c.Get(&type) ||
        !c.Get(&jagged) || !c.Get(&baskets)) {
      return Corrupt(path, absl::StrCat("column table truncated at column ", i));
    }
    const bool duplicate =
        std::any_of(table.columns.begin(), table.columns.end(),
                    [&](const ColumnInfo& other) { return other.name == column.name; });
    if (column.name.empty() || duplicate) {
      return Corrupt(path, absl::StrCat("empty or duplicate column name '", column.name, "'"));
    }
    if (!IsValidType(type) || jagged > 1) {
      return Corrupt(path, absl::StrCat("column ", column.name, " has unknown type ", int{type}));
    }
    if (baskets != num_baskets) {
      return Corrupt(path, absl::StrCat("column ", column.name, " has ", baskets,
                                        " baskets, expected ", num_baskets));
    }
    column.type = static_cast<ColumnType>(type);
    column.jagged = jagged == 1;
    column.baskets.resize(baskets);
    if (absl::Status s = ParseBaskets(path, c, table, footer_offset, column); !s.ok()) return s;
    table.columns.push_back(std::move(column));
  }
  if (!c.AtEnd()) return Corrupt(path, "trailing bytes after the column table");
  return table;
}
}  // namespace

Reader::~Reader() {
  if (fd_ >= 0) ::close(fd_);
}

absl::StatusOr<std::unique_ptr<Reader>> Reader::Open(const std::string& path) {
  // O_NONBLOCK: a FIFO must not block the open; the S_ISREG check below then refuses it
  // (reads of a regular file ignore the flag).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string message = absl::StrCat("opening columnar file ", path, ": ", ErrnoText(err));
    if (err == ENOENT) return absl::NotFoundError(message);
    return absl::UnavailableError(message);
  }
  std::unique_ptr<Reader> reader(new Reader(path, fd));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    return absl::UnavailableError(
        absl::StrCat("stat of columnar file ", path, ": ", ErrnoText(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("columnar file ", path, " is not a regular file"));
  }
  reader->file_size_ = st.st_size;
  if (absl::Status s = reader->LoadFooter(); !s.ok()) return s;
  return reader;
}

absl::Status Reader::PreadExactly(uint64_t offset, size_t size, uint8_t* out,
                                  absl::string_view what) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd_, out + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::DataLossError(
          absl::StrCat("columnar file ", path_, ": reading ", what, ": ", ErrnoText(errno)));
    }
    if (n == 0) {
      return absl::DataLossError(absl::StrCat("columnar file ", path_, " is truncated: reading ",
                                              what, " wanted ", size, " bytes at offset ", offset,
                                              ", got ", done));
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status Reader::LoadFooter() {
  if (file_size_ < static_cast<int64_t>(kHeaderSize + kTrailerSize)) {
    return absl::DataLossError(absl::StrCat("columnar file ", path_, " is truncated: ", file_size_,
                                            " bytes, smaller than header + trailer"));
  }
  uint8_t header[kHeaderSize];
  if (absl::Status s = PreadExactly(0, kHeaderSize, header, "header"); !s.ok()) return s;
  uint8_t trailer[kTrailerSize];
  const uint64_t trailer_offset = static_cast<uint64_t>(file_size_) - kTrailerSize;
  if (absl::Status s = PreadExactly(trailer_offset, kTrailerSize, trailer, "trailer"); !s.ok()) {
    return s;
  }
  stats_.metadata_bytes_read += kHeaderSize + kTrailerSize;
  absl::StatusOr<FooterLocation> location =
      CheckHeaderAndTrailer(path_, header, trailer, trailer_offset, file_size_);
  if (!location.ok()) return location.status();
  std::vector<uint8_t> footer(location->size);
  if (absl::Status s = PreadExactly(location->offset, location->size, footer.data(), "footer");
      !s.ok()) {
    return s;
  }
  stats_.metadata_bytes_read += static_cast<int64_t>(location->size);
  if (Crc32(footer.data(), footer.size()) != location->crc) {
    return Corrupt(path_, "footer CRC mismatch");
  }
  absl::StatusOr<ColumnTable> table = ParseColumnTable(path_, footer, location->offset);
  if (!table.ok()) return table.status();
  entries_ = table->entries;
  basket_entries_ = table->basket_entries;
  columns_ = std::move(table->columns);
  return absl::OkStatus();
}

const ColumnInfo* Reader::FindColumn(absl::string_view name) const {
  for (const ColumnInfo& c : columns_) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

absl::StatusOr<const ColumnInfo*> Reader::Lookup(absl::string_view name, ColumnType type,
                                                 bool jagged, int64_t start, int64_t stop) const {
  const ColumnInfo* column = FindColumn(name);
  if (column == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("columnar file ", path_, " has no column '", name, "'"));
  }
  if (column->type != type || column->jagged != jagged) {
    return absl::InvalidArgumentError(
        absl::StrCat("columnar file ", path_, ": column ", name, " is ",
                     column->jagged ? "jagged " : "flat ", ColumnTypeName(column->type),
                     ", read as ", jagged ? "jagged " : "flat ", ColumnTypeName(type)));
  }
  if (start < 0 || stop < start || stop > entries_) {
    return absl::OutOfRangeError(absl::StrCat("columnar file ", path_, ": entry range [", start,
                                              ", ", stop, ") of column ", name, " is outside [0, ",
                                              entries_, ")"));
  }
  return column;
}

absl::Status Reader::ReadBlob(const ColumnInfo& column, int64_t basket, const BlobLocation& blob,
                              std::vector<uint8_t>* out) {
  const std::string what = absl::StrCat("column ", column.name, " basket ", basket);
  scratch_.resize(blob.compressed_size);
  const absl::Time io_start = absl::Now();
  absl::Status read = PreadExactly(blob.offset, blob.compressed_size, scratch_.data(), what);
  stats_.io_time += absl::Now() - io_start;
  if (!read.ok()) return read;
  stats_.compressed_bytes_read += static_cast<int64_t>(blob.compressed_size);
  ++stats_.baskets_read;

  const absl::Time decompress_start = absl::Now();
  out->resize(blob.uncompressed_size);
  const size_t produced = ZSTD_decompressDCtx(ThreadDecompressionContext(), out->data(),
                                              out->size(), scratch_.data(), scratch_.size());
  if (ZSTD_isError(produced)) {
    return absl::DataLossError(absl::StrCat("columnar file ", path_, ": ", what,
                                            " does not decompress: ", ZSTD_getErrorName(produced)));
  }
  if (produced != blob.uncompressed_size) {
    return absl::DataLossError(absl::StrCat("columnar file ", path_, ": ", what,
                                            " decompressed to ", produced, " bytes, expected ",
                                            blob.uncompressed_size));
  }
  if (Crc32(out->data(), out->size()) != blob.crc32) {
    return absl::DataLossError(absl::StrCat("columnar file ", path_, ": CRC mismatch in ", what));
  }
  stats_.uncompressed_bytes_read += static_cast<int64_t>(produced);
  stats_.decompress_time += absl::Now() - decompress_start;
  return absl::OkStatus();
}

template <typename T>
absl::Status Reader::Read(absl::string_view name, int64_t start, int64_t stop,
                          std::vector<T>* out) {
  absl::StatusOr<const ColumnInfo*> column =
      Lookup(name, ColumnTypeOf<T>::kValue, /*jagged=*/false, start, stop);
  if (!column.ok()) return column.status();
  out->clear();
  if (start == stop) return absl::OkStatus();
  out->reserve(stop - start);
  std::vector<uint8_t> raw;
  for (int64_t b = start / basket_entries_; b <= (stop - 1) / basket_entries_; ++b) {
    const BasketInfo& basket = (*column)->baskets[b];
    if (absl::Status s = ReadBlob(**column, b, basket.values, &raw); !s.ok()) return s;
    const int64_t from = std::max(start, basket.entry_start) - basket.entry_start;
    const int64_t to = std::min(stop, basket.entry_stop) - basket.entry_start;
    const size_t old_size = out->size();
    out->resize(old_size + (to - from));
    if (to > from)
      std::memcpy(out->data() + old_size, raw.data() + from * sizeof(T), (to - from) * sizeof(T));
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status Reader::ReadJagged(absl::string_view name, int64_t start, int64_t stop,
                                Jagged<T>* out) {
  absl::StatusOr<const ColumnInfo*> column =
      Lookup(name, ColumnTypeOf<T>::kValue, /*jagged=*/true, start, stop);
  if (!column.ok()) return column.status();
  out->offsets.assign(1, 0);
  out->content.clear();
  if (start == stop) return absl::OkStatus();
  out->offsets.reserve(stop - start + 1);
  std::vector<uint8_t> raw_offsets, raw_content;
  for (int64_t b = start / basket_entries_; b <= (stop - 1) / basket_entries_; ++b) {
    const BasketInfo& basket = (*column)->baskets[b];
    if (absl::Status s = ReadBlob(**column, b, basket.offsets, &raw_offsets); !s.ok()) return s;
    if (absl::Status s = ReadBlob(**column, b, basket.values, &raw_content); !s.ok()) return s;
    // The CRC matched, but a writer bug must still not make us read out of bounds.
    const int64_t n = basket.entry_stop - basket.entry_start;
    const int64_t content_count = static_cast<int64_t>(raw_content.size() / sizeof(T));
    int64_t previous = 0;
    for (int64_t i = 0; i <= n; ++i) {
      const int64_t v = static_cast<int64_t>(GetLE<uint64_t>(raw_offsets.data() + 8 * i));
      if ((i == 0 && v != 0) || v < previous || v > content_count ||
          (i == n && v != content_count)) {
        return absl::DataLossError(absl::StrCat("columnar file ", path_, ": column ", name,
                                                " basket ", b, " has invalid offsets"));
      }
      previous = v;
    }
    const int64_t from = std::max(start, basket.entry_start) - basket.entry_start;
    const int64_t to = std::min(stop, basket.entry_stop) - basket.entry_start;
    const int64_t content_from =
        static_cast<int64_t>(GetLE<uint64_t>(raw_offsets.data() + 8 * from));
    const int64_t content_to = static_cast<int64_t>(GetLE<uint64_t>(raw_offsets.data() + 8 * to));
    const int64_t base = static_cast<int64_t>(out->content.size()) - content_from;
    for (int64_t i = from + 1; i <= to; ++i) {
      out->offsets.push_back(base +
                             static_cast<int64_t>(GetLE<uint64_t>(raw_offsets.data() + 8 * i)));
    }
    const size_t old_size = out->content.size();
    out->content.resize(old_size + (content_to - content_from));
    if (content_to > content_from)
      std::memcpy(out->content.data() + old_size, raw_content.data() + content_from * sizeof(T),
                  (content_to - content_from) * sizeof(T));
  }
  return absl::OkStatus();
}

template absl::Status Reader::Read<float>(absl::string_view, int64_t, int64_t, std::vector<float>*);
template absl::Status Reader::Read<int32_t>(absl::string_view, int64_t, int64_t,
                                            std::vector<int32_t>*);
template absl::Status Reader::Read<int64_t>(absl::string_view, int64_t, int64_t,
                                            std::vector<int64_t>*);
template absl::Status Reader::Read<uint64_t>(absl::string_view, int64_t, int64_t,
                                             std::vector<uint64_t>*);
template absl::Status Reader::ReadJagged<float>(absl::string_view, int64_t, int64_t,
                                                Jagged<float>*);
template absl::Status Reader::ReadJagged<int32_t>(absl::string_view, int64_t, int64_t,
                                                  Jagged<int32_t>*);
template absl::Status Reader::ReadJagged<int64_t>(absl::string_view, int64_t, int64_t,
                                                  Jagged<int64_t>*);
template absl::Status Reader::ReadJagged<uint64_t>(absl::string_view, int64_t, int64_t,
                                                   Jagged<uint64_t>*);

}  // namespace sample_analysis
}  // namespace roastcoffea
