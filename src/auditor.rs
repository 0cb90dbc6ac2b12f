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

use crate::audit::{AuditEntry, AuditLog};

/// The most entries appended in one transaction.
pub const MAX_BATCH: usize = 64;
/// How long the task waits for more entries after the first of a batch.
pub const LINGER: Duration = Duration::from_millis(5);

/// One audited call waiting to be written.
pub struct Job {
    /// Builds the entry (in the audit task).
    pub build: Box<dyn FnOnce() -> AuditEntry + Send>,
    /// Dropped once the entry is written (or lost): the session's wait-group token.
    pub done: Option<async_channel::Sender<()>>,
}

/// The handle sessions queue their jobs on; the task runs until the last handle is gone.
pub struct Auditor {
    tx: async_channel::Sender<Job>,
}

impl Auditor {
    /// Starts the task; `open` opens the audit trail (again after a panic), `None` when it
    /// cannot be opened (then the jobs are dropped: auditing never stops a tool answering).
    pub fn start(open: impl Fn() -> Option<AuditLog> + Send + 'static) -> Auditor {
        let (tx, rx) = async_channel::unbounded::<Job>();
        blocking::unblock(move || supervise(&rx, &open)).detach();
        Auditor { tx }
    }

    /// Queues one job; never blocks.
    pub fn submit(&self, job: Job) {
        // Only fails once the task is gone (process exit): the job is dropped with its token.
        let _ = self.tx.try_send(job);
    }
}

/// Runs the writer, starting it over after a panic.
fn supervise(rx: &async_channel::Receiver<Job>, open: &dyn Fn() -> Option<AuditLog>) {
    // Background work: when its timer fires, it must not preempt a session's thread.
    crate::sys::lower_thread_priority();
    let mut failures = 0u32;
    // The wait-group tokens of the batch in hand live here, so that after a panic they go only
    // once the panic is logged (a session that ends meanwhile then sees the log line first).
    let mut held: Vec<Option<async_channel::Sender<()>>> = Vec::new();
    loop {
        match crate::isolate::catch(|| write_loop(rx, open, &mut held)) {
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

/// Opens the trail lazily (at the first job) and writes batches until the queue closes.
fn write_loop(
    rx: &async_channel::Receiver<Job>,
    open: &dyn Fn() -> Option<AuditLog>,
    held: &mut Vec<Option<async_channel::Sender<()>>>,
) {
    let mut log: Option<Option<AuditLog>> = None;
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
            write_batch(&mut batch, log.get_or_insert_with(open).as_ref(), held);
        }
    }
}

/// Builds the batch's entries and appends them in one transaction, then lets the sessions'
/// wait-group tokens go.
fn write_batch(
    batch: &mut Vec<Job>,
    log: Option<&AuditLog>,
    held: &mut Vec<Option<async_channel::Sender<()>>>,
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
    if let Some(log) = log
        && let Err(e) = log.record_batch(&entries)
    {
        let tool = entries.first().map_or("", |e| e.tool.as_str());
        let more = entries.len() - 1;
        tracing::warn!(target: "mesh::audit", "could not record the call of {tool} (and {more} more in its batch) in the audit trail: {e}");
    }
    // The sessions' wait-group tokens go once the rows are written.
    held.clear();
}
