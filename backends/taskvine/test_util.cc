#include "backends/taskvine/test_util.h"

#include <zlib.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace roastcoffea {
namespace taskvine {

absl::Status ReadWholeFile(const std::string& path, std::string* contents) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  contents->clear();
  char buffer[1 << 16];
  int n;
  while ((n = gzread(file, buffer, sizeof(buffer))) > 0) contents->append(buffer, n);
  gzclose(file);
  if (n < 0) return absl::DataLossError(absl::StrCat("cannot read ", path));
  return absl::OkStatus();
}

absl::Status FeedFile(const std::string& path, bool performance, RunModel* model) {
  std::string contents;
  if (absl::Status s = ReadWholeFile(path, &contents); !s.ok()) return s;
  int64_t number = 0;
  absl::string_view rest = contents;
  while (!rest.empty()) {
    const size_t newline = rest.find('\n');
    ++number;
    if (newline == absl::string_view::npos) {
      model->ConsumePartialLastLine(performance ? "performance" : "transactions", rest, number);
      break;
    }
    const absl::string_view line = rest.substr(0, newline);
    if (performance) {
      model->ConsumePerformanceLine(line, number);
    } else {
      model->ConsumeTransactionLine(line, number);
    }
    rest.remove_prefix(newline + 1);
  }
  return absl::OkStatus();
}

}  // namespace taskvine
}  // namespace roastcoffea
