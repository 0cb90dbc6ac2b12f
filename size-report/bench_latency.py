#!/usr/bin/env python3
"""Where a request's time goes, and what a call costs on the server (issue 17).

Usage:
  bench_latency.py --bin RELEASE --stages-bin STAGES --corpus DIR [--example DIR]
                   [--calls 600] [--runs 3] [--json OUT]

Three workloads, each in `--runs` fresh `run --standalone` sessions per binary (alternating
the two binaries, so both see the same machine) after warm-up calls; every figure is the lower
median of the per-session figures (this VM is shared, and one session can be twice as slow as
the next):
  search5k   `smart_search` over DIR (the 5k tier corpus), queries and scopes cycling like
             bench.py's
  impact     `analyze_impact` on a copy of the example, targets cycling like bench_tools.py's
  ping       `ping` on the example

For each workload:
  - STAGES (a release build with `--features bench-stages`) writes per-request stage
    timestamps (src/stages.rs): read (the frame split off the input), taken (by the session
    loop), parsed, tool_start, tool_end, queued (answer serialised), picked (by the writer),
    sending (the write that hands the answer to the kernel starts), written (it returned).
    server_p50/p95_us is read -> sending: the server's own time with the request. The write
    itself (sending -> written, write_p50_us) is shown apart: writing to a pipe wakes the
    client, and Linux often runs the woken client at once on the writer's CPU, so that span
    can hold the client's own work on the answer. The median of each stage is reported too.
  - RELEASE (the binary users run, no timestamps) gives the client's round trip p50/p95 and
    the server's CPU per call: utime+stime of the process (all threads, so the audit task's
    share is in it) over the timed calls, divided by their number.

The ping bar is taken with a busy-polling client (`ping_spin`): it polls the non-blocking
read end of the server's stdout in a loop instead of sleeping in select(), so its round trip
holds the server's wake-up on the request, the server's work and the pipes, but not the
client's own wake-up on the answer, which is a property of the client (the blocking client's
round trip is reported too). The figures that put it in context (information, not bars):
  floor      the same client loop against `cat`, which echoes each request line back: what a
             round trip costs this client, this machine and two pipes with a server that does
             no work at all (for the blocking and the busy-polling client)
  ping_pinned  the ping workload with the client and the server pinned to one CPU: on this
             VM a wake-up on the other, idle vCPU costs tens of microseconds (the guest does
             not halt-poll), which the floor shows as well; pinned, the round trip is the
             client's and the server's own work

Nothing is judged here; report.py compares with budgets.json.
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
from bench import QUERIES, Server, ServerGone, initialize, private_env  # noqa: E402
from bench_tools import IMPACT_TARGETS  # noqa: E402

STAGES = ["taken", "parsed", "tool_start", "tool_end", "queued", "picked", "sending", "written"]


def pct(values, p):
    s = sorted(values)
    if not s:
        return None
    k = max(0, min(len(s) - 1, int(round(p / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def workload(name, corpus):
    """(cwd, request maker) for a workload."""
    if name == "search5k":
        scopes = sorted(f"services/{d}" for d in os.listdir(os.path.join(corpus, "services")))

        def req(j):
            return "tools/call", {"name": "smart_search", "arguments": {
                "query": QUERIES[j % len(QUERIES)], "scope": scopes[j % len(scopes)]}}
        return req
    if name == "impact":
        return lambda j: ("tools/call", {"name": "analyze_impact",
                                         "arguments": IMPACT_TARGETS[j % len(IMPACT_TARGETS)]})
    return lambda j: ("ping", {})


def floor_session(calls, cpu=None, spin=False):
    """Round trips of the client loop against `cat` (each request line echoed back)."""
    tmp = tempfile.mkdtemp(prefix="mesh-bench-floor-")
    try:
        srv = Server(shutil.which("cat") or "/bin/cat", tmp, tmp, timeout=60, args=(),
                     env=private_env(tmp), cpu=cpu)
        srv.spin = spin
        times = []
        try:
            for j in range(30 + calls):
                t = time.perf_counter()
                srv.send({"jsonrpc": "2.0", "id": j + 1, "method": "ping"})
                srv.read_line()
                if j >= 30:
                    times.append((time.perf_counter() - t) * 1e6)
        finally:
            srv.close()
        return times
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def session(binary, name, corpus, example, calls, stages, cpu=None, spin=False):
    tmp = tempfile.mkdtemp(prefix="mesh-bench-lat-")
    try:
        if name == "search5k":
            cwd = corpus
        else:
            cwd = os.path.join(tmp, "ws")
            shutil.copytree(example, cwd, symlinks=True)
        env = private_env(tmp)
        log = os.path.join(tmp, "stages.jsonl")
        if stages:
            env["MESH_STAGE_LOG"] = log
        srv = Server(binary, cwd, tmp, timeout=60, env=env, cpu=cpu)
        srv.spin = spin
        req = workload(name, corpus)
        times = []
        try:
            initialize(srv)
            srv.call("tools/call", {"name": "smart_search", "arguments": {"query": "Service"}})
            warm = 30
            for j in range(warm):
                srv.call(*req(j))
            c0 = cpu_seconds(srv.proc.pid)
            for j in range(calls):
                t = time.perf_counter()
                resp = srv.call(*req(warm + j))
                times.append((time.perf_counter() - t) * 1e6)
                if "error" in resp:
                    raise ServerGone(f"{name}: {json.dumps(resp)[:200]}")
            cpu_us = (cpu_seconds(srv.proc.pid) - c0) / calls * 1e6
        finally:
            srv.close()
        records = []
        if stages and os.path.exists(log):
            with open(log) as f:
                records = [json.loads(line) for line in f]
            method = "ping" if name == "ping" else "tools/call"
            records = [r for r in records if r["method"] == method][-calls:]
        return times, cpu_us, records
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--stages-bin")
    ap.add_argument("--corpus", required=True, help="the 5k tier corpus")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--example", default=os.path.join(here, "..", "examples", "polyglot-shop"))
    ap.add_argument("--calls", type=int, default=600)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    out = {"calls": a.calls, "runs": a.runs, "notes": []}
    low = lambda v: round(statistics.median_low(v), 1) if v else None
    for name in ("search5k", "impact", "ping"):
        calls = a.calls * (5 if name == "ping" else 2 if name == "impact" else 1)
        per = {k: [] for k in ("rt_p50_us", "rt_p95_us", "cpu_per_call_us", "server_p50_us",
                               "server_p95_us", "write_p50_us")}
        stages = {s: [] for s in STAGES}
        records = 0
        try:
            for _ in range(a.runs):
                times, cpu_us, _ = session(os.path.abspath(a.bin), name, a.corpus, a.example,
                                           calls, False)
                per["rt_p50_us"].append(statistics.median(times))
                per["rt_p95_us"].append(pct(times, 95))
                per["cpu_per_call_us"].append(cpu_us)
                if not a.stages_bin:
                    continue
                _, _, recs = session(os.path.abspath(a.stages_bin), name, a.corpus, a.example,
                                     calls, True)
                records += len(recs)
                total = [x["sending_us"] for x in recs if x.get("sending_us") is not None]
                if total:
                    per["server_p50_us"].append(statistics.median(total))
                    per["server_p95_us"].append(pct(total, 95))
                writes = [x["written_us"] - x["sending_us"] for x in recs
                          if x.get("written_us") is not None and x.get("sending_us") is not None]
                if writes:
                    per["write_p50_us"].append(statistics.median(writes))
                for s in STAGES:
                    v = [x[f"{s}_us"] for x in recs if x.get(f"{s}_us") is not None]
                    if v:
                        stages[s].append(statistics.median(v))
        except (ServerGone, OSError, ValueError) as e:
            out["notes"].append(f"{name}: {e}")
        r = {k: low(v) for k, v in per.items()}
        r["stage_p50_us"] = {s: low(v) for s, v in stages.items() if v}
        r["stage_records"] = records
        out[name] = r
    # Context for the ping round trip: the harness floor, and ping with both ends on one CPU.
    ctx = {"floor_rt_p50_us": [], "ping_pinned_rt_p50_us": [], "floor_spin_rt_p50_us": [],
           "ping_spin_rt_p50_us": [], "ping_spin_rt_p95_us": []}
    try:
        cpu = sorted(os.sched_getaffinity(0))[0]
        for _ in range(a.runs):
            ctx["floor_rt_p50_us"].append(statistics.median(floor_session(a.calls * 5)))
            # The busy-polling client: no wake-up of its own in the figure.
            ctx["floor_spin_rt_p50_us"].append(
                statistics.median(floor_session(a.calls * 5, spin=True)))
            times, _, _ = session(os.path.abspath(a.bin), "ping", a.corpus, a.example,
                                  a.calls * 5, False, spin=True)
            ctx["ping_spin_rt_p50_us"].append(statistics.median(times))
            ctx["ping_spin_rt_p95_us"].append(pct(times, 95))
            mask = os.sched_getaffinity(0)
            os.sched_setaffinity(0, {cpu})
            try:
                times, _, _ = session(os.path.abspath(a.bin), "ping", a.corpus, a.example,
                                      a.calls * 5, False, cpu=cpu)
            finally:
                os.sched_setaffinity(0, mask)
            ctx["ping_pinned_rt_p50_us"].append(statistics.median(times))
    except (ServerGone, OSError, ValueError) as e:
        out["notes"].append(f"ping context: {e}")
    out["ping_context"] = {k: low(v) for k, v in ctx.items()}
    text = json.dumps(out, indent=2)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
