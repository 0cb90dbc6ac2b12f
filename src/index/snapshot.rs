//! The immutable, shared index snapshot and the handle that publishes it.
//!
//! Readers take an `Arc<Snapshot>` for the whole request and never block the writer; the
//! writer builds a new snapshot off to the side and swaps it in whole, bumping the generation.
//! Before the first snapshot exists, [`IndexHandle::ready`] lets a tool call wait for it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::SystemTime;

/// One complete, immutable view of the workspace index.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// 1 for the first published snapshot, +1 for each reload.
    pub generation: u64,
    /// When this snapshot was published.
    pub published_at: Option<SystemTime>,
    /// How long building it took, in milliseconds.
    pub build_ms: u64,
}

/// Holds the current snapshot and announces the first one.
#[derive(Debug)]
pub struct IndexHandle {
    current: RwLock<Option<Arc<Snapshot>>>,
    generation: AtomicU64,
    ready_rx: async_channel::Receiver<()>,
    ready_tx: Mutex<Option<async_channel::Sender<()>>>,
    files_done: AtomicU64,
    files_total: AtomicU64,
}

impl Default for IndexHandle {
    fn default() -> Self {
        let (tx, rx) = async_channel::bounded(1);
        IndexHandle {
            current: RwLock::new(None),
            generation: AtomicU64::new(0),
            ready_rx: rx,
            ready_tx: Mutex::new(Some(tx)),
            files_done: AtomicU64::new(0),
            files_total: AtomicU64::new(0),
        }
    }
}

impl IndexHandle {
    /// A handle with no snapshot yet.
    pub fn new() -> Arc<IndexHandle> {
        Arc::new(IndexHandle::default())
    }

    /// The current snapshot, if one has been published.
    pub fn current(&self) -> Option<Arc<Snapshot>> {
        self.current.read().ok().and_then(|g| g.clone())
    }

    /// Publishes a new snapshot, stamping its generation; returns that generation.
    pub fn publish(&self, mut snapshot: Snapshot) -> u64 {
        let generation = self.generation.fetch_add(1, Ordering::AcqRel) + 1;
        snapshot.generation = generation;
        snapshot.published_at = Some(SystemTime::now());
        if let Ok(mut g) = self.current.write() {
            *g = Some(Arc::new(snapshot));
        }
        // Dropping the sender wakes every waiter of `ready()`, now and later.
        if let Ok(mut tx) = self.ready_tx.lock() {
            tx.take();
        }
        generation
    }

    /// Resolves once the first snapshot has been published.
    pub async fn ready(&self) {
        let _ = self.ready_rx.recv().await;
    }

    /// The number of the newest published generation (0 before the first).
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Records indexing progress (files extracted of files found) for progress notifications
    /// and the "still indexing" message.
    pub fn set_progress(&self, done: u64, total: u64) {
        self.files_total.store(total, Ordering::Relaxed);
        self.files_done.store(done, Ordering::Relaxed);
    }

    /// Indexing progress: (files extracted, files found).
    pub fn progress(&self) -> (u64, u64) {
        (
            self.files_done.load(Ordering::Relaxed),
            self.files_total.load(Ordering::Relaxed),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_resolves_after_first_publish() {
        let h = IndexHandle::new();
        assert!(h.current().is_none());
        let h2 = h.clone();
        let waiter = std::thread::spawn(move || smol::block_on(h2.ready()));
        assert_eq!(h.publish(Snapshot::default()), 1);
        waiter.join().unwrap();
        smol::block_on(h.ready());
        assert_eq!(h.publish(Snapshot::default()), 2);
        assert_eq!(h.current().unwrap().generation, 2);
    }
}
