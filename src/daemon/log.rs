//! The daemon's log: `~/.cache/mesh-mcp/logs/meshd-<id>.log`, rotated by size.
//!
//! `meshd` outlives the terminal and the client that started it, so its `tracing` output goes
//! to a file instead of stderr. When a write would take the file past [`MAX_LOG_BYTES`], the
//! file becomes `.log.1` (older ones shift to `.2` … `.KEEP`, the oldest is dropped) and a new
//! one is started. The directory is `0700` and the files `0600`: a log can name workspace paths.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tracing::level_filters::LevelFilter;

use crate::logging::{self, LevelFilterSpec, LineSink, LineSubscriber};

/// Size at which the log is rotated.
pub const MAX_LOG_BYTES: u64 = 2 * 1024 * 1024;
/// Rotated generations kept beside the live file (`.1` is the newest).
pub const KEEP: u32 = 3;

/// The per-machine cache root: `$HOME/.cache/mesh-mcp`, else `<temp>/mesh-mcp`.
pub fn cache_root() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".cache").join("mesh-mcp"))
        .unwrap_or_else(|| std::env::temp_dir().join("mesh-mcp"))
}

/// The log file of the daemon for workspace `id`.
pub fn log_path_for(id: &str) -> PathBuf {
    cache_root().join("logs").join(format!("meshd-{id}.log"))
}

/// A size-rotated append-only log file, shared by every thread that logs.
pub struct RotatingLog {
    path: PathBuf,
    max_bytes: u64,
    keep: u32,
    state: Mutex<State>,
}

struct State {
    file: Option<std::fs::File>,
    size: u64,
}

impl RotatingLog {
    /// Opens (creating the directory `0700` and the file `0600`) the log at `path`.
    pub fn open(path: &Path, max_bytes: u64, keep: u32) -> std::io::Result<RotatingLog> {
        if let Some(dir) = path.parent() {
            create_private_dir(dir)?;
        }
        let file = open_append(path)?;
        let size = file.metadata().map_or(0, |m| m.len());
        Ok(RotatingLog {
            path: path.to_path_buf(),
            max_bytes: max_bytes.max(1),
            keep,
            state: Mutex::new(State {
                file: Some(file),
                size,
            }),
        })
    }

    /// Appends one record, rotating first when it would overflow the size limit. A record is
    /// never split across two files.
    pub fn append(&self, bytes: &[u8]) -> std::io::Result<()> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.size > 0 && state.size + bytes.len() as u64 > self.max_bytes {
            state.file = None;
            self.rotate();
            state.size = 0;
        }
        if state.file.is_none() {
            let file = open_append(&self.path)?;
            state.size = file.metadata().map_or(0, |m| m.len());
            state.file = Some(file);
        }
        let Some(file) = state.file.as_mut() else {
            return Ok(());
        };
        file.write_all(bytes)?;
        state.size += bytes.len() as u64;
        Ok(())
    }

    /// Shifts `.log` → `.log.1` → … → `.log.KEEP`; the oldest falls off.
    fn rotate(&self) {
        let generation = |n: u32| {
            let mut p = self.path.clone().into_os_string();
            p.push(format!(".{n}"));
            PathBuf::from(p)
        };
        if self.keep == 0 {
            let _ = std::fs::remove_file(&self.path);
            return;
        }
        let _ = std::fs::remove_file(generation(self.keep));
        for n in (1..self.keep).rev() {
            let _ = std::fs::rename(generation(n), generation(n + 1));
        }
        let _ = std::fs::rename(&self.path, generation(1));
    }
}

fn open_append(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// Creates `dir` (and parents) and makes the leaf `0700`.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Installs the daemon's subscriber: everything the filter lets through goes to `log`, one
/// line each with a UTC timestamp in front (`MESH_LOG`/`RUST_LOG` filter, default `info`), and
/// errors also go to stderr, so a `meshd` started by hand says why it stopped. Later calls do
/// nothing.
pub fn init(log: Option<Arc<RotatingLog>>) {
    let filter = logging::env_filter(LevelFilter::INFO);
    let outputs: Vec<(LevelFilterSpec, LineSink)> = match log {
        Some(log) => vec![
            (
                filter,
                Box::new(move |line: &str| {
                    let stamp = crate::audit::iso8601_utc_ms(now_ms());
                    let _ = log.append(format!("{stamp} {line}").as_bytes());
                }),
            ),
            (
                LevelFilterSpec::all(LevelFilter::ERROR),
                logging::stderr_sink(),
            ),
        ],
        None => vec![(filter, logging::stderr_sink())],
    };
    LineSubscriber::new(outputs).install();
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_by_size_and_keeps_a_few_generations() {
        let dir = crate::scratch::fresh_dir("log-unit");
        let path = dir.join("logs").join("meshd-x.log");
        let log = RotatingLog::open(&path, 100, 2).unwrap();
        for i in 0..10 {
            log.append(format!("{i:02} {}\n", "x".repeat(36)).as_bytes())
                .unwrap();
        }
        // 40-byte records, 100-byte files: two per file; 10 records → live + .1 + .2 kept.
        let live = std::fs::read_to_string(&path).unwrap();
        assert_eq!(live.lines().count(), 2);
        assert!(live.starts_with("08 "), "{live}");
        let one = std::fs::read_to_string(dir.join("logs/meshd-x.log.1")).unwrap();
        assert!(one.starts_with("06 "), "{one}");
        assert!(dir.join("logs/meshd-x.log.2").exists());
        assert!(!dir.join("logs/meshd-x.log.3").exists());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&dir.join("logs")), 0o700);
            assert_eq!(mode(&path), 0o600);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_oversized_record_goes_whole_into_a_fresh_file() {
        let dir = crate::scratch::fresh_dir("log-unit2");
        let path = dir.join("l.log");
        let log = RotatingLog::open(&path, 10, 1).unwrap();
        log.append(b"abc\n").unwrap();
        log.append(&[b'y'; 50]).unwrap();
        assert_eq!(std::fs::read(&path).unwrap().len(), 50);
        assert_eq!(std::fs::read(dir.join("l.log.1")).unwrap(), b"abc\n");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
