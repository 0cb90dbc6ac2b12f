//! `mesh-mcp stats`: summarise audited tool calls from the local audit database.
//!
//! Human output goes to stderr; `--json` writes one JSON object to stdout instead. Exit status:
//! 0 on success (also for an empty window), 1 when the database cannot be read, 2 for a usage
//! error such as a malformed `--since`.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::audit::{AuditLog, P95_MIN_SAMPLES, Stats, iso8601_utc_ms, read_stats};

/// The text printed by `mesh-mcp stats --help`.
pub const USAGE: &str = "\
mesh-mcp stats — summarise audited tool calls (read-only, local)

Usage: mesh-mcp stats [--since 7d|24h|30m|45s|all] [--workspace DIR | --all-workspaces]
                      [--json] [--db PATH]

Options:
  --since WINDOW    only calls in the last N days (d), hours (h), minutes (m) or seconds (s),
                    or `all`; default 7d
  --workspace DIR   only calls answered for the workspace at DIR (default: the workspace of
                    the current directory, as `mesh-mcp run` would serve it)
  --all-workspaces  every call in the database, whatever its workspace
  --json            print the summary as one JSON object on stdout
  --db PATH         the audit database (default: $MESH_AUDIT_DB, else
                    ~/.cache/mesh-mcp/audit.db; one database serves all your workspaces)
  -h, --help        print this help

Example: mesh-mcp stats --since 24h
";

/// The `--since` window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Window {
    /// Every recorded call.
    All,
    /// The last `amount` `unit`s (`unit` is one of `s`, `m`, `h`, `d`).
    Last { amount: u64, unit: char },
}

impl Window {
    /// The window's length, or `None` for `all` or a span too large to represent.
    fn duration(self) -> Option<Duration> {
        match self {
            Window::All => None,
            Window::Last { amount, unit } => {
                let per = match unit {
                    's' => 1,
                    'm' => 60,
                    'h' => 3600,
                    _ => 86_400,
                };
                amount.checked_mul(per).map(Duration::from_secs)
            }
        }
    }

    /// The earliest moment counted, `None` when everything counts (including windows that
    /// reach back before the Unix epoch).
    fn start(self, now: SystemTime) -> Option<SystemTime> {
        self.duration()
            .and_then(|d| now.checked_sub(d))
            .filter(|t| *t > SystemTime::UNIX_EPOCH)
    }
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Window::All => f.write_str("all"),
            Window::Last { amount, unit } => write!(f, "{amount}{unit}"),
        }
    }
}

/// Which workspace's calls to count.
#[derive(Debug, PartialEq, Eq)]
enum Scope {
    /// The workspace of the current directory.
    Current,
    /// The workspace at this directory.
    Dir(PathBuf),
    /// Every call, whatever its workspace.
    All,
}

/// What the command line asked for.
#[derive(Debug, PartialEq, Eq)]
struct Options {
    help: bool,
    window: Window,
    json: bool,
    db: Option<PathBuf>,
    scope: Scope,
}

/// A command line we cannot act on.
#[derive(Debug, PartialEq, Eq)]
enum UsageError {
    /// `--since` got something other than `<N>s|m|h|d` or `all`.
    BadSince(String),
    /// A flag we do not know.
    UnknownFlag(String),
    /// A flag that needs a value came last.
    MissingValue(&'static str),
    /// `--workspace` and `--all-workspaces` together.
    BothScopes,
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageError::BadSince(v) => write!(
                f,
                "--since `{v}` is not a window; use a positive whole number followed by d, h, m or s (7d, 24h, 30m, 45s) or `all`"
            ),
            UsageError::UnknownFlag(a) => write!(f, "unknown option `{a}`"),
            UsageError::MissingValue(flag) => write!(f, "`{flag}` needs a value"),
            UsageError::BothScopes => write!(
                f,
                "`--workspace` and `--all-workspaces` ask for different calls; give one of them"
            ),
        }
    }
}

impl std::error::Error for UsageError {}

/// Parses `7d`, `24h`, `30m`, `45s` or `all`. Works on chars, so non-ASCII input is an error,
/// never a panic.
fn parse_since(s: &str) -> Result<Window, UsageError> {
    let bad = || UsageError::BadSince(s.to_string());
    if s == "all" {
        return Ok(Window::All);
    }
    let unit = s.chars().last().ok_or_else(bad)?;
    if !matches!(unit, 's' | 'm' | 'h' | 'd') {
        return Err(bad());
    }
    let digits = &s[..s.len() - unit.len_utf8()];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let amount: u64 = digits.parse().map_err(|_| bad())?;
    if amount == 0 {
        return Err(bad());
    }
    Ok(Window::Last { amount, unit })
}

fn parse(args: &[String]) -> Result<Options, UsageError> {
    let mut o = Options {
        help: false,
        window: Window::Last {
            amount: 7,
            unit: 'd',
        },
        json: false,
        db: None,
        scope: Scope::Current,
    };
    let mut scopes = 0;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-h" | "--help" => o.help = true,
            "--json" => o.json = true,
            "--since" => {
                o.window = parse_since(it.next().ok_or(UsageError::MissingValue("--since"))?)?
            }
            "--db" => {
                o.db = Some(PathBuf::from(
                    it.next().ok_or(UsageError::MissingValue("--db"))?,
                ))
            }
            "--all-workspaces" => {
                scopes += 1;
                o.scope = Scope::All
            }
            "--workspace" => {
                scopes += 1;
                o.scope = Scope::Dir(PathBuf::from(
                    it.next().ok_or(UsageError::MissingValue("--workspace"))?,
                ))
            }
            other => {
                if let Some(v) = other.strip_prefix("--since=") {
                    o.window = parse_since(v)?;
                } else if let Some(v) = other.strip_prefix("--workspace=") {
                    if v.is_empty() {
                        return Err(UsageError::MissingValue("--workspace"));
                    }
                    scopes += 1;
                    o.scope = Scope::Dir(PathBuf::from(v));
                } else if let Some(v) = other.strip_prefix("--db=") {
                    if v.is_empty() {
                        return Err(UsageError::MissingValue("--db"));
                    }
                    o.db = Some(PathBuf::from(v));
                } else {
                    return Err(UsageError::UnknownFlag(other.to_string()));
                }
            }
        }
    }
    if scopes > 1 {
        return Err(UsageError::BothScopes);
    }
    Ok(o)
}

/// `errors / calls` as a fraction, 0 for no calls.
fn error_rate(errors: u64, calls: u64) -> f64 {
    if calls == 0 {
        0.0
    } else {
        errors as f64 / calls as f64
    }
}

/// A latency for people: µs below a millisecond, then ms, then seconds.
fn human_us(us: u64) -> String {
    if us < 1000 {
        format!("{us} µs")
    } else if us < 1_000_000 {
        format!("{} ms", crate::render::decimal(us, 1000, 1))
    } else {
        format!("{} s", crate::render::decimal(us, 1_000_000, 2))
    }
}

/// What a summary covers: the database, the workspace and window asked for, and the figures
/// read; the one argument of both renderings.
#[derive(Clone, Copy)]
struct Summary<'a> {
    db: &'a Path,
    workspace: Option<&'a str>,
    window: Window,
    since: Option<&'a str>,
    stats: &'a Stats,
}

impl Summary<'_> {
    /// The `--json` object: the same figures as the human summary.
    fn to_json(self) -> serde_json::Value {
        let s = self.stats;
        serde_json::json!({
            "db": self.db.display().to_string(),
            "workspace": self.workspace,
            "other_workspaces_calls": s.other_workspaces,
            "window": self.window.to_string(),
            "since": self.since,
            "calls": s.calls,
            "errors": s.errors,
            "is_error_rate": error_rate(s.errors, s.calls),
            "latency_recorded": s.latency_recorded,
            "p95_min_samples": P95_MIN_SAMPLES,
            "tools": s.tools,
            "session_count": s.sessions.len(),
            "sessions": s.sessions,
            "top_files": s.top_files,
            "local_only": true,
        })
    }
}

/// The human summary, written to stderr by [`main`].
fn human(summary: Summary) -> String {
    let Summary {
        db,
        workspace,
        window,
        since,
        stats: s,
    } = summary;
    use std::fmt::Write as _;
    let mut o = String::new();
    let span = match since {
        Some(t) => format!("last {window} (since {t})"),
        None => "all recorded calls".to_string(),
    };
    let _ = writeln!(o, "mesh-mcp stats: {}", db.display());
    let _ = writeln!(o, "workspace: {}", workspace.unwrap_or("all workspaces"));
    let _ = writeln!(o, "window: {span}");
    let _ = writeln!(
        o,
        "calls: {}   isError rate: {}/{} ({}%)",
        s.calls,
        s.errors,
        s.calls,
        crate::render::decimal(100 * s.errors, s.calls, 1)
    );
    let width = s
        .tools
        .iter()
        .map(|t| t.tool.chars().count())
        .max()
        .unwrap_or(0)
        .max(4);
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "  {:<width$}  {:>7}  {:>7}  {:>10}  {:>10}",
        "tool", "calls", "errors", "p50", "p95"
    );
    for t in &s.tools {
        let (p50, p95) = if !s.latency_recorded {
            ("not recorded".to_string(), "not recorded".to_string())
        } else {
            (
                t.p50_us.map(human_us).unwrap_or_else(|| "—".into()),
                t.p95_us
                    .map(human_us)
                    .unwrap_or_else(|| format!("(<{P95_MIN_SAMPLES})")),
            )
        };
        let _ = writeln!(
            o,
            "  {:<width$}  {:>7}  {:>7}  {:>10}  {:>10}",
            t.tool, t.calls, t.errors, p50, p95
        );
    }
    if s.latency_recorded && s.tools.iter().any(|t| t.p95_us.is_none()) {
        let _ = writeln!(
            o,
            "  (<{P95_MIN_SAMPLES}): fewer than {P95_MIN_SAMPLES} timed calls, too few for a p95"
        );
    }
    let _ = writeln!(o);
    match (s.sessions.first(), s.sessions.iter().map(|x| &x.last).max()) {
        (Some(first), Some(last)) => {
            let _ = writeln!(
                o,
                "sessions: {} (first call {}, last call {})",
                s.sessions.len(),
                first.first,
                last
            );
        }
        _ => {
            let _ = writeln!(o, "sessions: 0");
        }
    }
    if s.top_files.is_empty() {
        let _ = writeln!(o, "most-returned files: none recorded");
    } else {
        let _ = writeln!(o, "most-returned files:");
        for f in &s.top_files {
            let _ = writeln!(o, "  {:>6}  {}", f.count, f.path);
        }
    }
    let _ = writeln!(o);
    if s.other_workspaces > 0 {
        let _ = writeln!(o, "{}", other_workspaces_note(s.other_workspaces));
    }
    let _ = writeln!(
        o,
        "Every figure is counted from the local audit database; nothing is estimated and nothing leaves this machine."
    );
    o
}

/// Says how many calls of the window another workspace's filter left out, and how to see them.
fn other_workspaces_note(calls: u64) -> String {
    format!(
        "{calls} more call(s) in this window were answered for other workspaces (or recorded before calls named their workspace): `--all-workspaces` counts them"
    )
}

/// The workspace directory whose calls `scope` asks for, as the server records it (the
/// canonical directory `mesh-mcp run` serves); `None` for every workspace.
fn scope_dir(scope: &Scope) -> Result<Option<String>, String> {
    let dir = match scope {
        Scope::All => return Ok(None),
        Scope::Dir(d) => d.clone(),
        Scope::Current => std::env::current_dir()
            .map_err(|e| format!("cannot read the current directory: {e}"))?,
    };
    // The server records the directory its configuration was discovered for; a configuration
    // that does not load still names its directory by the canonical path.
    let base = match crate::config::discover(&dir, None) {
        Ok(config) => config.base_dir,
        Err(_) => std::fs::canonicalize(&dir)
            .map_err(|e| format!("workspace `{}`: {e}", dir.display()))?,
    };
    Ok(Some(base.display().to_string()))
}

/// Runs the subcommand; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    crate::logging::init();
    let opts = match parse(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("mesh-mcp stats: {e}. Run `mesh-mcp stats --help` for usage.");
            return 2;
        }
    };
    if opts.help {
        return super::print_stdout(USAGE);
    }
    let db = opts.db.unwrap_or_else(AuditLog::default_path);
    let start = opts.window.start(SystemTime::now());
    let since = start.map(|t| {
        let ms = t
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0);
        iso8601_utc_ms(ms)
    });
    let workspace = match scope_dir(&opts.scope) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("mesh-mcp stats: {e}. Pass --workspace DIR or --all-workspaces.");
            return 2;
        }
    };
    let stats = match read_stats(&db, start, workspace.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("mesh-mcp stats: {e}");
            return 1;
        }
    };
    let summary = Summary {
        db: &db,
        workspace: workspace.as_deref(),
        window: opts.window,
        since: since.as_deref(),
        stats: &stats,
    };
    if opts.json {
        let value = summary.to_json();
        let mut out = std::io::stdout().lock();
        if let Err(e) = writeln!(out, "{value}").and_then(|()| out.flush()) {
            eprintln!("mesh-mcp stats: cannot write to stdout: {e}");
            return 1;
        }
        return 0;
    }
    if stats.calls == 0 {
        let span = match opts.window {
            Window::All => "at all".to_string(),
            w => format!("in the last {w}"),
        };
        let place = match &workspace {
            Some(w) => format!(" for {w}"),
            None => String::new(),
        };
        eprintln!(
            "mesh-mcp stats: no audited tool calls{place} {span} ({}); nothing to summarise",
            db.display()
        );
        if stats.other_workspaces > 0 {
            eprintln!("{}", other_workspaces_note(stats.other_workspaces));
        }
        return 0;
    }
    eprint!("{}", human(summary));
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::{FileCount, ToolStats};
    use crate::cli::test_support::args;

    #[test]
    fn since_accepts_the_documented_forms() {
        assert_eq!(parse_since("all"), Ok(Window::All));
        assert_eq!(
            parse_since("7d"),
            Ok(Window::Last {
                amount: 7,
                unit: 'd'
            })
        );
        for (s, secs) in [("24h", 86_400), ("30m", 1800), ("45s", 45), ("2d", 172_800)] {
            let w = parse_since(s).expect(s);
            assert_eq!(w.duration(), Some(Duration::from_secs(secs)), "{s}");
        }
    }

    #[test]
    fn since_rejects_garbage_without_panicking() {
        for s in [
            "",
            "d",
            "7",
            "7w",
            "7D",
            "-7d",
            "+7d",
            "0d",
            "7.5h",
            "7 d",
            "７d",
            "7д",
            "дd",
            "é",
            "🙂",
            "99999999999999999999999d",
            "all7d",
        ] {
            assert!(
                matches!(parse_since(s), Err(UsageError::BadSince(_))),
                "{s:?} should be rejected"
            );
        }
    }

    #[test]
    fn huge_windows_mean_everything() {
        let w = parse_since("18446744073709551615d").expect("parses");
        assert_eq!(w.duration(), None);
        assert_eq!(w.start(SystemTime::now()), None);
        let w = parse_since("100000000d").expect("parses");
        assert_eq!(
            w.start(SystemTime::now()),
            None,
            "before the epoch counts all"
        );
    }

    #[test]
    fn flags_parse_in_both_spellings() {
        let o = parse(&args(&["--since", "24h", "--json", "--db", "a.db"])).expect("ok");
        assert!(o.json);
        assert_eq!(o.window.to_string(), "24h");
        assert_eq!(o.db, Some(PathBuf::from("a.db")));
        let o = parse(&args(&["--since=all", "--db=b.db"])).expect("ok");
        assert_eq!(o.window, Window::All);
        assert_eq!(o.db, Some(PathBuf::from("b.db")));
        assert_eq!(parse(&args(&[])).expect("ok").window.to_string(), "7d");
        assert_eq!(
            parse(&args(&["--since"])),
            Err(UsageError::MissingValue("--since"))
        );
        assert_eq!(parse(&args(&[])).expect("ok").scope, Scope::Current);
        assert_eq!(
            parse(&args(&["--all-workspaces"])).expect("ok").scope,
            Scope::All
        );
        assert_eq!(
            parse(&args(&["--workspace", "/a"])).expect("ok").scope,
            Scope::Dir(PathBuf::from("/a"))
        );
        assert_eq!(
            parse(&args(&["--workspace=/b"])).expect("ok").scope,
            Scope::Dir(PathBuf::from("/b"))
        );
        assert_eq!(
            parse(&args(&["--workspace"])),
            Err(UsageError::MissingValue("--workspace"))
        );
        assert_eq!(
            parse(&args(&["--all-workspaces", "--workspace", "."])),
            Err(UsageError::BothScopes)
        );
        assert_eq!(
            parse(&args(&["--verbose"])),
            Err(UsageError::UnknownFlag("--verbose".into()))
        );
    }

    #[test]
    fn latencies_read_naturally() {
        assert_eq!(human_us(7), "7 µs");
        assert_eq!(human_us(1500), "1.5 ms");
        assert_eq!(human_us(2_340_000), "2.34 s");
    }

    #[test]
    fn human_summary_has_every_section() {
        let s = Stats {
            calls: 3,
            errors: 1,
            latency_recorded: true,
            tools: vec![ToolStats {
                tool: "smart_search".into(),
                calls: 3,
                errors: 1,
                timed: 3,
                p50_us: Some(800),
                p95_us: None,
            }],
            sessions: vec![],
            top_files: vec![FileCount {
                path: "svc/a.rs".into(),
                count: 2,
            }],
            other_workspaces: 4,
        };
        let summary = Summary {
            db: Path::new("/x/audit.db"),
            workspace: Some("/w"),
            window: Window::All,
            since: None,
            stats: &s,
        };
        let text = human(summary);
        for needle in [
            "/x/audit.db",
            "isError rate: 1/3 (33.3%)",
            "smart_search",
            "800 µs",
            "(<20)",
            "fewer than 20 timed calls, too few for a p95",
            "svc/a.rs",
            "workspace: /w",
            "4 more call(s) in this window were answered for other workspaces",
            "--all-workspaces",
            "nothing leaves this machine",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in\n{text}");
        }
        let j = summary.to_json();
        assert_eq!(j["calls"], 3);
        assert_eq!(j["tools"][0]["p50_us"], 800);
        assert_eq!(j["workspace"], "/w");
        assert_eq!(j["other_workspaces_calls"], 4);
        assert!(j["tools"][0]["p95_us"].is_null());
    }
}
