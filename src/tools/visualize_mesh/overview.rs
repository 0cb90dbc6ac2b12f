//! The whole-mesh view: the best-ranked services and busiest topics drawn, the rest folded.

use std::collections::{BTreeMap, HashMap};

use super::links::Fold;
use super::services::ServiceSizes;
use super::view::{LinkKind, MeshLink, MeshNode, MeshView, NodeKind};
use crate::index::graph::Confidence;

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
pub(super) fn overview(
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
