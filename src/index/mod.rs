//! The index: crawl, lex, extract, resolve into a graph, publish an immutable snapshot.

pub mod cache;
pub mod crawl;
pub mod facts;
pub mod graph;
pub mod handlers;
pub mod ignore;
pub mod lang;
pub mod lex;
pub mod modules;
pub mod mounts;
pub mod resolve;
pub mod snapshot;
pub mod watch;

#[cfg(test)]
mod extract_fuzz;
#[cfg(test)]
mod gitignore_oracle;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::config::Config;
use crawl::{CrawlOptions, CrawlRoot};
use facts::Language;
use snapshot::{FileEntry, IndexHandle, RejectedFile, RootInfo, Snapshot};

/// True for test code, which tools leave out unless `include_tests` (docs/ARCHITECTURE.md
/// §2.6): test directories (`test`, `tests`, `__tests__`, `spec`, `e2e`,
/// `fixtures`, …), dotted test parts (`x.spec.ts`, `x.test.js`, `x.e2e-spec.ts`), `_test`/`_spec`
/// stems, `test_` prefixes and `FooTest`/`FooTests`/`FooIT` class files. Lookalikes such as
/// `contest.ts`, `attestation/` or `latest/` are not tests.
pub fn is_test_path(path: &str) -> bool {
    const DIRS: [&str; 13] = [
        "test",
        "tests",
        "__tests__",
        "__mocks__",
        "__fixtures__",
        "spec",
        "specs",
        "e2e",
        "test-utils",
        "test_utils",
        "testutils",
        "testing",
        "fixtures",
    ];
    let mut parts = path.split('/').peekable();
    let mut name = "";
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            name = part;
        } else if DIRS.iter().any(|d| part.eq_ignore_ascii_case(d)) {
            return true;
        }
    }
    let (stem, rest) = name.split_once('.').unwrap_or((name, ""));
    // The parts between the stem and the extension (`x.spec.ts`), without collecting them:
    // this runs for every indexed file.
    if let Some((middle, _ext)) = rest.rsplit_once('.')
        && middle.split('.').any(|part| {
            ["spec", "test", "e2e-spec", "e2e", "int-test", "it"]
                .iter()
                .any(|t| part.eq_ignore_ascii_case(t))
        })
    {
        return true;
    }
    let ci_ends = |suffix: &str| {
        stem.len() >= suffix.len()
            && stem.as_bytes()[stem.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
    };
    let ci_starts = stem.len() >= 5 && stem.as_bytes()[..5].eq_ignore_ascii_case(b"test_");
    if ci_ends("_test") || ci_ends("_spec") || ci_starts {
        return true;
    }
    stem.len() > 4
        && stem.starts_with(|c: char| c.is_ascii_uppercase())
        && (stem.ends_with("Test") || stem.ends_with("Tests") || stem.ends_with("IT"))
}

/// A configured `[[patterns]]` entry, compiled.
pub struct CompiledPattern {
    name: String,
    role: facts::EventRole,
    file_glob: Option<String>,
    regex: regex_lite::Regex,
    group: usize,
}

/// Compiles the configured custom patterns; an invalid regex is logged and skipped, never fatal.
pub fn compile_patterns(config: &Config) -> Vec<CompiledPattern> {
    let mut out = Vec::new();
    for p in &config.patterns {
        match regex_lite::Regex::new(&p.regex) {
            Ok(regex) => out.push(CompiledPattern {
                name: p.name.clone(),
                role: match p.kind {
                    crate::config::PatternKind::Producer => facts::EventRole::Producer,
                    crate::config::PatternKind::Consumer => facts::EventRole::Consumer,
                },
                file_glob: p.file_glob.clone(),
                regex,
                group: p.topic_group,
            }),
            Err(e) => tracing::warn!(
                target: "mesh::index",
                "custom pattern `{}` is not a valid regex and is skipped: {e}",
                p.name
            ),
        }
    }
    out
}

/// True when a pattern's file glob (`*.ts`, `outbox.py`, `src/*.go`) accepts a path.
fn glob_accepts(glob: &str, rel: &str) -> bool {
    ignore::path_glob(glob, rel)
}

/// Runs the custom patterns over one file's text, adding event facts.
fn apply_patterns(
    patterns: &[CompiledPattern],
    rel: &str,
    text: &str,
    facts: &mut facts::FileFacts,
) {
    for p in patterns {
        if p.file_glob
            .as_deref()
            .is_some_and(|g| !glob_accepts(g, rel))
        {
            continue;
        }
        for caps in p.regex.captures_iter(text) {
            let Some(m) = caps.get(p.group) else { continue };
            if m.as_str().is_empty() {
                continue;
            }
            let line = 1 + text[..m.start()].bytes().filter(|&b| b == b'\n').count() as u32;
            facts.events.push(facts::EventFact {
                role: p.role,
                topic: facts::Value::lit(m.as_str().to_string()),
                via: p.name.clone(),
                line,
            });
        }
    }
}

/// Stores each Markdown section's text, cleaned once at index time by [`clean_doc_text`]; the
/// title gets the same treatment.
fn fill_section_texts(text: &str, sections: &mut [facts::DocSection]) {
    let lines: Vec<&str> = text.lines().collect();
    for s in sections {
        let from = (s.line as usize).saturating_sub(1).min(lines.len());
        let to = (s.end_line as usize).clamp(from, lines.len());
        let body = lines[from..to].join("\n");
        s.text = clean_doc_text(&body);
        s.title = clean_doc_text(&s.title);
    }
}

/// What docs text is stored as: HTML comments and hidden elements dropped (with a visible
/// note), injection phrases neutralised (matched through look-alike and invisible
/// characters), the invisible and bidirectional characters left shown as `[U+XXXX]`, secrets
/// masked.
fn clean_doc_text(text: &str) -> String {
    let visible = crate::security::strip_hidden_html(text);
    let (clean, _) = crate::security::neutralise(&visible);
    let marked = crate::security::mark_invisible(&clean);
    let (masked, _) = crate::security::mask_text(&marked, crate::security::LineContext::Prose);
    masked
}

/// One extraction thread's cache access: how it looks files up, and the files it had to
/// extract (written to the cache after the snapshot is published).
struct CacheCtx<'c> {
    lookup: cache::Lookup<'c>,
    misses: Vec<CacheMiss>,
}

/// A file extracted while a cache was in use, to be stored at the next flush.
#[derive(Debug, Clone)]
struct CacheMiss {
    root: u16,
    path: Box<str>,
    read_size: u64,
    mtime_ns: u64,
    sha: [u8; 32],
}

/// Reads, guards and extracts one file. `stat` is the size and mtime the crawl saw, `None`
/// when it did not look (a first build): then the open file is asked, which spares the crawl
/// a path lookup and a `stat` per file. With a cache (the root's label and the thread's
/// context), facts come from the cache when the content is unchanged, and freshly extracted
/// facts are queued for it.
fn index_file(
    abs: &Path,
    root: u16,
    rel: &str,
    stat: Option<(u64, u64)>,
    patterns: &[CompiledPattern],
    cached: Option<(&str, &mut CacheCtx<'_>)>,
) -> Result<FileEntry, RejectedFile> {
    let rejected = |reason: crawl::RejectReason, size: u64| RejectedFile {
        root,
        path: rel.to_string(),
        label: reason.label(),
        reason: reason.to_string(),
        size,
    };
    let limit = crawl::size_limit(rel);
    let unreadable =
        |e: std::io::Error, size| rejected(crawl::RejectReason::Unreadable(e.to_string()), size);
    let (size, mtime_ns, bytes) = match stat {
        Some((size, mtime_ns)) => {
            if size > limit {
                return Err(rejected(crawl::RejectReason::Oversized { limit }, size));
            }
            let bytes = read_capped(abs, size, limit).map_err(|e| unreadable(e, size))?;
            (size, mtime_ns, bytes)
        }
        None => {
            let (file, meta) = crawl::open_regular_meta(abs).map_err(|e| unreadable(e, 0))?;
            let (size, mtime_ns) = (meta.len(), crawl::mtime_ns(&meta));
            if size > limit {
                return Err(rejected(crawl::RejectReason::Oversized { limit }, size));
            }
            let bytes = read_open(file, size, limit).map_err(|e| unreadable(e, size))?;
            (size, mtime_ns, bytes)
        }
    };
    let reject = |reason: crawl::RejectReason| rejected(reason, size);
    if bytes.len() as u64 > limit {
        return Err(reject(crawl::RejectReason::Oversized { limit }));
    }
    crawl::guard(rel, &bytes).map_err(reject)?;
    let text = String::from_utf8(bytes).map_err(|_| reject(crawl::RejectReason::NotUtf8))?;
    let Some(lang) = Language::of_path(rel) else {
        return Err(reject(crawl::RejectReason::Unreadable(
            "not an indexable language".into(),
        )));
    };
    // The facts and the compact entry are built in isolation: a panic costs this file only,
    // which is then listed as rejected with the place it panicked.
    let entry = |facts: &mut dyn FnMut() -> facts::FileFacts| {
        crate::isolate::catch(|| FileEntry::new(root, rel, lang, size, mtime_ns, facts()))
            .map_err(|p| reject(crawl::RejectReason::ExtractorFailed { at: p.location }))
    };
    let Some((label, ctx)) = cached else {
        return entry(&mut || extract_facts(lang, rel, &text, patterns));
    };
    let sha = cache::content_hash(text.as_bytes());
    let read_size = text.len() as u64;
    if let Some(facts) = ctx.lookup.get(label, rel, read_size, &sha) {
        let mut facts = Some(facts);
        return entry(&mut || facts.take().unwrap_or_default());
    }
    ctx.misses.push(CacheMiss {
        root,
        path: rel.into(),
        read_size,
        mtime_ns,
        sha,
    });
    entry(&mut || extract_facts(lang, rel, &text, patterns))
}

/// Reads a file whose size the crawl saw, at most one byte past `limit` (enough to tell it is
/// oversized). Unlike `fs::read` it trusts the crawl's size instead of asking the file system
/// again, and when one read returns exactly that size (asking for one byte more), that is the
/// end of the file: open, read, close. Anything else (the file changed since the crawl) reads
/// on to the end as before.
/// The file must still be a regular one: a FIFO or device put in its place since the crawl is
/// an error, never a blocking open or an endless read.
fn read_capped(path: &Path, size: u64, limit: u64) -> std::io::Result<Vec<u8>> {
    read_open(crawl::open_regular(path)?, size, limit)
}

/// [`read_capped`] on a file already open.
fn read_open(mut file: std::fs::File, size: u64, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let expected = size.min(limit) as usize;
    let mut bytes = vec![0u8; expected + 1];
    let got = loop {
        match file.read(&mut bytes) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => break other?,
        }
    };
    bytes.truncate(got);
    if got != expected || size > limit {
        file.take(limit + 1 - got as u64).read_to_end(&mut bytes)?;
    }
    Ok(bytes)
}

/// Every fact of one file's text: the language extractor, Markdown section texts and the
/// custom patterns.
fn extract_facts(
    lang: Language,
    rel: &str,
    text: &str,
    patterns: &[CompiledPattern],
) -> facts::FileFacts {
    if crate::isolate::fixtures_enabled() {
        fixture_faults(text);
    }
    // A lone `\r` is a line break for the extractor, the section texts and the patterns alike.
    let text = &*lex::normalize_breaks(text);
    let mut facts = lang::extract_normalized(lang, rel, text);
    if !facts.sections.is_empty() {
        fill_section_texts(text, &mut facts.sections);
    }
    if !patterns.is_empty() {
        apply_patterns(patterns, rel, text, &mut facts);
    }
    facts
}

/// Test hooks (`MESH_TEST_FIXTURES=1` only): a file holding [`crate::isolate::PANIC_MARKER`]
/// makes its extraction panic, one holding [`crate::isolate::HANG_MARKER`] makes it hang (for
/// a minute) so that the per-file time cap gives up on it.
fn fixture_faults(text: &str) {
    if text.contains(crate::isolate::PANIC_MARKER) {
        panic!("test fixture: this file's extraction panics on purpose");
    }
    if text.contains(crate::isolate::HANG_MARKER) {
        hang(Duration::from_secs(60));
    }
}

/// The hang of [`fixture_faults`]: sleeps up to `limit` in short steps, polling the
/// cooperative stop flag like an extractor's loop does, so a given-up hang ends at once.
fn hang(limit: Duration) {
    let until = Instant::now() + limit;
    while Instant::now() < until && !lex::cancel::cancelled() {
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn indexable(rel: &str) -> bool {
    Language::of_path(rel).is_some()
}

/// The longest one file's extraction may take before it is given up and the file is listed as
/// rejected: `MESH_EXTRACT_TIMEOUT_MS`, default 5 s (a 384 KiB file takes a few ms; only a
/// runaway extractor comes near this).
fn extract_cap() -> Duration {
    static CAP: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *CAP.get_or_init(|| {
        let ms = std::env::var("MESH_EXTRACT_TIMEOUT_MS")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(5_000);
        Duration::from_millis(ms.max(1))
    })
}

/// The files one extraction works through, in batches: a list known up front, or one the
/// crawl is still filling (the first build, so that reading and extracting overlap the walk).
/// Workers take a whole batch at a time; the feed ends once it is closed and empty.
#[derive(Default)]
struct Feed {
    queue: Mutex<FeedQueue>,
    more: Condvar,
}

#[derive(Default)]
struct FeedQueue {
    /// Batches not finished, each with the index of its first file not yet taken.
    batches: std::collections::VecDeque<(Batch, usize)>,
    /// Files fed so far.
    total: usize,
    /// No more batches will come.
    closed: bool,
}

type Batch = Arc<[crawl::CrawledFile]>;

/// Files per batch when the list is known up front: small enough that both workers finish
/// together, large enough that taking one costs nothing.
const FEED_BATCH: usize = 64;

impl Feed {
    fn lock(&self) -> std::sync::MutexGuard<'_, FeedQueue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A closed feed of `files`.
    fn of(files: Vec<crawl::CrawledFile>) -> Feed {
        let feed = Feed::default();
        {
            let mut q = feed.lock();
            q.total = files.len();
            let mut files = files.into_iter();
            loop {
                let batch: Batch = files.by_ref().take(FEED_BATCH).collect();
                if batch.is_empty() {
                    break;
                }
                q.batches.push_back((batch, 0));
            }
            q.closed = true;
        }
        feed
    }

    fn push(&self, files: Vec<crawl::CrawledFile>) {
        if files.is_empty() {
            return;
        }
        let mut q = self.lock();
        q.total += files.len();
        q.batches.push_back((files.into(), 0));
        drop(q);
        self.more.notify_one();
    }

    fn close(&self) {
        self.lock().closed = true;
        self.more.notify_all();
    }

    /// The next batch and where to start in it, waiting while the feed is open and empty;
    /// `None` once it is closed and empty.
    fn take(&self) -> Option<(Batch, usize)> {
        let mut q = self.lock();
        loop {
            if let Some(next) = q.batches.pop_front() {
                return Some(next);
            }
            if q.closed {
                return None;
            }
            q = self.more.wait(q).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Puts back the files of `batch` from `from` on (a worker given up on holds them).
    fn give_back(&self, batch: Batch, from: usize) {
        if from < batch.len() {
            self.lock().batches.push_front((batch, from));
            self.more.notify_one();
        }
    }

    fn total(&self) -> usize {
        self.lock().total
    }
}

/// Closes a feed when dropped: the crawl that fills it closes it however it ends.
struct CloseOnDrop<'a>(&'a Feed);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// One run of extraction over a [`Feed`] of files, shared by its worker threads.
///
/// Workers take batches of files from the feed. A panic costs its file (see
/// [`index_file`]); a file that runs past the time cap costs its file and its worker: the
/// coordinator (the indexer thread) marks the worker abandoned, lists the file as rejected,
/// keeps what the worker had done so far, puts the rest of its batch back in the feed, and
/// starts a replacement. A thread cannot be stopped from outside, so the coordinator also
/// raises the worker's [`lex::cancel::Cancel`] flag: the lexer and the extractors' loops poll
/// it and return early, and the abandoned worker then exits without touching anything. The
/// index does not wait for it either way.
struct Extraction {
    feed: Arc<Feed>,
    done: AtomicUsize,
    roots: Vec<RootInfo>,
    patterns: Arc<[CompiledPattern]>,
    handle: Arc<IndexHandle>,
    cache: Option<Arc<cache::FactCache>>,
    loaded: Option<cache::LoadedRows>,
    /// The reused files for the progress counters, when they are reported.
    progress: Option<u64>,
    /// Workers that ran out of files, and the signal the coordinator waits on.
    finished: Mutex<usize>,
    finished_cv: Condvar,
}

/// What one worker did, read by the coordinator under the lock.
#[derive(Default)]
struct WorkerState {
    /// The file being extracted (its batch and index there) and since when.
    busy: Option<(Batch, usize, Instant)>,
    out: Vec<Result<FileEntry, RejectedFile>>,
    misses: Vec<CacheMiss>,
    /// Set by the coordinator: the worker ran past the cap; its results are taken.
    abandoned: bool,
    /// Raised with `abandoned`: asks the running extraction to stop (see [`lex::cancel`]).
    cancel: lex::cancel::Cancel,
    /// Set by the worker when the files ran out (after its last result).
    finished: bool,
}

type Worker = Arc<Mutex<WorkerState>>;

fn lock(w: &Worker) -> std::sync::MutexGuard<'_, WorkerState> {
    // The worker's state is plain data written under the lock: usable even when poisoned.
    w.lock().unwrap_or_else(|p| p.into_inner())
}

impl Extraction {
    fn spawn(self: &Arc<Self>) -> Worker {
        let worker: Worker = Arc::default();
        let (work, state) = (self.clone(), worker.clone());
        let spawned = std::thread::Builder::new()
            .name("mesh-extract".into())
            .spawn(move || work.work(&state));
        if let Err(e) = spawned {
            // Without a thread the files are extracted by the next worker (or, for the last
            // one, here: the coordinator never waits for a worker that does not exist).
            tracing::error!(target: "mesh::index", "cannot start an extraction thread: {e}");
            self.work(&worker);
        }
        worker
    }

    /// A worker: files from the feed until none are left or the coordinator gives up on it.
    fn work(&self, state: &Worker) {
        let cancel = lock(state).cancel.clone();
        cancel.scope(|| self.work_files(state));
    }

    /// [`Extraction::work`] inside its cancellation scope.
    fn work_files(&self, state: &Worker) {
        let lookup = match (self.cache.as_deref(), self.loaded.as_ref()) {
            (Some(c), Some(l)) => Some(cache::Lookup::Loaded(c, l)),
            (Some(c), None) => c.reader().map(cache::Lookup::Query),
            _ => None,
        };
        let mut ctx = lookup.map(|lookup| CacheCtx {
            lookup,
            misses: Vec::new(),
        });
        // One path buffer per worker: a file's absolute path without an allocation each.
        let mut abs = PathBuf::new();
        while let Some((batch, from)) = self.feed.take() {
            for i in from..batch.len() {
                let f = &batch[i];
                {
                    let mut st = lock(state);
                    if st.abandoned {
                        return;
                    }
                    st.busy = Some((batch.clone(), i, Instant::now()));
                }
                let root = &self.roots[f.root as usize];
                abs.clear();
                abs.push(&root.path);
                abs.push(&f.rel_path);
                // `index_file` isolates the extractor; this catches the rest (reading, the
                // cache).
                let result = crate::isolate::catch(|| {
                    index_file(
                        &abs,
                        f.root,
                        &f.rel_path,
                        f.stat(),
                        &self.patterns,
                        ctx.as_mut().map(|c| (root.label.as_str(), c)),
                    )
                })
                .unwrap_or_else(|p| {
                    Err(rejected(
                        f,
                        crawl::RejectReason::ExtractorFailed { at: p.location },
                    ))
                });
                {
                    let mut st = lock(state);
                    if st.abandoned {
                        // Given up while running: the result is not wanted any more.
                        if let Some((_, _, since)) = st.busy {
                            tracing::info!(
                                target: "mesh::index",
                                path = %f.rel_path,
                                ran_ms = since.elapsed().as_millis() as u64,
                                "a given-up extraction stopped; its thread exits"
                            );
                        }
                        return;
                    }
                    st.busy = None;
                    st.out.push(result);
                }
                let n = self.done.fetch_add(1, Ordering::Relaxed) + 1;
                if let Some(reused) = self.progress
                    && n.is_multiple_of(512)
                {
                    let total = reused + self.feed.total() as u64;
                    self.handle.set_progress(reused + n as u64, total);
                }
            }
        }
        {
            let mut st = lock(state);
            if let Some(c) = ctx {
                st.misses = c.misses;
            }
            // Sorted here, on both cores, so that the indexer's collect merges a few sorted
            // runs in linear time (a streamed crawl hands files over in no order).
            crate::order::sort_by(&mut st.out, |a, b| result_key(a).cmp(&result_key(b)));
            st.finished = true;
        }
        *self.finished.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        self.finished_cv.notify_all();
    }

    /// The coordinator: starts `workers` workers and collects their results, giving up on any
    /// file that runs longer than `cap`.
    fn run(
        self: Arc<Self>,
        workers: usize,
        cap: Duration,
    ) -> (Vec<Result<FileEntry, RejectedFile>>, Vec<CacheMiss>) {
        let mut live: Vec<Worker> = (0..workers).map(|_| self.spawn()).collect();
        let mut results = Vec::new();
        let mut misses = Vec::new();
        while !live.is_empty() {
            let seen = *self.finished.lock().unwrap_or_else(|p| p.into_inner());
            let now = Instant::now();
            let mut wake = now + cap;
            let mut replacements = 0;
            live.retain(|w| {
                let mut st = lock(w);
                if st.finished {
                    results.append(&mut st.out);
                    misses.append(&mut st.misses);
                    return false;
                }
                if let Some((batch, i, since)) = st.busy.clone() {
                    if now.duration_since(since) >= cap {
                        st.abandoned = true;
                        st.cancel.cancel();
                        results.append(&mut st.out);
                        let f = &batch[i];
                        tracing::warn!(
                            target: "mesh::index",
                            path = %f.rel_path,
                            cap_ms = cap.as_millis() as u64,
                            "extraction ran past the time cap; the file is listed as rejected and its thread is asked to stop"
                        );
                        results.push(Err(rejected(
                            f,
                            crawl::RejectReason::ExtractorTimedOut {
                                cap_ms: cap.as_millis() as u64,
                            },
                        )));
                        self.feed.give_back(batch.clone(), i + 1);
                        replacements += 1;
                        return false;
                    }
                    wake = wake.min(since + cap);
                }
                true
            });
            for _ in 0..replacements {
                live.push(self.spawn());
            }
            if live.is_empty() {
                break;
            }
            let guard = self.finished.lock().unwrap_or_else(|p| p.into_inner());
            if *guard == seen {
                let timeout = wake.saturating_duration_since(Instant::now());
                let _ = self.finished_cv.wait_timeout(guard, timeout);
            }
        }
        (results, misses)
    }
}

/// The (root, path) an extraction result is about.
fn result_key(r: &Result<FileEntry, RejectedFile>) -> (u16, &str) {
    match r {
        Ok(entry) => (entry.root, &entry.path),
        Err(rej) => (rej.root, &rej.path),
    }
}

/// A crawled file rejected for `reason`.
fn rejected(f: &crawl::CrawledFile, reason: crawl::RejectReason) -> RejectedFile {
    RejectedFile {
        root: f.root,
        path: f.rel_path.clone(),
        label: reason.label(),
        reason: reason.to_string(),
        size: f.size,
    }
}

/// The indexer's state between reloads: every file's compact entry, reused when a file's size
/// and mtime did not change.
pub struct Indexer {
    config: Arc<Config>,
    roots: Vec<RootInfo>,
    crawl_roots: Vec<CrawlRoot>,
    options: CrawlOptions,
    patterns: Arc<[CompiledPattern]>,
    handle: Arc<IndexHandle>,
    files: BTreeMap<(u16, Box<str>), Arc<FileEntry>>,
    rejected: BTreeMap<(u16, String), RejectedFile>,
    threads: usize,
    /// Test hook: extract files in a shuffled order (determinism tests).
    shuffle_seed: Option<u64>,
    /// Files whose facts may be stale although size and mtime match: extracted less than
    /// [`RACY_NS`] after their mtime (a second write within the file system's timestamp
    /// granularity keeps both), or named by a change that ended in a full refresh. The next
    /// refresh reads them again instead of trusting `stat`.
    racy: std::collections::HashSet<(u16, Box<str>)>,
    /// Wall time (ns) the last full refresh began reading: a file whose ctime is later may
    /// have been written after it was read.
    last_read_from: u64,
    /// The persistent fact cache, when enabled.
    cache: Option<Arc<cache::FactCache>>,
    /// Files extracted since the last cache flush.
    cache_misses: Vec<CacheMiss>,
}

/// See [`Indexer`]'s `racy` set: how close to its mtime a file must be read to be re-read.
const RACY_NS: u64 = 2_000_000_000;

/// How far a file's ctime may lag the clock the indexer reads (the kernel stamps inodes from
/// a coarse clock, up to a tick behind): a ctime within this of the last full read's start
/// counts as after it.
const CTIME_SLACK_NS: u64 = 50_000_000;

/// Now, in nanoseconds since the Unix epoch (the clock file mtimes use).
fn wall_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

impl Indexer {
    /// An indexer for the configured roots, publishing to `handle`.
    pub fn new(config: Arc<Config>, handle: Arc<IndexHandle>) -> Indexer {
        let labels: Vec<&str> = config.roots.iter().map(|r| r.label.as_str()).collect();
        let signals: Vec<crate::config::RootSignals> = config
            .roots
            .iter()
            .map(|r| crate::config::root_signals(&r.path))
            .collect();
        let kinds = crate::config::root_kinds(&labels, &signals);
        let roots: Vec<RootInfo> = config
            .roots
            .iter()
            .zip(kinds)
            .map(|(r, kind)| RootInfo {
                label: r.label.clone(),
                path: r.path.clone(),
                kind,
            })
            .collect();
        let crawl_roots = roots
            .iter()
            .enumerate()
            .map(|(i, r)| CrawlRoot {
                path: r.path.clone(),
                index: i as u16,
            })
            .collect();
        let options = CrawlOptions {
            extra_excludes: config.excludes.clone(),
            use_default_excludes: true,
            indexable,
        };
        let threads = std::env::var("MESH_INDEX_THREADS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
            .clamp(1, 64);
        let patterns = compile_patterns(&config).into();
        Indexer {
            config,
            roots,
            crawl_roots,
            options,
            patterns,
            handle,
            files: BTreeMap::new(),
            rejected: BTreeMap::new(),
            threads,
            shuffle_seed: None,
            racy: std::collections::HashSet::new(),
            last_read_from: 0,
            cache: None,
            cache_misses: Vec::new(),
        }
    }

    /// Uses `threads` extraction threads (1 = sequential).
    pub fn with_threads(mut self, threads: usize) -> Indexer {
        self.threads = threads.max(1);
        self
    }

    /// Uses a persistent fact cache for extraction (see [`cache`]).
    pub fn with_cache(mut self, cache: Arc<cache::FactCache>) -> Indexer {
        self.cache = Some(cache);
        self
    }

    /// Writes what the cache learned since the last call (after a snapshot is published, so
    /// the writes never delay an answer).
    pub fn flush_cache(&mut self) {
        let Some(cache) = &self.cache else {
            return;
        };
        let misses = std::mem::take(&mut self.cache_misses);
        let mut rows = Vec::with_capacity(misses.len());
        for m in misses {
            let Some(entry) = self.files.get(&(m.root, m.path.clone())) else {
                continue;
            };
            if entry.mtime_ns != m.mtime_ns {
                continue; // changed again since; its newer version is queued on its own
            }
            // The stored facts are rebuilt from the compact entry, exactly as the fingerprint
            // sees them, so a cached entry is the same entry.
            let mut facts = entry.facts().clone();
            facts.symbols = entry.symbol_facts();
            let payload = cache::encode_facts(&facts);
            rows.push(cache::PendingRow {
                root: self.roots[m.root as usize].label.clone(),
                path: m.path.into(),
                size: m.read_size,
                mtime_ns: m.mtime_ns,
                sha: m.sha,
                payload,
            });
        }
        cache.queue(rows);
        cache.flush();
    }

    /// The cache's counters, when a cache is in use.
    pub fn cache_stats(&self) -> Option<cache::CacheStats> {
        self.cache.as_ref().map(|c| c.stats())
    }

    /// Extracts in an order shuffled by `seed` (the result must not depend on it).
    pub fn with_shuffled_order(mut self, seed: u64) -> Indexer {
        self.shuffle_seed = Some(seed);
        self
    }

    /// Crawls every root, extracts new or changed files in parallel (reusing unchanged ones),
    /// and builds a snapshot. Publishing is the caller's choice.
    pub fn rebuild(&mut self) -> Snapshot {
        let started = Instant::now();
        self.refresh();
        self.finish(started)
    }

    /// Like [`Indexer::rebuild`], but returns a snapshot only when something changed since the
    /// last run (a file added, removed, rejected or with different facts or stat). The watcher
    /// uses it so an event storm that changes nothing publishes no generation.
    pub fn rebuild_if_changed(&mut self) -> Option<Snapshot> {
        let started = Instant::now();
        self.refresh().then(|| self.finish(started))
    }

    /// Applies changed paths (absolute; files or directories, existing or deleted) without a
    /// crawl: each file is attributed to its most specific root, checked against the ignore
    /// rules and re-extracted, or dropped when it is gone. A directory, an ignore file or a path
    /// whose attribution is unclear falls back to [`Indexer::rebuild`] (which reuses unchanged
    /// files). Either way the result equals a full rebuild.
    pub fn apply_changes(&mut self, paths: &[PathBuf]) -> Snapshot {
        let started = Instant::now();
        self.update(paths);
        self.finish(started)
    }

    /// Like [`Indexer::apply_changes`], but returns a snapshot only when something changed.
    pub fn apply_changes_if_changed(&mut self, paths: &[PathBuf]) -> Option<Snapshot> {
        let started = Instant::now();
        self.update(paths).then(|| self.finish(started))
    }

    /// A snapshot of the current state, stamped with the time since `started`.
    fn finish(&self, started: Instant) -> Snapshot {
        let mut snap = self.snapshot();
        snap.build_ms = started.elapsed().as_millis() as u64;
        snap
    }

    /// Moves the files whose size and modification time match their entry (and that were
    /// not racily fresh) from `files` into `next`, unchanged; returns the rest, to extract.
    /// A first build has nothing to reuse: no key is built per file.
    fn reuse_unchanged(
        &self,
        files: Vec<crawl::CrawledFile>,
        first: bool,
        next: &mut BTreeMap<(u16, Box<str>), Arc<FileEntry>>,
    ) -> Vec<crawl::CrawledFile> {
        if first {
            return files;
        }
        let mut todo = Vec::new();
        for f in files {
            let key = (f.root, Box::<str>::from(f.rel_path.as_str()));
            // A status change after the last full read began may be a write that kept the
            // size and the mtime (`cp -p`, `rsync -a`): such a file is read again.
            let touched = f.ctime_ns.saturating_add(CTIME_SLACK_NS) > self.last_read_from;
            if let Some(old) = self.files.get(&key)
                && old.size == f.size
                && old.mtime_ns == f.mtime_ns
                && !touched
                && !self.racy.contains(&key)
            {
                next.insert(key, old.clone());
                continue;
            }
            todo.push(f);
        }
        todo
    }

    /// The crawl-and-extract half of [`Indexer::rebuild`]; true when the state changed.
    fn refresh(&mut self) -> bool {
        let started = Instant::now();
        let read_from = wall_ns();
        // A first build asks the cache about nearly every file: read the table in one scan,
        // on another thread while the crawl runs.
        let first = self.files.is_empty();
        let preload = self.cache.is_some() && first;
        let cache = self.cache.clone();
        // A first build reuses nothing, so the crawl need not stat the files it lists (their
        // extraction asks the open file instead, a path lookup less per file), nor wait for
        // the walk to end: the workers extract the files as the crawl hands them over. The
        // order they come in does not matter (the results are sorted below); the shuffle
        // test hook needs the whole list first.
        let stream = first && self.shuffle_seed.is_none();
        let this: &Indexer = self;
        let (crawl_roots, options) = (&this.crawl_roots, &this.options);
        let (crawled, streamed, loaded) = std::thread::scope(|scope| {
            let loader = cache
                .as_deref()
                .filter(|_| preload)
                .map(|c| scope.spawn(|| c.load_all()));
            if !stream {
                let crawled = if first {
                    crawl::crawl_names(&self.crawl_roots, &self.options)
                } else {
                    crawl::crawl(&self.crawl_roots, &self.options)
                };
                return (crawled, None, loader.and_then(|l| l.join().ok()));
            }
            let feed = Arc::new(Feed::default());
            let crawl_feed = feed.clone();
            let walk = move || {
                let _close = CloseOnDrop(&crawl_feed);
                crawl::crawl_names_into(crawl_roots, options, &|files| crawl_feed.push(files))
            };
            let (walker, inline) = match std::thread::Builder::new()
                .name("mesh-crawl".into())
                .spawn_scoped(scope, walk)
            {
                Ok(walker) => (Some(walker), None),
                // No thread for the walk: walk first, then extract (the feed is closed).
                Err(_) => (
                    None,
                    Some(crawl::crawl_names(&self.crawl_roots, &self.options)),
                ),
            };
            let (todo, feed) = match inline {
                Some(c) => {
                    let feed = Arc::new(Feed::of(c.files));
                    (Some(c.rejected), feed)
                }
                None => (None, feed),
            };
            let loaded = loader.and_then(|l| l.join().ok());
            let extracted = this.extract_feed(feed, this.threads, 0, loaded, true);
            let rejected = match (walker, todo) {
                (Some(walker), _) => {
                    walker
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                        .rejected
                }
                (None, rejected) => rejected.unwrap_or_default(),
            };
            let crawled = crawl::CrawlResult {
                files: Vec::new(),
                rejected,
            };
            (crawled, Some(extracted), None)
        });
        let mut rejected = rejected_map(&crawled.rejected);
        let mut next: BTreeMap<(u16, Box<str>), Arc<FileEntry>> = BTreeMap::new();
        let (results, misses) = match streamed {
            Some(extracted) => extracted,
            None => {
                let mut todo = self.reuse_unchanged(crawled.files, first, &mut next);
                if let Some(seed) = self.shuffle_seed {
                    shuffle(&mut todo, seed);
                }
                self.extract_all(todo, next.len() as u64, loaded, true)
            }
        };
        let extracted = results.len();
        self.last_read_from = read_from;
        self.cache_misses.extend(misses);
        let mut changed = false;
        self.racy.clear();
        let mut fresh = Vec::with_capacity(results.len());
        for r in results {
            match r {
                Ok(entry) => {
                    let key = (entry.root, entry.path.clone());
                    if entry.mtime_ns.saturating_add(RACY_NS) > read_from {
                        self.racy.insert(key.clone());
                    }
                    let entry = match self.files.get(&key) {
                        Some(old) if **old == entry => old.clone(),
                        _ => {
                            changed = true;
                            Arc::new(entry)
                        }
                    };
                    fresh.push((key, entry));
                }
                Err(rej) => {
                    rejected.insert((rej.root, rej.path.clone()), rej);
                }
            }
        }
        if next.is_empty() {
            // Each worker sorted its results, so this is a few sorted runs: collecting
            // sorts them in linear time and builds the tree in bulk, instead of one search per
            // insert.
            next = fresh.into_iter().collect();
        } else {
            next.extend(fresh);
        }
        // Same length and nothing new means the same set of files.
        changed |= next.len() != self.files.len() || rejected != self.rejected;
        self.files = next;
        self.rejected = rejected;
        tracing::info!(
            target: "mesh::index",
            files = self.files.len(),
            rejected = self.rejected.len(),
            extracted,
            changed,
            ms = started.elapsed().as_millis() as u64,
            "index built"
        );
        changed
    }

    /// Extracts `todo` on the worker threads. A `full` refresh reports progress on top of
    /// `reused` files and uses the cache: files are looked up in `loaded` (a preloaded table)
    /// or through one connection per thread, and the files that had to be extracted come back
    /// as misses; the watcher's few changed files (`full: false`) are read without either.
    /// See [`Extraction`] for the per-file time cap.
    fn extract_all(
        &self,
        todo: Vec<crawl::CrawledFile>,
        reused: u64,
        loaded: Option<cache::LoadedRows>,
        full: bool,
    ) -> (Vec<Result<FileEntry, RejectedFile>>, Vec<CacheMiss>) {
        let workers = self.threads.min(todo.len().max(1));
        self.extract_feed(Arc::new(Feed::of(todo)), workers, reused, loaded, full)
    }

    /// [`Indexer::extract_all`] over a feed that may still be filling, on `workers` threads.
    fn extract_feed(
        &self,
        feed: Arc<Feed>,
        workers: usize,
        reused: u64,
        loaded: Option<cache::LoadedRows>,
        full: bool,
    ) -> (Vec<Result<FileEntry, RejectedFile>>, Vec<CacheMiss>) {
        let progress = full;
        if progress {
            self.handle
                .set_progress(reused, reused + feed.total() as u64);
        }
        let work = Arc::new(Extraction {
            feed: feed.clone(),
            done: AtomicUsize::new(0),
            roots: self.roots.clone(),
            patterns: self.patterns.clone(),
            handle: self.handle.clone(),
            cache: self.cache.clone().filter(|_| full),
            loaded,
            progress: progress.then_some(reused),
            finished: Mutex::new(0),
            finished_cv: Condvar::new(),
        });
        let out = work.run(workers.max(1), extract_cap());
        if progress {
            let total = reused + feed.total() as u64;
            self.handle.set_progress(total, total);
        }
        out
    }

    /// A snapshot of the current state.
    fn snapshot(&self) -> Snapshot {
        Snapshot::build(
            self.config.base_dir.clone(),
            self.roots.clone(),
            self.files.values().cloned().collect(),
            self.rejected.values().cloned().collect(),
        )
    }

    /// The path-by-path half of [`Indexer::apply_changes`]; true when the state changed.
    fn update(&mut self, paths: &[PathBuf]) -> bool {
        let read_from = wall_ns();
        let is_git = |p: &Path| p.components().any(|c| c.as_os_str() == ".git");
        for path in paths {
            if is_git(path) {
                continue;
            }
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            // A root itself (or a directory holding one) appearing or vanishing.
            let holds_root = self.roots.iter().any(|r| r.path.starts_with(path));
            if name == ".gitignore" || holds_root || path.is_dir() {
                self.distrust(paths);
                return self.refresh();
            }
        }
        // A vanished directory (moved or deleted) takes files with it: rebuild.
        for path in paths {
            if !path.exists()
                && let Some((root, rel)) = self.attribute(path)
            {
                let prefix = format!("{rel}/");
                let start = (root, Box::<str>::from(prefix.as_str()));
                if self
                    .files
                    .range(start..)
                    .next()
                    .is_some_and(|((r, p), _)| *r == root && p.starts_with(&prefix))
                {
                    self.distrust(paths);
                    return self.refresh();
                }
            }
        }
        // First what each path was and whether it is to be read again; then the reads, on the
        // extraction workers (isolated and time-capped like a full refresh); then the merge.
        let mut pending = Vec::new();
        let mut todo = Vec::new();
        for path in paths {
            let Some((root, rel)) = self.attribute(path) else {
                continue;
            };
            let key = (root, Box::<str>::from(rel.as_str()));
            let old_file = self.files.remove(&key);
            let old_rejected = self.rejected.remove(&(root, rel.clone()));
            if indexable(&rel)
                && let Ok(meta) = std::fs::symlink_metadata(path)
                && meta.file_type().is_file()
                && !crawl::is_ignored(&self.roots[root as usize].path, &rel, false, &self.options)
                && !rel.split('/').any(|c| c == ".git")
            {
                let mtime_ns = crawl::mtime_ns(&meta);
                if mtime_ns.saturating_add(RACY_NS) > read_from {
                    self.racy.insert(key.clone());
                } else {
                    self.racy.remove(&key);
                }
                todo.push(crawl::CrawledFile {
                    root,
                    rel_path: rel.clone(),
                    size: meta.len(),
                    mtime_ns,
                    ctime_ns: crawl::ctime_ns(&meta),
                    stat_known: true,
                });
            }
            pending.push((key, rel, old_file, old_rejected));
        }
        let mut read: std::collections::HashMap<(u16, String), Result<FileEntry, RejectedFile>> =
            std::collections::HashMap::new();
        if !todo.is_empty() {
            let (results, _) = self.extract_all(todo, 0, None, false);
            for r in results {
                let key = match &r {
                    Ok(entry) => (entry.root, entry.path.to_string()),
                    Err(rej) => (rej.root, rej.path.clone()),
                };
                read.insert(key, r);
            }
        }
        let mut changed = false;
        for (key, rel, old_file, old_rejected) in pending {
            let root = key.0;
            let (mut new_file, mut new_rejected) = (None, None);
            match read.remove(&(root, rel.clone())) {
                Some(Ok(entry)) => new_file = Some(entry),
                Some(Err(rej)) => new_rejected = Some(rej),
                None => {}
            }
            changed |= old_rejected != new_rejected || old_file.as_deref() != new_file.as_ref();
            if let Some(entry) = new_file {
                let entry = match old_file {
                    Some(old) if *old == entry => old,
                    _ => Arc::new(entry),
                };
                self.files.insert(key, entry);
            }
            if let Some(rej) = new_rejected {
                self.rejected.insert((root, rel), rej);
            }
        }
        changed
    }

    /// Marks the files named by `paths`, and every file below a named directory, for
    /// re-reading by the next refresh: a change reported by name must not be lost to a
    /// size-and-mtime match (a swap of two files written in the same timestamp tick).
    fn distrust(&mut self, paths: &[PathBuf]) {
        for path in paths {
            let Some((root, rel)) = self.attribute(path) else {
                continue;
            };
            let prefix = format!("{rel}/");
            let below: Vec<(u16, Box<str>)> = self
                .files
                .range((root, Box::<str>::from(prefix.as_str()))..)
                .take_while(|((r, p), _)| *r == root && p.starts_with(&prefix))
                .map(|(k, _)| k.clone())
                .collect();
            self.racy.extend(below);
            self.racy.insert((root, rel.into_boxed_str()));
        }
    }

    /// The most specific root containing `path`, and the root-relative path with `/`.
    fn attribute(&self, path: &Path) -> Option<(u16, String)> {
        let mut best: Option<(u16, usize)> = None;
        for (i, r) in self.roots.iter().enumerate() {
            if path.starts_with(&r.path) {
                let depth = r.path.components().count();
                if best.is_none_or(|(_, d)| depth > d) {
                    best = Some((i as u16, depth));
                }
            }
        }
        let (root, _) = best?;
        let rel = path.strip_prefix(&self.roots[root as usize].path).ok()?;
        let rel = rel.to_str()?.replace('\\', "/");
        (!rel.is_empty()).then_some((root, rel))
    }

    /// The roots this indexer covers.
    pub fn roots(&self) -> &[RootInfo] {
        &self.roots
    }

    /// The absolute root directories (for the watcher).
    pub fn root_paths(&self) -> Vec<PathBuf> {
        self.roots.iter().map(|r| r.path.clone()).collect()
    }
}

/// The crawl's rejections as the index lists them, keyed by root and path. Inserted one by
/// one (the last entry of a key winning): `collect()` would sort them first, a sort instance
/// of its own for this element type (the size budget, docs/ARCHITECTURE.md §7).
fn rejected_map(crawled: &[crawl::Rejected]) -> BTreeMap<(u16, String), RejectedFile> {
    let mut rejected = BTreeMap::new();
    rejected.extend(crawled.iter().map(|r| {
        let rej = RejectedFile {
            root: r.root,
            path: r.rel_path.clone(),
            label: r.reason.label(),
            reason: r.reason.to_string(),
            size: r.size,
        };
        ((rej.root, rej.path.clone()), rej)
    }));
    rejected
}

/// A deterministic Fisher–Yates shuffle (test hook).
fn shuffle<T>(items: &mut [T], seed: u64) {
    let mut state = seed | 1;
    for i in (1..items.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        items.swap(i, (state % (i as u64 + 1)) as usize);
    }
}

/// The background indexer thread: builds the first snapshot, then keeps it fresh (see
/// [`watch`]). Dropping this value leaves the thread running; [`IndexerThread::stop`] ends it.
pub struct IndexerThread {
    stop: Arc<watch::StopSignal>,
    join: std::thread::JoinHandle<()>,
}

impl IndexerThread {
    /// Stops watching and waits for the thread to finish its current reload.
    pub fn stop(self) {
        self.stop.request();
        let _ = self.join.join();
    }
}

/// Starts indexing the workspace on a background thread and publishes each snapshot to
/// `handle`, then follows changes with the watcher configured by the environment
/// ([`watch::WatchOptions::from_env`]). Returns at once: `initialize` must never wait for the
/// index. `None` when the thread cannot be started (logged).
pub fn spawn_indexer(config: Arc<Config>, handle: Arc<IndexHandle>) -> Option<IndexerThread> {
    spawn_indexer_with(config, handle, watch::WatchOptions::from_env())
}

/// [`spawn_indexer`] with explicit watcher settings.
pub fn spawn_indexer_with(
    config: Arc<Config>,
    handle: Arc<IndexHandle>,
    watch_options: watch::WatchOptions,
) -> Option<IndexerThread> {
    // Test hook (fixtures only): publish the first snapshot late, so the tests can watch a
    // tool call wait for it.
    let delay_ms: u64 = std::env::var("MESH_TEST_FIXTURES")
        .ok()
        .filter(|v| v == "1")
        .and_then(|_| std::env::var("MESH_TEST_INDEX_DELAY_MS").ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let stop = Arc::new(watch::StopSignal::default());
    let thread_stop = stop.clone();
    let spawned = std::thread::Builder::new()
        .name("mesh-indexer".into())
        .spawn(move || {
            if delay_ms > 0 {
                for i in 1..=10u64 {
                    handle.set_progress(i * 10, 100);
                    std::thread::sleep(std::time::Duration::from_millis(delay_ms / 10));
                }
            }
            handle.wait_start_gate();
            let cache = cache::open_for(&config).map(Arc::new);
            // The indexer and watcher are one unit of work: a panic in either (outside the
            // per-file isolation: the crawl, the graph, the watcher itself) is logged and the
            // unit starts over from a fresh state (crawl, publish, watch), after a pause that
            // doubles with each failure in a row (1 s up to 1 min).
            let mut failures = 0u32;
            loop {
                let started = Instant::now();
                let served = crate::isolate::catch(|| {
                    let mut indexer = Indexer::new(config.clone(), handle.clone());
                    if let Some(cache) = &cache {
                        indexer = indexer.with_cache(cache.clone());
                    }
                    watch::serve(&mut indexer, &handle, &watch_options, &thread_stop);
                });
                let Err(panic) = served else { break };
                if started.elapsed() > Duration::from_secs(300) {
                    failures = 0; // a failure after a long good run starts the count again
                }
                failures += 1;
                handle.note_restart(&panic.location);
                let pause = Duration::from_secs(1 << (failures - 1).min(6));
                tracing::error!(
                    target: "mesh::index",
                    "the indexer panicked at {}: {}; starting it over in {} s (failure {failures} in a row)",
                    panic.location,
                    panic.message,
                    pause.as_secs()
                );
                if thread_stop.sleep(pause) {
                    break;
                }
            }
        });
    match spawned {
        Ok(join) => Some(IndexerThread { stop, join }),
        Err(e) => {
            tracing::error!(target: "mesh::index", "cannot start the indexer thread: {e}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_test_path;
    use std::time::Duration;

    #[test]
    fn test_paths() {
        for p in [
            "src/test/java/x/PaymentServiceImplTest.java",
            "a/__tests__/x.ts",
            "x.spec.ts",
            "x.test.tsx",
            "x.e2e-spec.ts",
            "server_test.go",
            "tests/test_servicer.py",
            "test_x.py",
            "UserServiceIT.java",
            "UserServiceTests.cs",
        ] {
            assert!(is_test_path(p), "{p}");
        }
        for p in [
            "contest.ts",
            "attestation/x.go",
            "protest_it.ts",
            "latest/x.py",
            "Test.java",
            "ABTesting.java",
            "src/main.rs",
        ] {
            assert!(!is_test_path(p), "{p}");
        }
    }

    #[test]
    fn a_given_up_hang_stops_when_its_flag_is_raised() {
        // The fixture hang polls the flag like an extractor's loop: a worker asked to stop
        // ends, instead of sleeping out its minute.
        let cancel = crate::index::lex::cancel::Cancel::new();
        let c = cancel.clone();
        let worker = std::thread::spawn(move || c.scope(|| super::hang(Duration::from_secs(60))));
        std::thread::sleep(Duration::from_millis(20));
        assert!(!worker.is_finished());
        cancel.cancel();
        // Joining returns (the test would sit for a minute otherwise).
        worker.join().unwrap();
    }

    #[test]
    fn read_capped_reads_what_is_there_whatever_the_crawl_saw() {
        let dir = std::env::temp_dir().join(format!("mesh-read-capped-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.txt");
        std::fs::write(&path, b"hello world").unwrap();
        let read = |size, limit| super::read_capped(&path, size, limit).unwrap();
        assert_eq!(read(11, 100), b"hello world"); // as crawled
        assert_eq!(read(5, 100), b"hello world"); // grew since the crawl
        assert_eq!(read(20, 100), b"hello world"); // shrank since the crawl
        assert_eq!(read(0, 100), b"hello world");
        assert_eq!(read(11, 4), b"hello"); // oversized: one byte past the limit
        assert_eq!(read(3, 4), b"hello");
        assert_eq!(read(11, 11), b"hello world");
        std::fs::write(&path, b"").unwrap();
        assert_eq!(read(0, 100), b"");
        assert_eq!(read(7, 100), b"");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
