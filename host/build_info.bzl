"""Bazel's compilation mode for //host:build_info (ROASTCOFFEA_BUILD_INFO())."""

def compilation_mode_defines():
    """local_defines that tell ROASTCOFFEA_BUILD_INFO() the -c mode ("opt", "fastbuild", "dbg")."""
    return select({
        "//host:compilation_mode_opt": ["ROASTCOFFEA_COMPILATION_MODE=opt"],
        "//host:compilation_mode_dbg": ["ROASTCOFFEA_COMPILATION_MODE=dbg"],
        "//conditions:default": ["ROASTCOFFEA_COMPILATION_MODE=fastbuild"],
    })
