//! Helpers shared by the stress tests (`tests/fuzz.rs`, `tests/load.rs`, `tests/faults.rs`):
//! a seeded generator (`rng.rs`, shared with the extractor fuzz harness in `src/index`),
//! memory readings from `/proc`, the SPEC §9 budget file, a small workspace, and the raw server command for tests that need the pipes in their own hands
//! (a client that stops reading, a closed stdout, signals). Included with `#[path]`, next to
//! `tests/common/mod.rs`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

#[path = "rng.rs"]
mod rng;
#[allow(unused_imports)]
pub use rng::Rng;

/// A `/proc/<pid>/status` field in KiB (`VmHWM` = peak resident set, `VmRSS` = now).
pub fn proc_status_kb(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|line| {
        let rest = line.strip_prefix(field)?.strip_prefix(':')?;
        rest.trim().strip_suffix("kB")?.trim().parse().ok()
    })
}

/// `size-report/budgets.json` (SPEC §9, memory in KiB).
pub fn budgets() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("size-report/budgets.json");
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parse {}: {e}", path.display()))
}

/// A budget in KiB from `budgets.json`, by JSON pointer (e.g. `/tiers/5k/peak_rss_kb`).
pub fn budget_kb(pointer: &str) -> u64 {
    budgets()
        .pointer(pointer)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("budgets.json has no {pointer}"))
}

/// Writes a small two-service workspace (a gRPC contract, a Markdown doc, Go and Python code)
/// into `dir` and returns it.
pub fn small_workspace(dir: &Path) -> PathBuf {
    let files: [(&str, &str); 5] = [
        (
            "contracts/orders/v1/orders.proto",
            "syntax = \"proto3\";\npackage mini.orders.v1;\n\n// Takes orders.\nservice OrderService {\n  rpc PlaceOrder(PlaceOrderRequest) returns (PlaceOrderReply);\n}\n\nmessage PlaceOrderRequest { string sku = 1; }\nmessage PlaceOrderReply { string order_id = 1; }\n",
        ),
        (
            "docs/adr/0001-kafka.md",
            "# ADR 0001: Kafka for order events\n\nThe orders service publishes `orders.created` on Kafka.\n",
        ),
        (
            "services/orders/go.mod",
            "module example.com/mini/orders\n\ngo 1.22\n",
        ),
        (
            "services/orders/main.go",
            "package main\n\n// OrdersTopic is where placed orders are announced.\nconst OrdersTopic = \"orders.created\"\n\nfunc main() {}\n",
        ),
        (
            "services/payments/consumer.py",
            "\"\"\"Consumes placed orders.\"\"\"\n\nTOPIC = \"orders.created\"\n\n\ndef charge(order_id):\n    return bool(order_id)\n",
        ),
    ];
    for (rel, text) in files {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir.to_path_buf()
}

/// `mesh-mcp run --standalone` in `workspace` with a private `home` (audit trail, socket), all
/// three standard streams piped, and the environment `tests/common` uses.
pub fn raw_server(workspace: &Path, home: &Path, env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mesh-mcp"));
    cmd.args(["run", "--standalone"])
        .current_dir(workspace)
        .env("HOME", home)
        .env("MESH_AUDIT_DB", home.join("audit.db"))
        .env("MESH_SOCKET_PATH", home.join("meshd.sock"))
        .env_remove("MESH_LOG")
        .env_remove("RUST_LOG")
        .env_remove("MESH_TEST_FIXTURES")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Sends a signal with `kill(1)` (the tests declare no libc bindings).
pub fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{name} {pid} failed");
}
