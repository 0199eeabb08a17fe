#!/usr/bin/env bash
# check_layering.sh: every dependency between packages points down the layer order of
# docs/ARCHITECTURE.md ("Package map"). Fails naming each offending edge.
#
#   tools/check_layering.sh              queries the workspace (./bazelw query //...)
#   tools/check_layering.sh GRAPH_FILE   checks a saved `bazel query --output=graph
#                                        --graph:factored=false` of //... instead
#
# A package is its top-level directory (backends/dask belongs to backends). An edge from layer
# A to layer B is allowed when B is lower than A, or both are the same package. Two different
# packages of one layer may not depend on each other. Every edge counts: libraries, tests,
# binaries and data dependencies alike.
#
# It also checks that global flags are read in one place: absl::GetFlag may appear in no
# production source (.cc, .h; tests and testdata aside) but tools/collect_flags.cc, which reads
# every flag into the commands' typed configs. $CHECK_LAYERING_SOURCES names the source tree to
# scan (default: the workspace). Exit status: 0 clean, 1 upward or sideways edges or a flag
# read elsewhere, 2 the query failed or a package is missing from the order below.
set -uo pipefail
cd "$(dirname "$0")/.."

# Lowest layer first; packages on one line form one layer.
LAYERS=(
  "tools/build_defs"             # build rules (cc_fuzz_test's driver), usable by everything
  "schema"
  "io stats"
  "host"
  "instrumentation"
  "profile sample_analysis"   # sample_analysis: the built-in analysis collect measures
  "backends"
  "aggregation"
  "store trace"
  "ingest"
  "collector"
  "export"
  "live"
  "tools"
  "tests bench"
)

graph_file=${1:-}
if [[ -z "$graph_file" ]]; then
  graph_file=$(mktemp)
  trap 'rm -f "$graph_file"' EXIT
  if ! ./bazelw query --noshow_progress --output=graph --graph:factored=false //... \
      >"$graph_file" 2>"$graph_file.err"; then
    cat "$graph_file.err" >&2
    rm -f "$graph_file.err"
    echo "check_layering: bazel query failed" >&2
    exit 2
  fi
  rm -f "$graph_file.err"
fi

# Global flags: one reader.
FLAG_READER=tools/collect_flags.cc
flag_status=0
sources=${CHECK_LAYERING_SOURCES:-.}
while IFS= read -r file; do
  file=${file#"$sources"/}
  [[ "$file" == "$FLAG_READER" ]] && continue
  echo "check_layering: ${file} reads a flag (absl::GetFlag): only ${FLAG_READER} reads flags, into the commands' typed configs"
  flag_status=1
done < <(grep -rlE --include='*.cc' --include='*.h' --exclude='*_test.cc' --exclude-dir=testdata \
           --exclude-dir='bazel-*' --exclude-dir=.git '\bGetFlag[[:space:]]*\(' "$sources" | sort)
[[ $flag_status -eq 0 ]] && echo "check_layering: flags are read in ${FLAG_READER} only"

layer_spec=""
for i in "${!LAYERS[@]}"; do
  for package in ${LAYERS[$i]}; do layer_spec+="${package}=${i} "; done
done

awk -v spec="$layer_spec" '
  BEGIN {
    n = split(spec, entries, " ")
    for (i = 1; i <= n; i++) {
      split(entries[i], kv, "=")
      layer[kv[1]] = kv[2]
    }
  }
  # The package of a label: tools/build_defs stands alone, otherwise the top-level directory.
  function package_of(label,   path) {
    path = label
    sub(/^"?\/\//, "", path)
    sub(/[:"].*$/, "", path)
    if (path == "tools/build_defs" || index(path, "tools/build_defs/") == 1) return "tools/build_defs"
    sub(/\/.*$/, "", path)
    return path
  }
  / -> / {
    from = $1; to = $3
    if (from !~ /^"\/\// || to !~ /^"\/\//) next
    a = package_of(from); b = package_of(to)
    if (a == b) next
    if (!(a in layer)) { missing[a] = 1; next }
    if (!(b in layer)) { missing[b] = 1; next }
    if (layer[b] < layer[a]) next
    gsub(/"/, "", from); gsub(/"/, "", to)
    kind = (layer[b] == layer[a]) ? "sideways" : "upward"
    printf("check_layering: %s edge %s -> %s (%s may not depend on %s)\n", kind, from, to, a, b)
    bad++
  }
  END {
    for (p in missing) {
      printf("check_layering: package %s is not in the layer order of tools/check_layering.sh\n", p)
      status = 2
    }
    if (status == 2) exit 2
    if (bad > 0) { printf("check_layering: %d edge(s) against the layer order\n", bad); exit 1 }
    print "check_layering: every package dependency points down the layer order"
  }
' "$graph_file"
layer_status=$?
if [[ $layer_status -ne 0 ]]; then exit "$layer_status"; fi
exit "$flag_status"
