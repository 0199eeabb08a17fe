#include "sample_analysis/sample_dataset.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <system_error>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "sample_analysis/columnar_file.h"

namespace roastcoffea {
namespace sample_analysis {
namespace {

namespace fs = std::filesystem;

constexpr double kPi = 3.14159265358979323846;
constexpr double kMaxAbsEta = 4.7;
constexpr double kMinJetPt = 15.0;

// SplitMix64: tiny, fast, and fully specified, so outputs never depend on the standard library.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  double Uniform(double low, double high) { return low + (high - low) * Uniform(); }
  double Normal(double mean, double sigma) {
    // Box-Muller; 1 - Uniform() is in (0, 1], so the log is finite.
    const double r = std::sqrt(-2.0 * std::log(1.0 - Uniform()));
    return mean + sigma * r * std::cos(2.0 * kPi * Uniform());
  }
  double Exponential(double mean) { return -mean * std::log(1.0 - Uniform()); }
  // Knuth's method: fine for the small means used here.
  int Poisson(double mean) {
    const double limit = std::exp(-mean);
    int k = 0;
    double p = Uniform();
    while (p > limit) {
      ++k;
      p *= Uniform();
    }
    return k;
  }
  // Density proportional to x^-index above x_min (index > 1): a falling jet spectrum.
  double PowerLaw(double x_min, double index) {
    return x_min * std::pow(1.0 - Uniform(), -1.0 / (index - 1.0));
  }

 private:
  uint64_t state_;
};

uint64_t Mix(uint64_t a, uint64_t b) {
  Random r(a ^ (b * 0xd6e8feb86659fd93ULL));
  return r.Next();
}

uint64_t Fnv1a(absl::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : text) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

// Keeps 12 mantissa bits (round to nearest), like NanoAOD's reduced-precision floats.
float Truncate(double value) {
  float f = static_cast<float>(value);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  constexpr int kDropped = 23 - 12;
  bits += 1u << (kDropped - 1);
  bits &= ~((1u << kDropped) - 1);
  std::memcpy(&f, &bits, sizeof(bits));
  return f;
}

double WrapPhi(double phi) {
  while (phi >= kPi) phi -= 2 * kPi;
  while (phi < -kPi) phi += 2 * kPi;
  return phi;
}

double CentralEta(Random& rng, double sigma) {
  for (;;) {
    const double eta = rng.Normal(0.0, sigma);
    if (std::abs(eta) < kMaxAbsEta) return eta;
  }
}

struct Jet {
  double pt, eta, phi, mass;
};

Jet MakeJet(Random& rng, double pt, double eta, double phi) {
  return Jet{pt, eta, WrapPhi(phi), pt * rng.Uniform(0.03, 0.15)};
}

// Initial/final-state radiation: soft jets, on average two per event.
void AddSoftJets(Random& rng, double pt_cap, std::vector<Jet>* jets) {
  const int n = rng.Poisson(2.0);
  for (int i = 0; i < n; ++i) {
    double pt = rng.PowerLaw(kMinJetPt, 4.5);
    while (pt > pt_cap) pt = rng.PowerLaw(kMinJetPt, 4.5);
    jets->push_back(MakeJet(rng, pt, CentralEta(rng, 2.2), rng.Uniform(-kPi, kPi)));
  }
}

void QcdJets(const DatasetSpec& spec, Random& rng, std::vector<Jet>* jets) {
  double scale = rng.PowerLaw(spec.hard_scale_min_gev, 5.0);
  while (scale > 6000) scale = rng.PowerLaw(spec.hard_scale_min_gev, 5.0);
  const double phi = rng.Uniform(-kPi, kPi);
  const double pt1 = scale * std::max(0.3, rng.Normal(1.0, 0.08));
  const double pt2 = scale * std::max(0.3, rng.Normal(0.9, 0.1));
  jets->push_back(MakeJet(rng, pt1, CentralEta(rng, 1.6), phi));
  jets->push_back(MakeJet(rng, pt2, CentralEta(rng, 1.6), phi + kPi + rng.Normal(0.0, 0.15)));
  AddSoftJets(rng, 0.8 * scale, jets);
}

void ResonanceJets(const DatasetSpec& spec, Random& rng, std::vector<Jet>* jets) {
  const double m0 = spec.resonance_mass_gev;
  const double half_width = spec.resonance_width_gev / 2;
  double m = 0;
  do {  // Breit-Wigner (Cauchy), truncated to +-50%.
    m = m0 + half_width * std::tan(kPi * (rng.Uniform() - 0.5));
  } while (m < 0.5 * m0 || m > 1.5 * m0);
  // Resonance in the lab: small transverse momentum, central-ish rapidity.
  const double pt_r = rng.Exponential(30.0);
  const double phi_r = rng.Uniform(-kPi, kPi);
  const double y_r = rng.Normal(0.0, 0.8);
  const double mt = std::sqrt(m * m + pt_r * pt_r);
  const double e_r = mt * std::cosh(y_r);
  const double b[3] = {pt_r * std::cos(phi_r) / e_r, pt_r * std::sin(phi_r) / e_r,
                       mt * std::sinh(y_r) / e_r};
  const double gamma = e_r / m;
  // Two back-to-back (massless) partons in the rest frame, isotropic.
  const double cos_theta = rng.Uniform(-1.0, 1.0);
  const double sin_theta = std::sqrt(1.0 - cos_theta * cos_theta);
  const double phi_star = rng.Uniform(-kPi, kPi);
  const double p_star = m / 2;
  for (double sign : {1.0, -1.0}) {
    const double p[3] = {sign * p_star * sin_theta * std::cos(phi_star),
                         sign * p_star * sin_theta * std::sin(phi_star), sign * p_star * cos_theta};
    const double bp = b[0] * p[0] + b[1] * p[1] + b[2] * p[2];
    // Lorentz boost of a massless (p_star, p) by b; (gamma-1)/b^2 == gamma^2/(gamma+1).
    const double factor = gamma * gamma / (gamma + 1.0) * bp + gamma * p_star;
    double lab[3];
    for (int k = 0; k < 3; ++k) lab[k] = p[k] + factor * b[k];
    const double pt = std::hypot(lab[0], lab[1]);
    if (pt < 1e-6) continue;
    const double eta = std::asinh(lab[2] / pt);
    if (std::abs(eta) >= kMaxAbsEta) continue;  // outside the detector
    const double smeared = pt * std::max(0.3, rng.Normal(1.0, 0.08));
    jets->push_back(MakeJet(rng, smeared, eta, std::atan2(lab[1], lab[0])));
  }
  AddSoftJets(rng, 300.0, jets);
}

bool IsFileNameSafe(absl::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

std::string FilePath(const std::string& directory, const DatasetSpec& dataset, int index) {
  return absl::StrCat(directory, "/", dataset.name, "_", index, ".rcol");
}

uint64_t FileSeed(const SampleDatasetSpec& spec, const DatasetSpec& dataset, int index) {
  return Mix(Mix(spec.seed, Fnv1a(dataset.name)), static_cast<uint64_t>(index));
}

SampleDataset Describe(const SampleDatasetSpec& spec, const std::string& directory) {
  SampleDataset result;
  result.directory = directory;
  for (const DatasetSpec& dataset : spec.datasets) {
    DatasetFiles files{dataset.name, {}};
    for (int i = 0; i < spec.files_per_dataset; ++i) {
      files.files.push_back(SampleFile{FilePath(directory, dataset, i), spec.events_per_file});
    }
    result.datasets.push_back(std::move(files));
  }
  return result;
}

// Quick validation of an existing copy: every file opens with the right entries and columns.
int64_t FilesBytes(const SampleDataset& dataset) {
  int64_t bytes = 0;
  for (const DatasetFiles& files : dataset.datasets) {
    for (const SampleFile& file : files.files) {
      std::error_code error;
      const uintmax_t size = fs::file_size(file.path, error);
      if (!error) bytes += static_cast<int64_t>(size);
    }
  }
  return bytes;
}

absl::Status CheckExisting(const SampleDataset& dataset) {
  for (const DatasetFiles& files : dataset.datasets) {
    for (const SampleFile& file : files.files) {
      absl::StatusOr<std::unique_ptr<Reader>> reader = Reader::Open(file.path);
      if (!reader.ok()) return reader.status();
      if ((*reader)->entries() != file.entries) {
        return absl::DataLossError(absl::StrCat(file.path, " has ", (*reader)->entries(),
                                                " entries, expected ", file.entries));
      }
      for (const char* column :
           {kRunColumn, kLuminosityBlockColumn, kEventColumn, kMetPtColumn, kMetPhiColumn,
            kJetPtColumn, kJetEtaColumn, kJetPhiColumn, kJetMassColumn}) {
        if ((*reader)->FindColumn(column) == nullptr) {
          return absl::DataLossError(absl::StrCat(file.path, " lacks column ", column));
        }
      }
    }
  }
  return absl::OkStatus();
}

std::string UniqueSuffix() {
  static std::atomic<uint64_t> counter{0};
  Random rng(
      Mix(static_cast<uint64_t>(::getpid()),
          static_cast<uint64_t>(reinterpret_cast<uintptr_t>(&counter)) ^ counter.fetch_add(1) ^
              static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count())));
  return absl::StrFormat("%d-%016x", ::getpid(), rng.Next());
}

void RemoveQuietly(const std::string& path) {
  std::error_code ignored;
  fs::remove_all(path, ignored);
}

}  // namespace

std::vector<DatasetSpec> DefaultDatasets() {
  DatasetSpec low;
  low.name = "QCD_PtHat-150";
  low.kind = ProcessKind::kQcd;
  low.hard_scale_min_gev = 150;
  DatasetSpec high;
  high.name = "QCD_PtHat-400";
  high.kind = ProcessKind::kQcd;
  high.hard_scale_min_gev = 400;
  DatasetSpec signal;
  signal.name = "ZprimeToQQ_M-1500";
  signal.kind = ProcessKind::kResonance;
  signal.resonance_mass_gev = 1500;
  signal.resonance_width_gev = 45;
  return {low, high, signal};
}

int64_t SampleDataset::total_entries() const {
  int64_t total = 0;
  for (const DatasetFiles& d : datasets) {
    for (const SampleFile& f : d.files) total += f.entries;
  }
  return total;
}

absl::Status ValidateSpec(const SampleDatasetSpec& spec) {
  if (spec.events_per_file <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("sample dataset: events_per_file must be > 0, got ", spec.events_per_file));
  }
  if (spec.files_per_dataset <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sample dataset: files_per_dataset must be > 0, got ", spec.files_per_dataset));
  }
  if (spec.basket_entries <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("sample dataset: basket_entries must be > 0, got ", spec.basket_entries));
  }
  if (spec.datasets.empty()) {
    return absl::InvalidArgumentError("sample dataset: no datasets");
  }
  for (size_t i = 0; i < spec.datasets.size(); ++i) {
    const DatasetSpec& d = spec.datasets[i];
    if (!IsFileNameSafe(d.name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("sample dataset: dataset name '", d.name,
                       "' must be non-empty and use only letters, digits, '_', '-', '.'"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (spec.datasets[j].name == d.name) {
        return absl::InvalidArgumentError(
            absl::StrCat("sample dataset: duplicate dataset name '", d.name, "'"));
      }
    }
    switch (d.kind) {
      case ProcessKind::kQcd:
        if (!(d.hard_scale_min_gev >= kMinJetPt && d.hard_scale_min_gev <= 3000)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "sample dataset '", d.name, "': hard_scale_min_gev must be in [15, 3000], got ",
              d.hard_scale_min_gev));
        }
        break;
      case ProcessKind::kResonance:
        if (!(d.resonance_mass_gev >= 50 && d.resonance_mass_gev <= 10000) ||
            !(d.resonance_width_gev >= 0 && d.resonance_width_gev <= d.resonance_mass_gev)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "sample dataset '", d.name,
              "': resonance mass must be in [50, 10000] GeV and width in [0, mass], got mass ",
              d.resonance_mass_gev, " width ", d.resonance_width_gev));
        }
        break;
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("sample dataset '", d.name, "': unknown kind ", static_cast<int>(d.kind)));
    }
  }
  return absl::OkStatus();
}

std::string SpecHash(const SampleDatasetSpec& spec) {
  std::string canonical =
      absl::StrFormat("roastcoffea-sample|gen=%d|format=%d|events=%d|files=%d|basket=%d|seed=%d",
                      kGeneratorVersion, kColumnarFormatVersion, spec.events_per_file,
                      spec.files_per_dataset, spec.basket_entries, spec.seed);
  for (const DatasetSpec& d : spec.datasets) {
    absl::StrAppend(&canonical, absl::StrFormat("|%s:%d:%.17g:%.17g:%.17g", d.name,
                                                static_cast<int>(d.kind), d.hard_scale_min_gev,
                                                d.resonance_mass_gev, d.resonance_width_gev));
  }
  return absl::StrFormat("%016x", Fnv1a(canonical));
}

GeneratedEvents GenerateEvents(const DatasetSpec& dataset, uint64_t seed, int64_t first_event,
                               int64_t count) {
  GeneratedEvents events;
  Random rng(seed);
  const int64_t n = std::max<int64_t>(count, 0);
  events.run.reserve(n);
  events.luminosity_block.reserve(n);
  events.event.reserve(n);
  events.met_pt.reserve(n);
  events.met_phi.reserve(n);
  events.jet_counts.reserve(n);
  std::vector<Jet> jets;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t number = first_event + i + 1;
    events.run.push_back(1);
    events.luminosity_block.push_back(static_cast<int32_t>(1 + (number - 1) / 1000));
    events.event.push_back(static_cast<uint64_t>(number));
    events.met_pt.push_back(Truncate(rng.Exponential(25.0)));
    events.met_phi.push_back(Truncate(rng.Uniform(-kPi, kPi)));
    jets.clear();
    if (dataset.kind == ProcessKind::kResonance) {
      ResonanceJets(dataset, rng, &jets);
    } else {
      QcdJets(dataset, rng, &jets);
    }
    std::sort(jets.begin(), jets.end(), [](const Jet& a, const Jet& b) { return a.pt > b.pt; });
    int64_t kept = 0;
    for (const Jet& jet : jets) {
      if (jet.pt < kMinJetPt) continue;
      events.jet_pt.push_back(Truncate(jet.pt));
      events.jet_eta.push_back(Truncate(jet.eta));
      events.jet_phi.push_back(Truncate(jet.phi));
      events.jet_mass.push_back(Truncate(jet.mass));
      ++kept;
    }
    events.jet_counts.push_back(kept);
  }
  return events;
}

absl::Status WriteEventsFile(const GeneratedEvents& events, const std::string& path,
                             int64_t basket_entries) {
  Writer writer(events.size(), WriterOptions{basket_entries, /*compression_level=*/3});
  for (absl::Status s : {
           writer.AddColumn<int32_t>(kRunColumn, events.run),
           writer.AddColumn<int32_t>(kLuminosityBlockColumn, events.luminosity_block),
           writer.AddColumn<uint64_t>(kEventColumn, events.event),
           writer.AddColumn<float>(kMetPtColumn, events.met_pt),
           writer.AddColumn<float>(kMetPhiColumn, events.met_phi),
           writer.AddJaggedColumn<float>(kJetPtColumn, events.jet_counts, events.jet_pt),
           writer.AddJaggedColumn<float>(kJetEtaColumn, events.jet_counts, events.jet_eta),
           writer.AddJaggedColumn<float>(kJetPhiColumn, events.jet_counts, events.jet_phi),
           writer.AddJaggedColumn<float>(kJetMassColumn, events.jet_counts, events.jet_mass),
       }) {
    if (!s.ok()) return s;
  }
  return writer.Write(path);
}

absl::StatusOr<SampleDataset> EnsureSampleDataset(const SampleDatasetSpec& spec,
                                                  absl::string_view cache_dir) {
  return EnsureSampleDataset(spec, cache_dir, EnsureOptions());
}

absl::StatusOr<SampleDataset> EnsureSampleDataset(const SampleDatasetSpec& spec,
                                                  absl::string_view cache_dir,
                                                  const EnsureOptions& options) {
  if (absl::Status s = ValidateSpec(spec); !s.ok()) return s;
  if (cache_dir.empty()) return absl::InvalidArgumentError("sample dataset: empty cache directory");
  const std::string root(cache_dir);
  const std::string final_dir = absl::StrCat(root, "/", SpecHash(spec));
  SampleDataset dataset = Describe(spec, final_dir);

  std::error_code error;
  if (fs::is_directory(final_dir, error)) {
    // The set is renamed into place only when complete, so a damaged copy means the files were
    // changed or the storage failed afterwards: say so rather than silently hide it.
    const absl::Status existing = CheckExisting(dataset);
    if (existing.ok()) {
      dataset.bytes = FilesBytes(dataset);
      return dataset;
    }
    return absl::DataLossError(
        absl::StrCat("sample dataset in ", final_dir, " is damaged: ", existing.message(),
                     "; to regenerate it, delete it (rm -r ", final_dir, ") and run again"));
  }

  fs::create_directories(root, error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("creating cache directory ", root, ": ", error.message()));
  }
  SweepAbandonedGenerations(root, absl::Minutes(10));
  const std::string tmp_dir = absl::StrCat(final_dir, ".tmp-", UniqueSuffix());
  fs::create_directory(tmp_dir, error);
  if (error) {
    return absl::InternalError(absl::StrCat("creating ", tmp_dir, ": ", error.message()));
  }
  GenerationProgress progress;
  progress.files_total = static_cast<int>(spec.datasets.size()) * spec.files_per_dataset;
  progress.events_total = int64_t{progress.files_total} * spec.events_per_file;
  if (options.on_progress) options.on_progress(progress);
  for (const DatasetSpec& d : spec.datasets) {
    for (int i = 0; i < spec.files_per_dataset; ++i) {
      if (options.cancelled && options.cancelled()) {
        RemoveQuietly(tmp_dir);
        return absl::CancelledError(absl::StrCat("generation of the sample dataset in ", final_dir,
                                                 " stopped after ", progress.files_done, " of ",
                                                 progress.files_total, " files; nothing was kept"));
      }
      const GeneratedEvents events = GenerateEvents(
          d, FileSeed(spec, d, i), int64_t{i} * spec.events_per_file, spec.events_per_file);
      const std::string path = FilePath(tmp_dir, d, i);
      if (absl::Status s = WriteEventsFile(events, path, spec.basket_entries); !s.ok()) {
        RemoveQuietly(tmp_dir);
        return s;
      }
      ++progress.files_done;
      progress.events_done += spec.events_per_file;
      std::error_code size_error;
      const uintmax_t size = fs::file_size(path, size_error);
      if (!size_error) progress.bytes_written += static_cast<int64_t>(size);
      if (options.on_progress) options.on_progress(progress);
    }
  }
  if (::rename(tmp_dir.c_str(), final_dir.c_str()) != 0) {
    const int err = errno;
    RemoveQuietly(tmp_dir);
    // Another process may have completed the same set first: use it if it is valid.
    if (CheckExisting(dataset).ok()) {
      dataset.bytes = FilesBytes(dataset);
      return dataset;
    }
    return absl::InternalError(
        absl::StrCat("renaming ", tmp_dir, " to ", final_dir, ": ", std::strerror(err)));
  }
  dataset.generated = true;
  dataset.bytes = progress.bytes_written;
  return dataset;
}

std::string DefaultCacheDirectory() {
  const auto get = [](const char* name) -> std::string {
    const char* value = std::getenv(name);
    return value != nullptr ? value : "";
  };
  if (std::string dir = get("ROASTCOFFEA_CACHE_DIR"); !dir.empty()) return dir;
  if (std::string dir = get("XDG_CACHE_HOME"); !dir.empty()) return dir + "/roastcoffea";
  if (std::string dir = get("HOME"); !dir.empty()) return dir + "/.cache/roastcoffea";
  return "/tmp/roastcoffea-cache";
}

int SweepAbandonedGenerations(absl::string_view cache_dir, absl::Duration min_age) {
  int removed = 0;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(std::string(cache_dir), error)) {
    const std::string name = entry.path().filename().string();
    const size_t tmp = name.find(".tmp-");
    if (tmp == std::string::npos) continue;
    const std::string rest = name.substr(tmp + 5);
    int64_t pid = 0;
    if (!absl::SimpleAtoi(rest.substr(0, rest.find('-')), &pid) || pid <= 0) continue;
    struct stat info;
    if (lstat(entry.path().c_str(), &info) != 0 || !S_ISDIR(info.st_mode) ||
        info.st_uid != getuid()) {
      continue;
    }
    if (absl::Now() - absl::FromTimeT(info.st_mtime) < min_age) continue;
    if (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    RemoveQuietly(entry.path().string());
    ++removed;
  }
  return removed;
}

}  // namespace sample_analysis
}  // namespace roastcoffea
