#!/usr/bin/env python3
"""Instruction counts under callgrind: repeatable where wall-clock figures are not.

Usage:
  instr.py --bin PATH --corpus DIR [--calls 60] [--tool smart_search|impact|ping]
           [--only FUNCTION] [--out FILE]
  instr.py --bin PATH --corpus DIR --query WORD [--out FILE]

The first form runs `PATH run --standalone` in DIR under `valgrind --tool=callgrind` with a
private environment (as bench.py), answers `initialize`, makes `--calls` sequential calls
(smart_search cycles bench.py's QUERIES over the services/* scopes; impact cycles
bench_tools.py's targets) and closes stdin. `--only` counts only inside that function, e.g.
`mesh_mcp::tools::smart_search::run` (needs a binary with symbols); without it the count is the
whole process, all threads, index build included, so the cost of N calls is the difference of
two runs (N + 1 and 1 calls). The second form counts a one-shot
`PATH query smart_search '{"query": WORD}'` in DIR (the bar of bench_vs_rg.py).

Prints the total instruction count (`Ir`); `--out` keeps the callgrind file for
`callgrind_annotate`. A binary with symbols for annotation:
  CARGO_TARGET_DIR=/tmp/tgt-sym CARGO_PROFILE_RELEASE_STRIP=false \\
  CARGO_PROFILE_RELEASE_DEBUG=1 cargo build --release
Needs valgrind. Nothing is judged here.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import QUERIES, private_env  # noqa: E402
from bench_tools import IMPACT_TARGETS  # noqa: E402


def total(out):
    """The `summary:`/`totals:` line of a callgrind output file."""
    with open(out) as f:
        for line in f:
            m = re.match(r"(?:summary|totals):\s+(\d+)", line)
            if m:
                return int(m.group(1))
    return None


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--calls", type=int, default=60)
    ap.add_argument("--tool", default="smart_search", choices=["smart_search", "impact", "ping"])
    ap.add_argument("--only")
    ap.add_argument("--query")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    if not shutil.which("valgrind"):
        print("valgrind not found", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="mesh-instr-")
    try:
        out = os.path.abspath(a.out) if a.out else os.path.join(tmp, "callgrind.out")
        vg = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        if a.only:
            vg.append(f"--toggle-collect={a.only}")
        binary = os.path.abspath(a.bin)
        env = private_env(tmp)
        if a.query is not None:
            subprocess.run(vg + [binary, "query", "smart_search", json.dumps({"query": a.query})],
                           cwd=a.corpus, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=False)
        else:
            run_session(vg + [binary, "run", "--standalone"], a, env)
        n = total(out)
        print(json.dumps({"bin": binary, "corpus": a.corpus,
                          "calls": None if a.query is not None else a.calls,
                          "tool": None if a.query is not None else a.tool,
                          "query": a.query, "only": a.only, "instructions": n}))
        return 0 if n is not None else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_session(cmd, a, env):
    p = subprocess.Popen(cmd, cwd=a.corpus, env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    next_id = 0

    def call(method, params):
        nonlocal next_id
        next_id += 1
        msg = {"jsonrpc": "2.0", "id": next_id, "method": method, "params": params}
        p.stdin.write((json.dumps(msg) + "\n").encode())
        p.stdin.flush()
        while True:
            line = p.stdout.readline()
            if not line:
                raise SystemExit("the server exited early")
            m = json.loads(line)
            if m.get("id") == next_id:
                return m

    call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "instr", "version": "0"}})
    p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    services = os.path.join(a.corpus, "services")
    scopes = sorted(f"services/{d}" for d in os.listdir(services)) if os.path.isdir(services) else []
    for j in range(a.calls):
        if a.tool == "smart_search":
            args = {"query": QUERIES[j % len(QUERIES)]}
            if scopes:
                args["scope"] = scopes[j % len(scopes)]
            call("tools/call", {"name": "smart_search", "arguments": args})
        elif a.tool == "impact":
            call("tools/call", {"name": "analyze_impact",
                                "arguments": IMPACT_TARGETS[j % len(IMPACT_TARGETS)]})
        else:
            call("ping", {})
    p.stdin.close()
    p.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
