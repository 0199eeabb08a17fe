#!/usr/bin/env bash
# check_layering.sh on saved query graphs: a clean one passes; an upward and a sideways edge
# fail with exit 1, each named; a package missing from the layer order fails with exit 2.
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

[[ $failures -eq 0 ]] && echo "PASS" || exit 1
