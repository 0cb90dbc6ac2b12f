//! PHP extractor: namespace, `use` imports, declarations, routes, HTTP calls, Kafka and gRPC
//! client facts from one `.php` file.
//!
//! The file is lexed once (comments, strings and heredocs masked; `#[…]` attributes stay
//! code) and walked token by token with a stack of brace frames: a declaration header
//! (`class X`, `function f(…)`, `namespace A;`) leaves a pending frame that the next `{`
//! opens (a `;` first means an abstract method), and the matching `}` gives its end line.
//! Calls are read where their name meets `(`: Laravel `Route::get(…)` inside
//! `Route::prefix(…)->group(…)` ranges, Slim/Lumen `$app->get(…)` and `$router->group(…)`,
//! Guzzle/`Http::`/curl/`file_get_contents` calls, php-rdkafka topics, and methods called on
//! a variable holding a gRPC client. Symfony `#[Route]` attributes and `@Route` annotations
//! are read from the block above a method, joined with the class-level prefix. Topics, URLs
//! and constants are read by the shared evaluator ([`eval`]) over the shared token view, with
//! the shared assignment tracker ([`Assignments`]) for what a variable or property holds.
//!
//! The files: this one holds the entry point, the source view, the walk and its state;
//! `decls.rs` reads declarations (`use`, types, functions, constants, route attributes and
//! annotations, `new`); `calls.rs` reads calls (routes, HTTP clients, curl, Kafka, gRPC).
//! The tests stay here: each reads a whole file through [`extract`].

mod calls;
mod decls;

use calls::call_site;
use decls::{
    Member, case_decl, const_decl, function_decl, grpc_client_service, implements_list, new_expr,
    type_decl, use_stmt,
};

use std::collections::{HashMap, HashSet};

use super::bind::{Assignments, StmtStyle};
use super::common::{self, Brackets};
use super::script;
use super::tokens::Tokens;
use super::value::{ExprRules, Scope, eval};
use crate::index::facts::{
    Binding, EventRole, FileFacts, GrpcFact, HttpFact, Import, Part, SymbolKind, Value,
};
use crate::index::lex::{self, Syntax, ident_before, is_ident_byte};

/// Extracts the facts of one PHP file.
pub fn extract(_path: &str, text: &str) -> FileFacts {
    let mut facts = script::extract::<Php>(text, |src| {
        let code = src.code();
        let lower_has = |needle: &str| {
            code.as_bytes()
                .windows(needle.len())
                .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
        };
        let mut st = State {
            grpc_file: lower_has("grpc"),
            roadrunner: code.contains("GRPC\\"),
            ..State::default()
        };
        walk(src, &mut st);
        st.facts
    });
    // A property is referenced without its `$` (`$this->url`, `self::$url`): `Client.$url`
    // binds as `Client.url`.
    for b in &mut facts.bindings {
        if let Some((c, p)) = b.name.rsplit_once(".$") {
            b.name = format!("{c}.{p}");
        }
    }
    crate::order::sort_by_key(&mut facts.bindings, |b| b.line);
    facts
}

/// PHP, as the script front end reads it.
struct Php;

impl script::Script for Php {
    const SYNTAX: Syntax = Syntax::PHP;
    const STYLE: StmtStyle = StmtStyle::SEMICOLON;
    const RULES: ExprRules = ExprRules::PHP;
    /// Namespace separators are left out of the token view, so `\getenv('X')` reads as
    /// `getenv('X')`; qualified class constants (`\App\Topics::X`) are read from the bytes.
    const SKIP: Option<u8> = Some(b'\\');
}

/// The file as the PHP extractor reads it.
type Src<'a> = script::Src<'a, Php>;

/// What a name holds for the evaluator: the tracker's answer, except that a property assigned
/// a constructor parameter (`$this->catalogueUrl = $catalogueUrl`) is an injected dependency —
/// configuration the graph may resolve by the property's name — so it stays a reference
/// (`{$this.catalogueUrl}`) instead of becoming a run-time hole.
struct PhpScope<'s> {
    t: &'s Tokens<'s, 's>,
    asg: &'s Assignments,
}

impl Scope for PhpScope<'_> {
    fn lookup(&self, name: &str, at: usize) -> Option<(usize, usize)> {
        let local = self.asg.last(name, at).is_some_and(|a| !a.top_level);
        let (a, b) = self.asg.lookup(name, at)?;
        let injected = b == a + 1
            && self
                .t
                .ident(a)
                .is_some_and(|p| p.starts_with('$') && self.asg.is_param(p, a));
        (local || !injected).then_some((a, b))
    }

    fn is_param(&self, name: &str, at: usize) -> bool {
        self.asg.is_param(name, at)
    }
}

/// An open `{ … }`.
#[derive(Debug, Clone, Default)]
struct Frame {
    kind: FrameKind,
    symbol: Option<usize>,
    /// The type's name (for `self::X` and method containers).
    type_name: Option<String>,
    /// Symfony class-level `#[Route('/prefix')]`.
    route_prefix: String,
    /// The class-level route itself: an invokable controller (`__invoke` and no route of its
    /// own) is served there.
    class_route: Option<RouteDecl>,
}

/// A curl handle: the URL it was given (`curl_init($url)`, `CURLOPT_URL`) as a byte range,
/// and the method its options set.
#[derive(Debug, Clone, Default)]
struct Curl {
    url: Option<(usize, usize)>,
    method: Option<String>,
}

/// A Symfony route declared by an attribute or a docblock annotation.
#[derive(Debug, Clone, Default)]
struct RouteDecl {
    /// Upper case; empty for any method.
    methods: Vec<String>,
    path: String,
    /// The line of the `#[Route` / `@Route` itself.
    line: u32,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum FrameKind {
    Namespace,
    Type,
    Enum,
    Function,
    #[default]
    Other,
}

#[derive(Default)]
struct State {
    facts: FileFacts,
    grpc_file: bool,
    /// The file uses RoadRunner's `Spiral\RoadRunner\GRPC` (servers implement `<Svc>Interface`).
    roadrunner: bool,
    /// Variable/property name (without `$`/`$this->`) → gRPC service of the client it holds.
    grpc_clients: HashMap<String, String>,
    http_clients: HashSet<String>,
    /// A Guzzle client's `base_uri` (the byte range of its value), by variable.
    http_bases: HashMap<String, (usize, usize)>,
    /// curl handles by variable (without `$`): what `curl_init` and the options gave them.
    curl: HashMap<String, Curl>,
    /// Name → true for an rdkafka consumer (`new RdKafka\Consumer`), false for a producer.
    kafka: HashMap<String, bool>,
    /// Variables holding a router (`$app = AppFactory::create()`, a group closure's
    /// parameter), without `$`; `$app` and `$router` always are.
    routers: HashSet<String>,
    /// Laravel route groups: (close paren offset, full prefix).
    groups: Vec<(usize, String)>,
}

impl<'a> Src<'a> {
    /// The string literal making up exactly `s..e`.
    fn literal(&self, s: usize, e: usize) -> Option<&lex::StrLit<'a>> {
        let (s, e) = self.trim(s, e);
        self.lx.string_at(s).filter(|l| l.start == s && l.end == e)
    }

    /// True when the literal interpolates (`"…"` or a heredoc, not `'…'` or a nowdoc).
    fn interpolates(&self, l: &lex::StrLit) -> bool {
        let t = self.lx.text.as_bytes();
        match t.get(l.start) {
            Some(b'"') => true,
            Some(b'<') => !self.lx.text[l.start..l.end.min(l.start + 16)].contains('\''),
            _ => false,
        }
    }

    /// The value of a literal without interpolated variables.
    fn plain_string(&self, s: usize, e: usize) -> Option<String> {
        let l = self.literal(s, e)?;
        let v = l.value();
        let dynamic = self.interpolates(l) && v.contains('$');
        (!dynamic).then(|| v.into_owned())
    }

    /// Call arguments: positional ranges and `name: value` named ranges.
    fn args(&self, open: usize, close: usize) -> Args<'_> {
        let code = self.code();
        let mut args = Args::default();
        for (a, z) in common::split_top(code, open + 1, close, b',', &self.br) {
            if let Some((p, id)) = lex::ident_after(code, a).filter(|(p, _)| *p == a) {
                let after = p + id.len();
                let rest = &code[after..z];
                let t = rest.trim_start();
                if t.starts_with(':') && !t.starts_with("::") && !id.starts_with('$') {
                    let colon = after + (rest.len() - t.len());
                    args.named.push((id, (colon + 1, z)));
                    continue;
                }
            }
            if code[a..z].starts_with("...") {
                continue;
            }
            args.positional.push((a, z));
        }
        args
    }

    /// Items of an array literal `[…]` / `array(…)`, or the range itself.
    fn items(&self, s: usize, e: usize) -> Vec<(usize, usize)> {
        let (s, e) = self.trim(s, e);
        let code = self.code();
        let b = code.as_bytes();
        if s < e && b[s] == b'[' && self.br.close_of(s) == Some(e - 1) {
            return common::split_top(code, s + 1, e - 1, b',', &self.br);
        }
        if code[s..e].starts_with("array(") && self.br.close_of(s + 5) == Some(e - 1) {
            return common::split_top(code, s + 6, e - 1, b',', &self.br);
        }
        vec![(s, e)]
    }

    /// The plain strings among the [`Src::items`] at `s..e`, upper-cased (HTTP methods).
    fn upper_strings(&self, s: usize, e: usize) -> Vec<String> {
        self.items(s, e)
            .into_iter()
            .filter_map(|(a, z)| self.plain_string(a, z))
            .map(|m| m.to_ascii_uppercase())
            .collect()
    }

    /// The value of the expression at bytes `s..e`, read by the shared evaluator. PHP's own
    /// names come first: a class constant (`Topics::ORDER_CREATED`, `\App\Topics::X`, an
    /// enum case's `->value`) is `Topics.ORDER_CREATED`, and `self::`/`static::` name the
    /// enclosing class.
    fn value(&self, s: usize, e: usize, class: Option<&str>) -> Value {
        let (s, e) = self.trim(s, e);
        if s >= e {
            return Value::dynamic();
        }
        let text = &self.code()[s..e];
        let text = text.strip_suffix("->value").unwrap_or(text);
        if let Some((ty, c)) = text.split_once("::")
            && !ty.is_empty()
            && ty.bytes().all(|b| is_ident_byte(b) || b == b'\\')
            && !ty.starts_with('$')
            && !c.is_empty()
            && c.bytes().all(is_ident_byte)
            && !c.starts_with('$')
            && c != "class"
        {
            let ty = ty.rsplit('\\').next().unwrap_or(ty);
            let ty = match (ty, class) {
                ("self" | "static", Some(cls)) => cls,
                _ => ty,
            };
            return Value::reference(format!("{ty}.{c}"));
        }
        let t = self.t;
        let (a, b) = t.range_of(s, e);
        let scope = PhpScope { t, asg: self.asg };
        let mut v = eval(t, (a, b), &ExprRules::PHP, &scope);
        for p in &mut v.parts {
            if let Part::Ref { name, .. } = p {
                // `self.X` (from `self::X . '/y'`) is the enclosing class's constant; a name
                // is constant-cased in the graph without `null`/`true` spellings.
                if let Some(rest) = name
                    .strip_prefix("self.")
                    .or_else(|| name.strip_prefix("static."))
                    && let Some(cls) = class
                {
                    *name = format!("{cls}.{}", rest.trim_start_matches('$'));
                }
            }
        }
        if matches!(
            v.parts.as_slice(),
            [Part::Ref { name, .. }] if matches!(name.to_ascii_lowercase().as_str(), "null" | "true" | "false")
        ) {
            return Value::dynamic();
        }
        v
    }

    /// A topic: a literal that looks like a topic name, or whatever the evaluator reads (an
    /// environment lookup with its default, a constant left to the graph, a variable traced to
    /// its value, or a run-time value, kept so the site is listed as unresolved).
    fn topic(&self, s: usize, e: usize, class: Option<&str>) -> Option<Value> {
        let (s, e) = self.trim(s, e);
        if s >= e {
            return None;
        }
        common::topic_of(self.value(s, e, class))
    }

    /// The URL of an HTTP call at `s..e`. `sure` when the receiver is an HTTP client by what
    /// it is (the `Http` facade, a `new Client`); otherwise the value must read like a URL, so
    /// `$cache->get($key)` is not taken for a request.
    fn url(&self, s: usize, e: usize, sure: bool, class: Option<&str>) -> Option<Value> {
        let (s, e) = self.trim(s, e);
        if s >= e {
            return None;
        }
        common::url_of(self.value(s, e, class), sure)
    }
}

#[derive(Default)]
struct Args<'c> {
    positional: Vec<(usize, usize)>,
    named: Vec<(&'c str, (usize, usize))>,
}

impl Args<'_> {
    fn named(&self, name: &str) -> Option<(usize, usize)> {
        self.named.iter().find(|(k, _)| *k == name).map(|(_, r)| *r)
    }
}

/// How far a declaration's header or a `use`/`const` statement is searched for its end: far
/// beyond real code, and it keeps hostile input (many headers, no `;`) linear.
const HEADER_WINDOW: usize = 4096;

/// The end of a statement starting at `from`: its `;`, else the end of the search window.
fn statement_end(code: &str, from: usize) -> usize {
    let mut to = (from + HEADER_WINDOW).min(code.len());
    while !code.is_char_boundary(to) {
        to -= 1;
    }
    code.as_bytes()
        .get(from..to)
        .and_then(|w| w.iter().position(|&c| c == b';'))
        .map_or(to, |p| from + p)
}

/// The qualified name (`A\B\C`, `\A\B`) starting at or after `at`: its range.
fn qualified_name(code: &str, at: usize) -> Option<(usize, usize)> {
    let b = code.as_bytes();
    let mut i = at;
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    let start = i;
    while i < b.len() && (is_ident_byte(b[i]) || b[i] == b'\\') {
        i += 1;
    }
    (i > start).then_some((start, i))
}

/// The receiver chain before a `->`/`?->`/`::` that ends at `sep_end` (exclusive).
struct Chain<'c> {
    text: &'c str,
    start: usize,
}

impl Chain<'_> {
    /// The variable or property the chain names: `$client` and `$this->client` give `client`.
    fn key(&self) -> Option<&str> {
        let t = self.text;
        let t = t
            .strip_prefix("$this->")
            .or_else(|| t.strip_prefix("$this?->"))
            .or_else(|| t.strip_prefix("self::$"))
            .or_else(|| t.strip_prefix("static::$"))
            .unwrap_or(t);
        let t = t.strip_prefix('$').unwrap_or(t);
        (!t.is_empty() && t.bytes().all(is_ident_byte)).then_some(t)
    }

    /// The first segment (`Http` in `Http::withToken($t)->post`).
    fn root(&self) -> &str {
        let end = self
            .text
            .find(['-', ':', '?', '('])
            .unwrap_or(self.text.len());
        self.text[..end].trim_start_matches('\\')
    }
}

/// The chain ending just before the separator that starts at `sep`.
fn chain_before<'c>(code: &'c str, br: &Brackets, sep: usize) -> Chain<'c> {
    let b = code.as_bytes();
    let end = sep;
    let mut p = sep;
    let mut start = sep;
    for _ in 0..16 {
        if p == 0 {
            break;
        }
        let prev = b[p - 1];
        if prev == b')' || prev == b']' {
            let Some(open) = br.open_of(p - 1) else { break };
            start = match ident_before(code, open).filter(|(s, id)| s + id.len() == open) {
                Some((s, _)) => s,
                None => open,
            };
        } else if is_ident_byte(prev) {
            let Some((s, _)) = ident_before(code, p) else {
                break;
            };
            start = s;
            while start > 0 && b[start - 1] == b'\\' {
                match ident_before(code, start - 1) {
                    Some((s2, _)) => start = s2,
                    None => {
                        start -= 1;
                        break;
                    }
                }
            }
        } else {
            break;
        }
        if start >= 2 && (b[start - 2] == b'-' && b[start - 1] == b'>') {
            p = start - 2;
            if p > 0 && b[p - 1] == b'?' {
                p -= 1;
            }
        } else if start >= 2 && (b[start - 2] == b':' && b[start - 1] == b':') {
            p = start - 2;
        } else {
            break;
        }
    }
    Chain {
        text: &code[start..end],
        start,
    }
}

/// The walk over the file's tokens.
fn walk(src: &Src, st: &mut State) {
    let code = src.code();
    let b = code.as_bytes();
    let n = b.len();
    let mut nest = Nest::default();
    let mut open_namespace: Option<usize> = None;
    let mut i = 0;
    while i < n {
        let c = b[i];
        if nest.punct(src, st, c, i) {
            i += 1;
            continue;
        }
        if !is_ident_byte(c) || (i > 0 && is_ident_byte(b[i - 1])) {
            i += 1;
            continue;
        }
        let ts = i;
        let mut te = i;
        while te < n && is_ident_byte(b[te]) {
            te += 1;
        }
        i = te;
        let word = &code[ts..te];
        let member = is_member(b, ts);
        let class = nest
            .types
            .last()
            .and_then(|&t| nest.frames.get(t))
            .and_then(|f| f.type_name.as_deref());
        let in_type_body = nest
            .frames
            .last()
            .is_some_and(|f| matches!(f.kind, FrameKind::Type | FrameKind::Enum));
        // Keywords all start with one of these letters: most tokens skip the match.
        if !member
            && matches!(
                word.as_bytes()[0],
                b'n' | b'u' | b'c' | b'i' | b't' | b'e' | b'f'
            )
        {
            match word {
                "namespace" => {
                    if let Some(next) =
                        namespace_decl(src, st, ts, te, &mut nest.pending, &mut open_namespace)
                    {
                        i = next;
                    }
                    continue;
                }
                "use" => {
                    let top_level = nest.non_namespace == 0;
                    if top_level && lex::prev_non_space(code, ts).is_none_or(|(_, p)| p != b')') {
                        i = use_stmt(src, st, te);
                    }
                    continue;
                }
                "class" if matches!(ident_before(code, ts), Some((_, "new"))) => {
                    // An anonymous class: its methods are methods, of no named type.
                    nest.pending = Some(Frame {
                        kind: FrameKind::Type,
                        ..Frame::default()
                    });
                    continue;
                }
                "class" | "interface" | "trait" | "enum" => {
                    if let Some((f, next)) = type_decl(src, st, ts, te, word, class) {
                        nest.pending = Some(f);
                        i = next;
                    }
                    continue;
                }
                "implements" => {
                    if st.grpc_file
                        && let Some(p) = &nest.pending
                        && let Some(name) = p.type_name.clone()
                        && let Some(sym) = p.symbol.and_then(|s| st.facts.symbols.get(s))
                    {
                        let line = sym.line;
                        i = implements_list(src, st, te, &name, line);
                    }
                    continue;
                }
                "function" => {
                    if let Some((f, next)) = function_decl(src, st, ts, te, &nest.frames, class) {
                        nest.pending = Some(f);
                        i = next;
                    }
                    continue;
                }
                "const" if in_type_body || nest.non_namespace == 0 => {
                    i = const_decl(src, st, &Member::new(src, ts, te, class));
                    continue;
                }
                "case"
                    if nest
                        .frames
                        .last()
                        .is_some_and(|f| f.kind == FrameKind::Enum) =>
                {
                    i = case_decl(src, st, &Member::new(src, ts, te, class));
                    continue;
                }
                "new" => {
                    new_expr(src, st, ts, te);
                    continue;
                }
                _ => {}
            }
        }
        // A typed property or promoted parameter holding a gRPC client:
        // `private OrderServiceClient $client`.
        if st.grpc_file
            && word.starts_with('$')
            && let Some((_, ty)) = ident_before(code, ts)
            && let Some(svc) = grpc_client_service(ty)
        {
            st.grpc_clients
                .insert(word.trim_start_matches('$').to_string(), svc.to_string());
        }
        if let Some((open, b'(')) = lex::next_non_space(code, te)
            && let Some(close) = src.br.close_of(open)
        {
            call_site(src, st, ts, te, open, close, class);
        }
    }
    if let Some(prev) = open_namespace
        && let Some(sym) = st.facts.symbols.get_mut(prev)
    {
        sym.end_line = src.lx.line_count().max(sym.line);
    }
    let last = src.lx.line_count();
    for f in nest.frames {
        if let Some(sym) = f.symbol.and_then(|s| st.facts.symbols.get_mut(s)) {
            sym.end_line = last.max(sym.line);
        }
    }
}

/// The open blocks of the walk: a frame for every `{`, typed by the declaration before it.
#[derive(Default)]
struct Nest {
    frames: Vec<Frame>,
    /// Indices of the type frames in `frames`, and how many frames are not namespaces, so the
    /// enclosing type and "at top level" are O(1) however deep the nesting.
    types: Vec<usize>,
    non_namespace: usize,
    /// The declaration whose `{` (or `;`) comes next.
    pending: Option<Frame>,
}

impl Nest {
    /// Opens or closes a block at a `{`, `}` or `;` at `i` (ending the declaration it closes);
    /// false for any other byte.
    fn punct(&mut self, src: &Src, st: &mut State, c: u8, i: usize) -> bool {
        match c {
            b'{' => {
                let f = self.pending.take().unwrap_or_default();
                if matches!(f.kind, FrameKind::Type | FrameKind::Enum) {
                    self.types.push(self.frames.len());
                }
                if f.kind != FrameKind::Namespace {
                    self.non_namespace += 1;
                }
                self.frames.push(f);
                true
            }
            b'}' => {
                if let Some(f) = self.frames.pop() {
                    if self.types.last() == Some(&self.frames.len()) {
                        self.types.pop();
                    }
                    if f.kind != FrameKind::Namespace {
                        self.non_namespace -= 1;
                    }
                    if let Some(sym) = f.symbol.and_then(|s| st.facts.symbols.get_mut(s)) {
                        sym.end_line = src.line_of(i);
                    }
                }
                true
            }
            b';' => {
                if let Some(f) = self.pending.take()
                    && let Some(sym) = f.symbol.and_then(|s| st.facts.symbols.get_mut(s))
                {
                    sym.end_line = src.line_of(i);
                }
                true
            }
            _ => false,
        }
    }
}

/// `namespace A\B;` or `namespace A\B { … }` after the keyword at `ts..te`: the module symbol
/// (ending the previous unbraced namespace) and the package. Returns where the walk resumes.
fn namespace_decl(
    src: &Src,
    st: &mut State,
    ts: usize,
    te: usize,
    pending: &mut Option<Frame>,
    open_namespace: &mut Option<usize>,
) -> Option<usize> {
    let code = src.code();
    if let Some((ns, ne)) = qualified_name(code, te)
        && !code[ns..ne].starts_with('\\')
    {
        let name = &code[ns..ne];
        if let Some(prev) = open_namespace.take()
            && let Some(sym) = st.facts.symbols.get_mut(prev)
        {
            sym.end_line = src.line_of(ts).saturating_sub(1).max(sym.line);
        }
        if st.facts.package.is_none() {
            st.facts.package = Some(name.to_string());
        }
        let idx = st.facts.push_symbol(
            name,
            SymbolKind::Module,
            (src.line_of(ns), src.lx.line_count()),
            src.lx.doc_comment_above(src.line_of(ts)),
            None,
        );
        match lex::next_non_space(code, ne) {
            Some((_, b'{')) => {
                *pending = Some(Frame {
                    kind: FrameKind::Namespace,
                    symbol: Some(idx),
                    ..Frame::default()
                })
            }
            _ => *open_namespace = Some(idx),
        }
        return Some(ne);
    }
    None
}

/// True when the token at `ts` follows `->`, `?->` or `::` (a member, not a keyword).
fn is_member(b: &[u8], ts: usize) -> bool {
    let mut k = ts;
    while k > 0 && b[k - 1].is_ascii_whitespace() {
        k -= 1;
    }
    k >= 2 && ((b[k - 2] == b'-' && b[k - 1] == b'>') || (b[k - 2] == b':' && b[k - 1] == b':'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::lang::test_support::{
        assert_http_calls, bindings, events, grpc_call_fact, grpc_client_fact, grpc_server_fact,
        http_calls, imports, lit, names, routes, sym,
    };

    #[test]
    fn namespace_types_methods_constants_and_docs() {
        let src = r#"<?php
declare(strict_types=1);

namespace App\Orders;

use App\Models\Order;
use Psr\Log\LoggerInterface as Logger;
use App\Events\{OrderCreated, OrderPaid as Paid};
use function App\Support\helper;

/**
 * The order service.
 */
#[Attribute]
final class OrderService extends Base implements Contract
{
    use LoggerTrait;

    public const TOPIC = 'orders.created';
    const RETRIES = 3, BACKOFF = 'linear';

    public function __construct(
        private readonly Logger $logger,
    ) {
        $cb = function () use ($logger) { return 1; };
        $x = new class {
            public function inner() {}
        };
    }

    #[Pure]
    public static function &create(array $items = []): Order
    {
        if ($items) { return new Order(); }
        return Order::class;
    }

    abstract protected function hook(): void;
}

interface Contract
{
    public function create(array $items): Order;
}

trait LoggerTrait {}

enum Topics: string
{
    case ORDER_CREATED = 'order.created';
    case ORDER_PAID = "order.paid";

    public function label(): string
    {
        switch ($this) { case self::ORDER_PAID: return 'x'; }
        return 'y';
    }
}

function top_level(): void {}
const VERSION = '1.0';
define('APP_TOPIC', getenv('APP_TOPIC') ?: 'app.events');
"#;
        let f = extract("src/Orders/OrderService.php", src);
        assert_eq!(f.package.as_deref(), Some("App\\Orders"));
        let ns = sym(&f, "App\\Orders");
        assert_eq!((ns.kind, ns.line), (SymbolKind::Module, 4));
        let svc = sym(&f, "OrderService");
        assert_eq!(
            (svc.kind, svc.line, svc.end_line, svc.doc_line),
            (SymbolKind::Class, 15, 39, Some(11))
        );
        let ctor = sym(&f, "__construct");
        assert_eq!(
            (ctor.kind, ctor.line, ctor.end_line),
            (SymbolKind::Constructor, 22, 29)
        );
        assert_eq!(ctor.container.as_deref(), Some("OrderService"));
        let create = f
            .symbols
            .iter()
            .find(|s| s.name == "create" && s.container.as_deref() == Some("OrderService"))
            .unwrap();
        assert_eq!(
            (create.kind, create.line, create.end_line, create.doc_line),
            (SymbolKind::Method, 32, 36, Some(31))
        );
        let hook = sym(&f, "hook");
        assert_eq!((hook.line, hook.end_line), (38, 38));
        let inner = sym(&f, "inner");
        assert_eq!(
            (inner.kind, inner.container.as_deref()),
            (SymbolKind::Method, None)
        );
        assert_eq!(sym(&f, "Contract").kind, SymbolKind::Interface);
        assert_eq!(sym(&f, "LoggerTrait").kind, SymbolKind::Trait);
        let topics = sym(&f, "Topics");
        assert_eq!((topics.kind, topics.end_line), (SymbolKind::Enum, 58));
        let case = sym(&f, "ORDER_CREATED");
        assert_eq!(
            (case.kind, case.container.as_deref()),
            (SymbolKind::EnumValue, Some("Topics"))
        );
        assert_eq!(sym(&f, "label").kind, SymbolKind::Method);
        assert_eq!(sym(&f, "top_level").kind, SymbolKind::Function);
        assert_eq!(
            sym(&f, "RETRIES").container.as_deref(),
            Some("OrderService")
        );
        let consts = bindings(&f);
        assert_eq!(
            consts,
            vec![
                ("OrderService.TOPIC", lit("orders.created")),
                // Every constant with a value the evaluator reads is a binding, numbers too.
                ("OrderService.RETRIES", lit("3")),
                ("OrderService.BACKOFF", lit("linear")),
                ("Topics.ORDER_CREATED", lit("order.created")),
                ("Topics.ORDER_PAID", lit("order.paid")),
                ("VERSION", lit("1.0")),
                // The env lookup stays a lookup with its default: the graph answers `env
                // APP_TOPIC default`.
                (
                    "APP_TOPIC",
                    Value::env("APP_TOPIC", Some("app.events".into()))
                ),
            ]
        );
        let imps: Vec<(&str, Vec<&str>, Option<&str>, u32)> = imports(&f)
            .into_iter()
            .map(|(module, names, alias, line, _)| (module, names, alias, line))
            .collect();
        assert_eq!(
            imps,
            vec![
                ("App\\Models\\Order", vec![], None, 6),
                ("Psr\\Log\\LoggerInterface", vec![], Some("Logger"), 7),
                ("App\\Events", vec!["OrderCreated", "OrderPaid"], None, 8),
                ("App\\Support\\helper", vec![], None, 9),
            ]
        );
    }

    #[test]
    fn laravel_routes_with_groups_and_resources() {
        let src = r#"<?php
use Illuminate\Support\Facades\Route;
use App\Http\Controllers\OrderController;

Route::get('/health', fn () => 'ok');
Route::post('orders', [OrderController::class, 'store']);
Route::prefix('v1')->middleware('auth')->group(function () {
    Route::get('/orders/{id}', [OrderController::class, 'show']);
    Route::group(['prefix' => 'admin'], function () {
        Route::delete('orders/{id}', 'OrderController@destroy');
    });
    Route::match(['get', 'post'], '/search', SearchController::class);
});
Route::put('/after', [OrderController::class, 'after']);
Route::apiResource('carts', CartController::class);
"#;
        let f = extract("routes/api.php", src);
        let r = |m: &str, p: &str, h: Option<&str>, l: u32| {
            (m.to_string(), p.to_string(), h.map(String::from), l)
        };
        assert_eq!(
            routes(&f),
            vec![
                r("GET", "/health", None, 5),
                r("POST", "/orders", Some("OrderController@store"), 6),
                r("GET", "/v1/orders/{id}", Some("OrderController@show"), 8),
                r(
                    "DELETE",
                    "/v1/admin/orders/{id}",
                    Some("OrderController@destroy"),
                    10
                ),
                r("GET", "/v1/search", Some("SearchController"), 12),
                r("POST", "/v1/search", Some("SearchController"), 12),
                r("PUT", "/after", Some("OrderController@after"), 14),
                r("GET", "/carts", Some("CartController@index"), 15),
                r("POST", "/carts", Some("CartController@store"), 15),
                r("GET", "/carts/{cart}", Some("CartController@show"), 15),
                r("PUT", "/carts/{cart}", Some("CartController@update"), 15),
                r("PATCH", "/carts/{cart}", Some("CartController@update"), 15),
                r(
                    "DELETE",
                    "/carts/{cart}",
                    Some("CartController@destroy"),
                    15
                ),
            ]
        );
    }

    #[test]
    fn symfony_route_attributes_and_annotations() {
        let src = r#"<?php
namespace App\Controller;

use Symfony\Component\Routing\Attribute\Route;

#[Route('/api/orders')]
class OrderController extends AbstractController
{
    #[Route('/{id}', name: 'order_show', methods: ['GET'])]
    public function show(int $id): Response {}

    #[Route(path: '', methods: ['POST', 'PUT'])]
    public function create(): Response {}

    /**
     * @Route("/legacy", methods={"DELETE"})
     */
    public function legacy(): Response {}

    #[Route('/any')]
    public function any(): Response {}
}
"#;
        let f = extract("src/Controller/OrderController.php", src);
        let r = |m: &str, p: &str, h: &str, l: u32| {
            (m.to_string(), p.to_string(), Some(h.to_string()), l)
        };
        assert_eq!(
            routes(&f),
            vec![
                r("GET", "/api/orders/{id}", "OrderController::show", 9),
                r("POST", "/api/orders", "OrderController::create", 12),
                r("PUT", "/api/orders", "OrderController::create", 12),
                // The route is where its `@Route` is, not the function line.
                r(
                    "DELETE",
                    "/api/orders/legacy",
                    "OrderController::legacy",
                    16
                ),
                r("ANY", "/api/orders/any", "OrderController::any", 20),
            ]
        );
        assert_eq!(sym(&f, "show").doc_line, Some(9));
        assert_eq!(sym(&f, "legacy").doc_line, Some(15));
        assert_eq!(sym(&f, "OrderController").doc_line, Some(6));
    }

    #[test]
    fn symfony_annotation_lines_invokable_controllers_and_attribute_blocks() {
        // robot-shop's ratings service.
        let api = r#"<?php
namespace Instana\RobotShop\Ratings\Controller;

use Symfony\Component\Routing\Annotation\Route;

/**
 * @Route("/api")
 */
class RatingsApiController implements LoggerAwareInterface
{
    /**
     * @Route(path="/rate/{sku}/{score}", methods={"PUT"})
     */
    public function put(Request $request, string $sku, int $score): Response {}

    /**
     * Fetches one.
     *
     * @Route("/fetch/{sku}", methods={"GET"}, name="fetch")
     */
    public function get(Request $request, string $sku): Response {}

    /**
     * @Route(name="named", path="/named")
     */
    public function named(): Response {}

    /** Not a route: @RouteParam("x") */
    public function helper(): void {}
}
"#;
        let f = extract("src/Controller/RatingsApiController.php", api);
        let r = |m: &str, p: &str, h: &str, l: u32| {
            (m.to_string(), p.to_string(), Some(h.to_string()), l)
        };
        assert_eq!(
            routes(&f),
            vec![
                r(
                    "PUT",
                    "/api/rate/{sku}/{score}",
                    "RatingsApiController::put",
                    12
                ),
                r("GET", "/api/fetch/{sku}", "RatingsApiController::get", 19),
                r("ANY", "/api/named", "RatingsApiController::named", 24),
            ]
        );
        let health = r#"<?php
namespace App\Controller;

/**
 * @Route("/_health")
 */
class HealthController implements LoggerAwareInterface
{
    public function __construct(HealthCheckService $healthCheckService)
    {
        $this->healthCheckService = $healthCheckService;
    }

    public function __invoke(Request $request) {}
}

#[Route('/ping', methods: ['GET'])]
final class PingController
{
    public function __invoke(): Response {}
}

final class NotRouted
{
    public function __invoke(): Response {}
}

class Attributes
{
    #[IsGranted('ROLE_ADMIN')]
    #[Route('/admin/users', methods: ['GET'])]
    public function users(): Response {}
}
"#;
        let f = extract("src/Controller/HealthController.php", health);
        assert_eq!(
            routes(&f),
            vec![
                // An invokable controller is one route at its class-level route.
                r("ANY", "/_health", "HealthController::__invoke", 5),
                r("GET", "/ping", "PingController::__invoke", 17),
                // The route attribute's own line, not the first attribute block's.
                r("GET", "/admin/users", "Attributes::users", 31),
            ]
        );
    }

    #[test]
    fn slim_lumen_and_laravel_routers() {
        let src = r#"<?php
use Slim\Factory\AppFactory;
use Slim\Routing\RouteCollectorProxy;

$app = AppFactory::create();
$app->get('/health', function ($request, $response) { return $response; });
$app->post('/orders', [OrderController::class, 'create']);
$app->map(['PUT', 'PATCH'], '/orders/{id}', 'OrderController:update');
$app->group('/api', function (RouteCollectorProxy $group) {
    $group->get('/items/{id}', ItemAction::class);
    $group->group('/v2', function (RouteCollectorProxy $v2) {
        $v2->delete('/items/{id}', DeleteItem::class);
    });
});
$router->group(['prefix' => 'lumen'], function () use ($router) {
    $router->get('/users', ['uses' => 'UserController@index', 'as' => 'users']);
});
Route::get('/laravel', [HomeController::class, 'index']);
$cache->get('/not/a/route', function () { return 1; });
$app->get('/no-handler');
"#;
        let f = extract("public/index.php", src);
        let r = |m: &str, p: &str, h: Option<&str>, l: u32| {
            (m.to_string(), p.to_string(), h.map(String::from), l)
        };
        assert_eq!(
            routes(&f),
            vec![
                r("GET", "/health", None, 6),
                r("POST", "/orders", Some("OrderController@create"), 7),
                r("PUT", "/orders/{id}", Some("OrderController:update"), 8),
                r("PATCH", "/orders/{id}", Some("OrderController:update"), 8),
                r("GET", "/api/items/{id}", Some("ItemAction"), 10),
                r("DELETE", "/api/v2/items/{id}", Some("DeleteItem"), 12),
                r("GET", "/lumen/users", Some("UserController@index"), 16),
                r("GET", "/laravel", Some("HomeController@index"), 18),
            ]
        );
        assert!(http_calls(&f).is_empty());
    }

    #[test]
    fn curl_injected_urls_guzzle_http_facade_and_env() {
        // robot-shop's ratings → catalogue call.
        let src = r#"<?php
namespace Instana\RobotShop\Ratings\Service;

class CatalogueService
{
    private $catalogueUrl;

    public function __construct(string $catalogueUrl)
    {
        $this->catalogueUrl = $catalogueUrl;
    }

    public function checkSKU(string $sku): bool
    {
        $url = sprintf('%s/product/%s', $this->catalogueUrl, $sku);
        $opt = [
            CURLOPT_RETURNTRANSFER => true,
        ];
        $curl = curl_init($url);
        curl_setopt_array($curl, $opt);
        $data = curl_exec($curl);
        curl_close($curl);
        return true;
    }

    public function rate(string $sku, int $score = 5)
    {
        $ch = curl_init();
        curl_setopt($ch, CURLOPT_URL, (getenv('RATINGS_URL') ?: 'http://ratings:80') . "/api/rate/$sku/$score");
        curl_setopt($ch, CURLOPT_CUSTOMREQUEST, 'PUT');
        curl_exec($ch);
        $h = curl_init($this->base . '/orders');
        curl_setopt_array($h, [CURLOPT_POSTFIELDS => $body]);
        \curl_exec($h);
    }

    public function others(string $id)
    {
        $client = new \GuzzleHttp\Client();
        $client->request('GET', ($_ENV['CART_URL'] ?? 'http://cart:8080') . '/cart/' . $id);
        $client->get(env('USER_URL', 'http://user:8080') . "/users/{$id}");
        Http::get("{$this->shippingUrl}/calc/{$id}");
        $price = file_get_contents('http://pricing/price/' . $id);
        $conf = file_get_contents(__DIR__ . '/config.json');
        $local = file_get_contents('/etc/hosts');
        $this->cache->get('/not/http');
    }
}
"#;
        let f = extract("src/Service/CatalogueService.php", src);
        assert_http_calls(
            &f,
            &[
                // The request is `curl_exec`; the URL is what `curl_init` was given, and a
                // constructor-injected property stays a name the graph may resolve.
                ("GET", "{$this.catalogueUrl}/product/{}", 21),
                // `CURLOPT_URL` and `CURLOPT_CUSTOMREQUEST` set on the handle.
                ("PUT", "{env RATINGS_URL}/api/rate/{}/{}", 31),
                // `CURLOPT_POSTFIELDS` makes it a POST.
                ("POST", "{$this.base}/orders", 34),
                ("GET", "{env CART_URL}/cart/{}", 40),
                ("GET", "{env USER_URL}/users/{}", 41),
                ("GET", "{$this.shippingUrl}/calc/{}", 42),
                ("GET", "http://pricing/price/{}", 43),
            ],
        );
        let url = |l: u32| {
            f.http.iter().find_map(|h| match h {
                HttpFact::Call { url, line, .. } if *line == l => Some(url.clone()),
                _ => None,
            })
        };
        // `?:`, `??` and `env()` defaults stay with their lookups.
        let env = |v: &str, d: &str| Part::Env {
            var: v.into(),
            default: Some(d.into()),
        };
        assert_eq!(
            [31, 40, 41].map(|l| url(l).map(|u| u.parts[0].clone())),
            [
                Some(env("RATINGS_URL", "http://ratings:80")),
                Some(env("CART_URL", "http://cart:8080")),
                Some(env("USER_URL", "http://user:8080")),
            ]
        );
    }

    #[test]
    fn env_lookups_bind_with_their_defaults() {
        let src = r#"<?php
$catalogue = getenv('CATALOGUE_URL') ?: 'http://catalogue:8080';
$cart = $_ENV['CART_URL'] ?? 'http://cart:8080';
$user = env('USER_URL', 'http://user:8080');
$server = $_SERVER['SHIP_URL'];
$plain = \getenv('PLAIN');
$other = getenv('A') ?: $fallback;
$computed = getenv($name);
define('TOPIC', $_ENV['TOPIC'] ?? 'orders');

class Gateway
{
    private $baseUrl = 'http://gateway:8080';

    public function f($id)
    {
        return $this->client->get($this->baseUrl . '/orders/' . $id);
    }
}
"#;
        let f = extract("config.php", src);
        let got = bindings(&f);
        let env = |v: &str, d: Option<&str>| Value::env(v, d.map(str::to_string));
        assert_eq!(
            got,
            vec![
                (
                    "$catalogue",
                    env("CATALOGUE_URL", Some("http://catalogue:8080"))
                ),
                ("$cart", env("CART_URL", Some("http://cart:8080"))),
                ("$user", env("USER_URL", Some("http://user:8080"))),
                ("$server", env("SHIP_URL", None)),
                ("$plain", env("PLAIN", None)),
                // A fallback that is not a literal gives no default.
                ("$other", env("A", None)),
                ("TOPIC", env("TOPIC", Some("orders"))),
                // A property binds without its `$`, as `$this->baseUrl` names it.
                ("Gateway.baseUrl", lit("http://gateway:8080")),
            ]
        );
        assert_http_calls(&f, &[("GET", "{$this.baseUrl}/orders/{}", 17)]);
    }

    #[test]
    fn kafka_rdkafka_and_laravel_kafka() {
        let src = r#"<?php
namespace App\Events;

class Publisher
{
    const TOPIC = 'orders.created';

    public function publish()
    {
        $producer = new \RdKafka\Producer($conf);
        $topic = $producer->newTopic("orders.created");
        $producer->newTopic(self::TOPIC);
        $producer->newTopic(Topics::ORDER_PAID->value);
        $producer->newTopic(getenv('OUT_TOPIC') ?: 'out.default');
        $consumer = new \RdKafka\KafkaConsumer($conf);
        $consumer->subscribe(['payments.done', Topics::REFUNDED]);
        $rk = new \RdKafka\Consumer();
        $rk->newTopic('low.level');
        $name = 'local.topic';
        $producer->newTopic($name);
        Kafka::publish('broker')->onTopic('laravel.out');
        Kafka::consumer(['laravel.in']);
        $list->subscribe(['not.kafka']);
    }
}
"#;
        let f = extract("src/Events/Publisher.php", src);
        use EventRole::*;
        let reference = |s: &str| Value::reference(s.to_string());
        assert_eq!(
            events(&f),
            vec![
                (Producer, lit("orders.created"), "php-rdkafka", 11),
                (Producer, reference("Publisher.TOPIC"), "php-rdkafka", 12),
                (Producer, reference("Topics.ORDER_PAID"), "php-rdkafka", 13),
                (
                    Producer,
                    Value::env("OUT_TOPIC", Some("out.default".into())),
                    "php-rdkafka",
                    14
                ),
                (Consumer, lit("payments.done"), "php-rdkafka", 16),
                (Consumer, reference("Topics.REFUNDED"), "php-rdkafka", 16),
                (Consumer, lit("low.level"), "php-rdkafka", 18),
                (Producer, lit("local.topic"), "php-rdkafka", 20),
                (Producer, lit("laravel.out"), "laravel-kafka", 21),
                (Consumer, lit("laravel.in"), "laravel-kafka", 22),
            ]
        );
    }

    #[test]
    fn grpc_clients_and_calls() {
        let src = r#"<?php
use Orders\V1\OrderServiceClient;
use Grpc\ChannelCredentials;

class Checkout
{
    public function __construct(private InventoryServiceClient $inventory) {}

    public function run($req)
    {
        $client = new OrderServiceClient('orders:50051', [
            'credentials' => ChannelCredentials::createInsecure(),
        ]);
        [$reply, $status] = $client->CreateOrder($req)->wait();
        $this->inventory->ReserveStock($req);
        $other->CreateOrder($req);
        return new PaymentServiceClient($host, []);
    }
}
"#;
        let f = extract("src/Checkout.php", src);
        assert_eq!(
            f.grpc,
            vec![
                grpc_client_fact("OrderService", Some("client"), 11),
                grpc_call_fact(Some("OrderService"), "client", "CreateOrder", 14),
                grpc_call_fact(Some("InventoryService"), "inventory", "ReserveStock", 15),
                grpc_client_fact("PaymentService", None, 17),
            ]
        );
        let server = extract(
            "src/OrderService.php",
            "<?php\nuse Spiral\\RoadRunner\\GRPC;\n\nclass OrderService implements Base, OrderServiceInterface\n{\n    public function CreateOrder(GRPC\\ContextInterface $ctx, Req $in): Order {}\n}\n",
        );
        assert_eq!(
            server.grpc,
            vec![grpc_server_fact("OrderService", Some("OrderService"), 4)]
        );
        assert_eq!(
            sym(&server, "CreateOrder").container.as_deref(),
            Some("OrderService")
        );
        // Without gRPC in the file, `new FooClient` is just a class.
        let plain = extract("a.php", "<?php $c = new WeatherClient(); $c->Fetch();");
        assert!(plain.grpc.is_empty());
    }

    #[test]
    fn comments_strings_and_heredocs_are_not_code() {
        let src = "<?php\n// class Nope {}\n# function nope() {}\n/* Route::get('/x', 'a'); */\n$s = 'class Nope2 {}';\n$h = <<<EOT\nfunction nope3() {}\nEOT;\nclass Yes {}\n";
        let f = extract("a.php", src);
        assert_eq!(names(&f), vec!["Yes"]);
        assert!(f.http.is_empty());
    }

    #[test]
    fn a_truncated_class_ends_at_the_end_of_the_file() {
        let f = extract("x.php", "<?php class A {\n function f() {\n");
        assert_eq!(sym(&f, "A").end_line, 3);
    }
}
