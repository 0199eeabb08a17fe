#include "tools/live_view.h"

#include <signal.h>

#include <iostream>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "tools/collect_version.h"
#include "tools/exit_code.h"

namespace roastcoffea {
namespace {

volatile sig_atomic_t g_stop_serving = 0;
void StopServing(int) { g_stop_serving = 1; }

}  // namespace

std::unique_ptr<live::LiveServer>& LiveView() {
  static auto* const server = new std::unique_ptr<live::LiveServer>();
  return *server;
}

void ServeUntilSignal(absl::Duration duration) {
  struct sigaction action = {}, old_int = {}, old_term = {};
  action.sa_handler = StopServing;
  sigemptyset(&action.sa_mask);
  g_stop_serving = 0;
  sigaction(SIGINT, &action, &old_int);
  sigaction(SIGTERM, &action, &old_term);
  const absl::Time end =
      duration == absl::InfiniteDuration() ? absl::InfiniteFuture() : absl::Now() + duration;
  while (g_stop_serving == 0 && absl::Now() < end) absl::SleepFor(absl::Milliseconds(50));
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
}

absl::Status StartLiveView(const std::string& serve) {
  if (serve.empty()) return absl::OkStatus();
  absl::StatusOr<live::HttpServerOptions> http = live::ParseServeAddress(serve);
  if (!http.ok()) return AsUsageError(http.status());
  live::LiveServerOptions options;
  options.http = *http;
  options.version = kToolVersion;
  absl::StatusOr<std::unique_ptr<live::LiveServer>> server = live::LiveServer::Start(options);
  if (!server.ok()) {
    return UsageError(absl::StrCat("--serve=", serve, ": ", server.status().message()));
  }
  LiveView() = *std::move(server);
  std::cerr << "collect: serving live at http://" << LiveView()->address()
            << "/ (Prometheus: http://" << LiveView()->address() << "/metrics)\n";
  return absl::OkStatus();
}

}  // namespace roastcoffea
