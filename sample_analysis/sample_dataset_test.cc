#include "sample_analysis/sample_dataset.h"

#include <stdlib.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sample_analysis/columnar_file.h"

namespace roastcoffea {
namespace sample_analysis {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

DatasetSpec Qcd(double scale) {
  DatasetSpec spec;
  spec.name = absl::StrCat("qcd", scale);
  spec.kind = ProcessKind::kQcd;
  spec.hard_scale_min_gev = scale;
  return spec;
}

DatasetSpec Resonance(double mass) {
  DatasetSpec spec;
  spec.name = "signal";
  spec.kind = ProcessKind::kResonance;
  spec.resonance_mass_gev = mass;
  spec.resonance_width_gev = 0.03 * mass;
  return spec;
}

SampleDatasetSpec SmallSpec() {
  SampleDatasetSpec spec;
  spec.events_per_file = 1500;
  spec.files_per_dataset = 2;
  spec.basket_entries = 400;
  spec.datasets = {Qcd(150), Resonance(1500)};
  return spec;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Invariant mass of the two leading jets of event i, by hand (not the processor's code).
double LeadingPairMass(const GeneratedEvents& e, int64_t first_jet) {
  double sum[4] = {0, 0, 0, 0};  // E, px, py, pz
  for (int64_t j = first_jet; j < first_jet + 2; ++j) {
    const double px = e.jet_pt[j] * std::cos(e.jet_phi[j]);
    const double py = e.jet_pt[j] * std::sin(e.jet_phi[j]);
    const double pz = e.jet_pt[j] * std::sinh(e.jet_eta[j]);
    const double m = e.jet_mass[j];
    sum[0] += std::sqrt(px * px + py * py + pz * pz + m * m);
    sum[1] += px;
    sum[2] += py;
    sum[3] += pz;
  }
  return std::sqrt(
      std::max(0.0, sum[0] * sum[0] - sum[1] * sum[1] - sum[2] * sum[2] - sum[3] * sum[3]));
}

TEST(SampleDatasetTest, GenerationIsDeterministic) {
  const GeneratedEvents a = GenerateEvents(Qcd(150), 7, 0, 500);
  const GeneratedEvents b = GenerateEvents(Qcd(150), 7, 0, 500);
  EXPECT_EQ(a.jet_pt, b.jet_pt);
  EXPECT_EQ(a.jet_eta, b.jet_eta);
  EXPECT_EQ(a.jet_counts, b.jet_counts);
  EXPECT_EQ(a.met_pt, b.met_pt);
  const GeneratedEvents c = GenerateEvents(Qcd(150), 8, 0, 500);
  EXPECT_NE(a.jet_pt, c.jet_pt);
}

TEST(SampleDatasetTest, EventColumnsAreConsistent) {
  const GeneratedEvents e = GenerateEvents(Qcd(150), 1, 1000, 2500);
  ASSERT_EQ(e.size(), 2500);
  EXPECT_EQ(e.event.front(), 1001u);
  EXPECT_EQ(e.event.back(), 3500u);
  EXPECT_EQ(e.luminosity_block.front(), 2);
  EXPECT_EQ(e.run.size(), 2500u);
  int64_t jets = 0;
  for (int64_t n : e.jet_counts) jets += n;
  EXPECT_EQ(static_cast<int64_t>(e.jet_pt.size()), jets);
  EXPECT_EQ(e.jet_eta.size(), e.jet_pt.size());
  EXPECT_EQ(e.jet_phi.size(), e.jet_pt.size());
  EXPECT_EQ(e.jet_mass.size(), e.jet_pt.size());
}

TEST(SampleDatasetTest, QcdDistributionsArePlausible) {
  constexpr int64_t kEvents = 20000;
  const GeneratedEvents e = GenerateEvents(Qcd(150), 3, 0, kEvents);
  const double jets_per_event = static_cast<double>(e.jet_pt.size()) / kEvents;
  EXPECT_GT(jets_per_event, 3.0);
  EXPECT_LT(jets_per_event, 5.0);
  std::vector<double> leading_pt;
  double met_sum = 0;
  int64_t jet = 0;
  for (int64_t i = 0; i < kEvents; ++i) {
    met_sum += e.met_pt[i];
    EXPECT_GE(e.met_pt[i], 0);
    EXPECT_LE(std::abs(e.met_phi[i]), 3.1425);
    for (int64_t k = 0; k < e.jet_counts[i]; ++k, ++jet) {
      EXPECT_GE(e.jet_pt[jet], 15.0f);
      EXPECT_LT(std::abs(e.jet_eta[jet]), 4.71f);
      EXPECT_LE(std::abs(e.jet_phi[jet]), 3.1425f);
      EXPECT_GT(e.jet_mass[jet], 0.0f);
      EXPECT_LT(e.jet_mass[jet], 0.2f * e.jet_pt[jet]);
      if (k > 0) {
        EXPECT_LE(e.jet_pt[jet], e.jet_pt[jet - 1]) << "jets sorted by falling pT";
      }
    }
    if (e.jet_counts[i] > 0) leading_pt.push_back(e.jet_pt[jet - e.jet_counts[i]]);
  }
  // phi and eta are rounded to 12 mantissa bits, so they may exceed pi or 4.7 by ~1e-3.
  EXPECT_NEAR(met_sum / kEvents, 25.0, 1.5);
  // Steeply falling above the 150 GeV threshold.
  const double median = Median(leading_pt);
  EXPECT_GT(median, 150);
  EXPECT_LT(median, 250);
  const auto above =
      std::count_if(leading_pt.begin(), leading_pt.end(), [](double pt) { return pt > 600; });
  EXPECT_LT(above, kEvents / 50);
  EXPECT_GT(above, 0);
  // Central-ish: most jets within |eta| < 2.5.
  const auto central = std::count_if(e.jet_eta.begin(), e.jet_eta.end(),
                                     [](float eta) { return std::abs(eta) < 2.5; });
  EXPECT_GT(central, static_cast<int64_t>(e.jet_eta.size()) * 6 / 10);
}

TEST(SampleDatasetTest, SignalPeaksNearTheResonanceMass) {
  constexpr int64_t kEvents = 5000;
  const GeneratedEvents e = GenerateEvents(Resonance(1500), 11, 0, kEvents);
  std::vector<double> masses;
  int64_t jet = 0;
  for (int64_t i = 0; i < kEvents; ++i) {
    if (e.jet_counts[i] >= 2) masses.push_back(LeadingPairMass(e, jet));
    jet += e.jet_counts[i];
  }
  ASSERT_GT(masses.size(), static_cast<size_t>(kEvents * 8 / 10));
  EXPECT_NEAR(Median(masses), 1500, 75);
  const auto in_window =
      std::count_if(masses.begin(), masses.end(), [](double m) { return m > 1300 && m < 1700; });
  EXPECT_GT(in_window, static_cast<int64_t>(masses.size()) * 6 / 10);

  // QCD's leading pair has no such peak: mostly well below.
  const GeneratedEvents qcd = GenerateEvents(Qcd(150), 11, 0, kEvents);
  std::vector<double> qcd_masses;
  jet = 0;
  for (int64_t i = 0; i < kEvents; ++i) {
    if (qcd.jet_counts[i] >= 2) qcd_masses.push_back(LeadingPairMass(qcd, jet));
    jet += qcd.jet_counts[i];
  }
  EXPECT_LT(Median(qcd_masses), 900);
}

TEST(SampleDatasetTest, ValidateSpecNamesTheBadField) {
  SampleDatasetSpec spec = SmallSpec();
  EXPECT_TRUE(ValidateSpec(spec).ok());
  spec.events_per_file = 0;
  EXPECT_THAT(ValidateSpec(spec).message(), HasSubstr("events_per_file"));
  spec = SmallSpec();
  spec.files_per_dataset = -1;
  EXPECT_THAT(ValidateSpec(spec).message(), HasSubstr("files_per_dataset"));
  spec = SmallSpec();
  spec.basket_entries = 0;
  EXPECT_THAT(ValidateSpec(spec).message(), HasSubstr("basket_entries"));
  spec = SmallSpec();
  spec.datasets.clear();
  EXPECT_EQ(ValidateSpec(spec).code(), absl::StatusCode::kInvalidArgument);
  spec = SmallSpec();
  spec.datasets[0].name = "../escape";
  EXPECT_THAT(ValidateSpec(spec).message(), HasSubstr("../escape"));
  spec = SmallSpec();
  spec.datasets[1].name = spec.datasets[0].name;
  EXPECT_THAT(ValidateSpec(spec).message(), HasSubstr("duplicate"));
  spec = SmallSpec();
  spec.datasets[0].hard_scale_min_gev = 5;
  EXPECT_THAT(ValidateSpec(spec).message(), HasSubstr("hard_scale_min_gev"));
  spec = SmallSpec();
  spec.datasets[1].resonance_mass_gev = -1;
  EXPECT_THAT(ValidateSpec(spec).message(), HasSubstr("signal"));
  spec = SmallSpec();
  spec.datasets[0].kind = static_cast<ProcessKind>(99);
  EXPECT_THAT(ValidateSpec(spec).message(), HasSubstr("unknown kind"));

  spec = SmallSpec();
  spec.events_per_file = -5;
  absl::StatusOr<SampleDataset> dataset = EnsureSampleDataset(spec, TempDir() + "/invalid");
  EXPECT_EQ(dataset.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(TempDir() + "/invalid"));
}

TEST(SampleDatasetTest, GenerationReportsProgressAndSize) {
  const SampleDatasetSpec spec = SmallSpec();
  std::vector<GenerationProgress> seen;
  EnsureOptions options;
  options.on_progress = [&](const GenerationProgress& p) { seen.push_back(p); };
  absl::StatusOr<SampleDataset> dataset =
      EnsureSampleDataset(spec, TempDir() + "/progress", options);
  ASSERT_TRUE(dataset.ok()) << dataset.status();
  EXPECT_TRUE(dataset->generated);
  ASSERT_EQ(seen.size(), 5u);  // before the first file, then after each of the 4
  EXPECT_EQ(seen.front().files_done, 0);
  EXPECT_EQ(seen.back().files_done, 4);
  EXPECT_EQ(seen.back().files_total, 4);
  EXPECT_EQ(seen.back().events_done, 6000);
  EXPECT_EQ(seen.back().events_total, 6000);
  int64_t on_disk = 0;
  for (const DatasetFiles& files : dataset->datasets) {
    for (const SampleFile& file : files.files) on_disk += fs::file_size(file.path);
  }
  EXPECT_EQ(seen.back().bytes_written, on_disk);
  EXPECT_EQ(dataset->bytes, on_disk);
  // Reused: the same size, no progress.
  seen.clear();
  absl::StatusOr<SampleDataset> again = EnsureSampleDataset(spec, TempDir() + "/progress", options);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->generated);
  EXPECT_EQ(again->bytes, on_disk);
  EXPECT_TRUE(seen.empty());
}

TEST(SampleDatasetTest, CancelledGenerationLeavesNothingInTheCache) {
  const SampleDatasetSpec spec = SmallSpec();
  const std::string cache = TempDir() + "/cancelled";
  int files = 0;
  EnsureOptions options;
  options.on_progress = [&](const GenerationProgress& p) { files = p.files_done; };
  options.cancelled = [&] { return files >= 2; };
  absl::StatusOr<SampleDataset> dataset = EnsureSampleDataset(spec, cache, options);
  EXPECT_TRUE(absl::IsCancelled(dataset.status())) << dataset.status();
  EXPECT_THAT(std::string(dataset.status().message()),
              HasSubstr("stopped after 2 of 4 files; nothing was kept"));
  EXPECT_TRUE(fs::is_empty(cache)) << "no half-written set, no temporary directory";
  // The next run generates it whole.
  absl::StatusOr<SampleDataset> whole = EnsureSampleDataset(spec, cache);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_TRUE(whole->generated);
}

TEST(SampleDatasetTest, SpecHashFollowsTheSpec) {
  const SampleDatasetSpec spec = SmallSpec();
  EXPECT_EQ(SpecHash(spec), SpecHash(SmallSpec()));
  EXPECT_EQ(SpecHash(spec).size(), 16u);
  SampleDatasetSpec other = spec;
  other.seed += 1;
  EXPECT_NE(SpecHash(other), SpecHash(spec));
  other = spec;
  other.datasets[1].resonance_mass_gev = 1501;
  EXPECT_NE(SpecHash(other), SpecHash(spec));
  other = spec;
  other.events_per_file += 1;
  EXPECT_NE(SpecHash(other), SpecHash(spec));
}

TEST(SampleDatasetTest, GeneratesOnceThenReuses) {
  const std::string cache = TempDir() + "/cache_reuse";
  const SampleDatasetSpec spec = SmallSpec();
  absl::StatusOr<SampleDataset> first = EnsureSampleDataset(spec, cache);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->generated);
  EXPECT_EQ(first->directory, cache + "/" + SpecHash(spec));
  ASSERT_EQ(first->datasets.size(), 2u);
  EXPECT_EQ(first->datasets[0].name, "qcd150");
  EXPECT_EQ(first->datasets[1].name, "signal");
  EXPECT_EQ(first->total_entries(), 2 * 2 * 1500);
  for (const DatasetFiles& d : first->datasets) {
    ASSERT_EQ(d.files.size(), 2u);
    for (const SampleFile& f : d.files) {
      absl::StatusOr<std::unique_ptr<Reader>> reader = Reader::Open(f.path);
      ASSERT_TRUE(reader.ok()) << reader.status();
      EXPECT_EQ((*reader)->entries(), 1500);
      EXPECT_EQ(f.entries, 1500);
      EXPECT_EQ((*reader)->basket_entries(), 400);
      std::vector<uint64_t> events;
      ASSERT_TRUE((*reader)->Read<uint64_t>(kEventColumn, 0, 1500, &events).ok());
      EXPECT_EQ(events.front() % 1500, 1u);  // file i starts at event i * 1500 + 1
      Jagged<float> pt;
      ASSERT_TRUE((*reader)->ReadJagged<float>(kJetPtColumn, 0, 1500, &pt).ok());
      EXPECT_GT(pt.content.size(), 1500u * 3);
      // Realistic floats compress, but not absurdly well.
      const ColumnInfo* column = (*reader)->FindColumn(kJetPtColumn);
      const double ratio = static_cast<double>(column->compressed_bytes()) /
                           static_cast<double>(column->uncompressed_bytes());
      EXPECT_GT(ratio, 0.2);
      EXPECT_LT(ratio, 0.9);
    }
  }
  // Only the finished directory remains: no temporary or stale siblings.
  std::vector<std::string> entries;
  for (const auto& entry : fs::directory_iterator(cache)) entries.push_back(entry.path().string());
  EXPECT_EQ(entries, std::vector<std::string>{first->directory});

  const auto mtime = fs::last_write_time(first->datasets[0].files[0].path);
  absl::StatusOr<SampleDataset> second = EnsureSampleDataset(spec, cache);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(second->generated);
  EXPECT_EQ(second->datasets[0].files[0].path, first->datasets[0].files[0].path);
  EXPECT_EQ(fs::last_write_time(first->datasets[0].files[0].path), mtime);
}

std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(SampleDatasetTest, SameSpecGivesIdenticalFilesAnywhere) {
  const SampleDatasetSpec spec = SmallSpec();
  absl::StatusOr<SampleDataset> a = EnsureSampleDataset(spec, TempDir() + "/cache_a");
  absl::StatusOr<SampleDataset> b = EnsureSampleDataset(spec, TempDir() + "/cache_b");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(ReadFileBytes(a->datasets[1].files[1].path),
            ReadFileBytes(b->datasets[1].files[1].path));
  // Different files of one dataset hold different events.
  EXPECT_NE(ReadFileBytes(a->datasets[1].files[0].path),
            ReadFileBytes(a->datasets[1].files[1].path));
}

TEST(SampleDatasetTest, DamagedCacheIsAClearErrorAndRegeneratesOnceDeleted) {
  const std::string cache = TempDir() + "/cache_broken";
  const SampleDatasetSpec spec = SmallSpec();
  absl::StatusOr<SampleDataset> first = EnsureSampleDataset(spec, cache);
  ASSERT_TRUE(first.ok());
  const std::string victim = first->datasets[1].files[0].path;
  const std::string original = ReadFileBytes(victim);
  fs::resize_file(victim, original.size() / 2);

  absl::StatusOr<SampleDataset> damaged = EnsureSampleDataset(spec, cache);
  ASSERT_FALSE(damaged.ok());
  EXPECT_EQ(damaged.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(damaged.status().message()), ::testing::HasSubstr(victim));
  EXPECT_THAT(std::string(damaged.status().message()),
              ::testing::HasSubstr("delete it (rm -r " + first->directory + ") and run again"));

  fs::remove(first->datasets[0].files[1].path);
  absl::StatusOr<SampleDataset> missing = EnsureSampleDataset(spec, cache);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()),
              ::testing::HasSubstr(first->datasets[0].files[1].path));

  fs::remove_all(first->directory);
  absl::StatusOr<SampleDataset> second = EnsureSampleDataset(spec, cache);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->generated);
  EXPECT_EQ(ReadFileBytes(victim), original);
  int siblings = 0;
  for (const auto& entry : fs::directory_iterator(cache)) {
    (void)entry;
    ++siblings;
  }
  EXPECT_EQ(siblings, 1);
}

TEST(SampleDatasetTest, UnwritableCacheDirectoryIsAnErrorNamingIt) {
  const std::string blocker = TempDir() + "/not_a_directory";
  std::ofstream(blocker) << "x";
  absl::StatusOr<SampleDataset> dataset = EnsureSampleDataset(SmallSpec(), blocker + "/cache");
  EXPECT_FALSE(dataset.ok());
  EXPECT_THAT(dataset.status().message(), HasSubstr(blocker));
  EXPECT_EQ(EnsureSampleDataset(SmallSpec(), "").status().code(),
            absl::StatusCode::kInvalidArgument);
}

// A generation killed before it could clean up (SIGKILL; SIGPIPE in `collect | head`) leaves its
// temporary directory: swept once its process is gone and it is old enough.
TEST(SampleDatasetTest, AbandonedGenerationsAreSweptOnlyWhenTheirProcessIsGoneAndOld) {
  const std::string cache = absl::StrCat(TempDir(), "/sweep-cache");
  fs::create_directories(cache);
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);  // its pid now names no process
  const std::string dead_old = absl::StrCat(cache, "/0123456789abcdef.tmp-", child, "-00ff");
  const std::string dead_new = absl::StrCat(cache, "/0123456789abcdef.tmp-", child, "-00ee");
  const std::string alive_old = absl::StrCat(cache, "/0123456789abcdef.tmp-", getpid(), "-00dd");
  const std::string complete = absl::StrCat(cache, "/0123456789abcdef");
  for (const std::string& dir : {dead_old, dead_new, alive_old, complete}) {
    fs::create_directories(dir);
    std::ofstream(dir + "/QCD_1.rcol") << "partial";
  }
  const struct timeval hour_ago[2] = {{time(nullptr) - 3600, 0}, {time(nullptr) - 3600, 0}};
  for (const std::string& dir : {dead_old, alive_old, complete}) {
    ASSERT_EQ(utimes(dir.c_str(), hour_ago), 0) << dir;
  }
  EXPECT_EQ(SweepAbandonedGenerations(cache, absl::Minutes(10)), 1);
  EXPECT_FALSE(fs::exists(dead_old));
  EXPECT_TRUE(fs::exists(dead_new)) << "too recent: may be another host's generation";
  EXPECT_TRUE(fs::exists(alive_old)) << "its process still runs";
  EXPECT_TRUE(fs::exists(complete));
}

TEST(SampleDatasetTest, DefaultCacheDirectoryFollowsTheEnvironment) {
  ::setenv("ROASTCOFFEA_CACHE_DIR", "/x/explicit", 1);
  ::setenv("XDG_CACHE_HOME", "/x/xdg", 1);
  ::setenv("HOME", "/x/home", 1);
  EXPECT_EQ(DefaultCacheDirectory(), "/x/explicit");
  ::setenv("ROASTCOFFEA_CACHE_DIR", "", 1);
  EXPECT_EQ(DefaultCacheDirectory(), "/x/xdg/roastcoffea");
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(DefaultCacheDirectory(), "/x/home/.cache/roastcoffea");
  ::unsetenv("HOME");
  ::unsetenv("ROASTCOFFEA_CACHE_DIR");
  EXPECT_EQ(DefaultCacheDirectory(), "/tmp/roastcoffea-cache");
}

}  // namespace
}  // namespace sample_analysis
}  // namespace roastcoffea
