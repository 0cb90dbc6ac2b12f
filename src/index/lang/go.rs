//! Go extractor: declarations, imports, gRPC servers/clients/calls, Kafka producers and
//! consumers (sarama, kafka-go, confluent-kafka-go, franz-go), AMQP publishers and consumers
//! (amqp091-go, streadway/amqp), HTTP routes (net/http incl. Go 1.22 method patterns,
//! gorilla/mux, gin, echo, chi, fiber) and HTTP client calls.
//!
//! One lex pass, then token scans: a top-level declaration walk (Go declares everything at the
//! top level, so function bodies are skipped whole), the shared assignment tracker
//! ([`Assignments`]) for what a variable or field was given, one pass for servers, clients,
//! events and routes, and one pass for calls on the client variables found. Topics, URLs,
//! route paths and constants are read by the shared evaluator ([`eval`]). Every lookup is a
//! hash map or a bounded backwards step.

use std::collections::HashMap;

use super::bind::{Assign, Assignments, StmtStyle};
use super::common::{join_path, looks_like_topic, looks_like_url};
use super::tokens::{Rules, Tokens};
use super::value::{ExprRules, eval, with_fallback};
use crate::index::facts::{
    Binding, EventFact, EventRole, FileFacts, GrpcFact, HttpFact, Import, Part, Symbol, SymbolKind,
    Value,
};
use crate::index::lex::{Syntax, lex};

/// Extracts the facts of one Go file. `path` is unused (generated-code detection is the
/// dispatcher's).
///
/// Conventions: an iota block whose first constant has an explicit type `T` makes `T` an
/// `Enum` and its constants `EnumValue`s of `T`; a defined type (`type Status int`) is a
/// `TypeAlias`; blank and dot imports have the alias `_` / `.`; a client held in a struct field
/// is a `Call` receiver named after the field (`s.orders.CreateOrder` → `orders`).
pub fn extract(path: &str, text: &str) -> FileFacts {
    let _ = path;
    let lexed = lex(Syntax::GO, text);
    let t = Tokens::new(&lexed, &Rules::C_FAMILY);
    let asg = Assignments::scan(&t, &StmtStyle::GO);
    let mut go = Go {
        t: &t,
        asg: &asg,
        facts: FileFacts::default(),
        funcs: Vec::new(),
        func_by_name: HashMap::new(),
        structs: Vec::new(),
        enum_types: Vec::new(),
        bindings: HashMap::new(),
        group_prefix: HashMap::new(),
        route_stack: Vec::new(),
        queues: Vec::new(),
        libs: Libs::default(),
    };
    go.declarations();
    go.libs = Libs::of(&go.facts.imports);
    go.patterns();
    go.calls();
    let mut facts = go.facts;
    // The declaration walk bound every `var`/`const` spec; the tracker adds what it sees at
    // the top level beyond them, never the blank name or an iota counter.
    let declared = facts.bindings.len();
    asg.export(&t, &ExprRules::GO, &mut facts);
    let mut k = 0;
    facts.bindings.retain(|b| {
        k += 1;
        k <= declared
            || (b.name != "_"
                && !b
                    .value
                    .parts
                    .iter()
                    .any(|p| matches!(p, Part::Ref { name, .. } if name == "iota")))
    });
    crate::order::sort_by_key(&mut facts.bindings, |b| b.line);
    facts
}

/// A top-level `func` declaration: where its parts are, for scoping and constructor lookups.
#[derive(Debug, Clone, Copy)]
struct Func<'a> {
    /// Token index of the `func` keyword.
    start: usize,
    /// The parameter group.
    params: Option<(usize, usize)>,
    /// The body: `{` index and its `}` index (the token count when unclosed).
    body: Option<(usize, usize)>,
    /// The first result type when it is a local (unqualified) name: `*orderServer` gives
    /// `orderServer`.
    result: Option<&'a str>,
}

/// Where a client variable is visible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// A package-level variable: bare name anywhere in the file.
    Global,
    /// A struct field: reached through a selector (`s.orders`).
    Field,
    /// A local variable or parameter of one function, from a token index on.
    Local(usize, usize),
}

/// Which messaging libraries the file imports (to accept their generically named methods).
#[derive(Debug, Clone, Copy, Default)]
struct Libs {
    sarama: bool,
    confluent: bool,
    /// github.com/rabbitmq/amqp091-go or github.com/streadway/amqp.
    amqp: bool,
}

impl Libs {
    fn of(imports: &[Import]) -> Libs {
        Libs {
            sarama: imports.iter().any(|i| i.module.ends_with("/sarama")),
            confluent: imports
                .iter()
                .any(|i| i.module.contains("confluent-kafka-go")),
            amqp: imports
                .iter()
                .any(|i| i.module.ends_with("/amqp") || i.module.contains("amqp091-go")),
        }
    }
}

/// An AMQP queue declared in a function (`q, err := ch.QueueDeclare("orders", …)`), so
/// `q.Name` reads as its name, and the binding that routes to it (`ch.QueueBind(q.Name, key,
/// exchange, …)`), for a server-named queue (`QueueDeclare("", …)`).
#[derive(Debug, Clone, Copy)]
struct Queue<'a> {
    /// The variable holding the queue.
    var: &'a str,
    /// The token of the `QueueDeclare` call.
    at: usize,
    /// The top-level function it is declared in.
    func: Option<usize>,
    /// The name argument.
    name: (usize, usize),
    /// The routing key and exchange arguments of a `QueueBind` of the queue.
    bind: Option<((usize, usize), (usize, usize))>,
}

/// How far back a variable lookup walks (assignments to one name, bindings of one name):
/// bounds the work on hostile input without mattering for real code.
const LOOKBACK: usize = 64;

const GIN_METHODS: [&str; 8] = [
    "GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "Any",
];
const CHI_METHODS: [&str; 9] = [
    "Get", "Post", "Put", "Delete", "Patch", "Head", "Options", "Connect", "Trace",
];
const HTTP_METHODS: [&str; 9] = [
    "GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "CONNECT", "TRACE",
];

struct Go<'t, 'l, 'a> {
    t: &'t Tokens<'l, 'a>,
    /// Every assignment of the file, for what a name holds at a use.
    asg: &'t Assignments,
    facts: FileFacts,
    funcs: Vec<Func<'a>>,
    func_by_name: HashMap<&'a str, usize>,
    /// Struct bodies (`{`, `}` token indices), in order.
    structs: Vec<(usize, usize)>,
    /// Types named by iota blocks (`const ( A T = iota … )`).
    enum_types: Vec<&'a str>,
    /// Client variables: name → (service, scope, visible from token index).
    bindings: HashMap<&'a str, Vec<(String, Scope)>>,
    /// Router variables with a path prefix (`v1 := r.Group("/v1")`).
    group_prefix: HashMap<&'a str, String>,
    /// chi `r.Route("/p", func(r chi.Router) {…})` scopes: (closing token, full prefix).
    route_stack: Vec<(usize, String)>,
    /// AMQP queues declared into variables, in source order.
    queues: Vec<Queue<'a>>,
    libs: Libs,
}

impl<'t, 'a> Go<'t, '_, 'a> {
    // -----------------------------------------------------------------------------------------
    // Declarations
    // -----------------------------------------------------------------------------------------

    fn declarations(&mut self) {
        let t = self.t;
        let n = t.len();
        let mut i = 0;
        while i < n {
            i = match t.ident(i) {
                Some("package") if t.first_on_line(i) => {
                    if let Some(name) = t.ident(i + 1)
                        && self.facts.package.is_none()
                    {
                        self.facts.package = Some(name.to_string());
                    }
                    i + 2
                }
                Some("import") => self.imports(i + 1),
                Some("func") => self.func(i),
                Some("type") => self.type_decl(i),
                Some(kw @ ("const" | "var")) => self.value_decl(i, kw == "const"),
                _ => t.skip_group(i),
            };
        }
        for name in std::mem::take(&mut self.enum_types) {
            for s in &mut self.facts.symbols {
                if s.name == name && s.kind == SymbolKind::TypeAlias && s.container.is_none() {
                    s.kind = SymbolKind::Enum;
                }
            }
        }
    }

    fn doc_line(&self, line: u32) -> Option<u32> {
        self.t.lx.doc_comment_above(line)
    }

    fn push_symbol(
        &mut self,
        name: &str,
        kind: SymbolKind,
        line: u32,
        end_line: u32,
        doc_from: u32,
        container: Option<&str>,
    ) {
        self.facts.symbols.push(Symbol {
            name: name.to_string(),
            kind,
            line,
            end_line: end_line.max(line),
            doc_line: self.doc_line(doc_from),
            container: container.map(str::to_string),
        });
    }

    fn imports(&mut self, j: usize) -> usize {
        let t = self.t;
        if t.is_punct(j, b'(') {
            let end = t.close(j).unwrap_or(t.len());
            let mut k = j + 1;
            while k < end {
                k = self.import_spec(k, end);
            }
            return end + 1;
        }
        self.import_spec(j, t.len())
    }

    /// `[alias] "path"`; returns the index after it.
    fn import_spec(&mut self, k: usize, limit: usize) -> usize {
        let t = self.t;
        let (alias, s) = if t.is_str(k) {
            (None, k)
        } else if (t.ident(k).is_some() || t.is_punct(k, b'.')) && t.is_str(k + 1) && k + 1 < limit
        {
            (Some(t.text(k)), k + 1)
        } else {
            return k + 1;
        };
        if let Some(module) = t.str_value(s) {
            self.facts.imports.push(Import {
                module: module.into_owned(),
                names: Vec::new(),
                alias: alias.map(str::to_string),
                line: t.line(s),
                reexport: false,
            });
        }
        s + 1
    }

    /// `func [(recv)] Name[T any](params) results { body }`; returns the index after it.
    fn func(&mut self, i: usize) -> usize {
        let t = self.t;
        let n = t.len();
        let mut j = i + 1;
        let mut container = None;
        let mut recv = None;
        if t.is_punct(j, b'(') {
            let close = t.close(j).unwrap_or(n);
            let mut k = j + 1;
            while k < close {
                if t.is_punct(k, b'[') {
                    k = t.skip_group(k);
                    continue;
                }
                if let Some(id) = t.ident(k) {
                    container = Some(id);
                }
                k += 1;
            }
            recv = Some((j, close));
            j = close + 1;
        }
        let Some(name) = t.ident(j) else {
            return j.max(i + 1);
        };
        let name_tok = j;
        j += 1;
        if t.is_punct(j, b'[') {
            j = t.skip_group(j);
        }
        let mut params = None;
        if t.is_punct(j, b'(') {
            let close = t.close(j).unwrap_or(n);
            params = Some((j, close));
            j = close + 1;
        }
        // Results, then the body: Go puts `{` on the signature's last line, so a token that
        // starts a line ends a body-less declaration.
        let mut result = None;
        let mut body = None;
        let mut k = j;
        while k < n && !t.first_on_line(k) {
            if t.is_punct(k, b'{') {
                if t.is(k - 1, "interface") || t.is(k - 1, "struct") {
                    k = t.skip_group(k);
                    continue;
                }
                body = Some((k, t.close(k).unwrap_or(n)));
                break;
            }
            if k == j {
                result = self.local_type_at(if t.is_punct(k, b'(') { k + 1 } else { k });
            }
            k = t.skip_group(k);
        }
        let line = t.line(name_tok);
        let end_line = match body {
            Some((open, _)) => t.group_end_line(open),
            None => t.line(k.saturating_sub(1).max(name_tok)),
        };
        let kind = if recv.is_some() {
            SymbolKind::Method
        } else {
            SymbolKind::Function
        };
        let container = recv.and(container);
        self.push_symbol(name, kind, line, end_line, t.line(i), container);
        if recv.is_none() {
            self.func_by_name.insert(name, self.funcs.len());
        }
        self.funcs.push(Func {
            start: i,
            params,
            body,
            result,
        });
        match body {
            Some((open, _)) => t.skip_group(open),
            None => k.max(i + 1),
        }
    }

    /// The type named at `k` when it is local: `T`, `*T` (not `pkg.T`).
    fn local_type_at(&self, k: usize) -> Option<&'a str> {
        let t = self.t;
        let k = if t.is_punct(k, b'*') || t.is_punct(k, b'&') {
            k + 1
        } else {
            k
        };
        let id = t.ident(k)?;
        (!t.is_punct(k + 1, b'.') && !is_keyword(id)).then_some(id)
    }

    fn type_decl(&mut self, i: usize) -> usize {
        let t = self.t;
        if t.is_punct(i + 1, b'(') {
            let end = t.close(i + 1).unwrap_or(t.len());
            let mut k = i + 2;
            while k < end {
                k = if t.ident(k).is_some() {
                    self.type_spec(k, end, t.line(k))
                } else {
                    t.skip_group(k)
                };
            }
            return end + 1;
        }
        self.type_spec(i + 1, t.len(), t.line(i))
    }

    /// `Name[T any] [=] Type`; returns the index after it.
    fn type_spec(&mut self, k: usize, limit: usize, decl_line: u32) -> usize {
        let t = self.t;
        let Some(name) = t.ident(k) else {
            return k + 1;
        };
        let line = t.line(k);
        let mut j = k + 1;
        if t.is_punct(j, b'[') && self.is_type_params(j) {
            j = t.skip_group(j);
        }
        if t.is_punct(j, b'=') {
            j += 1;
        }
        if (t.is(j, "struct") || t.is(j, "interface")) && t.is_punct(j + 1, b'{') {
            let open = j + 1;
            let kind = if t.is(j, "struct") {
                self.structs.push((open, t.close(open).unwrap_or(t.len())));
                SymbolKind::Struct
            } else {
                SymbolKind::Interface
            };
            self.push_symbol(name, kind, line, t.group_end_line(open), decl_line, None);
            if kind == SymbolKind::Interface {
                self.interface_methods(open, name);
            }
            return t.skip_group(open);
        }
        let e = self.stmt_end(j, limit).max(k + 1);
        let end_line = t.end_line(e - 1);
        self.push_symbol(name, SymbolKind::TypeAlias, line, end_line, decl_line, None);
        e
    }

    /// `[T any]`, `[K comparable, V any]` (type parameters) rather than `[N]` (an array).
    fn is_type_params(&self, open: usize) -> bool {
        let t = self.t;
        t.ident(open + 1).is_some() && !t.is_punct(open + 2, b']') && t.close(open).is_some()
    }

    fn interface_methods(&mut self, open: usize, container: &str) {
        let t = self.t;
        let end = t.close(open).unwrap_or(t.len());
        let mut k = open + 1;
        while k < end {
            if t.first_on_line(k)
                && let Some(name) = t.ident(k)
                && t.is_punct(k + 1, b'(')
            {
                let e = self.stmt_end(k, end).max(k + 1);
                let line = t.line(k);
                self.push_symbol(
                    name,
                    SymbolKind::Method,
                    line,
                    t.end_line(e - 1),
                    line,
                    Some(container),
                );
                k = e;
            } else {
                k = t.skip_group(k);
            }
        }
    }

    /// `const`/`var`, single or grouped; returns the index after it.
    fn value_decl(&mut self, i: usize, is_const: bool) -> usize {
        let t = self.t;
        if t.is_punct(i + 1, b'(') {
            let end = t.close(i + 1).unwrap_or(t.len());
            let mut k = i + 2;
            let mut enum_type: Option<Option<&'a str>> = None;
            while k < end {
                k = if t.ident(k).is_some() {
                    self.value_spec(k, end, is_const, t.line(k), &mut enum_type)
                } else {
                    t.skip_group(k)
                };
            }
            return end + 1;
        }
        let mut none = Some(None);
        self.value_spec(i + 1, t.len(), is_const, t.line(i), &mut none)
    }

    /// One `a, b T = x, y` spec. `enum_type` is the group's iota state: `None` before the first
    /// spec, then `Some(Some(T))` for an iota block typed `T`.
    fn value_spec(
        &mut self,
        k: usize,
        limit: usize,
        is_const: bool,
        decl_line: u32,
        enum_type: &mut Option<Option<&'a str>>,
    ) -> usize {
        let t = self.t;
        let e = self.stmt_end(k, limit).max(k + 1);
        let mut names = Vec::new();
        let mut j = k;
        while j < e {
            let Some(id) = t.ident(j) else { break };
            names.push((j, id));
            j += 1;
            if t.is_punct(j, b',') {
                j += 1;
            } else {
                break;
            }
        }
        let eq = (j..e).find(|&x| t.is_punct(x, b'='));
        let type_end = eq.unwrap_or(e);
        let type_name = match type_end.saturating_sub(j) {
            1 => t.ident(j),
            3 if t.is_punct(j + 1, b'.') => t.ident(j + 2),
            _ => None,
        };
        let values: Vec<(usize, usize)> = match eq {
            Some(eq) => split_commas(t, eq + 1, e),
            None => Vec::new(),
        };
        let has_iota = values.iter().any(|&(a, b)| (a..b).any(|x| t.is(x, "iota")));
        let group_type = match *enum_type {
            None => {
                let ty = if is_const && has_iota {
                    type_name
                } else {
                    None
                };
                *enum_type = Some(ty);
                if let Some(ty) = ty {
                    self.enum_types.push(ty);
                }
                ty
            }
            Some(ty) => ty,
        };
        let implicit = eq.is_none() && type_end == j;
        let end_line = t.end_line(e - 1);
        for (idx, &(tok, name)) in names.iter().enumerate() {
            if name == "_" {
                continue;
            }
            let line = t.line(tok);
            let (kind, container) = match group_type {
                Some(ty) if is_const && (implicit || type_name == Some(ty)) => {
                    (SymbolKind::EnumValue, Some(ty))
                }
                _ if is_const => (SymbolKind::Constant, None),
                _ => (SymbolKind::Variable, None),
            };
            let doc_from = if idx == 0 { decl_line } else { line };
            self.push_symbol(name, kind, line, end_line, doc_from, container);
            // Every value the evaluator reads is a binding (an env lookup keeps its default for
            // the graph); an iota counter is a number, not a value anything resolves to.
            if names.len() == values.len()
                && !(values[idx].0..values[idx].1).any(|x| t.kw(x, "iota"))
                && let value = self.value(values[idx])
                && !value.is_dynamic()
            {
                self.facts.bindings.push(Binding {
                    name: name.to_string(),
                    value,
                    line,
                });
            }
        }
        e
    }

    /// The end (exclusive) of the statement starting at `start`: a `;`, a closer of an outer
    /// group, `limit`, or a line break after a token that cannot continue an expression.
    fn stmt_end(&self, start: usize, limit: usize) -> usize {
        let t = self.t;
        let mut k = start;
        while k < limit {
            if t.is_punct(k, b';')
                || t.is_punct(k, b')')
                || t.is_punct(k, b']')
                || t.is_punct(k, b'}')
            {
                return k;
            }
            let next = t.skip_group(k).clamp(k + 1, limit);
            if next >= limit {
                return limit;
            }
            if t.line(next) > t.line(next - 1) && !continues(t, next - 1) {
                return next;
            }
            k = next;
        }
        limit
    }

    // -----------------------------------------------------------------------------------------
    // Scopes and assignments
    // -----------------------------------------------------------------------------------------

    /// The top-level function whose signature or body holds token `at`.
    fn enclosing_func(&self, at: usize) -> Option<usize> {
        let p = self.funcs.partition_point(|f| f.start <= at);
        let f = p.checked_sub(1)?;
        let end = self.funcs[f]
            .body
            .map(|(_, c)| c)
            .or(self.funcs[f].params.map(|(_, c)| c))?;
        (at <= end).then_some(f)
    }

    /// The assignment whose right-hand side starts at token `start` (`c := pb.NewXClient(…)`,
    /// `v1 := r.Group("/v1")`).
    fn assign_starting_at(&self, start: usize) -> Option<&'t Assign> {
        let list = &self.asg.list;
        let p = list.partition_point(|a| a.rhs.0 < start);
        list.get(p).filter(|a| a.rhs.0 == start)
    }

    // -----------------------------------------------------------------------------------------
    // Servers, clients, events, routes
    // -----------------------------------------------------------------------------------------

    fn patterns(&mut self) {
        let t = self.t;
        for k in 0..t.len() {
            let Some(id) = t.ident(k) else { continue };
            let call = t.is_punct(k + 1, b'(');
            let lit = t.is_punct(k + 1, b'{');
            let after_func = k > 0 && t.is(k - 1, "func");
            if call && !after_func {
                if let Some(svc) = id
                    .strip_prefix("Register")
                    .and_then(|r| r.strip_suffix("Server"))
                    .filter(|s| !s.is_empty())
                {
                    self.server(k, svc.to_string(), 1);
                } else if id == "RegisterService" {
                    self.service_desc_server(k);
                } else if let Some(svc) = id
                    .strip_prefix("New")
                    .and_then(|r| r.strip_suffix("Client"))
                    .filter(|s| !s.is_empty())
                {
                    self.client(k, svc);
                }
            } else if !call
                && !lit
                && let Some(svc) = id.strip_suffix("Client").filter(|s| !s.is_empty())
            {
                self.typed_client(k, svc);
            }
            if lit {
                self.composite_event(k, id);
            }
            if call && !after_func {
                self.call_event(k, id);
                self.http(k, id);
            }
        }
    }

    /// `pb.Register<Svc>Server(s, impl)`: the implementation is the second argument.
    fn server(&mut self, k: usize, service: String, impl_arg: usize) {
        let t = self.t;
        let args = t.args(k + 1);
        let impl_type = args
            .get(impl_arg)
            .and_then(|&r| self.impl_of(r, k, 0))
            .map(str::to_string);
        self.facts.grpc.push(GrpcFact::Server {
            service,
            impl_type,
            line: t.line(k),
        });
    }

    /// `s.RegisterService(&pb.Orders_ServiceDesc, impl)`.
    fn service_desc_server(&mut self, k: usize) {
        let t = self.t;
        let args = t.args(k + 1);
        let Some(&(a, b)) = args.first() else { return };
        let svc = (a..b)
            .rev()
            .find_map(|x| t.ident(x))
            .and_then(|id| id.strip_suffix("_ServiceDesc"))
            .filter(|s| !s.is_empty());
        if let Some(svc) = svc {
            self.server(k, svc.to_string(), 1);
        }
    }

    /// The type an expression evaluates to when it is visible: `&impl{}`, `impl{}`,
    /// `NewImpl(…)` (a constructor of this file), or a variable assigned one of those.
    fn impl_of(&self, (s, e): (usize, usize), at: usize, depth: u8) -> Option<&'a str> {
        let t = self.t;
        let s = if t.is_punct(s, b'&') { s + 1 } else { s };
        let mut j = s;
        let mut last = None;
        while j < e && (t.ident(j).is_some() || t.is_punct(j, b'.')) {
            if let Some(id) = t.ident(j) {
                last = Some(id);
            }
            j += 1;
        }
        let last = last?;
        if j == e && e == s + 1 {
            let a = self.asg.last(last, at).filter(|_| depth == 0)?;
            return self.impl_of(a.rhs, a.at, depth + 1);
        }
        if t.is_punct(j, b'{') {
            return Some(last);
        }
        if t.is_punct(j, b'(') {
            let f = self.funcs[*self.func_by_name.get(last)?];
            return self.ctor_type(&f).or(f.result);
        }
        None
    }

    /// The type a constructor returns a literal of: `return &impl{…}` in its body.
    fn ctor_type(&self, f: &Func<'a>) -> Option<&'a str> {
        let t = self.t;
        let (open, close) = f.body?;
        let mut k = open + 1;
        while k < close.min(open + 4096) {
            if t.is(k, "return") {
                let mut j = if t.is_punct(k + 1, b'&') {
                    k + 2
                } else {
                    k + 1
                };
                let mut last = None;
                while let Some(id) = t.ident(j) {
                    last = Some(id);
                    if !t.is_punct(j + 1, b'.') {
                        break;
                    }
                    j += 2;
                }
                if t.is_punct(j + 1, b'{') {
                    return last;
                }
            }
            k += 1;
        }
        None
    }

    /// `pb.New<Svc>Client(conn)`: a client, bound to the variable or field it is stored in.
    fn client(&mut self, k: usize, svc: &str) {
        let t = self.t;
        let start = chain_start(t, k);
        let mut var = None;
        if let Some(a) = self.assign_starting_at(start) {
            // `g.orders = …` is a field, reached as `g.orders`; a plain name is a local of its
            // function from the assignment on, or a package variable.
            let scope = if a.name.contains('.') {
                Scope::Field
            } else {
                match self.enclosing_func(a.at) {
                    Some(f) => Scope::Local(f, a.at),
                    None => Scope::Global,
                }
            };
            var = Some((t.text(a.at), scope));
        } else if start >= 2
            && t.is_punct(start - 1, b':')
            && !t.joined(start - 1)
            && let Some(key) = t.ident(start - 2)
        {
            // A composite literal field: `&Svc{orders: pb.NewOrdersClient(conn)}`.
            var = Some((key, Scope::Field));
        }
        let var = var.filter(|&(name, _)| name != "_");
        if let Some((name, scope)) = var {
            self.bindings
                .entry(name)
                .or_default()
                .push((svc.to_string(), scope));
        }
        self.facts.grpc.push(GrpcFact::Client {
            service: svc.to_string(),
            var: var.map(|(n, _)| n.to_string()),
            line: t.line(k),
        });
        // `pb.NewXClient(conn).Method(ctx, req)`, on one line or continued on the next.
        if let Some(close) = t.is_punct(k + 1, b'(').then(|| t.close(k + 1)).flatten()
            && t.is_punct(close + 1, b'.')
            && t.is_punct(close + 3, b'(')
            && let Some(method) = t.ident(close + 2)
        {
            self.facts.grpc.push(GrpcFact::Call {
                service: Some(svc.to_string()),
                receiver: format!("{}(…)", t.text(k)),
                method: method.to_string(),
                line: t.line(close + 2),
            });
        }
    }

    /// `orders pb.OrderServiceClient` (a struct field, parameter or variable typed as a
    /// client): binds the name for calls.
    fn typed_client(&mut self, k: usize, svc: &str) {
        let t = self.t;
        if k < 3 || !t.is_punct(k - 1, b'.') || t.ident(k - 2).is_none() || t.is_punct(k - 3, b'.')
        {
            return;
        }
        let mut ts = k - 2;
        if t.is_punct(ts - 1, b'*') {
            ts -= 1;
        }
        let Some(name) = ts.checked_sub(1).and_then(|x| t.ident(x)) else {
            return;
        };
        if is_keyword(name) || t.is_punct(k + 1, b'.') {
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
        self.bindings
            .entry(name)
            .or_default()
            .push((svc.to_string(), scope));
    }

    fn calls(&mut self) {
        let t = self.t;
        if self.bindings.is_empty() {
            return;
        }
        for k in 0..t.len() {
            // The shape first (cheap), the hash lookup last.
            if !t.is_punct(k + 1, b'.') || !t.is_punct(k + 3, b'(') {
                continue;
            }
            let (Some(recv), Some(method)) = (t.ident(k), t.ident(k + 2)) else {
                continue;
            };
            if !method.starts_with(|c: char| c.is_ascii_uppercase()) {
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

    fn push_event(&mut self, role: EventRole, topic: Value, via: &str, line: u32) {
        self.facts.events.push(EventFact {
            role,
            topic,
            via: via.to_string(),
            line,
        });
    }

    /// Kafka message/config composite literals: `sarama.ProducerMessage{Topic: …}`,
    /// `kafka.WriterConfig{Topic: …}`, `kafka.ReaderConfig{Topic|GroupTopics: …}`,
    /// `kafka.Message{Topic: …}`, `kafka.TopicPartition{Topic: &t}`, `kgo.Record{Topic: …}`.
    fn composite_event(&mut self, k: usize, id: &str) {
        let t = self.t;
        let qualified_by = |pkg: &str| k >= 2 && t.is_punct(k - 1, b'.') && t.is(k - 2, pkg);
        let (role, via) = match id {
            "ProducerMessage" => (EventRole::Producer, "sarama"),
            "WriterConfig" | "Writer" if qualified_by("kafka") => (EventRole::Producer, "kafka-go"),
            "Message" if qualified_by("kafka") => (EventRole::Producer, "kafka-go"),
            "ReaderConfig" if qualified_by("kafka") => (EventRole::Consumer, "kafka-go"),
            "TopicPartition" => (EventRole::Producer, "confluent-kafka"),
            "Record" if qualified_by("kgo") => (EventRole::Producer, "franz-go"),
            _ => return,
        };
        let open = k + 1;
        for (a, b) in t.args(open) {
            if !t.is_punct(a + 1, b':') || b <= a + 2 {
                continue;
            }
            if t.is(a, "Topic") {
                if let Some(topic) = self.topic_expr((a + 2, b)) {
                    self.push_event(role, topic, via, t.line(a + 2));
                }
            } else if t.is(a, "GroupTopics") {
                for (topic, line) in self.topic_list((a + 2, b), k) {
                    self.push_event(role, topic, via, line);
                }
            }
        }
    }

    /// Kafka calls naming topics: sarama `ConsumePartition("t", …)` and consumer-group
    /// `Consume(ctx, []string{…}, h)`, confluent `SubscribeTopics([]string{…}, nil)` and
    /// `Subscribe("t", nil)`, franz-go `kgo.ConsumeTopics("a", "b")`; AMQP `Publish`,
    /// `PublishWithContext` and `Consume` on a channel.
    fn call_event(&mut self, k: usize, id: &str) {
        let t = self.t;
        let method = k > 0 && t.is_punct(k - 1, b'.');
        if !matches!(
            id,
            "ConsumePartition"
                | "Consume"
                | "SubscribeTopics"
                | "Subscribe"
                | "ConsumeTopics"
                | "Publish"
                | "PublishWithContext"
                | "PublishWithDeferredConfirm"
                | "PublishWithDeferredConfirmWithContext"
                | "ConsumeWithContext"
                | "QueueDeclare"
                | "QueueBind"
        ) {
            return;
        }
        let args = t.args(k + 1);
        if method && self.libs.amqp && self.amqp_event(k, id, &args) {
            return;
        }
        let (role, via, list_arg) = match id {
            "ConsumePartition" if method => (EventRole::Consumer, "sarama", None),
            "Consume" if method && self.libs.sarama && args.len() == 3 => {
                (EventRole::Consumer, "sarama", Some(1))
            }
            "SubscribeTopics" if method => (EventRole::Consumer, "confluent-kafka", Some(0)),
            "Subscribe" if method && self.libs.confluent => {
                (EventRole::Consumer, "confluent-kafka", None)
            }
            "ConsumeTopics" if k >= 2 && t.is(k - 2, "kgo") => {
                for &r in &args {
                    if let Some(topic) = self.topic_expr(r) {
                        self.push_event(EventRole::Consumer, topic, "franz-go", t.line(r.0));
                    }
                }
                return;
            }
            _ => return,
        };
        match list_arg {
            Some(i) => {
                if let Some(&r) = args.get(i) {
                    for (topic, line) in self.topic_list(r, k) {
                        self.push_event(role, topic, via, line);
                    }
                }
            }
            None => {
                if let Some(&r) = args.first()
                    && let Some(topic) = self.topic_expr(r)
                {
                    self.push_event(role, topic, via, t.line(r.0));
                }
            }
        }
    }

    /// AMQP (amqp091-go, streadway/amqp) on a channel: `Publish(exchange, key, mandatory,
    /// immediate, msg)` and `PublishWithContext(ctx, exchange, key, …)` produce to the routing
    /// key, or to the exchange when the key is empty; `Consume(queue, consumer, autoAck,
    /// exclusive, noLocal, noWait, args)` consumes the queue. `QueueDeclare` and `QueueBind`
    /// only set up (they are remembered so `q.Name` reads as the queue's name). Returns false
    /// when the call is not one of these shapes.
    fn amqp_event(&mut self, k: usize, id: &str, args: &[(usize, usize)]) -> bool {
        let t = self.t;
        let ctx = usize::from(id.ends_with("WithContext"));
        match id {
            "Publish"
            | "PublishWithContext"
            | "PublishWithDeferredConfirm"
            | "PublishWithDeferredConfirmWithContext"
                if args.len() == 5 + ctx =>
            {
                let topic = self
                    .amqp_name(args[ctx + 1], k)
                    .or_else(|| self.amqp_name(args[ctx], k));
                if let Some(topic) = topic {
                    self.push_event(EventRole::Producer, topic, "amqp", t.line(k));
                }
                true
            }
            "Consume" | "ConsumeWithContext" if args.len() == 7 + ctx => {
                if let Some(topic) = self.amqp_queue(args[ctx], k) {
                    self.push_event(EventRole::Consumer, topic, "amqp", t.line(k));
                }
                true
            }
            "QueueDeclare" if args.len() == 6 => {
                // `q, err := ch.QueueDeclare(…)`: the first name on the left.
                let start = chain_start(t, k);
                let mut j = start;
                if t.is_punct(j.wrapping_sub(1), b'=') {
                    j -= 1;
                    if t.is_punct(j.wrapping_sub(1), b':') {
                        j -= 1;
                    }
                    let mut var = None;
                    while let Some(name) = j.checked_sub(1).and_then(|p| t.ident(p)) {
                        var = Some(name);
                        j -= 1;
                        if !t.is_punct(j.wrapping_sub(1), b',') {
                            break;
                        }
                        j -= 1;
                    }
                    if let Some(var) = var.filter(|v| *v != "_") {
                        self.queues.push(Queue {
                            var,
                            at: k,
                            func: self.enclosing_func(k),
                            name: args[0],
                            bind: None,
                        });
                    }
                }
                true
            }
            "QueueBind" if args.len() == 5 => {
                let (q, key, exchange) = (args[0], args[1], args[2]);
                if q.1 == q.0 + 3
                    && t.is_punct(q.0 + 1, b'.')
                    && t.is(q.0 + 2, "Name")
                    && let Some(i) = self.queue_of(t.text(q.0), k)
                    && self.queues[i].bind.is_none()
                {
                    self.queues[i].bind = Some((key, exchange));
                }
                true
            }
            _ => false,
        }
    }

    /// The queue a variable holds at token `at`: the last `QueueDeclare` into it in the same
    /// function.
    fn queue_of(&self, var: &str, at: usize) -> Option<usize> {
        let here = self.enclosing_func(at);
        self.queues
            .iter()
            .rposition(|q| q.var == var && q.at < at && q.func == here)
    }

    /// An exchange, routing key or queue argument: `q.Name` of a declared queue is the name it
    /// was declared with; anything else is read as a topic. An empty literal is no name.
    fn amqp_name(&self, r: (usize, usize), at: usize) -> Option<Value> {
        let t = self.t;
        if r.1 == r.0 + 3
            && t.is_punct(r.0 + 1, b'.')
            && t.is(r.0 + 2, "Name")
            && let Some(i) = self.queue_of(t.text(r.0), at)
        {
            return self.topic_expr(self.queues[i].name);
        }
        self.topic_expr(r)
    }

    /// The queue a `Consume` reads: its name, or for a server-named queue
    /// (`QueueDeclare("", …)`) what it is bound to — the binding key, else the exchange — which
    /// is what publishers name.
    fn amqp_queue(&self, r: (usize, usize), at: usize) -> Option<Value> {
        let t = self.t;
        if r.1 == r.0 + 3
            && t.is_punct(r.0 + 1, b'.')
            && t.is(r.0 + 2, "Name")
            && let Some(i) = self.queue_of(t.text(r.0), at)
        {
            let q = self.queues[i];
            if let Some(name) = self.topic_expr(q.name) {
                return Some(name);
            }
            let (key, exchange) = q.bind?;
            return self.topic_expr(key).or_else(|| self.topic_expr(exchange));
        }
        self.topic_expr(r)
    }

    /// The topics of a `[]string{…}` literal, or of a variable assigned one.
    fn topic_list(&self, (s, e): (usize, usize), at: usize) -> Vec<(Value, u32)> {
        let t = self.t;
        let mut out = Vec::new();
        let list_at = |s: usize| {
            t.is_punct(s, b'[')
                && t.is_punct(s + 1, b']')
                && t.is(s + 2, "string")
                && t.is_punct(s + 3, b'{')
        };
        let s = if t.is_punct(s, b'&') { s + 1 } else { s };
        let items = if list_at(s) {
            Some(s + 3)
        } else if e == s + 1
            && let Some(name) = t.ident(s)
            && let Some(a) = self.asg.last(name, at)
            && list_at(a.rhs.0)
        {
            Some(a.rhs.0 + 3)
        } else {
            None
        };
        match items {
            Some(open) => {
                for r in t.args(open) {
                    if let Some(topic) = self.topic_expr(r) {
                        out.push((topic, t.line(r.0)));
                    }
                }
            }
            None => {
                if let Some(topic) = self.topic_expr((s, e)) {
                    out.push((topic, t.line(s)));
                }
            }
        }
        out
    }

    /// The value of the expression in `r`, read by the shared evaluator. Go's own fallback
    /// stays here: `cmp.Or(os.Getenv("T"), "d")` is the first non-empty of its arguments, so
    /// an env lookup gains the literal default.
    fn value(&self, (s, e): (usize, usize)) -> Value {
        let t = self.t;
        let e = e.min(t.len());
        if s >= e {
            return Value::dynamic();
        }
        if t.kw(s, "cmp")
            && t.is_punct(s + 1, b'.')
            && t.kw(s + 2, "Or")
            && t.is_punct(s + 3, b'(')
            && t.close(s + 3) == Some(e - 1)
        {
            let mut v: Option<Value> = None;
            for r in t.args(s + 3) {
                let next = self.value(r);
                v = Some(match v {
                    None => next,
                    Some(left) => with_fallback(left, &next),
                });
            }
            return v.unwrap_or_else(Value::dynamic);
        }
        eval(t, (s, e), &ExprRules::GO, self.asg)
    }

    /// A topic argument: a literal that looks like a topic name, or whatever the evaluator
    /// reads — an environment lookup with its default, a constant left to the graph
    /// (`ordersTopic`, `config.PaymentsTopic`), a local traced to its value, or a run-time
    /// value (a parameter), kept so the graph lists the site as unresolved.
    fn topic_expr(&self, r: (usize, usize)) -> Option<Value> {
        if r.0 >= r.1 {
            return None;
        }
        let v = self.value(r);
        match v.as_lit() {
            Some(lit) => looks_like_topic(lit).then_some(v),
            None => Some(v),
        }
    }

    /// The URL argument of an HTTP call. `sure` when the call is HTTP whatever its argument
    /// (`http.Get`, `http.NewRequest`, resty's `R().Get`); otherwise it must read like a URL,
    /// so `cache.Get(key)` is no request.
    fn url(&self, r: (usize, usize), sure: bool) -> Option<Value> {
        if r.0 >= r.1 {
            return None;
        }
        let v = self.value(r);
        (sure || looks_like_url(&v)).then_some(v)
    }

    /// The text of a route path argument: a literal, or a value made of literals and the
    /// file's own constants and locals (`prefix + "/basket"` with `const prefix = "/api"`).
    fn route_text(&self, r: (usize, usize)) -> Option<String> {
        if r.0 >= r.1 {
            return None;
        }
        self.file_text(&self.value(r), 0)
    }

    /// The text of `v` when every name in it is a constant of this file with a text value.
    fn file_text(&self, v: &Value, depth: u8) -> Option<String> {
        let mut out = String::new();
        for p in &v.parts {
            match p {
                Part::Lit(s) => out.push_str(s),
                Part::Ref { name, .. } if depth < 4 => {
                    let b = self.facts.bindings.iter().rev().find(|b| b.name == *name)?;
                    out.push_str(&self.file_text(&b.value, depth + 1)?);
                }
                _ => return None,
            }
        }
        Some(out)
    }

    // -----------------------------------------------------------------------------------------
    // HTTP
    // -----------------------------------------------------------------------------------------

    /// Routes (`HandleFunc`, gin/echo `GET`, chi `Get`/`Route`/`Method`, groups) and client
    /// calls (`http.Get`, `http.NewRequest`, `client.Post`, resty `R().Get`).
    fn http(&mut self, k: usize, id: &str) {
        let t = self.t;
        if k == 0 || !t.is_punct(k - 1, b'.') {
            return;
        }
        let interesting = matches!(
            id,
            "HandleFunc"
                | "Handle"
                | "PostForm"
                | "NewRequest"
                | "NewRequestWithContext"
                | "Method"
                | "MethodFunc"
                | "Route"
                | "Group"
                | "PathPrefix"
        ) || GIN_METHODS.contains(&id)
            || CHI_METHODS.contains(&id);
        if !interesting {
            return;
        }
        let recv = k.checked_sub(2).and_then(|r| t.ident(r));
        let args = t.args(k + 1);
        let line = t.line(k);
        while self.route_stack.last().is_some_and(|&(c, _)| c < k) {
            self.route_stack.pop();
        }
        let path_arg = |r: (usize, usize)| -> Option<String> {
            self.route_text(r)
                .filter(|p| p.is_empty() || p.starts_with('/'))
        };
        match id {
            "HandleFunc" | "Handle" if args.len() >= 2 => {
                let Some(pattern) = self.route_text(args[0]) else {
                    return;
                };
                let (method, path) = match pattern.split_once(' ') {
                    Some((m, p)) if HTTP_METHODS.contains(&m) => (m.to_string(), p.trim()),
                    _ => ("ANY".to_string(), pattern.as_str()),
                };
                // A host in the pattern (`example.com/x`) is not part of the path.
                let path = match path.find('/') {
                    Some(i) => &path[i..],
                    None => return,
                };
                // gorilla/mux: `.HandleFunc(…).Methods("GET", "HEAD")`, one route per method.
                let mut methods: Vec<String> = Vec::new();
                if let Some(c) = t.close(k + 1)
                    && t.is_punct(c + 1, b'.')
                    && t.is(c + 2, "Methods")
                    && t.is_punct(c + 3, b'(')
                {
                    methods = t
                        .args(c + 3)
                        .into_iter()
                        .filter_map(|m| self.method_arg(m))
                        .collect();
                    methods.dedup();
                }
                if methods.is_empty() {
                    methods.push(method);
                }
                let handler = self.handler_name(args[1]);
                for method in &methods {
                    self.route(recv, method, path, handler.clone(), line);
                }
            }
            _ if GIN_METHODS.contains(&id) && args.len() >= 2 => {
                if let Some(path) = path_arg(args[0]) {
                    let method = if id == "Any" { "ANY" } else { id };
                    let handler = self.handler_name(args[args.len() - 1]);
                    self.route(recv, method, &path, handler, line);
                }
            }
            _ if CHI_METHODS.contains(&id) => {
                let method = id.to_ascii_uppercase();
                // A handler is a name, a selector, a function literal or a wrapper call.
                let route_path =
                    (recv != Some("http") && args.len() == 2 && t.ident(args[1].0).is_some())
                        .then(|| path_arg(args[0]))
                        .flatten();
                if let Some(path) = route_path {
                    let handler = self.handler_name(args[1]);
                    self.route(recv, &method, &path, handler, line);
                } else if matches!(id, "Get" | "Post" | "Put" | "Delete" | "Patch" | "Head")
                    // net/http and resty take the URL alone; `Post(url, contentType, body)`.
                    && (args.len() == 1 || (id == "Post" && args.len() == 3))
                    && let Some(&url) = args.first()
                {
                    // `http.Get`, `http.DefaultClient.Get` and resty's `R().Get` are requests
                    // whatever the URL; any other receiver needs a URL-looking argument.
                    let sure = matches!(recv, Some("http" | "DefaultClient")) || self.resty(k);
                    self.http_call(Some(method), url, k, sure);
                }
            }
            "PostForm" if recv == Some("http") || args.len() == 2 => {
                if let Some(&url) = args.first() {
                    let sure = recv == Some("http");
                    self.http_call(Some("POST".to_string()), url, k, sure);
                }
            }
            "NewRequest" | "NewRequestWithContext" => {
                // The request is sent later (`client.Do(req)`); the site is where it is built,
                // with its method and URL.
                let skip = usize::from(id == "NewRequestWithContext");
                let (Some(&m), Some(&url)) = (args.get(skip), args.get(skip + 1)) else {
                    return;
                };
                let method = self.method_arg(m);
                let sure = recv == Some("http") || method.is_some();
                self.http_call(method, url, k, sure);
            }
            "Method" | "MethodFunc" if args.len() == 3 => {
                if let (Some(m), Some(path)) = (self.route_text(args[0]), path_arg(args[1])) {
                    let handler = self.handler_name(args[2]);
                    self.route(recv, &m.to_ascii_uppercase(), &path, handler, line);
                }
            }
            "Route" if args.len() == 2 => {
                if let Some(path) = path_arg(args[0]) {
                    let full = join_path(&self.prefix_for(recv), &path);
                    let close = t.close(k + 1).unwrap_or(t.len());
                    self.route_stack.push((close, full));
                }
            }
            "Group" | "PathPrefix" if !args.is_empty() => {
                if let Some(path) = path_arg(args[0])
                    && let Some(a) = self.assign_starting_at(chain_start(t, k))
                {
                    let full = join_path(&self.prefix_for(recv), &path);
                    self.group_prefix.insert(t.text(a.at), full);
                }
            }
            _ => {}
        }
    }

    /// True when the call at `k` is a method of a resty request (`client.R().Get(…)`,
    /// `resty.New().R().SetBody(b).Post(…)`).
    fn resty(&self, k: usize) -> bool {
        let t = self.t;
        let mut j = k.saturating_sub(2);
        for _ in 0..8 {
            let Some(open) = t.is_punct(j, b')').then(|| t.open_of(j)).flatten() else {
                return false;
            };
            if open == 0 {
                return false;
            }
            if t.is(open - 1, "R") && t.is_punct(open - 2, b'.') {
                return true;
            }
            if !t.is_punct(open.wrapping_sub(2), b'.') {
                return false;
            }
            j = open.saturating_sub(3);
        }
        false
    }

    /// An HTTP method argument: `"GET"` or `http.MethodGet`.
    fn method_arg(&self, (s, e): (usize, usize)) -> Option<String> {
        let t = self.t;
        let m = if e == s + 1 && t.is_str(s) {
            t.str_value(s)?.to_ascii_uppercase()
        } else if e == s + 3 && t.is(s, "http") {
            t.ident(s + 2)?.strip_prefix("Method")?.to_ascii_uppercase()
        } else {
            return None;
        };
        HTTP_METHODS.contains(&m.as_str()).then_some(m)
    }

    /// The prefix in force for routes on `recv`: the innermost chi `Route` scope, then the
    /// receiver's group prefix.
    fn prefix_for(&self, recv: Option<&str>) -> String {
        let outer = self
            .route_stack
            .last()
            .map_or(String::new(), |(_, p)| p.clone());
        let group = recv
            .and_then(|r| self.group_prefix.get(r))
            .map_or("", String::as_str);
        if group.is_empty() {
            outer
        } else {
            join_path(&outer, group)
        }
    }

    fn route(
        &mut self,
        recv: Option<&str>,
        method: &str,
        path: &str,
        handler: Option<String>,
        line: u32,
    ) {
        let prefix = self.prefix_for(recv);
        let full = join_path(&prefix, path);
        if full.is_empty() {
            return;
        }
        self.facts.http.push(HttpFact::Route {
            method: method.to_string(),
            path: full,
            handler,
            line,
        });
    }

    /// The function a handler argument names: `h`, `s.createOrder`, `http.HandlerFunc(h)`,
    /// `mw(h)`; `None` for a function literal.
    fn handler_name(&self, (mut s, mut e): (usize, usize)) -> Option<String> {
        let t = self.t;
        for _ in 0..4 {
            if s >= e || t.is(s, "func") {
                return None;
            }
            let mut j = s;
            while j < e && (t.ident(j).is_some() || t.is_punct(j, b'.')) {
                j += 1;
            }
            if j == e {
                return t.ident(e - 1).map(str::to_string);
            }
            // A wrapper call: look at its last argument.
            if t.is_punct(j, b'(') && t.close(j) == Some(e - 1) {
                let &(a, b) = t.args(j).last()?;
                s = a;
                e = b;
                continue;
            }
            return None;
        }
        None
    }

    fn http_call(&mut self, method: Option<String>, url: (usize, usize), k: usize, sure: bool) {
        if let Some(url) = self.url(url, sure) {
            self.facts.http.push(HttpFact::Call {
                method,
                url,
                line: self.t.line(k),
            });
        }
    }
}

/// The first token of a selector chain ending at `k`: `pb . NewOrdersClient` gives `pb`.
fn chain_start(t: &Tokens, k: usize) -> usize {
    let mut s = k;
    while s >= 2 && t.is_punct(s - 1, b'.') && t.ident(s - 2).is_some() {
        s -= 2;
    }
    s
}

/// True when a line ending with token `k` continues on the next line.
fn continues(t: &Tokens, k: usize) -> bool {
    if t.kind(k) != Some(super::tokens::TokKind::Punct) {
        return false;
    }
    let b = t.text(k).as_bytes()[0];
    if (b == b'+' || b == b'-') && k > 0 && t.joined(k - 1) && t.is_punct(k - 1, b) {
        return false; // `i++`, `i--`
    }
    b",+-*/%&|^<>=!.:([{".contains(&b)
}

/// Splits `s..e` at top-level commas.
fn split_commas(t: &Tokens, s: usize, e: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = s;
    let mut k = s;
    while k < e {
        if t.is_punct(k, b',') {
            out.push((start, k));
            start = k + 1;
            k += 1;
        } else {
            k = t.skip_group(k).clamp(k + 1, e);
        }
    }
    if start < e {
        out.push((start, e));
    }
    out
}

fn is_keyword(s: &str) -> bool {
    matches!(
        s,
        "func"
            | "return"
            | "var"
            | "const"
            | "type"
            | "struct"
            | "interface"
            | "map"
            | "chan"
            | "go"
            | "defer"
            | "if"
            | "else"
            | "for"
            | "range"
            | "switch"
            | "case"
            | "nil"
            | "true"
            | "false"
            | "package"
            | "import"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::lang::test_support::{
        bindings, events, every_short_token_sequence, extract_each, grpc_calls, grpc_clients,
        grpc_servers, has_sym, http_calls as calls, import_aliases, junk_bytes32, lit, routes, sym,
    };

    #[test]
    fn package_functions_methods_and_generics() {
        let src = r#"// Package orders serves orders.
package orders

// NewServer builds a server.
// It is cheap.
func NewServer(repo Repo) *orderServer {
	return &orderServer{repo: repo}
}

func (s *orderServer) CreateOrder(
	ctx context.Context,
	req *pb.CreateOrderRequest,
) (*pb.CreateOrderResponse, error) {
	return nil, nil
}

func (l *List[T]) Push(v T) { l.items = append(l.items, v) }

func Map[T, U any](xs []T, f func(T) U) []U {
	return nil
}

func Empty() interface{} { return nil }

//go:noinline
func asmStub(x int) int
"#;
        let f = extract("orders/server.go", src);
        assert_eq!(f.package.as_deref(), Some("orders"));
        let ns = sym(&f, "NewServer");
        assert_eq!(
            (ns.kind, ns.line, ns.end_line, ns.doc_line),
            (SymbolKind::Function, 6, 8, Some(4))
        );
        let co = sym(&f, "CreateOrder");
        assert_eq!(co.kind, SymbolKind::Method);
        assert_eq!(co.container.as_deref(), Some("orderServer"));
        assert_eq!((co.line, co.end_line, co.doc_line), (10, 15, None));
        let push = sym(&f, "Push");
        assert_eq!(push.container.as_deref(), Some("List"));
        assert_eq!((push.line, push.end_line), (17, 17));
        let m = sym(&f, "Map");
        assert_eq!((m.kind, m.line, m.end_line), (SymbolKind::Function, 19, 21));
        assert_eq!(sym(&f, "Empty").end_line, 23);
        let stub = sym(&f, "asmStub");
        assert_eq!(
            (stub.line, stub.end_line, stub.doc_line),
            (26, 26, Some(25))
        );
        assert_eq!(f.symbols.len(), 6, "{:#?}", f.symbols);
    }

    #[test]
    fn types_consts_vars_and_iota_enums() {
        let src = r#"package model

type Order struct {
	ID    string
	Items []Item
}

// Store persists orders.
type Store interface {
	Get(ctx context.Context, id string) (*Order, error)
	// Put writes one.
	Put(ctx context.Context,
		o *Order) error
	io.Closer
}

type (
	ID = string
	Status int
	Pair[K comparable, V any] struct{ k K; v V }
	Matrix [4]int
)

const (
	StatusUnknown Status = iota
	StatusOpen
	StatusClosed
)

const (
	A = iota
	B
)

// OrdersTopic is where orders go.
const OrdersTopic = "orders.created"

const (
	PaymentsTopic = "payments." + "done"
	maxItems      = 10
	_             = "ignored"
)

var (
	refundsTopic = getenv("REFUNDS_TOPIC", "refunds")
	shipTopic    = cmp.Or(os.Getenv("SHIP_TOPIC"), "shipments")
	plainEnv     = os.Getenv("X")
	a, b         = "x", "y"
)

var defaultTimeout = 3 * time.Second
"#;
        let f = extract("model/model.go", src);
        let o = sym(&f, "Order");
        assert_eq!((o.kind, o.line, o.end_line), (SymbolKind::Struct, 3, 6));
        let st = sym(&f, "Store");
        assert_eq!(
            (st.kind, st.end_line, st.doc_line),
            (SymbolKind::Interface, 15, Some(8))
        );
        let get = sym(&f, "Get");
        assert_eq!(
            (get.kind, get.container.as_deref(), get.line),
            (SymbolKind::Method, Some("Store"), 10)
        );
        let put = sym(&f, "Put");
        assert_eq!((put.line, put.end_line, put.doc_line), (12, 13, Some(11)));
        assert!(!has_sym(&f, "Closer"));
        assert_eq!(sym(&f, "ID").kind, SymbolKind::TypeAlias);
        assert_eq!(sym(&f, "Status").kind, SymbolKind::Enum);
        let pair = sym(&f, "Pair");
        assert_eq!((pair.kind, pair.line), (SymbolKind::Struct, 20));
        assert_eq!(sym(&f, "Matrix").kind, SymbolKind::TypeAlias);
        for (name, line) in [
            ("StatusUnknown", 25),
            ("StatusOpen", 26),
            ("StatusClosed", 27),
        ] {
            let s = sym(&f, name);
            assert_eq!(
                (s.kind, s.container.as_deref(), s.line),
                (SymbolKind::EnumValue, Some("Status"), line),
                "{name}"
            );
        }
        assert_eq!(sym(&f, "A").kind, SymbolKind::Constant);
        assert_eq!(sym(&f, "B").kind, SymbolKind::Constant);
        let ot = sym(&f, "OrdersTopic");
        assert_eq!((ot.kind, ot.doc_line), (SymbolKind::Constant, Some(35)));
        assert_eq!(sym(&f, "refundsTopic").kind, SymbolKind::Variable);
        assert!(!has_sym(&f, "_"));
        let consts = bindings(&f);
        let env = |v: &str, d: Option<&str>| Value::env(v, d.map(str::to_string));
        assert_eq!(
            consts,
            vec![
                ("OrdersTopic", lit("orders.created")),
                ("PaymentsTopic", lit("payments.done")),
                // Every value the evaluator reads is a binding, numbers too.
                ("maxItems", lit("10")),
                // Env lookups stay lookups with their defaults: the graph answers `env
                // REFUNDS_TOPIC default` instead of a bare literal.
                ("refundsTopic", env("REFUNDS_TOPIC", Some("refunds"))),
                ("shipTopic", env("SHIP_TOPIC", Some("shipments"))),
                ("plainEnv", env("X", None)),
                ("a", lit("x")),
                ("b", lit("y")),
            ]
        );
        assert_eq!(f.bindings[0].line, 36);
        assert!(has_sym(&f, "defaultTimeout"));
    }

    #[test]
    fn imports_single_grouped_aliased_blank_and_dot() {
        let src = r#"package main

import "fmt"

import (
	"context"
	pb "github.com/acme/orders/gen/orders/v1"
	_ "github.com/lib/pq"
	. "github.com/onsi/gomega"
	raw `github.com/acme/raw`
)
"#;
        let f = extract("main.go", src);
        let got = import_aliases(&f);
        assert_eq!(
            got,
            vec![
                ("fmt", None, 3),
                ("context", None, 6),
                ("github.com/acme/orders/gen/orders/v1", Some("pb"), 7),
                ("github.com/lib/pq", Some("_"), 8),
                ("github.com/onsi/gomega", Some("."), 9),
                ("github.com/acme/raw", Some("raw"), 10),
            ]
        );
        assert!(f.imports.iter().all(|i| i.names.is_empty() && !i.reexport));
    }

    #[test]
    fn grpc_servers_from_literals_constructors_and_variables() {
        let src = r#"package main

type orderServer struct{ pb.UnimplementedOrderServiceServer }

func newPaymentServer(db *sql.DB) pb.PaymentServiceServer {
	return &paymentServer{db: db}
}

func main() {
	s := grpc.NewServer()
	pb.RegisterOrderServiceServer(s, &orderServer{})
	pb.RegisterPaymentServiceServer(s, newPaymentServer(db))
	srv := &shippingServer{}
	pb.RegisterShippingServiceServer(s, srv)
	pb.RegisterRefundServiceServer(s, refunds.NewServer())
	s.RegisterService(&pb.Audit_ServiceDesc, auditImpl{})
	healthpb.RegisterHealthServer(s, health.NewServer())
}
"#;
        let f = extract("main.go", src);
        let servers = grpc_servers(&f);
        assert_eq!(
            servers,
            vec![
                ("OrderService", Some("orderServer"), 11),
                ("PaymentService", Some("paymentServer"), 12),
                ("ShippingService", Some("shippingServer"), 14),
                ("RefundService", None, 15),
                ("Audit", Some("auditImpl"), 16),
                ("Health", None, 17),
            ]
        );
    }

    #[test]
    fn a_client_built_in_the_call_expression_and_getters() {
        let src = "package web\n\nfunc f(ctx context.Context, conn *grpc.ClientConn) {\n\tresp, _ := pb.NewOfferServiceClient(conn).GetOffers(ctx, &pb.Req{})\n\t_, _ = pb.NewOfferServiceClient(conn).\n\t\tGetOffers(ctx, req)\n\tfor _, o := range resp.GetOffers() {\n\t\t_ = o\n\t}\n}\n";
        let f = extract("web.go", src);
        let calls = grpc_calls(&f);
        // `resp.GetOffers()` reads a field of the response message: no call.
        assert_eq!(
            calls,
            vec![
                (Some("OfferService"), "GetOffers", 4),
                (Some("OfferService"), "GetOffers", 6),
            ]
        );
    }

    #[test]
    fn grpc_clients_bindings_and_calls() {
        let src = r#"package gateway

type Gateway struct {
	orders   pb.OrderServiceClient
	payments *paypb.PaymentServiceClient
	log      *zap.Logger
}

func New(conn *grpc.ClientConn) *Gateway {
	g := &Gateway{}
	g.orders = pb.NewOrderServiceClient(conn)
	return g
}

func NewWithLiteral(conn *grpc.ClientConn) *Gateway {
	return &Gateway{
		payments: paypb.NewPaymentServiceClient(conn),
	}
}

func (g *Gateway) Create(ctx context.Context) error {
	_, err := g.orders.CreateOrder(ctx, &pb.CreateOrderRequest{})
	g.log.Info("created")
	g.payments.
		Charge(ctx, nil)
	return err
}

func run(conn *grpc.ClientConn) {
	c := shippb.NewShippingServiceClient(conn)
	resp, err := c.Ship(ctx, &shippb.ShipRequest{})
	_ = pb.NewStockServiceClient(conn)
}

func other(c *gin.Context) {
	c.JSON(200, nil)
}

func params(ctx context.Context, inv invpb.InventoryServiceClient) {
	inv.Reserve(ctx, nil)
}
"#;
        let f = extract("gateway.go", src);
        let clients = grpc_clients(&f);
        assert_eq!(
            clients,
            vec![
                ("OrderService", Some("orders"), 11),
                ("PaymentService", Some("payments"), 17),
                ("ShippingService", Some("c"), 30),
                ("StockService", None, 32),
            ]
        );
        let calls: Vec<(Option<&str>, &str, &str, u32)> = f
            .grpc
            .iter()
            .filter_map(|g| match g {
                GrpcFact::Call {
                    service,
                    receiver,
                    method,
                    line,
                } => Some((
                    service.as_deref(),
                    receiver.as_str(),
                    method.as_str(),
                    *line,
                )),
                _ => None,
            })
            .collect();
        assert_eq!(
            calls,
            vec![
                (Some("OrderService"), "orders", "CreateOrder", 22),
                (Some("PaymentService"), "payments", "Charge", 25),
                (Some("ShippingService"), "c", "Ship", 31),
                (Some("InventoryService"), "inv", "Reserve", 40),
            ]
        );
    }

    #[test]
    fn sarama_and_topic_references() {
        let src = r#"package events

import "github.com/IBM/sarama"

const ordersTopic = "orders.created"

func publish(p sarama.SyncProducer, topic string) {
	msg := &sarama.ProducerMessage{
		Topic: ordersTopic,
		Value: sarama.StringEncoder("x"),
	}
	p.SendMessage(&sarama.ProducerMessage{Topic: "orders.audit"})
	p.SendMessage(&sarama.ProducerMessage{Topic: topic})
	p.SendMessage(&sarama.ProducerMessage{Topic: config.PaymentsTopic})
	p.SendMessage(&sarama.ProducerMessage{Topic: os.Getenv("REFUND_TOPIC")})
	p.SendMessage(&sarama.ProducerMessage{Topic: envOr("SHIP_TOPIC", "shipments")})
	p.SendMessage(&sarama.ProducerMessage{Topic: fmt.Sprintf("x-%d", 1)})
}

func consume(c sarama.Consumer, g sarama.ConsumerGroup) {
	pc, _ := c.ConsumePartition("payments.done", 0, sarama.OffsetNewest)
	g.Consume(ctx, []string{"orders.created", ordersTopic}, handler)
	topics := []string{"stock.changed"}
	g.Consume(ctx, topics, handler)
}
"#;
        let f = extract("events.go", src);
        use EventRole::*;
        assert_eq!(
            events(&f),
            vec![
                (Producer, Value::reference("ordersTopic"), "sarama", 9),
                (Producer, lit("orders.audit"), "sarama", 12),
                // A parameter: a run-time topic, kept so the graph lists the site as
                // unresolved.
                (Producer, Value::dynamic(), "sarama", 13),
                (
                    Producer,
                    Value::reference("config.PaymentsTopic"),
                    "sarama",
                    14
                ),
                (Producer, Value::env("REFUND_TOPIC", None), "sarama", 15),
                (
                    Producer,
                    Value::env("SHIP_TOPIC", Some("shipments".into())),
                    "sarama",
                    16
                ),
                // `fmt.Sprintf` with literal arguments is a literal.
                (Producer, lit("x-1"), "sarama", 17),
                (Consumer, lit("payments.done"), "sarama", 21),
                (Consumer, lit("orders.created"), "sarama", 22),
                (Consumer, Value::reference("ordersTopic"), "sarama", 22),
                (Consumer, lit("stock.changed"), "sarama", 23),
            ]
        );
    }

    #[test]
    fn kafka_go_and_confluent_and_franz() {
        let src = r#"package events

import (
	"github.com/segmentio/kafka-go"
	ck "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

func writers() {
	w := kafka.NewWriter(kafka.WriterConfig{Brokers: b, Topic: "orders.created"})
	w2 := &kafka.Writer{
		Addr:  kafka.TCP("localhost:9092"),
		Topic: "orders.shipped",
	}
	w3 := kafka.Writer{Topic: TopicRefunds}
	w.WriteMessages(ctx, kafka.Message{Topic: "orders.audit", Value: v})
	r := kafka.NewReader(kafka.ReaderConfig{Topic: "payments.done", GroupID: "g"})
	r2 := kafka.NewReader(kafka.ReaderConfig{GroupTopics: []string{"a.one", "a.two"}})
	w.WriteMessages(ctx, kafka.Message{Value: v})
}

func confluent(p *ck.Producer, c *ck.Consumer) {
	topic := "invoices.issued"
	p.Produce(&ck.Message{
		TopicPartition: ck.TopicPartition{Topic: &topic, Partition: ck.PartitionAny},
		Value:          []byte("x"),
	}, nil)
	c.SubscribeTopics([]string{"invoices.paid", "invoices.void"}, nil)
	c.Subscribe("invoices.sent", nil)
	cl, _ := kgo.NewClient(kgo.ConsumeTopics("franz.in"))
	cl.Produce(ctx, &kgo.Record{Topic: "franz.out"}, nil)
}
"#;
        let f = extract("events.go", src);
        use EventRole::*;
        assert_eq!(
            events(&f),
            vec![
                (Producer, lit("orders.created"), "kafka-go", 9),
                (Producer, lit("orders.shipped"), "kafka-go", 12),
                (Producer, Value::reference("TopicRefunds"), "kafka-go", 14),
                (Producer, lit("orders.audit"), "kafka-go", 15),
                (Consumer, lit("payments.done"), "kafka-go", 16),
                (Consumer, lit("a.one"), "kafka-go", 17),
                (Consumer, lit("a.two"), "kafka-go", 17),
                (Producer, lit("invoices.issued"), "confluent-kafka", 24),
                (Consumer, lit("invoices.paid"), "confluent-kafka", 27),
                (Consumer, lit("invoices.void"), "confluent-kafka", 27),
                (Consumer, lit("invoices.sent"), "confluent-kafka", 28),
                (Consumer, lit("franz.in"), "franz-go", 29),
                (Producer, lit("franz.out"), "franz-go", 30),
            ]
        );
    }

    #[test]
    fn subscribe_needs_a_kafka_import() {
        let src = "package n\nfunc f(nc *nats.Conn) { nc.Subscribe(\"orders\", h); g.Consume(ctx, []string{\"x\"}, h) }\n";
        assert!(extract("n.go", src).events.is_empty());
    }

    #[test]
    fn net_http_gorilla_gin_echo_chi_routes() {
        let src = r#"package api

func routes(mux *http.ServeMux, h *Handler) {
	http.HandleFunc("/healthz", healthz)
	mux.HandleFunc("GET /orders/{id}", h.getOrder)
	mux.Handle("POST /orders", http.HandlerFunc(h.createOrder))
	mux.HandleFunc("example.com/static/", static)

	r := mux.NewRouter()
	r.HandleFunc("/users/{id}", h.getUser).Methods("GET")
	api := r.PathPrefix("/api").Subrouter()
	api.HandleFunc("/carts", h.carts).Methods(http.MethodPost)
}

func gin(h *Handler) {
	r := gin.Default()
	r.GET("/ping", ping)
	v1 := r.Group("/v1")
	{
		v1.POST("/orders", auth(), h.Create)
		items := v1.Group("/items")
		items.DELETE("/:id", h.DeleteItem)
		v1.GET("", h.Root)
	}
	e := echo.New()
	e.PUT(`/echo/:id`, h.Put)
}

func chi(h *Handler) {
	r := chi.NewRouter()
	r.Get("/", h.Index)
	r.Route("/orders", func(r chi.Router) {
		r.Post("/", h.Create)
		r.Route("/{id}", func(r chi.Router) {
			r.Get("/", h.Get)
			r.Put("/items", func(w http.ResponseWriter, req *http.Request) {})
		})
	})
	r.Method("PATCH", "/things", h.Patch)
	r.Delete("/things/{id}", h.Delete)
}
"#;
        let f = extract("api.go", src);
        let s = |x: &str| Some(x.to_string());
        assert_eq!(
            routes(&f),
            vec![
                ("ANY".into(), "/healthz".into(), s("healthz"), 4),
                ("GET".into(), "/orders/{id}".into(), s("getOrder"), 5),
                ("POST".into(), "/orders".into(), s("createOrder"), 6),
                ("ANY".into(), "/static/".into(), s("static"), 7),
                ("GET".into(), "/users/{id}".into(), s("getUser"), 10),
                ("POST".into(), "/api/carts".into(), s("carts"), 12),
                ("GET".into(), "/ping".into(), s("ping"), 17),
                ("POST".into(), "/v1/orders".into(), s("Create"), 20),
                ("DELETE".into(), "/v1/items/:id".into(), s("DeleteItem"), 22),
                ("GET".into(), "/v1".into(), s("Root"), 23),
                ("PUT".into(), "/echo/:id".into(), s("Put"), 26),
                ("GET".into(), "/".into(), s("Index"), 31),
                ("POST".into(), "/orders".into(), s("Create"), 33),
                ("GET".into(), "/orders/{id}".into(), s("Get"), 35),
                ("PUT".into(), "/orders/{id}/items".into(), None, 36),
                ("PATCH".into(), "/things".into(), s("Patch"), 39),
                ("DELETE".into(), "/things/{id}".into(), s("Delete"), 40),
            ]
        );
    }

    #[test]
    fn http_client_calls() {
        let src = r#"package client

func calls(base, id string, client *http.Client) {
	http.Get("http://orders:8080/orders/" + id)
	http.Post(base+"/orders", "application/json", body)
	req, _ := http.NewRequest("DELETE", base+"/orders/"+id, nil)
	req2, _ := http.NewRequestWithContext(ctx, http.MethodPut, fmt.Sprintf("%s/orders/%s/items", base, id), nil)
	url := fmt.Sprintf("%v/payments/%d", base, 7)
	client.Get(url)
	resty.New().R().Post("/refunds")
	client.Get(base)
	cache.Get("orders")
	cache.Get("/orders/index", &v)
	http.Get("/etc/passwd")
}
"#;
        let f = extract("client.go", src);
        let s = |x: &str| Some(x.to_string());
        // URLs are values as written: hosts are kept, parameters are run-time parts.
        assert_eq!(
            calls(&f),
            vec![
                (s("GET"), "http://orders:8080/orders/{}".into(), 4),
                (s("POST"), "{}/orders".into(), 5),
                (s("DELETE"), "{}/orders/{}".into(), 6),
                (s("PUT"), "{}/orders/{}/items".into(), 7),
                // A literal argument of Sprintf is part of the URL.
                (s("GET"), "{}/payments/7".into(), 9),
                (s("POST"), "/refunds".into(), 10),
                // `http.Get` is a request whatever its URL; the graph finds no route for it.
                (s("GET"), "/etc/passwd".into(), 14),
            ]
        );
        assert!(routes(&f).is_empty());
    }

    #[test]
    fn route_groups_prefix_constants_and_method_lists() {
        let src = r#"package api

const apiPrefix = "/api"

func main() {
	r := gin.Default()
	catalog := r.Group("/catalog")
	catalog.GET("/products", listProducts)
	SetupChaosRoutes(r)
}

func SetupChaosRoutes(r *gin.Engine) {
	chaos := r.Group("/chaos")
	{
		chaos.POST("/latency/:ms", h.Latency)
		chaos.GET("", h.Status)
	}
}

func echoRoutes(e *echo.Echo) {
	admin := e.Group("/admin")
	admin.DELETE("/users/:id", deleteUser)
}

func gorilla(h *Handler) {
	r := mux.NewRouter()
	r.HandleFunc(apiPrefix+"/basket", h.Basket).Methods("GET", "HEAD")
	base := "/v2"
	r.HandleFunc(base+"/items/{id}", h.Item).Methods(http.MethodPut)
	shop := r.PathPrefix("/shop").Subrouter()
	shop.HandleFunc("/cart", h.Cart).Methods("POST")
}

func chiRoutes(h *Handler) {
	r := chi.NewRouter()
	r.Route(apiPrefix, func(r chi.Router) {
		r.Get("/health", h.Health)
	})
}

func notRoutes(r *mux.Router, p string, kv *Store) {
	r.HandleFunc(p+"/x", h)
	kv.Get("/config/x", &v)
	wg := errgroup.Group{}
}
"#;
        let f = extract("api.go", src);
        let s = |x: &str| Some(x.to_string());
        assert_eq!(
            routes(&f),
            vec![
                (
                    "GET".into(),
                    "/catalog/products".into(),
                    s("listProducts"),
                    8
                ),
                // A group made inside a function that receives the router.
                ("POST".into(), "/chaos/latency/:ms".into(), s("Latency"), 15),
                ("GET".into(), "/chaos".into(), s("Status"), 16),
                (
                    "DELETE".into(),
                    "/admin/users/:id".into(),
                    s("deleteUser"),
                    22
                ),
                // A constant prefix, and one route per method of `.Methods(…)`.
                ("GET".into(), "/api/basket".into(), s("Basket"), 27),
                ("HEAD".into(), "/api/basket".into(), s("Basket"), 27),
                // A local prefix, read through the tracker.
                ("PUT".into(), "/v2/items/{id}".into(), s("Item"), 29),
                ("POST".into(), "/shop/cart".into(), s("Cart"), 31),
                ("GET".into(), "/api/health".into(), s("Health"), 37),
            ]
        );
        // A parameter pattern is no route; a two-argument Get on a store is no call.
        assert!(calls(&f).is_empty());
    }

    #[test]
    fn amqp_publishers_and_consumers() {
        let src = r#"package main

import amqp "github.com/rabbitmq/amqp091-go"

const exchange = "robot-shop"

func setup(ch *amqp.Channel) {
	ch.ExchangeDeclare("robot-shop", "direct", true, false, false, false, nil)
	q, err := ch.QueueDeclare("orders", true, false, false, false, nil)
	ch.QueueBind(q.Name, "orders", "robot-shop", false, nil)
	msgs, err := ch.Consume(q.Name, "", true, false, false, false, nil)
	ch.Consume("audit", "dispatch", true, false, false, false, nil)
}

func publish(ctx context.Context, ch *amqp.Channel, key string) {
	ch.Publish("robot-shop", "orders", false, false, amqp.Publishing{Body: b})
	ch.PublishWithContext(ctx, "logs", "", false, false, amqp.Publishing{})
	ch.Publish(exchange, "", false, false, msg)
	ch.PublishWithContext(ctx,
		"events",
		key,
		false, false, msg)
}

func fanout(ch *amqp.Channel) {
	q, _ := ch.QueueDeclare("", false, true, true, false, nil)
	ch.QueueBind(q.Name, "", "logs", false, nil)
	ch.Consume(q.Name, "", true, false, false, false, nil)
}

func notAmqp(bus *Bus) {
	bus.Publish("orders", msg)
	bus.Consume(ctx, "orders")
}
"#;
        let f = extract("main.go", src);
        use EventRole::*;
        assert_eq!(
            events(&f),
            vec![
                // `q.Name` is the name the queue was declared with.
                (Consumer, lit("orders"), "amqp", 11),
                (Consumer, lit("audit"), "amqp", 12),
                // The routing key when there is one, else the exchange.
                (Producer, lit("orders"), "amqp", 16),
                (Producer, lit("logs"), "amqp", 17),
                (Producer, Value::reference("exchange"), "amqp", 18),
                // A parameter key is a run-time topic, kept as an unresolved site.
                (Producer, Value::dynamic(), "amqp", 19),
                // A server-named queue consumes what it is bound to.
                (Consumer, lit("logs"), "amqp", 28),
            ]
        );
        // Without an AMQP import the same shapes are someone else's methods.
        let plain = src.replace("import amqp \"github.com/rabbitmq/amqp091-go\"", "");
        assert!(extract("main.go", &plain).events.is_empty());
        // streadway/amqp, a package-level channel (robot-shop's dispatch).
        let dispatch = "package main\nimport \"github.com/streadway/amqp\"\nvar rabbitChan *amqp.Channel\nfunc main() {\n\tmsgs, err := rabbitChan.Consume(\"orders\", \"\", true, false, false, false, nil)\n}\n";
        assert_eq!(
            events(&extract("main.go", dispatch)),
            vec![(Consumer, lit("orders"), "amqp", 5)]
        );
    }

    #[test]
    fn http_clients_requests_sprintf_and_resty() {
        let src = r#"package client

import "github.com/go-resty/resty/v2"

var priceAddr = os.Getenv("PRICE_ADDR")

func calls(ctx context.Context, addr string, id int, c *http.Client) {
	resp, err := http.Get(fmt.Sprintf("http://%s/price/%d", addr, id))
	req, _ := http.NewRequest("POST", "http://cart:8080/cart/"+strconv.Itoa(id), body)
	resp, err = c.Do(req)
	u := fmt.Sprintf("http://%s/price/%d", priceAddr, id)
	http.Get(u)
	req2, _ := http.NewRequestWithContext(ctx, http.MethodDelete, u, nil)
	c.Do(req2)
	client := resty.New()
	client.R().SetBody(b).Post("http://orders/orders")
	client.R().Get(u)
	c.Get(cacheKey)
	store.Get("key")
	req3, _ := http.NewRequest(method, target, nil)
}
"#;
        let f = extract("client.go", src);
        let s = |x: &str| Some(x.to_string());
        assert_eq!(
            calls(&f),
            vec![
                (s("GET"), "http://{}/price/{}".into(), 8),
                // The request is built here and sent by `c.Do(req)`: one call, at NewRequest.
                (s("POST"), "http://cart:8080/cart/{}".into(), 9),
                // A package variable stays a reference for the graph (an env lookup).
                (s("GET"), "http://{priceAddr}/price/{}".into(), 12),
                (s("DELETE"), "http://{priceAddr}/price/{}".into(), 13),
                (s("POST"), "http://orders/orders".into(), 16),
                (s("GET"), "http://{priceAddr}/price/{}".into(), 17),
                // `http.NewRequest` is a request whatever its arguments.
                (None, "{target}".into(), 20),
            ]
        );
        assert!(
            f.bindings
                .iter()
                .any(|b| b.name == "priceAddr" && b.value == Value::env("PRICE_ADDR", None))
        );
    }

    #[test]
    fn comments_and_strings_are_not_code() {
        let src = r#"package x

// func Fake() {}
/* type Hidden struct {}
pb.RegisterOrderServiceServer(s, &impl{}) */
var doc = "func InString() { pb.NewOrderServiceClient(c) }"
var tpl = `
type InRaw struct{}
r.GET("/raw", h)
`
"#;
        let f = extract("x.go", src);
        let names: Vec<&str> = f.symbols.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, vec!["doc", "tpl"]);
        assert!(f.grpc.is_empty() && f.http.is_empty());
        assert_eq!(sym(&f, "tpl").end_line, 10);
    }

    #[test]
    fn truncated_and_malformed_files_never_panic() {
        let src = r#"package p
import ( pb "x"
func (s *S) M(a int) (int, error) { if x := f(); x > 0 { return 1, nil } }
type T struct { c pb.OrdersClient }
func main() { pb.RegisterOrdersServer(s, &S{}); c := pb.NewOrdersClient(conn); c.Get(ctx)
  r.GET("/x", h); http.Get("http://a/b"); w := &kafka.Writer{Topic: "t"}
  const ( A T = iota
"#;
        for end in 0..=src.len() {
            if src.is_char_boundary(end) {
                let _ = extract("p.go", &src[..end]);
            }
        }
        extract_each(
            extract,
            "j.go",
            &[
                "func",
                "func (",
                "func ()",
                "type",
                "type (",
                "const (",
                "var x =",
                "import",
                "func f() {",
                "}}}}",
                "((((",
                "pb.RegisterServer(",
                "x := ",
                ":=",
                "= =",
                "func (a [) b[ {",
                "type X[",
                "http.HandleFunc(",
                "r.Route(\"/x\", func(",
            ],
        );
    }

    #[test]
    fn every_short_token_sequence_is_safe() {
        // Index arithmetic at the edges of a file: every sequence of up to four tokens.
        every_short_token_sequence(
            extract,
            "x.go",
            &[
                ".", "Get", "(", ")", "{", "func", "pb", ":=", "\"/x\"", "Client", "[", "type",
            ],
        );
    }

    #[test]
    fn junk_input_never_panics() {
        let alphabet = b"func type struct interface const var ( ) { } [ ] . , : = & * \" ` ' / \n\t pb Register New Client Server Topic kafka http GET /x iota \\ \xc3\xa9";
        let text = junk_bytes32(alphabet, 0x1234_5678);
        let f = extract("junk.go", &text);
        assert!(f.symbols.len() < 200_000);
    }
}
