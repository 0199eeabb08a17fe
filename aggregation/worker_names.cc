#include "aggregation/worker_names.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace {

constexpr absl::string_view kThreadInfix = "/thread-";

// Where a trailing "/thread-<digits>" starts, or npos.
size_t ThreadSuffix(absl::string_view worker) {
  const size_t at = worker.rfind(kThreadInfix);
  if (at == absl::string_view::npos) return at;
  const absl::string_view digits = worker.substr(at + kThreadInfix.size());
  if (digits.empty()) return absl::string_view::npos;
  for (char c : digits) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return absl::string_view::npos;
  }
  return at;
}

}  // namespace

std::string WorkerThreadName(absl::string_view worker, int64_t thread_index) {
  const absl::string_view process = worker.empty() ? absl::string_view("worker") : worker;
  if (ThreadSuffix(process) != absl::string_view::npos || thread_index < 0) {
    return std::string(process);
  }
  return absl::StrCat(process, kThreadInfix, thread_index);
}

std::string WorkerProcessName(absl::string_view worker) {
  const size_t at = ThreadSuffix(worker);
  return std::string(at == absl::string_view::npos ? worker : worker.substr(0, at));
}

}  // namespace roastcoffea
