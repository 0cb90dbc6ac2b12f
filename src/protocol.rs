//! JSON-RPC 2.0 wire types for MCP: classification of an incoming frame, responses, error
//! codes, the protocol versions we speak, and the per-request `_meta` (W3C trace context,
//! progress token, modern-era protocol stamp).

use serde::Serialize;
use serde_json::{Map, Value};

/// Not JSON at all (answered with `id: null`).
pub const PARSE_ERROR: i64 = -32700;
/// JSON, but not a valid request object (or an oversized frame, or a batch where none is allowed).
pub const INVALID_REQUEST: i64 = -32600;
/// No such method.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Unknown tool, missing or malformed protocol parameters.
pub const INVALID_PARAMS: i64 = -32602;
/// A tool task failed (panicked).
pub const INTERNAL_ERROR: i64 = -32603;
/// `resources/read` of a URI that names no resource.
pub const RESOURCE_NOT_FOUND: i64 = -32002;
/// Modern era: the `_meta` protocol version is not one we support.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// Legacy (`initialize`) protocol versions, newest first.
pub const LEGACY_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// The stateless modern revision, served per request through `_meta`.
pub const MODERN_VERSION: &str = "2026-07-28";
/// What `server/discover` advertises and what `-32022` lists as supported.
pub const DISCOVER_VERSIONS: [&str; 1] = [MODERN_VERSION];
/// The `_meta` key carrying the modern-era protocol version.
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key carrying the modern-era client capabilities.
pub const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `_meta` key carrying the server info on modern-era results.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// Picks the version to answer an `initialize` with: the client's when we support it, else
/// our newest legacy version.
pub fn negotiate(requested: Option<&str>) -> &'static str {
    requested
        .and_then(|r| LEGACY_VERSIONS.iter().find(|v| **v == r).copied())
        .unwrap_or(LEGACY_VERSIONS[0])
}

/// How much of a client-supplied name (a method, a tool, a version) an error message echoes.
pub const MAX_ECHOED_NAME: usize = 64;

/// `name` as an error message may echo it: at most [`MAX_ECHOED_NAME`] bytes (cut on a
/// character boundary, with the full length said), so a 1 MB name does not make a 2 MB error.
///
/// ```ignore
/// use mesh_mcp::protocol::echo_name;
/// assert_eq!(echo_name("ping"), "ping");
/// assert_eq!(echo_name(&"x".repeat(100)), format!("{}… (100 bytes)", "x".repeat(64)));
/// ```
pub fn echo_name(name: &str) -> String {
    if name.len() <= MAX_ECHOED_NAME {
        return name.to_string();
    }
    let mut end = MAX_ECHOED_NAME;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &name[..end], name.len())
}

/// How much of a user-supplied value (a tool argument, a resource name, a prompt argument)
/// an error message echoes, in characters.
pub const MAX_ECHOED_INPUT: usize = 80;

/// `input` as an error message may echo it: at most [`MAX_ECHOED_INPUT`] characters, then an
/// ellipsis and the full length, newlines flattened, so a huge argument is not sent back.
///
/// ```ignore
/// use mesh_mcp::protocol::echo_input;
/// assert_eq!(echo_input("services/orders"), "services/orders");
/// let long = echo_input(&"y".repeat(5000));
/// assert!(long.starts_with(&"y".repeat(80)) && long.ends_with("… (5000 bytes)"));
/// ```
pub fn echo_input(input: &str) -> String {
    let flat = |s: &str| s.replace(['\n', '\r'], " ");
    match input.char_indices().nth(MAX_ECHOED_INPUT) {
        None => flat(input),
        Some((end, _)) => format!("{}… ({} bytes)", flat(&input[..end]), input.len()),
    }
}

/// `message` with every run between quotes or backticks longer than [`MAX_ECHOED_INPUT`]
/// characters cut as [`echo_input`] cuts it: for messages that quote the user's text whole (a
/// serde error quoting a wrong value, a config error quoting an unknown key).
///
/// ```ignore
/// use mesh_mcp::protocol::echo_quoted;
/// let m = echo_quoted(&format!("unknown key `{}` in [x]", "k".repeat(1000)));
/// assert!(m.len() < 200 && m.ends_with("(1000 bytes)` in [x]"), "{m}");
/// // Text outside quotes is the server's own: kept whole.
/// let own = format!("{} `a\"b` \"c`d\"", "w".repeat(100));
/// assert_eq!(echo_quoted(&own), own);
/// ```
pub fn echo_quoted(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(1024));
    // The quote character of the run being read, when inside one.
    let mut inside: Option<char> = None;
    let mut run_start = 0;
    for (at, c) in message.char_indices() {
        if c != '"' && c != '`' || inside.is_some_and(|q| q != c) {
            continue;
        }
        let run = &message[run_start..at];
        if inside.is_some() {
            out.push_str(&echo_input(run));
        } else {
            out.push_str(run);
        }
        out.push(c);
        inside = if inside.is_some() { None } else { Some(c) };
        run_start = at + c.len_utf8();
    }
    // An unclosed quote runs to the end: cut it too.
    let rest = &message[run_start..];
    if inside.is_some() {
        out.push_str(&echo_input(rest));
    } else {
        out.push_str(rest);
    }
    out
}

/// True when a negotiated version is at least `min` (versions are ISO dates, so they sort).
pub fn version_at_least(version: &str, min: &str) -> bool {
    version >= min
}

/// A request: it has an `id` (a string or a number; MCP forbids `null`) and expects exactly
/// one response.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub id: Value,
    pub method: String,
    pub params: Option<Value>,
}

/// What one frame (or one element of a batch) turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Request(Request),
    /// No `id` member: never answered, not even with an error.
    Notification {
        method: String,
        params: Option<Value>,
    },
    /// A response to something we sent (we send no requests, so it is ignored).
    Response,
    /// A JSON array: a batch, allowed only under 2025-03-26.
    Batch(Vec<Value>),
    /// Not a valid message: answer with this error.
    Reject(Response),
}

/// Classifies one frame of text.
pub fn classify(line: &str) -> Incoming {
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Array(items)) => Incoming::Batch(items),
        Ok(value) => classify_value(value),
        Err(e) => Incoming::Reject(Response::error(
            Value::Null,
            PARSE_ERROR,
            format!("Parse error: {e}. Send one JSON-RPC object per line."),
        )),
    }
}

/// Classifies one already-parsed message (a frame or a batch element).
pub fn classify_value(value: Value) -> Incoming {
    let Value::Object(mut obj) = value else {
        return Incoming::Reject(Response::error(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: a JSON-RPC message must be an object".to_string(),
        ));
    };
    let id = obj.remove("id");
    let echo_id = match &id {
        Some(v @ (Value::String(_) | Value::Number(_) | Value::Null)) => v.clone(),
        _ => Value::Null,
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Incoming::Reject(Response::error(
            echo_id,
            INVALID_REQUEST,
            "Invalid Request: \"jsonrpc\" must be \"2.0\"".to_string(),
        ));
    }
    if let Some(bad) = &id
        && !matches!(bad, Value::String(_) | Value::Number(_) | Value::Null)
    {
        return Incoming::Reject(Response::error(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: \"id\" must be a string or a number".to_string(),
        ));
    }
    let method = match obj.remove("method") {
        Some(Value::String(m)) => m,
        Some(_) => {
            return Incoming::Reject(Response::error(
                echo_id,
                INVALID_REQUEST,
                "Invalid Request: \"method\" must be a string".to_string(),
            ));
        }
        None if id.is_some() && (obj.contains_key("result") || obj.contains_key("error")) => {
            return Incoming::Response;
        }
        None => {
            return Incoming::Reject(Response::error(
                echo_id,
                INVALID_REQUEST,
                "Invalid Request: missing \"method\"".to_string(),
            ));
        }
    };
    let params = obj.remove("params");
    match id {
        // JSON-RPC allows a null id; MCP does not ("the ID MUST NOT be null"), and an answer
        // with id null could not be told from the answer to a malformed frame.
        Some(Value::Null) => Incoming::Reject(Response::error(
            Value::Null,
            INVALID_REQUEST,
            format!(
                "Invalid Request: \"id\" must not be null in MCP (method {}); send a string or a number, or leave \"id\" out for a notification",
                echo_name(&method)
            ),
        )),
        None => Incoming::Notification { method, params },
        Some(id) => Incoming::Request(Request { id, method, params }),
    }
}

/// The `error` member of a response.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorObject {
    pub code: i64,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// A JSON-RPC response: exactly one of `result` or `error`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Response {
    pub jsonrpc: &'static str,
    pub id: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
}

impl Response {
    /// A successful response.
    pub fn success(id: Value, result: Value) -> Response {
        Response {
            jsonrpc: "2.0",
            id,
            result: Some(result),
            error: None,
        }
    }

    /// An error response.
    pub fn error(id: Value, code: i64, message: String) -> Response {
        Response {
            jsonrpc: "2.0",
            id,
            result: None,
            error: Some(ErrorObject {
                code,
                message,
                data: None,
            }),
        }
    }

    /// An error response carrying `data`.
    pub fn error_with_data(id: Value, code: i64, message: String, data: Value) -> Response {
        let mut r = Response::error(id, code, message);
        if let Some(e) = r.error.as_mut() {
            e.data = Some(data);
        }
        r
    }

    /// The compact one-line JSON of this response (never contains a raw newline).
    pub fn to_line(&self) -> String {
        // A result (every answer but an error) is written by `jsonw`, the same bytes as
        // serde's derive in a fraction of its instructions at opt-level "z".
        if self.error.is_none() {
            let mut out = String::with_capacity(1024);
            out.push_str("{\"jsonrpc\":");
            crate::jsonw::write_str(&mut out, self.jsonrpc);
            out.push_str(",\"id\":");
            crate::jsonw::write(&mut out, &self.id);
            if let Some(result) = &self.result {
                out.push_str(",\"result\":");
                crate::jsonw::write(&mut out, result);
            }
            out.push('}');
            return out;
        }
        serde_json::to_string(self).unwrap_or_else(|_| {
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"response could not be serialised"}}"#
                .to_string()
        })
    }
}

/// A notification we send (progress, log messages).
pub fn notification(method: &str, params: Value) -> String {
    let mut obj = Map::new();
    obj.insert("jsonrpc".into(), Value::from("2.0"));
    obj.insert("method".into(), Value::from(method));
    obj.insert("params".into(), params);
    Value::Object(obj).to_string()
}

/// The per-request `_meta` we understand: W3C trace context, the progress token and the
/// modern-era stamp. Unknown keys are kept out of the way, never an error (clients add their own).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestMeta {
    pub traceparent: Option<String>,
    pub tracestate: Option<String>,
    pub progress_token: Option<Value>,
    /// `io.modelcontextprotocol/protocolVersion`, when the request is stamped (modern era).
    pub protocol_version: Option<String>,
    /// True when `io.modelcontextprotocol/clientCapabilities` is present.
    pub has_client_capabilities: bool,
    /// `io.modelcontextprotocol/logLevel`, when given.
    pub log_level: Option<String>,
}

impl RequestMeta {
    /// Reads `params._meta` (missing or malformed members are ignored).
    pub fn from_params(params: Option<&Value>) -> RequestMeta {
        let Some(meta) = params
            .and_then(|p| p.get("_meta"))
            .and_then(Value::as_object)
        else {
            return RequestMeta::default();
        };
        let s = |k: &str| meta.get(k).and_then(Value::as_str).map(str::to_string);
        RequestMeta {
            traceparent: s("traceparent"),
            tracestate: s("tracestate"),
            progress_token: meta
                .get("progressToken")
                .filter(|v| v.is_string() || v.is_number())
                .cloned(),
            protocol_version: s(META_VERSION),
            has_client_capabilities: meta.get(META_CAPABILITIES).is_some_and(Value::is_object),
            log_level: s("io.modelcontextprotocol/logLevel"),
        }
    }

    /// The trace id of a valid W3C `traceparent`, else `None`.
    pub fn trace_id(&self) -> Option<String> {
        self.traceparent.as_deref().and_then(parse_traceparent)
    }
}

/// Validates a W3C `traceparent` strictly (version `00`, 32 lowercase hex trace id not all
/// zeros, 16 lowercase hex parent id not all zeros, 2 hex flags) and returns its trace id.
///
/// ```ignore
/// use mesh_mcp::protocol::parse_traceparent;
/// let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
/// assert_eq!(parse_traceparent(tp).as_deref(), Some("4bf92f3577b34da6a3ce929d0e0e4736"));
/// assert_eq!(parse_traceparent("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"), None);
/// ```
pub fn parse_traceparent(tp: &str) -> Option<String> {
    let parts: Vec<&str> = tp.split('-').collect();
    let [version, trace, parent, flags] = parts.as_slice() else {
        return None;
    };
    let hex = |s: &str, n: usize| {
        s.len() == n
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    let nonzero = |s: &str| s.bytes().any(|b| b != b'0');
    (*version == "00"
        && hex(trace, 32)
        && nonzero(trace)
        && hex(parent, 16)
        && nonzero(parent)
        && hex(flags, 2))
    .then(|| trace.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn response_lines_are_what_serde_writes() {
        let text = "## Declarations\n\n```go\nfunc \"x\"() {\t}\n```\n\u{1}é";
        for resp in [
            Response::success(json!(7), json!({})),
            Response::success(
                json!("a\"b"),
                json!({"content": [{"type": "text", "text": text}], "isError": false, "structuredContent": {"rows": [{"line": 3, "path": "a/b.go"}], "total": 1}}),
            ),
            Response::success(Value::Null, json!([1.5, null, true])),
            Response::error(json!(1), INVALID_PARAMS, "bad \"x\"".into()),
            Response::error_with_data(json!(2), -32022, "v".into(), json!({"supported": ["x"]})),
        ] {
            assert_eq!(resp.to_line(), serde_json::to_string(&resp).unwrap());
        }
    }

    #[test]
    fn classifies_requests_notifications_and_rejects() {
        match classify(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#) {
            Incoming::Request(r) => {
                assert_eq!(r.id, json!(1));
                assert_eq!(r.method, "ping");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            classify(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Incoming::Notification { .. }
        ));
        // An explicit null id is no request in MCP: refused, naming the fix.
        match classify(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#) {
            Incoming::Reject(r) => {
                let e = r.error.unwrap();
                assert_eq!((r.id, e.code), (Value::Null, INVALID_REQUEST));
                assert!(e.message.contains("must not be null"), "{}", e.message);
            }
            other => panic!("{other:?}"),
        }
        let reject = |line: &str| match classify(line) {
            Incoming::Reject(r) => (r.id, r.error.map(|e| e.code)),
            other => panic!("{line}: {other:?}"),
        };
        assert_eq!(reject("not json"), (Value::Null, Some(PARSE_ERROR)));
        assert_eq!(
            reject(r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#),
            (json!(7), Some(INVALID_REQUEST))
        );
        assert_eq!(
            reject(r#"{"id":"a","method":"ping"}"#),
            (json!("a"), Some(INVALID_REQUEST))
        );
        assert_eq!(
            reject(r#"{"jsonrpc":"2.0","id":3}"#),
            (json!(3), Some(INVALID_REQUEST))
        );
        assert_eq!(
            reject(r#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#),
            (Value::Null, Some(INVALID_REQUEST))
        );
        assert_eq!(reject("42"), (Value::Null, Some(INVALID_REQUEST)));
        assert!(matches!(classify("[1,2]"), Incoming::Batch(_)));
        assert!(matches!(
            classify(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Incoming::Response
        ));
    }

    #[test]
    fn negotiates_versions() {
        assert_eq!(negotiate(Some("2024-11-05")), "2024-11-05");
        assert_eq!(negotiate(Some("2025-03-26")), "2025-03-26");
        assert_eq!(negotiate(Some("2025-06-18")), "2025-06-18");
        assert_eq!(negotiate(Some("2025-11-25")), "2025-11-25");
        assert_eq!(negotiate(Some("1999-01-01")), "2025-11-25");
        assert_eq!(negotiate(Some("2026-07-28")), "2025-11-25");
        assert_eq!(negotiate(None), "2025-11-25");
    }

    #[test]
    fn traceparent_is_strict() {
        let ok = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assert!(parse_traceparent(ok).is_some());
        for bad in [
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "",
        ] {
            assert_eq!(parse_traceparent(bad), None, "{bad}");
        }
    }

    #[test]
    fn meta_is_read_from_params() {
        let params = json!({"_meta": {"progressToken": "p1", "traceparent": "x",
            META_VERSION: "2026-07-28", META_CAPABILITIES: {}}});
        let m = RequestMeta::from_params(Some(&params));
        assert_eq!(m.progress_token, Some(json!("p1")));
        assert_eq!(m.protocol_version.as_deref(), Some("2026-07-28"));
        assert!(m.has_client_capabilities);
        assert_eq!(m.trace_id(), None);
    }

    /// The example in the documentation above (private items have no doctests).
    #[test]
    fn documented_example_1() {
        use crate::protocol::echo_name;
        assert_eq!(echo_name("ping"), "ping");
        assert_eq!(
            echo_name(&"x".repeat(100)),
            format!("{}… (100 bytes)", "x".repeat(64))
        );
    }

    /// The example in the documentation above (private items have no doctests).
    #[test]
    fn documented_example_2() {
        use crate::protocol::echo_input;
        assert_eq!(echo_input("services/orders"), "services/orders");
        let long = echo_input(&"y".repeat(5000));
        assert!(long.starts_with(&"y".repeat(80)) && long.ends_with("… (5000 bytes)"));
    }

    /// The example in the documentation above (private items have no doctests).
    #[test]
    fn documented_example_3() {
        use crate::protocol::echo_quoted;
        let m = echo_quoted(&format!("unknown key `{}` in [x]", "k".repeat(1000)));
        assert!(m.len() < 200 && m.ends_with("(1000 bytes)` in [x]"), "{m}");
        // Text outside quotes is the server's own: kept whole.
        let own = format!("{} `a\"b` \"c`d\"", "w".repeat(100));
        assert_eq!(echo_quoted(&own), own);
    }

    /// The example in the documentation above (private items have no doctests).
    #[test]
    fn documented_example_4() {
        use crate::protocol::parse_traceparent;
        let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assert_eq!(
            parse_traceparent(tp).as_deref(),
            Some("4bf92f3577b34da6a3ce929d0e0e4736")
        );
        assert_eq!(
            parse_traceparent("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"),
            None
        );
    }
}
