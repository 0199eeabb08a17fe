#include "tests/collect_runner.h"

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace roastcoffea {

std::string TempDir() { return std::getenv("TEST_TMPDIR"); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

CollectOutcome RunCollect(const std::vector<std::string>& arguments) {
  const std::string binary = std::string(std::getenv("TEST_SRCDIR")) + "/roastcoffea/tools/collect";
  const std::string out = TempDir() + "/collect.out";
  const std::string err = TempDir() + "/collect.err";
  std::string command = "'" + binary + "'";
  for (const std::string& argument : arguments) command += " '" + argument + "'";
  command += " >'" + out + "' 2>'" + err + "' </dev/null";
  const int status = std::system(command.c_str());
  CollectOutcome outcome;
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  outcome.out = ReadFile(out);
  outcome.err = ReadFile(err);
  return outcome;
}

}  // namespace roastcoffea
