//! The call notifier: how a tool, running on a blocking thread with plain data in and out,
//! sends `notifications/progress` and `notifications/message` for its own call while it runs
//! (ARCHITECTURE §2.5). The session installs a [`CallNotifier`] on the tool's thread around
//! every real call ([`with_call_notifier`], from `Ctx::run_tool`); without one (in
//! `mesh-mcp query`, in unit tests) [`notify_progress`] and [`notify_log`] do nothing.

use std::cell::RefCell;

use serde_json::{Value, json};

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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A notifier that keeps every frame it is given, parsed, for assertions.
    pub(crate) fn capture(
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
}
