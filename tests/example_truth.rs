//! The polyglot example workspace against its hand-written ground truth.
//!
//! `examples/polyglot-shop.truth.json` was written by reading the sources of
//! `examples/polyglot-shop`: every gRPC server, handler, client and call, every topic producer
//! and consumer, every HTTP route and caller, the service-to-service edges, the rejected files,
//! plus representative declarations and imports. Each test below indexes the workspace through
//! the library API (zero-config discovery, then a full rebuild) and compares one family of
//! facts. gRPC, topics, routes, edges and rejected files must match with 100 % precision and
//! recall; declarations and imports are checked for recall. A failure lists every missing and
//! extra fact at once, as `missing|extra <kind> <path:line> <detail>`.
//!
//! Test files are left out of the comparison (tools leave them out by default); generated
//! stubs are not: a generated file that shows up as a server or caller is an extra fact.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::{Arc, OnceLock};

use mesh_mcp::EventRole;
use mesh_mcp::Indexer;
use mesh_mcp::{Confidence, Loc};
use mesh_mcp::{FileEntry, IndexHandle, Snapshot};
use serde::Deserialize;

const WORKSPACE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/polyglot-shop");
const TRUTH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/polyglot-shop.truth.json"
);

// ---------------------------------------------------------------------------------------------
// The truth file
// ---------------------------------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Truth {
    /// Conventions, for the human reader.
    #[allow(dead_code)]
    about: String,
    roots: Vec<String>,
    declarations: Vec<Declaration>,
    dependents: Vec<Dependent>,
    grpc: Vec<ContractTruth>,
    topics: Vec<TopicTruth>,
    routes: Vec<RouteTruth>,
    service_edges: Vec<EdgeTruth>,
    rejected: Vec<RejectedTruth>,
    not_indexed: Vec<NotIndexed>,
    generated: Vec<String>,
    tests: Vec<String>,
    secrets: Vec<Secret>,
    docs: Vec<DocTruth>,
    injections: Vec<Injection>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Declaration {
    name: String,
    kind: String,
    path: String,
    line: u32,
    container: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Dependent {
    target: String,
    importers: Vec<Importer>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Importer {
    path: String,
    line: u32,
    module: String,
    #[serde(default)]
    names: Vec<String>,
    alias: Option<String>,
    #[serde(default)]
    reexport: bool,
    /// A test file: its imports are facts like any other, only answers leave them out.
    #[serde(default)]
    #[allow(dead_code)]
    test: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ContractTruth {
    fqn: String,
    definition: String,
    copies: Vec<String>,
    rpcs: BTreeMap<String, String>,
    servers: Vec<String>,
    handlers: BTreeMap<String, Vec<String>>,
    clients: Vec<String>,
    calls: BTreeMap<String, Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TopicTruth {
    name: String,
    producers: Vec<EventSite>,
    consumers: Vec<EventSite>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EventSite {
    at: String,
    /// The library or convention; documentation (extractors name it freely).
    #[allow(dead_code)]
    via: String,
    /// How the graph resolves the name: `literal`, `constant NAME` or `env VAR default`.
    how: String,
    /// How the name is written in the source, for the human reader.
    #[allow(dead_code)]
    written: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RouteTruth {
    method: String,
    path: String,
    at: String,
    #[allow(dead_code)]
    handler: Option<String>,
    /// Declared in an OpenAPI document rather than in code.
    #[serde(default)]
    spec: bool,
    callers: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EdgeTruth {
    from: String,
    to: String,
    kind: String,
    via: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RejectedTruth {
    path: String,
    label: String,
    why: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NotIndexed {
    path: String,
    why: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Secret {
    path: String,
    key: String,
    line: u32,
    raw: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DocTruth {
    path: String,
    title: String,
    line: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Injection {
    path: String,
    markers: Vec<String>,
}

fn truth() -> &'static Truth {
    static TRUTH_FILE: OnceLock<Truth> = OnceLock::new();
    TRUTH_FILE.get_or_init(|| {
        let text = std::fs::read_to_string(TRUTH)
            .unwrap_or_else(|e| panic!("cannot read the truth file {TRUTH}: {e}"));
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{TRUTH} is not a valid truth file: {e}"))
    })
}

// ---------------------------------------------------------------------------------------------
// The index
// ---------------------------------------------------------------------------------------------

/// The index of the example, built once for every test of this file.
fn snapshot() -> &'static Snapshot {
    static SNAPSHOT: OnceLock<Snapshot> = OnceLock::new();
    SNAPSHOT.get_or_init(|| {
        let config = mesh_mcp::discover(Path::new(WORKSPACE), None)
            .unwrap_or_else(|e| panic!("cannot configure the example workspace: {e}"));
        Indexer::new(Arc::new(config), IndexHandle::new()).rebuild()
    })
}

/// Indexed files by workspace-relative path.
fn files_by_path(snap: &Snapshot) -> HashMap<String, &FileEntry> {
    snap.files
        .iter()
        .map(|f| (snap.display_path(f), f.as_ref()))
        .collect()
}

fn file_of(snap: &Snapshot, loc: Loc) -> &FileEntry {
    &snap.files[loc.file as usize]
}

/// `path:line` of a location, workspace-relative.
fn at(snap: &Snapshot, loc: Loc) -> String {
    format!("{}:{}", snap.display_path(file_of(snap, loc)), loc.line)
}

fn root_label(snap: &Snapshot, file: &FileEntry) -> String {
    snap.roots
        .get(file.root as usize)
        .map_or_else(|| "?".to_string(), |r| r.label.clone())
}

/// Routes are compared with a leading `/` whatever the framework wrote
/// (`[Route("api/notifications")]` serves `/api/notifications`).
fn normalise_route_path(path: &str) -> String {
    let trimmed = path.trim_start_matches('/');
    format!("/{trimmed}")
}

// ---------------------------------------------------------------------------------------------
// Comparing and reporting
// ---------------------------------------------------------------------------------------------

/// Collects the differences of one test and fails with all of them at once.
#[derive(Default)]
struct Diff {
    lines: Vec<String>,
    checked: usize,
}

impl Diff {
    /// Compares expected and actual facts (`path:line detail` strings) of one kind, both ways.
    fn sets(&mut self, kind: &str, expected: &BTreeSet<String>, actual: &BTreeSet<String>) {
        self.checked += expected.len();
        for fact in expected.difference(actual) {
            self.lines.push(format!("missing {kind} {fact}"));
        }
        for fact in actual.difference(expected) {
            self.lines.push(format!("extra {kind} {fact}"));
        }
    }

    /// Records one expected fact that was not found (recall-only checks).
    fn missing(&mut self, kind: &str, fact: String) {
        self.lines.push(format!("missing {kind} {fact}"));
    }

    fn wrong(&mut self, kind: &str, fact: String) {
        self.lines.push(format!("wrong {kind} {fact}"));
    }

    fn finish(self, what: &str) {
        if !self.lines.is_empty() {
            panic!(
                "{what}: {} difference(s) from {TRUTH} ({} expected facts checked):\n  {}",
                self.lines.len(),
                self.checked,
                self.lines.join("\n  ")
            );
        }
    }
}

fn set<I: IntoIterator<Item = String>>(items: I) -> BTreeSet<String> {
    items.into_iter().collect()
}

/// Lowercase without `_`/`-`, as the graph folds method names (`record_entry` = `RecordEntry`).
fn fold(s: &str) -> String {
    s.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

fn split_at(loc: &str) -> (&str, u32) {
    let (path, line) = loc
        .rsplit_once(':')
        .unwrap_or_else(|| panic!("truth location `{loc}` is not path:line"));
    let line = line
        .parse()
        .unwrap_or_else(|_| panic!("truth location `{loc}` has no line number"));
    (path, line)
}

// ---------------------------------------------------------------------------------------------
// The truth itself
// ---------------------------------------------------------------------------------------------

/// One line of a source file of the example (1-based), or `None` past the end.
fn source_line(
    sources: &mut HashMap<String, Vec<String>>,
    path: &str,
    line: u32,
) -> Option<String> {
    let lines = sources.entry(path.to_string()).or_insert_with(|| {
        let bytes = std::fs::read(Path::new(WORKSPACE).join(path)).unwrap_or_default();
        String::from_utf8_lossy(&bytes)
            .lines()
            .map(str::to_string)
            .collect()
    });
    lines.get((line as usize).checked_sub(1)?).cloned()
}

/// Guards the hand-written truth against typos: every path exists and every `path:line`
/// holds what the fact is about (the declared name, the service, the method, the topic or
/// its constant, the route path, the imported module). Independent of the extractors.
#[test]
fn truth_file_points_at_the_right_source_lines() {
    let t = truth();
    let mut sources = HashMap::new();
    let mut diff = Diff::default();
    let mut expect = |diff: &mut Diff, what: &str, loc: &str, needle: &str, folded: bool| {
        diff.checked += 1;
        let (path, line) = split_at(loc);
        match source_line(&mut sources, path, line) {
            None => diff.wrong("truth", format!("{loc} ({what}): no such file or line")),
            Some(text) => {
                let hit = if folded {
                    fold(&text).contains(&fold(needle))
                } else {
                    text.contains(needle)
                };
                if !hit {
                    diff.wrong(
                        "truth",
                        format!("{loc} ({what}): the line does not mention `{needle}`: {text:?}"),
                    );
                }
            }
        }
    };
    for d in &t.declarations {
        let needle = match d.kind.as_str() {
            "endpoint" => d.name.split(' ').next().unwrap_or(&d.name).to_lowercase(),
            _ => d.name.rsplit('.').next().unwrap_or(&d.name).to_string(),
        };
        let loc = format!("{}:{}", d.path, d.line);
        expect(
            &mut diff,
            "declaration",
            &loc,
            &needle,
            d.kind == "endpoint",
        );
    }
    for dep in &t.dependents {
        for i in &dep.importers {
            let loc = format!("{}:{}", i.path, i.line);
            expect(&mut diff, "import", &loc, &i.module, false);
        }
    }
    for c in &t.grpc {
        let name = c.fqn.rsplit('.').next().unwrap_or(&c.fqn);
        for copy in c.copies.iter().chain([&c.definition]) {
            expect(
                &mut diff,
                "contract",
                copy,
                &format!("service {name}"),
                false,
            );
        }
        for (rpc, loc) in &c.rpcs {
            expect(&mut diff, "rpc", loc, &format!("rpc {rpc}("), false);
        }
        for loc in c.servers.iter().chain(&c.clients) {
            expect(&mut diff, "server/client", loc, name, false);
        }
        for (rpc, locs) in c.handlers.iter().chain(&c.calls) {
            if !c.rpcs.contains_key(rpc) {
                diff.wrong(
                    "truth",
                    format!("{} lists `{rpc}`, not an RPC of it", c.fqn),
                );
            }
            for loc in locs {
                expect(&mut diff, "handler/call", loc, rpc, true);
            }
        }
    }
    for topic in &t.topics {
        for site in topic.producers.iter().chain(&topic.consumers) {
            let needle = if site.how == "literal" {
                if split_at(&site.at).0.ends_with(".yaml") {
                    "subscribe"
                } else {
                    topic.name.as_str()
                }
            } else if let Some(constant) = site.how.strip_prefix("constant ") {
                constant.rsplit('.').next().unwrap_or(constant)
            } else {
                site.how
                    .strip_prefix("env ")
                    .and_then(|v| v.strip_suffix(" default"))
                    .unwrap_or(&site.how)
            };
            expect(&mut diff, "event", &site.at, needle, false);
        }
    }
    for r in &t.routes {
        if r.spec {
            expect(
                &mut diff,
                "spec route",
                &r.at,
                &format!("{}:", r.method.to_lowercase()),
                false,
            );
        } else {
            let last = r.path.rsplit('/').next().unwrap_or(&r.path);
            expect(&mut diff, "route", &r.at, last, false);
        }
        let first = r
            .path
            .trim_start_matches('/')
            .split('/')
            .next()
            .unwrap_or("");
        for caller in &r.callers {
            expect(
                &mut diff,
                "route caller",
                caller,
                &format!("/{first}"),
                false,
            );
        }
    }
    for s in &t.secrets {
        let loc = format!("{}:{}", s.path, s.line);
        expect(&mut diff, "secret", &loc, &s.raw, false);
    }
    for d in &t.docs {
        let loc = format!("{}:{}", d.path, d.line);
        expect(&mut diff, "doc section", &loc, &d.title, false);
    }
    for i in &t.injections {
        let text = std::fs::read_to_string(Path::new(WORKSPACE).join(&i.path)).unwrap_or_default();
        for m in &i.markers {
            diff.checked += 1;
            if !text.contains(m.as_str()) {
                diff.wrong(
                    "truth",
                    format!("{} does not contain the marker `{m}`", i.path),
                );
            }
        }
    }
    let listed = t
        .rejected
        .iter()
        .map(|r| &r.path)
        .chain(t.not_indexed.iter().map(|n| &n.path))
        .chain(&t.generated)
        .chain(&t.tests);
    for path in listed {
        diff.checked += 1;
        if std::fs::symlink_metadata(Path::new(WORKSPACE).join(path)).is_err() {
            diff.wrong("truth", format!("{path}: no such file in the example"));
        }
    }
    diff.finish("the truth file");
}

// ---------------------------------------------------------------------------------------------
// Workspace shape, crawl and guard
// ---------------------------------------------------------------------------------------------

#[test]
fn zero_config_finds_every_service_root() {
    let snap = snapshot();
    let mut diff = Diff::default();
    let actual = set(snap.roots.iter().map(|r| r.label.clone()));
    let expected = set(truth().roots.iter().cloned());
    diff.sets("root", &expected, &actual);
    diff.finish("roots");
}

#[test]
fn rejected_files_with_reasons_and_unindexed_paths() {
    let snap = snapshot();
    let t = truth();
    let mut diff = Diff::default();
    let expected = set(t.rejected.iter().map(|r| format!("{} {}", r.path, r.label)));
    let actual = set(snap.rejected.iter().map(|r| {
        let label = match snap.roots.get(r.root as usize) {
            Some(root) if root.label != "." => format!("{}/{}", root.label, r.path),
            _ => r.path.clone(),
        };
        format!("{label} {}", r.label)
    }));
    diff.sets("rejected", &expected, &actual);
    let files = files_by_path(snap);
    for n in &t.not_indexed {
        diff.checked += 1;
        if files.contains_key(&n.path) {
            diff.wrong("indexed", format!("{} (should not be: {})", n.path, n.why));
        }
    }
    if !diff.lines.is_empty() {
        for r in &t.rejected {
            diff.lines.push(format!(
                "note: {} is expected as `{}`: {}",
                r.path, r.label, r.why
            ));
        }
    }
    diff.finish("rejected and unindexed files");
}

#[test]
fn generated_stubs_and_test_files_are_marked() {
    let snap = snapshot();
    let t = truth();
    let files = files_by_path(snap);
    let mut diff = Diff::default();
    for (paths, want_generated) in [(&t.generated, true), (&t.tests, false)] {
        for path in paths {
            diff.checked += 1;
            match files.get(path) {
                None => diff.missing("file", path.clone()),
                Some(f) if want_generated && !f.generated => {
                    diff.wrong("generated", format!("{path} is not marked generated"))
                }
                Some(f) if !want_generated && !f.is_test => {
                    diff.wrong("test", format!("{path} is not marked as a test file"))
                }
                Some(_) => {}
            }
        }
    }
    let expected_generated = set(t.generated.iter().cloned());
    let actual_generated = set(snap
        .files
        .iter()
        .filter(|f| f.generated)
        .map(|f| snap.display_path(f)));
    diff.sets("generated", &expected_generated, &actual_generated);
    let expected_tests = set(t.tests.iter().cloned());
    let actual_tests = set(snap
        .files
        .iter()
        .filter(|f| f.is_test)
        .map(|f| snap.display_path(f)));
    diff.sets("test-file", &expected_tests, &actual_tests);
    diff.finish("generated and test files");
}

// ---------------------------------------------------------------------------------------------
// gRPC
// ---------------------------------------------------------------------------------------------

#[test]
fn proto_contracts_copies_and_rpc_definitions() {
    let snap = snapshot();
    let g = &snap.graph;
    let mut diff = Diff::default();
    let mut expected = BTreeSet::new();
    for c in &truth().grpc {
        expected.insert(format!("{} {} (definition)", c.definition, c.fqn));
        for copy in &c.copies {
            expected.insert(format!("{copy} {} (copy)", c.fqn));
        }
        for (rpc, loc) in &c.rpcs {
            expected.insert(format!("{loc} {}/{rpc} (rpc)", c.fqn));
        }
    }
    let mut actual = BTreeSet::new();
    for c in &g.contracts {
        actual.insert(format!("{} {} (definition)", at(snap, c.def), c.fqn));
        for copy in &c.copies {
            actual.insert(format!("{} {} (copy)", at(snap, *copy), c.fqn));
        }
        for &r in &c.rpcs {
            let rpc = &g.rpcs[r as usize];
            actual.insert(format!(
                "{} {}/{} (rpc)",
                at(snap, rpc.def),
                c.fqn,
                rpc.name
            ));
        }
    }
    diff.sets("contract", &expected, &actual);
    diff.finish("gRPC contracts");
}

#[test]
fn grpc_servers_handlers_clients_and_calls() {
    let snap = snapshot();
    let g = &snap.graph;
    let mut diff = Diff::default();
    let (mut servers, mut handlers, mut clients, mut calls) = (
        BTreeSet::new(),
        BTreeSet::new(),
        BTreeSet::new(),
        BTreeSet::new(),
    );
    for c in &truth().grpc {
        servers.extend(c.servers.iter().map(|l| format!("{l} {}", c.fqn)));
        clients.extend(c.clients.iter().map(|l| format!("{l} {}", c.fqn)));
        for (rpc, locs) in &c.handlers {
            handlers.extend(locs.iter().map(|l| format!("{l} {}/{rpc}", c.fqn)));
        }
        for (rpc, locs) in &c.calls {
            calls.extend(locs.iter().map(|l| format!("{l} {}/{rpc}", c.fqn)));
        }
    }
    let not_test = |loc: Loc| !file_of(snap, loc).is_test;
    let fqn = |contract: u32| g.contracts[contract as usize].fqn.clone();
    let rpc_name = |rpc: u32| {
        let r = &g.rpcs[rpc as usize];
        format!("{}/{}", fqn(r.contract), r.name)
    };
    let mut ambiguous = Vec::new();
    let mut service_facts = |links: &[mesh_mcp::ServiceLink], kind: &str| {
        let mut out = BTreeSet::new();
        for l in links.iter().filter(|l| not_test(l.at)) {
            let fact = format!("{} {}", at(snap, l.at), fqn(l.contract));
            if l.confidence == Confidence::Ambiguous {
                ambiguous.push(format!("{kind} {fact} ({})", l.label));
            }
            out.insert(fact);
        }
        out
    };
    let actual_servers = service_facts(&g.servers, "grpc-server");
    let actual_clients = service_facts(&g.clients, "grpc-client");
    let mut rpc_facts = |links: &[mesh_mcp::RpcLink], kind: &str| {
        let mut out = BTreeSet::new();
        for l in links.iter().filter(|l| not_test(l.at)) {
            let fact = format!("{} {}", at(snap, l.at), rpc_name(l.rpc));
            if l.confidence == Confidence::Ambiguous {
                ambiguous.push(format!("{kind} {fact} ({})", l.label));
            }
            out.insert(fact);
        }
        out
    };
    let actual_handlers = rpc_facts(&g.handlers, "grpc-handler");
    let actual_calls = rpc_facts(&g.calls, "grpc-call");
    diff.sets("grpc-server", &servers, &actual_servers);
    diff.sets("grpc-handler", &handlers, &actual_handlers);
    diff.sets("grpc-client", &clients, &actual_clients);
    diff.sets("grpc-call", &calls, &actual_calls);
    // Every service and method name in the example is unique: nothing may be ambiguous.
    for a in ambiguous {
        diff.wrong("confidence", format!("ambiguous {a}"));
    }
    diff.finish("gRPC servers, handlers, clients and calls");
}

// ---------------------------------------------------------------------------------------------
// Topics
// ---------------------------------------------------------------------------------------------

#[test]
fn topics_with_their_producers_and_consumers() {
    let snap = snapshot();
    let g = &snap.graph;
    let mut diff = Diff::default();
    let mut expected = BTreeSet::new();
    for t in &truth().topics {
        for (sites, role) in [(&t.producers, "producer"), (&t.consumers, "consumer")] {
            for s in sites {
                expected.insert(format!("{} {role} of {} ({})", s.at, t.name, s.how));
            }
        }
    }
    let mut actual = BTreeSet::new();
    for e in g.events.iter().filter(|e| !file_of(snap, e.at).is_test) {
        let role = match e.role {
            EventRole::Producer => "producer",
            EventRole::Consumer => "consumer",
        };
        let topic = &g.topics[e.topic as usize].name;
        actual.insert(format!("{} {role} of {topic} ({})", at(snap, e.at), e.how));
    }
    for (loc, written) in &g.unresolved_events {
        if !file_of(snap, *loc).is_test {
            actual.insert(format!("{} unresolved topic `{written}`", at(snap, *loc)));
        }
    }
    diff.sets("event", &expected, &actual);
    diff.finish("topics");
}

// ---------------------------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------------------------

fn route_fact(method: &str, path: &str, loc: &str, spec: bool) -> String {
    let tag = if spec { " [openapi]" } else { "" };
    format!(
        "{loc} {} {}{tag}",
        method.to_uppercase(),
        normalise_route_path(path)
    )
}

#[test]
fn http_routes_and_their_callers() {
    let snap = snapshot();
    let g = &snap.graph;
    let mut diff = Diff::default();
    let t = truth();
    let expected_routes = set(t
        .routes
        .iter()
        .map(|r| route_fact(&r.method, &r.path, &r.at, r.spec)));
    let mut expected_calls = BTreeSet::new();
    for r in &t.routes {
        for caller in &r.callers {
            let target = route_fact(&r.method, &r.path, &r.at, r.spec);
            expected_calls.insert(format!("{caller} -> {target}"));
        }
    }
    let route_of = |i: u32| {
        let r = &g.routes[i as usize];
        route_fact(&r.method, &r.path, &at(snap, r.at), r.from_spec)
    };
    let actual_routes = set((0..g.routes.len() as u32)
        .filter(|&i| !file_of(snap, g.routes[i as usize].at).is_test)
        .map(route_of));
    let actual_calls = set(g
        .route_calls
        .iter()
        .filter(|c| !file_of(snap, c.at).is_test)
        .map(|c| format!("{} -> {}", at(snap, c.at), route_of(c.route))));
    diff.sets("route", &expected_routes, &actual_routes);
    diff.sets("route-call", &expected_calls, &actual_calls);
    diff.finish("HTTP routes and callers");
}

// ---------------------------------------------------------------------------------------------
// Service edges
// ---------------------------------------------------------------------------------------------

/// Root-to-root edges derived from the graph: a gRPC client or call in one root to the roots
/// serving that contract, a producer's root to each consumer's root of the same topic, and a
/// route caller's root to the route's root. Test files take no part; self-edges are dropped.
fn derived_edges(snap: &Snapshot) -> BTreeMap<String, String> {
    let g = &snap.graph;
    let root_of = |loc: Loc| root_label(snap, file_of(snap, loc));
    let live = |loc: Loc| !file_of(snap, loc).is_test;
    let mut edges: BTreeMap<String, String> = BTreeMap::new();
    let mut add = |from: String, to: String, kind: &str, evidence: String| {
        if from != to {
            edges
                .entry(format!("{from} -> {to} ({kind})"))
                .or_insert(evidence);
        }
    };
    let mut server_roots: HashMap<u32, BTreeSet<String>> = HashMap::new();
    for s in g.servers.iter().filter(|s| live(s.at)) {
        server_roots
            .entry(s.contract)
            .or_default()
            .insert(root_of(s.at));
    }
    let mut grpc_uses: Vec<(u32, Loc)> = g
        .clients
        .iter()
        .filter(|c| live(c.at))
        .map(|c| (c.contract, c.at))
        .collect();
    grpc_uses.extend(
        g.calls
            .iter()
            .filter(|c| live(c.at))
            .map(|c| (g.rpcs[c.rpc as usize].contract, c.at)),
    );
    for (contract, loc) in grpc_uses {
        for to in server_roots.get(&contract).into_iter().flatten() {
            let evidence = format!(
                "{} at {}",
                g.contracts[contract as usize].fqn,
                at(snap, loc)
            );
            add(root_of(loc), to.clone(), "grpc", evidence);
        }
    }
    for p in g
        .events
        .iter()
        .filter(|e| e.role == EventRole::Producer && live(e.at))
    {
        for c in g
            .events
            .iter()
            .filter(|e| e.role == EventRole::Consumer && e.topic == p.topic && live(e.at))
        {
            let evidence = format!(
                "{} from {} to {}",
                g.topics[p.topic as usize].name,
                at(snap, p.at),
                at(snap, c.at)
            );
            add(root_of(p.at), root_of(c.at), "event", evidence);
        }
    }
    for call in g.route_calls.iter().filter(|c| live(c.at)) {
        let route = &g.routes[call.route as usize];
        let evidence = format!("{} {} from {}", route.method, route.path, at(snap, call.at));
        add(root_of(call.at), root_of(route.at), "http", evidence);
    }
    edges
}

#[test]
fn service_to_service_edges() {
    let snap = snapshot();
    let mut diff = Diff::default();
    let truth_edges: BTreeMap<String, &EdgeTruth> = truth()
        .service_edges
        .iter()
        .map(|e| (format!("{} -> {} ({})", e.from, e.to, e.kind), e))
        .collect();
    let actual = derived_edges(snap);
    diff.checked = truth_edges.len();
    for (key, e) in &truth_edges {
        if !actual.contains_key(key) {
            diff.missing("edge", format!("{key} via {}", e.via));
        }
    }
    for (key, evidence) in &actual {
        if !truth_edges.contains_key(key) {
            diff.lines.push(format!("extra edge {key} from {evidence}"));
        }
    }
    diff.finish("service edges");
}

// ---------------------------------------------------------------------------------------------
// Declarations and imports (recall)
// ---------------------------------------------------------------------------------------------

#[test]
fn declarations_at_their_lines() {
    let snap = snapshot();
    let files = files_by_path(snap);
    let mut diff = Diff::default();
    for d in &truth().declarations {
        diff.checked += 1;
        let fact = format!(
            "{}:{} {} {}{}",
            d.path,
            d.line,
            d.kind,
            d.name,
            d.container
                .as_deref()
                .map_or(String::new(), |c| format!(" in {c}"))
        );
        let Some(f) = files.get(&d.path) else {
            diff.missing("declaration", format!("{fact} (file not indexed)"));
            continue;
        };
        let found = f.symbols().iter().any(|s| {
            f.name(s) == d.name
                && s.kind.name() == d.kind
                && s.line == d.line
                && d.container
                    .as_deref()
                    .is_none_or(|c| f.container(s) == Some(c))
        });
        if !found {
            let seen: Vec<String> = f
                .symbols()
                .iter()
                .filter(|s| f.name(s) == d.name)
                .map(|s| {
                    format!(
                        "{} at line {}{}",
                        s.kind.name(),
                        s.line,
                        f.container(s).map_or(String::new(), |c| format!(" in {c}"))
                    )
                })
                .collect();
            let hint = if seen.is_empty() {
                String::new()
            } else {
                format!(" (index has: {})", seen.join(", "))
            };
            diff.missing("declaration", format!("{fact}{hint}"));
        }
    }
    diff.finish("declarations");
}

#[test]
fn dependents_as_raw_import_facts() {
    let snap = snapshot();
    let files = files_by_path(snap);
    let mut diff = Diff::default();
    for dep in &truth().dependents {
        for want in &dep.importers {
            diff.checked += 1;
            let fact = format!(
                "{}:{} {}{}{} (dependent of {})",
                want.path,
                want.line,
                want.module,
                if want.names.is_empty() {
                    String::new()
                } else {
                    format!(" {{{}}}", want.names.join(", "))
                },
                if want.reexport { " re-exported" } else { "" },
                dep.target
            );
            let Some(f) = files.get(&want.path) else {
                diff.missing("import", format!("{fact} (file not indexed)"));
                continue;
            };
            let found = f.facts().imports.iter().any(|i| {
                i.line == want.line
                    && i.module == want.module
                    && want.names.iter().all(|n| i.names.contains(n))
                    && want
                        .alias
                        .as_ref()
                        .is_none_or(|a| i.alias.as_ref() == Some(a))
                    && (!want.reexport || i.reexport)
            });
            if !found {
                let seen: Vec<String> = f
                    .facts()
                    .imports
                    .iter()
                    .filter(|i| i.line == want.line)
                    .map(|i| format!("{:?}", i))
                    .collect();
                let hint = if seen.is_empty() {
                    String::new()
                } else {
                    format!(" (index has on that line: {})", seen.join("; "))
                };
                diff.missing("import", format!("{fact}{hint}"));
            }
        }
    }
    diff.finish("dependents (raw imports)");
}

// ---------------------------------------------------------------------------------------------
// Configuration secrets and docs
// ---------------------------------------------------------------------------------------------

#[test]
fn secrets_in_configuration_are_masked() {
    let snap = snapshot();
    let files = files_by_path(snap);
    let mut diff = Diff::default();
    let t = truth();
    for s in &t.secrets {
        diff.checked += 1;
        let prop = files
            .get(&s.path)
            .and_then(|f| f.facts().properties.iter().find(|p| p.key == s.key));
        match prop {
            None => diff.missing("property", format!("{}:{} {}", s.path, s.line, s.key)),
            Some(p) if p.line != s.line => diff.wrong(
                "property",
                format!(
                    "{}:{} {} is indexed at line {}",
                    s.path, s.line, s.key, p.line
                ),
            ),
            Some(p) if !p.value.contains("REDACTED") => diff.wrong(
                "property",
                format!("{}:{} {} is not masked", s.path, s.line, s.key),
            ),
            Some(_) => {}
        }
    }
    for f in &snap.files {
        for p in &f.facts().properties {
            if let Some(s) = t.secrets.iter().find(|s| p.value.contains(&s.raw)) {
                diff.wrong(
                    "property",
                    format!(
                        "{}:{} {} leaks the secret of {}",
                        snap.display_path(f),
                        p.line,
                        p.key,
                        s.key
                    ),
                );
            }
        }
    }
    diff.finish("secrets");
}

#[test]
fn docs_sections_and_neutralised_injection() {
    let snap = snapshot();
    let files = files_by_path(snap);
    let mut diff = Diff::default();
    let t = truth();
    for d in &t.docs {
        diff.checked += 1;
        let found = files.get(&d.path).is_some_and(|f| {
            f.facts()
                .sections
                .iter()
                .any(|s| s.title == d.title && s.line == d.line)
        });
        if !found {
            diff.missing("section", format!("{}:{} {}", d.path, d.line, d.title));
        }
    }
    for i in &t.injections {
        diff.checked += 1;
        let Some(f) = files.get(&i.path) else {
            diff.missing("file", i.path.clone());
            continue;
        };
        if f.facts().sections.is_empty() {
            diff.missing("section", format!("{} (no sections)", i.path));
        }
        for s in &f.facts().sections {
            let text = s.text.to_lowercase();
            for m in &i.markers {
                if text.contains(&m.to_lowercase()) {
                    diff.wrong(
                        "section",
                        format!("{}:{} {} still contains `{m}`", i.path, s.line, s.title),
                    );
                }
            }
        }
    }
    diff.finish("docs");
}
