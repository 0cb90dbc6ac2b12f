//! Live updates: the index follows the workspace as it changes.
//!
//! On Linux every directory of every root is watched with inotify (one non-recursive watch
//! per directory, planned by the same ignore rules as the crawl, so `node_modules/`, `target/`
//! and other excluded or git-ignored directories cost nothing; directories created later are
//! added as they appear). Changes are debounced ([`DEBOUNCE`] of quiet) and handed to
//! [`Indexer::apply_changes_if_changed`], which re-extracts only the changed files.
//!
//! Git operations are gated: the repository's git directory is watched non-recursively (and
//! `refs/` a few levels deep) for lock files and in-progress markers. While `index.lock`,
//! `HEAD.lock` or a ref lock exists, or a merge/rebase/cherry-pick marker exists and the git
//! directory is still busy, changes accumulate without being published; when the operation
//! ends they are published as exactly one generation. A hold never lasts longer than
//! [`MAX_HOLD`], so a lock left behind by a crashed git cannot freeze the index.
//!
//! When nothing is pending the watcher blocks in `poll(2)` with no timeout: zero CPU when
//! idle. When inotify is unavailable (not Linux, no instances left) or the per-user watch
//! limit is reached, it logs a warning once and falls back to a slow periodic rescan, which
//! `index_status` reports with the reason. `MESH_WATCH=poll` forces the fallback (useful on
//! network file systems, where inotify does not see remote changes) and `MESH_WATCH=off`
//! disables live updates.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use super::Indexer;
use super::ignore::{DirWalk, IgnoreStack, find_repo, read_ignore_file, repo_at};
use super::snapshot::IndexHandle;

/// Quiet time after the last change before a reload.
pub const DEBOUNCE: Duration = Duration::from_millis(50);
/// Longest a change waits while other changes keep arriving (a steady writer still gets its
/// edits published).
pub const MAX_BATCH_DELAY: Duration = Duration::from_millis(500);
/// With a merge/rebase/cherry-pick marker present, how long the git directory must be quiet
/// before held changes are released (git moves between steps faster than this).
pub const GIT_SETTLE: Duration = Duration::from_millis(300);
/// The longest reloads are held for one git operation; past it a stuck lock is ignored until
/// it disappears.
pub const MAX_HOLD: Duration = Duration::from_secs(60);
/// The shortest interval between two rescans in the polling fallback.
pub const POLL_INTERVAL_MIN: Duration = Duration::from_secs(2);
/// The polling fallback spends at most 1/this of the time rescanning.
const POLL_DUTY_DIVISOR: u32 = 20;
/// How deep below `refs/` directories are watched for ref locks.
const REFS_DEPTH: u8 = 5;
/// Files and directories in a git directory that say an operation is in progress.
const OPERATION_MARKERS: [&str; 5] = [
    "MERGE_HEAD",
    "rebase-merge",
    "rebase-apply",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
];
/// Lock files git takes for the index and `HEAD` (ref locks are tracked from events).
const MAIN_LOCKS: [&str; 2] = ["index.lock", "HEAD.lock"];

/// How the workspace is watched, as `index_status` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchMode {
    /// Live updates are off (`MESH_WATCH=off`, or an index built once without a watcher).
    Off,
    /// The watcher is being set up.
    Starting,
    /// inotify watches on `dirs` worktree directories and `git_dirs` git directories.
    #[allow(missing_docs)]
    Inotify { dirs: usize, git_dirs: usize },
    /// A full rescan every `every_ms`, because `reason`.
    #[allow(missing_docs)]
    Polling { every_ms: u64, reason: String },
}

impl fmt::Display for WatchMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WatchMode::Off => {
                f.write_str("off (live updates disabled; the index is not refreshed)")
            }
            WatchMode::Starting => f.write_str("starting"),
            WatchMode::Inotify { dirs, git_dirs } => {
                write!(f, "inotify, {dirs} directories watched")?;
                if *git_dirs > 0 {
                    write!(f, " plus {git_dirs} git directories")?;
                }
                Ok(())
            }
            WatchMode::Polling { every_ms, reason } => write!(
                f,
                "polling fallback, full rescan every {} s ({reason})",
                crate::render::decimal(*every_ms, 1000, 1)
            ),
        }
    }
}

/// Which watcher to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchKind {
    /// inotify where available, polling otherwise.
    Auto,
    /// Always the polling fallback.
    Poll,
    /// No live updates.
    Off,
}

/// Watcher settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchOptions {
    /// inotify with a polling fallback, polling only, or off (`MESH_WATCH`).
    pub kind: WatchKind,
    /// At most this many inotify watches (beyond it: polling fallback, as when the kernel's
    /// `max_user_watches` is reached). `None`: only the kernel's limit.
    pub max_watches: Option<usize>,
    /// The shortest interval between two rescans in the polling fallback.
    pub poll_interval: Duration,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            kind: WatchKind::Auto,
            max_watches: None,
            poll_interval: POLL_INTERVAL_MIN,
        }
    }
}

impl WatchOptions {
    /// The settings from the environment: `MESH_WATCH` (`inotify`/`auto`, `poll`, `off`),
    /// `MESH_WATCH_LIMIT` (a watch count) and `MESH_WATCH_POLL_MS` (the rescan interval).
    /// An unknown value is logged and ignored.
    pub fn from_env() -> WatchOptions {
        let mut o = WatchOptions::default();
        if let Ok(v) = std::env::var("MESH_WATCH") {
            match v.trim().to_ascii_lowercase().as_str() {
                "" | "auto" | "inotify" | "on" => {}
                "poll" | "polling" => o.kind = WatchKind::Poll,
                "off" | "0" | "false" | "no" => o.kind = WatchKind::Off,
                other => tracing::warn!(target: "mesh::watch",
                    "MESH_WATCH={other:?} is not one of auto, poll, off; using auto"),
            }
        }
        if let Ok(v) = std::env::var("MESH_WATCH_LIMIT") {
            match v.trim().parse::<usize>() {
                Ok(n) => o.max_watches = Some(n),
                Err(_) => tracing::warn!(target: "mesh::watch",
                    "MESH_WATCH_LIMIT={v:?} is not a number; ignored"),
            }
        }
        if let Ok(v) = std::env::var("MESH_WATCH_POLL_MS") {
            match v.trim().parse::<u64>() {
                Ok(ms) => o.poll_interval = Duration::from_millis(ms.max(10)),
                Err(_) => tracing::warn!(target: "mesh::watch",
                    "MESH_WATCH_POLL_MS={v:?} is not a number of milliseconds; ignored"),
            }
        }
        o
    }
}

/// Asks a running indexer thread to stop; wakes it from any wait.
#[derive(Debug, Default)]
pub struct StopSignal {
    stopped: Mutex<bool>,
    cv: Condvar,
    #[cfg(target_os = "linux")]
    waker: Mutex<Option<crate::sys::inotify::Waker>>,
}

impl StopSignal {
    /// Requests the stop (idempotent).
    pub fn request(&self) {
        if let Ok(mut s) = self.stopped.lock() {
            *s = true;
        }
        self.cv.notify_all();
        #[cfg(target_os = "linux")]
        if let Ok(w) = self.waker.lock()
            && let Some(w) = w.as_ref()
        {
            w.wake();
        }
    }

    /// True once a stop was requested.
    pub fn requested(&self) -> bool {
        self.stopped.lock().map(|s| *s).unwrap_or(true)
    }

    /// Sleeps up to `d`; true when a stop was requested (before or during the sleep).
    pub(crate) fn sleep(&self, d: Duration) -> bool {
        let Ok(guard) = self.stopped.lock() else {
            return true;
        };
        match self.cv.wait_timeout_while(guard, d, |stopped| !*stopped) {
            Ok((stopped, _)) => *stopped,
            Err(_) => true,
        }
    }

    #[cfg(target_os = "linux")]
    fn set_waker(&self, waker: Option<crate::sys::inotify::Waker>) {
        if let Ok(mut w) = self.waker.lock() {
            *w = waker;
        }
        // A stop requested before the waker existed must still end the wait.
        if self.requested() {
            self.request();
        }
    }
}

// ─── the git gate (pure) ─────────────────────────────────────────────────────────────────

/// What the git directories look like right now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitState {
    /// Lock files that exist (`index.lock`, `HEAD.lock`, `refs/**.lock`, …).
    pub locks: Vec<PathBuf>,
    /// The first in-progress marker found (`MERGE_HEAD`, `rebase-merge`, …).
    pub operation: Option<&'static str>,
}

/// The gate's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hold {
    /// Reloads are held.
    pub held: bool,
    /// When the verdict may change without a new event (settle or cap expiry).
    pub until: Option<Instant>,
}

/// Decides, from the git state and the time of the last git-directory activity, whether
/// reloads are held. Pure: the caller supplies the state and the clock.
#[derive(Debug, Default, Clone)]
pub struct GitGate {
    last_activity: Option<Instant>,
    hold_since: Option<Instant>,
}

impl GitGate {
    /// Something changed in a git directory at `now`.
    pub fn activity(&mut self, now: Instant) {
        self.last_activity = Some(now);
    }

    /// Held while a lock exists, or while an operation marker exists and the git directory
    /// was active less than [`GIT_SETTLE`] ago; never longer than [`MAX_HOLD`] in one stretch.
    pub fn decide(&mut self, state: &GitState, now: Instant) -> Hold {
        let settle_end = self.last_activity.map(|t| t + GIT_SETTLE);
        let settling = state.operation.is_some() && settle_end.is_some_and(|end| now < end);
        if state.locks.is_empty() && !settling {
            self.hold_since = None;
            return Hold {
                held: false,
                until: None,
            };
        }
        let since = *self.hold_since.get_or_insert(now);
        let cap = since + MAX_HOLD;
        if now >= cap {
            return Hold {
                held: false,
                until: None,
            };
        }
        let until = match settle_end {
            Some(end) if state.locks.is_empty() => end.min(cap),
            _ => cap,
        };
        Hold {
            held: true,
            until: Some(until),
        }
    }
}

// ─── pending changes ─────────────────────────────────────────────────────────────────────

/// Changes seen but not yet applied.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ChangeSet {
    /// Changed paths (files or directories, existing or gone), absolute.
    pub paths: BTreeSet<PathBuf>,
    /// A full rescan is needed (events were lost, ignore rules outside the tree changed).
    pub full: bool,
    /// The set of watched directories must be planned again (ignore rules changed).
    pub replan: bool,
}

impl ChangeSet {
    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty() && !self.full
    }

    /// The number shown as "pending changes".
    pub fn len(&self) -> u64 {
        self.paths.len() as u64 + u64::from(self.full)
    }
}

/// Whether a changed entry's name is worth a reload: an indexable file or an ignore file.
fn interesting_file(name: &str) -> bool {
    name == ".gitignore" || super::indexable(name)
}

// ─── planning: which directories to watch ────────────────────────────────────────────────

/// A git directory (and its common directory, which differs for linked worktrees).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct GitDir {
    git: PathBuf,
    common: PathBuf,
}

/// The git directory of the repository whose top is `top` (a `.git` directory, or a `.git`
/// file pointing elsewhere as in worktrees and submodules).
fn git_dir_of(top: &Path) -> Option<GitDir> {
    let dot_git = top.join(".git");
    let meta = std::fs::symlink_metadata(&dot_git).ok()?;
    let git = if meta.is_dir() {
        dot_git
    } else if meta.is_file() {
        let text = std::fs::read_to_string(&dot_git).ok()?;
        let target = text.trim_end().strip_prefix("gitdir:")?.trim();
        top.join(target)
    } else {
        return None;
    };
    let git = std::fs::canonicalize(&git).unwrap_or(git);
    let common = match std::fs::read_to_string(git.join("commondir")) {
        Ok(c) => {
            let c = git.join(c.trim_end());
            std::fs::canonicalize(&c).unwrap_or(c)
        }
        Err(_) => git.clone(),
    };
    Some(GitDir { git, common })
}

/// The ignore stack for checking entries of `rel_dir` (relative to `root`), entered the way
/// the crawl enters directories; `None` when `rel_dir` or one of its parents is excluded.
fn stack_for(root: &Path, rel_dir: &str, patterns: &[&str]) -> Option<IgnoreStack> {
    let mut stack = IgnoreStack::new(root, patterns);
    if rel_dir.is_empty() {
        return Some(stack);
    }
    let mut abs = root.to_path_buf();
    let mut dir = String::new();
    let parts: Vec<&str> = rel_dir.split('/').filter(|p| !p.is_empty()).collect();
    for (i, part) in parts.iter().enumerate() {
        if !dir.is_empty() {
            dir.push('/');
        }
        dir.push_str(part);
        if stack.is_ignored(&dir, true) {
            return None;
        }
        if i + 1 == parts.len() {
            break;
        }
        abs.push(part);
        if repo_at(&abs).is_some() {
            stack.push_nested_repo(&dir, &abs);
        }
        if let Some(text) = read_ignore_file(&abs.join(".gitignore")) {
            stack.push_gitignore(&dir, &text);
        }
    }
    Some(stack)
}

/// Lists the directories to watch below `rel_start` of `root` (included), skipping excluded
/// and git-ignored directories, `.git`, symlinks and the `nested` roots (watched as their own
/// roots), exactly as the crawl prunes them. Repository tops found on the way (directories
/// holding `.git`) go to `git_tops`.
fn plan_dirs(
    root: &Path,
    rel_start: &str,
    nested: &HashSet<String>,
    patterns: &[&str],
    dirs: &mut Vec<PathBuf>,
    git_tops: &mut Vec<PathBuf>,
) {
    let Some(mut stack) = stack_for(root, rel_start, patterns) else {
        return;
    };
    let mut walk = DirWalk::new(rel_start.to_string());
    while let Some(dir) = walk.next_dir(&mut stack) {
        let abs = if dir.is_empty() {
            root.to_path_buf()
        } else {
            root.join(&dir)
        };
        let Ok(listing) = std::fs::read_dir(&abs) else {
            continue;
        };
        dirs.push(abs.clone());
        let mut subdirs = Vec::new();
        let (mut has_git, mut has_ignore) = (false, false);
        for entry in listing.flatten() {
            let Ok(ft) = entry.file_type() else { continue };
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if name == ".git" {
                has_git = true;
            } else if name == ".gitignore" && ft.is_file() {
                has_ignore = true;
            } else if ft.is_dir() {
                subdirs.push(name);
            }
        }
        let depth = stack.depth();
        if has_git {
            git_tops.push(abs.clone());
            if !dir.is_empty() {
                stack.push_nested_repo(&dir, &abs);
            }
        }
        if has_ignore && let Some(text) = read_ignore_file(&abs.join(".gitignore")) {
            stack.push_gitignore(&dir, &text);
        }
        walk.leave_at(depth);
        crate::order::sort(&mut subdirs);
        for name in subdirs.into_iter().rev() {
            let rel = if dir.is_empty() {
                name
            } else {
                format!("{dir}/{name}")
            };
            if nested.contains(&rel) || stack.is_ignored(&rel, true) {
                continue;
            }
            walk.enter(rel);
        }
    }
}

/// Root-relative path with `/` separators.
fn rel_of(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let mut out = String::new();
    for comp in rel.components() {
        if !out.is_empty() {
            out.push('/');
        }
        out.push_str(comp.as_os_str().to_str()?);
    }
    Some(out)
}

/// The roots nested inside `root` (root-relative), which its own walk skips.
fn nested_roots(root: &Path, roots: &[PathBuf]) -> HashSet<String> {
    roots
        .iter()
        .filter(|other| other.as_path() != root)
        .filter_map(|other| rel_of(root, other))
        .filter(|rel| !rel.is_empty())
        .collect()
}

/// Every git directory that governs the roots: the enclosing repository of each root and
/// the nested repositories found in `tops`.
fn git_dirs_for(roots: &[PathBuf], tops: &[PathBuf]) -> Vec<GitDir> {
    let mut out: Vec<GitDir> = Vec::new();
    let enclosing = roots.iter().filter_map(|r| find_repo(r)).map(|r| r.top);
    for top in enclosing.chain(tops.iter().cloned()) {
        if let Some(g) = git_dir_of(&top)
            && !out.contains(&g)
        {
            out.push(g);
        }
    }
    out
}

/// Looks at the git directories now: live locks (the tracked ones plus the main ones) and
/// the first in-progress marker.
fn probe_git(git_dirs: &[GitDir], tracked: &mut BTreeSet<PathBuf>) -> GitState {
    let exists = |p: &Path| std::fs::symlink_metadata(p).is_ok();
    tracked.retain(|p| exists(p));
    let mut state = GitState {
        locks: tracked.iter().cloned().collect(),
        operation: None,
    };
    for g in git_dirs {
        for name in MAIN_LOCKS {
            let p = g.git.join(name);
            if !state.locks.contains(&p) && exists(&p) {
                state.locks.push(p);
            }
        }
        if state.operation.is_none() {
            state.operation = OPERATION_MARKERS
                .into_iter()
                .find(|m| exists(&g.git.join(m)));
        }
    }
    state
}

// ─── the driver ──────────────────────────────────────────────────────────────────────────

/// Runs the indexer thread's life: builds and publishes the first snapshot, sets up the
/// watcher, catches up with what changed while the watches were not all in place yet (a
/// stat-only rescan), then follows the workspace until `stop` is requested. The first answer
/// does not wait for the watch registration (a second walk of every directory).
pub fn serve(
    indexer: &mut Indexer,
    handle: &IndexHandle,
    options: &WatchOptions,
    stop: &StopSignal,
) {
    let roots = indexer.root_paths();
    let patterns: Vec<String> = indexer
        .options
        .exclude_patterns()
        .into_iter()
        .map(str::to_string)
        .collect();
    let fallback_reason = match options.kind {
        WatchKind::Off => {
            handle.set_watch_mode(WatchMode::Off);
            handle.publish(indexer.rebuild());
            indexer.flush_cache();
            return;
        }
        WatchKind::Poll => {
            handle.publish(indexer.rebuild());
            indexer.flush_cache();
            "MESH_WATCH=poll".to_string()
        }
        WatchKind::Auto => {
            handle.set_watch_mode(WatchMode::Starting);
            handle.publish(indexer.rebuild());
            fixture_delay("MESH_TEST_WATCH_DELAY_MS");
            match inotify_start(&roots, &patterns, options) {
                Ok(mut watcher) => {
                    handle.set_watch_mode(watcher.mode());
                    #[cfg(target_os = "linux")]
                    stop.set_waker(Some(watcher.ino.waker()));
                    // An edit made after the crawl read a directory and before its watch was
                    // added has no event: the rescan (stat-only for unchanged files) sees it.
                    if let Some(snap) = indexer.rebuild_if_changed() {
                        handle.publish(snap);
                    }
                    indexer.flush_cache();
                    let ended = inotify_loop(&mut watcher, indexer, handle, stop);
                    #[cfg(target_os = "linux")]
                    stop.set_waker(None);
                    match ended {
                        Ok(()) => return,
                        Err(reason) => {
                            drop(watcher);
                            warn_fallback(&reason);
                            // Whatever the lost watcher had not applied, a rescan catches.
                            if let Some(snap) = indexer.rebuild_if_changed() {
                                handle.publish(snap);
                            }
                            handle.set_watch_state(0, false);
                            poll_loop(indexer, handle, options, stop, &roots, reason);
                            return;
                        }
                    }
                }
                Err(reason) => {
                    warn_fallback(&reason);
                    indexer.flush_cache();
                    reason
                }
            }
        }
    };
    poll_loop(indexer, handle, options, stop, &roots, fallback_reason);
}

/// Test hook (fixtures only): sleeps for the milliseconds in environment variable `var`, so a
/// test can change the tree inside a window of the start-up: `MESH_TEST_WATCH_DELAY_MS`
/// between the first snapshot and the watch registration, `MESH_TEST_WATCH_PLAN_DELAY_MS`
/// between listing the directories and adding their watches.
fn fixture_delay(var: &str) {
    if !crate::isolate::fixtures_enabled() {
        return;
    }
    if let Some(ms) = std::env::var(var).ok().and_then(|v| v.parse::<u64>().ok()) {
        std::thread::sleep(Duration::from_millis(ms));
    }
}

fn warn_fallback(reason: &str) {
    tracing::warn!(target: "mesh::watch",
        "live updates fall back to periodic rescans: {reason}. index_status shows the mode; \
         raise /proc/sys/fs/inotify/max_user_watches (or exclude large directories in \
         mesh-mcp.toml) to get inotify back");
}

/// The polling fallback: a full (stat-only for unchanged files) rescan every interval,
/// skipped while a git lock is held; the interval grows with the cost of a rescan.
fn poll_loop(
    indexer: &mut Indexer,
    handle: &IndexHandle,
    options: &WatchOptions,
    stop: &StopSignal,
    roots: &[PathBuf],
    reason: String,
) {
    // The enclosing repositories gate the rescans (nested ones are not looked for: that
    // would be a walk of its own).
    let git_dirs = git_dirs_for(roots, &[]);
    let mut tracked = BTreeSet::new();
    let mut interval = options.poll_interval;
    let mut gate = GitGate::default();
    loop {
        handle.set_watch_mode(WatchMode::Polling {
            every_ms: interval.as_millis() as u64,
            reason: reason.clone(),
        });
        if stop.sleep(interval) {
            return;
        }
        let hold = gate.decide(&probe_git(&git_dirs, &mut tracked), Instant::now());
        handle.set_watch_state(0, hold.held);
        if hold.held {
            continue;
        }
        let started = Instant::now();
        if let Some(snap) = indexer.rebuild_if_changed() {
            handle.publish(snap);
            indexer.flush_cache();
        }
        interval = options
            .poll_interval
            .max(started.elapsed() * POLL_DUTY_DIVISOR);
    }
}

/// The inotify loop: block while idle, collect changes, debounce, respect the git gate,
/// publish. Returns `Err(reason)` when inotify cannot go on (watch limit, read error).
fn inotify_loop(
    watcher: &mut InotifyWatcher,
    indexer: &mut Indexer,
    handle: &IndexHandle,
    stop: &StopSignal,
) -> Result<(), String> {
    let mut changes = ChangeSet::default();
    let mut gate = GitGate::default();
    let mut first_change: Option<Instant> = None;
    let mut last_event = Instant::now();
    loop {
        if stop.requested() {
            return Ok(());
        }
        let now = Instant::now();
        let hold = if watcher.has_git() {
            gate.decide(&watcher.git_state(), now)
        } else {
            Hold {
                held: false,
                until: None,
            }
        };
        handle.set_watch_state(changes.len(), hold.held);
        let timeout = if changes.is_empty() {
            None
        } else if hold.held {
            hold.until.map(|u| u.saturating_duration_since(now))
        } else {
            let due = (last_event + DEBOUNCE).min(first_change.unwrap_or(now) + MAX_BATCH_DELAY);
            if now >= due {
                flush(watcher, indexer, handle, &mut changes)?;
                first_change = None;
                continue;
            }
            Some(due - now)
        };
        if !watcher.wait(timeout)? {
            continue; // timeout or wake-up: re-evaluate (and check the stop flag)
        }
        let git_activity = watcher.read_changes(&mut changes)?;
        last_event = Instant::now();
        if git_activity {
            gate.activity(last_event);
        }
        if !changes.is_empty() && first_change.is_none() {
            first_change = Some(last_event);
        }
    }
}

/// Applies the pending changes and publishes a generation when anything changed.
fn flush(
    watcher: &mut InotifyWatcher,
    indexer: &mut Indexer,
    handle: &IndexHandle,
    changes: &mut ChangeSet,
) -> Result<(), String> {
    let pending = std::mem::take(changes);
    if crate::isolate::fixtures_enabled()
        && pending.paths.iter().any(|p| {
            p.file_name()
                .is_some_and(|n| n == crate::isolate::WATCHER_PANIC_FILE)
        })
    {
        panic!("test fixture: the watcher panics on purpose");
    }
    if pending.replan || pending.full {
        // New watches first, then the crawl: nothing created in between is missed.
        watcher.replan()?;
    }
    let snap = if pending.full {
        indexer.rebuild_if_changed()
    } else {
        let paths: Vec<PathBuf> = pending.paths.into_iter().collect();
        indexer.apply_changes_if_changed(&paths)
    };
    if let Some(snap) = snap {
        let generation = handle.publish(snap);
        tracing::debug!(target: "mesh::watch", generation, "reload published");
        indexer.flush_cache();
    }
    handle.set_watch_mode(watcher.mode());
    handle.set_watch_state(0, false);
    Ok(())
}

// ─── inotify (Linux) ─────────────────────────────────────────────────────────────────────

#[cfg(not(target_os = "linux"))]
struct InotifyWatcher;

#[cfg(not(target_os = "linux"))]
fn inotify_start(
    _roots: &[PathBuf],
    _patterns: &[String],
    _options: &WatchOptions,
) -> Result<InotifyWatcher, String> {
    Err("inotify is only available on Linux".to_string())
}

#[cfg(not(target_os = "linux"))]
impl InotifyWatcher {
    fn mode(&self) -> WatchMode {
        WatchMode::Off
    }
    fn has_git(&self) -> bool {
        false
    }
    fn git_state(&mut self) -> GitState {
        GitState::default()
    }
    fn wait(&self, _timeout: Option<Duration>) -> Result<bool, String> {
        Err("inotify is only available on Linux".to_string())
    }
    fn read_changes(&mut self, _changes: &mut ChangeSet) -> Result<bool, String> {
        Ok(false)
    }
    fn replan(&mut self) -> Result<(), String> {
        Ok(())
    }
}

#[cfg(target_os = "linux")]
use linux::{InotifyWatcher, inotify_start};

#[cfg(target_os = "linux")]
mod linux {
    use super::*;
    use crate::sys::inotify::{self as ino, Event, Inotify, Wait};

    /// Worktree events. `IN_MODIFY` is left out on purpose: a file is read once its writer
    /// closes it (`IN_CLOSE_WRITE`) or renames it into place (`IN_MOVED_TO`), never halfway
    /// through a slow write; `IN_CREATE` still catches hard links and other files that
    /// appear without being written.
    const TREE_MASK: u32 = ino::IN_CREATE
        | ino::IN_DELETE
        | ino::IN_MOVED_FROM
        | ino::IN_MOVED_TO
        | ino::IN_CLOSE_WRITE
        | ino::IN_DELETE_SELF
        | ino::IN_MOVE_SELF
        | ino::IN_ONLYDIR
        | ino::IN_DONT_FOLLOW
        | ino::IN_EXCL_UNLINK;
    const GIT_MASK: u32 = ino::IN_CREATE
        | ino::IN_DELETE
        | ino::IN_MOVED_FROM
        | ino::IN_MOVED_TO
        | ino::IN_CLOSE_WRITE
        | ino::IN_ONLYDIR
        | ino::IN_DONT_FOLLOW;

    /// What a watch descriptor stands for.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Kind {
        /// A worktree directory under a root.
        Tree,
        /// A git directory (or common directory), non-recursive.
        Git,
        /// `refs/` or a directory below it, at this depth.
        Refs(u8),
        /// `info/` of a common directory (for `info/exclude`).
        Info,
    }

    #[derive(Debug, Clone)]
    struct Watched {
        path: PathBuf,
        kind: Kind,
    }

    /// The inotify side of the watcher: the instance, the watch table and the git lock set.
    pub(super) struct InotifyWatcher {
        pub(super) ino: Inotify,
        roots: Vec<PathBuf>,
        patterns: Vec<String>,
        max_watches: usize,
        watches: HashMap<i32, Watched>,
        by_path: HashMap<PathBuf, i32>,
        git_dirs: Vec<GitDir>,
        locks: BTreeSet<PathBuf>,
        events: Vec<Event>,
    }

    /// Creates the instance and registers every directory to watch.
    pub(super) fn inotify_start(
        roots: &[PathBuf],
        patterns: &[String],
        options: &WatchOptions,
    ) -> Result<InotifyWatcher, String> {
        let ino = Inotify::new().map_err(|e| match e.raw_os_error() {
            Some(24) => "no inotify instance left (/proc/sys/fs/inotify/max_user_instances \
                         is reached)"
                .to_string(),
            _ => format!("inotify is unavailable: {e}"),
        })?;
        let mut w = InotifyWatcher {
            ino,
            roots: roots.to_vec(),
            patterns: patterns.to_vec(),
            max_watches: options.max_watches.unwrap_or(usize::MAX),
            watches: HashMap::new(),
            by_path: HashMap::new(),
            git_dirs: Vec::new(),
            locks: BTreeSet::new(),
            events: Vec::new(),
        };
        let started = Instant::now();
        w.replan()?;
        tracing::info!(target: "mesh::watch", dirs = w.tree_dirs(), git_dirs = w.git_dirs.len(),
            ms = started.elapsed().as_millis() as u64, "watching with inotify");
        Ok(w)
    }

    impl InotifyWatcher {
        pub(super) fn mode(&self) -> WatchMode {
            WatchMode::Inotify {
                dirs: self.tree_dirs(),
                git_dirs: self.git_dirs.len(),
            }
        }

        fn tree_dirs(&self) -> usize {
            self.watches
                .values()
                .filter(|w| w.kind == Kind::Tree)
                .count()
        }

        pub(super) fn has_git(&self) -> bool {
            !self.git_dirs.is_empty()
        }

        pub(super) fn git_state(&mut self) -> GitState {
            probe_git(&self.git_dirs, &mut self.locks)
        }

        /// Waits for events (true) or the timeout / a wake-up (false).
        pub(super) fn wait(&self, timeout: Option<Duration>) -> Result<bool, String> {
            match self.ino.wait(timeout) {
                Ok(Wait::Events) => Ok(true),
                Ok(Wait::Woken | Wait::Timeout) => Ok(false),
                Err(e) => Err(format!("waiting for inotify events failed: {e}")),
            }
        }

        fn patterns(&self) -> Vec<&str> {
            self.patterns.iter().map(String::as_str).collect()
        }

        /// Computes the wanted directories from scratch and brings the watches in line:
        /// new ones added, ones no longer wanted (now ignored, or gone) removed. Twice: a
        /// directory created after its parent was listed but before the parent's watch was
        /// added has neither a watch nor an event; the second listing, made when every watch
        /// of the first is in place, finds it (anything created later raises an event on a
        /// watched parent).
        pub(super) fn replan(&mut self) -> Result<(), String> {
            self.plan_and_add(true)?;
            self.plan_and_add(false)
        }

        fn plan_and_add(&mut self, first: bool) -> Result<(), String> {
            let patterns = self.patterns();
            let mut dirs = Vec::new();
            let mut tops = Vec::new();
            for root in &self.roots {
                let nested = nested_roots(root, &self.roots);
                plan_dirs(root, "", &nested, &patterns, &mut dirs, &mut tops);
            }
            self.git_dirs = git_dirs_for(&self.roots, &tops);
            let mut wanted: Vec<(PathBuf, Kind)> =
                dirs.into_iter().map(|d| (d, Kind::Tree)).collect();
            for g in self.git_dirs.clone() {
                wanted.push((g.git.clone(), Kind::Git));
                if g.common != g.git {
                    wanted.push((g.common.clone(), Kind::Git));
                }
                wanted.push((g.common.join("info"), Kind::Info));
                self.plan_refs(&g.common.join("refs"), 0, &mut wanted);
                self.scan_locks(&g.git);
            }
            if first {
                fixture_delay("MESH_TEST_WATCH_PLAN_DELAY_MS");
            }
            let keep: HashSet<&PathBuf> = wanted.iter().map(|(p, _)| p).collect();
            let stale: Vec<i32> = self
                .by_path
                .iter()
                .filter(|(p, _)| !keep.contains(p))
                .map(|(_, wd)| *wd)
                .collect();
            for wd in stale {
                self.forget(wd, true);
            }
            for (path, kind) in wanted {
                self.add(&path, kind)?;
            }
            Ok(())
        }

        /// `refs/` and its subdirectories down to [`REFS_DEPTH`], and their existing locks.
        fn plan_refs(&mut self, dir: &Path, depth: u8, wanted: &mut Vec<(PathBuf, Kind)>) {
            let mut work = vec![(dir.to_path_buf(), depth)];
            while let Some((dir, depth)) = work.pop() {
                let Ok(listing) = std::fs::read_dir(&dir) else {
                    continue;
                };
                for entry in listing.flatten() {
                    let Ok(ft) = entry.file_type() else { continue };
                    if ft.is_dir() && depth < REFS_DEPTH {
                        work.push((entry.path(), depth + 1));
                    } else if ft.is_file() && entry.file_name().to_string_lossy().ends_with(".lock")
                    {
                        self.locks.insert(entry.path());
                    }
                }
                wanted.push((dir, Kind::Refs(depth)));
            }
        }

        /// Existing `*.lock` files directly in a git directory.
        fn scan_locks(&mut self, git: &Path) {
            let Ok(listing) = std::fs::read_dir(git) else {
                return;
            };
            for entry in listing.flatten() {
                if entry.file_name().to_string_lossy().ends_with(".lock") {
                    self.locks.insert(entry.path());
                }
            }
        }

        /// Adds one watch. A directory that vanished or cannot be read is skipped; the watch
        /// limit (ours or the kernel's) is an error: the caller falls back to polling.
        fn add(&mut self, path: &Path, kind: Kind) -> Result<(), String> {
            if self.by_path.contains_key(path) {
                return Ok(());
            }
            if self.watches.len() >= self.max_watches {
                return Err(format!(
                    "the watch limit of {} directories (MESH_WATCH_LIMIT) is reached",
                    self.max_watches
                ));
            }
            let mask = if kind == Kind::Tree {
                TREE_MASK
            } else {
                GIT_MASK
            };
            match self.ino.add_watch(path, mask) {
                Ok(wd) => {
                    if let Some(old) = self.watches.insert(
                        wd,
                        Watched {
                            path: path.to_path_buf(),
                            kind,
                        },
                    ) {
                        self.by_path.remove(&old.path);
                    }
                    self.by_path.insert(path.to_path_buf(), wd);
                    Ok(())
                }
                Err(e) if e.raw_os_error() == Some(ino::ENOSPC) => {
                    let limit = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
                        .map(|s| s.trim().to_string())
                        .unwrap_or_else(|_| "?".into());
                    Err(format!(
                        "the kernel's inotify watch limit is reached \
                         (/proc/sys/fs/inotify/max_user_watches = {limit}) after {} watches",
                        self.watches.len()
                    ))
                }
                Err(e) => {
                    tracing::debug!(target: "mesh::watch", path = %path.display(), error = %e,
                        "directory not watched");
                    Ok(())
                }
            }
        }

        /// Drops a watch from the tables (and from the kernel when `remove`).
        fn forget(&mut self, wd: i32, remove: bool) {
            if let Some(w) = self.watches.remove(&wd) {
                if self.by_path.get(&w.path) == Some(&wd) {
                    self.by_path.remove(&w.path);
                }
                if remove {
                    let _ = self.ino.rm_watch(wd);
                }
            }
        }

        /// Drops the watches of `dir` and everything below it.
        fn forget_subtree(&mut self, dir: &Path, remove: bool) -> bool {
            let gone: Vec<i32> = self
                .by_path
                .iter()
                .filter(|(p, _)| p.starts_with(dir))
                .map(|(_, wd)| *wd)
                .collect();
            let any = !gone.is_empty();
            for wd in gone {
                self.forget(wd, remove);
            }
            any
        }

        /// Watches a directory that appeared (created or moved in) and its subdirectories,
        /// unless it is excluded. False when it is not watched (excluded or outside the roots).
        fn add_subtree(&mut self, dir: &Path) -> Result<bool, String> {
            let Some(root) = self
                .roots
                .iter()
                .filter(|r| dir.starts_with(r))
                .max_by_key(|r| r.components().count())
                .cloned()
            else {
                return Ok(false);
            };
            let Some(rel) = rel_of(&root, dir) else {
                return Ok(false);
            };
            let nested = nested_roots(&root, &self.roots);
            if nested.contains(&rel) {
                return Ok(false);
            }
            let patterns = self.patterns();
            let mut dirs = Vec::new();
            let mut tops = Vec::new();
            plan_dirs(&root, &rel, &nested, &patterns, &mut dirs, &mut tops);
            let watched = !dirs.is_empty();
            for d in dirs {
                self.add(&d, Kind::Tree)?;
            }
            if !tops.is_empty() {
                // A repository moved in: its git directory must be gated too.
                for g in git_dirs_for(&[], &tops) {
                    if !self.git_dirs.contains(&g) {
                        self.add(&g.git, Kind::Git)?;
                        self.git_dirs.push(g);
                    }
                }
            }
            Ok(watched)
        }

        /// Reads the queued events into `changes`, keeping the watch table in step with the
        /// tree. Returns true when a git directory was active.
        pub(super) fn read_changes(&mut self, changes: &mut ChangeSet) -> Result<bool, String> {
            let mut events = std::mem::take(&mut self.events);
            events.clear();
            if let Err(e) = self.ino.read_events(&mut events) {
                return Err(format!("reading inotify events failed: {e}"));
            }
            let mut git_activity = false;
            let mut result = Ok(());
            for ev in &events {
                match self.on_event(ev, changes) {
                    Ok(git) => git_activity |= git,
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
            }
            self.events = events;
            result.map(|()| git_activity)
        }

        fn on_event(&mut self, ev: &Event, changes: &mut ChangeSet) -> Result<bool, String> {
            if ev.mask & ino::IN_Q_OVERFLOW != 0 {
                tracing::info!(target: "mesh::watch",
                    "inotify queue overflowed; events were lost, rescanning everything");
                changes.full = true;
                changes.replan = true;
                return Ok(false);
            }
            let Some(w) = self.watches.get(&ev.wd).cloned() else {
                return Ok(false);
            };
            if ev.mask & ino::IN_IGNORED != 0 {
                self.forget(ev.wd, false);
                return Ok(w.kind != Kind::Tree);
            }
            let name = ev.name.as_ref().and_then(|n| n.to_str());
            match w.kind {
                Kind::Tree => {
                    let Some(name) = name else {
                        // The directory itself was deleted or moved: its parent reports the
                        // entry; a root going away means a full rescan.
                        if ev.mask & (ino::IN_DELETE_SELF | ino::IN_MOVE_SELF | ino::IN_UNMOUNT)
                            != 0
                            && self.roots.contains(&w.path)
                        {
                            changes.full = true;
                            changes.replan = true;
                        }
                        return Ok(false);
                    };
                    let path = w.path.join(name);
                    if name == ".git" {
                        // A repository appeared or vanished: ignore rules and gates change.
                        changes.full = true;
                        changes.replan = true;
                        return Ok(false);
                    }
                    if ev.mask & ino::IN_ISDIR != 0 {
                        if ev.mask & (ino::IN_CREATE | ino::IN_MOVED_TO) != 0 {
                            if self.add_subtree(&path)? {
                                changes.paths.insert(path);
                            }
                        } else if ev.mask & (ino::IN_DELETE | ino::IN_MOVED_FROM) != 0 {
                            let moved = ev.mask & ino::IN_MOVED_FROM != 0;
                            if self.forget_subtree(&path, moved) {
                                changes.paths.insert(path);
                            }
                        }
                        return Ok(false);
                    }
                    if name == ".gitignore" {
                        changes.replan = true;
                    }
                    if interesting_file(name) {
                        changes.paths.insert(path);
                    }
                    Ok(false)
                }
                Kind::Git | Kind::Refs(_) => {
                    if let Some(name) = name {
                        let path = w.path.join(name);
                        if name.ends_with(".lock") && ev.mask & ino::IN_ISDIR == 0 {
                            if ev.mask & (ino::IN_CREATE | ino::IN_MOVED_TO) != 0 {
                                self.locks.insert(path);
                            } else if ev.mask & (ino::IN_DELETE | ino::IN_MOVED_FROM) != 0 {
                                self.locks.remove(&path);
                            }
                        } else if let Kind::Refs(depth) = w.kind
                            && ev.mask & ino::IN_ISDIR != 0
                            && ev.mask & (ino::IN_CREATE | ino::IN_MOVED_TO) != 0
                            && depth < REFS_DEPTH
                        {
                            self.add(&path, Kind::Refs(depth + 1))?;
                        }
                    }
                    Ok(true)
                }
                Kind::Info => {
                    if name == Some("exclude") {
                        changes.full = true;
                        changes.replan = true;
                    }
                    Ok(true)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::crawl::CrawlOptions;

    fn state(locks: &[&str], operation: Option<&'static str>) -> GitState {
        GitState {
            locks: locks.iter().map(PathBuf::from).collect(),
            operation,
        }
    }

    #[test]
    fn a_lock_holds_until_it_goes() {
        let t0 = Instant::now();
        let mut gate = GitGate::default();
        assert!(!gate.decide(&state(&[], None), t0).held);
        let h = gate.decide(&state(&[".git/index.lock"], None), t0);
        assert!(h.held);
        assert_eq!(h.until, Some(t0 + MAX_HOLD));
        assert!(
            gate.decide(
                &state(&[".git/index.lock"], None),
                t0 + Duration::from_secs(5)
            )
            .held
        );
        assert!(
            !gate
                .decide(&state(&[], None), t0 + Duration::from_secs(6))
                .held
        );
    }

    #[test]
    fn a_stuck_lock_is_ignored_after_the_cap_until_it_disappears() {
        let t0 = Instant::now();
        let mut gate = GitGate::default();
        let stuck = state(&[".git/index.lock"], None);
        assert!(gate.decide(&stuck, t0).held);
        assert!(!gate.decide(&stuck, t0 + MAX_HOLD).held);
        assert!(!gate.decide(&stuck, t0 + MAX_HOLD * 3).held);
        // Once gone, a new lock holds again.
        assert!(!gate.decide(&state(&[], None), t0 + MAX_HOLD * 4).held);
        assert!(gate.decide(&stuck, t0 + MAX_HOLD * 5).held);
    }

    #[test]
    fn an_operation_marker_holds_only_while_git_is_busy() {
        let t0 = Instant::now();
        let mut gate = GitGate::default();
        let rebasing = state(&[], Some("rebase-merge"));
        // No activity seen: a paused rebase (user resolving conflicts) does not hold.
        assert!(!gate.decide(&rebasing, t0).held);
        gate.activity(t0);
        let h = gate.decide(&rebasing, t0 + Duration::from_millis(10));
        assert!(h.held);
        assert_eq!(h.until, Some(t0 + GIT_SETTLE));
        assert!(!gate.decide(&rebasing, t0 + GIT_SETTLE).held);
        // A lock during the operation holds regardless of the settle time.
        let locked = state(&[".git/index.lock"], Some("rebase-merge"));
        assert!(gate.decide(&locked, t0 + GIT_SETTLE * 10).held);
    }

    #[test]
    fn change_set_counts() {
        let mut c = ChangeSet::default();
        assert!(c.is_empty());
        c.replan = true;
        assert!(c.is_empty(), "a replan alone is not a pending change");
        c.paths.insert(PathBuf::from("/w/a.rs"));
        c.full = true;
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn interesting_names() {
        assert!(interesting_file("a.rs"));
        assert!(interesting_file(".gitignore"));
        assert!(!interesting_file(".a.rs.swp"));
        assert!(!interesting_file("4913"));
        assert!(!interesting_file("a.rs~"));
    }

    #[test]
    fn modes_read_well() {
        assert_eq!(
            WatchMode::Inotify {
                dirs: 12,
                git_dirs: 1
            }
            .to_string(),
            "inotify, 12 directories watched plus 1 git directories"
        );
        assert!(
            WatchMode::Polling {
                every_ms: 2000,
                reason: "the kernel's inotify watch limit is reached".into()
            }
            .to_string()
            .contains("every 2.0 s (the kernel's inotify watch limit is reached)")
        );
    }

    #[test]
    fn the_probe_sees_locks_and_operation_markers() {
        let base = crate::scratch::fresh_dir("watch-probe");
        let git = base.join(".git");
        std::fs::create_dir_all(git.join("refs/heads")).unwrap();
        let dirs = vec![GitDir {
            git: git.clone(),
            common: git.clone(),
        }];
        let mut tracked = BTreeSet::new();
        assert_eq!(probe_git(&dirs, &mut tracked), GitState::default());
        std::fs::write(git.join("index.lock"), "").unwrap();
        std::fs::create_dir_all(git.join("rebase-merge")).unwrap();
        let ref_lock = git.join("refs/heads/main.lock");
        std::fs::write(&ref_lock, "").unwrap();
        tracked.insert(ref_lock.clone());
        tracked.insert(git.join("refs/heads/gone.lock"));
        let state = probe_git(&dirs, &mut tracked);
        assert_eq!(state.operation, Some("rebase-merge"));
        assert_eq!(state.locks, vec![ref_lock.clone(), git.join("index.lock")]);
        assert_eq!(
            tracked.len(),
            1,
            "a lock that no longer exists is forgotten"
        );
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn a_linked_worktree_is_gated_by_its_own_and_the_common_git_dir() {
        let base = crate::scratch::fresh_dir("watch-wt");
        let wt_git = base.join("main/.git/worktrees/feature");
        std::fs::create_dir_all(&wt_git).unwrap();
        std::fs::create_dir_all(base.join("feature")).unwrap();
        std::fs::write(wt_git.join("commondir"), "../..\n").unwrap();
        std::fs::write(
            base.join("feature/.git"),
            format!("gitdir: {}\n", wt_git.display()),
        )
        .unwrap();
        let base = std::fs::canonicalize(&base).unwrap();
        let g = git_dir_of(&base.join("feature")).unwrap();
        assert_eq!(g.git, base.join("main/.git/worktrees/feature"));
        assert_eq!(g.common, base.join("main/.git"));
        assert!(git_dir_of(&base.join("main/.git/worktrees")).is_none());
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn the_plan_skips_excluded_and_ignored_directories() {
        let base = crate::scratch::fresh_dir("watch-plan");
        for d in [
            "src/deep",
            "node_modules/x",
            "target/debug",
            "gen/out",
            "docs",
            ".git/refs/heads",
        ] {
            std::fs::create_dir_all(base.join(d)).unwrap();
        }
        std::fs::write(base.join(".gitignore"), "gen/\n").unwrap();
        let base = std::fs::canonicalize(&base).unwrap();
        let opts = CrawlOptions::default();
        let patterns = opts.exclude_patterns();
        let mut dirs = Vec::new();
        let mut tops = Vec::new();
        plan_dirs(&base, "", &HashSet::new(), &patterns, &mut dirs, &mut tops);
        let mut rel: Vec<String> = dirs.iter().map(|d| rel_of(&base, d).unwrap()).collect();
        crate::order::sort(&mut rel);
        assert_eq!(rel, vec!["", "docs", "src", "src/deep"]);
        assert_eq!(tops, vec![base.clone()]);
        // A subtree below an ignored directory is not planned either.
        dirs.clear();
        plan_dirs(
            &base,
            "gen/out",
            &HashSet::new(),
            &patterns,
            &mut dirs,
            &mut tops,
        );
        assert!(dirs.is_empty());
        dirs.clear();
        plan_dirs(
            &base,
            "src",
            &HashSet::new(),
            &patterns,
            &mut dirs,
            &mut tops,
        );
        assert_eq!(dirs.len(), 2);
        let g = git_dir_of(&base).unwrap();
        assert_eq!(g.git, base.join(".git"));
        assert_eq!(g.common, g.git);
        let _ = std::fs::remove_dir_all(&base);
    }
}
