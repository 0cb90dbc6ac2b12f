//! The dependent row, and how one is made from an importing file or from a line that uses the target.

use crate::index::facts::{Language, SymbolKind};
use crate::index::snapshot::FileEntry;

/// One dependent row before grouping.
#[derive(Clone)]
pub(super) struct Row {
    pub(super) root: u16,
    pub(super) file: u32,
    pub(super) name: String,
    pub(super) kind: &'static str,
    pub(super) line: u32,
    pub(super) end_line: u32,
    pub(super) package: String,
    pub(super) via: String,
    pub(super) test: bool,
    /// The line of the import (or call) that makes this a dependent.
    pub(super) site: u32,
    /// `exact` for a matching import or call, `heuristic` for the substring fallback.
    pub(super) confidence: &'static str,
    /// A using site (a call), not an import: `name` is the declaration that makes the call.
    pub(super) call: bool,
    /// The import string of an import row (empty for calls and uses).
    pub(super) module: String,
    /// For a use found without an import: the file declaring the name it uses.
    pub(super) origin: Option<u32>,
    /// The declaration group of the row (see
    /// [`group_by_declaration`](super::grouping::group_by_declaration)); 0 when ungrouped.
    pub(super) group: usize,
}

/// The Markdown label of a row that imports a package below the target
/// ([`ImportMatch::SubPackage`](super::imports::ImportMatch::SubPackage)).
pub(super) const SUB_PACKAGE: &str = "sub-package";

/// The package a dependent belongs to: the declared one, else its directory.
pub(super) fn package_of(f: &FileEntry) -> String {
    f.facts().package.clone().unwrap_or_else(|| {
        f.path
            .rsplit_once('/')
            .map_or(".".to_string(), |(d, _)| d.to_string())
    })
}

/// A declaration at the top level of its file: in no container, or a Go method (declared
/// outside its receiver type).
fn is_top_level(f: &FileEntry, s: &crate::index::snapshot::SymbolEntry) -> bool {
    f.container(s).is_none() || (f.lang == Language::Go && s.kind == SymbolKind::Method)
}

/// The dependent declarations of a file that imports the target at `line`: its top-level
/// declarations (a file with none, like a barrel, counts as one module row).
pub(super) fn push_rows(
    rows: &mut Vec<Row>,
    f: &FileEntry,
    file: u32,
    line: u32,
    via: &str,
    reexport: bool,
    confidence: &'static str,
) {
    let package = package_of(f);
    let module = via.to_string();
    let via = if reexport {
        format!("re-exports {via}")
    } else {
        via.to_string()
    };
    let top: Vec<_> = f
        .symbols()
        .iter()
        .filter(|s| is_top_level(f, s) && !matches!(s.kind, SymbolKind::Module))
        .collect();
    if top.is_empty() {
        rows.push(Row {
            root: f.root,
            file,
            name: f.path.rsplit('/').next().unwrap_or(&f.path).to_string(),
            kind: "module",
            line,
            end_line: line,
            package,
            via,
            test: f.is_test,
            site: line,
            confidence,
            call: false,
            module,
            origin: None,
            group: 0,
        });
        return;
    }
    for s in top {
        rows.push(Row {
            root: f.root,
            file,
            name: f.name(s).to_string(),
            kind: s.kind.name(),
            line: s.line,
            end_line: s.end_line,
            package: package.clone(),
            via: via.clone(),
            test: f.is_test,
            site: line,
            confidence,
            call: false,
            module: module.clone(),
            origin: None,
            group: 0,
        });
    }
}

/// The dependent of a call: the top-level declaration enclosing the call line (a call is made
/// by one function or class, not by every declaration of its file), else the file as a module.
pub(super) fn push_call_row(
    rows: &mut Vec<Row>,
    f: &FileEntry,
    file: u32,
    line: u32,
    via: &str,
    confidence: &'static str,
) {
    let enclosing = f
        .symbols()
        .iter()
        .filter(|s| is_top_level(f, s) && !matches!(s.kind, SymbolKind::Module))
        .filter(|s| s.line <= line && line <= s.end_line)
        .max_by_key(|s| s.line);
    let (name, kind, start, end) = match enclosing {
        Some(s) => (f.name(s).to_string(), s.kind.name(), s.line, s.end_line),
        None => (
            f.path.rsplit('/').next().unwrap_or(&f.path).to_string(),
            "module",
            line,
            line,
        ),
    };
    rows.push(Row {
        root: f.root,
        file,
        name,
        kind,
        line: start,
        end_line: end,
        package: package_of(f),
        via: via.to_string(),
        test: f.is_test,
        site: line,
        confidence,
        call: true,
        module: String::new(),
        origin: None,
        group: 0,
    });
}
