#!/usr/bin/env python3
"""`mesh-mcp impact` on a branch of a 5k-file workspace (issue 22).

Usage:
  bench_impact.py --bin RELEASE --corpus DIR --work DIR [--runs 5] [--json OUT]

Copies the corpus (the tier bench's generated workspace) into a git repository under --work,
commits it on `main`, and makes a branch `change` that touches what a pull request would: the
bodies of 1 % of the source files (every language of the corpus), one new declaration, and, when
the corpus has `.proto` contracts, an RPC renamed and a field removed in one of them (breaking,
so the wire-format check runs). Then, --runs times each, side by side, in a fresh private HOME
(no fact cache, as the tier bench's cold runs):
  impact  `RELEASE impact --base main` on the branch: start to exit (index, git diff, the
          change's impact, the Markdown on stdout)
  query   `RELEASE query index_status`: a one-shot cold index and answer, for comparison
Medians of wall and CPU (user+system, all threads, from wait4). The budget compares impact's
wall with the tier's cold index time (report.py reads it from the tier bench's JSON).
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import private_env  # noqa: E402

SOURCE_EXTS = (".go", ".rs", ".py", ".ts", ".java")


def git(repo, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@localhost",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@localhost",
               GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null")
    subprocess.run(["git", "-C", repo, *args], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def change_body(path):
    """Changes a string literal inside a function body (the generator writes one per file, like
    `"harbor-228:"`): a behaviour change the diff attributes to that function."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r'(["`\'])([a-z]+-[0-9]+:)', r"\1changed-\2", text, count=1)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def break_proto(path):
    """Renames the first RPC and removes the first field of the first message."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, renamed, removed = [], False, False
    for line in lines:
        s = line.strip()
        if not renamed and s.startswith("rpc "):
            name = s.split()[1].split("(")[0]
            line = line.replace(name, name + "Renamed", 1)
            renamed = True
        elif not removed and s.endswith(";") and "=" in s and not s.startswith(("syntax", "package", "option")):
            removed = True
            continue
        out.append(line)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out))


def make_repo(corpus, repo):
    if os.path.isdir(repo):
        shutil.rmtree(repo)
    shutil.copytree(corpus, repo, symlinks=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "change")
    sources, protos = [], []
    for root, dirs, files in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for name in sorted(files):
            p = os.path.join(root, name)
            if name.endswith(SOURCE_EXTS):
                sources.append(p)
            elif name.endswith(".proto"):
                protos.append(p)
    changed = sources[::100]
    for p in changed:
        change_body(p)
    with open(changed[0], "a", encoding="utf-8") as f:
        f.write("\n" + {".go": "func BenchAdded() {}\n", ".rs": "pub fn bench_added() {}\n",
                        ".py": "def bench_added():\n    pass\n",
                        ".ts": "export function benchAdded() {}\n",
                        ".java": "class BenchAdded {}\n"}[os.path.splitext(changed[0])[1]])
    if protos:
        break_proto(protos[0])
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "change")
    return {"source_files": len(sources), "changed_sources": len(changed),
            "protos": len(protos), "proto_broken": bool(protos)}


def timed(cmd, cwd, env):
    """(cpu_ms, wall_ms, exit code, stdout bytes) of one child run."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = (time.perf_counter() - t) * 1000
    return (ru.ru_utime + ru.ru_stime) * 1000, wall, os.waitstatus_to_exitcode(status), len(out)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    binary = os.path.abspath(a.bin)
    repo = os.path.join(os.path.abspath(a.work), "impact-repo")
    shape = make_repo(os.path.abspath(a.corpus), repo)
    result = {"corpus": os.path.abspath(a.corpus), "runs": a.runs, **shape,
              "impact": [], "query": []}
    for _ in range(a.runs):
        for kind, cmd in (("impact", [binary, "impact", "--base", "main"]),
                          ("query", [binary, "query", "index_status"])):
            with tempfile.TemporaryDirectory(prefix="mesh-impact-") as tmp:
                cpu, wall, code, size = timed(cmd, repo, private_env(tmp))
            result[kind].append({"cpu_ms": cpu, "wall_ms": wall, "exit": code, "bytes": size})
    for kind in ("impact", "query"):
        runs = result[kind]
        result[f"{kind}_wall_ms"] = statistics.median(r["wall_ms"] for r in runs)
        result[f"{kind}_cpu_ms"] = statistics.median(r["cpu_ms"] for r in runs)
    # `impact` exits 0 (no --fail-on); anything else means it did not answer.
    result["impact_ok"] = all(r["exit"] == 0 and r["bytes"] > 0 for r in result["impact"])
    result["impact_bytes"] = result["impact"][0]["bytes"] if result["impact"] else 0
    text = json.dumps(result, indent=2)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0 if result["impact_ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
