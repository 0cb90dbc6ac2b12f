//! Python extractor: declarations, imports, gRPC, Kafka and HTTP facts from one `.py` file.
//!
//! The file is lexed once; the masked code is cut into logical statements (a physical line,
//! continued inside brackets, triple-quoted strings and after a trailing `\`), and a stack of
//! `class`/`def` scopes driven by indentation gives containers and end lines. A first pass over
//! the statements records declarations, imports, constants, decorators (routes) and what each
//! assigned name holds (a gRPC stub, a Kafka producer, an HTTP session, a router prefix); a
//! second pass visits every call site `name(` once and turns the calls on those names into
//! gRPC calls, Kafka events and HTTP calls.
//!
//! This file cuts the statements; [`decls`] is the declaration pass, [`bindings`] what an
//! assigned name holds, [`calls`] the call pass.

mod bindings;
mod calls;
mod decls;

use calls::calls;
use decls::declarations;

use std::collections::{HashMap, HashSet};

use super::bind::StmtStyle;
use super::common::{self, Brackets, ByteRanges};
use super::script;
use super::value::{ExprRules, eval};
use crate::index::facts::{
    Binding, EventRole, FileFacts, GrpcFact, HttpFact, Import, Symbol, SymbolKind, Value,
};
use crate::index::lex::{self, Syntax, ident_after, ident_before, is_ident_byte};

/// Extracts the facts of one Python file.
pub fn extract(path: &str, text: &str) -> FileFacts {
    script::extract::<Python>(text, |src| {
        let code = src.code();
        let kafka_lib = if code.contains("confluent_kafka") {
            Some("confluent-kafka")
        } else if code.contains("aiokafka") {
            Some("aiokafka")
        } else if lex::find_word(code, "kafka").next().is_some() {
            Some("kafka-python")
        } else {
            None
        };
        let mut st = State {
            is_init: path.rsplit('/').next() == Some("__init__.py"),
            grpc_file: code.contains("grpc"),
            django_urls: code.contains("django.urls") || code.contains("django.conf.urls"),
            kafka_lib,
            ..State::default()
        };
        declarations(src, &mut st);
        st.pubsub = common::PubSub::imported(&st.facts.imports);
        calls(src, &mut st);
        st.finish_routes();
        st.facts
    })
}

/// Python, as the script front end reads it.
struct Python;

impl script::Script for Python {
    const SYNTAX: Syntax = Syntax::PYTHON;
    const STYLE: StmtStyle = StmtStyle::INDENT;
    const RULES: ExprRules = ExprRules::PYTHON;
}

/// The file as the Python extractor reads it.
type Src<'a> = script::Src<'a, Python>;

/// One logical statement: `code[start..end]`, its first and last line and its indentation.
#[derive(Debug, Clone, Copy)]
struct Stmt {
    start: usize,
    end: usize,
    line: u32,
    end_line: u32,
    indent: usize,
}

/// An open `class` or `def` scope.
struct Scope {
    indent: usize,
    symbol: usize,
    name: String,
    is_class: bool,
    is_enum: bool,
}

/// A route seen on a decorator, before router prefixes are known.
struct RawRoute {
    receiver: String,
    method: String,
    path: String,
    handler: Option<String>,
    line: u32,
}

/// A name bound to a gRPC stub: `self.stub` (any method of the file) or a local `stub`
/// (only within its function).
struct StubVar {
    service: String,
    /// The enclosing function's symbol, for a local name.
    def: Option<usize>,
}

/// What the extractor learns while walking the file.
#[derive(Default)]
struct State {
    facts: FileFacts,
    is_init: bool,
    grpc_file: bool,
    /// The file names Django's URL module: its bare `path()`, `re_path()` and `url()` calls
    /// are URL patterns.
    django_urls: bool,
    kafka_lib: Option<&'static str>,
    /// The NATS and Redis clients the file imports ([`common::PubSub::imported`]).
    pubsub: (bool, bool),
    /// Name as written (`self.stub`, `stub`) → the stubs bound to it.
    stubs: HashMap<String, Vec<StubVar>>,
    /// The innermost `def` being walked (symbol index), for scoping local names.
    current_def: Option<usize>,
    /// Name → the Kafka producer constructor it holds (`KafkaProducer`).
    producers: HashMap<String, String>,
    /// Name → the Kafka consumer constructor it holds.
    consumers: HashMap<String, String>,
    /// Names holding an HTTP client or session.
    http_clients: HashSet<String>,
    /// Name → the prefix of the Flask app/blueprint or FastAPI app/router it holds.
    routers: HashMap<String, String>,
    /// Prefixes (and lines) given when a router is mounted (`include_router(r, prefix=…)`).
    mounts: HashMap<String, (String, u32)>,
    /// Name → the classes it was constructed from (`servicer = OrderServicer()`), in order.
    instances: HashMap<String, Vec<String>>,
    /// Offsets of stub constructions already recorded with their variable.
    bound_stubs: HashSet<usize>,
    routes: Vec<RawRoute>,
    module_vars: HashSet<String>,
}

impl<'a> ByteRanges for Src<'a> {
    fn code(&self) -> &str {
        &self.lx.code
    }

    /// The value of the expression at bytes `s..e`, read by the shared evaluator.
    fn value(&self, s: usize, e: usize) -> Value {
        let (a, b) = self.t.range_of(s, e);
        eval(self.t, (a, b), &ExprRules::PYTHON, self.asg)
    }
}

impl<'a> Src<'a> {
    /// The string literals making up exactly `s..e` (adjacent literals concatenate), with
    /// whether any of them is an f-string.
    fn literals(&self, s: usize, e: usize) -> Option<(Vec<&lex::StrLit<'a>>, bool)> {
        let (mut s, mut e) = self.trim(s, e);
        // `("a" "b")`: parentheses around implicitly concatenated literals.
        while s < e && self.code().as_bytes()[s] == b'(' && self.br.close_of(s) == Some(e - 1) {
            (s, e) = self.trim(s + 1, e - 1);
        }
        let lits = self.lx.strings_in(s, e);
        let first = lits.first()?;
        if first.start != s {
            return None;
        }
        let text = self.lx.text.as_bytes();
        let code = self.code().as_bytes();
        let mut at = s;
        let mut fstring = false;
        let mut out = Vec::new();
        for l in lits {
            if code[at..l.start].iter().any(|b| !b.is_ascii_whitespace()) {
                return None;
            }
            fstring |= text[l.start..l.end]
                .iter()
                .take_while(|b| b.is_ascii_alphabetic())
                .any(|b| b | 0x20 == b'f');
            out.push(l);
            at = l.end;
        }
        (at == e).then_some((out, fstring))
    }

    /// The value of `s..e` when it is a plain string literal (no f-string placeholders).
    fn plain_string(&self, s: usize, e: usize) -> Option<String> {
        let (lits, fstring) = self.literals(s, e)?;
        let mut out = String::new();
        for l in lits {
            out.push_str(&l.value());
        }
        (!fstring || !out.contains('{')).then_some(out)
    }

    /// `s..e` as a dotted name (`a.b.c`), if it is one.
    fn dotted(&self, s: usize, e: usize) -> Option<&str> {
        let (s, e) = self.trim(s, e);
        let t = self.code().get(s..e)?;
        let ok = !t.is_empty()
            && t.split('.').all(|seg| {
                !seg.is_empty()
                    && !seg.as_bytes()[0].is_ascii_digit()
                    && seg.bytes().all(is_ident_byte)
            });
        ok.then_some(t)
    }

    /// A call covering exactly `s..e`: (callee as written, open paren, close paren).
    /// A leading `await` is skipped.
    fn call(&self, s: usize, e: usize) -> Option<(&str, usize, usize)> {
        let (mut s, e) = self.trim(s, e);
        let code = self.code();
        if code[s..e].starts_with("await ") {
            s += 6;
        }
        if e == 0 || code.as_bytes()[e - 1] != b')' {
            return None;
        }
        let open = self.br.open_of(e - 1)?;
        let callee = self.dotted(s, open)?;
        Some((callee, open, e - 1))
    }

    /// The top-level arguments of the call whose parentheses are `open..close`, split into
    /// positional ranges and `name=value` keyword ranges.
    fn args(&self, open: usize, close: usize) -> Args {
        let code = self.code();
        let mut args = Args::default();
        for (s, e) in common::split_top(code, open + 1, close, b',', &self.br) {
            let kw = ident_after(code, s).and_then(|(ks, k)| {
                let after = ks + k.len();
                let rest = &code[after..e];
                let t = rest.trim_start();
                (t.starts_with('=') && !t.starts_with("==")).then(|| {
                    let eq = after + (rest.len() - t.len());
                    (k.to_string(), (eq + 1, e))
                })
            });
            match kw {
                Some(kv) => args.keyword.push(kv),
                None if code[s..e].starts_with('*') => {}
                None => args.positional.push((s, e)),
            }
        }
        args
    }

    /// The elements of a list/tuple/set display at `s..e`, or `s..e` itself.
    fn elements(&self, s: usize, e: usize) -> Vec<(usize, usize)> {
        let (s, e) = self.trim(s, e);
        let b = self.code().as_bytes();
        if s < e && matches!(b[s], b'[' | b'(' | b'{') && self.br.close_of(s) == Some(e - 1) {
            return common::split_top(self.code(), s + 1, e - 1, b',', &self.br);
        }
        vec![(s, e)]
    }

    /// An environment lookup at `s..e`: `os.getenv("X", "d")`, `os.environ.get("X", "d")`,
    /// `os.environ["X"]`, optionally followed by `or "d"`.
    fn env_lookup(&self, s: usize, e: usize) -> Option<(String, Option<String>)> {
        let (s, e) = self.trim(s, e);
        let code = self.code();
        let (head_end, or_default) = match top_word(code, s, e, "or", &self.br) {
            Some(p) => (p, self.plain_string(p + 2, e)),
            None => (e, None),
        };
        let (s, he) = self.trim(s, head_end);
        let last = *code.as_bytes().get(he.checked_sub(1)?)?;
        let open = self.br.open_of(he - 1)?;
        let callee = self.dotted(s, open)?;
        match last {
            b')' if matches!(
                callee,
                "os.getenv" | "getenv" | "os.environ.get" | "environ.get"
            ) =>
            {
                let args = self.args(open, he - 1);
                let var = self.plain_string(args.positional.first()?.0, args.positional[0].1)?;
                let default = args
                    .positional
                    .get(1)
                    .copied()
                    .or_else(|| args.kw("default"))
                    .and_then(|(a, b)| self.plain_string(a, b));
                Some((var, default.or(or_default)))
            }
            b']' if matches!(callee, "os.environ" | "environ") => {
                Some((self.plain_string(open + 1, he - 1)?, or_default))
            }
            _ => None,
        }
    }

    /// The methods a `methods=[…]` argument lists, upper-cased; `GET` when it lists none.
    fn listed_methods(&self, args: &Args) -> Vec<String> {
        let listed: Vec<String> = args
            .kw("methods")
            .map(|(s, e)| {
                self.elements(s, e)
                    .into_iter()
                    .filter_map(|(a, z)| self.plain_string(a, z))
                    .map(|m| m.to_ascii_uppercase())
                    .collect()
            })
            .unwrap_or_default();
        if listed.is_empty() {
            vec!["GET".to_string()]
        } else {
            listed
        }
    }

    /// The value a constant is bound to: a string literal, or the default of an environment
    /// lookup.
    fn const_value(&self, s: usize, e: usize) -> Option<String> {
        self.plain_string(s, e)
            .or_else(|| self.env_lookup(s, e).and_then(|(_, d)| d))
    }
}

/// Positional and keyword arguments of a call, as ranges of the masked code.
#[derive(Default)]
struct Args {
    positional: Vec<(usize, usize)>,
    keyword: Vec<(String, (usize, usize))>,
}

impl Args {
    fn kw(&self, name: &str) -> Option<(usize, usize)> {
        self.keyword
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, r)| *r)
    }

    /// The first positional argument, else the first of the keyword arguments `names` given.
    fn first_or(&self, names: &[&str]) -> Option<(usize, usize)> {
        let first = self.positional.first().copied();
        first.or_else(|| names.iter().find_map(|n| self.kw(n)))
    }
}

/// The offset of `word` as a whole word at the top level of `code[s..e]` (outside brackets).
fn top_word(code: &str, s: usize, e: usize, word: &str, br: &Brackets) -> Option<usize> {
    let b = code.as_bytes();
    let mut i = s;
    while i < e {
        if matches!(b[i], b'(' | b'[' | b'{') {
            match br.close_of(i) {
                Some(c) if c < e => i = c + 1,
                _ => i += 1,
            }
            continue;
        }
        if b[i..e].starts_with(word.as_bytes())
            && (i == 0 || !is_ident_byte(b[i - 1]))
            && b.get(i + word.len()).is_none_or(|&c| !is_ident_byte(c))
        {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Cuts the masked code into logical statements.
fn statements(src: &Src) -> Vec<Stmt> {
    let code = src.code().as_bytes();
    let n = code.len();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line_start = 0;
    let mut last_indent = 0;
    while i < n {
        let b = code[i];
        if b == b'\n' {
            i += 1;
            line_start = i;
            continue;
        }
        if b.is_ascii_whitespace() || b == b'\\' {
            i += 1;
            continue;
        }
        let fresh_line = code[line_start..i].iter().all(u8::is_ascii_whitespace);
        let indent = if fresh_line {
            i - line_start
        } else {
            last_indent
        };
        last_indent = indent;
        let start = i;
        let j = src.statement_stop(start, b"\"'", true, |_| true);
        let (_, e) = src.trim(start, j);
        out.push(Stmt {
            start,
            end: e,
            line: src.line_of(start),
            end_line: src.line_of(e.saturating_sub(1).max(start)),
            indent,
        });
        i = j;
        if i < n && code[i] == b';' {
            i += 1;
        } else if i < n {
            // A statement ended by a newline inside a continued construct: the next one starts
            // on a fresh line.
            line_start = i + 1;
            i += 1;
        }
    }
    out
}

const ENUM_BASES: [&str; 7] = [
    "Enum",
    "StrEnum",
    "IntEnum",
    "Flag",
    "IntFlag",
    "ReprEnum",
    "TextChoices",
];
const ROUTE_VERBS: [&str; 7] = ["get", "post", "put", "delete", "patch", "head", "options"];
const KEYWORDS: [&str; 22] = [
    "if", "elif", "else", "for", "while", "try", "except", "finally", "return", "raise", "assert",
    "del", "pass", "break", "continue", "global", "nonlocal", "yield", "lambda", "not", "match",
    "case",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::facts::Part;
    use crate::index::lang::test_support::{
        assert_no_syms, consts, events, events_shown, grpc_call_fact, grpc_calls, grpc_client_fact,
        grpc_server_fact, imports, lit, reference, routes, sym,
    };

    #[test]
    fn classes_methods_nested_decorators_and_spans() {
        let src = r#"import functools

# Handles orders.
# Second line.
class OrderService(Base):
    """Docstring with class Fake: and def fake(): inside."""

    RETRIES = 3

    @functools.cache
    @staticmethod
    def create(
        req,
        ctx,
    ) -> Order:
        def helper(x):
            return x
        return helper(req)

    async def get(self, oid):
        s = """
not_a_def = 1
"""
        return s

    class Inner:
        def deep(self): pass

def top(): return 1
"#;
        let f = extract("svc/orders.py", src);
        let c = sym(&f, "OrderService");
        assert_eq!(
            (c.kind, c.line, c.end_line, c.doc_line),
            (SymbolKind::Class, 5, 27, Some(3))
        );
        let create = sym(&f, "create");
        assert_eq!(create.kind, SymbolKind::Method);
        assert_eq!(create.container.as_deref(), Some("OrderService"));
        assert_eq!(
            (create.line, create.end_line, create.doc_line),
            (12, 18, Some(10))
        );
        let helper = sym(&f, "helper");
        assert_eq!(helper.kind, SymbolKind::Function);
        assert_eq!(helper.container.as_deref(), Some("create"));
        assert_eq!((helper.line, helper.end_line), (16, 17));
        let get = sym(&f, "get");
        assert_eq!(
            (get.kind, get.line, get.end_line),
            (SymbolKind::Method, 20, 24)
        );
        let inner = sym(&f, "Inner");
        assert_eq!(inner.container.as_deref(), Some("OrderService"));
        assert_eq!(sym(&f, "deep").container.as_deref(), Some("Inner"));
        assert_eq!(sym(&f, "deep").end_line, 27);
        let top = sym(&f, "top");
        assert_eq!(
            (top.kind, top.line, top.end_line, top.container.clone()),
            (SymbolKind::Function, 29, 29, None)
        );
        let retries = sym(&f, "RETRIES");
        assert_eq!(retries.kind, SymbolKind::Constant);
        assert_eq!(retries.container.as_deref(), Some("OrderService"));
        assert_no_syms(&f, &["Fake", "fake", "not_a_def"]);
        assert_eq!(f.package, None);
    }

    #[test]
    fn constructors_protocols_generics_and_type_aliases() {
        let src = "from typing import Protocol\n\nclass Repo(Protocol[T]):\n    def get(self) -> T: ...\n\nclass Box[T](Generic[T]):\n    def __init__(self, v: T):\n        self.v = v\n\nOrderId: TypeAlias = str\ntype Pair[T] = tuple[T, T]\n";
        let f = extract("a.py", src);
        assert_eq!(sym(&f, "Repo").kind, SymbolKind::Interface);
        assert_eq!(sym(&f, "Box").kind, SymbolKind::Class);
        assert_eq!(sym(&f, "__init__").kind, SymbolKind::Constructor);
        assert_eq!(sym(&f, "__init__").container.as_deref(), Some("Box"));
        assert_eq!(sym(&f, "OrderId").kind, SymbolKind::TypeAlias);
        assert_eq!(sym(&f, "Pair").kind, SymbolKind::TypeAlias);
    }

    #[test]
    fn constants_enums_and_env_defaults() {
        let src = r#"import os
from enum import Enum, StrEnum

ORDERS_TOPIC = "orders.created"
PAYMENTS_TOPIC: Final = 'payments.done'
DLQ = os.getenv("DLQ_TOPIC", "orders.dlq")
AUDIT = os.environ.get("AUDIT_TOPIC", default="audit")
NO_DEFAULT = os.environ["X"]
FALLBACK = os.environ.get("FB") or "fallback.topic"
JOINED = ("a."
          "b")
timeout = 30
__all__ = ["x"]

class Topics(str, Enum):
    ORDER_CREATED = "order.created"
    order_paid = "order.paid"
    _ignore_ = []

class Level(StrEnum):
    LOW = auto()

class Settings:
    TOPIC = "settings.topic"
    name = "not.a.constant"
"#;
        let f = extract("topics.py", src);
        let consts = consts(&f);
        assert_eq!(
            consts,
            vec![
                ("ORDERS_TOPIC", "orders.created"),
                ("PAYMENTS_TOPIC", "payments.done"),
                ("DLQ", "orders.dlq"),
                ("AUDIT", "audit"),
                ("FALLBACK", "fallback.topic"),
                ("JOINED", "a.b"),
                ("Topics.ORDER_CREATED", "order.created"),
                ("Topics.order_paid", "order.paid"),
                ("Settings.TOPIC", "settings.topic"),
                // From the shared tracker: every module-level name is a binding, an env var
                // without a default too (the graph reports it as unknown).
                ("NO_DEFAULT", "?"),
                ("timeout", "30"),
            ]
        );
        assert_eq!(sym(&f, "NO_DEFAULT").kind, SymbolKind::Constant);
        assert_eq!(sym(&f, "timeout").kind, SymbolKind::Variable);
        assert_no_syms(&f, &["__all__", "_ignore_"]);
        assert_eq!(sym(&f, "Topics").kind, SymbolKind::Enum);
        let m = sym(&f, "ORDER_CREATED");
        assert_eq!(
            (m.kind, m.container.as_deref()),
            (SymbolKind::EnumValue, Some("Topics"))
        );
        assert_eq!(sym(&f, "LOW").kind, SymbolKind::EnumValue);
        assert_eq!(f.bindings[0].line, 4);
    }

    #[test]
    fn imports_aliases_relative_and_reexports() {
        let src = "import os\nimport a.b as c, d\nfrom x.y import (\n    e,\n    f as g,\n)\nfrom .models import Order\nfrom . import utils\nfrom ..core import *\nfrom pkg import Thing as Thing\ndef f():\n    import json\n";
        let f = extract("app/svc.py", src);
        let imps = imports(&f);
        assert_eq!(
            imps,
            vec![
                ("os", vec![], None, 1, false),
                ("a.b", vec![], Some("c"), 2, false),
                ("d", vec![], None, 2, false),
                ("x.y", vec!["e", "f"], None, 3, false),
                (".models", vec!["Order"], None, 7, false),
                (".", vec!["utils"], None, 8, false),
                ("..core", vec![], None, 9, false),
                ("pkg", vec!["Thing"], None, 10, true),
                ("json", vec![], None, 12, false),
            ]
        );
        let init = extract(
            "app/__init__.py",
            "from .orders import OrderService\nfrom os import path\n",
        );
        assert!(init.imports[0].reexport);
        assert!(!init.imports[1].reexport);
    }

    #[test]
    fn grpc_servers_clients_and_calls() {
        let src = r#"import grpc
from orders.v1 import orders_pb2, orders_pb2_grpc

class OrderServicer(orders_pb2_grpc.OrderServiceServicer):
    def CreateOrder(self, request, context):
        return orders_pb2.Order()

def serve():
    server = grpc.aio.server()
    orders_pb2_grpc.add_OrderServiceServicer_to_server(OrderServicer(), server)
    impl = PaymentServicer()
    payments_pb2_grpc.add_PaymentServiceServicer_to_server(impl, server)

class Client:
    def __init__(self, channel):
        self.stub = orders_pb2_grpc.OrderServiceStub(channel)

    async def create(self, req):
        # self.stub.Commented(req)
        return await self.stub.CreateOrder(req, timeout=3)

def run():
    with grpc.insecure_channel("localhost:50051") as ch:
        stub = orders_pb2_grpc.InventoryServiceStub(ch)
        stub.GetStock(orders_pb2.Req())
        stub.GetStock.future(orders_pb2.Req())
    other.GetStock(1)
    return orders_pb2_grpc.ShippingServiceStub(ch)
"#;
        let f = extract("svc/server.py", src);
        assert_eq!(
            f.grpc,
            vec![
                grpc_server_fact("OrderService", Some("OrderServicer"), 4),
                grpc_client_fact("OrderService", Some("stub"), 16),
                grpc_client_fact("InventoryService", Some("stub"), 24),
                grpc_server_fact("OrderService", Some("OrderServicer"), 10),
                grpc_server_fact("PaymentService", Some("PaymentServicer"), 12),
                grpc_call_fact(Some("OrderService"), "stub", "CreateOrder", 20),
                grpc_call_fact(Some("InventoryService"), "stub", "GetStock", 25),
                grpc_call_fact(Some("InventoryService"), "stub", "GetStock", 26),
                grpc_client_fact("ShippingService", None, 28),
            ]
        );
        assert_eq!(
            sym(&f, "CreateOrder").container.as_deref(),
            Some("OrderServicer")
        );
        // Without grpc in the file, a `FooStub(` is just a class.
        let plain = extract("t.py", "s = FakeStub(1)\ns.Go()\n");
        assert!(plain.grpc.is_empty());
    }

    #[test]
    fn a_name_built_from_many_classes_registers_the_latest_few() {
        // A server per class per registration: 1 000 classes and 500 registrations made
        // 500 000 facts (a hostile 384 KB file, tens of millions).
        let mut src: String = (0..1000).map(|i| format!("s = C{i}()\n")).collect();
        src.push_str(&"demo_pb2_grpc.add_XServicer_to_server(s, server)\n".repeat(500));
        let f = extract("server.py", &src);
        assert_eq!(f.grpc.len(), 8 * 500);
        assert!(f.grpc.iter().any(|g| matches!(
            g,
            GrpcFact::Server { impl_type: Some(t), .. } if t == "C999"
        )));
    }

    #[test]
    fn grpc_server_registered_from_a_real_or_a_dummy_servicer() {
        let src = r#"import demo_pb2_grpc

class Base(demo_pb2_grpc.EmailServiceServicer):
    pass

class Email(Base):
    def Send(self, request, context):
        return None

class DummyEmail(Base):
    def Send(self, request, context):
        return None

def start(dummy):
    service = None
    if dummy:
        service = DummyEmail()
    else:
        service = Email()
    demo_pb2_grpc.add_EmailServiceServicer_to_server(service, server)
"#;
        let f = extract("email_server.py", src);
        assert_eq!(
            f.grpc,
            vec![
                grpc_server_fact("EmailService", Some("Base"), 3),
                grpc_server_fact("EmailService", Some("DummyEmail"), 20),
                grpc_server_fact("EmailService", Some("Email"), 20),
            ]
        );
    }

    #[test]
    fn kafka_confluent_producers_and_consumers() {
        let src = r#"import os
from confluent_kafka import Producer, Consumer
from .topics import Topics

TOPIC = "orders.created"
p = Producer({"bootstrap.servers": "k:9092"})
p.produce("orders.created", value=b"x")
p.produce(topic=TOPIC, value=b"x")
p.produce(Topics.ORDER_CREATED.value, b"x")
p.produce(settings.ORDERS_TOPIC, b"x")
p.produce(os.getenv("OUT_TOPIC", "orders.out"), b"x")
p.produce(os.environ["RAW_TOPIC"], b"x")
p.produce(f"orders.{region}", b"x")
p.produce(make_topic(), b"x")
c = Consumer(conf)
c.subscribe(["payments.done", TOPIC])
Consumer(conf).subscribe(topics=["chained"])
cache.send("not.kafka")
"#;
        let f = extract("svc/k.py", src);
        let env = |v: &str, d: Option<&str>| Value::env(v, d.map(Into::into));
        use EventRole::*;
        assert_eq!(
            events(&f),
            vec![
                (Producer, lit("orders.created"), "confluent-kafka", 7),
                (Producer, reference("TOPIC"), "confluent-kafka", 8),
                (
                    Producer,
                    reference("Topics.ORDER_CREATED"),
                    "confluent-kafka",
                    9
                ),
                (
                    Producer,
                    reference("settings.ORDERS_TOPIC"),
                    "confluent-kafka",
                    10
                ),
                (
                    Producer,
                    env("OUT_TOPIC", Some("orders.out")),
                    "confluent-kafka",
                    11
                ),
                (Producer, env("RAW_TOPIC", None), "confluent-kafka", 12),
                // Built from a run-time part: kept, so the graph lists the site as unresolved.
                (
                    Producer,
                    Value {
                        parts: vec![
                            Part::Lit("orders.".into()),
                            Part::Ref {
                                name: "region".into(),
                                default: None
                            }
                        ]
                    },
                    "confluent-kafka",
                    13
                ),
                (Producer, Value::dynamic(), "confluent-kafka", 14),
                (Consumer, lit("payments.done"), "confluent-kafka", 16),
                (Consumer, reference("TOPIC"), "confluent-kafka", 16),
                (Consumer, lit("chained"), "confluent-kafka", 17),
            ]
        );
    }

    #[test]
    fn kafka_aiokafka_and_kafka_python() {
        let src = r#"from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

async def main():
    consumer = AIOKafkaConsumer(
        "orders.created",
        "orders.cancelled",
        bootstrap_servers="k:9092",
    )
    producer = AIOKafkaProducer(bootstrap_servers="k")
    await producer.send_and_wait("payments.done", b"x")
    await producer.send("payments.failed", b"x")
    self._event_producer.send(topic="named.like.producer")
    queue.send("no")
"#;
        let f = extract("a.py", src);
        use EventRole::*;
        assert_eq!(
            events(&f),
            vec![
                (Consumer, lit("orders.created"), "aiokafka", 5),
                (Consumer, lit("orders.cancelled"), "aiokafka", 6),
                (Producer, lit("payments.done"), "aiokafka", 10),
                (Producer, lit("payments.failed"), "aiokafka", 11),
                (Producer, lit("named.like.producer"), "aiokafka", 12),
            ]
        );
        let src = "from kafka import KafkaConsumer, KafkaProducer\nc = KafkaConsumer('a.b', group_id='g')\nc.subscribe(topics=['c.d'])\nKafkaProducer(bootstrap_servers='k').send('e.f', b'x')\ntopic = 'local.topic'\nprod = KafkaProducer()\nprod.send(topic, b'x')\n";
        let f = extract("b.py", src);
        assert_eq!(
            events(&f),
            vec![
                (Consumer, lit("a.b"), "kafka-python", 2),
                (Consumer, lit("c.d"), "kafka-python", 3),
                (Producer, lit("e.f"), "kafka-python", 4),
                // A module-level name stays a reference: the graph resolves it (`constant topic`).
                (Producer, reference("topic"), "kafka-python", 7),
            ]
        );
    }

    #[test]
    fn a_stub_built_in_the_call_expression() {
        let src = "import grpc\nfrom offers_pb2_grpc import OffersStub\nresp = OffersStub(channel).GetOffers(req)\nfor o in resp.GetOffers():\n    pass\n";
        assert_eq!(
            grpc_calls(&extract("c.py", src)),
            vec![(Some("Offers"), "GetOffers", 3)]
        );
    }

    #[test]
    fn getters_on_messages_are_not_rpc_calls() {
        let src = "import grpc\nfrom offers_pb2_grpc import OffersStub\nstub = OffersStub(channel)\nresp = stub.GetOffers(req)\nstub.GetOffers()\n";
        let f = extract("c.py", src);
        let calls: Vec<u32> = grpc_calls(&f).into_iter().map(|(_, _, l)| l).collect();
        assert_eq!(calls, vec![4]);
    }

    #[test]
    fn nats_py_and_redis_py_pubsub_and_streams() {
        let src = r#"import nats

SHIPPED = "orders.shipped"

async def main(subject):
    nc = await nats.connect("nats://localhost:4222")
    await nc.publish("orders.created", b"{}")
    await nc.subscribe("orders.*", cb=handler)
    await nc.subscribe(SHIPPED, queue="workers", cb=handler)
    js = nc.jetstream()
    await js.publish(subject, b"x")
    await js.pull_subscribe("payments.done", "durable")
"#;
        use EventRole::{Consumer, Producer};
        let s = |x: &str| x.to_string();
        assert_eq!(
            events_shown(&extract("svc/main.py", src)),
            vec![
                (Producer, s("orders.created"), "nats", 7),
                (Consumer, s("orders.*"), "nats", 8),
                (Consumer, s("{SHIPPED}"), "nats", 9),
                // A parameter: kept so the graph lists the site as unresolved.
                (Producer, s("{}"), "nats", 11),
                (Consumer, s("payments.done"), "nats", 12),
            ]
        );
        let redis = r#"import redis

r = redis.Redis()
r.publish("orders.created", json.dumps(o))
p = r.pubsub()
p.subscribe("orders.created", "orders.paid")
p.psubscribe("orders.*")
r.xadd("audit", {"k": "v"})
r.xreadgroup("g", "c", {"audit": ">"})
r.get("orders.created")
"#;
        assert_eq!(
            events_shown(&extract("svc/cache.py", redis)),
            vec![
                (Producer, s("orders.created"), "redis", 4),
                (Consumer, s("orders.created"), "redis", 6),
                (Consumer, s("orders.paid"), "redis", 6),
                (Consumer, s("orders.*"), "redis", 7),
                (Producer, s("audit"), "redis", 8),
                (Consumer, s("audit"), "redis", 9),
            ]
        );
    }

    #[test]
    fn publish_without_a_pubsub_import_or_on_kafka_is_not_pubsub() {
        let plain = "bus.publish('orders.created', o)\nbus.subscribe('orders.created')\n";
        assert!(extract("svc/bus.py", plain).events.is_empty());
        // A Kafka consumer keeps its subscription in a file that also imports Redis.
        let kafka = "import redis\nfrom kafka import KafkaConsumer\nconsumer = KafkaConsumer()\nconsumer.subscribe(['orders.created'])\n";
        let f = extract("svc/k.py", kafka);
        assert_eq!(
            f.events.iter().map(|e| e.via.as_str()).collect::<Vec<_>>(),
            vec!["kafka-python"]
        );
    }

    #[test]
    fn amqp_publish_and_consume() {
        let src = r#"import pika

class Publisher:
    EXCHANGE = 'robot-shop'
    ROUTING_KEY = 'orders'

    def publish(self, msg):
        self._channel.basic_publish(exchange=self.EXCHANGE,
                                    routing_key=self.ROUTING_KEY,
                                    body=msg)
        self._channel.basic_publish('audit', '', body=msg)
        self._channel.basic_publish(exchange='', routing_key='jobs', body=msg)

channel.basic_consume(queue='orders', on_message_callback=cb)
channel.queue_bind(queue='orders', exchange='robot-shop', routing_key='orders')
channel.queue_bind('q', 'évènements')
channel.queue_bind('q', '')
bus.publish('robot-shop', 'orders')
"#;
        let f = extract("rabbitmq.py", src);
        let got = events_shown(&f);
        use EventRole::{Consumer, Producer};
        let ex = common::AMQP_EXCHANGE_VIA;
        assert_eq!(
            got,
            vec![
                // The routing key, and the exchange as an endpoint of its own.
                (Producer, "orders".to_string(), "amqp", 8),
                (Producer, "robot-shop".to_string(), ex, 8),
                // An empty routing key: the exchange only.
                (Producer, "audit".to_string(), ex, 11),
                // The default exchange is no endpoint.
                (Producer, "jobs".to_string(), "amqp", 12),
                (Consumer, "orders".to_string(), "amqp", 14),
                // A queue bound to an exchange consumes the exchange.
                (Consumer, "robot-shop".to_string(), ex, 15),
                (Consumer, "évènements".to_string(), ex, 16),
                // `bus.publish` is no AMQP call.
            ]
        );
    }

    #[test]
    fn flask_and_fastapi_routes_with_prefixes() {
        let src = r#"from flask import Flask, Blueprint
from fastapi import APIRouter, FastAPI

app = Flask(__name__)
bp = Blueprint("orders", __name__, url_prefix="/v1")
router = APIRouter(prefix="/orders")
api = FastAPI()

@app.route("/health")
def health(): return "ok"

@app.route("/items", methods=["GET", "POST"])
def items(): ...

# docs
@bp.get("/carts/<int:cid>")
def cart(cid): ...

@router.post("/{order_id}")
async def create(order_id: int): ...

@router.get("")
async def list_orders(): ...

@api.api_route(path="/multi", methods=["PUT", "patch"])
def multi(): ...

@cache.memoize(timeout=3)
def not_a_route(): ...

api.include_router(router, prefix="/api")
app.add_url_rule("/legacy", view_func=legacy, methods=["DELETE"])
"#;
        let f = extract("svc/app.py", src);
        let r = |m: &str, p: &str, h: &str, l: u32| {
            (m.to_string(), p.to_string(), Some(h.to_string()), l)
        };
        assert_eq!(
            routes(&f),
            vec![
                r("GET", "/health", "health", 9),
                r("GET", "/items", "items", 12),
                r("POST", "/items", "items", 12),
                r("GET", "/v1/carts/<int:cid>", "cart", 16),
                r("POST", "/api/orders/{order_id}", "create", 19),
                r("GET", "/api/orders", "list_orders", 22),
                r("PUT", "/multi", "multi", 25),
                r("PATCH", "/multi", "multi", 25),
                r("DELETE", "/legacy", "legacy", 32),
            ]
        );
        assert_eq!(sym(&f, "cart").doc_line, Some(15));
        assert_eq!(sym(&f, "health").doc_line, Some(9));
    }

    #[test]
    fn comments_and_strings_are_not_code() {
        let src = "# class Nope:\n'''\ndef nope(): pass\nrequests.get(\"/nope\")\n'''\nx = \"p.produce('no.topic')\"\n";
        let f = extract("a.py", src);
        assert_eq!(f.symbols.len(), 1, "{:?}", f.symbols);
        assert!(f.http.is_empty() && f.events.is_empty());
        // Raw strings and multi-line f-strings hide their contents too, and the block after
        // them still belongs to the function.
        let src = "def f(x):\n    pat = r\"def nope(\\d+):\"\n    q = f\"\"\"\nclass Nope:\n    {x}\n\"\"\"\n    return q\n\ndef g(): pass\n";
        let f = extract("b.py", src);
        let names: Vec<(&str, u32, u32)> = f
            .symbols
            .iter()
            .map(|s| (s.name.as_str(), s.line, s.end_line))
            .collect();
        assert_eq!(names, vec![("f", 1, 7), ("g", 9, 9)]);
    }
}

#[cfg(test)]
mod env_fallback_tests {
    use super::*;
    use crate::index::lang::test_support::{assert_properties, bindings, env, topics};

    #[test]
    fn env_fallbacks_and_env_helpers_read_by_their_shape() {
        let src = r#"import os

def setting(name, default):
    value = os.environ.get(name)
    if value is None:
        return default
    return value

RATINGS = setting("RATINGS_TOPIC", "ratings")
REVIEWS = os.getenv("REVIEWS_TOPIC") or "reviews"
producer.produce(os.environ.get("LIKES_TOPIC", "likes"), b"x")
"#;
        let f = extract("svc/app.py", src);
        let mut b = bindings(&f);
        b.sort_by(|x, y| x.0.cmp(y.0));
        assert_eq!(
            b,
            vec![
                // Read by the helper's shape: the variable and its default.
                ("RATINGS", env("RATINGS_TOPIC", Some("ratings"))),
                // A module constant keeps the literal the code falls back to.
                ("REVIEWS", crate::index::facts::Value::lit("reviews")),
            ]
        );
        assert_eq!(
            topics(&f),
            vec![(EventRole::Producer, env("LIKES_TOPIC", Some("likes")), 11)]
        );
    }

    #[test]
    fn config_keys_set_in_code_are_properties_of_the_service() {
        let src = r#"import os
app.config["CART_URI"] = "http://{}/cart".format(os.environ.get("CART_HOST", "cart"))
app.config["PAY_URI"] = f"http://{os.environ.get('PAY_HOST')}/pay"
app.config["SECRET"] = compute()
cache["KEY"] = "http://not/config"
app.config["LOW_URI"] = "http://%s/low" % os.getenv("low_host", "low")
app.config["BARE_URI"] = "http://%s/bare" % os.getenv("bare_host")
"#;
        let f = extract("svc/app.py", src);
        assert_properties(
            &f,
            &[
                ("CART_URI", "http://${CART_HOST:cart}/cart", 2),
                ("PAY_URI", "http://${PAY_HOST}/pay", 3),
                // A lower-case variable is not written as a placeholder (it would read as a
                // key): its default stands in; without one the value is not known.
                ("LOW_URI", "http://low/low", 6),
            ],
        );
    }
}
