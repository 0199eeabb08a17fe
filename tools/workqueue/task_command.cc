#include "tools/workqueue/task_command.h"

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tools/shell_quote.h"

namespace roastcoffea {
namespace workqueue {

std::string ChunkTaskCommand(const ChunkTaskArguments& arguments) {
  std::string command = absl::StrCat("./", kChunkTaskProgram, " ", ShellQuote(arguments.output));
  for (const TaskChunk& chunk : arguments.chunks) {
    absl::StrAppend(&command, " ", ShellQuote(chunk.dataset), " ", ShellQuote(chunk.input), " ",
                    ShellQuote(chunk.file), " ", chunk.entry_start, " ", chunk.entry_stop);
  }
  return command;
}

absl::StatusOr<ChunkTaskArguments> ParseChunkTaskArguments(const std::vector<std::string>& args) {
  constexpr char kUsage[] =
      "usage: chunk_task OUTPUT DATASET INPUT FILE START STOP [DATASET INPUT FILE START STOP ...]";
  if (args.size() < 6 || (args.size() - 1) % 5 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(kUsage, " (got ", args.size(), " arguments)"));
  }
  ChunkTaskArguments parsed;
  parsed.output = args[0];
  for (size_t i = 1; i < args.size(); i += 5) {
    TaskChunk chunk;
    chunk.dataset = args[i];
    chunk.input = args[i + 1];
    chunk.file = args[i + 2];
    if (!absl::SimpleAtoi(args[i + 3], &chunk.entry_start) ||
        !absl::SimpleAtoi(args[i + 4], &chunk.entry_stop) || chunk.entry_start < 0 ||
        chunk.entry_stop <= chunk.entry_start) {
      return absl::InvalidArgumentError(absl::StrCat("chunk ", (i - 1) / 5, ": bad entry range [",
                                                     args[i + 3], ", ", args[i + 4], ")"));
    }
    if (chunk.dataset.empty() || chunk.input.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("chunk ", (i - 1) / 5, ": empty dataset or input name"));
    }
    parsed.chunks.push_back(std::move(chunk));
  }
  return parsed;
}

}  // namespace workqueue
}  // namespace roastcoffea
