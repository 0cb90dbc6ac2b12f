//! `meshd` and the `mesh-mcp run` proxy, driven as real processes: many clients on one daemon,
//! a slow call that does not block another client, the daemon dying mid-session, stale
//! sockets, racing daemons, permissions, idle exit, version mismatch and the sandbox.
//!
//! Every test gets its own HOME, socket directory (`MESH_SOCKET_PATH`), audit database and
//! workspace, so tests run in parallel without meeting each other's daemons and never touch the
//! real user directories. Daemons left behind stop on their own (short idle timeouts) and are
//! also terminated when the test's [`Env`] is dropped.

mod common;

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{temp_dir, tool_text};
use serde_json::{Value, json};

const INIT_PARAMS: &str = r#"{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"daemon-test","version":"0"}}"#;

/// One test's private world: workspace, HOME, socket directory, audit database.
struct Env {
    root: PathBuf,
    workspace: PathBuf,
    home: PathBuf,
    sock_dir: PathBuf,
    extra: Vec<(String, String)>,
}

impl Env {
    fn new(tag: &str) -> Env {
        let root = temp_dir(tag);
        let workspace = root.join("ws");
        std::fs::create_dir_all(workspace.join("svc")).unwrap();
        std::fs::write(
            workspace.join("svc/main.go"),
            "package main\n\ntype OrderService struct{}\n\nfunc NewOrderService() *OrderService { return nil }\n",
        )
        .unwrap();
        let home = root.join("home");
        std::fs::create_dir_all(&home).unwrap();
        Env {
            root: root.clone(),
            workspace,
            home,
            sock_dir: root.join("sock"),
            extra: Vec::new(),
        }
    }

    fn with(mut self, key: &str, value: &str) -> Env {
        self.extra.push((key.into(), value.into()));
        self
    }

    fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(&self.workspace)
            .env("HOME", &self.home)
            .env("MESH_SOCKET_PATH", &self.sock_dir)
            .env("MESH_AUDIT_DB", self.home.join("audit.db"))
            .env("MESH_TEST_FIXTURES", "1")
            .env("MESH_DAEMON_IDLE_SECS", "3")
            .env("MESH_DAEMON_GRACE_SECS", "30")
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("MESH_LOG")
            .env_remove("RUST_LOG")
            .env_remove("MESH_DAEMON_SANDBOX")
            .env_remove("MESH_TEST_MESHD")
            .env_remove("MESH_TEST_INDEX_DELAY_MS");
        for (k, v) in &self.extra {
            cmd.env(k, v);
        }
        cmd
    }

    /// `mesh-mcp run` (proxy mode) with piped stdio.
    fn proxy(&self) -> Client {
        let mut cmd = self.command(env!("CARGO_BIN_EXE_mesh-mcp"));
        cmd.arg("run");
        Client::spawn(cmd)
    }

    /// `meshd` started directly, stdio piped (stderr captured).
    fn meshd(&self) -> Child {
        self.command(env!("CARGO_BIN_EXE_meshd"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn meshd")
    }

    fn socket(&self) -> PathBuf {
        let base = std::fs::canonicalize(&self.workspace).unwrap();
        let id = mesh_mcp::workspace_id(&base);
        self.sock_dir.join(format!("meshd-{id}.sock"))
    }

    fn meta(&self) -> Option<Value> {
        let text = std::fs::read_to_string(self.socket().with_extension("meta")).ok()?;
        serde_json::from_str(&text).ok()
    }

    fn daemon_pid(&self) -> Option<u32> {
        self.meta()?["pid"].as_u64().map(|p| p as u32)
    }

    fn log_dir(&self) -> PathBuf {
        self.home.join(".cache/mesh-mcp/logs")
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        if let Some(pid) = self.daemon_pid() {
            signal(pid, "TERM");
            wait_until(Duration::from_secs(10), || !alive(pid));
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn signal(pid: u32, sig: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .stderr(Stdio::null())
        .status();
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.split(") ").nth(1).is_some_and(|r| r.starts_with('Z')))
}

/// Polls `cond` every 20 ms until it holds or `timeout` passes.
fn wait_until(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A client process speaking newline-delimited JSON-RPC over its stdio. Every stdout line is
/// kept raw (with its newline, if any) and time-stamped on arrival.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<(Instant, String)>,
    stderr: Arc<Mutex<String>>,
    stderr_reader: Option<std::thread::JoinHandle<()>>,
    backlog: Vec<(Instant, Value)>,
}

impl Client {
    fn spawn(mut cmd: Command) -> Client {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn client process");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = String::new();
                match reader.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if tx.send((Instant::now(), line)).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        let mut err = child.stderr.take().unwrap();
        let stderr_reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Client {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            stderr,
            stderr_reader: Some(stderr_reader),
            backlog: Vec::new(),
        }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, id: i64, method: &str, params: Value) {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_raw(format!("{line}\n").as_bytes());
    }

    /// The next stdout line, parsed, with its arrival time; panics on a partial or bad line.
    fn next(&mut self, timeout: Duration) -> Option<(Instant, Value)> {
        let (at, line) = self.lines.recv_timeout(timeout).ok()?;
        assert!(line.ends_with('\n'), "partial line on stdout: {line:?}");
        let v = serde_json::from_str(&line).unwrap_or_else(|e| panic!("bad frame {line:?}: {e}"));
        Some((at, v))
    }

    /// Waits for the response with this id (other messages are kept for later).
    fn wait_for(&mut self, id: i64, timeout: Duration) -> (Instant, Value) {
        if let Some(pos) = self
            .backlog
            .iter()
            .position(|(_, v)| v["id"] == json!(id) && v.get("method").is_none())
        {
            return self.backlog.remove(pos);
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some((at, v)) = self.next(left) else {
                panic!(
                    "no response to id {id}; stderr: {}",
                    self.stderr.lock().unwrap()
                );
            };
            if v["id"] == json!(id) && v.get("method").is_none() {
                return (at, v);
            }
            self.backlog.push((at, v));
        }
    }

    fn call(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.request(id, method, params);
        self.wait_for(id, Duration::from_secs(30)).1
    }

    fn initialize(&mut self) -> Value {
        let resp = self.call(0, "initialize", serde_json::from_str(INIT_PARAMS).unwrap());
        self.send_raw(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
        resp
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits for the process to exit (stdin left as it is); `None` on timeout (then killed).
    fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                // The process is gone, so its stderr pipe is closed: collect all of it.
                if let Some(reader) = self.stderr_reader.take() {
                    let _ = reader.join();
                }
                return s.code();
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Closes stdin, collects the remaining stdout lines and the exit status.
    fn finish(mut self, timeout: Duration) -> (Vec<Value>, Option<i32>, String) {
        self.stdin.take();
        let status = self.wait_exit(timeout);
        let mut rest: Vec<Value> = self.backlog.drain(..).map(|(_, v)| v).collect();
        while let Some((_, v)) = self.next(Duration::from_millis(200)) {
            rest.push(v);
        }
        (rest, status, self.stderr())
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn index_status(client: &mut Client, id: i64) -> String {
    let resp = client.call(
        id,
        "tools/call",
        json!({"name": "index_status", "arguments": {}}),
    );
    tool_text(&resp).to_string()
}

#[test]
fn sixteen_clients_share_one_daemon_and_get_exactly_their_answers() {
    const CLIENTS: i64 = 16;
    const CALLS: i64 = 200;
    let env = Arc::new(Env::new("d16"));
    let handles: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let env = env.clone();
            std::thread::spawn(move || {
                let mut client = env.proxy();
                let init = client.initialize();
                assert_eq!(init["result"]["serverInfo"]["name"], "mesh-mcp", "{init}");
                // Pipeline every call at once; ids are unique across clients.
                let mut batch = String::new();
                for i in 0..CALLS {
                    let id = c * 100_000 + i;
                    let msg = if i % 2 == 0 {
                        json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
                    } else {
                        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                               "params": {"name": "test_sleep", "arguments": {"ms": c}}})
                    };
                    batch.push_str(&msg.to_string());
                    batch.push('\n');
                }
                client.send_raw(batch.as_bytes());
                let mut seen = HashSet::new();
                while seen.len() < CALLS as usize {
                    let (_, v) = client
                        .next(Duration::from_secs(120))
                        .unwrap_or_else(|| panic!("client {c}: only {} answers", seen.len()));
                    let id = v["id"].as_i64().unwrap_or_else(|| panic!("no id: {v}"));
                    assert_eq!(
                        id / 100_000,
                        c,
                        "client {c} got another client's answer: {v}"
                    );
                    assert!(seen.insert(id), "client {c}: answer {id} delivered twice");
                    if id % 2 == 1 {
                        assert_eq!(tool_text(&v), format!("slept {c} ms"), "{v}");
                    } else {
                        assert_eq!(v["result"], json!({}), "{v}");
                    }
                }
                let (rest, status, stderr) = client.finish(Duration::from_secs(30));
                assert!(rest.is_empty(), "client {c}: extra output {rest:?}");
                assert_eq!(status, Some(0), "client {c}: {stderr}");
                assert!(
                    !stderr.contains("not using meshd"),
                    "client {c} fell back: {stderr}"
                );
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let pid = env.daemon_pid().expect("daemon meta");
    assert!(alive(pid));
    // One daemon served them all; no second one is left behind.
    let mut c = env.proxy();
    c.initialize();
    let status = index_status(&mut c, 1);
    assert!(
        status.contains(&format!("served by meshd pid {pid}")),
        "{status}"
    );
    assert!(status.contains("since start)"), "{status}");
}

#[test]
fn a_ping_overtakes_another_clients_slow_call() {
    let env = Env::new("dslow");
    let mut slow = env.proxy();
    slow.initialize();
    let mut quick = env.proxy();
    quick.initialize();
    slow.request(
        1,
        "tools/call",
        json!({"name": "test_sleep", "arguments": {"ms": 1000}}),
    );
    std::thread::sleep(Duration::from_millis(100));
    quick.request(2, "ping", json!({}));
    let (ping_at, ping) = quick.wait_for(2, Duration::from_secs(30));
    let (slow_at, slow_resp) = slow.wait_for(1, Duration::from_secs(30));
    assert_eq!(ping["result"], json!({}));
    assert_eq!(tool_text(&slow_resp), "slept 1000 ms");
    assert!(ping_at < slow_at, "the ping waited for the slow call");
    // Both were served by the same daemon.
    let a = index_status(&mut slow, 3);
    let b = index_status(&mut quick, 4);
    let pid = env.daemon_pid().unwrap();
    for text in [&a, &b] {
        assert!(
            text.contains(&format!("served by meshd pid {pid}")),
            "{text}"
        );
    }
    assert!(a.contains("2 client(s) connected"), "{a}");
}

#[test]
fn stdin_closing_first_still_gets_every_answer() {
    let env = Env::new("ddrain");
    let mut c = env.proxy();
    let mut input = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{INIT_PARAMS}}}\n"
    );
    input.push_str(
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"test_sleep\",\"arguments\":{\"ms\":500}}}\n",
    );
    c.send_raw(input.as_bytes());
    let (rest, status, stderr) = c.finish(Duration::from_secs(30));
    assert_eq!(status, Some(0), "{stderr}");
    let ids: Vec<_> = rest.iter().map(|v| v["id"].clone()).collect();
    assert!(
        ids.contains(&json!(1)) && ids.contains(&json!(2)),
        "{rest:?}"
    );
    assert!(!stderr.contains("not using meshd"), "{stderr}");
    assert!(env.daemon_pid().is_some());
}

#[test]
fn a_daemon_killed_mid_session_ends_the_proxy_with_status_1() {
    let env = Env::new("dkill");
    let mut c = env.proxy();
    c.initialize();
    let pid = env.daemon_pid().expect("daemon meta");
    c.request(
        1,
        "tools/call",
        json!({"name": "test_big_output", "arguments": {"bytes": 40000}}),
    );
    c.wait_for(1, Duration::from_secs(30));
    c.request(
        2,
        "tools/call",
        json!({"name": "test_sleep", "arguments": {"ms": 20000}}),
    );
    std::thread::sleep(Duration::from_millis(200));
    signal(pid, "KILL");
    let status = c.wait_exit(Duration::from_secs(20));
    assert_eq!(status, Some(1), "stderr: {}", c.stderr());
    let stderr = c.stderr();
    assert!(
        stderr.contains("closed the connection mid-session"),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("pid {pid}")), "{stderr}");
    let log = env.log_dir();
    assert!(
        stderr.contains(&log.display().to_string()),
        "no daemon log path in: {stderr}"
    );
    // Nothing partial: every remaining line is a complete frame (checked by `next`), and the
    // in-flight call got no answer.
    while let Some((_, v)) = c.next(Duration::from_millis(200)) {
        assert_ne!(v["id"], json!(2), "{v}");
    }
}

#[test]
fn a_stale_socket_from_a_killed_daemon_is_recovered() {
    let env = Env::new("dstale");
    let mut c = env.proxy();
    c.initialize();
    let old = env.daemon_pid().unwrap();
    signal(old, "KILL");
    assert_eq!(c.wait_exit(Duration::from_secs(20)), Some(1));
    assert!(wait_until(Duration::from_secs(10), || !alive(old)));
    // The group leader turns zombie while its other threads still hold the listening socket:
    // wait until the socket is really stale (nobody accepts), which is what this test is about.
    assert!(wait_until(Duration::from_secs(10), || {
        std::os::unix::net::UnixStream::connect(env.socket()).is_err()
    }));
    assert!(
        env.socket().exists(),
        "the killed daemon's socket should remain"
    );
    let mut c = env.proxy();
    c.initialize();
    // The new daemon binds before it rewrites the meta file the killed one left behind.
    assert!(
        wait_until(Duration::from_secs(10), || env
            .daemon_pid()
            .is_some_and(|p| p != old)),
        "no new daemon; proxy stderr: {}",
        c.stderr()
    );
    let status = index_status(&mut c, 1);
    let new = env.daemon_pid().unwrap();
    assert_ne!(new, old);
    assert!(
        status.contains(&format!("served by meshd pid {new}")),
        "{status}"
    );
    assert!(!c.stderr().contains("not using meshd"), "{}", c.stderr());
}

#[test]
fn of_two_racing_daemons_exactly_one_serves() {
    let env = Env::new("drace");
    let mut a = env.meshd();
    let mut b = env.meshd();
    let mut exited = None;
    assert!(wait_until(Duration::from_secs(20), || {
        for (name, child) in [("a", &mut a), ("b", &mut b)] {
            if let Ok(Some(s)) = child.try_wait() {
                exited = Some((name, s.code()));
                return true;
            }
        }
        false
    }));
    let (loser, code) = exited.unwrap();
    assert_eq!(code, Some(mesh_mcp::EXIT_ALREADY_RUNNING));
    let winner = if loser == "a" { &mut b } else { &mut a };
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        winner.try_wait().unwrap().is_none(),
        "the winner stopped too"
    );
    assert!(wait_until(Duration::from_secs(10), || env.daemon_pid()
        == Some(winner.id())));
    // A clean stop removes the socket and the meta file.
    signal(winner.id(), "TERM");
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(s) = winner.try_wait().unwrap() {
            break s.code();
        }
        assert!(Instant::now() < deadline, "meshd ignored SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status, Some(0));
    assert!(!env.socket().exists());
    assert!(env.meta().is_none());
}

fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn socket_files_are_private_whatever_the_umask() {
    let env = Env::new("dperm");
    let meshd = env!("CARGO_BIN_EXE_meshd");
    let mut child = env
        .command("/bin/sh")
        .args(["-c", &format!("umask 000; exec '{meshd}'")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(wait_until(Duration::from_secs(20), || env.meta().is_some()));
    assert_eq!(mode(&env.sock_dir), 0o700);
    assert_eq!(mode(&env.socket()), 0o600);
    assert_eq!(mode(&env.socket().with_extension("meta")), 0o600);
    assert_eq!(mode(&env.socket().with_extension("lock")), 0o600);
    assert_eq!(mode(&env.log_dir()), 0o700);
    let log = std::fs::read_dir(env.log_dir())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert_eq!(mode(&log), 0o600);
    assert!(
        wait_until(Duration::from_secs(20), || std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("serves")),
        "log: {}",
        log.display()
    );
    signal(child.id(), "TERM");
    let _ = child.wait();
}

#[test]
fn a_socket_dir_open_to_others_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new("dopen");
    std::fs::create_dir_all(&env.sock_dir).unwrap();
    std::fs::set_permissions(&env.sock_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    // meshd refuses to serve there.
    let out = env.meshd().wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("chmod 700"), "{stderr}");
    assert!(!env.socket().exists());
    // The proxy says so once and serves standalone.
    let mut c = env.proxy();
    c.initialize();
    let status = index_status(&mut c, 1);
    assert!(status.contains("Mode: standalone"), "{status}");
    let (_, code, stderr) = c.finish(Duration::from_secs(20));
    assert_eq!(code, Some(0));
    let warnings: Vec<_> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(warnings[0].contains("not using meshd"), "{stderr}");
    assert!(warnings[0].contains("mode is 0755"), "{stderr}");
    assert_eq!(
        mode(&env.sock_dir),
        0o755,
        "the user's directory was changed"
    );
}

#[test]
fn the_daemon_exits_when_idle_even_after_a_short_session() {
    // Grace is long; the idle timeout is short: a session that came and went must count.
    let env = Env::new("didle")
        .with("MESH_DAEMON_IDLE_SECS", "1")
        .with("MESH_DAEMON_GRACE_SECS", "600");
    let mut c = env.proxy();
    c.initialize();
    let pid = env.daemon_pid().unwrap();
    let (_, status, _) = c.finish(Duration::from_secs(20));
    assert_eq!(status, Some(0));
    assert!(
        wait_until(Duration::from_secs(30), || !alive(pid)),
        "meshd {pid} did not exit when idle"
    );
    assert!(!env.socket().exists());
    assert!(env.meta().is_none());
    let log = std::fs::read_dir(env.log_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect::<String>();
    assert!(log.contains("no client for 1 s: exiting"), "{log}");
}

#[test]
fn a_daemon_no_client_reaches_exits_after_the_grace() {
    let env = Env::new("dgrace").with("MESH_DAEMON_GRACE_SECS", "1");
    let mut d = env.meshd();
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = d.try_wait().unwrap() {
            break s.code();
        }
        assert!(Instant::now() < deadline, "no exit after the grace");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status, Some(0));
    assert!(!env.socket().exists());
}

#[test]
fn a_meshd_of_another_version_is_not_spawned() {
    let env = Env::new("dver");
    let marker = env.home.join("spawned");
    let fake = env.home.join("fake-meshd");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'meshd 0.0.0-other'; exit 0; fi\ntouch '{}'\nexit 1\n",
            marker.display()
        ),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let env = env.with("MESH_TEST_MESHD", &fake.display().to_string());
    let mut c = env.proxy();
    c.initialize();
    let status = index_status(&mut c, 1);
    assert!(status.contains("Mode: standalone"), "{status}");
    let (_, code, stderr) = c.finish(Duration::from_secs(20));
    assert_eq!(code, Some(0));
    assert!(stderr.contains("meshd 0.0.0-other"), "{stderr}");
    assert!(
        stderr.contains(&format!("expected `meshd {}`", env!("CARGO_PKG_VERSION"))),
        "{stderr}"
    );
    assert!(!marker.exists(), "the mismatched meshd was started");
    assert!(env.meta().is_none());
}

#[test]
fn a_tool_call_before_the_first_index_waits_with_progress() {
    let env = Env::new("dwait").with("MESH_TEST_INDEX_DELAY_MS", "1500");
    let mut c = env.proxy();
    c.initialize();
    c.request(
        1,
        "tools/call",
        json!({"name": "test_generation", "arguments": {}, "_meta": {"progressToken": "p1"}}),
    );
    c.request(2, "ping", json!({}));
    let (ping_at, _) = c.wait_for(2, Duration::from_secs(30));
    let (gen_at, resp) = c.wait_for(1, Duration::from_secs(30));
    assert!(ping_at < gen_at, "ping waited for the index");
    assert_eq!(tool_text(&resp), "generation 1");
    let progress: Vec<f64> = c
        .backlog
        .iter()
        .filter(|(_, v)| v["method"] == "notifications/progress")
        .map(|(_, v)| v["params"]["progress"].as_f64().unwrap())
        .collect();
    assert!(!progress.is_empty(), "no progress notifications");
    assert!(progress.windows(2).all(|w| w[0] < w[1]), "{progress:?}");
}

#[cfg(target_os = "linux")]
#[test]
fn meshd_runs_under_the_network_sandbox() {
    let env = Env::new("dsandbox").with("MESH_DAEMON_SANDBOX", "required");
    let mut c = env.proxy();
    c.initialize();
    let meta = env.meta().unwrap();
    let pid = env.daemon_pid().unwrap();
    assert_eq!(meta["sandboxed"], json!(true), "{meta}");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    assert!(
        status
            .lines()
            .any(|l| l.starts_with("Seccomp:") && l.ends_with('2')),
        "{status}"
    );
    assert!(index_status(&mut c, 1).contains("network sandbox on"));
}

#[test]
fn a_daemon_that_hangs_up_before_answering_is_replaced_by_standalone() {
    // This test plays a broken daemon: it accepts on the workspace's socket and closes every
    // connection after reading a little. The proxy must replay what it sent to an in-process
    // server, so the client never notices.
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new("dhangup");
    std::fs::create_dir_all(&env.sock_dir).unwrap();
    std::fs::set_permissions(&env.sock_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let listener = std::os::unix::net::UnixListener::bind(env.socket()).unwrap();
    let broken = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut buf = [0u8; 16];
        let _ = conn.read(&mut buf);
    });
    let mut c = env.proxy();
    let init = c.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "mesh-mcp", "{init}");
    broken.join().unwrap();
    let status = index_status(&mut c, 1);
    assert!(status.contains("Mode: standalone"), "{status}");
    let (_, code, stderr) = c.finish(Duration::from_secs(20));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("closed the connection before answering"),
        "{stderr}"
    );
    assert_eq!(
        stderr.lines().filter(|l| !l.trim().is_empty()).count(),
        1,
        "{stderr}"
    );
}

#[test]
fn sigterm_to_the_proxy_drains_the_answers_in_flight() {
    let env = Env::new("dterm");
    let mut c = env.proxy();
    c.initialize();
    c.request(
        1,
        "tools/call",
        json!({"name": "test_sleep", "arguments": {"ms": 700}}),
    );
    std::thread::sleep(Duration::from_millis(150));
    signal(c.child.id(), "TERM");
    let (_, resp) = c.wait_for(1, Duration::from_secs(30));
    assert_eq!(tool_text(&resp), "slept 700 ms");
    assert_eq!(
        c.wait_exit(Duration::from_secs(20)),
        Some(0),
        "{}",
        c.stderr()
    );
    // The daemon is unaffected.
    let pid = env.daemon_pid().unwrap();
    assert!(alive(pid));
}

#[test]
fn probe_reports_a_running_daemon_and_permission_problems() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new("dprobe");
    let base = std::fs::canonicalize(&env.workspace).unwrap();
    let before = mesh_mcp::probe_at(&base, &env.sock_dir);
    assert!(!before.reachable);
    assert_eq!(before.pid, None);
    assert!(before.problems.is_empty(), "{:?}", before.problems);
    let mut c = env.proxy();
    c.initialize();
    let p = mesh_mcp::probe_at(&base, &env.sock_dir);
    assert!(p.reachable, "{p:?}");
    assert_eq!(p.socket.as_deref(), Some(env.socket().as_path()));
    assert_eq!(p.pid, env.daemon_pid());
    assert_eq!(p.version.as_deref(), Some(env!("CARGO_PKG_VERSION")));
    assert!(p.uptime.is_some());
    assert!(p.log.starts_with(env.log_dir()), "{p:?}");
    assert!(p.problems.is_empty(), "{:?}", p.problems);
    std::fs::set_permissions(&env.sock_dir, std::fs::Permissions::from_mode(0o750)).unwrap();
    let p = mesh_mcp::probe_at(&base, &env.sock_dir);
    assert_eq!(p.problems.len(), 1, "{:?}", p.problems);
    assert!(p.problems[0].contains("chmod 700"), "{:?}", p.problems);
}
