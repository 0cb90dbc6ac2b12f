//! Reading the change: the repositories of the workspace, the base each is compared with, and
//! `git diff -U0` parsed into per-file old and new line ranges.

use super::{BaseArg, FileClass};
use crate::git::{Git, GitError};
use crate::index::facts::Language;
use crate::index::snapshot::Snapshot;
use crate::render::inline_code;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// One file of `git diff` output.
#[derive(Debug, Default)]
pub(super) struct DiffFile {
    pub(super) old_path: Option<String>,
    pub(super) new_path: Option<String>,
    pub(super) new_ranges: Vec<(u32, u32)>,
    pub(super) old_ranges: Vec<(u32, u32)>,
    /// Every hunk, in order.
    pub(super) hunks: Vec<Hunk>,
    /// Not tracked by git (listed by `ls-files --others`).
    pub(super) untracked: bool,
    /// The hunks count lone CRs as line breaks already (made here from the texts, not by git).
    pub(super) cr_aware: bool,
}

/// One hunk of `git diff -U0`: `count` old lines from `old` became `new_count` new lines from
/// `new`. A count of 0 is a pure insertion (or deletion): its start is then the line after which
/// the lines were inserted (or removed), as git writes it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Hunk {
    pub(super) old: u32,
    pub(super) old_count: u32,
    pub(super) new: u32,
    pub(super) new_count: u32,
}

impl Hunk {
    /// True when the hunk changes something inside the new-side lines `lo..=hi`: an edited or
    /// inserted line among them, or lines removed from between two of them (a deletion just
    /// before or after the span does not touch it).
    pub(super) fn touches(&self, lo: u32, hi: u32) -> bool {
        if self.new_count > 0 {
            self.new <= hi && lo < self.new.saturating_add(self.new_count)
        } else {
            lo <= self.new && self.new < hi
        }
    }
}

/// True when a hunk touches the new-side lines `lo..=hi` ([`Hunk::touches`]).
pub(super) fn touched(hunks: &[Hunk], lo: u32, hi: u32) -> bool {
    hunks.iter().any(|h| h.touches(lo, hi))
}

/// Where an unchanged line of the base is now: `None` when a hunk changed or removed it.
pub(super) fn new_line_of(hunks: &[Hunk], old_line: u32) -> Option<u32> {
    let mut delta: i64 = 0;
    for h in hunks {
        let before = if h.old_count > 0 {
            let end = h.old.saturating_add(h.old_count);
            if h.old <= old_line && old_line < end {
                return None;
            }
            end <= old_line
        } else {
            h.old < old_line
        };
        if before {
            delta += i64::from(h.new_count) - i64::from(h.old_count);
        }
    }
    u32::try_from(i64::from(old_line) + delta).ok()
}

/// Parses `git diff -U0` output (with the `a/` and `b/` prefixes). The `@@` counts say how many
/// removed and added lines follow a hunk header, so a line of the file that reads like a header
/// (a removed `-- comment` is `--- comment` in the diff) stays a line of the file.
pub(super) fn parse_diff(text: &str) -> Vec<DiffFile> {
    let mut files: Vec<DiffFile> = Vec::new();
    // Removed and added lines still to come in the current hunk.
    let (mut old_left, mut new_left) = (0u32, 0u32);
    for line in text.lines() {
        if old_left > 0 || new_left > 0 {
            let counted = match line.as_bytes().first() {
                Some(b'-') => {
                    old_left = old_left.saturating_sub(1);
                    true
                }
                Some(b'+') => {
                    new_left = new_left.saturating_sub(1);
                    true
                }
                Some(b' ') => {
                    old_left = old_left.saturating_sub(1);
                    new_left = new_left.saturating_sub(1);
                    true
                }
                // `\ No newline at end of file` counts as neither.
                Some(b'\\') => true,
                _ => false,
            };
            if counted {
                continue;
            }
            // Not a hunk line: the counts were wrong (or the output cut); read it as a header.
            (old_left, new_left) = (0, 0);
        }
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let mut f = DiffFile::default();
            // `a/x b/x`: good enough for the fallback when no ---/+++ lines follow (renames,
            // mode changes); the ---/+++ and rename lines override it.
            if let Some((a, b)) = header_paths(rest) {
                f.old_path = Some(a.strip_prefix("a/").map_or(a.clone(), str::to_string));
                f.new_path = Some(b.strip_prefix("b/").map_or(b.clone(), str::to_string));
            }
            files.push(f);
            continue;
        }
        let Some(f) = files.last_mut() else { continue };
        if let Some(p) = line.strip_prefix("--- ") {
            f.old_path = side_path(p, "a/");
        } else if let Some(p) = line.strip_prefix("+++ ") {
            f.new_path = side_path(p, "b/");
        } else if let Some(p) = line.strip_prefix("rename from ") {
            f.old_path = Some(unquote(p).0);
        } else if let Some(p) = line.strip_prefix("rename to ") {
            f.new_path = Some(unquote(p).0);
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
                // Past the sign (`-` or `+`); a character boundary whatever the line holds.
                let s = s.get(1..).unwrap_or("");
                let (start, count) = match s.split_once(',') {
                    Some((a, b)) => (a.parse().unwrap_or(0), b.parse().unwrap_or(1)),
                    None => (s.parse().unwrap_or(0), 1),
                };
                (start, count)
            };
            let (os, oc) = span(old);
            let (ns, nc) = span(new);
            (old_left, new_left) = (oc, nc);
            f.hunks.push(Hunk {
                old: os,
                old_count: oc,
                new: ns,
                new_count: nc,
            });
        }
    }
    for f in &mut files {
        (f.old_ranges, f.new_ranges) = ranges_of(&f.hunks);
    }
    files
}

/// Inclusive line ranges.
pub(super) type Ranges = Vec<(u32, u32)>;

/// The old-side and new-side line ranges of the hunks.
pub(super) fn ranges_of(hunks: &[Hunk]) -> (Ranges, Ranges) {
    let (mut old, mut new) = (Vec::new(), Vec::new());
    for h in hunks {
        if h.old_count > 0 {
            old.push((h.old, h.old.saturating_add(h.old_count - 1)));
        }
        if h.new_count > 0 {
            new.push((h.new, h.new.saturating_add(h.new_count - 1)));
        } else {
            // A pure deletion: the lines around the gap changed (unless what went was a
            // whole declaration: see `declarations`).
            new.push((h.new.max(1), h.new.saturating_add(1)));
        }
    }
    (old, new)
}

/// True when `bytes[i]` is a lone carriage return (an old Mac line end, not one of `\r\n`).
fn lone_cr_at(bytes: &[u8], i: usize) -> bool {
    bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n')
}

/// The text with its lone carriage returns as line feeds, when it has any: the index reads a
/// lone CR as a line break (see `lex::normalize_breaks`), so line numbers of facts count them,
/// and so must every text and hunk they are compared with. Git counts lines by line feeds
/// only: see [`mostly_lone_cr`] and [`remap_hunks`] for its hunks.
pub(super) fn lone_cr_to_lf(bytes: &[u8]) -> Option<Vec<u8>> {
    if !(0..bytes.len()).any(|i| lone_cr_at(bytes, i)) {
        return None;
    }
    Some(
        (0..bytes.len())
            .map(|i| {
                if lone_cr_at(bytes, i) {
                    b'\n'
                } else {
                    bytes[i]
                }
            })
            .collect(),
    )
}

/// True when lone CRs are the text's line ends (more of them than LFs): git then sees the
/// file as a line or a few, and its hunks say nothing about the lines ([`line_hunks`] makes
/// them again). A stray CR in a string of an LF file is not one: git's hunks are kept, their
/// line numbers moved past it ([`remap_hunks`]).
pub(super) fn mostly_lone_cr(bytes: &[u8]) -> bool {
    let crs = (0..bytes.len()).filter(|&i| lone_cr_at(bytes, i)).count();
    crs > bytes.iter().filter(|&&c| c == b'\n').count()
}

/// Git's line `k` (counted by LFs) of `bytes` as the index counts lines (a lone CR is a break
/// too): the lone CRs before the start of each LF line, and in all.
struct LineMap {
    before: Vec<u32>,
    total: u32,
}

impl LineMap {
    fn of(bytes: &[u8]) -> LineMap {
        let (mut before, mut n) = (vec![0u32], 0u32);
        for (i, &b) in bytes.iter().enumerate() {
            if lone_cr_at(bytes, i) {
                n = n.saturating_add(1);
            } else if b == b'\n' {
                before.push(n);
            }
        }
        LineMap { before, total: n }
    }

    /// The first line, as the index counts, of git's line `k` (1-based; past the end, where
    /// it would start).
    fn start(&self, k: u32) -> u32 {
        let crs = self.before.get(k.saturating_sub(1) as usize).copied();
        k.saturating_add(crs.unwrap_or(self.total))
    }

    /// The span `(start, count)` of git's `count` lines from `start` (a count of 0: the line
    /// after which, as git writes it).
    fn span(&self, start: u32, count: u32) -> (u32, u32) {
        if count == 0 {
            let after = if start == 0 {
                0
            } else {
                self.start(start.saturating_add(1)) - 1
            };
            return (after, 0);
        }
        let s = self.start(start);
        (s, self.start(start.saturating_add(count)) - s)
    }
}

/// Git's hunks of a file with a few lone CRs, in the index's line numbers (a lone CR a break):
/// each side moved by the lone CRs before it in that side's text, and stretched over those
/// inside it. A side without a text keeps git's numbers.
pub(super) fn remap_hunks(hunks: &[Hunk], old: Option<&[u8]>, new: Option<&[u8]>) -> Vec<Hunk> {
    let (old, new) = (old.map(LineMap::of), new.map(LineMap::of));
    hunks
        .iter()
        .map(|h| {
            let (o, oc) = old
                .as_ref()
                .map_or((h.old, h.old_count), |m| m.span(h.old, h.old_count));
            let (n, nc) = new
                .as_ref()
                .map_or((h.new, h.new_count), |m| m.span(h.new, h.new_count));
            Hunk {
                old: o,
                old_count: oc,
                new: n,
                new_count: nc,
            }
        })
        .collect()
}

/// The hunks turning `old` into `new`, line by line (lines compared without a CR at their end):
/// the lines between the common head and the common tail, as one hunk (or none when the texts
/// read the same). Coarser than git's, never wrong: for files git cannot count lines of.
pub(super) fn line_hunks(old: &str, new: &str) -> Vec<Hunk> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (oc, nc) = (a.len() - head - tail, b.len() - head - tail);
    if oc == 0 && nc == 0 {
        return Vec::new();
    }
    // As git writes a count of 0: the start is the line before the gap.
    let start = |count: usize| (if count == 0 { head } else { head + 1 }) as u32;
    vec![Hunk {
        old: start(oc),
        old_count: oc as u32,
        new: start(nc),
        new_count: nc as u32,
    }]
}

/// The path of a `---` or `+++` line without its prefix; `None` for `/dev/null`. Git ends the
/// name with a tab when it holds a space, and quotes it when it holds a tab, a newline, a quote,
/// a backslash (or, with `core.quotePath`, a non-ASCII byte).
fn side_path(p: &str, prefix: &str) -> Option<String> {
    let p = if p.starts_with('"') {
        unquote(p).0
    } else {
        p.trim_end_matches('\t').to_string()
    };
    if p == "/dev/null" {
        None
    } else {
        Some(p.strip_prefix(prefix).map_or(p.clone(), str::to_string))
    }
}

/// The two paths of a `diff --git` header (`a/x b/x`, either or both quoted), prefixes kept.
/// Unquoted names holding ` b/` are ambiguous: the split is at the middle when both names are
/// the same (no rename), else at the first ` b/`.
fn header_paths(rest: &str) -> Option<(String, String)> {
    if rest.starts_with('"') {
        let (a, used) = unquote(rest);
        let b = rest[used..].trim_start_matches(' ');
        let b = if b.starts_with('"') {
            unquote(b).0
        } else {
            b.to_string()
        };
        return Some((a, b));
    }
    if let Some(i) = rest.find(" \"b/") {
        return Some((rest[..i].to_string(), unquote(&rest[i + 1..]).0));
    }
    // Same name on both sides: `a/<p> b/<p>`.
    let n = rest.len();
    if n % 2 == 1 {
        let (a, b) = (&rest[..n / 2], &rest[n / 2 + 1..]);
        if rest.as_bytes()[n / 2] == b' '
            && a.strip_prefix("a/")
                .is_some_and(|x| b.strip_prefix("b/") == Some(x))
        {
            return Some((a.to_string(), b.to_string()));
        }
    }
    rest.split_once(" b/")
        .map(|(a, b)| (a.to_string(), format!("b/{b}")))
}

/// A name as git writes it: C-style quoted (`"a/sp ace/\303\251.proto"`: `\t`, `\n`, `\"`,
/// `\\`, … and `\ooo` octal bytes, read as UTF-8) or bare. Returns the name and the bytes of `s`
/// it took (the closing quote included).
fn unquote(s: &str) -> (String, usize) {
    let Some(body) = s.strip_prefix('"') else {
        return (s.to_string(), s.len());
    };
    let b = body.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => return (String::from_utf8_lossy(&out).into_owned(), i + 2),
            b'\\' if i + 1 < b.len() => {
                let c = b[i + 1];
                i += 2;
                match c {
                    b'0'..=b'7' => {
                        let mut v: u32 = u32::from(c - b'0');
                        let mut k = 0;
                        while k < 2 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                            v = v * 8 + u32::from(b[i] - b'0');
                            i += 1;
                            k += 1;
                        }
                        out.push((v & 0xff) as u8);
                    }
                    b'a' => out.push(7),
                    b'b' => out.push(8),
                    b't' => out.push(b'\t'),
                    b'n' => out.push(b'\n'),
                    b'v' => out.push(11),
                    b'f' => out.push(12),
                    b'r' => out.push(b'\r'),
                    other => out.push(other),
                }
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    // No closing quote: take it as it is.
    (s.to_string(), s.len())
}

/// The repositories holding the workspace's roots (by top-level directory).
pub(super) fn repositories(snap: &Snapshot, workspace: &Path) -> Result<Vec<PathBuf>, String> {
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

/// The base of one repository, as [`choose_base`] found it.
pub(super) enum RepoBase {
    /// The label of the base and its commit.
    Found(String, String),
    /// The repository has no commits yet.
    NoCommits,
    /// The revision asked for is not in this repository: the error to give when no repository
    /// of the workspace has it.
    Missing(String),
}

/// Chooses the commit to diff against in one repository.
pub(super) fn choose_base(git: &Git, base: &BaseArg, repo: &str) -> Result<RepoBase, String> {
    let problem = |e: GitError| format!("Cannot read the changes of {repo}: {e}.");
    let found = |b: Option<(String, String)>| match b {
        Some((label, commit)) => RepoBase::Found(label, commit),
        None => RepoBase::NoCommits,
    };
    match base {
        BaseArg::Revision(rev) => match git.commit_of(rev).map_err(problem)? {
            Some(c) => Ok(RepoBase::Found(inline_code(rev), c)),
            None => Ok(RepoBase::Missing(format!(
                "Unknown base {}: no commit by that name in the repository {repo}. Pass a branch, tag or commit that exists there (see `git branch -a`), e.g. {{\"base\": \"origin/main\"}}, \"working tree\", or omit `base`.",
                inline_code(rev)
            ))),
        },
        BaseArg::WorkingTree => Ok(found(git.commit_of("HEAD").map_err(problem)?.map(|c| {
            (
                "`HEAD` (uncommitted changes of the working tree)".to_string(),
                c,
            )
        }))),
        BaseArg::Default => Ok(found(
            super::super::analyze_grpc::implicit_base(git)
                .map_err(problem)?
                .map(|b| (b.label, b.commit)),
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// The analysis
// ---------------------------------------------------------------------------------------------

pub(super) fn overlaps(ranges: &[(u32, u32)], lo: u32, hi: u32) -> bool {
    ranges.iter().any(|&(a, b)| a <= hi && lo <= b)
}

pub(super) fn classify_path(path: &str) -> FileClass {
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

/// The files changed in the repository at `top` since `commit`: `git diff -U0` against the
/// working tree, plus the untracked files (each one range over the whole file).
pub(super) fn read_diff(
    git: &Git,
    top: &Path,
    commit: &str,
    repo_label: &str,
) -> Result<Vec<DiffFile>, String> {
    let diff = git
        .run_ok(&[
            "-c",
            "core.quotePath=false",
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "-U0",
            // The prefixes parse_diff reads, whatever `diff.noprefix` or `diff.mnemonicPrefix`
            // the repository's config sets.
            "--src-prefix=a/",
            "--dst-prefix=b/",
            // A file converted to CRLF (or back) changes no behaviour.
            "--ignore-cr-at-eol",
            "-M",
            commit,
            "--",
        ])
        .map_err(|e| format!("Cannot read the changes of {repo_label}: {e}."))?;
    let mut diffs = parse_diff(&String::from_utf8_lossy(&diff.stdout));
    if let Ok(out) = git.run_ok(&["ls-files", "--others", "--exclude-standard", "-z"]) {
        for p in out.stdout.split(|&b| b == 0).filter(|p| !p.is_empty()) {
            let p = String::from_utf8_lossy(p).into_owned();
            let lines = std::fs::read(top.join(&p))
                .map(|b| {
                    let b = lone_cr_to_lf(&b).unwrap_or(b);
                    b.iter().filter(|&&c| c == b'\n').count() as u32 + 1
                })
                .unwrap_or(1);
            let hunks = vec![Hunk {
                old: 0,
                old_count: 0,
                new: 1,
                new_count: lines,
            }];
            diffs.push(DiffFile {
                old_path: None,
                new_path: Some(p),
                new_ranges: ranges_of(&hunks).1,
                old_ranges: Vec::new(),
                hunks,
                untracked: true,
                cr_aware: true,
            });
        }
    }
    Ok(diffs)
}

/// The most deleted × untracked file pairs [`pair_moves`] compares (each pair one pass over
/// both texts): past it, moves are left as git reports them.
const MAX_MOVE_PAIRS: usize = 4096;

/// Files moved without `git add`: git compares the base with the working tree for tracked
/// paths only, so `mv a.proto b.proto` is a deleted `a.proto` and an untracked `b.proto`. A
/// deleted source file and an untracked one of the same language whose lines are mostly the
/// same (at least half of the longer one's, git's default rename threshold) are one renamed
/// file, its hunks made from both texts ([`line_hunks`]).
pub(super) fn pair_moves(
    diffs: &mut Vec<DiffFile>,
    base_texts: &[(String, Option<Vec<u8>>)],
    top: &Path,
) {
    let deleted: Vec<usize> = (0..diffs.len())
        .filter(|&i| diffs[i].new_path.is_none() && diffs[i].old_path.is_some())
        .collect();
    let added: Vec<usize> = (0..diffs.len()).filter(|&i| diffs[i].untracked).collect();
    if deleted.is_empty()
        || added.is_empty()
        || deleted.len().saturating_mul(added.len()) > MAX_MOVE_PAIRS
    {
        return;
    }
    let text_of = |b: Vec<u8>| {
        let b = lone_cr_to_lf(&b).unwrap_or(b);
        String::from_utf8_lossy(&b).into_owned()
    };
    let old_texts: Vec<Option<String>> = deleted
        .iter()
        .map(|&i| {
            let old = diffs[i].old_path.as_deref()?;
            let (_, bytes) = base_texts.iter().find(|(p, _)| p == old)?;
            Some(text_of(bytes.clone()?))
        })
        .collect();
    let mut taken = vec![false; deleted.len()];
    let mut gone: Vec<usize> = Vec::new();
    for &a in &added {
        let Some(new) = diffs[a].new_path.clone() else {
            continue;
        };
        let Some(lang) = Language::of_path(&new) else {
            continue;
        };
        let candidates: Vec<usize> = (0..deleted.len())
            .filter(|&k| {
                !taken[k]
                    && old_texts[k].is_some()
                    && diffs[deleted[k]]
                        .old_path
                        .as_deref()
                        .and_then(Language::of_path)
                        == Some(lang)
            })
            .collect();
        if candidates.is_empty() {
            continue;
        }
        // A regular file only: a symlink may point out of the workspace.
        let path = top.join(&new);
        let Some(current) = std::fs::symlink_metadata(&path)
            .ok()
            .filter(|m| m.is_file() && m.len() <= 4 << 20)
            .and_then(|_| std::fs::read(&path).ok())
            .map(text_of)
        else {
            continue;
        };
        let best = candidates
            .into_iter()
            .filter_map(|k| {
                let score = similarity(old_texts[k].as_deref()?, &current)?;
                (score >= 0.5).then_some((score, k))
            })
            .max_by(|x, y| x.0.total_cmp(&y.0).then(y.1.cmp(&x.1)));
        let Some((_, k)) = best else { continue };
        taken[k] = true;
        let old_text = old_texts[k].as_deref().unwrap_or_default();
        let d = &mut diffs[deleted[k]];
        d.new_path = Some(new);
        d.hunks = line_hunks(old_text, &current);
        d.cr_aware = true;
        (d.old_ranges, d.new_ranges) = ranges_of(&d.hunks);
        gone.push(a);
    }
    gone.sort_unstable();
    for a in gone.into_iter().rev() {
        diffs.remove(a);
    }
}

/// The share of the longer text's lines (read without a CR at their end) that the other text
/// holds too, from 0 to 1; `None` when both are empty (git pairs no empty files either).
fn similarity(a: &str, b: &str) -> Option<f64> {
    let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut a_lines = 0usize;
    for l in a.lines() {
        *counts.entry(l).or_default() += 1;
        a_lines += 1;
    }
    let (mut b_lines, mut common) = (0usize, 0usize);
    for l in b.lines() {
        b_lines += 1;
        if let Some(c) = counts.get_mut(l).filter(|c| **c > 0) {
            *c -= 1;
            common += 1;
        }
    }
    let longer = a_lines.max(b_lines);
    (longer > 0).then(|| common as f64 / longer as f64)
}

/// The base versions (at `commit`) of the changed source files, read from git in one batch;
/// `None` for a file git could not give.
pub(super) fn read_base_texts(
    git: &Git,
    commit: &str,
    diffs: &[DiffFile],
) -> Vec<(String, Option<Vec<u8>>)> {
    // The base versions of the changed source files, read from git in one batch.
    let old_sources: Vec<&str> = diffs
        .iter()
        .filter_map(|d| d.old_path.as_deref())
        .filter(|o| Language::of_path(o).is_some())
        .collect();
    old_sources
        .iter()
        .map(|p| p.to_string())
        .zip(
            git.files_at(commit, &old_sources, 4 << 20)
                .unwrap_or_else(|_| vec![None; old_sources.len()]),
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The (old, new) paths of every file of a parsed diff.
    fn paths(d: &[DiffFile]) -> Vec<(Option<&str>, Option<&str>)> {
        d.iter()
            .map(|f| (f.old_path.as_deref(), f.new_path.as_deref()))
            .collect()
    }

    #[test]
    fn diff_hunks_become_ranges() {
        let text = "diff --git a/x.go b/x.go\nindex 1..2 100644\n--- a/x.go\n+++ b/x.go\n@@ -3,2 +3,4 @@ func a\n-x\n+y\n@@ -10 +12,0 @@\n-z\ndiff --git a/old.proto b/new.proto\nsimilarity index 90%\nrename from old.proto\nrename to new.proto\ndiff --git a/gone.ts b/gone.ts\ndeleted file mode 100644\n--- a/gone.ts\n+++ /dev/null\n@@ -1,3 +0,0 @@\n";
        let d = parse_diff(text);
        assert_eq!(
            paths(&d),
            [
                (Some("x.go"), Some("x.go")),
                (Some("old.proto"), Some("new.proto")),
                (Some("gone.ts"), None),
            ]
        );
        assert_eq!(d[0].new_ranges, vec![(3, 6), (12, 13)]);
        assert_eq!(d[0].old_ranges, vec![(3, 4), (10, 10)]);
        assert_eq!(d[2].old_ranges, vec![(1, 3)]);
        // The hunks: line 3 of the base and the one after it became four, line 10 went.
        let h = &d[0].hunks;
        assert_eq!(new_line_of(h, 2), Some(2));
        assert_eq!(new_line_of(h, 3), None);
        assert_eq!(new_line_of(h, 5), Some(7));
        assert_eq!(new_line_of(h, 10), None);
        assert_eq!(new_line_of(h, 11), Some(12));
        // A deletion after line 12 (now) touches a span around it, not one ending on 12.
        assert!(touched(h, 12, 13));
        assert!(!touched(h, 8, 12));
        assert!(!touched(h, 13, 20));
        assert!(touched(h, 6, 6));
        assert!(!touched(h, 7, 7));
    }

    #[test]
    fn lines_that_read_like_headers_inside_a_hunk_are_lines() {
        // A removed `-- note` and an added `++ x` are `--- note` and `+++ x` in the diff; the
        // counts of the `@@` line say they belong to the hunk.
        let text = "diff --git a/q.proto b/q.proto\nindex 1..2 100644\n--- a/q.proto\n+++ b/q.proto\n@@ -2,3 +2,2 @@ message A {\n--- note\n-  int32 b = 2;\n---- x\n+++ y\n+  int32 c = 3;\n@@ -9,0 +9 @@\n++++ b/other\n\\ No newline at end of file\ndiff --git a/z.sql b/z.sql\n--- a/z.sql\n+++ b/z.sql\n@@ -1 +1 @@\n--- old\n+++ new\n";
        let d = parse_diff(text);
        assert_eq!(
            paths(&d),
            [
                (Some("q.proto"), Some("q.proto")),
                (Some("z.sql"), Some("z.sql"))
            ],
            "{d:?}"
        );
        assert_eq!(d[0].hunks.len(), 2);
        assert_eq!(d[0].old_ranges, vec![(2, 4)]);
        assert_eq!(d[0].new_ranges, vec![(2, 3), (9, 9)]);
        assert_eq!(d[1].old_ranges, vec![(1, 1)]);
    }

    #[test]
    fn quoted_names_are_unquoted() {
        let text = "diff --git \"a/sp ace/\\303\\251.proto\" \"b/sp ace/\\303\\251.proto\"\nindex 1..2 100644\n--- \"a/sp ace/\\303\\251.proto\"\n+++ \"b/sp ace/\\303\\251.proto\"\n@@ -1 +1 @@\n-a\n+b\ndiff --git \"a/t\\tab\" \"b/q\\\"uo\\\\te\"\nsimilarity index 100%\nrename from \"t\\tab\"\nrename to \"q\\\"uo\\\\te\"\ndiff --git a/with space.go b/with space.go\n--- a/with space.go\t\n+++ b/with space.go\t\n@@ -3 +3 @@\n-x\n+y\ndiff --git a/x b/y.txt b/x b/y.txt\nold mode 100644\nnew mode 100755\n";
        let d = parse_diff(text);
        assert_eq!(
            paths(&d),
            [
                (Some("sp ace/\u{e9}.proto"), Some("sp ace/\u{e9}.proto")),
                (Some("t\tab"), Some("q\"uo\\te")),
                (Some("with space.go"), Some("with space.go")),
                // A mode change only (no ---/+++): the header's two equal halves.
                (Some("x b/y.txt"), Some("x b/y.txt")),
            ],
            "{d:?}"
        );
        assert_eq!(unquote("\"a\\nb\\001\"").0, "a\nb\u{1}");
    }

    #[test]
    fn lone_crs_and_line_hunks() {
        assert_eq!(lone_cr_to_lf(b"a\r\nb\n"), None);
        assert_eq!(lone_cr_to_lf(b"a\rb\r\nc\r").unwrap(), b"a\nb\r\nc\n");
        assert!(mostly_lone_cr(b"a\rb\r\nc\r"));
        // A stray CR in a file of LF lines is no line end git counts.
        assert!(!mostly_lone_cr(b"s = \"\r\"\nt\n"));
        assert_eq!(line_hunks("a\nb\nc\n", "a\r\nb\r\nc\r\n"), vec![]);
        let h = line_hunks("a\nb\nc\n", "a\nx\ny\nc\n");
        assert_eq!(
            h,
            vec![Hunk {
                old: 2,
                old_count: 1,
                new: 2,
                new_count: 2
            }]
        );
        // A pure deletion and a pure insertion, started as git starts them.
        let h = line_hunks("a\nb\nc\n", "a\nc\n");
        assert_eq!(
            (h[0].old, h[0].old_count, h[0].new, h[0].new_count),
            (2, 1, 1, 0)
        );
        let h = line_hunks("a\nc\n", "a\nb\nc\n");
        assert_eq!(
            (h[0].old, h[0].old_count, h[0].new, h[0].new_count),
            (1, 0, 2, 1)
        );
        let h = line_hunks("", "a\nb\n");
        assert_eq!(
            (h[0].old, h[0].old_count, h[0].new, h[0].new_count),
            (0, 0, 1, 2)
        );
    }

    #[test]
    fn malformed_hunk_headers_are_read_without_panicking() {
        let text = "diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ \u{e9} +\u{fc} @@\n@@ -4294967295,4294967295 +4294967295,4294967295 @@\n@@\n@@ -\n@@ - + @@\n@@ -1,x +y, @@\n";
        let d = parse_diff(text);
        assert_eq!(d.len(), 1);
        for cut in 0..text.len() {
            if text.is_char_boundary(cut) {
                for f in parse_diff(&text[..cut]) {
                    let _ = (
                        touched(&f.hunks, 1, u32::MAX),
                        new_line_of(&f.hunks, u32::MAX),
                    );
                }
            }
        }
        assert!(touched(&d[0].hunks, u32::MAX - 1, u32::MAX));
    }

    #[test]
    fn git_hunks_move_past_stray_lone_crs() {
        let h = |old, old_count, new, new_count| Hunk {
            old,
            old_count,
            new,
            new_count,
        };
        // Line 1 holds a lone CR: git's lines 2.. are the index's 3..; git's line 1 is two.
        let old = b"# a\rb\nx\ny\nz\n";
        let new = b"# a\rb\nx\nY\nz\n";
        let r = remap_hunks(&[h(3, 1, 3, 1)], Some(old), Some(new));
        assert_eq!(r, vec![h(4, 1, 4, 1)]);
        let r = remap_hunks(&[h(1, 1, 1, 1)], Some(old), Some(new));
        assert_eq!(r, vec![h(1, 2, 1, 2)]);
        // A pure insertion after git's line 1 is after the index's line 2; after line 0 stays.
        let r = remap_hunks(&[h(1, 0, 2, 1), h(0, 0, 1, 1)], Some(old), None);
        assert_eq!(r, vec![h(2, 0, 2, 1), h(0, 0, 1, 1)]);
        // Past the end (a count reaching the last line) stays in bounds.
        let r = remap_hunks(&[h(4, 1, 4, 1)], Some(old), Some(b"x"));
        assert_eq!(r, vec![h(5, 1, 4, 1)]);
        // Lines without a lone CR before them are as git counts them.
        assert_eq!(
            remap_hunks(&[h(2, 1, 2, 1)], Some(b"a\nb\n\r"), Some(b"a\nc\n")),
            vec![h(2, 1, 2, 1)]
        );
    }

    #[test]
    fn similarity_counts_shared_lines_of_the_longer_text() {
        assert_eq!(similarity("", ""), None);
        assert_eq!(similarity("a\nb\n", "a\r\nb\r\n"), Some(1.0));
        assert_eq!(similarity("a\nb\nc\nd\n", "a\nb\n"), Some(0.5));
        // A line repeated once is matched once.
        assert_eq!(similarity("x\ny\n", "x\nx\n"), Some(0.5));
        assert_eq!(similarity("a\n", "b\n"), Some(0.0));
    }

    #[test]
    fn an_insertion_moves_the_lines_after_it() {
        let h = [Hunk {
            old: 4,
            old_count: 0,
            new: 5,
            new_count: 2,
        }];
        assert_eq!(new_line_of(&h, 4), Some(4));
        assert_eq!(new_line_of(&h, 5), Some(7));
        assert!(touched(&h, 5, 6));
        assert!(!touched(&h, 1, 4));
    }
}
