//! Test fixture tools, served only when `MESH_TEST_FIXTURES=1`: they let the integration tests
//! exercise the real server paths that ordinary tools reach only by chance (a slow call, a huge
//! answer, a panicking task).

use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolDef, ToolEnv, ToolOutput, decode, default_hint, object_schema};

/// The fixture tools.
pub static TOOLS: [ToolDef; 4] = [
    ToolDef {
        name: "test_sleep",
        title: "Sleep (test fixture)",
        description: "Test fixture: sleeps for `ms` milliseconds, then answers.",
        input_schema: || object_schema(json!({"ms": {"type": "integer"}}), &["ms"]),
        run: run_sleep,
        truncation_hint: default_hint,
        needs_index: false,
    },
    ToolDef {
        name: "test_big_output",
        title: "Big output (test fixture)",
        description: "Test fixture: answers `bytes` bytes of Markdown inside an open code fence.",
        input_schema: || object_schema(json!({"bytes": {"type": "integer"}}), &["bytes"]),
        run: run_big,
        truncation_hint: |_| "Fixture hint: ask for fewer bytes.".to_string(),
        needs_index: false,
    },
    ToolDef {
        name: "test_generation",
        title: "Generation (test fixture)",
        description: "Test fixture: waits for the first index like every index tool, then names its generation.",
        input_schema: || object_schema(json!({}), &[]),
        run: |_args, env| {
            ToolOutput::ok(format!(
                "generation {}",
                env.snapshot.map_or(0, |s| s.generation)
            ))
        },
        truncation_hint: default_hint,
        needs_index: true,
    },
    ToolDef {
        name: "test_panic",
        title: "Panic (test fixture)",
        description: "Test fixture: the tool task panics.",
        input_schema: || object_schema(json!({}), &[]),
        run: run_panic,
        truncation_hint: default_hint,
        needs_index: false,
    },
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SleepArgs {
    ms: u64,
}

fn run_sleep(args: &Value, _env: &ToolEnv) -> ToolOutput {
    match decode::<SleepArgs>("test_sleep", args) {
        Ok(a) => {
            std::thread::sleep(std::time::Duration::from_millis(a.ms.min(60_000)));
            ToolOutput::ok(format!("slept {} ms", a.ms))
        }
        Err(e) => e,
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BigArgs {
    bytes: usize,
}

fn run_big(args: &Value, _env: &ToolEnv) -> ToolOutput {
    match decode::<BigArgs>("test_big_output", args) {
        Ok(a) => {
            let mut text = String::from("## Big\n```text\n");
            let mut i = 0;
            while text.len() < a.bytes.min(16 << 20) {
                text.push_str(&format!("line {i} of the fixture output\n"));
                i += 1;
            }
            ToolOutput::ok(text)
        }
        Err(e) => e,
    }
}

fn run_panic(_args: &Value, _env: &ToolEnv) -> ToolOutput {
    panic!("test_panic fixture panicked on purpose")
}
