//! `find_dependents`: who imports or uses a package, module, type, function or RPC, grouped by
//! root.
//!
//! Exact matches first (the import string, a subpath of it, an imported name, the last
//! segment of a qualified import, or a call of the RPC); only when nothing matches exactly, a
//! clearly labelled heuristic listing of import strings that merely contain the target. Test
//! files are left out by default and counted in the listing's unit.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolDef, ToolEnv, ToolOutput, object_schema, structured};
use crate::index::facts::{Import, Language, SymbolKind, is_razor};
use crate::index::modules::{import_path_keys, path_key};
use crate::index::snapshot::{FileEntry, Snapshot};
use crate::render::inline_code;

/// The tool definition.
pub static TOOL: ToolDef = ToolDef {
    name: "find_dependents",
    title: "Find dependents",
    description: "Lists who depends on a package, module, type, function or RPC across every root: files \
that import it (or a subpath of it, or import the name), re-export it, or call the RPC, grouped \
by root, each with path:line. Use it for 'who uses X' and 'what breaks if X changes its API'; \
for where X is declared use smart_search, for an RPC's servers and clients use analyze_grpc. \
Example: {\"target\": \"@acme/domain-user\", \"granularity\": \"file\"}.",
    input_schema: || {
        object_schema(
            json!({
                "target": {"type": "string", "description": "A package or module (\"github.com/acme/orders/pb\", \"@acme/domain-user\", \"com.acme.orders\"), a type (\"OrderService\") or an RPC (\"OrderService.CreateOrder\")."},
                "granularity": {"type": "string", "enum": ["site", "symbol", "file", "package"], "description": "One row per import line and using site (\"site\", default), per top-level declaration of an importing file (\"symbol\"), per file (\"file\") or per package (\"package\")."},
                "include_tests": {"type": "boolean", "description": "Also list test files (default false), e.g. true."},
                "limit": super::int_schema("Rows per page, e.g. 100.", 50, 1, 200),
                "offset": super::int_schema("Rows to skip, from the previous footer, e.g. 50.", 0, 0, super::MAX_OFFSET)
            }),
            &["target"],
        )
    },
    output_schema: Some(super::structured::Shape {
        paged: true,
        extra: super::structured::TESTS_LEFT_OUT,
        row: "{}",
    }),
    run,
    truncation_hint: |args| {
        format!(
            "Page with a smaller `limit`, or ask for granularity \"file\" or \"package\": find_dependents(target: \"{}\", granularity: \"package\").",
            super::text_arg(args, "target")
        )
    },
    index: super::IndexUse::Required,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    target: String,
    granularity: Option<String>,
    include_tests: Option<bool>,
    limit: Option<i64>,
    offset: Option<i64>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Granularity {
    /// One row per import line and per using site (the default): where the dependency is.
    Site,
    Symbol,
    File,
    Package,
}

/// Node, Python, Go and Java standard-library module names: an import of one of these is the
/// importer's own runtime, so it only links to a workspace module of the same name inside the
/// importer's own root.
const BUILTINS: &[&str] = &[
    "fs",
    "path",
    "os",
    "http",
    "https",
    "url",
    "util",
    "events",
    "stream",
    "crypto",
    "child_process",
    "net",
    "assert",
    "buffer",
    "zlib",
    "readline",
    "process",
    "sys",
    "json",
    "re",
    "time",
    "typing",
    "logging",
    "collections",
    "asyncio",
    "dataclasses",
    "datetime",
    "fmt",
    "context",
    "strings",
    "errors",
    "io",
    "log",
    "sync",
    "java.util",
    "java.io",
    "java.time",
];

fn is_builtin(module: &str) -> bool {
    module.starts_with("node:") || BUILTINS.contains(&module)
}

/// One dependent row before grouping.
#[derive(Clone)]
struct Row {
    root: u16,
    file: u32,
    name: String,
    kind: &'static str,
    line: u32,
    end_line: u32,
    package: String,
    via: String,
    test: bool,
    /// The line of the import (or call) that makes this a dependent.
    site: u32,
    /// `exact` for a matching import or call, `heuristic` for the substring fallback.
    confidence: &'static str,
    /// A using site (a call), not an import: `name` is the declaration that makes the call.
    call: bool,
    /// The import string of an import row (empty for calls and uses).
    module: String,
    /// For a use found without an import: the file declaring the name it uses.
    origin: Option<u32>,
    /// The declaration group of the row (see [`group_by_declaration`]); 0 when ungrouped.
    group: usize,
}

/// The Markdown label of a row that imports a package below the target ([`ImportMatch::SubPackage`]).
const SUB_PACKAGE: &str = "sub-package";

fn last_segment(module: &str) -> &str {
    module
        .rsplit(['/', '.', ':', '\\'])
        .find(|s| !s.is_empty())
        .unwrap_or(module)
}

/// How an import matches the target, when it does (see [`import_match`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ImportMatch {
    /// The import names the target (the module, a member, a subpath, the last segment).
    Exact,
    /// Dotted-namespace languages: the import is of a package below the target
    /// (`org.apache.http.client.Foo` for `org.apache.http`), a different package of its tree.
    SubPackage,
    /// The import string merely contains the target.
    Contains,
}

/// How an import matches the target, or `None`. In the dotted-namespace languages (JVM, C#,
/// PHP) `pkg.Type` is the package and `pkg.sub.Type` a different package: a subpackage import
/// is told apart from an import of the target itself.
fn import_match(imp: &Import, target: &str, lang: Language) -> Option<ImportMatch> {
    let module = imp.module.as_str();
    let sub = |sep: &str| module.starts_with(&format!("{target}{sep}"));
    let namespaced = matches!(
        lang,
        Language::Java | Language::Kotlin | Language::Scala | Language::CSharp | Language::Php
    );
    let dotted_member = || {
        let rest = module
            .strip_prefix(target)
            .and_then(|r| r.strip_prefix('.').or_else(|| r.strip_prefix('\\')));
        match rest {
            // C# `using A.B.C;` imports namespace A.B.C, never A.B (an alias names a type).
            Some(_) if lang == Language::CSharp => imp.alias.is_some(),
            Some(r) if namespaced => {
                r == "*" || r.starts_with(|c: char| c.is_ascii_uppercase()) || r == "_"
            }
            Some(_) => true,
            None => false,
        }
    };
    let exact = module == target
        || imp.names.iter().any(|n| format!("{module}.{n}") == target)
        || sub("/")
        || dotted_member()
        || sub("::")
        || imp.names.iter().any(|n| n == target)
        || last_segment(module) == target
        || module
            .trim_end_matches(".proto")
            .ends_with(&format!("/{target}"))
        || module.ends_with(&format!("/{target}"));
    if exact {
        return Some(ImportMatch::Exact);
    }
    if namespaced && (sub(".") || sub("\\")) {
        return Some(ImportMatch::SubPackage);
    }
    (target.len() >= 3 && module.to_lowercase().contains(&target.to_lowercase()))
        .then_some(ImportMatch::Contains)
}

/// True when `target` is spelled as a filesystem path rather than a name: absolute (`/`, a
/// drive letter), home-relative (`~`), or with a `..` segment. Module strings never climb out
/// of the workspace root, so such a target is a path to check against the jail. A leading `\`
/// is not a path: it is a fully qualified PHP name (`\Acme\Orders\OrderService`).
pub(super) fn looks_like_fs_path(target: &str) -> bool {
    let b = target.as_bytes();
    target.starts_with(['/', '~'])
        || (b.len() >= 3
            && b[0].is_ascii_alphabetic()
            && b[1] == b':'
            && matches!(b[2], b'/' | b'\\'))
        || target.split(['/', '\\']).any(|s| s == "..")
}

/// Files (by index) that a path target names: the file itself, or every file under a
/// directory; matched by workspace path with or without the extension.
fn path_target_files(snap: &Snapshot, target: &str) -> Vec<u32> {
    let t = target.trim_start_matches("./").trim_end_matches('/');
    if !t.contains('/') && !t.contains('.') {
        return Vec::new();
    }
    let prefix = format!("{t}/");
    (0..snap.files.len() as u32)
        .filter(|&i| {
            let p = snap.display_path(&snap.files[i as usize]);
            p == t || path_key(&p) == t || p.starts_with(&prefix)
        })
        .collect()
}

fn run(args: &Value, env: &ToolEnv) -> ToolOutput {
    if let Err(e) = super::smart_search::whole_number_args(
        "find_dependents",
        args,
        &[("limit", 50, 1, 200), ("offset", 0, 0, super::MAX_OFFSET)],
    ) {
        return e;
    }
    let (args, snap): (Args, _) = match super::decode_indexed("find_dependents", args, env) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let granularity = match parse_granularity(args.granularity.as_deref()) {
        Ok(g) => g,
        Err(e) => return e,
    };
    if let Err(e) =
        super::smart_search::check_text_len("find_dependents", "target", Some(&args.target))
    {
        return e;
    }
    let target = args.target.trim();
    if target.is_empty() {
        return ToolOutput::error("Invalid arguments for find_dependents: `target` is empty. Pass a package, module, type or RPC, e.g. {\"target\": \"OrderService\"}.".into());
    }
    let relative = match workspace_target(env, target) {
        Ok(r) => r,
        Err(e) => return e,
    };
    let target = relative.as_deref().unwrap_or(target);
    let include_tests = args.include_tests.unwrap_or(false);
    let (limit, offset) =
        match super::page_args("find_dependents", args.limit, 50, 200, args.offset) {
            Ok(p) => p,
            Err(e) => return e,
        };

    let (mut rows, heuristic) = collect(snap, target);
    if is_builtin(target) {
        keep_declaring_roots(snap, target, &mut rows);
    }
    // A bare type name may mean several declarations, or a library type of the same name.
    let mut grouping = if heuristic {
        Grouping::default()
    } else {
        group_by_declaration(snap, target, &mut rows)
    };
    fold_to(granularity, &mut rows);
    let tests_left_out = if include_tests {
        0
    } else {
        rows.iter().filter(|r| r.test).count()
    };
    if !include_tests {
        rows.retain(|r| !r.test);
        // A declaration whose every dependent is a test file has no group left: the heading
        // count ("names N different things") must match the headings shown.
        grouping.keep_groups_of(&mut rows);
    }
    sort_rows(snap, &mut rows);
    let left_out_note = grouping.left_out_note(snap, include_tests);
    render(
        snap,
        target,
        granularity,
        heuristic,
        rows,
        tests_left_out,
        limit,
        offset,
        &grouping.labels,
        &left_out_note,
    )
}

/// The `granularity` argument (default `site`); the error lists the values.
fn parse_granularity(raw: Option<&str>) -> Result<Granularity, ToolOutput> {
    match raw.unwrap_or("site") {
        "site" => Ok(Granularity::Site),
        "symbol" => Ok(Granularity::Symbol),
        "file" => Ok(Granularity::File),
        "package" => Ok(Granularity::Package),
        other => Err(ToolOutput::error(format!(
            "Invalid granularity '{}': expected 'site', 'symbol', 'file' or 'package'.",
            crate::protocol::echo_input(other)
        ))),
    }
}

/// A filesystem path (absolute, `~`, or climbing with `..`) is only a target when it lies
/// inside the workspace, and then as its workspace-relative spelling (`Some`); anything else
/// would be matched as a name and answer a misleading "0 dependents". `None`: use as given.
fn workspace_target(env: &ToolEnv, target: &str) -> Result<Option<String>, ToolOutput> {
    if !looks_like_fs_path(target) {
        return Ok(None);
    }
    match env.shared.jail.resolve(target) {
        Ok(r) => {
            let relative = r
                .path
                .strip_prefix(env.shared.jail.base())
                .map(|p| p.to_string_lossy().replace('\\', "/"))
                .unwrap_or_default();
            Ok((!relative.is_empty()).then_some(relative))
        }
        Err(e) => Err(ToolOutput::error(format!(
            "Invalid target for find_dependents: {} is a filesystem path, not a package, module, type or RPC name, and {e}. Pass a name as code imports or declares it (e.g. `@acme/domain-user`, `com.acme.orders`, `OrderService`, `OrderService.CreateOrder`), or a file or directory inside the workspace, relative to its root (e.g. `services/orders/src/models.ts`).",
            inline_code(&target.escape_debug().to_string())
        ))),
    }
}

/// A built-in module links only inside the importer's own root: when the workspace declares a
/// module of that name, importers elsewhere mean their runtime's copy and are dropped.
fn keep_declaring_roots(snap: &Snapshot, target: &str, rows: &mut Vec<Row>) {
    let declaring_roots: Vec<u16> = snap
        .files
        .iter()
        .filter(|f| {
            f.symbols()
                .iter()
                .any(|s| s.kind == SymbolKind::Module && f.name(s) == target)
        })
        .map(|f| f.root)
        .collect();
    if !declaring_roots.is_empty() {
        rows.retain(|r| declaring_roots.contains(&r.root));
    }
}

/// Folds the rows to the requested unit: the first row of each site, symbol, file or package
/// (per test-ness and group) stays.
fn fold_to(granularity: Granularity, rows: &mut Vec<Row>) {
    if granularity == Granularity::Symbol {
        keep_declarations_that_use(rows);
    }
    let mut seen = std::collections::HashSet::new();
    rows.retain(|r| {
        let key = match granularity {
            Granularity::Site => format!("{}:{}", r.file, r.site),
            // The uses outside any declaration fold into the file's one module row.
            Granularity::Symbol if r.kind == "module" => format!("{}", r.file),
            Granularity::Symbol => format!("{}:{}:{}", r.file, r.line, r.name),
            Granularity::File => format!("{}", r.file),
            Granularity::Package => format!("{}:{}", r.root, r.package),
        };
        seen.insert((r.test, r.group, key))
    });
}

/// Symbol rows: an import makes every top-level declaration of its file a row; where the
/// file's uses were found (use and call rows), only the declarations holding one stay, so a
/// helper that never touches the import is not listed as depending on it. A file whose uses
/// could not be scanned keeps every declaration.
fn keep_declarations_that_use(rows: &mut Vec<Row>) {
    let using: std::collections::HashSet<(u32, u32, String)> = rows
        .iter()
        .filter(|r| r.call)
        .map(|r| (r.file, r.line, r.name.clone()))
        .collect();
    let scanned: std::collections::HashSet<u32> = using.iter().map(|u| u.0).collect();
    rows.retain(|r| {
        r.call || !scanned.contains(&r.file) || using.contains(&(r.file, r.line, r.name.clone()))
    });
}

/// The listing order: by group and root, exact rows first, then heuristic, then ambiguous;
/// then by path, line and name.
fn sort_rows(snap: &Snapshot, rows: &mut [Row]) {
    let rank = |c: &str| match c {
        "exact" => 0,
        SUB_PACKAGE => 1,
        "heuristic" => 2,
        _ => 3,
    };
    crate::order::sort_by(rows, |a, b| {
        (
            a.group,
            a.root,
            rank(a.confidence),
            snap.files[a.file as usize].path.as_ref(),
            a.line,
            &a.name,
        )
            .cmp(&(
                b.group,
                b.root,
                rank(b.confidence),
                snap.files[b.file as usize].path.as_ref(),
                b.line,
                &b.name,
            ))
    });
}

/// How the rows of a bare name split by the declaration they depend on.
#[derive(Default)]
struct Grouping {
    /// One heading per group, indexed by [`Row::group`]; empty when one group holds every row.
    labels: Vec<String>,
    /// Imports of a same-named type that no workspace file declares (a library's, a
    /// framework's): not dependents of the workspace's declaration, so left out and named.
    left_out: Vec<Row>,
}

impl Grouping {
    /// Drops the groups no row belongs to any more (their rows were left out) and renumbers
    /// the rest in order; fewer than two groups left means no headings at all.
    fn keep_groups_of(&mut self, rows: &mut [Row]) {
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

    fn left_out_note(&self, snap: &Snapshot, include_tests: bool) -> String {
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

/// Splits the rows of a bare name (`Order`) by the workspace declaration each depends on: an
/// import resolves to one by its qualified name (`com.acme.orders.Order`, `from orders.models
/// import Order`) or its path (`./order`); a use without an import carries the declaration it
/// was found for. A JVM/C#/PHP import of that name from a package no workspace file declares is
/// a library type (Spring's `@Order`), moved to [`Grouping::left_out`]. Imports tied to no
/// declaration, and RPC calls, form groups of their own. Headings only when rows span two or
/// more groups.
fn group_by_declaration(snap: &Snapshot, target: &str, rows: &mut Vec<Row>) -> Grouping {
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
            return decls.iter().position(|d| d.file == o).map(Ok);
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

/// Every dependent row (tests included), and whether the listing is the heuristic fallback.
fn collect(snap: &Snapshot, target: &str) -> (Vec<Row>, bool) {
    let mut exact_rows = Vec::new();
    let mut loose_rows = Vec::new();
    for (fi, f) in snap.files.iter().enumerate() {
        for imp in &f.facts().imports {
            let (rows, confidence) = match import_match(imp, target, f.lang) {
                Some(ImportMatch::Exact) => (&mut exact_rows, "exact"),
                Some(ImportMatch::SubPackage) => (&mut loose_rows, SUB_PACKAGE),
                Some(ImportMatch::Contains) => (&mut loose_rows, "heuristic"),
                None => continue,
            };
            push_rows(
                rows,
                f,
                fi as u32,
                imp.line,
                &imp.module,
                imp.reexport,
                confidence,
            );
        }
    }
    path_importer_rows(snap, target, &mut exact_rows);
    dotnet_path_rows(snap, target, &mut exact_rows);
    rpc_call_rows(snap, target, &mut exact_rows);
    unimported_uses(snap, target, &mut exact_rows);
    using_sites(snap, target, &mut exact_rows);
    member_uses(snap, target, &mut exact_rows);
    if exact_rows.is_empty() && loose_rows.is_empty() {
        function_call_rows(snap, target, &mut exact_rows);
    }
    if exact_rows.is_empty() {
        (loose_rows, true)
    } else {
        (exact_rows, false)
    }
}

/// A path target: imports that resolve to the file (or to a file under the directory), and one
/// level through barrels that re-export it.
fn path_importer_rows(snap: &Snapshot, target: &str, rows: &mut Vec<Row>) {
    let targets = path_target_files(snap, target);
    if targets.is_empty() {
        return;
    }
    let keys: std::collections::HashSet<String> = targets
        .iter()
        .map(|&i| path_key(&snap.display_path(&snap.files[i as usize])))
        .collect();
    let dir_key = target.trim_start_matches("./").trim_end_matches('/');
    let resolves = |importer: &str, python: bool, module: &str| {
        // `import "common/v1/money.proto"` names a path under a proto include root
        // (`contracts/`), not next to the importer: it resolves by whole-segment suffix.
        let proto_suffix = format!("/{}", path_key(module));
        import_path_keys(importer, module, python)
            .iter()
            .any(|k| keys.contains(k) || k == dir_key)
            || (module.ends_with(".proto") && keys.iter().any(|k| k.ends_with(&proto_suffix)))
    };
    let mut barrels: Vec<(u32, Vec<String>)> = Vec::new();
    for (fi, f) in snap.files.iter().enumerate() {
        if targets.contains(&(fi as u32)) {
            continue;
        }
        let path = snap.display_path(f);
        for imp in &f.facts().imports {
            if resolves(&path, f.lang == Language::Python, &imp.module) {
                push_rows(
                    rows,
                    f,
                    fi as u32,
                    imp.line,
                    &imp.module,
                    imp.reexport,
                    "exact",
                );
                if imp.reexport {
                    // What the barrel exposes: `export { b as c }` exposes `c`.
                    barrels.push((fi as u32, imp.local_names().map(str::to_string).collect()));
                }
            }
        }
    }
    for (b, names) in barrels {
        barrel_importer_rows(snap, &targets, b, &names, rows);
    }
}

/// A path target holding .NET code: C# namespaces are not path-shaped, so the path stands for
/// what its files declare. A file: the uses of its top-level types, as [`unimported_uses`]
/// finds them for each qualified name (`using` the namespace, a `global using` in the
/// project, the same namespace). A directory: the files outside it with a `using` of a
/// namespace declared under it, and the project files whose `ProjectReference` (or
/// `PackageReference` by assembly name) names a project file under it. An importer whose
/// project does not reference the declaring one ([`Graph::project_may_import`]) is left out:
/// it has the namespace from the SDK (a library re-opening `Microsoft.Extensions.Hosting`).
///
/// [`Graph::project_may_import`]: crate::index::graph::Graph::project_may_import
fn dotnet_path_rows(snap: &Snapshot, target: &str, rows: &mut Vec<Row>) {
    use crate::index::lang::msbuild::referenced_path;
    let targets = path_target_files(snap, target);
    let t = target.trim_start_matches("./").trim_end_matches('/');
    let of = |lang: Language| -> Vec<u32> {
        targets
            .iter()
            .copied()
            .filter(|&i| snap.files[i as usize].lang == lang && !snap.files[i as usize].generated)
            .collect()
    };
    let (sources, projects) = (of(Language::CSharp), of(Language::MsBuild));
    if sources.is_empty() && projects.is_empty() {
        return;
    }
    let g = &snap.graph;
    let is_file = targets.iter().any(|&i| {
        let p = snap.display_path(&snap.files[i as usize]);
        p == t || path_key(&p) == t
    });
    if is_file {
        for &si in &sources {
            let f = &snap.files[si as usize];
            let Some(ns) = f.facts().package.clone() else {
                continue;
            };
            let start = rows.len();
            for s in f.symbols() {
                let top = f.container(s).is_none_or(|c| c == ns);
                let is_type = matches!(
                    s.kind,
                    SymbolKind::Interface
                        | SymbolKind::Class
                        | SymbolKind::Struct
                        | SymbolKind::Enum
                        | SymbolKind::TypeAlias
                );
                if top && is_type {
                    unimported_uses(snap, &format!("{ns}.{}", f.name(s)), rows);
                }
            }
            let mut k = start;
            while k < rows.len() {
                if g.project_may_import(rows[k].root, f.root) {
                    k += 1;
                } else {
                    rows.remove(k);
                }
            }
        }
        return;
    }
    let inside: std::collections::HashSet<u32> = targets.iter().copied().collect();
    let mut namespaces: BTreeMap<String, Vec<u16>> = BTreeMap::new();
    for &si in &sources {
        let f = &snap.files[si as usize];
        if let Some(ns) = &f.facts().package {
            let roots = namespaces.entry(ns.clone()).or_default();
            if !roots.contains(&f.root) {
                roots.push(f.root);
            }
        }
    }
    let project_paths: Vec<(String, Option<&str>)> = projects
        .iter()
        .map(|&p| {
            let f = &snap.files[p as usize];
            (
                snap.display_path(f).to_lowercase(),
                f.facts().package.as_deref(),
            )
        })
        .collect();
    // A namespace that projects import without referencing its declarer exists outside the
    // workspace too (`Microsoft.Extensions.DependencyInjection`, re-opened for extension
    // methods): its importers that do reference the declarer are only maybe dependents.
    let foreign: std::collections::HashSet<&str> = snap
        .files
        .iter()
        .filter(|f| f.lang == Language::CSharp)
        .flat_map(|f| f.facts().imports.iter().map(move |i| (f.root, i)))
        .filter_map(|(root, i)| {
            let (ns, roots) = namespaces.get_key_value(&i.module)?;
            (!roots.iter().any(|&r| g.project_may_import(root, r))).then_some(ns.as_str())
        })
        .collect();
    for (fi, f) in snap.files.iter().enumerate() {
        if inside.contains(&(fi as u32)) {
            continue;
        }
        match f.lang {
            Language::CSharp => {
                for imp in &f.facts().imports {
                    let declared = namespaces.iter().find(|(ns, _)| {
                        imp.module == **ns
                            || (imp.alias.is_some()
                                && imp
                                    .module
                                    .strip_prefix(ns.as_str())
                                    .is_some_and(|r| r.starts_with('.')))
                    });
                    if let Some((ns, roots)) = declared
                        && roots.iter().any(|&r| g.project_may_import(f.root, r))
                    {
                        if foreign.contains(ns.as_str()) {
                            let via = format!(
                                "{} (also imported by projects that do not reference it: may be the SDK's)",
                                imp.module
                            );
                            push_rows(rows, f, fi as u32, imp.line, &via, false, "heuristic");
                        } else {
                            push_rows(rows, f, fi as u32, imp.line, &imp.module, false, "exact");
                        }
                    }
                }
            }
            Language::MsBuild => {
                let path = snap.display_path(f);
                for imp in &f.facts().imports {
                    let named = match referenced_path(&path, &imp.module) {
                        Some(p) => project_paths.iter().any(|(q, _)| *q == p),
                        None => project_paths
                            .iter()
                            .any(|(_, n)| n.is_some_and(|n| n.eq_ignore_ascii_case(&imp.module))),
                    };
                    if named {
                        let via = format!("references project {}", imp.module);
                        push_rows(rows, f, fi as u32, imp.line, &via, false, "exact");
                    }
                }
            }
            _ => {}
        }
    }
}

/// The importers of barrel `barrel` (a file re-exporting a path target; `names` what it
/// re-exports, empty for `export *`), other than the targets themselves.
fn barrel_importer_rows(
    snap: &Snapshot,
    targets: &[u32],
    barrel: u32,
    names: &[String],
    rows: &mut Vec<Row>,
) {
    let barrel_path = snap.display_path(&snap.files[barrel as usize]);
    let barrel_key = path_key(&barrel_path);
    for (fi, f) in snap.files.iter().enumerate() {
        if fi as u32 == barrel || targets.contains(&(fi as u32)) {
            continue;
        }
        let path = snap.display_path(f);
        for imp in &f.facts().imports {
            if !import_path_keys(&path, &imp.module, f.lang == Language::Python)
                .contains(&barrel_key)
            {
                continue;
            }
            // `export *` re-exports everything: a guess; named re-exports are exact when the
            // importer takes one of those names.
            let confidence = if names.is_empty() {
                "heuristic"
            } else if imp.names.iter().any(|n| names.contains(n)) {
                "exact"
            } else {
                continue;
            };
            push_rows(
                rows,
                f,
                fi as u32,
                imp.line,
                &format!("{} (through the barrel {barrel_path})", imp.module),
                false,
                confidence,
            );
        }
    }
}

/// Calls of an RPC (`Service.Method`, `pkg.Service/Method`) or of any RPC of a service.
fn rpc_call_rows(snap: &Snapshot, target: &str, rows: &mut Vec<Row>) {
    let g = &snap.graph;
    // A whole service name, qualified or not (`acme.orders.v1.OrderService`), means every RPC.
    let whole = if target.contains('/') {
        Vec::new()
    } else {
        g.contracts_named(target)
    };
    let (contracts, method) = if whole.is_empty() {
        match target.rsplit_once(['/', '.']) {
            Some((s, m)) if !m.is_empty() => (
                g.contracts_named(s.rsplit('.').next().unwrap_or(s)),
                Some(m),
            ),
            _ => (Vec::new(), None),
        }
    } else {
        (whole, None)
    };
    for c in contracts {
        for &r in &g.contracts[c as usize].rpcs {
            let rpc = &g.rpcs[r as usize];
            if method.is_some_and(|m| !m.eq_ignore_ascii_case(&rpc.name)) {
                continue;
            }
            for call in g.calls.iter().filter(|l| l.rpc == r) {
                let f = &snap.files[call.at.file as usize];
                let via = format!("calls {}.{}", g.contracts[c as usize].name, rpc.name);
                push_call_row(
                    rows,
                    f,
                    call.at.file,
                    call.at.line,
                    &via,
                    call.confidence.label(),
                );
            }
        }
    }
}

/// Using sites kept per importing file; the rest are counted on the last one.
const USES_PER_FILE: usize = 10;

/// The uses of an imported module in the files that import it: the name the import binds
/// (`import pika` → `pika`, `import x as y` → `y`, `from pika import BlockingConnection` →
/// `BlockingConnection`, `const express = require('express')` → `express`, Go
/// `import "…/amqp"` → `amqp`, PHP `use GuzzleHttp\Client` and Java `import a.b.HttpPost` →
/// the class name) called or dereferenced (`pika.BlockingConnection(`, `express()`,
/// `amqp.Dial(`, `new Client(`), outside comments and strings. Each is a `heuristic` row (a
/// local could shadow the name), at most [`USES_PER_FILE`] per file.
fn using_sites(snap: &Snapshot, target: &str, rows: &mut Vec<Row>) {
    let mut extra = Vec::new();
    let mut done = std::collections::HashSet::new();
    for r in rows.iter().filter(|r| !r.call && r.confidence == "exact") {
        let f = &snap.files[r.file as usize];
        if !done.insert((r.file, r.site)) {
            continue;
        }
        let Some(imp) = f
            .facts()
            .imports
            .iter()
            .find(|i| i.line == r.site && i.module == r.module)
        else {
            continue;
        };
        let whole = imp.module == target
            || imp.module.starts_with(&format!("{target}."))
            || imp.module.starts_with(&format!("{target}/"))
            || imp.module.starts_with(&format!("{target}\\"))
            || last_segment(&imp.module) == target;
        let bound: Vec<String> = if imp.names.iter().any(|n| n == target) {
            // `import { Orders as O }` binds `O`.
            imp.names
                .iter()
                .zip(imp.local_names())
                .filter(|(n, _)| *n == target)
                .map(|(_, local)| local.to_string())
                .collect()
        } else if whole {
            module_bindings(imp, f.lang)
        } else {
            continue;
        };
        let sites = use_sites(snap, f, imp, &bound, None);
        push_use_rows(&mut extra, f, r.file, sites, &r.module);
    }
    rows.extend(extra);
}

/// A qualified target that no import names, `q.Name` (`amqp.Channel`, `pika.BlockingConnection`):
/// its uses as `q.Name` in the files whose imports bind `q`, as `heuristic` rows like
/// [`using_sites`]'. Lines already listed are not listed twice.
fn member_uses(snap: &Snapshot, target: &str, rows: &mut Vec<Row>) {
    let Some((qualifier, member)) = target.rsplit_once('.') else {
        return;
    };
    let ident = |t: &str| !t.is_empty() && t.bytes().all(is_word_byte);
    if !ident(qualifier) || !ident(member) {
        return;
    }
    let listed: std::collections::HashSet<(u32, u32)> =
        rows.iter().map(|r| (r.file, r.site)).collect();
    let mut extra = Vec::new();
    for (fi, f) in snap.files.iter().enumerate() {
        // Every name `module_bindings` gives is the alias, a local name or a part of the
        // module string: this test, without allocating, passes over nearly every import of
        // the workspace on this per-query path.
        let binds = |imp: &&Import| {
            (imp.module.contains(qualifier)
                || imp.alias.as_deref() == Some(qualifier)
                || imp.local_names().any(|n| n == qualifier))
                && module_bindings(imp, f.lang).iter().any(|b| b == qualifier)
        };
        // One scan per file, however many of its imports bind the qualifier.
        let Some(imp) = f.facts().imports.iter().find(binds) else {
            continue;
        };
        let mut sites = use_sites(snap, f, imp, &[qualifier.to_string()], Some(member));
        sites.retain(|(line, _)| !listed.contains(&(fi as u32, *line)));
        push_use_rows(&mut extra, f, fi as u32, sites, &imp.module);
    }
    rows.extend(extra);
}

/// The names an import binds for the module as a whole, in the languages whose uses
/// [`use_sites`] can find: its alias and the names it imports, else Python's `import a.b`
/// (`a.b`), Go's package name (the last path segment, a `/v2` version skipped), PHP's and the
/// JVM's imported class (the last segment). C# `using` opens a namespace: no name is bound.
fn module_bindings(imp: &Import, lang: Language) -> Vec<String> {
    let mut bound: Vec<String> = Vec::new();
    let module = imp.module.as_str();
    match lang {
        Language::Python | Language::TypeScript | Language::JavaScript => {
            bound.extend(imp.alias.clone());
            bound.extend(imp.local_names().map(str::to_string));
            if lang == Language::Python && imp.names.is_empty() && imp.alias.is_none() {
                bound.push(module.to_string());
            }
        }
        Language::Go => match imp.alias.as_deref() {
            Some("_" | ".") => {}
            Some(a) => bound.push(a.to_string()),
            None => {
                let mut segments = module.rsplit('/');
                let last = segments.next().unwrap_or(module);
                let versioned = last.len() > 1
                    && last.starts_with('v')
                    && last[1..].bytes().all(|b| b.is_ascii_digit());
                let name = if versioned {
                    segments.next().unwrap_or(last)
                } else {
                    last
                };
                bound.push(name.to_string());
            }
        },
        Language::Php | Language::Java | Language::Kotlin | Language::Scala => {
            match imp.alias.clone() {
                Some(a) => bound.push(a),
                None => bound.push(last_segment(module).to_string()),
            }
            bound.extend(imp.local_names().map(str::to_string));
        }
        _ => {}
    }
    bound.retain(|b| !b.is_empty() && b != "*" && b != "_");
    bound
}

/// The lines of `f` (other than its import lines) where one of `bound` is called or
/// dereferenced, with the use as written (`pika.BlockingConnection`); with `member`, only
/// uses of `bound.member`. Comments and strings are skipped (the file is lexed).
fn use_sites(
    snap: &Snapshot,
    f: &FileEntry,
    imp: &Import,
    bound: &[String],
    member: Option<&str>,
) -> Vec<(u32, String)> {
    let mut sites = Vec::new();
    if bound.is_empty() {
        return sites;
    }
    let Some(syntax) = crate::index::lex::Syntax::of(f.lang) else {
        return sites;
    };
    let Ok(text) = std::fs::read_to_string(snap.abs_path(f)) else {
        return sites;
    };
    let python = f.lang == Language::Python;
    let lexed = crate::index::lex::lex(syntax, &text);
    for line in 1..=lexed.line_count() {
        let code = lexed.code_line(line);
        let head = code.trim_start();
        if line == imp.line
            || head.starts_with("import ")
            || (python && head.starts_with("from "))
            || (f.lang == Language::Php && head.starts_with("use "))
        {
            continue;
        }
        let b = code.as_bytes();
        let used = bound.iter().find_map(|name| {
            code.match_indices(name.as_str()).find_map(|(at, _)| {
                let before = at.checked_sub(1).map(|i| b[i]);
                let end = at + name.len();
                if before.is_some_and(|c| {
                    crate::index::lex::is_ident_byte(c) || c == b'.' || c == b'$' || c == b'\\'
                }) || b
                    .get(end)
                    .is_some_and(|&c| crate::index::lex::is_ident_byte(c))
                {
                    return None;
                }
                let rest = code[end..].trim_start();
                if let Some(m) = member {
                    let after = rest.strip_prefix('.')?.strip_prefix(m)?;
                    if after
                        .bytes()
                        .next()
                        .is_some_and(crate::index::lex::is_ident_byte)
                    {
                        return None;
                    }
                } else if !rest.starts_with(['.', '(']) && !rest.starts_with("::") {
                    return None;
                }
                // The use as written: the name and the members it reaches.
                let chain: String = code[end..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | ':'))
                    .collect();
                Some(format!("{name}{}", chain.trim_end_matches(['.', ':'])))
            })
        });
        if let Some(expr) = used {
            sites.push((line, expr));
        }
    }
    sites
}

/// The rows of one file's use sites, at most [`USES_PER_FILE`]; the last kept one counts the
/// rest. `module` is what the import names (the declaration grouping follows it).
fn push_use_rows(
    rows: &mut Vec<Row>,
    f: &FileEntry,
    file: u32,
    sites: Vec<(u32, String)>,
    module: &str,
) {
    let total = sites.len();
    for (k, (line, expr)) in sites.into_iter().take(USES_PER_FILE).enumerate() {
        let more = if k + 1 == USES_PER_FILE && total > USES_PER_FILE {
            format!(" (+{} more uses in this file)", total - USES_PER_FILE)
        } else {
            String::new()
        };
        push_call_row(
            rows,
            f,
            file,
            line,
            &format!("uses {expr}{more}"),
            "heuristic",
        );
        if let Some(u) = rows.last_mut() {
            u.module = module.to_string();
        }
    }
}

/// Languages whose files share their package's names without importing them (PHP resolves an
/// unqualified class name, `Database::class`, in the file's own namespace).
fn shares_package_names(lang: Language) -> bool {
    matches!(
        lang,
        Language::Java
            | Language::Kotlin
            | Language::Scala
            | Language::CSharp
            | Language::Go
            | Language::Php
    )
}

/// Uses of a top-level type or function that no import names: by the other files of its own
/// package (same declared package and root; in Go, the same directory), and in Go by importers
/// of its package as `pkg.Name`. Each is the name's first use as a word in the file's code,
/// a `heuristic` row: the index keeps imports, not every reference.
fn unimported_uses(snap: &Snapshot, target: &str, rows: &mut Vec<Row>) {
    // A qualified name (`com.acme.orders.Order`, `Acme.Orders.Order`) names the declaration in
    // that package or namespace: its same-package users need no import either.
    let (qualifier, target) = match target.rsplit_once('.') {
        Some((q, name)) if !q.is_empty() => (Some(q), name),
        _ => (None, target),
    };
    let ident =
        |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !ident(target) || qualifier.is_some_and(|q| !q.split('.').all(ident)) {
        return;
    }
    let dir_of = |f: &FileEntry| f.path.rsplit_once('/').map_or("", |(d, _)| d).to_string();
    let decls: Vec<usize> = snap
        .files
        .iter()
        .enumerate()
        .filter(|(_, f)| shares_package_names(f.lang) && !f.is_test)
        .filter(|(_, f)| qualifier.is_none_or(|q| f.facts().package.as_deref() == Some(q)))
        .filter(|(_, f)| {
            f.symbols().iter().any(|s| {
                // Top level: no container, or (C#) only the file's namespace.
                f.container(s)
                    .is_none_or(|c| f.facts().package.as_deref() == Some(c))
                    && f.name(s) == target
                    && !matches!(
                        s.kind,
                        SymbolKind::Module | SymbolKind::Section | SymbolKind::Property
                    )
            })
        })
        .map(|(i, _)| i)
        .collect();
    let razor_ns = RazorNamespaces::of(snap);
    for di in decls {
        let d = &snap.files[di];
        let (pkg, dir) = (razor_ns.package_of(d), dir_of(d));
        let go = d.lang == Language::Go;
        let csharp = d.lang == Language::CSharp && razor_ns.namespace_of(d).is_some();
        // JVM: `import pkg.*;` (Scala `pkg._`) opens the package to a file of any root.
        let jvm_lang =
            |l: Language| matches!(l, Language::Java | Language::Kotlin | Language::Scala);
        let jvm = jvm_lang(d.lang) && d.facts().package.is_some();
        let wildcard = |f: &FileEntry| {
            jvm_lang(f.lang)
                && f.facts().imports.iter().any(|i| {
                    i.names.is_empty()
                        && i.alias.is_none()
                        && (i.module == pkg
                            || i.module.strip_suffix("._").is_some_and(|m| m == pkg))
                })
        };
        // C#: the projects (roots) where a `global using` of the namespace opens it to every file.
        let global_roots: std::collections::BTreeSet<u16> = if csharp {
            snap.files
                .iter()
                .filter(|f| f.lang == Language::CSharp && opens_namespace(f, &pkg))
                .filter(|f| global_using_of(snap, f, &pkg))
                .map(|f| f.root)
                .collect()
        } else {
            Default::default()
        };
        // Razor: the folders whose `_Imports.razor` / `_ViewImports.cshtml` opens the namespace.
        let razor_folders = if csharp {
            razor_ns.folders_opening(snap, &pkg)
        } else {
            Vec::new()
        };
        for (fi, f) in snap.files.iter().enumerate() {
            if fi == di
                || (f.root != d.root && !go && !csharp && !jvm)
                || rows.iter().any(|r| r.file == fi as u32)
            {
                continue;
            }
            let same_package = f.root == d.root
                && f.lang == d.lang
                && if go {
                    dir_of(f) == dir
                } else {
                    razor_ns.package_of(f) == pkg
                };
            let razor_import = if csharp && f.lang == Language::CSharp {
                razor_folders
                    .iter()
                    .find(|(root, folder, _)| *root == f.root && in_folder(&f.path, folder))
            } else {
                None
            };
            let needle = if same_package {
                target.to_string()
            } else if go && f.lang == Language::Go {
                // `import x "…/repository"` or `import "…/repository"` → `x.Name` / `repository.Name`
                let Some(imp) = f.facts().imports.iter().find(|i| {
                    let m = i.module.trim_end_matches('/');
                    (!dir.is_empty() && (m == dir || m.ends_with(&format!("/{dir}"))))
                        || (m.rsplit('/').next() == dir.rsplit('/').next()
                            && m.rsplit('/').next() == Some(pkg.as_str()))
                }) else {
                    continue;
                };
                let alias = imp
                    .alias
                    .clone()
                    .unwrap_or_else(|| last_segment(&imp.module).to_string());
                format!("{alias}.{target}")
            } else if jvm && wildcard(f) {
                target.to_string()
            } else if csharp
                && f.lang == Language::CSharp
                && (opens_namespace(f, &pkg) || global_roots.contains(&f.root))
            {
                // `using Ns;` in the file, or `global using Ns;` in its project: the bare name.
                target.to_string()
            } else if razor_import.is_some() {
                target.to_string()
            } else {
                continue;
            };
            let Some(line) = first_use(snap, f, &needle) else {
                continue;
            };
            let via = if same_package {
                format!("uses {target} (same package `{pkg}`, no import)")
            } else if jvm {
                format!("uses {target} (import {pkg}.*)")
            } else if csharp && opens_namespace(f, &pkg) {
                format!("uses {target} (using {pkg})")
            } else if let Some((_, _, imports)) =
                razor_import.filter(|_| !global_roots.contains(&f.root))
            {
                format!("uses {target} (@using {pkg} in {imports})")
            } else if csharp {
                format!("uses {target} (global using {pkg} in its project)")
            } else {
                format!("uses {needle}")
            };
            push_call_row(rows, f, fi as u32, line, &via, "heuristic");
            if let Some(r) = rows.last_mut() {
                r.origin = Some(di as u32);
            }
        }
    }
}

/// Razor files and namespaces: a component (`.razor`) declares no namespace unless it says
/// `@namespace`; it is in its folder's, the one the C# files next to it declare. A Razor file
/// also sees the `@using` lines of every `_Imports.razor` (`_ViewImports.cshtml` for views)
/// in its folder and the folders above it in its root.
struct RazorNamespaces {
    /// (root, folder) → the namespace the first C# file of that folder declares.
    folders: std::collections::HashMap<(u16, String), String>,
}

impl RazorNamespaces {
    fn of(snap: &Snapshot) -> RazorNamespaces {
        let mut folders = std::collections::HashMap::new();
        for f in snap
            .files
            .iter()
            .filter(|f| f.lang == Language::CSharp && !is_razor(&f.path))
        {
            if let Some(ns) = &f.facts().package {
                folders
                    .entry((f.root, folder_of(&f.path).to_string()))
                    .or_insert_with(|| ns.clone());
            }
        }
        RazorNamespaces { folders }
    }

    /// The declared namespace of `f`, or a Razor file's folder namespace.
    fn namespace_of(&self, f: &FileEntry) -> Option<String> {
        f.facts().package.clone().or_else(|| {
            is_razor(&f.path)
                .then(|| self.folders.get(&(f.root, folder_of(&f.path).to_string())))
                .flatten()
                .cloned()
        })
    }

    /// [`package_of`], with a Razor file's folder namespace.
    fn package_of(&self, f: &FileEntry) -> String {
        self.namespace_of(f).unwrap_or_else(|| package_of(f))
    }

    /// (root, folder, imports file) of every Razor imports file with `@using ns`.
    fn folders_opening(&self, snap: &Snapshot, ns: &str) -> Vec<(u16, String, String)> {
        snap.files
            .iter()
            .filter(|f| {
                let name = f.path.rsplit('/').next().unwrap_or(&f.path);
                matches!(name, "_Imports.razor" | "_ViewImports.cshtml") && opens_namespace(f, ns)
            })
            .map(|f| (f.root, folder_of(&f.path).to_string(), f.path.to_string()))
            .collect()
    }
}

/// The folder of a root-relative path (`""` at the root).
fn folder_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// Whether `path` is in `folder` or below it (`""` is the root).
fn in_folder(path: &str, folder: &str) -> bool {
    folder.is_empty()
        || path
            .strip_prefix(folder)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Whether C# file `f` has a `using` of namespace `ns` (not an alias, not a type).
fn opens_namespace(f: &FileEntry, ns: &str) -> bool {
    f.facts()
        .imports
        .iter()
        .any(|i| i.module == ns && i.names.is_empty() && i.alias.is_none())
}

/// Whether `f`'s `using` of `ns` is a `global using` (read from its line: the facts keep one
/// kind of import).
fn global_using_of(snap: &Snapshot, f: &FileEntry, ns: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(snap.abs_path(f)) else {
        return false;
    };
    let lines: Vec<&str> = text.lines().collect();
    f.facts()
        .imports
        .iter()
        .filter(|i| i.module == ns)
        .any(|i| {
            (i.line as usize)
                .checked_sub(1)
                .and_then(|k| lines.get(k))
                .is_some_and(|l| {
                    l.trim_start_matches('\u{feff}')
                        .trim_start()
                        .starts_with("global ")
                })
        })
}

/// Most call rows one function target gets (its calls are found by name, file by file).
const MAX_CALL_ROWS: usize = 200;

/// Bytes of files outside a function's declaring root that [`function_call_rows`] reads at
/// most per query: a library's function is called from the services using it, but one
/// question must not read a whole huge workspace.
const MAX_CALL_SCAN_BYTES: u64 = 16 << 20;

/// A function or method target (`calcTotal`, `CartHelper.addToCart`) that nothing imports:
/// the index keeps declarations, not every call, so its callers are found by name, as lines
/// where the name is called (`name(`), in the files of the same language family: the
/// declaring root's first (the declaring file included), then the other roots' (a shared
/// library's `AddEventBus(…)` is called by the services, which need not import its
/// namespace: a C# extension method declared in `Microsoft.Extensions.Hosting`), up to
/// [`MAX_CALL_SCAN_BYTES`]. Each is a `heuristic` row that says so; without them the answer
/// would be a false "0 dependents".
fn function_call_rows(snap: &Snapshot, target: &str, rows: &mut Vec<Row>) {
    let (owner, name) = match target.rsplit_once('.') {
        Some((q, n)) if !q.is_empty() => (Some(q.rsplit('.').next().unwrap_or(q)), n),
        _ => (None, target),
    };
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return;
    }
    // Declarations: (file, declaration line).
    let decls: Vec<(usize, u32)> = snap
        .files
        .iter()
        .enumerate()
        .flat_map(|(fi, f)| {
            f.symbols()
                .iter()
                .filter(|s| matches!(s.kind, SymbolKind::Function | SymbolKind::Method))
                .filter(|s| f.name(s) == name)
                .filter(|s| {
                    owner.is_none_or(|o| {
                        f.container(s)
                            .is_some_and(|c| c == o || c.ends_with(&format!(".{o}")))
                    })
                })
                .map(move |s| (fi, s.line))
                .collect::<Vec<_>>()
        })
        .collect();
    let family = |l: Language| match l {
        Language::TypeScript => Language::JavaScript,
        Language::Kotlin | Language::Scala => Language::Java,
        Language::C => Language::Cpp,
        other => other,
    };
    let mut seen = std::collections::BTreeSet::new();
    let mut budget = MAX_CALL_SCAN_BYTES;
    // Own root first, then the others: (declaration, whether this pass is the own root's).
    let passes = decls
        .iter()
        .map(|&d| (d, true))
        .chain(decls.iter().map(|&d| (d, false)));
    for ((di, _), own_root) in passes {
        let d = &snap.files[di];
        for (fi, f) in snap.files.iter().enumerate() {
            if (f.root == d.root) != own_root
                || family(f.lang) != family(d.lang)
                || seen.contains(&fi)
            {
                continue;
            }
            if !own_root {
                if budget < f.size {
                    continue;
                }
                budget -= f.size;
            }
            seen.insert(fi);
            let Ok(text) = std::fs::read_to_string(snap.abs_path(f)) else {
                continue;
            };
            if !text.contains(name) {
                continue;
            }
            let declared_here: Vec<u32> = decls
                .iter()
                .filter(|&&(i, _)| i == fi)
                .map(|&(_, l)| l)
                .collect();
            for line in call_lines(&text, name) {
                if declared_here.contains(&line) || rows.len() >= MAX_CALL_ROWS {
                    continue;
                }
                push_call_row(
                    rows,
                    f,
                    fi as u32,
                    line,
                    &format!("calls {name}(…) (found by name: calls of functions are not indexed)"),
                    "heuristic",
                );
                if let Some(r) = rows.last_mut() {
                    r.origin = Some(di as u32);
                }
            }
        }
    }
}

/// The 1-based lines of `text` where `name` is called: the whole word followed by `(` (spaces
/// between allowed), outside a line comment (`//`, `#`) and not a definition (`def`, `fun`,
/// `func`, `function`, `fn` right before it).
fn call_lines(text: &str, name: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        if code.trim_start().starts_with('#') {
            continue;
        }
        let bytes = code.as_bytes();
        let called = code.match_indices(name).any(|(at, _)| {
            let before = at.checked_sub(1).map(|i| bytes[i]);
            let definition = matches!(
                code[..at]
                    .trim_end()
                    .rsplit(|c: char| !c.is_ascii_alphanumeric())
                    .next(),
                Some("def" | "fun" | "func" | "function" | "fn")
            );
            !before.is_some_and(|b| is_word_byte(b) || b == b'$')
                && code[at + name.len()..].trim_start().starts_with('(')
                && !definition
        });
        if called {
            out.push(k as u32 + 1);
        }
    }
    out
}

/// A byte of an identifier (ASCII letters, digits, `_`).
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The first line of `f` where `needle` appears as a whole word outside a line comment or an
/// import/package line; `None` when the file cannot be read or never uses it.
fn first_use(snap: &Snapshot, f: &FileEntry, needle: &str) -> Option<u32> {
    let text = std::fs::read_to_string(snap.abs_path(f)).ok()?;
    for (k, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let t = code.trim_start();
        if t.starts_with("import ")
            || t.starts_with("package ")
            || t.starts_with("using ")
            || t.starts_with('*')
            || t.starts_with("/*")
        {
            continue;
        }
        let bytes = code.as_bytes();
        let found = code.match_indices(needle).any(|(at, _)| {
            let before = at.checked_sub(1).map(|i| bytes[i]);
            let after = bytes.get(at + needle.len()).copied();
            !before.is_some_and(|b| is_word_byte(b) || b == b'.' && !needle.contains('.'))
                && !after.is_some_and(is_word_byte)
        });
        if found {
            return u32::try_from(k + 1).ok();
        }
    }
    None
}

/// The package a dependent belongs to: the declared one, else its directory.
fn package_of(f: &FileEntry) -> String {
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
fn push_rows(
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
fn push_call_row(
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

#[allow(clippy::too_many_arguments)]
fn render(
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
        return render_none(snap, target, unit, tests_left_out, left_out_note, out);
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
    out.push_str(&super::smart_search::rejected_note(
        snap,
        &super::Scope::everything(),
    ));
    let mut accessed = page.accessed;
    accessed.dedup();
    let data = structured::with(
        structured::page(total, offset, Some(offset + shown), page.data_rows),
        json!({"testsLeftOut": tests_left_out}),
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
    mut out: String,
) -> ToolOutput {
    out.push_str(&format!(
        "No file imports or calls {} across the {} indexed root(s) ({} files, index generation {}): 0 dependents.\n",
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
    out.push_str(&super::smart_search::rejected_note(
        snap,
        &super::Scope::everything(),
    ));
    ToolOutput::ok(out).with_data(structured::with(
        structured::empty(),
        json!({"testsLeftOut": tests_left_out}),
    ))
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
    let users = super::visualize_mesh::library_users(snap);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn call(snap: &Snapshot, args: Value) -> ToolOutput {
        crate::tools::run_on(run, snap, &args)
    }

    /// `Api` references `Bus` and opens its namespace with a `global using`; `Web` references
    /// nothing and takes `Microsoft.Extensions.Hosting` from its SDK, though `Bus` re-opens it.
    const DOTNET: &[(&str, &str, &str)] = &[
        (
            "src/Bus",
            "Bus.csproj",
            "<Project Sdk=\"Microsoft.NET.Sdk\" />\n",
        ),
        (
            "src/Bus",
            "Abstractions/IEventBus.cs",
            "namespace Acme.Bus.Abstractions;\npublic interface IEventBus { }\n",
        ),
        (
            "src/Bus",
            "Hosting.cs",
            "namespace Microsoft.Extensions.Hosting;\npublic static class BusExtensions { }\n",
        ),
        (
            "src/Api",
            "Api.csproj",
            "<Project>\n  <ItemGroup>\n    <ProjectReference Include=\"..\\Bus\\Bus.csproj\" />\n  </ItemGroup>\n</Project>\n",
        ),
        (
            "src/Api",
            "GlobalUsings.cs",
            "global using Acme.Bus.Abstractions;\n",
        ),
        (
            "src/Api",
            "Worker.cs",
            "namespace Acme.Api;\npublic class Worker\n{\n    private readonly IEventBus _bus;\n}\n",
        ),
        (
            "src/Api",
            "Program.cs",
            "using Microsoft.Extensions.Hosting;\nnamespace Acme.Api;\npublic class Program { }\n",
        ),
        (
            "src/Web",
            "Web.csproj",
            "<Project Sdk=\"Microsoft.NET.Sdk.Web\" />\n",
        ),
        (
            "src/Web",
            "Program.cs",
            "using Microsoft.Extensions.Hosting;\nnamespace Acme.Web;\npublic class Program { }\n",
        ),
    ];

    /// The `path:line` of every row of a `file`-granularity answer.
    fn sites(out: &ToolOutput) -> Vec<String> {
        let mut v: Vec<String> = out
            .text
            .lines()
            .filter_map(|l| l.split('`').nth(1))
            .filter(|s| s.contains(':') && s.starts_with("src/"))
            .map(str::to_string)
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_dotnet_path_target_stands_for_its_namespaces_and_project() {
        // Uses are read from the files: write them where the snapshot's roots point.
        let dir = std::env::temp_dir().join(format!("mesh-csdeps-{}", std::process::id()));
        for (root, path, text) in DOTNET {
            let p = dir.join(root).join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let mut snap = Snapshot::of_sources(DOTNET);
        for r in &mut snap.roots {
            r.path = dir.join(&r.label);
        }
        let whole = call(&snap, json!({"target": "src/Bus", "granularity": "file"}));
        let file = call(
            &snap,
            json!({"target": "src/Bus/Abstractions/IEventBus.cs", "granularity": "file"}),
        );
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            sites(&whole),
            vec![
                "src/Api/Api.csproj:3",
                "src/Api/GlobalUsings.cs:1",
                "src/Api/Program.cs:1"
            ],
            "{}",
            whole.text
        );
        // `Web` imports the namespace without referencing `Bus`: it exists outside the
        // workspace, so `Api`'s import of it is only maybe a use of `Bus`.
        assert!(
            whole
                .text
                .lines()
                .any(|l| l.contains("src/Api/Program.cs:1") && l.contains("(heuristic)")),
            "{}",
            whole.text
        );
        assert!(
            whole
                .text
                .lines()
                .any(|l| l.contains("src/Api/GlobalUsings.cs:1") && l.contains("(exact)")),
            "{}",
            whole.text
        );
        // The file: who uses its type (through the project's global using).
        assert_eq!(sites(&file), vec!["src/Api/Worker.cs:4"], "{}", file.text);
    }

    #[test]
    fn python_sibling_modules_resolve_per_service() {
        use crate::index::facts::FileFacts;
        let imports = |m: &str| FileFacts {
            imports: vec![Import::plain(m, &["Store"], 1)],
            ..FileFacts::default()
        };
        let snap = Snapshot::from_facts(vec![
            ("services/a", "store.py", FileFacts::default()),
            ("services/a", "app.py", imports("store")),
            ("services/b", "store.py", FileFacts::default()),
            ("services/b", "main.py", imports("store")),
            // Not Python: a bare module name is not a sibling file.
            ("services/b", "index.js", imports("store")),
        ]);
        let out = call(
            &snap,
            json!({"target": "services/a/store.py", "granularity": "file"}),
        );
        assert!(out.text.contains("services/a/app.py:1"), "{}", out.text);
        assert!(!out.text.contains("services/b/"), "{}", out.text);
    }

    #[test]
    fn module_dot_name_and_suffix_matches_are_exact() {
        let imp = Import {
            module: "inventory.gen".into(),
            names: vec!["inventory_pb2_grpc".into()],
            alias: None,
            line: 3,
            reexport: false,
            renamed: Vec::new(),
        };
        assert_eq!(
            import_match(&imp, "inventory.gen.inventory_pb2_grpc", Language::Python),
            Some(ImportMatch::Exact)
        );
        let proto = Import {
            module: "common/v1/money.proto".into(),
            names: vec![],
            alias: None,
            line: 5,
            reexport: false,
            renamed: Vec::new(),
        };
        assert_eq!(
            import_match(&proto, "money.proto", Language::Protobuf),
            Some(ImportMatch::Exact)
        );
        assert_eq!(
            import_match(&proto, "oney", Language::Protobuf),
            Some(ImportMatch::Contains)
        );
        assert_eq!(import_match(&proto, "billing", Language::Protobuf), None);
        // A subpackage is another package in the dotted-namespace languages.
        let java = |m: &str| Import {
            module: m.into(),
            names: vec![],
            alias: None,
            line: 1,
            reexport: false,
            renamed: Vec::new(),
        };
        assert_eq!(
            import_match(
                &java("com.acme.orders.OrderService"),
                "com.acme.orders",
                Language::Java
            ),
            Some(ImportMatch::Exact)
        );
        assert_eq!(
            import_match(
                &java("com.acme.orders.sqs.Provider"),
                "com.acme.orders",
                Language::Java
            ),
            Some(ImportMatch::SubPackage)
        );
        assert_eq!(
            import_match(
                &java("Acme.EventBus.Abstractions"),
                "Acme.EventBus",
                Language::CSharp
            ),
            Some(ImportMatch::SubPackage)
        );
        assert_eq!(
            import_match(&java("acme.orders.models"), "acme.orders", Language::Python),
            Some(ImportMatch::Exact)
        );
    }

    #[test]
    fn subpackage_imports_are_told_apart_from_a_contained_name() {
        use crate::index::facts::FileFacts;
        let imports = |m: &str| FileFacts {
            imports: vec![Import::plain(m, &[], 3)],
            ..FileFacts::default()
        };
        let snap = Snapshot::from_facts(vec![
            (
                "shipping",
                "Helper.java",
                imports("org.apache.http.client.methods.HttpGet"),
            ),
            (
                "cart",
                "Other.java",
                imports("com.shop.org.apache.httpish.Client"),
            ),
        ]);
        let out = call(&snap, json!({"target": "org.apache.http"}));
        assert!(
            out.text
                .contains("Nothing imports `org.apache.http` itself"),
            "{}",
            out.text
        );
        let sub = out.text.find("Helper.java:3").expect("the sub-package row");
        let loose = out
            .text
            .find("Other.java:3")
            .expect("the contained-name row");
        assert!(
            out.text[sub..loose].contains("(sub-package)"),
            "{}",
            out.text
        );
        assert!(out.text[loose..].contains("(heuristic)"), "{}", out.text);
        let data = out.data.expect("structured rows").to_string();
        assert!(
            data.contains(r#""confidence":"heuristic""#)
                && data.contains("sub-package import org.apache.http.client.methods.HttpGet"),
            "{data}"
        );
    }
}
