#include "backends/taskvine/txn_record.h"

#include <cmath>
#include <cstddef>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace taskvine {
namespace {

constexpr double kBytesPerMebibyte = 1024.0 * 1024.0;  // cctools' MEGABYTE
constexpr int kMaxTokens = 16;

// The first `c` in [p, end), or end. Inline, 16 bytes at a time: most fields of a log are a few
// bytes long, so a call to memchr per field cost more than the scan itself (#25).
inline const char* FindByte(const char* p, const char* end, char c) {
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

// string_view::find(c, from) with FindByte.
size_t Find(absl::string_view text, char c, size_t from) {
  if (from >= text.size()) return absl::string_view::npos;
  const char* end = text.data() + text.size();
  const char* at = FindByte(text.data() + from, end, c);
  return at == end ? absl::string_view::npos : static_cast<size_t>(at - text.data());
}

// Whitespace tokens of a line, at most kMaxTokens (the rest stays in the last one's tail).
struct Tokens {
  // Left uninitialized (only the first `count` are set): zeroing 16 string_views per line was
  // a measurable part of the parse.
  struct Field {
    const char* data;
    size_t size;
  };
  Field field[kMaxTokens];
  int count = 0;
  bool overflow = false;
  absl::string_view token(int i) const { return absl::string_view(field[i].data, field[i].size); }
};

void Tokenize(absl::string_view line, Tokens* tokens) {
  // Fields are separated by spaces (one or more); FindByte finds the end of long fields (JSON),
  // which are most of the bytes of a log, 16 bytes at a time.
  const char* p = line.data();
  const char* end = p + line.size();
  tokens->count = 0;
  while (p < end) {
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    if (p == end) break;
    const char* start = p;
    // cctools separates fields with spaces only; a tab inside a field makes it malformed.
    p = FindByte(p, end, ' ');
    if (tokens->count == kMaxTokens) {
      tokens->overflow = true;
      return;
    }
    tokens->field[tokens->count++] = {start, static_cast<size_t>(p - start)};
  }
}

// Decimal integer with an optional sign; no other characters.
bool ParseInt(absl::string_view text, int64_t* value) {
  if (text.empty() || text.size() > 19) return false;
  size_t i = 0;
  bool negative = false;
  if (text[0] == '-') {
    negative = true;
    i = 1;
    if (text.size() == 1) return false;
  }
  int64_t result = 0;
  for (; i < text.size(); ++i) {
    const unsigned digit = static_cast<unsigned>(text[i] - '0');
    if (digit > 9) return false;
    result = result * 10 + digit;
  }
  *value = negative ? -result : result;
  return true;
}

// Plain decimals whose digits, read as an integer, are at most 2^53 ("1742250331.001000", most
// times and sizes of a log): that integer and the power of ten are both exact doubles, so one
// division is the correctly rounded value SimpleAtod returns. False (nothing set) otherwise.
bool ParseShortDecimal(absl::string_view text, double* value) {
  static constexpr double kPowersOfTen[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,
                                            1e7,  1e8,  1e9,  1e10, 1e11, 1e12, 1e13,
                                            1e14, 1e15, 1e16, 1e17, 1e18};
  constexpr int64_t kMaxExact = int64_t{1} << 53;
  size_t i = text.empty() || text[0] != '-' ? 0 : 1;
  const bool negative = i == 1;
  int64_t digits = 0;
  int count = 0, fraction = -1;  // fraction: digits after the '.'; -1 before it
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.' && fraction < 0 && count > 0) {
      fraction = 0;
      continue;
    }
    const unsigned digit = static_cast<unsigned>(c - '0');
    if (digit > 9 || ++count > 18) return false;  // 18 digits cannot overflow int64_t
    digits = digits * 10 + digit;
    if (fraction >= 0) ++fraction;
  }
  if (count == 0 || fraction == 0 || digits > kMaxExact) return false;  // "", "-", "5."
  const double magnitude = static_cast<double>(digits) / kPowersOfTen[fraction < 0 ? 0 : fraction];
  *value = negative ? -magnitude : magnitude;
  return true;
}

bool ParseDouble(absl::string_view text, double* value) {
  if (text.empty()) return false;
  if (ParseShortDecimal(text, value)) return true;
  return absl::SimpleAtod(text, value);
}

// The text from the start of token `first` to the end of token `last` (inclusive).
absl::string_view Span(const Tokens& t, int first, int last) {
  const char* begin = t.token(first).data();
  const char* end = t.token(last).data() + t.token(last).size();
  return absl::string_view(begin, end - begin);
}

absl::Status Bad(absl::string_view what) { return absl::InvalidArgumentError(std::string(what)); }

absl::Status NeedTokens(const Tokens& t, int n, absl::string_view record) {
  if (t.count < n) {
    return absl::InvalidArgumentError(
        absl::StrCat(record, " record has ", t.count, " fields, expected at least ", n));
  }
  return absl::OkStatus();
}

bool IsJson(absl::string_view token) { return !token.empty() && token.front() == '{'; }

// TRANSFER / CACHE_UPDATE numbers after the file name: "bytes wall_us start_us" (7.5.1+) or
// "size_MB wall_s" (7.5.0).
absl::Status ParseTransferNumbers(const Tokens& t, int first, TxnRecord* r) {
  const int numbers = t.count - first;
  if (numbers == 3) {
    int64_t wall_us = 0, bytes = 0;
    if (ParseInt(t.token(first), &bytes)) {
      r->bytes = static_cast<double>(bytes);
    } else if (!ParseDouble(t.token(first), &r->bytes)) {
      return Bad("transfer size is not a number");
    }
    if (!ParseInt(t.token(first + 1), &wall_us) || !ParseInt(t.token(first + 2), &r->start_us)) {
      return Bad("transfer wall time or start time is not an integer");
    }
    r->wall_seconds = static_cast<double>(wall_us) * 1e-6;
    if (!std::isfinite(r->bytes) || r->bytes < 0)
      return Bad("transfer size is negative or not finite");
    return absl::OkStatus();
  }
  if (numbers == 2) {
    double megabytes = 0;
    if (!ParseDouble(t.token(first), &megabytes) ||
        !ParseDouble(t.token(first + 1), &r->wall_seconds)) {
      return Bad("transfer size or wall time is not a number");
    }
    r->bytes = megabytes * kBytesPerMebibyte;
    if (!std::isfinite(r->bytes) || r->bytes < 0)
      return Bad("transfer size is negative or not finite");
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("transfer record has ", numbers,
                                                 " numbers after the file name, expected 2 or 3"));
}

absl::Status ParseWorker(const Tokens& t, TxnRecord* r) {
  if (absl::Status s = NeedTokens(t, 5, "WORKER"); !s.ok()) return s;
  r->worker = t.token(3);
  const absl::string_view verb = t.token(4);
  if (verb == "CONNECTION") {
    if (absl::Status s = NeedTokens(t, 6, "WORKER CONNECTION"); !s.ok()) return s;
    r->kind = TxnKind::kWorkerConnection;
    r->address = t.token(5);
  } else if (verb == "DISCONNECTION") {
    if (absl::Status s = NeedTokens(t, 6, "WORKER DISCONNECTION"); !s.ok()) return s;
    r->kind = TxnKind::kWorkerDisconnection;
    r->word = t.token(5);
  } else if (verb == "RESOURCES") {
    if (absl::Status s = NeedTokens(t, 6, "WORKER RESOURCES"); !s.ok()) return s;
    r->kind = TxnKind::kWorkerResources;
    r->json = t.token(5);
    if (!IsJson(r->json)) return Bad("WORKER RESOURCES without a JSON object");
  } else if (verb == "TRANSFER") {
    if (absl::Status s = NeedTokens(t, 9, "WORKER TRANSFER"); !s.ok()) return s;
    r->kind = TxnKind::kWorkerTransfer;
    r->word = t.token(5);
    if (r->word != "INPUT" && r->word != "OUTPUT")
      return Bad("TRANSFER direction is not INPUT/OUTPUT");
    r->file = t.token(6);
    return ParseTransferNumbers(t, 7, r);
  } else if (verb == "CACHE_UPDATE") {
    if (absl::Status s = NeedTokens(t, 8, "WORKER CACHE_UPDATE"); !s.ok()) return s;
    r->kind = TxnKind::kWorkerCacheUpdate;
    r->file = t.token(5);
    return ParseTransferNumbers(t, 6, r);
  } else if (t.count >= 6 && (t.token(5) == "CONNECTION" || t.token(5) == "DISCONNECTION")) {
    // Work Queue: WORKER <id> <host:port>  CONNECTION | DISCONNECTION <reason>
    r->address = t.token(4);
    if (t.token(5) == "CONNECTION") {
      r->kind = TxnKind::kWorkerConnection;
    } else {
      if (absl::Status s = NeedTokens(t, 7, "WORKER DISCONNECTION"); !s.ok()) return s;
      r->kind = TxnKind::kWorkerDisconnection;
      r->word = t.token(6);
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown WORKER record '", verb, "'"));
  }
  return absl::OkStatus();
}

absl::Status ParseResultAndExit(const Tokens& t, TxnRecord* r, absl::string_view record) {
  if (absl::Status s = NeedTokens(t, 7, record); !s.ok()) return s;
  r->word = t.token(5);
  int64_t exit_code = 0;
  if (!ParseInt(t.token(6), &exit_code)) {
    return absl::InvalidArgumentError(
        absl::StrCat(record, " exit code '", t.token(6), "' is not an integer"));
  }
  r->exit_code = static_cast<int>(exit_code);
  if (t.count > 7) {
    if (!IsJson(t.token(7)))
      return absl::InvalidArgumentError(absl::StrCat(record, " has text after the exit code"));
    r->json = t.token(7);
  }
  if (t.count > 8) {
    if (!IsJson(t.token(8)) || t.count > 9) {
      return absl::InvalidArgumentError(absl::StrCat(record, " has text after its JSON objects"));
    }
    r->json2 = t.token(8);
  }
  return absl::OkStatus();
}

absl::Status ParseTask(const Tokens& t, TxnRecord* r) {
  if (absl::Status s = NeedTokens(t, 5, "TASK"); !s.ok()) return s;
  if (!ParseInt(t.token(3), &r->task_id)) return Bad("TASK id is not an integer");
  const absl::string_view state = t.token(4);
  if (state == "READY" || state == "WAITING") {
    // <category (may contain spaces)> FIRST_RESOURCES|MAX_RESOURCES [attempt] {json}
    int label = -1;
    for (int i = 6; i < t.count; ++i) {
      if (t.token(i) == "FIRST_RESOURCES" || t.token(i) == "MAX_RESOURCES") {
        label = i;
        break;
      }
    }
    if (label < 0) return Bad("READY record without FIRST_RESOURCES/MAX_RESOURCES");
    r->kind = TxnKind::kTaskReady;
    r->category = Span(t, 5, label - 1);
    r->max_resources = t.token(label) == "MAX_RESOURCES";
    int next = label + 1;
    if (next < t.count && !IsJson(t.token(next))) {
      int64_t attempt = 0;
      if (!ParseInt(t.token(next), &attempt) || attempt < 0 || attempt > 1000000) {
        return Bad("READY attempt number is not a small integer");
      }
      r->attempt = static_cast<int>(attempt);
      ++next;
    }
    if (next < t.count) {
      if (!IsJson(t.token(next)) || next + 1 != t.count)
        return Bad("READY record has text after its JSON");
      r->json = t.token(next);
    }
  } else if (state == "RUNNING") {
    if (absl::Status s = NeedTokens(t, 6, "TASK RUNNING"); !s.ok()) return s;
    r->kind = TxnKind::kTaskRunning;
    r->worker = t.token(5);
    if (t.count > 6) r->max_resources = t.token(6) == "MAX_RESOURCES";
    if (t.count > 7) {
      if (!IsJson(t.token(7))) return Bad("RUNNING record without a JSON allocation");
      r->json = t.token(7);
    }
  } else if (state == "WAITING_RETRIEVAL") {
    if (absl::Status s = NeedTokens(t, 6, "TASK WAITING_RETRIEVAL"); !s.ok()) return s;
    r->kind = TxnKind::kTaskWaitingRetrieval;
    r->worker = t.token(5);
  } else if (state == "RETRIEVED") {
    r->kind = TxnKind::kTaskRetrieved;
    return ParseResultAndExit(t, r, "TASK RETRIEVED");
  } else if (state == "DONE") {
    r->kind = TxnKind::kTaskDone;
    return ParseResultAndExit(t, r, "TASK DONE");
  } else {
    // Other states some versions log (7.5's CANCELED, INITIAL); anything else is not a record.
    if (state != "CANCELED" && state != "CANCELLED" && state != "INITIAL" && state != "UNKNOWN") {
      return absl::InvalidArgumentError(absl::StrCat("unknown TASK state '", state, "'"));
    }
    r->kind = TxnKind::kTaskOtherState;
    r->word = state;
  }
  return absl::OkStatus();
}

absl::Status ParseManager(const Tokens& t, TxnRecord* record) {
  // TaskVine: MANAGER <pid> START|END [n]; Work Queue: MANAGER START|END.
  if (t.count < 4) return Bad("MANAGER record without START/END");
  const absl::string_view verb = (t.token(3) == "START" || t.token(3) == "END") ? t.token(3)
                                 : t.count > 4                                  ? t.token(4)
                                               : absl::string_view();
  if (verb == "START") {
    record->kind = TxnKind::kManagerStart;
  } else if (verb == "END") {
    record->kind = TxnKind::kManagerEnd;
  } else {
    return Bad("MANAGER record is neither START nor END");
  }
  return absl::OkStatus();
}

// Work Queue: TRANSFER INPUT|OUTPUT <task id> <cache flag> <size MB> <wall s> <remote name>
absl::Status ParseWorkQueueTransfer(const Tokens& t, TxnRecord* record) {
  if (t.count != 9) return Bad("Work Queue TRANSFER record must have 9 fields");
  record->kind = TxnKind::kWorkerTransfer;
  record->word = t.token(3);
  if (record->word != "INPUT" && record->word != "OUTPUT")
    return Bad("TRANSFER direction is not INPUT/OUTPUT");
  double megabytes = 0;
  int64_t cache_flag = 0;
  if (!ParseInt(t.token(4), &record->task_id) || !ParseInt(t.token(5), &cache_flag) ||
      !ParseDouble(t.token(6), &megabytes) || !ParseDouble(t.token(7), &record->wall_seconds)) {
    return Bad("Work Queue TRANSFER task id, cache flag, size or time is not a number");
  }
  record->bytes = megabytes * kBytesPerMebibyte;
  if (!std::isfinite(record->bytes) || record->bytes < 0)
    return Bad("TRANSFER size is negative or not finite");
  record->file = t.token(8);
  return absl::OkStatus();
}

}  // namespace

namespace internal {

absl::Status ParseJsonEntry(absl::string_view json, size_t* pos, absl::string_view* key,
                            absl::string_view* number) {
  size_t p = *pos;
  if (p >= json.size() || json[p] != '"') return Bad("expected a quoted key in resource JSON");
  const size_t key_end = Find(json, '"', p + 1);
  if (key_end == absl::string_view::npos) return Bad("unterminated key in resource JSON");
  *key = json.substr(p + 1, key_end - p - 1);
  p = key_end + 1;
  if (json.substr(p, 2) != ":[") return Bad("expected :[ after a key in resource JSON");
  p += 2;
  const size_t comma = Find(json, ',', p);
  if (comma == absl::string_view::npos) return Bad("expected ,\"unit\" in resource JSON");
  *number = json.substr(p, comma - p);
  if (number->empty()) return Bad("empty value in resource JSON");
  p = comma + 1;
  if (p >= json.size() || json[p] != '"') return Bad("expected a quoted unit in resource JSON");
  const size_t unit_end = Find(json, '"', p + 1);
  if (unit_end == absl::string_view::npos || unit_end + 1 >= json.size() ||
      json[unit_end + 1] != ']') {
    return Bad("unterminated unit in resource JSON");
  }
  *pos = unit_end + 2;
  return absl::OkStatus();
}

}  // namespace internal

bool ParseJsonNumber(absl::string_view text, double* value) {
  int64_t integer = 0;
  if (ParseInt(text, &integer)) {  // most values are integers: no float parsing
    *value = static_cast<double>(integer);
  } else if (!ParseDouble(text, value)) {
    return false;
  }
  return std::isfinite(*value) && std::fabs(*value) <= 1e30;
}

absl::Status ParseTransactionLine(absl::string_view line, TxnRecord* record) {
  // Copied from a constant: assigning a fresh temporary wrote it to the stack and read it back
  // in wider loads than it was stored with, which stalled on every line (#25).
  static const TxnRecord kEmpty;
  *record = kEmpty;
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
    line.remove_suffix(1);
  }
  size_t first = 0;
  while (first < line.size() && (line[first] == ' ' || line[first] == '\t')) ++first;
  if (first == line.size() || line[first] == '#') return absl::OkStatus();  // blank or comment

  Tokens t;
  Tokenize(line, &t);
  if (t.count < 3) return Bad("fewer than 3 fields (time, manager pid, subject)");
  if (!ParseInt(t.token(0), &record->time_us) || record->time_us < 0 ||
      record->time_us > kMaxTimeUs) {
    return Bad("time is not an integer of microseconds between 0 and the year 2096");
  }
  if (!ParseInt(t.token(1), &record->manager_pid)) return Bad("manager pid is not an integer");
  const absl::string_view subject = t.token(2);
  if (subject == "TASK") {
    if (t.overflow) return Bad("TASK record has too many fields");
    return ParseTask(t, record);
  }
  if (subject == "APPLICATION") {
    record->kind = TxnKind::kApplication;
    record->file = line.substr(static_cast<size_t>(subject.data() + subject.size() - line.data()));
    while (!record->file.empty() && record->file.front() == ' ') record->file.remove_prefix(1);
    return absl::OkStatus();
  }
  if (t.overflow) return Bad("record has too many fields");
  if (subject == "WORKER") return ParseWorker(t, record);
  if (subject == "MANAGER") return ParseManager(t, record);
  if (subject == "CATEGORY") {
    if (t.count < 5) return Bad("CATEGORY record has fewer than 5 fields");
    record->kind = TxnKind::kCategory;
    record->category = t.token(3);
    record->word = t.token(4);
    return absl::OkStatus();
  }
  if (subject == "LIBRARY") {
    if (absl::Status s = NeedTokens(t, 6, "LIBRARY"); !s.ok()) return s;
    if (!ParseInt(t.token(3), &record->task_id)) return Bad("LIBRARY id is not an integer");
    record->kind = TxnKind::kLibrary;
    record->word = t.token(4);
    record->worker = t.token(5);
    return absl::OkStatus();
  }
  if (subject == "TRANSFER") return ParseWorkQueueTransfer(t, record);
  return absl::InvalidArgumentError(absl::StrCat("unknown subject '", subject, "'"));
}

}  // namespace taskvine
}  // namespace roastcoffea
