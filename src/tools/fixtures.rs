//! Test fixture tools, served only when `MESH_TEST_FIXTURES=1`: they let the integration tests
//! exercise the real server paths that ordinary tools reach only by chance (a slow call, a huge
//! answer, a panicking task), and they are the fixed tool names the MCP conformance suite calls
//! (`test_simple_text`, `test_error_handling`, `test_tool_with_progress`,
//! `test_tool_with_logging`; see `tests/clients/`).
//!
//! A tool runs on a blocking thread with plain data in and out, so the two conformance tools
//! that must talk *during* a call reach the wire through a [`CallNotifier`] that the session
//! installs on that thread around the call ([`with_call_notifier`]); without one (in
//! `mesh-mcp query`, in unit tests) [`notify_progress`] and [`notify_log`] do nothing.

use std::cell::RefCell;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolDef, ToolEnv, ToolOutput, decode, default_hint, object_schema};

/// The fixture tools.
pub static TOOLS: [ToolDef; 10] = [
    ToolDef {
        name: "test_sleep",
        title: "Sleep (test fixture)",
        description: "Test fixture: sleeps for `ms` milliseconds, then answers.",
        input_schema: || object_schema(json!({"ms": {"type": "integer"}}), &["ms"]),
        output_schema: None,
        run: run_sleep,
        truncation_hint: default_hint,
        index: super::IndexUse::None,
    },
    ToolDef {
        name: "test_big_output",
        title: "Big output (test fixture)",
        description: "Test fixture: answers `bytes` bytes of Markdown inside an open code fence.",
        input_schema: || object_schema(json!({"bytes": {"type": "integer"}}), &["bytes"]),
        output_schema: None,
        run: run_big,
        truncation_hint: |_| "Fixture hint: ask for fewer bytes.".to_string(),
        index: super::IndexUse::None,
    },
    ToolDef {
        name: "test_generation",
        title: "Generation (test fixture)",
        description: "Test fixture: waits for the first index like every index tool, then names its generation.",
        input_schema: || object_schema(json!({}), &[]),
        output_schema: None,
        run: |_args, env| {
            ToolOutput::ok(format!(
                "generation {}",
                env.snapshot.map_or(0, |s| s.generation)
            ))
        },
        truncation_hint: default_hint,
        index: super::IndexUse::Required,
    },
    ToolDef {
        name: "test_panic",
        title: "Panic (test fixture)",
        description: "Test fixture: the tool task panics.",
        input_schema: || object_schema(json!({}), &[]),
        output_schema: None,
        run: run_panic,
        truncation_hint: default_hint,
        index: super::IndexUse::None,
    },
    ToolDef {
        name: "test_panic_audit",
        title: "Audit panic (test fixture)",
        description: "Test fixture: answers at once; the audit task panics while recording the call.",
        input_schema: || object_schema(json!({}), &[]),
        output_schema: None,
        run: |_args, _env| {
            ToolOutput::ok("answered; the audit task will panic on this call".into())
        },
        truncation_hint: default_hint,
        index: super::IndexUse::None,
    },
    ToolDef {
        name: "test_simple_text",
        title: "Simple text (conformance fixture)",
        description: "Conformance fixture: answers one fixed line of text.",
        input_schema: || object_schema(json!({}), &[]),
        output_schema: None,
        run: |_args, _env| ToolOutput::ok(SIMPLE_TEXT.to_string()),
        truncation_hint: default_hint,
        index: super::IndexUse::None,
    },
    ToolDef {
        name: "test_error_handling",
        title: "Error result (conformance fixture)",
        description: "Conformance fixture: always answers with isError: true and a message.",
        input_schema: || object_schema(json!({}), &[]),
        output_schema: None,
        run: |_args, _env| ToolOutput::error(ERROR_TEXT.to_string()),
        truncation_hint: default_hint,
        index: super::IndexUse::None,
    },
    ToolDef {
        name: "test_tool_with_progress",
        title: "Progress (conformance fixture)",
        description: "Conformance fixture: reports progress 0, 50 and 100 of 100, about 50 ms apart, when the call carries a progressToken.",
        input_schema: || object_schema(json!({}), &[]),
        output_schema: None,
        run: |_args, _env| run_with_progress(STEP_DELAY),
        truncation_hint: default_hint,
        index: super::IndexUse::None,
    },
    ToolDef {
        name: "test_embedded_resource",
        title: "Embedded resource (conformance fixture)",
        description: "Conformance fixture: answers a text block and an embedded text resource.",
        input_schema: || object_schema(json!({}), &[]),
        output_schema: None,
        run: |_args, _env| {
            let mut out = ToolOutput::ok("An embedded resource follows.".into());
            out.more_content
                .push(json!({"type": "resource", "resource": {
                "uri": "test://embedded-resource", "mimeType": "text/plain",
                "text": "This is an embedded resource content."}}));
            out
        },
        truncation_hint: default_hint,
        index: super::IndexUse::None,
    },
    ToolDef {
        name: "test_tool_with_logging",
        title: "Logging (conformance fixture)",
        description: "Conformance fixture: sends three info-level log messages, about 50 ms apart, to a client that set a log level.",
        input_schema: || object_schema(json!({}), &[]),
        output_schema: None,
        run: |_args, _env| run_with_logging(STEP_DELAY),
        truncation_hint: default_hint,
        index: super::IndexUse::None,
    },
];

/// The answer of `test_simple_text` (the text the conformance suite's description shows).
pub const SIMPLE_TEXT: &str = "This is a simple text response for testing.";
/// The answer of `test_error_handling`.
pub const ERROR_TEXT: &str =
    "This tool intentionally returns an error for testing. Nothing to fix: it always fails.";
/// The pause between two notifications of the progress and logging fixtures.
const STEP_DELAY: Duration = Duration::from_millis(50);
/// The syslog levels of MCP logging, lowest first.
pub const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// Where the notifications of one tool call go while it runs on this thread.
pub struct CallNotifier {
    /// The request's `_meta.progressToken`, when the client asked for progress.
    pub progress_token: Option<Value>,
    /// The lowest level the client wants to see as `notifications/message` (legacy:
    /// `logging/setLevel`; modern: `_meta` `io.modelcontextprotocol/logLevel`). `None`: send
    /// no log messages at all (the 2026-07-28 rule without a level).
    pub log_level: Option<String>,
    /// Queues one outbound frame on the session's writer (called from the tool's thread, so
    /// it may block on a full queue).
    pub send: Box<dyn Fn(String) + Send>,
}

thread_local! {
    static NOTIFIER: RefCell<Option<CallNotifier>> = const { RefCell::new(None) };
    /// The last `progress` sent for the current call: progress must strictly increase, also
    /// when a tool runs twice for one call (`structured::fit` asks again for a smaller page).
    static LAST_PROGRESS: std::cell::Cell<f64> = const { std::cell::Cell::new(f64::NEG_INFINITY) };
}

/// Runs `call` with `notifier` installed on this thread, and removes it afterwards even when
/// `call` panics (blocking threads are reused by later calls).
pub fn with_call_notifier<R>(notifier: CallNotifier, call: impl FnOnce() -> R) -> R {
    struct Restore(Option<CallNotifier>, f64);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            NOTIFIER.with(|n| *n.borrow_mut() = previous);
            LAST_PROGRESS.with(|p| p.set(self.1));
        }
    }
    let _restore = Restore(
        NOTIFIER.with(|n| n.replace(Some(notifier))),
        LAST_PROGRESS.with(|p| p.replace(f64::NEG_INFINITY)),
    );
    call()
}

/// Sends `notifications/progress` for the current call, when it carries a progress token and
/// `progress` is above the last value sent for it. Returns whether a notification was queued.
pub fn notify_progress(progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
    NOTIFIER.with(|n| {
        let guard = n.borrow();
        let Some(notifier) = guard.as_ref() else {
            return false;
        };
        let Some(token) = &notifier.progress_token else {
            return false;
        };
        if progress <= LAST_PROGRESS.with(std::cell::Cell::get) {
            return false;
        }
        LAST_PROGRESS.with(|p| p.set(progress));
        let mut params = json!({"progressToken": token, "progress": progress});
        if let Some(total) = total {
            params["total"] = json!(total);
        }
        if let Some(message) = message {
            params["message"] = json!(message);
        }
        (notifier.send)(crate::protocol::notification(
            "notifications/progress",
            params,
        ));
        true
    })
}

/// Sends `notifications/message` at `level` for the current call, when the client asked for
/// messages at that level or above. Returns whether a notification was queued.
pub fn notify_log(level: &str, data: Value) -> bool {
    let rank = |l: &str| LOG_LEVELS.iter().position(|x| *x == l);
    NOTIFIER.with(|n| {
        let guard = n.borrow();
        let Some(notifier) = guard.as_ref() else {
            return false;
        };
        let wanted = notifier.log_level.as_deref().and_then(rank);
        match (wanted, rank(level)) {
            (Some(min), Some(this)) if this >= min => {
                (notifier.send)(crate::protocol::notification(
                    "notifications/message",
                    json!({"level": level, "logger": "mesh::fixtures", "data": data}),
                ));
                true
            }
            _ => false,
        }
    })
}

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
    use std::sync::{Arc, Mutex};

    fn capture(
        progress_token: Option<Value>,
        log_level: Option<&str>,
    ) -> (CallNotifier, Arc<Mutex<Vec<Value>>>) {
        let frames = Arc::new(Mutex::new(Vec::new()));
        let sink = frames.clone();
        let notifier = CallNotifier {
            progress_token,
            log_level: log_level.map(str::to_string),
            send: Box::new(move |frame| {
                sink.lock()
                    .unwrap()
                    .push(serde_json::from_str(&frame).unwrap());
            }),
        };
        (notifier, frames)
    }

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

    #[test]
    fn progress_only_increases_within_a_call() {
        let (notifier, frames) = capture(Some(json!("t")), None);
        let sent = with_call_notifier(notifier, || {
            // A tool run twice for one call (a smaller page) starts its count again.
            [1.0, 2.0, 8.0, 1.0, 8.0, 9.0].map(|p| notify_progress(p, Some(9.0), None))
        });
        assert_eq!(sent, [true, true, true, false, false, true]);
        let progress: Vec<_> = frames
            .lock()
            .unwrap()
            .iter()
            .map(|f| f["params"]["progress"].clone())
            .collect();
        assert_eq!(progress, [json!(1.0), json!(2.0), json!(8.0), json!(9.0)]);
        // The next call counts from scratch.
        let (notifier, frames) = capture(Some(json!("u")), None);
        with_call_notifier(notifier, || notify_progress(1.0, None, None));
        assert_eq!(frames.lock().unwrap().len(), 1);
    }

    #[test]
    fn the_notifier_is_removed_after_a_panicking_call() {
        let (notifier, frames) = capture(Some(json!(1)), Some("debug"));
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            with_call_notifier(notifier, || {
                notify_progress(1.0, None, None);
                panic!("boom");
            })
        }));
        assert!(result.is_err());
        assert_eq!(frames.lock().unwrap().len(), 1);
        assert!(!notify_progress(2.0, None, None));
    }
}
