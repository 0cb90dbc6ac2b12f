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
//!
//! The passes are methods of one scanner ([`Rs`]), a file each: [`items`] walks the items,
//! [`patterns`] finds what names hold and the gRPC and Kafka sites, [`routes`] the routes and
//! HTTP calls.

mod items;
mod patterns;
mod routes;

use std::collections::{HashMap, HashSet};

use super::bind::{Assignments, StmtStyle};
use super::common::{self, ClientScope as Scope, join_path};
use super::tokens::{Rules, Tokens};
use super::value::{ExprRules, eval};
use crate::index::facts::{
    Binding, EventFact, EventRole, FileFacts, GrpcFact, HttpFact, Import, Part, SymbolKind, Value,
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
        nested_vars: Vec::new(),
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
    crate::order::sort_by_key(&mut rs.facts.http, HttpFact::line);
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
    bindings: common::ClientBindings<'a>,
    /// Path prefixes of axum `.nest("/p", …)` and actix `web::scope("/p")`: (last token, prefix).
    prefix_stack: Vec<(usize, String)>,
    /// Routers built in a variable and nested under a prefix: (the assignment's right-hand
    /// side, prefix).
    nested_vars: Vec<((usize, usize), String)>,
    tonic: bool,
    rdkafka: bool,
    http_client: bool,
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
        assert_http_calls, brief, env, every_prefix, every_short_token_sequence, extract_each,
        extract_junk, grpc_clients, grpc_receiver_calls, grpc_servers,
        http_calls_borrowed as http_calls, imports, junk_bytes32, lit, names, reference,
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
        let rows = grpc_receiver_calls(f).into_iter();
        rows.map(|(s, r, m, l)| (s.unwrap_or("?"), r, m, l))
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
    fn an_axum_router_built_in_a_variable_takes_the_prefix_it_is_nested_under() {
        let src = r#"
fn app() -> Router {
    let api = Router::new()
        .route("/orders/:id", get(get_order))
        .route("/orders", post(create_order));
    let other = Router::new().route("/free", get(free));
    Router::new().nest("/api", api).route("/health", get(health))
}
"#;
        let f = extract("src/main.rs", src);
        let paths: Vec<&str> = routes(&f).into_iter().map(|r| r.1).collect();
        assert_eq!(
            paths,
            ["/api/orders/:id", "/api/orders", "/free", "/health"]
        );
    }

    #[test]
    fn a_router_nested_again_and_again_is_one_entry() {
        // Each `.nest("/api", api)` added the router again and every nest and route looked
        // the list through: 8 000 of them took 3 s in a debug build (quadratic).
        let src = format!(
            "fn app() -> Router {{\n    let api = Router::new().route(\"/x\", get(x));\n    Router::new(){}.nest(\"/v2\", api)\n}}\n",
            ".nest(\"/api\", api)".repeat(20_000)
        );
        let f = extract("src/main.rs", &src);
        let paths: Vec<&str> = routes(&f).into_iter().map(|r| r.1).collect();
        // The last nest names the prefix, as with one entry per nest.
        assert_eq!(paths, ["/v2/x"]);
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
        assert_http_calls(
            &f,
            &[
                ("GET", "{}/estimate", 9),
                // A module-level constant stays a reference for the graph.
                ("GET", "{BASE}/x/{}", 10),
                ("POST", "{BASE}/quotes/{}", 12),
                ("DELETE", "{env CART_URL}/items", 14),
                // `base + "/" + id`: no literal segment, which the graph never matches to a
                // route. `self.cache.get(key)`, a `format!` key and `map.get` are not requests.
                ("GET", "{}/{}", 15),
            ],
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
        assert_eq!(names(&f), vec!["real", "after"]);
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
        every_prefix(extract, "p.rs", src);
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
        extract_junk(extract, "junk.rs", &junk_bytes32(alphabet, 0x9e37_79b9));
    }
}
