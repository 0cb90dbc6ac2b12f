//! Path targets: the importers of a file or directory (one level through barrels), and .NET
//! paths standing for the namespaces and projects they declare.

use std::collections::BTreeMap;

use super::resolve::Modules;
use super::rows::{Row, push_rows};
use super::unimported::unimported_uses;
use crate::index::facts::{Language, SymbolKind};
use crate::index::modules::{import_path_keys, path_key};
use crate::index::snapshot::Snapshot;

/// True when `target` is spelled as a filesystem path rather than a name: absolute (`/`, a
/// drive letter), home-relative (`~`), or with a `..` segment. Module strings never climb out
/// of the workspace root, so such a target is a path to check against the jail. A leading `\`
/// is not a path: it is a fully qualified PHP name (`\Acme\Orders\OrderService`).
pub(in crate::tools) fn looks_like_fs_path(target: &str) -> bool {
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

/// A path target: imports that resolve to the file (or to a file under the directory), and one
/// level through barrels that re-export it.
pub(super) fn path_importer_rows(snap: &Snapshot, target: &str, rows: &mut Vec<Row>) {
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
pub(super) fn dotnet_path_rows(
    snap: &Snapshot,
    modules: &Modules,
    target: &str,
    rows: &mut Vec<Row>,
) {
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
                    unimported_uses(snap, modules, &format!("{ns}.{}", f.name(s)), rows);
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

#[cfg(test)]
mod tests {
    use super::super::run;
    use crate::index::facts::Import;
    use crate::index::snapshot::Snapshot;
    use crate::tools::ToolOutput;
    use serde_json::{Value, json};

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
}
