#!/usr/bin/env python3
"""Scores mesh-mcp's tools against hand-written ground truth (accuracy/<corpus>.json).

For each corpus it starts one real `mesh-mcp run --standalone` session over stdio in the
corpus directory, asks every tool the questions the truth file answers, and compares the
`path:line` evidence in the answers with the truth, per category:

  services      index_status roots                vs truth `services[].root`
  declarations  smart_search <name>               vs every declaration of that name
  dependents    find_dependents <target> (file)   vs importing files
  grpc          analyze_grpc <service>            servers, handlers, clients, calls
  topics        analyze_impact <topic>            producers and consumers
  routes        smart_search kind=endpoint        vs every route (method, path, line)
  callers       analyze_impact "<METHOD> <path>"  vs every caller of each route
  edges         visualize_mesh json               vs service_edges (from, to, kind)

It prints precision and recall per category with every missing and extra fact, and the bytes
of each analyze_grpc / analyze_impact answer next to `rg -n <name>` over the same tree.
Only the standard library is used; the tool is driven the way an MCP client drives it.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

LOC = re.compile(r"`([^`\s]+?):(\d+)`")
TEST_PATH = re.compile(
    r"(^|/)(tests?|__tests__|e2e|spec|testing|Tests?)(/|$)|_test\.go$|Tests?\.(java|kt|cs|scala)$"
    r"|\.(spec|test)\.[jt]sx?$|(^|/)test_[^/]*\.py$|_test\.py$|_spec\.rb$|Test\.php$|UnitTests?(/|\.)|FunctionalTests?(/|\.)"
)


def is_test(path):
    return bool(TEST_PATH.search(path))


class Session:
    """One stdio MCP session with the real server."""

    def __init__(self, binary, workspace, env):
        self.proc = subprocess.Popen(
            [binary, "run", "--standalone"],
            cwd=workspace,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.next_id = 1
        self.call("initialize", {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "accuracy", "version": "1"},
        })
        self.notify("notifications/initialized")

    def notify(self, method):
        self.proc.stdin.write((json.dumps({"jsonrpc": "2.0", "method": method}) + "\n").encode())
        self.proc.stdin.flush()

    def call(self, method, params):
        rid = self.next_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"server closed the session during {method}")
            resp = json.loads(line)
            if resp.get("id") == rid:
                return resp

    def tool(self, name, args):
        resp = self.call("tools/call", {"name": name, "arguments": args})
        if "error" in resp:
            return "ERROR " + json.dumps(resp["error"])
        return "".join(c.get("text", "") for c in resp["result"].get("content", []))

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()


def locs(text):
    return {f"{p}:{n}" for p, n in LOC.findall(text)}


# ---------------------------------------------------------------------------------------------
# Answer parsers (Markdown; every row carries `path:line`)
# ---------------------------------------------------------------------------------------------

def parse_search(text):
    """smart_search hits: (kind, name, at), without the ones marked generated code (the truth
    leaves generated code out of every list)."""
    hits = []
    lines = text.splitlines()
    generated = False
    for i, line in enumerate(lines):
        if line.startswith("Also in this file:"):
            if generated:
                continue
            for kind, name, p, n in re.findall(r"(\w+) `([^`]+)` `([^`]+):(\d+)`", line):
                hits.append((kind, name, f"{p}:{n}"))
            continue
        m = re.match(r"### \[\d+\] `([^`]+):(\d+)`", line)
        if not m:
            continue
        at = f"{m.group(1)}:{m.group(2)}"
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        generated = nxt.endswith("— generated code")
        k = re.match(r"(\w+) `([^`]+)`", nxt)
        if k and not generated:
            hits.append((k.group(1), k.group(2), at))
    return hits


def parse_grpc(text):
    """analyze_grpc: {"servers": set, "clients": set, "handlers": {rpc: set}, "calls": {rpc: set}}."""
    out = {"servers": set(), "clients": set(), "handlers": {}, "calls": {}, "may_call": set()}
    rpc = None
    section = None
    for line in text.splitlines():
        m = re.match(r"#### `[^`.]+\.([^`]+)`", line)
        if m:
            rpc = m.group(1)
            section = None
            continue
        if line.startswith("### "):
            rpc = None
            section = None
        b = re.match(r"- \*\*([^*]+)\*\*", line)
        if b:
            label = b.group(1).lower()
            if label.startswith("server registrations"):
                section = "servers"
            elif label.startswith("server handlers"):
                section = "handlers"
            elif label.startswith("client call sites"):
                section = "calls"
            elif label.startswith("clients") or label.startswith("client construct"):
                section = "clients"
            elif label.startswith("may call"):
                section = "may_call"
            else:
                section = None
            continue
        if section and line.startswith("  - "):
            for at in locs(line):
                if section in ("handlers", "calls"):
                    if rpc:
                        out[section].setdefault(rpc, set()).add(at)
                elif section == "may_call":
                    out["may_call"].add(at)
                    out["clients"].add(at)
                else:
                    out[section].add(at)
    return out


def parse_impact(text):
    """analyze_impact table rows: list of (role, at)."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("| ") or line.startswith("| #") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 6:
            continue
        role = cells[2]
        for at in locs(cells[5]):
            rows.append((role, at))
    return rows


def parse_roots(text):
    roots = []
    in_roots = False
    for line in text.splitlines():
        if line.startswith("### Roots"):
            in_roots = True
            continue
        if in_roots and line.startswith("### "):
            break
        m = re.match(r"\| `([^`]+)` \| (\w+) \|", line)
        if in_roots and m and m.group(2) == "service":
            roots.append(m.group(1))
    return roots


def parse_mesh(text):
    start = text.find("{")
    end = text.rfind("}")
    if start < 0 or end < 0:
        return None
    try:
        return json.loads(text[start:end + 1])
    except ValueError:
        return None


# ---------------------------------------------------------------------------------------------
# Truth adapters
# ---------------------------------------------------------------------------------------------

def load_truth(path):
    with open(path) as f:
        t = json.load(f)
    if "corpus" in t:
        return t
    return adapt_example(t)


def adapt_example(t):
    """The example's own truth format (examples/polyglot-shop.truth.json) in this one's shape."""
    out = {"corpus": "polyglot-shop", "services": [], "declarations": [], "dependents": [],
           "grpc": [], "topics": [], "routes": [], "service_edges": [], "unresolvable": []}
    for r in t["roots"]:
        if r != ".":
            out["services"].append({"root": r})
    by_name = {}
    for d in t["declarations"]:
        by_name.setdefault(d["name"], []).append(d)
    for d in t["declarations"]:
        out["declarations"].append({"name": d["name"], "kind": d["kind"], "at": f"{d['path']}:{d['line']}",
                                    "partial": True})
    for dep in t["dependents"]:
        # Targets there are described ("dir (barrel index.ts)", "a.ts and b.ts (…)"): ask for
        # the path itself, and for each file named.
        target = dep["target"].split(" (")[0]
        first, _, second = target.partition(" and ")
        targets = [first] + ([first.rsplit("/", 1)[0] + "/" + second] if second else [])
        out["dependents"].append({"target": dep["target"], "targets": targets,
                                  "importers": [f"{i['path']}:{i['line']}" for i in dep["importers"]],
                                  "partial": True})
    for g in t["grpc"]:
        out["grpc"].append({"service": g["fqn"].split(".")[-1], "fqn": g["fqn"],
                            "servers": g.get("servers", []), "handlers": g.get("handlers", {}),
                            "clients": g.get("clients", []), "calls": g.get("calls", {})})
    for tp in t["topics"]:
        out["topics"].append({"name": tp["name"], "producers": tp.get("producers", []),
                              "consumers": tp.get("consumers", [])})
    for r in t["routes"]:
        callers = [{"at": c if isinstance(c, str) else c.get("at")} for c in r.get("callers", [])]
        out["routes"].append({"method": r["method"], "path": r["path"], "at": r["at"], "callers": callers})
    for e in t["service_edges"]:
        out["service_edges"].append({"from": e["from"], "to": e["to"], "kind": e["kind"]})
    return out


# ---------------------------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------------------------

class Score:
    def __init__(self):
        self.cats = {}

    def add(self, cat, expected, found, label, partial=False):
        """expected/found: sets of fact strings; `partial` truth scores recall only."""
        c = self.cats.setdefault(cat, {"tp": 0, "fn": 0, "fp": 0, "missing": [], "extra": [], "partial": False})
        tp = expected & found
        c["tp"] += len(tp)
        c["fn"] += len(expected - found)
        c["missing"] += [f"{label}: {x}" for x in sorted(expected - found)]
        if partial:
            c["partial"] = True
        else:
            c["fp"] += len(found - expected)
            c["extra"] += [f"{label}: {x}" for x in sorted(found - expected)]


def norm_root(r):
    return r.strip("/") or "."


def service_id(r):
    """Edges name a service by the last folder of its root (`src/Basket.API` → `Basket.API`)."""
    return norm_root(r).rsplit("/", 1)[-1]


def score_corpus(sess, truth, workspace):
    s = Score()
    sizes = []
    answers = []  # every analyze_grpc / analyze_impact answer, for the unresolved sites
    # services
    status = sess.tool("index_status", {})
    roots = {norm_root(r) for r in parse_roots(status)} - {"."}
    want = {norm_root(x["root"]) for x in truth.get("services", [])}
    s.add("services", want, roots, "root")
    # declarations
    names = {}
    for d in truth.get("declarations", []):
        names.setdefault(d["name"], []).append(d)
    for name, decls in sorted(names.items()):
        text = sess.tool("smart_search", {"query": name, "limit": 100})
        found = set()
        for kind, hit, at in parse_search(text):
            base = hit.split(" in ")[0]
            if (base == name or base.endswith("." + name)) and not is_test(at.rsplit(":", 1)[0]):
                found.add(at)
        s.add("declarations", {d["at"] for d in decls}, found, name,
              partial=any(d.get("partial") for d in decls))
    # dependents
    for dep in truth.get("dependents", []):
        found = set()
        for target in dep.get("targets", [dep["target"]]):
            text = sess.tool("find_dependents", {"target": target, "granularity": "file", "limit": 200})
            # Rows in generated code are marked so; the truth leaves generated code out.
            found |= {at for line in text.splitlines() if not line.endswith("— generated code")
                      for at in locs(line) if not is_test(at.rsplit(":", 1)[0])}
        # Only importer rows: the rejected-file notes carry no line numbers.
        expected = {at for at in dep["importers"] if not is_test(at.rsplit(":", 1)[0])}
        s.add("dependents", expected, found, dep["target"], partial=dep.get("partial", False))
    # grpc
    for g in truth.get("grpc", []):
        target = g.get("fqn") or g["service"]
        text = sess.tool("analyze_grpc", {"target": target})
        sizes.append(("analyze_grpc", g["service"], len(text.encode())))
        answers.append(text)
        got = parse_grpc(text)
        s.add("grpc servers", set(g.get("servers", [])), got["servers"], g["service"])
        s.add("grpc clients", set(g.get("clients", [])), got["clients"], g["service"])
        for rpc in sorted(set(g.get("handlers", {})) | set(got["handlers"])):
            s.add("grpc handlers", set(g.get("handlers", {}).get(rpc, [])), got["handlers"].get(rpc, set()), f"{g['service']}.{rpc}")
        for rpc in sorted(set(g.get("calls", {})) | set(got["calls"])):
            s.add("grpc calls", set(g.get("calls", {}).get(rpc, [])), got["calls"].get(rpc, set()), f"{g['service']}.{rpc}")
    # topics
    for tp in truth.get("topics", []):
        text = sess.tool("analyze_impact", {"target": tp["name"], "limit": 200})
        sizes.append(("analyze_impact", tp["name"], len(text.encode())))
        answers.append(text)
        rows = parse_impact(text)
        prod = {at for role, at in rows if role == "producer" and not is_test(at.rsplit(":", 1)[0])}
        cons = {at for role, at in rows if role == "consumer" and not is_test(at.rsplit(":", 1)[0])}
        s.add("topic producers", {p["at"] for p in tp.get("producers", [])}, prod, tp["name"])
        s.add("topic consumers", {c["at"] for c in tp.get("consumers", [])}, cons, tp["name"])
    # routes: every route the index lists, then the callers of each true route
    listed = set()
    offset = 0
    for _ in range(200):
        text = sess.tool("smart_search", {"query": "/", "kind": "endpoint", "limit": 100, "offset": offset})
        for kind, name, at in parse_search(text):
            path = at.rsplit(":", 1)[0]
            if kind == "endpoint" and not is_test(path):
                listed.add(at)
        more = re.search(r"repeat with `offset: (\d+)`", text)
        if not more:
            break
        offset = int(more.group(1))
    # Routes declared by API specs (OpenAPI YAML/JSON) count only in the spec files the truth
    # cites: a spec beside the code that serves it (or a client-generation input) repeats
    # routes already scored, while a spec-only service's contract is its routes.
    spec = (".yaml", ".yml", ".json")
    spec_files = {r["at"].rsplit(":", 1)[0] for r in truth.get("routes", [])
                  if r["at"].rsplit(":", 1)[0].endswith(spec)}
    listed = {at for at in listed
              if not at.rsplit(":", 1)[0].endswith(spec) or at.rsplit(":", 1)[0] in spec_files}
    s.add("routes", {r["at"] for r in truth.get("routes", [])}, listed, "route")
    # One question per distinct `METHOD path` (a path registered twice, e.g. for two API
    # versions, is one target): the callers of all its registrations together.
    by_target = {}
    for r in truth.get("routes", []):
        target = f"{r['method']} {r['path']}"
        by_target.setdefault(target, set()).update(c["at"] for c in r.get("callers", []))
    for target, expected in by_target.items():
        text = sess.tool("analyze_impact", {"target": target, "limit": 200})
        answers.append(text)
        rows = parse_impact(text)
        callers = {at for role, at in rows if role == "caller" and not is_test(at.rsplit(":", 1)[0])}
        s.add("route callers", expected, callers, target)
    # service edges
    mesh = parse_mesh(sess.tool("visualize_mesh", {"format": "json", "max_services": 200}))
    found = set()
    if mesh:
        nodes = {n["id"]: n for n in mesh.get("nodes", [])}
        produces, consumes = {}, {}
        for link in mesh.get("links", []):
            a, b = nodes.get(link["from"], {}), nodes.get(link["to"], {})
            if b.get("kind") == "topic":
                produces.setdefault(link["to"], set()).add(service_id(a.get("name", "?")))
            elif a.get("kind") == "topic":
                consumes.setdefault(link["from"], set()).add(service_id(b.get("name", "?")))
            elif link["kind"] in ("http", "grpc", "event"):
                found.add(f"{service_id(a.get('name', '?'))} -> {service_id(b.get('name', '?'))} ({link['kind']})")
        # A topic node links its producers to its consumers: one event edge per pair.
        for topic, producers in produces.items():
            for p in producers:
                for c in consumes.get(topic, ()):
                    if p != c:
                        found.add(f"{p} -> {c} (event)")
    want = {f"{service_id(e['from'])} -> {service_id(e['to'])} ({e['kind']})" for e in truth.get("service_edges", [])}
    s.add("service edges", want, found, "edge")
    # Sites the truth marks unresolvable (a call or event whose target is only known at run
    # time) are not scored: the report prints them with why, and whether an answer to the
    # questions above names them with path:line.
    s.named = set().union(*(locs(a) for a in answers)) if answers else set()
    return s, sizes


def rg_bytes(workspace, name):
    rg = shutil.which("rg")
    if not rg:
        return None
    out = subprocess.run([rg, "-n", "--fixed-strings", name, "."], cwd=workspace,
                         capture_output=True)
    return len(out.stdout)


def pct(a, b):
    return "—" if b == 0 else f"{100.0 * a / b:.1f} %"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(repo, "target", "release", "mesh-mcp"))
    ap.add_argument("--corpora", default=os.environ.get("MESH_CORPORA", os.path.join(repo, "..", "shared", "corpora")))
    ap.add_argument("--only", nargs="*", help="corpus names to score (default: all with a truth file)")
    ap.add_argument("--report", help="write the Markdown report here")
    args = ap.parse_args()

    jobs = [("polyglot-shop", os.path.join(repo, "examples", "polyglot-shop"),
             os.path.join(repo, "examples", "polyglot-shop.truth.json"))]
    for f in sorted(os.listdir(here)):
        if f.endswith(".json"):
            name = f[:-5]
            jobs.append((name, os.path.join(args.corpora, name), os.path.join(here, f)))
    if args.only:
        jobs = [j for j in jobs if j[0] in args.only]

    env = dict(os.environ)
    env["MESH_CACHE"] = "off"
    tmp = tempfile.mkdtemp(prefix="mesh-accuracy-")
    env["MESH_AUDIT_DB"] = os.path.join(tmp, "audit.db")
    env["MESH_SOCKET_PATH"] = tmp

    out = []
    say = out.append
    say("# mesh-mcp accuracy report\n")
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    say(f"- Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    say(f"- Commit: `{commit}`; server: `{os.path.relpath(args.bin, repo)}`")
    say("- Truth: `accuracy/<corpus>.json` (hand-written; `accuracy/TRUTH-FORMAT.md`), and "
        "`examples/polyglot-shop.truth.json` for the example (declarations and dependents there are "
        "samples, scored for recall only)\n")
    totals = {}
    details = []
    unresolved_truth = {}
    known_misses = {}
    size_rows = []
    for name, workspace, truth_path in jobs:
        if not os.path.isdir(workspace):
            say(f"- **{name}**: not scored — the corpus is not at `{workspace}` (set `MESH_CORPORA` or "
                f"`--corpora`; the practice corpora live in `../shared/corpora/` beside the project).")
            continue
        truth = load_truth(truth_path)
        unresolved_truth[name] = truth.get("unresolvable", [])
        known_misses[name] = truth.get("known_misses", [])
        sess = Session(args.bin, workspace, env)
        try:
            score, sizes = score_corpus(sess, truth, workspace)
        finally:
            sess.close()
        for tool, subject, size in sizes:
            size_rows.append((name, tool, subject, size, rg_bytes(workspace, subject)))
        details.append((name, score))
        for cat, c in score.cats.items():
            t = totals.setdefault(cat, {"tp": 0, "fn": 0, "fp": 0})
            for k in ("tp", "fn", "fp"):
                t[k] += c[k]

    say("## Summary\n")
    cats = list(dict.fromkeys(c for _, sc in details for c in sc.cats))
    header = "| category | " + " | ".join(n for n, _ in details) + " | all |"
    say(header)
    say("|" + "---|" * (len(details) + 2))
    for cat in cats:
        row = [cat]
        for _, sc in details:
            c = sc.cats.get(cat)
            if not c or c["tp"] + c["fn"] + c["fp"] == 0:
                row.append("—")
            else:
                p = "recall only" if c["partial"] and c["fp"] == 0 else pct(c["tp"], c["tp"] + c["fp"])
                row.append(f"P {p} / R {pct(c['tp'], c['tp'] + c['fn'])} ({c['tp']}/{c['tp'] + c['fn']})")
        t = totals.get(cat, {"tp": 0, "fn": 0, "fp": 0})
        row.append(f"P {pct(t['tp'], t['tp'] + t['fp'])} / R {pct(t['tp'], t['tp'] + t['fn'])}")
        say("| " + " | ".join(row) + " |")
    say("")
    say("P = precision (facts answered that the truth has / all facts answered), R = recall (true "
        "facts answered / all true facts); counts are true facts found / true facts.\n")
    if size_rows:
        say("## Answer size next to `rg -n <name>`\n")
        say("| corpus | tool | subject | answer bytes | `rg -n` bytes |")
        say("|---|---|---|---|---|")
        for name, tool, subject, size, rgb in size_rows:
            say(f"| {name} | {tool} | `{subject}` | {size:,} | {'—' if rgb is None else f'{rgb:,}'} |")
        say("")
    say("## Missing and extra facts\n")
    for name, sc in details:
        say(f"### {name}\n")
        any_line = False
        # `known_misses` in a truth file: why the index does not answer a fact (matched by the
        # fact's text as printed here).
        why = {k["fact"]: k["why"] for k in known_misses.get(name, [])}
        for cat, c in sc.cats.items():
            for m in c["missing"]:
                line = f"missing {cat} — {m}"
                say(f"- {line}" + (f"\n  - why: {why[line]}" if line in why else ""))
                any_line = True
            for x in c["extra"]:
                line = f"extra {cat} — {x}"
                say(f"- {line}" + (f"\n  - why: {why[line]}" if line in why else ""))
                any_line = True
        if not any_line:
            say("- none")
        say("")
    say("## Sites the truth marks unresolvable (not scored)\n")
    say("Each with why a static index cannot resolve it, and whether an answer to the questions "
        "above (the topics and routes of the truth) names the site with `path:line`: a site "
        "whose target is only known at run time is named in an answer only when it shares a word "
        "with the topic or route asked about, or its host names the owner service.\n")
    for name, sc in details:
        truth = unresolved_truth.get(name, [])
        if not truth:
            continue
        say(f"### {name}\n")
        for u in truth:
            state = "a route the framework adds" if u["category"] == "http_route" else (
                "named in an answer" if u["at"] in getattr(sc, "named", set()) else "not named in these answers")
            say(f"- `{u['at']}` ({u['category']}; {state}): {u['why']}")
        say("")
    text = "\n".join(out) + "\n"
    sys.stdout.write(text)
    if args.report:
        with open(args.report, "w") as f:
            f.write(text)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
