#include "aggregation/random_chunk_records.h"

#include <random>

#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace testing_internal {

v1::Measurement RandomRecords(uint64_t seed, int n, bool shuffle) {
  v1::Measurement m;
  std::mt19937_64 rng(seed);
  auto uniform = [&rng](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  auto real = [&rng] { return static_cast<double>(rng() % 1'000'000) / 1e6; };
  const char* datasets[] = {"TTbar", "", "WJets", "DY"};
  const char* section_names[] = {"jets", "muons", "load", "read"};
  const int64_t start = int64_t{1'765'000'000} * 1'000'000'000;
  m.mutable_metadata()->set_elapsed_seconds(100);
  for (int i = 0; i < n; ++i) {
    v1::ChunkRecord* c = m.add_chunks();
    c->set_dataset(datasets[uniform(0, 3)]);
    const int64_t file = uniform(0, n / 8 + 1);
    if (uniform(0, 30) != 0) c->set_file(absl::StrCat("root://x//store/f", file, ".root"));
    if (file % 3 == 0) c->set_file_bytes(1'000'000 * (file + 1));
    c->set_uuid(absl::StrCat("u", file));
    const int64_t entry = uniform(0, 9) * 1000;
    c->set_entry_start(entry);
    c->set_entry_stop(entry + uniform(0, 3) * 1000);
    c->set_events(uniform(0, 4) == 0 ? 0 : uniform(1, 5000));
    const double d = 0.01 + 3 * real();
    c->set_duration_seconds(d);
    if (uniform(0, 40) != 0) {
      c->set_start_unix_ns(start + uniform(0, 100) * 1'000'000'000 + uniform(0, 999));
      c->set_end_unix_ns(c->start_unix_ns() + static_cast<int64_t>(d * 1e9));
    }
    if (uniform(0, 2) != 0) c->set_cpu_seconds(d * real());
    if (uniform(0, 3) == 0) c->set_run_queue_wait_seconds(d * real() / 4);
    if (uniform(0, 4) != 0) {
      c->set_memory_before_bytes(uniform(1, 1'000'000'000));
      c->set_memory_after_bytes(uniform(1, 1'000'000'000));
    }
    if (uniform(0, 5) == 0) c->set_peak_live_bytes(uniform(0, 1'000'000));
    c->set_compressed_bytes_read(uniform(0, 3) == 0 ? 0 : uniform(1, 10'000'000));
    c->set_worker(absl::StrCat("tcp://w", uniform(0, 5), "/thread-", uniform(0, 3)));
    c->set_thread_index(static_cast<int32_t>(uniform(0, 3)));
    c->set_attempt(static_cast<uint32_t>(uniform(0, 10) == 0 ? uniform(1, 2) : 0));
    if (uniform(0, 12) == 0) {
      c->set_status(v1::CHUNK_STATUS_FAILED);
      c->set_error_text(absl::StrCat("error ", uniform(0, 3)));
    } else {
      c->set_status(v1::CHUNK_STATUS_OK);
    }
    if (uniform(0, 6) == 0) {
      c->add_accessed_branches(absl::StrCat("b", uniform(0, 9)));
      c->mutable_file_metadata()->set_total_branches(20);
      c->mutable_file_metadata()->set_total_tree_bytes(5'000'000);
      c->set_accessed_bytes(uniform(0, 5'000'000));
    }
    const int sections = static_cast<int>(uniform(0, 4));
    for (int s = 0; s < sections; ++s) {
      v1::SectionRecord* section = c->add_sections();
      section->set_name(section_names[uniform(0, 3)]);
      section->set_kind(static_cast<v1::SectionRecord::Kind>(uniform(0, 3)));
      section->set_entries(uniform(0, 2));
      section->set_duration_seconds(d * real());
      section->set_cpu_seconds(d * real());
      section->set_memory_delta_bytes(uniform(-1'000'000, 1'000'000));
      section->set_bytes_read(uniform(0, 1'000'000));
    }
  }
  if (shuffle) {
    for (int i = m.chunks_size() - 1; i > 0; --i) {
      m.mutable_chunks()->SwapElements(i, static_cast<int>(rng() % static_cast<uint64_t>(i + 1)));
    }
  }
  return m;
}

}  // namespace testing_internal
}  // namespace roastcoffea
