//! JSON-RPC batches (accepted only under protocol 2025-03-26), bounded so that one line cannot
//! make the server do, hold or send an unbounded amount of work.
//!
//! The bounds, per batch line:
//!
//! - at most [`MAX_BATCH_REQUESTS`] requests run; every request past that is answered at once
//!   with a short `-32600` error naming the bound, and is not run;
//! - the answers that run are admitted into the answer line while they total at most
//!   [`MAX_BATCH_ANSWER_BYTES`]; an answer that would go past it is replaced by a short
//!   `-32600` error naming the bound (the call was read-only, so asking again on its own line
//!   gives the same answer);
//! - each tool answer is capped at 48 KiB of text, as every single call is (`tools::invoke`);
//! - the requests run as tasks with the session's usual concurrency (the same permits that
//!   single calls take), not one after another;
//! - the elements are parsed one at a time from the line (a batch is split into raw slices
//!   first), so a batch of 60,000 calls never holds 60,000 parsed requests.
//!
//! Per client the session runs one batch at a time and reads its next line only once the
//! previous batch's answer has been taken by the writer (see [`until_written`]). So what one
//! client's batches cost the server (a shared `meshd` included) is bounded by: its line (at
//! most 8 MiB, held twice while it is read: the reader's buffer and the frame), 16 bytes per
//! element for the raw slices, at most [`MAX_BATCH_REQUESTS`] answers of at most 48 KiB of text
//! each while they are collected, and one answer line of at most [`MAX_BATCH_ANSWER_BYTES`]
//! plus ~120 bytes per element past the bounds (a line of 8 MiB holds at most ~200,000
//! minimal requests, so ~24 MB, ~32 MiB with the string's growth). The stated bound is 64 MiB
//! per client for the worst line; `tests/attacks.rs` measures a 60,000-call batch through
//! `meshd` against it (+38 MiB peak on the release build), and any real batch costs a few MiB.

use std::time::Duration;

use serde_json::Value;
use serde_json::value::RawValue;

use crate::protocol::{self, Incoming, Request, Response};

/// Requests run per batch; the ones past it are answered with an error and not run.
pub const MAX_BATCH_REQUESTS: usize = 64;
/// Bytes of answers (serialised JSON) one batch answer line carries before further answers
/// are replaced by an error.
pub const MAX_BATCH_ANSWER_BYTES: usize = 2 * 1024 * 1024;

/// True when a frame is a JSON array, i.e. a batch (its first non-blank byte is `[`).
pub fn is_batch(line: &str) -> bool {
    line.trim_start().starts_with('[')
}

/// The refusal of a batch line before anything runs: not JSON (`-32700`), batches not
/// allowed in this session (`-32600`: only a session that negotiated 2025-03-26 may send
/// them), or an empty batch (`-32600`). `None` when the batch is to be answered.
pub fn refuse(line: &str, negotiated: Option<&str>) -> Option<Response> {
    // Validates without building a value tree.
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(line) {
        return Some(Response::error(
            Value::Null,
            protocol::PARSE_ERROR,
            format!("Parse error: {e}. Send one JSON-RPC object per line."),
        ));
    }
    if negotiated != Some("2025-03-26") {
        return Some(Response::error(
            Value::Null,
            protocol::INVALID_REQUEST,
            "Invalid Request: batches are accepted only under protocol version 2025-03-26; \
send one message per line"
                .into(),
        ));
    }
    let inner = line.trim_start().strip_prefix('[').unwrap_or(line);
    let empty = inner.trim_start().starts_with(']');
    empty.then(|| {
        Response::error(
            Value::Null,
            protocol::INVALID_REQUEST,
            "Invalid Request: an empty batch".into(),
        )
    })
}

/// One element's answer while the batch is collected.
enum Slot {
    /// A request running as its own task (`None` when it was cancelled).
    Running(smol::Task<Option<Response>>),
    /// An answer known at once (an invalid element, a request past the bound).
    Ready(Response),
}

/// Answers a batch line that [`refuse`] let through: each request is started with `run` (which
/// spawns it, so the batch's calls run concurrently), each notification goes to `notify`, and
/// the answers come back as one JSON array line in the order of the requests. `None` when
/// nothing is to be answered (only notifications, or every call was cancelled).
pub async fn answer<R, N>(line: &str, mut run: R, notify: N) -> Option<String>
where
    R: FnMut(Request) -> smol::Task<Option<Response>>,
    N: Fn(&str, Option<&Value>),
{
    let items: Vec<&RawValue> = match serde_json::from_str(line) {
        Ok(items) => items,
        Err(e) => {
            return Some(
                Response::error(
                    Value::Null,
                    protocol::PARSE_ERROR,
                    format!("Parse error: {e}. Send one JSON-RPC object per line."),
                )
                .to_line(),
            );
        }
    };
    let total = items.len();
    let mut slots = Vec::with_capacity(total.min(MAX_BATCH_REQUESTS * 2));
    let mut requests = 0usize;
    for raw in items {
        let value = match serde_json::from_str::<Value>(raw.get()) {
            Ok(v) => v,
            // Cannot happen (the line parsed as JSON), but never a reason to panic.
            Err(_) => Value::Null,
        };
        match protocol::classify_value(value) {
            Incoming::Request(req) => {
                requests += 1;
                if requests > MAX_BATCH_REQUESTS {
                    slots.push(Slot::Ready(Response::error(
                        req.id,
                        protocol::INVALID_REQUEST,
                        format!(
                            "Invalid Request: not run, a batch runs at most {MAX_BATCH_REQUESTS} requests; send it in another batch"
                        ),
                    )));
                } else if req.method == "initialize" {
                    slots.push(Slot::Ready(Response::error(
                        req.id,
                        protocol::INVALID_REQUEST,
                        "Invalid Request: initialize must not be part of a batch".into(),
                    )));
                } else {
                    slots.push(Slot::Running(run(req)));
                }
            }
            Incoming::Notification { method, params } => notify(&method, params.as_ref()),
            Incoming::Reject(resp) => slots.push(Slot::Ready(resp)),
            Incoming::Response | Incoming::Batch(_) => {}
        }
    }
    if requests > MAX_BATCH_REQUESTS {
        tracing::info!(
            target: "mesh::server",
            requests,
            "batch over the bound: {} requests answered with an error, not run",
            requests - MAX_BATCH_REQUESTS
        );
    }
    let mut out = String::from("[");
    let mut answer_bytes = 0usize;
    let mut withheld = 0usize;
    let mut any = false;
    for slot in slots {
        let resp = match slot {
            Slot::Running(task) => match task.await {
                Some(r) => r,
                None => continue,
            },
            Slot::Ready(r) => r,
        };
        let mut text = resp.to_line();
        if answer_bytes + text.len() > MAX_BATCH_ANSWER_BYTES {
            withheld += 1;
            text = Response::error(
                resp.id,
                protocol::INVALID_REQUEST,
                format!(
                    "Invalid Request: answer withheld, a batch answer carries at most {} MiB; send this request on its own line",
                    MAX_BATCH_ANSWER_BYTES >> 20
                ),
            )
            .to_line();
        } else {
            answer_bytes += text.len();
        }
        if any {
            out.push(',');
        }
        out.push_str(&text);
        any = true;
    }
    if withheld > 0 {
        tracing::info!(target: "mesh::server", withheld, "batch answers over the byte bound were replaced by an error");
    }
    out.push(']');
    any.then_some(out)
}

/// Waits until the writer has taken every queued frame (or is gone), so a session holds at
/// most one batch answer line at a time. A client that does not read keeps the wait going,
/// and with it the session loop, which then stops reading too.
pub async fn until_written(out: &async_channel::Sender<String>) {
    while !out.is_empty() && !out.is_closed() {
        smol::Timer::after(Duration::from_millis(1)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run_batch(line: &str) -> Option<Value> {
        smol::block_on(answer(
            line,
            |req| smol::spawn(async move { Some(Response::success(req.id, json!({}))) }),
            |_, _| {},
        ))
        .map(|s| serde_json::from_str(&s).expect("the answer is JSON"))
    }

    #[test]
    fn refusals() {
        let r = refuse("[1,", Some("2025-03-26")).expect("not JSON");
        assert_eq!(r.error.map(|e| e.code), Some(protocol::PARSE_ERROR));
        let r = refuse("[{}]", Some("2025-06-18")).expect("wrong version");
        assert_eq!(r.error.map(|e| e.code), Some(protocol::INVALID_REQUEST));
        let r = refuse(" [ ] ", Some("2025-03-26")).expect("empty");
        assert!(r.error.unwrap().message.contains("empty"));
        assert!(refuse("[1]", Some("2025-03-26")).is_none());
        assert!(
            refuse("[[]]", Some("2025-03-26")).is_none(),
            "a batch of one empty array"
        );
    }

    #[test]
    fn requests_past_the_bound_are_answered_not_run() {
        let mut line = String::from("[");
        for i in 0..(MAX_BATCH_REQUESTS + 10) {
            if i > 0 {
                line.push(',');
            }
            line.push_str(&json!({"jsonrpc": "2.0", "id": i, "method": "ping"}).to_string());
        }
        line.push_str(r#",{"jsonrpc":"2.0","method":"notifications/x"},7]"#);
        let v = run_batch(&line).expect("an answer");
        let arr = v.as_array().unwrap();
        assert_eq!(arr.len(), MAX_BATCH_REQUESTS + 11);
        assert!(
            arr[..MAX_BATCH_REQUESTS]
                .iter()
                .all(|a| a["result"] == json!({}))
        );
        for a in &arr[MAX_BATCH_REQUESTS..MAX_BATCH_REQUESTS + 10] {
            assert_eq!(a["error"]["code"], -32600);
            assert!(
                a["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("at most 64")
            );
        }
        assert_eq!(arr[MAX_BATCH_REQUESTS]["id"], MAX_BATCH_REQUESTS);
        assert_eq!(arr.last().unwrap()["error"]["code"], -32600);
    }

    #[test]
    fn answers_past_the_byte_bound_are_withheld() {
        let big = "x".repeat(700 * 1024);
        let line = (0..5)
            .map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "ping"}).to_string())
            .collect::<Vec<_>>()
            .join(",");
        let answer = smol::block_on(answer(
            &format!("[{line}]"),
            |req| {
                let big = big.clone();
                smol::spawn(async move { Some(Response::success(req.id, json!(big))) })
            },
            |_, _| {},
        ))
        .unwrap();
        assert!(
            answer.len() < MAX_BATCH_ANSWER_BYTES + 1024,
            "{}",
            answer.len()
        );
        let v: Value = serde_json::from_str(&answer).unwrap();
        let arr = v.as_array().unwrap();
        assert_eq!(arr.len(), 5);
        assert!(arr[..2].iter().all(|a| a.get("result").is_some()));
        assert!(
            arr[3]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("withheld")
        );
    }

    #[test]
    fn only_notifications_get_no_answer() {
        assert_eq!(run_batch(r#"[{"jsonrpc":"2.0","method":"a"}]"#), None);
    }
}
