#include "host/host_name.h"

#include <limits.h>
#include <unistd.h>

namespace roastcoffea {

std::string HostName() {
  char buffer[HOST_NAME_MAX + 1] = {};
  // The name may be truncated without a terminating NUL: the last byte stays 0.
  if (gethostname(buffer, sizeof(buffer) - 1) != 0 || buffer[0] == '\0') return "unknown";
  return buffer;
}

}  // namespace roastcoffea
