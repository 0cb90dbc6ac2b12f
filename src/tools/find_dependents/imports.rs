//! Matching an import against the target: exact, a sub-package of it, or only containing it.

use crate::index::facts::{Import, Language};

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

pub(super) fn is_builtin(module: &str) -> bool {
    module.starts_with("node:") || BUILTINS.contains(&module)
}

pub(super) fn last_segment(module: &str) -> &str {
    module
        .rsplit(['/', '.', ':', '\\'])
        .find(|s| !s.is_empty())
        .unwrap_or(module)
}

/// How an import matches the target, when it does (see [`import_match`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ImportMatch {
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
pub(super) fn import_match(imp: &Import, target: &str, lang: Language) -> Option<ImportMatch> {
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

#[cfg(test)]
mod tests {
    use super::super::run;
    use super::{ImportMatch, import_match};
    use crate::index::facts::{Import, Language};
    use crate::index::snapshot::Snapshot;
    use crate::tools::ToolOutput;
    use serde_json::{Value, json};

    fn call(snap: &Snapshot, args: Value) -> ToolOutput {
        crate::tools::run_on(run, snap, &args)
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
