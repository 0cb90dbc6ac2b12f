//! Topic targets: matching a topic by name or constant, its producers and consumers (with
//! re-emissions followed to `depth`), and the notes on what the index could not resolve.

use std::collections::{BTreeSet, HashSet};

use super::misses::{shares_word, target_words, unresolved_list};
use super::{Role, Row, enclosing, file_name, root_of};
use crate::index::facts::EventRole;
use crate::index::graph::{Confidence, Graph, Loc};
use crate::index::snapshot::Snapshot;
use crate::render::inline_code;

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

pub(super) fn folded(key: &str) -> String {
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

pub(crate) fn topic_rows(
    snap: &Snapshot,
    topics: &[u32],
    depth: usize,
) -> (Vec<Row>, Vec<u16>, Vec<String>) {
    topic_rows_with(snap, topics, depth, false)
}

/// [`topic_rows`], with the notes' unresolved sites in test files listed when `include_tests`.
pub(super) fn topic_rows_with(
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

#[cfg(test)]
mod tests {
    use super::{folded, topic_match_key};

    #[test]
    fn topic_keys_follow_code_references() {
        assert_eq!(topic_match_key("Topics.ORDER_CREATED"), "order_created");
        assert_eq!(topic_match_key("orders.created"), "orders.created");
        assert_eq!(topic_match_key("ORDER_CREATED"), "order_created");
        assert_eq!(folded("orders.created"), "orders_created");
    }
}
