#!/bin/bash
# Builds and runs examples/ (a separate Bazel workspace that depends on this one through
# local_repository) so the public targets of //instrumentation and //collector cannot silently
# break, and reads the measurement the example saved with `collect show`.
# The source tree is found through a runfile (a symlink into it), copied to a temporary
# directory, and built there by a fresh Bazel with its own output root: nothing is written to
# the checkout, and nothing but Debian's system libraries is needed (no network).
set -euo pipefail

runfile="${TEST_SRCDIR}/${TEST_WORKSPACE}/tests/BUILD"
collect="${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/collect"
source_root="$(dirname "$(dirname "$(readlink -f "${runfile}")")")"
for required in WORKSPACE examples/WORKSPACE examples/BUILD instrumentation/BUILD collector/BUILD; do
  if [[ ! -f "${source_root}/${required}" ]]; then
    echo "cannot find the source tree: ${source_root}/${required} is missing" >&2
    exit 1
  fi
done

bazel_binary="$(command -v bazel || true)"
if [[ -z "${bazel_binary}" && -x /usr/bin/bazel ]]; then bazel_binary=/usr/bin/bazel; fi
if [[ -z "${bazel_binary}" ]]; then
  echo "bazel is not on PATH (${PATH})" >&2
  exit 1
fi

work="${TEST_TMPDIR}/src"
mkdir -p "${work}"
# What the example's build reads: roastcoffea's WORKSPACE-level files, the packages in the
# dependency closure of @roastcoffea//instrumentation, //collector and //backends/threadpool,
# and the example itself.
for item in WORKSPACE BUILD .bazelignore third_party schema instrumentation collector backends \
  aggregation export host io profile stats store trace tools examples; do
  cp -RL "${source_root}/${item}" "${work}/"
done

trace="${TEST_TMPDIR}/jets_trace.json"
measurements="${TEST_TMPDIR}/measurements"
cd "${work}/examples"
# --batch: no server is left behind; --symlink_prefix=/: no bazel-* links in the copy.
"${bazel_binary}" --batch --nohome_rc --output_user_root="${TEST_TMPDIR}/bazel_root" \
  run --symlink_prefix=/ //:jet_analysis -- "${trace}" "${measurements}" 2>"${TEST_TMPDIR}/bazel.log" \
  | tee "${TEST_TMPDIR}/output.txt" || {
  echo "building or running the example failed; Bazel's log:" >&2
  tail -50 "${TEST_TMPDIR}/bazel.log" >&2
  exit 1
}

grep -q "^example: OK$" "${TEST_TMPDIR}/output.txt"
grep -q "chunks 12, failed 1" "${TEST_TMPDIR}/output.txt"
grep -q "corrupt basket in corrupt.root" "${TEST_TMPDIR}/output.txt"
grep -q '"traceEvents"' "${trace}"
grep -q '"name":"fill_histogram"' "${trace}"

# The measurement the example saved of its own run, read by collect.
saved="$(sed -n 's/^measurement saved to //p' "${TEST_TMPDIR}/output.txt")"
if [[ -z "${saved}" || ! -d "${saved}" ]]; then
  echo "the example did not report a saved measurement directory" >&2
  exit 1
fi
"${collect}" show "${saved}" --tables=ascii >"${TEST_TMPDIR}/show.txt" 2>&1 || {
  echo "collect show ${saved} failed:" >&2
  cat "${TEST_TMPDIR}/show.txt" >&2
  exit 1
}
"${collect}" show "${saved}" --format=csv >"${TEST_TMPDIR}/show.csv"
grep -q "Backend: threadpool" "${TEST_TMPDIR}/show.txt"
grep -q "^num_chunks,12," "${TEST_TMPDIR}/show.csv"
grep -q "^num_failed_chunks,1," "${TEST_TMPDIR}/show.csv"
echo "PASS: the example workspace builds against @roastcoffea//instrumentation and //collector,"
echo "runs, and saves a measurement that collect show reads"
