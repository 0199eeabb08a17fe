// `collect ... --serve=[HOST]:PORT`: the live view of a run over HTTP, on the same counters and
// findings as the saved measurement: GET /metrics (Prometheus text or OpenMetrics, see
// live/exposition.h) and GET / (the live page, then the final HTML report once the run is
// saved). Binds before the run starts (a port in use is an error then), serves on its own
// thread (live/http_server.h: bounded connections, time limits), and never blocks the run.
//
//   absl::StatusOr<std::unique_ptr<LiveServer>> server = LiveServer::Start(options);
//   ... once the session exists: (*server)->Watch(session);
//   ... after the save: (*server)->SetFinal(measurement);
//
// Thread-safety: every method from any thread.
#ifndef ROASTCOFFEA_LIVE_LIVE_SERVER_H_
#define ROASTCOFFEA_LIVE_LIVE_SERVER_H_

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "collector/live_status.h"
#include "collector/measurement_session.h"
#include "live/http_server.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

class ReportChunks;  // export/report_chunks.h

namespace live {

// "[HOST]:PORT" as the user gives it: ":8000" and "8000" bind 127.0.0.1; "0.0.0.0:8000",
// "[::1]:0". InvalidArgument naming the text otherwise.
absl::StatusOr<HttpServerOptions> ParseServeAddress(absl::string_view text);

// The live view of a saved measurement (`collect show DIR --serve`): its chunk records counted
// as the session counts them, finished.
LiveStatus LiveStatusOf(const v1::Measurement& measurement);

struct LiveServerOptions {
  HttpServerOptions http;
  std::string version;  // the tool's, for roastcoffea_info
  // The findings of the chunks so far are aggregated again at most this often.
  absl::Duration findings_refresh = absl::Seconds(5);
};

class LiveServer {
 public:
  static absl::StatusOr<std::unique_ptr<LiveServer>> Start(LiveServerOptions options);
  ~LiveServer();

  // From now on the figures are the session's (until then: an empty "starting" run).
  void Watch(const MeasurementSession* session);
  // The session is going away: its last figures stay (SessionOptions::on_end).
  void Unwatch(const MeasurementSession* session);
  // The run is saved: /metrics keeps its last counters, "/" shows the final HTML report.
  void SetFinal(const v1::Measurement& measurement);
  // The same for a run whose records are held apart in `chunks` (MeasuredRun): read one at a
  // time into the counters and the report's compact view, never all materialized.
  void SetFinal(const v1::Measurement& measurement, const ChunkTable& chunks);

  std::string address() const { return http_->address(); }
  int port() const { return http_->port(); }
  void Stop() { http_->Stop(); }
  int64_t requests_served() const { return http_->requests_served(); }

 private:
  explicit LiveServer(LiveServerOptions options) : options_(std::move(options)) {}
  HttpResponse Handle(const HttpRequest& request);
  LiveStatus Status();
  // SetFinal's common part: `saved` counts the records when no session ran here.
  void SetFinal(LiveStatus saved, const v1::Measurement& measurement, const ReportChunks& chunks);

  const LiveServerOptions options_;
  std::unique_ptr<HttpServer> http_;
  std::mutex mu_;  // guards the fields below
  const MeasurementSession* session_ = nullptr;
  std::optional<LiveStatus> final_status_;
  std::string final_report_;
};

}  // namespace live
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_LIVE_LIVE_SERVER_H_
