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

use std::collections::{BTreeSet, HashSet};

use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolDef, ToolEnv, ToolOutput, object_schema};
use crate::index::facts::EventRole;
use crate::index::graph::{Confidence, Graph, Loc, method_key, path_matches};
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
    let subject = resolve(g, target);
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
        Some(Subject::Routes(routes)) => route_rows_with(snap, routes, include_tests),
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

fn resolve_rpc(g: &Graph, target: &str) -> Option<Subject> {
    if target.contains(' ') || target.starts_with('/') {
        return None;
    }
    // `pkg.Service/Method` and `Service.Method`.
    let split = target
        .rsplit_once('/')
        .or_else(|| target.rsplit_once('.'))
        .filter(|(s, m)| !s.is_empty() && !m.is_empty());
    if let Some((svc, method)) = split {
        let contracts: Vec<u32> = crate::order::set_of(
            g.contracts_named(svc).into_iter().chain(
                (0..g.contracts.len() as u32)
                    .filter(|&c| g.contracts[c as usize].fqn.eq_ignore_ascii_case(svc)),
            ),
        )
        .into_iter()
        .collect();
        let key = method_key(method);
        let rpcs: Vec<u32> = contracts
            .iter()
            .flat_map(|&c| g.contracts[c as usize].rpcs.iter().copied())
            .filter(|&r| method_key(&g.rpcs[r as usize].name) == key)
            .collect();
        if !rpcs.is_empty() {
            return Some(Subject::Rpcs { contracts, rpcs });
        }
    }
    // A whole service.
    let contracts: Vec<u32> = (0..g.contracts.len() as u32)
        .filter(|&c| {
            let k = &g.contracts[c as usize];
            k.name.eq_ignore_ascii_case(target) || k.fqn.eq_ignore_ascii_case(target)
        })
        .collect();
    if !contracts.is_empty() {
        let rpcs = contracts
            .iter()
            .flat_map(|&c| g.contracts[c as usize].rpcs.iter().copied())
            .collect();
        return Some(Subject::Rpcs { contracts, rpcs });
    }
    // A bare method name.
    let key = method_key(target);
    let rpcs: Vec<u32> = (0..g.rpcs.len() as u32)
        .filter(|&r| method_key(&g.rpcs[r as usize].name) == key)
        .collect();
    if rpcs.is_empty() {
        return None;
    }
    let contracts = crate::order::set_of(rpcs.iter().map(|&r| g.rpcs[r as usize].contract))
        .into_iter()
        .collect();
    Some(Subject::Rpcs { contracts, rpcs })
}

/// A topic key: a code reference (`Topics.ORDER_CREATED`) keys on
/// its member; anything else stays whole; lower case.
fn topic_match_key(name: &str) -> String {
    let name = name.trim();
    let member = match name.rsplit_once('.') {
        Some((head, last))
            if head.chars().next().is_some_and(char::is_uppercase)
                && !last.is_empty()
                && last
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_') =>
        {
            last
        }
        _ => name,
    };
    member.to_lowercase()
}

fn folded(key: &str) -> String {
    key.chars()
        .map(|c| {
            if matches!(c, '.' | ':' | '-' | '/') {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// Topics matching the target: exact keys (the topic name, or a constant naming it) first,
/// else keys containing it; when nothing matches as written, once more with separators folded.
pub(crate) fn match_topics(g: &Graph, target: &str) -> Vec<u32> {
    let want = topic_match_key(target);
    // Every key of a topic: its name and the constants its sites referenced.
    let mut keys: Vec<Vec<String>> = g.topics.iter().map(|t| vec![t.key.clone()]).collect();
    for e in &g.events {
        if let Some(c) = e.how.strip_prefix("constant ") {
            keys[e.topic as usize].push(topic_match_key(c));
        }
    }
    for fold in [false, true] {
        let w = if fold { folded(&want) } else { want.clone() };
        let norm = |k: &String| if fold { folded(k) } else { k.clone() };
        let exact: Vec<u32> = (0..g.topics.len() as u32)
            .filter(|&t| keys[t as usize].iter().any(|k| norm(k) == w))
            .collect();
        if !exact.is_empty() {
            return exact;
        }
        if w.len() >= 3 {
            let loose: Vec<u32> = (0..g.topics.len() as u32)
                .filter(|&t| keys[t as usize].iter().any(|k| norm(k).contains(&w)))
                .collect();
            if !loose.is_empty() {
                return loose;
            }
        }
    }
    Vec::new()
}

/// Routes matching `METHOD /path` or `/path` (templates compare segment-wise).
fn match_routes(g: &Graph, target: &str) -> Vec<u32> {
    let (method, path) = match target.split_once(' ') {
        Some((m, p)) => (Some(m.trim().to_uppercase()), p.trim()),
        None => (None, target),
    };
    if !path.starts_with('/') {
        return Vec::new();
    }
    // `/items?api-version=2.0`: the routes of that path serving version 2.0, when the code
    // says which do.
    let asked = crate::index::graph::api_version_asked(path);
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let mut found = match_route_path(g, method.as_deref(), path);
    if let Some(v) = asked {
        let serves = |r: &u32| {
            let vs = &g.routes[*r as usize].versions;
            vs.is_empty() || vs.contains(&v)
        };
        if found.iter().any(serves) {
            found.retain(serves);
        }
    }
    found
}

/// Routes of `method` (any when `None`) whose path is `path`, else whose template `path`
/// matches.
fn match_route_path(g: &Graph, method: Option<&str>, path: &str) -> Vec<u32> {
    let norm = |p: &str| -> String {
        p.trim_end_matches('/')
            .split('/')
            .map(|s| {
                if (s.starts_with('{') && s.ends_with('}'))
                    || s.starts_with(':')
                    || (s.starts_with('<') && s.ends_with('>'))
                {
                    "{}"
                } else {
                    s
                }
            })
            .collect::<Vec<_>>()
            .join("/")
    };
    let want = norm(path);
    let method_ok = |m: &str| method.is_none_or(|w| m == "ANY" || m.eq_ignore_ascii_case(w));
    let exact: Vec<u32> = (0..g.routes.len() as u32)
        .filter(|&r| {
            let route = &g.routes[r as usize];
            method_ok(&route.method) && norm(&route.path) == want
        })
        .collect();
    if !exact.is_empty() {
        return exact;
    }
    (0..g.routes.len() as u32)
        .filter(|&r| {
            let route = &g.routes[r as usize];
            method_ok(&route.method) && path_matches(path, &route.path)
        })
        .collect()
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

pub(crate) fn rpc_rows(
    snap: &Snapshot,
    contracts: &[u32],
    rpcs: &[u32],
) -> (Vec<Row>, Vec<u16>, Vec<String>) {
    let g = &snap.graph;
    let rpc_set: HashSet<u32> = rpcs.iter().copied().collect();
    // Owners: roots of the handlers (or server registrations), else of the .proto.
    let mut owners: BTreeSet<u16> = crate::order::set_of(
        g.handlers
            .iter()
            .filter(|h| rpc_set.contains(&h.rpc))
            .map(|h| root_of(snap, h.at))
            .chain(
                g.servers
                    .iter()
                    .filter(|s| contracts.contains(&s.contract))
                    .map(|s| root_of(snap, s.at)),
            )
            .filter(|&r| !snap.files.is_empty() && (r as usize) < snap.roots.len()),
    );
    // Test handlers do not make a root an owner.
    owners.retain(|&r| {
        g.handlers.iter().any(|h| {
            rpc_set.contains(&h.rpc)
                && root_of(snap, h.at) == r
                && !snap.files[h.at.file as usize].is_test
        }) || g.servers.iter().any(|s| {
            contracts.contains(&s.contract)
                && root_of(snap, s.at) == r
                && !snap.files[s.at.file as usize].is_test
        })
    });
    if owners.is_empty() {
        owners = crate::order::set_of(
            contracts
                .iter()
                .map(|&c| root_of(snap, g.contracts[c as usize].def)),
        );
    }
    let ext = |l: Loc| !owners.contains(&root_of(snap, l));
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let shown: Vec<String> = contracts
        .iter()
        .take(5)
        .map(|&c| {
            let k = &g.contracts[c as usize];
            format!(
                "{} ({})",
                inline_code(&k.fqn),
                crate::render::code_loc(
                    &snap.display_path(&snap.files[k.def.file as usize]),
                    k.def.line
                )
            )
        })
        .collect();
    notes.insert(
        0,
        format!(
            "_Contract(s): {}{}_",
            shown.join(", "),
            if contracts.len() > 5 {
                format!(" … and {} more", contracts.len() - 5)
            } else {
                String::new()
            }
        ),
    );
    for h in g.handlers.iter().filter(|h| rpc_set.contains(&h.rpc)) {
        let rpc = &g.rpcs[h.rpc as usize];
        rows.push(Row {
            role: Role::Handler,
            element: h.label.clone(),
            at: Some(h.at),
            confidence: h.confidence,
            via: format!("{}.{}", g.contracts[rpc.contract as usize].name, rpc.name),
            external: ext(h.at),
        });
    }
    let mut calling_files: HashSet<(u32, u32)> = HashSet::new();
    for c in g.calls.iter().filter(|c| rpc_set.contains(&c.rpc)) {
        let rpc = &g.rpcs[c.rpc as usize];
        calling_files.insert((c.at.file, rpc.contract));
        rows.push(Row {
            role: Role::Client,
            element: c.label.clone(),
            at: Some(c.at),
            confidence: c.confidence,
            via: format!("{}.{}", g.contracts[rpc.contract as usize].name, rpc.name),
            external: ext(c.at),
        });
    }
    // Clients with no resolved call of the service in their file: they may call it
    // (heuristic at best). The same rule as analyze_grpc's "may call".
    let _ = &calling_files;
    let open: HashSet<u32> = contracts
        .iter()
        .flat_map(|&c| crate::tools::analyze_grpc::client_resolution(snap, c))
        .filter(|(_, in_file, _)| in_file.is_empty())
        .map(|(i, _, _)| i)
        .collect();
    for (ci, cl) in g.clients.iter().enumerate() {
        if !contracts.contains(&cl.contract) || !open.contains(&(ci as u32)) {
            continue;
        }
        rows.push(Row {
            role: Role::Client,
            element: format!("{} (builds a client)", cl.label),
            at: Some(cl.at),
            confidence: cl.confidence.max(Confidence::Heuristic),
            via: g.contracts[cl.contract as usize].name.clone(),
            external: ext(cl.at),
        });
    }
    if !rows.iter().any(|r| {
        r.role == Role::Client && r.at.is_some_and(|l| !snap.files[l.file as usize].is_test)
    }) {
        let sites: BTreeSet<u32> = g
            .calls
            .iter()
            .map(|c| c.at.file)
            .chain(g.clients.iter().map(|c| c.at.file))
            .collect();
        let roots: BTreeSet<u16> = sites.iter().map(|&f| snap.files[f as usize].root).collect();
        notes.push(format!(
            "**No client found** outside tests: searched {} gRPC call site(s) and {} client construction(s) in {} file(s) across {} of {} root(s).",
            g.calls.len(),
            g.clients.len(),
            sites.len(),
            roots.len(),
            snap.roots.len()
        ));
    }
    (rows, owners.into_iter().collect(), notes)
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

pub(crate) fn topic_rows(
    snap: &Snapshot,
    topics: &[u32],
    depth: usize,
) -> (Vec<Row>, Vec<u16>, Vec<String>) {
    topic_rows_with(snap, topics, depth, false)
}

/// [`topic_rows`], with the notes' unresolved sites in test files listed when `include_tests`.
fn topic_rows_with(
    snap: &Snapshot,
    topics: &[u32],
    depth: usize,
    include_tests: bool,
) -> (Vec<Row>, Vec<u16>, Vec<String>) {
    let g = &snap.graph;
    let owners = topic_owners(snap, topics);
    let ext = |l: Loc| !owners.contains(&root_of(snap, l));
    let mut rows = Vec::new();
    let mut frontier: Vec<u32> = topics.to_vec();
    let mut visited: HashSet<u32> = topics.iter().copied().collect();
    let mut file_linked = false;
    for hop in 0..depth {
        let mut next = Vec::new();
        for &t in &frontier {
            let topic = &g.topics[t as usize];
            let hop_conf = |c: Confidence| {
                if hop == 0 {
                    c
                } else {
                    c.max(Confidence::Heuristic)
                }
            };
            rows.push(Row {
                role: Role::Topic,
                element: topic.name.clone(),
                at: None,
                confidence: if hop == 0 {
                    Confidence::Exact
                } else {
                    Confidence::Heuristic
                },
                via: if hop == 0 {
                    "—".into()
                } else {
                    format!("hop {}", hop + 1)
                },
                external: true,
            });
            for e in g.events.iter().filter(|e| e.topic == t) {
                let role = match e.role {
                    EventRole::Producer => Role::Producer,
                    EventRole::Consumer => Role::Consumer,
                };
                rows.push(Row {
                    role,
                    element: enclosing(snap, e.at).unwrap_or_else(|| file_name(snap, e.at)),
                    at: Some(e.at),
                    confidence: hop_conf(e.confidence),
                    via: format!("{} ({}, {})", topic.name, e.via, e.how),
                    external: ext(e.at),
                });
                // Re-emission: a consuming file that also produces carries the chain on.
                if e.role == EventRole::Consumer && hop + 1 < depth {
                    for p in g.events.iter().filter(|p| {
                        p.role == EventRole::Producer && p.at.file == e.at.file && p.topic != t
                    }) {
                        if visited.insert(p.topic) {
                            next.push(p.topic);
                            file_linked = true;
                        }
                    }
                }
            }
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    let notes = topic_notes(snap, topics, &rows, file_linked, include_tests);
    (rows, owners.into_iter().collect(), notes)
}

/// The roots owning `topics`: those producing them outside tests; with no producer, those
/// declaring them (an AsyncAPI channel).
fn topic_owners(snap: &Snapshot, topics: &[u32]) -> BTreeSet<u16> {
    let g = &snap.graph;
    let owners: BTreeSet<u16> = crate::order::set_of(
        g.events
            .iter()
            .filter(|e| {
                topics.contains(&e.topic)
                    && e.role == EventRole::Producer
                    && !snap.files[e.at.file as usize].is_test
            })
            .map(|e| root_of(snap, e.at)),
    );
    if owners.is_empty() {
        // No producer: the roots declaring the topic (an AsyncAPI channel) own it.
        let names: HashSet<&str> = topics
            .iter()
            .map(|&t| g.topics[t as usize].key.as_str())
            .collect();
        return crate::order::set_of(
            snap.files
                .iter()
                .filter(|f| {
                    f.symbols().iter().any(|s| {
                        s.kind == crate::index::facts::SymbolKind::Topic
                            && names.contains(f.name(s).to_lowercase().as_str())
                    })
                })
                .map(|f| f.root),
        );
    }
    owners
}

/// The notes under a topic's rows: the topics, how hops were followed, a missing producer or
/// consumer said with the counts, and the unresolved event sites worth reading.
fn topic_notes(
    snap: &Snapshot,
    topics: &[u32],
    rows: &[Row],
    file_linked: bool,
    include_tests: bool,
) -> Vec<String> {
    let g = &snap.graph;
    let mut notes = Vec::new();
    let prod = rows.iter().any(|r| r.role == Role::Producer);
    let cons = rows.iter().any(|r| r.role == Role::Consumer);
    let names: Vec<String> = topics
        .iter()
        .map(|&t| inline_code(&g.topics[t as usize].name))
        .collect();
    notes.push(format!("_Topic(s): {}._", names.join(", ")));
    if file_linked {
        notes.push("_Hops past the first follow producers in the same file as a consumer (a service that consumes and re-emits; for a subscription registered by type, the handler class's file); those rows are heuristic._".into());
    }
    let framework = g.events.iter().any(|e| topics.contains(&e.topic))
        && g.events
            .iter()
            .filter(|e| topics.contains(&e.topic))
            .all(|e| e.via == crate::index::facts::FRAMEWORK_EVENT_VIA);
    if !prod && framework {
        notes.push(
            "_Published by the framework itself (a lifecycle event such as Spring Boot's `ApplicationReadyEvent`): no code of the workspace produces it, and none is expected; the rows are its listeners._"
                .into(),
        );
    } else if !prod {
        notes.push(format!(
            "**No producer resolved**: 0 producers of this topic among the {} event site(s) resolved to a topic ({} unresolved) across {} root(s). A topic name built at run time, a SQL trigger or an outbox table can still publish it.",
            g.events.len(),
            g.unresolved_events.len(),
            snap.roots.len()
        ));
    }
    if !cons {
        notes.push(format!(
            "**No consumer resolved**: 0 consumers of this topic among the {} event site(s) resolved to a topic ({} unresolved) across {} root(s). A subscription by pattern or a name built at run time would not show here.",
            g.events.len(),
            g.unresolved_events.len(),
            snap.roots.len()
        ));
    }
    let words: Vec<String> = topics
        .iter()
        .flat_map(|&t| target_words(&g.topics[t as usize].name))
        .collect();
    // Unresolved sites worth reading: those sharing a word with the topic, and those in a
    // service that produces or consumes it (a generic publisher of the same service, say).
    let linked_roots: BTreeSet<u16> = rows
        .iter()
        .filter(|r| matches!(r.role, Role::Producer | Role::Consumer))
        .filter_map(|r| r.at.map(|at| root_of(snap, at)))
        .collect();
    let maybe: Vec<(Loc, String)> = g
        .unresolved_events
        .iter()
        .filter(|(at, w)| shares_word(w, &words) || linked_roots.contains(&root_of(snap, *at)))
        .map(|(at, w)| (*at, w.clone()))
        .collect();
    let others = g.unresolved_events.len() - maybe.len();
    if !maybe.is_empty() {
        notes.push(unresolved_list(
            snap,
            "event site(s) the index could not resolve share a word with this topic or sit in a service that produces or consumes it; read them",
            maybe.into_iter(),
            include_tests,
        ));
    }
    if others > 0 {
        notes.push(format!(
            "_{others} other event site(s) in the workspace name their topic in a way the index could not resolve (none shares this topic's words or services); `analyze_impact` on a word of theirs lists them._"
        ));
    }
    notes
}

pub(crate) fn route_rows(snap: &Snapshot, routes: &[u32]) -> (Vec<Row>, Vec<u16>, Vec<String>) {
    route_rows_with(snap, routes, false)
}

/// [`route_rows`], with the notes' unresolved sites in test files listed when `include_tests`.
fn route_rows_with(
    snap: &Snapshot,
    routes: &[u32],
    include_tests: bool,
) -> (Vec<Row>, Vec<u16>, Vec<String>) {
    let g = &snap.graph;
    let owners: BTreeSet<u16> = crate::order::set_of(
        routes
            .iter()
            .map(|&r| root_of(snap, g.routes[r as usize].at)),
    );
    let rows = route_and_caller_rows(snap, routes, &owners);
    let mut notes = vec![
        "_Callers are matched by the path of their URL, with names, env defaults and config keys resolved (heuristic)._".to_string(),
    ];
    // A zero says what was searched: every HTTP call site the index holds, matched or not.
    let no_caller = !rows.iter().any(|r| {
        r.role == Role::Caller
            && (include_tests || r.at.is_none_or(|l| !snap.files[l.file as usize].is_test))
    });
    if no_caller {
        notes.push(searched_call_sites(snap));
    }
    // HTTP calls the index could not match that may still reach these routes: their host
    // names an owner service, or their path shares a literal segment with a route.
    let words = route_words(g, routes);
    let methods: Vec<&str> = routes
        .iter()
        .map(|&r| g.routes[r as usize].method.as_str())
        .collect();
    if no_caller {
        notes.extend(fitting_unresolved_calls(
            snap,
            &owners,
            &methods,
            &words,
            include_tests,
        ));
        return (rows, owners.into_iter().collect(), notes);
    }
    notes.extend(maybe_callers(
        snap,
        &owners,
        &methods,
        &words,
        include_tests,
    ));
    (rows, owners.into_iter().collect(), notes)
}

/// One row per route (its handler, with the API versions it serves) followed by one per call
/// of it; `owners` are the roots serving the routes.
fn route_and_caller_rows(snap: &Snapshot, routes: &[u32], owners: &BTreeSet<u16>) -> Vec<Row> {
    let g = &snap.graph;
    let ext = |l: Loc| !owners.contains(&root_of(snap, l));
    let mut rows = Vec::new();
    for &r in routes {
        let route = &g.routes[r as usize];
        // With the API versions it serves: one path may have a handler per version.
        let name = route.label();
        rows.push(Row {
            role: Role::Route,
            element: route
                .handler
                .clone()
                .unwrap_or_else(|| enclosing(snap, route.at).unwrap_or_else(|| name.clone())),
            at: Some(route.at),
            confidence: Confidence::Exact,
            via: if route.from_spec {
                format!("{name} (OpenAPI)")
            } else {
                name.clone()
            },
            external: ext(route.at),
        });
        // A caller is external to the route it calls: when two roots serve the same path (a
        // web UI's own page and the API it calls), the UI's call of the API is not "internal"
        // because the UI is an owner of the other route.
        let route_root = root_of(snap, route.at);
        for c in g.route_calls.iter().filter(|c| c.route == r) {
            rows.push(Row {
                role: Role::Caller,
                element: enclosing(snap, c.at).unwrap_or_else(|| file_name(snap, c.at)),
                at: Some(c.at),
                confidence: c.confidence,
                // A deployment's health check says what it runs.
                via: if c.probe {
                    format!("{name} ({})", c.path)
                } else {
                    name.clone()
                },
                external: root_of(snap, c.at) != route_root,
            });
        }
    }
    rows
}

/// The "No caller found" note: how many HTTP call sites were searched, in how many roots,
/// matched or not.
fn searched_call_sites(snap: &Snapshot) -> String {
    let g = &snap.graph;
    let sites: BTreeSet<(u32, u32)> = g
        .route_calls
        .iter()
        .map(|c| (c.at.file, c.at.line))
        .chain(g.unresolved_calls.iter().map(|c| (c.at.file, c.at.line)))
        .collect();
    let roots: BTreeSet<u16> = sites
        .iter()
        .map(|&(f, _)| snap.files[f as usize].root)
        .collect();
    format!(
        "**No caller found**: searched {} HTTP call site(s) in {} of {} root(s) ({} matched to a route, {} unresolved); the unresolved ones whose verb fits, if any, are listed below.",
        sites.len(),
        roots.len(),
        snap.roots.len(),
        g.route_calls
            .iter()
            .map(|c| (c.at.file, c.at.line))
            .collect::<BTreeSet<_>>()
            .len(),
        g.unresolved_calls.len()
    )
}

/// The literal path words of the routes (at least three letters, not a parameter, not `api`
/// or a version).
fn route_words(g: &Graph, routes: &[u32]) -> BTreeSet<String> {
    crate::order::set_of(routes.iter().flat_map(|&r| {
        g.routes[r as usize]
            .path
            .split('/')
            .filter(|w| {
                w.len() >= 3 && !is_param_segment(w) && !matches!(*w, "api" | "v1" | "v2" | "v3")
            })
            .map(str::to_lowercase)
            .collect::<Vec<_>>()
    }))
}

/// With no caller resolved, the listing of every unresolved call whose verb fits, ranked.
fn fitting_unresolved_calls(
    snap: &Snapshot,
    owners: &BTreeSet<u16>,
    methods: &[&str],
    words: &BTreeSet<String>,
    include_tests: bool,
) -> Option<String> {
    let g = &snap.graph;
    // No caller resolved: every unresolved call whose verb fits may be one (a webhook
    // posted to a URL read from a database, a client whose base URL is configured at
    // run time). They are listed ranked, so the zero is not taken for proof; a call
    // whose host names another service goes there, not here.
    let (calls, tests): (Vec<_>, Vec<_>) = g
        .unresolved_calls
        .iter()
        .filter(|c| c.to_root.is_none_or(|r| owners.contains(&r)))
        .partition(|c| include_tests || !snap.files[c.at.file as usize].is_test);
    let ranked = rank_unresolved_calls(
        methods,
        words,
        calls.iter().map(|c| (c.method.as_deref(), c.url.as_str())),
    );
    let tests = rank_unresolved_calls(
        methods,
        words,
        tests.iter().map(|c| (c.method.as_deref(), c.url.as_str())),
    )
    .len();
    (!ranked.is_empty() || tests > 0).then(|| ranked_call_list(snap, &calls, &ranked, tests))
}

/// With callers resolved, the unresolved HTTP calls that may still reach the routes: their
/// path shares a word, or their host names an owner service and their path is unknown.
fn maybe_callers(
    snap: &Snapshot,
    owners: &BTreeSet<u16>,
    methods: &[&str],
    words: &BTreeSet<String>,
    include_tests: bool,
) -> Option<String> {
    let g = &snap.graph;
    let maybe: Vec<(Loc, String)> = g
        .unresolved_calls
        .iter()
        .filter(|c| {
            // A call whose verb is known reaches only routes of that verb (or of any).
            let verb_fits = c.method.as_deref().is_none_or(|m| {
                methods
                    .iter()
                    .any(|r| *r == "ANY" || r.eq_ignore_ascii_case(m))
            });
            let own = call_words(&c.url);
            let shares = own.iter().any(|w| words.contains(w));
            // Its host names an owner service and its path is unknown, or it shares a word.
            verb_fits
                && (shares || (own.is_empty() && c.to_root.is_some_and(|r| owners.contains(&r))))
        })
        .map(|c| (c.at, format!("`{}` — {}", c.url, c.why)))
        .collect();
    (!maybe.is_empty()).then(|| {
        unresolved_list(
            snap,
            "HTTP call(s) the index could not match to a route may reach these routes (their path shares a word, or their host names the service and their path is unknown)",
            maybe.into_iter(),
            include_tests,
        )
    })
}

/// A call URL's literal path words, at least three letters each (not its base or other
/// holes: `{config x.orders}/orders` has the one word `orders`; not its query's `k=v`).
fn call_words(url: &str) -> Vec<String> {
    url.split(['/', '?', '&'])
        .filter(|w| w.chars().count() >= 3 && !w.contains(['{', '}', ':', '.', '=']))
        .map(str::to_lowercase)
        .collect()
}

/// How many unresolved calls a "no caller" note shows before counting the rest.
const MAY_CALL_SHOWN: usize = 10;

/// The unresolved HTTP calls, given as (verb, URL as resolved), that may reach routes of
/// `methods` whose literal path words are `words`: the indexes of those whose verb fits
/// (the same verb, any verb for an `ANY` route, or a verb the index does not know), best
/// first — the same verb before an unknown one, then more shared path words, then a path
/// with no literal word (it may be anything) before one whose words are all different,
/// then in the given order.
fn rank_unresolved_calls<'a>(
    methods: &[&str],
    words: &BTreeSet<String>,
    calls: impl Iterator<Item = (Option<&'a str>, &'a str)>,
) -> Vec<usize> {
    // (not the same verb, more shared words first, words all different), index.
    type Rank = (bool, std::cmp::Reverse<usize>, bool);
    let mut ranked: Vec<(Rank, usize)> = calls
        .enumerate()
        .filter_map(|(i, (verb, url))| {
            let same_verb = match verb {
                None => false,
                Some(v) => {
                    if !methods
                        .iter()
                        .any(|m| *m == "ANY" || m.eq_ignore_ascii_case(v))
                    {
                        return None;
                    }
                    true
                }
            };
            let own = call_words(url);
            let shared = own.iter().filter(|w| words.contains(*w)).count();
            let elsewhere = shared == 0 && !own.is_empty();
            Some(((!same_verb, std::cmp::Reverse(shared), elsewhere), i))
        })
        .collect();
    crate::order::sort_by_key(&mut ranked, |(k, _)| *k);
    ranked.into_iter().map(|(_, i)| i).collect()
}

/// The note under a route with no caller: the unresolved calls `ranked` picked out of
/// `calls`, with `path:line`, verb, URL and why, the first [`MAY_CALL_SHOWN`] of them, then
/// how many more; `tests` counts those left out in test files.
fn ranked_call_list(
    snap: &Snapshot,
    calls: &[&crate::index::graph::UnresolvedCall],
    ranked: &[usize],
    tests: usize,
) -> String {
    let mut out = if ranked.is_empty() {
        format!(
            "_Unresolved: {tests} HTTP call(s) with a fitting verb the index could not match to a route — all in test files, left out (pass `include_tests: true`)._\n"
        )
    } else {
        format!(
            "**May call — {} HTTP call(s) the index could not match to a route have a fitting verb; any of them may reach these routes (same verb first, then those sharing path words); read them:**\n",
            ranked.len()
        )
    };
    if tests > 0 && !ranked.is_empty() {
        out.push_str(&format!(
            "_({tests} more in test files left out; pass `include_tests: true`.)_\n"
        ));
    }
    for &i in ranked.iter().take(MAY_CALL_SHOWN) {
        let c = calls[i];
        out.push_str(&format!(
            "- `{}:{}` — {} `{}` — {}\n",
            snap.display_path(&snap.files[c.at.file as usize]),
            c.at.line,
            c.method.as_deref().unwrap_or("(verb unknown)"),
            c.url,
            c.why
        ));
    }
    if ranked.len() > MAY_CALL_SHOWN {
        let rest = &ranked[MAY_CALL_SHOWN..];
        let unknown = rest.iter().filter(|&&i| calls[i].method.is_none()).count();
        out.push_str(&format!(
            "- … and {} more ({} with the same verb, {unknown} with an unknown verb).\n",
            rest.len(),
            rest.len() - unknown
        ));
    }
    out
}

/// For a target that names no RPC, topic or route: the ones whose name contains it (a path
/// without its verb, `/carts`), the routes whose path ends with it (a path written without
/// the prefix its router or class adds: `GET /fetch/{sku}` for `GET /api/fetch/:sku`), and
/// near misses by spelling (`ordrs` for `orders`), as a line naming up to five to pass.
fn close_names(snap: &Snapshot, target: &str) -> String {
    use crate::resources::Kind;
    let mut candidates = Vec::new();
    for kind in [Kind::Rpc, Kind::Topic, Kind::Route] {
        candidates.extend(crate::resources::names(snap, kind));
    }
    let mut ranked = route_suffix_matches(&candidates, target);
    for n in crate::completion::rank(candidates.clone(), target)
        .into_iter()
        .chain(spelling_neighbours(&candidates, target))
    {
        if !ranked.contains(&n) {
            ranked.push(n);
        }
    }
    if ranked.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = ranked.iter().take(5).map(|n| inline_code(n)).collect();
    format!(
        "\n_Close names ({} in all): {}; pass one as `target`._\n",
        ranked.len(),
        shown.join(", ")
    )
}

/// A route's path as a list of segments to compare: literals lower-cased, every parameter
/// form (`{id}`, `{id:int}`, `:id`, `<id>`, `*`) the same.
fn route_shape(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            if is_param_segment(s) {
                "{}".to_string()
            } else {
                s.to_lowercase()
            }
        })
        .collect()
}

/// The route names (`METHOD /path`) whose path ends with the target's path and has more
/// segments (a prefix the target left out), with the same verb when the target gives one.
fn route_suffix_matches(candidates: &[String], target: &str) -> Vec<String> {
    let target = target.trim();
    let (verb, path) = match target.split_once(' ') {
        Some((v, p)) if p.trim_start().starts_with('/') => (Some(v), p.trim()),
        _ if target.starts_with('/') => (None, target),
        _ => return Vec::new(),
    };
    let want = route_shape(path);
    if want.is_empty() {
        return Vec::new();
    }
    candidates
        .iter()
        .filter(|c| {
            let Some((m, p)) = c.split_once(' ') else {
                return false;
            };
            let have = route_shape(p);
            let verb_fits =
                verb.is_none_or(|v| v.eq_ignore_ascii_case(m) || m.eq_ignore_ascii_case("ANY"));
            verb_fits && have.len() > want.len() && have.ends_with(&want)
        })
        .cloned()
        .collect()
}

/// The candidates spelled within a few edits of the target (a quarter of its length, at
/// least one), nearest first; none for targets shorter than three characters.
fn spelling_neighbours(candidates: &[String], target: &str) -> Vec<String> {
    let q: Vec<char> = target.trim().to_lowercase().chars().take(64).collect();
    if q.len() < 3 {
        return Vec::new();
    }
    let most = (q.len() / 4).max(1);
    let mut near: Vec<(usize, &String)> = candidates
        .iter()
        .filter_map(|c| {
            let low: Vec<char> = c.to_lowercase().chars().take(64).collect();
            if low.len().abs_diff(q.len()) > most {
                return None;
            }
            let d = crate::resources::edit_distance(&q, &low);
            (d > 0 && d <= most).then_some((d, c))
        })
        .collect();
    crate::order::sort(&mut near);
    near.into_iter().map(|(_, c)| c.clone()).collect()
}

/// The words of a target worth matching against unresolved sites (`orders.created` →
/// `orders`, `created`), at least three letters each.
fn target_words(target: &str) -> Vec<String> {
    target
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| {
            w.len() >= 3
                && !matches!(
                    *w,
                    "api" | "get" | "post" | "put" | "delete" | "http" | "https"
                )
        })
        .map(str::to_lowercase)
        .collect()
}

/// For a target nothing resolves to: the constants and settings whose value is exactly it
/// (`ORDERS_QUEUE = "orders-queue"`, `orders.queue: orders-queue`), so a queue that is only
/// declared (a `new Queue(NAME)` nobody consumes) or a topic used by a library the index
/// does not know is still found where it is written. Empty when there are none.
fn written_values(snap: &Snapshot, target: &str, include_tests: bool) -> String {
    const SHOWN: usize = 10;
    let target = target.trim();
    if target.is_empty() {
        return String::new();
    }
    let mut found: Vec<(String, u32, String)> = Vec::new();
    for f in snap.files.iter() {
        if f.is_test && !include_tests {
            continue;
        }
        let facts = f.facts();
        let path = snap.display_path(f);
        for b in &facts.bindings {
            if b.value
                .as_lit()
                .is_some_and(|v| v.eq_ignore_ascii_case(target))
            {
                // `new Queue#0` (a constructor's argument) reads as what it is.
                let shown = crate::index::lang::bind::describe_ctor_arg(&b.name)
                    .unwrap_or_else(|| b.name.clone());
                found.push((path.to_string(), b.line, shown));
            }
        }
        for p in &facts.properties {
            if p.value.eq_ignore_ascii_case(target) {
                found.push((path.to_string(), p.line, p.key.clone()));
            }
        }
    }
    if found.is_empty() {
        return String::new();
    }
    crate::order::sort_by(&mut found, |a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    found.dedup();
    let mut out = format!(
        "\n**Written as a value at {} place(s)** (constants and settings equal to {}; no producer, consumer, route or call the index recognises uses them):\n",
        found.len(),
        inline_code(target)
    );
    for (path, line, name) in found.iter().take(SHOWN) {
        out.push_str(&format!("- `{path}:{line}` — {}\n", inline_code(name)));
    }
    if found.len() > SHOWN {
        out.push_str(&format!("- … and {} more\n", found.len() - SHOWN));
    }
    out
}

/// True when `text` contains one of `words` (case-insensitive).
fn shares_word(text: &str, words: &[String]) -> bool {
    let text = text.to_lowercase();
    words.iter().any(|w| text.contains(w.as_str()))
}

/// True for a route parameter segment (`{id}`, `:id`, `<id>`).
fn is_param_segment(s: &str) -> bool {
    s.starts_with('{') || s.starts_with(':') || s.starts_with('<') || s.starts_with('*')
}

/// A note listing unresolved sites with `path:line` and why, at most 15 of them.
fn unresolved_list(
    snap: &Snapshot,
    what: &str,
    sites: impl Iterator<Item = (Loc, String)>,
    include_tests: bool,
) -> String {
    let all: Vec<(Loc, String)> = sites.collect();
    let before = all.len();
    let sites: Vec<(Loc, String)> = all
        .into_iter()
        .filter(|(at, _)| include_tests || !snap.files[at.file as usize].is_test)
        .collect();
    let tests = before - sites.len();
    if sites.is_empty() {
        return format!(
            "_Unresolved: {tests} {what} — all in test files, left out (pass `include_tests: true`)._\n"
        );
    }
    let mut out = format!("**Unresolved: {} {what}:**\n", sites.len());
    if tests > 0 {
        out.push_str(&format!(
            "_({tests} more in test files left out; pass `include_tests: true`.)_\n"
        ));
    }
    for (at, why) in sites.iter().take(15) {
        out.push_str(&format!(
            "- `{}:{}` — {}\n",
            snap.display_path(&snap.files[at.file as usize]),
            at.line,
            why
        ));
    }
    if sites.len() > 15 {
        out.push_str(&format!("- … and {} more.\n", sites.len() - 15));
    }
    out
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
mod tests {
    use super::*;

    #[test]
    fn topic_keys_follow_code_references() {
        assert_eq!(topic_match_key("Topics.ORDER_CREATED"), "order_created");
        assert_eq!(topic_match_key("orders.created"), "orders.created");
        assert_eq!(topic_match_key("ORDER_CREATED"), "order_created");
        assert_eq!(folded("orders.created"), "orders_created");
    }

    #[test]
    fn near_misses_name_the_route_with_its_prefix_and_the_topic_spelled_right() {
        let names: Vec<String> = [
            "GET /api/fetch/:sku",
            "PUT /api/rate/{sku}/{score:int}",
            "GET /fetch",
            "orders",
            "orders.created.v2",
            "ANY /_health",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            route_suffix_matches(&names, "GET /fetch/{sku}"),
            vec!["GET /api/fetch/:sku"]
        );
        assert_eq!(
            route_suffix_matches(&names, "PUT /rate/{sku}/{score}"),
            vec!["PUT /api/rate/{sku}/{score:int}"]
        );
        // Another verb, the same length, or no path: none.
        assert!(route_suffix_matches(&names, "POST /fetch/{sku}").is_empty());
        assert!(route_suffix_matches(&names, "GET /api/fetch/{x}").is_empty());
        assert!(route_suffix_matches(&names, "orders").is_empty());
        assert_eq!(spelling_neighbours(&names, "ordrs"), vec!["orders"]);
        assert_eq!(spelling_neighbours(&names, "ÖRDERS"), vec!["orders"]);
        assert!(spelling_neighbours(&names, "or").is_empty());
        assert!(spelling_neighbours(&names, "payments").is_empty());
    }

    #[test]
    fn unresolved_calls_rank_by_verb_then_shared_path_words() {
        let words: BTreeSet<String> = ["webhook-received".to_string(), "größe".to_string()]
            .into_iter()
            .collect();
        let calls = [
            (Some("GET"), "{}"),                            // another verb: out
            (None, "{}"),                                   // unknown verb
            (Some("POST"), "/api/other"),                   // same verb, other words
            (Some("post"), "{subs.DestUrl}"),               // same verb, nothing known
            (Some("POST"), "{env HOOKS}/webhook-received"), // same verb, a shared word
            (None, "{base}/größe?x=1"),                     // unknown verb, a shared word
        ];
        let ranked = rank_unresolved_calls(&["POST"], &words, calls.into_iter());
        assert_eq!(ranked, vec![4, 3, 2, 5, 1]);
        // An `ANY` route fits every verb; no call, no rank.
        let ranked = rank_unresolved_calls(&["ANY"], &words, calls.into_iter());
        assert_eq!(ranked.len(), 6);
        assert!(rank_unresolved_calls(&["PUT"], &words, std::iter::empty()).is_empty());
        assert_eq!(
            call_words("{base}/Orders/{}?page=2&größe"),
            vec!["orders", "größe"]
        );
    }
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
                    events: vec![EventFact {
                        role: EventRole::Producer,
                        topic: FactValue::dynamic(),
                        via: "event bus: `publish(evt)` publishes an event whose type is known only at run time".into(),
                        line: 7,
                    }],
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
                    events: vec![EventFact {
                        role: EventRole::Consumer,
                        topic: FactValue::dynamic(),
                        via: "event bus: a topic known only at run time".into(),
                        line: 9,
                    }],
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
                    http: vec![HttpFact::Call {
                        method: Some("GET".into()),
                        url: FactValue::lit("/orders/all"),
                        line: 9,
                    }],
                    events: vec![EventFact {
                        role: EventRole::Producer,
                        topic: FactValue::dynamic(),
                        via: "orders queue sender".into(),
                        line: 12,
                    }],
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
                    http: vec![HttpFact::Route {
                        method: "POST".into(),
                        path: "/webhook-received".into(),
                        handler: None,
                        line: 4,
                    }],
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
