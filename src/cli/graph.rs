//! `mesh-mcp graph --format mermaid|json|html|fingerprint [-o FILE] [--service NAME]`: the
//! whole topology of the workspace in the current directory, or the index fingerprint (the same
//! on every machine and checkout directory for the same sources). Output goes to stdout or to
//! FILE; the view is the one `visualize_mesh` draws, without its output cap.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use crate::tools::visualize_mesh;

const USAGE: &str = "\
Usage: mesh-mcp graph [--format mermaid|json|html|fingerprint] [-o FILE] [--service NAME]
                      [--max-services N] [--config FILE]

Prints the workspace topology (services, gRPC/HTTP calls, event topics, imports between
services), or the index fingerprint. Default format: mermaid.

Examples:
  mesh-mcp graph --format html -o mesh.html
  mesh-mcp graph --format fingerprint
";

/// Runs the subcommand; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    let mut format = "mermaid".to_string();
    let mut output: Option<std::path::PathBuf> = None;
    let mut service: Option<String> = None;
    let mut max_services = 200usize;
    let mut config_path: Option<std::path::PathBuf> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| -> Result<String, i32> {
            it.next().cloned().ok_or_else(|| {
                eprintln!("mesh-mcp graph: {name} needs a value. Try `mesh-mcp graph --help`.");
                2
            })
        };
        let parsed = match a.as_str() {
            "--help" | "-h" => {
                return super::print_stdout(USAGE);
            }
            "--format" | "-f" => value("--format").map(|v| format = v.to_ascii_lowercase()),
            "-o" | "--output" => value("-o").map(|v| output = Some(v.into())),
            "--service" => value("--service").map(|v| service = Some(v)),
            "--config" | "-c" => value("--config").map(|v| config_path = Some(v.into())),
            "--max-services" => value("--max-services").and_then(|v| match v.parse::<usize>() {
                Ok(n) if n > 0 => {
                    max_services = n;
                    Ok(())
                }
                _ => {
                    eprintln!("mesh-mcp graph: --max-services takes a positive number, e.g. 40");
                    Err(2)
                }
            }),
            other => {
                eprintln!(
                    "mesh-mcp graph: unknown argument `{other}`. Try `mesh-mcp graph --help`."
                );
                Err(2)
            }
        };
        if let Err(code) = parsed {
            return code;
        }
    }
    if !matches!(format.as_str(), "mermaid" | "json" | "html" | "fingerprint") {
        eprintln!(
            "mesh-mcp graph: unknown format `{format}`; use mermaid, json, html or fingerprint."
        );
        return 2;
    }
    crate::logging::init();
    let config = match super::workspace_config("graph", config_path.as_deref()) {
        Ok(c) => c,
        Err(status) => return status,
    };
    let snap = build_index(config);
    let text = if format == "fingerprint" {
        format!("{}\n", snap.fingerprint())
    } else {
        let view = match visualize_mesh::mesh_view(&snap, service.as_deref(), max_services) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("mesh-mcp graph: {e}");
                return 2;
            }
        };
        match format.as_str() {
            "json" => format!("{}\n", visualize_mesh::render_json(&view)),
            "html" => visualize_mesh::render_html(&view),
            _ => visualize_mesh::render_mermaid(&view),
        }
    };
    let written = match &output {
        Some(path) => std::fs::write(path, text.as_bytes()).map(|_| {
            eprintln!(
                "mesh-mcp graph: wrote {} ({} bytes)",
                path.display(),
                text.len()
            );
        }),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes()).and_then(|_| out.flush())
        }
    };
    match written {
        Ok(()) => 0,
        Err(e) => {
            match &output {
                Some(path) => eprintln!(
                    "mesh-mcp graph: cannot write `{}`: {e}. Pass -o a file in an existing, writable directory, or leave -o out for stdout.",
                    path.display()
                ),
                None => eprintln!("mesh-mcp graph: cannot write to stdout: {e}"),
            }
            1
        }
    }
}

/// Indexes the workspace once, in-process, with a progress line on a terminal.
fn build_index(config: crate::config::Config) -> crate::index::snapshot::Snapshot {
    let handle = crate::index::snapshot::IndexHandle::new();
    let config = std::sync::Arc::new(config);
    let tty = std::io::stderr().is_terminal();
    let progress = tty.then(|| {
        let h = handle.clone();
        std::thread::spawn(move || {
            while h.current().is_none() {
                let (done, total) = h.progress();
                eprint!("\rindexing: {done} of {total} files…");
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    });
    let mut indexer = crate::index::Indexer::new(config, handle.clone());
    let mut snap = indexer.rebuild();
    snap.generation = 1;
    if let Some(p) = progress {
        handle.publish(crate::index::snapshot::Snapshot::default());
        let _ = p.join();
        eprint!("\r{:48}\r", ""); // erase the progress line without escape codes
    }
    snap
}
