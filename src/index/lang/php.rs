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

use std::collections::{HashMap, HashSet};

use super::bind::{Assignments, StmtStyle};
use super::common::{self, Brackets};
use super::tokens::{Rules, Tokens};
use super::value::{ExprRules, Scope, eval};
use crate::index::facts::{
    Binding, EventFact, EventRole, FileFacts, GrpcFact, HttpFact, Import, Part, Symbol, SymbolKind,
    Value,
};
use crate::index::lex::{self, Lexed, Syntax, ident_before, is_ident_byte};

/// Extracts the facts of one PHP file.
pub fn extract(_path: &str, text: &str) -> FileFacts {
    let lx = lex::lex(Syntax::PHP, text);
    let br = Brackets::new(&lx.code);
    // Namespace separators are left out of the token view, so `\getenv('X')` reads as
    // `getenv('X')`; qualified class constants (`\App\Topics::X`) are read from the bytes.
    let skips: Vec<(usize, usize)> = lx
        .code
        .bytes()
        .enumerate()
        .filter(|&(_, b)| b == b'\\')
        .map(|(i, _)| (i, i + 1))
        .collect();
    let t = Tokens::with_skips(&lx, &Rules::SCRIPT, &skips);
    let asg = Assignments::scan(&t, &StmtStyle::SEMICOLON);
    let src = Src {
        lx: &lx,
        br,
        t: &t,
        asg: &asg,
    };
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
    walk(&src, &mut st);
    let mut facts = st.facts;
    asg.export(&t, &ExprRules::PHP, &mut facts);
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

/// The lexed file, its bracket pairs, and the shared token view with the file's assignments
/// (what the expression evaluator reads topics, URLs and constants with).
struct Src<'a> {
    lx: &'a Lexed<'a>,
    br: Brackets,
    t: &'a Tokens<'a, 'a>,
    asg: &'a Assignments,
}

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
    fn code(&self) -> &str {
        &self.lx.code
    }

    fn line_of(&self, offset: usize) -> u32 {
        self.lx.line_of(offset)
    }

    fn trim(&self, s: usize, e: usize) -> (usize, usize) {
        let b = self.code().as_bytes();
        let (mut s, mut e) = (s, e.min(b.len()));
        while s < e && b[s].is_ascii_whitespace() {
            s += 1;
        }
        while e > s && b[e - 1].is_ascii_whitespace() {
            e -= 1;
        }
        (s, e)
    }

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
        let v = self.value(s, e, class);
        match v.as_lit() {
            Some(lit) => common::looks_like_topic(lit).then_some(v),
            None => Some(v),
        }
    }

    /// The URL of an HTTP call at `s..e`. `sure` when the receiver is an HTTP client by what
    /// it is (the `Http` facade, a `new Client`); otherwise the value must read like a URL, so
    /// `$cache->get($key)` is not taken for a request.
    fn url(&self, s: usize, e: usize, sure: bool, class: Option<&str>) -> Option<Value> {
        let (s, e) = self.trim(s, e);
        if s >= e {
            return None;
        }
        let v = self.value(s, e, class);
        (sure || common::looks_like_url(&v)).then_some(v)
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
    let mut frames: Vec<Frame> = Vec::new();
    // Indices of the type frames in `frames`, and how many frames are not namespaces, so the
    // enclosing type and "at top level" are O(1) however deep the nesting.
    let mut types: Vec<usize> = Vec::new();
    let mut non_namespace = 0usize;
    let mut pending: Option<Frame> = None;
    let mut open_namespace: Option<usize> = None;
    let mut i = 0;
    while i < n {
        let c = b[i];
        match c {
            b'{' => {
                let f = pending.take().unwrap_or_default();
                if matches!(f.kind, FrameKind::Type | FrameKind::Enum) {
                    types.push(frames.len());
                }
                if f.kind != FrameKind::Namespace {
                    non_namespace += 1;
                }
                frames.push(f);
                i += 1;
                continue;
            }
            b'}' => {
                if let Some(f) = frames.pop() {
                    if types.last() == Some(&frames.len()) {
                        types.pop();
                    }
                    if f.kind != FrameKind::Namespace {
                        non_namespace -= 1;
                    }
                    if let Some(sym) = f.symbol.and_then(|s| st.facts.symbols.get_mut(s)) {
                        sym.end_line = src.line_of(i);
                    }
                }
                i += 1;
                continue;
            }
            b';' => {
                if let Some(f) = pending.take()
                    && let Some(sym) = f.symbol.and_then(|s| st.facts.symbols.get_mut(s))
                {
                    sym.end_line = src.line_of(i);
                }
                i += 1;
                continue;
            }
            _ => {}
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
        let class = types
            .last()
            .and_then(|&t| frames.get(t))
            .and_then(|f| f.type_name.as_deref());
        let in_type_body = frames
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
                        st.facts.symbols.push(Symbol {
                            name: name.to_string(),
                            kind: SymbolKind::Module,
                            line: src.line_of(ns),
                            end_line: src.lx.line_count(),
                            doc_line: src.lx.doc_comment_above(src.line_of(ts)),
                            container: None,
                        });
                        let idx = st.facts.symbols.len() - 1;
                        match lex::next_non_space(code, ne) {
                            Some((_, b'{')) => {
                                pending = Some(Frame {
                                    kind: FrameKind::Namespace,
                                    symbol: Some(idx),
                                    ..Frame::default()
                                })
                            }
                            _ => open_namespace = Some(idx),
                        }
                        i = ne;
                    }
                    continue;
                }
                "use" => {
                    let top_level = non_namespace == 0;
                    if top_level && lex::prev_non_space(code, ts).is_none_or(|(_, p)| p != b')') {
                        i = use_stmt(src, st, te);
                    }
                    continue;
                }
                "class" if matches!(ident_before(code, ts), Some((_, "new"))) => {
                    // An anonymous class: its methods are methods, of no named type.
                    pending = Some(Frame {
                        kind: FrameKind::Type,
                        ..Frame::default()
                    });
                    continue;
                }
                "class" | "interface" | "trait" | "enum" => {
                    if let Some((f, next)) = type_decl(src, st, ts, te, word, class) {
                        pending = Some(f);
                        i = next;
                    }
                    continue;
                }
                "implements" => {
                    if st.grpc_file
                        && let Some(p) = &pending
                        && let Some(name) = p.type_name.clone()
                        && let Some(sym) = p.symbol.and_then(|s| st.facts.symbols.get(s))
                    {
                        let line = sym.line;
                        i = implements_list(src, st, te, &name, line);
                    }
                    continue;
                }
                "function" => {
                    if let Some((f, next)) = function_decl(src, st, ts, te, &frames, class) {
                        pending = Some(f);
                        i = next;
                    }
                    continue;
                }
                "const" if in_type_body || non_namespace == 0 => {
                    i = const_decl(src, st, ts, te, class);
                    continue;
                }
                "case" if frames.last().is_some_and(|f| f.kind == FrameKind::Enum) => {
                    i = case_decl(src, st, ts, te, class);
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
    for f in frames {
        if let Some(sym) = f.symbol.and_then(|s| st.facts.symbols.get_mut(s)) {
            sym.end_line = last.max(sym.line);
        }
    }
}

/// True when the token at `ts` follows `->`, `?->` or `::` (a member, not a keyword).
fn is_member(b: &[u8], ts: usize) -> bool {
    let mut k = ts;
    while k > 0 && b[k - 1].is_ascii_whitespace() {
        k -= 1;
    }
    k >= 2 && ((b[k - 2] == b'-' && b[k - 1] == b'>') || (b[k - 2] == b':' && b[k - 1] == b':'))
}

/// `use A\B\C;`, `use A\B\C as D;`, `use A\{B, C as D};`, `use function A\f;`. Returns where
/// the statement ends.
fn use_stmt(src: &Src, st: &mut State, after: usize) -> usize {
    let code = src.code();
    let end = statement_end(code, after);
    let line = src.line_of(after);
    let mut s = after;
    if let Some((p, kw)) = lex::ident_after(code, after)
        && matches!(kw, "function" | "const")
    {
        s = p + kw.len();
    }
    for (a, z) in common::split_top(code, s, end, b',', &src.br) {
        let item = code[a..z].trim();
        if let Some(brace) = item.find('{') {
            let prefix = item[..brace]
                .trim()
                .trim_end_matches('\\')
                .trim_start_matches('\\');
            let open = a + (code[a..z].len() - code[a..z].trim_start().len()) + brace;
            let close = src.br.close_of(open).unwrap_or(z);
            let names: Vec<String> = common::split_top(code, open + 1, close, b',', &src.br)
                .into_iter()
                .filter_map(|(x, y)| {
                    let n = code[x..y].split(" as ").next().unwrap_or("").trim();
                    (!n.is_empty()).then(|| n.to_string())
                })
                .collect();
            st.facts.imports.push(Import {
                module: prefix.to_string(),
                names,
                alias: None,
                line,
                reexport: false,
            });
            continue;
        }
        let (module, alias) = match item.split_once(" as ") {
            Some((m, al)) => (m.trim(), Some(al.trim().to_string())),
            None => (item, None),
        };
        let module = module.trim_start_matches('\\');
        if module.is_empty() || !module.bytes().all(|c| is_ident_byte(c) || c == b'\\') {
            continue;
        }
        st.facts.imports.push(Import {
            module: module.to_string(),
            names: Vec::new(),
            alias,
            line,
            reexport: false,
        });
    }
    end
}

/// The attribute blocks (`#[…]`) and modifiers directly before a declaration keyword at `kw`:
/// the start of the first one, and the attribute ranges (inside the brackets).
fn decl_head(src: &Src, kw: usize) -> (usize, Vec<(usize, usize)>) {
    let code = src.code();
    let b = code.as_bytes();
    let mut head = kw;
    let mut attrs = Vec::new();
    for _ in 0..32 {
        match lex::prev_non_space(code, head) {
            Some((p, b']')) => {
                let Some(open) = src.br.open_of(p) else { break };
                if open == 0 || b[open - 1] != b'#' {
                    break;
                }
                attrs.push((open + 1, p));
                head = open - 1;
            }
            Some((p, c)) if is_ident_byte(c) => {
                let Some((s, w)) = ident_before(code, p + 1) else {
                    break;
                };
                if !matches!(
                    w,
                    "public"
                        | "protected"
                        | "private"
                        | "static"
                        | "final"
                        | "abstract"
                        | "readonly"
                ) {
                    break;
                }
                head = s;
            }
            _ => break,
        }
    }
    attrs.reverse();
    (head, attrs)
}

/// The doc line of a declaration whose head (first attribute or modifier) starts at `head`.
fn doc_line(src: &Src, head: usize, attrs: &[(usize, usize)]) -> Option<u32> {
    let head_line = src.line_of(head);
    let first_attr = attrs.first().map(|&(s, _)| src.line_of(s));
    src.lx.doc_comment_above(head_line).or(first_attr)
}

/// Route attributes in `attrs` (Symfony `#[Route('/x', methods: ['GET'])]`, and
/// `#[Get('/x')]`-style verbs), each at the line of its own attribute.
fn route_attrs(src: &Src, attrs: &[(usize, usize)]) -> Vec<RouteDecl> {
    let code = src.code();
    let mut out = Vec::new();
    for &(s, e) in attrs {
        for (a, z) in common::split_top(code, s, e, b',', &src.br) {
            let Some((ns, ne)) = qualified_name(code, a) else {
                continue;
            };
            let name = code[ns..ne].rsplit('\\').next().unwrap_or("");
            let verb = match name {
                "Route" => None,
                "Get" | "Post" | "Put" | "Patch" | "Delete" | "Head" | "Options" => {
                    Some(name.to_ascii_uppercase())
                }
                _ => continue,
            };
            let Some((open, b'(')) = lex::next_non_space(code, ne).filter(|(p, _)| *p < z) else {
                continue;
            };
            let Some(close) = src.br.close_of(open) else {
                continue;
            };
            let args = src.args(open, close);
            let Some(path) = args
                .named("path")
                .or_else(|| args.named("uri"))
                .or_else(|| args.positional.first().copied())
                .and_then(|(x, y)| src.plain_string(x, y))
            else {
                continue;
            };
            let methods = match verb {
                Some(v) => vec![v],
                None => args
                    .named("methods")
                    .map(|(x, y)| {
                        src.items(x, y)
                            .into_iter()
                            .filter_map(|(p, q)| src.plain_string(p, q))
                            .map(|m| m.to_ascii_uppercase())
                            .collect()
                    })
                    .unwrap_or_default(),
            };
            out.push(RouteDecl {
                methods,
                path,
                line: src.line_of(ns),
            });
        }
    }
    out
}

/// Docblock `@Route("/x", methods={"GET"})` and `@Route(path="/x", name="n")` annotations
/// (older Symfony), each at the line of its `@Route`.
fn route_annotations(src: &Src, head: usize) -> Vec<RouteDecl> {
    let Some(first) = src.lx.doc_comment_above(src.line_of(head)) else {
        return Vec::new();
    };
    let last = src.line_of(head).saturating_sub(1);
    let mut out = Vec::new();
    for c in src
        .lx
        .comments
        .iter()
        .filter(|c| c.first_line >= first && c.last_line <= last)
    {
        let text = src.lx.comment_text(c);
        let mut from = 0;
        while let Some(p) = text[from..].find("@Route(") {
            let at = from + p;
            let body = annotation_body(&text[at + 7..]);
            from = at + 7 + body.len();
            let mut path = None;
            let mut methods = Vec::new();
            for item in annotation_items(body) {
                let (key, value) = match item.split_once(['=', ':']) {
                    Some((k, v)) if !k.trim_start().starts_with('"') => (Some(k.trim()), v),
                    _ => (None, item),
                };
                let quoted = || value.split('"').skip(1).step_by(2);
                match key {
                    None | Some("path" | "value") if path.is_none() => {
                        path = quoted().next().map(str::to_string)
                    }
                    Some("methods") => methods = quoted().map(str::to_ascii_uppercase).collect(),
                    _ => {}
                }
            }
            if let Some(path) = path {
                out.push(RouteDecl {
                    methods,
                    path,
                    line: src.line_of(c.start + at),
                });
            }
        }
    }
    out
}

/// The text of an annotation's arguments after its `(`: up to the `)` that closes it, outside
/// quotes and braces.
fn annotation_body(rest: &str) -> &str {
    let mut depth = 0usize;
    let mut quoted = false;
    for (i, c) in rest.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '{' | '(' if !quoted => depth += 1,
            '}' if !quoted => depth = depth.saturating_sub(1),
            ')' if !quoted => {
                if depth == 0 {
                    return &rest[..i];
                }
                depth -= 1;
            }
            _ => {}
        }
    }
    rest
}

/// The top-level comma-separated items of an annotation's arguments (docblock `*` margins
/// are whitespace to them).
fn annotation_items(body: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut quoted = false;
    let mut start = 0;
    for (i, c) in body.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '{' | '(' if !quoted => depth += 1,
            '}' | ')' if !quoted => depth = depth.saturating_sub(1),
            ',' if !quoted && depth == 0 => {
                out.push(body[start..i].trim_matches(|c: char| c.is_whitespace() || c == '*'));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(body[start..].trim_matches(|c: char| c.is_whitespace() || c == '*'));
    out.retain(|s| !s.is_empty());
    out
}

/// `class X extends Y implements Z`, `interface`, `trait`, `enum E: string`.
fn type_decl(
    src: &Src,
    st: &mut State,
    ts: usize,
    te: usize,
    word: &str,
    class: Option<&str>,
) -> Option<(Frame, usize)> {
    let code = src.code();
    // `new class(...)`, `X::class`, `function class()` are not declarations.
    if let Some((_, "new" | "function")) = ident_before(code, ts) {
        return None;
    }
    let (ns, name) = lex::ident_after(code, te)?;
    if name.starts_with('$') {
        return None;
    }
    let ne = ns + name.len();
    let kind = match word {
        "interface" => SymbolKind::Interface,
        "trait" => SymbolKind::Trait,
        "enum" => SymbolKind::Enum,
        _ => SymbolKind::Class,
    };
    let (head, attrs) = decl_head(src, ts);
    let line = src.line_of(ns);
    let container = class.map(str::to_string);
    let class_route = route_attrs(src, &attrs)
        .into_iter()
        .chain(route_annotations(src, head))
        .next();
    let prefix = class_route
        .as_ref()
        .map_or(String::new(), |r| r.path.clone());
    st.facts.symbols.push(Symbol {
        name: name.to_string(),
        kind,
        line,
        end_line: line,
        doc_line: doc_line(src, head, &attrs),
        container,
    });
    Some((
        Frame {
            kind: if kind == SymbolKind::Enum {
                FrameKind::Enum
            } else {
                FrameKind::Type
            },
            symbol: Some(st.facts.symbols.len() - 1),
            type_name: Some(name.to_string()),
            route_prefix: prefix,
            class_route,
        },
        ne,
    ))
}

/// `implements A, B\C` of a pending class: RoadRunner gRPC servers implement
/// `<Svc>Interface` (in a file using `Spiral\RoadRunner\GRPC`). Returns where the list ends.
fn implements_list(src: &Src, st: &mut State, after: usize, class: &str, line: u32) -> usize {
    let code = src.code();
    let mut at = after;
    for _ in 0..64 {
        let Some((s, e)) = qualified_name(code, at) else {
            break;
        };
        let iface = code[s..e].rsplit('\\').next().unwrap_or("");
        if st.roadrunner
            && let Some(svc) = iface.strip_suffix("Interface")
            && !svc.is_empty()
            && svc != "Service"
        {
            st.facts.grpc.push(GrpcFact::Server {
                service: svc.to_string(),
                impl_type: Some(class.to_string()),
                line,
            });
        }
        at = e;
        match lex::next_non_space(code, e) {
            Some((p, b',')) => at = p + 1,
            _ => break,
        }
    }
    at
}

/// `function name(…)` (top level or in a type); closures have no name and open no frame.
fn function_decl(
    src: &Src,
    st: &mut State,
    ts: usize,
    te: usize,
    frames: &[Frame],
    class: Option<&str>,
) -> Option<(Frame, usize)> {
    let code = src.code();
    let mut at = te;
    if let Some((p, b'&')) = lex::next_non_space(code, at) {
        at = p + 1;
    }
    let (ns, name) = lex::ident_after(code, at)?;
    if name.starts_with('$') {
        return None;
    }
    let ne = ns + name.len();
    let (open, c) = lex::next_non_space(code, ne)?;
    if c != b'(' {
        return None;
    }
    src.br.close_of(open)?;
    let in_type = frames
        .last()
        .is_some_and(|f| matches!(f.kind, FrameKind::Type | FrameKind::Enum));
    let kind = match (in_type, name) {
        (true, "__construct") => SymbolKind::Constructor,
        (true, _) => SymbolKind::Method,
        (false, _) => SymbolKind::Function,
    };
    let container = class.map(str::to_string);
    let (head, attrs) = decl_head(src, ts);
    let line = src.line_of(ns);
    if in_type {
        let frame = frames.last();
        let prefix = frame.map_or("", |f| f.route_prefix.as_str());
        let mut found = route_attrs(src, &attrs);
        found.extend(route_annotations(src, head));
        let prefix_of = |r: &RouteDecl| join(prefix, &r.path);
        let mut routes: Vec<(RouteDecl, String)> = found
            .into_iter()
            .map(|r| (r.clone(), prefix_of(&r)))
            .collect();
        // An invokable controller with only a class-level route is served there.
        if routes.is_empty()
            && name == "__invoke"
            && let Some(r) = frame.and_then(|f| f.class_route.as_ref())
        {
            routes.push((r.clone(), join("", &r.path)));
        }
        for (r, full) in routes {
            let methods = if r.methods.is_empty() {
                vec!["ANY".to_string()]
            } else {
                r.methods
            };
            for method in methods {
                st.facts.http.push(HttpFact::Route {
                    method,
                    path: full.clone(),
                    handler: Some(match class {
                        Some(c) => format!("{c}::{name}"),
                        None => name.to_string(),
                    }),
                    line: r.line,
                });
            }
        }
    }
    st.facts.symbols.push(Symbol {
        name: name.to_string(),
        kind,
        line,
        end_line: line,
        doc_line: doc_line(src, head, &attrs),
        container,
    });
    let idx = st.facts.symbols.len() - 1;
    // The walk goes on through the parameters (promoted properties) to the body's `{`, or to
    // the `;` of an abstract/interface method, which closes the pending frame.
    Some((
        Frame {
            kind: FrameKind::Function,
            symbol: Some(idx),
            ..Frame::default()
        },
        ne,
    ))
}

/// `const A = 'x', B = 'y';` (typed `const string A = 'x';` too). Returns where it ends.
fn const_decl(src: &Src, st: &mut State, ts: usize, te: usize, class: Option<&str>) -> usize {
    let code = src.code();
    let end = statement_end(code, te);
    let (head, attrs) = decl_head(src, ts);
    for (a, z) in common::split_top(code, te, end, b',', &src.br) {
        let Some(eq) = code[a..z].find('=').map(|p| a + p) else {
            continue;
        };
        let Some((ns, name)) = ident_before(code, eq) else {
            continue;
        };
        let line = src.line_of(ns);
        st.facts.symbols.push(Symbol {
            name: name.to_string(),
            kind: SymbolKind::Constant,
            line,
            end_line: src.line_of(z),
            doc_line: doc_line(src, head, &attrs),
            container: class.map(str::to_string),
        });
        if let value = src.value(eq + 1, z, class)
            && !value.is_dynamic()
        {
            st.facts.bindings.push(Binding {
                name: match class {
                    Some(c) => format!("{c}.{name}"),
                    None => name.to_string(),
                },
                value,
                line,
            });
        }
    }
    end
}

/// `case NAME = 'value';` / `case NAME;` in an enum.
fn case_decl(src: &Src, st: &mut State, ts: usize, te: usize, class: Option<&str>) -> usize {
    let code = src.code();
    let end = statement_end(code, te);
    let Some((ns, name)) = lex::ident_after(code, te).filter(|(p, _)| *p < end) else {
        return end;
    };
    let (head, attrs) = decl_head(src, ts);
    let line = src.line_of(ns);
    st.facts.symbols.push(Symbol {
        name: name.to_string(),
        kind: SymbolKind::EnumValue,
        line,
        end_line: line,
        doc_line: doc_line(src, head, &attrs),
        container: class.map(str::to_string),
    });
    if let Some(eq) = code[ns..end].find('=').map(|p| ns + p)
        && let Some(value) = src.plain_string(eq + 1, end)
    {
        st.facts.bindings.push(Binding {
            name: match class {
                Some(c) => format!("{c}.{name}"),
                None => name.to_string(),
            },
            value: Value::lit(value),
            line,
        });
    }
    end
}

/// `new X(…)`: gRPC clients, Guzzle clients and rdkafka handles, bound to the variable or
/// property they are assigned to.
fn new_expr(src: &Src, st: &mut State, ts: usize, te: usize) {
    let code = src.code();
    let Some((ns, ne)) = qualified_name(code, te) else {
        return;
    };
    let class = code[ns..ne].trim_start_matches('\\');
    let last = class.rsplit('\\').next().unwrap_or(class);
    let target = assigned_target(src, ts);
    let key = target.as_ref().and_then(|c| c.key().map(str::to_string));
    if st.grpc_file
        && let Some(svc) = grpc_client_service(last)
    {
        if let Some(k) = &key {
            st.grpc_clients.insert(k.clone(), svc.to_string());
        }
        st.facts.grpc.push(GrpcFact::Client {
            service: svc.to_string(),
            var: key,
            line: src.line_of(ns),
        });
        return;
    }
    let Some(k) = key else { return };
    match class {
        "GuzzleHttp\\Client" | "Client" | "HttpClient" if !st.grpc_file || class != "Client" => {
            // `new Client(['base_uri' => 'http://pricing:8080'])`: relative request URLs
            // are resolved against it.
            if let Some((open, b'(')) = lex::next_non_space(code, ne)
                && let Some(close) = src.br.close_of(open)
                && let Some(&(a, z)) = src.args(open, close).positional.first()
            {
                for (x, y) in src.items(a, z) {
                    if let Some(arrow) = code[x..y].find("=>")
                        && matches!(
                            src.plain_string(x, x + arrow).as_deref(),
                            Some("base_uri" | "base_url")
                        )
                    {
                        st.http_bases.insert(k.clone(), (x + arrow + 2, y));
                    }
                }
            }
            st.http_clients.insert(k);
        }
        "RdKafka\\Producer" | "Producer" => {
            st.kafka.insert(k, false);
        }
        "RdKafka\\Consumer" | "RdKafka\\KafkaConsumer" | "KafkaConsumer" | "Consumer" => {
            st.kafka.insert(k, true);
        }
        _ => {}
    }
}

/// `OrderServiceClient` gives `OrderService` (not HTTP or Guzzle clients).
fn grpc_client_service(class: &str) -> Option<&str> {
    let svc = class.strip_suffix("Client")?;
    let generic = matches!(
        svc,
        "" | "Http" | "Guzzle" | "Soap" | "Redis" | "Base" | "Abstract" | "Grpc" | "Kafka"
    );
    (!generic && svc.as_bytes()[0].is_ascii_uppercase()).then_some(svc)
}

/// The variable/property an expression starting at `at` is assigned to (`$x = …`,
/// `$this->x = …`).
fn assigned_target<'c>(src: &'c Src, at: usize) -> Option<Chain<'c>> {
    let code = src.code();
    let b = code.as_bytes();
    let (eq, _) = lex::prev_non_space(code, at).filter(|&(_, c)| c == b'=')?;
    if eq > 0 && matches!(b[eq - 1], b'=' | b'!' | b'<' | b'>' | b'?' | b'.') {
        return None;
    }
    let (p, _) = lex::prev_non_space(code, eq)?;
    let chain = chain_before(code, &src.br, p + 1);
    (!chain.text.is_empty()).then_some(chain)
}

/// `"/v1"` + `"orders"` gives `/v1/orders`.
fn join(prefix: &str, path: &str) -> String {
    let p = prefix.trim_end_matches('/');
    let q = path.trim_start_matches('/');
    let joined = match (p.is_empty(), q.is_empty()) {
        (_, true) => p.to_string(),
        (true, false) => q.to_string(),
        (false, false) => format!("{p}/{q}"),
    };
    if joined.starts_with('/') {
        joined
    } else {
        format!("/{joined}")
    }
}

/// A call `name(…)` at `ts..te` with parentheses `open..close`.
fn call_site(
    src: &Src,
    st: &mut State,
    ts: usize,
    te: usize,
    open: usize,
    close: usize,
    class: Option<&str>,
) {
    let code = src.code();
    let b = code.as_bytes();
    let name = &code[ts..te];
    let chain = if ts >= 2
        && ((b[ts - 2] == b'-' && b[ts - 1] == b'>') || (b[ts - 2] == b':' && b[ts - 1] == b':'))
    {
        let mut sep = ts - 2;
        if sep > 0 && b[sep - 1] == b'?' {
            sep -= 1;
        }
        chain_before(code, &src.br, sep)
    } else {
        Chain {
            text: "",
            start: ts,
        }
    };
    let line = src.line_of(ts);
    // gRPC calls on a client variable/property.
    if !chain.text.is_empty()
        && let Some(key) = chain.key()
        && let Some(svc) = st.grpc_clients.get(key)
    {
        st.facts.grpc.push(GrpcFact::Call {
            service: Some(svc.clone()),
            receiver: key.to_string(),
            method: name.to_string(),
            line,
        });
        return;
    }
    if chain.text.is_empty() && (name.starts_with("curl_") || name == "file_get_contents") {
        curl_call(src, st, name, ts, (open, close), class);
        return;
    }
    let interesting = matches!(
        name,
        "group"
            | "get"
            | "post"
            | "put"
            | "patch"
            | "delete"
            | "options"
            | "any"
            | "match"
            | "resource"
            | "apiResource"
            | "newTopic"
            | "subscribe"
            | "onTopic"
            | "publishOn"
            | "consumer"
            | "createConsumer"
            | "head"
            | "request"
            | "requestAsync"
            | "getAsync"
            | "postAsync"
            | "putAsync"
            | "patchAsync"
            | "deleteAsync"
            | "define"
            | "map"
            | "create"
    );
    if !interesting {
        return;
    }
    let root = chain.root();
    let on_route = root == "Route" || root.ends_with("\\Route");
    // Slim and Lumen route on a variable: `$app->get(…)`, `$router->group(…)`, `$group->get(…)`
    // inside a group closure; they need a handler, so `$app->get('x')` is no route.
    let router_var = !on_route && is_router(st, &chain);
    let on_router = on_route || router_var;
    // Route groups: leave the ones that closed before this call.
    while st.groups.last().is_some_and(|&(c, _)| c < ts) {
        st.groups.pop();
    }
    let group_prefix = if on_router {
        st.groups.last().map_or(String::new(), |(_, p)| p.clone())
    } else {
        String::new()
    };
    let args = src.args(open, close);
    match name {
        "create" if root == "AppFactory" => {
            if let Some(target) = assigned_target(src, ts)
                && let Some(k) = target.key()
            {
                st.routers.insert(k.to_string());
            }
        }
        "group" if on_router => {
            let mut own = String::new();
            // Slim `$app->group('/api', function (RouteCollectorProxy $group) { … })`.
            if router_var
                && let Some(&(a, z)) = args.positional.first()
                && let Some(v) = src.plain_string(a, z)
            {
                own = v;
            }
            // The group closure's parameters route too.
            for &(a, z) in &args.positional {
                let (a, z) = src.trim(a, z);
                let head = &code[a..z];
                if (head.starts_with("function") || head.starts_with("fn"))
                    && let Some(open) = head.find('(').map(|p| a + p)
                    && let Some(close) = src.br.close_of(open)
                {
                    for w in code[open + 1..close]
                        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                    {
                        if let Some(v) = w.strip_prefix('$').filter(|v| !v.is_empty()) {
                            st.routers.insert(v.to_string());
                        }
                    }
                }
            }
            // `Route::prefix('v1')->…->group(…)`
            if let Some(p) = chain.text.find("prefix(") {
                let at = chain.start + p + 6;
                if let Some(c) = src.br.close_of(at)
                    && let Some(v) = src.plain_string(at + 1, c)
                {
                    own = v;
                }
            }
            // `Route::group(['prefix' => 'v1'], function () { … })`
            if let Some(&(a, z)) = args.positional.first() {
                for (x, y) in src.items(a, z) {
                    if let Some(arrow) = code[x..y].find("=>")
                        && src.plain_string(x, x + arrow).as_deref() == Some("prefix")
                        && let Some(v) = src.plain_string(x + arrow + 2, y)
                    {
                        own = v;
                    }
                }
            }
            let full = if own.is_empty() {
                group_prefix
            } else {
                join(&group_prefix, &own)
            };
            st.groups.push((close, full));
        }
        "get" | "post" | "put" | "patch" | "delete" | "options" | "any" | "match" | "map"
            if on_router =>
        {
            let (methods, rest) = if name == "match" || name == "map" {
                let methods: Vec<String> = args
                    .positional
                    .first()
                    .map(|&(a, z)| {
                        src.items(a, z)
                            .into_iter()
                            .filter_map(|(x, y)| src.plain_string(x, y))
                            .map(|m| m.to_ascii_uppercase())
                            .collect()
                    })
                    .unwrap_or_default();
                (methods, 1)
            } else if name == "any" {
                (vec!["ANY".to_string()], 0)
            } else {
                (vec![name.to_ascii_uppercase()], 0)
            };
            let Some(path) = args
                .positional
                .get(rest)
                .and_then(|&(a, z)| src.plain_string(a, z))
            else {
                return;
            };
            if router_var && args.positional.get(rest + 1).is_none() {
                return;
            }
            let handler = args
                .positional
                .get(rest + 1)
                .and_then(|&(a, z)| laravel_handler(src, a, z));
            let full = join(&group_prefix, &path);
            for method in methods {
                st.facts.http.push(HttpFact::Route {
                    method,
                    path: full.clone(),
                    handler: handler.clone(),
                    line,
                });
            }
        }
        "resource" | "apiResource" if on_route => {
            let Some(res) = args
                .positional
                .first()
                .and_then(|&(a, z)| src.plain_string(a, z))
            else {
                return;
            };
            let controller = args
                .positional
                .get(1)
                .and_then(|&(a, z)| laravel_handler(src, a, z));
            let base = join(&group_prefix, &res);
            let param = res.rsplit(['/', '.']).next().unwrap_or(&res);
            let member = format!("{base}/{{{}}}", singular(param));
            let actions: [(&str, &str, &String); 6] = [
                ("index", "GET", &base),
                ("store", "POST", &base),
                ("show", "GET", &member),
                ("update", "PUT", &member),
                ("update", "PATCH", &member),
                ("destroy", "DELETE", &member),
            ];
            for (action, method, path) in actions {
                st.facts.http.push(HttpFact::Route {
                    method: method.to_string(),
                    path: path.clone(),
                    handler: Some(match &controller {
                        Some(c) => format!("{c}@{action}"),
                        None => action.to_string(),
                    }),
                    line,
                });
            }
        }
        "newTopic" => {
            let consumer = chain
                .key()
                .and_then(|k| st.kafka.get(k))
                .copied()
                .unwrap_or(false);
            let role = if consumer {
                EventRole::Consumer
            } else {
                EventRole::Producer
            };
            if let Some(&(a, z)) = args.positional.first() {
                push_event(src, st, role, "php-rdkafka", a, z, class);
            }
        }
        "subscribe" => {
            let consumer = chain.key().is_some_and(|k| {
                st.kafka.get(k) == Some(&true) || k.to_ascii_lowercase().contains("consumer")
            });
            if consumer && let Some(&(a, z)) = args.positional.first() {
                for (x, y) in src.items(a, z) {
                    push_event(src, st, EventRole::Consumer, "php-rdkafka", x, y, class);
                }
            }
        }
        "onTopic" | "publishOn" => {
            if let Some(&(a, z)) = args.positional.first() {
                push_event(src, st, EventRole::Producer, "laravel-kafka", a, z, class);
            }
        }
        "consumer" | "createConsumer" if root == "Kafka" => {
            if let Some(&(a, z)) = args.positional.first() {
                for (x, y) in src.items(a, z) {
                    push_event(src, st, EventRole::Consumer, "laravel-kafka", x, y, class);
                }
            }
        }
        "get" | "post" | "put" | "patch" | "delete" | "head" | "request" | "requestAsync"
        | "getAsync" | "postAsync" | "putAsync" | "patchAsync" | "deleteAsync" => {
            let Some(sure) = http_receiver(st, &chain) else {
                return;
            };
            let verb = name.trim_end_matches("Async");
            let (method, url) = if verb == "request" {
                (
                    args.positional
                        .first()
                        .and_then(|&(a, z)| src.plain_string(a, z))
                        .map(|m| m.to_ascii_uppercase()),
                    args.positional.get(1).copied(),
                )
            } else {
                (
                    Some(verb.to_ascii_uppercase()),
                    args.positional.first().copied(),
                )
            };
            if let Some((a, z)) = url
                && let Some(mut url) = src.url(a, z, sure, class)
            {
                if let Some(&(ba, bz)) = chain.key().and_then(|k| st.http_bases.get(k)) {
                    url = with_base(src.value(ba, bz, class), url);
                }
                st.facts.http.push(HttpFact::Call { method, url, line });
            }
        }
        "define" if chain.text.is_empty() => {
            if let (Some(&(a, z)), Some(&(v, w))) =
                (args.positional.first(), args.positional.get(1))
                && let Some(cname) = src.plain_string(a, z)
            {
                let line = src.line_of(a);
                st.facts.symbols.push(Symbol {
                    name: cname.clone(),
                    kind: SymbolKind::Constant,
                    line,
                    end_line: src.line_of(close),
                    doc_line: src.lx.doc_comment_above(line),
                    container: None,
                });
                if let value = src.value(v, w, class)
                    && !value.is_dynamic()
                {
                    st.facts.bindings.push(Binding {
                        name: cname,
                        value,
                        line,
                    });
                }
            }
        }
        _ => {}
    }
}

/// `url` resolved against a client's base URI: an absolute URL stays, an absolute path keeps
/// only the base's scheme and host, a relative path is joined under the base; a URL that
/// starts with a run-time part, or a base that is one, is left as it is.
fn with_base(base: Value, url: Value) -> Value {
    let Some(Part::Lit(first)) = url.parts.first() else {
        return url;
    };
    if first.contains("://") || first.starts_with("//") || base.is_dynamic() {
        return url;
    }
    let absolute = first.starts_with('/');
    let mut out = match base.as_lit() {
        Some(b) if absolute && b.contains("://") => {
            let i = b.find("://").map_or(0, |i| i + 3);
            let host_end = b[i..].find('/').map_or(b.len(), |p| i + p);
            Value::lit(&b[..host_end])
        }
        _ => base,
    };
    let ends = matches!(out.parts.last(), Some(Part::Lit(s)) if s.ends_with('/'));
    let mut url = url;
    match (ends, absolute) {
        (true, true) => {
            if let Some(Part::Lit(s)) = url.parts.first_mut() {
                s.remove(0);
            }
        }
        (false, false) => out.push(Part::Lit("/".into())),
        _ => {}
    }
    out.extend(url);
    out
}

/// curl: `curl_init($url)` (or `curl_setopt($ch, CURLOPT_URL, $url)`) gives a handle its URL,
/// options its method (`CURLOPT_CUSTOMREQUEST`, `CURLOPT_POST`, …; GET otherwise), and
/// `curl_exec($ch)` is the request, at its own line. `file_get_contents` is a GET when its
/// argument is a web URL (`'http://…'`, a base named like one), not a file path.
fn curl_call(
    src: &Src,
    st: &mut State,
    name: &str,
    ts: usize,
    (open, close): (usize, usize),
    class: Option<&str>,
) {
    let code = src.code();
    let args = src.args(open, close);
    let line = src.line_of(ts);
    let handle = |i: usize| -> Option<String> {
        let &(a, z) = args.positional.get(i)?;
        let (a, z) = src.trim(a, z);
        Chain {
            text: &code[a..z],
            start: a,
        }
        .key()
        .map(str::to_string)
    };
    let option = |r: (usize, usize)| {
        let (a, z) = src.trim(r.0, r.1);
        code[a..z].trim_start_matches('\\').to_string()
    };
    match name {
        "curl_init" => {
            if let Some(k) = assigned_target(src, ts).and_then(|c| c.key().map(str::to_string)) {
                st.curl.insert(
                    k,
                    Curl {
                        url: args.positional.first().copied(),
                        method: None,
                    },
                );
            }
        }
        "curl_setopt" => {
            if let (Some(k), Some(&o), Some(&v)) =
                (handle(0), args.positional.get(1), args.positional.get(2))
            {
                curl_option(src, st.curl.entry(k).or_default(), &option(o), v);
            }
        }
        "curl_setopt_array" => {
            let (Some(k), Some(&(a, z))) = (handle(0), args.positional.get(1)) else {
                return;
            };
            let (a, z) = array_of(src, a, z);
            for (x, y) in src.items(a, z) {
                if let Some(arrow) = code[x..y].find("=>") {
                    let opt = option((x, x + arrow));
                    curl_option(
                        src,
                        st.curl.entry(k.clone()).or_default(),
                        &opt,
                        (x + arrow + 2, y),
                    );
                }
            }
        }
        "curl_exec" => {
            let curl = handle(0)
                .and_then(|k| st.curl.get(&k).cloned())
                .unwrap_or_default();
            let url = match curl.url {
                Some((a, z)) => src.url(a, z, true, class),
                None => Some(Value::dynamic()),
            };
            if let Some(url) = url {
                st.facts.http.push(HttpFact::Call {
                    method: Some(curl.method.unwrap_or_else(|| "GET".to_string())),
                    url,
                    line,
                });
            }
        }
        "file_get_contents" => {
            let Some(&(a, z)) = args.positional.first() else {
                return;
            };
            let url = src.value(a, z, class);
            let web = match url.parts.first() {
                Some(Part::Lit(s)) => s.starts_with("http://") || s.starts_with("https://"),
                Some(p @ (Part::Ref { .. } | Part::Env { .. } | Part::Config { .. })) => {
                    common::looks_like_url(&Value {
                        parts: vec![p.clone()],
                    })
                }
                _ => false,
            };
            if web {
                // A stream context (the third argument) may set another method.
                let method = (args.positional.len() < 3).then(|| "GET".to_string());
                st.facts.http.push(HttpFact::Call { method, url, line });
            }
        }
        _ => {}
    }
}

/// One curl option given to a handle.
fn curl_option(src: &Src, curl: &mut Curl, opt: &str, v: (usize, usize)) {
    let (a, z) = src.trim(v.0, v.1);
    let on = !matches!(
        src.code()[a..z].to_ascii_lowercase().as_str(),
        "false" | "0" | "null"
    );
    let set = |curl: &mut Curl, m: &str| curl.method = Some(m.to_string());
    match opt {
        "CURLOPT_URL" => curl.url = Some((a, z)),
        "CURLOPT_CUSTOMREQUEST" => {
            if let Some(m) = src.plain_string(a, z) {
                curl.method = Some(m.to_ascii_uppercase());
            }
        }
        "CURLOPT_POST" if on => set(curl, "POST"),
        "CURLOPT_PUT" if on => set(curl, "PUT"),
        "CURLOPT_NOBODY" if on => set(curl, "HEAD"),
        "CURLOPT_HTTPGET" if on => set(curl, "GET"),
        "CURLOPT_POSTFIELDS" if curl.method.is_none() => set(curl, "POST"),
        _ => {}
    }
}

/// The array literal at bytes `s..e`, or the one a variable there was assigned.
fn array_of(src: &Src, s: usize, e: usize) -> (usize, usize) {
    let (s, e) = src.trim(s, e);
    let text = &src.code()[s..e];
    if text.starts_with('$') {
        let t = src.t;
        let (a, _) = t.range_of(s, e);
        if let Some(asg) = src.asg.last(text, a)
            && let Some(end) = t.tok(asg.rhs.1.saturating_sub(1))
        {
            return (t.start(asg.rhs.0), end.end as usize);
        }
    }
    (s, e)
}

/// True when the receiver of a call is a router variable: `$app`, `$router`, or one the file
/// made a router (`AppFactory::create()`, a group closure's parameter).
fn is_router(st: &State, chain: &Chain) -> bool {
    if !chain.text.starts_with('$') || chain.text.contains('(') {
        return false;
    }
    chain
        .key()
        .is_some_and(|k| matches!(k, "app" | "router") || st.routers.contains(k))
}

/// `[OrderController::class, 'show']` gives `OrderController@show`; `'C@m'` stays; an
/// invokable `C::class` gives `C`; Lumen's `['uses' => 'C@m']` gives `C@m`; a closure gives
/// nothing.
fn laravel_handler(src: &Src, s: usize, e: usize) -> Option<String> {
    let code = src.code();
    if let Some(v) = src.plain_string(s, e) {
        return Some(v);
    }
    let (s, e) = src.trim(s, e);
    let t = &code[s..e];
    if let Some(c) = t.strip_suffix("::class") {
        return Some(c.rsplit('\\').next().unwrap_or(c).to_string());
    }
    let items = src.items(s, e);
    for &(x, y) in &items {
        if let Some(arrow) = code[x..y].find("=>")
            && src.plain_string(x, x + arrow).as_deref() == Some("uses")
        {
            return src.plain_string(x + arrow + 2, y);
        }
    }
    if items.len() == 2 {
        let c = code[items[0].0..items[0].1].strip_suffix("::class")?;
        let m = src.plain_string(items[1].0, items[1].1)?;
        return Some(format!("{}@{m}", c.rsplit('\\').next().unwrap_or(c)));
    }
    None
}

fn singular(plural: &str) -> String {
    if let Some(stem) = plural.strip_suffix("ies") {
        format!("{stem}y")
    } else if let Some(stem) = plural.strip_suffix('s') {
        stem.to_string()
    } else {
        plural.to_string()
    }
}

/// Whether the receiver of `->get(`/`::get(` is an HTTP client: `Some(true)` for the `Http`
/// facade (and its chains) and a variable bound to a Guzzle/Symfony client, `Some(false)` for
/// a name that only says so (`$client`, `$http`), whose argument must then read like a URL.
fn http_receiver(st: &State, chain: &Chain) -> Option<bool> {
    if chain.text.is_empty() {
        return None;
    }
    if matches!(chain.root(), "Http" | "Illuminate\\Support\\Facades\\Http") {
        return Some(true);
    }
    let key = chain.key()?;
    if st.http_clients.contains(key) {
        return Some(true);
    }
    let k = key.to_ascii_lowercase();
    ((k.contains("client") && !st.grpc_clients.contains_key(key))
        || k.contains("http")
        || k.contains("guzzle"))
    .then_some(false)
}

fn push_event(
    src: &Src,
    st: &mut State,
    role: EventRole,
    via: &str,
    s: usize,
    e: usize,
    class: Option<&str>,
) {
    if let Some(topic) = src.topic(s, e, class) {
        st.facts.events.push(EventFact {
            role,
            topic,
            via: via.to_string(),
            line: src.line_of(s),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym<'f>(f: &'f FileFacts, name: &str) -> &'f Symbol {
        f.symbols
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no symbol {name} in {:#?}", f.symbols))
    }

    fn events(f: &FileFacts) -> Vec<(EventRole, Value, &str, u32)> {
        f.events
            .iter()
            .map(|e| (e.role, e.topic.clone(), e.via.as_str(), e.line))
            .collect()
    }

    fn lit(s: &str) -> Value {
        Value::lit(s.to_string())
    }

    fn routes(f: &FileFacts) -> Vec<(String, String, Option<String>, u32)> {
        f.http
            .iter()
            .filter_map(|h| match h {
                HttpFact::Route {
                    method,
                    path,
                    handler,
                    line,
                } => Some((method.clone(), path.clone(), handler.clone(), *line)),
                HttpFact::Call { .. } => None,
            })
            .collect()
    }

    fn http_calls(f: &FileFacts) -> Vec<(Option<String>, String, u32)> {
        f.http
            .iter()
            .filter_map(|h| match h {
                HttpFact::Call { method, url, line } => {
                    Some((method.clone(), url.display(), *line))
                }
                HttpFact::Route { .. } => None,
            })
            .collect()
    }

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
        let consts: Vec<(&str, Value)> = f
            .bindings
            .iter()
            .map(|c| (c.name.as_str(), c.value.clone()))
            .collect();
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
        let imps: Vec<(&str, Vec<&str>, Option<&str>, u32)> = f
            .imports
            .iter()
            .map(|i| {
                (
                    i.module.as_str(),
                    i.names.iter().map(String::as_str).collect(),
                    i.alias.as_deref(),
                    i.line,
                )
            })
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
    fn http_calls_guzzle_and_facade() {
        let src = r#"<?php
use GuzzleHttp\Client;
use Illuminate\Support\Facades\Http;

class PricingGateway
{
    public function __construct()
    {
        $this->http = new Client(['base_uri' => 'http://pricing:8080']);
    }

    public function fetch(string $sku)
    {
        $this->http->get('/prices/' . $sku);
        $this->http->request('POST', "/quotes/{$sku}/accept");
        Http::withToken($t)->put("http://orders/orders/$sku");
        Http::get(sprintf('/stock/%s', $sku));
        $guzzle = new \GuzzleHttp\Client();
        $guzzle->deleteAsync($this->base . '/carts/' . $sku);
        $cache->get('/not/http');
    }
}
"#;
        let f = extract("src/PricingGateway.php", src);
        let c = |m: &str, p: &str, l: u32| (Some(m.to_string()), p.to_string(), l);
        // URLs are values as written: hosts are kept, parameters are run-time parts, a
        // property stays a name the graph may resolve.
        assert_eq!(
            http_calls(&f),
            vec![
                // Relative to the client's base_uri, whose host names the service.
                c("GET", "http://pricing:8080/prices/{}", 14),
                c("POST", "http://pricing:8080/quotes/{}/accept", 15),
                c("PUT", "http://orders/orders/{}", 16),
                c("GET", "/stock/{}", 17),
                c("DELETE", "{$this.base}/carts/{}", 19),
            ]
        );
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
        let c = |m: &str, p: &str, l: u32| (Some(m.to_string()), p.to_string(), l);
        assert_eq!(
            http_calls(&f),
            vec![
                // The request is `curl_exec`; the URL is what `curl_init` was given, and a
                // constructor-injected property stays a name the graph may resolve.
                c("GET", "{$this.catalogueUrl}/product/{}", 21),
                // `CURLOPT_URL` and `CURLOPT_CUSTOMREQUEST` set on the handle.
                c("PUT", "{env RATINGS_URL}/api/rate/{}/{}", 31),
                // `CURLOPT_POSTFIELDS` makes it a POST.
                c("POST", "{$this.base}/orders", 34),
                c("GET", "{env CART_URL}/cart/{}", 40),
                c("GET", "{env USER_URL}/users/{}", 41),
                c("GET", "{$this.shippingUrl}/calc/{}", 42),
                c("GET", "http://pricing/price/{}", 43),
            ]
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
        let got: Vec<(&str, Value)> = f
            .bindings
            .iter()
            .map(|b| (b.name.as_str(), b.value.clone()))
            .collect();
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
        assert_eq!(
            http_calls(&f),
            vec![(Some("GET".into()), "{$this.baseUrl}/orders/{}".into(), 17)]
        );
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
                GrpcFact::Client {
                    service: "OrderService".into(),
                    var: Some("client".into()),
                    line: 11
                },
                GrpcFact::Call {
                    service: Some("OrderService".into()),
                    receiver: "client".into(),
                    method: "CreateOrder".into(),
                    line: 14
                },
                GrpcFact::Call {
                    service: Some("InventoryService".into()),
                    receiver: "inventory".into(),
                    method: "ReserveStock".into(),
                    line: 15
                },
                GrpcFact::Client {
                    service: "PaymentService".into(),
                    var: None,
                    line: 17
                },
            ]
        );
        let server = extract(
            "src/OrderService.php",
            "<?php\nuse Spiral\\RoadRunner\\GRPC;\n\nclass OrderService implements Base, OrderServiceInterface\n{\n    public function CreateOrder(GRPC\\ContextInterface $ctx, Req $in): Order {}\n}\n",
        );
        assert_eq!(
            server.grpc,
            vec![GrpcFact::Server {
                service: "OrderService".into(),
                impl_type: Some("OrderService".into()),
                line: 4
            }]
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
        let names: Vec<&str> = f.symbols.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, vec!["Yes"]);
        assert!(f.http.is_empty());
    }

    #[test]
    fn truncated_and_malformed_files_do_not_panic() {
        for src in [
            "<?php class",
            "<?php class A extends",
            "<?php function",
            "<?php function &",
            "<?php namespace",
            "<?php use A\\{B,",
            "<?php const",
            "<?php enum E { case",
            "<?php #[Route('/x'",
            "<?php Route::prefix('v1')->group(function () {",
            "<?php $x = new",
            "<?php }}}{{{",
            "<?php define(",
            "<?php $client->get(\"{$",
            "<?php curl_exec(",
            "<?php $ch = curl_init($u); curl_setopt_array($ch, $o",
            "<?php /** @Route(\"/x\", methods={\"GET\"",
            "<?php /** @Route(",
            "<?php $app->group('/x', function (",
            "<?php $c = new Client(['base_uri' => ",
            "<?php class A { /** @Route(\"/a\") */ function __invoke(",
        ] {
            let _ = extract("x.php", src);
        }
        let f = extract("x.php", "<?php class A {\n function f() {\n");
        assert_eq!(sym(&f, "A").end_line, 3);
    }

    /// 200 KB of random bytes, as text (invalid UTF-8 replaced).
    fn random_text(mut seed: u64) -> String {
        let bytes: Vec<u8> = (0..200_000)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed >> 24) as u8
            })
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    #[test]
    fn junk_input_does_not_panic() {
        let mut seed = 0x1234_5678_9abc_def1u64;
        let alphabet = b"<?php classfunctionusenamespaceconstcaseenumnew#[]()${};:->\\=,.'\"/*\n\t  xyzABC_012RouteHttpgetsubscribenewTopic";
        let junk: String = (0..200_000)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                char::from(alphabet[(seed % alphabet.len() as u64) as usize])
            })
            .collect();
        let _ = extract("junk.php", &junk);
        let _ = extract("junk.php", &random_text(0xdead_beef_cafe_f00d));
        let _ = extract("junk.php", &"const A = 1, ".repeat(20_000));
        let _ = extract("junk.php", &"class A extends ".repeat(20_000));
        let _ = extract("junk.php", &"{".repeat(100_000));
        // Statement windows that end inside a multi-byte character.
        let _ = extract("junk.php", &format!("<?php use A{}", "é".repeat(3000)));
        let _ = extract("junk.php", &format!("<?php use AB{}", "é".repeat(3000)));
        let _ = extract(
            "junk.php",
            &format!("<?php const X = 'a', Y{}", "é".repeat(3000)),
        );
    }
}
