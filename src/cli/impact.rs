//! `mesh-mcp impact [--base REF] [--format markdown|json] [--fail-on breaking]`: the diff-aware
//! impact of the current branch for CI runners. Standalone (indexes in-process, no daemon),
//! the same analysis as the `analyze_changes` tool ([`crate::tools::analyze_changes`]): the
//! Markdown is fit to paste as a pull-request comment or a GitHub Actions job summary, the JSON
//! is for machines. Exit status: 0; 1 with `--fail-on breaking` when a contract change breaks
//! its users; 2 for bad usage or when the changes cannot be read (so CI tells the two apart).

use crate::server::Shared;
use crate::tools::analyze_changes::{self, parse_base};

const USAGE: &str = "\
Usage: mesh-mcp impact [--base REF] [--format markdown|json] [--fail-on breaking] [--depth N]
                       [--config FILE]

Diffs the working tree against a base (default: the merge-base of HEAD with origin/HEAD,
origin/main, main, origin/master or master; `--base \"working tree\"` for uncommitted changes
against HEAD) and prints the changed declarations, the contracts touched with their wire-format
verdict, the services affected and one risk line per service. Standalone: no daemon, no MCP client.

Options:
  --base REF           the git revision to compare with, e.g. origin/main
  --format F           markdown (default; fit for a pull-request comment) or json
  --fail-on breaking   exit 1 when a contract change breaks its users
  --depth N            hops through consumers that re-emit a changed topic, 1-5 (default 1)

Exit status: 0; 1 with --fail-on breaking when a contract change breaks its users; 2 for bad
usage or when the changes cannot be read (no git repository, a base no repository has; a
nested repository without it is skipped and said so).

Example (CI): mesh-mcp impact --base origin/main --fail-on breaking >> \"$GITHUB_STEP_SUMMARY\"
";

/// Runs the subcommand; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    let mut base = None;
    let mut json = false;
    let mut fail_on_breaking = false;
    let mut depth = 1usize;
    let mut config_path = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let mut value = |name: &str| -> Result<String, i32> {
            match inline.clone().or_else(|| it.next().cloned()) {
                Some(v) => Ok(v),
                None => {
                    eprintln!(
                        "mesh-mcp impact: {name} needs a value. Try `mesh-mcp impact --help`."
                    );
                    Err(2)
                }
            }
        };
        match flag {
            "--help" | "-h" => return super::print_stdout(USAGE),
            "--base" => match value("--base") {
                Ok(v) => base = Some(v),
                Err(c) => return c,
            },
            "--format" => match value("--format").as_deref() {
                Ok("markdown" | "md") => json = false,
                Ok("json") => json = true,
                Ok(other) => {
                    eprintln!("mesh-mcp impact: unknown format `{other}`; pass markdown or json.");
                    return 2;
                }
                Err(c) => return *c,
            },
            "--fail-on" => match value("--fail-on").as_deref() {
                Ok("breaking") => fail_on_breaking = true,
                Ok("never" | "none") => fail_on_breaking = false,
                Ok(other) => {
                    eprintln!("mesh-mcp impact: unknown --fail-on `{other}`; pass breaking.");
                    return 2;
                }
                Err(c) => return *c,
            },
            "--depth" => match value("--depth").map(|v| v.parse::<usize>()) {
                Ok(Ok(d)) if (1..=5).contains(&d) => depth = d,
                Ok(_) => {
                    eprintln!("mesh-mcp impact: --depth takes a number from 1 to 5.");
                    return 2;
                }
                Err(c) => return c,
            },
            "--config" | "-c" => match value("--config") {
                Ok(v) => config_path = Some(std::path::PathBuf::from(v)),
                Err(c) => return c,
            },
            other => {
                eprintln!(
                    "mesh-mcp impact: unknown argument `{other}`. Try `mesh-mcp impact --help`."
                );
                return 2;
            }
        }
    }
    // The audit row names the call as the tool would be called: its arguments' digest.
    let audited_args = serde_json::json!({"base": base, "depth": depth});
    let base = match parse_base(base.as_deref()) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("mesh-mcp impact: {e}");
            return 2;
        }
    };
    crate::logging::init();
    let config = match super::workspace_config("impact", config_path.as_deref()) {
        Ok(c) => c,
        Err(status) => return status,
    };
    let shared = Shared::start_one_shot(config);
    let snapshot = super::query::wait_for_index(&shared);
    let started = std::time::Instant::now();
    let computed = analyze_changes::compute(&snapshot, shared.jail.base(), &base, depth);
    // Audited like `mesh-mcp query analyze_changes`: the same tool, run from the command line.
    shared.audit(&crate::audit::AuditEntry {
        session_id: format!("cli-{}", std::process::id()),
        trace_id: None,
        tool: "analyze_changes".to_string(),
        args_digest: crate::audit::args_digest(&audited_args),
        status: if computed.is_ok() {
            crate::audit::CallStatus::Success
        } else {
            crate::audit::CallStatus::Error
        },
        files_accessed: computed
            .as_ref()
            .map(|r| r.files.iter().map(|f| f.display.clone()).collect())
            .unwrap_or_default(),
        redactions: 0,
        duration_us: started.elapsed().as_micros() as u64,
    });
    let report = match computed {
        Ok(r) => r,
        Err(e) => {
            // 2, like a usage error: 1 is kept for "a breaking change" (--fail-on breaking).
            eprintln!("mesh-mcp impact: {e}");
            std::mem::forget(shared);
            return 2;
        }
    };
    let text = if json {
        format!(
            "{}\n",
            serde_json::to_string_pretty(&analyze_changes::to_json(&report)).unwrap_or_default()
        )
    } else {
        // A pull-request comment takes up to 64 KiB; all rows, within that.
        let (md, _) = analyze_changes::render_markdown(&report, usize::MAX, 0, 60 * 1024);
        md
    };
    let (text, _) = crate::security::mask_shapes(&text);
    let written = super::print_stdout(&text);
    std::mem::forget(shared);
    if written != 0 {
        return written;
    }
    i32::from(fail_on_breaking && report.breaking())
}
