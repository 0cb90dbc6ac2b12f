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
}
TOOL_KEYS = ["impact_p50_ms", "impact_p95_ms", "audit_on_p50_ms", "audit_off_p50_ms",
             "audit_on_calls_per_s", "audit_off_calls_per_s"]
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
    return str(value)


def fmt_budget(value, unit):
    if value is None:
        return "—"
    if unit == "bytes":
        return f"≤ {value / 1048576:.1f} MiB"
    if unit == "kb":
        return f"≤ {value / 1024:g} MiB"
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
        elif measured <= budget:
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
