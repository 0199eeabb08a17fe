#!/usr/bin/env bash
# Guards the cost of each stage (issue #25): runs //bench:stage_benchmark on 10^5 chunks and
# 10^3 workers, and on issue #25's TaskVine case (--records=taskvine: 10^5 rich records and the
# engine's log of their 10^5 tasks on 100 workers, its stages named taskvine/...), and fails when a stage's CPU time or peak memory is more than twice the numbers
# checked in as bench/stage_costs_baseline.tsv (plus a small floor, so that stages that take a
# few milliseconds or megabytes cannot fail on noise). CPU time, not wall time: a loaded CI
# machine stretches wall time, much less the CPU time the process itself uses.
#   tools/check_stage_costs.sh            check (CI: .ci/run)
#   tools/check_stage_costs.sh --update   rewrite the baseline from this machine's run
#   tools/check_stage_costs.sh --baseline=FILE   check against FILE instead
# After a deliberate change of a stage's cost, run --update on a quiet machine and commit the
# file with the reason.
set -uo pipefail
cd "$(dirname "$0")/.."
baseline=bench/stage_costs_baseline.tsv
mode=check
for arg in "$@"; do
  case "$arg" in
    --update) mode=update ;;
    --baseline=*) baseline=${arg#--baseline=} ;;
    *) echo "usage: tools/check_stage_costs.sh [--update] [--baseline=FILE]" >&2; exit 2 ;;
  esac
done
readonly chunks=100000 workers=1000 taskvine_workers=100
readonly cpu_floor_seconds=0.05 memory_floor_bytes=$((16 * 1024 * 1024))

if ! ./bazelw build -c opt //bench:stage_benchmark >/tmp/check_stage_costs_build.$$ 2>&1; then
  tail -20 /tmp/check_stage_costs_build.$$
  rm -f /tmp/check_stage_costs_build.$$
  echo "check_stage_costs: the benchmark does not build"
  exit 1
fi
rm -f /tmp/check_stage_costs_build.$$
binary="$(./bazelw info -c opt bazel-bin 2>/dev/null)/bench/stage_benchmark"
measured=$(mktemp)
trap 'rm -f "$measured"' EXIT
if ! "$binary" --chunks=$chunks --workers=$workers >"$measured"; then
  echo "check_stage_costs: the benchmark failed"
  exit 1
fi
taskvine=$(mktemp)
trap 'rm -f "$measured" "$taskvine"' EXIT
if ! "$binary" --records=taskvine --chunks=$chunks --workers=$taskvine_workers >"$taskvine"; then
  echo "check_stage_costs: the benchmark failed (--records=taskvine)"
  exit 1
fi
awk -F'\t' 'BEGIN { OFS = "\t" } NR > 1 { $1 = "taskvine/" $1; print }' "$taskvine" >>"$measured"

if [[ $mode == update ]]; then
  {
    echo "# //bench:stage_benchmark --chunks=$chunks --workers=$workers (-c opt), and with"
    echo "# --records=taskvine --workers=$taskvine_workers (taskvine/...), $(date -u +%F),"
    echo "# load average $(cut -d' ' -f1-3 /proc/loadavg). Columns: stage, cpu_seconds, peak_bytes."
    awk -F'\t' 'NR > 1 { print $1 "\t" $4 "\t" $7 }' "$measured"
  } >"$baseline"
  echo "check_stage_costs: wrote $baseline"
  exit 0
fi

# Joins the run with the baseline by stage; a stage missing from either side fails too.
awk -F'\t' -v cpu_floor="$cpu_floor_seconds" -v memory_floor="$memory_floor_bytes" '
  FNR == NR { if ($0 !~ /^#/ && NF >= 3) { base_cpu[$1] = $2; base_memory[$1] = $3 } next }
  FNR == 1 { next }
  {
    seen[$1] = 1
    if (!($1 in base_cpu)) { printf "%-22s not in the baseline\n", $1; bad++; next }
    cpu_limit = 2 * base_cpu[$1] + cpu_floor
    memory_limit = 2 * base_memory[$1] + memory_floor
    verdict = "ok"
    if ($4 > cpu_limit) { verdict = "CPU TIME GREW"; bad++ }
    if ($7 > memory_limit) { verdict = verdict == "ok" ? "MEMORY GREW" : verdict ", MEMORY GREW"; bad++ }
    printf "%-22s cpu %7.3f s (limit %7.3f)  peak %7.1f MiB (limit %7.1f)  %s\n", $1, $4, \
           cpu_limit, $7 / 1048576, memory_limit / 1048576, verdict
  }
  END {
    for (stage in base_cpu) if (!(stage in seen)) { printf "%-22s not measured\n", stage; bad++ }
    printf "check_stage_costs: %d problem(s) against 2x the baseline\n", bad
    exit bad > 0
  }' "$baseline" "$measured"
