//! `analyze_changes`: what a branch (or the working tree) touches, change first.
//!
//! The changed files and line ranges come from `git diff -U0` against a base (an explicit
//! revision, `"working tree"` for uncommitted changes against `HEAD`, or by default the
//! merge-base chosen as the wire-format check of `analyze_grpc` chooses it), run through
//! [`crate::git`] (no shell, timeout, scrubbed environment). Each changed file's base version is
//! extracted with the same extractors as the index, so what disappeared (a deleted RPC, a
//! route's old path, a topic constant's old value) is known as well as what is there now.
//!
//! From the lines and both versions: the changed declarations (innermost declaration per
//! hunk); the contracts touched — `.proto` RPCs and messages with the wire verdict of
//! [`super::wire_check`], RPCs whose handler body changed, HTTP routes whose path or handler
//! changed, topics whose producer, consumer or name constant changed, packages imported by
//! other roots; for each, the affected elements of other services from the same row builders
//! as `analyze_impact`; and one risk line per service: breaking contract change > behaviour
//! change > internal only > tests, docs or generated code only. The CLI `mesh-mcp impact` runs
//! the same [`compute`] and renders Markdown or JSON from one [`Report`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};

use super::analyze_impact::{self, Row};
use super::{ToolDef, ToolEnv, ToolOutput, decode, object_schema};
use crate::git::{Git, GitError, validate_revision};
use crate::index::facts::{EventRole, FileFacts, GrpcFact, HttpFact, Language, SymbolKind};
use crate::index::graph::{Confidence, Loc, method_key, path_matches, topic_key};
use crate::index::snapshot::Snapshot;
use crate::render::{MAX_OUTPUT_BYTES, inline_code, table_cell};

/// The tool definition.
pub static TOOL: ToolDef = ToolDef {
    name: "analyze_changes",
    title: "Analyze the impact of a diff",
    description: "Answers 'what does my branch break?': reads `git diff` against a base (default: \
the merge-base of HEAD with origin/HEAD, origin/main or main; \"working tree\" for uncommitted \
changes against HEAD) and lists the changed declarations, the contracts touched (.proto RPCs \
and messages with the wire-format verdict, RPCs, HTTP routes and topics whose handler, path, \
producer, consumer or name changed, packages imported by other roots), the elements of other \
services affected, and one risk line per service (breaking > behaviour > internal > \
tests/docs/generated only). Use it before review or in CI; for one known RPC, topic or route \
use analyze_impact. Example: {\"base\": \"origin/main\"}.",
    input_schema: || {
        object_schema(
            json!({
                "base": {"type": "string", "description": "Git revision to diff the working tree against: a branch, tag or commit, e.g. \"origin/main\"; or \"working tree\" for uncommitted changes against HEAD. Omitted: the merge-base of HEAD with origin/HEAD, origin/main or main, else HEAD."},
                "depth": super::int_schema("Hops through consumers that re-emit a changed topic, e.g. 2.", 1, 1, 5),
                "limit": super::int_schema("Affected rows per page, e.g. 50.", 100, 1, 200),
                "offset": super::int_schema("Affected rows to skip, from the previous footer, e.g. 100.", 0, 0, super::MAX_OFFSET)
            }),
            &[],
        )
    },
    output_schema: Some(super::structured::Shape {
        paged: true,
        extra: r#"{"breaking":{"type":"boolean"},"services":{"type":"array"}}"#,
        row: super::structured::SCOPE,
    }),
    run,
    truncation_hint: |_| {
        "Page the affected rows with `offset`, or lower `limit`: analyze_changes(limit: 50).".into()
    },
    index: super::IndexUse::Required,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    base: Option<String>,
    depth: Option<i64>,
    limit: Option<i64>,
    offset: Option<i64>,
}

/// How bad a change is for a service, in increasing order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Risk {
    /// Only tests, docs or generated code changed.
    NonCode,
    /// Code changed, but no contract another service sees.
    Internal,
    /// A handler, producer, consumer or compatible contract changed: behaviour may differ.
    Behaviour,
    /// A contract changed in a way its users break on.
    Breaking,
}

impl Risk {
    pub fn label(self) -> &'static str {
        match self {
            Risk::NonCode => "tests/docs/generated only",
            Risk::Internal => "internal only",
            Risk::Behaviour => "behaviour change",
            Risk::Breaking => "BREAKING",
        }
    }

    fn key(self) -> &'static str {
        match self {
            Risk::NonCode => "non_code",
            Risk::Internal => "internal",
            Risk::Behaviour => "behaviour",
            Risk::Breaking => "breaking",
        }
    }
}

/// What kind of file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FileClass {
    Code,
    Test,
    Doc,
    Generated,
    /// Not indexed and not recognisably a doc or a test (build files, assets, …).
    Other,
}

impl FileClass {
    fn label(self) -> &'static str {
        match self {
            FileClass::Code => "code",
            FileClass::Test => "test",
            FileClass::Doc => "doc",
            FileClass::Generated => "generated",
            FileClass::Other => "other",
        }
    }
}

/// One changed file.
#[derive(Debug, Clone)]
pub struct ChangedFile {
    /// Workspace-relative path (the new one for a rename).
    pub display: String,
    /// `added`, `modified`, `deleted`, `renamed from <old>`, `untracked`.
    pub status: String,
    pub class: FileClass,
    /// The root (service) label, when the file is in one.
    pub service: Option<String>,
    /// Changed line ranges on the new side (a pure deletion is the line after it).
    pub ranges: Vec<(u32, u32)>,
    /// Index of the file in the snapshot, when indexed.
    file: Option<u32>,
    /// The file's facts at the base, when it existed there and has a language.
    base_facts: Option<FileFacts>,
    /// Raw base bytes of a `.proto` (for the wire check).
    base_bytes: Option<Vec<u8>>,
    /// Old-side ranges (for declarations of deleted files).
    old_ranges: Vec<(u32, u32)>,
    /// Pure deletions ([`DiffFile::gaps`]).
    gaps: Vec<((u32, u32), (u32, u32))>,
}

/// One changed declaration.
#[derive(Debug, Clone)]
pub struct ChangedDecl {
    pub display: String,
    pub name: String,
    pub kind: &'static str,
    pub line: u32,
    pub end_line: u32,
    pub class: FileClass,
    /// `changed`, `added` or `deleted`.
    pub how: &'static str,
}

/// An element of another (or the same) service affected by a contract change.
#[derive(Debug, Clone)]
pub struct Affected {
    pub service: String,
    pub external: bool,
    pub role: String,
    pub element: String,
    pub location: String,
    pub confidence: &'static str,
}

/// One contract the change touches.
#[derive(Debug, Clone)]
pub struct ContractChange {
    /// `rpc`, `message`, `route`, `topic`, `package`.
    pub kind: &'static str,
    pub name: String,
    /// Where it is declared (path:line), or where it was for a deleted one.
    pub location: String,
    /// What changed, with the verdict.
    pub change: String,
    pub risk: Risk,
    /// The owning service.
    pub owner: Option<String>,
    pub affected: Vec<Affected>,
}

/// Everything `analyze_changes` found.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// One line per repository: which base, which commit.
    pub bases: Vec<String>,
    pub files: Vec<ChangedFile>,
    pub decls: Vec<ChangedDecl>,
    pub contracts: Vec<ContractChange>,
    /// Service → (risk, why).
    pub services: BTreeMap<String, (Risk, String)>,
    pub unresolved: Vec<String>,
}

impl Report {
    /// True when a contract change breaks its users.
    pub fn breaking(&self) -> bool {
        self.contracts.iter().any(|c| c.risk == Risk::Breaking)
    }
}

/// What the base argument asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BaseArg {
    /// The merge-base with the upstream branch (falling back to HEAD).
    Default,
    /// Uncommitted changes against HEAD.
    WorkingTree,
    /// A revision given by the user (validated).
    Revision(String),
}

/// Parses a `base` argument; the error names the fix.
pub fn parse_base(raw: Option<&str>) -> Result<BaseArg, String> {
    let Some(raw) = raw else {
        return Ok(BaseArg::Default);
    };
    let t = raw.trim();
    if matches!(
        t.to_ascii_lowercase().as_str(),
        "working tree" | "working-tree" | "worktree" | "working_tree"
    ) {
        return Ok(BaseArg::WorkingTree);
    }
    validate_revision(raw).map_err(|why| {
        format!(
            "Invalid base {}: {why}. Pass a branch, tag or commit, e.g. {{\"base\": \"origin/main\"}}, \"working tree\" for uncommitted changes, or omit `base` for the merge-base with origin/main.",
            inline_code(&raw.escape_debug().to_string())
        )
    })?;
    Ok(BaseArg::Revision(raw.to_string()))
}

fn run(args: &Value, env: &ToolEnv) -> ToolOutput {
    let args: Args = match decode("analyze_changes", args) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let Some(snap) = env.snapshot else {
        return ToolOutput::error("the index is not ready".into());
    };
    let (depth, limit, offset) = match (
        super::in_range("analyze_changes", "depth", args.depth, 1, 1, 5),
        super::in_range("analyze_changes", "limit", args.limit, 100, 1, 200),
        super::in_range(
            "analyze_changes",
            "offset",
            args.offset,
            0,
            0,
            super::MAX_OFFSET,
        ),
    ) {
        (Ok(d), Ok(l), Ok(o)) => (d, l, o),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return e,
    };
    let base = match parse_base(args.base.as_deref()) {
        Ok(b) => b,
        Err(e) => return ToolOutput::error(e),
    };
    let report = match compute(snap, env.shared.jail.base(), &base, depth) {
        Ok(r) => r,
        Err(e) => return ToolOutput::error(e),
    };
    let mut rows = Vec::new();
    let (text, files) =
        render_markdown_rows(&report, limit, offset, MAX_OUTPUT_BYTES - 1536, &mut rows);
    let total: usize = report.contracts.iter().map(|c| c.affected.len()).sum();
    let next = offset + rows.len();
    let services: Vec<Value> = report
        .services
        .iter()
        .map(|(s, (r, why))| json!({"service": s, "risk": r.key(), "why": why}))
        .collect();
    let data = super::structured::with(
        super::structured::page(total, offset, Some(next), rows),
        json!({"breaking": report.breaking(), "services": services}),
    );
    let mut out = ToolOutput::ok(text).with_data(data);
    out.files_accessed = files;
    out
}

// ---------------------------------------------------------------------------------------------
// git
// ---------------------------------------------------------------------------------------------

/// One file of `git diff` output.
#[derive(Debug, Default)]
struct DiffFile {
    old_path: Option<String>,
    new_path: Option<String>,
    new_ranges: Vec<(u32, u32)>,
    old_ranges: Vec<(u32, u32)>,
    /// Pure deletions: the new-side range marked around the gap, and the old lines removed.
    gaps: Vec<((u32, u32), (u32, u32))>,
    /// Not tracked by git (listed by `ls-files --others`).
    untracked: bool,
}

/// Parses `git diff -U0 --no-prefix`-less output (with `a/` and `b/` prefixes).
fn parse_diff(text: &str) -> Vec<DiffFile> {
    let mut files: Vec<DiffFile> = Vec::new();
    let strip = |p: &str, pre: &str| -> Option<String> {
        let p = p.trim_end_matches('\t');
        if p == "/dev/null" {
            None
        } else {
            Some(p.strip_prefix(pre).unwrap_or(p).to_string())
        }
    };
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let mut f = DiffFile::default();
            // `a/x b/x`: good enough for the fallback when no ---/+++ lines follow (renames,
            // mode changes); the ---/+++ and rename lines override it.
            if let Some((a, b)) = rest.split_once(" b/") {
                f.old_path = strip(a, "a/");
                f.new_path = Some(b.to_string());
            }
            files.push(f);
            continue;
        }
        let Some(f) = files.last_mut() else { continue };
        if let Some(p) = line.strip_prefix("--- ") {
            f.old_path = strip(p, "a/");
        } else if let Some(p) = line.strip_prefix("+++ ") {
            f.new_path = strip(p, "b/");
        } else if let Some(p) = line.strip_prefix("rename from ") {
            f.old_path = Some(p.to_string());
        } else if let Some(p) = line.strip_prefix("rename to ") {
            f.new_path = Some(p.to_string());
        } else if line.starts_with("deleted file mode") {
            f.new_path = None;
        } else if line.starts_with("new file mode") {
            f.old_path = None;
        } else if let Some(h) = line.strip_prefix("@@ ") {
            // `-a,b +c,d @@`
            let mut parts = h.split_whitespace();
            let old = parts.next().unwrap_or("-0");
            let new = parts.next().unwrap_or("+0");
            let span = |s: &str| -> (u32, u32) {
                let s = &s[1.min(s.len())..];
                let (start, count) = match s.split_once(',') {
                    Some((a, b)) => (a.parse().unwrap_or(0), b.parse().unwrap_or(1)),
                    None => (s.parse().unwrap_or(0), 1),
                };
                (start, count)
            };
            let (os, oc) = span(old);
            let (ns, nc) = span(new);
            if oc > 0 {
                f.old_ranges.push((os, os.saturating_add(oc - 1)));
            }
            if nc > 0 {
                f.new_ranges.push((ns, ns.saturating_add(nc - 1)));
            } else {
                // A pure deletion: the lines around the gap changed (unless what went was a
                // whole declaration: see `declarations`).
                let gap = (ns.max(1), ns.saturating_add(1));
                f.new_ranges.push(gap);
                if oc > 0 {
                    f.gaps.push((gap, (os, os.saturating_add(oc - 1))));
                }
            }
        }
    }
    files
}

/// The repositories holding the workspace's roots (by top-level directory).
fn repositories(snap: &Snapshot, workspace: &Path) -> Result<Vec<PathBuf>, String> {
    let mut tops: BTreeSet<PathBuf> = BTreeSet::new();
    let mut missing = None;
    let mut dirs: Vec<PathBuf> = snap.roots.iter().map(|r| r.path.clone()).collect();
    dirs.push(workspace.to_path_buf());
    for d in dirs {
        let canon = std::fs::canonicalize(&d).unwrap_or_else(|_| d.clone());
        if !canon.join(".git").exists() && tops.iter().any(|t| canon.starts_with(t)) {
            continue; // inside a repository already found (one git call per repository)
        }
        match Git::new(&d).toplevel() {
            Ok(t) => {
                tops.insert(std::fs::canonicalize(&t).unwrap_or(t));
            }
            Err(GitError::NotARepository) => {}
            Err(e) => missing = Some(e.to_string()),
        }
    }
    if tops.is_empty() {
        return Err(match missing {
            Some(e) => format!("Cannot read the changes: {e}."),
            None => "Cannot read the changes: the workspace is not inside a git repository (and no root is one). Run analyze_changes in a git work tree, or use analyze_impact for one RPC, topic or route.".to_string(),
        });
    }
    Ok(tops.into_iter().collect())
}

/// Chooses the commit to diff against in one repository.
fn choose_base(git: &Git, base: &BaseArg, repo: &str) -> Result<Option<(String, String)>, String> {
    let problem = |e: GitError| format!("Cannot read the changes of {repo}: {e}.");
    match base {
        BaseArg::Revision(rev) => match git.commit_of(rev).map_err(problem)? {
            Some(c) => Ok(Some((inline_code(rev), c))),
            None => Err(format!(
                "Unknown base {}: no commit by that name in the repository {repo}. Pass a branch, tag or commit that exists there (see `git branch -a`), e.g. {{\"base\": \"origin/main\"}}, \"working tree\", or omit `base`.",
                inline_code(rev)
            )),
        },
        BaseArg::WorkingTree => Ok(git.commit_of("HEAD").map_err(problem)?.map(|c| {
            (
                "`HEAD` (uncommitted changes of the working tree)".to_string(),
                c,
            )
        })),
        BaseArg::Default => Ok(super::analyze_grpc::implicit_base(git)
            .map_err(problem)?
            .map(|b| (b.label, b.commit))),
    }
}

// ---------------------------------------------------------------------------------------------
// The analysis
// ---------------------------------------------------------------------------------------------

fn overlaps(ranges: &[(u32, u32)], lo: u32, hi: u32) -> bool {
    ranges.iter().any(|&(a, b)| a <= hi && lo <= b)
}

fn classify_path(path: &str) -> FileClass {
    let lower = path.to_ascii_lowercase();
    if crate::index::is_test_path(path) {
        FileClass::Test
    } else if lower.ends_with(".md")
        || lower.ends_with(".rst")
        || lower.ends_with(".txt")
        || lower.ends_with(".adoc")
        || lower.starts_with("docs/")
        || lower.contains("/docs/")
    {
        FileClass::Doc
    } else if Language::of_path(path).is_some() {
        FileClass::Code
    } else {
        FileClass::Other
    }
}

/// Computes the report for the workspace's repositories.
pub fn compute(
    snap: &Snapshot,
    workspace: &Path,
    base: &BaseArg,
    depth: usize,
) -> Result<Report, String> {
    let mut report = Report::default();
    // Snapshot files by canonical absolute path.
    let mut by_path: HashMap<PathBuf, u32> = HashMap::new();
    let canon_roots: Vec<PathBuf> = snap
        .roots
        .iter()
        .map(|r| std::fs::canonicalize(&r.path).unwrap_or_else(|_| r.path.clone()))
        .collect();
    for (i, f) in snap.files.iter().enumerate() {
        let root = canon_roots
            .get(f.root as usize)
            .cloned()
            .unwrap_or_else(|| snap.base.clone());
        by_path.insert(root.join(&*f.path), i as u32);
    }
    let canon_ws = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let root_of_abs = |abs: &Path| -> Option<usize> {
        canon_roots
            .iter()
            .enumerate()
            .filter(|(_, r)| abs.starts_with(r))
            .max_by_key(|(_, r)| r.as_os_str().len())
            .map(|(i, _)| i)
    };
    let display_of = |abs: &Path| -> String {
        abs.strip_prefix(&canon_ws)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_else(|_| abs.to_string_lossy().into_owned())
    };
    let mut outside = 0usize;
    for top in repositories(snap, workspace)? {
        // The repository as the workspace sees it (never an absolute path outside it).
        let repo_label = match top.strip_prefix(&canon_ws) {
            Ok(p) if p.as_os_str().is_empty() => "`.`".to_string(),
            Ok(p) => inline_code(&p.to_string_lossy()),
            Err(_) => "the repository holding the workspace".to_string(),
        };
        let git = Git::new(&top);
        let Some((label, commit)) = choose_base(&git, base, &repo_label)? else {
            report.bases.push(format!(
                "{repo_label}: no commits yet, so there is no base to compare with"
            ));
            continue;
        };
        let short = &commit[..commit.len().min(10)];
        report.bases.push(format!(
            "{repo_label}: base {label}, commit `{short}`, compared with the working tree"
        ));
        let diff = git
            .run_ok(&[
                "-c",
                "core.quotePath=false",
                "diff",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "-U0",
                // A file converted to CRLF (or back) changes no behaviour.
                "--ignore-cr-at-eol",
                "-M",
                &commit,
                "--",
            ])
            .map_err(|e| format!("Cannot read the changes of {repo_label}: {e}."))?;
        let mut diffs = parse_diff(&String::from_utf8_lossy(&diff.stdout));
        if let Ok(out) = git.run_ok(&["ls-files", "--others", "--exclude-standard", "-z"]) {
            for p in out.stdout.split(|&b| b == 0).filter(|p| !p.is_empty()) {
                let p = String::from_utf8_lossy(p).into_owned();
                let lines = std::fs::read(top.join(&p))
                    .map(|b| b.iter().filter(|&&c| c == b'\n').count() as u32 + 1)
                    .unwrap_or(1);
                diffs.push(DiffFile {
                    gaps: Vec::new(),
                    old_path: None,
                    new_path: Some(p),
                    new_ranges: vec![(1, lines)],
                    old_ranges: Vec::new(),
                    untracked: true,
                });
            }
        }
        // The base versions of the changed source files, read from git in one batch.
        let old_sources: Vec<&str> = diffs
            .iter()
            .filter_map(|d| d.old_path.as_deref())
            .filter(|o| Language::of_path(o).is_some())
            .collect();
        let mut base_texts: Vec<(String, Option<Vec<u8>>)> = old_sources
            .iter()
            .map(|p| p.to_string())
            .zip(
                git.files_at(&commit, &old_sources, 4 << 20)
                    .unwrap_or_else(|_| vec![None; old_sources.len()]),
            )
            .collect();
        for d in diffs {
            let path = d.new_path.clone().or_else(|| d.old_path.clone());
            let Some(path) = path else { continue };
            let abs = top.join(&path);
            let root = root_of_abs(&abs);
            if root.is_none() && !abs.starts_with(&canon_ws) {
                // Outside the workspace (a repository larger than it): not ours to show.
                outside += 1;
                continue;
            }
            let service = root.map(|r| snap.roots[r].label.clone());
            let file = by_path.get(&abs).copied();
            let display = match file {
                Some(fi) => snap.display_path(&snap.files[fi as usize]),
                None => display_of(&abs),
            };
            let rel_in_root = root
                .and_then(|r| abs.strip_prefix(&canon_roots[r]).ok())
                .map(|p| p.to_string_lossy().replace('\\', "/"))
                .unwrap_or_else(|| path.clone());
            let class = match file.map(|fi| &snap.files[fi as usize]) {
                Some(f) if f.generated => FileClass::Generated,
                Some(f) if f.is_test => FileClass::Test,
                Some(f) if f.lang == Language::Markdown => FileClass::Doc,
                Some(_) => FileClass::Code,
                None => classify_path(&rel_in_root),
            };
            let status = match (&d.old_path, &d.new_path) {
                (None, _) if d.untracked => "untracked".to_string(),
                (None, _) => "added".to_string(),
                (Some(_), None) => "deleted".to_string(),
                (Some(o), Some(n)) if o != n => format!("renamed from `{o}`"),
                _ => "modified".to_string(),
            };
            // The base version, through the same extractors.
            let mut base_facts = None;
            let mut base_bytes = None;
            if let Some(old) = &d.old_path
                && let Some(lang) = Language::of_path(old)
                && let Some(bytes) = base_texts
                    .iter_mut()
                    .find(|(p, _)| p == old)
                    .and_then(|(_, t)| t.take())
                && crate::index::crawl::guard(old, &bytes).is_ok()
            {
                let text = String::from_utf8_lossy(&bytes);
                base_facts = Some(crate::index::lang::extract(lang, &rel_in_root, &text));
                if lang == Language::Protobuf {
                    base_bytes = Some(bytes);
                }
            }
            let class = if class == FileClass::Code
                && file.is_none()
                && base_facts.as_ref().is_some_and(|f| f.generated)
            {
                FileClass::Generated
            } else {
                class
            };
            report.files.push(ChangedFile {
                display,
                status,
                class,
                service,
                ranges: d.new_ranges,
                file,
                base_facts,
                base_bytes,
                old_ranges: d.old_ranges,
                gaps: d.gaps,
            });
        }
    }
    if outside > 0 {
        report.unresolved.push(format!(
            "{outside} changed file(s) outside the workspace's roots were left out"
        ));
    }
    crate::order::sort_by_cached_key(&mut report.files, |f| f.display.clone());
    // Progress for a caller that sent a progressToken: git is done, 7 steps of analysis follow.
    let step = |n: u32, what: &str| {
        super::fixtures::notify_progress(f64::from(n), Some(8.0), Some(what));
    };
    step(1, "diff read; finding the changed declarations");
    declarations(snap, &mut report);
    step(2, "checking .proto contracts");
    proto_contracts(snap, &mut report);
    step(3, "checking RPC handlers");
    handler_contracts(snap, &mut report);
    step(4, "checking HTTP routes");
    route_contracts(snap, &mut report);
    route_types(snap, &mut report);
    step(5, "checking topics");
    topic_contracts(snap, &mut report, depth);
    step(6, "checking imported packages");
    importer_contracts(snap, &mut report);
    step(7, "grading the risk per service");
    risks(&mut report);
    step(8, "done");
    crate::order::sort_by_cached_key(&mut report.contracts, |c| {
        (
            std::cmp::Reverse(c.risk),
            // A deleted or renamed contract with live users is the loudest row.
            !c.location.ends_with("(base)") || c.affected.is_empty(),
            std::cmp::Reverse(c.affected.iter().filter(|a| a.external).count()),
            c.kind,
            c.name.clone(),
        )
    });
    Ok(report)
}

/// The innermost non-endpoint declarations of a file overlapping the ranges.
fn declarations(snap: &Snapshot, report: &mut Report) {
    let mut decls = Vec::new();
    for cf in &report.files {
        match cf.file {
            Some(fi) => {
                let f = &snap.files[fi as usize];
                let syms: Vec<_> = f
                    .symbols()
                    .iter()
                    .filter(|s| s.kind != SymbolKind::Endpoint)
                    .collect();
                // Declarations of the base that the removed lines held whole and that are gone
                // from the file now: deleted, not a change of their neighbours.
                let gone: Vec<&crate::index::facts::Symbol> = cf
                    .base_facts
                    .iter()
                    .flat_map(|b| b.symbols.iter())
                    .filter(|b| {
                        b.kind != SymbolKind::Endpoint
                            && cf
                                .old_ranges
                                .iter()
                                .any(|&(lo, hi)| lo <= b.line && b.end_line.max(b.line) <= hi)
                            && !syms.iter().any(|s| {
                                s.kind == b.kind
                                    && f.name(s) == b.name
                                    && f.container(s) == b.container.as_deref()
                            })
                    })
                    .collect();
                let whole_gaps: Vec<(u32, u32)> = cf
                    .gaps
                    .iter()
                    .filter(|(_, (lo, hi))| {
                        gone.iter()
                            .any(|b| *lo <= b.line && b.end_line.max(b.line) <= *hi)
                    })
                    .map(|(gap, _)| *gap)
                    .collect();
                for b in &gone {
                    decls.push(ChangedDecl {
                        display: cf.display.clone(),
                        name: match &b.container {
                            Some(c) if !b.name.starts_with(&format!("{c}.")) => {
                                format!("{c}.{}", b.name)
                            }
                            _ => b.name.clone(),
                        },
                        kind: b.kind.name(),
                        line: b.line,
                        end_line: b.end_line.max(b.line),
                        class: cf.class,
                        how: "deleted",
                    });
                }
                let mut picked: BTreeSet<usize> = BTreeSet::new();
                for &(lo, hi) in cf.ranges.iter().filter(|r| !whole_gaps.contains(r)) {
                    let hits: Vec<usize> = (0..syms.len())
                        .filter(|&i| syms[i].line <= hi && lo <= syms[i].end_line.max(syms[i].line))
                        .collect();
                    // Innermost: drop a hit that contains another hit.
                    for &i in &hits {
                        let (a, b) = (syms[i].line, syms[i].end_line.max(syms[i].line));
                        let contains_other = hits.iter().any(|&j| {
                            j != i
                                && a <= syms[j].line
                                && syms[j].end_line.max(syms[j].line) <= b
                                && (a, b) != (syms[j].line, syms[j].end_line.max(syms[j].line))
                        });
                        if !contains_other {
                            picked.insert(i);
                        }
                    }
                }
                let added = cf.status == "added" || cf.status == "untracked";
                for i in picked {
                    let s = syms[i];
                    let name = match f.container(s) {
                        Some(c) if !f.name(s).starts_with(&format!("{c}.")) => {
                            format!("{c}.{}", f.name(s))
                        }
                        _ => f.name(s).to_string(),
                    };
                    decls.push(ChangedDecl {
                        display: cf.display.clone(),
                        name,
                        kind: s.kind.name(),
                        line: s.line,
                        end_line: s.end_line.max(s.line),
                        class: cf.class,
                        how: if added { "added" } else { "changed" },
                    });
                }
            }
            None => {
                // Deleted (or not indexed): the base version's declarations in the old ranges.
                let Some(facts) = &cf.base_facts else {
                    continue;
                };
                for s in facts.symbols.iter().filter(|s| {
                    s.kind != SymbolKind::Endpoint
                        && s.container.is_none()
                        && overlaps(&cf.old_ranges, s.line, s.end_line.max(s.line))
                }) {
                    decls.push(ChangedDecl {
                        display: cf.display.clone(),
                        name: s.name.clone(),
                        kind: s.kind.name(),
                        line: s.line,
                        end_line: s.end_line.max(s.line),
                        class: cf.class,
                        how: "deleted",
                    });
                }
            }
        }
    }
    report.decls = decls;
}

/// Rows of `analyze_impact`'s builders, as affected elements (test rows and topic rows left out).
fn affected_of(snap: &Snapshot, rows: Vec<Row>) -> Vec<Affected> {
    let mut out: Vec<Affected> = Vec::new();
    let mut seen = BTreeSet::new();
    for r in rows {
        let Some(at) = r.at else { continue };
        let f = &snap.files[at.file as usize];
        if f.is_test {
            continue;
        }
        let location = format!("{}:{}", snap.display_path(f), at.line);
        if !seen.insert((r.role, location.clone(), r.element.clone())) {
            continue;
        }
        out.push(Affected {
            service: analyze_impact::root_label(snap, f.root).to_string(),
            external: r.external,
            role: r.role.name().to_string(),
            element: r.element,
            location,
            confidence: r.confidence.label(),
        });
    }
    crate::order::sort_by_cached_key(&mut out, |a| {
        (!a.external, a.role.clone(), a.location.clone())
    });
    out
}

fn loc_text(snap: &Snapshot, at: Loc) -> String {
    format!(
        "{}:{}",
        snap.display_path(&snap.files[at.file as usize]),
        at.line
    )
}

fn owner_of(snap: &Snapshot, at: Loc) -> Option<String> {
    Some(analyze_impact::root_label(snap, snap.files[at.file as usize].root).to_string())
}

/// `.proto` files: the wire verdict per message, changed RPCs, deleted or renamed RPCs.
fn proto_contracts(snap: &Snapshot, report: &mut Report) {
    let g = &snap.graph;
    let mut out = Vec::new();
    for cf in &report.files {
        let is_proto = cf.display.to_ascii_lowercase().ends_with(".proto")
            || cf.base_bytes.is_some()
            || cf
                .file
                .is_some_and(|fi| snap.files[fi as usize].lang == Language::Protobuf);
        if !is_proto {
            continue;
        }
        let current_bytes = cf
            .file
            .and_then(|fi| std::fs::read(snap.abs_path(&snap.files[fi as usize])).ok());
        let current = cf
            .file
            .and_then(|fi| snap.files[fi as usize].facts().proto.clone())
            .unwrap_or_default();
        let base = cf
            .base_facts
            .as_ref()
            .and_then(|f| f.proto.clone())
            .unwrap_or_default();
        let wire = match (&cf.base_bytes, &current_bytes) {
            (Some(b), Some(c)) => match super::analyze_grpc::diff_proto_texts(&cf.display, b, c) {
                Ok(r) => Some(r),
                Err(why) => {
                    report_unresolved_push(&mut out, &cf.display, &why);
                    None
                }
            },
            _ => None,
        };
        // Findings by top-level message.
        // Findings (breaking, warnings) by message name: a short list searched by scan (one
        // map type less in the binary: the size budget, docs/ARCHITECTURE.md §7).
        let mut by_message: Vec<(String, Findings)> = Vec::new();
        if let Some(w) = &wire {
            for f in &w.breaking {
                let top = f.element.split('.').next().unwrap_or("").to_string();
                findings_of(&mut by_message, top).0.push(format!(
                    "`WIRE_FORMAT_BREAKING_CHANGE` {}: `{}` #{} — {}",
                    f.rule.label(),
                    f.element,
                    f.number,
                    f.detail
                ));
            }
            for f in &w.warnings {
                let top = f.element.split('.').next().unwrap_or("").to_string();
                findings_of(&mut by_message, top).1.push(format!(
                    "{}: `{}` — {}",
                    f.rule.label(),
                    f.element,
                    f.detail
                ));
            }
        }
        let changed_messages: BTreeSet<String> = crate::order::set_of(
            current
                .messages
                .iter()
                .filter(|m| !m.name.contains('.') && overlaps(&cf.ranges, m.line, m.end_line))
                .map(|m| m.name.clone())
                .chain(by_message.iter().map(|(k, _)| k.clone())),
        );
        let bare = |t: &str| t.rsplit('.').next().unwrap_or(t).to_string();
        // Messages embedding a changed message change with it (a breaking change travels).
        let mut changed_messages = changed_messages;
        let mut embeds: Vec<(String, String)> = Vec::new();
        loop {
            let mut grew = false;
            for m in current.messages.iter().filter(|m| !m.name.contains('.')) {
                if changed_messages.contains(&m.name) {
                    continue;
                }
                let inner: Option<String> = m
                    .fields
                    .iter()
                    .map(|f| bare(&f.type_name))
                    .find(|t| changed_messages.contains(t));
                if let Some(inner) = inner {
                    embeds.push((m.name.clone(), inner.clone()));
                    let (br, warn) = findings_for(&by_message, &inner)
                        .cloned()
                        .unwrap_or_default();
                    let entry = findings_of(&mut by_message, m.name.clone());
                    entry
                        .0
                        .extend(br.iter().map(|b| format!("via `{inner}`: {b}")));
                    entry
                        .1
                        .extend(warn.iter().map(|w| format!("via `{inner}`: {w}")));
                    changed_messages.insert(m.name.clone());
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
        // Contracts (services) of this file in the graph.
        let contracts: Vec<u32> = cf
            .file
            .map(|fi| {
                (0..g.contracts.len() as u32)
                    .filter(|&c| g.contracts[c as usize].def.file == fi)
                    .collect()
            })
            .unwrap_or_default();
        let mut covered_messages: BTreeSet<String> = BTreeSet::new();
        for &c in &contracts {
            for &r in &g.contracts[c as usize].rpcs {
                let rpc = &g.rpcs[r as usize];
                let mut why = Vec::new();
                let mut risk = Risk::Behaviour;
                if overlaps(&cf.ranges, rpc.def.line, rpc.def.line) {
                    let existed = base.services.iter().any(|s| {
                        s.name == g.contracts[c as usize].name
                            && s.rpcs
                                .iter()
                                .any(|b| method_key(&b.name) == method_key(&rpc.name))
                    });
                    why.push(if existed {
                        "RPC declaration changed".to_string()
                    } else {
                        "RPC added (or renamed to this name)".to_string()
                    });
                }
                for m in [bare(&rpc.request), bare(&rpc.response)] {
                    if changed_messages.contains(&m) {
                        covered_messages.insert(m.clone());
                        match findings_for(&by_message, &m) {
                            Some((br, _)) if !br.is_empty() => {
                                risk = Risk::Breaking;
                                why.push(format!("`{m}`: {}", br.join("; ")));
                            }
                            Some((_, warn)) if !warn.is_empty() => {
                                why.push(format!(
                                    "`{m}` changed, wire-compatible (warnings: {})",
                                    warn.join("; ")
                                ));
                            }
                            _ => why.push(format!("`{m}` changed, wire-compatible")),
                        }
                    }
                }
                if why.is_empty() {
                    continue;
                }
                let (rows, _, _) = analyze_impact::rpc_rows(snap, &[c], &[r]);
                out.push(ContractChange {
                    kind: "rpc",
                    name: format!("{}.{}", g.contracts[c as usize].name, rpc.name),
                    location: loc_text(snap, rpc.def),
                    change: why.join("; "),
                    risk,
                    owner: handlers_owner(snap, r).or_else(|| owner_of(snap, rpc.def)),
                    affected: affected_of(snap, rows),
                });
            }
        }
        // A message embedded in one an RPC carries is covered by that RPC's row.
        loop {
            let before = covered_messages.len();
            for (outer, inner) in &embeds {
                if covered_messages.contains(outer) {
                    covered_messages.insert(inner.clone());
                }
            }
            if covered_messages.len() == before {
                break;
            }
        }
        // Messages changed that no RPC of this file carries (payloads, nested uses elsewhere).
        for m in changed_messages.difference(&covered_messages) {
            let (br, warn) = findings_for(&by_message, m).cloned().unwrap_or_default();
            let line = current
                .messages
                .iter()
                .find(|x| &x.name == m)
                .map_or(0, |x| x.line);
            out.push(ContractChange {
                kind: "message",
                name: m.clone(),
                location: format!("{}:{line}", cf.display),
                change: if !br.is_empty() {
                    br.join("; ")
                } else if !warn.is_empty() {
                    format!("wire-compatible (warnings: {})", warn.join("; "))
                } else {
                    "changed, wire-compatible".to_string()
                },
                risk: if br.is_empty() {
                    Risk::Behaviour
                } else {
                    Risk::Breaking
                },
                owner: cf.service.clone(),
                affected: Vec::new(),
            });
        }
        // RPCs of the base that are gone: deleted or renamed, with their live callers.
        for bs in &base.services {
            let cur_svc = current.services.iter().find(|s| s.name == bs.name);
            for br in &bs.rpcs {
                let still = cur_svc.is_some_and(|s| {
                    s.rpcs
                        .iter()
                        .any(|r| method_key(&r.name) == method_key(&br.name))
                });
                if still {
                    continue;
                }
                let renamed_to = cur_svc.and_then(|s| {
                    s.rpcs
                        .iter()
                        .find(|r| {
                            r.request == br.request
                                && r.response == br.response
                                && !bs.rpcs.iter().any(|o| o.name == r.name)
                        })
                        .map(|r| r.name.clone())
                });
                let callers = callers_of_deleted(snap, &bs.name, &br.name);
                let change = match (&renamed_to, cur_svc) {
                    (Some(n), _) => format!(
                        "RPC renamed to `{}.{n}` (the wire path changes: clients still calling `{}` fail with UNIMPLEMENTED)",
                        bs.name, br.name
                    ),
                    (None, Some(_)) => "RPC deleted".to_string(),
                    (None, None) => "RPC deleted with its service".to_string(),
                };
                let live = callers.iter().filter(|a| a.external).count();
                out.push(ContractChange {
                    kind: "rpc",
                    name: format!("{}.{}", bs.name, br.name),
                    location: format!("{}:{} (base)", cf.display, br.line),
                    change: if callers.is_empty() {
                        format!("{change}; no live caller found")
                    } else {
                        format!(
                            "{change}; {} live caller(s), {live} in other services",
                            callers.len()
                        )
                    },
                    risk: if callers.is_empty() {
                        Risk::Behaviour
                    } else {
                        Risk::Breaking
                    },
                    owner: g
                        .contracts_named(&bs.name)
                        .iter()
                        .flat_map(|&c| g.contracts[c as usize].rpcs.iter().copied())
                        .find_map(|r| handlers_owner(snap, r))
                        .or_else(|| cf.service.clone()),
                    affected: callers,
                });
            }
        }
    }
    report.contracts.extend(out);
}

/// The breaking changes and the warnings of one message.
type Findings = (Vec<String>, Vec<String>);

/// The findings of `message`, added empty when it has none yet.
fn findings_of(list: &mut Vec<(String, Findings)>, message: String) -> &mut Findings {
    let i = match list.iter().position(|(m, _)| *m == message) {
        Some(i) => i,
        None => {
            list.push((message, Findings::default()));
            list.len() - 1
        }
    };
    &mut list[i].1
}

/// The findings of `message`, if any were recorded.
fn findings_for<'a>(list: &'a [(String, Findings)], message: &str) -> Option<&'a Findings> {
    list.iter().find(|(m, _)| m == message).map(|(_, f)| f)
}

fn report_unresolved_push(out: &mut Vec<ContractChange>, display: &str, why: &str) {
    out.push(ContractChange {
        kind: "message",
        name: display.to_string(),
        location: format!("{display}:1"),
        change: format!("wire check not run: {why}"),
        risk: Risk::Behaviour,
        owner: None,
        affected: Vec::new(),
    });
}

/// Call sites in code of an RPC that no longer exists: `Call` facts naming the method on a
/// receiver of the service (or in a file that builds a client of it).
fn callers_of_deleted(snap: &Snapshot, service: &str, method: &str) -> Vec<Affected> {
    let g = &snap.graph;
    let key = method_key(method);
    let svc_key = method_key(service);
    let service_matches = |s: &str| {
        let k = method_key(s.rsplit(['.', '/']).next().unwrap_or(s));
        k == svc_key
            || k.trim_end_matches("client") == svc_key
            || k.trim_end_matches("stub") == svc_key
    };
    let contracts: Vec<u32> = g.contracts_named(service);
    let client_files: BTreeSet<u32> = crate::order::set_of(
        g.clients
            .iter()
            .filter(|c| contracts.contains(&c.contract))
            .map(|c| c.at.file),
    );
    let owners: BTreeSet<u16> = crate::order::set_of(
        g.handlers
            .iter()
            .filter(|h| contracts.contains(&g.rpcs[h.rpc as usize].contract))
            .map(|h| snap.files[h.at.file as usize].root)
            .chain(
                g.servers
                    .iter()
                    .filter(|s| contracts.contains(&s.contract))
                    .map(|s| snap.files[s.at.file as usize].root),
            ),
    );
    let mut out = Vec::new();
    for (fi, f) in snap.files.iter().enumerate() {
        if f.is_test || f.generated {
            continue;
        }
        let facts = f.facts();
        let file_clients: Vec<&GrpcFact> = facts
            .grpc
            .iter()
            .filter(|x| matches!(x, GrpcFact::Client { service, .. } if service_matches(service)))
            .collect();
        for fact in &facts.grpc {
            let GrpcFact::Call {
                service: call_svc,
                receiver,
                method: m,
                line,
            } = fact
            else {
                continue;
            };
            if method_key(m) != key {
                continue;
            }
            let exact = call_svc.as_deref().is_some_and(service_matches)
                || file_clients.iter().any(|c| {
                    matches!(c, GrpcFact::Client { var: Some(v), .. } if v == receiver || receiver.ends_with(&format!(".{v}")))
                });
            let heuristic =
                !exact && (client_files.contains(&(fi as u32)) || !file_clients.is_empty());
            if !exact && !heuristic {
                continue;
            }
            let at = Loc {
                file: fi as u32,
                line: *line,
            };
            out.push(Affected {
                service: analyze_impact::root_label(snap, f.root).to_string(),
                external: !owners.contains(&f.root),
                role: "caller".into(),
                element: analyze_impact::enclosing(snap, at).unwrap_or_else(|| receiver.clone()),
                location: loc_text(snap, at),
                confidence: if exact {
                    Confidence::Exact.label()
                } else {
                    Confidence::Heuristic.label()
                },
            });
        }
    }
    crate::order::sort_by_cached_key(&mut out, |a| (!a.external, a.location.clone()));
    out
}

/// The line range of the declaration at (or around) a line of an indexed file.
fn decl_range(snap: &Snapshot, file: u32, line: u32, name: Option<&str>) -> Option<(u32, u32)> {
    let f = &snap.files[file as usize];
    let syms = f.symbols();
    if let Some(n) = name {
        let last = n.rsplit(['.', ':']).next().unwrap_or(n);
        if let Some(s) = syms
            .iter()
            .find(|s| s.kind != SymbolKind::Endpoint && f.name(s) == last)
        {
            return Some((s.line, s.end_line.max(s.line)));
        }
    }
    syms.iter()
        .filter(|s| s.kind != SymbolKind::Endpoint && s.line <= line && line <= s.end_line)
        .min_by_key(|s| s.end_line - s.line)
        .map(|s| (s.line, s.end_line.max(s.line)))
}

/// RPC handlers whose body changed (the `.proto` unchanged for that RPC).
fn handler_contracts(snap: &Snapshot, report: &mut Report) {
    let g = &snap.graph;
    let already: BTreeSet<String> =
        crate::order::set_of(report.contracts.iter().map(|c| c.name.clone()));
    let mut by_rpc: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for cf in report.files.iter().filter(|c| c.class == FileClass::Code) {
        let Some(fi) = cf.file else { continue };
        for h in g.handlers.iter().filter(|h| h.at.file == fi) {
            let range = decl_range(snap, fi, h.at.line, None).unwrap_or((h.at.line, h.at.line));
            if overlaps(&cf.ranges, range.0, range.1) {
                by_rpc.entry(h.rpc).or_default().push(format!(
                    "`{}` ({})",
                    h.label,
                    loc_text(snap, h.at)
                ));
            }
        }
    }
    for (r, handlers) in by_rpc {
        let rpc = &g.rpcs[r as usize];
        let name = format!("{}.{}", g.contracts[rpc.contract as usize].name, rpc.name);
        if already.contains(&name) {
            continue;
        }
        let (rows, _, _) = analyze_impact::rpc_rows(snap, &[rpc.contract], &[r]);
        report.contracts.push(ContractChange {
            kind: "rpc",
            name,
            location: loc_text(snap, rpc.def),
            change: format!(
                "handler body changed: {} (the contract is unchanged; behaviour may differ)",
                handlers.join(", ")
            ),
            risk: Risk::Behaviour,
            owner: handlers_owner(snap, r),
            affected: affected_of(snap, rows),
        });
    }
}

fn handlers_owner(snap: &Snapshot, rpc: u32) -> Option<String> {
    snap.graph
        .handlers
        .iter()
        .find(|h| h.rpc == rpc && !snap.files[h.at.file as usize].is_test)
        .and_then(|h| owner_of(snap, h.at))
}

/// HTTP routes whose path or handler changed, and routes of the base that are gone.
fn route_contracts(snap: &Snapshot, report: &mut Report) {
    let g = &snap.graph;
    let mut out = Vec::new();
    for cf in report.files.iter().filter(|c| c.class == FileClass::Code) {
        let current: Vec<u32> = cf
            .file
            .map(|fi| {
                (0..g.routes.len() as u32)
                    .filter(|&r| g.routes[r as usize].at.file == fi)
                    .collect()
            })
            .unwrap_or_default();
        let base_routes: Vec<(String, String, u32)> = cf
            .base_facts
            .iter()
            .flat_map(|f| f.http.iter())
            .filter_map(|h| match h {
                HttpFact::Route {
                    method, path, line, ..
                } => Some((method.clone(), path.clone(), *line)),
                HttpFact::Call { .. } => None,
            })
            .collect();
        let route_lines: Vec<u32> = current
            .iter()
            .map(|&r| g.routes[r as usize].at.line)
            .collect();
        let same = |m: &str, p: &str, m2: &str, p2: &str| m.eq_ignore_ascii_case(m2) && p == p2;
        for &r in &current {
            let route = &g.routes[r as usize];
            let Some(fi) = cf.file else { continue };
            let new_route = !base_routes
                .iter()
                .any(|(m, p, _)| same(m, p, &route.method, &route.path));
            // The handler: the named declaration, else the lines up to the next route.
            let handler_range = decl_range(snap, fi, route.at.line, route.handler.as_deref())
                .filter(|_| route.handler.is_some())
                .unwrap_or_else(|| {
                    let next = route_lines
                        .iter()
                        .copied()
                        .filter(|&l| l > route.at.line)
                        .min()
                        .map_or(route.at.line + 30, |l| l - 1);
                    let end = decl_range(snap, fi, route.at.line, None)
                        .map_or(next, |(_, e)| e.min(next));
                    (route.at.line, end.max(route.at.line))
                });
            let line_changed = overlaps(&cf.ranges, route.at.line, route.at.line);
            let body_changed = overlaps(&cf.ranges, handler_range.0, handler_range.1);
            if !(new_route || line_changed || body_changed) {
                continue;
            }
            let name = format!("{} {}", route.method, route.path);
            let change = if new_route && cf.base_facts.is_some() {
                "route added or its path changed".to_string()
            } else if new_route {
                "route added".to_string()
            } else if line_changed {
                "route declaration changed".to_string()
            } else {
                format!(
                    "handler body changed (L{}–L{}); the path is unchanged, behaviour may differ",
                    handler_range.0, handler_range.1
                )
            };
            let (rows, _, _) = analyze_impact::route_rows(snap, &[r]);
            out.push(ContractChange {
                kind: "route",
                name,
                location: loc_text(snap, route.at),
                change,
                risk: Risk::Behaviour,
                owner: owner_of(snap, route.at),
                affected: affected_of(snap, rows),
            });
        }
        // Routes of the base gone from the file: callers of the old path are left dangling.
        for (m, p, line) in &base_routes {
            let still = current.iter().any(|&r| {
                let route = &g.routes[r as usize];
                same(m, p, &route.method, &route.path)
            });
            if still {
                continue;
            }
            let owner_root = cf.file.map(|fi| snap.files[fi as usize].root);
            let method_ok = |cm: &Option<String>| {
                m == "ANY" || cm.as_deref().is_none_or(|c| c.eq_ignore_ascii_case(m))
            };
            let mut callers: Vec<Affected> = Vec::new();
            let mut push = |at: Loc, conf: Confidence| {
                let f = &snap.files[at.file as usize];
                if f.is_test {
                    return;
                }
                callers.push(Affected {
                    service: analyze_impact::root_label(snap, f.root).to_string(),
                    external: owner_root != Some(f.root),
                    role: "caller".into(),
                    element: analyze_impact::enclosing(snap, at)
                        .unwrap_or_else(|| f.path.to_string()),
                    location: loc_text(snap, at),
                    confidence: conf.label(),
                });
            };
            for c in &g.unresolved_calls {
                if method_ok(&c.method) && path_matches(&c.url, p) {
                    push(c.at, Confidence::Heuristic);
                }
            }
            for c in &g.route_calls {
                if method_ok(&c.method) && path_matches(&c.path, p) {
                    push(c.at, c.confidence);
                }
            }
            let replaced = out
                .iter()
                .filter(|c| {
                    c.kind == "route"
                        && c.change.contains("path changed")
                        && c.location.starts_with(&cf.display)
                })
                .map(|c| inline_code(&c.name))
                .collect::<Vec<_>>();
            let what = if replaced.is_empty() {
                "route removed".to_string()
            } else {
                format!("route path changed (now {})", replaced.join(", "))
            };
            out.push(ContractChange {
                kind: "route",
                name: format!("{m} {p}"),
                location: format!("{}:{line} (base)", cf.display),
                change: if callers.is_empty() {
                    format!("{what}; no caller of the old path found")
                } else {
                    format!("{what}; {} caller(s) still use the old path", callers.len())
                },
                risk: if callers.is_empty() {
                    Risk::Behaviour
                } else {
                    Risk::Breaking
                },
                owner: cf.service.clone(),
                affected: callers,
            });
        }
    }
    report.contracts.extend(out);
}

/// Topics whose producer or consumer site changed, or whose name constant changed (with the
/// consumers of the old name, which lose their producer).
fn topic_contracts(snap: &Snapshot, report: &mut Report, depth: usize) {
    let g = &snap.graph;
    let mut touched: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    let mut renamed: Vec<(String, String, u32, Option<String>)> = Vec::new();
    for cf in report.files.iter().filter(|c| c.class == FileClass::Code) {
        let Some(fi) = cf.file else { continue };
        let f = &snap.files[fi as usize];
        // Event sites on changed lines.
        for e in g.events.iter().filter(|e| e.at.file == fi) {
            if overlaps(&cf.ranges, e.at.line, e.at.line) {
                let role = match e.role {
                    EventRole::Producer => "producer",
                    EventRole::Consumer => "consumer",
                };
                touched
                    .entry(e.topic)
                    .or_default()
                    .push(format!("{role} changed at {}", loc_text(snap, e.at)));
            }
        }
        // Constants on changed lines that name a topic.
        for b in f
            .facts()
            .bindings
            .iter()
            .filter(|b| overlaps(&cf.ranges, b.line, b.line))
        {
            let suffix = format!(".{}", b.name);
            let uses: Vec<&crate::index::graph::EventLink> = g
                .events
                .iter()
                .filter(|e| {
                    snap.files[e.at.file as usize].root == f.root
                        && e.how
                            .strip_prefix("constant ")
                            .is_some_and(|c| c == b.name || c.ends_with(&suffix))
                })
                .collect();
            for e in &uses {
                touched.entry(e.topic).or_default().push(format!(
                    "name constant `{}` changed at {}:{}",
                    b.name, cf.display, b.line
                ));
            }
            let old = cf
                .base_facts
                .as_ref()
                .and_then(|bf| bf.bindings.iter().find(|x| x.name == b.name))
                .and_then(|x| {
                    x.value
                        .as_lit()
                        .map(str::to_string)
                        .or_else(|| x.value.env_default())
                });
            if let (Some(old), Some(e)) = (old, uses.first()) {
                let new = &g.topics[e.topic as usize].name;
                if topic_key(&old) != topic_key(new) {
                    renamed.push((old, new.clone(), e.topic, Some(b.name.clone())));
                }
            }
        }
        // Literal topics of the base's event sites that are gone from the file.
        if let Some(bf) = &cf.base_facts {
            let now: BTreeSet<String> = crate::order::set_of(
                g.events
                    .iter()
                    .filter(|e| e.at.file == fi)
                    .map(|e| g.topics[e.topic as usize].key.clone()),
            );
            for e in bf.events.iter().filter(|e| e.role == EventRole::Producer) {
                if let Some(lit) = e.topic.as_lit()
                    && !now.contains(&topic_key(lit))
                    && let Some(ne) = g.events.iter().find(|x| {
                        x.at.file == fi
                            && x.role == EventRole::Producer
                            && overlaps(&cf.ranges, x.at.line, x.at.line)
                    })
                {
                    renamed.push((
                        lit.to_string(),
                        g.topics[ne.topic as usize].name.clone(),
                        ne.topic,
                        None,
                    ));
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut done_old: BTreeSet<String> = BTreeSet::new();
    for (old, new, new_topic, constant) in renamed {
        if !done_old.insert(topic_key(&old)) {
            continue;
        }
        let old_topics: Vec<u32> = (0..g.topics.len() as u32)
            .filter(|&t| g.topics[t as usize].key == topic_key(&old))
            .collect();
        let mut affected = Vec::new();
        let still_produced = g.events.iter().any(|e| {
            // A spec (AsyncAPI) naming the topic is documentation, not a producer.
            let f = &snap.files[e.at.file as usize];
            old_topics.contains(&e.topic)
                && e.role == EventRole::Producer
                && !f.is_test
                && f.lang != Language::Yaml
        });
        if !old_topics.is_empty() {
            let (rows, _, _) = analyze_impact::topic_rows(snap, &old_topics, 1);
            affected = affected_of(snap, rows)
                .into_iter()
                .filter(|a| a.role == "consumer")
                .map(|mut a| {
                    a.external = true;
                    a
                })
                .collect();
        }
        let orphaned = !affected.is_empty() && !still_produced;
        let via = constant.map_or(String::new(), |c| {
            format!(" (constant {})", inline_code(&c))
        });
        let (old_c, new_c) = (inline_code(&old), inline_code(&new));
        out.push(ContractChange {
            kind: "topic",
            name: old.clone(),
            location: g
                .events
                .iter()
                .find(|e| e.topic == new_topic && e.role == EventRole::Producer)
                .map_or_else(String::new, |e| loc_text(snap, e.at)),
            change: if orphaned {
                format!(
                    "topic renamed {old_c} → {new_c}{via}: {} consumer(s) of {old_c} no longer receive anything",
                    affected.len()
                )
            } else if affected.is_empty() {
                format!("topic renamed {old_c} → {new_c}{via}; no consumer of the old name found")
            } else {
                format!("topic renamed {old_c} → {new_c}{via}; the old name still has a producer")
            },
            risk: if orphaned {
                Risk::Breaking
            } else {
                Risk::Behaviour
            },
            owner: g
                .events
                .iter()
                .find(|e| e.topic == new_topic && e.role == EventRole::Producer)
                .and_then(|e| owner_of(snap, e.at)),
            affected,
        });
    }
    payload_types(snap, report, &mut touched);
    for (t, why) in touched {
        let topic = &g.topics[t as usize];
        let (rows, owners, _) = analyze_impact::topic_rows(snap, &[t], depth);
        out.push(ContractChange {
            kind: "topic",
            name: topic.name.clone(),
            location: g
                .events
                .iter()
                .find(|e| e.topic == t)
                .map_or_else(String::new, |e| loc_text(snap, e.at)),
            change: {
                let mut w = why;
                w.dedup();
                w.join("; ")
            },
            risk: Risk::Behaviour,
            owner: owners
                .first()
                .map(|&r| analyze_impact::root_label(snap, r).to_string()),
            affected: affected_of(snap, rows),
        });
    }
    report.contracts.extend(out);
}

/// The types (class, struct, record, message, interface, enum) a change touches in code: a
/// changed type, or the type holding a changed field (`OrderPaid.amount` changes `OrderPaid`),
/// by its simple name, with the declaration that changed.
fn changed_types(report: &Report) -> Vec<(&str, &ChangedDecl)> {
    report
        .decls
        .iter()
        .filter(|d| d.class == FileClass::Code && d.how != "added")
        .filter_map(|d| {
            let name = match d.kind {
                "class" | "struct" | "message" | "interface" | "enum" | "type" => &d.name[..],
                "field" | "property" | "enum_value" => d.name.rsplit_once('.')?.0,
                _ => return None,
            };
            let name = name.rsplit('.').next().unwrap_or(name);
            (name.len() >= 4).then_some((name, d))
        })
        .collect()
}

/// The lines that say what a site (an event producer or consumer, a route) sends or takes:
/// the site's own line and the signature — first lines — of the function around it, or of
/// the one an annotation or decorator on the site's line introduces (`@KafkaListener(…)`
/// above `void on(OrderPaid evt)`, `@GetMapping(…)` above `Ship calc(…)`).
fn site_context<'a>(
    f: &crate::index::snapshot::FileEntry,
    line_at: &impl Fn(u32) -> &'a str,
    site: u32,
) -> Vec<(u32, &'a str)> {
    let around = f
        .symbols()
        .iter()
        .filter(|s| {
            matches!(
                s.kind,
                SymbolKind::Function | SymbolKind::Method | SymbolKind::Constructor
            ) && s.line <= site + 2
                && site <= s.end_line.max(s.line)
        })
        .max_by_key(|s| s.line);
    let mut context: Vec<(u32, &str)> = vec![(site, line_at(site))];
    if let Some(s) = around {
        for n in s.line..(s.line + 3).min(site.max(s.line + 1)) {
            context.push((n, line_at(n)));
        }
    }
    context
}

/// Calls `found(site index, type name, its changed declaration, line naming it)` for every
/// site of `sites` (file, line, whether the handler's signature counts) whose context names a
/// changed type: the site's line, and with the flag [`site_context`]'s signature lines (what a
/// consumer or a route handler takes or returns; a producer's signature says what it received,
/// not what it sends). Each file is read once.
fn sites_naming_types<'r>(
    snap: &Snapshot,
    types: &[(&'r str, &'r ChangedDecl)],
    sites: &[(Loc, bool)],
    mut found: impl FnMut(usize, &'r str, &'r ChangedDecl, u32),
) {
    if types.is_empty() {
        return;
    }
    let mut files: Vec<u32> = sites.iter().map(|(l, _)| l.file).collect();
    crate::order::sort(&mut files);
    files.dedup();
    for fi in files {
        let f = &snap.files[fi as usize];
        let Ok(text) = std::fs::read_to_string(snap.abs_path(f)) else {
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        let line_at = |n: u32| {
            lines
                .get((n as usize).wrapping_sub(1))
                .copied()
                .unwrap_or("")
        };
        for (i, (at, signature)) in sites.iter().enumerate().filter(|(_, (l, _))| l.file == fi) {
            let context = if *signature {
                site_context(f, &line_at, at.line)
            } else {
                vec![(at.line, line_at(at.line))]
            };
            for &(name, d) in types {
                if let Some(&(n, _)) = context.iter().find(|(_, l)| names_word(l, name)) {
                    found(i, name, d, n);
                }
            }
        }
    }
}

/// Topics whose payload type changed: a changed type ([`changed_types`]) that a producer or
/// consumer of the topic names at its site or in its handler's signature. Heuristic, and said
/// so: a payload built elsewhere and passed in under another name is not seen.
fn payload_types(snap: &Snapshot, report: &Report, touched: &mut BTreeMap<u32, Vec<String>>) {
    let g = &snap.graph;
    let types = changed_types(report);
    let sites: Vec<(Loc, bool)> = g
        .events
        .iter()
        .map(|e| (e.at, e.role == EventRole::Consumer))
        .collect();
    sites_naming_types(snap, &types, &sites, |i, name, d, n| {
        let e = &g.events[i];
        let role = match e.role {
            EventRole::Producer => "producer",
            EventRole::Consumer => "consumer",
        };
        touched.entry(e.topic).or_default().push(format!(
            "payload type `{name}` changed at {}:{} (the {role} at {} names it at line {n}; heuristic)",
            d.display,
            d.line,
            loc_text(snap, e.at)
        ));
    });
}

/// Routes whose request or response type changed: a changed type ([`changed_types`]) named on
/// the route's line or in its handler's signature (`Ship calc(…)` under `@GetMapping`), for a
/// route not already reported; its callers see other JSON. Heuristic, and said so.
fn route_types(snap: &Snapshot, report: &mut Report) {
    let g = &snap.graph;
    let types = changed_types(report);
    let sites: Vec<(Loc, bool)> = g.routes.iter().map(|r| (r.at, true)).collect();
    let mut why: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    sites_naming_types(snap, &types, &sites, |i, name, d, n| {
        why.entry(i as u32).or_default().push(format!(
            "request or response type `{name}` changed at {}:{} (the handler names it at line {n}; heuristic)",
            d.display, d.line
        ));
    });
    for (r, mut reasons) in why {
        let route = &g.routes[r as usize];
        let name = format!("{} {}", route.method, route.path);
        if report
            .contracts
            .iter()
            .any(|c| c.kind == "route" && c.name == name)
        {
            continue;
        }
        reasons.dedup();
        let (rows, _, _) = analyze_impact::route_rows(snap, &[r]);
        report.contracts.push(ContractChange {
            kind: "route",
            name,
            location: loc_text(snap, route.at),
            change: reasons.join("; "),
            risk: Risk::Behaviour,
            owner: owner_of(snap, route.at),
            affected: affected_of(snap, rows),
        });
    }
}

/// True when `line` contains `word` as a whole identifier (not inside a longer name).
fn names_word(line: &str, word: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    line.match_indices(word).any(|(i, _)| {
        !line[..i].chars().next_back().is_some_and(is_ident)
            && !line[i + word.len()..].chars().next().is_some_and(is_ident)
    })
}

/// Roots whose non-test code changed outside any contract, imported by other roots.
fn importer_contracts(snap: &Snapshot, report: &mut Report) {
    let g = &snap.graph;
    let mut roots: BTreeMap<u16, usize> = BTreeMap::new();
    for cf in report.files.iter().filter(|c| c.class == FileClass::Code) {
        // A `.proto` change is answered by its contracts, not by who imports the root.
        if let Some(fi) = cf.file
            && snap.files[fi as usize].lang != Language::Protobuf
        {
            *roots.entry(snap.files[fi as usize].root).or_default() += 1;
        }
    }
    for (root, n) in roots {
        let mut affected: Vec<Affected> = Vec::new();
        let mut seen = BTreeSet::new();
        for l in g.import_links.iter().filter(|l| l.to_root == root) {
            let f = &snap.files[l.at.file as usize];
            if f.root == root || f.is_test || !seen.insert((l.at.file, l.at.line)) {
                continue;
            }
            affected.push(Affected {
                service: analyze_impact::root_label(snap, f.root).to_string(),
                external: true,
                role: "importer".into(),
                element: l.module.clone(),
                location: loc_text(snap, l.at),
                confidence: l.confidence.label(),
            });
        }
        if affected.is_empty() {
            continue;
        }
        let label = analyze_impact::root_label(snap, root).to_string();
        report.contracts.push(ContractChange {
            kind: "package",
            name: label.clone(),
            location: String::new(),
            change: format!("{n} changed code file(s) in a root other roots import"),
            risk: Risk::Internal,
            owner: Some(label),
            affected,
        });
    }
}

/// One risk line per service.
fn risks(report: &mut Report) {
    let mut services: BTreeMap<String, (Risk, String)> = BTreeMap::new();
    let mut raise = |svc: &str, risk: Risk, why: String| {
        let e = services
            .entry(svc.to_string())
            .or_insert((risk, why.clone()));
        if risk > e.0 {
            *e = (risk, why);
        }
    };
    for cf in &report.files {
        let Some(svc) = &cf.service else { continue };
        match cf.class {
            FileClass::Code => raise(
                svc,
                Risk::Internal,
                "code changed, no contract touched".into(),
            ),
            FileClass::Other => raise(svc, Risk::NonCode, "only non-source files changed".into()),
            c => raise(
                svc,
                Risk::NonCode,
                format!("only {} files changed", c.label()),
            ),
        }
    }
    for c in &report.contracts {
        let name = format!("{} {}", c.kind, inline_code(&c.name));
        if let Some(o) = &c.owner {
            raise(
                o,
                c.risk,
                format!("owns {name}: {}", first_clause(&c.change)),
            );
        }
        for a in c.affected.iter().filter(|a| a.external) {
            let why = match c.risk {
                Risk::Breaking => format!("{} of {name} at `{}`, which breaks", a.role, a.location),
                _ => format!("{} of changed {name} at `{}`", a.role, a.location),
            };
            let risk = if c.kind == "package" {
                Risk::Behaviour.min(c.risk.max(Risk::Internal))
            } else {
                c.risk
            };
            raise(&a.service, risk, why);
        }
    }
    report.services = services;
}

/// Free text in a table cell: escaped like inline text, `|` escaped.
fn prose_cell(s: &str) -> String {
    crate::render::escape_inline(s).replace('|', "\\|")
}

fn first_clause(s: &str) -> &str {
    let end = s.find("; ").unwrap_or(s.len());
    let cut = &s[..end];
    if cut.len() > 160 {
        let mut i = 160;
        while !cut.is_char_boundary(i) {
            i -= 1;
        }
        &cut[..i]
    } else {
        cut
    }
}

// ---------------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------------

/// The Markdown answer (the affected rows paged by `limit`/`offset`), within `budget` bytes.
pub fn render_markdown(
    report: &Report,
    limit: usize,
    offset: usize,
    budget: usize,
) -> (String, Vec<String>) {
    render_markdown_rows(report, limit, offset, budget, &mut Vec::new())
}

/// [`render_markdown`], also pushing the affected rows it shows as structured rows (one per
/// table row, the same page) onto `data`.
fn render_markdown_rows(
    report: &Report,
    limit: usize,
    offset: usize,
    budget: usize,
    data: &mut Vec<Value>,
) -> (String, Vec<String>) {
    let mut out = String::from("## Changes and their impact\n\n");
    for b in &report.bases {
        out.push_str(&format!("- {b}\n"));
    }
    if report.files.is_empty() {
        out.push_str("\n_No changes: the working tree matches the base._\n");
        return (out, Vec::new());
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &report.files {
        *counts.entry(f.class.label()).or_default() += 1;
    }
    out.push_str(&format!(
        "- **Files changed**: {} ({})\n",
        report.files.len(),
        counts
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    out.push_str(&format!(
        "- **Verdict**: {}\n\n",
        if report.breaking() {
            "**BREAKING** — a contract change breaks its users (rows below)"
        } else if report.contracts.is_empty() {
            "no contract touched"
        } else {
            "no breaking contract change"
        }
    ));
    out.push_str("### Risk by service\n\n| Service | Risk | Why |\n|---|---|---|\n");
    for (name, (risk, why)) in services_by_risk(report) {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            table_cell(name),
            risk.label(),
            prose_cell(why)
        ));
    }
    out.push_str("\n### Contracts touched\n\n");
    if report.contracts.is_empty() {
        out.push_str(
            "_None: no .proto RPC or message, HTTP route, topic or imported package is linked to the changed lines._\n",
        );
    }
    for (i, c) in report.contracts.iter().enumerate().take(60) {
        let ext = c.affected.iter().filter(|a| a.external).count();
        out.push_str(&format!(
            "{}. **{}** {} {} {} — {} _({} affected, {ext} in other services)_\n",
            i + 1,
            c.risk.label(),
            c.kind,
            inline_code(&c.name),
            if c.location.is_empty() {
                String::new()
            } else {
                format!("at {}", inline_code(&c.location))
            },
            crate::render::escape_inline(&c.change),
            c.affected.len()
        ));
    }
    if report.contracts.len() > 60 {
        out.push_str(&format!(
            "- …and {} more contract(s).\n",
            report.contracts.len() - 60
        ));
    }
    // The affected rows, paged.
    let rows: Vec<(usize, &ContractChange, &Affected)> = report
        .contracts
        .iter()
        .enumerate()
        .flat_map(|(i, c)| c.affected.iter().map(move |a| (i + 1, c, a)))
        .collect();
    let mut files: Vec<String> = report.files.iter().map(|f| f.display.clone()).collect();
    let mut tail = String::new();
    // Declarations and notes after the table, bounded.
    tail.push_str("\n### Changed declarations\n\n");
    let mut shown_decls = 0;
    for d in report.decls.iter().take(80) {
        tail.push_str(&format!(
            "- {} `{}` {} ({}) — {}\n",
            d.kind,
            d.name.replace('`', "'"),
            inline_code(&format!("{}:{}-{}", d.display, d.line, d.end_line)),
            d.class.label(),
            d.how
        ));
        shown_decls += 1;
    }
    if report.decls.is_empty() {
        tail.push_str("_No indexed declaration overlaps the changed lines._\n");
    } else if report.decls.len() > shown_decls {
        tail.push_str(&format!(
            "- …and {} more declaration(s).\n",
            report.decls.len() - shown_decls
        ));
    }
    let non_code: Vec<&ChangedFile> = report
        .files
        .iter()
        .filter(|f| f.class != FileClass::Code)
        .collect();
    if !non_code.is_empty() {
        tail.push_str("\n### Tests, docs, generated and other files (do not raise the risk)\n\n");
        for f in non_code.iter().take(40) {
            tail.push_str(&format!(
                "- {} ({}, {})\n",
                inline_code(&f.display),
                f.class.label(),
                f.status
            ));
        }
        if non_code.len() > 40 {
            tail.push_str(&format!("- …and {} more.\n", non_code.len() - 40));
        }
    }
    let unresolved: Vec<String> = report
        .unresolved
        .iter()
        .cloned()
        .chain(
            report
                .files
                .iter()
                .filter(|f| f.class == FileClass::Code && f.file.is_none() && f.status != "deleted")
                .map(|f| {
                    format!(
                        "{} is not in the index (excluded, rejected or new since the last reload)",
                        inline_code(&f.display)
                    )
                }),
        )
        .collect();
    if !unresolved.is_empty() {
        tail.push_str("\n### Not resolvable\n\n");
        for u in unresolved.iter().take(20) {
            tail.push_str(&format!("- {u}\n"));
        }
    }
    tail.push_str("\n_A topic's payload type is linked when a producer or consumer names the changed type at its site or in the signature of the function around it (heuristic); a payload passed in under another name is not seen._\n");

    out.push_str("\n### Affected elements\n\n");
    if rows.is_empty() {
        out.push_str("_No caller, consumer or importer is linked to the touched contracts._\n");
    } else if offset >= rows.len() {
        out.push_str(&format!(
            "_No rows at offset {offset}: there are {} rows; request an offset below {}._\n",
            rows.len(),
            rows.len()
        ));
    } else {
        out.push_str("| # | Contract | Risk | Service | Scope | Role | Element | Location | Confidence |\n|---|---|---|---|---|---|---|---|---|\n");
        let room = budget.saturating_sub(out.len() + tail.len().min(budget / 3) + 400);
        let mut shown = 0;
        let mut used = 0;
        for (n, (ci, c, a)) in rows.iter().enumerate().skip(offset).take(limit) {
            let line = format!(
                "| {} | {ci}. {} | {} | {} | {} | {} | {} | {} | {} |\n",
                n + 1,
                table_cell(&c.name),
                c.risk.label(),
                table_cell(&a.service),
                if a.external { "EXTERNAL" } else { "INTERNAL" },
                a.role,
                table_cell(&a.element),
                table_cell(&a.location),
                a.confidence
            );
            if used + line.len() > room {
                break;
            }
            used += line.len();
            out.push_str(&line);
            let (path, at) = match a.location.rsplit_once(':') {
                Some((p, l)) if l.parse::<u32>().is_ok() => (p, l.parse().unwrap_or(0)),
                _ => (a.location.as_str(), 0),
            };
            data.push(analyze_impact::scoped_row(
                path,
                at,
                &a.role,
                &a.element,
                a.confidence,
                &format!("{} {} {}: {}", c.risk.key(), c.kind, c.name, c.change),
                Some(a.external),
            ));
            files.push(
                a.location
                    .rsplit_once(':')
                    .map_or(a.location.clone(), |(p, _)| p.to_string()),
            );
            shown += 1;
        }
        let next = offset + shown;
        if next < rows.len() {
            out.push_str(&format!(
                "\n_Rows {}–{next} of {}. Next page: analyze_changes(offset: {next})._\n",
                offset + 1,
                rows.len()
            ));
        } else {
            out.push_str(&format!("\n_{} row(s)._\n", rows.len()));
        }
    }
    let room = budget.saturating_sub(out.len());
    if tail.len() > room {
        let mut cut = room.saturating_sub(120);
        while cut > 0 && !tail.is_char_boundary(cut) {
            cut -= 1;
        }
        tail.truncate(cut);
        tail.push_str(
            "\n_…cut to stay within the answer cap; page the rows or narrow the base._\n",
        );
    }
    out.push_str(&tail);
    crate::order::sort(&mut files);
    files.dedup();
    (out, files)
}

/// The report as JSON, for machines (`mesh-mcp impact --format json`).
/// The services, riskiest first (then by name): the order of the Markdown table and the JSON.
fn services_by_risk(report: &Report) -> Vec<(&String, &(Risk, String))> {
    let mut svc: Vec<(&String, &(Risk, String))> = report.services.iter().collect();
    crate::order::sort_by_cached_key(&mut svc, |(n, (r, _))| {
        (std::cmp::Reverse(*r), (*n).clone())
    });
    svc
}

pub fn to_json(report: &Report) -> Value {
    json!({
        "breaking": report.breaking(),
        "bases": report.bases,
        "files": report.files.iter().map(|f| json!({
            "path": f.display,
            "status": f.status,
            "class": f.class.label(),
            "service": f.service,
            "ranges": f.ranges.iter().map(|(a, b)| json!([a, b])).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "declarations": report.decls.iter().map(|d| json!({
            "path": d.display,
            "name": d.name,
            "kind": d.kind,
            "line": d.line,
            "end_line": d.end_line,
            "class": d.class.label(),
            "how": d.how,
        })).collect::<Vec<_>>(),
        "contracts": report.contracts.iter().map(|c| json!({
            "kind": c.kind,
            "name": c.name,
            "location": c.location,
            "change": c.change,
            "risk": c.risk.key(),
            "owner": c.owner,
            "affected": c.affected.iter().map(|a| json!({
                "service": a.service,
                "scope": if a.external { "EXTERNAL" } else { "INTERNAL" },
                "role": a.role,
                "element": a.element,
                "location": a.location,
                "confidence": a.confidence,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "services": services_by_risk(report).into_iter().map(|(s, (r, why))| json!({
            "service": s,
            "risk": r.key(),
            "why": why,
        })).collect::<Vec<_>>(),
        "unresolved": report.unresolved,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payload_type_is_named_as_a_whole_identifier() {
        assert!(names_word("void on(OrderPaid evt) {", "OrderPaid"));
        assert!(names_word("send(T, new OrderPaid(1))", "OrderPaid"));
        assert!(!names_word("void on(OrderPaidV2 evt)", "OrderPaid"));
        assert!(!names_word("MyOrderPaid x", "OrderPaid"));
        assert!(names_word("é(OrderPaid)ü", "OrderPaid"));
        assert!(!names_word("éOrderPaidü", "OrderPaid"));
        assert!(!names_word("", "OrderPaid"));
    }

    #[test]
    fn diff_hunks_become_ranges() {
        let text = "diff --git a/x.go b/x.go\nindex 1..2 100644\n--- a/x.go\n+++ b/x.go\n@@ -3,2 +3,4 @@ func a\n-x\n+y\n@@ -10 +12,0 @@\n-z\ndiff --git a/old.proto b/new.proto\nsimilarity index 90%\nrename from old.proto\nrename to new.proto\ndiff --git a/gone.ts b/gone.ts\ndeleted file mode 100644\n--- a/gone.ts\n+++ /dev/null\n@@ -1,3 +0,0 @@\n";
        let d = parse_diff(text);
        assert_eq!(d.len(), 3);
        assert_eq!(d[0].new_ranges, vec![(3, 6), (12, 13)]);
        assert_eq!(d[0].old_ranges, vec![(3, 4), (10, 10)]);
        assert_eq!(d[1].old_path.as_deref(), Some("old.proto"));
        assert_eq!(d[1].new_path.as_deref(), Some("new.proto"));
        assert_eq!(d[2].new_path, None);
        assert_eq!(d[2].old_ranges, vec![(1, 3)]);
    }

    #[test]
    fn base_arguments() {
        assert_eq!(parse_base(None).unwrap(), BaseArg::Default);
        assert_eq!(
            parse_base(Some("working tree")).unwrap(),
            BaseArg::WorkingTree
        );
        assert_eq!(
            parse_base(Some("origin/main")).unwrap(),
            BaseArg::Revision("origin/main".into())
        );
        let e = parse_base(Some("--output=x")).unwrap_err();
        assert!(
            e.contains("Invalid base") && e.contains("origin/main"),
            "{e}"
        );
    }
}
