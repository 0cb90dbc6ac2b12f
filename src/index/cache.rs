//! Optional persistent cache of extracted facts, one SQLite file per workspace, so a warm
//! start can skip re-extraction.
//!
//! A row is keyed by the file's root label, root-relative path and the SHA-256 of its content,
//! and holds its size, mtime and the extracted facts (a compact binary encoding, see [`codec`]). A lookup is a hit only when the
//! size and the content hash match (the file is read and hashed either way: a cached answer can
//! never differ from re-extracting the same bytes) and the payload's own checksum holds. Older
//! versions of a file stay until the quota evicts them, so switching back to a branch hits. The
//! whole table is cleared when the build (crate version, executable) or the custom patterns
//! change, since either changes what extraction returns.
//!
//! The file lives at `~/.cache/mesh-mcp/index/<workspace id>.db` (directory `0700`, file
//! `0600`). Writes are batched after a snapshot is published, never on the way to the first
//! answer. A size quota is kept by evicting the least recently used rows. A file that is not
//! a database, or fails SQLite's checks, is logged, deleted and rebuilt; no cache problem is
//! ever fatal: the indexer just extracts. `MESH_CACHE=off` disables it, `MESH_CACHE=on`
//! enables it where the default leaves it off.

use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use sha2::{Digest, Sha256};

use super::facts::FileFacts;
use crate::config::Config;

mod codec;

/// The cache payload of `facts`: what [`PendingRow::payload`] holds.
pub fn encode_facts(facts: &FileFacts) -> Vec<u8> {
    codec::encode(facts)
}

/// Bumped whenever the table layout or the payload encoding changes.
const SCHEMA_VERSION: i64 = 9;
/// Rows hit within this many seconds keep their LRU stamp (saves a write per hit).
const TOUCH_GRANULARITY_S: i64 = 3600;
/// After eviction the live pages fill at most this share of the quota.
const EVICT_TO: f64 = 0.8;
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether the cache is used when neither `MESH_CACHE` nor the configuration says otherwise.
///
/// Off, because it does not pay off on the synthetic benchmark workload (docs/ARCHITECTURE.md
/// §7). Measured 2026-12-02 on the 2-core reference machine (load ≈ 9 from parallel builds, so CPU time of the process at the first
/// answer is the reliable figure; median of 7 runs at 5k, 3 at 50k, with the Rust, Go and Java
/// extractors merged in): 5k files — no cache 100 ms, cold cache 110 ms, warm cache 90 ms;
/// 50k files — 960 / 1050 / 1070 ms, and a warm 50k start peaks at 89 MB RSS against 54 MB.
/// Reading and hashing every file (the content hash is what makes a hit trustworthy), the
/// lookup and decoding the stored facts cost about as much as extracting these small files.
pub const ENABLED_BY_DEFAULT: bool = false;

/// The workspace id shared with the daemon's socket naming: the first 16 hex characters of
/// SHA-256(canonical base directory, NUL, crate version), so an upgraded binary never reads an
/// older binary's files.
pub fn workspace_id(base: &Path) -> String {
    let canonical = std::fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
    crate::daemon::socket::workspace_id(&canonical)
}

/// `~/.cache/mesh-mcp/index/<workspace id>.db`, or `None` without a home directory.
pub fn default_path(base: &Path) -> Option<PathBuf> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(
        PathBuf::from(home)
            .join(".cache")
            .join("mesh-mcp")
            .join("index")
            .join(format!("{}.db", workspace_id(base))),
    )
}

/// Whether the cache should be used for this workspace: `MESH_CACHE` (`on`/`off`) wins, then
/// `[cache] enabled` (whose default is [`ENABLED_BY_DEFAULT`]).
pub fn wanted(config: &Config) -> bool {
    match std::env::var("MESH_CACHE")
        .map(|v| v.trim().to_ascii_lowercase())
        .as_deref()
    {
        Ok("off" | "0" | "false" | "no") => false,
        Ok("on" | "1" | "true" | "yes") => true,
        Ok("") | Err(_) => config.cache.enabled,
        Ok(other) => {
            tracing::warn!(target: "mesh::cache",
                "MESH_CACHE={other:?} is neither on nor off; using the configuration");
            config.cache.enabled
        }
    }
}

/// Opens the workspace's cache when [`wanted`]; `None` (logged) when it cannot be used.
pub fn open_for(config: &Config) -> Option<FactCache> {
    if !wanted(config) {
        return None;
    }
    let Some(path) = default_path(&config.base_dir) else {
        tracing::info!(target: "mesh::cache", "no HOME directory: the parse cache is off");
        return None;
    };
    let quota = config.cache.max_size_mb.max(1).saturating_mul(1024 * 1024);
    match FactCache::open(&path, &build_salt(config), quota) {
        Ok(cache) => Some(cache),
        Err(e) => {
            tracing::warn!(target: "mesh::cache", "the parse cache is off for this run: {e}");
            None
        }
    }
}

/// What makes cached facts valid: the schema, the crate version, the executable (size and
/// mtime, so a rebuilt binary with changed extractors never trusts an older one's rows) and
/// the custom patterns, which add facts.
pub fn build_salt(config: &Config) -> String {
    let mut h = Sha256::new();
    h.update(format!("schema {SCHEMA_VERSION}\nversion {}\n", crate::VERSION).as_bytes());
    if let Ok(exe) = std::env::current_exe()
        && let Ok(meta) = std::fs::metadata(&exe)
    {
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        h.update(format!("exe {} {} {mtime}\n", exe.display(), meta.len()).as_bytes());
    }
    for p in &config.patterns {
        h.update(format!("{p:?}\n").as_bytes());
    }
    hex(&h.finalize())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 of a file's content, the part of the key that proves the bytes are the same.
pub fn content_hash(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

fn payload_check(payload: &[u8]) -> [u8; 8] {
    let d = Sha256::digest(payload);
    let mut out = [0u8; 8];
    out.copy_from_slice(&d[..8]);
    out
}

fn now_s() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// One extracted file waiting to be written.
#[derive(Debug, Clone)]
pub struct PendingRow {
    pub root: String,
    pub path: String,
    pub size: u64,
    pub mtime_ns: u64,
    pub sha: [u8; 32],
    pub payload: Vec<u8>,
}

/// Counters since the cache was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    pub errors: u64,
    pub written: u64,
    pub evicted: u64,
}

/// The per-workspace fact cache. Lookups go through [`FactCache::reader`] (one connection per
/// extraction thread); new rows are queued with [`FactCache::queue`] and written by
/// [`FactCache::flush`].
#[derive(Debug)]
pub struct FactCache {
    path: PathBuf,
    quota_bytes: u64,
    writer: Mutex<Connection>,
    pending: Mutex<Vec<PendingRow>>,
    touched: Mutex<Vec<i64>>,
    hits: AtomicU64,
    misses: AtomicU64,
    errors: AtomicU64,
    written: AtomicU64,
    evicted: AtomicU64,
    /// A reader saw corruption: the next flush rebuilds the file.
    broken: std::sync::atomic::AtomicBool,
}

/// Why the cache cannot be used (the indexer then extracts everything).
fn describe(path: &Path, action: &str, e: impl std::fmt::Display) -> String {
    format!(
        "cannot {action} the parse cache {}: {e}; delete the file or set MESH_CACHE=off",
        path.display()
    )
}

/// True for SQLite errors that mean the file itself is damaged or not a database.
fn is_corruption(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(f.code, rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    )
}

impl FactCache {
    /// Opens (creating as needed) the cache at `path` for a build identified by `salt`, with
    /// a size quota in bytes. A damaged file is logged, removed and created afresh.
    pub fn open(path: &Path, salt: &str, quota_bytes: u64) -> Result<FactCache, String> {
        if let Some(dir) = path.parent() {
            create_private_dirs(dir).map_err(|e| describe(path, "create the directory of", e))?;
        }
        let conn = match open_and_prepare(path, salt) {
            Ok(conn) => conn,
            Err(e) if is_corruption(&e) => {
                tracing::warn!(target: "mesh::cache", path = %path.display(), error = %e,
                    "the parse cache is damaged; rebuilding it");
                remove_db_files(path);
                open_and_prepare(path, salt).map_err(|e| describe(path, "recreate", e))?
            }
            Err(e) => return Err(describe(path, "open", e)),
        };
        let cache = FactCache {
            path: path.to_path_buf(),
            quota_bytes: quota_bytes.max(64 * 1024),
            writer: Mutex::new(conn),
            pending: Mutex::new(Vec::new()),
            touched: Mutex::new(Vec::new()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            written: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
            broken: std::sync::atomic::AtomicBool::new(false),
        };
        if let Err(e) = cache.enforce_quota() {
            tracing::debug!(target: "mesh::cache", error = %e, "quota check failed");
        }
        Ok(cache)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A read connection for one extraction thread; `None` (counted) when it cannot open.
    pub fn reader(&self) -> Option<CacheReader<'_>> {
        let opened = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .and_then(|c| {
            c.busy_timeout(BUSY_TIMEOUT)?;
            Ok(c)
        });
        match opened {
            Ok(conn) => Some(CacheReader {
                cache: self,
                conn,
                now: now_s(),
                touched: Vec::new(),
            }),
            Err(e) => {
                self.note_error(&e);
                None
            }
        }
    }

    /// Reads every row at once (a first build asks for nearly all of them). On error the
    /// result is empty and every lookup a miss.
    pub fn load_all(&self) -> LoadedRows {
        let mut out = LoadedRows {
            rows: std::collections::HashMap::new(),
            loaded_at: now_s(),
        };
        let Some(reader) = self.reader() else {
            return out;
        };
        let read = reader
            .conn
            .prepare("SELECT id, size, sha, payload, check_sum, used_at, root, path FROM facts")
            .and_then(|mut st| {
                let rows = st.query_map([], |r| {
                    let key: (String, String) = (r.get(6)?, r.get(7)?);
                    Ok((key, StoredRow::read(r)?))
                })?;
                for row in rows {
                    let ((root, path), row) = row?;
                    let Ok(sha) = <[u8; 32]>::try_from(&row.sha[..]) else {
                        continue;
                    };
                    out.rows
                        .insert((root.into_boxed_str(), path.into_boxed_str(), sha), row);
                }
                Ok(())
            });
        if let Err(e) = read {
            self.note_error(&e);
            out.rows.clear();
        }
        out
    }

    /// Checks a stored row against the file's size and content hash and its own checksum, and
    /// decodes it; counts a hit or a miss.
    fn accept(
        &self,
        row: Option<&StoredRow>,
        root: &str,
        path: &str,
        size: u64,
        sha: &[u8; 32],
    ) -> Option<FileFacts> {
        let facts = row.and_then(|row| {
            if u64::try_from(row.size).ok() != Some(size) || row.sha[..] != sha[..] {
                return None;
            }
            if row.check[..] != payload_check(&row.payload)[..] {
                self.errors.fetch_add(1, Ordering::Relaxed);
                tracing::debug!(target: "mesh::cache", root, path,
                    "cached payload fails its checksum; extracting");
                return None;
            }
            codec::decode(&row.payload)
        });
        let counter = if facts.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        facts
    }

    /// Queues freshly extracted rows for the next [`FactCache::flush`].
    pub fn queue(&self, rows: Vec<PendingRow>) {
        if rows.is_empty() {
            return;
        }
        if let Ok(mut p) = self.pending.lock() {
            p.extend(rows);
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            written: self.written.load(Ordering::Relaxed),
            evicted: self.evicted.load(Ordering::Relaxed),
        }
    }

    fn note_error(&self, e: &rusqlite::Error) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        if is_corruption(e) {
            self.broken.store(true, Ordering::Relaxed);
        }
        tracing::debug!(target: "mesh::cache", error = %e, "parse cache error (treated as a miss)");
    }

    /// Writes the queued rows and LRU stamps in one transaction, then keeps the quota. A
    /// damaged file is rebuilt first. Errors are logged and counted, never returned: the
    /// snapshot does not depend on the cache.
    pub fn flush(&self) {
        let rows = self
            .pending
            .lock()
            .map(|mut p| std::mem::take(&mut *p))
            .unwrap_or_default();
        let touched = self
            .touched
            .lock()
            .map(|mut t| std::mem::take(&mut *t))
            .unwrap_or_default();
        if self.broken.swap(false, Ordering::Relaxed) {
            self.rebuild_file();
        }
        if rows.is_empty() && touched.is_empty() {
            return;
        }
        let result = self
            .write(&rows, &touched)
            .and_then(|()| self.enforce_quota());
        if let Err(e) = result {
            self.note_error(&e);
            if is_corruption(&e) {
                tracing::warn!(target: "mesh::cache", path = %self.path.display(), error = %e,
                    "the parse cache is damaged; rebuilding it");
                self.rebuild_file();
            } else {
                tracing::warn!(target: "mesh::cache", path = %self.path.display(), error = %e,
                    "could not update the parse cache");
            }
        }
    }

    fn write(&self, rows: &[PendingRow], touched: &[i64]) -> rusqlite::Result<()> {
        let Ok(mut conn) = self.writer.lock() else {
            return Ok(());
        };
        let now = now_s();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        {
            let mut insert = tx.prepare_cached(
                "INSERT OR REPLACE INTO facts (root, path, size, mtime_ns, sha, payload, check_sum, used_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?;
            for r in rows {
                insert.execute(params![
                    r.root,
                    r.path,
                    i64::try_from(r.size).unwrap_or(i64::MAX),
                    i64::try_from(r.mtime_ns).unwrap_or(i64::MAX),
                    &r.sha[..],
                    r.payload,
                    &payload_check(&r.payload)[..],
                    now
                ])?;
            }
            let mut touch = tx.prepare_cached("UPDATE facts SET used_at = ?1 WHERE id = ?2")?;
            for id in touched {
                touch.execute(params![now, id])?;
            }
        }
        tx.commit()?;
        self.written.fetch_add(rows.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// When the file's live pages exceed the quota, evicts the least recently used rows until
    /// the rows fill at most [`EVICT_TO`] of it, returns the freed pages to the file system,
    /// and compacts the file if fragmentation still keeps it over the quota.
    fn enforce_quota(&self) -> rusqlite::Result<()> {
        let Ok(conn) = self.writer.lock() else {
            return Ok(());
        };
        let live = |conn: &Connection| -> rusqlite::Result<u64> {
            let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
            let free: i64 = conn.query_row("PRAGMA freelist_count", [], |r| r.get(0))?;
            let size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
            Ok(u64::try_from((pages - free).max(0) * size).unwrap_or(0))
        };
        let mut bytes = live(&conn)?;
        if bytes <= self.quota_bytes {
            return Ok(());
        }
        let mut evicted = 0u64;
        // Row sizes are an estimate of the pages they take; when the file is still over the
        // quota after compacting, the next round aims lower in proportion.
        let mut aim = EVICT_TO;
        for _round in 0..4 {
            let rows = Self::row_sizes(&conn)?;
            let total: u64 = rows.iter().map(|r| r.1).sum();
            let target = (self.quota_bytes as f64 * aim) as u64;
            let mut excess = total.saturating_sub(target);
            let tx = conn.unchecked_transaction()?;
            {
                let mut delete = tx.prepare_cached("DELETE FROM facts WHERE id = ?1")?;
                for (id, size) in &rows {
                    if excess == 0 {
                        break;
                    }
                    delete.execute([id])?;
                    excess = excess.saturating_sub(*size);
                    evicted += 1;
                }
            }
            tx.commit()?;
            conn.execute_batch("PRAGMA incremental_vacuum;")?;
            bytes = live(&conn)?;
            if bytes > self.quota_bytes {
                // Half-empty pages are not on the free list; only a rewrite reclaims them.
                conn.execute_batch("VACUUM;")?;
                bytes = live(&conn)?;
            }
            if bytes <= self.quota_bytes {
                break;
            }
            aim *= self.quota_bytes as f64 / bytes as f64;
        }
        let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        self.evicted.fetch_add(evicted, Ordering::Relaxed);
        tracing::debug!(target: "mesh::cache", evicted, bytes, quota = self.quota_bytes,
            "parse cache trimmed to its quota");
        Ok(())
    }

    /// Every row's id and approximate stored size, least recently used first.
    fn row_sizes(conn: &Connection) -> rusqlite::Result<Vec<(i64, u64)>> {
        let mut st = conn.prepare(
            "SELECT id, length(payload) + length(root) + length(path) + 96 \
             FROM facts ORDER BY used_at, id",
        )?;
        let mapped = st.query_map([], |r| {
            Ok((r.get(0)?, u64::try_from(r.get::<_, i64>(1)?).unwrap_or(0)))
        })?;
        mapped.collect()
    }

    /// Deletes and recreates a damaged file (the salt is re-read from the open connection).
    fn rebuild_file(&self) {
        let Ok(mut conn) = self.writer.lock() else {
            return;
        };
        let salt: String = conn
            .query_row("SELECT value FROM meta WHERE key = 'salt'", [], |r| {
                r.get(0)
            })
            .unwrap_or_default();
        // Close our handle before removing the files.
        let placeholder = match Connection::open_in_memory() {
            Ok(c) => c,
            Err(_) => return,
        };
        drop(std::mem::replace(&mut *conn, placeholder));
        remove_db_files(&self.path);
        match open_and_prepare(&self.path, &salt) {
            Ok(fresh) => *conn = fresh,
            Err(e) => tracing::warn!(target: "mesh::cache", path = %self.path.display(),
                error = %e, "could not recreate the parse cache; it stays empty for this run"),
        }
    }
}

/// One stored row, as read back.
#[derive(Debug, Clone)]
pub struct StoredRow {
    id: i64,
    size: i64,
    sha: Vec<u8>,
    payload: Vec<u8>,
    check: Vec<u8>,
    used_at: i64,
}

impl StoredRow {
    fn read(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredRow> {
        Ok(StoredRow {
            id: r.get(0)?,
            size: r.get(1)?,
            sha: r.get(2)?,
            payload: r.get(3)?,
            check: r.get(4)?,
            used_at: r.get(5)?,
        })
    }
}

/// Root label, root-relative path and content hash.
type RowKey = (Box<str>, Box<str>, [u8; 32]);

/// The whole table read in one sequential scan, for a first build that would otherwise look
/// up every file on its own.
#[derive(Debug, Default)]
pub struct LoadedRows {
    rows: std::collections::HashMap<RowKey, StoredRow>,
    loaded_at: i64,
}

impl LoadedRows {
    /// Number of rows loaded.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when nothing was loaded.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// How an extraction thread asks the cache: the preloaded table or its own connection.
pub enum Lookup<'c> {
    Loaded(&'c FactCache, &'c LoadedRows),
    Query(CacheReader<'c>),
}

impl Lookup<'_> {
    /// The cached facts of `root`/`path` for content of `size` bytes hashing to `sha`.
    pub fn get(&mut self, root: &str, path: &str, size: u64, sha: &[u8; 32]) -> Option<FileFacts> {
        match self {
            Lookup::Query(reader) => reader.get(root, path, size, sha),
            Lookup::Loaded(cache, loaded) => {
                let row = loaded.rows.get(&(Box::from(root), Box::from(path), *sha));
                let facts = cache.accept(row, root, path, size, sha);
                if facts.is_some()
                    && row.is_some_and(|r| loaded.loaded_at - r.used_at > TOUCH_GRANULARITY_S)
                    && let Ok(mut t) = cache.touched.lock()
                {
                    t.extend(row.map(|r| r.id));
                }
                facts
            }
        }
    }
}

/// One extraction thread's view of the cache.
pub struct CacheReader<'a> {
    cache: &'a FactCache,
    conn: Connection,
    now: i64,
    touched: Vec<i64>,
}

impl CacheReader<'_> {
    /// The cached facts of `root`/`path` if its size and content hash match and the payload
    /// is intact; counts a hit or a miss.
    pub fn get(&mut self, root: &str, path: &str, size: u64, sha: &[u8; 32]) -> Option<FileFacts> {
        let row = self
            .conn
            .prepare_cached(
                "SELECT id, size, sha, payload, check_sum, used_at FROM facts \
                 WHERE root = ?1 AND path = ?2 AND sha = ?3",
            )
            .and_then(|mut st| {
                st.query_row(params![root, path, &sha[..]], StoredRow::read)
                    .optional()
            });
        let found = match row {
            Ok(found) => found,
            Err(e) => {
                self.cache.note_error(&e);
                None
            }
        };
        let facts = self.cache.accept(found.as_ref(), root, path, size, sha);
        if let Some(r) =
            found.filter(|r| facts.is_some() && self.now - r.used_at > TOUCH_GRANULARITY_S)
        {
            self.touched.push(r.id);
        }
        facts
    }
}

impl Drop for CacheReader<'_> {
    fn drop(&mut self) {
        if !self.touched.is_empty()
            && let Ok(mut t) = self.cache.touched.lock()
        {
            t.append(&mut self.touched);
        }
    }
}

/// Opens the file (created `0600`), checks it is a database of our schema for this salt, and
/// resets it when it is not. Corruption surfaces here as an error the caller can act on.
fn open_and_prepare(path: &Path, salt: &str) -> rusqlite::Result<Connection> {
    create_private_file(path);
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // Reading the header is what tells a non-database file apart.
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let tables: i64 = conn.query_row(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'",
        [],
        |r| r.get(0),
    )?;
    if tables == 0 {
        // auto_vacuum only takes effect before the first table exists.
        conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL;")?;
    }
    let _ = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0));
    conn.execute_batch("PRAGMA synchronous = NORMAL;")?;
    if version != SCHEMA_VERSION {
        conn.execute_batch("DROP TABLE IF EXISTS facts; DROP TABLE IF EXISTS meta;")?;
    }
    conn.execute_batch(&format!(
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
         CREATE TABLE IF NOT EXISTS facts (
             id INTEGER PRIMARY KEY, root TEXT NOT NULL, path TEXT NOT NULL,
             size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, sha BLOB NOT NULL,
             payload BLOB NOT NULL, check_sum BLOB NOT NULL, used_at INTEGER NOT NULL,
             UNIQUE (root, path, sha));
         CREATE INDEX IF NOT EXISTS facts_lru ON facts (used_at);
         PRAGMA user_version = {SCHEMA_VERSION};"
    ))?;
    let stored: Option<String> = conn
        .query_row("SELECT value FROM meta WHERE key = 'salt'", [], |r| {
            r.get(0)
        })
        .optional()?;
    if stored.as_deref() != Some(salt) {
        if stored.is_some() {
            tracing::info!(target: "mesh::cache",
                "the build or the custom patterns changed; clearing the parse cache");
        }
        conn.execute_batch("DELETE FROM facts;")?;
        conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('salt', ?1)",
            [salt],
        )?;
    }
    // No full integrity check here (it reads the whole file, on the way to the first
    // answer): damage deeper in the file surfaces as SQLITE_CORRUPT on a lookup, which marks
    // the cache for a rebuild at the next flush, and every payload carries its own checksum.
    Ok(conn)
}

fn remove_db_files(path: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(p));
    }
}

/// Creates the missing directories of `dir`, each `0700`.
fn create_private_dirs(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Creates the file `0600` if missing (SQLite then gives `-wal`/`-shm` the same mode).
fn create_private_file(path: &Path) {
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path);
    if let Ok(file) = opened
        && let Ok(meta) = file.metadata()
        && meta.permissions().mode() & 0o777 != 0o600
    {
        let _ = file.set_permissions(std::fs::Permissions::from_mode(0o600));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::facts::{Symbol, SymbolKind};

    fn scratch(tag: &str) -> PathBuf {
        crate::scratch::fresh_dir(&format!("cache-{tag}"))
    }

    fn facts(name: &str) -> FileFacts {
        FileFacts {
            symbols: vec![Symbol {
                name: name.into(),
                kind: SymbolKind::Message,
                line: 1,
                end_line: 2,
                doc_line: None,
                container: None,
            }],
            ..FileFacts::default()
        }
    }

    fn row(path: &str, content: &str, f: &FileFacts) -> PendingRow {
        PendingRow {
            root: ".".into(),
            path: path.into(),
            size: content.len() as u64,
            mtime_ns: 1,
            sha: content_hash(content.as_bytes()),
            payload: encode_facts(f),
        }
    }

    #[test]
    fn the_config_switch_turns_the_cache_on_and_off() {
        if std::env::var_os("MESH_CACHE").is_some() {
            return; // the environment wins over the configuration; nothing to check here
        }
        let dir = scratch("switch");
        let mut config = crate::config::discover(&dir, None).expect("config");
        assert_eq!(wanted(&config), ENABLED_BY_DEFAULT, "no [cache] section");
        config.cache.enabled = true;
        assert!(wanted(&config), "[cache] enabled = true");
        config.cache.enabled = false;
        assert!(!wanted(&config), "[cache] enabled = false");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn workspace_id_is_16_hex_and_depends_on_the_dir() {
        let a = workspace_id(Path::new("/nonexistent/a"));
        let b = workspace_id(Path::new("/nonexistent/b"));
        assert_eq!(a.len(), 16);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        assert_eq!(a, workspace_id(Path::new("/nonexistent/a")));
    }

    #[test]
    fn hits_need_the_same_size_and_content() {
        let dir = scratch("hits");
        let db = dir.join("sub/c.db");
        let cache = FactCache::open(&db, "salt-1", 1 << 20).unwrap();
        let f = facts("Alpha");
        cache.queue(vec![row("a.proto", "message Alpha {}", &f)]);
        cache.flush();
        let mut r = cache.reader().unwrap();
        let sha = content_hash(b"message Alpha {}");
        assert_eq!(r.get(".", "a.proto", 16, &sha), Some(f));
        assert_eq!(r.get(".", "a.proto", 17, &sha), None, "size differs");
        assert_eq!(
            r.get(".", "a.proto", 16, &content_hash(b"message Bravo {}")),
            None
        );
        assert_eq!(r.get("other", "a.proto", 16, &sha), None, "another root");
        drop(r);
        let s = cache.stats();
        assert_eq!((s.hits, s.misses, s.written), (1, 3, 1));
        let mode = std::fs::metadata(&db).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = std::fs::metadata(db.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(dir_mode, 0o700);
        // Another build (salt) starts empty.
        drop(cache);
        let other = FactCache::open(&db, "salt-2", 1 << 20).unwrap();
        assert_eq!(other.reader().unwrap().get(".", "a.proto", 16, &sha), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_damaged_file_is_rebuilt_and_a_tampered_payload_is_a_miss() {
        let dir = scratch("damaged");
        let db = dir.join("c.db");
        std::fs::write(&db, vec![0x5a; 8192]).unwrap();
        let cache = FactCache::open(&db, "s", 1 << 20).expect("rebuilt, not fatal");
        cache.queue(vec![row("a.proto", "x", &facts("A"))]);
        cache.flush();
        let sha = content_hash(b"x");
        assert!(
            cache
                .reader()
                .unwrap()
                .get(".", "a.proto", 1, &sha)
                .is_some()
        );
        // Flip the payload behind the cache's back: valid SQLite, wrong bytes.
        {
            let conn = Connection::open(&db).unwrap();
            conn.execute(
                "UPDATE facts SET payload = CAST(REPLACE(CAST(payload AS TEXT), 'A', 'B') AS BLOB)",
                [],
            )
            .unwrap();
        }
        assert_eq!(cache.reader().unwrap().get(".", "a.proto", 1, &sha), None);
        assert!(cache.stats().errors >= 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_quota_evicts_least_recently_used_rows() {
        let dir = scratch("quota");
        let db = dir.join("c.db");
        let quota = 256 * 1024;
        let cache = FactCache::open(&db, "s", quota).unwrap();
        let big = "x".repeat(2000);
        for batch in 0..10 {
            let rows = (0..50)
                .map(|i| {
                    let mut f = facts(&format!("M{batch}_{i}"));
                    f.symbols[0].container = Some(big.clone());
                    let mut r = row(&format!("b{batch}/f{i}.proto"), &format!("{batch}-{i}"), &f);
                    r.mtime_ns = batch;
                    r
                })
                .collect();
            cache.queue(rows);
            cache.flush();
            // Age the rows written so far, so the newest batch is the most recently used.
            let conn = cache.writer.lock().unwrap();
            conn.execute("UPDATE facts SET used_at = used_at - 10", [])
                .unwrap();
        }
        let conn = Connection::open(&db).unwrap();
        let pages: i64 = conn
            .query_row("PRAGMA page_count", [], |r| r.get(0))
            .unwrap();
        let free: i64 = conn
            .query_row("PRAGMA freelist_count", [], |r| r.get(0))
            .unwrap();
        let size: i64 = conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .unwrap();
        assert!(
            ((pages - free) * size) as u64 <= quota,
            "{pages} pages of {size}"
        );
        let newest: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM facts WHERE path LIKE 'b9/%'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let oldest: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM facts WHERE path LIKE 'b0/%'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(newest, 50, "the newest rows survive");
        assert_eq!(oldest, 0, "the oldest rows go first");
        assert!(cache.stats().evicted > 0);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
