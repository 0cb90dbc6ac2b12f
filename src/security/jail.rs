//! The path jail: every path argument must resolve inside a configured root.
//!
//! A raw argument is checked for bad bytes, anchored on the workspace directory when relative,
//! cleaned lexically, canonicalised (which resolves symlinks) and finally compared component by
//! component with the canonical roots. Nothing outside the roots is ever opened, and errors never
//! reveal whether a path outside the roots exists.

use std::ffi::OsStr;
use std::fmt;
use std::path::{Component, Path, PathBuf};

/// Longest raw path argument accepted, in bytes (the Linux `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;

/// Longest single path component accepted, in bytes (the Linux `NAME_MAX`).
pub const MAX_COMPONENT_BYTES: usize = 255;

/// Directories that may never be configured as a root, because indexing them would expose the
/// whole machine rather than a workspace (the configuration refuses them, and `$HOME` itself,
/// compared after canonicalisation; their subdirectories are fine).
pub const PROHIBITED_ROOTS: &[&str] = &[
    "/", "/etc", "/var", "/tmp", "/usr", "/bin", "/sbin", "/lib", "/proc", "/sys", "/dev", "/boot",
    "/home", "/root", "/Users",
];

/// The set of directories path arguments may point into.
///
/// Built once from the configuration; cheap to share behind an `Arc`.
#[derive(Debug, Clone)]
pub struct Jail {
    base: PathBuf,
    roots: Vec<PathBuf>,
}

/// A path argument that passed the jail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The canonical path (symlinks resolved, no `.` or `..`).
    pub path: PathBuf,
    /// Index into [`Jail::roots`] of the most specific root containing `path`.
    pub root_index: usize,
}

/// Why a path argument or a configured root was refused.
///
/// Messages name the problem and, where it helps, the scopes that would have been accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JailError {
    /// The argument was an empty string (omit the argument to mean every root).
    Empty,
    /// The argument contained a NUL byte at this byte offset.
    NulByte {
        /// Byte offset of the first NUL.
        offset: usize,
    },
    /// The argument, or one of its components, is longer than the system allows.
    TooLong {
        /// Length found, in bytes.
        len: usize,
        /// The limit that was exceeded, in bytes.
        limit: usize,
        /// True when a single component was too long, false for the whole path.
        component: bool,
    },
    /// The argument contained a control character (newline, tab, escape, …).
    ControlCharacter {
        /// Byte offset of the first control character.
        offset: usize,
        /// The offending character.
        ch: char,
    },
    /// The path lies inside a root but does not exist.
    NotFound {
        /// The argument as given.
        raw: String,
        /// The allowed scopes, relative to the workspace, with `/`.
        allowed: Vec<String>,
    },
    /// The path resolves outside every root (an escape, an absolute path elsewhere, a sibling
    /// with a shared prefix, or a symlink leading out).
    OutsideRoots {
        /// The argument as given.
        raw: String,
        /// The allowed scopes, relative to the workspace, with `/`.
        allowed: Vec<String>,
    },
    /// The path is a parent of one or more roots (for example the directory that holds them).
    ParentOfRoot {
        /// The argument as given.
        raw: String,
        /// The allowed scopes, relative to the workspace, with `/`.
        allowed: Vec<String>,
    },
}

impl fmt::Display for JailError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JailError::Empty => {
                f.write_str("the path is empty; omit the scope to search all roots")
            }
            JailError::NulByte { offset } => {
                write!(
                    f,
                    "the path contains a NUL byte at byte {offset}; remove it"
                )
            }
            JailError::TooLong {
                len,
                limit,
                component: false,
            } => write!(
                f,
                "the path is {len} bytes long; the limit is {limit} bytes"
            ),
            JailError::TooLong {
                len,
                limit,
                component: true,
            } => write!(
                f,
                "a path component is {len} bytes long; the limit is {limit} bytes per component"
            ),
            JailError::ControlCharacter { offset, ch } => write!(
                f,
                "the path contains the control character U+{:04X} at byte {offset}; remove it",
                u32::from(*ch)
            ),
            JailError::NotFound { raw, allowed } => {
                write!(f, "no such path inside the workspace: `{raw}`")?;
                write_allowed(f, allowed)
            }
            JailError::OutsideRoots { raw, allowed } => {
                write!(f, "`{raw}` resolves outside the configured roots")?;
                write_allowed(f, allowed)
            }
            JailError::ParentOfRoot { raw, allowed } => {
                write!(
                    f,
                    "`{raw}` is a parent of the configured roots, not inside one"
                )?;
                write_allowed(f, allowed)
            }
        }
    }
}

impl std::error::Error for JailError {}

/// Appends "; allowed scopes: `a`, `b` (or omit scope for all roots)".
fn write_allowed(f: &mut fmt::Formatter<'_>, allowed: &[String]) -> fmt::Result {
    if allowed.is_empty() {
        return f.write_str("; no roots are configured");
    }
    f.write_str("; allowed scopes: ")?;
    for (i, scope) in allowed.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "`{scope}`")?;
    }
    f.write_str(" (or omit scope for all roots)")
}

impl Jail {
    /// Creates a jail for the workspace `base` and its canonical `roots`.
    ///
    /// Both are canonicalised again when possible, so a caller passing a symlinked spelling
    /// still gets component-wise comparisons against the real directories.
    pub fn new(base: PathBuf, roots: Vec<PathBuf>) -> Jail {
        let base = std::fs::canonicalize(&base).unwrap_or(base);
        let roots = roots
            .into_iter()
            .map(|root| std::fs::canonicalize(&root).unwrap_or(root))
            .collect();
        Jail { base, roots }
    }

    /// The canonical roots, in configuration order ([`Resolved::root_index`] points here).
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The canonical workspace directory relative paths are anchored on.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// True when `raw` names the whole workspace, which tools read as "all roots".
    ///
    /// Covers "", ".", "./", "*" and any spelling whose canonical form is the workspace itself.
    pub fn is_workspace_spelling(&self, raw: &str) -> bool {
        if matches!(raw, "" | "." | "./" | "*") {
            return true;
        }
        if check_raw(raw).is_err() {
            return false;
        }
        let cleaned = clean(&self.anchor(raw));
        match std::fs::canonicalize(&cleaned) {
            Ok(canonical) => canonical == self.base,
            Err(_) => cleaned == self.base,
        }
    }

    /// Resolves a path argument to a canonical path inside one of the roots.
    ///
    /// Relative paths are anchored on [`Jail::base`]. The path must exist. The workspace itself
    /// is refused here as a parent of the roots; check [`Jail::is_workspace_spelling`] first.
    pub fn resolve(&self, raw: &str) -> Result<Resolved, JailError> {
        check_raw(raw)?;
        let cleaned = clean(&self.anchor(raw));
        let canonical = match std::fs::canonicalize(&cleaned) {
            Ok(canonical) => canonical,
            Err(err) => {
                // Only admit that a path is missing when it would have been inside a root;
                // anything else is reported as outside, so the error is no existence oracle.
                let probed = probe_missing(&cleaned);
                if self.most_specific_root(&probed).is_some() {
                    tracing::debug!(target: "mesh::security", raw, error = %err, "path not found");
                    return Err(JailError::NotFound {
                        raw: raw.to_owned(),
                        allowed: self.allowed_scopes(),
                    });
                }
                tracing::info!(target: "mesh::security", raw, "path outside the roots refused");
                return Err(JailError::OutsideRoots {
                    raw: raw.to_owned(),
                    allowed: self.allowed_scopes(),
                });
            }
        };
        if let Some(root_index) = self.most_specific_root(&canonical) {
            return Ok(Resolved {
                path: canonical,
                root_index,
            });
        }
        if self.roots.iter().any(|root| root.starts_with(&canonical)) {
            tracing::info!(target: "mesh::security", raw, "parent of the roots refused");
            return Err(JailError::ParentOfRoot {
                raw: raw.to_owned(),
                allowed: self.allowed_scopes(),
            });
        }
        tracing::warn!(
            target: "mesh::security",
            raw,
            resolved = %canonical.display(),
            "path outside the roots refused"
        );
        Err(JailError::OutsideRoots {
            raw: raw.to_owned(),
            allowed: self.allowed_scopes(),
        })
    }

    /// Joins a relative argument onto the base; absolute arguments are kept as they are.
    fn anchor(&self, raw: &str) -> PathBuf {
        let path = Path::new(raw);
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.base.join(path)
        }
    }

    /// The index of the longest root that contains `path` component-wise, if any.
    fn most_specific_root(&self, path: &Path) -> Option<usize> {
        self.roots
            .iter()
            .enumerate()
            .filter(|(_, root)| path.starts_with(root))
            .max_by_key(|(i, root)| (root.components().count(), std::cmp::Reverse(*i)))
            .map(|(i, _)| i)
    }

    /// The roots as a person would type them: relative to the base, with `/`.
    fn allowed_scopes(&self) -> Vec<String> {
        self.roots
            .iter()
            .map(|root| display_relative(&self.base, root))
            .collect()
    }
}

/// Shows `path` relative to `base` with `/` separators, or absolute when it is not under `base`.
fn display_relative(base: &Path, path: &Path) -> String {
    match path.strip_prefix(base) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
        Ok(rel) => rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        Err(_) => path.display().to_string(),
    }
}

/// Byte-level checks that come before any filesystem access.
fn check_raw(raw: &str) -> Result<(), JailError> {
    if raw.is_empty() {
        return Err(JailError::Empty);
    }
    if let Some(offset) = raw.bytes().position(|b| b == 0) {
        return Err(JailError::NulByte { offset });
    }
    if raw.len() > MAX_PATH_BYTES {
        return Err(JailError::TooLong {
            len: raw.len(),
            limit: MAX_PATH_BYTES,
            component: false,
        });
    }
    if let Some((offset, ch)) = raw.char_indices().find(|(_, c)| c.is_control()) {
        return Err(JailError::ControlCharacter { offset, ch });
    }
    if let Some(len) = Path::new(raw)
        .components()
        .map(|c| c.as_os_str().len())
        .find(|len| *len > MAX_COMPONENT_BYTES)
    {
        return Err(JailError::TooLong {
            len,
            limit: MAX_COMPONENT_BYTES,
            component: true,
        });
    }
    Ok(())
}

/// Removes `.` components and folds `..` into its parent without touching the filesystem.
///
/// A `..` at the root stays at the root, as the kernel does.
fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => out.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() && !path.has_root() {
                    out.push("..");
                }
            }
            Component::Normal(name) => out.push(name),
        }
    }
    out
}

/// For a path that does not exist, canonicalises its deepest existing ancestor and appends the
/// missing tail, so the jail can tell "missing inside a root" from "outside".
fn probe_missing(cleaned: &Path) -> PathBuf {
    let mut tail: Vec<&OsStr> = Vec::new();
    let mut current = cleaned;
    loop {
        if let Ok(mut canonical) = std::fs::canonicalize(current) {
            for name in tail.iter().rev() {
                canonical.push(name);
            }
            return canonical;
        }
        match (current.parent(), current.file_name()) {
            (Some(parent), Some(name)) => {
                tail.push(name);
                current = parent;
            }
            _ => return cleaned.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static COUNTER: AtomicUsize = AtomicUsize::new(0);

    /// A scratch directory under the system temp dir, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(tag: &str) -> Scratch {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let dir = std::env::temp_dir().join(format!(
                "mesh-jail-{tag}-{}-{n}-{nanos}",
                std::process::id()
            ));
            fs::create_dir_all(&dir).expect("create scratch dir");
            Scratch(fs::canonicalize(&dir).expect("canonical scratch dir"))
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn touch(path: &Path) {
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, b"x").expect("write");
    }

    /// Layout:
    /// ```text
    /// <tmp>/outside/secret.txt
    /// <tmp>/ws_evil/
    /// <tmp>/ws/README.md
    /// <tmp>/ws/services/orders/src/main.rs            root 0
    /// <tmp>/ws/services/orders/escape -> <tmp>/outside
    /// <tmp>/ws/services/orders/secret_link -> <tmp>/outside/secret.txt
    /// <tmp>/ws/services/orders/dangling -> <tmp>/outside/missing
    /// <tmp>/ws/services/orders/%2e%2e/literal.txt
    /// <tmp>/ws/services/orders_secret/key.txt
    /// <tmp>/ws/services/ordersx/
    /// <tmp>/ws/services/payments/src/lib.rs           root 1
    /// <tmp>/ws/services/payments/link_in -> ../orders/src
    /// ```
    fn workspace() -> (Scratch, Jail) {
        let tmp = Scratch::new("ws");
        let t = &tmp.0;
        touch(&t.join("outside/secret.txt"));
        fs::create_dir_all(t.join("ws_evil")).expect("mkdir");
        let ws = t.join("ws");
        touch(&ws.join("README.md"));
        touch(&ws.join("services/orders/src/main.rs"));
        touch(&ws.join("services/orders/file with space.txt"));
        touch(&ws.join("services/orders/dökümantasyon.md"));
        touch(&ws.join("services/orders/%2e%2e/literal.txt"));
        touch(&ws.join("services/orders_secret/key.txt"));
        fs::create_dir_all(ws.join("services/ordersx")).expect("mkdir");
        touch(&ws.join("services/payments/src/lib.rs"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::symlink;
            symlink(t.join("outside"), ws.join("services/orders/escape")).expect("symlink");
            symlink(
                t.join("outside/secret.txt"),
                ws.join("services/orders/secret_link"),
            )
            .expect("symlink");
            symlink(
                t.join("outside/missing"),
                ws.join("services/orders/dangling"),
            )
            .expect("symlink");
            symlink("../orders/src", ws.join("services/payments/link_in")).expect("symlink");
        }
        let jail = Jail::new(
            ws.clone(),
            vec![ws.join("services/orders"), ws.join("services/payments")],
        );
        (tmp, jail)
    }

    #[test]
    fn escape_attempts_are_refused() {
        let (tmp, jail) = workspace();
        let t = tmp.0.display().to_string();
        let ws = format!("{t}/ws");
        let long_component = format!("services/orders/{}", "a".repeat(300));
        let cases: Vec<String> = vec![
            "../outside".into(),
            "../outside/secret.txt".into(),
            "./../outside".into(),
            "services/../../outside".into(),
            "services/orders/../../../outside/secret.txt".into(),
            "services/orders/./../.././../outside".into(),
            "services/orders/src/../../../../../../../../../../etc/passwd".into(),
            "services/orders/../orders_secret".into(),
            "../ws_evil".into(),
            format!("{t}/outside/secret.txt"),
            format!("{ws}/../outside"),
            format!("{ws}/services/orders/../../../outside/"),
            "/etc".into(),
            "/etc/passwd".into(),
            "//etc".into(),
            "//etc/passwd".into(),
            "/".into(),
            "/nonexistent/definitely/missing".into(),
            "services/orders_secret".into(),
            "services/orders_secret/".into(),
            "services/orders_secret/key.txt".into(),
            "services/ordersx".into(),
            format!("{ws}/services/orders_secret"),
            "services".into(),
            "services/".into(),
            format!("{ws}/services"),
            format!("{ws}/services/"),
            ".".into(),
            "README.md".into(),
            "~".into(),
            "services/orders/escape".into(),
            "services/orders/escape/".into(),
            "services/orders/escape/secret.txt".into(),
            "services/orders/secret_link".into(),
            "services/orders/dangling".into(),
            "services/orders/src\0/main.rs".into(),
            "\0".into(),
            "a/".repeat(2100),
            long_component,
            "services/orders\n/src".into(),
            "services/orders/\t".into(),
            "services/orders/\x1b[31m".into(),
            "services/orders/\u{85}".into(),
            "services/orders/%2e%2e/%2e%2e/outside".into(),
            "services/orders/..%2f..%2f..%2foutside".into(),
            "services%2f..%2f..%2foutside".into(),
            "services/orders/....".into(),
            "services\\..\\..\\outside".into(),
            "".into(),
        ];
        assert!(cases.len() >= 30);
        for raw in &cases {
            let result = jail.resolve(raw);
            assert!(result.is_err(), "{raw:?} was accepted: {result:?}");
        }
        #[cfg(target_os = "linux")]
        if Path::new("/proc/self/root").exists() {
            assert!(jail.resolve("/proc/self/root/etc").is_err());
        }
    }

    #[test]
    fn refusals_use_the_expected_variant() {
        let (tmp, jail) = workspace();
        let t = tmp.0.display().to_string();
        let kind = |e: &JailError| match e {
            JailError::OutsideRoots { .. } => "outside",
            JailError::ParentOfRoot { .. } => "parent",
            JailError::NotFound { .. } => "missing",
            JailError::Empty => "empty",
            JailError::NulByte { .. } => "nul",
            JailError::ControlCharacter { .. } => "control",
            JailError::TooLong { .. } => "long",
        };
        let table = [
            ("../outside", "outside"),
            ("services/orders_secret", "outside"),
            ("services/orders/escape/secret.txt", "outside"),
            ("services/orders/secret_link", "outside"),
            ("/etc/passwd", "outside"),
            // Missing outside the roots must look the same as existing outside the roots.
            ("/nonexistent/definitely/missing", "outside"),
            ("../outside/missing.txt", "outside"),
            ("services/orders/escape/missing.txt", "outside"),
            ("services", "parent"),
            (".", "parent"),
            ("services/orders/missing.rs", "missing"),
            ("services/orders/%2e%2e/%2e%2e/outside", "missing"),
            ("", "empty"),
            ("a\0b", "nul"),
            ("a\nb", "control"),
        ];
        for (raw, expected) in table {
            let err = jail.resolve(raw).expect_err(raw);
            assert_eq!(kind(&err), expected, "{raw:?} gave {err:?}");
        }
        assert_eq!(jail.resolve("a\0b"), Err(JailError::NulByte { offset: 1 }));
        assert_eq!(
            jail.resolve("a\nb"),
            Err(JailError::ControlCharacter {
                offset: 1,
                ch: '\n'
            })
        );
        let err = jail.resolve(&format!("{t}/outside")).expect_err("outside");
        assert_eq!(kind(&err), "outside");
        assert!(matches!(
            jail.resolve(&"x".repeat(5000)),
            Err(JailError::TooLong {
                len: 5000,
                component: false,
                ..
            })
        ));
    }

    #[test]
    fn legitimate_spellings_are_accepted() {
        let (tmp, jail) = workspace();
        let ws = tmp.0.join("ws");
        let orders = ws.join("services/orders");
        let payments = ws.join("services/payments");
        let abs = |p: &Path| p.display().to_string();
        let cases: Vec<(String, PathBuf, usize)> = vec![
            ("services/orders".into(), orders.clone(), 0),
            ("services/orders/".into(), orders.clone(), 0),
            ("./services/orders".into(), orders.clone(), 0),
            ("services//orders///src".into(), orders.join("src"), 0),
            ("services/./orders/./src/.".into(), orders.join("src"), 0),
            ("services/orders/src/".into(), orders.join("src"), 0),
            (
                "services/orders/src/main.rs".into(),
                orders.join("src/main.rs"),
                0,
            ),
            (
                "services/orders/../orders/src".into(),
                orders.join("src"),
                0,
            ),
            (
                "services/payments/../orders/src/main.rs".into(),
                orders.join("src/main.rs"),
                0,
            ),
            (abs(&orders.join("src")), orders.join("src"), 0),
            (format!("{}/", abs(&orders)), orders.clone(), 0),
            (format!("{}/../payments", abs(&orders)), payments.clone(), 1),
            ("services/payments".into(), payments.clone(), 1),
            (
                "services/payments/src/lib.rs".into(),
                payments.join("src/lib.rs"),
                1,
            ),
            (
                "services/orders/file with space.txt".into(),
                orders.join("file with space.txt"),
                0,
            ),
            (
                "services/orders/dökümantasyon.md".into(),
                orders.join("dökümantasyon.md"),
                0,
            ),
            (
                "services/orders/%2e%2e/literal.txt".into(),
                orders.join("%2e%2e/literal.txt"),
                0,
            ),
        ];
        #[cfg(unix)]
        let cases = {
            let mut cases = cases;
            // A symlink inside one root pointing into another resolves to its target's root.
            cases.push(("services/payments/link_in".into(), orders.join("src"), 0));
            cases.push((
                "services/payments/link_in/main.rs".into(),
                orders.join("src/main.rs"),
                0,
            ));
            cases
        };
        assert!(cases.len() >= 10);
        for (raw, path, root_index) in cases {
            let resolved = jail
                .resolve(&raw)
                .unwrap_or_else(|e| panic!("{raw:?} refused: {e}"));
            assert_eq!(resolved, Resolved { path, root_index }, "for {raw:?}");
        }
    }

    #[test]
    fn nested_roots_pick_the_most_specific() {
        let tmp = Scratch::new("nested");
        let ws = tmp.0.clone();
        touch(&ws.join("mono/packages/billing/src/a.ts"));
        touch(&ws.join("mono/tools/b.ts"));
        let jail = Jail::new(
            ws.clone(),
            vec![ws.join("mono/packages/billing"), ws.join("mono")],
        );
        let table = [
            ("mono/packages/billing/src/a.ts", 0),
            ("mono/packages/billing", 0),
            ("mono/tools/b.ts", 1),
            ("mono/packages", 1),
        ];
        for (raw, root_index) in table {
            assert_eq!(
                jail.resolve(raw).expect(raw).root_index,
                root_index,
                "{raw}"
            );
        }
    }

    #[test]
    fn workspace_spellings() {
        let (tmp, jail) = workspace();
        let ws = tmp.0.join("ws").display().to_string();
        let yes = [
            "".to_owned(),
            ".".to_owned(),
            "./".to_owned(),
            "*".to_owned(),
            "./.".to_owned(),
            "services/..".to_owned(),
            "services/orders/../..".to_owned(),
            ws.clone(),
            format!("{ws}/"),
            format!("{ws}/services/.."),
        ];
        for raw in &yes {
            assert!(jail.is_workspace_spelling(raw), "{raw:?}");
        }
        let no = [
            "services",
            "services/orders",
            "..",
            "/",
            "**",
            "x\0",
            "../ws_evil",
        ];
        for raw in no {
            assert!(!jail.is_workspace_spelling(raw), "{raw:?}");
        }
    }

    #[test]
    fn messages_name_the_allowed_scopes() {
        let (_tmp, jail) = workspace();
        let err = jail.resolve("../etc").expect_err("escape");
        assert_eq!(
            err.to_string(),
            "`../etc` resolves outside the configured roots; allowed scopes: \
             `services/orders`, `services/payments` (or omit scope for all roots)"
        );
        let err = jail
            .resolve("services/orders/nope.rs")
            .expect_err("missing");
        assert!(
            err.to_string()
                .starts_with("no such path inside the workspace: `services/orders/nope.rs`"),
            "{err}"
        );
        assert_eq!(jail.roots().len(), 2);
        assert!(jail.base().ends_with("ws"));
    }

    #[test]
    fn clean_is_lexical() {
        let table = [
            ("/a/b/../c", "/a/c"),
            ("/a/./b/.", "/a/b"),
            ("/../..", "/"),
            ("//a//b/", "/a/b"),
            ("a/../../b", "../b"),
        ];
        for (input, expected) in table {
            assert_eq!(clean(Path::new(input)), PathBuf::from(expected), "{input}");
        }
    }
}
