#include "backends/threadpool/sampling_profiler.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <unwind.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "backends/threadpool/symbolizer.h"
#include "instrumentation/internal/sample_context.h"
#include "profile/profile_frames.h"

#if defined(__SANITIZE_THREAD__)
#define ROASTCOFFEA_PROFILER_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ROASTCOFFEA_PROFILER_UNDER_TSAN 1
#endif
#endif

namespace roastcoffea {
namespace {

constexpr int kSignal = SIGPROF;
constexpr int kSlotBits = 12;
static_assert((1 << kSlotBits) == SamplingProfiler::kMaxThreads, "one slot per thread");
// Frames above the interrupted one (the handler's and the signal trampoline) searched for the
// interrupted program counter.
constexpr int kHandlerFrames = 16;

constexpr uint8_t kTruncated = 1;  // RawSample::flags

// One sample in a thread's buffer; its frames are frames[first_frame, first_frame + count),
// innermost first: the interrupted pc, then return addresses.
struct RawSample {
  int64_t time_unix_ns;
  const char* section;
  int64_t thread_index;
  int64_t first_frame;
  uint32_t weight;  // 1 + timer overruns
  uint16_t frame_count;
  uint8_t flags;
};

}  // namespace

// Written only by the signal handler of its thread while its slot is published; read by the
// controlling thread after Stop (ordered by g_in_flight).
struct SamplingProfiler::ThreadBuffer {
  RawSample* samples = nullptr;
  int64_t sample_capacity = 0;
  int64_t sample_count = 0;
  uintptr_t* frames = nullptr;
  int64_t frame_capacity = 0;
  int64_t frame_count = 0;
  int64_t lost = 0;
  int max_depth = 0;
  void* mapping = nullptr;
  size_t mapping_bytes = 0;
};

namespace {

using ThreadBuffer = SamplingProfiler::ThreadBuffer;

// Handler state. Slots and generation are published with seq_cst stores; handlers announce
// themselves in g_in_flight before reading a slot, so Stop knows when no handler can still
// hold a buffer.
std::atomic<uint64_t> g_generation{0};  // of the running profiler; 0: none
std::atomic<ThreadBuffer*> g_slots[SamplingProfiler::kMaxThreads];
std::atomic<int> g_in_flight{0};

// Guarded by g_control_mutex. g_previous_action is written before the handler is installed
// and only read by it afterwards.
std::mutex g_control_mutex;
bool g_profiler_running = false;
bool g_handler_installed = false;
uint64_t g_last_generation = 0;
struct sigaction g_previous_action;

int64_t RealtimeNs() {
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

uintptr_t InterruptedPc(void* context) {
  const ucontext_t* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
  return static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<uintptr_t>(uc->uc_mcontext.pc);
#else
  (void)uc;
  return 0;
#endif
}

struct UnwindState {
  uintptr_t* out;
  int capacity;
  int count;
};

_Unwind_Reason_Code CollectFrame(_Unwind_Context* context, void* arg) {
  UnwindState* state = static_cast<UnwindState*>(arg);
  if (state->count >= state->capacity) return _URC_END_OF_STACK;
  int before_instruction = 0;
  const uintptr_t ip = _Unwind_GetIPInfo(context, &before_instruction);
  if (ip == 0) return _URC_END_OF_STACK;
  state->out[state->count++] = ip;
  return _URC_NO_REASON;
}

void RecordSample(ThreadBuffer& buffer, void* context, int overrun) {
  const uintptr_t pc = InterruptedPc(context);
  uintptr_t stack[SamplingProfiler::kMaxStackDepth + kHandlerFrames + 1];
  UnwindState state{stack, buffer.max_depth + kHandlerFrames + 1, 0};
  _Unwind_Backtrace(&CollectFrame, &state);
  int first = -1;
  for (int i = 0; i < state.count && i < kHandlerFrames; ++i) {
    if (stack[i] == pc) {
      first = i;
      break;
    }
  }
  const uintptr_t* frames = &pc;  // the unwinder did not get through the signal frame
  int count = 1;
  uint8_t flags = kTruncated;
  if (first >= 0) {
    frames = stack + first;
    count = state.count - first;
    flags = 0;
  }
  if (count > buffer.max_depth) {
    count = buffer.max_depth;
    flags |= kTruncated;
  }
  if (pc == 0 || buffer.sample_count >= buffer.sample_capacity ||
      buffer.frame_count + count > buffer.frame_capacity) {
    ++buffer.lost;
    return;
  }
  const instrumentation_internal::ThreadSampleContext sample_context =
      instrumentation_internal::CurrentSampleContext();
  RawSample& sample = buffer.samples[buffer.sample_count];
  sample.time_unix_ns = RealtimeNs();
  sample.section = sample_context.time_section;
  sample.thread_index = sample_context.thread_index;
  sample.first_frame = buffer.frame_count;
  sample.weight = 1 + static_cast<uint32_t>(overrun > 0 ? overrun : 0);
  sample.frame_count = static_cast<uint16_t>(count);
  sample.flags = flags;
  for (int i = 0; i < count; ++i) buffer.frames[buffer.frame_count + i] = frames[i];
  buffer.frame_count += count;
  ++buffer.sample_count;
}

// A SIGPROF that is not one of our timers' goes to the handler that was there before.
void ForwardToPreviousHandler(int signal, siginfo_t* info, void* context) {
  const struct sigaction& previous = g_previous_action;
  if (previous.sa_handler == SIG_DFL || previous.sa_handler == SIG_IGN) return;
  if ((previous.sa_flags & SA_SIGINFO) != 0) {
    if (previous.sa_sigaction != nullptr) previous.sa_sigaction(signal, info, context);
  } else if (previous.sa_handler != nullptr) {
    previous.sa_handler(signal);
  }
}

void OnProfilerSignal(int signal, siginfo_t* info, void* context) {
  if (info == nullptr || info->si_code != SI_TIMER) {
    ForwardToPreviousHandler(signal, info, context);
    return;
  }
  const int saved_errno = errno;
  g_in_flight.fetch_add(1);
  const uintptr_t token = reinterpret_cast<uintptr_t>(info->si_value.sival_ptr);
  const uint64_t generation = g_generation.load();
  if (generation != 0 && (token >> kSlotBits) == generation) {
    ThreadBuffer* buffer = g_slots[token & ((uintptr_t{1} << kSlotBits) - 1)].load();
    if (buffer != nullptr) RecordSample(*buffer, context, info->si_overrun);
  }
  g_in_flight.fetch_sub(1);
  errno = saved_errno;
}

// The CPU-time clock of thread `tid` of this process: the kernel's encoding, as glibc's
// pthread_getcpuclockid builds it (the executor hands out tids, not pthread handles).
clockid_t ThreadCpuClock(int64_t tid) {
  constexpr uint32_t kPerThreadSchedClock = 4 | 2;  // CPUCLOCK_PERTHREAD_MASK | CPUCLOCK_SCHED
  return static_cast<clockid_t>((~static_cast<uint32_t>(tid) << 3) | kPerThreadSchedClock);
}

// Whether `signal` is pending on thread `tid` (its SigPnd mask in /proc). A thread that is
// gone has nothing pending.
bool SignalPendingOn(int64_t tid, int signal) {
  std::ifstream status(absl::StrCat("/proc/self/task/", tid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    absl::string_view view(line);
    if (!absl::ConsumePrefix(&view, "SigPnd:")) continue;
    uint64_t mask = 0;
    if (!absl::SimpleHexAtoi(absl::StripAsciiWhitespace(view), &mask)) return false;
    return (mask >> (signal - 1)) & 1;
  }
  return false;
}

ThreadBuffer* NewBuffer(const SamplingProfilerOptions& options) {
  const size_t sample_bytes =
      static_cast<size_t>(options.max_samples_per_thread) * sizeof(RawSample);
  const size_t frame_bytes = static_cast<size_t>(options.max_frames_per_thread) * sizeof(uintptr_t);
  const size_t bytes = sample_bytes + frame_bytes;
  // Reserved, not committed: pages are touched (by the handler) only as samples arrive.
  void* mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping == MAP_FAILED) return nullptr;
  ThreadBuffer* buffer = new ThreadBuffer;
  buffer->mapping = mapping;
  buffer->mapping_bytes = bytes;
  buffer->samples = static_cast<RawSample*>(mapping);
  buffer->sample_capacity = options.max_samples_per_thread;
  buffer->frames = reinterpret_cast<uintptr_t*>(static_cast<char*>(mapping) + sample_bytes);
  buffer->frame_capacity = options.max_frames_per_thread;
  buffer->max_depth = options.max_stack_depth;
  return buffer;
}

void DeleteBuffer(ThreadBuffer* buffer) {
  if (buffer == nullptr) return;
  munmap(buffer->mapping, buffer->mapping_bytes);
  delete buffer;
}

absl::Status ValidateOptions(const std::vector<ProfiledThread>& threads,
                             const SamplingProfilerOptions& options) {
  if (options.hz < 1 || options.hz > SamplingProfiler::kMaxHz) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sampling rate must be in [1, ", SamplingProfiler::kMaxHz, "] Hz, got ", options.hz));
  }
  if (options.max_stack_depth < 1 || options.max_stack_depth > SamplingProfiler::kMaxStackDepth) {
    return absl::InvalidArgumentError(absl::StrCat("max_stack_depth must be in [1, ",
                                                   SamplingProfiler::kMaxStackDepth, "], got ",
                                                   options.max_stack_depth));
  }
  if (options.max_samples_per_thread < 1 || options.max_samples_per_thread > (int64_t{1} << 32)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_samples_per_thread must be in [1, 2^32], got ", options.max_samples_per_thread));
  }
  if (options.max_frames_per_thread < SamplingProfiler::kMaxStackDepth ||
      options.max_frames_per_thread > (int64_t{1} << 32)) {
    return absl::InvalidArgumentError(absl::StrCat("max_frames_per_thread must be in [",
                                                   SamplingProfiler::kMaxStackDepth,
                                                   ", 2^32], got ", options.max_frames_per_thread));
  }
  if (threads.empty()) return absl::InvalidArgumentError("no threads to profile");
  if (threads.size() > static_cast<size_t>(SamplingProfiler::kMaxThreads)) {
    return absl::InvalidArgumentError(absl::StrCat("at most ", SamplingProfiler::kMaxThreads,
                                                   " threads can be profiled, got ",
                                                   threads.size()));
  }
  for (const ProfiledThread& thread : threads) {
    if (thread.tid <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("thread id must be positive, got ", thread.tid,
                                                     " (worker \"", thread.worker, "\")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SamplingProfiler::Supported() {
#if defined(ROASTCOFFEA_PROFILER_UNDER_TSAN)
  return absl::UnimplementedError(
      "the sampling profiler does not work under ThreadSanitizer, which defers signals");
#elif !defined(__linux__) || !(defined(__x86_64__) || defined(__aarch64__))
  return absl::UnimplementedError("the sampling profiler needs Linux on x86-64 or arm64");
#else
  return absl::OkStatus();
#endif
}

absl::StatusOr<std::unique_ptr<SamplingProfiler>> SamplingProfiler::Start(
    std::vector<ProfiledThread> threads, const SamplingProfilerOptions& options) {
  if (absl::Status supported = Supported(); !supported.ok()) return supported;
  if (absl::Status status = ValidateOptions(threads, options); !status.ok()) return status;

  std::unique_ptr<SamplingProfiler> profiler(new SamplingProfiler());
  profiler->options_ = options;
  profiler->threads_ = std::move(threads);
  {
    std::lock_guard<std::mutex> lock(g_control_mutex);
    if (g_profiler_running) {
      return absl::FailedPreconditionError("another SamplingProfiler is running in this process");
    }
    for (size_t i = 0; i < profiler->threads_.size(); ++i) {
      ThreadBuffer* buffer = NewBuffer(options);
      if (buffer == nullptr) {
        return absl::ResourceExhaustedError(
            absl::StrCat("cannot reserve the profiler's buffers (", options.max_samples_per_thread,
                         " samples, ", options.max_frames_per_thread, " frames per thread)"));
      }
      profiler->buffers_.push_back(buffer);
    }

    // Warm-up: resolves what the handler calls (lazy binding) outside any signal handler.
    uintptr_t warm_up[4];
    UnwindState warm_up_state{warm_up, 4, 0};
    _Unwind_Backtrace(&CollectFrame, &warm_up_state);
    (void)instrumentation_internal::CurrentSampleContext();
    (void)RealtimeNs();

    if (!g_handler_installed) {
      struct sigaction action;
      std::memset(&action, 0, sizeof(action));
      action.sa_sigaction = &OnProfilerSignal;
      action.sa_flags = SA_SIGINFO | SA_RESTART;
      sigemptyset(&action.sa_mask);
      if (sigaction(kSignal, &action, &g_previous_action) != 0) {
        return absl::InternalError(
            absl::StrCat("cannot install the SIGPROF handler: ", strerror(errno)));
      }
      g_handler_installed = true;
    }
    profiler->generation_ = ++g_last_generation;
    for (size_t i = 0; i < profiler->buffers_.size(); ++i) {
      g_slots[i].store(profiler->buffers_[i]);
    }
    g_generation.store(profiler->generation_);
    g_profiler_running = true;
    profiler->running_ = true;
    profiler->start_unix_ns_ = RealtimeNs();
  }
  if (absl::Status armed = profiler->Arm(); !armed.ok()) {
    profiler->Stop();  // deletes the timers armed so far and restores the handler
    return armed;
  }
  return profiler;
}

absl::Status SamplingProfiler::Arm() {
  const int64_t period_ns = 1000000000 / options_.hz;
  itimerspec spec;
  spec.it_interval.tv_sec = period_ns / 1000000000;
  spec.it_interval.tv_nsec = period_ns % 1000000000;
  spec.it_value = spec.it_interval;
  for (size_t i = 0; i < threads_.size(); ++i) {
    sigevent event;
    std::memset(&event, 0, sizeof(event));
    event.sigev_notify = SIGEV_THREAD_ID;
    event.sigev_signo = kSignal;
    event._sigev_un._tid = static_cast<pid_t>(threads_[i].tid);
    event.sigev_value.sival_ptr =
        reinterpret_cast<void*>(static_cast<uintptr_t>((generation_ << kSlotBits) | i));
    timer_t timer;
    if (timer_create(ThreadCpuClock(threads_[i].tid), &event, &timer) != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot create a CPU-time timer for thread ", threads_[i].tid, ": ", strerror(errno)));
    }
    timers_.push_back(timer);
    if (timer_settime(timer, 0, &spec, nullptr) != 0) {
      return absl::InternalError(absl::StrCat("cannot arm the CPU-time timer of thread ",
                                              threads_[i].tid, ": ", strerror(errno)));
    }
  }
  return absl::OkStatus();
}

void SamplingProfiler::Stop() {
  if (!running_) return;
  std::lock_guard<std::mutex> lock(g_control_mutex);
  for (timer_t timer : timers_) timer_delete(timer);
  timers_.clear();
  g_generation.store(0);
  for (size_t i = 0; i < buffers_.size(); ++i) g_slots[i].store(nullptr);
  // A handler that read a slot before the stores above has announced itself: wait for it.
  while (g_in_flight.load() != 0) sched_yield();
  end_unix_ns_ = RealtimeNs();

  // Signals the timers queued before they were deleted are still delivered; they must reach
  // our handler (which now ignores them), not a restored default action that would kill.
  bool pending = true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (pending && std::chrono::steady_clock::now() < deadline) {
    pending = false;
    for (const ProfiledThread& thread : threads_) {
      if (SignalPendingOn(thread.tid, kSignal)) pending = true;
    }
    if (pending) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!pending && g_handler_installed) {
    if (sigaction(kSignal, &g_previous_action, nullptr) == 0) g_handler_installed = false;
  }
  g_profiler_running = false;
  running_ = false;
}

SamplingProfiler::~SamplingProfiler() {
  Stop();
  for (ThreadBuffer* buffer : buffers_) DeleteBuffer(buffer);
}

int64_t SamplingProfiler::samples() const {
  int64_t total = 0;
  for (const ThreadBuffer* buffer : buffers_) {
    for (int64_t i = 0; i < buffer->sample_count; ++i) total += buffer->samples[i].weight;
  }
  return total;
}

int64_t SamplingProfiler::lost_samples() const {
  int64_t total = 0;
  for (const ThreadBuffer* buffer : buffers_) total += buffer->lost;
  return total;
}

namespace {

// The frames every profile of one run shares: each distinct (function, object) once.
class FrameTable {
 public:
  int Intern(std::string function, std::string object) {
    std::string key = absl::StrCat(function, std::string(1, '\0'), object);
    auto [it, inserted] = index_.emplace(std::move(key), static_cast<int>(frames_.size()));
    if (inserted) {
      v1::ProfileFrame& frame = frames_.emplace_back();
      frame.set_function(std::move(function));
      // The object's file name only: labels stay readable ("?? (libzstd.so.1)", "f (collect)")
      // and a run's profiles compare across machines and Bazel output paths.
      const size_t slash = object.rfind('/');
      frame.set_file(slash == std::string::npos ? std::move(object) : object.substr(slash + 1));
    }
    return it->second;
  }
  const v1::ProfileFrame& frame(int index) const { return frames_[static_cast<size_t>(index)]; }

 private:
  absl::flat_hash_map<std::string, int> index_;
  std::vector<v1::ProfileFrame> frames_;
};

// Chunk records of one thread_index, by start time, for attributing samples.
struct ChunkWindow {
  int64_t start_unix_ns;
  int64_t end_unix_ns;
  int record;
};

class ChunkIndex {
 public:
  explicit ChunkIndex(absl::Span<const v1::ChunkRecord> chunks) {
    for (size_t i = 0; i < chunks.size(); ++i) {
      const v1::ChunkRecord& chunk = chunks[i];
      by_thread_[chunk.thread_index()].push_back(
          ChunkWindow{chunk.start_unix_ns(), chunk.end_unix_ns(), static_cast<int>(i)});
    }
    for (auto& [thread_index, windows] : by_thread_) {
      std::sort(windows.begin(), windows.end(), [](const ChunkWindow& a, const ChunkWindow& b) {
        return a.start_unix_ns < b.start_unix_ns;
      });
    }
  }

  // The record index of the innermost chunk of `thread_index` containing `time`, or -1.
  int Find(int64_t thread_index, int64_t time_unix_ns) const {
    auto it = by_thread_.find(thread_index);
    if (it == by_thread_.end()) return -1;
    const std::vector<ChunkWindow>& windows = it->second;
    auto after = std::upper_bound(
        windows.begin(), windows.end(), time_unix_ns,
        [](int64_t time, const ChunkWindow& window) { return time < window.start_unix_ns; });
    // The latest start that still contains the time is the innermost chunk; only nested
    // chunks make the search go further back than one window.
    constexpr int kMaxLookBack = 64;
    for (int steps = 0; after != windows.begin() && steps < kMaxLookBack; ++steps) {
      --after;
      if (time_unix_ns <= after->end_unix_ns) return after->record;
    }
    return -1;
  }

 private:
  absl::flat_hash_map<int64_t, std::vector<ChunkWindow>> by_thread_;
};

// Builds one Profile's flat tree, frames and chunk attribution from stacks of shared frames.
class ProfileBuilder {
 public:
  explicit ProfileBuilder(const FrameTable* frames) : frames_(frames) {
    v1::ProfileNode* root = profile_.add_nodes();
    root->set_parent(-1);
    root->set_frame(-1);
  }

  // `stack`: shared frame indices, root first.
  void Add(const std::vector<int>& stack, int64_t weight, int chunk_record) {
    v1::ProfileNode* root = profile_.mutable_nodes(0);
    root->set_count(root->count() + weight);
    int node = 0;
    for (int shared : stack) {
      auto [frame_it, new_frame] = local_frame_.emplace(shared, profile_.frames_size());
      if (new_frame) *profile_.add_frames() = frames_->frame(shared);
      auto [child_it, new_node] =
          children_.emplace(std::make_pair(node, frame_it->second), profile_.nodes_size());
      if (new_node) {
        v1::ProfileNode* child = profile_.add_nodes();
        child->set_parent(node);
        child->set_frame(frame_it->second);
      }
      node = child_it->second;
      v1::ProfileNode* current = profile_.mutable_nodes(node);
      current->set_count(current->count() + weight);
    }
    if (chunk_record >= 0) {
      chunk_samples_[chunk_record] += weight;
    } else {
      outside_chunks_ += weight;
    }
  }

  v1::Profile Finish(absl::Span<const v1::ChunkRecord> chunks) && {
    for (const auto& [record, samples] : chunk_samples_) {
      const v1::ChunkRecord& chunk = chunks[static_cast<size_t>(record)];
      v1::ProfileChunkSamples* entry = profile_.add_chunk_samples();
      entry->set_dataset(chunk.dataset());
      entry->set_file(chunk.file());
      entry->set_entry_start(chunk.entry_start());
      entry->set_entry_stop(chunk.entry_stop());
      entry->set_samples(samples);
    }
    profile_.set_samples_outside_chunks(outside_chunks_);
    return std::move(profile_);
  }

 private:
  const FrameTable* frames_;
  v1::Profile profile_;
  absl::flat_hash_map<int, int> local_frame_;               // shared -> profile frame
  absl::flat_hash_map<std::pair<int, int>, int> children_;  // (node, frame) -> node
  std::map<int, int64_t> chunk_samples_;                    // by record index
  int64_t outside_chunks_ = 0;
};

// Every sample of a thread has the same chunk-record thread index once it has one; -1 when none.
int64_t ThreadIndexOf(const SamplingProfiler::ThreadBuffer& buffer) {
  int64_t thread_index = -1;
  for (int64_t i = 0; i < buffer.sample_count && thread_index < 0; ++i) {
    thread_index = buffer.samples[i].thread_index;
  }
  return thread_index;
}

// The thread's entry: the outermost frame most complete unwinds end in (clone or start_thread).
// An unwind that stopped elsewhere (code without unwind tables) lost its outer frames: it is
// marked truncated like one cut at the depth limit.
struct ThreadEntry {
  uintptr_t address = 0;
  int64_t count = 0;  // 0: no complete unwind, so no sample is judged by its outermost frame
};

ThreadEntry FindThreadEntry(const SamplingProfiler::ThreadBuffer& buffer) {
  absl::flat_hash_map<uintptr_t, int64_t> outermost_count;
  for (int64_t i = 0; i < buffer.sample_count; ++i) {
    const RawSample& sample = buffer.samples[i];
    if ((sample.flags & kTruncated) != 0 || sample.frame_count == 0) continue;
    const uintptr_t outermost = buffer.frames[sample.first_frame + sample.frame_count - 1];
    outermost_count[outermost] += sample.weight;
  }
  ThreadEntry entry;
  for (const auto& [address, count] : outermost_count) {
    if (count > entry.count || (count == entry.count && address < entry.address)) {
      entry.address = address;
      entry.count = count;
    }
  }
  return entry;
}

// Turns raw samples into stacks of shared frame indices (outermost first), symbolizing each
// address once.
class StackResolver {
 public:
  explicit StackResolver(FrameTable* frames)
      : frames_(frames), truncated_frame_(frames->Intern(kTruncatedStackFrame, "")) {}

  // Fills `stack` with the sample's frames; returns whether the stack is truncated (its root
  // is then the truncated pseudo-frame).
  bool Resolve(const SamplingProfiler::ThreadBuffer& buffer, const RawSample& sample,
               const ThreadEntry& entry, std::vector<int>* stack) {
    stack->clear();
    const bool truncated =
        (sample.flags & kTruncated) != 0 ||
        (entry.count > 0 && sample.frame_count > 0 &&
         buffer.frames[sample.first_frame + sample.frame_count - 1] != entry.address);
    if (truncated) stack->push_back(truncated_frame_);
    for (int f = sample.frame_count - 1; f >= 0; --f) {
      const uintptr_t address = buffer.frames[sample.first_frame + f];
      // The pc for the interrupted frame, return address - 1 for the others.
      stack->push_back(FrameAt(f == 0 ? address : address - 1));
    }
    return truncated;
  }

  // In a thread's own profile a section is a pseudo-frame just above chunk tracking's wrappers,
  // where the chunk's processor starts (at the root of a truncated stack that lost them).
  void InsertSection(const char* section, bool truncated, std::vector<int>* stack) {
    size_t at = truncated ? 1 : 0;
    for (size_t k = stack->size(); k-- > 0;) {
      if (IsChunkWrapper((*stack)[k])) {
        at = k + 1;
        break;
      }
    }
    auto [it, inserted] = section_frames_.try_emplace(section, 0);
    if (inserted) it->second = frames_->Intern(SectionFrameName(section), "");
    stack->insert(stack->begin() + static_cast<std::ptrdiff_t>(at), it->second);
  }

 private:
  int FrameAt(uintptr_t lookup) {
    auto it = frame_of_address_.find(lookup);
    if (it != frame_of_address_.end()) return it->second;
    threadpool_internal::SymbolizedFrame symbolized = symbolizer_.Symbolize(lookup);
    const int index = frames_->Intern(std::move(symbolized.function), std::move(symbolized.object));
    frame_of_address_.emplace(lookup, index);
    return index;
  }

  bool IsChunkWrapper(int frame) {
    if (static_cast<size_t>(frame) >= chunk_wrapper_.size()) chunk_wrapper_.resize(frame + 1, -1);
    if (chunk_wrapper_[frame] < 0) {
      chunk_wrapper_[frame] = IsChunkWrapperFrame(frames_->frame(frame));
    }
    return chunk_wrapper_[frame] == 1;
  }

  FrameTable* frames_;
  const int truncated_frame_;
  threadpool_internal::Symbolizer symbolizer_;
  absl::flat_hash_map<uintptr_t, int> frame_of_address_;  // by lookup address
  // Per shared frame: 1 when it is a chunk-tracking wrapper, 0 when not, -1 not yet known.
  std::vector<int8_t> chunk_wrapper_;
  absl::flat_hash_map<const char*, int> section_frames_;  // by the section's name pointer
};

}  // namespace

absl::StatusOr<std::vector<v1::Profile>> SamplingProfiler::BuildProfiles(
    absl::Span<const v1::ChunkRecord> chunks, const std::string& host) const {
  if (running_) {
    return absl::FailedPreconditionError("profiles are built after Stop; the profiler runs");
  }
  auto fill = [&](v1::Profile& profile) {
    profile.set_source("threadpool");
    profile.set_host(host);
    profile.set_sampling_interval_seconds(1.0 / options_.hz);
    profile.set_start_unix_ns(start_unix_ns_);
    profile.set_end_unix_ns(end_unix_ns_);
  };
  FrameTable frames;
  StackResolver resolver(&frames);
  const ChunkIndex chunk_index(chunks);
  std::vector<v1::Profile> profiles;
  std::map<std::string, ProfileBuilder> sections;
  std::vector<int> stack;
  for (size_t t = 0; t < threads_.size(); ++t) {
    const ThreadBuffer& buffer = *buffers_[t];
    const int64_t thread_index = ThreadIndexOf(buffer);
    const ThreadEntry entry = FindThreadEntry(buffer);
    ProfileBuilder thread_profile(&frames);
    for (int64_t i = 0; i < buffer.sample_count; ++i) {
      const RawSample& sample = buffer.samples[i];
      const bool truncated = resolver.Resolve(buffer, sample, entry, &stack);
      const int chunk =
          thread_index >= 0 ? chunk_index.Find(thread_index, sample.time_unix_ns) : -1;
      if (sample.section != nullptr) {
        sections.try_emplace(sample.section, &frames)
            .first->second.Add(stack, sample.weight, chunk);
        resolver.InsertSection(sample.section, truncated, &stack);
      }
      thread_profile.Add(stack, sample.weight, chunk);
    }
    v1::Profile profile = std::move(thread_profile).Finish(chunks);
    fill(profile);
    profile.set_worker(threads_[t].worker);
    profile.set_threads(1);
    profile.set_lost_samples(buffer.lost);
    profiles.push_back(std::move(profile));
  }
  for (auto& [name, builder] : sections) {
    v1::Profile profile = std::move(builder).Finish(chunks);
    fill(profile);
    profile.set_section(name);
    profile.set_threads(static_cast<int32_t>(threads_.size()));
    profiles.push_back(std::move(profile));
  }
  return profiles;
}

}  // namespace roastcoffea
