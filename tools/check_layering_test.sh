#!/usr/bin/env bash
# check_layering.sh on saved query graphs: a clean one passes; an upward and a sideways edge
# fail with exit 1, each named; a package missing from the layer order fails with exit 2. A flag
# read (absl::GetFlag) outside tools/collect_flags.cc fails with exit 1, naming the file.
set -uo pipefail
script=tools/check_layering.sh
data=tools/testdata
failures=0

expect() {  # expect DESCRIPTION WANT_STATUS GRAPH [PATTERN...]
  local description=$1 want=$2 graph=$3
  shift 3
  local output status
  output=$("$script" "$PWD/$graph" 2>&1)
  status=$?
  if [[ $status -ne $want ]]; then
    echo "FAIL ${description}: exit ${status}, want ${want}; output:"; echo "$output"
    failures=$((failures + 1))
    return
  fi
  for pattern in "$@"; do
    if ! grep -qF -- "$pattern" <<<"$output"; then
      echo "FAIL ${description}: output lacks '${pattern}'; output:"; echo "$output"
      failures=$((failures + 1))
    fi
  done
}

expect "clean graph" 0 "$data/layering_clean.graph" "every package dependency points down"
expect "upward and sideways edges" 1 "$data/layering_upward.graph" \
  "upward edge //export:legacy_measurement -> //tools:coffea_json (export may not depend on tools)" \
  "sideways edge //io:bounded_read -> //stats:percentile (io may not depend on stats)" \
  "2 edge(s) against the layer order"
expect "unknown package" 2 "$data/layering_unknown.graph" "package newpkg is not in the layer order"

# Flag reads, in a source tree of its own: the reader, tests and testdata may read flags.
sources=$(mktemp -d "${TEST_TMPDIR:-/tmp}/sources.XXXXXX")
mkdir -p "$sources/tools/testdata" "$sources/backends/dask"
echo 'int A() { return absl::GetFlag(FLAGS_a); }' >"$sources/tools/collect_flags.cc"
echo 'TEST(A, B) { absl::GetFlag(FLAGS_a); }' >"$sources/tools/collect_flags_test.cc"
echo 'int A() { return absl::GetFlag(FLAGS_a); }' >"$sources/tools/testdata/example.cc"
echo 'absl::SetFlag(&FLAGS_a, 1);  // only the reader calls GetFlag' >"$sources/tools/set.cc"
CHECK_LAYERING_SOURCES=$sources expect "flags read by the reader only" 0 \
  "$data/layering_clean.graph" "flags are read in tools/collect_flags.cc only"
echo 'int B() { return absl::GetFlag (FLAGS_b); }' >"$sources/backends/dask/options.h"
echo 'int C() { return absl::GetFlag(FLAGS_c); }' >"$sources/tools/dask_collect.cc"
CHECK_LAYERING_SOURCES=$sources expect "flags read elsewhere" 1 "$data/layering_clean.graph" \
  "check_layering: backends/dask/options.h reads a flag (absl::GetFlag)" \
  "check_layering: tools/dask_collect.cc reads a flag (absl::GetFlag)" \
  "every package dependency points down"
rm -rf "$sources"

[[ $failures -eq 0 ]] && echo "PASS" || exit 1
