// The typed config of collect's `--backend=workqueue` flags (workqueue_flags.h): plain values,
// without the Work Queue library, so that collect's run config can hold it.
#ifndef ROASTCOFFEA_TOOLS_WORKQUEUE_WORKQUEUE_CONFIG_H_
#define ROASTCOFFEA_TOOLS_WORKQUEUE_WORKQUEUE_CONFIG_H_

#include <string>

namespace roastcoffea {
namespace workqueue {

// The values of the flags, as given (MakeWorkQueueRunOptions checks them). Its defaults
// are the flags' defaults but for `workers`, whose flag defaults to the usable CPUs.
struct WorkQueueConfig {
  int workers = 0;              // --workers
  int chunks_per_task = 1;      // --chunks_per_task
  int port = 0;                 // --wq_port
  std::string password_file;    // --wq_password_file, as given
  double connect_timeout = 60;  // --wq_connect_timeout, seconds
  double stall_timeout = 120;   // --wq_stall_timeout, seconds
  std::string work_dir;         // --wq_work_dir, as given; empty: a temporary directory
  std::string chunk_task;       // --wq_chunk_task, as given; empty: the one built with collect
  std::string testing_fault;    // --wq_testing_fault: kill:K or stop:K; empty: none
};

}  // namespace workqueue
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_WORKQUEUE_WORKQUEUE_CONFIG_H_
