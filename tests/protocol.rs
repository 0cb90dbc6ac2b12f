//! The stdio server, driven over real pipes: handshake in every era, error codes, hardening,
//! concurrency, cancellation, progress, the drain barrier and the output cap.

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use common::{Server, temp_dir, tool_text};
use serde_json::{Value, json};

fn init(server: &mut Server, version: &str) -> Value {
    let resp = server.call(
        1,
        "initialize",
        json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    resp
}

fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"}
    })
}

#[test]
fn legacy_versions_are_echoed_and_fields_gated() {
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut s = Server::start(&temp_dir("legacy"));
        let resp = init(&mut s, version);
        let result = &resp["result"];
        assert_eq!(result["protocolVersion"], version);
        assert_eq!(result["serverInfo"]["name"], "mesh-mcp");
        assert!(result["capabilities"]["tools"].is_object());
        assert!(
            result["instructions"]
                .as_str()
                .unwrap()
                .contains("smart_search")
        );
        assert_eq!(
            result["serverInfo"].get("title").is_some(),
            version >= "2025-06-18"
        );
        let list = s.call(2, "tools/list", json!({}));
        let tools = list["result"]["tools"].as_array().unwrap();
        assert!(tools.iter().any(|t| t["name"] == "index_status"));
        for t in tools {
            assert_eq!(
                t.get("title").is_some(),
                version >= "2025-06-18",
                "{version}"
            );
            assert_eq!(
                t.get("annotations").is_some(),
                version >= "2025-03-26",
                "{version}"
            );
            assert_eq!(t["inputSchema"]["additionalProperties"], false);
            assert!(t["inputSchema"]["properties"].get("_meta").is_none());
        }
        assert!(list["result"].get("resultType").is_none());
    }
}

#[test]
fn unknown_legacy_version_gets_our_newest() {
    let mut s = Server::start(&temp_dir("newest"));
    let resp = init(&mut s, "2023-01-01");
    assert_eq!(resp["result"]["protocolVersion"], "2025-11-25");
}

#[test]
fn modern_era_discover_meta_and_unsupported_version() {
    let mut s = Server::start(&temp_dir("modern"));
    let discover = s.call(1, "server/discover", json!({"_meta": modern_meta()}));
    let r = &discover["result"];
    assert_eq!(r["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(r["resultType"], "complete");
    assert!(r["ttlMs"].is_u64());
    assert!(r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mesh-mcp");

    let list = s.call(2, "tools/list", json!({"_meta": modern_meta()}));
    let r = &list["result"];
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["cacheScope"], "public");
    assert!(r["ttlMs"].is_u64());
    assert!(r["tools"][0]["title"].is_string());

    let call = s.call(
        3,
        "tools/call",
        json!({"name": "index_status", "arguments": {}, "_meta": modern_meta()}),
    );
    assert_eq!(call["result"]["resultType"], "complete");
    assert_eq!(call["result"]["isError"], false);

    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let bad = s.call(4, "tools/list", json!({"_meta": meta}));
    assert_eq!(bad["id"], 4);
    assert_eq!(bad["error"]["code"], -32022);
    assert_eq!(
        bad["error"]["data"]["supported"],
        r#"["2026-07-28"]"#.parse::<Value>().unwrap()
    );
    assert_eq!(bad["error"]["data"]["requested"], "2099-01-01");

    let mut meta = modern_meta();
    meta.as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    let bad = s.call(5, "tools/list", json!({"_meta": meta}));
    assert_eq!(bad["error"]["code"], -32602);
}

#[test]
fn every_error_code_carries_the_right_id() {
    let mut s = Server::start(&temp_dir("errors"));
    init(&mut s, "2025-11-25");

    s.send_raw(b"this is not json\n");
    let r = s.next(Duration::from_secs(10)).unwrap();
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (Value::Null, json!(-32700))
    );

    s.send_raw(b"{\"jsonrpc\":\"1.0\",\"id\":11,\"method\":\"ping\"}\n");
    let r = s.response_for(&json!(11), Duration::from_secs(10)).unwrap();
    assert_eq!(r["error"]["code"], -32600);

    s.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":\"s12\"}\n");
    let r = s
        .response_for(&json!("s12"), Duration::from_secs(10))
        .unwrap();
    assert_eq!(r["error"]["code"], -32600);

    let r = s.call(13, "no/such/method", json!({}));
    assert_eq!(r["error"]["code"], -32601);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no/such/method")
    );

    let r = s.call(
        14,
        "tools/call",
        json!({"name": "no_such_tool", "arguments": {}}),
    );
    assert_eq!(r["error"]["code"], -32602);
    s.send(&json!({"jsonrpc": "2.0", "id": 15, "method": "tools/call"}));
    let r = s.response_for(&json!(15), Duration::from_secs(10)).unwrap();
    assert_eq!(r["error"]["code"], -32602);

    let r = s.call(
        16,
        "tools/call",
        json!({"name": "test_panic", "arguments": {}}),
    );
    assert_eq!(r["error"]["code"], -32603);

    // A tool's own failure is a result with isError, naming the field.
    let r = s.call(
        17,
        "tools/call",
        json!({"name": "index_status", "arguments": {"bogus": 1}}),
    );
    assert_eq!(r["result"]["isError"], true);
    assert!(tool_text(&r).contains("bogus"));

    let r = s.call(18, "logging/setLevel", json!({"level": "loud"}));
    assert_eq!(r["error"]["code"], -32602);
    let r = s.call(19, "logging/setLevel", json!({"level": "debug"}));
    assert_eq!(r["result"], json!({}));

    // MCP forbids a null id: refused as an invalid request that names the fix.
    s.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}\n");
    let r = s
        .response_for(&Value::Null, Duration::from_secs(10))
        .unwrap();
    assert_eq!(r["error"]["code"], -32600, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("must not be null")),
        "{r}"
    );
    // The session survived all of it.
    assert_eq!(s.call(20, "ping", json!({}))["result"], json!({}));
}

#[test]
fn notifications_are_never_answered() {
    let mut s = Server::start(&temp_dir("notif"));
    init(&mut s, "2025-11-25");
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    s.send(&json!({"jsonrpc": "2.0", "method": "no/such/notification"}));
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 999}}));
    s.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    let (out, status) = s.finish(Duration::from_secs(10));
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["id"], 3);
    assert_eq!(status, Some(0));
}

#[test]
fn bad_utf8_and_a_9_mib_line_do_not_end_the_session() {
    let mut s = Server::start(&temp_dir("hardening"));
    init(&mut s, "2025-11-25");
    s.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"\xff\xfe\"}\n");
    let r = s.next(Duration::from_secs(10)).unwrap();
    assert_eq!(r["error"]["code"], -32700);
    assert_eq!(r["id"], Value::Null);

    let mut huge = Vec::with_capacity(9 << 20);
    huge.extend_from_slice(
        b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\",\"params\":{\"x\":\"",
    );
    huge.resize(9 << 20, b'a');
    huge.extend_from_slice(b"\"}}\r\n");
    s.send_raw(&huge);
    let r = s.next(Duration::from_secs(20)).unwrap();
    assert_eq!(r["error"]["code"], -32600);

    s.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\r\n");
    let r = s.response_for(&json!(7), Duration::from_secs(10)).unwrap();
    assert_eq!(r["result"], json!({}));
}

#[test]
fn a_thousand_pipelined_requests_are_answered_exactly_once_before_exit() {
    let mut s = Server::start(&temp_dir("pipeline"));
    let mut batch = String::new();
    batch.push_str(&json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}).to_string());
    batch.push('\n');
    for i in 1..=1000 {
        let msg = if i % 2 == 0 {
            json!({"jsonrpc": "2.0", "id": i, "method": "ping"})
        } else {
            json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "index_status"}})
        };
        batch.push_str(&msg.to_string());
        batch.push('\n');
    }
    s.send_raw(batch.as_bytes());
    // stdin closes right after the last request: the drain barrier must still answer all.
    let (out, status) = s.finish(Duration::from_secs(60));
    assert_eq!(status, Some(0));
    let mut seen: HashMap<i64, usize> = HashMap::new();
    for msg in &out {
        *seen.entry(msg["id"].as_i64().unwrap()).or_default() += 1;
        assert!(msg.get("error").is_none(), "{msg}");
    }
    assert_eq!(seen.len(), 1001);
    assert!(seen.values().all(|&n| n == 1));
}

#[test]
fn a_slow_call_does_not_delay_a_ping() {
    let mut s = Server::start(&temp_dir("slow"));
    init(&mut s, "2025-11-25");
    s.send(&json!({"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"test_sleep","arguments":{"ms":1500}}}));
    let started = Instant::now();
    let ping = s.call(2, "ping", json!({}));
    assert_eq!(ping["result"], json!({}));
    assert!(
        started.elapsed() < Duration::from_millis(1000),
        "ping waited {:?}",
        started.elapsed()
    );
    let slow = s
        .response_for(&json!("slow"), Duration::from_secs(10))
        .unwrap();
    assert_eq!(tool_text(&slow), "slept 1500 ms");
}

#[test]
fn a_cancelled_call_gets_no_answer() {
    let mut s = Server::start(&temp_dir("cancel"));
    init(&mut s, "2025-11-25");
    s.send(&json!({"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"test_sleep","arguments":{"ms":600}}}));
    std::thread::sleep(Duration::from_millis(100));
    s.send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":41,"reason":"user"}}));
    s.send(&json!({"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"test_sleep","arguments":{"ms":700}}}));
    let (out, _) = s.finish(Duration::from_secs(10));
    let ids: Vec<&Value> = out.iter().map(|m| &m["id"]).collect();
    assert_eq!(ids, vec![&json!(42)], "{out:?}");
}

#[test]
fn a_call_before_the_first_index_waits_with_progress() {
    let mut s = Server::start_with(
        &temp_dir("progress"),
        &[("MESH_TEST_INDEX_DELAY_MS", "1200")],
    );
    let started = Instant::now();
    init(&mut s, "2025-11-25");
    assert!(
        started.elapsed() < Duration::from_millis(1000),
        "initialize waited for the index"
    );
    assert_eq!(s.call(2, "ping", json!({}))["result"], json!({}));
    s.send(&json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_generation","arguments":{},"_meta":{"progressToken":"tok"}}}));
    let mut progress = Vec::new();
    let answer = loop {
        let msg = s.next(Duration::from_secs(20)).expect("an answer");
        if msg["method"] == "notifications/progress" {
            assert_eq!(msg["params"]["progressToken"], "tok");
            progress.push(msg["params"]["progress"].as_f64().unwrap());
        } else {
            break msg;
        }
    };
    assert_eq!(answer["id"], 3);
    assert_eq!(tool_text(&answer), "generation 1");
    assert!(!progress.is_empty(), "no progress notifications");
    assert!(progress.windows(2).all(|w| w[1] > w[0]), "{progress:?}");
}

#[test]
fn still_indexing_after_the_wait_bound() {
    let mut s = Server::start_with(
        &temp_dir("stillidx"),
        &[
            ("MESH_TEST_INDEX_DELAY_MS", "5000"),
            ("MESH_INDEX_WAIT_MS", "300"),
        ],
    );
    init(&mut s, "2025-11-25");
    let r = s.call(
        2,
        "tools/call",
        json!({"name": "test_generation", "arguments": {}}),
    );
    assert_eq!(r["result"]["isError"], true);
    assert!(
        tool_text(&r).starts_with("still indexing"),
        "{}",
        tool_text(&r)
    );
    // An unknown tool is refused before the indexing gate.
    let r = s.call(3, "tools/call", json!({"name": "nope", "arguments": {}}));
    assert_eq!(r["error"]["code"], -32602);
}

#[test]
fn the_output_cap_closes_an_open_fence() {
    let mut s = Server::start(&temp_dir("cap"));
    init(&mut s, "2025-11-25");
    let r = s.call(
        2,
        "tools/call",
        json!({"name": "test_big_output", "arguments": {"bytes": 200000}}),
    );
    let text = tool_text(&r);
    assert!(text.len() <= 48 * 1024, "{}", text.len());
    assert!(text.contains("> [!NOTE]"));
    assert!(text.contains("Fixture hint"));
    let body = text.split("\n> [!NOTE]").next().unwrap();
    assert!(
        body.ends_with("```\n"),
        "fence not closed: {:?}",
        &body[body.len() - 80..]
    );
    assert_eq!(body.matches("```").count() % 2, 0);
}

#[test]
fn batches_only_under_2025_03_26() {
    let mut s = Server::start(&temp_dir("batch-new"));
    init(&mut s, "2025-11-25");
    s.send_raw(b"[{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}]\n");
    let r = s.next(Duration::from_secs(10)).unwrap();
    assert_eq!(r["error"]["code"], -32600);

    let mut s = Server::start(&temp_dir("batch-old"));
    init(&mut s, "2025-03-26");
    s.send_raw(
        b"[{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"},{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"index_status\"}},{\"jsonrpc\":\"1.0\",\"id\":4,\"method\":\"ping\"}]\n",
    );
    let r = s.next(Duration::from_secs(10)).unwrap();
    let arr = r.as_array().expect("a batch answer");
    let ids: Vec<&Value> = arr.iter().map(|m| &m["id"]).collect();
    assert_eq!(ids, vec![&json!(2), &json!(3), &json!(4)]);
    assert_eq!(arr[2]["error"]["code"], -32600);
}

#[test]
fn sigterm_drains_the_answers_in_flight() {
    let mut s = Server::start(&temp_dir("sigterm"));
    init(&mut s, "2025-11-25");
    s.send(&json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"test_sleep","arguments":{"ms":400}}}));
    std::thread::sleep(Duration::from_millis(100));
    let pid = s.child.id();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let r = s
        .response_for(&json!(7), Duration::from_secs(10))
        .expect("answer drained after SIGTERM");
    assert_eq!(tool_text(&r), "slept 400 ms");
    let (_, code) = s.finish(Duration::from_secs(10));
    assert_eq!(code, Some(0));
}

#[test]
fn a_closed_stdout_ends_the_process_quietly() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let dir = temp_dir("closed-stdout");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mesh-mcp"))
        .args(["run", "--standalone"])
        .current_dir(&dir)
        .env("HOME", temp_dir("closed-stdout-home"))
        .env("MESH_AUDIT_DB", dir.join("audit.db"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    for i in 0..200 {
        if writeln!(stdin, "{}", json!({"jsonrpc":"2.0","id":i,"method":"ping"})).is_err() {
            break;
        }
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        assert!(
            Instant::now() < deadline,
            "server kept running with stdout closed"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(status.code(), Some(0), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn tool_calls_are_audited_in_a_valid_chain() {
    let workspace = temp_dir("audited");
    let mut s = Server::start(&workspace);
    init(&mut s, "2025-11-25");
    let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    s.call(
        2,
        "tools/call",
        json!({"name": "index_status", "arguments": {}, "_meta": {"traceparent": tp}}),
    );
    s.call(
        3,
        "tools/call",
        json!({"name": "index_status", "arguments": {"bad": true}}),
    );
    s.call(
        4,
        "tools/call",
        json!({"name": "no_such_tool", "arguments": {}}),
    );
    s.call(5, "ping", json!({}));
    let db = s.home.join("audit.db");
    let home = s.home.clone();
    let (_, code) = s.finish(Duration::from_secs(10));
    assert_eq!(code, Some(0));
    // `stats` counts the calls of the workspace it is started in, as recorded by the server.
    let stats_in = |cwd: &std::path::Path| -> Value {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mesh-mcp"))
            .current_dir(cwd)
            .args(["stats", "--json", "--since", "all", "--db"])
            .arg(&db)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let stats = stats_in(&workspace);
    assert_eq!(stats["calls"], 2, "{stats}");
    assert_eq!(stats["errors"], 1, "{stats}");
    let other = stats_in(&home);
    assert_eq!(other["calls"], 0, "{other}");
    assert_eq!(other["other_workspaces_calls"], 2, "{other}");
    let verify = std::process::Command::new(env!("CARGO_BIN_EXE_mesh-mcp"))
        .args(["audit", "verify", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stderr)
    );
}
