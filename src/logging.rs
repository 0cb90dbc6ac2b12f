//! Logging to stderr through `tracing`. `MESH_LOG` (or `RUST_LOG`) sets the filter, e.g.
//! `MESH_LOG=debug` or `MESH_LOG=mesh::server=debug,info`; the default is `warn`.

use tracing_subscriber::filter::Targets;
use tracing_subscriber::prelude::*;

/// Installs the stderr subscriber once; later calls do nothing.
pub fn init() {
    let spec = std::env::var("MESH_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .unwrap_or_default();
    let filter: Targets = spec
        .trim()
        .parse()
        .unwrap_or_else(|_| Targets::new().with_default(tracing::Level::WARN));
    let filter = if spec.trim().is_empty() {
        Targets::new().with_default(tracing::Level::WARN)
    } else {
        filter
    };
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(true);
    let _ = tracing_subscriber::registry()
        .with(layer.with_filter(filter))
        .try_init();
}
