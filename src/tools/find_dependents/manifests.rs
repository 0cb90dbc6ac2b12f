//! Project manifests: the distribution names projects declare (package.json `name`,
//! pyproject `[project] name`, a go.mod `module`, a Maven `artifactId`) and the dependencies
//! they declare on one another (package.json dependencies, requirements files and pyproject
//! dependencies, go.mod `require`, pom `<dependency>`), and .NET `ProjectReference`s by
//! project name.
//!
//! Manifests other than .NET project files are not indexed: they are read at answer time from
//! the directories holding indexed files (and the directories above them in their root), so
//! an ignored or excluded directory is never read.

use std::collections::BTreeSet;

use super::rows::{Row, push_rows};
use crate::index::facts::Language;
use crate::index::snapshot::Snapshot;

/// Most manifests one query reads: a workspace has one per project.
const MAX_MANIFESTS: usize = 2_000;

/// Largest manifest read (bytes); a bigger one is not a hand-written manifest.
const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// The package ecosystem of a manifest: names only match within one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ecosystem {
    /// package.json
    Npm,
    /// pyproject.toml, requirements*.txt
    Python,
    /// go.mod
    Go,
    /// pom.xml
    Maven,
}

/// One manifest file and what it declares.
#[derive(Clone, Debug)]
pub(super) struct Manifest {
    /// Its workspace-relative path (`packages/web/package.json`).
    pub(super) path: String,
    pub(super) ecosystem: Ecosystem,
    /// The distribution name it declares, with its line.
    pub(super) name: Option<(String, u32)>,
    /// The Maven `groupId` of the project (its own, else its parent's).
    pub(super) group: Option<String>,
    /// The dependencies it declares: (name as written, line, Maven groupId).
    pub(super) deps: Vec<Dep>,
}

/// A dependency a manifest declares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Dep {
    /// The distribution name as written (`@acme/shared`, `acme_common`, a module path, an
    /// artifactId).
    pub(super) name: String,
    pub(super) line: u32,
    /// Maven only: the dependency's groupId.
    pub(super) group: Option<String>,
}

/// The manifests of the workspace, read from the directories of indexed files and their
/// ancestors within each root, in path order; at most [`MAX_MANIFESTS`].
pub(super) fn manifests(snap: &Snapshot) -> Vec<Manifest> {
    let mut dirs: BTreeSet<(u16, String)> = BTreeSet::new();
    for f in snap.files.iter() {
        let mut d = f.path.rsplit_once('/').map_or("", |(d, _)| d);
        loop {
            if !dirs.insert((f.root, d.to_string())) {
                break;
            }
            match d.rsplit_once('/') {
                Some((up, _)) => d = up,
                None if !d.is_empty() => d = "",
                None => break,
            }
        }
    }
    let mut out = Vec::new();
    for (root, dir) in dirs {
        let Some(info) = snap.roots.get(root as usize) else {
            continue;
        };
        let abs = if dir.is_empty() {
            info.path.clone()
        } else {
            info.path.join(&dir)
        };
        let Ok(entries) = std::fs::read_dir(&abs) else {
            continue;
        };
        let mut names: Vec<String> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| manifest_kind(n).is_some())
            .collect();
        names.sort();
        for name in names {
            if out.len() >= MAX_MANIFESTS {
                tracing::debug!("find_dependents: manifest limit reached");
                return out;
            }
            let file = abs.join(&name);
            if std::fs::metadata(&file).map_or(true, |m| m.len() > MAX_MANIFEST_BYTES) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            let rel = if dir.is_empty() {
                name.clone()
            } else {
                format!("{dir}/{name}")
            };
            let path = match info.label.as_str() {
                "." => rel,
                label => format!("{label}/{rel}"),
            };
            if let Some(m) = parse(&path, &name, &text) {
                out.push(m);
            }
        }
    }
    out
}

/// The ecosystem of a manifest file name, or `None` for any other file.
fn manifest_kind(name: &str) -> Option<Ecosystem> {
    match name {
        "package.json" => Some(Ecosystem::Npm),
        "pyproject.toml" => Some(Ecosystem::Python),
        "go.mod" => Some(Ecosystem::Go),
        "pom.xml" => Some(Ecosystem::Maven),
        n if n.starts_with("requirements") && n.ends_with(".txt") => Some(Ecosystem::Python),
        _ => None,
    }
}

/// Parses one manifest (`file` is its file name).
pub(super) fn parse(path: &str, file: &str, text: &str) -> Option<Manifest> {
    let ecosystem = manifest_kind(file)?;
    let mut m = Manifest {
        path: path.to_string(),
        ecosystem,
        name: None,
        group: None,
        deps: Vec::new(),
    };
    match file {
        "package.json" => package_json(text, &mut m),
        "pyproject.toml" => pyproject(text, &mut m),
        "go.mod" => go_mod(text, &mut m),
        "pom.xml" => pom(text, &mut m),
        _ => requirements(text, &mut m),
    }
    Some(m)
}

/// The 1-based line of byte offset `at`.
fn line_at(text: &str, at: usize) -> u32 {
    1 + text[..at.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count() as u32
}

/// package.json: `name`, and the keys of the dependency objects.
fn package_json(text: &str, m: &mut Manifest) {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else {
        return;
    };
    if let Some(name) = v.get("name").and_then(|n| n.as_str()) {
        let at = text.find("\"name\"").unwrap_or(0);
        m.name = Some((name.to_string(), line_at(text, at)));
    }
    for section in [
        "dependencies",
        "devDependencies",
        "peerDependencies",
        "optionalDependencies",
    ] {
        let Some(obj) = v.get(section).and_then(|d| d.as_object()) else {
            continue;
        };
        let start = text.find(&format!("\"{section}\"")).unwrap_or(0);
        for key in obj.keys() {
            let quoted = format!("\"{}\"", key);
            let at = text[start..].find(&quoted).map_or(start, |i| start + i);
            m.deps.push(Dep {
                name: key.clone(),
                line: line_at(text, at),
                group: None,
            });
        }
    }
}

/// The distribution name at the start of a requirement (`acme-common[x]>=1.0; …` →
/// `acme-common`); `None` for an option, a path or a URL.
fn requirement_name(req: &str) -> Option<&str> {
    let req = req.trim();
    let end = req
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(req.len());
    let name = &req[..end];
    let rest = req[end..].trim_start();
    (!name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && !rest.starts_with(['/', ':']))
    .then_some(name)
}

/// requirements*.txt: one requirement a line; options (`-r`, `-e`, `--index-url`), comments,
/// paths and URLs are not names.
fn requirements(text: &str, m: &mut Manifest) {
    for (k, line) in text.lines().enumerate() {
        let code = line.split(" #").next().unwrap_or("").trim();
        if code.is_empty() || code.starts_with(['#', '-', '.', '/']) {
            continue;
        }
        if let Some(name) = requirement_name(code) {
            m.deps.push(Dep {
                name: name.to_string(),
                line: k as u32 + 1,
                group: None,
            });
        }
    }
}

/// The strings of a TOML line (`"a>=1", 'b'`), in order.
fn toml_strings(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find(['"', '\'']) {
        let quote = &rest[start..start + 1];
        let body = &rest[start + 1..];
        let Some(end) = body.find(quote) else {
            break;
        };
        out.push(&body[..end]);
        rest = &body[end + 1..];
    }
    out
}

/// The offset of the `]` closing a TOML array in `s`, outside its strings
/// (`"pydantic[email]"` holds brackets).
fn array_end(s: &str) -> Option<usize> {
    let mut quote = None;
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, ']') => return Some(i),
            _ => {}
        }
    }
    None
}

/// pyproject.toml: `[project] name` and `dependencies`, `[project.optional-dependencies]`,
/// Poetry's `[tool.poetry] name` and its dependency tables.
fn pyproject(text: &str, m: &mut Manifest) {
    let mut table = String::new();
    let mut in_array = false;
    for (k, raw) in text.lines().enumerate() {
        let line_no = k as u32 + 1;
        let line = raw.split(" #").next().unwrap_or("").trim();
        if line.starts_with('#') {
            continue;
        }
        let push_strings = |s: &str, m: &mut Manifest| {
            for req in toml_strings(s) {
                if let Some(name) = requirement_name(req) {
                    m.deps.push(Dep {
                        name: name.to_string(),
                        line: line_no,
                        group: None,
                    });
                }
            }
        };
        if in_array {
            let (items, closed) = match array_end(line) {
                Some(i) => (&line[..i], true),
                None => (line, false),
            };
            push_strings(items, m);
            in_array = !closed;
            continue;
        }
        if line.starts_with('[') {
            table = line.trim_matches(['[', ']', ' ']).to_string();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let (key, value) = (key.trim().trim_matches('"'), value.trim());
        let poetry_deps = table.starts_with("tool.poetry") && table.ends_with("dependencies");
        if (table == "project" || table == "tool.poetry") && key == "name" {
            if let Some(name) = toml_strings(value).first() {
                m.name = Some((name.to_string(), line_no));
            }
        } else if (table == "project" && key == "dependencies")
            || table == "project.optional-dependencies"
        {
            let (items, closed) = match value.strip_prefix('[') {
                Some(v) => match array_end(v) {
                    Some(i) => (&v[..i], true),
                    None => (v, false),
                },
                None => continue,
            };
            push_strings(items, m);
            in_array = !closed;
        } else if poetry_deps && key != "python" && requirement_name(key) == Some(key) {
            m.deps.push(Dep {
                name: key.to_string(),
                line: line_no,
                group: None,
            });
        }
    }
}

/// go.mod: the `module` path and each `require`d module path.
fn go_mod(text: &str, m: &mut Manifest) {
    let mut in_require = false;
    for (k, raw) in text.lines().enumerate() {
        let line_no = k as u32 + 1;
        let line = raw.split("//").next().unwrap_or("").trim();
        if in_require {
            if line.starts_with(')') {
                in_require = false;
            } else if let Some(path) = line.split_whitespace().next() {
                m.deps.push(Dep {
                    name: path.trim_matches('"').to_string(),
                    line: line_no,
                    group: None,
                });
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("module ") {
            m.name = Some((rest.trim().trim_matches('"').to_string(), line_no));
        } else if let Some(rest) = line.strip_prefix("require") {
            let rest = rest.trim();
            if rest.starts_with('(') {
                in_require = true;
            } else if let Some(path) = rest.split_whitespace().next() {
                m.deps.push(Dep {
                    name: path.trim_matches('"').to_string(),
                    line: line_no,
                    group: None,
                });
            }
        }
    }
}

/// The body of the first `<tag>…</tag>` in `text[from..to]`, with its offset.
fn element<'a>(text: &'a str, tag: &str, from: usize, to: usize) -> Option<(&'a str, usize)> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = text[from..to].find(&open)? + from + open.len();
    let end = text[start..to].find(&close)? + start;
    Some((text[start..end].trim(), start))
}

/// The byte ranges of every `<tag>…</tag>` of `text`.
fn ranges(text: &str, tag: &str) -> Vec<(usize, usize)> {
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(s) = text[at..].find(&open) {
        let start = at + s;
        let end = text[start..]
            .find(&close)
            .map_or(text.len(), |e| start + e + close.len());
        out.push((start, end));
        at = end;
    }
    out
}

/// pom.xml: the project's own `artifactId` and `groupId` (not its parent's), and each
/// `<dependency>` outside `<dependencyManagement>` and `<build>` (plugins' dependencies).
fn pom(raw: &str, m: &mut Manifest) {
    // Comments blanked with spaces, so offsets and lines stay.
    let mut text = raw.to_string();
    while let Some(s) = text.find("<!--") {
        let e = text[s..].find("-->").map_or(text.len(), |e| s + e + 3);
        let blank: String = text[s..e]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        text.replace_range(s..e, &blank);
    }
    let skipped: Vec<(usize, usize)> = ["parent", "dependencies", "dependencyManagement", "build"]
        .iter()
        .flat_map(|t| ranges(&text, t))
        .collect();
    let outside = |at: usize| !skipped.iter().any(|&(s, e)| s <= at && at < e);
    let own = |tag: &str| {
        let mut from = 0;
        while let Some((body, at)) = element(&text, tag, from, text.len()) {
            if outside(at) {
                return Some((body.to_string(), at));
            }
            from = at;
        }
        None
    };
    if let Some((name, at)) = own("artifactId") {
        m.name = Some((name, line_at(&text, at)));
    }
    let parent_group = ranges(&text, "parent")
        .first()
        .and_then(|&(s, e)| element(&text, "groupId", s, e))
        .map(|(g, _)| g.to_string());
    m.group = own("groupId").map(|(g, _)| g).or(parent_group);
    let excluded: Vec<(usize, usize)> = ["dependencyManagement", "build"]
        .iter()
        .flat_map(|t| ranges(&text, t))
        .collect();
    for (s, e) in ranges(&text, "dependency") {
        if excluded.iter().any(|&(xs, xe)| xs <= s && s < xe) {
            continue;
        }
        let Some((artifact, at)) = element(&text, "artifactId", s, e) else {
            continue;
        };
        let group = element(&text, "groupId", s, e).map(|(g, _)| g.to_string());
        m.deps.push(Dep {
            name: artifact.to_string(),
            line: line_at(&text, at),
            group,
        });
    }
}

/// A Python distribution name compared case-blind with `-` and `_` alike (as pip does); a
/// `.` is kept, so a dotted .NET or Java name never matches a Python distribution.
fn python_normal(name: &str) -> String {
    name.to_ascii_lowercase().replace('_', "-")
}

/// The last element of a Go module path, a `/vN` major-version suffix skipped.
fn go_last_element(path: &str) -> &str {
    let mut parts = path.rsplit('/');
    let last = parts.next().unwrap_or(path);
    let versioned =
        last.len() > 1 && last.starts_with('v') && last[1..].bytes().all(|b| b.is_ascii_digit());
    if versioned {
        parts.next().unwrap_or(last)
    } else {
        last
    }
}

/// Whether a name a manifest declares or depends on is `target`, in that ecosystem: npm and
/// Go by the name as written (a Go module also by its last element, when `declared` says a
/// workspace module has exactly that path), Python by the normal form, Maven by artifactId or
/// `groupId:artifactId`.
fn names_target(
    eco: Ecosystem,
    name: &str,
    group: Option<&str>,
    target: &str,
    declared: &[&Manifest],
) -> bool {
    match eco {
        Ecosystem::Npm => name == target,
        Ecosystem::Python => python_normal(name) == python_normal(target),
        Ecosystem::Go => {
            name == target
                || (go_last_element(name) == target
                    && declared
                        .iter()
                        .any(|d| d.name.as_ref().is_some_and(|(n, _)| n == name)))
        }
        Ecosystem::Maven => {
            name == target || group.is_some_and(|g| format!("{g}:{name}") == target)
        }
    }
}

/// A dependency a manifest declares on the target, for the listing.
pub(super) struct ManifestDependent {
    /// The manifest's workspace path; `line` is the dependency's.
    pub(super) path: String,
    pub(super) line: u32,
    /// The dependency as written.
    pub(super) dep: String,
    /// The manifest kind (`package.json`, `go.mod`…).
    pub(super) manifest: String,
    /// Whether the manifest lies in a test directory.
    pub(super) test: bool,
}

/// What the manifests say about `target`: the workspace manifests that declare it
/// (`path`, line) and the manifest dependencies on it.
pub(super) struct ManifestFacts {
    pub(super) declared_by: Vec<(String, u32)>,
    pub(super) dependents: Vec<ManifestDependent>,
}

/// The manifests declaring `target` as their distribution name, and the manifest
/// dependencies on it in the same ecosystem.
pub(super) fn manifest_facts(all: &[Manifest], target: &str) -> ManifestFacts {
    let declaring: Vec<&Manifest> = all
        .iter()
        .filter(|m| {
            m.name.as_ref().is_some_and(|(n, _)| {
                names_target(m.ecosystem, n, m.group.as_deref(), target, &[])
                    || (m.ecosystem == Ecosystem::Go && go_last_element(n) == target)
            })
        })
        .collect();
    let declared_by = declaring
        .iter()
        .filter_map(|m| m.name.as_ref().map(|(_, l)| (m.path.clone(), *l)))
        .collect();
    let mut dependents = Vec::new();
    for m in all {
        for d in &m.deps {
            if names_target(m.ecosystem, &d.name, d.group.as_deref(), target, &declaring) {
                dependents.push(ManifestDependent {
                    path: m.path.clone(),
                    line: d.line,
                    dep: match &d.group {
                        Some(g) => format!("{g}:{}", d.name),
                        None => d.name.clone(),
                    },
                    manifest: m.path.rsplit('/').next().unwrap_or(&m.path).to_string(),
                    test: crate::index::is_test_path(&m.path),
                });
            }
        }
    }
    ManifestFacts {
        declared_by,
        dependents,
    }
}

/// .NET project files whose `ProjectReference` names a project called `target` (its file
/// stem, or the referenced project's `AssemblyName`): import rows, the project file being
/// indexed.
pub(super) fn project_reference_rows(snap: &Snapshot, target: &str, rows: &mut Vec<Row>) {
    use crate::index::lang::msbuild::{is_project_path, referenced_path};
    let assembly_of = |path: &str| {
        snap.files
            .iter()
            .filter(|f| f.lang == Language::MsBuild)
            .find(|f| snap.display_path(f).to_lowercase() == path)
            .and_then(|f| f.facts().package.clone())
    };
    for (fi, f) in snap.files.iter().enumerate() {
        if f.lang != Language::MsBuild {
            continue;
        }
        let path = snap.display_path(f);
        for imp in &f.facts().imports {
            if !is_project_path(&imp.module) {
                continue;
            }
            let file = imp.module.rsplit('/').next().unwrap_or(&imp.module);
            let stem = file.rsplit_once('.').map_or(file, |(s, _)| s);
            let named = stem.eq_ignore_ascii_case(target)
                || referenced_path(&path, &imp.module)
                    .and_then(|p| assembly_of(&p))
                    .is_some_and(|a| a.eq_ignore_ascii_case(target));
            if named
                && !rows
                    .iter()
                    .any(|r| r.file == fi as u32 && r.site == imp.line)
            {
                let via = format!("references project {}", imp.module);
                push_rows(rows, f, fi as u32, imp.line, &via, false, "exact");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deps(m: &Manifest) -> Vec<(String, u32)> {
        m.deps.iter().map(|d| (d.name.clone(), d.line)).collect()
    }

    fn dep(n: &str, l: u32) -> (String, u32) {
        (n.to_string(), l)
    }

    #[test]
    fn package_json_name_and_dependencies_with_lines() {
        let text = "{\n  \"name\": \"@acme/web\",\n  \"dependencies\": {\n    \"@acme/shared\": \"1\"\n  },\n  \"devDependencies\": {\"jest\": \"29\"}\n}\n";
        let m = parse("web/package.json", "package.json", text).unwrap();
        assert_eq!(m.name, Some(("@acme/web".into(), 2)));
        assert_eq!(deps(&m), vec![dep("@acme/shared", 4), dep("jest", 6)]);
        // Not JSON: nothing, no panic.
        let bad = parse("package.json", "package.json", "{ name: ").unwrap();
        assert!(bad.name.is_none() && bad.deps.is_empty());
    }

    #[test]
    fn python_manifests_name_and_requirements() {
        let py = "[build-system]\nrequires = [\"setuptools\"]\n\n[project]\nname = \"acme-common\"\ndependencies = [\n  \"requests>=2\",\n  \"pydantic[email]; python_version>'3.8'\",\n]\n\n[project.optional-dependencies]\ndev = [\"pytest\"]\n";
        let m = parse("p/pyproject.toml", "pyproject.toml", py).unwrap();
        assert_eq!(m.name, Some(("acme-common".into(), 5)));
        assert_eq!(
            deps(&m),
            vec![dep("requests", 7), dep("pydantic", 8), dep("pytest", 12)]
        );
        let poetry = "[tool.poetry]\nname = \"svc\"\n\n[tool.poetry.dependencies]\npython = \"^3.11\"\nacme_common = {path = \"../common\"}\n";
        let m = parse("pyproject.toml", "pyproject.toml", poetry).unwrap();
        assert_eq!(m.name, Some(("svc".into(), 2)));
        assert_eq!(deps(&m), vec![dep("acme_common", 6)]);
        let req = "# shared\nacme_common>=0.1\n-r base.txt\n-e ../lib\nrequests==2.31  # http\nhttps://x/y.whl\n";
        let m = parse("requirements-dev.txt", "requirements-dev.txt", req).unwrap();
        assert_eq!(deps(&m), vec![dep("acme_common", 2), dep("requests", 5)]);
    }

    #[test]
    fn go_mod_module_and_requires() {
        let text = "module example.com/gosvc\n\ngo 1.21\n\nrequire (\n\texample.com/acme/money v0.1.0\n\tgithub.com/google/uuid v1.6.0 // indirect\n)\n\nrequire example.com/x/v2 v2.0.0\n";
        let m = parse("go.mod", "go.mod", text).unwrap();
        assert_eq!(m.name, Some(("example.com/gosvc".into(), 1)));
        assert_eq!(
            deps(&m),
            vec![
                dep("example.com/acme/money", 6),
                dep("github.com/google/uuid", 7),
                dep("example.com/x/v2", 10)
            ]
        );
        assert_eq!(go_last_element("example.com/x/v2"), "x");
    }

    #[test]
    fn pom_own_artifact_not_the_parents_and_dependencies_outside_management() {
        let text = "<project>\n  <parent>\n    <groupId>com.acme</groupId>\n    <artifactId>acme-parent</artifactId>\n  </parent>\n  <!-- <artifactId>old</artifactId> -->\n  <artifactId>jsvc</artifactId>\n  <dependencyManagement><dependencies><dependency><groupId>g</groupId><artifactId>managed</artifactId></dependency></dependencies></dependencyManagement>\n  <dependencies>\n    <dependency>\n      <groupId>com.acme</groupId>\n      <artifactId>acme-common</artifactId>\n    </dependency>\n  </dependencies>\n</project>\n";
        let m = parse("pom.xml", "pom.xml", text).unwrap();
        assert_eq!(m.name, Some(("jsvc".into(), 7)));
        assert_eq!(m.group.as_deref(), Some("com.acme"));
        assert_eq!(deps(&m), vec![dep("acme-common", 12)]);
        assert_eq!(m.deps[0].group.as_deref(), Some("com.acme"));
    }

    #[test]
    fn targets_match_within_an_ecosystem_and_not_by_a_foreign_last_segment() {
        let m = |path: &str, file: &str, text: &str| parse(path, file, text).unwrap();
        let all = vec![
            m("money/go.mod", "go.mod", "module example.com/acme/money\n"),
            m(
                "svc/go.mod",
                "go.mod",
                "module example.com/svc\nrequire example.com/acme/money v0.1.0\n",
            ),
            m(
                "svc2/go.mod",
                "go.mod",
                "module example.com/svc2\nrequire github.com/other/money v1.0.0\n",
            ),
            m(
                "api/requirements.txt",
                "requirements.txt",
                "Acme_Common>=1\n",
            ),
            m(
                "web/package.json",
                "package.json",
                "{\"dependencies\": {\"acme-common\": \"1\", \"@other/acme-common\": \"1\"}}",
            ),
            m(
                "common/pyproject.toml",
                "pyproject.toml",
                "[project]\nname = \"acme-common\"\n",
            ),
        ];
        // A dotted .NET name is not the Python distribution.
        assert!(manifest_facts(&all, "Acme.Common").dependents.is_empty());
        let money = manifest_facts(&all, "money");
        assert_eq!(money.declared_by, vec![("money/go.mod".to_string(), 1)]);
        let sites: Vec<String> = money
            .dependents
            .iter()
            .map(|d| format!("{}:{}", d.path, d.line))
            .collect();
        assert_eq!(sites, vec!["svc/go.mod:2"]);
        // The full path of a foreign module still matches as written.
        assert_eq!(
            manifest_facts(&all, "github.com/other/money")
                .dependents
                .len(),
            1
        );
        let common = manifest_facts(&all, "acme-common");
        let sites: Vec<String> = common
            .dependents
            .iter()
            .map(|d| format!("{} {}", d.path, d.dep))
            .collect();
        assert_eq!(
            sites,
            vec![
                "api/requirements.txt Acme_Common",
                "web/package.json acme-common"
            ]
        );
    }

    use super::super::test_support::on_disk;

    #[test]
    fn a_distribution_name_lists_the_manifests_depending_on_it() {
        let (base, snap) = on_disk(
            "dist",
            &[
                (
                    "common",
                    "pyproject.toml",
                    "[project]\nname = \"acme-common\"\n",
                ),
                ("common", "acme_common/__init__.py", "X = 1\n"),
                ("api", "requirements.txt", "acme_common>=0.1\nrequests\n"),
                ("api", "main.py", "print(1)\n"),
                ("other", "requirements.txt", "other-acme-common\n"),
                ("other", "main.py", "print(1)\n"),
                (
                    "Lib",
                    "Acme.Lib.csproj",
                    "<Project Sdk=\"Microsoft.NET.Sdk\" />\n",
                ),
                ("Lib", "C.cs", "namespace Acme.Lib;\npublic class C {}\n"),
                (
                    "Api",
                    "Api.csproj",
                    "<Project>\n  <ItemGroup>\n    <ProjectReference Include=\"..\\Lib\\Acme.Lib.csproj\" />\n  </ItemGroup>\n</Project>\n",
                ),
            ],
        );
        let call = |t: &str| crate::tools::run_on(super::super::run, &snap, &json!({"target": t}));
        let out = call("acme-common");
        let lib = call("Acme.Lib");
        let _ = std::fs::remove_dir_all(&base);
        let t = &out.text;
        assert!(!out.is_error, "{t}");
        assert!(
            t.contains(
                "`api/requirements.txt:1` — depends on acme\\_common (requirements.txt) (exact)"
            ) || t.contains(
                "`api/requirements.txt:1` — depends on acme_common (requirements.txt) (exact)"
            ),
            "{t}"
        );
        assert!(t.contains("declared by `common/pyproject.toml:2`"), "{t}");
        assert!(!t.contains("0 dependents") && !t.contains("other/"), "{t}");
        let data = out.data.expect("structured").to_string();
        assert!(data.contains(r#""role":"manifest""#), "{data}");
        // A ProjectReference names the project by its file name.
        assert!(
            lib.text.contains("`Api/Api.csproj:3` — references project"),
            "{}",
            lib.text
        );
    }
}
