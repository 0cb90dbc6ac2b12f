//! Per-request stage timestamps for the benchmark build (`cargo build --release --features
//! bench-stages`), which `size-report` runs next to the release build to show where a request's
//! time goes. Without the feature every function here is an empty inline function, so the
//! release binary carries none of it.
//!
//! The stages of one request, each a timestamp taken on the thread that does the work:
//!
//! | stage | where |
//! |---|---|
//! | `read` | the reader split the frame off the input (right after the `read` that brought it) |
//! | `taken` | the session loop took the frame from the inbound queue |
//! | `parsed` | the frame was parsed and classified as a request |
//! | `tool_start`, `tool_end` | the tool ran (tool calls only) |
//! | `queued` | the answer was serialised and queued for the writer |
//! | `picked` | the writer took the answer from the queue |
//! | `sending` | the answer is in the writer's buffer, and the `write` that hands it to the kernel starts |
//! | `written` | that `write` returned (which can include the client running on this CPU: writing to a pipe wakes the reader, and Linux often runs the woken reader at once on the writer's CPU) |
//!
//! At the end of each session the finished records are appended to `$MESH_STAGE_LOG` as JSON
//! lines, in microseconds after `read`.

#[cfg(feature = "bench-stages")]
mod imp {
    use std::collections::{HashMap, VecDeque};
    use std::io::Write;
    use std::sync::Mutex;
    use std::time::Instant;

    use serde_json::Value;

    /// When the loop took a frame, and when the reader had read it.
    #[derive(Clone, Copy)]
    pub struct Mark(Option<(Instant, Instant)>);

    /// The request a tool stage belongs to.
    pub type Key = String;

    struct Record {
        method: String,
        read: Instant,
        taken: Instant,
        parsed: Instant,
        tool_start: Option<Instant>,
        tool_end: Option<Instant>,
        queued: Option<Instant>,
        picked: Option<Instant>,
        sending: Option<Instant>,
        written: Option<Instant>,
    }

    #[derive(Default)]
    struct State {
        reads: VecDeque<Instant>,
        open: HashMap<String, Record>,
        done: Vec<(String, Record)>,
    }

    static STATE: Mutex<Option<State>> = Mutex::new(None);

    fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
        let mut guard = STATE.lock().unwrap_or_else(|p| p.into_inner());
        f(guard.get_or_insert_with(State::default))
    }

    pub fn frame_read() {
        let now = Instant::now();
        with(|s| s.reads.push_back(now));
    }

    pub fn frame_taken() -> Mark {
        let now = Instant::now();
        Mark(with(|s| s.reads.pop_front()).map(|read| (read, now)))
    }

    pub fn key(id: &Value) -> Key {
        id.to_string()
    }

    pub fn request(mark: Mark, id: &Value, method: &str) {
        let now = Instant::now();
        let Some((read, taken)) = mark.0 else { return };
        with(|s| {
            s.open.insert(
                id.to_string(),
                Record {
                    method: method.to_string(),
                    read,
                    taken,
                    parsed: now,
                    tool_start: None,
                    tool_end: None,
                    queued: None,
                    picked: None,
                    sending: None,
                    written: None,
                },
            )
        });
    }

    pub fn tool_start(key: &Key) {
        let now = Instant::now();
        with(|s| s.open.get_mut(key).map(|r| r.tool_start = Some(now)));
    }

    pub fn tool_end(key: &Key) {
        let now = Instant::now();
        with(|s| s.open.get_mut(key).map(|r| r.tool_end = Some(now)));
    }

    pub fn queued(id: &Value) {
        let now = Instant::now();
        let key = id.to_string();
        with(|s| s.open.get_mut(&key).map(|r| r.queued = Some(now)));
    }

    /// The id of an answer line: answers start `{"jsonrpc":"2.0","id":<id>,` (the field
    /// order of `protocol::Response`).
    fn id_of(line: &str) -> Option<&str> {
        let rest = line.strip_prefix("{\"jsonrpc\":\"2.0\",\"id\":")?;
        Some(&rest[..rest.find(",\"")?])
    }

    pub fn picked(line: &str) {
        let now = Instant::now();
        let Some(key) = id_of(line) else { return };
        with(|s| s.open.get_mut(key).map(|r| r.picked = Some(now)));
    }

    pub fn sending(line: &str) {
        let now = Instant::now();
        let Some(key) = id_of(line) else { return };
        with(|s| s.open.get_mut(key).map(|r| r.sending = Some(now)));
    }

    pub fn written(line: &str) {
        let now = Instant::now();
        let Some(key) = id_of(line) else { return };
        with(|s| {
            if let Some(mut r) = s.open.remove(key) {
                r.written = Some(now);
                s.done.push((key.to_string(), r));
            }
        });
    }

    pub fn dump() {
        let Some(path) = std::env::var_os("MESH_STAGE_LOG") else {
            return;
        };
        let done = with(|s| std::mem::take(&mut s.done));
        let us = |r: &Record, t: Option<Instant>| {
            t.map(|t| t.saturating_duration_since(r.read).as_nanos() as f64 / 1000.0)
        };
        let mut out = String::new();
        for (id, r) in &done {
            let line = serde_json::json!({
                "id": id,
                "method": r.method,
                "taken_us": us(r, Some(r.taken)),
                "parsed_us": us(r, Some(r.parsed)),
                "tool_start_us": us(r, r.tool_start),
                "tool_end_us": us(r, r.tool_end),
                "queued_us": us(r, r.queued),
                "picked_us": us(r, r.picked),
                "sending_us": us(r, r.sending),
                "written_us": us(r, r.written),
            });
            out.push_str(&line.to_string());
            out.push('\n');
        }
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = f.write_all(out.as_bytes());
        }
    }
}

#[cfg(not(feature = "bench-stages"))]
mod imp {
    use serde_json::Value;

    #[derive(Clone, Copy)]
    pub struct Mark;
    pub struct Key;

    #[inline(always)]
    pub fn frame_read() {}
    #[inline(always)]
    pub fn frame_taken() -> Mark {
        Mark
    }
    #[inline(always)]
    pub fn key(_id: &Value) -> Key {
        Key
    }
    #[inline(always)]
    pub fn request(_mark: Mark, _id: &Value, _method: &str) {}
    #[inline(always)]
    pub fn tool_start(_key: &Key) {}
    #[inline(always)]
    pub fn tool_end(_key: &Key) {}
    #[inline(always)]
    pub fn queued(_id: &Value) {}
    #[inline(always)]
    pub fn picked(_line: &str) {}
    #[inline(always)]
    pub fn sending(_line: &str) {}
    #[inline(always)]
    pub fn written(_line: &str) {}
    #[inline(always)]
    pub fn dump() {}
}

pub use imp::*;
