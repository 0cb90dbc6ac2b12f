//! `meshd`: the per-workspace daemon. All logic lives in the library.

fn main() {
    std::process::exit(mesh_mcp::meshd_main());
}
