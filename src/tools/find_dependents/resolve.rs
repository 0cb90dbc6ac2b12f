//! Where an import leads: the workspace files a module string names as seen from the
//! importing file (a relative path, a Python dotted module, a workspace package by its
//! package.json `name`, a Go import path under a go.mod `module`), and the file declaring a
//! name the import takes, through re-exports (`export * from './money'`, `export { a as b }`,
//! `from .money import to_cents` in a package's `__init__.py`).

use std::collections::{HashMap, HashSet};

use super::manifests::{Ecosystem, Manifest};
use crate::index::facts::{Language, SymbolKind};
use crate::index::modules::{import_path_keys, join_lexically, path_key};
use crate::index::snapshot::{FileEntry, Snapshot};

/// Re-exports followed from one import at most (a barrel of barrels of barrels).
const MAX_REEXPORT_DEPTH: u8 = 4;

/// The module tables of one query.
pub(super) struct Modules<'a> {
    snap: &'a Snapshot,
    /// [`path_key`] of each file's workspace path → the files.
    by_key: HashMap<String, Vec<u32>>,
    /// Workspace directory → its Go files (a Go package is a directory).
    go_dirs: HashMap<String, Vec<u32>>,
    /// (package name, directory) of each package.json declaring a name.
    npm: Vec<(String, String)>,
    /// (module path, directory) of each go.mod.
    go: Vec<(String, String)>,
}

/// The directory of a workspace path (`""` at the top).
fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// `dir` joined with a module subpath `rest` (`""` or `/sub/pkg`).
fn below(dir: &str, rest: &str) -> String {
    let rest = rest.trim_start_matches('/');
    match (dir.is_empty(), rest.is_empty()) {
        (_, true) => dir.to_string(),
        (true, false) => rest.to_string(),
        (false, false) => format!("{dir}/{rest}"),
    }
}

/// What follows `name` in `module` when `module` is `name` or a subpath of it.
fn subpath<'m>(module: &'m str, name: &str) -> Option<&'m str> {
    module
        .strip_prefix(name)
        .filter(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Whether file `f` declares `name` at its top level (not as a module or section).
pub(super) fn declares_top_level(f: &FileEntry, name: &str) -> bool {
    let package = f.facts().package.as_deref();
    f.symbols().iter().any(|s| {
        f.name(s) == name
            && f.container(s).is_none_or(|c| Some(c) == package)
            && !matches!(s.kind, SymbolKind::Module | SymbolKind::Section)
    })
}

impl<'a> Modules<'a> {
    pub(super) fn new(snap: &'a Snapshot, manifests: &[Manifest]) -> Modules<'a> {
        let mut by_key: HashMap<String, Vec<u32>> = HashMap::new();
        let mut go_dirs: HashMap<String, Vec<u32>> = HashMap::new();
        for (fi, f) in snap.files.iter().enumerate() {
            let path = snap.display_path(f);
            if f.lang == Language::Go {
                go_dirs
                    .entry(dir_of(&path).to_string())
                    .or_default()
                    .push(fi as u32);
            }
            by_key.entry(path_key(&path)).or_default().push(fi as u32);
        }
        let named = |eco: Ecosystem| -> Vec<(String, String)> {
            manifests
                .iter()
                .filter(|m| m.ecosystem == eco)
                .filter_map(|m| Some((m.name.clone()?.0, dir_of(&m.path).to_string())))
                .collect()
        };
        Modules {
            snap,
            by_key,
            go_dirs,
            npm: named(Ecosystem::Npm),
            go: named(Ecosystem::Go),
        }
    }

    /// The Go import path of a workspace directory: its go.mod's `module` and the directory
    /// below it (the nearest go.mod at or above it), or `None` outside any go.mod.
    pub(super) fn go_import_path(&self, dir: &str) -> Option<String> {
        self.go
            .iter()
            .filter_map(|(module, root)| {
                let rest = if root.is_empty() {
                    Some(dir)
                } else {
                    dir.strip_prefix(root.as_str())
                        .filter(|r| r.is_empty() || r.starts_with('/'))
                }?;
                Some((root.len(), below(module, rest)))
            })
            .max_by_key(|(depth, _)| *depth)
            .map(|(_, path)| path)
    }

    /// The workspace files that `module`, imported by file `fi`, names: a file (a barrel, a
    /// package's `index`/`__init__`), or a Go package's files. Empty for a module outside the
    /// workspace and for the languages that import by namespace (JVM, C#, PHP).
    pub(super) fn files(&self, fi: u32, module: &str) -> Vec<u32> {
        let f = &self.snap.files[fi as usize];
        let path = self.snap.display_path(f);
        let mut keys;
        match f.lang {
            Language::Go => {
                let dirs: Vec<String> = self
                    .go
                    .iter()
                    .filter_map(|(m, dir)| subpath(module, m).map(|rest| below(dir, rest)))
                    .collect();
                let mut out: Vec<u32> = dirs
                    .iter()
                    .flat_map(|d| self.go_dirs.get(d).into_iter().flatten().copied())
                    .collect();
                out.sort_unstable();
                out.dedup();
                return out;
            }
            Language::Python => {
                keys = import_path_keys(&path, module, true);
                // Another root's package, at its top or in a `src` layout.
                if !module.starts_with('.') && !keys.iter().any(|k| self.by_key.contains_key(k)) {
                    let rel = module.replace('.', "/");
                    for r in &self.snap.roots {
                        let top = if r.label == "." { "" } else { r.label.as_str() };
                        keys.extend(join_lexically(top, &rel));
                        keys.extend(join_lexically(top, &format!("src/{rel}")));
                    }
                }
            }
            Language::TypeScript | Language::JavaScript => {
                keys = import_path_keys(&path, module, false);
                if !module.starts_with('.') {
                    // A workspace package by its name: its folder, or its `src`.
                    for (name, dir) in &self.npm {
                        if let Some(rest) = subpath(module, name) {
                            keys.push(path_key(&below(dir, rest)));
                            keys.push(path_key(&below(&below(dir, "src"), rest)));
                        }
                    }
                }
            }
            _ => return Vec::new(),
        }
        let mut out: Vec<u32> = keys
            .iter()
            .flat_map(|k| self.by_key.get(k).into_iter().flatten().copied())
            .filter(|&x| x != fi)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The files declaring `name` at their top level, with the name they declare, as file
    /// `fi` takes `name` from `module`: the files the module names, else the ones their
    /// re-exports lead to (`export *` passes every name on, `export { a as b }` gives `b`).
    pub(super) fn origins(&self, fi: u32, module: &str, name: &str) -> Vec<(u32, String)> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        self.origins_into(fi, module, name, 0, &mut seen, &mut out);
        out
    }

    fn origins_into(
        &self,
        fi: u32,
        module: &str,
        name: &str,
        depth: u8,
        seen: &mut HashSet<(u32, String)>,
        out: &mut Vec<(u32, String)>,
    ) {
        for x in self.files(fi, module) {
            if !seen.insert((x, name.to_string())) {
                continue;
            }
            let f = &self.snap.files[x as usize];
            if declares_top_level(f, name) {
                out.push((x, name.to_string()));
                continue;
            }
            if depth >= MAX_REEXPORT_DEPTH {
                continue;
            }
            for imp in f.facts().imports.iter().filter(|i| i.reexport) {
                let passed = if imp.names.is_empty() && imp.alias.is_none() {
                    Some(name)
                } else {
                    imp.imported_as(name)
                };
                if let Some(original) = passed {
                    self.origins_into(x, &imp.module, original, depth + 1, seen, out);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::manifests::manifests;
    use super::super::test_support::on_disk;
    use super::Modules;

    #[test]
    fn imports_resolve_through_packages_and_reexports() {
        let (base, snap) = on_disk(
            "resolve",
            &[
                ("lib", "package.json", "{\"name\": \"@acme/shared\"}\n"),
                (
                    "lib",
                    "src/money.ts",
                    "export function formatMoney(c: number) { return c; }\n",
                ),
                (
                    "lib",
                    "src/index.ts",
                    "export * from './money';\nexport { formatMoney as fmt } from './money';\n",
                ),
                (
                    "web",
                    "app.ts",
                    "import { fmt } from '@acme/shared';\nimport * as s from '@acme/shared';\n",
                ),
                ("py", "pkg/money.py", "def to_cents(x):\n    return x\n"),
                ("py", "pkg/__init__.py", "from .money import to_cents\n"),
                ("py", "app.py", "from pkg import to_cents\n"),
                ("go", "go.mod", "module example.com/x/money\n"),
                ("go", "money.go", "package money\n\nfunc ToCents() {}\n"),
                ("go", "sub/sub.go", "package sub\n"),
                (
                    "shop",
                    "main.go",
                    "package main\n\nimport \"example.com/x/money\"\n",
                ),
            ],
        );
        let m = Modules::new(&snap, &manifests(&snap));
        let idx = |p: &str| {
            snap.files
                .iter()
                .position(|f| snap.display_path(f) == p)
                .unwrap() as u32
        };
        let _ = std::fs::remove_dir_all(&base);
        let money = idx("lib/src/money.ts");
        // A package name leads to its `src/index`, and on through `export *` or a rename.
        assert_eq!(
            m.files(idx("web/app.ts"), "@acme/shared"),
            vec![idx("lib/src/index.ts")]
        );
        assert_eq!(
            m.origins(idx("web/app.ts"), "@acme/shared", "fmt"),
            vec![(money, "formatMoney".to_string())]
        );
        assert_eq!(
            m.origins(idx("web/app.ts"), "@acme/shared", "formatMoney"),
            vec![(money, "formatMoney".to_string())]
        );
        assert!(
            m.origins(idx("web/app.ts"), "@acme/shared", "other")
                .is_empty()
        );
        // A package's `__init__.py` re-export.
        assert_eq!(
            m.origins(idx("py/app.py"), "pkg", "to_cents"),
            vec![(idx("py/pkg/money.py"), "to_cents".to_string())]
        );
        // A go.mod whose own folder holds the package.
        assert_eq!(
            m.files(idx("shop/main.go"), "example.com/x/money"),
            vec![idx("go/money.go")]
        );
        assert_eq!(
            m.go_import_path("go").as_deref(),
            Some("example.com/x/money")
        );
        assert_eq!(
            m.go_import_path("go/sub").as_deref(),
            Some("example.com/x/money/sub")
        );
        assert_eq!(m.go_import_path("shop"), None);
    }
}
