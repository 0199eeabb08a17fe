// chunk_task: the program a Work Queue task runs (shipped to the workers as a cached input).
// Processes its chunks (see task_command.h for the arguments) and writes their dijet output and
// chunk records to OUTPUT. Exit 0 when the output was written, also when chunks failed (their
// FAILED records say why); 2 for bad arguments; 1 when the output cannot be written.
#include <iostream>
#include <string>
#include <vector>

#include "tools/workqueue/chunk_task.h"
#include "tools/workqueue/task_command.h"
#include "tools/workqueue/task_output.h"

int main(int argc, char** argv) {
  using namespace roastcoffea::workqueue;
  const std::vector<std::string> args(argv + 1, argv + argc);
  absl::StatusOr<ChunkTaskArguments> parsed = ParseChunkTaskArguments(args);
  if (!parsed.ok()) {
    std::cerr << "chunk_task: " << parsed.status().message() << "\n";
    return 2;
  }
  const ChunkTaskOutput output = RunChunkTask(parsed->chunks);
  if (absl::Status written = WriteTaskOutputFile(output, parsed->output); !written.ok()) {
    std::cerr << "chunk_task: " << written.message() << "\n";
    return 1;
  }
  return 0;
}
