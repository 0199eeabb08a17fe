#include "tools/dataset_setup.h"

#include <unistd.h>

#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "collector/interruption.h"

namespace roastcoffea {
namespace {

using sample_analysis::GenerationProgress;

std::string FormatEvents(int64_t events) {
  if (events >= 1000000) return absl::StrFormat("%.1f M", events / 1e6);
  if (events >= 1000) return absl::StrFormat("%.1f k", events / 1e3);
  return absl::StrCat(events);
}

// Draws the generation's progress: in place on a terminal; otherwise at most one line per
// tenth of the files.
class GenerationDisplay {
 public:
  GenerationDisplay(const DatasetSetupOptions& options)
      : options_(options), terminal_(isatty(fileno(options.stream)) == 1) {}

  void Update(const GenerationProgress& progress) {
    const std::string line = absl::StrCat(
        options_.program, ": generating: ", progress.files_done, "/", progress.files_total,
        " files, ", FormatEvents(progress.events_done), " of ", FormatEvents(progress.events_total),
        " events, ", FormatBytes(progress.bytes_written));
    if (terminal_) {
      // \33[K clears what a longer previous line left.
      std::fprintf(options_.stream, "\r%s\33[K", line.c_str());
      open_line_ = true;
    } else {
      const int tenth =
          progress.files_total > 0 ? progress.files_done * 10 / progress.files_total : 10;
      if (progress.files_done > 0 && tenth == last_tenth_) return;
      last_tenth_ = tenth;
      std::fprintf(options_.stream, "%s\n", line.c_str());
    }
    std::fflush(options_.stream);
  }
  // Ends a line drawn in place.
  void EndLine() {
    if (open_line_) std::fputc('\n', options_.stream);
    open_line_ = false;
    std::fflush(options_.stream);
  }

 private:
  const DatasetSetupOptions& options_;
  const bool terminal_;
  bool open_line_ = false;
  int last_tenth_ = -1;
};

}  // namespace

std::string FormatBytes(int64_t bytes) {
  if (bytes >= 1000000000) return absl::StrFormat("%.1f GB", bytes / 1e9);
  if (bytes >= 1000000) return absl::StrFormat("%.1f MB", bytes / 1e6);
  if (bytes >= 1000) return absl::StrFormat("%.1f kB", bytes / 1e3);
  return absl::StrCat(bytes, " B");
}

absl::StatusOr<sample_analysis::SampleDataset> PrepareSampleDataset(
    const sample_analysis::SampleDatasetSpec& spec, const std::string& cache_dir,
    const DatasetSetupOptions& options) {
  std::unique_ptr<Interruption> interruption;
  if (options.handle_signals) {
    InterruptionOptions policy;
    policy.program = options.program;
    absl::StatusOr<std::unique_ptr<Interruption>> installed =
        Interruption::Install(std::move(policy));
    if (!installed.ok()) return installed.status();
    interruption = *std::move(installed);
  }
  GenerationDisplay display(options);
  const absl::Time start = absl::Now();
  bool announced = false;
  sample_analysis::EnsureOptions ensure;
  if (interruption != nullptr) ensure.cancelled = [] { return Interruption::triggered(); };
  ensure.on_progress = [&](const GenerationProgress& progress) {
    if (!announced) {
      announced = true;
      std::fprintf(options.stream,
                   "%s: generating the sample dataset (first use: %zu datasets x %d files x "
                   "%lld events) in %s/%s; later runs reuse it\n",
                   options.program.c_str(), spec.datasets.size(), spec.files_per_dataset,
                   static_cast<long long>(spec.events_per_file), cache_dir.c_str(),
                   sample_analysis::SpecHash(spec).c_str());
    }
    display.Update(progress);
  };
  absl::StatusOr<sample_analysis::SampleDataset> dataset =
      sample_analysis::EnsureSampleDataset(spec, cache_dir, ensure);
  display.EndLine();
  if (interruption != nullptr && Interruption::triggered()) {
    const std::string signal = SignalName(Interruption::signal_number());
    if (absl::IsCancelled(dataset.status())) {
      return absl::CancelledError(absl::StrCat("interrupted (", signal,
                                               " while generating the sample dataset): nothing was "
                                               "measured, so nothing is saved; ",
                                               dataset.status().message()));
    }
    // The signal came after the last file: the dataset is complete, but the run is not wanted.
    if (dataset.ok()) {
      return absl::CancelledError(absl::StrCat("interrupted (", signal,
                                               " while preparing the sample dataset): nothing was "
                                               "measured, so nothing is saved; the dataset in ",
                                               dataset->directory,
                                               " is complete and will be reused"));
    }
  }
  if (!dataset.ok()) return dataset.status();
  int files = 0;
  for (const sample_analysis::DatasetFiles& d : dataset->datasets) {
    files += static_cast<int>(d.files.size());
  }
  if (dataset->generated) {
    std::fprintf(options.stream,
                 "%s: sample dataset generated in %s: %d files, %s events, %s "
                 "in %s\n",
                 options.program.c_str(), dataset->directory.c_str(), files,
                 FormatEvents(dataset->total_entries()).c_str(),
                 FormatBytes(dataset->bytes).c_str(),
                 // "0.4 s", "2.4 s": the unit always, as every other duration collect prints.
                 absl::StrFormat("%.1f s", absl::ToDoubleSeconds(absl::Now() - start)).c_str());
  } else {
    std::fprintf(options.stream,
                 "%s: reusing the sample dataset in %s (%d files, %s events, %s; generated "
                 "earlier)\n",
                 options.program.c_str(), dataset->directory.c_str(), files,
                 FormatEvents(dataset->total_entries()).c_str(),
                 FormatBytes(dataset->bytes).c_str());
  }
  std::fflush(options.stream);
  return dataset;
}

}  // namespace roastcoffea
