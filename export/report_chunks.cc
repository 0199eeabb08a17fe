#include "export/report_chunks.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <vector>

#include "google/protobuf/stubs/common.h"

namespace roastcoffea {
namespace {

// A reader of a record's wire form for the few fields the report uses; what protobuf would
// refuse is refused (a varint over 10 bytes, a field cut short, field number 0, wire types 6 and
// 7), what it keeps apart as unknown (a field of another wire type) is skipped. Groups (wire
// types 3 and 4, never written by us) are left to protobuf: kUnsupported.
class RecordWire {
 public:
  enum Result { kOk, kBad, kUnsupported };
  explicit RecordWire(absl::string_view bytes)
      : p_(bytes.data()), end_(bytes.data() + bytes.size()) {}

  bool done() const { return p_ == end_; }

  // The next field's number and wire type.
  Result NextField(uint32_t* number, uint32_t* wire_type) {
    uint32_t tag = 0;
    if (!Tag(&tag) || (tag >> 3) == 0) return kBad;
    *number = tag >> 3;
    *wire_type = tag & 7;
    if (*wire_type == 3 || *wire_type == 4) return kUnsupported;
    return *wire_type <= 5 ? kOk : kBad;
  }

  // A tag as protobuf reads it: a varint of at most 5 bytes, its value modulo 2^32 (a fifth
  // byte's high bits dropped); refusing those records made `collect report` fail on a record
  // `collect show` reads.
  bool Tag(uint32_t* tag) {
    uint32_t result = 0;
    for (int shift = 0; shift < 35 && p_ < end_; shift += 7) {
      const auto byte = static_cast<uint8_t>(*p_++);
      result |= static_cast<uint32_t>(byte & 0x7f) << shift;
      if (byte < 0x80) {
        *tag = result;
        return true;
      }
    }
    return false;
  }

  bool Varint(uint64_t* value) {
    if (p_ < end_ && static_cast<uint8_t>(*p_) < 0x80) {  // most tags and small numbers
      *value = static_cast<uint8_t>(*p_++);
      return true;
    }
    uint64_t result = 0;
    for (int shift = 0; shift < 70 && p_ < end_; shift += 7) {
      const auto byte = static_cast<uint8_t>(*p_++);
      result |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (byte < 0x80) {
        *value = result;
        return true;
      }
    }
    return false;
  }

  bool Fixed64(uint64_t* value) {
    if (end_ - p_ < 8) return false;
    uint64_t result = 0;  // little-endian on the wire
    for (int i = 7; i >= 0; --i) result = (result << 8) | static_cast<uint8_t>(p_[i]);
    *value = result;
    p_ += 8;
    return true;
  }

  bool Bytes(absl::string_view* value) {
    uint64_t size = 0;
    if (!Varint(&size) || size > static_cast<uint64_t>(end_ - p_) || size > INT_MAX) return false;
    *value = absl::string_view(p_, static_cast<size_t>(size));
    p_ += size;
    return true;
  }

  // A varint passed over without its value: at most 10 bytes, the last one's high bit clear.
  bool SkipVarint() {
    const char* const limit = end_ - p_ > 10 ? p_ + 10 : end_;
    while (p_ < limit && (static_cast<uint8_t>(*p_) & 0x80) != 0) ++p_;
    if (p_ == limit) return false;
    ++p_;
    return true;
  }

  bool Skip(uint32_t wire_type) {
    uint64_t ignored = 0;
    absl::string_view bytes;
    switch (wire_type) {
      case 0:
        return SkipVarint();
      case 1:
        return Fixed64(&ignored);
      case 2:
        return Bytes(&bytes);
      default:  // 5
        if (end_ - p_ < 4) return false;
        p_ += 4;
        return true;
    }
  }

  // A field of the type its number has: read; of another: skipped, the value kept.
  bool Int64(uint32_t wire_type, int64_t* value) {
    uint64_t raw = 0;
    if (wire_type != 0) return Skip(wire_type);
    if (!Varint(&raw)) return false;
    *value = static_cast<int64_t>(raw);
    return true;
  }
  bool Double(uint32_t wire_type, double* value) {
    uint64_t raw = 0;
    if (wire_type != 1) return Skip(wire_type);
    if (!Fixed64(&raw)) return false;
    std::memcpy(value, &raw, sizeof(*value));
    return true;
  }
  bool String(uint32_t wire_type, absl::string_view* value) {
    return wire_type == 2 ? Bytes(value) : Skip(wire_type);
  }

 private:
  const char* p_;
  const char* end_;
};

}  // namespace

template <typename WholeRecord>
void ReportChunks::AddFields(const Fields& fields, absl::string_view worker,
                             absl::string_view dataset, WholeRecord whole) {
  timeline_.Add(fields.timeline, worker, dataset);
  duration_seconds_.push_back(fields.duration_seconds);
  events_.push_back(fields.events);
  uncompressed_bytes_read_.push_back(fields.uncompressed_bytes_read);
  accessed_bytes_.push_back(fields.accessed_bytes);
  accessed_branches_.push_back(fields.accessed_branches);
  failed_.push_back(fields.failed ? 1 : 0);
  if (!ChunkHasTimes(fields.timeline.start_unix_ns, fields.timeline.end_unix_ns)) return;
  if (++timed_count_ <= kMaxGanttChunks) {
    timed_records_.push_back(whole());
    timed_index_.push_back(size() - 1);
  } else if (!timed_records_.empty()) {  // too many to draw one by one
    timed_records_ = std::vector<v1::ChunkRecord>();
    timed_index_ = std::vector<size_t>();
  }
}

void ReportChunks::Add(const v1::ChunkRecord& record) {
  Fields fields;
  fields.timeline.start_unix_ns = record.start_unix_ns();
  fields.timeline.end_unix_ns = record.end_unix_ns();
  fields.timeline.compressed_bytes_read = record.compressed_bytes_read();
  fields.timeline.thread_index = record.thread_index();
  fields.duration_seconds = record.duration_seconds();
  fields.events = record.events();
  fields.uncompressed_bytes_read = record.uncompressed_bytes_read();
  fields.accessed_bytes = record.accessed_bytes();
  fields.accessed_branches = record.accessed_branches_size();
  fields.failed = record.status() == v1::CHUNK_STATUS_FAILED;
  AddFields(fields, record.worker(), record.dataset(), [&] { return record; });
}

bool ReportChunks::AddSerialized(absl::string_view bytes) {
  RecordWire in(bytes);
  Fields fields;
  absl::string_view worker, dataset;
  int64_t status = 0;
  while (!in.done()) {
    uint32_t number = 0, type = 0;
    if (const RecordWire::Result next = in.NextField(&number, &type); next != RecordWire::kOk) {
      if (next == RecordWire::kBad) return false;
      v1::ChunkRecord record;  // with a group: protobuf's parser
      if (!record.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return false;
      Add(record);
      return true;
    }
    bool ok = true;
    switch (number) {
      case v1::ChunkRecord::kDatasetFieldNumber:
        ok = in.String(type, &dataset);
        break;
      case v1::ChunkRecord::kWorkerFieldNumber:
        ok = in.String(type, &worker);
        break;
      case v1::ChunkRecord::kEventsFieldNumber:
        ok = in.Int64(type, &fields.events);
        break;
      case v1::ChunkRecord::kStartUnixNsFieldNumber:
        ok = in.Int64(type, &fields.timeline.start_unix_ns);
        break;
      case v1::ChunkRecord::kEndUnixNsFieldNumber:
        ok = in.Int64(type, &fields.timeline.end_unix_ns);
        break;
      case v1::ChunkRecord::kDurationSecondsFieldNumber:
        ok = in.Double(type, &fields.duration_seconds);
        break;
      case v1::ChunkRecord::kCompressedBytesReadFieldNumber:
        ok = in.Int64(type, &fields.timeline.compressed_bytes_read);
        break;
      case v1::ChunkRecord::kUncompressedBytesReadFieldNumber:
        ok = in.Int64(type, &fields.uncompressed_bytes_read);
        break;
      case v1::ChunkRecord::kThreadIndexFieldNumber:
        ok = in.Int64(type, &fields.timeline.thread_index);
        break;
      case v1::ChunkRecord::kStatusFieldNumber:
        ok = in.Int64(type, &status);
        break;
      case v1::ChunkRecord::kAccessedBranchesFieldNumber:
        if (type == 2) ++fields.accessed_branches;
        ok = in.Skip(type);
        break;
      case v1::ChunkRecord::kAccessedBytesFieldNumber:
        ok = in.Int64(type, &fields.accessed_bytes);
        break;
      default:
        ok = in.Skip(type);
    }
    if (!ok) return false;
  }
  // As protobuf refuses a record whose string fields are not UTF-8.
  for (const absl::string_view name : {worker, dataset}) {
    if (!google::protobuf::internal::IsStructurallyValidUTF8(name.data(),
                                                             static_cast<int>(name.size()))) {
      return false;
    }
  }
  // An enum is an int32 on the wire's low bits, as protobuf keeps it.
  fields.failed = static_cast<int32_t>(status) == v1::CHUNK_STATUS_FAILED;
  bool whole_parsed = true;
  AddFields(fields, worker, dataset, [&] {
    v1::ChunkRecord record;
    whole_parsed = record.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
    return record;
  });
  return whole_parsed;
}

void ReportChunks::Reserve(size_t records) {
  timeline_.Reserve(records);
  duration_seconds_.reserve(records);
  events_.reserve(records);
  uncompressed_bytes_read_.reserve(records);
  accessed_bytes_.reserve(records);
  accessed_branches_.reserve(records);
  failed_.reserve(records);
}

const v1::ChunkRecord* ReportChunks::record(size_t i) const {
  const auto it = std::lower_bound(timed_index_.begin(), timed_index_.end(), i);
  if (it == timed_index_.end() || *it != i) return nullptr;
  return &timed_records_[static_cast<size_t>(it - timed_index_.begin())];
}

ReportChunks ReportChunksOf(const v1::Measurement& measurement) {
  ReportChunks chunks;
  for (const v1::ChunkRecord& record : measurement.chunks()) chunks.Add(record);
  return chunks;
}

}  // namespace roastcoffea
