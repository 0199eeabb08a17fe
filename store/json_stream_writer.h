// Protobuf JSON of a message of any size, written in bounded pieces (internal to //store).
//
// libprotobuf 3.21's MessageToJsonString builds the whole message as a tree of a few KB per
// node before printing it: a measurement of a million chunks needs GBs only to be written as
// JSON. WriteMessageJson prints big messages field by field and element by element itself, and
// hands only small submessages, the well-known types (e.g. Timestamp) and messages holding a map
// field to MessageToJsonString, so that its memory is bounded by the options below and by the
// largest such submessage, and never grows with the number of records. Its output
// parses to the same JSON value as MessageToJsonString's with the same options.
#ifndef ROASTCOFFEA_STORE_JSON_STREAM_WRITER_H_
#define ROASTCOFFEA_STORE_JSON_STREAM_WRITER_H_

#include <cstddef>
#include <functional>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "google/protobuf/message.h"

namespace roastcoffea {
namespace store_internal {

struct JsonStreamOptions {
  // As google::protobuf::util::JsonPrintOptions of the same names.
  bool add_whitespace = false;
  bool preserve_proto_field_names = false;
  bool always_print_primitive_fields = false;
  // A (sub)message whose binary size (ByteSizeLong) is below this is converted whole by
  // MessageToJsonString (fast, but about 1-3 KB of memory per field while it runs); 0 prints
  // every message but the well-known types field by field.
  size_t delegate_below_bytes = 64 * 1024;
  // The output is handed to the sink in pieces of about this many bytes (a piece is larger only
  // when one delegated submessage's JSON is).
  size_t piece_bytes = 64 * 1024;
};

// Appends `message` as protobuf JSON to `sink`, piece by piece; the first error the sink returns
// stops the writing and is returned. Internal when libprotobuf cannot convert a submessage
// (e.g. an Any of an unknown type); the error names the submessage's field path. With
// add_whitespace the output ends with a newline, as MessageToJsonString's does.
// A message that holds a map field is always delegated whole (libprotobuf's map reflection
// crashes under ThreadSanitizer with Debian's uninstrumented libprotobuf); keep maps in small
// submessages. Memory: O(piece_bytes + JSON of the largest delegated submessage + depth).
absl::Status WriteMessageJson(const google::protobuf::Message& message,
                              const JsonStreamOptions& options,
                              absl::FunctionRef<absl::Status(absl::string_view)> sink);

// A field of the message written that is held apart from it (a measurement's chunk records in a
// ChunkTable, its metadata edited for the save): printed from here, in the field's place.
struct JsonFieldSubstitute {
  int field_number = 0;
  // A singular message field: printed instead of the message's own.
  const google::protobuf::Message* message = nullptr;
  // A repeated message field: `appended` elements printed after the message's own, element i
  // from `element(i)` (valid until its next call: one reused message can serve them all).
  size_t appended = 0;
  std::function<const google::protobuf::Message&(size_t)> element;
};

// WriteMessageJson of `message` with the `substitutes` of its top-level fields: the same JSON as
// that of a message holding them. The message itself is printed field by field (never
// delegated whole), whatever its size. InvalidArgument for a substitute that names no message
// field of `message` or does not fit its kind.
absl::Status WriteMessageJson(const google::protobuf::Message& message,
                              const JsonStreamOptions& options,
                              absl::Span<const JsonFieldSubstitute> substitutes,
                              absl::FunctionRef<absl::Status(absl::string_view)> sink);

}  // namespace store_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_STORE_JSON_STREAM_WRITER_H_
