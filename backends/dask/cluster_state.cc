#include "backends/dask/cluster_state.h"

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "io/untrusted_json.h"

namespace roastcoffea::dask {
namespace {

// Reads one Python str literal ('...' or "...", with backslash escapes) at `pos`.
std::optional<std::string> ReadPyStr(absl::string_view s, size_t& pos) {
  if (pos >= s.size() || (s[pos] != '\'' && s[pos] != '"')) return std::nullopt;
  const char quote = s[pos++];
  std::string out;
  while (pos < s.size()) {
    const char c = s[pos++];
    if (c == quote) return out;
    if (c == '\\' && pos < s.size()) {
      out.push_back(s[pos++]);  // \' \" \\ are all a prefix would contain
      continue;
    }
    out.push_back(c);
  }
  return std::nullopt;
}

void SkipSpaces(absl::string_view s, size_t& pos) {
  while (pos < s.size() && s[pos] == ' ') ++pos;
}

}  // namespace

Value ClusterStateRequestArgs() {
  return ExcludeArgs({"tasks",
                      "transition_log",
                      "workers",
                      "clients",
                      "events",
                      "extensions",
                      "memory",
                      "task_groups",
                      "log",
                      "stimulus_log",
                      "logs",
                      "config",
                      "data",
                      "incoming_transfer_log",
                      "outgoing_transfer_log",
                      "transfer_incoming_log",
                      "transfer_outgoing_log",
                      "data_needed",
                      "executing",
                      "long_running",
                      "in_flight_tasks",
                      "in_flight_workers",
                      "ready",
                      "constrained",
                      "has_what",
                      "missing_dep_flight",
                      "fetch_count",
                      "busy_workers",
                      "actors"});
}

std::optional<std::pair<std::string, std::string>> ParsePrefixStateKey(absl::string_view repr) {
  if (repr.size() < 2) return std::nullopt;
  const char open = repr.front(), close = repr.back();
  if (!((open == '[' && close == ']') || (open == '(' && close == ')'))) return std::nullopt;
  size_t pos = 1;
  SkipSpaces(repr, pos);
  std::optional<std::string> prefix = ReadPyStr(repr, pos);
  SkipSpaces(repr, pos);
  if (!prefix.has_value() || pos >= repr.size() || repr[pos] != ',') return std::nullopt;
  ++pos;
  SkipSpaces(repr, pos);
  std::optional<std::string> state = ReadPyStr(repr, pos);
  SkipSpaces(repr, pos);
  if (!state.has_value() || pos != repr.size() - 1) return std::nullopt;
  return std::make_pair(*std::move(prefix), *std::move(state));
}

absl::StatusOr<CumulativeExecuting> ParseCumulativeExecuting(const Value& reply) {
  const Value* workers = reply.is_map() ? reply.Find("workers") : nullptr;
  if (workers == nullptr || !workers->is_map()) {
    return absl::InvalidArgumentError(
        absl::StrCat("get_cluster_state reply has no 'workers' map: ", reply.DebugString(120)));
  }
  CumulativeExecuting out;
  for (size_t i = 0; i < workers->size(); ++i) {
    if (!workers->key(i).is_str()) continue;
    const Value* elapsed = workers->value(i).Find("task_cumulative_elapsed");
    if (elapsed == nullptr || !elapsed->is_map()) continue;
    // Cut and escaped as identity's addresses and the task stream's prefixes are, so they join.
    std::map<std::string, double>& per_prefix = out[EchoedText(workers->key(i).text())];
    for (size_t j = 0; j < elapsed->size(); ++j) {
      const Value& key = elapsed->key(j);
      const std::optional<double> seconds = elapsed->value(j).AsDouble();
      if (!seconds.has_value()) continue;
      std::optional<std::pair<std::string, std::string>> parsed;
      if (key.is_str()) {
        parsed = ParsePrefixStateKey(key.text());
      } else if (key.is_array() && key.size() == 2 && key.items()[0].is_str() &&
                 key.items()[1].is_str()) {
        parsed = std::make_pair(key.items()[0].text(), key.items()[1].text());
      }
      if (parsed.has_value() && parsed->second == "executing") {
        per_prefix[EchoedText(parsed->first)] += *seconds;
      }
    }
  }
  if (out.empty() && workers->size() > 0) {
    return absl::NotFoundError(
        "get_cluster_state reply has no worker with task_cumulative_elapsed (distributed < "
        "2023.2.1)");
  }
  return out;
}

}  // namespace roastcoffea::dask
