// A live one-line progress display for long runs: chunks done/total, events/s, elapsed, ETA.
// It rewrites one terminal line a few times per second and is silent when its stream is not a
// terminal, so logs and pipes see nothing of it.
#ifndef ROASTCOFFEA_TOOLS_PROGRESS_LINE_H_
#define ROASTCOFFEA_TOOLS_PROGRESS_LINE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace roastcoffea {

// "chunks 12/96 (12%) | 1.23 M events/s | 45.6 MB/s | elapsed 3.4s | ETA 24.6s" (the byte
// rate only once bytes were read). The ETA assumes the remaining chunks go at the rate so far;
// "ETA --" until the first chunk is done. No colour is used (NO_COLOR has nothing to turn off).
std::string FormatProgress(int64_t chunks_done, int64_t chunks_total, int64_t events_done,
                           double elapsed_seconds, int64_t bytes_done = 0);

class ProgressLine {
 public:
  // Draws on `stream` only if it is a terminal. Starts its refresh thread at once.
  ProgressLine(int64_t chunks_total, FILE* stream = stderr);
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
  void Draw(bool final_line);

  const int64_t chunks_total_;
  FILE* const stream_;
  const bool enabled_;
  const std::chrono::steady_clock::time_point start_;
  std::atomic<int64_t> chunks_done_{0};
  std::atomic<int64_t> events_done_{0};
  std::atomic<int64_t> bytes_done_{0};
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool finished_ = false;
  std::thread thread_;
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_PROGRESS_LINE_H_
