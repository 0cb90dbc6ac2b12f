//! The audit trail end to end: the library writes, the real `mesh-mcp` binary verifies and
//! summarises. Tampering (edit, insert, delete in the middle) must be named by
//! `mesh-mcp audit verify`; several real processes appending at once must leave one valid chain.
//!
//! Child processes are this test binary re-executed with `--exact <child test>`; the child tests
//! do nothing unless their environment variable is set. Every child gets `MESH_AUDIT_DB` so no
//! test ever touches the real `~/.cache`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mesh_mcp::{AuditEntry, AuditLog, CallStatus, args_digest, new_session_id, verify};
use rusqlite::Connection;
use serde_json::json;
use sha2::{Digest, Sha256};

const MESH: &str = env!("CARGO_BIN_EXE_mesh-mcp");
/// Set in a child: append [`ROWS_PER_CHILD`] rows to this database, then return.
const CHILD_DB_ENV: &str = "MESH_AUDIT_CHILD_DB";
/// Set in a child: wait until this file exists before appending, so all children start together.
const CHILD_GO_ENV: &str = "MESH_AUDIT_CHILD_GO";
/// Set in a child: open this database (under the umask the parent chose) and check modes.
const PERM_CHILD_DB_ENV: &str = "MESH_AUDIT_PERM_CHILD_DB";
const CHILDREN: usize = 4;
const ROWS_PER_CHILD: u64 = 250;

/// A fresh directory under the temp dir, unique per test, process and call.
fn temp_dir(name: &str) -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let d = std::env::temp_dir().join(format!(
        "mesh-audit-it-{name}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create temp dir");
    d
}

fn entry(session: &str, tool: &str, status: CallStatus, files: &[&str], us: u64) -> AuditEntry {
    AuditEntry {
        session_id: session.to_string(),
        trace_id: Some(format!("{us:032x}")),
        tool: tool.to_string(),
        args_digest: args_digest(&json!({"query": tool, "n": us})),
        status,
        files_accessed: files.iter().map(|f| f.to_string()).collect(),
        redactions: 0,
        duration_us: us,
    }
}

/// Writes `n` simple rows to a new database and returns its path.
fn chain_of(dir: &Path, n: u64) -> PathBuf {
    let db = dir.join("audit.db");
    let log = AuditLog::open(&db).expect("open audit log");
    let session = new_session_id();
    for i in 0..n {
        let seq = log
            .record(&entry(
                &session,
                "smart_search",
                CallStatus::Success,
                &["a.rs"],
                i,
            ))
            .expect("record");
        assert_eq!(seq, i);
    }
    db
}

/// Runs the real binary with `args`, with `MESH_AUDIT_DB` pointing at `db`.
fn mesh(db: &Path, args: &[&str]) -> Output {
    mesh_in(Path::new("."), db, args)
}

/// [`mesh`] started in `cwd` (`stats` counts the calls of the current directory's workspace).
fn mesh_in(cwd: &Path, db: &Path, args: &[&str]) -> Output {
    Command::new(MESH)
        .current_dir(cwd)
        .args(args)
        .env("MESH_AUDIT_DB", db)
        .env_remove("MESH_LOG")
        .env_remove("RUST_LOG")
        .output()
        .expect("run mesh-mcp")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `audit verify` and asserts it fails with exit 1, naming `row` and `why`.
fn assert_broken(db: &Path, row: u64, why: &str) {
    let o = mesh(db, &["audit", "verify"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "verify should fail: {err}");
    assert!(
        err.contains(&format!("row {row}:")),
        "row {row} not named in: {err}"
    );
    assert!(err.contains(why), "reason {why:?} missing in: {err}");
    assert_eq!(err.lines().count(), 1, "one line expected: {err}");
}

/// The chain formula, re-derived here so a forger who knows it is modelled faithfully.
fn forge_hash(fields: &[&str]) -> String {
    let joined = fields.join("\x1f");
    Sha256::digest(joined.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn clean_chain_verifies() {
    let dir = temp_dir("clean");
    let db = chain_of(&dir, 12);
    assert_eq!(verify(&db).expect("library verify").rows, 12);
    let o = mesh(&db, &["audit", "verify"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).trim(),
        format!(
            "audit chain OK: 12 rows; head anchored at row 11, MACs checked ({})",
            db.display()
        )
    );
    assert!(o.stdout.is_empty(), "verify writes nothing to stdout");
    // --db overrides the environment.
    let o = mesh(
        Path::new("/nonexistent/x.db"),
        &["audit", "verify", "--db", db.to_str().expect("utf-8")],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn missing_database_is_a_clear_error() {
    let dir = temp_dir("missing");
    let db = dir.join("never-written.db");
    let o = mesh(&db, &["audit", "verify"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("no audit database at") && err.contains("never-written.db"),
        "{err}"
    );
    assert!(!db.exists(), "verify must not create the database");
    let o = mesh(&db, &["audit", "frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
    let o = mesh(&db, &["audit", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("mesh-mcp audit verify"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn edited_row_is_named() {
    let dir = temp_dir("edited");
    let db = chain_of(&dir, 10);
    let c = Connection::open(&db).expect("open for tampering");
    c.execute(
        "UPDATE audit_entries SET tool = 'analyze_impact' WHERE entry_seq = 4",
        [],
    )
    .expect("edit");
    drop(c);
    assert_broken(&db, 4, "hash mismatch");

    // Editing the status of another copy is caught the same way; so is a redaction count.
    let dir2 = temp_dir("edited2");
    let db2 = chain_of(&dir2, 10);
    let c = Connection::open(&db2).expect("open for tampering");
    c.execute(
        "UPDATE audit_entries SET redactions = 3 WHERE entry_seq = 7",
        [],
    )
    .expect("edit");
    drop(c);
    assert_broken(&db2, 7, "hash mismatch");
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::remove_dir_all(dir2);
}

#[test]
fn edited_row_with_a_recomputed_hash_is_named() {
    let dir = temp_dir("rehashed");
    let db = chain_of(&dir, 10);
    let c = Connection::open(&db).expect("open for tampering");
    let (prev, ts, session, trace, digest, files): (
        String,
        String,
        String,
        String,
        String,
        String,
    ) = c
        .query_row(
            "SELECT prev_hash, timestamp, session_id, trace_id, args_digest, files_accessed
             FROM audit_entries WHERE entry_seq = 3",
            [],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            },
        )
        .expect("row 3");
    let forged = forge_hash(&[
        &prev,
        &ts,
        &session,
        &trace,
        "search_docs",
        &digest,
        "SUCCESS",
        &files,
        "0",
    ]);
    c.execute(
        "UPDATE audit_entries SET tool = 'search_docs', entry_hash = ?1 WHERE entry_seq = 3",
        [&forged],
    )
    .expect("edit");
    drop(c);
    // Rows carry a versioned hash and a keyed MAC now: a forger who recomputes the old
    // formula is caught at the forged row itself (tests/attacks.rs recomputes the current one
    // and meets the MAC).
    assert_broken(&db, 3, "hash mismatch");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn inserted_row_is_named() {
    let dir = temp_dir("inserted");
    let db = chain_of(&dir, 10);
    let c = Connection::open(&db).expect("open for tampering");
    // Make room at seq 5 by shifting the tail up, then slip in a well-formed row whose hash
    // is computed correctly from row 4: the first broken link is the row after it.
    c.execute_batch(
        "UPDATE audit_entries SET entry_seq = entry_seq + 1000 WHERE entry_seq >= 5;
         UPDATE audit_entries SET entry_seq = entry_seq - 999 WHERE entry_seq >= 1000;",
    )
    .expect("shift");
    let prev: String = c
        .query_row(
            "SELECT entry_hash FROM audit_entries WHERE entry_seq = 4",
            [],
            |r| r.get(0),
        )
        .expect("row 4");
    let (ts, session, digest) = ("2030-01-01T00:00:00.000Z", "forged", "f".repeat(64));
    let hash = forge_hash(&[
        &prev,
        ts,
        session,
        "",
        "smart_search",
        &digest,
        "SUCCESS",
        "[]",
        "0",
    ]);
    c.execute(
        "INSERT INTO audit_entries (entry_seq, prev_hash, timestamp, session_id, trace_id, tool,
             args_digest, status, files_accessed, redactions, entry_hash)
         VALUES (5, ?1, ?2, ?3, NULL, 'smart_search', ?4, 'SUCCESS', '[]', 0, ?5)",
        rusqlite::params![prev, ts, session, digest, hash],
    )
    .expect("insert");
    drop(c);
    assert_eq!(
        Connection::open(&db)
            .and_then(
                |c| c.query_row("SELECT COUNT(*) FROM audit_entries", [], |r| r
                    .get::<_, i64>(0))
            )
            .expect("count"),
        11
    );
    // A row slipped in without a MAC is named itself.
    assert_broken(&db, 5, "has no MAC although earlier rows do");

    // A row appended at the end with a made-up link is caught at its own seq.
    let dir2 = temp_dir("appended");
    let db2 = chain_of(&dir2, 10);
    let c = Connection::open(&db2).expect("open for tampering");
    c.execute(
        "INSERT INTO audit_entries (entry_seq, prev_hash, timestamp, session_id, trace_id, tool,
             args_digest, status, files_accessed, redactions, entry_hash)
         SELECT 10, ?1, timestamp, session_id, trace_id, tool, args_digest, status,
                files_accessed, redactions, entry_hash FROM audit_entries WHERE entry_seq = 9",
        [&"0".repeat(64)],
    )
    .expect("insert");
    drop(c);
    assert_broken(&db2, 10, "prev_hash does not match row 9");
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::remove_dir_all(dir2);
}

#[test]
fn deleted_row_is_named() {
    let dir = temp_dir("deleted");
    let db = chain_of(&dir, 10);
    let c = Connection::open(&db).expect("open for tampering");
    c.execute("DELETE FROM audit_entries WHERE entry_seq = 5", [])
        .expect("delete");
    drop(c);
    assert_broken(&db, 6, "sequence gap");

    // Deleting and renumbering the tail to hide the gap breaks the link instead.
    let dir2 = temp_dir("deleted2");
    let db2 = chain_of(&dir2, 10);
    let c = Connection::open(&db2).expect("open for tampering");
    c.execute_batch(
        "DELETE FROM audit_entries WHERE entry_seq = 5;
         UPDATE audit_entries SET entry_seq = entry_seq + 1000 WHERE entry_seq > 5;
         UPDATE audit_entries SET entry_seq = entry_seq - 1001 WHERE entry_seq > 1000;",
    )
    .expect("delete and renumber");
    drop(c);
    assert_broken(&db2, 5, "prev_hash does not match row 4");

    // Deleting the first row is a gap at the new first row.
    let dir3 = temp_dir("deleted3");
    let db3 = chain_of(&dir3, 3);
    let c = Connection::open(&db3).expect("open for tampering");
    c.execute("DELETE FROM audit_entries WHERE entry_seq = 0", [])
        .expect("delete");
    drop(c);
    assert_broken(&db3, 1, "sequence gap: expected row 0");
    for d in [dir, dir2, dir3] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn stats_json_matches_what_was_written() {
    let dir = temp_dir("stats");
    let db = dir.join("audit.db");
    // The calls of the workspace at `dir`, as a server started there records them, and one
    // call of another workspace sharing the database.
    let workspace = std::fs::canonicalize(&dir).expect("canonical");
    let log = AuditLog::open(&db)
        .expect("open")
        .with_workspace(&workspace);
    let elsewhere = AuditLog::open(&db)
        .expect("open")
        .with_workspace(Path::new("/elsewhere"));
    elsewhere
        .record(&entry(
            &new_session_id(),
            "search_docs",
            CallStatus::Error,
            &[],
            1,
        ))
        .expect("record");
    drop(elsewhere);
    let (s1, s2) = (new_session_id(), new_session_id());
    for i in 1..=20u64 {
        let status = if i % 4 == 0 {
            CallStatus::Error
        } else {
            CallStatus::Success
        };
        log.record(&entry(
            &s1,
            "smart_search",
            status,
            &["svc/a.rs", "svc/b.rs"],
            i * 100,
        ))
        .expect("record");
    }
    for _ in 0..3 {
        log.record(&entry(
            &s2,
            "analyze_grpc",
            CallStatus::Refused,
            &["proto/x.proto"],
            50,
        ))
        .expect("record");
    }
    log.record(&entry(
        &s2,
        "find_dependents",
        CallStatus::Success,
        &[],
        9_000,
    ))
    .expect("record");
    drop(log);

    let o = mesh_in(&dir, &db, &["stats", "--since", "all", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(v["workspace"], workspace.display().to_string());
    assert_eq!(v["other_workspaces_calls"], 1);
    assert_eq!(v["calls"], 24);
    assert_eq!(v["errors"], 5 + 3);
    assert!((v["is_error_rate"].as_f64().expect("rate") - 8.0 / 24.0).abs() < 1e-9);
    assert_eq!(v["window"], "all");
    assert_eq!(v["session_count"], 2);
    assert_eq!(v["db"], db.display().to_string());
    let tools = v["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 3);
    assert_eq!(tools[0]["tool"], "smart_search");
    assert_eq!(tools[0]["calls"], 20);
    assert_eq!(tools[0]["errors"], 5);
    assert_eq!(tools[0]["timed"], 20);
    assert_eq!(tools[0]["p50_us"], 1000);
    assert_eq!(tools[0]["p95_us"], 1900);
    assert_eq!(tools[1]["tool"], "analyze_grpc");
    assert_eq!(tools[1]["errors"], 3);
    assert_eq!(tools[1]["p50_us"], 50);
    assert!(tools[1]["p95_us"].is_null(), "p95 needs 20 timed calls");
    assert_eq!(tools[2]["tool"], "find_dependents");
    assert_eq!(tools[2]["p50_us"], 9000);
    let files = v["top_files"].as_array().expect("files");
    assert_eq!(files.len(), 3);
    assert_eq!(files[0]["count"], 20);
    assert_eq!(files[0]["path"], "svc/a.rs");
    assert_eq!(files[2]["path"], "proto/x.proto");
    assert_eq!(files[2]["count"], 3);
    let sessions = v["sessions"].as_array().expect("sessions");
    assert_eq!(sessions[0]["session_id"], s1.as_str());
    assert_eq!(sessions[0]["calls"], 20);
    assert_eq!(sessions[1]["calls"], 4);

    // Every workspace on request; an explicit one from anywhere.
    let o = mesh(
        &db,
        &["stats", "--since", "all", "--json", "--all-workspaces"],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(
        (v["calls"].as_u64(), v["errors"].as_u64()),
        (Some(25), Some(9))
    );
    assert!(v["workspace"].is_null());
    let dir_arg = format!("--workspace={}", dir.display());
    let o = mesh(&db, &["stats", "--json", &dir_arg]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(v["calls"], 24);

    // The default window (7d) covers rows written just now; the human summary goes to stderr.
    let o = mesh_in(&dir, &db, &["stats"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stdout.is_empty(), "human output belongs on stderr");
    let err = stderr(&o);
    let workspace_line = format!("workspace: {}", workspace.display());
    for needle in [
        db.to_str().expect("utf-8"),
        workspace_line.as_str(),
        "1 more call(s) in this window were answered for other workspaces",
        "last 7d",
        "calls: 24",
        "isError rate: 8/24 (33.3%)",
        "smart_search",
        "1.0 ms",
        "1.9 ms",
        "sessions: 2",
        "svc/a.rs",
        "nothing leaves this machine",
    ] {
        assert!(err.contains(needle), "missing {needle:?} in:\n{err}");
    }

    // Bad windows are usage errors, never panics.
    for bad in ["7w", "7д", "🙂", "", "-1d"] {
        let o = mesh(&db, &["stats", "--since", bad]);
        assert_eq!(o.status.code(), Some(2), "--since {bad:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("is not a window"), "{}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"));
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn empty_window_is_one_info_line() {
    let dir = temp_dir("empty");
    let db = dir.join("audit.db");
    drop(AuditLog::open(&db).expect("open"));
    let o = mesh(&db, &["stats", "--since", "24h", "--all-workspaces"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("no audited tool calls in the last 24h"),
        "{err}"
    );
    let o = mesh_in(&dir, &db, &["stats", "--since", "24h"]);
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("no audited tool calls for ") && err.contains(" in the last 24h"),
        "{err}"
    );
    let o = mesh(&db, &["stats", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["calls"], 0);
    assert_eq!(v["tools"], json!([]));
    let _ = std::fs::remove_dir_all(dir);
}

/// Child side of [`permissions_ignore_the_umask`]: opens the database given by the parent
/// (under `umask 000`) and checks the WAL side files while the connection is open.
#[test]
fn child_open_for_permissions() {
    let Some(db) = std::env::var_os(PERM_CHILD_DB_ENV) else {
        return;
    };
    let db = PathBuf::from(db);
    let log = AuditLog::open(&db).expect("open under umask 000");
    log.record(&entry("perm", "smart_search", CallStatus::Success, &[], 1))
        .expect("record");
    for suffix in ["-wal", "-shm"] {
        let side = PathBuf::from(format!("{}{suffix}", db.display()));
        if let Ok(m) = std::fs::metadata(&side) {
            assert_eq!(m.permissions().mode() & 0o777, 0o600, "{}", side.display());
        }
    }
}

#[test]
fn permissions_ignore_the_umask() {
    let dir = temp_dir("perms");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let db = dir.join("cache").join("mesh-mcp").join("audit.db");
    let exe = std::env::current_exe().expect("test binary");
    let out = Command::new("sh")
        .arg("-c")
        .arg("umask 000 && exec \"$0\" \"$@\"")
        .arg(&exe)
        .args(["--exact", "child_open_for_permissions", "--nocapture"])
        .env(PERM_CHILD_DB_ENV, &db)
        .env("MESH_AUDIT_DB", &db)
        .output()
        .expect("spawn child");
    assert!(
        out.status.success(),
        "child failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode(&dir.join("cache")), 0o700);
    assert_eq!(mode(&dir.join("cache").join("mesh-mcp")), 0o700);
    assert_eq!(mode(&db), 0o600);
    assert_eq!(mode(&dir), 0o755, "existing directories are left alone");
    assert_eq!(verify(&db).expect("verify").rows, 1);
    let _ = std::fs::remove_dir_all(dir);
}

/// Child side of [`four_processes_keep_one_chain`]: appends [`ROWS_PER_CHILD`] rows.
#[test]
fn child_append_rows() {
    let Some(db) = std::env::var_os(CHILD_DB_ENV) else {
        return;
    };
    if let Some(go) = std::env::var_os(CHILD_GO_ENV) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !Path::new(&go).exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    let log = AuditLog::open(Path::new(&db)).expect("child open");
    let session = new_session_id();
    for i in 0..ROWS_PER_CHILD {
        log.record(&entry(
            &session,
            "smart_search",
            CallStatus::Success,
            &["x.rs"],
            i,
        ))
        .expect("child record");
    }
}

#[test]
fn four_processes_keep_one_chain() {
    let dir = temp_dir("concurrent");
    // The file does not exist yet: the children also race to create the schema.
    let db = dir.join("audit.db");
    let go = dir.join("go");
    let exe = std::env::current_exe().expect("test binary");
    let children: Vec<_> = (0..CHILDREN)
        .map(|_| {
            Command::new(&exe)
                .args(["--exact", "child_append_rows", "--nocapture"])
                .env(CHILD_DB_ENV, &db)
                .env(CHILD_GO_ENV, &go)
                .env("MESH_AUDIT_DB", &db)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn child")
        })
        .collect();
    std::fs::write(&go, b"go").expect("start signal");
    for child in children {
        let out = child.wait_with_output().expect("wait child");
        assert!(
            out.status.success(),
            "child failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let total = CHILDREN as u64 * ROWS_PER_CHILD;
    assert_eq!(verify(&db).expect("one valid chain").rows, total);
    let o = mesh(&db, &["audit", "verify"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("audit chain OK: {total} rows")));

    let o = mesh(
        &db,
        &["stats", "--since", "all", "--json", "--all-workspaces"],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["calls"], total);
    assert_eq!(v["session_count"], CHILDREN);
    for s in v["sessions"].as_array().expect("sessions") {
        assert_eq!(s["calls"], ROWS_PER_CHILD);
    }
    let c = Connection::open(&db).expect("open");
    let metrics: i64 = c
        .query_row("SELECT COUNT(*) FROM tool_call_metrics", [], |r| r.get(0))
        .expect("count");
    assert_eq!(metrics, i64::try_from(total).expect("fits"));
    let _ = std::fs::remove_dir_all(dir);
}

/// Ad-hoc throughput probe, not a budget: `cargo test --test audit -- --ignored --nocapture`.
#[test]
#[ignore = "measurement, run by hand"]
fn record_throughput() {
    let dir = temp_dir("throughput");
    let log = AuditLog::open(&dir.join("audit.db")).expect("open");
    let session = new_session_id();
    let n = 5_000u64;
    let start = Instant::now();
    for i in 0..n {
        log.record(&entry(
            &session,
            "smart_search",
            CallStatus::Success,
            &["a.rs", "b.rs"],
            i,
        ))
        .expect("record");
    }
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "record: {n} rows in {secs:.3} s = {:.0} rows/s ({:.1} µs/row)",
        n as f64 / secs,
        secs * 1e6 / n as f64
    );
    let _ = std::fs::remove_dir_all(dir);
}
