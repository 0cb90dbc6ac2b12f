//! The `mesh-mcp run` proxy: stdin/stdout bridged to the daemon socket.
