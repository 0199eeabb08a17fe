#include "backends/taskvine/txn_record.h"

#include <cmath>
#include <cstddef>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace taskvine {
namespace {

constexpr double kBytesPerMebibyte = 1024.0 * 1024.0;  // cctools' MEGABYTE
constexpr int kMaxTokens = 16;

using internal::Equals;
using internal::FindByte;

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

// The byte loop: fields separated by spaces; tabs are skipped between fields (a tab inside a
// field, after its first byte, is part of it). Used for lines holding a tab.
void TokenizeBytes(absl::string_view line, Tokens* tokens) {
  // FindByte finds the end of long fields (JSON), which are most of the bytes of a log, 16 bytes
  // at a time.
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

#ifdef __SSE2__
// Bit i of the result: p[i] is a space, for the 64 bytes at p; *has_tab: a tab is among them.
inline uint64_t SpaceMask(const char* p, bool* has_tab) {
  const __m128i space = _mm_set1_epi8(' ');
  const __m128i tab = _mm_set1_epi8('\t');
  uint64_t spaces = 0;
  __m128i tabs = _mm_setzero_si128();
  for (int k = 0; k < 4; ++k) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    spaces |= uint64_t{static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, space)))}
              << (16 * k);
    tabs = _mm_or_si128(tabs, _mm_cmpeq_epi8(bytes, tab));  // one movemask for all 64 bytes
  }
  *has_tab = _mm_movemask_epi8(tabs) != 0;
  return spaces;
}

// The fields of a line without tabs from bit masks of its spaces, 64 bytes at a time: the
// starts and ends of fields are the mask's 0->1 and 1->0 edges, found with ctz, so no branch
// depends on where a field ends (the byte loop mispredicted at every field's end, #25).
// False (tokens unusable) when the line holds a tab.
bool TokenizeByMasks(absl::string_view line, Tokens* tokens) {
  const char* base = line.data();
  const size_t n = line.size();
  tokens->count = 0;
  uint64_t space_before = 1;  // the line's start separates like a space
  size_t open = 0;            // start of the field being read
  bool in_field = false;
  for (size_t at = 0; at < n; at += 64) {
    const size_t len = n - at;
    uint64_t spaces;
    bool has_tab;
    if (len >= 64) {
      spaces = SpaceMask(base + at, &has_tab);
    } else if (n >= 64) {  // the last 64 bytes of the line, shifted to start at `at`
      // (a tab before `at` was seen with the previous block)
      spaces = SpaceMask(base + n - 64, &has_tab) >> (64 - len);
    } else {
      char padded[64];
      memcpy(padded, base, n);
      memset(padded + n, ' ', 64 - n);
      spaces = SpaceMask(padded, &has_tab);
    }
    if (has_tab) return false;
    if (len < 64) spaces |= ~uint64_t{0} << len;  // past the end: a separator
    const uint64_t after_space = (spaces << 1) | space_before;
    uint64_t edges = (~spaces & after_space) | (spaces & ~after_space);
    space_before = spaces >> 63;
    for (; edges != 0; edges &= edges - 1) {
      const size_t pos = at + static_cast<size_t>(__builtin_ctzll(edges));
      if (!in_field) {
        if (tokens->count == kMaxTokens) {
          tokens->overflow = true;
          return true;
        }
        open = pos;
      } else {
        tokens->field[tokens->count++] = {base + open, pos - open};
      }
      in_field = !in_field;
    }
  }
  if (in_field) tokens->field[tokens->count++] = {base + open, n - open};
  return true;
}
#endif

void Tokenize(absl::string_view line, Tokens* tokens, bool by_bytes) {
#ifdef __SSE2__
  if (!by_bytes && TokenizeByMasks(line, tokens)) return;
  tokens->overflow = false;
#endif
  TokenizeBytes(line, tokens);
}

// The value of 8 ASCII digits at p, 8 at once (SWAR); false if any byte is not a digit.
inline bool EightDigits(const char* p, uint64_t* value) {
  uint64_t v;
  memcpy(&v, p, 8);
  // Each byte's high nibble is 3, and stays 3 after adding 6: '0'..'9'.
  if (((v & 0xF0F0F0F0F0F0F0F0) | (((v + 0x0606060606060606) & 0xF0F0F0F0F0F0F0F0) >> 4)) !=
      0x3333333333333333) {
    return false;
  }
  v -= 0x3030303030303030;
  v = v * 10 + (v >> 8);  // pairs of digits
  v = ((v & 0x000000FF000000FF) * (100 + (uint64_t{1000000} << 32)) +
       ((v >> 16) & 0x000000FF000000FF) * (1 + (uint64_t{10000} << 32))) >>
      32;
  *value = v;
  return true;
}

// The value (mod 2^64) of the decimal digits [p, p + n); false on any other byte.
inline bool ParseDigits(const char* p, size_t n, uint64_t* value) {
  uint64_t result = 0;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t eight = 0;
    if (!EightDigits(p, &eight)) return false;
    result = result * 100000000 + eight;
  }
  for (; n > 0; ++p, --n) {
    const unsigned digit = static_cast<unsigned>(*p - '0');
    if (digit > 9) return false;
    result = result * 10 + digit;
  }
  *value = result;
  return true;
}

// Decimal integer with an optional sign; no other characters. Up to 19 digits; their value is
// taken modulo 2^64, as two's complement arithmetic always gave it.
inline bool ParseInt(absl::string_view text, int64_t* value) {
  if (text.empty() || text.size() > 19) return false;
  const bool negative = text[0] == '-';
  if (negative && text.size() == 1) return false;
  uint64_t result = 0;
  if (!ParseDigits(text.data() + negative, text.size() - negative, &result)) return false;
  *value = static_cast<int64_t>(negative ? 0 - result : result);
  return true;
}

// Plain decimals whose digits, read as an integer, are at most 2^53 ("1742250331.001000", most
// times and sizes of a log): that integer and the power of ten are both exact doubles, so one
// division is the correctly rounded value SimpleAtod returns. False (nothing set) otherwise.
bool ParseShortDecimal(absl::string_view text, double* value) {
  static constexpr double kPowersOfTen[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,
                                            1e7,  1e8,  1e9,  1e10, 1e11, 1e12, 1e13,
                                            1e14, 1e15, 1e16, 1e17, 1e18};
  static constexpr uint64_t kIntegerPowersOfTen[] = {1,
                                                     10,
                                                     100,
                                                     1000,
                                                     10000,
                                                     100000,
                                                     1000000,
                                                     10000000,
                                                     100000000,
                                                     1000000000,
                                                     10000000000,
                                                     100000000000,
                                                     1000000000000,
                                                     10000000000000,
                                                     100000000000000,
                                                     1000000000000000,
                                                     10000000000000000,
                                                     100000000000000000,
                                                     1000000000000000000};
  constexpr uint64_t kMaxExact = uint64_t{1} << 53;
  if (text.empty()) return false;
  const bool negative = text[0] == '-';
  const char* p = text.data() + negative;
  const size_t n = text.size() - negative;
  // "<integer digits>[.<fraction digits>]", both non-empty, at most 18 digits in all.
  const char* dot = FindByte(p, p + n, '.');
  if (dot == p + n) dot = nullptr;
  const size_t integer_digits = dot == nullptr ? n : static_cast<size_t>(dot - p);
  const size_t fraction = dot == nullptr ? 0 : n - integer_digits - 1;
  if (integer_digits == 0 || (dot != nullptr && fraction == 0) || integer_digits + fraction > 18)
    return false;  // "", "-", ".5", "5.", too many digits
  uint64_t integer = 0, decimals = 0;
  if (!ParseDigits(p, integer_digits, &integer) ||
      (fraction > 0 && !ParseDigits(dot + 1, fraction, &decimals))) {
    return false;
  }
  const uint64_t digits = integer * kIntegerPowersOfTen[fraction] + decimals;
  if (digits > kMaxExact) return false;
  const double magnitude = static_cast<double>(digits) / kPowersOfTen[fraction];
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

ABSL_ATTRIBUTE_NOINLINE absl::Status TooFewTokens(const Tokens& t, int n,
                                                  absl::string_view record) {
  return absl::InvalidArgumentError(
      absl::StrCat(record, " record has ", t.count, " fields, expected at least ", n));
}

// Inline: checked on nearly every line, and an error is rare.
inline absl::Status NeedTokens(const Tokens& t, int n, absl::string_view record) {
  if (ABSL_PREDICT_FALSE(t.count < n)) return TooFewTokens(t, n, record);
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
  if (Equals(verb, "CONNECTION")) {
    if (absl::Status s = NeedTokens(t, 6, "WORKER CONNECTION"); !s.ok()) return s;
    r->kind = TxnKind::kWorkerConnection;
    r->address = t.token(5);
  } else if (Equals(verb, "DISCONNECTION")) {
    if (absl::Status s = NeedTokens(t, 6, "WORKER DISCONNECTION"); !s.ok()) return s;
    r->kind = TxnKind::kWorkerDisconnection;
    r->word = t.token(5);
  } else if (Equals(verb, "RESOURCES")) {
    if (absl::Status s = NeedTokens(t, 6, "WORKER RESOURCES"); !s.ok()) return s;
    r->kind = TxnKind::kWorkerResources;
    r->json = t.token(5);
    if (!IsJson(r->json)) return Bad("WORKER RESOURCES without a JSON object");
  } else if (Equals(verb, "TRANSFER")) {
    if (absl::Status s = NeedTokens(t, 9, "WORKER TRANSFER"); !s.ok()) return s;
    r->kind = TxnKind::kWorkerTransfer;
    r->word = t.token(5);
    if (!Equals(r->word, "INPUT") && !Equals(r->word, "OUTPUT"))
      return Bad("TRANSFER direction is not INPUT/OUTPUT");
    r->file = t.token(6);
    return ParseTransferNumbers(t, 7, r);
  } else if (Equals(verb, "CACHE_UPDATE")) {
    if (absl::Status s = NeedTokens(t, 8, "WORKER CACHE_UPDATE"); !s.ok()) return s;
    r->kind = TxnKind::kWorkerCacheUpdate;
    r->file = t.token(5);
    return ParseTransferNumbers(t, 6, r);
  } else if (t.count >= 6 &&
             (Equals(t.token(5), "CONNECTION") || Equals(t.token(5), "DISCONNECTION"))) {
    // Work Queue: WORKER <id> <host:port>  CONNECTION | DISCONNECTION <reason>
    r->address = t.token(4);
    if (Equals(t.token(5), "CONNECTION")) {
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
  if (Equals(state, "READY") || Equals(state, "WAITING")) {
    // <category (may contain spaces)> FIRST_RESOURCES|MAX_RESOURCES [attempt] {json}
    int label = -1;
    for (int i = 6; i < t.count; ++i) {
      if (Equals(t.token(i), "FIRST_RESOURCES") || Equals(t.token(i), "MAX_RESOURCES")) {
        label = i;
        break;
      }
    }
    if (label < 0) return Bad("READY record without FIRST_RESOURCES/MAX_RESOURCES");
    r->kind = TxnKind::kTaskReady;
    r->category = Span(t, 5, label - 1);
    r->max_resources = Equals(t.token(label), "MAX_RESOURCES");
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
  } else if (Equals(state, "RUNNING")) {
    if (absl::Status s = NeedTokens(t, 6, "TASK RUNNING"); !s.ok()) return s;
    r->kind = TxnKind::kTaskRunning;
    r->worker = t.token(5);
    if (t.count > 6) r->max_resources = Equals(t.token(6), "MAX_RESOURCES");
    if (t.count > 7) {
      if (!IsJson(t.token(7))) return Bad("RUNNING record without a JSON allocation");
      r->json = t.token(7);
    }
  } else if (Equals(state, "WAITING_RETRIEVAL")) {
    if (absl::Status s = NeedTokens(t, 6, "TASK WAITING_RETRIEVAL"); !s.ok()) return s;
    r->kind = TxnKind::kTaskWaitingRetrieval;
    r->worker = t.token(5);
  } else if (Equals(state, "RETRIEVED")) {
    r->kind = TxnKind::kTaskRetrieved;
    return ParseResultAndExit(t, r, "TASK RETRIEVED");
  } else if (Equals(state, "DONE")) {
    r->kind = TxnKind::kTaskDone;
    return ParseResultAndExit(t, r, "TASK DONE");
  } else {
    // Other states some versions log (7.5's CANCELED, INITIAL); anything else is not a record.
    if (!Equals(state, "CANCELED") && !Equals(state, "CANCELLED") && !Equals(state, "INITIAL") &&
        !Equals(state, "UNKNOWN")) {
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
  const absl::string_view verb = (Equals(t.token(3), "START") || Equals(t.token(3), "END"))
                                     ? t.token(3)
                                 : t.count > 4 ? t.token(4)
                                               : absl::string_view();
  if (Equals(verb, "START")) {
    record->kind = TxnKind::kManagerStart;
  } else if (Equals(verb, "END")) {
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
  if (!Equals(record->word, "INPUT") && !Equals(record->word, "OUTPUT"))
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

// Every field back to its default, one store each: assigning a fresh TxnRecord (or copying a
// constant one) became `rep stos`, ~10 ns per line (#25).
void ClearRecord(TxnRecord* r) {
  r->kind = TxnKind::kBlankOrComment;
  r->time_us = 0;
  r->manager_pid = 0;
  r->task_id = 0;
  r->attempt = 0;
  r->exit_code = 0;
  r->max_resources = false;
  r->bytes = 0;
  r->wall_seconds = 0;
  r->start_us = 0;
  // One store each: a chained assignment read the last field back while its stores were in
  // flight (a store-forwarding stall).
  r->worker = absl::string_view();
  r->address = absl::string_view();
  r->category = absl::string_view();
  r->word = absl::string_view();
  r->file = absl::string_view();
  r->json = absl::string_view();
  r->json2 = absl::string_view();
}

}  // namespace

namespace internal {
absl::Status JsonError(const char* what) { return absl::InvalidArgumentError(what); }
}  // namespace internal

bool ParseJsonNumber(absl::string_view text, double* value) {
  const char* end = text.data() + text.size();
  int64_t integer = 0;
  if (FindByte(text.data(), end, '.') != end) {  // a decimal: not an integer, no need to try
    if (!ParseDouble(text, value)) return false;
  } else if (ParseInt(text, &integer)) {  // most values are integers: no float parsing
    *value = static_cast<double>(integer);
  } else if (!ParseDouble(text, value)) {
    return false;
  }
  return std::isfinite(*value) && std::fabs(*value) <= 1e30;
}

namespace {

// ParseTransactionLine, its fields found by the byte loop (by_bytes) or from masks.
absl::Status ParseLine(absl::string_view line, TxnRecord* record, bool by_bytes) {
  ClearRecord(record);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
    line.remove_suffix(1);
  }
  size_t first = 0;
  while (first < line.size() && (line[first] == ' ' || line[first] == '\t')) ++first;
  if (first == line.size() || line[first] == '#') return absl::OkStatus();  // blank or comment

  Tokens t;
  Tokenize(line, &t, by_bytes);
  if (t.count < 3) return Bad("fewer than 3 fields (time, manager pid, subject)");
  if (!ParseInt(t.token(0), &record->time_us) || record->time_us < 0 ||
      record->time_us > kMaxTimeUs) {
    return Bad("time is not an integer of microseconds between 0 and the year 2096");
  }
  if (!ParseInt(t.token(1), &record->manager_pid)) return Bad("manager pid is not an integer");
  const absl::string_view subject = t.token(2);
  if (Equals(subject, "TASK")) {
    if (t.overflow) return Bad("TASK record has too many fields");
    return ParseTask(t, record);
  }
  if (Equals(subject, "APPLICATION")) {
    record->kind = TxnKind::kApplication;
    record->file = line.substr(static_cast<size_t>(subject.data() + subject.size() - line.data()));
    while (!record->file.empty() && record->file.front() == ' ') record->file.remove_prefix(1);
    return absl::OkStatus();
  }
  if (t.overflow) return Bad("record has too many fields");
  if (Equals(subject, "WORKER")) return ParseWorker(t, record);
  if (Equals(subject, "MANAGER")) return ParseManager(t, record);
  if (Equals(subject, "CATEGORY")) {
    if (t.count < 5) return Bad("CATEGORY record has fewer than 5 fields");
    record->kind = TxnKind::kCategory;
    record->category = t.token(3);
    record->word = t.token(4);
    return absl::OkStatus();
  }
  if (Equals(subject, "LIBRARY")) {
    if (absl::Status s = NeedTokens(t, 6, "LIBRARY"); !s.ok()) return s;
    if (!ParseInt(t.token(3), &record->task_id)) return Bad("LIBRARY id is not an integer");
    record->kind = TxnKind::kLibrary;
    record->word = t.token(4);
    record->worker = t.token(5);
    return absl::OkStatus();
  }
  if (Equals(subject, "TRANSFER")) return ParseWorkQueueTransfer(t, record);
  return absl::InvalidArgumentError(absl::StrCat("unknown subject '", subject, "'"));
}

}  // namespace

absl::Status ParseTransactionLine(absl::string_view line, TxnRecord* record) {
  return ParseLine(line, record, /*by_bytes=*/false);
}

namespace internal {
absl::Status ParseTransactionLineByBytes(absl::string_view line, TxnRecord* record) {
  return ParseLine(line, record, /*by_bytes=*/true);
}
}  // namespace internal

}  // namespace taskvine
}  // namespace roastcoffea
