// SamplingProfiler: a statistical CPU profiler of chosen threads of this process, for the
// threadpool backend's `--profile` (issue #8).
//
//   absl::StatusOr<std::unique_ptr<SamplingProfiler>> profiler =
//       SamplingProfiler::Start({{tid, "host:123/thread-0"}}, {.hz = 100});
//   ... run ...
//   (*profiler)->Stop();
//   std::vector<v1::Profile> profiles = (*profiler)->BuildProfiles(chunk_records, host);
//
// How it samples: each thread gets a POSIX timer on its own CPU-time clock (timer_create on
// the thread's CPU clock, SIGEV_THREAD_ID to that thread), so a thread is sampled every 1/hz
// seconds of the CPU time it uses: idle or blocked threads cost nothing and cannot be
// sampled waiting. The timer sends SIGPROF; the handler (SA_SIGINFO | SA_RESTART, installed at
// Start, the previous one restored at Stop; SIGPROFs that are not ours go to the previous
// handler, or are ignored if that was the default action, which would kill the process)
// records into the thread's preallocated buffer: the wall time (CLOCK_REALTIME), the
// innermost open ScopedTimer section and chunk-record thread index of the thread
// (CurrentSampleContext), and the stack. No allocation, locks or non-async-signal-safe calls
// happen in the handler; a full buffer counts the sample as lost.
//
// Stack capture: libgcc's _Unwind_Backtrace (the engine behind glibc's backtrace()), called
// directly. It unwinds with the DWARF call-frame information that GCC emits for every function
// on x86-64 and arm64 (-fasynchronous-unwind-tables is the default), so it works in -c opt and
// fastbuild alike, through system libraries, and through the kernel's signal frame (glibc's
// signal trampoline carries CFI). With glibc >= 2.35 and GCC >= 12 (Debian 12) its lookup of
// the unwind tables goes through _dl_find_object, which is lock-free and allocation-free, so
// it is safe in a signal handler once a warm-up call at Start has resolved the symbols.
// Calling it directly (not backtrace()) skips the sanitizer interceptor of backtrace(), which
// allocates. Frame pointers were rejected (-O2 and Debian's libraries omit them, so the chain
// is garbage); libunwind would be a second unwinder with the same method and a new package.
// The handler's own frames are dropped by finding the interrupted program counter (from the
// signal's ucontext) in the unwound stack.
//
// A timer overrun (the kernel checks CPU timers at its scheduler tick, so above the tick rate
// several periods can pass between two signals) makes that sample count for every period it
// stands for: sample counts stay proportional to CPU time even at 1000 Hz.
//
// Overhead (sampling_profiler_benchmark; README): one unwind per sample, a few microseconds;
// below the ~1 % run-to-run noise of a CPU-bound loop at 100 Hz and at 1000 Hz (measured
// +0.3..0.7 %). Memory: per thread, buffers of
// max_samples_per_thread samples and max_frames_per_thread addresses, reserved as virtual
// memory and touched only as they fill.
//
// Limits: one profiler per process at a time (FailedPrecondition otherwise); SIGPROF must not
// be blocked by the profiled threads; Linux on x86-64 or arm64 only. Under ThreadSanitizer
// Start returns Unimplemented (TSan defers asynchronous signals to its own safe points, so the
// stacks would be TSan's).
//
// Thread-safety: Start, Stop, BuildProfiles and the destructor are for one controlling thread.
#ifndef ROASTCOFFEA_BACKENDS_THREADPOOL_SAMPLING_PROFILER_H_
#define ROASTCOFFEA_BACKENDS_THREADPOOL_SAMPLING_PROFILER_H_

#include <time.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

struct SamplingProfilerOptions {
  // Samples per second of each thread's CPU time, in [1, SamplingProfiler::kMaxHz].
  int hz = 100;
  // Frames kept per sample, in [1, SamplingProfiler::kMaxStackDepth]. Deeper stacks keep their
  // innermost frames below a "(truncated stack)" frame (kTruncatedStackFrame).
  int max_stack_depth = 128;
  // Per-thread buffer sizes: samples (65536: 11 CPU-minutes at 100 Hz) and return addresses
  // over all of them. Samples beyond either are counted in Profile.lost_samples.
  int64_t max_samples_per_thread = int64_t{1} << 16;
  int64_t max_frames_per_thread = int64_t{1} << 21;
};

// A thread to profile, and the Profile.worker of its profile.
struct ProfiledThread {
  int64_t tid = 0;  // Linux thread id of a live thread of this process
  std::string worker;
};

class SamplingProfiler {
 public:
  static constexpr int kMaxHz = 1000;
  static constexpr int kMaxStackDepth = 256;
  static constexpr int kMaxThreads = 4096;

  // OK when the profiler can work in this build and on this machine; Unimplemented saying why
  // not (ThreadSanitizer, not Linux on x86-64 or arm64).
  static absl::Status Supported();

  // Installs the SIGPROF handler and arms one timer per thread. InvalidArgument naming the bad
  // option or thread (hz out of range, no threads, a tid <= 0, too many threads),
  // FailedPrecondition while another profiler runs, Supported()'s Unimplemented, ResourceExhausted
  // when the buffers cannot be reserved, and the errno of timer_create/timer_settime naming the tid
  // (e.g. a thread that has exited).
  static absl::StatusOr<std::unique_ptr<SamplingProfiler>> Start(
      std::vector<ProfiledThread> threads, const SamplingProfilerOptions& options = {});

  // Stops if still running, then frees the buffers.
  ~SamplingProfiler();
  SamplingProfiler(const SamplingProfiler&) = delete;
  SamplingProfiler& operator=(const SamplingProfiler&) = delete;

  // Deletes the timers, waits for handlers in progress and for signals still pending on the
  // threads (at most about a second), then restores the previous SIGPROF handler (if a signal
  // stays pending, e.g. blocked by its thread, the handler stays installed, ignoring it,
  // rather than let the previous default action kill the process). Safe while the threads
  // run. Idempotent.
  void Stop();

  bool running() const { return running_; }
  // Samples recorded over all threads, a sample counting for the timer periods it stands for
  // (see overruns in the file comment), and samples lost to full buffers. Exact after Stop.
  int64_t samples() const;
  int64_t lost_samples() const;

  // After Stop (FailedPrecondition before): one profile per thread in Start's order (worker
  // set, threads 1, lost_samples its own), then one per ScopedTimer section seen, merged over
  // the threads and sorted by name (section set, worker "", threads = thread count,
  // lost_samples 0: a lost sample has no section). A sample belongs to the innermost open
  // section only. source "threadpool", host `host`, sampling_interval_seconds 1/hz, start and
  // end of the profiling window. Samples are attributed to the chunk record of the same
  // thread_index whose [start_unix_ns, end_unix_ns] contains them (the innermost, for nested
  // chunks): chunk_samples in record order, the rest in samples_outside_chunks.
  // Symbolises every distinct address once (dladdr + ELF symbol tables, demangled; a
  // stripped library's functions as "libzstd.so.1+0x1a2b0"). In a thread's own profile a
  // sample taken in a timed section has the pseudo-frame "[section: NAME]" inserted just
  // above chunk tracking's wrappers (profile/profile_frames.h), and a stack whose unwind
  // is incomplete (cut at max_stack_depth, or ending elsewhere than the outermost frame most
  // of the thread's stacks end in, e.g. in code without unwind tables) starts with
  // kTruncatedStackFrame.
  absl::StatusOr<std::vector<v1::Profile>> BuildProfiles(absl::Span<const v1::ChunkRecord> chunks,
                                                         const std::string& host) const;

  struct ThreadBuffer;  // internal, public for the signal handler

 private:
  SamplingProfiler() = default;
  absl::Status Arm();

  SamplingProfilerOptions options_;
  std::vector<ProfiledThread> threads_;
  std::vector<ThreadBuffer*> buffers_;  // owned (mmap'ed), parallel to threads_
  std::vector<timer_t> timers_;
  bool running_ = false;
  uint64_t generation_ = 0;
  int64_t start_unix_ns_ = 0;
  int64_t end_unix_ns_ = 0;
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_THREADPOOL_SAMPLING_PROFILER_H_
