//! Splitting the dependents of a bare name by the workspace declaration each one resolves to.

use std::collections::BTreeMap;

use super::imports::last_segment;
use super::resolve::Modules;
use super::rows::Row;
use crate::index::facts::{Language, SymbolKind};
use crate::index::modules::{import_path_keys, path_key};
use crate::index::snapshot::Snapshot;
use crate::render::inline_code;

/// How the rows of a bare name split by the declaration they depend on.
#[derive(Default)]
pub(super) struct Grouping {
    /// One heading per group, indexed by [`Row::group`]; empty when one group holds every row.
    pub(super) labels: Vec<String>,
    /// Imports of a same-named type that no workspace file declares (a library's, a
    /// framework's): not dependents of the workspace's declaration, so left out and named.
    pub(super) left_out: Vec<Row>,
}

impl Grouping {
    /// Drops the groups no row belongs to any more (their rows were left out) and renumbers
    /// the rest in order; fewer than two groups left means no headings at all.
    pub(super) fn keep_groups_of(&mut self, rows: &mut [Row]) {
        if self.labels.is_empty() {
            return;
        }
        let used: std::collections::BTreeSet<usize> = rows.iter().map(|r| r.group).collect();
        if used.len() == self.labels.len() {
            return;
        }
        if used.len() < 2 {
            self.labels.clear();
            rows.iter_mut().for_each(|r| r.group = 0);
            return;
        }
        let index: BTreeMap<usize, usize> = used.iter().enumerate().map(|(i, &g)| (g, i)).collect();
        self.labels = used
            .iter()
            .map(|&g| std::mem::take(&mut self.labels[g]))
            .collect();
        rows.iter_mut().for_each(|r| r.group = index[&r.group]);
    }

    pub(super) fn left_out_note(&self, snap: &Snapshot, include_tests: bool) -> String {
        let rows: Vec<&Row> = self
            .left_out
            .iter()
            // Imports are counted; the uses found through them are no more imports.
            .filter(|r| (include_tests || !r.test) && !r.call)
            .collect();
        if rows.is_empty() {
            return String::new();
        }
        let mut by_module: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
        for r in &rows {
            by_module.entry(r.module.as_str()).or_default().push(r);
        }
        let shown: Vec<String> = by_module
            .iter()
            .take(5)
            .map(|(m, rs)| {
                let first = rs
                    .iter()
                    .map(|r| (snap.display_path(&snap.files[r.file as usize]), r.site))
                    .min()
                    .unwrap_or_default();
                format!(
                    "{} ({} import(s), first at {})",
                    inline_code(m),
                    rs.len(),
                    crate::render::code_loc(&first.0, first.1)
                )
            })
            .collect();
        let more = by_module.len().saturating_sub(5);
        format!(
            "_Left out: {} import(s) of a same-named type that no workspace file declares (a library or framework type, not a declaration of this workspace): {}{}. Pass its full name as `target` to list them._\n",
            rows.len(),
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )
    }
}

/// Ties the import rows of a bare name (and the uses found through them) to the file declaring
/// it, when the import resolves to exactly one: by path, package name or Go import path, and
/// through re-exports (`import { formatMoney } from '@acme/shared'` whose index does `export *
/// from './money'`). [`group_by_declaration`] then follows the file instead of guessing from
/// the import string.
pub(super) fn resolve_origins(snap: &Snapshot, modules: &Modules, target: &str, rows: &mut [Row]) {
    let mut resolved: BTreeMap<(u32, String), Option<u32>> = BTreeMap::new();
    for r in rows
        .iter_mut()
        .filter(|r| r.origin.is_none() && !r.module.is_empty())
    {
        let origin = *resolved
            .entry((r.file, r.module.clone()))
            .or_insert_with(|| {
                let f = &snap.files[r.file as usize];
                let imp = f
                    .facts()
                    .imports
                    .iter()
                    .find(|i| i.module == r.module && i.names.iter().any(|n| n == target))?;
                let mut files: Vec<u32> = modules
                    .origins(r.file, &imp.module, target)
                    .into_iter()
                    .map(|(file, _)| file)
                    .collect();
                files.dedup();
                (files.len() == 1).then(|| files[0])
            });
        r.origin = origin;
    }
}

/// Splits the rows of a bare name (`Order`) by the workspace declaration each depends on: an
/// import resolves to one by its qualified name (`com.acme.orders.Order`, `from orders.models
/// import Order`) or its path (`./order`); a use without an import carries the declaration it
/// was found for. A JVM/C#/PHP import of that name from a package no workspace file declares is
/// a library type (Spring's `@Order`), moved to [`Grouping::left_out`]. Imports tied to no
/// declaration, and RPC calls, form groups of their own. Headings only when rows span two or
/// more groups.
pub(super) fn group_by_declaration(snap: &Snapshot, target: &str, rows: &mut Vec<Row>) -> Grouping {
    struct Decl {
        file: u32,
        line: u32,
        kind: &'static str,
        package: Option<String>,
        key: String,
        root: u16,
        path: String,
    }
    let mut grouping = Grouping::default();
    if target.is_empty()
        || !target
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return grouping;
    }
    let mut decls: Vec<Decl> = Vec::new();
    for (fi, f) in snap.files.iter().enumerate() {
        if f.is_test {
            continue;
        }
        let package = f.facts().package.clone();
        for sym in f.symbols() {
            let top = f
                .container(sym)
                .is_none_or(|c| package.as_deref() == Some(c));
            if !top
                || f.name(sym) != target
                || !matches!(
                    sym.kind,
                    SymbolKind::Service
                        | SymbolKind::Message
                        | SymbolKind::Interface
                        | SymbolKind::Trait
                        | SymbolKind::Class
                        | SymbolKind::Struct
                        | SymbolKind::Enum
                        | SymbolKind::TypeAlias
                        | SymbolKind::Function
                        | SymbolKind::Constant
                )
            {
                continue;
            }
            let path = snap.display_path(f);
            decls.push(Decl {
                file: fi as u32,
                line: sym.line,
                kind: sym.kind.name(),
                package: package.clone(),
                key: path_key(&path),
                root: f.root,
                path,
            });
        }
    }
    if decls.is_empty() {
        return grouping;
    }
    crate::order::sort_by(&mut decls, |a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    // Some(Ok(d)): declaration d; Some(Err(())): a library type; None: not tied to one.
    let assign = |r: &Row| -> Option<Result<usize, ()>> {
        if let Some(o) = r.origin {
            let d = decls.iter().position(|d| d.file == o);
            if d.is_some() || r.module.is_empty() {
                return d.map(Ok);
            }
        }
        if r.module.is_empty() {
            return None;
        }
        let f = &snap.files[r.file as usize];
        let names_it = last_segment(&r.module) == target
            || f.facts()
                .imports
                .iter()
                .any(|i| i.module == r.module && i.names.iter().any(|n| n == target));
        let python = f.lang == Language::Python;
        let keys = import_path_keys(&snap.display_path(f), &r.module, python);
        let dotted = r.module.replace('.', "/");
        let hit = decls.iter().position(|d| {
            d.package.as_deref().is_some_and(|p| {
                format!("{p}.{target}") == r.module
                    || format!("{p}\\{target}") == r.module
                    || (p == r.module && names_it)
            }) || keys.contains(&d.key)
                || (names_it && keys.iter().any(|k| d.key.starts_with(&format!("{k}/"))))
                || (python
                    && d.root == f.root
                    && !r.module.starts_with('.')
                    && (d.key == dotted || d.key.ends_with(&format!("/{dotted}"))))
        });
        if let Some(d) = hit {
            return Some(Ok(d));
        }
        let namespaced = matches!(
            f.lang,
            Language::Java | Language::Kotlin | Language::Scala | Language::CSharp | Language::Php
        );
        let foreign = !decls.iter().any(|d| {
            d.package.as_deref().is_some_and(|p| {
                r.module.starts_with(&format!("{p}.")) || r.module.starts_with(&format!("{p}\\"))
            })
        });
        (namespaced && names_it && r.module.contains(['.', '\\']) && foreign).then_some(Err(()))
    };
    let assigned: Vec<Option<Result<usize, ()>>> = rows.iter().map(assign).collect();
    let mut kept = Vec::with_capacity(rows.len());
    let mut slots: Vec<usize> = Vec::new();
    for (r, a) in std::mem::take(rows).into_iter().zip(assigned) {
        match a {
            Some(Err(())) => grouping.left_out.push(r),
            other => {
                // Slot: declaration d → d; an unresolved import → decls.len(); a call → +1.
                let slot = match other {
                    Some(Ok(d)) => d,
                    _ if !r.module.is_empty() => decls.len(),
                    _ => decls.len() + 1,
                };
                slots.push(slot);
                kept.push(r);
            }
        }
    }
    let used: std::collections::BTreeSet<usize> = slots.iter().copied().collect();
    if used.len() >= 2 {
        let index: BTreeMap<usize, usize> = used.iter().enumerate().map(|(i, &s)| (s, i)).collect();
        for (r, slot) in kept.iter_mut().zip(&slots) {
            r.group = index[slot];
        }
        grouping.labels = used
            .iter()
            .map(|&s| match decls.get(s) {
                Some(d) => format!(
                    "{} {} declared at {}",
                    d.kind,
                    inline_code(target),
                    crate::render::code_loc(&d.path, d.line)
                ),
                None if s == decls.len() => format!(
                    "Imports of a {} tied to no single workspace declaration",
                    inline_code(target)
                ),
                None => "Calls".to_string(),
            })
            .collect();
    }
    *rows = kept;
    grouping
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{on_disk, query};
    use serde_json::json;

    #[test]
    fn a_name_imported_from_a_package_that_reexports_it_is_one_declaration() {
        let (base, snap) = on_disk(
            "barrel-grouping",
            &[
                ("lib", "package.json", "{\"name\": \"@acme/shared\"}\n"),
                (
                    "lib",
                    "src/money.ts",
                    "export function formatMoney(c: number) {\n  return c;\n}\n",
                ),
                ("lib", "src/index.ts", "export * from './money';\n"),
                (
                    "lib",
                    "src/report.ts",
                    "import { formatMoney } from './money';\nexport const r = formatMoney(1);\n",
                ),
                (
                    "web",
                    "page.ts",
                    "import { formatMoney } from '@acme/shared';\nexport const p = formatMoney(2);\n",
                ),
                (
                    "pylib",
                    "moneylib/money.py",
                    "def to_cents(x):\n    return x\n",
                ),
                (
                    "pylib",
                    "moneylib/__init__.py",
                    "from .money import to_cents\n",
                ),
                (
                    "pylib",
                    "moneylib/report.py",
                    "from .money import to_cents\n\nR = to_cents(1)\n",
                ),
                (
                    "svc",
                    "app.py",
                    "from moneylib import to_cents\n\nA = to_cents(2)\n",
                ),
            ],
        );
        let ts = query(&snap, json!({"target": "formatMoney"}));
        let py = query(&snap, json!({"target": "to_cents"}));
        let _ = std::fs::remove_dir_all(&base);
        for (out, site) in [(&ts, "`web/page.ts:1`"), (&py, "`svc/app.py:1`")] {
            assert!(!out.text.contains("different things"), "{}", out.text);
            assert!(out.text.contains(site), "{}", out.text);
        }
    }
}
