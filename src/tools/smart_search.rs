//! `smart_search`: where a symbol is declared, ranked exact > prefix > substring, then by kind.
//!
//! The unit of a page is a file: each file appears once, anchored at its best-ranked
//! declaration, so a page of 20 is 20 places to look (this follows the original's folding;
//! an agent wants files to open, not 20 methods of one class).

use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolDef, ToolEnv, ToolOutput, clamp, decode, object_schema};
use crate::index::facts::SymbolKind;
use crate::index::snapshot::{Snapshot, SymbolRef};
use crate::render::inline_code;

/// The tool definition.
pub static TOOL: ToolDef = ToolDef {
    name: "smart_search",
    title: "Find declarations",
    description: "Finds where a symbol is declared across every root of the workspace: classes, \
structs, interfaces, functions, methods, gRPC services and RPCs, messages, endpoints, topics. \
Matches symbol names case-insensitively, exact names first, then prefixes, then substrings. \
Each result is a file with the declaration's path:line. Use it for 'where is X defined'; for \
'who imports or uses X' use find_dependents, and for docs use search_docs. Example: \
{\"query\": \"OrderService\", \"scope\": \"services/orders\"}.",
    input_schema: || {
        object_schema(
            json!({
                "query": {"type": "string", "description": "A symbol name or part of one, e.g. \"OrderService\" or \"handle_order\"."},
                "scope": {"type": "string", "description": "A root or directory inside the workspace to search, e.g. \"services/orders\"; omit (or \".\") for every root."},
                "kind": {"type": "string", "description": "Only declarations of this kind, e.g. \"class\", \"function\", \"method\", \"rpc\", \"service\", \"message\", \"interface\", \"struct\", \"enum\", \"constant\"."},
                "limit": {"type": "integer", "description": "Files per page, 1–100 (default 20), e.g. 10."},
                "offset": {"type": "integer", "description": "Files to skip, taken from the previous page's footer, e.g. 20."}
            }),
            &["query"],
        )
    },
    run,
    truncation_hint: |args| {
        format!(
            "Narrow the search: smart_search(query: \"{}\", scope: \"<a root>\") or pass a smaller limit.",
            args.get("query").and_then(Value::as_str).unwrap_or("")
        )
    },
    needs_index: true,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    query: String,
    scope: Option<String>,
    kind: Option<String>,
    limit: Option<i64>,
    offset: Option<i64>,
}

/// How a name matched the query: lower is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum MatchRank {
    Exact,
    Prefix,
    Substring,
}

fn kind_from(name: &str) -> Option<SymbolKind> {
    const ALL: [SymbolKind; 21] = [
        SymbolKind::Service,
        SymbolKind::Rpc,
        SymbolKind::Endpoint,
        SymbolKind::Message,
        SymbolKind::Interface,
        SymbolKind::Trait,
        SymbolKind::Topic,
        SymbolKind::Class,
        SymbolKind::Struct,
        SymbolKind::Enum,
        SymbolKind::EnumValue,
        SymbolKind::TypeAlias,
        SymbolKind::Function,
        SymbolKind::Method,
        SymbolKind::Constructor,
        SymbolKind::Constant,
        SymbolKind::Variable,
        SymbolKind::Field,
        SymbolKind::Module,
        SymbolKind::Section,
        SymbolKind::Property,
    ];
    ALL.into_iter()
        .find(|k| k.name().eq_ignore_ascii_case(name))
}

fn run(args: &Value, env: &ToolEnv) -> ToolOutput {
    let args: Args = match decode("smart_search", args) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let Some(snap) = env.snapshot else {
        return ToolOutput::error("the index is not ready".into());
    };
    let query = args.query.trim();
    if query.is_empty() {
        return ToolOutput::error(
            "Invalid arguments for smart_search: `query` is empty. Pass a symbol name, e.g. {\"query\": \"OrderService\"}.".into(),
        );
    }
    let kind = match args.kind.as_deref() {
        None => None,
        Some(k) => match kind_from(k) {
            Some(k) => Some(k),
            None => {
                return ToolOutput::error(format!(
                    "Invalid arguments for smart_search: unknown kind `{k}`. Use one of: service, rpc, endpoint, message, interface, trait, topic, class, struct, enum, enum_value, type, function, method, constructor, constant, variable, field, module."
                ));
            }
        },
    };
    let scope = match super::resolve_scope(env, args.scope.as_deref()) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let limit = clamp(args.limit, 20, 1, 100);
    let offset = args.offset.unwrap_or(0).max(0) as usize;
    let q = query.to_lowercase();
    let q_bare = bare(&q);

    // Best (rank, kind, line, symbol) per file.
    let mut best: Vec<Option<(MatchRank, SymbolKind, u32, SymbolRef)>> =
        vec![None; snap.files.len()];
    for (root_index, table) in snap.names.iter().enumerate() {
        if !scope.includes_root(root_index) {
            continue;
        }
        for (name, r) in table.iter() {
            let rank = if name == q || (!q_bare.is_empty() && bare(name) == q_bare) {
                MatchRank::Exact
            } else if name.starts_with(&q) {
                MatchRank::Prefix
            } else if name.contains(&q) {
                MatchRank::Substring
            } else {
                continue;
            };
            let file = &snap.files[r.file as usize];
            let sym = &file.symbols()[r.symbol as usize];
            if kind.is_some_and(|k| k != sym.kind)
                || matches!(sym.kind, SymbolKind::Section | SymbolKind::Property)
            {
                continue;
            }
            if !scope.includes_file(root_index, &file.path) {
                continue;
            }
            let cand = (rank, sym.kind, sym.line, r);
            let slot = &mut best[r.file as usize];
            if slot.is_none_or(|b| (cand.0, cand.1, cand.2) < (b.0, b.1, b.2)) {
                *slot = Some(cand);
            }
        }
    }
    let mut hits: Vec<(MatchRank, SymbolKind, String, u32, SymbolRef)> = best
        .into_iter()
        .flatten()
        .map(|(rank, k, line, r)| {
            (
                rank,
                k,
                snap.display_path(&snap.files[r.file as usize]),
                line,
                r,
            )
        })
        .collect();
    hits.sort_by(|a, b| (a.0, a.1, &a.2, a.3).cmp(&(b.0, b.1, &b.2, b.3)));
    render(snap, &args, query, &scope.label, hits, limit, offset)
}

/// A name with `_` and case removed, for `CONSTANT_CASE` ↔ `PascalCase` matching, taken on
/// the last `.` segment (`Orders.ORDER_CREATED` ↔ `OrderCreated`).
fn bare(name: &str) -> String {
    let last = name.rsplit('.').next().unwrap_or(name);
    last.chars()
        .filter(|c| *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Page budget: a page stops once its rendered entries pass about 8 KiB.
const PAGE_BUDGET: usize = 8 * 1024;

fn render(
    snap: &Snapshot,
    args: &Args,
    query: &str,
    scope_label: &str,
    hits: Vec<(MatchRank, SymbolKind, String, u32, SymbolRef)>,
    limit: usize,
    offset: usize,
) -> ToolOutput {
    let total = hits.len();
    let mut out = format!(
        "## Declarations matching {} (scope: {})\n\n",
        inline_code(query),
        scope_label
    );
    if total == 0 {
        out.push_str(&format!(
            "No symbol named {} is declared in {} (searched {} files in {} root(s), index generation {}).\n",
            inline_code(query),
            scope_label,
            snap.files.len(),
            snap.roots.len(),
            snap.generation
        ));
        return ToolOutput::ok(out);
    }
    if offset >= total {
        out.push_str(&format!(
            "_No results at offset {offset}: there are {total} matching files; request an offset below {total}._\n"
        ));
        return ToolOutput::ok(out);
    }
    let exact = hits.iter().filter(|h| h.0 == MatchRank::Exact).count();
    out.push_str(&format!("_Matches: {total} definitions (one file each)"));
    if exact > 0 && exact < total {
        out.push_str(&format!(
            "; {exact} declare `{query}` exactly (listed first), {} only contain it",
            total - exact
        ));
    }
    out.push_str("._\n\n");
    let mut body = String::new();
    let mut shown = 0;
    let mut files = Vec::new();
    for (i, (_, kind, path, line, r)) in hits.iter().enumerate().skip(offset).take(limit) {
        let file = &snap.files[r.file as usize];
        let sym = &file.symbols()[r.symbol as usize];
        let mut entry = format!(
            "{}. `{}:{}` — {} {}",
            i + 1,
            path,
            line,
            kind.name(),
            inline_code(file.name(sym))
        );
        if let Some(c) = file.container(sym) {
            entry.push_str(&format!(" in {}", inline_code(c)));
        }
        entry.push_str(&format!(" (L{}-L{})\n", sym.line, sym.end_line));
        if shown > 0 && body.len() + entry.len() > PAGE_BUDGET {
            break;
        }
        body.push_str(&entry);
        files.push(path.clone());
        shown += 1;
    }
    out.push_str(&body);
    let next = offset + shown;
    if next < total {
        out.push_str(&format!(
            "\n_Showing {}-{} of {total}. More results: repeat with `offset: {next}`{}._\n",
            offset + 1,
            next,
            if args.scope.is_none() {
                " or narrow `scope`"
            } else {
                ""
            }
        ));
    }
    let mut result = ToolOutput::ok(out);
    result.files_accessed = files;
    result
}
