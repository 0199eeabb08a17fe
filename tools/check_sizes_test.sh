#!/usr/bin/env bash
# check_sizes.py on a small tree it makes: a new long function or file fails (exit 1, named); the
# same with a reason comment (listed as exempt with its reason), in the baseline, or in a test
# file passes; a marker without a reason fails.
set -uo pipefail
script=$PWD/tools/check_sizes.py
root=$(mktemp -d "${TEST_TMPDIR:-/tmp}/sizes.XXXXXX")
mkdir -p "$root/tools" "$root/lib"
failures=0

long_function() {  # long_function NAME LINES [COMMENT]
  [[ -n ${3:-} ]] && echo "$3"
  echo "int $1(int x) {"
  for ((i = 0; i < $2; ++i)); do echo "  x += $i;"; done
  echo "  if (x > 0) { return x; }"
  echo "  return -x;"
  echo "}"
}

expect() {  # expect DESCRIPTION WANT_STATUS [PATTERN...]
  local description=$1 want=$2
  shift 2
  local output status
  output=$(SIZE_CHECK_ROOT=$root python3 "$script" 2>&1)
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

{ echo "namespace n {"; long_function Short 70; echo "}  // namespace n"; } > "$root/lib/a.cc"
expect "short functions" 0 "functions over 80 lines: 0; files over 800 lines: 0"

{ echo "namespace n {"; long_function Short 70; long_function Long 90; echo "}"; } > "$root/lib/a.cc"
expect "a new long function" 1 "functions over 80 lines: 1" "lib/a.cc:" "Long   NEW"

{ echo "namespace n {"; long_function Long 90 "// long-function: one table, kept whole"; echo "}"; } \
  > "$root/lib/a.cc"
expect "a long function with its reason" 0 "functions over 80 lines: 0" \
  "exempt, with a reason in a '// long-function:' comment above them: 1" \
  "lib/a.cc:3 Long   exempt: one table, kept whole"

{ echo "namespace n {"; echo "// One row per kind."; echo "// long-function: a table of kinds,"
  long_function Long 90 "// kept whole so each row reads beside its neighbours"; echo "}"; } \
  > "$root/lib/a.cc"
expect "a reason that wraps onto the next comment line" 0 "functions over 80 lines: 0" \
  "Long   exempt: a table of kinds, kept whole so each row reads beside its neighbours"

{ echo "namespace n {"; long_function Long 90 "// long-function:"; echo "}"; } > "$root/lib/a.cc"
expect "a marker without a reason" 1 "functions over 80 lines: 1" \
  "lib/a.cc:3 Long   NEW   MARKER WITHOUT A REASON" "without a reason above lib/a.cc:3 Long"

{ echo "namespace n {"; long_function Long 90 "// long-function: -"; echo "}"; } > "$root/lib/a.cc"
echo "function lib/a.cc Long" > "$root/tools/size_baseline.txt"
expect "a marker without a reason, even on a function in the baseline" 1 \
  "lib/a.cc:3 Long   MARKER WITHOUT A REASON"
rm "$root/tools/size_baseline.txt"

{ echo "namespace n {"; long_function Long 90 "// a long-function: mentioned in passing"; echo "}"; } \
  > "$root/lib/a.cc"
expect "the marker only counts at the start of a comment" 1 "Long   NEW"

{ echo "namespace n {"; long_function Long 90; echo "}"; } > "$root/lib/a.cc"
echo "function lib/a.cc Long" > "$root/tools/size_baseline.txt"
expect "a long function in the baseline" 0 "functions over 80 lines: 1"

{ echo "namespace n {"; for f in A B C D E F G H I J K; do long_function "$f" 75; done; echo "}"; } \
  > "$root/lib/b.cc"
expect "a new long file" 1 "files over 800 lines: 1" "lib/b.cc (file)   NEW"

rm "$root/lib/b.cc"
{ echo "namespace n {"; long_function Long 200; echo "}"; } > "$root/lib/b_test.cc"
expect "tests are not production code" 0

((failures == 0)) && echo "PASS" || exit 1
