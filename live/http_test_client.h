// Test helper: a plain HTTP/1.1 GET over a TCP connection to 127.0.0.1, and raw connections
// for hostile-client tests.
#ifndef ROASTCOFFEA_LIVE_HTTP_TEST_CLIENT_H_
#define ROASTCOFFEA_LIVE_HTTP_TEST_CLIENT_H_

#include <string>

#include "absl/time/time.h"

namespace roastcoffea {
namespace live {

// A connected socket to 127.0.0.1:port, or -1.
int ConnectLoopback(int port);
// Sends `request` and reads until the server closes (or `timeout`); the whole response.
std::string Exchange(int port, const std::string& request,
                     absl::Duration timeout = absl::Seconds(10));
// GET `path` with an optional Accept header.
std::string Get(int port, const std::string& path, const std::string& accept = "");
// The body of a response ("" without one).
std::string Body(const std::string& response);

}  // namespace live
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_LIVE_HTTP_TEST_CLIENT_H_
