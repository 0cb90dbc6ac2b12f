//! The tool registry.
