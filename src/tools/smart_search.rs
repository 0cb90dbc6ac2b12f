//! `smart_search`: where a symbol is declared, ranked exact > prefix > substring, then by kind.
//!
//! The unit of a page is a file: each file appears once, anchored at its best-ranked
//! declaration, so a page of 20 is 20 places to look (an agent wants
//! files to open, not 20 methods of one class). Each entry shows the
//! declaration's doc comment and signature with bodies stripped ([`super::snippet`]), in
//! original line numbers, with secret values masked.
//!
//! The file is re-read at answer time: when it changed since it was indexed, it is extracted
//! again and the declaration found anew (its new line, or the hit dropped when it is gone), so
//! an answer never cites a line that no longer says what it claims.
//! `fuzzy` is a full-text fallback over the indexed files, used only when nothing is declared:
//! one entry per file listing every matching line (lines that declare something first, at most
//! [`FUZZY_LINES_PER_FILE`], then "+N more in this file"), one structured row per line shown
//! (the last row of a capped file carries `moreInFile`).

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Scope, ToolDef, ToolEnv, ToolOutput, object_schema};
use crate::index::facts::SymbolKind;
use crate::index::snapshot::{FileEntry, Snapshot, SymbolRef};
use crate::render::{code_block, inline_code};
use crate::security::{LineContext, mask_text};

/// The tool definition.
pub static TOOL: ToolDef = ToolDef {
    name: "smart_search",
    title: "Find declarations",
    description: "Finds where a symbol is declared across every root of the workspace: classes, \
structs, interfaces, functions, methods, gRPC services and RPCs, messages, endpoints, topics. \
Matches symbol names case-insensitively, exact names first, then prefixes, then substrings. \
Each result is a file with the declaration's path:line and its signature (bodies stripped; \
include_body shows them). Use it for 'where is X defined'; for 'who imports or uses X' use \
find_dependents, for an RPC's servers and callers analyze_grpc, and for docs search_docs. \
Results are starting points to open and verify. Example: {\"query\": \"OrderService\", \
\"scope\": \"services/orders\"}.",
    input_schema: || {
        object_schema(
            json!({
                "query": {"type": "string", "description": "A symbol name or part of one, e.g. \"OrderService\" or \"handle_order\"."},
                "scope": {"type": "string", "description": "A root or directory inside the workspace to search, e.g. \"services/orders\"; omit (or \".\") for every root."},
                "kind": {"type": "string", "description": "Only declarations of this kind, e.g. \"class\", \"function\", \"method\", \"rpc\", \"service\", \"message\", \"interface\", \"struct\", \"enum\", \"constant\"."},
                "include_body": {"type": "boolean", "description": "Show whole declarations instead of signatures with bodies stripped (default false), e.g. true."},
                "fuzzy": {"type": "boolean", "description": "When no declaration matches, fall back to a full-text search of the indexed files (default false), e.g. true."},
                "limit": super::int_schema("Files per page, e.g. 10.", 20, 1, 100),
                "offset": super::int_schema("Files to skip, taken from the previous page's footer, e.g. 20.", 0, 0, super::MAX_OFFSET)
            }),
            &["query"],
        )
    },
    output_schema: Some(super::structured::Shape {
        paged: true,
        extra: "{}",
        row: "{}",
    }),
    run,
    truncation_hint: |args| {
        format!(
            "Narrow the search: smart_search(query: \"{}\", scope: \"<a root>\") or pass a smaller limit.",
            super::text_arg(args, "query")
        )
    },
    index: super::IndexUse::Required,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    query: String,
    scope: Option<String>,
    kind: Option<String>,
    include_body: Option<bool>,
    fuzzy: Option<bool>,
    limit: Option<i64>,
    offset: Option<i64>,
}

use crate::index::snapshot::NameMatch as MatchRank;

fn kind_from(name: &str) -> Option<SymbolKind> {
    let name = name.trim();
    SymbolKind::ALL
        .into_iter()
        .find(|k| k.name().eq_ignore_ascii_case(name))
        .or_else(|| {
            // The languages' own keywords for a kind the index files under another name: a
            // C#/Java record or a Kotlin/Scala object is a class, `def`/`fn`/`func` a function.
            let kind = match name.to_ascii_lowercase().as_str() {
                "record" | "object" | "data_class" => SymbolKind::Class,
                "func" | "fn" | "fun" | "def" | "procedure" => SymbolKind::Function,
                "const" | "final" => SymbolKind::Constant,
                "var" | "let" | "val" => SymbolKind::Variable,
                "ctor" | "init" => SymbolKind::Constructor,
                "typealias" | "type_alias" | "alias" => SymbolKind::TypeAlias,
                "enum_member" | "enumvalue" | "variant" => SymbolKind::EnumValue,
                "package" | "namespace" => SymbolKind::Module,
                "protocol" => SymbolKind::Interface,
                _ => return None,
            };
            Some(kind)
        })
}

fn run(args: &Value, env: &ToolEnv) -> ToolOutput {
    if let Err(e) = whole_number_args(
        "smart_search",
        args,
        &[("limit", 20, 1, 100), ("offset", 0, 0, super::MAX_OFFSET)],
    ) {
        return e;
    }
    let (args, snap): (Args, _) = match super::decode_indexed("smart_search", args, env) {
        Ok(a) => a,
        Err(e) => return e,
    };
    if let Err(e) = check_text_lens(
        "smart_search",
        &[
            ("query", Some(args.query.as_str())),
            ("scope", args.scope.as_deref()),
            ("kind", args.kind.as_deref()),
        ],
    ) {
        return e;
    }
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
                    "Invalid arguments for smart_search: unknown kind `{k}`. Use one of: service, rpc, endpoint, message, interface, trait, topic, class, struct, enum, enum_value, type, function, method, constructor, constant, variable, field, module (a language's own word works too: record, object, def, fn, func, const, ctor, namespace, protocol)."
                ));
            }
        },
    };
    let scope = match super::resolve_scope(env, args.scope.as_deref()) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let (limit, offset) = match super::page_args("smart_search", args.limit, 20, 100, args.offset) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let hits = find(snap, query, kind, &scope, offset.saturating_add(limit));
    if hits.is_empty() && args.fuzzy.unwrap_or(false) {
        return fuzzy(snap, query, &scope, limit, offset);
    }
    render(snap, &args, query, &scope, hits, limit, offset)
}

/// One ranked file: its best declaration.
struct Hit {
    rank: MatchRank,
    kind: SymbolKind,
    line: u32,
    at: SymbolRef,
}

/// Every file in scope declaring a matching name, the first `need` of them ranked: match rank,
/// then hand-written before contract copies before generated code, then kind, then path, then
/// line (the rest follow in no particular order; only their
/// number is shown). One substring search per root over the name arena finds the candidates
/// (in file order), so the cost grows with the matches, not with a call per declared name.
fn find(
    snap: &Snapshot,
    query: &str,
    kind: Option<SymbolKind>,
    scope: &Scope,
    need: usize,
) -> Vec<Hit> {
    let q = query.to_lowercase();
    let q_bare = bare(&q);
    let mut hits: Vec<Hit> = Vec::new();
    for (root_index, table) in snap.names.iter().enumerate() {
        if !scope.includes_root(root_index) {
            continue;
        }
        // Candidates come grouped by file; keep each file's best (rank, kind, line).
        let mut current: Option<Hit> = None;
        let mut in_scope = (u32::MAX, false);
        for m in table.matches(&q, &q_bare) {
            let r = m.at;
            if kind.is_some_and(|k| k != m.kind)
                || matches!(m.kind, SymbolKind::Section | SymbolKind::Property)
            {
                continue;
            }
            if m.kind == SymbolKind::Module
                && !module_is_declaration(snap.files[r.file as usize].lang)
            {
                continue;
            }
            if in_scope.0 != r.file {
                let path = &snap.files[r.file as usize].path;
                in_scope = (r.file, scope.includes_file(root_index, path));
            }
            if !in_scope.1 {
                continue;
            }
            let cand = Hit {
                rank: m.rank,
                kind: m.kind,
                line: m.line,
                at: r,
            };
            match &mut current {
                Some(best) if best.at.file == r.file => {
                    // Among exact matches, the name as typed (`publish`) heads the file before
                    // one equal only without its underscores or case (`_publish`).
                    let not_as_typed = |h: &Hit| {
                        let f = &snap.files[h.at.file as usize];
                        !f.name(&f.symbols()[h.at.symbol as usize])
                            .eq_ignore_ascii_case(query)
                    };
                    let file = &snap.files[r.file as usize];
                    let key = |h: &Hit| {
                        let nested = is_nested(file, h.at.symbol);
                        (h.rank, nested, h.kind, not_as_typed(h), h.line)
                    };
                    if key(&cand) < key(best) {
                        *best = cand;
                    }
                }
                _ => hits.extend(current.replace(cand)),
            }
        }
        hits.extend(current);
    }
    // The ranking key packed into one integer per hit, computed once: comparing tuples that
    // look up the display order on every comparison made sorting a tenth of the call.
    let order = &snap.display_order;
    // Within a match rank, hand-written code and the canonical contract come first, then the
    // copies of a contract, then generated stubs (`*.pb.go`, `*Grpc.cs`, …).
    let copies: std::collections::HashSet<u32> = snap
        .graph
        .contracts
        .iter()
        .flat_map(|c| c.copies.iter().filter(move |l| l.file != c.def.file))
        .map(|l| l.file)
        .collect();
    let tier = |file: u32| -> u128 {
        if snap.files[file as usize].generated {
            2
        } else if copies.contains(&file) {
            1
        } else {
            0
        }
    };
    let mut keyed: Vec<(u128, Hit)> = hits
        .into_iter()
        .map(|h| {
            let nested = is_nested(&snap.files[h.at.file as usize], h.at.symbol);
            let key = (h.rank as u128) << 88
                | tier(h.at.file) << 84
                | u128::from(nested) << 80
                | (h.kind as u128) << 64
                | u128::from(order[h.at.file as usize]) << 32
                | u128::from(h.line);
            (key, h)
        })
        .collect();
    // Only a page is shown: put the first `need` in place and sort just those.
    if need < keyed.len() {
        if need > 0 {
            keyed.select_nth_unstable_by_key(need - 1, |(k, _)| *k);
        }
        keyed[..need].sort_unstable_by_key(|(k, _)| *k);
    } else {
        keyed.sort_unstable_by_key(|(k, _)| *k);
    }
    keyed.into_iter().map(|(_, h)| h).collect()
}

/// How far back in a file's symbols (which are in line order) [`is_nested`] looks for an
/// enclosing function, so a file of thousands of declarations costs a bounded scan per hit.
const NESTED_LOOKBACK: usize = 256;

/// Whether the declaration `symbol` of `file` lies inside a function, method or constructor of
/// the same file (a JavaScript function in an AngularJS controller, a Python `def` in a
/// `def`): such a declaration ranks below a top-level one of the same name and kind.
fn is_nested(file: &FileEntry, symbol: u32) -> bool {
    let syms = file.symbols();
    let Some(s) = syms.get(symbol as usize) else {
        return false;
    };
    let from = (symbol as usize).saturating_sub(NESTED_LOOKBACK);
    syms[from..]
        .iter()
        .take_while(|o| o.line <= s.line)
        .any(|o| {
            matches!(
                o.kind,
                SymbolKind::Function | SymbolKind::Method | SymbolKind::Constructor
            ) && o.line <= s.line
                && s.end_line <= o.end_line
                && (o.line, o.end_line) != (s.line, s.end_line)
        })
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

/// At most this many other declarations of a file are listed under its entry.
const MAX_OTHERS: usize = 24;

/// The other declarations of `hit`'s file that match like it does: the same name (case and
/// `_` aside, last `.` segment) for an exact hit, or — when `by_kind` — any name containing
/// the query, of the hit's kind. (kind, name, line), in line order.
fn same_file_matches<'f>(
    file: &'f FileEntry,
    hit: &Hit,
    query: &str,
    by_kind: bool,
) -> Vec<(SymbolKind, &'f str, u32)> {
    if hit.rank != MatchRank::Exact && !by_kind {
        return Vec::new();
    }
    let q = query.to_lowercase();
    let q_bare = bare(&q);
    file.symbols()
        .iter()
        .enumerate()
        .filter(|(i, s)| {
            *i as u32 != hit.at.symbol
                && !matches!(
                    s.kind,
                    SymbolKind::Section | SymbolKind::Property | SymbolKind::Module
                )
                && if by_kind {
                    s.kind == hit.kind && file.name(s).to_lowercase().contains(&q)
                } else {
                    let n = file.name(s).to_lowercase();
                    n == q || bare(&n) == q_bare
                }
        })
        .map(|(_, s)| (s.kind, file.name(s), s.line))
        .collect()
}

/// Page budget: a page stops once its rendered entries pass about 8 KiB.
const PAGE_BUDGET: usize = 8 * 1024;

/// What reading a hit's file at answer time found.
enum Fresh {
    /// The declaration, as the file says now (unchanged since indexing, or found again).
    At {
        text: String,
        line: u32,
        end_line: u32,
        /// First line of its doc comment or annotations, 0 when none.
        doc_line: u32,
        moved: bool,
    },
    /// The file changed and no longer declares the name.
    Gone,
}

/// Reads a hit's file; when it changed since it was indexed, extracts it again and finds the
/// same declaration (name, kind and container; the nearest to the old line), so a stale
/// index never makes the answer cite a line that declares something else — a call of the
/// name on the old line is not its declaration.
fn freshen(snap: &Snapshot, file: &FileEntry, sym: &crate::index::snapshot::SymbolEntry) -> Fresh {
    let Some((meta, text)) = read_with_metadata(&snap.abs_path(file)) else {
        return Fresh::Gone;
    };
    let unchanged =
        meta.len() == file.size && crate::index::crawl::mtime_ns(&meta) == file.mtime_ns;
    if unchanged {
        return Fresh::At {
            text,
            line: sym.line,
            end_line: sym.end_line,
            doc_line: sym.doc_line,
            moved: false,
        };
    }
    let (name, container) = (file.name(sym), file.container(sym));
    let facts = crate::index::lang::extract(file.lang, &file.path, &text);
    let now = facts
        .symbols
        .iter()
        .filter(|s| s.name == name && s.kind == sym.kind && s.container.as_deref() == container)
        .min_by_key(|s| s.line.abs_diff(sym.line));
    match now {
        Some(s) => Fresh::At {
            line: s.line,
            end_line: s.end_line,
            doc_line: s.doc_line.unwrap_or(0),
            moved: s.line != sym.line,
            text,
        },
        None => Fresh::Gone,
    }
}

/// A file's metadata and text through one open descriptor: one path lookup, one `fstat`
/// and the reads, where `metadata` + `read_to_string` cost two lookups, two stats and a
/// seek (this runs for every hit on a page). One `read` of a byte more than `fstat` said
/// normally returns the whole file and shows that it ends there, so the read that would
/// return 0 is saved; a file that grew meanwhile is read on to its end.
fn read_with_metadata(path: &std::path::Path) -> Option<(std::fs::Metadata, String)> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    let size = meta.len() as usize;
    let mut bytes = vec![0u8; size + 1];
    let got = loop {
        match file.read(&mut bytes) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => break other.ok()?,
        }
    };
    bytes.truncate(got);
    if got != size {
        file.read_to_end(&mut bytes).ok()?;
    }
    let text = String::from_utf8(bytes).ok()?;
    Some((meta, text))
}

fn render(
    snap: &Snapshot,
    args: &Args,
    query: &str,
    scope: &Scope,
    hits: Vec<Hit>,
    limit: usize,
    offset: usize,
) -> ToolOutput {
    let total = hits.len();
    let mut out = format!(
        "## Declarations matching {} (scope: {})\n\n",
        inline_code(query),
        scope.label
    );
    let note = rejected_note(snap, scope);
    if total == 0 {
        out.push_str(&format!(
            "No declaration named like {} in {} ({} files, {} root(s), generation {}). Try a shorter name, or `fuzzy: true` for a full-text search.\n",
            inline_code(query),
            scope.label,
            snap.files.len(),
            snap.roots.len(),
            snap.generation
        ));
        out.push_str(&note);
        return ToolOutput::ok(out).with_data(super::structured::empty());
    }
    if offset >= total {
        out.push_str(&format!(
            "_No results at offset {offset}: there are {total} matching files; request an offset below {total}._\n"
        ));
        return ToolOutput::ok(out).with_data(super::structured::page(total, offset, None, vec![]));
    }
    let exact = hits.iter().filter(|h| h.rank == MatchRank::Exact).count();
    out.push_str(&format!("_Matches: {total} files declare a matching name"));
    if exact > 0 && exact < total {
        out.push_str(&format!(
            "; {exact} declare {} exactly (listed first), {} only contain it",
            inline_code(query),
            total - exact
        ));
    }
    out.push_str("._\n\n");
    let include_body = args.include_body.unwrap_or(false);
    // Sized for a full page: growing the page string by doubling was a realloc and a copy
    // of everything so far, several times per call.
    let mut body = String::with_capacity(PAGE_BUDGET + 2048);
    out.reserve(PAGE_BUDGET + 2048);
    let mut consumed = 0;
    let mut files = Vec::new();
    let mut redactions = 0u32;
    let mut stale = 0usize;
    let mut rows = Vec::new();
    for (i, hit) in hits.iter().enumerate().skip(offset).take(limit) {
        let file = &snap.files[hit.at.file as usize];
        let path = snap.display_path(file);
        let Some(entry) = hit_entry(snap, hit, i + 1, &path, query, args) else {
            stale += 1;
            consumed += 1;
            continue;
        };
        if consumed > 0 && body.len() + entry.text.len() > PAGE_BUDGET {
            break;
        }
        body.push_str(&entry.text);
        redactions += entry.redactions;
        // The row is cleaned here, not by `invoke`'s walk over the data: the snippet is
        // masked already (shapes included), so it only needs neutralising.
        let name = file.name(&file.symbols()[hit.at.symbol as usize]);
        let (clean_path, in_path) = super::structured::clean_str(&path);
        let (clean_name, in_name) = super::structured::clean_str(name);
        redactions += in_path + in_name;
        rows.push(super::structured::row(
            &clean_path,
            entry.line,
            hit.kind.name(),
            &clean_name,
            "",
            &crate::security::neutralise(&entry.masked).0,
        ));
        files.push(path);
        consumed += 1;
    }
    out.push_str(&body);
    let next = offset + consumed;
    if stale > 0 {
        out.push_str(&format!(
            "\n_{stale} hit(s) on this page were skipped: their files changed and no longer declare {}; the index will catch up._\n",
            inline_code(query)
        ));
    }
    if next < total {
        out.push_str(&format!(
            "\n_Showing {}-{} of {total}{}. More results: repeat with `offset: {next}`{}._\n",
            offset + 1,
            next,
            // Fewer than `limit` on a full page: say why, so a bigger limit is not retried.
            if consumed < limit {
                format!(
                    " (a page stops at about {} KiB of text, here before `limit: {limit}`)",
                    PAGE_BUDGET / 1024
                )
            } else {
                String::new()
            },
            if scope.within.is_none() {
                " or narrow `scope`"
            } else {
                ""
            }
        ));
    }
    if !include_body {
        out.push_str("\n_Bodies are stripped; pass `include_body: true` to see them._\n");
    }
    out.push_str(&note);
    let mut result =
        ToolOutput::ok(out).with_data(super::structured::page(total, offset, Some(next), rows));
    result.data_clean = true;
    result.files_accessed = files;
    result.redactions = redactions;
    result
}

/// One hit rendered: its Markdown entry, the masked snippet (for the structured row), the
/// line the declaration is at now, and the secrets masked in it.
struct Entry {
    text: String,
    masked: String,
    line: u32,
    redactions: u32,
}

/// Renders hit number `n` (at `path`) as the file reads now: heading, snippet, the file's
/// other matches. `None` when the file changed and no longer declares the name.
fn hit_entry(
    snap: &Snapshot,
    hit: &Hit,
    n: usize,
    path: &str,
    query: &str,
    args: &Args,
) -> Option<Entry> {
    let file = &snap.files[hit.at.file as usize];
    let sym = &file.symbols()[hit.at.symbol as usize];
    let name = file.name(sym);
    let (text, line, end_line, doc_line, moved) = match freshen(snap, file, sym) {
        Fresh::At {
            text,
            line,
            end_line,
            doc_line,
            moved,
        } => (text, line, end_line, doc_line, moved),
        Fresh::Gone => return None,
    };
    let snip = super::snippet::snippet(
        file.lang,
        &text,
        (doc_line > 0).then_some(doc_line),
        line,
        end_line,
        args.include_body.unwrap_or(false),
    );
    let (masked, redactions) = mask_text(
        &snip.text,
        LineContext::for_path(std::path::Path::new(&*file.path)),
    );
    let mut entry = String::with_capacity(masked.len() + 256);
    {
        use std::fmt::Write;
        let _ = write!(
            entry,
            "### [{}] {} (L{}-L{})\n{} {}",
            n,
            crate::render::code_loc(path, line),
            snip.first_line,
            snip.last_line,
            hit.kind.name(),
            inline_code(name)
        );
    }
    if let Some(c) = file.container(sym) {
        entry.push_str(&format!(" in {}", inline_code(c)));
    }
    if file.generated {
        entry.push_str(" — generated code");
    }
    if moved {
        entry.push_str(" — the file changed since indexing; shown where the name is now");
    }
    entry.push('\n');
    entry.push_str(&code_block(file.lang.name(), &masked));
    entry.push('\n');
    // The file's other declarations of the same name (overloads, a class and its
    // constructor) — or, when a kind is asked for, every other match of that kind (each
    // route of a router file): the fold to one entry per file must not hide them.
    let others = same_file_matches(file, hit, query, args.kind.is_some());
    if !others.is_empty() {
        entry.push_str("Also in this file:");
        for (k, n, l) in others.iter().take(MAX_OTHERS) {
            entry.push_str(&format!(" {} {} `{path}:{l}`;", k.name(), inline_code(n)));
        }
        if others.len() > MAX_OTHERS {
            entry.push_str(&format!(" and {} more.", others.len() - MAX_OTHERS));
        }
        entry.push('\n');
    }
    Some(Entry {
        text: entry,
        masked,
        line,
        redactions,
    })
}

/// Full-text fallback: indexed files in scope whose text contains the query, each with its
/// matching lines (see the module docs).
fn fuzzy(snap: &Snapshot, query: &str, scope: &Scope, limit: usize, offset: usize) -> ToolOutput {
    let lower = query.to_lowercase();
    let mut out = format!(
        "## Full-text matches for {} (scope: {})\n\n_No declaration has this name; these indexed files contain it (`fuzzy: true`)._\n\n",
        inline_code(query),
        scope.label
    );
    let mut seen = 0usize;
    let mut shown = 0usize;
    let mut more = false;
    let mut files = Vec::new();
    let mut redactions = 0;
    let mut body = String::new();
    let mut rows = Vec::new();
    for (n, f) in snap.files.iter().enumerate() {
        // The full-text scan reads files: progress every 1,000, for a caller that asked.
        if n % 1000 == 999 {
            let total = snap.files.len() as f64;
            crate::server::notify::notify_progress(n as f64, Some(total), Some("full-text scan"));
        }
        if !scope.includes_file(f.root as usize, &f.path) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(snap.abs_path(f)) else {
            continue;
        };
        let matching: Vec<(usize, &str)> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.to_lowercase().contains(&lower))
            .collect();
        if matching.is_empty() {
            continue;
        }
        seen += 1;
        if seen <= offset {
            continue;
        }
        if shown == limit || (shown > 0 && body.len() > PAGE_BUDGET) {
            more = true;
            break;
        }
        let path = snap.display_path(f);
        let lines = fuzzy_lines(f, &matching);
        let hidden = matching.len() - lines.len();
        for (k, &(i, line, decl)) in lines.iter().enumerate() {
            let (masked, n) = mask_text(
                line.trim(),
                LineContext::for_path(std::path::Path::new(&*f.path)),
            );
            redactions += n;
            let shown_line: String = if masked.len() > 200 {
                let mut e = 200;
                while !masked.is_char_boundary(e) {
                    e -= 1;
                }
                format!("{}…", &masked[..e])
            } else {
                masked
            };
            let lead = if k == 0 {
                format!("{seen}. ")
            } else {
                "   ".to_string()
            };
            body.push_str(&format!(
                "{lead}{} — {}{}\n",
                crate::render::code_loc(&path, i as u32 + 1),
                inline_code(&shown_line),
                match decl {
                    Some((kind, _)) => format!(" ({} declared here)", kind.name()),
                    None => String::new(),
                }
            ));
            let mut row = super::structured::row(
                &path,
                i as u32 + 1,
                if decl.is_some() {
                    "declaration"
                } else {
                    "text"
                },
                decl.map_or("", |(_, name)| name),
                "",
                &shown_line,
            );
            if hidden > 0
                && k + 1 == lines.len()
                && let Value::Object(m) = &mut row
            {
                m.insert("moreInFile".into(), hidden.into());
            }
            rows.push(row);
        }
        if hidden > 0 {
            body.push_str(&format!("   _+{hidden} more in this file_\n"));
        }
        files.push(path);
        shown += 1;
    }
    if shown == 0 {
        if offset > 0 && seen > 0 {
            out.push_str(&format!(
                "_No results at offset {offset}: {seen} files contain it; request an offset below {seen}._\n"
            ));
        } else {
            out.push_str(&format!(
                "No indexed file in {} contains {} ({} files, generation {}).\n",
                scope.label,
                inline_code(query),
                snap.files.len(),
                snap.generation
            ));
        }
    } else {
        out.push_str(&body);
        if more {
            out.push_str(&format!(
                "\n_More files contain it{}: repeat with `offset: {}`._\n",
                if shown < limit {
                    format!(
                        " (a page stops at about {} KiB of text, here before `limit: {limit}`)",
                        PAGE_BUDGET / 1024
                    )
                } else {
                    String::new()
                },
                offset + shown
            ));
        }
    }
    out.push_str(&rejected_note(snap, scope));
    // The full-text scan stops after the page: `total` counts the files seen so far.
    let data = super::structured::page(seen, offset, more.then_some(offset + shown), rows);
    let mut result = ToolOutput::ok(out).with_data(data);
    result.files_accessed = files;
    result.redactions = redactions;
    result
}

/// At most this many matching lines of one file are shown by the full-text fallback; the
/// rest are counted ("+N more in this file").
const FUZZY_LINES_PER_FILE: usize = 5;

/// A matching line: its 0-based index, its text, and the declaration on it (kind, name).
type FuzzyLine<'t, 'f> = (usize, &'t str, Option<(SymbolKind, &'f str)>);

/// The matching lines of a file to show, as (0-based index, text, the declaration on that
/// line): lines that declare something first, then the others, each group in line order, at
/// most [`FUZZY_LINES_PER_FILE`].
fn fuzzy_lines<'t, 'f>(
    file: &'f FileEntry,
    matching: &[(usize, &'t str)],
) -> Vec<FuzzyLine<'t, 'f>> {
    let declared = |i: usize| {
        file.symbols()
            .iter()
            .find(|s| s.line as usize == i + 1 && !matches!(s.kind, SymbolKind::Section))
            .map(|s| (s.kind, file.name(s)))
    };
    let mut lines: Vec<_> = matching.iter().map(|&(i, l)| (i, l, declared(i))).collect();
    crate::order::sort_by_key(&mut lines, |&(i, _, d)| (d.is_none(), i));
    lines.truncate(FUZZY_LINES_PER_FILE);
    lines
}

/// The longest text argument (a name, query, path, scope or revision) a tool accepts, in
/// bytes. A longer one is pasted content, not a name: refused before any work, so a 100 KB
/// argument costs nothing and its answer does not echo it back.
pub const MAX_TEXT_ARG_BYTES: usize = 4096;

/// Refuses a text argument over [`MAX_TEXT_ARG_BYTES`], naming the argument, its size and the
/// limit.
pub fn check_text_len(tool: &str, name: &str, value: Option<&str>) -> Result<(), ToolOutput> {
    match value {
        Some(v) if v.len() > MAX_TEXT_ARG_BYTES => Err(ToolOutput::error(format!(
            "Invalid arguments for {tool}: `{name}` is {} bytes long; the limit is {MAX_TEXT_ARG_BYTES} bytes (4 KiB). Pass a name, a short phrase or a path, not file contents.",
            v.len()
        ))),
        _ => Ok(()),
    }
}

/// [`check_text_len`] for each `(name, value)` of a call, the first refusal winning.
pub fn check_text_lens(tool: &str, args: &[(&str, Option<&str>)]) -> Result<(), ToolOutput> {
    args.iter()
        .try_for_each(|&(name, value)| check_text_len(tool, name, value))
}

/// Refuses a numeric argument that is not a whole number (`5.5`, `"10"`, `true`) with its valid
/// range and default, before strict decoding would answer with only "not a number this argument
/// accepts". `ranges` holds (name, default, min, max), as given to [`super::in_range`].
pub fn whole_number_args(
    tool: &str,
    args: &Value,
    ranges: &[(&str, i64, i64, i64)],
) -> Result<(), ToolOutput> {
    for &(name, default, min, max) in ranges {
        let Some(v) = args.get(name).filter(|v| !v.is_null()) else {
            continue;
        };
        let whole = v.is_i64()
            || v.is_u64()
            || v.as_f64()
                .is_some_and(|f| f.fract() == 0.0 && f.abs() < 9.0e15);
        if !whole {
            let what = match v {
                Value::Number(_) => "not a whole number",
                Value::String(_) => "a string, not a number",
                Value::Bool(_) => "a boolean, not a number",
                _ => "not a number",
            };
            return Err(ToolOutput::error(format!(
                "Invalid arguments for {tool}: `{name}` is {}, {what}. Pass a whole number from {min} to {max}, or omit it for the default {default}.",
                crate::protocol::echo_input(&v.to_string())
            )));
        }
    }
    Ok(())
}

/// The note listing files in scope the index refused (never cut, at most ~2 KB): an agent
/// must know a zero may hide in them, and read them directly.
pub fn rejected_note(snap: &Snapshot, scope: &Scope) -> String {
    let rejected: Vec<_> = snap
        .rejected
        .iter()
        .filter(|r| scope.includes_file(r.root as usize, &r.path))
        .collect();
    if rejected.is_empty() {
        return String::new();
    }
    let mut note = format!(
        "\n> [!WARNING]\n> **{} file(s) in this scope are not indexed**; read them directly if the answer may be there.\n",
        rejected.len()
    );
    for (i, r) in rejected.iter().enumerate() {
        let path = match snap.roots.get(r.root as usize) {
            Some(root) if root.label != "." => format!("{}/{}", root.label, r.path),
            _ => r.path.clone(),
        };
        let line = format!(
            "> - {}: {}, {}\n",
            inline_code(&path),
            r.label,
            human_size(r.size)
        );
        if i == 20 || note.len() + line.len() > 1900 {
            note.push_str(&format!("> - …and {} more\n", rejected.len() - i));
            break;
        }
        note.push_str(&line);
    }
    note
}

fn human_size(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else if bytes < 1024 * 1024 {
        format!("{} KB", crate::render::decimal(bytes, 1024, 1))
    } else {
        format!("{} MB", crate::render::decimal(bytes, 1024 * 1024, 1))
    }
}

/// Whether a `module` symbol of this language is a declaration an agent searches for: a Ruby
/// `module`, a Rust `mod`, a TypeScript `namespace` hold code of their own. A C#, PHP or C++
/// namespace is repeated by every file in it: searching for it is `find_dependents`' job, and
/// its hits would bury the declarations.
fn module_is_declaration(lang: crate::index::facts::Language) -> bool {
    use crate::index::facts::Language;
    matches!(
        lang,
        Language::Ruby | Language::Rust | Language::TypeScript | Language::JavaScript
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A snapshot of real files written under a fresh temporary directory (root `web`).
    fn on_disk(tag: &str, files: &[(&str, &str)]) -> (std::path::PathBuf, Snapshot) {
        let base =
            std::env::temp_dir().join(format!("mesh-smart-search-{tag}-{}", std::process::id()));
        let mut facts = Vec::new();
        for (path, text) in files {
            let abs = base.join("web").join(path);
            std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
            std::fs::write(&abs, text).unwrap();
            let lang = crate::index::facts::Language::of_path(path).unwrap();
            facts.push(("web", *path, crate::index::lang::extract(lang, path, text)));
        }
        let snap = Snapshot::from_facts_in(base.clone(), facts);
        (base, snap)
    }

    #[test]
    fn fuzzy_lists_every_matching_line_of_a_file_declarations_first() {
        let src = "function outer() {\n  ping();\n  ping();\n}\nfunction ping() {\n  ping();\n  ping();\n  ping();\n  ping();\n}\n";
        let (base, snap) = on_disk("fuzzy", &[("a.js", src), ("b.js", "x.ping();\n")]);
        let out = crate::tools::run_on(run, &snap, &json!({"query": "ping(", "fuzzy": true}));
        let _ = std::fs::remove_dir_all(&base);
        assert!(!out.is_error, "{}", out.text);
        let t = &out.text;
        let a = t.find("1. `web/a.js:5` — `function ping() {` (function declared here)");
        assert!(a.is_some(), "{t}");
        for line in [2, 3, 6, 7] {
            assert!(
                t.contains(&format!("   `web/a.js:{line}` — `ping();`")),
                "{t}"
            );
        }
        assert!(!t.contains("web/a.js:8`"), "{t}");
        assert!(t.contains("_+2 more in this file_"), "{t}");
        assert!(t.contains("2. `web/b.js:1` — `x.ping();`"), "{t}");
        let data = out.data.as_ref().expect("structured data");
        let rows = data["rows"].as_array().unwrap();
        let lines: Vec<(u64, &str)> = rows
            .iter()
            .map(|r| (r["line"].as_u64().unwrap(), r["path"].as_str().unwrap()))
            .collect();
        assert_eq!(
            lines,
            [
                (5, "web/a.js"),
                (2, "web/a.js"),
                (3, "web/a.js"),
                (6, "web/a.js"),
                (7, "web/a.js"),
                (1, "web/b.js")
            ]
        );
        assert_eq!(rows[0]["role"], "declaration");
        assert_eq!(rows[0]["name"], "ping");
        assert_eq!(rows[1]["role"], "text");
        assert_eq!(rows[4]["moreInFile"], 2);
        assert!(rows[5].get("moreInFile").is_none());
        assert_eq!(data["total"], 2);
    }

    #[test]
    fn nested_functions_rank_below_top_level_ones_of_the_same_name() {
        let nested = "app.controller('productform', function($scope) {\n  function loadRating(sku) {\n    return sku;\n  }\n});\n";
        let top = "export function loadRating(sku) {\n  return sku;\n}\n";
        let (base, snap) = on_disk("nested", &[("a.js", nested), ("b.js", top)]);
        let out = crate::tools::run_on(run, &snap, &json!({"query": "loadRating"}));
        let _ = std::fs::remove_dir_all(&base);
        let t = &out.text;
        let (Some(a), Some(b)) = (t.find("web/a.js:2"), t.find("web/b.js:1")) else {
            panic!("both files listed:\n{t}");
        };
        assert!(b < a, "the top-level declaration first:\n{t}");
        assert!(t.contains("function `loadRating` in `productform`"), "{t}");
    }

    #[test]
    fn kind_names_and_language_keywords() {
        for k in SymbolKind::ALL {
            assert_eq!(kind_from(k.name()), Some(k));
        }
        assert_eq!(kind_from("Class"), Some(SymbolKind::Class));
        // C# `public record Order(...)`, Kotlin `object Registry`: indexed as classes.
        assert_eq!(kind_from("record"), Some(SymbolKind::Class));
        assert_eq!(kind_from("object"), Some(SymbolKind::Class));
        for f in ["def", "fn", "func", "fun"] {
            assert_eq!(kind_from(f), Some(SymbolKind::Function), "{f}");
        }
        assert_eq!(kind_from("const"), Some(SymbolKind::Constant));
        assert_eq!(kind_from("namespace"), Some(SymbolKind::Module));
        assert_eq!(kind_from("protocol"), Some(SymbolKind::Interface));
        assert_eq!(kind_from(" typealias "), Some(SymbolKind::TypeAlias));
        assert_eq!(kind_from("widget"), None);
    }
}
