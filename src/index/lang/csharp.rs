//! C# extractor: namespaces (block and file-scoped), `using` directives, types (class, record,
//! struct, interface, enum, delegate) and their members, constants, gRPC (Grpc.Core /
//! Grpc.Net: `: Svc.SvcBase` servers, `Svc.SvcClient` clients and their calls), Kafka
//! (Confluent.Kafka producers and consumers), ASP.NET routes (attribute routing and minimal
//! APIs) and `HttpClient` calls.
//!
//! The file is lexed once and tokenized; three linear passes follow: bindings (which fields,
//! parameters and variables hold a gRPC client, a Kafka producer or consumer, an `HttpClient`,
//! a route group), declarations (regions on an explicit stack, so nesting never recurses) and
//! uses (calls).

use std::collections::{HashMap, HashSet};

use super::bind::{Assignments, StmtStyle};
use super::common::{http_path_of, looks_like_http_path, looks_like_topic};
use super::common::{join_route, looks_like_url};
use super::tokens::{Chain, Rules, TokKind, Tokens};
use super::value::{ExprRules, eval};
use crate::index::facts::{
    Binding, EventFact, EventRole, FileFacts, GrpcFact, HttpFact, Import, SymbolKind, Value,
};
use crate::index::lex::{Syntax, lex};

/// Extracts the facts of one C# file.
pub fn extract(path: &str, text: &str) -> FileFacts {
    if is_razor(path) {
        return razor_usings(text);
    }
    let lx = lex(Syntax::CSHARP, text);
    let toks = Tokens::new(&lx, &Rules::CSHARP);
    let asg = Assignments::scan(&toks, &StmtStyle::SEMICOLON);
    let mut ex = Ex {
        t: &toks,
        asg: &asg,
        facts: FileFacts::default(),
        aliases: HashMap::new(),
        typed_clients: Vec::new(),
        bind: HashMap::new(),
        consts: HashSet::new(),
        client_vars: HashSet::new(),
        grpc_hint: (0..toks.len()).any(|i| {
            matches!(
                toks.ident(i),
                Some("Grpc" | "GrpcChannel" | "Protos" | "CallInvoker")
            )
        }),
    };
    ex.aliases();
    ex.bindings();
    ex.declarations();
    ex.uses();
    let mut facts = ex.facts;
    asg.export(&toks, &ExprRules::CSHARP, &mut facts);
    crate::order::sort_by_key(&mut facts.symbols, |s| s.line);
    crate::order::sort_by_key(&mut facts.bindings, |c| c.line);
    crate::order::sort_by_key(&mut facts.grpc, |g| match g {
        GrpcFact::Server { line, .. }
        | GrpcFact::Handler { line, .. }
        | GrpcFact::Client { line, .. }
        | GrpcFact::Call { line, .. } => *line,
    });
    crate::order::sort_by_key(&mut facts.events, |e| e.line);
    crate::order::sort_by_key(&mut facts.http, |h| match h {
        HttpFact::Route { line, .. } | HttpFact::Call { line, .. } => *line,
    });
    facts
}

/// What a field, parameter or variable is known to hold.
#[derive(Debug, Clone, PartialEq)]
enum Bind {
    Grpc(String),
    Producer,
    Consumer,
    Http,
    /// A minimal-API route group (`app.MapGroup("/v1")`) with its prefix.
    Group(String),
    /// A method that returns a gRPC client of the service (`Basket.BasketClient
    /// GetBasketClient()`): `GetBasketClient().GetBasketAsync(…)` calls the service.
    GrpcFactory(String),
}

/// Modifiers that may precede a type or member declaration.
const MODIFIERS: [&str; 24] = [
    "public",
    "private",
    "protected",
    "internal",
    "static",
    "sealed",
    "abstract",
    "partial",
    "readonly",
    "unsafe",
    "new",
    "file",
    "virtual",
    "override",
    "extern",
    "async",
    "const",
    "volatile",
    "required",
    "event",
    "fixed",
    "implicit",
    "explicit",
    "scoped",
];

/// `HttpClient` methods that take a URL first, with the HTTP method they send.
const HTTP_METHODS: [(&str, &str); 14] = [
    ("GetAsync", "GET"),
    ("GetStringAsync", "GET"),
    ("GetStreamAsync", "GET"),
    ("GetByteArrayAsync", "GET"),
    ("GetFromJsonAsync", "GET"),
    ("PostAsync", "POST"),
    ("PostAsJsonAsync", "POST"),
    ("PutAsync", "PUT"),
    ("PutAsJsonAsync", "PUT"),
    ("PatchAsync", "PATCH"),
    ("PatchAsJsonAsync", "PATCH"),
    ("DeleteAsync", "DELETE"),
    ("DeleteFromJsonAsync", "DELETE"),
    ("SendAsync", ""),
];

/// Methods of a gRPC client that are not RPCs.
const CLIENT_PLUMBING: [&str; 4] = ["Dispose", "ToString", "Equals", "GetHashCode"];

fn is_type_keyword(s: &str) -> bool {
    matches!(
        s,
        "class" | "struct" | "interface" | "enum" | "record" | "delegate"
    )
}

/// The service of a generated client type (`OrderServiceClient` → `OrderService`), unless it is
/// a well-known non-gRPC client.
fn client_type_service(ty: &str) -> Option<String> {
    if matches!(
        ty,
        "HttpClient"
            | "WebClient"
            | "TcpClient"
            | "UdpClient"
            | "SmtpClient"
            | "MongoClient"
            | "CosmosClient"
            | "BlobServiceClient"
            | "ServiceBusClient"
            | "SecretClient"
            | "GraphServiceClient"
            | "ElasticClient"
            | "ElasticsearchClient"
            | "RestClient"
            | "RedisClient"
            | "AmazonS3Client"
            | "AmazonSQSClient"
            | "AmazonDynamoDBClient"
            | "TableClient"
            | "QueueClient"
    ) {
        return None;
    }
    let stem = ty.strip_suffix("Client")?;
    (stem.len() > 1 && stem.starts_with(|c: char| c.is_ascii_uppercase())).then(|| stem.to_string())
}

fn strip_async(method: &str) -> &str {
    match method.strip_suffix("Async") {
        Some(m) if !m.is_empty() => m,
        _ => method,
    }
}

/// A declaration region still to scan.
struct Region {
    a: usize,
    b: usize,
    container: Option<String>,
    class: Option<ClassCtx>,
}

/// What a type body's members need to know about the type.
struct ClassCtx {
    name: String,
    /// `[Route("api/[controller]")]` with `[controller]` replaced, for controllers.
    route_prefix: Option<String>,
    /// The type is an MVC/API controller (`[ApiController]`, `…Controller`, `[Route]`).
    controller: bool,
    /// The type is an interface (Refit clients declare their calls on one).
    interface: bool,
}

/// One attribute: its name (last segment, without `Attribute`) and the index of its `(`.
struct Attr<'t> {
    name: &'t str,
    open: Option<usize>,
}

struct Ex<'t, 'l, 'a> {
    t: &'t Tokens<'l, 'a>,
    /// Every `name = value` of the file, for what a name holds at a call.
    asg: &'t Assignments,
    facts: FileFacts,
    /// `using Alias = A.B.Svc.SvcClient;`: alias → (qualifier, type).
    aliases: HashMap<String, (Option<String>, String)>,
    /// Typed declarations of gRPC clients (fields, parameters), for a client fact when the
    /// file constructs none: (service, name, token).
    typed_clients: Vec<(String, &'t str, usize)>,
    bind: HashMap<&'t str, Bind>,
    /// Names of constants declared in this file (bare member names).
    consts: HashSet<String>,
    client_vars: HashSet<String>,
    /// The file uses gRPC (`Grpc.Core`, `Grpc.Net.Client`, `GrpcChannel`, a `*.Protos`
    /// namespace).
    grpc_hint: bool,
}

impl<'t> Ex<'t, '_, '_> {
    fn line(&self, i: usize) -> u32 {
        self.t.line(i)
    }

    fn close_line(&self, open: usize) -> u32 {
        match self.t.close(open) {
            Some(c) => self.line(c),
            None => self.t.lx.line_count(),
        }
    }

    /// True when the string token at `i` is an interpolated string with holes.
    fn interpolated(&self, i: usize) -> bool {
        let t = self.t;
        t.text(i).contains('$') && t.str_lit(i).is_some_and(|s| s.raw.contains('{'))
    }

    /// Past the statement starting at `from`: its `;`, or a block that ends it.
    fn stmt_next(&self, from: usize, b: usize) -> usize {
        let t = self.t;
        let mut j = from;
        while j < b {
            match t.punct(j) {
                b';' => return j + 1,
                b'}' | b')' | b']' => return j + 1,
                b'{' => {
                    let after = t.skip_group(j);
                    return if t.punct(after) == b';' {
                        after + 1
                    } else {
                        after
                    };
                }
                b'(' | b'[' => j = t.skip_group(j),
                _ => j += 1,
            }
        }
        b.max(from + 1)
    }

    /// Past every token on the line of token `i` (preprocessor directives).
    fn skip_line(&self, i: usize, b: usize) -> usize {
        let line = self.line(i);
        let mut j = i;
        while j < b && self.line(j) == line {
            j += 1;
        }
        j
    }

    /// Attribute lists starting at `i` (`[A, B("x")] [C]`), with the first one's line.
    fn attributes(&self, mut i: usize, b: usize) -> (usize, Option<u32>, Vec<Attr<'t>>) {
        let t = self.t;
        let mut first = None;
        let mut out = Vec::new();
        while i < b && t.punct(i) == b'[' {
            // `[assembly: X]`, `[return: X]` targets are skipped with the list.
            let close = t.close(i).unwrap_or(b);
            first.get_or_insert(self.line(i));
            let mut a = i + 1;
            if t.ident(a).is_some() && t.punct(a + 1) == b':' {
                a += 2;
            }
            for (x, e) in t.args_between(a, close) {
                let mut k = x;
                let mut name = None;
                while k < e {
                    if let Some(id) = t.ident(k) {
                        name = Some(id);
                    } else if t.punct(k) != b'.' && !t.is(k, "::") {
                        break;
                    }
                    k += 1;
                }
                if let Some(n) = name {
                    let n = n
                        .strip_suffix("Attribute")
                        .filter(|s| !s.is_empty())
                        .unwrap_or(n);
                    let open = (t.punct(k) == b'(').then_some(k);
                    out.push(Attr { name: n, open });
                }
            }
            i = close + 1;
        }
        (i, first, out)
    }

    fn push_constant(&mut self, name: String, value: String, line: u32) {
        if let Some(bare) = name.rsplit('.').next() {
            self.consts.insert(bare.to_string());
        }
        self.facts.bindings.push(Binding {
            name,
            value: Value::lit(value),
            line,
        });
    }

    /// The variable or field an expression starting at `start` is assigned to (`var x = …`,
    /// `_x = …`, `Type x = …`, `this._x = …`).
    fn assigned_name(&self, start: usize) -> Option<&'t str> {
        let t = self.t;
        let mut k = start.checked_sub(1)?;
        if t.is(k, "await") {
            k = k.checked_sub(1)?;
        }
        if t.punct(k) != b'=' {
            return None;
        }
        t.ident(k.checked_sub(1)?)
    }

    /// `Environment.GetEnvironmentVariable("X")` at `a`, with a `?? "default"` after it.
    fn env_lookup(&self, a: usize, e: usize) -> Option<Value> {
        let t = self.t;
        let k = if t.is(a, "Environment") && t.punct(a + 1) == b'.' {
            a + 2
        } else if t.is(a, "System") && t.is(a + 2, "Environment") {
            a + 4
        } else {
            return None;
        };
        if !(t.is(k, "GetEnvironmentVariable") && t.punct(k + 1) == b'(') {
            return None;
        }
        let var = t.str_value(k + 2)?.into_owned();
        let after = t.skip_group(k + 1);
        let default = (t.is(after, "??") && after + 1 < e.max(after + 2))
            .then(|| t.str_lit(after + 1))
            .flatten()
            .filter(|_| !self.interpolated(after + 1))
            .map(|s| s.value().into_owned());
        Some(Value::env(var, default))
    }

    /// A topic expression in `a..e` as the shared evaluator reads it (`new TopicPartition(x,
    /// …)` is its first argument); a lone literal must look like a topic.
    fn topic_expr(&self, a: usize, e: usize) -> Option<Value> {
        let t = self.t;
        // A named argument (`topic: "x"`) is read by its value.
        let a = if t.ident(a).is_some() && t.punct(a + 1) == b':' {
            a + 2
        } else {
            a
        };
        if a >= e {
            return None;
        }
        if t.is(a, "new") && t.is(a + 1, "TopicPartition") && t.punct(a + 2) == b'(' {
            let (x, y) = *t.args(a + 2).first()?;
            return self.topic_expr(x, y);
        }
        let v = eval(t, (a, e), &ExprRules::CSHARP, self.asg);
        match v.as_lit() {
            Some(lit) => looks_like_topic(lit).then_some(v),
            None => Some(v),
        }
    }

    /// The URL expression in `a..e` as the shared evaluator reads it; unless `sure`, it
    /// must read like a URL (a `GetAsync` on a cache is not a request).
    fn url_in(&self, a: usize, e: usize, sure: bool) -> Option<Value> {
        if a >= e {
            return None;
        }
        let v = eval(self.t, (a, e), &ExprRules::CSHARP, self.asg);
        (sure || looks_like_url(&v)).then_some(v)
    }

    /// The gRPC service whose client the call or construction ending just before token
    /// `start` (a `.`) returns: a method bound as a client factory, or `new Svc.SvcClient(…)`.
    fn client_of_call_before(&self, start: usize) -> Option<String> {
        let t = self.t;
        let dot = start.checked_sub(1)?;
        if !(t.is_punct(dot, b'.') || t.is(dot, "?.")) {
            return None;
        }
        let close = dot.checked_sub(1)?;
        let open = t.open_of(close)?;
        if !t.is_punct(open, b'(') {
            return None;
        }
        let c = t.callee(open)?;
        if let Some(Bind::GrpcFactory(svc)) = self.bind.get(c.last()) {
            return Some(svc.clone());
        }
        if c.start > 0 && t.kw(c.start - 1, "new") {
            let q = (c.len >= 2).then(|| c.segs[c.len - 2]);
            return self.grpc_client_type(c.last(), q);
        }
        None
    }

    /// A publish or subscribe call of a typed event bus: `PublishAsync(new OrderPaid(…))`,
    /// `AddAndSaveEventAsync(evt)` with `evt = new X(…)`, `AddSubscription<OrderPaid, H>()`.
    /// The topic is the event type's name; a producer's site is where the event is built.
    /// True when it recorded something.
    fn typed_bus(&mut self, role: EventRole, c: &Chain<'t>, p: usize) -> bool {
        let t = self.t;
        match role {
            EventRole::Consumer => {
                // `AddSubscription<TEvent, THandler>()` / `Subscribe<TEvent, THandler>()`.
                let k = p.checked_sub(1).filter(|&k| t.is_punct(k, b'>'));
                let Some(open) = k.and_then(|k| {
                    t.open_of(k)
                        .or_else(|| (0..k).rev().take(48).find(|&j| t.is_punct(j, b'<')))
                }) else {
                    return false;
                };
                let Some(ev) = self.type_arg_after(open - 1).filter(|n| is_event_type(n)) else {
                    return false;
                };
                // `AddSubscription<TEvent, THandler>`: the handler is where the event is
                // handled, so the answer names it next to the registration.
                let close = k.unwrap_or(open);
                let handler = (open + 1..close)
                    .find(|&j| t.is_punct(j, b','))
                    .and_then(|comma| (comma + 1..close).rev().find_map(|j| t.ident(j)));
                match handler {
                    Some(h) => {
                        let via = format!("event bus, handled by {h}");
                        self.typed_event(role, ev, p, &via);
                    }
                    None => self.typed_event(role, ev, p, "event bus"),
                }
                true
            }
            EventRole::Producer => {
                let Some(&(a, e)) = t.args(p).first() else {
                    return false;
                };
                match self.event_type_of(a, e, p) {
                    Some((ev, at)) => {
                        self.typed_event(role, ev, at, "event bus");
                        true
                    }
                    // `eventBus.PublishAsync(evt)` with `evt` a parameter or variable of a base
                    // event type: a producer of some event, which only the run time knows. It is
                    // recorded with a run-time topic (listed as unresolved, with why) when the
                    // call is plainly a bus's: the receiver says bus or the method says event.
                    None => {
                        let bus_like = c.receiver().is_some_and(|r| {
                            r.to_ascii_lowercase().contains("bus") || c.last().contains("Event")
                        });
                        // The argument names an event (`evt`, `someEvent`,
                        // `logEvt.IntegrationEvent`, `msg`), not a transaction id or a name.
                        let names_event = (a..e)
                            .rev()
                            .find_map(|k| t.ident(k))
                            .map(str::to_ascii_lowercase)
                            .is_some_and(|n| {
                                n.contains("ev") || n.contains("msg") || n.contains("message")
                            });
                        if !bus_like || !names_event || a >= e {
                            return false;
                        }
                        let mut arg = String::new();
                        for k in a..e.min(a + 12) {
                            arg.push_str(t.text(k));
                        }
                        let line = self.line(p);
                        self.facts.events.push(EventFact {
                            role,
                            topic: Value::dynamic(),
                            via: format!(
                                "event bus: `{}({arg})` publishes an event whose type is known only at run time",
                                c.last()
                            ),
                            line,
                        });
                        true
                    }
                }
            }
        }
    }

    /// The event type an argument holds and the token where the event is built: `new X(…)`
    /// in place, or a local assigned `new X(…)` before the call (each assignment of it).
    fn event_type_of(&mut self, a: usize, e: usize, at: usize) -> Option<(&'t str, usize)> {
        self.event_type_in(a, e, at, 0)
    }

    /// [`Ex::event_type_of`] `depth` assignments away from the call (a chain `x = y; y = …`
    /// is followed a few steps, never round a cycle).
    fn event_type_in(
        &mut self,
        a: usize,
        e: usize,
        at: usize,
        depth: u8,
    ) -> Option<(&'t str, usize)> {
        /// How many assignments back a variable is followed.
        const MAX_DEPTH: u8 = 4;
        /// How many earlier assignments of one variable count (the branches that set it).
        const MAX_ASSIGNMENTS: usize = 8;
        let t = self.t;
        // `cond ? (IntegrationEvent)new A(…) : new B(…)`: every event the expression may
        // build (the first is returned, the others recorded). `new A(new Money(1))` builds A.
        let news: Vec<usize> = (a..e.min(a + 256)).filter(|&k| t.kw(k, "new")).collect();
        if news.len() > 1 || (news.len() == 1 && news[0] != a) {
            let mut found = None;
            for k in news {
                if let Some((ev, site)) = self.new_event_at(k) {
                    if found.is_none() {
                        found = Some((ev, site));
                    } else {
                        self.typed_event(EventRole::Producer, ev, site, "event bus");
                    }
                }
            }
            return found;
        }
        if t.kw(a, "new") {
            return self.new_event_at(a);
        }
        if e == a + 1
            && depth < MAX_DEPTH
            && let Some(name) = t.ident(a)
        {
            // Every `name = new X(…)` before the call in the enclosing block: a variable of a
            // base type may be given one of several events.
            let earlier: Vec<(usize, usize)> = self
                .asg
                .list
                .iter()
                .filter(|x| x.name == name && x.at < at)
                .map(|x| x.rhs)
                .collect();
            let mut found = None;
            for (ra, re) in earlier.into_iter().rev().take(MAX_ASSIGNMENTS) {
                if re == ra + 1 && t.ident(ra) == Some(name) {
                    continue; // `x = x`
                }
                if let Some((ev, site)) = self.event_type_in(ra, re, at, depth + 1) {
                    if found.is_none() {
                        found = Some((ev, site));
                    } else {
                        self.typed_event(EventRole::Producer, ev, site, "event bus");
                    }
                }
            }
            return found;
        }
        None
    }

    /// The event type `new X(…)` at token `k` builds (`new Ns.X(…)` names `X`), if it is one.
    fn new_event_at(&self, k: usize) -> Option<(&'t str, usize)> {
        let t = self.t;
        let mut j = k + 1;
        let mut last = None;
        while let Some(id) = t.ident(j) {
            last = Some(id);
            if t.is_punct(j + 1, b'.') {
                j += 2;
            } else {
                break;
            }
        }
        let name = last?;
        is_event_type(name).then_some((name, k))
    }
}

/// The static name of an HTTP verb (the route verbs are a closed set).
fn leak(verb: &str) -> &'static str {
    match verb {
        "GET" => "GET",
        "POST" => "POST",
        "PUT" => "PUT",
        "DELETE" => "DELETE",
        "PATCH" => "PATCH",
        "HEAD" => "HEAD",
        "OPTIONS" => "OPTIONS",
        _ => "ANY",
    }
}

/// The role of a typed event bus call by its method name: `Publish…`, `…SaveEvent…`,
/// `AddAndSaveEventAsync`, `PublishThroughEventBusAsync` produce; `AddSubscription`,
/// `Subscribe` (with type arguments) consume.
fn typed_bus_role(method: &str, recv: Option<&str>) -> Option<EventRole> {
    let _ = recv;
    if method.starts_with("Publish")
        || (method.contains("Event")
            && (method.contains("Save") || method.contains("Add") || method.contains("Raise")))
    {
        return Some(EventRole::Producer);
    }
    if method == "AddSubscription" || method == "Subscribe" || method == "SubscribeAsync" {
        return Some(EventRole::Consumer);
    }
    None
}

/// A type name that is an integration event or a message: `…IntegrationEvent`, `…Event`,
/// `…Message` — not an in-process domain event (`…DomainEvent`).
fn is_event_type(name: &str) -> bool {
    (name.ends_with("Event") || name.ends_with("Message") || name.ends_with("Command"))
        && !name.ends_with("DomainEvent")
        && name.len() > 5
}

// -- pass 1: bindings --------------------------------------------------------------------------

impl<'t> Ex<'t, '_, '_> {
    fn bindings(&mut self) {
        let t = self.t;
        let n = t.len();
        for i in 0..n {
            // `Svc.SvcClient GetClient(…) {` — a method handing out a client.
            if let Some(name) = t.ident(i)
                && i > 1
                && t.is_punct(i + 1, b'(')
                && let Some(ty) = t.ident(i - 1)
                && !MODIFIERS.contains(&ty)
                && !matches!(ty, "new" | "return" | "await" | "void")
            {
                let qualifier = (i >= 3 && t.is_punct(i - 2, b'.'))
                    .then(|| t.ident(i - 3))
                    .flatten();
                let (ty, qualifier) = match self.aliases.get(ty) {
                    Some((q, target)) => (target.clone(), q.clone()),
                    None => (ty.to_string(), qualifier.map(str::to_string)),
                };
                if let Some(svc) = self.grpc_client_type(&ty, qualifier.as_deref()) {
                    self.bind.entry(name).or_insert(Bind::GrpcFactory(svc));
                }
            }
            // `Type name` declarations (fields, parameters, locals, properties).
            if let Some(name) = t.ident(i)
                && i > 0
                && matches!(t.punct(i + 1), b';' | b'=' | b',' | b')' | b'{')
                && !t.is(i + 1, "==")
            {
                let ty_end = i - 1;
                let ty = if t.punct(ty_end) == b'>' {
                    // `IProducer<string, Order> producer`: the name before the `<`.
                    self.generic_base_before(ty_end)
                } else {
                    t.ident(ty_end).filter(|ty| !MODIFIERS.contains(ty))
                };
                if let Some(ty) = ty {
                    // `Outer.OuterClient name`: the qualifier, for generated gRPC clients.
                    let qualifier = (ty_end >= 2 && t.punct(ty_end - 1) == b'.')
                        .then(|| t.ident(ty_end - 2))
                        .flatten();
                    self.typed(name, ty, qualifier, i);
                }
            }
            match t.ident(i) {
                Some("new") => self.new_binding(i),
                Some("AddGrpcClient") if t.punct(i + 1) == b'<' => {
                    let k = t.skip_angles(i + 1, n);
                    if let Some(svc) = t.ident(k.saturating_sub(2)).and_then(client_type_service) {
                        self.client_fact(&svc, None, i);
                    }
                }
                Some("Build") if t.punct(i + 1) == b'(' && i > 0 && t.punct(i - 1) == b'.' => {
                    // `new ProducerBuilder<…>(config).Build()` is handled at `new`.
                }
                Some("CreateClient") if t.punct(i + 1) == b'(' => {
                    if let Some(c) = t.callee(i + 1)
                        && let Some(v) = self.assigned_name(c.start)
                    {
                        self.bind.insert(v, Bind::Http);
                    }
                }
                Some("MapGrpcService") if t.punct(i + 1) == b'<' => {
                    // `app.MapGrpcService<BasketService>()`: a registration of the
                    // implementation; the graph finds its service from the class.
                    let k = t.skip_angles(i + 1, n);
                    if let Some(imp) = t.ident(k.saturating_sub(2)) {
                        let line = self.line(i);
                        self.facts.grpc.push(GrpcFact::Server {
                            service: String::new(),
                            impl_type: Some(imp.to_string()),
                            line,
                        });
                    }
                }
                Some("MapGroup") if t.punct(i + 1) == b'(' => {
                    if let Some(c) = t.callee(i + 1)
                        && let Some(v) = self.assigned_name(c.start)
                        && let Some(prefix) = t.str_value(i + 2)
                    {
                        let parent = match c.receiver().and_then(|r| self.bind.get(r)) {
                            Some(Bind::Group(p)) => p.clone(),
                            _ => String::new(),
                        };
                        self.bind
                            .insert(v, Bind::Group(join_route(&parent, &prefix)));
                    }
                }
                _ => {}
            }
        }
        // A typed field or parameter only refers to a client: its calls resolve through the
        // binding, and the construction or registration (`new Svc.SvcClient(ch)`,
        // `AddGrpcClient<Svc.SvcClient>`) is the client fact. A file that only declares one
        // still says it holds a client, when no construction is in the file.
        let constructed = self
            .facts
            .grpc
            .iter()
            .any(|g| matches!(g, GrpcFact::Client { .. }));
        for (svc, name, at) in std::mem::take(&mut self.typed_clients) {
            if !constructed && !self.has_client(&svc) && !self.injected(at) {
                self.client_fact(&svc, Some(name), at);
            }
        }
    }

    /// The last name segment of the generic type whose `>` is at `close`.
    fn generic_base_before(&self, close: usize) -> Option<&'t str> {
        let t = self.t;
        let mut depth = 0usize;
        let mut k = close;
        let mut steps = 0;
        loop {
            match t.punct(k) {
                b'>' => depth += 1,
                b'<' => {
                    depth -= 1;
                    if depth == 0 {
                        return t.ident(k.checked_sub(1)?);
                    }
                }
                b';' | b'{' | b'}' | b'(' | b')' | b'=' => return None,
                _ => {}
            }
            steps += 1;
            if steps > 32 {
                return None;
            }
            k = k.checked_sub(1)?;
        }
    }

    fn typed(&mut self, name: &'t str, ty: &str, qualifier: Option<&str>, at: usize) {
        // `using GrpcBasketClient = eShop.Basket.API.Grpc.Basket.BasketClient;`
        let (ty, qualifier) = match self.aliases.get(ty) {
            Some((q, target)) => (target.clone(), q.clone()),
            None => (ty.to_string(), qualifier.map(str::to_string)),
        };
        let bind = match ty.as_str() {
            "HttpClient" => Bind::Http,
            "IProducer" => Bind::Producer,
            "IConsumer" => Bind::Consumer,
            _ => match self.grpc_client_type(&ty, qualifier.as_deref()) {
                Some(svc) => {
                    // A typed field and the constructor parameter it is set from are one
                    // client: one fact per service, and only when the file constructs none
                    // (the construction is the better evidence).
                    self.typed_clients.push((svc.clone(), name, at));
                    Bind::Grpc(svc)
                }
                None => return,
            },
        };
        self.bind.entry(name).or_insert(bind);
    }

    /// True when the declaration at `at` is a constructor parameter (dependency injection:
    /// the container builds the client, elsewhere).
    fn injected(&self, at: usize) -> bool {
        let t = self.t;
        let mut k = at;
        let mut steps = 0;
        while k > 0 && steps < 64 {
            k -= 1;
            steps += 1;
            match t.punct(k) {
                b'(' => {
                    return t
                        .ident(k.saturating_sub(1))
                        .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_uppercase()));
                }
                b';' | b'{' | b'}' | b')' => return false,
                _ => {}
            }
        }
        false
    }

    /// The first type argument of the `<…>` right after token `k` (`IConsumer<OrderCreated>`
    /// → `OrderCreated`; a qualified name gives its last segment).
    fn type_arg_after(&self, k: usize) -> Option<&'t str> {
        let t = self.t;
        if !t.is_punct(k + 1, b'<') {
            return None;
        }
        let mut j = k + 2;
        let mut last = None;
        while let Some(id) = t.ident(j) {
            last = Some(id);
            if t.is_punct(j + 1, b'.') {
                j += 2;
            } else {
                break;
            }
        }
        last
    }

    /// An event of a typed bus (the topic is the event type's name), at token `at`.
    fn typed_event(&mut self, role: EventRole, ev: &str, at: usize, via: &str) {
        let line = self.line(at);
        if self
            .facts
            .events
            .iter()
            .any(|e| e.line == line && e.role == role && e.topic.as_lit() == Some(ev))
        {
            return;
        }
        self.facts.events.push(EventFact {
            role,
            topic: Value::lit(ev),
            via: via.to_string(),
            line,
        });
    }

    /// `using Alias = A.B.Svc.SvcClient;` directives, before any declaration uses them.
    fn aliases(&mut self) {
        let t = self.t;
        for i in 0..t.len() {
            if !(t.kw(i, "using") && t.ident(i + 1).is_some() && t.is_punct(i + 2, b'=')) {
                continue;
            }
            let mut segs: Vec<&str> = Vec::new();
            let mut k = i + 3;
            while let Some(id) = t.ident(k) {
                segs.push(id);
                if t.is_punct(k + 1, b'.') {
                    k += 2;
                } else {
                    break;
                }
            }
            if let Some(&last) = segs.last() {
                let q = segs.len().checked_sub(2).map(|j| segs[j].to_string());
                self.aliases
                    .insert(t.text(i + 1).to_string(), (q, last.to_string()));
            }
        }
    }

    fn has_client(&self, service: &str) -> bool {
        self.facts
            .grpc
            .iter()
            .any(|g| matches!(g, GrpcFact::Client { service: s, .. } if s == service))
    }

    /// The service of a client type when it is a generated gRPC client: qualified by its
    /// service (`OrderService.OrderServiceClient`), named `…ServiceClient`, or in a file that
    /// uses `Grpc.*` / `*.Protos`.
    fn grpc_client_type(&self, ty: &str, qualifier: Option<&str>) -> Option<String> {
        let svc = client_type_service(ty)?;
        (qualifier == Some(svc.as_str()) || svc.ends_with("Service") || self.grpc_hint)
            .then_some(svc)
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

    /// `new Svc.SvcClient(channel)`, `new ProducerBuilder<…>(…)`, `new HttpClient(…)`.
    fn new_binding(&mut self, i: usize) {
        let t = self.t;
        let mut k = i + 1;
        let mut last = None;
        let mut qualifier = None;
        while let Some(id) = t.ident(k) {
            qualifier = last;
            last = Some(id);
            if t.punct(k + 1) == b'.' {
                k += 2;
            } else {
                k += 1;
                break;
            }
        }
        let Some(last) = last else {
            return;
        };
        let var = self.assigned_name(i);
        match last {
            "ProducerBuilder" => {
                if let Some(v) = var {
                    self.bind.insert(v, Bind::Producer);
                }
            }
            "ConsumerBuilder" => {
                if let Some(v) = var {
                    self.bind.insert(v, Bind::Consumer);
                }
            }
            "HttpClient" => {
                if let Some(v) = var {
                    self.bind.insert(v, Bind::Http);
                }
            }
            _ => {
                if t.punct(k) != b'(' {
                    return;
                }
                if let Some(svc) = self.grpc_client_type(last, qualifier) {
                    self.client_fact(&svc, var, i);
                    if let Some(v) = var {
                        self.bind.insert(v, Bind::Grpc(svc));
                    }
                }
            }
        }
    }
}

// -- pass 2: declarations ------------------------------------------------------------------------

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
                self.type_body(r, &mut work);
            } else {
                self.namespace_body(r, &mut work);
            }
        }
    }

    fn namespace_body(&mut self, r: Region, work: &mut Vec<Region>) {
        let t = self.t;
        let b = r.b;
        let mut container = r.container.clone();
        let mut i = r.a;
        while i < b {
            if t.punct(i) == b'#' {
                i = self.skip_line(i, b);
                continue;
            }
            let (j, attr_line, attrs) = self.attributes(i, b);
            i = j;
            if i >= b {
                break;
            }
            if t.punct(i) == b'#' {
                continue;
            }
            match t.ident(i) {
                Some("using") if !t.is(i + 1, "var") && t.punct(i + 1) != b'(' => {
                    i = self.using_directive(i, b);
                    continue;
                }
                Some("global") if t.is(i + 1, "using") => {
                    i = self.using_directive(i + 1, b);
                    continue;
                }
                Some("extern") if t.is(i + 1, "alias") => {
                    i = self.stmt_next(i, b);
                    continue;
                }
                Some("namespace") => {
                    let mut k = i + 1;
                    let mut name = String::new();
                    while let Some(id) = t.ident(k) {
                        name.push_str(id);
                        if t.punct(k + 1) == b'.' {
                            name.push('.');
                            k += 2;
                        } else {
                            k += 1;
                            break;
                        }
                    }
                    if name.is_empty() {
                        i += 1;
                        continue;
                    }
                    let full = match &container {
                        Some(c) => format!("{c}.{name}"),
                        None => name.clone(),
                    };
                    if self.facts.package.is_none() {
                        self.facts.package = Some(full.clone());
                    }
                    if t.punct(k) == b'{' {
                        let end_line = self.close_line(k);
                        self.facts.symbols.push(self.t.declaration(
                            &name,
                            SymbolKind::Module,
                            i + 1,
                            end_line,
                            attr_line,
                            container.as_deref(),
                        ));
                        let end = t.close(k).unwrap_or(b);
                        work.push(Region {
                            a: k + 1,
                            b: end,
                            container: Some(full),
                            class: None,
                        });
                        i = end + 1;
                    } else {
                        // File-scoped: the rest of the file is in the namespace.
                        let end_line = t.end_line(t.len().saturating_sub(1));
                        self.facts.symbols.push(self.t.declaration(
                            &name,
                            SymbolKind::Module,
                            i + 1,
                            end_line,
                            attr_line,
                            container.as_deref(),
                        ));
                        container = Some(full);
                        i = if t.punct(k) == b';' { k + 1 } else { k };
                    }
                    continue;
                }
                _ => {}
            }
            let mut k = i;
            while t.ident(k).is_some_and(|m| MODIFIERS.contains(&m)) {
                k += 1;
            }
            if t.ident(k).is_some_and(is_type_keyword) {
                i = self.type_decl(k, attr_line, &attrs, container.as_deref(), work, b);
            } else {
                // A top-level statement (Program.cs) or something unknown.
                i = self.stmt_next(i, b);
            }
        }
    }

    /// `using X.Y;`, `using static X.Y;`, `using Alias = X.Y;`, `using X = Y<Z>;`.
    fn using_directive(&mut self, i: usize, b: usize) -> usize {
        let t = self.t;
        let mut k = i + 1;
        if t.is(k, "static") {
            k += 1;
        }
        let mut alias = None;
        if t.ident(k).is_some() && t.punct(k + 1) == b'=' {
            alias = t.ident(k).map(str::to_string);
            k += 2;
        }
        // The name: identifiers, dots, `::` and type arguments, up to the `;`.
        let mut module = String::new();
        let mut end = k;
        while end < b {
            let skipped = t.skip_angles(end, b);
            if skipped > end {
                (end..skipped).for_each(|j| module.push_str(t.text(j)));
                end = skipped;
                continue;
            }
            match t.kind(end) {
                Some(TokKind::Ident) => module.push_str(t.text(end)),
                Some(TokKind::Punct) if t.punct(end) == b'.' || t.is(end, "::") => {
                    module.push_str(t.text(end));
                }
                _ => break,
            }
            end += 1;
        }
        let end = if t.punct(end) == b';' {
            end
        } else {
            end.saturating_sub(1)
        };
        if !module.is_empty() {
            let line = self.line(i);
            self.facts.imports.push(Import {
                module,
                names: Vec::new(),
                alias,
                line,
                reexport: false,
            });
        }
        end + 1
    }

    /// A type declaration whose keyword is at `kw`; returns the index past it.
    fn type_decl(
        &mut self,
        kw: usize,
        attr_line: Option<u32>,
        attrs: &[Attr],
        container: Option<&str>,
        work: &mut Vec<Region>,
        b: usize,
    ) -> usize {
        let t = self.t;
        let keyword = t.text(kw);
        let mut k = kw + 1;
        let mut kind = match keyword {
            "class" | "record" => SymbolKind::Class,
            "struct" => SymbolKind::Struct,
            "interface" => SymbolKind::Interface,
            "enum" => SymbolKind::Enum,
            _ => SymbolKind::TypeAlias,
        };
        if keyword == "record" {
            if t.is(k, "struct") {
                kind = SymbolKind::Struct;
                k += 1;
            } else if t.is(k, "class") {
                k += 1;
            }
        }
        if keyword == "delegate" {
            // `delegate Ret Name<T>(…);`: the name is the identifier before `(` or `<`.
            let mut open = k;
            while open < b && !matches!(t.punct(open), b'(' | b';' | b'{' | b'}' | b')') {
                open += 1;
            }
            if t.punct(open) != b'(' {
                return self.stmt_next(kw, b);
            }
            let mut n = open - 1;
            if t.punct(n) == b'>' {
                let mut j = k;
                while j < open && t.punct(j) != b'<' {
                    j += 1;
                }
                n = j.saturating_sub(1);
            }
            let next = self.stmt_next(open, b);
            if let Some(name) = t.ident(n) {
                let end_line = self.line(next.saturating_sub(1));
                self.facts.symbols.push(
                    self.t
                        .declaration(name, kind, n, end_line, attr_line, container),
                );
            }
            return next;
        }
        let Some(name) = t.ident(k) else {
            return self.stmt_next(kw, b);
        };
        let name_idx = k;
        k += 1;
        let mut j = t.skip_angles(k, b);
        if t.punct(j) == b'(' {
            j = t.skip_group(j);
        }
        // The base list and constraints, up to the body or the `;`.
        let mut bases: Vec<Vec<&str>> = Vec::new();
        // The first token of each base, for the line that names it.
        let mut base_at: Vec<usize> = Vec::new();
        let mut in_bases = false;
        let mut body = None;
        while j < b {
            match t.punct(j) {
                b'{' => {
                    body = Some(j);
                    break;
                }
                b';' | b'}' => break,
                b':' if !in_bases && bases.is_empty() => {
                    in_bases = true;
                    bases.push(Vec::new());
                }
                b',' if in_bases => bases.push(Vec::new()),
                b'<' => {
                    j = t.skip_angles(j, b).max(j + 1);
                    continue;
                }
                b'(' | b'[' => {
                    j = t.skip_group(j);
                    continue;
                }
                _ => {
                    if t.is(j, "where") {
                        in_bases = false;
                    } else if in_bases
                        && let Some(id) = t.ident(j)
                        && let Some(cur) = bases.last_mut()
                    {
                        if cur.is_empty() {
                            base_at.push(j);
                        }
                        cur.push(id);
                    }
                }
            }
            j += 1;
        }
        let end_line = match body {
            Some(o) => self.close_line(o),
            None => self.line(j.min(b.saturating_sub(1))),
        };
        self.facts.symbols.push(
            self.t
                .declaration(name, kind, name_idx, end_line, attr_line, container),
        );
        for (bi, segs) in bases.iter().enumerate() {
            if let Some(service) = grpc_base_service(segs) {
                // The line that names the service (a primary constructor may push the base
                // list below the class name).
                let line = self.line(base_at.get(bi).copied().unwrap_or(name_idx));
                self.facts.grpc.push(GrpcFact::Server {
                    service,
                    impl_type: Some(name.to_string()),
                    line,
                });
            }
        }
        for (bi, segs) in bases.iter().enumerate() {
            // MassTransit `class X : IConsumer<OrderCreated>`: the class consumes the event.
            if segs.last() == Some(&"IConsumer")
                && let Some(&at) = base_at.get(bi)
                && let Some(ev) = self.type_arg_after(at + (segs.len() - 1) * 2)
            {
                self.typed_event(EventRole::Consumer, ev, at, "MassTransit");
            }
        }
        let Some(open) = body else {
            return if t.punct(j) == b';' {
                j + 1
            } else {
                j.max(kw + 1)
            };
        };
        let end = t.close(open).unwrap_or(b);
        if kind == SymbolKind::Enum {
            for (a, _) in t.args_between(open + 1, end) {
                let (a, _, _) = self.attributes(a, end);
                if let Some(member) = t.ident(a) {
                    self.facts.symbols.push(self.t.declaration(
                        member,
                        SymbolKind::EnumValue,
                        a,
                        self.line(a),
                        None,
                        Some(name),
                    ));
                }
            }
        } else {
            let mut controller = name.ends_with("Controller") && name.len() > "Controller".len();
            let mut route_prefix = None;
            for a in attrs {
                match a.name {
                    "ApiController" => controller = true,
                    "Route" | "RoutePrefix" => {
                        controller = true;
                        if let Some(p) = self.attr_path(a) {
                            let short = name.strip_suffix("Controller").unwrap_or(name);
                            route_prefix =
                                Some(p.replace("[controller]", &short.to_ascii_lowercase()));
                        }
                    }
                    _ => {}
                }
            }
            work.push(Region {
                a: open + 1,
                b: end,
                container: Some(name.to_string()),
                class: Some(ClassCtx {
                    name: name.to_string(),
                    route_prefix,
                    controller,
                    interface: kind == SymbolKind::Interface,
                }),
            });
        }
        let after = end + 1;
        if t.punct(after) == b';' {
            after + 1
        } else {
            after
        }
    }

    /// The first string argument of an attribute (`[Route("x")]`, `[HttpGet("{id}", Name = …)]`).
    fn attr_path(&self, a: &Attr) -> Option<String> {
        let t = self.t;
        let (x, _) = *t.args(a.open?).first()?;
        t.str_value(x).map(|s| s.into_owned())
    }

    fn type_body(&mut self, r: Region, work: &mut Vec<Region>) {
        let t = self.t;
        let b = r.b;
        let Some(ctx) = r.class else {
            return;
        };
        let cname = ctx.name.clone();
        let mut i = r.a;
        while i < b {
            if t.punct(i) == b'#' {
                i = self.skip_line(i, b);
                continue;
            }
            let (j, attr_line, attrs) = self.attributes(i, b);
            i = j;
            if i >= b {
                break;
            }
            if t.punct(i) == b'#' {
                continue;
            }
            if t.punct(i) == b';' {
                i += 1;
                continue;
            }
            let start = i;
            let mut is_const = false;
            let mut is_static = false;
            let mut is_readonly = false;
            while let Some(m) = t.ident(i).filter(|m| MODIFIERS.contains(m)) {
                is_const |= m == "const";
                is_static |= m == "static";
                is_readonly |= m == "readonly";
                i += 1;
            }
            if t.ident(i).is_some_and(is_type_keyword) {
                i = self.type_decl(i, attr_line, &attrs, Some(&cname), work, b);
                continue;
            }
            if t.punct(i) == b'~' {
                // A finalizer.
                i = self.member_end(i, b).1;
                continue;
            }
            // The member head: up to `(`, `{`, `;`, `=` or `=>` at depth 0.
            let mut k = i;
            let stop = loop {
                if k >= b {
                    break None;
                }
                match t.punct(k) {
                    b'(' | b'{' | b';' | b'=' => break Some(k),
                    b'<' => k = t.skip_angles(k, b).max(k + 1),
                    b'[' => k = t.skip_group(k),
                    b'}' | b')' => break None,
                    _ if t.is(k, "=>") => break Some(k),
                    _ => k += 1,
                }
            };
            let Some(stop) = stop else {
                i = k.max(start + 1);
                continue;
            };
            match t.punct(stop) {
                b'(' => {
                    // A method, constructor or operator.
                    let mut n = stop - 1;
                    if t.punct(n) == b'>' {
                        let mut m = i;
                        let mut found = None;
                        while m < n {
                            if t.punct(m) == b'<' && t.skip_angles(m, b) == n + 1 {
                                found = Some(m);
                                break;
                            }
                            m += 1;
                        }
                        n = found.map_or(n, |m| m.saturating_sub(1));
                    }
                    let (end_line, next) = self.member_end(stop, b);
                    if let Some(name) = t
                        .ident(n)
                        .filter(|_| !t.is(n.saturating_sub(1), "operator"))
                    {
                        let kind = if name == cname && n == i {
                            SymbolKind::Constructor
                        } else {
                            SymbolKind::Method
                        };
                        self.facts.symbols.push(self.t.declaration(
                            name,
                            kind,
                            n,
                            end_line,
                            attr_line,
                            Some(&cname),
                        ));
                        let line = attr_line.unwrap_or(self.line(n));
                        if ctx.controller {
                            // Conventional routing makes every public instance method an action.
                            let public = kind == SymbolKind::Method
                                && (start..n).any(|k| t.kw(k, "public"))
                                && !(start..n).any(|k| t.kw(k, "static"));
                            self.action_routes(&attrs, name, &ctx, line, public);
                        } else if ctx.interface {
                            self.refit_calls(&attrs, line);
                        }
                    }
                    i = next.max(start + 1);
                }
                b'{' => {
                    // A property or event with accessors; `= init;` may follow.
                    let mut next = t.skip_group(stop);
                    if t.punct(next) == b'=' {
                        next = self.stmt_next(next, b);
                    }
                    self.property(stop, next, attr_line, &cname);
                    i = next.max(start + 1);
                }
                _ if t.is(stop, "=>") => {
                    let next = self.stmt_next(stop, b);
                    self.property(stop, next, attr_line, &cname);
                    i = next.max(start + 1);
                }
                _ => {
                    // Fields: `Type a = x, b;`.
                    let end = t.find_at_depth0(stop, b, ";").unwrap_or(b);
                    for (x, e) in t.args_between(i, end) {
                        // The declarator's name is the identifier before `=` (or its end).
                        let eq = (x..e).find(|&q| t.punct(q) == b'=' && t.skip_group(q) == q + 1);
                        let name_at = eq.unwrap_or(e).checked_sub(1);
                        let Some(n) = name_at.filter(|&n| n >= x) else {
                            continue;
                        };
                        let Some(name) = t.ident(n) else {
                            continue;
                        };
                        let constant = is_const || (is_static && is_readonly);
                        if !constant {
                            // A field: a declaration, not a constant.
                            let end_line = t.end_line(e.saturating_sub(1).max(n));
                            self.facts.symbols.push(self.t.declaration(
                                name,
                                SymbolKind::Field,
                                n,
                                end_line,
                                attr_line,
                                Some(&cname),
                            ));
                            continue;
                        }
                        let end_line = t.end_line(e.saturating_sub(1).max(n));
                        self.facts.symbols.push(self.t.declaration(
                            name,
                            SymbolKind::Constant,
                            n,
                            end_line,
                            attr_line,
                            Some(&cname),
                        ));
                        let Some(v) = eq.map(|q| q + 1) else {
                            continue;
                        };
                        let value = if let Some(s) =
                            t.str_lit(v).filter(|_| v + 1 == e && !self.interpolated(v))
                        {
                            Some(s.value().into_owned())
                        } else {
                            self.env_lookup(v, e).and_then(|v| v.env_default())
                        };
                        if let Some(value) = value {
                            let line = self.line(v);
                            self.push_constant(format!("{cname}.{name}"), value, line);
                        }
                    }
                    i = (end + 1).max(start + 1);
                }
            }
        }
    }

    /// The end line and the index past a member whose parameter list opens at `open`:
    /// a `{ … }` body, an `=> …;` expression body, or a `;`.
    fn member_end(&self, open: usize, b: usize) -> (u32, usize) {
        let t = self.t;
        let mut j = if t.punct(open) == b'(' {
            t.skip_group(open)
        } else {
            open
        };
        while j < b {
            match t.punct(j) {
                b'{' => {
                    let end_line = self.close_line(j);
                    return (end_line, t.skip_group(j));
                }
                b';' => return (self.line(j), j + 1),
                b'}' => return (self.line(j.saturating_sub(1)), j),
                b'(' | b'[' => j = t.skip_group(j),
                _ if t.is(j, "=>") => {
                    let end = t.find_at_depth0(j, b, ";").unwrap_or(b);
                    return (self.line(end.min(b.saturating_sub(1))), end + 1);
                }
                _ => j += 1,
            }
        }
        (self.line(b.saturating_sub(1)), b)
    }

    /// `[HttpGet("{id}")]`, `[HttpPost]`, `[Route("x")] [HttpGet]`, `[AcceptVerbs("GET")]` on an
    /// action of a controller.
    /// A property (`public T Name { get; set; }`, `T Name => x;`) whose accessors or arrow
    /// start at `stop`: a field-kind declaration named by the identifier before them.
    fn property(&mut self, stop: usize, next: usize, attr_line: Option<u32>, cname: &str) {
        let t = self.t;
        let Some(n) = stop.checked_sub(1) else { return };
        let Some(name) = t.ident(n) else { return };
        if matches!(
            name,
            "get" | "set" | "init" | "add" | "remove" | "operator" | "this"
        ) {
            return;
        }
        let end_line = t.line(next.saturating_sub(1).max(n));
        self.facts.symbols.push(self.t.declaration(
            name,
            SymbolKind::Field,
            n,
            end_line,
            attr_line,
            Some(cname),
        ));
    }

    /// The routes of one controller action. Attribute routes join the controller's
    /// `[Route]` prefix; a controller without one is conventionally routed
    /// (`MapDefaultControllerRoute`: `/{controller}/{action}`), where every public method is an
    /// action, for any verb unless an `[HttpGet]`-style attribute says.
    fn action_routes(
        &mut self,
        attrs: &[Attr],
        action: &str,
        ctx: &ClassCtx,
        line: u32,
        public: bool,
    ) {
        if attrs.iter().any(|a| a.name == "NonAction") {
            return;
        }
        let mut route_sub: Option<String> = None;
        let mut verbs: Vec<(String, Option<String>)> = Vec::new();
        let mut action_name: Option<String> = None;
        for a in attrs {
            if a.name == "ActionName" {
                action_name = self.attr_path(a);
                continue;
            }
            let verb = match a.name {
                "HttpGet" => "GET",
                "HttpPost" => "POST",
                "HttpPut" => "PUT",
                "HttpDelete" => "DELETE",
                "HttpPatch" => "PATCH",
                "HttpHead" => "HEAD",
                "HttpOptions" => "OPTIONS",
                "Route" => {
                    route_sub = self.attr_path(a);
                    continue;
                }
                _ => continue,
            };
            verbs.push((verb.to_string(), self.attr_path(a)));
        }
        let conventional = ctx.route_prefix.is_none();
        if verbs.is_empty() && (route_sub.is_some() || (conventional && public)) {
            verbs.push(("ANY".to_string(), None));
        }
        let prefix = ctx.route_prefix.as_deref().unwrap_or("");
        let action_seg = action_name.unwrap_or_else(|| {
            action
                .strip_suffix("Async")
                .filter(|a| !a.is_empty())
                .unwrap_or(action)
                .to_string()
        });
        for (method, sub) in verbs {
            let sub = sub.or_else(|| route_sub.clone()).unwrap_or_default();
            let sub = sub.replace("[action]", &action_seg);
            let path = if sub.starts_with('/') || sub.starts_with("~/") {
                join_route("", sub.trim_start_matches('~'))
            } else if conventional && sub.is_empty() {
                let controller = ctx.name.strip_suffix("Controller").unwrap_or(&ctx.name);
                join_route(&format!("/{controller}"), &action_seg)
            } else {
                join_route(prefix, &sub)
            };
            self.facts.http.push(HttpFact::Route {
                method,
                path,
                handler: Some(action.to_string()),
                line,
            });
        }
    }
}

impl Ex<'_, '_, '_> {
    /// Refit: `[Get("/users/{id}")] Task<User> GetUser(string id);` on an interface is an HTTP
    /// call by path.
    fn refit_calls(&mut self, attrs: &[Attr], line: u32) {
        for a in attrs {
            let method = match a.name {
                "Get" => "GET",
                "Post" => "POST",
                "Put" => "PUT",
                "Delete" => "DELETE",
                "Patch" => "PATCH",
                "Head" => "HEAD",
                _ => continue,
            };
            if let Some(path) = self
                .attr_path(a)
                .filter(|p| looks_like_http_path(p))
                .and_then(|p| http_path_of(&p))
            {
                self.facts.http.push(HttpFact::Call {
                    method: Some(method.to_string()),
                    url: Value::lit(path),
                    line,
                });
            }
        }
    }
}

/// The service a base type names when it is a generated gRPC base (`OrderService.
/// OrderServiceBase`, or `OrderServiceBase` after `using static`).
fn grpc_base_service(segs: &[&str]) -> Option<String> {
    let last = *segs.last()?;
    let stem = last.strip_suffix("Base")?;
    if stem.is_empty() {
        return None;
    }
    match segs {
        [.., outer, _] if *outer == stem => Some(stem.to_string()),
        [_] if stem.ends_with("Service") && stem.len() > "Service".len() => Some(stem.to_string()),
        _ => None,
    }
}

// -- pass 3: uses ------------------------------------------------------------------------------

impl<'t> Ex<'t, '_, '_> {
    fn uses(&mut self) {
        let t = self.t;
        for p in 0..t.len() {
            if t.punct(p) != b'(' {
                continue;
            }
            if p >= 2 && t.is(p - 1, "HttpRequestMessage") && t.is(p - 2, "new") {
                self.request_message(p);
                continue;
            }
            if let Some(c) = t.callee(p) {
                self.call(&c, p);
            }
        }
    }

    fn call(&mut self, c: &Chain<'t>, p: usize) {
        let t = self.t;
        let last = c.last();
        let recv = c.receiver();
        let bound = recv.and_then(|r| self.bind.get(r)).cloned();
        // `GetBasketClient().GetBasketAsync(…)`, `new Svc.SvcClient(ch).GetAsync(…)`: the
        // receiver is the call or construction before the dot.
        if c.after_call
            && c.len == 1
            && !CLIENT_PLUMBING.contains(&last)
            && let Some(svc) = self.client_of_call_before(c.start)
        {
            let line = self.line(p);
            self.facts.grpc.push(GrpcFact::Call {
                service: Some(svc),
                receiver: String::new(),
                method: strip_async(last).to_string(),
                line,
            });
            return;
        }
        if let Some(role) = typed_bus_role(last, recv)
            && self.typed_bus(role, c, p)
        {
            return;
        }
        if let Some(r) = recv {
            match &bound {
                // Every client method takes a request: a call without arguments
                // (`resp.GetOffers()` on a response message) is a getter, never an RPC.
                Some(Bind::Grpc(svc))
                    if !CLIENT_PLUMBING.contains(&last) && t.close(p) != Some(p + 1) =>
                {
                    let line = self.line(p);
                    self.facts.grpc.push(GrpcFact::Call {
                        service: Some(svc.clone()),
                        receiver: r.to_string(),
                        method: strip_async(last).to_string(),
                        line,
                    });
                    return;
                }
                _ => {}
            }
            let lower = r.to_ascii_lowercase();
            if matches!(last, "ProduceAsync" | "Produce")
                && (bound == Some(Bind::Producer) || lower.contains("producer"))
            {
                if let Some(&(a, e)) = t.args(p).first()
                    && let Some(topic) = self.topic_expr(a, e)
                {
                    self.event(EventRole::Producer, topic, p);
                }
                return;
            }
            if last == "Subscribe" && (bound == Some(Bind::Consumer) || lower.contains("consumer"))
            {
                if let Some(&(a, e)) = t.args(p).first() {
                    self.subscribe_topics(a, e, p);
                }
                return;
            }
        }
        if let Some(&(_, verb)) = HTTP_METHODS.iter().find(|(m, _)| *m == last)
            && !c.after_call
            && recv.is_some()
        {
            if verb.is_empty() {
                return;
            }
            let sure = matches!(bound, Some(Bind::Http))
                || recv.is_some_and(|r| r.to_ascii_lowercase().contains("http"));
            if let Some(&(a, e)) = t.args(p).first()
                && let Some(url) = self.url_in(a, e, sure)
            {
                let line = self.line(p);
                self.facts.http.push(HttpFact::Call {
                    method: Some(verb.to_string()),
                    url,
                    line,
                });
            }
            return;
        }
        let route_verb = match last {
            "MapGet" => "GET",
            "MapPost" => "POST",
            "MapPut" => "PUT",
            "MapDelete" => "DELETE",
            "MapPatch" => "PATCH",
            // Health endpoints, reverse-proxy forwards and explicit verb lists.
            "MapHealthChecks" | "MapForwarder" | "Map" | "MapFallback" => "ANY",
            "MapMethods" => {
                let verbs = t
                    .args(p)
                    .get(1)
                    .map(|&(a, b)| {
                        (a..b)
                            .filter_map(|k| t.ident(k))
                            .filter(|w| !matches!(*w, "HttpMethods" | "new" | "string"))
                            .map(str::to_ascii_uppercase)
                            .collect::<Vec<_>>()
                    })
                    .unwrap_or_default();
                match verbs.as_slice() {
                    [one] => match one.as_str() {
                        "GET" | "POST" | "PUT" | "DELETE" | "PATCH" | "HEAD" | "OPTIONS" => {
                            return self.route_call(c, p, bound.as_ref(), leak(one));
                        }
                        _ => "ANY",
                    },
                    _ => "ANY",
                }
            }
            _ => return,
        };
        self.route_call(c, p, bound.as_ref(), route_verb);
    }

    /// A minimal-API route registration at the call whose `(` is `p`.
    fn route_call(&mut self, c: &Chain<'t>, p: usize, bound: Option<&Bind>, route_verb: &str) {
        let t = self.t;
        // `MapForwarder("/images/{id}", "https+http://catalog-api", "/api/items/{id}/pic")`
        // serves a route and calls the target.
        if c.last() == "MapForwarder"
            && let [_, (ha, hb), (pa, pb), ..] = t.args(p).as_slice()
        {
            let mut url = eval(t, (*ha, *hb), &ExprRules::CSHARP, self.asg);
            url.extend(eval(t, (*pa, *pb), &ExprRules::CSHARP, self.asg));
            let line = self.line(p);
            self.facts.http.push(HttpFact::Call {
                method: None,
                url,
                line,
            });
        }
        let args = t.args(p);
        let Some(&(a, e)) = args.first() else {
            return;
        };
        let Some(path) = t
            .str_value(a)
            .filter(|_| e == a + 1 && !self.interpolated(a))
        else {
            return;
        };
        let prefix = match bound {
            Some(Bind::Group(g)) => g.as_str(),
            _ => "",
        };
        let handler = args.get(1).and_then(|&(x, y)| {
            let mut name = None;
            for k in x..y {
                if let Some(id) = t.ident(k) {
                    name = Some(id);
                } else if t.punct(k) != b'.' {
                    return None;
                }
            }
            name.map(str::to_string)
        });
        let line = self.line(p);
        self.facts.http.push(HttpFact::Route {
            method: route_verb.to_string(),
            path: if prefix.is_empty() {
                path.into_owned()
            } else {
                join_route(prefix, &path)
            },
            handler,
            line,
        });
    }

    fn event(&mut self, role: EventRole, topic: Value, p: usize) {
        let line = self.line(p);
        self.facts.events.push(EventFact {
            role,
            topic,
            via: "Confluent.Kafka".to_string(),
            line,
        });
    }

    /// `Subscribe("t")`, `Subscribe(new[] { "a", B })`, `Subscribe(new List<string> { … })`.
    fn subscribe_topics(&mut self, a: usize, e: usize, p: usize) {
        let t = self.t;
        if t.is(a, "new") {
            let Some(open) = (a..e).find(|&k| t.punct(k) == b'{') else {
                return;
            };
            for (x, y) in t.args(open) {
                if let Some(topic) = self.topic_expr(x, y) {
                    self.event(EventRole::Consumer, topic, p);
                }
            }
            return;
        }
        if let Some(topic) = self.topic_expr(a, e) {
            self.event(EventRole::Consumer, topic, p);
        }
    }

    /// `new HttpRequestMessage(HttpMethod.Post, "/x")`.
    fn request_message(&mut self, p: usize) {
        let t = self.t;
        let args = t.args(p);
        let (Some(&(ma, me)), Some(&(ua, ue))) = (args.first(), args.get(1)) else {
            return;
        };
        let method =
            (me == ma + 3 && t.is(ma, "HttpMethod")).then(|| t.text(ma + 2).to_ascii_uppercase());
        if let Some(url) = self.url_in(ua, ue, true) {
            // The site is where the message is sent (`SendAsync(requestMessage)`), when the
            // file sends it; else where it is built.
            let sent = self
                .asg
                .holding(p)
                .and_then(|a| Assignments::sent_at(t, a, &["SendAsync", "Send"]));
            let line = self.line(sent.unwrap_or(p));
            self.facts.http.push(HttpFact::Call { method, url, line });
        }
    }
}

/// A Razor page or component (`.razor`, `.cshtml`): markup with C# in it.
fn is_razor(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.ends_with(".razor") || lower.ends_with(".cshtml")
}

/// The facts of a Razor file: its `@using N` directives (one per line, as in `_Imports.razor`)
/// import namespaces like `using N;`; the markup itself declares nothing the index keeps.
fn razor_usings(text: &str) -> FileFacts {
    let mut facts = FileFacts::default();
    for (k, line) in text.lines().enumerate() {
        let line = line.trim_start_matches('\u{feff}').trim();
        let Some(rest) = line.strip_prefix("@using") else {
            continue;
        };
        if !rest.starts_with([' ', '\t']) {
            continue;
        }
        let rest = rest.trim().trim_end_matches(';').trim();
        let rest = rest.strip_prefix("static ").map_or(rest, str::trim);
        let (alias, module) = match rest.split_once('=') {
            Some((a, m)) => (Some(a.trim().to_string()), m.trim()),
            None => (None, rest),
        };
        let valid = !module.is_empty()
            && module
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
        if valid {
            facts.imports.push(Import {
                module: module.to_string(),
                names: Vec::new(),
                alias,
                line: u32::try_from(k + 1).unwrap_or(u32::MAX),
                reexport: false,
            });
        }
    }
    facts
}

#[cfg(test)]
mod tests {
    #[test]
    fn razor_using_directives_are_imports() {
        let src = "\u{feff}@using System.Net.Http\n@using eShop.WebAppComponents.Catalog;\n@using Q = A.B\n@usingX\n<p>@using Not.This</p>\n@code { int n; }\n";
        let f = super::extract("src/App/Components/_Imports.razor", src);
        let got: Vec<(&str, u32)> = f
            .imports
            .iter()
            .map(|i| (i.module.as_str(), i.line))
            .collect();
        assert_eq!(
            got,
            vec![
                ("System.Net.Http", 1),
                ("eShop.WebAppComponents.Catalog", 2),
                ("A.B", 3)
            ]
        );
        assert!(f.symbols.is_empty());
    }

    use super::*;

    fn sym<'f>(f: &'f FileFacts, name: &str) -> &'f crate::index::facts::Symbol {
        f.symbols
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no symbol {name} in {:#?}", f.symbols))
    }

    fn constant<'f>(f: &'f FileFacts, name: &str) -> Option<&'f str> {
        f.bindings
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.value.as_lit().unwrap_or("?"))
    }

    fn lit(s: &str) -> Value {
        Value::lit(s.to_string())
    }

    fn route(method: &str, path: &str, handler: Option<&str>, line: u32) -> HttpFact {
        HttpFact::Route {
            method: method.into(),
            path: path.into(),
            handler: handler.map(str::to_string),
            line,
        }
    }

    /// The calls of a file as (method, URL as the evaluator read it, line).
    fn calls(f: &FileFacts) -> Vec<(String, String, u32)> {
        f.http
            .iter()
            .filter_map(|h| match h {
                HttpFact::Call { method, url, line } => {
                    Some((method.clone().unwrap_or_default(), url.display(), *line))
                }
                HttpFact::Route { .. } => None,
            })
            .collect()
    }

    fn call(method: &str, url: &str, line: u32) -> (String, String, u32) {
        (method.to_string(), url.to_string(), line)
    }

    #[allow(dead_code)]
    fn http_call(method: &str, path: &str, line: u32) -> HttpFact {
        HttpFact::Call {
            method: Some(method.into()),
            url: Value::lit(path),
            line,
        }
    }

    const SERVICE: &str = r#"global using System.Text;
using System;
using static System.Math;
using Json = System.Text.Json.JsonSerializer;

namespace Acme.Orders
{
    /// <summary>Order gRPC service.</summary>
    [Authorize]
    [Obsolete("x")]
    public sealed class OrderServiceImpl : OrderService.OrderServiceBase, IDisposable
    {
        public const string OrderCreated = "orders.created";
        private static readonly string PaidTopic =
            Environment.GetEnvironmentVariable("PAID_TOPIC") ?? "orders.paid";
        internal const int Retries = 3;
        private readonly IProducer<string, string> _producer;
        private readonly Inventory.InventoryClient _inventory;
        private readonly HttpClient _http;

        public OrderServiceImpl(IProducer<string, string> producer, Inventory.InventoryClient inventory, HttpClient http)
        {
            _producer = producer;
            _inventory = inventory;
            _http = http;
        }

        /// <summary>Creates an order.</summary>
        public override async Task<CreateOrderReply> CreateOrder(
            CreateOrderRequest request,
            ServerCallContext context)
        {
            await _inventory.ReserveAsync(new ReserveRequest());
            await _producer.ProduceAsync(OrderCreated, new Message<string, string>());
            _producer.Produce(PaidTopic, msg);
            var items = await _http.GetFromJsonAsync<List<Item>>($"{_baseUrl}/api/items/{request.Id}");
            await _http.PostAsJsonAsync("/api/audit", request);
            _inventory.Dispose();
            return new CreateOrderReply();
        }

        public int Count { get; set; } = 3;
        public string Name => "x";
        public T Get<T>(int id) where T : class => default;

        public enum Status { Pending, Paid = 2 }

        private class Nested
        {
            void Inner() { }
        }

        public void Dispose() { }
    }

    public record OrderDto(string Id, decimal Total);
    public record struct Point(int X, int Y);
    public delegate void OrderHandler(Order o);
    public interface IOrderRepo<T> where T : class
    {
        Task<T> FindAsync(string id);
    }
}
"#;

    #[test]
    fn declarations_namespaces_and_usings() {
        let f = extract("Orders/OrderServiceImpl.cs", SERVICE);
        assert_eq!(f.package.as_deref(), Some("Acme.Orders"));
        let ns = sym(&f, "Acme.Orders");
        assert_eq!((ns.kind, ns.line, ns.end_line), (SymbolKind::Module, 6, 63));
        let c = sym(&f, "OrderServiceImpl");
        assert_eq!(c.kind, SymbolKind::Class);
        assert_eq!((c.line, c.end_line, c.doc_line), (11, 54, Some(8)));
        assert_eq!(c.container.as_deref(), Some("Acme.Orders"));
        let ctor = f
            .symbols
            .iter()
            .find(|s| s.kind == SymbolKind::Constructor)
            .expect("constructor");
        assert_eq!((ctor.line, ctor.end_line), (21, 26));
        let m = sym(&f, "CreateOrder");
        assert_eq!(
            (m.kind, m.line, m.end_line, m.doc_line),
            (SymbolKind::Method, 29, 40, Some(28))
        );
        assert_eq!(m.container.as_deref(), Some("OrderServiceImpl"));
        assert_eq!(sym(&f, "Get").line, 44);
        assert_eq!(sym(&f, "Status").kind, SymbolKind::Enum);
        assert_eq!(sym(&f, "Paid").container.as_deref(), Some("Status"));
        assert_eq!(
            sym(&f, "Nested").container.as_deref(),
            Some("OrderServiceImpl")
        );
        assert_eq!(sym(&f, "Inner").container.as_deref(), Some("Nested"));
        assert_eq!(sym(&f, "OrderDto").kind, SymbolKind::Class);
        assert_eq!(sym(&f, "Point").kind, SymbolKind::Struct);
        assert_eq!(sym(&f, "OrderHandler").kind, SymbolKind::TypeAlias);
        let repo = sym(&f, "IOrderRepo");
        assert_eq!((repo.kind, repo.end_line), (SymbolKind::Interface, 62));
        assert_eq!(
            sym(&f, "FindAsync").container.as_deref(),
            Some("IOrderRepo")
        );
        // Properties and fields are field declarations; constants are constants.
        assert!(
            f.symbols
                .iter()
                .filter(|s| s.name == "Count" || s.name == "Name")
                .all(|s| s.kind == SymbolKind::Field)
        );
        assert!(f.symbols.iter().any(|s| s.name == "Count"));
        assert_eq!(sym(&f, "Retries").kind, SymbolKind::Constant);
        assert_eq!(
            constant(&f, "OrderServiceImpl.OrderCreated"),
            Some("orders.created")
        );
        assert_eq!(
            constant(&f, "OrderServiceImpl.PaidTopic"),
            Some("orders.paid")
        );
        // A numeric constant is a binding too (names elsewhere may resolve against it).
        assert_eq!(constant(&f, "OrderServiceImpl.Retries"), Some("3"));
        let imports: Vec<(&str, Option<&str>, u32)> = f
            .imports
            .iter()
            .map(|i| (i.module.as_str(), i.alias.as_deref(), i.line))
            .collect();
        assert_eq!(
            imports,
            vec![
                ("System.Text", None, 1),
                ("System", None, 2),
                ("System.Math", None, 3),
                ("System.Text.Json.JsonSerializer", Some("Json"), 4),
            ]
        );
    }

    #[test]
    fn grpc_kafka_and_http_in_a_service() {
        let f = extract("Orders/OrderServiceImpl.cs", SERVICE);
        assert_eq!(
            f.grpc,
            vec![
                GrpcFact::Server {
                    service: "OrderService".into(),
                    impl_type: Some("OrderServiceImpl".into()),
                    line: 11
                },
                GrpcFact::Client {
                    service: "Inventory".into(),
                    var: Some("_inventory".into()),
                    line: 18
                },
                GrpcFact::Call {
                    service: Some("Inventory".into()),
                    receiver: "_inventory".into(),
                    method: "Reserve".into(),
                    line: 33
                },
            ]
        );
        let events: Vec<(EventRole, Value, u32)> = f
            .events
            .iter()
            .map(|e| (e.role, e.topic.clone(), e.line))
            .collect();
        assert_eq!(
            events,
            vec![
                (EventRole::Producer, Value::reference("OrderCreated"), 34),
                (EventRole::Producer, Value::reference("PaidTopic"), 35),
            ]
        );
        assert!(f.events.iter().all(|e| e.via == "Confluent.Kafka"));
        assert_eq!(
            calls(&f),
            vec![
                // The base field stays a name for the graph; the id is a run-time part.
                call("GET", "{_baseUrl}/api/items/{request.Id}", 36),
                call("POST", "/api/audit", 37),
            ]
        );
    }

    #[test]
    fn controllers_and_minimal_apis() {
        let src = r#"namespace Acme.Web;

[ApiController]
[Route("api/[controller]")]
public class OrdersController : ControllerBase
{
    [HttpGet("{id}")]
    public IActionResult Get(string id) => Ok();

    [HttpPost]
    public async Task<IActionResult> Create([FromBody] OrderDto dto)
    {
        var channel = GrpcChannel.ForAddress("http://orders:5000");
        var client = new OrderService.OrderServiceClient(channel);
        var reply = await client.CreateOrderAsync(new CreateOrderRequest());
        return Ok(reply);
    }

    [Route("search")]
    [HttpGet]
    public IActionResult Search() => Ok();

    [HttpDelete("/admin/orders/{id}", Name = "Del")]
    public IActionResult Delete(string id) => Ok();

    private void NotAnAction() { }
}

public class Startup
{
    public void Configure(WebApplication app)
    {
        app.MapGet("/health", () => "ok");
        var v1 = app.MapGroup("/v1");
        var admin = v1.MapGroup("admin");
        v1.MapPost("/orders", Handlers.CreateOrder);
        admin.MapDelete("/cache", ClearCache);
        app.MapGrpcService<OrderServiceImpl>();
    }
}
"#;
        let f = extract("Web/OrdersController.cs", src);
        assert_eq!(f.package.as_deref(), Some("Acme.Web"));
        assert_eq!(sym(&f, "Acme.Web").end_line, 40);
        assert_eq!(
            sym(&f, "OrdersController").container.as_deref(),
            Some("Acme.Web")
        );
        assert_eq!(
            f.http,
            vec![
                route("GET", "/api/orders/{id}", Some("Get"), 7),
                route("POST", "/api/orders", Some("Create"), 10),
                route("GET", "/api/orders/search", Some("Search"), 19),
                route("DELETE", "/admin/orders/{id}", Some("Delete"), 23),
                route("GET", "/health", None, 33),
                route("POST", "/v1/orders", Some("CreateOrder"), 36),
                route("DELETE", "/v1/admin/cache", Some("ClearCache"), 37),
            ]
        );
        assert_eq!(
            f.grpc,
            vec![
                GrpcFact::Client {
                    service: "OrderService".into(),
                    var: Some("client".into()),
                    line: 14
                },
                GrpcFact::Call {
                    service: Some("OrderService".into()),
                    receiver: "client".into(),
                    method: "CreateOrder".into(),
                    line: 15
                },
                // `app.MapGrpcService<OrderServiceImpl>()`: the graph finds the service from
                // the class.
                GrpcFact::Server {
                    service: String::new(),
                    impl_type: Some("OrderServiceImpl".into()),
                    line: 38
                },
            ]
        );
    }

    #[test]
    fn kafka_consumers_producers_and_env_topics() {
        let src = r#"using Confluent.Kafka;
namespace Acme.Ship
{
    public static class Topics
    {
        public const string Dispatched = "shipments.dispatched";
        public static readonly string Returned = Environment.GetEnvironmentVariable("RET") ?? "shipments.returned";
    }

    public class Worker
    {
        private readonly IConsumer<string, string> _consumer;
        public void Run(IConfiguration config)
        {
            _consumer.Subscribe(Topics.Dispatched);
            using var c2 = new ConsumerBuilder<string, string>(cfg).Build();
            c2.Subscribe(new[] { "orders.created", Topics.Returned });
            c2.Subscribe(new List<string> { "a.b" });
            var topic = Environment.GetEnvironmentVariable("SHIP_TOPIC") ?? "shipments";
            var p = new ProducerBuilder<Null, string>(cfg).Build();
            p.Produce(Environment.GetEnvironmentVariable("OUT_TOPIC") ?? "out.events", msg);
            p.ProduceAsync(new TopicPartition("partitioned", new Partition(0)), msg);
            p.ProduceAsync(topic, msg);
            p.ProduceAsync(topic: "named.arg", message: msg);
            other.Subscribe("not.kafka");
        }
    }
}
"#;
        let f = extract("Worker.cs", src);
        assert_eq!(
            constant(&f, "Topics.Dispatched"),
            Some("shipments.dispatched")
        );
        assert_eq!(constant(&f, "Topics.Returned"), Some("shipments.returned"));
        let events: Vec<(EventRole, Value, u32)> = f
            .events
            .iter()
            .map(|e| (e.role, e.topic.clone(), e.line))
            .collect();
        assert_eq!(
            events,
            vec![
                (
                    EventRole::Consumer,
                    Value::reference("Topics.Dispatched"),
                    15
                ),
                (EventRole::Consumer, lit("orders.created"), 17),
                (EventRole::Consumer, Value::reference("Topics.Returned"), 17),
                (EventRole::Consumer, lit("a.b"), 18),
                (
                    EventRole::Producer,
                    Value::env("OUT_TOPIC", Some("out.events".into())),
                    21
                ),
                (EventRole::Producer, lit("partitioned"), 22),
                // A local holding an env lookup with a default is read through the tracker.
                (
                    EventRole::Producer,
                    Value::env("SHIP_TOPIC", Some("shipments".into())),
                    23
                ),
                (EventRole::Producer, lit("named.arg"), 24),
            ]
        );
    }

    #[test]
    fn only_generated_grpc_clients_are_clients() {
        let plain = "class A {\n  private readonly FooClient _foo;\n  void M() { var r = new RedisClient(cfg); _foo.Get(req); }\n}\n";
        assert!(extract("A.cs", plain).grpc.is_empty());
        let with_grpc = format!("using Grpc.Net.Client;\n{plain}");
        assert_eq!(
            extract("A.cs", &with_grpc).grpc,
            vec![
                GrpcFact::Client {
                    service: "Foo".into(),
                    var: Some("_foo".into()),
                    line: 3
                },
                GrpcFact::Call {
                    service: Some("Foo".into()),
                    receiver: "_foo".into(),
                    method: "Get".into(),
                    line: 4
                },
            ]
        );
    }

    #[test]
    fn http_calls_and_request_messages() {
        let src = r#"class C {
    async Task Run(HttpClient http) {
        await http.GetAsync("http://inventory:8080/stock/" + sku);
        await http.GetStringAsync($"{baseUrl}/orders/{id}/items");
        await http.PutAsJsonAsync(@"/api/carts/1", cart);
        await http.DeleteAsync($"{_base}{path}");
        var req = new HttpRequestMessage(HttpMethod.Post, "/api/payments");
        await http.SendAsync(req);
        await cache.GetAsync("user:1");
    }
}

public interface IUsersApi
{
    [Get("/users/{id}")]
    Task<User> GetUser(string id);

    [Post("/users")]
    Task Create([Body] User user);
}
"#;
        let f = extract("C.cs", src);
        assert_eq!(
            calls(&f),
            vec![
                call("GET", "http://inventory:8080/stock/{sku}", 3),
                call("GET", "{baseUrl}/orders/{id}/items", 4),
                call("PUT", "/api/carts/1", 5),
                // An HttpClient call is HTTP whatever its URL: kept, the graph says why it
                // cannot match it.
                call("DELETE", "{_base}{path}", 6),
                // Built on line 7, sent on line 8: the site is the send.
                call("POST", "/api/payments", 8),
                call("GET", "/users/{}", 15),
                call("POST", "/users", 18),
            ]
        );
    }

    #[test]
    fn comments_strings_preprocessor_and_attributes() {
        let src = r#"// class Commented {}
/* public class AlsoCommented { } */
#region Types
#if DEBUG
[assembly: InternalsVisibleTo("Tests")]
#endif
namespace N
{
    public class Real
    {
        private const string Sql = @"select * from ""orders"" -- class Nope {}";
        private const string Raw = """
            class InRaw { }
            """;
        /// <summary>
        /// Multi-line doc.
        /// </summary>
        [HttpGet]
        [ProducesResponseType(200)]
        public void Documented() { }
        public void Undocumented() { }
    }
}
#endregion
"#;
        let f = extract("N.cs", src);
        let names: Vec<&str> = f.symbols.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            vec!["N", "Real", "Sql", "Raw", "Documented", "Undocumented"]
        );
        assert_eq!(sym(&f, "Documented").doc_line, Some(15));
        assert_eq!(sym(&f, "Undocumented").doc_line, None);
        assert_eq!(sym(&f, "Raw").end_line, 14);
        assert_eq!(
            constant(&f, "Real.Sql"),
            Some(r#"select * from ""orders"" -- class Nope {}"#)
        );
        // Not a controller: `[HttpGet]` alone on a plain class is not a route.
        assert!(f.http.is_empty());
        assert!(f.imports.is_empty());
    }

    #[test]
    fn getters_on_messages_are_not_rpc_calls() {
        let src = "class W {\n  async Task F(GrpcChannel ch) {\n    var resp = await new Offers.OffersClient(ch).GetOffersAsync(req);\n    var list = resp.GetOffers();\n  }\n}\n";
        let f = extract("W.cs", src);
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
        assert_eq!(calls, vec![(Some("Offers"), "GetOffers", 3)]);
    }

    #[test]
    fn grpc_clients_by_alias_injection_factory_and_inline_construction() {
        let src = r#"using GrpcBasketClient = eShop.Basket.API.Grpc.Basket.BasketClient;
using eShop.Basket.API.Grpc;

public class BasketService(GrpcBasketClient basketClient)
{
    public async Task Get() => await basketClient.GetBasketAsync(new());
}

public class MobileBasket
{
    private Basket.BasketClient _client;
    private Basket.BasketClient GetBasketClient()
    {
        _client = new BasketGrpcClient.Basket.BasketClient(_channel);
        return _client;
    }
    public async Task Load()
    {
        var r = await GetBasketClient()
            .GetBasketAsync(new GetBasketRequest(), headers);
        await new Basket.BasketClient(ch).DeleteBasketAsync(req);
        resp.GetItems();
    }
}
"#;
        let f = extract("BasketService.cs", src);
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
        assert_eq!(
            calls,
            vec![
                (Some("Basket"), "GetBasket", 6),
                (Some("Basket"), "GetBasket", 20),
                (Some("Basket"), "DeleteBasket", 21),
            ]
        );
        // The construction is the client; the injected parameter and the typed field only
        // refer to it.
        let clients: Vec<u32> = f
            .grpc
            .iter()
            .filter_map(|g| match g {
                GrpcFact::Client { line, .. } => Some(*line),
                _ => None,
            })
            .collect();
        assert_eq!(clients, vec![14, 21]);
    }

    #[test]
    fn event_bus_arguments_never_recurse_without_end() {
        // A nested `new` builds the outer event; self- and mutual assignments end.
        let src = "class H {\n  async Task A() {\n    await bus.PublishAsync(new OrderPaidEvent(new Money(1)));\n    var e = new OrderShippedEvent(new Money(1));\n    await svc.AddAndSaveEventAsync(e);\n    var x = x;\n    bus.PublishAsync(x);\n    p = q;\n    q = p;\n    bus.PublishAsync(p);\n  }\n}\n";
        let f = extract("H.cs", src);
        let produced: Vec<(Option<&str>, u32)> = f
            .events
            .iter()
            .filter(|e| e.role == EventRole::Producer)
            .map(|e| (e.topic.as_lit(), e.line))
            .collect();
        assert!(
            produced.contains(&(Some("OrderPaidEvent"), 3)),
            "{produced:?}"
        );
        assert!(
            produced.contains(&(Some("OrderShippedEvent"), 4)),
            "{produced:?}"
        );
        for tiny in [
            "Publish(new new)",
            "AddEvent(new(new",
            "bus.PublishAsync(new new new X(",
        ] {
            let _ = extract("T.cs", tiny);
        }
        // Many publishes of one variable count only the latest assignments (1,000 pairs).
        let many: String = (0..1000)
            .map(|_| "x = new OrderPaidEvent(); bus.PublishAsync(x);\n")
            .collect();
        let f = extract("M.cs", &format!("class M {{ void A() {{\n{many}}} }}\n"));
        assert!(f.events.iter().any(|e| e.role == EventRole::Producer));
    }

    #[test]
    fn typed_event_bus_producers_and_consumers() {
        let src = r#"public class Handler(IEventBus eventBus, IOrderingIntegrationEventService svc)
{
    public async Task Handle(Cmd cmd)
    {
        await eventBus.PublishAsync(new OrderStartedIntegrationEvent(cmd.UserId));
        var started = new OrderStatusChangedToSubmittedIntegrationEvent(cmd.Id);
        await svc.AddAndSaveEventAsync(started);
        IntegrationEvent evt;
        if (cmd.Ok)
        {
            evt = new OrderPaymentSucceededIntegrationEvent(cmd.Id);
        }
        else
        {
            evt = new OrderPaymentFailedIntegrationEvent(cmd.Id);
        }
        await eventBus.PublishAsync(evt);
        await mediator.Publish(new OrderStartedDomainEvent(cmd.Id));
        await eventBus.PublishAsync(someEvent); await PublishEventsThroughEventBusAsync(transactionId); builder.AddRabbitMqEventBus("eventbus");
        var confirmed = cmd.Any(c => !c.Ok)
            ? (IntegrationEvent)new OrderStockRejectedIntegrationEvent(cmd.Id)
            : new OrderStockConfirmedIntegrationEvent(cmd.Id);
        await svc.SaveEventAndChangesAsync(confirmed);
    }
}
public static class Extensions
{
    public static void AddEvents(this IEventBusBuilder b)
    {
        b.AddSubscription<OrderStartedIntegrationEvent, OrderStartedHandler>()
         .AddSubscription<GracePeriodConfirmedIntegrationEvent, GraceHandler>();
    }
}
public class InvoiceConsumer : IConsumer<InvoiceCreated> { }
"#;
        let f = extract("Handler.cs", src);
        let events: Vec<(EventRole, Option<&str>, u32)> = f
            .events
            .iter()
            .map(|e| (e.role, e.topic.as_lit(), e.line))
            .collect();
        assert_eq!(
            events,
            vec![
                (EventRole::Producer, Some("OrderStartedIntegrationEvent"), 5),
                (
                    EventRole::Producer,
                    Some("OrderStatusChangedToSubmittedIntegrationEvent"),
                    6
                ),
                (
                    EventRole::Producer,
                    Some("OrderPaymentSucceededIntegrationEvent"),
                    11
                ),
                (
                    EventRole::Producer,
                    Some("OrderPaymentFailedIntegrationEvent"),
                    15
                ),
                // A bus publishing a variable of unknown event type: a run-time topic.
                (EventRole::Producer, None, 19),
                // Both arms of a conditional.
                (
                    EventRole::Producer,
                    Some("OrderStockRejectedIntegrationEvent"),
                    21
                ),
                (
                    EventRole::Producer,
                    Some("OrderStockConfirmedIntegrationEvent"),
                    22
                ),
                (
                    EventRole::Consumer,
                    Some("OrderStartedIntegrationEvent"),
                    30
                ),
                (
                    EventRole::Consumer,
                    Some("GracePeriodConfirmedIntegrationEvent"),
                    31
                ),
                (EventRole::Consumer, Some("InvoiceCreated"), 34),
            ]
        );
        let subscription = f
            .events
            .iter()
            .find(|e| e.role == EventRole::Consumer && e.line == 30)
            .expect("line 30");
        assert_eq!(
            subscription.via,
            "event bus, handled by OrderStartedHandler"
        );
        let run_time = f.events.iter().find(|e| e.line == 19).expect("line 19");
        assert!(
            run_time.via.contains("`PublishAsync(someEvent)`")
                && run_time.via.contains("known only at run time"),
            "{}",
            run_time.via
        );
    }

    #[test]
    fn minimal_api_servers_and_urls_from_fields() {
        let src = r#"public class CatalogService(HttpClient httpClient)
{
    private readonly string remoteServiceBaseUrl = "api/catalog/";
    public Task<CatalogItem?> GetItem(int id)
    {
        var uri = $"{remoteServiceBaseUrl}items/{id}";
        return httpClient.GetFromJsonAsync<CatalogItem>(uri);
    }
}
public class BasketService(ILogger<BasketService> logger)
    : Basket.BasketBase
{
}
public static class Program { static void Main() { app.MapGrpcService<BasketService>(); } }
"#;
        let f = extract("CatalogService.cs", src);
        assert_eq!(
            calls(&f),
            vec![call("GET", "{remoteServiceBaseUrl}items/{}", 7)]
        );
        assert!(
            f.bindings
                .iter()
                .any(|b| b.name == "CatalogService.remoteServiceBaseUrl"
                    && b.value.as_lit() == Some("api/catalog/"))
        );
        // The server fact is on the line that names the base.
        assert!(f.grpc.contains(&GrpcFact::Server {
            service: "Basket".into(),
            impl_type: Some("BasketService".into()),
            line: 11
        }));
        assert!(f.grpc.contains(&GrpcFact::Server {
            service: String::new(),
            impl_type: Some("BasketService".into()),
            line: 14
        }));
    }

    #[test]
    fn conventional_mvc_actions_health_checks_forwarders_and_verb_lists() {
        let src = r#"public class AccountController : Controller
{
    [HttpGet]
    public async Task<IActionResult> Login(string returnUrl) { }

    [HttpPost]
    [ValidateAntiForgeryToken]
    public async Task<IActionResult> Login(LoginInputModel model) { }

    public IActionResult AccessDeniedAsync() { }

    [NonAction]
    public void Helper() { }

    private void Hidden() { }
}
public static class Ext
{
    public static void Map(WebApplication app)
    {
        app.MapHealthChecks("/health");
        app.MapMethods("/check", [HttpMethods.Options], () => Results.Ok());
        app.MapForwarder("/product-images/{id}", "https+http://catalog-api", "/api/catalog/items/{id}/pic");
    }
}
"#;
        let f = extract("AccountController.cs", src);
        let routes: Vec<(String, String, u32)> = f
            .http
            .iter()
            .filter_map(|h| match h {
                HttpFact::Route {
                    method, path, line, ..
                } => Some((method.clone(), path.clone(), *line)),
                _ => None,
            })
            .collect();
        let r = |m: &str, p: &str, l: u32| (m.to_string(), p.to_string(), l);
        assert_eq!(
            routes,
            vec![
                r("GET", "/Account/Login", 3),
                r("POST", "/Account/Login", 6),
                r("ANY", "/Account/AccessDenied", 10),
                r("ANY", "/health", 21),
                r("OPTIONS", "/check", 22),
                r("ANY", "/product-images/{id}", 23),
            ]
        );
        assert_eq!(
            calls(&f),
            vec![(
                String::new(),
                "https+http://catalog-api/api/catalog/items/{id}/pic".to_string(),
                23
            )]
        );
    }

    #[test]
    fn truncated_and_malformed_files_never_panic() {
        for cut in (0..SERVICE.len())
            .filter(|&c| SERVICE.is_char_boundary(c))
            .step_by(5)
        {
            let _ = extract("x.cs", &SERVICE[..cut]);
        }
        for src in [
            "namespace",
            "namespace {",
            "class",
            "class X :",
            "class X : A.ABase",
            "[",
            "[Route(",
            "using",
            "using X =",
            "public delegate",
            "enum E {",
            "x.Subscribe(new[] {",
            "new HttpRequestMessage(",
            "_c.GetAsync($\"{",
            "}}}})))",
            "<<<>>>",
        ] {
            let _ = extract("x.cs", src);
        }
    }

    #[test]
    fn junk_input_never_panics() {
        let alphabet: &[u8] = b"{}()[]<>/'\"`$@#*=;:,.?!&|\\\n abcXYZ019_-+classnamespaceusing";
        let mut seed = 0x9e37_79b9_u64;
        let junk: String = (0..200_000)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                alphabet[(seed % alphabet.len() as u64) as usize] as char
            })
            .collect();
        let f = extract("junk.cs", &junk);
        assert!(f.symbols.iter().all(|s| s.end_line >= s.line));
        let deep = "{".repeat(50_000) + &"class A {".repeat(10_000);
        let _ = extract("deep.cs", &deep);
    }
}
