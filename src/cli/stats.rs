//! `mesh-mcp stats`: summarise audited tool calls.

/// Runs the subcommand; returns the exit status.
pub fn main(_args: &[String]) -> i32 {
    eprintln!("mesh-mcp stats: not built yet");
    2
}
