//! The append side of the trail: [`AuditLog`] opens (creating) the database, its schema and
//! the files beside it, and appends rows in `BEGIN IMMEDIATE` transactions that move the
//! anchor before they commit.

use super::anchor::{
    Anchor, AnchorFile, Key, anchor_path, beside, load_or_create_key, open_private,
};
use super::chain::{ChainFields, clean_field, row_mac};
use super::{
    AuditEntry, AuditError, BUSY_TIMEOUT, DB_PATH_ENV, GENESIS_HASH, SCHEMA, iso8601_utc_ms,
    unix_ms,
};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use std::fmt;
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// The append side of the audit trail: one connection per process behind a mutex.
pub struct AuditLog {
    inner: Mutex<Inner>,
    path: PathBuf,
    key: Key,
    /// The workspace directory every appended row is recorded for (outside the chain).
    workspace: Option<String>,
}

/// The connection and the identity (device, inode) of the file it has open, to notice a
/// database deleted or replaced under it.
struct Inner {
    conn: Connection,
    file: Option<(u64, u64)>,
    anchor: AnchorFile,
}

impl fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuditLog")
            .field("path", &self.path)
            .finish()
    }
}

/// (device, inode) of the file at `path`, when it exists.
pub(super) fn file_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

impl AuditLog {
    /// `$MESH_AUDIT_DB` when set and non-empty, else `~/.cache/mesh-mcp/audit.db` (falling back
    /// to the temp dir when there is no home directory).
    pub fn default_path() -> PathBuf {
        if let Some(p) = std::env::var_os(DB_PATH_ENV).filter(|p| !p.is_empty()) {
            return PathBuf::from(p);
        }
        let base = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(std::env::temp_dir);
        base.join(".cache").join("mesh-mcp").join("audit.db")
    }

    /// Opens (creating if needed) the database at `path`: missing parent directories are made
    /// `0700`, the file, its key and its anchor `0600` whatever the umask; WAL, 5 s busy
    /// timeout, `synchronous=NORMAL`. The schema is created (or given its `entry_mac` column)
    /// inside `BEGIN IMMEDIATE` so two processes opening a new file at once do not collide.
    pub fn open(path: &Path) -> Result<AuditLog, AuditError> {
        let conn = open_conn(path)?;
        let key = load_or_create_key(path)?;
        let anchor = AnchorFile::open(path).map_err(|source| AuditError::File {
            path: anchor_path(path),
            source,
        })?;
        tracing::debug!(target: "mesh::audit", path = %path.display(), "audit log open");
        Ok(AuditLog {
            inner: Mutex::new(Inner {
                conn,
                file: file_id(path),
                anchor,
            }),
            path: path.to_path_buf(),
            key,
            workspace: None,
        })
    }

    /// Records every row appended from now on as answered for the workspace at `dir` (in
    /// `tool_call_workspace`, outside the chain), so `mesh-mcp stats` can show one workspace.
    pub fn with_workspace(mut self, dir: &Path) -> AuditLog {
        self.workspace = Some(dir.display().to_string());
        self
    }

    /// The database file this log appends to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `entry` to the chain and its latency to the metrics table in one `BEGIN
    /// IMMEDIATE` transaction, and moves the anchor to the new row before committing; returns
    /// the new row's sequence number (0 for the first row).
    ///
    /// When the database ends before its anchor (rows deleted), the new row continues from the
    /// anchor, so the missing rows stay a visible gap. When the file was deleted or replaced
    /// since the last append, it is re-created first (and that is logged).
    pub fn record(&self, entry: &AuditEntry) -> Result<u64, AuditError> {
        self.record_batch(std::slice::from_ref(entry))
    }

    /// Appends `entries` in order in one `BEGIN IMMEDIATE` transaction, moving the anchor
    /// once, to the last of them, before committing (the audit task writes what queued up
    /// while it was busy as one batch: one commit and one anchor write for many calls);
    /// returns the last new row's sequence number. Either every entry is appended or none is.
    /// An empty batch writes nothing.
    pub fn record_batch(&self, entries: &[AuditEntry]) -> Result<u64, AuditError> {
        let sql_err = |action| self.sql_err(action);
        if entries.is_empty() {
            return Ok(0);
        }

        // A panic while holding the lock leaves no open transaction behind (the Transaction's
        // drop rolls back), so the connection is still usable.
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        self.reopen_if_replaced(&mut inner)?;
        // Borrow the fields apart: the transaction holds the connection, the anchor is used
        // alongside it.
        let inner: &mut Inner = &mut inner;
        let anchor_file = &inner.anchor;
        let tx = inner
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql_err("start a write transaction"))?;
        let tail: Option<(i64, String, bool)> = tx
            .prepare_cached(
                "SELECT entry_seq, entry_hash, entry_mac IS NOT NULL FROM audit_entries
                 ORDER BY entry_seq DESC LIMIT 1",
            )
            .and_then(|mut st| {
                st.query_row([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                    .optional()
            })
            .map_err(sql_err("read the chain tail"))?;
        let tail_keyed = tail.as_ref().is_some_and(|t| t.2);
        let anchor = match anchor_file.read(&self.key) {
            Ok(a) => a,
            Err(why) => {
                tracing::error!(target: "mesh::audit", "the audit anchor {} is not valid ({why}); `mesh-mcp audit verify` reports it, and this append starts a new anchor", anchor_path(&self.path).display());
                None
            }
        };
        let tail = tail.map(|(s, h, _)| (u64::try_from(s).unwrap_or(0), h));
        // Without an anchor, a trail whose tail row is keyed had one: it was deleted (or
        // damaged). The new anchor says from which row it covers, so that stays visible.
        let since_if_new = |seq: u64| {
            if anchor.is_none() && tail_keyed {
                tracing::error!(target: "mesh::audit", "the audit anchor {} is missing although the trail has keyed rows; anchoring again from row {seq}", anchor_path(&self.path).display());
            }
            seq
        };
        let (first_seq, mut prev_hash) = self.chain_start(&tail, &anchor);
        let mut seq = first_seq;
        for (k, entry) in entries.iter().enumerate() {
            seq = first_seq + k as u64;
            prev_hash = self.append_row(&tx, seq, &prev_hash, entry)?;
        }
        // The anchor moves while the write lock is held, before the commit: no other writer
        // can slip a row in between, and a failed anchor write rolls the rows back.
        let since = match &anchor {
            Some(a) => a.since,
            None => since_if_new(first_seq),
        };
        let new_anchor = Anchor {
            seq,
            hash: prev_hash,
            since,
        };
        anchor_file
            .write(&self.key, &new_anchor)
            .map_err(|source| AuditError::File {
                path: anchor_path(&self.path),
                source,
            })?;
        if let Err(e) = tx.commit() {
            // Put the anchor back where the committed chain ends.
            let restored = match &anchor {
                Some(a) => anchor_file.write(&self.key, a),
                None => anchor_file.file.set_len(0),
            };
            if let Err(r) = restored {
                tracing::error!(target: "mesh::audit", "could not put the audit anchor back after a failed commit: {r}");
            }
            return Err(sql_err("commit the new row")(e));
        }
        Ok(seq)
    }

    /// The `AuditError::Sqlite` for a failed `action` on this log's database.
    fn sql_err(&self, action: &'static str) -> impl Fn(rusqlite::Error) -> AuditError + '_ {
        AuditError::sqlite(&self.path, action)
    }

    /// Re-opens the database when the file was deleted or replaced since the last append, and
    /// the anchor file when it was (both logged).
    fn reopen_if_replaced(&self, inner: &mut Inner) -> Result<(), AuditError> {
        let now = file_id(&self.path);
        if now.is_none() || now != inner.file {
            tracing::warn!(
                target: "mesh::audit",
                "the audit database {} was {} while this process was writing to it; re-creating it (the chain goes on from its anchor, so `mesh-mcp audit verify` reports the rows that were lost)",
                self.path.display(),
                if now.is_none() { "deleted" } else { "replaced" }
            );
            inner.conn = open_conn(&self.path)?;
            inner.file = file_id(&self.path);
        }
        if file_id(&anchor_path(&self.path)) != inner.anchor.id {
            tracing::error!(
                target: "mesh::audit",
                "the audit anchor {} was deleted or replaced while this process was writing; making it again (`mesh-mcp audit verify` reports that it was re-made)",
                anchor_path(&self.path).display()
            );
            inner.anchor = AnchorFile::open(&self.path).map_err(|source| AuditError::File {
                path: anchor_path(&self.path),
                source,
            })?;
        }
        Ok(())
    }

    /// Where the next row goes: the sequence number and previous hash after the committed
    /// `tail`, or after the `anchor` when the chain ends before it (rows deleted or rewritten).
    fn chain_start(&self, tail: &Option<(u64, String)>, anchor: &Option<Anchor>) -> (u64, String) {
        match (tail, anchor) {
            (Some((s, h)), Some(a)) if a.seq < *s || (a.seq == *s && a.hash == *h) => {
                (s + 1, h.clone())
            }
            (tail, Some(a)) => {
                tracing::warn!(
                    target: "mesh::audit",
                    "the audit chain in {} ends at {} but its anchor vouches for row {}: rows were deleted or rewritten; appending row {} after the anchor",
                    self.path.display(),
                    tail.as_ref().map_or("no row".to_string(), |(s, _)| format!("row {s}")),
                    a.seq,
                    a.seq + 1
                );
                (a.seq + 1, a.hash.clone())
            }
            (Some((s, h)), None) => (s + 1, h.clone()),
            (None, None) => (0, GENESIS_HASH.to_string()),
        }
    }

    /// Appends `entry` as row `seq` after `prev_hash` inside `tx`, with its latency and (when
    /// the log has one) its workspace; returns the new row's hash.
    fn append_row(
        &self,
        tx: &rusqlite::Transaction<'_>,
        seq: u64,
        prev_hash: &str,
        entry: &AuditEntry,
    ) -> Result<String, AuditError> {
        let sql_err = |action| self.sql_err(action);
        let files_json =
            serde_json::to_string(&entry.files_accessed).map_err(AuditError::Encode)?;
        let session_id = clean_field(&entry.session_id);
        let trace_id = entry.trace_id.as_deref().map(clean_field);
        let tool = clean_field(&entry.tool);
        let args_digest = clean_field(&entry.args_digest);
        let timestamp = iso8601_utc_ms(unix_ms(SystemTime::now()));
        let redactions = i64::from(entry.redactions);
        let fields = ChainFields {
            prev_hash,
            timestamp: &timestamp,
            session_id: &session_id,
            trace_id: trace_id.as_deref(),
            tool: &tool,
            args_digest: &args_digest,
            status: entry.status.as_str(),
            files_json: &files_json,
            redactions,
        };
        let entry_hash = fields.hash_v2();
        let entry_mac = row_mac(&self.key, seq, &entry_hash);
        let seq_i = i64::try_from(seq).unwrap_or(i64::MAX);
        tx.prepare_cached(
            "INSERT INTO audit_entries (entry_seq, prev_hash, timestamp, session_id, trace_id, tool,
                 args_digest, status, files_accessed, redactions, entry_hash, entry_mac)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )
        .and_then(|mut st| {
            st.execute(params![
                seq_i,
                prev_hash,
                timestamp,
                session_id,
                trace_id,
                tool,
                args_digest,
                entry.status.as_str(),
                files_json,
                redactions,
                entry_hash,
                entry_mac
            ])
        })
        .map_err(sql_err("append a row"))?;
        let duration = i64::try_from(entry.duration_us).unwrap_or(i64::MAX);
        tx.prepare_cached(
            "INSERT OR REPLACE INTO tool_call_metrics (entry_seq, duration_us) VALUES (?1, ?2)",
        )
        .and_then(|mut st| st.execute(params![seq_i, duration]))
        .map_err(sql_err("record the call latency"))?;
        if let Some(workspace) = &self.workspace {
            tx.prepare_cached(
                "INSERT OR REPLACE INTO tool_call_workspace (entry_seq, workspace) VALUES (?1, ?2)",
            )
            .and_then(|mut st| st.execute(params![seq_i, workspace]))
            .map_err(sql_err("record the call's workspace"))?;
        }
        tracing::trace!(target: "mesh::audit", seq, tool = %tool, "audit row appended");
        Ok(entry_hash)
    }
}

/// Opens (creating if needed) the database file at `path` with its schema; see
/// [`AuditLog::open`]. Existing `-wal`/`-shm` files are made `0600` too: a read-only open by
/// another tool may have left them `0444`, which would make every append fail.
fn open_conn(path: &Path) -> Result<Connection, AuditError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_private_dirs(parent)?;
    }
    create_private_file(path)?;
    for side in ["-wal", "-shm"] {
        let side = beside(path, side);
        if let Ok(meta) = std::fs::metadata(&side)
            && meta.permissions().mode() & 0o777 != 0o600
        {
            let _ = std::fs::set_permissions(&side, std::fs::Permissions::from_mode(0o600));
        }
    }
    let sql_err = |action| AuditError::sqlite(path, action);
    let conn = Connection::open(path).map_err(sql_err("open the database"))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(sql_err("set the busy timeout"))?;
    // Before the WAL switch: on a new file the switch itself is a rollback-journal transaction,
    // which at the default `FULL` syncs the journal twice, the directory and the file.
    conn.execute_batch("PRAGMA synchronous = NORMAL")
        .map_err(sql_err("set synchronous=NORMAL"))?;
    let mode = set_wal(&conn).map_err(sql_err("switch to WAL journaling"))?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!(target: "mesh::audit", path = %path.display(), mode = %mode,
            "audit database is not in WAL mode; concurrent readers may wait");
    }
    conn.execute_batch(&format!("BEGIN IMMEDIATE;\n{SCHEMA}"))
        .map_err(|e| {
            let _ = conn.execute_batch("ROLLBACK");
            sql_err("create the schema")(e)
        })?;
    // Databases made before rows carried a MAC get the column (inside the same transaction,
    // so two processes upgrading one file do not collide).
    let has_mac = conn
        .prepare("SELECT entry_mac FROM audit_entries LIMIT 0")
        .is_ok();
    let upgraded = if has_mac {
        Ok(())
    } else {
        conn.execute_batch("ALTER TABLE audit_entries ADD COLUMN entry_mac TEXT")
    };
    upgraded
        .and_then(|()| conn.execute_batch("COMMIT"))
        .map_err(|e| {
            let _ = conn.execute_batch("ROLLBACK");
            sql_err("create the schema")(e)
        })?;
    Ok(conn)
}

/// `PRAGMA journal_mode=WAL`, retried briefly: the switch needs an exclusive lock and SQLite
/// may report busy without waiting when another process is switching the same new file.
fn set_wal(conn: &Connection) -> rusqlite::Result<String> {
    let mut attempt = 0;
    loop {
        // A plain statement, not `pragma_update_and_check`: its value quoting links rusqlite's
        // float formatting into the binary for this one call.
        match conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)) {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy && attempt < 100 =>
            {
                attempt += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

/// Creates the missing directories of `dir`, each `0700` regardless of the umask. Directories
/// that already exist are left alone (we do not tighten a directory the user chose).
pub(super) fn create_private_dirs(dir: &Path) -> Result<(), AuditError> {
    let mut missing = Vec::new();
    let mut cur = Some(dir);
    while let Some(d) = cur {
        if d.as_os_str().is_empty() || d.exists() {
            break;
        }
        missing.push(d);
        cur = d.parent();
    }
    for d in missing.into_iter().rev() {
        match std::fs::DirBuilder::new().mode(0o700).create(d) {
            Ok(()) => {
                std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).map_err(
                    |source| AuditError::CreateDir {
                        path: d.to_path_buf(),
                        source,
                    },
                )?;
            }
            // Another process won the race; it sets the mode itself.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(source) => {
                return Err(AuditError::CreateDir {
                    path: d.to_path_buf(),
                    source,
                });
            }
        }
    }
    Ok(())
}

/// Creates `path` if missing and makes it `0600` regardless of the umask, before SQLite opens
/// it; SQLite then gives its `-wal` and `-shm` files the same mode.
fn create_private_file(path: &Path) -> Result<(), AuditError> {
    open_private(path).map_err(|source| AuditError::File {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::tests::{entry, temp_dir};
    use crate::audit::verify::VerifyReport;
    use crate::audit::{BreakReason, CallStatus, verify};

    #[test]
    fn record_chains_rows_and_verify_accepts_them() {
        let dir = temp_dir("chain");
        let path = dir.join("nested").join("audit.db");
        let log = AuditLog::open(&path).expect("open");
        assert_eq!(
            log.record(&entry("smart_search", CallStatus::Success, &["a.rs"], 10))
                .expect("r0"),
            0
        );
        assert_eq!(
            log.record(&entry("smart_search", CallStatus::Error, &[], 20))
                .expect("r1"),
            1
        );
        let mut e = entry("analyze_impact", CallStatus::Refused, &[], 30);
        e.trace_id = Some("4bf92f3577b34da6a3ce929d0e0e4736".into());
        assert_eq!(log.record(&e).expect("r2"), 2);
        assert_eq!(verify(&path).expect("verify").rows, 3);

        let conn = Connection::open(&path).expect("reopen");
        let cell = |column: &str, seq: u32| -> String {
            conn.query_row(
                &format!("SELECT {column} FROM audit_entries WHERE entry_seq = {seq}"),
                [],
                |r| r.get(0),
            )
            .expect("row")
        };
        assert_eq!(cell("prev_hash", 0), GENESIS_HASH);
        assert_eq!(cell("prev_hash", 1), cell("entry_hash", 0));
        let ts = cell("timestamp", 2);
        assert_eq!(ts.len(), "2024-01-01T00:00:00.000Z".len());
        assert!(ts.ends_with('Z'));
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A log under a fresh directory named for `name` holding the one row `e`: (directory,
    /// database path).
    fn log_of_one(name: &str, e: &AuditEntry) -> (PathBuf, PathBuf) {
        let dir = temp_dir(name);
        let path = dir.join("audit.db");
        AuditLog::open(&path)
            .expect("open")
            .record(e)
            .expect("record");
        (dir, path)
    }

    /// Runs the tampering statement `sql` on the log at `path`, then verifies it.
    fn verify_tampered(path: &Path, sql: &str) -> Result<VerifyReport, AuditError> {
        Connection::open(path)
            .expect("reopen")
            .execute(sql, [])
            .expect("tamper");
        verify(path)
    }

    #[test]
    fn trace_id_is_covered_by_the_hash() {
        let mut e = entry("smart_search", CallStatus::Success, &[], 1);
        e.trace_id = Some("aaaa".into());
        let (dir, path) = log_of_one("trace", &e);
        match verify_tampered(&path, "UPDATE audit_entries SET trace_id = 'bbbb'") {
            Err(AuditError::BrokenChain {
                seq: 0,
                reason: BreakReason::HashMismatch,
            }) => {}
            other => panic!("expected a hash mismatch at row 0, got {other:?}"),
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn separators_in_fields_are_neutralised_and_detected() {
        let mut e = entry("smart_search", CallStatus::Success, &[], 1);
        e.session_id = "a\x1fb".into();
        let (dir, path) = log_of_one("sep", &e);
        assert_eq!(verify(&path).expect("still valid").rows, 1);
        let conn = Connection::open(&path).expect("reopen");
        let s: String = conn
            .query_row("SELECT session_id FROM audit_entries", [], |r| r.get(0))
            .expect("row");
        assert_eq!(s, "a\u{fffd}b");
        drop(conn);
        match verify_tampered(&path, "UPDATE audit_entries SET tool = 'x\x1fy'") {
            Err(AuditError::BrokenChain {
                seq: 0,
                reason: BreakReason::SeparatorInField { field: "tool" },
            }) => {}
            other => panic!("expected a separator report, got {other:?}"),
        }
        let _ = std::fs::remove_dir_all(dir);
    }
    #[test]
    fn default_path_ends_in_cache_dir() {
        // Only checks the fallback shape; the env override is exercised by the integration
        // tests in child processes, so this test never mutates the environment.
        let p = AuditLog::default_path();
        if std::env::var_os(DB_PATH_ENV).is_none_or(|v| v.is_empty()) {
            assert!(p.ends_with(".cache/mesh-mcp/audit.db"), "{}", p.display());
        }
    }
}
