//! Rust extractor: items (functions, methods in `impl`/`trait` blocks, structs, enums and
//! their variants, traits, modules, consts/statics, type aliases, `macro_rules!`), `use`
//! imports, tonic gRPC servers/clients/calls, rdkafka producers and consumers, axum/actix
//! routes and reqwest calls.
//!
//! One lex pass, then token scans: an item walk that keeps `impl`/`trait`/`mod` scopes on an
//! explicit stack and skips function bodies whole; the shared assignment tracker
//! ([`Assignments`]) for what a `let` or a field holds; one pass for servers, clients, events
//! and routes; one pass for calls on the client variables found. Topics, URLs and constants
//! are read by the shared evaluator ([`eval`]).

use std::collections::{HashMap, HashSet};

use super::bind::{Assign, Assignments, StmtStyle};
use super::common::{join_path, looks_like_topic, looks_like_url};
use super::tokens::{Rules, Tokens};
use super::value::{ExprRules, eval};
use crate::index::facts::{
    Binding, EventFact, EventRole, FileFacts, GrpcFact, HttpFact, Import, Part, Symbol, SymbolKind,
    Value,
};
use crate::index::lex::{Syntax, lex};

/// Extracts the facts of one Rust file. Rust has no package declaration (`package` stays
/// `None`); `path` is unused.
///
/// Conventions: a `macro_rules!` macro is a `Function`; a function in an `impl` or `trait`
/// block is a `Method` whose container is the implementing type (`impl Display for Wrapper<T>`
/// gives `Wrapper`), one in a `mod` block a `Function` contained by the module. A `use` gives
/// one import: the path before the last segment or group is the module, the leaf names are
/// the names (`use a::b::{c, d as e}` → `a::b` with `c`, `d`). Paths in topic references and
/// associated constants are written with dots (`Topics::ORDERS` → `Topics.ORDERS`), the
/// contract's separator.
pub fn extract(path: &str, text: &str) -> FileFacts {
    let _ = path;
    let lexed = lex(Syntax::RUST, text);
    let t = Tokens::new(&lexed, &Rules::C_FAMILY);
    let asg = Assignments::scan(&t, &StmtStyle::SEMICOLON);
    let code = lexed.code.as_str();
    let mut rs = Rs {
        t: &t,
        asg: &asg,
        facts: FileFacts::default(),
        funcs: Vec::new(),
        structs: Vec::new(),
        impls: Vec::new(),
        server_names: HashSet::new(),
        client_names: HashSet::new(),
        bindings: HashMap::new(),
        prefix_stack: Vec::new(),
        tonic: code.contains("tonic"),
        rdkafka: code.contains("rdkafka"),
        http_client: ["reqwest", "ureq", "surf", "isahc"]
            .iter()
            .any(|c| code.contains(c)),
    };
    rs.items();
    rs.servers_from_impls();
    rs.patterns();
    rs.calls();
    // Attribute routes are found by the item walk, the others by the pattern pass.
    crate::order::sort_by_key(&mut rs.facts.http, |h| match h {
        HttpFact::Route { line, .. } | HttpFact::Call { line, .. } => *line,
    });
    let mut facts = rs.facts;
    asg.export(&t, &ExprRules::RUST, &mut facts);
    crate::order::sort_by_key(&mut facts.bindings, |b| b.line);
    facts
}

/// A function item: its parameter group and body, for scoping.
#[derive(Debug, Clone, Copy)]
struct Func {
    start: usize,
    params: Option<(usize, usize)>,
    body: Option<(usize, usize)>,
}

/// What a scope on the item walk's stack is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScopeKind {
    Impl,
    Trait,
    Mod,
    /// `extern "C" { … }`: transparent.
    Block,
}

#[derive(Debug, Clone, Copy)]
struct Frame<'a> {
    /// Token index of the closing `}` (the token count when unclosed).
    end: usize,
    kind: ScopeKind,
    name: Option<&'a str>,
}

/// An `impl` header, resolved to gRPC servers once every `use` has been seen.
#[derive(Debug, Clone)]
struct ImplHeader<'a> {
    /// The trait path's segments (`orders_server`, `Orders`), empty for an inherent impl.
    trait_path: Vec<&'a str>,
    self_type: Option<&'a str>,
    line: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Global,
    /// Reached through `self.x` / `s.x`.
    Field,
    /// A local or parameter of one function, from a token index on.
    Local(usize, usize),
}

/// How far back a variable lookup walks: bounds the work on hostile input.
const LOOKBACK: usize = 64;

const ROUTE_METHODS: [&str; 9] = [
    "get", "post", "put", "delete", "patch", "head", "options", "trace", "any",
];
const HTTP_ATTRS: [&str; 9] = [
    "get", "post", "put", "delete", "patch", "head", "options", "trace", "connect",
];
/// Methods of a tonic client that are not RPCs.
const CLIENT_PLUMBING: [&str; 12] = [
    "clone",
    "send_compressed",
    "accept_compressed",
    "send_gzip",
    "accept_gzip",
    "max_decoding_message_size",
    "max_encoding_message_size",
    "ready",
    "as_mut",
    "as_ref",
    "lock",
    "into_inner",
];

struct Rs<'t, 'l, 'a> {
    t: &'t Tokens<'l, 'a>,
    /// Every `let` and assignment of the file, for what a name holds at a use.
    asg: &'t Assignments,
    facts: FileFacts,
    funcs: Vec<Func>,
    /// Struct bodies (`{` and `}` token indices), in order.
    structs: Vec<(usize, usize)>,
    impls: Vec<ImplHeader<'a>>,
    /// Names imported from a `*_server` module (`OrdersServer`, `Orders`).
    server_names: HashSet<String>,
    /// Names imported from a `*_client` module (`OrdersClient`).
    client_names: HashSet<String>,
    bindings: HashMap<&'a str, Vec<(String, Scope)>>,
    /// Path prefixes of axum `.nest("/p", …)` and actix `web::scope("/p")`: (last token, prefix).
    prefix_stack: Vec<(usize, String)>,
    tonic: bool,
    rdkafka: bool,
    http_client: bool,
}

impl<'t, 'a> Rs<'t, '_, 'a> {
    // -----------------------------------------------------------------------------------------
    // Items
    // -----------------------------------------------------------------------------------------

    fn items(&mut self) {
        let t = self.t;
        let n = t.len();
        let mut scopes: Vec<Frame<'a>> = Vec::new();
        let mut attrs: Vec<usize> = Vec::new();
        let mut i = 0;
        while i < n {
            if let Some(top) = scopes.last()
                && i >= top.end
            {
                let end = top.end;
                scopes.pop();
                if i == end {
                    i += 1;
                }
                attrs.clear();
                continue;
            }
            if t.is_punct(i, b'#') && t.is_punct(i + 1, b'[') {
                attrs.push(i + 1);
                i = t.skip_group(i + 1);
                continue;
            }
            if t.is_punct(i, b'#') && t.is_punct(i + 1, b'!') && t.is_punct(i + 2, b'[') {
                i = t.skip_group(i + 2);
                continue;
            }
            let frame = scopes.last().copied();
            let start_line = attrs.first().map_or(t.line(i), |&a| t.line(a));
            let doc_line =
                t.lx.doc_comment_above(start_line)
                    .or((!attrs.is_empty()).then_some(start_line));
            let item = Item {
                frame,
                doc_line,
                attrs: std::mem::take(&mut attrs),
            };
            // Visibility and qualifiers.
            let mut j = i;
            let mut public = false;
            if t.is(j, "pub") {
                public = true;
                j += 1;
                if t.is_punct(j, b'(') {
                    j = t.skip_group(j);
                }
            }
            let mut extern_block = false;
            loop {
                match t.ident(j) {
                    Some("async" | "unsafe" | "default" | "auto") => j += 1,
                    Some("const")
                        if t.is(j + 1, "fn") || t.is(j + 1, "unsafe") || t.is(j + 1, "async") =>
                    {
                        j += 1
                    }
                    Some("extern") if !t.is(j + 1, "crate") => {
                        j += 1;
                        if t.is_str(j) {
                            j += 1;
                        }
                        if t.is_punct(j, b'{') {
                            extern_block = true;
                            break;
                        }
                    }
                    _ => break,
                }
            }
            if extern_block {
                scopes.push(Frame {
                    end: t.close(j).unwrap_or(n),
                    kind: ScopeKind::Block,
                    name: None,
                });
                i = j + 1;
                continue;
            }
            i = match t.ident(j) {
                Some("fn") => self.func(j, &item),
                Some(kw @ ("struct" | "union")) => self.structure(j, &item, kw),
                Some("enum") => self.enumeration(j, &item),
                Some("trait") => match self.trait_item(j, &item) {
                    (next, Some(frame)) => {
                        scopes.push(frame);
                        next
                    }
                    (next, None) => next,
                },
                Some("impl") => match self.impl_item(j) {
                    (next, Some(frame)) => {
                        scopes.push(frame);
                        next
                    }
                    (next, None) => next,
                },
                Some("mod") => match self.module(j, &item) {
                    (next, Some(frame)) => {
                        scopes.push(frame);
                        next
                    }
                    (next, None) => next,
                },
                Some("const" | "static") => self.constant(j, &item),
                Some("type") => self.type_alias(j, &item),
                Some("macro_rules") if t.is_punct(j + 1, b'!') => self.macro_rules(j, &item),
                Some("use") => self.use_item(j, public),
                Some("extern") if t.is(j + 1, "crate") => self.extern_crate(j, public),
                // An item-level macro call: `lazy_static! { … }`, `include_proto!("x");`.
                Some(_) if t.is_punct(j + 1, b'!') => t.skip_group(j + 2).max(j + 1),
                _ => t.skip_group(i).max(i + 1),
            };
        }
    }

    fn push_symbol(
        &mut self,
        name: &str,
        kind: SymbolKind,
        line: u32,
        end_line: u32,
        doc_line: Option<u32>,
        container: Option<&str>,
    ) {
        self.facts.symbols.push(Symbol {
            name: name.to_string(),
            kind,
            line,
            end_line: end_line.max(line),
            doc_line,
            container: container.map(str::to_string),
        });
    }

    /// Skips a `<…>` generic list at `k` (`->` arrows inside do not close it); returns the
    /// index after it, or the index of a `{`/`;`/closer that shows the list is malformed.
    fn skip_angles(&self, k: usize) -> usize {
        let t = self.t;
        if !t.is_punct(k, b'<') {
            return k;
        }
        let mut depth = 0usize;
        let mut j = k;
        while j < t.len() {
            if t.is_punct(j, b'<') {
                depth += 1;
            } else if t.is_punct(j, b'>') && !(j > 0 && t.is_punct(j - 1, b'-') && t.joined(j - 1))
            {
                depth -= 1;
                if depth == 0 {
                    return j + 1;
                }
            } else if t.is_punct(j, b'{')
                || t.is_punct(j, b';')
                || t.is_punct(j, b'}')
                || t.is_punct(j, b')')
            {
                return j;
            } else if t.is_punct(j, b'(') || t.is_punct(j, b'[') {
                j = t.skip_group(j);
                continue;
            }
            j += 1;
        }
        j
    }

    /// From `k`, the index of the first `{` or `;` at this level (or a closer, or the end).
    fn to_body(&self, mut k: usize) -> usize {
        let t = self.t;
        while k < t.len() {
            if t.is_punct(k, b'{')
                || t.is_punct(k, b';')
                || t.is_punct(k, b'}')
                || t.is_punct(k, b')')
            {
                return k;
            }
            k = t.skip_group(k);
        }
        k
    }

    /// The end line of an item whose body or terminator is at `k`.
    fn end_line_at(&self, k: usize) -> u32 {
        let t = self.t;
        if t.is_punct(k, b'{') || t.is_punct(k, b'(') {
            t.group_end_line(k)
        } else {
            t.line(k.min(t.len().saturating_sub(1)))
        }
    }

    fn func(&mut self, j: usize, item: &Item<'a>) -> usize {
        let t = self.t;
        let n = t.len();
        let Some(name) = t.ident(j + 1) else {
            return j + 1;
        };
        let mut k = self.skip_angles(j + 2);
        let mut params = None;
        if t.is_punct(k, b'(') {
            params = Some((k, t.close(k).unwrap_or(n)));
            k = t.skip_group(k);
        }
        let k = self.to_body(k);
        let body = t.is_punct(k, b'{').then(|| (k, t.close(k).unwrap_or(n)));
        let (kind, container) = match item.frame {
            Some(Frame {
                kind: ScopeKind::Impl | ScopeKind::Trait,
                name,
                ..
            }) => (SymbolKind::Method, name),
            Some(Frame {
                kind: ScopeKind::Mod,
                name,
                ..
            }) => (SymbolKind::Function, name),
            _ => (SymbolKind::Function, None),
        };
        let line = t.line(j + 1);
        self.push_symbol(
            name,
            kind,
            line,
            self.end_line_at(k),
            item.doc_line,
            container,
        );
        self.funcs.push(Func {
            start: j,
            params,
            body,
        });
        self.attr_routes(item, name);
        if body.is_some() {
            t.skip_group(k)
        } else {
            k.max(j + 1) + usize::from(t.is_punct(k, b';'))
        }
    }

    /// actix-web / Rocket route attributes on a handler: `#[get("/orders/{id}")]`,
    /// `#[route("/x", method = "GET", method = "POST")]`.
    fn attr_routes(&mut self, item: &Item<'a>, handler: &str) {
        let t = self.t;
        for &open in &item.attrs {
            let end = t.close(open).unwrap_or(t.len());
            // The attribute's path: `get`, `actix_web::get`.
            let mut k = open + 1;
            while t.ident(k).is_some() && t.op2(k + 1, b"::") {
                k += 3;
            }
            let Some(attr) = t.ident(k) else { continue };
            if !t.is_punct(k + 1, b'(') || k + 2 >= end || !t.is_str(k + 2) {
                continue;
            }
            let Some(path) = t.str_value(k + 2) else {
                continue;
            };
            if !path.starts_with('/') {
                continue;
            }
            let mut methods = Vec::new();
            if HTTP_ATTRS.contains(&attr) {
                methods.push(attr.to_ascii_uppercase());
            } else if attr == "route" {
                for (a, b) in t.args(k + 1).into_iter().skip(1) {
                    if t.is(a, "method")
                        && t.is_punct(a + 1, b'=')
                        && b == a + 3
                        && t.is_str(a + 2)
                        && let Some(m) = t.str_value(a + 2)
                    {
                        methods.push(m.to_ascii_uppercase());
                    }
                }
                if methods.is_empty() {
                    methods.push("ANY".to_string());
                }
            } else {
                continue;
            }
            for method in methods {
                self.facts.http.push(HttpFact::Route {
                    method,
                    path: path.to_string(),
                    handler: Some(handler.to_string()),
                    line: t.line(open),
                });
            }
        }
    }

    fn structure(&mut self, j: usize, item: &Item<'a>, kw: &str) -> usize {
        let t = self.t;
        let Some(name) = t.ident(j + 1) else {
            return j + 1;
        };
        // `union` is also an ordinary identifier; only `union Name {` is an item.
        if kw == "union" && !(t.is_punct(j + 2, b'{') || t.is_punct(j + 2, b'<')) {
            return j + 1;
        }
        let mut k = self.skip_angles(j + 2);
        if t.is_punct(k, b'(') {
            k = t.skip_group(k);
        }
        let k = self.to_body(k);
        if t.is_punct(k, b'{') {
            self.structs.push((k, t.close(k).unwrap_or(t.len())));
        }
        let container = item.frame.and_then(|f| f.name);
        let line = t.line(j + 1);
        self.push_symbol(
            name,
            SymbolKind::Struct,
            line,
            self.end_line_at(k),
            item.doc_line,
            container,
        );
        t.skip_group(k).max(j + 2)
    }

    fn enumeration(&mut self, j: usize, item: &Item<'a>) -> usize {
        let t = self.t;
        let Some(name) = t.ident(j + 1) else {
            return j + 1;
        };
        let k = self.to_body(self.skip_angles(j + 2));
        let container = item.frame.and_then(|f| f.name);
        let line = t.line(j + 1);
        self.push_symbol(
            name,
            SymbolKind::Enum,
            line,
            self.end_line_at(k),
            item.doc_line,
            container,
        );
        if t.is_punct(k, b'{') {
            let end = t.close(k).unwrap_or(t.len());
            let mut v = k + 1;
            let mut at_start = true;
            let mut attr_line = None;
            while v < end {
                if t.is_punct(v, b'#') && t.is_punct(v + 1, b'[') {
                    attr_line.get_or_insert(t.line(v));
                    v = t.skip_group(v + 1);
                    continue;
                }
                if t.is_punct(v, b',') {
                    at_start = true;
                    attr_line = None;
                    v += 1;
                    continue;
                }
                if at_start && let Some(variant) = t.ident(v) {
                    let vline = t.line(v);
                    let from = attr_line.unwrap_or(vline);
                    let doc = t.lx.doc_comment_above(from).or(attr_line);
                    let vend = if t.is_punct(v + 1, b'{') || t.is_punct(v + 1, b'(') {
                        t.group_end_line(v + 1)
                    } else {
                        vline
                    };
                    self.push_symbol(variant, SymbolKind::EnumValue, vline, vend, doc, Some(name));
                }
                at_start = false;
                v = t.skip_group(v);
            }
        }
        t.skip_group(k).max(j + 2)
    }

    fn trait_item(&mut self, j: usize, item: &Item<'a>) -> (usize, Option<Frame<'a>>) {
        let t = self.t;
        let Some(name) = t.ident(j + 1) else {
            return (j + 1, None);
        };
        let k = self.to_body(self.skip_angles(j + 2));
        let line = t.line(j + 1);
        let container = item.frame.and_then(|f| f.name);
        self.push_symbol(
            name,
            SymbolKind::Trait,
            line,
            self.end_line_at(k),
            item.doc_line,
            container,
        );
        if t.is_punct(k, b'{') {
            let frame = Frame {
                end: t.close(k).unwrap_or(t.len()),
                kind: ScopeKind::Trait,
                name: Some(name),
            };
            return (k + 1, Some(frame));
        }
        (k.max(j + 2), None)
    }

    fn impl_item(&mut self, j: usize) -> (usize, Option<Frame<'a>>) {
        let t = self.t;
        let start = self.skip_angles(j + 1);
        let body = self.to_body(start);
        // `impl Trait for Type`: a `for` outside angle brackets that is not `for<'a>`.
        let mut depth = 0i32;
        let mut for_at = None;
        let mut where_at = body;
        let mut k = start;
        while k < body {
            if t.is_punct(k, b'<') {
                depth += 1;
            } else if t.is_punct(k, b'>') && !(t.is_punct(k - 1, b'-') && t.joined(k - 1)) {
                depth -= 1;
            } else if depth == 0 && t.is(k, "for") && !t.is_punct(k + 1, b'<') && for_at.is_none() {
                for_at = Some(k);
            } else if depth == 0 && t.is(k, "where") {
                where_at = k;
                break;
            }
            k = t.skip_group(k);
        }
        let (trait_range, self_range) = match for_at {
            Some(f) => (Some((start, f)), (f + 1, where_at)),
            None => (None, (start, where_at)),
        };
        let self_type = self.type_name(self_range);
        let trait_path = trait_range.map_or_else(Vec::new, |r| self.path_segments(r));
        self.impls.push(ImplHeader {
            trait_path,
            self_type,
            line: t.line(j),
        });
        if t.is_punct(body, b'{') {
            let frame = Frame {
                end: t.close(body).unwrap_or(t.len()),
                kind: ScopeKind::Impl,
                name: self_type,
            };
            return (body + 1, Some(frame));
        }
        (body.max(j + 1), None)
    }

    /// The name of a type written in `s..e`: the last path segment outside angle brackets,
    /// skipping references, lifetimes and `dyn`/`mut` (`&'a mut orders::Wrapper<T>` →
    /// `Wrapper`).
    fn type_name(&self, (s, e): (usize, usize)) -> Option<&'a str> {
        let t = self.t;
        let mut depth = 0i32;
        let mut name = None;
        let mut k = s;
        while k < e {
            if t.is_punct(k, b'<') {
                depth += 1;
            } else if t.is_punct(k, b'>') {
                depth -= 1;
            } else if t.is_punct(k, b'\'') {
                k += 2;
                continue;
            } else if depth == 0
                && let Some(id) = t.ident(k)
                && !matches!(id, "dyn" | "mut" | "impl" | "const")
            {
                name = Some(id);
            } else if t.is_punct(k, b'(') || t.is_punct(k, b'[') {
                if depth == 0 && name.is_none() {
                    return None;
                }
                k = t.skip_group(k);
                continue;
            }
            k += 1;
        }
        name
    }

    /// The `::`-separated segments of the path in `s..e` outside angle brackets.
    fn path_segments(&self, (s, e): (usize, usize)) -> Vec<&'a str> {
        let t = self.t;
        let mut depth = 0i32;
        let mut out = Vec::new();
        for k in s..e {
            if t.is_punct(k, b'<') {
                depth += 1;
            } else if t.is_punct(k, b'>') {
                depth -= 1;
            } else if depth == 0
                && let Some(id) = t.ident(k)
            {
                out.push(id);
            }
        }
        out
    }

    fn module(&mut self, j: usize, item: &Item<'a>) -> (usize, Option<Frame<'a>>) {
        let t = self.t;
        let Some(name) = t.ident(j + 1) else {
            return (j + 1, None);
        };
        let line = t.line(j + 1);
        let container = item.frame.and_then(|f| f.name);
        if t.is_punct(j + 2, b'{') {
            self.push_symbol(
                name,
                SymbolKind::Module,
                line,
                t.group_end_line(j + 2),
                item.doc_line,
                container,
            );
            let frame = Frame {
                end: t.close(j + 2).unwrap_or(t.len()),
                kind: ScopeKind::Mod,
                name: Some(name),
            };
            return (j + 3, Some(frame));
        }
        self.push_symbol(
            name,
            SymbolKind::Module,
            line,
            line,
            item.doc_line,
            container,
        );
        (j + 2, None)
    }

    /// `const NAME: T = …;` / `static [mut] NAME: T = …;`.
    fn constant(&mut self, j: usize, item: &Item<'a>) -> usize {
        let t = self.t;
        let mut k = j + 1;
        if t.is(k, "mut") {
            k += 1;
        }
        let Some(name) = t.ident(k) else {
            return k.max(j + 1);
        };
        let end = self.stmt_end(k, t.len());
        if name != "_" {
            let container = item.frame.and_then(|f| f.name);
            let line = t.line(k);
            let end_line = t.end_line(end.min(t.len().saturating_sub(1)));
            self.push_symbol(
                name,
                SymbolKind::Constant,
                line,
                end_line,
                item.doc_line,
                container,
            );
            let eq = (k..end).find(|&x| t.is_punct(x, b'=') && !t.is_punct(x + 1, b'>'));
            if let Some(eq) = eq
                && let value = self.value((eq + 1, end))
                && !value.is_dynamic()
            {
                let qualified = match item.frame {
                    Some(Frame {
                        kind: ScopeKind::Impl | ScopeKind::Trait,
                        name: Some(c),
                        ..
                    }) => format!("{c}.{name}"),
                    _ => name.to_string(),
                };
                self.facts.bindings.push(Binding {
                    name: qualified,
                    value,
                    line,
                });
            }
        }
        end + 1
    }

    /// The end of the statement at `k`: its `;` or the closer of the enclosing group.
    fn stmt_end(&self, mut k: usize, limit: usize) -> usize {
        let t = self.t;
        while k < limit {
            if t.is_punct(k, b';')
                || t.is_punct(k, b'}')
                || t.is_punct(k, b')')
                || t.is_punct(k, b']')
            {
                return k;
            }
            k = t.skip_group(k);
        }
        limit.min(t.len())
    }

    fn type_alias(&mut self, j: usize, item: &Item<'a>) -> usize {
        let t = self.t;
        let Some(name) = t.ident(j + 1) else {
            return j + 1;
        };
        let end = self.stmt_end(j + 1, t.len());
        let container = item.frame.and_then(|f| f.name);
        let line = t.line(j + 1);
        let end_line = t.line(end.min(t.len().saturating_sub(1)));
        self.push_symbol(
            name,
            SymbolKind::TypeAlias,
            line,
            end_line,
            item.doc_line,
            container,
        );
        end + 1
    }

    fn macro_rules(&mut self, j: usize, item: &Item<'a>) -> usize {
        let t = self.t;
        let Some(name) = t.ident(j + 2) else {
            return j + 2;
        };
        let open = j + 3;
        let line = t.line(j + 2);
        let container = item.frame.and_then(|f| f.name);
        let end_line = self.end_line_at(open);
        self.push_symbol(
            name,
            SymbolKind::Function,
            line,
            end_line,
            item.doc_line,
            container,
        );
        t.skip_group(open).max(j + 3)
    }

    /// `use a::b::{c, d as e, f::{g, self}};` → module `a::b`, names `c d g` (aliases and
    /// `self` left out; a single `use a::b as x;` keeps `x` as the alias).
    fn use_item(&mut self, j: usize, public: bool) -> usize {
        let t = self.t;
        let end = self.stmt_end(j + 1, t.len());
        let mut k = j + 1;
        if t.op2(k, b"::") {
            k += 2;
        }
        let mut segs: Vec<&str> = Vec::new();
        let mut names = Vec::new();
        let mut alias = None;
        while k < end {
            if let Some(id) = t.ident(k) {
                segs.push(id);
                k += 1;
                if t.op2(k, b"::") {
                    k += 2;
                    continue;
                }
                if t.is(k, "as") {
                    alias = t.ident(k + 1);
                }
                break;
            }
            if t.is_punct(k, b'{') {
                let close = t.close(k).unwrap_or(end).min(end);
                for x in k + 1..close {
                    let Some(id) = t.ident(x) else { continue };
                    let leaf = t.is_punct(x + 1, b',')
                        || t.is_punct(x + 1, b'}')
                        || t.is(x + 1, "as")
                        || x + 1 == close;
                    if leaf
                        && !t.is(x.wrapping_sub(1), "as")
                        && !matches!(id, "self" | "super" | "crate")
                    {
                        names.push(id.to_string());
                    }
                }
                break;
            }
            break; // `*` or junk
        }
        // With a group or a glob, the module is every segment before it.
        let group_or_glob = t.is_punct(k, b'{') || t.is_punct(k, b'*');
        if !group_or_glob
            && segs.len() > 1
            && let Some(last) = segs.pop()
        {
            names.push(last.to_string());
        }
        if !segs.is_empty() {
            let module = segs.join("::");
            for n in &names {
                if segs.last().is_some_and(|m| m.ends_with("_server")) {
                    self.server_names.insert(n.clone());
                }
                if segs.last().is_some_and(|m| m.ends_with("_client")) {
                    self.client_names.insert(n.clone());
                }
            }
            self.facts.imports.push(Import {
                module,
                names,
                alias: alias.map(str::to_string),
                line: t.line(j),
                reexport: public,
            });
        }
        end + 1
    }

    fn extern_crate(&mut self, j: usize, public: bool) -> usize {
        let t = self.t;
        let end = self.stmt_end(j + 2, t.len());
        if let Some(name) = t.ident(j + 2) {
            let alias = t.is(j + 3, "as").then(|| t.ident(j + 4)).flatten();
            self.facts.imports.push(Import {
                module: name.to_string(),
                names: Vec::new(),
                alias: alias.map(str::to_string),
                line: t.line(j),
                reexport: public,
            });
        }
        end + 1
    }

    /// tonic servers declared by implementing the generated trait:
    /// `impl orders_server::Orders for OrdersImpl` (or `Orders` imported from `orders_server`).
    fn servers_from_impls(&mut self) {
        for h in std::mem::take(&mut self.impls) {
            let n = h.trait_path.len();
            let Some(&svc) = h.trait_path.last() else {
                continue;
            };
            let from_server_mod = n >= 2 && h.trait_path[n - 2].ends_with("_server");
            if from_server_mod || (n == 1 && self.server_names.contains(svc)) {
                self.facts.grpc.push(GrpcFact::Server {
                    service: svc.to_string(),
                    impl_type: h.self_type.map(str::to_string),
                    line: h.line,
                });
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Bindings
    // -----------------------------------------------------------------------------------------

    fn enclosing_func(&self, at: usize) -> Option<usize> {
        let p = self.funcs.partition_point(|f| f.start <= at);
        let f = p.checked_sub(1)?;
        let end = self.funcs[f]
            .body
            .map(|(_, c)| c)
            .or(self.funcs[f].params.map(|(_, c)| c))?;
        (at <= end).then_some(f)
    }

    /// The assignment whose right-hand side starts at token `start` (`let c = X::connect(…)`).
    fn assign_starting_at(&self, start: usize) -> Option<&'t Assign> {
        let list = &self.asg.list;
        let p = list.partition_point(|a| a.rhs.0 < start);
        list.get(p).filter(|a| a.rhs.0 == start)
    }

    fn bind(&mut self, name: &'a str, service: &str, scope: Scope) {
        self.bindings
            .entry(name)
            .or_default()
            .push((service.to_string(), scope));
    }

    // -----------------------------------------------------------------------------------------
    // Servers, clients, events, routes
    // -----------------------------------------------------------------------------------------

    fn patterns(&mut self) {
        let t = self.t;
        for k in 0..t.len() {
            while self.prefix_stack.last().is_some_and(|&(end, _)| end < k) {
                self.prefix_stack.pop();
            }
            let Some(id) = t.ident(k) else { continue };
            let path_call = t.op2(k + 1, b"::");
            if path_call {
                if let Some(svc) = id.strip_suffix("Server").filter(|s| !s.is_empty()) {
                    self.server_new(k, id, svc);
                } else if let Some(svc) = id.strip_suffix("Client").filter(|s| !s.is_empty()) {
                    self.client_new(k, id, svc);
                }
                if matches!(id, "FutureRecord" | "BaseRecord") {
                    self.record_to(k);
                }
            }
            if let Some(svc) = id.strip_suffix("Client").filter(|s| !s.is_empty())
                && !path_call
            {
                self.typed_client(k, id, svc);
            }
            if t.is_punct(k + 1, b'(') {
                let method_call = k > 0 && t.is_punct(k - 1, b'.');
                match id {
                    "subscribe" if method_call && self.rdkafka => self.subscribe(k),
                    "route" if method_call => self.route_call(k),
                    "nest" | "scope" => self.prefix_call(k, id),
                    "resource" if k >= 2 && t.op2(k - 2, b"::") => self.resource(k),
                    _ => {}
                }
                if self.http_client {
                    self.http_call(k, id, method_call);
                }
            }
        }
    }

    /// True when a generated tonic type is recognisable here: path-qualified with the
    /// generated module (`orders_client::OrdersClient`), imported from it, or the file uses
    /// tonic.
    fn tonic_type(&self, k: usize, id: &str, module_suffix: &str, imported: bool) -> bool {
        let t = self.t;
        let qualified = k >= 3
            && t.op2(k - 2, b"::")
            && t.ident(k - 3).is_some_and(|m| m.ends_with(module_suffix));
        qualified || imported || (self.tonic && id.len() > 6)
    }

    /// `OrdersServer::new(impl)` (also `with_interceptor`, `from_arc`): a server registration.
    fn server_new(&mut self, k: usize, id: &str, svc: &str) {
        let t = self.t;
        let Some(ctor) = t.ident(k + 3) else { return };
        if !matches!(
            ctor,
            "new" | "with_interceptor" | "from_arc" | "from_shared"
        ) || !t.is_punct(k + 4, b'(')
        {
            return;
        }
        let start = path_start(t, k);
        let in_add_service =
            start >= 2 && t.is(start - 2, "add_service") && t.is_punct(start - 1, b'(');
        let qualified =
            k >= 3 && t.op2(k - 2, b"::") && t.ident(k - 3).is_some_and(|m| m.ends_with("_server"));
        if !(in_add_service || qualified || self.server_names.contains(id)) {
            return;
        }
        let impl_type = t
            .args(k + 4)
            .first()
            .and_then(|&r| self.impl_of(r, k, 0))
            .map(str::to_string);
        self.facts.grpc.push(GrpcFact::Server {
            service: svc.to_string(),
            impl_type,
            line: t.line(k),
        });
    }

    /// The type of a server implementation expression: `Impl::default()`, `Impl::new(…)`,
    /// `Impl { … }`, a unit struct `Impl`, `Arc::new(…)` around one, or a local bound to one.
    fn impl_of(&self, (s, e): (usize, usize), at: usize, depth: u8) -> Option<&'a str> {
        let t = self.t;
        let mut s = s;
        while t.is_punct(s, b'&') {
            s += 1;
        }
        if s >= e {
            return None;
        }
        let mut segs = Vec::new();
        let mut j = s;
        while let Some(id) = t.ident(j) {
            segs.push(id);
            j += 1;
            if t.op2(j, b"::") {
                j += 2;
            } else {
                break;
            }
        }
        let &last = segs.last()?;
        let is_type = |x: &str| x.starts_with(|c: char| c.is_ascii_uppercase());
        if j == e {
            if segs.len() == 1 && !is_type(last) && depth == 0 {
                let l = self.asg.last(last, at)?;
                return self.impl_of(l.rhs, l.at, 1);
            }
            return is_type(last).then_some(last);
        }
        if t.is_punct(j, b'{') {
            return is_type(last).then_some(last);
        }
        if t.is_punct(j, b'(') && segs.len() >= 2 {
            let ty = segs[segs.len() - 2];
            if matches!(ty, "Arc" | "Box" | "Rc") && depth < 2 {
                let &inner = t.args(j).first()?;
                return self.impl_of(inner, at, depth + 1);
            }
            return is_type(ty).then_some(ty);
        }
        None
    }

    /// `OrdersClient::connect(addr)` / `::new(channel)`: a client, bound to the `let`, the
    /// field or the struct-literal field it is stored in.
    fn client_new(&mut self, k: usize, id: &str, svc: &str) {
        let t = self.t;
        let Some(ctor) = t.ident(k + 3) else { return };
        if !matches!(ctor, "connect" | "new" | "with_interceptor" | "with_origin")
            || !t.is_punct(k + 4, b'(')
        {
            return;
        }
        let imported = self.client_names.contains(id);
        if !self.tonic_type(k, id, "_client", imported) {
            return;
        }
        let start = path_start(t, k);
        let mut var = None;
        if let Some(l) = self.assign_starting_at(start) {
            let scope = if l.name.contains('.') {
                Scope::Field
            } else {
                match self.enclosing_func(l.at) {
                    Some(f) => Scope::Local(f, l.at),
                    None => Scope::Global,
                }
            };
            var = Some((t.text(l.at), scope));
        } else if start >= 2
            && t.is_punct(start - 1, b':')
            && !t.is_punct(start - 2, b':')
            && let Some(key) = t.ident(start - 2)
        {
            var = Some((key, Scope::Field));
        }
        if let Some((name, scope)) = var {
            self.bind(name, svc, scope);
        }
        self.facts.grpc.push(GrpcFact::Client {
            service: svc.to_string(),
            var: var.map(|(n, _)| n.to_string()),
            line: t.line(k),
        });
    }

    /// `client: OrdersClient<Channel>` (a field or parameter typed as a client).
    fn typed_client(&mut self, k: usize, id: &str, svc: &str) {
        let t = self.t;
        let mut ts = path_start(t, k);
        while ts > 0 && (t.is_punct(ts - 1, b'&') || t.is(ts - 1, "mut")) {
            ts -= 1;
        }
        if ts < 2 || !t.is_punct(ts - 1, b':') {
            return;
        }
        if ts >= 3 && t.is_punct(ts - 2, b':') {
            return;
        }
        let Some(name) = t.ident(ts - 2) else { return };
        let imported = self.client_names.contains(id);
        if !self.tonic_type(k, id, "_client", imported) {
            return;
        }
        let in_struct = {
            let p = self.structs.partition_point(|&(o, _)| o < k);
            p > 0 && k < self.structs[p - 1].1
        };
        let scope = if in_struct {
            Scope::Field
        } else {
            match self.enclosing_func(k) {
                Some(f) => Scope::Local(f, self.funcs[f].start),
                None => Scope::Global,
            }
        };
        self.bind(name, svc, scope);
    }

    fn calls(&mut self) {
        let t = self.t;
        if self.bindings.is_empty() {
            return;
        }
        // `let mut c = self.client.clone();` makes `c` a client too.
        let fields: Vec<(&'a str, String)> = self
            .bindings
            .iter()
            .flat_map(|(n, v)| {
                v.iter()
                    .filter(|(_, s)| *s == Scope::Field)
                    .map(move |(svc, _)| (*n, svc.clone()))
            })
            .collect();
        let asg = self.asg;
        for l in &asg.list {
            let (s, _) = l.rhs;
            if l.name.contains('.') || !t.is(s, "self") || !t.is_punct(s + 1, b'.') {
                continue;
            }
            let Some(f) = t.ident(s + 2) else { continue };
            if let Some((_, svc)) = fields.iter().find(|(n, _)| *n == f)
                && let Some(func) = self.enclosing_func(l.at)
            {
                let svc = svc.clone();
                self.bind(t.text(l.at), &svc, Scope::Local(func, l.at));
            }
        }
        for k in 0..t.len() {
            // The shape first (cheap), the hash lookup last.
            if !t.is_punct(k + 1, b'.') || !t.is_punct(k + 3, b'(') {
                continue;
            }
            let (Some(recv), Some(method)) = (t.ident(k), t.ident(k + 2)) else {
                continue;
            };
            if CLIENT_PLUMBING.contains(&method) {
                continue;
            }
            let Some(list) = self.bindings.get(recv) else {
                continue;
            };
            let selector = k > 0 && t.is_punct(k - 1, b'.');
            let func = self.enclosing_func(k);
            let hit = list
                .iter()
                .rev()
                .take(LOOKBACK)
                .find(|(_, scope)| match *scope {
                    Scope::Field => selector,
                    Scope::Global => !selector,
                    Scope::Local(f, from) => !selector && func == Some(f) && k > from,
                });
            if let Some((svc, _)) = hit {
                self.facts.grpc.push(GrpcFact::Call {
                    service: Some(svc.clone()),
                    receiver: recv.to_string(),
                    method: method.to_string(),
                    line: t.line(k + 2),
                });
            }
        }
    }

    fn push_event(&mut self, role: EventRole, topic: Value, line: u32) {
        self.facts.events.push(EventFact {
            role,
            topic,
            via: "rdkafka".to_string(),
            line,
        });
    }

    /// `FutureRecord::to("t")`, `BaseRecord::<K, V>::to(&topic)`.
    fn record_to(&mut self, k: usize) {
        let t = self.t;
        let mut j = k + 3;
        if t.is_punct(j, b'<') {
            j = self.skip_angles(j);
            if !t.op2(j, b"::") {
                return;
            }
            j += 2;
        }
        if !t.is(j, "to") || !t.is_punct(j + 1, b'(') {
            return;
        }
        if let Some(&r) = t.args(j + 1).first()
            && let Some(topic) = self.topic_expr(r)
        {
            self.push_event(EventRole::Producer, topic, t.line(j));
        }
    }

    /// `consumer.subscribe(&["a", TOPIC])`, `.subscribe(&topics)`.
    fn subscribe(&mut self, k: usize) {
        let t = self.t;
        let Some(&(s, e)) = t.args(k + 1).first() else {
            return;
        };
        for (topic, line) in self.topic_list((s, e), k, 0) {
            self.push_event(EventRole::Consumer, topic, line);
        }
    }

    /// The topics of `&["a", "b"]`, `vec![…]`, or a local bound to one.
    fn topic_list(&self, (s, e): (usize, usize), at: usize, depth: u8) -> Vec<(Value, u32)> {
        let t = self.t;
        let mut s = s;
        while t.is_punct(s, b'&') {
            s += 1;
        }
        let open = if t.is_punct(s, b'[') {
            Some(s)
        } else if t.is(s, "vec") && t.is_punct(s + 1, b'!') && t.is_punct(s + 2, b'[') {
            Some(s + 2)
        } else {
            None
        };
        if let Some(open) = open {
            return t
                .args(open)
                .into_iter()
                .filter_map(|r| self.topic_expr(r).map(|x| (x, t.line(r.0))))
                .collect();
        }
        if e == s + 1
            && depth == 0
            && let Some(name) = t.ident(s)
            && let Some(l) = self.asg.last(name, at)
        {
            let (rs, re) = l.rhs;
            let mut rs2 = rs;
            while t.is_punct(rs2, b'&') {
                rs2 += 1;
            }
            if t.is_punct(rs2, b'[') || t.is(rs2, "vec") {
                return self.topic_list((rs, re), l.at, 1);
            }
        }
        self.topic_expr((s, e))
            .map(|x| vec![(x, t.line(s))])
            .unwrap_or_default()
    }

    /// `s..e` without what does not change a string's value: leading `&` and `mut`, trailing
    /// `.as_str()`, `.to_string()`, `.clone()`, `.into()`; and the closure body of a lazy
    /// initializer (`Lazy::new(|| …)`, `LazyLock::new(|| { … })`).
    fn peel(&self, (s, e): (usize, usize)) -> (usize, usize) {
        let t = self.t;
        let mut s = s;
        while t.is_punct(s, b'&') || t.kw(s, "mut") {
            s += 1;
        }
        let mut e = e.min(t.len());
        while e >= s + 4
            && t.is_punct(e - 4, b'.')
            && matches!(
                t.text(e - 3),
                "as_str" | "as_ref" | "to_string" | "to_owned" | "clone" | "into"
            )
            && t.is_punct(e - 2, b'(')
            && t.is_punct(e - 1, b')')
        {
            e -= 4;
        }
        // `Lazy::new(|| expr)`: the path, `::new`, the call spanning the rest.
        let lazy = (s..e.min(s + 16))
            .find(|&k| t.kw(k, "Lazy") || t.kw(k, "LazyLock") || t.kw(k, "LazyCell"))
            .filter(|&k| t.op2(k + 1, b"::") && t.kw(k + 3, "new") && t.is_punct(k + 4, b'('))
            .map(|k| k + 4)
            .filter(|&open| t.close(open) == Some(e - 1));
        if let Some(open) = lazy {
            let mut a = open + 1;
            if t.kw(a, "move") {
                a += 1;
            }
            if t.is_punct(a, b'|') && t.is_punct(a + 1, b'|') {
                a += 2;
                let b = e - 1;
                // A block body whose value is its last expression.
                if t.is_punct(a, b'{') && t.close(a) == Some(b - 1) {
                    let last = (a + 1..b - 1)
                        .rev()
                        .find(|&k| t.is_punct(k, b';'))
                        .map_or(a + 1, |k| k + 1);
                    return (last, b - 1);
                }
                return (a, b);
            }
        }
        (s, e)
    }

    /// The value of the expression in `r`, read by the shared evaluator; path prefixes that
    /// only say where a name lives (`crate::`, `super::`, `Self::`) are dropped from names.
    fn value(&self, r: (usize, usize)) -> Value {
        let (s, e) = self.peel(r);
        if s >= e {
            return Value::dynamic();
        }
        let mut v = eval(self.t, (s, e), &ExprRules::RUST, self.asg);
        for p in &mut v.parts {
            if let Part::Ref { name, .. } = p {
                let mut bare = name.as_str();
                while let Some(rest) = ["crate.", "super.", "Self."]
                    .iter()
                    .find_map(|pre| bare.strip_prefix(pre))
                {
                    bare = rest;
                }
                if bare.len() < name.len() && !bare.is_empty() {
                    *name = bare.to_string();
                }
            }
        }
        v
    }

    /// A topic argument: a literal that looks like a topic name, or whatever the evaluator
    /// reads (an environment lookup with its default, a constant left to the graph —
    /// `topics::ORDERS` gives `topics.ORDERS` — or a run-time value, kept so the graph lists
    /// the site as unresolved).
    fn topic_expr(&self, r: (usize, usize)) -> Option<Value> {
        let (s, e) = self.peel(r);
        if s >= e {
            return None;
        }
        let v = self.value((s, e));
        match v.as_lit() {
            Some(lit) => looks_like_topic(lit).then_some(v),
            None => Some(v),
        }
    }

    /// The URL argument of an HTTP call. `sure` when the call is HTTP whatever its argument
    /// (`reqwest::get`); otherwise it must read like a URL, so `map.get(key)` is no request.
    fn url(&self, r: (usize, usize), sure: bool) -> Option<Value> {
        let (s, e) = self.peel(r);
        if s >= e {
            return None;
        }
        let v = self.value((s, e));
        (sure || looks_like_url(&v)).then_some(v)
    }

    /// axum `.route("/p", get(h).post(h2))` and actix `.route("/p", web::get().to(h))`.
    fn route_call(&mut self, k: usize) {
        let t = self.t;
        let args = t.args(k + 1);
        let [(ps, pe), router] = args[..] else {
            return;
        };
        if pe != ps + 1 || !t.is_str(ps) {
            return;
        }
        let Some(path) = t.str_value(ps) else { return };
        if !path.starts_with('/') {
            return;
        }
        let full = join_path(&self.prefix(), &path);
        self.method_router(router, &full, t.line(k));
    }

    /// Every `get(h)` / `.post(h)` / `web::get().to(h)` at the top level of a method router.
    fn method_router(&mut self, (s, e): (usize, usize), path: &str, line: u32) {
        let t = self.t;
        let mut k = s;
        while k < e {
            if let Some(m) = t.ident(k)
                && ROUTE_METHODS.contains(&m)
                && t.is_punct(k + 1, b'(')
            {
                let open = k + 1;
                let close = t.close(open).unwrap_or(e);
                let handler = if close == open + 1 {
                    // actix: `web::get().to(handler)`.
                    (t.is_punct(close + 1, b'.')
                        && t.is(close + 2, "to")
                        && t.is_punct(close + 3, b'('))
                    .then(|| {
                        t.args(close + 3)
                            .first()
                            .and_then(|&r| self.handler_name(r))
                    })
                    .flatten()
                } else {
                    t.args(open).first().and_then(|&r| self.handler_name(r))
                };
                let method = if m == "any" {
                    "ANY".to_string()
                } else {
                    m.to_ascii_uppercase()
                };
                self.facts.http.push(HttpFact::Route {
                    method,
                    path: path.to_string(),
                    handler,
                    line,
                });
                k = t.skip_group(open);
                continue;
            }
            k = t.skip_group(k);
        }
    }

    /// The handler a route names: the last segment of a path (`handlers::create` → `create`).
    fn handler_name(&self, (s, e): (usize, usize)) -> Option<String> {
        let t = self.t;
        let mut j = s;
        let mut last = None;
        while let Some(id) = t.ident(j) {
            last = Some(id);
            j += 1;
            if t.op2(j, b"::") {
                j += 2;
            } else {
                break;
            }
        }
        (j == e).then_some(last).flatten().map(str::to_string)
    }

    fn prefix(&self) -> String {
        self.prefix_stack
            .last()
            .map_or(String::new(), |(_, p)| p.clone())
    }

    /// axum `.nest("/api", router)` applies its prefix to the routes inside its second
    /// argument; actix `web::scope("/api")` to the rest of its method chain.
    fn prefix_call(&mut self, k: usize, id: &str) {
        let t = self.t;
        let args = t.args(k + 1);
        let Some(&(ps, pe)) = args.first() else {
            return;
        };
        if pe != ps + 1 || !t.is_str(ps) {
            return;
        }
        let Some(path) = t.str_value(ps) else { return };
        if !path.starts_with('/') {
            return;
        }
        let full = join_path(&self.prefix(), &path);
        let end = if id == "nest" {
            if !(k > 0 && t.is_punct(k - 1, b'.')) || args.len() != 2 {
                return;
            }
            t.close(k + 1).unwrap_or(t.len())
        } else {
            if !(k >= 2 && t.op2(k - 2, b"::")) {
                return;
            }
            self.chain_end(k + 1)
        };
        self.prefix_stack.push((end, full));
    }

    /// The last token of the method chain continuing after the group opened at `open`.
    fn chain_end(&self, open: usize) -> usize {
        let t = self.t;
        let mut end = t.close(open).unwrap_or(t.len());
        while t.is_punct(end + 1, b'.') && t.ident(end + 2).is_some() && t.is_punct(end + 3, b'(') {
            end = t.close(end + 3).unwrap_or(t.len());
        }
        end
    }

    /// actix `web::resource("/p").route(web::get().to(h)).to(h2)`.
    fn resource(&mut self, k: usize) {
        let t = self.t;
        let Some(&(ps, pe)) = t.args(k + 1).first() else {
            return;
        };
        if pe != ps + 1 || !t.is_str(ps) {
            return;
        }
        let Some(path) = t.str_value(ps) else { return };
        let full = join_path(&self.prefix(), &path);
        let line = t.line(k);
        let mut end = t.close(k + 1).unwrap_or(t.len());
        while t.is_punct(end + 1, b'.') && t.is_punct(end + 3, b'(') {
            let Some(m) = t.ident(end + 2) else { break };
            let open = end + 3;
            match m {
                "route" => {
                    if let Some(&r) = t.args(open).first() {
                        self.method_router(r, &full, line);
                    }
                }
                "to" => {
                    let handler = t.args(open).first().and_then(|&r| self.handler_name(r));
                    self.facts.http.push(HttpFact::Route {
                        method: "ANY".to_string(),
                        path: full.clone(),
                        handler,
                        line,
                    });
                }
                _ => {}
            }
            end = t.close(open).unwrap_or(t.len());
        }
    }

    /// reqwest-style calls: `client.get(url)`, `reqwest::get(url)`,
    /// `client.request(Method::POST, url)`.
    fn http_call(&mut self, k: usize, id: &str, method_call: bool) {
        let t = self.t;
        let free_fn = k >= 3
            && t.op2(k - 2, b"::")
            && t.ident(k - 3)
                .is_some_and(|c| matches!(c, "reqwest" | "ureq" | "surf" | "isahc"));
        let (method, url, sure) = match id {
            "get" | "post" | "put" | "delete" | "patch" | "head" if method_call || free_fn => {
                let args = t.args(k + 1);
                if args.len() != 1 {
                    return;
                }
                (Some(id.to_ascii_uppercase()), args[0], free_fn)
            }
            "request" if method_call => {
                let args = t.args(k + 1);
                let [(ms, me), url] = args[..] else { return };
                let m = (ms..me)
                    .rev()
                    .find_map(|x| t.ident(x))
                    .map(str::to_ascii_uppercase);
                // `Method::PUT` (or `reqwest::Method::PUT`) says it is HTTP.
                let sure = (ms..me).any(|x| t.kw(x, "Method"));
                (m, url, sure)
            }
            _ => return,
        };
        if let Some(url) = self.url(url, sure) {
            self.facts.http.push(HttpFact::Call {
                method,
                url,
                line: t.line(k),
            });
        }
    }
}

/// What the item walk knows about the item it is at.
struct Item<'a> {
    frame: Option<Frame<'a>>,
    doc_line: Option<u32>,
    /// `[` token indices of the outer attributes above the item.
    attrs: Vec<usize>,
}

/// The first token of the `::` path ending at `k` (`orders_client::OrdersClient` → `orders_client`).
fn path_start(t: &Tokens, k: usize) -> usize {
    let mut s = k;
    while s >= 3 && t.op2(s - 2, b"::") && t.ident(s - 3).is_some() {
        s -= 3;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::lang::test_support::{
        brief, env, every_prefix, every_short_token_sequence, extract_each, grpc_clients,
        grpc_servers, http_calls_borrowed as http_calls, imports, junk_bytes32, lit, reference,
        routes_borrowed as routes, sym,
    };

    fn events(f: &FileFacts) -> Vec<(EventRole, Value, u32)> {
        f.events
            .iter()
            .map(|e| {
                assert_eq!(e.via, "rdkafka");
                (e.role, e.topic.clone(), e.line)
            })
            .collect()
    }

    fn grpc_calls(f: &FileFacts) -> Vec<(&str, &str, &str, u32)> {
        f.grpc
            .iter()
            .filter_map(|g| match g {
                GrpcFact::Call {
                    service,
                    receiver,
                    method,
                    line,
                } => Some((
                    service.as_deref().unwrap_or("?"),
                    receiver.as_str(),
                    method.as_str(),
                    *line,
                )),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn items_with_containers_docs_and_attributes() {
        let src = r#"//! Crate docs.

/// An order.
#[derive(Debug, Clone)]
pub struct Order<T: Clone> {
    id: String,
    items: Vec<T>,
}

pub(crate) struct Id(u64);
struct Unit;

/// Status of an order.
pub enum Status {
    /// Just created.
    Created,
    #[serde(rename = "paid")]
    Paid { at: u64 },
    Shipped(u32),
    Cancelled = 9,
}

pub trait Store: Send + Sync {
    fn get(&self, id: &str) -> Option<Order<String>>;
    /// Default method.
    fn put(&mut self, o: Order<String>) {
        let _ = o;
    }
}

impl<T: Clone> Order<T> {
    pub fn new(id: String) -> Self {
        Self { id, items: vec![] }
    }

    pub async fn total<F>(
        &self,
        price: F,
    ) -> u64
    where
        F: Fn(&T) -> u64,
    {
        self.items.iter().map(price).sum()
    }
}

impl<'a, T> std::fmt::Display for &'a Wrapper<T> where T: Clone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { Ok(()) }
}

mod inner {
    pub const fn helper() -> u8 { 1 }
    pub mod deeper;
}

pub type Result<T> = std::result::Result<T, Error>;

#[macro_export]
macro_rules! order {
    ($id:expr) => { Order::new($id) };
}

extern "C" {
    fn c_hook(x: i32) -> i32;
}

unsafe fn raw() {}
"#;
        let f = extract("src/order.rs", src);
        assert_eq!(f.package, None);
        use SymbolKind::*;
        assert_eq!(brief(sym(&f, "Order")), (Struct, 5, 8, Some(3), None));
        assert_eq!(brief(sym(&f, "Id")), (Struct, 10, 10, None, None));
        assert_eq!(brief(sym(&f, "Unit")), (Struct, 11, 11, None, None));
        assert_eq!(brief(sym(&f, "Status")), (Enum, 14, 21, Some(13), None));
        assert_eq!(
            brief(sym(&f, "Created")),
            (EnumValue, 16, 16, Some(15), Some("Status"))
        );
        assert_eq!(
            brief(sym(&f, "Paid")),
            (EnumValue, 18, 18, Some(17), Some("Status"))
        );
        assert_eq!(sym(&f, "Shipped").kind, EnumValue);
        assert_eq!(sym(&f, "Cancelled").kind, EnumValue);
        assert!(!f.symbols.iter().any(|s| s.name == "at" || s.name == "u32"));
        assert_eq!(brief(sym(&f, "Store")), (Trait, 23, 29, None, None));
        assert_eq!(brief(sym(&f, "get")), (Method, 24, 24, None, Some("Store")));
        assert_eq!(
            brief(sym(&f, "put")),
            (Method, 26, 28, Some(25), Some("Store"))
        );
        assert_eq!(brief(sym(&f, "new")), (Method, 32, 34, None, Some("Order")));
        assert_eq!(
            brief(sym(&f, "total")),
            (Method, 36, 44, None, Some("Order"))
        );
        assert_eq!(
            brief(sym(&f, "fmt")),
            (Method, 48, 48, None, Some("Wrapper"))
        );
        assert_eq!(brief(sym(&f, "inner")), (Module, 51, 54, None, None));
        assert_eq!(
            brief(sym(&f, "helper")),
            (Function, 52, 52, None, Some("inner"))
        );
        assert_eq!(
            brief(sym(&f, "deeper")),
            (Module, 53, 53, None, Some("inner"))
        );
        assert_eq!(brief(sym(&f, "Result")), (TypeAlias, 56, 56, None, None));
        assert_eq!(brief(sym(&f, "order")), (Function, 59, 61, Some(58), None));
        assert_eq!(brief(sym(&f, "c_hook")), (Function, 64, 64, None, None));
        assert_eq!(brief(sym(&f, "raw")), (Function, 67, 67, None, None));
    }

    #[test]
    fn constants_statics_and_env_defaults() {
        let src = r##"
pub const ORDERS_TOPIC: &str = "orders.created";
static RAW: &str = r#"raw.topic"#;
pub static mut COUNTER: u32 = 0;
static PAYMENTS: Lazy<String> =
    Lazy::new(|| std::env::var("PAYMENTS_TOPIC").unwrap_or_else(|_| "payments.done".into()));

pub struct Topics;
impl Topics {
    pub const SHIPPED: &'static str = "orders.shipped";
}
const _: () = ();
static AUDIT: LazyLock<String> = LazyLock::new(|| { std::env::var("AUDIT").unwrap_or("audit".into()) });
"##;
        let f = extract("src/topics.rs", src);
        let consts: Vec<(&str, Value, u32)> = f
            .bindings
            .iter()
            .map(|c| (c.name.as_str(), c.value.clone(), c.line))
            .collect();
        assert_eq!(
            consts,
            vec![
                ("ORDERS_TOPIC", lit("orders.created"), 2),
                ("RAW", lit("raw.topic"), 3),
                // Every constant with a value the evaluator reads is a binding, numbers too.
                ("COUNTER", lit("0"), 4),
                // The lazy initializer's env lookup stays a lookup with its default: the
                // graph answers `env PAYMENTS_TOPIC default`.
                ("PAYMENTS", env("PAYMENTS_TOPIC", Some("payments.done")), 5),
                ("Topics.SHIPPED", lit("orders.shipped"), 10),
                ("AUDIT", env("AUDIT", Some("audit")), 13),
            ]
        );
        assert_eq!(sym(&f, "COUNTER").kind, SymbolKind::Constant);
        let p = sym(&f, "PAYMENTS");
        assert_eq!((p.line, p.end_line), (5, 6));
        assert_eq!(sym(&f, "SHIPPED").container.as_deref(), Some("Topics"));
        assert!(!f.symbols.iter().any(|s| s.name == "_"));
    }

    #[test]
    fn use_declarations() {
        let src = r#"
use std::collections::HashMap;
use crate::orders::{self, Order, Status as OrderStatus};
pub use self::model::*;
use ::serde::{de::{self, Visitor}, Deserialize};
pub(crate) use super::util as helpers;
use tokio;
extern crate alloc as a;
"#;
        let f = extract("src/lib.rs", src);
        let got = imports(&f);
        assert_eq!(
            got,
            vec![
                ("std::collections", vec!["HashMap"], None, 2, false),
                ("crate::orders", vec!["Order", "Status"], None, 3, false),
                ("self::model", vec![], None, 4, true),
                ("serde", vec!["Visitor", "Deserialize"], None, 5, false),
                ("super", vec!["util"], Some("helpers"), 6, true),
                ("tokio", vec![], None, 7, false),
                ("alloc", vec![], Some("a"), 8, false),
            ]
        );
    }

    #[test]
    fn tonic_servers_clients_and_calls() {
        let src = r#"use tonic::{Request, Response, Status};
use pb::order_service_client::OrderServiceClient;
use pb::payment_service_server::{PaymentService, PaymentServiceServer};

#[derive(Default)]
pub struct OrderSvc;

#[tonic::async_trait]
impl pb::order_service_server::OrderService for OrderSvc {
    async fn create_order(&self, req: Request<pb::CreateOrderRequest>) -> Result<Response<pb::Order>, Status> {
        todo!()
    }
}

// (no `#[tonic::async_trait]` here: the trait alone makes the server)
impl PaymentService for Payments {
    async fn charge(&self, r: Request<()>) -> Result<Response<()>, Status> { todo!() }
}

pub struct Gateway {
    orders: OrderServiceClient<tonic::transport::Channel>,
    name: String,
}

impl Gateway {
    pub async fn place(&self) {
        let mut c = self.orders.clone();
        c.create_order(req).await;
        self.orders.get_order(req).await;
        self.name.len();
    }
}

async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    let payments = Payments::new(db);
    Server::builder()
        .add_service(pb::order_service_server::OrderServiceServer::new(OrderSvc::default()))
        .add_service(PaymentServiceServer::new(payments))
        .add_service(ShippingServiceServer::new(svc))
        .serve(addr)
        .await?;
    let mut client = OrderServiceClient::connect("http://[::1]:50051").await?;
    let resp = client.create_order(tonic::Request::new(req)).await?;
    client.clone();
    let other = InventoryServiceClient::new(channel);
    other.reserve(x);
    Ok(())
}

fn unrelated(client: Foo) {
    client.create_order(x);
}
"#;
        let f = extract("src/main.rs", src);
        let servers = grpc_servers(&f);
        assert_eq!(
            servers,
            vec![
                ("OrderService", Some("OrderSvc"), 9),
                ("PaymentService", Some("Payments"), 16),
                ("OrderService", Some("OrderSvc"), 37),
                ("PaymentService", Some("Payments"), 38),
                ("ShippingService", None, 39),
            ]
        );
        assert_eq!(
            sym(&f, "create_order").container.as_deref(),
            Some("OrderSvc")
        );
        let clients = grpc_clients(&f);
        assert_eq!(
            clients,
            vec![
                ("OrderService", Some("client"), 42),
                ("InventoryService", Some("other"), 45),
            ]
        );
        assert_eq!(
            grpc_calls(&f),
            vec![
                ("OrderService", "c", "create_order", 28),
                ("OrderService", "orders", "get_order", 29),
                ("OrderService", "client", "create_order", 43),
                ("InventoryService", "other", "reserve", 46),
            ]
        );
    }

    #[test]
    fn rdkafka_producers_and_consumers() {
        let src = r#"use rdkafka::producer::{FutureProducer, FutureRecord};

const ORDERS: &str = "orders.created";

async fn produce(p: &FutureProducer, topic: &str) {
    p.send(FutureRecord::to("orders.audit").payload("x"), t).await;
    p.send(FutureRecord::<(), str>::to(ORDERS), t).await;
    p.send(BaseRecord::to(topics::SHIPPED).key("k"), t);
    p.send(FutureRecord::to(&Self::REFUNDS), t);
    p.send(FutureRecord::to(topic), t);
    let t1 = std::env::var("T1").unwrap_or_else(|_| "t1.default".into());
    p.send(FutureRecord::to(&t1), t);
    let t2 = env::var("T2").unwrap_or("t2.default".to_string());
    p.send(FutureRecord::to(t2.as_str()), t);
    let t3 = env::var("T3").expect("T3 must be set");
    p.send(FutureRecord::to(&t3), t);
    p.send(FutureRecord::to(&format!("x-{}", 1)), t);
}

fn consume(c: &StreamConsumer) {
    c.subscribe(&["payments.done", ORDERS]).expect("subscribe");
    let topics = vec!["stock.changed", "stock.reserved"];
    c.subscribe(&topics).unwrap();
    c.subscribe(&[&std::env::var("IN").unwrap_or_else(|_| String::from("in.default"))]);
}
"#;
        let f = extract("src/kafka.rs", src);
        use EventRole::*;
        assert_eq!(
            events(&f),
            vec![
                (Producer, lit("orders.audit"), 6),
                (Producer, reference("ORDERS"), 7),
                (Producer, reference("topics.SHIPPED"), 8),
                (Producer, reference("REFUNDS"), 9),
                // A parameter: a run-time topic, kept so the graph lists the site as
                // unresolved.
                (Producer, Value::dynamic(), 10),
                (Producer, env("T1", Some("t1.default")), 12),
                (Producer, env("T2", Some("t2.default")), 14),
                (Producer, env("T3", None), 16),
                // `format!` with literal arguments is a literal.
                (Producer, lit("x-1"), 17),
                (Consumer, lit("payments.done"), 21),
                (Consumer, reference("ORDERS"), 21),
                (Consumer, lit("stock.changed"), 22),
                (Consumer, lit("stock.reserved"), 22),
                (Consumer, env("IN", Some("in.default")), 24),
            ]
        );
    }

    #[test]
    fn subscribe_without_rdkafka_is_not_an_event() {
        let f = extract(
            "src/bus.rs",
            "fn f(b: Bus) { b.subscribe(&[\"orders\"]); }\n",
        );
        assert!(f.events.is_empty());
    }

    #[test]
    fn axum_and_actix_routes() {
        let src = r#"
fn app() -> Router {
    Router::new()
        .route("/orders", get(list_orders).post(handlers::create_order))
        .route("/orders/:id", axum::routing::get(get_order))
        .nest("/admin", Router::new().route("/stats", any(stats)))
        .route("/health", get(|| async { "ok" }))
}

#[get("/users/{id}")]
async fn get_user(path: web::Path<u64>) -> impl Responder { "" }

/// Creates.
#[actix_web::post("/users")]
async fn create_user() -> impl Responder { "" }

#[route("/multi", method = "GET", method = "HEAD")]
async fn multi() -> impl Responder { "" }

fn config(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/carts/{id}").route(web::get().to(get_cart)).route(web::delete().to(drop_cart)));
    cfg.service(web::scope("/api").route("/ping", web::get().to(ping)).service(web::resource("/items").to(items)));
    App::new().route("/top", web::post().to(top));
}
"#;
        let f = extract("src/http.rs", src);
        assert_eq!(
            routes(&f),
            vec![
                ("GET", "/orders", Some("list_orders"), 4),
                ("POST", "/orders", Some("create_order"), 4),
                ("GET", "/orders/:id", Some("get_order"), 5),
                ("ANY", "/admin/stats", Some("stats"), 6),
                ("GET", "/health", None, 7),
                ("GET", "/users/{id}", Some("get_user"), 10),
                ("POST", "/users", Some("create_user"), 14),
                ("GET", "/multi", Some("multi"), 17),
                ("HEAD", "/multi", Some("multi"), 17),
                ("GET", "/carts/{id}", Some("get_cart"), 21),
                ("DELETE", "/carts/{id}", Some("drop_cart"), 21),
                ("GET", "/api/ping", Some("ping"), 22),
                ("ANY", "/api/items", Some("items"), 22),
                ("POST", "/top", Some("top"), 23),
            ]
        );
        assert_eq!(sym(&f, "create_user").doc_line, Some(13));
        assert_eq!(sym(&f, "get_user").doc_line, Some(10));
    }

    #[test]
    fn reqwest_calls() {
        let src = r#"use reqwest::Client;

async fn call(client: &Client, base: &str, id: u64) {
    client.get(format!("{}/orders/{}", base, id)).send().await;
    let url = format!("{base}/payments");
    client.post(&url).json(&x).send().await;
    reqwest::get("http://inventory:8080/stock/items").await;
    client.request(Method::PUT, format!("{}/carts/{id}", base)).send().await;
    client.get(base).send().await;
    map.get("orders");
}
"#;
        let f = extract("src/client.rs", src);
        let c = |m: &'static str, u: &str, l: u32| (Some(m), u.to_string(), l);
        // URLs are values as written: parameters are run-time parts, hosts are kept.
        assert_eq!(
            http_calls(&f),
            vec![
                c("GET", "{}/orders/{}", 4),
                // A parameter captured by `format!("{base}…")` is a run-time part too.
                c("POST", "{}/payments", 6),
                c("GET", "http://inventory:8080/stock/items", 7),
                c("PUT", "{}/carts/{}", 8),
            ]
        );
        let plain = extract("src/x.rs", "fn f(m: HashMap) { m.get(\"/orders\"); }");
        assert!(plain.http.is_empty());
    }

    const IDIOMS: &str = r#"use reqwest::Client;

const BASE: &str = "http://shipping:8080";
static TOPIC: Lazy<String> = Lazy::new(|| std::env::var("T").unwrap_or_else(|_| "t".into()));

impl Quotes {
    async fn estimate(&self, base: &str, id: u64, key: &str) {
        self.client.get(format!("{}/estimate", base)).send().await;
        self.client.get(format!("{BASE}/x/{id}")).send().await;
        let url = format!("{}/quotes/{}", BASE, id);
        self.client.post(url).send().await;
        let cart = std::env::var("CART_URL").unwrap_or_else(|_| "http://cart:8080".into());
        self.client.delete(format!("{cart}/items")).send().await;
        self.client.get(base.to_string() + "/" + &id.to_string()).send().await;
        self.cache.get(key);
        self.cache.get(&format!("k-{}", id));
        map.get("orders");
        producer.send(FutureRecord::to(&TOPIC), t);
    }
}
"#;

    #[test]
    fn idioms_format_env_and_reqwest() {
        let src = format!("use rdkafka::producer::FutureRecord;\n{IDIOMS}");
        let f = extract("src/quotes.rs", &src);
        let c = |m: &'static str, u: &str, l: u32| (Some(m), u.to_string(), l);
        assert_eq!(
            http_calls(&f),
            vec![
                c("GET", "{}/estimate", 9),
                // A module-level constant stays a reference for the graph.
                c("GET", "{BASE}/x/{}", 10),
                c("POST", "{BASE}/quotes/{}", 12),
                c("DELETE", "{env CART_URL}/items", 14),
                // `base + "/" + id`: no literal segment, which the graph never matches to a
                // route. `self.cache.get(key)`, a `format!` key and `map.get` are not requests.
                c("GET", "{}/{}", 15),
            ]
        );
        let cart = f.http.iter().find_map(|h| match h {
            HttpFact::Call { url, line: 14, .. } => Some(url.clone()),
            _ => None,
        });
        assert!(matches!(
            cart.as_ref().map(|u| u.parts.as_slice()),
            Some([Part::Env { var, default: Some(d) }, Part::Lit(_)])
                if var == "CART_URL" && d == "http://cart:8080"
        ));
        assert_eq!(
            events(&f),
            vec![(EventRole::Producer, reference("TOPIC"), 19)]
        );
        let topic = f
            .bindings
            .iter()
            .find(|b| b.name == "TOPIC")
            .map(|b| &b.value);
        assert_eq!(topic, Some(&env("T", Some("t"))));
    }

    #[test]
    fn idioms_truncated_and_non_ascii_never_panic() {
        every_prefix(extract, "x.rs", IDIOMS);
        let src = "use reqwest;\nconst BASÉ: &str = \"http://ü\";\nfn gét(ïd: u64) { reqwest::get(format!(\"{BASÉ}/ördérs/{ïd}\")); reqwest::get(format!(\"{é\")); }\n";
        every_prefix(extract, "x.rs", src);
        let f = extract("x.rs", src);
        // The evaluator reads only ASCII names inside a format string: the non-ASCII one is a
        // run-time part, the literal path is kept.
        assert_eq!(
            http_calls(&f).first(),
            Some(&(Some("GET"), "{}/ördérs/{}".to_string(), 3))
        );
    }

    #[test]
    fn comments_strings_and_raw_strings_are_not_code() {
        let src = r##"
// fn commented() {}
/* outer /* nested fn nested() {} */ still comment struct Hidden; */
/// ```
/// fn in_doc() {}
/// ```
fn real() {
    let s = "fn in_string() {}";
    let r = r#"struct InRaw; impl x_server::X for Y {}"#;
    let c = '"';
    let m = "multi
line fn nope() {}";
}
fn after<'a>(x: &'a str) -> &'a str { x }
"##;
        let f = extract("src/x.rs", src);
        let names: Vec<&str> = f.symbols.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, vec!["real", "after"]);
        // The comments above `real` are contiguous, so they are one doc block.
        assert_eq!(sym(&f, "real").doc_line, Some(2));
        assert_eq!(sym(&f, "real").end_line, 13);
        assert!(f.grpc.is_empty());
    }

    #[test]
    fn truncated_and_malformed_files_never_panic() {
        let src = r#"use a::{b, c::{d, e as f}};
#[tonic::async_trait]
impl<T> x_server::X for Y<T> where T: Send { async fn m(&self) {} }
struct S { c: XClient<Channel> }
fn main() { let mut c = XClient::connect("x").await?; c.call(1);
  p.send(FutureRecord::to(&std::env::var("T").unwrap_or_else(|_| "d".into())), 0);
  Router::new().route("/x", get(h)); client.get(format!("{}/y", b));
"#;
        for end in 0..=src.len() {
            if src.is_char_boundary(end) {
                let _ = extract("p.rs", &src[..end]);
            }
        }
        extract_each(
            extract,
            "j.rs",
            &[
                "fn",
                "fn x<",
                "impl",
                "impl<",
                "impl for",
                "use",
                "use {",
                "use a::{",
                "mod",
                "enum E {",
                "struct",
                "#[",
                "#![",
                "macro_rules!",
                "const",
                "static mut",
                "type",
                "extern",
                "extern \"C\"",
                "}}}",
                "<<<<",
                ">>>>",
                "'",
                "r#\"",
                "pub(",
            ],
        );
    }

    #[test]
    fn every_short_token_sequence_is_safe() {
        // Index arithmetic at the edges of a file: every sequence of up to four tokens.
        every_short_token_sequence(
            extract,
            "x.rs",
            &[
                ".", "get", "(", "::", "{", "fn", "impl", "=", "\"/x\"", "XClient", "<", "connect",
                "#", "for",
            ],
        );
    }

    #[test]
    fn junk_input_never_panics() {
        let alphabet = b"fn impl trait struct enum mod use pub const static let mut for where ( ) { } [ ] < > : :: = & * # ! \" ' ` / \n\t Client Server to subscribe route get env var \\ \xc3\xa9";
        let text = junk_bytes32(alphabet, 0x9e37_79b9);
        let f = extract("junk.rs", &text);
        assert!(f.symbols.len() < 200_000);
    }
}
