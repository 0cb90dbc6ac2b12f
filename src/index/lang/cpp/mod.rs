//! C and C++ extractor: `#include` imports, `#define`s, namespaces, classes/structs/unions
//! with their methods (declared inside, or defined out of line as `Ret Cls::method(…) {`),
//! free functions with a body, enums and their values, `typedef`/`using` aliases, string
//! constants; gRPC servers (`class X : public Svc::Service`), stubs and their calls; Kafka
//! (cppkafka, librdkafka) topics; HTTP calls (cpr, cpp-httplib) and routes (cpp-httplib,
//! Crow), best effort.
//!
//! Preprocessor lines are read line by line and left out of the token stream, so a macro can
//! never unbalance the braces the declaration walk relies on. The walk keeps namespace and
//! class scopes on an explicit stack and skips function bodies whole. C++ cannot be parsed
//! without types, so the walk is deliberately conservative: a function is recorded only when
//! it has a body, or when it is declared inside a class; a call or a variable with constructor
//! arguments at namespace level (`Foo foo(1);`) is never mistaken for a function.
//!
//! This file reads the preprocessor lines and drives the scanner ([`Cpp`]), whose passes are a
//! file each: [`decls`] the declaration walk and types, [`functions`] functions and variables,
//! [`patterns`] the gRPC, Kafka and HTTP sites.

mod decls;
mod functions;
mod patterns;

use std::collections::HashMap;

use super::bind::{Assignments, StmtStyle};
use super::common;
use super::tokens::{Rules, TokKind, Tokens};
use super::value::{ExprRules, eval};
use crate::index::facts::{
    Binding, EventRole, FileFacts, GrpcFact, HttpFact, Import, SymbolKind, Value,
};
use crate::index::lex::{Lexed, Syntax, lex};

/// Extracts the facts of one C or C++ file. `path` is unused.
///
/// Conventions: a namespace is a `Module` (named as written, `a::b` for a nested
/// definition) and the container of what it declares; a function-like macro is a `Function`,
/// an object-like macro with a value a `Constant`; class members' constants are named
/// `Class.kName`; qualified topic references are written with dots (`topics::kOrders` →
/// `topics.kOrders`).
pub fn extract(path: &str, text: &str) -> FileFacts {
    let _ = path;
    let lexed = lex(Syntax::C, text);
    let mut facts = FileFacts::default();
    let skip = directives(&lexed, &mut facts);
    let t = Tokens::with_skips(&lexed, &Rules::C_FAMILY, &skip);
    let asg = Assignments::scan(&t, &StmtStyle::SEMICOLON);
    let code = lexed.code.as_str();
    let mut cpp = Cpp {
        t: &t,
        asg: &asg,
        facts,
        bodies: Vec::new(),
        bindings: HashMap::new(),
        cppkafka: code.contains("cppkafka"),
        rdkafka: code.contains("RdKafka") || code.contains("rd_kafka"),
        httplib: code.contains("httplib"),
    };
    cpp.decls();
    cpp.patterns();
    cpp.calls();
    let mut facts = cpp.facts;
    let declared = facts.bindings.len();
    asg.export(&t, &ExprRules::CPP, &mut facts);
    // `using Id = std::string;`, `template <typename T = int>`: types, not values.
    let exported: Vec<Binding> = facts
        .bindings
        .drain(declared..)
        .filter(|b| !declares_type(&t, b.line))
        .collect();
    facts.bindings.extend(exported);
    crate::order::sort_by_key(&mut facts.symbols, |s| s.line);
    crate::order::sort_by_key(&mut facts.bindings, |c| c.line);
    facts
}

// ---------------------------------------------------------------------------------------------
// Preprocessor
// ---------------------------------------------------------------------------------------------

/// Reads `#include` and `#define` lines into `facts` and returns the byte ranges of every
/// directive (continuation lines included), to be left out of the token stream.
fn directives(l: &Lexed, facts: &mut FileFacts) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let count = l.line_count();
    let mut line = 1;
    while line <= count {
        let (s, e) = l.line_range(line);
        let code = &l.code[s..e];
        let Some(hash) = code.find(|c: char| !c.is_whitespace()) else {
            line += 1;
            continue;
        };
        if !code[hash..].starts_with('#') {
            line += 1;
            continue;
        }
        let mut last = line;
        while last < count && l.source_line(last).trim_end().ends_with('\\') {
            last += 1;
        }
        let end = l.line_range(last).1;
        out.push((s, end));
        directive(l, s + hash + 1, end, line, last, facts);
        line = last + 1;
    }
    out
}

fn directive(l: &Lexed, from: usize, end: usize, line: u32, last: u32, facts: &mut FileFacts) {
    let code = &l.code[from..end];
    let word_start = code.len() - code.trim_start().len();
    let rest = &code[word_start..];
    let word_len = rest
        .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .unwrap_or(rest.len());
    let word = &rest[..word_len];
    let after = from + word_start + word_len;
    match word {
        "include" | "import" | "include_next" => {
            let src = &l.text[after..end];
            let src = src.trim_start();
            let module = if let Some(r) = src.strip_prefix('"') {
                r.split('"').next()
            } else if let Some(r) = src.strip_prefix('<') {
                r.split('>').next()
            } else {
                None
            };
            if let Some(m) = module.filter(|m| !m.is_empty() && !m.contains('\n')) {
                facts
                    .imports
                    .push(Import::whole_module(m.to_string(), None, line));
            }
        }
        "define" => {
            let rest = &l.code[after..end];
            let name_start = rest.len() - rest.trim_start().len();
            let name_len = rest[name_start..]
                .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .unwrap_or(rest.len() - name_start);
            let name = &rest[name_start..name_start + name_len];
            if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
                return;
            }
            let body_at = after + name_start + name_len;
            let doc_line = l.doc_comment_above(line);
            let function_like = l.code[body_at..end].starts_with('(');
            let value = l.code[body_at..end].trim();
            let kind = if function_like {
                SymbolKind::Function
            } else if value.is_empty() || value == "\\" {
                return; // include guards and flags
            } else {
                SymbolKind::Constant
            };
            facts.push_symbol(name, kind, (line, last), doc_line, None);
            let strings = l.strings_in(body_at, end);
            if kind == SymbolKind::Constant
                && strings.len() == 1
                && value.starts_with('"')
                && value.ends_with('"')
            {
                facts.bindings.push(Binding {
                    name: name.to_string(),
                    value: Value::lit(strings[0].value().into_owned()),
                    line,
                });
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FrameKind {
    Namespace,
    Class,
    /// `extern "C" { … }`: transparent.
    Block,
}

#[derive(Debug, Clone, Copy)]
struct Frame<'a> {
    /// Token index of the closing `}` (the token count when unclosed).
    end: usize,
    kind: FrameKind,
    name: Option<&'a str>,
}

/// Where a declaration statement is: its scope, its first token (template/attribute prefix
/// included) and the end of the scope.
#[derive(Debug, Clone, Copy)]
struct Ctx<'a> {
    frame: Option<Frame<'a>>,
    start: usize,
    limit: usize,
}

impl Ctx<'_> {
    fn in_class(&self) -> bool {
        matches!(self.frame, Some(f) if f.kind == FrameKind::Class)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// A member or global: visible anywhere in the file, bare or through `this->`.
    Field,
    /// A local of one function body, from a token index on.
    Local(usize, usize),
}

/// How far back a variable lookup walks: bounds the work on hostile input.
const LOOKBACK: usize = 64;

/// Words that are never the name of a declared function or variable.
const NOT_NAMES: [&str; 48] = [
    "if",
    "for",
    "while",
    "switch",
    "return",
    "sizeof",
    "alignof",
    "decltype",
    "static_assert",
    "alignas",
    "__attribute__",
    "__declspec",
    "noexcept",
    "throw",
    "catch",
    "typeid",
    "new",
    "delete",
    "case",
    "do",
    "else",
    "using",
    "typedef",
    "template",
    "typename",
    "requires",
    "static_cast",
    "dynamic_cast",
    "const_cast",
    "reinterpret_cast",
    "void",
    "int",
    "char",
    "bool",
    "short",
    "long",
    "float",
    "double",
    "signed",
    "unsigned",
    "auto",
    "const",
    "volatile",
    "constexpr",
    "static",
    "inline",
    "virtual",
    "explicit",
];

/// True when line `line` holds a `using`, `typedef` or `template` declaration (whose `=` gives
/// a type, not a value).
fn declares_type(t: &Tokens, line: u32) -> bool {
    let first = t.toks.partition_point(|x| x.line < line);
    (first..(first + 64).min(t.len()))
        .take_while(|&k| t.line(k) == line)
        .any(|k| t.kw(k, "using") || t.kw(k, "typedef") || t.kw(k, "template"))
}

/// Base-class names the gRPC C++ plugin generates inside `Svc::` (besides `With…Method_X`).
fn is_grpc_service_base(id: &str) -> bool {
    id.ends_with("Service") || (id.starts_with("With") && id.contains("Method_"))
}

/// `FOO`, `Q_OBJECT`, `EXPORT_API`: an upper-case macro name rather than a declared name.
fn is_macro_name(id: &str) -> bool {
    id.len() >= 2
        && id
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        && id.bytes().any(|b| b.is_ascii_uppercase())
}

struct Cpp<'t, 'l, 'a> {
    t: &'t Tokens<'l, 'a>,
    /// Every assignment and initialised declaration of the file, for what a name holds.
    asg: &'t Assignments,
    facts: FileFacts,
    /// Function bodies (`{`, `}` token indices), in order; they never nest.
    bodies: Vec<(usize, usize)>,
    bindings: HashMap<&'a str, Vec<(String, Scope)>>,
    cppkafka: bool,
    rdkafka: bool,
    httplib: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::lang::test_support::{
        brief, consts, consts_at, events, every_prefix, every_short_token_sequence, extract_each,
        extract_junk, grpc_clients, grpc_receiver_calls, grpc_servers, import_lines, junk_bytes32,
        lit, names, sym,
    };

    #[test]
    fn includes_and_defines() {
        let src = r##"#include "orders/client.h"
#include <vector>
  #  include <grpcpp/grpcpp.h>
#ifndef ORDERS_H
#define ORDERS_H
/// The topic.
#define ORDERS_TOPIC "orders.created"
#define MAX_ITEMS 10
#define SQUARE(x) \
    ((x) * (x))
// #include "commented.h"
const char* s = "#include \"in_string.h\"";
#endif
"##;
        let f = extract("orders.h", src);
        let imports = import_lines(&f);
        assert_eq!(
            imports,
            vec![
                ("orders/client.h", 1),
                ("vector", 2),
                ("grpcpp/grpcpp.h", 3)
            ]
        );
        use SymbolKind::*;
        assert_eq!(
            brief(sym(&f, "ORDERS_TOPIC")),
            (Constant, 7, 7, Some(6), None)
        );
        assert_eq!(sym(&f, "MAX_ITEMS").kind, Constant);
        assert_eq!(brief(sym(&f, "SQUARE")), (Function, 9, 10, None, None));
        assert!(!names(&f).contains(&"ORDERS_H"));
        let consts = consts(&f);
        // `s` is a constant whose value merely looks like a directive.
        assert_eq!(
            consts,
            vec![
                ("ORDERS_TOPIC", "orders.created"),
                ("s", "#include \"in_string.h\"")
            ]
        );
    }

    #[test]
    fn namespaces_classes_methods_and_out_of_line_definitions() {
        let src = r#"namespace acme {
namespace orders {

/**
 * A client for orders.
 */
class OrderClient : public Base<int, std::string> {
 public:
  explicit OrderClient(std::shared_ptr<Channel> channel)
      : stub_(OrderService::NewStub(channel)), retries_{3} {}
  ~OrderClient() = default;
  virtual Status Create(const Order& order,
                        Result* out) const override;
  [[nodiscard]] int Count() const noexcept { return 0; }
  bool operator==(const OrderClient& other) const; explicit operator bool() const { return 1; }
  Q_DISABLE_COPY(OrderClient)

 private:
  struct Cache {
    int size;
    void Clear();
  };
  static constexpr const char* kTopic = "orders.created";
  int retries_ = 3;
};

Status OrderClient::Create(const Order& order, Result* out) const {
  return Status::OK;
}

OrderClient::~OrderClient() {}

template <typename T>
T Max(T a, T b) {
  return a > b ? a : b;
}

static void helper(int x);
Foo global_foo(1, 2);
int counter = 0;

}  // namespace orders
}  // namespace acme

namespace a::b { void Nested() {} }

auto Lambda = [](int x) { return x; };
std::vector<std::string> Names() { return {}; }
"#;
        let f = extract("client.cc", src);
        use SymbolKind::*;
        assert_eq!(brief(sym(&f, "acme")), (Module, 1, 43, None, None));
        assert_eq!(
            brief(sym(&f, "orders")),
            (Module, 2, 42, None, Some("acme"))
        );
        assert_eq!(
            brief(sym(&f, "OrderClient")),
            (Class, 7, 25, Some(4), Some("orders"))
        );
        let ctor = f
            .symbols
            .iter()
            .find(|s| s.name == "OrderClient" && s.kind == Constructor)
            .expect("constructor");
        assert_eq!(brief(ctor), (Constructor, 9, 10, None, Some("OrderClient")));
        let dtors: Vec<_> = f
            .symbols
            .iter()
            .filter(|s| s.name == "~OrderClient")
            .map(brief)
            .collect();
        assert_eq!(
            dtors,
            vec![
                (Method, 11, 11, None, Some("OrderClient")),
                (Method, 31, 31, None, Some("OrderClient")),
            ]
        );
        let creates: Vec<_> = f
            .symbols
            .iter()
            .filter(|s| s.name == "Create")
            .map(brief)
            .collect();
        assert_eq!(
            creates,
            vec![
                (Method, 12, 13, None, Some("OrderClient")),
                (Method, 27, 29, None, Some("OrderClient")),
            ]
        );
        assert_eq!(
            brief(sym(&f, "Count")),
            (Method, 14, 14, None, Some("OrderClient"))
        );
        assert_eq!(sym(&f, "operator==").kind, Method);
        assert_eq!(
            brief(sym(&f, "operator bool")),
            (Method, 15, 15, None, Some("OrderClient"))
        );
        assert_eq!(
            brief(sym(&f, "Cache")),
            (Struct, 19, 22, None, Some("OrderClient"))
        );
        assert_eq!(
            brief(sym(&f, "Clear")),
            (Method, 21, 21, None, Some("Cache"))
        );
        assert_eq!(
            brief(sym(&f, "kTopic")),
            (Constant, 23, 23, None, Some("OrderClient"))
        );
        assert_eq!(
            brief(sym(&f, "Max")),
            (Function, 34, 36, Some(33), Some("orders"))
        );
        assert_eq!(sym(&f, "counter").kind, Variable);
        assert_eq!(brief(sym(&f, "a::b")), (Module, 45, 45, None, None));
        assert_eq!(
            brief(sym(&f, "Nested")),
            (Function, 45, 45, None, Some("b"))
        );
        assert_eq!(sym(&f, "Lambda").kind, Variable);
        assert_eq!(brief(sym(&f, "Names")), (Function, 48, 48, None, None));
        for absent in [
            "helper",
            "global_foo",
            "Q_DISABLE_COPY",
            "retries_",
            "size",
            "NewStub",
        ] {
            assert!(!names(&f).contains(&absent), "{absent} in {:?}", names(&f));
        }
        assert_eq!(
            f.bindings,
            vec![Binding {
                name: "OrderClient.kTopic".into(),
                value: Value::lit("orders.created"),
                line: 23
            }]
        );
    }

    #[test]
    fn enums_typedefs_usings_and_c_structs() {
        let src = r#"enum class Status : uint8_t {
  kUnknown = 0,
  [[deprecated]] kOpen,
  kClosed,
};
enum Color { RED, GREEN = 2 };
typedef struct order_s {
  int id;
} order_t, *order_ptr;
typedef enum { LOW, HIGH } level_t;
typedef void (*handler_fn)(int code);
typedef unsigned long size_type;
using OrderId = std::string;
using namespace std;
struct point *make_point(int x, int y) {
  return NULL;
}
constexpr char kOrdersTopic[] = "orders." "created";
const std::string kPayments{"payments.done"};
static const char *const kRefunds = std::string("refunds").c_str();
constexpr int kMax = 5;
"#;
        let f = extract("types.h", src);
        use SymbolKind::*;
        assert_eq!(brief(sym(&f, "Status")), (Enum, 1, 5, None, None));
        for (v, line) in [("kUnknown", 2), ("kOpen", 3), ("kClosed", 4)] {
            assert_eq!(
                brief(sym(&f, v)),
                (EnumValue, line, line, None, Some("Status"))
            );
        }
        assert_eq!(sym(&f, "GREEN").container.as_deref(), Some("Color"));
        assert_eq!(brief(sym(&f, "order_s")), (Struct, 7, 9, None, None));
        assert_eq!(sym(&f, "order_t").kind, TypeAlias);
        assert_eq!(sym(&f, "order_ptr").kind, TypeAlias);
        assert_eq!(sym(&f, "level_t").kind, TypeAlias);
        assert_eq!(sym(&f, "HIGH").container.as_deref(), Some("level_t"));
        assert_eq!(sym(&f, "handler_fn").kind, TypeAlias);
        assert_eq!(sym(&f, "size_type").kind, TypeAlias);
        assert_eq!(sym(&f, "OrderId").kind, TypeAlias);
        assert_eq!(brief(sym(&f, "make_point")), (Function, 15, 17, None, None));
        assert_eq!(sym(&f, "kMax").kind, Constant);
        assert!(!names(&f).contains(&"id"));
        let consts = consts_at(&f);
        assert_eq!(
            consts,
            vec![
                ("kOrdersTopic", "orders.created", 18),
                ("kPayments", "payments.done", 19),
                // `.c_str()` does not change the value; a number is a value too.
                ("kRefunds", "refunds", 20),
                ("kMax", "5", 21),
            ]
        );
    }

    #[test]
    fn grpc_servers_stubs_and_calls() {
        let src = r#"#include "orders.grpc.pb.h"

class OrderServiceImpl final : public acme::OrderService::Service {
  grpc::Status CreateOrder(grpc::ServerContext* ctx, const CreateOrderRequest* req,
                           CreateOrderResponse* resp) override;
};

class AsyncImpl : public PaymentService::WithAsyncMethod_Charge<PaymentService::Service> {};
class CbImpl : public StockService::CallbackService {};
class Plain : public grpc::Service {};

grpc::Status OrderServiceImpl::CreateOrder(grpc::ServerContext* ctx,
                                           const CreateOrderRequest* req,
                                           CreateOrderResponse* resp) {
  return grpc::Status::OK;
}

class Client {
 public:
  explicit Client(std::shared_ptr<grpc::Channel> ch)
      : stub_(acme::OrderService::NewStub(ch)) {}
  void Run() {
    stub_->CreateOrder(&ctx, req, &resp);
    this->stub_->async()->GetOrder(&ctx, &req, &resp, cb);
    payments_->PrepareAsyncCharge(&ctx, req, &cq);
    logger_->Info("x");
    auto local = StockService::NewStub(channel);
    local->Reserve(&ctx, r, &out);
  }
  void Other() { local->Reserve(&ctx, r, &out); }
 private:
  std::unique_ptr<acme::OrderService::Stub> stub_;
  std::unique_ptr<PaymentService::StubInterface> payments_;
};

std::unique_ptr<ShippingService::Stub> MakeShipping() {
  return ShippingService::NewStub(channel);
}

void Refunds::Connect() {
  refunds_ = RefundService::NewStub(channel_);
  std::unique_ptr<AuditService::Stub> audit(AuditService::NewStub(channel_));
  audit->Record(&ctx, r, &out);
  Register(AuditService::NewStub(channel_));
}
void Refunds::Go() { refunds_->Refund(&ctx, r, &out); }
"#;
        let f = extract("service.cc", src);
        let servers = grpc_servers(&f);
        assert_eq!(
            servers,
            vec![
                ("OrderService", Some("OrderServiceImpl"), 3),
                ("PaymentService", Some("AsyncImpl"), 8),
                ("StockService", Some("CbImpl"), 9),
            ]
        );
        let handlers: Vec<_> = f
            .symbols
            .iter()
            .filter(|s| s.name == "CreateOrder")
            .map(|s| (s.line, s.container.as_deref()))
            .collect();
        assert_eq!(
            handlers,
            vec![
                (4, Some("OrderServiceImpl")),
                (12, Some("OrderServiceImpl"))
            ]
        );
        let clients = grpc_clients(&f);
        assert_eq!(
            clients,
            vec![
                ("OrderService", Some("stub_"), 21),
                ("StockService", Some("local"), 27),
                ("ShippingService", None, 37),
                ("RefundService", Some("refunds_"), 41),
                ("AuditService", Some("audit"), 42),
                ("AuditService", None, 44),
            ]
        );
        let calls: Vec<(&str, &str, &str, u32)> = grpc_receiver_calls(&f)
            .into_iter()
            .map(|(s, r, m, l)| (s.unwrap_or("?"), r, m, l))
            .collect();
        assert_eq!(
            calls,
            vec![
                ("OrderService", "stub_", "CreateOrder", 23),
                ("OrderService", "stub_", "GetOrder", 24),
                ("PaymentService", "payments_", "Charge", 25),
                ("StockService", "local", "Reserve", 28),
                ("AuditService", "audit", "Record", 43),
                ("RefundService", "refunds_", "Refund", 46),
            ]
        );
    }

    #[test]
    fn kafka_topics() {
        let src = r#"#include <cppkafka/cppkafka.h>
#define AUDIT_TOPIC "orders.audit"
constexpr char kShipped[] = "orders.shipped";

void produce(cppkafka::Producer& p, const std::string& topic) {
  p.produce(cppkafka::MessageBuilder("orders.created").payload(x));
  p.produce(MessageBuilder(AUDIT_TOPIC).payload(x));
  cppkafka::MessageBuilder builder(kShipped);
  p.produce(MessageBuilder(topic));
  std::string local = "orders.local";
  p.produce(MessageBuilder(local.c_str()));
  p.produce(MessageBuilder(getenv("ORDERS_TOPIC")));
}

void consume(cppkafka::Consumer& c) {
  c.subscribe({"payments.done", kShipped});
  std::vector<std::string> topics = {"stock.changed"};
  c.subscribe(topics);
}
"#;
        let f = extract("kafka.cc", src);
        use EventRole::*;
        let got = events(&f);
        assert_eq!(
            got,
            vec![
                (Producer, lit("orders.created"), "cppkafka", 6),
                (Producer, Value::reference("AUDIT_TOPIC"), "cppkafka", 7),
                (Producer, Value::reference("kShipped"), "cppkafka", 8),
                // A name the file does not bind is kept for the graph, which resolves it or
                // lists the site as unresolved.
                (Producer, Value::reference("topic"), "cppkafka", 9),
                (Producer, lit("orders.local"), "cppkafka", 11),
                (Producer, Value::env("ORDERS_TOPIC", None), "cppkafka", 12),
                (Consumer, lit("payments.done"), "cppkafka", 16),
                (Consumer, Value::reference("kShipped"), "cppkafka", 16),
                (Consumer, lit("stock.changed"), "cppkafka", 17),
            ]
        );
        let rd = r#"
void run(RdKafka::Producer* producer, RdKafka::KafkaConsumer* consumer) {
  RdKafka::Topic* t = RdKafka::Topic::create(producer, "invoices.issued", conf, err);
  RdKafka::Topic* c = RdKafka::Topic::create(consumer_handle, topics::kPaid, conf, err);
  producer->produce("invoices.sent", RdKafka::Topic::PARTITION_UA, 0, p, n, nullptr, 0, 0, nullptr);
  consumer->subscribe({"invoices.void"});
}
"#;
        let f = extract("rd.cc", rd);
        let got = events(&f);
        assert_eq!(
            got,
            vec![
                (Producer, lit("invoices.issued"), "librdkafka", 3),
                (Consumer, Value::reference("topics.kPaid"), "librdkafka", 4),
                (Producer, lit("invoices.sent"), "librdkafka", 5),
                (Consumer, lit("invoices.void"), "librdkafka", 6),
            ]
        );
    }

    #[test]
    fn http_calls_and_routes() {
        let src = r#"#include <cpr/cpr.h>
#include <httplib.h>

void calls(const std::string& base, int id) {
  auto r = cpr::Get(cpr::Url{"http://orders:8080/orders/42"});
  auto p = cpr::Post(cpr::Url{base + "/payments"}, cpr::Body{"{}"});
  httplib::Client cli("http://inventory:8080");
  cli.Get("/stock/items");
  cli.Delete("/stock/items/7", headers, body);
}

void serve(httplib::Server& svr) {
  svr.Get("/orders", [&](const httplib::Request& req, httplib::Response& res) {});
  svr.Post("/orders", CreateOrder);
  CROW_ROUTE(app, "/users/<int>").methods("GET"_method, crow::HTTPMethod::Post)(handler);
  CROW_ROUTE(app, "/health")([] { return "ok"; });
}
"#;
        let f = extract("http.cc", src);
        let got: Vec<String> = f
            .http
            .iter()
            .map(|h| match h {
                HttpFact::Route {
                    method,
                    path,
                    handler,
                    line,
                } => format!("route {method} {path} {handler:?} {line}"),
                HttpFact::Call { method, url, line } => {
                    format!("call {method:?} {} {line}", url.display())
                }
                HttpFact::Mount { .. }
                | HttpFact::Probe { .. }
                | HttpFact::Versions { .. }
                | HttpFact::Navigate { .. }
                | HttpFact::Prefix { .. }
                | HttpFact::AppPrefix { .. } => String::new(),
            })
            .collect();
        assert_eq!(
            got,
            vec![
                // URLs are values as written: the host is kept, names are left to the graph.
                "call Some(\"GET\") http://orders:8080/orders/42 5",
                "call Some(\"POST\") {base}/payments 6",
                "call Some(\"GET\") /stock/items 8",
                "call Some(\"DELETE\") /stock/items/7 9",
                "route GET /orders None 13",
                "route POST /orders Some(\"CreateOrder\") 14",
                "route GET /users/<int> None 15",
                "route POST /users/<int> None 15",
                "route ANY /health None 16",
            ]
        );
    }

    const IDIOMS: &str = r#"#include <cpr/cpr.h>
#include <curl/curl.h>
#include <httplib.h>
#include <cstdlib>

const std::string kBase = "http://orders:8080";

void calls(int id, const std::string& key) {
  std::string base = std::getenv("ORDERS_URL");
  cpr::Get(cpr::Url{base + "/orders/" + std::to_string(id)});
  cpr::Post(cpr::Url{kBase + "/orders"});
  CURL* curl = curl_easy_init();
  std::string url = std::string(getenv("PAY_URL")) + "/payments";
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 5L);
  httplib::Client cli(base);
  cli.Post("/orders/" + std::to_string(id) + "/pay", body, "application/json");
  cache.Get(key);
  cli.Get(base + "/" + key);
}
"#;

    #[test]
    fn idioms_getenv_concatenation_cpr_curl_httplib() {
        let f = extract("client.cc", IDIOMS);
        let got: Vec<(Option<&str>, String, u32)> = f
            .http
            .iter()
            .filter_map(|h| match h {
                HttpFact::Call { method, url, line } => {
                    Some((method.as_deref(), url.display(), *line))
                }
                HttpFact::Route { .. }
                | HttpFact::Mount { .. }
                | HttpFact::Probe { .. }
                | HttpFact::Versions { .. }
                | HttpFact::Navigate { .. }
                | HttpFact::Prefix { .. }
                | HttpFact::AppPrefix { .. } => None,
            })
            .collect();
        let c = |m: Option<&'static str>, u: &str, l: u32| (m, u.to_string(), l);
        assert_eq!(
            got,
            vec![
                // A local read through the tracker: `std::getenv` is an env lookup; a
                // parameter is a run-time part.
                c(Some("GET"), "{env ORDERS_URL}/orders/{}", 10),
                // A namespace-level constant stays a reference for the graph.
                c(Some("POST"), "{kBase}/orders", 11),
                c(None, "{env PAY_URL}/payments", 14),
                c(Some("POST"), "/orders/{}/pay", 17),
                // `cache.Get(key)` is a lookup, not a request. A base and `"/" + x` alone: a
                // URL with no literal segment, which the graph never matches to a route.
                c(Some("GET"), "{env ORDERS_URL}/{key}", 19),
            ]
        );
        assert_eq!(
            f.bindings
                .iter()
                .map(|b| (b.name.as_str(), b.value.display()))
                .collect::<Vec<_>>(),
            vec![("kBase", "http://orders:8080".to_string())]
        );
    }

    #[test]
    fn idioms_truncated_and_non_ascii_never_panic() {
        every_prefix(extract, "x.cc", IDIOMS);
        let src = "#include <cpr/cpr.h>\nconst std::string kBasé = \"http://ü\";\nvoid gét(int ïd) { cpr::Get(cpr::Url{kBasé + \"/ördérs/\" + std::to_string(ïd)}); cpr::Get(cpr::Url{\"é";
        every_prefix(extract, "x.cc", src);
        let f = extract("x.cc", src);
        assert!(matches!(
            f.http.first(),
            Some(HttpFact::Call { url, .. }) if url.display() == "{kBasé}/ördérs/{}"
        ));
    }

    #[test]
    fn comments_strings_and_raw_strings_are_not_code() {
        let src = r#"// class Commented {};
/* void Hidden() {} */
const char* s = "class InString { void f() {} };";
const char* r = R"sql(
class InRaw { void g() {} };
)sql";
#if 0
class InDisabledBranch {};
#endif
void Real() {}
"#;
        let f = extract("x.cc", src);
        // Conditional compilation is not evaluated: only directives themselves are skipped.
        assert_eq!(names(&f), vec!["s", "r", "InDisabledBranch", "Real"]);
        assert_eq!(sym(&f, "r").end_line, 6);
        assert!(f.bindings.iter().any(|c| c.name == "s"));
    }

    #[test]
    fn truncated_and_malformed_files_never_panic() {
        let src = r#"#include "a.h"
namespace n { class X final : public S::Service { void M() override; };
X::X(int a) : b_(a), c_{S::NewStub(ch)} { stub_->M(&c, r, &o); }
template <typename T, typename = std::enable_if_t<(sizeof(T) > 4)>> T f(T t) { return t; }
enum class E : int { A, B = 1 << 2 };
typedef void (*fp)(int); using U = std::map<int, std::vector<int>>;
cppkafka::MessageBuilder("t"); cpr::Get(cpr::Url{"http://a/b"});
"#;
        every_prefix(extract, "p.cc", src);
        extract_each(
            extract,
            "j.cc",
            &[
                "class",
                "class X :",
                "class X : public",
                "namespace",
                "namespace {",
                "enum",
                "enum class",
                "typedef",
                "typedef struct {",
                "using",
                "template <",
                "operator",
                "X::",
                "~",
                "}}}",
                "((((",
                ")))",
                "#define",
                "#include",
                "#include <",
                "#",
                "void f(",
                "void f() :",
                "void f() ->",
                "a = ",
                "R\"x(",
                "[[",
                "extern \"C\" {",
            ],
        );
    }

    #[test]
    fn every_short_token_sequence_is_safe() {
        // Index arithmetic at the edges of a file: every sequence of up to four tokens.
        every_short_token_sequence(
            extract,
            "x.cc",
            &[
                ".", "->", "(", "::", "{", "class", ":", "=", "\"/x\"", "NewStub", "<", "Stub",
                "~", "operator",
            ],
        );
    }

    #[test]
    fn junk_input_never_panics() {
        let alphabet = b"class struct namespace enum typedef using template operator const ( ) { } [ ] < > : :: = & * ~ ; , # \" ' / \n\t Service NewStub Stub MessageBuilder subscribe cpr Get R\"( \\ \xc3\xa9";
        extract_junk(extract, "junk.cc", &junk_bytes32(alphabet, 0x2545_f491));
    }
}
