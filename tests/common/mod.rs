//! Helpers that drive the real `mesh-mcp` binary over pipes.
#![allow(dead_code)]

pub mod schema;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A fresh, empty temporary directory, unique per call.
pub fn temp_dir(tag: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "mesh-test-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A workspace of the given files (path, content) in a fresh temp directory.
pub fn workspace(tag: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::fs::canonicalize(temp_dir(tag)).unwrap();
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// A running `mesh-mcp run --standalone` with piped stdio.
pub struct Server {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    pub home: PathBuf,
}

impl Server {
    /// Starts the server in `workspace` with the test fixtures enabled and a private HOME.
    pub fn start(workspace: &Path) -> Server {
        Server::start_with(workspace, &[])
    }

    /// Like [`Server::start`] with extra environment variables.
    pub fn start_with(workspace: &Path, env: &[(&str, &str)]) -> Server {
        let home = temp_dir("home");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mesh-mcp"));
        cmd.args(["run", "--standalone"])
            .current_dir(workspace)
            .env("HOME", &home)
            .env("MESH_AUDIT_DB", home.join("audit.db"))
            .env("MESH_SOCKET_PATH", home.join("meshd.sock"))
            .env("MESH_TEST_FIXTURES", "1")
            .env_remove("MESH_LOG")
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn mesh-mcp");
        let stdout = child.stdout.take().unwrap();
        let stdin = child.stdin.take();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = String::new();
                match reader.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        Server {
            child,
            stdin,
            lines: rx,
            home,
        }
    }

    /// Writes raw bytes to stdin.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Writes one JSON message plus a newline.
    pub fn send(&mut self, msg: &Value) {
        let mut line = msg.to_string();
        line.push('\n');
        self.send_raw(line.as_bytes());
    }

    /// Sends a request and returns its response (skipping notifications), within 20 s.
    pub fn call(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        self.response_for(&serde_json::json!(id), Duration::from_secs(20))
            .unwrap_or_else(|| panic!("no response to {method} (id {id})"))
    }

    /// The next line of stdout parsed as JSON, or `None` after `timeout`.
    pub fn next(&mut self, timeout: Duration) -> Option<Value> {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => Some(
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("bad frame {line:?}: {e}")),
            ),
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Waits for the response with this id, dropping notifications on the way.
    pub fn response_for(&mut self, id: &Value, timeout: Duration) -> Option<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let msg = self.next(left)?;
            if msg.get("id") == Some(id) && msg.get("method").is_none() {
                return Some(msg);
            }
        }
    }

    /// Closes stdin (EOF for the server).
    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// Every remaining stdout line until the server exits (after closing stdin), with the exit status.
    pub fn finish(mut self, timeout: Duration) -> (Vec<Value>, Option<i32>) {
        self.close_stdin();
        let deadline = Instant::now() + timeout;
        let mut out = Vec::new();
        while let Some(v) = self.next(deadline.saturating_duration_since(Instant::now())) {
            out.push(v);
        }
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s.code();
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                break None;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        (out, status)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The text of a `tools/call` result.
pub fn tool_text(resp: &Value) -> &str {
    resp["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("not a tool result: {resp}"))
}

// ---------------------------------------------------------------------------------------------
// Tool sessions on the example workspace (used by the tools_* acceptance tests)
// ---------------------------------------------------------------------------------------------

/// The example workspace shipped with the crate (read-only: copy it before changing files).
pub fn example_dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/polyglot-shop"
    ))
}

/// Copies a directory tree; symlinks are recreated as symlinks (never followed).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        let dest = to.join(entry.file_name());
        if kind.is_symlink() {
            let target = std::fs::read_link(entry.path()).unwrap();
            std::os::unix::fs::symlink(target, &dest).unwrap();
        } else if kind.is_dir() {
            copy_tree(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

/// A fresh copy of the example workspace in a temp directory, canonicalized; returns the
/// workspace path (`<tmp>/polyglot-shop`), so sibling paths of the workspace can be created.
pub fn example_copy(tag: &str) -> PathBuf {
    let parent = std::fs::canonicalize(temp_dir(tag)).unwrap();
    let ws = parent.join("polyglot-shop");
    copy_tree(&example_dir(), &ws);
    ws
}

/// One tool answer.
#[derive(Debug, Clone)]
pub struct Answer {
    pub text: String,
    pub is_error: bool,
}

/// An initialized MCP session with the real binary, with tool-call helpers.
pub struct Session {
    pub server: Server,
    pub workspace: PathBuf,
    next_id: i64,
}

impl Session {
    /// Starts `mesh-mcp run --standalone` in `workspace`, initializes, and waits for the
    /// first index generation.
    pub fn start(workspace: &Path) -> Session {
        Session::start_with(workspace, &[])
    }

    /// Like [`Session::start`] with extra environment variables for the server.
    pub fn start_with(workspace: &Path, env: &[(&str, &str)]) -> Session {
        let mut server = Server::start_with(workspace, env);
        let init = server.call(
            1,
            "initialize",
            serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "tools-test", "version": "0"}}),
        );
        assert!(init.get("result").is_some(), "initialize failed: {init}");
        server.send(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let mut s = Session {
            server,
            workspace: workspace.to_path_buf(),
            next_id: 10,
        };
        s.wait_for(
            "the first index generation",
            "index_status",
            serde_json::json!({}),
            |t| t.contains("- Generation "),
        );
        s
    }

    /// Calls a tool and returns its text and `isError`.
    pub fn tool(&mut self, name: &str, args: Value) -> Answer {
        self.next_id += 1;
        let resp = self.server.call(
            self.next_id,
            "tools/call",
            serde_json::json!({"name": name, "arguments": args}),
        );
        assert!(
            resp.get("error").is_none(),
            "{name} answered with a protocol error: {resp}"
        );
        Answer {
            text: tool_text(&resp).to_string(),
            is_error: resp["result"]["isError"] == Value::Bool(true),
        }
    }

    /// Calls a tool that must succeed; returns its text.
    pub fn ok(&mut self, name: &str, args: Value) -> String {
        let a = self.tool(name, args.clone());
        assert!(!a.is_error, "{name} {args} failed:\n{}", a.text);
        a.text
    }

    /// Calls a tool that must fail with `isError`; returns its text.
    pub fn err(&mut self, name: &str, args: Value) -> String {
        let a = self.tool(name, args.clone());
        assert!(
            a.is_error,
            "{name} {args} should be an isError result:\n{}",
            a.text
        );
        a.text
    }

    /// Polls a tool until its answer satisfies `pred` (60 s deadline: a stuck server, not a
    /// slow machine); returns that answer.
    pub fn wait_for(
        &mut self,
        what: &str,
        name: &str,
        args: Value,
        pred: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let a = self.tool(name, args.clone());
            if pred(&a.text) {
                return a.text;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; last {name} answer:\n{}",
                a.text
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The index generation `index_status` reports.
    pub fn generation(&mut self) -> u64 {
        let status = self.ok("index_status", serde_json::json!({}));
        status
            .split("- Generation ")
            .nth(1)
            .and_then(|rest| rest.split(':').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no generation in {status}"))
    }
}

/// A session shared by the tests of one file (one server process per test binary). A test
/// that panicked while holding it does not poison it for the others.
pub fn shared_session(
    cell: &'static std::sync::OnceLock<std::sync::Mutex<Session>>,
    workspace: impl FnOnce() -> PathBuf,
) -> std::sync::MutexGuard<'static, Session> {
    cell.get_or_init(|| std::sync::Mutex::new(Session::start(&workspace())))
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}
