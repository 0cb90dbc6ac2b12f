//! Isolation of untrusted work: a panic costs the unit of work it happened in, never the
//! process (release builds unwind, see `Cargo.toml`).
//!
//! The units, and what a panic in one costs:
//!
//! | unit | where | a panic |
//! |---|---|---|
//! | a tool call | `server::Ctx::run_tool` | the call is answered `-32603` naming the tool; the session and (in `meshd`) every other session go on |
//! | any other request (`resources/list`, `completion/complete`, `prompts/get`, …) | `server::guarded` | the request is answered `-32603` naming the method; the session goes on |
//! | one file's extraction | `index::index_file` | the file is listed as rejected, "extractor failed at <file:line>"; the rest of the index is published |
//! | the indexer and watcher thread | `index::spawn_indexer_with` | logged, and the thread starts over (crawl, publish, watch) after a pause that grows with repeated failures |
//! | the audit task | `auditor` | logged, the rows of the batch in hand are lost (and counted in the log), the task starts over |
//!
//! [`catch`] runs a closure and turns a panic into a [`Panic`] with its `file:line`, recorded
//! by the process's panic hook ([`install_hook`]), which also logs every panic as one
//! `tracing` line instead of the default hook's dump on stderr.

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, PanicHookInfo};

/// A caught panic: where it happened and what it said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Panic {
    /// `file:line` of the panic, e.g. `src/index/lang/python.rs:378`.
    pub location: String,
    /// The panic message (at most 300 characters).
    pub message: String,
}

thread_local! {
    /// The last panic on this thread, recorded by the hook for [`catch`].
    static LAST: RefCell<Option<Panic>> = const { RefCell::new(None) };
}

fn describe(info: &PanicHookInfo<'_>) -> Panic {
    let location = info
        .location()
        .map(|l| format!("{}:{}", l.file(), l.line()))
        .unwrap_or_else(|| "an unknown location".to_string());
    let message = info
        .payload()
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| info.payload().downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".into());
    Panic {
        location,
        message: message.chars().take(300).collect(),
    }
}

/// Installs the process's panic hook (once; later calls do nothing). Each panic is recorded
/// for [`catch`] on its own thread and logged as one `tracing` error line, `panic at
/// <file:line>: <message>`; when no `tracing` subscriber is installed (unit tests), the
/// previous hook prints it instead, so nothing is lost.
pub fn install_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let panic = describe(info);
            if tracing::dispatcher::has_been_set() {
                tracing::error!(target: "mesh::panic", "panic at {}: {}", panic.location, panic.message);
            } else {
                previous(info);
            }
            // `try_with`: a panic while the thread's locals are being torn down still ends
            // well.
            let _ = LAST.try_with(|last| *last.borrow_mut() = Some(panic));
        }));
    });
}

/// Runs `work`, turning a panic into `Err` with where it happened.
///
/// The closure is asserted unwind-safe: callers hand it only state that a half-done unit of
/// work cannot leave inconsistent for anyone else (its own inputs and outputs, or shared state
/// behind locks that recover from poisoning).
pub fn catch<R>(work: impl FnOnce() -> R) -> Result<R, Panic> {
    install_hook();
    match std::panic::catch_unwind(AssertUnwindSafe(work)) {
        Ok(r) => Ok(r),
        Err(payload) => Err(LAST
            .with(|last| last.borrow_mut().take())
            .unwrap_or_else(|| Panic {
                location: "an unknown location".to_string(),
                message: payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_default(),
            })),
    }
}

/// True when `MESH_TEST_FIXTURES=1`: the test hooks that make a unit of work panic on purpose
/// (a file containing [`PANIC_MARKER`], a change to a file named [`WATCHER_PANIC_FILE`], the
/// `test_panic_audit` tool) are armed only then.
pub fn fixtures_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("MESH_TEST_FIXTURES").is_ok_and(|v| v == "1"))
}

/// With [`fixtures_enabled`], a file whose text contains this makes its extraction panic.
pub const PANIC_MARKER: &str = "MESH_TEST_EXTRACTOR_PANIC";
/// With [`fixtures_enabled`], a file whose text contains this makes its extraction hang
/// (sleep) until the per-file time cap gives up on it.
pub const HANG_MARKER: &str = "MESH_TEST_EXTRACTOR_HANG";
/// With [`fixtures_enabled`], a request other than a tool call whose params contain this
/// panics in its handler (`server::guarded`).
pub const REQUEST_PANIC_MARKER: &str = "MESH_TEST_REQUEST_PANIC";
/// With [`fixtures_enabled`], a change to a file of this name makes the watcher panic.
pub const WATCHER_PANIC_FILE: &str = "mesh-test-panic-watcher.go";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_its_location_and_message() {
        let caught = catch(|| -> u32 { panic!("boom {}", 7) }).unwrap_err();
        assert!(caught.location.starts_with("src/isolate.rs:"), "{caught:?}");
        assert_eq!(caught.message, "boom 7");
        assert_eq!(catch(|| 5), Ok(5));
        // The record does not leak into the next catch.
        let caught = catch(|| -> u32 { std::panic::panic_any(17u8) }).unwrap_err();
        assert!(caught.location.starts_with("src/isolate.rs:"), "{caught:?}");
        assert_eq!(caught.message, "non-string panic payload");
    }
}
