//! Test fixture tools, served only when `MESH_TEST_FIXTURES=1`: they let the integration tests
//! exercise the real server paths that ordinary tools reach only by chance (a slow call, a huge
//! answer, a panicking task), and they are the fixed tool names the MCP conformance suite calls
//! (`test_simple_text`, `test_error_handling`, `test_tool_with_progress`,
//! `test_tool_with_logging`; see `tests/clients/`).
//!
//! The two conformance tools that must talk *during* a call do so through the session's call
//! notifier ([`crate::server::notify`]): [`notify_progress`] and [`notify_log`], which do
//! nothing without one (in `mesh-mcp query`, in unit tests).

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolDef, ToolEnv, ToolOutput, decode, default_hint, object_schema};
// The call notifier lives in the server; the tools that notify reach it from here too.
pub use crate::server::notify::{notify_log, notify_progress};

/// The fixture tools.
pub static TOOLS: [ToolDef; 10] = [
    ToolDef {
        input_schema: || object_schema(json!({"ms": {"type": "integer"}}), &["ms"]),
        ..fixture(
            "test_sleep",
            "Sleep (test fixture)",
            "Test fixture: sleeps for `ms` milliseconds, then answers.",
            run_sleep,
        )
    },
    ToolDef {
        input_schema: || object_schema(json!({"bytes": {"type": "integer"}}), &["bytes"]),
        truncation_hint: |_| "Fixture hint: ask for fewer bytes.".to_string(),
        ..fixture(
            "test_big_output",
            "Big output (test fixture)",
            "Test fixture: answers `bytes` bytes of Markdown inside an open code fence.",
            run_big,
        )
    },
    ToolDef {
        index: super::IndexUse::Required,
        ..fixture(
            "test_generation",
            "Generation (test fixture)",
            "Test fixture: waits for the first index like every index tool, then names its generation.",
            |_args, env| {
                ToolOutput::ok(format!(
                    "generation {}",
                    env.snapshot.map_or(0, |s| s.generation)
                ))
            },
        )
    },
    fixture(
        "test_panic",
        "Panic (test fixture)",
        "Test fixture: the tool task panics.",
        run_panic,
    ),
    fixture(
        "test_panic_audit",
        "Audit panic (test fixture)",
        "Test fixture: answers at once; the audit task panics while recording the call.",
        |_args, _env| ToolOutput::ok("answered; the audit task will panic on this call".into()),
    ),
    fixture(
        "test_simple_text",
        "Simple text (conformance fixture)",
        "Conformance fixture: answers one fixed line of text.",
        |_args, _env| ToolOutput::ok(SIMPLE_TEXT.to_string()),
    ),
    fixture(
        "test_error_handling",
        "Error result (conformance fixture)",
        "Conformance fixture: always answers with isError: true and a message.",
        |_args, _env| ToolOutput::error(ERROR_TEXT.to_string()),
    ),
    fixture(
        "test_tool_with_progress",
        "Progress (conformance fixture)",
        "Conformance fixture: reports progress 0, 50 and 100 of 100, about 50 ms apart, when the call carries a progressToken.",
        |_args, _env| run_with_progress(STEP_DELAY),
    ),
    fixture(
        "test_embedded_resource",
        "Embedded resource (conformance fixture)",
        "Conformance fixture: answers a text block and an embedded text resource.",
        |_args, _env| {
            let mut out = ToolOutput::ok("An embedded resource follows.".into());
            out.more_content
                .push(json!({"type": "resource", "resource": {
                "uri": "test://embedded-resource", "mimeType": "text/plain",
                "text": "This is an embedded resource content."}}));
            out
        },
    ),
    fixture(
        "test_tool_with_logging",
        "Logging (conformance fixture)",
        "Conformance fixture: sends three info-level log messages, about 50 ms apart, to a client that set a log level.",
        |_args, _env| run_with_logging(STEP_DELAY),
    ),
];

/// A fixture tool: no arguments, text answers, the default truncation hint, no index wait;
/// the fixtures that differ set those fields over it.
const fn fixture(
    name: &'static str,
    title: &'static str,
    description: &'static str,
    run: fn(&Value, &ToolEnv) -> ToolOutput,
) -> ToolDef {
    ToolDef {
        name,
        title,
        description,
        input_schema: || object_schema(json!({}), &[]),
        output_schema: None,
        run,
        truncation_hint: default_hint,
        index: super::IndexUse::None,
    }
}

/// The answer of `test_simple_text` (the text the conformance suite's description shows).
pub const SIMPLE_TEXT: &str = "This is a simple text response for testing.";
/// The answer of `test_error_handling`.
pub const ERROR_TEXT: &str =
    "This tool intentionally returns an error for testing. Nothing to fix: it always fails.";
/// The pause between two notifications of the progress and logging fixtures.
const STEP_DELAY: Duration = Duration::from_millis(50);
fn run_with_progress(step: Duration) -> ToolOutput {
    let mut sent = 0;
    for (i, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            std::thread::sleep(step);
        }
        sent += usize::from(notify_progress(progress, Some(100.0), None));
    }
    ToolOutput::ok(format!(
        "Progress fixture finished: {sent} progress notifications sent."
    ))
}

fn run_with_logging(step: Duration) -> ToolOutput {
    let mut sent = 0;
    let messages = [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ];
    for (i, message) in messages.into_iter().enumerate() {
        if i > 0 {
            std::thread::sleep(step);
        }
        sent += usize::from(notify_log("info", json!(message)));
    }
    ToolOutput::ok(format!(
        "Logging fixture finished: {sent} log messages sent."
    ))
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::notify::tests::capture;
    use crate::server::notify::with_call_notifier;

    #[test]
    fn progress_fixture_sends_three_increasing_steps_with_the_token() {
        let (notifier, frames) = capture(Some(json!("tok-1")), None);
        let out = with_call_notifier(notifier, || run_with_progress(Duration::ZERO));
        assert!(!out.is_error);
        let frames = frames.lock().unwrap();
        let progress: Vec<f64> = frames
            .iter()
            .map(|f| {
                assert_eq!(f["method"], "notifications/progress");
                assert_eq!(f["params"]["progressToken"], "tok-1");
                assert_eq!(f["params"]["total"], 100.0);
                f["params"]["progress"].as_f64().unwrap()
            })
            .collect();
        assert_eq!(progress, [0.0, 50.0, 100.0]);
        assert!(out.text.contains("3 progress"), "{}", out.text);
    }

    #[test]
    fn progress_fixture_without_a_token_sends_nothing() {
        let (notifier, frames) = capture(None, Some("debug"));
        let out = with_call_notifier(notifier, || run_with_progress(Duration::ZERO));
        assert!(frames.lock().unwrap().is_empty());
        assert!(out.text.contains("0 progress"), "{}", out.text);
    }

    #[test]
    fn logging_fixture_respects_the_level() {
        let (notifier, frames) = capture(None, Some("debug"));
        with_call_notifier(notifier, || run_with_logging(Duration::ZERO));
        let frames = frames.lock().unwrap();
        assert_eq!(frames.len(), 3);
        assert_eq!(frames[0]["method"], "notifications/message");
        assert_eq!(frames[0]["params"]["level"], "info");
        assert_eq!(frames[2]["params"]["data"], "Tool execution completed");
        for quiet in [None, Some("warning"), Some("no-such-level")] {
            let (notifier, frames) = capture(None, quiet);
            with_call_notifier(notifier, || run_with_logging(Duration::ZERO));
            assert!(frames.lock().unwrap().is_empty(), "{quiet:?}");
        }
    }

    #[test]
    fn without_a_notifier_nothing_is_sent_and_the_tools_still_answer() {
        assert!(!notify_progress(1.0, None, None));
        assert!(!notify_log("emergency", json!("x")));
        assert!(!run_with_logging(Duration::ZERO).is_error);
    }
}
