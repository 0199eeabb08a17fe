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

namespace {

// `word` in single quotes for /bin/sh, each ' written as '\''.
std::string Quoted(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

CollectOutcome RunCollect(const std::vector<std::string>& arguments) {
  const std::string binary = std::string(std::getenv("TEST_SRCDIR")) + "/roastcoffea/tools/collect";
  const std::string out = TempDir() + "/collect.out";
  const std::string err = TempDir() + "/collect.err";
  std::string command = Quoted(binary);
  for (const std::string& argument : arguments) command += " " + Quoted(argument);
  command += " >" + Quoted(out) + " 2>" + Quoted(err) + " </dev/null";
  const int status = std::system(command.c_str());
  CollectOutcome outcome;
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  outcome.out = ReadFile(out);
  outcome.err = ReadFile(err);
  return outcome;
}

}  // namespace roastcoffea
