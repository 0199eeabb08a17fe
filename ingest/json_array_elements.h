// Internal to //ingest:coffea_json: the elements of a top-level JSON array, one at a time.
#ifndef ROASTCOFFEA_INGEST_JSON_ARRAY_ELEMENTS_H_
#define ROASTCOFFEA_INGEST_JSON_ARRAY_ELEMENTS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace roastcoffea {
namespace ingest_internal {

// The elements of a top-level JSON array, one at a time, from text in memory or from a file
// read as it goes (then memory is one piece of the file, or one record if it is larger). Only
// strings and brackets are followed to find an element (as io/untrusted_json.h's
// SplitJsonArray); its depth is checked on the way, and a structural error is reported after
// the rest of the input is checked for depth (as SplitJsonArray, which checks depth first).
// A caller that reads an element in place instead must end it where SkimElement would.
class ArrayElements {
 public:
  // Appends at most `max_bytes` more input to `out`: how many (0 at the end).
  using Refill = std::function<absl::StatusOr<size_t>(size_t max_bytes, std::string* out)>;

  ArrayElements(absl::string_view source, absl::string_view text)
      : source_(source), data_(text), eof_(true) {}
  ArrayElements(absl::string_view source, Refill refill, size_t piece_bytes,
                const std::function<bool()>* cancelled)
      : source_(source),
        refill_(std::move(refill)),
        piece_bytes_(std::max<size_t>(1, piece_bytes)),
        cancelled_(cancelled) {}

  // Consumes the '['; false when the input does not start with one (after whitespace and a
  // UTF-8 byte order mark, which is skipped: skipped_bom()).
  absl::StatusOr<bool> Open() {
    while (data_.size() - pos_ < kBom.size() && More()) {
    }
    if (data_.substr(pos_, kBom.size()) == kBom) {
      pos_ += kBom.size();
      skipped_bom_ = true;
    }
    if (!Peek()) {
      if (!read_status_.ok()) return read_status_;
      return false;
    }
    if (data_[pos_] != '[') return false;
    ++pos_;
    return true;
  }

  // The elements one by one: ToNextElement moves to the start of the next element (true), or
  // past the end of the array (false; an error for text after it). Then the caller reads the
  // element in place (Available, Consume) or has it found (SkimElement). Cancelled when
  // `cancelled` said so while reading.
  absl::StatusOr<bool> ToNextElement();
  // From the element's start to the end of the input in memory (valid until the next call).
  absl::string_view Available() const { return data_.substr(pos_); }
  // The caller has read the element: its first `length` bytes of Available().
  void Consume(size_t length) {
    pos_ += length;
    after_element_ = true;
  }
  // The element's text (valid until the next call), found by following strings and brackets
  // (reading more input).
  absl::StatusOr<absl::string_view> SkimElement();

  // Bytes consumed so far.
  int64_t offset() const { return base_ + static_cast<int64_t>(pos_); }

  // After an error of ToNextElement or SkimElement: when it was the input ending inside the
  // array (a file cut short while written), the offset of the incomplete element (or of the
  // end); -1 for any other error.
  int64_t cut_short_at() const { return cut_short_at_; }
  // Whether Open skipped a UTF-8 byte order mark.
  bool skipped_bom() const { return skipped_bom_; }

  static constexpr absl::string_view kBom = "\xEF\xBB\xBF";

 private:
  absl::Status Broken(absl::string_view what, int64_t at) const;
  absl::Status TooDeep(int64_t at) const;
  // `error`, noted as the input ending inside the array at `at` (unless it is not that).
  absl::Status CutShort(absl::Status error, int64_t at);

  // Keeps data_[pos_..] and appends more input; false at its end, or on an error or a
  // cancellation (then in read_status_).
  bool More();

  // Skips whitespace; false at the end of the input.
  bool Peek() {
    while (true) {
      while (pos_ < data_.size()) {
        const char c = data_[pos_];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return true;
        ++pos_;
      }
      if (!More()) return false;
    }
  }

  // The end of the value at data_[pos_]: a string, a bracketed block, or a scalar token.
  absl::StatusOr<size_t> SkimValue();

  // Index just past the string at data_[i] == '"'; npos when the data ends first.
  size_t SkipString(size_t i) const {
    for (++i; i < data_.size(); ++i) {
      const char c = data_[i];
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        return i + 1;
      }
    }
    return absl::string_view::npos;
  }

  // After the closing ']': only whitespace may follow (then false: no more elements).
  absl::StatusOr<bool> Close();

  // `what` at pos_, unless the input from there on nests too deep (that error first, as
  // SplitJsonArray checks depth before structure); `depth` is the nesting at pos_.
  absl::Status StructureError(absl::string_view what, int depth);

  const absl::string_view source_;
  const Refill refill_;
  const size_t piece_bytes_ = 0;
  const std::function<bool()>* const cancelled_ = nullptr;
  std::string buffer_;
  absl::string_view data_;
  size_t pos_ = 0;
  int64_t base_ = 0;  // the input's offset of data_[0]
  bool eof_ = false;
  bool after_element_ = false;
  bool done_ = false;
  bool skipped_bom_ = false;
  int64_t cut_short_at_ = -1;
  absl::Status read_status_;
};

}  // namespace ingest_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INGEST_JSON_ARRAY_ELEMENTS_H_
