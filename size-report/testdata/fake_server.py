#!/usr/bin/env python3
"""A tiny stand-in for `mesh-mcp run --standalone`, used only to prove bench.py end to end.

It is NOT a model of the real server; it does just enough of MCP over newline-delimited
JSON-RPC on stdio:
  * `initialize` is answered at once; notifications are ignored; `ping` answers `{}`;
  * the workspace (cwd) is indexed in a background thread: every `pub struct|type|class|func`
    style declaration becomes a symbol; a `tools/call` waits for that first index;
  * `smart_search` ranks exact > prefix > substring, honours `scope` (a path prefix), and
    answers "Matches: N definitions found" or "No symbol matches ...";
  * a poller thread re-reads files whose mtime changed every 20 ms (a poor man's watcher).

FAKE_MESH_MODE selects a degraded behaviour, to test the harness against broken servers:
  full       (default) as above
  init-only  answers initialize; every other request gets -32601 (like an early skeleton)
  exit       exits at once without reading anything
  hang       answers initialize, then never answers a tools/call
"""

import json
import os
import re
import sys
import threading
import time

MODE = os.environ.get("FAKE_MESH_MODE", "full")
DECL = re.compile(r"^\s*(?:export\s+|pub\s+|public\s+)?(?:class|struct|type|func|def|fn)\s+"
                  r"(?:\([^)]*\)\s*)?([A-Za-z_][A-Za-z0-9_]*)", re.M)
EXTS = (".rs", ".go", ".py", ".ts", ".java")

lock = threading.Lock()
ready = threading.Event()
files = {}      # rel path -> (mtime_ns, [(line, name)])
generation = 0
out_lock = threading.Lock()


def send(obj):
    with out_lock:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def extract(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return []
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in DECL.finditer(text)]


def scan():
    """One pass: re-extract every file whose mtime changed; returns True when anything did."""
    global generation
    changed = False
    seen = set()
    for dirpath, dirnames, filenames in os.walk("."):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if not name.endswith(EXTS):
                continue
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, ".").replace(os.sep, "/")
            seen.add(rel)
            try:
                mt = os.stat(full).st_mtime_ns
            except OSError:
                continue
            old = files.get(rel)
            if old is None or old[0] != mt:
                syms = extract(full)
                with lock:
                    files[rel] = (mt, syms)
                changed = True
    with lock:
        for gone in set(files) - seen:
            del files[gone]
            changed = True
        if changed:
            generation += 1
    return changed


def indexer():
    scan()
    ready.set()
    while True:
        time.sleep(0.02)
        scan()


def smart_search(args):
    query = args.get("query", "")
    scope = (args.get("scope") or "").rstrip("/")
    ready.wait(30)
    hits = []
    with lock:
        for rel, (_, syms) in files.items():
            if scope and not (rel == scope or rel.startswith(scope + "/")):
                continue
            for line, name in syms:
                if name == query:
                    rank = 0
                elif name.startswith(query):
                    rank = 1
                elif query.lower() in name.lower():
                    rank = 2
                else:
                    continue
                hits.append((rank, name, rel, line))
        nfiles, gen = len(files), generation
    hits.sort()
    if not hits:
        text = (f"No symbol matches '{query}' (searched {nfiles} files, "
                f"generation {gen}).")
    else:
        shown = hits[:20]
        lines = [f"Matches: {len(hits)} definitions found (showing {len(shown)})"]
        lines += [f"{rel}:{line}  {name}" for _, name, rel, line in shown]
        text = "\n".join(lines)
    return {"content": [{"type": "text", "text": text}], "isError": False}


def handle(msg):
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        return  # notification
    if method == "initialize":
        ver = msg.get("params", {}).get("protocolVersion", "2025-11-25")
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": ver,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake-mesh", "version": "0"}}})
    elif MODE == "init-only":
        send({"jsonrpc": "2.0", "id": mid,
              "error": {"code": -32601, "message": f"method not found: {method}"}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
    elif method == "tools/call" and MODE != "hang":
        params = msg.get("params", {})
        if params.get("name") != "smart_search":
            send({"jsonrpc": "2.0", "id": mid,
                  "error": {"code": -32602, "message": "unknown tool"}})
            return
        # Also emit a notification first, so the harness proves it ignores them.
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "debug", "data": "searching"}})
        send({"jsonrpc": "2.0", "id": mid, "result": smart_search(params.get("arguments", {}))})
    elif MODE != "hang":
        send({"jsonrpc": "2.0", "id": mid,
              "error": {"code": -32601, "message": f"method not found: {method}"}})


def main():
    if MODE == "exit":
        return 0
    if MODE in ("full", "hang"):
        threading.Thread(target=indexer, daemon=True).start()
    for raw in sys.stdin:
        raw = raw.strip()
        if raw:
            handle(json.loads(raw))
    return 0


if __name__ == "__main__":
    sys.exit(main())
