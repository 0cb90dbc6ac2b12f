//! The two files beside the database (docs/ARCHITECTURE.md §5): the MAC key (`<db>.key`) and
//! the anchor (`<db>.head`) naming the newest row and the row it has covered the trail since.

use super::chain::hmac_hex;
use super::log::file_id;
use super::{AuditError, to_hex};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// `path` with `suffix` appended to its file name (`audit.db` → `audit.db.key`).
pub(super) fn beside(path: &Path, suffix: &str) -> PathBuf {
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
pub(super) struct Key(pub(super) [u8; 32]);

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
pub(super) fn read_key(db: &Path) -> Result<Option<Key>, AuditError> {
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
pub(super) fn load_or_create_key(db: &Path) -> Result<Key, AuditError> {
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
pub(super) struct Anchor {
    pub(super) seq: u64,
    pub(super) hash: String,
    /// The first row this anchor has covered since it was made: the first keyed row for a
    /// trail anchored from its start (or from the end of its legacy prefix), later when the
    /// anchor file was deleted and had to be made again.
    pub(super) since: u64,
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
pub(super) fn read_anchor(db: &Path, key: Option<&Key>) -> Result<Option<Anchor>, String> {
    match std::fs::read_to_string(anchor_path(db)) {
        Ok(t) => parse_anchor(&t, key),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read it: {e}")),
    }
}

/// The anchor file a writer keeps open: read and rewritten in place with one `pread` and one
/// `pwrite` per append (the text has a fixed width), under SQLite's write lock.
pub(super) struct AnchorFile {
    pub(super) file: std::fs::File,
    pub(super) id: Option<(u64, u64)>,
}

/// Opens `path` for reading and writing, creating it if missing, and makes it `0600` whatever
/// the umask or an earlier mode: the audit's files are the user's alone.
pub(super) fn open_private(path: &Path) -> io::Result<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)?;
    if file.metadata()?.permissions().mode() & 0o777 != 0o600 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(file)
}

impl AnchorFile {
    /// Opens (creating, `0600`) the anchor beside `db`.
    pub(super) fn open(db: &Path) -> io::Result<AnchorFile> {
        let path = anchor_path(db);
        let file = open_private(&path)?;
        Ok(AnchorFile {
            file,
            id: file_id(&path),
        })
    }

    pub(super) fn read(&self, key: &Key) -> Result<Option<Anchor>, String> {
        use std::os::unix::fs::FileExt;
        let mut buf = [0u8; 512];
        let n = self
            .file
            .read_at(&mut buf, 0)
            .map_err(|e| format!("cannot read it: {e}"))?;
        let text = std::str::from_utf8(&buf[..n]).map_err(|_| "it is not text".to_string())?;
        parse_anchor(text, Some(key))
    }

    pub(super) fn write(&self, key: &Key, anchor: &Anchor) -> io::Result<()> {
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
