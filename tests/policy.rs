//! Stop rules through the real binary: `allow_all` answers, `audit_warn` answers and logs,
//! `enforce_refusal` refuses with the structured payload and the audit row says `refused`.

mod common;

use common::{Server, temp_dir, tool_text};
use serde_json::{Value, json};

fn workspace(mode: &str) -> std::path::PathBuf {
    let ws = temp_dir(&format!("policy-{mode}"));
    std::fs::create_dir_all(ws.join("deploy")).unwrap();
    std::fs::write(ws.join("deploy/app.yaml"), "replicas: 2\n").unwrap();
    std::fs::write(
        ws.join("mesh-mcp.toml"),
        format!(
            "[policy]\nmode = \"{mode}\"\n[policy.stop_rules]\n\"deploy\" = \"Infrastructure is changed by the platform team.\"\n"
        ),
    )
    .unwrap();
    ws
}

fn call(server: &mut Server, args: Value) -> Value {
    server.call(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    server.call(
        2,
        "tools/call",
        json!({"name": "smart_search", "arguments": args}),
    )
}

#[test]
fn enforce_refusal_refuses_with_a_structured_payload_and_is_audited() {
    let ws = workspace("enforce_refusal");
    let mut server = Server::start(&ws);
    let resp = call(&mut server, json!({"query": "replicas", "scope": "deploy"}));
    assert_eq!(resp["result"]["isError"], true, "{resp}");
    let payload: Value = serde_json::from_str(tool_text(&resp)).unwrap();
    assert_eq!(payload["status"], "GOVERNANCE_BLOCKED");
    assert_eq!(payload["agent_next_action"], "STOP_AND_REPORT_TO_USER");
    assert_eq!(payload["rule"], "deploy");
    // A question that does not touch the guarded path is answered.
    let other = server.call(
        3,
        "tools/call",
        json!({"name": "smart_search", "arguments": {"query": "OrderService"}}),
    );
    assert_eq!(other["result"]["isError"], false, "{other}");
    drop(server.finish(std::time::Duration::from_secs(10)));
}

#[test]
fn audit_warn_and_allow_all_answer() {
    for mode in ["audit_warn", "allow_all"] {
        let ws = workspace(mode);
        let mut server = Server::start(&ws);
        let resp = call(&mut server, json!({"query": "replicas", "scope": "deploy"}));
        assert_eq!(resp["result"]["isError"], false, "{mode}: {resp}");
        assert!(!tool_text(&resp).contains("GOVERNANCE_BLOCKED"));
    }
}

#[test]
fn refused_calls_are_recorded_as_refused() {
    let ws = workspace("enforce_refusal");
    let mut server = Server::start(&ws);
    let _ = call(&mut server, json!({"query": "x", "scope": "deploy"}));
    let home = server.home.clone();
    drop(server.finish(std::time::Duration::from_secs(10)));
    // The audit write happens off the executor; it is done once the process has exited.
    let conn = rusqlite::Connection::open(home.join("audit.db")).unwrap();
    let status: String = conn
        .query_row(
            "SELECT status FROM audit_entries ORDER BY entry_seq DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(status, "REFUSED");
}

#[test]
fn every_pipelined_call_is_audited_before_the_process_exits() {
    // The audit row is written after the answer is sent; input ending right behind 40
    // pipelined calls must still leave all 40 rows, in one valid chain.
    let ws = workspace("allow_all");
    let mut server = Server::start(&ws);
    server.call(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    for id in 100..140 {
        server.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "smart_search", "arguments": {"query": "replicas"}}}));
    }
    let home = server.home.clone();
    let (frames, _) = server.finish(std::time::Duration::from_secs(20));
    let answered = frames
        .iter()
        .filter(|f| f["id"].as_i64().is_some_and(|id| (100..140).contains(&id)))
        .count();
    assert_eq!(answered, 40);
    let conn = rusqlite::Connection::open(home.join("audit.db")).unwrap();
    let rows: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM audit_entries WHERE tool = 'smart_search'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(rows, 40);
    let verify = std::process::Command::new(env!("CARGO_BIN_EXE_mesh-mcp"))
        .args(["audit", "verify", "--db"])
        .arg(home.join("audit.db"))
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stderr)
    );
}
