//! `mesh-mcp audit verify`: replay the audit hash chain.

/// Runs the subcommand; returns the exit status.
pub fn main(_args: &[String]) -> i32 {
    eprintln!("mesh-mcp audit: not built yet");
    2
}
