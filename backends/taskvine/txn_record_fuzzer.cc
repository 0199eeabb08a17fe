// Fuzz target of the log line parsers: every input is split into lines and fed to the
// transactions-line parser (and its JSON payloads to ForEachJsonNumber), to a performance-log
// header + rows, and to a RunModel whose derived views are then computed. Nothing may crash,
// hang or trip a sanitizer, whatever the bytes; and the transactions-line parser's fast field
// scan must agree with its byte-at-a-time reference.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "backends/taskvine/perf_log.h"
#include "backends/taskvine/run_model.h"
#include "backends/taskvine/txn_record.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roastcoffea::taskvine;
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  RunModel model;
  RunModel perf_model;
  int64_t number = 0;
  size_t start = 0;
  while (start <= input.size()) {
    size_t end = input.find('\n', start);
    const bool last = end == absl::string_view::npos;
    if (last) end = input.size();
    const absl::string_view line = input.substr(start, end - start);
    ++number;
    TxnRecord record, reference;
    const absl::Status status = ParseTransactionLine(line, &record);
    // The 64-byte mask scan must find the fields the byte loop finds.
    const absl::Status reference_status = internal::ParseTransactionLineByBytes(line, &reference);
    if (status != reference_status || record.kind != reference.kind ||
        record.time_us != reference.time_us || record.task_id != reference.task_id ||
        record.worker.data() != reference.worker.data() ||
        record.worker.size() != reference.worker.size() ||
        record.category.size() != reference.category.size() ||
        record.word.data() != reference.word.data() ||
        record.json.size() != reference.json.size() ||
        record.json2.data() != reference.json2.data()) {
      __builtin_trap();
    }
    if (status.ok()) {
      double sum = 0;
      auto visit = [&sum](absl::string_view key, double value) { sum += value + key.size(); };
      (void)ForEachJsonNumber(record.json, visit);
      (void)ForEachJsonNumber(record.json2, visit);
    }
    if (last) {
      model.ConsumePartialLastLine("transactions", line, number);
      perf_model.ConsumePartialLastLine("performance", line, number);
      break;
    }
    model.ConsumeTransactionLine(line, number);
    perf_model.ConsumePerformanceLine(line, number);
    start = end + 1;
  }
  (void)model.Figures();
  (void)model.PerWorker();
  (void)model.PerCategory();
  (void)model.Tracking();
  for (const std::string& category : model.categories()) (void)model.ChunkRecords(category);
  (void)model.Warnings();
  (void)perf_model.Tracking();
  (void)perf_model.Warnings();
  return 0;
}
