#!/usr/bin/env python3
"""The shape of the code (issue 20): file sizes outside tests, long functions, public items.

Usage: shape.py [--src src] [--max-file 1500] [--max-fn 150] [--list-pub]

Reads the Rust files under `--src` as rustfmt leaves them: a function starts at a line
`fn name` (with any `pub`, `const`, `async`, `unsafe`, `extern` before it) and ends at the
first later line that is a lone `}` at the same indentation. Lines of a `#[cfg(test)]` item
(the `mod tests { … }` block) and files named `tests.rs` count as tests, not as code.
Public items are the `pub` declarations (not `pub(crate)`/`pub(super)`/`pub(in …)`) outside
tests, inside modules reachable as public from the crate root or not: the count says how
much a `pub` keyword still promises.

Prints the files over `--max-file` code lines, the functions over `--max-fn` lines (tests
included, listed apart), and the number of public items; exits 1 when a code file or a
non-test function is over its bar. Nothing here runs the code.
"""

import argparse
import os
import re
import sys

FN = re.compile(r"^(\s*)(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?"
                r"(?:extern\s+\"[^\"]*\"\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)")
PUB = re.compile(r"^\s*pub\s+(?:const\s+|async\s+|unsafe\s+)*(fn|struct|enum|trait|type|const|"
                 r"static|mod|use|union)\b")


def block_end(lines, i):
    """Index of the line closing the first `{` opened at or after line `i`: braces counted
    outside string literals (plain, byte and raw), char literals and comments."""
    text = "\n".join(lines[i:])
    depth, k, n, line = 0, 0, len(text), i
    opened = False
    while k < n:
        c = text[k]
        if c == "\n":
            line += 1
        elif text.startswith("//", k):
            k = text.find("\n", k)
            if k < 0:
                break
            continue
        elif text.startswith("/*", k):
            end = text.find("*/", k + 2)
            end = n if end < 0 else end + 2
            line += text.count("\n", k, end)
            k = end
            continue
        elif c == "r" and re.match(r'r#*"', text[k:k + 10]) and not (k and (text[k - 1].isalnum() or text[k - 1] == "_")):
            hashes = len(re.match(r'r(#*)"', text[k:k + 10]).group(1))
            close = '"' + "#" * hashes
            end = text.find(close, k + 2 + hashes)
            end = n if end < 0 else end + len(close)
            line += text.count("\n", k, end)
            k = end
            continue
        elif c == '"':
            j = k + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            line += text.count("\n", k, j)
            k = j + 1
            continue
        elif c == "'":
            m = re.match(r"'(\\.[^']*|[^\\'])'", text[k:k + 12])
            if m:
                k += len(m.group(0))
                continue
        elif c == "{":
            depth += 1
            opened = True
        elif c == "}":
            depth -= 1
            if opened and depth == 0:
                return line
        k += 1
    return len(lines) - 1


def test_lines(lines):
    """Indices of lines inside `#[cfg(test)]` items (attribute to the item's closing brace)."""
    inside = set()
    i = 0
    while i < len(lines):
        if lines[i].strip() == "#[cfg(test)]":
            indent = len(lines[i]) - len(lines[i].lstrip())
            j = i + 1
            # The item: a one-line `use`/`mod x;`, or a block closed at the same indentation.
            if j < len(lines) and lines[j].rstrip().endswith(";"):
                inside.update((i, j))
                i = j + 1
                continue
            k = block_end(lines, j)
            inside.update(range(i, k + 1))
            i = k + 1
            continue
        i += 1
    return inside


def functions(lines, tests):
    """(name, first line, length, is test) of every function with a body."""
    out = []
    for i, line in enumerate(lines):
        m = FN.match(line)
        if not m:
            continue
        indent = m.group(1)
        # The signature may span lines; a declaration without a body ends in `;`.
        j = i
        while j < len(lines) and not lines[j].rstrip().endswith("{") and \
                not lines[j].rstrip().endswith(";") and not lines[j].rstrip().endswith("}"):
            j += 1
        if j >= len(lines) or lines[j].rstrip().endswith(";"):
            continue
        if lines[j].rstrip().endswith("}") and "{" in lines[j]:
            out.append((m.group(2), i + 1, j - i + 1, i in tests))
            continue
        k = block_end(lines, i)
        out.append((m.group(2), i + 1, k - i + 1, i in tests))
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", default=os.path.join(os.path.dirname(__file__), "..", "src"))
    ap.add_argument("--max-file", type=int, default=1500)
    ap.add_argument("--max-fn", type=int, default=150)
    ap.add_argument("--list-pub", action="store_true")
    a = ap.parse_args(argv)
    big_files, long_fns, long_tests, pubs = [], [], [], []
    files = 0
    for root, _, names in os.walk(a.src):
        for name in sorted(names):
            if not name.endswith(".rs"):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, a.src)
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
            files += 1
            all_test = name == "tests.rs"
            tests = set(range(len(lines))) if all_test else test_lines(lines)
            code = sum(1 for i in range(len(lines)) if i not in tests)
            if not all_test and code > a.max_file:
                big_files.append((code, rel))
            for fn, first, length, is_test in functions(lines, tests):
                if length > a.max_fn:
                    (long_tests if is_test else long_fns).append((length, f"{rel}:{first}", fn))
            for i, l in enumerate(lines):
                if i not in tests and PUB.match(l):
                    pubs.append(f"{rel}:{i + 1}: {l.strip()[:100]}")
    print(f"{files} files under {os.path.normpath(a.src)}")
    print(f"code files over {a.max_file} lines outside tests: {len(big_files)}")
    for n, rel in sorted(big_files, reverse=True):
        print(f"  {n:6} {rel}")
    print(f"functions over {a.max_fn} lines: {len(long_fns)} (and {len(long_tests)} in tests)")
    for n, at, fn in sorted(long_fns, reverse=True):
        print(f"  {n:6} {at} {fn}")
    for n, at, fn in sorted(long_tests, reverse=True):
        print(f"  {n:6} {at} {fn} (test)")
    print(f"pub items outside tests: {len(pubs)}")
    if a.list_pub:
        for p in pubs:
            print("  " + p)
    return 1 if big_files or long_fns else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
