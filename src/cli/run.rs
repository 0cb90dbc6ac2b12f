//! `mesh-mcp run [--standalone]`: serve MCP over stdio.
//!
//! By default the session is proxied to the workspace's shared `meshd` (spawned on first use;
//! see [`crate::daemon::proxy`]); `--standalone`, or any failure to reach the daemon before the
//! session starts, serves in this process instead.

use std::io::IsTerminal;

use crate::server::{self, Shared};

/// Runs the subcommand; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    crate::logging::init();
    crate::logging::install_panic_hook();
    let mut config_path: Option<std::path::PathBuf> = None;
    let mut standalone = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--standalone" => standalone = true,
            "--config" | "-c" => match super::config_arg("run", it.next()) {
                Some(p) => config_path = Some(p),
                None => return 2,
            },
            "--help" | "-h" => {
                // Help is printed before any serving starts; the session never sees it.
                return super::print_stdout(
                    "Usage: mesh-mcp run [--standalone] [--config FILE]\n\nServes MCP over stdio for the workspace in the current directory, through the\nworkspace's shared meshd daemon (started on first use). --standalone serves in this\nprocess instead.\nExample: claude mcp add mesh-mcp -- mesh-mcp run\n",
                );
            }
            other => {
                eprintln!("mesh-mcp run: unknown option `{other}`. Try `mesh-mcp run --help`.");
                return 2;
            }
        }
    }
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("mesh-mcp run: cannot read the current directory: {e}");
            return 1;
        }
    };
    let config = match crate::config::discover(&cwd, config_path.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("mesh-mcp run: {e}");
            return 1;
        }
    };
    for w in &config.warnings {
        tracing::warn!(target: "mesh::config", "{w}");
    }
    // A person who typed `mesh-mcp` at a prompt sees a silent process otherwise. The notice goes
    // to stderr: stdout belongs to the framing writer.
    if std::io::stdin().is_terminal() {
        eprintln!(
            "mesh-mcp {}: waiting for an MCP client on stdin (this is the stdio server your agent starts).\n\
Press Ctrl-D to quit. `mesh-mcp --help` lists the commands; `mesh-mcp demo` shows a session.",
            crate::VERSION
        );
    }
    if standalone {
        return server::serve_stdio(Shared::start_for_session(config));
    }
    crate::daemon::proxy::run(config)
}
