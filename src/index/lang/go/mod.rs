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
//!
//! The passes are methods of one scanner ([`Go`]), a file each: [`decls`] the declaration
//! walk, [`patterns`] assignments and gRPC, [`events`] Kafka and AMQP with the evaluator glue,
//! [`http`] routes and client calls.

mod decls;
mod events;
mod http;
mod patterns;

use std::collections::HashMap;

use super::bind::{Assignments, StmtStyle};
use super::common::{self, ClientScope as Scope, join_path};
use super::tokens::{Rules, Tokens};
use super::value::{ExprRules, eval, with_fallback};
use crate::index::facts::{
    Binding, EventRole, FileFacts, GrpcFact, HttpFact, Import, Part, SymbolKind, Value,
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

/// Which messaging libraries the file imports (to accept their generically named methods).
#[derive(Debug, Clone, Copy, Default)]
struct Libs {
    sarama: bool,
    confluent: bool,
    /// github.com/rabbitmq/amqp091-go or github.com/streadway/amqp.
    amqp: bool,
    /// The NATS and Redis clients imported ([`common::PubSub::imported`]).
    pubsub: (bool, bool),
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
            pubsub: common::PubSub::imported(imports),
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
    bindings: common::ClientBindings<'a>,
    /// Router variables with a path prefix (`v1 := r.Group("/v1")`).
    group_prefix: HashMap<&'a str, String>,
    /// chi `r.Route("/p", func(r chi.Router) {…})` scopes: (closing token, full prefix).
    route_stack: Vec<(usize, String)>,
    /// AMQP queues declared into variables, in source order.
    queues: Vec<Queue<'a>>,
    libs: Libs,
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
        bindings, events, every_prefix, every_short_token_sequence, extract_each, extract_junk,
        grpc_calls, grpc_clients, grpc_receiver_calls, grpc_servers, has_sym, http_calls as calls,
        import_aliases, junk_bytes32, lit, names, routes, sym,
    };

    /// A route's handler, as [`routes`] gives it.
    fn s(handler: &str) -> Option<String> {
        Some(handler.to_string())
    }

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
        let calls = grpc_receiver_calls(&f);
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
    fn net_http_patterns_ending_in_a_slash_serve_their_subtree() {
        let src = "package main\n\nfunc main() {\n\thttp.HandleFunc(\"/catalogue/\", item)\n\thttp.HandleFunc(\"/\", index)\n\tr.HandleFunc(\"/tags/\", tags)\n}\n";
        let f = extract("main.go", src);
        assert_eq!(
            routes(&f),
            vec![
                ("ANY".into(), "/catalogue/{path...}".into(), s("item"), 4),
                ("ANY".into(), "/".into(), s("index"), 5),
                ("ANY".into(), "/tags/".into(), s("tags"), 6),
            ]
        );
    }

    #[test]
    fn nats_core_jetstream_and_go_redis() {
        let src = r#"package events

import (
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const shipped = "orders.shipped"

func run(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, subj string) {
	nc.Publish("orders.created", data)
	nc.Subscribe("orders.*", handle)
	nc.QueueSubscribe(shipped, "workers", handle)
	js.Publish(ctx, "payments.done", data)
	nc.Publish(subj, data)
	nc.Flush()
}
"#;
        let f = extract("events.go", src);
        use EventRole::*;
        assert_eq!(
            events(&f),
            vec![
                (Producer, lit("orders.created"), "nats", 11),
                (Consumer, lit("orders.*"), "nats", 12),
                (Consumer, Value::reference("shipped"), "nats", 13),
                // JetStream's context argument is skipped.
                (Producer, lit("payments.done"), "nats", 14),
                // A parameter: kept so the graph lists the site as unresolved.
                (Producer, Value::dynamic(), "nats", 15),
            ]
        );
        let redis = r#"package cache

import "github.com/redis/go-redis/v9"

func run(ctx context.Context, rdb *redis.Client) {
	rdb.Publish(ctx, "orders.created", msg)
	sub := rdb.Subscribe(ctx, "orders.created", "orders.paid")
	rdb.PSubscribe(ctx, "orders.*")
	rdb.XAdd(ctx, &redis.XAddArgs{Stream: "audit", Values: v})
	rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Streams: []string{"audit", ">"}})
	rdb.Get(ctx, "key")
}
"#;
        assert_eq!(
            events(&extract("cache.go", redis)),
            vec![
                (Producer, lit("orders.created"), "redis", 6),
                (Consumer, lit("orders.created"), "redis", 7),
                (Consumer, lit("orders.paid"), "redis", 7),
                (Consumer, lit("orders.*"), "redis", 8),
                (Producer, lit("audit"), "redis", 9),
                (Consumer, lit("audit"), "redis", 10),
            ]
        );
    }

    #[test]
    fn publish_without_a_pubsub_import_is_someone_elses() {
        // An in-house bus, and a NATS-shaped call in a file that imports neither library.
        let src = "package n\nimport \"example.com/bus\"\nfunc f(b *bus.Bus) {\n\tb.Publish(\"orders.created\", x)\n\tb.Subscribe(\"orders.created\", h)\n}\n";
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
    fn a_matcher_chain_that_opens_the_file_is_no_route() {
        // The chain walk stepped back past the first token (an overflow in a checked build).
        for src in [
            "Path(\"/x\").Handler(h)",
            "Methods(\"GET\").Path(\"/x\").HandlerFunc(h)",
        ] {
            assert!(routes(&extract("transport.go", src)).is_empty(), "{src}");
        }
    }

    #[test]
    fn gorilla_routes_whose_matchers_come_before_the_handler() {
        let src = r#"package catalogue

func MakeHTTPHandler(e Endpoints, imagePath string) *mux.Router {
	r := mux.NewRouter().StrictSlash(false)
	r.Methods("GET").Path("/catalogue").Handler(httptransport.NewServer(
		e.ListEndpoint,
		decodeListRequest,
		options...,
	))
	r.Methods("GET", "HEAD", "GET").Path("/catalogue/{id}").Name("get").Handler(h)
	r.Path("/cart").Methods(http.MethodPost).HandlerFunc(s.addToCart)
	r.Methods("GET").PathPrefix("/catalogue/images/").Handler(http.StripPrefix(
		"/catalogue/images/", http.FileServer(http.Dir(imagePath))))
	api := r.PathPrefix("/api").Subrouter()
	api.Methods("DELETE").Path("/items/{id}").HandlerFunc(deleteItem)
	r.PathPrefix("/static").Subrouter().Handler(h)
	w.Header().Set("a", "b")
	srv.Handler(h)
}
"#;
        let f = extract("transport.go", src);
        let s = |x: &str| Some(x.to_string());
        assert_eq!(
            routes(&f),
            vec![
                ("GET".into(), "/catalogue".into(), s("ListEndpoint"), 5),
                ("GET".into(), "/catalogue/{id}".into(), s("h"), 10),
                ("HEAD".into(), "/catalogue/{id}".into(), s("h"), 10),
                ("POST".into(), "/cart".into(), s("addToCart"), 11),
                (
                    "GET".into(),
                    "/catalogue/images/".into(),
                    s("imagePath"),
                    12
                ),
                (
                    "DELETE".into(),
                    "/api/items/{id}".into(),
                    s("deleteItem"),
                    15
                ),
            ]
        );
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
	ch.Publish("", "jobs", false, false, msg)
	ch.Publish("évènements", "", false, false, msg)
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
        let ex = common::AMQP_EXCHANGE_VIA;
        assert_eq!(
            events(&f),
            vec![
                // A bound queue consumes its exchange.
                (Consumer, lit("robot-shop"), ex, 10),
                // `q.Name` is the name the queue was declared with.
                (Consumer, lit("orders"), "amqp", 11),
                (Consumer, lit("audit"), "amqp", 12),
                // The routing key when there is one, and the exchange.
                (Producer, lit("orders"), "amqp", 16),
                (Producer, lit("robot-shop"), ex, 16),
                (Producer, lit("logs"), ex, 17),
                (Producer, Value::reference("exchange"), ex, 18),
                // A parameter key is a run-time topic, kept as an unresolved site.
                (Producer, Value::dynamic(), "amqp", 19),
                (Producer, lit("events"), ex, 19),
                // The default exchange is no endpoint.
                (Producer, lit("jobs"), "amqp", 23),
                (Producer, lit("évènements"), ex, 24),
                (Consumer, lit("logs"), ex, 29),
                // A server-named queue consumes what it is bound to.
                (Consumer, lit("logs"), "amqp", 30),
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
        assert_eq!(names(&f), vec!["doc", "tpl"]);
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
        every_prefix(extract, "p.go", src);
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
        extract_junk(extract, "junk.go", &junk_bytes32(alphabet, 0x1234_5678));
    }
}

#[cfg(test)]
mod env_fallback_tests {
    use super::*;
    use crate::index::facts::{EventRole, Value};
    use crate::index::lang::test_support::{bindings, env, topics};

    #[test]
    fn env_helpers_are_read_by_their_shape_whatever_their_name() {
        let src = r#"package events

import "os"

func topic() string {
	if v := os.Getenv("TOPIC"); v != "" {
		return v
	}
	return "users"
}

func lookup(key, fallback string) string {
	if value, ok := os.LookupEnv(key); ok {
		return value
	}
	return fallback
}

func pick(fast bool) string {
	if fast {
		return "fast"
	}
	return "slow"
}

var Topic = topic()

func run() {
	w := &kafka.Writer{Topic: lookup("AUDIT_TOPIC", "audits")}
	p := &kafka.Writer{Topic: pick(true)}
	_, _ = w, p
}
"#;
        let f = extract("events/events.go", src);
        assert_eq!(
            bindings(&f),
            vec![("Topic", env("TOPIC", Some("users")))],
            "a package variable initialised by the helper holds the env var and its default"
        );
        assert_eq!(
            topics(&f),
            vec![
                (EventRole::Producer, env("AUDIT_TOPIC", Some("audits")), 29),
                // Two literals and no environment read: picked at run time.
                (EventRole::Producer, Value::dynamic(), 30),
            ]
        );
    }

    #[test]
    fn a_literal_replaced_when_an_env_var_is_set_defaults_to_the_literal() {
        let src = r#"package main

func main() {
	t := "orders"
	if v := os.Getenv("ORDERS_TOPIC"); v != "" {
		t = v
	}
	r := kafka.NewReader(kafka.ReaderConfig{Topic: t})
	u := "payments"
	if fast {
		u = "payments-fast"
	}
	w := &kafka.Writer{Topic: u}
	_, _ = r, w
}
"#;
        let f = extract("main.go", src);
        assert_eq!(
            topics(&f),
            vec![
                (EventRole::Consumer, env("ORDERS_TOPIC", Some("orders")), 8),
                // Another literal on some path is no environment default: the first one stays.
                (EventRole::Producer, Value::lit("payments"), 13),
            ]
        );
    }
}
