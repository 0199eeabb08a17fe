#include "backends/threadpool/sampling_profiler.h"

#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "instrumentation/chunk_tracking.h"
#include "instrumentation/sections.h"
#include "profile/profile.h"
#include "profile/profile_frames.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMs = 1000000;

int64_t Gettid() { return static_cast<int64_t>(syscall(SYS_gettid)); }

int64_t ThreadCpuNs() {
  timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

// The known hot function: burns `cpu_ns` of this thread's CPU time, nearly all of it in its
// own loop (the clock is read once per ~100k iterations).
__attribute__((noinline)) uint64_t BurnHotLoopForProfilerTest(int64_t cpu_ns) {
  uint64_t x = 1;
  const int64_t end = ThreadCpuNs() + cpu_ns;
  while (ThreadCpuNs() < end) {
    for (int i = 0; i < 100000; ++i) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      asm volatile("" : "+r"(x));
    }
  }
  return x;
}

// A second, different loop, so that the two cannot be folded into one function.
__attribute__((noinline)) uint64_t BurnColdLoopForProfilerTest(int64_t cpu_ns) {
  uint64_t x = 7;
  const int64_t end = ThreadCpuNs() + cpu_ns;
  while (ThreadCpuNs() < end) {
    for (int i = 0; i < 50000; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      asm volatile("" : "+r"(x));
    }
  }
  return x;
}

__attribute__((noinline)) uint64_t RecurseThenBurn(int depth, int64_t cpu_ns) {
  if (depth == 0) return BurnHotLoopForProfilerTest(cpu_ns);
  const uint64_t result = RecurseThenBurn(depth - 1, cpu_ns) + 1;
  asm volatile("" ::: "memory");  // keeps the call from becoming a tail call
  return result;
}

// `n` threads that start, report their tids, wait for Go(), run body(k) and record the CPU
// time the body used.
class ThreadGroup {
 public:
  ThreadGroup(int n, std::function<void(int)> body) : body_(std::move(body)), cpu_ns_(n, 0) {
    tids_.resize(n, 0);
    for (int k = 0; k < n; ++k) {
      threads_.emplace_back([this, k] {
        {
          std::unique_lock<std::mutex> lock(mutex_);
          tids_[k] = Gettid();
          ++started_;
          changed_.notify_all();
          changed_.wait(lock, [this] { return go_; });
        }
        const int64_t before = ThreadCpuNs();
        body_(k);
        const int64_t used = ThreadCpuNs() - before;
        std::lock_guard<std::mutex> lock(mutex_);
        cpu_ns_[k] = used;
      });
    }
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return started_ == n; });
  }
  ~ThreadGroup() {
    Go();
    Join();
  }

  std::vector<ProfiledThread> threads() const {
    std::vector<ProfiledThread> threads;
    for (size_t k = 0; k < tids_.size(); ++k) {
      threads.push_back(ProfiledThread{tids_[k], absl::StrCat("worker-", k)});
    }
    return threads;
  }
  void Go() {
    std::lock_guard<std::mutex> lock(mutex_);
    go_ = true;
    changed_.notify_all();
  }
  void Join() {
    for (std::thread& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
  }
  int64_t cpu_ns(int k) {
    std::lock_guard<std::mutex> lock(mutex_);
    return cpu_ns_[static_cast<size_t>(k)];
  }

 private:
  std::function<void(int)> body_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int started_ = 0;
  bool go_ = false;
  std::vector<int64_t> tids_;
  std::vector<int64_t> cpu_ns_;
  std::vector<std::thread> threads_;
};

// Exclusive samples per function name: a node's count minus its children's.
std::map<std::string, int64_t> ExclusiveByFunction(const v1::Profile& profile) {
  std::vector<int64_t> children(static_cast<size_t>(profile.nodes_size()), 0);
  for (int i = 1; i < profile.nodes_size(); ++i) {
    children[static_cast<size_t>(profile.nodes(i).parent())] += profile.nodes(i).count();
  }
  std::map<std::string, int64_t> exclusive;
  for (int i = 1; i < profile.nodes_size(); ++i) {
    const v1::ProfileNode& node = profile.nodes(i);
    exclusive[profile.frames(node.frame()).function()] +=
        node.count() - children[static_cast<size_t>(i)];
  }
  return exclusive;
}

std::string HeaviestExclusiveFunction(const v1::Profile& profile) {
  std::string best;
  int64_t best_count = -1;
  for (const auto& [function, count] : ExclusiveByFunction(profile)) {
    if (count > best_count) {
      best = function;
      best_count = count;
    }
  }
  return best;
}

// The flat-tree invariants of the schema: root first, parents before children, inclusive
// counts that never grow towards the leaves.
void ExpectWellFormedTree(const v1::Profile& profile) {
  ASSERT_GE(profile.nodes_size(), 1);
  EXPECT_EQ(profile.nodes(0).parent(), -1);
  EXPECT_EQ(profile.nodes(0).frame(), -1);
  std::vector<int64_t> children(static_cast<size_t>(profile.nodes_size()), 0);
  for (int i = 1; i < profile.nodes_size(); ++i) {
    const v1::ProfileNode& node = profile.nodes(i);
    ASSERT_GE(node.parent(), 0);
    ASSERT_LT(node.parent(), i);
    ASSERT_GE(node.frame(), 0);
    ASSERT_LT(node.frame(), profile.frames_size());
    EXPECT_GT(node.count(), 0);
    children[static_cast<size_t>(node.parent())] += node.count();
  }
  for (int i = 0; i < profile.nodes_size(); ++i) {
    EXPECT_LE(children[static_cast<size_t>(i)], profile.nodes(i).count()) << "node " << i;
  }
}

bool AnyFrameContains(const v1::Profile& profile, const std::string& text) {
  for (const v1::ProfileFrame& frame : profile.frames()) {
    if (absl::StrContains(frame.function(), text)) return true;
  }
  return false;
}

SamplingProfilerOptions AtHz(int hz) {
  SamplingProfilerOptions options;
  options.hz = hz;
  return options;
}

// Expected samples for `cpu_ns` at `hz`, with room for the tick granularity of CPU timers.
void ExpectSamplesMatchCpuTime(int64_t samples, int64_t cpu_ns, int hz) {
  const double expected = static_cast<double>(cpu_ns) * hz * 1e-9;
  EXPECT_NEAR(static_cast<double>(samples), expected, 0.2 * expected + 3)
      << "CPU seconds " << cpu_ns * 1e-9;
}

#define SKIP_UNLESS_SUPPORTED()                                                  \
  if (absl::Status supported = SamplingProfiler::Supported(); !supported.ok()) { \
    GTEST_SKIP() << supported;                                                   \
  }

TEST(SamplingProfilerTest, FindsTheHotFunctionDemangledAndSamplesInProportionToCpuTime) {
  SKIP_UNLESS_SUPPORTED();
  ThreadGroup group(2, [](int) { BurnHotLoopForProfilerTest(400 * kMs); });
  absl::StatusOr<std::unique_ptr<SamplingProfiler>> profiler =
      SamplingProfiler::Start(group.threads(), SamplingProfilerOptions{});
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  group.Go();
  group.Join();
  (*profiler)->Stop();
  absl::StatusOr<std::vector<v1::Profile>> profiles = (*profiler)->BuildProfiles({}, "host-a");
  ASSERT_TRUE(profiles.ok()) << profiles.status();
  ASSERT_EQ(profiles->size(), 2u);  // one per thread; no sections were open
  int64_t total = 0;
  for (int k = 0; k < 2; ++k) {
    const v1::Profile& profile = (*profiles)[static_cast<size_t>(k)];
    SCOPED_TRACE(profile.worker());
    ExpectWellFormedTree(profile);
    EXPECT_EQ(profile.source(), "threadpool");
    EXPECT_EQ(profile.worker(), absl::StrCat("worker-", k));
    EXPECT_EQ(profile.host(), "host-a");
    EXPECT_EQ(profile.threads(), 1);
    EXPECT_EQ(profile.section(), "");
    EXPECT_DOUBLE_EQ(profile.sampling_interval_seconds(), 0.01);
    EXPECT_LE(profile.start_unix_ns(), profile.end_unix_ns());
    EXPECT_EQ(profile.lost_samples(), 0);
    const int64_t samples = profile.nodes(0).count();
    ExpectSamplesMatchCpuTime(samples, group.cpu_ns(k), 100);
    EXPECT_EQ(profile.samples_outside_chunks(), samples);  // no chunk records given
    EXPECT_THAT(HeaviestExclusiveFunction(profile),
                HasSubstr("(anonymous namespace)::BurnHotLoopForProfilerTest(long)"));
    // What readers of profiles see: a valid tree whose heaviest stack ends in the hot loop.
    EXPECT_TRUE(ValidateProfile(profile).ok()) << ValidateProfile(profile);
    absl::StatusOr<ProfileAnalysis> analysis = AnalyzeProfile(profile);
    ASSERT_TRUE(analysis.ok()) << analysis.status();
    ASSERT_FALSE(analysis->top_stacks.empty());
    EXPECT_THAT(analysis->top_stacks[0].frames.back(), HasSubstr("BurnHotLoopForProfilerTest"));
    EXPECT_EQ(analysis->total_samples, profile.nodes(0).count());
    // The profiler's own frames are not in the stacks.
    EXPECT_FALSE(AnyFrameContains(profile, "OnProfilerSignal"));
    EXPECT_FALSE(AnyFrameContains(profile, "RecordSample"));
    EXPECT_FALSE(AnyFrameContains(profile, "_Unwind_"));
    EXPECT_FALSE(AnyFrameContains(profile, "(truncated stack)"));
    // Callers were unwound: the thread body that called the hot loop is on the stack.
    EXPECT_TRUE(AnyFrameContains(profile, "ThreadGroup"));
    total += samples;
  }
  EXPECT_EQ((*profiler)->samples(), total);
  EXPECT_EQ((*profiler)->lost_samples(), 0);
}

TEST(SamplingProfilerTest, AttributesSamplesToSectionsAndChunks) {
  SKIP_UNLESS_SUPPORTED();
  std::vector<v1::ChunkRecord> records(2);
  std::vector<int64_t> hot_cpu_ns(2), chunk_cpu_ns(2);
  ThreadGroup group(2, [&](int k) {
    records[static_cast<size_t>(k)] =
        TrackChunk(ChunkMetadata{"ds", absl::StrCat("file-", k), "", 0, 100, 100}, [&] {
          const int64_t before = ThreadCpuNs();
          {
            ScopedTimer hot("hot_section");
            BurnHotLoopForProfilerTest(300 * kMs);
          }
          hot_cpu_ns[static_cast<size_t>(k)] = ThreadCpuNs() - before;
          BurnColdLoopForProfilerTest(50 * kMs);  // in the chunk, in no section
          chunk_cpu_ns[static_cast<size_t>(k)] = ThreadCpuNs() - before;
        });
    BurnColdLoopForProfilerTest(100 * kMs);  // outside any chunk
  });
  absl::StatusOr<std::unique_ptr<SamplingProfiler>> profiler =
      SamplingProfiler::Start(group.threads());
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  group.Go();
  group.Join();
  (*profiler)->Stop();
  absl::StatusOr<std::vector<v1::Profile>> profiles = (*profiler)->BuildProfiles(records, "host-b");
  ASSERT_TRUE(profiles.ok()) << profiles.status();
  ASSERT_EQ(profiles->size(), 3u);  // two threads, then the one section

  for (int k = 0; k < 2; ++k) {
    const v1::Profile& profile = (*profiles)[static_cast<size_t>(k)];
    SCOPED_TRACE(profile.worker());
    ASSERT_EQ(profile.chunk_samples_size(), 1);
    const v1::ProfileChunkSamples& chunk = profile.chunk_samples(0);
    EXPECT_EQ(chunk.dataset(), "ds");
    EXPECT_EQ(chunk.file(), absl::StrCat("file-", k));  // its own thread's chunk
    EXPECT_EQ(chunk.entry_start(), 0);
    EXPECT_EQ(chunk.entry_stop(), 100);
    ExpectSamplesMatchCpuTime(chunk.samples(), chunk_cpu_ns[static_cast<size_t>(k)], 100);
    ExpectSamplesMatchCpuTime(profile.samples_outside_chunks(),
                              group.cpu_ns(k) - chunk_cpu_ns[static_cast<size_t>(k)], 100);
    EXPECT_EQ(chunk.samples() + profile.samples_outside_chunks(), profile.nodes(0).count());
    EXPECT_TRUE(AnyFrameContains(profile, "BurnColdLoopForProfilerTest"));
    // The section is a pseudo-frame right above chunk tracking's wrappers, holding the
    // section's samples.
    int64_t in_section = 0;
    for (int i = 1; i < profile.nodes_size(); ++i) {
      const v1::ProfileNode& node = profile.nodes(i);
      if (profile.frames(node.frame()).function() != "[section: hot_section]") continue;
      in_section += node.count();
      const v1::ProfileNode& parent = profile.nodes(node.parent());
      ASSERT_GE(parent.frame(), 0);
      EXPECT_TRUE(IsChunkWrapperFrame(profile.frames(parent.frame())))
          << profile.frames(parent.frame()).function();
    }
    ExpectSamplesMatchCpuTime(in_section, hot_cpu_ns[static_cast<size_t>(k)], 100);
    // Collapsed for display, the section starts the stacks of its samples.
    absl::StatusOr<v1::Profile> collapsed = CollapseWrapperFrames(profile);
    ASSERT_TRUE(collapsed.ok()) << collapsed.status();
    bool section_at_root = false;
    for (int i = 1; i < collapsed->nodes_size(); ++i) {
      const v1::ProfileNode& node = collapsed->nodes(i);
      section_at_root |= node.parent() == 0 &&
                         collapsed->frames(node.frame()).function() == "[section: hot_section]";
    }
    EXPECT_TRUE(section_at_root);
  }

  const v1::Profile& section = (*profiles)[2];
  ExpectWellFormedTree(section);
  EXPECT_EQ(section.section(), "hot_section");
  EXPECT_EQ(section.worker(), "");
  EXPECT_EQ(section.threads(), 2);
  EXPECT_EQ(section.source(), "threadpool");
  ExpectSamplesMatchCpuTime(section.nodes(0).count(), hot_cpu_ns[0] + hot_cpu_ns[1], 100);
  EXPECT_THAT(HeaviestExclusiveFunction(section), HasSubstr("BurnHotLoopForProfilerTest"));
  EXPECT_FALSE(AnyFrameContains(section, "BurnColdLoopForProfilerTest"));
  // Every section sample is inside a chunk: both chunks appear.
  EXPECT_EQ(section.chunk_samples_size(), 2);
  EXPECT_EQ(section.samples_outside_chunks(), 0);
}

int counting_handler_calls = 0;
void CountingHandler(int, siginfo_t*, void*) { ++counting_handler_calls; }

TEST(SamplingProfilerTest, RestoresThePreviousHandlerAndForwardsForeignSignalsToIt) {
  SKIP_UNLESS_SUPPORTED();
  struct sigaction mine = {};
  mine.sa_sigaction = &CountingHandler;
  mine.sa_flags = SA_SIGINFO;
  sigemptyset(&mine.sa_mask);
  struct sigaction original = {};
  ASSERT_EQ(sigaction(SIGPROF, &mine, &original), 0);
  {
    ThreadGroup group(1, [](int) { BurnHotLoopForProfilerTest(50 * kMs); });
    absl::StatusOr<std::unique_ptr<SamplingProfiler>> profiler =
        SamplingProfiler::Start(group.threads(), AtHz(1000));
    ASSERT_TRUE(profiler.ok()) << profiler.status();
    struct sigaction during = {};
    ASSERT_EQ(sigaction(SIGPROF, nullptr, &during), 0);
    EXPECT_NE(during.sa_sigaction, &CountingHandler);
    // Not one of the profiler's timers: goes on to the handler that was there before.
    raise(SIGPROF);
    EXPECT_EQ(counting_handler_calls, 1);
    group.Go();
    group.Join();
    (*profiler)->Stop();
    EXPECT_GT((*profiler)->samples(), 0);
  }
  EXPECT_EQ(counting_handler_calls, 1);  // the timers' signals never reached it
  struct sigaction after = {};
  ASSERT_EQ(sigaction(SIGPROF, nullptr, &after), 0);
  EXPECT_EQ(after.sa_sigaction, &CountingHandler);
  ASSERT_EQ(sigaction(SIGPROF, &original, nullptr), 0);
}

TEST(SamplingProfilerTest, StoppingWhileTheThreadsStillRunIsSafe) {
  SKIP_UNLESS_SUPPORTED();
  struct sigaction before = {};
  ASSERT_EQ(sigaction(SIGPROF, nullptr, &before), 0);
  std::atomic<bool> stop_burning{false};
  ThreadGroup group(2, [&](int) {
    while (!stop_burning.load()) BurnHotLoopForProfilerTest(2 * kMs);
  });
  absl::StatusOr<std::unique_ptr<SamplingProfiler>> profiler =
      SamplingProfiler::Start(group.threads(), AtHz(1000));
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  group.Go();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  (*profiler)->Stop();
  EXPECT_FALSE((*profiler)->running());
  const int64_t samples = (*profiler)->samples();
  EXPECT_GT(samples, 0);
  // The threads go on burning with the handler gone; no further samples arrive.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ((*profiler)->samples(), samples);
  struct sigaction after = {};
  ASSERT_EQ(sigaction(SIGPROF, nullptr, &after), 0);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
  (*profiler)->Stop();  // idempotent
  // A new profiler can start once the first has stopped, on the same running threads.
  absl::StatusOr<std::unique_ptr<SamplingProfiler>> second =
      SamplingProfiler::Start(group.threads());
  ASSERT_TRUE(second.ok()) << second.status();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  second->reset();  // the destructor stops it
  stop_burning.store(true);
  group.Join();
  absl::StatusOr<std::vector<v1::Profile>> profiles = (*profiler)->BuildProfiles({}, "h");
  ASSERT_TRUE(profiles.ok()) << profiles.status();
  EXPECT_EQ((*profiles)[0].nodes(0).count() + (*profiles)[1].nodes(0).count(), samples);
}

#if defined(__x86_64__)
// Calls fn(arg) from a frame whose unwind information says "no caller" (as for a thread's
// entry): stacks sampled below it end there, short of the thread's real entry.
extern "C" uint64_t NoUnwindTrampolineForProfilerTest(uint64_t (*fn)(int64_t), int64_t arg);
asm(R"(
  .text
  .globl NoUnwindTrampolineForProfilerTest
  .type NoUnwindTrampolineForProfilerTest, @function
NoUnwindTrampolineForProfilerTest:
  .cfi_startproc
  .cfi_undefined rip
  pushq %rbp
  movq %rdi, %rax
  movq %rsi, %rdi
  callq *%rax
  popq %rbp
  ret
  .cfi_endproc
  .size NoUnwindTrampolineForProfilerTest, .-NoUnwindTrampolineForProfilerTest
)");

TEST(SamplingProfilerTest, MarksStacksThatEndShortOfTheThreadEntryAsTruncated) {
  SKIP_UNLESS_SUPPORTED();
  int64_t cold_cpu_ns = 0;
  ThreadGroup group(1, [&](int) {
    BurnHotLoopForProfilerTest(300 * kMs);
    const int64_t before = ThreadCpuNs();
    NoUnwindTrampolineForProfilerTest(&BurnColdLoopForProfilerTest, 100 * kMs);
    cold_cpu_ns = ThreadCpuNs() - before;
  });
  absl::StatusOr<std::unique_ptr<SamplingProfiler>> profiler =
      SamplingProfiler::Start(group.threads());
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  group.Go();
  group.Join();
  (*profiler)->Stop();
  absl::StatusOr<std::vector<v1::Profile>> profiles = (*profiler)->BuildProfiles({}, "h");
  ASSERT_TRUE(profiles.ok()) << profiles.status();
  const v1::Profile& profile = (*profiles)[0];
  ExpectSamplesMatchCpuTime(TruncatedStackSamples(profile), cold_cpu_ns, 100);
  // Under the marker: the stacks that ended in the trampoline; the hot loop's are complete.
  for (int i = 1; i < profile.nodes_size(); ++i) {
    const v1::ProfileNode& node = profile.nodes(i);
    if (node.parent() != 0) continue;
    const std::string& function = profile.frames(node.frame()).function();
    if (function == kTruncatedStackFrame) continue;
    EXPECT_EQ(function.find("NoUnwindTrampoline"), std::string::npos);
  }
  EXPECT_TRUE(AnyFrameContains(profile, "NoUnwindTrampolineForProfilerTest"));
}
#endif  // defined(__x86_64__)

TEST(SamplingProfilerTest, KeepsTheInnermostFramesOfDeepStacks) {
  SKIP_UNLESS_SUPPORTED();
  ThreadGroup group(1, [](int) { RecurseThenBurn(40, 100 * kMs); });
  SamplingProfilerOptions options;
  options.max_stack_depth = 4;
  absl::StatusOr<std::unique_ptr<SamplingProfiler>> profiler =
      SamplingProfiler::Start(group.threads(), options);
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  group.Go();
  group.Join();
  (*profiler)->Stop();
  absl::StatusOr<std::vector<v1::Profile>> profiles = (*profiler)->BuildProfiles({}, "h");
  ASSERT_TRUE(profiles.ok()) << profiles.status();
  const v1::Profile& profile = (*profiles)[0];
  ExpectWellFormedTree(profile);
  ASSERT_GT(profile.nodes_size(), 1);
  // Every sample is deeper than 4 frames: all hang below the truncation marker.
  const v1::ProfileNode& first = profile.nodes(1);
  EXPECT_EQ(first.parent(), 0);
  EXPECT_EQ(profile.frames(first.frame()).function(), "(truncated stack)");
  EXPECT_EQ(first.count(), profile.nodes(0).count());
  EXPECT_THAT(HeaviestExclusiveFunction(profile), HasSubstr("BurnHotLoopForProfilerTest"));
  EXPECT_TRUE(AnyFrameContains(profile, "RecurseThenBurn"));
}

TEST(SamplingProfilerTest, CountsSamplesBeyondAFullBufferAsLost) {
  SKIP_UNLESS_SUPPORTED();
  ThreadGroup group(1, [](int) { BurnHotLoopForProfilerTest(200 * kMs); });
  SamplingProfilerOptions options;
  options.max_samples_per_thread = 5;
  absl::StatusOr<std::unique_ptr<SamplingProfiler>> profiler =
      SamplingProfiler::Start(group.threads(), options);
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  group.Go();
  group.Join();
  (*profiler)->Stop();
  EXPECT_GT((*profiler)->lost_samples(), 5);
  absl::StatusOr<std::vector<v1::Profile>> profiles = (*profiler)->BuildProfiles({}, "h");
  ASSERT_TRUE(profiles.ok()) << profiles.status();
  EXPECT_EQ((*profiles)[0].lost_samples(), (*profiler)->lost_samples());
  EXPECT_GE((*profiles)[0].nodes(0).count(), 5);
}

TEST(SamplingProfilerTest, RejectsBadOptionsAndASecondProfiler) {
  SKIP_UNLESS_SUPPORTED();
  const std::vector<ProfiledThread> me = {{Gettid(), "main"}};
  SamplingProfilerOptions options;
  options.hz = 0;
  absl::Status status = SamplingProfiler::Start(me, options).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("got 0"));
  options.hz = 1001;
  EXPECT_THAT(SamplingProfiler::Start(me, options).status().message(), HasSubstr("1000"));
  options = SamplingProfilerOptions{};
  options.max_stack_depth = 0;
  EXPECT_THAT(SamplingProfiler::Start(me, options).status().message(),
              HasSubstr("max_stack_depth"));
  EXPECT_EQ(SamplingProfiler::Start({}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(SamplingProfiler::Start({{-3, "w"}}).status().message(), HasSubstr("-3"));
  // No such thread: the timer cannot be created; the error names the tid.
  status = SamplingProfiler::Start({{0x3ffffff0, "gone"}}).status();
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr(absl::StrCat(0x3ffffff0)));

  absl::StatusOr<std::unique_ptr<SamplingProfiler>> first = SamplingProfiler::Start(me);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(SamplingProfiler::Start(me).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*first)->BuildProfiles({}, "h").status().code(),
            absl::StatusCode::kFailedPrecondition);
  (*first)->Stop();
  EXPECT_TRUE((*first)->BuildProfiles({}, "h").ok());
}

}  // namespace
}  // namespace roastcoffea
