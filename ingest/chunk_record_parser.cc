#include "ingest/chunk_record_parser.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <system_error>

#include "absl/strings/charconv.h"
#include "ingest/json_tree.h"

namespace roastcoffea {
namespace ingest_internal {
namespace {

// Nesting the parser follows: the record is level 1. Far below kMaxJsonDepth, so that a record
// it accepts never trips the depth limit of the array around it.
constexpr int kMaxDepth = 8;
// Keys of one object compared one by one up to this many, then hashed (as JsonTree).
constexpr size_t kLinearKeys = 16;

// Doubles that hold 10^k exactly.
constexpr double kExactPowersOfTen[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                        1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                        1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
constexpr int kMaxExactPower = 22;
constexpr uint64_t kMaxExactMantissa = uint64_t{1} << 53;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// What JsonTree takes into a number token: a token of these that goes on past JSON's grammar
// is declined, as JsonTree reads the whole run.
bool IsNumberCharacter(char c) {
  return IsDigit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' || c == 'x';
}

// The bytes of `word` (8 bytes read little-endian) that end a plain run of a string: a quote,
// a backslash, or a byte with its high bit set, as the high bit of each. Exact up to the first
// such byte (bytes above it may be flagged too), which is all the caller uses.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the first byte is the lowest");
uint64_t PlainRunEnds(uint64_t word) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHighs = 0x8080808080808080ull;
  const uint64_t quotes = word ^ (kOnes * '"');
  const uint64_t backslashes = word ^ (kOnes * '\\');
  return (word | ((quotes - kOnes) & ~quotes) | ((backslashes - kOnes) & ~backslashes)) & kHighs;
}

uint32_t Load32(const char* p) {
  uint32_t word;
  std::memcpy(&word, p, sizeof(word));
  return word;
}

uint64_t Load64(const char* p) {
  uint64_t word;
  std::memcpy(&word, p, sizeof(word));
  return word;
}

// a[0, n) == b[0, n) for n >= 4, in a few loads of words, none beyond n (memcmp of a size not
// known at compile time is a call, for a key compared millions of times).
bool SameBytes(const char* a, const char* b, size_t n) {
  if (n < 8) return Load32(a) == Load32(b) && Load32(a + n - 4) == Load32(b + n - 4);
  for (size_t i = 0; i + 8 < n; i += 8) {
    if (Load64(a + i) != Load64(b + i)) return false;
  }
  return Load64(a + n - 8) == Load64(b + n - 8);
}

}  // namespace

size_t DirectRecordParser::Parse(absl::string_view text, RecordMembers* members) {
  begin_ = text.data();
  p_ = begin_;
  end_ = begin_ + text.size();
  members->Clear();
  other_keys_.clear();
  if (!At('{') || !Record(members)) return 0;
  return static_cast<size_t>(p_ - begin_);
}

inline bool DirectRecordParser::OpenedEmpty(char close) {
  ++p_;
  SkipSpace();
  if (!At(close)) return false;
  ++p_;
  return true;
}

inline DirectRecordParser::After DirectRecordParser::AfterElement(char close) {
  SkipSpace();
  if (At(',')) {
    ++p_;
    SkipSpace();
    return After::kMore;
  }
  if (!At(close)) return After::kBad;
  ++p_;
  return After::kDone;
}

bool DirectRecordParser::Record(RecordMembers* members) {
  if (OpenedEmpty('}')) return true;
  uint32_t seen = 0;  // the RecordKeys met, to refuse a repeated one
  for (size_t member = 0;; ++member) {
    absl::string_view key;
    RecordKey k;
    if (!Key(member, &k, &key)) return false;
    SkipSpace();
    if (!At(':')) return false;
    ++p_;
    SkipSpace();
    if (k == kRecordKeyCount) {
      if (other_keys_.size() >= kLinearKeys) return false;
      for (absl::string_view other : other_keys_) {
        if (other == key) return false;
      }
      other_keys_.push_back(key);
      JsonScalar ignored;
      if (!Value(1, &ignored)) return false;
    } else {
      if ((seen >> k) & 1) return false;
      seen |= uint32_t{1} << k;
      JsonScalar& field = members->fields[k];
      if (At('{') && (k == kTiming || k == kMemory || k == kBytes || k == kFileMetadata)) {
        if (!(k == kFileMetadata ? RestValue(1, members)
                                 : Entries(&members->sections[k - kTiming]))) {
          return false;
        }
        field.kind = JsonNode::Kind::kObject;
      } else if (At('[') && k == kAccessedBranches) {
        if (!RestValue(0, members)) return false;
        field.kind = JsonNode::Kind::kList;
      } else if (!Value(1, &field)) {
        return false;
      }
    }
    const After next = AfterElement('}');
    if (next != After::kMore) return next == After::kDone;
  }
}

bool DirectRecordParser::RestValue(int which, RecordMembers* members) {
  uint64_t* const id = which == 0 ? &members->branches_id : &members->file_metadata_id;
  const size_t available = static_cast<size_t>(end_ - p_);
  for (const RememberedValue& known : remembered_[which]) {
    // A JSON list or object ends at its closing bracket: the same bytes are the same value.
    const size_t size = known.text.size();
    if (size == 0 || size > available || std::memcmp(p_, known.text.data(), size) != 0) continue;
    p_ += size;
    if (which == 0) {
      members->branches = known.items;
    } else {
      members->file_metadata = known.entries;
    }
    *id = known.id;
    return true;
  }
  const char* const start = p_;
  if (which == 0 ? !Items(2, &members->branches) : !Entries(&members->file_metadata)) return false;
  const size_t size = static_cast<size_t>(p_ - start);
  if (size > kMaxRememberedText) return true;  // id 0: not remembered
  RememberedValue& slot = remembered_[which][next_remembered_[which]];
  next_remembered_[which] = (next_remembered_[which] + 1) % kRememberedValues;
  slot.text.assign(start, size);
  // The parsed views moved into `slot.text`: same offsets from its start.
  const auto rebase = [&slot, start](absl::string_view* view) {
    if (!view->empty())
      *view = absl::string_view(slot.text.data() + (view->data() - start), view->size());
  };
  if (which == 0) {
    slot.items = members->branches;
    for (JsonScalar& item : slot.items) rebase(&item.text);
  } else {
    slot.entries = members->file_metadata;
    for (NamedScalar& entry : slot.entries) {
      rebase(&entry.name);
      rebase(&entry.value.text);
    }
  }
  slot.id = ++last_id_;
  *id = slot.id;
  return true;
}

// The key of the record's member number `member`: a RecordKey, or kRecordKeyCount and its
// `name`.
inline bool DirectRecordParser::Key(size_t member, RecordKey* key, absl::string_view* name) {
  if (member < kRememberedKeys && last_keys_[member] != kRecordKeyCount) {
    // The key at this place in the last record, quotes included, without a scan.
    const absl::string_view expected = last_names_[member];
    const size_t size = expected.size();
    if (static_cast<size_t>(end_ - p_) >= size + 2 && p_[0] == '"' && p_[size + 1] == '"' &&
        SameBytes(p_ + 1, expected.data(), size)) {
      p_ += size + 2;
      *key = last_keys_[member];
      return true;
    }
  }
  if (!At('"') || !String(name)) return false;
  *key = FindRecordKey(*name);
  if (member < kRememberedKeys) {
    last_keys_[member] = *key;
    if (*key != kRecordKeyCount) last_names_[member] = RecordKeyName(*key);
  }
  return true;
}

// A {name: value} object one level into the record; its values are not objects.
bool DirectRecordParser::Entries(std::vector<NamedScalar>* entries) {
  if (OpenedEmpty('}')) return true;
  while (true) {
    NamedScalar entry;
    if (!At('"') || !String(&entry.name)) return false;
    // A repeated name is JsonTree's error.
    if (entries->size() < kLinearKeys) {
      for (const NamedScalar& other : *entries) {
        if (other.name == entry.name) return false;
      }
      if (entries->size() + 1 == kLinearKeys) {
        many_keys_.clear();
        for (const NamedScalar& other : *entries) many_keys_.insert(other.name);
        many_keys_.insert(entry.name);
      }
    } else if (!many_keys_.insert(entry.name).second) {
      return false;
    }
    SkipSpace();
    if (!At(':')) return false;
    ++p_;
    SkipSpace();
    if (!Value(2, &entry.value)) return false;
    entries->push_back(entry);
    const After next = AfterElement('}');
    if (next != After::kMore) return next == After::kDone;
  }
}

// A list at `depth`; its items go to `items` when it is given.
bool DirectRecordParser::Items(int depth, std::vector<JsonScalar>* items) {
  if (OpenedEmpty(']')) return true;
  while (true) {
    JsonScalar item;
    if (!Value(depth, &item)) return false;
    if (items != nullptr) items->push_back(item);
    const After next = AfterElement(']');
    if (next != After::kMore) return next == After::kDone;
    if (At(']')) return false;  // a trailing comma: JsonTree's leniency, not ours
  }
}

// A value inside an object or list at `depth`.
inline bool DirectRecordParser::Value(int depth, JsonScalar* value) {
  if (p_ >= end_) return false;
  switch (*p_) {
    case '"':
      value->kind = JsonNode::Kind::kString;
      return String(&value->text);
    case 't':
      value->kind = JsonNode::Kind::kBool;
      return Literal("true");
    case 'f':
      value->kind = JsonNode::Kind::kBool;
      return Literal("false");
    case 'n':
      value->kind = JsonNode::Kind::kNull;
      return Literal("null");
    case '[':
      if (depth + 1 > kMaxDepth) return false;
      value->kind = JsonNode::Kind::kList;
      return Items(depth + 1, nullptr);
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
      value->kind = JsonNode::Kind::kNumber;
      return Number(&value->number);
    default:
      return false;
  }
}

bool DirectRecordParser::String(absl::string_view* text) {
  const char* const start = p_ + 1;
  const char* q = start;
  while (true) {
    // Plain ASCII eight bytes at a time, up to the byte that ends the run.
    bool found = false;
    for (; q + 8 <= end_; q += 8) {
      uint64_t word;
      std::memcpy(&word, q, sizeof(word));
      if (const uint64_t ends = PlainRunEnds(word); ends != 0) {
        q += __builtin_ctzll(ends) / 8;
        found = true;
        break;
      }
    }
    if (!found) {  // the last bytes of the input
      while (q < end_ && *q != '"' && *q != '\\' && static_cast<unsigned char>(*q) < 0x80) ++q;
    }
    if (q >= end_) return false;
    if (*q == '"') break;
    if (*q == '\\') return false;  // an escape: JsonTree's
    const size_t length = Utf8SequenceLength(absl::string_view(begin_, end_ - begin_),
                                             static_cast<size_t>(q - begin_));
    if (length == 0) return false;
    q += length;
  }
  *text = absl::string_view(start, static_cast<size_t>(q - start));
  p_ = q + 1;
  return true;
}

bool DirectRecordParser::Literal(absl::string_view token) {
  if (static_cast<size_t>(end_ - p_) < token.size() ||
      std::memcmp(p_, token.data(), token.size()) != 0) {
    return false;
  }
  p_ += token.size();
  return true;
}

// As JsonTree::Parser::Number for a token in JSON's grammar: an integer of up to 15 digits
// exactly, other numbers correctly rounded (a product or quotient of exact doubles when that is
// exact, else absl::from_chars).
bool DirectRecordParser::Number(double* value) {
  const char* const start = p_;
  const char* q = p_;
  const bool negative = *q == '-';
  if (negative) ++q;
  if (q >= end_ || !IsDigit(*q)) return false;
  uint64_t mantissa = 0;
  int digits = 0;
  if (*q == '0') {
    ++q;
    digits = 1;
  } else {
    for (; q < end_ && IsDigit(*q); ++q, ++digits) {
      if (digits < 19) mantissa = mantissa * 10 + static_cast<uint64_t>(*q - '0');
    }
  }
  bool floating = false;
  int fraction_digits = 0;
  if (q < end_ && *q == '.') {
    floating = true;
    ++q;
    for (; q < end_ && IsDigit(*q); ++q, ++digits, ++fraction_digits) {
      if (digits < 19) mantissa = mantissa * 10 + static_cast<uint64_t>(*q - '0');
    }
    if (fraction_digits == 0) return false;
  }
  int exponent = 0;
  if (q < end_ && (*q == 'e' || *q == 'E')) {
    floating = true;
    ++q;
    bool negative_exponent = false;
    if (q < end_ && (*q == '+' || *q == '-')) negative_exponent = *q++ == '-';
    const char* const exponent_start = q;
    for (; q < end_ && IsDigit(*q); ++q) {
      if (exponent < 100000) exponent = exponent * 10 + (*q - '0');
    }
    if (q == exponent_start) return false;
    if (negative_exponent) exponent = -exponent;
  }
  // The token must end here (with the data still going on).
  if (q >= end_ || IsNumberCharacter(*q)) return false;
  p_ = q;
  if (!floating && digits <= 15) {
    const double n = static_cast<double>(mantissa);
    *value = negative ? -n : n;
    return true;
  }
  const int power = exponent - fraction_digits;
  if (floating && digits <= 19 && mantissa <= kMaxExactMantissa && power >= -kMaxExactPower &&
      power <= kMaxExactPower) {
    const double m = static_cast<double>(mantissa);
    const double n = power >= 0 ? m * kExactPowersOfTen[power] : m / kExactPowersOfTen[-power];
    *value = negative ? -n : n;
    return true;
  }
  const absl::from_chars_result result = absl::from_chars(start, q, *value);
  return result.ec == std::errc() && result.ptr == q && std::isfinite(*value);
}

}  // namespace ingest_internal
}  // namespace roastcoffea
