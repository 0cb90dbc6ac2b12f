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
//!
//! The files: this one holds the entry point, the shared state ([`Ex`]) and its token helpers;
//! `bindings.rs`, `declarations.rs` and `uses.rs` are the three passes; `events.rs` reads typed
//! event buses (MassTransit, eShop-style `IEventBus`), used by the bindings and uses passes.
//! The tests stay here: each reads a whole file through [`extract`].

mod bindings;
mod declarations;
mod events;
mod razor;
mod uses;

use std::collections::{HashMap, HashSet};

use super::bind::{Assignments, StmtStyle};
use super::cfamily;
use super::cfamily::{Declares, Site};
use super::common::join_route;
use super::common::{self, http_path_of, looks_like_http_path};
use super::tokens::{Chain, Rules, TokKind, Tokens};
use super::value::{ExprRules, eval};
use crate::index::facts::{
    EventFact, EventRole, FileFacts, GrpcFact, HttpFact, Import, Symbol, SymbolKind, Value,
};
use crate::index::lex::cancel::Every;
use crate::index::lex::{Syntax, lex};

/// Extracts the facts of one C# file (the tests' entry; the indexer goes through
/// [`super::extract`]).
#[cfg(test)]
pub fn extract(path: &str, text: &str) -> FileFacts {
    // A lone `\r` is a line break (the lexer counts it; the Razor reader counts `\n`).
    extract_normalized(path, &crate::index::lex::normalize_breaks(text))
}

/// [`extract`] of a text whose lone `\r` are already `\n` (from [`super::extract`], which
/// normalizes once for every language).
pub(super) fn extract_normalized(path: &str, text: &str) -> FileFacts {
    if razor::is_razor(path) {
        return razor::extract(path, text);
    }
    extract_code(text)
}

/// The facts of C# source text (a `.cs` file, or the C# text of a Razor file).
fn extract_code(text: &str) -> FileFacts {
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
        typed: events::TypedEvents::default(),
        // Length and first byte before the words: a string comparison per word and token
        // was a call each at opt-level "z" (and three substring searches of the file cost
        // as much as the walk).
        grpc_hint: (0..toks.len()).any(|i| {
            toks.ident(i).is_some_and(|w| {
                matches!(w.len(), 4 | 6 | 11)
                    && matches!(w.as_bytes()[0], b'G' | b'P' | b'C')
                    && matches!(w, "Grpc" | "GrpcChannel" | "Protos" | "CallInvoker")
            })
        }),
    };
    ex.aliases();
    ex.bindings();
    ex.declarations();
    ex.uses();
    ex.method_returns();
    let mut facts = ex.facts;
    cfamily::app_prefixes(
        &toks,
        &asg,
        &ExprRules::CSHARP,
        &["UsePathBase"],
        &mut facts,
    );
    cfamily::finish(&asg, &toks, &ExprRules::CSHARP, facts)
}

/// What a field, parameter or variable is known to hold.
#[derive(Debug, Clone, PartialEq)]
enum Bind {
    Grpc(String),
    Producer,
    Consumer,
    Http,
    /// A minimal-API route group (`app.MapGroup("/v1")`) with its prefix and the API
    /// versions it serves (`.HasApiVersion(1.0)`, inherited from its parent group).
    Group(String, Vec<String>),
    /// A method that returns a gRPC client of the service (`Basket.BasketClient
    /// GetBasketClient()`): `GetBasketClient().GetBasketAsync(…)` calls the service.
    GrpcFactory(String),
    /// An event bus (`IEventBus`, MassTransit `IBus`, `IMessageBus`): its typed
    /// `Subscribe<TEvent>(…)` is a subscription.
    Bus,
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
    // The suffix first: every excluded name ends in `Client`, and this runs for nearly every
    // type-like name of a file, where comparing with the whole list first was most of the cost.
    let stem = ty.strip_suffix("Client")?;
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
    (stem.len() > 1 && stem.starts_with(|c: char| c.is_ascii_uppercase())).then(|| stem.to_string())
}

fn strip_async(method: &str) -> &str {
    match method.strip_suffix("Async") {
        Some(m) if !m.is_empty() => m,
        _ => method,
    }
}

/// A declaration region still to scan.
type Region = cfamily::Region<ClassCtx>;

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
    /// Lookups of the typed event-bus pass, built as it goes (see `events.rs`).
    typed: events::TypedEvents<'t>,
}

impl<'t> Ex<'t, '_, '_> {
    fn line(&self, i: usize) -> u32 {
        self.t.line(i)
    }

    fn close_line(&self, open: usize) -> u32 {
        cfamily::close_line(self.t, open)
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
        cfamily::push_lit(&mut self.facts, name, value, line);
    }

    /// The variable or field an expression starting at `start` is assigned to (`var x = …`,
    /// `_x = …`, `Type x = …`, `this._x = …`).
    fn assigned_name(&self, start: usize) -> Option<&'t str> {
        let t = self.t;
        let k = cfamily::before_await(t, start)?;
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
        common::topic_of(eval(t, (a, e), &ExprRules::CSHARP, self.asg))
    }

    /// The URL expression in `a..e` as the shared evaluator reads it; unless `sure`, it
    /// must read like a URL (a `GetAsync` on a cache is not a request).
    fn url_in(&self, a: usize, e: usize, sure: bool) -> Option<Value> {
        if a >= e {
            return None;
        }
        common::url_of(eval(self.t, (a, e), &ExprRules::CSHARP, self.asg), sure)
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
}

#[cfg(test)]
mod tests {
    #[test]
    fn razor_using_directives_are_imports() {
        let src = "\u{feff}@using System.Net.Http\n@using eShop.WebAppComponents.Catalog;\n@using Q = A.B\n@usingX\n<p>@using Not.This</p>\n@code { int n; }\n";
        let f = super::extract("src/App/Components/_Imports.razor", src);
        let got = import_lines(&f);
        assert_eq!(
            got,
            vec![
                ("System.Net.Http", 1),
                ("eShop.WebAppComponents.Catalog", 2),
                ("A.B", 3)
            ]
        );
        // A folder's directive file declares no class; its `@code` is still read.
        assert!(f.symbols.iter().all(|s| s.kind != SymbolKind::Class));
    }

    use super::*;
    use crate::index::lang::test_support::{
        constant, extract_each, extract_junk, grpc_calls, grpc_clients, http_calls, import_aliases,
        import_lines, junk_chars64, lit, names, route, routes_borrowed, sampled_prefixes, sym,
        topics,
    };

    /// The calls of a file as (method, URL as the evaluator read it, line).
    fn calls(f: &FileFacts) -> Vec<(String, String, u32)> {
        let rows = http_calls(f).into_iter();
        rows.map(|(m, u, l)| (m.unwrap_or_default(), u, l))
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
        let imports = import_aliases(&f);
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
        let events = topics(&f);
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
        let events = topics(&f);
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
    fn api_versions_of_minimal_api_routes() {
        let src = r#"class Api {
    void Map(WebApplication app) {
        var api = app.MapGroup("api/orders").HasApiVersion(1.0).HasApiVersion("2.0");
        var beta = app.MapGroup("beta").HasApiVersion(3, "beta");
        api.MapGet("/", List);
        api.MapPut("/ship", Ship).MapToApiVersion(2);
        api.MapGet("/ping", Ping).IsApiVersionNeutral();
        app.MapGet("/plain", Plain).WithName("Plain").HasApiVersion(x);
        beta.MapPost("/ümlaut", Post);
    }
}
"#;
        let f = extract("Api.cs", src);
        let versions: Vec<(u32, Vec<String>)> = f
            .http
            .iter()
            .filter_map(|h| match h {
                HttpFact::Versions { versions, line } => Some((*line, versions.clone())),
                _ => None,
            })
            .collect();
        let v = |l: u32, vs: &[&str]| (l, vs.iter().map(|s| s.to_string()).collect());
        // Neutral and unreadable versions say nothing; a status joins its version.
        assert_eq!(
            versions,
            vec![v(5, &["1.0", "2.0"]), v(6, &["2.0"]), v(9, &["3.0-beta"])]
        );
        let routes = f
            .http
            .iter()
            .filter(|h| matches!(h, HttpFact::Route { .. }));
        assert_eq!(routes.count(), 5);
    }

    #[test]
    fn request_messages_built_with_an_object_initializer() {
        let src = r#"class Sender {
    Task Send(Subscription subs, HttpClient client, string jsonData) {
        var request = new HttpRequestMessage()
        {
            RequestUri = new Uri(subs.DestUrl, UriKind.Absolute),
            Method = HttpMethod.Post,
            Content = new StringContent(jsonData, Encoding.UTF8, "application/json")
        };
        return client.SendAsync(request);
    }
    Task Ping(HttpClient client) {
        var m = new HttpRequestMessage { Method = HttpMethod.Options, RequestUri = new Uri("/überprüfen") };
        var noUri = new HttpRequestMessage { Method = HttpMethod.Get };
        var other = new Dictionary<string, string>() { ["RequestUri"] = "/not-a-request" };
        return client.SendAsync(m);
    }
}
"#;
        let f = extract("Sender.cs", src);
        let rows = http_calls(&f);
        // The initializer's verb and URI, at the send; a message without a URI is no call,
        // nor is another type's initializer.
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(rows[0].0.as_deref(), Some("POST"));
        assert_eq!(rows[0].2, 9);
        assert_eq!(rows[1], (Some("OPTIONS".into()), "/überprüfen".into(), 15));
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
        assert_eq!(
            names(&f),
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
        assert_eq!(
            grpc_calls(&extract("W.cs", src)),
            vec![(Some("Offers"), "GetOffers", 3)]
        );
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
        let calls = grpc_calls(&f);
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
        let clients: Vec<u32> = grpc_clients(&f).iter().map(|c| c.2).collect();
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
        extract_each(
            extract,
            "T.cs",
            &[
                "Publish(new new)",
                "AddEvent(new(new",
                "bus.PublishAsync(new new new X(",
            ],
        );
        // Many publishes of one variable count only the latest assignments (1,000 pairs).
        let many: String = (0..1000)
            .map(|_| "x = new OrderPaidEvent(); bus.PublishAsync(x);\n")
            .collect();
        let f = extract("M.cs", &format!("class M {{ void A() {{\n{many}}} }}\n"));
        assert!(f.events.iter().any(|e| e.role == EventRole::Producer));
    }

    #[test]
    fn old_mac_line_ends_number_lines_like_lf_and_crlf() {
        let lf = "namespace A;\n// a comment\npublic class H\n{\n    [HttpGet(\"/orders\")]\n    public void Get() { bus.PublishAsync(new OrderPaidEvent()); }\n}\n";
        let facts = |text: &str| {
            let f = extract("H.cs", text);
            let symbols: Vec<(String, u32)> =
                f.symbols.iter().map(|s| (s.name.clone(), s.line)).collect();
            let events: Vec<u32> = f.events.iter().map(|e| e.line).collect();
            (symbols, events)
        };
        let want = facts(lf);
        assert!(want.0.contains(&("H".to_string(), 3)), "{want:?}");
        assert!(want.0.contains(&("Get".to_string(), 6)), "{want:?}");
        assert_eq!(want.1, vec![6]);
        assert_eq!(facts(&lf.replace('\n', "\r")), want);
        assert_eq!(facts(&lf.replace('\n', "\r\n")), want);
    }

    #[test]
    fn a_given_up_extraction_stops_early_and_a_normal_one_does_not() {
        // The indexer raises the flag of an extraction it gave up on; the lexer and the passes
        // then return what they have instead of running on.
        let src: String = (0..2000)
            .map(|k| {
                format!(
                    "public class C{k} {{ void M() {{ bus.PublishAsync(new E{k}Event()); }} }}\n"
                )
            })
            .collect();
        let full = extract("C.cs", &src);
        assert_eq!(
            full.symbols
                .iter()
                .filter(|s| s.name.starts_with('C'))
                .count(),
            2000
        );
        let cancel = crate::index::lex::cancel::Cancel::new();
        cancel.cancel();
        let partial = cancel.scope(|| extract("C.cs", &src));
        assert!(
            partial.symbols.len() < full.symbols.len() / 4
                && partial.events.len() < full.events.len() / 4,
            "{} symbols, {} events",
            partial.symbols.len(),
            partial.events.len()
        );
        // Without a raised flag the scope changes nothing.
        let again = crate::index::lex::cancel::Cancel::new().scope(|| extract("C.cs", &src));
        assert_eq!(again, full);
    }

    #[test]
    fn typed_bus_variables_fan_out_once_and_stay_exact_between_assignments() {
        // A variable set in 8 branches from variables each set in 8 branches, 3 levels deep,
        // published 2,000 times: every event it may hold is found (each once, at its `new`),
        // and the lookups are shared by the calls that see the same assignments.
        let mut src = String::from("class H {\n void M(IEventBus bus) {\n");
        for k in 0..8 {
            src.push_str(&format!(
                "  IntegrationEvent v0 = new E{k}IntegrationEvent();\n"
            ));
        }
        for d in 1..=3 {
            for _ in 0..8 {
                src.push_str(&format!("  v{d} = v{};\n", d - 1));
            }
        }
        for _ in 0..2000 {
            src.push_str("  bus.PublishAsync(v3);\n");
        }
        src.push_str(" }\n}\n");
        let f = extract("H.cs", &src);
        let found: Vec<(Option<&str>, u32)> = f
            .events
            .iter()
            .map(|e| (e.topic.as_lit(), e.line))
            .collect();
        let want: Vec<(Option<String>, u32)> = (0..8)
            .map(|k| (Some(format!("E{k}IntegrationEvent")), k + 3))
            .collect();
        let want: Vec<(Option<&str>, u32)> = want.iter().map(|(t, l)| (t.as_deref(), *l)).collect();
        assert_eq!(found, want);

        // An assignment between two calls: the second sees both events, the first only its own;
        // a cycle ends at the depth cap without a result of its own.
        let src = "class H { void M(IEventBus bus) {\n\
            x = new AIntegrationEvent();\n\
            bus.PublishAsync(x);\n\
            y = x; x = y;\n\
            bus.PublishAsync(y);\n\
            x = new BIntegrationEvent();\n\
            bus.PublishAsync(y);\n\
            }}\n";
        let f = extract("H.cs", src);
        let found: Vec<(Option<&str>, u32)> = f
            .events
            .iter()
            .map(|e| (e.topic.as_lit(), e.line))
            .collect();
        assert_eq!(
            found,
            vec![
                (Some("AIntegrationEvent"), 2),
                (Some("BIntegrationEvent"), 6)
            ]
        );
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
    fn only_an_event_bus_subscribes_to_a_topic() {
        // Aspire's eventing, a UI messenger: typed callbacks on objects that are no bus.
        let src = r#"// Ereignisse für die Größenänderung — ünïcode vor dem Code
public class Subscriber(IEventBus events, IDistributedApplicationEventing eventing)
{
    private readonly IMessageBus _bus;
    public Task SubscribeAsync(IDistributedApplicationEventing eventing)
    {
        eventing.Subscribe<BeforeStartEvent>((@event, ct) => Task.CompletedTask);
        messenger.Subscribe<CartChangedMessage>(this, (r, m) => { });
        events.Subscribe<OrderPaidIntegrationEvent>(OnPaid);
        _bus.Subscribe<GrößeGeändertEvent>(OnResize);
        eventBus.SubscribeAsync<OrderShippedIntegrationEvent>(OnShipped);
        registry.Subscribe<StockReservedIntegrationEvent, StockReservedHandler>();
        return Task.CompletedTask;
    }
}
"#;
        let f = extract("Subscriber.cs", src);
        let got: Vec<(Option<&str>, u32, &str)> = f
            .events
            .iter()
            .map(|e| (e.topic.as_lit(), e.line, e.via.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                // Typed as a bus (a primary-constructor parameter), a field typed as one,
                // named as one, and a registration with its handler.
                (Some("OrderPaidIntegrationEvent"), 9, "event bus"),
                (Some("GrößeGeändertEvent"), 10, "event bus"),
                (Some("OrderShippedIntegrationEvent"), 11, "event bus"),
                (
                    Some("StockReservedIntegrationEvent"),
                    12,
                    "event bus, handled by StockReservedHandler"
                ),
            ]
        );
    }

    #[test]
    fn a_mass_transit_consumer_names_its_class_as_the_handler() {
        let src = r#"namespace Mail;
public class ReceiptMailer : IConsumer<OrderPaidIntegrationEvent>
{
    public Task Consume(ConsumeContext<OrderPaidIntegrationEvent> context) => Task.CompletedTask;
}
"#;
        let f = extract("ReceiptMailer.cs", src);
        let e = &f.events[0];
        assert_eq!(
            (e.role, e.topic.as_lit(), e.line),
            (EventRole::Consumer, Some("OrderPaidIntegrationEvent"), 2)
        );
        assert_eq!(
            crate::index::facts::handler_in_via(&e.via),
            Some("ReceiptMailer")
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
        let routes: Vec<(String, String, u32)> = routes_borrowed(&f)
            .into_iter()
            .map(|(m, p, _, l)| (m.to_string(), p.to_string(), l))
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
        sampled_prefixes(extract, "x.cs", SERVICE, 5);
        extract_each(
            extract,
            "x.cs",
            &[
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
            ],
        );
    }

    #[test]
    fn a_method_returning_a_url_is_a_binding_a_navigation_elsewhere_reads() {
        let src = "namespace Shop.Ui;\npublic static class ItemHelper\n{\n    public static string Url(CatalogItem item)\n        => $\"item/{item.Id}\";\n    public static string Name(CatalogItem item) => item.Name;\n}\nclass Menu {\n  void Go() { Nav.NavigateTo(Pages.User.LogIn.Url(Nav)); Nav.NavigateTo(Build()); }\n}\n";
        let f = extract("Ui/ItemHelper.cs", src);
        let b: Vec<(&str, String)> = f
            .bindings
            .iter()
            .map(|b| (b.name.as_str(), b.value.display()))
            .collect();
        // A method returning no literal text (`item.Name`) is no binding.
        assert_eq!(b, vec![("ItemHelper.Url()", "item/{item.Id}".to_string())]);
        let nav: Vec<String> = f
            .http
            .iter()
            .filter_map(|h| match h {
                HttpFact::Navigate { url, .. } => Some(url.display()),
                _ => None,
            })
            .collect();
        // An unqualified call of an unknown helper is run-time: no navigation.
        assert_eq!(nav, vec!["{LogIn.Url()}".to_string()]);
    }

    #[test]
    fn junk_input_never_panics() {
        let alphabet: &[u8] = b"{}()[]<>/'\"`$@#*=;:,.?!&|\\\n abcXYZ019_-+classnamespaceusing";
        extract_junk(extract, "junk.cs", &junk_chars64(alphabet, 0x9e37_79b9));
        let deep = "{".repeat(50_000) + &"class A {".repeat(10_000);
        let _ = extract("deep.cs", &deep);
    }
}
