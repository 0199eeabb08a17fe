#include "store/segmented_measurement.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/message.h"
#include "google/protobuf/wire_format_lite.h"
#include "io/regular_file_stream.h"
#include "store/worker_series_ends.h"

namespace roastcoffea {
namespace store_internal {
namespace {

using google::protobuf::internal::WireFormatLite;

// The wire size of `message` as field `field` (its size cached by an earlier ByteSizeLong).
size_t FieldBytes(int field, const google::protobuf::MessageLite& message) {
  return WireFormatLite::TagSize(field, WireFormatLite::TYPE_MESSAGE) +
         WireFormatLite::LengthDelimitedSize(message.GetCachedSize());
}

// Records `first`..`last` of a repeated ChunkRecord field as one part: its byte count, then the
// wire records of a Measurement holding just those records in field `field_number`.
void WriteRecordsPart(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& records, int first,
                      int last, int field_number, google::protobuf::io::CodedOutputStream& coded) {
  size_t bytes = 0;
  for (int i = first; i < last; ++i) bytes += FieldBytes(field_number, records.Get(i));
  coded.WriteVarint32(static_cast<uint32_t>(bytes));
  for (int i = first; i < last; ++i) {
    WireFormatLite::WriteMessage(field_number, records.Get(i), &coded);
  }
}

// The fields of the first part, in order: all but the records (metadata, report and metrics
// even when not set, as empty messages).
void ForEachHeadField(
    const MeasurementToSave& to_save,
    absl::FunctionRef<void(int field, const google::protobuf::MessageLite& message)> visit) {
  using M = v1::Measurement;
  const M& measurement = *to_save.measurement;
  visit(M::kMetadataFieldNumber, to_save.Metadata());
  visit(M::kReportFieldNumber, measurement.report());
  if (measurement.has_tracking()) visit(M::kTrackingFieldNumber, measurement.tracking());
  for (const v1::Span& span : measurement.spans()) visit(M::kSpansFieldNumber, span);
  visit(M::kMetricsFieldNumber, measurement.metrics());
  for (const v1::Profile& p : measurement.profiles()) visit(M::kProfilesFieldNumber, p);
  for (const v1::Warning& w : measurement.warnings()) visit(M::kWarningsFieldNumber, w);
  if (to_save.appended_warning != nullptr) {
    visit(M::kWarningsFieldNumber, *to_save.appended_warning);
  }
}

// A table's records (surveyed) as parts of kChunksPerPart records: each part's wire bytes
// written from the columns into one reused buffer first, which gives its size, then handed to
// `out` whole (the coded stream's buffer flushed first: its copy of 760 MB is skipped).
absl::Status WriteTableParts(TableRecords& records, google::protobuf::io::CodedOutputStream& coded,
                             google::protobuf::io::CopyingOutputStreamAdaptor& stream,
                             AtomicFileWriter& out) {
  WireBuffer part;
  for (size_t first = 0; first < records.size(); first += kChunksPerPart) {
    const size_t last = std::min(records.size(), first + kChunksPerPart);
    part.clear();  // the capacity stays: one part's bytes at most
    for (size_t i = first; i < last; ++i) records.AppendChunkField(i, &part);
    coded.WriteVarint32(static_cast<uint32_t>(part.size()));
    coded.Trim();
    if (coded.HadError() || !stream.Flush()) {
      return absl::InternalError("cannot serialize the measurement's parts");
    }
    if (absl::Status appended = out.Append(part.view()); !appended.ok()) return appended;
  }
  return absl::OkStatus();
}

std::atomic<int64_t> g_segment_threshold_bytes{kDefaultSegmentThresholdBytes};

}  // namespace

int64_t SegmentThresholdBytes() { return g_segment_threshold_bytes.load(); }
void SetSegmentThresholdBytesForTesting(int64_t bytes) { g_segment_threshold_bytes.store(bytes); }

absl::Status WriteMeasurementParts(const v1::Measurement& measurement, AtomicFileWriter& out,
                                   bool records_sized) {
  MeasurementToSave whole;
  whole.measurement = &measurement;
  return WriteMeasurementParts(whole, out, records_sized);
}

absl::Status WriteMeasurementParts(const MeasurementToSave& to_save, AtomicFileWriter& out,
                                   bool records_sized) {
  // Everything but the records: metadata, report, tracking, spans, metrics, profiles, warnings,
  // serialized from the message itself (a copy into a head message held the tracked samples
  // twice: 170 MB more for 10^4 workers of 360 samples).
  using M = v1::Measurement;
  const M& measurement = *to_save.measurement;
  if (to_save.chunks != nullptr && measurement.chunks_size() > 0) {
    return absl::InvalidArgumentError(
        "a measurement with chunk records of its own and a chunk table beside");
  }
  size_t head_bytes = 0;
  // ByteSizeLong also caches the sizes WriteMessage writes below.
  ForEachHeadField(to_save, [&head_bytes](int field, const google::protobuf::MessageLite& message) {
    head_bytes += WireFormatLite::TagSize(field, WireFormatLite::TYPE_MESSAGE) +
                  WireFormatLite::LengthDelimitedSize(message.ByteSizeLong());
  });
  if (head_bytes > static_cast<size_t>(INT_MAX)) {
    return absl::FailedPreconditionError(
        "the measurement without its chunk records is over 2 GiB: cannot be saved");
  }
  AtomicFileOutput file(out);
  {
    // 1 MiB blocks: the writer's own; the first part's size is known (head_bytes) before it.
    google::protobuf::io::CopyingOutputStreamAdaptor stream(&file, 1 << 20);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.WriteVarint32(static_cast<uint32_t>(head_bytes));
    ForEachHeadField(to_save, [&coded](int field, const google::protobuf::MessageLite& message) {
      WireFormatLite::WriteMessage(field, message, &coded);
    });
    // The first part stays in the page cache (`collect show` reads it back, often at once);
    // the records, most of the file and read back seldom, go around it.
    coded.Trim();
    if (!stream.Flush()) return file.status();
    if (absl::Status s = out.SwitchToDirect(); !s.ok()) return s;
    for (const auto& [records, field] :
         {std::pair<const google::protobuf::RepeatedPtrField<v1::ChunkRecord>*, int>{
              &measurement.chunks(), v1::Measurement::kChunksFieldNumber},
          {&measurement.rejected_chunks(), v1::Measurement::kRejectedChunksFieldNumber}}) {
      if (!records_sized) {
        for (auto& record : *records) record.ByteSizeLong();  // sizes cached for the part headers
      }
      for (int first = 0; first < records->size() && !coded.HadError(); first += kChunksPerPart) {
        WriteRecordsPart(*records, first, std::min(records->size(), first + kChunksPerPart), field,
                         coded);
      }
      if (field == M::kChunksFieldNumber && to_save.chunks != nullptr) {
        absl::Status written = WriteTableParts(*to_save.chunks, coded, stream, out);
        if (!written.ok()) return file.status().ok() ? written : file.status();
      }
    }
    coded.Trim();
    if (coded.HadError()) {
      return file.status().ok() ? absl::InternalError("cannot serialize the measurement's parts")
                                : file.status();
    }
  }
  if (!file.status().ok()) return file.status();
  return absl::OkStatus();
}

namespace {

// A field to skip, by its field numbers from the Measurement down.
using FieldPath = std::vector<int>;

// Copies the fields `in` holds (up to its limit or end) to `out`, but those named by `skips`
// (paths below `prefix`): skipped unparsed, or, for a message on the way to one, copied with
// its own fields filtered.
// A message field of `message` (field `number`, length `size` next in `in`) parsed straight into
// it: the tracked samples are not copied first.
bool MergeFieldInto(google::protobuf::io::CodedInputStream& in, int number,
                    google::protobuf::Message* message) {
  const google::protobuf::FieldDescriptor* field =
      message->GetDescriptor()->FindFieldByNumber(number);
  uint32_t size = 0;
  if (!in.ReadVarint32(&size)) return false;
  const google::protobuf::Reflection* reflection = message->GetReflection();
  google::protobuf::Message* target = field->is_repeated()
                                          ? reflection->AddMessage(message, field)
                                          : reflection->MutableMessage(message, field);
  const auto limit = in.PushLimit(static_cast<int>(std::min<uint32_t>(size, INT_MAX)));
  const bool ok =
      target->MergeFromCodedStream(&in) && in.ConsumedEntireMessage() && in.BytesUntilLimit() == 0;
  in.PopLimit(limit);
  return ok;
}

// A chunk record (length next in `in`) appended to `table`, never kept as a message.
bool AppendRecordTo(google::protobuf::io::CodedInputStream& in, ChunkTable* table) {
  uint32_t size = 0;
  if (!in.ReadVarint32(&size)) return false;
  const auto limit = in.PushLimit(static_cast<int>(std::min<uint32_t>(size, INT_MAX)));
  v1::ChunkRecord record;
  const bool ok =
      record.MergeFromCodedStream(&in) && in.ConsumedEntireMessage() && in.BytesUntilLimit() == 0;
  in.PopLimit(limit);
  if (ok) table->Append(record);
  return ok;
}

// The tracking (length next in `in`) merged into `tracking` with each worker series cut to its
// ends as soon as it is parsed: one series is held whole at a time, not the run's steps.
bool MergeTrackingCuttingSeries(google::protobuf::io::CodedInputStream& in, v1::Measurement* into,
                                const MeasurementParts& parts) {
  v1::TrackingData* tracking = into->mutable_tracking();
  uint32_t size = 0;
  if (!in.ReadVarint32(&size)) return false;
  const auto limit = in.PushLimit(static_cast<int>(std::min<uint32_t>(size, INT_MAX)));
  const uint32_t workers_tag = WireFormatLite::MakeTag(v1::TrackingData::kWorkersFieldNumber,
                                                       WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
  std::string rest;  // every other field, parsed at the end
  // Each series is parsed into this one message (its columns keep their capacity: a fresh message
  // per series was a third of `collect report`'s load) and stored once cut.
  v1::WorkerSeries series;
  bool ok = true;
  {
    google::protobuf::io::StringOutputStream stream(&rest);
    google::protobuf::io::CodedOutputStream out(&stream);
    for (uint32_t tag = in.ReadTag(); tag != 0 && ok; tag = in.ReadTag()) {
      if (tag != workers_tag) {
        ok = WireFormatLite::SkipField(&in, tag, &out);
        continue;
      }
      uint32_t series_size = 0;
      ok = in.ReadVarint32(&series_size);
      if (!ok) break;
      const auto series_limit =
          in.PushLimit(static_cast<int>(std::min<uint32_t>(series_size, INT_MAX)));
      series.Clear();
      ok = series.MergeFromCodedStream(&in) && in.ConsumedEntireMessage() &&
           in.BytesUntilLimit() == 0;
      in.PopLimit(series_limit);
      if (ok && parts.visit_whole_series != nullptr) (*parts.visit_whole_series)(series, *into);
      TakeWorkerSeriesEnds(&series, tracking->add_workers());
    }
    ok = ok && in.ConsumedEntireMessage() && in.BytesUntilLimit() == 0;
  }
  in.PopLimit(limit);
  return ok && tracking->MergeFromString(rest);
}

// `direct`, when given, receives the message fields kept whole at this level, parsed in place;
// `cut_into`, when given, the Measurement whose tracking gets its worker series cut to their ends.
bool CopyWithout(google::protobuf::io::CodedInputStream& in, const std::vector<FieldPath>& skips,
                 FieldPath& prefix, google::protobuf::io::CodedOutputStream& out,
                 google::protobuf::Message* direct = nullptr, v1::Measurement* cut_into = nullptr,
                 const MeasurementParts* parts = nullptr) {
  for (uint32_t tag = in.ReadTag(); tag != 0; tag = in.ReadTag()) {
    prefix.push_back(WireFormatLite::GetTagFieldNumber(tag));
    bool skip = false, descend = false;
    for (const FieldPath& path : skips) {
      if (path.size() < prefix.size() || !std::equal(prefix.begin(), prefix.end(), path.begin())) {
        continue;
      }
      (path.size() == prefix.size() ? skip : descend) = true;
    }
    bool ok = true;
    if (skip) {
      ok = WireFormatLite::SkipField(&in, tag);
    } else if (cut_into != nullptr && prefix.size() == 1 &&
               prefix[0] == v1::Measurement::kTrackingFieldNumber &&
               WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      ok = MergeTrackingCuttingSeries(in, cut_into, *parts);
    } else if (parts != nullptr && parts->chunk_table != nullptr && prefix.size() == 1 &&
               prefix[0] == v1::Measurement::kChunksFieldNumber &&
               WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      ok = AppendRecordTo(in, parts->chunk_table);
    } else if (descend &&
               WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t size = 0;
      std::string kept;
      ok = in.ReadVarint32(&size);
      if (ok) {
        const auto limit = in.PushLimit(static_cast<int>(std::min<uint32_t>(size, INT_MAX)));
        {
          google::protobuf::io::StringOutputStream stream(&kept);
          google::protobuf::io::CodedOutputStream nested(&stream);
          ok = CopyWithout(in, skips, prefix, nested) && in.BytesUntilLimit() == 0;
        }
        in.PopLimit(limit);
      }
      if (ok) {
        out.WriteTag(tag);
        out.WriteVarint32(static_cast<uint32_t>(kept.size()));
        out.WriteString(kept);
      }
    } else if (const google::protobuf::FieldDescriptor* field =
                   direct == nullptr ? nullptr
                                     : direct->GetDescriptor()->FindFieldByNumber(prefix.back());
               field != nullptr &&
               field->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE &&
               WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      ok = MergeFieldInto(in, prefix.back(), direct);
    } else {
      ok = WireFormatLite::SkipField(&in, tag, &out);
    }
    prefix.pop_back();
    if (!ok) return false;
  }
  return in.ConsumedEntireMessage();
}

// The field (chunks or rejected_chunks) of the record the part at `in` starts with (its tag
// consumed), or 0 when it does not start with one: by the file's format, such a part holds
// records only.
int StartsWithRecordField(google::protobuf::io::CodedInputStream& in) {
  for (int number :
       {v1::Measurement::kChunksFieldNumber, v1::Measurement::kRejectedChunksFieldNumber}) {
    if (in.ExpectTag(WireFormatLite::MakeTag(number, WireFormatLite::WIRETYPE_LENGTH_DELIMITED))) {
      return number;
    }
  }
  return 0;
}

bool StartsWithRecords(google::protobuf::io::CodedInputStream& in) {
  return StartsWithRecordField(in) != 0;
}

// The record fields of a records part (the first one's tag, `field`, consumed): chunk records
// appended to `table` one at a time through `record`, rejected ones to the measurement.
bool MergeRecordsPart(google::protobuf::io::CodedInputStream& in, int field, ChunkTable* table,
                      v1::Measurement* measurement) {
  v1::ChunkRecord record;  // reused: its strings keep their capacity from record to record
  for (;;) {
    uint32_t size = 0;
    if (!in.ReadVarint32(&size)) return false;
    const auto limit = in.PushLimit(static_cast<int>(std::min<uint32_t>(size, INT_MAX)));
    v1::ChunkRecord* into =
        field == v1::Measurement::kChunksFieldNumber ? &record : measurement->add_rejected_chunks();
    into->Clear();
    const bool ok =
        into->MergeFromCodedStream(&in) && in.ConsumedEntireMessage() && in.BytesUntilLimit() == 0;
    in.PopLimit(limit);
    if (!ok) return false;
    if (into == &record) table->Append(record);
    const uint32_t tag = in.ReadTag();
    if (tag == 0) return in.ConsumedEntireMessage();
    field = WireFormatLite::GetTagFieldNumber(tag);
    if (WireFormatLite::GetTagWireType(tag) != WireFormatLite::WIRETYPE_LENGTH_DELIMITED ||
        (field != v1::Measurement::kChunksFieldNumber &&
         field != v1::Measurement::kRejectedChunksFieldNumber)) {
      return false;  // by the file's format, a part that starts with records holds only records
    }
  }
}

}  // namespace

bool MergeMeasurementFrom(google::protobuf::io::CodedInputStream& coded,
                          const MeasurementParts& parts, v1::Measurement* measurement) {
  std::vector<FieldPath> skips;
  if (!parts.chunk_records) {
    skips.push_back({v1::Measurement::kChunksFieldNumber});
    skips.push_back({v1::Measurement::kRejectedChunksFieldNumber});
  }
  if (!parts.chunk_info) {  // both forms
    for (const int field : {v1::ChunkMetrics::kChunkInfoFieldNumber,
                            v1::ChunkMetrics::kChunkInfoColumnsFieldNumber}) {
      skips.push_back(
          {v1::Measurement::kMetricsFieldNumber, v1::AggregatedMetrics::kChunksFieldNumber, field});
    }
  }
  const bool into_table = parts.chunk_records && parts.chunk_table != nullptr;
  if (skips.empty() && parts.whole_worker_series && !into_table) {
    return measurement->MergeFromCodedStream(&coded) && coded.ConsumedEntireMessage();
  }
  // Message fields kept whole are parsed in place; the rest (a filtered metrics, unknown fields)
  // is copied and parsed as one message.
  std::string kept;
  {
    google::protobuf::io::StringOutputStream stream(&kept);
    google::protobuf::io::CodedOutputStream out(&stream);
    FieldPath prefix;
    if (!CopyWithout(coded, skips, prefix, out, measurement,
                     parts.whole_worker_series ? nullptr : measurement, &parts)) {
      return false;
    }
  }
  return measurement->MergeFromString(kept);
}

absl::Status ForEachPart(
    const std::string& path,
    absl::FunctionRef<bool(int part, google::protobuf::io::CodedInputStream& coded,
                           absl::Status* stop)>
        read_part) {
  absl::StatusOr<RegularFileStream> file = OpenRegularFileStream(path);
  if (!file.ok()) return file.status();
  google::protobuf::io::FileInputStream& input = *file->stream;
  int64_t part_start = 0;  // the file offset of this part's length
  for (int part = 0;; ++part) {
    google::protobuf::io::CodedInputStream coded(&input);
    coded.SetTotalBytesLimit(INT_MAX);
    uint32_t size = 0;
    if (!coded.ReadVarint32(&size)) {
      if (coded.CurrentPosition() == 0 && part > 0) return absl::OkStatus();  // the end
      return absl::DataLossError(
          absl::StrCat("'", path, "' is corrupt: part ", part, " has no length"));
    }
    const auto cut = [&] {
      return absl::DataLossError(
          absl::StrCat("'", path, "' is corrupt: part ", part, " is cut short or does not parse"));
    };
    // A seek past the end succeeds: a part that would end there is found cut short here.
    const int64_t part_end = part_start + coded.CurrentPosition() + int64_t{size};
    if (part_end > file->size) return cut();
    part_start = part_end;
    const auto limit = coded.PushLimit(static_cast<int>(std::min<uint32_t>(size, INT_MAX)));
    absl::Status stop;
    if (!read_part(part, coded, &stop)) return cut();
    if (!stop.ok()) return stop;
    if (coded.BytesUntilLimit() != 0) return cut();
    coded.PopLimit(limit);
  }
}

absl::Status ReadMeasurementParts(const std::string& path, v1::Measurement* measurement,
                                  const MeasurementParts& parts) {
  return ForEachPart(path,
                     [&](int part, google::protobuf::io::CodedInputStream& coded, absl::Status*) {
                       // A records part (every part after the first) that the reader skips is
                       // passed over whole, with a seek: `collect show` of 10^6 chunks then reads
                       // the first part only, not 180 MB.
                       if (part > 0 && !parts.chunk_records && StartsWithRecords(coded)) {
                         return coded.Skip(coded.BytesUntilLimit());
                       }
                       // Or read into the caller's table, one record at a time.
                       if (part > 0 && parts.chunk_records && parts.chunk_table != nullptr) {
                         if (const int field = StartsWithRecordField(coded); field != 0) {
                           return MergeRecordsPart(coded, field, parts.chunk_table, measurement);
                         }
                       }
                       return MergeMeasurementFrom(coded, parts, measurement);
                     });
}

}  // namespace store_internal
}  // namespace roastcoffea
