//! Uses that no import names: same-package users, Go importers as `pkg.Name`, JVM wildcard
//! imports, C# `using` and `global using`, and Razor imports files.

use super::calls::is_word_byte;
use super::imports::last_segment;
use super::resolve::Modules;
use super::rows::{Row, package_of, push_call_row};
use crate::index::facts::{Language, SymbolKind, is_razor};
use crate::index::snapshot::{FileEntry, Snapshot};

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
/// of its package as `pkg.Name` (the package by its import path under its go.mod, else by the
/// folder's trailing segments). Each is the name's first use as a word in the file's code,
/// a `heuristic` row: the index keeps imports, not every reference.
pub(super) fn unimported_uses(
    snap: &Snapshot,
    modules: &Modules,
    target: &str,
    rows: &mut Vec<Row>,
) {
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
        // The package's import path, when a go.mod says it (its root folder may be the package).
        let go_path = if go {
            modules.go_import_path(folder_of(&snap.display_path(d)))
        } else {
            None
        };
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
                    match &go_path {
                        Some(p) => m == p,
                        None => {
                            (!dir.is_empty() && (m == dir || m.ends_with(&format!("/{dir}"))))
                                || (m.rsplit('/').next() == dir.rsplit('/').next()
                                    && m.rsplit('/').next() == Some(pkg.as_str()))
                        }
                    }
                }) else {
                    continue;
                };
                // Unaliased, the package's own name (its `package` clause) is what the file uses.
                let alias = match (&imp.alias, &go_path, &d.facts().package) {
                    (Some(a), _, _) => a.clone(),
                    (None, Some(_), Some(name)) => name.clone(),
                    _ => last_segment(&imp.module).to_string(),
                };
                if alias == "_" || alias == "." {
                    continue;
                }
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

/// The first line of `f` where `needle` appears as a whole word outside a line comment (`#`
/// in Python and Ruby, where `//` is an operator, else `//`) or an import/package line; `None`
/// when the file cannot be read or never uses it.
pub(super) fn first_use(snap: &Snapshot, f: &FileEntry, needle: &str) -> Option<u32> {
    first_use_of(snap, f, &[needle]).map(|(line, _)| line)
}

/// [`first_use`] of any of `needles` in one read of the file: the line and which needle.
/// A non-ASCII letter next to a match makes it part of a longer word (`décafé` is not `café`).
pub(super) fn first_use_of(
    snap: &Snapshot,
    f: &FileEntry,
    needles: &[&str],
) -> Option<(u32, usize)> {
    let text = std::fs::read_to_string(snap.abs_path(f)).ok()?;
    let comment = match f.lang {
        Language::Python | Language::Ruby => "#",
        _ => "//",
    };
    let word = |b: u8| is_word_byte(b) || b >= 0x80;
    for (k, line) in text.lines().enumerate() {
        let code = line.split(comment).next().unwrap_or("");
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
        let found = needles.iter().position(|needle| {
            code.match_indices(needle).any(|(at, _)| {
                let before = at.checked_sub(1).map(|i| bytes[i]);
                let after = bytes.get(at + needle.len()).copied();
                !before.is_some_and(|b| word(b) || b == b'.' && !needle.contains('.'))
                    && !after.is_some_and(word)
            })
        });
        if let Some(n) = found {
            return Some((u32::try_from(k + 1).ok()?, n));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{on_disk, query};
    use serde_json::json;

    #[test]
    fn go_importers_of_a_module_whose_root_folder_holds_the_package() {
        // The module's own package is its root folder: no sub-folder names it, the import path
        // is the go.mod `module` line itself.
        let (base, snap) = on_disk(
            "go-root-package",
            &[
                ("money", "go.mod", "module example.com/x/money\n\ngo 1.21\n"),
                (
                    "money",
                    "money.go",
                    "package money\n\nfunc ToCents(v float64) int64 {\n\treturn int64(v * 100)\n}\n",
                ),
                (
                    "money",
                    "round.go",
                    "package money\n\nfunc Round(v float64) int64 {\n\treturn ToCents(v)\n}\n",
                ),
                ("shop", "go.mod", "module example.com/shop\n"),
                (
                    "shop",
                    "main.go",
                    "package main\n\nimport m \"example.com/x/money\"\n\nfunc main() {\n\t_ = m.ToCents(1.5)\n}\n",
                ),
                (
                    "shop",
                    "cmd/run.go",
                    "package cmd\n\nimport (\n\t\"example.com/x/money\"\n)\n\nfunc Run() int64 {\n\treturn money.ToCents(2)\n}\n",
                ),
                // Another module's root package of the same name is not it.
                ("other", "go.mod", "module example.com/y/money\n"),
                (
                    "other",
                    "use.go",
                    "package other\n\nimport \"example.com/y/money\"\n\nvar X = money.ToCents(3)\n",
                ),
            ],
        );
        let out = query(&snap, json!({"target": "ToCents"}));
        let _ = std::fs::remove_dir_all(&base);
        let t = &out.text;
        assert!(t.contains("`shop/main.go:6` — uses m.ToCents"), "{t}");
        assert!(
            t.contains("`shop/cmd/run.go:8` — uses money.ToCents"),
            "{t}"
        );
        assert!(!t.contains("other/use.go"), "{t}");
    }
}
