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

mod anchor;
mod chain;
mod log;
mod read_only;
mod sink;
mod stats;
mod verify;

pub use log::AuditLog;
pub use sink::AuditSink;
#[cfg(test)]
pub use stats::{FileCount, ToolStats};
pub use stats::{Stats, read_stats};
pub use verify::verify;

use serde::Serialize;
use sha2::{Digest, Sha256};
use std::fmt;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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

impl AuditError {
    /// The `map_err` for a failed SQLite `action` on the database at `path`: one spelling of
    /// the error for every reader and writer of the log.
    pub(super) fn sqlite<'a>(
        path: &'a std::path::Path,
        action: &'static str,
    ) -> impl Fn(rusqlite::Error) -> AuditError + 'a {
        move |source| AuditError::Sqlite {
            path: path.to_path_buf(),
            action,
            source,
        }
    }
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
    crate::jsonw::write_sorted(&mut canonical, args);
    sha256_hex(canonical.as_bytes())
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A fresh directory under the temp dir, unique per test and process.
    pub(super) fn temp_dir(name: &str) -> PathBuf {
        static N: AtomicU64 = AtomicU64::new(0);
        let d = std::env::temp_dir().join(format!(
            "mesh-audit-unit-{name}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    pub(super) fn entry(
        tool: &str,
        status: CallStatus,
        files: &[&str],
        duration_us: u64,
    ) -> AuditEntry {
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
        crate::jsonw::write_sorted(&mut canon, &a);
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
}
