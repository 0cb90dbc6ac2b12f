//! `meshd`: one shared index per workspace behind a Unix socket, and the `mesh-mcp run` proxy
//! that connects an MCP client to it.
//!
//! | File | What lives there |
//! |---|---|
//! | [`socket`] | workspace id, socket directory rules, the lock and meta files beside the socket |
//! | [`serve`] | the daemon: bind, sandbox, background index, accept loop, `handle_client`, idle exit |
//! | [`proxy`] | `mesh-mcp run`: connect or spawn `meshd`, bridge stdio to the socket, fall back |
//! | [`sandbox`] | the seccomp filter that forbids `meshd` IP sockets |
//! | [`log`] | the daemon's size-rotated log file |
//!
//! [`probe`] is the read-only view `doctor` uses: where the socket is, whether a daemon answers
//! there, and what its meta file says.

pub mod log;
pub mod proxy;
pub mod sandbox;
pub mod serve;
pub mod socket;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

/// Exit status of a `meshd` that found another daemon already serving its socket.
pub const EXIT_ALREADY_RUNNING: i32 = 3;

/// Idle timeout in seconds (default 1800; `0` never exits when idle).
pub const IDLE_ENV: &str = "MESH_DAEMON_IDLE_SECS";
/// Grace in seconds for a daemon no client ever reached (default 60).
pub const GRACE_ENV: &str = "MESH_DAEMON_GRACE_SECS";
/// Default idle timeout.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(30 * 60);
/// Default grace for a daemon that never had a client.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(60);

/// Clients one daemon serves at once (default [`DEFAULT_MAX_CLIENTS`]); one more is told so
/// and closed, and `mesh-mcp run` then serves it in its own process.
pub const MAX_CLIENTS_ENV: &str = "MESH_DAEMON_MAX_CLIENTS";
/// Default cap on connected clients: each costs ~100 KB of buffers while idle, so 64 cost a
/// few MiB, where 3,000 unbounded idle connections cost 274 MB.
pub const DEFAULT_MAX_CLIENTS: usize = 64;

/// What a running daemon tells `index_status` and `doctor` about itself.
#[derive(Debug)]
pub struct DaemonStatus {
    pub pid: u32,
    pub version: &'static str,
    pub started_at: SystemTime,
    pub socket: PathBuf,
    /// The daemon's log file.
    pub log: PathBuf,
    /// Whether the network sandbox is installed.
    pub sandboxed: bool,
    /// Clients connected right now.
    pub clients: AtomicUsize,
    /// Clients accepted since start.
    pub clients_total: AtomicU64,
    /// Milliseconds after `started` of the last connect or disconnect (0: none yet).
    last_activity_ms: AtomicU64,
    started: Instant,
}

impl DaemonStatus {
    /// The status of this process serving `socket`.
    pub fn new(socket: PathBuf, log: PathBuf, sandboxed: bool) -> DaemonStatus {
        DaemonStatus {
            pid: std::process::id(),
            version: crate::VERSION,
            started_at: SystemTime::now(),
            socket,
            log,
            sandboxed,
            clients: AtomicUsize::new(0),
            clients_total: AtomicU64::new(0),
            last_activity_ms: AtomicU64::new(0),
            started: Instant::now(),
        }
    }

    /// Time since the daemon started.
    pub fn uptime(&self) -> Duration {
        self.started.elapsed()
    }

    /// Records a connect: one more client, activity now.
    pub fn client_connected(&self) {
        self.clients.fetch_add(1, Ordering::AcqRel);
        self.clients_total.fetch_add(1, Ordering::Relaxed);
        self.touch();
    }

    /// Records a disconnect: one client fewer, activity now.
    pub fn client_disconnected(&self) {
        self.touch();
        self.clients.fetch_sub(1, Ordering::AcqRel);
    }

    fn touch(&self) {
        let ms = (self.started.elapsed().as_millis() as u64).max(1);
        self.last_activity_ms.fetch_max(ms, Ordering::AcqRel);
    }

    /// When the daemon should exit if nothing changes: `None` while a client is connected or
    /// when the timeout that applies is zero (disabled); otherwise the instant `idle` after the last activity, or
    /// `grace` after start when no client ever came.
    pub fn idle_deadline(&self, idle: Duration, grace: Duration) -> Option<Instant> {
        if self.clients.load(Ordering::Acquire) > 0 {
            return None;
        }
        match self.last_activity_ms.load(Ordering::Acquire) {
            0 if grace.is_zero() => None,
            0 => Some(self.started + grace),
            _ if idle.is_zero() => None,
            ms => Some(self.started + Duration::from_millis(ms) + idle),
        }
    }
}

/// What `doctor` (or anyone) can learn about the daemon of a workspace without being served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DaemonProbe {
    /// The socket path, when one could be determined.
    pub socket: Option<PathBuf>,
    /// A connection to the socket succeeded.
    pub reachable: bool,
    /// From the meta file.
    pub pid: Option<u32>,
    /// From the meta file.
    pub version: Option<String>,
    /// From the meta file's start time.
    pub uptime: Option<Duration>,
    /// From the meta file.
    pub sandboxed: Option<bool>,
    /// Where that daemon logs.
    pub log: PathBuf,
    /// Permission or placement problems, each a sentence naming the fix.
    pub problems: Vec<String>,
}

impl DaemonProbe {
    /// A probe of workspace `id` that has learnt nothing yet but where its daemon logs.
    fn nothing_yet(id: &str) -> Self {
        DaemonProbe {
            socket: None,
            reachable: false,
            pid: None,
            version: None,
            uptime: None,
            sandboxed: None,
            log: log::log_path_for(id),
            problems: Vec::new(),
        }
    }
}

/// [`probe`] with the socket directory given instead of taken from the environment.
pub fn probe_at(base: &Path, dir: &Path) -> DaemonProbe {
    let id = socket::workspace_id(base);
    let mut out = DaemonProbe::nothing_yet(&id);
    let path = dir.join(socket::socket_file_name(&id));
    out.socket = Some(path.clone());
    match socket::check_dir(dir) {
        Ok(()) => {}
        Err(socket::SocketError::Io { error, .. })
            if error.kind() == std::io::ErrorKind::NotFound =>
        {
            return out;
        }
        Err(e) => out.problems.push(e.to_string()),
    }
    #[cfg(unix)]
    if let Ok(meta) = std::fs::symlink_metadata(&path) {
        use std::os::unix::fs::MetadataExt;
        let mode = meta.mode() & 0o777;
        if mode & 0o077 != 0 {
            out.problems.push(format!(
                "the socket {} has mode {mode:04o}, open to other users; stop meshd (it recreates the socket 0600) or run `chmod 600 {}`",
                path.display(),
                path.display()
            ));
        }
        if meta.uid() != crate::sys::uid() {
            out.problems.push(format!(
                "the socket {} belongs to uid {}, not to you; remove it",
                path.display(),
                meta.uid()
            ));
        }
    }
    if let Some(meta) = socket::read_meta(&path) {
        out.pid = Some(meta.pid);
        out.uptime = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .ok()
            .map(|now| now.saturating_sub(Duration::from_millis(meta.started_at_ms)));
        out.version = Some(meta.version);
        out.sandboxed = Some(meta.sandboxed);
        out.log = meta.log;
    }
    #[cfg(unix)]
    {
        out.reachable = std::os::unix::net::UnixStream::connect(&path).is_ok();
    }
    out
}

/// Reads a duration in whole seconds from an environment variable.
pub(crate) fn env_secs(name: &str, default: Duration) -> Duration {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(default, Duration::from_secs)
}

/// Entry point of the `meshd` binary; returns the process exit status.
pub fn main() -> i32 {
    match crate::cli::utf8_args("meshd") {
        Ok(args) => serve::main(args),
        Err(status) => status,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_deadline_counts_short_sessions_and_grace() {
        let s = DaemonStatus::new(PathBuf::from("/s"), PathBuf::from("/l"), false);
        let idle = Duration::from_secs(30);
        let grace = Duration::from_secs(60);
        assert_eq!(s.idle_deadline(idle, grace), Some(s.started + grace));
        s.client_connected();
        assert_eq!(s.idle_deadline(idle, grace), None);
        s.client_disconnected();
        let d = s.idle_deadline(idle, grace).unwrap();
        // A session that came and went moves the deadline to `idle` after it, not `grace`.
        assert!(d >= s.started + idle && d < s.started + idle + Duration::from_secs(5));
        assert_eq!(s.idle_deadline(Duration::ZERO, grace), None);
        assert_eq!(s.clients_total.load(Ordering::Relaxed), 1);
    }
}
