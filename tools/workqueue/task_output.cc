#include "tools/workqueue/task_output.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "tools/workqueue/task_output.pb.h"

namespace roastcoffea {
namespace workqueue {
namespace {

void ToProto(const sample_analysis::Histogram& histogram, HistogramCounts& proto) {
  proto.set_low(histogram.low());
  proto.set_high(histogram.high());
  for (int64_t count : histogram.counts()) proto.add_counts(count);
  proto.set_underflow(histogram.underflow());
  proto.set_overflow(histogram.overflow());
}

absl::StatusOr<sample_analysis::Histogram> FromProto(const HistogramCounts& proto) {
  return sample_analysis::Histogram::FromCounts(
      proto.low(), proto.high(), std::vector<int64_t>(proto.counts().begin(), proto.counts().end()),
      proto.underflow(), proto.overflow());
}

}  // namespace

std::string EncodeTaskOutput(const ChunkTaskOutput& output) {
  TaskOutput proto;
  DijetOutput& dijet = *proto.mutable_output();
  const sample_analysis::DijetOutput& in = output.output;
  ToProto(in.mjj, *dijet.mutable_mjj());
  dijet.set_events_processed(in.events_processed);
  dijet.set_events_selected(in.events_selected);
  for (const auto& [name, counts] : in.datasets) {
    DatasetCounts& out = (*dijet.mutable_datasets())[name];
    out.set_chunks(counts.chunks);
    out.set_events_processed(counts.events_processed);
    out.set_events_selected(counts.events_selected);
    out.set_compressed_bytes_read(counts.compressed_bytes_read);
    out.set_uncompressed_bytes_read(counts.uncompressed_bytes_read);
  }
  for (const auto& [name, histogram] : in.mjj_by_dataset) {
    ToProto(histogram, (*dijet.mutable_mjj_by_dataset())[name]);
  }
  dijet.set_io_time_ns(absl::ToInt64Nanoseconds(in.io_time));
  dijet.set_decompress_time_ns(absl::ToInt64Nanoseconds(in.decompress_time));
  for (const v1::ChunkRecord& record : output.chunk_records) *proto.add_chunk_records() = record;
  return proto.SerializeAsString();
}

absl::StatusOr<ChunkTaskOutput> DecodeTaskOutput(const std::string& bytes,
                                                 const std::string& what) {
  TaskOutput proto;
  if (!proto.ParseFromString(bytes)) {
    return absl::DataLossError(absl::StrCat(what, ": not a chunk task output (", bytes.size(),
                                            " bytes that do not parse)"));
  }
  ChunkTaskOutput result;
  sample_analysis::DijetOutput& out = result.output;
  const DijetOutput& in = proto.output();
  auto histogram_error = [&](const absl::Status& status, const std::string& name) {
    return absl::DataLossError(absl::StrCat(what, ": histogram ", name, ": ", status.message()));
  };
  absl::StatusOr<sample_analysis::Histogram> mjj = FromProto(in.mjj());
  if (!mjj.ok()) return histogram_error(mjj.status(), "mjj");
  out.mjj = *std::move(mjj);
  out.events_processed = in.events_processed();
  out.events_selected = in.events_selected();
  for (const auto& [name, counts] : in.datasets()) {
    sample_analysis::DatasetCounts& c = out.datasets[name];
    c.chunks = counts.chunks();
    c.events_processed = counts.events_processed();
    c.events_selected = counts.events_selected();
    c.compressed_bytes_read = counts.compressed_bytes_read();
    c.uncompressed_bytes_read = counts.uncompressed_bytes_read();
  }
  for (const auto& [name, counts] : in.mjj_by_dataset()) {
    absl::StatusOr<sample_analysis::Histogram> histogram = FromProto(counts);
    if (!histogram.ok()) return histogram_error(histogram.status(), "mjj of " + name);
    out.mjj_by_dataset[name] = *std::move(histogram);
  }
  out.io_time = absl::Nanoseconds(in.io_time_ns());
  out.decompress_time = absl::Nanoseconds(in.decompress_time_ns());
  result.chunk_records.assign(proto.chunk_records().begin(), proto.chunk_records().end());
  return result;
}

absl::Status WriteTaskOutputFile(const ChunkTaskOutput& output, const std::string& path) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file << EncodeTaskOutput(output);
    file.flush();
    if (!file) {
      return absl::InternalError(
          absl::StrCat("cannot write ", temporary, ": ", std::strerror(errno)));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    return absl::InternalError(
        absl::StrCat("cannot rename ", temporary, " to ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<ChunkTaskOutput> ReadTaskOutputFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("no task output ", path));
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return DecodeTaskOutput(bytes.str(), path);
}

}  // namespace workqueue
}  // namespace roastcoffea
