#include "store/utf8_repair.h"

#include <cstdint>
#include <vector>

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

// Visits every string field; `visit(text, path)` returns the repaired text or nullptr-like
// signal. Written once for const checking and mutable repair through `Mutable`.
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

}  // namespace

bool IsValidUtf8(absl::string_view text) {
  while (!text.empty()) {
    const size_t length = SequenceLength(text);
    if (length == 0) return false;
    text.remove_prefix(length);
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
  Walker<false> walker;
  return walker.Walk(&message, "");
}

int RepairStringsUtf8(google::protobuf::Message* message, std::string* first_path) {
  Walker<true> walker;
  walker.Walk(message, "");
  if (first_path != nullptr) *first_path = walker.first_path;
  return walker.repaired;
}

}  // namespace store_internal
}  // namespace roastcoffea
