//! Workspace id and socket naming (docs/ARCHITECTURE.md §4), and the files that sit beside the socket.
//!
//! The workspace id is the first 16 hex characters of SHA-256 over the canonical base dir, a
//! NUL byte and the crate version, so an upgraded binary never finds an older daemon. The
//! socket is `meshd-<id>.sock` in the first of `$MESH_SOCKET_PATH`, `$XDG_RUNTIME_DIR/mesh/`,
//! `~/.cache/mesh/`. That directory must be owned by the caller and closed to everyone else
//! (`0700`): a directory we create gets that mode, an existing one with looser permissions or
//! another owner is refused, because anyone who can reach the socket can read the workspace
//! through the tools. Beside the socket live `meshd-<id>.lock` (the flock that decides which of
//! two racing daemons serves) and `meshd-<id>.meta` (pid, version and start time, written after
//! the bind).

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Overrides the socket directory (tests, benches, unusual setups).
pub const SOCKET_DIR_ENV: &str = "MESH_SOCKET_PATH";

/// The longest socket path `bind(2)` accepts on Linux (`sun_path` is 108 bytes with the NUL).
pub const MAX_SOCKET_PATH_BYTES: usize = 107;

/// Why no usable socket path could be produced.
#[derive(Debug)]
pub enum SocketError {
    /// None of `MESH_SOCKET_PATH`, `XDG_RUNTIME_DIR`, `HOME` is set.
    NoLocation,
    /// The directory could not be created or read.
    Io { dir: PathBuf, error: std::io::Error },
    /// The path exists but is not a directory.
    NotADirectory { dir: PathBuf },
    /// The directory belongs to another user.
    WrongOwner { dir: PathBuf, owner: u32, uid: u32 },
    /// The directory is open to the group or to others.
    TooOpen { dir: PathBuf, mode: u32 },
    /// The socket path is longer than `bind(2)` accepts.
    PathTooLong { path: PathBuf },
}

impl fmt::Display for SocketError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SocketError::NoLocation => write!(
                f,
                "no place for the meshd socket: none of {SOCKET_DIR_ENV}, XDG_RUNTIME_DIR, HOME is set; \
set {SOCKET_DIR_ENV} to a private directory"
            ),
            SocketError::Io { dir, error } => write!(
                f,
                "cannot prepare the socket directory {}: {error}; check the parent's permissions or set {SOCKET_DIR_ENV}",
                dir.display()
            ),
            SocketError::NotADirectory { dir } => write!(
                f,
                "the socket directory {} exists but is not a directory; remove it or set {SOCKET_DIR_ENV}",
                dir.display()
            ),
            SocketError::WrongOwner { dir, owner, uid } => write!(
                f,
                "refusing the socket directory {}: it belongs to uid {owner}, not to you (uid {uid}); \
another user could read your workspace through it. Use a directory you own via {SOCKET_DIR_ENV}",
                dir.display()
            ),
            SocketError::TooOpen { dir, mode } => write!(
                f,
                "refusing the socket directory {}: its mode is {mode:04o}, open to other users; \
run `chmod 700 {}` (or point {SOCKET_DIR_ENV} at a private directory)",
                dir.display(),
                dir.display()
            ),
            SocketError::PathTooLong { path } => write!(
                f,
                "the socket path {} is longer than {MAX_SOCKET_PATH_BYTES} bytes, which bind(2) cannot take; \
set {SOCKET_DIR_ENV} to a shorter directory",
                path.display()
            ),
        }
    }
}

impl std::error::Error for SocketError {}

/// The workspace id: the first 16 hex characters of SHA-256(canonical base dir, NUL, crate
/// version).
pub fn workspace_id(base: &Path) -> String {
    let mut hasher = Sha256::new();
    hasher.update(path_bytes(base));
    hasher.update([0u8]);
    hasher.update(crate::VERSION.as_bytes());
    let digest = hasher.finalize();
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(unix)]
fn path_bytes(p: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    p.as_os_str().as_bytes().to_vec()
}

#[cfg(not(unix))]
fn path_bytes(p: &Path) -> Vec<u8> {
    p.to_string_lossy().into_owned().into_bytes()
}

/// The socket file name for a workspace id.
pub fn socket_file_name(id: &str) -> String {
    format!("meshd-{id}.sock")
}

/// Resolves the socket directory from the environment, without touching the file system:
/// `$MESH_SOCKET_PATH` (relative paths against the current directory), else
/// `$XDG_RUNTIME_DIR/mesh` when `XDG_RUNTIME_DIR` is an existing directory, else
/// `$HOME/.cache/mesh`.
pub fn socket_dir() -> Result<PathBuf, SocketError> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    resolve_dir(&|k| std::env::var_os(k).filter(|v| !v.is_empty()), &cwd)
}

fn resolve_dir(
    env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    cwd: &Path,
) -> Result<PathBuf, SocketError> {
    if let Some(dir) = env(SOCKET_DIR_ENV) {
        return Ok(cwd.join(dir));
    }
    if let Some(runtime) = env("XDG_RUNTIME_DIR").map(PathBuf::from)
        && runtime.is_absolute()
        && runtime.is_dir()
    {
        return Ok(runtime.join("mesh"));
    }
    match env("HOME").map(PathBuf::from) {
        Some(home) if home.is_absolute() => Ok(home.join(".cache").join("mesh")),
        _ => Err(SocketError::NoLocation),
    }
}

/// The socket path for the workspace at `base` (canonical), with its directory created `0700`
/// when missing and checked when present.
pub fn socket_path_for(base: &Path) -> Result<PathBuf, SocketError> {
    let dir = socket_dir()?;
    ensure_dir(&dir)?;
    let path = dir.join(socket_file_name(&workspace_id(base)));
    check_length(&path)?;
    Ok(path)
}

/// Fails when `path` is too long to bind.
pub fn check_length(path: &Path) -> Result<(), SocketError> {
    if path_bytes(path).len() > MAX_SOCKET_PATH_BYTES {
        return Err(SocketError::PathTooLong {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// Creates `dir` with mode `0700` when it does not exist (parents with the default mode), then
/// checks it with [`check_dir`].
pub fn ensure_dir(dir: &Path) -> Result<(), SocketError> {
    match std::fs::symlink_metadata(dir) {
        Ok(_) => check_dir(dir),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(parent) = dir.parent() {
                std::fs::create_dir_all(parent).map_err(|error| SocketError::Io {
                    dir: parent.to_path_buf(),
                    error,
                })?;
            }
            let mut builder = std::fs::DirBuilder::new();
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt;
                builder.mode(0o700);
            }
            match builder.create(dir) {
                Ok(()) => {
                    // The umask may have narrowed 0700 (say to 0500); we created it, so set it.
                    #[cfg(unix)]
                    {
                        use std::os::unix::fs::PermissionsExt;
                        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                            .map_err(|error| SocketError::Io {
                                dir: dir.to_path_buf(),
                                error,
                            })?;
                    }
                }
                // Another process created it in between: check what it made.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(error) => {
                    return Err(SocketError::Io {
                        dir: dir.to_path_buf(),
                        error,
                    });
                }
            }
            check_dir(dir)
        }
        Err(error) => Err(SocketError::Io {
            dir: dir.to_path_buf(),
            error,
        }),
    }
}

/// Checks, without changing anything, that `dir` is a directory (not a symlink to one) owned
/// by this user with no group or other permission bits.
pub fn check_dir(dir: &Path) -> Result<(), SocketError> {
    let meta = std::fs::symlink_metadata(dir).map_err(|error| SocketError::Io {
        dir: dir.to_path_buf(),
        error,
    })?;
    if !meta.is_dir() {
        return Err(SocketError::NotADirectory {
            dir: dir.to_path_buf(),
        });
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let uid = crate::sys::uid();
        if meta.uid() != uid {
            return Err(SocketError::WrongOwner {
                dir: dir.to_path_buf(),
                owner: meta.uid(),
                uid,
            });
        }
        let mode = meta.mode() & 0o7777;
        if mode & 0o077 != 0 {
            return Err(SocketError::TooOpen {
                dir: dir.to_path_buf(),
                mode,
            });
        }
    }
    Ok(())
}

/// The lock file beside a socket (`meshd-<id>.lock`). It is never deleted: unlinking a lock
/// file while another process waits on it would let two daemons each lock a different inode.
pub fn lock_path(socket: &Path) -> PathBuf {
    socket.with_extension("lock")
}

/// The meta file beside a socket (`meshd-<id>.meta`).
pub fn meta_path(socket: &Path) -> PathBuf {
    socket.with_extension("meta")
}

/// What a running daemon writes beside its socket once it has bound it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DaemonMeta {
    pub pid: u32,
    pub version: String,
    /// Start time, milliseconds since the Unix epoch.
    pub started_at_ms: u64,
    /// The daemon's log file.
    pub log: PathBuf,
    /// Whether the network sandbox is installed.
    #[serde(default)]
    pub sandboxed: bool,
}

/// Reads the meta file beside `socket`; `None` when it is missing or unreadable.
pub fn read_meta(socket: &Path) -> Option<DaemonMeta> {
    let text = std::fs::read_to_string(meta_path(socket)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Writes the meta file beside `socket` atomically (temporary file, then rename), mode `0600`.
pub fn write_meta(socket: &Path, meta: &DaemonMeta) -> std::io::Result<()> {
    let path = meta_path(socket);
    let tmp = socket.with_extension(format!("meta.{}.tmp", std::process::id()));
    let text = serde_json::to_string(meta).map_err(std::io::Error::other)?;
    write_private(&tmp, text.as_bytes())?;
    std::fs::rename(&tmp, &path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Removes the meta file beside `socket` if it still names `pid` (a successor's is kept).
pub fn remove_meta(socket: &Path, pid: u32) {
    if read_meta(socket).is_none_or(|m| m.pid == pid) {
        let _ = std::fs::remove_file(meta_path(socket));
    }
}

/// Creates or truncates `path` with mode `0600` (whatever the umask) and writes `bytes`.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    file.write_all(bytes)
}

/// Opens (creating `0600`) the lock file beside `socket`.
pub fn open_lock(socket: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(lock_path(socket))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let pairs: Vec<(String, OsString)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |k| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }

    #[test]
    fn workspace_id_is_16_hex_and_depends_on_the_path() {
        let a = workspace_id(Path::new("/work/a"));
        let b = workspace_id(Path::new("/work/b"));
        assert_eq!(a.len(), 16);
        assert!(
            a.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_uppercase())
        );
        assert_ne!(a, b);
        assert_eq!(a, workspace_id(Path::new("/work/a")));
        // SHA-256("/work/a\0<version>") computed independently of workspace_id.
        let mut h = Sha256::new();
        h.update(format!("/work/a\0{}", crate::VERSION).as_bytes());
        let hex: String = h.finalize()[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(a, hex);
        assert_eq!(socket_file_name(&a), format!("meshd-{a}.sock"));
    }

    #[test]
    fn socket_dir_resolution_order() {
        let cwd = Path::new("/cwd");
        let tmp = std::env::temp_dir();
        let tmp_s = tmp.to_string_lossy().into_owned();
        let got = resolve_dir(
            &env_of(&[
                ("MESH_SOCKET_PATH", "rel/sock"),
                ("XDG_RUNTIME_DIR", &tmp_s),
                ("HOME", "/h"),
            ]),
            cwd,
        )
        .unwrap();
        assert_eq!(got, Path::new("/cwd/rel/sock"));
        let got =
            resolve_dir(&env_of(&[("XDG_RUNTIME_DIR", &tmp_s), ("HOME", "/h")]), cwd).unwrap();
        assert_eq!(got, tmp.join("mesh"));
        // A runtime dir that does not exist is skipped.
        let got = resolve_dir(
            &env_of(&[("XDG_RUNTIME_DIR", "/definitely/not/here"), ("HOME", "/h")]),
            cwd,
        )
        .unwrap();
        assert_eq!(got, Path::new("/h/.cache/mesh"));
        assert!(matches!(
            resolve_dir(&env_of(&[]), cwd),
            Err(SocketError::NoLocation)
        ));
    }

    #[cfg(unix)]
    #[test]
    fn ensure_dir_creates_0700_and_refuses_open_dirs() {
        use std::os::unix::fs::PermissionsExt;
        let base = crate::scratch::fresh_dir("sock-unit");
        let dir = base.join("a").join("mesh");
        ensure_dir(&dir).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = ensure_dir(&dir).unwrap_err();
        assert!(
            matches!(err, SocketError::TooOpen { mode: 0o755, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("chmod 700"), "{err}");
        let file = base.join("file");
        std::fs::write(&file, b"x").unwrap();
        assert!(matches!(
            check_dir(&file),
            Err(SocketError::NotADirectory { .. })
        ));
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn long_paths_are_refused_before_bind() {
        let long = PathBuf::from(format!("/{}", "x".repeat(120)));
        assert!(matches!(
            check_length(&long),
            Err(SocketError::PathTooLong { .. })
        ));
        assert!(check_length(Path::new("/run/user/1000/mesh/meshd-0123456789abcdef.sock")).is_ok());
    }

    #[test]
    fn meta_round_trips_and_is_private() {
        let dir = crate::scratch::fresh_dir("meta-unit");
        let socket = dir.join("meshd-0000000000000000.sock");
        let meta = DaemonMeta {
            pid: 42,
            version: "9.9.9".into(),
            started_at_ms: 1,
            log: dir.join("log"),
            sandboxed: true,
        };
        write_meta(&socket, &meta).unwrap();
        assert_eq!(read_meta(&socket), Some(meta));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(meta_path(&socket))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        remove_meta(&socket, 7); // not ours: kept
        assert!(read_meta(&socket).is_some());
        remove_meta(&socket, 42);
        assert!(read_meta(&socket).is_none());
        assert_eq!(lock_path(&socket), dir.join("meshd-0000000000000000.lock"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
