//! The tool registry: one file per tool (its arguments, its run, its truncation hint), a table
//! that lists them in a deterministic order, strict argument decoding, and the central cap.
//!
//! A tool is plain data in, plain data out: [`ToolDef::run`] takes the decoded JSON arguments
//! and a [`ToolEnv`] (the snapshot and the workspace) and returns a [`ToolOutput`]. A tool's own
//! failure (bad argument values, a path outside the roots) is an output with `is_error: true`
//! and a message that names the problem and the fix — never a protocol error.

pub mod analyze_changes;
pub mod analyze_grpc;
pub mod analyze_impact;
pub mod find_dependents;
pub mod fixtures;
pub mod index_status;
pub mod search_docs;
pub mod smart_search;
pub mod snippet;
pub mod structured;
pub mod visualize_mesh;
pub mod wire_check;

use std::sync::OnceLock;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::index::snapshot::Snapshot;
use crate::server::Shared;

/// What a tool sees while it runs.
pub struct ToolEnv<'a> {
    /// Process-wide state: workspace, index handle, configuration.
    pub shared: &'a Shared,
    /// The snapshot this call answers from (`None` only for tools that do not need the index).
    pub snapshot: Option<&'a Snapshot>,
    /// Whether the answer carries `structuredContent` (MCP 2025-06-18 and later, and
    /// `mesh-mcp query --json`); without it [`invoke`] drops the tool's data.
    pub structured: bool,
}

/// What a tool returns: Markdown text plus what the audit trail records about the call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutput {
    pub text: String,
    pub is_error: bool,
    /// Workspace-relative paths the answer read or cites (for the audit trail).
    pub files_accessed: Vec<String>,
    /// Secret values masked in this answer.
    pub redactions: u32,
    /// The same facts as the text, for `structuredContent` (see [`structured`]).
    pub data: Option<Value>,
    /// Every string of `data` already passed [`structured::clean_str`] (the tool cleaned its
    /// rows as it built them, sharing the masking with its text), so [`invoke`] skips the
    /// walk over the data; debug builds check the claim.
    pub data_clean: bool,
    /// Content blocks after the text (only the conformance fixture `test_embedded_resource`
    /// has one: every product tool answers text).
    pub more_content: Vec<Value>,
}

impl ToolOutput {
    /// A successful answer.
    pub fn ok(text: String) -> ToolOutput {
        ToolOutput {
            text,
            ..ToolOutput::default()
        }
    }

    /// This answer with its structured data.
    pub fn with_data(mut self, data: Value) -> ToolOutput {
        self.data = Some(data);
        self
    }

    /// A tool-level failure (`isError: true`).
    pub fn error(text: String) -> ToolOutput {
        ToolOutput {
            text,
            is_error: true,
            ..ToolOutput::default()
        }
    }
}

/// The static description and entry points of one tool.
pub struct ToolDef {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// The JSON Schema of the arguments (always `additionalProperties: false`).
    pub input_schema: fn() -> Value,
    /// What the tool adds to the shared output schema ([`structured::schema`]); `None` for
    /// the test fixtures, which answer text only.
    pub output_schema: Option<structured::Shape>,
    pub run: fn(&Value, &ToolEnv) -> ToolOutput,
    /// The hint the central cap appends when this tool's answer had to be cut.
    pub truncation_hint: fn(&Value) -> String,
    /// Whether the call waits for the first index generation before it runs.
    pub index: IndexUse,
}

/// How a tool depends on the first index generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexUse {
    /// Answers without the index: never waits.
    None,
    /// Waits for the first snapshot (bounded); on timeout the answer is a "still indexing" error.
    Required,
    /// Waits like [`IndexUse::Required`] unless the arguments say `"wait": false`; on timeout
    /// it runs anyway and reports the progress (`index_status`).
    Status,
}

impl IndexUse {
    /// True when a call with these arguments should wait for the first snapshot.
    pub fn waits(self, args: &Value) -> bool {
        match self {
            IndexUse::None => false,
            IndexUse::Required => true,
            IndexUse::Status => args.get("wait").and_then(Value::as_bool) != Some(false),
        }
    }
}

/// True when a call of `def` with these arguments is cheap enough to run inline on the
/// session's thread once the index is in memory (standalone sessions do; see
/// `server::Ctx::request`): bounded work over the snapshot, at most a page of file reads for
/// snippets, no full-text scan (`fuzzy`), no git (`base`), no HTML page. Everything else runs on
/// the blocking pool, so a slow call never delays a `ping`.
pub fn runs_inline(def: &ToolDef, args: &Value) -> bool {
    let set = |key: &str| {
        args.get(key)
            .is_some_and(|v| !v.is_null() && v != &Value::Bool(false))
    };
    match def.name {
        "smart_search" => !set("fuzzy"),
        "analyze_grpc" => !set("base"),
        "find_dependents" | "analyze_impact" | "search_docs" | "index_status" => true,
        _ => false,
    }
}

/// What the audit trail records about how a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The tool ran and answered normally.
    Answered,
    /// The tool ran and answered with `isError` (bad argument, path outside the roots, …).
    Failed,
    /// A stop rule refused the call before the tool ran.
    Refused,
}

/// Runs one tool call the way every front end must: stop rules first (the subject is the
/// call's `target`, `query`, `scope` or `service`), then the tool (again with a smaller page
/// when its text and data together pass the cap), then secret masking by value shape over its
/// text, then the central 48 KiB cap. The MCP session and `mesh-mcp query` both go through here, so they cannot drift.
pub fn invoke(def: &ToolDef, args: &Value, env: &ToolEnv) -> (ToolOutput, Outcome) {
    let policy = &env.shared.config.policy;
    if policy.mode != "allow_all" && !policy.stop_rules.is_empty() {
        let mode = policy
            .mode
            .parse::<crate::security::GovernanceMode>()
            .unwrap_or_default();
        let rules = crate::security::StopRules::new(policy.stop_rules.clone());
        let subject = ["target", "query", "scope", "service"]
            .iter()
            .filter_map(|k| args.get(*k).and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" ");
        if let crate::security::Decision::Refuse(refusal) =
            crate::security::decide(mode, &rules, def.name, &subject)
        {
            return (ToolOutput::error(refusal.to_text()), Outcome::Refused);
        }
    }
    let mut out = (def.run)(args, env);
    let paged = def.output_schema.as_ref().is_some_and(|s| s.paged);
    let mut data_len = None;
    if env.structured && paged {
        // Text and data together within the cap, on one page (see `structured::fit`).
        (out, data_len) = structured::fit(out, args, |smaller| (def.run)(smaller, env));
    }
    // Secrets of a known shape are masked in every tool's text, whatever showed them.
    let (masked, shaped) = crate::security::mask_shapes(&out.text);
    if shaped > 0 {
        out.text = masked.into_owned();
        out.redactions = out.redactions.saturating_add(shaped);
    }
    // The data passes the same masking, and the cap covers text and data together.
    let mut text_budget = crate::render::MAX_OUTPUT_BYTES;
    if !env.structured || out.is_error {
        out.data = None;
    }
    let text_len = out.text.len();
    if let Some(data) = out.data.as_mut() {
        if out.data_clean {
            debug_assert!(structured::is_clean(data), "{}: data not clean", def.name);
        } else {
            let n = structured::clean(data);
            out.redactions = out.redactions.saturating_add(n);
            // Masking may have changed the data's length.
            data_len = None;
        }
        text_budget = structured::cap(data, paged, text_len, data_len);
    }
    out.text =
        crate::render::cap_output_within(out.text, &(def.truncation_hint)(args), text_budget);
    let outcome = if out.is_error {
        Outcome::Failed
    } else {
        Outcome::Answered
    };
    (out, outcome)
}

/// The default hint of the central cap.
pub fn default_hint(_args: &Value) -> String {
    "Narrow the question: pass a more specific target or scope.".to_string()
}

/// The tools this process serves, in the order `tools/list` shows them.
pub struct Registry {
    tools: Vec<&'static ToolDef>,
}

impl Registry {
    /// The product tools, plus the test fixtures when `MESH_TEST_FIXTURES=1` (used by the
    /// integration tests and the conformance suite only).
    pub fn standard() -> Registry {
        let mut tools: Vec<&'static ToolDef> = vec![
            &smart_search::TOOL,
            &find_dependents::TOOL,
            &analyze_grpc::TOOL,
            &analyze_impact::TOOL,
            &analyze_changes::TOOL,
            &search_docs::TOOL,
            &visualize_mesh::TOOL,
            &index_status::TOOL,
        ];
        if std::env::var("MESH_TEST_FIXTURES").is_ok_and(|v| v == "1") {
            tools.extend(fixtures::TOOLS.iter());
        }
        Registry { tools }
    }

    /// Looks a tool up by name.
    pub fn get(&self, name: &str) -> Option<&'static ToolDef> {
        self.tools.iter().copied().find(|t| t.name == name)
    }

    /// All tools, in listing order.
    pub fn all(&self) -> &[&'static ToolDef] {
        &self.tools
    }

    /// The `tools` array of a `tools/list` result, with fields gated by protocol version
    /// (`title` from 2025-06-18, `annotations` from 2025-03-26).
    pub fn list_json(&self, version: &str) -> Value {
        let with_title = crate::protocol::version_at_least(version, "2025-06-18");
        let with_annotations = crate::protocol::version_at_least(version, "2025-03-26");
        let tools: Vec<Value> = self
            .tools
            .iter()
            .map(|t| {
                let mut obj = serde_json::Map::new();
                obj.insert("name".into(), json!(t.name));
                if with_title {
                    obj.insert("title".into(), json!(t.title));
                }
                obj.insert("description".into(), json!(t.description));
                obj.insert("inputSchema".into(), schema_of(t, false));
                if with_title && t.output_schema.is_some() {
                    obj.insert("outputSchema".into(), schema_of(t, true));
                }
                if with_annotations {
                    // `destructiveHint` means nothing for a read-only tool, and the title is
                    // the tool's own from 2025-06-18: both left out to keep the list small.
                    let mut a = json!({
                        "readOnlyHint": true,
                        "idempotentHint": true,
                        "openWorldHint": false,
                    });
                    if !with_title {
                        a["title"] = json!(t.title);
                    }
                    obj.insert("annotations".into(), a);
                }
                Value::Object(obj)
            })
            .collect();
        Value::Array(tools)
    }
}

/// The input (or output) schema of a tool, built once per process.
pub fn schema_of(t: &ToolDef, output: bool) -> Value {
    type Cache = std::sync::Mutex<Vec<(&'static str, bool, Value)>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let build = || match (output, &t.output_schema) {
        (false, _) => (t.input_schema)(),
        (true, Some(shape)) => structured::schema(shape),
        (true, None) => Value::Null,
    };
    let cache = CACHE.get_or_init(Default::default);
    if let Ok(mut c) = cache.lock() {
        if let Some((_, _, v)) = c.iter().find(|(n, o, _)| *n == t.name && *o == output) {
            return v.clone();
        }
        let v = build();
        c.push((t.name, output, v.clone()));
        return v;
    }
    build()
}

/// [`decode`], then the snapshot the call answers from: the opening of every tool that needs
/// the index, so each states it once.
pub fn decode_indexed<'a, T: DeserializeOwned>(
    tool: &str,
    args: &Value,
    env: &ToolEnv<'a>,
) -> Result<(T, &'a Snapshot), ToolOutput> {
    let args = decode(tool, args)?;
    let Some(snap) = env.snapshot else {
        return Err(ToolOutput::error("the index is not ready".into()));
    };
    Ok((args, snap))
}

/// Decodes a tool's arguments strictly (unknown fields are errors naming the field). A `_meta`
/// member inside the arguments is accepted and ignored (older clients put trace context there).
pub fn decode<T: DeserializeOwned>(tool: &str, args: &Value) -> Result<T, ToolOutput> {
    let mut args = args.clone();
    if let Value::Object(map) = &mut args {
        map.remove("_meta");
        // JSON Schema's `integer` accepts `100.0` and `1e2`: a number with no fraction is one.
        for v in map.values_mut() {
            if let Some(f) = v.as_f64().filter(|f| v.is_f64() && f.fract() == 0.0)
                && f.abs() < 9.0e15
            {
                *v = Value::from(f as i64);
            }
        }
    }
    T::deserialize(&args).map_err(|e| {
        let e = e.to_string();
        let culprit = culprit_member::<T>(&args, &e);
        let e = crate::protocol::echo_quoted(&plain_types(&e));
        let field = culprit.map_or(String::new(), |k| {
            format!("`{}`: ", crate::protocol::echo_input(&k))
        });
        ToolOutput::error(format!(
            "Invalid arguments for {tool}: {field}{e}. Call tools/list for the accepted arguments."
        ))
    })
}

/// The member of `args` a decoding error is about, when the message does not name it (a wrong
/// type): the one whose removal makes the error go away or become "missing field `k`".
fn culprit_member<T: DeserializeOwned>(args: &Value, error: &str) -> Option<String> {
    if error.starts_with("unknown field") || error.starts_with("missing field") {
        return None; // serde names the field itself
    }
    let map = args.as_object()?;
    map.keys()
        .find(|k| {
            let mut without = map.clone();
            without.remove(*k);
            match serde_json::from_value::<T>(Value::Object(without)) {
                Ok(_) => true,
                Err(e) => e.to_string().starts_with(&format!("missing field `{k}`")),
            }
        })
        .cloned()
}

/// serde's Rust type names in an error message said in JSON's words.
fn plain_types(error: &str) -> String {
    let mut e = error.to_string();
    for (rust, json) in [
        ("expected i64", "expected an integer"),
        ("expected u64", "expected a non-negative integer"),
        ("expected u32", "expected a non-negative integer"),
        ("expected usize", "expected a non-negative integer"),
        ("expected i32", "expected an integer"),
        ("expected f64", "expected a number"),
        (
            "invalid number",
            "not a number this argument accepts (a whole number within the range its schema \
             states)",
        ),
    ] {
        e = e.replace(rust, json);
    }
    e
}

/// Where a tool looks: every root, or one root (optionally below a directory of it).
pub struct Scope {
    /// How the answer names the scope (`* (all roots)` or the path as given).
    pub label: String,
    /// `None` = all roots; else (root index, root-relative directory prefix, "" for the root).
    pub within: Option<(usize, String)>,
}

impl Scope {
    /// Every root.
    pub fn everything() -> Scope {
        Scope {
            label: "* (all roots)".into(),
            within: None,
        }
    }

    /// True when files of this root can be in scope.
    pub fn includes_root(&self, root: usize) -> bool {
        self.within.as_ref().is_none_or(|(r, _)| *r == root)
    }

    /// True when this root-relative file path is in scope.
    pub fn includes_file(&self, root: usize, path: &str) -> bool {
        match &self.within {
            None => true,
            Some((r, prefix)) => {
                *r == root
                    && (prefix.is_empty()
                        || path == prefix
                        || path
                            .strip_prefix(prefix.as_str())
                            .is_some_and(|rest| rest.starts_with('/')))
            }
        }
    }
}

/// Resolves a `scope` argument through the path jail. Omitted, `.`, `./`, `*` and the workspace
/// directory itself mean every root.
pub fn resolve_scope(env: &ToolEnv, raw: Option<&str>) -> Result<Scope, ToolOutput> {
    // A scope spelled exactly as a root's label (`services/orders`, the usual case) is that
    // root: no path to resolve. The jail's two canonicalisations cost a `readlink` per path
    // component, ~60 µs of a 5k `smart_search`. Only the index is filtered by a scope, and
    // the label and the root's canonical path come from the configuration, so nothing a
    // symlink could redirect is involved.
    if let Some(label) = raw.map(|r| r.strip_suffix('/').unwrap_or(r))
        && !matches!(label, "" | "." | "*")
        && let Some(i) = env
            .shared
            .config
            .roots
            .iter()
            .position(|r| r.label == label)
    {
        return Ok(Scope {
            label: format!("`{}`", raw.unwrap_or_default()),
            within: Some((i, String::new())),
        });
    }
    let jail = &env.shared.jail;
    let Some(raw) = raw.filter(|r| !jail.is_workspace_spelling(r)) else {
        return Ok(Scope {
            label: "* (all roots)".into(),
            within: None,
        });
    };
    let resolved = jail
        .resolve(raw)
        .map_err(|e| ToolOutput::error(format!("{e}")))?;
    let root = &jail.roots()[resolved.root_index];
    let rel = resolved
        .path
        .strip_prefix(root)
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_default();
    Ok(Scope {
        label: crate::render::inline_code(raw),
        within: Some((resolved.root_index, rel)),
    })
}

/// The largest `offset` any listing accepts.
pub const MAX_OFFSET: i64 = 1_000_000;

/// The `limit` (in `1..=max_limit`, `default_limit` when absent) and `offset` (in
/// `0..=MAX_OFFSET`, 0 when absent) of a paged tool; the error names the first out of range.
pub fn page_args(
    tool: &str,
    limit: Option<i64>,
    default_limit: i64,
    max_limit: i64,
    offset: Option<i64>,
) -> Result<(usize, usize), ToolOutput> {
    let limit = in_range(tool, "limit", limit, default_limit, 1, max_limit)?;
    let offset = in_range(tool, "offset", offset, 0, 0, MAX_OFFSET)?;
    Ok((limit, offset))
}

/// An optional integer argument checked against `min..=max` (`default` when absent). A value
/// outside the range is an `isError` answer naming the argument, the range and the default,
/// never silently clamped (the input schemas state the same `minimum`, `maximum`, `default`).
pub fn in_range(
    tool: &str,
    name: &str,
    value: Option<i64>,
    default: i64,
    min: i64,
    max: i64,
) -> Result<usize, ToolOutput> {
    let v = value.unwrap_or(default);
    if (min..=max).contains(&v) {
        return Ok(usize::try_from(v).unwrap_or(0));
    }
    Err(ToolOutput::error(format!(
        "Invalid arguments for {tool}: `{name}` is {v}, outside its range {min}–{max}. Pass a \
value from {min} to {max}, or omit it for the default {default}."
    )))
}

/// A text argument as the client sent it, or `""`: for truncation hints, which quote what was
/// asked (`args` is the raw, undecoded object).
pub(crate) fn text_arg<'a>(args: &'a Value, name: &str) -> &'a str {
    args.get(name).and_then(Value::as_str).unwrap_or("")
}

/// The JSON Schema of an integer argument with its range and default.
pub fn int_schema(description: &str, default: i64, min: i64, max: i64) -> Value {
    json!({
        "type": "integer",
        "description": description,
        "minimum": min,
        "maximum": max,
        "default": default,
    })
}

/// An object schema with the given properties and required names, closed to other fields.
pub fn object_schema(properties: Value, required: &[&str]) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
    });
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

/// Runs a tool's `run` on `args` against `snap`, with the zero configuration of a workspace
/// that does not exist: the one scaffold of the tools' unit tests.
#[cfg(test)]
pub(crate) fn run_on(
    run: fn(&Value, &ToolEnv) -> ToolOutput,
    snap: &Snapshot,
    args: &Value,
) -> ToolOutput {
    let config = crate::config::zero_config(std::path::Path::new("/nonexistent-mesh-test"));
    let shared = Shared::new(
        std::sync::Arc::new(config),
        crate::index::snapshot::IndexHandle::new(),
    );
    let env = ToolEnv {
        shared: &shared,
        snapshot: Some(snap),
        structured: false,
    };
    run(args, &env)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        query: String,
        limit: Option<i64>,
    }

    #[test]
    fn decode_is_strict_and_names_the_field() {
        let err = decode::<Args>("smart_search", &json!({"query": "x", "limt": 3})).unwrap_err();
        assert!(err.is_error);
        assert!(err.text.contains("limt"), "{}", err.text);
        assert!(decode::<Args>("t", &json!({"query": "x", "_meta": {"a": 1}})).is_ok());
        let err = decode::<Args>("t", &json!({"limit": 3})).unwrap_err();
        assert!(err.text.contains("query"), "{}", err.text);
    }

    #[test]
    fn out_of_range_is_an_error_naming_the_range() {
        assert_eq!(in_range("t", "limit", None, 20, 1, 100).unwrap(), 20);
        assert_eq!(in_range("t", "limit", Some(100), 20, 1, 100).unwrap(), 100);
        for bad in [0, -5, 101, i64::MAX] {
            let e = in_range("t", "limit", Some(bad), 20, 1, 100).unwrap_err();
            assert!(e.is_error);
            assert!(
                e.text.contains("`limit`") && e.text.contains("1–100"),
                "{}",
                e.text
            );
        }
    }

    #[test]
    fn decoding_errors_name_the_argument_and_integral_floats_are_integers() {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct A {
            query: String,
            limit: Option<i64>,
        }
        let a: A = decode("t", &serde_json::json!({"query": "q", "limit": 100.0})).unwrap();
        assert_eq!(a.limit, Some(100));
        let a: A = decode("t", &serde_json::json!({"query": "q", "limit": 1e2})).unwrap();
        assert_eq!(a.limit, Some(100));
        for bad in [serde_json::json!("5"), serde_json::json!(5.5)] {
            let e = decode::<A>("t", &serde_json::json!({"query": "q", "limit": bad}))
                .err()
                .unwrap();
            assert!(e.is_error);
            assert!(e.text.contains("`limit`: "), "{}", e.text);
            assert!(!e.text.contains("i64"), "{}", e.text);
        }
        // A client's value or field name is echoed bounded.
        let huge = "z".repeat(5000);
        let e = decode::<A>("t", &serde_json::json!({"query": "q", "limit": huge}))
            .err()
            .unwrap();
        assert!(e.text.len() < 400 && e.text.contains("…"), "{}", e.text);
        let e = decode::<A>("t", &serde_json::json!({"query": "q", huge.clone(): 1}))
            .err()
            .unwrap();
        assert!(
            e.text.len() < 400 && e.text.contains("`query`"),
            "{}",
            e.text
        );
        // serde names unknown and missing fields itself, once.
        let e = decode::<A>("t", &serde_json::json!({"limit": 1}))
            .err()
            .unwrap();
        assert!(e.text.contains("missing field `query`"), "{}", e.text);
        assert!(!e.text.contains("`query`: "), "{}", e.text);
    }

    #[test]
    fn every_integer_argument_states_its_range() {
        for t in Registry::standard().all() {
            let s = (t.input_schema)();
            for (name, p) in s["properties"].as_object().unwrap() {
                if p["type"] == "integer" && !t.name.starts_with("test_") {
                    for k in ["minimum", "maximum", "default"] {
                        assert!(p.get(k).is_some(), "{}.{name} has no {k}", t.name);
                    }
                }
            }
        }
    }

    #[test]
    fn every_schema_is_closed() {
        for t in Registry::standard().all() {
            let s = (t.input_schema)();
            assert_eq!(s["type"], "object", "{}", t.name);
            assert_eq!(s["additionalProperties"], false, "{}", t.name);
            assert!(!t.description.is_empty());
        }
    }
}
