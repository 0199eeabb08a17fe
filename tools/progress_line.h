// A live one-line progress display for long runs: chunks done/total, events/s, bytes/s, elapsed,
// ETA. It rewrites one terminal line a few times per second and is silent when its stream is not
// a terminal, so logs and pipes see nothing of it. It uses no colour; with NO_COLOR set or
// TERM=dumb it sends no escape sequence at all either (the line is redrawn with "\r" and padding).
#ifndef ROASTCOFFEA_TOOLS_PROGRESS_LINE_H_
#define ROASTCOFFEA_TOOLS_PROGRESS_LINE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "collector/live_status.h"

namespace roastcoffea {

// What the line shows. Unknown parts are left out, never shown as 0.
struct ProgressCounts {
  int64_t chunks_done = 0;
  int64_t chunks_total = 0;               // 0: unknown (no percentage, no ETA)
  std::optional<int64_t> chunks_running;  // where the engine says
  std::optional<int64_t> events = 0;      // nullopt: not known yet (no event rate)
  int64_t bytes = 0;                      // the byte rate shows once bytes were read
};

// "chunks 12/96 (12%) | 1.23 M events/s | 45.6 MB/s | elapsed 3.4s | ETA 24.6s"; with an
// unknown total "chunks 12 | ..." without ETA; "3 running" after the chunks where known. The ETA
// assumes the remaining chunks go at the rate so far; "ETA --" until the first chunk is done.
std::string FormatProgress(const ProgressCounts& counts, double elapsed_seconds);
std::string FormatProgress(int64_t chunks_done, int64_t chunks_total, int64_t events_done,
                           double elapsed_seconds, int64_t bytes_done = 0);

// What a session's live view says (collector/live_status.h), for a run whose chunks are not
// counted with ChunkDone: chunks the engine counts have no events before the end.
ProgressCounts ProgressOfLiveStatus(const LiveStatus& live);

// True when the environment asks for plain output: NO_COLOR set (to anything but "") or
// TERM=dumb.
bool PlainTerminalFromEnvironment();

class ProgressLine {
 public:
  // Draws on `stream` only if it is a terminal, counting ChunkDone calls. Starts its refresh
  // thread at once.
  ProgressLine(int64_t chunks_total, FILE* stream = stderr);
  // The same, drawing what `source` returns at each redraw (e.g. a session's live status for
  // runs whose chunks the engine counts); `source` must be thread-safe and outlive Finish().
  explicit ProgressLine(std::function<ProgressCounts()> source, FILE* stream = stderr);
  // Finish().
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Thread-safe and lock-free: called by workers as each chunk ends.
  void ChunkDone(int64_t events, int64_t bytes_read = 0) {
    chunks_done_.fetch_add(1, std::memory_order_relaxed);
    events_done_.fetch_add(events, std::memory_order_relaxed);
    bytes_done_.fetch_add(bytes_read, std::memory_order_relaxed);
  }
  bool enabled() const { return enabled_; }
  // Draws the final line, ending it with a newline, and stops redrawing; ChunkDone stays safe.
  // Idempotent; call from one thread.
  void Finish();

 private:
  ProgressLine(int64_t chunks_total, std::function<ProgressCounts()> source, FILE* stream);
  void Draw(bool final_line);

  const int64_t chunks_total_;
  const std::function<ProgressCounts()> source_;
  FILE* const stream_;
  const bool enabled_;
  const bool plain_;
  const std::chrono::steady_clock::time_point start_;
  std::atomic<int64_t> chunks_done_{0};
  std::atomic<int64_t> events_done_{0};
  std::atomic<int64_t> bytes_done_{0};
  size_t last_width_ = 0;  // of the line drawn last (plain mode pads over it)
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool finished_ = false;
  std::thread thread_;
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_PROGRESS_LINE_H_
