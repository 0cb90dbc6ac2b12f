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

/// Routes panic messages through `tracing` (one line with the location) instead of the default
/// hook's stderr dump, so a panicking tool task leaves a readable log line.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "non-string panic payload".into());
        tracing::error!(target: "mesh::server", "panic at {location}: {message}");
    }));
}
