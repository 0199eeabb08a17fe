// A deterministic, generated sample dataset for the built-in dijet analysis.
//
// Events look like (very simplified) collider data in a NanoAOD-like layout: event-level columns
// (run, luminosityBlock, event, MET_pt, MET_phi) and jagged jet columns (Jet_pt, Jet_eta,
// Jet_phi, Jet_mass), jets sorted by falling pT, all above 15 GeV and within |eta| < 4.7.
//   * QCD-like datasets: a hard 2->2 scatter whose scale follows a steeply falling power law above
//     a threshold (two roughly back-to-back leading jets), plus soft extra jets.
//   * Resonance datasets: a narrow dijet resonance (Breit-Wigner around a mass) decaying to the
//     two leading jets, plus soft extra jets.
// Jets per event average about 4. Floats are rounded to 12 mantissa bits, as NanoAOD does, so the
// files compress like real ones.
//
// Generation is a pure function of the spec (own PRNG, no std:: distributions), so the same spec
// gives the same bytes on every machine and the cache directory is keyed by a hash of the spec.
#ifndef ROASTCOFFEA_SAMPLE_ANALYSIS_SAMPLE_DATASET_H_
#define ROASTCOFFEA_SAMPLE_ANALYSIS_SAMPLE_DATASET_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace roastcoffea {
namespace sample_analysis {

// Column names in every generated file.
inline constexpr char kRunColumn[] = "run";                          // int32
inline constexpr char kLuminosityBlockColumn[] = "luminosityBlock";  // int32
inline constexpr char kEventColumn[] = "event";                      // uint64
inline constexpr char kMetPtColumn[] = "MET_pt";                     // float32, GeV
inline constexpr char kMetPhiColumn[] = "MET_phi";                   // float32
inline constexpr char kJetPtColumn[] = "Jet_pt";                     // jagged float32, GeV
inline constexpr char kJetEtaColumn[] = "Jet_eta";                   // jagged float32
inline constexpr char kJetPhiColumn[] = "Jet_phi";                   // jagged float32
inline constexpr char kJetMassColumn[] = "Jet_mass";                 // jagged float32, GeV

// Bumped whenever the generator's output changes, so old caches are not reused.
inline constexpr int kGeneratorVersion = 1;

enum class ProcessKind {
  kQcd = 1,
  kResonance = 2,
};

struct DatasetSpec {
  // Used in file names: letters, digits, '_', '-', '.'; unique within a SampleDatasetSpec.
  std::string name;
  ProcessKind kind = ProcessKind::kQcd;
  // kQcd: lowest pT of the hard scatter, GeV (>= 15).
  double hard_scale_min_gev = 150;
  // kResonance: mass and width of the resonance, GeV.
  double resonance_mass_gev = 1500;
  double resonance_width_gev = 45;
};

// Two QCD-like backgrounds (hard scale above 150 and 400 GeV) and a 1.5 TeV dijet resonance.
std::vector<DatasetSpec> DefaultDatasets();

struct SampleDatasetSpec {
  int64_t events_per_file = 200000;
  int files_per_dataset = 4;
  std::vector<DatasetSpec> datasets = DefaultDatasets();
  uint64_t seed = 20240611;
  // Entries per compressed basket in each file.
  int64_t basket_entries = 10000;
};

// InvalidArgument naming the offending field when the spec cannot be generated.
absl::Status ValidateSpec(const SampleDatasetSpec& spec);

// 16 hex digits identifying the spec (and kGeneratorVersion): the cache subdirectory name.
std::string SpecHash(const SampleDatasetSpec& spec);

struct SampleFile {
  std::string path;
  int64_t entries = 0;
};

struct DatasetFiles {
  std::string name;
  std::vector<SampleFile> files;
};

struct SampleDataset {
  // <cache_dir>/<SpecHash(spec)>
  std::string directory;
  // In the order of spec.datasets.
  std::vector<DatasetFiles> datasets;
  // True when this call generated the files, false when it reused a cache.
  bool generated = false;
  // The files' size on disk in all.
  int64_t bytes = 0;

  int64_t total_entries() const;
};

// Generates the dataset into <cache_dir>/<SpecHash(spec)>/ unless a valid copy is already there.
// Generation writes into a temporary sibling directory that is renamed into place when complete,
// so an interrupted or concurrent run never leaves a half-written set that counts. Reuse checks
// that every file exists and opens (header/footer only) with the expected entry count and
// columns. Errors: InvalidArgument (bad spec), Internal (cannot create or write the directory;
// the message names it), DataLoss (a complete copy was damaged afterwards: the message names the
// file and says to delete the directory to regenerate it). Cost: generation is ~1-2 s per million
// events on one core; reuse is a few preads per file.
absl::StatusOr<SampleDataset> EnsureSampleDataset(const SampleDatasetSpec& spec,
                                                  absl::string_view cache_dir);

struct GenerationProgress {
  int files_done = 0;
  int files_total = 0;
  int64_t events_done = 0;
  int64_t events_total = 0;
  int64_t bytes_written = 0;
};

struct EnsureOptions {
  // Asked before each file is generated: true abandons the generation (the temporary
  // directory is removed; nothing is left in the cache) with Cancelled.
  std::function<bool()> cancelled;
  // Called before the first file and after each one, when the files are generated.
  std::function<void(const GenerationProgress&)> on_progress;
};

// As above, reporting progress and stopping when asked.
absl::StatusOr<SampleDataset> EnsureSampleDataset(const SampleDatasetSpec& spec,
                                                  absl::string_view cache_dir,
                                                  const EnsureOptions& options);

// Removes generations abandoned in `cache_dir`: "<hash>.tmp-<pid>-<suffix>" directories whose
// process is gone (killed by SIGKILL, or by SIGPIPE in `collect | head` before it could clean
// up) and that nobody touched for `min_age` (a cache shared over the network may hold another
// host's generation in progress, whose pid means nothing here). EnsureSampleDataset calls it
// with 10 minutes before it generates. Returns how many it removed.
int SweepAbandonedGenerations(absl::string_view cache_dir, absl::Duration min_age);

// $ROASTCOFFEA_CACHE_DIR, else $XDG_CACHE_HOME/roastcoffea, else $HOME/.cache/roastcoffea (unset
// or empty variables are skipped), else /tmp/roastcoffea-cache.
std::string DefaultCacheDirectory();

// In-memory events of one generated file, column by column (jets flattened, jet_counts per event).
struct GeneratedEvents {
  std::vector<int32_t> run;
  std::vector<int32_t> luminosity_block;
  std::vector<uint64_t> event;
  std::vector<float> met_pt;
  std::vector<float> met_phi;
  std::vector<int64_t> jet_counts;
  std::vector<float> jet_pt;
  std::vector<float> jet_eta;
  std::vector<float> jet_phi;
  std::vector<float> jet_mass;

  int64_t size() const { return static_cast<int64_t>(event.size()); }
};

// Generates `count` events of `dataset` deterministically from `seed`; event numbers start at
// first_event + 1. The same arguments always give the same events.
GeneratedEvents GenerateEvents(const DatasetSpec& dataset, uint64_t seed, int64_t first_event,
                               int64_t count);

// Writes events to `path` (atomically) in the columnar format, with the column names above.
absl::Status WriteEventsFile(const GeneratedEvents& events, const std::string& path,
                             int64_t basket_entries);

}  // namespace sample_analysis
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_SAMPLE_ANALYSIS_SAMPLE_DATASET_H_
