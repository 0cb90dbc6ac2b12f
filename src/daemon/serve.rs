//! The daemon: `meshd [--socket PATH] [--config FILE]`, started by `mesh-mcp run` in the
//! workspace directory.
//!
//! Start-up order matters. The socket is bound before anything slow happens (the proxy polls
//! for it), and the index is built in the background afterwards, so `initialize` is answered
//! at once and `tools/call` waits for the first snapshot exactly as in standalone mode:
//!
//! 1. configuration, workspace id, log file;
//! 2. the lock beside the socket: of two daemons racing for one socket, the one that gets the
//!    `flock` serves and the other exits with [`EXIT_ALREADY_RUNNING`];
//! 3. a socket file left by a dead daemon is removed; bind with a `0177` umask, then `chmod
//!    0600` (the umask alone is not trusted);
//! 4. the network sandbox, then the meta file (pid, version) — after the bind, so a loser never
//!    overwrites the winner's;
//! 5. the indexer, the accept loop, the idle watchdog and the signal handler.
//!
//! Every connection runs [`handle_client`], the same session loop as stdio, with its own
//! session id; tool calls run on the blocking pool, so a slow call on one connection never
//! delays another. The daemon exits [`DEFAULT_IDLE`] after the last client left (tracked from
//! connect and disconnect times, so a short session counts), [`DEFAULT_GRACE`] after start
//! when no client ever came, or on SIGINT/SIGTERM; it then removes the socket (first, so new
//! clients start a fresh daemon), drains its sessions and removes the meta file.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_lite::io::{AsyncRead, AsyncWrite};

use super::{
    DEFAULT_GRACE, DEFAULT_IDLE, DaemonStatus, EXIT_ALREADY_RUNNING, GRACE_ENV, IDLE_ENV, log,
    sandbox, socket,
};
use crate::server::{self, Shared};

const USAGE: &str = "\
meshd — the shared mesh-mcp index for one workspace, served on a Unix socket

Usage: meshd [--socket PATH] [--config FILE]

Started by `mesh-mcp run` in the workspace directory; you rarely run it by hand.
  --socket PATH   serve on this socket (default: meshd-<id>.sock under $MESH_SOCKET_PATH,
                  $XDG_RUNTIME_DIR/mesh or ~/.cache/mesh)
  --config FILE   read this mesh-mcp.toml instead of discovering one
  --version, -V   print the version
Environment: MESH_DAEMON_IDLE_SECS (default 1800, 0 = never), MESH_DAEMON_GRACE_SECS (60),
MESH_DAEMON_SANDBOX (unset = best effort, required, off), MESH_LOG (log filter).

Example: MESH_DAEMON_SANDBOX=required meshd
";

/// How a start-up step ended the daemon early.
enum Stop {
    /// Another daemon serves this socket.
    AlreadyRunning(String),
    /// A real failure.
    Failed(String),
}

/// Runs `meshd` with these arguments; returns the exit status.
pub fn main(args: Vec<String>) -> i32 {
    let mut socket_arg: Option<PathBuf> = None;
    let mut config_arg: Option<PathBuf> = None;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--version" | "-V" => {
                // A machine-readable answer on stdout: the proxy compares it before spawning.
                use std::io::Write;
                let _ = writeln!(std::io::stdout(), "meshd {}", crate::VERSION);
                return 0;
            }
            "--help" | "-h" => {
                use std::io::Write;
                let _ = std::io::stdout().write_all(USAGE.as_bytes());
                return 0;
            }
            "--socket" => match it.next() {
                Some(p) => socket_arg = Some(p.into()),
                None => return usage_error("--socket needs a path"),
            },
            "--config" | "-c" => match it.next() {
                Some(p) => config_arg = Some(p.into()),
                None => return usage_error("--config needs a file path"),
            },
            other => return usage_error(&format!("unknown option `{other}`")),
        }
    }
    crate::logging::install_panic_hook();
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            log::init(None);
            tracing::error!(target: "mesh::daemon", "cannot read the current directory: {e}");
            return 1;
        }
    };
    let config = match crate::config::discover(&cwd, config_arg.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            log::init(None);
            tracing::error!(target: "mesh::daemon", "{e}");
            return 1;
        }
    };
    let id = socket::workspace_id(&config.base_dir);
    let log_path = log::log_path_for(&id);
    match log::RotatingLog::open(&log_path, log::MAX_LOG_BYTES, log::KEEP) {
        Ok(file) => log::init(Some(Arc::new(file))),
        Err(e) => {
            log::init(None);
            tracing::warn!(target: "mesh::daemon", "cannot open the log {}: {e}; logging to stderr", log_path.display());
        }
    }
    for w in &config.warnings {
        tracing::warn!(target: "mesh::config", "{w}");
    }
    let socket_path = match socket_arg {
        Some(p) => {
            let p = cwd.join(p);
            let dir = p.parent().map(Path::to_path_buf).unwrap_or_default();
            socket::ensure_dir(&dir)
                .and_then(|()| socket::check_length(&p))
                .map(|()| p)
        }
        None => socket::socket_path_for(&config.base_dir),
    };
    let socket_path = match socket_path {
        Ok(p) => p,
        Err(e) => {
            tracing::error!(target: "mesh::daemon", "{e}");
            return 1;
        }
    };
    match run(config, &socket_path, log_path) {
        Ok(()) => 0,
        Err(Stop::AlreadyRunning(why)) => {
            tracing::info!(target: "mesh::daemon", "{why}; this meshd (pid {}) exits", std::process::id());
            EXIT_ALREADY_RUNNING
        }
        Err(Stop::Failed(why)) => {
            tracing::error!(target: "mesh::daemon", "{why}");
            1
        }
    }
}

fn usage_error(message: &str) -> i32 {
    log::init(None);
    tracing::error!(target: "mesh::daemon", "meshd: {message}. Try `meshd --help`.");
    2
}

#[cfg(not(unix))]
fn run(_config: crate::config::Config, _socket: &Path, _log: PathBuf) -> Result<(), Stop> {
    Err(Stop::Failed(
        "meshd serves on Unix sockets only; on this platform `mesh-mcp run` serves standalone"
            .into(),
    ))
}

#[cfg(unix)]
fn run(config: crate::config::Config, socket_path: &Path, log_path: PathBuf) -> Result<(), Stop> {
    let _lock = acquire_lock(socket_path)?;
    remove_stale_socket(socket_path)?;
    let listener = bind_private(socket_path)?;
    let sandboxed = match sandbox::apply(sandbox::Policy::from_env()) {
        Ok(on) => on,
        Err(e) => {
            drop(listener);
            let _ = std::fs::remove_file(socket_path);
            return Err(Stop::Failed(e));
        }
    };
    let status = Arc::new(DaemonStatus::new(
        socket_path.to_path_buf(),
        log_path.clone(),
        sandboxed,
    ));
    let meta = socket::DaemonMeta {
        pid: status.pid,
        version: crate::VERSION.to_string(),
        started_at_ms: status
            .started_at
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64),
        log: log_path,
        sandboxed,
    };
    if let Err(e) = socket::write_meta(socket_path, &meta) {
        tracing::warn!(target: "mesh::daemon", "cannot write {}: {e}; version checks will not see this daemon", socket::meta_path(socket_path).display());
    }
    let base = config.base_dir.clone();
    let shared = Shared::start(config);
    let _ = shared.daemon.set(status.clone());
    tracing::info!(
        target: "mesh::daemon",
        "meshd {} (pid {}) serves {} on {}",
        crate::VERSION,
        status.pid,
        base.display(),
        socket_path.display()
    );
    let idle = super::env_secs(IDLE_ENV, DEFAULT_IDLE);
    let grace = super::env_secs(GRACE_ENV, DEFAULT_GRACE);
    let result = smol::block_on(accept_loop(
        listener,
        shared.clone(),
        status.clone(),
        idle,
        grace,
    ));
    shared.close_audit();
    let _ = std::fs::remove_file(socket_path);
    socket::remove_meta(socket_path, status.pid);
    tracing::info!(target: "mesh::daemon", "meshd (pid {}) stopped", status.pid);
    result
}

/// Takes the lock beside the socket. When another process holds it: if that daemon answers on
/// the socket, this one is not needed; if not, it may be starting (it binds within
/// milliseconds) or exiting (it releases the lock as it goes), so wait a little before giving
/// up.
#[cfg(unix)]
fn acquire_lock(socket_path: &Path) -> Result<std::fs::File, Stop> {
    let file = socket::open_lock(socket_path).map_err(|e| {
        Stop::Failed(format!(
            "cannot open the lock file {}: {e}",
            socket::lock_path(socket_path).display()
        ))
    })?;
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        match crate::sys::try_lock_exclusive(&file) {
            Ok(true) => return Ok(file),
            Ok(false) => {}
            Err(e) => {
                return Err(Stop::Failed(format!(
                    "cannot lock {}: {e}",
                    socket::lock_path(socket_path).display()
                )));
            }
        }
        if std::os::unix::net::UnixStream::connect(socket_path).is_ok() {
            return Err(Stop::AlreadyRunning(format!(
                "another meshd already serves {}",
                socket_path.display()
            )));
        }
        if Instant::now() >= deadline {
            return Err(Stop::AlreadyRunning(format!(
                "another process holds {} but does not answer on the socket",
                socket::lock_path(socket_path).display()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Removes a socket file nobody answers on (left by a daemon that was killed). Called with the
/// lock held, so no live daemon of ours can be binding it.
#[cfg(unix)]
fn remove_stale_socket(socket_path: &Path) -> Result<(), Stop> {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = std::fs::symlink_metadata(socket_path) else {
        return Ok(());
    };
    if !meta.file_type().is_socket() {
        return Err(Stop::Failed(format!(
            "{} exists and is not a socket; move it away so meshd can bind there",
            socket_path.display()
        )));
    }
    if std::os::unix::net::UnixStream::connect(socket_path).is_ok() {
        return Err(Stop::AlreadyRunning(format!(
            "a server already answers on {}",
            socket_path.display()
        )));
    }
    tracing::info!(target: "mesh::daemon", "removing the stale socket {}", socket_path.display());
    std::fs::remove_file(socket_path).map_err(|e| {
        Stop::Failed(format!(
            "cannot remove the stale socket {}: {e}",
            socket_path.display()
        ))
    })
}

/// Binds the socket so that it is `0600` from the first instant, whatever the umask.
#[cfg(unix)]
fn bind_private(socket_path: &Path) -> Result<std::os::unix::net::UnixListener, Stop> {
    use std::os::unix::fs::PermissionsExt;
    let old = crate::sys::set_umask(0o177);
    let bound = std::os::unix::net::UnixListener::bind(socket_path);
    crate::sys::set_umask(old);
    let listener =
        bound.map_err(|e| Stop::Failed(format!("cannot bind {}: {e}", socket_path.display())))?;
    std::fs::set_permissions(socket_path, std::fs::Permissions::from_mode(0o600)).map_err(|e| {
        let _ = std::fs::remove_file(socket_path);
        Stop::Failed(format!("cannot chmod 0600 {}: {e}", socket_path.display()))
    })?;
    Ok(listener)
}

/// Why the accept loop woke up.
#[cfg(unix)]
enum LoopEvent {
    Accepted(std::io::Result<async_net::unix::UnixStream>),
    Signal,
    Idle,
}

#[cfg(unix)]
async fn accept_loop(
    listener: std::os::unix::net::UnixListener,
    shared: Arc<Shared>,
    status: Arc<DaemonStatus>,
    idle: Duration,
    grace: Duration,
) -> Result<(), Stop> {
    let listener = async_net::unix::UnixListener::try_from(listener)
        .map_err(|e| Stop::Failed(format!("cannot serve the socket: {e}")))?;
    let signals = crate::sys::termination_signals();
    // Closed (never sent on) to tell every session to drain and stop.
    let (stop_tx, stop_rx) = async_channel::bounded::<i32>(1);
    // Every session holds a token of `drain`.
    let drain = crate::server::drain::Drain::new();
    let max_clients = max_clients();
    loop {
        let event = futures_lite::future::or(
            async { LoopEvent::Accepted(listener.accept().await.map(|(s, _)| s)) },
            futures_lite::future::or(
                async {
                    let _ = signals.recv().await;
                    LoopEvent::Signal
                },
                async {
                    idle_expired(&status, idle, grace).await;
                    LoopEvent::Idle
                },
            ),
        )
        .await;
        match event {
            LoopEvent::Accepted(Ok(stream))
                if status.clients.load(std::sync::atomic::Ordering::Acquire) >= max_clients =>
            {
                refuse(stream, max_clients);
            }
            LoopEvent::Accepted(Ok(stream)) => {
                status.client_connected();
                let shared = shared.clone();
                let status = status.clone();
                let stop = stop_rx.clone();
                let busy = drain.token();
                smol::spawn(async move {
                    handle_client(shared, stream, Some(stop)).await;
                    status.client_disconnected();
                    drop(busy);
                })
                .detach();
            }
            LoopEvent::Accepted(Err(e)) => {
                // Out of file descriptors, say: back off instead of spinning.
                tracing::warn!(target: "mesh::daemon", "accept failed: {e}");
                smol::Timer::after(Duration::from_millis(100)).await;
            }
            LoopEvent::Signal => {
                tracing::info!(target: "mesh::daemon", "termination signal: draining the sessions");
                break;
            }
            LoopEvent::Idle => {
                tracing::info!(
                    target: "mesh::daemon",
                    "no client for {} s: exiting",
                    if status.clients_total.load(std::sync::atomic::Ordering::Relaxed) == 0 {
                        grace.as_secs()
                    } else {
                        idle.as_secs()
                    }
                );
                break;
            }
        }
    }
    // The socket goes first: a client arriving now starts (or waits for) a fresh daemon.
    let _ = std::fs::remove_file(&status.socket);
    drop(listener);
    drop(stop_tx);
    drain.wait_at_most(Duration::from_secs(6)).await;
    Ok(())
}

/// The cap on connected clients: `MESH_DAEMON_MAX_CLIENTS`, else the default (at least 1).
fn max_clients() -> usize {
    std::env::var(super::MAX_CLIENTS_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(super::DEFAULT_MAX_CLIENTS)
        .max(1)
}

/// The one line a refused client reads before the daemon closes its connection: a JSON-RPC
/// error (id `null`) whose `data.meshd` is `"refused"`, which `mesh-mcp run` recognises and
/// answers by serving that client in its own process.
pub fn refusal_line(max_clients: usize) -> String {
    let message = format!(
        "meshd serves at most {max_clients} clients at once and all are connected; connect \
again later, raise {} for this daemon, or run `mesh-mcp run --standalone`",
        super::MAX_CLIENTS_ENV
    );
    let mut line = crate::protocol::Response::error_with_data(
        serde_json::Value::Null,
        -32000,
        message,
        serde_json::json!({"meshd": "refused", "maxClients": max_clients}),
    )
    .to_line();
    line.push('\n');
    line
}

/// Tells a client over the cap why, then closes its connection (without waiting on it for
/// more than a second).
#[cfg(unix)]
fn refuse(stream: async_net::unix::UnixStream, max_clients: usize) {
    use futures_lite::io::AsyncWriteExt;
    tracing::warn!(target: "mesh::daemon", "refused a client: {max_clients} clients already connected ({} to raise the cap)", super::MAX_CLIENTS_ENV);
    smol::spawn(async move {
        let mut stream = stream;
        let line = refusal_line(max_clients);
        let _ = futures_lite::future::or(
            async {
                let _ = stream.write_all(line.as_bytes()).await;
                let _ = stream.flush().await;
            },
            async {
                smol::Timer::after(Duration::from_secs(1)).await;
            },
        )
        .await;
        let _ = stream.shutdown(std::net::Shutdown::Both);
    })
    .detach();
}

/// Resolves once the daemon has been without clients for its timeout (see
/// [`DaemonStatus::idle_deadline`]). Sleeps until the computed deadline instead of polling;
/// while clients are connected it re-checks every `idle` (at most hourly).
#[cfg(unix)]
async fn idle_expired(status: &DaemonStatus, idle: Duration, grace: Duration) {
    loop {
        match status.idle_deadline(idle, grace) {
            Some(deadline) if Instant::now() >= deadline => return,
            Some(deadline) => {
                smol::Timer::at(deadline).await;
            }
            None => {
                let nap = if idle.is_zero() {
                    Duration::from_secs(3600)
                } else {
                    idle.clamp(Duration::from_millis(100), Duration::from_secs(3600))
                };
                smol::Timer::after(nap).await;
            }
        }
    }
}

/// Serves one client connection: the stdio session loop over any byte stream (a Unix socket
/// here; a named pipe could be added on Windows), with its own session id. Ends when the client
/// closes its side (after answering everything it sent), when the stream fails, or when `stop`
/// closes (then through the same drain barrier as a signal in stdio mode).
pub async fn handle_client<S>(
    shared: Arc<Shared>,
    stream: S,
    stop: Option<async_channel::Receiver<i32>>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let session_id = crate::audit::new_session_id();
    let clients = shared
        .daemon
        .get()
        .map_or(0, |d| d.clients.load(std::sync::atomic::Ordering::Relaxed));
    tracing::info!(target: "mesh::daemon", session = %session_id, "client connected ({clients} now)");
    let (input, output) = futures_lite::io::split(stream);
    server::serve(shared, input, output, session_id.clone(), stop).await;
    tracing::info!(target: "mesh::daemon", session = %session_id, "client disconnected");
}
