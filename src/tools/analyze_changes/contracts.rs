//! The contract passes beyond `.proto`: HTTP routes, topics, payload and request/response types
//! named at a site, and packages imported by other roots.

use super::super::analyze_impact;
use super::{
    Affected, ChangedDecl, ChangedFile, ContractChange, FileClass, Report, Risk, affected_of,
    decl_range, loc_text, owner_of,
};
use crate::index::facts::{EventRole, Language, SymbolKind};
use crate::index::graph::{Confidence, Loc, path_matches, topic_key};
use crate::index::snapshot::Snapshot;
use crate::render::inline_code;
use std::collections::{BTreeMap, BTreeSet};

/// A route of a changed file's base version.
struct BaseRoute {
    method: String,
    path: String,
    line: u32,
    handler: Option<String>,
}

/// The last segment of a handler's name (`c.GetProduct` → `GetProduct`).
fn handler_name(h: &str) -> &str {
    h.rsplit(['.', ':']).next().unwrap_or(h)
}

/// The lines of a route's handler written in place (`app.get('/x', (req, res) => { … })`):
/// the statement the route starts, when it spans lines; else the lines up to the next route
/// (`next`), within the declaration around the route (`enclosing`).
fn inline_handler(
    lines: &[&str],
    line: u32,
    next: Option<u32>,
    enclosing: Option<(u32, u32)>,
) -> (u32, u32) {
    let next = next.map_or(line + 30, |l| l - 1);
    match super::statement_end(lines, line, 400) {
        Some(end) if end > line => (line, end.min(next.max(line))),
        _ => {
            let end = enclosing.map_or(next, |(_, e)| e.min(next));
            (line, end.max(line))
        }
    }
}

/// HTTP routes whose path or handler changed, and routes of the base that are gone. A route or
/// a handler whose lines a hunk touches but whose text reads as in the base only moved.
pub(super) fn route_contracts(snap: &Snapshot, report: &mut Report) {
    let g = &snap.graph;
    let mut out = Vec::new();
    for cf in report.files.iter().filter(|c| c.class == FileClass::Code) {
        let Some(fi) = cf.file else {
            out.extend(gone_routes(snap, cf, &[], &[]));
            continue;
        };
        let current: Vec<u32> = (0..g.routes.len() as u32)
            .filter(|&r| g.routes[r as usize].at.file == fi)
            .collect();
        if current.is_empty() && cf.base_facts.is_none() {
            continue;
        }
        let now_text = cf.current_text.clone().unwrap_or_default();
        let now_lines: Vec<&str> = now_text.lines().collect();
        let base_lines: Vec<&str> = cf.base_text.as_deref().unwrap_or("").lines().collect();
        let base_routes = base_routes_of(cf);
        let base_route_lines: Vec<u32> = base_routes.iter().map(|b| b.line).collect();
        let route_lines: Vec<u32> = current
            .iter()
            .map(|&r| g.routes[r as usize].at.line)
            .collect();
        let next_after = |lines: &[u32], l: u32| lines.iter().copied().filter(|&x| x > l).min();
        let mut added: Vec<(u32, u32)> = Vec::new();
        for &r in &current {
            let route = &g.routes[r as usize];
            let base = base_routes
                .iter()
                .find(|b| same_route(&b.method, &b.path, &route.method, &route.path));
            // The handler: the named declaration, else the statement the route starts. A
            // handler named but declared in another file (`catalog.GET("/x", c.GetX)` in
            // `main`) has no body here: the pass below looks for it in the changed files.
            let handler_range = match route.handler.as_deref() {
                Some(h) => handler_decl(snap, fi, h).unwrap_or((route.at.line, route.at.line)),
                None => inline_handler(
                    &now_lines,
                    route.at.line,
                    next_after(&route_lines, route.at.line),
                    decl_range(snap, fi, route.at.line, None),
                ),
            };
            let now_span = |(lo, hi): (u32, u32)| super::span_text(&now_text, lo, hi);
            let line_changed = cf.touches(route.at.line, route.at.line)
                && base.is_none_or(|b| {
                    cf.base_span(b.line, b.line) != Some(now_span((route.at.line, route.at.line)))
                });
            let body_changed = cf.touches(handler_range.0, handler_range.1)
                && base.is_none_or(|b| {
                    let was = match &b.handler {
                        Some(h) => base_handler_decl(cf, h).unwrap_or((b.line, b.line)),
                        None => inline_handler(
                            &base_lines,
                            b.line,
                            next_after(&base_route_lines, b.line),
                            base_enclosing(cf, b.line),
                        ),
                    };
                    cf.base_span(was.0, was.1) != Some(now_span(handler_range))
                });
            if !(base.is_none() || line_changed || body_changed) {
                continue;
            }
            let name = format!("{} {}", route.method, route.path);
            let change = if base.is_none() && cf.base_facts.is_some() {
                added.push((r, out.len() as u32));
                "route added or its path changed".to_string()
            } else if base.is_none() {
                "route added".to_string()
            } else if line_changed {
                "route declaration changed".to_string()
            } else {
                format!(
                    "handler body changed (L{}–L{}); the path is unchanged, behaviour may differ",
                    handler_range.0, handler_range.1
                )
            };
            let (rows, _, _) = analyze_impact::route_rows(snap, &[r]);
            out.push(ContractChange {
                kind: "route",
                name,
                location: loc_text(snap, route.at),
                change,
                risk: Risk::Behaviour,
                owner: owner_of(snap, route.at),
                affected: affected_of(snap, rows),
            });
        }
        let added: Vec<&crate::index::graph::Route> =
            added.iter().map(|&(r, _)| &g.routes[r as usize]).collect();
        let current_routes: Vec<&crate::index::graph::Route> =
            current.iter().map(|&r| &g.routes[r as usize]).collect();
        out.extend(gone_routes(snap, cf, &current_routes, &added));
    }
    // Routes whose named handler is declared in another file of their root, and changed there.
    for (r, route) in g.routes.iter().enumerate() {
        let Some(h) = route.handler.as_deref() else {
            continue;
        };
        let rf = &snap.files[route.at.file as usize];
        if route.from_spec || rf.is_test || handler_decl(snap, route.at.file, h).is_some() {
            continue;
        }
        let name = format!("{} {}", route.method, route.path);
        if out.iter().any(|c| c.kind == "route" && c.name == name) {
            continue;
        }
        let changed_at = report
            .files
            .iter()
            .filter(|c| c.class == FileClass::Code)
            .find_map(|cf| {
                let fi = cf.file?;
                (fi != route.at.file && snap.files[fi as usize].root == rf.root)
                    .then(|| handler_decl(snap, fi, h))
                    .flatten()
                    .filter(|&(lo, hi)| cf.touches(lo, hi))
                    .map(|(lo, hi)| format!("{}:{lo}–{hi}", cf.display))
            });
        let Some(at) = changed_at else { continue };
        let (rows, _, _) = analyze_impact::route_rows(snap, &[r as u32]);
        out.push(ContractChange {
            kind: "route",
            name,
            location: loc_text(snap, route.at),
            change: format!(
                "handler body changed ({} at {at}, found by name; heuristic); the path is unchanged, behaviour may differ",
                inline_code(h)
            ),
            risk: Risk::Behaviour,
            owner: owner_of(snap, route.at),
            affected: affected_of(snap, rows),
        });
    }
    report.contracts.extend(out);
}

/// The line range of the function or method a route names as its handler (`c.GetProduct`,
/// `RatingsApiController::get`, `getOrder`), when the file declares it.
fn handler_decl(snap: &Snapshot, file: u32, handler: &str) -> Option<(u32, u32)> {
    let f = &snap.files[file as usize];
    let last = handler.rsplit(['.', ':']).next().unwrap_or(handler);
    f.symbols()
        .iter()
        .find(|s| {
            matches!(
                s.kind,
                SymbolKind::Function | SymbolKind::Method | SymbolKind::Constructor
            ) && f.name(s) == last
        })
        .map(|s| (s.line, s.end_line.max(s.line)))
}

/// True when two routes are the same contract: the method (any case) and the path.
fn same_route(m: &str, p: &str, m2: &str, p2: &str) -> bool {
    m.eq_ignore_ascii_case(m2) && p == p2
}

/// The routes of a changed file's base version.
fn base_routes_of(cf: &ChangedFile) -> Vec<BaseRoute> {
    cf.base_facts
        .iter()
        .flat_map(|f| f.routes())
        .map(|(method, path, handler, line)| BaseRoute {
            method: method.to_string(),
            path: path.to_string(),
            line,
            handler: handler.map(str::to_string),
        })
        .collect()
}

/// [`handler_decl`] in the base version of a changed file.
fn base_handler_decl(cf: &ChangedFile, handler: &str) -> Option<(u32, u32)> {
    let last = handler_name(handler);
    cf.base_facts.as_ref()?.symbols.iter().find_map(|s| {
        (matches!(
            s.kind,
            SymbolKind::Function | SymbolKind::Method | SymbolKind::Constructor
        ) && s.name == last)
            .then_some((s.line, s.end_line.max(s.line)))
    })
}

/// The innermost declaration (not an endpoint) around a line of a changed file's base version.
fn base_enclosing(cf: &ChangedFile, line: u32) -> Option<(u32, u32)> {
    cf.base_facts
        .as_ref()?
        .symbols
        .iter()
        .filter(|s| s.kind != SymbolKind::Endpoint && s.line <= line && line <= s.end_line)
        .min_by_key(|s| s.end_line - s.line)
        .map(|s| (s.line, s.end_line.max(s.line)))
}

/// The routes of a changed file's base that are gone from it, with the callers of the old path
/// (left dangling: breaking). The new path of a route is the route `added` (new in the file)
/// that took its place: the one naming the same handler, else the one at its line (moved by
/// the other hunks only), else one the same hunk wrote (at the same offset, else of the same
/// method, else any).
fn gone_routes(
    snap: &Snapshot,
    cf: &ChangedFile,
    current: &[&crate::index::graph::Route],
    added: &[&crate::index::graph::Route],
) -> Vec<ContractChange> {
    let mut out = Vec::new();
    for b in base_routes_of(cf) {
        if current
            .iter()
            .any(|r| same_route(&b.method, &b.path, &r.method, &r.path))
        {
            continue;
        }
        let owner_root = cf.file.map(|fi| snap.files[fi as usize].root);
        let callers = old_route_callers(snap, owner_root, &b.method, &b.path);
        let by_handler: Vec<&&crate::index::graph::Route> = added
            .iter()
            .filter(|r| {
                matches!((&b.handler, &r.handler), (Some(x), Some(y)) if handler_name(x) == handler_name(y))
            })
            .collect();
        let at_line: Vec<&&crate::index::graph::Route> = match cf.new_line_of(b.line) {
            Some(l) => added.iter().filter(|r| r.at.line == l).collect(),
            None => Vec::new(),
        };
        let in_hunk: Vec<&&crate::index::graph::Route> = cf
            .hunks
            .iter()
            .find(|h| h.old <= b.line && b.line < h.old + h.old_count)
            .map(|h| {
                let written: Vec<&&crate::index::graph::Route> = added
                    .iter()
                    .filter(|r| h.new <= r.at.line && r.at.line < h.new + h.new_count)
                    .collect();
                let offset: Vec<_> = written
                    .iter()
                    .copied()
                    .filter(|r| r.at.line - h.new == b.line - h.old)
                    .collect();
                let method: Vec<_> = written
                    .iter()
                    .copied()
                    .filter(|r| r.method.eq_ignore_ascii_case(&b.method))
                    .collect();
                [offset, method, written]
                    .into_iter()
                    .find(|v| !v.is_empty())
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        let replaced: Vec<String> = [by_handler, at_line, in_hunk]
            .into_iter()
            .find(|v| !v.is_empty())
            .unwrap_or_default()
            .iter()
            .map(|r| inline_code(&format!("{} {}", r.method, r.path)))
            .collect();
        let what = if replaced.is_empty() {
            "route removed".to_string()
        } else {
            format!("route path changed (now {})", replaced.join(", "))
        };
        let change = if callers.is_empty() {
            format!("{what}; no caller of the old path found")
        } else {
            format!("{what}; {} caller(s) still use the old path", callers.len())
        };
        out.push(ContractChange::left_behind(
            "route",
            format!("{} {}", b.method, b.path),
            cf.base_location(b.line),
            change,
            cf.service.clone(),
            callers,
        ));
    }
    out
}

/// Topics whose producer or consumer site changed, or whose name constant changed (with the
/// consumers of the old name, which lose their producer).
pub(super) fn topic_contracts(snap: &Snapshot, report: &mut Report, depth: usize) {
    let mut touched: Touched = BTreeMap::new();
    let mut renamed: Vec<Renamed> = Vec::new();
    for cf in report.files.iter().filter(|c| c.class == FileClass::Code) {
        let Some(fi) = cf.file else { continue };
        let now_lines: Vec<&str> = cf.current_text.as_deref().unwrap_or("").lines().collect();
        changed_event_sites(snap, cf, fi, &now_lines, &mut touched);
        changed_topic_constants(snap, cf, fi, &now_lines, &mut touched, &mut renamed);
        gone_topic_literals(snap, cf, fi, &mut renamed);
    }
    let mut out = Vec::new();
    let mut done_old: BTreeSet<(String, bool)> = BTreeSet::new();
    for r in renamed {
        if !done_old.insert((topic_key(&r.old), r.producer)) {
            continue;
        }
        if r.producer {
            out.push(renamed_topic(snap, r.old, r.new, r.new_topic, r.constant));
        } else {
            // The moved consumer is the rename's row; the new topic has no other news.
            touched.remove(&r.new_topic);
            out.push(renamed_consumer_topic(snap, &r));
        }
    }
    payload_types(snap, report, &mut touched);
    for (t, why) in touched {
        out.push(touched_topic(snap, t, why, depth));
    }
    report.contracts.extend(out);
}

/// What changed about each touched topic, by topic index.
type Touched = BTreeMap<u32, Vec<String>>;

/// Event sites of changed file `cf` (snapshot file `fi`) on changed lines: the whole statement
/// of the site counts (a call over several lines, `ch.basic_publish(exchange=…,\n
/// routing_key=…)`, changed on a later line).
fn changed_event_sites(
    snap: &Snapshot,
    cf: &ChangedFile,
    fi: u32,
    now_lines: &[&str],
    touched: &mut Touched,
) {
    let g = &snap.graph;
    for e in g.events.iter().filter(|e| e.at.file == fi) {
        let end = super::statement_end(now_lines, e.at.line, 60).unwrap_or(e.at.line);
        if cf.touches(e.at.line, end.max(e.at.line)) {
            let role = match e.role {
                EventRole::Producer => "producer",
                EventRole::Consumer => "consumer",
            };
            touched
                .entry(e.topic)
                .or_default()
                .push(format!("{role} changed at {}", loc_text(snap, e.at)));
        }
    }
}

/// Constants on changed lines of `cf` that name a topic: the topics they name are touched, and
/// a constant whose value changed renames its topic.
fn changed_topic_constants(
    snap: &Snapshot,
    cf: &ChangedFile,
    fi: u32,
    now_lines: &[&str],
    touched: &mut Touched,
    renamed: &mut Vec<Renamed>,
) {
    let g = &snap.graph;
    let f = &snap.files[fi as usize];
    for b in f
        .facts()
        .bindings
        .iter()
        .filter(|b| cf.touches(b.line, b.line))
    {
        let suffix = format!(".{}", b.name);
        let mut uses: Vec<&crate::index::graph::EventLink> = g
            .events
            .iter()
            .filter(|e| {
                snap.files[e.at.file as usize].root == f.root
                    && e.how
                        .strip_prefix("constant ")
                        .is_some_and(|c| c == b.name || c.ends_with(&suffix))
            })
            .collect();
        // A class constant read through the instance or the class (`self.ROUTING_KEY`,
        // `cls.ROUTING_KEY` in a method of `class Q: ROUTING_KEY = "orders"`) is linked by
        // its value: the sites of this file naming the constant's last segment, on the
        // topic of its value.
        if uses.is_empty()
            && let Some((_, member)) = b.name.rsplit_once('.')
            && let Some(value) = b.value.as_lit()
        {
            uses = g
                .events
                .iter()
                .filter(|e| {
                    e.at.file == fi
                        && g.topics[e.topic as usize].key == topic_key(value)
                        && statement_names(now_lines, e.at.line, member)
                })
                .collect();
        }
        for e in &uses {
            touched.entry(e.topic).or_default().push(format!(
                "name constant `{}` changed at {}:{}",
                b.name, cf.base_display, b.line
            ));
        }
        let old = cf
            .base_facts
            .as_ref()
            .and_then(|bf| bf.bindings.iter().find(|x| x.name == b.name))
            .and_then(|x| {
                x.value
                    .as_lit()
                    .map(str::to_string)
                    .or_else(|| x.value.env_default())
            });
        if let (Some(old), Some(e)) = (old, uses.first()) {
            let new = &g.topics[e.topic as usize].name;
            if topic_key(&old) != topic_key(new) {
                renamed.push(Renamed {
                    old,
                    new: new.clone(),
                    new_topic: e.topic,
                    constant: Some(b.name.clone()),
                    producer: uses.iter().any(|u| u.role == EventRole::Producer),
                    sites: uses.iter().map(|u| u.at).collect(),
                });
            }
        }
    }
}

/// Literal topics of the base's event sites that are gone from `cf`: renamed to the topic of a
/// changed site of the same role.
fn gone_topic_literals(snap: &Snapshot, cf: &ChangedFile, fi: u32, renamed: &mut Vec<Renamed>) {
    let g = &snap.graph;
    if let Some(bf) = &cf.base_facts {
        let now: BTreeSet<String> = crate::order::set_of(
            g.events
                .iter()
                .filter(|e| e.at.file == fi)
                .map(|e| g.topics[e.topic as usize].key.clone()),
        );
        for e in &bf.events {
            // A literal, or the default of an environment lookup (`env ?? 'orders.created'`).
            let written = e
                .topic
                .as_lit()
                .map(str::to_string)
                .or_else(|| e.topic.env_default());
            if let Some(lit) = written
                && !lit.is_empty()
                && !now.contains(&topic_key(&lit))
                && let Some(ne) = g.events.iter().find(|x| {
                    x.at.file == fi && x.role == e.role && cf.touches(x.at.line, x.at.line)
                })
            {
                renamed.push(Renamed {
                    old: lit,
                    new: g.topics[ne.topic as usize].name.clone(),
                    new_topic: ne.topic,
                    constant: None,
                    producer: e.role == EventRole::Producer,
                    sites: vec![ne.at],
                });
            }
        }
    }
}

/// The contract row of touched topic `t`: what changed, and who is affected `depth` hops on.
fn touched_topic(snap: &Snapshot, t: u32, why: Vec<String>, depth: usize) -> ContractChange {
    let g = &snap.graph;
    let topic = &g.topics[t as usize];
    let (rows, owners, _) = analyze_impact::topic_rows(snap, &[t], depth);
    ContractChange {
        kind: "topic",
        name: topic.name.clone(),
        location: g
            .events
            .iter()
            .find(|e| e.topic == t)
            .map_or_else(String::new, |e| loc_text(snap, e.at)),
        change: {
            let mut w = why;
            w.dedup();
            w.join("; ")
        },
        risk: Risk::Behaviour,
        owner: owners
            .first()
            .map(|&r| analyze_impact::root_label(snap, r).to_string()),
        affected: affected_of(snap, rows),
    }
}

/// True when the statement starting on line `line` names `member` as an attribute
/// (`self.member`, `Q.member`): a whole word after a `.`.
fn statement_names(lines: &[&str], line: u32, member: &str) -> bool {
    let end = super::statement_end(lines, line, 60).unwrap_or(line);
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    (line..=end.max(line))
        .filter_map(|n| lines.get(n.checked_sub(1)? as usize))
        .any(|text| {
            text.match_indices(member).any(|(i, _)| {
                text[..i].ends_with('.') && !text[i + member.len()..].starts_with(word)
            })
        })
}

/// The callers (outside tests) of a route of the base, `m` `p`, that is gone: unresolved calls
/// to a matching path (heuristic) and calls resolved to it; `external` when in another root than
/// `owner_root`.
fn old_route_callers(snap: &Snapshot, owner_root: Option<u16>, m: &str, p: &str) -> Vec<Affected> {
    let g = &snap.graph;
    let method_ok =
        |cm: &Option<String>| m == "ANY" || cm.as_deref().is_none_or(|c| c.eq_ignore_ascii_case(m));
    let mut callers: Vec<Affected> = Vec::new();
    let mut push = |at: Loc, conf: Confidence| {
        let f = &snap.files[at.file as usize];
        if f.is_test {
            return;
        }
        callers.push(Affected {
            service: analyze_impact::root_label(snap, f.root).to_string(),
            external: owner_root != Some(f.root),
            role: "caller".into(),
            element: analyze_impact::enclosing(snap, at).unwrap_or_else(|| f.path.to_string()),
            location: loc_text(snap, at),
            confidence: conf.label(),
        });
    };
    // Through a gateway: `/api/ratings/api/fetch/{}` reaches ratings' `/api/fetch/{sku}` when
    // a leading segment (of up to 3) names the owning service, as the index resolves calls.
    let owner_name = owner_root
        .map(|r| crate::index::graph::service_name(analyze_impact::root_label(snap, r)))
        .filter(|n| n.len() >= 3);
    let score = |url: &str| {
        path_score(url, p).or_else(|| {
            let name = owner_name.as_deref()?;
            let (_, path) = url.split_once('/')?;
            let segs: Vec<&str> = path.split('/').collect();
            (1..=segs.len().saturating_sub(1).min(3)).find_map(|cut| {
                segs[..cut]
                    .iter()
                    .any(|seg| crate::index::graph::service_name(seg) == name)
                    .then(|| path_score(&format!("/{}", segs[cut..].join("/")), p))
                    .flatten()
            })
        })
    };
    for c in &g.unresolved_calls {
        if method_ok(&c.method) && score(&c.url).is_some() {
            push(c.at, Confidence::Heuristic);
        }
    }
    for c in &g.route_calls {
        if !method_ok(&c.method) {
            continue;
        }
        // A call the route it reaches now explains better (`items/by` reaching `/items/by`
        // rather than the old `/items/{id}`) was that route's caller, not the old one's.
        let now = path_score(&c.path, &g.routes[c.route as usize].path).unwrap_or(0);
        if score(&c.path).is_some_and(|old| old >= now) {
            // Matched to the old path by its URL: heuristic, whatever it reaches now.
            push(c.at, Confidence::Heuristic);
        }
    }
    // One call reaching several routes is one caller.
    let mut seen = BTreeSet::new();
    callers.retain(|a| seen.insert(a.location.clone()));
    callers
}

/// True when the URL of a call (as the index shows it: `{}` for a run-time part, e.g.
/// `{}/stock/{sku}` for `"#{@base_url}/stock/#{sku}"`, or a path relative to a client's base
/// address, `api/catalog/items/{}`) addresses the route template: after a scheme and host, or
/// a run-time base before the first `/`, the path matches, with at least one literal segment
/// equal to a literal of the template (a path of run-time parts alone addresses every route).
#[cfg(test)]
fn old_path_matches(url: &str, template: &str) -> bool {
    path_score(url, template).is_some()
}

/// How well a call's URL addresses a template ([`old_path_matches`]), when it does: 2 per
/// literal segment equal to a literal, 1 per segment against a parameter, 0 for a run-time
/// segment against a literal (the index's own ranking: `items/by` is `/items/by`'s caller
/// rather than `/items/{id}`'s).
pub(super) fn path_score(url: &str, template: &str) -> Option<usize> {
    let url = url.split(['?', '#']).next().unwrap_or(url);
    let is_param = |s: &str| s.starts_with('{') || s.starts_with(':') || s.starts_with('<');
    let mut paths: Vec<String> = Vec::new();
    if let Some(i) = url.find("://") {
        paths.push(
            url[i + 3..]
                .find('/')
                .map_or(String::new(), |j| url[i + 3 + j..].to_string()),
        );
    } else if url.starts_with('/') {
        paths.push(url.to_string());
    } else {
        // Relative to a base address; a leading run-time part may be that base.
        paths.push(format!("/{url}"));
        if url.split('/').next().is_some_and(is_param)
            && let Some(i) = url.find('/')
        {
            paths.push(url[i..].to_string());
        }
    }
    let segments = |p: &str| -> Vec<String> {
        p.split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    };
    let t = segments(template);
    paths
        .iter()
        .filter(|p| path_matches(p, template))
        .filter_map(|p| {
            let pairs: Vec<(String, &String)> = segments(p).into_iter().zip(&t).collect();
            let literal = pairs
                .iter()
                .any(|(c, t)| !is_param(c) && !is_param(t) && c.eq_ignore_ascii_case(t));
            literal.then(|| {
                pairs
                    .iter()
                    .map(|(c, t)| match (is_param(c), is_param(t)) {
                        (false, false) => 2,
                        (_, true) => 1,
                        (true, false) => 0,
                    })
                    .sum()
            })
        })
        .max()
}

/// A topic name that changed at a site (through a name constant, or as written there).
struct Renamed {
    old: String,
    new: String,
    new_topic: u32,
    constant: Option<String>,
    /// The sites are producers (else consumers only).
    producer: bool,
    /// The event sites now on `new`.
    sites: Vec<Loc>,
}

/// True when something other than a test or a spec (AsyncAPI names a topic as documentation)
/// produces one of the topics.
fn produced(snap: &Snapshot, topics: &[u32]) -> bool {
    snap.graph.events.iter().any(|e| {
        let f = &snap.files[e.at.file as usize];
        topics.contains(&e.topic)
            && e.role == EventRole::Producer
            && !f.is_test
            && f.lang != Language::Yaml
    })
}

/// The contract change of consumers moved from topic `old` to `new`: when nothing produces
/// `new` while `old` had producers, the consumers receive nothing any more (breaking); the
/// producers of `old` lose them.
fn renamed_consumer_topic(snap: &Snapshot, r: &Renamed) -> ContractChange {
    let g = &snap.graph;
    let old_topics: Vec<u32> = (0..g.topics.len() as u32)
        .filter(|&t| g.topics[t as usize].key == topic_key(&r.old))
        .collect();
    let site = r.sites.first().copied();
    let owner_root = site.map(|at| snap.files[at.file as usize].root);
    let mut affected: Vec<Affected> = Vec::new();
    if !old_topics.is_empty() {
        let (rows, _, _) = analyze_impact::topic_rows(snap, &old_topics, 1);
        affected = affected_of(snap, rows)
            .into_iter()
            .filter(|a| {
                a.role == "producer"
                    && !a.location.contains(".yaml:")
                    && !a.location.contains(".yml:")
            })
            .collect();
        for a in &mut affected {
            a.external = Some(a.service.as_str())
                != owner_root.map(|root| analyze_impact::root_label(snap, root));
        }
    }
    let had_producer = produced(snap, &old_topics);
    let new_produced = produced(snap, &[r.new_topic]);
    for &at in &r.sites {
        let f = &snap.files[at.file as usize];
        affected.push(Affected {
            service: analyze_impact::root_label(snap, f.root).to_string(),
            external: false,
            role: "consumer".into(),
            element: analyze_impact::enclosing(snap, at).unwrap_or_else(|| f.path.to_string()),
            location: loc_text(snap, at),
            confidence: Confidence::Exact.label(),
        });
    }
    let via = r
        .constant
        .as_ref()
        .map_or(String::new(), |c| format!(" (constant {})", inline_code(c)));
    let (old_c, new_c) = (inline_code(&r.old), inline_code(&r.new));
    let sites = r.sites.len();
    let breaking = had_producer && !new_produced;
    ContractChange {
        kind: "topic",
        name: r.old.clone(),
        location: site.map_or_else(String::new, |at| loc_text(snap, at)),
        change: if breaking {
            format!(
                "{sites} consumer(s) moved from {old_c} to {new_c}{via}: nothing produces {new_c}, so they no longer receive anything"
            )
        } else if new_produced {
            format!(
                "{sites} consumer(s) moved from {old_c} to {new_c}{via}, which has a producer; they no longer receive {old_c}"
            )
        } else {
            format!(
                "{sites} consumer(s) moved from {old_c} to {new_c}{via}; neither has a producer"
            )
        },
        risk: Risk::breaking_if(breaking),
        owner: site.and_then(|at| owner_of(snap, at)),
        affected,
    }
}

/// The contract change of a topic renamed `old` → `new` (through `constant` when a name
/// constant changed): its consumers of the old name, breaking when nothing produces it any more.
fn renamed_topic(
    snap: &Snapshot,
    old: String,
    new: String,
    new_topic: u32,
    constant: Option<String>,
) -> ContractChange {
    let g = &snap.graph;
    let old_topics: Vec<u32> = (0..g.topics.len() as u32)
        .filter(|&t| g.topics[t as usize].key == topic_key(&old))
        .collect();
    let mut affected = Vec::new();
    let still_produced = g.events.iter().any(|e| {
        // A spec (AsyncAPI) naming the topic is documentation, not a producer.
        let f = &snap.files[e.at.file as usize];
        old_topics.contains(&e.topic)
            && e.role == EventRole::Producer
            && !f.is_test
            && f.lang != Language::Yaml
    });
    if !old_topics.is_empty() {
        let (rows, _, _) = analyze_impact::topic_rows(snap, &old_topics, 1);
        affected = affected_of(snap, rows)
            .into_iter()
            .filter(|a| a.role == "consumer")
            .map(|mut a| {
                a.external = true;
                a
            })
            .collect();
    }
    let orphaned = !affected.is_empty() && !still_produced;
    let via = constant.map_or(String::new(), |c| {
        format!(" (constant {})", inline_code(&c))
    });
    let (old_c, new_c) = (inline_code(&old), inline_code(&new));
    ContractChange {
        kind: "topic",
        name: old.clone(),
        location: g
            .events
            .iter()
            .find(|e| e.topic == new_topic && e.role == EventRole::Producer)
            .map_or_else(String::new, |e| loc_text(snap, e.at)),
        change: if orphaned {
            format!(
                "topic renamed {old_c} → {new_c}{via}: {} consumer(s) of {old_c} no longer receive anything",
                affected.len()
            )
        } else if affected.is_empty() {
            format!("topic renamed {old_c} → {new_c}{via}; no consumer of the old name found")
        } else {
            format!("topic renamed {old_c} → {new_c}{via}; the old name still has a producer")
        },
        risk: Risk::breaking_if(orphaned),
        owner: g
            .events
            .iter()
            .find(|e| e.topic == new_topic && e.role == EventRole::Producer)
            .and_then(|e| owner_of(snap, e.at)),
        affected,
    }
}

/// The types (class, struct, record, message, interface, enum) a change touches in code: a
/// changed type, or the type holding a changed field (`OrderPaid.amount` changes `OrderPaid`),
/// by its simple name, with the declaration that changed and the root it is declared in.
fn changed_types<'r>(snap: &Snapshot, report: &'r Report) -> Vec<ChangedType<'r>> {
    let root_of = |display: &str| {
        report
            .files
            .iter()
            .find(|f| f.display == display)
            .and_then(|f| f.file)
            .map(|fi| snap.files[fi as usize].root)
    };
    report
        .decls
        .iter()
        .filter(|d| d.class == FileClass::Code && d.how != "added")
        .filter_map(|d| {
            let name = match d.kind {
                "class" | "struct" | "message" | "interface" | "enum" | "type" => &d.name[..],
                "field" | "property" | "enum_value" => d.name.rsplit_once('.')?.0,
                _ => return None,
            };
            let name = name.rsplit('.').next().unwrap_or(name);
            (name.len() >= 4).then_some((name, d, root_of(&d.display)))
        })
        .collect()
}

/// A changed type: its simple name, the declaration that changed, and its root.
type ChangedType<'r> = (&'r str, &'r ChangedDecl, Option<u16>);

/// The lines that say what a site (an event producer or consumer, a route) sends or takes:
/// the site's own line and the signature — first lines — of the function around it, or of
/// the one an annotation or decorator on the site's line introduces (`@KafkaListener(…)`
/// above `void on(OrderPaid evt)`, `@GetMapping(…)` above `Ship calc(…)`).
fn site_context<'a>(
    f: &crate::index::snapshot::FileEntry,
    line_at: &impl Fn(u32) -> &'a str,
    site: u32,
) -> Vec<(u32, &'a str)> {
    let around = f
        .symbols()
        .iter()
        .filter(|s| {
            matches!(
                s.kind,
                SymbolKind::Function | SymbolKind::Method | SymbolKind::Constructor
            ) && s.line <= site + 2
                && site <= s.end_line.max(s.line)
        })
        .max_by_key(|s| s.line);
    let mut context: Vec<(u32, &str)> = vec![(site, line_at(site))];
    if let Some(s) = around {
        for n in s.line..(s.line + 3).min(site.max(s.line + 1)) {
            context.push((n, line_at(n)));
        }
    }
    context
}

/// Calls `found(site index, type name, its changed declaration, line naming it)` for every
/// site of `sites` (file, line, whether the handler's signature counts) whose context names a
/// changed type: the site's line, and with the flag [`site_context`]'s signature lines (what a
/// consumer or a route handler takes or returns; a producer's signature says what it received,
/// not what it sends). A type is seen only where it is visible: in its own root, or in a root
/// that imports its root (a `Topics` of one service is not the `Topics` another one names).
/// Each file is read once.
fn sites_naming_types<'r>(
    snap: &Snapshot,
    types: &[ChangedType<'r>],
    sites: &[(Loc, bool)],
    mut found: impl FnMut(usize, &'r str, &'r ChangedDecl, u32),
) {
    if types.is_empty() {
        return;
    }
    let imports: BTreeSet<(u16, u16)> = crate::order::set_of(
        snap.graph
            .import_links
            .iter()
            .map(|l| (snap.files[l.at.file as usize].root, l.to_root)),
    );
    let visible = |from: u16, root: Option<u16>| {
        root.is_none_or(|r| r == from || imports.contains(&(from, r)))
    };
    let mut files: Vec<u32> = sites.iter().map(|(l, _)| l.file).collect();
    crate::order::sort(&mut files);
    files.dedup();
    for fi in files {
        let f = &snap.files[fi as usize];
        if !types.iter().any(|&(_, _, root)| visible(f.root, root)) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(snap.abs_path(f)) else {
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        let line_at = |n: u32| {
            lines
                .get((n as usize).wrapping_sub(1))
                .copied()
                .unwrap_or("")
        };
        for (i, (at, signature)) in sites.iter().enumerate().filter(|(_, (l, _))| l.file == fi) {
            let context = if *signature {
                site_context(f, &line_at, at.line)
            } else {
                vec![(at.line, line_at(at.line))]
            };
            for &(name, d, _) in types.iter().filter(|t| visible(f.root, t.2)) {
                if let Some(&(n, _)) = context.iter().find(|(_, l)| names_word(l, name)) {
                    found(i, name, d, n);
                }
            }
        }
    }
}

/// Topics whose payload type changed: a changed type ([`changed_types`]) that a producer or
/// consumer of the topic names at its site or in its handler's signature. Heuristic, and said
/// so: a payload built elsewhere and passed in under another name is not seen.
fn payload_types(snap: &Snapshot, report: &Report, touched: &mut BTreeMap<u32, Vec<String>>) {
    let g = &snap.graph;
    let types = changed_types(snap, report);
    let sites: Vec<(Loc, bool)> = g
        .events
        .iter()
        .map(|e| (e.at, e.role == EventRole::Consumer))
        .collect();
    sites_naming_types(snap, &types, &sites, |i, name, d, n| {
        let e = &g.events[i];
        let role = match e.role {
            EventRole::Producer => "producer",
            EventRole::Consumer => "consumer",
        };
        touched.entry(e.topic).or_default().push(format!(
            "payload type `{name}` changed at {}:{} (the {role} at {} names it at line {n}; heuristic)",
            d.display,
            d.line,
            loc_text(snap, e.at)
        ));
    });
}

/// Routes whose request or response type changed: a changed type ([`changed_types`]) named on
/// the route's line or in its handler's signature (`Ship calc(…)` under `@GetMapping`), for a
/// route not already reported; its callers see other JSON. Heuristic, and said so.
pub(super) fn route_types(snap: &Snapshot, report: &mut Report) {
    let g = &snap.graph;
    let types = changed_types(snap, report);
    let sites: Vec<(Loc, bool)> = g.routes.iter().map(|r| (r.at, true)).collect();
    let mut why: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    sites_naming_types(snap, &types, &sites, |i, name, d, n| {
        why.entry(i as u32).or_default().push(format!(
            "request or response type `{name}` changed at {}:{} (the handler names it at line {n}; heuristic)",
            d.display, d.line
        ));
    });
    for (r, mut reasons) in why {
        let route = &g.routes[r as usize];
        let name = format!("{} {}", route.method, route.path);
        if report
            .contracts
            .iter()
            .any(|c| c.kind == "route" && c.name == name)
        {
            continue;
        }
        reasons.dedup();
        let (rows, _, _) = analyze_impact::route_rows(snap, &[r]);
        report.contracts.push(ContractChange {
            kind: "route",
            name,
            location: loc_text(snap, route.at),
            change: reasons.join("; "),
            risk: Risk::Behaviour,
            owner: owner_of(snap, route.at),
            affected: affected_of(snap, rows),
        });
    }
}

/// True when `line` names the type `word`: as a whole identifier (not inside a longer name),
/// and not as the qualifier of a member (`Topics.ORDERS` reads a constant of `Topics`, it
/// does not send or take a `Topics`).
fn names_word(line: &str, word: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    line.match_indices(word).any(|(i, _)| {
        let after = &line[i + word.len()..];
        let member = after
            .strip_prefix('.')
            .or_else(|| after.strip_prefix("::"))
            .is_some_and(|rest| rest.chars().next().is_some_and(is_ident));
        !line[..i].chars().next_back().is_some_and(is_ident)
            && !after.chars().next().is_some_and(is_ident)
            && !member
    })
}

/// Roots whose non-test code changed outside any contract, imported by other roots.
pub(super) fn importer_contracts(snap: &Snapshot, report: &mut Report) {
    let g = &snap.graph;
    let mut roots: BTreeMap<u16, usize> = BTreeMap::new();
    // The packages (namespaces) the changed files declare, by root; `None` when one of them
    // declares none (path imports: any import of the root may reach it).
    let mut packages: BTreeMap<u16, Option<BTreeSet<String>>> = BTreeMap::new();
    // Where the row points: the first changed line of the root's first changed file (the
    // files are sorted by path).
    let mut first: BTreeMap<u16, String> = BTreeMap::new();
    for cf in report.files.iter().filter(|c| c.class == FileClass::Code) {
        // A `.proto` change is answered by its contracts, not by who imports the root.
        if let Some(fi) = cf.file
            && snap.files[fi as usize].lang != Language::Protobuf
        {
            let f = &snap.files[fi as usize];
            *roots.entry(f.root).or_default() += 1;
            first.entry(f.root).or_insert_with(|| {
                let line = cf.ranges.first().map_or(1, |r| r.0.max(1));
                format!("{}:{line}", cf.display)
            });
            let entry = packages
                .entry(f.root)
                .or_insert_with(|| Some(BTreeSet::new()));
            match (&f.facts().package, entry.as_mut()) {
                (Some(p), Some(set)) if !p.is_empty() => {
                    set.insert(p.clone());
                }
                _ => *entry = None,
            }
        }
    }
    for (root, n) in roots {
        let declared = packages.get(&root).cloned().flatten();
        // An import reaches the changed code when it names one of its packages (or a member of
        // one; for Go, the import path ends with the package's directory).
        let reaches = |module: &str| {
            declared.as_ref().is_none_or(|pkgs| {
                pkgs.iter().any(|p| {
                    module == p
                        || module
                            .strip_prefix(p.as_str())
                            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with("::"))
                        || module.rsplit('/').next() == Some(p.as_str())
                })
            })
        };
        let mut affected: Vec<Affected> = Vec::new();
        let mut seen = BTreeSet::new();
        for l in g.import_links.iter().filter(|l| l.to_root == root) {
            let f = &snap.files[l.at.file as usize];
            if f.root == root || f.is_test || !reaches(&l.module) {
                continue;
            }
            if !seen.insert((l.at.file, l.at.line)) {
                continue;
            }
            affected.push(Affected {
                service: analyze_impact::root_label(snap, f.root).to_string(),
                external: true,
                role: "importer".into(),
                element: l.module.clone(),
                location: loc_text(snap, l.at),
                confidence: l.confidence.label(),
            });
        }
        if affected.is_empty() {
            continue;
        }
        let label = analyze_impact::root_label(snap, root).to_string();
        report.contracts.push(ContractChange {
            kind: "package",
            name: label.clone(),
            location: first.remove(&root).unwrap_or_default(),
            change: format!("{n} changed code file(s) in a root other roots import"),
            risk: Risk::Internal,
            owner: Some(label),
            affected,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_old_route_is_matched_after_a_run_time_base_url() {
        // `"#{@base_url}/stock/#{sku}"` (Ruby), `base + "/stock/" + sku` and the like.
        assert!(old_path_matches("{}/stock/{sku}", "/stock/{sku}"));
        assert!(old_path_matches("{}/stock/{}", "/stock/:sku"));
        assert!(old_path_matches(
            "http://inventory:8000/stock/{}",
            "/stock/{sku}"
        ));
        assert!(old_path_matches("/stock/42?x=1", "/stock/{sku}"));
        assert!(!old_path_matches("{}/stocks/{sku}", "/stock/{sku}"));
        assert!(!old_path_matches("{}/stock", "/stock/{sku}"));
        // Run-time parts alone address no route in particular.
        assert!(!old_path_matches("{}/{}", "/stock/{sku}"));
        assert!(!old_path_matches("{}", "/stock"));
        // Relative to a client's base address (`BaseAddress = new("http://catalog/")`).
        assert!(old_path_matches(
            "api/catalog/items/{}",
            "/api/catalog/items/{id:int}"
        ));
        assert!(!old_path_matches(
            "api/catalog/items/{}",
            "/api/catalog/item/{id:int}"
        ));
        // A literal where the template has a parameter ranks below a literal match.
        assert!(
            path_score("api/catalog/items/by", "/api/catalog/items/{id:int}")
                < path_score("api/catalog/items/by", "/api/catalog/items/by")
        );
    }

    #[test]
    fn a_payload_type_is_named_as_a_whole_identifier() {
        assert!(names_word("void on(OrderPaid evt) {", "OrderPaid"));
        assert!(names_word("send(T, new OrderPaid(1))", "OrderPaid"));
        assert!(!names_word("void on(OrderPaidV2 evt)", "OrderPaid"));
        assert!(!names_word("MyOrderPaid x", "OrderPaid"));
        assert!(names_word("é(OrderPaid)ü", "OrderPaid"));
        assert!(!names_word("éOrderPaidü", "OrderPaid"));
        assert!(!names_word("", "OrderPaid"));
        // A member read through the type is not the type sent or taken.
        assert!(!names_word(
            "@KafkaListener(topics = Topics.ORDERS)",
            "Topics"
        ));
        assert!(!names_word("consume(Topics::Orders)", "Topics"));
        assert!(names_word("void on(pb.OrderPaid evt)", "OrderPaid"));
        assert!(names_word("List<OrderPaid>. x", "OrderPaid"));
    }
}
