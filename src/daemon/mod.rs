//! `meshd`: one shared index per workspace behind a Unix socket.

pub mod proxy;
pub mod serve;
pub mod socket;

use std::sync::atomic::AtomicUsize;
use std::time::SystemTime;

/// What a running daemon tells `index_status` and `doctor` about itself.
#[derive(Debug)]
pub struct DaemonStatus {
    pub pid: u32,
    pub version: &'static str,
    pub started_at: SystemTime,
    pub socket: std::path::PathBuf,
    /// Clients connected right now.
    pub clients: AtomicUsize,
}

/// Entry point of the `meshd` binary; returns the process exit status.
pub fn main() -> i32 {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--version" || a == "-V") {
        eprintln!("meshd {}", crate::VERSION);
        return 0;
    }
    crate::logging::init();
    tracing::error!(target: "mesh::daemon", "meshd is not built yet; use `mesh-mcp run --standalone`");
    1
}
