//! Where roots come from in a config file: `${VAR}` and `~` expansion, directories that may
//! never be roots, globs, and canonical, de-duplicated labels.

use super::detect::{GLOB_SKIP, entry_names};
use super::load::Ctx;
use super::{ConfigError, Env, Root, canonical};
use std::fs;
use std::path::{Component, Path, PathBuf};

impl Ctx<'_> {
    /// An exclude or docs pattern: variables expanded, an absolute path inside the workspace
    /// rewritten relative to it, a leading `./` dropped; `..` is refused.
    pub(super) fn workspace_pattern(
        &self,
        raw: &str,
        line: u32,
        key: &str,
    ) -> Result<String, ConfigError> {
        let expanded = self.expand(raw, line, key)?;
        let expanded =
            expand_home(&expanded, self.env).map_err(|e| self.unset_or_bad(e, line, key))?;
        let base = self.base.to_string_lossy();
        let mut p = expanded.as_str();
        if p == base {
            p = "";
        } else if let Some(rest) = p
            .strip_prefix(base.as_ref())
            .and_then(|r| r.strip_prefix('/'))
        {
            p = rest;
        }
        while let Some(rest) = p.strip_prefix("./") {
            p = rest;
        }
        if p.split('/').any(|c| c == "..") {
            return Err(self.bad(
                line,
                key,
                format!(
                    "`{raw}` leaves the workspace dir {}; these patterns are relative to it and \
                     cannot use `..`",
                    self.base.display()
                ),
            ));
        }
        if p.is_empty() || p == "." {
            return Ok("**".into());
        }
        Ok(p.to_string())
    }

    fn unset_or_bad(&self, e: ExpandError, line: u32, key: &str) -> ConfigError {
        match e {
            ExpandError::Unset(name) => ConfigError::UnsetVariable {
                file: self.file.clone(),
                line,
                name,
            },
            ExpandError::Syntax(m) => self.bad(line, key, m),
        }
    }

    pub(super) fn resolve_roots(
        &mut self,
        list: &[(String, u32)],
    ) -> Result<Vec<Root>, ConfigError> {
        let mut roots: Vec<Root> = Vec::new();
        for (raw, line) in list {
            let line = *line;
            let key = "workspace.roots";
            let expanded = self.expand(raw, line, key)?;
            let expanded =
                expand_home(&expanded, self.env).map_err(|e| self.unset_or_bad(e, line, key))?;
            if expanded.is_empty() {
                return Err(self.bad(
                    line,
                    key,
                    "an empty root; write \".\" for the workspace dir",
                ));
            }
            let absolute = Path::new(&expanded).is_absolute();
            let start = if absolute {
                PathBuf::from("/")
            } else {
                self.base.clone()
            };
            if !has_glob(&expanded) {
                let p = start.join(&expanded);
                if p.exists() && !p.is_dir() {
                    return Err(self.bad(
                        line,
                        key,
                        format!("{} is a file; roots must be directories", p.display()),
                    ));
                }
            }
            let matches = expand_glob(&start, &expanded);
            if matches.is_empty() {
                return Err(ConfigError::NoMatch {
                    file: self.file.clone(),
                    line,
                    pattern: raw.clone(),
                    resolved_against: start,
                });
            }
            for m in matches {
                let path = canonical(&m)?;
                check_prohibited(&path, self.env, Some((self.file.clone(), line)))?;
                let label = label_of(&self.base, &path);
                if roots.iter().any(|r| r.path == path) {
                    self.warnings.push(format!(
                        "{}:{line}: root `{label}` is listed more than once (via `{raw}`); it is \
                         indexed once",
                        self.file.display()
                    ));
                    continue;
                }
                roots.push(Root { path, label });
            }
        }
        crate::order::sort_by(&mut roots, |a, b| a.label.cmp(&b.label));
        Ok(roots)
    }
}

/// Why `${…}` or `~` expansion failed.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum ExpandError {
    /// `${NAME}` without a default and `NAME` is unset.
    Unset(String),
    /// Malformed `${…}`.
    Syntax(String),
}

/// Expands `${VAR}` and `${VAR:-default}` (default used when unset or empty). A `$` not
/// followed by `{` is kept as is; defaults are literal text (no nesting).
pub(super) fn expand_vars(text: &str, env: Env) -> Result<String, ExpandError> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let Some(end) = after.find('}') else {
            return Err(ExpandError::Syntax(format!(
                "unterminated `${{` in `{text}`; close it with `}}`"
            )));
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        let valid = name
            .bytes()
            .enumerate()
            .all(|(i, b)| b == b'_' || b.is_ascii_alphabetic() || (i > 0 && b.is_ascii_digit()));
        if name.is_empty() || !valid {
            return Err(ExpandError::Syntax(format!(
                "`${{{inner}}}` is not a variable reference; write ${{NAME}} or ${{NAME:-default}}"
            )));
        }
        match (env(name), default) {
            (Some(v), Some(d)) if v.is_empty() => out.push_str(d),
            (Some(v), _) => out.push_str(&v),
            (None, Some(d)) => out.push_str(d),
            (None, None) => return Err(ExpandError::Unset(name.to_string())),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Expands a leading `~` or `~/` to `$HOME`.
fn expand_home(text: &str, env: Env) -> Result<String, ExpandError> {
    if text != "~" && !text.starts_with("~/") {
        if text.starts_with('~') {
            return Err(ExpandError::Syntax(format!(
                "`{text}`: only `~` and `~/…` are supported, not `~user`"
            )));
        }
        return Ok(text.to_string());
    }
    let home = env("HOME").ok_or_else(|| ExpandError::Unset("HOME".into()))?;
    Ok(format!("{home}{}", &text[1..]))
}

/// True when `path` (canonical) is a system directory ([`crate::security::PROHIBITED_ROOTS`])
/// or `$HOME` itself. Subdirectories are fine.
fn is_prohibited(path: &Path, env: Env) -> bool {
    let same = |p: &Path| p == path || fs::canonicalize(p).is_ok_and(|c| c == path);
    crate::security::PROHIBITED_ROOTS
        .iter()
        .any(|p| same(Path::new(p)))
        || env("HOME").is_some_and(|h| !h.is_empty() && same(Path::new(&h)))
}

pub(super) fn check_prohibited(
    path: &Path,
    env: Env,
    origin: Option<(PathBuf, u32)>,
) -> Result<(), ConfigError> {
    if is_prohibited(path, env) {
        return Err(ConfigError::ProhibitedRoot {
            path: path.to_path_buf(),
            origin,
        });
    }
    Ok(())
}

/// `path` relative to `base` with `/` separators; `.` for `base`, `..` steps for siblings.
fn label_of(base: &Path, path: &Path) -> String {
    let b: Vec<Component> = base.components().collect();
    let p: Vec<Component> = path.components().collect();
    let common = b.iter().zip(&p).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = vec!["..".into(); b.len() - common];
    parts.extend(
        p[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    if parts.is_empty() {
        ".".into()
    } else {
        parts.join("/")
    }
}

fn has_glob(s: &str) -> bool {
    s.contains(['*', '?'])
}

/// Directories matching `pattern` (per component: `*`, `?`, and `**` for any depth) starting
/// at `start`. Hidden names match only a component that starts with a literal dot; wildcards
/// never match build output ([`GLOB_SKIP`]) and `**` never descends into hidden or symlinked
/// directories. Literal components are taken as written (`..` included).
fn expand_glob(start: &Path, pattern: &str) -> Vec<PathBuf> {
    let mut current = vec![start.to_path_buf()];
    for comp in pattern.split('/').filter(|c| !c.is_empty() && *c != ".") {
        let mut next = Vec::new();
        if comp == "**" {
            for dir in &current {
                collect_descendants(dir, &mut next);
            }
        } else if has_glob(comp) {
            let pat: Vec<char> = comp.chars().collect();
            for dir in &current {
                let Ok(rd) = fs::read_dir(dir) else { continue };
                let mut names: Vec<String> = rd
                    .filter_map(Result::ok)
                    .filter_map(|e| e.file_name().into_string().ok())
                    .filter(|n| !n.starts_with('.') || comp.starts_with('.'))
                    .filter(|n| !GLOB_SKIP.contains(&n.as_str()))
                    .filter(|n| glob_match(&pat, &n.chars().collect::<Vec<_>>()))
                    .collect();
                crate::order::sort(&mut names);
                next.extend(
                    names
                        .into_iter()
                        .map(|n| dir.join(n))
                        .filter(|p| p.is_dir()),
                );
            }
        } else {
            next.extend(current.iter().map(|d| d.join(comp)).filter(|p| p.is_dir()));
        }
        next.dedup();
        current = next;
        if current.is_empty() {
            break;
        }
    }
    current
}

/// `dir` and every real, non-hidden, non-build directory below it.
fn collect_descendants(dir: &Path, out: &mut Vec<PathBuf>) {
    out.push(dir.to_path_buf());
    for (name, ty) in entry_names(dir) {
        if ty.is_dir() && !name.starts_with('.') && !GLOB_SKIP.contains(&name.as_str()) {
            collect_descendants(&dir.join(name), out);
        }
    }
}

/// Matches one path component against `*` / `?` wildcards.
fn glob_match(pat: &[char], name: &[char]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if p < pat.len() && (pat[p] == '?' || pat[p] == name[n]) {
            p += 1;
            n += 1;
        } else if p < pat.len() && pat[p] == '*' {
            star = Some((p, n));
            p += 1;
        } else if let Some((sp, sn)) = star {
            p = sp + 1;
            n = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    pat[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::{TempDir, labels, load, no_env};
    use crate::config::{CONFIG_FILE_NAME, discover_with};

    #[test]
    fn root_globs() {
        let d = TempDir::new("globs");
        d.dir("services/orders/src")
            .dir("services/payments")
            .dir("services/.hidden")
            .dir("services/.cache")
            .dir("libs/a/deep/x")
            .dir("libs/b")
            .dir("libs/node_modules/pkg/x")
            .file("services/notes.txt", "");
        let c = load(&d, "[workspace]\nroots = [\"services/*\"]\n").unwrap();
        assert_eq!(labels(&c), ["services/orders", "services/payments"]);
        let c = load(&d, "[workspace]\nroots = [\"services/.h*\"]\n").unwrap();
        assert_eq!(labels(&c), ["services/.hidden"]);
        let c = load(
            &d,
            "[workspace]\nroots = [\"services/??ders\", \"./libs/b/\"]\n",
        )
        .unwrap();
        assert_eq!(labels(&c), ["libs/b", "services/orders"]);
        let c = load(&d, "[workspace]\nroots = [\"libs/**/x\"]\n").unwrap();
        assert_eq!(labels(&c), ["libs/a/deep/x"]);
        let c = load(&d, "[workspace]\nroots = [\"**/src\"]\n").unwrap();
        assert_eq!(labels(&c), ["services/orders/src"]);
        let abs = d.path().join("libs/*").to_string_lossy().into_owned();
        let c = load(&d, &format!("[workspace]\nroots = [{abs:?}]\n")).unwrap();
        assert_eq!(labels(&c), ["libs/a", "libs/b"]);
    }

    #[test]
    fn roots_are_deduplicated_and_sorted_with_a_warning() {
        let d = TempDir::new("dedupe");
        d.dir("services/b").dir("services/a");
        let c = load(
            &d,
            "[workspace]\nroots = [\"services/*\", \".\",\n \"services/a/\"]\n",
        )
        .unwrap();
        assert_eq!(labels(&c), [".", "services/a", "services/b"]);
        assert_eq!(c.warnings.len(), 1);
        assert!(
            c.warnings[0].contains(":3: root `services/a` is listed more than once"),
            "{:?}",
            c.warnings
        );
    }

    #[test]
    fn roots_that_match_nothing_are_errors() {
        let d = TempDir::new("nomatch");
        d.dir("services").file("services/readme.md", "");
        for pat in ["services/*", "servces", "nope/**"] {
            let e = load(&d, &format!("[workspace]\nroots = [\".\",\n{pat:?}]\n")).unwrap_err();
            match &e {
                ConfigError::NoMatch {
                    line,
                    pattern,
                    resolved_against,
                    ..
                } => {
                    assert_eq!(*line, 3);
                    assert_eq!(pattern, pat);
                    assert_eq!(resolved_against, d.path());
                }
                other => panic!("{pat}: {other}"),
            }
            assert!(
                e.to_string().contains(&format!(
                    "root `{pat}` matches no directory under {}",
                    d.path().display()
                )),
                "{e}"
            );
        }
        let e = load(&d, "[workspace]\nroots = [\"services/readme.md\"]\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("is a file; roots must be directories"),
            "{e}"
        );
    }
    #[test]
    fn environment_expansion_in_roots() {
        let d = TempDir::new("env");
        d.dir("services/orders").dir("shared").dir("home/me/repo");
        let base = d.path().to_string_lossy().into_owned();
        let home = d.path().join("home/me").to_string_lossy().into_owned();
        let env = move |name: &str| match name {
            "SVC_DIR" => Some("services".to_string()),
            "EMPTY" => Some(String::new()),
            "WS" => Some(base.clone()),
            "HOME" => Some(home.clone()),
            _ => None,
        };
        let text = "[workspace]\nroots = [\"${SVC_DIR}/*\", \"${NOT_SET:-shared}\", \"${EMPTY:-shared}\", \"~/repo\", \"${WS}/shared\"]\nexclude = [\"${WS}/gen/**\"]\n[docs]\npaths = [\"${WS}\"]\n";
        d.file(CONFIG_FILE_NAME, text);
        let c = discover_with(d.path(), None, &env).unwrap();
        assert_eq!(labels(&c), ["home/me/repo", "services/orders", "shared"]);
        assert_eq!(c.excludes, ["gen/**"]);
        assert_eq!(c.docs.paths, ["**"]);

        d.file(
            CONFIG_FILE_NAME,
            "[workspace]\nroots = [\n\"${workspace_root}/services/*\"]\n",
        );
        let e = discover_with(d.path(), None, &env).unwrap_err();
        assert!(
            matches!(&e, ConfigError::UnsetVariable { line: 3, name, .. } if name == "workspace_root"),
            "{e}"
        );
        assert!(e.to_string().contains("`workspace_root` is not set"), "{e}");
        d.file(CONFIG_FILE_NAME, "[docs]\npaths = [\"${DOCS}/**\"]\n");
        let e = discover_with(d.path(), None, &env).unwrap_err();
        assert!(
            matches!(&e, ConfigError::UnsetVariable { line: 2, name, .. } if name == "DOCS"),
            "{e}"
        );
        d.file(CONFIG_FILE_NAME, "[workspace]\nroots = [\"${SVC_DIR\"]\n");
        let e = discover_with(d.path(), None, &env).unwrap_err();
        assert!(e.to_string().contains("unterminated `${`"), "{e}");
        d.file(CONFIG_FILE_NAME, "[workspace]\nroots = [\"~other/x\"]\n");
        assert!(discover_with(d.path(), None, &env).is_err());
    }

    #[test]
    fn expand_vars_rules() {
        let env = |n: &str| (n == "A").then(|| "x".to_string());
        assert_eq!(
            expand_vars("$A/${A}/${A:-d}/${B:-d}/$", &env).unwrap(),
            "$A/x/x/d/$"
        );
        assert_eq!(expand_vars("${B:-}", &env).unwrap(), "");
        assert_eq!(
            expand_vars("${B}", &env),
            Err(ExpandError::Unset("B".into()))
        );
        assert!(matches!(
            expand_vars("${1A}", &env),
            Err(ExpandError::Syntax(_))
        ));
        assert!(matches!(
            expand_vars("${}", &env),
            Err(ExpandError::Syntax(_))
        ));
    }

    #[test]
    fn prohibited_roots_are_refused() {
        let d = TempDir::new("prohibited");
        d.dir("home/me/proj");
        let home = d.path().join("home/me");
        let home_s = home.to_string_lossy().into_owned();
        let env = move |n: &str| (n == "HOME").then(|| home_s.clone());
        for (root, path) in [
            ("/", PathBuf::from("/")),
            ("/etc", fs::canonicalize("/etc").unwrap()),
            ("~", home.clone()),
            ("home/me", home.clone()),
        ] {
            d.file(
                CONFIG_FILE_NAME,
                &format!("[workspace]\nroots = [\"services\",\n{root:?}]\n"),
            );
            fs::create_dir_all(d.path().join("services")).unwrap();
            let e = discover_with(d.path(), None, &env).unwrap_err();
            match &e {
                ConfigError::ProhibitedRoot {
                    path: p,
                    origin: Some((_, 3)),
                } => assert_eq!(p, &path),
                other => panic!("{root}: {other}"),
            }
            assert!(e.to_string().contains("system or home directory"), "{e}");
        }
        // Subdirectories of prohibited directories are fine (temp dirs live under /tmp).
        d.file(CONFIG_FILE_NAME, "[workspace]\nroots = [\"~/proj\"]\n");
        assert_eq!(
            labels(&discover_with(d.path(), None, &env).unwrap()),
            ["home/me/proj"]
        );
        // Zero-config in $HOME itself is refused too.
        let e = discover_with(&home, None, &env).unwrap_err();
        assert!(
            matches!(e, ConfigError::ProhibitedRoot { origin: None, .. }),
            "{e}"
        );
        for system in ["/usr", "/proc", "/sys", "/dev", "/boot", "/bin", "/etc"] {
            assert!(is_prohibited(Path::new(system), &no_env), "{system}");
        }
        assert!(!is_prohibited(Path::new("/usr/local/src"), &no_env));
    }
    #[test]
    fn labels_are_relative() {
        assert_eq!(label_of(Path::new("/w"), Path::new("/w")), ".");
        assert_eq!(label_of(Path::new("/w"), Path::new("/w/a/b")), "a/b");
        assert_eq!(label_of(Path::new("/w/x"), Path::new("/w/y/z")), "../y/z");
        assert_eq!(label_of(Path::new("/w/x"), Path::new("/")), "../..");
    }

    #[test]
    fn glob_component_matching() {
        let m = |p: &str, n: &str| {
            glob_match(
                &p.chars().collect::<Vec<_>>(),
                &n.chars().collect::<Vec<_>>(),
            )
        };
        assert!(m("*", "orders"));
        assert!(m("or*", "orders"));
        assert!(m("*rs", "orders"));
        assert!(m("o*d*s", "orders"));
        assert!(m("?rders", "orders"));
        assert!(m("k8s*", "k8s"));
        assert!(!m("o?", "orders"));
        assert!(!m("*x", "orders"));
        assert!(m("*é", "café"));
    }
}
