//! Workspace discovery and the optional `.agents/mesh-mcp.toml` / `mesh-mcp.toml` (docs/ARCHITECTURE.md §3.1).
//!
//! [`discover`] finds the configuration (an explicit file, else `.agents/mesh-mcp.toml`, else
//! `mesh-mcp.toml` in the current directory, else zero-config) and turns it into a typed
//! [`Config`] whose roots are canonical, de-duplicated directories. Every mistake in the file is
//! a [`ConfigError`] naming the file, the line and the fix: we never start indexing the wrong
//! workspace or silently index nothing.
//!
//! # Where relative paths resolve
//!
//! The **workspace dir** of a config file is the directory holding it, or that directory's
//! parent when the file sits in `.agents/`. Relative root globs, `exclude` patterns and docs
//! `paths` all resolve against the workspace dir, so `.agents/mesh-mcp.toml` and
//! `mesh-mcp.toml` next to each other mean the same thing with the same text (resolving against
//! the file's own directory would make `.agents/` configs need `..`).

mod detect;
mod load;
mod roots;
pub mod toml;

pub use detect::{RootKind, RootSignals, detect_layout, root_kinds, root_signals, zero_config};

use self::load::load_file;
use self::roots::check_prohibited;
use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

/// File name of the configuration file, looked up in `.agents/` and then in the workspace dir.
pub const CONFIG_FILE_NAME: &str = "mesh-mcp.toml";

/// Directory that conventionally holds agent configuration; a config file inside it belongs to
/// the parent directory.
pub const AGENTS_DIR: &str = ".agents";

/// The typed workspace configuration every other module reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Canonical workspace dir: labels, excludes and docs paths are relative to it.
    pub base_dir: PathBuf,
    /// The config file that was read, or `None` for zero-config.
    pub config_file: Option<PathBuf>,
    /// Workspace name shown in headers; defaults to the base dir's name.
    pub name: String,
    /// Indexed (and readable) directories, canonical, unique, sorted by label.
    pub roots: Vec<Root>,
    /// User gitignore-style exclude patterns, relative to `base_dir` (an absolute path inside
    /// the workspace is rewritten relative to it; other leading `/` anchor at `base_dir`). The
    /// crawler adds its built-in secret and build-output excludes on top.
    pub excludes: Vec<String>,
    /// Markdown documentation settings.
    pub docs: DocsConfig,
    /// Custom regex patterns for in-house event buses.
    pub patterns: Vec<CustomPattern>,
    /// Read-governance mode and stop rules.
    pub policy: PolicyConfig,
    /// Audit trail switch.
    pub audit: AuditConfig,
    /// Persistent parse cache settings.
    pub cache: CacheConfig,
    /// Non-fatal observations (duplicate roots, settings that have no effect) for `doctor`.
    pub warnings: Vec<String>,
}

/// One indexed directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// Canonical absolute path.
    pub path: PathBuf,
    /// Path relative to `base_dir` with `/` separators (`..` for siblings), `.` for the base.
    pub label: String,
}

/// Documentation indexing settings (`[docs]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocsConfig {
    /// Whether Markdown docs are indexed at all.
    pub enabled: bool,
    /// Globs relative to the base dir restricting which docs are indexed; empty = all Markdown.
    pub paths: Vec<String>,
    /// Query word → doc vocabulary (`dlq` → `dead-letter-queue`).
    pub aliases: BTreeMap<String, String>,
    /// Words dropped from doc queries.
    pub stop_words: Vec<String>,
}

impl Default for DocsConfig {
    fn default() -> Self {
        DocsConfig {
            enabled: true,
            paths: Vec::new(),
            aliases: BTreeMap::new(),
            stop_words: Vec::new(),
        }
    }
}

/// Whether a custom pattern finds producers or consumers of a topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatternKind {
    /// The match publishes to the captured topic.
    Producer,
    /// The match subscribes to the captured topic.
    Consumer,
}

/// A custom regex for an in-house event bus (`[[patterns]]`). The regex is only stored here;
/// the indexer compiles and validates it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomPattern {
    /// Unique name, used in diagnostics.
    pub name: String,
    /// Producer or consumer.
    pub kind: PatternKind,
    /// Optional glob on the file name/path (`*.ts`); `None` = every file.
    pub file_glob: Option<String>,
    /// The regex source text.
    pub regex: String,
    /// Capture group holding the topic (default 1).
    pub topic_group: usize,
}

/// Read governance (`[policy]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyConfig {
    /// One of [`POLICY_MODES`]; validated at load time.
    pub mode: String,
    /// Guarded key → message shown when a call touches it, in file order.
    pub stop_rules: Vec<(String, String)>,
}

/// The accepted values of `policy.mode`.
pub const POLICY_MODES: [&str; 3] = ["allow_all", "audit_warn", "enforce_refusal"];

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            mode: "allow_all".into(),
            stop_rules: Vec::new(),
        }
    }
}

/// Audit trail settings (`[audit]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditConfig {
    /// Whether tool calls are appended to the audit database (default true).
    pub enabled: bool,
}

impl Default for AuditConfig {
    fn default() -> Self {
        AuditConfig { enabled: true }
    }
}

/// Persistent parse cache settings (`[cache]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheConfig {
    /// Whether the SQLite fact cache is used (default [`crate::index::cache::ENABLED_BY_DEFAULT`],
    /// i.e. off: it does not pay off on small files; `enabled = true` turns it on).
    pub enabled: bool,
    /// Size quota in MiB (default 256).
    pub max_size_mb: u64,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            enabled: crate::index::cache::ENABLED_BY_DEFAULT,
            max_size_mb: 256,
        }
    }
}

/// One automatically detected service root, so `mesh-mcp init` can explain what it found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detection {
    /// Root label relative to the base dir (`services/orders`).
    pub root: String,
    /// Why it is a root (`services/orders has go.mod`).
    pub reason: String,
}

/// Everything that can go wrong while finding or reading the configuration. Each message names
/// the file, the line (when there is one) and what to change.
#[derive(Debug)]
pub enum ConfigError {
    /// A file or directory could not be read.
    Io {
        /// The path we tried.
        path: PathBuf,
        /// The OS error.
        error: std::io::Error,
    },
    /// The config path is not a regular file, is too large or is not text.
    Unusable {
        /// The path we tried.
        path: PathBuf,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// The file is not valid TOML.
    Syntax {
        /// The config file.
        file: PathBuf,
        /// 1-based line.
        line: u32,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A section or key we do not know (often a typo).
    UnknownKey {
        /// The config file.
        file: PathBuf,
        /// 1-based line of the key.
        line: u32,
        /// Section the key sits in (`workspace`, `policy.stop_rules`); empty for the top level.
        section: String,
        /// The unknown key.
        key: String,
        /// The keys allowed there.
        allowed: &'static [&'static str],
    },
    /// A known key with a value of the wrong type or out of range.
    BadValue {
        /// The config file.
        file: PathBuf,
        /// 1-based line of the key.
        line: u32,
        /// Full dotted key (`policy.mode`).
        key: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A root pattern or literal matched no directory.
    NoMatch {
        /// The config file.
        file: PathBuf,
        /// 1-based line of the `roots` entry.
        line: u32,
        /// The pattern as written.
        pattern: String,
        /// The directory it was resolved against.
        resolved_against: PathBuf,
    },
    /// A root that would expose a system or home directory.
    ProhibitedRoot {
        /// The canonical root.
        path: PathBuf,
        /// Config file and line that produced it; `None` for zero-config.
        origin: Option<(PathBuf, u32)>,
    },
    /// `${VAR}` without a default refers to an unset environment variable.
    UnsetVariable {
        /// The config file.
        file: PathBuf,
        /// 1-based line.
        line: u32,
        /// The variable name.
        name: String,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Io { path, error } => write!(
                f,
                "{}: {error}; check that the path exists and is readable",
                path.display()
            ),
            // Messages quote keys and values of the file: a 100 KB one is not echoed whole.
            ConfigError::Unusable { path, reason } => write!(
                f,
                "{}: {}",
                path.display(),
                crate::protocol::echo_quoted(reason)
            ),
            ConfigError::Syntax {
                file,
                line,
                message,
            } => write!(
                f,
                "{}:{line}: {}",
                file.display(),
                crate::protocol::echo_quoted(message)
            ),
            ConfigError::UnknownKey {
                file,
                line,
                section,
                key,
                allowed,
            } => {
                if section.is_empty() {
                    write!(
                        f,
                        "{}:{line}: unknown section or key `{key}` at the top level; allowed \
                         sections: {}",
                        file.display(),
                        allowed.join(", ")
                    )
                } else {
                    write!(
                        f,
                        "{}:{line}: unknown key `{key}` in [{section}]; allowed keys: {}",
                        file.display(),
                        allowed.join(", ")
                    )
                }
            }
            ConfigError::BadValue {
                file,
                line,
                key,
                message,
            } => write!(
                f,
                "{}:{line}: bad value for `{key}`: {}",
                file.display(),
                crate::protocol::echo_quoted(message)
            ),
            ConfigError::NoMatch {
                file,
                line,
                pattern,
                resolved_against,
            } => write!(
                f,
                "{}:{line}: root `{}` matches no directory under {}; fix the pattern or \
                 remove it (relative roots resolve against the workspace dir)",
                file.display(),
                crate::protocol::echo_input(pattern),
                resolved_against.display()
            ),
            ConfigError::ProhibitedRoot { path, origin } => {
                if let Some((file, line)) = origin {
                    write!(f, "{}:{line}: ", file.display())?;
                }
                write!(
                    f,
                    "refusing to use {} as a root: it is a system or home directory; run \
                     mesh-mcp inside a project directory or list the project directories as \
                     roots",
                    path.display()
                )
            }
            ConfigError::UnsetVariable { file, line, name } => {
                let name = crate::protocol::echo_input(name);
                write!(
                    f,
                    "{}:{line}: environment variable `{name}` is not set; set it, or give a default \
                 with ${{{name}:-default}} (relative paths already resolve against the \
                 workspace dir)",
                    file.display()
                )
            }
        }
    }
}

impl std::error::Error for ConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConfigError::Io { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// Looks up an environment variable; injectable so tests never touch the process environment.
type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Finds and loads the configuration for a process started in `cwd`.
///
/// Order: `explicit` (relative to `cwd`), else `<cwd>/.agents/mesh-mcp.toml`, else
/// `<cwd>/mesh-mcp.toml`, else [`zero_config`] for `cwd`. Relative paths in a file resolve
/// against its workspace dir (see [`workspace_dir`]).
pub fn discover(cwd: &Path, explicit: Option<&Path>) -> Result<Config, ConfigError> {
    discover_with(cwd, explicit, &process_env)
}

fn discover_with(cwd: &Path, explicit: Option<&Path>, env: Env) -> Result<Config, ConfigError> {
    if let Some(file) = explicit {
        return load_file(&cwd.join(file), env);
    }
    let in_agents = cwd.join(AGENTS_DIR).join(CONFIG_FILE_NAME);
    let beside = cwd.join(CONFIG_FILE_NAME);
    if in_agents.is_file() {
        let mut config = load_file(&in_agents, env)?;
        if beside.is_file() {
            config.warnings.push(format!(
                "both {} and {} exist; using the first and ignoring the second",
                in_agents.display(),
                beside.display()
            ));
        }
        return Ok(config);
    }
    if beside.is_file() {
        return load_file(&beside, env);
    }
    let base = canonical(cwd)?;
    check_prohibited(&base, env, None)?;
    tracing::debug!(target: "mesh::config", base = %base.display(), "no config file; zero-config");
    let mut config = zero_config(&base);
    // Started in a subdirectory of a configured workspace (an IDE opened on one service):
    // the parent's file is not used, and the user should know why their roots are missing.
    if let Some(file) = base.ancestors().skip(1).find_map(config_file_in) {
        config.warnings.push(format!(
            "no config file here, but {} configures the workspace {}: this session indexes {} \
             alone, zero-config. Start mesh-mcp in {} (or pass --config {}) to use it.",
            file.display(),
            workspace_dir(&file).display(),
            base.display(),
            workspace_dir(&file).display(),
            file.display()
        ));
    }
    Ok(config)
}

/// The config file a directory holds, `.agents/` first.
fn config_file_in(dir: &Path) -> Option<PathBuf> {
    [
        dir.join(AGENTS_DIR).join(CONFIG_FILE_NAME),
        dir.join(CONFIG_FILE_NAME),
    ]
    .into_iter()
    .find(|f| f.is_file())
}

/// The workspace dir a config file belongs to: its directory, or the parent of that directory
/// when the file sits in `.agents/`.
pub fn workspace_dir(config_file: &Path) -> PathBuf {
    let dir = config_file.parent().unwrap_or(Path::new("."));
    match (dir.file_name(), dir.parent()) {
        (Some(name), Some(parent)) if name == AGENTS_DIR => parent.to_path_buf(),
        _ => dir.to_path_buf(),
    }
}

fn canonical(path: &Path) -> Result<PathBuf, ConfigError> {
    fs::canonicalize(path).map_err(|error| ConfigError::Io {
        path: path.to_path_buf(),
        error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A unique temp directory removed on drop.
    pub(super) struct TempDir(PathBuf);

    impl TempDir {
        pub(super) fn new(name: &str) -> TempDir {
            static N: AtomicUsize = AtomicUsize::new(0);
            let dir = std::env::temp_dir().join(format!(
                "mesh-config-{}-{name}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            TempDir(fs::canonicalize(&dir).unwrap())
        }

        pub(super) fn path(&self) -> &Path {
            &self.0
        }

        pub(super) fn dir(&self, rel: &str) -> &TempDir {
            fs::create_dir_all(self.0.join(rel)).unwrap();
            self
        }

        pub(super) fn file(&self, rel: &str, text: &str) -> &TempDir {
            let p = self.0.join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
            self
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    pub(super) fn no_env(_: &str) -> Option<String> {
        None
    }

    pub(super) fn load(dir: &TempDir, text: &str) -> Result<Config, ConfigError> {
        dir.file(CONFIG_FILE_NAME, text);
        discover_with(dir.path(), None, &no_env)
    }

    pub(super) fn labels(c: &Config) -> Vec<&str> {
        c.roots.iter().map(|r| r.label.as_str()).collect()
    }

    #[test]
    fn agents_dir_config_resolves_against_the_parent() {
        let d = TempDir::new("agents");
        d.dir("services/orders").dir("docs");
        d.file(
            ".agents/mesh-mcp.toml",
            "[workspace]\nroots = [\"services/*\", \"docs\"]\nexclude = [\"/tmp-out\"]\n[docs]\npaths = [\"docs/**\"]\n",
        );
        let c = discover_with(d.path(), None, &no_env).unwrap();
        assert_eq!(c.base_dir, d.path());
        assert_eq!(
            c.config_file.as_deref(),
            Some(d.path().join(".agents/mesh-mcp.toml").as_path())
        );
        assert_eq!(labels(&c), ["docs", "services/orders"]);
        assert_eq!(c.roots[1].path, d.path().join("services/orders"));
        assert_eq!(c.excludes, ["/tmp-out"]);
        assert_eq!(c.docs.paths, ["docs/**"]);
        assert_eq!(
            workspace_dir(Path::new("/w/.agents/mesh-mcp.toml")),
            Path::new("/w")
        );
        assert_eq!(
            workspace_dir(Path::new("/w/conf/x.toml")),
            Path::new("/w/conf")
        );
    }

    #[test]
    fn a_subdirectory_of_a_configured_workspace_says_whose_config_it_does_not_use() {
        let d = TempDir::new("parent-config");
        d.dir("services/orders/src");
        d.file(
            ".agents/mesh-mcp.toml",
            "[workspace]\nroots = [\"services/orders\"]\n",
        );
        let sub = d.path().join("services/orders");
        let c = discover_with(&sub, None, &no_env).unwrap();
        assert_eq!(c.config_file, None);
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
        let w = &c.warnings[0];
        assert!(
            w.contains(&d.path().join(".agents/mesh-mcp.toml").display().to_string())
                && w.contains(&format!("Start mesh-mcp in {}", d.path().display())),
            "{w}"
        );
        // In the workspace itself, or in a tree with no config above, nothing is said.
        assert!(
            discover_with(d.path(), None, &no_env)
                .unwrap()
                .warnings
                .is_empty()
        );
        let alone = TempDir::new("no-parent-config");
        alone.dir("a/b");
        let c = discover_with(&alone.path().join("a/b"), None, &no_env).unwrap();
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    }

    #[test]
    fn discovery_order() {
        let d = TempDir::new("order");
        d.dir("a").dir("b").dir("conf/c");
        // Nothing: zero-config.
        let c = discover_with(d.path(), None, &no_env).unwrap();
        assert_eq!(c.config_file, None);
        assert_eq!(labels(&c), ["."]);
        // mesh-mcp.toml beside.
        d.file("mesh-mcp.toml", "[workspace]\nroots = [\"a\"]\n");
        assert_eq!(
            labels(&discover_with(d.path(), None, &no_env).unwrap()),
            ["a"]
        );
        // .agents/ wins, with a warning about the ignored file.
        d.file(".agents/mesh-mcp.toml", "[workspace]\nroots = [\"b\"]\n");
        let c = discover_with(d.path(), None, &no_env).unwrap();
        assert_eq!(labels(&c), ["b"]);
        assert!(
            c.warnings[0].contains("ignoring the second"),
            "{:?}",
            c.warnings
        );
        // An explicit file, relative to cwd, wins over both; its own dir is the workspace dir.
        d.file(
            "conf/other.toml",
            "[workspace]\nroots = [\"c\", \"../a\"]\n",
        );
        let c = discover_with(d.path(), Some(Path::new("conf/other.toml")), &no_env).unwrap();
        assert_eq!(c.base_dir, d.path().join("conf"));
        assert_eq!(labels(&c), ["../a", "c"]);
        // A missing explicit file is an I/O error naming it.
        let e = discover_with(d.path(), Some(Path::new("missing.toml")), &no_env).unwrap_err();
        assert!(
            matches!(&e, ConfigError::Io { path, .. } if path.ends_with("missing.toml")),
            "{e}"
        );
        assert!(std::error::Error::source(&e).is_some());
    }
    #[cfg(unix)]
    #[test]
    fn explicit_config_inside_agents_dir_and_symlinked_services() {
        let d = TempDir::new("explicit-agents");
        let outside = TempDir::new("outside");
        outside.file("go.mod", "module x");
        d.file("services/real/go.mod", "module real");
        std::os::unix::fs::symlink(outside.path(), d.path().join("services/linked")).unwrap();
        // Detection ignores symlinked service dirs (they may point out of the workspace).
        assert_eq!(labels(&zero_config(d.path())), [".", "services/real"]);
        d.file(
            ".agents/custom.toml",
            "[workspace]\nroots = [\"services/real\"]\n",
        );
        let sub = d.path().join("services");
        let c = discover_with(&sub, Some(&d.path().join(".agents/custom.toml")), &no_env).unwrap();
        assert_eq!(c.base_dir, d.path());
        assert_eq!(labels(&c), ["services/real"]);
    }
}
