//! `mesh-mcp query <tool> ['<json args>'] [--json]`: one tool call answered on stdout, for
//! people and scripts, without an MCP client. It indexes in-process (standalone), goes through
//! the same [`crate::tools::invoke`] as the MCP session (stop rules, cap) and is audited like
//! any other call. Exit status: 0 for an answer, 1 for an `isError` answer, 2 for bad usage.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::server::Shared;
use crate::tools::{Outcome, ToolEnv};

const USAGE: &str = "\
Usage: mesh-mcp query <tool> ['<json arguments>'] [--json] [--config FILE]

Answers one tool call for the workspace in the current directory and prints the Markdown answer
on stdout (--json prints the raw MCP result, with structuredContent: the same facts as JSON
rows). Exit status 1 when the answer is an error, 2 for bad usage.

Examples:
  mesh-mcp query smart_search '{\"query\": \"OrderService\"}'
  mesh-mcp query analyze_grpc '{\"target\": \"OrderService.CreateOrder\"}' --json
  mesh-mcp query index_status
  mesh-mcp query find_dependents --help    (one tool's description and arguments)
";

/// `mesh-mcp query <tool> --help`: the tool's description and its arguments, from the same
/// definition `tools/list` serves.
pub fn tool_help(tool: &str) -> Result<String, String> {
    let registry = crate::tools::Registry::standard();
    let Some(def) = registry.get(tool) else {
        let names: Vec<&str> = registry.all().iter().map(|t| t.name).collect();
        return Err(format!(
            "unknown tool `{tool}`. The tools are: {}.",
            names.join(", ")
        ));
    };
    let schema = (def.input_schema)();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut t = format!(
        "Usage: mesh-mcp query {} ['<json arguments>'] [--json]\n\n{} — {}\n\nArguments:\n",
        def.name, def.title, def.description
    );
    if let Some(props) = schema["properties"].as_object() {
        for (name, p) in props {
            let mut kind = p["type"].as_str().unwrap_or("any").to_string();
            if let (Some(lo), Some(hi)) = (p["minimum"].as_i64(), p["maximum"].as_i64()) {
                kind = format!("{kind} {lo}–{hi}, default {}", p["default"]);
            }
            if let Some(values) = p["enum"].as_array() {
                let vs: Vec<String> = values.iter().map(|v| v.to_string()).collect();
                kind = format!("one of {}", vs.join(", "));
            }
            let need = if required.contains(&name.as_str()) {
                ", required"
            } else {
                ""
            };
            t.push_str(&format!("  {name} ({kind}{need})\n"));
            if let Some(d) = p["description"].as_str() {
                t.push_str(&format!("      {d}\n"));
            }
        }
    }
    let example = required
        .first()
        .map(|r| format!("'{{\"{r}\": \"…\"}}'"))
        .unwrap_or_else(|| "  (every argument is optional)".to_string());
    t.push_str(&format!(
        "\nExample: mesh-mcp query {} {example}\n",
        def.name
    ));
    Ok(t)
}

/// An argument object for `tool` to show in a usage error: its first required argument
/// (`{"target": "…"}` for analyze_impact), or a smart_search query for a tool without one.
fn example_arguments(tool: &str) -> String {
    let registry = crate::tools::Registry::standard();
    let required = registry.get(tool).and_then(|def| {
        let schema = (def.input_schema)();
        schema["required"][0].as_str().map(str::to_string)
    });
    match required {
        Some(key) => format!("{{\"{key}\": \"…\"}}"),
        None => "{\"query\": \"OrderService\"}".to_string(),
    }
}

/// Runs the subcommand; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    let mut positional = Vec::new();
    let mut as_json = false;
    let mut help = false;
    let mut config_path = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--help" | "-h" => help = true,
            "--json" => as_json = true,
            "--config" | "-c" => match super::config_arg("query", it.next()) {
                Some(p) => config_path = Some(p),
                None => return 2,
            },
            other if other.starts_with("--") => {
                eprintln!("mesh-mcp query: unknown option `{other}`. Try `mesh-mcp query --help`.");
                return 2;
            }
            other => positional.push(other.to_string()),
        }
    }
    if help {
        return match positional.first() {
            None => super::print_stdout(USAGE),
            Some(tool) => match tool_help(tool) {
                Ok(text) => super::print_stdout(&text),
                Err(e) => {
                    eprintln!("mesh-mcp query: {e}");
                    2
                }
            },
        };
    }
    crate::logging::init();
    let Some(tool) = positional.first() else {
        eprint!("mesh-mcp query: which tool?\n\n{USAGE}");
        return 2;
    };
    let example = example_arguments(tool);
    if positional.len() > 2 {
        eprintln!(
            "mesh-mcp query: expected one JSON argument object after the tool name; quote it: '{example}'"
        );
        return 2;
    }
    let arguments: Value = match positional.get(1) {
        None => json!({}),
        Some(raw) => match serde_json::from_str::<Value>(raw) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => {
                eprintln!("mesh-mcp query: the arguments must be a JSON object, e.g. '{example}'");
                return 2;
            }
            Err(e) => {
                eprintln!(
                    "mesh-mcp query: the arguments are not valid JSON ({e}); quote them for the shell, e.g. '{example}'"
                );
                return 2;
            }
        },
    };
    let config = match super::workspace_config("query", config_path.as_deref()) {
        Ok(c) => c,
        Err(status) => return status,
    };
    let shared = Shared::start_one_shot(config);
    let Some(def) = shared.registry.get(tool) else {
        let names: Vec<&str> = shared.registry.all().iter().map(|t| t.name).collect();
        eprintln!(
            "mesh-mcp query: unknown tool `{tool}`. The tools are: {}.",
            names.join(", ")
        );
        return 2;
    };
    let snapshot = if def.index.waits(&arguments) {
        Some(wait_for_index(&shared))
    } else {
        None
    };
    let started = Instant::now();
    let env = ToolEnv {
        shared: &shared,
        snapshot: snapshot.as_deref(),
        structured: as_json,
    };
    let (mut out, outcome) = crate::tools::invoke(def, &arguments, &env);
    // On the command line the arguments are explained by `--help`, not by `tools/list`.
    if out.is_error {
        out.text = out.text.replace(
            "Call tools/list for the accepted arguments.",
            &format!(
                "Run `mesh-mcp query {} --help` for the accepted arguments.",
                def.name
            ),
        );
    }
    shared.audit(&crate::audit::AuditEntry {
        session_id: format!("cli-{}", std::process::id()),
        trace_id: None,
        tool: def.name.to_string(),
        args_digest: crate::audit::args_digest(&arguments),
        status: match outcome {
            Outcome::Answered => crate::audit::CallStatus::Success,
            Outcome::Failed => crate::audit::CallStatus::Error,
            Outcome::Refused => crate::audit::CallStatus::Refused,
        },
        files_accessed: out.files_accessed.clone(),
        redactions: out.redactions,
        duration_us: started.elapsed().as_micros() as u64,
    });
    let text = if as_json {
        let mut result = json!({
            "content": [{"type": "text", "text": out.text}],
            "isError": out.is_error,
        });
        if let Some(data) = out.data {
            result["structuredContent"] = data;
        }
        format!(
            "{}\n",
            serde_json::to_string_pretty(&result).unwrap_or_default()
        )
    } else if out.text.ends_with('\n') {
        out.text.clone()
    } else {
        format!("{}\n", out.text)
    };
    let written = super::print_stdout(&text);
    // The process ends here: closing the audit database would checkpoint its write-ahead
    // log into the main file, work the next opener does anyway (the row is committed).
    std::mem::forget(shared);
    if written != 0 {
        return written;
    }
    i32::from(out.is_error)
}

/// Blocks until the first snapshot, with a progress line on stderr when it is a terminal.
pub(crate) fn wait_for_index(shared: &Shared) -> std::sync::Arc<crate::index::snapshot::Snapshot> {
    let tty = std::io::stderr().is_terminal();
    let mut last_draw = Instant::now();
    loop {
        if let Some(s) = shared.index.current() {
            if tty {
                eprint!("\r{:48}\r", ""); // erase the progress line without escape codes
            }
            return s;
        }
        if tty && last_draw.elapsed() >= Duration::from_millis(100) {
            let (done, total) = shared.index.progress();
            eprint!("\rindexing: {done} of {total} files…");
            last_draw = Instant::now();
        }
        // Woken by the first snapshot itself (not a polling interval), or after 100 ms to
        // redraw the progress line.
        smol::block_on(futures_lite::future::or(shared.index.ready(), async {
            smol::Timer::after(Duration::from_millis(100)).await;
        }));
    }
}
