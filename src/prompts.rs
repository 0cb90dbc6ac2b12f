//! MCP prompts: the common workflows as messages that name the tools to call — trace an RPC end
//! to end, the impact of changing a contract, an onboarding summary of a service. A prompt
//! holds no index data itself (the tools fetch it when the agent runs them), so `prompts/get`
//! never waits for the index.

use serde_json::{Map, Value, json};

/// One prompt: name, title, description, arguments (name, description, required), and the
/// message text with `{argument}` placeholders.
struct Prompt {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    arguments: &'static [(&'static str, &'static str, bool)],
    text: &'static str,
}

const PROMPTS: [Prompt; 3] = [
    Prompt {
        name: "trace_rpc",
        title: "Trace an RPC end to end",
        description: "Who defines, serves and calls one gRPC method or service, across languages, and whether its .proto changed on the wire.",
        arguments: &[
            (
                "rpc",
                "The RPC or service, e.g. OrderService.CreateOrder.",
                true,
            ),
            (
                "base",
                "Git revision for the wire-format check, e.g. origin/main (optional).",
                false,
            ),
        ],
        text: "Trace the gRPC RPC `{rpc}` end to end in this workspace.\n\
1. Call analyze_grpc with {\"target\": \"{rpc}\"{base_arg}} for its .proto definition, server handlers and client call sites per language, and the wire-format check.\n\
2. Call analyze_impact with {\"target\": \"{rpc}\"} for every handler and caller, INTERNAL or EXTERNAL to the owning service.\n\
3. Open the handler and two or three callers at their path:line to confirm what the index says; rows marked heuristic or ambiguous deserve a look.\n\
Summarise: where it is defined, who serves it, who calls it (by service), and any breaking wire-format finding.",
    },
    Prompt {
        name: "change_impact",
        title: "Impact of changing a contract",
        description: "What breaks if an RPC, topic, route or shared package changes: affected services with path:line evidence and a risk per service.",
        arguments: &[
            (
                "target",
                "The RPC, topic, HTTP route or package to change, e.g. orders.created or GET /orders/{id}.",
                true,
            ),
            (
                "depth",
                "Hops through consumers that re-emit, 1-5 (optional, default 2).",
                false,
            ),
        ],
        text: "I plan to change `{target}`. Tell me what it affects before I do.\n\
1. Call analyze_impact with {\"target\": \"{target}\", \"depth\": {depth}} and page through all rows (use nextOffset).\n\
2. If it is a package, module or type, call find_dependents with {\"target\": \"{target}\"}; if it is an RPC, call analyze_grpc with {\"target\": \"{target}\"} as well.\n\
3. If the change already exists on this branch, call analyze_changes for the diff's verdict.\n\
List the EXTERNAL rows first, grouped by service, each with its path:line, and say which of them would break and which only need a review.",
    },
    Prompt {
        name: "onboard_service",
        title: "Onboarding summary of a service",
        description: "A newcomer's summary of one service: its contracts, who it talks to, what the docs say, and where to start reading.",
        arguments: &[("service", "The service, e.g. services/orders.", true)],
        text: "Give me an onboarding summary of the service `{service}`.\n\
1. Call visualize_mesh with {\"service\": \"{service}\"} for its contracts (gRPC, HTTP routes, topics) and the services it talks to.\n\
2. Call search_docs with {\"query\": \"{service}\"} for ADRs and READMEs that mention it.\n\
3. Call smart_search with {\"query\": \"main\", \"scope\": \"{service}\"} (or a name from step 1) to find its entry points.\n\
4. Call index_status if anything looks empty, to tell whether the zero is trustworthy.\n\
Summarise in a page: what it does, what it exposes, what it depends on, and five files to read first (path:line).",
    },
];

/// The conformance suite's fixture prompts (`MESH_TEST_FIXTURES=1` only).
const FIXTURES: [Prompt; 3] = [
    Prompt {
        name: "test_simple_prompt",
        title: "Simple prompt (conformance fixture)",
        description: "Conformance fixture: a prompt without arguments.",
        arguments: &[],
        text: "This is a simple prompt for testing.",
    },
    Prompt {
        name: "test_prompt_with_arguments",
        title: "Prompt with arguments (conformance fixture)",
        description: "Conformance fixture: a prompt with two arguments.",
        arguments: &[
            ("arg1", "First test argument", true),
            ("arg2", "Second test argument", true),
        ],
        text: "Prompt with arguments: arg1='{arg1}', arg2='{arg2}'",
    },
    Prompt {
        name: "test_prompt_with_embedded_resource",
        title: "Prompt with an embedded resource (conformance fixture)",
        description: "Conformance fixture: a prompt that embeds a resource.",
        arguments: &[("resourceUri", "URI of the resource to embed", true)],
        text: "Please process the embedded resource above.",
    },
];

fn all() -> impl Iterator<Item = &'static Prompt> {
    let fixtures: &'static [Prompt] = if crate::isolate::fixtures_enabled() {
        &FIXTURES
    } else {
        &[]
    };
    PROMPTS.iter().chain(fixtures)
}

/// The `prompts/list` result (`title` from 2025-06-18).
pub fn list(with_title: bool) -> Value {
    let prompts: Vec<Value> = all()
        .map(|p| {
            let args: Vec<Value> = p
                .arguments
                .iter()
                .map(|(name, description, required)| {
                    json!({"name": name, "description": description, "required": required})
                })
                .collect();
            let mut v = json!({"name": p.name, "description": p.description, "arguments": args});
            if with_title {
                v["title"] = json!(p.title);
            }
            v
        })
        .collect();
    json!({ "prompts": prompts })
}

/// The names of a prompt's arguments, for completion (`None` for an unknown prompt).
pub fn argument_names(prompt: &str) -> Option<Vec<&'static str>> {
    all()
        .find(|p| p.name == prompt)
        .map(|p| p.arguments.iter().map(|a| a.0).collect())
}

/// A value as a prompt quotes it, in JSON examples and code spans: one line, without quotes,
/// backticks or backslashes breaking out, control characters flattened.
fn clean(value: &str) -> String {
    value
        .chars()
        .map(|c| {
            if matches!(c, '"' | '`' | '\\') || c.is_control() {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// `template` with each `{key}` of `values` replaced, in one pass; other braces (the JSON
/// examples) are kept.
fn render(template: &str, values: &[(&str, String)]) -> String {
    let mut out = String::with_capacity(template.len() + 256);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let hit = after.find('}').and_then(|close| {
            let key = &after[..close];
            values
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| (v, close))
        });
        match hit {
            Some((v, close)) => {
                out.push_str(v);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The longest prompt argument accepted, in bytes.
const MAX_ARGUMENT_BYTES: usize = 512;

/// The `prompts/get` result, or an error message (unknown prompt, a missing, wrongly typed,
/// too long or out-of-range argument).
pub fn get(params: Option<&Value>) -> Result<Value, String> {
    let name = params
        .and_then(|p| p.get("name"))
        .and_then(Value::as_str)
        .ok_or("Invalid params for prompts/get: \"name\" must be a prompt name string")?;
    let Some(p) = all().find(|p| p.name == name) else {
        return Err(format!(
            "Invalid params: unknown prompt {}. Call prompts/list for the available prompts.",
            crate::protocol::echo_name(name)
        ));
    };
    let empty = Map::new();
    let given = match params.and_then(|p| p.get("arguments")) {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(m)) => m,
        Some(_) => {
            return Err(format!(
                "Invalid params for prompts/get: \"arguments\" must be an object of strings, e.g. \
{{\"{}\": \"…\"}}",
                p.arguments.first().map_or("name", |a| a.0)
            ));
        }
    };
    let allowed: Vec<&str> = p.arguments.iter().map(|a| a.0).collect();
    // An argument names one RPC, target or service: a string of a line at most, never an
    // amplifier (each is quoted several times into the messages).
    for (arg, v) in given {
        if !allowed.contains(&arg.as_str()) {
            return Err(format!(
                "Invalid params for prompts/get: {} takes no argument \"{}\"; its arguments are {}",
                p.name,
                crate::protocol::echo_input(arg),
                if allowed.is_empty() {
                    "none".to_string()
                } else {
                    allowed
                        .iter()
                        .map(|a| format!("\"{a}\""))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ));
        }
        let Some(text) = v.as_str() else {
            return Err(format!(
                "Invalid params for prompts/get: argument \"{arg}\" must be a string, not {}",
                match v {
                    Value::Null => "null",
                    Value::Bool(_) => "a boolean",
                    Value::Number(_) => "a number",
                    Value::Array(_) => "an array",
                    _ => "an object",
                }
            ));
        };
        if text.len() > MAX_ARGUMENT_BYTES {
            return Err(format!(
                "Invalid params for prompts/get: argument \"{arg}\" is {} bytes; at most {MAX_ARGUMENT_BYTES} (a name, not a document)",
                text.len()
            ));
        }
    }
    // Every placeholder's value, then one pass over the template: a value is never read again
    // as a template, so a value holding `{other}` stays as typed.
    let mut values: Vec<(&str, String)> = Vec::new();
    for (arg, _, required) in p.arguments {
        let value = given.get(*arg).and_then(Value::as_str).map(str::trim);
        let value = match value.filter(|v| !v.is_empty()) {
            Some(v) => v,
            None if *required => {
                return Err(format!(
                    "Invalid params for prompts/get: {} needs the argument \"{arg}\"",
                    p.name
                ));
            }
            None => "",
        };
        match *arg {
            "base" => {
                let rendered = if value.is_empty() {
                    String::new()
                } else {
                    format!(", \"base\": \"{}\"", clean(value))
                };
                values.push(("base_arg", rendered));
            }
            "depth" => {
                let depth = if value.is_empty() {
                    2
                } else {
                    value
                        .parse::<u64>()
                        .ok()
                        .filter(|d| (1..=5).contains(d))
                        .ok_or_else(|| {
                            format!(
                                "Invalid params for prompts/get: argument \"depth\" must be a whole number from 1 to 5 (default 2), not {}",
                                crate::protocol::echo_input(value)
                            )
                        })?
                };
                values.push(("depth", depth.to_string()));
            }
            _ => values.push((arg, clean(value))),
        }
    }
    if p.text.contains("{base_arg}") && !values.iter().any(|(k, _)| *k == "base_arg") {
        values.push(("base_arg", String::new()));
    }
    if p.text.contains("{depth}") && !values.iter().any(|(k, _)| *k == "depth") {
        values.push(("depth", "2".into()));
    }
    let text = render(p.text, &values);
    let mut messages = Vec::new();
    if p.name == "test_prompt_with_embedded_resource" {
        let uri = given
            .get("resourceUri")
            .and_then(Value::as_str)
            .unwrap_or("");
        messages.push(json!({"role": "user", "content": {"type": "resource", "resource": {
            "uri": uri, "mimeType": "text/plain", "text": "Embedded resource content for testing."}}}));
    }
    messages.push(json!({"role": "user", "content": {"type": "text", "text": text}}));
    Ok(json!({"description": p.description, "messages": messages}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_expand_their_arguments_and_name_the_tools() {
        let r = get(Some(&json!({"name": "trace_rpc", "arguments": {"rpc": "OrderService.CreateOrder", "base": "main"}}))).unwrap();
        let text = r["messages"][0]["content"]["text"].as_str().unwrap();
        assert!(
            text.contains("{\"target\": \"OrderService.CreateOrder\", \"base\": \"main\"}"),
            "{text}"
        );
        assert!(text.contains("analyze_grpc") && text.contains("analyze_impact"));
        let r = get(Some(
            &json!({"name": "change_impact", "arguments": {"target": "orders.created"}}),
        ))
        .unwrap();
        let text = r["messages"][0]["content"]["text"].as_str().unwrap();
        assert!(
            text.contains("\"depth\": 2") && !text.contains("{target}"),
            "{text}"
        );
        assert!(
            get(Some(&json!({"name": "trace_rpc"})))
                .unwrap_err()
                .contains("\"rpc\"")
        );
        assert!(get(Some(&json!({"name": "nope"}))).is_err());
        assert!(list(true)["prompts"].as_array().unwrap().len() >= 3);
        assert_eq!(argument_names("onboard_service"), Some(vec!["service"]));
    }

    #[test]
    fn arguments_are_bounded_typed_and_in_range() {
        let get_with =
            |args: Value| get(Some(&json!({"name": "change_impact", "arguments": args})));
        let long = "x".repeat(MAX_ARGUMENT_BYTES + 1);
        let e = get_with(json!({"target": long})).unwrap_err();
        assert!(e.contains("at most 512"), "{e}");
        let e = get_with(json!({"target": 5})).unwrap_err();
        assert!(e.contains("must be a string, not a number"), "{e}");
        for bad in ["9", "0", "two", "３"] {
            let e = get_with(json!({"target": "t", "depth": bad})).unwrap_err();
            assert!(e.contains("from 1 to 5"), "{bad}: {e}");
        }
        let ok = get_with(json!({"target": "a`b\nc", "depth": "3"})).unwrap();
        let text = ok["messages"][0]["content"]["text"].as_str().unwrap();
        assert!(
            text.contains("\"depth\": 3") && text.contains("a b c"),
            "{text}"
        );
        // A value is substituted once: placeholders in it stay as typed.
        let r = get(Some(&json!({"name": "trace_rpc", "arguments": {"rpc": "{base_arg}{rpc}", "base": "{rpc}\\"}}))).unwrap();
        let text = r["messages"][0]["content"]["text"].as_str().unwrap();
        assert!(
            text.contains("`{base_arg}{rpc}`") && text.contains("\"base\": \"{rpc} \""),
            "{text}"
        );
        // Unknown arguments are refused, naming the allowed ones.
        let e = get_with(json!({"target": "t", "rpc": "x"})).unwrap_err();
        assert!(
            e.contains("\"rpc\"") && e.contains("\"target\", \"depth\""),
            "{e}"
        );
        let e = get(Some(&json!({"name": "trace_rpc", "arguments": ["rpc"]}))).unwrap_err();
        assert!(e.contains("must be an object"), "{e}");
        // The largest answer stays small whatever the arguments.
        let big = "y".repeat(MAX_ARGUMENT_BYTES);
        let r = get_with(json!({"target": big})).unwrap();
        assert!(r.to_string().len() < 8 * 1024);
    }
}
