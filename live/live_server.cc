#include "live/live_server.h"

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "export/html_report.h"
#include "export/report_chunks.h"
#include "live/exposition.h"
#include "live/live_page.h"

namespace roastcoffea {
namespace live {
namespace {

// This process's resident memory, from /proc/self/statm; nullopt where unreadable.
std::optional<int64_t> ResidentMemoryBytes() {
  const int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buffer[128];
  const ssize_t n = read(fd, buffer, sizeof(buffer) - 1);
  close(fd);
  if (n <= 0) return std::nullopt;
  buffer[n] = '\0';
  long long size = 0, resident = 0;
  if (std::sscanf(buffer, "%lld %lld", &size, &resident) != 2) return std::nullopt;
  return static_cast<int64_t>(resident) * sysconf(_SC_PAGESIZE);
}

}  // namespace

absl::StatusOr<HttpServerOptions> ParseServeAddress(absl::string_view text) {
  HttpServerOptions options;
  std::string host;
  absl::string_view port_text = text;
  const size_t colon = text.rfind(':');
  if (colon != absl::string_view::npos) {
    host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
  }
  int port = -1;
  if (!absl::SimpleAtoi(port_text, &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--serve=", text, ": expected [HOST]:PORT with PORT in 0..65535 (0: any free port)"));
  }
  if (!host.empty()) options.host = host;
  options.port = port;
  return options;
}

LiveStatus LiveStatusOf(const v1::Measurement& measurement) {
  LiveStatus status;
  status.name = measurement.metadata().name();
  status.backend = measurement.metadata().backend();
  status.elapsed_seconds = measurement.metadata().elapsed_seconds();
  status.interrupted = measurement.metadata().interrupted();
  status.finished = true;
  for (const v1::ChunkRecord& record : measurement.chunks()) CountChunk(record, &status);
  status.so_far = std::make_shared<const v1::AggregatedMetrics>(measurement.metrics());
  return status;
}

absl::StatusOr<std::unique_ptr<LiveServer>> LiveServer::Start(LiveServerOptions options) {
  std::unique_ptr<LiveServer> server(new LiveServer(options));
  LiveServer* self = server.get();
  absl::StatusOr<std::unique_ptr<HttpServer>> http = HttpServer::Start(
      options.http, [self](const HttpRequest& request) { return self->Handle(request); });
  if (!http.ok()) return http.status();
  server->http_ = *std::move(http);
  return server;
}

LiveServer::~LiveServer() {
  if (http_ != nullptr) http_->Stop();
}

void LiveServer::Watch(const MeasurementSession* session) {
  std::lock_guard<std::mutex> lock(mu_);
  session_ = session;
}

void LiveServer::Unwatch(const MeasurementSession* session) {
  std::lock_guard<std::mutex> lock(mu_);
  if (session_ != session) return;
  if (!final_status_.has_value()) {
    final_status_ = session->live_status(absl::ZeroDuration());
    final_status_->finished = true;
  }
  session_ = nullptr;
}

void LiveServer::SetFinal(const v1::Measurement& measurement) {
  const LiveStatus saved = LiveStatusOf(measurement);
  SetFinal(saved, measurement, ReportChunksOf(measurement));
}

void LiveServer::SetFinal(const v1::Measurement& measurement, const ChunkTable& chunks) {
  LiveStatus saved = LiveStatusOf(measurement);
  ReportChunks report_chunks;
  chunks.ForEachRecord([&saved, &report_chunks](const v1::ChunkRecord& record) {
    CountChunk(record, &saved);
    report_chunks.Add(record);
  });
  SetFinal(saved, measurement, report_chunks);
}

void LiveServer::SetFinal(LiveStatus saved, const v1::Measurement& measurement,
                          const ReportChunks& chunks) {
  LiveStatus status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // The session's own counters, final, when it ran here: the same numbers as during the run.
    status = session_ != nullptr ? session_->live_status(absl::ZeroDuration()) : std::move(saved);
  }
  status.finished = true;
  status.so_far = std::make_shared<const v1::AggregatedMetrics>(measurement.metrics());
  std::string report = RenderHtmlReport(measurement, chunks);
  std::lock_guard<std::mutex> lock(mu_);
  final_status_ = std::move(status);
  final_report_ = std::move(report);
  session_ = nullptr;
}

LiveStatus LiveServer::Status() {
  std::lock_guard<std::mutex> lock(mu_);
  if (final_status_.has_value()) return *final_status_;
  if (session_ != nullptr) return session_->live_status(options_.findings_refresh);
  LiveStatus starting;
  starting.name = "(starting)";
  return starting;
}

HttpResponse LiveServer::Handle(const HttpRequest& request) {
  HttpResponse response;
  if (request.path == "/metrics") {
    const ExpositionFormat format = NegotiateFormat(request.accept);
    ExpositionExtras extras;
    extras.version = options_.version;
    extras.resident_memory_bytes = ResidentMemoryBytes();
    response.content_type = ContentType(format);
    response.body = FormatExposition(Status(), extras, format);
    return response;
  }
  if (request.path == "/" || request.path == "/index.html") {
    response.content_type = "text/html; charset=utf-8";
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!final_report_.empty()) {
        response.body = final_report_;
        return response;
      }
    }
    response.body = RenderLivePage(Status());
    return response;
  }
  response.status = 404;
  response.body = "not found: try / or /metrics\n";
  return response;
}

}  // namespace live
}  // namespace roastcoffea
