//! Load on the stdio server: thousands of pipelined `tools/call`s with stdin closed right after
//! the last one (the drain barrier must deliver every answer before exit), and a client that
//! stops reading stdout for a while (a full pipe must not make the server buffer without
//! bound; when the client reads again, everything arrives).
//!
//! The workspace turns the audit trail off: these tests are about framing, queues and the
//! drain, and 10,000 SQLite appends would only slow them down (tests/fuzz.rs audits its calls).

mod common;
#[path = "support/stress.rs"]
mod stress;

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::ChildStdout;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::temp_dir;
use serde_json::{Value, json};

fn load_workspace(tag: &str) -> (PathBuf, PathBuf) {
    let ws = stress::small_workspace(&temp_dir(tag));
    std::fs::create_dir_all(ws.join(".agents")).unwrap();
    std::fs::write(
        ws.join(".agents/mesh-mcp.toml"),
        "[audit]\nenabled = false\n",
    )
    .unwrap();
    (ws, temp_dir(&format!("{tag}-home")))
}

fn call_line(id: usize) -> String {
    let mut line = json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":"index_status","arguments":{}}})
    .to_string();
    line.push('\n');
    line
}

/// A ping whose id carries 1 KiB of padding, so the answers outgrow every buffer quickly.
fn ping_line(id: usize) -> String {
    let mut line =
        json!({"jsonrpc":"2.0","id":format!("{id}:{}", "p".repeat(1024)),"method":"ping"})
            .to_string();
    line.push('\n');
    line
}

/// The number before the `:` of a padded ping id, or the integer id of a tool call.
fn id_number(id: &Value) -> u64 {
    id.as_u64()
        .or_else(|| id.as_str()?.split(':').next()?.parse().ok())
        .unwrap_or_else(|| panic!("not one of our ids: {id}"))
}

/// Reads answers until EOF, checking each is a `tools/call` result for a new id below `count`.
fn read_answers(stdout: ChildStdout, count: usize) -> HashSet<u64> {
    let mut seen = HashSet::with_capacity(count);
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("read stdout");
        let msg: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("bad frame {line:?}: {e}"));
        if msg.get("method").is_some() {
            continue;
        }
        let id = msg["id"]
            .as_u64()
            .unwrap_or_else(|| panic!("answer without our id: {msg}"));
        assert!((id as usize) < count, "unknown id {id}");
        assert!(
            msg["result"]["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.contains("Index status")),
            "not an index_status answer: {msg}"
        );
        assert!(seen.insert(id), "id {id} answered twice");
    }
    seen
}

#[test]
fn ten_thousand_pipelined_calls_all_answered_before_exit() {
    const CALLS: usize = 10_000;
    let (ws, home) = load_workspace("load-drain");
    let mut child = stress::raw_server(&ws, &home, &[]).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || read_answers(stdout, CALLS));
    let writer = std::thread::spawn(move || {
        let mut batch = String::new();
        for id in 0..CALLS {
            batch.push_str(&call_line(id));
            if batch.len() > 64 * 1024 {
                stdin.write_all(batch.as_bytes()).unwrap();
                batch.clear();
            }
        }
        stdin.write_all(batch.as_bytes()).unwrap();
        // stdin closes here, right after the last request.
    });
    writer.join().expect("writer");
    let seen = reader.join().expect("reader");
    let status = child.wait().unwrap();
    assert_eq!(
        seen.len(),
        CALLS,
        "{} answers missing after EOF",
        CALLS - seen.len()
    );
    assert_eq!(status.code(), Some(0));
}

/// Samples `VmRSS` of `pid` every 100 ms for `span`, returning the largest reading (KiB).
fn max_rss_over(pid: u32, span: Duration) -> u64 {
    let end = Instant::now() + span;
    let mut max = 0;
    while Instant::now() < end {
        max = max.max(stress::proc_status_kb(pid, "VmRSS").unwrap_or(0));
        std::thread::sleep(Duration::from_millis(100));
    }
    max
}

#[test]
fn a_client_that_stops_reading_pings_does_not_make_the_server_grow() {
    full_pipe_holds(ping_line);
}

#[test]
fn a_client_that_stops_reading_tool_calls_does_not_make_the_server_grow() {
    full_pipe_holds(call_line);
}

/// Sends many requests made by `line` while nobody reads stdout, measures RSS while the pipes
/// are full, then reads again and checks every answer arrives exactly once.
fn full_pipe_holds(line: fn(usize) -> String) {
    // Enough requests that their answers overflow every pipe, buffer and queue (≈ 20 MiB of
    // padded pings; ≈ 2 MiB of tool calls, which would each park a task if read unchecked).
    const CALLS: usize = 20_000;
    let (ws, home) = load_workspace("load-full-pipe");
    let mut child = stress::raw_server(&ws, &home, &[]).spawn().unwrap();
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    // The server answers a first request, so its start-up memory is in the baseline.
    stdin.write_all(line(0).as_bytes()).unwrap();
    let mut stdout = BufReader::new(stdout);
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    let first: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(id_number(&first["id"]), 0, "{first}");
    let baseline_kb = stress::proc_status_kb(pid, "VmRSS").unwrap();

    let written = Arc::new(AtomicUsize::new(1));
    let progress = written.clone();
    let writer = std::thread::spawn(move || {
        for id in 1..CALLS {
            if stdin.write_all(line(id).as_bytes()).is_err() {
                break;
            }
            progress.store(id + 1, Ordering::Relaxed);
        }
        // Dropping stdin: EOF once the server gets this far.
    });

    // Nobody reads stdout now. Wait until the writer stalls (the server stopped reading) or
    // has written everything (the server kept reading without bound), 60 s at most.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut last = 0;
    let mut still_since = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let now = written.load(Ordering::Relaxed);
        if now != last {
            last = now;
            still_since = Instant::now();
        }
        if now >= CALLS
            || still_since.elapsed() > Duration::from_millis(1500)
            || Instant::now() > deadline
        {
            break;
        }
    }
    let accepted_while_full = written.load(Ordering::Relaxed);
    let full_kb = max_rss_over(pid, Duration::from_secs(2));
    eprintln!(
        "full pipe: client wrote {accepted_while_full} of {CALLS} calls before blocking; RSS {baseline_kb} KiB → {full_kb} KiB"
    );

    // Resume reading: every answer must arrive, then EOF and exit 0.
    let mut seen = HashSet::from([0u64]);
    for line in stdout.lines() {
        let msg: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if msg.get("method").is_some() {
            continue;
        }
        let id = id_number(&msg["id"]);
        assert!(seen.insert(id), "id {id} answered twice");
    }
    writer.join().unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert_eq!(seen.len(), CALLS, "answers lost after the pipe drained");

    // What may fill up while nobody reads: the frame queues (64 in, 64 out), the 8 calls in
    // flight, the kernel pipes (not in RSS), and the buffers of the `blocking::Unblock` wrappers
    // around stdin and stdout (8 MiB each by default). Allow those two buffers plus 4 MiB of
    // allocator slack in the debug build.
    assert!(
        full_kb <= baseline_kb + 2 * 8 * 1024 + 4 * 1024,
        "RSS grew from {baseline_kb} KiB to {full_kb} KiB while the client did not read \
         ({accepted_while_full} calls accepted)"
    );
}
