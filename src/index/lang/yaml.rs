//! YAML extractor: Spring configuration keys, OpenAPI routes and AsyncAPI channels.
//!
//! There is no YAML library here on purpose: a small, bounded, line-based key scanner flattens
//! each document into `(path, value, line)` entries, and three recognisers read those entries.
//! It never expands anchors or aliases (an alias stays the literal `*name`, so billion-laughs
//! input stays linear), keeps one-line flow collections (`[a, b]`, `{a: 1}`) as raw text,
//! consumes block scalars (`|`, `>`), strips comments outside quotes, and caps nesting depth,
//! entry count and multi-line value size. Anything it does not understand is skipped.

use crate::index::facts::{
    EventFact, EventRole, FileFacts, HttpFact, Part, Property, Symbol, SymbolKind, Value,
};
use crate::index::lex::unescape_with;
use crate::security::mask::REDACTED;

/// Extracts the facts of one YAML file: Spring properties (`application*.yml`,
/// `bootstrap*.yml`, files under `src/main/resources/`), OpenAPI/Swagger routes and endpoint
/// symbols, AsyncAPI topic symbols and producer/consumer events, and the environment variables
/// compose files and Kubernetes manifests set ([`super::deployment`]). Other YAML gives empty
/// facts.
///
/// AsyncAPI role convention: in AsyncAPI 2 an operation describes what *other* applications
/// may do with the channel, so `publish` (others publish, the described application receives)
/// is recorded as `Consumer` and `subscribe` (others subscribe, the application sends) as
/// `Producer`. AsyncAPI 3 says it directly: `action: send` is `Producer`, `receive` is
/// `Consumer`.
pub fn extract(path: &str, text: &str) -> FileFacts {
    let entries = scan(text);
    let lower = path.to_ascii_lowercase();
    let top_key = |k: &str| {
        entries
            .iter()
            .any(|e| e.path.len() == 1 && e.path[0] == Seg::Key(k.to_string()))
    };
    let mut facts = FileFacts::default();
    let asyncapi = lower.contains("asyncapi") || top_key("asyncapi");
    let openapi = !asyncapi
        && (lower.contains("openapi")
            || lower.contains("swagger")
            || top_key("openapi")
            || top_key("swagger"));
    if asyncapi {
        asyncapi_facts(&entries, &mut facts);
    } else if openapi {
        openapi_facts(&entries, &mut facts);
    }
    if !asyncapi && !openapi && top_key("scenarios") {
        scenario_calls(&entries, &mut facts);
    }
    if is_spring_path(&lower, asyncapi || openapi) {
        facts.properties = spring_properties(&entries);
    } else if !asyncapi && !openapi {
        super::deployment::deployment_facts(&lower, &entries, &mut facts);
    }
    facts
}

// ---------------------------------------------------------------------------------------------
// Secret masking (small and private on purpose: to be swapped for the shared module)
// ---------------------------------------------------------------------------------------------

/// True when a (flattened) configuration key names a secret.
fn is_sensitive_key(key: &str) -> bool {
    use crate::security::mask::{KEY_QUALIFIERS, SENSITIVE_PARTS};
    let k = key.to_ascii_lowercase();
    if SENSITIVE_PARTS.iter().any(|w| k.contains(w)) {
        return true;
    }
    let key_suffix =
        k == "key" || k.ends_with(".key") || k.ends_with("_key") || k.ends_with("-key");
    key_suffix && KEY_QUALIFIERS.iter().any(|w| k.contains(w))
}

/// The value to index for `key`: unchanged unless the key is sensitive; then replaced by the
/// placeholder, except empty values, booleans/null and `${…}` references. A reference's
/// literal default (`${DB_PASSWORD:hunter2}`) is itself a secret and is masked in place.
pub(super) fn mask_value(key: &str, value: &str) -> String {
    let v = value.trim();
    if !is_sensitive_key(key)
        || v.is_empty()
        || matches!(
            v.to_ascii_lowercase().as_str(),
            "true" | "false" | "null" | "~"
        )
    {
        return value.to_string();
    }
    if v.starts_with("${") && v.ends_with('}') {
        return mask_placeholder(v, 0);
    }
    REDACTED.to_string()
}

/// Masks the literal default of a `${NAME:default}` reference (nested references are kept,
/// with their own defaults masked, up to a small depth).
fn mask_placeholder(v: &str, depth: usize) -> String {
    if depth > 8 {
        return REDACTED.to_string();
    }
    let inner = &v[2..v.len() - 1];
    match inner.split_once(':') {
        None => v.to_string(),
        Some((_, "")) => v.to_string(),
        Some((name, default)) => {
            if default.starts_with("${") && default.ends_with('}') {
                format!("${{{name}:{}}}", mask_placeholder(default, depth + 1))
            } else {
                format!("${{{name}:{REDACTED}}}")
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The scanner
// ---------------------------------------------------------------------------------------------

/// Nesting deeper than this is ignored (lines are skipped, not parsed).
const MAX_DEPTH: usize = 64;
/// At most this many entries per file; scanning stops there.
const MAX_ENTRIES: usize = 100_000;
/// Multi-line values (block scalars, multi-line quoted or flow values) are cut at this size.
const MAX_VALUE: usize = 4096;
/// A multi-line quoted or flow value may span at most this many lines.
const MAX_VALUE_LINES: usize = 500;

/// One step of a key path: a mapping key or a sequence index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Seg {
    Key(String),
    Index(usize),
}

/// One key or sequence item of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Entry {
    /// Document number within the file (increases at each `---` / `...`; may skip).
    pub(super) doc: usize,
    pub(super) path: Vec<Seg>,
    /// The scalar value; `None` for a mapping or sequence with children.
    pub(super) value: Option<String>,
    pub(super) line: u32,
    /// The last line of the entry's subtree (or of a multi-line value).
    end_line: u32,
}

/// An open node on the indentation stack.
#[derive(Debug)]
struct Node {
    indent: usize,
    seg: Seg,
    /// A sequence item (`- …`).
    item: bool,
    /// Holds a scalar: deeper lines are continuation text, not children.
    leaf: bool,
    /// Index of its entry (for `end_line` and empty-value fixup).
    entry: usize,
    has_child: bool,
    seq_next: usize,
}

struct Scanner<'a> {
    lines: Vec<&'a str>,
    idx: usize,
    doc: usize,
    stack: Vec<Node>,
    root_seq: usize,
    entries: Vec<Entry>,
    last_line: u32,
}

/// Flattens every document of `text` into entries, in line order.
fn scan(text: &str) -> Vec<Entry> {
    let mut s = Scanner {
        lines: text
            .split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
            .collect(),
        idx: 0,
        doc: 0,
        stack: Vec::new(),
        root_seq: 0,
        entries: Vec::new(),
        last_line: 0,
    };
    s.run();
    s.entries
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// Removes a `#` comment (at the start or after whitespace, outside quotes) from a line.
fn strip_comment(line: &str) -> &str {
    let b = line.as_bytes();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(b'"') => {
                if c == b'\\' {
                    i += 1;
                } else if c == b'"' {
                    quote = None;
                }
            }
            Some(_) => {
                if c == b'\'' {
                    if b.get(i + 1) == Some(&b'\'') {
                        i += 1;
                    } else {
                        quote = None;
                    }
                }
            }
            None => {
                let at_token_start =
                    i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'[' | b'{' | b',');
                if c == b'#' && (i == 0 || matches!(b[i - 1], b' ' | b'\t')) {
                    return &line[..i];
                }
                if (c == b'"' || c == b'\'') && at_token_start {
                    quote = Some(c);
                }
            }
        }
        i += 1;
    }
    line
}

/// Splits `key: value` (the colon followed by a space or the end). Returns the raw key and the
/// raw value (trimmed), or `None` when the line is not a mapping entry.
fn split_key(rest: &str) -> Option<(String, &str)> {
    if rest.starts_with(['[', '{', '|', '>', '&', '*', '!', '%', '@', '`']) {
        return None;
    }
    let b = rest.as_bytes();
    let after_key = if b.first().is_some_and(|&c| c == b'"' || c == b'\'') {
        let q = b[0];
        let mut i = 1;
        while i < b.len() && b[i] != q {
            if q == b'"' && b[i] == b'\\' {
                i += 1;
            }
            i += 1;
        }
        if i >= b.len() {
            return None;
        }
        let key = unquote(&rest[..=i]);
        let tail = rest[i + 1..].trim_start();
        let value = tail.strip_prefix(':')?;
        if !(value.is_empty() || value.starts_with([' ', '\t'])) {
            return None;
        }
        return Some((key, value.trim()));
    } else {
        let mut found = None;
        for (i, &c) in b.iter().enumerate() {
            if c == b':' && (i + 1 == b.len() || matches!(b[i + 1], b' ' | b'\t')) {
                found = Some(i);
                break;
            }
        }
        found?
    };
    let key = rest[..after_key].trim();
    if key.is_empty() {
        return None;
    }
    Some((key.to_string(), rest[after_key + 1..].trim()))
}

/// Removes the quotes of a quoted scalar (with the usual escapes); plain scalars are returned
/// trimmed.
fn unquote(v: &str) -> String {
    let v = v.trim();
    if v.len() >= 2 && v.starts_with('\'') && v.ends_with('\'') {
        return v[1..v.len() - 1].replace("''", "'");
    }
    if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') {
        let inner = &v[1..v.len() - 1];
        return unescape_with(inner, |next, chars, out| match next {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => {
                        out.push_str("\\u");
                        out.push_str(&hex);
                    }
                }
            }
            Some(other) => out.push(other),
            None => out.push('\\'),
        });
    }
    v.to_string()
}

/// Removes a leading anchor (`&name`) and tag (`!tag`, `!!str`) from a value.
fn strip_properties(mut v: &str) -> &str {
    for _ in 0..2 {
        if v.starts_with('&') || v.starts_with('!') {
            v = v.find([' ', '\t']).map_or("", |i| v[i..].trim_start());
        }
    }
    v
}

/// Bracket balance of a flow value (outside quotes): positive while still open.
fn flow_balance(s: &str) -> i64 {
    let mut depth = 0i64;
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for c in s.chars() {
        match quote {
            Some(q) => {
                if c == q && prev != '\\' {
                    quote = None;
                }
            }
            None => match c {
                '[' | '{' => depth += 1,
                ']' | '}' => depth -= 1,
                '"' | '\'' => quote = Some(c),
                _ => {}
            },
        }
        prev = c;
    }
    depth
}

/// True when a quoted value that starts with `q` is closed on this text.
fn quote_closed(s: &str, q: char) -> bool {
    let body = &s[1..];
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if q == '"' && c == '\\' {
            chars.next();
        } else if c == q {
            if q == '\'' && chars.peek() == Some(&'\'') {
                chars.next();
            } else {
                return true;
            }
        }
    }
    false
}

fn cap(mut s: String) -> String {
    if s.len() > MAX_VALUE {
        let mut end = MAX_VALUE;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

impl Scanner<'_> {
    fn run(&mut self) {
        while self.idx < self.lines.len() && self.entries.len() < MAX_ENTRIES {
            let raw = self.lines[self.idx];
            let lno = self.idx as u32 + 1;
            self.idx += 1;
            if raw.starts_with("---") && raw[3..].chars().next().is_none_or(char::is_whitespace) {
                self.end_document();
                continue;
            }
            if raw.trim_end() == "..." {
                self.end_document();
                continue;
            }
            if raw.starts_with('%') {
                continue;
            }
            let content = strip_comment(raw).trim_end();
            if content.trim().is_empty() {
                continue;
            }
            let indent = indent_of(content);
            // Continuation of a scalar held by the innermost node.
            if self
                .stack
                .last()
                .is_some_and(|n| n.leaf && indent > n.indent)
            {
                self.last_line = lno;
                continue;
            }
            self.line(indent, &content[indent..], lno);
        }
        self.end_document();
    }

    fn end_document(&mut self) {
        while !self.stack.is_empty() {
            self.pop();
        }
        self.doc += 1;
        self.root_seq = 0;
    }

    fn pop(&mut self) {
        if let Some(n) = self.stack.pop() {
            let last = self.last_line;
            let e = &mut self.entries[n.entry];
            e.end_line = e.end_line.max(last);
            if !n.has_child && e.value.is_none() {
                e.value = Some(String::new());
            }
        }
    }

    fn path(&self, seg: Seg) -> Vec<Seg> {
        let mut p: Vec<Seg> = self.stack.iter().map(|n| n.seg.clone()).collect();
        p.push(seg);
        p
    }

    /// Records an entry for `seg` under the current stack top and pushes its node.
    fn push(&mut self, indent: usize, seg: Seg, item: bool, value: Option<String>, lno: u32) {
        let leaf = value.is_some();
        let path = self.path(seg.clone());
        if let Some(top) = self.stack.last_mut() {
            top.has_child = true;
        }
        self.entries.push(Entry {
            doc: self.doc,
            path,
            value,
            line: lno,
            end_line: lno,
        });
        self.stack.push(Node {
            indent,
            seg,
            item,
            leaf,
            entry: self.entries.len() - 1,
            has_child: false,
            seq_next: 0,
        });
    }

    /// Handles one content line (`rest` starts at column `indent`).
    fn line(&mut self, mut indent: usize, mut rest: &str, lno: u32) {
        // Sequence items, possibly nested on one line (`- - a`).
        while rest == "-" || rest.starts_with("- ") || rest.starts_with("-\t") {
            while self
                .stack
                .last()
                .is_some_and(|n| n.indent > indent || (n.indent == indent && (n.item || n.leaf)))
            {
                self.pop();
            }
            self.last_line = lno;
            if self.stack.len() >= MAX_DEPTH {
                return;
            }
            let index = match self.stack.last_mut() {
                Some(top) => {
                    top.seq_next += 1;
                    top.seq_next - 1
                }
                None => {
                    self.root_seq += 1;
                    self.root_seq - 1
                }
            };
            let after = &rest[1..];
            let body = after.trim_start();
            let new_indent = indent + 1 + (after.len() - body.len());
            if body.is_empty() {
                self.push(indent, Seg::Index(index), true, None, lno);
                return;
            }
            if body == "-" || body.starts_with("- ") || split_key(body).is_some() {
                self.push(indent, Seg::Index(index), true, None, lno);
                indent = new_indent;
                rest = body;
                continue;
            }
            let value = self.value(body, indent);
            self.push(indent, Seg::Index(index), true, Some(value), lno);
            self.fix_end(lno);
            return;
        }

        while self.stack.last().is_some_and(|n| n.indent >= indent) {
            self.pop();
        }
        self.last_line = lno;
        if self.stack.len() >= MAX_DEPTH {
            return;
        }
        let Some((key, raw)) = split_key(rest) else {
            // A bare scalar or flow collection where a key was expected: not a key.
            return;
        };
        let raw = strip_properties(raw);
        if raw.is_empty() {
            self.push(indent, Seg::Key(key), false, None, lno);
        } else {
            let value = self.value(raw, indent);
            self.push(indent, Seg::Key(key), false, Some(value), lno);
            self.fix_end(lno);
        }
    }

    /// After a multi-line value, the entry just pushed ends on the last line consumed.
    fn fix_end(&mut self, lno: u32) {
        let end = (self.idx as u32).max(lno);
        if let Some(e) = self.entries.last_mut() {
            e.end_line = end;
        }
        self.last_line = end;
    }

    /// Reads a scalar value starting with `raw` (already without anchor/tag), consuming the
    /// following lines of a block scalar or an unclosed quoted/flow value. `indent` is the
    /// column of the key or dash that owns the value.
    fn value(&mut self, raw: &str, indent: usize) -> String {
        let first = raw.chars().next().unwrap_or(' ');
        if (first == '|' || first == '>')
            && raw[1..]
                .chars()
                .all(|c| c == '+' || c == '-' || c.is_ascii_digit())
        {
            return self.block_scalar(first == '|', indent);
        }
        if first == '"' || first == '\'' {
            if quote_closed(raw, first) {
                return unquote(raw);
            }
            let mut text = raw.to_string();
            let mut n = 0;
            while self.idx < self.lines.len() && n < MAX_VALUE_LINES {
                let l = self.lines[self.idx].trim();
                self.idx += 1;
                n += 1;
                text.push(' ');
                text.push_str(l);
                if quote_closed(&text, first) || text.len() > MAX_VALUE {
                    break;
                }
            }
            return cap(unquote(&text));
        }
        if first == '[' || first == '{' {
            let mut text = raw.to_string();
            let mut n = 0;
            while flow_balance(&text) > 0
                && self.idx < self.lines.len()
                && n < MAX_VALUE_LINES
                && text.len() <= MAX_VALUE
            {
                let l = strip_comment(self.lines[self.idx]).trim();
                self.idx += 1;
                n += 1;
                text.push(' ');
                text.push_str(l);
            }
            return cap(text);
        }
        raw.trim().to_string()
    }

    /// Consumes the lines of a `|` (literal) or `>` (folded) block scalar owned by a key at
    /// column `indent`: every following line that is blank or indented deeper.
    fn block_scalar(&mut self, literal: bool, indent: usize) -> String {
        let mut parts: Vec<&str> = Vec::new();
        let mut base: Option<usize> = None;
        let mut size = 0;
        while self.idx < self.lines.len() {
            let l = self.lines[self.idx];
            if !l.trim().is_empty() {
                let ind = indent_of(l);
                if ind <= indent {
                    break;
                }
                let b = *base.get_or_insert(ind);
                if size <= MAX_VALUE {
                    let cut = b.min(ind);
                    parts.push(&l[cut..]);
                    size += l.len();
                }
            } else if size <= MAX_VALUE {
                parts.push("");
            }
            self.idx += 1;
        }
        while parts.last().is_some_and(|p| p.trim().is_empty()) {
            parts.pop();
        }
        // Blank lines after the block are not part of its span.
        while self.idx > 0 && self.lines[self.idx - 1].trim().is_empty() && !parts.is_empty() {
            self.idx -= 1;
        }
        cap(parts.join(if literal { "\n" } else { " " }))
    }
}

// ---------------------------------------------------------------------------------------------
// Recognisers
// ---------------------------------------------------------------------------------------------

/// Dotted key of a path: `spring.datasource.url`, list items as `servers[0].url`.
fn flat_key(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
    out
}

/// Spring config by name (`application*.yml`, `bootstrap*.yml`), or any YAML under
/// `src/main/resources/` that is not an API document. `lower` is the lowercased path.
fn is_spring_path(lower: &str, api_document: bool) -> bool {
    let name = lower.rsplit('/').next().unwrap_or(lower);
    let yaml = name.ends_with(".yml") || name.ends_with(".yaml");
    let named = name.starts_with("application") || name.starts_with("bootstrap");
    yaml && (named || (!api_document && lower.contains("src/main/resources/")))
}

/// Every scalar of every document as a flattened, masked property. Merge keys (`<<`) and
/// root-level sequence items are not properties.
fn spring_properties(entries: &[Entry]) -> Vec<Property> {
    entries
        .iter()
        .filter(|e| matches!(e.path.first(), Some(Seg::Key(_))))
        .filter(|e| !e.path.iter().any(|s| *s == Seg::Key("<<".to_string())))
        .filter_map(|e| {
            let value = e.value.as_ref()?;
            let key = flat_key(&e.path);
            Some(Property {
                value: mask_value(&key, value),
                key,
                line: e.line,
            })
        })
        .collect()
}

fn key_at(e: &Entry, i: usize) -> Option<&str> {
    match e.path.get(i) {
        Some(Seg::Key(k)) => Some(k.as_str()),
        _ => None,
    }
}

/// OpenAPI 3 / Swagger 2: one route and one endpoint symbol per `paths.<path>.<verb>`, the
/// handler being the `operationId`. A Swagger 2 `basePath` is joined in front of the path.
fn openapi_facts(entries: &[Entry], facts: &mut FileFacts) {
    const VERBS: [&str; 8] = [
        "get", "put", "post", "delete", "options", "head", "patch", "trace",
    ];
    for e in entries {
        if e.path.len() != 3 || key_at(e, 0) != Some("paths") {
            continue;
        }
        let (Some(p), Some(verb)) = (key_at(e, 1), key_at(e, 2)) else {
            continue;
        };
        let verb = verb.to_ascii_lowercase();
        if !VERBS.contains(&verb.as_str()) {
            continue;
        }
        let base = entries
            .iter()
            .find(|b| b.doc == e.doc && b.path.len() == 1 && key_at(b, 0) == Some("basePath"))
            .and_then(|b| b.value.as_deref())
            .map(|b| b.trim_end_matches('/'))
            .unwrap_or("");
        let path = format!("{base}{p}");
        let handler = entries
            .iter()
            .find(|h| {
                h.doc == e.doc
                    && h.path.len() == 4
                    && h.path[..3] == e.path[..]
                    && key_at(h, 3) == Some("operationId")
            })
            .and_then(|h| h.value.clone())
            .filter(|h| !h.is_empty());
        let method = verb.to_ascii_uppercase();
        facts.symbols.push(Symbol {
            name: format!("{method} {path}"),
            kind: SymbolKind::Endpoint,
            line: e.line,
            end_line: e.end_line,
            doc_line: None,
            container: None,
        });
        facts.http.push(HttpFact::Route {
            method,
            path,
            handler,
            line: e.line,
        });
    }
}

/// Load-test scenarios (Artillery's shape: `scenarios[].flow[]` items `- get: {url: "/x"}`,
/// nested in `loop`s, with `config.target` as the base URL): each request is an HTTP call at
/// its verb's line. `{{ var }}` template parts are run-time values.
fn scenario_calls(entries: &[Entry], facts: &mut FileFacts) {
    const VERBS: [&str; 7] = ["get", "put", "post", "delete", "patch", "head", "options"];
    for e in entries {
        if key_at(e, 0) != Some("scenarios") || e.path.len() < 3 {
            continue;
        }
        let Some(Seg::Key(verb)) = e.path.last() else {
            continue;
        };
        if !VERBS.contains(&verb.as_str()) {
            continue;
        }
        let Some(url) = entries
            .iter()
            .find(|u| {
                u.doc == e.doc
                    && u.path.len() == e.path.len() + 1
                    && u.path[..e.path.len()] == e.path[..]
                    && key_at(u, e.path.len()) == Some("url")
            })
            .and_then(|u| u.value.as_deref())
            .filter(|u| !u.is_empty())
        else {
            continue;
        };
        let target = entries
            .iter()
            .find(|t| {
                t.doc == e.doc
                    && t.path.len() == 2
                    && key_at(t, 0) == Some("config")
                    && key_at(t, 1) == Some("target")
            })
            .and_then(|t| t.value.as_deref())
            .unwrap_or("");
        let mut value = Value::default();
        if url.starts_with('/') {
            value.push(Part::Lit(target.trim_end_matches('/').to_string()));
        }
        let mut rest = url;
        while let Some(open) = rest.find("{{") {
            value.push(Part::Lit(rest[..open].to_string()));
            value.push(Part::Dynamic);
            rest = rest[open..]
                .find("}}")
                .map_or("", |c| &rest[open + c + 2..]);
        }
        value.push(Part::Lit(rest.to_string()));
        facts.http.push(HttpFact::Call {
            method: Some(verb.to_ascii_uppercase()),
            url: value,
            line: e.line,
        });
    }
}

/// Decodes a local JSON-pointer reference to a channel (`#/channels/user~1signedup`).
fn channel_ref(r: &str) -> Option<String> {
    let id = r.strip_prefix("#/channels/")?;
    if id.is_empty() || id.contains('/') {
        return None;
    }
    Some(id.replace("~1", "/").replace("~0", "~"))
}

/// AsyncAPI 2 and 3: channels as topic symbols, operations as events (see [`extract`] for the
/// role convention). In AsyncAPI 3 the topic is the channel's `address` when it has one.
fn asyncapi_facts(entries: &[Entry], facts: &mut FileFacts) {
    for e in entries {
        if e.path.len() == 1 && key_at(e, 0) == Some("asyncapi") {
            let v3 = e.value.as_deref().is_some_and(|v| v.starts_with('3'));
            asyncapi_document(entries, e.doc, v3, facts);
        }
    }
    // A file named asyncapi without the version key: read it as AsyncAPI 2.
    if !entries
        .iter()
        .any(|e| e.path.len() == 1 && key_at(e, 0) == Some("asyncapi"))
        && let Some(first) = entries.first()
    {
        asyncapi_document(entries, first.doc, false, facts);
    }
}

fn asyncapi_document(entries: &[Entry], doc: usize, v3: bool, facts: &mut FileFacts) {
    let doc_entries = || entries.iter().filter(move |e| e.doc == doc);
    let address = |channel: &str| -> Option<String> {
        doc_entries()
            .find(|a| {
                a.path.len() == 3
                    && key_at(a, 0) == Some("channels")
                    && key_at(a, 1) == Some(channel)
                    && key_at(a, 2) == Some("address")
            })
            .and_then(|a| a.value.clone())
            .filter(|a| !a.is_empty() && a != "null" && a != "~")
    };
    let topic_of = |channel: &str| {
        if v3 {
            address(channel).unwrap_or_else(|| channel.to_string())
        } else {
            channel.to_string()
        }
    };
    for e in doc_entries() {
        if key_at(e, 0) != Some("channels") {
            continue;
        }
        let Some(channel) = key_at(e, 1) else {
            continue;
        };
        if e.path.len() == 2 {
            facts.symbols.push(Symbol {
                name: topic_of(channel),
                kind: SymbolKind::Topic,
                line: e.line,
                end_line: e.end_line,
                doc_line: None,
                container: None,
            });
        } else if e.path.len() == 3 && !v3 {
            let role = match key_at(e, 2) {
                Some("publish") => EventRole::Consumer,
                Some("subscribe") => EventRole::Producer,
                _ => continue,
            };
            facts.events.push(EventFact {
                role,
                topic: Value::lit(channel.to_string()),
                via: "asyncapi".to_string(),
                line: e.line,
            });
        }
    }
    if !v3 {
        return;
    }
    for op in doc_entries() {
        if op.path.len() != 2 || key_at(op, 0) != Some("operations") {
            continue;
        }
        let field = |name: &str, len: usize| {
            doc_entries()
                .find(|f| {
                    f.path.len() == len
                        && f.path[..2] == op.path[..]
                        && key_at(f, 2) == Some(name)
                        && (len == 3 || key_at(f, 3) == Some("$ref"))
                })
                .and_then(|f| f.value.clone())
        };
        let role = match field("action", 3).as_deref() {
            Some("send") => EventRole::Producer,
            Some("receive") => EventRole::Consumer,
            _ => continue,
        };
        let Some(channel) = field("channel", 4).as_deref().and_then(channel_ref) else {
            continue;
        };
        facts.events.push(EventFact {
            role,
            topic: Value::lit(topic_of(&channel)),
            via: "asyncapi".to_string(),
            line: op.line,
        });
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn load_test_scenarios_are_http_calls_at_their_verb() {
        let src = "config:\n  target: \"http://localhost:8888\"\nscenarios:\n  - name: t\n    flow:\n      - get:\n          url: \"/home\"\n      - loop:\n          - get:\n              url: \"/catalog/{{ $loopElement }}\"\n        over: all\n      - post:\n          url: \"/cart\"\n          form:\n            get: x\n";
        let f = extract("load/scenario.yml", src);
        let calls: Vec<(String, String, u32)> = f
            .http
            .iter()
            .filter_map(|h| match h {
                HttpFact::Call { method, url, line } => Some((
                    method.clone().unwrap_or_default(),
                    format!("{url:?}"),
                    *line,
                )),
                _ => None,
            })
            .collect();
        assert_eq!(calls.len(), 3, "{calls:?}");
        assert_eq!((calls[0].0.as_str(), calls[0].2), ("GET", 6));
        assert!(
            calls[0].1.contains("http://localhost:8888/home"),
            "{calls:?}"
        );
        assert_eq!((calls[1].0.as_str(), calls[1].2), ("GET", 9));
        assert!(calls[1].1.contains("Dynamic"), "{calls:?}");
        assert_eq!((calls[2].0.as_str(), calls[2].2), ("POST", 12));
        // Without a `scenarios` key a `get: {url:}` mapping is configuration, not a call.
        let f = extract("conf.yml", "probe:\n  get:\n    url: /health\n");
        assert!(f.http.is_empty());
    }
    use super::*;
    use crate::index::lang::test_support::{assert_properties, names, properties, topics};

    #[test]
    fn spring_flattening_and_masking() {
        let doc = r#"# comment
spring:
  application:
    name: orders # trailing comment
  datasource:
    url: "jdbc:postgresql://db:5432/orders"
    username: app
    password: hunter2
  kafka:
    bootstrap-servers: [a:9092, b:9092]
    properties:
      sasl.jwt.token: ${KAFKA_TOKEN}
app:
  topics:
    - orders.created
    - name: orders.paid
      partitions: 3
  api-key: 'sk_live_1'
  signing.key: ${SIGNING_KEY:abc123}
  cache.key: plain
  secret-enabled: true
  empty-secret:
  note: it's # fine
  hash: "a # not a comment"
  script: |
    line one
    line two
  folded: >
    a
    b
server.port: 8080
"#;
        assert_properties(
            &extract("services/orders/src/main/resources/application.yml", doc),
            &[
                ("spring.application.name", "orders", 4),
                (
                    "spring.datasource.url",
                    "jdbc:postgresql://db:5432/orders",
                    6,
                ),
                ("spring.datasource.username", "app", 7),
                ("spring.datasource.password", REDACTED, 8),
                ("spring.kafka.bootstrap-servers", "[a:9092, b:9092]", 10),
                (
                    "spring.kafka.properties.sasl.jwt.token",
                    "${KAFKA_TOKEN}",
                    12,
                ),
                ("app.topics[0]", "orders.created", 15),
                ("app.topics[1].name", "orders.paid", 16),
                ("app.topics[1].partitions", "3", 17),
                ("app.api-key", REDACTED, 18),
                (
                    "app.signing.key",
                    "${SIGNING_KEY:[REDACTED_SECRET: USE_ENV_OR_LOCAL_FALLBACK]}",
                    19,
                ),
                ("app.cache.key", "plain", 20),
                ("app.secret-enabled", "true", 21),
                ("app.empty-secret", "", 22),
                ("app.note", "it's", 23),
                ("app.hash", "a # not a comment", 24),
                ("app.script", "line one\nline two", 25),
                ("app.folded", "a b", 28),
                ("server.port", "8080", 31),
            ],
        );
    }

    #[test]
    fn spring_detection_and_documents() {
        let doc = "a: 1\n---\nspring:\n  config.activate.on-profile: prod\nb: 2\n...\n";
        assert_properties(
            &extract("config/application-prod.yaml", doc),
            &[
                ("a", "1", 1),
                ("spring.config.activate.on-profile", "prod", 4),
                ("b", "2", 5),
            ],
        );
        assert_eq!(extract("bootstrap.yml", "x: 1").properties.len(), 1);
        assert!(extract("deploy/k8s.yaml", "x: 1").properties.is_empty());
        assert!(
            extract("src/main/resources/openapi.yaml", "openapi: 3.0.0")
                .properties
                .is_empty()
        );
    }

    #[test]
    fn sensitive_keys() {
        for k in [
            "db.password",
            "client-secret",
            "auth.token-uri",
            "aws.access_key",
            "stripe.api.key",
            "my_private_thing",
            "x.encrypt-key",
            "ssl.cert",
        ] {
            assert!(is_sensitive_key(k), "{k}");
        }
        for k in [
            "cache.key",
            "spring.kafka.key-serializer",
            "name",
            "key",
            "monkey",
        ] {
            assert!(!is_sensitive_key(k), "{k}");
        }
        assert_eq!(mask_value("password", "${DB_PASS}"), "${DB_PASS}");
        assert_eq!(mask_value("password", "${DB_PASS:}"), "${DB_PASS:}");
        assert_eq!(
            mask_value("password", "${A:${B:x}}"),
            format!("${{A:${{B:{REDACTED}}}}}")
        );
        assert_eq!(mask_value("password", "FALSE"), "FALSE");
        assert_eq!(mask_value("password", "pre-${X}"), REDACTED);
        assert_eq!(mask_value("user", "x"), "x");
    }

    #[test]
    fn scanner_shapes() {
        let doc = "k8s:\n- a\n- b:\n    c: 1\n  d: &anchor 2\nroot: *anchor\nmerge:\n  <<: *base\n  e: !!str 5\n\"quoted key\": 'it''s'\nmulti: \"one\n  two\"\nflow: {a: 1,\n  b: 2}\nafter: x\n";
        assert_properties(
            &extract("application.yml", doc),
            &[
                ("k8s[0]", "a", 2),
                ("k8s[1].b.c", "1", 4),
                ("k8s[1].d", "2", 5),
                ("root", "*anchor", 6),
                ("merge.e", "5", 9),
                ("quoted key", "it's", 10),
                ("multi", "one two", 11),
                ("flow", "{a: 1, b: 2}", 13),
                ("after", "x", 15),
            ],
        );
    }

    #[test]
    fn entry_spans() {
        let e = scan("a:\n  b: 1\n\n  c: |\n    x\n\n    y\n\nd: 2\n");
        let span = |k: &str| {
            e.iter()
                .find(|x| flat_key(&x.path) == k)
                .map(|x| (x.line, x.end_line))
        };
        assert_eq!(span("a"), Some((1, 7)));
        assert_eq!(span("a.c"), Some((4, 7)));
        assert_eq!(span("d"), Some((9, 9)));
    }

    #[test]
    fn openapi_routes() {
        let doc = r#"openapi: 3.0.3
info:
  title: Orders
paths:
  /orders/{id}:
    parameters:
      - name: id
    get:
      operationId: getOrder
      responses:
        "200":
          description: ok
    delete:
      summary: no id
  "/orders":
    post:
      operationId: "createOrder"
components:
  schemas:
    get:
      type: object
"#;
        let f = extract("api/orders.yaml", doc);
        assert_eq!(
            f.http,
            vec![
                HttpFact::Route {
                    method: "GET".into(),
                    path: "/orders/{id}".into(),
                    handler: Some("getOrder".into()),
                    line: 8
                },
                HttpFact::Route {
                    method: "DELETE".into(),
                    path: "/orders/{id}".into(),
                    handler: None,
                    line: 13
                },
                HttpFact::Route {
                    method: "POST".into(),
                    path: "/orders".into(),
                    handler: Some("createOrder".into()),
                    line: 16
                },
            ]
        );
        let s: Vec<_> = f
            .symbols
            .iter()
            .map(|s| (s.name.as_str(), s.kind, s.line, s.end_line))
            .collect();
        assert_eq!(
            s,
            vec![
                ("GET /orders/{id}", SymbolKind::Endpoint, 8, 12),
                ("DELETE /orders/{id}", SymbolKind::Endpoint, 13, 14),
                ("POST /orders", SymbolKind::Endpoint, 16, 17),
            ]
        );
        assert!(f.properties.is_empty());

        let swagger = "swagger: '2.0'\nbasePath: /api/v1/\npaths:\n  /users:\n    get: {}\n";
        let f = extract("x/spec.yml", swagger);
        assert_eq!(f.symbols[0].name, "GET /api/v1/users");
        // Detected by path even without the version key.
        let f = extract("openapi/partial.yaml", "paths:\n  /a:\n    put:\n");
        assert_eq!(f.symbols[0].name, "PUT /a");
    }

    #[test]
    fn asyncapi_v2() {
        let doc = "asyncapi: 2.6.0\nchannels:\n  orders.created:\n    publish:\n      message:\n        name: x\n  orders/{id}/paid:\n    subscribe:\n      operationId: onPaid\n";
        let f = extract("asyncapi.yaml", doc);
        let s: Vec<_> = f
            .symbols
            .iter()
            .map(|s| (s.name.as_str(), s.kind, s.line, s.end_line))
            .collect();
        assert_eq!(
            s,
            vec![
                ("orders.created", SymbolKind::Topic, 3, 6),
                ("orders/{id}/paid", SymbolKind::Topic, 7, 9),
            ]
        );
        assert_eq!(
            f.events,
            vec![
                EventFact {
                    role: EventRole::Consumer,
                    topic: Value::lit("orders.created"),
                    via: "asyncapi".into(),
                    line: 4
                },
                EventFact {
                    role: EventRole::Producer,
                    topic: Value::lit("orders/{id}/paid"),
                    via: "asyncapi".into(),
                    line: 8
                },
            ]
        );
    }

    #[test]
    fn asyncapi_v3() {
        let doc = r##"asyncapi: 3.0.0
channels:
  userSignedUp:
    address: user.signedup
  user~1raw:
    messages: {}
operations:
  sendSignup:
    action: send
    channel:
      $ref: '#/channels/userSignedUp'
  onRaw:
    action: receive
    channel:
      $ref: "#/channels/user~01raw"
  broken:
    action: receive
"##;
        let f = extract("docs/events.yaml", doc);
        assert_eq!(names(&f), vec!["user.signedup", "user~1raw"]);
        assert_eq!(
            topics(&f),
            vec![
                (EventRole::Producer, Value::lit("user.signedup"), 8),
                (EventRole::Consumer, Value::lit("user~1raw"), 12),
            ]
        );
    }

    #[test]
    fn other_yaml_and_hostile_input() {
        let k8s = "apiVersion: v1\nkind: Service\n---\napiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n        - name: app\n          env:\n            - name: PASSWORD\n              value: x\n";
        // A manifest is not configuration: only the variables it sets, secrets masked.
        let f = extract("deploy/k8s.yaml", k8s);
        assert_eq!(f.env_settings.len(), 1);
        assert_eq!(f.env_settings[0].value, REDACTED);
        assert_eq!(
            FileFacts {
                env_settings: Vec::new(),
                ..f
            },
            FileFacts::default()
        );

        let mut deep = String::new();
        for i in 0..2_000 {
            deep.push_str(&" ".repeat(i));
            deep.push_str("k:\n");
        }
        let e = scan(&deep);
        assert_eq!(e.len(), MAX_DEPTH);
        let dashes = "- ".repeat(10_000) + "x";
        assert!(scan(&dashes).len() <= MAX_DEPTH);
        let laughs = "a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b, *b]\n";
        assert_eq!(
            properties(&extract("application.yml", laughs))[2].1,
            "[*b, *b, *b]"
        );
        let long = format!("application:\n  k: {}\n", "v".repeat(1 << 20));
        assert_eq!(
            properties(&extract("application.yml", &long))[0].1.len(),
            1 << 20
        );
        for junk in [
            "\u{0}\u{1}: \u{fffd}\n\t- :\n",
            "a: \"unterminated\n",
            "a: [unclosed\n",
            "a: |\n",
            "? complex\n: value\n",
            "- - - -\n",
            ":\n-\n---\n---\n",
            "",
        ] {
            let _ = extract("application.yml", junk);
            let _ = extract("openapi.yaml", junk);
            let _ = extract("asyncapi.yaml", junk);
        }
        let many = "a: 1\n".repeat(MAX_ENTRIES + 10);
        assert_eq!(scan(&many).len(), MAX_ENTRIES);
    }
}
