//! `analyze_impact`: what a change to an RPC, a service, an event topic or an HTTP route
//! touches, as one table row per element.
//!
//! Targets resolve in order: a gRPC service or method (`OrderService`, `CreateOrder`,
//! `OrderService.CreateOrder`, `acme.orders.v1.OrderService/CreateOrder`), an event topic
//! (`orders.created`, `ORDER_CREATED`, `Topics.ORDER_CREATED` — a code reference keys on its
//! member, and when nothing matches as written the name is retried with `.`, `:`, `-`, `/`
//! folded to `_`), then an HTTP route (`GET /orders/{id}`, `/orders/{id}`). Rows carry a role
//! (`handler`, `client`, `producer`, `topic`, `consumer`, `route`, `caller`), `INTERNAL` or
//! `EXTERNAL` relative to the owner roots (a contract's handler roots, else its `.proto`'s
//! root; a topic's producer roots; a route's root), the confidence of the link and what it
//! goes through (`via`). `depth` follows re-emissions: a file that consumes a topic and
//! produces another carries the chain one hop further (those rows are `heuristic`). A typed
//! subscription (`AddSubscription<E, H>()`, `IConsumer<E>`, `ApplicationListener<E>`) is
//! listed at its handler's method (`index::handlers`), so the hop follows the handler's file,
//! and the registration line is in the `via` (`registered at path:line`).
//!
//! The order is deterministic: EXTERNAL first (what crosses a service boundary is what breaks
//! others), then role, path, line.

mod misses;
mod routes;
mod rpc;
mod topics;

pub(crate) use routes::route_rows;
pub(crate) use rpc::rpc_rows;
pub(crate) use topics::topic_rows;

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::{Value, json};

use self::misses::{close_names, shares_word, target_words, unresolved_list, written_values};
use self::routes::{match_routes, route_rows_with};
use self::rpc::resolve_rpc;
use self::topics::{match_topics, topic_rows_with};
use super::{ToolDef, ToolEnv, ToolOutput, object_schema};
use crate::index::graph::{Confidence, Graph, Loc};
use crate::index::snapshot::Snapshot;
use crate::render::{MAX_OUTPUT_BYTES, inline_code, table_cell};

/// The tool definition.
pub static TOOL: ToolDef = ToolDef {
    name: "analyze_impact",
    title: "Analyze the impact of a change",
    description: "Lists what a change would touch: for a gRPC method or service its handlers and \
callers; for an event topic its producers, the topic and its consumers (with `depth` hops \
through services that consume and re-emit); for an HTTP route its handler and callers. One row \
per element with role, INTERNAL/EXTERNAL (to the owner's root), root, path:line, \
confidence and what it goes through. Use it before changing a contract; for the wire-format \
check of a .proto use analyze_grpc, for who imports a package use find_dependents. Example: \
{\"target\": \"orders.created\", \"depth\": 2}.",
    input_schema: || {
        object_schema(
            json!({
                "target": {"type": "string", "description": "An RPC, service, topic or route, e.g. \"OrderService.CreateOrder\", \"orders.created\", \"ORDER_CREATED\" or \"GET /orders/{id}\"."},
                "depth": super::int_schema("Hops through consumers that re-emit, e.g. 2.", 1, 1, 5),
                "include_tests": {"type": "boolean", "description": "Also list rows in test files (default false), e.g. true."},
                "limit": super::int_schema("Rows per page, e.g. 50.", 100, 1, 200),
                "offset": super::int_schema("Rows to skip, from the previous footer, e.g. 100.", 0, 0, super::MAX_OFFSET)
            }),
            &["target"],
        )
    },
    output_schema: Some(super::structured::Shape {
        paged: true,
        extra: super::structured::TESTS_LEFT_OUT,
        row: super::structured::SCOPE,
    }),
    run,
    truncation_hint: |args| {
        format!(
            "Page with `offset`, or lower `depth`: analyze_impact(target: \"{}\", depth: 1).",
            super::text_arg(args, "target")
        )
    },
    index: super::IndexUse::Required,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    target: String,
    depth: Option<i64>,
    include_tests: Option<bool>,
    limit: Option<i64>,
    offset: Option<i64>,
}

/// The role of an element in the change, in display order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Role {
    Handler,
    Client,
    Route,
    Caller,
    Producer,
    Topic,
    Consumer,
}

impl Role {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Role::Handler => "handler",
            Role::Client => "client",
            Role::Route => "route",
            Role::Caller => "caller",
            Role::Producer => "producer",
            Role::Topic => "topic",
            Role::Consumer => "consumer",
        }
    }
}

/// One row of the matrix.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub(crate) role: Role,
    pub(crate) element: String,
    pub(crate) at: Option<Loc>,
    pub(crate) confidence: Confidence,
    pub(crate) via: String,
    pub(crate) external: bool,
}

/// What the target resolved to.
enum Subject {
    Rpcs { contracts: Vec<u32>, rpcs: Vec<u32> },
    Topics(Vec<u32>),
    Routes(Vec<u32>),
}

fn run(args: &Value, env: &ToolEnv) -> ToolOutput {
    if let Err(e) = super::smart_search::whole_number_args(
        "analyze_impact",
        args,
        &[
            ("depth", 1, 1, 5),
            ("limit", 100, 1, 200),
            ("offset", 0, 0, super::MAX_OFFSET),
        ],
    ) {
        return e;
    }
    let (args, snap): (Args, _) = match super::decode_indexed("analyze_impact", args, env) {
        Ok(a) => a,
        Err(e) => return e,
    };
    if let Err(e) =
        super::smart_search::check_text_len("analyze_impact", "target", Some(&args.target))
    {
        return e;
    }
    let target = args.target.trim();
    if target.is_empty() {
        return ToolOutput::error(
            "Invalid arguments for analyze_impact: `target` is empty. Pass an RPC, topic or route, e.g. {\"target\": \"orders.created\"}.".into(),
        );
    }
    let (depth, limit, offset) =
        match depth_and_page("analyze_impact", args.depth, args.limit, args.offset) {
            Ok(p) => p,
            Err(e) => return e,
        };
    let include_tests = args.include_tests.unwrap_or(false);
    let g = &snap.graph;
    let subject = resolve(g, target).or_else(|| routes_of_service(snap, target));
    let mut header = format!("## Impact of changing {}\n\n", inline_code(target));
    let (mut rows, owners, notes) = match &subject {
        None => {
            header.push_str(&format!(
                "_No gRPC service or method, event topic or HTTP route matches {} (searched {} contracts, {} topics, {} routes in {} root(s), generation {}). Pass an exact method, service, topic or route, e.g. `OrderService.CreateOrder`, `orders.created` or `GET /orders/{{id}}`; for a type or package use find_dependents._\n",
                inline_code(target),
                g.contracts.len(),
                g.topics.len(),
                g.routes.len(),
                snap.roots.len(),
                snap.generation
            ));
            header.push_str(&close_names(snap, target));
            // A miss is not proof: sites the index could not resolve may be it.
            let words = target_words(target);
            let events = g
                .unresolved_events
                .iter()
                .filter(|(_, w)| shares_word(w, &words))
                .map(|(at, w)| (*at, w.clone()));
            // HTTP calls only for a target shaped like a route: a queue or topic name that
            // shares a word with a URL (`orders-queue`, `/orders`) is no call of it.
            let route_like = target.contains('/');
            let calls = g
                .unresolved_calls
                .iter()
                .filter(|c| route_like && shares_word(&c.url, &words))
                .map(|c| (c.at, format!("`{}` — {}", c.url, c.why)));
            let sites: Vec<(Loc, String)> = events.chain(calls).collect();
            if !sites.is_empty() {
                header.push('\n');
                header.push_str(&unresolved_list(
                    snap,
                    "site(s) the index could not resolve mention it; read them",
                    sites.into_iter(),
                    include_tests,
                ));
            }
            header.push_str(&written_values(snap, target, include_tests));
            return ToolOutput::ok(header).with_data(super::structured::empty());
        }
        Some(Subject::Rpcs { contracts, rpcs }) => rpc_rows(snap, contracts, rpcs),
        Some(Subject::Topics(topics)) => topic_rows_with(snap, topics, depth, include_tests),
        Some(Subject::Routes(routes)) => {
            let served_by = routes_roots(snap, routes);
            if served_by.len() > 1 {
                // `GET /health` in every service: say how to ask for one.
                let first = root_label(snap, served_by[0]);
                header.push_str(&format!(
                    "_{} services serve this route; for one of them, put its root first: {}._\n\n",
                    served_by.len(),
                    inline_code(&format!("{first} {target}"))
                ));
            }
            route_rows_with(snap, routes, include_tests)
        }
    };
    // Tests out (counted), then one row per (element, role, via), strongest confidence first.
    let before = rows.len();
    if !include_tests {
        rows.retain(|r| r.at.is_none_or(|l| !snap.files[l.file as usize].is_test));
    }
    let tests_left_out = before - rows.len();
    let key = |r: &Row| {
        (
            !r.external,
            r.role,
            r.at.map(|l| snap.display_path(&snap.files[l.file as usize])),
            r.at.map(|l| l.line),
            r.element.clone(),
            r.via.clone(),
            r.confidence,
        )
    };
    crate::order::sort_by_cached_key(&mut rows, key);
    let mut seen = HashSet::new();
    rows.retain(|r| seen.insert((r.role, r.at, r.element.clone(), r.via.clone())));

    let owner_labels: Vec<String> = owners
        .iter()
        .map(|&r| root_label(snap, r).to_string())
        .collect();
    if owner_labels.is_empty() {
        header.push_str("_Owner root(s): none found, so every row is EXTERNAL._\n\n");
    } else {
        // Callers are scoped to the route they call (see `route_rows_with`).
        let per_route = rows.iter().any(|r| {
            r.role == Role::Caller
                && r.external
                && r.at.is_some_and(|l| owners.contains(&root_of(snap, l)))
        });
        header.push_str(&format!(
            "_Owner root(s): {} — INTERNAL = inside an owner root; EXTERNAL = any other root{}._\n",
            owner_labels
                .iter()
                .map(|l| inline_code(l))
                .collect::<Vec<_>>()
                .join(", "),
            if per_route {
                "; a caller is EXTERNAL when its root is not that of the route it calls"
            } else {
                ""
            }
        ));
        header.push('\n');
    }
    for n in &notes {
        header.push_str(n);
        header.push_str("\n\n");
    }
    render(snap, header, rows, tests_left_out, limit, offset)
}

/// A route target qualified by the root that serves it (`catalog GET /health`, `src/cart
/// /health`): the matching routes of that root only. Roots match by label or by its last
/// path segment, ignoring case.
fn routes_of_service(snap: &Snapshot, target: &str) -> Option<Subject> {
    let (service, route) = target.trim().split_once(' ')?;
    let route = route.trim();
    let names_root = |root: u16| {
        let label = root_label(snap, root);
        label.eq_ignore_ascii_case(service)
            || label
                .rsplit('/')
                .next()
                .is_some_and(|l| l.eq_ignore_ascii_case(service.trim_end_matches('/')))
    };
    let routes: Vec<u32> = match_routes(&snap.graph, route)
        .into_iter()
        .filter(|&r| names_root(root_of(snap, snap.graph.routes[r as usize].at)))
        .collect();
    (!routes.is_empty()).then_some(Subject::Routes(routes))
}

/// The roots serving `routes`, each once, in root order.
fn routes_roots(snap: &Snapshot, routes: &[u32]) -> Vec<u16> {
    let mut roots: Vec<u16> = routes
        .iter()
        .map(|&r| root_of(snap, snap.graph.routes[r as usize].at))
        .collect();
    roots.sort_unstable();
    roots.dedup();
    roots
}

/// Resolves the target: RPCs and services first, then topics, then routes.
fn resolve(g: &Graph, target: &str) -> Option<Subject> {
    if let Some(s) = resolve_rpc(g, target) {
        return Some(s);
    }
    let topics = match_topics(g, target);
    if !topics.is_empty() {
        return Some(Subject::Topics(topics));
    }
    let routes = match_routes(g, target);
    (!routes.is_empty()).then_some(Subject::Routes(routes))
}

fn root_of(snap: &Snapshot, l: Loc) -> u16 {
    snap.files[l.file as usize].root
}

pub(crate) fn root_label(snap: &Snapshot, root: u16) -> &str {
    snap.roots
        .get(root as usize)
        .map_or("?", |r| r.label.as_str())
}

/// The innermost declaration around a line (`OrderConsumer.handle`), for the element column.
pub(crate) fn enclosing(snap: &Snapshot, at: Loc) -> Option<String> {
    let f = &snap.files[at.file as usize];
    // A line in a declaration's annotation block (`@KafkaListener(…)` above the method)
    // belongs to that declaration; else the innermost declaration spanning the line.
    let annotated = f
        .symbols()
        .iter()
        .filter(|s| s.doc_line > 0 && s.doc_line <= at.line && at.line < s.line)
        .min_by_key(|s| s.line - s.doc_line);
    annotated
        .or_else(|| {
            f.symbols()
                .iter()
                .filter(|s| s.line <= at.line && at.line <= s.end_line)
                .min_by_key(|s| s.end_line - s.line)
        })
        .map(|s| match f.container(s) {
            Some(c) => format!("{c}.{}", f.name(s)),
            None => f.name(s).to_string(),
        })
}

/// The file name of a location, when no declaration encloses it.
fn file_name(snap: &Snapshot, at: Loc) -> String {
    let path = &snap.files[at.file as usize].path;
    path.rsplit('/').next().unwrap_or(path).to_string()
}

/// The `depth`, `limit` and `offset` of an impact listing (`analyze_impact`,
/// `analyze_changes`): the same ranges and defaults for both tools.
pub(super) fn depth_and_page(
    tool: &str,
    depth: Option<i64>,
    limit: Option<i64>,
    offset: Option<i64>,
) -> Result<(usize, usize, usize), ToolOutput> {
    let depth = super::in_range(tool, "depth", depth, 1, 1, 5)?;
    let (limit, offset) = super::page_args(tool, limit, 100, 200, offset)?;
    Ok((depth, limit, offset))
}

fn render(
    snap: &Snapshot,
    mut out: String,
    rows: Vec<Row>,
    tests_left_out: usize,
    limit: usize,
    offset: usize,
) -> ToolOutput {
    let total = rows.len();
    let tests_line = if tests_left_out > 0 {
        format!("_{tests_left_out} row(s) in test files left out (pass `include_tests: true`)._\n")
    } else {
        String::new()
    };
    let data = |rows: Vec<Value>, next: Option<usize>| {
        super::structured::with(
            super::structured::page(total, offset, next, rows),
            json!({"testsLeftOut": tests_left_out}),
        )
    };
    if total == 0 {
        out.push_str("_No handler, caller, producer or consumer is linked to it in the index._\n");
        out.push_str(&tests_line);
        return ToolOutput::ok(out).with_data(data(vec![], None));
    }
    if offset >= total {
        out.push_str(&format!(
            "_No rows at offset {offset}: there are {total} rows; request an offset below {total}._\n"
        ));
        return ToolOutput::ok(out).with_data(data(vec![], None));
    }
    // A topic's own row has no location and belongs to no side of the boundary.
    let external = rows.iter().filter(|r| r.external && r.at.is_some()).count();
    let internal = rows
        .iter()
        .filter(|r| !r.external && r.at.is_some())
        .count();
    let unplaced = total - external - internal;
    let mut table = String::from(
        "| # | Scope | Role | Element | Root | Location | Confidence | Via |\n|---|---|---|---|---|---|---|---|\n",
    );
    let budget = MAX_OUTPUT_BYTES - 1536 - out.len();
    let mut shown = 0;
    let mut files = Vec::new();
    let mut data_rows = Vec::new();
    // A library's line is attributed to the services using it, as visualize_mesh draws it.
    let users = super::visualize_mesh::library_users(snap);
    for (i, r) in rows.iter().enumerate().skip(offset).take(limit) {
        let (root, location, path) = match r.at {
            Some(l) => {
                let f = &snap.files[l.file as usize];
                files.push(snap.display_path(f));
                let label = root_label(snap, f.root);
                (
                    match users.get(&f.root) {
                        Some(u) => format!("{label} (library used by {})", u.join(", ")),
                        None => label.to_string(),
                    },
                    format!("{}:{}", snap.display_path(f), l.line),
                    snap.display_path(f),
                )
            }
            None => (String::new(), String::new(), String::new()),
        };
        let line = format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            i + 1,
            match (r.at, r.external) {
                (None, _) => "—",
                (Some(_), true) => "EXTERNAL",
                (Some(_), false) => "INTERNAL",
            },
            r.role.name(),
            table_cell(&r.element),
            if root.is_empty() {
                "—".to_string()
            } else {
                table_cell(&root)
            },
            if r.at.is_some() {
                table_cell(&location)
            } else {
                "—".into()
            },
            r.confidence.label(),
            if r.via == "—" {
                "—".to_string()
            } else {
                table_cell(&r.via)
            }
        );
        if shown > 0 && table.len() + line.len() > budget {
            break;
        }
        table.push_str(&line);
        data_rows.push(scoped_row(
            &path,
            r.at.map_or(0, |l| l.line),
            r.role.name(),
            &r.element,
            r.confidence.label(),
            if r.via == "—" { "" } else { &r.via },
            r.at.map(|_| r.external),
        ));
        shown += 1;
    }
    out.push_str(&format!(
        "_Rows: {total} ({external} EXTERNAL, {internal} INTERNAL{}){}._\n\n",
        if unplaced > 0 {
            format!(", {unplaced} topic")
        } else {
            String::new()
        },
        if shown < total {
            format!(" — showing {}-{}", offset + 1, offset + shown)
        } else {
            String::new()
        }
    ));
    out.push_str(&table);
    if offset + shown < total {
        out.push_str(&format!(
            "\n_More rows: repeat with `offset: {}`._\n",
            offset + shown
        ));
    }
    if !tests_line.is_empty() {
        out.push('\n');
        out.push_str(&tests_line);
    }
    crate::order::sort(&mut files);
    files.dedup();
    let mut result = ToolOutput::ok(out).with_data(data(data_rows, Some(offset + shown)));
    result.files_accessed = files;
    result
}

/// A structured row with its `scope`: `INTERNAL` (inside an owner root) or `EXTERNAL`; none
/// for a row without a location (a topic's own row).
pub(crate) fn scoped_row(
    path: &str,
    line: u32,
    role: &str,
    name: &str,
    confidence: &str,
    via: &str,
    external: Option<bool>,
) -> Value {
    let mut row = super::structured::row(path, line, role, name, confidence, via);
    if let Some(external) = external {
        row["scope"] = json!(if external { "EXTERNAL" } else { "INTERNAL" });
    }
    row
}

#[cfg(test)]
mod matrix_tests {
    use super::*;
    use crate::index::facts::Value as FactValue;
    use crate::index::facts::*;
    use serde_json::Value;

    fn sym(name: &str, kind: SymbolKind, line: u32, end: u32, container: Option<&str>) -> Symbol {
        Symbol {
            name: name.into(),
            kind,
            line,
            end_line: end,
            doc_line: None,
            container: container.map(Into::into),
        }
    }

    fn ev(role: EventRole, topic: FactValue, line: u32) -> EventFact {
        EventFact {
            role,
            topic,
            via: "kafkajs".into(),
            line,
        }
    }

    /// orders produces orders.created (through a constant); payments consumes it and
    /// re-emits payments.completed; shipping consumes that; a test also consumes.
    fn shop() -> Snapshot {
        let orders = FileFacts {
            symbols: vec![sym("publish", SymbolKind::Function, 3, 6, None)],
            bindings: vec![Binding {
                name: "Topics.ORDER_CREATED".into(),
                value: FactValue::lit("orders.created"),
                line: 1,
            }],
            events: vec![ev(
                EventRole::Producer,
                FactValue::reference("Topics.ORDER_CREATED"),
                4,
            )],
            ..FileFacts::default()
        };
        let payments = FileFacts {
            symbols: vec![sym("onOrder", SymbolKind::Method, 2, 9, Some("Payments"))],
            events: vec![
                ev(EventRole::Consumer, FactValue::lit("orders.created"), 2),
                ev(
                    EventRole::Producer,
                    FactValue::env("DONE_TOPIC", Some("payments.completed".into())),
                    8,
                ),
            ],
            ..FileFacts::default()
        };
        let shipping = FileFacts {
            events: vec![ev(
                EventRole::Consumer,
                FactValue::lit("payments.completed"),
                5,
            )],
            ..FileFacts::default()
        };
        let test = FileFacts {
            events: vec![ev(EventRole::Consumer, FactValue::lit("orders.created"), 1)],
            ..FileFacts::default()
        };
        Snapshot::from_facts(vec![
            ("services/orders", "src/publish.ts", orders),
            ("services/payments", "src/payments.ts", payments),
            ("services/shipping", "src/ship.ts", shipping),
            ("services/payments", "test/payments.spec.ts", test),
        ])
    }

    fn call(snap: &Snapshot, args: Value) -> ToolOutput {
        crate::tools::run_on(run, snap, &args)
    }

    #[test]
    fn topic_chain_with_depth_and_tests_counted() {
        let snap = shop();
        let out = call(&snap, json!({"target": "ORDER_CREATED"}));
        assert!(!out.is_error, "{}", out.text);
        let t = &out.text;
        assert!(t.contains("services/orders/src/publish.ts:4"), "{t}");
        assert!(t.contains("services/payments/src/payments.ts:2"), "{t}");
        assert!(t.contains("| producer | `publish`"), "{t}");
        assert!(t.contains("1 row(s) in test files left out"), "{t}");
        assert!(!t.contains("services/shipping"), "{t}");
        let deep = call(&snap, json!({"target": "orders.created", "depth": 2}));
        assert!(
            deep.text.contains("services/shipping/src/ship.ts:5"),
            "{}",
            deep.text
        );
        assert!(deep.text.contains("heuristic"), "{}", deep.text);
        // The consumer in payments is EXTERNAL to the orders owner.
        assert!(
            deep.text
                .contains("| EXTERNAL | consumer | `Payments.onOrder`"),
            "{}",
            deep.text
        );
        let with_tests = call(
            &snap,
            json!({"target": "orders.created", "include_tests": true}),
        );
        assert!(
            with_tests.text.contains("payments.spec.ts:1"),
            "{}",
            with_tests.text
        );
    }

    #[test]
    fn a_route_every_service_serves_can_be_asked_of_one() {
        let health = |line| FileFacts {
            http: vec![HttpFact::Route {
                method: "GET".into(),
                path: "/health".into(),
                handler: None,
                line,
            }],
            ..FileFacts::default()
        };
        let snap = Snapshot::from_facts(vec![
            ("services/cart", "server.js", health(3)),
            ("services/catalogue", "server.js", health(9)),
        ]);
        let all = call(&snap, json!({"target": "GET /health"}));
        assert!(
            all.text.contains("2 services serve this route"),
            "{}",
            all.text
        );
        for target in ["catalogue GET /health", "services/catalogue /health"] {
            let one = call(&snap, json!({ "target": target }));
            assert!(
                one.text.contains("services/catalogue/server.js:9"),
                "{}",
                one.text
            );
            assert!(!one.text.contains("services/cart/"), "{}", one.text);
            assert!(
                !one.text.contains("services serve this route"),
                "{}",
                one.text
            );
        }
        let none = call(&snap, json!({"target": "orders GET /health"}));
        assert!(none.text.contains("No gRPC service"), "{}", none.text);
    }

    #[test]
    fn unresolved_event_sites_of_the_topics_services_are_listed_not_counted() {
        let mut files = vec![
            (
                "services/orders",
                "src/publish.ts",
                FileFacts {
                    events: vec![ev(EventRole::Producer, FactValue::lit("orders.created"), 4)],
                    ..FileFacts::default()
                },
            ),
            (
                "services/payments",
                "src/payments.ts",
                FileFacts {
                    events: vec![ev(EventRole::Consumer, FactValue::lit("orders.created"), 2)],
                    ..FileFacts::default()
                },
            ),
        ];
        // A generic publisher in the producing service, one in an unrelated service.
        for (root, path) in [
            ("services/orders", "src/outbox.ts"),
            ("services/audit", "src/relay.ts"),
        ] {
            files.push((
                root,
                path,
                FileFacts {
                    events: vec![EventFact::at(EventRole::Producer, FactValue::dynamic(), "event bus: `publish(evt)` publishes an event whose type is known only at run time", 7)],
                    ..FileFacts::default()
                },
            ));
        }
        let snap = Snapshot::from_facts(files);
        let out = call(&snap, json!({"target": "orders.created"}));
        let t = &out.text;
        assert!(t.contains("`services/orders/src/outbox.ts:7`"), "{t}");
        assert!(t.contains("known only at run time"), "{t}");
        assert!(!t.contains("relay.ts"), "{t}");
        assert!(t.contains("1 other event site(s)"), "{t}");
    }

    #[test]
    fn unresolved_sites_in_tests_are_left_out_and_a_zero_says_what_was_searched() {
        let snap = Snapshot::from_facts(vec![
            (
                "services/orders",
                "src/publish.ts",
                FileFacts {
                    events: vec![ev(EventRole::Producer, FactValue::lit("orders.created"), 4)],
                    ..FileFacts::default()
                },
            ),
            (
                "services/orders",
                "src/publish.test.ts",
                FileFacts {
                    events: vec![EventFact::at(
                        EventRole::Consumer,
                        FactValue::dynamic(),
                        "event bus: a topic known only at run time",
                        9,
                    )],
                    ..FileFacts::default()
                },
            ),
        ]);
        let t = call(&snap, json!({"target": "orders.created"})).text;
        assert!(t.contains("**No consumer resolved**: 0 consumers of this topic among the 1 event site(s) resolved to a topic (1 unresolved)"), "{t}");
        assert!(!t.contains("publish.test.ts:9"), "{t}");
        assert!(t.contains("all in test files, left out"), "{t}");
        let t = call(
            &snap,
            json!({"target": "orders.created", "include_tests": true}),
        )
        .text;
        assert!(t.contains("`services/orders/src/publish.test.ts:9`"), "{t}");
    }

    #[test]
    fn a_name_nothing_resolves_is_found_where_it_is_written() {
        let snap = Snapshot::from_facts(vec![
            (
                "services/orders",
                "src/Config.java",
                FileFacts {
                    bindings: vec![
                        Binding {
                            name: "Config.ORDERS_QUEUE".into(),
                            value: FactValue::lit("orders-queue"),
                            line: 3,
                        },
                        Binding {
                            name: "new Queue#0".into(),
                            value: FactValue::lit("Orders-Queue"),
                            line: 7,
                        },
                    ],
                    http: vec![HttpFact::call(Some("GET"), "/orders/all", 9)],
                    events: vec![EventFact::at(
                        EventRole::Producer,
                        FactValue::dynamic(),
                        "orders queue sender",
                        12,
                    )],
                    ..FileFacts::default()
                },
            ),
            (
                "services/orders",
                "src/main/resources/application.properties",
                FileFacts {
                    properties: vec![Property {
                        key: "app.orders.queue".into(),
                        value: "orders-queue".into(),
                        line: 2,
                    }],
                    ..FileFacts::default()
                },
            ),
        ]);
        let t = call(&snap, json!({"target": "orders-queue"})).text;
        assert!(t.contains("**Written as a value at 3 place(s)**"), "{t}");
        assert!(
            t.contains("`services/orders/src/Config.java:3` — `Config.ORDERS_QUEUE`"),
            "{t}"
        );
        assert!(
            t.contains("`services/orders/src/Config.java:7` — `argument 1 of new Queue(…)`"),
            "{t}"
        );
        assert!(
            t.contains("application.properties:2` — `app.orders.queue`"),
            "{t}"
        );
        // A queue name is no URL: the unresolved HTTP call is not listed for it; a path is.
        assert!(!t.contains("Config.java:9"), "{t}");
        let t = call(&snap, json!({"target": "GET /orders/x"})).text;
        assert!(t.contains("Config.java:9"), "{t}");
        let t = call(&snap, json!({"target": "nothing-like-it"})).text;
        assert!(!t.contains("Written as a value"), "{t}");
    }

    /// A route nobody calls by a known URL: a webhook receiver in `hooks`, posted to by
    /// `sender` at a URL read from a subscription row, and other unresolved calls around it.
    #[test]
    fn a_route_without_caller_lists_the_unresolved_calls_whose_verb_fits() {
        let call_at = |method: Option<&str>, url: FactValue, line: u32| HttpFact::Call {
            method: method.map(str::to_string),
            url,
            line,
        };
        let mut sender = vec![
            call_at(Some("POST"), FactValue::reference("subs.DestUrl"), 3),
            call_at(Some("GET"), FactValue::dynamic(), 5),
            call_at(None, FactValue::dynamic(), 7),
        ];
        // Twelve more of the same verb, for the cap.
        sender.extend((0..12).map(|k| call_at(Some("POST"), FactValue::dynamic(), 20 + k)));
        let snap = Snapshot::from_facts(vec![
            (
                "services/hooks",
                "src/Endpoints.cs",
                FileFacts {
                    http: vec![HttpFact::route("POST", "/webhook-received", None, 4)],
                    ..FileFacts::default()
                },
            ),
            (
                "services/sender",
                "src/Sender.cs",
                FileFacts {
                    http: sender,
                    ..FileFacts::default()
                },
            ),
            (
                "services/sender",
                "tests/SenderTests.cs",
                FileFacts {
                    http: vec![call_at(Some("POST"), FactValue::dynamic(), 9)],
                    ..FileFacts::default()
                },
            ),
        ]);
        let t = call(&snap, json!({"target": "POST /webhook-received"})).text;
        assert!(t.contains("**No caller found**"), "{t}");
        assert!(t.contains("**May call — 14 HTTP call(s)"), "{t}");
        assert!(
            t.contains("- `services/sender/src/Sender.cs:3` — POST `{subs.DestUrl}` — "),
            "{t}"
        );
        // Another verb is no caller; the unknown verb comes after the same verb, so past the cap.
        assert!(!t.contains("Sender.cs:5`"), "{t}");
        assert!(!t.contains("Sender.cs:7`"), "{t}");
        assert!(
            t.contains("- … and 4 more (3 with the same verb, 1 with an unknown verb)."),
            "{t}"
        );
        assert!(t.contains("(1 more in test files left out"), "{t}");
        assert!(!t.contains("SenderTests.cs:9"), "{t}");
        let t = call(
            &snap,
            json!({"target": "POST /webhook-received", "include_tests": true}),
        )
        .text;
        assert!(t.contains("**May call — 15 HTTP call(s)"), "{t}");
    }

    #[test]
    fn depth_follows_a_typed_subscription_through_its_handlers_body() {
        let snap = crate::index::handlers::tests::typed_shop();
        let t = call(
            &snap,
            json!({"target": "OrderPaidIntegrationEvent", "depth": 2}),
        )
        .text;
        // The consumer is the handler's method, the registration its secondary evidence.
        assert!(
            t.contains("| consumer | `OrderPaidIntegrationEventHandler.Handle` | `services/ordering` | `services/ordering/Handlers/OrderPaidIntegrationEventHandler.cs:5` | exact |"),
            "{t}"
        );
        assert!(
            t.contains("registered at services/ordering/Extensions/Extensions.cs:5"),
            "{t}"
        );
        assert!(t.contains("| consumer | `ReceiptMailer.Consume`"), "{t}");
        // What the handler's body publishes is the next hop, and who handles that.
        assert!(
            t.contains("| topic | `StockReservedIntegrationEvent` | — | — | heuristic | `hop 2` |"),
            "{t}"
        );
        assert!(
            t.contains("| consumer | `StockReservedHandler.Handle` | `services/stock` | `services/stock/StockReservedHandler.cs:3` | heuristic |"),
            "{t}"
        );
        // The other service's handler of the same name is not this subscription's.
        assert!(
            !t.contains("services/stock/OrderPaidIntegrationEventHandler.cs"),
            "{t}"
        );
        let shallow = call(&snap, json!({"target": "OrderPaidIntegrationEvent"})).text;
        assert!(!shallow.contains("StockReserved"), "{shallow}");
        let none = call(&snap, json!({"target": "BeforeStartEvent"}));
        assert!(!none.text.contains("| consumer |"), "{}", none.text);
    }

    #[test]
    fn a_framework_lifecycle_event_expects_no_producer() {
        let snap = Snapshot::of_listeners(&[
            (
                "services/cart",
                "src/Warmup.java",
                "ApplicationReadyEvent",
                FRAMEWORK_EVENT_VIA,
            ),
            (
                "services/orders",
                "src/Audit.java",
                "OrderAudited",
                "ApplicationEvent",
            ),
        ]);
        let t = call(&snap, json!({"target": "ApplicationReadyEvent"})).text;
        assert!(t.contains("Published by the framework itself"), "{t}");
        assert!(!t.contains("No producer resolved"), "{t}");
        assert!(t.contains("`services/cart/src/Warmup.java:5`"), "{t}");
        // The workspace's own event without a producer is still said to have none.
        let t = call(&snap, json!({"target": "OrderAudited"})).text;
        assert!(t.contains("**No producer resolved**"), "{t}");
    }

    #[test]
    fn unknown_targets_past_end_and_bad_args() {
        let snap = shop();
        let out = call(&snap, json!({"target": "nothing.here"}));
        assert!(!out.is_error);
        assert!(
            out.text.contains("No gRPC service or method"),
            "{}",
            out.text
        );
        let out = call(&snap, json!({"target": "orders.created", "offset": 999}));
        assert!(out.text.contains("No rows at offset 999"), "{}", out.text);
        let out = call(&snap, json!({"target": "orders.created", "dept": 2}));
        assert!(out.is_error && out.text.contains("dept"));
        // Folded retry: `orders_created` finds `orders.created`.
        let out = call(&snap, json!({"target": "orders_created"}));
        assert!(out.text.contains("publish.ts:4"), "{}", out.text);
    }
}
