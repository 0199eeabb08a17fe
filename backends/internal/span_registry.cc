#include "backends/internal/span_registry.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace backends_internal {

SpanRegistry::SpanRegistry(absl::string_view backend) : backend_(backend) {}

absl::StatusOr<SpanWindow> SpanRegistry::Open(absl::string_view name, absl::Time start) {
  if (name.empty()) return absl::InvalidArgumentError("span name must not be empty");
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t number = next_++;
  SpanWindow& span = spans_[number];
  span.id = absl::StrCat(backend_, "-span-", number);
  span.name = std::string(name);
  span.start = start;
  number_of_[span.id] = number;
  return span;
}

absl::StatusOr<SpanWindow> SpanRegistry::Close(const SpanId& id, absl::Time end) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = number_of_.find(id);
  if (it == number_of_.end()) {
    return absl::NotFoundError(absl::StrCat("unknown ", backend_, " span id '", id, "'"));
  }
  SpanWindow& span = spans_.at(it->second);
  if (span.ended) {
    return absl::FailedPreconditionError(absl::StrCat("span '", id, "' already ended"));
  }
  span.end = end;
  span.ended = true;
  return span;
}

absl::StatusOr<SpanWindow> SpanRegistry::EndedLocked(const SpanId& id) const {
  auto it = number_of_.find(id);
  if (it == number_of_.end()) {
    return absl::NotFoundError(absl::StrCat("unknown ", backend_, " span id '", id, "'"));
  }
  const SpanWindow& span = spans_.at(it->second);
  if (!span.ended) {
    return absl::FailedPreconditionError(
        absl::StrCat("span '", id, "' has not ended; call EndSpan first"));
  }
  return span;
}

absl::StatusOr<SpanWindow> SpanRegistry::Ended(const SpanId& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return EndedLocked(id);
}

absl::StatusOr<SpanWindow> SpanRegistry::Find(const SpanId& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = number_of_.find(id);
  if (it == number_of_.end()) {
    return absl::NotFoundError(absl::StrCat("unknown ", backend_, " span id '", id, "'"));
  }
  return spans_.at(it->second);
}

absl::Status SpanRegistry::SetEnd(const SpanId& id, absl::Time end) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<SpanWindow> span = EndedLocked(id);
  if (!span.ok()) return span.status();
  spans_.at(number_of_.at(id)).end = end;
  return absl::OkStatus();
}

std::vector<SpanWindow> SpanRegistry::All() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<SpanWindow> all;
  all.reserve(spans_.size());
  for (const auto& [number, span] : spans_) all.push_back(span);
  return all;
}

}  // namespace backends_internal
}  // namespace roastcoffea
