#include "store/utf8_repair.h"

#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/map.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace store_internal {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Length of the well-formed UTF-8 sequence at the start of `text`, or 0 when it is not one.
size_t SequenceLength(absl::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t b0 = byte(0);
  if (b0 < 0x80) return 1;
  const auto continuation = [&](size_t i) { return i < text.size() && (byte(i) & 0xC0) == 0x80; };
  if (b0 >= 0xC2 && b0 <= 0xDF) return continuation(1) ? 2 : 0;
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (!continuation(1) || !continuation(2)) return 0;
    if (b0 == 0xE0 && byte(1) < 0xA0) return 0;  // overlong
    if (b0 == 0xED && byte(1) > 0x9F) return 0;  // UTF-16 surrogates
    return 3;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (!continuation(1) || !continuation(2) || !continuation(3)) return 0;
    if (b0 == 0xF0 && byte(1) < 0x90) return 0;  // overlong
    if (b0 == 0xF4 && byte(1) > 0x8F) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

bool IsUtf8Field(const FieldDescriptor* field) {
  return field->type() == FieldDescriptor::TYPE_STRING;
}

// Visits every string field, repairing (kMutable) or checking. Only the repair uses it now: the
// check alone is Utf8Checker's, below, which skips the fields that cannot hold a string.
template <bool kMutable>
struct Walker {
  using MessageRef = std::conditional_t<kMutable, Message*, const Message*>;
  int repaired = 0;
  std::string first_path;

  // Returns false (const walk) as soon as an invalid string is found.
  bool Walk(MessageRef message, const std::string& path) {
    const Reflection* reflection = message->GetReflection();
    std::vector<const FieldDescriptor*> fields;
    reflection->ListFields(*message, &fields);
    for (const FieldDescriptor* field : fields) {
      // Paths only name what a repair changed: the check alone builds none (a string per
      // chunk record was half of its cost).
      const std::string name = !kMutable      ? std::string()
                               : path.empty() ? field->name()
                                              : absl::StrCat(path, ".", field->name());
      // Map fields are never walked through reflection: its repeated view of a map is synced
      // lazily, a hidden write that crashed under ThreadSanitizer. The schema's one map is
      // handled with its typed accessors below.
      if (field->is_map()) continue;
      if (field->is_repeated()) {
        const int size = reflection->FieldSize(*message, field);
        for (int i = 0; i < size; ++i) {
          const std::string item = kMutable ? absl::StrCat(name, "[", i, "]") : std::string();
          if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
            if constexpr (kMutable) {
              Walk(reflection->MutableRepeatedMessage(message, field, i), item);
            } else {
              if (!Walk(&reflection->GetRepeatedMessage(*message, field, i), item)) return false;
            }
          } else if (IsUtf8Field(field)) {
            std::string scratch;
            const std::string& text =
                reflection->GetRepeatedStringReference(*message, field, i, &scratch);
            if (IsValidUtf8(text)) continue;
            if constexpr (kMutable) {
              Note(item);
              reflection->SetRepeatedString(message, field, i, RepairUtf8(text));
            } else {
              return false;
            }
          }
        }
      } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        if constexpr (kMutable) {
          Walk(reflection->MutableMessage(message, field), name);
        } else {
          if (!Walk(&reflection->GetMessage(*message, field), name)) return false;
        }
      } else if (IsUtf8Field(field)) {
        std::string scratch;
        const std::string& text = reflection->GetStringReference(*message, field, &scratch);
        if (IsValidUtf8(text)) continue;
        if constexpr (kMutable) {
          Note(name);
          reflection->SetString(message, field, RepairUtf8(text));
        } else {
          return false;
        }
      }
    }
    if (!WalkConfiguration(message, path)) return false;
    return true;
  }

  // MeasurementMetadata.configuration, by its typed map API.
  bool WalkConfiguration(MessageRef message, const std::string& path) {
    auto* metadata = dynamic_cast<
        std::conditional_t<kMutable, v1::MeasurementMetadata*, const v1::MeasurementMetadata*>>(
        message);
    if (metadata == nullptr) return true;
    bool valid = true;
    for (const auto& [key, value] : metadata->configuration()) {
      if (!IsValidUtf8(key) || !IsValidUtf8(value)) valid = false;
    }
    if (valid) return true;
    if constexpr (!kMutable) {
      return false;
    } else {
      google::protobuf::Map<std::string, std::string> repaired;
      for (const auto& [key, value] : metadata->configuration()) {
        if (!IsValidUtf8(key) || !IsValidUtf8(value)) {
          Note(
              absl::StrCat(path.empty() ? "" : path + ".", "configuration[", RepairUtf8(key), "]"));
        }
        repaired[RepairUtf8(key)] = RepairUtf8(value);
      }
      *metadata->mutable_configuration() = std::move(repaired);
      return true;
    }
  }

  void Note(const std::string& path) {
    if (repaired++ == 0) first_path = path;
  }
};

// The fields of v1::ChunkRecord that hold a string (in declaration order), as
// ChunkRecordStringsValid reads them: dataset, file, uuid, sections (name), worker,
// error_text, accessed_branches, file_metadata (file), slices (name), task_id, retried_task_ids.
constexpr int kChunkRecordStringFields[] = {1, 2, 3, 16, 17, 20, 22, 27, 30, 32, 33};

// Every string of a chunk record, by its generated accessors: 10^6 records through reflection
// were 40 % of a save's CPU time.
bool ChunkRecordStringsValid(const v1::ChunkRecord& r) {
  for (const std::string* text :
       {&r.dataset(), &r.file(), &r.uuid(), &r.worker(), &r.error_text(), &r.task_id()}) {
    if (!IsValidUtf8(*text)) return false;
  }
  if (!IsValidUtf8(r.file_metadata().file())) return false;
  for (const v1::SectionRecord& section : r.sections()) {
    if (!IsValidUtf8(section.name())) return false;
  }
  for (const v1::SectionSlice& slice : r.slices()) {
    if (!IsValidUtf8(slice.name())) return false;
  }
  for (const std::string& branch : r.accessed_branches()) {
    if (!IsValidUtf8(branch)) return false;
  }
  for (const std::string& id : r.retried_task_ids()) {
    if (!IsValidUtf8(id)) return false;
  }
  return true;
}

// The check alone (no repair), walking only the fields that are strings or lead to one. Which
// fields those are is worked out once per message type from the descriptors: listing the set
// fields of each message (Reflection::ListFields, a vector and a HasBit per field) cost two
// thirds of the check, which was a quarter of a 10^6-chunk save. The elements of a repeated
// message field share one type: its plan and reflection are found once per field, not per
// element (with a dynamic_cast per message, that was half of the check).
class Utf8Checker {
 public:
  bool Check(const Message& message) {
    return CheckWith(message, *message.GetReflection(), PlanOf(message.GetDescriptor()));
  }

  // Whether ChunkRecordStringsValid checks every string the schema gives a chunk record: the
  // plans of its types name exactly the fields it reads. A string field added to the schema
  // (and not there) sends the records back through reflection.
  bool TypedChunkRecordsCoverTheSchema() {
    if (!typed_records_.has_value()) {
      const auto numbers = [this](const google::protobuf::Descriptor* type) {
        std::vector<int> out;
        for (const FieldDescriptor* field : PlanOf(type).fields) out.push_back(field->number());
        return out;
      };
      typed_records_ = numbers(v1::ChunkRecord::descriptor()) ==
                           std::vector<int>(std::begin(kChunkRecordStringFields),
                                            std::end(kChunkRecordStringFields)) &&
                       numbers(v1::SectionRecord::descriptor()) == std::vector<int>{1} &&
                       numbers(v1::SectionSlice::descriptor()) == std::vector<int>{1} &&
                       numbers(v1::FileMetadata::descriptor()) == std::vector<int>{1};
    }
    return *typed_records_;
  }

 private:
  struct Plan {
    std::vector<const FieldDescriptor*> fields;  // strings, and messages that hold one
    bool is_metadata = false;                    // MeasurementMetadata: its map too
  };

  bool CheckWith(const Message& message, const Reflection& reflection, const Plan& plan) {
    for (const FieldDescriptor* field : plan.fields) {
      if (!CheckField(message, reflection, field)) return false;
    }
    // MeasurementMetadata.configuration, by its typed map API (see Walker::WalkConfiguration).
    if (plan.is_metadata) {
      if (const auto* metadata = dynamic_cast<const v1::MeasurementMetadata*>(&message)) {
        for (const auto& [key, value] : metadata->configuration()) {
          if (!IsValidUtf8(key) || !IsValidUtf8(value)) return false;
        }
      }
    }
    return true;
  }

  bool CheckField(const Message& message, const Reflection& reflection,
                  const FieldDescriptor* field) {
    const bool is_message = field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
    std::string scratch;
    if (!field->is_repeated()) {
      if (is_message) {
        return !reflection.HasField(message, field) || Check(reflection.GetMessage(message, field));
      }
      return IsValidUtf8(reflection.GetStringReference(message, field, &scratch));
    }
    const int size = reflection.FieldSize(message, field);
    if (size == 0) return true;
    if (!is_message) {
      for (int i = 0; i < size; ++i) {
        if (!IsValidUtf8(reflection.GetRepeatedStringReference(message, field, i, &scratch))) {
          return false;
        }
      }
      return true;
    }
    const Reflection& element_reflection =
        *reflection.GetRepeatedMessage(message, field, 0).GetReflection();
    const Plan& element_plan = PlanOf(field->message_type());
    if (&element_reflection == v1::ChunkRecord::default_instance().GetReflection() &&
        TypedChunkRecordsCoverTheSchema()) {
      for (int i = 0; i < size; ++i) {
        const auto& record =
            static_cast<const v1::ChunkRecord&>(reflection.GetRepeatedMessage(message, field, i));
        if (!ChunkRecordStringsValid(record)) return false;
      }
      return true;
    }
    for (int i = 0; i < size; ++i) {
      if (!CheckWith(reflection.GetRepeatedMessage(message, field, i), element_reflection,
                     element_plan)) {
        return false;
      }
    }
    return true;
  }

  // The plan of `type` (a node map: a plan stays where it is while others are added).
  const Plan& PlanOf(const google::protobuf::Descriptor* type) {
    const auto found = plans_.find(type);
    if (found != plans_.end()) return found->second;
    Plan plan;
    plan.is_metadata = type == v1::MeasurementMetadata::descriptor();
    for (int i = 0; i < type->field_count(); ++i) {
      const FieldDescriptor* field = type->field(i);
      if (field->is_map()) continue;
      if (IsUtf8Field(field) || (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE &&
                                 HoldsStrings(field->message_type()))) {
        plan.fields.push_back(field);
      }
    }
    return plans_.emplace(type, std::move(plan)).first->second;
  }

  // Whether `type` has a string field at any depth; a type met again on the way (a recursive
  // schema) counts as holding one, so that nothing is skipped by mistake.
  bool HoldsStrings(const google::protobuf::Descriptor* type) {
    const auto [it, first_visit] = holds_strings_.try_emplace(type, true);
    if (!first_visit) return it->second;
    bool holds = false;
    for (int i = 0; i < type->field_count() && !holds; ++i) {
      const FieldDescriptor* field = type->field(i);
      holds = IsUtf8Field(field) || (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE &&
                                     HoldsStrings(field->message_type()));
    }
    holds_strings_[type] = holds;
    return holds;
  }

  absl::node_hash_map<const google::protobuf::Descriptor*, Plan> plans_;
  std::optional<bool> typed_records_;
  absl::flat_hash_map<const google::protobuf::Descriptor*, bool> holds_strings_;
};

}  // namespace

bool IsValidUtf8(absl::string_view text) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    // ASCII eight bytes at a time: nearly every string saved is ASCII only.
    while (left >= 8) {
      uint64_t word;
      std::memcpy(&word, p, 8);
      if ((word & 0x8080808080808080ull) != 0) break;
      p += 8;
      left -= 8;
    }
    if (left == 0) break;
    if (static_cast<uint8_t>(*p) < 0x80) {
      ++p;
      --left;
      continue;
    }
    const size_t length = SequenceLength(absl::string_view(p, left));
    if (length == 0) return false;
    p += length;
    left -= length;
  }
  return true;
}

std::string RepairUtf8(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const size_t length = SequenceLength(text);
    if (length == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      text.remove_prefix(1);
    } else {
      out.append(text.data(), length);
      text.remove_prefix(length);
    }
  }
  return out;
}

bool AllStringsValidUtf8(const google::protobuf::Message& message) {
  return Utf8Checker().Check(message);
}

bool ChunkRecordsCheckedByAccessors() { return Utf8Checker().TypedChunkRecordsCoverTheSchema(); }

int RepairStringsUtf8(google::protobuf::Message* message, std::string* first_path) {
  return RepairStringsUtf8(message, "", first_path);
}

int RepairStringsUtf8(google::protobuf::Message* message, const std::string& path,
                      std::string* first_path) {
  Walker<true> walker;
  walker.Walk(message, path);
  if (first_path != nullptr) *first_path = walker.first_path;
  return walker.repaired;
}

bool ChunkRecordStringsValidUtf8(const v1::ChunkRecord& record) {
  static const bool typed = ChunkRecordsCheckedByAccessors();
  return typed ? ChunkRecordStringsValid(record) : AllStringsValidUtf8(record);
}

}  // namespace store_internal
}  // namespace roastcoffea
