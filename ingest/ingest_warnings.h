// Internal to //ingest:coffea_json: the warnings one input file gives, at most
// kMaxWarningsPerFile of them and then a count of the rest.
#ifndef ROASTCOFFEA_INGEST_INGEST_WARNINGS_H_
#define ROASTCOFFEA_INGEST_INGEST_WARNINGS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ingest/coffea_json.h"
#include "io/untrusted_json.h"

namespace roastcoffea {
namespace ingest_internal {

// Collects a file's warnings, at most kMaxWarningsPerFile of them, then counts the rest.
class Warnings {
 public:
  explicit Warnings(std::vector<std::string>* out) : out_(out) {}
  Warnings(const Warnings&) = delete;
  Warnings& operator=(const Warnings&) = delete;
  ~Warnings() = default;

  void Add(std::string warning) {
    if (out_->size() < static_cast<size_t>(kMaxWarningsPerFile)) {
      out_->push_back(std::move(warning));
    } else {
      ++left_out_;
    }
  }
  // A value left out for `status` (whose message names the source and key).
  void LeftOut(const absl::Status& status) {
    Add(absl::StrCat(status.message(), "; the value is left out"));
  }
  void NonFinite(absl::string_view where, const std::vector<NonFiniteToken>& tokens) {
    for (const NonFiniteToken& token : tokens) {
      Add(absl::StrCat(where, ": '", token.key, "' is ", token.token, "; the value is left out"));
    }
  }
  void Finish(absl::string_view source) {
    if (left_out_ > 0) {
      out_->push_back(absl::StrCat(source, ": ", left_out_, " more problems like these"));
    }
  }

 private:
  std::vector<std::string>* out_;
  int64_t left_out_ = 0;
};

// Whether llround(number) is defined: 2^63 itself (the double nearest INT64_MAX) is not.
inline bool InInt64(double number) {
  return number >= -9223372036854775808.0 && number < 9223372036854775808.0;
}

}  // namespace ingest_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INGEST_INGEST_WARNINGS_H_
