//! The immutable, shared index snapshot and the handle that publishes it.
//!
//! Readers take an `Arc<Snapshot>` for the whole request and never block the writer; the
//! writer builds a new snapshot off to the side and swaps it in whole, bumping the generation.
//! Before the first snapshot exists, [`IndexHandle::ready`] lets a tool call wait for it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::SystemTime;

use super::facts::{FileFacts, Language, Symbol, SymbolKind};

/// A workspace root as the index sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootInfo {
    /// Relative to the workspace base with `/` (`.` for the base itself).
    pub label: String,
    pub path: PathBuf,
    /// Service, library or the workspace base, from the root's manifests.
    pub kind: crate::config::RootKind,
}

/// A declaration stored compactly: its strings live in the file's name arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SymbolEntry {
    name_off: u32,
    name_len: u16,
    container_len: u16,
    container_off: u32,
    pub line: u32,
    pub end_line: u32,
    /// First line of the doc comment/decorators above, 0 when none.
    pub doc_line: u32,
    pub kind: SymbolKind,
}

/// One indexed file: where it is, what it is, and what it declares.
#[derive(Debug, Clone, PartialEq)]
pub struct FileEntry {
    /// Index into the snapshot's `roots`.
    pub root: u16,
    /// The language its name says.
    pub lang: Language,
    /// Generated code (by path or by a generator's marker): ranked below hand-written code.
    pub generated: bool,
    /// A test file (by path or name convention).
    pub is_test: bool,
    /// Root-relative path with `/`.
    pub path: Box<str>,
    /// Size in bytes when it was read.
    pub size: u64,
    /// Modification time in nanoseconds since the epoch, when it was read.
    pub mtime_ns: u64,
    symbols: Box<[SymbolEntry]>,
    names: Box<str>,
    /// Every other fact (imports, contracts, events, routes, docs …), only when there are any.
    pub extra: Option<Box<FileFacts>>,
}

impl FileEntry {
    /// Builds the compact entry from extracted facts.
    pub fn new(
        root: u16,
        path: &str,
        lang: Language,
        size: u64,
        mtime_ns: u64,
        mut facts: FileFacts,
    ) -> FileEntry {
        // Sized up front: growing the arena name by name was a realloc per declaration.
        let arena_len: usize = facts
            .symbols
            .iter()
            .map(|s| s.name.len() + s.container.as_ref().map_or(0, String::len))
            .sum();
        let mut names = String::with_capacity(arena_len);
        let mut push = |s: &str| -> (u32, u16) {
            let s = if s.len() > u16::MAX as usize {
                &s[..floor_char_boundary(s, u16::MAX as usize)]
            } else {
                s
            };
            let off = names.len() as u32;
            names.push_str(s);
            (off, s.len() as u16)
        };
        let symbols: Vec<SymbolEntry> = facts
            .symbols
            .drain(..)
            .map(|sym| {
                let (name_off, name_len) = push(&sym.name);
                let (container_off, container_len) =
                    sym.container.as_deref().map_or((0, 0), &mut push);
                SymbolEntry {
                    name_off,
                    name_len,
                    container_len,
                    container_off,
                    line: sym.line,
                    end_line: sym.end_line.max(sym.line),
                    doc_line: sym.doc_line.unwrap_or(0),
                    kind: sym.kind,
                }
            })
            .collect();
        let generated = facts.generated;
        let extra = (facts
            != FileFacts {
                generated,
                ..FileFacts::default()
            })
        .then(|| Box::new(facts));
        FileEntry {
            root,
            lang,
            generated,
            is_test: super::is_test_path(path),
            path: path.into(),
            size,
            mtime_ns,
            symbols: symbols.into_boxed_slice(),
            names: names.into_boxed_str(),
            extra,
        }
    }

    /// The declarations of this file, in source order.
    pub fn symbols(&self) -> &[SymbolEntry] {
        &self.symbols
    }

    /// The name of one of this file's declarations.
    pub fn name(&self, sym: &SymbolEntry) -> &str {
        let start = sym.name_off as usize;
        &self.names[start..start + sym.name_len as usize]
    }

    /// The enclosing type of one of this file's declarations.
    pub fn container(&self, sym: &SymbolEntry) -> Option<&str> {
        (sym.container_len > 0).then(|| {
            let start = sym.container_off as usize;
            &self.names[start..start + sym.container_len as usize]
        })
    }

    /// The non-symbol facts (empty when the file had none).
    pub fn facts(&self) -> &FileFacts {
        static EMPTY: std::sync::OnceLock<FileFacts> = std::sync::OnceLock::new();
        self.extra
            .as_deref()
            .unwrap_or_else(|| EMPTY.get_or_init(FileFacts::default))
    }

    /// The declarations back as plain facts (for the fingerprint and the cache).
    pub fn symbol_facts(&self) -> Vec<Symbol> {
        self.symbols
            .iter()
            .map(|s| Symbol {
                name: self.name(s).to_string(),
                kind: s.kind,
                line: s.line,
                end_line: s.end_line,
                doc_line: (s.doc_line > 0).then_some(s.doc_line),
                container: self.container(s).map(str::to_string),
            })
            .collect()
    }
}

/// One search table per root: every declaration's lowercase name, in file order. The `@page`
/// routes of a Blazor Hybrid app are left out: they are pages of a native app, not endpoints
/// ([`super::graph::Graph::hybrid_roots`]).
fn name_tables(
    files: &[Arc<FileEntry>],
    roots: usize,
    hybrid: &std::collections::BTreeSet<u16>,
) -> Vec<NameTable> {
    let mut names: Vec<NameTable> = (0..roots).map(|_| NameTable::default()).collect();
    for (fi, f) in files.iter().enumerate() {
        let Some(table) = names.get_mut(f.root as usize) else {
            continue;
        };
        let in_app_pages = hybrid.contains(&f.root) && super::facts::is_razor(&f.path);
        for (si, sym) in f.symbols().iter().enumerate() {
            if in_app_pages && sym.kind == SymbolKind::Endpoint {
                continue;
            }
            let at = SymbolRef {
                file: fi as u32,
                symbol: si as u32,
            };
            table.push(f.name(sym), sym.kind, sym.line, at);
        }
    }
    names
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A file the index refused to parse, with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedFile {
    pub root: u16,
    pub path: String,
    pub reason: String,
    pub label: &'static str,
    pub size: u64,
}

/// Where to find a declaration: file index and symbol index within the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct SymbolRef {
    pub file: u32,
    pub symbol: u32,
}

/// Per-root search table: every declaration's lowercase name in one arena, each followed by
/// `\n`, so a name scan is one substring search over contiguous memory (no per-name call), and
/// each name's "bare" form (last `.` segment, `_` removed) in a second arena for
/// `CONSTANT_CASE` ↔ `PascalCase` matching.
#[derive(Debug, Default)]
pub struct NameTable {
    arena: String,
    /// One per declaration in file order (so offsets ascend).
    entries: Vec<NameEntry>,
    /// `\n` then every entry's bare name followed by `\n`, in entry order.
    bare: String,
    /// Offset of each entry's bare name in `bare`.
    bare_starts: Vec<u32>,
}

/// A declaration in a [`NameTable`]: where its name is in the arena, and what a search ranks
/// and filters by, kept here so a scan never has to visit the file entries.
#[derive(Debug, Clone, Copy)]
struct NameEntry {
    off: u32,
    len: u16,
    kind: SymbolKind,
    line: u32,
    at: SymbolRef,
}

/// One declaration a name search found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NameHit {
    pub at: SymbolRef,
    pub rank: NameMatch,
    pub kind: SymbolKind,
    pub line: u32,
}

/// The index of the last element of the ascending `starts` that is `<= pos`, searching
/// forward from `from` (the previous answer; positions arrive in ascending order), galloping
/// so that both dense and sparse matches cost little.
fn entry_at(starts: impl Fn(usize) -> u32, len: usize, from: usize, pos: usize) -> usize {
    let mut lo = from;
    let mut step = 1;
    let mut hi = from + 1;
    while hi < len && starts(hi) as usize <= pos {
        lo = hi;
        hi = hi.saturating_add(step);
        step *= 2;
    }
    let hi = hi.min(len);
    // Now starts(lo) <= pos and (hi == len or starts(hi) > pos).
    let (mut a, mut b) = (lo, hi);
    while b - a > 1 {
        let mid = (a + b) / 2;
        if starts(mid) as usize <= pos {
            a = mid;
        } else {
            b = mid;
        }
    }
    a
}

/// The leftmost non-overlapping occurrences of a needle in a haystack, as `match_indices`
/// finds them, eight start positions at a time: a word of the haystack is compared with the
/// needle's first byte and the word `len - 1` bytes on with its last byte, and only positions
/// where both agree are compared whole. The needles are names (`handler`, `new`) and the
/// haystack a root's name arena: at opt-level "z" the two-way searcher of `str` cost ~4
/// instructions a byte, a fifth of a 5k `smart_search`.
struct Occurrences<'a> {
    hay: &'a [u8],
    needle: &'a [u8],
    from: usize,
}

impl<'a> Occurrences<'a> {
    fn new(hay: &'a [u8], needle: &'a [u8]) -> Occurrences<'a> {
        Occurrences {
            hay,
            needle,
            from: 0,
        }
    }
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// The high bit of exactly the zero bytes of `v` set.
#[inline(always)]
fn zero_bytes(v: u64) -> u64 {
    const LOW7: u64 = !HI;
    !(((v & LOW7).wrapping_add(LOW7)) | v | LOW7)
}

#[inline(always)]
fn word_at(bytes: &[u8], at: usize) -> u64 {
    let w: [u8; 8] = bytes[at..at + 8].try_into().unwrap_or_default();
    u64::from_le_bytes(w)
}

impl Iterator for Occurrences<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let (hay, needle) = (self.hay, self.needle);
        let n = needle.len();
        if n == 0 || hay.len() < n {
            return None;
        }
        // The last position an occurrence can start at, plus one.
        let starts = hay.len() - n + 1;
        let (first, last) = (LO * u64::from(needle[0]), LO * u64::from(needle[n - 1]));
        let mut from = self.from;
        // The end of the bytes between the first and the last (1 for needles of 1 or 2).
        let inner = (n - 1).max(1);
        let found = 'search: {
            while from + 8 <= starts {
                let mut m = zero_bytes(word_at(hay, from) ^ first)
                    & zero_bytes(word_at(hay, from + n - 1) ^ last);
                while m != 0 {
                    let at = from + (m.trailing_zeros() / 8) as usize;
                    // First and last byte agree: the bytes between, by hand (names are short,
                    // and a call to `memcmp` costs more than they do).
                    if hay[at + 1..at + inner]
                        .iter()
                        .zip(&needle[1..inner])
                        .all(|(a, b)| a == b)
                    {
                        break 'search Some(at);
                    }
                    m &= m - 1;
                }
                from += 8;
            }
            while from < starts {
                if hay[from] == needle[0] && &hay[from..from + n] == needle {
                    break 'search Some(from);
                }
                from += 1;
            }
            None
        };
        self.from = found.map_or(starts, |at| at + n);
        found
    }
}

/// How a declared name matched a search: lower is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum NameMatch {
    /// The whole name, or its bare form equals the query's.
    Exact,
    /// The name starts with the query.
    Prefix,
    /// The query occurs inside the name.
    Substring,
}

impl NameTable {
    /// Adds one declaration (entries must be added in file order).
    fn push(&mut self, name: &str, kind: SymbolKind, line: u32, at: SymbolRef) {
        let off = self.arena.len() as u32;
        // Names are nearly always ASCII: byte by byte is the same result without a Unicode
        // case-mapping lookup per character (this runs for every declaration, between the
        // last file extracted and the first answer).
        let ascii = name.is_ascii();
        if ascii && !name.contains('\n') {
            // Copied whole, then folded in place: pushing char by char cost more than the rest.
            self.arena.push_str(name);
            if let Some(copy) = self.arena.get_mut(off as usize..) {
                copy.make_ascii_lowercase();
            }
        } else {
            for ch in name.chars() {
                if ch == '\n' {
                    self.arena.push(' ');
                } else {
                    self.arena.extend(ch.to_lowercase());
                }
            }
        }
        // Capped on a character boundary: a folded name can be longer than its `u16` length
        // (`İ` folds to three bytes), and a cut inside a character panicked on the slice below.
        let mut end = self.arena.len().min(off as usize + u16::MAX as usize);
        while !self.arena.is_char_boundary(end) {
            end -= 1;
        }
        let len = (end - off as usize) as u16;
        self.arena.push('\n');
        self.entries.push(NameEntry {
            off,
            len,
            kind,
            line,
            at,
        });
        if self.bare.is_empty() {
            self.bare.push('\n');
        }
        self.bare_starts.push(self.bare.len() as u32);
        let lower = &self.arena[off as usize..off as usize + len as usize];
        if ascii {
            let last = match lower.bytes().rposition(|b| b == b'.') {
                Some(dot) => &lower[dot + 1..],
                None => lower,
            };
            for piece in last.split('_') {
                self.bare.push_str(piece);
            }
        } else {
            let last = lower.rsplit('.').next().unwrap_or("");
            self.bare.extend(last.chars().filter(|c| *c != '_'));
        }
        self.bare.push('\n');
    }

    /// Entries whose name matches `query` (lowercase): exact, prefix or substring, or exact on
    /// the bare form when `bare_query` (the query's own bare form) is not empty. One best match
    /// per entry, in entry (file) order.
    pub fn matches(&self, query: &str, bare_query: &str) -> Vec<NameHit> {
        let mut found: Vec<(u32, NameMatch)> = Vec::new();
        if query.is_empty() || query.contains('\n') || self.entries.is_empty() {
            return Vec::new();
        }
        let n = self.entries.len();
        let off_of = |i: usize| self.entries[i].off;
        let mut cursor = 0;
        let mut last_entry = u32::MAX;
        for pos in Occurrences::new(self.arena.as_bytes(), query.as_bytes()) {
            cursor = entry_at(off_of, n, cursor, pos);
            if cursor as u32 == last_entry {
                continue; // a later occurrence in the same name ranks no better
            }
            last_entry = cursor as u32;
            let e = &self.entries[cursor];
            let rank = if pos != e.off as usize {
                NameMatch::Substring
            } else if e.len as usize == query.len() {
                NameMatch::Exact
            } else {
                NameMatch::Prefix
            };
            found.push((cursor as u32, rank));
        }
        if !bare_query.is_empty() && !bare_query.contains('\n') {
            let needle = format!("{bare_query}\n");
            let bytes = self.bare.as_bytes();
            let start_of = |i: usize| self.bare_starts[i];
            let mut cursor = 0;
            let mut exact: Vec<u32> = Vec::new();
            for pos in Occurrences::new(bytes, needle.as_bytes()) {
                if pos == 0 || bytes[pos - 1] != b'\n' {
                    continue;
                }
                cursor = entry_at(start_of, n, cursor, pos);
                exact.push(cursor as u32);
            }
            if !exact.is_empty() {
                // Both lists ascend by entry: merge them, an entry in both keeping its better
                // rank (`Exact`). Sorting the concatenation was a sort per `handle`/`new`
                // query over every such method in scope.
                let mut merged = Vec::with_capacity(found.len() + exact.len());
                let mut exact = exact.into_iter().peekable();
                for (i, rank) in found {
                    while let Some(e) = exact.next_if(|&e| e < i) {
                        merged.push((e, NameMatch::Exact));
                    }
                    let rank = if exact.next_if_eq(&i).is_some() {
                        NameMatch::Exact
                    } else {
                        rank
                    };
                    merged.push((i, rank));
                }
                merged.extend(exact.map(|e| (e, NameMatch::Exact)));
                found = merged;
            }
        }
        found
            .into_iter()
            .map(|(i, rank)| {
                let e = &self.entries[i as usize];
                NameHit {
                    at: e.at,
                    rank,
                    kind: e.kind,
                    line: e.line,
                }
            })
            .collect()
    }

    /// Number of declarations in this table.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no declaration is in this table.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// One complete, immutable view of the workspace index.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// 1 for the first published snapshot, +1 for each reload.
    pub generation: u64,
    /// When this snapshot was published.
    pub published_at: Option<SystemTime>,
    /// How long building it took, in milliseconds.
    pub build_ms: u64,
    /// The workspace base directory.
    pub base: PathBuf,
    /// The roots (services or repositories) in configuration order.
    pub roots: Vec<RootInfo>,
    /// Indexed files, sorted by (root, path).
    pub files: Vec<Arc<FileEntry>>,
    /// Files refused, sorted by (root, path).
    pub rejected: Vec<RejectedFile>,
    /// One name table per root.
    pub names: Vec<NameTable>,
    /// Each file's position when all files are sorted by display path (`files` is sorted by
    /// root, then path), so answers can order files by path without building strings.
    pub display_order: Vec<u32>,
    /// The resolved cross-service graph.
    pub graph: super::graph::Graph,
}

/// Positions of `files` (sorted by root, then path) in display-path order: within a root the
/// orders agree, so only files of different roots compare their labels, without allocating.
fn display_order(roots: &[RootInfo], files: &[Arc<FileEntry>]) -> Vec<u32> {
    fn display<'a>(roots: &'a [RootInfo], f: &'a FileEntry) -> impl Iterator<Item = u8> + 'a {
        let label = roots
            .get(f.root as usize)
            .map(|r| r.label.as_str())
            .filter(|l| *l != ".");
        let prefix: &[u8] = label.map_or(b"", |l| l.as_bytes());
        let slash: &[u8] = if label.is_some() { b"/" } else { b"" };
        prefix.iter().chain(slash).chain(f.path.as_bytes()).copied()
    }
    let mut by_display: Vec<u32> = (0..files.len() as u32).collect();
    by_display.sort_by(|&a, &b| {
        let (fa, fb) = (&files[a as usize], &files[b as usize]);
        if fa.root == fb.root {
            a.cmp(&b)
        } else {
            display(roots, fa).cmp(display(roots, fb))
        }
    });
    let mut order = vec![0u32; files.len()];
    for (pos, &fi) in by_display.iter().enumerate() {
        order[fi as usize] = pos as u32;
    }
    order
}

impl Snapshot {
    /// Builds a snapshot from its files (sorted here) and derives the search tables.
    pub fn build(
        base: PathBuf,
        roots: Vec<RootInfo>,
        mut files: Vec<Arc<FileEntry>>,
        mut rejected: Vec<RejectedFile>,
    ) -> Snapshot {
        files.sort_by(|a, b| (a.root, &a.path).cmp(&(b.root, &b.path)));
        crate::order::sort_by(&mut rejected, |a, b| {
            (a.root, &a.path).cmp(&(b.root, &b.path))
        });
        let display = |f: &FileEntry| match roots.get(f.root as usize) {
            Some(r) if r.label != "." => format!("{}/{}", r.label, f.path),
            _ => f.path.to_string(),
        };
        // The graph and the name tables are independent: build them on both cores (this is on
        // the path from the last file extracted to the first answer).
        let hybrid = super::graph::blazor_hybrid_roots(&files);
        let build_graph = || super::graph::Graph::build(&files, &display, &hybrid);
        let (names, display_order, graph) = std::thread::scope(|scope| {
            let graph = std::thread::Builder::new().spawn_scoped(scope, build_graph);
            let names = name_tables(&files, roots.len(), &hybrid);
            let display_order = display_order(&roots, &files);
            let graph = match graph {
                Ok(handle) => handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                Err(_) => build_graph(),
            };
            (names, display_order, graph)
        });
        Snapshot {
            generation: 0,
            published_at: None,
            build_ms: 0,
            base,
            roots,
            files,
            rejected,
            names,
            display_order,
            graph,
        }
    }

    /// A snapshot of in-memory sources, each extracted by its language's extractor as the
    /// indexer would: (root label, root-relative path, text).
    #[cfg(test)]
    pub(crate) fn of_sources(files: &[(&str, &str, &str)]) -> Snapshot {
        Snapshot::from_facts(
            files
                .iter()
                .map(|&(root, path, text)| {
                    let lang = Language::of_path(path).expect("an indexed extension");
                    (root, path, crate::index::lang::extract(lang, path, text))
                })
                .collect(),
        )
    }

    /// A snapshot of files that each consume one event at line 5: (root, path, topic, via).
    #[cfg(test)]
    pub(crate) fn of_listeners(files: &[(&str, &str, &str, &str)]) -> Snapshot {
        use crate::index::facts::{EventFact, EventRole, Value};
        Snapshot::from_facts(
            files
                .iter()
                .map(|&(root, path, topic, via)| {
                    let facts = FileFacts {
                        events: vec![EventFact {
                            role: EventRole::Consumer,
                            topic: Value::lit(topic),
                            via: via.into(),
                            line: 5,
                        }],
                        ..FileFacts::default()
                    };
                    (root, path, facts)
                })
                .collect(),
        )
    }

    /// A snapshot of in-memory files, for tests of the tools and the graph: each entry is
    /// (root label, root-relative path, facts); roots are created in order of first use under
    /// a fake base directory. Generation 1.
    pub fn from_facts(files: Vec<(&str, &str, FileFacts)>) -> Snapshot {
        Snapshot::from_facts_in(PathBuf::from("/nonexistent-mesh-test"), files)
    }

    /// [`Snapshot::from_facts`] with roots under `base`, for tests that also write the files
    /// there (tools that re-read them at answer time).
    pub fn from_facts_in(base: PathBuf, files: Vec<(&str, &str, FileFacts)>) -> Snapshot {
        let mut roots: Vec<RootInfo> = Vec::new();
        let mut entries = Vec::new();
        for (label, path, facts) in files {
            let root = match roots.iter().position(|r| r.label == label) {
                Some(i) => i,
                None => {
                    roots.push(RootInfo {
                        label: label.to_string(),
                        path: base.join(label),
                        kind: if label == "." {
                            crate::config::RootKind::Workspace
                        } else {
                            crate::config::RootKind::Service
                        },
                    });
                    roots.len() - 1
                }
            };
            let lang = Language::of_path(path).unwrap_or(Language::Go);
            entries.push(Arc::new(FileEntry::new(
                root as u16,
                path,
                lang,
                0,
                0,
                facts,
            )));
        }
        let mut snap = Snapshot::build(base, roots, entries, Vec::new());
        snap.generation = 1;
        snap
    }

    /// The workspace-relative display path of a file (`services/orders/server.go`).
    pub fn display_path(&self, file: &FileEntry) -> String {
        match self.roots.get(file.root as usize) {
            Some(r) if r.label != "." => format!("{}/{}", r.label, file.path),
            _ => file.path.to_string(),
        }
    }

    /// The absolute path of a file.
    pub fn abs_path(&self, file: &FileEntry) -> PathBuf {
        match self.roots.get(file.root as usize) {
            Some(r) => r.path.join(&*file.path),
            None => self.base.join(&*file.path),
        }
    }

    /// Total declarations across all roots.
    pub fn symbol_count(&self) -> usize {
        self.names.iter().map(NameTable::len).sum()
    }

    /// A deterministic SHA-256 over the root-relative facts of every file (paths hashed as
    /// `<root index>:<relative path>`), identical across runs, thread counts, file orders and
    /// checkout directories. Generation and timings are left out.
    pub fn fingerprint(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for f in &self.files {
            h.update(format!("F {}:{} {}\n", f.root, f.path, f.lang.name()).as_bytes());
            let mut facts = f.facts().clone();
            facts.symbols = f.symbol_facts();
            h.update(super::cache::encode_facts(&facts));
            h.update(b"\n");
        }
        for r in &self.rejected {
            h.update(format!("R {}:{} {}\n", r.root, r.path, r.label).as_bytes());
        }
        let digest = h.finalize();
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// The longest an indexer waits at a closed start gate (a client that is slow to send
/// `initialize`, or none at all, delays indexing by no more than this).
pub const START_GATE_MAX_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

/// Holds the current snapshot and announces the first one.
#[derive(Debug)]
pub struct IndexHandle {
    current: RwLock<Option<Arc<Snapshot>>>,
    generation: AtomicU64,
    ready_rx: async_channel::Receiver<()>,
    ready_tx: Mutex<Option<async_channel::Sender<()>>>,
    files_done: AtomicU64,
    files_total: AtomicU64,
    pending: AtomicU64,
    git_hold: std::sync::atomic::AtomicBool,
    /// How the workspace is being watched (set by the watcher; for `index_status`).
    watch_mode: Mutex<super::watch::WatchMode>,
    /// The start gate: while closed, the indexer waits (bounded) before it crawls.
    start_gate: Mutex<bool>,
    start_opened: std::sync::Condvar,
    /// How often the indexer thread panicked and was started over, and where it last did.
    restarts: Mutex<(u64, String)>,
}

impl Default for IndexHandle {
    fn default() -> Self {
        let (tx, rx) = async_channel::bounded(1);
        IndexHandle {
            current: RwLock::new(None),
            generation: AtomicU64::new(0),
            ready_rx: rx,
            ready_tx: Mutex::new(Some(tx)),
            files_done: AtomicU64::new(0),
            files_total: AtomicU64::new(0),
            pending: AtomicU64::new(0),
            git_hold: std::sync::atomic::AtomicBool::new(false),
            watch_mode: Mutex::new(super::watch::WatchMode::Off),
            start_gate: Mutex::new(true),
            start_opened: std::sync::Condvar::new(),
            restarts: Mutex::new((0, String::new())),
        }
    }
}

impl IndexHandle {
    /// Records that the indexer thread panicked at `location` and is being started over.
    pub fn note_restart(&self, location: &str) {
        let mut r = self.restarts.lock().unwrap_or_else(|p| p.into_inner());
        r.0 += 1;
        r.1 = location.to_string();
    }

    /// How often the indexer thread was started over after a panic, and where it last
    /// panicked (`(0, "")` when it never did).
    pub fn restarts(&self) -> (u64, String) {
        self.restarts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// A handle with no snapshot yet.
    pub fn new() -> Arc<IndexHandle> {
        Arc::new(IndexHandle::default())
    }

    /// A handle whose indexer waits for [`IndexHandle::open_start_gate`] (at most
    /// [`START_GATE_MAX_WAIT`]) before it crawls. A stdio session opens the gate once it has
    /// answered `initialize`: both cores crawling and allocating while the process starts
    /// made `initialize` on a 50k-file workspace three times slower (9 ms against 3 ms), and
    /// the client sends `initialize` first anyway.
    pub fn gated() -> Arc<IndexHandle> {
        let handle = IndexHandle::default();
        if let Ok(mut open) = handle.start_gate.lock() {
            *open = false;
        }
        Arc::new(handle)
    }

    /// Lets a waiting indexer start; idempotent.
    pub fn open_start_gate(&self) {
        if let Ok(mut open) = self.start_gate.lock() {
            *open = true;
        }
        self.start_opened.notify_all();
    }

    /// Blocks the indexer until the start gate is open or [`START_GATE_MAX_WAIT`] passed.
    pub fn wait_start_gate(&self) {
        let Ok(open) = self.start_gate.lock() else {
            return;
        };
        let _ = self
            .start_opened
            .wait_timeout_while(open, START_GATE_MAX_WAIT, |open| !*open);
    }

    /// The current snapshot, if one has been published.
    pub fn current(&self) -> Option<Arc<Snapshot>> {
        self.current.read().ok().and_then(|g| g.clone())
    }

    /// Publishes a new snapshot, stamping its generation; returns that generation.
    pub fn publish(&self, mut snapshot: Snapshot) -> u64 {
        let generation = self.generation.fetch_add(1, Ordering::AcqRel) + 1;
        snapshot.generation = generation;
        snapshot.published_at = Some(SystemTime::now());
        if let Ok(mut g) = self.current.write() {
            *g = Some(Arc::new(snapshot));
        }
        // Dropping the sender wakes every waiter of `ready()`, now and later.
        if let Ok(mut tx) = self.ready_tx.lock() {
            tx.take();
        }
        generation
    }

    /// Resolves once the first snapshot has been published.
    pub async fn ready(&self) {
        let _ = self.ready_rx.recv().await;
    }

    /// The number of the newest published generation (0 before the first).
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Records indexing progress (files extracted of files found) for progress notifications
    /// and the "still indexing" message.
    pub fn set_progress(&self, done: u64, total: u64) {
        self.files_total.store(total, Ordering::Relaxed);
        self.files_done.store(done, Ordering::Relaxed);
    }

    /// Records what the watcher knows: changes seen but not yet published, and whether a git
    /// operation is holding reloads.
    pub fn set_watch_state(&self, pending: u64, git_hold: bool) {
        self.pending.store(pending, Ordering::Relaxed);
        self.git_hold.store(git_hold, Ordering::Relaxed);
    }

    /// Changes seen but not yet published.
    pub fn pending_changes(&self) -> u64 {
        self.pending.load(Ordering::Relaxed)
    }

    /// True while a git operation holds reloads.
    pub fn git_hold(&self) -> bool {
        self.git_hold.load(Ordering::Relaxed)
    }

    /// Records how the workspace is watched (inotify, polling fallback and why, or not at all).
    pub fn set_watch_mode(&self, mode: super::watch::WatchMode) {
        if let Ok(mut m) = self.watch_mode.lock() {
            *m = mode;
        }
    }

    /// How the workspace is watched.
    pub fn watch_mode(&self) -> super::watch::WatchMode {
        self.watch_mode
            .lock()
            .map(|m| m.clone())
            .unwrap_or(super::watch::WatchMode::Off)
    }

    /// Indexing progress: (files extracted, files found).
    pub fn progress(&self) -> (u64, u64) {
        (
            self.files_done.load(Ordering::Relaxed),
            self.files_total.load(Ordering::Relaxed),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declaring(names: &[&str]) -> FileFacts {
        FileFacts {
            symbols: names
                .iter()
                .enumerate()
                .map(|(i, n)| Symbol {
                    name: (*n).into(),
                    kind: SymbolKind::Constant,
                    line: i as u32 + 1,
                    end_line: i as u32 + 1,
                    doc_line: None,
                    container: None,
                })
                .collect(),
            ..FileFacts::default()
        }
    }

    #[test]
    fn start_gate_holds_the_indexer_until_opened_or_timed_out() {
        // Ungated: no wait at all.
        let t = std::time::Instant::now();
        IndexHandle::new().wait_start_gate();
        assert!(t.elapsed() < START_GATE_MAX_WAIT);
        // Gated: the waiter returns once the gate opens.
        let h = IndexHandle::gated();
        let h2 = h.clone();
        let waiter = std::thread::spawn(move || h2.wait_start_gate());
        h.open_start_gate();
        waiter.join().unwrap();
        // Gated and never opened: the wait ends by itself.
        let t = std::time::Instant::now();
        IndexHandle::gated().wait_start_gate();
        assert!(t.elapsed() >= START_GATE_MAX_WAIT);
    }

    #[test]
    fn occurrences_are_match_indices() {
        let hays = [
            "",
            "a",
            "aaaaaaaaaaaaaaaaaaaaa",
            "handler\nhandle\nhandlerhandler\nxhandle\n",
            "new\nnewnew\nrenew\nnews\nanew\nne\nw\n",
            "ordercreated\norder_created\nordercreatedordercreated\n",
            "ééhandleé\nhandlé\n",
        ];
        let needles = [
            "a",
            "aa",
            "aaa",
            "handle",
            "handler",
            "new",
            "ne",
            "w\n",
            "é",
            "ordercreated\n",
            "zzz",
            "aaaaaaaaaaaaaaaaaaaaaa",
        ];
        for hay in hays {
            for needle in needles {
                let want: Vec<usize> = hay.match_indices(needle).map(|(at, _)| at).collect();
                let got: Vec<usize> = Occurrences::new(hay.as_bytes(), needle.as_bytes()).collect();
                assert_eq!(got, want, "{needle:?} in {hay:?}");
            }
        }
        // Every offset and length around the word size.
        for len in 0..40 {
            for at in 0..len {
                let mut hay = vec![b'x'; len];
                hay[at] = b'q';
                if at + 1 < len {
                    hay[at + 1] = b'r';
                }
                let hay = String::from_utf8(hay).unwrap();
                for needle in ["q", "qr", "xq", "qrx", "xqrx"] {
                    let want: Vec<usize> = hay.match_indices(needle).map(|(at, _)| at).collect();
                    let got: Vec<usize> =
                        Occurrences::new(hay.as_bytes(), needle.as_bytes()).collect();
                    assert_eq!(got, want, "{needle:?} in {hay:?}");
                }
            }
        }
    }

    #[test]
    fn entry_at_gallops_to_the_last_start_at_or_before_a_position() {
        let starts = [0u32, 4, 9, 9, 20, 31, 32, 50];
        let at = |from: usize, pos: usize| entry_at(|i| starts[i], starts.len(), from, pos);
        for from in 0..starts.len() {
            for pos in starts[from] as usize..60 {
                let want = starts.iter().rposition(|&s| s as usize <= pos).unwrap();
                assert_eq!(at(from, pos), want, "from {from}, pos {pos}");
            }
        }
    }

    #[test]
    fn a_name_folded_past_the_length_cap_is_cut_on_a_character_boundary() {
        // `İ` folds to three bytes: an OpenAPI path `/ab` + 30 000 of them cut the folded
        // name inside a character at the 65 535-byte cap, and the indexer panicked.
        let long = format!("GET /ab{}", "İ".repeat(30_000));
        let snap = Snapshot::from_facts(vec![("svc", "a.go", declaring(&[&long, "ok"]))]);
        let hits = snap.names[0].matches("ok", "ok");
        assert_eq!(hits.len(), 1);
        assert_eq!(snap.names[0].matches("get /ab", "").len(), 1);
    }

    #[test]
    fn name_table_ranks_exact_prefix_substring_and_bare_matches() {
        let snap = Snapshot::from_facts(vec![
            (
                "svc",
                "a.go",
                declaring(&["OrderCreated", "ORDER_CREATED", "Order"]),
            ),
            (
                "svc",
                "b.go",
                declaring(&["order_created", "order_created", "x"]),
            ),
            (
                "svc",
                "c.go",
                declaring(&["PlaceOrder", "Orders.ORDER_CREATED_V2"]),
            ),
        ]);
        let got = |q: &str, bare: &str| -> Vec<(u32, u32, NameMatch)> {
            snap.names[0]
                .matches(q, bare)
                .into_iter()
                .map(|h| (h.at.file, h.at.symbol, h.rank))
                .collect()
        };
        use NameMatch::*;
        assert_eq!(
            got("order", "order"),
            vec![
                (0, 0, Prefix),
                (0, 1, Prefix),
                (0, 2, Exact),
                (1, 0, Prefix),
                (1, 1, Prefix),
                (2, 0, Substring),
                (2, 1, Prefix),
            ]
        );
        // The bare form finds both spellings, even repeated names next to each other.
        assert_eq!(
            got("ordercreated", "ordercreated"),
            vec![(0, 0, Exact), (0, 1, Exact), (1, 0, Exact), (1, 1, Exact)]
        );
        // No match across the separator between two names.
        assert!(got("order\nx", "").is_empty());
        assert!(got("createdorder", "createdorder").is_empty());
    }

    #[test]
    fn display_order_sorts_files_of_different_roots_by_their_display_path() {
        // Root labels `svc` and `svc-a`: `svc-a/z.go` sorts before `svc/a.go` ('-' < '/').
        let snap = Snapshot::from_facts(vec![
            ("svc", "a.go", FileFacts::default()),
            ("svc-a", "z.go", FileFacts::default()),
            (".", "README.md", FileFacts::default()),
            (".", "zzz.md", FileFacts::default()),
        ]);
        let shown: Vec<(u32, String)> = snap
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| (snap.display_order[i], snap.display_path(f)))
            .collect();
        let mut sorted = shown.clone();
        sorted.sort();
        let paths: Vec<&str> = sorted.iter().map(|(_, p)| p.as_str()).collect();
        assert_eq!(paths, ["README.md", "svc-a/z.go", "svc/a.go", "zzz.md"]);
        let mut by_path = shown.clone();
        by_path.sort_by(|a, b| a.1.cmp(&b.1));
        assert_eq!(by_path, sorted);
    }

    #[test]
    fn ready_resolves_after_first_publish() {
        let h = IndexHandle::new();
        assert!(h.current().is_none());
        let h2 = h.clone();
        let waiter = std::thread::spawn(move || smol::block_on(h2.ready()));
        assert_eq!(h.publish(Snapshot::default()), 1);
        waiter.join().unwrap();
        smol::block_on(h.ready());
        assert_eq!(h.publish(Snapshot::default()), 2);
        assert_eq!(h.current().unwrap().generation, 2);
    }
}
