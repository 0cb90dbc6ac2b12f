//! Route targets: matching `METHOD /path`, the route and its callers, and the unresolved
//! HTTP calls that may still reach it, ranked.

use std::collections::BTreeSet;

use super::misses::unresolved_list;
use super::{Role, Row, enclosing, file_name, root_of};
use crate::index::graph::{Confidence, Graph, Loc, UnresolvedCall, path_matches};
use crate::index::snapshot::Snapshot;

/// Routes matching `METHOD /path` or `/path` (templates compare segment-wise).
pub(super) fn match_routes(g: &Graph, target: &str) -> Vec<u32> {
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

pub(crate) fn route_rows(snap: &Snapshot, routes: &[u32]) -> (Vec<Row>, Vec<u16>, Vec<String>) {
    route_rows_with(snap, routes, false)
}

/// [`route_rows`], with the notes' unresolved sites in test files listed when `include_tests`.
pub(super) fn route_rows_with(
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
    let reach = Reach {
        snap,
        owners: &owners,
        methods: &methods,
        words: &words,
        include_tests,
    };
    notes.extend(if no_caller {
        reach.fitting_unresolved_calls()
    } else {
        reach.maybe_callers()
    });
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
                // A deployment's health check says what it runs; a page's link, that it is one.
                via: if c.navigation {
                    format!("{name} (navigation link {})", c.path)
                } else if c.probe {
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

/// What the unresolved HTTP calls are matched against when looking for calls that may
/// reach a set of routes: the roots serving them, their verbs and their literal path words.
struct Reach<'s> {
    snap: &'s Snapshot,
    owners: &'s BTreeSet<u16>,
    methods: &'s [&'s str],
    words: &'s BTreeSet<String>,
    include_tests: bool,
}

impl Reach<'_> {
    /// With no caller resolved, the listing of every unresolved call whose verb fits, ranked.
    fn fitting_unresolved_calls(&self) -> Option<String> {
        let g = &self.snap.graph;
        // No caller resolved: every unresolved call whose verb fits may be one (a webhook
        // posted to a URL read from a database, a client whose base URL is configured at
        // run time). They are listed ranked, so the zero is not taken for proof; a call
        // whose host names another service goes there, not here.
        let (calls, tests): (Vec<_>, Vec<_>) = g
            .unresolved_calls
            .iter()
            .filter(|c| c.to_root.is_none_or(|r| self.owners.contains(&r)))
            .partition(|c| self.include_tests || !self.snap.files[c.at.file as usize].is_test);
        let rank = |calls: &[&UnresolvedCall]| {
            rank_unresolved_calls(
                self.methods,
                self.words,
                calls.iter().map(|c| (c.method.as_deref(), c.url.as_str())),
            )
        };
        let ranked = rank(&calls);
        let tests = rank(&tests).len();
        (!ranked.is_empty() || tests > 0)
            .then(|| ranked_call_list(self.snap, &calls, &ranked, tests))
    }

    /// With callers resolved, the unresolved HTTP calls that may still reach the routes: their
    /// path shares a word, or their host names an owner service and their path is unknown.
    fn maybe_callers(&self) -> Option<String> {
        let g = &self.snap.graph;
        let maybe: Vec<(Loc, String)> = g
            .unresolved_calls
            .iter()
            .filter(|c| {
                // A call whose verb is known reaches only routes of that verb (or of any).
                let verb_fits = c.method.as_deref().is_none_or(|m| {
                    self.methods
                        .iter()
                        .any(|r| *r == "ANY" || r.eq_ignore_ascii_case(m))
                });
                let own = call_words(&c.url);
                let shares = own.iter().any(|w| self.words.contains(w));
                // Its host names an owner service and its path is unknown, or it shares a word.
                verb_fits
                    && (shares
                        || (own.is_empty() && c.to_root.is_some_and(|r| self.owners.contains(&r))))
            })
            .map(|c| (c.at, format!("`{}` — {}", c.url, c.why)))
            .collect();
        (!maybe.is_empty()).then(|| {
            unresolved_list(
                self.snap,
                "HTTP call(s) the index could not match to a route may reach these routes (their path shares a word, or their host names the service and their path is unknown)",
                maybe.into_iter(),
                self.include_tests,
            )
        })
    }
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
    calls: &[&UnresolvedCall],
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

/// True for a route parameter segment (`{id}`, `:id`, `<id>`).
pub(super) fn is_param_segment(s: &str) -> bool {
    s.starts_with('{') || s.starts_with(':') || s.starts_with('<') || s.starts_with('*')
}

#[cfg(test)]
mod tests {
    use super::{call_words, rank_unresolved_calls};
    use std::collections::BTreeSet;

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
