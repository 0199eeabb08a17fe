#include "backends/dask/identity.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "io/untrusted_json.h"

namespace roastcoffea::dask {
namespace {

std::optional<double> NumberAt(const Value* map, absl::string_view key) {
  if (map == nullptr) return std::nullopt;
  const Value* v = map->Find(key);
  return v != nullptr ? v->AsDouble() : std::nullopt;
}

std::string TextOf(const Value* v) {
  if (v == nullptr) return "";
  if (v->is_str()) return EchoedText(v->text());
  if (v->is_number()) return v->DebugString(40);
  return "";
}

void ParseDigests(const Value& digests, std::vector<DigestEntry>& out) {
  if (!digests.is_map()) return;
  for (size_t i = 0; i < digests.size(); ++i) {
    const Value& label = digests.key(i);
    const std::optional<double> value = digests.value(i).AsDouble();
    if (!value.has_value() || !label.is_array() || label.size() < 3) continue;
    std::vector<std::string> parts;
    bool all_str = true;
    for (const Value& part : label.items()) {
      all_str = all_str && part.is_str();
      parts.push_back(EchoedText(part.text()));
    }
    if (!all_str) continue;
    DigestEntry entry;
    entry.context = parts.front();
    entry.unit = parts.back();
    entry.activity = parts[parts.size() - 2];
    if (parts.size() >= 4) entry.task_prefix = parts[1];
    entry.value = *value;
    out.push_back(std::move(entry));
  }
}

}  // namespace

absl::StatusOr<SchedulerSnapshot> ParseIdentity(const Value& reply) {
  if (!reply.is_map()) {
    return absl::InvalidArgumentError(
        absl::StrCat("identity reply is not a map: ", reply.DebugString(80)));
  }
  SchedulerSnapshot snapshot;
  snapshot.scheduler_id = TextOf(reply.Find("id"));
  snapshot.address = TextOf(reply.Find("address"));
  const Value* workers = reply.Find("workers");
  if (workers == nullptr || !workers->is_map()) {
    return absl::InvalidArgumentError(
        absl::StrCat("identity reply has no 'workers' map: ", reply.DebugString(120)));
  }
  snapshot.workers.reserve(workers->size());
  for (size_t i = 0; i < workers->size(); ++i) {
    const Value& address = workers->key(i);
    const Value& info = workers->value(i);
    if (!address.is_str() || !info.is_map()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "identity worker entry ", i, " is not address -> map: ", address.DebugString(80)));
    }
    WorkerSnapshot w;
    w.address = EchoedText(address.text());
    const std::optional<double> nthreads = NumberAt(&info, "nthreads");
    const std::optional<double> last_seen = NumberAt(&info, "last_seen");
    if (!nthreads.has_value() || !last_seen.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("identity worker ", w.address, " lacks a numeric nthreads or last_seen"));
    }
    w.nthreads = *nthreads;
    w.last_seen_unix_seconds = *last_seen;
    w.memory_limit_bytes = NumberAt(&info, "memory_limit").value_or(0);
    w.host = TextOf(info.Find("host"));
    w.name = TextOf(info.Find("name"));
    w.status = TextOf(info.Find("status"));
    const Value* metrics = info.Find("metrics");
    if (metrics != nullptr && metrics->is_map()) {
      w.memory_bytes = NumberAt(metrics, "memory").value_or(0);
      w.cpu_percent = NumberAt(metrics, "cpu").value_or(0);
      w.managed_bytes = NumberAt(metrics, "managed_bytes").value_or(0);
      if (const Value* counts = metrics->Find("task_counts"); counts != nullptr) {
        // ≥ 2022.10.1; ≥ 2023.2.1 lists only non-zero states.
        w.executing_tasks = NumberAt(counts, "executing").value_or(0) +
                            NumberAt(counts, "long-running").value_or(0);
        w.worker_side_active_tasks = w.executing_tasks + NumberAt(counts, "ready").value_or(0) +
                                     NumberAt(counts, "constrained").value_or(0);
      } else {  // ≤ 2022.10.0
        w.executing_tasks = NumberAt(metrics, "executing").value_or(0);
        w.worker_side_active_tasks = w.executing_tasks + NumberAt(metrics, "ready").value_or(0);
      }
      const Value* spilled = metrics->Find("spilled_bytes");
      if (spilled == nullptr) spilled = metrics->Find("spilled_nbytes");
      w.spilled_bytes = NumberAt(spilled, "disk");
      if (const Value* net = metrics->Find("host_net_io"); net != nullptr) {
        w.network_read_bytes_per_second = NumberAt(net, "read_bps");
        w.network_write_bytes_per_second = NumberAt(net, "write_bps");
      } else {
        w.network_read_bytes_per_second = NumberAt(metrics, "read_bytes");
        w.network_write_bytes_per_second = NumberAt(metrics, "write_bytes");
      }
      if (const Value* disk = metrics->Find("host_disk_io"); disk != nullptr) {
        w.disk_read_bytes_per_second = NumberAt(disk, "read_bps");
        w.disk_write_bytes_per_second = NumberAt(disk, "write_bps");
      } else {
        w.disk_read_bytes_per_second = NumberAt(metrics, "read_bytes_disk");
        w.disk_write_bytes_per_second = NumberAt(metrics, "write_bytes_disk");
      }
      if (const Value* digests = metrics->Find("digests_total_since_heartbeat");
          digests != nullptr) {
        w.has_digests = true;
        ParseDigests(*digests, w.digests);
      }
    }
    snapshot.workers.push_back(std::move(w));
  }
  return snapshot;
}

}  // namespace roastcoffea::dask
