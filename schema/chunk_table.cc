#include "schema/chunk_table.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/coded_stream.h"

namespace roastcoffea {
namespace {

using Record = v1::ChunkRecord;

// Each column's field of v1::ChunkRecord: its getter, setter and (optional fields) presence,
// as plain functions (gcc's -Wmaybe-uninitialized misreads calls through member pointers).
template <typename T>
struct Field {
  T (*get)(const Record&);
  void (*set)(Record*, T);
  bool (*has)(const Record&);
};

#define ROASTCOFFEA_FIELD(name)                                                                    \
  {                                                                                                \
    [](const Record& r) { return r.name(); }, [](Record* r, auto value) { r->set_##name(value); }, \
        nullptr                                                                                    \
  }
#define ROASTCOFFEA_OPTIONAL_FIELD(name)                                                           \
  {                                                                                                \
    [](const Record& r) { return r.name(); }, [](Record* r, auto value) { r->set_##name(value); }, \
        [](const Record& r) { return r.has_##name(); }                                             \
  }

constexpr Field<int64_t> kIntFields[chunk_field::kIntCount] = {
    ROASTCOFFEA_FIELD(entry_start),
    ROASTCOFFEA_FIELD(entry_stop),
    ROASTCOFFEA_FIELD(events),
    ROASTCOFFEA_FIELD(start_unix_ns),
    ROASTCOFFEA_FIELD(end_unix_ns),
    ROASTCOFFEA_FIELD(memory_before_bytes),
    ROASTCOFFEA_FIELD(memory_after_bytes),
    ROASTCOFFEA_FIELD(memory_peak_bytes),
    ROASTCOFFEA_FIELD(compressed_bytes_read),
    ROASTCOFFEA_FIELD(uncompressed_bytes_read),
    ROASTCOFFEA_FIELD(thread_index),
    ROASTCOFFEA_FIELD(accessed_bytes),
    ROASTCOFFEA_FIELD(accessed_uncompressed_bytes),
    ROASTCOFFEA_FIELD(dropped_slices),
    ROASTCOFFEA_OPTIONAL_FIELD(allocated_bytes),
    ROASTCOFFEA_OPTIONAL_FIELD(peak_live_bytes),
    ROASTCOFFEA_OPTIONAL_FIELD(file_bytes),
    ROASTCOFFEA_OPTIONAL_FIELD(ready_unix_ns),
};

constexpr Field<double> kDoubleFields[chunk_field::kDoubleCount] = {
    ROASTCOFFEA_FIELD(duration_seconds),
    ROASTCOFFEA_FIELD(cpu_seconds),
    ROASTCOFFEA_FIELD(branches_read_percent),
    ROASTCOFFEA_FIELD(bytes_read_percent),
    ROASTCOFFEA_OPTIONAL_FIELD(run_queue_wait_seconds),
    ROASTCOFFEA_OPTIONAL_FIELD(machine_load),
    ROASTCOFFEA_OPTIONAL_FIELD(machine_cpus),
};

#undef ROASTCOFFEA_FIELD
#undef ROASTCOFFEA_OPTIONAL_FIELD

using StringGetter = const std::string& (*)(const Record&);
constexpr StringGetter kStringGetters[chunk_field::kStringCount] = {
    [](const Record& r) -> const std::string& { return r.dataset(); },
    [](const Record& r) -> const std::string& { return r.file(); },
    [](const Record& r) -> const std::string& { return r.uuid(); },
    [](const Record& r) -> const std::string& { return r.worker(); },
    [](const Record& r) -> const std::string& { return r.task_id(); },
    [](const Record& r) -> const std::string& { return r.error_text(); },
};

// (Protobuf's string setters are templates: no member pointers to them.)
void SetString(chunk_field::String field, absl::string_view text, Record* record) {
  switch (field) {
    case chunk_field::kDataset:
      return record->set_dataset(text.data(), text.size());
    case chunk_field::kFile:
      return record->set_file(text.data(), text.size());
    case chunk_field::kUuid:
      return record->set_uuid(text.data(), text.size());
    case chunk_field::kWorker:
      return record->set_worker(text.data(), text.size());
    case chunk_field::kTaskId:
      return record->set_task_id(text.data(), text.size());
    default:
      return record->set_error_text(text.data(), text.size());
  }
}

// The fields of v1::ChunkRecord the columns hold; any other field set goes to the remainder.
bool IsColumnField(int number) {
  switch (number) {
    case Record::kAccessedBranchesFieldNumber:
    case Record::kFileMetadataFieldNumber:
    case Record::kSlicesFieldNumber:
    case Record::kRetriedTaskIdsFieldNumber:
      return false;
    default:
      return number >= 1 && number <= Record::kReadyUnixNsFieldNumber;
  }
}

// The fields of `descriptor` that `is_column` rejects, found once: a record's presence check
// then asks only about them (ListFields per record allocated and dominated Append).
std::vector<const google::protobuf::FieldDescriptor*> OtherFields(
    const google::protobuf::Descriptor* descriptor, bool (*is_column)(int number)) {
  std::vector<const google::protobuf::FieldDescriptor*> others;
  for (int i = 0; i < descriptor->field_count(); ++i) {
    if (!is_column(descriptor->field(i)->number())) others.push_back(descriptor->field(i));
  }
  return others;
}

// Whether `message` sets one of `fields` or has unknown fields.
bool SetsAnyOf(const google::protobuf::Message& message,
               const std::vector<const google::protobuf::FieldDescriptor*>& fields) {
  const google::protobuf::Reflection* reflection = message.GetReflection();
  if (!reflection->GetUnknownFields(message).empty()) return true;
  for (const google::protobuf::FieldDescriptor* field : fields) {
    if (field->is_repeated() ? reflection->FieldSize(message, field) > 0
                             : reflection->HasField(message, field)) {
      return true;
    }
  }
  return false;
}

bool IsColumnSectionField(int number) {
  return number >= 1 && number <= v1::SectionRecord::kBytesReadFieldNumber &&
         number != v1::SectionRecord::kAllocatedBytesFieldNumber &&
         number != v1::SectionRecord::kPeakLiveBytesFieldNumber;
}

// A section the columns hold whole: nothing set beyond name, kind, entries and the four values.
bool IsColumnSection(const v1::SectionRecord& section) {
  static const auto* const kOthers = new std::vector<const google::protobuf::FieldDescriptor*>(
      OtherFields(v1::SectionRecord::descriptor(), IsColumnSectionField));
  return !SetsAnyOf(section, *kOthers);
}

// Whether `record` sets anything outside the columns (sections included).
bool NeedsRest(const Record& record) {
  static const auto* const kOthers = new std::vector<const google::protobuf::FieldDescriptor*>(
      OtherFields(Record::descriptor(), IsColumnField));
  if (SetsAnyOf(record, *kOthers)) return true;
  for (const v1::SectionRecord& section : record.sections()) {
    if (!IsColumnSection(section)) return true;
  }
  return false;
}

void AddSectionRows(const Record& record, std::vector<SectionRow>* rows) {
  rows->reserve(rows->size() + static_cast<size_t>(record.sections_size()));
  for (const v1::SectionRecord& section : record.sections()) {
    SectionRow& row = rows->emplace_back();
    row.name = section.name();
    row.kind = section.kind();
    row.entries = section.entries();
    row.duration_seconds = section.duration_seconds();
    row.cpu_seconds = section.cpu_seconds();
    row.memory_delta_bytes = section.memory_delta_bytes();
    row.bytes_read = section.bytes_read();
  }
}

}  // namespace

void ChunkRow::Clear() {
  std::fill(std::begin(ints), std::end(ints), 0);
  std::fill(std::begin(doubles), std::end(doubles), 0.0);
  present = 0;
  status = 0;
  attempt = 0;
  for (absl::string_view& text : strings) text = absl::string_view();
  sections.clear();
  if (has_rest) rest.Clear();
  has_rest = false;
  rest_bytes = absl::string_view();
}

void ChunkRow::ToRecord(v1::ChunkRecord* record) const {
  record->Clear();
  for (int f = 0; f < chunk_field::kIntCount; ++f) {
    if (f < chunk_field::kFirstOptionalInt || HasOptional(static_cast<chunk_field::Int>(f))) {
      kIntFields[f].set(record, ints[f]);
    }
  }
  for (int f = 0; f < chunk_field::kDoubleCount; ++f) {
    if (f < chunk_field::kFirstOptionalDouble || HasOptional(static_cast<chunk_field::Double>(f))) {
      kDoubleFields[f].set(record, doubles[f]);
    }
  }
  for (int f = 0; f < chunk_field::kStringCount; ++f) {
    if (!strings[f].empty()) SetString(static_cast<chunk_field::String>(f), strings[f], record);
  }
  record->set_status(static_cast<v1::ChunkStatus>(status));
  record->set_attempt(attempt);
  record->mutable_sections()->Reserve(static_cast<int>(sections.size()));
  for (const SectionRow& row : sections) {
    v1::SectionRecord* section = record->add_sections();
    section->set_name(row.name.data(), row.name.size());
    section->set_kind(static_cast<v1::SectionRecord::Kind>(row.kind));
    section->set_entries(row.entries);
    section->set_duration_seconds(row.duration_seconds);
    section->set_cpu_seconds(row.cpu_seconds);
    section->set_memory_delta_bytes(row.memory_delta_bytes);
    section->set_bytes_read(row.bytes_read);
  }
  if (has_rest && !rest_bytes.empty()) {
    // Bytes a ChunkRow's rest serialized to: they parse.
    static_cast<void>(record->MergeFromString(std::string(rest_bytes)));
  } else if (has_rest) {
    record->MergeFrom(rest);
  }
}

void ChunkRow::FromRecord(const v1::ChunkRecord& record) {
  Clear();
  for (int f = 0; f < chunk_field::kIntCount; ++f) {
    const Field<int64_t>& field = kIntFields[f];
    if (field.has != nullptr && !field.has(record)) continue;
    ints[f] = field.get(record);
    if (field.has != nullptr) present |= uint32_t{1} << (f - chunk_field::kFirstOptionalInt);
  }
  for (int f = 0; f < chunk_field::kDoubleCount; ++f) {
    const Field<double>& field = kDoubleFields[f];
    if (field.has != nullptr && !field.has(record)) continue;
    doubles[f] = field.get(record);
    if (field.has != nullptr)
      present |= uint32_t{1} << OptionalBit(static_cast<chunk_field::Double>(f));
  }
  for (int f = 0; f < chunk_field::kStringCount; ++f) strings[f] = kStringGetters[f](record);
  status = record.status();
  attempt = record.attempt();
  if (!NeedsRest(record)) {
    AddSectionRows(record, &sections);
    return;
  }
  // The rest: the record without its column fields. Sections that are not all column sections
  // stay here whole, in order.
  has_rest = true;
  rest = record;
  const google::protobuf::Reflection* reflection = rest.GetReflection();
  const google::protobuf::Descriptor* descriptor = rest.GetDescriptor();
  const bool sections_in_rest =
      !std::all_of(record.sections().begin(), record.sections().end(), IsColumnSection);
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = descriptor->field(i);
    if (!IsColumnField(field->number())) continue;
    if (field->number() == Record::kSectionsFieldNumber && sections_in_rest) continue;
    reflection->ClearField(&rest, field);
  }
  if (!sections_in_rest) AddSectionRows(record, &sections);
}

uint32_t ChunkTable::StringPool::Intern(absl::string_view text) {
  if (text.empty()) return 0;
  const auto it = ids_.find(text);
  if (it != ids_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(strings_.size());
  const std::string& kept = strings_.emplace_back(text);
  ids_.emplace(kept, id);
  return id;
}

size_t ChunkTable::StringPool::MemoryBytes() const {
  size_t bytes = ids_.capacity() * (sizeof(std::pair<absl::string_view, uint32_t>) + 1) +
                 strings_.size() * sizeof(std::string);
  for (const std::string& text : strings_) {
    if (text.capacity() > 15) bytes += text.capacity() + 1;  // beyond the small-string buffer
  }
  return bytes;
}

uint32_t ChunkTable::RestColumn::InternByAddress(absl::string_view bytes) {
  const size_t slot = (reinterpret_cast<uintptr_t>(bytes.data()) >> 4) % kAddressSlots;
  const uint32_t id = by_address_[slot];
  const absl::string_view known = pool_.Get(id);
  if (id != 0 && known.size() == bytes.size() &&
      std::memcmp(known.data(), bytes.data(), bytes.size()) == 0) {
    return id;
  }
  by_address_[slot] = pool_.Intern(bytes);
  return by_address_[slot];
}

void ChunkTable::RestColumn::DecideForm() {
  // Repeating remainders stay shared: an id per record and one copy each is their cheapest form.
  if ((pool_.size() - 1) * 2 <= non_empty_) return;
  for (size_t i = 0; i < ids_.size(); ++i) per_record_.Push(pool_.Get(ids_[i]));
  ids_ = Column<uint32_t>();
  pool_ = StringPool();
  shared_ = false;
}

template <typename Visit>
void ChunkTable::ForEachRecordColumn(Visit visit) {
  for (Column<int64_t>& column : ints_) visit(column);
  for (Column<double>& column : doubles_) visit(column);
  visit(present_);
  visit(status_);
  visit(attempt_);
  for (Column<uint32_t>& column : ids_) visit(column);
  for (StringColumn& column : per_record_) visit(column);
  visit(uuids_per_record_);
  visit(section_ends_);
  visit(sections_in_rest_);
  visit(rest_);
}

template <typename Visit>
void ChunkTable::ForEachSectionColumn(Visit visit) {
  visit(section_names_);
  visit(section_kinds_);
  visit(section_entries_);
  visit(section_durations_);
  visit(section_cpu_);
  visit(section_memory_);
  visit(section_bytes_);
}

// Sections are not reserved: their count per record is not known ahead.
void ChunkTable::Reserve(size_t records) {
  ForEachRecordColumn([records](auto& column) { column.Reserve(records); });
}

void ChunkTable::ShrinkToFit() {
  ForEachRecordColumn([](auto& column) { column.ShrinkToFit(); });
  ForEachSectionColumn([](auto& column) { column.ShrinkToFit(); });
}

void ChunkTable::Append(const v1::ChunkRecord& record) {
  scratch_.FromRecord(record);
  Append(scratch_);
}

void ChunkTable::Append(const ChunkRow& row) {
  for (int f = 0; f < chunk_field::kIntCount; ++f) ints_[f].Push(row.ints[f]);
  for (int f = 0; f < chunk_field::kDoubleCount; ++f) doubles_[f].Push(row.doubles[f]);
  present_.Push(static_cast<uint8_t>(row.present));
  status_.Push(row.status);
  attempt_.Push(row.attempt);
  for (int f = 0; f < chunk_field::kFirstPerRecordString; ++f) {
    if (f == chunk_field::kUuid && !uuids_interned_) {
      uuids_per_record_.Push(row.strings[f]);
    } else {
      ids_[f].Push(pool_.Intern(row.strings[f], &last_ids_[f]));
    }
  }
  for (int f = chunk_field::kFirstPerRecordString; f < chunk_field::kStringCount; ++f) {
    per_record_[f - chunk_field::kFirstPerRecordString].Push(row.strings[f]);
  }
  for (size_t s = 0; s < row.sections.size(); ++s) {
    const SectionRow& section = row.sections[s];
    section_names_.Push(s < kCachedSectionNames
                            ? pool_.Intern(section.name, &last_section_names_[s])
                            : pool_.InternCached(section.name));
    section_kinds_.Push(section.kind);
    section_entries_.Push(section.entries);
    section_durations_.Push(section.duration_seconds);
    section_cpu_.Push(section.cpu_seconds);
    section_memory_.Push(section.memory_delta_bytes);
    section_bytes_.Push(section.bytes_read);
  }
  sections_ += row.sections.size();
  section_ends_.Push(sections_);
  if (row.has_rest && !row.rest_bytes.empty()) {
    rest_.Push(row.rest_bytes);
  } else if (row.has_rest) {
    serialized_.clear();
    row.rest.SerializeToString(&serialized_);
    rest_.Push(serialized_);
  } else {
    rest_.Push(absl::string_view());
  }
  sections_in_rest_.Push(row.has_rest && row.rest.sections_size() > 0 ? 1 : 0);
  ++size_;
  if (size_ == kAdaptiveCheckRecords && uuids_interned_) DecideUuidForm();
}

void ChunkTable::DecideUuidForm() {
  const Column<uint32_t>& uuids = ids_[chunk_field::kUuid];
  absl::flat_hash_set<uint32_t> distinct;
  for (size_t i = 0; i < size_; ++i) {
    if (uuids[i] != 0) distinct.insert(uuids[i]);
  }
  // Shared uuids (a file's chunks) stay interned: an id per record is their cheapest form.
  if (distinct.size() * 2 <= size_) return;
  for (size_t i = 0; i < size_; ++i) uuids_per_record_.Push(pool_.Get(uuids[i]));
  ids_[chunk_field::kUuid] = Column<uint32_t>();
  uuids_interned_ = false;
  RebuildPoolWithoutUuids();
}

void ChunkTable::RebuildPoolWithoutUuids() {
  constexpr uint32_t kUnmapped = ~uint32_t{0};
  StringPool pool;
  std::vector<uint32_t> new_ids(pool_.size(), kUnmapped);
  new_ids[0] = 0;
  const auto remap = [&](Column<uint32_t>& column) {
    for (size_t i = 0; i < column.size(); ++i) {
      const uint32_t id = column[i];
      if (id == 0) continue;
      if (new_ids[id] == kUnmapped) new_ids[id] = pool.Intern(pool_.Get(id));
      column.Set(i, new_ids[id]);
    }
  };
  for (int f = 0; f < chunk_field::kFirstPerRecordString; ++f) {
    if (f != chunk_field::kUuid) remap(ids_[f]);
  }
  remap(section_names_);
  pool_ = std::move(pool);
  // The one-entry caches viewed the old pool.
  for (StringPool::Last& last : last_ids_) last = StringPool::Last();
  for (StringPool::Last& last : last_section_names_) last = StringPool::Last();
}

void ChunkTable::SetInt(chunk_field::Int field, size_t i, int64_t value) {
  ints_[field].Set(i, value);
  if (field >= chunk_field::kFirstOptionalInt) {
    present_.Set(
        i, static_cast<uint8_t>(present_[i] | (1u << (field - chunk_field::kFirstOptionalInt))));
  }
}

void ChunkTable::SetDouble(chunk_field::Double field, size_t i, double value) {
  doubles_[field].Set(i, value);
  if (field >= chunk_field::kFirstOptionalDouble) {
    present_.Set(i, static_cast<uint8_t>(present_[i] | (1u << ChunkRow::OptionalBit(field))));
  }
}

void ChunkTable::ReplaceStrings(chunk_field::String field,
                                const absl::flat_hash_map<uint32_t, std::string>& texts) {
  if (texts.empty()) return;
  StringColumn& column = per_record_[field - chunk_field::kFirstPerRecordString];
  StringColumn replaced;
  replaced.Reserve(size_);
  for (size_t i = 0; i < size_; ++i) {
    const auto it = texts.find(static_cast<uint32_t>(i));
    replaced.Push(it == texts.end() ? column.Get(i) : absl::string_view(it->second));
  }
  column = std::move(replaced);
}

absl::string_view ChunkTable::String(chunk_field::String field, size_t i) const {
  if (field == chunk_field::kUuid && !uuids_interned_) return uuids_per_record_.Get(i);
  if (field < chunk_field::kFirstPerRecordString) return pool_.Get(ids_[field][i]);
  return per_record_[field - chunk_field::kFirstPerRecordString].Get(i);
}

SectionRow ChunkTable::Section(size_t s) const {
  SectionRow row;
  row.name = pool_.Get(section_names_[s]);
  row.kind = section_kinds_[s];
  row.entries = section_entries_[s];
  row.duration_seconds = section_durations_[s];
  row.cpu_seconds = section_cpu_[s];
  row.memory_delta_bytes = section_memory_[s];
  row.bytes_read = section_bytes_[s];
  return row;
}

void ChunkTable::ReadRow(size_t i, ChunkRow* row) const {
  // Every member is written below: no Clear() first.
  row->sections.clear();
  if (row->has_rest) row->rest.Clear();
  row->has_rest = false;
  row->rest_bytes = absl::string_view();
  for (int f = 0; f < chunk_field::kIntCount; ++f) row->ints[f] = ints_[f][i];
  for (int f = 0; f < chunk_field::kDoubleCount; ++f) row->doubles[f] = doubles_[f][i];
  row->present = present_[i];
  row->status = status_[i];
  row->attempt = attempt_[i];
  for (int f = 0; f < chunk_field::kStringCount; ++f)
    row->strings[f] = String(static_cast<chunk_field::String>(f), i);
  for (size_t s = SectionsBegin(i); s < SectionsEnd(i); ++s) row->sections.push_back(Section(s));
  const absl::string_view rest = rest_.Get(i);
  if (!rest.empty()) {
    // The bytes were serialized from a message of this type: they parse.
    row->has_rest = row->rest.ParseFromArray(rest.data(), static_cast<int>(rest.size()));
  }
}

// Straight from the columns, without a row between: only the fields the record has are set,
// strings copied once from their views, the sections reserved once.
void ChunkTable::ReadRecord(size_t i, v1::ChunkRecord* record) const {
  record->Clear();
  ReadIntoEmpty(i, record);
}

void ChunkTable::AppendRecordsTo(
    google::protobuf::RepeatedPtrField<v1::ChunkRecord>* records) const {
  records->Reserve(records->size() + static_cast<int>(size_));
  for (size_t i = 0; i < size_; ++i) ReadIntoEmpty(i, records->Add());
}

void ChunkTable::ReadIntoEmpty(size_t i, v1::ChunkRecord* record) const {
  const uint8_t present = present_[i];
  for (int f = 0; f < chunk_field::kIntCount; ++f) {
    const int64_t value = ints_[f][i];
    if (f < chunk_field::kFirstOptionalInt
            ? value != 0
            : ((present >> (f - chunk_field::kFirstOptionalInt)) & 1) != 0) {
      kIntFields[f].set(record, value);
    }
  }
  for (int f = 0; f < chunk_field::kDoubleCount; ++f) {
    const double value = doubles_[f][i];
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof(bits));  // -0.0 is kept: only +0.0 is the default
    if (f < chunk_field::kFirstOptionalDouble
            ? bits != 0
            : ((present >> ChunkRow::OptionalBit(static_cast<chunk_field::Double>(f))) & 1) != 0) {
      kDoubleFields[f].set(record, value);
    }
  }
  for (int f = 0; f < chunk_field::kFirstPerRecordString; ++f) {
    const absl::string_view text = String(static_cast<chunk_field::String>(f), i);
    if (!text.empty()) SetString(static_cast<chunk_field::String>(f), text, record);
  }
  for (int f = chunk_field::kFirstPerRecordString; f < chunk_field::kStringCount; ++f) {
    const absl::string_view text = per_record_[f - chunk_field::kFirstPerRecordString].Get(i);
    if (!text.empty()) SetString(static_cast<chunk_field::String>(f), text, record);
  }
  if (status_[i] != 0) record->set_status(static_cast<v1::ChunkStatus>(status_[i]));
  if (attempt_[i] != 0) record->set_attempt(attempt_[i]);
  const size_t begin = SectionsBegin(i);
  const size_t end = SectionsEnd(i);
  if (begin < end) {
    record->mutable_sections()->Reserve(static_cast<int>(end - begin));
    for (size_t s = begin; s < end; ++s) {
      v1::SectionRecord* section = record->add_sections();
      const absl::string_view name = pool_.Get(section_names_[s]);
      if (!name.empty()) section->set_name(name.data(), name.size());
      section->set_kind(static_cast<v1::SectionRecord::Kind>(section_kinds_[s]));
      section->set_entries(section_entries_[s]);
      section->set_duration_seconds(section_durations_[s]);
      section->set_cpu_seconds(section_cpu_[s]);
      section->set_memory_delta_bytes(section_memory_[s]);
      section->set_bytes_read(section_bytes_[s]);
    }
  }
  const absl::string_view rest = rest_.Get(i);
  if (!rest.empty()) {
    // Parsing merges: the rest's fields (none of the columns') join the record's.
    google::protobuf::io::CodedInputStream input(reinterpret_cast<const uint8_t*>(rest.data()),
                                                 static_cast<int>(rest.size()));
    record->MergeFromCodedStream(&input);
  }
}

v1::ChunkRecord ChunkTable::Record(size_t i) const {
  v1::ChunkRecord record;
  ReadRecord(i, &record);
  return record;
}

void ChunkTable::ForEachRecord(absl::FunctionRef<void(const v1::ChunkRecord&)> fn) const {
  v1::ChunkRecord record;
  for (size_t i = 0; i < size_; ++i) {
    ReadRecord(i, &record);
    fn(record);
  }
}

ChunkTable ChunkTable::Filtered(absl::FunctionRef<bool(size_t)> keep) const {
  ChunkTable kept;
  ChunkRow row;
  for (size_t i = 0; i < size_; ++i) {
    if (!keep(i)) continue;
    ReadRow(i, &row);
    kept.Append(row);
  }
  return kept;
}

size_t ChunkTable::MemoryBytes() const {
  size_t bytes = pool_.MemoryBytes() + present_.MemoryBytes() + status_.MemoryBytes() +
                 attempt_.MemoryBytes() + section_ends_.MemoryBytes() + rest_.MemoryBytes() +
                 sections_in_rest_.MemoryBytes() + section_names_.MemoryBytes() +
                 section_kinds_.MemoryBytes() + section_entries_.MemoryBytes() +
                 section_durations_.MemoryBytes() + section_cpu_.MemoryBytes() +
                 section_memory_.MemoryBytes() + section_bytes_.MemoryBytes();
  for (const Column<int64_t>& column : ints_) bytes += column.MemoryBytes();
  for (const Column<double>& column : doubles_) bytes += column.MemoryBytes();
  for (const Column<uint32_t>& column : ids_) bytes += column.MemoryBytes();
  for (const StringColumn& column : per_record_) bytes += column.MemoryBytes();
  bytes += uuids_per_record_.MemoryBytes();
  return bytes;
}

ChunkTable ChunkTableOf(absl::Span<const v1::ChunkRecord> records) {
  ChunkTable table;
  table.Reserve(records.size());
  for (const v1::ChunkRecord& record : records) table.Append(record);
  return table;
}

std::vector<v1::ChunkRecord> RecordsOf(const ChunkTable& table, size_t from) {
  std::vector<v1::ChunkRecord> records;
  if (from >= table.size()) return records;
  records.resize(table.size() - from);
  for (size_t i = from; i < table.size(); ++i) table.ReadRecord(i, &records[i - from]);
  return records;
}

}  // namespace roastcoffea
