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

pub mod toml;

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::path::{Component, Path, PathBuf};

use self::toml::{Item, Table, Value};

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
            ConfigError::Syntax {
                file,
                line,
                message,
            } => write!(f, "{}:{line}: {message}", file.display()),
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
                "{}:{line}: bad value for `{key}`: {message}",
                file.display()
            ),
            ConfigError::NoMatch {
                file,
                line,
                pattern,
                resolved_against,
            } => write!(
                f,
                "{}:{line}: root `{pattern}` matches no directory under {}; fix the pattern or \
                 remove it (relative roots resolve against the workspace dir)",
                file.display(),
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
            ConfigError::UnsetVariable { file, line, name } => write!(
                f,
                "{}:{line}: environment variable `{name}` is not set; set it, or give a default \
                 with ${{{name}:-default}} (relative paths already resolve against the \
                 workspace dir)",
                file.display()
            ),
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
    Ok(zero_config(&base))
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

/// The configuration without any file: the base dir plus every detected service directory
/// (see [`detect_layout`]). Callers should check the base is not a system directory first;
/// [`discover`] does.
pub fn zero_config(base: &Path) -> Config {
    let base = fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
    let roots = detected_roots(&base);
    Config {
        name: default_name(&base),
        base_dir: base,
        config_file: None,
        roots,
        excludes: Vec::new(),
        docs: DocsConfig::default(),
        patterns: Vec::new(),
        policy: PolicyConfig::default(),
        audit: AuditConfig::default(),
        cache: CacheConfig::default(),
        warnings: Vec::new(),
    }
}

fn default_name(base: &Path) -> String {
    base.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "workspace".into())
}

/// `.` plus the detected service roots, sorted by label.
fn detected_roots(base: &Path) -> Vec<Root> {
    let mut roots = vec![Root {
        path: base.to_path_buf(),
        label: ".".into(),
    }];
    for d in detect_layout(base) {
        let joined = base.join(&d.root);
        let path = fs::canonicalize(&joined).unwrap_or(joined);
        roots.push(Root {
            path,
            label: d.root,
        });
    }
    crate::order::sort_by(&mut roots, |a, b| a.label.cmp(&b.label));
    roots
}

/// Directories whose children are services in common monorepo layouts.
const CONTAINERS: [&str; 4] = ["apps", "packages", "services", "src"];

/// Files that mark a directory as a project of some language (or a deployable image).
const MANIFESTS: [&str; 17] = [
    "go.mod",
    "package.json",
    "pyproject.toml",
    "setup.py",
    "requirements.txt",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "Cargo.toml",
    "Gemfile",
    "composer.json",
    "Package.swift",
    "build.sbt",
    "CMakeLists.txt",
    "*.csproj",
    "Dockerfile",
    "Containerfile",
];

/// Extensions of source files that make a directory look like a service.
const SOURCE_EXTENSIONS: [&str; 26] = [
    "go", "java", "kt", "kts", "cs", "py", "ts", "tsx", "js", "jsx", "mjs", "cjs", "rs", "c", "cc",
    "cpp", "cxx", "h", "hpp", "rb", "php", "swift", "scala", "proto", "m", "mm",
];

/// Directories never looked into during detection.
const SKIP_DIRS: [&str; 6] = [
    "node_modules",
    "target",
    "build",
    "dist",
    "vendor",
    "__pycache__",
];

/// Build-output directories (the crawler's built-in excludes) that wildcards never match: a root
/// there would index nothing.
const GLOB_SKIP: [&str; 3] = ["node_modules", "target", "build"];

/// At most this many directory entries are read per directory during detection.
const DETECT_ENTRY_LIMIT: usize = 4096;

/// At most this many subdirectories of a candidate are searched for source files.
const DETECT_SUBDIR_LIMIT: usize = 32;

/// How deep below the base a build manifest is looked for (`src/<group>/<service>/` is 3).
const DETECT_DEPTH: usize = 4;

/// At most this many directories are read while looking for manifests: detection runs before
/// the first answer and must stay a few milliseconds on any tree.
const DETECT_DIR_BUDGET: usize = 2_000;

/// Directory names that are never a service root: tests (`tests/`, `e2e/`, `Basket.UnitTests/`),
/// docs, examples and samples.
fn is_never_root_dir(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    matches!(
        lower.as_str(),
        "test"
            | "tests"
            | "e2e"
            | "__tests__"
            | "spec"
            | "testing"
            | "testdata"
            | "fixtures"
            | "examples"
            | "example"
            | "samples"
            | "docs"
            | "doc"
    ) || lower.ends_with(".tests")
        || lower.ends_with("tests") && (name.contains('.') || name.ends_with("Tests"))
        || lower.ends_with(".unittests")
        || lower.ends_with("-tests")
        || lower.ends_with("_tests")
}

/// Finds the service and library roots below `base`: every directory with a build manifest
/// (`go.mod`, `package.json`, `pom.xml`, `*.csproj`, `requirements.txt`, `Dockerfile`, …) up to
/// [`DETECT_DEPTH`] levels down, the topmost one when manifests nest (a service's own modules
/// stay inside it), so `src/<group>/<service>/` layouts give one root per service; and, under
/// `services/`, `apps/`, `packages/` and `src/`, a child with source files but no manifest.
/// Hidden, build-output, test, docs and example directories are never roots. Under `src/` of a
/// base that is itself one project (it has a manifest), a child counts only with its own
/// manifest. The base itself is not listed: it is always a root. Sorted by label.
pub fn detect_layout(base: &Path) -> Vec<Detection> {
    let base_has_manifest = manifest_in(base).is_some();
    let mut found: Vec<Detection> = Vec::new();
    let mut budget = DETECT_DIR_BUDGET;
    // Breadth-first, so a shallower manifest is found before anything below it.
    let mut queue: std::collections::VecDeque<(String, usize)> =
        child_dirs(base).into_iter().map(|c| (c, 1)).collect();
    while let Some((label, depth)) = queue.pop_front() {
        if budget == 0 {
            break;
        }
        budget -= 1;
        let name = label.rsplit('/').next().unwrap_or(&label);
        if is_never_root_dir(name) || GLOB_SKIP.contains(&name) {
            continue;
        }
        let path = base.join(&label);
        if let Some(m) = manifest_in(&path) {
            found.push(Detection {
                reason: format!("{label} has {m}"),
                root: label,
            });
            continue;
        }
        if depth < DETECT_DEPTH {
            for child in child_dirs(&path) {
                queue.push_back((format!("{label}/{child}"), depth + 1));
            }
        }
    }
    for container in CONTAINERS {
        let dir = base.join(container);
        if !dir.is_dir() {
            continue;
        }
        for child in child_dirs(&dir) {
            let label = format!("{container}/{child}");
            if found
                .iter()
                .any(|d| d.root == label || d.root.starts_with(&format!("{label}/")))
                || is_never_root_dir(&child)
            {
                continue;
            }
            if container == "src" && base_has_manifest {
                continue;
            }
            if let Some(src) = source_in(&dir.join(&child)) {
                found.push(Detection {
                    reason: format!("{label} has source files ({src})"),
                    root: label,
                });
            }
        }
    }
    crate::order::sort_by(&mut found, |a, b| a.root.cmp(&b.root));
    tracing::debug!(target: "mesh::config", base = %base.display(), found = found.len(), "layout detection");
    found
}

/// What a root is, as far as its manifests tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RootKind {
    /// A deployable service or app: a `Dockerfile`, a web/worker/executable project, a Spring
    /// Boot or Node app with a start script, a Go `main` package.
    Service,
    /// A library, shared code, or tooling (an Aspire host, a license-attribution package).
    Library,
    /// The workspace base (`.`): files that belong to no service.
    Workspace,
}

impl RootKind {
    /// The word shown in answers.
    pub fn name(self) -> &'static str {
        match self {
            RootKind::Service => "service",
            RootKind::Library => "library",
            RootKind::Workspace => "workspace",
        }
    }
}

/// Reads at most this many bytes of a manifest to classify it.
const MANIFEST_READ_LIMIT: u64 = 64 * 1024;

fn read_head(path: &Path) -> String {
    use std::io::Read;
    let mut out = String::new();
    if let Ok(f) = fs::File::open(path) {
        let _ = f.take(MANIFEST_READ_LIMIT).read_to_string(&mut out);
    }
    out
}

/// What a root's own manifests say, before the workspace's conventions are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RootSignals {
    /// A `Dockerfile` or `Containerfile`: it ships as an image.
    pub image: bool,
    /// The manifest names an application: a web, worker or executable .NET project, a Spring
    /// Boot build.
    pub app: bool,
    /// The manifest names a library or tooling: a plain .NET class library, an Aspire host, a
    /// Maven aggregator.
    pub library: bool,
}

/// Reads the signals of the root at `dir`.
pub fn root_signals(dir: &Path) -> RootSignals {
    let names = entry_names(dir);
    let has = |n: &str| names.iter().any(|(e, t)| t.is_file() && e == n);
    let image = has("Dockerfile")
        || has("Containerfile")
        || names
            .iter()
            .any(|(e, t)| t.is_file() && e.starts_with("Dockerfile."));
    let mut app = false;
    let mut library = false;
    if let Some((csproj, _)) = names
        .iter()
        .find(|(e, t)| t.is_file() && e.ends_with(".csproj"))
    {
        let text = read_head(&dir.join(csproj));
        if text.contains("Aspire.AppHost") {
            library = true;
        } else if text.contains("Microsoft.NET.Sdk.Web")
            || text.contains("Microsoft.NET.Sdk.Worker")
            || text.contains("<UseMaui>true")
            || text.contains(">Exe<")
            || text.contains(">WinExe<")
        {
            app = true;
        } else {
            library = true;
        }
    }
    if has("pom.xml") {
        let text = read_head(&dir.join("pom.xml"));
        if text.contains("spring-boot-maven-plugin") || text.contains("<packaging>war") {
            app = true;
        } else if text.contains("<packaging>pom</packaging>") {
            library = true;
        }
    }
    for gradle in ["build.gradle", "build.gradle.kts"] {
        if has(gradle) && read_head(&dir.join(gradle)).contains("org.springframework.boot") {
            app = true;
        }
    }
    RootSignals {
        image,
        app,
        library,
    }
}

/// The kind of every root (`labels` and their `signals`, in the same order): the base is the
/// workspace; a root whose manifest names an application or that ships an image is a
/// service; one whose manifest names a library is a library; and where the workspace's
/// services ship images (three roots or more do), a root without one or any application
/// signal is a library or a tool (a shared module, a script with a `package.json`).
pub fn root_kinds(labels: &[&str], signals: &[RootSignals]) -> Vec<RootKind> {
    let images = signals.iter().filter(|s| s.image).count();
    labels
        .iter()
        .zip(signals)
        .map(|(label, s)| {
            if *label == "." {
                RootKind::Workspace
            } else if s.app || (s.image && !s.library) {
                RootKind::Service
            } else if s.library || images >= 3 {
                RootKind::Library
            } else {
                RootKind::Service
            }
        })
        .collect()
}

/// Sorted names of the entries of `dir`, bounded.
fn entry_names(dir: &Path) -> Vec<(String, fs::FileType)> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<_> = rd
        .take(DETECT_ENTRY_LIMIT)
        .filter_map(Result::ok)
        .filter_map(|e| Some((e.file_name().into_string().ok()?, e.file_type().ok()?)))
        .collect();
    crate::order::sort_by(&mut names, |a, b| a.0.cmp(&b.0));
    names
}

/// Real (non-symlink), non-hidden, non-build child directories, sorted.
fn child_dirs(dir: &Path) -> Vec<String> {
    entry_names(dir)
        .into_iter()
        .filter(|(n, t)| t.is_dir() && !n.starts_with('.') && !SKIP_DIRS.contains(&n.as_str()))
        .map(|(n, _)| n)
        .collect()
}

fn manifest_in(dir: &Path) -> Option<String> {
    for m in MANIFESTS {
        if let Some(ext) = m.strip_prefix("*.") {
            let hit = entry_names(dir)
                .into_iter()
                .find(|(n, t)| t.is_file() && Path::new(n).extension().is_some_and(|e| e == ext));
            if let Some((n, _)) = hit {
                return Some(n);
            }
        } else if dir.join(m).is_file() {
            return Some(m.to_string());
        }
    }
    None
}

fn is_source(name: &str) -> bool {
    Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| SOURCE_EXTENSIONS.contains(&e))
}

/// The first source file directly in `dir` or in one of its first subdirectories, relative.
fn source_in(dir: &Path) -> Option<String> {
    let entries = entry_names(dir);
    if let Some((n, _)) = entries.iter().find(|(n, t)| t.is_file() && is_source(n)) {
        return Some(n.clone());
    }
    entries
        .iter()
        .filter(|(n, t)| t.is_dir() && !n.starts_with('.') && !SKIP_DIRS.contains(&n.as_str()))
        .take(DETECT_SUBDIR_LIMIT)
        .find_map(|(sub, _)| {
            entry_names(&dir.join(sub))
                .into_iter()
                .find(|(n, t)| t.is_file() && is_source(n))
                .map(|(n, _)| format!("{sub}/{n}"))
        })
}

/// Reading state for one config file.
struct Ctx<'a> {
    file: PathBuf,
    base: PathBuf,
    env: Env<'a>,
    warnings: Vec<String>,
}

const TOP_KEYS: &[&str] = &["workspace", "docs", "patterns", "policy", "audit", "cache"];
const WORKSPACE_KEYS: &[&str] = &["name", "roots", "exclude"];
const DOCS_KEYS: &[&str] = &["enabled", "paths", "aliases", "stop_words"];
const PATTERN_KEYS: &[&str] = &["name", "kind", "files", "regex", "topic_group"];
const POLICY_KEYS: &[&str] = &["mode", "stop_rules"];
const AUDIT_KEYS: &[&str] = &["enabled"];
const CACHE_KEYS: &[&str] = &["enabled", "max_size_mb"];

fn load_file(path: &Path, env: Env) -> Result<Config, ConfigError> {
    let text = fs::read_to_string(path).map_err(|error| ConfigError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    // Canonicalise the directory, not the file: a symlinked config belongs where it is linked.
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    let dir = canonical(parent.unwrap_or(Path::new(".")))?;
    let file = dir.join(path.file_name().unwrap_or_default());
    let doc = toml::parse(&text).map_err(|e| ConfigError::Syntax {
        file: file.clone(),
        line: e.line,
        message: e.message,
    })?;
    let base = workspace_dir(&file);
    let mut cx = Ctx {
        file,
        base,
        env,
        warnings: Vec::new(),
    };
    let config = cx.build(&doc)?;
    tracing::debug!(target: "mesh::config", file = %cx.file.display(), roots = config.roots.len(), "config loaded");
    Ok(config)
}

impl Ctx<'_> {
    fn bad(&self, line: u32, key: &str, message: impl Into<String>) -> ConfigError {
        ConfigError::BadValue {
            file: self.file.clone(),
            line,
            key: key.to_string(),
            message: message.into(),
        }
    }

    fn check_keys(
        &self,
        section: &str,
        table: &Table,
        allowed: &'static [&'static str],
    ) -> Result<(), ConfigError> {
        match table.iter().find(|(k, _)| !allowed.contains(k)) {
            Some((key, item)) => Err(ConfigError::UnknownKey {
                file: self.file.clone(),
                line: item.line,
                section: section.to_string(),
                key: key.to_string(),
                allowed,
            }),
            None => Ok(()),
        }
    }

    fn section<'t>(
        &self,
        doc: &'t Table,
        name: &str,
        allowed: &'static [&'static str],
    ) -> Result<Option<&'t Table>, ConfigError> {
        let Some(item) = doc.get(name) else {
            return Ok(None);
        };
        match &item.value {
            Value::Table(t) => {
                self.check_keys(name, t, allowed)?;
                Ok(Some(t))
            }
            other => Err(self.bad(
                item.line,
                name,
                format!(
                    "expected a [{name}] section, found {}; write the keys under a [{name}] \
                     header",
                    other.type_name()
                ),
            )),
        }
    }

    fn string(
        &self,
        section: &str,
        t: &Table,
        key: &str,
    ) -> Result<Option<(String, u32)>, ConfigError> {
        let Some(item) = t.get(key) else {
            return Ok(None);
        };
        match &item.value {
            Value::String(s) => Ok(Some((s.clone(), item.line))),
            other => Err(self.bad(
                item.line,
                &format!("{section}.{key}"),
                format!(
                    "expected a string, found {}; put the value in quotes",
                    other.type_name()
                ),
            )),
        }
    }

    fn boolean(&self, section: &str, t: &Table, key: &str) -> Result<Option<bool>, ConfigError> {
        let Some(item) = t.get(key) else {
            return Ok(None);
        };
        match &item.value {
            Value::Boolean(b) => Ok(Some(*b)),
            other => Err(self.bad(
                item.line,
                &format!("{section}.{key}"),
                format!("expected true or false, found {}", other.type_name()),
            )),
        }
    }

    fn unsigned(
        &self,
        section: &str,
        t: &Table,
        key: &str,
    ) -> Result<Option<(u64, u32)>, ConfigError> {
        let Some(item) = t.get(key) else {
            return Ok(None);
        };
        match &item.value {
            Value::Integer(n) if *n >= 0 => Ok(Some((*n as u64, item.line))),
            Value::Integer(n) => Err(self.bad(
                item.line,
                &format!("{section}.{key}"),
                format!("expected a non-negative integer, found {n}"),
            )),
            other => Err(self.bad(
                item.line,
                &format!("{section}.{key}"),
                format!("expected an integer, found {}", other.type_name()),
            )),
        }
    }

    fn strings(
        &self,
        section: &str,
        t: &Table,
        key: &str,
    ) -> Result<Option<Vec<(String, u32)>>, ConfigError> {
        let Some(item) = t.get(key) else {
            return Ok(None);
        };
        let full = format!("{section}.{key}");
        let Value::Array(items) = &item.value else {
            let hint = match &item.value {
                Value::String(s) => format!("; write {key} = [{s:?}]"),
                _ => String::new(),
            };
            return Err(self.bad(
                item.line,
                &full,
                format!(
                    "expected an array of strings, found {}{hint}",
                    item.value.type_name()
                ),
            ));
        };
        items
            .iter()
            .map(|i: &Item| match &i.value {
                Value::String(s) => Ok((s.clone(), i.line)),
                other => Err(self.bad(
                    i.line,
                    &full,
                    format!(
                        "expected an array of strings, found {} in it",
                        other.type_name()
                    ),
                )),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    fn string_map(
        &self,
        section: &str,
        t: &Table,
        key: &str,
    ) -> Result<Option<Vec<(String, String)>>, ConfigError> {
        let Some(item) = t.get(key) else {
            return Ok(None);
        };
        let full = format!("{section}.{key}");
        let Value::Table(map) = &item.value else {
            return Err(self.bad(
                item.line,
                &full,
                format!(
                    "expected a table of strings (`{key} = {{ word = \"text\" }}` or a \
                     [{full}] section), found {}",
                    item.value.type_name()
                ),
            ));
        };
        map.iter()
            .map(|(k, i)| match &i.value {
                Value::String(s) => Ok((k.to_string(), s.clone())),
                other => Err(self.bad(
                    i.line,
                    &format!("{full}.{k}"),
                    format!(
                        "expected a string, found {}; put the value in quotes",
                        other.type_name()
                    ),
                )),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    fn expand(&self, text: &str, line: u32, key: &str) -> Result<String, ConfigError> {
        expand_vars(text, self.env).map_err(|e| match e {
            ExpandError::Unset(name) => ConfigError::UnsetVariable {
                file: self.file.clone(),
                line,
                name,
            },
            ExpandError::Syntax(message) => self.bad(line, key, message),
        })
    }

    fn build(&mut self, doc: &Table) -> Result<Config, ConfigError> {
        self.check_keys("", doc, TOP_KEYS)?;
        let workspace = self.section(doc, "workspace", WORKSPACE_KEYS)?;
        let empty = Table::default();
        let ws = workspace.unwrap_or(&empty);

        let name = match self.string("workspace", ws, "name")? {
            Some((n, line)) if n.trim().is_empty() => {
                return Err(self.bad(
                    line,
                    "workspace.name",
                    "the name is empty; remove the key to use the directory name",
                ));
            }
            Some((n, _)) => n,
            None => default_name(&self.base),
        };

        let roots = match self.strings("workspace", ws, "roots")? {
            Some(list) if list.is_empty() => {
                let line = ws.get("roots").map_or(1, |i| i.line);
                return Err(self.bad(
                    line,
                    "workspace.roots",
                    "the list is empty; list at least one directory, or remove the key to \
                     detect the layout automatically",
                ));
            }
            Some(list) => self.resolve_roots(&list)?,
            None => {
                let base = self.base.clone();
                check_prohibited(&base, self.env, Some((self.file.clone(), 1)))?;
                detected_roots(&base)
            }
        };

        let excludes = self
            .strings("workspace", ws, "exclude")?
            .unwrap_or_default()
            .into_iter()
            .map(|(p, line)| self.workspace_pattern(&p, line, "workspace.exclude"))
            .collect::<Result<Vec<_>, _>>()?;

        let docs = self.docs(doc)?;
        let patterns = self.patterns(doc)?;
        let policy = self.policy(doc)?;

        let mut audit = AuditConfig::default();
        if let Some(t) = self.section(doc, "audit", AUDIT_KEYS)? {
            audit.enabled = self.boolean("audit", t, "enabled")?.unwrap_or(true);
        }
        let mut cache = CacheConfig::default();
        if let Some(t) = self.section(doc, "cache", CACHE_KEYS)? {
            if let Some(enabled) = self.boolean("cache", t, "enabled")? {
                cache.enabled = enabled;
            }
            if let Some((mb, line)) = self.unsigned("cache", t, "max_size_mb")? {
                if mb == 0 {
                    return Err(self.bad(
                        line,
                        "cache.max_size_mb",
                        "0 MiB leaves no room; use `enabled = false` to switch the cache off",
                    ));
                }
                cache.max_size_mb = mb;
            }
        }

        Ok(Config {
            base_dir: self.base.clone(),
            config_file: Some(self.file.clone()),
            name,
            roots,
            excludes,
            docs,
            patterns,
            policy,
            audit,
            cache,
            warnings: std::mem::take(&mut self.warnings),
        })
    }

    fn docs(&mut self, doc: &Table) -> Result<DocsConfig, ConfigError> {
        let mut docs = DocsConfig::default();
        let Some(t) = self.section(doc, "docs", DOCS_KEYS)? else {
            return Ok(docs);
        };
        docs.enabled = self.boolean("docs", t, "enabled")?.unwrap_or(true);
        docs.paths = self
            .strings("docs", t, "paths")?
            .unwrap_or_default()
            .into_iter()
            .map(|(p, line)| self.workspace_pattern(&p, line, "docs.paths"))
            .collect::<Result<_, _>>()?;
        // Inserted one by one (the last of a repeated key wins, as with `collect()`), which
        // needs no sort instance for the pairs.
        docs.aliases = BTreeMap::new();
        docs.aliases
            .extend(self.string_map("docs", t, "aliases")?.unwrap_or_default());
        docs.stop_words = self
            .strings("docs", t, "stop_words")?
            .unwrap_or_default()
            .into_iter()
            .map(|(w, _)| w)
            .collect();
        if !docs.enabled
            && (!docs.paths.is_empty() || !docs.aliases.is_empty() || !docs.stop_words.is_empty())
        {
            self.warnings.push(format!(
                "{}: [docs] enabled = false, so paths, aliases and stop_words have no effect",
                self.file.display()
            ));
        }
        Ok(docs)
    }

    fn patterns(&self, doc: &Table) -> Result<Vec<CustomPattern>, ConfigError> {
        let Some(item) = doc.get("patterns") else {
            return Ok(Vec::new());
        };
        let Value::Array(elements) = &item.value else {
            return Err(self.bad(
                item.line,
                "patterns",
                format!(
                    "expected an array of tables, found {}; write each pattern under its own \
                     [[patterns]] header (double brackets)",
                    item.value.type_name()
                ),
            ));
        };
        let mut out: Vec<CustomPattern> = Vec::new();
        for el in elements {
            let Value::Table(t) = &el.value else {
                return Err(self.bad(
                    el.line,
                    "patterns",
                    format!(
                        "expected a table, found {}; use [[patterns]] sections",
                        el.value.type_name()
                    ),
                ));
            };
            self.check_keys("patterns", t, PATTERN_KEYS)?;
            let required = |key: &str| -> Result<(String, u32), ConfigError> {
                match self.string("patterns", t, key)? {
                    Some((v, line)) if v.is_empty() => {
                        Err(self.bad(line, &format!("patterns.{key}"), "the value is empty"))
                    }
                    Some(v) => Ok(v),
                    None => Err(self.bad(
                        el.line,
                        &format!("patterns.{key}"),
                        format!("missing required key `{key}` in this [[patterns]] entry"),
                    )),
                }
            };
            let (name, name_line) = required("name")?;
            if out.iter().any(|p| p.name == name) {
                return Err(self.bad(
                    name_line,
                    "patterns.name",
                    format!("pattern name `{name}` is used twice; give each pattern its own name"),
                ));
            }
            let (kind, kind_line) = required("kind")?;
            let kind = match kind.as_str() {
                "producer" => PatternKind::Producer,
                "consumer" => PatternKind::Consumer,
                other => {
                    return Err(self.bad(
                        kind_line,
                        "patterns.kind",
                        format!(
                            "`{other}` is not a pattern kind; allowed values: producer, consumer"
                        ),
                    ));
                }
            };
            let (regex, _) = required("regex")?;
            let file_glob = self.string("patterns", t, "files")?.map(|(g, _)| g);
            let topic_group = match self.unsigned("patterns", t, "topic_group")? {
                Some((n, line)) => usize::try_from(n).map_err(|_| {
                    self.bad(
                        line,
                        "patterns.topic_group",
                        "the capture group index is too large",
                    )
                })?,
                None => 1,
            };
            out.push(CustomPattern {
                name,
                kind,
                file_glob,
                regex,
                topic_group,
            });
        }
        Ok(out)
    }

    fn policy(&mut self, doc: &Table) -> Result<PolicyConfig, ConfigError> {
        let mut policy = PolicyConfig::default();
        let Some(t) = self.section(doc, "policy", POLICY_KEYS)? else {
            return Ok(policy);
        };
        if let Some((mode, line)) = self.string("policy", t, "mode")? {
            if !POLICY_MODES.contains(&mode.as_str()) {
                return Err(self.bad(
                    line,
                    "policy.mode",
                    format!(
                        "`{mode}` is not a policy mode; allowed values: {}",
                        POLICY_MODES.join(", ")
                    ),
                ));
            }
            policy.mode = mode;
        }
        policy.stop_rules = self
            .string_map("policy", t, "stop_rules")?
            .unwrap_or_default();
        if policy.mode == "allow_all" && !policy.stop_rules.is_empty() {
            self.warnings.push(format!(
                "{}: [policy] mode = \"allow_all\" never applies the {} stop rule(s); set mode = \
                 \"audit_warn\" or \"enforce_refusal\"",
                self.file.display(),
                policy.stop_rules.len()
            ));
        }
        Ok(policy)
    }

    /// An exclude or docs pattern: variables expanded, an absolute path inside the workspace
    /// rewritten relative to it, a leading `./` dropped; `..` is refused.
    fn workspace_pattern(&self, raw: &str, line: u32, key: &str) -> Result<String, ConfigError> {
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

    fn resolve_roots(&mut self, list: &[(String, u32)]) -> Result<Vec<Root>, ConfigError> {
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
enum ExpandError {
    /// `${NAME}` without a default and `NAME` is unset.
    Unset(String),
    /// Malformed `${…}`.
    Syntax(String),
}

/// Expands `${VAR}` and `${VAR:-default}` (default used when unset or empty). A `$` not
/// followed by `{` is kept as is; defaults are literal text (no nesting).
fn expand_vars(text: &str, env: Env) -> Result<String, ExpandError> {
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

fn check_prohibited(
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
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A unique temp directory removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> TempDir {
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

        fn path(&self) -> &Path {
            &self.0
        }

        fn dir(&self, rel: &str) -> &TempDir {
            fs::create_dir_all(self.0.join(rel)).unwrap();
            self
        }

        fn file(&self, rel: &str, text: &str) -> &TempDir {
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

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn load(dir: &TempDir, text: &str) -> Result<Config, ConfigError> {
        dir.file(CONFIG_FILE_NAME, text);
        discover_with(dir.path(), None, &no_env)
    }

    fn labels(c: &Config) -> Vec<&str> {
        c.roots.iter().map(|r| r.label.as_str()).collect()
    }

    const FULL: &str = r#"
[workspace]
name = "shop"
roots = ["services/*", "proto", "docs"]
exclude = ["**/fixtures/**", "./gen/"]

[docs]
enabled = true
paths = ["docs/**"]
aliases = { k8s = "kubernetes", dlq = "dead-letter-queue" }
stop_words = ["the", "a"]

[[patterns]]
name = "outbox"
kind = "producer"
files = "*.ts"
regex = 'outbox\.publish\(\s*"([^"]+)"'
topic_group = 1

[[patterns]]
name = "inbox"
kind = "consumer"
regex = 'inbox\.on\("([^"]+)"'

[policy]
mode = "enforce_refusal"
[policy.stop_rules]
deploy = "Infrastructure changes need a review by the platform team."
proto = "Contract first."

[audit]
enabled = false

[cache]
enabled = true
max_size_mb = 64
"#;

    #[test]
    fn full_example_is_read() {
        let d = TempDir::new("full");
        d.dir("services/orders")
            .dir("services/payments")
            .dir("proto")
            .dir("docs");
        d.file("services/README.md", "not a root");
        let c = load(&d, FULL).unwrap();
        assert_eq!(c.base_dir, d.path());
        assert_eq!(
            c.config_file.as_deref(),
            Some(d.path().join(CONFIG_FILE_NAME).as_path())
        );
        assert_eq!(c.name, "shop");
        assert_eq!(
            labels(&c),
            ["docs", "proto", "services/orders", "services/payments"]
        );
        assert_eq!(c.roots[2].path, d.path().join("services/orders"));
        assert_eq!(c.excludes, ["**/fixtures/**", "gen/"]);
        assert!(c.docs.enabled);
        assert_eq!(c.docs.paths, ["docs/**"]);
        assert_eq!(
            c.docs.aliases.get("dlq").map(String::as_str),
            Some("dead-letter-queue")
        );
        assert_eq!(c.docs.aliases.len(), 2);
        assert_eq!(c.docs.stop_words, ["the", "a"]);
        assert_eq!(
            c.patterns[0],
            CustomPattern {
                name: "outbox".into(),
                kind: PatternKind::Producer,
                file_glob: Some("*.ts".into()),
                regex: r#"outbox\.publish\(\s*"([^"]+)""#.into(),
                topic_group: 1,
            }
        );
        assert_eq!(c.patterns[1].kind, PatternKind::Consumer);
        assert_eq!(c.patterns[1].file_glob, None);
        assert_eq!(c.patterns[1].topic_group, 1);
        assert_eq!(c.policy.mode, "enforce_refusal");
        assert_eq!(c.policy.stop_rules[0].0, "deploy");
        assert_eq!(
            c.policy.stop_rules[1],
            ("proto".into(), "Contract first.".into())
        );
        assert!(!c.audit.enabled);
        assert_eq!(
            c.cache,
            CacheConfig {
                enabled: true,
                max_size_mb: 64
            }
        );
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    }

    #[test]
    fn defaults_when_sections_are_missing() {
        let d = TempDir::new("defaults");
        let c = load(&d, "[workspace]\nroots = [\".\"]\n").unwrap();
        assert_eq!(c.name, d.path().file_name().unwrap().to_string_lossy());
        assert_eq!(labels(&c), ["."]);
        assert_eq!(c.docs, DocsConfig::default());
        assert_eq!(c.policy.mode, "allow_all");
        assert!(c.audit.enabled);
        assert_eq!(
            c.cache,
            CacheConfig {
                enabled: crate::index::cache::ENABLED_BY_DEFAULT,
                max_size_mb: 256
            }
        );
        // No roots key: the layout is detected as in zero-config.
        d.file("services/a/go.mod", "module a");
        let c = load(&d, "[docs]\nstop_words = [\"the\"]\n").unwrap();
        assert_eq!(labels(&c), [".", "services/a"]);
    }

    #[test]
    fn unknown_keys_name_file_line_and_allowed_keys() {
        let d = TempDir::new("unknown");
        d.dir("services");
        let e = load(&d, "# c\n[workspace]\nname = \"x\"\n\n\n\nrots = [\"a\"]\n").unwrap_err();
        let file = d.path().join(CONFIG_FILE_NAME);
        assert_eq!(
            e.to_string(),
            format!(
                "{}:7: unknown key `rots` in [workspace]; allowed keys: name, roots, exclude",
                file.display()
            )
        );
        let e = load(&d, "[workspace]\nroots = [\".\"]\n[engines]\nx = 1\n").unwrap_err();
        assert!(
            matches!(&e, ConfigError::UnknownKey { line: 3, key, section, .. } if key == "engines" && section.is_empty()),
            "{e}"
        );
        assert!(
            e.to_string()
                .contains("allowed sections: workspace, docs, patterns, policy, audit, cache"),
            "{e}"
        );
        let e = load(&d, "[policy]\nmode = \"allow_all\"\n[policy.rules]\n").unwrap_err();
        assert!(
            e.to_string()
                .contains(":3: unknown key `rules` in [policy]; allowed keys: mode, stop_rules"),
            "{e}"
        );
        let e = load(
            &d,
            "[[patterns]]\nname = \"a\"\nkind = \"producer\"\nregex = \"x\"\nfile = \"*.ts\"\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains(":5: unknown key `file` in [patterns]; allowed keys: name, kind, files, regex, topic_group"), "{e}");
        let e = load(&d, "top = 1\n").unwrap_err();
        assert!(matches!(e, ConfigError::UnknownKey { line: 1, .. }), "{e}");
        let e = load(&d, "[cache]\nmax_size = 1\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("in [cache]; allowed keys: enabled, max_size_mb"),
            "{e}"
        );
    }

    #[test]
    fn bad_values_are_explained() {
        let d = TempDir::new("bad");
        let cases: &[(&str, u32, &str)] = &[
            (
                "[policy]\nmode = \"strict\"\n",
                2,
                "allowed values: allow_all, audit_warn, enforce_refusal",
            ),
            (
                "[workspace]\nroots = \"services/*\"\n",
                2,
                "write roots = [\"services/*\"]",
            ),
            (
                "[workspace]\nroots = []\n",
                2,
                "list at least one directory",
            ),
            (
                "[workspace]\nroots = [\".\", 3]\n",
                2,
                "found an integer in it",
            ),
            ("[docs]\nenabled = \"yes\"\n", 2, "expected true or false"),
            (
                "[docs]\naliases = [\"a\"]\n",
                2,
                "expected a table of strings",
            ),
            ("[docs]\naliases = { a = 1 }\n", 2, "`docs.aliases.a`"),
            ("[cache]\nmax_size_mb = -1\n", 2, "non-negative"),
            ("[cache]\nmax_size_mb = 0\n", 2, "enabled = false"),
            (
                "[cache]\nmax_size_mb = 1.5\n",
                2,
                "expected an integer, found a float",
            ),
            ("workspace = 1\n", 1, "expected a [workspace] section"),
            (
                "[patterns]\nname = \"x\"\n",
                1,
                "[[patterns]] header (double brackets)",
            ),
            (
                "[[patterns]]\nname = \"x\"\nkind = \"publisher\"\nregex = \"x\"\n",
                3,
                "allowed values: producer, consumer",
            ),
            (
                "\n[[patterns]]\nname = \"x\"\nkind = \"producer\"\n",
                2,
                "missing required key `regex`",
            ),
            (
                "[[patterns]]\nname = \"x\"\nkind = \"producer\"\nregex = \"\"\n",
                4,
                "empty",
            ),
            (
                "[[patterns]]\nname = \"x\"\nkind = \"producer\"\nregex = \"a\"\ntopic_group = -2\n",
                5,
                "non-negative",
            ),
            (
                "[[patterns]]\nname = \"x\"\nkind = \"producer\"\nregex = \"a\"\n[[patterns]]\nname = \"x\"\nkind = \"consumer\"\nregex = \"b\"\n",
                6,
                "used twice",
            ),
            ("[workspace]\nname = \"\"\n", 2, "name is empty"),
            ("[workspace]\nexclude = [\"../x\"]\n", 2, "cannot use `..`"),
        ];
        for (text, line, needle) in cases {
            let e = load(&d, text).expect_err(text);
            assert!(
                matches!(&e, ConfigError::BadValue { line: l, .. } if l == line),
                "{text}: {e}"
            );
            assert!(e.to_string().contains(needle), "{text}: {e}");
        }
    }

    #[test]
    fn syntax_errors_carry_file_and_line() {
        let d = TempDir::new("syntax");
        let e = load(&d, "[workspace]\nroots = [\"a\",\n  \"b\" \"c\"]\n").unwrap_err();
        assert!(matches!(e, ConfigError::Syntax { line: 3, .. }), "{e}");
        let file = d.path().join(CONFIG_FILE_NAME);
        assert!(
            e.to_string()
                .starts_with(&format!("{}:3: expected `,` or `]`", file.display())),
            "{e}"
        );
        let e = load(&d, "[[patterns]]\nregex = \"outbox\\.publish\"\n").unwrap_err();
        assert!(e.to_string().contains(":2: unknown escape"), "{e}");
    }

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
    fn warnings_for_settings_without_effect() {
        let d = TempDir::new("warn");
        let c = load(&d, "[policy]\n[policy.stop_rules]\ndeploy = \"no\"\n[docs]\nenabled = false\nstop_words = [\"a\"]\n").unwrap();
        assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
        assert!(
            c.warnings
                .iter()
                .any(|w| w.contains("never applies the 1 stop rule"))
        );
        assert!(c.warnings.iter().any(|w| w.contains("have no effect")));
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

    #[test]
    fn zero_config_services_with_manifests() {
        let d = TempDir::new("zc-services");
        d.file("services/orders/go.mod", "module orders")
            .file("services/web/package.json", "{}")
            .file("services/billing/Billing.csproj", "<Project/>")
            .file("services/jvm/build.gradle.kts", "")
            .dir("services/empty")
            .dir("services/.git")
            .file("services/notes.md", "")
            .dir("docs");
        let found = detect_layout(d.path());
        let roots: Vec<_> = found.iter().map(|f| f.root.as_str()).collect();
        assert_eq!(
            roots,
            [
                "services/billing",
                "services/jvm",
                "services/orders",
                "services/web"
            ]
        );
        assert_eq!(found[2].reason, "services/orders has go.mod");
        assert_eq!(found[0].reason, "services/billing has Billing.csproj");
        let c = zero_config(d.path());
        assert_eq!(
            labels(&c),
            [
                ".",
                "services/billing",
                "services/jvm",
                "services/orders",
                "services/web"
            ]
        );
        assert_eq!(c.roots[0].path, d.path());
        assert_eq!(c.roots[3].path, d.path().join("services/orders"));
        assert_eq!(c.config_file, None);
        assert_eq!(c.name, d.path().file_name().unwrap().to_string_lossy());
    }

    #[test]
    fn zero_config_apps_with_sources_only() {
        let d = TempDir::new("zc-apps");
        d.file("apps/web/src/main.tsx", "")
            .file("apps/api/server.py", "")
            .file("apps/docs/README.md", "")
            .file("apps/deep/a/b/c.go", "")
            .file("apps/deps/node_modules/x/index.js", "")
            .file("packages/ui/index.ts", "");
        let found = detect_layout(d.path());
        let roots: Vec<_> = found.iter().map(|f| f.root.as_str()).collect();
        assert_eq!(roots, ["apps/api", "apps/web", "packages/ui"]);
        assert_eq!(found[1].reason, "apps/web has source files (src/main.tsx)");
        assert_eq!(found[0].reason, "apps/api has source files (server.py)");
    }

    #[test]
    fn manifests_at_any_depth_are_roots_topmost_first() {
        let d = TempDir::new("manifest-depth");
        d.file("package.json", "{}")
            .file(
                "src/Basket.API/Basket.API.csproj",
                "<Project Sdk=\"Microsoft.NET.Sdk.Web\">",
            )
            .file(
                "src/EventBus/EventBus.csproj",
                "<Project Sdk=\"Microsoft.NET.Sdk\">",
            )
            .file("src/groups/billing/invoices/go.mod", "module x")
            .file("ratings/Dockerfile", "FROM php")
            .file("ratings/html/composer.json", "{}")
            .file(
                "tests/Basket.UnitTests/Basket.UnitTests.csproj",
                "<Project>",
            )
            .file(
                "src/Catalog.FunctionalTests/Catalog.FunctionalTests.csproj",
                "<Project>",
            )
            .file("docs/site/package.json", "{}")
            .file("node_modules/x/package.json", "{}")
            .file("K8s/helm/values.yaml", "a: 1");
        let roots: Vec<String> = detect_layout(d.path())
            .into_iter()
            .map(|x| x.root)
            .collect();
        assert_eq!(
            roots,
            [
                "ratings",
                "src/Basket.API",
                "src/EventBus",
                "src/groups/billing/invoices"
            ]
        );
        let kinds = |labels: &[&str]| {
            let signals: Vec<RootSignals> = labels
                .iter()
                .map(|l| root_signals(&d.path().join(l)))
                .collect();
            root_kinds(labels, &signals)
        };
        assert_eq!(
            kinds(&[".", "ratings", "src/Basket.API", "src/EventBus"]),
            [
                RootKind::Workspace,
                RootKind::Service,
                RootKind::Service,
                RootKind::Library
            ]
        );
        // Where the services ship images, a root without one is a library or a tool.
        let signals = |image: bool| RootSignals {
            image,
            app: false,
            library: false,
        };
        assert_eq!(
            root_kinds(
                &["a", "b", "c", "tools/x"],
                &[signals(true), signals(true), signals(true), signals(false)]
            ),
            [
                RootKind::Service,
                RootKind::Service,
                RootKind::Service,
                RootKind::Library
            ]
        );
        assert_eq!(
            root_kinds(&["a", "b"], &[signals(false), signals(false)]),
            [RootKind::Service, RootKind::Service]
        );
    }

    #[test]
    fn zero_config_plain_repo_and_empty_dir() {
        let d = TempDir::new("zc-plain");
        d.file("Cargo.toml", "[package]")
            .file("src/config/mod.rs", "")
            .file("src/lib.rs", "");
        assert!(detect_layout(d.path()).is_empty());
        assert_eq!(labels(&zero_config(d.path())), ["."]);
        // Without a manifest at the base, src/* children with sources are services.
        let m = TempDir::new("zc-src");
        m.file("src/orders/main.go", "")
            .file("src/shared/readme.md", "");
        assert_eq!(labels(&zero_config(m.path())), [".", "src/orders"]);
        // But a src/ child with its own manifest counts even under a manifest-carrying base.
        d.file("src/tool/Cargo.toml", "[package]");
        assert_eq!(labels(&zero_config(d.path())), [".", "src/tool"]);
        let e = TempDir::new("zc-empty");
        assert!(detect_layout(e.path()).is_empty());
        let c = zero_config(e.path());
        assert_eq!(labels(&c), ["."]);
        assert_eq!(c.roots[0].path, e.path());
        assert!(c.warnings.is_empty());
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
