//! The MCP session: the method table, dual-era version handling, concurrent tool calls,
//! cancellation, progress, and the drain barrier.
//!
//! One [`serve`] call runs one session over any byte stream pair: stdin/stdout in standalone
//! mode ([`serve_stdio`]), one accepted socket connection in `meshd`
//! (`daemon::serve::handle_client`). Cheap methods are answered inline; each
//! `tools/call` runs as its own task on the `blocking` pool (at most
//! [`Shared::max_in_flight`] at once), so a slow tool never delays a `ping`, and responses may
//! leave out of order, as JSON-RPC allows.
//!
//! # The request path, and why it has no thread hops
//!
//! A session runs on one thread: its framing tasks (reader and writer, joined to the loop by
//! `async-channel` queues of 64) and its tool-call tasks are spawned on a session-local
//! `smol::Executor` that the session's own future drives, so they all run on the thread that
//! polls the session — the main thread in standalone mode, a smol executor thread in `meshd`.
//! In standalone mode stdin and stdout are non-blocking on the smol reactor ([`crate::stdio`]),
//! so the same thread waits in `epoll`, reads a frame, answers it and writes the answer. A
//! cheap tool call ([`crate::tools::runs_inline`]) with the index in memory runs right there
//! too, in standalone mode; every other call goes to the `blocking` pool and back (two hops),
//! and so does every call in `meshd`, where one inline call would delay the other clients'
//! sessions on the same thread. The audit row is queued for the audit task
//! ([`crate::auditor`]) after the answer. Before this, a scoped `smart_search` crossed six
//! threads (`Unblock` for stdin, the reader task, the loop, the call's task, the pool, the
//! writer, `Unblock` for stdout) and the audit write a seventh; `size-report` measures the
//! stages in a benchmark build (`--features bench-stages`, see [`crate::stages`]).
//!
//! Shutdown is a drain barrier, not a drop: when the input ends (or SIGINT/SIGTERM arrives) the
//! loop stops reading, waits for the calls in flight (their [`drain::Drain`] tokens), closes
//! the outbound queue and waits for the writer to flush everything queued before returning.
//! A tool reaches the wire during its own call through [`notify`].

pub mod drain;
pub mod notify;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_lite::io::{AsyncRead, AsyncWrite};
use serde_json::{Value, json};
use smol::lock::Semaphore;

use crate::config::Config;
use crate::framing::{self, Inbound, QUEUE_CAPACITY};
use crate::index::snapshot::IndexHandle;
use crate::protocol::{self, Incoming, Request, RequestMeta, Response};
use crate::tools::{Registry, ToolDef, ToolEnv, ToolOutput};
use drain::{Busy, Drain};

/// Process-wide state shared by every session (in `meshd`, by every client).
pub struct Shared {
    /// The workspace configuration (roots, excludes, docs, patterns, policy).
    pub config: Arc<Config>,
    /// The workspace directory (canonical).
    pub base_dir: PathBuf,
    /// The path jail every path argument goes through.
    pub jail: crate::security::Jail,
    /// The index: current snapshot and first-snapshot readiness.
    pub index: Arc<IndexHandle>,
    /// The tools served.
    pub registry: Registry,
    /// How long a `tools/call` waits for the first snapshot before answering "still indexing".
    pub index_wait: Duration,
    /// Tool calls running at once per session.
    pub max_in_flight: usize,
    /// The audit trail, opened on first use and re-tried after a failure (logged; tools keep
    /// answering).
    audit: crate::audit::AuditSink,
    /// Whether tool calls are audited at all (config `[audit] enabled`).
    pub audit_enabled: bool,
    /// The audit task sessions queue their calls on, started at the first audited call.
    auditor: std::sync::OnceLock<crate::auditor::Auditor>,
    /// Set by `meshd` once it serves this workspace; `None` in standalone mode.
    pub daemon: std::sync::OnceLock<Arc<crate::daemon::DaemonStatus>>,
    /// Whether cheap tool calls run inline on the session's thread (standalone sessions: one
    /// session per process) instead of on the blocking pool (`meshd`, where sessions share
    /// threads). See the module docs.
    pub inline_tools: bool,
}

impl Shared {
    /// Starts serving a workspace: spawns the indexer in the background (so `initialize` never
    /// waits for it) and returns the shared state. Used by standalone mode and by `meshd`.
    pub fn start(config: Config) -> Arc<Shared> {
        Self::start_with(config, IndexHandle::new(), false)
    }

    /// [`Shared::start`] for one stdio session: the indexer waits until `initialize` has been
    /// answered (see [`IndexHandle::gated`]) so start-up stays fast on large workspaces.
    /// It runs cheap tool calls inline (one session per process).
    pub fn start_for_session(config: Config) -> Arc<Shared> {
        Self::start_with(config, IndexHandle::gated(), true)
    }

    /// [`Shared::start`] for a one-shot command (`mesh-mcp query`): one index and no watcher,
    /// whose set-up (an inotify watch per directory, planned by a walk of its own) would cost a
    /// one-shot answer on a small workspace more than the search itself.
    pub fn start_one_shot(config: Config) -> Arc<Shared> {
        let config = Arc::new(config);
        let index = IndexHandle::new();
        let mut watch = crate::index::watch::WatchOptions::from_env();
        watch.kind = crate::index::watch::WatchKind::Off;
        crate::index::spawn_indexer_with(config.clone(), index.clone(), watch);
        Arc::new(Shared::new(config, index))
    }

    fn start_with(config: Config, index: Arc<IndexHandle>, inline_tools: bool) -> Arc<Shared> {
        let config = Arc::new(config);
        crate::index::spawn_indexer(config.clone(), index.clone());
        let mut shared = Shared::new(config, index);
        shared.inline_tools = inline_tools;
        Arc::new(shared)
    }

    /// Shared state for a workspace with the standard tools and default limits.
    pub fn new(config: Arc<Config>, index: Arc<IndexHandle>) -> Shared {
        let base_dir = config.base_dir.clone();
        let audit_enabled = config.audit.enabled;
        let index_wait = std::env::var("MESH_INDEX_WAIT_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map(Duration::from_millis)
            .unwrap_or(Duration::from_secs(30));
        let jail = crate::security::Jail::new(
            base_dir.clone(),
            config.roots.iter().map(|r| r.path.clone()).collect(),
        );
        let audit = crate::audit::AuditSink::for_workspace(Some(&base_dir));
        Shared {
            config,
            jail,
            base_dir,
            index,
            registry: Registry::standard(),
            index_wait,
            max_in_flight: 8,
            audit,
            audit_enabled,
            auditor: std::sync::OnceLock::new(),
            daemon: std::sync::OnceLock::new(),
            inline_tools: false,
        }
    }

    /// Appends one audited call now, on this thread (for one-shot commands such as `mesh-mcp
    /// query`; sessions use [`Shared::audit_later`]); failures are logged, never returned (an
    /// audit problem such as a full disk must not stop the tool from answering).
    pub fn audit(&self, entry: &crate::audit::AuditEntry) {
        if !self.audit_enabled {
            return;
        }
        self.audit.record(entry);
    }

    /// Writes the audit task's queue and closes the trail, if the task was started; for the end
    /// of the process (a standalone session, `meshd`).
    pub fn close_audit(&self) {
        if let Some(auditor) = self.auditor.get() {
            auditor.close();
        }
    }

    /// Queues one audited call for the audit task ([`crate::auditor`]): `build` makes the
    /// entry there, and `done` (a session's wait-group token) is dropped once it is written.
    /// Nothing at all happens when auditing is off.
    pub fn audit_later(
        &self,
        build: impl FnOnce() -> crate::audit::AuditEntry + Send + 'static,
        done: Option<Busy>,
    ) {
        if !self.audit_enabled {
            return;
        }
        self.auditor
            .get_or_init(|| crate::auditor::Auditor::start(Some(self.base_dir.clone())))
            .submit(crate::auditor::Job {
                build: Box::new(build),
                done,
            });
    }
}

const SERVER_NAME: &str = "mesh-mcp";
const SERVER_TITLE: &str = "mesh-mcp — workspace map";

/// The `instructions` of `initialize` and `server/discover`: calm routing, no imperatives.
pub const INSTRUCTIONS: &str = "mesh-mcp indexes this multi-repo, multi-language workspace \
into declarations, imports, gRPC contracts, event topics, HTTP routes and Markdown docs. Which \
tool answers which question: where is X declared → smart_search; who imports or uses X → \
find_dependents; who implements or calls a gRPC method, and is a .proto change wire-compatible → \
analyze_grpc; what does changing an RPC, topic, event or route affect → analyze_impact; what does this branch's \
diff touch and break → analyze_changes; what do \
the team's docs (ADRs, READMEs) say → search_docs; the picture of the services → visualize_mesh; \
is the index fresh and complete → index_status. Every row carries a path:line: treat it as a \
starting point and read the file to confirm. Rows marked heuristic or ambiguous deserve a \
targeted check; a zero says what was searched, so a broad re-search rarely adds anything.";

/// Per-session protocol state.
struct Session {
    id: String,
    /// The version negotiated by `initialize`, if any.
    negotiated: Mutex<Option<&'static str>>,
    /// The level set by `logging/setLevel`.
    log_level: Mutex<Option<String>>,
    /// Cancellation flags of the tool calls in flight, by JSON id text.
    in_flight: Mutex<HashMap<String, Arc<AtomicBool>>>,
    /// One batch at a time per session (see [`crate::batch`]).
    batch_gate: Arc<Semaphore>,
    /// Resource listings and subscriptions this session follows ([`crate::resources::watch`]).
    resources: Arc<Mutex<crate::resources::Subscriptions>>,
    /// Set once a request other than `initialize` opened the indexer's start gate.
    gate_opened: AtomicBool,
}

impl Session {
    fn legacy_version(&self) -> &'static str {
        self.negotiated
            .lock()
            .ok()
            .and_then(|g| *g)
            .unwrap_or(protocol::LEGACY_VERSIONS[0])
    }
}

/// Which era a request is answered in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Era {
    Legacy(&'static str),
    Modern,
}

impl Era {
    fn version(self) -> &'static str {
        match self {
            Era::Legacy(v) => v,
            Era::Modern => protocol::MODERN_VERSION,
        }
    }

    /// True when tool answers carry `structuredContent` (2025-06-18 and later).
    fn structured(self) -> bool {
        protocol::version_at_least(self.version(), "2025-06-18")
    }
}

/// Serves MCP on this process's stdin/stdout until the client closes stdin, stdout closes, or
/// SIGINT/SIGTERM arrives. Returns the process exit status (0 in all of these cases).
pub fn serve_stdio(shared: Arc<Shared>) -> i32 {
    let (input, output) = crate::stdio::streams();
    serve_process_io(shared, input, output)
}

/// Serves one session for the whole process over `input`/`output` (this process's stdio, or,
/// when `mesh-mcp run` falls back from the daemon, the bytes already read from stdin followed
/// by the rest of it), ending like [`serve_stdio`]. Returns the exit status.
pub fn serve_process_io<R, W>(shared: Arc<Shared>, input: R, output: W) -> i32
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let signals = crate::sys::termination_signals();
    smol::block_on(serve(
        shared.clone(),
        input,
        output,
        crate::audit::new_session_id(),
        Some(signals),
    ));
    shared.close_audit();
    0
}

/// Runs one session over `input`/`output` (see the module docs). `stop` ends the session early
/// (through the same drain barrier) when it yields.
pub async fn serve<R, W>(
    shared: Arc<Shared>,
    input: R,
    output: W,
    session_id: String,
    stop: Option<async_channel::Receiver<i32>>,
) where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    // Boxed streams: one instance of the session code for every kind of stream (stdio on the
    // reactor or not, a Unix socket, the proxy's fallback), which keeps the binary small.
    serve_streams(shared, Box::new(input), Box::new(output), session_id, stop).await
}

/// [`serve`] on boxed streams: the session's own executor, driven by this future (module docs).
async fn serve_streams(
    shared: Arc<Shared>,
    input: crate::stdio::Input,
    output: crate::stdio::Output,
    session_id: String,
    stop: Option<async_channel::Receiver<i32>>,
) {
    let ex = Arc::new(smol::Executor::new());
    ex.run(session(ex.clone(), shared, input, output, session_id, stop))
        .await
}

/// The session: framing tasks, the request loop, the drain barrier.
async fn session(
    ex: Arc<smol::Executor<'static>>,
    shared: Arc<Shared>,
    input: crate::stdio::Input,
    output: crate::stdio::Output,
    session_id: String,
    stop: Option<async_channel::Receiver<i32>>,
) {
    let (in_tx, in_rx) = async_channel::bounded::<Inbound>(QUEUE_CAPACITY);
    let (out_tx, out_rx) = async_channel::bounded::<String>(QUEUE_CAPACITY);
    let reader = ex.spawn(framing::read_frames(input, in_tx));
    // `writer_done` closes when the writer stops — at the end, or early when the client
    // closed stdout: the session then ends even if stdin stays open and idle.
    let (writer_done_tx, writer_done) = async_channel::bounded::<()>(1);
    let writer = ex.spawn(async move {
        let ok = framing::write_frames(output, out_rx).await;
        drop(writer_done_tx);
        ok
    });
    let session = Arc::new(Session {
        id: session_id,
        negotiated: Mutex::new(None),
        log_level: Mutex::new(None),
        in_flight: Mutex::new(HashMap::new()),
        batch_gate: Arc::new(Semaphore::new(1)),
        resources: Arc::default(),
        gate_opened: AtomicBool::new(false),
    });
    let permits = Arc::new(Semaphore::new(shared.max_in_flight.max(1)));
    // Calls accepted but not answered yet. The loop waits for a slot before it reads on, so a
    // client that stops reading answers holds the server at a bounded size instead of piling
    // up parked calls.
    let accepted = Arc::new(Semaphore::new(MAX_ACCEPTED_CALLS));
    // Every task in flight holds a token of `drain` (the drain barrier below waits for them).
    let drain = Drain::new();
    let ctx = Ctx {
        ex,
        shared,
        session,
        out: out_tx.clone(),
        permits,
        accepted,
        busy: drain.token(),
    };
    let mut signalled = false;
    loop {
        let inbound = async { Next::Inbound(in_rx.recv().await) };
        let writer_gone = async {
            let _ = writer_done.recv().await;
            Next::OutputClosed
        };
        let next = match &stop {
            Some(stop) => {
                let signal = async {
                    let _ = stop.recv().await;
                    Next::Signal
                };
                futures_lite::future::or(inbound, futures_lite::future::or(writer_gone, signal))
                    .await
            }
            None => futures_lite::future::or(inbound, writer_gone).await,
        };
        match next {
            Next::Inbound(Ok(item)) => {
                if !ctx.handle(item).await {
                    break;
                }
            }
            Next::Inbound(Err(_)) => break,
            Next::OutputClosed => {
                tracing::debug!(target: "mesh::server", "output closed: ending the session");
                break;
            }
            Next::Signal => {
                tracing::info!(target: "mesh::server", "termination signal: draining");
                signalled = true;
                break;
            }
        }
    }
    // The resource watch holds a sender of the outbound queue: it stops before the drain, and
    // none starts afterwards (from a `resources/list` or subscribe still in flight).
    if let Ok(mut subs) = ctx.session.resources.lock() {
        subs.closed = true;
        subs.task.take();
    }
    drop(ctx);
    // The drain barrier: calls in flight finish and queue their answers (bounded after a
    // signal), then the writer flushes everything queued.
    if signalled {
        drain.wait_at_most(Duration::from_secs(5)).await;
    } else {
        drain.wait().await;
    }
    drop(out_tx);
    let _ = writer.await;
    drop(reader);
    crate::stages::dump();
}

/// What a tool call carries besides its arguments.
struct CallMeta {
    /// The W3C trace id, for the audit row and the log.
    trace_id: Option<String>,
    /// `_meta.progressToken`, when the client wants progress notifications.
    progress_token: Option<Value>,
    /// The lowest log level the client wants as notifications.
    log_level: Option<String>,
    /// The request in the benchmark build's stage timestamps ([`crate::stages`]).
    stage: crate::stages::Key,
    /// Whether the answer carries `structuredContent` (2025-06-18 and later).
    structured: bool,
}

/// What woke the session loop.
enum Next {
    Inbound(Result<Inbound, async_channel::RecvError>),
    OutputClosed,
    Signal,
}

/// Tool calls (and batches) accepted but not answered yet, per session, before the loop stops
/// reading: enough to keep both cores busy through any pipelining, small enough that a client
/// that stops reading cannot grow the server.
const MAX_ACCEPTED_CALLS: usize = 256;

/// Everything a request handler needs; cheap to clone into a task.
#[derive(Clone)]
struct Ctx {
    /// The session's executor: tasks spawned here run on the session's thread.
    ex: Arc<smol::Executor<'static>>,
    shared: Arc<Shared>,
    session: Arc<Session>,
    out: async_channel::Sender<String>,
    permits: Arc<Semaphore>,
    accepted: Arc<Semaphore>,
    /// The session's wait-group token (see [`drain`]).
    busy: Busy,
}

impl Ctx {
    /// Queues one frame; false when the output is gone.
    async fn send(&self, frame: String) -> bool {
        self.out.send(frame).await.is_ok()
    }

    /// Queues the answer to a request.
    async fn send_answer(&self, resp: Response) -> bool {
        let line = resp.to_line();
        crate::stages::queued(&resp.id);
        self.send(line).await
    }

    /// Handles one inbound unit; false when the session should end (output closed).
    async fn handle(&self, item: Inbound) -> bool {
        let line = match item {
            Inbound::InvalidUtf8 => {
                return self
                    .send(
                        Response::error(
                            Value::Null,
                            protocol::PARSE_ERROR,
                            "Parse error: the line is not valid UTF-8. Send UTF-8 JSON, one object per line."
                                .into(),
                        )
                        .to_line(),
                    )
                    .await;
            }
            Inbound::Oversized => {
                return self
                    .send(
                        Response::error(
                            Value::Null,
                            protocol::INVALID_REQUEST,
                            format!(
                                "Invalid Request: a line longer than {} MiB was discarded. Send smaller messages.",
                                framing::MAX_FRAME_BYTES >> 20
                            ),
                        )
                        .to_line(),
                    )
                    .await;
            }
            Inbound::Frame(line) => line,
        };
        // Every frame takes its read timestamp (benchmark build), batches too.
        let mark = crate::stages::frame_taken();
        if crate::batch::is_batch(&line) {
            return self.batch(line).await;
        }
        match protocol::classify(&line) {
            Incoming::Request(req) => {
                crate::stages::request(mark, &req.id, &req.method);
                self.request(req).await
            }
            Incoming::Notification { method, params } => {
                self.notification(&method, params.as_ref());
                true
            }
            Incoming::Response => true,
            Incoming::Reject(resp) => self.send(resp.to_line()).await,
            // Arrays are routed to `batch` above, before a value tree is built.
            Incoming::Batch(_) => true,
        }
    }

    fn notification(&self, method: &str, params: Option<&Value>) {
        match method {
            "notifications/cancelled" => {
                let id = params.and_then(|p| p.get("requestId"));
                if let Some(id) = id
                    && let Ok(map) = self.session.in_flight.lock()
                    && let Some(flag) = map.get(&id.to_string())
                {
                    flag.store(true, Ordering::Release);
                    tracing::debug!(target: "mesh::server", "cancelled request {id}");
                }
            }
            other => tracing::debug!(target: "mesh::server", "notification {other}"),
        }
    }

    /// A batch line: refused unless the session negotiated 2025-03-26, else answered by
    /// [`crate::batch::answer`] (bounded, its calls concurrent), one batch at a time.
    async fn batch(&self, line: String) -> bool {
        let negotiated = self.session.negotiated.lock().ok().and_then(|g| *g);
        if let Some(refusal) = crate::batch::refuse(&line, negotiated) {
            return self.send(refusal.to_line()).await;
        }
        let ctx = self.clone();
        let busy = self.busy.clone();
        let slot = self.accepted.acquire_arc().await;
        let gate = self.session.batch_gate.acquire_arc().await;
        // On the session's executor like every other task of the session; each request of
        // the batch is a task of its own there, so its calls run concurrently.
        self.ex
            .spawn(async move {
                let (_slot, _gate) = (slot, gate);
                let runner = ctx.clone();
                let run = |req| {
                    let c = runner.clone();
                    runner.ex.spawn(async move { c.answer(req).await })
                };
                let notify =
                    |method: &str, params: Option<&Value>| ctx.notification(method, params);
                if let Some(frame) = crate::batch::answer(&line, run, notify).await
                    && ctx.send(frame).await
                {
                    crate::batch::until_written(&ctx.out).await;
                }
                drop(busy);
            })
            .detach();
        true
    }

    /// Handles a request: inline for cheap methods and, in standalone mode, for cheap tool
    /// calls once the index is in memory; as a task for every other `tools/call`.
    async fn request(&self, req: Request) -> bool {
        // A modern-era session sends no `initialize`: its first request opens the gate (once
        // per session, so the hot path pays one atomic load).
        if req.method != "initialize"
            && !self.session.gate_opened.load(Ordering::Relaxed)
            && !self.session.gate_opened.swap(true, Ordering::Relaxed)
        {
            self.shared.index.open_start_gate();
        }
        // Tool calls, and the methods that answer from the index (they wait for its first
        // generation), run as tasks so they never hold up a `ping`.
        if matches!(
            req.method.as_str(),
            "tools/call" | "resources/read" | "resources/list" | "completion/complete"
        ) {
            let slot = self.accepted.acquire_arc().await;
            if self.runs_inline(&req) {
                let _slot = slot;
                return match self.answer(req).await {
                    Some(resp) => self.send_answer(resp).await,
                    None => true,
                };
            }
            let ctx = self.clone();
            let busy = self.busy.clone();
            self.ex
                .spawn(async move {
                    let _slot = slot;
                    if let Some(resp) = ctx.answer(req).await {
                        let _ = ctx.send_answer(resp).await;
                    }
                    drop(busy);
                })
                .detach();
            return !self.out.is_closed();
        }
        let is_initialize = req.method == "initialize";
        let sent = match self.answer(req).await {
            Some(resp) => self.send_answer(resp).await,
            None => true,
        };
        if is_initialize {
            // The answer is queued: a gated indexer may start crawling now.
            self.shared.index.open_start_gate();
        }
        sent
    }

    /// True when this `tools/call` runs inline on the session's thread: a standalone session,
    /// the index in memory, and a cheap call ([`crate::tools::runs_inline`]).
    fn runs_inline(&self, req: &Request) -> bool {
        if !self.shared.inline_tools
            || self.shared.index.current().is_none()
            || req.method != "tools/call"
        {
            return false;
        }
        let params = req.params.as_ref();
        let name = params.and_then(|p| p.get("name")).and_then(Value::as_str);
        let Some(def) = name.and_then(|n| self.shared.registry.get(n)) else {
            return true; // an unknown tool is answered at once, with an error
        };
        let args = params.and_then(|p| p.get("arguments"));
        crate::tools::runs_inline(def, args.unwrap_or(&Value::Null))
    }

    /// The response to one request (`None` when it was cancelled).
    async fn answer(&self, req: Request) -> Option<Response> {
        let meta = RequestMeta::from_params(req.params.as_ref());
        let era = match &meta.protocol_version {
            Some(v) => {
                if !protocol::DISCOVER_VERSIONS.contains(&v.as_str()) {
                    return Some(Response::error_with_data(
                        req.id,
                        protocol::UNSUPPORTED_PROTOCOL_VERSION,
                        format!("Unsupported protocol version: {}", protocol::echo_name(v)),
                        json!({"supported": protocol::DISCOVER_VERSIONS, "requested": protocol::echo_name(v)}),
                    ));
                }
                if !meta.has_client_capabilities && req.method != "server/discover" {
                    return Some(Response::error(
                        req.id,
                        protocol::INVALID_PARAMS,
                        format!(
                            "Invalid params: _meta must carry {} with the {} stamp",
                            protocol::META_CAPABILITIES,
                            protocol::META_VERSION
                        ),
                    ));
                }
                Era::Modern
            }
            None => Era::Legacy(self.session.legacy_version()),
        };
        let id = req.id.clone();
        let result = match req.method.as_str() {
            "initialize" => guarded(&req, || self.initialize(req.params.as_ref())),
            "ping" => Ok(json!({})),
            "server/discover" => Ok(discover_result()),
            "tools/list" => guarded(&req, || Ok(self.tools_list(era))),
            "logging/setLevel" => guarded(&req, || self.set_level(req.params.as_ref())),
            "tools/call" => return self.tools_call(req, meta, era).await,
            "resources/read" => return self.read_resource(req, meta, era).await,
            "resources/list" | "completion/complete" => {
                // One await for both: they answer from the first generation.
                let snap = self.first_snapshot().await;
                guarded(&req, || self.feature(&req, era, snap.as_deref()))
            }
            m if m.starts_with("resources/") || m.starts_with("prompts/") => {
                guarded(&req, || self.feature(&req, era, None))
            }
            other => Err((
                protocol::METHOD_NOT_FOUND,
                format!("Method not found: {}", protocol::echo_name(other)),
            )),
        };
        Some(match result {
            Ok(value) => Response::success(id, stamp(value, era)),
            Err((code, message)) => Response::error(id, code, message),
        })
    }

    /// Resources (but `resources/read`, which is a tool call), prompts and completions: plain
    /// functions of the request and the snapshot, kept out of the async `answer` (its state
    /// machine is code in every session's hot path).
    #[inline(never)]
    fn feature(
        &self,
        req: &Request,
        era: Era,
        snap: Option<&crate::index::snapshot::Snapshot>,
    ) -> Result<Value, (i64, String)> {
        let params = req.params.as_ref();
        let invalid = |e: String| (protocol::INVALID_PARAMS, e);
        let with_title = era.structured();
        match req.method.as_str() {
            "resources/list" => {
                if era != Era::Modern {
                    self.follow_resources(|subs| subs.listed = true);
                }
                let cursor = params.and_then(|p| p.get("cursor")).and_then(Value::as_str);
                crate::resources::list(snap, cursor, with_title)
                    .map(|v| cached(v, era, 10_000))
                    .map_err(invalid)
            }
            "completion/complete" => crate::completion::complete(snap, params).map_err(invalid),
            "resources/templates/list" => Ok(cached(
                crate::resources::templates(with_title),
                era,
                3_600_000,
            )),
            "resources/subscribe" | "resources/unsubscribe" if era != Era::Modern => {
                self.subscribe(&req.method, params)
            }
            "prompts/list" => Ok(cached(crate::prompts::list(with_title), era, 3_600_000)),
            "prompts/get" => crate::prompts::get(params).map_err(invalid),
            other => Err((
                protocol::METHOD_NOT_FOUND,
                format!("Method not found: {}", protocol::echo_name(other)),
            )),
        }
    }

    /// The snapshot to list resources or complete names from: the current one, or the first
    /// once published (bounded like a tool call's wait; `None` after the bound).
    async fn first_snapshot(&self) -> Option<Arc<crate::index::snapshot::Snapshot>> {
        self.wait_for_index(None, &AtomicBool::new(false))
            .await
            .ok()
    }

    /// `resources/subscribe` and `resources/unsubscribe` (legacy era: a modern-era request has
    /// no session to notify later).
    fn subscribe(&self, method: &str, params: Option<&Value>) -> Result<Value, (i64, String)> {
        let Some(uri) = params.and_then(|p| p.get("uri")).and_then(Value::as_str) else {
            return Err((
                protocol::INVALID_PARAMS,
                format!("Invalid params for {method}: \"uri\" must be a resource URI string"),
            ));
        };
        if method == "resources/subscribe" {
            crate::resources::check_subscribable(uri).map_err(|e| (protocol::INVALID_PARAMS, e))?;
            let max = crate::resources::MAX_SUBSCRIPTIONS;
            let full = self
                .session
                .resources
                .lock()
                .is_ok_and(|subs| subs.uris.len() >= max && !subs.uris.contains(uri));
            if full {
                return Err((
                    protocol::INVALID_PARAMS,
                    format!(
                        "Invalid params for resources/subscribe: this session follows {max} \
resources, the most it may; resources/unsubscribe one first (mesh://mesh or mesh://status \
change with every index generation)"
                    ),
                ));
            }
            self.follow_resources(|subs| {
                subs.uris.insert(uri.to_string());
            });
        } else if uri.len() > crate::resources::MAX_URI_BYTES {
            return Err((
                protocol::INVALID_PARAMS,
                format!(
                    "Invalid params for resources/unsubscribe: \"uri\" is {} bytes, at most {}; \
no subscription has such a URI",
                    uri.len(),
                    crate::resources::MAX_URI_BYTES
                ),
            ));
        } else if let Ok(mut subs) = self.session.resources.lock() {
            subs.uris.remove(uri);
        }
        Ok(json!({}))
    }

    /// Records the session's interest in resources and starts the watch that notifies it of
    /// new index generations ([`crate::resources::watch`]), once.
    fn follow_resources(&self, change: impl FnOnce(&mut crate::resources::Subscriptions)) {
        let Ok(mut subs) = self.session.resources.lock() else {
            return;
        };
        change(&mut subs);
        if subs.task.is_none() && !subs.closed {
            let watch = crate::resources::watch(
                self.shared.index.clone(),
                self.session.resources.clone(),
                self.out.clone(),
            );
            subs.task = Some(self.ex.spawn(watch));
        }
    }

    /// `resources/read`: the fixture resources of the conformance suite, else the tool call
    /// that answers the URI ([`crate::resources::tool_for`]), run exactly like a `tools/call`
    /// (index wait, pool, audit, cancellation); its text (and its structured data, as JSON)
    /// become the contents.
    async fn read_resource(&self, req: Request, meta: RequestMeta, era: Era) -> Option<Response> {
        let id = req.id.clone();
        let Some(uri) = req
            .params
            .as_ref()
            .and_then(|p| p.get("uri"))
            .and_then(Value::as_str)
            .map(str::to_string)
        else {
            return Some(Response::error(
                id,
                protocol::INVALID_PARAMS,
                "Invalid params for resources/read: \"uri\" must be a resource URI string".into(),
            ));
        };
        if let Some(v) = crate::resources::fixture(&uri) {
            return Some(Response::success(id, stamp(cached(v, era, 0), era)));
        }
        let Some((tool, args)) = crate::resources::tool_for(&uri) else {
            return Some(Response::error_with_data(
                id,
                protocol::RESOURCE_NOT_FOUND,
                format!(
                    "Resource not found: {}. Read mesh://mesh or mesh://status, or fill a template of resources/templates/list.",
                    protocol::echo_name(&uri)
                ),
                json!({ "uri": protocol::echo_name(&uri) }),
            ));
        };
        // A name the index does not hold is no resource (MCP: -32002), not an empty answer.
        // Before the first index the tool's own wait and answer decide.
        let snap = self.shared.index.current();
        if let Some(Err((kind, close))) = snap.as_deref().map(|s| crate::resources::exists(s, &uri))
        {
            return Some(not_found(id, &uri, kind, &close));
        }
        let call = Request {
            id: req.id,
            method: "tools/call".into(),
            params: Some(json!({ "name": tool, "arguments": args })),
        };
        let resp = self.tools_call(call, meta, era).await?;
        let Some(result) = resp.result else {
            return Some(resp);
        };
        // A doc names a query: no section matching it is no resource either.
        if uri.starts_with("mesh://doc/")
            && result["isError"] != json!(true)
            && result["structuredContent"]["total"] == json!(0)
        {
            let close = snap.as_deref().map_or(Vec::new(), |s| {
                let name = uri
                    .strip_prefix("mesh://doc/")
                    .and_then(crate::resources::decode)
                    .unwrap_or_default();
                let titles = crate::resources::names(s, crate::resources::Kind::Doc);
                crate::resources::close_names(&titles, &name, 5)
            });
            return Some(not_found(
                resp.id,
                &uri,
                crate::resources::Kind::Doc,
                &close,
            ));
        }
        let mut text = result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let mut data = result.get("structuredContent").cloned();
        if let Some(segment) = uri.strip_prefix("mesh://doc/") {
            (text, data) = doc_section(snap.as_deref(), segment, text, data);
        }
        let mut contents = vec![json!({"uri": uri, "mimeType": "text/markdown", "text": text})];
        if let Some(data) = data {
            contents.push(
                json!({"uri": uri, "mimeType": "application/json", "text": data.to_string()}),
            );
        }
        Some(Response::success(
            resp.id,
            stamp(cached(json!({ "contents": contents }), era, 0), era),
        ))
    }

    /// `initialize`: negotiates the version, once per session; a second `initialize` is an
    /// error and leaves the negotiated version as it was.
    fn initialize(&self, params: Option<&Value>) -> Result<Value, (i64, String)> {
        let requested = params
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str);
        let version = protocol::negotiate(requested);
        if let Ok(mut g) = self.session.negotiated.lock() {
            if let Some(earlier) = *g {
                return Err((
                    protocol::INVALID_REQUEST,
                    format!(
                        "Invalid Request: this session is already initialized (protocol {earlier}); \
initialize once per session, or start a new session to negotiate again"
                    ),
                ));
            }
            *g = Some(version);
        }
        tracing::debug!(target: "mesh::server", "initialize: requested {requested:?}, answered {version}");
        let mut server_info = json!({"name": SERVER_NAME, "version": crate::VERSION});
        if protocol::version_at_least(version, "2025-06-18") {
            server_info["title"] = json!(SERVER_TITLE);
        }
        Ok(json!({
            "protocolVersion": version,
            "capabilities": {
                "tools": {"listChanged": false},
                "logging": {},
                "resources": {"subscribe": true, "listChanged": true},
                "prompts": {"listChanged": false},
                "completions": {},
            },
            "serverInfo": server_info,
            "instructions": INSTRUCTIONS,
        }))
    }

    fn tools_list(&self, era: Era) -> Value {
        let mut result = json!({"tools": self.shared.registry.list_json(era.version())});
        if era == Era::Modern {
            result["ttlMs"] = json!(3_600_000);
            result["cacheScope"] = json!("public");
        }
        result
    }

    fn set_level(&self, params: Option<&Value>) -> Result<Value, (i64, String)> {
        let level = params.and_then(|p| p.get("level")).and_then(Value::as_str);
        match level {
            Some(l) if notify::LOG_LEVELS.contains(&l) => {
                if let Ok(mut g) = self.session.log_level.lock() {
                    *g = Some(l.to_string());
                }
                Ok(json!({}))
            }
            _ => Err((
                protocol::INVALID_PARAMS,
                format!(
                    "Invalid params: level must be one of {}",
                    notify::LOG_LEVELS.join(", ")
                ),
            )),
        }
    }

    /// `tools/call`: validate, wait for the first snapshot when needed, run on the blocking
    /// pool, cap the text. `None` when the call was cancelled.
    async fn tools_call(&self, req: Request, meta: RequestMeta, era: Era) -> Option<Response> {
        let id = req.id.clone();
        let Some(params) = req.params.as_ref().and_then(Value::as_object) else {
            return Some(Response::error(
                id,
                protocol::INVALID_PARAMS,
                "Missing params for tools/call: send {\"name\": <tool>, \"arguments\": {…}}".into(),
            ));
        };
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Some(Response::error(
                id,
                protocol::INVALID_PARAMS,
                "Invalid params for tools/call: \"name\" must be a tool name string".into(),
            ));
        };
        let Some(def) = self.shared.registry.get(name) else {
            return Some(Response::error(
                id,
                protocol::INVALID_PARAMS,
                format!(
                    "Unknown tool: {}. Call tools/list for the available tools.",
                    protocol::echo_name(name)
                ),
            ));
        };
        let args = match params.get("arguments") {
            None | Some(Value::Null) => json!({}),
            Some(v @ Value::Object(_)) => v.clone(),
            Some(_) => {
                return Some(Response::error(
                    id,
                    protocol::INVALID_PARAMS,
                    "Invalid params for tools/call: \"arguments\" must be an object".into(),
                ));
            }
        };
        let trace_id = meta.trace_id().or_else(|| {
            RequestMeta::from_params(Some(&json!({"_meta": args.get("_meta")}))).trace_id()
        });
        let key = id.to_string();
        let cancelled = Arc::new(AtomicBool::new(false));
        if let Ok(mut map) = self.session.in_flight.lock() {
            map.insert(key.clone(), cancelled.clone());
        }
        let log_level = match era {
            Era::Modern => meta.log_level.clone(),
            Era::Legacy(_) => self.session.log_level.lock().ok().and_then(|g| g.clone()),
        };
        let call = CallMeta {
            trace_id,
            progress_token: meta.progress_token,
            log_level,
            stage: crate::stages::key(&id),
            structured: era.structured(),
        };
        let answer = self.run_tool(def, args, call, &cancelled).await;
        if let Ok(mut map) = self.session.in_flight.lock() {
            map.remove(&key);
        }
        if cancelled.load(Ordering::Acquire) {
            tracing::debug!(target: "mesh::server", "dropping the answer of cancelled request {key}");
            return None;
        }
        Some(match answer {
            Ok(out) => {
                // Built member by member: `json!` would serialise a copy of the text (and of
                // the data) into a new value; these move them.
                let mut text = serde_json::Map::new();
                text.insert("type".into(), Value::from("text"));
                text.insert("text".into(), Value::String(out.text));
                let mut content = vec![Value::Object(text)];
                content.extend(out.more_content);
                let mut result = serde_json::Map::new();
                result.insert("content".into(), Value::Array(content));
                result.insert("isError".into(), Value::Bool(out.is_error));
                if let Some(data) = out.data {
                    result.insert("structuredContent".into(), data);
                }
                Response::success(id, stamp(Value::Object(result), era))
            }
            Err(message) => Response::error(id, protocol::INTERNAL_ERROR, message),
        })
    }

    async fn run_tool(
        &self,
        def: &'static ToolDef,
        args: Value,
        call: CallMeta,
        cancelled: &AtomicBool,
    ) -> Result<ToolOutput, String> {
        let CallMeta {
            trace_id,
            progress_token,
            log_level,
            stage,
            structured,
        } = call;
        let _permit = self.permits.acquire_arc().await;
        if cancelled.load(Ordering::Acquire) {
            return Err("cancelled".into());
        }
        let snapshot = if def.index.waits(&args) {
            match self
                .wait_for_index(progress_token.as_ref(), cancelled)
                .await
            {
                Ok(s) => Some(s),
                // index_status answers with the progress instead of an error.
                Err(_) if def.index == crate::tools::IndexUse::Status => None,
                Err(out) => {
                    let session_id = self.session.id.clone();
                    let entry = move || crate::audit::AuditEntry {
                        session_id,
                        trace_id,
                        tool: def.name.to_string(),
                        args_digest: crate::audit::args_digest(&args),
                        status: crate::audit::CallStatus::Error,
                        files_accessed: Vec::new(),
                        redactions: 0,
                        duration_us: 0,
                    };
                    self.audit_after_answer(entry);
                    return Ok(out);
                }
            }
        } else {
            None
        };
        let shared = self.shared.clone();
        let session_id = self.session.id.clone();
        let started = Instant::now();
        let name = def.name;
        // Inline on the session's thread (standalone, cheap calls), else on a blocking thread.
        let inline = self.shared.inline_tools && crate::tools::runs_inline(def, &args);
        // This lets a tool send progress and log notifications for its own call on the
        // session's writer. From a blocking thread the send may wait for room in the queue;
        // inline it must not (the writer runs on this very thread), and no inline tool sends
        // any.
        let queue = self.out.clone();
        let notifier = notify::CallNotifier {
            progress_token,
            log_level,
            send: Box::new(move |frame| {
                let _ = if inline {
                    queue.try_send(frame).map_err(|_| ())
                } else {
                    queue.send_blocking(frame).map_err(|_| ())
                };
            }),
        };
        let work = move || {
            crate::stages::tool_start(&stage);
            let result = crate::isolate::catch(|| {
                let env = ToolEnv {
                    shared: &shared,
                    snapshot: snapshot.as_deref(),
                    structured,
                };
                notify::with_call_notifier(notifier, || crate::tools::invoke(def, &args, &env))
            });
            let (status, files, redactions) = match &result {
                Ok((out, crate::tools::Outcome::Answered)) => (
                    crate::audit::CallStatus::Success,
                    out.files_accessed.clone(),
                    out.redactions,
                ),
                Ok((_, crate::tools::Outcome::Refused)) => {
                    (crate::audit::CallStatus::Refused, Vec::new(), 0)
                }
                _ => (crate::audit::CallStatus::Error, Vec::new(), 0),
            };
            let result = result.map(|(out, _)| out);
            crate::stages::tool_end(&stage);
            let duration_us = started.elapsed().as_micros() as u64;
            let entry = move || crate::audit::AuditEntry {
                session_id,
                trace_id,
                tool: def.name.to_string(),
                args_digest: crate::audit::args_digest(&args),
                status,
                files_accessed: files,
                redactions,
                duration_us,
            };
            (result, entry)
        };
        let (joined, entry) = if inline {
            work()
        } else {
            blocking::unblock(work).await
        };
        self.audit_after_answer(entry);
        tracing::debug!(
            target: "mesh::server",
            tool = name,
            micros = started.elapsed().as_micros() as u64,
            "tool call finished"
        );
        joined.map_err(|p| {
            format!(
                "Tool task failed: {} panicked at {}; see the server log",
                def.name, p.location
            )
        })
    }

    /// Records a call in the audit trail off the answer's path: the audit task
    /// ([`crate::auditor`]) builds the entry (so the argument digest, canonical JSON + SHA-256,
    /// costs nothing on the answer's path) and writes it in a batch while the answer is on its
    /// way; the job holds the session's wait group, so the drain barrier still waits for the
    /// row before the process exits. Nothing at all happens when auditing is off.
    fn audit_after_answer(
        &self,
        entry: impl FnOnce() -> crate::audit::AuditEntry + Send + 'static,
    ) {
        self.shared.audit_later(entry, Some(self.busy.clone()));
    }

    /// Waits (bounded, with progress notifications) for the first snapshot.
    async fn wait_for_index(
        &self,
        progress_token: Option<&Value>,
        cancelled: &AtomicBool,
    ) -> Result<Arc<crate::index::snapshot::Snapshot>, ToolOutput> {
        if let Some(s) = self.shared.index.current() {
            return Ok(s);
        }
        let deadline = Instant::now() + self.shared.index_wait;
        let mut last_progress: Option<u64> = None;
        loop {
            let tick =
                Duration::from_millis(200).min(deadline.saturating_duration_since(Instant::now()));
            let ready = futures_lite::future::or(
                async {
                    self.shared.index.ready().await;
                    true
                },
                async {
                    smol::Timer::after(tick).await;
                    false
                },
            )
            .await;
            if let Some(s) = self.shared.index.current() {
                return Ok(s);
            }
            if ready {
                continue;
            }
            let (done, total) = self.shared.index.progress();
            if cancelled.load(Ordering::Acquire) {
                return Err(ToolOutput::error("cancelled".into()));
            }
            if Instant::now() >= deadline {
                return Err(ToolOutput::error(format!(
                    "still indexing: {done} of {total} files extracted. Retry in a few seconds, \
or call index_status to watch progress."
                )));
            }
            if let Some(token) = progress_token {
                let value = last_progress.map_or(done, |p| done.max(p + 1));
                if last_progress.is_none_or(|p| value > p) {
                    last_progress = Some(value);
                    let mut params = json!({
                        "progressToken": token,
                        "progress": value,
                        "message": format!("indexing: {done} of {total} files"),
                    });
                    if total > 0 {
                        params["total"] = json!(total.max(value));
                    }
                    let _ = self
                        .send(protocol::notification("notifications/progress", params))
                        .await;
                }
            }
        }
    }
}

/// The `server/discover` result.
/// A `mesh://doc/` read: the one section the URI names (doc URIs are unique per section, see
/// [`crate::resources::doc_sections`]) out of the search_docs answer for its title, else the
/// best match (the URI names a query, as the template says), as the first section.
fn doc_section(
    snap: Option<&crate::index::snapshot::Snapshot>,
    segment: &str,
    text: String,
    data: Option<Value>,
) -> (String, Option<Value>) {
    let target = snap.and_then(|s| crate::resources::doc_target(s, segment));
    let mut blocks = text.split("\n### [");
    let head = blocks.next().unwrap_or_default().to_string();
    let blocks: Vec<&str> = blocks.collect();
    let pick = target
        .as_ref()
        .and_then(|t| {
            let at = format!("{}:{}-", t.path, t.line);
            blocks
                .iter()
                .position(|b| b.lines().next().is_some_and(|h| h.contains(&at)))
        })
        .unwrap_or(0);
    let Some(block) = blocks.get(pick) else {
        return (text, data);
    };
    let text = format!("{head}\n### [{block}");
    let data = data.map(|mut d| {
        if let Some(rows) = d.get_mut("rows").and_then(Value::as_array_mut) {
            let keep = match &target {
                Some(t) => rows
                    .iter()
                    .position(|r| r["path"] == json!(t.path) && r["line"] == json!(t.line))
                    .unwrap_or(pick),
                None => pick,
            };
            let row = rows.get(keep).cloned();
            rows.clear();
            rows.extend(row);
        }
        d
    });
    (text, data)
}

/// The `-32002` answer of a `resources/read` whose name the index does not hold, naming a few
/// close names of the same kind as URIs.
fn not_found(id: Value, uri: &str, kind: crate::resources::Kind, close: &[String]) -> Response {
    let uris: Vec<String> = close
        .iter()
        .map(|n| {
            format!(
                "{}{}/{}",
                crate::resources::SCHEME,
                kind.segment(),
                crate::resources::encode(n)
            )
        })
        .collect();
    let hint = if uris.is_empty() {
        format!("there is no {} resource at all", kind.segment())
    } else {
        format!("close ones: {}", uris.join(", "))
    };
    Response::error_with_data(
        id,
        protocol::RESOURCE_NOT_FOUND,
        format!(
            "Resource not found: {}: the index holds no {} of that name; {hint}. Call \
resources/list for every resource.",
            protocol::echo_input(uri),
            kind.segment(),
        ),
        json!({ "uri": protocol::echo_input(uri), "closest": uris }),
    )
}

/// Runs the handler of a request that is not a tool call (tool calls are isolated in
/// `run_tool`) through [`crate::isolate::catch`]: a panic in it costs that request only,
/// answered `-32603` naming the method and where it failed, and the session goes on.
///
/// With the test fixtures armed, a request whose params contain
/// [`crate::isolate::REQUEST_PANIC_MARKER`] panics here on purpose.
#[inline(never)]
fn guarded(
    req: &Request,
    work: impl FnOnce() -> Result<Value, (i64, String)>,
) -> Result<Value, (i64, String)> {
    crate::isolate::catch(|| {
        if crate::isolate::fixtures_enabled()
            && req
                .params
                .as_ref()
                .is_some_and(|p| p.to_string().contains(crate::isolate::REQUEST_PANIC_MARKER))
        {
            panic!("test panic in {}", req.method);
        }
        work()
    })
    .unwrap_or_else(|p| {
        Err((
            protocol::INTERNAL_ERROR,
            format!(
                "Internal error: {} failed (panicked at {}); this request is lost, the session \
goes on. Retry it, and see the server log.",
                protocol::echo_name(&req.method),
                p.location
            ),
        ))
    })
}

fn discover_result() -> Value {
    json!({
        "supportedVersions": protocol::DISCOVER_VERSIONS,
        "capabilities": {
            "tools": {"listChanged": false},
            "resources": {},
            "prompts": {"listChanged": false},
            "completions": {},
        },
        "instructions": INSTRUCTIONS,
        "ttlMs": 3_600_000,
        "cacheScope": "public",
        "resultType": "complete",
        "_meta": {protocol::META_SERVER_INFO: server_info_modern()},
    })
}

fn server_info_modern() -> Value {
    json!({"name": SERVER_NAME, "title": SERVER_TITLE, "version": crate::VERSION})
}

/// A list or read result with the modern era's caching members (`ttlMs`, `cacheScope`), which
/// the legacy eras do not have.
fn cached(mut value: Value, era: Era, ttl_ms: u64) -> Value {
    if era == Era::Modern {
        value["ttlMs"] = json!(ttl_ms);
        value["cacheScope"] = json!("public");
    }
    value
}

/// Adds the modern-era members (`resultType`, server info) to a result.
fn stamp(mut value: Value, era: Era) -> Value {
    if era == Era::Modern
        && let Value::Object(map) = &mut value
    {
        map.entry("resultType").or_insert(json!("complete"));
        map.insert(
            "_meta".into(),
            json!({protocol::META_SERVER_INFO: server_info_modern()}),
        );
    }
    value
}
