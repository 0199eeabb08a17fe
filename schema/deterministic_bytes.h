// A message's bytes in protobuf's deterministic serialization (map entries sorted), for tests
// that compare two measurements byte for byte.
#ifndef ROASTCOFFEA_SCHEMA_DETERMINISTIC_BYTES_H_
#define ROASTCOFFEA_SCHEMA_DETERMINISTIC_BYTES_H_

#include <string>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/message_lite.h"

namespace roastcoffea {

inline std::string DeterministicBytes(const google::protobuf::MessageLite& message) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  message.SerializeToCodedStream(&coded);
  coded.Trim();
  return bytes;
}

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_SCHEMA_DETERMINISTIC_BYTES_H_
