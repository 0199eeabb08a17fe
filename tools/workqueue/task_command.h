// The command line of a Work Queue chunk task and its parsing in the task program: which
// chunks to process, under which names the worker sees their files, where to write the output.
//
//   ./chunk_task OUTPUT DATASET INPUT FILE START STOP [DATASET INPUT FILE START STOP ...]
//
// INPUT is the file's name in the task's sandbox (a cached task input), FILE the path recorded
// in the chunk record (the manager's path, so records match the thread-pool run's).
#ifndef ROASTCOFFEA_TOOLS_WORKQUEUE_TASK_COMMAND_H_
#define ROASTCOFFEA_TOOLS_WORKQUEUE_TASK_COMMAND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace roastcoffea {
namespace workqueue {

// The task program's name in the task sandbox.
inline constexpr char kChunkTaskProgram[] = "chunk_task";
// Its output file's name in the task sandbox.
inline constexpr char kChunkTaskOutput[] = "chunk_output.pb";

struct TaskChunk {
  std::string dataset;
  std::string input;  // name in the task sandbox
  std::string file;   // path recorded in the chunk record
  int64_t entry_start = 0;
  int64_t entry_stop = 0;
};

struct ChunkTaskArguments {
  std::string output;
  std::vector<TaskChunk> chunks;
};

// A /bin/sh command line (Work Queue runs commands with the shell): every argument quoted.
std::string ChunkTaskCommand(const ChunkTaskArguments& arguments);

// The program's arguments (argv[1..]). InvalidArgument saying what is wrong: no chunk, a count
// that is not a multiple of five, a bad or empty entry range.
absl::StatusOr<ChunkTaskArguments> ParseChunkTaskArguments(const std::vector<std::string>& args);

}  // namespace workqueue
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_WORKQUEUE_TASK_COMMAND_H_
