//! `mesh-mcp run [--standalone]`: serve MCP over stdio.
//!
//! Until the daemon lands, `run` always serves in-process (standalone).

use std::sync::Arc;

use crate::index::snapshot::{IndexHandle, Snapshot};
use crate::server::{self, Shared};

/// Runs the subcommand; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    crate::logging::init();
    crate::logging::install_panic_hook();
    for a in args {
        match a.as_str() {
            "--standalone" => {}
            "--help" | "-h" => {
                eprintln!(
                    "Usage: mesh-mcp run [--standalone]\n\nServes MCP over stdio for the workspace in the current directory.\nExample: claude mcp add mesh-mcp -- mesh-mcp run"
                );
                return 0;
            }
            other => {
                eprintln!("mesh-mcp run: unknown option `{other}`. Try `mesh-mcp run --help`.");
                return 2;
            }
        }
    }
    let base = match std::env::current_dir().and_then(|d| d.canonicalize()) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("mesh-mcp run: cannot read the current directory: {e}");
            return 1;
        }
    };
    let index = IndexHandle::new();
    // Test hook (fixtures only): publish the first snapshot late, so the tests can watch a
    // tool call wait for it.
    let delay_ms: u64 = std::env::var("MESH_TEST_FIXTURES")
        .ok()
        .filter(|v| v == "1")
        .and_then(|_| std::env::var("MESH_TEST_INDEX_DELAY_MS").ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if delay_ms > 0 {
        let late = index.clone();
        std::thread::spawn(move || {
            for i in 1..=10u64 {
                late.set_progress(i * 10, 100);
                std::thread::sleep(std::time::Duration::from_millis(delay_ms / 10));
            }
            late.publish(Snapshot::default());
        });
    } else {
        index.publish(Snapshot::default());
    }
    let shared = Arc::new(Shared::new(base, index));
    server::serve_stdio(shared)
}
