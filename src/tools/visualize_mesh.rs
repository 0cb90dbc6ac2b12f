//! `visualize_mesh`: the whole workspace as services and the links between them — gRPC calls,
//! HTTP calls, event topics (as nodes, so a fan-out reads at a glance) and imports — as
//! Mermaid, JSON or a standalone HTML page.
//!
//! The view is aggregated, never the raw graph: one node per service (a root, or a top-level
//! directory when the workspace has a single root), one link per (from, to, kind) with the
//! number of sites and the weakest confidence among them. The busiest `max_services` services
//! are drawn and the rest fold into "other services"; `service` zooms into one service and
//! shows its own contracts (gRPC services it implements, routes it serves, topics it touches)
//! and the services they talk to. Every render shrinks itself until it fits the output cap.
//! [`mesh_view`] and the renderers are shared with `mesh-mcp graph`.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{ToolDef, ToolEnv, ToolOutput, object_schema};
use crate::index::facts::EventRole;
use crate::index::graph::{Confidence, Loc};
use crate::index::snapshot::Snapshot;
use crate::render::inline_code;

/// The tool definition.
pub static TOOL: ToolDef = ToolDef {
    name: "visualize_mesh",
    title: "Draw the service mesh",
    description: "Draws the workspace's services and how they talk — gRPC calls, HTTP calls, \
event topics with their producers and consumers, imports between services — as Mermaid \
(default), JSON or a standalone HTML page. Each link carries its number of call sites and its \
weakest confidence. Zoom into one service with `service` to see its own contracts. For one \
symbol or RPC use smart_search or analyze_grpc. \
Example: {\"format\": \"mermaid\", \"service\": \"services/orders\"}.",
    input_schema: || {
        object_schema(
            json!({
                "format": {"type": "string", "enum": ["mermaid", "json", "html"], "description": "Output format (default \"mermaid\"), e.g. \"json\"."},
                "service": {"type": "string", "description": "Zoom into one service by name, e.g. \"services/orders\" (names are listed by a call without it)."},
                "max_services": super::int_schema("Services drawn before the rest fold into \"other\", e.g. 20.", 40, 1, 200)
            }),
            &[],
        )
    },
    output_schema: Some(super::structured::Shape {
        paged: false,
        extra: r#"{"nodes":{"type":"array"},"servicesTotal":{"type":"integer"}}"#,
        row: "{}",
    }),
    run,
    truncation_hint: |_| "Zoom into one service with `service`, or lower `max_services`.".into(),
    index: super::IndexUse::Required,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    format: Option<String>,
    service: Option<String>,
    max_services: Option<i64>,
}

/// What a node of the picture stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    Service,
    Topic,
    /// A contract of the zoomed service (gRPC service, route, …).
    Contract,
    /// Folded services or topics.
    Other,
}

/// What a link of the picture stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkKind {
    Grpc,
    Http,
    Produces,
    Consumes,
    Imports,
    /// A zoomed service's own contract (service → contract).
    Owns,
}

impl LinkKind {
    fn label(self) -> &'static str {
        match self {
            LinkKind::Grpc => "gRPC",
            LinkKind::Http => "HTTP",
            LinkKind::Produces => "produces",
            LinkKind::Consumes => "consumes",
            LinkKind::Imports => "imports",
            LinkKind::Owns => "owns",
        }
    }
}

/// A node of the aggregated view.
#[derive(Debug, Clone, Serialize)]
pub struct MeshNode {
    pub id: String,
    pub name: String,
    pub kind: NodeKind,
    /// A short description (`12 files · go, java`, `gRPC service`, `3 producers`).
    pub caption: String,
    /// Where it is declared (`services/orders/proto/orders.proto:4`), when it is one place.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

/// A folded link of the aggregated view.
#[derive(Debug, Clone, Serialize)]
pub struct MeshLink {
    pub from: String,
    pub to: String,
    pub kind: LinkKind,
    /// How many sites (calls, producers, imports) this link folds.
    pub count: u32,
    /// The weakest confidence among them.
    pub confidence: &'static str,
    /// How many of the sites are exact, heuristic and ambiguous, when they differ (one
    /// ambiguous call among five says little about the other four).
    #[serde(skip_serializing_if = "ConfidenceCounts::is_uniform")]
    pub confidence_counts: ConfidenceCounts,
    /// One site, `path:line`, as evidence.
    pub example: String,
}

/// Sites of a link per confidence.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ConfidenceCounts {
    pub exact: u32,
    pub heuristic: u32,
    pub ambiguous: u32,
}

impl ConfidenceCounts {
    fn add(&mut self, conf: Confidence, n: u32) {
        match conf {
            Confidence::Exact => self.exact += n,
            Confidence::Heuristic => self.heuristic += n,
            Confidence::Ambiguous => self.ambiguous += n,
        }
    }

    fn sum(&mut self, other: ConfidenceCounts) {
        self.exact += other.exact;
        self.heuristic += other.heuristic;
        self.ambiguous += other.ambiguous;
    }

    /// True when at most one confidence has sites (the link's `confidence` says it all).
    fn is_uniform(&self) -> bool {
        [self.exact, self.heuristic, self.ambiguous]
            .iter()
            .filter(|&&n| n > 0)
            .count()
            <= 1
    }

    /// `3 heuristic, 1 ambiguous`: the non-zero counts, strongest first.
    fn describe(&self) -> String {
        [
            (self.exact, "exact"),
            (self.heuristic, "heuristic"),
            (self.ambiguous, "ambiguous"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, w)| format!("{n} {w}"))
        .collect::<Vec<_>>()
        .join(", ")
    }
}

/// The aggregated picture.
#[derive(Debug, Clone, Serialize)]
pub struct MeshView {
    pub workspace: String,
    /// `root` (one service per root) or `directory` (single-root workspaces).
    pub grouping: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zoom: Option<String>,
    pub nodes: Vec<MeshNode>,
    pub links: Vec<MeshLink>,
    /// Services drawn / all services.
    pub services_shown: usize,
    pub services_total: usize,
    /// The largest folded services (name, files).
    pub hidden: Vec<(String, usize)>,
    /// Ambiguous links whose candidates span several services, not drawn.
    pub ambiguous_skipped: usize,
    /// Zoomed: the focus's contracts not drawn (beyond `max_services`, the busiest first),
    /// folded into one "other contracts" node.
    #[serde(skip_serializing_if = "is_zero")]
    pub contracts_folded: usize,
    /// Zoomed: the first few folded contracts, busiest first (each is a next call).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hidden_contracts: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Every service name `service` accepts (the groups of [`group_of`]), sorted: for resource
/// listings and argument completion.
pub fn service_names(snap: &Snapshot) -> Vec<String> {
    let mut names = std::collections::BTreeSet::new();
    let mut last_root = None;
    for (i, f) in snap.files.iter().enumerate() {
        // With several roots a root is one service: one name per run of its files.
        if snap.roots.len() > 1 && last_root == Some(f.root) {
            continue;
        }
        last_root = Some(f.root);
        names.insert(group_of(snap, i as u32));
    }
    names.into_iter().collect()
}

/// The service a file belongs to: its root, or (single root) its top-level directory.
fn group_of(snap: &Snapshot, file: u32) -> String {
    let f = &snap.files[file as usize];
    if snap.roots.len() > 1 {
        let label = &snap.roots[f.root as usize].label;
        return if label == "." {
            WORKSPACE_ROOT.to_string()
        } else {
            label.clone()
        };
    }
    match f.path.split_once('/') {
        Some((dir, _)) => dir.to_string(),
        None => WORKSPACE_ROOT.to_string(),
    }
}

/// The name of the service that holds the files directly in the workspace directory.
const WORKSPACE_ROOT: &str = "(workspace root)";

#[derive(Default)]
struct Fold {
    count: u32,
    confidence: Option<Confidence>,
    counts: ConfidenceCounts,
    example: Option<(String, u32)>,
}

impl Fold {
    /// The drawn link for this fold.
    fn link(&self, from: String, to: String, kind: LinkKind) -> MeshLink {
        MeshLink {
            from,
            to,
            kind,
            count: self.count,
            confidence: self.confidence.unwrap_or(Confidence::Exact).label(),
            confidence_counts: self.counts,
            example: self
                .example
                .as_ref()
                .map(|(p, l)| format!("{p}:{l}"))
                .unwrap_or_default(),
        }
    }

    fn add(&mut self, conf: Confidence, evidence: (String, u32)) {
        self.count += 1;
        self.counts.add(conf, 1);
        self.confidence = Some(self.confidence.map_or(conf, |c| c.max(conf)));
        if self.example.as_ref().is_none_or(|e| evidence < *e) {
            self.example = Some(evidence);
        }
    }
}

/// The services that use each library root: the groups of the service files whose imports or
/// .NET project references land in it. A call made in a library is made by these services (a
/// Razor class library's HttpClient, a shared SDK): `visualize_mesh` starts its edge at each
/// of them, and `analyze_impact` names them beside the library's root, so both tools
/// attribute the same line alike.
pub(crate) fn library_users(snap: &Snapshot) -> HashMap<u16, Vec<String>> {
    let mut users: HashMap<u16, Vec<String>> = HashMap::new();
    for ie in &snap.graph.import_links {
        let f = &snap.files[ie.at.file as usize];
        if !f.is_test
            && !f.generated
            && snap.roots[f.root as usize].kind == crate::config::RootKind::Service
            && snap.roots.get(ie.to_root as usize).map(|r| r.kind)
                == Some(crate::config::RootKind::Library)
        {
            let u = users.entry(ie.to_root).or_default();
            let name = group_of(snap, ie.at.file);
            if !u.contains(&name) {
                u.push(name);
            }
        }
    }
    for u in users.values_mut() {
        crate::order::sort(u);
    }
    users
}

/// Every cross-service link, folded by (from, to, kind); endpoints are group names, topics are
/// `topic:<name>`.
fn folded_links(snap: &Snapshot) -> (BTreeMap<(String, String, LinkKind), Fold>, usize) {
    let g = &snap.graph;
    let mut out: BTreeMap<(String, String, LinkKind), Fold> = BTreeMap::new();
    let mut ambiguous = 0;
    let usable = |l: Loc| {
        let f = &snap.files[l.file as usize];
        !f.is_test && !f.generated
    };
    let evidence = |l: Loc| (snap.display_path(&snap.files[l.file as usize]), l.line);
    let users = library_users(snap);
    let callers_of = |file: u32| -> Vec<String> {
        users
            .get(&snap.files[file as usize].root)
            .cloned()
            .unwrap_or_else(|| vec![group_of(snap, file)])
    };
    // Owners of each contract: the groups of its handlers/servers, else of its definition.
    let mut owners: Vec<Vec<String>> = vec![Vec::new(); g.contracts.len()];
    for h in &g.handlers {
        if usable(h.at) {
            owners[g.rpcs[h.rpc as usize].contract as usize].push(group_of(snap, h.at.file));
        }
    }
    for s in &g.servers {
        if usable(s.at) {
            owners[s.contract as usize].push(group_of(snap, s.at.file));
        }
    }
    for (c, o) in owners.iter_mut().enumerate() {
        if o.is_empty() {
            o.push(group_of(snap, g.contracts[c].def.file));
        }
        crate::order::sort(o);
        o.dedup();
    }
    let mut calling: std::collections::HashSet<(u32, u32)> = Default::default();
    for call in &g.calls {
        if !usable(call.at) {
            continue;
        }
        let contract = g.rpcs[call.rpc as usize].contract;
        calling.insert((call.at.file, contract));
        if call.confidence == Confidence::Ambiguous && owners[contract as usize].len() > 1 {
            ambiguous += 1;
            continue;
        }
        for from in callers_of(call.at.file) {
            for to in &owners[contract as usize] {
                if *to != from {
                    out.entry((from.clone(), to.clone(), LinkKind::Grpc))
                        .or_default()
                        .add(call.confidence, evidence(call.at));
                }
            }
        }
    }
    for cl in &g.clients {
        if !usable(cl.at) || calling.contains(&(cl.at.file, cl.contract)) {
            continue;
        }
        for from in callers_of(cl.at.file) {
            for to in &owners[cl.contract as usize] {
                if *to != from {
                    out.entry((from.clone(), to.clone(), LinkKind::Grpc))
                        .or_default()
                        .add(cl.confidence.max(Confidence::Heuristic), evidence(cl.at));
                }
            }
        }
    }
    for e in &g.events {
        // A framework lifecycle event links no two services.
        if !usable(e.at) || e.via == crate::index::facts::FRAMEWORK_EVENT_VIA {
            continue;
        }
        let group = group_of(snap, e.at.file);
        let topic = format!("topic:{}", g.topics[e.topic as usize].name);
        let key = match e.role {
            EventRole::Producer => (group, topic, LinkKind::Produces),
            EventRole::Consumer => (topic, group, LinkKind::Consumes),
        };
        out.entry(key)
            .or_default()
            .add(e.confidence, evidence(e.at));
    }
    for rc in &g.route_calls {
        // A health check is the deployment calling the service itself: no service link.
        if !usable(rc.at) || rc.probe {
            continue;
        }
        let to = group_of(snap, g.routes[rc.route as usize].at.file);
        for from in callers_of(rc.at.file) {
            if from != to {
                out.entry((from, to.clone(), LinkKind::Http))
                    .or_default()
                    .add(rc.confidence, evidence(rc.at));
            }
        }
    }
    for ie in &g.import_links {
        if !usable(ie.at) {
            continue;
        }
        let from = group_of(snap, ie.at.file);
        let to = snap
            .roots
            .get(ie.to_root as usize)
            .map(|r| {
                if r.label == "." {
                    WORKSPACE_ROOT.to_string()
                } else {
                    r.label.clone()
                }
            })
            .unwrap_or_default();
        if snap.roots.len() > 1 && from != to {
            out.entry((from, to, LinkKind::Imports))
                .or_default()
                .add(ie.confidence, evidence(ie.at));
        }
    }
    (out, ambiguous)
}

/// Each service's file count and its files per language (documentation and configuration
/// languages left out), by service name.
type ServiceSizes = BTreeMap<String, (usize, BTreeMap<&'static str, usize>)>;

/// Builds the aggregated view, or an error naming the known services when `zoom` is unknown.
pub fn mesh_view(
    snap: &Snapshot,
    zoom: Option<&str>,
    max_services: usize,
) -> Result<MeshView, String> {
    let (links, ambiguous) = folded_links(snap);
    let services = service_sizes(snap);
    let zoom_name = match zoom {
        None => None,
        Some(z) => Some(find_service(&services, z)?),
    };
    let ranked = rank_services(&services, &links);
    let mut view = MeshView {
        workspace: snap
            .base
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "workspace".into()),
        grouping: if snap.roots.len() > 1 {
            "root"
        } else {
            "directory"
        },
        zoom: zoom_name.clone(),
        nodes: Vec::new(),
        links: Vec::new(),
        services_shown: 0,
        services_total: services.len(),
        hidden: Vec::new(),
        ambiguous_skipped: ambiguous,
        contracts_folded: 0,
        hidden_contracts: Vec::new(),
    };
    let service_caption = |name: &str| -> String {
        let (files, langs) = &services[name];
        let mut l: Vec<(&&str, &usize)> = langs.iter().collect();
        crate::order::sort_by(&mut l, |a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let langs: Vec<&str> = l.iter().take(3).map(|(n, _)| **n).collect();
        if langs.is_empty() {
            format!("{files} files")
        } else {
            format!("{files} files · {}", langs.join(", "))
        }
    };
    match &zoom_name {
        None => overview(
            &mut view,
            &ranked,
            &services,
            &links,
            max_services,
            &service_caption,
        ),
        Some(focus) => zoom_view(
            snap,
            &mut view,
            focus,
            &links,
            max_services,
            &service_caption,
        ),
    }
    Ok(view)
}

/// Services, with their file counts and languages.
fn service_sizes(snap: &Snapshot) -> ServiceSizes {
    let mut services: ServiceSizes = BTreeMap::new();
    for (i, f) in snap.files.iter().enumerate() {
        let e = services.entry(group_of(snap, i as u32)).or_default();
        e.0 += 1;
        if !matches!(
            f.lang,
            crate::index::facts::Language::Markdown
                | crate::index::facts::Language::Yaml
                | crate::index::facts::Language::Properties
                | crate::index::facts::Language::MsBuild
        ) {
            *e.1.entry(f.lang.name()).or_default() += 1;
        }
    }
    services
}

/// The service `zoom` names: exactly, else ignoring case, else by its last path segment; an
/// error naming a few close services when none matches (the argument echoed bounded: it is
/// the client's, of any length).
fn find_service(services: &ServiceSizes, z: &str) -> Result<String, String> {
    match match_service(services.keys(), z) {
        Some(f) => Ok(f.clone()),
        None => {
            let names: Vec<String> = services.keys().cloned().collect();
            let shown = if names.len() <= 20 {
                names.clone()
            } else {
                crate::resources::close_names(&names, z, 5)
            };
            let shown: Vec<String> = shown.iter().map(|n| inline_code(n)).collect();
            let which = if names.len() <= 20 {
                "The services are"
            } else {
                "The closest of the services are"
            };
            Err(format!(
                "No service named {}. {which}: {}. Call visualize_mesh without `service` to see \
them drawn.",
                inline_code(&crate::protocol::echo_input(z.trim())),
                shown.join(", ")
            ))
        }
    }
}

/// The name among `names` that `z` stands for (see [`find_service`]).
fn match_service<'a>(
    names: impl Iterator<Item = &'a String> + Clone,
    z: &str,
) -> Option<&'a String> {
    let z = z.trim().trim_end_matches('/');
    let z = if z == "." || z.is_empty() {
        WORKSPACE_ROOT
    } else {
        z
    };
    let mut all = names.clone();
    let mut ci = names.clone();
    let mut last = names.clone();
    all.find(|k| k.as_str() == z)
        .or_else(|| ci.find(|k| k.eq_ignore_ascii_case(z)))
        .or_else(|| {
            last.find(|k| {
                k.rsplit('/')
                    .next()
                    .is_some_and(|l| l.eq_ignore_ascii_case(z))
            })
        })
        .or_else(|| {
            // The first word of the last segment, when only one service has it: `Basket` for
            // `src/Basket.API`, `orders` for `services/orders-service`.
            let stem = |k: &String| {
                let l = k.rsplit('/').next().unwrap_or(k);
                l.split(['.', '-', '_']).next().unwrap_or(l).to_string()
            };
            let mut hits = names.filter(|k| stem(k).eq_ignore_ascii_case(z));
            let first = hits.next()?;
            hits.next().is_none().then_some(first)
        })
}

/// The service a `service` argument (or a `mesh://service/` URI) names, if any.
pub fn resolve_service(snap: &Snapshot, z: &str) -> Option<String> {
    let names = service_names(snap);
    match_service(names.iter(), z).cloned()
}

/// Service names, the best connected first (links in and out), then the largest, then by name.
fn rank_services<'a>(
    services: &'a ServiceSizes,
    links: &BTreeMap<(String, String, LinkKind), Fold>,
) -> Vec<&'a String> {
    let mut degree: HashMap<&str, u32> = HashMap::new();
    for ((from, to, _), fold) in links {
        *degree.entry(from.as_str()).or_default() += fold.count;
        *degree.entry(to.as_str()).or_default() += fold.count;
    }
    let mut ranked: Vec<&String> = services.keys().collect();
    crate::order::sort_by(&mut ranked, |a, b| {
        let da = degree.get(a.as_str()).copied().unwrap_or(0);
        let db = degree.get(b.as_str()).copied().unwrap_or(0);
        db.cmp(&da)
            .then(services[*b].0.cmp(&services[*a].0))
            .then(a.cmp(b))
    });
    ranked
}

/// The id of the drawn node for `key` (`n0`, `n1`, … in order of first use), created on first
/// use; `ids` maps keys to the ids handed out.
fn add_node(
    view: &mut MeshView,
    ids: &mut HashMap<String, String>,
    key: &str,
    name: String,
    kind: NodeKind,
    caption: String,
    location: Option<String>,
) -> String {
    if let Some(id) = ids.get(key) {
        return id.clone();
    }
    let id = format!("n{}", view.nodes.len());
    ids.insert(key.to_string(), id.clone());
    view.nodes.push(MeshNode {
        id: id.clone(),
        name,
        kind,
        caption,
        location,
    });
    id
}

/// The whole-mesh view: the `max_services` best-ranked services (the rest folded into one
/// "other services" node), the busiest topics (the rest into "other topics") and the links
/// between them.
fn overview(
    view: &mut MeshView,
    ranked: &[&String],
    services: &ServiceSizes,
    links: &BTreeMap<(String, String, LinkKind), Fold>,
    max_services: usize,
    service_caption: &dyn Fn(&str) -> String,
) {
    // Which endpoints are drawn, and under which node id.
    let mut ids: HashMap<String, String> = HashMap::new();
    let shown: Vec<&String> = ranked.iter().take(max_services).copied().collect();
    view.services_shown = shown.len();
    for s in &shown {
        add_node(
            view,
            &mut ids,
            s,
            (*s).clone(),
            NodeKind::Service,
            service_caption(s),
            None,
        );
    }
    // "Largest hidden": the folded services by size, not by rank.
    let mut hidden: Vec<(String, usize)> = ranked
        .iter()
        .skip(max_services)
        .map(|s| ((*s).clone(), services[*s].0))
        .collect();
    crate::order::sort_by(&mut hidden, |a, b| {
        b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0))
    });
    hidden.truncate(5);
    view.hidden = hidden;
    let folded = ranked.len().saturating_sub(max_services);
    let edges = fold_onto_shown(links, &shown);
    let topics = busiest_topics(&edges);
    // Topics: the busiest, as many as services are drawn (at least 10).
    let topic_cap = max_services.max(10);
    let kept_topics: Vec<String> = topics
        .iter()
        .take(topic_cap)
        .map(|(t, _)| format!("topic:{t}"))
        .collect();
    if folded > 0 {
        add_node(
            view,
            &mut ids,
            "other services",
            "other services".into(),
            NodeKind::Other,
            format!("{folded} services folded"),
            None,
        );
    }
    for ((a, b, kind), fold) in edges {
        let fix = |end: String| -> String {
            if end.starts_with("topic:") && !kept_topics.contains(&end) {
                "other topics".to_string()
            } else {
                end
            }
        };
        let (a, b) = (fix(a), fix(b));
        let mut endpoint = |end: &str, view: &mut MeshView| -> String {
            if let Some(t) = end.strip_prefix("topic:") {
                add_node(
                    view,
                    &mut ids,
                    end,
                    t.to_string(),
                    NodeKind::Topic,
                    "topic".into(),
                    None,
                )
            } else if end == "other topics" {
                add_node(
                    view,
                    &mut ids,
                    end,
                    "other topics".into(),
                    NodeKind::Other,
                    format!("{} topics folded", topics.len().saturating_sub(topic_cap)),
                    None,
                )
            } else {
                ids.get(end).cloned().unwrap_or_default()
            }
        };
        let from = endpoint(&a, view);
        let to = endpoint(&b, view);
        if from.is_empty() || to.is_empty() {
            continue;
        }
        push_link(view, from, to, kind, &fold);
    }
    merge_duplicate_links(view);
}

/// The links with every service not `shown` renamed "other services" (topics kept), summed per
/// (from, to, kind) with the weakest confidence and the smallest example; links from a node to
/// itself dropped.
fn fold_onto_shown(
    links: &BTreeMap<(String, String, LinkKind), Fold>,
    shown: &[&String],
) -> BTreeMap<(String, String, LinkKind), Fold> {
    let mut edges: BTreeMap<(String, String, LinkKind), Fold> = BTreeMap::new();
    for ((from, to, kind), fold) in links {
        let map = |end: &String| -> String {
            if end.starts_with("topic:") {
                return end.clone();
            }
            if shown.contains(&end) {
                end.clone()
            } else {
                "other services".to_string()
            }
        };
        let a = map(from);
        let b = map(to);
        if a == b {
            continue;
        }
        let e = edges.entry((a, b, *kind)).or_default();
        e.count += fold.count;
        e.counts.sum(fold.counts);
        e.confidence = Some(match (e.confidence, fold.confidence) {
            (Some(x), Some(y)) => x.max(y),
            (x, y) => x.or(y).unwrap_or(Confidence::Exact),
        });
        if let Some(ex) = &fold.example
            && e.example.as_ref().is_none_or(|cur| ex < cur)
        {
            e.example = Some(ex.clone());
        }
    }
    edges
}

/// The topics at either end of `edges` with their summed link counts, the busiest first.
fn busiest_topics(edges: &BTreeMap<(String, String, LinkKind), Fold>) -> Vec<(String, u32)> {
    let mut topic_degree: BTreeMap<String, u32> = BTreeMap::new();
    for ((a, b, _), f) in edges {
        for end in [a, b] {
            if let Some(t) = end.strip_prefix("topic:") {
                *topic_degree.entry(t.to_string()).or_default() += f.count;
            }
        }
    }
    let mut topics: Vec<(String, u32)> = topic_degree.into_iter().collect();
    crate::order::sort_by(&mut topics, |a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    topics
}

fn push_link(view: &mut MeshView, from: String, to: String, kind: LinkKind, fold: &Fold) {
    view.links.push(fold.link(from, to, kind));
}

/// Links that folded onto the same (from, to, kind) after "other" folding are summed.
fn merge_duplicate_links(view: &mut MeshView) {
    let mut merged: Vec<MeshLink> = Vec::new();
    for l in view.links.drain(..) {
        match merged
            .iter_mut()
            .find(|m| m.from == l.from && m.to == l.to && m.kind == l.kind)
        {
            Some(m) => {
                m.count += l.count;
                m.confidence_counts.sum(l.confidence_counts);
                if confidence_rank(l.confidence) > confidence_rank(m.confidence) {
                    m.confidence = l.confidence;
                }
                if l.example < m.example {
                    m.example = l.example;
                }
            }
            None => merged.push(l),
        }
    }
    view.links = merged;
}

fn confidence_rank(label: &str) -> u8 {
    match label {
        "exact" => 0,
        "heuristic" => 1,
        _ => 2,
    }
}

/// A contract of the zoomed service, before it is drawn: its node key, name, caption and
/// definition, the kind of its incoming links, and its call sites (file, line, confidence).
struct Contract {
    key: String,
    name: String,
    caption: String,
    loc: String,
    kind: LinkKind,
    sites: Vec<(Loc, Confidence)>,
}

/// The nodes and links of a zoomed view, with node ids handed out by key.
struct ZoomBuilder<'a> {
    snap: &'a Snapshot,
    focus: &'a str,
    caption: &'a dyn Fn(&str) -> String,
    /// Callers drawn per contract.
    max_services: usize,
    nodes: Vec<MeshNode>,
    ids: HashMap<String, String>,
    links: Vec<MeshLink>,
}

impl ZoomBuilder<'_> {
    /// The id of the node for `key`, created on first use.
    fn node(
        &mut self,
        key: &str,
        name: &str,
        kind: NodeKind,
        caption: String,
        location: Option<String>,
    ) -> String {
        if let Some(id) = self.ids.get(key) {
            return id.clone();
        }
        let id = format!("n{}", self.nodes.len());
        self.ids.insert(key.to_string(), id.clone());
        self.nodes.push(MeshNode {
            id: id.clone(),
            name: name.to_string(),
            kind,
            caption,
            location,
        });
        id
    }

    /// The node of a service or a `topic:` endpoint.
    fn endpoint(&mut self, key: &str) -> String {
        match key.strip_prefix("topic:") {
            Some(t) => self.node(key, t, NodeKind::Topic, "topic".into(), None),
            None => {
                let caption = (self.caption)(key);
                self.node(key, key, NodeKind::Service, caption, None)
            }
        }
    }

    /// A contract of the focus (`loc` is its definition): the owning link, then one link per
    /// other service calling it, folded from `sites` (file, line, confidence).
    fn contract(&mut self, c: Contract) {
        let Contract {
            key,
            name,
            caption,
            loc,
            kind,
            sites,
        } = c;
        let focus = self.focus.to_string();
        let focus_id = self.endpoint(&focus);
        let cid = self.node(&key, &name, NodeKind::Contract, caption, Some(loc.clone()));
        self.links.push(MeshLink {
            from: focus_id,
            to: cid.clone(),
            kind: LinkKind::Owns,
            count: 1,
            confidence: "exact",
            confidence_counts: ConfidenceCounts::default(),
            example: loc,
        });
        // Folded by calling service, in name order: a short list searched by scan (one map
        // type less in the binary: the size budget, docs/ARCHITECTURE.md §7).
        let mut by_caller: Vec<(String, Fold)> = Vec::new();
        for (at, confidence) in sites {
            let f = &self.snap.files[at.file as usize];
            let from = group_of(self.snap, at.file);
            if f.is_test || f.generated || from == focus {
                continue;
            }
            let i = match by_caller.iter().position(|(c, _)| *c == from) {
                Some(i) => i,
                None => {
                    by_caller.push((from, Fold::default()));
                    by_caller.len() - 1
                }
            };
            by_caller[i]
                .1
                .add(confidence, (self.snap.display_path(f), at.line));
        }
        crate::order::sort_by(&mut by_caller, |a, b| a.0.cmp(&b.0));
        for (caller, fold) in by_caller.into_iter().take(self.max_services) {
            let sid = self.endpoint(&caller);
            self.links.push(fold.link(sid, cid.clone(), kind));
        }
    }
}

/// The zoomed view: the focused service, its own contracts (gRPC services it implements,
/// routes it serves) with the services calling them, and every other link touching it —
/// its outgoing calls, its topics and their other ends.
fn zoom_view(
    snap: &Snapshot,
    view: &mut MeshView,
    focus: &str,
    links: &BTreeMap<(String, String, LinkKind), Fold>,
    max_services: usize,
    service_caption: &dyn Fn(&str) -> String,
) {
    let g = &snap.graph;
    let mut z = ZoomBuilder {
        snap,
        focus,
        caption: service_caption,
        max_services,
        nodes: Vec::new(),
        ids: HashMap::new(),
        links: Vec::new(),
    };
    let focus_id = z.endpoint(focus);
    let here = |at: Loc| group_of(snap, at.file) == focus && !snap.files[at.file as usize].is_test;
    let place = |at: Loc| {
        format!(
            "{}:{}",
            snap.display_path(&snap.files[at.file as usize]),
            at.line
        )
    };
    // The focus's contracts, then the `max_services` busiest drawn (most call sites first,
    // then declaration order); the rest fold into one node, so a service with thousands of
    // routes draws a bounded picture and names what it left out.
    let mut contracts: Vec<Contract> = Vec::new();
    for (ci, c) in g.contracts.iter().enumerate() {
        let implemented = g
            .handlers
            .iter()
            .any(|h| g.rpcs[h.rpc as usize].contract as usize == ci && here(h.at))
            || g.servers
                .iter()
                .any(|s| s.contract as usize == ci && here(s.at));
        if !implemented {
            continue;
        }
        let sites = g
            .calls
            .iter()
            .filter(|l| g.rpcs[l.rpc as usize].contract as usize == ci)
            .map(|l| (l.at, l.confidence))
            .collect();
        contracts.push(Contract {
            key: format!("contract:{}", c.fqn),
            name: c.fqn.clone(),
            caption: format!("gRPC service · {} rpcs", c.rpcs.len()),
            loc: place(c.def),
            kind: LinkKind::Grpc,
            sites,
        });
    }
    for (ri, r) in g.routes.iter().enumerate() {
        // Routes registered by test files are no contract of the service (as in the overview
        // and `analyze_impact`).
        if r.from_spec
            || group_of(snap, r.at.file) != focus
            || snap.files[r.at.file as usize].is_test
        {
            continue;
        }
        let name = format!("{} {}", r.method, r.path);
        let key = format!("route:{name}");
        let sites: Vec<_> = g
            .route_calls
            .iter()
            .filter(|c| c.route as usize == ri)
            .map(|c| (c.at, c.confidence))
            .collect();
        // A route registered twice (two registrations of one handler) is one contract.
        if let Some(same) = contracts.iter_mut().find(|c| c.key == key) {
            same.sites.extend(sites);
            continue;
        }
        contracts.push(Contract {
            key,
            name,
            caption: "HTTP route".into(),
            loc: place(r.at),
            kind: LinkKind::Http,
            sites,
        });
    }
    if contracts.len() > max_services {
        crate::order::sort_by(&mut contracts, |a, b| b.sites.len().cmp(&a.sites.len()));
        let folded = contracts.split_off(max_services);
        view.contracts_folded = folded.len();
        view.hidden_contracts = folded.iter().take(3).map(|c| c.name.clone()).collect();
        for c in contracts {
            z.contract(c);
        }
        let oid = z.node(
            "other:contracts",
            "other contracts",
            NodeKind::Other,
            format!("{} more contracts", folded.len()),
            None,
        );
        z.links.push(MeshLink {
            from: focus_id.clone(),
            to: oid,
            kind: LinkKind::Owns,
            count: u32::try_from(folded.len()).unwrap_or(u32::MAX),
            confidence: "exact",
            confidence_counts: ConfidenceCounts::default(),
            example: folded.first().map(|c| c.loc.clone()).unwrap_or_default(),
        });
    } else {
        for c in contracts {
            z.contract(c);
        }
    }
    // Every folded link touching the focus; calls into it were drawn per contract above.
    let mut topics_here: Vec<&String> = Vec::new();
    for ((from, to, kind), fold) in links {
        if from != focus && to != focus {
            continue;
        }
        if matches!(kind, LinkKind::Grpc | LinkKind::Http) && to == focus {
            continue;
        }
        let other = if from == focus { to } else { from };
        if other.starts_with("topic:") {
            topics_here.push(other);
        }
        let oid = z.endpoint(other);
        let (a, b) = if from == focus {
            (focus_id.clone(), oid)
        } else {
            (oid, focus_id.clone())
        };
        z.links.push(fold.link(a, b, *kind));
    }
    // The other ends of the focus's topics.
    for ((from, to, kind), fold) in links {
        if from == focus || to == focus {
            continue;
        }
        if topics_here.contains(&from) || topics_here.contains(&to) {
            let a = z.endpoint(from);
            let b = z.endpoint(to);
            z.links.push(fold.link(a, b, *kind));
        }
    }
    view.services_shown = z
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Service)
        .count();
    view.nodes = z.nodes;
    view.links = z.links;
}

/// Escapes a name for a Mermaid label (entity codes; newlines flattened).
fn mermaid_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '#' => out.push_str("#35;"),
            '`' => out.push_str("#96;"),
            '&' => out.push_str("#amp;"),
            '|' => out.push_str("#124;"),
            '[' => out.push_str("#91;"),
            ']' => out.push_str("#93;"),
            '{' => out.push_str("#123;"),
            '}' => out.push_str("#125;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Renders the view as a Mermaid flowchart (without the Markdown around it).
pub fn render_mermaid(view: &MeshView) -> String {
    let mut out = format!(
        "%% {} — services and how they talk\ngraph LR\n",
        mermaid_escape(&view.workspace)
    );
    for n in &view.nodes {
        let label = format!(
            "\"{}<br/><small>{}</small>\"",
            mermaid_escape(&n.name),
            mermaid_escape(&n.caption)
        );
        let shape = match n.kind {
            NodeKind::Service => format!("[{label}]"),
            NodeKind::Topic => format!("([{label}])"),
            NodeKind::Contract => format!("({label})"),
            NodeKind::Other => format!("[/{label}/]"),
        };
        out.push_str(&format!("  {}{}\n", n.id, shape));
    }
    for l in &view.links {
        let mut label = l.kind.label().to_string();
        if l.count > 1 {
            label.push_str(&format!(" ×{}", l.count));
        }
        if !l.confidence_counts.is_uniform() {
            label.push_str(&format!(" ({})", l.confidence_counts.describe()));
        } else if l.confidence != "exact" {
            label.push_str(&format!(" ({})", l.confidence));
        }
        let arrow = match l.kind {
            LinkKind::Produces => "==>",
            LinkKind::Consumes => "-.->",
            _ => "-->",
        };
        out.push_str(&format!(
            "  {} {}|\"{}\"| {}\n",
            l.from,
            arrow,
            mermaid_escape(&label),
            l.to
        ));
    }
    out
}

/// Renders the view as pretty JSON.
pub fn render_json(view: &MeshView) -> String {
    serde_json::to_string_pretty(view).unwrap_or_else(|_| "{}".into())
}

/// Renders the view as a standalone HTML page: the data inline, drawn as SVG by an inline
/// script, no network access. Names reach the page only through `textContent`.
pub fn render_html(view: &MeshView) -> String {
    let data = serde_json::to_string(view)
        .unwrap_or_else(|_| "{}".into())
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026");
    let title = html_escape(&format!("{} — mesh-mcp", view.workspace));
    HTML_TEMPLATE
        .replace("__TITLE__", &title)
        .replace("__DATA__", &data)
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

const HTML_TEMPLATE: &str = r##"<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'">
<title>__TITLE__</title>
<style>
body{margin:0;font:13px system-ui,sans-serif;background:#fafafa;color:#222}
header{padding:10px 16px;border-bottom:1px solid #ddd;background:#fff}
h1{font-size:16px;margin:0}#meta{color:#666;margin-top:4px}
svg{display:block;width:100vw;height:calc(100vh - 60px)}
.node rect,.node ellipse{stroke:#333;stroke-width:1.2}
.service rect{fill:#dbeafe}.topic ellipse{fill:#fef3c7}.contract rect{fill:#dcfce7}.other rect{fill:#eee}
.link{fill:none;stroke:#666;stroke-width:1.4}.produces{stroke:#b45309;stroke-width:2.4}
.consumes{stroke:#b45309;stroke-dasharray:5 4}.grpc{stroke:#1d4ed8}.http{stroke:#15803d}
.imports{stroke:#999;stroke-dasharray:2 3}
.heuristic,.ambiguous{opacity:.6}
text{pointer-events:none}.cap{fill:#555;font-size:11px}.ll{fill:#444;font-size:11px}
</style></head><body>
<header><h1 id="title"></h1><div id="meta"></div></header>
<svg id="mesh" role="img" aria-label="service mesh"><defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerUnits="userSpaceOnUse" markerWidth="10" markerHeight="10" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="#555"/></marker></defs></svg>
<script>
"use strict";
const view = __DATA__;
const NS = "http://www.w3.org/2000/svg";
document.getElementById("title").textContent = view.workspace + (view.zoom ? " — " + view.zoom : "");
document.getElementById("meta").textContent = view.services_shown + " of " + view.services_total +
  " services, " + view.links.length + " links (grouping: one service per " + view.grouping + ")";
const svg = document.getElementById("mesh");
// Force-directed layout, deterministic: nodes start on a circle in listing order, links pull,
// every pair pushes (by box size), the temperature cools; then boxes are pushed apart until
// none overlap and the drawing is fitted to the page.
const outgoing = {}, incoming = {};
for (const l of view.links) { (outgoing[l.from] = outgoing[l.from] || []).push(l.to); (incoming[l.to] = incoming[l.to] || []).push(l.from); }
const width = n => Math.max(90, Math.min(260, 7.2 * Math.max(n.name.length, n.caption.length) + 20));
const linked = n => (outgoing[n.id] || []).length + (incoming[n.id] || []).length > 0;
const nodes = view.nodes.filter(linked).map((n, i, all) => {
  const a = 2 * Math.PI * i / Math.max(1, all.length);
  return { n, id: n.id, w: width(n), x: Math.cos(a) * 300, y: Math.sin(a) * 300, dx: 0, dy: 0 };
});
const byId = {};
for (const p of nodes) byId[p.id] = p;
const k = 120;
let temp = 60;
for (let it = 0; it < 500; it++) {
  for (const p of nodes) { p.dx = 0; p.dy = 0; }
  for (let i = 0; i < nodes.length; i++) for (let j = i + 1; j < nodes.length; j++) {
    const a = nodes[i], b = nodes[j];
    const dx = a.x - b.x, dy = a.y - b.y, d = Math.max(1, Math.hypot(dx, dy));
    const f = (k * k) / d;
    a.dx += dx / d * f; a.dy += dy / d * f; b.dx -= dx / d * f; b.dy -= dy / d * f;
  }
  for (const l of view.links) {
    const a = byId[l.from], b = byId[l.to];
    if (!a || !b || a === b) continue;
    const dx = a.x - b.x, dy = a.y - b.y, d = Math.max(1, Math.hypot(dx, dy));
    const f = (d * d) / k;
    a.dx -= dx / d * f; a.dy -= dy / d * f; b.dx += dx / d * f; b.dy += dy / d * f;
  }
  for (const p of nodes) {
    p.dx -= p.x * 0.05; p.dy -= p.y * 0.05;
    const d = Math.max(1e-9, Math.hypot(p.dx, p.dy));
    const step = Math.min(d, temp);
    p.x += p.dx / d * step; p.y += p.dy / d * step;
  }
  temp = Math.max(0.5, temp * 0.99);
}
// Stretch to the page's proportions (boxes are wide: give them horizontal room).
if (nodes.length > 1) {
  const x0 = Math.min(...nodes.map(p => p.x)), x1 = Math.max(...nodes.map(p => p.x));
  const y0 = Math.min(...nodes.map(p => p.y)), y1 = Math.max(...nodes.map(p => p.y));
  const cols = Math.max(2, Math.ceil(Math.sqrt(nodes.length * 1.8)));
  const spanX = cols * 230, spanY = Math.max(220, Math.ceil(nodes.length / cols) * 110);
  for (const p of nodes) {
    p.x = x1 > x0 ? (p.x - x0) / (x1 - x0) * spanX : 0;
    p.y = y1 > y0 ? (p.y - y0) / (y1 - y0) * spanY : 0;
  }
}
// Unlinked services in a row below.
const lone = view.nodes.filter(n => !linked(n));
{
  const bottom = nodes.length ? Math.max(...nodes.map(p => p.y)) + 110 : 0;
  let x = 0;
  for (const n of lone) {
    const w = width(n);
    nodes.push({ n, id: n.id, w, x: x + w / 2, y: bottom, dx: 0, dy: 0 });
    x += w + 30;
  }
  for (const p of nodes) byId[p.id] = p;
}
for (let pass = 0; pass < 200; pass++) {
  let moved = false;
  for (let i = 0; i < nodes.length; i++) for (let j = i + 1; j < nodes.length; j++) {
    const a = nodes[i], b = nodes[j];
    const ox = (a.w + b.w) / 2 + 24 - Math.abs(a.x - b.x), oy = 44 + 26 - Math.abs(a.y - b.y);
    if (ox > 0 && oy > 0) {
      moved = true;
      if (oy < ox) { const s = (a.y < b.y ? -1 : 1) * oy / 2; a.y += s; b.y -= s; }
      else { const s = (a.x < b.x ? -1 : 1) * ox / 2; a.x += s; b.x -= s; }
    }
  }
  if (!moved) break;
}
const minX = Math.min(...nodes.map(p => p.x - p.w / 2)), maxX = Math.max(...nodes.map(p => p.x + p.w / 2));
const minY = Math.min(...nodes.map(p => p.y - 22)), maxY = Math.max(...nodes.map(p => p.y + 22));
const pad = 40;
svg.setAttribute("viewBox", `${minX - pad} ${minY - pad} ${Math.max(1, maxX - minX) + 2 * pad} ${Math.max(1, maxY - minY) + 2 * pad}`);
const pos = {};
for (const p of nodes) pos[p.id] = p;
// Where the segment from the centre of `p` toward (tx, ty) leaves its box.
const exit = (p, tx, ty) => {
  const dx = tx - p.x, dy = ty - p.y;
  const sx = dx === 0 ? Infinity : (p.w / 2) / Math.abs(dx), sy = dy === 0 ? Infinity : 22 / Math.abs(dy);
  const s = Math.min(sx, sy, 1);
  return [p.x + dx * s, p.y + dy * s];
};
const el = (tag, attrs, parent) => { const e = document.createElementNS(NS, tag); for (const k in attrs) e.setAttribute(k, attrs[k]); (parent || svg).appendChild(e); return e; };
for (const l of view.links) {
  const a = pos[l.from], b = pos[l.to];
  if (!a || !b) continue;
  // A slight bend keeps two links between the same pair apart.
  const mx = (a.x + b.x) / 2 - (b.y - a.y) * 0.12, my = (a.y + b.y) / 2 + (b.x - a.x) * 0.12;
  const [x1, y1] = exit(a, mx, my), [x2, y2] = exit(b, mx, my);
  const p = el("path", { d: `M${x1},${y1} Q${mx},${my} ${x2},${y2}`, class: `link ${l.kind} ${l.confidence}`, "marker-end": "url(#arrow)" });
  const t = document.createElementNS(NS, "title"); t.textContent = `${l.kind} ×${l.count} (${l.confidence}) e.g. ${l.example}`; p.appendChild(t);
  const lab = el("text", { x: (x1 + 2 * mx + x2) / 4, y: (y1 + 2 * my + y2) / 4 - 4, "text-anchor": "middle", class: "ll" });
  lab.textContent = l.kind + (l.count > 1 ? " ×" + l.count : "");
}
for (const n of view.nodes) {
  const p = pos[n.id];
  const g = el("g", { class: "node " + n.kind, transform: `translate(${p.x},${p.y})` });
  if (n.kind === "topic") el("ellipse", { rx: p.w / 2, ry: 22 }, g);
  else el("rect", { x: -p.w / 2, y: -22, width: p.w, height: 44, rx: n.kind === "contract" ? 16 : 4 }, g);
  const name = el("text", { y: -3, "text-anchor": "middle" }, g); name.textContent = n.name;
  const cap = el("text", { y: 13, "text-anchor": "middle", class: "cap" }, g); cap.textContent = n.caption;
  const t = document.createElementNS(NS, "title"); t.textContent = n.name + (n.location ? " — " + n.location : ""); g.appendChild(t);
}
</script></body></html>
"##;

/// The output budget of a render (the cap is 48 KiB; the footer needs room).
const RENDER_BUDGET: usize = 44 * 1024;

fn run(args: &Value, env: &ToolEnv) -> ToolOutput {
    let (args, snap): (Args, _) = match super::decode_indexed("visualize_mesh", args, env) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let format = args
        .format
        .as_deref()
        .unwrap_or("mermaid")
        .to_ascii_lowercase();
    if !matches!(format.as_str(), "mermaid" | "json" | "html") {
        return ToolOutput::error(format!(
            "Unknown format '{}': use 'mermaid', 'json' or 'html'.",
            crate::protocol::echo_name(args.format.as_deref().unwrap_or(""))
        ));
    }
    let mut max = match super::in_range(
        "visualize_mesh",
        "max_services",
        args.max_services,
        40,
        1,
        200,
    ) {
        Ok(m) => m,
        Err(e) => return e,
    };
    loop {
        let view = match mesh_view(snap, args.service.as_deref(), max) {
            Ok(v) => v,
            Err(e) => return ToolOutput::error(e),
        };
        let text = match format.as_str() {
            "json" => render_json(&view),
            "html" => render_html(&view),
            _ => mermaid_answer(&view),
        };
        // The text and, when it rides along, the data share the cap (a zoomed service's
        // nodes are as many as its contracts): both shrink together.
        let data = view_data(&view);
        let data_len = if env.structured {
            super::structured::json_len(&data)
        } else {
            0
        };
        if text.len() + data_len <= RENDER_BUDGET || max == 1 {
            return ToolOutput::ok(text).with_data(data);
        }
        max /= 2;
    }
}

/// The view as structured data: one row per link (its example site, kind, `from → to`,
/// confidence and the number of sites it folds), and the nodes.
fn view_data(view: &MeshView) -> Value {
    let rows = view
        .links
        .iter()
        .map(|l| {
            let (path, line) = match l.example.rsplit_once(':') {
                Some((p, n)) if n.parse::<u32>().is_ok() => (p, n.parse().unwrap_or(0)),
                _ => (l.example.as_str(), 0),
            };
            super::structured::row(
                path,
                line,
                l.kind.label(),
                &format!("{} → {}", l.from, l.to),
                l.confidence,
                &if l.confidence_counts.is_uniform() {
                    format!("{} site(s)", l.count)
                } else {
                    format!("{} site(s): {}", l.count, l.confidence_counts.describe())
                },
            )
        })
        .collect();
    // The nodes as rows too (`role` = kind, `evidence` = caption, plus `id`): the row
    // helper instead of serialising `MeshNode` into a value, which would add a serializer.
    let nodes: Vec<Value> = view
        .nodes
        .iter()
        .map(|n| {
            let at = n.location.as_deref().unwrap_or("");
            let (path, line) = match at.rsplit_once(':') {
                Some((p, l)) if l.parse::<u32>().is_ok() => (p, l.parse().unwrap_or(0)),
                _ => (at, 0),
            };
            let kind = match n.kind {
                NodeKind::Service => "service",
                NodeKind::Topic => "topic",
                NodeKind::Contract => "contract",
                NodeKind::Other => "other",
            };
            let mut node = super::structured::row(path, line, kind, &n.name, "", &n.caption);
            node["id"] = Value::from(n.id.as_str());
            node
        })
        .collect();
    let mut data = super::structured::page(view.links.len(), 0, None, rows);
    data["nodes"] = Value::Array(nodes);
    data["servicesTotal"] = Value::from(view.services_total);
    data
}

/// The Mermaid answer: heading, diagram and a footer saying what was folded.
fn mermaid_answer(view: &MeshView) -> String {
    let mut out = String::from("## Service mesh");
    if let Some(z) = &view.zoom {
        out.push_str(&format!(" — service {}", inline_code(z)));
    }
    out.push_str("\n\n```mermaid\n");
    out.push_str(&render_mermaid(view));
    out.push_str("```\n\n");
    let sites: u32 = view.links.iter().map(|l| l.count).sum();
    out.push_str(&format!(
        "_{} links folding {sites} sites between {} of {} services (one service per {})._\n",
        view.links.len(),
        view.services_shown,
        view.services_total,
        view.grouping
    ));
    if !view.hidden.is_empty() {
        let hidden: Vec<String> = view
            .hidden
            .iter()
            .map(|(n, f)| format!("{} ({f} files)", inline_code(n)))
            .collect();
        out.push_str(&format!(
            "_{} services are folded into \"other services\". Largest hidden: {}._\n",
            view.services_total - view.services_shown,
            hidden.join(", ")
        ));
    }
    if let (Some(z), Some(first)) = (&view.zoom, view.hidden_contracts.first()) {
        let shown = view
            .nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Contract)
            .count();
        let tool = if first.contains(' ') {
            "analyze_impact"
        } else {
            "analyze_grpc"
        };
        let names: Vec<String> = view
            .hidden_contracts
            .iter()
            .map(|n| inline_code(n))
            .collect();
        out.push_str(&format!(
            "_Showing {shown} of {} contracts of {} (the most called first); {} more are folded \
into \"other contracts\", e.g. {}. Next: {tool}(target: \"{}\") for one of them, or \
{}._\n",
            shown + view.contracts_folded,
            inline_code(z),
            view.contracts_folded,
            names.join(", "),
            first.replace(['"', '\\', '\n'], " "),
            if shown < 200 {
                format!(
                    "visualize_mesh(service: \"{}\", max_services: {}) for more",
                    z.replace(['"', '\\', '\n'], " "),
                    (shown * 2).clamp(1, 200)
                )
            } else {
                "smart_search or analyze_impact for the rest".to_string()
            },
        ));
    }
    if view.ambiguous_skipped > 0 {
        out.push_str(&format!(
            "_{} ambiguous call(s) whose candidates span several services are not drawn._\n",
            view.ambiguous_skipped
        ));
    }
    if view.zoom.is_none()
        && let Some(first) = view.nodes.iter().find(|n| n.kind == NodeKind::Service)
    {
        out.push_str(&format!(
            "_Zoom into one service: visualize_mesh(service: \"{}\")._\n",
            first.name
        ));
    }
    if view.links.is_empty() {
        out.push_str(
            "_No gRPC, HTTP, event or import link between services was found in the index._\n",
        );
    }
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_service_is_found_by_the_first_word_of_its_last_segment_when_unique() {
        let names: Vec<String> = [
            "src/Basket.API",
            "src/Ordering.API",
            "src/Ordering.Domain",
            "services/orders-service",
            "(workspace root)",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let find = |z: &str| match_service(names.iter(), z).cloned();
        assert_eq!(find("basket").as_deref(), Some("src/Basket.API"));
        assert_eq!(find("Basket.API").as_deref(), Some("src/Basket.API"));
        assert_eq!(find("orders").as_deref(), Some("services/orders-service"));
        // Two services start with `Ordering`: no guess.
        assert_eq!(find("Ordering"), None);
        assert_eq!(
            find("src/Ordering.Domain").as_deref(),
            Some("src/Ordering.Domain")
        );
        assert_eq!(find("widgets"), None);
    }

    use super::*;
    use crate::index::facts::Value as FactValue;
    use crate::index::facts::*;

    fn proto() -> FileFacts {
        crate::index::lang::protobuf::extract(
            "orders.proto",
            "syntax = \"proto3\";\npackage shop.v1;\nservice OrderService {\n  rpc CreateOrder(Req) returns (Res);\n}\n",
        )
    }

    /// gateway calls orders over gRPC and HTTP; orders produces a topic `billing` consumes.
    fn shop() -> Snapshot {
        let server = FileFacts {
            symbols: vec![Symbol {
                name: "CreateOrder".into(),
                kind: SymbolKind::Method,
                line: 5,
                end_line: 9,
                doc_line: None,
                container: Some("server".into()),
            }],
            grpc: vec![GrpcFact::Server {
                service: "OrderService".into(),
                impl_type: Some("server".into()),
                line: 3,
            }],
            events: vec![EventFact {
                role: EventRole::Producer,
                topic: FactValue::lit("orders.created"),
                via: "kafka-go".into(),
                line: 7,
            }],
            http: vec![HttpFact::Route {
                method: "GET".into(),
                path: "/orders/{id}".into(),
                handler: Some("getOrder".into()),
                line: 12,
            }],
            ..FileFacts::default()
        };
        let gateway = FileFacts {
            grpc: vec![
                GrpcFact::Client {
                    service: "OrderService".into(),
                    var: Some("orders".into()),
                    line: 2,
                },
                GrpcFact::Call {
                    service: Some("OrderService".into()),
                    receiver: "orders".into(),
                    method: "createOrder".into(),
                    line: 4,
                },
            ],
            http: vec![HttpFact::Call {
                method: Some("GET".into()),
                url: FactValue::lit("/orders/{}"),
                line: 6,
            }],
            ..FileFacts::default()
        };
        let billing = FileFacts {
            events: vec![EventFact {
                role: EventRole::Consumer,
                topic: FactValue::lit("orders.created"),
                via: "kafkajs".into(),
                line: 3,
            }],
            ..FileFacts::default()
        };
        Snapshot::from_facts(vec![
            ("services/orders", "proto/orders.proto", proto()),
            ("services/orders", "server.go", server),
            ("services/gateway", "src/app.js", gateway),
            ("services/billing", "src/consumer.ts", billing),
        ])
    }

    #[test]
    fn folds_links_per_service_pair_and_kind() {
        let snap = shop();
        let view = mesh_view(&snap, None, 40).unwrap();
        assert_eq!(view.services_total, 3);
        let name = |id: &str| view.nodes.iter().find(|n| n.id == id).unwrap().name.clone();
        let links: Vec<(String, String, LinkKind, u32)> = view
            .links
            .iter()
            .map(|l| (name(&l.from), name(&l.to), l.kind, l.count))
            .collect();
        assert!(links.contains(&(
            "services/gateway".into(),
            "services/orders".into(),
            LinkKind::Grpc,
            1
        )));
        assert!(links.contains(&(
            "services/gateway".into(),
            "services/orders".into(),
            LinkKind::Http,
            1
        )));
        assert!(links.contains(&(
            "services/orders".into(),
            "orders.created".into(),
            LinkKind::Produces,
            1
        )));
        assert!(links.contains(&(
            "orders.created".into(),
            "services/billing".into(),
            LinkKind::Consumes,
            1
        )));
        let gw = view
            .links
            .iter()
            .find(|l| l.kind == LinkKind::Grpc)
            .unwrap();
        assert_eq!(gw.example, "services/gateway/src/app.js:4");
    }

    #[test]
    fn a_link_of_mixed_confidence_counts_each() {
        let mut fold = Fold::default();
        for conf in [
            Confidence::Heuristic,
            Confidence::Ambiguous,
            Confidence::Heuristic,
            Confidence::Exact,
        ] {
            fold.add(conf, ("a.go".into(), 1));
        }
        let link = fold.link("n0".into(), "n1".into(), LinkKind::Http);
        assert_eq!(link.confidence, "ambiguous");
        assert!(!link.confidence_counts.is_uniform());
        assert_eq!(
            link.confidence_counts.describe(),
            "1 exact, 2 heuristic, 1 ambiguous"
        );
        let json = serde_json::to_value(&link).unwrap();
        assert_eq!(json["confidence_counts"]["heuristic"], 2);
        // One confidence only: the counts add nothing and are left out.
        let mut same = Fold::default();
        same.add(Confidence::Heuristic, ("a.go".into(), 1));
        same.add(Confidence::Heuristic, ("b.go".into(), 1));
        let json =
            serde_json::to_value(same.link("n0".into(), "n1".into(), LinkKind::Http)).unwrap();
        assert!(json.get("confidence_counts").is_none());
    }

    #[test]
    fn a_framework_lifecycle_event_links_no_services() {
        let snap = Snapshot::of_listeners(&[
            (
                "services/cart",
                "src/Warmup.java",
                "ApplicationReadyEvent",
                crate::index::facts::FRAMEWORK_EVENT_VIA,
            ),
            (
                "services/orders",
                "src/Audit.java",
                "OrderAudited",
                "ApplicationEvent",
            ),
        ]);
        let view = mesh_view(&snap, None, 40).unwrap();
        let names: Vec<&str> = view.nodes.iter().map(|n| n.name.as_str()).collect();
        assert!(names.contains(&"OrderAudited"), "{names:?}");
        assert!(!names.contains(&"ApplicationReadyEvent"), "{names:?}");
    }

    #[test]
    fn a_call_made_in_a_library_starts_at_the_services_importing_it() {
        let lib = FileFacts {
            package: Some("Shop.Components.Services".into()),
            http: vec![HttpFact::Call {
                method: Some("GET".into()),
                url: FactValue::lit("/api/catalog/items"),
                line: 14,
            }],
            ..FileFacts::default()
        };
        let web = FileFacts {
            package: Some("Shop.Web".into()),
            imports: vec![Import::plain("Shop.Components.Services", &[], 3)],
            ..FileFacts::default()
        };
        let api = FileFacts {
            http: vec![HttpFact::Route {
                method: "GET".into(),
                path: "/api/catalog/items".into(),
                handler: None,
                line: 8,
            }],
            ..FileFacts::default()
        };
        let mut snap = Snapshot::from_facts(vec![
            ("src/Components", "Services/CatalogService.cs", lib),
            ("src/Web", "Program.cs", web),
            ("src/Catalog", "Api.cs", api),
        ]);
        snap.roots[0].kind = crate::config::RootKind::Library;
        let (links, _) = folded_links(&snap);
        let http: Vec<(&str, &str)> = links
            .keys()
            .filter(|k| k.2 == LinkKind::Http)
            .map(|k| (k.0.as_str(), k.1.as_str()))
            .collect();
        assert_eq!(http, vec![("src/Web", "src/Catalog")]);
        // The same attribution analyze_impact and find_dependents name beside the library.
        assert_eq!(
            library_users(&snap).get(&0),
            Some(&vec!["src/Web".to_string()])
        );
        let fold = &links[&("src/Web".into(), "src/Catalog".into(), LinkKind::Http)];
        assert_eq!(
            fold.example,
            Some(("src/Components/Services/CatalogService.cs".into(), 14))
        );
    }

    /// A .NET workspace: `Api` references `Lib`, `Tool` references `Api` (so `Lib` too),
    /// `Other` references nothing; `Lib` re-opens the SDK's `Microsoft.Extensions.Hosting`.
    const DOTNET: &[(&str, &str, &str)] = &[
        (
            "src/Lib",
            "Lib.csproj",
            "<Project Sdk=\"Microsoft.NET.Sdk\" />\n",
        ),
        (
            "src/Lib",
            "Hosting.cs",
            "namespace Microsoft.Extensions.Hosting;\npublic static class LibExtensions { }\n",
        ),
        (
            "src/Lib",
            "Bus.cs",
            "namespace Acme.Bus;\npublic interface IBus { }\n",
        ),
        (
            "src/Api",
            "Api.csproj",
            "<Project>\n  <ItemGroup>\n    <ProjectReference Include=\"..\\Lib\\Lib.csproj\" />\n  </ItemGroup>\n</Project>\n",
        ),
        (
            "src/Api",
            "Program.cs",
            "using Microsoft.Extensions.Hosting;\nusing Acme.Bus;\nnamespace Acme.Api;\npublic class Program { }\n",
        ),
        (
            "src/Tool",
            "Tool.csproj",
            "<Project><ItemGroup><ProjectReference Include='../Api/Api.csproj'/></ItemGroup></Project>\n",
        ),
        (
            "src/Tool",
            "Main.cs",
            "using Acme.Bus;\nnamespace Acme.Tool;\npublic class Main { }\n",
        ),
        (
            "src/Other",
            "Other.csproj",
            "<Project Sdk=\"Microsoft.NET.Sdk.Web\" />\n",
        ),
        (
            "src/Other",
            "Program.cs",
            "using Microsoft.Extensions.Hosting;\nnamespace Acme.Other;\npublic class Program { }\n",
        ),
    ];

    fn import_edges(snap: &Snapshot) -> Vec<(String, String, String)> {
        let (links, _) = folded_links(snap);
        links
            .iter()
            .filter(|(k, _)| k.2 == LinkKind::Imports)
            .map(|(k, f)| {
                let (p, l) = f.example.clone().unwrap_or_default();
                (k.0.clone(), k.1.clone(), format!("{p}:{l}"))
            })
            .collect()
    }

    #[test]
    fn dotnet_project_references_are_edges_and_gate_namespace_imports() {
        let snap = Snapshot::of_sources(DOTNET);
        assert_eq!(
            import_edges(&snap),
            vec![
                (
                    "src/Api".into(),
                    "src/Lib".into(),
                    "src/Api/Api.csproj:3".into()
                ),
                (
                    "src/Tool".into(),
                    "src/Api".into(),
                    "src/Tool/Tool.csproj:1".into()
                ),
                // Through Api's reference: MSBuild project references are transitive.
                (
                    "src/Tool".into(),
                    "src/Lib".into(),
                    "src/Tool/Main.cs:1".into()
                ),
            ]
        );
        // `Other` gets `Microsoft.Extensions.Hosting` from its SDK, not from Lib.
        assert!(snap.graph.project_may_import(2, 0));
        assert!(!snap.graph.project_may_import(3, 0));
    }

    #[test]
    fn a_package_reference_links_only_when_it_names_a_workspace_project() {
        let snap = Snapshot::of_sources(&[
            (
                "src/Pkg",
                "Pkg.csproj",
                "<Project><PropertyGroup><AssemblyName>Acme.Pkg</AssemblyName></PropertyGroup></Project>\n",
            ),
            (
                "src/App",
                "App.csproj",
                "<Project>\n<ItemGroup>\n<PackageReference Include=\"Polly\" />\n<PackageReference Include=\"acme.pkg\" Version=\"1.0\" />\n</ItemGroup>\n</Project>\n",
            ),
        ]);
        assert_eq!(
            import_edges(&snap),
            vec![(
                "src/App".into(),
                "src/Pkg".into(),
                "src/App/App.csproj:4".into()
            )]
        );
    }

    #[test]
    fn without_project_files_a_namespace_import_still_links() {
        let sources: Vec<_> = DOTNET
            .iter()
            .copied()
            .filter(|f| !f.1.ends_with(".csproj"))
            .collect();
        let snap = Snapshot::of_sources(&sources);
        let edges = import_edges(&snap);
        assert!(
            edges.contains(&(
                "src/Other".into(),
                "src/Lib".into(),
                "src/Other/Program.cs:1".into()
            )),
            "{edges:?}"
        );
    }

    #[test]
    fn zoom_folding_and_formats() {
        let snap = shop();
        let z = mesh_view(&snap, Some("orders"), 40).unwrap();
        assert!(z.nodes.iter().any(|n| n.name == "shop.v1.OrderService"));
        assert!(z.nodes.iter().any(|n| n.name == "GET /orders/{id}"));
        assert!(
            mesh_view(&snap, Some("nope"), 40)
                .unwrap_err()
                .contains("services/orders")
        );
        let small = mesh_view(&snap, None, 1).unwrap();
        assert_eq!(small.services_shown, 1);
        assert!(small.nodes.iter().any(|n| n.name == "other services"));
        let m = render_mermaid(&z);
        assert!(m.starts_with("%% ") && m.contains("graph LR"));
        assert!(m.contains("#123;id#125;"), "braces escaped: {m}");
        let html = render_html(&z);
        assert!(!html.contains("http://") || html.contains("http://www.w3.org/2000/svg"));
        assert!(!html.contains("<script src"));
        let json: serde_json::Value = serde_json::from_str(&render_json(&z)).unwrap();
        assert!(json["nodes"].as_array().unwrap().len() >= 3);
    }

    #[test]
    fn hostile_names_are_escaped() {
        let view = MeshView {
            workspace: "</script><script>alert(1)</script>".into(),
            grouping: "root",
            zoom: None,
            nodes: vec![MeshNode {
                id: "n0".into(),
                name: "a\"b<c>#d`e\nf".into(),
                kind: NodeKind::Service,
                caption: String::new(),
                location: None,
            }],
            links: vec![],
            services_shown: 1,
            services_total: 1,
            hidden: vec![],
            contracts_folded: 0,
            hidden_contracts: vec![],
            ambiguous_skipped: 0,
        };
        let html = render_html(&view);
        assert!(!html.contains("</script><script>alert"));
        let m = render_mermaid(&view);
        assert!(!m.contains("a\"b") && !m.contains('<') || m.contains("<br/>"));
        assert!(m.contains("a#quot;b#lt;c#gt;#35;d#96;e f"), "{m}");
    }
}
