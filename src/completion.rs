//! `completion/complete`: values for prompt arguments and resource-template variables, taken
//! from the current index generation ([`crate::resources::names`], and the declared symbol
//! names for a `change_impact` target) and ranked like
//! `smart_search` ranks names: exact (case and `_` aside) > prefix > substring, then shorter,
//! then alphabetical. The server waits for the first index generation like a tool call does
//! (bounded); past the bound the list is empty.

use serde_json::{Value, json};

use crate::index::snapshot::Snapshot;
use crate::resources::Kind;

/// The most values one answer carries (the protocol's limit).
const MAX_VALUES: usize = 100;
/// A suggestion longer than this is no suggestion (nobody types a 1 KiB name); such names are
/// left out of `values` but still counted in `total`.
const MAX_VALUE_BYTES: usize = 1024;
/// The `values` of one answer stop here, so a page of long names stays far below the 48 KiB
/// answer cap; `hasMore` says that more matched.
const MAX_VALUES_BYTES: usize = 32 * 1024;

/// What an argument of a prompt or a template completes to: kinds of names, and whether
/// declared symbol names count too.
fn kinds_of(reference: &Value, argument: &str) -> Result<(Vec<Kind>, bool), String> {
    match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => {
            let name = reference.get("name").and_then(Value::as_str).unwrap_or("");
            let args = crate::prompts::argument_names(name).ok_or_else(|| {
                format!(
                    "Invalid params: unknown prompt {}",
                    crate::protocol::echo_name(name)
                )
            })?;
            if !args.contains(&argument) {
                return Ok((Vec::new(), false));
            }
            Ok(match argument {
                "rpc" => (vec![Kind::Rpc], false),
                // A contract, or a package, module or type (find_dependents' question).
                "target" => (vec![Kind::Rpc, Kind::Topic, Kind::Route], true),
                "service" => (vec![Kind::Service], false),
                _ => (Vec::new(), false),
            })
        }
        Some("ref/resource") => {
            let uri = reference.get("uri").and_then(Value::as_str).unwrap_or("");
            let segment = uri
                .strip_prefix(crate::resources::SCHEME)
                .and_then(|r| r.split_once('/'))
                .map(|(s, _)| s);
            let kinds = Kind::ALL
                .into_iter()
                .filter(|k| Some(k.segment()) == segment)
                .collect();
            Ok((kinds, false))
        }
        _ => Err("Invalid params: ref must be {\"type\": \"ref/prompt\", \"name\": …} or {\"type\": \"ref/resource\", \"uri\": …}".into()),
    }
}

/// `name` with `_` removed and lowercased.
fn bare(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The candidates containing `typed` (case-insensitive), best first.
pub fn rank(candidates: Vec<String>, typed: &str) -> Vec<String> {
    let q = typed.trim().to_lowercase();
    let qb = bare(&q);
    let mut keyed: Vec<(u8, usize, String)> = candidates
        .into_iter()
        .filter_map(|c| {
            let l = c.to_lowercase();
            let rank = if l == q || bare(&l) == qb {
                0
            } else if l.starts_with(&q) {
                1
            } else if l.contains(&q) {
                2
            } else {
                return None;
            };
            Some((rank, c.len(), c))
        })
        .collect();
    crate::order::sort(&mut keyed);
    keyed.dedup_by(|a, b| a.2 == b.2);
    keyed.into_iter().map(|(_, _, c)| c).collect()
}

/// Declared names (sections and properties aside) containing `typed`, case-insensitively;
/// only the matches are copied, so a keystroke on a large workspace costs one pass over the
/// names and no allocation per declaration.
fn symbol_names(snap: &Snapshot, typed: &str, out: &mut Vec<String>) {
    use crate::index::facts::SymbolKind;
    let q = typed.trim().to_lowercase();
    if q.is_empty() {
        return; // every declaration of the workspace is no suggestion
    }
    let mut seen = std::collections::HashSet::new();
    for f in &snap.files {
        for s in f.symbols() {
            if matches!(s.kind, SymbolKind::Section | SymbolKind::Property) {
                continue;
            }
            let n = f.name(s);
            let hit = if n.is_ascii() && q.is_ascii() {
                n.as_bytes()
                    .windows(q.len())
                    .any(|w| w.eq_ignore_ascii_case(q.as_bytes()))
            } else {
                n.to_lowercase().contains(&q)
            };
            if hit && seen.insert(n) {
                out.push(n.to_string());
            }
        }
    }
}

/// The first suggestions of `ranked` that fit one answer: at most [`MAX_VALUES`] values of at
/// most [`MAX_VALUE_BYTES`] each, [`MAX_VALUES_BYTES`] in all.
fn page(ranked: Vec<String>) -> Vec<String> {
    let mut bytes = 0;
    let mut values = Vec::new();
    for v in ranked.into_iter().filter(|v| v.len() <= MAX_VALUE_BYTES) {
        if values.len() == MAX_VALUES || bytes + v.len() > MAX_VALUES_BYTES {
            break;
        }
        bytes += v.len();
        values.push(v);
    }
    values
}

/// The `completion/complete` result.
pub fn complete(snap: Option<&Snapshot>, params: Option<&Value>) -> Result<Value, String> {
    const SHAPE: &str = "send {\"ref\": {\"type\": \"ref/prompt\", \"name\": …} or \
{\"type\": \"ref/resource\", \"uri\": …}, \"argument\": {\"name\": …, \"value\": …}}";
    let field = |path: &str, what: &str| {
        format!("Invalid params for completion/complete: \"{path}\" {what}; {SHAPE}")
    };
    let reference = params
        .and_then(|p| p.get("ref"))
        .ok_or_else(|| field("ref", "is missing"))?;
    if !reference.is_object() {
        return Err(field("ref", "must be an object"));
    }
    let member = |path: &str, key: &str| match reference.get(key) {
        Some(Value::String(_)) => Ok(()),
        None => Err(field(path, "is missing")),
        Some(_) => Err(field(path, "must be a string")),
    };
    member("ref.type", "type")?;
    match reference["type"].as_str() {
        Some("ref/prompt") => member("ref.name", "name")?,
        Some("ref/resource") => member("ref.uri", "uri")?,
        _ => {}
    }
    let argument = params
        .and_then(|p| p.get("argument"))
        .ok_or_else(|| field("argument", "is missing"))?;
    if !argument.is_object() {
        return Err(field("argument", "must be an object"));
    }
    let name = match argument.get("name") {
        Some(Value::String(n)) => n.as_str(),
        None => return Err(field("argument.name", "is missing")),
        Some(_) => return Err(field("argument.name", "must be a string")),
    };
    // An absent value is what a client sends before the first keystroke: nothing typed yet.
    let typed = match argument.get("value") {
        Some(Value::String(v)) => v.as_str(),
        None => "",
        Some(_) => return Err(field("argument.value", "must be a string")),
    };
    if let Some(context) = params.and_then(|p| p.get("context"))
        && !context.is_object()
    {
        return Err(field("context", "must be an object"));
    }
    let (kinds, symbols) = kinds_of(reference, name)?;
    let mut candidates = Vec::new();
    if name == "depth" {
        candidates = (1..=5).map(|d| d.to_string()).collect();
    } else if let Some(snap) = snap {
        for k in kinds {
            candidates.extend(crate::resources::names(snap, k));
        }
        if symbols {
            symbol_names(snap, typed, &mut candidates);
        }
    }
    let ranked = rank(candidates, typed);
    let total = ranked.len();
    let values = page(ranked);
    Ok(json!({"completion": {
        "hasMore": total > values.len(),
        "values": values,
        "total": total,
    }}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_of_values_is_bounded_in_count_and_bytes() {
        let many: Vec<String> = (0..500).map(|i| format!("name{i}")).collect();
        assert_eq!(page(many).len(), MAX_VALUES);
        let long: Vec<String> = (0..100)
            .map(|i| format!("{i}{}", "x".repeat(900)))
            .collect();
        let values = page(long);
        assert!(values.len() < 40, "{}", values.len());
        assert!(values.iter().map(String::len).sum::<usize>() <= MAX_VALUES_BYTES);
        let huge = vec!["y".repeat(MAX_VALUE_BYTES + 1), "ok".to_string()];
        assert_eq!(page(huge), vec!["ok".to_string()]);
    }

    #[test]
    fn ranking_is_exact_then_prefix_then_substring() {
        let names = [
            "CreateOrderRequest",
            "Order",
            "order_created",
            "PlaceOrder",
            "OrderService",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            rank(names, "order"),
            vec![
                "Order",
                "OrderService",
                "order_created",
                "PlaceOrder",
                "CreateOrderRequest"
            ]
        );
        assert_eq!(
            rank(vec!["ORDER_CREATED".into()], "ordercreated"),
            vec!["ORDER_CREATED"]
        );
    }

    #[test]
    fn unknown_references_are_errors_and_unknown_arguments_empty() {
        let p = json!({"ref": {"type": "ref/prompt", "name": "trace_rpc"}, "argument": {"name": "base", "value": "m"}});
        assert_eq!(
            complete(None, Some(&p)).unwrap()["completion"]["values"],
            json!([])
        );
        let p = json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "x", "value": ""}});
        assert!(complete(None, Some(&p)).is_err());
        let p = json!({"ref": {"type": "ref/prompt", "name": "change_impact"}, "argument": {"name": "depth", "value": ""}});
        assert_eq!(complete(None, Some(&p)).unwrap()["completion"]["total"], 5);
    }

    #[test]
    fn wrong_typed_params_name_the_field() {
        let prompt = json!({"type": "ref/prompt", "name": "trace_rpc"});
        for (params, field) in [
            (
                json!({"argument": {"name": "rpc", "value": "x"}}),
                "\"ref\" is missing",
            ),
            (
                json!({"ref": "trace_rpc", "argument": {"name": "rpc", "value": "x"}}),
                "\"ref\" must be an object",
            ),
            (
                json!({"ref": {"name": "trace_rpc"}, "argument": {"name": "rpc", "value": "x"}}),
                "\"ref.type\" is missing",
            ),
            (
                json!({"ref": {"type": "ref/prompt", "name": 3}, "argument": {"name": "rpc", "value": "x"}}),
                "\"ref.name\" must be a string",
            ),
            (
                json!({"ref": {"type": "ref/resource"}, "argument": {"name": "name", "value": "x"}}),
                "\"ref.uri\" is missing",
            ),
            (
                json!({"ref": prompt, "argument": {"name": "rpc", "value": 5}}),
                "\"argument.value\" must be a string",
            ),
            (
                json!({"ref": prompt, "argument": {"value": "x"}}),
                "\"argument.name\" is missing",
            ),
            (
                json!({"ref": prompt, "argument": ["rpc"]}),
                "\"argument\" must be an object",
            ),
            (json!({"ref": prompt}), "\"argument\" is missing"),
        ] {
            let e = complete(None, Some(&params)).unwrap_err();
            assert!(e.contains(field), "{params}: {e}");
        }
        let ok = json!({"ref": prompt, "argument": {"name": "rpc"}});
        assert!(complete(None, Some(&ok)).is_ok());
    }
}
