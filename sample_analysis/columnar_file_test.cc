#include "sample_analysis/columnar_file.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace sample_analysis {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

std::string TestPath(const std::string& name) {
  return absl::StrCat(TempDir(), "/", name, ".rcol");
}

std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

void WriteBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// 10 entries in baskets of 3: baskets [0,3) [3,6) [6,9) [9,10) -- the last one partial.
constexpr int64_t kEntries = 10;
const std::vector<float> kFloats = {0.5f, -1.25f, 3e8f, 0, 1, 2, 3, 4, 5, 6.75f};
const std::vector<int32_t> kInt32s = {-7, 0, 1, 2, 3, 4, 5, 6, INT32_MIN, INT32_MAX};
const std::vector<int64_t> kInt64s = {INT64_MIN, -1, 0, 1, 2, 3, 4, 5, 6, INT64_MAX};
const std::vector<uint64_t> kUInt64s = {0, 1, 2, 3, 4, 5, 6, 7, 8, UINT64_MAX};
// Empty events at the start, in the middle, a whole empty basket ([6,9)) and at the end.
const std::vector<int64_t> kCounts = {0, 2, 1, 3, 0, 2, 0, 0, 0, 0};
const std::vector<float> kJaggedFloats = {1, 2, 3, 4, 5, 6, 7, 8};
const std::vector<int32_t> kJaggedInt32s = {-1, -2, -3, -4, -5, -6, -7, -8};
const std::vector<int64_t> kJaggedInt64s = {10, 20, 30, 40, 50, 60, 70, 80};
const std::vector<uint64_t> kJaggedUInt64s = {11, 21, 31, 41, 51, 61, 71, UINT64_MAX};

std::string WriteAllTypes(const std::string& name, int64_t basket_entries = 3) {
  Writer writer(kEntries, WriterOptions{basket_entries, 3});
  EXPECT_TRUE(writer.AddColumn<float>("f", kFloats).ok());
  EXPECT_TRUE(writer.AddColumn<int32_t>("i32", kInt32s).ok());
  EXPECT_TRUE(writer.AddColumn<int64_t>("i64", kInt64s).ok());
  EXPECT_TRUE(writer.AddColumn<uint64_t>("u64", kUInt64s).ok());
  EXPECT_TRUE(writer.AddJaggedColumn<float>("jf", kCounts, kJaggedFloats).ok());
  EXPECT_TRUE(writer.AddJaggedColumn<int32_t>("ji32", kCounts, kJaggedInt32s).ok());
  EXPECT_TRUE(writer.AddJaggedColumn<int64_t>("ji64", kCounts, kJaggedInt64s).ok());
  EXPECT_TRUE(writer.AddJaggedColumn<uint64_t>("ju64", kCounts, kJaggedUInt64s).ok());
  const std::string path = TestPath(name);
  const absl::Status status = writer.Write(path);
  EXPECT_TRUE(status.ok()) << status;
  return path;
}

template <typename T>
std::vector<T> Slice(const std::vector<T>& v, int64_t start, int64_t stop) {
  return std::vector<T>(v.begin() + start, v.begin() + stop);
}

// Expected jagged values of entries [start, stop), as one vector per entry.
template <typename T>
std::vector<std::vector<T>> ExpectedJagged(const std::vector<T>& content, int64_t start,
                                           int64_t stop) {
  std::vector<std::vector<T>> result;
  int64_t offset = 0;
  for (int64_t i = 0; i < stop; ++i) {
    if (i >= start) {
      result.emplace_back(content.begin() + offset, content.begin() + offset + kCounts[i]);
    }
    offset += kCounts[i];
  }
  return result;
}

template <typename T>
std::vector<std::vector<T>> Unflatten(const Jagged<T>& jagged) {
  std::vector<std::vector<T>> result;
  EXPECT_EQ(jagged.offsets.front(), 0);
  EXPECT_EQ(jagged.offsets.back(), static_cast<int64_t>(jagged.content.size()));
  for (int64_t i = 0; i < jagged.entries(); ++i) {
    result.emplace_back(jagged.content.begin() + jagged.offsets[i],
                        jagged.content.begin() + jagged.offsets[i + 1]);
  }
  return result;
}

template <typename T>
void ExpectFlat(Reader& reader, const std::string& name, const std::vector<T>& all, int64_t start,
                int64_t stop) {
  std::vector<T> values = {T{42}};  // Read must replace, not append.
  const absl::Status status = reader.Read<T>(name, start, stop, &values);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(values, Slice(all, start, stop)) << name << " [" << start << "," << stop << ")";
}

template <typename T>
void ExpectJagged(Reader& reader, const std::string& name, const std::vector<T>& content,
                  int64_t start, int64_t stop) {
  Jagged<T> values;
  values.content = {T{42}};
  const absl::Status status = reader.ReadJagged<T>(name, start, stop, &values);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(values.entries(), stop - start);
  EXPECT_EQ(Unflatten(values), ExpectedJagged(content, start, stop))
      << name << " [" << start << "," << stop << ")";
}

TEST(ColumnarFileTest, RoundTripsEveryTypeOverEveryRange) {
  const std::string path = WriteAllTypes("roundtrip");
  absl::StatusOr<std::unique_ptr<Reader>> reader = Reader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->entries(), kEntries);
  EXPECT_EQ((*reader)->basket_entries(), 3);
  ASSERT_EQ((*reader)->columns().size(), 8u);
  EXPECT_EQ((*reader)->columns()[0].baskets.size(), 4u);
  for (int64_t start = 0; start <= kEntries; ++start) {
    for (int64_t stop = start; stop <= kEntries; ++stop) {
      ExpectFlat(**reader, "f", kFloats, start, stop);
      ExpectFlat(**reader, "i32", kInt32s, start, stop);
      ExpectFlat(**reader, "i64", kInt64s, start, stop);
      ExpectFlat(**reader, "u64", kUInt64s, start, stop);
      ExpectJagged(**reader, "jf", kJaggedFloats, start, stop);
      ExpectJagged(**reader, "ji32", kJaggedInt32s, start, stop);
      ExpectJagged(**reader, "ji64", kJaggedInt64s, start, stop);
      ExpectJagged(**reader, "ju64", kJaggedUInt64s, start, stop);
    }
  }
}

TEST(ColumnarFileTest, RoundTripsWithOneBasketAndWithSingleEntryBaskets) {
  for (int64_t basket_entries : {1, 10, 1000}) {
    const std::string path = WriteAllTypes(absl::StrCat("baskets", basket_entries), basket_entries);
    absl::StatusOr<std::unique_ptr<Reader>> reader = Reader::Open(path);
    ASSERT_TRUE(reader.ok()) << reader.status();
    ExpectFlat(**reader, "u64", kUInt64s, 0, kEntries);
    ExpectJagged(**reader, "jf", kJaggedFloats, 0, kEntries);
    ExpectJagged(**reader, "ji64", kJaggedInt64s, 2, 9);
  }
}

TEST(ColumnarFileTest, ZeroEntryFileRoundTrips) {
  Writer writer(0);
  ASSERT_TRUE(writer.AddColumn<float>("x", {}).ok());
  ASSERT_TRUE(writer.AddJaggedColumn<int32_t>("j", {}, {}).ok());
  const std::string path = TestPath("empty");
  ASSERT_TRUE(writer.Write(path).ok());
  absl::StatusOr<std::unique_ptr<Reader>> reader = Reader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->entries(), 0);
  std::vector<float> x;
  EXPECT_TRUE((*reader)->Read<float>("x", 0, 0, &x).ok());
  EXPECT_TRUE(x.empty());
  Jagged<int32_t> j;
  EXPECT_TRUE((*reader)->ReadJagged<int32_t>("j", 0, 0, &j).ok());
  EXPECT_EQ(j.entries(), 0);
  EXPECT_EQ((*reader)->stats().compressed_bytes_read, 0);
}

TEST(ColumnarFileTest, CountsExactlyTheBasketsItReads) {
  const std::string path = WriteAllTypes("counting");
  absl::StatusOr<std::unique_ptr<Reader>> opened = Reader::Open(path);
  ASSERT_TRUE(opened.ok()) << opened.status();
  Reader& reader = **opened;
  EXPECT_GT(reader.stats().metadata_bytes_read, 0);
  EXPECT_EQ(reader.stats().compressed_bytes_read, 0);

  // Entries [4, 7) touch baskets 1 and 2 only.
  const ColumnInfo* f = reader.FindColumn("f");
  ASSERT_NE(f, nullptr);
  std::vector<float> values;
  ASSERT_TRUE(reader.Read<float>("f", 4, 7, &values).ok());
  EXPECT_EQ(reader.stats().baskets_read, 2);
  EXPECT_EQ(reader.stats().compressed_bytes_read,
            static_cast<int64_t>(f->baskets[1].values.compressed_size +
                                 f->baskets[2].values.compressed_size));
  EXPECT_EQ(reader.stats().uncompressed_bytes_read, 6 * 4);

  // A jagged basket is two blobs: offsets and content.
  const ColumnInfo* jf = reader.FindColumn("jf");
  ASSERT_NE(jf, nullptr);
  const ReadStats before = reader.stats();
  Jagged<float> jagged;
  ASSERT_TRUE(reader.ReadJagged<float>("jf", 9, 10, &jagged).ok());
  const BasketInfo& last = jf->baskets[3];
  EXPECT_EQ(reader.stats().baskets_read - before.baskets_read, 2);
  EXPECT_EQ(reader.stats().compressed_bytes_read - before.compressed_bytes_read,
            static_cast<int64_t>(last.offsets.compressed_size + last.values.compressed_size));
  EXPECT_EQ(reader.stats().uncompressed_bytes_read - before.uncompressed_bytes_read,
            static_cast<int64_t>(last.offsets.uncompressed_size + last.values.uncompressed_size));
  EXPECT_GE(reader.stats().io_time, absl::ZeroDuration());
}

TEST(ColumnarFileTest, ReadingEverythingReadsTheWholeFile) {
  const std::string path = WriteAllTypes("whole");
  absl::StatusOr<std::unique_ptr<Reader>> opened = Reader::Open(path);
  ASSERT_TRUE(opened.ok()) << opened.status();
  Reader& reader = **opened;
  int64_t uncompressed = 0;
  for (const ColumnInfo& column : reader.columns()) {
    uncompressed += column.uncompressed_bytes();
    absl::Status status;
    switch (column.type) {
      case ColumnType::kFloat32: {
        std::vector<float> v;
        Jagged<float> j;
        status = column.jagged ? reader.ReadJagged<float>(column.name, 0, kEntries, &j)
                               : reader.Read<float>(column.name, 0, kEntries, &v);
        break;
      }
      case ColumnType::kInt32: {
        std::vector<int32_t> v;
        Jagged<int32_t> j;
        status = column.jagged ? reader.ReadJagged<int32_t>(column.name, 0, kEntries, &j)
                               : reader.Read<int32_t>(column.name, 0, kEntries, &v);
        break;
      }
      case ColumnType::kInt64: {
        std::vector<int64_t> v;
        Jagged<int64_t> j;
        status = column.jagged ? reader.ReadJagged<int64_t>(column.name, 0, kEntries, &j)
                               : reader.Read<int64_t>(column.name, 0, kEntries, &v);
        break;
      }
      case ColumnType::kUInt64: {
        std::vector<uint64_t> v;
        Jagged<uint64_t> j;
        status = column.jagged ? reader.ReadJagged<uint64_t>(column.name, 0, kEntries, &j)
                               : reader.Read<uint64_t>(column.name, 0, kEntries, &v);
        break;
      }
    }
    ASSERT_TRUE(status.ok()) << status;
  }
  // Data blobs + header, footer and trailer are the whole file, byte for byte.
  EXPECT_EQ(reader.stats().compressed_bytes_read + reader.stats().metadata_bytes_read,
            reader.file_size());
  EXPECT_EQ(reader.file_size(), static_cast<int64_t>(std::filesystem::file_size(path)));
  EXPECT_EQ(reader.stats().uncompressed_bytes_read, uncompressed);
}

TEST(ColumnarFileTest, WriteIsAtomicAndLeavesNoTemporaryFiles) {
  const std::string dir = absl::StrCat(TempDir(), "/atomic");
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/file.rcol";
  Writer first(2);
  ASSERT_TRUE(first.AddColumn<int32_t>("x", {1, 2}).ok());
  ASSERT_TRUE(first.Write(path).ok());
  Writer second(3);
  ASSERT_TRUE(second.AddColumn<int32_t>("x", {7, 8, 9}).ok());
  ASSERT_TRUE(second.Write(path).ok());  // replaces the old file
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename(), "file.rcol");
    ++files;
  }
  EXPECT_EQ(files, 1);
  absl::StatusOr<std::unique_ptr<Reader>> reader = Reader::Open(path);
  ASSERT_TRUE(reader.ok());
  std::vector<int32_t> x;
  ASSERT_TRUE((*reader)->Read<int32_t>("x", 0, 3, &x).ok());
  EXPECT_THAT(x, ElementsAre(7, 8, 9));

  // A directory that does not exist: an error naming the path, nothing written.
  const absl::Status status = first.Write(dir + "/missing/file.rcol");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("missing/file.rcol"));
}

TEST(ColumnarFileTest, WriterRejectsBadColumns) {
  Writer writer(3);
  ASSERT_TRUE(writer.AddColumn<float>("x", {1, 2, 3}).ok());
  absl::Status s = writer.AddColumn<float>("x", {1, 2, 3});
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(s.message(), HasSubstr("x"));
  s = writer.AddColumn<int32_t>("short", {1, 2});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("short"));
  EXPECT_EQ(writer.AddColumn<int32_t>("", {1, 2, 3}).code(), absl::StatusCode::kInvalidArgument);
  s = writer.AddJaggedColumn<float>("sum", {1, 1, 1}, {1, 2});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("sum"));
  s = writer.AddJaggedColumn<float>("negative", {2, -1, 1}, {1, 2});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("negative"));
  EXPECT_EQ(writer.AddJaggedColumn<float>("counts", {1, 1}, {1, 2}).code(),
            absl::StatusCode::kInvalidArgument);

  Writer bad_options(1, WriterOptions{0, 3});
  s = bad_options.Write(TestPath("bad_options"));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("basket_entries"));
}

TEST(ColumnarFileTest, ReaderRejectsBadRequestsNamingFileAndColumn) {
  const std::string path = WriteAllTypes("requests");
  absl::StatusOr<std::unique_ptr<Reader>> opened = Reader::Open(path);
  ASSERT_TRUE(opened.ok());
  Reader& reader = **opened;
  std::vector<float> values;
  absl::Status s = reader.Read<float>("nope", 0, 1, &values);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("nope"));
  EXPECT_THAT(s.message(), HasSubstr(path));
  s = reader.Read<float>("i32", 0, 1, &values);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("int32"));
  s = reader.Read<float>("jf", 0, 1, &values);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("jagged"));
  for (auto [start, stop] : {std::pair<int64_t, int64_t>{-1, 2}, {0, 11}, {5, 4}, {11, 12}}) {
    s = reader.Read<float>("f", start, stop, &values);
    EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange) << start << "," << stop;
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("[", start, ", ", stop, ")")));
  }
  Jagged<float> jagged;
  EXPECT_EQ(reader.ReadJagged<float>("jf", 3, 11, &jagged).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(reader.ReadJagged<float>("f", 0, 1, &jagged).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(reader.stats().compressed_bytes_read, 0);
}

TEST(ColumnarFileTest, MissingFileIsNotFound) {
  const std::string path = TestPath("does_not_exist");
  absl::StatusOr<std::unique_ptr<Reader>> reader = Reader::Open(path);
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(reader.status().message(), HasSubstr(path));
}

// Reliability study D4: a FIFO blocked in open(); a device would be read without end.
TEST(ColumnarFileTest, FifoAndDeviceAreRefusedWithoutBlocking) {
  const std::string fifo = TestPath("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo, std::string("/dev/zero")}) {
    absl::StatusOr<std::unique_ptr<Reader>> reader = Reader::Open(path);
    EXPECT_EQ(reader.status().code(), absl::StatusCode::kInvalidArgument) << path;
    EXPECT_THAT(reader.status().message(), HasSubstr("is not a regular file"));
  }
}

TEST(ColumnarFileTest, TruncatedFilesAreDataLoss) {
  const std::string path = WriteAllTypes("truncate_source");
  const std::vector<uint8_t> bytes = ReadBytes(path);
  const std::string truncated = TestPath("truncated");
  for (size_t keep :
       {size_t{0}, size_t{5}, size_t{12}, size_t{40}, bytes.size() / 2, bytes.size() - 1}) {
    WriteBytes(truncated, std::vector<uint8_t>(bytes.begin(), bytes.begin() + keep));
    absl::StatusOr<std::unique_ptr<Reader>> reader = Reader::Open(truncated);
    EXPECT_EQ(reader.status().code(), absl::StatusCode::kDataLoss) << keep;
    EXPECT_THAT(reader.status().message(), HasSubstr(truncated));
  }
}

TEST(ColumnarFileTest, BadMagicIsDataLoss) {
  const std::string path = WriteAllTypes("magic");
  std::vector<uint8_t> bytes = ReadBytes(path);
  bytes[0] = 'X';
  WriteBytes(path, bytes);
  absl::StatusOr<std::unique_ptr<Reader>> reader = Reader::Open(path);
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(reader.status().message(), HasSubstr("magic"));
  EXPECT_THAT(reader.status().message(), HasSubstr(path));

  WriteBytes(path, std::vector<uint8_t>(200, 'a'));
  reader = Reader::Open(path);
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(reader.status().message(), HasSubstr("magic"));
}

TEST(ColumnarFileTest, CorruptBasketIsCaughtByItsCrc) {
  const std::string path = WriteAllTypes("crc");
  uint32_t stored_crc = 0;
  {
    absl::StatusOr<std::unique_ptr<Reader>> reader = Reader::Open(path);
    ASSERT_TRUE(reader.ok());
    stored_crc = (*reader)->FindColumn("i64")->baskets[1].values.crc32;
  }
  // Change the basket's CRC in the footer and re-seal the footer, so that only the basket CRC
  // disagrees with the (intact) data.
  std::vector<uint8_t> bytes = ReadBytes(path);
  const size_t trailer = bytes.size() - 32;
  uint64_t footer_offset = 0;
  for (int i = 0; i < 8; ++i) footer_offset |= uint64_t{bytes[trailer + i]} << (8 * i);
  int patched = 0;
  for (size_t i = footer_offset; i + 4 <= trailer; ++i) {
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v |= uint32_t{bytes[i + k]} << (8 * k);
    if (v == stored_crc) {
      bytes[i] ^= 0x01;
      ++patched;
      break;
    }
  }
  ASSERT_EQ(patched, 1);
  const uint32_t footer_crc = static_cast<uint32_t>(
      crc32(crc32(0L, Z_NULL, 0), bytes.data() + footer_offset, trailer - footer_offset));
  for (int k = 0; k < 4; ++k) bytes[trailer + 16 + k] = (footer_crc >> (8 * k)) & 0xff;
  WriteBytes(path, bytes);

  absl::StatusOr<std::unique_ptr<Reader>> reader = Reader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::vector<int64_t> values;
  EXPECT_TRUE((*reader)->Read<int64_t>("i64", 0, 3, &values).ok());  // basket 0 is fine
  const absl::Status s = (*reader)->Read<int64_t>("i64", 3, 6, &values);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("CRC mismatch"));
  EXPECT_THAT(s.message(), HasSubstr("i64 basket 1"));
  EXPECT_THAT(s.message(), HasSubstr(path));
}

TEST(ColumnarFileTest, CorruptFooterIsCaughtByItsCrc) {
  const std::string path = WriteAllTypes("footer_crc");
  std::vector<uint8_t> bytes = ReadBytes(path);
  bytes[bytes.size() - 40] ^= 0x10;  // inside the footer
  WriteBytes(path, bytes);
  absl::StatusOr<std::unique_ptr<Reader>> reader = Reader::Open(path);
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(reader.status().message(), HasSubstr("footer CRC mismatch"));
}

// Reads every column over the whole file; returns the first error.
absl::Status ReadEverything(Reader& reader) {
  for (const ColumnInfo& column : reader.columns()) {
    absl::Status status;
    if (column.type == ColumnType::kFloat32) {
      Jagged<float> j;
      std::vector<float> v;
      status = column.jagged ? reader.ReadJagged<float>(column.name, 0, reader.entries(), &j)
                             : reader.Read<float>(column.name, 0, reader.entries(), &v);
    } else if (column.type == ColumnType::kInt32) {
      Jagged<int32_t> j;
      std::vector<int32_t> v;
      status = column.jagged ? reader.ReadJagged<int32_t>(column.name, 0, reader.entries(), &j)
                             : reader.Read<int32_t>(column.name, 0, reader.entries(), &v);
    } else if (column.type == ColumnType::kInt64) {
      Jagged<int64_t> j;
      std::vector<int64_t> v;
      status = column.jagged ? reader.ReadJagged<int64_t>(column.name, 0, reader.entries(), &j)
                             : reader.Read<int64_t>(column.name, 0, reader.entries(), &v);
    } else {
      Jagged<uint64_t> j;
      std::vector<uint64_t> v;
      status = column.jagged ? reader.ReadJagged<uint64_t>(column.name, 0, reader.entries(), &j)
                             : reader.Read<uint64_t>(column.name, 0, reader.entries(), &v);
    }
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

TEST(ColumnarFileTest, FlippingAnyByteNeverCrashesAndIsAlmostAlwaysDetected) {
  const std::string path = WriteAllTypes("fuzz_source");
  const std::vector<uint8_t> original = ReadBytes(path);
  const std::string mutated = TestPath("fuzz");
  int detected = 0;
  int flips = 0;
  for (size_t i = 0; i < original.size(); ++i) {
    for (uint8_t mask : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}}) {
      std::vector<uint8_t> bytes = original;
      bytes[i] ^= mask;
      WriteBytes(mutated, bytes);
      ++flips;
      absl::StatusOr<std::unique_ptr<Reader>> reader = Reader::Open(mutated);
      absl::Status status = reader.ok() ? ReadEverything(**reader) : reader.status();
      if (!status.ok()) {
        ++detected;
        EXPECT_THAT(status.message(), HasSubstr(mutated)) << "byte " << i;
      }
    }
  }
  // zstd frame headers have a few bits that do not change the output; everything else (data,
  // footer, trailer, header) is guarded by a CRC, a magic or a consistency check.
  EXPECT_GE(detected, flips * 95 / 100) << detected << " of " << flips;
}

}  // namespace
}  // namespace sample_analysis
}  // namespace roastcoffea
