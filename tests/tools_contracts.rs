//! Acceptance tests of issue 6 on the example workspace, through the real binary over stdio:
//! `analyze_grpc` (every handler and caller of the truth, target forms, not-traced names, "may
//! call", tests left out, explicit zeros), `analyze_impact` (topic chains, depth, routes,
//! INTERNAL/EXTERNAL, topic name normalisation, one-sided topics, paging) and `visualize_mesh`
//! (every service edge of the truth, Mermaid, standalone HTML, zoom, folding, escaping).
//!
//! Two servers answer every test of this file: one on `examples/polyglot-shop` as shipped, one
//! on a temp copy extended with what the example lacks (an RPC whose name contains another, a
//! client built but never called, a topic with only a producer and one with only a consumer,
//! a service directory whose name needs escaping). A failure names the missing or extra fact.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, OnceLock};

use common::{Session, example_copy, example_dir, shared_session};
use serde_json::{Value, json};

static EXAMPLE: OnceLock<Mutex<Session>> = OnceLock::new();
static EXTENDED: OnceLock<Mutex<Session>> = OnceLock::new();

fn example() -> MutexGuard<'static, Session> {
    shared_session(&EXAMPLE, example_dir)
}

/// The name of the extra service root whose label needs escaping in every format.
const ODD_ROOT: &str = "services/odd \"quoted\" <svc> #1";

fn write(ws: &std::path::Path, path: &str, text: &str) {
    let p = ws.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A copy of the example with the cases it does not have.
fn extended_workspace() -> PathBuf {
    let ws = example_copy("contracts-ext");
    write(
        &ws,
        "contracts/orders/v1/history.proto",
        "syntax = \"proto3\";\n\npackage acme.orders.v1;\n\n// Past orders of a customer; nobody serves or calls it yet.\nservice OrderHistoryService {\n  rpc GetOrderHistory(GetOrderHistoryRequest) returns (GetOrderHistoryResponse);\n}\n\nmessage GetOrderHistoryRequest {\n  string customer_id = 1;\n}\n\nmessage GetOrderHistoryResponse {\n  repeated string order_ids = 1;\n}\n",
    );
    write(
        &ws,
        "services/gateway/src/clients/orders-admin.js",
        "// An admin client of OrderService: built here, its calls are made elsewhere at run time.\nconst grpc = require('@grpc/grpc-js');\nconst protoLoader = require('@grpc/proto-loader');\n\nconst definition = protoLoader.loadSync('proto/orders.proto', { keepCase: false });\nconst ordersPackage = grpc.loadPackageDefinition(definition).acme.orders.v1;\n\nconst adminClient = new ordersPackage.OrderService('orders-admin:50051', grpc.credentials.createInsecure());\n\nmodule.exports = { adminClient };\n",
    );
    write(
        &ws,
        "services/inventory/inventory/audit.py",
        "\"\"\"Announces stock audits; nobody listens yet.\"\"\"\n\n\nclass AuditEvents:\n    def __init__(self, producer) -> None:\n        self._producer = producer\n\n    async def audited(self, sku: str) -> None:\n        await self._producer.send_and_wait(\"inventory.audited\", sku.encode(\"utf-8\"))\n",
    );
    write(
        &ws,
        "services/recommendations/lib/cart_events.rb",
        "require \"kafka\"\n\nmodule Recommendations\n  # Learns from abandoned carts; nothing in the shop publishes them yet.\n  class CartEvents\n    def run(kafka)\n      consumer = kafka.consumer(group_id: \"recommendations-carts\")\n      consumer.subscribe(\"carts.abandoned\")\n      consumer.each_message { |m| m }\n    end\n  end\nend\n",
    );
    write(
        &ws,
        &format!("{ODD_ROOT}/package.json"),
        "{\"name\": \"odd-svc\", \"version\": \"1.0.0\"}\n",
    );
    write(
        &ws,
        &format!("{ODD_ROOT}/src/odd.js"),
        "async function fetchStock(sku) {\n  return fetch(`http://inventory:8000/stock/${sku}`);\n}\nmodule.exports = { fetchStock };\n",
    );
    ws
}

fn extended() -> MutexGuard<'static, Session> {
    shared_session(&EXTENDED, extended_workspace)
}

fn truth() -> Value {
    let text = std::fs::read_to_string(example_dir().with_extension("truth.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// The language a path's extension implies, as the tools name it.
fn lang_of(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap() {
        "go" => "go",
        "java" => "java",
        "kt" => "kotlin",
        "cs" => "csharp",
        "py" => "python",
        "cc" | "h" | "cpp" => "cpp",
        "rs" => "rust",
        "rb" => "ruby",
        "js" => "javascript",
        "ts" => "typescript",
        other => panic!("no language for .{other}"),
    }
}

/// Missing and extra elements of `got` against `want`, for a failure message.
fn diff(want: &BTreeSet<String>, got: &BTreeSet<String>) -> String {
    let missing: Vec<_> = want.difference(got).collect();
    let extra: Vec<_> = got.difference(want).collect();
    if missing.is_empty() && extra.is_empty() {
        String::new()
    } else {
        format!("missing {missing:?}, extra {extra:?}")
    }
}

// ---------------------------------------------------------------------------------------------
// analyze_grpc answers, parsed
// ---------------------------------------------------------------------------------------------

/// One cited place: `  - lang: `label` at `path:line` _(…confidence)_`.
#[derive(Debug, Clone, PartialEq)]
struct Site {
    lang: String,
    label: String,
    at: String,
    confidence: String,
    service_level: bool,
}

#[derive(Debug, Default)]
struct ServiceTrace {
    def: String,
    copies: Vec<String>,
    servers: Vec<Site>,
    zero_servers: bool,
    may_call: Vec<Site>,
    /// Every client the service's client list shows.
    clients: Vec<Site>,
}

#[derive(Debug, Default)]
struct RpcTrace {
    def: String,
    handlers: Vec<Site>,
    calls: Vec<Site>,
    may_call: Vec<Site>,
    zero_handlers: bool,
    zero_calls: bool,
}

#[derive(Debug, Default)]
struct GrpcAnswer {
    services: BTreeMap<String, ServiceTrace>,
    rpcs: BTreeMap<String, RpcTrace>,
    not_traced: Option<String>,
    tests_left_out: usize,
    wire: Option<String>,
}

#[derive(Clone, Copy)]
enum List {
    None,
    Servers,
    ServiceMayCall,
    ServiceClients,
    Handlers,
    Calls,
    RpcMayCall,
}

fn parse_site(line: &str) -> Site {
    // A client line ends with a note after ` — `.
    let line = line.split(" — ").next().unwrap();
    let rest = line.trim_start().strip_prefix("- ").unwrap();
    let (lang, rest) = rest.split_once(": ").unwrap();
    let label = rest.split('`').nth(1).unwrap().to_string();
    let at = rest
        .split("` at `")
        .nth(1)
        .and_then(|r| r.split('`').next())
        .unwrap_or_else(|| panic!("no location in {line:?}"))
        .to_string();
    let tag = rest
        .rsplit_once("_(")
        .map(|(_, t)| t.trim_end_matches(")_"))
        .unwrap_or_else(|| panic!("no confidence in {line:?}"));
    Site {
        lang: lang.to_string(),
        label,
        at,
        confidence: tag.rsplit(", ").next().unwrap().to_string(),
        service_level: tag.contains("service-level client"),
    }
}

fn parse_grpc(text: &str) -> GrpcAnswer {
    let mut a = GrpcAnswer::default();
    let mut service = String::new();
    let mut rpc: Option<String> = None;
    let mut list = List::None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("### Service `") {
            let (fqn, def) = rest.split_once("` — `").unwrap();
            service = fqn.to_string();
            rpc = None;
            list = List::None;
            a.services.insert(
                service.clone(),
                ServiceTrace {
                    def: def.trim_end_matches('`').to_string(),
                    ..ServiceTrace::default()
                },
            );
            continue;
        }
        if line.starts_with("### Wire-format check") {
            a.wire = Some(text[text.find(line).unwrap()..].to_string());
            break;
        }
        if let Some(rest) = line.strip_prefix("#### `") {
            let name = rest.trim_end_matches('`').to_string();
            a.rpcs.insert(name.clone(), RpcTrace::default());
            rpc = Some(name);
            list = List::None;
            continue;
        }
        if line.starts_with("_Not traced:") {
            a.not_traced = Some(line.to_string());
            continue;
        }
        if line.contains("in test files left out") {
            let n = line.trim_start_matches('_').split(' ').next().unwrap();
            a.tests_left_out = n.parse().unwrap();
            continue;
        }
        if line.starts_with("  - ") && !line.contains("…and") {
            let site = parse_site(line);
            let svc = a.services.get_mut(&service);
            let r = rpc.as_ref().and_then(|r| a.rpcs.get_mut(r));
            match (list, svc, r) {
                (List::Servers, Some(s), _) => s.servers.push(site),
                (List::ServiceMayCall, Some(s), _) => s.may_call.push(site),
                // The service's client list: those with no call resolved in their file are
                // the ones that may call any RPC.
                (List::ServiceClients, Some(s), _) => {
                    if line.contains("no call resolved") {
                        s.may_call.push(site.clone());
                    }
                    s.clients.push(site);
                }
                (List::Handlers, _, Some(r)) => r.handlers.push(site),
                (List::Calls, _, Some(r)) => r.calls.push(site),
                (List::RpcMayCall, _, Some(r)) => r.may_call.push(site),
                _ => panic!("a site outside any list: {line:?}"),
            }
            continue;
        }
        let Some(bullet) = line.strip_prefix("- **") else {
            continue;
        };
        list = List::None;
        if let Some(copies) = bullet.strip_prefix("Copies of the contract") {
            let s = a.services.get_mut(&service).unwrap();
            s.copies = copies
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect();
        } else if bullet.starts_with("Server registrations: 0") {
            a.services.get_mut(&service).unwrap().zero_servers = true;
        } else if bullet.starts_with("Server registrations (") {
            list = List::Servers;
        } else if bullet.starts_with("May call any of its RPCs") {
            list = List::ServiceMayCall;
        } else if bullet.starts_with("Clients (") {
            list = List::ServiceClients;
        } else if let Some(def) = bullet.strip_prefix("Definition**: `") {
            let r = a.rpcs.get_mut(rpc.as_ref().unwrap()).unwrap();
            r.def = def.split('`').next().unwrap().to_string();
        } else if bullet.starts_with("Server handlers: 0") {
            a.rpcs.get_mut(rpc.as_ref().unwrap()).unwrap().zero_handlers = true;
        } else if bullet.starts_with("Server handlers (") {
            list = List::Handlers;
        } else if bullet.starts_with("Client call sites: 0 found") {
            a.rpcs.get_mut(rpc.as_ref().unwrap()).unwrap().zero_calls = true;
        } else if bullet.starts_with("Client call sites: 0 resolved** — but") {
            a.rpcs.get_mut(rpc.as_ref().unwrap()).unwrap().zero_calls = true;
            list = List::RpcMayCall;
        } else if bullet.starts_with("Client call sites: 0 resolved") {
            a.rpcs.get_mut(rpc.as_ref().unwrap()).unwrap().zero_calls = true;
        } else if bullet.starts_with("Client call sites (") {
            list = List::Calls;
        } else if bullet.starts_with("May call (") {
            list = List::RpcMayCall;
        }
    }
    a
}

fn grpc(s: &mut Session, args: Value) -> (String, GrpcAnswer) {
    let text = s.ok("analyze_grpc", args);
    let parsed = parse_grpc(&text);
    for r in parsed.rpcs.values() {
        for site in r.handlers.iter().chain(&r.calls).chain(&r.may_call) {
            check_site(site, &text);
        }
    }
    for sv in parsed.services.values() {
        for site in sv.servers.iter().chain(&sv.may_call) {
            check_site(site, &text);
        }
    }
    (text, parsed)
}

fn check_site(site: &Site, text: &str) {
    let path = site.at.rsplit_once(':').unwrap().0;
    assert_eq!(
        site.lang,
        lang_of(path),
        "{}: labelled {} in\n{text}",
        site.at,
        site.lang
    );
    assert!(
        ["exact", "heuristic", "ambiguous"].contains(&site.confidence.as_str()),
        "{}: confidence {:?}",
        site.at,
        site.confidence
    );
}

fn ats(sites: &[Site]) -> BTreeSet<String> {
    sites.iter().map(|s| s.at.clone()).collect()
}

fn short_name(fqn: &str) -> &str {
    fqn.rsplit('.').next().unwrap()
}

// ---------------------------------------------------------------------------------------------
// analyze_grpc
// ---------------------------------------------------------------------------------------------

#[test]
fn grpc_traces_every_handler_server_and_call_of_the_truth() {
    let mut s = example();
    let mut languages = BTreeSet::new();
    for c in truth()["grpc"].as_array().unwrap() {
        let fqn = c["fqn"].as_str().unwrap();
        let svc = short_name(fqn);
        let (text, a) = grpc(&mut s, json!({"target": svc}));
        let st = a
            .services
            .get(fqn)
            .unwrap_or_else(|| panic!("{svc}: service {fqn} not traced:\n{text}"));
        assert_eq!(
            st.def,
            c["definition"].as_str().unwrap(),
            "{svc}: definition"
        );
        let copies: BTreeSet<String> = strs(&c["copies"])
            .into_iter()
            .filter(|p| *p != c["definition"])
            .collect();
        let got: BTreeSet<String> = st.copies.iter().cloned().collect();
        assert!(
            diff(&copies, &got).is_empty(),
            "{svc} copies: {}",
            diff(&copies, &got)
        );
        let servers: BTreeSet<String> = strs(&c["servers"]).into_iter().collect();
        let d = diff(&servers, &ats(&st.servers));
        assert!(d.is_empty(), "{svc} server registrations: {d}\n{text}");
        for (rpc, def) in c["rpcs"].as_object().unwrap() {
            let full = format!("{svc}.{rpc}");
            let r = a
                .rpcs
                .get(&full)
                .unwrap_or_else(|| panic!("{full} not traced:\n{text}"));
            assert_eq!(&r.def, def.as_str().unwrap(), "{full}: definition");
            let want: BTreeSet<String> = c["handlers"]
                .get(rpc)
                .map(|h| strs(h).into_iter().collect())
                .unwrap_or_default();
            let d = diff(&want, &ats(&r.handlers));
            assert!(d.is_empty(), "{full} handlers: {d}\n{text}");
            let want: BTreeSet<String> = c["calls"]
                .get(rpc)
                .map(|h| strs(h).into_iter().collect())
                .unwrap_or_default();
            let d = diff(&want, &ats(&r.calls));
            assert!(d.is_empty(), "{full} call sites: {d}\n{text}");
            if want.is_empty() {
                assert!(
                    r.zero_calls,
                    "{full}: nobody calls it, the answer must say so explicitly:\n{text}"
                );
            }
            for site in r.handlers.iter().chain(&r.calls) {
                languages.insert(site.lang.clone());
            }
            let constructions: BTreeSet<String> = strs(&c["clients"]).into_iter().collect();
            for m in r.may_call.iter().chain(&st.may_call) {
                assert!(
                    constructions.contains(&m.at) && m.service_level,
                    "{full}: \"may call\" {} is not a client construction of the truth\n{text}",
                    m.at
                );
            }
        }
        assert_eq!(
            a.rpcs.len(),
            c["rpcs"].as_object().unwrap().len(),
            "{svc}: other RPCs traced:\n{text}"
        );
    }
    let want: BTreeSet<String> = [
        "go",
        "java",
        "python",
        "cpp",
        "rust",
        "javascript",
        "typescript",
    ]
    .iter()
    .map(|l| l.to_string())
    .collect();
    assert!(
        diff(&want, &languages).is_empty(),
        "languages: {}",
        diff(&want, &languages)
    );
}

#[test]
fn grpc_target_forms_select_the_same_rpcs() {
    let mut s = example();
    let cases: &[(&str, &[&str])] = &[
        ("GetStock", &["InventoryService.GetStock"]),
        ("getStock", &["InventoryService.GetStock"]),
        ("GET_STOCK", &["InventoryService.GetStock"]),
        ("InventoryService.GetStock", &["InventoryService.GetStock"]),
        (
            "acme.inventory.v1.InventoryService/GetStock",
            &["InventoryService.GetStock"],
        ),
        (
            "InventoryService",
            &["InventoryService.GetStock", "InventoryService.ReserveStock"],
        ),
        (
            "acme.inventory.v1.InventoryService",
            &["InventoryService.GetStock", "InventoryService.ReserveStock"],
        ),
        (
            "contracts/ledger/v1/ledger.proto",
            &["LedgerService.GetBalance", "LedgerService.RecordEntry"],
        ),
        (
            "services/web-bff/proto/orders.proto",
            &["OrderService.CreateOrder", "OrderService.GetOrder"],
        ),
        ("PricingService.GetQuote", &["PricingService.GetQuote"]),
    ];
    for (target, want) in cases {
        let (text, a) = grpc(&mut s, json!({"target": target}));
        let got: Vec<&str> = a.rpcs.keys().map(String::as_str).collect();
        assert_eq!(&got, want, "{target}: traced RPCs differ\n{text}");
        assert!(a.not_traced.is_none(), "{target}:\n{text}");
        assert!(
            !text.contains("heuristic)"),
            "{target}: exact match:\n{text}"
        );
    }
    // A .proto path is wire-checked itself; outside the roots it is refused.
    let (text, a) = grpc(
        &mut s,
        json!({"target": "contracts/ledger/v1/ledger.proto"}),
    );
    assert!(
        a.wire
            .as_deref()
            .is_some_and(|w| w.contains("`contracts/ledger/v1/ledger.proto`")),
        "{text}"
    );
    for bad in ["../outside.proto", "/etc/x.proto"] {
        let text = s.err("analyze_grpc", json!({"target": bad}));
        // Refused with the reason and the .proto files to pass instead.
        assert!(
            text.contains("outside") && text.contains("`contracts/ledger/v1/ledger.proto`"),
            "{bad}: {text}"
        );
    }
    // Nothing by that name: a zero that says what was searched.
    let text = s.ok("analyze_grpc", json!({"target": "NoSuchRpcAnywhere"}));
    assert!(
        text.contains("No `.proto` service or RPC named `NoSuchRpcAnywhere`")
            && text.contains("searched 5 services and 9 RPCs"),
        "{text}"
    );
}

#[test]
fn grpc_tests_are_left_out_and_counted() {
    let mut s = example();
    let (text, plain) = grpc(&mut s, json!({"target": "OrderService"}));
    let (with_text, with) = grpc(
        &mut s,
        json!({"target": "OrderService", "include_tests": true}),
    );
    let tests: BTreeSet<String> = strs(&truth()["tests"]).into_iter().collect();
    let all_sites = |a: &GrpcAnswer| -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for sv in a.services.values() {
            out.extend(
                sv.servers
                    .iter()
                    .chain(&sv.may_call)
                    .chain(&sv.clients)
                    .map(|s| s.at.clone()),
            );
        }
        for r in a.rpcs.values() {
            out.extend(
                r.handlers
                    .iter()
                    .chain(&r.calls)
                    .chain(&r.may_call)
                    .map(|s| s.at.clone()),
            );
        }
        out
    };
    let before = all_sites(&plain);
    let after = all_sites(&with);
    for at in &before {
        let path = at.rsplit_once(':').unwrap().0;
        assert!(
            !tests.contains(path),
            "test file {at} listed without include_tests"
        );
    }
    let added: Vec<&String> = after.difference(&before).collect();
    assert!(before.is_subset(&after));
    assert!(
        !added.is_empty(),
        "include_tests added nothing:\n{with_text}"
    );
    for at in &added {
        let path = at.rsplit_once(':').unwrap().0;
        assert!(
            tests.contains(path),
            "include_tests added a non-test site {at}"
        );
    }
    assert_eq!(
        plain.tests_left_out,
        added.len(),
        "the left-out count does not match what include_tests adds ({added:?}):\n{text}"
    );
    assert!(
        text.contains("(pass `include_tests: true`"),
        "the test line must name include_tests:\n{text}"
    );
    assert!(
        with_text.contains("services/orders/server_test.go:29"),
        "{with_text}"
    );
    assert!(!with_text.contains("in test files left out"), "{with_text}");
}

#[test]
fn grpc_exact_names_leave_substring_matches_untraced_and_list_them() {
    let mut s = extended();
    let (text, a) = grpc(&mut s, json!({"target": "GetOrder"}));
    assert_eq!(
        a.rpcs.keys().collect::<Vec<_>>(),
        ["OrderService.GetOrder"],
        "{text}"
    );
    let not = a
        .not_traced
        .as_deref()
        .unwrap_or_else(|| panic!("no not-traced line:\n{text}"));
    assert!(
        not.contains("1 other name(s)") && not.contains("`OrderHistoryService.GetOrderHistory`"),
        "{not}"
    );
    // Its exact name traces it, with every zero explicit.
    let (text, a) = grpc(&mut s, json!({"target": "GetOrderHistory"}));
    let r = &a.rpcs["OrderHistoryService.GetOrderHistory"];
    assert!(r.zero_handlers && r.zero_calls, "{text}");
    assert!(
        a.services["acme.orders.v1.OrderHistoryService"].zero_servers,
        "{text}"
    );
    assert_eq!(r.def, "contracts/orders/v1/history.proto:7");
    // Only a substring: traced, labelled heuristic.
    let (text, a) = grpc(&mut s, json!({"target": "OrderHist"}));
    assert!(text.contains("heuristic"), "{text}");
    assert!(
        a.rpcs.contains_key("OrderHistoryService.GetOrderHistory"),
        "{text}"
    );
}

#[test]
fn grpc_clients_without_a_resolved_call_are_listed_as_may_call() {
    let mut s = extended();
    let admin = "services/gateway/src/clients/orders-admin.js:8";
    // The whole service: once, under the service.
    let (text, a) = grpc(&mut s, json!({"target": "OrderService"}));
    let svc = &a.services["acme.orders.v1.OrderService"];
    assert_eq!(ats(&svc.may_call), [admin.to_string()].into(), "{text}");
    assert!(svc.may_call.iter().all(|s| s.service_level), "{text}");
    for r in a.rpcs.values() {
        assert!(
            !ats(&r.calls).contains(admin),
            "a client without a call is not a call site:\n{text}"
        );
    }
    // One RPC: listed with it, apart from the resolved calls.
    for target in ["OrderService.CreateOrder", "GetOrder"] {
        let (text, a) = grpc(&mut s, json!({"target": target}));
        let r = a.rpcs.values().next().unwrap();
        assert_eq!(
            ats(&r.may_call),
            [admin.to_string()].into(),
            "{target}:\n{text}"
        );
        assert!(!r.calls.is_empty(), "{text}");
        assert!(text.contains("May call (1)"), "{text}");
    }
    // Files whose calls were resolved method by method are not "may call".
    let (text, a) = grpc(&mut s, json!({"target": "InventoryService"}));
    assert!(a.services.values().all(|s| s.may_call.is_empty()), "{text}");
}

// ---------------------------------------------------------------------------------------------
// analyze_impact answers, parsed
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
struct Row {
    n: usize,
    scope: String,
    role: String,
    element: String,
    root: String,
    location: String,
    confidence: String,
    via: String,
}

fn rows(text: &str) -> Vec<Row> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(inner) = line.strip_prefix("| ") else {
            continue;
        };
        let cells: Vec<String> = inner
            .trim_end_matches(" |")
            .split(" | ")
            .map(|c| c.trim().trim_matches('`').replace("\\|", "|"))
            .collect();
        let Ok(n) = cells[0].parse::<usize>() else {
            continue;
        };
        assert_eq!(cells.len(), 8, "row {line:?}");
        out.push(Row {
            n,
            scope: cells[1].clone(),
            role: cells[2].clone(),
            element: cells[3].clone(),
            root: cells[4].clone(),
            location: cells[5].clone(),
            confidence: cells[6].clone(),
            via: cells[7].clone(),
        });
    }
    out
}

/// The owner roots of an impact answer.
fn owners(text: &str) -> BTreeSet<String> {
    let line = text
        .lines()
        .find(|l| l.starts_with("_Owner root(s):"))
        .unwrap_or_else(|| panic!("no owner line:\n{text}"));
    let head = line.split(" — ").next().unwrap();
    head.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

fn impact(s: &mut Session, args: Value) -> (String, Vec<Row>) {
    let text = s.ok("analyze_impact", args.clone());
    let r = rows(&text);
    let own = owners(&text);
    let (mut ext, mut int, mut topic) = (0, 0, 0);
    for row in &r {
        if row.location == "—" {
            // A topic's own row: no location, on neither side of the boundary.
            assert_eq!(row.scope, "—", "{args}: {row:?}");
            topic += 1;
            continue;
        }
        assert!(
            ["exact", "heuristic", "ambiguous"].contains(&row.confidence.as_str()),
            "{args}: {row:?}"
        );
        let internal = own.contains(&row.root);
        assert_eq!(
            row.scope,
            if internal { "INTERNAL" } else { "EXTERNAL" },
            "{args}: {row:?} against owners {own:?}"
        );
        if internal {
            int += 1
        } else {
            ext += 1
        }
        if row.location != "—" {
            let path = row.location.rsplit_once(':').unwrap().0;
            assert!(
                row.root == "." || path.starts_with(&format!("{}/", row.root)),
                "{args}: {} is not in root {}",
                row.location,
                row.root
            );
        }
    }
    if !r.is_empty() && !text.contains("— showing") {
        assert!(
            text.contains(&format!(
                "_Rows: {} ({ext} EXTERNAL, {int} INTERNAL{})",
                r.len(),
                if topic > 0 {
                    format!(", {topic} topic")
                } else {
                    String::new()
                }
            )),
            "{args}: the row count line is wrong:\n{text}"
        );
    }
    (text, r)
}

fn located(rows: &[Row], role: &str) -> BTreeSet<String> {
    rows.iter()
        .filter(|r| r.role == role)
        .map(|r| r.location.clone())
        .collect()
}

fn topic_truth(name: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let t = truth();
    let topic = t["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap()
        .clone();
    let at = |k: &str| -> BTreeSet<String> {
        topic[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["at"].as_str().unwrap().to_string())
            .collect()
    };
    (at("producers"), at("consumers"))
}

// ---------------------------------------------------------------------------------------------
// analyze_impact
// ---------------------------------------------------------------------------------------------

#[test]
fn impact_lists_every_topic_chain_of_the_truth() {
    let mut s = example();
    for t in truth()["topics"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        let (text, r) = impact(&mut s, json!({"target": name}));
        let (producers, consumers) = topic_truth(name);
        let d = diff(&producers, &located(&r, "producer"));
        assert!(d.is_empty(), "{name} producers: {d}\n{text}");
        let d = diff(&consumers, &located(&r, "consumer"));
        assert!(d.is_empty(), "{name} consumers: {d}\n{text}");
        let topics: Vec<&Row> = r.iter().filter(|r| r.role == "topic").collect();
        assert_eq!(topics.len(), 1, "{name}: one topic row\n{text}");
        assert_eq!(topics[0].element, name);
        assert!(text.contains(&format!("_Topic(s): `{name}`._")), "{text}");
        // The owners are the producers' roots.
        let want_owners: BTreeSet<String> = producers
            .iter()
            .map(|p| {
                let mut parts = p.split('/');
                format!("{}/{}", parts.next().unwrap(), parts.next().unwrap())
            })
            .collect();
        assert_eq!(owners(&text), want_owners, "{name}: owner roots\n{text}");
        assert!(!text.contains("No producer resolved") && !text.contains("No consumer resolved"));
    }
}

#[test]
fn impact_depth_follows_re_emissions() {
    let mut s = example();
    let (_, d1) = impact(&mut s, json!({"target": "orders.created"}));
    let (text, d2) = impact(&mut s, json!({"target": "orders.created", "depth": 2}));
    let (pay_producers, pay_consumers) = topic_truth("payments.completed");
    assert!(
        !d1.iter().any(|r| r.element == "payments.completed"),
        "depth 1 went past the first topic"
    );
    assert!(
        d2.iter()
            .any(|r| r.role == "topic" && r.element == "payments.completed"),
        "depth 2 does not reach payments.completed:\n{text}"
    );
    let d = diff(
        &pay_producers,
        &located(&d2, "producer")
            .intersection(&pay_producers)
            .cloned()
            .collect(),
    );
    assert!(d.is_empty(), "depth 2 re-emission producer: {d}\n{text}");
    let got = located(&d2, "consumer");
    for c in &pay_consumers {
        assert!(got.contains(c), "depth 2 misses consumer {c}:\n{text}");
    }
    // Every depth-1 row is still there.
    for r in &d1 {
        assert!(
            d2.iter()
                .any(|x| x.role == r.role && x.location == r.location && x.element == r.element),
            "depth 2 lost {r:?}"
        );
    }
    assert!(
        text.contains("heuristic"),
        "hops past the first are labelled:\n{text}"
    );
    // A third hop reaches shipments.dispatched; a depth past 5 is refused, naming the range.
    let (text, d3) = impact(&mut s, json!({"target": "orders.created", "depth": 3}));
    let (_, ship_consumers) = topic_truth("shipments.dispatched");
    for c in &ship_consumers {
        assert!(
            located(&d3, "consumer").contains(c),
            "depth 3 misses {c}:\n{text}"
        );
    }
    let (_, d5) = impact(&mut s, json!({"target": "orders.created", "depth": 5}));
    assert!(!d5.is_empty());
    let refused = s.err(
        "analyze_impact",
        json!({"target": "orders.created", "depth": 99}),
    );
    assert!(
        refused.contains("`depth` is 99, outside its range 1–5"),
        "{refused}"
    );
}

#[test]
fn impact_of_routes_lists_the_route_and_its_callers() {
    let mut s = example();
    for route in truth()["routes"].as_array().unwrap() {
        if route["spec"] == true {
            continue;
        }
        let target = format!(
            "{} {}",
            route["method"].as_str().unwrap(),
            route["path"].as_str().unwrap()
        );
        let (text, r) = impact(&mut s, json!({"target": target}));
        let at = route["at"].as_str().unwrap().to_string();
        assert!(
            located(&r, "route").contains(&at),
            "{target}: route {at} missing:\n{text}"
        );
        let want: BTreeSet<String> = strs(&route["callers"]).into_iter().collect();
        let d = diff(&want, &located(&r, "caller"));
        assert!(d.is_empty(), "{target} callers: {d}\n{text}");
    }
}

#[test]
fn impact_of_a_grpc_service_lists_handlers_and_clients() {
    let mut s = example();
    for c in truth()["grpc"].as_array().unwrap() {
        let svc = short_name(c["fqn"].as_str().unwrap());
        let (text, r) = impact(&mut s, json!({"target": svc}));
        let handlers: BTreeSet<String> = c["handlers"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(strs)
            .collect();
        let d = diff(&handlers, &located(&r, "handler"));
        assert!(d.is_empty(), "{svc} handlers: {d}\n{text}");
        let calls: BTreeSet<String> = c["calls"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(strs)
            .collect();
        // Client rows: every call, plus code that only builds a client (heuristic, one of
        // the truth's client constructions).
        let constructions: BTreeSet<String> = strs(&c["clients"]).into_iter().collect();
        let clients = located(&r, "client");
        let missing: Vec<_> = calls.difference(&clients).collect();
        assert!(
            missing.is_empty(),
            "{svc} clients: missing {missing:?}\n{text}"
        );
        for row in r
            .iter()
            .filter(|r| r.role == "client" && !calls.contains(&r.location))
        {
            assert!(
                constructions.contains(&row.location) && row.confidence == "heuristic",
                "{svc}: extra client row {row:?}\n{text}"
            );
        }
        // The owner is the handlers' root: handlers INTERNAL, other roots EXTERNAL (checked
        // row by row in `impact`).
        for h in r.iter().filter(|r| r.role == "handler") {
            assert_eq!(h.scope, "INTERNAL", "{svc}: {h:?}");
        }
    }
}

#[test]
fn impact_normalises_topic_names() {
    let mut s = example();
    let (_, want) = impact(&mut s, json!({"target": "orders.created"}));
    for spelling in [
        "Topics.ORDERS_CREATED",
        "ORDERS_CREATED",
        "orders_created",
        "Orders.Created",
        "orders-created",
    ] {
        let (text, got) = impact(&mut s, json!({"target": spelling}));
        assert!(
            text.contains("_Topic(s): `orders.created`._"),
            "{spelling} does not resolve to orders.created:\n{text}"
        );
        assert_eq!(got, want, "{spelling}: rows differ from orders.created");
    }
    // Nothing by that name: zero rows, said plainly.
    let text = s.ok(
        "analyze_impact",
        json!({"target": "no.such.topic.anywhere"}),
    );
    assert!(rows(&text).is_empty(), "{text}");
    assert!(
        text.contains("matches `no.such.topic.anywhere`")
            && text.contains("searched 5 contracts, 4 topics, 13 routes in 11 root(s)"),
        "a zero must say what was searched:\n{text}"
    );
}

#[test]
fn impact_tests_are_left_out_and_counted() {
    let mut s = example();
    let (text, plain) = impact(&mut s, json!({"target": "orders.created"}));
    let (_, with) = impact(
        &mut s,
        json!({"target": "orders.created", "include_tests": true}),
    );
    assert!(
        text.contains("_1 row(s) in test files left out (pass `include_tests: true`)._"),
        "{text}"
    );
    let added: Vec<&Row> = with
        .iter()
        .filter(|r| {
            !plain
                .iter()
                .any(|p| p.location == r.location && p.role == r.role)
        })
        .collect();
    assert_eq!(added.len(), 1, "{added:?}");
    assert_eq!(added[0].location, "services/orders/server_test.go:35");
}

#[test]
fn impact_pages_have_exact_offsets() {
    let mut s = example();
    let args = json!({"target": "orders.created", "depth": 3, "limit": 200});
    let (_, all) = impact(&mut s, args);
    let total = all.len();
    assert!(total > 6);
    for limit in [1usize, 3, 4] {
        let mut offset = 0;
        let mut walked = Vec::new();
        loop {
            let text = s.ok(
                "analyze_impact",
                json!({"target": "orders.created", "depth": 3, "limit": limit, "offset": offset}),
            );
            let page = rows(&text);
            assert!(!page.is_empty() && page.len() <= limit, "{text}");
            for (k, r) in page.iter().enumerate() {
                assert_eq!(r.n, offset + k + 1, "numbering:\n{text}");
            }
            let start = offset + 1;
            offset += page.len();
            walked.extend(page);
            assert!(
                text.contains(&format!("_Rows: {total} (")),
                "every page counts all {total} rows:\n{text}"
            );
            if offset < total {
                assert!(
                    text.contains(&format!("More rows: repeat with `offset: {offset}`")),
                    "limit {limit}: no exact next offset {offset}:\n{text}"
                );
                assert!(
                    text.contains(&format!("— showing {start}-{offset}")),
                    "{text}"
                );
            } else {
                assert!(!text.contains("More rows"), "{text}");
                break;
            }
        }
        assert_eq!(walked, all, "pages of {limit} differ from one page");
    }
    for offset in [total, total + 5] {
        let text = s.ok(
            "analyze_impact",
            json!({"target": "orders.created", "depth": 3, "offset": offset}),
        );
        assert!(rows(&text).is_empty());
        assert!(
            text.contains(&format!("No rows at offset {offset}"))
                && text.contains(&format!("request an offset below {total}")),
            "{text}"
        );
    }
}

#[test]
fn impact_says_plainly_when_a_topic_has_one_side_only() {
    let mut s = extended();
    let (text, r) = impact(&mut s, json!({"target": "inventory.audited"}));
    assert!(text.contains("**No consumer resolved**"), "{text}");
    assert!(!text.contains("No producer resolved"), "{text}");
    assert_eq!(
        located(&r, "producer"),
        ["services/inventory/inventory/audit.py:9".to_string()].into()
    );
    assert!(located(&r, "consumer").is_empty());
    let (text, r) = impact(&mut s, json!({"target": "carts.abandoned"}));
    assert!(text.contains("**No producer resolved**"), "{text}");
    assert!(!text.contains("No consumer resolved"), "{text}");
    assert_eq!(
        located(&r, "consumer"),
        ["services/recommendations/lib/cart_events.rb:8".to_string()].into()
    );
    // No producer, so no owner: every row is EXTERNAL (checked in `impact`).
    assert!(owners(&text).is_empty(), "{text}");
}

// ---------------------------------------------------------------------------------------------
// visualize_mesh
// ---------------------------------------------------------------------------------------------

/// (from name, to name, kind) of every link of a JSON view.
fn links(view: &Value) -> BTreeSet<(String, String, String)> {
    let names: BTreeMap<&str, &str> = view["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_str().unwrap(), n["name"].as_str().unwrap()))
        .collect();
    view["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let name = |k: &str| {
                names
                    .get(l[k].as_str().unwrap())
                    .unwrap_or_else(|| panic!("link to an undeclared node: {l}"))
                    .to_string()
            };
            (
                name("from"),
                name("to"),
                l["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn json_view(s: &mut Session, args: Value) -> Value {
    let mut args = args;
    args["format"] = json!("json");
    let text = s.ok("visualize_mesh", args.clone());
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{args}: not JSON ({e}):\n{text}"))
}

/// The links a truth service edge becomes in the view.
fn edge_links(e: &Value) -> Vec<(String, String, String)> {
    let (from, to, via) = (
        e["from"].as_str().unwrap().to_string(),
        e["to"].as_str().unwrap().to_string(),
        e["via"].as_str().unwrap().to_string(),
    );
    match e["kind"].as_str().unwrap() {
        "event" => vec![
            (from, via.clone(), "produces".to_string()),
            (via, to, "consumes".to_string()),
        ],
        kind => vec![(from, to, kind.to_string())],
    }
}

#[test]
fn mesh_json_has_every_service_edge_of_the_truth_and_no_other() {
    let mut s = example();
    let view = json_view(&mut s, json!({}));
    let got = links(&view);
    let mut want = BTreeSet::new();
    for e in truth()["service_edges"].as_array().unwrap() {
        for l in edge_links(e) {
            assert!(
                got.contains(&l),
                "edge {} → {} ({}, via {}) missing as {l:?}",
                e["from"],
                e["to"],
                e["kind"],
                e["via"]
            );
            want.insert(l);
        }
    }
    let extra: Vec<_> = got.difference(&want).collect();
    assert!(extra.is_empty(), "links the truth does not have: {extra:?}");
    let names: BTreeSet<String> = view["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["kind"] == "service")
        .map(|n| n["name"].as_str().unwrap().to_string())
        .collect();
    // The workspace directory's own root is drawn as "(workspace root)".
    let roots: BTreeSet<String> = strs(&truth()["roots"])
        .into_iter()
        .map(|r| {
            if r == "." {
                "(workspace root)".to_string()
            } else {
                r
            }
        })
        .collect();
    assert_eq!(names, roots, "one service node per root");
}

/// Checks a Mermaid answer: one `graph LR` block, declared node ids, quoted labels, links
/// between declared ids; returns (id → label) and the links.
fn check_mermaid(text: &str) -> (BTreeMap<String, String>, Vec<(String, String)>) {
    let block = text
        .split("```mermaid\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .unwrap_or_else(|| panic!("no mermaid block:\n{text}"));
    let mut lines = block.lines().filter(|l| !l.trim_start().starts_with("%%"));
    assert_eq!(lines.next(), Some("graph LR"), "{block}");
    let mut nodes = BTreeMap::new();
    let mut edges = Vec::new();
    for line in lines {
        let l = line.trim();
        let id: String = l.chars().take_while(char::is_ascii_alphanumeric).collect();
        assert!(
            !id.is_empty(),
            "a line that is neither node nor link: {line:?}"
        );
        let rest = &l[id.len()..];
        if let Some(arrow) = [" -->|", " ==>|", " -.->|"]
            .iter()
            .find(|a| rest.starts_with(**a))
        {
            let after = &rest[arrow.len()..];
            let (label, to) = after.rsplit_once("| ").unwrap();
            assert!(
                label.starts_with('"')
                    && label.ends_with('"')
                    && label[1..label.len() - 1].find('"').is_none(),
                "link label not one quoted string: {line:?}"
            );
            edges.push((id.clone(), to.trim().to_string()));
        } else {
            let (open, close) = [
                ("([\"", "\"])"),
                ("[/\"", "\"/]"),
                ("[\"", "\"]"),
                ("(\"", "\")"),
            ]
            .into_iter()
            .find(|(o, c)| rest.starts_with(o) && rest.ends_with(c))
            .unwrap_or_else(|| panic!("unknown node shape: {line:?}"));
            let label = &rest[open.len()..rest.len() - close.len()];
            assert!(!label.contains('"'), "unescaped quote in {line:?}");
            assert!(
                !label
                    .replace("<br/>", "")
                    .replace("<small>", "")
                    .replace("</small>", "")
                    .contains(['<', '>']),
                "unescaped angle bracket in {line:?}"
            );
            assert!(
                nodes.insert(id, label.to_string()).is_none(),
                "node declared twice: {line:?}"
            );
        }
    }
    for (a, b) in &edges {
        assert!(
            nodes.contains_key(a) && nodes.contains_key(b),
            "link {a} → {b} names an undeclared node"
        );
    }
    (nodes, edges)
}

#[test]
fn mesh_mermaid_is_well_formed_and_matches_the_json_view() {
    let mut s = example();
    let text = s.ok("visualize_mesh", json!({}));
    assert!(text.starts_with("## "), "{text}");
    let (nodes, edges) = check_mermaid(&text);
    let view = json_view(&mut s, json!({}));
    assert_eq!(nodes.len(), view["nodes"].as_array().unwrap().len());
    assert_eq!(edges.len(), view["links"].as_array().unwrap().len());
    for n in view["nodes"].as_array().unwrap() {
        let label = &nodes[n["id"].as_str().unwrap()];
        assert!(
            label.starts_with(n["name"].as_str().unwrap()),
            "node {} is labelled {label:?}",
            n["name"]
        );
    }
    let text = s.ok("visualize_mesh", json!({"format": "MERMAID"}));
    check_mermaid(&text);
    let text = s.err("visualize_mesh", json!({"format": "svg"}));
    assert!(
        text.contains("'svg'")
            && text.contains("mermaid")
            && text.contains("json")
            && text.contains("html"),
        "{text}"
    );
}

#[test]
fn mesh_html_is_a_standalone_page() {
    let mut s = example();
    for service in [None, Some("services/payments")] {
        let mut args = json!({"format": "html"});
        let mut view_args = json!({});
        if let Some(svc) = service {
            args["service"] = json!(svc);
            view_args["service"] = json!(svc);
        }
        let html = s.ok("visualize_mesh", args.clone());
        assert!(html.starts_with("<!doctype html>"), "{args}");
        assert!(html.trim_end().ends_with("</html>"), "{args}");
        let lower = html.to_lowercase();
        for banned in [
            "<link",
            "@import",
            "src=",
            "href=\"http",
            "url(http",
            "fetch(",
            "xmlhttprequest",
        ] {
            assert!(
                !lower.contains(banned),
                "{args}: the page loads something ({banned})"
            );
        }
        // The only absolute URL is the SVG namespace, an identifier that is never fetched.
        let urls: BTreeSet<&str> = lower
            .match_indices("http")
            .map(|(i, _)| {
                let end = lower[i..]
                    .find(['"', '\'', ' ', ')', '<'])
                    .map_or(lower.len(), |e| i + e);
                &lower[i..end]
            })
            .filter(|u| u.starts_with("http://") || u.starts_with("https://"))
            .collect();
        assert!(
            urls.iter().all(|u| *u == "http://www.w3.org/2000/svg"),
            "{args}: URLs in the page: {urls:?}"
        );
        assert!(
            lower.contains("default-src 'none'"),
            "{args}: no restrictive CSP"
        );
        let view = json_view(&mut s, view_args);
        for n in view["nodes"].as_array().unwrap() {
            let name = n["name"].as_str().unwrap();
            assert!(html.contains(name), "{args}: node {name} not in the page");
        }
    }
}

#[test]
fn mesh_zooms_into_one_service() {
    let mut s = example();
    for svc in ["services/orders", "services/payments", "services/inventory"] {
        let view = json_view(&mut s, json!({"service": svc}));
        assert_eq!(view["zoom"], svc);
        let nodes = view["nodes"].as_array().unwrap();
        let own: BTreeSet<String> = nodes
            .iter()
            .filter(|n| n["kind"] == "contract")
            .map(|n| n["name"].as_str().unwrap().to_string())
            .collect();
        let names: BTreeSet<String> = nodes
            .iter()
            .map(|n| n["name"].as_str().unwrap().to_string())
            .collect();
        let got = links(&view);
        let me = |n: &str| n == svc || own.contains(n);
        let mut neighbours = BTreeSet::new();
        for e in truth()["service_edges"].as_array().unwrap() {
            let (from, to) = (e["from"].as_str().unwrap(), e["to"].as_str().unwrap());
            if from != svc && to != svc {
                continue;
            }
            let other = if from == svc { to } else { from };
            neighbours.insert(other.to_string());
            assert!(
                names.contains(other),
                "{svc}: neighbour {other} missing from the zoom"
            );
            // The edge touches the service or one of its contracts (through the topic for
            // events).
            let touches = match e["kind"].as_str().unwrap() {
                "event" => {
                    let via = e["via"].as_str().unwrap();
                    got.iter()
                        .any(|(a, b, _)| (me(a) && b == via) || (a == via && me(b)))
                        && got
                            .iter()
                            .any(|(a, b, _)| (a == other && b == via) || (a == via && b == other))
                }
                _ => got
                    .iter()
                    .any(|(a, b, _)| (me(a) && b == other) || (a == other && me(b))),
            };
            assert!(touches, "{svc}: edge {e} not drawn in the zoom: {got:?}");
        }
        // Other services are drawn when they talk to it, or share a topic it uses.
        let topics: BTreeSet<String> = nodes
            .iter()
            .filter(|n| n["kind"] == "topic")
            .map(|n| n["name"].as_str().unwrap().to_string())
            .collect();
        for t in &topics {
            assert!(
                got.iter()
                    .any(|(a, b, _)| (me(a) && b == t) || (a == t && me(b))),
                "{svc}: topic {t} is drawn but it neither produces nor consumes it"
            );
        }
        for n in nodes.iter().filter(|n| n["kind"] == "service") {
            let name = n["name"].as_str().unwrap();
            let via_topic = got.iter().any(|(a, b, _)| {
                (a == name && topics.contains(b)) || (b == name && topics.contains(a))
            });
            assert!(
                name == svc || neighbours.contains(name) || via_topic,
                "{svc}: {name} does not talk to it but is drawn"
            );
        }
        for n in nodes.iter().filter(|n| n["kind"] == "contract") {
            let loc = n["location"]
                .as_str()
                .unwrap_or_else(|| panic!("{n}: no location"));
            let (path, line) = loc.rsplit_once(':').unwrap();
            let src = std::fs::read_to_string(example_dir().join(path)).unwrap();
            assert!(
                line.parse::<usize>().unwrap() <= src.lines().count(),
                "{svc}: contract {n} cites a line past the end"
            );
        }
        let text = s.ok("visualize_mesh", json!({"service": svc}));
        assert!(text.contains(&format!("service `{svc}`")), "{text}");
        check_mermaid(&text);
    }
    // The name is matched case-insensitively.
    let view = json_view(&mut s, json!({"service": "SERVICES/ORDERS"}));
    assert_eq!(view["zoom"], "services/orders");
}

#[test]
fn mesh_unknown_service_is_an_error_listing_the_names() {
    let mut s = example();
    let text = s.err("visualize_mesh", json!({"service": "services/nope"}));
    assert!(text.contains("services/nope"), "{text}");
    for root in strs(&truth()["roots"]) {
        assert!(text.contains(&root), "{root} not offered:\n{text}");
    }
}

#[test]
fn mesh_max_services_folds_the_rest_into_other() {
    let mut s = example();
    let view = json_view(&mut s, json!({"max_services": 2}));
    let nodes = view["nodes"].as_array().unwrap();
    let services: Vec<&Value> = nodes.iter().filter(|n| n["kind"] == "service").collect();
    assert_eq!(services.len(), 2, "{view}");
    assert_eq!(view["services_shown"], 2);
    assert_eq!(view["services_total"], 11);
    let other: Vec<&Value> = nodes
        .iter()
        .filter(|n| n["name"].as_str().unwrap().starts_with("other"))
        .collect();
    assert_eq!(other.len(), 1, "one 'other' node: {view}");
    // The largest hidden services, by file count, at most 5.
    let hidden: Vec<(String, u64)> = view["hidden"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h[0].as_str().unwrap().to_string(), h[1].as_u64().unwrap()))
        .collect();
    let shown: BTreeSet<String> = services
        .iter()
        .map(|n| n["name"].as_str().unwrap().to_string())
        .collect();
    let full = json_view(&mut s, json!({}));
    let mut sizes: Vec<(String, u64)> = full["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["kind"] == "service" && !shown.contains(n["name"].as_str().unwrap()))
        .map(|n| {
            let caption = n["caption"].as_str().unwrap();
            let files = caption.split(' ').next().unwrap().parse().unwrap();
            (n["name"].as_str().unwrap().to_string(), files)
        })
        .collect();
    assert_eq!(sizes.len(), 9, "{full}");
    sizes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    sizes.truncate(5);
    assert_eq!(
        hidden, sizes,
        "\"largest hidden\" is not the largest folded services"
    );
    // Links from hidden services now start or end at "other".
    let other_name = other[0]["name"].as_str().unwrap();
    assert!(
        links(&view)
            .iter()
            .any(|(a, b, _)| a == other_name || b == other_name),
        "nothing links to {other_name}"
    );
    let text = s.ok("visualize_mesh", json!({"max_services": 2}));
    check_mermaid(&text);
    assert!(text.contains("9 services folded"), "{text}");
    assert!(text.contains("folded into \"other services\""), "{text}");
    // Out of range: refused with the range named, not clamped.
    let view = json_view(&mut s, json!({"max_services": 1}));
    assert_eq!(view["services_shown"], 1);
    let view = json_view(&mut s, json!({"max_services": 200}));
    assert_eq!(view["services_shown"], 11);
    for bad in [0, 201, 100000] {
        let text = s.err(
            "visualize_mesh",
            json!({"format": "json", "max_services": bad}),
        );
        assert!(text.contains("outside its range 1–200"), "{text}");
    }
}

#[test]
fn mesh_escapes_names_in_every_format() {
    let mut s = extended();
    let view = json_view(&mut s, json!({}));
    assert!(
        view["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["name"] == ODD_ROOT),
        "the odd root is not a node: {view}"
    );
    assert!(
        links(&view).contains(&(
            ODD_ROOT.to_string(),
            "services/inventory".to_string(),
            "http".to_string()
        )),
        "the odd root's HTTP call is not drawn"
    );
    let text = s.ok("visualize_mesh", json!({}));
    let (nodes, _) = check_mermaid(&text);
    assert!(
        nodes
            .values()
            .any(|l| l.starts_with("services/odd #quot;quoted#quot; #lt;svc#gt; #35;1")),
        "{text}"
    );
    let html = s.ok("visualize_mesh", json!({"format": "html"}));
    assert!(!html.contains("<svc>"), "raw name in the page");
    assert!(
        html.contains("\\u003csvc>") || html.contains("\\u003csvc\\u003e"),
        "the name is not escaped as \\u003c"
    );
    // Zoom works on it too, by its exact name.
    let view = json_view(&mut s, json!({"service": ODD_ROOT}));
    assert_eq!(view["zoom"], ODD_ROOT);
}
