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

mod calls;
mod contracts;
mod diff;
mod proto;
mod render;

pub use render::{render_markdown, to_json};

use self::contracts::{importer_contracts, route_contracts, route_types, topic_contracts};
use self::diff::{
    Hunk, RepoBase, choose_base, classify_path, overlaps, read_base_texts, read_diff, repositories,
};
use self::proto::{handler_contracts, proto_contracts};
use self::render::{first_clause, render_markdown_rows};
use super::analyze_impact::{self, Row};
use super::{ToolDef, ToolEnv, ToolOutput, object_schema};
use crate::git::{Git, validate_revision};
use crate::index::facts::{FileFacts, Language, SymbolKind};
use crate::index::graph::Loc;
use crate::index::snapshot::Snapshot;
use crate::render::{MAX_OUTPUT_BYTES, inline_code};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The tool definition.
pub static TOOL: ToolDef = ToolDef {
    name: "analyze_changes",
    title: "Analyze the impact of a diff",
    description: "Answers 'what does my branch break?': reads `git diff` against a base (default: \
the merge-base of HEAD with origin/HEAD, main or master; \"working tree\" for uncommitted \
changes against HEAD) and lists the changed declarations, the contracts touched (.proto RPCs \
and messages with the wire-format verdict, RPCs, HTTP routes and topics whose handler, path, \
producer, consumer or name changed, packages imported by other roots), the elements of other \
services affected, and one risk line per service (breaking > behaviour > internal > \
tests/docs/generated only). Use it before review or in CI; for one known RPC, topic or route \
use analyze_impact. Example: {\"base\": \"origin/main\"}.",
    input_schema: || {
        object_schema(
            json!({
                "base": {"type": "string", "description": "Git revision to diff the working tree against: a branch, tag or commit, e.g. \"origin/main\"; or \"working tree\" for uncommitted changes against HEAD. Omitted: the merge-base of HEAD with origin/HEAD, main or master, else HEAD."},
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
    /// `Breaking` when `breaks` (users of the old contract remain), else `Behaviour`: the
    /// verdict of a removed or renamed contract.
    pub fn breaking_if(breaks: bool) -> Risk {
        if breaks {
            Risk::Breaking
        } else {
            Risk::Behaviour
        }
    }

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
    /// The path at the base, as `display` (the old one for a rename): where base lines are.
    pub base_display: String,
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
    /// The hunks ([`diff::Hunk`]): what touches a span, where a line of the base is now.
    hunks: Vec<Hunk>,
    /// The base version's text, for a source file that existed there.
    base_text: Option<String>,
    /// The current text, for a source file (lone CRs read as line ends, as in `base_text`).
    current_text: Option<String>,
    /// Either version ends lines with lone CRs (the index may count its lines otherwise).
    lone_cr: bool,
}

impl ChangedFile {
    /// Where a contract stood at the base: `path:line (base)`.
    pub fn base_location(&self, line: u32) -> String {
        format!("{}:{line} (base)", self.base_display)
    }

    /// True when the change touches the (new-side) lines `lo..=hi`; lines removed just before
    /// or after them do not.
    fn touches(&self, lo: u32, hi: u32) -> bool {
        diff::touched(&self.hunks, lo, hi.max(lo))
    }

    /// Where line `old` of the base is now, when the change left it as it was.
    fn new_line_of(&self, old: u32) -> Option<u32> {
        self.base_text.as_ref()?;
        diff::new_line_of(&self.hunks, old)
    }

    /// The text of the base's lines `lo..=hi`, each trimmed ([`span_text`]).
    fn base_span(&self, lo: u32, hi: u32) -> Option<String> {
        self.base_text.as_deref().map(|t| span_text(t, lo, hi))
    }
}

/// The lines `lo..=hi` (1-based) of `text`, each trimmed, joined by newlines: what a span says,
/// wherever it sits (a block moved or re-indented reads the same).
fn span_text(text: &str, lo: u32, hi: u32) -> String {
    text.lines()
        .skip(lo.saturating_sub(1) as usize)
        .take((hi.max(lo) - lo.max(1) + 1) as usize)
        .map(str::trim)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The last line of the statement starting on line `line` of `lines`: where the brackets opened
/// from the start of that line close (`app.get('/x', (req, res) => { … });`,
/// `ch.basic_publish(exchange=…,\n routing_key=…)`), at most `cap` lines on; the line itself
/// when it opens none it does not close; `None` when they are still open `cap` lines on. Strings,
/// `//` comments and `# ` comments (after a blank, as Python, Ruby and shell write them; not a
/// `#private` field or a `#include`) are skipped, roughly.
fn statement_end(lines: &[&str], line: u32, cap: u32) -> Option<u32> {
    let mut depth: i32 = 0;
    let mut opened = false;
    let mut backtick = false;
    let last = (line.saturating_add(cap) as usize).min(lines.len());
    for n in line.max(1) as usize..=last {
        let Some(text) = lines.get(n - 1) else { break };
        let mut quote: Option<char> = None;
        let mut chars = text.chars().peekable();
        let mut prev = ' ';
        while let Some(c) = chars.next() {
            let after_blank = prev.is_whitespace();
            prev = c;
            if backtick {
                match c {
                    '\\' => {
                        chars.next();
                    }
                    '`' => backtick = false,
                    _ => {}
                }
                continue;
            }
            if let Some(q) = quote {
                match c {
                    '\\' => {
                        chars.next();
                    }
                    c if c == q => quote = None,
                    _ => {}
                }
                continue;
            }
            match c {
                '\'' | '"' => quote = Some(c),
                '`' => backtick = true,
                '/' if chars.peek() == Some(&'/') => break,
                '#' if after_blank && chars.peek().is_none_or(|c| c.is_whitespace()) => break,
                '(' | '[' | '{' => {
                    depth += 1;
                    opened = true;
                }
                ')' | ']' | '}' => depth -= 1,
                _ => {}
            }
        }
        if !opened || depth <= 0 {
            return Some(n as u32);
        }
    }
    None
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
    /// `rpc`, `message`, `route`, `call` (an HTTP call's target), `topic`, `package`.
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

impl ContractChange {
    /// A removed or renamed contract that `callers` may still use: breaking when any do.
    fn left_behind(
        kind: &'static str,
        name: String,
        location: String,
        change: String,
        owner: Option<String>,
        callers: Vec<Affected>,
    ) -> ContractChange {
        ContractChange {
            kind,
            name,
            location,
            change,
            risk: Risk::breaking_if(!callers.is_empty()),
            owner,
            affected: callers,
        }
    }
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
            inline_code(&crate::protocol::echo_input(&raw.escape_debug().to_string()))
        )
    })?;
    Ok(BaseArg::Revision(raw.to_string()))
}

fn run(args: &Value, env: &ToolEnv) -> ToolOutput {
    let (args, snap): (Args, _) = match super::decode_indexed("analyze_changes", args, env) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let (depth, limit, offset) = match analyze_impact::depth_and_page(
        "analyze_changes",
        args.depth,
        args.limit,
        args.offset,
    ) {
        Ok(p) => p,
        Err(e) => return e,
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
    // Riskiest first, as the Markdown table lists them.
    let services: Vec<Value> = render::services_by_risk(&report)
        .into_iter()
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

/// Computes the report for the workspace's repositories.
pub fn compute(
    snap: &Snapshot,
    workspace: &Path,
    base: &BaseArg,
    depth: usize,
) -> Result<Report, String> {
    let mut report = Report::default();
    let places = Places::new(snap, workspace);
    let mut outside = 0usize;
    // Repositories compared, and the error of the first one without the base.
    let mut compared = 0usize;
    let mut missing: Option<String> = None;
    for top in repositories(snap, workspace)? {
        let repo_label = places.repo_label(&top);
        let git = Git::new(&top);
        let (label, commit) = match choose_base(&git, base, &repo_label)? {
            RepoBase::Found(label, commit) => (label, commit),
            RepoBase::NoCommits => {
                report.bases.push(format!(
                    "{repo_label}: no commits yet, so there is no base to compare with"
                ));
                continue;
            }
            RepoBase::Missing(why) => {
                // One repository of several without the base (a nested repository on other
                // branches) is left out, said so; the others are still compared.
                if let BaseArg::Revision(rev) = base {
                    report.bases.push(format!(
                        "{repo_label}: base {} not found there; not compared",
                        inline_code(rev)
                    ));
                }
                missing.get_or_insert(why);
                continue;
            }
        };
        compared += 1;
        let short = &commit[..commit.len().min(10)];
        report.bases.push(format!(
            "{repo_label}: base {label}, commit `{short}`, compared with the working tree"
        ));
        let mut diffs = read_diff(&git, &top, &commit, &repo_label)?;
        let mut base_texts = read_base_texts(&git, &commit, &diffs);
        diff::pair_moves(&mut diffs, &base_texts, &top);
        for d in diffs {
            match changed_file(snap, &places, &top, d, &mut base_texts) {
                Placed::File(f) => report.files.push(*f),
                Placed::Outside => outside += 1,
                Placed::Unchanged => {}
            }
        }
    }
    if let Some(why) = missing
        && compared == 0
    {
        // No repository has the base: nothing was compared, so it is the answer.
        return Err(why);
    }
    if outside > 0 {
        report.unresolved.push(format!(
            "{outside} changed file(s) outside the workspace's roots were left out"
        ));
    }
    crate::order::sort_by_cached_key(&mut report.files, |f| f.display.clone());
    analyse(snap, &mut report, depth);
    Ok(report)
}

/// Where the workspace's files are, by canonical absolute path: git names files under its
/// repository's top, the snapshot under its roots, and both must meet.
struct Places {
    /// Snapshot files by canonical absolute path.
    by_path: HashMap<PathBuf, u32>,
    /// The snapshot's roots, canonical, in root order.
    roots: Vec<PathBuf>,
    /// The workspace, canonical.
    workspace: PathBuf,
}

impl Places {
    /// Canonicalises the roots and the workspace once, and indexes the snapshot's files by path.
    fn new(snap: &Snapshot, workspace: &Path) -> Self {
        let roots: Vec<PathBuf> = snap
            .roots
            .iter()
            .map(|r| std::fs::canonicalize(&r.path).unwrap_or_else(|_| r.path.clone()))
            .collect();
        let mut by_path: HashMap<PathBuf, u32> = HashMap::new();
        for (i, f) in snap.files.iter().enumerate() {
            let root = roots
                .get(f.root as usize)
                .cloned()
                .unwrap_or_else(|| snap.base.clone());
            by_path.insert(root.join(&*f.path), i as u32);
        }
        let workspace =
            std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        Places {
            by_path,
            roots,
            workspace,
        }
    }

    /// The innermost root holding `abs`, if any.
    fn root_of(&self, abs: &Path) -> Option<usize> {
        self.roots
            .iter()
            .enumerate()
            .filter(|(_, r)| abs.starts_with(r))
            .max_by_key(|(_, r)| r.as_os_str().len())
            .map(|(i, _)| i)
    }

    /// `abs` relative to the workspace (with `/`), or as it is when outside it.
    fn display(&self, abs: &Path) -> String {
        abs.strip_prefix(&self.workspace)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_else(|_| abs.to_string_lossy().into_owned())
    }

    /// The repository as the workspace sees it (never an absolute path outside it).
    fn repo_label(&self, top: &Path) -> String {
        match top.strip_prefix(&self.workspace) {
            Ok(p) if p.as_os_str().is_empty() => "`.`".to_string(),
            Ok(p) => inline_code(&p.to_string_lossy()),
            Err(_) => "the repository holding the workspace".to_string(),
        }
    }
}

/// What one file of the diff comes to.
enum Placed {
    File(Box<ChangedFile>),
    /// Outside the workspace (a repository larger than it): not ours to show.
    Outside,
    /// Only its line ends changed (or git named no path).
    Unchanged,
}

/// One file of the diff of repository `top` as the report shows it: where it is, what kind of
/// file, its status, and both versions (the base one taken from `base_texts`).
fn changed_file(
    snap: &Snapshot,
    places: &Places,
    top: &Path,
    mut d: diff::DiffFile,
    base_texts: &mut [(String, Option<Vec<u8>>)],
) -> Placed {
    let path = d.new_path.clone().or_else(|| d.old_path.clone());
    let Some(path) = path else {
        return Placed::Unchanged;
    };
    let abs = top.join(&path);
    let root = places.root_of(&abs);
    if root.is_none() && !abs.starts_with(&places.workspace) {
        return Placed::Outside;
    }
    let service = root.map(|r| snap.roots[r].label.clone());
    let file = places.by_path.get(&abs).copied();
    let display = match file {
        Some(fi) => snap.display_path(&snap.files[fi as usize]),
        None => places.display(&abs),
    };
    let base_display = match &d.old_path {
        Some(old) if d.new_path.as_ref().is_some_and(|n| n != old) => {
            places.display(&top.join(old))
        }
        _ => display.clone(),
    };
    let rel_in_root = root
        .and_then(|r| abs.strip_prefix(&places.roots[r]).ok())
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_else(|| path.clone());
    let status = status_of(&d);
    // The base version (of a source file) and the current one (of an indexed file).
    let raw_base: Option<Vec<u8>> = match &d.old_path {
        Some(old) if Language::of_path(old).is_some() => base_texts
            .iter_mut()
            .find(|(p, _)| p == old)
            .and_then(|(_, t)| t.take()),
        _ => None,
    };
    let current: Option<Vec<u8>> = match file {
        Some(fi) => std::fs::read(snap.abs_path(&snap.files[fi as usize])).ok(),
        // Not indexed (rejected, new since the last reload): read where git sees it.
        None if d.new_path.is_some() && Language::of_path(&path).is_some() => {
            std::fs::read(&abs).ok()
        }
        None => None,
    };
    let Some(texts) = read_line_ends(&mut d, raw_base, current, &status) else {
        return Placed::Unchanged;
    };
    let current_text = texts
        .current
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    let base = base_version(&d, &rel_in_root, texts.base);
    let class = match file_class(snap, file, &rel_in_root) {
        FileClass::Code if file.is_none() && base.facts.as_ref().is_some_and(|f| f.generated) => {
            FileClass::Generated
        }
        class => class,
    };
    Placed::File(Box::new(ChangedFile {
        display,
        base_display,
        status,
        class,
        service,
        ranges: d.new_ranges,
        file,
        base_facts: base.facts,
        base_bytes: base.bytes,
        old_ranges: d.old_ranges,
        hunks: d.hunks,
        base_text: base.text,
        current_text,
        lone_cr: texts.lone_cr,
    }))
}

/// The status word of a changed file: `added`, `deleted`, `renamed from …`, and so on.
fn status_of(d: &diff::DiffFile) -> String {
    match (&d.old_path, &d.new_path) {
        (None, _) if d.untracked => "untracked".to_string(),
        (None, _) => "added".to_string(),
        (Some(_), None) => "deleted".to_string(),
        (Some(o), Some(n)) if o != n => format!("renamed from `{o}`"),
        _ => "modified".to_string(),
    }
}

/// The kind of a changed file: from the index when it is indexed, else from its path.
fn file_class(snap: &Snapshot, file: Option<u32>, rel_in_root: &str) -> FileClass {
    match file.map(|fi| &snap.files[fi as usize]) {
        Some(f) if f.generated => FileClass::Generated,
        Some(f) if f.is_test => FileClass::Test,
        Some(f) if f.lang == Language::Markdown => FileClass::Doc,
        Some(_) => FileClass::Code,
        None => classify_path(rel_in_root),
    }
}

/// Both versions of a changed file, lone CRs read as line ends.
struct LineEnds {
    base: Option<Vec<u8>>,
    current: Option<Vec<u8>>,
    /// Either version had lone CRs.
    lone_cr: bool,
}

/// Lone CRs: the index reads each as a line break, git does not. Where they are the line ends,
/// git counts the file as a line or a few, so its hunks say nothing about the lines: they are
/// made again from both texts read with the CRs as line ends (a file whose lines all read the
/// same only changed its line ends: `None`). A few stray ones (in a string or comment of an LF
/// file) only shift git's hunks, which are mapped onto the lines as the index counts them.
fn read_line_ends(
    d: &mut diff::DiffFile,
    raw_base: Option<Vec<u8>>,
    current: Option<Vec<u8>>,
    status: &str,
) -> Option<LineEnds> {
    let cr_base = raw_base.as_deref().and_then(diff::lone_cr_to_lf);
    let cr_current = current.as_deref().and_then(diff::lone_cr_to_lf);
    let lone_cr = cr_base.is_some() || cr_current.is_some();
    if lone_cr
        && (d.old_path.is_none() || raw_base.is_some())
        && (d.new_path.is_none() || current.is_some())
    {
        let mostly = |b: &Option<Vec<u8>>| b.as_deref().is_some_and(diff::mostly_lone_cr);
        if mostly(&raw_base) || mostly(&current) {
            let text = |cr: &Option<Vec<u8>>, raw: &Option<Vec<u8>>| {
                cr.as_deref()
                    .or(raw.as_deref())
                    .map(|b| String::from_utf8_lossy(b).into_owned())
                    .unwrap_or_default()
            };
            d.hunks = diff::line_hunks(&text(&cr_base, &raw_base), &text(&cr_current, &current));
            if d.hunks.is_empty() && status == "modified" {
                return None;
            }
        } else if !d.cr_aware {
            d.hunks = diff::remap_hunks(&d.hunks, raw_base.as_deref(), current.as_deref());
        }
        (d.old_ranges, d.new_ranges) = diff::ranges_of(&d.hunks);
    }
    Some(LineEnds {
        base: cr_base.or(raw_base),
        current: cr_current.or(current),
        lone_cr,
    })
}

/// What the base version of a changed source file says.
#[derive(Default)]
struct BaseVersion {
    facts: Option<FileFacts>,
    /// The raw bytes, of a `.proto` only (for the wire check).
    bytes: Option<Vec<u8>>,
    text: Option<String>,
}

/// The base version run through the same extractors as the index, when it existed, has a
/// language and passes the index's guard (size, binary).
fn base_version(d: &diff::DiffFile, rel_in_root: &str, raw_base: Option<Vec<u8>>) -> BaseVersion {
    let mut base = BaseVersion::default();
    if let Some(old) = &d.old_path
        && let Some(lang) = Language::of_path(old)
        && let Some(bytes) = raw_base
        && crate::index::crawl::guard(old, &bytes).is_ok()
    {
        let text = String::from_utf8_lossy(&bytes);
        base.facts = Some(crate::index::lang::extract(lang, rel_in_root, &text));
        base.text = Some(text.into_owned());
        if lang == Language::Protobuf {
            base.bytes = Some(bytes);
        }
    }
    base
}

/// The analysis of the changed files, once git is read: the changed declarations, each
/// contract pass, the risk per service, then the contracts loudest first.
fn analyse(snap: &Snapshot, report: &mut Report, depth: usize) {
    // Progress for a caller that sent a progressToken: git is done, 7 steps of analysis follow.
    let step = |n: u32, what: &str| {
        super::fixtures::notify_progress(f64::from(n), Some(8.0), Some(what));
    };
    step(1, "diff read; finding the changed declarations");
    declarations(snap, report);
    step(2, "checking .proto contracts");
    proto_contracts(snap, report);
    step(3, "checking RPC handlers");
    handler_contracts(snap, report);
    step(4, "checking HTTP routes");
    route_contracts(snap, report);
    calls::call_contracts(snap, report);
    route_types(snap, report);
    step(5, "checking topics");
    topic_contracts(snap, report, depth);
    step(6, "checking imported packages");
    importer_contracts(snap, report);
    step(7, "grading the risk per service");
    risks(report);
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
                // Hunks that only removed whole declarations gone from the file.
                let whole_gaps: Vec<&Hunk> = cf
                    .hunks
                    .iter()
                    .filter(|h| {
                        h.new_count == 0
                            && gone.iter().any(|b| {
                                h.old <= b.line && b.end_line.max(b.line) < h.old + h.old_count
                            })
                    })
                    .collect();
                for b in &gone {
                    decls.push(ChangedDecl {
                        display: cf.base_display.clone(),
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
                for h in cf.hunks.iter().filter(|h| !whole_gaps.contains(h)) {
                    let hits: Vec<usize> = (0..syms.len())
                        .filter(|&i| h.touches(syms[i].line, syms[i].end_line.max(syms[i].line)))
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
                // A declaration that reads as it did in the base only moved: not a change.
                if !picked.is_empty()
                    && let (Some(base), Some(now)) = (&cf.base_facts, &cf.current_text)
                {
                    picked.retain(|&i| {
                        let s = syms[i];
                        let text = span_text(now, s.line, s.end_line.max(s.line));
                        !base.symbols.iter().any(|b| {
                            b.kind == s.kind
                                && b.name == f.name(s)
                                && b.container.as_deref() == f.container(s)
                                && cf.base_span(b.line, b.end_line.max(b.line)).as_ref()
                                    == Some(&text)
                        })
                    });
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
                        display: cf.base_display.clone(),
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
        // A `.proto` whose changes are contract rows is answered by them: their owners and
        // users carry the risk, and the root holding the definitions (often a shared
        // `contracts/` directory, not a service) is not "changed, no contract touched".
        let at = format!("{}:", cf.display);
        if cf.display.to_ascii_lowercase().ends_with(".proto")
            && report.contracts.iter().any(|c| c.location.starts_with(&at))
        {
            continue;
        }
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
            // The owner of a call is its caller, not the route's owner.
            let verb = if c.kind == "call" { "makes" } else { "owns" };
            raise(
                o,
                c.risk,
                format!("{verb} {name}: {}", first_clause(&c.change)),
            );
        }
        for a in c.affected.iter().filter(|a| a.external) {
            let why = match c.risk {
                Risk::Breaking if c.kind != "call" => {
                    format!("{} of {name} at `{}`, which breaks", a.role, a.location)
                }
                _ => format!("{} of changed {name} at `{}`", a.role, a.location),
            };
            // A package's importers, and the routes a changed call reaches, change behaviour
            // at most: the break of a call is the caller's.
            let risk = if c.kind == "package" || c.kind == "call" {
                Risk::Behaviour.min(c.risk.max(Risk::Internal))
            } else {
                c.risk
            };
            raise(&a.service, risk, why);
        }
    }
    report.services = services;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_ends_where_its_brackets_close() {
        let lines = [
            "ch.basic_publish(exchange=\"x\",  # (the exchange",
            "    routing_key=\"k\")",
            "app.get('/x', (req, res) => { // {",
            "  res.json({});",
            "});",
            "f(a)",
            "g(",
        ];
        assert_eq!(statement_end(&lines, 1, 10), Some(2));
        assert_eq!(statement_end(&lines, 3, 10), Some(5));
        assert_eq!(statement_end(&lines, 6, 10), Some(6));
        assert_eq!(statement_end(&lines, 7, 10), None);
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
