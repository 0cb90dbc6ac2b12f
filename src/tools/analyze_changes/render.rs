//! Rendering a [`Report`]: Markdown for the tool and `mesh-mcp impact`, JSON for `--json`.

use super::super::analyze_impact;
use super::{Affected, ChangedFile, ContractChange, FileClass, Report, Risk};
use crate::render::{inline_code, table_cell};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Free text in a table cell: escaped like inline text, `|` escaped.
fn prose_cell(s: &str) -> String {
    crate::render::escape_inline(s).replace('|', "\\|")
}

/// The text up to its first `; ` outside brackets and backticks (a `; ` inside "(the contract is
/// unchanged; behaviour may differ)" is not a clause end). Longer than 160 bytes, it is cut at
/// the last blank outside brackets and backticks before that, with `…`: never an unclosed `(`.
pub(super) fn first_clause(s: &str) -> String {
    let mut depth = 0i32;
    let mut code = false;
    let mut end = s.len();
    // The last blank (outside brackets and code) within the first 160 bytes.
    let mut last_blank = None;
    for (i, c) in s.char_indices() {
        match c {
            '`' => code = !code,
            '(' | '[' if !code => depth += 1,
            ')' | ']' if !code => depth -= 1,
            ';' if !code && depth <= 0 && s[i + 1..].starts_with(' ') => {
                end = i;
                break;
            }
            ' ' if !code && depth <= 0 && i <= 160 => last_blank = Some(i),
            _ => {}
        }
    }
    if end <= 160 {
        return s[..end].to_string();
    }
    match last_blank {
        Some(i) if i > 0 => format!("{}…", s[..i].trim_end_matches([',', ':'])),
        _ => {
            let mut i = 160;
            while !s.is_char_boundary(i) {
                i -= 1;
            }
            format!("{}…", &s[..i])
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------------

/// The Markdown answer (the affected rows paged by `limit`/`offset`), within `budget` bytes.
pub fn render_markdown(
    report: &Report,
    limit: usize,
    offset: usize,
    budget: usize,
) -> (String, Vec<String>) {
    render_markdown_rows(report, limit, offset, budget, &mut Vec::new())
}

/// [`render_markdown`], also pushing the affected rows it shows as structured rows (one per
/// table row, the same page) onto `data`.
pub(super) fn render_markdown_rows(
    report: &Report,
    limit: usize,
    offset: usize,
    budget: usize,
    data: &mut Vec<Value>,
) -> (String, Vec<String>) {
    let mut out = String::from("## Changes and their impact\n\n");
    for b in &report.bases {
        out.push_str(&format!("- {b}\n"));
    }
    if report.files.is_empty() {
        out.push_str("\n_No changes: the working tree matches the base._\n");
        return (out, Vec::new());
    }
    summary(report, &mut out);
    // The affected rows, paged.
    let rows: Vec<(usize, &ContractChange, &Affected)> = report
        .contracts
        .iter()
        .enumerate()
        .flat_map(|(i, c)| c.affected.iter().map(move |a| (i + 1, c, a)))
        .collect();
    let mut files: Vec<String> = report.files.iter().map(|f| f.display.clone()).collect();
    let mut tail = tail_sections(report);

    out.push_str("\n### Affected elements\n\n");
    if rows.is_empty() {
        out.push_str("_No caller, consumer or importer is linked to the touched contracts._\n");
    } else if offset >= rows.len() {
        out.push_str(&format!(
            "_No rows at offset {offset}: there are {} rows; request an offset below {}._\n",
            rows.len(),
            rows.len()
        ));
    } else {
        out.push_str("| # | Contract | Risk | Service | Scope | Role | Element | Location | Confidence |\n|---|---|---|---|---|---|---|---|---|\n");
        let room = budget.saturating_sub(out.len() + tail.len().min(budget / 3) + 400);
        let mut shown = 0;
        let mut used = 0;
        for (n, (ci, c, a)) in rows.iter().enumerate().skip(offset).take(limit) {
            let line = format!(
                "| {} | {ci}. {} | {} | {} | {} | {} | {} | {} | {} |\n",
                n + 1,
                table_cell(&c.name),
                c.risk.label(),
                table_cell(&a.service),
                if a.external { "EXTERNAL" } else { "INTERNAL" },
                a.role,
                table_cell(&a.element),
                table_cell(&a.location),
                a.confidence
            );
            if used + line.len() > room {
                break;
            }
            used += line.len();
            out.push_str(&line);
            let (path, at) = match a.location.rsplit_once(':') {
                Some((p, l)) if l.parse::<u32>().is_ok() => (p, l.parse().unwrap_or(0)),
                _ => (a.location.as_str(), 0),
            };
            data.push(analyze_impact::scoped_row(
                path,
                at,
                &a.role,
                &a.element,
                a.confidence,
                &format!("{} {} {}: {}", c.risk.key(), c.kind, c.name, c.change),
                Some(a.external),
            ));
            files.push(
                a.location
                    .rsplit_once(':')
                    .map_or(a.location.clone(), |(p, _)| p.to_string()),
            );
            shown += 1;
        }
        let next = offset + shown;
        if next < rows.len() {
            out.push_str(&format!(
                "\n_Rows {}–{next} of {}. Next page: analyze_changes(offset: {next})._\n",
                offset + 1,
                rows.len()
            ));
        } else {
            out.push_str(&format!("\n_{} row(s)._\n", rows.len()));
        }
    }
    let room = budget.saturating_sub(out.len());
    if tail.len() > room {
        let mut cut = room.saturating_sub(120);
        while cut > 0 && !tail.is_char_boundary(cut) {
            cut -= 1;
        }
        tail.truncate(cut);
        tail.push_str(
            "\n_…cut to stay within the answer cap; page the rows or narrow the base._\n",
        );
    }
    out.push_str(&tail);
    crate::order::sort(&mut files);
    files.dedup();
    (out, files)
}

/// The head of the answer after the bases: files changed by class, the verdict, the risk per
/// service and the contracts touched (at most 60).
fn summary(report: &Report, out: &mut String) {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &report.files {
        *counts.entry(f.class.label()).or_default() += 1;
    }
    out.push_str(&format!(
        "- **Files changed**: {} ({})\n",
        report.files.len(),
        counts
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    out.push_str(&format!(
        "- **Verdict**: {}\n\n",
        if report.breaking() {
            "**BREAKING** — a contract change breaks its users (rows below)"
        } else if report.contracts.is_empty() {
            "no contract touched"
        } else {
            "no breaking contract change"
        }
    ));
    out.push_str("### Risk by service\n\n| Service | Risk | Why |\n|---|---|---|\n");
    for (name, (risk, why)) in services_by_risk(report) {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            table_cell(name),
            risk.label(),
            prose_cell(why)
        ));
    }
    out.push_str("\n### Contracts touched\n\n");
    if report.contracts.is_empty() {
        out.push_str(
            "_None: no .proto RPC or message, HTTP route, topic or imported package is linked to the changed lines._\n",
        );
    }
    for (i, c) in report.contracts.iter().enumerate().take(60) {
        let ext = c.affected.iter().filter(|a| a.external).count();
        out.push_str(&format!(
            "{}. **{}** {} {} {} — {} _({} affected, {ext} in other services)_\n",
            i + 1,
            c.risk.label(),
            c.kind,
            inline_code(&c.name),
            if c.location.is_empty() {
                String::new()
            } else {
                format!("at {}", inline_code(&c.location))
            },
            crate::render::escape_inline(&c.change),
            c.affected.len()
        ));
    }
    if report.contracts.len() > 60 {
        out.push_str(&format!(
            "- …and {} more contract(s).\n",
            report.contracts.len() - 60
        ));
    }
}

/// The sections after the affected table: the changed declarations (at most 80), the files that
/// do not raise the risk (at most 40), what could not be resolved (at most 20) and a closing
/// note on payload types.
fn tail_sections(report: &Report) -> String {
    let mut tail = String::new();
    // Declarations and notes after the table, bounded.
    tail.push_str("\n### Changed declarations\n\n");
    let mut shown_decls = 0;
    for d in report.decls.iter().take(80) {
        tail.push_str(&format!(
            "- {} `{}` {} ({}) — {}\n",
            d.kind,
            d.name.replace('`', "'"),
            inline_code(&format!("{}:{}-{}", d.display, d.line, d.end_line)),
            d.class.label(),
            d.how
        ));
        shown_decls += 1;
    }
    if report.decls.is_empty() {
        tail.push_str("_No indexed declaration overlaps the changed lines._\n");
    } else if report.decls.len() > shown_decls {
        tail.push_str(&format!(
            "- …and {} more declaration(s).\n",
            report.decls.len() - shown_decls
        ));
    }
    let non_code: Vec<&ChangedFile> = report
        .files
        .iter()
        .filter(|f| f.class != FileClass::Code)
        .collect();
    if !non_code.is_empty() {
        tail.push_str("\n### Tests, docs, generated and other files (do not raise the risk)\n\n");
        for f in non_code.iter().take(40) {
            tail.push_str(&format!(
                "- {} ({}, {})\n",
                inline_code(&f.display),
                f.class.label(),
                f.status
            ));
        }
        if non_code.len() > 40 {
            tail.push_str(&format!("- …and {} more.\n", non_code.len() - 40));
        }
    }
    let unresolved: Vec<String> = report
        .unresolved
        .iter()
        .cloned()
        .chain(
            report
                .files
                .iter()
                .filter(|f| f.class == FileClass::Code && f.file.is_none() && f.status != "deleted")
                .map(|f| {
                    format!(
                        "{} is not in the index (excluded, rejected or new since the last reload)",
                        inline_code(&f.display)
                    )
                }),
        )
        .collect();
    if !unresolved.is_empty() {
        tail.push_str("\n### Not resolvable\n\n");
        for u in unresolved.iter().take(20) {
            tail.push_str(&format!("- {u}\n"));
        }
    }
    tail.push_str("\n_A topic's payload type is linked when a producer or consumer names the changed type at its site or in the signature of the function around it (heuristic); a payload passed in under another name is not seen._\n");
    tail
}

/// The services, riskiest first (then by name): the order of the Markdown table and the JSON.
pub(super) fn services_by_risk(report: &Report) -> Vec<(&String, &(Risk, String))> {
    let mut svc: Vec<(&String, &(Risk, String))> = report.services.iter().collect();
    crate::order::sort_by_cached_key(&mut svc, |(n, (r, _))| {
        (std::cmp::Reverse(*r), (*n).clone())
    });
    svc
}

/// The report as JSON, for machines (`mesh-mcp impact --format json`).
pub fn to_json(report: &Report) -> Value {
    json!({
        "breaking": report.breaking(),
        "bases": report.bases,
        "files": report.files.iter().map(|f| json!({
            "path": f.display,
            "status": f.status,
            "class": f.class.label(),
            "service": f.service,
            "ranges": f.ranges.iter().map(|(a, b)| json!([a, b])).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "declarations": report.decls.iter().map(|d| json!({
            "path": d.display,
            "name": d.name,
            "kind": d.kind,
            "line": d.line,
            "end_line": d.end_line,
            "class": d.class.label(),
            "how": d.how,
        })).collect::<Vec<_>>(),
        "contracts": report.contracts.iter().map(|c| json!({
            "kind": c.kind,
            "name": c.name,
            "location": c.location,
            "change": c.change,
            "risk": c.risk.key(),
            "owner": c.owner,
            "affected": c.affected.iter().map(|a| json!({
                "service": a.service,
                "scope": if a.external { "EXTERNAL" } else { "INTERNAL" },
                "role": a.role,
                "element": a.element,
                "location": a.location,
                "confidence": a.confidence,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "services": services_by_risk(report).into_iter().map(|(s, (r, why))| json!({
            "service": s,
            "risk": r.key(),
            "why": why,
        })).collect::<Vec<_>>(),
        "unresolved": report.unresolved,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_clause_keeps_its_brackets_closed() {
        assert_eq!(
            first_clause(
                "handler body changed: `a` (x:1) (the contract is unchanged; behaviour may differ); 2 more"
            ),
            "handler body changed: `a` (x:1) (the contract is unchanged; behaviour may differ)"
        );
        assert_eq!(
            first_clause("RPC deleted; no live caller found"),
            "RPC deleted"
        );
        assert_eq!(first_clause("`a; b` changed"), "`a; b` changed");
        let long = format!("{}(a b c) `x y` z", "word ".repeat(30));
        assert_eq!(
            first_clause(&long),
            format!("{}(a b c)…", "word ".repeat(30))
        );
        let long = format!("{} (a b c {}) z", "w".repeat(100), "v ".repeat(40));
        assert_eq!(first_clause(&long), format!("{}…", "w".repeat(100)));
    }
}
