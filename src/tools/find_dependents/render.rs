//! Rendering the listing: warnings, headings per group and root, one page of rows, the footer.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::Granularity;
use super::manifests::ManifestFacts;
use super::rows::{Row, SUB_PACKAGE};
use crate::index::snapshot::Snapshot;
use crate::render::inline_code;
use crate::tools::{ToolOutput, structured};

#[allow(clippy::too_many_arguments)]
pub(super) fn render(
    snap: &Snapshot,
    target: &str,
    granularity: Granularity,
    heuristic: bool,
    rows: Vec<Row>,
    tests_left_out: usize,
    limit: usize,
    offset: usize,
    groups: &[String],
    left_out_note: &str,
    manifest: &ManifestFacts,
) -> ToolOutput {
    let unit = match granularity {
        Granularity::Package => "dependent package(s)",
        _ => "dependent(s)",
    };
    let mut out = String::new();
    if heuristic && rows.iter().any(|r| r.confidence == SUB_PACKAGE) {
        out.push_str(&format!(
            "> ⚠ Nothing imports {} itself. The rows marked `{SUB_PACKAGE}` import packages below it (a package of its tree, not the package); the rows marked `heuristic`, if any, are import strings that only contain it.\n\n",
            inline_code(target)
        ));
    } else if heuristic && !rows.is_empty() {
        out.push_str(&format!(
            "> ⚠ Nothing imports {} exactly. The rows below are **heuristic**: import strings that only contain it. Check each before relying on it.\n\n",
            inline_code(target)
        ));
    }
    out.push_str(&format!("## Dependents of {}\n\n", inline_code(target)));
    let total = rows.len();
    if total == 0 {
        return render_none(
            snap,
            target,
            unit,
            tests_left_out,
            left_out_note,
            manifest,
            out,
        );
    }
    if offset >= total {
        out.push_str(&format!(
            "---\n_Nothing at offset {offset}: there are {total} {unit}; request an offset below {total}._\n"
        ));
        return ToolOutput::ok(out).with_data(structured::page(total, offset, None, vec![]));
    }
    let files: std::collections::BTreeSet<u32> = crate::order::set_of(rows.iter().map(|r| r.file));
    let roots: std::collections::BTreeSet<u16> = crate::order::set_of(rows.iter().map(|r| r.root));
    if !groups.is_empty() {
        out.push_str(&format!(
            "_{} names {} different things here: dependents are grouped by the one each import or use resolves to._\n\n",
            inline_code(target),
            groups.len()
        ));
    } else if roots.len() > 1 {
        out.push_str(&format!(
            "_Dependents in {} roots, grouped by root so same-named packages stay apart._\n\n",
            roots.len()
        ));
    }
    let page = render_page(snap, granularity, &rows, limit, offset, groups, &mut out);
    let shown = page.data_rows.len();
    out.push_str(&format!(
        "---\n_{total} {unit} in {} file(s); showing {}-{}.",
        files.len(),
        offset + 1,
        offset + shown
    ));
    if offset + shown < total {
        out.push_str(&format!(" More: `offset: {}`.", offset + shown));
    }
    out.push_str("_\n");
    if tests_left_out > 0 {
        out.push_str(&format!(
            "_{tests_left_out} more {unit} in test files left out (pass `include_tests: true`)._\n"
        ));
    }
    out.push_str(left_out_note);
    let manifest_rows = manifest_section(target, manifest, &mut out);
    out.push_str(&crate::tools::smart_search::rejected_note(
        snap,
        &crate::tools::Scope::everything(),
    ));
    let mut accessed = page.accessed;
    accessed.dedup();
    let data = structured::with(
        structured::page(total, offset, Some(offset + shown), page.data_rows),
        json!({"testsLeftOut": tests_left_out, "manifestDependents": manifest_rows}),
    );
    let mut result = ToolOutput::ok(out).with_data(data);
    result.files_accessed = accessed;
    result
}

/// The answer when nothing depends on the target: said with the index's size, so a 0 reads
/// as a real count, and with what was left out (tests, library types, rejected files).
fn render_none(
    snap: &Snapshot,
    target: &str,
    unit: &str,
    tests_left_out: usize,
    left_out_note: &str,
    manifest: &ManifestFacts,
    mut out: String,
) -> ToolOutput {
    let by_manifest = if manifest.dependents.is_empty() {
        ": 0 dependents".to_string()
    } else {
        format!(
            "; {} project manifest(s) declare a dependency on it (below)",
            manifest.dependents.len()
        )
    };
    out.push_str(&format!(
        "No source file imports or calls {} across the {} indexed root(s) ({} files, index generation {}){by_manifest}.\n",
        inline_code(target),
        snap.roots.len(),
        snap.files.len(),
        snap.generation
    ));
    if tests_left_out > 0 {
        out.push_str(&format!(
            "\n_{tests_left_out} {unit} in test files left out (pass `include_tests: true`)._\n"
        ));
    }
    if !left_out_note.is_empty() {
        out.push('\n');
        out.push_str(left_out_note);
    }
    if !manifest.dependents.is_empty() {
        out.push('\n');
    }
    let manifest_rows = manifest_section(target, manifest, &mut out);
    out.push_str(&crate::tools::smart_search::rejected_note(
        snap,
        &crate::tools::Scope::everything(),
    ));
    ToolOutput::ok(out).with_data(structured::with(
        structured::empty(),
        json!({"testsLeftOut": tests_left_out, "manifestDependents": manifest_rows}),
    ))
}

/// Most manifest dependencies listed; the rest are counted.
const MAX_MANIFEST_ROWS: usize = 50;

/// The projects whose manifests declare a dependency on the target (package.json, requirements,
/// pyproject, go.mod, pom), after the listing, with the manifest declaring the name when one
/// does; returns their structured rows. Nothing when no manifest depends on it.
fn manifest_section(target: &str, manifest: &ManifestFacts, out: &mut String) -> Vec<Value> {
    let mut data = Vec::new();
    if manifest.dependents.is_empty() {
        return data;
    }
    out.push_str(&format!(
        "### Declared as a dependency in {} project manifest(s)\n\n",
        manifest.dependents.len()
    ));
    if !manifest.declared_by.is_empty() {
        let decl: Vec<String> = manifest
            .declared_by
            .iter()
            .map(|(p, l)| crate::render::code_loc(p, l))
            .collect();
        out.push_str(&format!(
            "_{} is the name declared by {}._\n\n",
            inline_code(target),
            decl.join(", ")
        ));
    }
    for d in manifest.dependents.iter().take(MAX_MANIFEST_ROWS) {
        let via = format!("depends on {} ({})", d.dep, d.manifest);
        out.push_str(&format!(
            "- {} — {} (exact)\n",
            crate::render::code_loc(&d.path, d.line),
            crate::render::escape_inline(&via)
        ));
        data.push(structured::row(
            &d.path, d.line, "manifest", "", "exact", &via,
        ));
    }
    if manifest.dependents.len() > MAX_MANIFEST_ROWS {
        out.push_str(&format!(
            "- …and {} more\n",
            manifest.dependents.len() - MAX_MANIFEST_ROWS
        ));
    }
    out.push('\n');
    data
}

/// What one page of rows rendered: its structured rows and the files it showed.
struct Page {
    data_rows: Vec<Value>,
    accessed: Vec<String>,
}

/// Renders the rows `offset..offset + limit` into `out`, under a heading per (group and) root,
/// stopping before the output budget is spent.
fn render_page(
    snap: &Snapshot,
    granularity: Granularity,
    rows: &[Row],
    limit: usize,
    offset: usize,
    groups: &[String],
    out: &mut String,
) -> Page {
    let mut by_root: BTreeMap<(usize, u16), Vec<(usize, &Row)>> = BTreeMap::new();
    for (i, r) in rows.iter().skip(offset).take(limit).enumerate() {
        by_root
            .entry((r.group, r.root))
            .or_default()
            .push((offset + i + 1, r));
    }
    let mut group_shown = None;
    let users = crate::tools::visualize_mesh::library_users(snap);
    let budget = crate::render::MAX_OUTPUT_BYTES - 2048;
    let mut page = Page {
        data_rows: Vec::new(),
        accessed: Vec::new(),
    };
    'outer: for ((group, root), items) in &by_root {
        let label = &snap.roots[*root as usize].label;
        let count = rows
            .iter()
            .filter(|r| r.root == *root && r.group == *group)
            .count();
        let level = if let Some(heading) = groups.get(*group) {
            if group_shown != Some(*group) {
                let n = rows.iter().filter(|r| r.group == *group).count();
                out.push_str(&format!("### {heading} ({n} dependent(s))\n\n"));
                group_shown = Some(*group);
            }
            "####"
        } else {
            "###"
        };
        // A library's dependents depend for the services using it (as visualize_mesh and
        // analyze_impact attribute its lines).
        let used_by = match users.get(root) {
            Some(u) => format!(
                ", library used by {}",
                u.iter()
                    .map(|n| inline_code(n))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => String::new(),
        };
        out.push_str(&format!(
            "{level} {} ({count} match(es){used_by})\n\n",
            inline_code(label)
        ));
        for (n, r) in items {
            let f = &snap.files[r.file as usize];
            let path = snap.display_path(f);
            let shown;
            let r = if f.facts().package.is_none() && granularity == Granularity::Package {
                // No package statement (JS, Python, Go's is its directory): the package is
                // the directory, named from the workspace, not `.` of the service's root.
                shown = Row {
                    package: path.rsplit_once('/').map_or(".", |(d, _)| d).to_string(),
                    ..Row::clone(r)
                };
                &shown
            } else {
                r
            };
            let row = row_markdown(granularity, *n, r, &path);
            // Generated code (an SDK's own files importing each other) is named as such.
            let row = if f.generated {
                format!("{} — generated code\n", row.trim_end())
            } else {
                row
            };
            if out.len() + row.len() > budget {
                break 'outer;
            }
            out.push_str(&row);
            page.data_rows.push(row_data(granularity, r, &path));
            page.accessed.push(path);
        }
        out.push('\n');
    }
    page
}

/// One numbered Markdown row of the listing, in the requested unit.
fn row_markdown(granularity: Granularity, n: usize, r: &Row, path: &str) -> String {
    match granularity {
        Granularity::Package => format!(
            "{n}. package {} — first at {} — {} ({})\n",
            inline_code(&r.package),
            crate::render::code_loc(path, r.site),
            crate::render::escape_inline(&r.via),
            r.confidence
        ),
        Granularity::File => format!(
            "{n}. {} — {} ({})\n",
            crate::render::code_loc(path, r.site),
            crate::render::escape_inline(&r.via),
            r.confidence
        ),
        Granularity::Site => format!(
            "{n}. {} — {}{} ({})\n",
            crate::render::code_loc(path, r.site),
            crate::render::escape_inline(&r.via),
            if r.call && r.kind != "module" {
                format!(" in {} {}", r.kind, inline_code(&r.name))
            } else {
                String::new()
            },
            r.confidence
        ),
        Granularity::Symbol => format!(
            "{n}. {} {} — {} — {} at L{} ({})\n",
            r.kind,
            inline_code(&r.name),
            crate::render::code_loc(path, format!("{}-{}", r.line, r.end_line)),
            crate::render::escape_inline(&r.via),
            r.site,
            r.confidence
        ),
    }
}

/// The structured row of a listed row: package rows name the package, the others the
/// declaration that depends; a symbol row carries the site in its evidence.
fn row_data(granularity: Granularity, r: &Row, path: &str) -> Value {
    let name = match granularity {
        Granularity::Package => r.package.as_str(),
        Granularity::File => "",
        _ if r.kind == "module" => "",
        _ => &r.name,
    };
    let role = if r.call { "call" } else { "import" };
    let (line, mut via) = match granularity {
        Granularity::Symbol => (r.line, format!("{} at L{}", r.via, r.site)),
        _ => (r.site, r.via.clone()),
    };
    // The structured confidence keeps its three values; the via says what kind of guess.
    let confidence = if r.confidence == SUB_PACKAGE {
        via.insert_str(0, "sub-package import ");
        "heuristic"
    } else {
        r.confidence
    };
    structured::row(path, line, role, name, confidence, &via)
}
