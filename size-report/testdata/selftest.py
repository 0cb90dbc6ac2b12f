#!/usr/bin/env python3
"""Self-test of the size-report harness (no Rust needed). Run: size-report/testdata/selftest.py

Checks, in a temp dir:
  1. gen_workload.py is deterministic for a seed, differs across seeds, honours FILES exactly;
  2. bench.py against fake_server.py measures everything in "full" mode, degrades to nulls with
     notes in the "init-only", "exit" and "hang" modes, and leaves the corpus byte-identical;
  3. marker_visible() on typical answers;
  4. report.py exits 0 when all is met, 1 on a breach, 1 on a missing value, and 0 when the
     only missing tiers were skipped on purpose.
"""

import filecmp
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SR = os.path.dirname(HERE)
sys.path.insert(0, SR)
import bench  # noqa: E402

FAKE = os.path.join(HERE, "fake_server.py")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def py(*args, env=None):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def same_tree(a, b):
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.diff_files or cmp.funny_files:
        return False
    return all(same_tree(os.path.join(a, d), os.path.join(b, d)) for d in cmp.common_dirs)


def bench_run(corpus, mode, timeout="30"):
    p = py(os.path.join(SR, "bench.py"), "--bin", FAKE, "--corpus", corpus, "--runs", "2",
           "--queries", "12", "--timeout", timeout, "--no-ctags", env={"FAKE_MESH_MODE": mode})
    return json.loads(p.stdout)


with tempfile.TemporaryDirectory() as tmp:
    gen = os.path.join(SR, "gen_workload.py")
    a, b, c = (os.path.join(tmp, n) for n in "abc")
    py(gen, a, "501", "--contracts")
    py(gen, b, "501", "--contracts")
    py(gen, c, "501", "--contracts", "--seed", "7")
    check(same_tree(a, b), "generator: same seed, same bytes")
    check(not same_tree(a, c), "generator: another seed, other bytes")
    n = sum(1 for _, _, fs in os.walk(a) for f in fs if f.startswith("gen_"))
    check(n == 501, f"generator: exactly 501 gen_* files (got {n})")

    full = bench_run(a, "full")
    for key in ("init_ms", "init_empty_ms", "rss_after_init_kb", "cold_index_ms",
                "peak_rss_kb", "search_p50_ms", "search_p95_ms", "edit_visible_ms"):
        check(full.get(key) is not None, f"full: {key} measured ({full.get(key)})")
    check(full["search_count"] == 24 and full["search_errors"] == 0, "full: 24 searches, 0 errors")
    check(same_tree(a, b), "full: corpus restored after the edit probe")

    only = bench_run(a, "init-only")
    check(only["init_ms"] is not None and only["cold_index_ms"] is None,
          "init-only: init measured, cold index null")
    check(any("-32601" in n for n in only["notes"]), "init-only: the JSON-RPC error is noted")

    gone = bench_run(a, "exit")
    check(gone["init_ms"] is None and gone["rss_after_init_kb"] is None, "exit: all null")
    check(any("closed stdout" in n or "cannot write" in n for n in gone["notes"]),
          "exit: noted")

    hang = bench_run(a, "hang", timeout="1")
    check(hang["init_ms"] is not None and hang["cold_index_ms"] is None, "hang: times out")
    check(any("no answer within 1 s" in n for n in hang["notes"]), "hang: timeout noted")

    def answer(text, is_error=False):
        return {"result": {"content": [{"type": "text", "text": text}], "isError": is_error}}
    m = "ScaleBenchMarker42"
    check(bench.marker_visible(answer(f"Matches: 1 definitions found\na.rs:3 {m}"), m),
          "predicate: a hit is visible")
    check(not bench.marker_visible(answer(f"No symbol matches '{m}'"), m),
          "predicate: 'No symbol' is not")
    check(not bench.marker_visible(answer(f"{m}: 0 definitions found"), m),
          "predicate: '0 definitions' is not")
    check(bench.marker_visible(answer(f"10 definitions found\n{m}"), m),
          "predicate: '10 definitions' is")
    check(not bench.marker_visible(answer(m, is_error=True), m), "predicate: isError is not")
    check(not bench.marker_visible({"error": {"code": -32601}}, m),
          "predicate: JSON-RPC error is not")

    # report.py exit codes on hand-made results.
    res = os.path.join(tmp, "results")
    os.makedirs(res)
    budgets = os.path.join(SR, "budgets.json")

    def write(name, obj):
        with open(os.path.join(res, name), "w") as f:
            json.dump(obj, f)

    def report(tiers):
        out = os.path.join(tmp, "REPORT.md")
        return py(os.path.join(SR, "report.py"), "--results", res, "--budgets", budgets,
                  "--out", out, "--tiers", tiers, "--skipped-symbols").returncode

    write("sizes.json", {"mesh_mcp_stripped_bytes": 1 << 20, "meshd_stripped_bytes": 1 << 20})
    write("init.json", {"init_empty_ms": 3.0, "rss_after_init_kb": 4000, "empty_spawns": 30})
    good = {"init_ms": 4.0, "cold_index_ms": 100.0, "peak_rss_kb": 20000, "search_p50_ms": 0.5,
            "search_p95_ms": 2.0, "edit_visible_ms": 60.0, "corpus_files": 5008}
    write("tier-5k.json", good)
    stubs = sorted(os.listdir(os.path.join(SR, "stubs")))
    for crate in stubs:
        write(f"dep-{crate}.json", {"crate": crate, "mesh_mcp_delta_bytes": 1000,
                                    "meshd_delta_bytes": 1000})
    check(report("5k") == 0, "report: all met, other tiers skipped -> exit 0")
    if stubs:
        write(f"dep-{stubs[0]}.json", {"crate": stubs[0]})
        check(report("5k") == 1, "report: a dependency delta not measured -> exit 1")
        write(f"dep-{stubs[0]}.json", {"crate": stubs[0], "mesh_mcp_delta_bytes": 1000,
                                       "meshd_delta_bytes": 1000})
    write("tier-5k.json", {**good, "search_p95_ms": 3.5})
    check(report("5k") == 1, "report: a breach -> exit 1")
    write("tier-5k.json", {**good, "edit_visible_ms": None})
    check(report("5k") == 1, "report: a missing value -> exit 1")
    write("tier-5k.json", good)
    check(report("5k 50k") == 1, "report: a requested tier without results -> exit 1")

print(f"\n{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
