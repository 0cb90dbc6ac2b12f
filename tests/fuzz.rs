//! Feeds one long-lived `mesh-mcp run --standalone` more than 100,000 seeded, mostly hostile
//! frames — random bytes, invalid UTF-8, truncated and concatenated JSON, deep nesting, huge
//! strings and numbers, wrong types in every field, batches, duplicate ids, ids of every JSON
//! type, notifications and stray responses — then a ping, and checks that the process never
//! dies, answers every request exactly once with the right id (and every rejected frame with
//! the right code), answers no notification, exits 0 on EOF, and stays within a memory bound
//! derived from `size-report/budgets.json`.
//!
//! The expected answers come from [`Model`]: the JSON-RPC 2.0 rules as SPEC §2 applies them
//! (serde_json is the JSON grammar for both sides, so depth and number limits agree), with
//! the one piece of session state that changes them — batches are accepted only after an
//! `initialize` that negotiated 2025-03-26.

mod common;
#[path = "support/stress.rs"]
mod stress;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use common::{Server, temp_dir};
use serde_json::{Map, Value, json};
use stress::Rng;

/// Frames fed to the one server process (plus the final ping).
const FRAMES: usize = 100_000;
/// The seed: change it to explore, keep it to reproduce.
const SEED: u64 = 0x6d65_7368_2d6d_6370;
/// The server's frame limit (SPEC §2: a line over 8 MiB is discarded and answered -32600).
const MAX_FRAME_BYTES: usize = 8 * 1024 * 1024;
const LEGACY: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPS: &str = "io.modelcontextprotocol/clientCapabilities";

/// How an answer must look, beyond its id: a parse error (-32700), an invalid request
/// (-32600), or anything else a request can get (a result or another error).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
enum Class {
    Parse,
    Invalid,
    Any,
}

/// The answer one frame must get.
#[derive(Debug)]
enum Expect {
    Nothing,
    One(String, Class),
    /// A batch answered with one array frame holding these (id, class) pairs.
    Batch(Vec<(String, Class)>),
}

const NULL_ID: &str = "null";

/// The text an id is matched by. A float id is compared to 12 significant digits: serde_json's
/// default float parsing is not exactly round-trip (the last binary digit may differ after an
/// echo), and JSON-RPC discourages fractional ids anyway.
fn canon(id: &Value) -> String {
    match id {
        Value::Number(n) if n.is_f64() => format!("{:.12e}", n.as_f64().unwrap_or(f64::NAN)),
        other => other.to_string(),
    }
}

fn class_of(response: &Value) -> Class {
    match response.pointer("/error/code").and_then(Value::as_i64) {
        Some(-32700) => Class::Parse,
        Some(-32600) => Class::Invalid,
        _ => Class::Any,
    }
}

/// The JSON-RPC 2.0 rules the server must follow, frame by frame.
#[derive(Default)]
struct Model {
    negotiated: Option<&'static str>,
}

impl Model {
    fn expect(&mut self, frame: &[u8]) -> Expect {
        if frame.len() > MAX_FRAME_BYTES {
            return Expect::One(NULL_ID.into(), Class::Invalid);
        }
        let line = frame.strip_suffix(b"\r").unwrap_or(frame);
        let Ok(text) = std::str::from_utf8(line) else {
            return Expect::One(NULL_ID.into(), Class::Parse);
        };
        if text.trim().is_empty() {
            return Expect::Nothing;
        }
        match serde_json::from_str::<Value>(text) {
            Err(_) => Expect::One(NULL_ID.into(), Class::Parse),
            Ok(Value::Array(items)) => self.batch(items),
            Ok(value) => match self.message(&value, false) {
                Some((id, class)) => Expect::One(id, class),
                None => Expect::Nothing,
            },
        }
    }

    /// One message (a frame or a batch element): `None` when it must not be answered.
    fn message(&mut self, value: &Value, in_batch: bool) -> Option<(String, Class)> {
        let Value::Object(obj) = value else {
            return Some((NULL_ID.into(), Class::Invalid));
        };
        let id = obj.get("id");
        let scalar = |v: &Value| matches!(v, Value::String(_) | Value::Number(_) | Value::Null);
        let echo = id.filter(|v| scalar(v)).map_or(NULL_ID.to_string(), canon);
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Some((echo, Class::Invalid));
        }
        if id.is_some_and(|v| !scalar(v)) {
            return Some((NULL_ID.into(), Class::Invalid));
        }
        match obj.get("method") {
            Some(Value::String(method)) => {
                let id = id?;
                // MCP forbids a null request id: refused before anything else is read.
                if id.is_null() {
                    return Some((NULL_ID.into(), Class::Invalid));
                }
                if method == "initialize" && (in_batch || !self.initialize(obj.get("params"))) {
                    return Some((canon(id), Class::Invalid));
                }
                Some((canon(id), Class::Any))
            }
            Some(_) => Some((echo, Class::Invalid)),
            None if id.is_some() && (obj.contains_key("result") || obj.contains_key("error")) => {
                None
            }
            None => Some((echo, Class::Invalid)),
        }
    }

    /// An `initialize` negotiates unless a modern `_meta` stamp turns it away first, and only
    /// the first that negotiates counts: a second one is an `-32600` error and changes
    /// nothing. False for that second one.
    fn initialize(&mut self, params: Option<&Value>) -> bool {
        let meta = params
            .and_then(|p| p.get("_meta"))
            .and_then(Value::as_object);
        if let Some(version) = meta
            .and_then(|m| m.get(META_VERSION))
            .and_then(Value::as_str)
        {
            let caps = meta
                .and_then(|m| m.get(META_CAPS))
                .is_some_and(Value::is_object);
            if version != "2026-07-28" || !caps {
                return true;
            }
        }
        if self.negotiated.is_some() {
            return false;
        }
        let requested = params
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str);
        self.negotiated = Some(
            LEGACY
                .iter()
                .copied()
                .find(|v| Some(*v) == requested)
                .unwrap_or(LEGACY[0]),
        );
        true
    }

    fn batch(&mut self, items: Vec<Value>) -> Expect {
        if self.negotiated != Some("2025-03-26") || items.is_empty() {
            return Expect::One(NULL_ID.into(), Class::Invalid);
        }
        let mut answers: Vec<(String, Class)> = items
            .iter()
            .filter_map(|item| self.message(item, true))
            .collect();
        if answers.is_empty() {
            return Expect::Nothing;
        }
        answers.sort();
        Expect::Batch(answers)
    }
}

/// The generator of hostile and ordinary frames.
struct Gen {
    rng: Rng,
    next_id: i64,
}

const METHODS: [&str; 12] = [
    "ping",
    "ping",
    "tools/list",
    "tools/call",
    "tools/call",
    "logging/setLevel",
    "server/discover",
    "resources/list",
    "prompts/get",
    "completion/complete",
    "no/such/method",
    "",
];
const NOTIFICATIONS: [&str; 5] = [
    "notifications/initialized",
    "notifications/progress",
    "notifications/roots/list_changed",
    "notifications/message",
    "x",
];
const TOOLS: [&str; 8] = [
    "index_status",
    "index_status",
    "smart_search",
    "search_docs",
    "find_dependents",
    "analyze_impact",
    "visualize_mesh",
    "no_such_tool",
];
const WORDS: [&str; 8] = [
    "OrderService",
    "orders.created",
    "Kafka",
    "PlaceOrder",
    "main",
    "",
    "ñ🦀\u{0}",
    "services/orders",
];

impl Gen {
    /// A fresh integer id (mostly unique; duplicates come from [`Gen::id`]'s fixed pool).
    fn fresh_id(&mut self) -> Value {
        self.next_id += 1;
        json!(self.next_id)
    }

    /// An id of any JSON type: valid (string, integer, float, null) or not (bool, object, array).
    fn id(&mut self) -> Value {
        match self.rng.below(20) {
            0..=7 => self.fresh_id(),
            8 => json!(format!("s-{}", self.rng.below(1 << 40))),
            9 => self
                .rng
                .pick(&[
                    json!(""),
                    json!("dup"),
                    json!("ñ🦀"),
                    json!("a\"b\\c\nd\u{0}"),
                ])
                .clone(),
            10 => json!("x".repeat(self.rng.range(100, 5000) as usize)),
            11 => self
                .rng
                .pick(&[
                    json!(0),
                    json!(1),
                    json!(-1),
                    json!(i64::MAX),
                    json!(i64::MIN),
                    json!(u64::MAX),
                ])
                .clone(),
            12 => self
                .rng
                .pick(&[
                    json!(1.5),
                    json!(-0.0),
                    json!(1e300),
                    json!(3.0),
                    json!(2.5e-300),
                ])
                .clone(),
            13 => Value::Null,
            14 => json!(7), // a duplicate on purpose
            15 => json!(true),
            16 => json!({"nested": 1}),
            17 => json!([1, 2]),
            18 => json!(false),
            _ => json!(-(self.rng.below(1000) as i64)),
        }
    }

    /// An arbitrary small JSON value, for "wrong type" mutations.
    fn any_value(&mut self, depth: u32) -> Value {
        match self.rng.below(if depth > 2 { 6 } else { 8 }) {
            0 => Value::Null,
            1 => json!(self.rng.chance(500)),
            2 => json!(self.rng.next_u64() as i64),
            3 => json!((self.rng.below(1_000_000) as f64) / 7.0),
            4 => json!(self.rng.pick(&WORDS).to_string()),
            5 => json!(String::from_utf8_lossy(&self.rng.bytes_without_newline(12))),
            6 => Value::Array(
                (0..self.rng.below(4))
                    .map(|_| self.any_value(depth + 1))
                    .collect(),
            ),
            _ => {
                let mut m = Map::new();
                for i in 0..self.rng.below(4) {
                    m.insert(format!("k{i}"), self.any_value(depth + 1));
                }
                Value::Object(m)
            }
        }
    }

    fn modern_meta(&mut self) -> Value {
        let mut meta = Map::new();
        meta.insert(
            META_VERSION.into(),
            self.rng
                .pick(&[
                    json!("2026-07-28"),
                    json!("2026-07-28"),
                    json!("2025-11-25"),
                    json!(7),
                ])
                .clone(),
        );
        if self.rng.chance(800) {
            meta.insert(
                META_CAPS.into(),
                self.rng.pick(&[json!({}), json!({}), json!(1)]).clone(),
            );
        }
        Value::Object(meta)
    }

    fn tool_arguments(&mut self, tool: &str) -> Value {
        let word = json!(self.rng.pick(&WORDS).to_string());
        match tool {
            "smart_search" | "search_docs" => json!({"query": word}),
            "find_dependents" | "analyze_impact" => json!({"target": word}),
            "visualize_mesh" => {
                json!({"format": self.rng.pick(&["mermaid", "json", "html", "svg"]).to_string()})
            }
            _ => json!({}),
        }
    }

    /// A well-formed request (or a notification when `id` is `None`) as an object.
    fn message(&mut self, id: Option<Value>) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("jsonrpc".into(), json!("2.0"));
        if let Some(id) = id {
            m.insert("id".into(), id);
            let method = *self.rng.pick(&METHODS);
            m.insert("method".into(), json!(method));
            let params = match method {
                "tools/call" => {
                    let tool = *self.rng.pick(&TOOLS);
                    let mut p = json!({"name": tool, "arguments": self.tool_arguments(tool)});
                    if self.rng.chance(200) {
                        p["_meta"] = json!({"progressToken": self.id()});
                    }
                    Some(p)
                }
                "logging/setLevel" => {
                    Some(json!({"level": self.rng.pick(&["debug", "error", "bogus"]).to_string()}))
                }
                "tools/list" => Some(json!({})),
                _ => None,
            };
            let mut params = params;
            if self.rng.chance(100) {
                let meta = self.modern_meta();
                params.get_or_insert_with(|| json!({}))["_meta"] = meta;
            }
            if let Some(p) = params {
                m.insert("params".into(), p);
            }
        } else {
            m.insert(
                "method".into(),
                json!(self.rng.pick(&NOTIFICATIONS).to_string()),
            );
            if self.rng.chance(500) {
                m.insert("params".into(), self.any_value(0));
            }
        }
        m
    }

    /// Replaces (or deletes) one field of a message with a value of a random type.
    fn mutate(&mut self, m: &mut Map<String, Value>) {
        let field = *self.rng.pick(&[
            "jsonrpc",
            "id",
            "method",
            "params",
            "params.name",
            "params.arguments",
            "params._meta",
            "params.level",
            "params.arguments.query",
        ]);
        let value = if self.rng.chance(150) {
            None
        } else {
            Some(self.any_value(0))
        };
        let (outer, inner) = match field.split_once('.') {
            Some((o, i)) => (o, Some(i)),
            None => (field, None),
        };
        match inner {
            None => match value {
                Some(v) => {
                    m.insert(outer.into(), v);
                }
                None => {
                    m.remove(outer);
                }
            },
            Some(path) => {
                let params = m.entry("params").or_insert_with(|| json!({}));
                let mut target = params;
                let parts: Vec<&str> = path.split('.').collect();
                for part in &parts[..parts.len() - 1] {
                    if !target.is_object() {
                        return;
                    }
                    target = target
                        .as_object_mut()
                        .unwrap()
                        .entry(part.to_string())
                        .or_insert_with(|| json!({}));
                }
                let Some(obj) = target.as_object_mut() else {
                    return;
                };
                let last = parts[parts.len() - 1].to_string();
                match value {
                    Some(v) => {
                        obj.insert(last, v);
                    }
                    None => {
                        obj.remove(&last);
                    }
                }
            }
        }
    }

    fn request_line(&mut self) -> Vec<u8> {
        let id = self.fresh_id();
        let m = self.message(Some(id));
        Value::Object(m).to_string().into_bytes()
    }

    /// A frame with a huge string (100 KB to 1 MB) in the method, a tool argument or the id.
    fn huge_frame(&mut self) -> Vec<u8> {
        let n = self.rng.range(50_000, 500_000) as usize;
        let big = if self.rng.chance(500) {
            "é".repeat(n)
        } else {
            "x".repeat(2 * n)
        };
        let id = self.fresh_id();
        match self.rng.below(3) {
            0 => format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{big}\"}}"),
            1 => format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"smart_search\",\"arguments\":{{\"query\":\"{big}\"}}}}}}"
            ),
            _ => format!("{{\"jsonrpc\":\"2.0\",\"id\":\"{big}\",\"method\":\"ping\"}}"),
        }
        .into_bytes()
    }

    /// One frame, without its newline.
    fn frame(&mut self) -> Vec<u8> {
        match self.rng.below(1000) {
            // Random bytes.
            0..=89 => {
                let len = self.rng.range(1, 80) as usize;
                self.rng.bytes_without_newline(len)
            }
            // Invalid UTF-8 inside an otherwise valid request.
            90..=129 => {
                let mut line = self.request_line();
                let sequences: [&[u8]; 4] = [b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xf0\x9f"];
                let bad = *self.rng.pick(&sequences);
                let at = self.rng.below(line.len() as u64 + 1) as usize;
                line.splice(at..at, bad.iter().copied());
                line
            }
            // Truncated JSON.
            130..=229 => {
                let mut line = self.request_line();
                let cut = self.rng.range(1, line.len() as u64 - 1) as usize;
                line.truncate(cut);
                line
            }
            // Concatenated JSON on one line.
            230..=279 => {
                let mut line = self.request_line();
                if self.rng.chance(500) {
                    line.push(b' ');
                }
                line.extend(self.request_line());
                line
            }
            // Deep nesting: shallow enough to parse, or past serde_json's limit of 128.
            280..=299 => {
                let depth = if self.rng.chance(500) {
                    self.rng.range(10, 100)
                } else {
                    self.rng.range(129, 2000)
                } as usize;
                let (open, close) = if self.rng.chance(500) {
                    ("[", "]")
                } else {
                    ("{\"a\":", "}")
                };
                let id = self.fresh_id();
                format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\",\"params\":{}1{}}}",
                    open.repeat(depth),
                    close.repeat(depth)
                )
                .into_bytes()
            }
            // Huge numbers.
            310..=329 => {
                let number = match self.rng.below(5) {
                    0 => "1e400".to_string(),
                    1 => "-1e400".to_string(),
                    2 => "9".repeat(self.rng.range(20, 400) as usize),
                    3 => format!("0.{}1", "0".repeat(400)),
                    _ => "123456789012345678901234567890".to_string(),
                };
                let field = if self.rng.chance(500) { "id" } else { "params" };
                let other = if field == "id" {
                    "\"method\":\"ping\"".to_string()
                } else {
                    format!("\"id\":{},\"method\":\"ping\"", self.fresh_id())
                };
                format!("{{\"jsonrpc\":\"2.0\",{other},\"{field}\":{number}}}").into_bytes()
            }
            // Wrong types in every field.
            330..=579 => {
                let id = if self.rng.chance(900) {
                    Some(self.fresh_id())
                } else {
                    None
                };
                let mut m = self.message(id);
                self.mutate(&mut m);
                if self.rng.chance(200) {
                    self.mutate(&mut m);
                }
                Value::Object(m).to_string().into_bytes()
            }
            // Valid requests with ids of every JSON type, duplicates included.
            580..=759 => {
                let id = self.id();
                Value::Object(self.message(Some(id)))
                    .to_string()
                    .into_bytes()
            }
            // Notifications.
            760..=839 => Value::Object(self.message(None)).to_string().into_bytes(),
            // Batches (accepted only after a 2025-03-26 initialize).
            840..=919 => {
                let n = self.rng.below(7);
                let items: Vec<Value> = (0..n)
                    .map(|_| match self.rng.below(6) {
                        0 => Value::Object(self.message(None)),
                        1 => self.any_value(1),
                        2 => json!({"jsonrpc":"2.0","id":self.fresh_id(),"method":"initialize","params":{}}),
                        _ => {
                            let id = self.id();
                            Value::Object(self.message(Some(id)))
                        }
                    })
                    .collect();
                Value::Array(items).to_string().into_bytes()
            }
            // Stray responses (we send no requests, so they are ignored).
            920..=939 => {
                let id = self.id();
                if self.rng.chance(500) {
                    json!({"jsonrpc":"2.0","id":id,"result":{}})
                } else {
                    json!({"jsonrpc":"2.0","id":id,"error":{"code":-1,"message":"x"}})
                }
                .to_string()
                .into_bytes()
            }
            // Blank lines and bare carriage returns.
            940..=959 => self
                .rng
                .pick(&[&b""[..], b"   ", b"\r", b"\t \t", b"\xc2\xa0"])
                .to_vec(),
            // initialize again: an error, since the session is initialized already.
            960..=979 => {
                let version = self
                    .rng
                    .pick(&[
                        json!("2025-03-26"),
                        json!("2025-03-26"),
                        json!("2025-11-25"),
                        json!("2024-11-05"),
                        json!("1999-01-01"),
                        json!(42),
                    ])
                    .clone();
                let id = self.fresh_id();
                json!({"jsonrpc":"2.0","id":id,"method":"initialize","params":{"protocolVersion":version,"capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}})
                    .to_string()
                    .into_bytes()
            }
            // Scalars and other non-objects.
            _ => {
                let v = self.any_value(3);
                v.to_string().into_bytes()
            }
        }
    }
}

/// What is still owed: single answers by (id, class), batch answers by their sorted pairs.
#[derive(Default)]
struct Owed {
    single: HashMap<(String, Class), usize>,
    batches: HashMap<String, usize>,
    total: usize,
}

impl Owed {
    fn add(&mut self, expect: Expect) {
        match expect {
            Expect::Nothing => return,
            Expect::One(id, class) => *self.single.entry((id, class)).or_default() += 1,
            Expect::Batch(pairs) => *self.batches.entry(format!("{pairs:?}")).or_default() += 1,
        }
        self.total += 1;
    }

    /// Crosses one answer off; an error names an answer nobody was owed.
    fn settle(&mut self, frame: &Value) -> Result<(), String> {
        let key = match frame {
            Value::Array(items) => {
                let mut pairs: Vec<(String, Class)> = items
                    .iter()
                    .map(|r| (canon(&r["id"]), class_of(r)))
                    .collect();
                pairs.sort();
                let key = format!("{pairs:?}");
                return take(&mut self.batches, &key, &mut self.total)
                    .ok_or_else(|| format!("unexpected batch answer {}", truncate(frame)));
            }
            _ => (canon(&frame["id"]), class_of(frame)),
        };
        take(&mut self.single, &key, &mut self.total).ok_or_else(|| {
            format!(
                "an answer nobody was owed (a duplicate, a wrong id or a wrong code): {}",
                truncate(frame)
            )
        })
    }
}

fn take<K: std::hash::Hash + Eq>(
    map: &mut HashMap<K, usize>,
    key: &K,
    total: &mut usize,
) -> Option<()> {
    let n = map.get_mut(key)?;
    *n -= 1;
    if *n == 0 {
        map.remove(key);
    }
    *total -= 1;
    Some(())
}

fn truncate(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 300 {
        format!("{}…", s.chars().take(300).collect::<String>())
    } else {
        s
    }
}

#[test]
fn one_server_survives_a_hundred_thousand_hostile_frames() {
    let ws = stress::small_workspace(&temp_dir("fuzz-ws"));
    // Without the test fixtures: a fuzzed `test_sleep` could stall the run for minutes.
    let mut server = Server::start_with(&ws, &[("MESH_TEST_FIXTURES", "0")]);
    let pid = server.child.id();
    let mut generator = Gen {
        rng: Rng::new(SEED),
        next_id: 1_000_000,
    };
    let mut model = Model::default();
    let mut owed = Owed::default();
    let mut stats: HashMap<&str, usize> = HashMap::new();
    let mut largest = 0usize;
    let mut buffer: Vec<u8> = Vec::with_capacity(1 << 20);
    let started = Instant::now();

    // The session negotiates 2025-03-26 first, so batches are answered; the initializes the
    // generator sends later are errors (one initialize per session) and change nothing.
    let first = json!({"jsonrpc":"2.0","id":"fuzz-init","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}})
        .to_string()
        .into_bytes();
    owed.add(model.expect(&first));
    buffer.extend_from_slice(&first);
    buffer.push(b'\n');

    // Two lines over the 8 MiB limit and twenty huge ones under it, at fixed places.
    let oversized_at = [FRAMES / 3, 2 * FRAMES / 3];
    for i in 0..FRAMES {
        let frame = if oversized_at.contains(&i) {
            let mut line = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"".to_vec();
            line.resize(MAX_FRAME_BYTES + 1024, b'z');
            line
        } else if i % (FRAMES / 20) == FRAMES / 40 {
            generator.huge_frame()
        } else {
            let mut f = generator.frame();
            if generator.rng.chance(20) {
                f.push(b'\r');
            }
            f
        };
        largest = largest.max(frame.len());
        let expect = model.expect(&frame);
        *stats
            .entry(match &expect {
                Expect::Nothing => "unanswered",
                Expect::One(_, Class::Parse) => "parse errors",
                Expect::One(_, Class::Invalid) => "invalid requests",
                Expect::One(_, Class::Any) => "requests",
                Expect::Batch(_) => "answered batches",
            })
            .or_default() += 1;
        owed.add(expect);
        buffer.extend_from_slice(&frame);
        buffer.push(b'\n');
        if buffer.len() >= 256 * 1024 {
            server.send_raw(&buffer);
            buffer.clear();
        }
    }
    let ping = json!({"jsonrpc":"2.0","id":"fuzz-final-ping","method":"ping"});
    buffer.extend_from_slice(ping.to_string().as_bytes());
    buffer.push(b'\n');
    owed.add(Expect::One(canon(&json!("fuzz-final-ping")), Class::Any));
    server.send_raw(&buffer);
    eprintln!(
        "fuzz: written in {:?}; {FRAMES} frames (largest {largest} bytes), owed {} answers: {stats:?}",
        started.elapsed(),
        owed.total
    );

    // Every owed answer, in any order; server notifications (progress) are allowed.
    let deadline = Instant::now() + Duration::from_secs(180);
    let mut problems = Vec::new();
    let mut ping_answer = None;
    while owed.total > 0 {
        let left = deadline.saturating_duration_since(Instant::now());
        let Some(frame) = server.next(left) else {
            let status = server.child.try_wait().ok().flatten();
            panic!(
                "{} answers never came (problems so far: {problems:#?}) (server status {status:?}); e.g. {:?}",
                owed.total,
                owed.single.keys().take(5).collect::<Vec<_>>()
            );
        };
        if frame.get("method").is_some() && frame.get("id").is_none() {
            continue;
        }
        if frame["id"] == "fuzz-final-ping" {
            ping_answer = Some(frame.clone());
        }
        if let Err(p) = owed.settle(&frame)
            && problems.len() < 20
        {
            problems.push(p);
        }
    }
    eprintln!("fuzz: all answers in after {:?}", started.elapsed());
    assert!(problems.is_empty(), "{problems:#?}");
    assert_eq!(ping_answer.expect("ping answered")["result"], json!({}));

    let peak_kb = stress::proc_status_kb(pid, "VmHWM").expect("read VmHWM");
    // The bound: the 5k-file tier's whole peak budget (an index far larger than this tiny
    // workspace) plus four copies of the largest frame (the line buffer at its doubled
    // capacity, the UTF-8 string, the parsed value) plus 16 MiB for the debug build's heap
    // and the blocking pool's thread stacks.
    let budget_kb = stress::budget_kb("/tiers/5k/peak_rss_kb")
        + 4 * (MAX_FRAME_BYTES as u64 / 1024)
        + 16 * 1024;
    eprintln!("fuzz: peak RSS {peak_kb} KiB (bound {budget_kb} KiB)");
    assert!(
        peak_kb <= budget_kb,
        "peak RSS {peak_kb} KiB over the bound {budget_kb} KiB"
    );

    let (rest, status) = server.finish(Duration::from_secs(30));
    let answers: Vec<&Value> = rest.iter().filter(|f| f.get("method").is_none()).collect();
    assert!(
        answers.is_empty(),
        "answers after the last one owed: {answers:?}"
    );
    assert_eq!(status, Some(0), "exit status after EOF");
}
