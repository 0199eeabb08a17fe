// The stragglers finding's text (findings_rules.h AddStragglers): each named chunk's cause read
// from its own record, and the advice that follows the dominant cause.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "aggregation/findings.h"
#include "aggregation/findings_contention.h"
#include "aggregation/findings_rules.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace findings_rules {

namespace {

// Where a chunk's wall time went, from its own record.
struct ChunkTimeSplit {
  double cpu = 0, run_queue = 0, blocked = 0;
  bool known = false;  // CPU time (and so blocked time) was measured
};

ChunkTimeSplit SplitOf(const v1::ChunkRecord& chunk) {
  ChunkTimeSplit split;
  const std::optional<double> wait = PlausibleRunQueueWait(chunk);
  split.known = chunk.cpu_seconds() > 0.0 || wait.has_value();
  split.cpu = std::max(0.0, chunk.cpu_seconds());
  split.run_queue = wait.value_or(0.0);
  split.blocked = std::max(0.0, chunk.duration_seconds() - split.cpu - split.run_queue);
  return split;
}

// A straggler read as many times the median bytes reads "a large file".
constexpr double kLargeReadRatio = 2.0;

// The stragglers' advice, from the named chunks' summed time split (`total` over `wall`
// seconds) and their mean bytes read against the median: `cause` is "unknown", "run_queue",
// "blocked" or "cpu".
std::string StragglerSuggestion(const ChunkTimeSplit& total, double wall, double mean_bytes,
                                double median_bytes, const Builder& b, std::string& cause) {
  std::string suggestion;
  if (!total.known || wall <= 0.0) {
    cause = "unknown";
    suggestion =
        "Look at what the slowest chunks share (a file, a dataset, a worker): slow storage or a "
        "busy node; split large or expensive files into smaller chunks so one cannot hold up the "
        "end.";
  } else if (total.run_queue >= total.cpu && total.run_queue >= total.blocked) {
    cause = "run_queue";
    suggestion =
        absl::StrCat("The slowest chunks mostly waited for a CPU (", Pct(total.run_queue / wall),
                     " of their time), not for their data: the host was oversubscribed",
                     b.Fired("cpu_contention")   ? " (see the CPU contention finding)"
                     : b.Fired("cpu_starvation") ? " (see the CPU starvation finding)"
                                                 : "",
                     ". Fix the CPU contention; splitting files will not help.");
  } else if (total.blocked >= total.cpu) {
    cause = "blocked";
    const bool large = median_bytes > 0.0 && mean_bytes >= kLargeReadRatio * median_bytes;
    // No byte read recorded at all: nothing says the wait was storage.
    const bool no_reads = median_bytes <= 0.0 && mean_bytes <= 0.0;
    suggestion =
        no_reads ? absl::StrCat("The slowest chunks were blocked ", Pct(total.blocked / wall),
                                " of their time, and no bytes read were recorded: find what they "
                                "waited on (reads the records do not count, locks, sleeps, "
                                "remote calls).")
        : large  ? absl::StrCat("The slowest chunks were blocked ", Pct(total.blocked / wall),
                                " of their time and read ", Bytes(mean_bytes),
                                " each against a median ", Bytes(median_bytes),
                                ": large files or slow storage; split those files into smaller "
                                 "chunks or read them from faster storage.")
                 : absl::StrCat("The slowest chunks were blocked ", Pct(total.blocked / wall),
                                " of their time without reading more than the others: slow storage, "
                                 "a busy file server or a lock; check the storage they read from.");
  } else {
    cause = "cpu";
    suggestion = absl::StrCat(
        "The slowest chunks were on CPU ", Pct(total.cpu / wall),
        " of their time: their events are expensive (file content, e.g. more objects per "
        "event); split those files into smaller chunks, or look at what makes their events "
        "costly.");
  }
  return suggestion;
}

}  // namespace

void AddStragglers(const std::vector<const v1::ChunkRecord*>& named, int64_t stragglers,
                   size_t successful, double max, double median, double median_bytes, Builder& b) {
  ChunkTimeSplit total;
  double wall = 0, bytes = 0;
  int retries = 0;
  std::vector<std::string> described;
  for (const v1::ChunkRecord* chunk : named) {
    const ChunkTimeSplit split = SplitOf(*chunk);
    const double d = chunk->duration_seconds();
    std::string text = absl::StrCat(DescribeChunk(*chunk), " ", Seconds(d));
    if (split.known && d > 0.0) {
      absl::StrAppend(&text, ": CPU ", Seconds(split.cpu));
      if (PlausibleRunQueueWait(*chunk).has_value()) {
        absl::StrAppend(&text, ", waiting for a CPU ", Pct(split.run_queue / d));
      }
      absl::StrAppend(&text, ", blocked ", Pct(split.blocked / d));
      total.known = true;
    }
    if (chunk->compressed_bytes_read() > 0) {
      absl::StrAppend(&text, ", read ", Bytes(static_cast<double>(chunk->compressed_bytes_read())));
    }
    absl::StrAppend(&text, MachineLoadNote(*chunk));
    if (chunk->attempt() > 0) {
      absl::StrAppend(&text, ", attempt ", chunk->attempt() + 1);
      ++retries;
    }
    described.push_back(std::move(text));
    total.cpu += split.cpu;
    total.run_queue += split.run_queue;
    total.blocked += split.blocked;
    wall += d;
    bytes += static_cast<double>(std::max<int64_t>(0, chunk->compressed_bytes_read()));
  }
  const double mean_bytes = named.empty() ? 0.0 : bytes / static_cast<double>(named.size());
  std::string cause;
  std::string suggestion = StragglerSuggestion(total, wall, mean_bytes, median_bytes, b, cause);
  if (cause != "run_queue") absl::StrAppend(&suggestion, ContendedNote(named, b));
  if (retries > 0) {
    absl::StrAppend(&suggestion, " ",
                    Count(retries, "named chunk was a retry", "named chunks were retries"),
                    ": see why the first attempt was lost.");
  }
  v1::Finding& f =
      b.Add(v1::Finding::SEVERITY_WARNING, "stragglers",
            absl::StrFormat("Stragglers: the slowest chunk took %.1fx the median (%s vs %s)",
                            max / median, Seconds(max), Seconds(median)),
            absl::StrCat(Count(stragglers, "chunk", "chunks"), " of ", successful,
                         " took >= ", absl::StrFormat("%g", kStragglerRatio),
                         "x the median. Slowest: ", absl::StrJoin(described, "; "), "."),
            std::move(suggestion));
  Number(f, "max_over_median", max / median, "ratio");
  Number(f, "max_chunk_seconds", max, "s");
  Number(f, "median_chunk_seconds", median, "s");
  Number(f, "straggler_chunks", static_cast<double>(stragglers), "chunks");
  if (total.known && wall > 0.0) {
    Number(f, "named_cpu_fraction", total.cpu / wall, "fraction");
    Number(f, "named_run_queue_wait_fraction", total.run_queue / wall, "fraction");
    Number(f, "named_blocked_fraction", total.blocked / wall, "fraction");
  }
  Number(f, "named_retries", retries, "chunks");
}

}  // namespace findings_rules
}  // namespace aggregation_internal
}  // namespace roastcoffea
