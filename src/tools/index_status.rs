//! `index_status`: freshness and health of the index, so an agent can tell whether a zero
//! result is trustworthy.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolDef, ToolEnv, ToolOutput, decode, default_hint, object_schema};
use crate::index::snapshot::Snapshot;
use crate::index::watch::WatchMode;

/// The tool definition.
pub static TOOL: ToolDef = ToolDef {
    name: "index_status",
    title: "Index status",
    description: "Reports how fresh and complete the workspace index is: the roots, files \
indexed per language, files rejected and why, the index generation and time of the last reload, \
pending changes, and whether a git operation is holding reloads. Call it when an answer is \
surprisingly empty, to tell whether the zero is trustworthy. It waits for the first index \
like every tool; `wait: false` answers with the progress at once.",
    input_schema: || {
        object_schema(
            json!({"wait": {"type": "boolean", "default": true,
                "description": "Wait for the first index generation (default true); false answers with the progress at once."}}),
            &[],
        )
    },
    output_schema: Some(super::structured::Shape {
        paged: false,
        extra: r#"{"generation":{"type":"integer"},"files":{"type":"integer"},"pending":{"type":"integer"},"languages":{"type":"object"}}"#,
        row: "{}",
    }),
    run,
    truncation_hint: default_hint,
    index: super::IndexUse::Status,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    /// Read by the server and `query` before the tool runs (see `IndexUse::Status`).
    #[allow(dead_code)]
    wait: Option<bool>,
}

fn run(args: &Value, env: &ToolEnv) -> ToolOutput {
    if let Err(e) = decode::<Args>("index_status", args) {
        return e;
    }
    let shared = env.shared;
    let mut out = String::from("## Index status\n\n");
    out.push_str(&format!(
        "- Workspace: {}\n",
        crate::render::inline_code(&shared.base_dir.display().to_string())
    ));
    // What the configuration could not honour (a parent's config not used, a root listed
    // twice): on stderr only, an agent would never learn why a root is missing.
    for w in &shared.config.warnings {
        out.push_str(&format!(
            "- Config warning: {}\n",
            crate::render::escape_inline(w)
        ));
    }
    let Some(snap) = shared.index.current() else {
        let (done, total) = shared.index.progress();
        out.push_str(&format!(
            "- Still indexing: {done} of {total} files extracted; no generation published yet. Tool calls wait for it (up to {} s).\n",
            shared.index_wait.as_secs()
        ));
        out.push_str(&serving_line(shared));
        let data = json!({"total": 0, "rows": [], "generation": 0, "files": done});
        return ToolOutput::ok(out).with_data(data);
    };
    // Rows: one per root (its file count as evidence), then the rejected files shown.
    let mut rows = Vec::new();
    out.push_str(&format!(
        "- Generation {}: {} files indexed, {} declarations, {} rejected.\n",
        snap.generation,
        snap.files.len(),
        snap.symbol_count(),
        snap.rejected.len()
    ));
    out.push_str(&freshness_lines(
        &snap,
        shared.index.pending_changes(),
        shared.index.git_hold(),
        &shared.index.watch_mode(),
        std::time::SystemTime::now(),
    ));
    let (restarts, last_panic) = shared.index.restarts();
    if restarts > 0 {
        out.push_str(&format!(
            "- Indexer restarts: {restarts} after a panic (last at `{last_panic}`; see the server \
             log); the index above is from the restarted indexer.\n"
        ));
    }
    out.push_str(&serving_line(shared));
    out.push_str("\n### Roots\n\n| Root | Kind | Files | Declarations |\n|---|---|---|---|\n");
    for (i, root) in snap.roots.iter().enumerate() {
        let files = snap.files.iter().filter(|f| f.root as usize == i).count();
        let decls = snap.names.get(i).map_or(0, |t| t.len());
        out.push_str(&format!(
            "| {} | {} | {files} | {decls} |
",
            crate::render::table_cell(&root.label),
            root.kind.name()
        ));
        let evidence = format!("{files} files, {decls} declarations");
        rows.push(super::structured::row(
            &root.label,
            0,
            "root",
            root.kind.name(),
            "",
            &evidence,
        ));
    }
    let mut per_lang: Vec<(&'static str, usize)> = Vec::new();
    for lang in crate::index::facts::Language::ALL {
        let n = snap.files.iter().filter(|f| f.lang == lang).count();
        if n > 0 {
            per_lang.push((lang.name(), n));
        }
    }
    if !per_lang.is_empty() {
        out.push_str("\n### Files per language\n\n");
        let parts: Vec<String> = per_lang.iter().map(|(l, n)| format!("{l} {n}")).collect();
        out.push_str(&parts.join(", "));
        out.push('\n');
    }
    if !snap.rejected.is_empty() {
        let mut by_reason: std::collections::BTreeMap<&str, usize> = Default::default();
        for r in &snap.rejected {
            *by_reason.entry(r.label).or_default() += 1;
        }
        out.push_str("\n### Rejected files (not parsed; read them directly if they matter)\n\n");
        let parts: Vec<String> = by_reason.iter().map(|(l, n)| format!("{l}: {n}")).collect();
        out.push_str(&format!("_{}_\n\n", parts.join(", ")));
        for r in snap.rejected.iter().take(20) {
            let label = &snap.roots[r.root as usize].label;
            let path = if label == "." {
                r.path.clone()
            } else {
                format!("{label}/{}", r.path)
            };
            out.push_str(&format!(
                "- {}: {}\n",
                crate::render::inline_code(&path),
                r.reason
            ));
            rows.push(super::structured::row(
                &path, 0, "rejected", r.label, "", &r.reason,
            ));
        }
        if snap.rejected.len() > 20 {
            out.push_str(&format!("- …and {} more\n", snap.rejected.len() - 20));
        }
    }
    // Inserted one by one: collecting into a map sorts its input first, and that sort would
    // be one more copy of the sorting code in the binary.
    let mut languages = serde_json::Map::new();
    for (l, n) in &per_lang {
        languages.insert(l.to_string(), Value::from(*n));
    }
    let data = super::structured::with(
        super::structured::page(snap.roots.len() + snap.rejected.len(), 0, None, rows),
        json!({
            "generation": snap.generation,
            "files": snap.files.len(),
            "pending": shared.index.pending_changes(),
            "languages": languages,
        }),
    );
    ToolOutput::ok(out).with_data(data)
}

/// Which process serves: meshd (with its status) or this standalone process.
fn serving_line(shared: &crate::server::Shared) -> String {
    match shared.daemon.get() {
        Some(d) => daemon_line(d),
        None => "- Mode: standalone (this process holds the index).\n".to_string(),
    }
}

/// The daemon section: this answer travelled through meshd, so it is reachable by definition.
fn daemon_line(d: &crate::daemon::DaemonStatus) -> String {
    use std::sync::atomic::Ordering;
    format!(
        "- Daemon: served by meshd pid {} (version {}), reachable on {}, up {}, {} client(s) connected ({} since start), network sandbox {}; log {}.\n",
        d.pid,
        d.version,
        crate::render::inline_code(&d.socket.display().to_string()),
        human_duration(d.uptime().as_secs()),
        d.clients.load(Ordering::Relaxed),
        d.clients_total.load(Ordering::Relaxed),
        if d.sandboxed { "on" } else { "off" },
        crate::render::inline_code(&d.log.display().to_string())
    )
}

/// `45 s`, `12 min 5 s`, `3 h 20 min`, `2 d 4 h`.
fn human_duration(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min {} s", s / 60, s % 60),
        s if s < 86_400 => format!("{} h {} min", s / 3600, s % 3600 / 60),
        s => format!("{} d {} h", s / 86_400, s % 86_400 / 3600),
    }
}

#[cfg(test)]
mod daemon_tests {
    use super::*;

    #[test]
    fn daemon_line_names_pid_version_uptime_and_clients() {
        let d = crate::daemon::DaemonStatus::new(
            "/s/meshd-x.sock".into(),
            "/l/meshd-x.log".into(),
            true,
        );
        d.client_connected();
        d.client_connected();
        d.client_disconnected();
        let line = daemon_line(&d);
        assert!(
            line.contains(&format!("meshd pid {}", std::process::id())),
            "{line}"
        );
        assert!(line.contains(crate::VERSION), "{line}");
        assert!(line.contains("reachable on `/s/meshd-x.sock`"), "{line}");
        assert!(
            line.contains("1 client(s) connected (2 since start)"),
            "{line}"
        );
        assert!(line.contains("sandbox on"), "{line}");
        assert_eq!(human_duration(59), "59 s");
        assert_eq!(human_duration(3_725), "1 h 2 min");
        assert_eq!(human_duration(90_000), "1 d 1 h");
    }
}

/// The freshness block: when the shown generation was published (the last reload) and how
/// long it took, changes seen but not yet published, a git operation holding reloads, and
/// how the workspace is watched.
fn freshness_lines(
    snap: &Snapshot,
    pending: u64,
    git_hold: bool,
    mode: &WatchMode,
    now: std::time::SystemTime,
) -> String {
    let mut out = String::new();
    let what = if snap.generation <= 1 {
        "First index"
    } else {
        "Last reload"
    };
    match snap.published_at {
        Some(at) => {
            let unix_ms = at
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64);
            let age = now.duration_since(at).map_or_else(
                |_| "just now".to_string(),
                |d| format!("{} s ago", d.as_secs()),
            );
            out.push_str(&format!(
                "- {what}: {} ({age}), built in {} ms.\n",
                crate::audit::iso8601_utc_ms(unix_ms),
                snap.build_ms
            ));
        }
        None => out.push_str(&format!("- {what}: built in {} ms.\n", snap.build_ms)),
    }
    let pending = if pending > 0 {
        format!("{pending} change(s) seen and not yet published")
    } else {
        "no pending changes".to_string()
    };
    let hold = if git_hold {
        "; a git operation is in progress, reloads are held until it ends (answers come from \
         the generation above)"
    } else {
        ""
    };
    out.push_str(&format!("- Freshness: {pending}{hold}.\n"));
    out.push_str(&format!("- Watcher: {mode}.\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn freshness_says_pending_hold_mode_and_last_reload() {
        let at = UNIX_EPOCH + Duration::from_secs(1_764_000_000);
        let reloaded = Snapshot {
            generation: 3,
            published_at: Some(at),
            build_ms: 12,
            ..Snapshot::default()
        };
        let first = Snapshot {
            generation: 1,
            ..Snapshot::default()
        };
        let inotify = WatchMode::Inotify {
            dirs: 9,
            git_dirs: 1,
        };
        let polling = WatchMode::Polling {
            every_ms: 2000,
            reason: "MESH_WATCH=poll".into(),
        };
        // (snapshot, pending changes, git operation, watcher, now, the lines it must say).
        let cases = [
            (
                &reloaded,
                4,
                true,
                &inotify,
                at + Duration::from_secs(5),
                [
                    "- Last reload: 2025-11-24T16:00:00.000Z (5 s ago), built in 12 ms.",
                    "4 change(s) seen and not yet published; a git operation is in progress",
                    "- Watcher: inotify, 9 directories watched plus 1 git directories.",
                ],
            ),
            (
                &first,
                0,
                false,
                &polling,
                at,
                [
                    "- First index: built in 0 ms.",
                    "- Freshness: no pending changes.\n",
                    "polling fallback, full rescan every 2.0 s (MESH_WATCH=poll)",
                ],
            ),
        ];
        for (snap, pending, git_op, mode, now, lines) in cases {
            let text = freshness_lines(snap, pending, git_op, mode, now);
            for line in lines {
                assert!(text.contains(line), "{line:?} not in {text}");
            }
        }
    }
}
