#!/usr/bin/env python3
"""Size gate for production C++ code (issue #24): no function over 80 lines and no file over 800
lines, unless it is listed in tools/size_baseline.txt (the ones that were already there, to be cut
down) or a function carries a reason in the comment block just above it
("// long-function: why", the reason may wrap onto the next comment lines).

Reports both counts and every offender, then the exempt functions with their reasons; exits 1
when an offender is new (not in the baseline and without a reason) or a marker gives no reason.
`--write-baseline` rewrites the baseline from the tree as it is.

Production code: every .cc and .h under the repository except tests (*_test.cc, tests/,
test-only helpers named test_*.cc or *_testing.*, testdata/), fuzzers, benchmarks (bench/,
*_benchmark.cc) and third_party/. Function bodies are found by matching braces after a comment-
and string-free scan: a block at namespace or class scope whose head ends in a parameter list
(with qualifiers, a trailing return type or a constructor's initializer list) is a function;
its length runs from the first line of its head to its closing brace.
"""

import os
import re
import sys

MAX_FUNCTION_LINES = 80
MAX_FILE_LINES = 800
REASON_MARKER = "long-function:"
# SIZE_CHECK_ROOT: another tree to check (the script's own test).
ROOT = os.environ.get("SIZE_CHECK_ROOT") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASELINE = os.path.join(ROOT, "tools", "size_baseline.txt")
SKIP_DIRS = {"third_party", "tests", "bench", "testdata", ".git", "examples"}


def is_production(path):
    rel = os.path.relpath(path, ROOT)
    parts = rel.split(os.sep)
    if any(p in SKIP_DIRS or p.startswith("bazel-") for p in parts[:-1]):
        return False
    name = parts[-1]
    if not (name.endswith(".cc") or name.endswith(".h")):
        return False
    if name.endswith("_test.cc") or name.endswith("_fuzzer.cc") or name.endswith("_benchmark.cc"):
        return False
    if name.startswith("test_") or "_testing." in name or name.startswith("fake_"):
        return False
    if name in ("fixtures.cc", "fixtures.h", "findings_reference.cc", "findings_reference.h"):
        return False  # test-only libraries kept beside the code they test
    return True


def strip_code(text):
    """Comments, string and character literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_')):
            m = re.match(r'R"([^(\s]{0,16})\(', text[i:])
            if m:
                end = ")" + m.group(1) + '"'
                j = text.find(end, i + m.end())
                j = n if j < 0 else j + len(end)
                out.append(re.sub(r"[^\n]", " ", text[i:j]))
                i = j
            else:
                out.append(c)
                i += 1
        elif c == '"' or (c == "'" and not (i > 0 and (text[i - 1].isalnum()))):
            # A digit separator (1'000'000) follows a digit; a char literal does not.
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    code = "".join(out)
    # Preprocessor lines (with continuations) hold no function bodies.
    lines = code.split("\n")
    cont = False
    for k, line in enumerate(lines):
        if cont or line.lstrip().startswith("#"):
            cont = line.rstrip().endswith("\\")
            lines[k] = ""
    return "\n".join(lines)


HEAD_IS_FUNCTION = re.compile(
    r"\)\s*(?:const\b|noexcept\b(?:\([^()]*\))?|override\b|final\b|mutable\b|&&?|\s)*"
    r"(?:->\s*[\w:<>,\s*&]+)?\s*$")
INIT_LIST = re.compile(r"\)\s*(?:noexcept\s*)?:\s*[\w:]+\s*[({]")


def function_name(head):
    # The identifier before the first '(' at angle depth 0.
    depth = 0
    for k, ch in enumerate(head):
        if ch == "<":
            depth += 1
        elif ch == ">" and depth > 0:
            depth -= 1
        elif ch == "(" and depth == 0:
            m = re.search(r"((?:[\w~]+::)*(?:operator\s*\S+|[\w~]+))\s*$", head[:k])
            return m.group(1) if m else "(lambda)"
    return "(unknown)"


def functions(code):
    """(name, first line, last line) of each outermost function body, 1-based lines."""
    found = []
    stack = []  # entries: True when the block is (inside) a function
    head_start = 0
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if c == "{":
            inside = bool(stack) and stack[-1] is not False
            head = code[head_start:i]
            is_function = False
            if not inside:
                flat = " ".join(head.split())
                if HEAD_IS_FUNCTION.search(flat) or INIT_LIST.search(flat):
                    is_function = "(" in flat and not re.match(r"^\s*(namespace|class|struct|enum|union)\b", flat)
            if is_function:
                first = code.count("\n", 0, head_start + (len(head) - len(head.lstrip()))) + 1
                stack.append(("F", first, function_name(" ".join(head.split()))))
            else:
                stack.append(True if inside else False)
            head_start = i + 1
        elif c == "}":
            if stack:
                top = stack.pop()
                if isinstance(top, tuple):
                    last = code.count("\n", 0, i) + 1
                    found.append((top[2], top[1], last))
            head_start = i + 1
        elif c == ";":
            head_start = i + 1
        elif c == ":" and not (bool(stack) and stack[-1] is not False):
            # "public:" and friends end a head at class scope.
            if re.search(r"\b(public|private|protected)\s*$", code[head_start:i]):
                head_start = i + 1
        i += 1
    # A constructor's initializer list with braces ("b_{y}") opens a block we took for a body:
    # those are short and nested in the real body's head, so they only add false short entries.
    return found


def exemption(lines, first):
    """The reason in the comment block just above line `first` (1-based): None when the block has
    no marker, "" when the marker says no reason. The reason runs from the marker to the block's
    end (a reason may wrap onto the next comment lines)."""
    k = first - 2
    block = []
    while k >= 0 and lines[k].strip().startswith("//"):
        block.insert(0, lines[k].strip()[2:].strip())
        k -= 1
    for i, text in enumerate(block):
        if text.startswith(REASON_MARKER):
            reason = " ".join([text[len(REASON_MARKER):].strip()] + block[i + 1:]).strip()
            return reason if re.search(r"[A-Za-z]{2,}", reason) else ""
    return None


def scan():
    """(long functions, long files, exempt functions with their reasons). A long function whose
    marker gives no reason is long, flagged."""
    long_functions, long_files, exempt = [], [], []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("bazel-") and d != ".git")
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if not is_production(path):
                continue
            rel = os.path.relpath(path, ROOT)
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            lines = text.split("\n")
            count = len(lines) - (1 if text.endswith("\n") else 0)
            if count > MAX_FILE_LINES:
                long_files.append((rel, count))
            for fn, first, last in functions(strip_code(text)):
                length = last - first + 1
                if length <= MAX_FUNCTION_LINES:
                    continue
                reason = exemption(lines, first)
                if reason:
                    exempt.append((rel, fn, length, first, reason))
                else:
                    long_functions.append((rel, fn, length, first, reason == ""))
    return long_functions, long_files, exempt


def read_baseline():
    entries = set()
    if os.path.exists(BASELINE):
        with open(BASELINE, encoding="utf-8") as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if line:
                    entries.add(line)
    return entries


def main(argv):
    long_functions, long_files, exempt = scan()
    keys_f = [("function %s %s" % (rel, fn), rel, fn, length, first, bad_marker)
              for rel, fn, length, first, bad_marker in long_functions]
    keys_file = [("file %s" % rel, rel, count) for rel, count in long_files]
    if "--write-baseline" in argv:
        with open(BASELINE, "w", encoding="utf-8") as f:
            f.write("# Production functions over %d lines and files over %d lines that were there\n"
                    "# when tools/check_sizes.py started to gate them (issue #24): to be cut down.\n"
                    "# A new one fails CI. Remove a line once its function or file is short.\n"
                    % (MAX_FUNCTION_LINES, MAX_FILE_LINES))
            for key in sorted({k[0] for k in keys_f} | {k[0] for k in keys_file}):
                f.write(key + "\n")
        print("wrote %s" % os.path.relpath(BASELINE, ROOT))
        return 0
    baseline = read_baseline()
    new, without_reason = [], []
    print("functions over %d lines: %d; files over %d lines: %d (production code)"
          % (MAX_FUNCTION_LINES, len(long_functions), MAX_FILE_LINES, len(long_files)))
    for key, rel, fn, length, first, bad_marker in sorted(keys_f, key=lambda k: -k[3]):
        known = key in baseline
        print("  %4d lines  %s:%d %s%s%s" % (length, rel, first, fn, "" if known else "   NEW",
                                             "   MARKER WITHOUT A REASON" if bad_marker else ""))
        if not known:
            new.append(key)
        if bad_marker:
            without_reason.append("%s:%d %s" % (rel, first, fn))
    for key, rel, count in sorted(keys_file, key=lambda k: -k[2]):
        known = key in baseline
        print("  %4d lines  %s (file)%s" % (count, rel, "" if known else "   NEW"))
        if not known:
            new.append(key)
    if exempt:
        print("exempt, with a reason in a '// %s' comment above them: %d"
              % (REASON_MARKER, len(exempt)))
    for rel, fn, length, first, reason in sorted(exempt, key=lambda e: -e[2]):
        print("  %4d lines  %s:%d %s   exempt: %s" % (length, rel, first, fn, reason))
    present = {k[0] for k in keys_f} | {k[0] for k in keys_file}
    gone = sorted(baseline - present)
    if gone:
        print("now within the limits (remove from tools/size_baseline.txt): " + ", ".join(gone))
    if without_reason:
        print("check_sizes: '// %s' without a reason above %s: say why the function stays long "
              "after the marker, or cut it down" % (REASON_MARKER, ", ".join(without_reason)))
    if new:
        print("check_sizes: %d new over the limits: cut them down, or say why in a comment "
              "starting '// %s' just above the function" % (len(new), REASON_MARKER))
    return 1 if new or without_reason else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
