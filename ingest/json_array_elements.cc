#include "ingest/json_array_elements.h"

#include "absl/strings/str_cat.h"
#include "io/untrusted_json.h"

namespace roastcoffea {
namespace ingest_internal {

absl::Status ArrayElements::Broken(absl::string_view what, int64_t at) const {
  return absl::InvalidArgumentError(
      absl::StrCat(source_, ": not valid JSON: ", what, " at byte ", at));
}

absl::Status ArrayElements::TooDeep(int64_t at) const {
  return absl::InvalidArgumentError(
      absl::StrCat(source_, ": nested too deep: more than ", kMaxJsonDepth,
                   " levels of arrays and objects (at byte ", at, ")"));
}

absl::Status ArrayElements::CutShort(absl::Status error, int64_t at) {
  // A read error or a cancellation is not the input ending.
  if (read_status_.ok()) cut_short_at_ = at;
  return error;
}

absl::StatusOr<bool> ArrayElements::ToNextElement() {
  if (done_) return false;
  bool have = Peek();
  if (!read_status_.ok()) return read_status_;
  if (after_element_) {
    if (have && data_[pos_] == ']') return Close();
    if (!have) return CutShort(StructureError("expected ',' or ']'", 1), offset());
    if (data_[pos_] != ',') return StructureError("expected ',' or ']'", 1);
    ++pos_;
    // "[1,]": as SplitJsonArray, the ']' is where a value was expected.
    have = Peek();
    if (!read_status_.ok()) return read_status_;
  } else if (have && data_[pos_] == ']') {
    return Close();  // "[]"
  }
  if (!have) return CutShort(StructureError("expected a value", 1), offset());
  return true;
}

absl::StatusOr<absl::string_view> ArrayElements::SkimElement() {
  absl::StatusOr<size_t> end = SkimValue();
  if (!end.ok()) return end.status();
  const absl::string_view element = data_.substr(pos_, *end - pos_);
  pos_ = *end;
  after_element_ = true;
  return element;
}

bool ArrayElements::More() {
  if (eof_) return false;
  if (cancelled_ != nullptr && *cancelled_ && (*cancelled_)()) {
    read_status_ = absl::CancelledError("cancelled");
    eof_ = true;
    return false;
  }
  buffer_.erase(0, pos_);
  base_ += static_cast<int64_t>(pos_);
  pos_ = 0;
  // At least as much as is kept: a record larger than a piece is rescanned O(log) times.
  absl::StatusOr<size_t> count = refill_(std::max(piece_bytes_, buffer_.size()), &buffer_);
  data_ = buffer_;
  if (!count.ok()) {
    read_status_ = count.status();
    eof_ = true;
    return false;
  }
  if (*count == 0) eof_ = true;
  return *count > 0;
}

absl::StatusOr<size_t> ArrayElements::SkimValue() {
  while (true) {
    const char first = data_[pos_];
    int64_t unterminated_at = -1;  // of the string the input ends in
    if (first == '"') {
      const size_t end = SkipString(pos_);
      if (end != absl::string_view::npos) return end;
      unterminated_at = offset();
    } else if (first == '[' || first == '{') {
      int depth = 0;
      for (size_t j = pos_; j < data_.size(); ++j) {
        const char c = data_[j];
        if (c == '"') {
          const size_t end = SkipString(j);
          if (end == absl::string_view::npos) {
            unterminated_at = base_ + static_cast<int64_t>(j);
            break;
          }
          j = end - 1;
        } else if (c == '[' || c == '{') {
          // The array itself is the first level.
          if (++depth + 1 > kMaxJsonDepth) return TooDeep(base_ + static_cast<int64_t>(j));
        } else if (c == ']' || c == '}') {
          if (--depth == 0) return j + 1;
        }
      }
    } else {
      size_t j = pos_;
      while (j < data_.size()) {
        const char c = data_[j];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ']' || c == '}') {
          break;
        }
        ++j;
      }
      if (j < data_.size() || eof_) {
        if (j == pos_) return StructureError("expected a value", 1);
        return j;
      }
    }
    const int64_t start = offset();
    if (More()) continue;  // rescans the element with more input
    if (!read_status_.ok()) return read_status_;
    // A scalar token ends with the input (eof_ is set now).
    if (first != '"' && first != '[' && first != '{') continue;
    if (unterminated_at >= 0)
      return CutShort(Broken("unterminated string", unterminated_at), start);
    return CutShort(Broken("unclosed bracket", start), start);
  }
}

absl::StatusOr<bool> ArrayElements::Close() {
  ++pos_;
  done_ = true;
  const bool more = Peek();
  if (!read_status_.ok()) return read_status_;
  if (more) return StructureError("unexpected text after the array", 0);
  return false;
}

absl::Status ArrayElements::StructureError(absl::string_view what, int depth) {
  const int64_t at = offset();
  do {
    for (; pos_ < data_.size(); ++pos_) {
      const char c = data_[pos_];
      if (c == '"') {
        const size_t end = SkipString(pos_);
        if (end == absl::string_view::npos) break;  // More() keeps it and reads on
        pos_ = end - 1;
      } else if (c == '[' || c == '{') {
        if (++depth > kMaxJsonDepth) return TooDeep(offset());
      } else if (c == ']' || c == '}') {
        depth = std::max(0, depth - 1);
      }
    }
  } while (More());
  if (!read_status_.ok()) return read_status_;
  return Broken(what, at);
}

}  // namespace ingest_internal
}  // namespace roastcoffea
