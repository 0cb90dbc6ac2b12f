//! The hash-chained SQLite audit trail (docs/ARCHITECTURE.md §5).
//!
//! Every audited `tools/call` becomes one row of `audit_entries`. Each row stores the SHA-256 of
//! its own fields plus the hash of the row before it, so editing, inserting or deleting a row in
//! the middle breaks the chain and [`verify`] names the first broken row. Call latency lives in
//! `tool_call_metrics`, deliberately outside the chain, so it can be pruned or rebuilt without
//! touching the evidence; so does the workspace a call was answered for (`tool_call_workspace`,
//! what `mesh-mcp stats` filters on), since one database serves every workspace of a user.
//! Arguments are never stored, only their digest ([`args_digest`]).
//!
//! A chain alone cannot show that rows were cut off its end, or that someone who knows the
//! formula rewrote it whole. Two things next to the database close that:
//!
//! - **a key** (`<db>.key`, `0600`, 32 random bytes made on first use): every row also stores
//!   an HMAC-SHA256 of its sequence number and hash under that key (`entry_mac`), so a row
//!   rewritten with a correctly recomputed hash still fails, unless the forger can read the key;
//! - **an anchor** (`<db>.head`, `0600`): the sequence number and hash of the newest row, with
//!   their MAC, rewritten in place (one `pwrite`) by every append while it holds SQLite's write
//!   lock, just before the commit. It also says from which row it has covered the trail, so an
//!   anchor deleted and made again is reported too. Deleting rows (the last ones, or all of them) leaves the anchor pointing past the
//!   end, which [`verify`] reports; an append after such a deletion continues from the anchor,
//!   so the gap stays visible for good.
//!
//! Both defend against someone who can edit the database but not the files beside it (a SQL
//! console, a script or tool that rewrites the table, a restored backup). Whoever can read the
//! key and write every file as the user can still forge everything; that is outside what a
//! local, same-user log can prove. Rows written before the key existed (no `entry_mac`) still
//! verify by their hash alone, as a legacy prefix.
//!
//! Several processes (a `meshd` and a few standalone `mesh-mcp run`) may share one file: every
//! append runs in a `BEGIN IMMEDIATE` transaction and reads the committed tail from SQLite, never
//! from memory, so the chain stays single and gap-free. A database deleted or replaced under a
//! running server is noticed at the next append (its inode changed), logged, and re-created.

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
    entry_hash     TEXT NOT NULL,
    entry_mac      TEXT
);
CREATE TABLE IF NOT EXISTS tool_call_metrics (
    entry_seq   INTEGER PRIMARY KEY,
    duration_us INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tool_call_workspace (
    entry_seq   INTEGER PRIMARY KEY,
    workspace   TEXT NOT NULL
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
    /// The row's hash matches its contents but its MAC does not match the key: the row was
    /// rewritten by someone who recomputed the hash (or the key file was replaced).
    MacMismatch,
    /// A row without a MAC after rows with one: MACs were stripped to pass the row off as a
    /// legacy one.
    MacMissing,
    /// Rows carry MACs but the key file is gone, so they cannot be checked.
    KeyMissing,
    /// The anchor says the chain reached row `anchored`, but the database ends before it: rows
    /// were deleted from the end (or all of them), or the last append died before its commit.
    Truncated {
        /// The newest row the anchor vouches for.
        anchored: u64,
    },
    /// The row the anchor names has another hash than the anchor recorded: it was rewritten.
    AnchorMismatch,
    /// The anchor file is damaged or its MAC does not match the key: it was edited.
    AnchorInvalid(String),
    /// Rows carry MACs but the anchor file is gone: it was deleted, so truncation cannot be
    /// ruled out.
    AnchorMissing,
    /// The anchor was made again at this row (the file had been deleted or damaged while the
    /// trail went on): rows cut off the end before then cannot be ruled out.
    AnchorRemade,
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
            BreakReason::MacMismatch => f.write_str(
                "MAC mismatch: the row's hash was recomputed but its MAC does not match the key (row forged, or the .key file was replaced)",
            ),
            BreakReason::MacMissing => f.write_str(
                "the row has no MAC although earlier rows do (MACs stripped: row forged)",
            ),
            BreakReason::KeyMissing => f.write_str(
                "rows carry MACs but the key file beside the database is missing, so they cannot be checked (was <db>.key deleted?)",
            ),
            BreakReason::Truncated { anchored } => write!(
                f,
                "truncated: the anchor says the chain reached row {anchored}, the database ends before it (rows deleted from the end, or the last append died before its commit)"
            ),
            BreakReason::AnchorMismatch => f.write_str(
                "the anchor recorded another hash for this row (row rewritten)",
            ),
            BreakReason::AnchorInvalid(why) => write!(f, "the anchor file <db>.head is not valid: {why}"),
            BreakReason::AnchorRemade => f.write_str(
                "the anchor was made again from this row (<db>.head had been deleted or damaged): rows cut off the end before then cannot be ruled out",
            ),
            BreakReason::AnchorMissing => f.write_str(
                "rows carry MACs but the anchor file <db>.head is missing: deleted, so rows cut off the end cannot be ruled out",
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
    /// The tool ran (or its arguments were invalid, or a path argument left the roots) and the
    /// answer is an error.
    Error,
    /// The call was refused before running by a stop rule of the workspace's policy.
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
    trace_id: Option<&'a str>,
    tool: &'a str,
    args_digest: &'a str,
    status: &'a str,
    files_json: &'a str,
    redactions: i64,
}

impl ChainFields<'_> {
    /// The legacy (keyless) row hash: hex SHA-256 over the fields joined by the unit separator,
    /// a missing trace id hashed as an empty one. Rows without a MAC verify by this.
    fn hash_v1(&self) -> String {
        let redactions = self.redactions.to_string();
        let parts = [
            self.prev_hash,
            self.timestamp,
            self.session_id,
            self.trace_id.unwrap_or(""),
            self.tool,
            self.args_digest,
            self.status,
            self.files_json,
            &redactions,
        ];
        sha256_joined(&parts)
    }

    /// The row hash of keyed rows: a version tag first, and the trace id tagged so that NULL
    /// (`-`) and an empty string (`=`) hash differently.
    fn hash_v2(&self) -> String {
        let redactions = self.redactions.to_string();
        let trace = match self.trace_id {
            None => "-".to_string(),
            Some(t) => format!("={t}"),
        };
        let parts = [
            "mesh-audit-v2",
            self.prev_hash,
            self.timestamp,
            self.session_id,
            &trace,
            self.tool,
            self.args_digest,
            self.status,
            self.files_json,
            &redactions,
        ];
        sha256_joined(&parts)
    }

    /// The first free-text column holding the separator, if any (fixed-format columns are
    /// checked too: a separator anywhere would make boundaries ambiguous).
    fn field_with_separator(&self) -> Option<&'static str> {
        [
            ("prev_hash", self.prev_hash),
            ("timestamp", self.timestamp),
            ("session_id", self.session_id),
            ("trace_id", self.trace_id.unwrap_or("")),
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

/// Hex SHA-256 over `parts` joined by the unit separator.
fn sha256_joined(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            h.update([FIELD_SEP as u8]);
        }
        h.update(p.as_bytes());
    }
    to_hex(&h.finalize())
}

/// HMAC-SHA256 (RFC 2104) of `parts` joined by the unit separator, as lower-case hex.
fn hmac_hex(key: &[u8], parts: &[&str]) -> String {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(block.map(|b| b ^ 0x36));
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            inner.update([FIELD_SEP as u8]);
        }
        inner.update(p.as_bytes());
    }
    let mut outer = Sha256::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    to_hex(&outer.finalize())
}

/// The MAC stored with a keyed row.
fn row_mac(key: &Key, seq: u64, entry_hash: &str) -> String {
    hmac_hex(&key.0, &["row", &seq.to_string(), entry_hash])
}

/// `path` with `suffix` appended to its file name (`audit.db` → `audit.db.key`).
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// The key file of the database at `db`.
pub fn key_path(db: &Path) -> PathBuf {
    beside(db, ".key")
}

/// The anchor file of the database at `db`.
pub fn anchor_path(db: &Path) -> PathBuf {
    beside(db, ".head")
}

/// The per-database MAC key.
#[derive(Clone)]
struct Key([u8; 32]);

fn parse_hex32(text: &str) -> Option<[u8; 32]> {
    let text = text.trim();
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// Reads the key beside `db`: `Ok(None)` when there is none.
fn read_key(db: &Path) -> Result<Option<Key>, AuditError> {
    let path = key_path(db);
    match std::fs::read_to_string(&path) {
        Ok(text) => parse_hex32(&text).map(|k| Some(Key(k))).ok_or_else(|| AuditError::File {
            path: path.clone(),
            source: io::Error::new(
                io::ErrorKind::InvalidData,
                "the audit key is damaged (expected 64 hex digits); it cannot be repaired: move the database, its .key and .head away to start a new trail",
            ),
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(AuditError::File { path, source }),
    }
}

/// Reads the key beside `db`, making one (32 bytes from `/dev/urandom`, `0600`) when there is
/// none. Two processes making one at once agree on the first that lands (a hard link, which
/// never replaces).
fn load_or_create_key(db: &Path) -> Result<Key, AuditError> {
    if let Some(k) = read_key(db)? {
        return Ok(k);
    }
    let path = key_path(db);
    let file_err = |source| AuditError::File {
        path: path.clone(),
        source,
    };
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .map_err(file_err)?;
    static N: AtomicU64 = AtomicU64::new(0);
    let tmp = beside(
        db,
        &format!(
            ".key.tmp-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ),
    );
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| {
            use std::io::Write;
            f.write_all(format!("{}\n", to_hex(&bytes)).as_bytes())?;
            f.sync_all()
        })
        .and_then(|()| match std::fs::hard_link(&tmp, &path) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => Err(e),
            _ => Ok(()),
        });
    let _ = std::fs::remove_file(&tmp);
    written.map_err(file_err)?;
    read_key(db)?.ok_or_else(|| {
        file_err(io::Error::new(
            io::ErrorKind::NotFound,
            "the key vanished right after it was made",
        ))
    })
}

/// The newest row the anchor file vouches for.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Anchor {
    seq: u64,
    hash: String,
    /// The first row this anchor has covered since it was made: the first keyed row for a
    /// trail anchored from its start (or from the end of its legacy prefix), later when the
    /// anchor file was deleted and had to be made again.
    since: u64,
}

const ANCHOR_TAG: &str = "mesh-audit-head 2";

fn anchor_mac(key: &Key, a: &Anchor) -> String {
    hmac_hex(
        &key.0,
        &["head", &a.seq.to_string(), &a.since.to_string(), &a.hash],
    )
}

/// The fixed-width text of an anchor (so rewriting it in place never leaves a tail behind).
fn anchor_text(key: &Key, a: &Anchor) -> String {
    format!(
        "{ANCHOR_TAG} {:020} {:020} {} {}\n",
        a.seq,
        a.since,
        a.hash,
        anchor_mac(key, a)
    )
}

/// Parses an anchor: `Ok(None)` for an empty file, `Err(why)` when it is damaged or (with a
/// key) its MAC does not match.
fn parse_anchor(text: &str, key: Option<&Key>) -> Result<Option<Anchor>, String> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let rest = text
        .trim_end()
        .strip_prefix(ANCHOR_TAG)
        .ok_or("it does not start with the anchor tag")?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let [seq, since, hash, mac] = fields.as_slice() else {
        return Err("it does not hold a sequence number, a start, a hash and a MAC".into());
    };
    let number = |s: &str| {
        s.parse::<u64>()
            .map_err(|_| "a sequence number in it is not a number".to_string())
    };
    let anchor = Anchor {
        seq: number(seq)?,
        since: number(since)?,
        hash: hash.to_string(),
    };
    if let Some(key) = key
        && anchor_mac(key, &anchor) != *mac
    {
        return Err("its MAC does not match the key (the anchor was edited)".into());
    }
    Ok(Some(anchor))
}

/// Reads the anchor beside `db` (see [`parse_anchor`]); a missing file is `Ok(None)`.
fn read_anchor(db: &Path, key: Option<&Key>) -> Result<Option<Anchor>, String> {
    match std::fs::read_to_string(anchor_path(db)) {
        Ok(t) => parse_anchor(&t, key),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read it: {e}")),
    }
}

/// The anchor file a writer keeps open: read and rewritten in place with one `pread` and one
/// `pwrite` per append (the text has a fixed width), under SQLite's write lock.
struct AnchorFile {
    file: std::fs::File,
    id: Option<(u64, u64)>,
}

impl AnchorFile {
    /// Opens (creating, `0600`) the anchor beside `db`.
    fn open(db: &Path) -> io::Result<AnchorFile> {
        let path = anchor_path(db);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)?;
        if file.metadata()?.permissions().mode() & 0o777 != 0o600 {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        Ok(AnchorFile {
            file,
            id: file_id(&path),
        })
    }

    fn read(&self, key: &Key) -> Result<Option<Anchor>, String> {
        use std::os::unix::fs::FileExt;
        let mut buf = [0u8; 512];
        let n = self
            .file
            .read_at(&mut buf, 0)
            .map_err(|e| format!("cannot read it: {e}"))?;
        let text = std::str::from_utf8(&buf[..n]).map_err(|_| "it is not text".to_string())?;
        parse_anchor(text, Some(key))
    }

    fn write(&self, key: &Key, anchor: &Anchor) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        let text = anchor_text(key, anchor);
        self.file.write_all_at(text.as_bytes(), 0)?;
        let len = text.len() as u64;
        if self.file.metadata()?.len() > len {
            self.file.set_len(len)?;
        }
        Ok(())
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
fn file_id(path: &Path) -> Option<(u64, u64)> {
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
        let sql_err = |action| {
            move |source| AuditError::Sqlite {
                path: self.path.clone(),
                action,
                source,
            }
        };
        if entries.is_empty() {
            return Ok(0);
        }

        // A panic while holding the lock leaves no open transaction behind (the Transaction's
        // drop rolls back), so the connection is still usable.
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
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
        let (first_seq, mut prev_hash) = match (&tail, &anchor) {
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
        };
        let mut seq = first_seq;
        for (k, entry) in entries.iter().enumerate() {
            seq = first_seq + k as u64;
            let files_json =
                serde_json::to_string(&entry.files_accessed).map_err(AuditError::Encode)?;
            let session_id = clean_field(&entry.session_id);
            let trace_id = entry.trace_id.as_deref().map(clean_field);
            let tool = clean_field(&entry.tool);
            let args_digest = clean_field(&entry.args_digest);
            let timestamp = iso8601_utc_ms(unix_ms(SystemTime::now()));
            let redactions = i64::from(entry.redactions);
            let fields = ChainFields {
                prev_hash: &prev_hash,
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
            prev_hash = entry_hash;
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

/// The audit trail as the server uses it: opened on first use, re-tried after a failure (a
/// full disk at start, a side file left unwritable) at most every [`AuditSink::retry`], and
/// never an error for the caller — failures are logged, and the tool answers regardless.
pub struct AuditSink {
    state: Mutex<SinkState>,
    retry: Duration,
    /// The workspace the rows are recorded for ([`AuditLog::with_workspace`]).
    workspace: Option<PathBuf>,
}

enum SinkState {
    Unopened,
    Open(Box<AuditLog>),
    Failed { at: std::time::Instant },
}

/// Environment variable: milliseconds between attempts to open an audit database that could
/// not be opened (default 30 000; tests use less).
pub const RETRY_ENV: &str = "MESH_AUDIT_RETRY_MS";

impl Default for AuditSink {
    fn default() -> Self {
        AuditSink::new()
    }
}

impl AuditSink {
    /// A sink that opens `AuditLog::default_path()` on first use.
    pub fn new() -> AuditSink {
        let retry = std::env::var(RETRY_ENV)
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .map_or(Duration::from_secs(30), Duration::from_millis);
        AuditSink {
            state: Mutex::new(SinkState::Unopened),
            retry,
            workspace: None,
        }
    }

    /// A sink like [`AuditSink::new`] whose rows are recorded for the workspace at `dir`.
    pub fn for_workspace(dir: Option<&Path>) -> AuditSink {
        AuditSink {
            workspace: dir.map(Path::to_path_buf),
            ..AuditSink::new()
        }
    }

    /// Appends `entry`, opening the database first when needed; every failure is logged.
    pub fn record(&self, entry: &AuditEntry) {
        self.record_batch(std::slice::from_ref(entry));
    }

    /// Appends `entries` in one transaction ([`AuditLog::record_batch`]), opening the database
    /// first when needed; every failure is logged.
    pub fn record_batch(&self, entries: &[AuditEntry]) {
        let Some(first) = entries.first() else {
            return;
        };
        let more = match entries.len() - 1 {
            0 => String::new(),
            n => format!(" (and {n} more in its batch)"),
        };
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let SinkState::Failed { at } = &*state {
            if at.elapsed() < self.retry {
                tracing::debug!(target: "mesh::audit", "audit trail unavailable: the call of {}{more} is not recorded", first.tool);
                return;
            }
            *state = SinkState::Unopened;
        }
        if matches!(*state, SinkState::Unopened) {
            let path = AuditLog::default_path();
            *state = match AuditLog::open(&path) {
                Ok(log) => SinkState::Open(Box::new(match &self.workspace {
                    Some(dir) => log.with_workspace(dir),
                    None => log,
                })),
                Err(e) => {
                    // Seconds by integer arithmetic: no float formatting in the binary.
                    let every = crate::render::decimal(self.retry.as_millis() as u64, 1000, 1);
                    tracing::warn!(target: "mesh::audit", "audit trail unavailable: {e}; calls are not recorded until it opens (retried every {every} s)");
                    SinkState::Failed {
                        at: std::time::Instant::now(),
                    }
                }
            };
        }
        if let SinkState::Open(log) = &*state
            && let Err(e) = log.record_batch(entries)
        {
            tracing::warn!(target: "mesh::audit", "could not record the call of {}{more}: {e}", first.tool);
        }
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

/// A read-only connection to an audit database, and (when one was needed) the private copy it
/// reads.
struct ReadOnly {
    conn: Connection,
    _copy: Option<TempCopy>,
}

/// A private directory holding a copy of a database, removed on drop.
struct TempCopy(PathBuf);

impl Drop for TempCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `file:` URI of `path` with `query`, percent-encoding everything but unreserved characters
/// and `/`.
fn sqlite_uri(path: &Path, query: &str) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut uri = String::from("file:");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push('?');
    uri.push_str(query);
    uri
}

/// Opens an existing audit database read-only without creating a file beside it: SQLite
/// would otherwise make `-wal`/`-shm` files with the database's own mode (`0444` for a
/// read-only file), which then make every later append fail.
///
/// - no (or an empty) `-wal`: the file is opened `immutable` (no locks, no side files);
/// - a `-wal` and its `-shm`: a writer is (or was) active; both exist, so a plain read-only
///   open reads the live state and creates nothing;
/// - a `-wal` without `-shm` (a writer died): the database and its WAL are copied into a
///   private temporary directory and read there.
///
/// A missing file or table is a clear error.
fn open_read_only(path: &Path) -> Result<ReadOnly, AuditError> {
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
    let wal = beside(path, "-wal");
    let shm = beside(path, "-shm");
    let wal_len = std::fs::metadata(&wal).map_or(0, |m| m.len());
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let (uri, copy) = if wal_len == 0 {
        (sqlite_uri(path, "mode=ro&immutable=1"), None)
    } else if shm.exists() {
        (sqlite_uri(path, "mode=ro"), None)
    } else {
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "mesh-audit-verify-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        create_private_dirs(&dir)?;
        let copy = TempCopy(dir.clone());
        let db_copy = dir.join("audit.db");
        let copied = std::fs::copy(path, &db_copy)
            .and_then(|_| std::fs::copy(&wal, beside(&db_copy, "-wal")));
        copied.map_err(|source| AuditError::File {
            path: dir.clone(),
            source,
        })?;
        (sqlite_uri(&db_copy, "mode=ro"), Some(copy))
    };
    let conn =
        Connection::open_with_flags(&uri, flags).map_err(sql_err("open the database read-only"))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(sql_err("set the busy timeout"))?;
    if !has_table(&conn, "audit_entries").map_err(sql_err("read the schema"))? {
        return Err(AuditError::NotAnAuditDb {
            path: path.to_path_buf(),
        });
    }
    Ok(ReadOnly { conn, _copy: copy })
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
    /// Rows written before rows carried a MAC (checked by their hash alone), at the start.
    pub legacy_rows: u64,
    /// The newest row the anchor vouches for, when there is an anchor.
    pub anchored: Option<u64>,
    /// Rows after the anchored one (appended by a writer that did not move the anchor, i.e. an
    /// older mesh-mcp); their links and MACs verify, but their removal would not be noticed.
    pub past_anchor: u64,
}

/// Replays the chain at `path` (opened read-only, creating nothing beside it) in sequence
/// order and checks every link: sequence numbers without gaps from 0, each `prev_hash` equal to
/// the previous row's hash, each stored hash equal to the recomputed one, each MAC (for keyed
/// rows) equal to the one computed with the key; then the anchor: present whenever rows carry
/// MACs, its own MAC valid, and the chain reaching the row it names with the hash it recorded.
/// Returns [`AuditError::BrokenChain`] naming the first row that fails (for a truncation, the
/// first missing row).
///
/// A writer that has moved the anchor but not yet committed looks like a truncation by one
/// row for a moment, so a truncation verdict is re-checked a few times before it stands.
pub fn verify(path: &Path) -> Result<VerifyReport, AuditError> {
    let mut attempt = 0;
    loop {
        match verify_once(path) {
            Err(AuditError::BrokenChain {
                reason: BreakReason::Truncated { .. } | BreakReason::AnchorInvalid(_),
                ..
            }) if attempt < 5 => {
                attempt += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

fn verify_once(path: &Path) -> Result<VerifyReport, AuditError> {
    let db = open_read_only(path)?;
    let conn = &db.conn;
    let sql_err = |action| {
        move |source| AuditError::Sqlite {
            path: path.to_path_buf(),
            action,
            source,
        }
    };
    let key = read_key(path)?;
    // The anchor is read before the rows: an append racing with this read then shows up as a
    // row past the anchor (harmless), not as a truncation.
    let anchor = read_anchor(path, key.as_ref());
    let anchored_seq = anchor.as_ref().ok().and_then(|a| a.as_ref().map(|a| a.seq));
    let mut anchored_hash: Option<String> = None;
    let has_mac = conn
        .prepare("SELECT entry_mac FROM audit_entries LIMIT 0")
        .is_ok();
    let sql = if has_mac {
        "SELECT entry_seq, prev_hash, timestamp, session_id, trace_id, tool, args_digest,
                status, files_accessed, redactions, entry_hash, entry_mac
         FROM audit_entries ORDER BY entry_seq"
    } else {
        "SELECT entry_seq, prev_hash, timestamp, session_id, trace_id, tool, args_digest,
                status, files_accessed, redactions, entry_hash, NULL
         FROM audit_entries ORDER BY entry_seq"
    };
    let mut st = conn.prepare(sql).map_err(sql_err("read the chain"))?;
    let mut rows = st.query([]).map_err(sql_err("read the chain"))?;
    let mut expected: u64 = 0;
    let mut prev_hash = GENESIS_HASH.to_string();
    let mut legacy_rows = 0u64;
    let mut keyed = false;
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
                r.get::<_, Option<String>>(11)?,
            ))
        };
        let (seq, prev, ts, session, trace, tool, digest, status, files, redactions, hash, mac) =
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
            trace_id: trace.as_deref(),
            tool: &tool,
            args_digest: &digest,
            status: &status,
            files_json: &files,
            redactions,
        };
        if let Some(field) = fields.field_with_separator() {
            return Err(broken(BreakReason::SeparatorInField { field }));
        }
        match &mac {
            Some(mac) => {
                keyed = true;
                if fields.hash_v2() != hash {
                    return Err(broken(BreakReason::HashMismatch));
                }
                let Some(key) = &key else {
                    return Err(broken(BreakReason::KeyMissing));
                };
                if row_mac(key, seq_u, &hash) != *mac {
                    return Err(broken(BreakReason::MacMismatch));
                }
            }
            None if keyed => return Err(broken(BreakReason::MacMissing)),
            None => {
                if fields.hash_v1() != hash {
                    return Err(broken(BreakReason::HashMismatch));
                }
                legacy_rows += 1;
            }
        }
        if anchored_seq == Some(seq_u) {
            anchored_hash = Some(hash.clone());
        }
        prev_hash = hash;
        expected += 1;
    }
    let rows_seen = expected;
    let at_end = |reason| AuditError::BrokenChain {
        seq: rows_seen,
        reason,
    };
    let anchor = anchor.map_err(|why| at_end(BreakReason::AnchorInvalid(why)))?;
    let (anchored, past_anchor) = match anchor {
        None if keyed => return Err(at_end(BreakReason::AnchorMissing)),
        None => (None, 0),
        Some(_) if key.is_none() => return Err(at_end(BreakReason::KeyMissing)),
        Some(a) => {
            if a.seq >= rows_seen {
                return Err(at_end(BreakReason::Truncated { anchored: a.seq }));
            }
            if anchored_hash.as_ref() != Some(&a.hash) {
                return Err(AuditError::BrokenChain {
                    seq: a.seq,
                    reason: BreakReason::AnchorMismatch,
                });
            }
            // Keyed rows start right after the legacy prefix; an anchor covering less was
            // made again after the first one went missing.
            if a.since > legacy_rows {
                return Err(AuditError::BrokenChain {
                    seq: a.since,
                    reason: BreakReason::AnchorRemade,
                });
            }
            (Some(a.seq), rows_seen - a.seq - 1)
        }
    };
    tracing::debug!(target: "mesh::audit", rows = rows_seen, path = %path.display(), "audit chain verified");
    Ok(VerifyReport {
        rows: rows_seen,
        legacy_rows,
        anchored,
        past_anchor,
    })
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
    /// Calls in the window left out because they were answered for another workspace (or
    /// recorded before rows named their workspace); 0 when every workspace is shown.
    pub other_workspaces: u64,
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
/// counting only rows at or after `since` (all rows when `None`) and, when `workspace` is given,
/// only calls answered for that workspace directory (the others are counted in
/// [`Stats::other_workspaces`]).
pub fn read_stats(
    path: &Path,
    since: Option<SystemTime>,
    workspace: Option<&str>,
) -> Result<Stats, AuditError> {
    let db = open_read_only(path)?;
    let conn = &db.conn;
    let sql_err = |action| {
        move |source| AuditError::Sqlite {
            path: path.to_path_buf(),
            action,
            source,
        }
    };
    let latency_recorded =
        has_table(conn, "tool_call_metrics").map_err(sql_err("read the schema"))?;
    let workspace_recorded =
        has_table(conn, "tool_call_workspace").map_err(sql_err("read the schema"))?;
    let cutoff = since
        .map(|t| iso8601_utc_ms(unix_ms(t)))
        .unwrap_or_default();
    let sql = format!(
        "SELECT a.tool, a.status, a.session_id, a.timestamp, a.files_accessed, {}, {}
         FROM audit_entries a{}{} WHERE a.timestamp >= ?1 ORDER BY a.entry_seq",
        if latency_recorded {
            "m.duration_us"
        } else {
            "NULL"
        },
        if workspace_recorded {
            "w.workspace"
        } else {
            "NULL"
        },
        if latency_recorded {
            " LEFT JOIN tool_call_metrics m ON m.entry_seq = a.entry_seq"
        } else {
            ""
        },
        if workspace_recorded {
            " LEFT JOIN tool_call_workspace w ON w.entry_seq = a.entry_seq"
        } else {
            ""
        },
    );
    let mut st = conn.prepare(&sql).map_err(sql_err("read audit rows"))?;
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
                r.get::<_, Option<String>>(6)?,
            ))
        };
        let (tool, status, session, ts, files_json, duration, row_workspace) =
            read(r).map_err(sql_err("read an audit row"))?;
        if let Some(wanted) = workspace
            && row_workspace.as_deref() != Some(wanted)
        {
            stats.other_workspaces += 1;
            continue;
        }
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
    fn hmac_matches_rfc_4231() {
        // Test case 2 of RFC 4231 (HMAC-SHA256).
        assert_eq!(
            hmac_hex(b"Jefe", &["what do ya want for nothing?"]),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than the block is hashed first.
        assert_eq!(
            hmac_hex(
                &[0xaa; 131],
                &["Test Using Larger Than Block-Size Key - Hash Key First"]
            ),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn null_and_empty_trace_ids_hash_apart() {
        let fields = |trace| ChainFields {
            prev_hash: GENESIS_HASH,
            timestamp: "t",
            session_id: "s",
            trace_id: trace,
            tool: "x",
            args_digest: "d",
            status: "SUCCESS",
            files_json: "[]",
            redactions: 0,
        };
        assert_ne!(fields(None).hash_v2(), fields(Some("")).hash_v2());
        // The legacy formula could not tell them apart; keyed rows no longer use it.
        assert_eq!(fields(None).hash_v1(), fields(Some("")).hash_v1());
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

        let s = read_stats(&path, None, None).expect("stats");
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
        assert_eq!(
            read_stats(&path, Some(future), None).expect("stats").calls,
            0
        );
        let past = SystemTime::now() - Duration::from_secs(3600);
        assert_eq!(
            read_stats(&path, Some(past), None).expect("stats").calls,
            21
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn stats_show_one_workspace_and_count_the_others() {
        let dir = temp_dir("stats-ws");
        let path = dir.join("audit.db");
        // Rows from before rows named their workspace, then two workspaces sharing the file.
        let legacy = AuditLog::open(&path).expect("open");
        legacy
            .record(&entry("smart_search", CallStatus::Success, &[], 1))
            .expect("record");
        drop(legacy);
        let a = AuditLog::open(&path)
            .expect("open")
            .with_workspace(Path::new("/ws/a"));
        let b = AuditLog::open(&path)
            .expect("open")
            .with_workspace(Path::new("/ws/b"));
        for _ in 0..3 {
            a.record(&entry("analyze_grpc", CallStatus::Success, &["a.go"], 5))
                .expect("record");
        }
        b.record(&entry("search_docs", CallStatus::Error, &["b.md"], 9))
            .expect("record");
        let only_a = read_stats(&path, None, Some("/ws/a")).expect("stats");
        assert_eq!(only_a.calls, 3);
        assert_eq!(only_a.errors, 0);
        assert_eq!(only_a.other_workspaces, 2, "b's call and the legacy row");
        assert_eq!(only_a.tools.len(), 1);
        assert_eq!(only_a.top_files[0].path, "a.go");
        let only_b = read_stats(&path, None, Some("/ws/b")).expect("stats");
        assert_eq!(
            (only_b.calls, only_b.errors, only_b.other_workspaces),
            (1, 1, 4)
        );
        let all = read_stats(&path, None, None).expect("stats");
        assert_eq!((all.calls, all.other_workspaces), (5, 0));
        verify(&path).expect("the workspace table is outside the chain");
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
