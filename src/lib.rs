//! mesh-mcp: a small, fast Model Context Protocol server that gives an AI coding agent a
//! structural map of a multi-repo, multi-language microservice workspace. Every answer carries
//! `path:line` evidence.
//!
//! # How a request flows
//!
//! ```text
//!  stdin ──► framing (reader task) ──► protocol::classify ──► server (method table)
//!                                                                  │ tools/call
//!                                                                  ▼
//!                                       tools::Registry ──► one tool ──► index::Snapshot
//!                                                                  │ Markdown + structured rows
//!                                                                  │ (render, tools::structured,
//!                                                                  │  48 KiB cap over both)
//!  stdout ◄── framing (writer task) ◄───────── JSON-RPC response ◄─┘
//! ```
//!
//! `resources/read` is a `tools/call` in disguise: [`resources::tool_for`] maps the URI to the
//! tool and arguments that answer it, and the server runs that call on the same path.
//! `resources/list` and `completion/complete` wait for the first index generation like a tool
//! call (as tasks, so a `ping` never waits behind them); `prompts/*` answer inline.
//!
//! The same `server` loop runs behind a Unix socket in `meshd`, where `mesh-mcp run` is only a
//! byte-copying proxy (see [`daemon`]).
//!
//! # Map of the modules
//!
//! | Module | What lives there |
//! |---|---|
//! | [`framing`] | the stdio actor: a reader and a writer task joined by bounded queues; the only code that touches stdout |
//! | [`protocol`] | JSON-RPC 2.0 wire types, classification of a frame, error codes, MCP versions, `_meta` and W3C trace context |
//! | [`server`] | the session: method table, dual-era negotiation, concurrency, cancellation, progress, the drain barrier |
//! | [`stdio`] | this process's stdin and stdout as async streams, non-blocking on the reactor when they are pipes or sockets |
//! | [`stages`] | per-request stage timestamps, compiled in only for the benchmark build (`--features bench-stages`) |
//! | [`batch`] | 2025-03-26 batches, bounded: requests run per batch, answer bytes per line, one batch at a time per client |
//! | [`tools`] | the tool registry and one file per tool (arguments, run, truncation hint, structured rows); `tools::structured` holds the shared output schema, the row helpers and the cap over text and data |
//! | [`resources`] | `mesh://` resources and templates (each read is a tool call), `resources/list` paging, subscriptions and the watch that notifies a session of new index generations |
//! | [`prompts`] | the workflow prompts (`trace_rpc`, `change_impact`, `onboard_service`) and their expansion |
//! | [`completion`] | `completion/complete` for prompt arguments and template variables, ranked like `smart_search` |
//! | [`render`] | Markdown helpers and the central 48 KiB output cap |
//! | [`git`] | a safe, read-only git runner (no shell, timeout, repository-redirecting variables removed) for the wire-format check and the diff of `analyze_changes` |
//! | [`index`] | configuration-driven crawl, lexers, one extractor per language, the graph and the immutable snapshot, watching and caching |
//! | [`config`] | workspace discovery and the optional `mesh-mcp.toml` |
//! | [`security`] | path jail, secret masking, prompt-injection neutralisation, stop rules |
//! | [`audit`] | the hash-chained SQLite audit trail |
//! | [`auditor`] | the audit task: one writer per process, batching every session's audited calls |
//! | [`daemon`] | `meshd`: socket naming, the accept loop and the `mesh-mcp run` proxy |
//! | [`cli`] | one file per subcommand of the `mesh-mcp` binary |
//! | [`isolate`] | panic isolation: a panic costs one tool call, one file or one restart of the watcher or audit task, never the process |
//! | [`jsonw`] | compact JSON text of a value (what serde_json writes) and its length, for the answer path |
//! | [`order`] | the one stable sort every module shares, to keep a single sorting routine in the binary |
//! | [`sys`] | the handful of Linux/Unix system calls we need, declared by hand: the only module allowed `unsafe` code |
//! | `scratch` | unit tests only: fresh scratch directories under the temp dir |
//! | [`logging`] | the `tracing` subscriber: one line per event on stderr (and in `meshd`'s log file), filtered by `MESH_LOG` |
//!
//! Every module is crate-private. The public surface is short: the two binaries' entry points
//! ([`mesh_mcp_main`], [`meshd_main`]), the index as a library ([`discover`] a workspace's
//! [`Config`], build [`Snapshot`]s with an [`Indexer`], follow it with
//! [`spawn_indexer_with`]), the audit trail ([`AuditLog`], [`verify`]), the daemon's socket
//! naming ([`workspace_id`], [`probe_at`]), and the limits and test hooks the behaviour tests
//! provoke. Tests of internals live next to the code.
//!
//! Logs go to stderr through `tracing` with `mesh::…` targets; stdout belongs to the framing
//! writer alone.
//!
//! The design document, `docs/ARCHITECTURE.md`, explains the request path and its invariants
//! (§2), the index and its generations (§3), the daemon (§4), the audit trail (§5), security
//! (§6) and the budgets (§7); code comments cite its sections as `docs/ARCHITECTURE.md §N`.

#![deny(unsafe_code)]
#![warn(missing_docs)]

// Every module is internal: the crate's public surface is the short list below it.
pub(crate) mod audit;
pub(crate) mod auditor;
pub(crate) mod batch;
pub(crate) mod cli;
pub(crate) mod completion;
pub(crate) mod config;
pub(crate) mod daemon;
pub(crate) mod framing;
pub(crate) mod git;
pub(crate) mod index;
pub(crate) mod isolate;
pub(crate) mod jsonw;
pub(crate) mod logging;
pub(crate) mod order;
pub(crate) mod prompts;
pub(crate) mod protocol;
pub(crate) mod render;
pub(crate) mod resources;
#[cfg(test)]
pub(crate) mod scratch;
pub(crate) mod security;
pub(crate) mod server;
pub(crate) mod stages;
pub(crate) mod stdio;
#[allow(unsafe_code)]
pub(crate) mod sys;
pub(crate) mod tools;

// ─── The public surface ──────────────────────────────────────────────────────────────────
//
// What the two binaries run, and what the tests of behaviour in `tests/` drive besides the
// binaries: the index as a library (a workspace's configuration → an indexer → snapshots and
// their graph), the audit trail's reader and writer, the daemon's socket naming, and the
// documented limits and test hooks the tests provoke.

/// The `mesh-mcp` command line (`run`, `query`, `doctor`, …): parses `std::env::args` and
/// returns the process exit status.
pub fn mesh_mcp_main() -> i32 {
    cli::main()
}

/// The `meshd` daemon: serves one workspace's index on a Unix socket; returns the exit status.
pub fn meshd_main() -> i32 {
    daemon::main()
}

/// The names of the tools a session lists in `tools/list`, in that order.
pub fn tool_names() -> Vec<&'static str> {
    tools::Registry::standard()
        .all()
        .iter()
        .map(|t| t.name)
        .collect()
}

pub use audit::{AuditEntry, AuditLog, CallStatus, args_digest, new_session_id, verify};
pub use batch::{MAX_BATCH_ANSWER_BYTES, MAX_BATCH_REQUESTS};
pub use cli::demo::questions as demo_questions;
pub use config::{Config, discover, zero_config};
pub use daemon::socket::workspace_id;
pub use daemon::{EXIT_ALREADY_RUNNING, probe_at};
pub use index::cache::{FactCache, build_salt as cache_salt, workspace_id as cache_workspace_id};
pub use index::facts::{EventRole, Language};
pub use index::graph::{Confidence, Loc, RpcLink, ServiceLink};
pub use index::snapshot::{FileEntry, IndexHandle, Snapshot};
pub use index::watch::{WatchKind, WatchMode, WatchOptions};
pub use index::{Indexer, IndexerThread, spawn_indexer_with};
pub use isolate::{HANG_MARKER, PANIC_MARKER, WATCHER_PANIC_FILE};

/// The crate version, reported in `serverInfo`, `--version` and the workspace id.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
