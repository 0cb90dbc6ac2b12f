//! Findings of a mutation-fuzz review of the protocol surface, driven over real pipes: the
//! 48 KiB cap over text and structured data together (zoom and resources), bounded
//! subscriptions, cursors, panics in non-tool handlers, unknown resources, strictly typed
//! completion and prompt parameters, bounded echoes of user input, unique doc URIs.

mod common;

use std::path::PathBuf;

use common::{Session, temp_dir, tool_text};
use serde_json::{Value, json};

/// The cap of one answer (text and data together), as the SPEC states it.
const CAP: usize = 49_152;

/// A workspace with one service serving thousands of HTTP routes, and a second one.
fn big_workspace() -> PathBuf {
    let ws = temp_dir("robust-big");
    let big = ws.join("services/big");
    std::fs::create_dir_all(&big).unwrap();
    let mut src = String::from("from fastapi import FastAPI\napp = FastAPI()\n\n");
    for i in 0..2500 {
        src.push_str(&format!(
            "@app.get(\"/orders/{i}/items/{{item_id}}/details/with/a/long/path\")\n\
             async def h{i}(item_id: str) -> dict:\n    return {{}}\n\n"
        ));
    }
    std::fs::write(big.join("api.py"), src).unwrap();
    std::fs::create_dir_all(ws.join("services/other")).unwrap();
    std::fs::write(ws.join("services/other/x.py"), "print('x')\n").unwrap();
    ws
}

fn compact_len(v: &Value) -> usize {
    serde_json::to_vec(v).unwrap().len()
}

/// Sends one request on the session and returns the whole response.
fn call(s: &mut Session, id: i64, method: &str, params: Value) -> Value {
    s.server.call(id, method, params)
}

#[test]
fn a_zoomed_service_keeps_text_and_data_within_the_cap_as_tool_and_resource() {
    let mut s = Session::start(&big_workspace());
    for (i, args) in [
        json!({"service": "services/big"}),
        json!({"service": "services/big", "format": "json"}),
        json!({"service": "services/big", "format": "html"}),
        json!({"service": "services/big", "max_services": 200}),
    ]
    .into_iter()
    .enumerate()
    {
        let resp = call(
            &mut s,
            100 + i as i64,
            "tools/call",
            json!({"name": "visualize_mesh", "arguments": args}),
        );
        let text = tool_text(&resp);
        let data = &resp["result"]["structuredContent"];
        assert!(data.is_object(), "{args}: no structured data");
        let total = text.len() + compact_len(data);
        assert!(total <= CAP, "{args}: {total} bytes of text and data");
        assert!(
            data["nodes"].as_array().unwrap().len() <= 202,
            "{args}: the nodes are bounded"
        );
    }
    // The Mermaid answer says what it folded and names the next call.
    let resp = call(
        &mut s,
        110,
        "tools/call",
        json!({"name": "visualize_mesh", "arguments": {"service": "services/big"}}),
    );
    let text = tool_text(&resp);
    assert!(text.contains("of 2500 contracts"), "{text}");
    assert!(text.contains("other contracts"), "{text}");
    assert!(
        text.contains("analyze_impact(target: \"GET /orders/"),
        "{text}"
    );
    assert!(text.contains("max_services: 80"), "{text}");
    // The resource of the same service: its contents share the cap too.
    let resp = call(
        &mut s,
        111,
        "resources/read",
        json!({"uri": "mesh://service/services%2Fbig"}),
    );
    let contents = resp["result"]["contents"].as_array().unwrap_or_else(|| {
        panic!("not a resource: {resp}");
    });
    let total: usize = contents
        .iter()
        .map(|c| c["text"].as_str().unwrap().len())
        .sum();
    assert!(total <= CAP, "{total} bytes of resource contents");
    assert_eq!(contents.len(), 2, "markdown and JSON");
}
