//! The calling side of HTTP: a change to a call's URL that makes it reach another route, or
//! none, changes a contract between two services as surely as a change to the route does.
//!
//! For each hunk of a changed source file, the calls the base version made on the hunk's old
//! lines are matched to the workspace's routes by their URL as written (the index's own path
//! scoring), and compared with the routes the calls on the hunk's new lines reach now.

use super::super::analyze_impact;
use super::contracts::path_score;
use super::{Affected, ContractChange, FileClass, Report, Risk, loc_text};
use crate::index::facts::HttpFact;
use crate::index::graph::{Confidence, Loc};
use crate::index::snapshot::Snapshot;
use crate::render::inline_code;
use std::collections::BTreeSet;

/// Adds a `call` contract change for every HTTP call whose target route changed with the
/// diff: breaking when it reached a route and now reaches none, a change of behaviour when it
/// reaches another.
pub(super) fn call_contracts(snap: &Snapshot, report: &mut Report) {
    let mut out = Vec::new();
    for cf in report.files.iter().filter(|c| c.class == FileClass::Code) {
        let (Some(fi), Some(base)) = (cf.file, cf.base_facts.as_ref()) else {
            continue;
        };
        let own_root = snap.files[fi as usize].root;
        for h in &cf.hunks {
            let old_span = h.old..h.old.saturating_add(h.old_count);
            let new_span = h.new..h.new.saturating_add(h.new_count);
            // Both sides scored the same way, from the URL as written, so a call the hunk
            // only moved reaches what it reached.
            let calls_in = |http: &[HttpFact],
                            span: &std::ops::Range<u32>|
             -> Vec<(Option<String>, String, u32)> {
                http.iter()
                    .filter_map(|f| match f {
                        HttpFact::Call { method, url, line } if span.contains(line) => {
                            Some((method.clone(), url.display(), *line))
                        }
                        _ => None,
                    })
                    .collect()
            };
            let old_calls = calls_in(&base.http, &old_span);
            let new_calls = calls_in(&snap.files[fi as usize].facts().http, &new_span);
            let text = |c: &[(Option<String>, String, u32)]| -> Vec<(Option<String>, String)> {
                let mut t: Vec<_> = c.iter().map(|(m, u, _)| (m.clone(), u.clone())).collect();
                t.sort();
                t
            };
            if text(&old_calls) == text(&new_calls) {
                continue;
            }
            let targets = |calls: &[(Option<String>, String, u32)]| -> BTreeSet<u32> {
                calls
                    .iter()
                    .flat_map(|(m, u, _)| routes_addressed(snap, own_root, m.as_deref(), u))
                    .collect()
            };
            let (before, after) = (targets(&old_calls), targets(&new_calls));
            if before == after || (before.is_empty() && new_calls.is_empty()) {
                continue;
            }
            let at = Loc {
                file: fi,
                line: new_calls.first().map_or(h.new.max(1), |c| c.2),
            };
            out.push(retargeted(snap, at, &before, &after));
        }
    }
    report.contracts.extend(out);
}

/// The code routes (outside the caller's root when others fit too) that a call of `method`
/// to `url` addresses best, by the index's path score.
fn routes_addressed(snap: &Snapshot, own_root: u16, method: Option<&str>, url: &str) -> Vec<u32> {
    let g = &snap.graph;
    let fits = |m: &str| m == "ANY" || method.is_none_or(|c| c.eq_ignore_ascii_case(m));
    let scored: Vec<(usize, u32, u16)> = g
        .routes
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.from_spec && fits(&r.method))
        .filter_map(|(i, r)| {
            let root = snap.files[r.at.file as usize].root;
            path_score(url, &r.path).map(|s| (s, i as u32, root))
        })
        .collect();
    let others = scored.iter().any(|&(_, _, root)| root != own_root);
    let scored: Vec<(usize, u32)> = scored
        .into_iter()
        .filter(|&(_, _, root)| !others || root != own_root)
        .map(|(s, i, _)| (s, i))
        .collect();
    let best = scored.iter().map(|&(s, _)| s).max().unwrap_or(0);
    scored
        .into_iter()
        .filter(|&(s, _)| s == best)
        .map(|(_, i)| i)
        .collect()
}

/// The contract change of a call at `at` that reached the routes `before` and reaches
/// `after` now.
fn retargeted(
    snap: &Snapshot,
    at: Loc,
    before: &BTreeSet<u32>,
    after: &BTreeSet<u32>,
) -> ContractChange {
    let g = &snap.graph;
    let name_of = |r: u32| {
        let r = &g.routes[r as usize];
        format!("{} {}", r.method, r.path)
    };
    let listed = |set: &BTreeSet<u32>| {
        set.iter()
            .take(3)
            .map(|&r| {
                format!(
                    "{} ({})",
                    inline_code(&name_of(r)),
                    loc_text(snap, g.routes[r as usize].at)
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let caller_root = snap.files[at.file as usize].root;
    let mut affected: Vec<Affected> = Vec::new();
    for (&r, role) in before
        .iter()
        .map(|r| (r, "route it reached"))
        .chain(after.iter().map(|r| (r, "route it reaches now")))
    {
        let route = &g.routes[r as usize];
        let root = snap.files[route.at.file as usize].root;
        affected.push(Affected {
            service: analyze_impact::root_label(snap, root).to_string(),
            external: root != caller_root,
            role: role.into(),
            element: name_of(r),
            location: loc_text(snap, route.at),
            confidence: Confidence::Heuristic.label(),
        });
    }
    let (change, risk) = match (before.is_empty(), after.is_empty()) {
        (false, true) => (
            format!(
                "the HTTP call no longer reaches {}: no route of the workspace serves its new URL",
                listed(before)
            ),
            Risk::Breaking,
        ),
        (true, false) => (
            format!("the HTTP call now reaches {}", listed(after)),
            Risk::Behaviour,
        ),
        _ => (
            format!(
                "the HTTP call now reaches {} instead of {}",
                listed(after),
                listed(before)
            ),
            Risk::Behaviour,
        ),
    };
    let name = before
        .iter()
        .chain(after)
        .next()
        .map_or_else(|| "HTTP call".to_string(), |&r| name_of(r));
    ContractChange {
        kind: "call",
        name,
        location: loc_text(snap, at),
        change,
        risk,
        owner: Some(analyze_impact::root_label(snap, caller_root).to_string()),
        affected,
    }
}
