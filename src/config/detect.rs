//! Zero-config: the roots of a workspace without a config file, found from its layout
//! (manifests, then sources, under the usual containers), and the signals `mesh-mcp init` and
//! `doctor` show per root.

use super::{AuditConfig, CacheConfig, Config, Detection, DocsConfig, PolicyConfig, Root};
use std::fs;
use std::path::Path;

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

pub(super) fn default_name(base: &Path) -> String {
    base.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "workspace".into())
}

/// `.` plus the detected service roots, sorted by label.
pub(super) fn detected_roots(base: &Path) -> Vec<Root> {
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
pub(super) const GLOB_SKIP: [&str; 3] = ["node_modules", "target", "build"];

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
    let base_entries = entry_names(base);
    let base_has_manifest = manifest_among(base, &base_entries).is_some();
    let mut found: Vec<Detection> = Vec::new();
    let mut budget = DETECT_DIR_BUDGET;
    // Breadth-first, so a shallower manifest is found before anything below it.
    let mut queue: std::collections::VecDeque<(String, usize)> = dirs_among(base_entries)
        .into_iter()
        .map(|c| (c, 1))
        .collect();
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
        let entries = entry_names(&path);
        if let Some(m) = manifest_among(&path, &entries) {
            found.push(Detection {
                reason: format!("{label} has {m}"),
                root: label,
            });
            continue;
        }
        if depth < DETECT_DEPTH {
            for child in dirs_among(entries) {
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
            let child_dir = dir.join(&child);
            if container == "src" && base_has_manifest {
                // One project's `src/`: its children are the project's own folders, unless
                // `src/` holds services (two or more with a manifest), when a child with only
                // an API contract is a service implemented elsewhere.
                let services = found.iter().filter(|d| d.root.starts_with("src/")).count();
                if services >= 2
                    && let Some(spec) = api_contract_in(&child_dir)
                {
                    found.push(Detection {
                        reason: format!("{label} has an API contract ({spec})"),
                        root: label,
                    });
                }
                continue;
            }
            if let Some(src) = source_in(&child_dir) {
                found.push(Detection {
                    reason: format!("{label} has source files ({src})"),
                    root: label,
                });
            } else if let Some(spec) = api_contract_in(&child_dir) {
                // A service whose code lives elsewhere (another repository) but whose API is
                // declared here: its routes belong to it, not to the workspace base.
                found.push(Detection {
                    reason: format!("{label} has an API contract ({spec})"),
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
    // A FIFO or device named like a manifest is not read (opening a FIFO would block).
    if let Ok(f) = crate::index::crawl::open_regular(path) {
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
    /// No manifest, but an API contract (`openapi.yml`): the API of a service whose code
    /// lives elsewhere.
    pub contract: bool,
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
    let contract = manifest_among(dir, &names).is_none()
        && names.iter().any(|(e, t)| t.is_file() && is_api_contract(e));
    RootSignals {
        image,
        app,
        library,
        contract,
    }
}

/// The kind of every root (`labels` and their `signals`, in the same order): the base is the
/// workspace; a root whose manifest names an application or that ships an image is a
/// service; one whose manifest names a library is a library; and where the workspace's
/// services ship images (three roots or more do), a root without one or any application
/// signal is a library or a tool (a shared module, a script with a `package.json`). A root
/// that only holds an API contract is the service that contract declares.
pub fn root_kinds(labels: &[&str], signals: &[RootSignals]) -> Vec<RootKind> {
    let images = signals.iter().filter(|s| s.image).count();
    labels
        .iter()
        .zip(signals)
        .map(|(label, s)| {
            if *label == "." {
                RootKind::Workspace
            } else if s.app || (s.image && !s.library) || s.contract {
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
pub(super) fn entry_names(dir: &Path) -> Vec<(String, fs::FileType)> {
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
    dirs_among(entry_names(dir))
}

/// The first of [`MANIFESTS`] among `entries` (the listing of `dir`): one directory read
/// instead of a `stat` per manifest name. A symlinked entry counts when it leads to a file.
fn manifest_among(dir: &Path, entries: &[(String, fs::FileType)]) -> Option<String> {
    let is_file =
        |n: &str, t: &fs::FileType| t.is_file() || (t.is_symlink() && dir.join(n).is_file());
    MANIFESTS.iter().find_map(|m| {
        let hit = match m.strip_prefix("*.") {
            Some(ext) => entries
                .iter()
                .find(|(n, t)| Path::new(n).extension().is_some_and(|e| e == ext) && is_file(n, t)),
            None => entries.iter().find(|(n, t)| n == m && is_file(n, t)),
        };
        hit.map(|(n, _)| n.clone())
    })
}

/// The child directories of `dir` among its listing `entries` (as [`child_dirs`]).
fn dirs_among(entries: Vec<(String, fs::FileType)>) -> Vec<String> {
    entries
        .into_iter()
        .filter(|(n, t)| t.is_dir() && !n.starts_with('.') && !SKIP_DIRS.contains(&n.as_str()))
        .map(|(n, _)| n)
        .collect()
}

fn is_source(name: &str) -> bool {
    Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| SOURCE_EXTENSIONS.contains(&e))
}

/// Whether `name` is an API contract file by its conventional name: `openapi.yaml`,
/// `swagger.json`, `orders.openapi.yml`, `asyncapi.yaml`.
fn is_api_contract(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let Some(stem) = [".yaml", ".yml", ".json"]
        .iter()
        .find_map(|ext| lower.strip_suffix(ext))
    else {
        return false;
    };
    ["openapi", "swagger", "asyncapi"]
        .iter()
        .any(|k| stem == *k || stem.ends_with(&format!(".{k}")) || stem.ends_with(&format!("-{k}")))
}

/// The first API contract file directly in `dir` or in its `api/`-like first subdirectories.
fn api_contract_in(dir: &Path) -> Option<String> {
    first_file_in(dir, is_api_contract)
}

/// The first source file directly in `dir` or in one of its first subdirectories, relative.
fn source_in(dir: &Path) -> Option<String> {
    first_file_in(dir, is_source)
}

/// The first file whose name `wanted` accepts, directly in `dir` or else in one of its first
/// [`DETECT_SUBDIR_LIMIT`] subdirectories (hidden and skipped ones left out), relative to `dir`.
fn first_file_in(dir: &Path, wanted: fn(&str) -> bool) -> Option<String> {
    let entries = entry_names(dir);
    if let Some((n, _)) = entries.iter().find(|(n, t)| t.is_file() && wanted(n)) {
        return Some(n.clone());
    }
    entries
        .iter()
        .filter(|(n, t)| t.is_dir() && !n.starts_with('.') && !SKIP_DIRS.contains(&n.as_str()))
        .take(DETECT_SUBDIR_LIMIT)
        .find_map(|(sub, _)| {
            entry_names(&dir.join(sub))
                .into_iter()
                .find(|(n, t)| t.is_file() && wanted(n))
                .map(|(n, _)| format!("{sub}/{n}"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::{TempDir, labels};

    /// The roots detected, in order.
    fn roots(found: &[Detection]) -> Vec<&str> {
        found.iter().map(|f| f.root.as_str()).collect()
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
        assert_eq!(
            roots(&found),
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
        assert_eq!(roots(&found), ["apps/api", "apps/web", "packages/ui"]);
        assert_eq!(found[1].reason, "apps/web has source files (src/main.tsx)");
        assert_eq!(found[0].reason, "apps/api has source files (server.py)");
    }

    #[test]
    fn a_container_child_with_only_an_api_contract_is_a_root() {
        // A service implemented in another repository, whose OpenAPI document lives here.
        let d = TempDir::new("zc-contract");
        d.file("src/cart/go.mod", "module cart")
            .file("src/recommendations/openapi.yml", "openapi: 3.0.0")
            .file("src/recommendations/README.md", "")
            .file("src/billing/api/billing.openapi.json", "{}")
            .file("src/notes/README.md", "")
            .file("src/config/settings.yml", "a: 1")
            .file("services/x/openapi-generator.yaml", "");
        let found = detect_layout(d.path());
        assert_eq!(
            roots(&found),
            ["src/billing", "src/cart", "src/recommendations"]
        );
        assert_eq!(
            found[2].reason,
            "src/recommendations has an API contract (openapi.yml)"
        );
        assert_eq!(
            found[0].reason,
            "src/billing has an API contract (api/billing.openapi.json)"
        );
        // Under a base that is one project, `src/` holds services only when two or more of
        // its children have a manifest.
        d.file("package.json", "{}");
        let found = detect_layout(d.path());
        assert_eq!(roots(&found), ["src/cart"]);
        d.file("src/orders/pom.xml", "<project/>");
        let found = detect_layout(d.path());
        assert_eq!(
            roots(&found),
            [
                "src/billing",
                "src/cart",
                "src/orders",
                "src/recommendations"
            ]
        );
        for name in ["swagger.json", "asyncapi.yaml", "orders-openapi.YML"] {
            assert!(is_api_contract(name), "{name}");
        }
        for name in [
            "openapi-generator.yaml",
            "api.yml",
            "openapi.md",
            "myopenapi.yaml",
        ] {
            assert!(!is_api_contract(name), "{name}");
        }
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
        assert_eq!(
            roots(&detect_layout(d.path())),
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
            contract: false,
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
        // A root holding only an API contract is that API's service, images or not.
        d.file("recommendations/openapi.yml", "openapi: 3.0.0");
        let contract = root_signals(&d.path().join("recommendations"));
        assert!(contract.contract && !contract.image);
        assert_eq!(
            root_kinds(
                &["a", "b", "c", "recommendations"],
                &[signals(true), signals(true), signals(true), contract]
            )[3],
            RootKind::Service
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
}
