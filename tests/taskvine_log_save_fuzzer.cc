// Fuzzes a TaskVine transactions log through the TaskVine backend into a saved measurement
// (reliability study D1): whatever bytes the log holds (invalid UTF-8 in a worker id, a
// category, a task's JSON), the measurement saved from what the backend read must load back.
// A byte that is not UTF-8 used to give a save that said "saved" and a file no command could
// read ("is corrupt").
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "backends/taskvine/taskvine_backend.h"
#include "schema/measurement.pb.h"
#include "schema/raw_run.h"
#include "store/measurement_io.h"

namespace {

void Check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "taskvine_log_save_fuzzer: %s\n", what);
    std::abort();
  }
}

// One scratch directory per process, on tmpfs when there is one (a save fsyncs four times).
const std::string& ScratchDirectory() {
  static const std::string* directory = [] {
    const char* tmp = std::getenv("TEST_TMPDIR");
    std::string pattern = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (tmp ? tmp : "/tmp");
    pattern += "/taskvine-save-fuzz-XXXXXX";
    Check(mkdtemp(pattern.data()) != nullptr, "cannot make a scratch directory");
    return new std::string(pattern);
  }();
  return *directory;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using roastcoffea::v1::Measurement;
  const std::string& scratch = ScratchDirectory();
  const std::string log = scratch + "/transactions";
  std::ofstream(log, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));

  roastcoffea::TaskVineBackendOptions options;
  options.logs = log;
  roastcoffea::TaskVineMetricsBackend backend(options);
  if (!backend.StartTracking(absl::Milliseconds(100)).ok()) return 0;
  Measurement measurement;
  // Text from the log lands in these fields: worker ids, categories, task ids, error text.
  measurement.mutable_metadata()->set_name("fuzz");
  measurement.mutable_metadata()->set_backend("taskvine");
  absl::StatusOr<roastcoffea::v1::TrackingData> tracking = backend.StopTracking();
  if (tracking.ok()) *measurement.mutable_tracking() = *std::move(tracking);
  roastcoffea::RawRun run;
  backend.Contribute(run);
  for (size_t i = 0; i < run.engine_chunks.size(); ++i) {
    run.engine_chunks.ReadRecord(i, measurement.add_chunks());
  }
  for (roastcoffea::v1::Warning& warning : run.warnings) {
    *measurement.add_warnings() = std::move(warning);
  }

  absl::StatusOr<std::string> saved = roastcoffea::SaveMeasurement(measurement, scratch, "m");
  Check(saved.ok(), "the measurement read from the log could not be saved");
  absl::StatusOr<Measurement> loaded = roastcoffea::LoadMeasurement(*saved);
  Check(loaded.ok(), "the saved measurement does not load back");
  // LoadMeasurement falls back to measurement.json when the .pb does not parse, so the .pb is
  // parsed here on its own: that fallback hid D1 from every reader but one.
  std::ifstream pb_file(*saved + "/measurement.pb", std::ios::binary);
  const std::string pb((std::istreambuf_iterator<char>(pb_file)), std::istreambuf_iterator<char>());
  Measurement from_pb;
  Check(from_pb.ParseFromString(pb), "measurement.pb does not parse");
  Check(loaded->chunks_size() == measurement.chunks_size(), "chunks lost in the save");
  Check(loaded->tracking().workers_size() == measurement.tracking().workers_size(),
        "workers lost in the save");
  for (const char* file : {"/FORMAT", "/measurement.pb", "/measurement.json"}) {
    unlink((*saved + file).c_str());
  }
  Check(rmdir(saved->c_str()) == 0, "cannot remove the saved measurement");
  return 0;
}
