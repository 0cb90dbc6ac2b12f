//! Issue 22: diff-aware impact (`analyze_changes` and `mesh-mcp impact`) on real git
//! repositories made by the tests. Each test copies the example workspace (Go, TypeScript,
//! JavaScript, Java, Python, Ruby … services), commits it on `main`, branches, makes one change
//! and asks `mesh-mcp impact --format json` (standalone, no daemon) what it touches: the
//! affected services and callers, exactly, and the verdict. One test goes through the MCP tool.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{Session, example_copy, temp_dir};
use serde_json::{Value, json};

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

/// The example as a git repository on `main`, with a branch `feature` checked out.
fn repo(tag: &str) -> std::path::PathBuf {
    let ws = example_copy(tag);
    git(&ws, &["init", "-q", "-b", "main"]);
    git(&ws, &["add", "-A"]);
    git(&ws, &["commit", "-q", "-m", "base"]);
    git(&ws, &["checkout", "-q", "-b", "feature"]);
    ws
}

/// Replaces `from` (which must be there) with `to` in one file of the workspace.
fn edit(ws: &Path, path: &str, from: &str, to: &str) {
    let p = ws.join(path);
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.contains(from), "{path} has no {from:?}");
    std::fs::write(&p, text.replacen(from, to, 1)).unwrap();
}

fn commit(ws: &Path) {
    git(ws, &["commit", "-q", "-a", "-m", "change"]);
}

/// Runs `mesh-mcp impact` in the workspace; returns (exit code, stdout).
fn impact(ws: &Path, args: &[&str]) -> (Option<i32>, String) {
    let home = temp_dir("impact-home");
    let out = Command::new(env!("CARGO_BIN_EXE_mesh-mcp"))
        .arg("impact")
        .args(args)
        .current_dir(ws)
        .env("HOME", &home)
        .env("MESH_AUDIT_DB", home.join("audit.db"))
        .env("MESH_SOCKET_PATH", home.join("meshd.sock"))
        .env_remove("MESH_LOG")
        .env_remove("RUST_LOG")
        .output()
        .expect("run mesh-mcp impact");
    assert!(
        out.stderr.is_empty() || out.status.code() != Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn impact_json(ws: &Path) -> Value {
    let (code, out) = impact(ws, &["--format", "json"]);
    assert_eq!(code, Some(0), "{out}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// The contract of that kind and name.
fn contract<'a>(report: &'a Value, kind: &str, name: &str) -> &'a Value {
    report["contracts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == kind && c["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name} in {report:#}"))
}

/// The affected elements of a contract with the role, as `service location` (EXTERNAL only
/// when `external`).
fn affected(c: &Value, role: &str, external: bool) -> BTreeSet<String> {
    c["affected"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["role"] == role && (!external || a["scope"] == "EXTERNAL"))
        .map(|a| {
            format!(
                "{} {}",
                a["service"].as_str().unwrap(),
                a["location"].as_str().unwrap()
            )
        })
        .collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn risk_of(report: &Value, service: &str) -> String {
    report["services"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["service"] == service)
        .map(|s| s["risk"].as_str().unwrap().to_string())
        .unwrap_or_else(|| "none".into())
}

/// Go: a gRPC handler's body changes; the contract is the same. Its callers in other services
/// (JavaScript and TypeScript) are a behaviour change, not a breaking one.
#[test]
fn go_handler_body_change_is_a_behaviour_change_for_its_callers() {
    let ws = repo("chg-handler");
    edit(
        &ws,
        "services/orders/server.go",
        "func (s *orderServer) CreateOrder(ctx context.Context, req *pb.CreateOrderRequest) (*pb.CreateOrderResponse, error) {\n",
        "func (s *orderServer) CreateOrder(ctx context.Context, req *pb.CreateOrderRequest) (*pb.CreateOrderResponse, error) {\n\tif len(req.Items) > 100 {\n\t\treturn nil, nil\n\t}\n",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_eq!(r["breaking"], false, "{r:#}");
    let c = contract(&r, "rpc", "OrderService.CreateOrder");
    assert_eq!(c["risk"], "behaviour");
    assert!(
        c["change"]
            .as_str()
            .unwrap()
            .contains("handler body changed"),
        "{c:#}"
    );
    assert_eq!(
        affected(c, "client", true),
        set(&["services/gateway services/gateway/src/clients/orders.js:17"]),
        "{c:#}"
    );
    assert_eq!(risk_of(&r, "services/orders"), "behaviour");
    assert_eq!(risk_of(&r, "services/gateway"), "behaviour");
    // web-bff calls only GetOrder, whose contract did not change.
    assert_eq!(risk_of(&r, "services/web-bff"), "none");
    // Services the change does not reach are not listed.
    assert_eq!(risk_of(&r, "services/payments"), "none");
    // The changed declaration, by file and line range.
    assert!(
        r["declarations"].as_array().unwrap().iter().any(|d| {
            d["path"] == "services/orders/server.go" && d["name"] == "orderServer.CreateOrder"
        }),
        "{:#}",
        r["declarations"]
    );
    // Not breaking: --fail-on breaking passes.
    let (code, md) = impact(&ws, &["--fail-on", "breaking"]);
    assert_eq!(code, Some(0), "{md}");
    assert!(md.contains("no breaking contract change"), "{md}");
}

/// An RPC renamed in the `.proto`: the callers of the old name (JavaScript and TypeScript)
/// still call it, so it is the loudest row, breaking, and `--fail-on breaking` exits 1.
#[test]
fn rpc_rename_with_live_callers_is_the_loudest_breaking_row() {
    let ws = repo("chg-rename");
    edit(
        &ws,
        "contracts/orders/v1/orders.proto",
        "rpc GetOrder(GetOrderRequest)",
        "rpc FetchOrder(GetOrderRequest)",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_eq!(r["breaking"], true);
    let first = &r["contracts"][0];
    assert_eq!(first["name"], "OrderService.GetOrder", "{r:#}");
    assert_eq!(first["risk"], "breaking");
    assert!(
        first["change"]
            .as_str()
            .unwrap()
            .contains("renamed to `OrderService.FetchOrder`"),
        "{first:#}"
    );
    assert_eq!(
        affected(first, "caller", true),
        set(&[
            "services/gateway services/gateway/src/clients/orders.js:23",
            "services/web-bff services/web-bff/src/lookups/order-lookup.ts:29",
        ]),
        "{first:#}"
    );
    assert_eq!(risk_of(&r, "services/gateway"), "breaking");
    assert_eq!(risk_of(&r, "services/web-bff"), "breaking");
    let (code, md) = impact(&ws, &["--fail-on", "breaking"]);
    assert_eq!(code, Some(1), "{md}");
    assert!(md.contains("**BREAKING**"), "{md}");
    assert!(
        md.contains("`services/gateway/src/clients/orders.js:23`"),
        "{md}"
    );
}

/// A field removed from a message without `reserved`: the wire verdict is breaking, and the
/// RPCs carrying the message (directly or embedded) list their clients.
#[test]
fn removed_proto_field_is_breaking_with_the_wire_verdict() {
    let ws = repo("chg-field");
    edit(
        &ws,
        "contracts/orders/v1/orders.proto",
        "  int64 total_cents = 5;\n",
        "",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_eq!(r["breaking"], true);
    let get = contract(&r, "rpc", "OrderService.GetOrder");
    assert_eq!(get["risk"], "breaking");
    let why = get["change"].as_str().unwrap();
    assert!(
        why.contains("WIRE_FORMAT_BREAKING_CHANGE") && why.contains("Order.total_cents"),
        "{why}"
    );
    // CreateOrderResponse embeds Order: the break travels.
    let create = contract(&r, "rpc", "OrderService.CreateOrder");
    assert_eq!(create["risk"], "breaking");
    assert_eq!(
        affected(create, "client", true),
        set(&["services/gateway services/gateway/src/clients/orders.js:17"])
    );
    assert!(
        affected(get, "client", true)
            .contains("services/gateway services/gateway/src/clients/orders.js:23"),
        "{get:#}"
    );
    // The same field removed with its number and name reserved: no break.
    git(&ws, &["checkout", "-q", "--", "."]);
    git(&ws, &["reset", "-q", "--hard", "main"]);
    edit(
        &ws,
        "contracts/orders/v1/orders.proto",
        "  int64 total_cents = 5;\n",
        "  reserved 5;\n  reserved \"total_cents\";\n",
    );
    let r = impact_json(&ws);
    assert_eq!(r["breaking"], false, "{r:#}");
}

/// Go: the constant naming a topic changes value. The consumers of the old name (JavaScript,
/// Java, Ruby) no longer receive anything: breaking.
#[test]
fn topic_name_constant_change_orphans_the_old_consumers() {
    let ws = repo("chg-topic");
    edit(
        &ws,
        "services/orders/main.go",
        "\"orders.created\")",
        "\"orders.placed\")",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_eq!(r["breaking"], true);
    let c = contract(&r, "topic", "orders.created");
    assert_eq!(c["risk"], "breaking");
    assert!(
        c["change"].as_str().unwrap().contains("`orders.placed`")
            && c["change"].as_str().unwrap().contains("ordersTopic"),
        "{c:#}"
    );
    assert_eq!(
        affected(c, "consumer", true),
        set(&[
            "services/gateway services/gateway/src/events/order-stream.js:12",
            "services/payments services/payments/src/main/java/com/acme/payments/kafka/OrderCreatedListener.java:29",
            "services/recommendations services/recommendations/lib/order_events.rb:15",
        ]),
        "{c:#}"
    );
    for svc in [
        "services/gateway",
        "services/payments",
        "services/recommendations",
        "services/orders",
    ] {
        assert_eq!(risk_of(&r, svc), "breaking", "{svc}: {r:#}");
    }
}

/// Java: the record a Kafka listener takes as its payload changes a field. The topic's
/// producers and consumers are reached through the payload type (heuristic), not only a topic
/// whose name or site changed.
#[test]
fn payload_type_change_reaches_the_topic() {
    let ws = repo("chg-payload");
    edit(
        &ws,
        "services/payments/src/main/java/com/acme/payments/kafka/OrderCreatedListener.java",
        "int quantity, long totalCents",
        "long quantity, long totalCents",
    );
    commit(&ws);
    let r = impact_json(&ws);
    let c = contract(&r, "topic", "orders.created");
    let change = c["change"].as_str().unwrap();
    assert!(
        change.contains("payload type `OrderCreated` changed")
            && change.contains("OrderCreatedListener.java:29")
            && change.contains("heuristic"),
        "{c:#}"
    );
    assert!(
        affected(c, "producer", false).contains("services/orders services/orders/main.go:42"),
        "{c:#}"
    );
    // The listener also produces payments.completed, but what it sends is a payment id: the
    // payload type in its own signature is what it received, so that topic is untouched.
    assert!(
        !r["contracts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["kind"] == "topic" && c["name"] == "payments.completed"),
        "{r:#}"
    );
    assert!(
        affected(c, "consumer", true)
            .contains("services/recommendations services/recommendations/lib/order_events.rb:15"),
        "{c:#}"
    );
}

/// Java: the record a Spring route returns renames a field; the route's path and handler are
/// unchanged, but its JSON is not: the TypeScript caller is reached through the response type
/// (heuristic).
#[test]
fn response_type_change_reaches_the_route_callers() {
    let ws = repo("chg-response");
    edit(
        &ws,
        "services/payments/src/main/java/com/acme/payments/web/PaymentController.java",
        "String orderId, boolean authorized)",
        "String orderId, boolean approved)",
    );
    commit(&ws);
    let r = impact_json(&ws);
    let route = r["contracts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["kind"] == "route"
                && c["change"]
                    .as_str()
                    .is_some_and(|t| t.contains("response type `PaymentView` changed"))
        })
        .unwrap_or_else(|| panic!("no route reached through PaymentView: {r:#}"));
    assert!(
        route["location"]
            .as_str()
            .unwrap()
            .contains("PaymentController.java:20"),
        "{route:#}"
    );
    assert!(
        affected(route, "caller", true)
            .iter()
            .any(|a| a.contains("services/web-bff/src/lookups/payment-lookup.ts")),
        "{route:#}"
    );
}

/// Go: a whole function is deleted from a file that stays. It is listed as deleted; its
/// neighbour, untouched, is not "changed".
#[test]
fn a_declaration_deleted_from_a_kept_file_is_deleted_not_its_neighbour() {
    let ws = repo("chg-delete");
    edit(
        &ws,
        "services/orders/store.go",
        "func newStore() *orderStore {\n\treturn &orderStore{orders: make(map[string]*pb.Order)}\n}\n\n",
        "",
    );
    commit(&ws);
    let r = impact_json(&ws);
    let decls = r["declarations"].as_array().unwrap();
    assert!(
        decls
            .iter()
            .any(|d| d["name"] == "newStore" && d["how"] == "deleted" && d["line"] == 17),
        "{r:#}"
    );
    assert!(
        !decls
            .iter()
            .any(|d| d["name"].as_str().is_some_and(|n| n.ends_with("add"))),
        "{r:#}"
    );
}

/// Python: a file converted to CRLF line endings changes no behaviour.
#[test]
fn line_endings_alone_change_nothing() {
    let ws = repo("chg-crlf");
    let path = ws.join("services/inventory/inventory/servicer.py");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace('\n', "\r\n")).unwrap();
    commit(&ws);
    let r = impact_json(&ws);
    assert_eq!(r["declarations"], serde_json::json!([]), "{r:#}");
    assert_eq!(r["contracts"], serde_json::json!([]), "{r:#}");
}

/// Java: a Spring route's path changes. The TypeScript caller of the old path is left
/// dangling: breaking.
#[test]
fn route_path_change_breaks_the_callers_of_the_old_path() {
    let ws = repo("chg-route");
    edit(
        &ws,
        "services/payments/src/main/java/com/acme/payments/web/PaymentController.java",
        "@GetMapping(\"/{orderId}\")",
        "@GetMapping(\"/by-order/{orderId}\")",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_eq!(r["breaking"], true);
    let old = contract(&r, "route", "GET /payments/{orderId}");
    assert_eq!(old["risk"], "breaking");
    assert!(
        old["change"]
            .as_str()
            .unwrap()
            .contains("now `GET /payments/by-order/{orderId}`"),
        "{old:#}"
    );
    assert_eq!(
        affected(old, "caller", true),
        set(&["services/web-bff services/web-bff/src/lookups/payment-lookup.ts:15"])
    );
    assert_eq!(risk_of(&r, "services/web-bff"), "breaking");
    assert_eq!(risk_of(&r, "services/payments"), "breaking");
    assert_eq!(risk_of(&r, "services/gateway"), "none");
}

/// TypeScript and JavaScript: an Express route's handler body changes (path unchanged), and a
/// test and a doc change beside it do not raise their service's risk.
#[test]
fn route_handler_change_and_test_or_doc_only_changes() {
    let ws = repo("chg-route-body");
    edit(
        &ws,
        "services/gateway/src/server.js",
        "  res.json(await orders.getOrder(req.params.id));\n",
        "  const order = await orders.getOrder(req.params.id);\n  res.json(order ?? {});\n",
    );
    edit(
        &ws,
        "services/web-bff/src/bff.controller.spec.ts",
        "ord-1",
        "ord-2",
    );
    std::fs::write(
        ws.join("services/inventory/NOTES.md"),
        "# Notes\n\nNothing yet.\n",
    )
    .unwrap();
    // Uncommitted on purpose: "working tree" diffs against HEAD.
    let (code, out) = impact(&ws, &["--base", "working tree", "--format", "json"]);
    assert_eq!(code, Some(0), "{out}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["breaking"], false);
    let c = contract(&r, "route", "GET /api/orders/:id");
    assert_eq!(c["risk"], "behaviour");
    assert!(
        c["change"]
            .as_str()
            .unwrap()
            .contains("handler body changed"),
        "{c:#}"
    );
    assert_eq!(risk_of(&r, "services/gateway"), "behaviour");
    assert_eq!(risk_of(&r, "services/web-bff"), "non_code", "{r:#}");
    assert_eq!(risk_of(&r, "services/inventory"), "non_code", "{r:#}");
    let classes: BTreeSet<(String, String)> = r["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["class"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(classes.contains(&(
        "services/web-bff/src/bff.controller.spec.ts".into(),
        "test".into()
    )));
    assert!(classes.contains(&("services/inventory/NOTES.md".into(), "doc".into())));
}

/// Through MCP: the tool answers Markdown with the verdict and paging, and bad arguments are
/// `isError` answers naming the fix.
#[test]
fn the_tool_over_mcp_and_its_argument_errors() {
    let ws = repo("chg-mcp");
    edit(
        &ws,
        "contracts/orders/v1/orders.proto",
        "rpc GetOrder(GetOrderRequest)",
        "rpc FetchOrder(GetOrderRequest)",
    );
    commit(&ws);
    let mut s = Session::start(&ws);
    let text = s.ok("analyze_changes", json!({}));
    assert!(text.contains("**BREAKING**"), "{text}");
    assert!(text.contains("merge-base of `HEAD` and `main`"), "{text}");
    assert!(
        text.contains("`services/web-bff/src/lookups/order-lookup.ts:29`"),
        "{text}"
    );
    assert!(text.len() <= 48 * 1024);
    let page = s.ok("analyze_changes", json!({"base": "main", "limit": 1}));
    assert!(
        page.contains("Next page: analyze_changes(offset: 1)"),
        "{page}"
    );
    // The same page as structured rows, and progress for a caller that sent a token.
    s.server.send(
        &json!({"jsonrpc": "2.0", "id": 900, "method": "tools/call", "params": {
        "name": "analyze_changes", "arguments": {"base": "main", "limit": 1},
        "_meta": {"progressToken": "chg"}}}),
    );
    let mut progress = Vec::new();
    let resp = loop {
        let m = s
            .server
            .next(std::time::Duration::from_secs(30))
            .expect("an answer");
        if m["method"] == "notifications/progress" {
            assert_eq!(m["params"]["progressToken"], "chg");
            progress.push(m["params"]["progress"].as_f64().unwrap());
        } else if m["id"] == 900 {
            break m;
        }
    };
    assert!(
        progress.len() >= 3 && progress.windows(2).all(|w| w[0] < w[1]),
        "{progress:?}"
    );
    let data = &resp["result"]["structuredContent"];
    assert_eq!(data["breaking"], true, "{data}");
    assert_eq!(data["rows"].as_array().unwrap().len(), 1, "{data}");
    assert_eq!(data["nextOffset"], 1, "{data}");
    let e = s.err("analyze_changes", json!({"base": "--output=/tmp/x"}));
    assert!(
        e.contains("Invalid base") && e.contains("origin/main"),
        "{e}"
    );
    let e = s.err("analyze_changes", json!({"base": "no-such-branch"}));
    assert!(
        e.contains("Unknown base") && e.contains("git branch -a"),
        "{e}"
    );
    let e = s.err("analyze_changes", json!({"depth": 9}));
    assert!(e.contains("`depth`") && e.contains("1–5"), "{e}");
    let e = s.err("analyze_changes", json!({"target": "x"}));
    assert!(e.contains("target"), "{e}");
}

/// Outside a git repository the CLI says so and exits 1; bad usage exits 2.
#[test]
fn impact_outside_git_and_bad_usage() {
    let dir = temp_dir("chg-nogit");
    std::fs::write(dir.join("main.go"), "package main\n\nfunc main() {}\n").unwrap();
    let home = temp_dir("impact-home");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_mesh-mcp"))
            .arg("impact")
            .args(args)
            .current_dir(&dir)
            .env("HOME", &home)
            .env("MESH_AUDIT_DB", home.join("audit.db"))
            .output()
            .unwrap()
    };
    let out = run(&["--format", "yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("markdown or json"));
    let out = run(&["--base", "-x"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&[]);
    // A temp directory may sit inside some repository; only check the answer when it does not.
    if !String::from_utf8_lossy(&out.stdout).contains("## Changes") {
        // 2, not 1: with --fail-on breaking, 1 means a breaking change, so a CI job must be
        // able to tell "could not compute" apart.
        assert_eq!(out.status.code(), Some(2));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("not inside a git repository"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Python handler, Java caller: a servicer method's body changes.
#[test]
fn python_handler_change_reaches_the_java_caller() {
    let ws = repo("chg-python");
    edit(
        &ws,
        "services/inventory/inventory/servicer.py",
        "            return inventory_pb2.ReserveStockResponse(reserved=False)\n",
        "            await self._events.reserved(request.order_id, request.sku, 0)\n            return inventory_pb2.ReserveStockResponse(reserved=False)\n",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_eq!(r["breaking"], false);
    let c = contract(&r, "rpc", "InventoryService.ReserveStock");
    assert_eq!(c["risk"], "behaviour");
    assert_eq!(
        affected(c, "client", true),
        set(&[
            "services/payments services/payments/src/main/java/com/acme/payments/clients/StockReservations.java:25"
        ]),
        "{c:#}"
    );
    assert_eq!(risk_of(&r, "services/payments"), "behaviour");
    assert_eq!(risk_of(&r, "services/inventory"), "behaviour");
}

/// A practice corpus (`../shared/corpora/eshop`, C#) turned into a git repository: a field
/// removed from the basket `.proto` breaks both basket RPCs for the ClientApp and WebApp
/// clients. Skipped when the corpus is not there.
#[test]
fn eshop_corpus_removed_basket_field() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpora/eshop");
    if !corpus.join("src/Basket.API/Proto/basket.proto").is_file() {
        eprintln!("skipped: {} is not there", corpus.display());
        return;
    }
    let ws = std::fs::canonicalize(temp_dir("chg-eshop"))
        .unwrap()
        .join("eshop");
    common::copy_tree(&corpus, &ws);
    git(&ws, &["init", "-q", "-b", "main"]);
    git(&ws, &["add", "-A"]);
    git(&ws, &["commit", "-q", "-m", "base"]);
    git(&ws, &["checkout", "-q", "-b", "feature"]);
    edit(
        &ws,
        "src/Basket.API/Proto/basket.proto",
        "    int32 quantity = 6;\n",
        "",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_eq!(r["breaking"], true);
    let names: BTreeSet<String> = r["contracts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| format!("{} {} {}", c["kind"], c["name"], c["risk"]).replace('"', ""))
        .collect();
    assert_eq!(
        names,
        set(&[
            "rpc Basket.GetBasket breaking",
            "rpc Basket.UpdateBasket breaking"
        ]),
        "{r:#}"
    );
    let get = contract(&r, "rpc", "Basket.GetBasket");
    assert!(
        get["change"]
            .as_str()
            .unwrap()
            .contains("`BasketItem.quantity` #6"),
        "{get:#}"
    );
    assert_eq!(
        affected(get, "client", true),
        set(&[
            "src/ClientApp src/ClientApp/Services/Basket/BasketService.cs:46",
            "src/WebApp src/WebApp/Extensions/Extensions.cs:31",
            "src/WebApp src/WebApp/Services/BasketService.cs:11",
        ])
    );
    let update = contract(&r, "rpc", "Basket.UpdateBasket");
    assert_eq!(
        affected(update, "client", true),
        set(&[
            "src/ClientApp src/ClientApp/Services/Basket/BasketService.cs:84",
            "src/WebApp src/WebApp/Extensions/Extensions.cs:31",
            "src/WebApp src/WebApp/Services/BasketService.cs:34",
        ])
    );
    for svc in ["src/Basket.API", "src/ClientApp", "src/WebApp"] {
        assert_eq!(risk_of(&r, svc), "breaking", "{svc}");
    }
}
