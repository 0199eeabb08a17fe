#include "store/json_stream_writer.h"

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/util/json_util.h"

namespace roastcoffea {
namespace store_internal {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// The well-known types have their own JSON forms (Timestamp is a string, Struct an object, ...):
// libprotobuf prints them, whatever their size.
bool IsWellKnownType(const Descriptor& type) {
  return absl::StartsWith(type.file()->name(), "google/protobuf/");
}

// A message with a map field goes to libprotobuf whole, which reads maps through the generated
// code: libprotobuf's map reflection crashes in our ThreadSanitizer builds (Debian's libprotobuf
// is not instrumented). The measurement's one map, metadata.configuration, is small.
bool HasMapField(const Descriptor& type) {
  for (int f = 0; f < type.field_count(); ++f) {
    if (type.field(f)->is_map()) return true;
  }
  return false;
}

// libprotobuf's SimpleDtoa / SimpleFtoa: the shortest of two precisions that reads back exactly.
std::string FormatDouble(double value) {
  // An integral value below 10^15 in magnitude is its integer digits under %.15g (no exponent,
  // no point) and reads back exactly: the tracking's bytes and counts, without printf and
  // strtod (3-4x faster). -0 keeps printf's "-0".
  if (std::fabs(value) < 1e15 && value == std::trunc(value) &&
      !(value == 0 && std::signbit(value))) {
    return absl::StrCat(static_cast<int64_t>(value));
  }
  // std::to_chars with a precision prints as printf's %.*g does, and std::from_chars reads back
  // exactly as strtod: the same text, faster.
  char buffer[32];
  char* end =
      std::to_chars(buffer, buffer + sizeof(buffer) - 1, value, std::chars_format::general, DBL_DIG)
          .ptr;
  *end = '\0';
  double read_back = 0;
  // A denormal read back is out of range for from_chars, not for strtod (what libprotobuf uses).
  if (std::from_chars(buffer, end, read_back).ec != std::errc())
    read_back = strtod(buffer, nullptr);
  if (read_back != value) {
    end = std::to_chars(buffer, buffer + sizeof(buffer) - 1, value, std::chars_format::general,
                        DBL_DIG + 2)
              .ptr;
  }
  return std::string(buffer, end);
}

std::string FormatFloat(float value) {
  char buffer[32];
  snprintf(buffer, sizeof(buffer), "%.*g", FLT_DIG, value);
  // As libprotobuf's safe_strtof: a read-back that underflows (a denormal) counts as inexact.
  errno = 0;
  if (strtof(buffer, nullptr) != value || errno != 0)
    snprintf(buffer, sizeof(buffer), "%.*g", FLT_DIG + 3, value);
  return buffer;
}

// protobuf JSON's names for the non-finite values, which JSON numbers cannot hold.
template <typename Float>
bool AppendNonFinite(Float value, std::string& out) {
  if (std::isnan(value)) {
    out += "\"NaN\"";
  } else if (std::isinf(value)) {
    out += value > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  } else {
    return false;
  }
  return true;
}

// Code points that libprotobuf's JSON escaping writes as \uXXXX although JSON allows them raw:
// format and separator characters that some JavaScript parsers mishandle.
bool IsEscapedCodePoint(uint32_t code_point) {
  return (code_point >= 0x7f && code_point <= 0x9f) || code_point == 0xad ||
         (code_point >= 0x600 && code_point <= 0x603) || code_point == 0x6dd ||
         code_point == 0x70f || code_point == 0x17b4 || code_point == 0x17b5 ||
         (code_point >= 0x200b && code_point <= 0x200f) ||
         (code_point >= 0x2028 && code_point <= 0x202e) ||
         (code_point >= 0x2060 && code_point <= 0x2064) ||
         (code_point >= 0x206a && code_point <= 0x206f) || code_point == 0xfeff ||
         (code_point >= 0xfff9 && code_point <= 0xfffb) || code_point == 0xe0001 ||
         (code_point >= 0xe0020 && code_point <= 0xe007f);
}

void AppendUnicodeEscape(uint32_t unit, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(unit >> shift) & 0xf];
}

// `text` as a JSON string literal. Strings are UTF-8 here (the store repairs them before a save);
// a byte that does not start a well-formed sequence is copied as it is.
void AppendJsonString(absl::string_view text, std::string& out) {
  out += '"';
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      switch (byte) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '<':
        case '>':
          AppendUnicodeEscape(byte, out);
          break;
        default:
          if (byte < 0x20 || byte == 0x7f) {
            AppendUnicodeEscape(byte, out);
          } else {
            out += static_cast<char>(byte);
          }
      }
      ++i;
      continue;
    }
    const int length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    if (length == 1 || i + length > text.size()) {
      out += static_cast<char>(byte);
      ++i;
      continue;
    }
    uint32_t code_point = byte & (0x7f >> length);
    for (int k = 1; k < length; ++k) {
      code_point = (code_point << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3f);
    }
    if (!IsEscapedCodePoint(code_point)) {
      out.append(text.data() + i, length);
    } else if (code_point >= 0x10000) {
      // JSON's \u escapes are UTF-16 code units: a surrogate pair.
      const uint32_t offset = code_point - 0x10000;
      AppendUnicodeEscape(0xd800 + (offset >> 10), out);
      AppendUnicodeEscape(0xdc00 + (offset & 0x3ff), out);
    } else {
      AppendUnicodeEscape(code_point, out);
    }
    i += length;
  }
  out += '"';
}

// Where a submessage lies in the message written, for errors; built on the stack as the
// printer descends, and turned into text only when an error needs it.
struct Path {
  const Path* parent;  // null at the message written
  const FieldDescriptor* field;
  int index;  // of a repeated field's element, or -1

  std::string Text(const Message& root) const {
    if (parent == nullptr) return root.GetDescriptor()->full_name();
    std::string text = parent->Text(root);
    if (field != nullptr) absl::StrAppend(&text, ".", field->name());
    if (index >= 0) absl::StrAppend(&text, "[", index, "]");
    return text;
  }
};

class StreamPrinter {
 public:
  StreamPrinter(const JsonStreamOptions& options, absl::Span<const JsonFieldSubstitute> substitutes,
                absl::FunctionRef<absl::Status(absl::string_view)> sink)
      : options_(options), substitutes_(substitutes), sink_(sink) {
    print_options_.add_whitespace = options.add_whitespace;
    print_options_.preserve_proto_field_names = options.preserve_proto_field_names;
    print_options_.always_print_primitive_fields = options.always_print_primitive_fields;
  }

  absl::Status Print(const Message& message) {
    root_ = &message;
    if (absl::Status s = PrintMessage(message, /*depth=*/0, Path{nullptr, nullptr, -1}); !s.ok()) {
      return s;
    }
    if (options_.add_whitespace) buffer_ += '\n';
    return Flush();
  }

 private:
  absl::Status Flush() {
    if (buffer_.empty()) return absl::OkStatus();
    absl::Status status = sink_(buffer_);
    buffer_.clear();
    return status;
  }

  absl::Status MaybeFlush() {
    return buffer_.size() >= options_.piece_bytes ? Flush() : absl::OkStatus();
  }

  // A new line at `depth` (one space per level, as libprotobuf indents), or nothing.
  void NewLine(int depth) {
    if (!options_.add_whitespace) return;
    buffer_ += '\n';
    buffer_.append(depth, ' ');
  }

  // The message as a value at `depth` (its key, if any, is already written); `path` names it
  // in errors.
  absl::Status PrintMessage(const Message& message, int depth, const Path& path) {
    const Descriptor& type = *message.GetDescriptor();
    // A message with substitutes is printed here: libprotobuf would not see them.
    const bool substituted = &message == root_ && !substitutes_.empty();
    if (!substituted && (IsWellKnownType(type) || HasMapField(type) ||
                         (options_.delegate_below_bytes > 0 &&
                          message.ByteSizeLong() < options_.delegate_below_bytes))) {
      return Delegate(message, depth, path);
    }
    const Reflection& reflection = *message.GetReflection();
    buffer_ += '{';
    bool first = true;
    // libprotobuf with always_print_primitive_fields prints scalars of a oneof (proto3
    // `optional` ones included) and well-known-type messages after the other fields, in field
    // number order; the same order keeps the delegated and the streamed parts alike.
    std::vector<const FieldDescriptor*> last;
    for (int f = 0; f < type.field_count(); ++f) {
      const FieldDescriptor& field = *type.field(f);
      if (!ShouldPrint(message, reflection, field)) continue;
      if (options_.always_print_primitive_fields && PrintedLast(field)) {
        last.push_back(&field);
        continue;
      }
      if (absl::Status s = PrintField(message, reflection, field, depth, path, first); !s.ok()) {
        return s;
      }
    }
    std::sort(last.begin(), last.end(), [](const FieldDescriptor* a, const FieldDescriptor* b) {
      return a->number() < b->number();
    });
    for (const FieldDescriptor* field : last) {
      if (absl::Status s = PrintField(message, reflection, *field, depth, path, first); !s.ok()) {
        return s;
      }
    }
    if (!first) NewLine(depth);
    buffer_ += '}';
    return absl::OkStatus();
  }

  static bool PrintedLast(const FieldDescriptor& field) {
    if (field.is_repeated()) return false;
    if (field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      return IsWellKnownType(*field.message_type());
    }
    return field.containing_oneof() != nullptr;
  }

  // `"name": value` of one field of a message at `depth`, after a comma unless `first`.
  absl::Status PrintField(const Message& message, const Reflection& reflection,
                          const FieldDescriptor& field, int depth, const Path& path, bool& first) {
    buffer_ += first ? "" : ",";
    first = false;
    NewLine(depth + 1);
    const std::string& name =
        options_.preserve_proto_field_names ? field.name() : field.json_name();
    AppendJsonString(name, buffer_);
    buffer_ += options_.add_whitespace ? ": " : ":";
    const Path field_path{&path, &field, -1};
    const JsonFieldSubstitute* substitute = SubstituteFor(message, field);
    absl::Status printed;
    if (field.is_repeated()) {
      printed = PrintRepeated(message, reflection, field, depth + 1, field_path);
    } else if (substitute != nullptr && substitute->message != nullptr) {
      printed = PrintMessage(*substitute->message, depth + 1, field_path);
    } else if (field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      printed = PrintMessage(reflection.GetMessage(message, &field), depth + 1, field_path);
    } else {
      AppendSingularValue(message, reflection, field);
    }
    if (!printed.ok()) return printed;
    return MaybeFlush();
  }

  // As MessageToJsonString: fields with presence when set; the others when non-default, or
  // always with always_print_primitive_fields.
  bool ShouldPrint(const Message& message, const Reflection& reflection,
                   const FieldDescriptor& field) const {
    if (field.is_repeated()) {
      return options_.always_print_primitive_fields || ElementCount(message, reflection, field) > 0;
    }
    if (const JsonFieldSubstitute* substitute = SubstituteFor(message, field);
        substitute != nullptr && substitute->message != nullptr) {
      return true;
    }
    if (field.has_presence() || !options_.always_print_primitive_fields) {
      return reflection.HasField(message, &field);
    }
    return true;
  }

  absl::Status Delegate(const Message& message, int depth, const Path& path) {
    std::string json;
    const auto converted =
        google::protobuf::util::MessageToJsonString(message, &json, print_options_);
    if (!converted.ok()) {
      return absl::InternalError(
          absl::StrCat("cannot convert ", path.Text(*root_), " to JSON: ", converted.ToString()));
    }
    while (!json.empty() && json.back() == '\n') json.pop_back();
    if (!options_.add_whitespace || depth == 0) {
      buffer_ += json;
    } else {
      // Its lines indented to `depth`; a newline inside a string is escaped, so every raw one
      // separates lines.
      size_t start = 0;
      for (size_t newline = json.find('\n'); newline != std::string::npos;
           newline = json.find('\n', start)) {
        buffer_.append(json, start, newline + 1 - start);
        buffer_.append(depth, ' ');
        start = newline + 1;
      }
      buffer_.append(json, start, std::string::npos);
    }
    return MaybeFlush();
  }

  // The substitute of `field` of `message`: only the top-level fields have one.
  const JsonFieldSubstitute* SubstituteFor(const Message& message,
                                           const FieldDescriptor& field) const {
    if (&message != root_) return nullptr;
    for (const JsonFieldSubstitute& substitute : substitutes_) {
      if (substitute.field_number == field.number()) return &substitute;
    }
    return nullptr;
  }

  // The elements of a repeated field: the message's own, then its substitute's.
  size_t ElementCount(const Message& message, const Reflection& reflection,
                      const FieldDescriptor& field) const {
    const JsonFieldSubstitute* substitute = SubstituteFor(message, field);
    return static_cast<size_t>(reflection.FieldSize(message, &field)) +
           (substitute == nullptr ? 0 : substitute->appended);
  }

  absl::Status PrintRepeated(const Message& message, const Reflection& reflection,
                             const FieldDescriptor& field, int depth, const Path& path) {
    const int own = reflection.FieldSize(message, &field);
    const size_t size = ElementCount(message, reflection, field);
    const JsonFieldSubstitute* substitute = SubstituteFor(message, field);
    buffer_ += '[';
    for (size_t i = 0; i < size; ++i) {
      if (i > 0) buffer_ += ',';
      NewLine(depth + 1);
      if (field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        const Path element_path{&path, nullptr, static_cast<int>(i)};
        const Message& element =
            i < static_cast<size_t>(own)
                ? reflection.GetRepeatedMessage(message, &field, static_cast<int>(i))
                : substitute->element(i - own);
        if (absl::Status s = PrintMessage(element, depth + 1, element_path); !s.ok()) {
          return s;
        }
      } else {
        AppendRepeatedValue(message, reflection, field, static_cast<int>(i));
      }
      if (absl::Status s = MaybeFlush(); !s.ok()) return s;
    }
    if (size > 0) NewLine(depth);
    buffer_ += ']';
    return absl::OkStatus();
  }

  void AppendEnum(const FieldDescriptor& field, int number) {
    const auto* value = field.enum_type()->FindValueByNumber(number);
    if (value != nullptr) {
      AppendJsonString(value->name(), buffer_);
    } else {
      // A number this build does not know (from a newer writer): kept as the number.
      absl::StrAppend(&buffer_, number);
    }
  }

  void AppendDouble(double value) {
    if (!AppendNonFinite(value, buffer_)) buffer_ += FormatDouble(value);
  }

  void AppendFloat(float value) {
    if (!AppendNonFinite(value, buffer_)) buffer_ += FormatFloat(value);
  }

  void AppendString(const FieldDescriptor& field, const std::string& value) {
    if (field.type() == FieldDescriptor::TYPE_BYTES) {
      buffer_ += '"';
      buffer_ += absl::Base64Escape(value);
      buffer_ += '"';
    } else {
      AppendJsonString(value, buffer_);
    }
  }

  void AppendSingularValue(const Message& message, const Reflection& reflection,
                           const FieldDescriptor& field) {
    switch (field.cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32:
        absl::StrAppend(&buffer_, reflection.GetInt32(message, &field));
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        absl::StrAppend(&buffer_, reflection.GetUInt32(message, &field));
        break;
      // 64-bit integers are strings in protobuf JSON (a JavaScript number would round them).
      case FieldDescriptor::CPPTYPE_INT64:
        absl::StrAppend(&buffer_, "\"", reflection.GetInt64(message, &field), "\"");
        break;
      case FieldDescriptor::CPPTYPE_UINT64:
        absl::StrAppend(&buffer_, "\"", reflection.GetUInt64(message, &field), "\"");
        break;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        AppendDouble(reflection.GetDouble(message, &field));
        break;
      case FieldDescriptor::CPPTYPE_FLOAT:
        AppendFloat(reflection.GetFloat(message, &field));
        break;
      case FieldDescriptor::CPPTYPE_BOOL:
        buffer_ += reflection.GetBool(message, &field) ? "true" : "false";
        break;
      case FieldDescriptor::CPPTYPE_ENUM:
        AppendEnum(field, reflection.GetEnumValue(message, &field));
        break;
      case FieldDescriptor::CPPTYPE_STRING: {
        std::string scratch;
        AppendString(field, reflection.GetStringReference(message, &field, &scratch));
        break;
      }
      case FieldDescriptor::CPPTYPE_MESSAGE:
        break;  // printed by PrintMessage
    }
  }

  void AppendRepeatedValue(const Message& message, const Reflection& reflection,
                           const FieldDescriptor& field, int i) {
    switch (field.cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32:
        absl::StrAppend(&buffer_, reflection.GetRepeatedInt32(message, &field, i));
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        absl::StrAppend(&buffer_, reflection.GetRepeatedUInt32(message, &field, i));
        break;
      case FieldDescriptor::CPPTYPE_INT64:
        absl::StrAppend(&buffer_, "\"", reflection.GetRepeatedInt64(message, &field, i), "\"");
        break;
      case FieldDescriptor::CPPTYPE_UINT64:
        absl::StrAppend(&buffer_, "\"", reflection.GetRepeatedUInt64(message, &field, i), "\"");
        break;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        AppendDouble(reflection.GetRepeatedDouble(message, &field, i));
        break;
      case FieldDescriptor::CPPTYPE_FLOAT:
        AppendFloat(reflection.GetRepeatedFloat(message, &field, i));
        break;
      case FieldDescriptor::CPPTYPE_BOOL:
        buffer_ += reflection.GetRepeatedBool(message, &field, i) ? "true" : "false";
        break;
      case FieldDescriptor::CPPTYPE_ENUM:
        AppendEnum(field, reflection.GetRepeatedEnumValue(message, &field, i));
        break;
      case FieldDescriptor::CPPTYPE_STRING: {
        std::string scratch;
        AppendString(field, reflection.GetRepeatedStringReference(message, &field, i, &scratch));
        break;
      }
      case FieldDescriptor::CPPTYPE_MESSAGE:
        break;  // printed by PrintRepeated
    }
  }

  const JsonStreamOptions& options_;
  const absl::Span<const JsonFieldSubstitute> substitutes_;
  absl::FunctionRef<absl::Status(absl::string_view)> sink_;
  google::protobuf::util::JsonPrintOptions print_options_;
  std::string buffer_;
  const Message* root_ = nullptr;
};

}  // namespace

absl::Status WriteMessageJson(const google::protobuf::Message& message,
                              const JsonStreamOptions& options,
                              absl::FunctionRef<absl::Status(absl::string_view)> sink) {
  return StreamPrinter(options, {}, sink).Print(message);
}

absl::Status WriteMessageJson(const google::protobuf::Message& message,
                              const JsonStreamOptions& options,
                              absl::Span<const JsonFieldSubstitute> substitutes,
                              absl::FunctionRef<absl::Status(absl::string_view)> sink) {
  const Descriptor& type = *message.GetDescriptor();
  for (const JsonFieldSubstitute& substitute : substitutes) {
    const FieldDescriptor* field = type.FindFieldByNumber(substitute.field_number);
    const bool fits =
        field != nullptr && field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE &&
        (field->is_repeated()
             ? substitute.message == nullptr && (substitute.appended == 0 || substitute.element)
             : substitute.appended == 0 &&
                   (substitute.message == nullptr ||
                    substitute.message->GetDescriptor() == field->message_type()));
    if (!fits) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot print ", type.full_name(), " as JSON: the substitute for field ",
                       substitute.field_number, " names no message field of that kind"));
    }
  }
  return StreamPrinter(options, substitutes, sink).Print(message);
}

}  // namespace store_internal
}  // namespace roastcoffea
