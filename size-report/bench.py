#!/usr/bin/env python3
"""Measure mesh-mcp through its real stdio transport (SPEC §9).

Usage:
  bench.py --bin PATH --corpus DIR [--queries 60] [--runs 3] [--json OUT]
  bench.py --bin PATH --init-only [--spawns 30] [--json OUT]
  bench.py --bin PATH --daemon [--corpus DIR] [--spawns 30] [--clients 16] [--json OUT]

Every session spawns `PATH run --standalone` with a private temporary HOME, MESH_AUDIT_DB,
MESH_SOCKET_PATH and XDG dirs (fresh per session, so every run is a cold start), speaks
newline-delimited JSON-RPC over stdin/stdout, matches responses by id and ignores
notifications. Reads are select()-driven with a per-call timeout, so a broken server can never
hang the bench. The server's stderr goes to a file in the temp dir; its tail is kept in the
notes when something goes wrong.

Per corpus run (fresh process each, `--runs` times):
  init_ms          spawn -> `initialize` response
  cold_index_ms    spawn -> first `smart_search {"query": "Service"}` answered (sent right after
                   `notifications/initialized`; the server makes it wait for the first index)
  search_*_ms      `--queries` round trips, queries cycling QUERIES, scope cycling services/*
  edit_visible_ms  append `ScaleBenchMarker<n>` to one file, poll smart_search every 5 ms until
                   `marker_visible()` holds, give up after 10 s (null). The file is restored
                   (bytes and mtime) after the server has exited.
  peak_rss_kb      VmHWM from /proc/<pid>/status at the end of the session
Per run there is also one session on an EMPTY temp dir: init_empty_ms and rss_after_init_kb
(VmRSS right after the initialize response).

Aggregation: per-run values are combined with the lower median (a value that was actually
observed); a run where a value is missing counts as the worst value, so if the median lands on
a missing value the result is null. Search percentiles use the nearest rank over all queries of
all runs. ctags_ms is the median wall time of Universal Ctags over the same corpus; rg_ms the
median wall time of `rg -c -uu Service`, run right after each cold run (rg_ratio = cold_index_ms
/ rg_ms, the issue-17 bar at 50k: <= 2.5).

--daemon drives proxy mode instead (`PATH run`, with the `meshd` next to PATH): the first proxy
spawns the daemon, later ones find it warm. See daemon_bench() for the values.

Anything the server cannot answer yet is reported as null with a note; the bench itself only
exits non-zero on bad arguments. Budgets are judged by report.py, not here.
"""

import argparse
import json
import math
import os
import re
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PROTOCOL_VERSION = "2025-11-25"
QUERIES = ["Service", "Handler", "Worker", "Component", "handle", "new"]
CTAGS_LANGS = "Rust,Go,Python,TypeScript,Java"
EDIT_POLL_S = 0.005
EDIT_GIVE_UP_S = 10.0

# A declaration per extension that each language's extractor should pick up.
MARKER_DECL = {
    ".rs": "\npub struct {m};\n",
    ".go": "\ntype {m} struct{{}}\n",
    ".py": "\n\nclass {m}:\n    pass\n",
    ".ts": "\nexport class {m} {{}}\n",
    ".java": "\nclass {m} {{}}\n",  # a second, non-public top-level class
}


class ServerGone(Exception):
    """The server exited, closed stdout, or did not answer in time."""


# --- result predicates (adjust here when the server's wording changes) ----------------------

NOT_YET_PHRASES = ("no symbol", "no results", "no matches", "still indexing")
ZERO_COUNT = re.compile(r"(?<![0-9])0 (definitions|matches|results|symbols)\b", re.I)


def tool_text(resp):
    """The concatenated text content of a tools/call result ('' when there is none)."""
    result = resp.get("result") or {}
    return "\n".join(c.get("text", "") for c in result.get("content") or []
                     if isinstance(c, dict) and c.get("type") == "text")


def tool_ok(resp):
    """A JSON-RPC result (not an error) whose tool result is not isError."""
    return isinstance(resp.get("result"), dict) and not resp["result"].get("isError", False)


def marker_visible(resp, marker):
    """True when a smart_search answer shows `marker` as found.

    Holds when the call succeeded (no JSON-RPC error, not isError), the text contains the
    marker, and the text says nothing that means "zero hits": none of NOT_YET_PHRASES
    (case-insensitive) and no "0 definitions"/"0 matches"/"0 results"/"0 symbols" count.
    """
    if not tool_ok(resp):
        return False
    text = tool_text(resp)
    if marker not in text:
        return False
    low = text.lower()
    if any(p in low for p in NOT_YET_PHRASES):
        return False
    return ZERO_COUNT.search(text) is None


# --- one server process ---------------------------------------------------------------------

def private_env(tmp):
    """A private HOME, XDG dirs, audit DB and socket dir under `tmp` (created once per tmp)."""
    home = os.path.join(tmp, "home")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MESH_")}
    env.update({
        "HOME": home,
        "XDG_CACHE_HOME": os.path.join(home, ".cache"),
        "XDG_CONFIG_HOME": os.path.join(home, ".config"),
        "XDG_DATA_HOME": os.path.join(home, ".local", "share"),
        "XDG_RUNTIME_DIR": os.path.join(tmp, "run"),
        "MESH_AUDIT_DB": os.path.join(tmp, "audit.db"),
        "MESH_SOCKET_PATH": os.path.join(tmp, "sock"),
    })
    os.makedirs(home, exist_ok=True)
    os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
    return env


class Server:
    """A spawned `BIN run --standalone` with a private environment.

    `args` and `env` override the command line and the environment (the daemon bench runs
    several proxies, `BIN run`, that share one environment); `name` names the stderr file.
    """

    def __init__(self, binary, cwd, tmp, timeout, args=("run", "--standalone"), env=None,
                 name="server", cpu=None):
        self.timeout = timeout
        self.next_id = 0
        self.buf = b""
        if env is None:
            env = private_env(tmp)
        self.stderr_path = os.path.join(tmp, f"{name}.stderr")
        self.stderr = open(self.stderr_path, "wb")
        self.t_spawn = time.perf_counter()
        # `cpu`: pin the server to that CPU (and every thread it starts).
        pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
        self.proc = subprocess.Popen(
            [binary, *args], cwd=cwd, env=env, bufsize=0, preexec_fn=pin,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr)
        self.out_fd = self.proc.stdout.fileno()
        os.set_blocking(self.out_fd, False)
        # `spin`: wait for an answer by polling the (non-blocking) read end in a loop instead
        # of sleeping in select(), so the figure holds the server's wake-up and work but not
        # this client's own wake-up (bench_latency.py's busy-polling client).
        self.spin = False

    def _ready(self, left):
        """Whether the output may have bytes: at once when spinning, else after select()."""
        if self.spin:
            return True
        ready, _, _ = select.select([self.out_fd], [], [], left)
        return bool(ready)

    def ms_since_spawn(self):
        return (time.perf_counter() - self.t_spawn) * 1000.0

    def send(self, obj):
        try:
            self.proc.stdin.write((json.dumps(obj) + "\n").encode())
        except (BrokenPipeError, ValueError, OSError) as e:
            raise ServerGone(f"cannot write to the server ({e.__class__.__name__})")

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def call(self, method, params):
        """Send one request and return its response (a dict with result or error)."""
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return self.wait_for(rid)

    def wait_for(self, rid):
        deadline = time.perf_counter() + self.timeout
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                msg = self._parse(line)
                if msg is None:
                    continue
                if "method" in msg:
                    if "id" in msg:  # a server->client request: we offer no client features
                        self.send({"jsonrpc": "2.0", "id": msg["id"],
                                   "error": {"code": -32601, "message": "not supported"}})
                    continue  # notifications are ignored
                if msg.get("id") == rid:
                    return msg
                # a late answer to an earlier, abandoned request: drop it
            left = deadline - time.perf_counter()
            if left <= 0:
                raise ServerGone(f"no answer within {self.timeout:g} s")
            if not self._ready(left):
                continue
            try:
                chunk = os.read(self.out_fd, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                try:  # give an exiting process a moment, so the note can say how it ended
                    rc = self.proc.wait(0.5)
                except subprocess.TimeoutExpired:
                    rc = None
                raise ServerGone("server closed stdout" +
                                 (f" (exit status {rc})" if rc is not None else ""))
            self.buf += chunk

    def read_line(self):
        """The next raw output line, whatever it holds (the latency floor reads `cat`'s echo)."""
        deadline = time.perf_counter() + self.timeout
        while b"\n" not in self.buf:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise ServerGone(f"no line within {self.timeout:g} s")
            if not self._ready(left):
                continue
            try:
                chunk = os.read(self.out_fd, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                raise ServerGone("closed stdout")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    @staticmethod
    def _parse(line):
        line = line.strip()
        if not line:
            return None
        try:
            msg = json.loads(line)
        except ValueError:
            return None
        return msg if isinstance(msg, dict) else None

    def proc_status_kb(self, key):
        """A `kB` field (VmRSS, VmHWM) of /proc/<pid>/status, or None once the process is gone."""
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith(key + ":"):
                        return int(line.split()[1])
        except (OSError, ValueError, IndexError):
            pass
        return None

    def close(self):
        """Close stdin, wait up to 5 s for a clean exit, then kill. Returns the exit status."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            rc = self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.proc.stdout.close()
        self.stderr.close()
        return rc

    def stderr_tail(self, lines=5):
        try:
            with open(self.stderr_path, "rb") as f:
                tail = f.read()[-4000:].decode("utf-8", "replace").splitlines()[-lines:]
            return " | ".join(t.strip() for t in tail if t.strip())
        except OSError:
            return ""


def initialize(srv):
    """initialize + notifications/initialized; returns ms from spawn to the response."""
    resp = srv.call("initialize", {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "mesh-bench", "version": "1"},
    })
    ms = srv.ms_since_spawn()
    if "result" not in resp:
        raise ServerGone(f"initialize failed: {json.dumps(resp.get('error'))}")
    srv.notify("notifications/initialized")
    return ms


def smart_search(srv, args):
    return srv.call("tools/call", {"name": "smart_search", "arguments": args})


def describe_failure(resp):
    if "error" in resp:
        return f"JSON-RPC error {json.dumps(resp['error'])}"
    return "isError result: " + tool_text(resp)[:200].replace("\n", " ")


# --- sessions -------------------------------------------------------------------------------

def empty_session(binary, timeout):
    """One spawn on an empty dir: (init_ms, rss_after_init_kb, note)."""
    with tempfile.TemporaryDirectory(prefix="mesh-bench-") as tmp:
        empty = os.path.join(tmp, "empty")
        os.makedirs(empty)
        srv = Server(binary, empty, tmp, timeout)
        init_ms = rss = note = None
        try:
            init_ms = initialize(srv)
            rss = srv.proc_status_kb("VmRSS")
        except ServerGone as e:
            note = f"empty dir: {e}"
            tail = srv.stderr_tail()
            if tail:
                note += f"; stderr: {tail}"
        finally:
            srv.close()
        return init_ms, rss, note


def corpus_session(binary, corpus, scopes, queries, timeout, edit_rel, run_no):
    """One spawn on the corpus; returns a dict of per-run values and notes."""
    r = {"init_ms": None, "cold_index_ms": None, "search_ms": [], "search_errors": 0,
         "edit_visible_ms": None, "peak_rss_kb": None, "exit_status": None, "notes": []}
    edit_path = os.path.join(corpus, edit_rel) if edit_rel else None
    original = None  # (bytes, stat) of the edited file, restored at the end
    with tempfile.TemporaryDirectory(prefix="mesh-bench-") as tmp:
        srv = Server(binary, corpus, tmp, timeout)
        try:
            r["init_ms"] = initialize(srv)
            resp = smart_search(srv, {"query": "Service"})
            if not tool_ok(resp):
                r["notes"].append("first smart_search: " + describe_failure(resp))
                raise ServerGone("tool calls not answered; searches and edit probe skipped")
            r["cold_index_ms"] = srv.ms_since_spawn()

            for j in range(queries):
                args = {"query": QUERIES[j % len(QUERIES)]}
                if scopes:
                    args["scope"] = scopes[j % len(scopes)]
                t0 = time.perf_counter()
                resp = smart_search(srv, args)
                ms = (time.perf_counter() - t0) * 1000.0
                if tool_ok(resp):
                    r["search_ms"].append(ms)
                else:
                    r["search_errors"] += 1
                    if r["search_errors"] == 1:
                        r["notes"].append(f"smart_search {json.dumps(args)}: "
                                          + describe_failure(resp))

            if edit_path:
                marker = f"ScaleBenchMarker{int(time.time() * 1000) % 10**9}{run_no}"
                ext = os.path.splitext(edit_path)[1]
                with open(edit_path, "rb") as f:
                    original = (f.read(), os.stat(edit_path))
                with open(edit_path, "ab") as f:
                    f.write(MARKER_DECL[ext].format(m=marker).encode())
                t_edit = time.perf_counter()
                while True:
                    resp = smart_search(srv, {"query": marker})
                    now = time.perf_counter()
                    if marker_visible(resp, marker):
                        r["edit_visible_ms"] = (now - t_edit) * 1000.0
                        break
                    if now - t_edit > EDIT_GIVE_UP_S:
                        r["notes"].append(f"edit probe: {marker} not visible after "
                                          f"{EDIT_GIVE_UP_S:g} s; last answer: "
                                          + tool_text(resp)[:160].replace("\n", " "))
                        break
                    time.sleep(EDIT_POLL_S)
        except ServerGone as e:
            r["notes"].append(str(e))
            tail = srv.stderr_tail()
            if tail:
                r["notes"].append(f"server stderr: {tail}")
        finally:
            r["peak_rss_kb"] = srv.proc_status_kb("VmHWM")
            r["exit_status"] = srv.close()
            if original is not None:  # restore bytes and mtime once the server is gone
                data, st = original
                with open(edit_path, "wb") as f:
                    f.write(data)
                os.utime(edit_path, ns=(st.st_atime_ns, st.st_mtime_ns))
    return r


def spawn_floor_ms(runs):
    """The harness's own floor: spawn /bin/cat, write one line, read it back (median ms).

    No server can answer `initialize` faster than this through this harness, so it is worth
    reading next to init_ms, whose budget is only 10 ms.
    """
    cat = shutil.which("cat")
    if not cat:
        return None
    line = b'{"jsonrpc":"2.0","id":1,"result":{}}\n'
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.Popen([cat], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        p.stdin.write(line)
        got = b""
        while not got.endswith(b"\n"):
            chunk = p.stdout.read(len(line))
            if not chunk:
                break
            got += chunk
        times.append((time.perf_counter() - t0) * 1000.0)
        p.stdin.close()
        p.wait()
        p.stdout.close()
    return statistics.median_low(times)


# --- daemon mode -----------------------------------------------------------------------------

def proc_kb(pid, key):
    """A `kB` field of /proc/<pid>/status, or None."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def daemon_meta(sock_dir):
    """The JSON meta file meshd writes beside its socket, or None."""
    try:
        names = [n for n in os.listdir(sock_dir) if n.startswith("meshd-") and n.endswith(".meta")]
        if len(names) == 1:
            with open(os.path.join(sock_dir, names[0])) as f:
                return json.load(f)
    except (OSError, ValueError):
        pass
    return None


def daemon_bench(binary, corpus, spawns, clients, timeout):
    """Proxy mode (`BIN run` bridged to a shared meshd), on `corpus` or an empty dir.

    proxy_init_cold_ms   the first proxy: spawn -> `initialize` answered, meshd spawned by it
    proxy_init_warm_ms   median over `spawns` later proxies with the daemon already running
    proxy_rss_kb         median VmRSS of those proxies right after `initialize`
    daemon_rss_1_kb      meshd VmRSS with one client, after the first index (a smart_search)
    daemon_rss_16_kb     meshd VmRSS with `clients` clients connected, each having run it
    daemon_hwm_kb        meshd VmHWM at the end
    """
    out = {"proxy_init_cold_ms": None, "proxy_init_warm_ms": None, "proxy_rss_kb": None,
           "daemon_rss_1_kb": None, "daemon_rss_16_kb": None, "daemon_hwm_kb": None,
           "daemon_clients": clients, "daemon_spawns": spawns, "notes": []}
    with tempfile.TemporaryDirectory(prefix="mesh-bench-d-") as tmp:
        cwd = corpus
        if cwd is None:
            cwd = os.path.join(tmp, "empty")
            os.makedirs(cwd)
        env = private_env(tmp)
        env["MESH_DAEMON_IDLE_SECS"] = "60"
        env["MESH_DAEMON_GRACE_SECS"] = "60"
        sock_dir = env["MESH_SOCKET_PATH"]
        live = []
        pid = None
        n = 0

        def proxy():
            nonlocal n
            n += 1
            return Server(binary, cwd, tmp, timeout, args=("run",), env=env, name=f"proxy-{n}")

        def status_call(srv):
            resp = srv.call("tools/call", {"name": "index_status", "arguments": {}})
            if not tool_ok(resp):
                raise ServerGone("index_status: " + describe_failure(resp))
            if "served by meshd" not in tool_text(resp):
                raise ServerGone("the proxy fell back to standalone: " + srv.stderr_tail())

        try:
            anchor = proxy()
            live.append(anchor)
            out["proxy_init_cold_ms"] = rounded(initialize(anchor))
            # Waits for the first index, so the RSS below includes it.
            resp = smart_search(anchor, {"query": "Service"})
            if not tool_ok(resp):
                raise ServerGone("first smart_search: " + describe_failure(resp))
            status_call(anchor)
            meta = daemon_meta(sock_dir)
            if not meta:
                raise ServerGone("no meshd meta file beside the socket")
            pid = meta["pid"]
            out["daemon_rss_1_kb"] = proc_kb(pid, "VmRSS")

            inits, rsss = [], []
            for _ in range(spawns):
                srv = proxy()
                try:
                    inits.append(initialize(srv))
                    rsss.append(srv.proc_status_kb("VmRSS"))
                finally:
                    srv.close()
            out["proxy_init_warm_ms"] = rounded(median_worst(inits))
            out["proxy_rss_kb"] = median_worst(rsss)
            out["proxy_init_warm_ms_all"] = [rounded(v) for v in inits]

            for _ in range(clients - 1):
                srv = proxy()
                live.append(srv)
                initialize(srv)
                status_call(srv)
            out["daemon_rss_16_kb"] = proc_kb(pid, "VmRSS")
            out["daemon_hwm_kb"] = proc_kb(pid, "VmHWM")
        except ServerGone as e:
            out["notes"].append(f"daemon bench: {e}")
        finally:
            for srv in live:
                srv.close()
            if pid:
                try:
                    os.kill(pid, 15)
                except OSError:
                    pass
                for _ in range(100):
                    if proc_kb(pid, "VmRSS") is None:
                        break
                    time.sleep(0.05)
    return out


# --- aggregation ----------------------------------------------------------------------------

def median_worst(values):
    """Lower median where None counts as the worst (largest) value; None if it lands there."""
    if not values:
        return None
    ordered = sorted(values, key=lambda v: math.inf if v is None else v)
    return ordered[(len(ordered) - 1) // 2]


def nearest_rank(values, pct):
    """Nearest-rank percentile of a non-empty list, else None."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100.0 * len(ordered)))
    return ordered[rank - 1]


def rounded(v, nd=2):
    return None if v is None else round(v, nd)


# --- corpus helpers -------------------------------------------------------------------------

def service_scopes(corpus):
    """services/<name> directories, in natural order (svc-2 before svc-10)."""
    base = os.path.join(corpus, "services")
    if not os.path.isdir(base):
        return []
    names = [n for n in os.listdir(base) if os.path.isdir(os.path.join(base, n))]
    key = lambda n: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", n)]
    return [f"services/{n}" for n in sorted(names, key=key)]


def default_edit_file(corpus, scopes):
    """The lowest-numbered gen_<i> file with a known extension under the first scope."""
    for scope in scopes[:1]:
        src = os.path.join(corpus, scope, "src")
        best = None
        for name in os.listdir(src) if os.path.isdir(src) else []:
            m = re.fullmatch(r"gen_(\d+)(\.\w+)", name)
            if m and m.group(2) in MARKER_DECL:
                if best is None or int(m.group(1)) < best[0]:
                    best = (int(m.group(1)), name)
        if best:
            return f"{scope}/src/{best[1]}"
    return None


def count_files(corpus):
    return sum(len(files) for _, _, files in os.walk(corpus))


def git_ignored(corpus):
    """True when the corpus sits inside a git work tree that ignores it (watchers may skip it)."""
    try:
        p = subprocess.run(["git", "-C", corpus, "check-ignore", "-q", "services"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)
        return p.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def rg_run_ms(corpus, word="Service"):
    """Wall ms of one `rg -c -uu WORD` over the corpus (every file read), or None without rg."""
    exe = shutil.which("rg")
    if not exe:
        return None
    t0 = time.perf_counter()
    p = subprocess.run([exe, "-c", "-uu", word], cwd=corpus, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t0) * 1000.0 if p.returncode in (0, 1) else None


def ctags_ms(corpus, runs):
    """Median wall ms of `ctags -R` over the corpus, or None without ctags."""
    exe = shutil.which("ctags")
    if not exe:
        return None
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run([exe, "-R", "-f", "/dev/null", f"--languages={CTAGS_LANGS}", "."],
                           cwd=corpus, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if p.returncode != 0:
            return None
        times.append((time.perf_counter() - t0) * 1000.0)
    return statistics.median_low(times)


# --- main -----------------------------------------------------------------------------------

def main(argv):
    ap = argparse.ArgumentParser(description="Benchmark mesh-mcp over stdio (SPEC §9).")
    ap.add_argument("--bin", required=True, help="path to the mesh-mcp binary")
    ap.add_argument("--corpus", help="workspace directory (e.g. from gen_workload.py)")
    ap.add_argument("--queries", type=int, default=60, help="smart_search calls per run")
    ap.add_argument("--runs", type=int, default=3, help="fresh processes per corpus")
    ap.add_argument("--timeout", type=float, default=30.0, help="per-call timeout, seconds")
    ap.add_argument("--edit-file", help="corpus-relative file for the edit probe")
    ap.add_argument("--no-ctags", action="store_true", help="skip the ctags comparison")
    ap.add_argument("--init-only", action="store_true",
                    help="only spawn on empty dirs: init_empty_ms and rss_after_init_kb")
    ap.add_argument("--spawns", type=int, default=30, help="spawns for --init-only")
    ap.add_argument("--daemon", action="store_true",
                    help="proxy mode: `BIN run` through a shared meshd (proxy start, proxy "
                         "and daemon RSS); --corpus optional (default: an empty dir)")
    ap.add_argument("--clients", type=int, default=16, help="clients for --daemon")
    ap.add_argument("--json", help="also write the result JSON here")
    args = ap.parse_args(argv)

    binary = os.path.abspath(args.bin)
    if not os.access(binary, os.X_OK):
        ap.error(f"--bin {binary} is not an executable file")
    if args.daemon:
        corpus = os.path.abspath(args.corpus) if args.corpus else None
        out = {"bench": "size-report/bench.py --daemon", "bin": binary, "corpus": corpus,
               "protocol": PROTOCOL_VERSION}
        out.update(daemon_bench(binary, corpus, max(args.spawns, 1), max(args.clients, 1),
                                args.timeout))
        text = json.dumps(out, indent=2, sort_keys=True)
        print(text)
        if args.json:
            with open(args.json, "w") as f:
                f.write(text + "\n")
        return 0
    if not args.init_only and not args.corpus:
        ap.error("--corpus is required unless --init-only or --daemon")
    if args.runs < 1 or args.spawns < 1 or args.queries < 0:
        ap.error("--runs and --spawns must be >= 1, --queries >= 0")

    out = {"bench": "size-report/bench.py", "bin": binary, "protocol": PROTOCOL_VERSION,
           "notes": []}

    def note(text):
        if text and text not in out["notes"]:
            out["notes"].append(text)

    # Empty-dir spawns: --spawns of them in --init-only mode, one per run otherwise.
    spawns = args.spawns if args.init_only else args.runs
    inits, rsss = [], []
    for _ in range(spawns):
        ms, rss, n = empty_session(binary, args.timeout)
        inits.append(ms)
        rsss.append(rss)
        note(n)
    out["init_empty_ms"] = rounded(median_worst(inits))
    out["rss_after_init_kb"] = median_worst(rsss)
    out["empty_spawns"] = spawns
    out["init_empty_ms_all"] = [rounded(v) for v in inits]
    out["spawn_floor_ms"] = rounded(spawn_floor_ms(spawns), 3)

    if not args.init_only:
        corpus = os.path.abspath(args.corpus)
        scopes = service_scopes(corpus)
        edit_rel = args.edit_file or default_edit_file(corpus, scopes)
        out.update({"corpus": corpus, "corpus_files": count_files(corpus), "scopes": scopes,
                    "runs": args.runs, "queries": args.queries, "edit_file": edit_rel})
        if not scopes:
            note("no services/* directories: searches run without a scope")
        if not edit_rel:
            note("no gen_* file found: edit probe skipped")
        if git_ignored(corpus):
            note("the corpus sits in a git-ignored path; a server that honours the enclosing "
                 "repository's ignore rules may index nothing or miss the edit")
        per_run = []
        rg_times = []
        for run_no in range(args.runs):
            r = corpus_session(binary, corpus, scopes, args.queries, args.timeout, edit_rel,
                               run_no)
            per_run.append(r)
            # ripgrep right after each cold run, on the same (equally warm) page cache.
            rg_times.append(rg_run_ms(corpus))
            for n in r["notes"]:
                note(f"run {run_no + 1}: {n}")
        all_search = [ms for r in per_run for ms in r["search_ms"]]
        for key in ("init_ms", "cold_index_ms", "edit_visible_ms", "peak_rss_kb"):
            v = median_worst([r[key] for r in per_run])
            out[key] = v if key == "peak_rss_kb" else rounded(v)
        out["search_p50_ms"] = rounded(nearest_rank(all_search, 50), 3)
        out["search_p95_ms"] = rounded(nearest_rank(all_search, 95), 3)
        out["search_count"] = len(all_search)
        out["search_errors"] = sum(r["search_errors"] for r in per_run)
        out["per_run"] = [{
            "init_ms": rounded(r["init_ms"]), "cold_index_ms": rounded(r["cold_index_ms"]),
            "edit_visible_ms": rounded(r["edit_visible_ms"]), "peak_rss_kb": r["peak_rss_kb"],
            "search_p50_ms": rounded(nearest_rank(r["search_ms"], 50), 3),
            "search_count": len(r["search_ms"]), "exit_status": r["exit_status"],
        } for r in per_run]
        rg = median_worst(rg_times) if all(t is not None for t in rg_times) else None
        out["rg_ms"] = rounded(rg)
        out["rg_cmd"] = "rg -c -uu Service"
        cold = out["cold_index_ms"]
        out["rg_ratio"] = rounded(cold / rg, 3) if rg and cold else None
        if rg is None:
            note("rg not available or failed: rg_ms not measured")
        if not args.no_ctags:
            c = ctags_ms(corpus, args.runs)
            out["ctags_ms"] = rounded(c)
            out["ctags_cmd"] = f"ctags -R -f /dev/null --languages={CTAGS_LANGS} ."
            cold = out["cold_index_ms"]
            out["ctags_ratio"] = rounded(c / cold, 3) if c and cold else None
            if c is None:
                note("ctags not available or failed: ctags_ms not measured")

    text = json.dumps(out, indent=2, sort_keys=True)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
