//! Workspace discovery and the optional `.agents/mesh-mcp.toml` / `mesh-mcp.toml` (SPEC §4).

pub mod toml;
