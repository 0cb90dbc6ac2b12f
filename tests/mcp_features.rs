//! Structured output, resources, prompts and completions over real pipes, in every era the
//! server speaks: every tool's `structuredContent` validated against its `outputSchema` (and
//! its rows found in the Markdown), the shared paging cursor, the cap over text and data, the
//! resources (fixed, templated, paged, subscribed), the prompts and argument completion.

mod common;

use std::time::{Duration, Instant};

use common::schema::validate;
use common::{Server, example_dir, temp_dir};
use serde_json::{Value, json};

const STRUCTURED_ERAS: [&str; 3] = ["2025-06-18", "2025-11-25", "2026-07-28"];
const ALL_ERAS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"}
    })
}

/// A session in one era: `initialize` for a legacy version, `_meta` stamps for the modern one.
struct Era {
    server: Server,
    version: &'static str,
    id: i64,
}

impl Era {
    fn start(workspace: &std::path::Path, version: &'static str) -> Era {
        let mut server = Server::start(workspace);
        if version != "2026-07-28" {
            let init = server.call(
                1,
                "initialize",
                json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
            );
            assert_eq!(init["result"]["protocolVersion"], version);
            server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        }
        let mut e = Era {
            server,
            version,
            id: 10,
        };
        // The first generation, so listings and completions see the index.
        let status = e.call(
            "tools/call",
            json!({"name": "index_status", "arguments": {}}),
        );
        assert_eq!(status["result"]["isError"], false, "{status}");
        e
    }

    fn modern(&self) -> bool {
        self.version == "2026-07-28"
    }

    fn call(&mut self, method: &str, mut params: Value) -> Value {
        if self.modern() {
            params["_meta"] = modern_meta();
        }
        self.id += 1;
        self.server.call(self.id, method, params)
    }

    fn tool(&mut self, name: &str, args: Value) -> Value {
        let r = self.call("tools/call", json!({"name": name, "arguments": args}));
        assert!(r.get("result").is_some(), "{name}: {r}");
        r["result"].clone()
    }
}

/// One call per tool on the example workspace (analyze_changes needs git: its argument error
/// shows that errors carry no data).
fn calls() -> Vec<(&'static str, Value)> {
    vec![
        ("smart_search", json!({"query": "OrderService"})),
        (
            "smart_search",
            json!({"query": "zzz_not_declared_anywhere"}),
        ),
        (
            "find_dependents",
            json!({"target": "common/v1/money.proto", "granularity": "symbol"}),
        ),
        (
            "find_dependents",
            json!({"target": "OrderService", "granularity": "package"}),
        ),
        (
            "analyze_grpc",
            json!({"target": "InventoryService.ReserveStock"}),
        ),
        (
            "analyze_impact",
            json!({"target": "orders.created", "depth": 2}),
        ),
        (
            "analyze_impact",
            json!({"target": "OrderService.CreateOrder", "limit": 2}),
        ),
        ("analyze_changes", json!({"base": "working tree"})),
        ("search_docs", json!({"query": "kafka order events"})),
        ("visualize_mesh", json!({})),
        (
            "visualize_mesh",
            json!({"format": "json", "service": "services/orders"}),
        ),
        ("index_status", json!({})),
    ]
}

#[test]
fn the_validator_catches_what_it_should() {
    let schema = json!({"type": "object", "required": ["a"], "additionalProperties": false,
        "properties": {"a": {"type": "integer", "minimum": 1}, "b": {"type": "array", "items": {"enum": ["x"]}}}});
    assert!(validate(&schema, &json!({"a": 2, "b": ["x"]})).is_empty());
    assert_eq!(
        validate(&schema, &json!({"a": 0, "b": ["y"], "c": 1})).len(),
        3
    );
    assert_eq!(validate(&schema, &json!({"b": "x"})).len(), 2);
}

#[test]
fn every_tool_answers_structured_content_that_matches_its_output_schema() {
    for version in STRUCTURED_ERAS {
        let mut e = Era::start(&example_dir(), version);
        let list = e.call("tools/list", json!({}));
        let tools = list["result"]["tools"].as_array().unwrap().clone();
        let schema_of = |name: &str| {
            tools
                .iter()
                .find(|t| t["name"] == name)
                .map(|t| t["outputSchema"].clone())
                .unwrap()
        };
        for t in tools
            .iter()
            .filter(|t| !t["name"].as_str().unwrap().starts_with("test_"))
        {
            let s = &t["outputSchema"];
            assert_eq!(s["type"], "object", "{version} {}", t["name"]);
            assert!(validate(&json!({"type": "object"}), s).is_empty());
        }
        let mut seen = std::collections::BTreeSet::new();
        for (name, args) in calls() {
            let r = e.tool(name, args.clone());
            let text = r["content"][0]["text"].as_str().unwrap();
            if r["isError"] == true {
                assert!(r.get("structuredContent").is_none(), "{name}: {r}");
                continue;
            }
            seen.insert(name);
            let data = &r["structuredContent"];
            let errors = validate(&schema_of(name), data);
            assert!(
                errors.is_empty(),
                "{version} {name} {args}: {errors:?}\n{data}"
            );
            // The same facts as the text: every row's path:line is in the Markdown (the
            // diagram draws links without their example site).
            if name != "visualize_mesh" {
                for row in data["rows"].as_array().unwrap() {
                    if let (Some(p), Some(l)) = (row["path"].as_str(), row["line"].as_u64())
                        && !p.is_empty()
                    {
                        assert!(
                            text.contains(&format!("{p}:{l}")),
                            "{name}: {p}:{l} not in\n{text}"
                        );
                    }
                }
            }
            let total = data["total"].as_u64().unwrap();
            assert!(
                total >= data["rows"].as_array().unwrap().len() as u64 || name == "index_status"
            );
            assert!(text.len() + data.to_string().len() <= 48 * 1024, "{name}");
        }
        for tool in [
            "smart_search",
            "find_dependents",
            "analyze_grpc",
            "analyze_impact",
            "search_docs",
            "visualize_mesh",
            "index_status",
        ] {
            assert!(seen.contains(tool), "{version}: {tool} never answered");
        }
    }
}

#[test]
fn legacy_eras_before_2025_06_18_get_text_only() {
    for version in ["2024-11-05", "2025-03-26"] {
        let mut e = Era::start(&example_dir(), version);
        let list = e.call("tools/list", json!({}));
        for t in list["result"]["tools"].as_array().unwrap() {
            assert!(t.get("outputSchema").is_none(), "{version} {t}");
        }
        let r = e.tool("smart_search", json!({"query": "OrderService"}));
        assert!(r.get("structuredContent").is_none(), "{version}");
        assert!(
            r["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("orders.proto")
        );
    }
}

#[test]
fn the_paging_cursor_is_the_next_offset() {
    let mut e = Era::start(&example_dir(), "2025-11-25");
    let first = e.tool("smart_search", json!({"query": "order", "limit": 2}));
    let data = &first["structuredContent"];
    let total = data["total"].as_u64().unwrap();
    assert!(total > 2, "{data}");
    assert_eq!(data["rows"].as_array().unwrap().len(), 2);
    assert_eq!(data["nextOffset"], 2);
    let text = first["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("`offset: 2`"), "{text}");
    let second = e.tool(
        "smart_search",
        json!({"query": "order", "limit": 2, "offset": 2}),
    );
    assert_eq!(second["structuredContent"]["offset"], 2);
    assert_ne!(second["structuredContent"]["rows"][0], data["rows"][0]);
    // The last page has no cursor.
    let last = e.tool(
        "smart_search",
        json!({"query": "order", "offset": total - 1}),
    );
    assert!(
        last["structuredContent"].get("nextOffset").is_none(),
        "{last}"
    );
    // Out of range: an isError naming the range, no data.
    let bad = e.tool("smart_search", json!({"query": "order", "limit": 500}));
    assert_eq!(bad["isError"], true);
    assert!(
        bad["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("1–100")
    );
    assert!(bad.get("structuredContent").is_none());
}

#[test]
fn resources_answer_what_the_matching_tool_would_in_every_era() {
    for version in ALL_ERAS {
        let mut e = Era::start(&example_dir(), version);
        let with_title = version >= "2025-06-18";
        // Every page, following nextCursor.
        let mut uris = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let page = e.call("resources/list", params);
            let r = &page["result"];
            for res in r["resources"].as_array().unwrap() {
                assert!(
                    res["uri"].is_string()
                        && res["name"].is_string()
                        && res["description"].is_string()
                );
                assert_eq!(res.get("title").is_some(), with_title, "{version}");
                uris.push(res["uri"].as_str().unwrap().to_string());
            }
            assert_eq!(r.get("ttlMs").is_some(), version == "2026-07-28");
            match r["nextCursor"].as_str() {
                Some(c) => cursor = Some(c.to_string()),
                None => break,
            }
        }
        for want in [
            "mesh://mesh",
            "mesh://status",
            "mesh://service/services%2Forders",
            "mesh://rpc/OrderService.CreateOrder",
            "mesh://topic/orders.created",
        ] {
            assert!(
                uris.iter().any(|u| u == want),
                "{version}: {want} not listed"
            );
        }
        assert!(
            uris.iter().any(|u| u.starts_with("mesh://route/")),
            "{version}"
        );
        assert!(
            uris.iter().any(|u| u.starts_with("mesh://doc/")),
            "{version}"
        );
        let bad = e.call("resources/list", json!({"cursor": "not-a-cursor"}));
        assert_eq!(bad["error"]["code"], -32602);

        let templates = e.call("resources/templates/list", json!({}));
        let t: Vec<&str> = templates["result"]["resourceTemplates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["uriTemplate"].as_str().unwrap())
            .collect();
        assert_eq!(
            t,
            [
                "mesh://service/{name}",
                "mesh://rpc/{name}",
                "mesh://topic/{name}",
                "mesh://route/{name}",
                "mesh://doc/{name}"
            ]
        );

        // A template filled in reads like the tool.
        let read = e.call(
            "resources/read",
            json!({"uri": "mesh://rpc/InventoryService.ReserveStock"}),
        );
        let contents = read["result"]["contents"].as_array().unwrap();
        assert_eq!(contents[0]["mimeType"], "text/markdown");
        let tool = e.tool(
            "analyze_grpc",
            json!({"target": "InventoryService.ReserveStock"}),
        );
        assert_eq!(contents[0]["text"], tool["content"][0]["text"], "{version}");
        assert_eq!(contents.len() == 2, version >= "2025-06-18", "{version}");
        if contents.len() == 2 {
            let data: Value = serde_json::from_str(contents[1]["text"].as_str().unwrap()).unwrap();
            assert_eq!(data, tool["structuredContent"]);
        }
        if version == "2026-07-28" {
            assert_eq!(read["result"]["resultType"], "complete", "{read}");
            assert!(read["result"]["ttlMs"].is_u64(), "{read}");
        }
        let status = e.call("resources/read", json!({"uri": "mesh://status"}));
        assert!(
            status["result"]["contents"][0]["text"]
                .as_str()
                .unwrap()
                .contains("Index status")
        );
        let route = uris
            .iter()
            .find(|u| u.starts_with("mesh://route/"))
            .unwrap()
            .clone();
        let r = e.call("resources/read", json!({"uri": route}));
        assert!(
            r["result"]["contents"][0]["text"]
                .as_str()
                .unwrap()
                .contains("## Impact of changing"),
            "{r}"
        );
        let missing = e.call("resources/read", json!({"uri": "mesh://nothing/here"}));
        assert_eq!(missing["error"]["code"], -32002, "{missing}");
    }
}

#[test]
fn a_listing_right_after_start_waits_for_the_first_index() {
    // No index_status first: resources/list and completion wait for the first generation.
    let mut s = Server::start(&example_dir());
    s.call(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let list = s.call(2, "resources/list", json!({}));
    let uris = list["result"]["resources"].to_string();
    assert!(uris.contains("mesh://rpc/"), "{list}");
    let c = s.call(
        3,
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "mesh://topic/{name}"}, "argument": {"name": "name", "value": "orders"}}),
    );
    assert!(
        !c["result"]["completion"]["values"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{c}"
    );
    assert_eq!(s.call(4, "ping", json!({}))["result"], json!({}));
}

#[test]
fn subscribers_hear_of_new_generations() {
    let ws = temp_dir("subscribe");
    std::fs::write(ws.join("a.go"), "package a\n\nfunc First() {}\n").unwrap();
    let mut e = Era::start(&ws, "2025-11-25");
    e.call("resources/list", json!({}));
    let ok = e.call("resources/subscribe", json!({"uri": "mesh://status"}));
    assert_eq!(ok["result"], json!({}));
    std::fs::write(ws.join("b.go"), "package a\n\nfunc Second() {}\n").unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    let (mut listed, mut updated) = (false, false);
    while !(listed && updated) && Instant::now() < deadline {
        if let Some(msg) = e.server.next(Duration::from_millis(500)) {
            match msg["method"].as_str() {
                Some("notifications/resources/list_changed") => listed = true,
                Some("notifications/resources/updated") => {
                    assert_eq!(msg["params"]["uri"], "mesh://status");
                    updated = true;
                }
                _ => {}
            }
        }
    }
    assert!(
        listed && updated,
        "list_changed {listed}, updated {updated}"
    );
    let ok = e.call("resources/unsubscribe", json!({"uri": "mesh://status"}));
    assert_eq!(ok["result"], json!({}));
    // A modern-era request has no session to notify: no subscriptions there.
    let modern = e.server.call(
        99,
        "resources/subscribe",
        json!({"uri": "mesh://status", "_meta": modern_meta()}),
    );
    assert_eq!(modern["error"]["code"], -32601);
}

#[test]
fn prompts_and_completions_in_every_era() {
    for version in ALL_ERAS {
        let mut e = Era::start(&example_dir(), version);
        let list = e.call("prompts/list", json!({}));
        let names: Vec<&str> = list["result"]["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        for want in ["trace_rpc", "change_impact", "onboard_service"] {
            assert!(names.contains(&want), "{version}: {names:?}");
        }
        let got = e.call(
            "prompts/get",
            json!({"name": "onboard_service", "arguments": {"service": "services/orders"}}),
        );
        let text = got["result"]["messages"][0]["content"]["text"]
            .as_str()
            .unwrap();
        assert!(
            text.contains("visualize_mesh with {\"service\": \"services/orders\"}"),
            "{text}"
        );
        let missing = e.call("prompts/get", json!({"name": "trace_rpc", "arguments": {}}));
        assert_eq!(missing["error"]["code"], -32602);

        let complete = |e: &mut Era, r: Value, name: &str, value: &str| {
            let c = e.call(
                "completion/complete",
                json!({"ref": r, "argument": {"name": name, "value": value}}),
            );
            c["result"]["completion"]["values"]
                .as_array()
                .unwrap_or_else(|| panic!("{c}"))
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        };
        let rpcs = complete(
            &mut e,
            json!({"type": "ref/prompt", "name": "trace_rpc"}),
            "rpc",
            "orderservice",
        );
        assert_eq!(
            rpcs.first().map(String::as_str),
            Some("OrderService"),
            "{version}: {rpcs:?}"
        );
        assert!(
            rpcs.iter().any(|r| r == "OrderService.CreateOrder"),
            "{rpcs:?}"
        );
        let topics = complete(
            &mut e,
            json!({"type": "ref/resource", "uri": "mesh://topic/{name}"}),
            "name",
            "orders.",
        );
        assert!(topics.iter().any(|t| t == "orders.created"), "{topics:?}");
        // A change_impact target may be a type too: declared names complete as well.
        let targets = complete(
            &mut e,
            json!({"type": "ref/prompt", "name": "change_impact"}),
            "target",
            "createorderreq",
        );
        assert!(
            targets.iter().any(|t| t == "CreateOrderRequest"),
            "{targets:?}"
        );
        let services = complete(
            &mut e,
            json!({"type": "ref/prompt", "name": "onboard_service"}),
            "service",
            "ord",
        );
        assert_eq!(
            services.first().map(String::as_str),
            Some("services/orders"),
            "{services:?}"
        );
    }
}

#[test]
fn capabilities_name_resources_prompts_and_completions() {
    let mut s = Server::start(&temp_dir("caps"));
    let init = s.call(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    let caps = &init["result"]["capabilities"];
    assert_eq!(
        caps["resources"],
        json!({"subscribe": true, "listChanged": true})
    );
    assert!(caps["prompts"].is_object() && caps["completions"].is_object());
    let discover = s.call(2, "server/discover", json!({"_meta": modern_meta()}));
    let caps = &discover["result"]["capabilities"];
    assert!(
        caps["resources"].is_object()
            && caps["prompts"].is_object()
            && caps["completions"].is_object()
    );
}

/// Input that ends while a `resources/list` (or a subscribe) is still waiting for the first
/// index must not leave a resource watch behind: it would hold the outbound queue open, and the
/// process would never exit (nor on SIGTERM). Found by fuzzing.
#[test]
fn input_ending_during_a_resources_request_still_ends_the_process() {
    for method in ["resources/list", "resources/subscribe"] {
        let ws = temp_dir("res-eof");
        common::copy_tree(&example_dir(), &ws);
        let mut s = Server::start(&ws);
        s.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "eof", "version": "0"}}}),
        );
        s.send(&json!({"jsonrpc": "2.0", "id": 1, "method": method,
            "params": {"uri": "mesh://mesh"}}));
        let started = Instant::now();
        let (answers, code) = s.finish(Duration::from_secs(20));
        assert_eq!(code, Some(0), "{method}: the process did not exit");
        assert!(started.elapsed() < Duration::from_secs(15), "{method}");
        assert!(
            answers.iter().any(|a| a["id"] == 1),
            "{method}: no answer: {answers:?}"
        );
    }
}

/// A workspace where one topic has `consumers` consumers in another service (long paths, so
/// a page of 200 rows in text and data passes 48 KiB), and one producer; a git repository
/// with everything committed when `git` is set.
fn busy_topic_workspace(tag: &str, consumers: usize, git: bool) -> std::path::PathBuf {
    let ws = temp_dir(tag);
    let orders = ws.join("services/orders");
    let shop = ws.join("services/shop");
    std::fs::create_dir_all(&orders).unwrap();
    std::fs::create_dir_all(&shop).unwrap();
    std::fs::write(
        orders.join("go.mod"),
        "module example.com/busy/orders\n\ngo 1.22\n",
    )
    .unwrap();
    std::fs::write(
        orders.join("publisher.go"),
        "package main\n\nfunc Publish() {\n  writer.WriteMessages(ctx, kafka.Message{Topic: \"orders.created\"})\n}\n",
    )
    .unwrap();
    std::fs::write(
        shop.join("package.json"),
        "{\"name\":\"shop\",\"version\":\"1.0.0\"}\n",
    )
    .unwrap();
    for i in 0..consumers {
        std::fs::write(
            shop.join(format!("consumer_of_the_order_events_number_{i:04}.js")),
            format!("async function consume{i}(consumer) {{\n  await consumer.subscribe({{ topic: 'orders.created' }});\n}}\nmodule.exports = {{ consume{i} }};\n"),
        )
        .unwrap();
    }
    if git {
        for args in [
            &["init", "-q", "-b", "main"][..],
            &["add", "-A"],
            &["commit", "-q", "--no-verify", "-m", "base"],
        ] {
            let ok = std::process::Command::new("git")
                .current_dir(&ws)
                .args(args)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@example.com")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@example.com")
                .env_remove("GIT_DIR")
                .env_remove("GIT_WORK_TREE")
                .stdout(std::process::Stdio::null())
                .status()
                .unwrap()
                .success();
            assert!(ok, "git {args:?}");
        }
    }
    ws
}

/// The `offset` the text names for the next page (`offset: N`), if any.
fn text_next_offset(text: &str) -> Option<u64> {
    let at = text.rfind("offset: ")? + "offset: ".len();
    let digits: String = text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

#[test]
fn the_cap_covers_text_and_data_together_with_one_paging() {
    let ws = busy_topic_workspace("busy-topic", 320, false);
    let call = json!({"target": "orders.created", "limit": 200});
    // With structured output, text and data share the 48 KiB and page alike.
    for version in STRUCTURED_ERAS {
        let mut e = Era::start(&ws, version);
        let r = e.tool("analyze_impact", call.clone());
        let text = r["content"][0]["text"].as_str().unwrap();
        let data = &r["structuredContent"];
        let rows = data["rows"].as_array().unwrap();
        let whole = text.len() + data.to_string().len();
        assert!(whole <= 48 * 1024, "{version}: {whole} bytes");
        assert!(!text.contains("cut to fit"), "{version}: the text was cut");
        assert!(data.get("truncated").is_none(), "{version}: {data}");
        let next = data["nextOffset"].as_u64().unwrap();
        assert_eq!(next, rows.len() as u64, "{version}");
        assert!(
            (50..200).contains(&next),
            "{version}: a page of {next} rows"
        );
        assert_eq!(text_next_offset(text), Some(next), "{version}: {text}");
        for row in rows {
            if let Some(line) = row["line"].as_u64() {
                let at = format!("{}:{line}", row["path"].as_str().unwrap());
                assert!(text.contains(&at), "{version}: {at} not in the text");
            }
        }
        // The next page starts where this one ended, in text and data.
        let mut second_args = call.clone();
        second_args["offset"] = json!(next);
        let second = e.tool("analyze_impact", second_args);
        let data2 = &second["structuredContent"];
        assert_eq!(data2["offset"], next);
        assert_ne!(data2["rows"][0], rows[0]);
        let total = data["total"].as_u64().unwrap();
        assert_eq!(data2["total"], total);
        assert!(total > 320, "{total}");
    }
    // Text only (before 2025-06-18): the text keeps the page asked for.
    let mut e = Era::start(&ws, "2025-03-26");
    let r = e.tool("analyze_impact", call);
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(r.get("structuredContent").is_none());
    assert!(text.len() <= 48 * 1024);
    assert_eq!(text_next_offset(text), Some(200), "{text}");
}

#[test]
fn progress_only_increases_when_a_smaller_page_is_asked_for() {
    let ws = busy_topic_workspace("busy-change", 320, true);
    // The producer changes: every consumer is affected, more than one answer holds.
    std::fs::write(
        ws.join("services/orders/publisher.go"),
        "package main\n\nfunc Publish() {\n  writer.WriteMessages(ctx, kafka.Message{Topic: \"orders.created\", Key: nil})\n}\n",
    )
    .unwrap();
    let mut e = Era::start(&ws, "2025-11-25");
    e.server.send(
        &json!({"jsonrpc": "2.0", "id": 500, "method": "tools/call", "params": {
        "name": "analyze_changes", "arguments": {"base": "working tree", "limit": 200},
        "_meta": {"progressToken": "p"}}}),
    );
    let mut progress = Vec::new();
    let answer = loop {
        let msg = e
            .server
            .next(Duration::from_secs(30))
            .expect("an answer to analyze_changes");
        if msg["method"] == "notifications/progress" {
            assert_eq!(msg["params"]["progressToken"], "p");
            progress.push(msg["params"]["progress"].as_f64().unwrap());
        } else if msg["id"] == 500 {
            break msg;
        }
    };
    let r = &answer["result"];
    assert_eq!(r["isError"], false, "{r}");
    let data = &r["structuredContent"];
    let rows = data["rows"].as_array().unwrap().len();
    assert!(rows < 200, "the page was made smaller: {rows} rows");
    assert_eq!(data["nextOffset"], rows);
    let text = r["content"][0]["text"].as_str().unwrap();
    assert_eq!(text_next_offset(text), Some(rows as u64));
    assert!(!progress.is_empty());
    assert!(
        progress.windows(2).all(|w| w[0] < w[1]),
        "progress must strictly increase: {progress:?}"
    );
}

#[test]
fn resources_list_pages_through_every_name() {
    let ws = temp_dir("many-rpcs");
    let mut proto = String::from("syntax = \"proto3\";\npackage many.v1;\n\nservice Many {\n");
    for i in 0..130 {
        proto.push_str(&format!("  rpc Call{i:03}(Req) returns (Rep);\n"));
    }
    proto.push_str("}\n\nmessage Req {}\nmessage Rep {}\n");
    std::fs::write(ws.join("many.proto"), proto).unwrap();
    for version in ["2025-11-25", "2026-07-28"] {
        let mut e = Era::start(&ws, version);
        let mut uris = Vec::new();
        let mut cursor: Option<String> = None;
        let mut pages = 0;
        loop {
            let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
            let r = e.call("resources/list", params)["result"].clone();
            let page = r["resources"].as_array().unwrap();
            assert!(page.len() <= 100, "{version}");
            uris.extend(page.iter().map(|p| p["uri"].as_str().unwrap().to_string()));
            pages += 1;
            match r["nextCursor"].as_str() {
                Some(c) => cursor = Some(c.to_string()),
                None => break,
            }
        }
        assert!(pages >= 2, "{version}: {pages} page(s)");
        let unique: std::collections::BTreeSet<_> = uris.iter().collect();
        assert_eq!(unique.len(), uris.len(), "{version}: a name listed twice");
        for i in [0, 99, 100, 129] {
            let want = format!("mesh://rpc/Many.Call{i:03}");
            assert!(uris.contains(&want), "{version}: {want} missing");
        }
        let bad = e.call("resources/list", json!({"cursor": "not-a-cursor"}));
        assert_eq!(bad["error"]["code"], -32602, "{version}: {bad}");
    }
}
