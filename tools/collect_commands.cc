#include "tools/collect_commands.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "io/bounded_read.h"

namespace roastcoffea {
namespace {

// absl's own flags: collect answers --help itself and leaves the others to absl.
// --helpfull too: the table's help lists every flag of every mode, and absl's exits 1.
bool IsHelpFlag(absl::string_view name) {
  return name == "help" || name == "h" || name == "helpshort" || name == "helpfull";
}

bool IsAbslSpecialFlag(absl::string_view name) {
  static const std::set<std::string>* const kSpecial = new std::set<std::string>{
      "helppackage", "helpon",  "helpmatch",  "version", "only_check_args",
      "flagfile",    "fromenv", "tryfromenv", "undefok"};
  return kSpecial->count(std::string(name)) > 0;
}

bool AbslSpecialTakesValue(absl::string_view name) {
  return name == "helpon" || name == "helpmatch" || name == "flagfile" || name == "fromenv" ||
         name == "tryfromenv" || name == "undefok";
}

std::vector<std::string> AllFlagNames() {
  std::vector<std::string> names;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (flag->IsRetired() || IsAbslSpecialFlag(name) || IsHelpFlag(name)) continue;
    names.emplace_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      const size_t substitute =
          diagonal + (absl::ascii_tolower(a[i - 1]) == absl::ascii_tolower(b[j - 1]) ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string DashedList(const std::vector<std::string>& flags) {
  std::vector<std::string> dashed;
  dashed.reserve(flags.size());
  for (const std::string& flag : flags) dashed.push_back("--" + flag);
  return absl::StrJoin(dashed, ", ");
}

std::string TypeName(const absl::CommandLineFlag& flag) {
  if (flag.IsOfType<bool>()) return "bool";
  if (flag.IsOfType<int>() || flag.IsOfType<int64_t>()) return "int";
  if (flag.IsOfType<uint64_t>()) return "uint";
  if (flag.IsOfType<double>()) return "number";
  if (flag.IsOfType<std::string>()) return "string";
  if (flag.IsOfType<std::vector<std::string>>()) return "list";
  return "value";
}

// `text` wrapped at 98 columns, each line indented by `indent`.
std::string Wrap(absl::string_view text, size_t indent) {
  const std::string pad(indent, ' ');
  std::string out;
  std::string line;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!line.empty() && pad.size() + line.size() + 1 + word.size() > 98) {
      absl::StrAppend(&out, pad, line, "\n");
      line.clear();
    }
    absl::StrAppend(&line, line.empty() ? "" : " ", word);
  }
  if (!line.empty()) absl::StrAppend(&out, pad, line, "\n");
  return out;
}

// "  --scheduler (string, default "", needs --backend=dask)" and its help, wrapped.
std::string FlagHelp(absl::string_view name, const std::vector<FlagCondition>& conditions,
                     absl::string_view own_help = "") {
  const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  if (flag == nullptr) return absl::StrCat("  --", name, "\n");
  const std::string value = flag->DefaultValue();
  std::string needs;
  for (const FlagCondition& condition : conditions) {
    if (condition.flag != name) continue;
    std::vector<std::string> wanted;
    for (const std::string& v : condition.values) {
      wanted.push_back(absl::StrCat("--", condition.on_flag, "=", v));
    }
    absl::StrAppend(&needs, ", needs ", absl::StrJoin(wanted, " or "));
  }
  return absl::StrCat("  --", name, " (", TypeName(*flag), ", default ",
                      value.empty() ? "\"\"" : value, needs, ")\n",
                      Wrap(own_help.empty() ? flag->Help() : std::string(own_help), 6));
}

std::string Synopsis(absl::string_view program, const Command& command) {
  return absl::StrCat(program, " ", command.name, command.flags.empty() ? "" : " [flags]",
                      command.arguments_synopsis.empty() ? "" : " ", command.arguments_synopsis,
                      command.accepts_command ? " [-- COMMAND ...]" : "");
}

// The value `line` gives `flag` (the last one), else its current value.
std::string ValueOf(const ScannedCommandLine& line, absl::string_view flag) {
  for (size_t i = line.flags.size(); i-- > 0;) {
    if (line.flags[i] == flag) return line.values[i];
  }
  const absl::CommandLineFlag* found = absl::FindCommandLineFlag(flag);
  return found == nullptr ? "" : found->CurrentValue();
}

}  // namespace

std::string ClosestName(absl::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const std::string& candidate : candidates) {
    size_t distance = EditDistance(word, candidate);
    // "--dask_conn" for --dask_connect_timeout: a prefix is as good as one typo.
    if (word.size() >= 4 && absl::StartsWith(candidate, word)) {
      distance = std::min<size_t>(1, distance);
    }
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

namespace {

// absl reads at most this much of a flag file; a flag file is a few lines of text.
constexpr int64_t kMaxFlagfileBytes = int64_t{1} << 20;
// --flagfile inside a flag file: deeper than this is a loop.
constexpr int kMaxFlagfileDepth = 8;

absl::Status ScanArguments(const std::vector<std::string>& arguments, absl::string_view flagfile,
                           int depth, ScannedCommandLine& line);

// The lines of flag file `path` as arguments, as absl reads them: whitespace trimmed, empty
// lines and "#" comments skipped, every other line one flag.
absl::Status ScanFlagfile(const std::string& path, int depth, ScannedCommandLine& line) {
  if (depth >= kMaxFlagfileDepth) {
    return UsageError(absl::StrCat("--flagfile=", path, ": flag files nest deeper than ",
                                   kMaxFlagfileDepth,
                                   " levels (a flag file that includes itself?)"));
  }
  absl::StatusOr<std::string> text = ReadBoundedFile(path, kMaxFlagfileBytes, "a flag file");
  if (!text.ok()) {
    return UsageError(absl::StrCat("--flagfile=", path, ": ", text.status().message()));
  }
  std::vector<std::string> arguments;
  int number = 0;
  for (absl::string_view raw : absl::StrSplit(*text, '\n')) {
    ++number;
    const absl::string_view stripped = absl::StripAsciiWhitespace(raw);
    if (stripped.empty() || stripped.front() == '#') continue;
    if (stripped.front() != '-' || stripped == "--") {
      return UsageError(absl::StrCat("flag file '", path, "' line ", number, ": '", stripped,
                                     "' is not a flag (each line is one --flag=value)"));
    }
    arguments.emplace_back(stripped);
  }
  return ScanArguments(arguments, path, depth + 1, line);
}

struct KnownFlag {
  absl::CommandLineFlag* flag = nullptr;
  bool negated = false;  // --noNAME of boolean --NAME
};

// The flag --`name` names, or --noNAME's boolean flag; else a usage error naming the closest
// known flag.
absl::StatusOr<KnownFlag> FindKnownFlag(absl::string_view name, const std::string& where) {
  KnownFlag known;
  known.flag = absl::FindCommandLineFlag(name);
  if ((known.flag == nullptr || known.flag->IsRetired()) && absl::StartsWith(name, "no")) {
    absl::CommandLineFlag* positive = absl::FindCommandLineFlag(name.substr(2));
    if (positive != nullptr && !positive->IsRetired() && positive->IsOfType<bool>()) {
      known.flag = positive;
      known.negated = true;
    }
  }
  if (known.flag == nullptr || known.flag->IsRetired()) {
    const std::string closest = ClosestName(name, AllFlagNames());
    return UsageError(absl::StrCat(
        "unknown flag --", name,
        closest.empty() ? "" : absl::StrCat(" (did you mean --", closest, "?)"), where));
  }
  return known;
}

// Scans `arguments` (the command line, or a flag file's lines when `flagfile` names it).
absl::Status ScanArguments(const std::vector<std::string>& arguments, absl::string_view flagfile,
                           int depth, ScannedCommandLine& line) {
  const std::string where =
      flagfile.empty() ? "" : absl::StrCat(" (in flag file '", flagfile, "')");
  for (size_t i = 0; i < arguments.size(); ++i) {
    const absl::string_view argument = arguments[i];
    if (argument == "--") {
      line.has_command_separator = true;
      line.command.assign(arguments.begin() + static_cast<std::ptrdiff_t>(i) + 1, arguments.end());
      break;
    }
    if (argument.size() < 2 || argument.front() != '-') {
      line.positional.emplace_back(argument);
      continue;
    }
    absl::string_view body = argument.substr(absl::StartsWith(argument, "--") ? 2 : 1);
    const size_t equals = body.find('=');
    const bool has_value = equals != absl::string_view::npos;
    const absl::string_view name = body.substr(0, equals);
    std::string value = has_value ? std::string(body.substr(equals + 1)) : "";
    if (name.empty()) {
      return UsageError(absl::StrCat("malformed flag '", argument, "'", where));
    }
    if (IsHelpFlag(name)) {
      line.help = true;
      continue;
    }
    if (name == "flagfile") {
      // Its flags are checked against the mode like the command line's; absl reads the file
      // again when it parses.
      if (!has_value) {
        if (i + 1 >= arguments.size() || arguments[i + 1] == "--") {
          return UsageError(absl::StrCat("--flagfile needs a value (--flagfile=FILE)", where));
        }
        value = arguments[++i];
      }
      for (absl::string_view path : absl::StrSplit(value, ',', absl::SkipEmpty())) {
        if (absl::Status s = ScanFlagfile(std::string(path), depth, line); !s.ok()) return s;
      }
      continue;
    }
    if (IsAbslSpecialFlag(name)) {
      line.absl_special = true;
      if (!has_value && AbslSpecialTakesValue(name)) ++i;
      continue;
    }
    absl::StatusOr<KnownFlag> known = FindKnownFlag(name, where);
    if (!known.ok()) return known.status();
    absl::CommandLineFlag* flag = known->flag;
    if (flag->IsOfType<bool>()) {
      if (known->negated) {
        if (has_value) {
          return UsageError(
              absl::StrCat("--", name, " takes no value, got '", argument, "'", where));
        }
        value = "false";
      } else if (!has_value) {
        value = "true";
      }
    } else if (!has_value) {
      if (!flagfile.empty() || i + 1 >= arguments.size() || arguments[i + 1] == "--") {
        return UsageError(absl::StrCat("--", name, " needs a value (--", name, "=VALUE)", where));
      }
      value = arguments[++i];
    }
    // Parsing sets the flag, as absl will again: only whether the value parses matters here.
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return UsageError(absl::StrCat("--", flag->Name(), ": ", error, where));
    }
    line.flags.emplace_back(flag->Name());
    line.values.push_back(std::move(value));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ScannedCommandLine> ScanCommandLine(int argc, char** argv) {
  ScannedCommandLine line;
  const std::vector<std::string> arguments(argv + std::min(argc, 1), argv + argc);
  if (absl::Status s = ScanArguments(arguments, "", 0, line); !s.ok()) return s;
  return line;
}

const Command* FindCommand(const std::vector<Command>& commands, absl::string_view name) {
  for (const Command& command : commands) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

absl::Status UnknownCommandError(const std::vector<Command>& commands, absl::string_view name) {
  std::vector<std::string> names;
  for (const Command& command : commands) names.push_back(command.name);
  const std::string closest = ClosestName(name, names);
  return UsageError(
      absl::StrCat("unknown mode '", name, "'",
                   closest.empty() ? "" : absl::StrCat(" (did you mean '", closest, "'?)"),
                   "; modes: ", absl::StrJoin(names, ", "), "; see --help"));
}

absl::Status CheckInvocation(const Command& command, const ScannedCommandLine& line) {
  std::vector<std::string> problems;
  std::set<std::string> reported;
  for (const std::string& flag : line.flags) {
    if (!reported.insert(flag).second) continue;
    if (std::find(command.flags.begin(), command.flags.end(), flag) == command.flags.end() &&
        std::find(command.hidden_flags.begin(), command.hidden_flags.end(), flag) ==
            command.hidden_flags.end()) {
      problems.push_back(absl::StrCat(
          "--", flag, " does not apply to '", command.name, "'",
          command.flags.empty() ? " (it takes no flags)"
                                : absl::StrCat(" (its flags: ", DashedList(command.flags), ")")));
      continue;
    }
    for (const FlagCondition& condition : command.conditions) {
      if (condition.flag != flag) continue;
      const std::string value = ValueOf(line, condition.on_flag);
      if (std::find(condition.values.begin(), condition.values.end(), value) !=
          condition.values.end()) {
        continue;
      }
      std::vector<std::string> wanted;
      for (const std::string& v : condition.values) {
        wanted.push_back(absl::StrCat("--", condition.on_flag, "=", v));
      }
      problems.push_back(absl::StrCat("--", flag, " needs ", absl::StrJoin(wanted, " or "),
                                      " (this is --", condition.on_flag, "=", value, ")"));
    }
  }
  const int count = static_cast<int>(line.positional.size()) -
                    (line.positional.empty() || line.positional.front() != command.name ? 0 : 1);
  if (count < command.min_arguments ||
      (command.max_arguments != Command::kUnlimited && count > command.max_arguments)) {
    problems.push_back(absl::StrCat(
        "usage: collect ", command.name, command.arguments_synopsis.empty() ? "" : " ",
        command.arguments_synopsis, " (",
        command.arguments_problem.empty() ? "no arguments" : command.arguments_problem,
        count > command.max_arguments && command.max_arguments != Command::kUnlimited
            ? absl::StrCat("; unexpected: ",
                           absl::StrJoin(line.positional.end() - (count - command.max_arguments),
                                         line.positional.end(), " "))
            : "",
        ")"));
  }
  if (line.has_command_separator && !command.accepts_command) {
    problems.push_back(absl::StrCat("'", command.name, "' takes no command after --"));
  }
  if (problems.empty()) return absl::OkStatus();
  return UsageError(absl::StrJoin(problems, "\ncollect: "));
}

std::string CommandHelp(absl::string_view program, const Command& command) {
  std::string text = absl::StrCat("Usage: ", Synopsis(program, command), "\n\n");
  absl::StrAppend(&text, Wrap(command.summary, 0));
  if (!command.help.empty()) absl::StrAppend(&text, "\n", command.help);
  if (!command.flags.empty()) {
    absl::StrAppend(&text, "\nFlags of '", command.name, "':\n");
    for (const std::string& flag : command.flags) {
      absl::string_view own;
      for (const auto& [name, help] : command.flag_help) {
        if (name == flag) own = help;
      }
      absl::StrAppend(&text, FlagHelp(flag, command.conditions, own));
    }
  }
  absl::StrAppend(&text, "\n", ExitCodeTable(command.exit_codes));
  return text;
}

std::string ToolHelp(absl::string_view program, const std::vector<Command>& commands,
                     absl::string_view intro, absl::string_view outro) {
  std::string text = absl::StrCat(intro, "\nModes (`", program, " MODE --help` for one):\n");
  std::vector<std::string> all;
  std::vector<FlagCondition> conditions;
  for (const Command& command : commands) {
    conditions.insert(conditions.end(), command.conditions.begin(), command.conditions.end());
    absl::StrAppend(&text, "  ", Synopsis(program, command), "\n", Wrap(command.summary, 6));
    if (!command.flags.empty()) {
      absl::StrAppend(&text, Wrap(absl::StrCat("flags: ", DashedList(command.flags)), 6));
    }
    for (const std::string& flag : command.flags) {
      if (std::find(all.begin(), all.end(), flag) == all.end()) all.push_back(flag);
    }
  }
  absl::StrAppend(&text, "\nFlags:\n");
  for (const std::string& flag : all) absl::StrAppend(&text, FlagHelp(flag, conditions));
  absl::StrAppend(&text, "\n", outro);
  return text;
}

}  // namespace roastcoffea
