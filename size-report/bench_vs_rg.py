#!/usr/bin/env python3
"""A process's fixed cost next to ripgrep's, on real workspaces (issue 17).

Usage:
  bench_vs_rg.py --bin RELEASE --corpora DIR [--word Order] [--runs 7] [--json OUT]

For each workspace directory under DIR (the practice corpora), side by side in one run:
  query    `RELEASE query smart_search '{"query": WORD}'`: a one-shot answer, from process
           start to exit (index, answer, audit row)
  session  `RELEASE run --standalone`: spawn, `initialize`, one `smart_search` for WORD,
           then stdin closed; the whole process, from start to exit (the watcher set-up
           included)
  rg       `rg -c -uu WORD` (every file read: no ignore files, hidden files too)
each run `--runs` times in a fresh private HOME (so every mesh-mcp run is cold: no fact cache).
The audit database is what an installation creates once, not part of a workspace's cold index:
one untimed query per corpus creates it, and every timed run appends to it (MESH_AUDIT_DB).
`first` is the query as the very first run in a new HOME (the audit database and its key
created, six fsyncs), for information. CPU is user+system of the child (every thread), from
wait4's rusage; wall is spawn to exit. Medians. cpu_ratio = query CPU / rg CPU (the issue-17
bar: <= 1.5).
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import private_env  # noqa: E402

INIT = ('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
        '"2025-06-18","capabilities":{},"clientInfo":{"name":"mesh-bench","version":"1"}}}\n')


def timed(cmd, cwd, env, stdin=None):
    """(cpu_ms, wall_ms) of one child run."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE if stdin else
                         subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if stdin:
        p.stdin.write(stdin.encode())
        p.stdin.flush()
        # Read until the second answer (the search), then close stdin.
        seen = 0
        while seen < 2:
            line = p.stdout.readline()
            if not line:
                break
            if b'"id":2' in line or b'"id":1' in line:
                seen += 1
        p.stdin.close()
    p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = (time.perf_counter() - t) * 1000
    return (ru.ru_utime + ru.ru_stime) * 1000, wall


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--corpora", required=True)
    ap.add_argument("--word", default="Order")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    binary = os.path.abspath(a.bin)
    rg = shutil.which("rg")
    out = {"word": a.word, "runs": a.runs, "corpora": [], "notes": []}
    if not rg:
        out["notes"].append("rg not found: no comparison")
    names = sorted(n for n in os.listdir(a.corpora)
                   if os.path.isdir(os.path.join(a.corpora, n))) if os.path.isdir(a.corpora) else []
    if not names:
        out["notes"].append(f"no corpora under {a.corpora}")
    search = ('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"smart_search",'
              '"arguments":{"query":"%s"}}}\n' % a.word)
    for name in names:
        d = os.path.join(a.corpora, name)
        files = sum(len(f) for _, _, f in os.walk(d))
        q, s, r, first = [], [], [], []
        query = [binary, "query", "smart_search", json.dumps({"query": a.word})]
        installed = tempfile.mkdtemp(prefix="mesh-bench-rg-audit-")
        audit_db = os.path.join(installed, "audit.db")
        try:
            warm = tempfile.mkdtemp(prefix="mesh-bench-rg-")
            try:
                env = private_env(warm)
                env["MESH_AUDIT_DB"] = audit_db
                timed(query, d, env)
            finally:
                shutil.rmtree(warm, ignore_errors=True)
            for _ in range(a.runs):
                for kind, acc in (("query", q), ("session", s), ("first", first)):
                    tmp = tempfile.mkdtemp(prefix="mesh-bench-rg-")
                    try:
                        env = private_env(tmp)
                        if kind != "first":
                            env["MESH_AUDIT_DB"] = audit_db
                        if kind == "session":
                            acc.append(timed([binary, "run", "--standalone"], d, env,
                                             stdin=INIT + search))
                        else:
                            acc.append(timed(query, d, env))
                    finally:
                        shutil.rmtree(tmp, ignore_errors=True)
                if rg:
                    r.append(timed([rg, "-c", "-uu", a.word], d, None))
        finally:
            shutil.rmtree(installed, ignore_errors=True)
        med = lambda v, i: round(statistics.median(x[i] for x in v), 1) if v else None
        row = {
            "corpus": name, "files": files,
            "query_cpu_ms": med(q, 0), "query_wall_ms": med(q, 1),
            "session_cpu_ms": med(s, 0), "session_wall_ms": med(s, 1),
            "first_cpu_ms": med(first, 0), "first_wall_ms": med(first, 1),
            "rg_cpu_ms": med(r, 0), "rg_wall_ms": med(r, 1),
        }
        if row["rg_cpu_ms"]:
            row["cpu_ratio"] = round(row["query_cpu_ms"] / row["rg_cpu_ms"], 2)
            row["session_cpu_ratio"] = round(row["session_cpu_ms"] / row["rg_cpu_ms"], 2)
        out["corpora"].append(row)
    text = json.dumps(out, indent=2)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
