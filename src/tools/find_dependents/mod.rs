//! `find_dependents`: who imports or uses a package, module, type, function or RPC, grouped by
//! root.
//!
//! Exact matches first (the import string, a subpath of it, an imported name, the last
//! segment of a qualified import, or a call of the RPC); only when nothing matches exactly, a
//! clearly labelled heuristic listing of import strings that merely contain the target. Test
//! files are left out by default and counted in the listing's unit.

mod aliases;
mod calls;
mod grouping;
mod imports;
mod manifests;
mod paths;
mod render;
mod resolve;
mod rows;
mod unimported;
mod uses;

pub(super) use paths::looks_like_fs_path;

use serde::Deserialize;
use serde_json::{Value, json};

use self::aliases::alias_uses;
use self::calls::{function_call_rows, rpc_call_rows};
use self::grouping::{Grouping, group_by_declaration, resolve_origins};
use self::imports::{ImportMatch, import_match, is_builtin};
use self::manifests::{manifest_facts, manifests, project_reference_rows};
use self::paths::{dotnet_path_rows, path_importer_rows};
use self::render::render;
use self::resolve::Modules;
use self::rows::{Row, SUB_PACKAGE, push_rows};
use self::unimported::unimported_uses;
use self::uses::{member_uses, using_sites};
use super::{ToolDef, ToolEnv, ToolOutput, object_schema};
use crate::index::facts::SymbolKind;
use crate::index::snapshot::Snapshot;
use crate::render::inline_code;

/// The tool definition.
pub static TOOL: ToolDef = ToolDef {
    name: "find_dependents",
    title: "Find dependents",
    description: "Lists who depends on a package, module, type, function or RPC in every root: files \
that import it (a subpath, or the name), re-export it, call the RPC or list it in a \
manifest, by root, with path:line. Use it for 'who uses X' and 'what breaks if X changes'; \
for where X is declared use smart_search, for an RPC's servers and clients use analyze_grpc. \
Example: {\"target\": \"@acme/domain-user\", \"granularity\": \"file\"}.",
    input_schema: || {
        object_schema(
            json!({
                "target": {"type": "string", "description": "A package or module (\"github.com/acme/orders/pb\", \"@acme/domain-user\", \"com.acme.orders\"), a type (\"OrderService\") or an RPC (\"OrderService.CreateOrder\")."},
                "granularity": {"type": "string", "enum": ["site", "symbol", "file", "package"], "description": "One row per import or use site (\"site\", default), per importing top-level declaration (\"symbol\"), file (\"file\") or package (\"package\")."},
                "include_tests": {"type": "boolean", "description": "Also list test files (default false), e.g. true."},
                "limit": super::int_schema("Rows per page, e.g. 100.", 50, 1, 200),
                "offset": super::int_schema("Rows to skip, from the previous footer, e.g. 50.", 0, 0, super::MAX_OFFSET)
            }),
            &["target"],
        )
    },
    output_schema: Some(super::structured::Shape {
        paged: true,
        extra: r#"{"testsLeftOut":{"type":"integer"},"manifestDependents":{"type":"array","items":{"type":"object"}}}"#,
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

    let manifests = manifests(snap);
    let mut manifest = manifest_facts(&manifests, target);
    if !include_tests {
        manifest.dependents.retain(|d| !d.test);
    }
    let modules = Modules::new(snap, &manifests);
    let (mut rows, heuristic) = collect(snap, &modules, target);
    if is_builtin(target) {
        keep_declaring_roots(snap, target, &mut rows);
    }
    // A bare type name may mean several declarations, or a library type of the same name.
    let mut grouping = if heuristic {
        Grouping::default()
    } else {
        resolve_origins(snap, &modules, target, &mut rows);
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
        &manifest,
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

/// Every dependent row (tests included), and whether the listing is the heuristic fallback.
fn collect(snap: &Snapshot, modules: &Modules, target: &str) -> (Vec<Row>, bool) {
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
    dotnet_path_rows(snap, modules, target, &mut exact_rows);
    rpc_call_rows(snap, target, &mut exact_rows);
    unimported_uses(snap, modules, target, &mut exact_rows);
    alias_uses(snap, modules, target, &mut exact_rows);
    using_sites(snap, target, &mut exact_rows);
    member_uses(snap, target, &mut exact_rows);
    // A project name no source file imports as a namespace: the project files referencing
    // it are its dependents (when sources do import it, they are the finer answer).
    if exact_rows.is_empty() {
        project_reference_rows(snap, target, &mut exact_rows);
    }
    if exact_rows.is_empty() && loose_rows.is_empty() {
        function_call_rows(snap, target, &mut exact_rows);
    }
    if exact_rows.is_empty() {
        (loose_rows, true)
    } else {
        (exact_rows, false)
    }
}

/// Test helpers: a snapshot of real files (the tool re-reads them at answer time).
#[cfg(test)]
pub(super) mod test_support {
    use crate::index::snapshot::Snapshot;
    use crate::tools::ToolOutput;

    /// Writes `files` ((root, root-relative path, text)) under a fresh temporary directory and
    /// indexes those of a known language; manifests (`go.mod`, `package.json`) are only written.
    pub(in crate::tools) fn on_disk(
        tag: &str,
        files: &[(&str, &str, &str)],
    ) -> (std::path::PathBuf, Snapshot) {
        let base =
            std::env::temp_dir().join(format!("mesh-find-dependents-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let mut facts = Vec::new();
        for (root, path, text) in files {
            let abs = base.join(root).join(path);
            std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
            std::fs::write(&abs, text).unwrap();
            if let Some(lang) = crate::index::facts::Language::of_path(path) {
                facts.push((*root, *path, crate::index::lang::extract(lang, path, text)));
            }
        }
        (base.clone(), Snapshot::from_facts_in(base, facts))
    }

    /// One `find_dependents` call on `snap`.
    pub(in crate::tools) fn query(snap: &Snapshot, args: serde_json::Value) -> ToolOutput {
        crate::tools::run_on(super::run, snap, &args)
    }
}
