//! `mesh-mcp run`: the client's stdin/stdout bridged to the workspace's `meshd`.
//!
//! The proxy connects to the daemon's socket, or spawns the `meshd` that sits next to its own
//! executable (after checking that `meshd --version` is this version) and polls until it
//! binds. It then copies bytes both ways and adds none of its own: `meshd` does the framing.
//! Answers are forwarded only as complete lines, so a daemon that dies mid-write never leaves
//! half a message on stdout. When stdin closes first, the socket's write side is shut down and
//! the daemon's remaining answers are drained before exiting.
//!
//! Any failure before the session starts (no socket directory, no `meshd`, a version mismatch,
//! a daemon that never binds, a connection closed before the daemon sent its first byte)
//! falls back to serving in this process, with one warning line; the bytes already sent to the
//! daemon are replayed to the in-process server, so the client never notices. Once the daemon
//! has answered, its death ends the proxy with exit status 1 and one error line naming the
//! cause and the daemon log, so the client sees EOF instead of a hung session.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures_lite::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::{EXIT_ALREADY_RUNNING, log, socket};
use crate::config::Config;
use crate::server::{self, Shared};

/// Test hook (honoured only with `MESH_TEST_FIXTURES=1`): the `meshd` to check and spawn
/// instead of the sibling of the current executable.
pub const TEST_MESHD_ENV: &str = "MESH_TEST_MESHD";

/// How long the proxy waits for a spawned `meshd` to bind. It binds before it indexes, so this
/// is only process start-up, generous for loaded machines.
const BIND_WAIT: Duration = Duration::from_secs(5);
const BIND_POLL: Duration = Duration::from_millis(10);
/// Bytes kept for replay until the daemon's first byte arrives.
const REPLAY_CAP: usize = 16 * 1024 * 1024;
/// Daemon lines up to this long are forwarded whole (so a daemon that dies mid-write leaves no
/// half message on stdout); a longer line is legal too and is streamed through as it arrives.
const MAX_PENDING: usize = 8 * 1024 * 1024;
/// How long answers are drained after SIGINT/SIGTERM.
const SIGNAL_DRAIN: Duration = Duration::from_secs(5);

/// Runs `mesh-mcp run` in proxy mode for `config`; returns the exit status.
pub fn run(config: Config) -> i32 {
    #[cfg(unix)]
    {
        let id = socket::workspace_id(&config.base_dir);
        let log_path = log::log_path_for(&id);
        match connect_or_spawn(&config) {
            Ok(conn) => bridge_session(conn, config, &log_path),
            Err(why) => {
                tracing::warn!(
                    target: "mesh::proxy",
                    "not using meshd: {why}. Serving standalone in this process (daemon log: {})",
                    log_path.display()
                );
                server::serve_stdio(Shared::start_for_session(config))
            }
        }
    }
    #[cfg(not(unix))]
    {
        server::serve_stdio(Shared::start_for_session(config))
    }
}

/// A connection to a daemon and what its meta file said.
#[cfg(unix)]
struct Connection {
    stream: std::os::unix::net::UnixStream,
    socket: PathBuf,
    pid: Option<u32>,
}

/// Connects to the workspace's daemon, spawning it when nobody answers.
#[cfg(unix)]
fn connect_or_spawn(config: &Config) -> Result<Connection, String> {
    use std::os::unix::net::UnixStream;
    let socket_path = socket::socket_path_for(&config.base_dir).map_err(|e| e.to_string())?;
    if let Ok(stream) = UnixStream::connect(&socket_path) {
        return checked(stream, &socket_path);
    }
    let meshd = meshd_path()?;
    check_version(&meshd)?;
    let mut child = spawn(&meshd, &socket_path, config)?;
    let deadline = Instant::now() + BIND_WAIT;
    let mut exited: Option<std::process::ExitStatus> = None;
    loop {
        if let Ok(stream) = UnixStream::connect(&socket_path) {
            if exited.is_none() {
                // Reap our child whenever it ends (a race loser ends at once), so it never
                // lingers as a zombie for the life of this session.
                let _ = std::thread::Builder::new()
                    .name("mesh-reap-meshd".into())
                    .spawn(move || child.wait());
            }
            return checked(stream, &socket_path);
        }
        if exited.is_none()
            && let Ok(Some(status)) = child.try_wait()
        {
            // A race loser exits at once while the winner binds: keep polling for the winner.
            if status.code() != Some(EXIT_ALREADY_RUNNING) {
                return Err(format!(
                    "meshd exited ({status}) before serving {}",
                    socket_path.display()
                ));
            }
            exited = Some(status);
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "meshd did not bind {} within {} s",
                socket_path.display(),
                BIND_WAIT.as_secs()
            ));
        }
        std::thread::sleep(BIND_POLL);
    }
}

/// Accepts a connection unless the daemon's meta file names another version (possible only
/// when two builds share a version string's socket, but cheap to rule out).
#[cfg(unix)]
fn checked(
    stream: std::os::unix::net::UnixStream,
    socket_path: &Path,
) -> Result<Connection, String> {
    let meta = socket::read_meta(socket_path);
    if let Some(m) = &meta
        && m.version != crate::VERSION
    {
        return Err(format!(
            "the meshd on {} (pid {}) is version {}, this mesh-mcp is {}; stop that daemon and run again",
            socket_path.display(),
            m.pid,
            m.version,
            crate::VERSION
        ));
    }
    Ok(Connection {
        stream,
        socket: socket_path.to_path_buf(),
        pid: meta.map(|m| m.pid),
    })
}

/// The `meshd` next to the current executable, else the first one on `PATH` (or the test
/// override). The error says where it looked and how to fix it.
pub fn meshd_path() -> Result<PathBuf, String> {
    if std::env::var("MESH_TEST_FIXTURES").is_ok_and(|v| v == "1")
        && let Some(p) = std::env::var_os(TEST_MESHD_ENV).filter(|p| !p.is_empty())
    {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot locate the mesh-mcp executable to find meshd: {e}"))?;
    let name = if cfg!(windows) { "meshd.exe" } else { "meshd" };
    let path = exe.with_file_name(name);
    if path.is_file() {
        return Ok(path);
    }
    if let Some(on_path) = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|c| c.is_file())
    }) {
        return Ok(on_path);
    }
    Err(format!(
        "meshd not found next to mesh-mcp ({}) or on PATH; build both binaries with `cargo build --release` and keep meshd beside mesh-mcp, or run `mesh-mcp run --standalone`",
        path.display()
    ))
}

/// Runs `meshd --version` and requires exactly `meshd <our version>`.
fn check_version(meshd: &Path) -> Result<(), String> {
    let out = std::process::Command::new(meshd)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {} --version: {e}", meshd.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let reported = text.lines().next().unwrap_or("").trim();
    let expected = format!("meshd {}", crate::VERSION);
    if !out.status.success() || reported != expected {
        return Err(format!(
            "{} reports `{reported}`, expected `{expected}`; install mesh-mcp and meshd from the same release",
            meshd.display()
        ));
    }
    Ok(())
}

/// Starts `meshd` detached from the client: its own process group (a Ctrl-C aimed at the
/// client does not reach it), no stdio (it logs to its own file), cwd = the workspace.
#[cfg(unix)]
fn spawn(meshd: &Path, socket_path: &Path, config: &Config) -> Result<std::process::Child, String> {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let mut cmd = Command::new(meshd);
    cmd.arg("--socket").arg(socket_path);
    if let Some(file) = &config.config_file {
        cmd.arg("--config").arg(file);
    }
    cmd.current_dir(&config.base_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    cmd.spawn()
        .map_err(|e| format!("cannot start {}: {e}", meshd.display()))
}

/// How a bridged session ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The client closed stdin (or a signal asked us to stop) and the daemon's answers were
    /// drained.
    ClientDone,
    /// The client closed stdout.
    OutputClosed,
    /// The daemon went away after the session started.
    DaemonLost { cause: String },
    /// The daemon went away before sending anything: the bytes it was sent, for replay.
    NotStarted { cause: String, replay: Vec<u8> },
}

#[cfg(unix)]
fn bridge_session(conn: Connection, config: Config, log_path: &Path) -> i32 {
    let signals = crate::sys::termination_signals();
    let stream = match async_net::unix::UnixStream::try_from(conn.stream) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(target: "mesh::proxy", "not using meshd: cannot use the connection ({e}). Serving standalone in this process");
            return server::serve_stdio(Shared::start_for_session(config));
        }
    };
    let (outcome, stdin, stdout) = smol::block_on(async {
        let mut stdin = smol::Unblock::new(std::io::stdin());
        let mut stdout = smol::Unblock::new(std::io::stdout());
        let outcome = bridge(&stream, &mut stdin, &mut stdout, &signals).await;
        (outcome, stdin, stdout)
    });
    drop(stream);
    match outcome {
        Outcome::ClientDone | Outcome::OutputClosed => 0,
        Outcome::DaemonLost { cause } => {
            // A daemon we spawned may have answered before writing its meta file.
            let pid = conn
                .pid
                .or_else(|| socket::read_meta(&conn.socket).map(|m| m.pid));
            let who = match pid {
                Some(pid) if crate::sys::process_alive(pid) => format!("meshd (pid {pid})"),
                Some(pid) => format!("meshd (pid {pid}, no longer running)"),
                None => "meshd".to_string(),
            };
            tracing::error!(
                target: "mesh::proxy",
                "{who} closed the connection mid-session: {cause}. Requests in flight get no answer; restart the MCP server to reconnect. Daemon log: {}",
                log_path.display()
            );
            1
        }
        Outcome::NotStarted { cause, replay } => {
            tracing::warn!(
                target: "mesh::proxy",
                "not using meshd: it closed the connection before answering ({cause}). Serving standalone in this process (daemon log: {})",
                log_path.display()
            );
            let input = futures_lite::io::Cursor::new(replay).chain(stdin);
            server::serve_process_io(Shared::start_for_session(config), input, stdout)
        }
    }
}

/// Replay bookkeeping shared by the two directions of one bridge (single-threaded).
struct BridgeState {
    /// The daemon has sent at least one byte: the session has started.
    started: Cell<bool>,
    /// Everything sent to the daemon before it started; `None` once started or over the cap.
    replay: RefCell<Option<Vec<u8>>>,
}

impl BridgeState {
    fn record(&self, bytes: &[u8]) {
        if self.started.get() {
            return;
        }
        let mut replay = self.replay.borrow_mut();
        let over = replay
            .as_ref()
            .is_some_and(|r| r.len() + bytes.len() > REPLAY_CAP);
        if over {
            *replay = None;
        } else if let Some(r) = replay.as_mut() {
            r.extend_from_slice(bytes);
        }
    }

    fn start(&self) {
        if !self.started.replace(true) {
            self.replay.borrow_mut().take();
        }
    }
}

#[cfg(unix)]
enum Up {
    /// Stdin reached its end (or failed); the socket's write side is shut down.
    InputClosed,
    /// A termination signal; the socket's write side is shut down.
    Signalled,
    /// Writing to the daemon failed.
    SocketFailed(String),
}

#[cfg(unix)]
enum Down {
    /// Stdout failed: the client is gone.
    OutputClosed,
    /// The daemon's side ended; `clean` when at a line boundary with no error.
    Closed { cause: String, clean: bool },
}

/// Copies stdin → `stream` and `stream` → stdout until the session ends (see [`Outcome`]).
#[cfg(unix)]
pub async fn bridge<I, O>(
    stream: &async_net::unix::UnixStream,
    stdin: &mut I,
    stdout: &mut O,
    signals: &async_channel::Receiver<i32>,
) -> Outcome
where
    I: AsyncRead + Unpin,
    O: AsyncWrite + Unpin,
{
    let state = BridgeState {
        started: Cell::new(false),
        replay: RefCell::new(Some(Vec::new())),
    };
    let mut up = std::pin::pin!(upload(stream, stdin, &state, signals));
    let mut down = std::pin::pin!(download(stream, stdout, &state));
    enum First {
        Up(Up),
        Down(Down),
    }
    let first = futures_lite::future::or(async { First::Up(up.as_mut().await) }, async {
        First::Down(down.as_mut().await)
    })
    .await;
    let (up, down) = match first {
        First::Down(d) => (None, d),
        First::Up(Up::Signalled) => {
            let drained = futures_lite::future::or(async { Some(down.as_mut().await) }, async {
                smol::Timer::after(SIGNAL_DRAIN).await;
                None
            })
            .await;
            let d = drained.unwrap_or(Down::Closed {
                cause: "stopped by a signal".into(),
                clean: true,
            });
            (Some(Up::Signalled), d)
        }
        First::Up(u) => (Some(u), down.as_mut().await),
    };
    let (cause, clean) = match down {
        Down::OutputClosed => return Outcome::OutputClosed,
        Down::Closed { cause, clean } => (cause, clean),
    };
    let client_done = matches!(up, Some(Up::InputClosed | Up::Signalled));
    let cause = match up {
        Some(Up::SocketFailed(e)) => format!("{cause} (sending failed: {e})"),
        _ => cause,
    };
    if !state.started.get()
        && let Some(replay) = state.replay.borrow_mut().take()
    {
        if client_done && replay.is_empty() {
            return Outcome::ClientDone;
        }
        return Outcome::NotStarted { cause, replay };
    }
    if client_done && clean {
        Outcome::ClientDone
    } else {
        Outcome::DaemonLost { cause }
    }
}

#[cfg(unix)]
async fn upload<I: AsyncRead + Unpin>(
    stream: &async_net::unix::UnixStream,
    stdin: &mut I,
    state: &BridgeState,
    signals: &async_channel::Receiver<i32>,
) -> Up {
    let mut sock = stream.clone();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let read = futures_lite::future::or(async { Some(stdin.read(&mut buf).await) }, async {
            let _ = signals.recv().await;
            None
        })
        .await;
        let n = match read {
            None => {
                let _ = stream.shutdown(std::net::Shutdown::Write);
                return Up::Signalled;
            }
            Some(Ok(0)) | Some(Err(_)) => {
                let _ = stream.shutdown(std::net::Shutdown::Write);
                return Up::InputClosed;
            }
            Some(Ok(n)) => n,
        };
        // Recorded before the write: if the write never completes, the bytes are replayed.
        state.record(&buf[..n]);
        if let Err(e) = sock.write_all(&buf[..n]).await {
            return Up::SocketFailed(e.to_string());
        }
    }
}

#[cfg(unix)]
async fn download<O: AsyncWrite + Unpin>(
    stream: &async_net::unix::UnixStream,
    stdout: &mut O,
    state: &BridgeState,
) -> Down {
    let mut sock = stream.clone();
    let mut buf = vec![0u8; 64 * 1024];
    let mut pending: Vec<u8> = Vec::new();
    // True while a line longer than MAX_PENDING is being forwarded piece by piece.
    let mut streaming = false;
    loop {
        let n = match sock.read(&mut buf).await {
            Ok(0) if streaming => {
                return Down::Closed {
                    cause: "the connection was closed in the middle of a long message that was \
being forwarded"
                        .into(),
                    clean: false,
                };
            }
            Ok(0) if pending.is_empty() => {
                return Down::Closed {
                    cause: "the connection was closed".into(),
                    clean: true,
                };
            }
            Ok(0) => {
                return Down::Closed {
                    cause: format!(
                        "the connection was closed in the middle of a message ({} bytes dropped)",
                        pending.len()
                    ),
                    clean: false,
                };
            }
            Ok(n) => n,
            Err(e) => {
                return Down::Closed {
                    cause: format!("reading from the socket failed: {e}"),
                    clean: false,
                };
            }
        };
        if !state.started.get()
            && let Some(cause) = refusal(&buf[..n])
        {
            // The daemon turned this client away before the session started: fall back.
            return Down::Closed { cause, clean: true };
        }
        state.start();
        let mut data = &buf[..n];
        if streaming {
            let end = match data.iter().position(|&b| b == b'\n') {
                Some(nl) => {
                    streaming = false;
                    nl + 1
                }
                None => data.len(),
            };
            if forward(stdout, &data[..end]).await.is_err() {
                return Down::OutputClosed;
            }
            data = &data[end..];
        }
        if let Some(lines) = complete_lines(&mut pending, data)
            && forward(stdout, &lines).await.is_err()
        {
            return Down::OutputClosed;
        }
        if pending.len() > MAX_PENDING {
            // A legal answer may be longer than what we keep whole: stream it through.
            if forward(stdout, &pending).await.is_err() {
                return Down::OutputClosed;
            }
            pending.clear();
            streaming = true;
        }
    }
}

async fn forward<O: AsyncWrite + Unpin>(stdout: &mut O, bytes: &[u8]) -> std::io::Result<()> {
    stdout.write_all(bytes).await?;
    stdout.flush().await
}

/// When the first bytes from the daemon are its refusal of this connection (see
/// `daemon::serve::refusal_line`), the reason it gave.
fn refusal(first: &[u8]) -> Option<String> {
    let line = &first[..first.iter().position(|&b| b == b'\n')?];
    let v: serde_json::Value = serde_json::from_slice(line).ok()?;
    let error = v.get("error")?;
    (error.get("data")?.get("meshd")?.as_str()? == "refused")
        .then(|| error.get("message")?.as_str().map(str::to_string))
        .flatten()
}

/// Splits off what can be forwarded: everything up to the last newline of `pending` + `chunk`.
/// The rest (an incomplete line) stays in `pending`. `None` when no line is complete yet.
pub fn complete_lines<'a>(pending: &mut Vec<u8>, chunk: &'a [u8]) -> Option<Cow<'a, [u8]>> {
    let Some(last) = chunk.iter().rposition(|&b| b == b'\n') else {
        pending.extend_from_slice(chunk);
        return None;
    };
    let (head, tail) = chunk.split_at(last + 1);
    let out = if pending.is_empty() {
        Cow::Borrowed(head)
    } else {
        let mut joined = std::mem::take(pending);
        joined.extend_from_slice(head);
        Cow::Owned(joined)
    };
    pending.extend_from_slice(tail);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_complete_lines_are_forwarded() {
        let mut pending = Vec::new();
        assert_eq!(complete_lines(&mut pending, b"{\"a\":"), None);
        assert_eq!(pending, b"{\"a\":");
        let out = complete_lines(&mut pending, b"1}\n{\"b\"").unwrap();
        assert_eq!(&*out, b"{\"a\":1}\n");
        assert_eq!(pending, b"{\"b\"");
        let out = complete_lines(&mut pending, b":2}\n{\"c\":3}\n").unwrap();
        assert_eq!(&*out, b"{\"b\":2}\n{\"c\":3}\n");
        assert!(pending.is_empty());
        // The common case borrows the chunk.
        let out = complete_lines(&mut pending, b"x\n").unwrap();
        assert!(matches!(out, Cow::Borrowed(_)));
    }

    #[test]
    fn replay_stops_at_the_first_daemon_byte_and_at_the_cap() {
        let s = BridgeState {
            started: Cell::new(false),
            replay: RefCell::new(Some(Vec::new())),
        };
        s.record(b"abc");
        assert_eq!(s.replay.borrow().as_deref(), Some(&b"abc"[..]));
        s.start();
        s.record(b"def");
        assert!(s.replay.borrow().is_none());
        let s = BridgeState {
            started: Cell::new(false),
            replay: RefCell::new(Some(Vec::new())),
        };
        s.record(&vec![0u8; REPLAY_CAP + 1]);
        assert!(s.replay.borrow().is_none());
    }

    #[cfg(unix)]
    #[test]
    fn bridge_drains_after_stdin_closes_and_reports_a_lost_daemon() {
        smol::block_on(async {
            // Stdin closes at once; the "daemon" answers after seeing EOF, then closes.
            let (ours, theirs) = async_net::unix::UnixStream::pair().unwrap();
            let daemon = smol::spawn(async move {
                let mut theirs = theirs;
                let mut got = Vec::new();
                theirs.read_to_end(&mut got).await.unwrap();
                theirs.write_all(b"{\"id\":1}\n").await.unwrap();
                got
            });
            let (_tx, signals) = async_channel::bounded(1);
            let mut stdin = futures_lite::io::Cursor::new(b"{\"id\":1}\n".to_vec());
            let mut stdout = Vec::new();
            let outcome = bridge(&ours, &mut stdin, &mut stdout, &signals).await;
            assert_eq!(outcome, Outcome::ClientDone);
            assert_eq!(stdout, b"{\"id\":1}\n");
            assert_eq!(daemon.await, b"{\"id\":1}\n");

            // The daemon answers once, then dies mid-line while stdin is still open.
            let (outcome, stdout) =
                bridge_to_one_answer(b"{\"id\":1}\n", b"{\"id\":1}\n{\"id\":2,\"par", &signals)
                    .await;
            assert!(
                matches!(&outcome, Outcome::DaemonLost { cause } if cause.contains("middle of a message")),
                "{outcome:?}"
            );
            assert_eq!(stdout, b"{\"id\":1}\n", "no partial line forwarded");

            // The daemon closes before answering: the request comes back for replay.
            let (outcome, stdout) = bridge_to_one_answer(b"{\"id\":7}\n", b"", &signals).await;
            match outcome {
                Outcome::NotStarted { replay, .. } => assert_eq!(replay, b"{\"id\":7}\n"),
                other => panic!("{other:?}"),
            }
            assert!(stdout.is_empty());
        });
    }

    /// Bridges `request`, with stdin left open, to a "daemon" that reads once, writes `answer`
    /// and closes; the outcome and what reached stdout.
    #[cfg(unix)]
    async fn bridge_to_one_answer(
        request: &[u8],
        answer: &'static [u8],
        signals: &async_channel::Receiver<i32>,
    ) -> (Outcome, Vec<u8>) {
        let (ours, theirs) = async_net::unix::UnixStream::pair().unwrap();
        let (stdin_w, stdin_r) = async_net::unix::UnixStream::pair().unwrap();
        let daemon = smol::spawn(async move {
            let mut theirs = theirs;
            let mut buf = [0u8; 64];
            let _ = theirs.read(&mut buf).await;
            theirs.write_all(answer).await.unwrap();
        });
        let mut stdin_w2 = stdin_w.clone();
        stdin_w2.write_all(request).await.unwrap();
        let mut stdin = stdin_r;
        let mut stdout = Vec::new();
        let outcome = bridge(&ours, &mut stdin, &mut stdout, signals).await;
        daemon.await;
        (outcome, stdout)
    }
}
