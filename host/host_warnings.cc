#include "host/host_warnings.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace roastcoffea {
namespace host {
namespace {

v1::Warning MakeWarning(const std::string& code, const std::string& message) {
  v1::Warning warning;
  warning.set_code(code);
  warning.set_message(message);
  return warning;
}

// "2", "1.5": CPU counts may be fractional under a cgroup quota.
std::string Cpus(double cpus) { return absl::StrFormat("%g", cpus); }

std::string Plural(double count, const char* one, const char* many) {
  return absl::StrCat(Cpus(count), " ", count == 1 ? one : many);
}

}  // namespace

std::vector<v1::Warning> HostWarnings(const v1::HostFacts& facts,
                                      const HostWarningOptions& options) {
  std::vector<v1::Warning> warnings;
  const double usable = facts.usable_cpus();
  if (options.in_process_worker_threads.has_value() && usable > 0 &&
      *options.in_process_worker_threads > usable) {
    warnings.push_back(MakeWarning(
        "oversubscribed",
        absl::StrCat(Plural(*options.in_process_worker_threads, "worker thread", "worker threads"),
                     " on ", Plural(usable, "usable CPU", "usable CPUs"),
                     ": threads wait for a CPU; CPU efficiency and speedup are limited to ",
                     Plural(usable, "core", "cores"))));
  }

  const int online = facts.online_cpus();
  if (online > 0) {
    // The load average counts the whole machine, so it is compared with the online CPUs. At the
    // end it includes our own workers, which are not "other work".
    const int own = options.in_process_worker_threads.value_or(0);
    std::vector<std::string> overloads;
    if (facts.has_load_average_1m_start() && facts.load_average_1m_start() > online) {
      overloads.push_back(absl::StrFormat("%.2f at the start", facts.load_average_1m_start()));
    }
    if (facts.has_load_average_1m_end() && facts.load_average_1m_end() - own > online) {
      std::string end = absl::StrFormat("%.2f at the end", facts.load_average_1m_end());
      if (own > 0) absl::StrAppend(&end, " (", own, " of them our worker threads)");
      overloads.push_back(std::move(end));
    }
    if (!overloads.empty()) {
      warnings.push_back(MakeWarning(
          "host_overloaded",
          absl::StrCat("1-minute load average ", absl::StrJoin(overloads, " and "), " on ",
                       Plural(online, "online CPU", "online CPUs"),
                       ": other work competed for the CPUs; timings are slower and noisier")));
    }
  }

  if (facts.has_steal_fraction() && facts.steal_fraction() > options.steal_fraction_threshold) {
    warnings.push_back(MakeWarning(
        "steal_time",
        absl::StrFormat("hypervisor steal took %.1f %% of the CPU time (%.2f s over %d CPUs): "
                        "the virtual machine waited for its host; timings are slower and noisier",
                        100 * facts.steal_fraction(), facts.steal_seconds(), online)));
  }

  if (options.measured_build.has_value() && !options.measured_build->optimized()) {
    warnings.push_back(MakeWarning(
        "unoptimized_build",
        absl::StrCat("the measured code was built without optimisation (",
                     options.measured_build->build_mode(), ", ", options.measured_build->compiler(),
                     "): timings are not representative; build with -c opt")));
  }
  return warnings;
}

}  // namespace host
}  // namespace roastcoffea
