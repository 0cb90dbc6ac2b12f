//! Acceptance tests of issue 5 on the example workspace, through the real binary over stdio:
//! `smart_search` (ranking, bare-name matching, scopes and the jail, kinds, snippets, fuzzy,
//! paging), `find_dependents` (granularities, exact vs heuristic, path targets, tests left out,
//! paging), `search_docs` (ranking, whole sections, injection neutralised, bounds),
//! `index_status`, and what every tool shares (strict arguments, no central cut).
//!
//! One server process answers every test of this file (`examples/polyglot-shop` is only read);
//! tests that change files live in `tools_live.rs`. Facts come from
//! `examples/polyglot-shop.truth.json` or from reading the sources; a failure names the missing
//! or extra fact.

mod common;

use std::collections::BTreeSet;
use std::sync::{Mutex, MutexGuard, OnceLock};

use common::{Session, example_dir, shared_session};
use serde_json::{Value, json};

static EXAMPLE: OnceLock<Mutex<Session>> = OnceLock::new();

fn example() -> MutexGuard<'static, Session> {
    shared_session(&EXAMPLE, example_dir)
}

fn truth() -> Value {
    let text = std::fs::read_to_string(example_dir().with_extension("truth.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Workspace-relative paths of the regular files under `dir` (symlinks are not followed).
fn files_under(dir: &std::path::Path, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().to_string();
        let rel = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            out.extend(files_under(&entry.path(), &rel));
        } else if kind.is_file() {
            out.push(rel);
        }
    }
    out
}

fn source_lines(path: &str) -> Vec<String> {
    let text = std::fs::read_to_string(example_dir().join(path))
        .unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    text.lines().map(str::to_string).collect()
}

/// The root labels of the truth (`.`, `services/gateway`, …).
fn truth_roots() -> Vec<String> {
    truth()["roots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// smart_search answers, parsed
// ---------------------------------------------------------------------------------------------

/// One `smart_search` entry: `### [n] `path:line` (La-Lb)`, `kind `name``, a fenced snippet.
#[derive(Debug, Clone)]
struct Entry {
    n: usize,
    path: String,
    line: u32,
    first: u32,
    last: u32,
    kind: String,
    name: String,
    code: Vec<String>,
    /// Rendered bytes of the entry (heading to the blank line after the fence).
    bytes: usize,
}

impl Entry {
    fn at(&self) -> String {
        format!("{}:{}", self.path, self.line)
    }
}

fn entries(text: &str) -> Vec<Entry> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(rest) = lines[i].strip_prefix("### [") else {
            i += 1;
            continue;
        };
        let start = i;
        let (n, rest) = rest.split_once("] `").expect("entry number");
        let (at, rest) = rest.split_once("` (L").expect("entry location");
        let (path, line) = at.rsplit_once(':').unwrap();
        let (a, b) = rest.trim_end_matches(')').split_once("-L").unwrap();
        let (kind, name_rest) = lines[i + 1].split_once(" `").expect("kind line");
        let name = name_rest.split('`').next().unwrap().to_string();
        let fence_line = lines[i + 2];
        let fence: String = fence_line.chars().take_while(|c| *c == '`').collect();
        assert!(fence.len() >= 3, "no code fence after {at}: {fence_line}");
        let mut code = Vec::new();
        let mut j = i + 3;
        while lines[j] != fence {
            code.push(lines[j].to_string());
            j += 1;
        }
        // The entry ends with the closing fence and one blank line.
        let bytes: usize = lines[start..=j].iter().map(|l| l.len() + 1).sum::<usize>() + 1;
        out.push(Entry {
            n: n.parse().unwrap(),
            path: path.to_string(),
            line: line.parse().unwrap(),
            first: a.parse().unwrap(),
            last: b.parse().unwrap(),
            kind: kind.to_string(),
            name,
            code,
            bytes,
        });
        i = j + 1;
    }
    out
}

/// The `offset: k` a footer asks for next, if any.
fn next_offset(text: &str, marker: &str) -> Option<usize> {
    let rest = text.split(marker).nth(1)?;
    let rest = rest.split("offset: ").nth(1)?;
    Some(
        rest.chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .unwrap(),
    )
}

/// `CONSTANT_CASE` ↔ `PascalCase`: the last `.` segment, lowercase, without `_`.
fn bare(name: &str) -> String {
    name.rsplit('.')
        .next()
        .unwrap_or(name)
        .chars()
        .filter(|c| *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// 0 exact, 1 prefix, 2 substring (the tool's match ranks).
fn match_rank(name: &str, query: &str) -> u8 {
    let (n, q) = (name.to_lowercase(), query.to_lowercase());
    if n == q || bare(&n) == bare(&q) {
        0
    } else if n.starts_with(&q) {
        1
    } else {
        assert!(n.contains(&q), "`{name}` does not contain `{query}`");
        2
    }
}

/// The spec's kind ranks: gRPC service/method and endpoint < message and interface < topic <
/// everything else.
fn kind_rank(kind: &str) -> u8 {
    match kind {
        "service" | "rpc" | "endpoint" => 0,
        "message" | "interface" | "trait" => 1,
        "topic" => 2,
        _ => 3,
    }
}

/// Every page of a search with `limit`, checking numbering, disjointness and the next offsets.
fn walk(s: &mut Session, args: Value, limit: u64) -> Vec<Vec<Entry>> {
    let mut pages = Vec::new();
    let mut offset = 0usize;
    loop {
        let mut a = args.clone();
        a["limit"] = json!(limit);
        a["offset"] = json!(offset);
        let text = s.ok("smart_search", a);
        let page = entries(&text);
        assert!(!page.is_empty(), "empty page at offset {offset}:\n{text}");
        assert!(
            page.len() as u64 <= limit,
            "{} entries on a page of limit {limit}",
            page.len()
        );
        for (k, e) in page.iter().enumerate() {
            assert_eq!(e.n, offset + k + 1, "entry numbering at offset {offset}");
        }
        let next = next_offset(&text, "More results:");
        offset += page.len();
        pages.push(page);
        match next {
            Some(k) => assert_eq!(k, offset, "next offset is not the first unshown entry"),
            None => break,
        }
    }
    pages
}

// ---------------------------------------------------------------------------------------------
// smart_search
// ---------------------------------------------------------------------------------------------

#[test]
fn search_ranks_exact_then_prefix_then_substring_then_hand_written_then_by_kind() {
    let mut s = example();
    for query in [
        "OrderService",
        "Order",
        "get",
        "Stock",
        "OrderServ",
        "topics",
    ] {
        let all: Vec<Entry> = walk(&mut s, json!({"query": query}), 100)
            .into_iter()
            .flatten()
            .collect();
        // Within a match rank: hand-written code and canonical contracts, then contract
        // copies, then generated stubs.
        let t = truth();
        let generated: BTreeSet<String> = t["generated"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap().to_string())
            .collect();
        let mut copies: BTreeSet<String> = BTreeSet::new();
        for c in t["grpc"].as_array().unwrap() {
            let def = c["definition"]
                .as_str()
                .unwrap()
                .rsplit_once(':')
                .unwrap()
                .0;
            for at in c["copies"].as_array().unwrap() {
                let path = at.as_str().unwrap().rsplit_once(':').unwrap().0;
                if path != def {
                    copies.insert(path.to_string());
                }
            }
        }
        let tier = |path: &str| {
            if generated.contains(path) {
                2u8
            } else if copies.contains(path) {
                1
            } else {
                0
            }
        };
        let mut prev = (0u8, 0u8, 0u8);
        for e in &all {
            let key = (
                match_rank(&e.name, query),
                tier(&e.path),
                kind_rank(&e.kind),
            );
            assert!(
                key >= prev,
                "`{query}`: {} {} `{}` (rank {key:?}) listed after rank {prev:?}",
                e.at(),
                e.kind,
                e.name
            );
            prev = key;
        }
        let paths: BTreeSet<&str> = all.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths.len(), all.len(), "`{query}`: a file listed twice");
    }
    // The proto service comes first for its own name, then its vendored copies, then the
    // client interfaces that only start with it.
    let text = s.ok("smart_search", json!({"query": "OrderService"}));
    let e = entries(&text);
    let head: Vec<(String, &str)> = e.iter().map(|e| (e.at(), e.kind.as_str())).collect();
    assert_eq!(
        head[..3],
        [
            ("contracts/orders/v1/orders.proto:11".to_string(), "service"),
            (
                "services/gateway/proto/orders.proto:11".to_string(),
                "service"
            ),
            (
                "services/web-bff/proto/orders.proto:11".to_string(),
                "service"
            ),
        ],
        "{text}"
    );
    assert!(
        e[3..]
            .iter()
            .all(|e| match_rank(&e.name, "OrderService") == 1),
        "{text}"
    );
    assert!(
        e.iter()
            .any(|e| e.at() == "services/web-bff/src/lookups/order-lookup.ts:13"),
        "the TypeScript OrderServiceClient interface is missing:\n{text}"
    );
    // A prefix-only query: no exact line, every hit starts with it.
    let text = s.ok("smart_search", json!({"query": "OrderServ"}));
    assert!(!text.contains("exactly"), "{text}");
    assert!(
        entries(&text)
            .iter()
            .all(|e| e.name.to_lowercase().starts_with("orderserv")),
        "{text}"
    );
}

#[test]
fn search_matches_constant_case_and_pascal_case_names() {
    let mut s = example();
    let both = [
        "services/notifications/Kafka/Topics.cs:6",
        "services/shipping/src/main/kotlin/com/acme/shipping/Topics.kt:5",
    ];
    for query in [
        "SHIPMENT_DISPATCHED",
        "ShipmentDispatched",
        "shipment_dispatched",
        "Topics.SHIPMENT_DISPATCHED",
    ] {
        let text = s.ok("smart_search", json!({"query": query}));
        let got: Vec<String> = entries(&text).iter().map(Entry::at).collect();
        for want in both {
            assert!(
                got.contains(&want.to_string()),
                "`{query}` misses {want}:\n{text}"
            );
        }
        assert!(
            !text.contains("only contain it"),
            "`{query}`: both spellings are exact matches:\n{text}"
        );
    }
    for query in ["OrdersCreated", "orders_created"] {
        let text = s.ok("smart_search", json!({"query": query}));
        let got: Vec<String> = entries(&text).iter().map(Entry::at).collect();
        assert_eq!(
            got.first().map(String::as_str),
            Some("services/payments/src/main/java/com/acme/payments/kafka/Topics.java:5"),
            "`{query}` should find ORDERS_CREATED first:\n{text}"
        );
    }
}

#[test]
fn search_scope_spellings_roots_and_subdirectories() {
    let mut s = example();
    let global = s.ok("smart_search", json!({"query": "Order", "limit": 100}));
    assert!(global.contains("(scope: * (all roots))"), "{global}");
    let global_hits: Vec<String> = entries(&global).iter().map(Entry::at).collect();
    for spelling in [".", "./", "*"] {
        let text = s.ok(
            "smart_search",
            json!({"query": "Order", "limit": 100, "scope": spelling}),
        );
        assert!(
            text.contains("(scope: * (all roots))"),
            "scope {spelling:?}:\n{text}"
        );
        let hits: Vec<String> = entries(&text).iter().map(Entry::at).collect();
        assert_eq!(hits, global_hits, "scope {spelling:?} is not every root");
    }
    let abs = example_dir().canonicalize().unwrap();
    let text = s.ok(
        "smart_search",
        json!({"query": "Order", "limit": 100, "scope": abs.to_str().unwrap()}),
    );
    let hits: Vec<String> = entries(&text).iter().map(Entry::at).collect();
    assert_eq!(
        hits, global_hits,
        "the workspace's absolute path is every root"
    );

    // A root, a directory of a root, a directory of the `.` root.
    let everywhere: Vec<Entry> = walk(&mut s, json!({"query": "o"}), 100)
        .into_iter()
        .flatten()
        .collect();
    for (scope, min) in [
        ("services/orders", 3),
        ("services/orders/gen", 1),
        ("services/web-bff/src/lookups", 1),
        ("contracts/orders", 1),
        ("services/notifications", 1),
    ] {
        let text = s.ok(
            "smart_search",
            json!({"query": "o", "limit": 100, "scope": scope}),
        );
        assert!(text.contains(&format!("(scope: `{scope}`)")), "{text}");
        let hits = entries(&text);
        assert!(
            hits.len() >= min,
            "scope {scope}: {} hits\n{text}",
            hits.len()
        );
        let prefix = format!("{scope}/");
        for e in &hits {
            assert!(
                e.path.starts_with(&prefix),
                "scope {scope}: {} is outside it",
                e.at()
            );
        }
        // Every hit of the global search under that directory is here too.
        let want: BTreeSet<String> = everywhere
            .iter()
            .filter(|e| e.path.starts_with(&prefix))
            .map(|e| e.path.clone())
            .collect();
        let got: BTreeSet<String> = hits.iter().map(|e| e.path.clone()).collect();
        assert_eq!(
            got, want,
            "scope {scope}: files differ from the global answer"
        );
    }
}

#[test]
fn search_scopes_outside_the_roots_are_refused_naming_the_roots() {
    let mut s = example();
    let outside_sibling = example_dir()
        .canonicalize()
        .unwrap()
        .with_extension("truth.json");
    let outside_sibling = outside_sibling.to_str().unwrap().to_string();
    let temp = std::env::temp_dir().canonicalize().unwrap();
    for scope in [
        "../",
        "..",
        "/etc",
        "/etc/passwd",
        "services/../../",
        "../polyglot-shop.truth.json",
        outside_sibling.as_str(),
        temp.to_str().unwrap(),
        "services/orders-evil",
        "services/orders/../../..",
    ] {
        let text = s.err("smart_search", json!({"query": "Order", "scope": scope}));
        assert!(
            text.contains("allowed scopes"),
            "scope {scope:?}: the refusal does not list the allowed scopes:\n{text}"
        );
        for root in truth_roots() {
            assert!(
                text.contains(&format!("`{root}`")),
                "scope {scope:?}: root {root} not named:\n{text}"
            );
        }
        assert!(!text.contains("### ["), "scope {scope:?} leaked results");
    }
}

#[test]
fn search_kind_filter_and_unknown_kind() {
    let mut s = example();
    let text = s.ok(
        "smart_search",
        json!({"query": "OrderService", "kind": "interface"}),
    );
    let e = entries(&text);
    assert!(!e.is_empty(), "{text}");
    assert!(e.iter().all(|e| e.kind == "interface"), "{text}");
    let text = s.ok(
        "smart_search",
        json!({"query": "Topics", "kind": "ENUM", "limit": 100}),
    );
    let got: Vec<String> = entries(&text).iter().map(Entry::at).collect();
    assert_eq!(got, ["services/web-bff/src/topics.ts:2"], "{text}");
    let text = s.ok(
        "smart_search",
        json!({"query": "Topics", "kind": "class", "limit": 100}),
    );
    assert!(
        entries(&text).iter().all(|e| e.kind == "class"),
        "kind class let another kind through:\n{text}"
    );
    assert!(
        text.contains("services/payments/src/main/java/com/acme/payments/kafka/Topics.java:4"),
        "{text}"
    );
    let text = s.err("smart_search", json!({"query": "Order", "kind": "widget"}));
    assert!(text.contains("widget"), "{text}");
    for kind in ["class", "function", "interface", "service", "rpc"] {
        assert!(
            text.contains(kind),
            "the error does not offer {kind}:\n{text}"
        );
    }
}

/// Checks a snippet against the source: its first line is the source's first line, every shown
/// line is a source line of the range in order (a stripped line is the source line's head),
/// and the anchor line names the declaration.
fn check_snippet(e: &Entry, include_body: bool) {
    let src = source_lines(&e.path);
    let at = e.at();
    assert!(
        1 <= e.first && e.first <= e.line && e.line <= e.last && e.last as usize <= src.len(),
        "{at}: L{}-L{} is not a range around the anchor inside the file ({} lines)",
        e.first,
        e.last,
        src.len()
    );
    let segment = e.name.rsplit(['.', ' ']).next().unwrap().to_lowercase();
    assert!(
        src[e.line as usize - 1].to_lowercase().contains(&segment),
        "{at}: the anchor line does not name `{}`: {:?}",
        e.name,
        src[e.line as usize - 1]
    );
    let range = &src[e.first as usize - 1..e.last as usize];
    if include_body {
        assert_eq!(
            e.code, range,
            "{at}: include_body must show L{}-L{} verbatim",
            e.first, e.last
        );
        return;
    }
    let mut k = 0usize;
    for (n, shown) in e.code.iter().enumerate() {
        let head = shown
            .split(" { /* stripped */ }")
            .next()
            .unwrap()
            .trim_end();
        let stripped_line = shown.contains("/* stripped */")
            || shown.trim() == "..."
            || shown.contains("# … stripped");
        if shown.trim() == "..." || shown.contains("# … stripped") {
            continue;
        }
        if shown.trim_start().starts_with("… (declaration continues") {
            continue;
        }
        let found = range[k..].iter().position(|l| {
            if stripped_line {
                l.trim_end().starts_with(head) || l.trim_end() == head
            } else {
                l == shown
            }
        });
        let Some(p) = found else {
            panic!(
                "{at}: snippet line {n} {shown:?} is not a source line of L{}-L{} (in order)",
                e.first, e.last
            );
        };
        if n == 0 {
            assert_eq!(p, 0, "{at}: the snippet does not start at L{}", e.first);
        }
        k += p + 1;
    }
}

#[test]
fn search_snippets_strip_bodies_and_cite_source_lines() {
    let mut s = example();
    // One declaration with a body per language.
    let cases = [
        (
            "createOrder",
            "function",
            "services/gateway/src/clients/orders.js",
        ),
        (
            "OrderLookup",
            "class",
            "services/web-bff/src/lookups/order-lookup.ts",
        ),
        (
            "InventoryServicer",
            "class",
            "services/inventory/inventory/servicer.py",
        ),
        (
            "PricingServiceImpl",
            "class",
            "services/pricing/src/pricing_server.cc",
        ),
        ("ComputeQuote", "function", "services/pricing/src/quote.cc"),
        ("record_entry", "method", "services/ledger/src/main.rs"),
        (
            "Recommender",
            "class",
            "services/recommendations/lib/recommender.rb",
        ),
        (
            "PaymentGrpcService",
            "class",
            "services/payments/src/main/java/com/acme/payments/grpc/PaymentGrpcService.java",
        ),
        (
            "PaymentsListener",
            "class",
            "services/shipping/src/main/kotlin/com/acme/shipping/PaymentsListener.kt",
        ),
        (
            "NotificationsController",
            "class",
            "services/notifications/Controllers/NotificationsController.cs",
        ),
        ("getenv", "function", "services/orders/main.go"),
        ("Order", "message", "contracts/orders/v1/orders.proto"),
    ];
    for (query, kind, path) in cases {
        for include_body in [false, true] {
            let text = s.ok(
                "smart_search",
                json!({"query": query, "kind": kind, "include_body": include_body, "limit": 100}),
            );
            let e = entries(&text);
            let hit = e
                .iter()
                .find(|e| e.path == path)
                .unwrap_or_else(|| panic!("`{query}` ({kind}) not found in {path}:\n{text}"));
            check_snippet(hit, include_body);
            let joined = hit.code.join("\n");
            let strips = !matches!(kind, "message");
            if include_body || !strips {
                assert!(
                    !joined.contains("stripped") && !joined.lines().any(|l| l.trim() == "..."),
                    "{}: stripped although include_body={include_body}:\n{joined}",
                    hit.at()
                );
            } else {
                assert!(
                    joined.contains("/* stripped */")
                        || joined.contains("# … stripped")
                        || joined.lines().any(|l| l.trim() == "..."),
                    "{}: no body stripped:\n{joined}",
                    hit.at()
                );
            }
        }
    }
    // Ruby: every method body is stripped, a default argument included.
    let text = s.ok(
        "smart_search",
        json!({"query": "Recommender", "kind": "class"}),
    );
    assert!(!text.contains("scores = Hash.new(0)"), "{text}");
    // Python: a docstring stays, the body does not.
    let text = s.ok(
        "smart_search",
        json!({"query": "InventoryServicer", "kind": "class"}),
    );
    assert!(text.contains("\"\"\"Reserves and reports stock"), "{text}");
}

#[test]
fn search_fuzzy_is_a_fallback_only_when_nothing_is_declared() {
    let mut s = example();
    // `KAFKA_BROKERS` is an environment variable name: no declaration has it.
    let plain = s.ok("smart_search", json!({"query": "KAFKA_BROKERS"}));
    assert!(plain.contains("No declaration named like"), "{plain}");
    assert!(plain.contains("fuzzy: true"), "{plain}");
    let fuzzy = s.ok(
        "smart_search",
        json!({"query": "KAFKA_BROKERS", "fuzzy": true}),
    );
    assert!(fuzzy.contains("No declaration has this name"), "{fuzzy}");
    let mut cited = Vec::new();
    for line in fuzzy.lines() {
        let Some(rest) = line.split_once(". `").map(|(_, r)| r) else {
            continue;
        };
        let at = rest.split('`').next().unwrap();
        let (path, n) = at.rsplit_once(':').unwrap();
        let n: usize = n.parse().unwrap();
        let src = source_lines(path);
        assert!(
            src[n - 1].contains("KAFKA_BROKERS"),
            "fuzzy cites {at}, which does not contain the query: {:?}",
            src[n - 1]
        );
        cited.push(path.to_string());
    }
    for want in [
        "services/orders/main.go",
        "services/gateway/src/events/order-stream.js",
        "services/inventory/inventory/server.py",
        "services/web-bff/src/main.ts",
        "services/recommendations/lib/order_events.rb",
    ] {
        assert!(
            cited.iter().any(|c| c == want),
            "fuzzy misses {want}:\n{fuzzy}"
        );
    }
    assert!(
        !cited.iter().any(|c| c.ends_with(".env")),
        "fuzzy read a file the index excludes:\n{fuzzy}"
    );
    // A declared name never falls back to full text.
    let declared = s.ok(
        "smart_search",
        json!({"query": "OrderLookup", "fuzzy": true}),
    );
    assert!(declared.contains("## Declarations matching"), "{declared}");
    assert!(!declared.contains("Full-text"), "{declared}");
    assert_eq!(
        entries(&declared)[0].at(),
        "services/web-bff/src/lookups/order-lookup.ts:19"
    );
}

#[test]
fn search_pages_are_bounded_disjoint_and_complete() {
    let mut s = example();
    for query in ["e", "o", "Order", "get"] {
        let big = walk(&mut s, json!({"query": query}), 100);
        let all_big: Vec<String> = big.iter().flatten().map(Entry::at).collect();
        // The byte budget: a page of more than one entry stays within 8 KiB of entries, and
        // stops only because the next entry would not fit.
        for (p, page) in big.iter().enumerate() {
            let bytes: usize = page.iter().map(|e| e.bytes).sum();
            if page.len() > 1 {
                assert!(
                    bytes <= 8 * 1024,
                    "`{query}` page {p}: {bytes} bytes of entries"
                );
            }
            if let Some(next) = big.get(p + 1)
                && page.len() < 100
            {
                assert!(
                    bytes + next[0].bytes > 8 * 1024,
                    "`{query}` page {p} stopped at {} entries ({bytes} bytes) although the next entry ({} bytes) fits",
                    page.len(),
                    next[0].bytes
                );
            }
        }
        let limits: &[u64] = if query == "Order" {
            &[1, 3, 7]
        } else {
            &[3, 7]
        };
        for &limit in limits {
            let small: Vec<String> = walk(&mut s, json!({"query": query}), limit)
                .iter()
                .flatten()
                .map(Entry::at)
                .collect();
            assert_eq!(
                small, all_big,
                "`{query}`: pages of {limit} do not add up to the big pages"
            );
        }
        let total = all_big.len();
        let first = s.ok("smart_search", json!({"query": query, "limit": 100}));
        assert!(
            first.contains(&format!("_Matches: {total} files declare a matching name")),
            "`{query}`: the summary does not count the {total} files:\n{first}"
        );
    }
}

#[test]
fn search_says_how_many_declare_exactly_and_how_many_only_contain() {
    let mut s = example();
    for query in ["Order", "get", "OrderService", "Stock"] {
        let all: Vec<Entry> = walk(&mut s, json!({"query": query}), 100)
            .into_iter()
            .flatten()
            .collect();
        let exact = all
            .iter()
            .filter(|e| match_rank(&e.name, query) == 0)
            .count();
        let text = s.ok("smart_search", json!({"query": query}));
        if exact > 0 && exact < all.len() {
            let want = format!(
                "{exact} declare `{query}` exactly (listed first), {} only contain it",
                all.len() - exact
            );
            assert!(text.contains(&want), "missing {want:?}:\n{text}");
        } else {
            assert!(!text.contains("only contain it"), "{text}");
        }
    }
}

#[test]
fn search_answer_sizes_and_past_the_end() {
    let mut s = example();
    for query in ["e", "o", "Order", "service", "get"] {
        let text = s.ok("smart_search", json!({"query": query}));
        assert!(
            text.len() < 10 * 1024,
            "default page of `{query}` is {} bytes",
            text.len()
        );
    }
    // An empty answer is short; the rejected-file note (never cut) comes on top of it.
    let text = s.ok("smart_search", json!({"query": "zzqqxx"}));
    let body = text.split("\n> [!WARNING]").next().unwrap();
    assert!(
        body.len() < 400,
        "empty answer of {} bytes:\n{text}",
        body.len()
    );
    assert!(
        body.contains("74 files") || body.contains("files"),
        "a zero should say what was searched:\n{text}"
    );
    let note = &text[body.len()..];
    assert!(note.len() <= 2048, "rejected note of {} bytes", note.len());
    let text = s.ok(
        "smart_search",
        json!({"query": "zzqqxx", "scope": "services/orders"}),
    );
    assert!(
        text.len() < 400,
        "empty answer of {} bytes:\n{text}",
        text.len()
    );

    let total = walk(&mut s, json!({"query": "Order"}), 100)
        .iter()
        .map(Vec::len)
        .sum::<usize>();
    for offset in [total, total + 1, 1000] {
        let text = s.ok("smart_search", json!({"query": "Order", "offset": offset}));
        assert!(entries(&text).is_empty(), "{text}");
        assert!(
            text.contains(&format!("No results at offset {offset}"))
                && text.contains(&format!("request an offset below {total}")),
            "offset {offset} past {total} is not explained:\n{text}"
        );
    }
}

#[test]
fn search_rejected_files_in_scope_are_listed_last() {
    let mut s = example();
    let text = s.ok("smart_search", json!({"query": "Order"}));
    let note = text
        .split("> [!WARNING]")
        .nth(1)
        .unwrap_or_else(|| panic!("no rejected-file note:\n{text}"));
    for r in truth()["rejected"].as_array().unwrap() {
        let path = r["path"].as_str().unwrap();
        assert!(
            note.contains(&format!("`{path}`")),
            "{path} not in the note:\n{note}"
        );
    }
    // Scoped: only the rejected files of that scope.
    let text = s.ok(
        "smart_search",
        json!({"query": "Order", "scope": "services/orders"}),
    );
    assert!(!text.contains("[!WARNING]"), "{text}");
    let text = s.ok(
        "smart_search",
        json!({"query": "Topics", "scope": "services/notifications"}),
    );
    assert!(
        text.contains("`services/notifications/Properties/AssemblyInfo.cs`: binary"),
        "{text}"
    );
    assert!(!text.contains("acme-ui.min.js"), "{text}");
}

// ---------------------------------------------------------------------------------------------
// find_dependents
// ---------------------------------------------------------------------------------------------

/// One listed dependent: its number, the cited `path:line`, and its confidence label.
#[derive(Debug, Clone, PartialEq)]
struct Dep {
    n: usize,
    /// `path:line` of the import or call (file and package rows), or of the declaration.
    at: String,
    path: String,
    /// The import/call line (`at L…` for symbol rows, the cited line otherwise).
    site: u32,
    confidence: String,
    line: String,
}

fn deps(text: &str) -> Vec<Dep> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((n, rest)) = line.split_once(". ") else {
            continue;
        };
        let Ok(n) = n.parse::<usize>() else {
            continue;
        };
        let confidence = rest
            .rsplit_once(" (")
            .map(|(_, c)| c.trim_end_matches(')').to_string())
            .unwrap_or_default();
        let quoted: Vec<&str> = rest.split('`').collect();
        // The first backticked `path:…` is the location.
        let at = quoted
            .iter()
            .skip(1)
            .step_by(2)
            .find(|q| q.contains(':') && q.contains('/'))
            .unwrap_or_else(|| panic!("no location in row {line:?}"))
            .to_string();
        let (path, lines) = at.rsplit_once(':').unwrap();
        let site = match rest.rsplit_once(" at L") {
            Some((_, tail)) => tail.split(' ').next().unwrap().parse().unwrap(),
            None => lines.split('-').next().unwrap().parse().unwrap(),
        };
        out.push(Dep {
            n,
            at: at.clone(),
            path: path.to_string(),
            site,
            confidence,
            line: line.to_string(),
        });
    }
    out
}

fn dependents_of(s: &mut Session, args: Value) -> (String, Vec<Dep>) {
    let text = s.ok("find_dependents", args);
    let d = deps(&text);
    for dep in &d {
        assert!(
            ["exact", "heuristic", "ambiguous"].contains(&dep.confidence.as_str()),
            "row not labelled exact/heuristic/ambiguous: {:?}",
            dep.line
        );
    }
    (text, d)
}

/// `path:line` of every importer the truth lists for a target.
fn truth_importers(target: &str, tests: bool) -> BTreeSet<String> {
    let t = truth();
    let entry = t["dependents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["target"] == target)
        .unwrap_or_else(|| panic!("no truth for {target}"));
    entry["importers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| tests || i["test"] != true)
        .map(|i| format!("{}:{}", i["path"].as_str().unwrap(), i["line"]))
        .collect()
}

#[test]
fn dependents_at_file_granularity_match_the_truth_for_every_target_form() {
    let mut s = example();
    let cases = [
        // (tool target, truth target)
        (
            "github.com/acme/shop/orders/gen/orderspb",
            "github.com/acme/shop/orders/gen/orderspb",
        ),
        (
            "inventory.gen.inventory_pb2_grpc",
            "inventory.gen.inventory_pb2_grpc",
        ),
        (
            "services/web-bff/src/lookups",
            "services/web-bff/src/lookups (barrel index.ts)",
        ),
        (
            "services/web-bff/src/lookups/index.ts",
            "services/web-bff/src/lookups (barrel index.ts)",
        ),
        (
            "contracts/common/v1/money.proto",
            "contracts/common/v1/money.proto",
        ),
        ("common/v1/money.proto", "contracts/common/v1/money.proto"),
        (
            "services/pricing/src/quote.h",
            "services/pricing/src/quote.h",
        ),
    ];
    for (target, truth_target) in cases {
        for include_tests in [false, true] {
            let (text, rows) = dependents_of(
                &mut s,
                json!({"target": target, "granularity": "file", "include_tests": include_tests}),
            );
            let got: BTreeSet<String> = rows.iter().map(|d| d.at.clone()).collect();
            let want = truth_importers(truth_target, include_tests);
            let missing: Vec<_> = want.difference(&got).collect();
            let extra: Vec<_> = got.difference(&want).collect();
            assert!(
                missing.is_empty() && extra.is_empty(),
                "find_dependents {target} (include_tests {include_tests}): missing {missing:?}, extra {extra:?}\n{text}"
            );
            assert!(
                rows.iter().all(|d| d.confidence == "exact"),
                "{target}: an import of the target is exact:\n{text}"
            );
            assert!(
                !text.contains("⚠"),
                "{target}: no heuristic banner:\n{text}"
            );
            let left_out = truth_importers(truth_target, true).len()
                - truth_importers(truth_target, false).len();
            if !include_tests && left_out > 0 {
                assert!(
                    text.contains(&format!(
                        "_{left_out} more dependent(s) in test files left out (pass `include_tests: true`)._"
                    )),
                    "{target}: {left_out} test file(s) should be counted:\n{text}"
                );
            }
            if include_tests || left_out == 0 {
                assert!(!text.contains("test files left out"), "{text}");
            }
        }
    }
}

#[test]
fn dependents_granularities_and_invalid_granularity() {
    let mut s = example();
    let target = "github.com/acme/shop/orders/gen/orderspb";
    // The default lists where the dependency is: each import line and using site, once.
    let (default_text, default) = dependents_of(&mut s, json!({"target": target}));
    let (_, sites) = dependents_of(&mut s, json!({"target": target, "granularity": "site"}));
    assert_eq!(default, sites, "granularity defaults to site");
    let importers = truth_importers(target, false);
    let importing_files: BTreeSet<&str> = importers
        .iter()
        .filter_map(|i| i.rsplit_once(':'))
        .map(|(p, _)| p)
        .collect();
    let is_use = |d: &Dep| d.line.contains(" — uses ");
    let cited: BTreeSet<String> = default
        .iter()
        .filter(|d| !is_use(d))
        .map(|d| format!("{}:{}", d.path, d.site))
        .collect();
    assert_eq!(cited, importers, "{default_text}");
    // Using sites (`pb.Order`) are heuristic rows of the importing files.
    let uses: Vec<&Dep> = default.iter().filter(|d| is_use(d)).collect();
    assert!(!uses.is_empty(), "{default_text}");
    for d in uses {
        assert!(
            d.confidence == "heuristic" && importing_files.contains(d.path.as_str()),
            "{:?}",
            d.line
        );
    }
    // No symbol rows (`N. struct `x` — …`); a use row may name its enclosing struct.
    assert!(!default_text.contains(". struct `"), "{default_text}");
    let (text, symbol) = dependents_of(&mut s, json!({"target": target, "granularity": "symbol"}));
    // Symbol rows: declarations of importing files, each with its span and the import line.
    for name in [
        "function `main`",
        "struct `orderServer`",
        "struct `orderStore`",
        // A Go method is a top-level declaration of its file.
        "method `CreateOrder`",
    ] {
        assert!(text.contains(name), "{name} missing:\n{text}");
    }
    // Where the file's uses are found, a declaration that never uses the import is no
    // dependent (main.go's `getenv` and `healthz` read no `pb.` name).
    for name in ["function `getenv`", "function `healthz`"] {
        assert!(!text.contains(name), "{name} listed:\n{text}");
    }
    for d in symbol.iter().filter(|d| !is_use(d)) {
        assert!(
            importers.contains(&format!("{}:{}", d.path, d.site)),
            "symbol row cites an import line the truth does not have: {:?}",
            d.line
        );
    }
    let (_, files) = dependents_of(&mut s, json!({"target": target, "granularity": "file"}));
    let (text, packages) =
        dependents_of(&mut s, json!({"target": target, "granularity": "package"}));
    assert_eq!(files.len(), 3);
    assert!(symbol.len() > files.len());
    assert_eq!(packages.len(), 1, "one Go package `main`:\n{text}");
    assert!(text.contains("package `main`"), "{text}");
    assert!(text.contains("1 dependent package(s)"), "{text}");
    let (text, packages) = dependents_of(
        &mut s,
        json!({"target": "InventoryService", "granularity": "package"}),
    );
    let pk: BTreeSet<&str> = packages.iter().map(|d| d.path.as_str()).collect();
    assert!(
        pk.contains(
            "services/payments/src/main/java/com/acme/payments/clients/StockReservations.java"
        ) && pk.contains("services/pricing/src/pricing_server.cc"),
        "{text}"
    );
    for bad in ["bogus", "files", "Symbol", ""] {
        let text = s.err(
            "find_dependents",
            json!({"target": target, "granularity": bad}),
        );
        assert!(
            text.contains(&format!("'{bad}'"))
                && text.contains("'site'")
                && text.contains("'symbol'")
                && text.contains("'file'")
                && text.contains("'package'"),
            "granularity {bad:?}:\n{text}"
        );
    }
}

#[test]
fn dependents_of_an_rpc_are_the_declarations_that_call_it() {
    let mut s = example();
    let t = truth();
    let contract = t["grpc"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["fqn"] == "acme.orders.v1.OrderService")
        .unwrap()
        .clone();
    for (target, rpcs) in [
        ("OrderService.GetOrder", vec!["GetOrder"]),
        ("acme.orders.v1.OrderService/GetOrder", vec!["GetOrder"]),
        ("OrderService", vec!["CreateOrder", "GetOrder"]),
        (
            "acme.orders.v1.OrderService",
            vec!["CreateOrder", "GetOrder"],
        ),
    ] {
        // Symbol rows: the declaration around each call (the default lists the call sites).
        let (text, rows) =
            dependents_of(&mut s, json!({"target": target, "granularity": "symbol"}));
        let (_, sites) = dependents_of(&mut s, json!({"target": target}));
        let want: BTreeSet<String> = rpcs
            .iter()
            .flat_map(|r| contract["calls"][r].as_array().unwrap().clone())
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        let got: BTreeSet<String> = rows
            .iter()
            .map(|d| format!("{}:{}", d.path, d.site))
            .collect();
        assert_eq!(got, want, "{target}: call sites differ\n{text}");
        let got_sites: BTreeSet<String> = sites
            .iter()
            .map(|d| format!("{}:{}", d.path, d.site))
            .collect();
        assert_eq!(got_sites, want, "{target}: default rows are the call sites");
        // The dependent of a call is the declaration around it, once.
        for d in &rows {
            let span = d.at.rsplit_once(':').unwrap().1;
            let (a, b) = span.split_once('-').unwrap();
            let (a, b): (u32, u32) = (a.parse().unwrap(), b.parse().unwrap());
            assert!(
                a <= d.site && d.site <= b,
                "{target}: {:?} does not enclose its call at L{}",
                d.line,
                d.site
            );
        }
        assert_eq!(
            rows.len(),
            want.len(),
            "{target}: one row per calling declaration\n{text}"
        );
    }
}

#[test]
fn dependents_heuristic_fallback_only_when_nothing_matches_exactly() {
    let mut s = example();
    // Exact matches exist: no banner, no heuristic row from the substring fallback.
    let (text, rows) = dependents_of(
        &mut s,
        json!({"target": "services/web-bff/src/lookups/order-lookup.ts", "granularity": "symbol"}),
    );
    assert!(!text.contains("⚠"), "{text}");
    assert!(
        rows.iter().any(|d| d.at == "services/web-bff/src/lookups/index.ts:2-2"
            && d.confidence == "exact"),
        "the barrel re-export is an exact dependent:\n{text}"
    );
    // Exact rows come before heuristic ones within a root.
    let first_heuristic = rows.iter().position(|d| d.confidence != "exact");
    if let Some(h) = first_heuristic {
        assert!(
            rows[h..].iter().all(|d| d.confidence != "exact"),
            "an exact row after a heuristic one:\n{text}"
        );
    }
    // Nothing imports `lookup` exactly: every row is heuristic, under a banner.
    let (text, rows) = dependents_of(&mut s, json!({"target": "lookup"}));
    assert!(
        text.starts_with("> ⚠ Nothing imports `lookup` exactly") && text.contains("**heuristic**"),
        "{text}"
    );
    assert!(!rows.is_empty(), "{text}");
    assert!(rows.iter().all(|d| d.confidence == "heuristic"), "{text}");
    // Too short for a substring search: a plain zero that says what was searched.
    for target in ["o", "zzqqxx"] {
        let (text, rows) = dependents_of(&mut s, json!({"target": target}));
        assert!(rows.is_empty(), "{text}");
        assert!(!text.contains("⚠"), "{text}");
        assert!(
            text.contains("0 dependents") && text.contains("11 indexed root(s)"),
            "{text}"
        );
    }
}

#[test]
fn dependents_pages_have_exact_offsets_and_add_up() {
    let mut s = example();
    let target = "common/v1/money.proto";
    let (all_text, all) = dependents_of(
        &mut s,
        json!({"target": target, "limit": 200, "granularity": "symbol"}),
    );
    let total = all.len();
    assert!(total >= 10, "{all_text}");
    assert!(
        all_text.contains(&format!(
            "_{total} dependent(s) in 3 file(s); showing 1-{total}._"
        )),
        "{all_text}"
    );
    for limit in [1usize, 4, 5] {
        let mut offset = 0;
        let mut walked = Vec::new();
        loop {
            let (text, rows) = dependents_of(
                &mut s,
                json!({"target": target, "limit": limit, "offset": offset, "granularity": "symbol"}),
            );
            assert!(!rows.is_empty() && rows.len() <= limit, "{text}");
            for (k, d) in rows.iter().enumerate() {
                assert_eq!(d.n, offset + k + 1, "numbering:\n{text}");
            }
            offset += rows.len();
            walked.extend(rows);
            match next_offset(&text, "More:") {
                Some(k) => assert_eq!(k, offset, "next offset:\n{text}"),
                None => {
                    assert_eq!(offset, total, "the last page ends early:\n{text}");
                    break;
                }
            }
        }
        assert_eq!(walked, all, "pages of {limit} differ from one big page");
    }
    for offset in [total, total + 7] {
        let (text, rows) = dependents_of(
            &mut s,
            json!({"target": target, "offset": offset, "granularity": "symbol"}),
        );
        assert!(rows.is_empty());
        assert!(
            text.contains(&format!("Nothing at offset {offset}"))
                && text.contains(&format!("request an offset below {total}")),
            "{text}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// search_docs
// ---------------------------------------------------------------------------------------------

/// (title, path, start, end, content lines) of each section in a `search_docs` answer.
fn sections(text: &str) -> Vec<(String, String, u32, u32, Vec<String>)> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].starts_with("### [") {
            i += 1;
            continue;
        }
        let head = lines[i];
        let (title_part, loc) = head.rsplit_once(" — `").unwrap();
        let title = title_part
            .split_once("] ")
            .unwrap()
            .1
            .trim_matches('`')
            .trim()
            .to_string();
        let loc = loc.trim_end_matches('`');
        let (path, span) = loc.rsplit_once(':').unwrap();
        let (a, b) = span.split_once('-').unwrap();
        let mut j = i + 1;
        while !lines[j].starts_with("```") {
            j += 1;
        }
        let fence: String = lines[j].chars().take_while(|c| *c == '`').collect();
        let mut content = Vec::new();
        j += 1;
        while lines[j] != fence {
            content.push(lines[j].to_string());
            j += 1;
        }
        out.push((
            title,
            path.to_string(),
            a.parse().unwrap(),
            b.parse().unwrap(),
            content,
        ));
        i = j + 1;
    }
    out
}

#[test]
fn docs_rank_the_adr_first_and_show_whole_sections() {
    let mut s = example();
    let text = s.ok("search_docs", json!({"query": "kafka order events"}));
    let secs = sections(&text);
    assert_eq!(
        (secs[0].1.as_str(), secs[0].2),
        ("docs/adr/0001-use-kafka-for-order-events.md", 1),
        "the ADR is not first:\n{text}"
    );
    for query in ["kafka order events", "kafka", "checkout", "carrier feed"] {
        let text = s.ok("search_docs", json!({"query": query, "max_sections": 20}));
        for (title, path, a, b, content) in sections(&text) {
            let src = source_lines(&path);
            let want: Vec<String> = src[a as usize - 1..b as usize].to_vec();
            let mut want = want;
            while want.last().is_some_and(|l| l.trim().is_empty()) {
                want.pop();
            }
            let mut got = content.clone();
            while got.last().is_some_and(|l| l.trim().is_empty()) {
                got.pop();
            }
            assert!(
                want[0].trim_start_matches('#').trim() == title || a == 1,
                "{path}:{a}: the section does not start at its heading {title:?}: {:?}",
                want[0]
            );
            // Whole sections: the next line after `b` is a heading or the end of the file.
            if let Some(next) = src.get(b as usize) {
                let next_nonblank = src[b as usize..].iter().find(|l| !l.trim().is_empty());
                assert!(
                    next_nonblank.is_none_or(|l| l.starts_with('#')),
                    "{path}:{a}-{b} stops before the section ends (next line {next:?})"
                );
            }
            if !got
                .iter()
                .any(|l| l.contains("[FILTERED_ADVERSARIAL_INPUT]"))
            {
                assert_eq!(got, want, "{path}:{a}-{b}: the content is not the source's");
            }
        }
    }
    // The truth's doc sections are found by their titles.
    for d in truth()["docs"].as_array().unwrap() {
        let title = d["title"].as_str().unwrap();
        let text = s.ok("search_docs", json!({"query": title, "max_sections": 20}));
        let want = (
            d["path"].as_str().unwrap().to_string(),
            d["line"].as_u64().unwrap() as u32,
        );
        assert!(
            sections(&text)
                .iter()
                .any(|sec| (sec.1.clone(), sec.2) == want),
            "{title}: {}:{} not found\n{text}",
            want.0,
            want.1
        );
    }
}

#[test]
fn docs_neutralise_the_prompt_injection() {
    let mut s = example();
    for query in [
        "partner portal notes",
        "carrier",
        "maintenance mode",
        "ignore previous instructions",
        "system notice",
    ] {
        let text = s.ok("search_docs", json!({"query": query, "max_sections": 20}));
        let lower = text.to_lowercase();
        for marker in truth()["injections"][0]["markers"].as_array().unwrap() {
            let marker = marker.as_str().unwrap().to_lowercase();
            if query == "ignore previous instructions" {
                // The heading echoes the query; the sections must not carry it.
                let body = lower.split_once('\n').unwrap().1;
                assert!(!body.contains(&marker), "{query}: {marker} in\n{text}");
            } else {
                assert!(!lower.contains(&marker), "{query}: {marker} in\n{text}");
            }
        }
        assert!(!lower.contains("<|im_end|>"), "{text}");
    }
    let text = s.ok("search_docs", json!({"query": "partner portal notes"}));
    let secs = sections(&text);
    assert_eq!(
        (secs[0].1.as_str(), secs[0].2),
        ("docs/integrations/carrier-feed.md", 11),
        "{text}"
    );
    assert!(
        secs[0]
            .4
            .iter()
            .any(|l| l.contains("[FILTERED_ADVERSARIAL_INPUT]")),
        "{text}"
    );
}

#[test]
fn docs_max_sections_is_bounded_and_checked_and_zero_says_what_was_searched() {
    let mut s = example();
    let all = sections(&s.ok("search_docs", json!({"query": "kafka", "max_sections": 20}))).len();
    assert!(all >= 4, "kafka should match several sections");
    for (max, want) in [
        (None, 3.min(all)),
        (Some(1), 1),
        (Some(2), 2),
        (Some(20), all.min(20)),
    ] {
        let mut args = json!({"query": "kafka"});
        if let Some(m) = max {
            args["max_sections"] = json!(m);
        }
        let text = s.ok("search_docs", args);
        assert_eq!(sections(&text).len(), want, "max_sections {max:?}:\n{text}");
        assert!(
            text.contains(&format!("Showing {want} of {all} matching sections")),
            "max_sections {max:?}:\n{text}"
        );
    }
    for bad in [0, -3, 21, 1000] {
        let text = s.err(
            "search_docs",
            json!({"query": "kafka", "max_sections": bad}),
        );
        assert!(text.contains("outside its range 1–20"), "{text}");
    }
    let text = s.ok("search_docs", json!({"query": "xylophone quasar"}));
    assert!(sections(&text).is_empty());
    assert!(
        text.contains("No section matches")
            && text.contains("searched")
            && text.contains("Markdown files")
            && text.contains("generation"),
        "{text}"
    );
}

// ---------------------------------------------------------------------------------------------
// index_status
// ---------------------------------------------------------------------------------------------

#[test]
fn index_status_reports_roots_languages_rejections_generation_and_watcher() {
    let mut s = example();
    let text = s.ok("index_status", json!({}));
    let files: usize = text
        .split("files indexed")
        .next()
        .and_then(|h| h.rsplit(": ").next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no file count:\n{text}"));
    assert!(text.contains("- Generation "), "{text}");
    for root in truth_roots() {
        assert!(
            text.contains(&format!("| `{root}` |")),
            "root {root} missing:\n{text}"
        );
    }
    // Files per language: every language of the example, summing to the indexed files.
    let per_lang = text
        .split("### Files per language\n\n")
        .nth(1)
        .and_then(|r| r.lines().next())
        .unwrap_or_else(|| panic!("no language line:\n{text}"));
    let mut sum = 0;
    let mut langs = BTreeSet::new();
    for part in per_lang.split(", ") {
        let (lang, n) = part.rsplit_once(' ').unwrap();
        sum += n.parse::<usize>().unwrap();
        langs.insert(lang.to_string());
    }
    assert_eq!(sum, files, "per-language counts do not add up:\n{text}");
    for lang in [
        "go",
        "java",
        "kotlin",
        "csharp",
        "python",
        "cpp",
        "rust",
        "ruby",
        "javascript",
        "typescript",
        "protobuf",
        "markdown",
        "yaml",
    ] {
        assert!(langs.contains(lang), "{lang} missing from {per_lang}");
    }
    // The roots table adds up too.
    let table_sum: usize = text
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            l.split('|')
                .nth(3)
                .unwrap()
                .trim()
                .parse::<usize>()
                .unwrap()
        })
        .sum();
    assert_eq!(table_sum, files, "the roots table does not add up:\n{text}");
    // The per-language counts are the example's files by extension, less what the truth says
    // is rejected or never indexed.
    let t = truth();
    let skipped: BTreeSet<String> = t["rejected"]
        .as_array()
        .unwrap()
        .iter()
        .chain(t["not_indexed"].as_array().unwrap())
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect();
    let mut want: std::collections::BTreeMap<&str, usize> = Default::default();
    for path in files_under(&example_dir(), "") {
        let lang = match path.rsplit('.').next().unwrap() {
            "go" => "go",
            "java" => "java",
            "kt" | "kts" => "kotlin",
            "cs" => "csharp",
            "py" => "python",
            "ts" => "typescript",
            "js" => "javascript",
            "rs" => "rust",
            "cc" | "h" => "cpp",
            "rb" => "ruby",
            "proto" => "protobuf",
            "md" => "markdown",
            "yaml" | "yml" => "yaml",
            _ => continue,
        };
        if !skipped.contains(&path) {
            *want.entry(lang).or_default() += 1;
        }
    }
    for (lang, n) in &want {
        assert!(
            per_lang.split(", ").any(|p| p == format!("{lang} {n}")),
            "expected {lang} {n} in {per_lang}"
        );
    }
    // Rejected files: the count, each reason label, each file with its reason.
    let rejected = t["rejected"].as_array().unwrap();
    assert!(
        text.contains(&format!(" {} rejected.", rejected.len())),
        "{text}"
    );
    let mut labels: std::collections::BTreeMap<&str, usize> = Default::default();
    for r in rejected {
        *labels.entry(r["label"].as_str().unwrap()).or_default() += 1;
        let path = r["path"].as_str().unwrap();
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("- `{path}`: ")))
            .unwrap_or_else(|| panic!("rejected {path} not listed with a reason:\n{text}"));
        assert!(
            line.len() > path.len() + 12,
            "{path}: no reason on {line:?}"
        );
    }
    for (label, n) in labels {
        assert!(
            text.contains(&format!("{label}: {n}")),
            "rejected label {label}: {n} missing:\n{text}"
        );
    }
    assert!(text.contains("- Watcher: "), "no watcher line:\n{text}");
    assert!(text.contains("- Freshness: "), "no freshness line:\n{text}");
    assert!(text.contains("- First index: "), "{text}");
}

// ---------------------------------------------------------------------------------------------
// Every tool
// ---------------------------------------------------------------------------------------------

#[test]
fn every_tool_refuses_an_unknown_argument_naming_it() {
    let mut s = example();
    let cases = [
        ("smart_search", json!({"query": "Order", "limt": 3})),
        (
            "find_dependents",
            json!({"target": "quote.h", "granularty": "file"}),
        ),
        (
            "analyze_grpc",
            json!({"target": "OrderService", "include_test": true}),
        ),
        (
            "analyze_impact",
            json!({"target": "orders.created", "depht": 2}),
        ),
        ("search_docs", json!({"query": "kafka", "max_section": 2})),
        ("visualize_mesh", json!({"formt": "json"})),
        ("index_status", json!({"verbose": true})),
    ];
    for (tool, args) in cases {
        let field = args
            .as_object()
            .unwrap()
            .keys()
            .find(|k| !["query", "target"].contains(&k.as_str()))
            .unwrap()
            .clone();
        let text = s.err(tool, args);
        assert!(
            text.contains(&format!("`{field}`")),
            "{tool}: the error does not name `{field}`:\n{text}"
        );
    }
    // A missing required argument is named too.
    for (tool, field) in [
        ("smart_search", "query"),
        ("find_dependents", "target"),
        ("analyze_grpc", "target"),
        ("analyze_impact", "target"),
        ("search_docs", "query"),
    ] {
        let text = s.err(tool, json!({}));
        assert!(text.contains(field), "{tool}: {text}");
    }
}

#[test]
fn no_answer_is_cut_by_the_central_cap_even_at_the_largest_limits() {
    let mut s = example();
    let calls = [
        ("smart_search", json!({"query": "e", "limit": 100})),
        (
            "smart_search",
            json!({"query": "o", "limit": 100, "include_body": true}),
        ),
        (
            "smart_search",
            json!({"query": "e", "limit": 100, "fuzzy": true}),
        ),
        (
            "smart_search",
            json!({"query": "the", "fuzzy": true, "limit": 100}),
        ),
        (
            "find_dependents",
            json!({"target": "common/v1/money.proto", "limit": 200, "include_tests": true}),
        ),
        (
            "find_dependents",
            json!({"target": "OrderService", "limit": 200, "include_tests": true}),
        ),
        ("find_dependents", json!({"target": "lookup", "limit": 200})),
        (
            "analyze_grpc",
            json!({"target": "Order", "include_tests": true}),
        ),
        (
            "analyze_grpc",
            json!({"target": "acme", "include_tests": true}),
        ),
        ("analyze_grpc", json!({"target": "e"})),
        (
            "analyze_impact",
            json!({"target": "orders.created", "depth": 5, "limit": 200, "include_tests": true}),
        ),
        (
            "analyze_impact",
            json!({"target": "OrderService", "depth": 5, "limit": 200}),
        ),
        (
            "search_docs",
            json!({"query": "the a of and kafka order", "max_sections": 20}),
        ),
        ("visualize_mesh", json!({"max_services": 200})),
        (
            "visualize_mesh",
            json!({"max_services": 200, "format": "json"}),
        ),
        (
            "visualize_mesh",
            json!({"max_services": 200, "format": "html"}),
        ),
        (
            "visualize_mesh",
            json!({"service": "services/payments", "format": "html"}),
        ),
        ("index_status", json!({})),
    ];
    for (tool, args) in calls {
        let a = s.tool(tool, args.clone());
        assert!(
            a.text.len() <= 48 * 1024,
            "{tool} {args}: {} bytes",
            a.text.len()
        );
        assert!(
            !a.text.contains("48 KiB tool-output cap"),
            "{tool} {args} was cut by the central cap"
        );
    }
}

/// A Ruby `module` is a declaration to find; a C# namespace, repeated by every file in it, is
/// not (that question is `find_dependents`').
#[test]
fn ruby_modules_are_found_and_csharp_namespaces_are_not() {
    let mut s = example();
    let text = s.ok("smart_search", json!({"query": "Recommendations"}));
    assert!(
        text.contains("services/recommendations/lib/recommender.rb:1`"),
        "{text}"
    );
    assert!(text.contains("module `Recommendations`"), "{text}");
    let cs_namespace = files_under(&example_dir(), "")
        .into_iter()
        .filter(|p| p.ends_with(".cs"))
        .find_map(|p| {
            source_lines(&p).iter().find_map(|l| {
                l.strip_prefix("namespace ")
                    .map(|n| n.trim_end_matches([';', ' ', '{']).to_string())
            })
        });
    assert!(cs_namespace.is_some(), "the example has a C# namespace");
    if let Some(ns) = cs_namespace {
        let text = s.ok("smart_search", json!({"query": ns}));
        assert!(
            !text.contains("module `"),
            "a C# namespace listed as a declaration:\n{text}"
        );
    }
}

/// A file declaring `_publish` before `publish` is headed by the name as typed.
#[test]
fn the_name_as_typed_heads_its_file() {
    let ws = common::temp_dir("as-typed");
    std::fs::write(
        ws.join("rabbitmq.py"),
        "class Publisher:\n    def _publish(self, m):\n        pass\n\n    def publish(self, m):\n        self._publish(m)\n",
    )
    .unwrap();
    let mut s = Session::start(&ws);
    let text = s.ok("smart_search", json!({"query": "publish"}));
    let head = text.find("### [1]").map(|i| &text[i..]).unwrap_or("");
    assert!(head.starts_with("### [1] `rabbitmq.py:5`"), "{text}");
}

/// A type used by its own package's files (no import in Java, Go) and a Go function used by
/// an importer of its package as `pkg.Name` are dependents, with the line of the use.
#[test]
fn unimported_uses_in_the_same_package_and_qualified_go_uses_are_dependents() {
    let ws = common::temp_dir("same-package");
    let java = ws.join("shipping/src/main/java/com/acme/shipping");
    std::fs::create_dir_all(&java).unwrap();
    std::fs::write(ws.join("shipping/pom.xml"), "<project/>\n").unwrap();
    std::fs::write(
        java.join("CartHelper.java"),
        "package com.acme.shipping;\n\npublic class CartHelper {\n}\n",
    )
    .unwrap();
    std::fs::write(
        java.join("Controller.java"),
        "package com.acme.shipping;\n\n// CartHelper in a comment\npublic class Controller {\n    void go() {\n        CartHelper h = new CartHelper();\n    }\n}\n",
    )
    .unwrap();
    std::fs::write(
        java.join("Other.java"),
        "package com.acme.shipping;\n\npublic class Other {\n    MyCartHelper x;\n}\n",
    )
    .unwrap();
    let go = ws.join("catalog");
    std::fs::create_dir_all(go.join("api")).unwrap();
    std::fs::write(go.join("go.mod"), "module example.com/catalog\n").unwrap();
    std::fs::write(
        go.join("api/catalog.go"),
        "package api\n\nfunc NewCatalogAPI() int {\n\treturn 1\n}\n",
    )
    .unwrap();
    std::fs::write(
        go.join("main.go"),
        "package main\n\nimport (\n\t\"example.com/catalog/api\"\n)\n\nfunc main() {\n\t_ = api.NewCatalogAPI()\n}\n",
    )
    .unwrap();
    let mut s = Session::start(&ws);
    let text = s.ok("find_dependents", json!({"target": "CartHelper"}));
    assert!(
        text.contains("Controller.java:6` — uses CartHelper"),
        "{text}"
    );
    assert!(text.contains("in class `Controller` (heuristic)"), "{text}");
    assert!(!text.contains("Other.java"), "{text}");
    let text = s.ok("find_dependents", json!({"target": "NewCatalogAPI"}));
    assert!(
        text.contains("catalog/main.go:8` — uses api.NewCatalogAPI"),
        "{text}"
    );
}

#[test]
fn a_library_function_is_called_from_the_services_using_it() {
    // A C# extension method declared in a namespace the callers never import (a common .NET
    // idiom): its calls in other roots are its dependents.
    let ws = common::workspace(
        "deps-library-function",
        &[
            (
                "src/EventBus/EventBus.csproj",
                "<Project Sdk=\"Microsoft.NET.Sdk\"></Project>\n",
            ),
            (
                "src/EventBus/Extensions.cs",
                "namespace Microsoft.Extensions.Hosting;\npublic static class BusExtensions\n{\n    public static IBus AddEventBus(this IHostApplicationBuilder b, string name)\n    {\n        return null;\n    }\n}\n",
            ),
            (
                "src/Basket.API/Basket.API.csproj",
                "<Project Sdk=\"Microsoft.NET.Sdk.Web\"></Project>\n",
            ),
            (
                "src/Basket.API/Program.cs",
                "var builder = WebApplication.CreateBuilder(args);\nbuilder.AddEventBus(\"eventbus\");\n",
            ),
            ("src/orders/go.mod", "module orders\n"),
            (
                "src/orders/main.go",
                "package main\n\nfunc main() { AddEventBus(\"x\") }\n",
            ),
        ],
    );
    let mut s = Session::start(&ws);
    let text = s.ok("find_dependents", json!({"target": "AddEventBus"}));
    let sites: Vec<(String, u32)> = deps(&text)
        .iter()
        .map(|d| (d.path.clone(), d.site))
        .collect();
    // Another language's same-named function is no call of it.
    assert_eq!(
        sites,
        vec![("src/Basket.API/Program.cs".to_string(), 2)],
        "{text}"
    );
}

#[test]
fn dependents_of_a_function_are_its_calls_found_by_name() {
    // The index keeps declarations, not every call: a function nothing imports still has
    // callers, in its own file and in its service, and "0 dependents" would be false.
    let ws = common::workspace(
        "deps-function-calls",
        &[
            (
                "cart/server.js",
                "const total = calcTotal(items);\n// calcTotal(x) in a comment\nfunction calcTotal(list) {\n  return list.length;\n}\nmodule.exports = { again: () => calcTotal ([]) };\n",
            ),
            (
                "shipping/src/CartHelper.java",
                "package shipping;\npublic class CartHelper {\n    public String addToCart(String id) {\n        return id;\n    }\n}\n",
            ),
            (
                "shipping/src/Controller.java",
                "package shipping;\npublic class Controller {\n    String add(CartHelper helper) {\n        return helper.addToCart(\"x\");\n    }\n}\n",
            ),
        ],
    );
    let mut s = Session::start(&ws);
    let text = s.ok("find_dependents", json!({"target": "calcTotal"}));
    let rows = deps(&text);
    let sites: Vec<(String, u32)> = rows.iter().map(|d| (d.path.clone(), d.site)).collect();
    assert!(sites.contains(&("cart/server.js".into(), 1)), "{text}");
    assert!(sites.contains(&("cart/server.js".into(), 6)), "{text}");
    assert!(
        !sites.iter().any(|(_, l)| *l == 2 || *l == 3),
        "comment or declaration listed:\n{text}"
    );
    assert!(rows.iter().all(|d| d.confidence == "heuristic"), "{text}");
    assert!(text.contains("found by name"), "{text}");
    let text = s.ok("find_dependents", json!({"target": "CartHelper.addToCart"}));
    let sites: Vec<(String, u32)> = deps(&text)
        .iter()
        .map(|d| (d.path.clone(), d.site))
        .collect();
    assert_eq!(
        sites,
        vec![("shipping/src/Controller.java".to_string(), 4)],
        "{text}"
    );
    // A name nothing declares as a function keeps the plain answer.
    let text = s.ok("find_dependents", json!({"target": "noSuchFunction"}));
    assert!(text.contains("0 dependents"), "{text}");
}
