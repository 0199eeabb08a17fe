// Work Queue's C API (Debian's coop-computing-tools-dev), for C++: its header has no
// extern "C" of its own.
#ifndef ROASTCOFFEA_TOOLS_WORKQUEUE_WORK_QUEUE_API_H_
#define ROASTCOFFEA_TOOLS_WORKQUEUE_WORK_QUEUE_API_H_

extern "C" {
#include <cctools/work_queue.h>
}

#endif  // ROASTCOFFEA_TOOLS_WORKQUEUE_WORK_QUEUE_API_H_
