//! Opening an existing audit database read-only, creating nothing beside it: what
//! [`super::verify`] and [`super::read_stats`] read.

use super::anchor::beside;
use super::log::create_private_dirs;
use super::{AuditError, BUSY_TIMEOUT};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A read-only connection to an audit database, and (when one was needed) the private copy it
/// reads.
pub(super) struct ReadOnly {
    pub(super) conn: Connection,
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
pub(super) fn open_read_only(path: &Path) -> Result<ReadOnly, AuditError> {
    if !path.is_file() {
        return Err(AuditError::NotFound {
            path: path.to_path_buf(),
        });
    }
    let sql_err = |action| AuditError::sqlite(path, action);
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

pub(super) fn has_table(conn: &Connection, name: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [name],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
}
