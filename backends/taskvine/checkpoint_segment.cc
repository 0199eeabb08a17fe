#include "backends/taskvine/checkpoint_segment.h"

#include <algorithm>

namespace roastcoffea {
namespace taskvine {
namespace {

template <typename T>
void CopyRange(const google::protobuf::RepeatedField<T>& from, int begin, int end,
               google::protobuf::RepeatedField<T>* to) {
  if (begin >= end || end > from.size()) return;
  to->Add(from.begin() + begin, from.begin() + end);
}

}  // namespace

v1::TrackingData NewFinalPoints(const RunModel& model, const v1::TrackingData& whole,
                                HandedOutPoints* handed) {
  v1::TrackingData segment;
  segment.set_backend(whole.backend());
  segment.set_worker_count_kind(whole.worker_count_kind());
  // The last point stands at the log's last record (RunModel::EndUs) and moves with it.
  const int count_final = std::max(0, whole.worker_count_time_unix_ns_size() - 1);
  if (count_final > handed->count_points && whole.worker_count_size() >= count_final &&
      whole.queued_chunks_size() >= count_final) {
    const int from = handed->count_points;
    CopyRange(whole.worker_count_time_unix_ns(), from, count_final,
              segment.mutable_worker_count_time_unix_ns());
    CopyRange(whole.worker_count(), from, count_final, segment.mutable_worker_count());
    CopyRange(whole.queued_chunks(), from, count_final, segment.mutable_queued_chunks());
    handed->count_points = count_final;
  }
  // RunModel::Tracking adds one series per worker, in workers() order.
  const std::vector<Worker>& workers = model.workers();
  const int n = std::min(static_cast<int>(workers.size()), whole.workers_size());
  if (static_cast<int>(handed->worker_points.size()) < n) handed->worker_points.resize(n, 0);
  for (int i = 0; i < n; ++i) {
    const v1::WorkerSeries& series = whole.workers(i);
    const int size = series.time_unix_ns_size();
    const int final_points = workers[i].disconnect_us > 0 ? size : size - 1;
    int& from = handed->worker_points[i];
    if (final_points <= from) continue;
    v1::WorkerSeries& out = *segment.add_workers();
    out.set_worker(series.worker());
    out.set_host(series.host());
    out.set_kind(series.kind());
    CopyRange(series.time_unix_ns(), from, final_points, out.mutable_time_unix_ns());
    CopyRange(series.cores(), from, final_points, out.mutable_cores());
    CopyRange(series.memory_limit_bytes(), from, final_points, out.mutable_memory_limit_bytes());
    CopyRange(series.disk_limit_bytes(), from, final_points, out.mutable_disk_limit_bytes());
    CopyRange(series.executing_tasks(), from, final_points, out.mutable_executing_tasks());
    CopyRange(series.active_tasks(), from, final_points, out.mutable_active_tasks());
    CopyRange(series.last_seen_unix_seconds(), from, final_points,
              out.mutable_last_seen_unix_seconds());
    from = final_points;
  }
  return segment;
}

}  // namespace taskvine
}  // namespace roastcoffea
