//! TypeScript and JavaScript extractor (`.ts`, `.tsx`, `.mts`, `.cts`, `.js`, `.jsx`, `.mjs`,
//! `.cjs`): declarations, imports, gRPC (grpc-js, ts-proto, NestJS), Kafka (kafkajs, NestJS
//! microservices), HTTP routes (Express/Fastify/Koa-style routers, NestJS controllers) and HTTP
//! calls (`fetch`, axios, Angular `HttpClient`, got, ky).
//!
//! The file is lexed once — in files that can hold JSX the JSX text is blanked first (same
//! offsets), so the apostrophe of `<p>Don't</p>` or the slash of `</p>` never opens a string or
//! a regex — and tokenized. Three linear passes follow: bindings and imports (which names hold
//! a gRPC client, a Kafka producer or consumer, a NestJS client, an HTTP client, a router),
//! declarations (regions on an explicit stack, so nesting never recurses; class decorators give
//! NestJS routes, handlers and event consumers), and uses (calls).

use std::collections::{HashMap, HashSet};

use super::bind::{Assignments, StmtStyle};
use super::common::looks_like_topic;
use super::common::{join_route, looks_like_url};
use super::tokens::{Chain, Rules, TokKind, Tokens};
use super::value::{ExprRules, eval};
use crate::index::facts::{
    Binding, EventFact, EventRole, FileFacts, GrpcFact, HttpFact, Import, SymbolKind, Value,
};
use crate::index::lex::{Syntax, is_ident_byte, lex};

/// Extracts the facts of one TypeScript or JavaScript file.
pub fn extract(path: &str, text: &str) -> FileFacts {
    let ext = path
        .rsplit_once('.')
        .map_or("", |(_, e)| e)
        .to_ascii_lowercase();
    let jsx_capable = matches!(ext.as_str(), "tsx" | "jsx" | "js" | "mjs" | "cjs");
    let blanked = if jsx_capable {
        blank_jsx_text(text, ext == "tsx")
    } else {
        None
    };
    let src = blanked.as_deref().unwrap_or(text);
    let lx = lex(Syntax::JS, src);
    let toks = Tokens::new(&lx, &Rules::JS);
    let asg = Assignments::scan(&toks, &StmtStyle::NEWLINE);
    let mut ex = Ex {
        t: &toks,
        asg: &asg,
        facts: FileFacts::default(),
        bind: HashMap::new(),
        consts: HashMap::new(),
        imported: HashSet::new(),
        client_vars: HashSet::new(),
        grpc_hint: lx.strings.iter().any(|s| {
            ["grpc", "_pb", "proto", "generated", "/gen/"]
                .iter()
                .any(|h| s.raw.contains(h))
        }),
    };
    ex.bindings_and_imports();
    ex.declarations();
    ex.uses();
    let mut facts = ex.facts;
    next_routes(path, &toks, &mut facts);
    asg.export(&toks, &ExprRules::JS, &mut facts);
    crate::order::sort_by_key(&mut facts.symbols, |s| s.line);
    crate::order::sort_by_key(&mut facts.bindings, |c| c.line);
    crate::order::sort_by_key(&mut facts.grpc, grpc_line);
    crate::order::sort_by_key(&mut facts.events, |e| e.line);
    crate::order::sort_by_key(&mut facts.http, |h| match h {
        HttpFact::Route { line, .. } | HttpFact::Call { line, .. } => *line,
    });
    facts
}

/// Next.js file-system routes: `pages/api/orders/[id].ts` serves `/api/orders/[id]` (its
/// methods from `req.method === 'POST'` and `case 'POST':` branches, else ANY), and
/// `app/orders/[id]/route.ts` serves `/orders/[id]` for each exported `GET`, `POST`, ….
fn next_routes(path: &str, t: &Tokens, facts: &mut FileFacts) {
    const METHODS: [&str; 7] = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"];
    let stem = path.rsplit_once('.').map_or(path, |(s, _)| s);
    let segs: Vec<&str> = stem.split('/').collect();
    let join = |parts: &[&str]| {
        let kept: Vec<&str> = parts
            .iter()
            .copied()
            .filter(|p| !(p.starts_with('@') || p.starts_with('(') && p.ends_with(')')))
            .collect();
        format!("/{}", kept.join("/"))
    };
    if segs.last() == Some(&"route")
        && let Some(i) = segs.iter().rposition(|s| *s == "app")
    {
        let route = join(&segs[i + 1..segs.len() - 1]);
        for s in &facts.symbols {
            if s.container.is_none() && METHODS.contains(&s.name.as_str()) {
                facts.http.push(HttpFact::Route {
                    method: s.name.clone(),
                    path: route.clone(),
                    handler: Some(s.name.clone()),
                    line: s.line,
                });
            }
        }
    } else if let Some(i) = segs.windows(2).position(|w| w == ["pages", "api"]) {
        let mut rest = &segs[i + 1..];
        if rest.len() > 1 && rest.last() == Some(&"index") {
            rest = &rest[..rest.len() - 1];
        }
        let route = join(rest);
        let mut methods: Vec<String> = Vec::new();
        let mut line = None;
        for k in 0..t.len() {
            if t.kw(k, "export") && t.kw(k + 1, "default") && line.is_none() {
                line = Some(t.line(k));
            }
            let mut j = k + 1;
            if t.ident(k) == Some("method") {
                while t.is(j, "=") || t.is(j, "==") || t.is(j, "===") {
                    j += 1;
                }
            } else if !t.kw(k, "case") {
                continue;
            }
            if (j > k + 1 || t.kw(k, "case"))
                && let Some(v) = t.str_value(j).filter(|v| METHODS.contains(&v.as_ref()))
                && !methods.iter().any(|m| *m == v)
            {
                methods.push(v.into_owned());
            }
        }
        if methods.is_empty() {
            methods.push("ANY".into());
        }
        for method in methods {
            facts.http.push(HttpFact::Route {
                method,
                path: route.clone(),
                handler: None,
                line: line.unwrap_or(1),
            });
        }
    }
}

fn grpc_line(g: &GrpcFact) -> u32 {
    match g {
        GrpcFact::Server { line, .. }
        | GrpcFact::Handler { line, .. }
        | GrpcFact::Client { line, .. }
        | GrpcFact::Call { line, .. } => *line,
    }
}

// ---------------------------------------------------------------------------------------------
// JSX text blanking
// ---------------------------------------------------------------------------------------------

/// The source with JSX text and the `/` of closing tags blanked (newlines kept, offsets
/// unchanged), or `None` when the file holds no JSX or the JSX could not be followed to its
/// end (then the file is lexed as is).
///
/// A `<` starts an element only where an expression can start (after `(`, `=`, `:`, `?`, `,`,
/// `[`, `{`, `;`, `!`, `&&`, `||`, `=>`, `return` …) and before a name or `>`; in `.tsx`,
/// `<T,>` and `<T extends X>` stay generics. Elements, attribute expressions and template
/// literals nest on an explicit stack.
fn blank_jsx_text(src: &str, tsx: bool) -> Option<String> {
    #[derive(Clone, Copy, PartialEq)]
    enum Ctx {
        Code(u32),
        Template,
        Tag { closing: bool },
        Children,
    }
    const MAX_DEPTH: usize = 512;
    // Every JSX element closes with `</` or `/>`: without either there is nothing to do.
    if !src.contains("</") && !src.contains("/>") {
        return None;
    }
    let b = src.as_bytes();
    let n = b.len();
    let mut stack = vec![Ctx::Code(0)];
    let mut blanks: Vec<(usize, usize)> = Vec::new();
    let blank = |blanks: &mut Vec<(usize, usize)>, from: usize, to: usize| match blanks.last_mut() {
        Some(last) if last.1 == from => last.1 = to,
        _ => blanks.push((from, to)),
    };
    // The last significant byte of code and, when it ends a word, the word's start.
    let mut prev: u8 = 0;
    let mut prev_at = 0usize;
    let mut word_start = usize::MAX;
    let mut found = false;
    let mut i = 0usize;
    while i < n {
        let &top = stack.last()?;
        if stack.len() > MAX_DEPTH {
            return None;
        }
        let c = b[i];
        match top {
            Ctx::Code(depth) => {
                if c.is_ascii_whitespace() {
                    i += 1;
                    continue;
                }
                if c == b'/' && b.get(i + 1) == Some(&b'/') {
                    i = b[i..].iter().position(|&x| x == b'\n').map_or(n, |p| i + p);
                    continue;
                }
                if c == b'/' && b.get(i + 1) == Some(&b'*') {
                    i = src[i + 2..].find("*/").map_or(n, |p| i + 2 + p + 2);
                    continue;
                }
                let word = (word_start != usize::MAX && is_ident_byte(prev))
                    .then(|| &b[word_start..=prev_at]);
                match c {
                    b'\'' | b'"' => {
                        i = skip_quoted(b, i, true);
                        prev = c;
                        prev_at = i.saturating_sub(1);
                        word_start = usize::MAX;
                        continue;
                    }
                    b'`' => {
                        stack.push(Ctx::Template);
                        i += 1;
                        continue;
                    }
                    b'/' if regex_may_start(prev, word) => {
                        if let Some(end) = regex_literal_end(b, i) {
                            i = end;
                            prev = b'/';
                            prev_at = end - 1;
                            word_start = usize::MAX;
                            continue;
                        }
                    }
                    b'{' => {
                        if let Some(top) = stack.last_mut() {
                            *top = Ctx::Code(depth + 1);
                        }
                    }
                    b'}' => {
                        if depth == 0 {
                            if stack.len() > 1 {
                                stack.pop();
                                i += 1;
                                prev = b'}';
                                prev_at = i - 1;
                                word_start = usize::MAX;
                                continue;
                            }
                        } else if let Some(top) = stack.last_mut() {
                            *top = Ctx::Code(depth - 1);
                        }
                    }
                    b'<' if jsx_may_start(b, i, prev, prev_at, word, tsx) => {
                        found = true;
                        stack.push(Ctx::Tag { closing: false });
                        i += 1;
                        continue;
                    }
                    _ => {}
                }
                if is_ident_byte(c) {
                    let s = i;
                    while i < n && is_ident_byte(b[i]) {
                        i += 1;
                    }
                    word_start = s;
                    prev = b[i - 1];
                    prev_at = i - 1;
                    continue;
                }
                prev = c;
                prev_at = i;
                word_start = usize::MAX;
                i += 1;
            }
            Ctx::Template => match c {
                b'\\' => i += 2,
                b'`' => {
                    stack.pop();
                    i += 1;
                    prev = b'`';
                    prev_at = i - 1;
                    word_start = usize::MAX;
                }
                b'$' if b.get(i + 1) == Some(&b'{') => {
                    stack.push(Ctx::Code(0));
                    prev = b'{';
                    word_start = usize::MAX;
                    i += 2;
                }
                _ => i += 1,
            },
            Ctx::Tag { closing } => match c {
                b'"' | b'\'' => i = skip_quoted(b, i, false),
                b'{' => {
                    stack.push(Ctx::Code(0));
                    prev = b'{';
                    word_start = usize::MAX;
                    i += 1;
                }
                b'/' if b.get(i + 1) == Some(&b'>') => {
                    blank(&mut blanks, i, i + 1);
                    stack.pop();
                    i += 2;
                    prev = b')';
                    word_start = usize::MAX;
                }
                b'>' => {
                    if closing {
                        stack.pop();
                        prev = b')';
                        word_start = usize::MAX;
                    } else if let Some(top) = stack.last_mut() {
                        *top = Ctx::Children;
                    }
                    i += 1;
                }
                // A `;` or a `}` cannot be in a tag: this `<` was not JSX after all.
                b';' | b'}' => return None,
                _ => i += 1,
            },
            Ctx::Children => match c {
                b'{' => {
                    stack.push(Ctx::Code(0));
                    prev = b'{';
                    word_start = usize::MAX;
                    i += 1;
                }
                b'<' => {
                    let mut j = i + 1;
                    while j < n && b[j].is_ascii_whitespace() {
                        j += 1;
                    }
                    if b.get(j) == Some(&b'/') {
                        blank(&mut blanks, j, j + 1);
                        if let Some(top) = stack.last_mut() {
                            *top = Ctx::Tag { closing: true };
                        }
                        i = j + 1;
                    } else if b.get(j).is_some_and(|&x| x == b'>' || is_ident_start(x)) {
                        stack.push(Ctx::Tag { closing: false });
                        i += 1;
                    } else {
                        blank(&mut blanks, i, i + 1);
                        i += 1;
                    }
                }
                b'\n' | b'\r' => i += 1,
                _ => {
                    blank(&mut blanks, i, i + 1);
                    i += 1;
                }
            },
        }
    }
    if !found || stack.len() != 1 {
        return None;
    }
    let mut out = b.to_vec();
    for (from, to) in blanks {
        for x in &mut out[from.min(n)..to.min(n)] {
            *x = b' ';
        }
    }
    // Only whole characters were blanked (text runs, ASCII slashes), so this stays UTF-8.
    String::from_utf8(out).ok()
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$'
}

/// Past the quoted string at `i` (`'` or `"`); single-line strings stop at the line end.
fn skip_quoted(b: &[u8], i: usize, single_line: bool) -> usize {
    let q = b[i];
    let mut k = i + 1;
    while k < b.len() {
        match b[k] {
            b'\\' if single_line => k += 2,
            x if x == q => return k + 1,
            b'\n' if single_line => return k,
            _ => k += 1,
        }
    }
    b.len()
}

/// Mirrors the lexer's rule: a `/` starts a regex after an operator, an opening bracket, a
/// separator, the start of the file or a keyword such as `return`.
fn regex_may_start(prev: u8, word: Option<&[u8]>) -> bool {
    if prev == 0 {
        return true;
    }
    if let Some(w) = word {
        return matches!(
            w,
            b"return"
                | b"typeof"
                | b"case"
                | b"in"
                | b"of"
                | b"void"
                | b"yield"
                | b"await"
                | b"delete"
        );
    }
    b"(,=:[!&|?{};+-*%<>~^".contains(&prev)
}

/// The end (past the flags) of a one-line regex literal at `i`.
fn regex_literal_end(b: &[u8], i: usize) -> Option<usize> {
    let next = *b.get(i + 1)?;
    if next == b'/' || next == b'*' || next == b'\n' {
        return None;
    }
    let mut k = i + 1;
    let mut in_class = false;
    while k < b.len() {
        match b[k] {
            b'\\' => k += 2,
            b'\n' => return None,
            b'[' => {
                in_class = true;
                k += 1;
            }
            b']' => {
                in_class = false;
                k += 1;
            }
            b'/' if !in_class => {
                k += 1;
                while k < b.len() && b[k].is_ascii_alphabetic() {
                    k += 1;
                }
                return Some(k);
            }
            _ => k += 1,
        }
    }
    None
}

/// True when the `<` at `i` opens a JSX element.
fn jsx_may_start(
    b: &[u8],
    i: usize,
    prev: u8,
    prev_at: usize,
    word: Option<&[u8]>,
    tsx: bool,
) -> bool {
    let Some(&next) = b.get(i + 1) else {
        return false;
    };
    if !(next == b'>' || is_ident_start(next)) {
        return false;
    }
    let after_expr_start = match word {
        Some(w) => matches!(
            w,
            b"return" | b"yield" | b"default" | b"case" | b"await" | b"else" | b"do"
        ),
        None => {
            prev == 0
                || b"(,=:?[{;!&|".contains(&prev)
                || (prev == b'>' && prev_at > 0 && b[prev_at - 1] == b'=')
        }
    };
    if !after_expr_start {
        return false;
    }
    if tsx && next != b'>' {
        // `<T,>(x) => …`, `<T extends U>(…)`, and `= <T>(x: T) => …` in a type position.
        let mut j = i + 1;
        while j < b.len() && is_ident_byte(b[j]) {
            j += 1;
        }
        let mut k = j;
        while k < b.len() && b[k].is_ascii_whitespace() {
            k += 1;
        }
        if b.get(k) == Some(&b',') || b[k.min(b.len())..].starts_with(b"extends ") {
            return false;
        }
        if b.get(k) == Some(&b'>') && matches!(prev, b'=' | b':') {
            let mut m = k + 1;
            while m < b.len() && b[m].is_ascii_whitespace() {
                m += 1;
            }
            if b.get(m) == Some(&b'(') {
                return false;
            }
        }
    }
    true
}

// ---------------------------------------------------------------------------------------------
// The extractor
// ---------------------------------------------------------------------------------------------

/// What a variable, field or parameter is known to hold.
#[derive(Debug, Clone, PartialEq)]
enum Bind {
    /// A gRPC client of the named service.
    Grpc(String),
    /// A kafkajs producer (`kafka.producer()`, typed `Producer`).
    Producer,
    /// A kafkajs consumer (`kafka.consumer(…)`, typed `Consumer`).
    Consumer,
    /// A NestJS microservices client (`ClientKafka`, `ClientProxy`).
    Nest(&'static str),
    /// An HTTP client (Angular `HttpClient`, NestJS `HttpService`, an axios/got/ky instance).
    Http,
    /// A router, with the prefix it is mounted or created with.
    Router(String),
    /// An instance of a class imported from the workspace (`new OrdersApi(base)`): its method
    /// calls may be a generated client's requests, which the graph looks up.
    Instance(String),
}

/// Methods of a gRPC client object that are not RPCs.
const CLIENT_PLUMBING: [&str; 9] = [
    "getService",
    "close",
    "waitForReady",
    "getChannel",
    "then",
    "bind",
    "makeUnaryRequest",
    "on",
    "catch",
];

const VERBS: [&str; 9] = [
    "get", "post", "put", "delete", "patch", "head", "options", "all", "del",
];

/// Receivers that are HTTP clients by name, never routers.
const HTTP_CLIENT_NAMES: [&str; 10] = [
    "axios",
    "got",
    "ky",
    "superagent",
    "request",
    "http",
    "httpClient",
    "httpService",
    "$http",
    "fetch",
];

/// A receiver named like an AMQP channel (`ch`, `channel`, `orderChannel`, `amqpChan`,
/// `rabbitCh`).
fn is_amqp_channel(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower == "ch"
        || lower.ends_with("channel")
        || lower.ends_with("chan")
        || lower.starts_with("amqp")
        || lower.starts_with("rabbit")
}

fn is_upper_const(name: &str) -> bool {
    name.bytes().any(|b| b.is_ascii_uppercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Client types of well-known non-gRPC libraries (and NestJS transports), never a service.
const NOT_GRPC_CLIENTS: [&str; 18] = [
    "Client",
    "HttpClient",
    "ClientKafka",
    "ClientProxy",
    "ClientGrpc",
    "PrismaClient",
    "RedisClient",
    "MongoClient",
    "ApolloClient",
    "QueryClient",
    "SupabaseClient",
    "S3Client",
    "SQSClient",
    "SNSClient",
    "DynamoDBClient",
    "LambdaClient",
    "KafkaClient",
    "ElasticsearchClient",
];

/// The service of a generated client type name (`OrderServiceClient`, `OrderServiceClientImpl`
/// give `OrderService`), or `None` for names that are not client types.
fn client_type_service(ty: &str) -> Option<String> {
    if NOT_GRPC_CLIENTS.contains(&ty) {
        return None;
    }
    let stem = ty
        .strip_suffix("ClientImpl")
        .or_else(|| ty.strip_suffix("Client"))?;
    (stem.len() > 1 && stem.starts_with(|c: char| c.is_ascii_uppercase())).then(|| stem.to_string())
}

/// The service named by the last segment of an `addService` definition expression.
fn service_of_definition(seg: &str) -> String {
    match seg.strip_suffix("Service") {
        Some(stem) if stem.ends_with("Service") => stem.to_string(),
        _ => seg.to_string(),
    }
}

/// A declaration region still to scan.
struct Region {
    a: usize,
    b: usize,
    container: Option<String>,
    class: Option<ClassCtx>,
}

/// What the class being scanned says about its members.
struct ClassCtx {
    name: String,
    /// The NestJS (or routing-controllers/tsoa) controller prefix, when decorated.
    route_prefix: Option<String>,
}

/// A decorator: its name (last segment) and the index of its `(`.
struct Deco<'t> {
    name: &'t str,
    open: Option<usize>,
    line: u32,
}

struct Ex<'t, 'l, 'a> {
    t: &'t Tokens<'l, 'a>,
    /// Every `name = value` of the file, for what a name holds at a call.
    asg: &'t Assignments,
    facts: FileFacts,
    bind: HashMap<&'t str, Bind>,
    /// File-level constants (name → value), to resolve decorator arguments.
    consts: HashMap<String, String>,
    /// Names imported by name (`import { ORDERS } from …`): references worth recording.
    imported: HashSet<String>,
    /// Variables that already have a `Client` fact.
    client_vars: HashSet<String>,
    /// A string literal of the file names a gRPC or protobuf module (`@grpc/grpc-js`,
    /// `./gen/orders_pb`, `orders.proto`, `./generated/…`).
    grpc_hint: bool,
}

const CONT_END: [&str; 33] = [
    "=", ",", ".", "?.", "(", "[", "{", ":", "?", "|", "&", "&&", "||", "??", "+", "-", "*", "/",
    "%", "=>", "<", "!", "~", "^", "==", "===", "!=", "!==", "extends", "new", "typeof", "keyof",
    "as",
];
const CONT_START: [&str; 24] = [
    ".",
    "?.",
    "=>",
    "?",
    ":",
    "|",
    "&",
    "&&",
    "||",
    "??",
    "*",
    "/",
    "%",
    "=",
    "==",
    "===",
    "!=",
    "!==",
    ">",
    "as",
    "satisfies",
    "instanceof",
    "extends",
    "implements",
];

impl<'t> Ex<'t, '_, '_> {
    // -- small token helpers -------------------------------------------------------------

    fn line(&self, i: usize) -> u32 {
        self.t.line(i)
    }

    /// The line of the last byte of token `i` (a template literal may span lines).
    fn last_line(&self, i: usize) -> u32 {
        self.t.end_line(i)
    }

    /// True when the token at `j` starts a new statement after the token at `p` (a line break
    /// between them that neither token continues).
    fn breaks(&self, p: usize, j: usize) -> bool {
        let t = self.t;
        // Most tokens are names or one-byte punctuation: test those without the lists.
        let continues = |i: usize, list: &[&str]| match t.kind(i) {
            Some(TokKind::Punct) | Some(TokKind::Ident) => list.iter().any(|s| t.is(i, s)),
            _ => false,
        };
        t.line(j) > t.line(p) && !continues(p, &CONT_END) && !continues(j, &CONT_START)
    }

    /// The index of the token that ends the expression starting at `from`: a depth-0 `;` (or
    /// `,` when `comma`), an unmatched closer, a line break that ends the statement, or `b`.
    fn expr_end(&self, from: usize, b: usize, comma: bool) -> usize {
        let t = self.t;
        let mut j = from;
        let mut prev: Option<usize> = None;
        while j < b {
            match t.punct(j) {
                b';' | b')' | b']' | b'}' => return j,
                b',' if comma => return j,
                _ => {}
            }
            if let Some(p) = prev
                && self.breaks(p, j)
            {
                return j;
            }
            let nj = t.skip_group(j).min(b);
            prev = Some(nj.saturating_sub(1).max(j));
            j = nj.max(j + 1);
        }
        b
    }

    /// Past the statement starting at `from` (its `;` consumed), always beyond `from`.
    fn stmt_next(&self, from: usize, b: usize) -> usize {
        let e = self.expr_end(from, b, false);
        let e = if self.t.is(e, ";") { e + 1 } else { e };
        e.max(from + 1)
    }

    /// The `{` of the body that follows a signature starting at `j` (return-type object
    /// literals and generic arguments skipped), or `None` when a `;` or a statement break
    /// comes first.
    fn body_open_after(&self, mut j: usize, b: usize) -> Option<usize> {
        let t = self.t;
        let mut angle = 0usize;
        let mut expect_type = false;
        let start = j;
        while j < b {
            if t.is(j, "{") {
                if angle == 0 && !expect_type {
                    return Some(j);
                }
                j = t.skip_group(j);
                expect_type = false;
                continue;
            }
            if t.is(j, ";") || t.is(j, "}") || t.is(j, ")") {
                return None;
            }
            if j > start && angle == 0 && !expect_type && self.breaks(j - 1, j) {
                return None;
            }
            if t.is(j, "<") {
                angle += 1;
            } else if t.is(j, ">") {
                angle = angle.saturating_sub(1);
            } else if t.is(j, ":") || t.is(j, "|") || t.is(j, "&") || t.is(j, "=>") {
                expect_type = true;
            } else if t.is_opener(j) {
                j = t.skip_group(j);
                expect_type = false;
                continue;
            } else {
                expect_type = false;
            }
            j += 1;
        }
        None
    }

    /// Decorators starting at `i`: the index after them, the first one's line, and the list.
    fn decorators(&self, mut i: usize, b: usize) -> (usize, Option<u32>, Vec<Deco<'t>>) {
        let t = self.t;
        let mut first = None;
        let mut out = Vec::new();
        while i < b && t.is(i, "@") && t.ident(i + 1).is_some() {
            let line = self.line(i);
            first.get_or_insert(line);
            let mut j = i + 1;
            let mut name = t.text(j);
            while t.is(j + 1, ".") && t.ident(j + 2).is_some() {
                j += 2;
                name = t.text(j);
            }
            j += 1;
            let open = t.is(j, "(").then_some(j);
            if open.is_some() {
                j = t.skip_group(j);
            }
            out.push(Deco { name, open, line });
            i = j;
        }
        (i, first, out)
    }

    fn push_constant(&mut self, name: String, value: String, line: u32) {
        self.consts
            .entry(name.clone())
            .or_insert_with(|| value.clone());
        self.facts.bindings.push(Binding {
            name,
            value: Value::lit(value),
            line,
        });
    }

    /// The variable or field an expression starting at `start` is assigned to:
    /// `const x = …`, `const x: T = …`, `this.x = …`, `x = …`, `{ x: … }`, `private x = …`.
    fn assigned_name(&self, start: usize) -> Option<&'t str> {
        let t = self.t;
        let mut k = start.checked_sub(1)?;
        if t.is(k, "await") {
            k = k.checked_sub(1)?;
        }
        if t.is(k, ":") {
            return t.ident(k.checked_sub(1)?);
        }
        if !t.is(k, "=") {
            return None;
        }
        let before = k.checked_sub(1)?;
        // `const x: Foo<Bar> = …`: walk back to the `:` of the annotation.
        let mut j = before;
        let mut steps = 0;
        while steps < 24 {
            if t.is(j, ":") {
                return t.ident(j.checked_sub(1)?);
            }
            if t.is(j, ";")
                || t.is(j, "{")
                || t.is(j, "}")
                || t.is(j, "=")
                || t.is(j, "const")
                || t.is(j, "let")
                || t.is(j, "var")
                || (j < before && t.line(j) < t.line(before))
            {
                break;
            }
            steps += 1;
            match j.checked_sub(1) {
                Some(p) => j = p,
                None => break,
            }
        }
        t.ident(before)
    }

    /// A topic expression in `a..e` as the shared evaluator reads it; a lone literal must
    /// look like a topic name.
    fn topic_expr(&self, a: usize, e: usize) -> Option<Value> {
        let t = self.t;
        if a >= e {
            return None;
        }
        // An object or array is a message pattern of another transport (`{ cmd: 'sum' }`).
        if t.is(a, "{") || t.is(a, "[") {
            return None;
        }
        let v = eval(t, (a, e), &ExprRules::JS, self.asg);
        match v.as_lit() {
            Some(lit) => looks_like_topic(lit).then_some(v),
            None => Some(v),
        }
    }

    /// `process.env.X`, `process.env['X']`, optionally `?? 'd'` / `|| 'd'`, starting at `a`.
    fn env_lookup(&self, a: usize, e: usize) -> Option<Value> {
        let t = self.t;
        if !(t.is(a, "process") && t.is(a + 1, ".") && t.is(a + 2, "env")) {
            return None;
        }
        let (var, mut k) = if t.is(a + 3, ".") {
            (t.ident(a + 4)?.to_string(), a + 5)
        } else if t.is(a + 3, "[") {
            (t.str_value(a + 4)?.into_owned(), t.skip_group(a + 3))
        } else {
            return None;
        };
        if t.is(k, "!") {
            k += 1;
        }
        let default = if (t.is(k, "??") || t.is(k, "||")) && k + 1 < e.max(k + 2) {
            t.str_lit(k + 1)
                .filter(|s| !s.raw.contains("${"))
                .map(|s| s.value().into_owned())
        } else {
            None
        };
        Some(Value::env(var, default))
    }

    /// The token index of the value of `key` in the object literal opened at `open`.
    fn object_value(&self, open: usize, key: &str) -> Option<usize> {
        let t = self.t;
        if !t.is(open, "{") {
            return None;
        }
        let end = t.close(open).unwrap_or(t.len());
        let mut j = open + 1;
        while j < end {
            let key_here = t.is(j, key) || t.str_value(j).is_some_and(|v| v == key);
            if key_here && t.is(j + 1, ":") && (t.is(j - 1, "{") || t.is(j - 1, ",")) {
                return Some(j + 2);
            }
            j = t.skip_group(j);
        }
        None
    }

    /// The URL expression in `a..e` as the shared evaluator reads it. `sure` is set for calls
    /// that are HTTP whatever the URL (fetch, axios, a bound HTTP client); otherwise the URL
    /// must show a path or a scheme, so `cache.get(key)` is not taken for a request.
    fn url_in(&self, a: usize, e: usize, sure: bool) -> Option<Value> {
        if a >= e {
            return None;
        }
        let v = eval(self.t, (a, e), &ExprRules::JS, self.asg);
        if sure || looks_like_url(&v) {
            Some(v)
        } else {
            None
        }
    }

    // -- pass 1: imports and bindings ----------------------------------------------------

    fn bindings_and_imports(&mut self) {
        let t = self.t;
        let n = t.len();
        let mut i = 0;
        while i < n {
            let dotted = i > 0 && (t.is(i - 1, ".") || t.is(i - 1, "?."));
            match t.ident(i) {
                Some("import") if !dotted => {
                    if t.is(i + 1, "(") {
                        if let Some(m) = t.str_value(i + 2) {
                            self.push_import(m.into_owned(), Vec::new(), None, i, false);
                        }
                    } else if !t.is(i + 1, ".") {
                        self.import_stmt(i);
                    }
                }
                Some("export") if !dotted => self.export_from(i),
                Some("require") if !dotted && t.is(i + 1, "(") => self.require(i),
                Some(_) if t.is(i + 1, ":") || (t.is(i + 1, "?") && t.is(i + 2, ":")) => {
                    self.typed_binding(i);
                }
                Some("new") => self.new_binding(i),
                Some("getService") if t.is(i + 1, "(") || t.is(i + 1, "<") => {
                    self.get_service(i);
                }
                Some("createPromiseClient" | "createClient" | "createCallbackClient")
                    if !dotted && t.is(i + 1, "(") =>
                {
                    // Connect-ES: `createClient(OrderService, transport)`.
                    if let Some(svc) = t
                        .ident(i + 2)
                        .filter(|s| s.starts_with(|c: char| c.is_ascii_uppercase()))
                        .filter(|_| t.is(i + 3, ",") || t.is(i + 3, ")"))
                    {
                        let var = self.assigned_name(i);
                        self.client_fact(svc, var, i);
                        if let Some(v) = var {
                            self.bind.insert(v, Bind::Grpc(svc.to_string()));
                        }
                    }
                }
                Some(m @ ("producer" | "consumer")) if dotted && t.is(i + 1, "(") => {
                    if let Some(c) = self.t.callee(i + 1)
                        && let Some(name) = self.assigned_name(c.start)
                    {
                        let b = if m == "producer" {
                            Bind::Producer
                        } else {
                            Bind::Consumer
                        };
                        self.bind.insert(name, b);
                    }
                }
                Some("create" | "extend") if dotted && t.is(i + 1, "(") => {
                    if let Some(c) = self.t.callee(i + 1)
                        && c.len == 2
                        && let Some(name) = self.assigned_name(c.start)
                    {
                        match c.first() {
                            "axios" | "got" | "ky" => {
                                self.bind.insert(name, Bind::Http);
                            }
                            "ClientProxyFactory" => {
                                self.bind.insert(name, Bind::Nest("ClientProxy"));
                            }
                            _ => {}
                        }
                    }
                }
                Some("Router") if t.is(i + 1, "(") => {
                    if let Some(c) = self.t.callee(i + 1)
                        && let Some(name) = self.assigned_name(c.start)
                    {
                        self.bind.entry(name).or_insert(Bind::Router(String::new()));
                    }
                }
                _ => {}
            }
            i += 1;
        }
        // `app.use('/orders', ordersRouter)` mounts a router of this file under a prefix.
        for i in 0..n {
            if !(t.is(i, "use") && t.is(i + 1, "(") && i > 0 && t.is(i - 1, ".")) {
                continue;
            }
            let args = t.args(i + 1);
            if args.len() < 2 {
                continue;
            }
            let (Some(prefix), Some(router)) = (t.str_value(args[0].0), t.ident(args[1].0)) else {
                continue;
            };
            if args[1].1 != args[1].0 + 1 || !prefix.starts_with('/') {
                continue;
            }
            if let Some(Bind::Router(p)) = self.bind.get_mut(router)
                && p.is_empty()
            {
                *p = prefix.into_owned();
            }
        }
    }

    fn push_import(
        &mut self,
        module: String,
        names: Vec<String>,
        alias: Option<String>,
        at: usize,
        reexport: bool,
    ) {
        for n in &names {
            self.imported.insert(n.clone());
        }
        let line = self.line(at);
        self.facts.imports.push(Import {
            module,
            names,
            alias,
            line,
            reexport,
        });
    }

    /// `{ a, b as c, type D, default as E }` at `open`: the imported (original) names.
    fn named_specifiers(&self, open: usize) -> Vec<String> {
        let t = self.t;
        let mut out = Vec::new();
        for (a, e) in t.args(open) {
            let mut k = a;
            if t.is(k, "type") && t.ident(k + 1).is_some() && !t.is(k + 1, "as") {
                k += 1;
            }
            if let Some(name) = t.ident(k).or_else(|| t.str_lit(k).map(|s| s.raw))
                && k < e
            {
                out.push(name.to_string());
            }
        }
        out
    }

    /// `import … from 'm'`, `import 'm'`, `import x = require('m')` at `i`.
    fn import_stmt(&mut self, i: usize) {
        let t = self.t;
        let mut k = i + 1;
        if let Some(m) = t.str_value(k) {
            self.push_import(m.into_owned(), Vec::new(), None, i, false);
            return;
        }
        if t.is(k, "type") && !t.is(k + 1, "from") && !t.is(k + 1, "=") && !t.is(k + 1, ",") {
            k += 1;
        }
        let mut names = Vec::new();
        let mut alias = None;
        let stop = (k + 64).min(t.len());
        while k < stop {
            if t.is(k, "from") {
                if let Some(m) = t.str_value(k + 1) {
                    self.push_import(m.into_owned(), names, alias, i, false);
                }
                return;
            }
            if t.is(k, "{") {
                names.extend(self.named_specifiers(k));
                k = t.skip_group(k);
                continue;
            }
            if t.is(k, "*") && t.is(k + 1, "as") {
                alias = t.ident(k + 2).map(str::to_string);
                k += 3;
                continue;
            }
            if t.is(k, "=") && t.is(k + 1, "require") && t.is(k + 2, "(") {
                if let Some(m) = t.str_value(k + 3) {
                    let alias = t.ident(k - 1).map(str::to_string);
                    self.push_import(m.into_owned(), Vec::new(), alias, i, false);
                }
                return;
            }
            if let Some(id) = t.ident(k) {
                if t.is(k + 1, "=") {
                    k += 1;
                    continue;
                }
                names.push(id.to_string());
                k += 1;
                continue;
            }
            if t.is(k, ",") {
                k += 1;
                continue;
            }
            return;
        }
    }

    /// `export * from 'm'`, `export * as ns from 'm'`, `export { a, b as c } from 'm'`.
    fn export_from(&mut self, i: usize) {
        let t = self.t;
        let mut k = i + 1;
        if t.is(k, "type") {
            k += 1;
        }
        let (names, alias, after) = if t.is(k, "*") {
            if t.is(k + 1, "as") {
                (Vec::new(), t.ident(k + 2).map(str::to_string), k + 3)
            } else {
                (Vec::new(), None, k + 1)
            }
        } else if t.is(k, "{") {
            (self.named_specifiers(k), None, t.skip_group(k))
        } else {
            return;
        };
        if t.is(after, "from")
            && let Some(m) = t.str_value(after + 1)
        {
            self.push_import(m.into_owned(), names, alias, i, true);
        }
    }

    /// `require('m')`, bound to `const x =` (alias) or `const { a, b: c } =` (names).
    fn require(&mut self, i: usize) {
        let t = self.t;
        let Some(m) = t.str_value(i + 2) else {
            return;
        };
        if i >= 3 && t.is(i - 3, "import") {
            // `import fs = require('fs')`: recorded by the import statement.
            return;
        }
        let mut names = Vec::new();
        let mut alias = None;
        if i >= 1 && t.is(i - 1, "=") && i >= 2 {
            if let Some(id) = t.ident(i - 2) {
                alias = Some(id.to_string());
            } else if t.is(i - 2, "}") {
                // Walk back to the destructuring `{`.
                let mut k = i - 2;
                let mut steps = 0;
                while k > 0 && !t.is(k, "{") && steps < 256 {
                    k -= 1;
                    steps += 1;
                }
                if t.is(k, "{") && t.close(k) == Some(i - 2) {
                    for (a, _) in t.args(k) {
                        if let Some(id) = t.ident(a) {
                            names.push(id.to_string());
                        }
                    }
                }
            }
        }
        self.push_import(m.into_owned(), names, alias, i, false);
    }

    /// `name: Type` (fields, parameters, variables): binds the name when the type says what
    /// it holds.
    fn typed_binding(&mut self, i: usize) {
        let t = self.t;
        let Some(name) = t.ident(i) else {
            return;
        };
        if matches!(name, "case" | "default" | "return") {
            return;
        }
        let mut k = if t.is(i + 1, "?") { i + 3 } else { i + 2 };
        // The last segment of a dotted type name.
        let Some(mut ty) = t.ident(k) else {
            return;
        };
        while t.is(k + 1, ".") && t.ident(k + 2).is_some() {
            k += 2;
            ty = t.text(k);
        }
        let bind = match ty {
            "ClientKafka" => Bind::Nest("ClientKafka"),
            "ClientProxy" => Bind::Nest("ClientProxy"),
            "HttpClient" | "HttpService" => Bind::Http,
            "Producer" => Bind::Producer,
            "Consumer" => Bind::Consumer,
            _ => match self.grpc_client_type(ty) {
                Some(svc) => {
                    // A typed field and the constructor parameter it is set from are one
                    // client: one fact per service for typed declarations.
                    if !self.has_client(&svc) {
                        self.client_fact(&svc, Some(name), i);
                    }
                    Bind::Grpc(svc)
                }
                None => return,
            },
        };
        self.bind.entry(name).or_insert(bind);
    }

    /// The service of a client type name when this file can hold gRPC clients of it: the
    /// name says so (`…ServiceClient`, ts-proto `…ClientImpl`) or the file refers to gRPC
    /// or protobuf modules. Keeps `new SocksClient(…)` and friends out.
    fn grpc_client_type(&self, ty: &str) -> Option<String> {
        let svc = client_type_service(ty)?;
        (self.grpc_hint || ty.ends_with("ClientImpl") || svc.ends_with("Service")).then_some(svc)
    }

    fn has_client(&self, service: &str) -> bool {
        self.facts
            .grpc
            .iter()
            .any(|g| matches!(g, GrpcFact::Client { service: s, .. } if s == service))
    }

    fn client_fact(&mut self, service: &str, var: Option<&str>, at: usize) {
        if let Some(v) = var
            && !self.client_vars.insert(v.to_string())
        {
            return;
        }
        let line = self.line(at);
        self.facts.grpc.push(GrpcFact::Client {
            service: service.to_string(),
            var: var.map(str::to_string),
            line,
        });
    }

    /// `new X(…)`: gRPC clients, NestJS clients, routers.
    fn new_binding(&mut self, i: usize) {
        let t = self.t;
        let mut k = i + 1;
        let mut segs: Vec<&'t str> = Vec::new();
        while let Some(id) = t.ident(k) {
            segs.push(id);
            if t.is(k + 1, ".") {
                k += 2;
            } else {
                k += 1;
                break;
            }
            if segs.len() > 6 {
                return;
            }
        }
        let Some(&last) = segs.last() else {
            return;
        };
        let k = self.t.skip_angles(k, t.len());
        if !t.is(k, "(") {
            return;
        }
        let var = self.assigned_name(i);
        let args = t.args(k);
        match last {
            "ClientKafka" => {
                if let Some(v) = var {
                    self.bind.insert(v, Bind::Nest("ClientKafka"));
                }
                return;
            }
            "Router" => {
                let prefix = args
                    .first()
                    .and_then(|&(a, _)| self.object_value(a, "prefix"))
                    .and_then(|v| t.str_value(v))
                    .map(|p| p.into_owned())
                    .unwrap_or_default();
                if let Some(v) = var {
                    self.bind.insert(v, Bind::Router(prefix));
                }
                return;
            }
            _ => {}
        }
        let creds = args.get(1).is_some_and(|&(a, e)| {
            (a..e).any(|j| {
                t.ident(j).is_some_and(|id| {
                    let l = id.to_ascii_lowercase();
                    l.contains("cred") || l.contains("insecure")
                })
            })
        });
        let service = if let Some(svc) = client_type_service(last) {
            // `new OrderServiceClient(addr, creds)`, `new OrderServiceClientImpl(rpc)`.
            (creds || self.grpc_client_type(last).is_some()).then_some(svc)
        } else if segs.len() >= 2 && last.starts_with(|c: char| c.is_ascii_uppercase()) {
            // `new pkg.orders.OrderService(addr, creds)`: a dynamic grpc-js client.
            (creds || (args.len() >= 2 && last.ends_with("Service"))).then(|| last.to_string())
        } else {
            None
        };
        if let Some(svc) = service {
            // `new proto.X(addr, creds).method(req, cb)`: a call on the client just built; the
            // name it is assigned to holds the call's result, not the client.
            if let Some(close) = t.close(k)
                && t.is(close + 1, ".")
                && let Some(method) = t.ident(close + 2)
                && t.is(close + 3, "(")
            {
                self.client_fact(&svc, None, i);
                let line = self.line(close + 2);
                self.facts.grpc.push(GrpcFact::Call {
                    service: Some(svc),
                    receiver: format!("new {last}(…)"),
                    method: method.to_string(),
                    line,
                });
                return;
            }
            self.client_fact(&svc, var, i);
            if let Some(v) = var {
                self.bind.insert(v, Bind::Grpc(svc));
            }
        } else if let (Some(v), [class]) = (var, segs.as_slice())
            && self
                .facts
                .imports
                .iter()
                .any(|imp| imp.module.starts_with('.') && imp.names.iter().any(|n| n == class))
        {
            self.bind
                .entry(v)
                .or_insert(Bind::Instance(class.to_string()));
        }
    }

    /// `this.client.getService<OrderServiceClient>('OrderService')`.
    fn get_service(&mut self, i: usize) {
        let t = self.t;
        let k = self.t.skip_angles(i + 1, t.len());
        if !t.is(k, "(") {
            return;
        }
        let from_arg = t.str_value(k + 1).map(|s| s.into_owned());
        let from_type = t
            .ident(i + 2)
            .filter(|_| t.is(i + 1, "<"))
            .and_then(client_type_service);
        let Some(svc) = from_arg.or(from_type) else {
            return;
        };
        let start = self.t.callee(k).map_or(i, |c| c.start);
        let var = self.assigned_name(start);
        self.client_fact(&svc, var, i);
        if let Some(v) = var {
            self.bind.insert(v, Bind::Grpc(svc));
        }
    }
}

// -- pass 2: declarations ------------------------------------------------------------------

impl<'t> Ex<'t, '_, '_> {
    fn declarations(&mut self) {
        let mut work = vec![Region {
            a: 0,
            b: self.t.len(),
            container: None,
            class: None,
        }];
        while let Some(r) = work.pop() {
            if r.class.is_some() {
                self.class_body(r);
            } else {
                self.statements(r, &mut work);
            }
        }
    }

    /// The line of the token closing the group at `open` (the file's last line if unclosed).
    fn close_line(&self, open: usize) -> u32 {
        match self.t.close(open) {
            Some(c) => self.line(c),
            None => self.t.lx.line_count(),
        }
    }

    fn statements(&mut self, r: Region, work: &mut Vec<Region>) {
        let t = self.t;
        let b = r.b;
        let container = r.container.as_deref();
        let mut i = r.a;
        while i < b {
            let (j, attr_line, decos) = self.decorators(i, b);
            i = j;
            if i >= b {
                break;
            }
            let start = i;
            let mut default = false;
            loop {
                match t.ident(i) {
                    Some("export")
                        if !(t.is(i + 1, "{")
                            || t.is(i + 1, "*")
                            || t.is(i + 1, "=")
                            || (t.is(i + 1, "type") && t.is(i + 2, "{"))) =>
                    {
                        i += 1
                    }
                    Some("default") if i > start => {
                        default = true;
                        i += 1;
                    }
                    Some("declare") if t.ident(i + 1).is_some() => i += 1,
                    Some("abstract") if t.is(i + 1, "class") => i += 1,
                    _ => break,
                }
            }
            let next = match t.ident(i) {
                Some("class") => self.class_decl(i, default, attr_line, &decos, container, work, b),
                Some("interface") if t.ident(i + 1).is_some() => {
                    self.interface_decl(i, attr_line, container, b)
                }
                Some("enum") if t.ident(i + 1).is_some() => {
                    self.enum_decl(i, attr_line, container, b)
                }
                Some("const") if t.is(i + 1, "enum") => {
                    self.enum_decl(i + 1, attr_line, container, b)
                }
                Some("type")
                    if t.ident(i + 1).is_some() && (t.is(i + 2, "=") || t.is(i + 2, "<")) =>
                {
                    self.type_alias(i, attr_line, container, b)
                }
                Some("function") => self.function_decl(i, default, attr_line, container, b),
                Some("async") if t.is(i + 1, "function") => {
                    self.function_decl(i + 1, default, attr_line, container, b)
                }
                Some("namespace" | "module")
                    if t.ident(i + 1).is_some() || t.str_lit(i + 1).is_some() =>
                {
                    self.module_decl(i, attr_line, container, work, b)
                }
                Some("global") if t.is(i + 1, "{") => {
                    let end = t.close(i + 1).unwrap_or(b);
                    work.push(Region {
                        a: i + 2,
                        b: end,
                        container: r.container.clone(),
                        class: None,
                    });
                    end + 1
                }
                Some(kw @ ("const" | "let" | "var"))
                    if t.ident(i + 1).is_some() || t.is_opener(i + 1) =>
                {
                    self.var_decl(i, kw == "const", attr_line, container, b)
                }
                Some("exports" | "module") => self.exports_assignment(i, attr_line, container, b),
                _ => self.stmt_next(i, b),
            };
            i = next.max(i + 1);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn class_decl(
        &mut self,
        kw: usize,
        default: bool,
        attr_line: Option<u32>,
        decos: &[Deco<'t>],
        container: Option<&str>,
        work: &mut Vec<Region>,
        b: usize,
    ) -> usize {
        let t = self.t;
        let name_idx = t
            .ident(kw + 1)
            .filter(|n| !matches!(*n, "extends" | "implements"))
            .map(|_| kw + 1);
        let name = match name_idx {
            Some(k) => t.text(k).to_string(),
            None if default => "default".to_string(),
            None => return self.stmt_next(kw, b),
        };
        let mut j = name_idx.map_or(kw + 1, |k| k + 1);
        let mut angle = 0usize;
        let mut in_implements = false;
        let mut body = None;
        while j < b {
            if t.is(j, "{") {
                if angle == 0 {
                    body = Some(j);
                    break;
                }
                j = t.skip_group(j);
                continue;
            }
            if t.is(j, ";") || t.is(j, "}") {
                break;
            }
            if t.is(j, "<") {
                angle += 1;
            } else if t.is(j, ">") {
                angle = angle.saturating_sub(1);
            } else if t.is(j, "implements") {
                in_implements = true;
            } else if t.is(j, "extends") {
                in_implements = false;
            } else if t.is(j, "(") || t.is(j, "[") {
                j = t.skip_group(j);
                continue;
            } else if in_implements
                && angle == 0
                && let Some(id) = t.ident(j)
                && !t.is(j + 1, ".")
            {
                self.implemented_server(id, &name, name_idx.unwrap_or(kw));
            }
            j += 1;
        }
        let name_tok = name_idx.unwrap_or(kw);
        let end_line = body.map_or(self.line(j.min(b).saturating_sub(1)), |o| {
            self.close_line(o)
        });
        self.facts.symbols.push(self.t.declaration(
            &name,
            SymbolKind::Class,
            name_tok,
            end_line,
            attr_line,
            container,
        ));
        let mut route_prefix = None;
        for d in decos {
            match d.name {
                "Controller" | "JsonController" | "Route" => {
                    route_prefix = Some(self.decorator_path(d).unwrap_or_default());
                }
                n if n.len() > "ControllerMethods".len() && n.ends_with("ControllerMethods") => {
                    // ts-proto's `@OrderServiceControllerMethods()` binds every method.
                    let service = n.trim_end_matches("ControllerMethods").to_string();
                    self.facts.grpc.push(GrpcFact::Server {
                        service,
                        impl_type: Some(name.clone()),
                        line: d.line,
                    });
                }
                _ => {}
            }
        }
        match body {
            Some(o) => {
                let end = t.close(o).unwrap_or(b);
                work.push(Region {
                    a: o + 1,
                    b: end,
                    container: Some(name.clone()),
                    class: Some(ClassCtx { name, route_prefix }),
                });
                end + 1
            }
            None => self.stmt_next(j.max(kw + 1), b),
        }
    }

    /// `implements IOrderServiceServer` (grpc-js static codegen) or `implements
    /// OrderServiceController` (ts-proto NestJS): the class serves that service.
    fn implemented_server(&mut self, iface: &str, class: &str, at: usize) {
        let stem = iface
            .strip_suffix("Server")
            .map(|s| match s.strip_prefix('I') {
                Some(rest) if rest.starts_with(|c: char| c.is_ascii_uppercase()) => rest,
                _ => s,
            })
            .or_else(|| iface.strip_suffix("Controller"));
        if let Some(stem) = stem
            && stem.len() > 1
            && stem.starts_with(|c: char| c.is_ascii_uppercase())
        {
            let line = self.line(at);
            self.facts.grpc.push(GrpcFact::Server {
                service: stem.to_string(),
                impl_type: Some(class.to_string()),
                line,
            });
        }
    }

    /// The path argument of a route decorator: `'orders'`, `['a', 'b']` (the first),
    /// `{ path: 'orders' }`; `None` when it has none.
    fn decorator_path(&self, d: &Deco) -> Option<String> {
        let t = self.t;
        let (a, _) = *t.args(d.open?).first()?;
        let at = if t.is(a, "[") {
            a + 1
        } else if t.is(a, "{") {
            self.object_value(a, "path")?
        } else {
            a
        };
        t.str_value(at).map(|s| s.into_owned())
    }

    fn interface_decl(
        &mut self,
        kw: usize,
        attr_line: Option<u32>,
        container: Option<&str>,
        b: usize,
    ) -> usize {
        let t = self.t;
        let name = t.text(kw + 1);
        let mut j = kw + 2;
        let mut angle = 0usize;
        while j < b {
            if t.is(j, "{") && angle == 0 {
                break;
            }
            if t.is(j, ";") || t.is(j, "}") {
                return self.stmt_next(kw, b);
            }
            if t.is(j, "<") {
                angle += 1;
            } else if t.is(j, ">") {
                angle = angle.saturating_sub(1);
            } else if t.is_opener(j) {
                j = t.skip_group(j);
                continue;
            }
            j += 1;
        }
        if j >= b {
            return b;
        }
        let end_line = self.close_line(j);
        self.facts.symbols.push(self.t.declaration(
            name,
            SymbolKind::Interface,
            kw + 1,
            end_line,
            attr_line,
            container,
        ));
        t.skip_group(j)
    }

    fn enum_decl(
        &mut self,
        kw: usize,
        attr_line: Option<u32>,
        container: Option<&str>,
        b: usize,
    ) -> usize {
        let t = self.t;
        let name = t.text(kw + 1);
        if !t.is(kw + 2, "{") {
            return self.stmt_next(kw, b);
        }
        let open = kw + 2;
        let end_line = self.close_line(open);
        self.facts.symbols.push(self.t.declaration(
            name,
            SymbolKind::Enum,
            kw + 1,
            end_line,
            attr_line,
            container,
        ));
        for (a, e) in t.args(open) {
            let Some(member) = t.ident(a).or_else(|| t.str_lit(a).map(|s| s.raw)) else {
                continue;
            };
            self.facts.symbols.push(self.t.declaration(
                member,
                SymbolKind::EnumValue,
                a,
                self.line(a),
                None,
                Some(name),
            ));
            if t.is(a + 1, "=")
                && e == a + 3
                && let Some(s) = t.str_lit(a + 2)
                && !s.raw.contains("${")
            {
                let qualified = format!("{name}.{member}");
                let line = self.line(a);
                self.push_constant(qualified, s.value().into_owned(), line);
            }
        }
        t.skip_group(open)
    }

    fn type_alias(
        &mut self,
        kw: usize,
        attr_line: Option<u32>,
        container: Option<&str>,
        b: usize,
    ) -> usize {
        let t = self.t;
        let name = t.text(kw + 1);
        let from = self.t.skip_angles(kw + 2, b);
        let e = self.expr_end(from.max(kw + 2), b, false);
        let end_line = self.last_line(e.saturating_sub(1).max(kw + 1));
        self.facts.symbols.push(self.t.declaration(
            name,
            SymbolKind::TypeAlias,
            kw + 1,
            end_line,
            attr_line,
            container,
        ));
        if t.is(e, ";") { e + 1 } else { e.max(kw + 2) }
    }

    fn function_decl(
        &mut self,
        kw: usize,
        default: bool,
        attr_line: Option<u32>,
        container: Option<&str>,
        b: usize,
    ) -> usize {
        let t = self.t;
        let mut k = kw + 1;
        if t.is(k, "*") {
            k += 1;
        }
        let (name, name_tok) = match t.ident(k) {
            Some(n) => {
                k += 1;
                (n, k - 1)
            }
            None if default => ("default", kw),
            None => return self.stmt_next(kw, b),
        };
        let k = self.t.skip_angles(k, b);
        if !t.is(k, "(") {
            return self.stmt_next(kw, b);
        }
        let pclose = t.close(k).unwrap_or(b);
        let (end_line, next) = match self.body_open_after(pclose + 1, b) {
            Some(o) => (self.close_line(o), t.skip_group(o)),
            None => {
                let e = self.expr_end(pclose + 1, b, false);
                (
                    self.last_line(e.saturating_sub(1).max(pclose.min(b))),
                    if t.is(e, ";") { e + 1 } else { e },
                )
            }
        };
        self.facts.symbols.push(self.t.declaration(
            name,
            SymbolKind::Function,
            name_tok,
            end_line,
            attr_line,
            container,
        ));
        next
    }

    fn module_decl(
        &mut self,
        kw: usize,
        attr_line: Option<u32>,
        container: Option<&str>,
        work: &mut Vec<Region>,
        b: usize,
    ) -> usize {
        let t = self.t;
        let mut k = kw + 1;
        let name = if let Some(s) = t.str_lit(k) {
            k += 1;
            s.raw.to_string()
        } else {
            let mut name = t.text(k).to_string();
            k += 1;
            while t.is(k, ".") && t.ident(k + 1).is_some() {
                name.push('.');
                name.push_str(t.text(k + 1));
                k += 2;
            }
            name
        };
        if !t.is(k, "{") {
            // `declare module 'x';` or `module.exports` lookalikes.
            return self.stmt_next(kw, b);
        }
        let end_line = self.close_line(k);
        self.facts.symbols.push(self.t.declaration(
            &name,
            SymbolKind::Module,
            kw + 1,
            end_line,
            attr_line,
            container,
        ));
        let end = t.close(k).unwrap_or(b);
        work.push(Region {
            a: k + 1,
            b: end,
            container: Some(name),
            class: None,
        });
        end + 1
    }

    /// The end line of a function value (`async (a) => …`, `function (…) {…}`, `x => x`)
    /// starting at `v` (before `e`), or `None` when the value is not a function.
    fn function_value(&self, v: usize, e: usize) -> Option<u32> {
        let t = self.t;
        let mut k = v;
        if t.is(k, "async") {
            k += 1;
        }
        if t.is(k, "function") {
            k += 1;
            if t.is(k, "*") {
                k += 1;
            }
            if t.ident(k).is_some() {
                k += 1;
            }
            let k = self.t.skip_angles(k, e);
            let pclose = t.close(k).filter(|_| t.is(k, "("))?;
            let o = self.body_open_after(pclose + 1, e.max(pclose + 2))?;
            return Some(self.close_line(o));
        }
        let k = self.t.skip_angles(k, e);
        let arrow = if t.is(k, "(") {
            let c = t.close(k)?;
            if t.is(c + 1, "=>") {
                c + 1
            } else if t.is(c + 1, ":") {
                t.find_at_depth0(c + 2, e, "=>")?
            } else {
                return None;
            }
        } else if t.ident(k).is_some() && t.is(k + 1, "=>") {
            k + 1
        } else {
            return None;
        };
        if t.is(arrow + 1, "{") {
            Some(self.close_line(arrow + 1))
        } else {
            Some(self.last_line(e.saturating_sub(1).max(arrow)))
        }
    }

    /// Past a type annotation starting at `from`: the first depth-0 `=`, `,`, `;` or closer,
    /// with `<…>` and groups skipped.
    fn type_end(&self, from: usize, b: usize) -> usize {
        let t = self.t;
        let mut j = from;
        let mut angle = 0usize;
        while j < b {
            if angle == 0
                && (t.is(j, "=") || t.is(j, ",") || t.is(j, ";") || t.is(j, ")") || t.is(j, "}"))
            {
                return j;
            }
            if angle == 0 && j > from && self.breaks(j - 1, j) {
                return j;
            }
            if t.is(j, "<") {
                angle += 1;
            } else if t.is(j, ">") {
                angle = angle.saturating_sub(1);
            } else if t.is_opener(j) {
                j = t.skip_group(j);
                continue;
            }
            j += 1;
        }
        b
    }

    /// The end of an initializer starting at `v`: like [`Self::expr_end`] with commas, but a
    /// leading `<T,>` and `Foo<A, B>(`/`Map<K, V>` type arguments do not split it.
    fn init_end(&self, v: usize, b: usize) -> usize {
        let t = self.t;
        let mut j = self.t.skip_angles(v, b).max(v);
        loop {
            let e = self.expr_end(j, b, true);
            if t.is(e, ",") && e > j {
                // A comma inside `<…>` after a name: find the `<` on the way.
                let mut k = j;
                let mut resumed = None;
                while k < e {
                    if t.is(k, "<") && k > v && t.ident(k - 1).is_some() {
                        let after = self.t.skip_angles(k, b);
                        if after > e {
                            resumed = Some(after);
                            break;
                        }
                    }
                    k = t.skip_group(k);
                }
                if let Some(r) = resumed {
                    j = r;
                    continue;
                }
            }
            return e;
        }
    }

    fn var_decl(
        &mut self,
        kw: usize,
        is_const: bool,
        attr_line: Option<u32>,
        container: Option<&str>,
        b: usize,
    ) -> usize {
        let t = self.t;
        let mut i = kw + 1;
        loop {
            if i >= b {
                return b;
            }
            if t.is(i, "{") || t.is(i, "[") {
                i = t.skip_group(i);
                if t.is(i, ":") {
                    i = self.type_end(i + 1, b);
                }
                if t.is(i, "=") {
                    i = self.init_end(i + 1, b);
                }
            } else if let Some(name) = t.ident(i) {
                let name_idx = i;
                i += 1;
                if t.is(i, "!") {
                    i += 1;
                }
                if t.is(i, ":") {
                    i = self.type_end(i + 1, b);
                }
                if t.is(i, "=") {
                    let v = i + 1;
                    let e = self.init_end(v, b);
                    self.binding(name, name_idx, is_const, v, e, attr_line, container);
                    i = e.max(v);
                } else {
                    let kind = if is_upper_const(name) && is_const {
                        SymbolKind::Constant
                    } else {
                        SymbolKind::Variable
                    };
                    let line = self.line(name_idx);
                    self.facts.symbols.push(
                        self.t
                            .declaration(name, kind, name_idx, line, attr_line, container),
                    );
                }
            } else {
                return self.stmt_next(i, b);
            }
            if t.is(i, ",") {
                i += 1;
                continue;
            }
            return if t.is(i, ";") { i + 1 } else { i };
        }
    }

    /// A `name = value` binding at module or namespace level: a function, a constant or a
    /// variable, plus the constant facts its literal value gives.
    #[allow(clippy::too_many_arguments)]
    fn binding(
        &mut self,
        name: &str,
        name_idx: usize,
        is_const: bool,
        v: usize,
        e: usize,
        attr_line: Option<u32>,
        container: Option<&str>,
    ) {
        let t = self.t;
        if let Some(end_line) = self.function_value(v, e) {
            self.facts.symbols.push(self.t.declaration(
                name,
                SymbolKind::Function,
                name_idx,
                end_line,
                attr_line,
                container,
            ));
            return;
        }
        let mut w = v;
        if t.is(w, "await") {
            w += 1;
        }
        if (t.is(w, "require") || t.is(w, "import")) && t.is(w + 1, "(") {
            return;
        }
        let end_line = self.last_line(e.saturating_sub(1).max(v));
        if t.is(v, "class") {
            self.facts.symbols.push(self.t.declaration(
                name,
                SymbolKind::Class,
                name_idx,
                end_line,
                attr_line,
                container,
            ));
            return;
        }
        let qualified = |n: &str| match container {
            Some(c) => format!("{c}.{n}"),
            None => n.to_string(),
        };
        // `x`, `x as const`: the value's last token.
        let single = e == v + 1 || (e == v + 3 && t.is(v + 1, "as") && t.is(v + 2, "const"));
        let plain_str = t
            .str_lit(v)
            .filter(|s| single && !(t.text(v).starts_with('`') && s.raw.contains("${")));
        let literal = plain_str.is_some()
            || (single
                && (t.kind(v) == Some(TokKind::Num)
                    || t.is(v, "true")
                    || t.is(v, "false")
                    || t.is(v, "null")))
            || (t.is(v, "-") && t.kind(v + 1) == Some(TokKind::Num))
            || ((t.is(v, "{") || t.is(v, "["))
                && t.close(v)
                    .is_some_and(|c| c + 1 == e || (c + 3 == e && t.is(c + 2, "const"))));
        let mut env_default = false;
        if is_const {
            if let Some(s) = plain_str {
                let line = self.line(v);
                self.push_constant(qualified(name), s.value().into_owned(), line);
            } else if let Some(d) = self.env_lookup(v, e).and_then(|v| v.env_default()) {
                env_default = true;
                let line = self.line(v);
                self.push_constant(qualified(name), d, line);
            } else {
                // `{ … } as const`, `Object.freeze({ … })`.
                let open = if t.is(v, "{") {
                    Some(v)
                } else if t.is(v, "Object") && t.is(v + 2, "freeze") && t.is(v + 4, "{") {
                    Some(v + 4)
                } else {
                    None
                };
                if let Some(o) = open {
                    self.object_constants(o, qualified(name));
                }
            }
        }
        let kind = if is_upper_const(name) || (is_const && (literal || env_default)) {
            SymbolKind::Constant
        } else {
            SymbolKind::Variable
        };
        self.facts.symbols.push(
            self.t
                .declaration(name, kind, name_idx, end_line, attr_line, container),
        );
    }

    /// Constant facts for the string members of an object literal, nested objects included
    /// (`Topics.orders.CREATED`), on an explicit stack.
    fn object_constants(&mut self, open: usize, prefix: String) {
        let t = self.t;
        let mut stack = vec![(open, prefix)];
        while let Some((o, p)) = stack.pop() {
            for (a, e) in t.args(o) {
                let Some(key) = t.ident(a).or_else(|| t.str_lit(a).map(|s| s.raw)) else {
                    continue;
                };
                if !t.is(a + 1, ":") {
                    continue;
                }
                let val = a + 2;
                if let Some(s) = t.str_lit(val)
                    && (e == val + 1 || (e == val + 3 && t.is(val + 1, "as")))
                    && !(t.text(val).starts_with('`') && s.raw.contains("${"))
                {
                    let line = self.line(val);
                    self.push_constant(format!("{p}.{key}"), s.value().into_owned(), line);
                } else if t.is(val, "{") && stack.len() < 8 {
                    stack.push((val, format!("{p}.{key}")));
                }
            }
        }
    }

    /// `exports.f = function …` / `module.exports.f = (…) => …`: a function named `f`.
    fn exports_assignment(
        &mut self,
        i: usize,
        attr_line: Option<u32>,
        container: Option<&str>,
        b: usize,
    ) -> usize {
        let t = self.t;
        let k = if t.is(i, "module") && t.is(i + 1, ".") && t.is(i + 2, "exports") {
            i + 3
        } else if t.is(i, "exports") {
            i + 1
        } else {
            return self.stmt_next(i, b);
        };
        if t.is(k, ".")
            && let Some(name) = t.ident(k + 1)
            && t.is(k + 2, "=")
        {
            let v = k + 3;
            let e = self.init_end(v, b);
            if let Some(end_line) = self.function_value(v, e) {
                self.facts.symbols.push(self.t.declaration(
                    name,
                    SymbolKind::Function,
                    k + 1,
                    end_line,
                    attr_line,
                    container,
                ));
            }
        }
        self.stmt_next(i, b)
    }

    /// True when the modifier-like word at `i` is used as a modifier (a member name follows).
    fn is_modifier(&self, i: usize) -> bool {
        let t = self.t;
        t.line(i + 1) == t.line(i)
            && (t.ident(i + 1).is_some()
                || t.is(i + 1, "*")
                || t.is(i + 1, "#")
                || t.is(i + 1, "[")
                || t.str_lit(i + 1).is_some())
    }

    fn class_body(&mut self, r: Region) {
        let t = self.t;
        let b = r.b;
        let Some(ctx) = r.class else {
            return;
        };
        let cname = ctx.name.clone();
        let mut i = r.a;
        while i < b {
            let (j, attr_line, decos) = self.decorators(i, b);
            i = j;
            if i >= b {
                break;
            }
            if t.is(i, ";") || t.is(i, ",") {
                i += 1;
                continue;
            }
            if t.is(i, "static") && t.is(i + 1, "{") {
                i = t.skip_group(i + 1);
                continue;
            }
            let mut is_static = false;
            let mut is_readonly = false;
            while let Some(
                m @ ("public" | "private" | "protected" | "static" | "readonly" | "abstract"
                | "async" | "override" | "declare" | "accessor" | "get" | "set"),
            ) = t.ident(i)
            {
                if !self.is_modifier(i) {
                    break;
                }
                is_static |= m == "static";
                is_readonly |= m == "readonly";
                i += 1;
            }
            if t.is(i, "*") {
                i += 1;
            }
            if t.is(i, "#") {
                i += 1;
            }
            let name_idx = i;
            let name: Option<&'t str> = t.ident(i).or_else(|| t.str_lit(i).map(|s| s.raw));
            if t.is(i, "[") {
                i = t.skip_group(i);
            } else if name.is_some() || t.kind(i) == Some(TokKind::Num) {
                i += 1;
            } else {
                i = self.stmt_next(i, b);
                continue;
            }
            if t.is(i, "?") || t.is(i, "!") {
                i += 1;
            }
            i = self.t.skip_angles(i, b);
            if t.is(i, "(") {
                let pclose = t.close(i).unwrap_or(b);
                let (end_line, next) = match self.body_open_after(pclose + 1, b) {
                    Some(o) => (self.close_line(o), t.skip_group(o)),
                    None => {
                        let e = self.expr_end(pclose + 1, b, false);
                        (
                            self.last_line(e.saturating_sub(1).max(pclose.min(b))),
                            if t.is(e, ";") { e + 1 } else { e },
                        )
                    }
                };
                if let Some(name) = name {
                    let kind = if name == "constructor" {
                        SymbolKind::Constructor
                    } else {
                        SymbolKind::Method
                    };
                    self.facts.symbols.push(self.t.declaration(
                        name,
                        kind,
                        name_idx,
                        end_line,
                        attr_line,
                        Some(&cname),
                    ));
                    self.member_decorators(&decos, name, name_idx, &ctx);
                }
                i = next.max(name_idx + 1);
                continue;
            }
            let e = self.expr_end(i, b, false);
            if let Some(name) = name {
                let eq = if t.is(i, "=") {
                    Some(i)
                } else {
                    t.find_at_depth0(i, e, "=")
                };
                if let Some(eq) = eq {
                    let v = eq + 1;
                    if let Some(end_line) = self.function_value(v, e) {
                        self.facts.symbols.push(self.t.declaration(
                            name,
                            SymbolKind::Method,
                            name_idx,
                            end_line,
                            attr_line,
                            Some(&cname),
                        ));
                        self.member_decorators(&decos, name, name_idx, &ctx);
                    } else if (is_static || is_readonly)
                        && let Some(s) = t.str_lit(v)
                        && (e == v + 1 || (e == v + 3 && t.is(v + 1, "as")))
                        && !(t.text(v).starts_with('`') && s.raw.contains("${"))
                    {
                        let line = self.line(v);
                        self.push_constant(format!("{cname}.{name}"), s.value().into_owned(), line);
                    }
                }
            }
            i = (if t.is(e, ";") { e + 1 } else { e }).max(name_idx + 1);
        }
    }

    /// A decorator argument naming a service or method: a literal, a file constant, or the
    /// last segment of a reference (`Services.Orders` gives `Orders`).
    fn name_arg(&self, a: usize, e: usize) -> Option<String> {
        let t = self.t;
        if let Some(s) = t.str_value(a) {
            return Some(s.into_owned());
        }
        t.ident(a)?;
        let mut full = String::new();
        let mut k = a;
        while k < e {
            if let Some(id) = t.ident(k) {
                full.push_str(id);
            } else if t.is(k, ".") {
                full.push('.');
            } else {
                break;
            }
            k += 1;
        }
        if let Some(v) = self.consts.get(&full) {
            return Some(v.clone());
        }
        full.rsplit('.').next().map(str::to_string)
    }

    /// NestJS member decorators: gRPC handlers, event consumers and routes.
    fn member_decorators(&mut self, decos: &[Deco], method: &str, name_idx: usize, ctx: &ClassCtx) {
        let t = self.t;
        for d in decos {
            match d.name {
                "GrpcMethod" | "GrpcStreamMethod" | "GrpcStreamCall" => {
                    let args = d.open.map(|o| t.args(o)).unwrap_or_default();
                    let service = args
                        .first()
                        .and_then(|&(a, e)| self.name_arg(a, e))
                        .unwrap_or_else(|| ctx.name.clone());
                    let method = args
                        .get(1)
                        .and_then(|&(a, e)| self.name_arg(a, e))
                        .unwrap_or_else(|| upper_first(method));
                    let line = self.line(name_idx);
                    self.facts.grpc.push(GrpcFact::Handler {
                        service,
                        method,
                        line,
                    });
                }
                via @ ("EventPattern" | "MessagePattern") => {
                    let Some(&(a, e)) = d.open.and_then(|o| t.args(o).first().copied()).as_ref()
                    else {
                        continue;
                    };
                    let exprs: Vec<(usize, usize)> = if t.is(a, "[") {
                        t.args(a)
                    } else {
                        vec![(a, e)]
                    };
                    for (x, y) in exprs {
                        if let Some(topic) = self.topic_expr(x, y) {
                            self.facts.events.push(EventFact {
                                role: EventRole::Consumer,
                                topic,
                                via: format!("@{via}"),
                                line: d.line,
                            });
                        }
                    }
                }
                verb @ ("Get" | "Post" | "Put" | "Delete" | "Patch" | "Options" | "Head"
                | "All") => {
                    let sub = self.decorator_path(d).unwrap_or_default();
                    let prefix = ctx.route_prefix.as_deref().unwrap_or("");
                    let http_method = if verb == "All" {
                        "ANY".to_string()
                    } else {
                        verb.to_ascii_uppercase()
                    };
                    self.facts.http.push(HttpFact::Route {
                        method: http_method,
                        path: join_route(prefix, &sub),
                        handler: Some(method.to_string()),
                        line: d.line,
                    });
                }
                _ => {}
            }
        }
    }
}

// -- pass 3: uses (calls) ------------------------------------------------------------------

impl<'t> Ex<'t, '_, '_> {
    fn uses(&mut self) {
        let t = self.t;
        for p in 0..t.len() {
            if t.is(p, "(")
                && let Some(c) = self.t.callee(p)
            {
                self.call(&c, p);
            }
        }
    }

    fn call(&mut self, c: &Chain<'t>, p: usize) {
        let last = c.last();
        let recv = c.receiver();
        if !c.after_call {
            match (c.len, c.first(), last) {
                (1, _, "fetch") | (2, "window" | "globalThis", "fetch") => {
                    return self.fetch_call(p);
                }
                (1, "axios" | "got" | "ky" | "superagent" | "$http" | "request" | "needle", _) => {
                    return self.http_call(p, None, true, true);
                }
                (
                    2,
                    "axios" | "got" | "ky" | "superagent" | "$http" | "request" | "needle",
                    verb,
                ) if VERBS.contains(&verb) => {
                    return self.http_call(p, Some(verb), false, true);
                }
                (2, "axios", "request") => return self.http_call(p, None, true, true),
                // An HTTP library imported under another name (OpenAPI Generator's
                // `import localVarRequest from 'request'`).
                (1, name, _)
                    if self.facts.imports.iter().any(|i| {
                        matches!(
                            i.module.as_str(),
                            "axios" | "got" | "ky" | "superagent" | "request" | "needle"
                        ) && (i.alias.as_deref() == Some(name) || i.names.iter().any(|n| n == name))
                    }) =>
                {
                    return self.http_call(p, None, true, true);
                }
                // Nest's `SwaggerModule.setup('api', app, doc)` serves the API docs at `/api`.
                (2, "SwaggerModule", "setup") => {
                    if let Some(&(a, e)) = self.t.args(p).first()
                        && let Some(path) = self.t.str_value(a).filter(|_| e == a + 1)
                    {
                        let line = self.line(p);
                        self.facts.http.push(HttpFact::Route {
                            method: "GET".into(),
                            path: join_route("/", &path),
                            handler: Some("SwaggerModule.setup".into()),
                            line,
                        });
                    }
                    return;
                }
                _ => {}
            }
        }
        let bound = recv.and_then(|r| self.bind.get(r)).cloned();
        if let Some(r) = recv {
            match &bound {
                Some(Bind::Http) if VERBS.contains(&last) || last == "request" => {
                    return self.http_call(p, VERBS.contains(&last).then_some(last), true, true);
                }
                // A call without arguments is a getter on a message (`res.getOffersList()`):
                // every client method takes a request.
                Some(Bind::Grpc(svc))
                    if !CLIENT_PLUMBING.contains(&last) && self.t.close(p) != Some(p + 1) =>
                {
                    let line = self.line(p);
                    self.facts.grpc.push(GrpcFact::Call {
                        service: Some(svc.clone()),
                        receiver: r.to_string(),
                        method: last.to_string(),
                        line,
                    });
                    return;
                }
                Some(Bind::Nest(via)) if matches!(last, "emit" | "send") => {
                    let via = *via;
                    return self.nest_emit(p, via);
                }
                // `this.ordersApi.createOrder(…)`: an HTTP call when `OrdersApi.createOrder` is
                // a generated client's method that makes one (the graph decides).
                Some(Bind::Instance(class)) if !c.after_call => {
                    let line = self.line(p);
                    self.facts.http.push(HttpFact::Call {
                        method: None,
                        url: Value::reference(format!("{class}.{last}()")),
                        line,
                    });
                    return;
                }
                _ => {}
            }
            let lower = r.to_ascii_lowercase();
            if matches!(last, "send" | "sendBatch")
                && (bound == Some(Bind::Producer) || lower.contains("producer"))
            {
                return self.kafka_topics(p, EventRole::Producer);
            }
            if last == "subscribe" && (bound == Some(Bind::Consumer) || lower.contains("consumer"))
            {
                return self.kafka_topics(p, EventRole::Consumer);
            }
        }
        // amqplib: `channel.publish(exchange, key, content)` sends to the routing key (the
        // exchange when the key is empty), `sendToQueue(queue, …)` to the queue,
        // `consume(queue, cb)` consumes it — on a receiver named like a channel.
        if let Some(r) = recv
            && matches!(last, "publish" | "sendToQueue" | "consume")
            && is_amqp_channel(r)
        {
            let args = self.t.args(p);
            let (role, pick) = match (last, args.as_slice()) {
                ("publish", [ex, key, ..]) => {
                    let k = eval(self.t, *key, &ExprRules::JS, self.asg);
                    (
                        EventRole::Producer,
                        if k.as_lit() == Some("") { *ex } else { *key },
                    )
                }
                ("sendToQueue", [q, ..]) => (EventRole::Producer, *q),
                ("consume", [q, ..]) => (EventRole::Consumer, *q),
                _ => return,
            };
            if let Some(topic) = self.topic_expr(pick.0, pick.1) {
                let line = self.line(p);
                self.facts.events.push(EventFact {
                    role,
                    topic,
                    via: "amqplib".to_string(),
                    line,
                });
            }
            return;
        }
        match last {
            "addService" if recv.is_some() => self.add_service(p),
            "route" if recv.is_some() && !c.after_call => self.route_chain(c, p, bound.as_ref()),
            verb if VERBS.contains(&verb) && !c.after_call => {
                if let Some(r) = recv
                    && !self.maybe_route(r, verb, p, bound.as_ref())
                    && HTTP_CLIENT_NAMES.contains(&r)
                {
                    self.http_call(p, Some(verb), false, true);
                }
            }
            _ => {}
        }
    }

    fn http_method_of(verb: &str) -> String {
        match verb {
            "del" => "DELETE".to_string(),
            "all" => "ANY".to_string(),
            v => v.to_ascii_uppercase(),
        }
    }

    /// `fetch(url, { method })`: GET unless the options say otherwise.
    fn fetch_call(&mut self, p: usize) {
        let t = self.t;
        let args = t.args(p);
        let Some(&(a, e)) = args.first() else {
            return;
        };
        let Some(url) = self.url_in(a, e, true) else {
            return;
        };
        let method = match args.get(1) {
            Some(&(oa, _)) if t.is(oa, "{") => match self.object_value(oa, "method") {
                Some(v) => t.str_value(v).map(|m| m.to_ascii_uppercase()),
                None => Some("GET".to_string()),
            },
            Some(_) => None,
            None => Some("GET".to_string()),
        };
        let line = self.line(p);
        self.facts.http.push(HttpFact::Call { method, url, line });
    }

    /// An HTTP client call: `verb` from the method name; `config` when the first argument may
    /// be a `{ url, method }` object (axios, got, ky, `request`).
    fn http_call(&mut self, p: usize, verb: Option<&str>, config: bool, sure: bool) {
        let t = self.t;
        let args = t.args(p);
        let Some(&(a, e)) = args.first() else {
            return;
        };
        // The options object inline, or held in a variable (`request(localVarRequestOptions,
        // cb)` with `const localVarRequestOptions = { method: 'POST', uri: … }`).
        let a = match t.ident(a) {
            Some(name) if config && e == a + 1 => self
                .asg
                .last(name, a)
                .map(|x| x.rhs.0)
                .filter(|&o| t.is(o, "{"))
                .unwrap_or(a),
            _ => a,
        };
        let (path, method) = if config && t.is(a, "{") {
            let Some(u) = self
                .object_value(a, "url")
                .or_else(|| self.object_value(a, "uri"))
            else {
                return;
            };
            let end = t.close(a).unwrap_or(t.len());
            let path = self.url_in(u, self.expr_end(u, end, true), sure);
            let method = match self.object_value(a, "method") {
                Some(m) => t.str_value(m).map(|m| m.to_ascii_uppercase()),
                None => Some("GET".to_string()),
            };
            (path, method)
        } else {
            let method = match verb {
                Some(v) => Some(Self::http_method_of(v)),
                None => match args.get(1) {
                    Some(&(oa, _)) if t.is(oa, "{") => match self.object_value(oa, "method") {
                        Some(m) => t.str_value(m).map(|m| m.to_ascii_uppercase()),
                        None => Some("GET".to_string()),
                    },
                    Some(_) => None,
                    None => Some("GET".to_string()),
                },
            };
            (self.url_in(a, e, sure), method)
        };
        if let Some(url) = path {
            let line = self.line(p);
            self.facts.http.push(HttpFact::Call { method, url, line });
        }
    }

    /// `this.client.emit('topic', data)` / `.send('topic', data)` on a NestJS client.
    fn nest_emit(&mut self, p: usize, via: &str) {
        let t = self.t;
        let Some(&(a, e)) = t.args(p).first() else {
            return;
        };
        if t.is(a, "{") {
            return;
        }
        if let Some(topic) = self.topic_expr(a, e) {
            let line = self.line(p);
            self.facts.events.push(EventFact {
                role: EventRole::Producer,
                topic,
                via: via.to_string(),
                line,
            });
        }
    }

    /// kafkajs `producer.send({ topic, messages })`, `sendBatch({ topicMessages: [{ topic }] })`,
    /// `consumer.subscribe({ topic })` / `({ topics: [a, b] })`.
    fn kafka_topics(&mut self, p: usize, role: EventRole) {
        let t = self.t;
        let Some(&(a, _)) = t.args(p).first() else {
            return;
        };
        if !t.is(a, "{") {
            return;
        }
        // The object's own entries, and the objects of a `topicMessages: [...]` array: depth-0
        // entries only, so nested calls never rescan each other's arguments.
        let mut objects = vec![a];
        while let Some(o) = objects.pop() {
            for (x, y) in t.args(o) {
                let key = t.ident(x).or_else(|| t.str_lit(x).map(|s| s.raw));
                let mut found: Vec<(Value, u32)> = Vec::new();
                match key {
                    Some("topic" | "topics") if t.is(x + 1, ":") => {
                        let v = x + 2;
                        if t.is(v, "[") {
                            for (ex, ey) in t.args(v) {
                                if let Some(te) = self.topic_expr(ex, ey) {
                                    found.push((te, self.line(ex)));
                                }
                            }
                        } else if let Some(te) = self.topic_expr(v, y) {
                            found.push((te, self.line(x)));
                        }
                    }
                    // Shorthand `{ topic }`: only a reference worth recording.
                    Some("topic") if y == x + 1 => {
                        if let Some(te) = self.topic_expr(x, y) {
                            found.push((te, self.line(x)));
                        }
                    }
                    Some("topicMessages") if t.is(x + 1, ":") && t.is(x + 2, "[") => {
                        for (ex, _) in t.args(x + 2) {
                            if t.is(ex, "{") && objects.len() < 64 {
                                objects.push(ex);
                            }
                        }
                    }
                    _ => {}
                }
                for (topic, line) in found {
                    self.facts.events.push(EventFact {
                        role,
                        topic,
                        via: "kafkajs".to_string(),
                        line,
                    });
                }
            }
        }
    }

    /// `server.addService(proto.orders.OrderService.service, { createOrder: h, getOrder })`.
    fn add_service(&mut self, p: usize) {
        let t = self.t;
        let args = t.args(p);
        if args.len() < 2 {
            return;
        }
        let (a, e) = args[0];
        let mut segs: Vec<&str> = Vec::new();
        let mut k = a;
        while k < e {
            if let Some(id) = t.ident(k) {
                segs.push(id);
            } else if !t.is(k, ".") {
                return;
            }
            k += 1;
        }
        let service = match segs.as_slice() {
            [.., svc, "service"] => svc.to_string(),
            [.., last] => service_of_definition(last),
            [] => return,
        };
        let (ha, _) = args[1];
        let impl_type = if t.is(ha, "new") {
            let mut k = ha + 1;
            let mut last = None;
            while let Some(id) = t.ident(k) {
                last = Some(id);
                if !t.is(k + 1, ".") {
                    break;
                }
                k += 2;
            }
            last.map(str::to_string)
        } else {
            None
        };
        let line = self.line(p);
        self.facts.grpc.push(GrpcFact::Server {
            service: service.clone(),
            impl_type,
            line,
        });
        if t.is(ha, "{") {
            for (ka, ke) in t.args(ha) {
                let mut k = ka;
                if matches!(t.ident(k), Some("async" | "get" | "set"))
                    && (t.ident(k + 1).is_some() || t.is(k + 1, "*"))
                {
                    k += 1;
                }
                if t.is(k, "*") {
                    k += 1;
                }
                if k >= ke {
                    continue;
                }
                let Some(method) = t.ident(k).or_else(|| t.str_lit(k).map(|s| s.raw)) else {
                    continue;
                };
                let line = self.line(k);
                self.facts.grpc.push(GrpcFact::Handler {
                    service: service.clone(),
                    method: method.to_string(),
                    line,
                });
            }
        }
    }

    /// True when the argument range is a function literal (`async (req) => …`, `function`,
    /// `req => …`).
    fn is_function_arg(&self, a: usize, e: usize) -> bool {
        self.function_value(a, e).is_some()
    }

    /// The dotted name filling exactly `a..e` (`handler`, `ctrl.create`), if it is one.
    fn name_ref(&self, a: usize, e: usize) -> Option<String> {
        let t = self.t;
        let mut out = String::new();
        let mut k = a;
        while k < e {
            if let Some(id) = t.ident(k) {
                out.push_str(id);
            } else if t.is(k, ".") && !out.is_empty() {
                out.push('.');
            } else {
                return None;
            }
            k += 1;
        }
        (!out.is_empty() && !out.ends_with('.')).then_some(out)
    }

    fn routerish(name: &str, bound: Option<&Bind>) -> bool {
        if matches!(bound, Some(Bind::Router(_))) {
            return true;
        }
        let l = name.to_ascii_lowercase();
        l.contains("app")
            || l.contains("router")
            || l.contains("server")
            || l.contains("route")
            || l == "r"
            || l == "fastify"
            || l == "instance"
    }

    /// `app.get('/x', h)`, `router.post('/x', auth, async (req, res) => …)`: a route when a
    /// handler follows the path and the receiver is not an HTTP client. Returns whether it
    /// recorded one.
    fn maybe_route(&mut self, recv: &str, verb: &str, p: usize, bound: Option<&Bind>) -> bool {
        let t = self.t;
        if HTTP_CLIENT_NAMES.contains(&recv) || matches!(bound, Some(Bind::Http)) {
            return false;
        }
        let args = t.args(p);
        if args.len() < 2 {
            return false;
        }
        let (a, e) = args[0];
        let Some(path) = t.str_value(a).filter(|_| e == a + 1) else {
            return false;
        };
        if !path.starts_with('/') || t.text(a).starts_with('`') {
            return false;
        }
        let (la, le) = args[args.len() - 1];
        let handler = self.name_ref(la, le);
        let ok =
            self.is_function_arg(la, le) || (handler.is_some() && Self::routerish(recv, bound));
        if !ok {
            return false;
        }
        let path = match bound {
            Some(Bind::Router(prefix)) if !prefix.is_empty() => join_route(prefix, &path),
            _ => path.into_owned(),
        };
        let line = self.line(p);
        self.facts.http.push(HttpFact::Route {
            method: Self::http_method_of(verb),
            path,
            handler,
            line,
        });
        true
    }

    /// `app.route('/x').get(h).post(h2)` and Fastify `fastify.route({ method, url, handler })`.
    fn route_chain(&mut self, c: &Chain<'t>, p: usize, bound: Option<&Bind>) {
        let t = self.t;
        let args = t.args(p);
        let Some(&(a, e)) = args.first() else {
            return;
        };
        let prefix = match bound {
            Some(Bind::Router(prefix)) => prefix.as_str(),
            _ => "",
        };
        if let Some(path) = t.str_value(a).filter(|v| e == a + 1 && v.starts_with('/')) {
            let path = if prefix.is_empty() {
                path.into_owned()
            } else {
                join_route(prefix, &path)
            };
            let mut j = t.skip_group(p);
            while t.is(j, ".")
                && let Some(verb) = t.ident(j + 1)
                && VERBS.contains(&verb)
                && t.is(j + 2, "(")
            {
                let o = j + 2;
                let handler = t.args(o).last().and_then(|&(ha, he)| self.name_ref(ha, he));
                let line = self.line(o);
                self.facts.http.push(HttpFact::Route {
                    method: Self::http_method_of(verb),
                    path: path.clone(),
                    handler,
                    line,
                });
                j = t.skip_group(o);
            }
            return;
        }
        if t.is(a, "{") && Self::routerish(c.receiver().unwrap_or(""), bound) {
            let Some(url) = self
                .object_value(a, "url")
                .or_else(|| self.object_value(a, "path"))
                .and_then(|u| t.str_value(u))
            else {
                return;
            };
            let url = if prefix.is_empty() {
                url.into_owned()
            } else {
                join_route(prefix, &url)
            };
            let handler = self.object_value(a, "handler").and_then(|h| {
                let end = t.close(a).unwrap_or(t.len());
                let he = self.expr_end(h, end, true);
                self.name_ref(h, he)
            });
            let methods: Vec<String> = match self.object_value(a, "method") {
                Some(m) if t.is(m, "[") => t
                    .args(m)
                    .iter()
                    .filter_map(|&(x, _)| t.str_value(x).map(|v| v.to_ascii_uppercase()))
                    .collect(),
                Some(m) => t
                    .str_value(m)
                    .map(|v| vec![v.to_ascii_uppercase()])
                    .unwrap_or_default(),
                None => Vec::new(),
            };
            let line = self.line(p);
            for method in methods {
                self.facts.http.push(HttpFact::Route {
                    method,
                    path: url.clone(),
                    handler: handler.clone(),
                    line,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::facts::Part;

    fn sym<'f>(f: &'f FileFacts, name: &str) -> &'f crate::index::facts::Symbol {
        f.symbols
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no symbol {name} in {:#?}", f.symbols))
    }

    fn has_sym(f: &FileFacts, name: &str) -> bool {
        f.symbols.iter().any(|s| s.name == name)
    }

    fn constant<'f>(f: &'f FileFacts, name: &str) -> Option<&'f str> {
        f.bindings
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.value.as_lit().unwrap_or("?"))
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

    fn calls(f: &FileFacts) -> Vec<(Option<String>, String, u32)> {
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

    fn events(f: &FileFacts) -> Vec<(EventRole, Value, String, u32)> {
        f.events
            .iter()
            .map(|e| (e.role, e.topic.clone(), e.via.clone(), e.line))
            .collect()
    }

    fn lit(s: &str) -> Value {
        Value::lit(s.to_string())
    }

    fn reference(s: &str) -> Value {
        Value::reference(s.to_string())
    }

    const CLASSES: &str = r#"/**
 * Handles orders.
 */
@Injectable()
@Scope({ durable: true })
export abstract class OrderService<T extends { id: string }>
    extends Base<T>
    implements Repo<T> {
  private readonly cache = new Map<string, T>();
  static readonly TOPIC = 'order.static';
  #secret = 1;

  constructor(private readonly repo: Repo<T>) {
    super();
  }

  /** Creates one. */
  async create(
    req: CreateOrderRequest,
    opts?: { dryRun: boolean },
  ): Promise<{ id: string }> {
    return { id: '1' };
  }

  get size(): number { return this.cache.size; }
  static *ids(): Generator<string> { yield 'a'; }
  abstract validate(x: T): boolean;
  onEvent = async (e: Event) => {
    this.log(e);
  };

  class Nested {}
}

export class Outer {
  inner = class {
    deep() {}
  };
  method() {
    class Local { local() {} }
  }
}
"#;

    #[test]
    fn classes_methods_and_containers() {
        let f = extract("src/order.service.ts", CLASSES);
        let c = sym(&f, "OrderService");
        assert_eq!(c.kind, SymbolKind::Class);
        assert_eq!((c.line, c.end_line, c.doc_line), (6, 33, Some(1)));
        let ctor = sym(&f, "constructor");
        assert_eq!(ctor.kind, SymbolKind::Constructor);
        assert_eq!((ctor.line, ctor.end_line), (13, 15));
        assert_eq!(ctor.container.as_deref(), Some("OrderService"));
        let create = sym(&f, "create");
        assert_eq!(create.kind, SymbolKind::Method);
        assert_eq!(
            (create.line, create.end_line, create.doc_line),
            (18, 23, Some(17))
        );
        assert_eq!(sym(&f, "size").kind, SymbolKind::Method);
        assert_eq!(sym(&f, "ids").line, 26);
        let validate = sym(&f, "validate");
        assert_eq!((validate.line, validate.end_line), (27, 27));
        let on_event = sym(&f, "onEvent");
        assert_eq!((on_event.kind, on_event.end_line), (SymbolKind::Method, 30));
        assert_eq!(constant(&f, "OrderService.TOPIC"), Some("order.static"));
        // Fields are not symbols; local classes inside method bodies are not scanned.
        assert!(!has_sym(&f, "cache"));
        assert!(!has_sym(&f, "Local"));
        assert!(!has_sym(&f, "local"));
        assert_eq!(sym(&f, "method").container.as_deref(), Some("Outer"));
    }

    #[test]
    fn interfaces_aliases_enums_functions_and_namespaces() {
        let src = r#"export interface Repo<T> extends Base {
  find(id: string): T;
}
export type Id =
  | string
  | number;
type Handler<T> = (x: T) => void;
export enum Status { Active = 'ACTIVE', Gone = 2, Plain }
export const enum Dir {
  Up = "up",
}
export default function () {}
export async function* stream(): AsyncGenerator<number> {
  yield 1;
}
function overload(a: string): void;
function overload(a: any) {}
declare function ambient(x: number): string;
export const load = async (id: string): Promise<void> => {
  await fetchIt(id);
};
const double = (x: number) => x * 2, triple = function (x) { return x * 3; };
export const API_URL = `https://api/v1`;
export let current = makeThing();
const MAX_RETRIES = compute();
var legacy = 1;
namespace Acme.Orders {
  export const LIMIT = 5;
  export function helper() {}
}
declare module 'express-serve-static-core' {
  interface Request { user?: User }
}
exports.handler = async (event) => { return 1; };
module.exports.other = function other() {};
"#;
        let f = extract("src/x.ts", src);
        let repo = sym(&f, "Repo");
        assert_eq!(
            (repo.kind, repo.line, repo.end_line),
            (SymbolKind::Interface, 1, 3)
        );
        let id = sym(&f, "Id");
        assert_eq!(
            (id.kind, id.line, id.end_line),
            (SymbolKind::TypeAlias, 4, 6)
        );
        assert_eq!(sym(&f, "Handler").kind, SymbolKind::TypeAlias);
        assert_eq!(sym(&f, "Status").kind, SymbolKind::Enum);
        let plain = sym(&f, "Plain");
        assert_eq!(
            (plain.kind, plain.container.as_deref()),
            (SymbolKind::EnumValue, Some("Status"))
        );
        assert_eq!(constant(&f, "Status.Active"), Some("ACTIVE"));
        assert_eq!(constant(&f, "Status.Gone"), None);
        assert_eq!(constant(&f, "Dir.Up"), Some("up"));
        assert_eq!(sym(&f, "Dir").end_line, 11);
        assert_eq!(sym(&f, "default").kind, SymbolKind::Function);
        let stream = sym(&f, "stream");
        assert_eq!(
            (stream.kind, stream.line, stream.end_line),
            (SymbolKind::Function, 13, 15)
        );
        assert_eq!(f.symbols.iter().filter(|s| s.name == "overload").count(), 2);
        assert_eq!(sym(&f, "ambient").end_line, 18);
        let load = sym(&f, "load");
        assert_eq!(
            (load.kind, load.line, load.end_line),
            (SymbolKind::Function, 19, 21)
        );
        assert_eq!(sym(&f, "double").kind, SymbolKind::Function);
        assert_eq!(sym(&f, "triple").kind, SymbolKind::Function);
        assert_eq!(sym(&f, "API_URL").kind, SymbolKind::Constant);
        assert_eq!(constant(&f, "API_URL"), Some("https://api/v1"));
        assert_eq!(sym(&f, "current").kind, SymbolKind::Variable);
        assert_eq!(sym(&f, "MAX_RETRIES").kind, SymbolKind::Constant);
        assert_eq!(sym(&f, "legacy").kind, SymbolKind::Variable);
        let ns = sym(&f, "Acme.Orders");
        assert_eq!(
            (ns.kind, ns.line, ns.end_line),
            (SymbolKind::Module, 27, 30)
        );
        assert_eq!(sym(&f, "LIMIT").container.as_deref(), Some("Acme.Orders"));
        assert_eq!(sym(&f, "helper").container.as_deref(), Some("Acme.Orders"));
        assert_eq!(
            sym(&f, "express-serve-static-core").kind,
            SymbolKind::Module
        );
        assert_eq!(sym(&f, "handler").kind, SymbolKind::Function);
        assert_eq!(sym(&f, "other").kind, SymbolKind::Function);
    }

    #[test]
    fn constants_from_objects_enums_and_env_defaults() {
        let src = r#"export const Topics = {
  ORDER_CREATED: 'order.created',
  'ORDER_PAID': "order.paid",
  nested: { SHIPPED: `order.shipped` },
  dynamic: `orders.${env}`,
  count: 3,
} as const;
export const EVENTS = Object.freeze({ REFUND: 'order.refund' });
export const ORDERS_TOPIC = process.env.ORDERS_TOPIC ?? 'orders.v1';
const PAY = process.env['PAY_TOPIC'] || "payments";
const NO_DEFAULT = process.env.NOPE;
let notConst = 'x';
"#;
        let f = extract("src/topics.ts", src);
        assert_eq!(constant(&f, "Topics.ORDER_CREATED"), Some("order.created"));
        assert_eq!(constant(&f, "Topics.ORDER_PAID"), Some("order.paid"));
        assert_eq!(constant(&f, "Topics.nested.SHIPPED"), Some("order.shipped"));
        assert_eq!(constant(&f, "Topics.dynamic"), None);
        assert_eq!(constant(&f, "EVENTS.REFUND"), Some("order.refund"));
        assert_eq!(constant(&f, "ORDERS_TOPIC"), Some("orders.v1"));
        assert_eq!(constant(&f, "PAY"), Some("payments"));
        // An env var without a default is a binding whose value the graph cannot know.
        assert_eq!(constant(&f, "NO_DEFAULT"), Some("?"));
        // A top-level `let` is a binding too: other files' names resolve against it.
        assert_eq!(constant(&f, "notConst"), Some("x"));
        assert_eq!(sym(&f, "Topics").kind, SymbolKind::Constant);
        assert_eq!(sym(&f, "Topics").end_line, 7);
        assert_eq!(sym(&f, "PAY").kind, SymbolKind::Constant);
        assert_eq!(
            f.bindings
                .iter()
                .find(|c| c.name == "Topics.ORDER_PAID")
                .map(|c| c.line),
            Some(3)
        );
    }

    #[test]
    fn imports_requires_and_reexports() {
        let src = r#"import express from 'express';
import React, { useState, useEffect as ue } from "react";
import * as grpc from '@grpc/grpc-js';
import type { Order, Item as OrderItem } from './types';
import { type Foo, Bar } from '../foo';
import './polyfill';
import fs = require('fs');
const { join, resolve: res } = require('path');
const lodash = require('lodash');
require('dotenv/config');
export * from './models';
export * as utils from './utils';
export { a, b as c } from './ab';
export type { T } from './t';
export { local };
async function lazy() { return import('./lazy'); }
import.meta.url;
"#;
        let f = extract("src/index.ts", src);
        type Row<'a> = (&'a str, Vec<&'a str>, Option<&'a str>, u32, bool);
        let got: Vec<Row> = f
            .imports
            .iter()
            .map(|i| {
                (
                    i.module.as_str(),
                    i.names.iter().map(String::as_str).collect(),
                    i.alias.as_deref(),
                    i.line,
                    i.reexport,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("express", vec!["express"], None, 1, false),
                (
                    "react",
                    vec!["React", "useState", "useEffect"],
                    None,
                    2,
                    false
                ),
                ("@grpc/grpc-js", vec![], Some("grpc"), 3, false),
                ("./types", vec!["Order", "Item"], None, 4, false),
                ("../foo", vec!["Foo", "Bar"], None, 5, false),
                ("./polyfill", vec![], None, 6, false),
                ("fs", vec![], Some("fs"), 7, false),
                ("path", vec!["join", "resolve"], None, 8, false),
                ("lodash", vec![], Some("lodash"), 9, false),
                ("dotenv/config", vec![], None, 10, false),
                ("./models", vec![], None, 11, true),
                ("./utils", vec![], Some("utils"), 12, true),
                ("./ab", vec!["a", "b"], None, 13, true),
                ("./t", vec!["T"], None, 14, true),
                ("./lazy", vec![], None, 16, false),
            ]
        );
        assert!(!has_sym(&f, "lodash"));
    }

    #[test]
    fn a_client_built_in_the_call_expression_and_getters() {
        let src = "const proto = grpc.loadPackageDefinition(def).shop;\nnew proto.OfferService(addr, grpc.credentials.createInsecure()).getOffers(req, (err, res) => {\n  res.getOffersList();\n});\n";
        let f = extract("web.js", src);
        let calls: Vec<(Option<&str>, &str, u32)> = f
            .grpc
            .iter()
            .filter_map(|g| match g {
                GrpcFact::Call {
                    service,
                    method,
                    line,
                    ..
                } => Some((service.as_deref(), method.as_str(), *line)),
                _ => None,
            })
            .collect();
        assert_eq!(calls, vec![(Some("OfferService"), "getOffers", 2)]);
    }

    #[test]
    fn grpc_js_servers_clients_and_calls() {
        let src = r#"const server = new grpc.Server();
server.addService(ordersProto.orders.OrderService.service, {
  createOrder: createOrderHandler,
  getOrder,
  async listOrders(call) {},
  ...extra,
});
server.addService(services.PaymentServiceService, new PaymentImpl());
const client = new ordersProto.OrderService('localhost:50051', grpc.credentials.createInsecure());
client.getOrder({ id: 1 }, (err, res) => {});
client.close();
const stub = new InventoryServiceClient(addr, creds);
stub.reserve(req);
other.reserve(req);
const fmt = new Intl.NumberFormat('en');
"#;
        let f = extract("src/server.js", src);
        let plain = extract(
            "src/s.js",
            "const client = new SocksClient(opts);\nclient.connect();\nclass A { constructor(private s: CAClient) {} }\n",
        );
        assert!(plain.grpc.is_empty());
        let connect = extract(
            "src/c.ts",
            "const eliza = createPromiseClient(ElizaService, transport);\nawait eliza.say({});\nconst redis = createClient({ url });\n",
        );
        assert_eq!(
            connect.grpc,
            vec![
                GrpcFact::Client {
                    service: "ElizaService".into(),
                    var: Some("eliza".into()),
                    line: 1
                },
                GrpcFact::Call {
                    service: Some("ElizaService".into()),
                    receiver: "eliza".into(),
                    method: "say".into(),
                    line: 2
                },
            ]
        );
        let handler = |method: &str, line| GrpcFact::Handler {
            service: "OrderService".into(),
            method: method.into(),
            line,
        };
        assert_eq!(
            f.grpc,
            vec![
                GrpcFact::Server {
                    service: "OrderService".into(),
                    impl_type: None,
                    line: 2
                },
                handler("createOrder", 3),
                handler("getOrder", 4),
                handler("listOrders", 5),
                GrpcFact::Server {
                    service: "PaymentService".into(),
                    impl_type: Some("PaymentImpl".into()),
                    line: 8
                },
                GrpcFact::Client {
                    service: "OrderService".into(),
                    var: Some("client".into()),
                    line: 9
                },
                GrpcFact::Call {
                    service: Some("OrderService".into()),
                    receiver: "client".into(),
                    method: "getOrder".into(),
                    line: 10
                },
                GrpcFact::Client {
                    service: "InventoryService".into(),
                    var: Some("stub".into()),
                    line: 12
                },
                GrpcFact::Call {
                    service: Some("InventoryService".into()),
                    receiver: "stub".into(),
                    method: "reserve".into(),
                    line: 13
                },
            ]
        );
    }

    const NEST: &str = r#"@Controller('orders')
export class OrdersController implements OnModuleInit {
  private orderService: OrderServiceClient;
  constructor(
    @Inject('ORDER_PACKAGE') private readonly client: ClientGrpc,
    @Inject('KAFKA') private readonly kafka: ClientKafka,
    private readonly payments: PaymentServiceClient,
  ) {}

  onModuleInit() {
    this.orderService = this.client.getService<OrderServiceClient>('OrderService');
  }

  @Get(':id')
  getOne(@Param('id') id: string) {
    return this.orderService.getOrder({ id });
  }

  @Post()
  @HttpCode(201)
  async create(@Body() dto: CreateDto) {
    await this.payments.charge(dto);
    this.kafka.emit(Topics.ORDER_CREATED, dto);
    return this.kafka.send('orders.reply', dto);
  }
}

@Controller()
@OrderServiceControllerMethods()
export class OrdersGrpc {
  @GrpcMethod('OrderService', 'CreateOrder')
  createOrder(data: CreateOrderRequest): CreateOrderResponse {
    return {};
  }

  @GrpcMethod('OrderService')
  getOrder(data: any) {}

  @GrpcMethod()
  listOrders() {}

  @EventPattern('order.created')
  async handleCreated(@Payload() data: any) {}

  @MessagePattern(TOPICS.ORDER_PAID)
  handlePaid() {}

  @EventPattern({ cmd: 'sum' })
  notKafka() {}
}
"#;

    #[test]
    fn nestjs_controllers_grpc_methods_and_events() {
        let f = extract("src/orders.controller.ts", NEST);
        assert_eq!(
            routes(&f),
            vec![
                (
                    "GET".into(),
                    "/orders/:id".into(),
                    Some("getOne".into()),
                    14
                ),
                ("POST".into(), "/orders".into(), Some("create".into()), 19),
            ]
        );
        let handlers: Vec<(String, String, u32)> = f
            .grpc
            .iter()
            .filter_map(|g| match g {
                GrpcFact::Handler {
                    service,
                    method,
                    line,
                } => Some((service.clone(), method.clone(), *line)),
                _ => None,
            })
            .collect();
        assert_eq!(
            handlers,
            vec![
                ("OrderService".into(), "CreateOrder".into(), 32),
                ("OrderService".into(), "GetOrder".into(), 37),
                ("OrdersGrpc".into(), "ListOrders".into(), 40),
            ]
        );
        assert!(f.grpc.contains(&GrpcFact::Server {
            service: "OrderService".into(),
            impl_type: Some("OrdersGrpc".into()),
            line: 29
        }));
        assert!(f.grpc.contains(&GrpcFact::Client {
            service: "OrderService".into(),
            var: Some("orderService".into()),
            line: 3
        }));
        assert!(f.grpc.contains(&GrpcFact::Client {
            service: "PaymentService".into(),
            var: Some("payments".into()),
            line: 7
        }));
        assert!(f.grpc.contains(&GrpcFact::Call {
            service: Some("OrderService".into()),
            receiver: "orderService".into(),
            method: "getOrder".into(),
            line: 16
        }));
        assert!(f.grpc.contains(&GrpcFact::Call {
            service: Some("PaymentService".into()),
            receiver: "payments".into(),
            method: "charge".into(),
            line: 22
        }));
        // `getService` itself is plumbing, never an RPC call.
        assert!(
            !f.grpc
                .iter()
                .any(|g| matches!(g, GrpcFact::Call { method, .. } if method == "getService"))
        );
        assert_eq!(
            events(&f),
            vec![
                (
                    EventRole::Producer,
                    reference("Topics.ORDER_CREATED"),
                    "ClientKafka".into(),
                    23
                ),
                (
                    EventRole::Producer,
                    lit("orders.reply"),
                    "ClientKafka".into(),
                    24
                ),
                (
                    EventRole::Consumer,
                    lit("order.created"),
                    "@EventPattern".into(),
                    42
                ),
                (
                    EventRole::Consumer,
                    reference("TOPICS.ORDER_PAID"),
                    "@MessagePattern".into(),
                    45
                ),
            ]
        );
        assert_eq!(sym(&f, "getOne").doc_line, Some(14));
        assert_eq!(sym(&f, "create").doc_line, Some(19));
        assert_eq!(sym(&f, "OrdersGrpc").doc_line, Some(28));
    }

    #[test]
    fn nest_get_service_client_binding() {
        let src = r#"export class Svc {
  private orders: any;
  constructor(private client: ClientGrpc) {}
  onModuleInit() {
    this.orders = this.client.getService<OrderServiceClient>('OrderService');
  }
  run() { return this.orders.createOrder({}); }
}
"#;
        let f = extract("src/svc.ts", src);
        assert_eq!(
            f.grpc,
            vec![
                GrpcFact::Client {
                    service: "OrderService".into(),
                    var: Some("orders".into()),
                    line: 5
                },
                GrpcFact::Call {
                    service: Some("OrderService".into()),
                    receiver: "orders".into(),
                    method: "createOrder".into(),
                    line: 7
                },
            ]
        );
    }

    #[test]
    fn kafkajs_producers_and_consumers() {
        let src = r#"import { ORDERS_TOPIC } from './topics';
const kafka = new Kafka({ clientId: 'x', brokers: [] });
const producer = kafka.producer();
const sink = kafka.producer({ idempotent: true });
const consumer = kafka.consumer({ groupId: 'g' });
await consumer.subscribe({ topics: ['orders.created', ORDERS_TOPIC], fromBeginning: true });
await consumer.subscribe({ topic: process.env.PAY_TOPIC || 'payments' });
await consumer.subscribe({ topic: /orders\..*/ });
await producer.send({
  topic: 'orders.shipped',
  messages: [{ value: 'x' }],
});
await sink.sendBatch({ topicMessages: [{ topic: Topics.A, messages }, { topic: `t.${x}`, messages }] });
await this.kafkaProducer.send({ topic, messages });
await producer.send({ topic: someLocal, messages });
await mailer.send({ topic: 'not.kafka' });
"#;
        let f = extract("src/kafka.ts", src);
        assert_eq!(
            events(&f),
            vec![
                (
                    EventRole::Consumer,
                    lit("orders.created"),
                    "kafkajs".into(),
                    6
                ),
                (
                    EventRole::Consumer,
                    reference("ORDERS_TOPIC"),
                    "kafkajs".into(),
                    6
                ),
                (
                    EventRole::Consumer,
                    Value::env("PAY_TOPIC", Some("payments".into())),
                    "kafkajs".into(),
                    7
                ),
                // A pattern subscription: a site whose topic is not a name.
                (EventRole::Consumer, Value::dynamic(), "kafkajs".into(), 8),
                (
                    EventRole::Producer,
                    lit("orders.shipped"),
                    "kafkajs".into(),
                    10
                ),
                // Names the file cannot resolve are kept: the graph resolves them or lists
                // the site as unresolved, with why.
                (
                    EventRole::Producer,
                    Value {
                        parts: vec![
                            Part::Lit("t.".into()),
                            Part::Ref {
                                name: "x".into(),
                                default: None
                            }
                        ]
                    },
                    "kafkajs".into(),
                    13
                ),
                (
                    EventRole::Producer,
                    reference("Topics.A"),
                    "kafkajs".into(),
                    13
                ),
                (
                    EventRole::Producer,
                    reference("topic"),
                    "kafkajs".into(),
                    14
                ),
                (
                    EventRole::Producer,
                    reference("someLocal"),
                    "kafkajs".into(),
                    15
                ),
            ]
        );
    }

    #[test]
    fn amqplib_publish_send_to_queue_and_consume() {
        let src = r#"const ch = await conn.createChannel();
ch.publish('orders', 'order.created', Buffer.from(x));
ch.publish(EXCHANGE, '', Buffer.from(x));
channel.sendToQueue(process.env.QUEUE || 'payments', msg);
channel.consume('orders', onMessage);
emitter.publish('not.amqp', x);
"#;
        let f = extract("src/bus.js", src);
        let got: Vec<(EventRole, String, u32)> = f
            .events
            .iter()
            .map(|e| (e.role, e.topic.display(), e.line))
            .collect();
        assert_eq!(
            got,
            vec![
                (EventRole::Producer, "order.created".to_string(), 2),
                // An empty routing key sends to the exchange.
                (EventRole::Producer, "{EXCHANGE}".to_string(), 3),
                (EventRole::Producer, "{env QUEUE}".to_string(), 4),
                (EventRole::Consumer, "orders".to_string(), 5),
            ]
        );
    }

    #[test]
    fn next_js_file_system_routes() {
        let pages = "export default async function handler(req, res) {\n  if (req.method === 'POST') {\n    return create(req, res);\n  }\n  switch (req.method) {\n    case 'GET':\n      return list(req, res);\n  }\n}\n";
        let f = extract("web/pages/api/orders/[id].ts", pages);
        assert_eq!(
            routes(&f),
            vec![
                ("POST".into(), "/api/orders/[id]".into(), None, 1),
                ("GET".into(), "/api/orders/[id]".into(), None, 1),
            ]
        );
        let f = extract(
            "web/pages/api/health/index.js",
            "export default (req, res) => res.end('ok');\n",
        );
        assert_eq!(
            routes(&f),
            vec![("ANY".into(), "/api/health".into(), None, 1)]
        );
        let app = "import { NextResponse } from 'next/server';\nexport async function GET(request: Request) {\n  return NextResponse.json([]);\n}\nexport async function POST(request: Request) {\n  return NextResponse.json({});\n}\nfunction helper() {}\n";
        let f = extract("web/src/app/(shop)/orders/[id]/route.ts", app);
        assert_eq!(
            routes(&f),
            vec![
                ("GET".into(), "/orders/[id]".into(), Some("GET".into()), 2),
                ("POST".into(), "/orders/[id]".into(), Some("POST".into()), 5),
            ]
        );
        // Not a route file: a page, and an `api` folder outside `pages`.
        assert!(routes(&extract("web/src/app/orders/page.tsx", app)).is_empty());
        assert!(routes(&extract("web/src/api/orders.ts", pages)).is_empty());
    }

    #[test]
    fn nest_swagger_ui_is_a_route() {
        let src = "async function bootstrap() {\n  const app = await NestFactory.create(AppModule);\n  SwaggerModule.setup('api', app, document);\n  other.setup('x', app);\n}\n";
        let f = extract("src/main.ts", src);
        assert_eq!(
            routes(&f),
            vec![(
                "GET".into(),
                "/api".into(),
                Some("SwaggerModule.setup".into()),
                3
            )]
        );
    }

    #[test]
    fn express_koa_fastify_routes() {
        let src = r#"const app = express();
const router = express.Router();
const v1 = new Router({ prefix: '/v1' });
app.get('/health', (req, res) => res.send('ok'));
app.post('/orders', auth, validate(schema), createOrder);
app.delete('/orders/:id', async function (req, res) {});
router.put('/items/:id', ctrl.update);
v1.get('/stock/:sku', getStock);
app.use('/api', router);
app.route('/books').get(listBooks).post(addBook);
fastify.route({ method: ['GET', 'HEAD'], url: '/ping', handler: ping });
cache.get('/key');
axios.get('/not/a/route', config);
app.get(`/tpl`, h);
"#;
        let f = extract("src/app.js", src);
        assert_eq!(
            routes(&f),
            vec![
                ("GET".into(), "/health".into(), None, 4),
                (
                    "POST".into(),
                    "/orders".into(),
                    Some("createOrder".into()),
                    5
                ),
                ("DELETE".into(), "/orders/:id".into(), None, 6),
                (
                    "PUT".into(),
                    "/api/items/:id".into(),
                    Some("ctrl.update".into()),
                    7
                ),
                (
                    "GET".into(),
                    "/v1/stock/:sku".into(),
                    Some("getStock".into()),
                    8
                ),
                ("GET".into(), "/books".into(), Some("listBooks".into()), 10),
                ("POST".into(), "/books".into(), Some("addBook".into()), 10),
                ("GET".into(), "/ping".into(), Some("ping".into()), 11),
                ("HEAD".into(), "/ping".into(), Some("ping".into()), 11),
            ]
        );
    }

    #[test]
    fn http_client_calls() {
        let src = r#"fetch('/api/orders').then(r => r.json());
fetch(`${BASE}/orders/${id}`, { method: 'post', body });
fetch(BASE + '/users/' + id, opts);
fetch(url);
axios.get('/api/items');
axios.post('http://billing:8080/invoices?x=1', payload);
axios({ url: '/users/1', method: 'delete' });
axios('/plain');
const api = axios.create({ baseURL: 'http://x' });
api.put('/carts/1', body);
got.post('http://svc:8080/notify');
ky.get(`${BASE}/stock/${sku}`);
ky.get(`${BASE}${PATH}`);
this.http.get<Order[]>(`${this.base}/api/orders/${dto.id}`);
http.get('http://legacy/status', res => {});
window.fetch('/w');
fetch('/etc/passwd');
"#;
        let f = extract("src/client.ts", src);
        let m = |s: &str| Some(s.to_string());
        assert_eq!(
            calls(&f),
            vec![
                (m("GET"), "/api/orders".into(), 1),
                (m("POST"), "{BASE}/orders/{id}".into(), 2),
                (None, "{BASE}/users/{id}".into(), 3),
                // fetch is HTTP whatever its URL: an unknown one is kept, and the graph lists
                // the site as unresolved.
                (m("GET"), "{url}".into(), 4),
                (m("GET"), "/api/items".into(), 5),
                (m("POST"), "http://billing:8080/invoices?x=1".into(), 6),
                (m("DELETE"), "/users/1".into(), 7),
                (m("GET"), "/plain".into(), 8),
                (m("PUT"), "/carts/1".into(), 10),
                (m("POST"), "http://svc:8080/notify".into(), 11),
                (m("GET"), "{BASE}/stock/{sku}".into(), 12),
                (m("GET"), "{BASE}{PATH}".into(), 13),
                (m("GET"), "{this.base}/api/orders/{dto.id}".into(), 14),
                (m("GET"), "http://legacy/status".into(), 15),
                (m("GET"), "/w".into(), 16),
                (m("GET"), "/etc/passwd".into(), 17),
            ]
        );
        assert!(routes(&f).is_empty());
    }

    #[test]
    fn code_in_comments_and_strings_is_ignored() {
        let src = r#"// export class Commented {}
/* app.get('/hidden', h); producer.send({ topic: 'no' }); */
const s = "class InString { } fetch('/nope')";
const t = `
  export function inTemplate() {}
  ${ "x" }
`;
/**
 * @GrpcMethod('OrderService', 'Nope')
 */
export class Real {}
"#;
        let f = extract("src/x.ts", src);
        let names: Vec<&str> = f.symbols.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, vec!["s", "t", "Real"]);
        assert!(f.http.is_empty() && f.events.is_empty() && f.grpc.is_empty());
        assert_eq!(sym(&f, "Real").doc_line, Some(8));
        assert_eq!(sym(&f, "t").end_line, 7);
    }

    #[test]
    fn jsx_text_does_not_confuse_the_scanner() {
        let src = r#"import React, { useState } from 'react';

export const Toggle = <T,>(props: { value: T }) => {
  const [on, setOn] = useState<boolean>(false);
  return (
    <div className="toggle" onClick={() => setOn(!on)}>
      Don't click / here {on ? <b>it's on</b> : <i>off</i>}
      <img src="/x.png" alt='a "quote"' />
    </div>
  );
};

export function OrderList({ orders }: Props) {
  useEffect(() => {
    fetch('/api/orders');
  }, []);
  return <ul>{orders.map(o => <li key={o.id}>{o.name}'s order</li>)}</ul>;
}

export default class Page extends React.Component<Props> {
  render() {
    return <>
      <p>Isn't it "great"? {/* it's a comment */}</p>
    </>;
  }
}

const generic = <T extends object>(x: T) => x;
export const AFTER = 'still.parsed';
"#;
        assert!(blank_jsx_text(src, true).is_some());
        let f = extract("src/Toggle.tsx", src);
        let got: Vec<(&str, SymbolKind, u32, u32)> = f
            .symbols
            .iter()
            .map(|s| (s.name.as_str(), s.kind, s.line, s.end_line))
            .collect();
        assert_eq!(
            got,
            vec![
                ("Toggle", SymbolKind::Function, 3, 11),
                ("OrderList", SymbolKind::Function, 13, 18),
                ("Page", SymbolKind::Class, 20, 26),
                ("render", SymbolKind::Method, 21, 25),
                ("generic", SymbolKind::Function, 28, 28),
                ("AFTER", SymbolKind::Constant, 29, 29),
            ]
        );
        assert_eq!(constant(&f, "AFTER"), Some("still.parsed"));
        assert_eq!(
            calls(&f),
            vec![(Some("GET".into()), "/api/orders".into(), 15)]
        );
        // A `.ts` file is never treated as JSX (type assertions live there).
        let f = extract("a.ts", "const x = <Foo>bar;\nconst Y = 'y';");
        assert_eq!(constant(&f, "Y"), Some("y"));
    }

    #[test]
    fn jsx_in_plain_js_files() {
        let src = "function App() {\n  return <p>Don't stop</p>;\n}\nexport const B = 'b';\n";
        let f = extract("src/App.jsx", src);
        assert_eq!(sym(&f, "App").end_line, 3);
        assert_eq!(constant(&f, "B"), Some("b"));
        // A comparison is not JSX.
        assert!(blank_jsx_text("if (a <b) { x = 1 }", false).is_none());
    }

    #[test]
    fn truncated_and_malformed_files_never_panic() {
        let full = format!("{CLASSES}\n{NEST}");
        for cut in (0..full.len())
            .filter(|&c| full.is_char_boundary(c))
            .step_by(7)
        {
            let _ = extract("src/x.tsx", &full[..cut]);
            let _ = extract("src/x.ts", &full[..cut]);
        }
        for src in [
            "class",
            "class {",
            "export default",
            "import",
            "import {",
            "import { a",
            "export * from",
            "const",
            "const x =",
            "enum E {",
            "@",
            "@Get(",
            "server.addService(",
            "producer.send({ topic:",
            "fetch(`${",
            "<div>{",
            "a.b.c.d.e.f.g.h.i(",
            ")))}}}]]]",
            "<<<<>>>>",
            "function f(): { a: string",
        ] {
            let _ = extract("src/x.tsx", src);
        }
    }

    #[test]
    fn junk_input_never_panics() {
        let alphabet: &[u8] =
            b"{}()[]<>/'\"`$@#*=;:,.?!&|\\\n abcXYZ019_-+classimportexportfunction";
        let mut seed = 0x2545_f491_u64;
        let junk: String = (0..200_000)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                alphabet[(seed % alphabet.len() as u64) as usize] as char
            })
            .collect();
        let f = extract("src/junk.tsx", &junk);
        assert!(f.symbols.iter().all(|s| s.end_line >= s.line));
        let _ = extract("src/junk.ts", &junk);
        let deep = "(".repeat(50_000) + &"{".repeat(50_000) + &"<a>".repeat(20_000);
        let _ = extract("src/deep.tsx", &deep);
        // Unclosed nested calls and stray `<`: every pass stays linear.
        for pattern in [
            "producer.send({topic: ",
            "fetch(",
            "a<b, ",
            "x = <a>",
            "@a(",
        ] {
            let _ = extract("src/hostile.tsx", &pattern.repeat(20_000));
        }
    }
}
