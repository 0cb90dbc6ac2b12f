//! `mesh-mcp demo`: index the bundled example workspace and run a scripted session through the
//! real stdio server (this binary, spawned as a subprocess), printing each request and the
//! Markdown answer. It is the README's "run the main job" command.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// The scripted tool calls, in order; calls to tools this build does not serve are skipped.
const SCRIPT: &[(&str, &str)] = &[
    ("smart_search", r#"{"query": "OrderService", "limit": 3}"#),
    (
        "find_dependents",
        r#"{"target": "github.com/acme/shop/orders/gen/orderspb", "granularity": "file"}"#,
    ),
    (
        "analyze_grpc",
        r#"{"target": "InventoryService.ReserveStock"}"#,
    ),
    (
        "analyze_impact",
        r#"{"target": "orders.created", "depth": 2}"#,
    ),
    (
        "analyze_impact",
        r#"{"target": "GET /shipments/{orderId}"}"#,
    ),
    (
        "search_docs",
        r#"{"query": "kafka order events", "max_sections": 2}"#,
    ),
    ("visualize_mesh", r#"{"format": "mermaid"}"#),
    ("index_status", "{}"),
];

const USAGE: &str = "\
Usage: mesh-mcp demo [WORKSPACE]

Indexes the bundled example workspace (or WORKSPACE) and runs a scripted MCP session through the
real stdio server, printing each request and its Markdown answer.

Example: mesh-mcp demo
";

/// The bundled example workspace, found next to the sources this binary was built from.
pub fn example_workspace() -> PathBuf {
    std::env::var_os("MESH_DEMO_WORKSPACE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/examples/polyglot-shop"
            ))
        })
}

/// Runs the subcommand; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    let mut workspace = None;
    for a in args {
        match a.as_str() {
            "--help" | "-h" => {
                return super::print_stdout(USAGE);
            }
            other if other.starts_with('-') => {
                eprintln!("mesh-mcp demo: unknown option `{other}`. Try `mesh-mcp demo --help`.");
                return 2;
            }
            other => workspace = Some(PathBuf::from(other)),
        }
    }
    let workspace = workspace.unwrap_or_else(example_workspace);
    if !workspace.is_dir() {
        eprintln!(
            "mesh-mcp demo: the example workspace `{}` is missing. Run the demo from a clone of the \
repository, or pass a workspace directory: `mesh-mcp demo path/to/workspace`.",
            workspace.display()
        );
        return 1;
    }
    match run(&workspace) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("mesh-mcp demo: {e}");
            1
        }
    }
}

fn run(workspace: &std::path::Path) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let scratch = std::env::temp_dir().join(format!("mesh-demo-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)
        .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
    let mut child = Command::new(exe)
        .args(["run", "--standalone"])
        .current_dir(workspace)
        .env("MESH_AUDIT_DB", scratch.join("audit.db"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start the server: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
    let mut next_id = 0i64;
    let mut call = |method: &str, params: Value| -> Result<Value, String> {
        next_id += 1;
        let req = json!({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params});
        eprintln!("\n\x1b[1m→ {req}\x1b[0m");
        writeln!(stdin, "{req}").map_err(|e| format!("server stdin closed: {e}"))?;
        loop {
            let mut line = String::new();
            if stdout.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
                return Err("the server exited before answering".into());
            }
            let msg: Value = serde_json::from_str(&line).map_err(|e| format!("bad frame: {e}"))?;
            if msg.get("id") == Some(&json!(next_id)) {
                return Ok(msg);
            }
        }
    };
    eprintln!("mesh-mcp demo on {}", workspace.display());
    let init = call(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "mesh-mcp demo", "version": crate::VERSION}}),
    )?;
    let info = &init["result"]["serverInfo"];
    eprintln!(
        "← {} {} (protocol {})",
        info["name"].as_str().unwrap_or("?"),
        info["version"].as_str().unwrap_or("?"),
        init["result"]["protocolVersion"].as_str().unwrap_or("?")
    );
    let list = call("tools/list", json!({}))?;
    let tools: Vec<String> = list["result"]["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    eprintln!("← tools: {}", tools.join(", "));
    for (tool, args) in SCRIPT {
        if !tools.iter().any(|t| t == tool) {
            continue;
        }
        let args: Value = serde_json::from_str(args).unwrap_or_else(|_| json!({}));
        let resp = call("tools/call", json!({"name": tool, "arguments": args}))?;
        let text = resp["result"]["content"][0]["text"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| resp.to_string());
        eprintln!("{text}");
    }
    drop(stdin);
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}
