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

fn example() -> Session {
    Session::start(&common::example_dir())
}

fn error_of(resp: &Value) -> (i64, String) {
    let e = &resp["error"];
    assert!(e.is_object(), "expected an error response: {resp}");
    (
        e["code"].as_i64().unwrap(),
        e["message"].as_str().unwrap().to_string(),
    )
}

#[test]
fn resources_list_cursors_never_overflow_and_bad_ones_are_invalid_params() {
    let mut s = example();
    for (i, cursor) in [
        u64::MAX.to_string(),
        (u64::MAX - 50).to_string(),
        "999999".to_string(),
        "-1".to_string(),
        "x".repeat(5000),
    ]
    .into_iter()
    .enumerate()
    {
        let resp = call(
            &mut s,
            200 + i as i64,
            "resources/list",
            json!({"cursor": cursor}),
        );
        let (code, message) = error_of(&resp);
        assert_eq!(code, -32602, "{message}");
        assert!(message.contains("invalid cursor"), "{message}");
        assert!(
            message.len() < 400,
            "the cursor is not echoed whole: {message}"
        );
    }
    // The session goes on, and real cursors still page.
    let first = call(&mut s, 210, "resources/list", json!({}));
    assert!(first["result"]["resources"].is_array(), "{first}");
}

#[test]
fn a_panic_in_a_non_tool_handler_costs_that_request_only() {
    let mut s = example();
    let marker = "MESH_TEST_REQUEST_PANIC";
    let requests = [
        ("resources/list", json!({"cursor": marker})),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "trace_rpc"}, "argument": {"name": "rpc", "value": marker}}),
        ),
        (
            "prompts/get",
            json!({"name": "trace_rpc", "arguments": {"rpc": marker}}),
        ),
        ("prompts/list", json!({"x": marker})),
        ("resources/templates/list", json!({"x": marker})),
        ("logging/setLevel", json!({"level": marker})),
    ];
    for (i, (method, params)) in requests.into_iter().enumerate() {
        let resp = call(&mut s, 300 + i as i64, method, params);
        let (code, message) = error_of(&resp);
        assert_eq!(code, -32603, "{method}: {message}");
        assert!(message.contains(method), "{message}");
        assert!(message.contains("panicked at src/server.rs"), "{message}");
        // The next request of the same session is answered.
        let ping = call(&mut s, 400 + i as i64, "ping", json!({}));
        assert_eq!(ping["result"], json!({}), "{method}: the session ended");
    }
    let list = call(&mut s, 500, "prompts/list", json!({}));
    assert!(list["result"]["prompts"].is_array(), "{list}");
}

#[test]
fn subscriptions_are_bounded_and_only_for_mesh_resources() {
    let mut s = example();
    let long = format!("mesh://topic/{}", "a".repeat(3000));
    for (i, uri) in [
        long.as_str(),
        "file:///etc/passwd",
        "https://example.com/x",
        "mesh://bogus/x",
        "mesh://topic/",
    ]
    .into_iter()
    .enumerate()
    {
        let resp = call(
            &mut s,
            600 + i as i64,
            "resources/subscribe",
            json!({"uri": uri}),
        );
        let (code, message) = error_of(&resp);
        assert_eq!(code, -32602, "{uri}: {message}");
        assert!(
            message.len() < 600,
            "the URI is not echoed whole: {message}"
        );
        if uri.len() > 2048 {
            assert!(message.contains("at most 2048"), "{message}");
        } else {
            assert!(
                message.contains("mesh://status"),
                "names the forms: {message}"
            );
        }
    }
    for i in 0..256 {
        let uri = format!("mesh://topic/t{i}");
        let resp = call(&mut s, 700 + i, "resources/subscribe", json!({"uri": uri}));
        assert_eq!(resp["result"], json!({}), "{resp}");
    }
    // Again the same: still one of the 256.
    let again = call(
        &mut s,
        990,
        "resources/subscribe",
        json!({"uri": "mesh://topic/t0"}),
    );
    assert_eq!(again["result"], json!({}), "{again}");
    let full = call(
        &mut s,
        991,
        "resources/subscribe",
        json!({"uri": "mesh://status"}),
    );
    let (code, message) = error_of(&full);
    assert_eq!(code, -32602);
    assert!(
        message.contains("256") && message.contains("unsubscribe"),
        "{message}"
    );
    let off = call(
        &mut s,
        992,
        "resources/unsubscribe",
        json!({"uri": "mesh://topic/t0"}),
    );
    assert_eq!(off["result"], json!({}));
    let ok = call(
        &mut s,
        993,
        "resources/subscribe",
        json!({"uri": "mesh://status"}),
    );
    assert_eq!(ok["result"], json!({}), "{ok}");
}

#[test]
fn unknown_names_are_resource_not_found_naming_close_ones() {
    let mut s = example();
    for (i, (uri, close)) in [
        ("mesh://topic/nope", ""),
        ("mesh://topic/orders.creatd", "mesh://topic/orders.created"),
        (
            "mesh://service/services%2Fordrs",
            "mesh://service/services%2Forders",
        ),
        ("mesh://route/GET%20%2Fnowhere", "mesh://route/"),
        ("mesh://rpc/NoSuchService.Nope", "mesh://rpc/"),
        ("mesh://doc/zzqqxxyy", "mesh://doc/"),
    ]
    .into_iter()
    .enumerate()
    {
        let resp = call(
            &mut s,
            1000 + i as i64,
            "resources/read",
            json!({"uri": uri}),
        );
        let (code, message) = error_of(&resp);
        assert_eq!(code, -32002, "{uri}: {message}");
        assert!(message.contains(uri), "{message}");
        assert!(message.contains(close), "{uri}: {message}");
        assert!(resp["error"]["data"]["closest"].is_array(), "{resp}");
    }
    // What exists still reads, in each kind.
    for (i, uri) in [
        "mesh://topic/orders.created",
        "mesh://service/orders",
        "mesh://rpc/CreateOrder",
        "mesh://mesh",
    ]
    .into_iter()
    .enumerate()
    {
        let resp = call(
            &mut s,
            1100 + i as i64,
            "resources/read",
            json!({"uri": uri}),
        );
        assert!(resp["result"]["contents"].is_array(), "{uri}: {resp}");
    }
}

#[test]
fn errors_echo_user_input_bounded() {
    let mut s = example();
    let huge = format!("services/{}", "q".repeat(100_000));
    let text = s.err("visualize_mesh", json!({"service": huge}));
    assert!(text.len() < 2000, "{} bytes", text.len());
    assert!(text.contains("…"), "{text}");
    assert!(
        text.contains("services/orders"),
        "still names the services: {text}"
    );
}

#[test]
fn completion_and_prompt_params_are_strict() {
    let mut s = example();
    let prompt = json!({"type": "ref/prompt", "name": "trace_rpc"});
    for (i, (params, field)) in [
        (
            json!({"ref": prompt, "argument": {"name": "rpc", "value": 5}}),
            "argument.value",
        ),
        (json!({"argument": {"name": "rpc", "value": "Or"}}), "ref"),
        (
            json!({"ref": {"type": 7}, "argument": {"name": "rpc", "value": "Or"}}),
            "ref.type",
        ),
        (
            json!({"ref": prompt, "argument": {"name": ["rpc"], "value": "Or"}}),
            "argument.name",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let resp = call(&mut s, 1200 + i as i64, "completion/complete", params);
        let (code, message) = error_of(&resp);
        assert_eq!(code, -32602, "{message}");
        assert!(
            message.contains(&format!("\"{field}\"")),
            "{field}: {message}"
        );
    }
    let ok = call(
        &mut s,
        1210,
        "completion/complete",
        json!({"ref": prompt, "argument": {"name": "rpc", "value": "Order"}}),
    );
    assert!(ok["result"]["completion"]["values"].is_array(), "{ok}");

    let unknown = call(
        &mut s,
        1220,
        "prompts/get",
        json!({"name": "trace_rpc", "arguments": {"rpc": "A.B", "target": "x"}}),
    );
    let (code, message) = error_of(&unknown);
    assert_eq!(code, -32602);
    assert!(
        message.contains("\"target\"") && message.contains("\"rpc\", \"base\""),
        "{message}"
    );
    // Substituted once: a value holding a placeholder stays as typed.
    let once = call(
        &mut s,
        1221,
        "prompts/get",
        json!({"name": "change_impact", "arguments": {"target": "{depth}`x\"{target}"}}),
    );
    let text = once["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("`{depth} x {target}`"), "{text}");
    assert!(text.contains("\"depth\": 2"), "{text}");
}

#[test]
fn doc_titles_equal_but_for_case_get_unique_uris_that_read_their_own_section() {
    let ws = temp_dir("robust-docs");
    std::fs::write(ws.join("a.md"), "# Overview\n\nAlpha apples text.\n").unwrap();
    std::fs::write(ws.join("b.md"), "# overview\n\nBeta bananas text.\n").unwrap();
    std::fs::write(ws.join("c.md"), "# Overview\n\nGamma grapes text.\n").unwrap();
    let mut s = Session::start(&ws);
    let list = call(&mut s, 1300, "resources/list", json!({}));
    let uris: Vec<String> = list["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["uri"].as_str().filter(|u| u.starts_with("mesh://doc/")))
        .map(String::from)
        .collect();
    assert_eq!(uris.len(), 3, "one URI per section: {uris:?}");
    let unique: std::collections::BTreeSet<String> =
        uris.iter().map(|u| u.to_lowercase()).collect();
    assert_eq!(unique.len(), 3, "unique even ignoring case: {uris:?}");
    let mut seen = Vec::new();
    for (i, uri) in uris.iter().enumerate() {
        let resp = call(
            &mut s,
            1310 + i as i64,
            "resources/read",
            json!({"uri": uri}),
        );
        let text = resp["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{uri}: {resp}"));
        let word = ["Alpha", "Beta", "Gamma"]
            .into_iter()
            .find(|w| text.contains(w))
            .unwrap_or_else(|| panic!("{uri}: {text}"));
        assert_eq!(
            ["Alpha", "Beta", "Gamma"]
                .iter()
                .filter(|w| text.contains(**w))
                .count(),
            1,
            "{uri} reads one section: {text}"
        );
        seen.push(word);
    }
    seen.sort();
    assert_eq!(
        seen,
        ["Alpha", "Beta", "Gamma"],
        "each URI reads its own section"
    );
    let gone = call(
        &mut s,
        1320,
        "resources/read",
        json!({"uri": "mesh://doc/Overview;9"}),
    );
    assert_eq!(error_of(&gone).0, -32002, "{gone}");
}

#[test]
fn wrong_typed_and_unknown_argument_values_are_echoed_bounded() {
    let mut s = example();
    let huge = "z".repeat(60_000);
    for (tool, args) in [
        ("smart_search", json!({"query": "Order", "limit": huge})),
        ("smart_search", json!({"query": "Order", "offset": [huge]})),
        (
            "find_dependents",
            json!({"target": "orders", "limit": {"k": huge}}),
        ),
        (
            "find_dependents",
            json!({"target": "orders", "granularity": huge}),
        ),
        (
            "analyze_impact",
            json!({"target": "orders.created", "depth": huge}),
        ),
        (
            "search_docs",
            json!({"query": "retry", "max_sections": huge}),
        ),
        ("analyze_changes", json!({"base": huge})),
        (
            "analyze_grpc",
            json!({"target": "OrderService", "base": &huge[..4000]}),
        ),
    ] {
        let text = s.err(tool, args.clone());
        assert!(
            text.len() < 2000,
            "{tool}: {} bytes: {}",
            text.len(),
            &text[..300]
        );
        assert!(text.contains("bytes"), "{tool}: says the size: {text}");
    }
}

#[test]
fn every_listed_resource_can_be_read_and_subscribed() {
    let ws = temp_dir("robust-listed");
    // A heading of `#`s only has a blank title; one of 3000 characters a URI over the
    // subscription bound.
    let long = "Ü".repeat(1000);
    std::fs::write(
        ws.join("a.md"),
        format!("# #\n\nBlank.\n\n# {long}\n\nLong.\n\n# Usual\n\nText.\n"),
    )
    .unwrap();
    let mut s = Session::start(&ws);
    let list = call(&mut s, 1400, "resources/list", json!({}));
    let uris: Vec<String> = list["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["uri"].as_str().map(String::from))
        .collect();
    assert!(uris.iter().any(|u| u == "mesh://doc/Usual"), "{uris:?}");
    for (i, uri) in uris.iter().enumerate() {
        let read = call(
            &mut s,
            1410 + i as i64,
            "resources/read",
            json!({"uri": uri}),
        );
        assert!(read["result"]["contents"].is_array(), "{uri}: {read}");
        let sub = call(
            &mut s,
            1510 + i as i64,
            "resources/subscribe",
            json!({"uri": uri}),
        );
        assert_eq!(sub["result"], json!({}), "{uri}: {sub}");
    }
    let done = call(
        &mut s,
        1600,
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "mesh://doc/{name}"}, "argument": {"name": "name", "value": ""}}),
    );
    let values = done["result"]["completion"]["values"].as_array().unwrap();
    assert!(
        values
            .iter()
            .all(|v| !v.as_str().unwrap().trim().is_empty()),
        "{values:?}"
    );
}
