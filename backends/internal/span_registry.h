// SpanRegistry: the span bookkeeping every backend shares (ids, names, start and end times, the
// errors of CreateSpan / EndSpan / GetSpanMetrics in one wording). What a backend measures in a
// span (counters, heartbeats, log records) stays in the backend, keyed by the span's id.
//
// Thread-safety: every method may be called from any thread; one internal mutex.
#ifndef ROASTCOFFEA_BACKENDS_INTERNAL_SPAN_REGISTRY_H_
#define ROASTCOFFEA_BACKENDS_INTERNAL_SPAN_REGISTRY_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "backends/metrics_backend.h"

namespace roastcoffea {
namespace backends_internal {

// One span as the registry knows it. `end` is meaningful once `ended`.
struct SpanWindow {
  SpanId id;
  std::string name;
  absl::Time start;
  absl::Time end;
  bool ended = false;
};

class SpanRegistry {
 public:
  // Ids are "<backend>-span-<n>", n = 0, 1, ...
  explicit SpanRegistry(absl::string_view backend);
  SpanRegistry(const SpanRegistry&) = delete;
  SpanRegistry& operator=(const SpanRegistry&) = delete;

  // Opens a span starting at `start`. InvalidArgument for an empty name.
  absl::StatusOr<SpanWindow> Open(absl::string_view name, absl::Time start);
  // Ends an open span at `end`. NotFound for an unknown id, FailedPrecondition when it already
  // ended.
  absl::StatusOr<SpanWindow> Close(const SpanId& id, absl::Time end);
  // An ended span. NotFound for an unknown id, FailedPrecondition before Close.
  absl::StatusOr<SpanWindow> Ended(const SpanId& id) const;
  // Any known span. NotFound for an unknown id.
  absl::StatusOr<SpanWindow> Find(const SpanId& id) const;
  // Moves the end of an ended span (a backend whose record runs later than its clock).
  // NotFound / FailedPrecondition as Ended.
  absl::Status SetEnd(const SpanId& id, absl::Time end);
  // Every span, in id order of creation.
  std::vector<SpanWindow> All() const;

 private:
  absl::StatusOr<SpanWindow> EndedLocked(const SpanId& id) const;

  const std::string backend_;
  mutable std::mutex mu_;
  int64_t next_ = 0;                     // guarded by mu_
  std::map<int64_t, SpanWindow> spans_;  // by creation number; guarded by mu_
  std::map<SpanId, int64_t> number_of_;  // guarded by mu_
};

}  // namespace backends_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_INTERNAL_SPAN_REGISTRY_H_
