//! MCP resources: the workspace map and the index health as fixed resources, and templates
//! for what agents point at — a service, an RPC, a topic, a route, a doc section. Reading one
//! runs the tool that answers the same question ([`tool_for`]), through the same path as a
//! `tools/call` (index wait, blocking pool, stop rules, masking, cap, audit), so a resource
//! says exactly what the matching tool would.
//!
//! `resources/list` names the two fixed resources, then one resource per service, RPC, topic,
//! route and doc section of the current index generation, paged ([`PAGE`] per page, the cursor
//! is the offset as text). The same names feed argument completion ([`names`]).

use serde_json::{Value, json};

use crate::index::snapshot::Snapshot;

/// Resources per `resources/list` page.
pub const PAGE: usize = 100;

/// The URI scheme of every mesh resource.
pub const SCHEME: &str = "mesh://";

/// What a name completes or a template variable stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Service,
    Rpc,
    Topic,
    Route,
    Doc,
}

impl Kind {
    /// In listing order.
    pub const ALL: [Kind; 5] = [
        Kind::Service,
        Kind::Rpc,
        Kind::Topic,
        Kind::Route,
        Kind::Doc,
    ];

    /// The URI segment (`mesh://<segment>/{name}`).
    pub fn segment(self) -> &'static str {
        match self {
            Kind::Service => "service",
            Kind::Rpc => "rpc",
            Kind::Topic => "topic",
            Kind::Route => "route",
            Kind::Doc => "doc",
        }
    }

    fn describe(self) -> (&'static str, &'static str) {
        match self {
            Kind::Service => (
                "Service",
                "One service's contracts and links, as visualize_mesh(service) draws them.",
            ),
            Kind::Rpc => (
                "gRPC service or RPC",
                "Definition, handlers and callers, as analyze_grpc(target) traces them.",
            ),
            Kind::Topic => (
                "Event topic",
                "Producers and consumers, as analyze_impact(target) lists them.",
            ),
            Kind::Route => (
                "HTTP route",
                "Handler and callers of `VERB /path`, as analyze_impact(target) lists them.",
            ),
            Kind::Doc => (
                "Doc section",
                "The best-matching Markdown section, as search_docs(query) finds it.",
            ),
        }
    }
}

/// The fixed resources: (uri, name, title, description).
const FIXED: [(&str, &str, &str, &str); 2] = [
    (
        "mesh://mesh",
        "mesh",
        "Service mesh",
        "The workspace's services and how they talk (Mermaid), as visualize_mesh draws it.",
    ),
    (
        "mesh://status",
        "status",
        "Index status",
        "Freshness and health of the index, as index_status reports it.",
    ),
];

/// Every name of one kind in the snapshot, deduplicated, in a stable order.
pub fn names(snap: &Snapshot, kind: Kind) -> Vec<String> {
    let g = &snap.graph;
    let mut v: Vec<String> = match kind {
        Kind::Service => return crate::tools::visualize_mesh::service_names(snap),
        Kind::Rpc => g
            .contracts
            .iter()
            .map(|c| c.name.clone())
            .chain(
                g.rpcs
                    .iter()
                    .map(|r| format!("{}.{}", g.contracts[r.contract as usize].name, r.name)),
            )
            .collect(),
        Kind::Topic => g.topics.iter().map(|t| t.name.clone()).collect(),
        Kind::Route => g
            .routes
            .iter()
            .map(|r| format!("{} {}", r.method, r.path))
            .collect(),
        Kind::Doc => snap
            .files
            .iter()
            .flat_map(|f| f.facts().sections.iter().map(|s| s.title.clone()))
            .collect(),
    };
    // A blank name (a heading of only `#`s, a topic of spaces) makes no URI `tool_for` reads.
    v.retain(|n| !n.trim().is_empty());
    crate::order::sort(&mut v);
    v.dedup();
    v
}

/// One doc section as a resource: its URI segment, unique in the workspace — the encoded
/// title, and for the second and later sections whose titles are equal ignoring case, `;k`
/// (`;` is always escaped in an encoded title, so the suffix is never part of one) — and the
/// section it reads.
pub struct DocResource {
    pub segment: String,
    pub title: String,
    pub path: String,
    pub line: u32,
}

/// Every doc section of the snapshot, in file order, each with its unique URI segment.
pub fn doc_sections(snap: &Snapshot) -> Vec<DocResource> {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut out = Vec::new();
    for f in &snap.files {
        for s in &f.facts().sections {
            if s.title.trim().is_empty() {
                continue; // no URI reads it (see `names`)
            }
            let k = seen.entry(s.title.to_lowercase()).or_default();
            *k += 1;
            let mut segment = encode(&s.title);
            if *k > 1 {
                segment.push_str(&format!(";{k}"));
            }
            out.push(DocResource {
                segment,
                title: s.title.clone(),
                path: snap.display_path(f),
                line: s.line,
            });
        }
    }
    out
}

/// The section a `mesh://doc/` URI segment names, when it is one of [`doc_sections`].
pub fn doc_target(snap: &Snapshot, segment: &str) -> Option<DocResource> {
    doc_sections(snap)
        .into_iter()
        .find(|d| d.segment == segment)
}

/// The `resourceTemplates` of `resources/templates/list`.
pub fn templates(with_title: bool) -> Value {
    let list: Vec<Value> = Kind::ALL
        .iter()
        .map(|k| {
            let (title, description) = k.describe();
            let mut t = json!({
                "uriTemplate": format!("{SCHEME}{}/{{name}}", k.segment()),
                "name": k.segment(),
                "description": description,
                "mimeType": "text/markdown",
            });
            if with_title {
                t["title"] = json!(title);
            }
            t
        })
        .collect();
    json!({ "resourceTemplates": list })
}

/// One page of `resources/list`: the fixed resources, then every indexed name of each kind.
/// `cursor` is the offset of the page (as text); a cursor that is not one is an error.
pub fn list(
    snap: Option<&Snapshot>,
    cursor: Option<&str>,
    with_title: bool,
) -> Result<Value, String> {
    let invalid = |c: &str, why: &str| {
        format!(
            "Invalid params: invalid cursor {} ({why}); pass the nextCursor of the previous page, \
or no cursor for the first page",
            crate::protocol::echo_name(c)
        )
    };
    let offset = match cursor {
        None => 0,
        Some(c) => c
            .parse::<usize>()
            .map_err(|_| invalid(c, "not a cursor this server handed out"))?,
    };
    let resource = |uri: String, name: &str, title: &str, description: &str| {
        let mut r = json!({
            "uri": uri,
            "name": name,
            "description": description,
            "mimeType": "text/markdown",
        });
        if with_title {
            r["title"] = json!(title);
        }
        r
    };
    let mut all: Vec<Value> = FIXED
        .iter()
        .map(|(uri, name, title, d)| resource(uri.to_string(), name, title, d))
        .collect();
    // Every URI listed can be subscribed to: a longer one (a heading of thousands of
    // characters; a non-ASCII byte is three once encoded) is left out of the list.
    let fits = |uri: &str| uri.len() <= MAX_URI_BYTES;
    if let Some(snap) = snap {
        for kind in Kind::ALL {
            let (title, description) = kind.describe();
            if kind == Kind::Doc {
                for d in doc_sections(snap) {
                    let uri = format!("{SCHEME}doc/{}", d.segment);
                    if !fits(&uri) {
                        continue;
                    }
                    let name = format!("{} ({}:{})", d.title, d.path, d.line);
                    all.push(resource(
                        uri,
                        &name,
                        &format!("{title} {name}"),
                        description,
                    ));
                }
                continue;
            }
            for n in names(snap, kind) {
                let uri = format!("{SCHEME}{}/{}", kind.segment(), encode(&n));
                if !fits(&uri) {
                    continue;
                }
                all.push(resource(uri, &n, &format!("{title} {n}"), description));
            }
        }
    }
    let total = all.len();
    if offset > total {
        return Err(invalid(
            cursor.unwrap_or_default(),
            &format!("past the end of the {total} resources"),
        ));
    }
    let page: Vec<Value> = all.into_iter().skip(offset).take(PAGE).collect();
    let mut result = json!({ "resources": page });
    // Checked: `offset` is the client's, and at most `total` here, but the sum must not wrap.
    if let Some(next) = offset.checked_add(PAGE).filter(|n| *n < total) {
        result["nextCursor"] = json!(next.to_string());
    }
    Ok(result)
}

/// The tool and arguments that answer a resource URI; `None` when the URI is not ours.
pub fn tool_for(uri: &str) -> Option<(&'static str, Value)> {
    let rest = uri.strip_prefix(SCHEME)?;
    match rest {
        "mesh" => return Some(("visualize_mesh", json!({}))),
        "status" => return Some(("index_status", json!({"wait": false}))),
        _ => {}
    }
    let (segment, raw) = rest.split_once('/')?;
    // A doc section's `;k` suffix (see [`doc_sections`]) is not part of its title.
    let raw = match raw.rsplit_once(';') {
        Some((title, k)) if segment == "doc" && k.parse::<u32>().is_ok_and(|k| k > 1) => title,
        _ => raw,
    };
    let name = decode(raw)?;
    if name.trim().is_empty() {
        return None;
    }
    Some(match segment {
        "service" => ("visualize_mesh", json!({ "service": name })),
        "rpc" => ("analyze_grpc", json!({ "target": name })),
        "topic" | "route" => ("analyze_impact", json!({ "target": name })),
        // The section is picked out of the answer when the URI names one (server).
        "doc" => ("search_docs", json!({ "query": name, "max_sections": 20 })),
        _ => return None,
    })
}

/// The longest URI `resources/subscribe` accepts, in bytes.
pub const MAX_URI_BYTES: usize = 2048;

/// The most URIs one session may be subscribed to at once.
pub const MAX_SUBSCRIPTIONS: usize = 256;

/// The URI forms a mesh resource takes, for error messages.
pub const ACCEPTED_FORMS: &str = "mesh://mesh, mesh://status, or \
mesh://{service|rpc|topic|route|doc}/{name} with the name percent-encoded (see \
resources/templates/list)";

/// Whether `uri` is one `resources/subscribe` may follow: bounded, and a resource of ours
/// (a mesh URI of a known form, or a fixture of the conformance suite when those are armed).
pub fn check_subscribable(uri: &str) -> Result<(), String> {
    if uri.len() > MAX_URI_BYTES {
        return Err(format!(
            "Invalid params for resources/subscribe: \"uri\" is {} bytes, at most \
{MAX_URI_BYTES}; subscribe to a resource URI from resources/list",
            uri.len()
        ));
    }
    // The conformance suite follows `test://watched-resource`, which it never reads.
    let conformance_fixture = crate::isolate::fixtures_enabled() && uri.starts_with("test://");
    if conformance_fixture || fixture(uri).is_some() || tool_for(uri).is_some() {
        return Ok(());
    }
    let why = if uri.starts_with(SCHEME) {
        "is not a mesh resource URI of a known kind"
    } else {
        "is not a mesh:// URI"
    };
    Err(format!(
        "Invalid params for resources/subscribe: {} {why}. Accepted: {ACCEPTED_FORMS}.",
        crate::protocol::echo_input(uri)
    ))
}

/// Up to `n` of `candidates` closest to `name`: those containing it (ranked like completion),
/// then the nearest by edit distance (ignoring case).
pub fn close_names(candidates: &[String], name: &str, n: usize) -> Vec<String> {
    let mut out = crate::completion::rank(candidates.to_vec(), name);
    out.truncate(n);
    if out.len() < n {
        let q: Vec<char> = name.to_lowercase().chars().take(64).collect();
        let mut by_distance: Vec<(usize, &String)> = candidates
            .iter()
            .filter(|c| !out.contains(c))
            .map(|c| {
                let c_low: Vec<char> = c.to_lowercase().chars().take(64).collect();
                (edit_distance(&q, &c_low), c)
            })
            .collect();
        crate::order::sort(&mut by_distance);
        let missing = n - out.len();
        out.extend(
            by_distance
                .into_iter()
                .take(missing)
                .map(|(_, c)| c.clone()),
        );
    }
    out
}

/// Levenshtein distance of two short strings.
pub(crate) fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Whether the name in a templated `uri` names something of the index; `Err` carries the kind
/// and a few close names of that kind when it does not. Services match like
/// `visualize_mesh(service)` (exactly, ignoring case, or by the last path segment); topics
/// and routes by their name ignoring case; an RPC by its name or a qualified form of it (a
/// `.proto` path is left to analyze_grpc); a doc names a query, checked by its answer.
pub fn exists(snap: &Snapshot, uri: &str) -> Result<(), (Kind, Vec<String>)> {
    let Some((segment, raw)) = uri.strip_prefix(SCHEME).and_then(|r| r.split_once('/')) else {
        return Ok(()); // a fixed resource
    };
    if segment == "doc"
        && raw.contains(';')
        && let Some(title) = tool_for(uri).and_then(|(_, a)| a["query"].as_str().map(String::from))
        && doc_target(snap, raw).is_none()
    {
        // A section suffix no section of this generation has.
        return Err((Kind::Doc, close_names(&names(snap, Kind::Doc), &title, 5)));
    }
    let Some(name) = decode(raw) else {
        return Ok(()); // tool_for refused it already
    };
    let kind = match segment {
        "service" => Kind::Service,
        "rpc" => Kind::Rpc,
        "topic" => Kind::Topic,
        "route" => Kind::Route,
        _ => return Ok(()),
    };
    let name = name.trim();
    let found = match kind {
        Kind::Service => crate::tools::visualize_mesh::resolve_service(snap, name).is_some(),
        Kind::Rpc if name.ends_with(".proto") => true,
        Kind::Rpc => {
            let q = name.replace('/', ".").to_lowercase();
            names(snap, kind).iter().any(|n| {
                let n = n.to_lowercase();
                n == q || q.ends_with(&format!(".{n}")) || n.ends_with(&format!(".{q}"))
            })
        }
        _ => names(snap, kind)
            .iter()
            .any(|n| n.eq_ignore_ascii_case(name)),
    };
    if found {
        return Ok(());
    }
    Err((kind, close_names(&names(snap, kind), name, 5)))
}

/// Percent-encodes what a URI path segment cannot hold as is (RFC 3986 unreserved kept).
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Decodes `%XX` escapes; `None` when the result is not UTF-8 or an escape is broken.
pub fn decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// How often a session that listed or subscribed to resources looks for a new generation.
pub const WATCH_INTERVAL: std::time::Duration = std::time::Duration::from_millis(500);

/// A legacy session's interest in resources: whether it listed them (it then hears
/// `notifications/resources/list_changed` when a new index generation is published) and which
/// URIs it subscribed to (each hears `notifications/resources/updated`); the watch task runs
/// while either holds.
#[derive(Default)]
pub struct Subscriptions {
    pub listed: bool,
    pub uris: std::collections::BTreeSet<String>,
    /// The task of [`watch`], once started; dropped (cancelled) when the session drains.
    pub task: Option<smol::Task<()>>,
    /// The session has ended: no watch starts any more (a `resources/list` still in flight
    /// when input closed must not start one, or its sender would keep the writer open).
    pub closed: bool,
}

/// Sends the notifications of [`Subscriptions`] on `out` for every new index generation, until
/// `out` closes or the task is dropped.
pub async fn watch(
    index: std::sync::Arc<crate::index::snapshot::IndexHandle>,
    subs: std::sync::Arc<std::sync::Mutex<Subscriptions>>,
    out: async_channel::Sender<String>,
) {
    let mut seen = index.generation();
    loop {
        smol::Timer::after(WATCH_INTERVAL).await;
        let now = index.generation();
        if now == seen {
            continue;
        }
        seen = now;
        let (listed, uris) = match subs.lock() {
            Ok(s) if !s.closed => (s.listed, s.uris.clone()),
            _ => return,
        };
        let mut frames = Vec::new();
        if listed {
            frames.push(crate::protocol::notification(
                "notifications/resources/list_changed",
                json!({}),
            ));
        }
        for uri in uris {
            frames.push(crate::protocol::notification(
                "notifications/resources/updated",
                json!({ "uri": uri }),
            ));
        }
        for f in frames {
            if out.send(f).await.is_err() {
                return;
            }
        }
    }
}

/// The conformance suite's fixture resources (served with `MESH_TEST_FIXTURES=1` only): the
/// contents of `test://static-text`, `test://static-binary` and `test://template/{id}/data`.
pub fn fixture(uri: &str) -> Option<Value> {
    if !crate::isolate::fixtures_enabled() {
        return None;
    }
    let content = match uri {
        "test://static-text" => json!({"uri": uri, "mimeType": "text/plain",
            "text": "This is the content of the static text resource."}),
        // "Hello, binary!" in base64.
        "test://static-binary" => json!({"uri": uri, "mimeType": "application/octet-stream",
            "blob": "SGVsbG8sIGJpbmFyeSE="}),
        _ => {
            let id = uri
                .strip_prefix("test://template/")?
                .strip_suffix("/data")?;
            json!({"uri": uri, "mimeType": "application/json",
                "text": json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()})
        }
    };
    Some(json!({ "contents": [content] }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_name_the_tool_that_answers_them() {
        assert_eq!(tool_for("mesh://mesh").unwrap().0, "visualize_mesh");
        assert_eq!(
            tool_for("mesh://route/GET%20%2Forders%2F%7Bid%7D").unwrap(),
            ("analyze_impact", json!({"target": "GET /orders/{id}"}))
        );
        assert_eq!(
            tool_for("mesh://rpc/OrderService.CreateOrder").unwrap().1,
            json!({"target": "OrderService.CreateOrder"})
        );
        assert!(tool_for("mesh://rpc/").is_none());
        assert!(tool_for("mesh://nope/x").is_none());
        assert!(tool_for("file:///etc/passwd").is_none());
        assert!(tool_for("mesh://topic/%ZZ").is_none());
        let name = "GET /orders/{id} ünï";
        assert_eq!(decode(&encode(name)).as_deref(), Some(name));
    }

    #[test]
    fn the_list_pages_with_an_offset_cursor() {
        let first = list(None, None, true).unwrap();
        assert_eq!(first["resources"].as_array().unwrap().len(), 2);
        assert!(first.get("nextCursor").is_none());
        assert!(list(None, Some("x"), true).is_err());
        for bad in [
            usize::MAX.to_string(),
            (usize::MAX - 50).to_string(),
            "3".into(),
        ] {
            let e = list(None, Some(&bad), true).unwrap_err();
            assert!(e.contains("invalid cursor"), "{e}");
        }
        assert!(list(None, Some("2"), true).unwrap()["resources"] == json!([]));
        assert_eq!(
            templates(false)["resourceTemplates"][0]["uriTemplate"],
            "mesh://service/{name}"
        );
    }
}
