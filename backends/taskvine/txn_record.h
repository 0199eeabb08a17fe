// Line parser of the TaskVine / Work Queue transactions log (one record per line).
//
// ParseTransactionLine turns one line (without its newline) into a TxnRecord whose string_views
// point into the line. It accepts every variant described in docs/taskvine-logs.md
// §2 and §7: TaskVine 7.5.0 to master (READY or WAITING, attempt number present or not, TRANSFER
// sizes in bytes/µs or, in 7.5.0, MB/s), Work Queue (worker address in WORKER and TASK records,
// top-level TRANSFER records, MANAGER START without pid), double and trailing spaces.
//
// Thread-safety: pure functions. Cost: one pass over the line, no allocation on success.
#ifndef ROASTCOFFEA_BACKENDS_TASKVINE_TXN_RECORD_H_
#define ROASTCOFFEA_BACKENDS_TASKVINE_TXN_RECORD_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace roastcoffea {
namespace taskvine {

enum class TxnKind {
  kBlankOrComment,  // "# ..." header lines and empty lines
  kManagerStart,
  kManagerEnd,
  kWorkerConnection,      // worker, address
  kWorkerDisconnection,   // worker (may be "(null)"), address (WQ only), word = reason
  kWorkerResources,       // worker, json
  kWorkerTransfer,        // worker or (WQ) task_id, word = INPUT|OUTPUT, file, bytes, wall_seconds
  kWorkerCacheUpdate,     // worker, file, bytes, wall_seconds, start_us
  kCategory,              // category, word = MAX|MIN|FIRST
  kTaskReady,             // task_id, category, max_resources, attempt (0 = not logged), json
  kTaskRunning,           // task_id, worker (TaskVine id or WQ address), max_resources, json
  kTaskWaitingRetrieval,  // task_id, worker
  kTaskRetrieved,         // task_id, word = result, exit_code, json (limits), json2 (measured)
  kTaskDone,              // task_id, word = result, exit_code (WQ / 7.5.0 also json, json2)
  kTaskOtherState,        // task_id, word = state (CANCELED, INITIAL, ...): informational
  kLibrary,               // task_id = library task id, word = SENT|STARTED|FAILURE|WAITING, worker
  kApplication,           // free text in `file`
};

// Latest time a record may carry (year 2096): keeps every time representable in nanoseconds.
inline constexpr int64_t kMaxTimeUs = int64_t{4000000000} * 1000000;

struct TxnRecord {
  TxnKind kind = TxnKind::kBlankOrComment;
  int64_t time_us = 0;
  int64_t manager_pid = 0;
  int64_t task_id = 0;
  int attempt = 0;  // READY's attempt number; 0 when the version does not log it
  int exit_code = 0;
  bool max_resources = false;
  double bytes = 0;           // TRANSFER / CACHE_UPDATE size, converted to bytes
  double wall_seconds = 0;    // TRANSFER / CACHE_UPDATE duration
  int64_t start_us = 0;       // TRANSFER / CACHE_UPDATE start (0 when not logged)
  absl::string_view worker;   // worker id, or the worker address in Work Queue TASK records
  absl::string_view address;  // host:port of CONNECTION/DISCONNECTION records
  absl::string_view category;
  absl::string_view word;   // reason / result / direction / library state / category kind
  absl::string_view file;   // file name; APPLICATION text
  absl::string_view json;   // first JSON object ("" when absent)
  absl::string_view json2;  // second JSON object of RETRIEVED (and WQ DONE)
};

// Parses one line (trailing '\r' and spaces allowed). InvalidArgument naming the problem for
// a line that is not a record of a known shape.
absl::Status ParseTransactionLine(absl::string_view line, TxnRecord* record);

// Iterates the compact resource JSON of TaskVine ({"key":[number,"unit"],...}), calling
// `visit(key, value)` for each pair. InvalidArgument when `json` is not of that shape.
template <typename Visitor>
absl::Status ForEachJsonNumber(absl::string_view json, Visitor&& visit);

// Like ForEachJsonNumber, but hands over the number's text unparsed: `visit(key, text)`; parse
// the few values you need with ParseJsonNumber (most of a RETRIEVED payload is not needed).
template <typename Visitor>
absl::Status ForEachJsonEntry(absl::string_view json, Visitor&& visit);

// Parses a number of the resource JSON: finite, |x| <= 1e30. False otherwise.
bool ParseJsonNumber(absl::string_view text, double* value);

namespace internal {

// The first `c` in [p, end), or end. Inline, 16 bytes at a time: most fields of a log are a few
// bytes long, so a call to memchr per field cost more than the scan itself (#25).
ABSL_ATTRIBUTE_ALWAYS_INLINE inline const char* FindByte(const char* p, const char* end, char c) {
#ifdef __SSE2__
  const __m128i wanted = _mm_set1_epi8(c);
  while (end - p >= 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const int mask = _mm_movemask_epi8(_mm_cmpeq_epi8(bytes, wanted));
    if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
    p += 16;
  }
#endif
  while (p < end && *p != c) ++p;
  return p;
}

// text == literal with the literal's size known to the compiler, which then compares in a few
// loads (string_view's == calls memcmp with a variable size).
template <size_t N>
inline bool Equals(absl::string_view text, const char (&literal)[N]) {
  return text.size() == N - 1 && memcmp(text.data(), literal, N - 1) == 0;
}

// ParseTransactionLine with its fields found one byte at a time: the reference that the
// 64-byte mask scan ParseTransactionLine uses must match (tests and the fuzzer compare them).
absl::Status ParseTransactionLineByBytes(absl::string_view line, TxnRecord* record);

// InvalidArgument(what): out of line, so that ParseJsonEntry stays small enough to inline.
absl::Status JsonError(const char* what);

// Parses one `"key":[number,"unit"]` entry starting at json[*pos]; advances *pos past it.
// Inline: a call per entry was a tenth of reading a log of 10^6 tasks (#25).
ABSL_ATTRIBUTE_ALWAYS_INLINE inline absl::Status ParseJsonEntry(absl::string_view json, size_t* pos,
                                                                absl::string_view* key,
                                                                absl::string_view* number) {
  const char* begin = json.data();
  const char* end = begin + json.size();
  const char* p = begin + *pos;
  if (p >= end || *p != '"') return JsonError("expected a quoted key in resource JSON");
  const char* key_end = FindByte(p + 1, end, '"');
  if (key_end == end) return JsonError("unterminated key in resource JSON");
  *key = absl::string_view(p + 1, static_cast<size_t>(key_end - p - 1));
  p = key_end + 1;
  if (end - p < 2 || p[0] != ':' || p[1] != '[')
    return JsonError("expected :[ after a key in resource JSON");
  p += 2;
  const char* comma = FindByte(p, end, ',');
  if (comma == end) return JsonError("expected ,\"unit\" in resource JSON");
  *number = absl::string_view(p, static_cast<size_t>(comma - p));
  if (number->empty()) return JsonError("empty value in resource JSON");
  p = comma + 1;
  if (p >= end || *p != '"') return JsonError("expected a quoted unit in resource JSON");
  const char* unit_end = FindByte(p + 1, end, '"');
  if (unit_end == end || unit_end + 1 >= end || unit_end[1] != ']')
    return JsonError("unterminated unit in resource JSON");
  *pos = static_cast<size_t>(unit_end + 2 - begin);
  return absl::OkStatus();
}

}  // namespace internal

template <typename Visitor>
absl::Status ForEachJsonNumber(absl::string_view json, Visitor&& visit) {
  absl::Status bad_number;
  absl::Status status = ForEachJsonEntry(json, [&](absl::string_view key, absl::string_view text) {
    double value = 0;
    if (!ParseJsonNumber(text, &value)) {
      if (bad_number.ok())
        bad_number = absl::InvalidArgumentError(
            "value in resource JSON is not a finite number (|x| <= 1e30)");
      return;
    }
    visit(key, value);
  });
  return status.ok() ? bad_number : status;
}

template <typename Visitor>
absl::Status ForEachJsonEntry(absl::string_view json, Visitor&& visit) {
  if (json.size() < 2 || json.front() != '{' || json.back() != '}') {
    return absl::InvalidArgumentError("resource JSON must be an object {...}");
  }
  size_t pos = 1;
  if (json.size() == 2) return absl::OkStatus();
  while (true) {
    absl::string_view key, number;
    absl::Status status = internal::ParseJsonEntry(json, &pos, &key, &number);
    if (!status.ok()) return status;
    visit(key, number);
    if (pos >= json.size()) return absl::InvalidArgumentError("unterminated resource JSON");
    if (json[pos] == '}') {
      if (pos + 1 != json.size()) return absl::InvalidArgumentError("text after resource JSON");
      return absl::OkStatus();
    }
    if (json[pos] != ',') return absl::InvalidArgumentError("expected ',' in resource JSON");
    ++pos;
  }
}

}  // namespace taskvine
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_TASKVINE_TXN_RECORD_H_
