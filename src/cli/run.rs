//! `mesh-mcp run [--standalone]`: serve MCP over stdio.

/// Runs the subcommand; returns the exit status.
pub fn main(_args: &[String]) -> i32 {
    crate::logging::init();
    0
}
