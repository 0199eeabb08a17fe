#include "aggregation/invariants.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

constexpr double kTolerance = 1e-6;

bool Exceeds(double value, double limit) { return value > limit * (1 + kTolerance); }

// Why a figure over tracked capacity can exceed its bound, from the windows the data cover.
std::string CapacityCause(const InvariantInputs& in) {
  const bool windows_known = (in.window_start_unix_ns != 0 || in.window_end_unix_ns != 0) &&
                             (in.chunks_start_unix_ns != 0 || in.chunks_end_unix_ns != 0);
  if (windows_known) {
    const double before = (in.window_start_unix_ns - in.chunks_start_unix_ns) * 1e-9;
    const double after = (in.chunks_end_unix_ns - in.window_end_unix_ns) * 1e-9;
    if (before > 0.001 || after > 0.001) {
      return absl::StrFormat(
          "two time windows mixed: the chunk records cover %.1f s before and %.1f s after the "
          "tracked window the core-seconds come from (e.g. --follow attached to a run already "
          "running)",
          before > 0 ? before : 0.0, after > 0 ? after : 0.0);
    }
  }
  return "the tracked capacity is below what the chunks used (workers or cores missing from "
         "the tracking, or a different time window than the chunks)";
}

}  // namespace

std::vector<v1::ImpossibleFigure> CheckInvariants(const InvariantInputs& in) {
  std::vector<v1::ImpossibleFigure> out;
  const v1::AggregatedMetrics& m = *in.metrics;
  const auto add = [&](const char* code, const std::string& figure, double value, double limit,
                       const std::string& what, const std::string& cause) {
    v1::ImpossibleFigure& f = out.emplace_back();
    f.set_code(code);
    f.set_figure(figure);
    f.set_value(value);
    f.set_limit(limit);
    f.set_message(absl::StrCat(what, " (", figure, ") is impossible: likely cause: ", cause));
  };
  const auto efficiency = [&](const std::string& figure, bool known, double value,
                              const std::string& cause) {
    if (!known || !Exceeds(value, 1)) return;
    add("invalid_efficiency", figure, value, 1,
        absl::StrFormat("%s %.2f (above 1, %.1f %%)", figure, value, 100 * value), cause);
  };
  const std::string capacity = CapacityCause(in);
  efficiency("cpu_efficiency", m.cpu().has_cpu_efficiency_fraction(),
             m.cpu().cpu_efficiency_fraction(),
             "the CPU time was measured over more threads or a longer time than the capacity");
  const v1::EfficiencyMetrics& e = m.efficiency();
  efficiency("core_efficiency", e.has_core_efficiency_fraction(), e.core_efficiency_fraction(),
             capacity);
  efficiency("core_efficiency_over_core_seconds",
             e.has_core_efficiency_over_core_seconds_fraction(),
             e.core_efficiency_over_core_seconds_fraction(), capacity);
  efficiency("parallel_efficiency", e.has_parallel_efficiency_fraction(),
             e.parallel_efficiency_fraction(), capacity);
  efficiency("task_execution_core_efficiency", e.has_task_execution_core_efficiency_fraction(),
             e.task_execution_core_efficiency_fraction(), capacity);

  if (m.has_chunks()) {
    for (const v1::SectionStats& section : m.chunks().section_stats()) {
      if (!Exceeds(section.share_of_chunk_time_fraction(), 1)) continue;
      const std::string figure =
          absl::StrCat("section_stats.", section.name(), ".time.share_of_chunk_time");
      add("invalid_share", figure, section.share_of_chunk_time_fraction(), 1,
          absl::StrFormat("section '%s' share of chunk time %.1f %%", section.name(),
                          100 * section.share_of_chunk_time_fraction()),
          "the section's timer ran outside the chunk or on other threads than the chunk's");
    }
  }
  const v1::CpuMetrics& cpu = m.cpu();
  if (cpu.has_chunk_wall_seconds() && cpu.chunk_wall_seconds() > 0) {
    const double wall = cpu.chunk_wall_seconds();
    const auto part = [&](const char* figure, bool known, double seconds, const char* cause) {
      if (!known || !Exceeds(seconds, wall)) return;
      add("invalid_share", figure, seconds / wall, 1,
          absl::StrFormat("%s %.3f s of %.3f s chunk wall time (%.1f %%)", figure, seconds, wall,
                          100 * seconds / wall),
          cause);
    };
    part("chunk_cpu_seconds", cpu.has_chunk_cpu_seconds(), cpu.chunk_cpu_seconds(),
         "the chunks' CPU clock counted other threads than the chunk's own (a multithreaded "
         "chunk reports process CPU)");
    part("chunk_run_queue_wait_seconds", cpu.has_chunk_run_queue_wait_seconds(),
         cpu.chunk_run_queue_wait_seconds(),
         "the run-queue readings counted other threads than the chunk's own");
  }
  if (in.elapsed_seconds > 0 && m.has_chunks() && m.chunks().duration_seconds().count() > 0 &&
      Exceeds(m.chunks().duration_seconds().max(), in.elapsed_seconds)) {
    const double longest = m.chunks().duration_seconds().max();
    add("invalid_duration", "chunk_duration_max", longest, in.elapsed_seconds,
        absl::StrFormat("the longest chunk, %.3f s, is longer than the run, %.3f s", longest,
                        in.elapsed_seconds),
        "the chunk records come from a longer run than the measured window (e.g. --follow "
        "attached to a run already running, or records of an earlier run)");
  }
  return out;
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
