#!/usr/bin/env python3
"""Render size-report/REPORT.md from the JSON results and budgets.json.

Usage: report.py --results DIR --budgets budgets.json --out REPORT.md
                 [--tiers "5k 50k 200k"] [--contract-tiers "5k"] [--skipped-symbols] [--skipped-deps]
                 [--daemon] [--tools]

DIR holds what `size-report/run` wrote:
  sizes.json       {"mesh_mcp_stripped_bytes": N, "meshd_stripped_bytes": N, ...}
  symbols.json     symbols.py output (optional: "not measured" when missing)
  init.json        bench.py --init-only output (init_empty_ms, rss_after_init_kb)
  tier-<T>.json    bench.py output per tier T
  tier-<T>-contracts.json
                   the same on the contract-mix variant, for the tiers in --contract-tiers,
                   judged against tier T's budgets
  dep-<crate>.json binary delta of one dependency outside the design card (a release build
                   with the crate replaced by size-report/stubs/<crate>); every stub there gets
                   a row, "not measured" when its build failed
  tools.json       bench_tools.py output (analyze_impact latency, audit on/off throughput);
                   read only with --tools
  daemon.json      bench.py --daemon output (proxy start and RSS, meshd RSS); read only with
                   --daemon, otherwise the section says it was skipped on purpose
  latency.json     bench_latency.py output (server-side stages, round trips, CPU per call);
                   read only with --latency
  impact.json      bench_impact.py output (`mesh-mcp impact` on a branch); read only with
                   --impact
  vs-rg.json       bench_vs_rg.py output (practice corpora next to ripgrep); read only with
                   --vs-rg
  opt-<L>.json, opt-<L>-latency.json, opt-<L>-tools.json, opt-<L>-5k.json
                   the same figures for a release build at the other opt-level L; read only
                   with --opt L
  ../fuzz/RESULT.json
                   the committed extractor fuzz long run (size-report/fuzz/run), always read

Every budget key gets a row "what / measured / budget / ok?". The exit status is 1 when any
measured value is over its budget or any budgeted value is missing ("not measured"); tiers that
are in budgets.json but not in --tiers were skipped on purpose and do not fail. Tiers in
--tiers without budgets (e.g. a 2k dev run) are shown for information only.
"""

import argparse
import datetime
import json
import os
import subprocess
import sys

# key -> (label, unit) ; unit drives formatting
LABELS = {
    "mesh_mcp_stripped_bytes": ("`mesh-mcp` binary, stripped", "bytes"),
    "meshd_stripped_bytes": ("`meshd` binary, stripped", "bytes"),
    "init_ms": ("process start → `initialize` answered", "ms"),
    "rss_after_init_kb": ("RSS after `initialize`, empty workspace", "kb"),
    "cold_index_ms": ("cold index until the first answer", "ms"),
    "peak_rss_kb": ("peak RSS (VmHWM)", "kb"),
    "search_p50_ms": ("`smart_search` round trip p50", "ms"),
    "search_p95_ms": ("`smart_search` round trip p95", "ms"),
    "edit_visible_ms": ("file edit → visible to `smart_search`", "ms"),
    "proxy_init_warm_ms": ("`mesh-mcp run` (proxy) start → `initialize` answered, warm meshd",
                           "ms"),
    "proxy_init_cold_ms": ("first `mesh-mcp run` start → `initialize` answered, meshd spawned",
                           "ms"),
    "proxy_rss_kb": ("proxy RSS after `initialize`", "kb"),
    "daemon_rss_1_kb": ("`meshd` RSS, 1 client", "kb"),
    "daemon_rss_16_kb": ("`meshd` RSS, 16 clients", "kb"),
    "daemon_hwm_kb": ("`meshd` peak RSS (VmHWM)", "kb"),
    "impact_p50_ms": ("`analyze_impact` round trip p50", "ms"),
    "impact_p95_ms": ("`analyze_impact` round trip p95", "ms"),
    "audit_on_p50_ms": ("`smart_search` round trip p50, audit trail on (default)", "ms"),
    "audit_off_p50_ms": ("`smart_search` round trip p50, audit trail off", "ms"),
    "audit_on_calls_per_s": ("sequential `smart_search` calls per second, audit on", "rate"),
    "audit_off_calls_per_s": ("sequential `smart_search` calls per second, audit off", "rate"),
    "tools_list_bytes": ("`tools/list` answer at 2025-11-25 (issue 19: at most main's + ¼)",
                         "count"),
    "tools_list_tokens": ("`tools/list` answer, ≈ tokens (bytes / 4)", "count"),
}
TOOL_KEYS = ["impact_p50_ms", "impact_p95_ms", "audit_on_p50_ms", "audit_off_p50_ms",
             "audit_on_calls_per_s", "audit_off_calls_per_s", "tools_list_bytes",
             "tools_list_tokens"]
DAEMON_KEYS = ["proxy_init_warm_ms", "proxy_init_cold_ms", "proxy_rss_kb", "daemon_rss_1_kb",
               "daemon_rss_16_kb", "daemon_hwm_kb"]
TIER_KEYS = ["init_ms", "cold_index_ms", "peak_rss_kb", "search_p50_ms", "search_p95_ms",
             "edit_visible_ms"]


def fmt(value, unit):
    if value is None:
        return "—"
    if unit == "bytes":
        return f"{value / 1048576:.2f} MiB ({value:,} B)"
    if unit == "kb":
        return f"{value / 1024:.1f} MiB ({value:,} KiB)"
    if unit == "ms":
        return f"{value:,.3f} ms" if value < 10 else f"{value:,.1f} ms"
    if unit == "rate":
        return f"{value:,.0f} /s"
    if unit == "us":
        return f"{value:,.1f} µs"
    if unit == "ratio":
        return f"{value:.2f} ×"
    if unit in ("count", "mincount"):
        return f"{value:,}"
    return str(value)


def fmt_budget(value, unit):
    if value is None:
        return "—"
    if unit == "bytes":
        return f"≤ {value / 1048576:.1f} MiB"
    if unit == "kb":
        return f"≤ {value / 1024:g} MiB"
    if unit == "us":
        return f"≤ {value:g} µs"
    if unit == "ratio":
        return f"≤ {value:g} ×"
    if unit == "count":
        return f"≤ {value:,}"
    if unit == "mincount":
        return f"≥ {value:,}"
    return f"≤ {value:g} ms"


class Verdict:
    def __init__(self):
        self.breaches, self.missing = [], []

    def row(self, what, key, measured, budget, unit, tag):
        """One table row; records a breach or a missing value when a budget exists."""
        if budget is None:
            ok = "info"
        elif measured is None:
            ok = "**not measured**"
            self.missing.append(f"{tag} {key}")
        elif (measured >= budget) if unit == "mincount" else (measured <= budget):
            ok = "ok"
        else:
            ok = "**BREACH**"
            self.breaches.append(f"{tag} {key}: {fmt(measured, unit)} > {fmt_budget(budget, unit)}")
        return f"| {what} | {fmt(measured, unit)} | {fmt_budget(budget, unit)} | {ok} |"


def budget_table(w, v, keys, measured, budgets, tag):
    """A "what / measured / budget / ok?" table over `keys`, judged by the Verdict `v`."""
    w("")
    w("| what | measured | budget | ok? |")
    w("|---|---|---|---|")
    for key in keys:
        label, unit = LABELS[key]
        w(v.row(label, key, measured.get(key), budgets.get(key), unit, tag))


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def sh(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def machine():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return os.cpu_count(), cpu, os.uname().release


def tier_files(name):
    """'5k' -> 5000, '200k' -> 200000, '1500' -> 1500."""
    n = name.lower()
    return int(float(n[:-1]) * 1000) if n.endswith("k") else int(n)


def main(argv):
    ap = argparse.ArgumentParser(description="Render REPORT.md from bench results.")
    ap.add_argument("--results", required=True)
    ap.add_argument("--budgets", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--tiers", default="5k 50k 200k")
    ap.add_argument("--contract-tiers", default="",
                    help="tiers that also ran on the contract-mix variant")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--skipped-symbols", action="store_true")
    ap.add_argument("--skipped-deps", action="store_true",
                    help="the dependency-delta builds were skipped on purpose")
    ap.add_argument("--daemon", action="store_true",
                    help="judge daemon.json (proxy mode); without it the section is skipped")
    ap.add_argument("--tools", action="store_true",
                    help="judge tools.json (bench_tools.py); without it the section is skipped")
    ap.add_argument("--latency", action="store_true",
                    help="judge latency.json (bench_latency.py)")
    ap.add_argument("--vs-rg", action="store_true", help="judge vs-rg.json (bench_vs_rg.py)")
    ap.add_argument("--impact", action="store_true",
                    help="judge impact.json (bench_impact.py)")
    ap.add_argument("--opt", help="the other opt-level measured (opt-<L>*.json)")
    ap.add_argument("--fuzz", action="store_true",
                    help="judge the committed fuzz long run (size-report/fuzz/RESULT.json)")
    args = ap.parse_args(argv)

    budgets = load(args.budgets)
    res = lambda name: load(os.path.join(args.results, name))
    sizes, symbols, init = res("sizes.json") or {}, res("symbols.json"), res("init.json") or {}
    tiers = args.tiers.split()
    contract_tiers = args.contract_tiers.split()
    variant = "plain" + (f", and the contract mix for {' '.join(contract_tiers)}"
                         if contract_tiers else "")
    v = Verdict()
    lines = []
    w = lines.append

    nproc, cpu, kernel = machine()
    here = os.path.dirname(os.path.abspath(__file__))
    commit = sh("git", "-C", here, "rev-parse", "--short=12", "HEAD") or "unknown"
    # Dirty = changes other than this report itself (which every run rewrites).
    dirty = sh("git", "-C", here, "status", "--porcelain", "--", ":/",
             ":(top,exclude)size-report/REPORT.md")
    dirty = " (working tree has changes)" if dirty else ""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")

    w("# mesh-mcp size and speed report")
    w("")
    w(f"- Date: {now}")
    w(f"- Machine: {nproc} cores, {cpu}, Linux {kernel}")
    w(f"- Commit: `{commit}`{dirty}")
    w(f"- Benched server: `{init.get('bin', 'unknown')}`")
    w(f"- Toolchain: {sh('rustc', '--version') or 'unknown'}")
    w(f"- Workload: `gen_workload.py` seed {args.seed}, 8 services, {variant}; "
      f"tiers run: {' '.join(tiers) or 'none'}")
    w("")
    body_start = len(lines)

    # --- binaries and start-up --------------------------------------------------------------
    w("## Binaries and start-up")
    w("")
    w("| what | measured | budget | ok? |")
    w("|---|---|---|---|")
    for key in ("mesh_mcp_stripped_bytes", "meshd_stripped_bytes"):
        label, unit = LABELS[key]
        w(v.row(label, key, sizes.get(key), budgets["binary"].get(key), unit, "binary"))
    aim = budgets.get("aims", {}).get("mesh_mcp_stripped_bytes")
    got = sizes.get("mesh_mcp_stripped_bytes")
    if aim:
        met = "—" if got is None else ("met" if got <= aim else "not met")
        w(f"| `mesh-mcp` aim (not a budget) | {fmt(got, 'bytes')} | ≤ {aim / 1048576:.1f} MiB "
          f"| {met} |")
    spawns = init.get("empty_spawns")
    for key, rkey in (("init_ms", "init_empty_ms"), ("rss_after_init_kb", "rss_after_init_kb")):
        label, unit = LABELS[key]
        label += f", empty dir, median of {spawns} spawns" if spawns else ", empty dir"
        w(v.row(label, key, init.get(rkey), budgets["startup"].get(key), unit, "startup"))
    floor = init.get("spawn_floor_ms")
    if floor is not None:
        w(f"| harness floor: spawn `cat`, echo one line (not a budget) | {fmt(floor, 'ms')} "
          f"| — | info |")
    w("")

    # --- dependencies outside the design card -------------------------------------------
    w("## Dependencies outside the design card")
    w("")
    w("Each crate beyond SPEC §1's set must earn its place with its measured binary delta: the "
      "release build minus a release build of a copy of the crate whose dependency is replaced "
      "by a stand-in with the same API and no body (`size-report/stubs/<crate>`), both stripped. "
      "The reason for each is in the README's dependency table.")
    w("")
    stubs = sorted(d for d in os.listdir(os.path.join(here, "stubs"))
                   if os.path.isdir(os.path.join(here, "stubs", d)))
    if not stubs:
        w("None.")
    elif args.skipped_deps:
        w("Skipped on purpose (`MESH_BENCH_SKIP_DEPS=1`).")
    else:
        w("| crate | `mesh-mcp` delta | `meshd` delta |")
        w("|---|---|---|")
        for crate in stubs:
            d = res(f"dep-{crate}.json") or {}
            cells = []
            for key in ("mesh_mcp_delta_bytes", "meshd_delta_bytes"):
                n = d.get(key)
                cells.append("**not measured**" if n is None else f"{n:+,} B ({n / 1024:+.1f} KiB)")
                if n is None:
                    v.missing.append(f"dependency {crate} {key}")
            w(f"| `{crate}` | {cells[0]} | {cells[1]} |")
    w("")

    # --- daemon and proxy ---------------------------------------------------------------
    w("## Daemon and proxy (`mesh-mcp run` → `meshd`)")
    w("")
    daemon_notes = []
    if not args.daemon:
        w("Skipped on purpose (`MESH_BENCH_SKIP_DAEMON=1`).")
    else:
        d = res("daemon.json") or {}
        db = budgets.get("daemon", {})
        if d:
            where = d.get("corpus") or "an empty workspace"
            w(f"Release `mesh-mcp run` bridged to the `meshd` beside it, on {where}; warm start "
              f"is the median of {d.get('daemon_spawns')} proxies started while the daemon "
              f"runs; `meshd` RSS is VmRSS with 1 and with {d.get('daemon_clients')} connected "
              f"clients (after the first index), each having run `index_status`.")
        else:
            w("No result file: the daemon bench did not run.")
        budget_table(w, v, DAEMON_KEYS, d, db, "daemon")
        daemon_notes = [f"daemon: {n}" for n in d.get("notes", [])]
    w("")

    # --- tiers ------------------------------------------------------------------------------
    ctags_rows = []
    all_tiers = list(budgets["tiers"]) + [t for t in tiers if t not in budgets["tiers"]]
    notes = [f"start-up: {n}" for n in init.get("notes", [])] + daemon_notes
    sections = [(t, False) for t in all_tiers]
    sections += [(t, True) for t in contract_tiers]
    for tier, contracts in sections:
        tb = budgets["tiers"].get(tier)
        tier_label = tier + (" + contract mix" if contracts else "")
        tag = f"tier {tier_label}"
        w(f"## Tier {tier_label}")
        w("")
        if tier not in tiers and not contracts:
            w(f"Skipped on purpose (not in `MESH_BENCH_TIERS`).")
            w("")
            continue
        r = res(f"tier-{tier}{'-contracts' if contracts else ''}.json") or {}
        if r:
            w(f"{r.get('corpus_files', 0):,} files in the corpus "
              f"({tier_files(tier):,} generated sources + manifests"
              f"{' + contract extras: a `.proto` and a `@GrpcMethod` handler per TypeScript file, a shared Java class imported everywhere, Spring YAML and Markdown every 100 files' if contracts else ''}); "
              f"{r.get('runs')} cold runs × {r.get('queries')} queries; "
              f"{r.get('search_count', 0)} searches answered, "
              f"{r.get('search_errors', 0)} failed.")
        else:
            w("No result file: the bench did not run for this tier.")
        if tb is None:
            w("")
            w("(No budgets for this tier: information only.)")
        w("")
        w("| what | measured | budget | ok? |")
        w("|---|---|---|---|")
        for key in TIER_KEYS:
            label, unit = LABELS[key]
            budget = tb.get(key) if tb else None
            if budget is None and r.get(key) is None and tb is not None:
                continue  # neither budgeted nor measured: nothing to say
            w(v.row(label, key, r.get(key), budget, unit, tag))
        w("")
        if r:
            ctags_rows.append((tier_label, r))
            notes += [f"{tag}: {n}" for n in r.get("notes", [])]

    # --- tools on the example -----------------------------------------------------------
    w("## Tools on the example workspace")
    w("")
    if not args.tools:
        w("Skipped on purpose (`MESH_BENCH_SKIP_TOOLS=1`).")
    else:
        t = res("tools.json") or {}
        tb = budgets.get("tools", {})
        if t:
            w(f"`bench_tools.py`: {t.get('runs')} fresh `mesh-mcp run --standalone` sessions per "
              f"figure on a copy of `{os.path.basename(t.get('example', 'examples/polyglot-shop'))}`, "
              f"{t.get('calls_per_session')} sequential calls each after one warm-up; "
              f"`analyze_impact` cycles a topic (depth 2), an RPC, a route and a constant; "
              f"`smart_search` cycles five names, once with the audit trail on (the default: "
              f"every call appends a hash-chained SQLite row) and once with `[audit] enabled = "
              f"false`. Lower medians of the per-session figures.")
        else:
            w("No result file: bench_tools.py did not run or failed.")
        budget_table(w, v, TOOL_KEYS, t, tb, "tools")
        notes += [f"tools: {n}" for n in t.get("notes", [])]
    w("")

    # --- the request path (issue 17) ------------------------------------------------------
    w("## The request path")
    w("")
    rb = budgets.get("request_path", {})
    if not args.latency:
        w("Skipped on purpose (`MESH_BENCH_SKIP_STAGES=1`).")
    else:
        lat = res("latency.json") or {}
        w("`bench_latency.py`: one fresh `run --standalone` session per workload and binary, "
          "after warm-up calls. *Server-side* is the server's own time with a request, from the "
          "reader splitting the frame off the input (right after the `read` that brought it) to "
          "the `write` that hands the answer to the kernel, taken from per-request timestamps in "
          "a benchmark build (the release profile plus `--features bench-stages`, "
          "`src/stages.rs`; the release binary has no timestamps). The `write` itself is shown "
          "apart: writing to a pipe wakes the client, and Linux often runs the woken client at "
          "once on the writer's CPU, so that span can hold the client's own work on the answer. "
          "*Round trip* is the Python client's, and *CPU per call* the release "
          "server's user+system time over the timed calls (every thread, the audit task's "
          "batched writes included) divided by their number. Workloads: `search5k` = scoped "
          "`smart_search` on the 5k tier corpus (queries and scopes cycling as in the tier "
          "bench), `impact` = `analyze_impact` on the example (targets as in `bench_tools.py`), "
          "`ping` on the example.")
        w("")
        w("| workload | calls | server p50 | server p95 | the `write` p50 | round trip p50 "
          "| round trip p95 | CPU per call |")
        w("|---|---|---|---|---|---|---|---|")
        for name in ("search5k", "impact", "ping"):
            r = lat.get(name) or {}
            w(f"| `{name}` | {r.get('stage_records', '—')} | {fmt(r.get('server_p50_us'), 'us')} "
              f"| {fmt(r.get('server_p95_us'), 'us')} | {fmt(r.get('write_p50_us'), 'us')} "
              f"| {fmt(r.get('rt_p50_us'), 'us')} "
              f"| {fmt(r.get('rt_p95_us'), 'us')} | {fmt(r.get('cpu_per_call_us'), 'us')} |")
        w("")
        w("Stage medians, µs after the frame was read (`taken` by the session loop, `parsed`, "
          "the tool's start and end, the answer `queued` for the writer, `picked` by it, "
          "`sending` (the `write` starts), `written`):")
        w("")
        w("| workload | taken | parsed | tool start | tool end | queued | picked | sending "
          "| written |")
        w("|---|---|---|---|---|---|---|---|---|")
        for name in ("search5k", "impact", "ping"):
            st = (lat.get(name) or {}).get("stage_p50_us", {})
            cells = " | ".join(fmt(st.get(k), "us") for k in
                               ("taken", "parsed", "tool_start", "tool_end", "queued", "picked",
                                "sending", "written"))
            w(f"| `{name}` | {cells} |")
        w("")
        w("| what | measured | budget | ok? |")
        w("|---|---|---|---|")
        rows = [
            ("5k `smart_search` server-side p50", "search5k_server_p50_us",
             (lat.get("search5k") or {}).get("server_p50_us")),
            ("5k `smart_search` server-side p95", "search5k_server_p95_us",
             (lat.get("search5k") or {}).get("server_p95_us")),
            ("`analyze_impact` on the example, server-side p50", "impact_server_p50_us",
             (lat.get("impact") or {}).get("server_p50_us")),
        ]
        ctx = lat.get("ping_context") or {}
        rows.append(("`ping` round trip p50, busy-polling client (release build)",
                     "ping_rt_p50_us", ctx.get("ping_spin_rt_p50_us")))
        for label, key, value in rows:
            w(v.row(label, key, value, rb.get(key), "us", "request path"))
        w(f"| `ping` round trip p95, busy-polling client (not a bar) "
          f"| {fmt(ctx.get('ping_spin_rt_p95_us'), 'us')} | — | info |")
        w(f"| `ping` round trip p50, blocking client (select() then read; not a bar) "
          f"| {fmt((lat.get('ping') or {}).get('rt_p50_us'), 'us')} | — | info |")
        w(f"| harness floor: the busy-polling client against `cat` echoing each line (not a bar) "
          f"| {fmt(ctx.get('floor_spin_rt_p50_us'), 'us')} | — | info |")
        w(f"| harness floor: the blocking client against `cat` (not a bar) "
          f"| {fmt(ctx.get('floor_rt_p50_us'), 'us')} | — | info |")
        w(f"| `ping` round trip p50, blocking client and server pinned to one CPU (not a bar) "
          f"| {fmt(ctx.get('ping_pinned_rt_p50_us'), 'us')} | — | info |")
        w("")
        w("The ping bar is measured with a client that busy-polls the non-blocking read end of "
          "the server's stdout instead of sleeping in `select()`: its round trip holds the "
          "server's wake-up on the request, the server's work and both pipes, but not the "
          "client's own wake-up on the answer, which belongs to the client. On this VM a "
          "wake-up of the other, idle vCPU costs tens of microseconds (the guest does not "
          "halt-poll), so the blocking client's figure moves with where the scheduler puts the "
          "two ends; the floors show both clients against a server that does nothing (`cat`), "
          "and the pinned run the cost of our own work with both ends on one CPU.")
        notes += [f"request path: {n}" for n in lat.get("notes", [])]
    w("")

    # --- practice corpora next to ripgrep (issue 17) ---------------------------------------
    w("## Real workspaces next to ripgrep")
    w("")
    gb = budgets.get("vs_rg", {})
    if not args.vs_rg:
        w("Skipped on purpose (`MESH_BENCH_SKIP_RG=1`).")
    else:
        g = res("vs-rg.json") or {}
        w(f"`bench_vs_rg.py`: on each practice corpus, {g.get('runs', '?')} runs each, side by "
          f"side: a one-shot `mesh-mcp query smart_search '{{\"query\": \"{g.get('word', '?')}\"}}'` "
          f"(start to exit: index, answer, audit row), a session's cold first answer (`run "
          f"--standalone`, `initialize`, the same search, stdin closed: start to exit, the "
          f"watcher set-up included) and `rg -c -uu {g.get('word', '?')}` (every file read). "
          f"Fresh private HOME per run (no fact cache); the audit database, which an "
          f"installation creates once, is created by one untimed query per corpus and appended "
          f"to by every timed run. *First run* is the same query as the very first run in a new "
          f"HOME (audit database and key created), for information. CPU = user+system of the "
          f"process, all threads (wait4 rusage); medians. The bar is on the one-shot query's "
          f"CPU.")
        w("")
        w("| corpus | files | query CPU | query wall | session CPU | session wall "
          "| first run CPU | rg CPU | rg wall | query/rg CPU | budget | ok? |")
        w("|---|---|---|---|---|---|---|---|---|---|---|---|")
        budget = gb.get("corpus_cpu_ratio")
        for row in g.get("corpora", []):
            ratio = row.get("cpu_ratio")
            if ratio is None:
                ok = "**not measured**"
                v.missing.append(f"vs rg {row.get('corpus')}")
            elif budget is not None and ratio > budget:
                ok = "**BREACH**"
                v.breaches.append(f"vs rg {row.get('corpus')}: query CPU {ratio:.2f} × rg > "
                                  f"{budget:g} ×")
            else:
                ok = "ok"
            w(f"| `{row.get('corpus')}` | {row.get('files', 0):,} "
              f"| {fmt(row.get('query_cpu_ms'), 'ms')} | {fmt(row.get('query_wall_ms'), 'ms')} "
              f"| {fmt(row.get('session_cpu_ms'), 'ms')} "
              f"| {fmt(row.get('session_wall_ms'), 'ms')} | {fmt(row.get('first_cpu_ms'), 'ms')} "
              f"| {fmt(row.get('rg_cpu_ms'), 'ms')} "
              f"| {fmt(row.get('rg_wall_ms'), 'ms')} | {fmt(ratio, 'ratio')} "
              f"| {fmt_budget(budget, 'ratio')} | {ok} |")
        if not g.get("corpora"):
            w("| — | | | | | | | | | | | **not measured** |")
            v.missing.append("vs rg: no corpus measured")
        notes += [f"vs rg: {n}" for n in g.get("notes", [])]
    w("")
    w("At the tiers, `rg -c -uu Service` ran right after each cold run of the tier bench on the "
      "same corpus (median wall); ratio = mesh-mcp's cold index until the first answer / rg's "
      "wall:")
    w("")
    w("| tier | files | cold_index_ms | rg_ms | ratio | budget | ok? |")
    w("|---|---|---|---|---|---|---|")
    wall_budgets = gb.get("tier_wall_ratio", {})
    for label, r in ctags_rows:
        budget = None if "contract" in label else wall_budgets.get(label)
        ratio = r.get("rg_ratio")
        ok = "info"
        if budget is not None:
            if ratio is None:
                ok = "**not measured**"
                v.missing.append(f"tier {label} rg_ratio")
            elif ratio > budget:
                ok = "**BREACH**"
                v.breaches.append(f"tier {label} cold wall {ratio:.2f} × rg > {budget:g} ×")
            else:
                ok = "ok"
        w(f"| {label} | {r.get('corpus_files', 0):,} | {fmt(r.get('cold_index_ms'), 'ms')} "
          f"| {fmt(r.get('rg_ms'), 'ms')} | {fmt(ratio, 'ratio')} "
          f"| {fmt_budget(budget, 'ratio') if budget else '—'} | {ok} |")
    w("")

    # --- mesh-mcp impact on a branch (issue 22) --------------------------------------------
    w("## `mesh-mcp impact` on a 5k branch")
    w("")
    if not args.impact:
        w("Skipped on purpose (`MESH_BENCH_SKIP_IMPACT=1`).")
    else:
        im = res("impact.json") or {}
        tier = "5k-contracts" if im.get("protos") else "5k"
        cold = (res(f"tier-{tier}.json") or {}).get("cold_index_ms")
        budget = budgets.get("impact", {}).get("wall_ratio_to_cold_index")
        wall = im.get("impact_wall_ms")
        ratio = wall / cold if wall is not None and cold else None
        w(f"`bench_impact.py`: the {tier} tier's workspace as a git repository, a branch that "
          f"changes {im.get('changed_sources', '?')} of its {im.get('source_files', '?'):,} "
          f"source files (a string in a function body each, and one new function)"
          + (", renames an RPC and removes a field of one `.proto`" if im.get("proto_broken") else "")
          + f"; `mesh-mcp impact --base main` from start to exit (index, git diff, impact, "
          f"Markdown), {im.get('runs', '?')} runs in a fresh private HOME, next to a one-shot "
          f"`query index_status` on the same tree; medians. The bar compares impact's wall with "
          f"the tier bench's cold index until the first answer.")
        w("")
        w("| what | measured | budget | ok? |")
        w("|---|---|---|---|")
        w(f"| `mesh-mcp impact` wall / CPU | {fmt(wall, 'ms')} / {fmt(im.get('impact_cpu_ms'), 'ms')} "
          f"| — | {'info' if im.get('impact_ok') else '**failed**'} |")
        w(f"| one-shot `query index_status` wall / CPU | {fmt(im.get('query_wall_ms'), 'ms')} / "
          f"{fmt(im.get('query_cpu_ms'), 'ms')} | — | info |")
        w(f"| tier {tier} cold index until the first answer | {fmt(cold, 'ms')} | — | info |")
        w(v.row("impact wall / cold index", "impact_ratio", ratio, budget, "ratio",
                "impact"))
        if im and not im.get("impact_ok"):
            v.breaches.append("impact: `mesh-mcp impact` did not answer (exit code or no output)")
    w("")

    # --- opt-level (issue 17) --------------------------------------------------------------
    w("## opt-level: the shipped one against the other")
    w("")
    if not args.opt:
        w("Skipped on purpose (`MESH_BENCH_SKIP_OPT=1`).")
    else:
        o = res(f"opt-{args.opt}.json") or {}
        ol = res(f"opt-{args.opt}-latency.json") or {}
        ot = res(f"opt-{args.opt}-tools.json") or {}
        o5 = res(f"opt-{args.opt}-5k.json") or {}
        lat = res("latency.json") or {}
        tools_now = res("tools.json") or {}
        t5 = res("tier-5k.json") or {}
        shipped = o.get("shipped", "?")
        w(f"The release build at `opt-level = \"{args.opt}\"` (`CARGO_PROFILE_RELEASE_OPT_LEVEL`, "
          f"everything else equal, unwinding on) measured with the same scripts as the shipped "
          f"`\"{shipped}\"` build; lower is better everywhere.")
        w("")
        w(f"| what | `{shipped}` (shipped) | `{args.opt}` |")
        w("|---|---|---|")
        w(f"| `mesh-mcp` stripped | {fmt(sizes.get('mesh_mcp_stripped_bytes'), 'bytes')} "
          f"| {fmt(o.get('mesh_mcp_stripped_bytes'), 'bytes')} |")
        w(f"| `meshd` stripped | {fmt(sizes.get('meshd_stripped_bytes'), 'bytes')} "
          f"| {fmt(o.get('meshd_stripped_bytes'), 'bytes')} |")
        for name, label in (("search5k", "5k `smart_search`"), ("impact", "`analyze_impact`"),
                            ("ping", "`ping`")):
            a, b = lat.get(name) or {}, ol.get(name) or {}
            w(f"| {label} round trip p50 | {fmt(a.get('rt_p50_us'), 'us')} "
              f"| {fmt(b.get('rt_p50_us'), 'us')} |")
            w(f"| {label} CPU per call | {fmt(a.get('cpu_per_call_us'), 'us')} "
              f"| {fmt(b.get('cpu_per_call_us'), 'us')} |")
        w(f"| `analyze_impact` round trip p50 (`bench_tools.py`) "
          f"| {fmt(tools_now.get('impact_p50_ms'), 'ms')} | {fmt(ot.get('impact_p50_ms'), 'ms')} |")
        w(f"| 5k cold index until the first answer | {fmt(t5.get('cold_index_ms'), 'ms')} "
          f"| {fmt(o5.get('cold_index_ms'), 'ms')} |")
        w(f"| 5k `smart_search` round trip p50 (tier bench) | {fmt(t5.get('search_p50_ms'), 'ms')} "
          f"| {fmt(o5.get('search_p50_ms'), 'ms')} |")
        limit = budgets["binary"].get("mesh_mcp_stripped_bytes")
        over = [k for k in ("mesh_mcp_stripped_bytes", "meshd_stripped_bytes")
                if o.get(k) is not None and limit is not None and o[k] > limit]
        w("")
        if over:
            w(f"With unwinding on, `{args.opt}` is over the {limit / 1048576:.1f} MiB binary budget, "
              f"so it cannot ship whatever its speed; `{shipped}` stays.")
        else:
            w(f"Both fit the binary budget; the choice rests on the speed rows above.")
    w("")

    # --- fuzzing (issue 17) ----------------------------------------------------------------
    w("## Extractor fuzzing")
    w("")
    fz = load(os.path.join(here, "fuzz", "RESULT.json"))
    fb = budgets.get("fuzz", {})
    if not args.fuzz:
        w("Not judged in this run (no `--fuzz`).")
    elif not fz:
        w("No committed long run (`size-report/fuzz/RESULT.json`): run `size-report/fuzz/run`.")
        v.missing.append("fuzz long run")
    else:
        w(f"The committed long run of `src/index/extract_fuzz.rs` (`size-report/fuzz/run`, the `fuzz` "
          f"profile: optimised, with overflow checks and debug assertions): seed "
          f"`{fz.get('seed')}`, {fz.get('cases_per_target', 0):,} cases per target, "
          f"{fz.get('threads')} threads, {fz.get('wall_s')} s, hang cap {fz.get('hang_cap_ms')} ms, "
          f"on commit `{fz.get('commit', '?')}`. Every case is replayable from (seed, target, "
          f"case number); see `size-report/fuzz/README.md`.")
        w("")
        w("| target | cases | extracted | guard rejected | seed files | input MiB | mean | slowest "
          "| slowest case | panics | invariant failures |")
        w("|---|---|---|---|---|---|---|---|---|---|---|")
        for t in fz.get("targets", []):
            w(f"| `{t['target']}` | {t['cases']:,} | {t['extracted']:,} | {t['guarded']:,} "
              f"| {t['seed_files']} | {t['input_mib']:,} | {t['mean_us']} µs "
              f"| {t['max_ms']} ms ({t['max_case_bytes']:,} B) | {t['max_case']} "
              f"| {t['panics']} | {t['invariant_failures']} |")
        w("")
        w("| what | measured | budget | ok? |")
        w("|---|---|---|---|")
        least = min((t["cases"] for t in fz.get("targets", [])), default=None)
        w(v.row("cases per target (fewest)", "min_cases_per_target", least,
                fb.get("min_cases_per_target"), "mincount", "fuzz"))
        found = (fz.get("panics", 0) or 0) + (fz.get("invariant_failures", 0) or 0) + \
            (fz.get("hangs", 0) or 0)
        w(v.row("panics + hangs + broken invariants", "findings", found, fb.get("findings"),
                "count", "fuzz"))
    w("")

    # --- ctags ------------------------------------------------------------------------------
    w("## Compared with Universal Ctags")
    w("")
    w("`ctags -R -f /dev/null --languages=Rust,Go,Python,TypeScript,Java .` on the same corpus, "
      "median wall time. Ratio = ctags_ms / cold_index_ms (above 1 means mesh-mcp indexed "
      "faster than ctags tagged; ctags does less: no imports, contracts or edges).")
    w("")
    if ctags_rows:
        w("| tier | files | ctags_ms | cold_index_ms | ratio |")
        w("|---|---|---|---|---|")
        for label, r in ctags_rows:
            ratio = r.get("ctags_ratio")
            w(f"| {label} | {r.get('corpus_files', 0):,} | {fmt(r.get('ctags_ms'), 'ms')} "
              f"| {fmt(r.get('cold_index_ms'), 'ms')} | {'—' if ratio is None else ratio} |")
    else:
        w("Not measured (no tier ran).")
    w("")

    # --- contributors -----------------------------------------------------------------------
    w("## Biggest contributors to `mesh-mcp`")
    w("")
    if symbols:
        w(f"From `nm --size-sort -S -C` on a release build with symbols kept "
          f"(`CARGO_PROFILE_RELEASE_STRIP=false`, `CARGO_PROFILE_RELEASE_DEBUG=false`); "
          f"{symbols['symbol_bytes_total']:,} bytes in sized, non-BSS symbols. Attribution is "
          f"by the first path segment of the demangled name; with fat LTO, generic code often "
          f"lands under `core`/`alloc`, so treat this as a guide.")
        w("")
        w("| crate prefix | bytes | share |")
        w("|---|---|---|")
        total = symbols["symbol_bytes_total"] or 1
        for crate, n in symbols["crates"]:
            w(f"| `{crate}` | {n:,} | {100 * n / total:.1f} % |")
        w("")
        w("| symbol | bytes |")
        w("|---|---|")
        for name, n in symbols["symbols"]:
            safe = name.replace("|", "\\|").replace("`", "'")
            w(f"| `{safe}` | {n:,} |")
    elif args.skipped_symbols:
        w("Skipped on purpose (`MESH_BENCH_SKIP_SYMBOLS=1`).")
    else:
        w("Not measured (the unstripped build or `nm` failed).")
    w("")

    # --- notes and method -------------------------------------------------------------------
    w("## Notes from the bench")
    w("")
    if notes:
        for n in notes:
            w(f"- {n}")
    else:
        w("- none")
    w("")
    w("## Method")
    w("")
    w("Release build (`cargo build --release`). Binary sizes are of copies run through `strip`. "
      "`bench.py` drives `mesh-mcp run --standalone` over stdio with a fresh private HOME, "
      "audit DB and socket dir per process, cwd = corpus. cold_index_ms is spawn → first "
      "`smart_search` answered; init_ms is spawn → `initialize` answered (Python's spawn "
      "overhead included); peak RSS is VmHWM at the end of the session. Medians are lower "
      "medians over runs (a missing value counts as the worst); search percentiles are nearest "
      "rank over all queries of all runs. The edit probe appends `ScaleBenchMarker<n>` to the "
      "first generated file of `services/svc-0` and polls every 5 ms, giving up after 10 s. "
      "The daemon section runs `bench.py --daemon` on the release `mesh-mcp run` (proxy "
      "mode, spawning the `meshd` beside it) with its own private HOME and socket dir. "
      "Budgets: `budgets.json` (SPEC §9); a missing value fails unless its tier was skipped.")
    w("")

    # verdict goes right under the header
    if v.breaches or v.missing:
        verdict = [f"**Verdict: FAIL** — {len(v.breaches)} over budget, "
                   f"{len(v.missing)} not measured.", ""]
        verdict += [f"- over budget: {b}" for b in v.breaches]
        verdict += [f"- not measured: {m}" for m in v.missing]
    else:
        verdict = ["**Verdict: PASS** — every budget measured and met."]
    lines[body_start:body_start] = verdict + [""]

    with open(args.out, "w") as f:
        f.write("\n".join(lines).rstrip() + "\n")
    print(f"report: {args.out}: {len(v.breaches)} over budget, {len(v.missing)} not measured",
          file=sys.stderr)
    return 1 if (v.breaches or v.missing) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
