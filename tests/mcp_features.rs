//! Structured output over real pipes, in every era the server speaks: every tool's
//! `structuredContent` validated against its `outputSchema` (and its rows found in the
//! Markdown), the shared paging cursor, and text only before 2025-06-18.

mod common;

use common::schema::validate;
use common::{Server, example_dir};
use serde_json::{Value, json};

const STRUCTURED_ERAS: [&str; 3] = ["2025-06-18", "2025-11-25", "2026-07-28"];

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
