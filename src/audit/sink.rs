//! [`AuditSink`]: the audit trail as the server uses it, opened on first use and retried after
//! a failure, never an error for the caller.

use super::AuditEntry;
use super::log::AuditLog;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// The audit trail as the server uses it: opened on first use, re-tried after a failure (a
/// full disk at start, a side file left unwritable) at most every [`AuditSink::retry`], and
/// never an error for the caller — failures are logged, and the tool answers regardless.
pub struct AuditSink {
    state: Mutex<SinkState>,
    retry: Duration,
    /// The workspace the rows are recorded for ([`AuditLog::with_workspace`]).
    workspace: Option<PathBuf>,
}

enum SinkState {
    Unopened,
    Open(Box<AuditLog>),
    Failed { at: std::time::Instant },
}

/// Environment variable: milliseconds between attempts to open an audit database that could
/// not be opened (default 30 000; tests use less).
pub const RETRY_ENV: &str = "MESH_AUDIT_RETRY_MS";

impl Default for AuditSink {
    fn default() -> Self {
        AuditSink::new()
    }
}

impl AuditSink {
    /// A sink that opens `AuditLog::default_path()` on first use.
    pub fn new() -> AuditSink {
        let retry = std::env::var(RETRY_ENV)
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .map_or(Duration::from_secs(30), Duration::from_millis);
        AuditSink {
            state: Mutex::new(SinkState::Unopened),
            retry,
            workspace: None,
        }
    }

    /// A sink like [`AuditSink::new`] whose rows are recorded for the workspace at `dir`.
    pub fn for_workspace(dir: Option<&Path>) -> AuditSink {
        AuditSink {
            workspace: dir.map(Path::to_path_buf),
            ..AuditSink::new()
        }
    }

    /// Appends `entry`, opening the database first when needed; every failure is logged.
    pub fn record(&self, entry: &AuditEntry) {
        self.record_batch(std::slice::from_ref(entry));
    }

    /// Appends `entries` in one transaction ([`AuditLog::record_batch`]), opening the database
    /// first when needed; every failure is logged.
    pub fn record_batch(&self, entries: &[AuditEntry]) {
        let Some(first) = entries.first() else {
            return;
        };
        let more = match entries.len() - 1 {
            0 => String::new(),
            n => format!(" (and {n} more in its batch)"),
        };
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let SinkState::Failed { at } = &*state {
            if at.elapsed() < self.retry {
                tracing::debug!(target: "mesh::audit", "audit trail unavailable: the call of {}{more} is not recorded", first.tool);
                return;
            }
            *state = SinkState::Unopened;
        }
        if matches!(*state, SinkState::Unopened) {
            let path = AuditLog::default_path();
            *state = match AuditLog::open(&path) {
                Ok(log) => SinkState::Open(Box::new(match &self.workspace {
                    Some(dir) => log.with_workspace(dir),
                    None => log,
                })),
                Err(e) => {
                    // Seconds by integer arithmetic: no float formatting in the binary.
                    let every = crate::render::decimal(self.retry.as_millis() as u64, 1000, 1);
                    tracing::warn!(target: "mesh::audit", "audit trail unavailable: {e}; calls are not recorded until it opens (retried every {every} s)");
                    SinkState::Failed {
                        at: std::time::Instant::now(),
                    }
                }
            };
        }
        if let SinkState::Open(log) = &*state
            && let Err(e) = log.record_batch(entries)
        {
            tracing::warn!(target: "mesh::audit", "could not record the call of {}{more}: {e}", first.tool);
        }
    }
}
