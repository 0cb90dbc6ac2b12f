//! Calls as dependents: the callers of an RPC from the graph, and of a function found by name.

use super::rows::{Row, push_call_row};
use crate::index::facts::{Language, SymbolKind};
use crate::index::snapshot::Snapshot;

/// Calls of an RPC (`Service.Method`, `pkg.Service/Method`) or of any RPC of a service.
pub(super) fn rpc_call_rows(snap: &Snapshot, target: &str, rows: &mut Vec<Row>) {
    let g = &snap.graph;
    // A whole service name, qualified or not (`acme.orders.v1.OrderService`), means every RPC.
    let whole = if target.contains('/') {
        Vec::new()
    } else {
        g.contracts_named(target)
    };
    let (contracts, method) = if whole.is_empty() {
        match target.rsplit_once(['/', '.']) {
            Some((s, m)) if !m.is_empty() => (
                g.contracts_named(s.rsplit('.').next().unwrap_or(s)),
                Some(m),
            ),
            _ => (Vec::new(), None),
        }
    } else {
        (whole, None)
    };
    for c in contracts {
        for &r in &g.contracts[c as usize].rpcs {
            let rpc = &g.rpcs[r as usize];
            if method.is_some_and(|m| !m.eq_ignore_ascii_case(&rpc.name)) {
                continue;
            }
            for call in g.calls.iter().filter(|l| l.rpc == r) {
                let f = &snap.files[call.at.file as usize];
                let via = format!("calls {}.{}", g.contracts[c as usize].name, rpc.name);
                push_call_row(
                    rows,
                    f,
                    call.at.file,
                    call.at.line,
                    &via,
                    call.confidence.label(),
                );
            }
        }
    }
}

/// Most call rows one function target gets (its calls are found by name, file by file).
const MAX_CALL_ROWS: usize = 200;

/// Bytes of files outside a function's declaring root that [`function_call_rows`] reads at
/// most per query: a library's function is called from the services using it, but one
/// question must not read a whole huge workspace.
const MAX_CALL_SCAN_BYTES: u64 = 16 << 20;

/// A function or method target (`calcTotal`, `CartHelper.addToCart`) that nothing imports:
/// the index keeps declarations, not every call, so its callers are found by name, as lines
/// where the name is called (`name(`), in the files of the same language family: the
/// declaring root's first (the declaring file included), then the other roots' (a shared
/// library's `AddEventBus(…)` is called by the services, which need not import its
/// namespace: a C# extension method declared in `Microsoft.Extensions.Hosting`), up to
/// [`MAX_CALL_SCAN_BYTES`]. Each is a `heuristic` row that says so; without them the answer
/// would be a false "0 dependents".
pub(super) fn function_call_rows(snap: &Snapshot, target: &str, rows: &mut Vec<Row>) {
    let (owner, name) = match target.rsplit_once('.') {
        Some((q, n)) if !q.is_empty() => (Some(q.rsplit('.').next().unwrap_or(q)), n),
        _ => (None, target),
    };
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return;
    }
    // Declarations: (file, declaration line).
    let decls: Vec<(usize, u32)> = snap
        .files
        .iter()
        .enumerate()
        .flat_map(|(fi, f)| {
            f.symbols()
                .iter()
                .filter(|s| matches!(s.kind, SymbolKind::Function | SymbolKind::Method))
                .filter(|s| f.name(s) == name)
                .filter(|s| {
                    owner.is_none_or(|o| {
                        f.container(s)
                            .is_some_and(|c| c == o || c.ends_with(&format!(".{o}")))
                    })
                })
                .map(move |s| (fi, s.line))
                .collect::<Vec<_>>()
        })
        .collect();
    let family = |l: Language| match l {
        Language::TypeScript => Language::JavaScript,
        Language::Kotlin | Language::Scala => Language::Java,
        Language::C => Language::Cpp,
        other => other,
    };
    let mut seen = std::collections::BTreeSet::new();
    let mut budget = MAX_CALL_SCAN_BYTES;
    // Own root first, then the others: (declaration, whether this pass is the own root's).
    let passes = decls
        .iter()
        .map(|&d| (d, true))
        .chain(decls.iter().map(|&d| (d, false)));
    for ((di, _), own_root) in passes {
        let d = &snap.files[di];
        for (fi, f) in snap.files.iter().enumerate() {
            if (f.root == d.root) != own_root
                || family(f.lang) != family(d.lang)
                || seen.contains(&fi)
            {
                continue;
            }
            if !own_root {
                if budget < f.size {
                    continue;
                }
                budget -= f.size;
            }
            seen.insert(fi);
            let Ok(text) = std::fs::read_to_string(snap.abs_path(f)) else {
                continue;
            };
            if !text.contains(name) {
                continue;
            }
            let declared_here: Vec<u32> = decls
                .iter()
                .filter(|&&(i, _)| i == fi)
                .map(|&(_, l)| l)
                .collect();
            for line in call_lines(&text, name) {
                if declared_here.contains(&line) || rows.len() >= MAX_CALL_ROWS {
                    continue;
                }
                push_call_row(
                    rows,
                    f,
                    fi as u32,
                    line,
                    &format!("calls {name}(…) (found by name: calls of functions are not indexed)"),
                    "heuristic",
                );
                if let Some(r) = rows.last_mut() {
                    r.origin = Some(di as u32);
                }
            }
        }
    }
}

/// The 1-based lines of `text` where `name` is called: the whole word followed by `(` (spaces
/// between allowed), outside a line comment (`//`, `#`) and not a definition (`def`, `fun`,
/// `func`, `function`, `fn` right before it).
fn call_lines(text: &str, name: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        if code.trim_start().starts_with('#') {
            continue;
        }
        let bytes = code.as_bytes();
        let called = code.match_indices(name).any(|(at, _)| {
            let before = at.checked_sub(1).map(|i| bytes[i]);
            let definition = matches!(
                code[..at]
                    .trim_end()
                    .rsplit(|c: char| !c.is_ascii_alphanumeric())
                    .next(),
                Some("def" | "fun" | "func" | "function" | "fn")
            );
            !before.is_some_and(|b| is_word_byte(b) || b == b'$')
                && code[at + name.len()..].trim_start().starts_with('(')
                && !definition
        });
        if called {
            out.push(k as u32 + 1);
        }
    }
    out
}

/// A byte of an identifier (ASCII letters, digits, `_`).
pub(super) fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}
