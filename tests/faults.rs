//! Faults around a running server: stdout closed mid-burst, SIGTERM during a burst, a file
//! deleted or rewritten while tools read it, a git checkout racing the first index, and an
//! audit database that cannot be opened or whose disk fills up mid-session. Each test states
//! the behaviour it pins down; README's reliability section quotes them.

mod common;
#[path = "support/stress.rs"]
mod stress;

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::temp_dir;
use serde_json::{Value, json};

/// A server whose stdout lines arrive on a channel and whose stderr is collected.
struct Running {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    stderr: Arc<Mutex<String>>,
}

impl Running {
    fn spawn(mut cmd: Command) -> Running {
        let mut child = cmd.spawn().expect("spawn mesh-mcp");
        let stdout = child.stdout.take().unwrap();
        let stderr = collect_stderr(&mut child);
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not JSON on stdout: {line:?}: {e}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        Running {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
        }
    }

    fn send(&mut self, msg: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{msg}").expect("write to the server");
    }

    /// The answer to request `id`, skipping notifications and other answers.
    fn answer(&mut self, id: &Value) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let msg = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no answer to {id}; stderr: {}", self.stderr()));
            if msg.get("id") == Some(id) && msg.get("method").is_none() {
                return msg;
            }
        }
    }

    fn call(&mut self, id: i64, name: &str, arguments: Value) -> Value {
        self.send(&json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":name,"arguments":arguments}}));
        self.answer(&json!(id))
    }

    fn initialize(&mut self) {
        self.send(&json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"faults","version":"0"}}}));
        let r = self.answer(&json!("init"));
        assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "{r}");
        self.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Closes stdin and waits for the exit status.
    fn finish(mut self) -> (ExitStatus, String) {
        self.stdin.take();
        let status = wait_exit(&mut self.child, Duration::from_secs(30));
        // Let the stderr thread see EOF.
        std::thread::sleep(Duration::from_millis(50));
        (status, self.stderr())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn collect_stderr(child: &mut Child) -> Arc<Mutex<String>> {
    let mut stderr = child.stderr.take().unwrap();
    let text = Arc::new(Mutex::new(String::new()));
    let sink = text.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    text
}

fn wait_exit(child: &mut Child, within: Duration) -> ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "the server did not exit within {within:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn text_of(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("not a tool result: {answer}"))
}

fn tool_call_line(id: &Value, name: &str, arguments: Value) -> String {
    let mut line = json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":name,"arguments":arguments}})
    .to_string();
    line.push('\n');
    line
}

fn workspace_and_home(tag: &str) -> (PathBuf, PathBuf) {
    (
        stress::small_workspace(&temp_dir(tag)),
        temp_dir(&format!("{tag}-home")),
    )
}

/// Observed: when the client closes its end of stdout while it keeps sending, the server's
/// next write fails, it stops reading, and exits with status 0 without a panic. Before exiting
/// it still runs (and audits) every call it had accepted, although their answers can no
/// longer be delivered — with the unbounded acceptance of tool calls (see tests/load.rs) that
/// can take a while on a busy machine, hence the generous bound.
#[test]
fn stdout_closed_mid_burst_exits_quietly() {
    let (ws, home) = workspace_and_home("fault-stdout");
    let mut child = stress::raw_server(&ws, &home, &[("MESH_TEST_FIXTURES", "1")])
        .spawn()
        .unwrap();
    let stderr = collect_stderr(&mut child);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let writer = std::thread::spawn(move || {
        let mut sent = 0usize;
        for i in 0..4 {
            let line = tool_call_line(
                &json!(format!("slow-{i}")),
                "test_sleep",
                json!({"ms": 300}),
            );
            if stdin.write_all(line.as_bytes()).is_err() {
                return sent;
            }
            sent += 1;
        }
        // Keep sending until a write fails because the server is gone (bounded, in case it
        // never goes).
        for i in 0..500_000 {
            let line = if i % 2 == 0 {
                tool_call_line(&json!(i), "index_status", json!({}))
            } else {
                format!("{}\n", json!({"jsonrpc":"2.0","id":i,"method":"ping"}))
            };
            if stdin.write_all(line.as_bytes()).is_err() {
                break;
            }
            sent += 1;
        }
        sent
    });
    for _ in 0..50 {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "stdout ended early"
        );
    }
    drop(stdout);
    let status = wait_exit(&mut child, Duration::from_secs(120));
    let sent = writer.join().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let stderr = stderr.lock().unwrap().clone();
    eprintln!(
        "stdout closed after 50 answers; the client had sent {sent} requests when the server went away"
    );
    assert!(sent < 500_004, "the server never stopped reading");
    assert_eq!(status.code(), Some(0), "stderr: {stderr}");
    assert!(!stderr.contains("panic"), "{stderr}");
}

/// A client that closes stdout and then sends nothing more (stdin still open) should see the
/// server exit on its own: its output is gone for good.
#[test]
fn stdout_closed_with_stdin_idle_still_ends_the_process() {
    let (ws, home) = workspace_and_home("fault-stdout-idle");
    let mut child = stress::raw_server(&ws, &home, &[]).spawn().unwrap();
    let stderr = collect_stderr(&mut child);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    writeln!(stdin, "{}", json!({"jsonrpc":"2.0","id":1,"method":"ping"})).unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    drop(stdout);
    // One more answer the server cannot deliver, then silence with stdin open.
    writeln!(stdin, "{}", json!({"jsonrpc":"2.0","id":2,"method":"ping"})).unwrap();
    let status = wait_exit(&mut child, Duration::from_secs(30));
    drop(stdin);
    assert_eq!(status.code(), Some(0), "{}", stderr.lock().unwrap());
}

/// Observed: SIGTERM in the middle of a burst stops the reading; the calls already running
/// (four 1.5 s sleeps) and the answers already queued are all written, each id once, and the
/// process exits 0 while the client still holds stdin open.
#[test]
fn sigterm_during_a_burst_drains_what_was_accepted() {
    let (ws, home) = workspace_and_home("fault-sigterm");
    let mut server = Running::spawn(stress::raw_server(
        &ws,
        &home,
        &[("MESH_TEST_FIXTURES", "1")],
    ));
    server.initialize();
    let mut stdin = server.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let mut burst = String::new();
        for i in 0..4 {
            burst.push_str(&tool_call_line(
                &json!(format!("slow-{i}")),
                "test_sleep",
                json!({"ms": 1500}),
            ));
        }
        for i in 0..3000 {
            burst.push_str(&tool_call_line(&json!(i), "index_status", json!({})));
        }
        let _ = stdin.write_all(burst.as_bytes());
        // Keep stdin open: the signal, not EOF, must end the session.
        stdin
    });
    let mut seen: HashSet<String> = HashSet::new();
    while seen.len() < 200 {
        let msg = server
            .lines
            .recv_timeout(Duration::from_secs(30))
            .expect("answers before the signal");
        record_answer(&mut seen, &msg);
    }
    let before_signal = seen.len();
    stress::signal(server.child.id(), "TERM");
    while let Ok(msg) = server.lines.recv_timeout(Duration::from_secs(30)) {
        record_answer(&mut seen, &msg);
    }
    let status = wait_exit(&mut server.child, Duration::from_secs(10));
    drop(writer.join().unwrap());
    assert_eq!(status.code(), Some(0), "stderr: {}", server.stderr());
    for i in 0..4 {
        assert!(
            seen.contains(&json!(format!("slow-{i}")).to_string()),
            "the call slow-{i}, running when the signal came, was not answered"
        );
    }
    eprintln!(
        "SIGTERM after {before_signal} answers; {} more drained before exit",
        seen.len() - before_signal
    );
    assert!(!server.stderr().contains("panic"), "{}", server.stderr());
}

/// Counts one answer (ignoring notifications): a result, never seen before.
fn record_answer(seen: &mut HashSet<String>, msg: &Value) {
    if msg.get("method").is_some() {
        return;
    }
    assert!(msg.get("result").is_some(), "an error answer: {msg}");
    assert!(seen.insert(msg["id"].to_string()), "answered twice: {msg}");
}

/// Two versions of a contract with 150 messages each, at different lines.
fn contract_version(b: bool) -> String {
    let mut text = String::from("syntax = \"proto3\";\npackage churn.v1;\n\n");
    if b {
        text.push_str("// Version B moved everything down.\n\n\n");
    }
    for i in 0..150 {
        text.push_str(&format!(
            "// Message {i}.\nmessage Churn{i} {{\n  string id = 1;\n}}\n"
        ));
    }
    text
}

/// Observed: with a file truncated, rewritten in place, replaced, filled with NUL bytes or
/// deleted while `smart_search` reads it, every call still gets a normal tool result (never a
/// JSON-RPC error or a hang); each `path:line` it cites lies inside one of the file's versions,
/// and the session goes on.
#[test]
fn a_file_rewritten_or_deleted_while_searched_still_gets_sane_answers() {
    let (ws, home) = workspace_and_home("fault-churn");
    let file = ws.join("contracts/churn/v1/churn.proto");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, contract_version(false)).unwrap();
    let max_lines = contract_version(true).lines().count();
    let mut server = Running::spawn(stress::raw_server(&ws, &home, &[]));
    server.initialize();
    // The first index holds version A.
    let first = server.call(1, "smart_search", json!({"query": "Churn1", "limit": 5}));
    assert!(
        text_of(&first).contains("churn.proto:"),
        "{}",
        text_of(&first)
    );

    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let churn = {
        let stop = stop.clone();
        let file = file.clone();
        std::thread::spawn(move || {
            let mut rng = stress::Rng::new(7);
            let tmp = file.with_extension("proto.tmp");
            let mut steps = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let b = rng.chance(500);
                let _ = match rng.below(6) {
                    0 => std::fs::write(&file, ""),
                    1 => std::fs::write(&file, contract_version(b)),
                    2 => std::fs::remove_file(&file),
                    3 => std::fs::write(&file, vec![0u8; 9000]),
                    4 => std::fs::write(&tmp, contract_version(b))
                        .and_then(|_| std::fs::rename(&tmp, &file)),
                    _ => {
                        // A torn write: half of a version, the rest a moment later.
                        let text = contract_version(b);
                        let half = text.len() / 2;
                        std::fs::write(&file, &text[..half]).and_then(|_| {
                            std::thread::sleep(Duration::from_millis(1));
                            std::fs::OpenOptions::new()
                                .append(true)
                                .open(&file)?
                                .write_all(&text.as_bytes()[half..])
                        })
                    }
                };
                steps += 1;
                std::thread::sleep(Duration::from_micros(300));
            }
            steps
        })
    };
    let mut answers = 0;
    for id in 2..202 {
        let args = if id % 2 == 0 {
            json!({"query": "Churn", "limit": 100, "include_body": true})
        } else {
            json!({"query": format!("Churn{}", id % 150), "fuzzy": true})
        };
        let r = server.call(id, "smart_search", args);
        let text = text_of(&r);
        assert!(!text.is_empty());
        for cited in text.split("churn.proto:").skip(1) {
            let line: usize = cited
                .chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .unwrap_or(0);
            assert!(
                (1..=max_lines).contains(&line),
                "cites line {line} of a file that never had more than {max_lines}: {text}"
            );
        }
        answers += 1;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let steps = churn.join().unwrap();
    eprintln!("{answers} searches answered sanely during {steps} rewrites");
    server.send(&json!({"jsonrpc":"2.0","id":"after","method":"ping"}));
    assert_eq!(server.answer(&json!("after"))["result"], json!({}));
    let (status, stderr) = server.finish();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panic"), "{stderr}");
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

const GIT_FILES: usize = 1200;

/// Commit A: `contracts/p<i>.proto` declares `Alpha<i>` at line 3. Commit B: the same files
/// declare `Beta<i>` at line 6, every third one is deleted, and `contracts/q<i>.proto` declare
/// `Gamma<i>` at line 4.
fn two_commits(repo: &Path) {
    git(repo, &["init", "-q", "-b", "main"]);
    let dir = repo.join("contracts");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..GIT_FILES {
        std::fs::write(
            dir.join(format!("p{i}.proto")),
            format!("syntax = \"proto3\";\n\nmessage Alpha{i} {{ string id = 1; }}\n"),
        )
        .unwrap();
    }
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "A"]);
    git(repo, &["tag", "A"]);
    for i in 0..GIT_FILES {
        let p = dir.join(format!("p{i}.proto"));
        if i % 3 == 0 {
            std::fs::remove_file(p).unwrap();
        } else {
            std::fs::write(
                p,
                format!("syntax = \"proto3\";\n\n\n\n\nmessage Beta{i} {{ string id = 1; }}\n"),
            )
            .unwrap();
        }
        if i % 2 == 0 {
            std::fs::write(
                dir.join(format!("q{i}.proto")),
                format!("syntax = \"proto3\";\n\n\nmessage Gamma{i} {{ string id = 1; }}\n"),
            )
            .unwrap();
        }
    }
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "B"]);
    git(repo, &["tag", "B"]);
    git(repo, &["checkout", "-q", "A"]);
}

/// Every declaration `smart_search` reports for `query`, as (symbol, path, line), following
/// the "More results: repeat with `offset: N`" footers (a page may be empty when the stale
/// re-check dropped its hits).
fn all_declarations(server: &mut Running, query: &str) -> Vec<(String, String, usize)> {
    let mut found = Vec::new();
    let mut offset = 0;
    for page in 0.. {
        let r = server.call(
            10_000 + page,
            "smart_search",
            json!({"query": query, "limit": 100, "offset": offset}),
        );
        let text = text_of(&r).to_string();
        let mut lines = text.lines().peekable();
        while let Some(line) = lines.next() {
            let Some(rest) = line.strip_prefix("### [") else {
                continue;
            };
            let cited = rest.split('`').nth(1).expect("a cited path:line");
            let (path, line_no) = cited.rsplit_once(':').expect("path:line");
            let symbol = lines
                .peek()
                .and_then(|l| l.split('`').nth(1))
                .unwrap_or_default()
                .to_string();
            found.push((symbol, path.to_string(), line_no.parse().unwrap()));
        }
        let next = text
            .split("More results: repeat with `offset: ")
            .nth(1)
            .and_then(|rest| rest.split('`').next())
            .and_then(|n| n.parse::<usize>().ok());
        match next {
            Some(n) if n > offset => offset = n,
            _ => break,
        }
    }
    found
}

/// Observed: a `git checkout` that rewrites 800 files, deletes 400 and adds 600 while the
/// first index is being built leaves an index where every answer is one whole version of a
/// file — each cited declaration sits at the line it has in commit A or in commit B, and a file
/// never shows both. Hits whose file changed since it was read are dropped by `smart_search`'s
/// stale re-check ("N hit(s) on this page were skipped"), files deleted mid-crawl are listed
/// as unreadable, and files added mid-crawl are missing until live updates catch up (see the
/// next test). A server started after the checkout indexes exactly commit B.
#[test]
fn a_git_checkout_during_indexing_leaves_a_consistent_index() {
    let repo = temp_dir("fault-git");
    two_commits(&repo);
    let home = temp_dir("fault-git-home");
    let mut server = Running::spawn(stress::raw_server(&repo, &home, &[]));
    // Race the crawl: check out B at once.
    git(&repo, &["checkout", "-q", "B"]);
    server.initialize();
    let mut versions: HashMap<String, Vec<&str>> = HashMap::new();
    let found: Vec<_> = ["Alpha", "Beta", "Gamma"]
        .iter()
        .flat_map(|q| all_declarations(&mut server, q))
        .collect();
    for (symbol, path, line) in &found {
        let (kind, n) = symbol.split_at(symbol.find(|c: char| c.is_ascii_digit()).unwrap_or(0));
        let n: usize = n.parse().unwrap_or(usize::MAX);
        let (want_path, want_line) = match kind {
            "Alpha" => (format!("contracts/p{n}.proto"), 3),
            "Beta" => (format!("contracts/p{n}.proto"), 6),
            "Gamma" => (format!("contracts/q{n}.proto"), 4),
            _ => panic!("unexpected declaration {symbol} at {path}:{line}"),
        };
        assert_eq!(
            (path.as_str(), *line),
            (want_path.as_str(), want_line),
            "{symbol}"
        );
        if kind == "Beta" {
            assert!(!n.is_multiple_of(3), "Beta{n} never existed");
        }
        versions.entry(path.clone()).or_default().push(kind);
    }
    for (path, kinds) in &versions {
        assert_eq!(kinds.len(), 1, "{path} indexed as {kinds:?}");
    }
    eprintln!(
        "racing index: {} Alpha, {} Beta, {} Gamma",
        found.iter().filter(|f| f.0.starts_with("Alpha")).count(),
        found.iter().filter(|f| f.0.starts_with("Beta")).count(),
        found.iter().filter(|f| f.0.starts_with("Gamma")).count()
    );
    let (status, stderr) = server.finish();
    assert_eq!(status.code(), Some(0), "{stderr}");

    // After the checkout: exactly commit B.
    let mut server = Running::spawn(stress::raw_server(&repo, &home, &[]));
    server.initialize();
    assert!(all_declarations(&mut server, "Alpha").is_empty());
    let betas = all_declarations(&mut server, "Beta");
    let gammas = all_declarations(&mut server, "Gamma");
    assert_eq!(betas.len(), (0..GIT_FILES).filter(|i| i % 3 != 0).count());
    assert_eq!(gammas.len(), GIT_FILES.div_ceil(2));
}

/// With live updates, the index of a server that raced a checkout must converge to the new
/// commit without a restart: every `Beta` and `Gamma` found at its line, no `Alpha` left.
#[test]
fn a_git_checkout_during_indexing_converges_to_the_new_commit() {
    let repo = temp_dir("fault-git-live");
    two_commits(&repo);
    let home = temp_dir("fault-git-live-home");
    let mut server = Running::spawn(stress::raw_server(&repo, &home, &[]));
    git(&repo, &["checkout", "-q", "B"]);
    server.initialize();
    let want_betas = (0..GIT_FILES).filter(|i| i % 3 != 0).count();
    let want_gammas = GIT_FILES.div_ceil(2);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let alphas = all_declarations(&mut server, "Alpha").len();
        let betas = all_declarations(&mut server, "Beta").len();
        let gammas = all_declarations(&mut server, "Gamma").len();
        if (alphas, betas, gammas) == (0, want_betas, want_gammas) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "after 30 s the index still shows {alphas} Alpha, {betas} of {want_betas} Beta, \
             {gammas} of {want_gammas} Gamma"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Observed: an audit database that cannot be created (its parent is not a directory) is
/// logged on stderr ("audit trail unavailable", re-tried at most every 30 s) and every tool
/// still answers normally.
#[test]
fn an_audit_database_that_cannot_be_opened_does_not_stop_the_tools() {
    let (ws, home) = workspace_and_home("fault-audit-open");
    let mut server = Running::spawn(stress::raw_server(
        &ws,
        &home,
        &[("MESH_AUDIT_DB", "/dev/null/audit.db")],
    ));
    server.initialize();
    for id in 0..5 {
        let r = server.call(id, "index_status", json!({}));
        assert_eq!(r["result"]["isError"], false, "{r}");
        assert!(text_of(&r).contains("Index status"));
    }
    let (status, stderr) = server.finish();
    assert_eq!(status.code(), Some(0));
    assert!(
        stderr.contains("audit trail unavailable")
            && stderr.matches("audit trail unavailable").count() == 1,
        "the audit failure is not on stderr: {stderr}"
    );
}

/// Observed: with the audit database on a 192 KiB tmpfs that fills up after a few appends,
/// every tool call still answers normally, and each failed append is logged on stderr ("could
/// not record the call of …"). Needs root (or a user namespace) to mount the tmpfs in a private
/// mount namespace; elsewhere it says why it did not run.
#[test]
fn a_full_disk_under_the_audit_database_does_not_stop_the_tools() {
    let (ws, home) = workspace_and_home("fault-audit-full");
    let disk = temp_dir("fault-audit-tmpfs");
    let cmd = stress::raw_server(&ws, &home, &[]);
    let bin = cmd.get_program().to_owned();
    let script = "mount -t tmpfs -o size=192k tmpfs \"$1\" || { echo MOUNT-FAILED >&2; exit 97; }; \
                  shift; exec \"$@\" run --standalone";
    let mut wrapped = Command::new("unshare");
    wrapped
        .args([
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            script,
            "sh",
        ])
        .arg(&disk)
        .arg(&bin)
        .current_dir(&ws);
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => wrapped.env(k, v),
            None => wrapped.env_remove(k),
        };
    }
    let audit_db = disk.join("audit.db");
    wrapped
        .env("MESH_AUDIT_DB", &audit_db)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let probe = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg("mount -t tmpfs -o size=16k tmpfs \"$0\"")
        .arg(&disk)
        .stderr(std::process::Stdio::null())
        .status();
    match probe {
        Err(e) => {
            eprintln!("skipped: cannot run unshare(1) ({e}), so no private tmpfs can be mounted");
            return;
        }
        Ok(s) if !s.success() => {
            eprintln!("skipped: mounting a tmpfs in a private mount namespace needs root");
            return;
        }
        Ok(_) => {}
    }

    let mut server = Running::spawn(wrapped);
    server.initialize();
    // The database lives in the server's mount namespace; /proc/<pid>/root reaches it.
    let seen_db = PathBuf::from(format!("/proc/{}/root", server.child.id()))
        .join(audit_db.strip_prefix("/").unwrap());
    let mut grew = false;
    // Enough calls to fill the disk however the audit task batches them (one transaction per
    // batch: with few, large batches 60 calls once fitted in 192 KiB and the test flaked).
    for id in 0..240 {
        let r = server.call(
            id,
            "smart_search",
            json!({"query": format!("OrderService{}", "x".repeat((id as usize % 60) * 50))}),
        );
        assert_eq!(r["result"]["isError"], false, "{r}");
        grew |= std::fs::metadata(&seen_db).is_ok_and(|m| m.len() > 0);
    }
    let (status, stderr) = server.finish();
    assert!(!stderr.contains("MOUNT-FAILED"), "{stderr}");
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(grew, "the audit database was never written: {stderr}");
    eprintln!(
        "full disk: {} failed appends logged, e.g. {}",
        stderr.matches("could not record the call").count(),
        stderr
            .lines()
            .find(|l| l.contains("could not record"))
            .unwrap_or("")
    );
    assert!(
        stderr.contains("could not record the call"),
        "the full disk never showed on stderr: {stderr}"
    );
}
