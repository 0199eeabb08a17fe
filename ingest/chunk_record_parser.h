// Internal to //ingest:coffea_json: the direct parser of one chunk record. A record as the
// original's instrumentation writes it (strict JSON, plain strings) is read in one pass straight
// into RecordMembers, its strings viewed where they are: no tree, no copy, no allocation once the
// scratch vectors have grown. Anything else it declines, and the caller reads that record with
// JsonTree (ingest/json_tree.h), which gives the same members, or the error and its offset.
//
// What it accepts is a subset of what JsonTree accepts, read the same way (the same numbers to
// the last bit, the same repeated-key and UTF-8 rules):
// - an object of "key": value members, no trailing comma, whitespace " \t\n\r";
// - strings in double quotes without a backslash, well-formed UTF-8;
// - numbers in JSON's grammar (-?int[.frac][e[+-]exp]), true, false, null;
// - lists of those (and of lists, 8 levels in all);
// - objects only as `timing`, `memory`, `bytes` and `file_metadata`, without objects in them.
// It declines NaN and Infinity (ReplaceNonFiniteTokens is the caller's), escapes, single
// quotes, bare keys, and any error, so that the slow path gives its exact message.
#ifndef ROASTCOFFEA_INGEST_CHUNK_RECORD_PARSER_H_
#define ROASTCOFFEA_INGEST_CHUNK_RECORD_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "ingest/chunk_record_reader.h"

namespace roastcoffea {
namespace ingest_internal {

class DirectRecordParser {
 public:
  DirectRecordParser() {
    for (RecordKey& key : last_keys_) key = kRecordKeyCount;
  }

  // Parses the record object at the start of `text` (text[0] == '{') into `members`, which
  // views `text`. The record's length, or 0 when the parser declines it (also when `text` ends
  // inside it): `members` is then unspecified.
  size_t Parse(absl::string_view text, RecordMembers* members);

 private:
  // Past an object's or a list's opening character and the space after it; then, when the next
  // character is `close` (an empty object or list), past it too, and true.
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool OpenedEmpty(char close);
  // After an object's member or a list's item: kMore past a ',' and the space after it, kDone
  // past the closing `close`, kBad at anything else.
  enum class After { kMore, kDone, kBad };
  ABSL_ATTRIBUTE_ALWAYS_INLINE After AfterElement(char close);
  bool Record(RecordMembers* members);
  // `accessed_branches` (which 0) as a list or `file_metadata` (1) as an object, at p_, into
  // `members` with its id: remembered when its text was met recently, else parsed.
  ABSL_ATTRIBUTE_NOINLINE bool RestValue(int which, RecordMembers* members);
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool Key(size_t member, RecordKey* key, absl::string_view* name);
  bool Entries(std::vector<NamedScalar>* entries);
  bool Items(int depth, std::vector<JsonScalar>* items);
  // Inlined where called (millions of times), as are the three above.
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool Value(int depth, JsonScalar* value);
  bool String(absl::string_view* text);
  bool Number(double* value);
  bool Literal(absl::string_view token);
  void SkipSpace() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\t' || *p_ == '\r')) ++p_;
  }
  bool At(char c) const { return p_ < end_ && *p_ == c; }

  const char* begin_ = nullptr;
  const char* p_ = nullptr;
  const char* end_ = nullptr;
  // Scratch, reused: the record's keys that are not read, and one object's keys when many.
  std::vector<absl::string_view> other_keys_;
  // The keys of the last record, in order (kRecordKeyCount: one not read): the next record most
  // likely has the same, and a key that is there is compared, not scanned and looked up.
  static constexpr size_t kRememberedKeys = 32;
  RecordKey last_keys_[kRememberedKeys];
  absl::string_view last_names_[kRememberedKeys];  // RecordKeyName of each, when read
  absl::flat_hash_set<absl::string_view> many_keys_;
  // Recent texts of `accessed_branches` and `file_metadata` (by `which`), parsed, with their
  // ids: the chunks of one file repeat them, compared then instead of parsed again.
  struct RememberedValue {
    std::string text;
    std::vector<NamedScalar> entries;  // file_metadata's, viewing `text`
    std::vector<JsonScalar> items;     // accessed_branches', viewing `text`
    uint64_t id = 0;
  };
  static constexpr size_t kRememberedValues = 8;
  static constexpr size_t kMaxRememberedText = 16384;
  RememberedValue remembered_[2][kRememberedValues];
  size_t next_remembered_[2] = {0, 0};  // the entry to replace next, round robin
  uint64_t last_id_ = 0;
};

}  // namespace ingest_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INGEST_CHUNK_RECORD_PARSER_H_
