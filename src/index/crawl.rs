//! The crawler: walks the roots honouring `.gitignore`, excludes and the parser guard.
//!
//! [`crawl`] lists the indexable files of every root (sorted, deterministic) and the files it
//! refused with a reason ([`Rejected`]), so nothing disappears silently. [`guard`] is the
//! content check the indexer runs on every file it reads, and [`is_ignored`] answers for one
//! path without walking (the watcher's question). The crawler is language-agnostic: the caller
//! says which names are worth indexing through [`CrawlOptions::indexable`].

use std::collections::HashSet;
use std::fmt;
use std::fs::{self, FileType};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use crate::index::ignore::{DirWalk, IgnoreStack, read_ignore_file, repo_at, slash_path};

/// Patterns (gitignore syntax, anchored at each root) excluded unless the configuration turns
/// the defaults off: secrets, which must never reach an agent, and build or vendor output,
/// which is large and not the project's source. `.git` is skipped even without them.
pub const DEFAULT_EXCLUDES: &[&str] = &[
    // Secrets.
    ".env*",
    "*.pem",
    "*.key",
    "*.jks",
    "*.p12",
    "*.pfx",
    "*.keystore",
    "id_rsa*",
    "id_ed25519*",
    "id_ecdsa*",
    "id_dsa*",
    ".npmrc",
    ".pypirc",
    ".dockercfg",
    ".docker/",
    ".kube/",
    "secrets/",
    // Build and vendor output.
    "node_modules/",
    "target/",
    "build/",
    ".venv/",
    "venv/",
    "__pycache__/",
    "dist/",
    // Git's own data, always.
    ".git/",
];

/// Size limit for ordinary source files: larger files are rejected from `stat` alone.
pub const SOURCE_SIZE_LIMIT: u64 = 384 * 1024;
/// Size limit for contracts and generated stubs (`.proto`, OpenAPI/AsyncAPI, `*.pb.go`, …),
/// which are legitimately big and are exactly what the mesh needs.
pub const SCHEMA_SIZE_LIMIT: u64 = 1536 * 1024;
/// Bytes sniffed for a NUL byte to recognise binary files.
pub const BINARY_SNIFF_LEN: usize = 4096;
/// Longest line (in bytes, without its `\n` or `\r\n`) a parsed file may have.
pub const MAX_LINE_LEN: usize = 1024;

/// One directory to crawl; `index` identifies it in every result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrawlRoot {
    /// The root directory, canonical (no symlinks, absolute).
    pub path: PathBuf,
    /// The root's number, echoed in [`CrawledFile::root`] and [`Rejected::root`].
    pub index: u16,
}

/// What to crawl besides the `.gitignore` rules.
#[derive(Debug, Clone)]
pub struct CrawlOptions {
    /// Extra gitignore-style patterns from the configuration, anchored at each root. They take
    /// precedence over `.gitignore` files (a `!pattern` here re-includes a default exclude).
    pub extra_excludes: Vec<String>,
    /// Apply [`DEFAULT_EXCLUDES`] (before `extra_excludes`, which can override them).
    pub use_default_excludes: bool,
    /// Whether a file (given its root-relative path) is worth returning, usually decided by
    /// its extension. Keeps the crawler language-agnostic; files it refuses are not stat'ed.
    pub indexable: fn(&str) -> bool,
}

impl Default for CrawlOptions {
    fn default() -> Self {
        CrawlOptions {
            extra_excludes: Vec::new(),
            use_default_excludes: true,
            indexable: accept_all,
        }
    }
}

impl CrawlOptions {
    /// The extra patterns in force: the defaults (if enabled) followed by the configured ones.
    pub fn exclude_patterns(&self) -> Vec<&str> {
        let defaults: &[&str] = if self.use_default_excludes {
            DEFAULT_EXCLUDES
        } else {
            &[]
        };
        defaults
            .iter()
            .copied()
            .chain(self.extra_excludes.iter().map(String::as_str))
            .collect()
    }
}

/// An `indexable` predicate that accepts every file (tests, tools listing everything).
pub fn accept_all(_rel_path: &str) -> bool {
    true
}

/// A file the crawler found and accepted. Its absolute path is `root.path.join(rel_path)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrawledFile {
    /// [`CrawlRoot::index`] of the owning root.
    pub root: u16,
    /// Path relative to the root, `/`-separated.
    pub rel_path: String,
    /// Size in bytes at crawl time.
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch (0 if before it).
    pub mtime_ns: u64,
    /// Status-change time (ctime), nanoseconds since the Unix epoch: unlike the mtime, no
    /// writer can set it back, so it tells an edit that kept size and mtime (`cp -p`,
    /// `rsync -a`, `touch -r`) from no edit. 0 when not stat'ed.
    pub ctime_ns: u64,
    /// False when the crawl did not stat the file ([`crawl_names`]): `size` and `mtime_ns`
    /// are 0, and whoever reads the file asks the open file.
    pub stat_known: bool,
}

impl CrawledFile {
    /// `(size, mtime_ns)` when the crawl stat'ed the file.
    pub fn stat(&self) -> Option<(u64, u64)> {
        self.stat_known.then_some((self.size, self.mtime_ns))
    }
}

/// A file the crawler or the guard refused, with the reason shown to the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    /// [`CrawlRoot::index`] of the owning root.
    pub root: u16,
    /// Path relative to the root, `/`-separated.
    pub rel_path: String,
    /// Why it is not indexed.
    pub reason: RejectReason,
    /// Size in bytes, when known (0 otherwise).
    pub size: u64,
}

/// Why a file is not parsed. The `Display` text tells the user what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RejectReason {
    /// Bigger than its size limit (see [`size_limit`]).
    Oversized {
        /// The limit that applied, in bytes.
        limit: u64,
    },
    /// A NUL byte in the first 4 KiB: a binary file.
    Binary,
    /// A line longer than 1 KiB (usually minified or generated code).
    LongLine {
        /// The first offending line, 1-based.
        line: u32,
    },
    /// The content is not valid UTF-8.
    NotUtf8,
    /// The file or directory could not be read; the message says why.
    Unreadable(String),
    /// A symbolic link whose target lies outside its root; it is not followed.
    SymlinkOutsideRoot,
    /// The language extractor panicked on this file, at this `file:line` of mesh-mcp's
    /// source (the file costs itself only; see [`crate::isolate`]).
    ExtractorFailed {
        /// Where the extractor panicked.
        at: String,
    },
    /// The extraction ran past the per-file time cap and was given up.
    ExtractorTimedOut {
        /// The cap, in milliseconds.
        cap_ms: u64,
    },
}

impl RejectReason {
    /// A short, stable label for counts and tables (`oversized`, `binary`, …).
    pub fn label(&self) -> &'static str {
        match self {
            RejectReason::Oversized { .. } => "oversized",
            RejectReason::Binary => "binary",
            RejectReason::LongLine { .. } => "long line",
            RejectReason::NotUtf8 => "not UTF-8",
            RejectReason::Unreadable(_) => "unreadable",
            RejectReason::SymlinkOutsideRoot => "symlink outside root",
            RejectReason::ExtractorFailed { .. } => "extractor failed",
            RejectReason::ExtractorTimedOut { .. } => "extractor timed out",
        }
    }
}

fn human_size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= MIB && (bytes * 10).is_multiple_of(MIB) {
        format!("{}.{} MiB", bytes / MIB, bytes % MIB * 10 / MIB)
    } else if bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RejectReason::Oversized { limit } => write!(f, "oversized (> {})", human_size(*limit)),
            RejectReason::Binary => write!(
                f,
                "binary (NUL byte in the first {})",
                human_size(BINARY_SNIFF_LEN as u64)
            ),
            RejectReason::LongLine { line } => write!(
                f,
                "line {line} is longer than {}",
                human_size(MAX_LINE_LEN as u64)
            ),
            RejectReason::NotUtf8 => write!(f, "not valid UTF-8 text"),
            RejectReason::Unreadable(why) => write!(f, "unreadable: {why}"),
            RejectReason::SymlinkOutsideRoot => {
                write!(f, "symlink pointing outside its root (not followed)")
            }
            RejectReason::ExtractorFailed { at } => write!(f, "extractor failed at {at}"),
            RejectReason::ExtractorTimedOut { cap_ms } => write!(
                f,
                "extraction took longer than {cap_ms} ms and was given up (MESH_EXTRACT_TIMEOUT_MS)"
            ),
        }
    }
}

impl std::error::Error for RejectReason {}

/// Everything one crawl found, sorted by `(root, rel_path)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CrawlResult {
    /// Files to index.
    pub files: Vec<CrawledFile>,
    /// Files refused, with their reason.
    pub rejected: Vec<Rejected>,
}

fn file_name(rel_path: &str) -> &str {
    // A byte scan: names are short, and a `char` searcher costs more to set up than this.
    match rel_path.bytes().rposition(|b| b == b'/') {
        Some(slash) => &rel_path[slash + 1..],
        None => rel_path,
    }
}

fn ends_with_ci(s: &str, suffix: &str) -> bool {
    s.len() >= suffix.len()
        && s.as_bytes()[s.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
}

fn contains_ci(s: &str, needle: &str) -> bool {
    s.as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// The size limit for a file: [`SCHEMA_SIZE_LIMIT`] for contracts and generated stubs
/// (`.proto`, `.pb.go`, `.pb.ts`, `.pb.rs`, `_pb2.py`, `_pb2_grpc.py`, `_pb2.pyi`,
/// `*OuterClass.java`, and YAML/JSON whose name contains `openapi`, `asyncapi` or `swagger`),
/// [`SOURCE_SIZE_LIMIT`] for everything else.
pub fn size_limit(rel_path: &str) -> u64 {
    let name = file_name(rel_path);
    // Dispatch on the extension first: this runs for every file listed and read, and most
    // files are plain sources that no stub suffix can match.
    let ext = name.rsplit_once('.').map_or("", |(_, ext)| ext);
    let mut lower = [0u8; 5];
    let ext = match lower.get_mut(..ext.len()) {
        Some(buf) => {
            buf.copy_from_slice(ext.as_bytes());
            buf.make_ascii_lowercase();
            &*buf
        }
        None => b"",
    };
    let schema = match ext {
        b"proto" => true,
        b"go" | b"ts" | b"rs" => ends_with_ci(&name[..name.len() - ext.len()], ".pb."),
        b"py" => ends_with_ci(name, "_pb2.py") || ends_with_ci(name, "_pb2_grpc.py"),
        b"pyi" => ends_with_ci(name, "_pb2.pyi"),
        b"java" => ends_with_ci(name, "outerclass.java"),
        b"yaml" | b"yml" | b"json" => ["openapi", "asyncapi", "swagger"]
            .iter()
            .any(|k| contains_ci(name, k)),
        _ => false,
    };
    if schema {
        SCHEMA_SIZE_LIMIT
    } else {
        SOURCE_SIZE_LIMIT
    }
}

/// Prose and configuration formats, where long lines are legitimate.
fn allows_long_lines(rel_path: &str) -> bool {
    let name = file_name(rel_path);
    [".md", ".markdown", ".yaml", ".yml", ".properties"]
        .iter()
        .any(|e| ends_with_ci(name, e))
}

/// Decides whether the content of a file may be parsed: not over its [`size_limit`], no NUL
/// byte in the first 4 KiB, valid UTF-8, and no line over 1 KiB (Markdown, YAML and
/// `.properties` are exempt from the line rule). Runs on every file, so it is one pass of
/// word-at-a-time scanning.
pub fn guard(rel_path: &str, bytes: &[u8]) -> Result<(), RejectReason> {
    let limit = size_limit(rel_path);
    if bytes.len() as u64 > limit {
        return Err(RejectReason::Oversized { limit });
    }
    if bytes[..bytes.len().min(BINARY_SNIFF_LEN)].contains(&0) {
        return Err(RejectReason::Binary);
    }
    if std::str::from_utf8(bytes).is_err() {
        return Err(RejectReason::NotUtf8);
    }
    if !allows_long_lines(rel_path)
        && let Some(line) = first_long_line(bytes, MAX_LINE_LEN)
    {
        return Err(RejectReason::LongLine { line });
    }
    Ok(())
}

/// The 1-based number of the first line longer than `max` bytes (not counting its break:
/// `\n`, `\r\n` or a lone `\r`, each one break, as editors count them).
fn first_long_line(bytes: &[u8], max: usize) -> Option<u32> {
    if bytes.len() <= max {
        return None;
    }
    let mut line: u32 = 1;
    let mut start = 0;
    loop {
        let rest = &bytes[start..];
        let (len, next) = match find_break(rest) {
            Some(off) if rest[off] == b'\r' && rest.get(off + 1) == Some(&b'\n') => {
                (off, Some(start + off + 2))
            }
            Some(off) => (off, Some(start + off + 1)),
            None => (rest.len(), None),
        };
        if len > max {
            return Some(line);
        }
        start = next?;
        line = line.saturating_add(1);
    }
}

/// Index of the first `\n` or `\r`, eight bytes at a time.
fn find_break(hay: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = LO * b'\n' as u64;
    const CR: u64 = LO * b'\r' as u64;
    let mut chunks = hay.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        let (n, r) = (w ^ NL, w ^ CR);
        // The lowest flagged byte of either is exact (borrows only flag bytes above it).
        let zero = (n.wrapping_sub(LO) & !n & HI) | (r.wrapping_sub(LO) & !r & HI);
        if zero != 0 {
            return Some(offset + (zero.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == b'\n' || b == b'\r')
        .map(|p| offset + p)
}

/// Walks every root and returns the indexable files and the rejected ones, sorted by
/// `(root, rel_path)`. Roots are crawled in parallel (one thread per core at most); when a
/// root lies inside another, the outer one skips it so each file belongs to its most specific
/// root. Symlinks are never followed: one pointing outside its root is rejected, one pointing
/// inside is skipped (its target is crawled at its real path). Oversized files are rejected
/// from `stat` alone; content checks are [`guard`]'s job.
pub fn crawl(roots: &[CrawlRoot], opts: &CrawlOptions) -> CrawlResult {
    crawl_with(roots, opts, true, None)
}

/// [`crawl`] without a `stat` per file: files come with `stat_known: false`, and the size limit
/// is left to whoever opens them (the indexer's first build, which reads every file anyway).
pub fn crawl_names(roots: &[CrawlRoot], opts: &CrawlOptions) -> CrawlResult {
    crawl_with(roots, opts, false, None)
}

/// Files handed out while the crawl runs (see [`crawl_names_into`]).
pub type FileSink<'a> = &'a (dyn Fn(Vec<CrawledFile>) + Sync);

/// Files the crawl hands to a [`FileSink`] at a time: small enough that extraction starts
/// on the first directory's first files, large enough that the hand-over costs nothing.
const SINK_BATCH: usize = 128;

/// [`crawl_names`] that hands the files to `sink` in batches as it finds them, in no
/// particular order, so their extraction overlaps the walk (the first build). The result
/// holds the rejected files only, sorted.
pub fn crawl_names_into(
    roots: &[CrawlRoot],
    opts: &CrawlOptions,
    sink: FileSink<'_>,
) -> CrawlResult {
    crawl_with(roots, opts, false, Some(sink))
}

fn crawl_with(
    roots: &[CrawlRoot],
    opts: &CrawlOptions,
    stat: bool,
    sink: Option<FileSink<'_>>,
) -> CrawlResult {
    let started = Instant::now();
    let patterns = opts.exclude_patterns();
    // Duplicate roots would list every file twice: keep the first of each path.
    let mut seen = HashSet::new();
    let roots: Vec<&CrawlRoot> = roots
        .iter()
        .filter(|r| {
            let fresh = seen.insert(r.path.clone());
            if !fresh {
                tracing::warn!(target: "mesh::crawl", root = %r.path.display(),
                    "root listed twice; crawling it once");
            }
            fresh
        })
        .collect();
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(roots.len())
        .max(1);
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<CrawlResult>> = Mutex::new(Vec::new());
    let work = || {
        let mut local = CrawlResult::default();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(root) = roots.get(i) else { break };
            let nested: HashSet<String> = roots
                .iter()
                .filter(|other| other.path != root.path)
                .filter_map(|other| other.path.strip_prefix(&root.path).ok())
                .map(slash_path)
                .collect();
            crawl_root(root, &nested, &patterns, opts, stat, sink, &mut local);
        }
        results
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(local);
    };
    if threads <= 1 {
        work();
    } else {
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(work);
            }
        });
    }
    let mut out = CrawlResult::default();
    for part in results
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
    {
        out.files.extend(part.files);
        out.rejected.extend(part.rejected);
    }
    out.files
        .sort_unstable_by(|a, b| (a.root, &a.rel_path).cmp(&(b.root, &b.rel_path)));
    // Few files are rejected: the program's one shared sort (src/order.rs) serves them.
    crate::order::sort_by(&mut out.rejected, |a, b| {
        (a.root, &a.rel_path).cmp(&(b.root, &b.rel_path))
    });
    tracing::debug!(target: "mesh::crawl", roots = roots.len(), files = out.files.len(),
        rejected = out.rejected.len(), elapsed_ms = started.elapsed().as_millis() as u64,
        "crawl finished");
    out
}

fn join_rel(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else {
        let mut s = String::with_capacity(dir.len() + 1 + name.len());
        s.push_str(dir);
        s.push('/');
        s.push_str(name);
        s
    }
}

/// A file's mtime in nanoseconds since the epoch (0 when unknown).
/// Opens `path` for reading only if it is a regular file (following symlinks), without ever
/// blocking: a FIFO opened for reading waits for a writer, so the open does not wait
/// (`O_NONBLOCK`, no effect on a regular file) and the opened file is checked with `fstat`. A
/// FIFO, socket, device or directory is an `InvalidInput` error that says what it is.
pub fn open_regular(path: &Path) -> std::io::Result<fs::File> {
    open_regular_meta(path).map(|(file, _)| file)
}

/// [`open_regular`] with the open file's metadata (the `fstat` it ran anyway), so a caller
/// that wants the size and mtime does not ask again.
pub fn open_regular_meta(path: &Path) -> std::io::Result<(fs::File, fs::Metadata)> {
    let mut opts = fs::OpenOptions::new();
    opts.read(true);
    match O_NONBLOCK {
        Some(flag) => {
            use std::os::unix::fs::OpenOptionsExt;
            opts.custom_flags(flag);
        }
        None => {
            // No flag to hand: at least do not open what is not a file now.
            let meta = fs::metadata(path)?;
            if !meta.is_file() {
                return Err(not_regular(&meta.file_type()));
            }
        }
    }
    let file = opts.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(&meta.file_type()));
    }
    Ok((file, meta))
}

/// `open(2)`'s `O_NONBLOCK` on the targets whose value this build knows (Linux on the common
/// architectures), else `None`.
const O_NONBLOCK: Option<i32> = if cfg!(all(
    target_os = "linux",
    any(
        target_arch = "x86_64",
        target_arch = "x86",
        target_arch = "aarch64",
        target_arch = "arm",
        target_arch = "riscv64"
    )
)) {
    Some(0o4000)
} else {
    None
};

/// The error for a path that is not a regular file, naming what it is.
fn not_regular(t: &FileType) -> std::io::Error {
    use std::os::unix::fs::FileTypeExt;
    let what = if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    };
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("{what}, not a regular file"),
    )
}

/// Reads at most `limit` bytes of a regular file ([`open_regular`]); a longer one is an
/// `InvalidData` error naming the limit (`/dev/zero` never gets here: it is a device).
pub fn read_regular(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = open_regular(path)?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than the {limit}-byte limit"),
        ));
    }
    Ok(bytes)
}

/// The status-change time of `meta`, nanoseconds since the Unix epoch (0 if before it).
pub fn ctime_ns(meta: &fs::Metadata) -> u64 {
    let secs = u64::try_from(meta.ctime()).unwrap_or(0);
    let nanos = u64::try_from(meta.ctime_nsec()).unwrap_or(0);
    secs.saturating_mul(1_000_000_000).saturating_add(nanos)
}

/// The modification time of `meta`, nanoseconds since the Unix epoch (0 if before it).
pub fn mtime_ns(meta: &fs::Metadata) -> u64 {
    let secs = u64::try_from(meta.mtime()).unwrap_or(0);
    let nanos = u64::try_from(meta.mtime_nsec()).unwrap_or(0);
    secs.saturating_mul(1_000_000_000).saturating_add(nanos)
}

fn crawl_root(
    root: &CrawlRoot,
    nested: &HashSet<String>,
    patterns: &[&str],
    opts: &CrawlOptions,
    stat: bool,
    sink: Option<FileSink<'_>>,
    out: &mut CrawlResult,
) {
    let started = Instant::now();
    let (files_before, rejected_before) = (out.files.len(), out.rejected.len());
    // Files handed to the sink so far (they leave `out.files`).
    let mut sunk = 0usize;
    let mut flush = |out: &mut CrawlResult, at_least: usize| {
        if let Some(sink) = sink
            && out.files.len() >= at_least.max(1)
        {
            sunk += out.files.len();
            sink(std::mem::take(&mut out.files));
        }
    };
    let mut stack = IgnoreStack::new(&root.path, patterns);
    let mut walk = DirWalk::new(String::new());
    let mut entries: Vec<(String, FileType, fs::DirEntry)> = Vec::new();
    let reject = |out: &mut CrawlResult, rel_path: String, reason: RejectReason, size: u64| {
        tracing::debug!(target: "mesh::crawl", root = root.index, path = %rel_path,
            reason = %reason, "rejected");
        out.rejected.push(Rejected {
            root: root.index,
            rel_path,
            reason,
            size,
        });
    };
    while let Some(dir) = walk.next_dir(&mut stack) {
        let abs_dir = root.path.join(&dir);
        if !list_dir(&abs_dir, &dir, &mut entries, &mut |rel, reason| {
            reject(out, rel, reason, 0)
        }) {
            continue;
        }
        let depth = stack.depth();
        if !dir.is_empty() && entries.iter().any(|(n, _, _)| n == ".git") {
            stack.push_nested_repo(&dir, &abs_dir);
        }
        if entries
            .iter()
            .any(|(n, t, _)| n == ".gitignore" && t.is_file())
            && let Some(text) = read_ignore_file(&abs_dir.join(".gitignore"))
        {
            stack.push_gitignore(&dir, &text);
        }
        walk.leave_at(depth);
        for (name, ftype, entry) in entries.drain(..) {
            if name == ".git" {
                continue;
            }
            let rel = join_rel(&dir, &name);
            if ftype.is_dir() {
                if nested.contains(&rel) || stack.is_ignored(&rel, true) {
                    continue;
                }
                walk.enter(rel);
            } else if ftype.is_file() {
                // The language check first: it looks at the name only, where the ignore
                // rules run every pattern of every frame (same answer either way).
                if !(opts.indexable)(&rel) || stack.is_ignored(&rel, false) {
                    continue;
                }
                if !stat {
                    out.files.push(CrawledFile {
                        root: root.index,
                        rel_path: rel,
                        size: 0,
                        mtime_ns: 0,
                        ctime_ns: 0,
                        stat_known: false,
                    });
                    flush(out, SINK_BATCH);
                    continue;
                }
                let meta = match entry.metadata() {
                    Ok(meta) => meta,
                    Err(e) => {
                        reject(out, rel, RejectReason::Unreadable(e.to_string()), 0);
                        continue;
                    }
                };
                let size = meta.len();
                let limit = size_limit(&rel);
                if size > limit {
                    reject(out, rel, RejectReason::Oversized { limit }, size);
                    continue;
                }
                out.files.push(CrawledFile {
                    root: root.index,
                    rel_path: rel,
                    size,
                    mtime_ns: mtime_ns(&meta),
                    ctime_ns: ctime_ns(&meta),
                    stat_known: true,
                });
            } else if ftype.is_symlink() {
                // Git sees a symlink as a file, whatever it points to.
                if !stack.is_ignored(&rel, false)
                    && let Some((rel, size)) =
                        symlink_outside(&root.path, &abs_dir.join(&name), rel, opts)
                {
                    reject(out, rel, RejectReason::SymlinkOutsideRoot, size);
                }
            }
            // Sockets, FIFOs and devices are never indexed.
        }
    }
    flush(out, 1);
    tracing::debug!(target: "mesh::crawl", root = root.index, path = %root.path.display(),
        files = out.files.len() + sunk - files_before, rejected = out.rejected.len() - rejected_before,
        elapsed_ms = started.elapsed().as_millis() as u64, "root crawled");
}

/// Lists `abs_dir` (root-relative `dir`) into `entries`, in the order the file system gives
/// them. Names that are not UTF-8 and a listing that fails midway go to `reject`; false when
/// the directory cannot be opened at all (also rejected).
fn list_dir(
    abs_dir: &Path,
    dir: &str,
    entries: &mut Vec<(String, FileType, fs::DirEntry)>,
    reject: &mut dyn FnMut(String, RejectReason),
) -> bool {
    entries.clear();
    let listing = match fs::read_dir(abs_dir) {
        Ok(listing) => listing,
        Err(e) => {
            reject(dir.to_string(), RejectReason::Unreadable(e.to_string()));
            return false;
        }
    };
    for entry in listing {
        let entry = match entry.and_then(|e| Ok((e.file_name(), e.file_type()?, e))) {
            Ok(entry) => entry,
            Err(e) => {
                reject(
                    dir.to_string(),
                    RejectReason::Unreadable(format!("listing the directory failed: {e}")),
                );
                break;
            }
        };
        match entry.0.into_string() {
            Ok(name) => entries.push((name, entry.1, entry.2)),
            Err(raw) => reject(
                join_rel(dir, &raw.to_string_lossy()),
                RejectReason::Unreadable("the file name is not valid UTF-8".into()),
            ),
        }
    }
    true
}

/// The symlink `link` (root-relative `rel`): `Some((rel, size))` when it points outside `root`
/// at a directory or an indexable file (listed as rejected, never followed); `None` when it
/// points inside the root (its target is crawled directly) or nowhere.
fn symlink_outside(
    root: &Path,
    link: &Path,
    rel: String,
    opts: &CrawlOptions,
) -> Option<(String, u64)> {
    match fs::canonicalize(link) {
        Ok(target) if target.starts_with(root) => {
            tracing::trace!(target: "mesh::crawl", path = %rel,
                "symlink inside its root skipped; its target is crawled directly");
            None
        }
        Ok(target) => {
            let meta = fs::metadata(&target).ok();
            let is_dir = meta.as_ref().is_some_and(fs::Metadata::is_dir);
            if !is_dir && !(opts.indexable)(&rel) {
                return None;
            }
            let size = meta.filter(|m| m.is_file()).map_or(0, |m| m.len());
            Some((rel, size))
        }
        Err(e) => {
            tracing::debug!(target: "mesh::crawl", path = %rel, error = %e,
                "dangling symlink skipped");
            None
        }
    }
}

/// Whether one path (relative to `root`, a canonical directory) is excluded, checking the
/// ignore rules along its parent directories without walking the tree: a path below an
/// excluded directory is excluded, as in git. Used by the watcher for single changed paths.
pub fn is_ignored(root: &Path, rel_path: &str, is_dir: bool, opts: &CrawlOptions) -> bool {
    let rel = rel_path.trim_matches('/');
    if rel.is_empty() {
        return false;
    }
    let mut stack = IgnoreStack::new(root, &opts.exclude_patterns());
    let mut abs = root.to_path_buf();
    for (end, _) in rel.match_indices('/') {
        let dir = &rel[..end];
        if stack.is_ignored(dir, true) {
            return true;
        }
        abs.push(file_name(dir));
        if repo_at(&abs).is_some() {
            stack.push_nested_repo(dir, &abs);
        }
        if let Some(text) = read_ignore_file(&abs.join(".gitignore")) {
            stack.push_gitignore(dir, &text);
        }
    }
    stack.is_ignored(rel, is_dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A scratch directory under the system temp dir, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(tag: &str) -> Scratch {
            let dir = crate::scratch::fresh_dir(&format!("crawl-{tag}"));
            Scratch(fs::canonicalize(&dir).expect("canonicalize scratch dir"))
        }
        fn file(&self, rel: &str, content: &[u8]) {
            let p = self.0.join(rel);
            fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            fs::write(p, content).expect("write");
        }
        fn root(&self, index: u16) -> CrawlRoot {
            CrawlRoot {
                path: self.0.clone(),
                index,
            }
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn paths(result: &CrawlResult) -> Vec<&str> {
        result.files.iter().map(|f| f.rel_path.as_str()).collect()
    }

    #[test]
    fn guard_reasons() {
        assert_eq!(guard("a.rs", b"fn main() {}\n"), Ok(()));
        assert_eq!(guard("a.rs", b"ab\0cd"), Err(RejectReason::Binary));
        let mut late_nul = vec![b'a'; 5000];
        late_nul[4500] = 0;
        for i in (100..5000).step_by(100) {
            late_nul[i] = b'\n';
        }
        assert_eq!(guard("a.rs", &late_nul), Ok(()));
        assert_eq!(guard("a.rs", b"caf\xe9\n"), Err(RejectReason::NotUtf8));
        let mut long = b"line one\nline two\n".to_vec();
        long.extend(std::iter::repeat_n(b'x', 1025));
        long.extend(b"\nshort\n");
        assert_eq!(
            guard("a.rs", &long),
            Err(RejectReason::LongLine { line: 3 })
        );
        assert_eq!(guard("README.md", &long), Ok(()));
        assert_eq!(guard("app.yaml", &long), Ok(()));
        assert_eq!(guard("a.properties", &long), Ok(()));
        let big = vec![b'a'; SOURCE_SIZE_LIMIT as usize + 1];
        assert_eq!(
            guard("a.rs", &big),
            Err(RejectReason::Oversized {
                limit: SOURCE_SIZE_LIMIT
            })
        );
    }

    #[test]
    fn long_line_edges() {
        let exact = vec![b'x'; MAX_LINE_LEN];
        assert_eq!(first_long_line(&exact, MAX_LINE_LEN), None);
        let mut crlf = vec![b'x'; MAX_LINE_LEN];
        crlf.extend(b"\r\n");
        crlf.extend(vec![b'y'; MAX_LINE_LEN]);
        assert_eq!(first_long_line(&crlf, MAX_LINE_LEN), None);
        let mut last = vec![b'\n'; 40];
        last.extend(vec![b'z'; MAX_LINE_LEN + 1]);
        assert_eq!(first_long_line(&last, MAX_LINE_LEN), Some(41));
        for len in 0..40 {
            for brk in [b'\n', b'\r'] {
                let mut v = vec![b'a'; len];
                v.push(brk);
                v.extend(b"\n\r");
                assert_eq!(find_break(&v), Some(len));
            }
        }
        assert_eq!(find_break(b"abcdefghijklmnop"), None);
        // Old-Mac line ends: each `\r` ends a line; `\r\n` is one break, not two.
        let mut cr = Vec::new();
        for _ in 0..40 {
            cr.extend(vec![b'x'; 100]);
            cr.push(b'\r');
        }
        assert_eq!(first_long_line(&cr, MAX_LINE_LEN), None);
        cr.extend(vec![b'y'; MAX_LINE_LEN + 1]);
        assert_eq!(first_long_line(&cr, MAX_LINE_LEN), Some(41));
        let mixed = [&b"a\r\nb\rc\n"[..], &vec![b'z'; MAX_LINE_LEN + 1]].concat();
        assert_eq!(first_long_line(&mixed, MAX_LINE_LEN), Some(4));
    }

    #[test]
    fn only_regular_files_are_opened_and_never_with_a_wait() {
        let dir = Scratch::new("regular");
        let fifo = dir.0.join("a.go");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            // No writer: a plain open would block here for ever.
            let err = open_regular(&fifo).unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
            assert!(err.to_string().contains("FIFO"), "{err}");
        }
        let err = read_regular(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(err.to_string().contains("a device"), "{err}");
        let f = dir.0.join("f.txt");
        fs::write(&f, b"12345").unwrap();
        assert_eq!(read_regular(&f, 5).unwrap(), b"12345");
        let err = read_regular(&f, 4).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
    }

    #[test]
    fn size_limits() {
        assert_eq!(size_limit("src/main.rs"), SOURCE_SIZE_LIMIT);
        for name in [
            "api/v1/svc.proto",
            "gen/svc.pb.go",
            "gen/svc_pb2.py",
            "gen/svc.pb.ts",
            "gen/SvcOuterClass.java",
            "docs/openapi.yaml",
            "docs/petstore-Swagger.json",
            "asyncapi.yml",
        ] {
            assert_eq!(size_limit(name), SCHEMA_SIZE_LIMIT, "{name}");
        }
        assert_eq!(size_limit("openapi.rs"), SOURCE_SIZE_LIMIT);
    }

    #[test]
    fn reason_messages() {
        let cases = [
            (
                RejectReason::Oversized {
                    limit: SOURCE_SIZE_LIMIT,
                },
                "oversized (> 384 KiB)",
                "oversized",
            ),
            (
                RejectReason::Oversized {
                    limit: SCHEMA_SIZE_LIMIT,
                },
                "oversized (> 1.5 MiB)",
                "oversized",
            ),
            (
                RejectReason::Binary,
                "binary (NUL byte in the first 4 KiB)",
                "binary",
            ),
            (
                RejectReason::LongLine { line: 12 },
                "line 12 is longer than 1 KiB",
                "long line",
            ),
            (RejectReason::NotUtf8, "not valid UTF-8 text", "not UTF-8"),
            (
                RejectReason::Unreadable("permission denied".into()),
                "unreadable: permission denied",
                "unreadable",
            ),
            (
                RejectReason::SymlinkOutsideRoot,
                "symlink pointing outside its root (not followed)",
                "symlink outside root",
            ),
        ];
        for (reason, text, label) in cases {
            assert_eq!(reason.to_string(), text);
            assert_eq!(reason.label(), label);
        }
    }

    #[test]
    fn default_excludes_and_lookalikes() {
        let s = Scratch::new("defaults");
        for f in [
            ".env",
            ".env.local",
            "certs/server.pem",
            "k.key",
            "ks.jks",
            "a.p12",
            "a.pfx",
            "a.keystore",
            "home/id_rsa",
            "home/id_rsa.pub",
            "home/id_ed25519",
            "id_ecdsa",
            "id_dsa",
            ".npmrc",
            ".pypirc",
            ".dockercfg",
            ".docker/config.json",
            ".kube/config",
            "secrets/db.txt",
            "node_modules/x/index.js",
            "web/node_modules/y/index.js",
            "target/debug/out.rs",
            "build/gen.rs",
            ".venv/lib/a.py",
            "venv/lib/a.py",
            "pkg/__pycache__/a.py",
            "dist/app.js",
            // Lookalikes that must stay.
            "src/build.rs",
            "build_tools/run.py",
            "my_node_modules_backup/a.js",
            "src/targets.rs",
            "environment.ts",
            "keys.rs",
        ] {
            s.file(f, b"x\n");
        }
        let result = crawl(&[s.root(0)], &CrawlOptions::default());
        assert_eq!(
            paths(&result),
            [
                "build_tools/run.py",
                "environment.ts",
                "keys.rs",
                "my_node_modules_backup/a.js",
                "src/build.rs",
                "src/targets.rs",
            ]
        );
        // Turning the defaults off lists everything; configured patterns still apply.
        let opts = CrawlOptions {
            use_default_excludes: false,
            extra_excludes: vec!["*.pem".into()],
            ..CrawlOptions::default()
        };
        let all = crawl(&[s.root(0)], &opts);
        assert_eq!(all.files.len(), 32);
        // A configured negation re-includes a default exclude.
        let opts = CrawlOptions {
            extra_excludes: vec!["!build/".into()],
            ..CrawlOptions::default()
        };
        assert!(paths(&crawl(&[s.root(0)], &opts)).contains(&"build/gen.rs"));
    }

    #[test]
    fn gitignore_without_a_repository() {
        let s = Scratch::new("nogit");
        s.file(".gitignore", b"*.log\n/only-top.rs\n");
        s.file("a.log", b"x\n");
        s.file("only-top.rs", b"x\n");
        s.file("sub/only-top.rs", b"x\n");
        s.file("sub/.gitignore", b"!keep.log\n");
        s.file("sub/keep.log", b"x\n");
        let opts = CrawlOptions {
            use_default_excludes: false,
            ..CrawlOptions::default()
        };
        let result = crawl(&[s.root(0)], &opts);
        assert_eq!(
            paths(&result),
            [
                ".gitignore",
                "sub/.gitignore",
                "sub/keep.log",
                "sub/only-top.rs"
            ]
        );
        assert!(is_ignored(&s.0, "a.log", false, &opts));
        assert!(!is_ignored(&s.0, "sub/keep.log", false, &opts));
        assert!(is_ignored(&s.0, "only-top.rs", false, &opts));
    }

    #[test]
    fn nested_repository_starts_fresh_rules() {
        let s = Scratch::new("nestedrepo");
        s.file(".gitignore", b"*.txt\n");
        s.file("a.txt", b"x\n");
        s.file("repo/.git/info/exclude", b"local.rs\n");
        s.file("repo/.git/HEAD", b"ref: refs/heads/main\n");
        s.file("repo/b.txt", b"x\n");
        s.file("repo/local.rs", b"x\n");
        s.file("repo/sub/.gitignore", b"*.md\n");
        s.file("repo/sub/c.md", b"x\n");
        s.file("repo/sub/d.rs", b"x\n");
        let opts = CrawlOptions::default();
        let result = crawl(&[s.root(0)], &opts);
        // The outer `*.txt` stops at the nested repository; its own info/exclude applies.
        assert_eq!(
            paths(&result),
            [
                ".gitignore",
                "repo/b.txt",
                "repo/sub/.gitignore",
                "repo/sub/d.rs"
            ]
        );
        for (path, ignored) in [
            ("a.txt", true),
            ("repo/b.txt", false),
            ("repo/local.rs", true),
            ("repo/sub/c.md", true),
            ("repo/.git/HEAD", true),
        ] {
            assert_eq!(is_ignored(&s.0, path, false, &opts), ignored, "{path}");
        }
    }

    #[test]
    fn indexable_filter_and_oversized() {
        let s = Scratch::new("indexable");
        s.file("a.rs", b"fn a() {}\n");
        s.file("notes.txt", b"hello\n");
        s.file("big.rs", &vec![b'a'; SOURCE_SIZE_LIMIT as usize + 1]);
        s.file("big.proto", &vec![b'a'; SOURCE_SIZE_LIMIT as usize + 1]);
        let opts = CrawlOptions {
            indexable: |p| p.ends_with(".rs") || p.ends_with(".proto"),
            ..CrawlOptions::default()
        };
        let result = crawl(&[s.root(3)], &opts);
        assert_eq!(paths(&result), ["a.rs", "big.proto"]);
        assert_eq!(result.files[0].root, 3);
        assert_eq!(result.files[0].size, 10);
        assert!(result.files[0].mtime_ns > 0);
        assert_eq!(result.rejected.len(), 1);
        assert_eq!(result.rejected[0].rel_path, "big.rs");
        assert_eq!(
            result.rejected[0].reason,
            RejectReason::Oversized {
                limit: SOURCE_SIZE_LIMIT
            }
        );
        assert_eq!(result.rejected[0].size, SOURCE_SIZE_LIMIT + 1);
    }

    #[test]
    fn symlinks_are_never_followed() {
        let outside = Scratch::new("outside");
        outside.file("secret.rs", b"x\n");
        outside.file("dir/inner.rs", b"x\n");
        let s = Scratch::new("links");
        s.file("real/a.rs", b"x\n");
        symlink(outside.0.join("secret.rs"), s.0.join("escape.rs")).expect("symlink");
        symlink(outside.0.join("dir"), s.0.join("escape_dir")).expect("symlink");
        symlink(s.0.join("real"), s.0.join("inside_dir")).expect("symlink");
        symlink("real/a.rs", s.0.join("inside.rs")).expect("symlink");
        symlink("nowhere.rs", s.0.join("dangling.rs")).expect("symlink");
        let result = crawl(&[s.root(0)], &CrawlOptions::default());
        assert_eq!(paths(&result), ["real/a.rs"]);
        let rejected: Vec<(&str, &RejectReason)> = result
            .rejected
            .iter()
            .map(|r| (r.rel_path.as_str(), &r.reason))
            .collect();
        assert_eq!(
            rejected,
            [
                ("escape.rs", &RejectReason::SymlinkOutsideRoot),
                ("escape_dir", &RejectReason::SymlinkOutsideRoot),
            ]
        );
        assert_eq!(result.rejected[0].size, 2);
    }

    #[test]
    fn nested_roots_and_determinism() {
        let s = Scratch::new("nested");
        s.file("a.rs", b"x\n");
        s.file("svc/b.rs", b"x\n");
        s.file("svc/deep/c.rs", b"x\n");
        s.file("other/d.rs", b"x\n");
        let outer = s.root(0);
        let inner = CrawlRoot {
            path: s.0.join("svc"),
            index: 1,
        };
        let opts = CrawlOptions::default();
        let result = crawl(&[inner.clone(), outer.clone()], &opts);
        let got: Vec<(u16, &str)> = result
            .files
            .iter()
            .map(|f| (f.root, f.rel_path.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (0, "a.rs"),
                (0, "other/d.rs"),
                (1, "b.rs"),
                (1, "deep/c.rs")
            ]
        );
        assert_eq!(crawl(&[outer.clone(), inner.clone()], &opts), result);
        // A duplicated root is crawled once.
        assert_eq!(crawl(&[outer.clone(), outer.clone()], &opts).files.len(), 4);
    }
}
