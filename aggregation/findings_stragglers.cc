// The stragglers finding's text (findings_rules.h AddStragglers): each named chunk's cause read
// from its own record, and the advice that follows the dominant cause.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
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

// A straggler read as many times the median bytes (or events) reads "a large file".
constexpr double kLargeReadRatio = 2.0;

// The named chunks' mean events and bytes against the successful chunks' medians.
struct ChunkSizes {
  double mean_bytes = 0, median_bytes = 0, mean_events = 0, median_events = 0;
};

// The advice where no CPU time says where the stragglers' time went: "large files" only where
// they had kLargeReadRatio x the median events or bytes.
std::string UnknownCauseSuggestion(const ChunkSizes& s) {
  const bool more_events =
      s.median_events > 0.0 && s.mean_events >= kLargeReadRatio * s.median_events;
  const bool more_bytes = s.median_bytes > 0.0 && s.mean_bytes >= kLargeReadRatio * s.median_bytes;
  const std::string unknown =
      "No CPU time was recorded, so where the slowest chunks' time went is not known";
  if (more_events || more_bytes) {
    return absl::StrCat(unknown, "; they were larger than the others (",
                        more_events
                            ? absl::StrFormat("%.0f events each against a median %.0f",
                                              s.mean_events, s.median_events)
                            : absl::StrCat("read ", Bytes(s.mean_bytes), " each against a median ",
                                           Bytes(s.median_bytes)),
                        "): split those files into smaller chunks so one cannot hold up the end.");
  }
  const bool sized = s.median_events > 0.0 || s.median_bytes > 0.0;
  return absl::StrCat(unknown,
                      sized ? ", and they were no larger than the others (events, bytes read)"
                            : ", nor their size (no events or bytes read recorded)",
                      ": look at what they share (a file, a dataset, a worker): slow storage, a "
                      "busy node or costly events.");
}

// The stragglers' advice, from the named chunks' summed time split (`total` over `wall`
// seconds) and their sizes against the medians: `cause` is "unknown", "run_queue", "blocked" or
// "cpu".
std::string StragglerSuggestion(const ChunkTimeSplit& total, double wall, const ChunkSizes& sizes,
                                const Builder& b, std::string& cause) {
  const double mean_bytes = sizes.mean_bytes, median_bytes = sizes.median_bytes;
  std::string suggestion;
  if (!total.known || wall <= 0.0) {
    cause = "unknown";
    suggestion = UnknownCauseSuggestion(sizes);
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
                   size_t successful, double max, double median, double median_bytes,
                   const std::function<double()>& median_events, Builder& b) {
  ChunkTimeSplit total;
  double wall = 0, bytes = 0, events = 0;
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
    events += static_cast<double>(std::max<int64_t>(0, chunk->events()));
  }
  const double count = std::max<double>(1.0, static_cast<double>(named.size()));
  // The median events are read only where the cause is unknown (a pass over every record).
  const bool unknown = !total.known || wall <= 0.0;
  const ChunkSizes sizes{bytes / count, median_bytes, events / count,
                         unknown ? median_events() : 0.0};
  std::string cause;
  std::string suggestion = StragglerSuggestion(total, wall, sizes, b, cause);
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
