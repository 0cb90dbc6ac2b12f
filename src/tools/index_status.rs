//! `index_status`: freshness and health of the index, so an agent can tell whether a zero
//! result is trustworthy.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolDef, ToolEnv, ToolOutput, decode, default_hint, object_schema};

/// The tool definition.
pub static TOOL: ToolDef = ToolDef {
    name: "index_status",
    title: "Index status",
    description: "Reports how fresh and complete the workspace index is: the roots, files \
indexed per language, files rejected and why, the index generation and time of the last reload, \
pending changes, and whether a git operation is holding reloads. Call it when an answer is \
surprisingly empty, to tell whether the zero is trustworthy. Takes no arguments.",
    input_schema: || object_schema(json!({}), &[]),
    run,
    truncation_hint: default_hint,
    needs_index: false,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {}

fn run(args: &Value, env: &ToolEnv) -> ToolOutput {
    if let Err(e) = decode::<Args>("index_status", args) {
        return e;
    }
    let shared = env.shared;
    let mut out = String::from("## Index status\n\n");
    out.push_str(&format!("- Workspace: `{}`\n", shared.base_dir.display()));
    match shared.index.current() {
        None => {
            let (done, total) = shared.index.progress();
            out.push_str(&format!(
                "- Still indexing: {done} of {total} files extracted; no generation published yet.\n"
            ));
        }
        Some(snap) => {
            out.push_str(&format!(
                "- Generation: {} (built in {} ms)\n",
                snap.generation, snap.build_ms
            ));
            out.push_str(
                "- Roots: 0 indexed. This build does not index source files yet, so every search \
answers zero; a zero from this server says nothing about the workspace.\n",
            );
        }
    }
    ToolOutput::ok(out)
}
