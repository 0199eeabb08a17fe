// The parts of the findings rules that do not read the chunk records one by one: the text
// helpers evidence is written with, the finding builder, and the rules over aggregated metrics,
// warnings and host facts. Internal to //aggregation: findings.cc runs them with its chunk
// rules, and the test-only findings_reference.cc runs the same ones with its straightforward
// chunk rules, so that only the chunk rules are compared.
//
// Thread-safety: pure functions; a Builder belongs to one computation.
#ifndef ROASTCOFFEA_AGGREGATION_FINDINGS_RULES_H_
#define ROASTCOFFEA_AGGREGATION_FINDINGS_RULES_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "aggregation/chunk_columns.h"
#include "aggregation/findings.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace findings_rules {

using Severity = v1::Finding::Severity;

// Evidence is read by people: percentages without false precision, durations with three
// significant digits (the tables' style), so 141.6 ms reads "142 ms", not "0.1 s".
std::string Pct(double fraction);
std::string ThreeDigits(double value, absl::string_view unit);
std::string Seconds(double seconds);
std::string Bytes(double bytes);
// "1 chunk", "3 chunks".
std::string Count(int64_t n, absl::string_view one, absl::string_view many);
absl::string_view BaseName(absl::string_view path);

// The worker slot a chunk ran on: threadpool workers name their thread already; an engine
// worker with a thread index gets it appended.
std::string Slot(const v1::ChunkRecord& chunk);
// What names a chunk to a reader: its file's base name, else the engine task that ran it (a
// TaskVine task without file metadata), else its uuid.
std::string ChunkName(const v1::ChunkRecord& chunk);
// "file.root [0, 25000) (dataset, on worker)"; "task 45 (on worker)" without a file.
std::string DescribeChunk(const v1::ChunkRecord& chunk);
// A total order on records, so that ties name the same chunk whatever the input order.
bool Before(const v1::ChunkRecord& a, const v1::ChunkRecord& c);
// At most about `max_bytes` of `text`: its head and tail around " ... " (an error's cause is
// often at its end), cut on UTF-8 character boundaries.
std::string ElideMiddle(const std::string& text, size_t max_bytes);
double Median(std::vector<double> values);

// Appends findings to a list, and (when given a second list) records for each rule whether it
// was evaluated: a rule whose inputs were not measured says so with NotEvaluated, so that "no
// finding" can mean "checked and clear" (RuleEvaluation in schema/measurement.proto).
class Builder {
 public:
  explicit Builder(std::vector<v1::Finding>* out,
                   std::vector<v1::RuleEvaluation>* evaluations = nullptr)
      : out_(out), evaluations_(evaluations) {}

  // Rule `code` was checked (its inputs were measured), whether or not it fired. Recording the
  // same code twice keeps the first record.
  void Evaluated(absl::string_view code) { Record(code, true, ""); }
  // Rule `code` could not be checked; `reason` is one short phrase ("no chunk records").
  void NotEvaluated(absl::string_view code, absl::string_view reason) {
    Record(code, false, reason);
  }

  // Whether a finding with `code` was added so far (rules run in order: an earlier rule's).
  bool Fired(absl::string_view code) const { return Find(code) != nullptr; }
  // The finding with `code` added so far, or null.
  const v1::Finding* Find(absl::string_view code) const {
    for (const v1::Finding& f : *out_) {
      if (f.code() == code) return &f;
    }
    return nullptr;
  }
  v1::Finding* FindMutable(absl::string_view code) {
    return const_cast<v1::Finding*>(std::as_const(*this).Find(code));
  }

  v1::Finding& Add(Severity severity, absl::string_view code, std::string title,
                   std::string evidence, std::string suggestion) {
    v1::Finding& finding = out_->emplace_back();
    finding.set_severity(severity);
    finding.set_code(std::string(code));
    finding.set_title(std::move(title));
    finding.set_evidence(std::move(evidence));
    finding.set_suggestion(std::move(suggestion));
    return finding;
  }

 private:
  void Record(absl::string_view code, bool evaluated, absl::string_view reason) {
    if (evaluations_ == nullptr) return;
    for (const v1::RuleEvaluation& e : *evaluations_) {
      if (e.code() == code) return;
    }
    v1::RuleEvaluation& e = evaluations_->emplace_back();
    e.set_code(std::string(code));
    e.set_evaluated(evaluated);
    e.set_reason(std::string(reason));
  }

  std::vector<v1::Finding>* out_;
  std::vector<v1::RuleEvaluation>* evaluations_;
};

void Number(v1::Finding& finding, absl::string_view key, double value, absl::string_view unit);
const v1::Warning* FindWarning(const FindingsInputs& in, absl::string_view code);
bool InProcess(const FindingsInputs& in);
// The configuration's "backend" ("threadpool", "workqueue", ...), else the measurement's
// backend; "" when neither is recorded.
std::string ConfiguredBackend(const FindingsInputs& in);
// Worker threads of an in-process run (each tracked thread is one core), when known.
std::optional<double> InProcessThreads(const FindingsInputs& in);

// The rules that read no chunk record one by one (in.metrics is set).
void CpuStarvation(const FindingsInputs& in, Builder& b);
void IoBound(const FindingsInputs& in, Builder& b);
void EngineOverhead(const FindingsInputs& in, Builder& b);
void ReadAmplificationRule(const FindingsInputs& in, Builder& b);
void DataLost(const FindingsInputs& in, Builder& b);
void MemoryPressure(const FindingsInputs& in, Builder& b);
// MemoryPressure's reading of the tracking: the sample with the largest share of its worker's
// memory limit (the first of equal ones) and the largest spill. Big runs read it on a second
// thread while the chunk rules run.
struct MemoryScan {
  double share = 0, memory = 0, limit = 0;
  std::string worker;
  bool limit_known = false;
  double spilled = 0;
  bool spill_known = false;

  // Takes the worker's samples into share, memory, limit, worker and limit_known.
  void Scan(const v1::WorkerSeries& series);
};
MemoryScan ScanMemory(const FindingsInputs& in);
// MemoryPressure from a scan made by ScanMemory(in).
void MemoryPressure(const FindingsInputs& in, const MemoryScan& scan, Builder& b);
void DebugBuild(const FindingsInputs& in, Builder& b);

// The stragglers finding, once a rule has chosen them: `named` are the slowest chunks to name
// (slowest first, each >= kStragglerRatio x the median), `stragglers` how many successful
// chunks reached that ratio, `median_bytes` the successful chunks' median compressed bytes read
// and `median_events` returns their median events (0: not recorded; called only when needed).
// The cause of each named chunk is read from its own record (CPU, run-queue wait, blocked =
// wall - CPU - run-queue wait, bytes read, attempt), and the advice follows the dominant cause.
void AddStragglers(const std::vector<const v1::ChunkRecord*>& named, int64_t stragglers,
                   size_t successful, double max, double median, double median_bytes,
                   const std::function<double()>& median_events, Builder& b);
// The entries of the largest file the records read: the largest entry_stop of a record with a
// file (entry ranges count from a file's first entry); 0 when none has a file.
int64_t LargestFileEntries(const std::vector<const v1::ChunkRecord*>& records);
// The tiny_chunks suggestion: a chunk of `target` seconds, at most a whole file
// (`largest_file_entries`, 0 when unknown), with the knob of the run's backend (the
// configuration's "backend" and "chunks_per_task").
// On Work Queue, chunks per task stay at most `chunks` / (4 x `slots`), so that every worker
// slot still gets several tasks to balance the end of the run.
std::string TinyChunksSuggestion(const FindingsInputs& in, double median_events, double target,
                                 double median_seconds, int64_t largest_file_entries, size_t chunks,
                                 size_t slots);

// Whether a chunk's run-queue wait can be its own thread's: CPU + wait within its wall time
// (5 % and 1 ms of slack for clocks read a moment apart). A larger wait counted other threads'
// (aggregation/invariants.cc warns invalid_share); the rules then take it as not measured, so
// that no share above 100 % and no cost longer than the run is printed.
bool PlausibleWait(double duration_seconds, double cpu_seconds, double run_queue_wait_seconds);
// The chunk's run-queue wait when its record measured one that is plausible (above), else
// nullopt.
std::optional<double> PlausibleRunQueueWait(const v1::ChunkRecord& chunk);
// The same from the record's fields (`measured`: run_queue_wait_seconds set).
std::optional<double> PlausibleRunQueueWait(bool measured, double duration_seconds,
                                            double cpu_seconds, double run_queue_wait_seconds);

// The fields a record's load over CPUs is read from (findings_contention.h).
struct LoadFields {
  bool has_machine_load = false, has_machine_cpus = false, has_run_queue_wait = false;
  double machine_load = 0, machine_cpus = 0, run_queue_wait_seconds = 0;
  double cpu_seconds = 0, duration_seconds = 0;
};
LoadFields LoadFieldsOf(const v1::ChunkRecord& chunk);

// The fields the rules read of every record, from the records or from a table's columns (so
// that a table's records are not built for them); a record read whole (a retry named, a tie) is
// built when first read.
class ChunkReader {
 public:
  explicit ChunkReader(const FindingsInputs& in)
      : records_(in.chunks), table_(in.chunks == nullptr ? in.chunk_table : nullptr) {
    if (table_ != nullptr) table_records_ = std::make_unique<TableRecords>(table_);
  }
  size_t size() const {
    if (records_ != nullptr) return static_cast<size_t>(records_->size());
    return table_ != nullptr ? table_->size() : 0;
  }
  const v1::ChunkRecord& record(size_t i) const {
    return records_ != nullptr ? records_->Get(static_cast<int>(i)) : table_records_->Get(i);
  }
  absl::string_view task_id(size_t i) const {
    return table_ != nullptr ? table_->String(chunk_field::kTaskId, i) : At(i).task_id();
  }
  absl::string_view worker(size_t i) const {
    return table_ != nullptr ? table_->String(chunk_field::kWorker, i) : At(i).worker();
  }
  std::optional<int64_t> ready_unix_ns(size_t i) const {
    if (table_ != nullptr) {
      if (!table_->HasOptional(chunk_field::kReadyUnixNs, i)) return std::nullopt;
      return table_->Int(chunk_field::kReadyUnixNs, i);
    }
    if (!At(i).has_ready_unix_ns()) return std::nullopt;
    return At(i).ready_unix_ns();
  }
  double duration_seconds(size_t i) const {
    return table_ != nullptr ? table_->duration_seconds(i) : At(i).duration_seconds();
  }
  int64_t start_unix_ns(size_t i) const {
    return table_ != nullptr ? table_->start_unix_ns(i) : At(i).start_unix_ns();
  }
  uint32_t attempt(size_t i) const {
    return table_ != nullptr ? table_->attempt(i) : At(i).attempt();
  }
  bool failed(size_t i) const {
    return (table_ != nullptr ? table_->status(i) : static_cast<int32_t>(At(i).status())) ==
           v1::CHUNK_STATUS_FAILED;
  }
  int64_t end_unix_ns(size_t i) const {
    return table_ != nullptr ? table_->end_unix_ns(i) : At(i).end_unix_ns();
  }
  int64_t compressed_bytes_read(size_t i) const {
    return table_ != nullptr ? table_->Int(chunk_field::kCompressedBytesRead, i)
                             : At(i).compressed_bytes_read();
  }
  int64_t events(size_t i) const {
    return table_ != nullptr ? table_->Int(chunk_field::kEvents, i) : At(i).events();
  }
  // What the CPU contention rules read (findings_contention.h).
  LoadFields load_fields(size_t i) const {
    if (table_ == nullptr) return LoadFieldsOf(At(i));
    using namespace chunk_field;  // NOLINT(build/namespaces): the field names read as columns
    LoadFields f;
    f.has_machine_load = table_->HasOptional(kMachineLoad, i);
    f.has_machine_cpus = table_->HasOptional(kMachineCpus, i);
    f.has_run_queue_wait = table_->HasOptional(kRunQueueWaitSeconds, i);
    f.machine_load = table_->Double(kMachineLoad, i);
    f.machine_cpus = table_->Double(kMachineCpus, i);
    f.run_queue_wait_seconds = table_->Double(kRunQueueWaitSeconds, i);
    f.cpu_seconds = table_->Double(kCpuSeconds, i);
    f.duration_seconds = table_->duration_seconds(i);
    return f;
  }
  std::optional<double> plausible_run_queue_wait(size_t i) const {
    if (table_ == nullptr) return PlausibleRunQueueWait(At(i));
    return PlausibleRunQueueWait(table_->HasOptional(chunk_field::kRunQueueWaitSeconds, i),
                                 table_->duration_seconds(i),
                                 table_->Double(chunk_field::kCpuSeconds, i),
                                 table_->Double(chunk_field::kRunQueueWaitSeconds, i));
  }

 private:
  const v1::ChunkRecord& At(size_t i) const { return records_->Get(static_cast<int>(i)); }
  const google::protobuf::RepeatedPtrField<v1::ChunkRecord>* records_;
  const ChunkTable* table_;  // read only without records_
  std::unique_ptr<TableRecords> table_records_;
};

// load_imbalance's measure of a chunk's work on its slot: its wall time less its wait for a CPU
// (`run_queue_wait`, 0 when not measured; not subtracted when not plausible). On a loaded machine
// the slot whose chunks waited longest for a CPU would otherwise look busiest, blaming the work's
// spread for the contention (cpu_starvation and cpu_contention report that wait).
double ImbalanceWork(double duration_seconds, double cpu_seconds, double run_queue_wait_seconds);
// "Chunk time per slot: busiest " ("Chunk time less its wait for a CPU, ..." when `waited`).
std::string ImbalanceEvidencePrefix(bool waited);
// "" when every slot ran one chunk at a time; else how slots that ran up to `concurrent` chunks
// at once were counted (as that many slots: their chunk time over it).
std::string ConcurrentNote(size_t concurrent);
// The load_imbalance advice. Worker threads of one process (`in_process`) take the next chunk
// when free and cannot join late; engine workers can (`churn`: they did, and it is accounted).
// It points to the idle tail and stragglers findings only where they fired (`b`).
std::string ImbalanceSuggestion(bool in_process, bool churn, const Builder& b);

// Most severe first; equal severities keep the order the rules added them in.
void SortBySeverity(std::vector<v1::Finding>& findings);

}  // namespace findings_rules
}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_FINDINGS_RULES_H_
