//! A gitignore matcher with git's exact semantics.
//!
//! [`IgnoreFile`] is one parsed ignore file (a `.gitignore`, `.git/info/exclude` or the
//! caller's extra patterns); [`IgnoreStack`] layers them the way git does while a walker
//! descends a tree. Patterns are compiled once into a small token program with literal fast
//! paths (`name`, `*.ext`, `prefix*`), and matching never allocates.
//!
//! Semantics follow git's `dir.c` and `wildmatch.c` behaviour (learned from the documentation
//! and from `git check-ignore`, which the unit tests in `src/index/gitignore_oracle.rs` use
//! as the oracle):
//!
//! - lines are split on `\n` (a `\r` before it is dropped, a leading UTF-8 BOM is skipped);
//!   empty lines and lines starting with `#` are ignored; unescaped trailing spaces are
//!   stripped (`\ ` keeps one);
//! - a leading `!` negates; `\!` and `\#` are literal; a trailing `/` restricts the pattern to
//!   directories;
//! - a pattern without a `/` (ignoring the trailing one) matches the basename at any depth below
//!   the file's directory; any other pattern is anchored to that directory;
//! - `*` and `?` never match `/`; `[...]` classes support ranges, `!`/`^` negation, escapes and
//!   `[:alpha:]`-style names, and a malformed class makes the pattern match nothing;
//! - `**` is special only when it is delimited by `/` (or the start/end of the pattern): `**/x`,
//!   `x/**`, `a/**/b`. Any other run of asterisks is a plain `*`;
//! - the last matching pattern wins; deeper files beat shallower ones, which beat
//!   `info/exclude`; nothing below an excluded directory can be re-included.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

/// The verdict of an ignore file (or a whole stack) for one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    /// No pattern matched; the decision falls through to the next (shallower) layer.
    None,
    /// The last matching pattern excludes the path.
    Ignore,
    /// The last matching pattern is a negation (`!pattern`) that re-includes the path.
    Whitelist,
}

/// One parsed ignore file: its patterns in file order and the directory they are relative to.
///
/// `base` and the paths passed to [`IgnoreFile::matched`] must be relative to the same
/// directory (the walk root in the simple case), `/`-separated, without leading or trailing
/// slashes.
#[derive(Clone, Default)]
pub struct IgnoreFile {
    base: String,
    patterns: Vec<Pattern>,
}

#[derive(Clone)]
struct Pattern {
    /// The line as written (after trailing-space trimming), kept for diagnostics.
    source: Box<str>,
    negated: bool,
    dir_only: bool,
    /// No `/` in the pattern: match against the basename at any depth.
    basename_only: bool,
    matcher: Matcher,
}

#[derive(Clone, Debug)]
enum Matcher {
    /// A malformed pattern (unterminated class, trailing backslash): matches nothing, as in git.
    Never,
    /// The whole subject equals the literal.
    Exact(Box<[u8]>),
    /// `*lit`: the subject ends with the literal and the rest holds no `/`.
    Suffix(Box<[u8]>),
    /// `lit*`: the subject starts with the literal and the rest holds no `/`.
    Prefix(Box<[u8]>),
    /// Anything else: a token program run by a small backtracking matcher.
    Glob(Box<[Tok]>),
}

#[derive(Clone, Debug)]
enum Tok {
    /// A run of literal bytes.
    Lit(Box<[u8]>),
    /// `?`: any one byte except `/`.
    Any,
    /// `[...]`: one byte from the set (never `/`).
    Class(Box<ByteSet>),
    /// `*` (or an undelimited run of asterisks): any bytes except `/`.
    Star,
    /// A delimited `**` not followed by `/`: any bytes at all.
    GlobStar,
    /// A delimited `**/`: nothing, or anything ending in `/` (zero or more directories).
    GlobStarSlash,
}

#[derive(Clone, Debug, Default)]
struct ByteSet([u64; 4]);

impl ByteSet {
    fn insert(&mut self, b: u8) {
        self.0[usize::from(b >> 6)] |= 1 << (b & 63);
    }
    fn insert_range(&mut self, lo: u8, hi: u8) {
        for b in lo..=hi {
            self.insert(b);
        }
    }
    fn contains(&self, b: u8) -> bool {
        self.0[usize::from(b >> 6)] & (1 << (b & 63)) != 0
    }
    fn invert(&mut self) {
        for w in &mut self.0 {
            *w = !*w;
        }
    }
    fn remove(&mut self, b: u8) {
        self.0[usize::from(b >> 6)] &= !(1 << (b & 63));
    }
}

/// True when `path` (workspace-relative, `/`-separated) matches the gitignore-style `pattern`
/// as a file: `*.md` matches any Markdown file, `docs/**/*.md` those under `docs/`,
/// `src/*.go` the Go files directly in `src/`. Used for the config's docs paths and custom
/// pattern file filters, so every path glob in the configuration has git's meaning.
pub fn path_glob(pattern: &str, path: &str) -> bool {
    let file = IgnoreFile::parse("", pattern);
    if file.matched(path, false) == Match::Ignore {
        return true;
    }
    // A pattern naming a directory covers what is below it (`docs/`, `docs/adr`).
    let mut dir = path;
    while let Some((parent, _)) = dir.rsplit_once('/') {
        if file.matched(parent, true) == Match::Ignore {
            return true;
        }
        dir = parent;
    }
    false
}

impl IgnoreFile {
    /// Parses the text of an ignore file living in directory `base` (relative to the walk root,
    /// `/`-separated, `""` for the root). Never fails: malformed lines match nothing, as in git.
    pub fn parse(base: &str, text: &str) -> IgnoreFile {
        let mut file = IgnoreFile::empty(base);
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        for line in text.split('\n') {
            file.push_line(line);
        }
        file
    }

    /// An ignore file without patterns for directory `base`; fill it with
    /// [`IgnoreFile::push_line`].
    pub fn empty(base: &str) -> IgnoreFile {
        IgnoreFile {
            base: base.trim_matches('/').to_owned(),
            patterns: Vec::new(),
        }
    }

    /// Appends one line of gitignore syntax (a pattern, a comment or a blank line), as if it
    /// were the next line of the file. Used for configured patterns that are not in a file.
    pub fn push_line(&mut self, line: &str) {
        if line.is_empty() || line.starts_with('#') {
            return;
        }
        let line = line.strip_suffix('\r').unwrap_or(line);
        let line = trim_trailing_spaces(line);
        if let Some(pattern) = Pattern::compile(line) {
            self.patterns.push(pattern);
        }
    }

    #[cfg(test)]
    /// Number of patterns (comments and blank lines excluded).
    pub fn len(&self) -> usize {
        self.patterns.len()
    }

    /// The verdict of this file alone for `rel_path` (relative to the same directory as
    /// `base`): the last matching pattern wins. Paths outside `base` never match. Parent
    /// directories are not consulted; [`IgnoreStack`] and the crawler handle that rule.
    pub fn matched(&self, rel_path: &str, is_dir: bool) -> Match {
        let basename = basename(rel_path);
        self.matched_parts(rel_path, basename, is_dir)
    }

    fn matched_parts(&self, path: &str, basename: &str, is_dir: bool) -> Match {
        if self.patterns.is_empty() {
            return Match::None;
        }
        let name = if self.base.is_empty() {
            path
        } else {
            match path
                .strip_prefix(self.base.as_str())
                .and_then(|rest| rest.strip_prefix('/'))
            {
                Some(rest) => rest,
                None => return Match::None,
            }
        };
        if name.is_empty() {
            return Match::None;
        }
        for pattern in self.patterns.iter().rev() {
            if pattern.dir_only && !is_dir {
                continue;
            }
            let subject = if pattern.basename_only {
                basename
            } else {
                name
            };
            if pattern.matcher.matches(subject.as_bytes()) {
                return if pattern.negated {
                    Match::Whitelist
                } else {
                    Match::Ignore
                };
            }
        }
        Match::None
    }
}

impl fmt::Debug for IgnoreFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<&str> = self.patterns.iter().map(|p| &*p.source).collect();
        f.debug_struct("IgnoreFile")
            .field("base", &self.base)
            .field("patterns", &lines)
            .finish()
    }
}

fn basename(path: &str) -> &str {
    match path.rfind('/') {
        Some(i) => &path[i + 1..],
        None => path,
    }
}

/// Strips unescaped trailing spaces; a backslash escapes the next byte (so `\ ` survives).
fn trim_trailing_spaces(s: &str) -> &str {
    let b = s.as_bytes();
    let mut last_space = None;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b' ' => {
                if last_space.is_none() {
                    last_space = Some(i);
                }
            }
            b'\\' => {
                i += 1;
                if i >= b.len() {
                    return s;
                }
                last_space = None;
            }
            _ => last_space = None,
        }
        i += 1;
    }
    match last_space {
        Some(end) => &s[..end],
        None => s,
    }
}

fn is_glob_special(b: u8) -> bool {
    matches!(b, b'*' | b'?' | b'[' | b'\\')
}

impl Pattern {
    fn compile(line: &str) -> Option<Pattern> {
        let mut p = line.as_bytes();
        let negated = p.first() == Some(&b'!');
        if negated {
            p = &p[1..];
        }
        let dir_only = p.last() == Some(&b'/');
        if dir_only {
            p = &p[..p.len() - 1];
        }
        if p.is_empty() {
            // "", "!", "/" and "!/" match nothing; drop them.
            return None;
        }
        let basename_only = !p.contains(&b'/');
        let literal_len = p
            .iter()
            .position(|&b| is_glob_special(b))
            .unwrap_or(p.len());
        let matcher = if basename_only {
            compile_glob(p, 0)
        } else if p[0] == b'/' {
            // Anchored: the leading slash only marks the anchor. Git starts its glob engine
            // after the literal prefix, which is where an undelimited `**` still counts as
            // "at the start" (so `a**/b` behaves like `a` + `**/b`).
            compile_glob(&p[1..], literal_len - 1)
        } else {
            compile_glob(p, literal_len)
        };
        Some(Pattern {
            source: line.into(),
            negated,
            dir_only,
            basename_only,
            matcher,
        })
    }
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} => {:?}", self.source, self.matcher)
    }
}

/// Compiles one glob; `top` is the byte offset git's glob engine treats as the pattern start.
fn compile_glob(pat: &[u8], top: usize) -> Matcher {
    let mut toks: Vec<Tok> = Vec::new();
    let mut lit: Vec<u8> = Vec::new();
    let flush = |lit: &mut Vec<u8>, toks: &mut Vec<Tok>| {
        if !lit.is_empty() {
            toks.push(Tok::Lit(std::mem::take(lit).into_boxed_slice()));
        }
    };
    let mut i = 0;
    while i < pat.len() {
        match pat[i] {
            b'\\' => {
                let Some(&next) = pat.get(i + 1) else {
                    return Matcher::Never;
                };
                lit.push(next);
                i += 2;
            }
            b'?' => {
                flush(&mut lit, &mut toks);
                toks.push(Tok::Any);
                i += 1;
            }
            b'*' => {
                let mut j = i;
                while j < pat.len() && pat[j] == b'*' {
                    j += 1;
                }
                let delimited_before = i == top || (i > 0 && pat[i - 1] == b'/');
                let delimited_after = j == pat.len()
                    || pat[j] == b'/'
                    || (pat[j] == b'\\' && pat.get(j + 1) == Some(&b'/'));
                flush(&mut lit, &mut toks);
                if j - i >= 2 && delimited_before && delimited_after {
                    if j < pat.len() && pat[j] == b'/' {
                        toks.push(Tok::GlobStarSlash);
                        i = j + 1;
                    } else {
                        toks.push(Tok::GlobStar);
                        i = j;
                    }
                } else {
                    toks.push(Tok::Star);
                    i = j;
                }
            }
            b'[' => {
                let Some((set, next)) = parse_class(pat, i) else {
                    return Matcher::Never;
                };
                flush(&mut lit, &mut toks);
                toks.push(Tok::Class(Box::new(set)));
                i = next;
            }
            b => {
                lit.push(b);
                i += 1;
            }
        }
    }
    flush(&mut lit, &mut toks);
    match toks.as_slice() {
        [] => Matcher::Exact(Box::default()),
        [Tok::Lit(l)] => Matcher::Exact(l.clone()),
        [Tok::Star] => Matcher::Suffix(Box::default()),
        [Tok::Star, Tok::Lit(l)] => Matcher::Suffix(l.clone()),
        [Tok::Lit(l), Tok::Star] => Matcher::Prefix(l.clone()),
        _ => Matcher::Glob(toks.into_boxed_slice()),
    }
}

/// Parses a bracket expression starting at `pat[open] == b'['`; returns the set and the index
/// just past the closing `]`, or `None` when the class is malformed.
fn parse_class(pat: &[u8], open: usize) -> Option<(ByteSet, usize)> {
    let mut set = ByteSet::default();
    let mut j = open + 1;
    let negated = matches!(pat.get(j), Some(b'!' | b'^'));
    if negated {
        j += 1;
    }
    // The previous single byte, usable as the low end of a range.
    let mut prev: Option<u8> = None;
    loop {
        let c = *pat.get(j)?;
        let mut cur = None;
        if c == b'\\' {
            j += 1;
            let e = *pat.get(j)?;
            set.insert(e);
            cur = Some(e);
        } else if c == b'-' && prev.is_some() && pat.get(j + 1).is_some_and(|&n| n != b']') {
            j += 1;
            let mut hi = pat[j];
            if hi == b'\\' {
                j += 1;
                hi = *pat.get(j)?;
            }
            let lo = prev.unwrap_or(0);
            if lo <= hi {
                set.insert_range(lo, hi);
            }
        } else if c == b'[' && pat.get(j + 1) == Some(&b':') {
            let start = j + 2;
            let close = start + pat[start..].iter().position(|&b| b == b']')?;
            if close > start && pat[close - 1] == b':' {
                add_named_class(&mut set, &pat[start..close - 1])?;
                j = close;
            } else {
                // Not a `[:name:]`: the `[` is an ordinary member.
                set.insert(b'[');
                cur = Some(b'[');
            }
        } else {
            set.insert(c);
            cur = Some(c);
        }
        prev = cur;
        j += 1;
        if *pat.get(j)? == b']' {
            break;
        }
    }
    if negated {
        set.invert();
    }
    set.remove(b'/');
    Some((set, j + 1))
}

fn add_named_class(set: &mut ByteSet, name: &[u8]) -> Option<()> {
    let pred: fn(u8) -> bool = match name {
        b"alnum" => |b| b.is_ascii_alphanumeric(),
        b"alpha" => |b| b.is_ascii_alphabetic(),
        b"blank" => |b| b == b' ' || b == b'\t',
        b"cntrl" => |b| b.is_ascii_control(),
        b"digit" => |b| b.is_ascii_digit(),
        b"graph" => |b| b.is_ascii_graphic(),
        b"lower" => |b| b.is_ascii_lowercase(),
        b"print" => |b| b.is_ascii_graphic() || b == b' ',
        b"punct" => |b| b.is_ascii_punctuation(),
        b"space" => |b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'),
        b"upper" => |b| b.is_ascii_uppercase(),
        b"xdigit" => |b| b.is_ascii_hexdigit(),
        _ => return None,
    };
    for b in 0..=255u8 {
        if pred(b) {
            set.insert(b);
        }
    }
    Some(())
}

impl Matcher {
    fn matches(&self, s: &[u8]) -> bool {
        match self {
            Matcher::Never => false,
            Matcher::Exact(l) => s == &**l,
            Matcher::Suffix(l) => {
                s.len() >= l.len() && s.ends_with(l) && !s[..s.len() - l.len()].contains(&b'/')
            }
            Matcher::Prefix(l) => s.starts_with(l) && !s[l.len()..].contains(&b'/'),
            Matcher::Glob(toks) => glob(toks, s),
        }
    }
}

/// Backtracking glob match of a token program against the whole of `s`.
fn glob(mut toks: &[Tok], mut s: &[u8]) -> bool {
    loop {
        let Some((tok, rest)) = toks.split_first() else {
            return s.is_empty();
        };
        match tok {
            Tok::Lit(l) => {
                if !s.starts_with(l) {
                    return false;
                }
                s = &s[l.len()..];
            }
            Tok::Any => match s.split_first() {
                Some((&b, tail)) if b != b'/' => s = tail,
                _ => return false,
            },
            Tok::Class(set) => match s.split_first() {
                Some((&b, tail)) if set.contains(b) => s = tail,
                _ => return false,
            },
            Tok::Star => {
                if rest.is_empty() {
                    return !s.contains(&b'/');
                }
                let stop = s.iter().position(|&b| b == b'/').unwrap_or(s.len());
                // When a literal follows, only positions where it starts are worth trying.
                let first = match rest.first() {
                    Some(Tok::Lit(l)) => Some(l[0]),
                    _ => None,
                };
                return (0..=stop)
                    .any(|i| first.is_none_or(|f| s.get(i) == Some(&f)) && glob(rest, &s[i..]));
            }
            Tok::GlobStar => {
                if rest.is_empty() {
                    return true;
                }
                return (0..=s.len()).any(|i| glob(rest, &s[i..]));
            }
            Tok::GlobStarSlash => {
                if glob(rest, s) {
                    return true;
                }
                return s
                    .iter()
                    .enumerate()
                    .any(|(k, &b)| b == b'/' && glob(rest, &s[k + 1..]));
            }
        }
        toks = rest;
    }
}

/// One layer of an [`IgnoreStack`].
#[derive(Debug)]
struct Frame {
    file: IgnoreFile,
    /// The layer starts a repository (its `info/exclude`): shallower layers do not apply.
    floor: bool,
}

/// The ignore rules in force at one point of a walk, layered as git layers them.
///
/// From lowest to highest precedence: the repository's `.git/info/exclude`, then each
/// directory's `.gitignore` from the repository top down to the current directory, then the
/// caller's extra patterns (default and configured excludes), which behave like a root-level
/// ignore file that overrides the others (as `git --exclude` does). A directory holding its own
/// `.git` starts a fresh repository: shallower `.gitignore` files stop applying below it.
///
/// Pushing and popping is cheap (one parsed file per directory that has one), so the walker
/// keeps a single stack and [`IgnoreStack::truncate`]s it when it leaves a directory. Queries
/// take paths relative to the walk root; internally they are matched relative to the
/// repository top, so `.gitignore` files above the root apply correctly.
#[derive(Debug)]
pub struct IgnoreStack {
    /// The walk root relative to the repository top, with a trailing `/` (or empty).
    prefix: String,
    frames: Vec<Frame>,
    extras: IgnoreFile,
}

/// Where the rules of one repository come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoLocation {
    /// The working-tree top (the directory holding `.git`).
    pub top: PathBuf,
    /// The file with the repository-wide excludes (`<git dir>/info/exclude`), existing or not.
    pub info_exclude: PathBuf,
}

/// Finds the repository containing `dir` (or at `dir`) by looking for `.git` upwards.
/// A `.git` file (worktrees, submodules) is followed to its git dir and common dir.
pub fn find_repo(dir: &Path) -> Option<RepoLocation> {
    dir.ancestors().find_map(repo_at)
}

/// The repository whose top is exactly `dir`, if `dir` holds a `.git` directory or file.
pub fn repo_at(dir: &Path) -> Option<RepoLocation> {
    let dot_git = dir.join(".git");
    let meta = fs::symlink_metadata(&dot_git).ok()?;
    let git_dir = if meta.is_dir() {
        dot_git
    } else if meta.is_file() {
        let text = fs::read_to_string(&dot_git).ok()?;
        let target = text.trim_end().strip_prefix("gitdir:")?.trim();
        dir.join(target)
    } else {
        return None;
    };
    let common = match fs::read_to_string(git_dir.join("commondir")) {
        Ok(c) => git_dir.join(c.trim_end()),
        Err(_) => git_dir,
    };
    Some(RepoLocation {
        top: dir.to_path_buf(),
        info_exclude: common.join("info").join("exclude"),
    })
}

/// Reads an ignore file if it is a regular file (git refuses symlinked `.gitignore` files).
/// Invalid UTF-8 is replaced rather than rejected; an unreadable file counts as absent and is
/// logged.
pub fn read_ignore_file(path: &Path) -> Option<String> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => {}
        _ => return None,
    }
    match fs::read(path) {
        Ok(bytes) => Some(match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        }),
        Err(e) => {
            tracing::warn!(target: "mesh::crawl", path = %path.display(), error = %e,
                "cannot read ignore file; its patterns are not applied");
            None
        }
    }
}

/// `p`'s components joined by `/`, whatever the platform's separator.
pub(crate) fn slash_path(p: &Path) -> String {
    let mut out = String::new();
    for comp in p.components() {
        if !out.is_empty() {
            out.push('/');
        }
        out.push_str(&comp.as_os_str().to_string_lossy());
    }
    out
}

/// A depth-first walk over the directories of a root that keeps an [`IgnoreStack`] in step:
/// each directory listed is followed, once its subdirectories are done, by a mark that
/// restores the stack to the depth it had before the directory pushed its own layers.
pub(crate) struct DirWalk {
    work: Vec<Step>,
}

/// One step of a [`DirWalk`].
enum Step {
    /// List this directory (root-relative).
    Enter(String),
    /// Leaving a directory: restore the ignore stack to this depth.
    Leave(usize),
}

impl DirWalk {
    /// A walk that starts at the root-relative directory `start`.
    pub(crate) fn new(start: String) -> Self {
        DirWalk {
            work: vec![Step::Enter(start)],
        }
    }

    /// The next directory to list, with `stack` restored for each directory left on the way;
    /// none when the walk is done.
    pub(crate) fn next_dir(&mut self, stack: &mut IgnoreStack) -> Option<String> {
        loop {
            match self.work.pop()? {
                Step::Leave(depth) => stack.truncate(depth),
                Step::Enter(dir) => return Some(dir),
            }
        }
    }

    /// Marks the end of the directory being listed, whose layers start at stack depth
    /// `depth`: call it before queuing its subdirectories.
    pub(crate) fn leave_at(&mut self, depth: usize) {
        self.work.push(Step::Leave(depth));
    }

    /// Queues the root-relative subdirectory `rel` (the last queued is listed first).
    pub(crate) fn enter(&mut self, rel: String) {
        self.work.push(Step::Enter(rel));
    }
}

impl IgnoreStack {
    /// Builds the stack for a walk rooted at `root` (a canonical directory): the enclosing
    /// repository's `info/exclude` and every `.gitignore` from the repository top down to and
    /// including `root`, plus `extra_patterns` (gitignore lines anchored at `root`). Outside a
    /// repository only `root`'s own `.gitignore` files apply.
    ///
    /// The root itself is never treated as ignored, even if a shallower `.gitignore` excludes
    /// it: it was chosen explicitly.
    pub fn new<S: AsRef<str>>(root: &Path, extra_patterns: &[S]) -> IgnoreStack {
        let repo = find_repo(root);
        let top = repo.as_ref().map_or(root, |r| r.top.as_path());
        let rel_root = slash_path(root.strip_prefix(top).unwrap_or(Path::new("")));
        let prefix = if rel_root.is_empty() {
            String::new()
        } else {
            format!("{rel_root}/")
        };
        let mut extras = IgnoreFile::empty(&rel_root);
        for line in extra_patterns {
            extras.push_line(line.as_ref());
        }
        let mut stack = IgnoreStack {
            prefix,
            frames: Vec::new(),
            extras,
        };
        if let Some(repo) = &repo {
            let text = read_ignore_file(&repo.info_exclude).unwrap_or_default();
            stack.frames.push(Frame {
                file: IgnoreFile::parse("", &text),
                floor: true,
            });
        }
        let mut dir = top.to_path_buf();
        let mut base = String::new();
        let push_dir = |stack: &mut IgnoreStack, dir: &Path, base: &str| {
            if let Some(text) = read_ignore_file(&dir.join(".gitignore")) {
                stack.frames.push(Frame {
                    file: IgnoreFile::parse(base, &text),
                    floor: false,
                });
            }
        };
        push_dir(&mut stack, &dir, &base);
        if let Ok(below) = root.strip_prefix(top) {
            for comp in below.components() {
                dir.push(comp);
                if !base.is_empty() {
                    base.push('/');
                }
                base.push_str(&comp.as_os_str().to_string_lossy());
                push_dir(&mut stack, &dir, &base);
            }
        }
        stack
    }

    /// Adds the `.gitignore` of directory `rel_dir` (relative to the walk root), whose text is
    /// `text`. Call it when entering the directory, before querying its entries.
    pub fn push_gitignore(&mut self, rel_dir: &str, text: &str) {
        let base = self.repo_path(rel_dir.trim_matches('/'));
        self.frames.push(Frame {
            file: IgnoreFile::parse(base.trim_end_matches('/'), text),
            floor: false,
        });
    }

    /// Marks directory `rel_dir` (at `abs_dir`) as the top of a nested repository: shallower
    /// `.gitignore` files stop applying and its own `info/exclude` starts applying. Call it
    /// before [`IgnoreStack::push_gitignore`] for the same directory.
    pub fn push_nested_repo(&mut self, rel_dir: &str, abs_dir: &Path) {
        let base = self.repo_path(rel_dir.trim_matches('/'));
        let text = repo_at(abs_dir)
            .and_then(|repo| read_ignore_file(&repo.info_exclude))
            .unwrap_or_default();
        self.frames.push(Frame {
            file: IgnoreFile::parse(base.trim_end_matches('/'), &text),
            floor: true,
        });
    }

    /// The number of layers; pass it to [`IgnoreStack::truncate`] to undo later pushes.
    pub fn depth(&self) -> usize {
        self.frames.len()
    }

    /// Drops every layer pushed after the stack had `depth` layers.
    pub fn truncate(&mut self, depth: usize) {
        self.frames.truncate(depth);
    }

    /// The combined verdict for `rel_path` (relative to the walk root) from all layers, deepest
    /// first. Only the entry itself is matched: the caller must not ask about paths below a
    /// directory it has already found ignored (the walker prunes such directories).
    pub fn matched(&self, rel_path: &str, is_dir: bool) -> Match {
        let rel_path = rel_path.trim_matches('/');
        if rel_path.is_empty() {
            return Match::None;
        }
        if self.prefix.is_empty() {
            return self.matched_repo_path(rel_path, is_dir);
        }
        let mut buf = [0u8; 512];
        let total = self.prefix.len() + rel_path.len();
        if total <= buf.len() {
            buf[..self.prefix.len()].copy_from_slice(self.prefix.as_bytes());
            buf[self.prefix.len()..total].copy_from_slice(rel_path.as_bytes());
            // Both halves are valid UTF-8, so the concatenation is too.
            match std::str::from_utf8(&buf[..total]) {
                Ok(full) => self.matched_repo_path(full, is_dir),
                Err(_) => Match::None,
            }
        } else {
            self.matched_repo_path(&self.repo_path(rel_path), is_dir)
        }
    }

    /// True when `rel_path` itself is excluded (see [`IgnoreStack::matched`]). An entry named
    /// `.git` is always excluded.
    pub fn is_ignored(&self, rel_path: &str, is_dir: bool) -> bool {
        basename(rel_path.trim_end_matches('/')) == ".git"
            || self.matched(rel_path, is_dir) == Match::Ignore
    }

    fn repo_path(&self, rel: &str) -> String {
        let mut s = String::with_capacity(self.prefix.len() + rel.len());
        s.push_str(&self.prefix);
        s.push_str(rel);
        s
    }

    fn matched_repo_path(&self, path: &str, is_dir: bool) -> Match {
        let base = basename(path);
        let m = self.extras.matched_parts(path, base, is_dir);
        if m != Match::None {
            return m;
        }
        for frame in self.frames.iter().rev() {
            let m = frame.file.matched_parts(path, base, is_dir);
            if m != Match::None {
                return m;
            }
            if frame.floor {
                break;
            }
        }
        Match::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_globs_have_gitignore_meaning() {
        assert!(path_glob("docs/**/*.md", "docs/adr/0001.md"));
        assert!(path_glob("docs/**/*.md", "docs/x.md"));
        assert!(!path_glob("docs/**/*.md", "src/docs/x.md"));
        assert!(path_glob("*.md", "services/a/README.md"));
        assert!(path_glob("docs/", "docs/adr/x.md"));
        assert!(path_glob("docs", "docs/adr/x.md"));
        assert!(path_glob("src/*.go", "src/a.go"));
        assert!(!path_glob("src/*.go", "src/x/a.go"));
        assert!(path_glob("outbox.py", "svc/app/outbox.py"));
        assert!(!path_glob("*.ts", "a.tsx"));
    }

    fn m(pattern: &str, path: &str, is_dir: bool) -> Match {
        IgnoreFile::parse("", pattern).matched(path, is_dir)
    }

    fn ign(pattern: &str, path: &str) -> bool {
        m(pattern, path, false) == Match::Ignore
    }

    #[test]
    fn comments_blank_lines_and_escapes() {
        assert!(!ign("#a", "#a"));
        assert!(ign("\\#a", "#a"));
        assert!(ign("\\!a", "!a"));
        assert_eq!(m("!a", "a", false), Match::Whitelist);
        assert_eq!(IgnoreFile::parse("", "\n\n# c\n  \n").len(), 0);
        assert!(ign("\u{feff}a", "a"));
        assert!(ign("a\r\n", "a"));
    }

    #[test]
    fn trailing_spaces() {
        assert!(ign("foo   ", "foo"));
        assert!(!ign("foo   ", "foo "));
        assert!(ign("foo\\ ", "foo "));
        assert!(ign("foo\\  ", "foo "));
        assert!(!ign("foo\\ ", "foo"));
        assert!(ign("a\\ b", "a b"));
        // A lone trailing backslash keeps the line as is, and such a pattern never matches.
        assert!(!ign("foo\\", "foo"));
    }

    #[test]
    fn anchoring_and_depth() {
        assert!(ign("foo", "a/b/foo"));
        assert!(ign("/foo", "foo"));
        assert!(!ign("/foo", "a/foo"));
        assert!(ign("a/foo", "a/foo"));
        assert!(!ign("a/foo", "x/a/foo"));
        assert!(ign("*.rs", "src/x/main.rs"));
        assert!(!ign("/*.rs", "src/main.rs"));
        assert!(ign("/*.rs", "main.rs"));
        assert!(ign("*/b.rs", "a/b.rs"));
        assert!(!ign("*/b.rs", "x/a/b.rs"));
    }

    #[test]
    fn directory_only() {
        assert_eq!(m("build/", "build", true), Match::Ignore);
        assert_eq!(m("build/", "build", false), Match::None);
        assert_eq!(m("build/", "x/build", true), Match::Ignore);
        assert_eq!(m("a/b/", "a/b", true), Match::Ignore);
        assert_eq!(m("a/b/", "a/b", false), Match::None);
    }

    #[test]
    fn wildcards_and_classes() {
        assert!(ign("?.txt", "a.txt"));
        assert!(!ign("?.txt", "ab.txt"));
        assert!(!ign("a?b", "a/b"));
        assert!(ign("[abc].txt", "b.txt"));
        assert!(!ign("[abc].txt", "d.txt"));
        assert!(ign("x[0-9].py", "x7.py"));
        assert!(!ign("x[0-9].py", "xa.py"));
        assert!(ign("[!a]*.rs", "b.rs"));
        assert!(!ign("[!a]*.rs", "a.rs"));
        assert!(ign("[^a]*.rs", "b.rs"));
        assert!(ign("[]]", "]"));
        assert!(ign("[a-]", "-"));
        assert!(ign("[[:digit:]]x", "7x"));
        assert!(ign("[[:upper:]]*", "Abc"));
        assert!(!ign("[[:upper:]]*", "abc"));
        assert!(ign("[\\]]", "]"));
        // Malformed classes match nothing.
        assert!(!ign("[abc", "[abc"));
        assert!(!ign("[[:nope:]]", "a"));
        assert!(!ign("a[/]b", "a/b"));
    }

    #[test]
    fn double_star() {
        assert!(ign("**/foo", "foo"));
        assert!(ign("**/foo", "a/b/foo"));
        assert!(ign("a/**", "a/b"));
        assert!(ign("a/**", "a/b/c"));
        assert!(!ign("a/**", "a"));
        assert!(ign("a/**/b", "a/b"));
        assert!(ign("a/**/b", "a/x/y/b"));
        assert!(!ign("a/**/b", "a/xb"));
        assert!(ign("**/logs/*.log", "x/logs/a.log"));
        // Undelimited runs are plain `*`.
        assert!(ign("x/a**b", "x/ab"));
        assert!(ign("x/a**b", "x/aXb"));
        assert!(!ign("x/a**b", "x/a/b"));
        assert!(!ign("x/**b", "x/a/b"));
        assert!(ign("***", "a"));
        // git's engine starts after the literal prefix, so this `**` counts as delimited.
        assert!(ign("a/x**/c", "a/xb/y/c"));
    }

    #[test]
    fn last_match_wins_and_base() {
        let f = IgnoreFile::parse("sub", "*.log\n!keep.log\n/top\n");
        assert_eq!(f.matched("sub/a.log", false), Match::Ignore);
        assert_eq!(f.matched("sub/x/keep.log", false), Match::Whitelist);
        assert_eq!(f.matched("a.log", false), Match::None);
        assert_eq!(f.matched("sub/top", false), Match::Ignore);
        assert_eq!(f.matched("sub/x/top", false), Match::None);
        assert_eq!(f.matched("sub", true), Match::None);
        assert_eq!(f.matched("subx/a.log", false), Match::None);
    }

    #[test]
    fn literal_fast_paths() {
        assert!(matches!(
            Pattern::compile("*.rs").unwrap().matcher,
            Matcher::Suffix(_)
        ));
        assert!(matches!(
            Pattern::compile("id_rsa*").unwrap().matcher,
            Matcher::Prefix(_)
        ));
        assert!(matches!(
            Pattern::compile("/a/b").unwrap().matcher,
            Matcher::Exact(_)
        ));
        assert!(matches!(
            Pattern::compile("a/**/b").unwrap().matcher,
            Matcher::Glob(_)
        ));
        assert!(Pattern::compile("!").is_none());
        assert!(Pattern::compile("/").is_none());
    }
}
