//! The conformance suite's fixture tools (`MESH_TEST_FIXTURES=1`) over real pipes: the answers
//! `tests/clients/` relies on when it runs the suite, checked without Node.

mod common;

use std::time::Duration;

use common::{Server, temp_dir, tool_text};
use serde_json::{Value, json};

fn initialized() -> Server {
    let mut s = Server::start(&temp_dir("fixture-tools"));
    let r = s.call(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    s
}

/// Sends a request and returns (notifications before the answer, the answer).
fn call_collecting(s: &mut Server, id: i64, params: Value) -> (Vec<Value>, Value) {
    s.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}));
    let mut notes = Vec::new();
    loop {
        let msg = s
            .next(Duration::from_secs(20))
            .expect("an answer within 20 s");
        if msg.get("method").is_some() {
            notes.push(msg);
        } else if msg["id"] == json!(id) {
            return (notes, msg);
        }
    }
}

#[test]
fn simple_text_and_error_handling_answer_as_the_suite_expects() {
    let mut s = initialized();
    let r = s.call(2, "tools/call", json!({"name": "test_simple_text"}));
    assert_eq!(r["result"]["isError"], false);
    assert_eq!(tool_text(&r), "This is a simple text response for testing.");
    let r = s.call(
        3,
        "tools/call",
        json!({"name": "test_error_handling", "arguments": {}}),
    );
    assert_eq!(r["result"]["isError"], true);
    assert!(!tool_text(&r).is_empty());
    let listed = s.call(4, "tools/list", json!({}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for name in [
        "test_simple_text",
        "test_error_handling",
        "test_tool_with_progress",
        "test_tool_with_logging",
    ] {
        assert!(names.contains(&name), "{name} not listed: {names:?}");
    }
}

#[test]
fn progress_fixture_sends_three_increasing_notifications_before_its_answer() {
    let mut s = initialized();
    let (notes, answer) = call_collecting(
        &mut s,
        2,
        json!({"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p-1"}}),
    );
    assert_eq!(answer["result"]["isError"], false);
    let progress: Vec<f64> = notes
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .map(|n| {
            assert_eq!(n["params"]["progressToken"], "p-1");
            n["params"]["progress"].as_f64().unwrap()
        })
        .collect();
    assert_eq!(progress, [0.0, 50.0, 100.0]);
}

#[test]
fn logging_fixture_sends_three_messages_after_set_level() {
    let mut s = initialized();
    let (quiet, _) = call_collecting(&mut s, 2, json!({"name": "test_tool_with_logging"}));
    assert!(
        quiet.is_empty(),
        "log messages before any setLevel: {quiet:?}"
    );
    let r = s.call(3, "logging/setLevel", json!({"level": "debug"}));
    assert_eq!(r["result"], json!({}));
    let (notes, answer) = call_collecting(&mut s, 4, json!({"name": "test_tool_with_logging"}));
    assert_eq!(answer["result"]["isError"], false);
    let messages: Vec<&str> = notes
        .iter()
        .filter(|n| n["method"] == "notifications/message")
        .map(|n| n["params"]["data"].as_str().unwrap())
        .collect();
    assert_eq!(
        messages,
        [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed"
        ]
    );
}
