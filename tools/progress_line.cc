#include "tools/progress_line.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

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

std::string FormatProgress(const ProgressCounts& c, double elapsed_seconds) {
  std::string chunks = absl::StrCat("chunks ", c.chunks_done);
  if (c.chunks_total > 0) {
    const int percent =
        static_cast<int>(100 * std::min(c.chunks_done, c.chunks_total) / c.chunks_total);
    absl::StrAppend(&chunks, "/", c.chunks_total, " (", percent, "%)");
  }
  if (c.chunks_running.has_value()) absl::StrAppend(&chunks, ", ", *c.chunks_running, " running");
  std::string rates;
  if (c.events.has_value()) {
    absl::StrAppend(&rates, " | ", Rate(elapsed_seconds > 0 ? *c.events / elapsed_seconds : 0));
  }
  if (c.bytes > 0 && elapsed_seconds > 0) {
    absl::StrAppend(&rates, absl::StrFormat(" | %.1f MB/s",
                                            static_cast<double>(c.bytes) / elapsed_seconds / 1e6));
  }
  std::string eta;
  if (c.chunks_total > 0) {
    eta = " | ETA --";
    if (c.chunks_done > 0 && c.chunks_done <= c.chunks_total && elapsed_seconds > 0) {
      eta = absl::StrCat(
          " | ETA ",
          FormatDuration(elapsed_seconds * (c.chunks_total - c.chunks_done) / c.chunks_done));
    }
  }
  return absl::StrCat(chunks, rates, " | elapsed ", FormatDuration(elapsed_seconds), eta);
}

std::string FormatProgress(int64_t chunks_done, int64_t chunks_total, int64_t events_done,
                           double elapsed_seconds, int64_t bytes_done) {
  ProgressCounts counts;
  counts.chunks_done = chunks_done;
  counts.chunks_total = chunks_total;
  counts.events = events_done;
  counts.bytes = bytes_done;
  return FormatProgress(counts, elapsed_seconds);
}

ProgressCounts ProgressOfLiveStatus(const LiveStatus& live) {
  ProgressCounts counts;
  counts.chunks_done = live.chunks_ok + live.chunks_failed;
  counts.chunks_total = live.chunks_total;
  counts.chunks_running = live.chunks_running;
  if (live.chunks_from_engine_tasks) {
    counts.events = std::nullopt;
  } else {
    counts.events = live.events;
  }
  counts.bytes = live.compressed_bytes_read;
  return counts;
}

bool PlainTerminalFromEnvironment() {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return (no_color != nullptr && no_color[0] != '\0') ||
         (term != nullptr && std::string(term) == "dumb");
}

ProgressLine::ProgressLine(int64_t chunks_total, FILE* stream)
    : ProgressLine(chunks_total, nullptr, stream) {}

ProgressLine::ProgressLine(std::function<ProgressCounts()> source, FILE* stream)
    : ProgressLine(0, std::move(source), stream) {}

ProgressLine::ProgressLine(int64_t chunks_total, std::function<ProgressCounts()> source,
                           FILE* stream)
    : chunks_total_(chunks_total),
      source_(std::move(source)),
      stream_(stream),
      enabled_(stream != nullptr && isatty(fileno(stream)) == 1),
      plain_(PlainTerminalFromEnvironment()),
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
  ProgressCounts counts;
  if (source_) {
    counts = source_();
  } else {
    counts.chunks_done = chunks_done_.load(std::memory_order_relaxed);
    counts.chunks_total = chunks_total_;
    counts.events = events_done_.load(std::memory_order_relaxed);
    counts.bytes = bytes_done_.load(std::memory_order_relaxed);
  }
  std::string line = FormatProgress(counts, elapsed);
  const size_t width = line.size();
  if (plain_) {
    // No escape sequence: spaces cover what a longer previous line left.
    if (width < last_width_) line.append(last_width_ - width, ' ');
    std::fprintf(stream_, "\r%s", line.c_str());
  } else {
    // "\r" back to the start of the line, "\033[K" clears what a longer previous line left.
    std::fprintf(stream_, "\r\033[K%s", line.c_str());
  }
  last_width_ = width;
  if (final_line) std::fputs("\n", stream_);
  std::fflush(stream_);
}

}  // namespace roastcoffea
