#!/usr/bin/env bash
# Checks that every C++ file of the project is formatted by clang-format with the repository's
# .clang-format (Google style, 100 columns). Prints the files that are not and fails; run
# `tools/check_format.sh --fix` to format them in place.
set -uo pipefail
cd "$(dirname "$0")/.."
clang_format=$(command -v clang-format-14 || command -v clang-format || true)
if [[ -z "$clang_format" ]]; then
  echo "check_format: clang-format not found (apt-get install clang-format)" >&2
  exit 1
fi
mapfile -t files < <(git ls-files '*.cc' '*.h' | grep -v '^third_party/')
if [[ "${1:-}" == "--fix" ]]; then
  "$clang_format" -i "${files[@]}"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  if ! "$clang_format" --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "check_format: not formatted: $f (run tools/check_format.sh --fix)"
    bad=$((bad + 1))
  fi
done
echo "check_format: ${#files[@]} files, ${bad} not formatted"
[[ $bad -eq 0 ]]
