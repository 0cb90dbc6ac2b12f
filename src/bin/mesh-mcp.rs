//! `mesh-mcp`: the command line and the stdio MCP server. All logic lives in the library.

fn main() {
    std::process::exit(mesh_mcp::mesh_mcp_main());
}
