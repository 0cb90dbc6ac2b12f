//! The index: crawl, lex, extract, resolve into a graph, publish an immutable snapshot.

pub mod cache;
pub mod crawl;
pub mod facts;
pub mod graph;
pub mod ignore;
pub mod lang;
pub mod lex;
pub mod snapshot;
pub mod watch;

use std::sync::Arc;

use crate::config::Config;
use snapshot::{IndexHandle, Snapshot};

/// Starts indexing the workspace on a background thread and publishes each snapshot to
/// `handle`. Returns at once: `initialize` must never wait for the index.
pub fn spawn_indexer(config: Arc<Config>, handle: Arc<IndexHandle>) {
    let _ = &config;
    // Test hook (fixtures only): publish the first snapshot late, so the tests can watch a
    // tool call wait for it.
    let delay_ms: u64 = std::env::var("MESH_TEST_FIXTURES")
        .ok()
        .filter(|v| v == "1")
        .and_then(|_| std::env::var("MESH_TEST_INDEX_DELAY_MS").ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let spawned = std::thread::Builder::new()
        .name("mesh-indexer".into())
        .spawn(move || {
            if delay_ms > 0 {
                for i in 1..=10u64 {
                    handle.set_progress(i * 10, 100);
                    std::thread::sleep(std::time::Duration::from_millis(delay_ms / 10));
                }
            }
            handle.publish(Snapshot::default());
        });
    if let Err(e) = spawned {
        tracing::error!(target: "mesh::index", "cannot start the indexer thread: {e}");
    }
}
