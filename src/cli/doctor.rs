//! `mesh-mcp doctor [--json] [--fix]`: checks the setup of the workspace in the current
//! directory and says, one line per check, what is fine and what to do about what is not.
//!
//! Checks: the configuration loads; the roots resolve; what the index accepts and refuses (by
//! reason); the exclude patterns still match something; the inotify watch limit; git on PATH;
//! the secret-masking self-test; the daemon's socket, permissions and version; the audit
//! chain; the extraction cache. `--json` prints the same checks as a JSON array that is
//! identical across runs (timings, pids and counts that drift stay in the text output only).
//! `--fix` repairs only what is safe — permissions, a stale socket, a mismatched daemon, a
//! corrupt cache — and never touches the audit log.

use std::io::Write;
use std::path::Path;

use serde::Serialize;

const USAGE: &str = "\
Usage: mesh-mcp doctor [--json] [--fix] [--config FILE]

Checks the configuration, roots, index health, watcher limits, daemon, audit trail and cache
of the workspace in the current directory. --fix repairs what is safe to repair (permissions, a
stale socket, a mismatched daemon, a corrupt cache); the audit log is never changed.

Example: mesh-mcp doctor --fix
";

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Info,
    Warn,
    Error,
}

impl Status {
    fn glyph(self) -> &'static str {
        match self {
            Status::Ok => "✔",
            Status::Info => "ℹ",
            Status::Warn => "⚠",
            Status::Error => "✖",
        }
    }
}

/// One check's result. `message` and `detail` (the roots, the rejected files, where things
/// are) are stable across runs and in both outputs; `volatile` carries figures that drift
/// (timings, pids, row counts) and is shown in the text output only, so `--json` is identical
/// from run to run.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub status: Status,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(skip)]
    pub volatile: Option<String>,
    /// Whether `--fix` can repair this check when it is a warning or an error.
    #[serde(skip)]
    pub fixable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fixed: Option<bool>,
}

impl Check {
    fn new(name: &'static str, status: Status, message: impl Into<String>) -> Check {
        Check {
            name,
            status,
            message: message.into(),
            detail: None,
            volatile: None,
            fixable: false,
            fixed: None,
        }
    }

    fn detail(mut self, d: impl Into<String>) -> Check {
        self.detail = Some(d.into());
        self
    }

    fn volatile(mut self, d: impl Into<String>) -> Check {
        self.volatile = Some(d.into());
        self
    }

    fn fixable(mut self) -> Check {
        self.fixable = true;
        self
    }
}

/// Runs the subcommand; returns the exit status (1 when any check is an error).
pub fn main(args: &[String]) -> i32 {
    let mut json = false;
    let mut fix = false;
    let mut config_path: Option<std::path::PathBuf> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--help" | "-h" => {
                return super::print_stdout(USAGE);
            }
            "--json" => json = true,
            "--fix" => fix = true,
            "--config" | "-c" => match super::config_arg("doctor", it.next()) {
                Some(p) => config_path = Some(p),
                None => return 2,
            },
            other => {
                eprintln!(
                    "mesh-mcp doctor: unknown argument `{other}`. Try `mesh-mcp doctor --help`."
                );
                return 2;
            }
        }
    }
    crate::logging::init();
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("mesh-mcp doctor: cannot read the current directory: {e}");
            return 1;
        }
    };
    let checks = run_checks(&cwd, config_path.as_deref(), fix);
    let errors = checks.iter().filter(|c| c.status == Status::Error).count();
    let warnings = checks.iter().filter(|c| c.status == Status::Warn).count();
    if json {
        let text = serde_json::to_string_pretty(&checks).unwrap_or_else(|_| "[]".into());
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{text}");
    } else {
        eprintln!("mesh-mcp {} doctor", crate::VERSION);
        for c in &checks {
            let fixed = match c.fixed {
                Some(true) => " (fixed)",
                Some(false) => " (could not fix)",
                None => "",
            };
            eprintln!("{} {}: {}{fixed}", c.status.glyph(), c.name, c.message);
            for d in [&c.detail, &c.volatile].into_iter().flatten() {
                for line in d.lines() {
                    eprintln!("    {line}");
                }
            }
        }
        // `--fix` is suggested only when it can repair one of the problems found.
        let fixable = checks
            .iter()
            .any(|c| c.fixable && matches!(c.status, Status::Warn | Status::Error));
        eprintln!(
            "{} checks: {errors} error(s), {warnings} warning(s).{}",
            checks.len(),
            if fixable && !fix {
                " Run `mesh-mcp doctor --fix` to repair what is safe to repair."
            } else {
                ""
            }
        );
    }
    i32::from(errors > 0)
}

/// Every check, in a fixed order.
pub fn run_checks(cwd: &Path, config_path: Option<&Path>, fix: bool) -> Vec<Check> {
    let mut checks = Vec::new();
    let config = match crate::config::discover(cwd, config_path) {
        Ok(c) => {
            let source = match &c.config_file {
                Some(p) => format!("loaded {}", display_rel(cwd, p)),
                None => "zero-config (no .agents/mesh-mcp.toml or mesh-mcp.toml)".to_string(),
            };
            let mut check = Check::new(
                "config",
                if c.warnings.is_empty() {
                    Status::Ok
                } else {
                    Status::Warn
                },
                source,
            );
            if !c.warnings.is_empty() {
                check = check.detail(c.warnings.join("\n"));
            }
            checks.push(check);
            c
        }
        Err(e) => {
            checks.push(Check::new("config", Status::Error, e.to_string()));
            return checks;
        }
    };
    let labels: Vec<&str> = config.roots.iter().map(|r| r.label.as_str()).collect();
    checks.push(
        Check::new(
            "roots",
            Status::Ok,
            format!(
                "{} root(s) resolved under the workspace",
                config.roots.len()
            ),
        )
        .detail(labels.join(", ")),
    );
    checks.extend(index_checks(&config));
    checks.push(inotify_check(&config));
    checks.push(git_check());
    checks.push(masking_check());
    checks.extend(daemon_checks(&config.base_dir, fix));
    checks.push(cache_check(&config, fix));
    checks.extend(audit_checks());
    checks
}

/// The daemon: socket directory and socket permissions, a stale socket, a reachable daemon
/// and its version. `fix` tightens permissions, removes a stale socket and stops a daemon of
/// another version (the next `mesh-mcp run` starts a matching one).
fn daemon_checks(base: &Path, fix: bool) -> Vec<Check> {
    let mut out = Vec::new();
    let dir = match crate::daemon::socket::socket_dir() {
        Ok(d) => d,
        Err(e) => {
            out.push(Check::new("daemon socket", Status::Warn, e.to_string()));
            return out;
        }
    };
    let mut probe = crate::daemon::probe_at(base, &dir);
    if !probe.problems.is_empty() {
        let mut check = Check::new(
            "socket permissions",
            Status::Error,
            probe.problems.join("; "),
        )
        .fixable();
        if fix {
            let ok = tighten(&dir, 0o700)
                && probe
                    .socket
                    .as_ref()
                    .is_none_or(|s| !s.exists() || tighten(s, 0o600));
            check.fixed = Some(ok);
            if ok {
                check.status = Status::Ok;
                probe = crate::daemon::probe_at(base, &dir);
            }
        }
        out.push(check);
    } else {
        out.push(
            Check::new(
                "socket permissions",
                Status::Ok,
                "socket directory is private (0700) and owned by you",
            )
            .detail(dir.display().to_string()),
        );
    }
    let socket = probe.socket.clone();
    let exists = socket.as_ref().is_some_and(|s| s.exists());
    if exists && !probe.reachable {
        let mut check = Check::new(
            "daemon",
            Status::Warn,
            "a stale socket is left by a daemon that is gone; `mesh-mcp run` replaces it, `--fix` removes it",
        )
        .fixable();
        if fix && let Some(s) = &socket {
            let ok = std::fs::remove_file(s).is_ok();
            check.fixed = Some(ok);
            if ok {
                check.status = Status::Ok;
            }
        }
        out.push(check);
        return out;
    }
    if !probe.reachable {
        out.push(match crate::daemon::proxy::meshd_path() {
            Ok(meshd) => Check::new(
                "daemon",
                Status::Info,
                "no daemon serves this workspace now; `mesh-mcp run` starts one on demand",
            )
            .detail(format!("meshd: {}", meshd.display())),
            Err(e) => Check::new(
                "daemon",
                Status::Warn,
                format!(
                    "{e}. Without it `mesh-mcp run` serves each client in its own process (no shared index)"
                ),
            ),
        });
        return out;
    }
    let version = probe.version.clone().unwrap_or_else(|| "unknown".into());
    let detail = format!(
        "version {version}, sandboxed {}, log {}",
        probe
            .sandboxed
            .map_or("unknown".to_string(), |b| b.to_string()),
        probe.log.display()
    );
    let drift = format!(
        "pid {}, up {}s",
        probe.pid.map_or("?".to_string(), |p| p.to_string()),
        probe.uptime.map_or(0, |u| u.as_secs()),
    );
    if version == crate::VERSION {
        out.push(
            Check::new(
                "daemon",
                Status::Ok,
                "a daemon of this version serves this workspace",
            )
            .detail(detail)
            .volatile(drift),
        );
    } else {
        let mut check = Check::new(
            "daemon",
            Status::Warn,
            format!(
                "the running daemon is version {version}, this is {}; clients fall back to standalone until it stops (`--fix` stops it)",
                crate::VERSION
            ),
        )
        .detail(detail)
        .volatile(drift)
        .fixable();
        if fix && let Some(pid) = probe.pid {
            let ok = crate::sys::terminate(pid);
            check.fixed = Some(ok);
            if ok {
                check.status = Status::Ok;
            }
        }
        out.push(check);
    }
    out
}

/// The optional fact cache: off (the default), or its file's integrity. `fix` removes a
/// damaged file (it is rebuilt on the next start; the cache never changes results).
fn cache_check(config: &crate::config::Config, fix: bool) -> Check {
    let path = crate::index::cache::default_path(&config.base_dir);
    let wanted = crate::index::cache::wanted(config);
    let Some(path) = path else {
        return Check::new(
            "cache",
            Status::Info,
            "no HOME directory: the fact cache is off",
        );
    };
    if !path.exists() {
        return Check::new(
            "cache",
            Status::Info,
            if wanted {
                "the fact cache is on and not written yet"
            } else {
                "the fact cache is off (it did not make warm starts faster in our measurements; `[cache] enabled = true` or MESH_CACHE=on turns it on)"
            },
        );
    }
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let healthy =
        rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .and_then(|c| c.query_row("PRAGMA quick_check", [], |r| r.get::<_, String>(0)))
            .is_ok_and(|v| v == "ok");
    if healthy {
        return Check::new(
            "cache",
            Status::Ok,
            if wanted {
                "the fact cache is on and healthy"
            } else {
                "the fact cache is off; an earlier cache file is healthy"
            },
        )
        .detail(path.display().to_string())
        .volatile(format!("{size} bytes"));
    }
    let mut check = Check::new(
        "cache",
        Status::Warn,
        "the fact cache file is damaged; it is rebuilt on the next start (`--fix` removes it now)",
    )
    .detail(path.display().to_string())
    .fixable();
    if fix {
        let ok = std::fs::remove_file(&path).is_ok();
        for suffix in ["-wal", "-shm"] {
            let mut p = path.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(p);
        }
        check.fixed = Some(ok);
        if ok {
            check.status = Status::Ok;
        }
    }
    check
}

/// Sets `mode` on a path we own; false when that is not possible.
fn tighten(path: &Path, mode: u32) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).is_ok()
}

fn display_rel(base: &Path, p: &Path) -> String {
    p.strip_prefix(base)
        .map(|r| r.display().to_string())
        .unwrap_or_else(|_| p.display().to_string())
}

/// Indexes once and reports what was accepted and refused, and dead exclude patterns.
fn index_checks(config: &crate::config::Config) -> Vec<Check> {
    let mut out = Vec::new();
    let handle = crate::index::snapshot::IndexHandle::new();
    let mut indexer =
        crate::index::Indexer::new(std::sync::Arc::new(config.clone()), handle.clone());
    let started = std::time::Instant::now();
    let snap = indexer.rebuild();
    let elapsed = started.elapsed();
    let mut per_lang: std::collections::BTreeMap<&str, usize> = Default::default();
    for f in &snap.files {
        *per_lang.entry(f.lang.name()).or_default() += 1;
    }
    let langs: Vec<String> = per_lang.iter().map(|(l, n)| format!("{l} {n}")).collect();
    out.push(
        Check::new(
            "index",
            if snap.files.is_empty() {
                Status::Warn
            } else {
                Status::Ok
            },
            if snap.files.is_empty() {
                "no indexable file found under the roots; check `roots` and `exclude`".to_string()
            } else {
                format!(
                    "{} files indexed, {} declarations",
                    snap.files.len(),
                    snap.symbol_count()
                )
            },
        )
        .detail(langs.join(", "))
        .volatile(format!("built in {} ms", elapsed.as_millis())),
    );
    if snap.rejected.is_empty() {
        out.push(Check::new(
            "rejected files",
            Status::Ok,
            "every indexable file passed the parser guard",
        ));
    } else {
        let mut by_reason: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
        for r in &snap.rejected {
            by_reason
                .entry(r.label)
                .or_default()
                .push(match snap.roots.get(r.root as usize) {
                    Some(root) if root.label != "." => format!("{}/{}", root.label, r.path),
                    _ => r.path.clone(),
                });
        }
        let summary: Vec<String> = by_reason
            .iter()
            .map(|(reason, paths)| format!("{} {reason}", paths.len()))
            .collect();
        let mut detail = String::new();
        for (reason, paths) in &by_reason {
            for p in paths.iter().take(10) {
                detail.push_str(&format!("{reason}: {p}\n"));
            }
            if paths.len() > 10 {
                detail.push_str(&format!("{reason}: …and {} more\n", paths.len() - 10));
            }
        }
        out.push(
            Check::new(
                "rejected files",
                Status::Info,
                format!(
                    "{} file(s) not parsed ({}); tools list them as not indexed",
                    snap.rejected.len(),
                    summary.join(", ")
                ),
            )
            .detail(detail.trim_end()),
        );
    }
    // Configured exclude patterns that match no path are likely dead config.
    if !config.excludes.is_empty() {
        let dead: Vec<&String> = config
            .excludes
            .iter()
            .filter(|pat| !exclude_matches_something(config, pat))
            .collect();
        out.push(if dead.is_empty() {
            Check::new(
                "excludes",
                Status::Ok,
                format!(
                    "{} configured exclude pattern(s), each matches something",
                    config.excludes.len()
                ),
            )
        } else {
            Check::new(
                "excludes",
                Status::Warn,
                format!(
                    "{} exclude pattern(s) match nothing (likely dead config): {}",
                    dead.len(),
                    dead.iter()
                        .map(|d| format!("`{d}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        });
    }
    out
}

/// True when a configured exclude pattern matches some path under a root (a shallow walk).
fn exclude_matches_something(config: &crate::config::Config, pattern: &str) -> bool {
    let opts = crate::index::crawl::CrawlOptions {
        extra_excludes: vec![pattern.to_string()],
        use_default_excludes: false,
        indexable: crate::index::crawl::accept_all,
    };
    let mut budget = 20_000usize;
    for root in &config.roots {
        let mut stack = vec![(root.path.clone(), String::new())];
        while let Some((dir, rel)) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in rd.filter_map(Result::ok) {
                if budget == 0 {
                    return true; // too big to tell: do not accuse the pattern
                }
                budget -= 1;
                let name = e.file_name().to_string_lossy().into_owned();
                if name == ".git" {
                    continue;
                }
                let child = if rel.is_empty() {
                    name.clone()
                } else {
                    format!("{rel}/{name}")
                };
                let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
                if crate::index::crawl::is_ignored(&root.path, &child, is_dir, &opts) {
                    return true;
                }
                if is_dir {
                    stack.push((e.path(), child));
                }
            }
        }
    }
    false
}

/// The inotify watch limit against the number of directories to watch.
fn inotify_check(config: &crate::config::Config) -> Check {
    let Ok(raw) = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches") else {
        return Check::new(
            "inotify",
            Status::Info,
            "no inotify on this system: the index refreshes by periodic rescans",
        );
    };
    let limit: u64 = raw.trim().parse().unwrap_or(0);
    let mut dirs = 0u64;
    for root in &config.roots {
        let mut stack = vec![root.path.clone()];
        while let Some(d) = stack.pop() {
            dirs += 1;
            if dirs > 1_000_000 {
                break;
            }
            if let Ok(rd) = std::fs::read_dir(&d) {
                for e in rd.filter_map(Result::ok) {
                    let name = e.file_name();
                    let skip = matches!(
                        name.to_str(),
                        Some(".git" | "node_modules" | "target" | "build" | ".venv" | "dist")
                    );
                    if !skip && e.file_type().is_ok_and(|t| t.is_dir()) {
                        stack.push(e.path());
                    }
                }
            }
        }
    }
    if limit >= 524_288 || limit > dirs * 4 {
        Check::new(
            "inotify",
            Status::Ok,
            "fs.inotify.max_user_watches is high enough for this workspace",
        )
        .volatile(format!("limit {limit}, about {dirs} directories to watch"))
    } else {
        Check::new(
            "inotify",
            Status::Warn,
            "fs.inotify.max_user_watches is low: live updates may fall back to rescans. Raise it with `sudo sysctl fs.inotify.max_user_watches=524288`",
        )
        .volatile(format!("limit {limit}, about {dirs} directories to watch"))
    }
}

fn git_check() -> Check {
    match std::process::Command::new("git")
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
    {
        Ok(o) if o.status.success() => Check::new(
            "git",
            Status::Ok,
            "git is on PATH (analyze_grpc's wire-format check can compare against a base)",
        )
        .detail(String::from_utf8_lossy(&o.stdout).trim().to_string()),
        _ => Check::new(
            "git",
            Status::Warn,
            "git is not on PATH: analyze_grpc cannot check .proto changes against a base; install git",
        ),
    }
}

/// Two known secrets must be masked and two harmless lines must not.
fn masking_check() -> Check {
    use crate::security::{LineContext, mask_line};
    let masked = mask_line("password: \"hunter2\"", LineContext::Code).is_some()
        && mask_line("api-key: abc123", LineContext::Config).is_some();
    let kept = mask_line("password: dto.password", LineContext::Code).is_none()
        && mask_line("token: ${API_TOKEN}", LineContext::Config).is_none();
    if masked && kept {
        Check::new(
            "secret masking",
            Status::Ok,
            "self-test passed (secrets masked, references kept)",
        )
    } else {
        Check::new(
            "secret masking",
            Status::Error,
            "self-test failed: snippets may show secrets; please report this",
        )
    }
}

/// The audit trail: where it is, and whether its hash chain verifies (never repaired).
fn audit_checks() -> Vec<Check> {
    let path = crate::audit::AuditLog::default_path();
    if !path.exists() {
        return vec![
            Check::new(
                "audit",
                Status::Info,
                "no audit database yet (it is created by the first tool call)",
            )
            .detail(path.display().to_string()),
        ];
    }
    match crate::audit::verify(&path) {
        Ok(report) => vec![
            Check::new("audit", Status::Ok, "audit hash chain verifies")
                .detail(path.display().to_string())
                .volatile(format!("{} rows", report.rows)),
        ],
        Err(e @ crate::audit::AuditError::BrokenChain { .. }) => vec![
            Check::new(
                "audit",
                Status::Error,
                format!("{e} — the log is evidence and is never repaired; `mesh-mcp audit verify` names the row"),
            )
            .detail(path.display().to_string()),
        ],
        Err(e) => vec![Check::new(
            "audit",
            Status::Error,
            format!("cannot read the audit database: {e}"),
        )],
    }
}
