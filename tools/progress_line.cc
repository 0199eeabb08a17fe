#include "tools/progress_line.h"

#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "export/tables.h"

namespace roastcoffea {
namespace {

std::string Rate(double events_per_second) {
  if (events_per_second >= 1e6) return absl::StrFormat("%.2f M events/s", events_per_second / 1e6);
  if (events_per_second >= 1e3) return absl::StrFormat("%.1f k events/s", events_per_second / 1e3);
  return absl::StrFormat("%.0f events/s", events_per_second);
}

}  // namespace

std::string FormatProgress(int64_t chunks_done, int64_t chunks_total, int64_t events_done,
                           double elapsed_seconds, int64_t bytes_done) {
  const int percent =
      chunks_total > 0 ? static_cast<int>(100 * std::min(chunks_done, chunks_total) / chunks_total)
                       : 0;
  const double rate = elapsed_seconds > 0 ? events_done / elapsed_seconds : 0;
  std::string eta = "--";
  if (chunks_done > 0 && chunks_done <= chunks_total && elapsed_seconds > 0) {
    eta = FormatDuration(elapsed_seconds * (chunks_total - chunks_done) / chunks_done);
  }
  const std::string bytes =
      bytes_done > 0 && elapsed_seconds > 0
          ? absl::StrFormat(" | %.1f MB/s", static_cast<double>(bytes_done) / elapsed_seconds / 1e6)
          : "";
  return absl::StrCat("chunks ", chunks_done, "/", chunks_total, " (", percent, "%) | ", Rate(rate),
                      bytes, " | elapsed ", FormatDuration(elapsed_seconds), " | ETA ", eta);
}

ProgressLine::ProgressLine(int64_t chunks_total, FILE* stream)
    : chunks_total_(chunks_total),
      stream_(stream),
      enabled_(stream != nullptr && isatty(fileno(stream)) == 1),
      start_(std::chrono::steady_clock::now()) {
  if (!enabled_) return;
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; })) {
      Draw(false);
    }
  });
}

ProgressLine::~ProgressLine() { Finish(); }

void ProgressLine::Finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  Draw(true);
}

void ProgressLine::Draw(bool final_line) {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  // "\r" back to the start of the line, "\033[K" clears what a longer previous line left.
  std::fprintf(stream_, "\r\033[K%s",
               FormatProgress(chunks_done_.load(std::memory_order_relaxed), chunks_total_,
                              events_done_.load(std::memory_order_relaxed), elapsed,
                              bytes_done_.load(std::memory_order_relaxed))
                   .c_str());
  if (final_line) std::fputs("\n", stream_);
  std::fflush(stream_);
}

}  // namespace roastcoffea
