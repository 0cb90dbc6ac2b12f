//! The calling side of HTTP: a change to a call's URL that makes it reach another route, or
//! none, changes a contract between two services as surely as a change to the route does.
//!
//! For each hunk of a changed source file, the calls the base version made on the hunk's old
//! lines are matched to the workspace's routes by their URL as written (the index's own path
//! scoring), and compared with the routes the calls on the hunk's new lines reach now.
//! Configuration files that make requests count too: a load-test scenario's step (`- post:`
//! with its `url:` on the next line) is a call over the lines of its block.

use super::super::analyze_impact;
use super::contracts::path_score;
use super::{Affected, ContractChange, FileClass, Report, Risk, loc_text};
use crate::index::facts::{Binding, FileFacts, HttpFact, Language, Part, SymbolKind, Value};
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
        // A YAML call (a scenario step) is its whole block: its URL is on the lines below
        // the verb the call is recorded at.
        let yaml = snap.files[fi as usize].lang == Language::Yaml;
        let base_lines: Vec<&str> = cf.base_text.as_deref().unwrap_or("").lines().collect();
        let now_lines: Vec<&str> = cf.current_text.as_deref().unwrap_or("").lines().collect();
        let spans_of = |kind: SymbolKind, line: u32, end: u32| (kind, line, end.max(line));
        let base_symbols: Vec<_> = base
            .symbols
            .iter()
            .map(|s| spans_of(s.kind, s.line, s.end_line))
            .collect();
        let now_symbols: Vec<_> = snap.files[fi as usize]
            .symbols()
            .iter()
            .map(|s| spans_of(s.kind, s.line, s.end_line))
            .collect();
        for h in &cf.hunks {
            // The hunk, widened to the function around it: a URL built on one line
            // (`var uri = $"{base}items/{id}";`) is requested on the next.
            let old_span = around(&base_symbols, h.old, h.old.saturating_add(h.old_count));
            let new_span = around(&now_symbols, h.new, h.new.saturating_add(h.new_count));
            // Both sides scored the same way, from the URL as written, so a call the hunk
            // only moved reaches what it reached.
            let calls_in = |facts: &FileFacts,
                            span: &std::ops::Range<u32>,
                            lines: &[&str]|
             -> Vec<(Option<String>, String, u32)> {
                let touched = |line: u32| {
                    let end = if yaml {
                        yaml_block_end(lines, line)
                    } else {
                        line
                    };
                    line < span.end && span.start <= end
                };
                facts
                    .http
                    .iter()
                    .filter_map(|f| match f {
                        HttpFact::Call { method, url, line } if touched(*line) => Some((
                            method.clone(),
                            local_display(url, &facts.bindings, 0),
                            *line,
                        )),
                        _ => None,
                    })
                    .collect()
            };
            let old_calls = calls_in(base, &old_span, &base_lines);
            let new_calls = calls_in(snap.files[fi as usize].facts(), &new_span, &now_lines);
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

/// A URL as it reads with the names bound in its own file filled in (`{uri}` with
/// `uri = $"{remoteServiceBaseUrl}items/{id}"` and that field's literal): both versions of a
/// file are read the same way, so only a change of the file's own text shows.
fn local_display(value: &Value, bindings: &[Binding], depth: u8) -> String {
    let mut out = String::new();
    for p in &value.parts {
        let bound = match p {
            Part::Ref { name, .. } if depth < 4 => {
                let bare = name.rsplit('.').next().unwrap_or(name);
                bindings.iter().rev().find(|b| {
                    b.name == *name || (!bare.is_empty() && b.name.rsplit('.').next() == Some(bare))
                })
            }
            _ => None,
        };
        match bound {
            Some(b) => out.push_str(&local_display(&b.value, bindings, depth + 1)),
            None => out.push_str(
                &Value {
                    parts: vec![p.clone()],
                }
                .display(),
            ),
        }
    }
    out
}

/// The last line (1-based) of the YAML block whose key is on `line`: the lines below it
/// indented deeper than that key (`- post:` then `    url: /cart`), blank lines and
/// comments included; `line` itself when nothing is nested under it.
fn yaml_block_end(lines: &[&str], line: u32) -> u32 {
    let Some(first) = line.checked_sub(1).and_then(|i| lines.get(i as usize)) else {
        return line;
    };
    let key_col = first.len() - first.trim_start_matches([' ', '-']).len();
    let mut end = line;
    for (i, l) in lines.iter().enumerate().skip(line as usize) {
        let text = l.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        if l.len() - l.trim_start_matches(' ').len() <= key_col {
            break;
        }
        end = u32::try_from(i + 1).unwrap_or(u32::MAX);
    }
    end
}

/// The lines `lo..hi`, widened to the innermost function, method or constructor among
/// `symbols` (kind, first line, last line) that holds line `lo`.
fn around(symbols: &[(SymbolKind, u32, u32)], lo: u32, hi: u32) -> std::ops::Range<u32> {
    let f = symbols
        .iter()
        .filter(|&&(kind, line, end)| {
            matches!(
                kind,
                SymbolKind::Function | SymbolKind::Method | SymbolKind::Constructor
            ) && line <= lo
                && lo <= end
        })
        .min_by_key(|&&(_, line, end)| end - line);
    match f {
        Some(&(_, line, end)) => line.min(lo)..(end + 1).max(hi),
        None => lo..hi,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_reads_with_the_names_of_its_file_and_a_hunk_widens_to_its_function() {
        let field = Binding {
            name: "CatalogService.remoteServiceBaseUrl".into(),
            value: Value::lit("api/catalog/"),
            line: 9,
        };
        let mut uri = Value::reference("remoteServiceBaseUrl");
        uri.push(Part::Lit("items/".into()));
        uri.push(Part::Dynamic);
        let local = Binding {
            name: "uri".into(),
            value: uri,
            line: 13,
        };
        let call = Value::reference("uri");
        assert_eq!(
            local_display(&call, &[field.clone(), local.clone()], 0),
            "api/catalog/items/{}"
        );
        // An unbound name stays a name; a self-reference stops.
        assert_eq!(local_display(&Value::reference("base"), &[], 0), "{base}");
        let cycle = Binding {
            name: "a".into(),
            value: Value::reference("a"),
            line: 1,
        };
        assert_eq!(local_display(&Value::reference("a"), &[cycle], 0), "{a}");
        let symbols = [
            (SymbolKind::Class, 1, 40),
            (SymbolKind::Method, 11, 15),
            (SymbolKind::Field, 9, 9),
        ];
        assert_eq!(around(&symbols, 13, 14), 11..16);
        // Outside a function (a field line): the hunk as it is.
        assert_eq!(around(&symbols, 9, 10), 9..10);
    }

    #[test]
    fn a_yaml_step_spans_the_lines_nested_under_its_key() {
        let scenario = "scenarios:\n  - flow:\n      - post:\n          url: \"/cart\"\n\n          # the form\n          json: {}\n      - get:\n          url: \"/cart\"\n      - loop:\n          - get:\n              url: \"/x\"\n";
        let lines: Vec<&str> = scenario.lines().collect();
        assert_eq!(yaml_block_end(&lines, 3), 7);
        assert_eq!(yaml_block_end(&lines, 8), 9);
        assert_eq!(yaml_block_end(&lines, 11), 12);
        // The last line, or past the end: the line itself.
        assert_eq!(yaml_block_end(&lines, 12), 12);
        assert_eq!(yaml_block_end(&lines, 40), 40);
        assert_eq!(yaml_block_end(&lines, 0), 0);
    }
}
