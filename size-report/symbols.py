#!/usr/bin/env python3
"""Summarise where an unstripped release binary's bytes go, from `nm --size-sort -S -C`.

Usage: symbols.py BINARY [--top 15] > contributors.json

Each symbol is attributed to the first path segment of its demangled name ("crate prefix"):
`serde_json::de::...` -> serde_json, `<smol::Task<T> as Drop>::drop` -> smol,
`core::ptr::drop_in_place<mesh_mcp::X>` -> core. Symbols without a Rust path are C code:
`sqlite3*` -> "sqlite3 (C)", anything else -> "(C / other)". BSS symbols (type b/B) take no
file space and are left out. With fat LTO, generic code is often emitted under core/alloc
paths, so this is a guide to what is big, not an exact per-crate bill.
"""

import argparse
import json
import re
import subprocess
import sys

PATH_HEAD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)::")


def crate_of(name):
    s = name
    while True:  # peel `<`, `&`, `*const `, `dyn `, `[` ... down to the first path
        t = s.lstrip("<&*[( ")
        for kw in ("const ", "mut ", "dyn ", "impl "):
            if t.startswith(kw):
                t = t[len(kw):]
        if t == s:
            break
        s = t
    m = PATH_HEAD.match(s)
    if m:
        return m.group(1)
    if name.startswith("sqlite3") or name.startswith("_sqlite3"):
        return "sqlite3 (C)"
    return "(C / other)"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary")
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args(argv)

    out = subprocess.run(["nm", "--size-sort", "-S", "-C", args.binary],
                         capture_output=True, text=True, check=True).stdout
    crates, symbols, total = {}, [], 0
    for line in out.splitlines():
        parts = line.split(None, 3)  # address size type name
        if len(parts) != 4 or parts[2] in ("b", "B"):
            continue
        size = int(parts[1], 16)
        name = parts[3]
        total += size
        crate = crate_of(name)
        crates[crate] = crates.get(crate, 0) + size
        symbols.append((size, name))

    symbols.sort(key=lambda x: (-x[0], x[1]))
    top_crates = sorted(crates.items(), key=lambda kv: (-kv[1], kv[0]))[:args.top]
    json.dump({
        "binary": args.binary,
        "symbol_bytes_total": total,
        "crates": [[c, n] for c, n in top_crates],
        "symbols": [[(n if len(n) <= 140 else n[:137] + "..."), s]
                    for s, n in symbols[:args.top]],
    }, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
