//! Live updates, through the library API (the indexer thread with its watcher) and through
//! the real binary: edits, creations, deletions and renames of files and directories become
//! visible; `.gitignore` edits take effect; a real `git checkout` of many files publishes one
//! generation; the watch-limit and polling fallbacks keep the index fresh; the idle watcher
//! does not wake up. Every wait polls with a generous deadline: nothing here asserts timing.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Server, temp_dir, tool_text};
use mesh_mcp::zero_config;
use mesh_mcp::{IndexHandle, Snapshot};
use mesh_mcp::{Indexer, IndexerThread, spawn_indexer_with};
use mesh_mcp::{WatchKind, WatchMode, WatchOptions};
use serde_json::json;

/// How long any wait may take before the test fails (a stuck watcher, not a slow machine).
const DEADLINE: Duration = Duration::from_secs(60);

fn workspace(tag: &str) -> PathBuf {
    std::fs::canonicalize(temp_dir(tag)).unwrap()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A `.proto` file declaring one message per name (protobuf is a complete extractor).
fn proto(messages: &[&str]) -> String {
    let mut out = String::from("syntax = \"proto3\";\npackage t;\n");
    for m in messages {
        out.push_str(&format!("message {m} {{}}\n"));
    }
    out
}

fn start(dir: &Path, options: WatchOptions) -> (Arc<IndexHandle>, IndexerThread) {
    let handle = IndexHandle::new();
    let thread = spawn_indexer_with(Arc::new(zero_config(dir)), handle.clone(), options)
        .expect("indexer thread");
    wait_until(&handle, "the first snapshot", |_| true);
    // The watcher sets its mode once it is set up, which may be just after the first
    // snapshot is published: wait for it (bounded), so a loaded machine cannot race it.
    let started = Instant::now();
    while handle.watch_mode().to_string().contains("starting") && started.elapsed() < DEADLINE {
        std::thread::sleep(Duration::from_millis(5));
    }
    (handle, thread)
}

/// Polls the published snapshot until `pred` holds; panics with `what` after [`DEADLINE`].
fn wait_until(handle: &IndexHandle, what: &str, pred: impl Fn(&Snapshot) -> bool) -> Arc<Snapshot> {
    let started = Instant::now();
    loop {
        if let Some(snap) = handle.current()
            && pred(&snap)
        {
            return snap;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "timed out waiting for {what} (generation {}, pending {}, git hold {}, watcher {})",
            handle.generation(),
            handle.pending_changes(),
            handle.git_hold(),
            handle.watch_mode()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits until the watcher has nothing pending and no git hold.
fn wait_settled(handle: &IndexHandle) {
    let started = Instant::now();
    while handle.pending_changes() > 0 || handle.git_hold() {
        assert!(started.elapsed() < DEADLINE, "the watcher never settled");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn symbols(snap: &Snapshot) -> Vec<String> {
    let mut out = Vec::new();
    for f in &snap.files {
        for s in f.symbols() {
            out.push(f.name(s).to_string());
        }
    }
    out
}

fn has_symbol(snap: &Snapshot, name: &str) -> bool {
    snap.files
        .iter()
        .any(|f| f.symbols().iter().any(|s| f.name(s) == name))
}

fn has_file(snap: &Snapshot, display: &str) -> bool {
    snap.files.iter().any(|f| snap.display_path(f) == display)
}

fn full_rebuild_fingerprint(dir: &Path) -> String {
    Indexer::new(Arc::new(zero_config(dir)), IndexHandle::new())
        .rebuild()
        .fingerprint()
}

#[test]
fn file_and_directory_changes_become_visible_and_match_a_full_rebuild() {
    let dir = workspace("watch-tree");
    write(&dir.join("src/a.proto"), &proto(&["Alpha"]));
    write(&dir.join("src/b.proto"), &proto(&["Bravo"]));
    let away = workspace("watch-tree-away");
    let (h, thread) = start(&dir, WatchOptions::default());
    assert!(
        matches!(h.watch_mode(), WatchMode::Inotify { .. }),
        "{}",
        h.watch_mode()
    );
    assert!(has_symbol(&h.current().unwrap(), "Alpha"));

    // Edit.
    write(&dir.join("src/a.proto"), &proto(&["Alpha", "AlphaTwo"]));
    wait_until(&h, "an edit", |s| has_symbol(s, "AlphaTwo"));
    // Create.
    write(&dir.join("src/c.proto"), &proto(&["Charlie"]));
    wait_until(&h, "a new file", |s| has_symbol(s, "Charlie"));
    // Delete.
    std::fs::remove_file(dir.join("src/b.proto")).unwrap();
    wait_until(&h, "a deletion", |s| !has_symbol(s, "Bravo"));
    // Rename.
    std::fs::rename(dir.join("src/c.proto"), dir.join("src/renamed.proto")).unwrap();
    wait_until(&h, "a rename", |s| {
        has_file(s, "src/renamed.proto") && !has_file(s, "src/c.proto")
    });
    // A new directory tree, then a file created later inside it (needs the new watch).
    write(&dir.join("src/new/deep/d.proto"), &proto(&["Delta"]));
    wait_until(&h, "a new directory", |s| has_symbol(s, "Delta"));
    write(&dir.join("src/new/deep/e.proto"), &proto(&["Echo"]));
    wait_until(&h, "a file in a new directory", |s| has_symbol(s, "Echo"));
    // Rename a directory, then create inside it under its new name.
    std::fs::rename(dir.join("src/new"), dir.join("src/moved")).unwrap();
    wait_until(&h, "a directory rename", |s| {
        has_file(s, "src/moved/deep/d.proto") && !has_file(s, "src/new/deep/d.proto")
    });
    write(&dir.join("src/moved/deep/f.proto"), &proto(&["Foxtrot"]));
    wait_until(&h, "a file in a renamed directory", |s| {
        has_symbol(s, "Foxtrot")
    });
    // Move a directory out of the workspace and back in.
    std::fs::rename(dir.join("src/moved"), away.join("moved")).unwrap();
    wait_until(&h, "a directory moved away", |s| !has_symbol(s, "Foxtrot"));
    // Changed while away: nobody watches it there.
    write(&away.join("moved/deep/h.proto"), &proto(&["Hotel"]));
    std::fs::rename(away.join("moved"), dir.join("src/back")).unwrap();
    wait_until(&h, "a directory moved back", |s| {
        has_file(s, "src/back/deep/f.proto") && has_symbol(s, "Hotel")
    });
    // Delete a directory tree.
    std::fs::remove_dir_all(dir.join("src/back")).unwrap();
    wait_until(&h, "a deleted directory", |s| !has_symbol(s, "Delta"));
    write(&dir.join("src/g.proto"), &proto(&["Golf"]));
    let snap = wait_until(&h, "the last edit", |s| has_symbol(s, "Golf"));
    wait_settled(&h);
    let snap = h.current().map_or(snap, |s| s);
    assert_eq!(snap.fingerprint(), full_rebuild_fingerprint(&dir));
    thread.stop();
}

#[test]
fn gitignore_edits_take_effect_and_ignored_directories_are_not_watched() {
    let dir = workspace("watch-ignore");
    write(&dir.join("src/a.proto"), &proto(&["Alpha"]));
    write(&dir.join("gen/g.proto"), &proto(&["Generated"]));
    for heavy in [
        "node_modules/pkg/lib",
        "target/debug/deps",
        ".git/objects/ab",
    ] {
        std::fs::create_dir_all(dir.join(heavy)).unwrap();
    }
    write(&dir.join(".git/HEAD"), "ref: refs/heads/main\n");
    let (h, thread) = start(&dir, WatchOptions::default());
    assert!(has_symbol(&h.current().unwrap(), "Generated"));
    // Watched: the base, src and gen; not node_modules, target or .git contents.
    assert_eq!(
        h.watch_mode(),
        WatchMode::Inotify {
            dirs: 3,
            git_dirs: 1
        }
    );

    write(&dir.join(".gitignore"), "gen/\n");
    wait_until(&h, "gen/ ignored", |s| !has_symbol(s, "Generated"));
    wait_settled(&h);
    assert_eq!(
        h.watch_mode(),
        WatchMode::Inotify {
            dirs: 2,
            git_dirs: 1
        },
        "an ignored directory is no longer watched"
    );
    // Files in ignored places do not show up.
    write(&dir.join("gen/h.proto"), &proto(&["Hidden"]));
    write(
        &dir.join("node_modules/pkg/lib/x.proto"),
        &proto(&["Vendored"]),
    );
    write(&dir.join("src/marker.proto"), &proto(&["Marker"]));
    let snap = wait_until(&h, "the marker", |s| has_symbol(s, "Marker"));
    assert!(!has_symbol(&snap, "Hidden") && !has_symbol(&snap, "Vendored"));

    std::fs::write(dir.join(".gitignore"), "# nothing ignored\n").unwrap();
    wait_until(&h, "gen/ back", |s| {
        has_symbol(s, "Generated") && has_symbol(s, "Hidden")
    });
    // The directory is watched again: a file created there now is seen.
    write(&dir.join("gen/i.proto"), &proto(&["India"]));
    wait_until(&h, "a file in the re-included directory", |s| {
        has_symbol(s, "India")
    });
    wait_settled(&h);
    assert_eq!(
        h.current().unwrap().fingerprint(),
        full_rebuild_fingerprint(&dir)
    );
    thread.stop();
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=mesh test",
            "-c",
            "user.email=mesh@example.invalid",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_git_checkout_of_many_files_publishes_one_generation() {
    const FILES: usize = 200;
    let dir = workspace("watch-git");
    // A few files go through a slow smudge filter on checkout, so the checkout takes over a
    // second with pauses far longer than the debounce: only the git gate keeps it one
    // generation (a fast checkout would fit in one debounce window anyway).
    let path = |i: usize| {
        let stem = if i.is_multiple_of(37) { "s" } else { "f" };
        dir.join(format!("src/m{}/{stem}{i}.proto", i % 10))
    };
    for i in 0..FILES {
        write(&path(i), &proto(&[&format!("Original{i}")]));
    }
    write(&dir.join(".gitattributes"), "**/s*.proto filter=slow\n");
    git(&dir, &["init", "-q", "-b", "main"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "original"]);
    let (h, thread) = start(&dir, WatchOptions::default());
    let all_original = |s: &Snapshot| (0..FILES).all(|i| has_symbol(s, &format!("Original{i}")));
    wait_until(&h, "the original tree", all_original);
    match h.watch_mode() {
        WatchMode::Inotify { git_dirs, .. } => assert_eq!(git_dirs, 1),
        other => panic!("expected inotify, got {other}"),
    }

    git(&dir, &["checkout", "-q", "-b", "feature"]);
    for i in 0..FILES {
        std::fs::write(path(i), proto(&[&format!("Changed{i}")])).unwrap();
    }
    git(&dir, &["commit", "-q", "-a", "-m", "changed"]);
    let all_changed = |s: &Snapshot| {
        let names = symbols(s);
        (0..FILES).all(|i| names.contains(&format!("Changed{i}")))
            && !names.iter().any(|n| n.starts_with("Original"))
    };
    wait_until(&h, "the changed tree", all_changed);
    wait_settled(&h);
    // Let anything still in flight land before counting.
    std::thread::sleep(Duration::from_millis(500));
    wait_settled(&h);
    let before = h.generation();

    git(
        &dir,
        &[
            "-c",
            "filter.slow.smudge=sleep 0.2; cat",
            "checkout",
            "-q",
            "main",
        ],
    );
    let snap = wait_until(&h, "the checkout back", all_original);
    wait_settled(&h);
    std::thread::sleep(Duration::from_millis(500));
    wait_settled(&h);
    assert_eq!(
        h.generation(),
        before + 1,
        "the checkout must publish exactly one generation"
    );
    assert_eq!(snap.generation, before + 1);
    assert_eq!(
        h.current().unwrap().fingerprint(),
        full_rebuild_fingerprint(&dir)
    );
    thread.stop();
}

#[test]
fn a_held_git_lock_delays_publishing_until_it_is_released() {
    let dir = workspace("watch-lock");
    write(&dir.join("src/a.proto"), &proto(&["Alpha"]));
    git(&dir, &["init", "-q", "-b", "main"]);
    let (h, thread) = start(&dir, WatchOptions::default());
    let before = h.generation();
    // Play a long git operation: take the index lock, change files, release it.
    write(&dir.join(".git/index.lock"), "");
    write(&dir.join("src/b.proto"), &proto(&["Bravo"]));
    let started = Instant::now();
    while !(h.git_hold() && h.pending_changes() >= 1) {
        assert!(started.elapsed() < DEADLINE, "the lock never held reloads");
        std::thread::sleep(Duration::from_millis(10));
    }
    write(&dir.join("src/c.proto"), &proto(&["Charlie"]));
    std::thread::sleep(Duration::from_millis(300));
    assert!(h.git_hold());
    assert!(h.pending_changes() >= 1);
    assert_eq!(
        h.generation(),
        before,
        "nothing is published while the lock is held"
    );
    std::fs::remove_file(dir.join(".git/index.lock")).unwrap();
    let snap = wait_until(&h, "the release", |s| {
        has_symbol(s, "Bravo") && has_symbol(s, "Charlie")
    });
    assert_eq!(snap.generation, before + 1);
    wait_settled(&h);
    thread.stop();
}

#[test]
fn the_watch_limit_falls_back_to_polling_and_stays_fresh() {
    let dir = workspace("watch-limit");
    for d in ["a", "b", "c", "d"] {
        write(
            &dir.join(format!("src/{d}/x.proto")),
            &proto(&[&format!("In{d}")]),
        );
    }
    let options = WatchOptions {
        max_watches: Some(2),
        poll_interval: Duration::from_millis(50),
        ..WatchOptions::default()
    };
    let (h, thread) = start(&dir, options);
    match h.watch_mode() {
        WatchMode::Polling { reason, .. } => {
            assert!(reason.contains("watch limit of 2"), "{reason}")
        }
        other => panic!("expected the polling fallback, got {other}"),
    }
    write(&dir.join("src/c/y.proto"), &proto(&["Polled"]));
    wait_until(&h, "a polled edit", |s| has_symbol(s, "Polled"));
    std::fs::remove_dir_all(dir.join("src/a")).unwrap();
    wait_until(&h, "a polled deletion", |s| !has_symbol(s, "Ina"));
    thread.stop();

    // Forced polling (MESH_WATCH=poll) and no watching at all.
    let forced = WatchOptions {
        kind: WatchKind::Poll,
        poll_interval: Duration::from_millis(50),
        ..WatchOptions::default()
    };
    let (h, thread) = start(&dir, forced);
    assert!(matches!(h.watch_mode(), WatchMode::Polling { .. }));
    write(&dir.join("src/d/z.proto"), &proto(&["Forced"]));
    wait_until(&h, "a polled edit", |s| has_symbol(s, "Forced"));
    thread.stop();
    let off = WatchOptions {
        kind: WatchKind::Off,
        ..WatchOptions::default()
    };
    let (h, thread) = start(&dir, off);
    assert_eq!(h.watch_mode(), WatchMode::Off);
    thread.stop();
}

#[test]
fn nothing_changes_nothing_is_published() {
    let dir = workspace("watch-quiet");
    write(&dir.join("src/a.proto"), &proto(&["Alpha"]));
    let (h, thread) = start(&dir, WatchOptions::default());
    // Non-indexable files and a rewrite with identical bytes publish nothing.
    write(&dir.join("src/notes.txt"), "hello");
    write(&dir.join("src/.a.rs.swp"), "junk");
    let before = h.generation();
    // Rewritten the way editors save (a temporary file renamed over the original), so no
    // reader can ever see it half-written.
    std::fs::write(dir.join("src/.a.proto.tmp"), proto(&["Alpha"])).unwrap();
    std::fs::rename(dir.join("src/.a.proto.tmp"), dir.join("src/a.proto")).unwrap();
    write(&dir.join("src/z.proto"), &proto(&["Zulu"]));
    let snap = wait_until(&h, "the marker", |s| has_symbol(s, "Zulu"));
    // The identical rewrite may ride along with the marker's generation, never add its own.
    assert!(
        snap.generation <= before + 1,
        "{} > {}",
        snap.generation,
        before + 1
    );
    thread.stop();
}

// ─── through the real binary ─────────────────────────────────────────────────────────────

fn init(server: &mut Server) {
    server.call(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
}

fn call_tool(server: &mut Server, id: i64, name: &str, args: serde_json::Value) -> String {
    let resp = server.call(id, "tools/call", json!({"name": name, "arguments": args}));
    tool_text(&resp).to_string()
}

#[test]
fn an_edit_that_keeps_size_and_mtime_before_the_watches_is_not_lost() {
    // `cp -p` / `rsync -a` write a file and set its mtime back: size and mtime say nothing
    // changed, and in the window before the watches there is no event; the ctime tells.
    let dir = workspace("watch-bin-ctime");
    let file = dir.join("src/a.proto");
    write(&file, &proto(&["AlphaOne"]));
    let old = std::time::SystemTime::now() - Duration::from_secs(3600);
    let set_mtime_back = || {
        let f = std::fs::File::options().write(true).open(&file).unwrap();
        f.set_modified(old).unwrap();
    };
    set_mtime_back();
    let mut s = Server::start_with(
        &dir,
        &[
            ("MESH_TEST_FIXTURES", "1"),
            ("MESH_TEST_WATCH_DELAY_MS", "1500"),
        ],
    );
    init(&mut s);
    let mut id = 10;
    search_until_found(&mut s, &mut id, "AlphaOne");
    write(&file, &proto(&["AlphaTwo"]));
    set_mtime_back();
    let status = call_tool(&mut s, 2, "index_status", json!({}));
    assert!(status.contains("- Watcher: starting."), "{status}");
    search_until_found(&mut s, &mut id, "AlphaTwo");
}

#[test]
fn a_directory_made_while_the_watches_are_added_is_watched() {
    // The registration lists the directories, then adds their watches: a directory created in
    // between has no watch and no event. The second listing finds it, so a file created in it
    // later is seen.
    let (dir, mut s, mut id) = start_in_a_window("watch-bin-plan", "MESH_TEST_WATCH_PLAN_DELAY_MS");
    write(&dir.join("src/late/b.proto"), &proto(&["InTheLateDir"]));
    search_until_found(&mut s, &mut id, "InTheLateDir");
    status_once_watcher_started(&mut s, &mut id);
    write(&dir.join("src/late/c.proto"), &proto(&["AfterTheWatches"]));
    search_until_found(&mut s, &mut id, "AfterTheWatches");
}

/// Calls `tool` until its answer satisfies `done`, for at most [`DEADLINE`]; returns that
/// answer (`what` names the awaited state in the failure message).
fn poll_tool(
    server: &mut Server,
    next_id: &mut i64,
    tool: &str,
    args: serde_json::Value,
    what: &str,
    done: impl Fn(&str) -> bool,
) -> String {
    let started = Instant::now();
    loop {
        *next_id += 1;
        let text = call_tool(server, *next_id, tool, args.clone());
        if done(&text) {
            return text;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "{what} never happened: {text}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Polls `smart_search` until it finds `name`.
fn search_until_found(server: &mut Server, next_id: &mut i64, name: &str) {
    let shown = format!("`{name}`");
    poll_tool(
        server,
        next_id,
        "smart_search",
        json!({"query": name}),
        &format!("{name} becoming visible"),
        |text| text.contains("_Matches: ") && text.contains(&shown),
    );
}

#[test]
fn the_binary_sees_edits_and_reports_its_watcher() {
    let dir = workspace("watch-bin");
    write(&dir.join("src/a.proto"), &proto(&["Alpha"]));
    let mut s = Server::start(&dir);
    init(&mut s);
    let mut id = 10;
    search_until_found(&mut s, &mut id, "Alpha");
    let status = status_once_watcher_started(&mut s, &mut id);
    assert!(
        status.contains("- Watcher: inotify, 2 directories watched"),
        "{status}"
    );
    assert!(
        status.contains("- Freshness: no pending changes."),
        "{status}"
    );
    assert!(status.contains("- First index: "), "{status}");

    let mut text = std::fs::read_to_string(dir.join("src/a.proto")).unwrap();
    text.push_str("message EditedLive {}\n");
    std::fs::write(dir.join("src/a.proto"), text).unwrap();
    search_until_found(&mut s, &mut id, "EditedLive");
    let status = call_tool(&mut s, 3, "index_status", json!({}));
    assert!(status.contains("- Last reload: "), "{status}");
    let generation: u64 = status
        .split("- Generation ")
        .nth(1)
        .and_then(|rest| rest.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no generation in {status}"));
    assert!(generation >= 2, "{status}");

    // Idle means idle: the indexer thread sleeps in poll(2) and is never woken.
    let pid = s.child.id();
    let switches = || indexer_context_switches(pid);
    let first = switches();
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(switches(), first, "the idle watcher woke up");
}

/// Voluntary context switches of the process's `mesh-indexer` thread.
fn indexer_context_switches(pid: u32) -> u64 {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).unwrap();
    for task in tasks.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim() == "mesh-indexer" {
            let status = std::fs::read_to_string(task.path().join("status")).unwrap();
            for line in status.lines() {
                if let Some(n) = line.strip_prefix("voluntary_ctxt_switches:") {
                    return n.trim().parse().unwrap();
                }
            }
        }
    }
    panic!("no mesh-indexer thread in process {pid}");
}

/// A server on a workspace with `src/a.proto` declaring `Alpha`, started with the start-up
/// window of fixture hook `delay_var` held open 1.5 s, once its first answer finds `Alpha`.
fn start_in_a_window(tag: &str, delay_var: &str) -> (PathBuf, Server, i64) {
    let dir = workspace(tag);
    write(&dir.join("src/a.proto"), &proto(&["Alpha"]));
    let mut s = Server::start_with(&dir, &[("MESH_TEST_FIXTURES", "1"), (delay_var, "1500")]);
    init(&mut s);
    let mut id = 10;
    search_until_found(&mut s, &mut id, "Alpha");
    (dir, s, id)
}

#[test]
fn an_edit_before_the_watches_are_in_place_is_not_lost() {
    // The first snapshot is published before the watcher walks the tree; an edit made in
    // between has no inotify event, so the rescan after the registration must find it.
    let (dir, mut s, mut id) = start_in_a_window("watch-bin-window", "MESH_TEST_WATCH_DELAY_MS");
    let status = call_tool(&mut s, 2, "index_status", json!({}));
    assert!(status.contains("- Watcher: starting."), "{status}");
    write(&dir.join("src/a.proto"), &proto(&["Alpha", "InTheWindow"]));
    search_until_found(&mut s, &mut id, "InTheWindow");
    let status = status_once_watcher_started(&mut s, &mut id);
    assert!(status.contains("- Watcher: inotify"), "{status}");
}

/// `index_status` once the watcher has been set up (that follows the first snapshot, so the
/// first answer can come while it still says "starting").
fn status_once_watcher_started(server: &mut Server, next_id: &mut i64) -> String {
    poll_tool(
        server,
        next_id,
        "index_status",
        json!({}),
        "the watcher starting",
        |status| !status.contains("- Watcher: starting"),
    )
}

#[test]
fn the_binary_falls_back_to_polling_at_the_watch_limit() {
    let dir = workspace("watch-bin-limit");
    write(&dir.join("src/deep/a.proto"), &proto(&["Alpha"]));
    let mut s = Server::start_with(
        &dir,
        &[("MESH_WATCH_LIMIT", "1"), ("MESH_WATCH_POLL_MS", "100")],
    );
    init(&mut s);
    let mut id = 10;
    search_until_found(&mut s, &mut id, "Alpha");
    let status = status_once_watcher_started(&mut s, &mut id);
    // The interval grows with the cost of a rescan, so only its floor is known here.
    assert!(
        status.contains("- Watcher: polling fallback, full rescan every ")
            && status
                .contains(" s (the watch limit of 1 directories (MESH_WATCH_LIMIT) is reached)."),
        "{status}"
    );
    write(&dir.join("src/deep/b.proto"), &proto(&["PolledLive"]));
    search_until_found(&mut s, &mut id, "PolledLive");
}

// ─── incremental equals full, under the changes a watcher reports ───────────────────────

/// A tiny deterministic generator (xorshift).
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// Every regular file under `dir` (for picking victims).
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut work = vec![dir.to_path_buf()];
    while let Some(d) = work.pop() {
        let Ok(listing) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in listing.flatten() {
            let p = e.path();
            if p.is_dir() {
                work.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn dirs_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut work = vec![dir.to_path_buf()];
    while let Some(d) = work.pop() {
        let Ok(listing) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in listing.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.push(p.clone());
                work.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn incremental_updates_equal_a_full_rebuild_under_rename_chains_and_directory_moves() {
    let dir = workspace("watch-property");
    let src = dir.join("src");
    let mut rng = Rng(0x5eed_0003);
    let mut next = 0usize;
    for i in 0..60 {
        write(
            &src.join(format!("d{}/e{}/f{i}.proto", i % 4, i % 3)),
            &proto(&[&format!("M{i}")]),
        );
        next += 1;
    }
    let config = Arc::new(zero_config(&dir));
    let mut incremental = Indexer::new(config.clone(), IndexHandle::new());
    incremental.rebuild();
    for step in 0..60 {
        let mut touched: Vec<PathBuf> = Vec::new();
        for _ in 0..1 + rng.below(3) {
            let files = files_under(&src);
            let dirs = dirs_under(&src);
            match rng.below(7) {
                0 if files.len() >= 3 => {
                    // A rename chain a -> b -> c (b is new), as editors' atomic saves do.
                    let a = files[rng.below(files.len())].clone();
                    let b = a.with_file_name(format!("tmp{next}.proto"));
                    let c = a.with_file_name(format!("chain{next}.proto"));
                    next += 1;
                    std::fs::rename(&a, &b).unwrap();
                    std::fs::rename(&b, &c).unwrap();
                    touched.extend([a, b.clone(), b, c]);
                }
                1 if files.len() >= 2 => {
                    // Swap two files through a temporary name.
                    let a = files[rng.below(files.len())].clone();
                    let b = files[rng.below(files.len())].clone();
                    if a != b {
                        let t = a.with_file_name(format!("swap{next}.proto"));
                        next += 1;
                        std::fs::rename(&a, &t).unwrap();
                        std::fs::rename(&b, &a).unwrap();
                        std::fs::rename(&t, &b).unwrap();
                        touched.extend([a, b, t]);
                    }
                }
                2 if !dirs.is_empty() => {
                    // Move a directory somewhere else in the tree (or rename it).
                    let from = dirs[rng.below(dirs.len())].clone();
                    let parent = if rng.below(2) == 0 {
                        src.clone()
                    } else {
                        dirs[rng.below(dirs.len())].clone()
                    };
                    let to = parent.join(format!("moved{next}"));
                    next += 1;
                    if !to.starts_with(&from) && std::fs::rename(&from, &to).is_ok() {
                        touched.extend([from, to]);
                    }
                }
                3 if !dirs.is_empty() => {
                    // A new directory with files in it.
                    let parent = dirs[rng.below(dirs.len())].clone();
                    let new_dir = parent.join(format!("new{next}"));
                    for k in 0..1 + rng.below(3) {
                        write(
                            &new_dir.join(format!("n{next}_{k}.proto")),
                            &proto(&[&format!("N{next}x{k}")]),
                        );
                    }
                    next += 1;
                    touched.push(new_dir);
                }
                4 if dirs.len() > 2 => {
                    // Delete a directory tree.
                    let gone = dirs[rng.below(dirs.len())].clone();
                    std::fs::remove_dir_all(&gone).unwrap();
                    touched.push(gone);
                }
                5 if !files.is_empty() => {
                    // Edit in place.
                    let f = files[rng.below(files.len())].clone();
                    write(&f, &proto(&[&format!("E{next}"), "Extra"]));
                    next += 1;
                    touched.push(f);
                }
                _ => {
                    // Ignore or un-ignore a directory.
                    let ignore = src.join(".gitignore");
                    let text = if rng.below(2) == 0 && !dirs.is_empty() {
                        let d = &dirs[rng.below(dirs.len())];
                        format!("{}/\n", d.file_name().unwrap().to_string_lossy())
                    } else {
                        String::new()
                    };
                    write(&ignore, &text);
                    touched.push(ignore);
                }
            }
        }
        let inc = incremental.apply_changes(&touched).fingerprint();
        let full = Indexer::new(config.clone(), IndexHandle::new())
            .rebuild()
            .fingerprint();
        assert_eq!(
            inc, full,
            "step {step}: incremental differs from a full rebuild after {touched:?}"
        );
    }
}
