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
    repo_with(tag, |_| {})
}

/// [`repo`], with `setup` run on the copy before the base commit (files the example lacks).
fn repo_with(tag: &str, setup: impl FnOnce(&Path)) -> std::path::PathBuf {
    let ws = example_copy(tag);
    setup(&ws);
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
            .contains("renamed to `OrderService.FetchOrder`: the wire shape is unchanged (same messages), but the method name, and so the path clients call (`/acme.orders.v1.OrderService/GetOrder`), changed"),
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

/// TypeScript: the caller's side changes. A call whose new URL no route serves breaks the
/// caller; the route it reached is named as what it lost.
#[test]
fn a_call_that_no_longer_reaches_its_route_is_breaking_for_the_caller() {
    let ws = repo("chg-call");
    edit(
        &ws,
        "services/web-bff/src/lookups/payment-lookup.ts",
        "`${PAYMENTS_URL}/payments/${",
        "`${PAYMENTS_URL}/paymnts/${",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_eq!(r["breaking"], true, "{r:#}");
    let c = contract(&r, "call", "GET /payments/{orderId}");
    assert_eq!(c["risk"], "breaking");
    assert_eq!(
        c["location"],
        "services/web-bff/src/lookups/payment-lookup.ts:15"
    );
    assert!(
        c["change"].as_str().unwrap().contains("no longer reaches"),
        "{c:#}"
    );
    let lost = affected(c, "route it reached", true);
    assert_eq!(lost.len(), 1, "{c:#}");
    assert!(
        lost.iter()
            .next()
            .unwrap()
            .starts_with("services/payments "),
        "{lost:?}"
    );
    assert_eq!(risk_of(&r, "services/web-bff"), "breaking");
}

/// YAML: a load-test scenario's step (Artillery's `- get:` with its `url:` on the line below)
/// changes its URL. The step is a call like any other: it no longer reaches the route it
/// requested, although the changed line is not the verb's line the call is recorded at.
#[test]
fn a_load_test_step_that_no_longer_reaches_its_route_is_breaking() {
    let scenario = "services/web-bff/load/scenario.yml";
    let ws = repo_with("chg-scenario", |ws| {
        std::fs::create_dir_all(ws.join("services/web-bff/load")).unwrap();
        std::fs::write(
            ws.join(scenario),
            "config:\n  target: \"http://localhost:8080\"\nscenarios:\n  - name: browse\n    flow:\n      - get:\n          url: \"/payments/{{ orderId }}\"\n      - get:\n          url: \"/health\"\n",
        )
        .unwrap();
    });
    edit(
        &ws,
        scenario,
        "url: \"/payments/{{ orderId }}\"",
        "url: \"/paymnts/{{ orderId }}\"",
    );
    commit(&ws);
    let r = impact_json(&ws);
    let c = contract(&r, "call", "GET /payments/{orderId}");
    assert_eq!(c["risk"], "breaking", "{c:#}");
    assert_eq!(c["location"], format!("{scenario}:6"));
    assert!(
        c["change"].as_str().unwrap().contains("no longer reaches"),
        "{c:#}"
    );
    let lost = affected(c, "route it reached", true);
    assert_eq!(lost.len(), 1, "{c:#}");
    assert!(
        lost.iter()
            .next()
            .unwrap()
            .starts_with("services/payments "),
        "{lost:?}"
    );
    // The step below it did not change: one call row.
    let calls = r["contracts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "call")
        .count();
    assert_eq!(calls, 1, "{r:#}");
}

/// A change to a call's line that leaves the route it requests as it was: no call row.
#[test]
fn a_change_beside_an_unchanged_call_is_no_call_contract() {
    let ws = repo("chg-call-same");
    edit(
        &ws,
        "services/web-bff/src/lookups/payment-lookup.ts",
        "encodeURIComponent(orderId)}`);",
        "encodeURIComponent(orderId.trim())}`, { method: 'GET' });",
    );
    commit(&ws);
    let r = impact_json(&ws);
    let calls = r["contracts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "call")
        .count();
    assert_eq!(calls, 0, "{r:#}");
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

/// A local repository whose default branch is `master` (no remote): the branch is compared
/// with its merge-base with `master`, not with HEAD ("no changes").
#[test]
fn a_master_branch_is_the_implicit_base() {
    let ws = repo("chg-master");
    git(&ws, &["branch", "-m", "main", "master"]);
    edit(
        &ws,
        "contracts/orders/v1/orders.proto",
        "rpc GetOrder(GetOrderRequest)",
        "rpc FetchOrder(GetOrderRequest)",
    );
    commit(&ws);
    let (code, out) = impact(&ws, &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("merge-base of `HEAD` and `master`"), "{out}");
    assert!(out.contains("BREAKING"), "{out}");
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
    let Some(ws) = corpus_repo("eshop", "chg-eshop") else {
        return;
    };
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

// ---------------------------------------------------------------------------------------------
// The matrix: for each language family, a branch that changes a handler body, renames an RPC,
// removes a proto field, changes a topic name constant (or the literal a consumer names), and
// changes a route path. Each asserts the WHOLE answer: every contract with its verdict and its
// affected rows, and every service's risk — nothing missing, nothing false.
// ---------------------------------------------------------------------------------------------

/// A practice corpus from `../shared/corpora/` as a git repository on `main` with a branch
/// `feature` checked out; `None` (the test skips) when the corpus is not there.
fn corpus_repo(name: &str, tag: &str) -> Option<std::path::PathBuf> {
    // `MESH_CORPORA_DIR` for a checkout that does not sit beside `shared/` (a git worktree).
    let corpus = std::env::var_os("MESH_CORPORA_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpora"))
        .join(name);
    if !corpus.is_dir() {
        eprintln!("skipped: {} is not there", corpus.display());
        return None;
    }
    let ws = std::fs::canonicalize(temp_dir(tag)).unwrap().join(name);
    common::copy_tree(&corpus, &ws);
    git(&ws, &["init", "-q", "-b", "main"]);
    git(&ws, &["add", "-A"]);
    git(&ws, &["commit", "-q", "-m", "base"]);
    git(&ws, &["checkout", "-q", "-b", "feature"]);
    Some(ws)
}

/// True when `loc` is `path:line` (a deleted contract's: `path:line (base)`).
fn is_path_line(loc: &str) -> bool {
    let loc = loc.strip_suffix(" (base)").unwrap_or(loc);
    loc.rsplit_once(':').is_some_and(|(p, n)| {
        !p.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && n != "0"
    })
}

/// The answer is exactly `contracts` (`kind name risk` → its affected rows as
/// `role SCOPE service path:line`) and `services` (service → risk); every row has a
/// `path:line`, and `breaking` agrees with the verdicts.
fn assert_exact(r: &Value, contracts: &[(&str, &[&str])], services: &[(&str, &str)]) {
    let mut got = std::collections::BTreeMap::new();
    for c in r["contracts"].as_array().unwrap() {
        let loc = c["location"].as_str().unwrap();
        assert!(is_path_line(loc), "contract without path:line: {c:#}");
        let rows: BTreeSet<String> = c["affected"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                let at = a["location"].as_str().unwrap();
                assert!(is_path_line(at), "row without path:line: {a:#}");
                format!(
                    "{} {} {} {at}",
                    a["role"].as_str().unwrap(),
                    a["scope"].as_str().unwrap(),
                    a["service"].as_str().unwrap()
                )
            })
            .collect();
        let key = format!(
            "{} {} {}",
            c["kind"].as_str().unwrap(),
            c["name"].as_str().unwrap(),
            c["risk"].as_str().unwrap()
        );
        assert!(got.insert(key, rows).is_none(), "a contract twice: {c:#}");
    }
    let want: std::collections::BTreeMap<String, BTreeSet<String>> = contracts
        .iter()
        .map(|(k, rows)| (k.to_string(), set(rows)))
        .collect();
    assert_eq!(got, want, "contracts: {r:#}");
    let got: std::collections::BTreeMap<String, String> = r["services"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["service"].as_str().unwrap().to_string(),
                s["risk"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want: std::collections::BTreeMap<String, String> = services
        .iter()
        .map(|(s, k)| (s.to_string(), k.to_string()))
        .collect();
    assert_eq!(got, want, "services: {r:#}");
    // Every reason is whole: no bracket opened and left open by a cut.
    for s in r["services"].as_array().unwrap() {
        let why = s["why"].as_str().unwrap();
        assert_eq!(
            why.matches('(').count(),
            why.matches(')').count(),
            "an unclosed bracket in {why:?}"
        );
    }
    let breaking = contracts.iter().any(|(k, _)| k.ends_with(" breaking"));
    assert_eq!(r["breaking"], breaking, "{r:#}");
}

/// One contract's change says `why` (the verdict's reason).
fn assert_why(r: &Value, why: &str) {
    assert!(
        r["contracts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["change"].as_str().is_some_and(|t| t.contains(why))),
        "no contract says {why:?}: {r:#}"
    );
}

#[test]
fn java_route_handler_body_change_reaches_its_typescript_caller() {
    let ws = repo("java_route_handler_body_change_reaches_i");
    edit(
        &ws,
        "services/payments/src/main/java/com/acme/payments/web/PaymentController.java",
        ".orElse(ResponseEntity.notFound().build());",
        ".orElse(ResponseEntity.noContent().build());",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "handler body changed");
    assert_exact(
        &r,
        &[(
            "route GET /payments/{orderId} behaviour",
            &[
                "caller EXTERNAL services/web-bff services/web-bff/src/lookups/payment-lookup.ts:15",
                "route INTERNAL services/payments services/payments/src/main/java/com/acme/payments/web/PaymentController.java:20",
            ],
        )],
        &[
            ("services/payments", "behaviour"),
            ("services/web-bff", "behaviour"),
        ],
    );
}

#[test]
fn kotlin_route_handler_body_change_reaches_its_javascript_caller() {
    let ws = repo("kotlin_route_handler_body_change_reaches");
    edit(
        &ws,
        "services/shipping/src/main/kotlin/com/acme/shipping/ShipmentController.kt",
        "book.find(orderId)?",
        "book.find(orderId.trim())?",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "handler body changed");
    assert_exact(
        &r,
        &[(
            "route GET /shipments/{orderId} behaviour",
            &[
                "caller EXTERNAL services/gateway services/gateway/src/clients/services.js:14",
                "route INTERNAL services/shipping services/shipping/src/main/kotlin/com/acme/shipping/ShipmentController.kt:14",
            ],
        )],
        &[
            ("services/gateway", "behaviour"),
            ("services/shipping", "behaviour"),
        ],
    );
}

#[test]
fn csharp_route_handler_body_change_reaches_its_kotlin_caller() {
    let ws = repo("csharp_route_handler_body_change_reaches");
    edit(
        &ws,
        "services/notifications/Controllers/NotificationsController.cs",
        "return Accepted();",
        "return Ok();",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "handler body changed");
    assert_exact(
        &r,
        &[(
            "route POST /api/notifications/email behaviour",
            &[
                "caller EXTERNAL services/shipping services/shipping/src/main/kotlin/com/acme/shipping/PaymentsListener.kt:21",
                "route INTERNAL services/notifications services/notifications/Controllers/NotificationsController.cs:16",
            ],
        )],
        &[
            ("services/notifications", "behaviour"),
            ("services/shipping", "behaviour"),
        ],
    );
}

#[test]
fn typescript_route_handler_body_change_has_no_caller_to_list() {
    let ws = repo("typescript_route_handler_body_change_has");
    edit(
        &ws,
        "services/web-bff/src/bff.controller.ts",
        "    return { order, payment };",
        "    return { order, payment: payment ?? null };",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "handler body changed");
    assert_exact(
        &r,
        &[(
            "route GET /bff/orders/:id behaviour",
            &["route INTERNAL services/web-bff services/web-bff/src/bff.controller.ts:12"],
        )],
        &[("services/web-bff", "behaviour")],
    );
}

#[test]
fn rust_grpc_handler_body_change_reaches_its_java_client() {
    let ws = repo("rust_grpc_handler_body_change_reaches_it");
    edit(
        &ws,
        "services/ledger/src/main.rs",
        "let amount = req.amount.map(|m| m.amount_minor).unwrap_or(0);",
        "let amount = req.amount.map(|m| m.amount_minor).unwrap_or(0).max(0);",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "handler body changed");
    assert_exact(
        &r,
        &[(
            "rpc LedgerService.RecordEntry behaviour",
            &[
                "client EXTERNAL services/payments services/payments/src/main/java/com/acme/payments/clients/LedgerRecorder.java:25",
                "handler INTERNAL services/ledger services/ledger/src/main.rs:37",
            ],
        )],
        &[
            ("services/ledger", "behaviour"),
            ("services/payments", "behaviour"),
        ],
    );
}

#[test]
fn cpp_grpc_handler_body_change_reaches_its_go_client() {
    let ws = repo("cpp_grpc_handler_body_change_reaches_its");
    edit(
        &ws,
        "services/pricing/src/pricing_server.cc",
        "    response->set_surcharge(quote.surcharge);",
        "    response->set_surcharge(quote.surcharge && request->quantity() > 1);",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "handler body changed");
    assert_exact(
        &r,
        &[(
            "rpc PricingService.GetQuote behaviour",
            &[
                "client EXTERNAL services/orders services/orders/server.go:28",
                "handler INTERNAL services/pricing services/pricing/src/pricing_server.cc:24",
            ],
        )],
        &[
            ("services/orders", "behaviour"),
            ("services/pricing", "behaviour"),
        ],
    );
}

#[test]
fn ruby_route_handler_body_change_reaches_its_javascript_caller() {
    let ws = repo("ruby_route_handler_body_change_reaches_i");
    edit(
        &ws,
        "services/recommendations/app.rb",
        "    content_type :json\n",
        "    content_type :json, charset: \"utf-8\"\n",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "handler body changed");
    assert_exact(
        &r,
        &[(
            "route GET /recommendations/:user_id behaviour",
            &[
                "caller EXTERNAL services/gateway services/gateway/src/clients/services.js:6",
                "route INTERNAL services/recommendations services/recommendations/app.rb:11",
            ],
        )],
        &[
            ("services/gateway", "behaviour"),
            ("services/recommendations", "behaviour"),
        ],
    );
}

#[test]
fn rpc_rename_python_handler_java_caller() {
    let ws = repo("rpc_rename_python_handler_java_caller");
    edit(
        &ws,
        "contracts/inventory/v1/inventory.proto",
        "rpc ReserveStock(",
        "rpc Reserve(",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "renamed to `InventoryService.Reserve`");
    assert_exact(
        &r,
        &[
            (
                "rpc InventoryService.Reserve behaviour",
                &[
                    "client EXTERNAL services/payments services/payments/src/main/java/com/acme/payments/clients/StockReservations.java:16",
                ],
            ),
            (
                "rpc InventoryService.ReserveStock breaking",
                &[
                    "caller EXTERNAL services/payments services/payments/src/main/java/com/acme/payments/clients/StockReservations.java:25",
                ],
            ),
        ],
        &[
            ("services/inventory", "breaking"),
            ("services/payments", "breaking"),
        ],
    );
}

#[test]
fn rpc_rename_python_handler_cpp_caller() {
    let ws = repo("rpc_rename_python_handler_cpp_caller");
    edit(
        &ws,
        "contracts/inventory/v1/inventory.proto",
        "rpc GetStock(",
        "rpc FetchStock(",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "renamed to `InventoryService.FetchStock`");
    assert_exact(
        &r,
        &[
            (
                "rpc InventoryService.FetchStock behaviour",
                &["client EXTERNAL services/pricing services/pricing/src/pricing_server.cc:21"],
            ),
            (
                "rpc InventoryService.GetStock breaking",
                &["caller EXTERNAL services/pricing services/pricing/src/pricing_server.cc:30"],
            ),
        ],
        &[
            ("services/inventory", "breaking"),
            ("services/pricing", "breaking"),
        ],
    );
}

#[test]
fn rpc_rename_rust_handler_java_caller() {
    let ws = repo("rpc_rename_rust_handler_java_caller");
    edit(
        &ws,
        "contracts/ledger/v1/ledger.proto",
        "rpc RecordEntry(",
        "rpc Record(",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "renamed to `LedgerService.Record`");
    assert_exact(
        &r,
        &[
            (
                "rpc LedgerService.Record behaviour",
                &[
                    "client EXTERNAL services/payments services/payments/src/main/java/com/acme/payments/clients/LedgerRecorder.java:16",
                ],
            ),
            (
                "rpc LedgerService.RecordEntry breaking",
                &[
                    "caller EXTERNAL services/payments services/payments/src/main/java/com/acme/payments/clients/LedgerRecorder.java:25",
                ],
            ),
        ],
        &[
            ("services/ledger", "breaking"),
            ("services/payments", "breaking"),
        ],
    );
}

#[test]
fn rpc_rename_cpp_handler_go_caller() {
    let ws = repo("rpc_rename_cpp_handler_go_caller");
    edit(
        &ws,
        "contracts/pricing/v1/pricing.proto",
        "rpc GetQuote(",
        "rpc Quote(",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "renamed to `PricingService.Quote`");
    assert_exact(
        &r,
        &[
            (
                "rpc PricingService.GetQuote breaking",
                &["caller EXTERNAL services/orders services/orders/server.go:28"],
            ),
            (
                "rpc PricingService.Quote behaviour",
                &["client EXTERNAL services/orders services/orders/main.go:39"],
            ),
        ],
        &[
            ("services/orders", "breaking"),
            ("services/pricing", "breaking"),
        ],
    );
}

#[test]
fn removed_field_python_handler_java_client() {
    let ws = repo("removed_field_python_handler_java_client");
    edit(
        &ws,
        "contracts/inventory/v1/inventory.proto",
        "  int32 quantity = 3;\n",
        "",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "`ReserveStockRequest.quantity` #3");
    assert_exact(
        &r,
        &[(
            "rpc InventoryService.ReserveStock breaking",
            &[
                "client EXTERNAL services/payments services/payments/src/main/java/com/acme/payments/clients/StockReservations.java:25",
                "handler INTERNAL services/inventory services/inventory/inventory/servicer.py:17",
            ],
        )],
        &[
            ("services/inventory", "breaking"),
            ("services/payments", "breaking"),
        ],
    );
}

#[test]
fn removed_field_python_handler_cpp_client() {
    let ws = repo("removed_field_python_handler_cpp_client");
    edit(
        &ws,
        "contracts/inventory/v1/inventory.proto",
        "  int32 available = 2;\n",
        "",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "`StockLevel.available` #2");
    assert_exact(
        &r,
        &[(
            "rpc InventoryService.GetStock breaking",
            &[
                "client EXTERNAL services/pricing services/pricing/src/pricing_server.cc:30",
                "handler INTERNAL services/inventory services/inventory/inventory/servicer.py:25",
            ],
        )],
        &[
            ("services/inventory", "breaking"),
            ("services/pricing", "breaking"),
        ],
    );
}

#[test]
fn removed_field_rust_handler_java_client() {
    let ws = repo("removed_field_rust_handler_java_client");
    edit(
        &ws,
        "contracts/ledger/v1/ledger.proto",
        "  string account = 2;\n",
        "",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "`RecordEntryRequest.account` #2");
    assert_exact(
        &r,
        &[(
            "rpc LedgerService.RecordEntry breaking",
            &[
                "client EXTERNAL services/payments services/payments/src/main/java/com/acme/payments/clients/LedgerRecorder.java:25",
                "handler INTERNAL services/ledger services/ledger/src/main.rs:37",
            ],
        )],
        &[
            ("services/ledger", "breaking"),
            ("services/payments", "breaking"),
        ],
    );
}

#[test]
fn removed_field_cpp_handler_go_client() {
    let ws = repo("removed_field_cpp_handler_go_client");
    edit(
        &ws,
        "contracts/pricing/v1/pricing.proto",
        "  string currency = 3;\n",
        "",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "`QuoteRequest.currency` #3");
    assert_exact(
        &r,
        &[(
            "rpc PricingService.GetQuote breaking",
            &[
                "client EXTERNAL services/orders services/orders/server.go:28",
                "handler INTERNAL services/pricing services/pricing/src/pricing_server.cc:24",
            ],
        )],
        &[
            ("services/orders", "breaking"),
            ("services/pricing", "breaking"),
        ],
    );
}

#[test]
fn removed_field_of_a_shared_message_breaks_the_rpcs_of_every_importing_proto() {
    let ws = repo("removed_field_of_a_shared_message_breaks");
    edit(
        &ws,
        "contracts/common/v1/money.proto",
        "  int64 amount_minor = 2;\n",
        "",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "via `acme.common.v1.Money`");
    assert_exact(
        &r,
        &[
            ("message Money breaking", &[]),
            (
                "rpc LedgerService.GetBalance breaking",
                &["handler INTERNAL services/ledger services/ledger/src/main.rs:44"],
            ),
            (
                "rpc LedgerService.RecordEntry breaking",
                &[
                    "client EXTERNAL services/payments services/payments/src/main/java/com/acme/payments/clients/LedgerRecorder.java:25",
                    "handler INTERNAL services/ledger services/ledger/src/main.rs:37",
                ],
            ),
            (
                "rpc PaymentService.AuthorizePayment breaking",
                &[
                    "handler INTERNAL services/payments services/payments/src/main/java/com/acme/payments/grpc/PaymentGrpcService.java:22",
                ],
            ),
            (
                "rpc PaymentService.GetPayment breaking",
                &[
                    "handler INTERNAL services/payments services/payments/src/main/java/com/acme/payments/grpc/PaymentGrpcService.java:29",
                ],
            ),
            (
                "rpc PricingService.GetQuote breaking",
                &[
                    "client EXTERNAL services/orders services/orders/server.go:28",
                    "handler INTERNAL services/pricing services/pricing/src/pricing_server.cc:24",
                ],
            ),
        ],
        &[
            // money.proto is served by no service: its directory owns it, not the root `.`.
            ("contracts/common/v1", "breaking"),
            ("services/ledger", "breaking"),
            ("services/orders", "breaking"),
            ("services/payments", "breaking"),
            ("services/pricing", "breaking"),
        ],
    );
}

#[test]
fn java_topic_constant_change_orphans_kotlin_and_rust_consumers() {
    let ws = repo("java_topic_constant_change_orphans_kotli");
    edit(
        &ws,
        "services/payments/src/main/java/com/acme/payments/kafka/Topics.java",
        "\"payments.completed\";",
        "\"payments.done\";",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "`Topics.PAYMENTS_COMPLETED`");
    assert_exact(
        &r,
        &[
            (
                "topic payments.completed breaking",
                &[
                    "consumer EXTERNAL services/ledger services/ledger/src/consumer.rs:23",
                    "consumer EXTERNAL services/shipping services/shipping/src/main/kotlin/com/acme/shipping/PaymentsListener.kt:16",
                ],
            ),
            (
                "topic payments.done behaviour",
                &[
                    "producer INTERNAL services/payments services/payments/src/main/java/com/acme/payments/kafka/OrderCreatedListener.java:36",
                ],
            ),
        ],
        &[
            ("services/ledger", "breaking"),
            ("services/payments", "breaking"),
            ("services/shipping", "breaking"),
        ],
    );
}

#[test]
fn kotlin_topic_constant_change_orphans_the_csharp_consumer() {
    let ws = repo("kotlin_topic_constant_change_orphans_the");
    edit(
        &ws,
        "services/shipping/src/main/kotlin/com/acme/shipping/Topics.kt",
        "\"shipments.dispatched\"",
        "\"shipments.sent\"",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "`Topics.SHIPMENT_DISPATCHED`");
    assert_exact(
        &r,
        &[
            (
                "topic shipments.dispatched breaking",
                &[
                    "consumer EXTERNAL services/notifications services/notifications/Kafka/ShipmentListener.cs:25",
                ],
            ),
            (
                "topic shipments.sent behaviour",
                &[
                    "producer INTERNAL services/shipping services/shipping/src/main/kotlin/com/acme/shipping/PaymentsListener.kt:19",
                ],
            ),
        ],
        &[
            ("services/notifications", "breaking"),
            ("services/shipping", "breaking"),
        ],
    );
}

#[test]
fn python_topic_constant_change_orphans_the_typescript_consumer() {
    let ws = repo("python_topic_constant_change_orphans_the");
    edit(
        &ws,
        "services/inventory/inventory/events.py",
        "\"inventory.reserved\")",
        "\"stock.reserved\")",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "`INVENTORY_TOPIC`");
    assert_exact(
        &r,
        &[
            (
                "topic inventory.reserved breaking",
                &["consumer EXTERNAL services/web-bff services/web-bff/src/inventory.events.ts:16"],
            ),
            (
                "topic stock.reserved behaviour",
                &["producer INTERNAL services/inventory services/inventory/inventory/events.py:20"],
            ),
        ],
        &[
            ("services/inventory", "breaking"),
            ("services/web-bff", "breaking"),
        ],
    );
}

#[test]
fn csharp_consumer_topic_constant_change_leaves_it_without_a_producer() {
    let ws = repo("csharp_consumer_topic_constant_change_le");
    edit(
        &ws,
        "services/notifications/Kafka/Topics.cs",
        "\"shipments.dispatched\"",
        "\"shipments.sent\"",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "moved from `shipments.dispatched` to `shipments.sent`");
    assert_exact(
        &r,
        &[(
            "topic shipments.dispatched breaking",
            &[
                "consumer INTERNAL services/notifications services/notifications/Kafka/ShipmentListener.cs:25",
                "producer EXTERNAL services/shipping services/shipping/src/main/kotlin/com/acme/shipping/PaymentsListener.kt:19",
            ],
        )],
        &[
            ("services/notifications", "breaking"),
            ("services/shipping", "breaking"),
        ],
    );
}

#[test]
fn rust_consumer_topic_constant_change_leaves_it_without_a_producer() {
    let ws = repo("rust_consumer_topic_constant_change_leav");
    edit(
        &ws,
        "services/ledger/src/consumer.rs",
        "\"payments.completed\";",
        "\"payments.done\";",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "moved from `payments.completed` to `payments.done`");
    assert_exact(
        &r,
        &[(
            "topic payments.completed breaking",
            &[
                "consumer INTERNAL services/ledger services/ledger/src/consumer.rs:23",
                "producer EXTERNAL services/payments services/payments/src/main/java/com/acme/payments/kafka/OrderCreatedListener.java:36",
            ],
        )],
        &[
            ("services/ledger", "breaking"),
            ("services/payments", "breaking"),
        ],
    );
}

#[test]
fn typescript_enum_topic_change_leaves_the_consumer_without_a_producer() {
    let ws = repo("typescript_enum_topic_change_leaves_the_");
    edit(
        &ws,
        "services/web-bff/src/topics.ts",
        "'inventory.reserved'",
        "'stock.reserved'",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "moved from `inventory.reserved` to `stock.reserved`");
    assert_exact(
        &r,
        &[(
            "topic inventory.reserved breaking",
            &[
                "consumer INTERNAL services/web-bff services/web-bff/src/inventory.events.ts:16",
                "producer EXTERNAL services/inventory services/inventory/inventory/events.py:20",
            ],
        )],
        &[
            ("services/inventory", "breaking"),
            ("services/web-bff", "breaking"),
        ],
    );
}

#[test]
fn javascript_consumer_topic_default_change_leaves_it_without_a_producer() {
    let ws = repo("javascript_consumer_topic_default_change");
    edit(
        &ws,
        "services/gateway/src/events/order-stream.js",
        "'orders.created'",
        "'orders.placed'",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "moved from `orders.created` to `orders.placed`");
    assert_exact(
        &r,
        &[(
            "topic orders.created breaking",
            &[
                "consumer INTERNAL services/gateway services/gateway/src/events/order-stream.js:12",
                "producer EXTERNAL services/orders services/orders/main.go:42",
            ],
        )],
        &[
            ("services/gateway", "breaking"),
            ("services/orders", "breaking"),
        ],
    );
}

#[test]
fn ruby_consumer_topic_literal_change_leaves_it_without_a_producer() {
    let ws = repo("ruby_consumer_topic_literal_change_leave");
    edit(
        &ws,
        "services/recommendations/lib/order_events.rb",
        "\"orders.created\"",
        "\"orders.placed\"",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "moved from `orders.created` to `orders.placed`");
    assert_exact(
        &r,
        &[(
            "topic orders.created breaking",
            &[
                "consumer INTERNAL services/recommendations services/recommendations/lib/order_events.rb:15",
                "producer EXTERNAL services/orders services/orders/main.go:42",
            ],
        )],
        &[
            ("services/orders", "breaking"),
            ("services/recommendations", "breaking"),
        ],
    );
}

#[test]
fn kotlin_route_path_change_breaks_the_javascript_caller() {
    let ws = repo("kotlin_route_path_change_breaks_the_java");
    edit(
        &ws,
        "services/shipping/src/main/kotlin/com/acme/shipping/ShipmentController.kt",
        "@GetMapping(\"/{orderId}\")",
        "@GetMapping(\"/track/{orderId}\")",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "now `GET /shipments/track/{orderId}`");
    assert_exact(
        &r,
        &[
            (
                "route GET /shipments/track/{orderId} behaviour",
                &[
                    "route INTERNAL services/shipping services/shipping/src/main/kotlin/com/acme/shipping/ShipmentController.kt:14",
                ],
            ),
            (
                "route GET /shipments/{orderId} breaking",
                &["caller EXTERNAL services/gateway services/gateway/src/clients/services.js:14"],
            ),
        ],
        &[
            ("services/gateway", "breaking"),
            ("services/shipping", "breaking"),
        ],
    );
}

#[test]
fn csharp_route_path_change_breaks_the_kotlin_caller() {
    let ws = repo("csharp_route_path_change_breaks_the_kotl");
    edit(
        &ws,
        "services/notifications/Controllers/NotificationsController.cs",
        "[HttpPost(\"email\")]",
        "[HttpPost(\"mail\")]",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "now `POST /api/notifications/mail`");
    assert_exact(
        &r,
        &[
            (
                "route POST /api/notifications/email breaking",
                &[
                    "caller EXTERNAL services/shipping services/shipping/src/main/kotlin/com/acme/shipping/PaymentsListener.kt:21",
                ],
            ),
            (
                "route POST /api/notifications/mail behaviour",
                &[
                    "route INTERNAL services/notifications services/notifications/Controllers/NotificationsController.cs:16",
                ],
            ),
        ],
        &[
            ("services/notifications", "breaking"),
            ("services/shipping", "breaking"),
        ],
    );
}

#[test]
fn python_route_path_change_breaks_the_ruby_caller_behind_a_base_url() {
    let ws = repo("python_route_path_change_breaks_the_ruby");
    edit(
        &ws,
        "services/inventory/inventory/api.py",
        "@app.get(\"/stock/{sku}\")",
        "@app.get(\"/stocks/{sku}\")",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "now `GET /stocks/{sku}`");
    assert_exact(
        &r,
        &[
            (
                "route GET /stock/{sku} breaking",
                &[
                    "caller EXTERNAL services/recommendations services/recommendations/lib/stock_checker.rb:12",
                ],
            ),
            (
                "route GET /stocks/{sku} behaviour",
                &["route INTERNAL services/inventory services/inventory/inventory/api.py:11"],
            ),
        ],
        &[
            ("services/inventory", "breaking"),
            ("services/recommendations", "breaking"),
        ],
    );
}

#[test]
fn ruby_route_path_change_breaks_the_javascript_caller() {
    let ws = repo("ruby_route_path_change_breaks_the_javasc");
    edit(
        &ws,
        "services/recommendations/app.rb",
        "get \"/recommendations/:user_id\" do",
        "get \"/recs/:user_id\" do",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "now `GET /recs/:user_id`");
    assert_exact(
        &r,
        &[
            (
                "route GET /recommendations/:user_id breaking",
                &["caller EXTERNAL services/gateway services/gateway/src/clients/services.js:6"],
            ),
            (
                "route GET /recs/:user_id behaviour",
                &["route INTERNAL services/recommendations services/recommendations/app.rb:11"],
            ),
        ],
        &[
            ("services/gateway", "breaking"),
            ("services/recommendations", "breaking"),
        ],
    );
}

#[test]
fn typescript_route_path_change_without_callers_is_not_breaking() {
    let ws = repo("typescript_route_path_change_without_cal");
    edit(
        &ws,
        "services/web-bff/src/bff.controller.ts",
        "@Get('orders/:id')",
        "@Get('order/:id')",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "now `GET /bff/order/:id`");
    assert_exact(
        &r,
        &[
            (
                "route GET /bff/order/:id behaviour",
                &["route INTERNAL services/web-bff services/web-bff/src/bff.controller.ts:12"],
            ),
            ("route GET /bff/orders/:id behaviour", &[]),
        ],
        &[("services/web-bff", "behaviour")],
    );
}

#[test]
fn javascript_route_path_change_without_callers_is_not_breaking() {
    let ws = repo("javascript_route_path_change_without_cal");
    edit(
        &ws,
        "services/gateway/src/server.js",
        "app.get('/api/shipments/:orderId'",
        "app.get('/api/shipment/:orderId'",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "now `GET /api/shipment/:orderId`");
    assert_exact(
        &r,
        &[
            (
                "route GET /api/shipment/:orderId behaviour",
                &["route INTERNAL services/gateway services/gateway/src/server.js:30"],
            ),
            ("route GET /api/shipments/:orderId behaviour", &[]),
        ],
        &[("services/gateway", "behaviour")],
    );
}

#[test]
fn go_route_path_change_without_callers_is_not_breaking() {
    let ws = repo("go_route_path_change_without_callers_is_");
    edit(
        &ws,
        "services/orders/main.go",
        "\"/healthz\"",
        "\"/health\"",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "now `ANY /health`");
    assert_exact(
        &r,
        &[
            (
                "route ANY /health behaviour",
                &["route INTERNAL services/orders services/orders/main.go:52"],
            ),
            ("route ANY /healthz behaviour", &[]),
        ],
        &[("services/orders", "behaviour")],
    );
}

#[test]
fn eshop_corpus_rpc_rename_breaks_the_csharp_callers() {
    let Some(ws) = corpus_repo("eshop", "eshop_corpus_rpc_rename_breaks_the_cshar") else {
        return;
    };
    edit(
        &ws,
        "src/Basket.API/Proto/basket.proto",
        "rpc GetBasket(",
        "rpc FetchBasket(",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "renamed to `Basket.FetchBasket`");
    assert_exact(
        &r,
        &[
            (
                "rpc Basket.FetchBasket behaviour",
                &["client EXTERNAL src/WebApp src/WebApp/Extensions/Extensions.cs:31"],
            ),
            (
                "rpc Basket.GetBasket breaking",
                &[
                    "caller EXTERNAL src/ClientApp src/ClientApp/Services/Basket/BasketService.cs:46",
                    "caller EXTERNAL src/WebApp src/WebApp/Services/BasketService.cs:11",
                ],
            ),
        ],
        &[
            ("src/Basket.API", "breaking"),
            ("src/ClientApp", "breaking"),
            ("src/WebApp", "breaking"),
        ],
    );
}

#[test]
fn eshop_corpus_minimal_api_route_path_change_breaks_the_clients() {
    let Some(ws) = corpus_repo("eshop", "eshop_corpus_minimal_api_route_path_chan") else {
        return;
    };
    edit(
        &ws,
        "src/Catalog.API/Apis/CatalogApi.cs",
        "api.MapGet(\"/items/{id:int}\", GetItemById)",
        "api.MapGet(\"/item/{id:int}\", GetItemById)",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "now `GET /api/catalog/item/{id:int}`");
    assert_exact(
        &r,
        &[
            (
                "route GET /api/catalog/item/{id:int} behaviour",
                &["route INTERNAL src/Catalog.API src/Catalog.API/Apis/CatalogApi.cs:36"],
            ),
            (
                "route GET /api/catalog/items/{id:int} breaking",
                &[
                    "caller EXTERNAL src/ClientApp src/ClientApp/Services/Catalog/CatalogService.cs:56",
                    "caller EXTERNAL src/HybridApp src/HybridApp/Services/CatalogService.cs:16",
                    "caller EXTERNAL src/WebAppComponents src/WebAppComponents/Services/CatalogService.cs:14",
                ],
            ),
        ],
        &[
            ("src/Catalog.API", "breaking"),
            ("src/ClientApp", "breaking"),
            ("src/HybridApp", "breaking"),
            ("src/WebAppComponents", "breaking"),
        ],
    );
}

#[test]
fn eshop_corpus_integration_event_change_reaches_its_consumers() {
    let Some(ws) = corpus_repo("eshop", "eshop_corpus_integration_event_change_re") else {
        return;
    };
    edit(
        &ws,
        "src/Ordering.API/Application/IntegrationEvents/Events/OrderStatusChangedToPaidIntegrationEvent.cs",
        "    public string BuyerName { get; }",
        "    public string BuyerFullName { get; }",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(
        &r,
        "payload type `OrderStatusChangedToPaidIntegrationEvent` changed",
    );
    // The consumers are the handlers' `Handle` methods (registered in each service's
    // Extensions.cs).
    assert_exact(
        &r,
        &[(
            "topic OrderStatusChangedToPaidIntegrationEvent behaviour",
            &[
                "consumer EXTERNAL src/Catalog.API src/Catalog.API/IntegrationEvents/EventHandling/OrderStatusChangedToPaidIntegrationEventHandler.cs:8",
                "consumer EXTERNAL src/WebApp src/WebApp/Services/OrderStatus/IntegrationEvents/EventHandling/OrderStatusChangedToPaidIntegrationEventHandler.cs:10",
                "consumer EXTERNAL src/Webhooks.API src/Webhooks.API/IntegrationEvents/OrderStatusChangedToPaidIntegrationEventHandler.cs:8",
                "producer INTERNAL src/Ordering.API src/Ordering.API/Application/DomainEventHandlers/OrderStatusChangedToPaidDomainEventHandler.cs:32",
            ],
        )],
        &[
            ("src/Catalog.API", "behaviour"),
            ("src/Ordering.API", "behaviour"),
            ("src/WebApp", "behaviour"),
            ("src/Webhooks.API", "behaviour"),
        ],
    );
}

#[test]
fn robot_shop_corpus_php_route_path_change_breaks_the_callers_behind_the_gateway() {
    let Some(ws) = corpus_repo("robot-shop", "robot_shop_corpus_php_route_path_change_") else {
        return;
    };
    edit(
        &ws,
        "ratings/html/src/Controller/RatingsApiController.php",
        "@Route(\"/fetch/{sku}\", methods={\"GET\"})",
        "@Route(\"/get/{sku}\", methods={\"GET\"})",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "now `GET /api/get/{sku}`");
    assert_exact(
        &r,
        &[
            (
                "route GET /api/fetch/{sku} breaking",
                &[
                    "caller EXTERNAL load-gen load-gen/robot-shop.py:69",
                    "caller EXTERNAL web web/static/js/controller.js:254",
                ],
            ),
            (
                "route GET /api/get/{sku} behaviour",
                &["route INTERNAL ratings ratings/html/src/Controller/RatingsApiController.php:76"],
            ),
        ],
        &[
            ("load-gen", "breaking"),
            ("ratings", "breaking"),
            ("web", "breaking"),
        ],
    );
}

#[test]
fn retail_corpus_go_route_path_change_breaks_the_java_caller() {
    let Some(ws) = corpus_repo(
        "retail-store-sample-app",
        "retail_corpus_go_route_path_change_break",
    ) else {
        return;
    };
    edit(
        &ws,
        "src/catalog/main.go",
        "catalog.GET(\"/products/:id\", c.GetProduct)",
        "catalog.GET(\"/product/:id\", c.GetProduct)",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "now `GET /catalog/product/:id`");
    assert_exact(
        &r,
        &[
            (
                "route GET /catalog/product/:id behaviour",
                &["route INTERNAL src/catalog src/catalog/main.go:134"],
            ),
            (
                "route GET /catalog/products/:id breaking",
                &[
                    "caller EXTERNAL src/ui src/ui/src/main/java/com/amazon/sample/ui/services/catalog/KiotaCatalogService.java:75",
                ],
            ),
        ],
        &[("src/catalog", "breaking"), ("src/ui", "breaking")],
    );
}

#[test]
fn retail_corpus_go_handler_in_another_file_reaches_the_java_caller() {
    let Some(ws) = corpus_repo(
        "retail-store-sample-app",
        "retail_corpus_go_handler_in_another_file",
    ) else {
        return;
    };
    edit(
        &ws,
        "src/catalog/controller/controller.go",
        "\tid := ctx.Param(\"id\")\n",
        "\tid := strings.TrimSpace(ctx.Param(\"id\"))\n",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(
        &r,
        "handler body changed (`GetProduct` at src/catalog/controller/controller.go:102",
    );
    assert_exact(
        &r,
        &[(
            "route GET /catalog/products/:id behaviour",
            &[
                "caller EXTERNAL src/ui src/ui/src/main/java/com/amazon/sample/ui/services/catalog/KiotaCatalogService.java:75",
                "route INTERNAL src/catalog src/catalog/main.go:134",
            ],
        )],
        &[("src/catalog", "behaviour"), ("src/ui", "behaviour")],
    );
}

/// Go: a line deep in a gRPC handler's body changes in place (no line moves). The handler is
/// its whole method, not a smaller declaration on its first line.
#[test]
fn go_handler_change_deep_in_the_body_is_still_the_handler() {
    let ws = repo("chg-deep-body");
    edit(
        &ws,
        "services/orders/server.go",
        "\"encode order event: %w\"",
        "\"encode the order event: %w\"",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "handler body changed: `orderServer.CreateOrder`");
    assert_exact(
        &r,
        &[(
            "rpc OrderService.CreateOrder behaviour",
            &[
                "client EXTERNAL services/gateway services/gateway/src/clients/orders.js:17",
                "handler INTERNAL services/orders services/orders/server.go:25",
            ],
        )],
        &[
            ("services/gateway", "behaviour"),
            ("services/orders", "behaviour"),
        ],
    );
}

/// Commits what is there as the new base: `main` moves to it (the branch stays checked out).
fn commit_as_base(ws: &Path) {
    git(ws, &["add", "-A"]);
    git(ws, &["commit", "-q", "--allow-empty", "-m", "new base"]);
    git(ws, &["branch", "-f", "main", "HEAD"]);
}

/// A removed line whose text starts with `-- ` is `--- …` in the diff, and an added `++ …` is
/// `+++ …`: lines of the hunk, not file headers. The field removed beside them still breaks.
#[test]
fn removed_lines_that_read_like_diff_headers_hide_no_breaking_change() {
    let ws = repo("chg-dashdash");
    let proto = "contracts/orders/v1/orders.proto";
    edit(
        &ws,
        proto,
        "  int64 total_cents = 5;\n",
        "/*\n-- money in cents\n*/\n  int64 total_cents = 5;\n",
    );
    commit_as_base(&ws);
    edit(
        &ws,
        proto,
        "/*\n-- money in cents\n*/\n  int64 total_cents = 5;\n",
        "/*\n++ b/orders.proto\n*/\n",
    );
    commit(&ws);
    let r = impact_json(&ws);
    let files: Vec<(&str, &str)> = r["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["status"].as_str().unwrap()))
        .collect();
    assert_eq!(files, vec![(proto, "modified")], "{r:#}");
    assert_eq!(r["breaking"], true, "{r:#}");
    let get = contract(&r, "rpc", "OrderService.GetOrder");
    assert_eq!(get["risk"], "breaking");
    assert!(
        get["change"]
            .as_str()
            .unwrap()
            .contains("Order.total_cents"),
        "{get:#}"
    );
}

/// A `.proto` whose path git quotes (a space, a quote, a backslash, a non-ASCII letter): the
/// name is unquoted, the file found, its removed field breaking.
#[test]
fn a_quoted_path_is_unquoted() {
    let ws = repo("chg-quoted");
    let proto = "contracts/orders/v1/ord \"er\\s\" \u{e9}.proto";
    std::fs::rename(ws.join("contracts/orders/v1/orders.proto"), ws.join(proto)).unwrap();
    commit_as_base(&ws);
    edit(&ws, proto, "  int64 total_cents = 5;\n", "");
    commit(&ws);
    for (quote, prefix) in [("false", "mnemonicPrefix"), ("true", "noprefix")] {
        git(&ws, &["config", "core.quotePath", quote]);
        // A repository's diff prefixes do not change what is read.
        git(&ws, &["config", &format!("diff.{prefix}"), "true"]);
        let r = impact_json(&ws);
        let files: Vec<(&str, &str)> = r["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["path"].as_str().unwrap(), f["status"].as_str().unwrap()))
            .collect();
        assert_eq!(files, vec![(proto, "modified")], "{r:#}");
        let get = contract(&r, "rpc", "OrderService.GetOrder");
        assert_eq!(get["risk"], "breaking", "{r:#}");
    }
}

/// A repository nested in the workspace that has no commit by the base's name is left out with
/// a line saying so; the others are still compared. When no repository has it, it is an error.
#[test]
fn a_nested_repository_without_the_base_is_skipped() {
    let ws = example_copy("chg-nested");
    let nested = ws.join("services/pricing");
    git(&nested, &["init", "-q", "-b", "trunk"]);
    git(&nested, &["add", "-A"]);
    git(&nested, &["commit", "-q", "-m", "pricing"]);
    std::fs::write(ws.join(".gitignore"), "services/pricing/\n").unwrap();
    git(&ws, &["init", "-q", "-b", "main"]);
    git(&ws, &["add", "-A"]);
    git(&ws, &["commit", "-q", "-m", "base"]);
    git(&ws, &["checkout", "-q", "-b", "feature"]);
    edit(
        &ws,
        "contracts/orders/v1/orders.proto",
        "  int64 total_cents = 5;\n",
        "",
    );
    commit(&ws);
    let (code, out) = impact(&ws, &["--base", "main", "--format", "json"]);
    assert_eq!(code, Some(0), "{out}");
    let r: Value = serde_json::from_str(&out).unwrap();
    let bases: Vec<&str> = r["bases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_str().unwrap())
        .collect();
    assert!(
        bases.contains(&"`services/pricing`: base `main` not found there; not compared"),
        "{bases:?}"
    );
    assert!(
        bases
            .iter()
            .any(|b| b.starts_with("`.`: base `main`, commit")),
        "{bases:?}"
    );
    assert_eq!(r["breaking"], true, "{r:#}");
    contract(&r, "rpc", "OrderService.GetOrder");
    // The Markdown says it too.
    let (code, md) = impact(&ws, &["--base", "main"]);
    assert_eq!(code, Some(0), "{md}");
    assert!(
        md.contains("- `services/pricing`: base `main` not found there; not compared"),
        "{md}"
    );
    // A base no repository has is still an error.
    let (code, out) = impact(&ws, &["--base", "no-such-branch", "--format", "json"]);
    assert_eq!(code, Some(2), "{out}");
}

/// Rewrites a file of the workspace with lone CRs (old Mac line ends) for its line feeds.
fn to_cr_only(ws: &Path, path: &str) {
    let p = ws.join(path);
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(&p, text.replace('\n', "\r")).unwrap();
}

/// A `.proto` with lone-CR line ends is one line to git: converted to them, it changes
/// nothing; edited with them, the verdict is the one of the edit (no false BREAKING).
#[test]
fn cr_only_line_ends_give_the_verdict_of_the_edit() {
    let ws = repo("chg-cr-only");
    let proto = "contracts/orders/v1/orders.proto";
    to_cr_only(&ws, proto);
    commit(&ws);
    let r = impact_json(&ws);
    assert_eq!(r["breaking"], false, "{r:#}");
    assert_eq!(r["contracts"], json!([]), "{r:#}");
    assert_eq!(r["declarations"], json!([]), "{r:#}");
    // Lone CRs on both sides: a field added is wire-compatible.
    commit_as_base(&ws);
    edit(
        &ws,
        proto,
        "  string currency = 6;\r",
        "  string currency = 6;\r  string note = 7;\r",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_eq!(r["breaking"], false, "{r:#}");
    let ranges = &r["files"][0]["ranges"];
    assert_eq!(ranges, &json!([[36, 36]]), "{r:#}");
    // And a field removed is breaking, on the field.
    commit_as_base(&ws);
    edit(&ws, proto, "  int64 total_cents = 5;\r", "");
    commit(&ws);
    let r = impact_json(&ws);
    assert_eq!(r["breaking"], true, "{r:#}");
    let get = contract(&r, "rpc", "OrderService.GetOrder");
    assert!(
        get["change"]
            .as_str()
            .unwrap()
            .contains("Order.total_cents"),
        "{get:#}"
    );
    assert!(
        !r["contracts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["change"].as_str().unwrap().contains("deleted")
                && c["kind"] == "rpc"
                && c["change"].as_str().unwrap().starts_with("RPC")),
        "{r:#}"
    );
}

/// Go and JavaScript: lines deleted right after a handler's closing brace (a blank line and the
/// comment of the next function) change no handler body.
#[test]
fn lines_deleted_right_after_a_handler_are_no_handler_change() {
    let ws = repo("chg-after-body");
    edit(
        &ws,
        "services/orders/server.go",
        "\treturn &pb.CreateOrderResponse{Order: order}, nil\n}\n\n// GetOrder returns one stored order.\n",
        "\treturn &pb.CreateOrderResponse{Order: order}, nil\n}\n",
    );
    edit(
        &ws,
        "services/gateway/src/server.js",
        "  res.json(await orders.getOrder(req.params.id));\n}\n\n",
        "  res.json(await orders.getOrder(req.params.id));\n}\n",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_eq!(r["contracts"], json!([]), "{r:#}");
    assert_eq!(r["breaking"], false);
    assert!(
        !r["declarations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["name"].as_str().unwrap().contains("CreateOrder")
                || d["name"] == "getOrder"),
        "{r:#}"
    );
}

/// JavaScript: a route block moved (same text) to another place of its file is no change, for a
/// route naming its handler and for one with its handler written in place.
#[test]
fn a_route_block_moved_in_its_file_is_no_change() {
    let ws = repo("chg-route-moved");
    let server = "services/gateway/src/server.js";
    edit(
        &ws,
        server,
        "app.get('/api/shipments/:orderId', getShipment);\n",
        "app.get('/api/shipments/:orderId', getShipment);\napp.get('/api/health', (req, res) => {\n  res.json({ ok: true });\n});\n",
    );
    commit_as_base(&ws);
    edit(&ws, server, "app.get('/api/orders/:id', getOrder);\n", "");
    edit(
        &ws,
        server,
        "app.get('/api/health', (req, res) => {\n  res.json({ ok: true });\n});\n",
        "app.get('/api/orders/:id', getOrder);\n",
    );
    edit(
        &ws,
        server,
        "app.post('/api/orders', createOrder);\n",
        "app.get('/api/health', (req, res) => {\n  res.json({ ok: true });\n});\n\napp.post('/api/orders', createOrder);\n",
    );
    commit(&ws);
    let r = impact_json(&ws);
    assert_eq!(r["contracts"], json!([]), "{r:#}");
    assert_eq!(risk_of(&r, "services/gateway"), "internal", "{r:#}");
}

/// JavaScript: routes rewritten in one hunk, one path renamed among them: the old route's row
/// names its new path only, not the routes of the hunk that kept theirs.
#[test]
fn a_renamed_route_path_names_only_its_new_path() {
    let ws = repo("chg-route-renamed");
    edit(
        &ws,
        "services/gateway/src/server.js",
        "app.post('/api/orders', createOrder);\napp.get('/api/orders/:id', getOrder);\napp.get('/api/recommendations/:userId', getRecommendations);\n",
        "app.get('/api/recommendations/:userId', getRecommendations);\napp.get('/api/order-by-id/:id', getOrder);\napp.post('/api/orders', createOrder);\n",
    );
    commit(&ws);
    let r = impact_json(&ws);
    let old = contract(&r, "route", "GET /api/orders/:id");
    assert_eq!(
        old["change"],
        "route path changed (now `GET /api/order-by-id/:id`); no caller of the old path found",
        "{r:#}"
    );
    let names: BTreeSet<&str> = r["contracts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["GET /api/orders/:id", "GET /api/order-by-id/:id"]
            .into_iter()
            .collect(),
        "{r:#}"
    );
}

/// Python (pika): a producer call over several lines changed on a later line is a change of
/// that producer.
#[test]
fn a_multi_line_producer_changed_on_a_later_line_is_a_producer_change() {
    let ws = repo("chg-multiline-producer");
    let path = "services/inventory/inventory/audit.py";
    std::fs::write(
        ws.join(path),
        "import pika\n\n\ndef audit(ch, body):\n    ch.basic_publish(exchange=\"shop\",\n                     routing_key=\"inventory.audit\",\n                     body=body)\n",
    )
    .unwrap();
    commit_as_base(&ws);
    edit(&ws, path, "body=body)", "body=body.encode(\"utf-8\"))");
    commit(&ws);
    let r = impact_json(&ws);
    let t = contract(&r, "topic", "inventory.audit");
    assert!(
        t["change"]
            .as_str()
            .unwrap()
            .contains(&format!("producer changed at {path}:5")),
        "{t:#}"
    );
    assert_eq!(risk_of(&r, "services/inventory"), "behaviour", "{r:#}");
}

/// Python: a class constant naming a topic (`class Auditor: ROUTING_KEY = "…"`), read as
/// `self.ROUTING_KEY` or `Q.ROUTING_KEY` at the producer, changes value: a topic rename that
/// leaves the consumers of the old name without a producer, not "internal only".
#[test]
fn python_class_constant_topic_rename_orphans_the_consumers() {
    let ws = repo("chg-class-constant");
    std::fs::write(
        ws.join("services/inventory/inventory/audit.py"),
        "import pika\n\n\nclass Q:\n    ROUTING_KEY = \"orders.audit\"\n\n\nclass Auditor:\n    ROUTING_KEY = \"inventory.audit\"\n\n    def audit(self, ch, body):\n        ch.basic_publish(exchange=\"\", routing_key=self.ROUTING_KEY, body=body)\n\n\ndef audit(ch, body):\n    ch.basic_publish(exchange=\"\", routing_key=Q.ROUTING_KEY, body=body)\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("services/notifications/audit_consumer.py"),
        "import pika\n\n\ndef listen(ch, cb):\n    ch.basic_consume(queue=\"orders.audit\", on_message_callback=cb)\n    ch.basic_consume(queue=\"inventory.audit\", on_message_callback=cb)\n",
    )
    .unwrap();
    commit_as_base(&ws);
    let path = "services/inventory/inventory/audit.py";
    edit(&ws, path, "\"inventory.audit\"", "\"inventory.audit.v2\"");
    edit(&ws, path, "\"orders.audit\"", "\"orders.audit.v2\"");
    commit(&ws);
    let r = impact_json(&ws);
    assert_why(&r, "(constant `Auditor.ROUTING_KEY`)");
    assert_exact(
        &r,
        &[
            (
                "topic inventory.audit breaking",
                &[
                    "consumer EXTERNAL services/notifications services/notifications/audit_consumer.py:6",
                ],
            ),
            (
                "topic inventory.audit.v2 behaviour",
                &["producer INTERNAL services/inventory services/inventory/inventory/audit.py:12"],
            ),
            (
                "topic orders.audit breaking",
                &[
                    "consumer EXTERNAL services/notifications services/notifications/audit_consumer.py:5",
                ],
            ),
            (
                "topic orders.audit.v2 behaviour",
                &["producer INTERNAL services/inventory services/inventory/inventory/audit.py:16"],
            ),
        ],
        &[
            ("services/inventory", "breaking"),
            ("services/notifications", "breaking"),
        ],
    );
}

/// A message no RPC carries is owned by the service serving its file's RPCs; a package row
/// points at the changed code (path:line).
#[test]
fn message_rows_have_an_owning_service_and_package_rows_a_location() {
    let ws = repo("chg-message-owner");
    edit(
        &ws,
        "contracts/orders/v1/orders.proto",
        "message GetOrderRequest {\n",
        "message OrderNote {\n  string text = 1;\n}\n\nmessage GetOrderRequest {\n",
    );
    commit(&ws);
    let r = impact_json(&ws);
    let note = contract(&r, "message", "OrderNote");
    assert_eq!(note["owner"], "services/orders", "{r:#}");
    assert_eq!(
        note["location"], "contracts/orders/v1/orders.proto:48",
        "{r:#}"
    );
    assert_eq!(risk_of(&r, "."), "none", "{r:#}");

    let Some(ws) = corpus_repo("eshop", "chg-package-location") else {
        return;
    };
    edit(
        &ws,
        "src/EventBus/Events/IntegrationEvent.cs",
        "        CreationDate = DateTime.UtcNow;\n",
        "        CreationDate = DateTime.Now;\n",
    );
    commit(&ws);
    let r = impact_json(&ws);
    let p = contract(&r, "package", "src/EventBus");
    assert_eq!(
        p["location"], "src/EventBus/Events/IntegrationEvent.cs:8",
        "{p:#}"
    );
}

/// A file moved with `mv`, not `git mv`: git reports a deleted file and an untracked one. Read
/// as one renamed file, a move alone touches no contract, and a move with an RPC renamed in it
/// is that rename, as when the move is staged.
#[test]
fn a_file_moved_without_git_add_is_a_rename() {
    let ws = repo("chg-unstaged-move");
    let (from, to) = (
        "contracts/orders/v1/orders.proto",
        "contracts/orders/v1/orders_api.proto",
    );
    std::fs::rename(ws.join(from), ws.join(to)).unwrap();
    let files = |r: &Value| -> Vec<(String, String)> {
        r["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["path"].as_str().unwrap().to_string(),
                    f["status"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let r = impact_json(&ws);
    assert_eq!(
        files(&r),
        vec![(to.to_string(), format!("renamed from `{from}`"))],
        "{r:#}"
    );
    assert_eq!(r["breaking"], false, "{r:#}");
    assert_eq!(r["contracts"], json!([]), "{r:#}");
    edit(
        &ws,
        to,
        "rpc GetOrder(GetOrderRequest)",
        "rpc FetchOrder(GetOrderRequest)",
    );
    let r = impact_json(&ws);
    assert_eq!(files(&r).len(), 1, "{r:#}");
    assert_eq!(r["breaking"], true, "{r:#}");
    assert_why(&r, "renamed to `OrderService.FetchOrder`");
    // The old name's line is a line of the base: at the old path.
    let gone = contract(&r, "rpc", "OrderService.GetOrder");
    assert_eq!(gone["location"], format!("{from}:14 (base)"), "{gone:#}");
    // A file of another language, or mostly rewritten, stays a deletion and an addition.
    std::fs::write(ws.join(to), "syntax = \"proto3\";\npackage other.v1;\n").unwrap();
    let r = impact_json(&ws);
    assert_eq!(files(&r).len(), 2, "{r:#}");
}

/// An LF file with a stray lone CR (in a comment): the index counts it as a line break, git
/// does not, so git's hunks are moved past it. The changed signature is the second function's,
/// not the line of the first one that git's number points at in the index's count.
#[test]
fn a_stray_cr_does_not_shift_the_changed_declaration() {
    let ws = temp_dir("chg-stray-cr");
    std::fs::create_dir_all(ws.join("svc")).unwrap();
    let base = "# note\r stray\ndef first():\n    return 1\ndef second():\n    return 2\n";
    std::fs::write(ws.join("svc/app.py"), base).unwrap();
    git(&ws, &["init", "-q", "-b", "main"]);
    git(&ws, &["add", "-A"]);
    git(&ws, &["commit", "-q", "-m", "base"]);
    git(&ws, &["checkout", "-q", "-b", "feature"]);
    std::fs::write(
        ws.join("svc/app.py"),
        base.replace("def second():", "def second(x=0):"),
    )
    .unwrap();
    commit(&ws);
    let r = impact_json(&ws);
    let decls: Vec<(String, u64)> = r["declarations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["name"].as_str().unwrap().to_string(),
                d["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(decls, vec![("second".to_string(), 5)], "{r:#}");
}
