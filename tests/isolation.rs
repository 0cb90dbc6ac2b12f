//! No panic ends a session or the shared daemon (issue 17): every unit of untrusted work is
//! isolated, proved in standalone mode (`mesh-mcp run --standalone`) and daemon mode (`mesh-mcp
//! run`, proxying to the `meshd` it starts) for each unit:
//!
//! - a panicking tool call is answered `-32603` naming the tool; the session (and in the daemon
//!   another client's session) goes on;
//! - a panicking extractor costs its file, listed as rejected "extractor failed at
//!   <file:line>"; the rest is indexed;
//! - an extractor that hangs is given up after the per-file time cap, its file listed as
//!   rejected; the rest is indexed;
//! - a panicking watcher is logged and started over, and live updates go on;
//! - a panicking audit task is logged and started over, and later calls are audited in one
//!   valid chain.
//!
//! The faults come from the test hooks armed by `MESH_TEST_FIXTURES=1` (see
//! `mesh_mcp::isolate`). By default the tests drive the debug binaries `cargo test` builds;
//! `.ci/run` runs them again against the release binaries (which must unwind for any of this to
//! hold) with `MESH_TEST_BIN_DIR=target/release`.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::temp_dir;
use serde_json::{Value, json};

const PANIC_MARKER: &str = mesh_mcp::PANIC_MARKER;
const HANG_MARKER: &str = mesh_mcp::HANG_MARKER;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Standalone,
    Daemon,
}

const MODES: [Mode; 2] = [Mode::Standalone, Mode::Daemon];

/// The `mesh-mcp` under test: `$MESH_TEST_BIN_DIR/mesh-mcp` (with its `meshd` beside it), else
/// the debug build.
fn mesh_bin() -> PathBuf {
    match std::env::var_os("MESH_TEST_BIN_DIR") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            let dir = if dir.is_relative() {
                Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)
            } else {
                dir
            };
            let bin = dir.join("mesh-mcp");
            assert!(
                bin.exists(),
                "MESH_TEST_BIN_DIR has no mesh-mcp: {}",
                bin.display()
            );
            bin
        }
        None => PathBuf::from(env!("CARGO_BIN_EXE_mesh-mcp")),
    }
}

/// One test's private world: a small workspace, HOME, socket directory and audit database.
struct World {
    root: PathBuf,
    ws: PathBuf,
    home: PathBuf,
    sock: PathBuf,
}

impl World {
    fn new(tag: &str, mode: Mode, files: &[(&str, &str)]) -> World {
        let root = temp_dir(&format!("iso-{tag}-{mode:?}"));
        let ws = root.join("ws");
        let write = |rel: &str, text: &str| {
            let p = ws.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write(
            "svc/orders/main.go",
            "package main\n\ntype OrderService struct{}\n\nfunc NewOrderService() *OrderService { return nil }\n",
        );
        write("svc/orders/good.py", "class GoodServicer:\n    pass\n");
        for (rel, text) in files {
            write(rel, text);
        }
        let home = root.join("home");
        std::fs::create_dir_all(&home).unwrap();
        let ws = std::fs::canonicalize(&ws).unwrap();
        World {
            sock: root.join("sock"),
            root,
            ws,
            home,
        }
    }

    fn command(&self, mode: Mode, env: &[(&str, &str)]) -> Command {
        let mut cmd = Command::new(mesh_bin());
        cmd.arg("run");
        if mode == Mode::Standalone {
            cmd.arg("--standalone");
        }
        cmd.current_dir(&self.ws)
            .env("HOME", &self.home)
            .env("MESH_SOCKET_PATH", &self.sock)
            .env("MESH_AUDIT_DB", self.home.join("audit.db"))
            .env("MESH_TEST_FIXTURES", "1")
            .env("MESH_DAEMON_IDLE_SECS", "5")
            .env("MESH_DAEMON_GRACE_SECS", "30")
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("MESH_LOG")
            .env_remove("RUST_LOG")
            .env_remove("MESH_DAEMON_SANDBOX");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd
    }

    fn session(&self, mode: Mode, env: &[(&str, &str)]) -> Session {
        let mut s = Session::spawn(self.command(mode, env));
        let r = s.call(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "isolation", "version": "0"}}),
        );
        assert!(r["result"]["protocolVersion"].is_string(), "{r}");
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    /// The daemon's pid, from the meta file beside its socket (daemon mode).
    fn daemon_pid(&self) -> Option<u32> {
        let id = mesh_mcp::workspace_id(&self.ws);
        let meta = std::fs::read_to_string(self.sock.join(format!("meshd-{id}.meta"))).ok()?;
        let meta: Value = serde_json::from_str(&meta).ok()?;
        meta["pid"].as_u64().map(|p| p as u32)
    }

    /// Everything the server logged: its stderr (standalone) or the daemon's log files.
    fn daemon_log(&self) -> String {
        let mut out = String::new();
        if let Ok(dir) = std::fs::read_dir(self.home.join(".cache/mesh-mcp/logs")) {
            for e in dir.flatten() {
                out.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
            }
        }
        out
    }

    fn audited_tools(&self) -> Vec<String> {
        let conn = rusqlite::Connection::open(self.home.join("audit.db")).unwrap();
        let mut st = conn
            .prepare("SELECT tool FROM audit_entries ORDER BY entry_seq")
            .unwrap();
        st.query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }
}

impl Drop for World {
    fn drop(&mut self) {
        if let Some(pid) = self.daemon_pid() {
            let _ = Command::new("kill").arg(pid.to_string()).status();
            wait_until(Duration::from_secs(10), || {
                !Path::new(&format!("/proc/{pid}")).exists()
            });
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn wait_until(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// A client: `mesh-mcp run [--standalone]` over pipes, stderr collected.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    stderr_reader: Option<std::thread::JoinHandle<()>>,
    next_id: i64,
}

impl Session {
    fn spawn(mut cmd: Command) -> Session {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mesh-mcp");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        let err = child.stderr.take().unwrap();
        let stderr_reader = std::thread::spawn(move || {
            for line in BufReader::new(err).lines() {
                let Ok(line) = line else { break };
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        Session {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            stderr,
            stderr_reader: Some(stderr_reader),
            next_id: 100,
        }
    }

    fn send(&mut self, msg: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
    }

    fn call(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(line) = self.lines.recv_timeout(left) else {
                panic!(
                    "no answer to {method} (id {id}); the server is {}; stderr:\n{}",
                    match self.child.try_wait() {
                        Ok(Some(s)) => format!("gone ({s})"),
                        _ => "running".into(),
                    },
                    self.stderr.lock().unwrap()
                );
            };
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == json!(id) && v.get("method").is_none() {
                return v;
            }
        }
    }

    fn tool(&mut self, name: &str, args: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.call(id, "tools/call", json!({"name": name, "arguments": args}))
    }

    fn text(&mut self, name: &str, args: Value) -> String {
        let r = self.tool(name, args);
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: not a tool result: {r}"))
            .to_string()
    }

    fn ping(&mut self) {
        self.next_id += 1;
        let id = self.next_id;
        let r = self.call(id, "ping", json!({}));
        assert_eq!(r["result"], json!({}), "{r}");
    }

    /// Closes stdin, waits for the exit status and returns it with everything the server
    /// wrote on stderr.
    fn finish_with_stderr(mut self) -> (Option<i32>, String) {
        let code = self.wait_exit();
        if let Some(reader) = self.stderr_reader.take() {
            let _ = reader.join();
        }
        (code, self.stderr())
    }

    /// Closes stdin and waits for the exit status.
    fn finish(mut self) -> Option<i32> {
        self.wait_exit()
    }

    fn wait_exit(&mut self) -> Option<i32> {
        self.stdin.take();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s.code();
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn finds(s: &mut Session, name: &str) -> bool {
    s.text("smart_search", json!({"query": name}))
        .contains(name)
}

#[test]
fn a_panicking_tool_call_costs_that_call_only() {
    for mode in MODES {
        let world = World::new("tool", mode, &[]);
        let mut a = world.session(mode, &[]);
        let mut b = world.session(mode, &[]);
        let pid = world.daemon_pid();
        let r = a.tool("test_panic", json!({}));
        assert_eq!(r["error"]["code"], -32603, "{mode:?}: {r}");
        let message = r["error"]["message"].as_str().unwrap();
        assert!(message.contains("test_panic"), "{mode:?}: {message}");
        // The session goes on, and so does the other client's.
        a.ping();
        assert!(finds(&mut a, "OrderService"), "{mode:?}");
        b.ping();
        assert!(finds(&mut b, "OrderService"), "{mode:?}");
        let r = b.tool("test_panic", json!({}));
        assert_eq!(r["error"]["code"], -32603, "{mode:?}: {r}");
        assert!(finds(&mut a, "NewOrderService"), "{mode:?}");
        if mode == Mode::Daemon {
            assert!(pid.is_some(), "no daemon serves the session");
            assert_eq!(world.daemon_pid(), pid, "the daemon was replaced");
            assert!(
                world.daemon_log().contains("panic at"),
                "the daemon did not log the panic"
            );
        } else {
            assert!(
                a.stderr().contains("panic at src/tools/fixtures.rs:"),
                "{}",
                a.stderr()
            );
        }
        assert_eq!(a.finish(), Some(0), "{mode:?}");
        assert_eq!(b.finish(), Some(0), "{mode:?}");
    }
}

#[test]
fn a_panicking_extractor_costs_that_file_only() {
    for mode in MODES {
        let bad = format!("# {PANIC_MARKER}\nclass BadServicer:\n    pass\n");
        let world = World::new("extract", mode, &[("svc/orders/bad.py", &bad)]);
        let mut s = world.session(mode, &[]);
        assert!(finds(&mut s, "OrderService"), "{mode:?}");
        assert!(finds(&mut s, "GoodServicer"), "{mode:?}");
        let status = s.text("index_status", json!({}));
        let line = status
            .lines()
            .find(|l| l.contains("bad.py"))
            .unwrap_or_else(|| panic!("{mode:?}: bad.py not listed:\n{status}"));
        assert!(
            line.contains("extractor failed at src/index/mod.rs:"),
            "{mode:?}: {line}"
        );
        s.ping();
        assert_eq!(s.finish(), Some(0), "{mode:?}");
    }
}

#[test]
fn a_hanging_extractor_is_given_up_after_the_time_cap() {
    for mode in MODES {
        let slow = format!("// {HANG_MARKER}\npub struct Slow;\n");
        let world = World::new("hang", mode, &[("svc/orders/slow.rs", &slow)]);
        let started = Instant::now();
        let mut s = world.session(mode, &[("MESH_EXTRACT_TIMEOUT_MS", "300")]);
        assert!(finds(&mut s, "OrderService"), "{mode:?}");
        // The index did not wait for the hung file (it sleeps for a minute).
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{mode:?}: {:?}",
            started.elapsed()
        );
        let status = s.text("index_status", json!({}));
        let line = status
            .lines()
            .find(|l| l.contains("slow.rs"))
            .unwrap_or_else(|| panic!("{mode:?}: slow.rs not listed:\n{status}"));
        assert!(line.contains("longer than 300 ms"), "{mode:?}: {line}");
        assert_eq!(s.finish(), Some(0), "{mode:?}");
    }
}

#[test]
fn a_panicking_watcher_is_started_over_and_updates_go_on() {
    for mode in MODES {
        let world = World::new("watcher", mode, &[]);
        let mut s = world.session(mode, &[]);
        assert!(finds(&mut s, "OrderService"), "{mode:?}");
        std::fs::write(
            world
                .ws
                .join("svc/orders")
                .join(mesh_mcp::WATCHER_PANIC_FILE),
            "x",
        )
        .unwrap();
        let restarted = wait_until(Duration::from_secs(30), || {
            s.text("index_status", json!({}))
                .contains("Indexer restarts: 1")
        });
        assert!(restarted, "{mode:?}: no restart seen");
        std::fs::write(
            world.ws.join("svc/orders/later.go"),
            "package main\n\ntype AfterRestart struct{}\n",
        )
        .unwrap();
        let seen = wait_until(Duration::from_secs(30), || finds(&mut s, "AfterRestart"));
        assert!(
            seen,
            "{mode:?}: a change after the restart never became visible"
        );
        let log = if mode == Mode::Daemon {
            world.daemon_log()
        } else {
            s.stderr()
        };
        assert!(
            log.contains("the indexer panicked at src/index/watch.rs:"),
            "{mode:?}: {log}"
        );
        assert_eq!(s.finish(), Some(0), "{mode:?}");
    }
}

#[test]
fn a_panicking_audit_task_is_started_over_and_the_chain_stays_valid() {
    for mode in MODES {
        let world = World::new("audit", mode, &[]);
        let mut s = world.session(mode, &[]);
        assert!(finds(&mut s, "OrderService"), "{mode:?}");
        let r = s.tool("test_panic_audit", json!({}));
        assert_eq!(r["result"]["isError"], false, "{mode:?}: {r}");
        // Past the audit task's batch window, so the next call is a batch of its own.
        std::thread::sleep(Duration::from_millis(300));
        assert!(finds(&mut s, "NewOrderService"), "{mode:?}");
        s.ping();
        // The audit task writes (and panics) on its own clock: its log line may come after
        // the last answer, so stderr is read to its end.
        let (code, stderr) = s.finish_with_stderr();
        assert_eq!(code, Some(0), "{mode:?}");
        let log = if mode == Mode::Daemon {
            // The daemon writes the rows of a session before it lets the session end; wait
            // for the log line too.
            wait_until(Duration::from_secs(10), || {
                world.daemon_log().contains("audit task panicked")
            });
            world.daemon_log()
        } else {
            stderr
        };
        assert!(
            log.contains("the audit task panicked at src/auditor.rs:"),
            "{mode:?}: {log}"
        );
        let tools = world.audited_tools();
        assert!(
            !tools.iter().any(|t| t == "test_panic_audit"),
            "{mode:?}: {tools:?}"
        );
        assert_eq!(
            tools.last().map(String::as_str),
            Some("smart_search"),
            "{mode:?}: {tools:?}"
        );
        let verify = Command::new(mesh_bin())
            .args(["audit", "verify", "--db"])
            .arg(world.home.join("audit.db"))
            .env("HOME", &world.home)
            .output()
            .unwrap();
        assert!(
            verify.status.success(),
            "{mode:?}: {}",
            String::from_utf8_lossy(&verify.stderr)
        );
    }
}
