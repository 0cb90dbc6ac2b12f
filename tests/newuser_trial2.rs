//! Findings of a second new-user trial on the practice corpora, each pinned by a small
//! workspace written here and driven through the real binary over stdio.

mod common;

use common::{Session, workspace};
use serde_json::json;

/// Three declarations named `Item`; the one in `com.acme.legacy` is used only by a test.
const ITEMS: &[(&str, &str)] = &[
    (
        "services/shop/src/main/java/com/acme/cart/Item.java",
        "package com.acme.cart;\n\npublic class Item {}\n",
    ),
    (
        "services/shop/src/main/java/com/acme/cart/web/CartApi.java",
        "package com.acme.cart.web;\n\nimport com.acme.cart.Item;\n\npublic class CartApi {\n    Item item;\n}\n",
    ),
    (
        "services/shop/src/main/java/com/acme/catalog/Item.java",
        "package com.acme.catalog;\n\npublic class Item {}\n",
    ),
    (
        "services/shop/src/main/java/com/acme/catalog/web/CatalogApi.java",
        "package com.acme.catalog.web;\n\nimport com.acme.catalog.Item;\n\npublic class CatalogApi {\n    Item item;\n}\n",
    ),
    (
        "services/shop/src/main/java/com/acme/legacy/Item.java",
        "package com.acme.legacy;\n\npublic class Item {}\n",
    ),
    (
        "services/shop/src/test/java/com/acme/legacy/ItemTest.java",
        "package com.acme.legacy.test;\n\nimport com.acme.legacy.Item;\n\npublic class ItemTest {\n    Item item;\n}\n",
    ),
];

/// find_dependents said "`Item` names 3 different things" and then showed two headings: the
/// count included a declaration whose only dependents were test files, left out.
#[test]
fn the_count_of_same_named_declarations_matches_the_headings_shown() {
    let ws = workspace("nu2-groups", ITEMS);
    let mut s = Session::start(&ws);
    let t = s.ok("find_dependents", json!({"target": "Item"}));
    assert!(t.contains("names 2 different things"), "{t}");
    assert_eq!(t.matches("declared at").count(), 2, "{t}");
    assert!(!t.contains("legacy/Item.java"), "{t}");
    assert!(t.contains("in test files left out"), "{t}");
    let t = s.ok(
        "find_dependents",
        json!({"target": "Item", "include_tests": true}),
    );
    assert!(t.contains("names 3 different things"), "{t}");
    assert_eq!(t.matches("declared at").count(), 3, "{t}");
    // Only one declaration with non-test dependents: no grouping headings at all.
    let one = workspace("nu2-groups-one", &[ITEMS[0], ITEMS[1], ITEMS[4], ITEMS[5]]);
    let mut s = Session::start(&one);
    let t = s.ok("find_dependents", json!({"target": "Item"}));
    assert!(!t.contains("different things"), "{t}");
    assert!(!t.contains("declared at"), "{t}");
    assert!(t.contains("CartApi.java:3"), "{t}");
}

fn git(dir: &std::path::Path, args: &[&str]) {
    let ok = std::process::Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

/// analyze_changes listed its services riskiest first in the Markdown table but by name in
/// `structuredContent.services`: a client reading the JSON saw a behaviour change first.
#[test]
fn analyze_changes_services_are_riskiest_first_in_both_forms() {
    let ws = workspace(
        "nu2-chg-order",
        &[
            (
                "services/alpha/main.go",
                "package main\n\nimport \"github.com/segmentio/kafka-go\"\n\nconst ordersTopic = \"orders.created\"\n\nfunc main() {\n\tw := &kafka.Writer{Topic: ordersTopic}\n\t_ = w\n}\n",
            ),
            (
                "services/zeta/api/zeta.proto",
                "syntax = \"proto3\";\npackage acme.zeta;\nservice Zeta {\n  rpc Get (GetRequest) returns (GetReply);\n}\nmessage GetRequest {\n  string id = 1;\n  string note = 2;\n}\nmessage GetReply {}\n",
            ),
        ],
    );
    git(&ws, &["init", "-q", "-b", "main"]);
    git(&ws, &["add", "-A"]);
    git(&ws, &["commit", "-q", "-m", "base"]);
    for (path, from, to) in [
        (
            "services/alpha/main.go",
            "\"orders.created\"",
            "\"orders.made\"",
        ),
        ("services/zeta/api/zeta.proto", "  string note = 2;\n", ""),
    ] {
        let p = ws.join(path);
        let text = std::fs::read_to_string(&p).unwrap();
        std::fs::write(&p, text.replacen(from, to, 1)).unwrap();
    }
    let mut s = Session::start(&ws);
    let resp = s.server.call(
        900,
        "tools/call",
        json!({"name": "analyze_changes", "arguments": {"base": "working tree"}}),
    );
    let text = common::tool_text(&resp).to_string();
    let services: Vec<(String, String)> = resp["result"]["structuredContent"]["services"]
        .as_array()
        .unwrap_or_else(|| panic!("{resp}"))
        .iter()
        .map(|s| {
            (
                s["service"].as_str().unwrap().to_string(),
                s["risk"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        services.first().map(|s| s.0.as_str()),
        Some("services/zeta"),
        "{services:?}\n{text}"
    );
    assert_eq!(services[0].1, "breaking", "{services:?}");
    assert!(
        services.iter().any(|s| s.0 == "services/alpha"),
        "{services:?}"
    );
    // The Markdown table has the same order.
    let at = |name: &str| text.find(&format!("| `{name}` |")).unwrap_or(usize::MAX);
    assert!(at("services/zeta") < at("services/alpha"), "{text}");
}

/// The onboard_service prompt asks search_docs for the service's path (`services/orders`):
/// the service's own README never spells its path, so it was not found, and a top-level
/// table linking `./services/orders` was the only answer.
#[test]
fn search_docs_for_a_directory_finds_the_docs_under_it() {
    let ws = workspace(
        "nu2-docs-dir",
        &[
            (
                "README.md",
                "# Shop\n\n## Components\n\n| Service | Link |\n|---|---|\n| Orders | [orders](./services/orders) |\n",
            ),
            (
                "services/orders/README.md",
                "# Orders Service\n\nKeeps customer orders in Postgres.\n\n## Configuration\n\nSet `PORT`.\n",
            ),
            (
                "services/orders/main.go",
                "package main\n\nfunc main() {}\n",
            ),
            (
                "services/cart/README.md",
                "# Cart Service\n\nKeeps carts in Redis.\n",
            ),
        ],
    );
    let mut s = Session::start(&ws);
    for query in ["services/orders", "./services/orders/"] {
        let t = s.ok("search_docs", json!({ "query": query }));
        let first = t.find("### [1]").expect(&t);
        assert!(
            t[first..].starts_with("### [1] `Orders Service` — `services/orders/README.md:1"),
            "{query}: {t}"
        );
        assert!(
            t.contains("`Configuration` — `services/orders/README.md"),
            "{t}"
        );
        assert!(!t.contains("services/cart/README.md"), "{t}");
    }
    // The prompt that passes the path now leads to that README.
    let resp = s.server.call(
        901,
        "prompts/get",
        json!({"name": "onboard_service", "arguments": {"service": "services/orders"}}),
    );
    let text = resp["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{resp}"));
    assert!(
        text.contains("search_docs with {\"query\": \"services/orders\"}"),
        "{text}"
    );
}

/// `kind: "record"` for a C# record was refused as an unknown kind; the index files records
/// under `class`, and a language's own keyword now means that kind.
#[test]
fn smart_search_takes_a_languages_own_kind_word() {
    let ws = workspace(
        "nu2-kind",
        &[(
            "services/ordering/Events/OrderStarted.cs",
            "namespace Acme.Ordering.Events;\n\npublic record OrderStartedEvent(string UserId);\n",
        )],
    );
    let mut s = Session::start(&ws);
    let t = s.ok(
        "smart_search",
        json!({"query": "OrderStartedEvent", "kind": "record"}),
    );
    assert!(t.contains("OrderStarted.cs:3"), "{t}");
    let e = s.err("smart_search", json!({"query": "x", "kind": "widget"}));
    assert!(
        e.contains("unknown kind `widget`") && e.contains("record"),
        "{e}"
    );
}

/// `limit: 100` answered 19 entries and a footer that only said "Showing 1-19 of 143": the
/// page's 8 KiB text budget was not named, so the agent retried with the same limit.
#[test]
fn a_page_cut_by_its_text_budget_says_so() {
    let body: String = (0..30)
        .map(|i| format!("    public int Field{i} {{ get; set; }}\n"))
        .collect();
    let files: Vec<(String, String)> = (0..40)
        .map(|i| {
            (
                format!("services/shop/Widget{i}.cs"),
                format!("namespace Acme.Shop;\n\npublic class Widget{i}\n{{\n{body}}}\n"),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let ws = workspace("nu2-page", &refs);
    let mut s = Session::start(&ws);
    let t = s.ok(
        "smart_search",
        json!({"query": "Widget", "include_body": true, "limit": 100}),
    );
    assert!(
        t.contains("a page stops at about 8 KiB of text, here before `limit: 100`"),
        "{t}"
    );
    // A page cut by `limit` itself says nothing about the budget.
    let t = s.ok("smart_search", json!({"query": "Widget", "limit": 2}));
    assert!(t.contains("Showing 1-2 of 40"), "{t}");
    assert!(!t.contains("KiB"), "{t}");
}

/// `analyze_impact` on `/carts` (the prefix of every cart route, as an agent reads it off a
/// controller's class-level mapping) said no route matches and left the agent to guess the
/// exact spelling; the miss now names the routes that contain it.
#[test]
fn an_impact_miss_names_the_close_routes_and_topics() {
    let ws = workspace(
        "nu2-close",
        &[(
            "services/cart/server.js",
            "const express = require('express');\nconst app = express();\napp.get('/carts/:id', (req, res) => res.json({}));\napp.delete('/carts/:id', (req, res) => res.end());\napp.listen(8080);\n",
        )],
    );
    let mut s = Session::start(&ws);
    let t = s.ok("analyze_impact", json!({"target": "/carts"}));
    assert!(t.contains("No gRPC service or method"), "{t}");
    assert!(t.contains("_Close names (2 in all):"), "{t}");
    assert!(
        t.contains("`GET /carts/:id`") && t.contains("`DELETE /carts/:id`"),
        "{t}"
    );
    // A name nothing contains gets no such line.
    let t = s.ok("analyze_impact", json!({"target": "Ledger"}));
    assert!(!t.contains("Close names"), "{t}");
}
