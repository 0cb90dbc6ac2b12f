//! The hash-chained SQLite audit trail (SPEC §6).
//!
//! Every audited `tools/call` becomes one row of `audit_entries`. Each row stores the SHA-256 of
//! its own fields plus the hash of the row before it, so editing, inserting or deleting a row in
//! the middle breaks the chain and [`verify`] names the first broken row. Call latency lives in
//! `tool_call_metrics`, deliberately outside the chain, so it can be pruned or rebuilt without
//! touching the evidence. Arguments are never stored, only their digest ([`args_digest`]).
//!
//! Several processes (a `meshd` and a few standalone `mesh-mcp run`) may share one file: every
//! append runs in a `BEGIN IMMEDIATE` transaction and reads the committed tail from SQLite, never
//! from memory, so the chain stays single and gap-free.

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;
use sha2::{Digest, Sha256};

/// Environment variable that overrides the database location (tests, sandboxes, CI).
pub const DB_PATH_ENV: &str = "MESH_AUDIT_DB";

/// `prev_hash` of the first row: 64 zeros, i.e. "no row before this one".
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The separator placed between hashed fields so field boundaries are unambiguous.
const FIELD_SEP: char = '\x1f';

/// How long a writer waits for another process holding the write lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Minimum number of timed calls before a p95 is shown; below that it is mostly noise.
pub const P95_MIN_SAMPLES: usize = 20;

/// How many files [`read_stats`] lists as most returned.
pub const TOP_FILES: usize = 10;

const SCHEMA: &str = "\
CREATE TABLE IF NOT EXISTS audit_entries (
    entry_seq      INTEGER PRIMARY KEY,
    prev_hash      TEXT NOT NULL,
    timestamp      TEXT NOT NULL,
    session_id     TEXT NOT NULL,
    trace_id       TEXT,
    tool           TEXT NOT NULL,
    args_digest    TEXT NOT NULL,
    status         TEXT NOT NULL,
    files_accessed TEXT NOT NULL,
    redactions     INTEGER NOT NULL,
    entry_hash     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tool_call_metrics (
    entry_seq   INTEGER PRIMARY KEY,
    duration_us INTEGER NOT NULL
);";

/// Why a row breaks the chain; carried by [`AuditError::BrokenChain`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BreakReason {
    /// The row's recomputed hash differs from its stored `entry_hash`: its contents were edited.
    HashMismatch,
    /// The row's `prev_hash` is not the `entry_hash` of the row before it (`prev_seq`), or not
    /// the genesis hash for the first row: a row was inserted, removed or rewritten before it.
    PrevHashMismatch {
        /// The sequence number of the row the link should point at (`None` for the first row).
        prev_seq: Option<u64>,
    },
    /// The row's sequence number is not the next one: a row before it was deleted.
    SequenceGap {
        /// The sequence number the row should have had.
        expected: u64,
    },
    /// A free-text field contains the unit separator used between hashed fields, which would
    /// let an editor move a field boundary without changing the hash. `record` never writes one.
    SeparatorInField {
        /// The column holding the separator.
        field: &'static str,
    },
}

impl fmt::Display for BreakReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BreakReason::HashMismatch => {
                f.write_str("hash mismatch: the stored entry_hash does not match the row's contents (row edited)")
            }
            BreakReason::PrevHashMismatch { prev_seq: Some(p) } => write!(
                f,
                "prev_hash does not match row {p}'s entry_hash (a row was inserted, removed or rewritten before it)"
            ),
            BreakReason::PrevHashMismatch { prev_seq: None } => f.write_str(
                "prev_hash of the first row is not the genesis hash (rows were removed from the start)",
            ),
            BreakReason::SequenceGap { expected } => write!(
                f,
                "sequence gap: expected row {expected} here (row {expected} was deleted or renumbered)"
            ),
            BreakReason::SeparatorInField { field } => write!(
                f,
                "column `{field}` contains a unit separator (0x1f), which recorded rows never do (row edited)"
            ),
        }
    }
}

/// Everything that can go wrong while writing, verifying or reading the audit trail.
#[derive(Debug)]
pub enum AuditError {
    /// A directory on the way to the database could not be created.
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The database file could not be created or its permissions could not be set.
    File {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// There is no database at the given path.
    NotFound {
        /// The path that was looked at.
        path: PathBuf,
    },
    /// The file is a SQLite database but has no `audit_entries` table.
    NotAnAuditDb {
        /// The file.
        path: PathBuf,
    },
    /// SQLite refused an operation.
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// What we were doing, e.g. "append a row".
        action: &'static str,
        /// The underlying error.
        source: rusqlite::Error,
    },
    /// The list of accessed files could not be encoded as JSON.
    Encode(serde_json::Error),
    /// The hash chain is broken at row `seq`.
    BrokenChain {
        /// The first row that does not verify.
        seq: u64,
        /// Why it does not verify.
        reason: BreakReason,
    },
}

impl fmt::Display for AuditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuditError::CreateDir { path, source } => write!(
                f,
                "cannot create audit directory {}: {source} (set {DB_PATH_ENV} to a writable location)",
                path.display()
            ),
            AuditError::File { path, source } => write!(
                f,
                "cannot create or secure audit database {}: {source} (check ownership and permissions, or set {DB_PATH_ENV})",
                path.display()
            ),
            AuditError::NotFound { path } => write!(
                f,
                "no audit database at {} (it is created by the first audited tool call; pass --db PATH or set {DB_PATH_ENV} to read another)",
                path.display()
            ),
            AuditError::NotAnAuditDb { path } => write!(
                f,
                "{} is a SQLite database but has no audit_entries table; is this the right file?",
                path.display()
            ),
            AuditError::Sqlite {
                path,
                action,
                source,
            } => write!(
                f,
                "audit database {}: cannot {action}: {source}",
                path.display()
            ),
            AuditError::Encode(e) => {
                write!(f, "cannot encode the accessed-files list as JSON: {e}")
            }
            AuditError::BrokenChain { seq, reason } => {
                write!(f, "audit chain broken at row {seq}: {reason}")
            }
        }
    }
}

impl std::error::Error for AuditError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AuditError::CreateDir { source, .. } | AuditError::File { source, .. } => Some(source),
            AuditError::Sqlite { source, .. } => Some(source),
            AuditError::Encode(e) => Some(e),
            _ => None,
        }
    }
}

/// How an audited call ended. Stored as `SUCCESS`, `ERROR` or `REFUSED`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum CallStatus {
    /// The tool ran and returned a normal answer.
    Success,
    /// The tool ran (or its arguments were invalid) and the answer is an error.
    Error,
    /// The call was refused before running (stop rule, path jail).
    Refused,
}

impl CallStatus {
    /// The text stored in the `status` column.
    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Success => "SUCCESS",
            CallStatus::Error => "ERROR",
            CallStatus::Refused => "REFUSED",
        }
    }
}

impl fmt::Display for CallStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One audited tool call, as handed to [`AuditLog::record`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    /// The client session (see [`new_session_id`]).
    pub session_id: String,
    /// The W3C trace id from the request's `_meta`, if the client sent one. Covered by the hash.
    pub trace_id: Option<String>,
    /// The tool name.
    pub tool: String,
    /// [`args_digest`] of the call's arguments; the arguments themselves are never stored.
    pub args_digest: String,
    /// How the call ended.
    pub status: CallStatus,
    /// Workspace-relative paths the answer was built from.
    pub files_accessed: Vec<String>,
    /// How many secrets were masked in the answer.
    pub redactions: u32,
    /// Wall time of the call in microseconds; stored outside the chain.
    pub duration_us: u64,
}

/// Hex SHA-256 of the compact, key-sorted JSON serialisation of `args`, so the same arguments
/// always give the same digest while the arguments themselves never reach the disk.
pub fn args_digest(args: &serde_json::Value) -> String {
    let mut canonical = String::new();
    write_canonical(args, &mut canonical);
    sha256_hex(canonical.as_bytes())
}

/// Compact JSON with object keys sorted, independent of serde_json's `preserve_order` feature.
/// With the default (sorted) map this is byte-identical to `serde_json::to_string`.
fn write_canonical(v: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    match v {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            crate::order::sort(&mut keys);
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(&map[k], out);
            }
            out.push('}');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// A session id unique within and across processes: `<unix-ms>-p<pid>-c<counter>`.
pub fn new_session_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!(
        "{}-p{}-c{n}",
        unix_ms(SystemTime::now()),
        std::process::id()
    )
}

/// Milliseconds since the Unix epoch, 0 for times before it.
fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Formats Unix milliseconds as ISO-8601 UTC, `YYYY-MM-DDTHH:MM:SS.mmmZ`. The fixed width makes
/// these strings sort chronologically, which the `--since` filter relies on.
pub fn iso8601_utc_ms(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let ms = unix_ms % 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX / 2);
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// Proleptic Gregorian (year, month, day) for a count of days since 1970-01-01, using the
/// 400-year era decomposition (eras of 146 097 days, years starting on 1 March).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468; // shift the epoch to 0000-03-01
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // day of era, 0..=146096
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // year of era, 0..=399
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // day of (March-based) year, 0..=365
    let mp = (5 * doy + 2) / 153; // March-based month, 0..=11
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Lower-case hex SHA-256 of `bytes`.
fn sha256_hex(bytes: &[u8]) -> String {
    to_hex(&Sha256::digest(bytes))
}

/// Lower-case hex encoding, written by hand to avoid a dependency.
fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 0x0f)] as char);
    }
    s
}

/// The exact fields the chain covers, as stored.
struct ChainFields<'a> {
    prev_hash: &'a str,
    timestamp: &'a str,
    session_id: &'a str,
    trace_id: &'a str,
    tool: &'a str,
    args_digest: &'a str,
    status: &'a str,
    files_json: &'a str,
    redactions: i64,
}

impl ChainFields<'_> {
    /// Hex SHA-256 over the fields joined by the unit separator.
    fn hash(&self) -> String {
        let redactions = self.redactions.to_string();
        let parts = [
            self.prev_hash,
            self.timestamp,
            self.session_id,
            self.trace_id,
            self.tool,
            self.args_digest,
            self.status,
            self.files_json,
            &redactions,
        ];
        let mut h = Sha256::new();
        for (i, p) in parts.iter().enumerate() {
            if i > 0 {
                h.update([FIELD_SEP as u8]);
            }
            h.update(p.as_bytes());
        }
        to_hex(&h.finalize())
    }

    /// The first free-text column holding the separator, if any (fixed-format columns are
    /// checked too: a separator anywhere would make boundaries ambiguous).
    fn field_with_separator(&self) -> Option<&'static str> {
        [
            ("prev_hash", self.prev_hash),
            ("timestamp", self.timestamp),
            ("session_id", self.session_id),
            ("trace_id", self.trace_id),
            ("tool", self.tool),
            ("args_digest", self.args_digest),
            ("status", self.status),
            ("files_accessed", self.files_json),
        ]
        .into_iter()
        .find(|(_, v)| v.contains(FIELD_SEP))
        .map(|(name, _)| name)
    }
}

/// Replaces the unit separator (which would blur field boundaries in the hash) with U+FFFD, so
/// a hostile session or trace id is still audited rather than refused.
fn clean_field(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains(FIELD_SEP) {
        std::borrow::Cow::Owned(s.replace(FIELD_SEP, "\u{fffd}"))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// The append side of the audit trail: one connection per process behind a mutex.
pub struct AuditLog {
    conn: Mutex<Connection>,
    path: PathBuf,
}

impl fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuditLog")
            .field("path", &self.path)
            .finish()
    }
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
    /// `0700`, the file `0600` whatever the umask; WAL, 5 s busy timeout, `synchronous=NORMAL`.
    /// The schema is created inside `BEGIN IMMEDIATE` so two processes opening a new file at
    /// once do not collide.
    pub fn open(path: &Path) -> Result<AuditLog, AuditError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            create_private_dirs(parent)?;
        }
        create_private_file(path)?;

        let sql_err = |action| {
            move |source| AuditError::Sqlite {
                path: path.to_path_buf(),
                action,
                source,
            }
        };
        let conn = Connection::open(path).map_err(sql_err("open the database"))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(sql_err("set the busy timeout"))?;
        let mode = set_wal(&conn).map_err(sql_err("switch to WAL journaling"))?;
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(target: "mesh::audit", path = %path.display(), mode = %mode,
                "audit database is not in WAL mode; concurrent readers may wait");
        }
        conn.execute_batch("PRAGMA synchronous = NORMAL")
            .map_err(sql_err("set synchronous=NORMAL"))?;
        conn.execute_batch(&format!("BEGIN IMMEDIATE;\n{SCHEMA}\nCOMMIT;"))
            .map_err(|e| {
                let _ = conn.execute_batch("ROLLBACK");
                sql_err("create the schema")(e)
            })?;
        tracing::debug!(target: "mesh::audit", path = %path.display(), "audit log open");
        Ok(AuditLog {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
        })
    }

    /// The database file this log appends to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `entry` to the chain and its latency to the metrics table in one `BEGIN
    /// IMMEDIATE` transaction; returns the new row's sequence number (0 for the first row).
    pub fn record(&self, entry: &AuditEntry) -> Result<u64, AuditError> {
        self.record_batch(std::slice::from_ref(entry))
    }

    /// Appends `entries` in order, in one `BEGIN IMMEDIATE` transaction (the audit task
    /// writes what queued up while it was busy as one batch); returns the last new row's
    /// sequence number. Either every entry is appended or none is.
    pub fn record_batch(&self, entries: &[AuditEntry]) -> Result<u64, AuditError> {
        let sql_err = |action| {
            move |source| AuditError::Sqlite {
                path: self.path.clone(),
                action,
                source,
            }
        };
        // A panic while holding the lock leaves no open transaction behind (the Transaction's
        // drop rolls back), so the connection is still usable.
        let mut conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql_err("start a write transaction"))?;
        let mut seq = 0;
        for entry in entries {
            seq = self.append(&tx, entry)?;
        }
        tx.commit().map_err(sql_err("commit the new row"))?;
        Ok(seq)
    }

    /// Appends one entry inside the caller's write transaction; returns its sequence number.
    fn append(
        &self,
        tx: &rusqlite::Transaction<'_>,
        entry: &AuditEntry,
    ) -> Result<u64, AuditError> {
        let sql_err = |action| {
            move |source| AuditError::Sqlite {
                path: self.path.clone(),
                action,
                source,
            }
        };
        let files_json =
            serde_json::to_string(&entry.files_accessed).map_err(AuditError::Encode)?;
        let session_id = clean_field(&entry.session_id);
        let trace_id = entry.trace_id.as_deref().map(clean_field);
        let tool = clean_field(&entry.tool);
        let args_digest = clean_field(&entry.args_digest);
        let tail: Option<(i64, String)> = tx
            .prepare_cached(
                "SELECT entry_seq, entry_hash FROM audit_entries ORDER BY entry_seq DESC LIMIT 1",
            )
            .and_then(|mut st| st.query_row([], |r| Ok((r.get(0)?, r.get(1)?))).optional())
            .map_err(sql_err("read the chain tail"))?;
        let (seq, prev_hash) = match tail {
            Some((s, h)) => (s + 1, h),
            None => (0, GENESIS_HASH.to_string()),
        };
        let timestamp = iso8601_utc_ms(unix_ms(SystemTime::now()));
        let redactions = i64::from(entry.redactions);
        let fields = ChainFields {
            prev_hash: &prev_hash,
            timestamp: &timestamp,
            session_id: &session_id,
            trace_id: trace_id.as_deref().unwrap_or(""),
            tool: &tool,
            args_digest: &args_digest,
            status: entry.status.as_str(),
            files_json: &files_json,
            redactions,
        };
        let entry_hash = fields.hash();
        tx.prepare_cached(
            "INSERT INTO audit_entries (entry_seq, prev_hash, timestamp, session_id, trace_id, tool,
                 args_digest, status, files_accessed, redactions, entry_hash)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )
        .and_then(|mut st| {
            st.execute(params![
                seq,
                prev_hash,
                timestamp,
                session_id,
                trace_id,
                tool,
                args_digest,
                entry.status.as_str(),
                files_json,
                redactions,
                entry_hash
            ])
        })
        .map_err(sql_err("append a row"))?;
        let duration = i64::try_from(entry.duration_us).unwrap_or(i64::MAX);
        tx.prepare_cached(
            "INSERT OR REPLACE INTO tool_call_metrics (entry_seq, duration_us) VALUES (?1, ?2)",
        )
        .and_then(|mut st| st.execute(params![seq, duration]))
        .map_err(sql_err("record the call latency"))?;
        tracing::trace!(target: "mesh::audit", seq, tool = %tool, "audit row appended");
        Ok(u64::try_from(seq).unwrap_or(0))
    }
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
fn create_private_dirs(dir: &Path) -> Result<(), AuditError> {
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
    let file_err = |source| AuditError::File {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .map_err(file_err)?;
    let mode = file.metadata().map_err(file_err)?.permissions().mode() & 0o777;
    if mode != 0o600 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(file_err)?;
    }
    Ok(())
}

/// Opens an existing audit database read-only; a missing file or table is a clear error.
fn open_read_only(path: &Path) -> Result<Connection, AuditError> {
    if !path.is_file() {
        return Err(AuditError::NotFound {
            path: path.to_path_buf(),
        });
    }
    let sql_err = |action| {
        move |source| AuditError::Sqlite {
            path: path.to_path_buf(),
            action,
            source,
        }
    };
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql_err("open the database read-only"))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(sql_err("set the busy timeout"))?;
    if !has_table(&conn, "audit_entries").map_err(sql_err("read the schema"))? {
        return Err(AuditError::NotAnAuditDb {
            path: path.to_path_buf(),
        });
    }
    Ok(conn)
}

fn has_table(conn: &Connection, name: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [name],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
}

/// The outcome of a successful [`verify`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VerifyReport {
    /// How many rows the chain holds.
    pub rows: u64,
}

/// Replays the chain at `path` (opened read-only) in sequence order and checks every link:
/// sequence numbers without gaps from 0, each `prev_hash` equal to the previous row's hash, and
/// each stored hash equal to the recomputed one. Returns [`AuditError::BrokenChain`] naming the
/// first row that fails. Truncating the tail cannot be detected this way.
pub fn verify(path: &Path) -> Result<VerifyReport, AuditError> {
    let conn = open_read_only(path)?;
    let sql_err = |action| {
        move |source| AuditError::Sqlite {
            path: path.to_path_buf(),
            action,
            source,
        }
    };
    let mut st = conn
        .prepare(
            "SELECT entry_seq, prev_hash, timestamp, session_id, trace_id, tool, args_digest,
                    status, files_accessed, redactions, entry_hash
             FROM audit_entries ORDER BY entry_seq",
        )
        .map_err(sql_err("read the chain"))?;
    let mut rows = st.query([]).map_err(sql_err("read the chain"))?;
    let mut expected: u64 = 0;
    let mut prev_hash = GENESIS_HASH.to_string();
    while let Some(r) = rows.next().map_err(sql_err("read the chain"))? {
        let read = |r: &rusqlite::Row<'_>| -> rusqlite::Result<_> {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, String>(6)?,
                r.get::<_, String>(7)?,
                r.get::<_, String>(8)?,
                r.get::<_, i64>(9)?,
                r.get::<_, String>(10)?,
            ))
        };
        let (seq, prev, ts, session, trace, tool, digest, status, files, redactions, hash) =
            read(r).map_err(sql_err("read a chain row"))?;
        // A negative seq cannot come from `record`; report it as out of sequence at row 0.
        let seq_u = u64::try_from(seq).unwrap_or(0);
        let broken = |reason| AuditError::BrokenChain { seq: seq_u, reason };
        if seq < 0 || seq_u != expected {
            return Err(broken(BreakReason::SequenceGap { expected }));
        }
        if prev != prev_hash {
            return Err(broken(BreakReason::PrevHashMismatch {
                prev_seq: expected.checked_sub(1),
            }));
        }
        let fields = ChainFields {
            prev_hash: &prev,
            timestamp: &ts,
            session_id: &session,
            trace_id: trace.as_deref().unwrap_or(""),
            tool: &tool,
            args_digest: &digest,
            status: &status,
            files_json: &files,
            redactions,
        };
        if let Some(field) = fields.field_with_separator() {
            return Err(broken(BreakReason::SeparatorInField { field }));
        }
        if fields.hash() != hash {
            return Err(broken(BreakReason::HashMismatch));
        }
        prev_hash = hash;
        expected += 1;
    }
    tracing::debug!(target: "mesh::audit", rows = expected, path = %path.display(), "audit chain verified");
    Ok(VerifyReport { rows: expected })
}

/// Per-tool figures in a [`Stats`] summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolStats {
    /// The tool name.
    pub tool: String,
    /// Audited calls in the window.
    pub calls: u64,
    /// Calls whose status is not `SUCCESS` (the `isError` count).
    pub errors: u64,
    /// Calls with a latency row.
    pub timed: u64,
    /// Median latency in microseconds (nearest rank), when any call was timed.
    pub p50_us: Option<u64>,
    /// 95th percentile latency in microseconds (nearest rank), only from [`P95_MIN_SAMPLES`]
    /// timed calls.
    pub p95_us: Option<u64>,
}

/// One client session in a [`Stats`] summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionStats {
    /// The session id.
    pub session_id: String,
    /// Audited calls of this session in the window.
    pub calls: u64,
    /// Timestamp of its first call in the window.
    pub first: String,
    /// Timestamp of its last call in the window.
    pub last: String,
}

/// How often a file appeared in `files_accessed` within the window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileCount {
    /// The path as recorded.
    pub path: String,
    /// Number of audited answers that returned it.
    pub count: u64,
}

/// What `mesh-mcp stats` shows, computed from the rows inside a time window.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Audited calls in the window.
    pub calls: u64,
    /// Calls whose status is not `SUCCESS`.
    pub errors: u64,
    /// Whether the database has a latency table at all (older files may not); when false,
    /// latencies are "not recorded" rather than zero.
    pub latency_recorded: bool,
    /// Per-tool figures, most-called first.
    pub tools: Vec<ToolStats>,
    /// Sessions seen in the window, by first call.
    pub sessions: Vec<SessionStats>,
    /// The [`TOP_FILES`] most returned files, most frequent first.
    pub top_files: Vec<FileCount>,
}

/// Nearest-rank percentile of an ascending slice: the value at 1-based rank `ceil(p·n/100)`,
/// no interpolation. `None` for an empty slice.
pub fn percentile_nearest_rank(sorted: &[u64], p: u32) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let n = sorted.len() as u64;
    let rank = (u64::from(p) * n).div_ceil(100).clamp(1, n);
    sorted.get(usize::try_from(rank - 1).ok()?).copied()
}

/// Reads the summary shown by `mesh-mcp stats` from the database at `path` (read-only),
/// counting only rows at or after `since` (all rows when `None`).
pub fn read_stats(path: &Path, since: Option<SystemTime>) -> Result<Stats, AuditError> {
    let conn = open_read_only(path)?;
    let sql_err = |action| {
        move |source| AuditError::Sqlite {
            path: path.to_path_buf(),
            action,
            source,
        }
    };
    let latency_recorded =
        has_table(&conn, "tool_call_metrics").map_err(sql_err("read the schema"))?;
    let cutoff = since
        .map(|t| iso8601_utc_ms(unix_ms(t)))
        .unwrap_or_default();
    let sql = if latency_recorded {
        "SELECT a.tool, a.status, a.session_id, a.timestamp, a.files_accessed, m.duration_us
         FROM audit_entries a LEFT JOIN tool_call_metrics m ON m.entry_seq = a.entry_seq
         WHERE a.timestamp >= ?1 ORDER BY a.entry_seq"
    } else {
        "SELECT tool, status, session_id, timestamp, files_accessed, NULL
         FROM audit_entries WHERE timestamp >= ?1 ORDER BY entry_seq"
    };
    let mut st = conn.prepare(sql).map_err(sql_err("read audit rows"))?;
    let mut rows = st.query([&cutoff]).map_err(sql_err("read audit rows"))?;

    struct ToolAcc {
        calls: u64,
        errors: u64,
        durations: Vec<u64>,
    }
    let mut stats = Stats {
        latency_recorded,
        ..Stats::default()
    };
    let mut tools: HashMap<String, ToolAcc> = HashMap::new();
    let mut sessions: HashMap<String, SessionStats> = HashMap::new();
    let mut files: HashMap<String, u64> = HashMap::new();
    while let Some(r) = rows.next().map_err(sql_err("read audit rows"))? {
        let read = |r: &rusqlite::Row<'_>| -> rusqlite::Result<_> {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, Option<i64>>(5)?,
            ))
        };
        let (tool, status, session, ts, files_json, duration) =
            read(r).map_err(sql_err("read an audit row"))?;
        let is_error = status != CallStatus::Success.as_str();
        stats.calls += 1;
        stats.errors += u64::from(is_error);
        let acc = tools.entry(tool).or_insert(ToolAcc {
            calls: 0,
            errors: 0,
            durations: Vec::new(),
        });
        acc.calls += 1;
        acc.errors += u64::from(is_error);
        if let Some(d) = duration {
            acc.durations.push(u64::try_from(d).unwrap_or(0));
        }
        sessions
            .entry(session.clone())
            .and_modify(|s| {
                s.calls += 1;
                if ts < s.first {
                    s.first = ts.clone();
                }
                if ts > s.last {
                    s.last = ts.clone();
                }
            })
            .or_insert_with(|| SessionStats {
                session_id: session,
                calls: 1,
                first: ts.clone(),
                last: ts.clone(),
            });
        match serde_json::from_str::<Vec<String>>(&files_json) {
            Ok(list) => {
                for f in list {
                    *files.entry(f).or_insert(0) += 1;
                }
            }
            Err(e) => {
                tracing::warn!(target: "mesh::audit", error = %e, "files_accessed is not a JSON list of strings; skipped")
            }
        }
    }

    stats.tools = tools
        .into_iter()
        .map(|(tool, mut acc)| {
            crate::order::sort(&mut acc.durations);
            let p95_us = if acc.durations.len() >= P95_MIN_SAMPLES {
                percentile_nearest_rank(&acc.durations, 95)
            } else {
                None
            };
            ToolStats {
                tool,
                calls: acc.calls,
                errors: acc.errors,
                timed: acc.durations.len() as u64,
                p50_us: percentile_nearest_rank(&acc.durations, 50),
                p95_us,
            }
        })
        .collect();
    crate::order::sort_by(&mut stats.tools, |a, b| {
        b.calls.cmp(&a.calls).then_with(|| a.tool.cmp(&b.tool))
    });
    stats.sessions = sessions.into_values().collect();
    crate::order::sort_by(&mut stats.sessions, |a, b| {
        a.first
            .cmp(&b.first)
            .then_with(|| a.session_id.cmp(&b.session_id))
    });
    let mut top: Vec<FileCount> = files
        .into_iter()
        .map(|(path, count)| FileCount { path, count })
        .collect();
    crate::order::sort_by(&mut top, |a, b| {
        b.count.cmp(&a.count).then_with(|| a.path.cmp(&b.path))
    });
    top.truncate(TOP_FILES);
    stats.top_files = top;
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A fresh directory under the temp dir, unique per test and process.
    fn temp_dir(name: &str) -> PathBuf {
        static N: AtomicU64 = AtomicU64::new(0);
        let d = std::env::temp_dir().join(format!(
            "mesh-audit-unit-{name}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn entry(tool: &str, status: CallStatus, files: &[&str], duration_us: u64) -> AuditEntry {
        AuditEntry {
            session_id: "s1".into(),
            trace_id: None,
            tool: tool.into(),
            args_digest: args_digest(&json!({"q": tool})),
            status,
            files_accessed: files.iter().map(|s| s.to_string()).collect(),
            redactions: 0,
            duration_us,
        }
    }

    #[test]
    fn iso_timestamps_match_known_dates() {
        assert_eq!(iso8601_utc_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601_utc_ms(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(
            iso8601_utc_ms(1_709_251_199_999),
            "2024-02-29T23:59:59.999Z"
        );
        assert_eq!(
            iso8601_utc_ms(4_102_444_800_007),
            "2100-01-01T00:00:00.007Z"
        );
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    #[test]
    fn iso_timestamps_sort_chronologically() {
        let mut last = String::new();
        for ms in (0..4_000_000_000_000u64).step_by(7_777_777_777) {
            let s = iso8601_utc_ms(ms);
            assert!(s > last, "{s} should sort after {last}");
            last = s;
        }
    }

    #[test]
    fn hex_is_lowercase_and_complete() {
        assert_eq!(to_hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn args_digest_is_canonical_and_matches_serde_json() {
        let a = json!({"b": [1, {"z": null, "a": "x"}], "a": true});
        let b: serde_json::Value =
            serde_json::from_str(r#"{"a":true,"b":[1,{"a":"x","z":null}]}"#).expect("valid json");
        assert_eq!(args_digest(&a), args_digest(&b));
        let mut canon = String::new();
        write_canonical(&a, &mut canon);
        assert_eq!(canon, r#"{"a":true,"b":[1,{"a":"x","z":null}]}"#);
        assert_eq!(canon, serde_json::to_string(&a).expect("serialises"));
        assert_eq!(args_digest(&a), sha256_hex(canon.as_bytes()));
        assert_ne!(args_digest(&a), args_digest(&json!({"a": false})));
    }

    #[test]
    fn session_ids_are_unique_and_shaped() {
        let a = new_session_id();
        let b = new_session_id();
        assert_ne!(a, b);
        let pid = format!("-p{}-c", std::process::id());
        assert!(a.contains(&pid), "{a}");
        assert!(
            a.split('-')
                .next()
                .is_some_and(|ms| ms.parse::<u64>().is_ok())
        );
    }

    #[test]
    fn status_text() {
        assert_eq!(CallStatus::Success.as_str(), "SUCCESS");
        assert_eq!(CallStatus::Error.to_string(), "ERROR");
        assert_eq!(CallStatus::Refused.as_str(), "REFUSED");
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        assert_eq!(percentile_nearest_rank(&[], 50), None);
        assert_eq!(percentile_nearest_rank(&[7], 95), Some(7));
        let v: Vec<u64> = (1..=20).collect();
        assert_eq!(percentile_nearest_rank(&v, 50), Some(10));
        assert_eq!(percentile_nearest_rank(&v, 95), Some(19));
        assert_eq!(percentile_nearest_rank(&v, 100), Some(20));
        assert_eq!(percentile_nearest_rank(&[1, 2, 3], 50), Some(2));
    }

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
        let (prev0, hash0): (String, String) = conn
            .query_row(
                "SELECT prev_hash, entry_hash FROM audit_entries WHERE entry_seq = 0",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .expect("row 0");
        assert_eq!(prev0, GENESIS_HASH);
        let prev1: String = conn
            .query_row(
                "SELECT prev_hash FROM audit_entries WHERE entry_seq = 1",
                [],
                |r| r.get(0),
            )
            .expect("row 1");
        assert_eq!(prev1, hash0);
        let ts: String = conn
            .query_row(
                "SELECT timestamp FROM audit_entries WHERE entry_seq = 2",
                [],
                |r| r.get(0),
            )
            .expect("row 2");
        assert_eq!(ts.len(), "2024-01-01T00:00:00.000Z".len());
        assert!(ts.ends_with('Z'));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn trace_id_is_covered_by_the_hash() {
        let dir = temp_dir("trace");
        let path = dir.join("audit.db");
        let log = AuditLog::open(&path).expect("open");
        let mut e = entry("smart_search", CallStatus::Success, &[], 1);
        e.trace_id = Some("aaaa".into());
        log.record(&e).expect("record");
        drop(log);
        let conn = Connection::open(&path).expect("reopen");
        conn.execute("UPDATE audit_entries SET trace_id = 'bbbb'", [])
            .expect("tamper");
        drop(conn);
        match verify(&path) {
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
        let dir = temp_dir("sep");
        let path = dir.join("audit.db");
        let log = AuditLog::open(&path).expect("open");
        let mut e = entry("smart_search", CallStatus::Success, &[], 1);
        e.session_id = "a\x1fb".into();
        log.record(&e).expect("record");
        drop(log);
        assert_eq!(verify(&path).expect("still valid").rows, 1);
        let conn = Connection::open(&path).expect("reopen");
        let s: String = conn
            .query_row("SELECT session_id FROM audit_entries", [], |r| r.get(0))
            .expect("row");
        assert_eq!(s, "a\u{fffd}b");
        conn.execute("UPDATE audit_entries SET tool = 'x\x1fy'", [])
            .expect("tamper");
        drop(conn);
        match verify(&path) {
            Err(AuditError::BrokenChain {
                seq: 0,
                reason: BreakReason::SeparatorInField { field: "tool" },
            }) => {}
            other => panic!("expected a separator report, got {other:?}"),
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn verify_reports_missing_and_foreign_files() {
        let dir = temp_dir("missing");
        let path = dir.join("nope.db");
        assert!(matches!(verify(&path), Err(AuditError::NotFound { .. })));
        std::fs::create_dir_all(&dir).expect("dir");
        let other = dir.join("other.db");
        Connection::open(&other)
            .and_then(|c| c.execute_batch("CREATE TABLE t(x)"))
            .expect("foreign db");
        let err = verify(&other).expect_err("not an audit db");
        assert!(matches!(err, AuditError::NotAnAuditDb { .. }));
        assert!(err.to_string().contains("audit_entries"));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn stats_count_calls_errors_latency_sessions_and_files() {
        let dir = temp_dir("stats");
        let path = dir.join("audit.db");
        let log = AuditLog::open(&path).expect("open");
        for i in 1..=20u64 {
            let status = if i % 5 == 0 {
                CallStatus::Error
            } else {
                CallStatus::Success
            };
            log.record(&entry("smart_search", status, &["a.rs", "b.rs"], i * 100))
                .expect("record");
        }
        let mut e = entry("find_dependents", CallStatus::Refused, &["b.rs"], 7);
        e.session_id = "s2".into();
        log.record(&e).expect("record");

        let s = read_stats(&path, None).expect("stats");
        assert_eq!(s.calls, 21);
        assert_eq!(s.errors, 5);
        assert!(s.latency_recorded);
        assert_eq!(s.tools[0].tool, "smart_search");
        assert_eq!(s.tools[0].calls, 20);
        assert_eq!(s.tools[0].errors, 4);
        assert_eq!(s.tools[0].timed, 20);
        assert_eq!(s.tools[0].p50_us, Some(1000));
        assert_eq!(s.tools[0].p95_us, Some(1900));
        assert_eq!(s.tools[1].tool, "find_dependents");
        assert_eq!(s.tools[1].p50_us, Some(7));
        assert_eq!(
            s.tools[1].p95_us, None,
            "p95 needs {P95_MIN_SAMPLES} samples"
        );
        assert_eq!(s.sessions.len(), 2);
        assert_eq!(s.sessions[0].session_id, "s1");
        assert_eq!(s.sessions[0].calls, 20);
        assert!(s.sessions[0].first <= s.sessions[0].last);
        assert_eq!(
            s.top_files,
            vec![
                FileCount {
                    path: "b.rs".into(),
                    count: 21
                },
                FileCount {
                    path: "a.rs".into(),
                    count: 20
                },
            ]
        );

        let future = SystemTime::now() + Duration::from_secs(3600);
        assert_eq!(read_stats(&path, Some(future)).expect("stats").calls, 0);
        let past = SystemTime::now() - Duration::from_secs(3600);
        assert_eq!(read_stats(&path, Some(past)).expect("stats").calls, 21);
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
