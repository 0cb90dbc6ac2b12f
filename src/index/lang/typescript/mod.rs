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
//!
//! This module holds the entry point, the extractor state ([`Ex`]) and the token helpers every
//! pass shares; the passes and their concerns live in the submodules: [`jsx`] (JSX text
//! blanking), pass 1 in [`bindings`] and [`imports`], pass 2 in [`declarations`] and
//! [`classes`], pass 3 in [`calls`] with [`http_calls`], [`events`] and [`routes`] (which also
//! holds the Next.js file-system routes read from the path after the passes).

mod bindings;
mod calls;
mod classes;
mod declarations;
mod events;
mod exports;
mod http_calls;
mod imports;
mod jsx;
mod nested;
mod routes;
#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};

use super::bind::{Assignments, StmtStyle};
use super::cfamily;
use super::cfamily::{Declares, Site};
use super::common;
use super::common::looks_like_url;
use super::tokens::{Rules, TokKind, Tokens};
use super::value::{ExprRules, eval};
use crate::index::facts::{FileFacts, Value};
use crate::index::lex::{Syntax, lex};
use jsx::blank_jsx_text;
use routes::next_routes;

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
        pubsub: (false, false),
    };
    ex.bindings_and_imports();
    ex.pubsub = common::PubSub::imported(&ex.facts.imports);
    ex.declarations();
    ex.nested_declarations();
    ex.uses();
    let mut facts = ex.facts;
    exports::commonjs_exports(&toks, &asg, &mut facts);
    next_routes(path, &toks, &mut facts);
    cfamily::app_prefixes(
        &toks,
        &asg,
        &ExprRules::JS,
        &["setGlobalPrefix"],
        &mut facts,
    );
    cfamily::finish(&asg, &toks, &ExprRules::JS, facts)
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

/// A declaration region still to scan.
type Region = cfamily::Region<ClassCtx>;

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
    /// The NATS and Redis clients the file imports ([`common::PubSub::imported`]), set
    /// before the calls are read.
    pubsub: (bool, bool),
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
        cfamily::push_lit(&mut self.facts, name, value, line);
    }

    /// The variable or field an expression starting at `start` is assigned to:
    /// `const x = …`, `const x: T = …`, `this.x = …`, `x = …`, `{ x: … }`, `private x = …`.
    fn assigned_name(&self, start: usize) -> Option<&'t str> {
        let t = self.t;
        let k = cfamily::before_await(t, start)?;
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
            if t.is_any(j, &[";", "{", "}", "=", "const", "let", "var"])
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
        common::topic_of(eval(t, (a, e), &ExprRules::JS, self.asg))
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
}
