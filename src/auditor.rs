//! The audit task: one long-lived writer per process that appends every session's audited
//! calls to the hash-chained trail ([`crate::audit`]), off the answer's path and off the
//! executor (on the `blocking` pool).
//!
//! A session queues a [`Job`] once a call is answered: a closure that builds the entry (the
//! canonical-JSON SHA-256 argument digest is computed here, not on the answer's path) and the
//! session's wait-group token, dropped once the row is written, so the drain barrier waits
//! for it before the process exits. The task takes what queued up while it was busy (up to
//! [`MAX_BATCH`], lingering up to [`LINGER`] for more after the first) and appends it in one
//! transaction: under load one SQLite commit and one thread wake-up serve many calls.
//!
//! The task is a unit of isolated work ([`crate::isolate`]): a panic in it (while building an
//! entry, say) is logged with its `file:line`, the rows of the batch in hand are lost and
//! counted in the log, and the task starts over with the audit trail opened afresh.

use std::time::Duration;

use crate::audit::{AuditEntry, AuditSink};

/// The most entries appended in one transaction.
pub const MAX_BATCH: usize = 64;
/// How long the task waits for more entries after the first of a batch.
pub const LINGER: Duration = Duration::from_millis(5);

/// One audited call waiting to be written.
pub struct Job {
    /// Builds the entry (in the audit task).
    pub build: Box<dyn FnOnce() -> AuditEntry + Send>,
    /// Dropped once the entry is written (or lost): the session's wait-group token.
    pub done: Option<crate::server::drain::Busy>,
}

/// The handle sessions queue their jobs on; the task runs until the last handle is gone.
pub struct Auditor {
    tx: async_channel::Sender<Job>,
    /// Closes when the task has written its last batch and closed the trail.
    finished: async_channel::Receiver<()>,
}

/// How long [`Auditor::close`] waits for the task at process exit.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

impl Auditor {
    /// Starts the task. It writes through an [`AuditSink`] of its own (opened at the first
    /// batch, retried after a failure, made afresh after a panic); a trail that cannot be
    /// opened drops the jobs: auditing never stops a tool answering.
    /// Rows are recorded for the workspace at `workspace` ([`AuditSink::for_workspace`]).
    pub fn start(workspace: Option<std::path::PathBuf>) -> Auditor {
        let (tx, rx) = async_channel::unbounded::<Job>();
        let (finished_tx, finished) = async_channel::bounded::<()>(1);
        blocking::unblock(move || {
            supervise(&rx, workspace.as_deref());
            drop(finished_tx);
        })
        .detach();
        Auditor { tx, finished }
    }

    /// Writes what is queued and closes the trail (SQLite folds its write-ahead log into the
    /// database file, so `audit.db` alone holds every row), waiting at most 2 s; for the end of
    /// the process. Jobs submitted afterwards are dropped.
    pub fn close(&self) {
        self.tx.close();
        let finished = self.finished.clone();
        smol::block_on(futures_lite::future::or(
            async move {
                let _ = finished.recv().await;
            },
            async {
                smol::Timer::after(CLOSE_WAIT).await;
            },
        ));
    }

    /// Queues one job; never blocks.
    pub fn submit(&self, job: Job) {
        // Only fails once the task is gone (process exit): the job is dropped with its token.
        let _ = self.tx.try_send(job);
    }
}

/// Runs the writer, starting it over after a panic.
fn supervise(rx: &async_channel::Receiver<Job>, workspace: Option<&std::path::Path>) {
    // Background work: when its timer fires, it must not preempt a session's thread.
    crate::sys::lower_thread_priority();
    let mut failures = 0u32;
    // The wait-group tokens of the batch in hand live here, so that after a panic they go only
    // once the panic is logged (a session that ends meanwhile then sees the log line first).
    let mut held: Vec<Option<crate::server::drain::Busy>> = Vec::new();
    loop {
        match crate::isolate::catch(|| write_loop(rx, &mut held, workspace)) {
            Ok(()) => return, // every handle is gone
            Err(p) => {
                failures += 1;
                tracing::error!(
                    target: "mesh::audit",
                    "the audit task panicked at {}: {}; {} audit row(s) of the batch in hand are lost; starting it over (failure {failures})",
                    p.location,
                    p.message,
                    held.len()
                );
                held.clear();
                // A panic that repeats at once must not spin: pause a little, more each time.
                std::thread::sleep(Duration::from_millis(10 << failures.min(8)));
            }
        }
    }
}

/// Writes batches until the queue closes, through a sink of its own (opened at the first).
fn write_loop(
    rx: &async_channel::Receiver<Job>,
    held: &mut Vec<Option<crate::server::drain::Busy>>,
    workspace: Option<&std::path::Path>,
) {
    let sink = AuditSink::for_workspace(workspace);
    let mut batch: Vec<Job> = Vec::with_capacity(MAX_BATCH);
    // Idle, the task waits on the queue (the first job wakes it). Busy, it does not: it
    // sleeps [`LINGER`] and takes what queued meanwhile, so a session queuing a job finds no
    // one waiting and wakes no thread — the calls of a busy session cost no wake-up each, and
    // the task runs on its own clock, off the answer path. It waits on the queue again after
    // a pause that brought nothing.
    while let Ok(first) = rx.recv_blocking() {
        batch.push(first);
        let mut full = false;
        loop {
            if !full {
                std::thread::sleep(LINGER);
            }
            while batch.len() < MAX_BATCH
                && let Ok(job) = rx.try_recv()
            {
                batch.push(job);
            }
            if batch.is_empty() {
                break;
            }
            full = batch.len() == MAX_BATCH; // more may be waiting: no pause before the next
            write_batch(&mut batch, &sink, held);
        }
    }
}

/// Builds the batch's entries and appends them in one transaction, then lets the sessions'
/// wait-group tokens go.
fn write_batch(
    batch: &mut Vec<Job>,
    sink: &AuditSink,
    held: &mut Vec<Option<crate::server::drain::Busy>>,
) {
    let entries: Vec<AuditEntry> = batch
        .drain(..)
        .map(|job| {
            held.push(job.done);
            (job.build)()
        })
        .collect();
    if crate::isolate::fixtures_enabled() && entries.iter().any(|e| e.tool == "test_panic_audit") {
        panic!("test fixture: the audit task panics on purpose");
    }
    sink.record_batch(&entries);
    // The sessions' wait-group tokens go once the rows are written.
    held.clear();
}
