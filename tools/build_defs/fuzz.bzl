"""cc_fuzz_test: one fuzz target, two ways to run it.

The target's source defines `extern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t)`.

- Every build (gcc; also under --config=asan in CI): a cc_test that replays each corpus file,
  then a bounded number of deterministic mutations of them (bit flips, truncations, splices,
  random bytes), so malformed-input handling is exercised on every run.
- `--config=fuzz` (clang, libFuzzer, ASan): the same test runs libFuzzer, seeded with the
  corpus, for $FUZZ_SECONDS (default 20) seconds; crashes are written to the test's undeclared
  outputs. `.ci/run` runs these.
"""

def cc_fuzz_test(name, srcs, deps = [], corpus = [], tags = [], mutations = 20000, **kwargs):
    """`mutations`: how many the plain build replays (fewer for a target whose input is slow)."""
    native.cc_test(
        name = name,
        srcs = srcs + ["//tools/build_defs:fuzz_main.cc"],
        deps = deps,
        local_defines = select({
            "//tools/build_defs:fuzzing": ["ROASTCOFFEA_LIBFUZZER=1"],
            "//conditions:default": [],
        }),
        data = corpus,
        linkopts = select({
            # libFuzzer without its main(): fuzz_main.cc drives it (Debian's clang 14 runtime).
            "//tools/build_defs:fuzzing": [
                "-fsanitize=fuzzer-no-link",
                "/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer_no_main-x86_64.a",
            ],
            "//conditions:default": [],
        }),
        env = {
            "FUZZ_CORPUS": " ".join(["$(rootpath %s)" % c for c in corpus]),
            "FUZZ_MUTATIONS": str(mutations),
        },
        tags = tags + ["fuzz"],
        **kwargs
    )
