// A record of a ChunkTable as protobuf wire bytes, straight from the columns (issue #25): the
// save of 10^6 records built, checked, serialized and cleared a v1::ChunkRecord per record
// (1.75 s of a 7 s collect). The bytes are those of the generated serializer: the fields in
// number order, each only when set (proto3: non-zero; `optional`: present), the remainder's
// fields spliced in at their numbers. A remainder holding anything else (unknown fields, a field
// of a newer schema) is not spliced: that record is materialized and serialized.
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "schema/chunk_table.h"

namespace roastcoffea {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;
using Record = v1::ChunkRecord;

// The remainder's fields that are spliced (all length-delimited), in number order.
constexpr int kRestFields[] = {Record::kSectionsFieldNumber, Record::kAccessedBranchesFieldNumber,
                               Record::kFileMetadataFieldNumber, Record::kSlicesFieldNumber,
                               Record::kRetriedTaskIdsFieldNumber};
// Their indices there.
enum RestRun { kSectionsRun, kBranchesRun, kFileMetadataRun, kSlicesRun, kRetriedTaskIdsRun };

bool IsRestField(int number) {
  for (int field : kRestFields) {
    if (field == number) return true;
  }
  return false;
}

// A varint at `*at` (before `end`), `*at` moved past it. False when cut short or too long.
bool ReadVarint(const char** at, const char* end, uint64_t* value) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64 && *at < end; shift += 7) {
    const uint8_t byte = static_cast<uint8_t>(*(*at)++);
    result |= uint64_t{byte & 0x7Fu} << shift;
    if (byte < 0x80) {
      *value = result;
      return true;
    }
  }
  return false;
}

// One length-delimited field at the front of `bytes`: its number, and the field whole (tag,
// length, value) and its value. False when `bytes` does not start with one.
struct DelimitedField {
  int number = 0;
  absl::string_view whole;
  absl::string_view value;
};
bool ReadDelimited(absl::string_view bytes, DelimitedField* field) {
  const char* at = bytes.data();
  const char* const end = bytes.data() + bytes.size();
  uint64_t tag = 0;
  uint64_t size = 0;
  if (!ReadVarint(&at, end, &tag) || tag > UINT32_MAX ||
      WireFormatLite::GetTagWireType(static_cast<uint32_t>(tag)) !=
          WireFormatLite::WIRETYPE_LENGTH_DELIMITED ||
      !ReadVarint(&at, end, &size) || size > static_cast<uint64_t>(end - at)) {
    return false;
  }
  const size_t header = static_cast<size_t>(at - bytes.data());
  field->number = static_cast<int>(WireFormatLite::GetTagFieldNumber(static_cast<uint32_t>(tag)));
  field->whole = bytes.substr(0, header + size);
  field->value = bytes.substr(header, size);
  return true;
}

// Whether `valid` holds for field 1 of the message `bytes` (a string in each message the
// remainder holds: FileMetadata.file, SectionSlice.name, SectionRecord.name), wherever it is. The
// other fields are skipped; false on a group or bytes that do not parse.
bool MessageStringsAll(absl::string_view bytes, absl::FunctionRef<bool(absl::string_view)> valid) {
  const char* at = bytes.data();
  const char* const end = bytes.data() + bytes.size();
  while (at < end) {
    uint64_t tag = 0;
    uint64_t value = 0;
    if (!ReadVarint(&at, end, &tag)) return false;
    switch (WireFormatLite::GetTagWireType(static_cast<uint32_t>(tag))) {
      case WireFormatLite::WIRETYPE_VARINT:
        if (!ReadVarint(&at, end, &value)) return false;
        break;
      case WireFormatLite::WIRETYPE_FIXED64:
        if (end - at < 8) return false;
        at += 8;
        break;
      case WireFormatLite::WIRETYPE_FIXED32:
        if (end - at < 4) return false;
        at += 4;
        break;
      case WireFormatLite::WIRETYPE_LENGTH_DELIMITED:
        if (!ReadVarint(&at, end, &value) || value > static_cast<uint64_t>(end - at)) return false;
        if (tag == WireFormatLite::MakeTag(1, WireFormatLite::WIRETYPE_LENGTH_DELIMITED) &&
            !valid(absl::string_view(at, value))) {
          return false;
        }
        at += value;
        break;
      default:
        return false;
    }
  }
  return true;
}

// The remainder's fields by kRestFields' index, each run of one field's elements contiguous:
// false when `rest` holds another field, or not in number order (as its serializer wrote it).
using RestRuns = absl::string_view[sizeof(kRestFields) / sizeof(kRestFields[0])];
bool SplitRest(absl::string_view rest, RestRuns& runs) {
  for (absl::string_view& run : runs) run = absl::string_view();
  size_t last = 0;
  DelimitedField field;
  while (!rest.empty()) {
    if (!ReadDelimited(rest, &field)) return false;
    size_t index = 0;
    while (index < std::size(kRestFields) && kRestFields[index] != field.number) ++index;
    if (index == std::size(kRestFields) || index < last) return false;
    last = index;
    absl::string_view& run = runs[index];
    const char* const run_begin = run.empty() ? field.whole.data() : run.data();
    const char* const run_end = field.whole.data() + field.whole.size();
    run = absl::string_view(run_begin, static_cast<size_t>(run_end - run_begin));
    rest.remove_prefix(field.whole.size());
  }
  return true;
}

uint8_t* WriteRaw(absl::string_view bytes, uint8_t* target) {
  if (!bytes.empty()) std::memcpy(target, bytes.data(), bytes.size());
  return target + bytes.size();
}

uint8_t* WriteText(int number, absl::string_view text, uint8_t* target) {
  if (text.empty()) return target;
  target =
      WireFormatLite::WriteTagToArray(number, WireFormatLite::WIRETYPE_LENGTH_DELIMITED, target);
  target = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(text.size()), target);
  return WriteRaw(text, target);
}

uint8_t* WriteInt(int number, int64_t value, bool present, uint8_t* target) {
  return present ? WireFormatLite::WriteInt64ToArray(number, value, target) : target;
}

// Set when not +0.0 (bitwise: -0.0 is kept), as the generated code tests it.
bool NonZero(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits != 0;
}

uint8_t* WriteDouble(int number, double value, bool present, uint8_t* target) {
  return present ? WireFormatLite::WriteDoubleToArray(number, value, target) : target;
}

// A section in columns as v1::SectionRecord's bytes, its size first.
size_t SectionBytes(const SectionRow& s) {
  size_t bytes = 0;
  if (!s.name.empty()) bytes += 1 + CodedOutputStream::VarintSize32(s.name.size()) + s.name.size();
  if (s.kind != 0) bytes += 1 + WireFormatLite::EnumSize(s.kind);
  if (s.entries != 0) bytes += 1 + WireFormatLite::UInt32Size(s.entries);
  if (NonZero(s.duration_seconds)) bytes += 9;
  if (NonZero(s.cpu_seconds)) bytes += 9;
  if (s.memory_delta_bytes != 0) bytes += 1 + WireFormatLite::Int64Size(s.memory_delta_bytes);
  if (s.bytes_read != 0) bytes += 1 + WireFormatLite::Int64Size(s.bytes_read);
  return bytes;
}

uint8_t* WriteSection(const SectionRow& s, uint8_t* target) {
  using S = v1::SectionRecord;
  target = WireFormatLite::WriteTagToArray(Record::kSectionsFieldNumber,
                                           WireFormatLite::WIRETYPE_LENGTH_DELIMITED, target);
  target = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(SectionBytes(s)), target);
  target = WriteText(S::kNameFieldNumber, s.name, target);
  if (s.kind != 0) target = WireFormatLite::WriteEnumToArray(S::kKindFieldNumber, s.kind, target);
  if (s.entries != 0) {
    target = WireFormatLite::WriteUInt32ToArray(S::kEntriesFieldNumber, s.entries, target);
  }
  target = WriteDouble(S::kDurationSecondsFieldNumber, s.duration_seconds,
                       NonZero(s.duration_seconds), target);
  target = WriteDouble(S::kCpuSecondsFieldNumber, s.cpu_seconds, NonZero(s.cpu_seconds), target);
  target = WriteInt(S::kMemoryDeltaBytesFieldNumber, s.memory_delta_bytes,
                    s.memory_delta_bytes != 0, target);
  return WriteInt(S::kBytesReadFieldNumber, s.bytes_read, s.bytes_read != 0, target);
}

// The most bytes of a record's fields other than its strings, sections and remainder: 18 ints
// and status (tag <= 2, varint <= 10), 7 doubles (tag <= 2, 8), attempt (2 + 5), and the six
// strings' tags and lengths (2 + 5).
constexpr size_t kFixedBytesBound = 19 * 12 + 7 * 10 + 7 + 6 * 7;
// A section's bytes beyond its name: its tag and length, and seven fields at most.
constexpr size_t kSectionBytesBound = 2 + 5 + 6 + 11 + 6 + 9 + 9 + 11 + 11;

}  // namespace

size_t ChunkTable::RecordWireBytesBound(size_t i) const {
  const absl::string_view rest = rest_.Get(i);
  RestRuns runs;
  if (!rest.empty() && !SplitRest(rest, runs)) return Record(i).ByteSizeLong();
  size_t bytes = kFixedBytesBound + rest.size();
  for (int f = 0; f < chunk_field::kStringCount; ++f) {
    bytes += String(static_cast<chunk_field::String>(f), i).size();
  }
  for (size_t s = SectionsBegin(i); s < SectionsEnd(i); ++s) {
    bytes += kSectionBytesBound + pool_.Get(section_names_[s]).size();
  }
  return bytes;
}

uint8_t* ChunkTable::WriteRecordWireBytes(size_t i, uint8_t* target) const {
  RestRuns runs;
  if (!SplitRest(rest_.Get(i), runs)) {
    const v1::ChunkRecord record = Record(i);
    record.ByteSizeLong();
    return record.SerializeWithCachedSizesToArray(target);
  }
  const auto int_field = [&](int number, chunk_field::Int f, uint8_t* at) {
    const int64_t value = this->Int(f, i);
    return WriteInt(number, value,
                    f >= chunk_field::kFirstOptionalInt ? HasOptional(f, i) : value != 0, at);
  };
  const auto double_field = [&](int number, chunk_field::Double f, uint8_t* at) {
    const double value = this->Double(f, i);
    return WriteDouble(number, value,
                       f >= chunk_field::kFirstOptionalDouble ? HasOptional(f, i) : NonZero(value),
                       at);
  };
  const auto text = [&](int number, chunk_field::String f, uint8_t* at) {
    return WriteText(number, String(f, i), at);
  };
  uint8_t* t = target;
  t = text(Record::kDatasetFieldNumber, chunk_field::kDataset, t);
  t = text(Record::kFileFieldNumber, chunk_field::kFile, t);
  t = text(Record::kUuidFieldNumber, chunk_field::kUuid, t);
  t = int_field(Record::kEntryStartFieldNumber, chunk_field::kEntryStart, t);
  t = int_field(Record::kEntryStopFieldNumber, chunk_field::kEntryStop, t);
  t = int_field(Record::kEventsFieldNumber, chunk_field::kEvents, t);
  t = int_field(Record::kStartUnixNsFieldNumber, chunk_field::kStartUnixNs, t);
  t = int_field(Record::kEndUnixNsFieldNumber, chunk_field::kEndUnixNs, t);
  t = double_field(Record::kDurationSecondsFieldNumber, chunk_field::kDurationSeconds, t);
  t = double_field(Record::kCpuSecondsFieldNumber, chunk_field::kCpuSeconds, t);
  t = int_field(Record::kMemoryBeforeBytesFieldNumber, chunk_field::kMemoryBeforeBytes, t);
  t = int_field(Record::kMemoryAfterBytesFieldNumber, chunk_field::kMemoryAfterBytes, t);
  t = int_field(Record::kMemoryPeakBytesFieldNumber, chunk_field::kMemoryPeakBytes, t);
  t = int_field(Record::kCompressedBytesReadFieldNumber, chunk_field::kCompressedBytesRead, t);
  t = int_field(Record::kUncompressedBytesReadFieldNumber, chunk_field::kUncompressedBytesRead, t);
  // Sections: in the columns or, whole, in the remainder (never both).
  for (size_t s = SectionsBegin(i); s < SectionsEnd(i); ++s) t = WriteSection(Section(s), t);
  t = WriteRaw(runs[kSectionsRun], t);
  t = text(Record::kWorkerFieldNumber, chunk_field::kWorker, t);
  t = int_field(Record::kThreadIndexFieldNumber, chunk_field::kThreadIndex, t);
  if (status(i) != 0)
    t = WireFormatLite::WriteEnumToArray(Record::kStatusFieldNumber, status(i), t);
  t = text(Record::kErrorTextFieldNumber, chunk_field::kErrorText, t);
  if (attempt(i) != 0) {
    t = WireFormatLite::WriteUInt32ToArray(Record::kAttemptFieldNumber, attempt(i), t);
  }
  t = WriteRaw(runs[kBranchesRun], t);
  t = int_field(Record::kAccessedBytesFieldNumber, chunk_field::kAccessedBytes, t);
  t = int_field(Record::kAccessedUncompressedBytesFieldNumber,
                chunk_field::kAccessedUncompressedBytes, t);
  t = double_field(Record::kBranchesReadPercentFieldNumber, chunk_field::kBranchesReadPercent, t);
  t = double_field(Record::kBytesReadPercentFieldNumber, chunk_field::kBytesReadPercent, t);
  t = WriteRaw(runs[kFileMetadataRun], t);
  t = int_field(Record::kAllocatedBytesFieldNumber, chunk_field::kAllocatedBytes, t);
  t = int_field(Record::kPeakLiveBytesFieldNumber, chunk_field::kPeakLiveBytes, t);
  t = WriteRaw(runs[kSlicesRun], t);
  t = int_field(Record::kDroppedSlicesFieldNumber, chunk_field::kDroppedSlices, t);
  t = text(Record::kTaskIdFieldNumber, chunk_field::kTaskId, t);
  t = WriteRaw(runs[kRetriedTaskIdsRun], t);
  t = double_field(Record::kRunQueueWaitSecondsFieldNumber, chunk_field::kRunQueueWaitSeconds, t);
  t = int_field(Record::kFileBytesFieldNumber, chunk_field::kFileBytes, t);
  t = double_field(Record::kMachineLoadFieldNumber, chunk_field::kMachineLoad, t);
  t = double_field(Record::kMachineCpusFieldNumber, chunk_field::kMachineCpus, t);
  return int_field(Record::kReadyUnixNsFieldNumber, chunk_field::kReadyUnixNs, t);
}

void ChunkTable::AppendRecordWireBytes(size_t i, std::string* out) const {
  const size_t old_size = out->size();
  out->resize(old_size + RecordWireBytesBound(i));
  uint8_t* begin = reinterpret_cast<uint8_t*>(&(*out)[old_size]);
  out->resize(old_size + static_cast<size_t>(WriteRecordWireBytes(i, begin) - begin));
}

bool ChunkTable::RestStringsAll(size_t i, absl::FunctionRef<bool(absl::string_view)> valid) const {
  // The string fields: the record's own, and field 1 of the messages held (FileMetadata.file,
  // SectionSlice.name, SectionRecord.name).
  absl::string_view rest = rest_.Get(i);
  DelimitedField field;
  while (!rest.empty()) {
    if (!ReadDelimited(rest, &field) || !IsRestField(field.number)) return false;
    rest.remove_prefix(field.whole.size());
    if (field.number == Record::kAccessedBranchesFieldNumber ||
        field.number == Record::kRetriedTaskIdsFieldNumber) {
      if (!valid(field.value)) return false;
      continue;
    }
    if (!MessageStringsAll(field.value, valid)) return false;
  }
  return true;
}

}  // namespace roastcoffea
