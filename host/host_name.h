// The name of the machine this process runs on, as measurements and worker names show it.
//
// Thread-safety: safe from any thread. Cost: one gethostname call.
#ifndef ROASTCOFFEA_HOST_HOST_NAME_H_
#define ROASTCOFFEA_HOST_HOST_NAME_H_

#include <string>

namespace roastcoffea {

// The host name (gethostname), or "unknown" when the system gives none.
std::string HostName();

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_HOST_HOST_NAME_H_
