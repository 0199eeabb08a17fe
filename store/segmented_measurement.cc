#include "store/segmented_measurement.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/message.h"
#include "google/protobuf/wire_format_lite.h"
#include "store/worker_series_ends.h"

namespace roastcoffea {
namespace store_internal {
namespace {

using google::protobuf::internal::WireFormatLite;

// The bytes a CodedOutputStream writes, appended to the file: parts are serialized straight
// into it, never first into a string of their own (the first part of a 10^6-chunk
// measurement was a 77 MB string, and each records part grew one by doubling).
class FileOutput : public google::protobuf::io::CopyingOutputStream {
 public:
  explicit FileOutput(AtomicFileWriter& out) : out_(out) {}
  bool Write(const void* buffer, int size) override {
    status_ = out_.Append(absl::string_view(static_cast<const char*>(buffer), size));
    return status_.ok();
  }
  const absl::Status& status() const { return status_; }

 private:
  AtomicFileWriter& out_;
  absl::Status status_;
};

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

std::atomic<int64_t> g_segment_threshold_bytes{kDefaultSegmentThresholdBytes};

}  // namespace

int64_t SegmentThresholdBytes() { return g_segment_threshold_bytes.load(); }
void SetSegmentThresholdBytesForTesting(int64_t bytes) { g_segment_threshold_bytes.store(bytes); }

absl::Status WriteMeasurementParts(const v1::Measurement& measurement, AtomicFileWriter& out,
                                   bool records_sized) {
  // Everything but the records: metadata, report, tracking, spans, metrics, profiles, warnings,
  // serialized from the message itself (a copy into a head message held the tracked samples
  // twice: 170 MB more for 10^4 workers of 360 samples).
  using M = v1::Measurement;
  size_t head_bytes = 0;
  // ByteSizeLong also caches the sizes WriteMessage writes below.
  const auto count = [&head_bytes](int field, const google::protobuf::MessageLite& message) {
    head_bytes += WireFormatLite::TagSize(field, WireFormatLite::TYPE_MESSAGE) +
                  WireFormatLite::LengthDelimitedSize(message.ByteSizeLong());
  };
  count(M::kMetadataFieldNumber, measurement.metadata());
  count(M::kReportFieldNumber, measurement.report());
  if (measurement.has_tracking()) count(M::kTrackingFieldNumber, measurement.tracking());
  for (const v1::Span& span : measurement.spans()) count(M::kSpansFieldNumber, span);
  count(M::kMetricsFieldNumber, measurement.metrics());
  for (const v1::Profile& p : measurement.profiles()) count(M::kProfilesFieldNumber, p);
  for (const v1::Warning& w : measurement.warnings()) count(M::kWarningsFieldNumber, w);
  if (head_bytes > static_cast<size_t>(INT_MAX)) {
    return absl::FailedPreconditionError(
        "the measurement without its chunk records is over 2 GiB: cannot be saved");
  }
  FileOutput file(out);
  {
    // 1 MiB blocks: the writer's own; the first part's size is known (head_bytes) before it.
    google::protobuf::io::CopyingOutputStreamAdaptor stream(&file, 1 << 20);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.WriteVarint32(static_cast<uint32_t>(head_bytes));
    WireFormatLite::WriteMessage(M::kMetadataFieldNumber, measurement.metadata(), &coded);
    WireFormatLite::WriteMessage(M::kReportFieldNumber, measurement.report(), &coded);
    if (measurement.has_tracking()) {
      WireFormatLite::WriteMessage(M::kTrackingFieldNumber, measurement.tracking(), &coded);
    }
    for (const v1::Span& span : measurement.spans()) {
      WireFormatLite::WriteMessage(M::kSpansFieldNumber, span, &coded);
    }
    WireFormatLite::WriteMessage(M::kMetricsFieldNumber, measurement.metrics(), &coded);
    for (const v1::Profile& p : measurement.profiles()) {
      WireFormatLite::WriteMessage(M::kProfilesFieldNumber, p, &coded);
    }
    for (const v1::Warning& w : measurement.warnings()) {
      WireFormatLite::WriteMessage(M::kWarningsFieldNumber, w, &coded);
    }
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
      v1::WorkerSeries* series = tracking->add_workers();
      ok = series->MergeFromCodedStream(&in) && in.ConsumedEntireMessage() &&
           in.BytesUntilLimit() == 0;
      in.PopLimit(series_limit);
      if (ok && parts.visit_whole_series != nullptr) (*parts.visit_whole_series)(*series, *into);
      CutWorkerSeriesToEnds(series);
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

// Whether the part at `in` starts with a chunk record or a rejected one (consumed when it does):
// by the file's format, such a part holds records only.
bool StartsWithRecords(google::protobuf::io::CodedInputStream& in) {
  for (int number :
       {v1::Measurement::kChunksFieldNumber, v1::Measurement::kRejectedChunksFieldNumber}) {
    if (in.ExpectTag(WireFormatLite::MakeTag(number, WireFormatLite::WIRETYPE_LENGTH_DELIMITED))) {
      return true;
    }
  }
  return false;
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
  if (skips.empty() && parts.whole_worker_series) {
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
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    return absl::Status(absl::ErrnoToStatus(error, "").code(),
                        absl::StrCat("cannot open '", path, "': ", std::strerror(error)));
  }
  struct stat info;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    close(fd);
    return absl::FailedPreconditionError(absl::StrCat("'", path, "' is not a regular file"));
  }
  google::protobuf::io::FileInputStream input(fd);
  input.SetCloseOnDelete(true);
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
    if (part_end > static_cast<int64_t>(info.st_size)) return cut();
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
                       return MergeMeasurementFrom(coded, parts, measurement);
                     });
}

}  // namespace store_internal
}  // namespace roastcoffea
