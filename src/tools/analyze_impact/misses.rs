//! When a target resolves to little or nothing: near-miss names, the unresolved sites that
//! share its words, and the values written as it.

use super::routes::is_param_segment;
use crate::index::graph::Loc;
use crate::index::snapshot::Snapshot;
use crate::render::inline_code;

/// For a target that names no RPC, topic or route: the ones whose name contains it (a path
/// without its verb, `/carts`), the routes whose path ends with it (a path written without
/// the prefix its router or class adds: `GET /fetch/{sku}` for `GET /api/fetch/:sku`), and
/// near misses by spelling (`ordrs` for `orders`), as a line naming up to five to pass.
pub(super) fn close_names(snap: &Snapshot, target: &str) -> String {
    use crate::resources::Kind;
    let mut candidates = Vec::new();
    for kind in [Kind::Rpc, Kind::Topic, Kind::Route] {
        candidates.extend(crate::resources::names(snap, kind));
    }
    let mut ranked = route_suffix_matches(&candidates, target);
    for n in crate::completion::rank(candidates.clone(), target)
        .into_iter()
        .chain(spelling_neighbours(&candidates, target))
    {
        if !ranked.contains(&n) {
            ranked.push(n);
        }
    }
    if ranked.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = ranked.iter().take(5).map(|n| inline_code(n)).collect();
    format!(
        "\n_Close names ({} in all): {}; pass one as `target`._\n",
        ranked.len(),
        shown.join(", ")
    )
}

/// A route's path as a list of segments to compare: literals lower-cased, every parameter
/// form (`{id}`, `{id:int}`, `:id`, `<id>`, `*`) the same.
fn route_shape(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            if is_param_segment(s) {
                "{}".to_string()
            } else {
                s.to_lowercase()
            }
        })
        .collect()
}

/// The route names (`METHOD /path`) whose path ends with the target's path and has more
/// segments (a prefix the target left out), with the same verb when the target gives one.
fn route_suffix_matches(candidates: &[String], target: &str) -> Vec<String> {
    let target = target.trim();
    let (verb, path) = match target.split_once(' ') {
        Some((v, p)) if p.trim_start().starts_with('/') => (Some(v), p.trim()),
        _ if target.starts_with('/') => (None, target),
        _ => return Vec::new(),
    };
    let want = route_shape(path);
    if want.is_empty() {
        return Vec::new();
    }
    candidates
        .iter()
        .filter(|c| {
            let Some((m, p)) = c.split_once(' ') else {
                return false;
            };
            let have = route_shape(p);
            let verb_fits =
                verb.is_none_or(|v| v.eq_ignore_ascii_case(m) || m.eq_ignore_ascii_case("ANY"));
            verb_fits && have.len() > want.len() && have.ends_with(&want)
        })
        .cloned()
        .collect()
}

/// The candidates spelled within a few edits of the target (a quarter of its length, at
/// least one), nearest first; none for targets shorter than three characters.
fn spelling_neighbours(candidates: &[String], target: &str) -> Vec<String> {
    let q: Vec<char> = target.trim().to_lowercase().chars().take(64).collect();
    if q.len() < 3 {
        return Vec::new();
    }
    let most = (q.len() / 4).max(1);
    let mut near: Vec<(usize, &String)> = candidates
        .iter()
        .filter_map(|c| {
            let low: Vec<char> = c.to_lowercase().chars().take(64).collect();
            if low.len().abs_diff(q.len()) > most {
                return None;
            }
            let d = crate::resources::edit_distance(&q, &low);
            (d > 0 && d <= most).then_some((d, c))
        })
        .collect();
    crate::order::sort(&mut near);
    near.into_iter().map(|(_, c)| c.clone()).collect()
}

/// The words of a target worth matching against unresolved sites (`orders.created` →
/// `orders`, `created`), at least three letters each.
pub(super) fn target_words(target: &str) -> Vec<String> {
    target
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| {
            w.len() >= 3
                && !matches!(
                    *w,
                    "api" | "get" | "post" | "put" | "delete" | "http" | "https"
                )
        })
        .map(str::to_lowercase)
        .collect()
}

/// For a target nothing resolves to: the constants and settings whose value is exactly it
/// (`ORDERS_QUEUE = "orders-queue"`, `orders.queue: orders-queue`), so a queue that is only
/// declared (a `new Queue(NAME)` nobody consumes) or a topic used by a library the index
/// does not know is still found where it is written. Empty when there are none.
pub(super) fn written_values(snap: &Snapshot, target: &str, include_tests: bool) -> String {
    const SHOWN: usize = 10;
    let target = target.trim();
    if target.is_empty() {
        return String::new();
    }
    let mut found: Vec<(String, u32, String)> = Vec::new();
    for f in snap.files.iter() {
        if f.is_test && !include_tests {
            continue;
        }
        let facts = f.facts();
        let path = snap.display_path(f);
        for b in &facts.bindings {
            if b.value
                .as_lit()
                .is_some_and(|v| v.eq_ignore_ascii_case(target))
            {
                // `new Queue#0` (a constructor's argument) reads as what it is.
                let shown = crate::index::lang::bind::describe_ctor_arg(&b.name)
                    .unwrap_or_else(|| b.name.clone());
                found.push((path.to_string(), b.line, shown));
            }
        }
        for p in &facts.properties {
            if p.value.eq_ignore_ascii_case(target) {
                found.push((path.to_string(), p.line, p.key.clone()));
            }
        }
    }
    if found.is_empty() {
        return String::new();
    }
    crate::order::sort_by(&mut found, |a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    found.dedup();
    let mut out = format!(
        "\n**Written as a value at {} place(s)** (constants and settings equal to {}; no producer, consumer, route or call the index recognises uses them):\n",
        found.len(),
        inline_code(target)
    );
    for (path, line, name) in found.iter().take(SHOWN) {
        out.push_str(&format!("- `{path}:{line}` — {}\n", inline_code(name)));
    }
    if found.len() > SHOWN {
        out.push_str(&format!("- … and {} more\n", found.len() - SHOWN));
    }
    out
}

/// True when `text` contains one of `words` (case-insensitive).
pub(super) fn shares_word(text: &str, words: &[String]) -> bool {
    let text = text.to_lowercase();
    words.iter().any(|w| text.contains(w.as_str()))
}

/// A note listing unresolved sites with `path:line` and why, at most 15 of them.
pub(super) fn unresolved_list(
    snap: &Snapshot,
    what: &str,
    sites: impl Iterator<Item = (Loc, String)>,
    include_tests: bool,
) -> String {
    let all: Vec<(Loc, String)> = sites.collect();
    let before = all.len();
    let sites: Vec<(Loc, String)> = all
        .into_iter()
        .filter(|(at, _)| include_tests || !snap.files[at.file as usize].is_test)
        .collect();
    let tests = before - sites.len();
    if sites.is_empty() {
        return format!(
            "_Unresolved: {tests} {what} — all in test files, left out (pass `include_tests: true`)._\n"
        );
    }
    let mut out = format!("**Unresolved: {} {what}:**\n", sites.len());
    if tests > 0 {
        out.push_str(&format!(
            "_({tests} more in test files left out; pass `include_tests: true`.)_\n"
        ));
    }
    for (at, why) in sites.iter().take(15) {
        out.push_str(&format!(
            "- `{}:{}` — {}\n",
            snap.display_path(&snap.files[at.file as usize]),
            at.line,
            why
        ));
    }
    if sites.len() > 15 {
        out.push_str(&format!("- … and {} more.\n", sites.len() - 15));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{route_suffix_matches, spelling_neighbours};

    #[test]
    fn near_misses_name_the_route_with_its_prefix_and_the_topic_spelled_right() {
        let names: Vec<String> = [
            "GET /api/fetch/:sku",
            "PUT /api/rate/{sku}/{score:int}",
            "GET /fetch",
            "orders",
            "orders.created.v2",
            "ANY /_health",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            route_suffix_matches(&names, "GET /fetch/{sku}"),
            vec!["GET /api/fetch/:sku"]
        );
        assert_eq!(
            route_suffix_matches(&names, "PUT /rate/{sku}/{score}"),
            vec!["PUT /api/rate/{sku}/{score:int}"]
        );
        // Another verb, the same length, or no path: none.
        assert!(route_suffix_matches(&names, "POST /fetch/{sku}").is_empty());
        assert!(route_suffix_matches(&names, "GET /api/fetch/{x}").is_empty());
        assert!(route_suffix_matches(&names, "orders").is_empty());
        assert_eq!(spelling_neighbours(&names, "ordrs"), vec!["orders"]);
        assert_eq!(spelling_neighbours(&names, "ÖRDERS"), vec!["orders"]);
        assert!(spelling_neighbours(&names, "or").is_empty());
        assert!(spelling_neighbours(&names, "payments").is_empty());
    }
}
