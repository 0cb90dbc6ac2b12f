//! Which workspace file an import points at: relative specifiers (`./config`, `../lib/x`),
//! Python relative and sibling modules (`.models`, `from store import Store` next to
//! `store.py`), quoted includes and proto imports. Shared by the graph (to follow a name
//! into the module that defines it) and `find_dependents` (to list who imports a file).

/// A workspace path without its extension (`a/b/c.ts` → `a/b/c`); `index` and `__init__`
/// files stand for their directory, as module resolution treats them.
pub fn path_key(path: &str) -> String {
    let name_start = path.rfind('/').map_or(0, |i| i + 1);
    let stem = match path[name_start..].rfind('.') {
        Some(i) if i > 0 => &path[..name_start + i],
        _ => path,
    };
    stem.strip_suffix("/index")
        .or_else(|| stem.strip_suffix("/__init__"))
        .unwrap_or(stem)
        .to_string()
}

/// Joins `rel` to `dir` lexically (`..` and `.` resolved); `None` when it climbs above the
/// workspace.
pub fn join_lexically(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// The workspace paths (extension-less keys, see [`path_key`]) an import may point at.
/// `importer` is the importing file's workspace path. Relative specifiers and quoted includes
/// resolve against the importer's directory; Python relative modules (`.models`,
/// `..pkg.mod`) climb packages; a bare Python module (`store`, `app.models`) is tried next to
/// the importer, which is how a script's own directory is on `sys.path`.
pub fn import_path_keys(importer: &str, module: &str, python: bool) -> Vec<String> {
    let dir = importer.rsplit_once('/').map_or("", |(d, _)| d);
    let mut out = Vec::new();
    if module.starts_with("./") || module.starts_with("../") {
        out.extend(join_lexically(dir, module));
    } else if let Some(rest) = module.strip_prefix('.') {
        // Python: one dot is this package, each further dot one level up.
        let ups = rest.len() - rest.trim_start_matches('.').len();
        let rel = rest.trim_start_matches('.').replace('.', "/");
        let mut up = String::new();
        for _ in 0..ups {
            up.push_str("../");
        }
        out.extend(join_lexically(dir, &format!("{up}{rel}")));
    } else if module.contains('/') || module.ends_with(".h") || module.ends_with(".hpp") {
        // `#include "quote.h"`, `import "common/v1/money.proto"`: next to the importer.
        out.extend(join_lexically(dir, module));
    } else if python && !module.is_empty() {
        // Next to the importer (a script's own directory is on `sys.path`), then from each
        // directory above it, nearest first: `from app.api.routes import x` in
        // `backend/app/main.py` is `backend/app/api/routes` when `backend` is the project.
        let rel = module.replace('.', "/");
        let mut d = dir;
        loop {
            out.extend(join_lexically(d, &rel));
            match d.rsplit_once('/') {
                Some((up, _)) => d = up,
                None if !d.is_empty() => d = "",
                None => break,
            }
        }
    }
    out.into_iter().map(|p| path_key(&p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_relative_imports() {
        assert_eq!(path_key("a/b/c.ts"), "a/b/c");
        assert_eq!(path_key("a/b/index.ts"), "a/b");
        assert_eq!(path_key("pkg/__init__.py"), "pkg");
        assert_eq!(
            import_path_keys("web/src/app.ts", "./lookups", false),
            vec!["web/src/lookups"]
        );
        assert_eq!(
            import_path_keys("web/src/x/app.ts", "../lib/y", false),
            vec!["web/src/lib/y"]
        );
        assert_eq!(
            import_path_keys("svc/app/views.py", ".models", true),
            vec!["svc/app/models"]
        );
        assert_eq!(
            import_path_keys("svc/app/views.py", "..core.db", true),
            vec!["svc/core/db"]
        );
        // A script's sibling module, and never for other languages.
        assert_eq!(
            import_path_keys("payment/payment.py", "rabbitmq", true),
            vec!["payment/rabbitmq", "rabbitmq"]
        );
        // An absolute package import from a directory above the importer.
        assert_eq!(
            import_path_keys("backend/app/main.py", "app.api.routes", true),
            vec![
                "backend/app/app/api/routes",
                "backend/app/api/routes",
                "app/api/routes"
            ]
        );
        assert!(import_path_keys("payment/payment.js", "rabbitmq", false).is_empty());
        assert_eq!(
            import_path_keys("a.ts", "../../x", false),
            Vec::<String>::new()
        );
    }
}
