//! The zoomed view of one service: its own contracts, their callers, and the links touching it.

use std::collections::{BTreeMap, HashMap};

use super::links::Fold;
use super::services::group_of;
use super::view::{ConfidenceCounts, LinkKind, MeshLink, MeshNode, MeshView, NodeKind};
use crate::index::graph::{Confidence, Loc};
use crate::index::snapshot::Snapshot;

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
pub(super) fn zoom_view(
    snap: &Snapshot,
    view: &mut MeshView,
    focus: &str,
    links: &BTreeMap<(String, String, LinkKind), Fold>,
    max_services: usize,
    service_caption: &dyn Fn(&str) -> String,
) {
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
    z.draw_contracts(view, focus_contracts(snap, focus), &focus_id);
    z.draw_links_touching_focus(links, &focus_id);
    view.services_shown = z
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Service)
        .count();
    view.nodes = z.nodes;
    view.links = z.links;
}

/// The focus's contracts, in declaration order: the gRPC services it implements (with the
/// calls of their RPCs), then the routes it serves (with the calls reaching them).
fn focus_contracts(snap: &Snapshot, focus: &str) -> Vec<Contract> {
    let g = &snap.graph;
    let here = |at: Loc| group_of(snap, at.file) == focus && !snap.files[at.file as usize].is_test;
    let place = |at: Loc| {
        format!(
            "{}:{}",
            snap.display_path(&snap.files[at.file as usize]),
            at.line
        )
    };
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
    contracts
}

impl ZoomBuilder<'_> {
    /// Draws the focus's contracts: the `max_services` busiest (most call sites first, then
    /// declaration order) and the rest folded into one node, so a service with thousands of
    /// routes draws a bounded picture and names what it left out.
    fn draw_contracts(
        &mut self,
        view: &mut MeshView,
        mut contracts: Vec<Contract>,
        focus_id: &str,
    ) {
        if contracts.len() > self.max_services {
            crate::order::sort_by(&mut contracts, |a, b| b.sites.len().cmp(&a.sites.len()));
            let folded = contracts.split_off(self.max_services);
            view.contracts_folded = folded.len();
            view.hidden_contracts = folded.iter().take(3).map(|c| c.name.clone()).collect();
            for c in contracts {
                self.contract(c);
            }
            let oid = self.node(
                "other:contracts",
                "other contracts",
                NodeKind::Other,
                format!("{} more contracts", folded.len()),
                None,
            );
            self.links.push(MeshLink {
                from: focus_id.to_string(),
                to: oid,
                kind: LinkKind::Owns,
                count: u32::try_from(folded.len()).unwrap_or(u32::MAX),
                confidence: "exact",
                confidence_counts: ConfidenceCounts::default(),
                example: folded.first().map(|c| c.loc.clone()).unwrap_or_default(),
            });
        } else {
            for c in contracts {
                self.contract(c);
            }
        }
    }

    /// Draws every folded link touching the focus (calls into it were drawn per contract),
    /// and the other ends of its topics.
    fn draw_links_touching_focus(
        &mut self,
        links: &BTreeMap<(String, String, LinkKind), Fold>,
        focus_id: &str,
    ) {
        let focus = self.focus;
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
            let oid = self.endpoint(other);
            let (a, b) = if from == focus {
                (focus_id.to_string(), oid)
            } else {
                (oid, focus_id.to_string())
            };
            self.links.push(fold.link(a, b, *kind));
        }
        // The other ends of the focus's topics.
        for ((from, to, kind), fold) in links {
            if from == focus || to == focus {
                continue;
            }
            if topics_here.contains(&from) || topics_here.contains(&to) {
                let a = self.endpoint(from);
                let b = self.endpoint(to);
                self.links.push(fold.link(a, b, *kind));
            }
        }
    }
}
