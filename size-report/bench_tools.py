#!/usr/bin/env python3
"""Tool-level figures on the bundled example workspace, through the real stdio server.

Usage:
  bench_tools.py --bin PATH [--example DIR] [--calls 400] [--runs 3] [--json OUT]

Measures, each in a fresh `PATH run --standalone` session on a private copy of
examples/polyglot-shop (so a config file can be added without touching the repository):

  impact_p50_ms / impact_p95_ms   `analyze_impact` round trips over stdio, targets cycling a
                                  topic (depth 2), an RPC, a route and a constant name; the
                                  issue-6 goal is a median under 1 ms
  audit_on_calls_per_s            sequential `smart_search` calls per second with the audit
  audit_off_calls_per_s           trail on (the default) and off (`[audit] enabled = false`)
  audit_on_p50_ms / audit_off_p50_ms
                                  their median round trips (the audit write happens off the
                                  executor, after the answer; this shows what it costs a session)
  tools_list_bytes / tools_list_tokens
                                  the size of the `tools/list` answer at 2025-11-25 (names,
                                  descriptions, input and output schemas: what every agent
                                  carries in its context), in bytes and ≈ tokens (bytes / 4)

Medians across `--runs` sessions (the lower median of the per-run medians). Nothing here is a
pass/fail verdict; report.py compares with budgets.json.
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import Server, ServerGone, initialize  # noqa: E402

IMPACT_TARGETS = [
    {"target": "orders.created", "depth": 2},
    {"target": "OrderService.CreateOrder"},
    {"target": "GET /shipments/{orderId}"},
    {"target": "PAYMENTS_COMPLETED"},
]


def copy_example(src, dst, audit):
    shutil.copytree(src, dst, symlinks=True)
    if not audit:
        with open(os.path.join(dst, "mesh-mcp.toml"), "w") as f:
            f.write("[audit]\nenabled = false\n")


def timed_calls(srv, tool, args_cycle, n):
    """n round trips (after one warm-up call); returns the per-call ms list."""
    srv.call("tools/call", {"name": tool, "arguments": args_cycle[0]})
    times = []
    for i in range(n):
        args = args_cycle[i % len(args_cycle)]
        t = time.perf_counter()
        resp = srv.call("tools/call", {"name": tool, "arguments": args})
        times.append((time.perf_counter() - t) * 1000.0)
        if "result" not in resp or resp["result"].get("isError"):
            raise ServerGone(f"{tool} failed: {json.dumps(resp)[:300]}")
    return times


def session(binary, example, audit, calls, tool, args_cycle):
    tmp = tempfile.mkdtemp(prefix="mesh-bench-tools-")
    try:
        ws = os.path.join(tmp, "polyglot-shop")
        copy_example(example, ws, audit)
        srv = Server(binary, ws, tmp, timeout=30)
        try:
            initialize(srv)
            times = timed_calls(srv, tool, args_cycle, calls)
        finally:
            srv.close()
        return times
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def tools_list_size(binary, example):
    """Bytes of the compact `tools/list` response line (2025-11-25, fixtures off)."""
    tmp = tempfile.mkdtemp(prefix="mesh-bench-tools-")
    try:
        ws = os.path.join(tmp, "polyglot-shop")
        copy_example(example, ws, True)
        srv = Server(binary, ws, tmp, timeout=30)
        try:
            initialize(srv)
            resp = srv.call("tools/list", {})
        finally:
            srv.close()
        if "result" not in resp:
            raise ServerGone(f"tools/list failed: {json.dumps(resp)[:300]}")
        line = json.dumps(resp, separators=(",", ":"), ensure_ascii=False)
        return len(line.encode("utf-8"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def pct(values, p):
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(round(p / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bin", required=True)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--example", default=os.path.join(here, "..", "examples", "polyglot-shop"))
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    a.bin = os.path.abspath(a.bin)
    out = {"notes": []}
    impact_p50, impact_p95, on_rate, off_rate, on_p50, off_p50 = [], [], [], [], [], []
    search = [{"query": q} for q in ["Order", "Service", "Payment", "handle", "Topics"]]
    for _ in range(a.runs):
        try:
            t = session(a.bin, a.example, True, a.calls, "analyze_impact", IMPACT_TARGETS)
            impact_p50.append(statistics.median(t))
            impact_p95.append(pct(t, 95))
            for audit, rates, p50s in ((True, on_rate, on_p50), (False, off_rate, off_p50)):
                t = session(a.bin, a.example, audit, a.calls, "smart_search", search)
                rates.append(len(t) / (sum(t) / 1000.0))
                p50s.append(statistics.median(t))
        except ServerGone as e:
            out["notes"].append(str(e))

    try:
        size = tools_list_size(a.bin, a.example)
        out["tools_list_bytes"] = size
        out["tools_list_tokens"] = round(size / 4)
    except ServerGone as e:
        out["notes"].append(str(e))

    def low_median(v):
        return round(statistics.median_low(v), 3) if v else None

    out.update({
        "example": os.path.normpath(a.example),
        "calls_per_session": a.calls,
        "runs": a.runs,
        "impact_p50_ms": low_median(impact_p50),
        "impact_p95_ms": low_median(impact_p95),
        "audit_on_calls_per_s": low_median(on_rate),
        "audit_off_calls_per_s": low_median(off_rate),
        "audit_on_p50_ms": low_median(on_p50),
        "audit_off_p50_ms": low_median(off_p50),
    })
    text = json.dumps(out, indent=2)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
