//! `meshd`: one shared index per workspace behind a Unix socket.

pub mod proxy;
pub mod serve;
pub mod socket;

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
