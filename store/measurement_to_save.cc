#include "store/measurement_to_save.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format.h"
#include "google/protobuf/wire_format_lite.h"
#include "store/utf8_repair.h"

namespace roastcoffea {
namespace store_internal {
namespace {

using google::protobuf::internal::WireFormat;
using google::protobuf::internal::WireFormatLite;

// The wire bytes of a message of `size` bytes as field `field`.
uint64_t FieldBytes(int field, size_t size) {
  return WireFormatLite::TagSize(field, WireFormatLite::TYPE_MESSAGE) +
         WireFormatLite::LengthDelimitedSize(size);
}

}  // namespace

void TableRecords::Survey() {
  bytes_at_least_ = 0;
  repaired_ = 0;
  first_repaired_path_.clear();
  // Whether each interned string is valid, by its id, checked once (kUnchecked until then): the
  // records share their datasets, files, workers (and often uuids), in any order.
  constexpr int8_t kUnchecked = -1;
  std::vector<int8_t> valid_by_id;
  const auto interned_valid = [&](uint32_t id, absl::string_view text) {
    if (id >= valid_by_id.size()) valid_by_id.resize(std::max<size_t>(2 * id, 64), kUnchecked);
    if (valid_by_id[id] == kUnchecked) valid_by_id[id] = IsValidUtf8(text) ? 1 : 0;
    return valid_by_id[id] == 1;
  };
  for (size_t i = 0; i < size(); ++i) {
    bool valid = true;
    // A non-empty string field is at least a tag, a length and its text (which a repair only
    // lengthens); a section, a tag and a length; so is the record itself.
    uint64_t bytes_at_least = 2;
    for (int f = 0; f < chunk_field::kStringCount; ++f) {
      const auto field = static_cast<chunk_field::String>(f);
      const absl::string_view text = table_.String(field, i);
      if (text.empty()) continue;
      bytes_at_least += 2 + text.size();
      const bool interned = f < chunk_field::kFirstPerRecordString &&
                            (field != chunk_field::kUuid || table_.UuidsInterned());
      if (!(interned ? interned_valid(table_.StringId(field, i), text) : IsValidUtf8(text))) {
        valid = false;
      }
    }
    for (size_t s = table_.SectionsBegin(i); s < table_.SectionsEnd(i); ++s) {
      const absl::string_view name = table_.Section(s).name;
      bytes_at_least += name.empty() ? 2 : 4 + name.size();
      if (!IsValidUtf8(name)) valid = false;
    }
    bytes_at_least_ += bytes_at_least;
    // The fields outside the columns are checked from the remainder's bytes, or on the record
    // itself when those cannot be walked.
    if (valid && (!table_.HasRest(i) || table_.RestStringsAll(i, IsValidUtf8))) continue;
    table_.ReadRecord(i, &record_);
    if (!ChunkRecordStringsValidUtf8(record_)) {
      std::string first;
      repaired_ += RepairStringsUtf8(&record_, absl::StrCat("chunks[", i, "]"), &first);
      if (first_repaired_path_.empty()) first_repaired_path_ = std::move(first);
    }
  }
}

bool TableRecords::BytesOver(uint64_t limit) {
  if (bytes_at_least_ > limit) return true;
  uint64_t bytes = 0;
  WireBuffer scratch;
  for (size_t i = 0; i < size(); ++i) {
    scratch.clear();
    AppendChunkField(i, &scratch);
    bytes += scratch.size();
    if (bytes > limit) return true;
  }
  return false;
}

size_t TableRecords::AppendChunkField(size_t i, WireBuffer* out) {
  constexpr int kField = v1::Measurement::kChunksFieldNumber;
  constexpr size_t kTagBytes = 1;  // field 4
  // The length is written in 2 bytes first (records of 128 B to 16 KiB), the record after it
  // moved when its length takes other than 2.
  constexpr size_t kGuessedLengthBytes = 2;
  const bool direct = repaired_ == 0;
  const size_t bound = direct ? table_.RecordWireBytesBound(i) : Read(i).GetCachedSize();
  uint8_t* const begin = out->Reserve(kTagBytes + 5 + bound);
  uint8_t* const body = begin + kTagBytes + kGuessedLengthBytes;
  const uint8_t* const end =
      direct ? table_.WriteRecordWireBytes(i, body) : record_.SerializeWithCachedSizesToArray(body);
  const size_t size = static_cast<size_t>(end - body);
  const size_t length_bytes = google::protobuf::io::CodedOutputStream::VarintSize32(size);
  if (length_bytes != kGuessedLengthBytes) {
    std::memmove(begin + kTagBytes + length_bytes, body, size);
  }
  uint8_t* at =
      WireFormatLite::WriteTagToArray(kField, WireFormatLite::WIRETYPE_LENGTH_DELIMITED, begin);
  at = google::protobuf::io::CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(size),
                                                                     at);
  out->Commit(at + size);
  return size;
}

const v1::ChunkRecord& TableRecords::Read(size_t i) {
  table_.ReadRecord(i, &record_);
  // Only a table found to hold such strings is checked again.
  if (repaired_ > 0 && !ChunkRecordStringsValidUtf8(record_)) {
    RepairStringsUtf8(&record_, nullptr);
  }
  record_.ByteSizeLong();
  return record_;
}

bool MeasurementToSave::BytesOver(uint64_t limit) const {
  using M = v1::Measurement;
  const M& m = *measurement;
  uint64_t bytes = 0;
  const auto add = [&bytes](int field, const google::protobuf::MessageLite& message) {
    bytes += FieldBytes(field, message.ByteSizeLong());
  };
  if (has_metadata()) add(M::kMetadataFieldNumber, Metadata());
  if (m.has_report()) add(M::kReportFieldNumber, m.report());
  if (m.has_tracking()) add(M::kTrackingFieldNumber, m.tracking());
  for (const v1::ChunkRecord& record : m.chunks()) add(M::kChunksFieldNumber, record);
  for (const v1::Span& span : m.spans()) add(M::kSpansFieldNumber, span);
  if (m.has_metrics()) add(M::kMetricsFieldNumber, m.metrics());
  for (const v1::Profile& profile : m.profiles()) add(M::kProfilesFieldNumber, profile);
  for (const v1::Warning& warning : m.warnings()) add(M::kWarningsFieldNumber, warning);
  if (appended_warning != nullptr) add(M::kWarningsFieldNumber, *appended_warning);
  for (const v1::ChunkRecord& record : m.rejected_chunks()) {
    add(M::kRejectedChunksFieldNumber, record);
  }
  bytes += WireFormat::ComputeUnknownFieldsSize(m.GetReflection()->GetUnknownFields(m));
  // The table's records last: their sizes are not cached, the writers size them as they go.
  if (bytes > limit) return true;
  return chunks != nullptr && chunks->BytesOver(limit - bytes);
}

bool AtomicFileOutput::Write(const void* buffer, int size) {
  status_ = out_.Append(absl::string_view(static_cast<const char*>(buffer), size));
  return status_.ok();
}

absl::Status WriteMeasurementBinary(const MeasurementToSave& to_save, AtomicFileWriter& out) {
  using M = v1::Measurement;
  const M& m = *to_save.measurement;
  if (to_save.chunks != nullptr && m.chunks_size() > 0) {
    return absl::InvalidArgumentError(
        "a measurement with chunk records of its own and a chunk table beside");
  }
  AtomicFileOutput file(out);
  // 1 MiB blocks, as the parts: the message is never held as one string.
  google::protobuf::io::CopyingOutputStreamAdaptor stream(&file, 1 << 20);
  google::protobuf::io::CodedOutputStream coded(&stream);
  // The generated serializer's order: fields by number, each as it sets them, unknown ones last.
  if (to_save.has_metadata()) {
    WireFormatLite::WriteMessage(M::kMetadataFieldNumber, to_save.Metadata(), &coded);
  }
  if (m.has_report()) WireFormatLite::WriteMessage(M::kReportFieldNumber, m.report(), &coded);
  if (m.has_tracking()) {
    WireFormatLite::WriteMessage(M::kTrackingFieldNumber, m.tracking(), &coded);
  }
  for (const v1::ChunkRecord& record : m.chunks()) {
    WireFormatLite::WriteMessage(M::kChunksFieldNumber, record, &coded);
  }
  if (to_save.chunks != nullptr) {
    // From the columns, in blocks of about 256 KiB copied into the stream's buffer (a block of
    // 1 MiB, grown to 2, was 1 MB more of a 10^5-record save's peak).
    WireBuffer block;
    for (size_t i = 0; i < to_save.chunks->size() && !coded.HadError(); ++i) {
      to_save.chunks->AppendChunkField(i, &block);
      if (block.size() >= (256 << 10) || i + 1 == to_save.chunks->size()) {
        coded.WriteRaw(block.view().data(), static_cast<int>(block.size()));
        block.clear();
      }
    }
  }
  for (const v1::Span& span : m.spans()) {
    WireFormatLite::WriteMessage(M::kSpansFieldNumber, span, &coded);
  }
  if (m.has_metrics()) WireFormatLite::WriteMessage(M::kMetricsFieldNumber, m.metrics(), &coded);
  for (const v1::Profile& profile : m.profiles()) {
    WireFormatLite::WriteMessage(M::kProfilesFieldNumber, profile, &coded);
  }
  for (const v1::Warning& warning : m.warnings()) {
    WireFormatLite::WriteMessage(M::kWarningsFieldNumber, warning, &coded);
  }
  if (to_save.appended_warning != nullptr) {
    WireFormatLite::WriteMessage(M::kWarningsFieldNumber, *to_save.appended_warning, &coded);
  }
  for (const v1::ChunkRecord& record : m.rejected_chunks()) {
    WireFormatLite::WriteMessage(M::kRejectedChunksFieldNumber, record, &coded);
  }
  WireFormat::SerializeUnknownFields(m.GetReflection()->GetUnknownFields(m), &coded);
  coded.Trim();
  if (coded.HadError() || !stream.Flush()) {
    return file.status().ok() ? absl::InternalError("cannot serialize the measurement")
                              : file.status();
  }
  return absl::OkStatus();
}

}  // namespace store_internal
}  // namespace roastcoffea
