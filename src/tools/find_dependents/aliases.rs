//! Uses through a module or namespace alias: the import names the module, not the target, and
//! the code reaches the target as `alias.target` — TypeScript/JavaScript `import * as m from
//! './money'`, Python `import a.b as m`, `from a import b as m` and `import a.b`, C# `using M =
//! Ns.Type;` and `using M = Ns;`. (Go's aliased imports are read with its packages, in
//! [`super::unimported`].)

use super::resolve::{Modules, declares_top_level};
use super::rows::{Row, push_call_row};
use super::unimported::first_use_of;
use crate::index::facts::{Import, Language, SymbolKind};
use crate::index::snapshot::{FileEntry, Snapshot};

/// Rows for the files that import the module declaring `target` under an alias (or, in
/// Python, by its dotted path) and use `alias.target` in their code. The import must resolve
/// to the declaring file (through re-exports too), so each row is `exact`; a file that already
/// has a row is left alone.
pub(super) fn alias_uses(snap: &Snapshot, modules: &Modules, target: &str, rows: &mut Vec<Row>) {
    if target.is_empty()
        || !target
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return;
    }
    let csharp_decls = csharp_declarations(snap, target);
    for (fi, f) in snap.files.iter().enumerate() {
        if rows.iter().any(|r| r.file == fi as u32) {
            continue;
        }
        // Every alias of the declaring module in the file, then one read of the file.
        let mut found: Vec<(u32, String, String)> = Vec::new();
        for imp in &f.facts().imports {
            let hit = match f.lang {
                Language::TypeScript | Language::JavaScript | Language::Python => {
                    module_aliases(f.lang, imp)
                        .into_iter()
                        .find_map(|(module, local)| {
                            let origin = modules.origins(fi as u32, &module, target).first()?.0;
                            Some((origin, local, module))
                        })
                }
                Language::CSharp => imp.alias.as_ref().and_then(|alias| {
                    let origin = csharp_decls
                        .iter()
                        .find(|(_, scope)| *scope == imp.module)?
                        .0;
                    Some((origin, alias.clone(), imp.module.clone()))
                }),
                _ => None,
            };
            if let Some(hit) = hit.filter(|(origin, local, _)| {
                *origin as usize != fi && !found.iter().any(|(_, l, _)| l == local)
            }) {
                found.push(hit);
            }
        }
        if found.is_empty() {
            continue;
        }
        let needles: Vec<String> = found
            .iter()
            .map(|(_, local, _)| format!("{local}.{target}"))
            .collect();
        let needle_refs: Vec<&str> = needles.iter().map(String::as_str).collect();
        let Some((line, n)) = first_use_of(snap, f, &needle_refs) else {
            continue;
        };
        let (origin, local, module) = &found[n];
        let via = format!("uses {} (`{local}` is {module})", needles[n]);
        push_call_row(rows, f, fi as u32, line, &via, "exact");
        if let Some(r) = rows.last_mut() {
            r.origin = Some(*origin);
        }
    }
}

/// The (module, local name) pairs an import binds to a whole module: `import * as m` and
/// `import a.b as m` give the module under its alias, Python `import a.b` gives `a.b` under
/// its dotted path, and Python `from a import b as m` gives the submodule `a.b` under `m`
/// (`from . import b` gives `.b`). A name that is not a submodule resolves to nothing later.
fn module_aliases(lang: Language, imp: &Import) -> Vec<(String, String)> {
    let mut out = Vec::new();
    match &imp.alias {
        Some(alias) => out.push((imp.module.clone(), alias.clone())),
        None if lang == Language::Python
            && imp.names.is_empty()
            && !imp.module.starts_with('.') =>
        {
            out.push((imp.module.clone(), imp.module.clone()))
        }
        None => {}
    }
    if lang == Language::Python {
        for name in &imp.names {
            let local = imp
                .renamed
                .iter()
                .find(|(original, _)| original == name)
                .map_or(name.as_str(), |(_, local)| local.as_str());
            let module = if imp.module.ends_with('.') {
                format!("{}{name}", imp.module)
            } else {
                format!("{}.{name}", imp.module)
            };
            out.push((module, local.to_string()));
        }
    }
    out
}

/// The C# files declaring `target`, each with the scope a `using` alias must name to reach it
/// as `alias.target`: the declaring type's full name for a member (`Acme.Money.Formatter` for
/// `Format`), the namespace for a top-level type (`Acme.Money` for `Formatter`).
fn csharp_declarations(snap: &Snapshot, target: &str) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for (fi, f) in snap.files.iter().enumerate() {
        if f.lang != Language::CSharp || f.is_test {
            continue;
        }
        let Some(namespace) = f.facts().package.as_deref() else {
            continue;
        };
        if declares_top_level(f, target) {
            out.push((fi as u32, namespace.to_string()));
        }
        for s in f.symbols().iter().filter(|s| f.name(s) == target) {
            if let Some(owner) = member_owner(f, f.container(s), namespace) {
                out.push((fi as u32, format!("{namespace}.{owner}")));
            }
        }
    }
    out
}

/// The type a member belongs to, when its container is a type of the file (not the namespace).
fn member_owner<'f>(
    f: &'f FileEntry,
    container: Option<&'f str>,
    namespace: &str,
) -> Option<&'f str> {
    let owner = container.filter(|c| *c != namespace)?;
    f.symbols()
        .iter()
        .any(|t| {
            f.name(t) == owner
                && matches!(
                    t.kind,
                    SymbolKind::Class
                        | SymbolKind::Interface
                        | SymbolKind::Struct
                        | SymbolKind::Enum
                )
        })
        .then_some(owner)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{on_disk, query};
    use serde_json::json;

    /// `find_dependents` of `target` over `files`, as the answer's text.
    fn dependents(tag: &str, files: &[(&str, &str, &str)], target: &str) -> String {
        let (base, snap) = on_disk(tag, files);
        let out = query(&snap, json!({"target": target}));
        let _ = std::fs::remove_dir_all(&base);
        out.text
    }

    #[test]
    fn typescript_namespace_imports_reach_the_target_beside_direct_importers() {
        let t = dependents(
            "alias-ts",
            &[
                ("shared", "package.json", "{\"name\": \"@acme/shared\"}\n"),
                (
                    "shared",
                    "src/money.ts",
                    "export function formatMoney(c: number) { return c; }\n",
                ),
                ("shared", "src/index.ts", "export * from './money';\n"),
                (
                    "web",
                    "cart.ts",
                    "import * as m from '../shared/src/money';\n\n// m.formatMoney in a comment\nexport const total = (c: number) => m.formatMoney(c);\n",
                ),
                // Through the package name and its barrel.
                (
                    "web",
                    "list.ts",
                    "import * as shared from '@acme/shared';\nexport const show = shared.formatMoney(1);\n",
                ),
                (
                    "admin",
                    "report.ts",
                    "import { formatMoney } from '../shared/src/money';\nexport const r = formatMoney(5);\n",
                ),
                // An alias of a module that does not declare it.
                (
                    "web",
                    "other.ts",
                    "import * as m from './money';\nexport const x = m.formatMoney(2);\n",
                ),
                ("web", "money.ts", "export const rate = 1;\n"),
                // `décafé` is another name than the alias `café`.
                (
                    "web",
                    "decafe.ts",
                    "import * as café from '../shared/src/money';\nexport const t = décafé.formatMoney(1);\n",
                ),
            ],
            "formatMoney",
        );
        assert!(
            t.contains("`web/cart.ts:4` — uses m.formatMoney (`m` is ../shared/src/money)"),
            "{t}"
        );
        assert!(
            t.contains("`web/list.ts:2` — uses shared.formatMoney (`shared` is @acme/shared)"),
            "{t}"
        );
        assert!(t.contains("`admin/report.ts:1`"), "{t}");
        assert!(!t.contains("web/other.ts"), "{t}");
        assert!(!t.contains("web/decafe.ts"), "{t}");
    }

    #[test]
    fn python_module_aliases_and_dotted_imports() {
        let t = dependents(
            "alias-py",
            &[
                ("common", "common/__init__.py", ""),
                (
                    "common",
                    "common/pricing.py",
                    "def to_cents(amount):\n    return int(amount * 100)\n",
                ),
                (
                    "orders",
                    "app.py",
                    "import common.pricing as p\n\ndef charge(x):\n    # p.to_cents(0) is not a use\n    return x // 2 + p.to_cents(x)\n",
                ),
                (
                    "payments",
                    "app.py",
                    "from common import pricing as pr\n\ndef pay(x):\n    return pr.to_cents(x)\n",
                ),
                (
                    "refunds",
                    "app.py",
                    "import common.pricing\n\ndef back(x):\n    return common.pricing.to_cents(-x)\n",
                ),
                // A same-named function of another module.
                ("tax", "tax.py", "def to_cents(v):\n    return v\n"),
                (
                    "invoices",
                    "app.py",
                    "import tax as p\n\ndef bill(x):\n    return p.to_cents(x)\n",
                ),
            ],
            "to_cents",
        );
        assert!(
            t.contains("`orders/app.py:5` — uses p.to_cents (`p` is common.pricing)"),
            "{t}"
        );
        assert!(
            t.contains("`payments/app.py:4` — uses pr.to_cents (`pr` is common.pricing)"),
            "{t}"
        );
        assert!(
            t.contains("`refunds/app.py:4` — uses common.pricing.to_cents"),
            "{t}"
        );
        assert!(
            t.contains("`invoices/app.py:4` — uses p.to_cents (`p` is tax)"),
            "{t}"
        );
        assert!(!t.contains("found by name"), "{t}");
    }

    #[test]
    fn csharp_using_aliases_of_a_type_and_of_a_namespace() {
        let formatter = "namespace Acme.Billing.Money;\n\npublic static class Formatter\n{\n    public static string Format(int cents) => \"\";\n}\n";
        let files = [
            ("billing", "Money/Formatter.cs", formatter),
            (
                "api",
                "Prices.cs",
                "using F = Acme.Billing.Money.Formatter;\n\nnamespace Acme.Api;\n\npublic class Prices\n{\n    public string Show(int c) => F.Format(c);\n}\n",
            ),
            (
                "web",
                "Labels.cs",
                "using M = Acme.Billing.Money;\n\nnamespace Acme.Web;\n\npublic class Labels\n{\n    public string Show(int c) => M.Formatter.Format(c);\n}\n",
            ),
            // An alias of another type.
            (
                "web",
                "Dates.cs",
                "using F = System.DateTime;\n\nnamespace Acme.Web;\n\npublic class Dates\n{\n    public string Show() => F.Format();\n}\n",
            ),
        ];
        let t = dependents("alias-cs-member", &files, "Format");
        assert!(
            t.contains("`api/Prices.cs:7` — uses F.Format (`F` is Acme.Billing.Money.Formatter)"),
            "{t}"
        );
        assert!(!t.contains("web/Dates.cs"), "{t}");
        let t = dependents("alias-cs-type", &files, "Formatter");
        assert!(
            t.contains("`web/Labels.cs:7` — uses M.Formatter (`M` is Acme.Billing.Money)"),
            "{t}"
        );
    }
}
