//! Java extractor: package, imports, declarations (classes, interfaces, enums with their
//! constants, records, annotation types, nested types, methods, constructors, fields and
//! `static final` constants) from one walk over the tokens of the masked code, then the shared
//! JVM framework recognisers ([`super::jvm`]) for gRPC, Kafka and HTTP.
//!
//! Member headers are read up to their terminator (`{`, `;` or `=`); method bodies and field
//! initialisers are skipped whole through the bracket-pair table, so nothing inside them is
//! taken for a declaration and the walk stays linear.

use super::jvm::{self, Ann, Dialect, Frame, MethodDecl, TokKind, TypeDecl};
use crate::index::facts::{FileFacts, Import, SymbolKind};
use crate::index::lex::Syntax;

/// Extracts the facts of one Java file.
pub fn extract(path: &str, text: &str) -> FileFacts {
    let _ = path;
    jvm::walk::extract(text, Syntax::JAVA, Dialect::Java, |p| p.run())
}

/// Marks the Java walk.
enum Java {}

type Parser<'s, 'a> = jvm::Walk<'s, 'a, Java>;

/// Words that can precede `(` in a member header only in broken code.
fn is_statement_word(w: &str) -> bool {
    matches!(
        w,
        "if" | "for"
            | "while"
            | "switch"
            | "catch"
            | "synchronized"
            | "return"
            | "new"
            | "super"
            | "this"
            | "throw"
            | "try"
    )
}

impl<'s, 'a> Parser<'s, 'a> {
    fn run(&mut self) {
        let n = self.src.len();
        let mut i = 0;
        while i < n {
            if self.src.is(i, "}") {
                self.close_body(i);
                i += 1;
                continue;
            }
            let in_enum = self.stack.last().is_some_and(|f| f.enum_phase);
            let next = if in_enum {
                self.enum_constants(i)
            } else {
                self.member(i)
            };
            // Always make progress; an enum that switched to members re-reads `i`.
            i = if next > i || (in_enum && !self.in_enum_phase()) {
                next
            } else {
                i + 1
            };
        }
    }

    /// Reads one member (or top-level declaration) starting at token `i`; returns the index
    /// after it.
    fn member(&mut self, i: usize) -> usize {
        let src = self.src;
        let n = src.len();
        let mut anns: Vec<Ann<'a>> = Vec::new();
        let mut j = i;
        while src.is(j, "@") && !src.kw(j + 1, "interface") {
            match jvm::parse_ann(src, j) {
                Some(a) => {
                    j = a.end.max(j + 1);
                    anns.push(a);
                }
                None => j += 1,
            }
        }
        if src.kw(j, "package") {
            return self.package(j);
        }
        if src.kw(j, "import") {
            return self.import(j);
        }
        let header_start = j;
        let mut is_static = false;
        let mut is_final = false;
        let mut type_kw: Option<(SymbolKind, usize)> = None;
        let mut paren: Option<usize> = None;
        let mut angle = 0usize;
        let term = loop {
            let Some(t) = src.toks.get(j) else { break n };
            if t.kind == TokKind::Punct {
                match t.text {
                    "{" | ";" | "=" | "}" => break j,
                    "@" => {
                        if src.kw(j + 1, "interface") && type_kw.is_none() {
                            type_kw = Some((SymbolKind::Interface, j + 1));
                            j += 2;
                            continue;
                        }
                        if let Some(a) = jvm::parse_ann(src, j) {
                            j = a.end.max(j + 1);
                            if angle == 0 && paren.is_none() {
                                anns.push(a);
                            }
                            continue;
                        }
                    }
                    "(" => {
                        if paren.is_none() && angle == 0 && type_kw.is_none() {
                            paren = Some(j);
                        }
                        j = src.close_or_end(j) + 1;
                        continue;
                    }
                    "[" => {
                        j = src.close_or_end(j) + 1;
                        continue;
                    }
                    "<" => angle += 1,
                    ">" => angle = angle.saturating_sub(1),
                    _ => {}
                }
            } else if t.kind == TokKind::Ident && angle == 0 && type_kw.is_none() && paren.is_none()
            {
                match t.text {
                    "static" => is_static = true,
                    "final" => is_final = true,
                    "class" if src.ident(j + 1).is_some() => {
                        type_kw = Some((SymbolKind::Class, j));
                    }
                    "interface" if src.ident(j + 1).is_some() => {
                        type_kw = Some((SymbolKind::Interface, j));
                    }
                    "enum" if src.ident(j + 1).is_some() => {
                        type_kw = Some((SymbolKind::Enum, j));
                    }
                    "record"
                        if src.ident(j + 1).is_some()
                            && (src.is(j + 2, "(") || src.is(j + 2, "<")) =>
                    {
                        type_kw = Some((SymbolKind::Class, j));
                    }
                    _ => {}
                }
            }
            j += 1;
        };
        let term_text = src.toks.get(term).map_or("", |t| t.text);
        let after_term = match term_text {
            "}" => term,
            _ => term + 1,
        };
        let doc = jvm::doc_line(src.lx, src.line(i), !anns.is_empty());

        if let Some(kw) = type_kw {
            return self.type_decl(kw, (term, after_term), anns, doc);
        }
        if let Some(p) = paren {
            return self.method_decl(p, (term, after_term), anns, doc);
        }

        match term_text {
            "=" | ";" => self.fields(header_start, term, is_static && is_final, doc),
            // Initializer blocks (`static { … }`, `{ … }`) and stray blocks.
            "{" => src.close_or_end(term) + 1,
            _ => after_term,
        }
    }

    /// A class, interface, enum or record whose keyword is at `kw`, its header ending at
    /// `term`: the symbol, the type for the model, and its body on the stack.
    fn type_decl(
        &mut self,
        (kind, kw): (SymbolKind, usize),
        (term, after_term): (usize, usize),
        anns: Vec<Ann<'a>>,
        doc: Option<u32>,
    ) -> usize {
        let src = self.src;
        let term_text = src.toks.get(term).map_or("", |t| t.text);
        let Some(name) = src.ident(kw + 1) else {
            return after_term;
        };
        let line = src.line(kw + 1);
        let supers = self.supers(kw + 2, term);
        let body = (term_text == "{").then(|| (term, src.close_or_end(term)));
        let end_line = body.map_or(src.line(term), |(_, c)| src.line(c));
        let (parent, container) = self.container();
        let decl = TypeDecl {
            name,
            line,
            kind,
            anns,
            supers,
            span: (kw, body.map_or(term, |(_, c)| c)),
            parent,
            companion: false,
        };
        let (sym, ty) = self.out.push_type(decl, end_line, doc, container);
        if let Some((_, close)) = body {
            self.stack.push(Frame {
                ty,
                sym,
                enum_phase: kind == SymbolKind::Enum,
                close,
            });
        }
        after_term
    }

    /// A method or constructor whose parameters open at `p`, its header ending at `term`.
    fn method_decl(
        &mut self,
        p: usize,
        (term, after_term): (usize, usize),
        anns: Vec<Ann<'a>>,
        doc: Option<u32>,
    ) -> usize {
        let src = self.src;
        let term_text = src.toks.get(term).map_or("", |t| t.text);
        let Some(name) = p
            .checked_sub(1)
            .and_then(|q| src.ident(q))
            .filter(|w| !is_statement_word(w))
        else {
            return self.skip_rest(term);
        };
        let (owner, container) = self.container();
        let kind = match container.as_deref() {
            Some(c) if c == name => SymbolKind::Constructor,
            Some(_) => SymbolKind::Method,
            None => SymbolKind::Function,
        };
        let (end_line, next) = match term_text {
            "{" => {
                let c = src.close_or_end(term);
                (src.line(c), c + 1)
            }
            "=" => {
                let e = self.initializer_end(term + 1);
                (src.line(e), if src.is(e, ";") { e + 1 } else { e })
            }
            _ => (src.line(term), after_term),
        };
        self.push_member(name, kind, (src.line(p - 1), end_line), doc);
        self.out
            .model
            .methods
            .push(MethodDecl { name, owner, anns });
        next
    }

    /// Skips what follows a header we could not read.
    fn skip_rest(&self, term: usize) -> usize {
        let src = self.src;
        if src.is(term, "{") {
            src.close_or_end(term) + 1
        } else if src.is(term, "=") {
            self.initializer_end(term + 1) + 1
        } else if src.is(term, "}") {
            term
        } else {
            term + 1
        }
    }

    /// The `,`, `;` or `}` ending an initializer that starts at `i` (brackets skipped).
    fn initializer_end(&self, i: usize) -> usize {
        let src = self.src;
        let mut j = i;
        while j < src.len() {
            if src.is_opener(j) {
                j = src.close_or_end(j) + 1;
                continue;
            }
            if src.is(j, ";") || src.is(j, ",") || src.is(j, "}") {
                return j;
            }
            j += 1;
        }
        src.len()
    }

    /// Field declarators `Type a = …, b;` from `start` (after annotations) to the first
    /// terminator `term`; returns the index after the declaration.
    fn fields(
        &mut self,
        start: usize,
        mut term: usize,
        static_final: bool,
        doc: Option<u32>,
    ) -> usize {
        let src = self.src;
        let (owner, _) = self.container();
        let in_interface =
            owner.is_some_and(|t| self.out.model.types[t].kind == SymbolKind::Interface);
        let constant = static_final || in_interface;
        // Names before top-level commas (`int a, b = 2;`), then the last identifier of the
        // header (after `Type`, skipping `[]`).
        let mut name_at = term;
        let mut idents = 0;
        let mut angle = 0usize;
        let mut leading: Vec<usize> = Vec::new();
        for k in start..term {
            match src.toks[k].text {
                "<" => angle += 1,
                ">" => angle = angle.saturating_sub(1),
                "," if angle == 0 && src.ident(name_at).is_some() => leading.push(name_at),
                _ => {}
            }
            if src.ident(k).is_some() {
                idents += 1;
                name_at = k;
            }
        }
        if idents < 2 + leading.len() || owner.is_none() {
            return self.skip_rest(term);
        }
        let kind = if constant {
            SymbolKind::Constant
        } else {
            SymbolKind::Field
        };
        for k in leading {
            if let Some(name) = src.ident(k) {
                self.push_member(name, kind, (src.line(k), src.line(k)), doc);
            }
        }
        loop {
            let Some(name) = src.ident(name_at) else {
                return self.skip_rest(term);
            };
            let line = src.line(name_at);
            let mut end = term;
            if src.is(term, "=") {
                end = self.initializer_end(term + 1);
                self.out
                    .record_const(src, owner, name, (term + 1, end), line);
            }
            let end_line = src.end_line(end.saturating_sub(1).max(name_at));
            self.push_member(name, kind, (line, end_line), doc);
            if src.is(end, ",") && src.ident(end + 1).is_some() {
                name_at = end + 1;
                // The next declarator's own terminator.
                term = name_at + 1;
                while src.is(term, "[") {
                    term = src.close_or_end(term) + 1;
                }
                continue;
            }
            return if src.is(end, "}") { end } else { end + 1 };
        }
    }

    /// Supertypes named after `extends`/`implements` in `from..to`.
    fn supers(&self, from: usize, to: usize) -> Vec<(Option<&'a str>, &'a str)> {
        let src = self.src;
        let mut out = Vec::new();
        let mut listing = false;
        let mut j = from;
        while j < to {
            if src.is(j, "<") {
                j = src.skip_generics(j).max(j + 1);
                continue;
            }
            if src.is(j, "@") {
                j = jvm::parse_ann(src, j).map_or(j + 1, |a| a.end.max(j + 1));
                continue;
            }
            if src.is(j, "(") {
                j = src.close_or_end(j) + 1;
                continue;
            }
            match src.ident(j) {
                Some("extends" | "implements") => listing = true,
                Some("permits") => listing = false,
                Some(_) if listing => {
                    if let Some((prev, last, at)) = src.type_path(j, src.len()) {
                        out.push((prev, last));
                        j = at;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        out
    }

    /// Enum constants `A, B("x") { … }, C;` until the `;` (or the enum's `}`, which the main
    /// loop closes).
    fn enum_constants(&mut self, i: usize) -> usize {
        let Some(frame) = self.stack.last() else {
            return i;
        };
        let (next, closed) = self.out.enum_entries(self.src, frame.ty, i);
        if !closed {
            self.end_enum_phase();
        }
        next
    }

    /// `package a.b.c;`
    fn package(&mut self, at: usize) -> usize {
        self.out.package(self.src, at, false)
    }

    /// `import [static] a.b.C[.*];`
    fn import(&mut self, at: usize) -> usize {
        let src = self.src;
        let mut k = at + 1;
        let is_static = src.kw(k, "static");
        if is_static {
            k += 1;
        }
        let (segs, mut k) = src.dotted(k, false);
        let mut star = false;
        // A trailing `.` is read with the path, and `.*` makes it a whole-package import.
        if !segs.is_empty() && src.is(k, ".") {
            k += 1;
            if src.is(k, "*") {
                star = true;
                k += 1;
            }
        }
        let next = if src.is(k, ";") { k + 1 } else { k.max(at + 1) };
        let Some(&last) = segs.last() else {
            return next;
        };
        let (module, names) = if star {
            (segs.join("."), Vec::new())
        } else if is_static && segs.len() > 1 {
            (segs[..segs.len() - 1].join("."), vec![last.to_string()])
        } else {
            (segs.join("."), vec![last.to_string()])
        };
        self.out.facts.imports.push(Import {
            module,
            names,
            alias: None,
            line: src.line(at),
            reexport: false,
            renamed: Vec::new(),
        });
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::facts::{EventRole, GrpcFact, HttpFact, Value};
    use crate::index::lang::test_support::{
        self, assert_no_syms, consts, grpc_clients_owned, grpc_receiver_calls, lit, names,
        reference, sym,
    };

    /// Java's tests compare routes, calls and events without their lines.
    fn routes(f: &FileFacts) -> Vec<(String, String, Option<String>)> {
        let rows = test_support::routes(f).into_iter();
        rows.map(|(m, p, h, _)| (m, p, h)).collect()
    }

    fn calls(f: &FileFacts) -> Vec<(Option<String>, String)> {
        let rows = test_support::http_calls(f).into_iter();
        rows.map(|(m, u, _)| (m, u)).collect()
    }

    /// A [`calls`] row: method and URL.
    fn c(method: &str, url: &str) -> (Option<String>, String) {
        (Some(method.to_string()), url.to_string())
    }

    fn events(f: &FileFacts) -> Vec<(EventRole, Value, String)> {
        let rows = test_support::events(f).into_iter();
        rows.map(|(r, t, v, _)| (r, t, v.to_string())).collect()
    }

    #[test]
    fn package_imports_and_declarations() {
        let src = r#"package com.acme.orders;

import java.util.List;
import static com.acme.Topics.ORDER_CREATED;
import com.acme.pb.*;
import static org.junit.Assert.*;

/**
 * Orders.
 */
@Service
@Slf4j
public class OrderService<T extends Comparable<T>> extends Base implements Api, Other<T> {
    public static final String TOPIC = "orders.created";
    private static final int LIMIT = 10;
    private final Map<String, List<Order>> byId = new HashMap<>();
    int a, b = 2;

    public OrderService(Repo repo) {
        this.repo = repo;
    }

    @Override
    public <R> Map<String, List<R>> find(
            String id,
            @Nullable List<? extends R> xs)
            throws IOException {
        class Local {}
        Runnable r = () -> { int inner = 1; };
        return null;
    }

    abstract void todo();

    static class Inner {
        void deep() {}
        interface Deeper { String NAME = "deeper"; }
    }

    record Point(int x, int y) implements Shape {
        Point { }
        int sum() { return x + y; }
    }

    @interface Marker { String value() default ""; }
}
"#;
        let f = extract("src/OrderService.java", src);
        assert_eq!(f.package.as_deref(), Some("com.acme.orders"));
        let imps: Vec<(&str, Vec<String>)> = f
            .imports
            .iter()
            .map(|i| (i.module.as_str(), i.names.clone()))
            .collect();
        assert_eq!(
            imps,
            vec![
                ("java.util.List", vec!["List".to_string()]),
                ("com.acme.Topics", vec!["ORDER_CREATED".to_string()]),
                ("com.acme.pb", vec![]),
                ("org.junit.Assert", vec![]),
            ]
        );
        let c = sym(&f, "OrderService");
        assert_eq!(c.kind, SymbolKind::Class);
        assert_eq!((c.line, c.doc_line, c.end_line), (13, Some(8), 46));
        assert_eq!(sym(&f, "TOPIC").kind, SymbolKind::Constant);
        assert_eq!(sym(&f, "LIMIT").kind, SymbolKind::Constant);
        assert_eq!(sym(&f, "byId").kind, SymbolKind::Field);
        assert_eq!(sym(&f, "a").kind, SymbolKind::Field);
        assert_eq!(sym(&f, "b").kind, SymbolKind::Field);
        let ctor = test_support::constructor(&f);
        assert_eq!(
            (ctor.name.as_str(), ctor.line, ctor.end_line),
            ("OrderService", 19, 21)
        );
        let find = sym(&f, "find");
        assert_eq!(find.kind, SymbolKind::Method);
        assert_eq!((find.line, find.end_line), (24, 31));
        assert_eq!(find.doc_line, Some(23));
        assert_eq!(find.container.as_deref(), Some("OrderService"));
        // Locals and local classes inside bodies are not members.
        assert_no_syms(&f, &["Local", "inner"]);
        assert_eq!(sym(&f, "todo").end_line, 33);
        let deep = sym(&f, "deep");
        assert_eq!(deep.container.as_deref(), Some("Inner"));
        assert_eq!(sym(&f, "Deeper").kind, SymbolKind::Interface);
        assert_eq!(sym(&f, "NAME").kind, SymbolKind::Constant);
        assert_eq!(sym(&f, "NAME").container.as_deref(), Some("Deeper"));
        assert_eq!(sym(&f, "Point").kind, SymbolKind::Class);
        assert_eq!(sym(&f, "sum").container.as_deref(), Some("Point"));
        assert_eq!(sym(&f, "Marker").kind, SymbolKind::Interface);
        assert_eq!(sym(&f, "value").container.as_deref(), Some("Marker"));
        let consts = consts(&f);
        assert_eq!(
            consts,
            vec![
                ("OrderService.TOPIC", "orders.created"),
                ("Deeper.NAME", "deeper"),
                // From the shared tracker: a numeric constant is a binding too.
                ("OrderService.LIMIT", "10"),
            ]
        );
    }

    #[test]
    fn enums_with_string_values_and_bodies() {
        let src = r#"package t;
public enum Topics {
    /** Created. */
    ORDER_CREATED("order.created"),
    @Deprecated
    ORDER_PAID("order.paid", 2) {
        @Override String x() { return "y"; }
    },
    PLAIN;

    private final String value;
    Topics(String value) { this.value = value; }
    public String getValue() { return value; }
}
enum Empty { }
"#;
        let f = extract("Topics.java", src);
        assert_eq!(sym(&f, "Topics").kind, SymbolKind::Enum);
        let created = sym(&f, "ORDER_CREATED");
        assert_eq!(created.kind, SymbolKind::EnumValue);
        assert_eq!(created.doc_line, Some(3));
        assert_eq!(created.container.as_deref(), Some("Topics"));
        let paid = sym(&f, "ORDER_PAID");
        assert_eq!((paid.line, paid.end_line, paid.doc_line), (6, 8, Some(5)));
        assert_eq!(sym(&f, "PLAIN").kind, SymbolKind::EnumValue);
        assert_eq!(sym(&f, "value").kind, SymbolKind::Field);
        assert_eq!(sym(&f, "getValue").kind, SymbolKind::Method);
        assert_no_syms(&f, &["x"]);
        assert_eq!(test_support::constructor(&f).line, 12);
        assert_eq!(sym(&f, "Empty").end_line, 15);
        let consts = consts(&f);
        assert_eq!(
            consts,
            vec![
                ("Topics.ORDER_CREATED", "order.created"),
                ("Topics.ORDER_PAID", "order.paid")
            ]
        );
    }

    #[test]
    fn comments_strings_and_text_blocks_are_ignored() {
        let src = r#"class Real {
    // class Fake1 { void no() {} }
    /* @KafkaListener(topics = "nope") class Fake2 {} */
    String q = """
        class Fake3 { void no() {} }
        @GetMapping("/nope")
        """;
    String s = "class Fake4 { kafkaTemplate.send(\"x\", 1); }";
    char c = '{';
    void yes() {}
}
"#;
        let f = extract("Real.java", src);
        assert_eq!(names(&f), vec!["Real", "q", "s", "c", "yes"]);
        assert_eq!(sym(&f, "q").end_line, 7);
        assert_eq!(sym(&f, "Real").end_line, 11);
        assert!(f.events.is_empty() && f.http.is_empty());
        // A text block's value is still a string constant.
        assert_eq!(f.bindings.len(), 2);
    }

    #[test]
    fn grpc_server_client_and_calls() {
        let src = r#"package com.acme;
import io.grpc.stub.StreamObserver;
import com.acme.pb.PaymentServiceGrpc.PaymentServiceBlockingStub;

@GrpcService
public class OrderServiceImpl extends OrderServiceGrpc.OrderServiceImplBase {
    private final InventoryServiceGrpc.InventoryServiceBlockingStub inventory;
    private final PaymentServiceBlockingStub payments;
    private UserServiceGrpc.UserServiceStub users;

    public OrderServiceImpl(ManagedChannel ch, PaymentServiceBlockingStub payments) {
        this.inventory = InventoryServiceGrpc.newBlockingStub(ch);
        this.payments = payments;
    }

    @Override
    public void createOrder(CreateOrderRequest req, StreamObserver<Order> obs) {
        inventory.reserve(req);
        this.payments.withDeadlineAfter(3, TimeUnit.SECONDS).charge(req);
        var audit = AuditServiceGrpc.newFutureStub(channel);
        audit.record(req);
        other.reserve(req); // not a client
        ShippingServiceGrpc.newStub(channel).ship(req);
        // inventory.commented(req);
    }
}

class NotAServer extends ImplBase {}
class AlsoNot extends FooGrpc.Helper {}
"#;
        let f = extract("OrderServiceImpl.java", src);
        let servers: Vec<&GrpcFact> = f
            .grpc
            .iter()
            .filter(|g| matches!(g, GrpcFact::Server { .. }))
            .collect();
        assert_eq!(
            servers,
            vec![&GrpcFact::Server {
                service: "OrderService".into(),
                impl_type: Some("OrderServiceImpl".into()),
                line: 6
            }]
        );
        let clients = grpc_clients_owned(&f);
        assert_eq!(
            clients,
            vec![
                ("PaymentService".into(), Some("payments".into()), 8),
                ("UserService".into(), Some("users".into()), 9),
                ("InventoryService".into(), Some("inventory".into()), 12),
                ("AuditService".into(), Some("audit".into()), 20),
                ("ShippingService".into(), None, 23),
            ]
        );
        assert_eq!(
            grpc_receiver_calls(&f),
            vec![
                (Some("ShippingService"), "ShippingServiceGrpc", "ship", 23),
                (Some("InventoryService"), "inventory", "reserve", 18),
                (Some("PaymentService"), "payments", "charge", 19),
                (Some("AuditService"), "audit", "record", 21),
            ]
        );
        // Handlers are the server type's methods.
        assert_eq!(
            sym(&f, "createOrder").container.as_deref(),
            Some("OrderServiceImpl")
        );
    }

    #[test]
    fn kafka_listeners_templates_and_clients() {
        let src = r#"package com.acme;
public class Events {
    public static final String PAID = "orders.paid";
    @Value("${app.kafka.topic:orders.created}")
    private String createdTopic;
    private final KafkaTemplate<String, Order> template;
    private final String literalTopic = "orders.literal";

    @KafkaListener(topics = "orders.created", groupId = "g")
    void a(String m) {}

    @KafkaListener(topics = {"a.one", "a.two"})
    void b(String m) {}

    @KafkaListener(topics = Topics.ORDER_CREATED)
    void c(String m) {}

    @KafkaListener(topics = "${app.kafka.in:orders.in}", topicPattern = "x.*")
    @SendTo("orders.out")
    void d(String m) {}

    @KafkaListener(topicPattern = "orders.*")
    void e(String m) {}

    @KafkaListener(topicPartitions = @TopicPartition(topic = "orders.part", partitions = "0"))
    void f(String m) {}

    void send(Order o, String dynamic) {
        template.send("orders.sent", o.id(), o);
        kafkaTemplate.send(PAID, o);
        this.kafkaTemplate.send(createdTopic, o);
        template.send(new ProducerRecord<>("orders.record", o.id(), o));
        template.send(literalTopic, o);
        template.send(dynamic, o);
        otherThing.send("not.kafka", o);
        producer.send(new ProducerRecord<String, String>(Topics.AUDIT, "k", "v"));
        consumer.subscribe(List.of("orders.x", "orders.y"));
        consumer.subscribe(Collections.singletonList(PAID));
        consumer.subscribe(Pattern.compile("orders.*"));
        reactive.subscribe(Arrays.asList("orders.z"));
        String local = "orders.local";
        template.send(local, o);
        var built = new KafkaTemplate<String, String>(factory);
        built.send("orders.built", o);
        Message<?> m = MessageBuilder.withPayload(o).setHeader(KafkaHeaders.TOPIC, "orders.msg").build();
    }
}
"#;
        let f = extract("Events.java", src);
        use EventRole::*;
        let env = |v: &str, d: &str| Value::env(v, Some(d.into()));
        assert_eq!(
            events(&f),
            vec![
                (Consumer, lit("orders.created"), "@KafkaListener".into()),
                (Consumer, lit("a.one"), "@KafkaListener".into()),
                (Consumer, lit("a.two"), "@KafkaListener".into()),
                (
                    Consumer,
                    reference("Topics.ORDER_CREATED"),
                    "@KafkaListener".into()
                ),
                (
                    Consumer,
                    env("app.kafka.in", "orders.in"),
                    "@KafkaListener".into()
                ),
                (Producer, lit("orders.out"), "@SendTo".into()),
                (Consumer, lit("orders.part"), "@KafkaListener".into()),
                (Producer, lit("orders.sent"), "KafkaTemplate".into()),
                (Producer, reference("Events.PAID"), "KafkaTemplate".into()),
                (
                    Producer,
                    env("app.kafka.topic", "orders.created"),
                    "KafkaTemplate".into()
                ),
                (Producer, lit("orders.record"), "KafkaTemplate".into()),
                (
                    Producer,
                    reference("Events.literalTopic"),
                    "KafkaTemplate".into()
                ),
                // A parameter: kept, so the graph lists the site as unresolved.
                (Producer, Value::dynamic(), "KafkaTemplate".into()),
                (Producer, reference("Topics.AUDIT"), "kafka-clients".into()),
                (Consumer, lit("orders.x"), "kafka-clients".into()),
                (Consumer, lit("orders.y"), "kafka-clients".into()),
                (Consumer, reference("Events.PAID"), "kafka-clients".into()),
                (Consumer, lit("orders.z"), "kafka-clients".into()),
                (Producer, lit("orders.local"), "KafkaTemplate".into()),
                (Producer, lit("orders.built"), "KafkaTemplate".into()),
                (Producer, lit("orders.msg"), "KafkaTemplate".into()),
            ]
        );
        // (What `new X(…)` passes is bound too, for constructors that keep an argument.)
        let consts: Vec<(&str, &str)> = f
            .bindings
            .iter()
            .filter(|c| !c.name.starts_with("new "))
            .map(|c| (c.name.as_str(), c.value.as_lit().unwrap_or("?")))
            .collect();
        assert_eq!(
            consts,
            vec![
                ("Events.PAID", "orders.paid"),
                ("Events.literalTopic", "orders.literal"),
                ("Events.createdTopic", "orders.created"),
            ]
        );
    }

    #[test]
    fn spring_static_resource_handlers_are_routes() {
        let src = "class WebConfig implements WebFluxConfigurer {\n  public void addResourceHandlers(ResourceHandlerRegistry registry) {\n    registry\n      .addResourceHandler(\"/assets/img/**\", \"/favicon.ico\")\n      .addResourceLocations(\"file:/x\");\n  }\n}\n";
        let f = extract("WebConfig.java", src);
        assert_eq!(
            routes(&f),
            vec![
                (
                    "GET".into(),
                    "/assets/img/**".into(),
                    Some("addResourceHandler".into())
                ),
                (
                    "GET".into(),
                    "/favicon.ico".into(),
                    Some("addResourceHandler".into())
                ),
            ]
        );
        let line = f.http.iter().find_map(|h| match h {
            HttpFact::Route { line, .. } => Some(*line),
            _ => None,
        });
        assert_eq!(line, Some(4));
    }

    #[test]
    fn spring_and_jaxrs_routes() {
        let src = r#"package com.acme;
@RestController
@RequestMapping("/orders")
public class OrderController {
    private static final String ITEMS = "/items";

    @GetMapping("/{id}")
    public Order get(@PathVariable String id) { return null; }

    @PostMapping
    public Order create(@RequestBody Order o) { return null; }

    @PutMapping(value = "/{id}")
    public void put() {}

    @DeleteMapping(path = {"/{id}", "/by-name/{name}"})
    public void delete() {}

    @PatchMapping("/{id}" + ITEMS)
    public void patch() {}

    @RequestMapping(value = "/search", method = RequestMethod.GET)
    public void search() {}

    @RequestMapping(path = "/any")
    public void any() {}

    @RequestMapping(value = "/multi", method = {RequestMethod.GET, RequestMethod.HEAD})
    public void multi() {}

    @GetMapping(Unknown.PATH)
    public void unresolved() {}
}

@Path("/users")
class UserResource {
    @GET
    @Path("/{id}")
    public User get() { return null; }

    @POST
    public User create() { return null; }

    @Path("/sub")
    public Sub locator() { return null; }
}
"#;
        let f = extract("OrderController.java", src);
        let r = |m: &str, p: &str, h: &str| (m.to_string(), p.to_string(), Some(h.to_string()));
        assert_eq!(
            routes(&f),
            vec![
                r("GET", "/orders/{id}", "get"),
                r("POST", "/orders", "create"),
                r("PUT", "/orders/{id}", "put"),
                r("DELETE", "/orders/{id}", "delete"),
                r("DELETE", "/orders/by-name/{name}", "delete"),
                r("PATCH", "/orders/{id}/items", "patch"),
                r("GET", "/orders/search", "search"),
                r("ANY", "/orders/any", "any"),
                r("GET", "/orders/multi", "multi"),
                r("HEAD", "/orders/multi", "multi"),
                r("GET", "/users/{id}", "get"),
                r("POST", "/users", "create"),
            ]
        );
        let line = test_support::routes_borrowed(&f)[0].3;
        assert_eq!(line, 7);
    }

    #[test]
    fn feign_clients_are_calls_not_routes() {
        let src = r#"
@FeignClient(name = "orders", path = "/api")
public interface OrdersClient {
    @GetMapping("/orders/{id}")
    Order get(@PathVariable("id") String id);

    @RequestMapping(method = RequestMethod.POST, value = "/orders")
    Order create(Order o);
}

public interface Retro {
    @GET("users/{id}")
    Call<User> user(@Path("id") String id);
}

public interface Legacy {
    @RequestLine("DELETE /orders/{id}")
    void delete(@Param("id") String id);
}
"#;
        let f = extract("OrdersClient.java", src);
        assert!(routes(&f).is_empty());
        assert_eq!(
            calls(&f),
            vec![
                (Some("GET".into()), "/api/orders/{}".into()),
                (Some("POST".into()), "/api/orders".into()),
                (Some("GET".into()), "/users/{}".into()),
                (Some("DELETE".into()), "/orders/{}".into()),
            ]
        );
    }

    #[test]
    fn event_arguments_assigned_round_a_cycle_end() {
        // Locals assigned to each other (mutated code, or a swap) are followed a few steps.
        let src = "class A {\n  void f() {\n    x = y;\n    y = x;\n    publisher.publishEvent(x);\n  }\n}\n";
        let _ = extract("A.java", src);
        let _ = super::super::kotlin::extract(
            "A.kt",
            "val x = y\nval y = x\nfun f() { publisher.publishEvent(x) }\n",
        );
        let _ = super::super::scala::extract(
            "A.scala",
            "object A {\n  val x = y\n  val y = x\n  publisher.publishEvent(x)\n}\n",
        );
    }

    #[test]
    fn nats_and_redis_clients_and_spring_redis_topics() {
        use crate::index::lang::test_support::events_shown;
        let src = r#"package com.acme.orders;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
class Bus {
    static final String SHIPPED = "orders.shipped";
    void run(Connection nc, Dispatcher dispatcher, String subj) {
        nc.publish("orders.created", bytes);
        dispatcher.subscribe("orders.*");
        nc.subscribe(SHIPPED, "workers");
        nc.publish(subj, bytes);
        nc.flush(d);
    }
}
"#;
        use EventRole::{Consumer, Producer};
        let s = |x: &str| x.to_string();
        assert_eq!(
            events_shown(&extract("Bus.java", src)),
            vec![
                (Producer, s("orders.created"), "nats", 7),
                (Consumer, s("orders.*"), "nats", 8),
                (Consumer, s("{Bus.SHIPPED}"), "nats", 9),
                // A parameter: the graph lists the site as unresolved.
                (Producer, s("{}"), "nats", 10),
            ]
        );
        let redis = r#"package com.acme.orders;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.listener.ChannelTopic;
import redis.clients.jedis.Jedis;
class Cache {
    void run(StringRedisTemplate template, Jedis jedis) {
        template.convertAndSend("orders.created", json);
        container.addMessageListener(adapter, new ChannelTopic("orders.created"));
        container.addMessageListener(adapter, new PatternTopic("orders.*"));
        jedis.publish("orders.paid", msg);
        jedis.subscribe(listener, "orders.paid", "orders.void");
        jedis.xadd("audit", StreamEntryID.NEW_ENTRY, fields);
        jedis.get("orders.created");
    }
}
"#;
        assert_eq!(
            events_shown(&extract("Cache.java", redis)),
            vec![
                (Producer, s("orders.created"), "redis", 7),
                (Consumer, s("orders.created"), "redis", 8),
                (Consumer, s("orders.*"), "redis", 9),
                (Producer, s("orders.paid"), "redis", 10),
                // Jedis's listener comes first.
                (Consumer, s("orders.paid"), "redis", 11),
                (Consumer, s("orders.void"), "redis", 11),
                (Producer, s("audit"), "redis", 12),
            ]
        );
        // Without a NATS or Redis import: someone else's `publish`, RabbitMQ's template.
        let plain = "package x;\nclass B { void f() { bus.publish(\"orders.created\", o); rabbitTemplate.convertAndSend(\"q\", o); } }\n";
        assert_eq!(
            events_shown(&extract("B.java", plain)),
            vec![(Producer, s("q"), "RabbitTemplate", 2)]
        );
    }

    #[test]
    fn spring_cloud_stream_bridge_and_functional_beans() {
        use crate::index::lang::test_support::events_shown;
        let src = r#"package com.acme.orders;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
@Configuration
class Streams {
    void send(Order o) { streamBridge.send("orders-out-0", o); }
    @Bean
    public Consumer<Order> payments() { return o -> {}; }
    @Bean public Supplier<Flux<Tick>> ticks() { return Flux::empty; }
    @Bean
    @Profile("x")
    Function<Order, Invoice> invoice() { return o -> null; }
    @Bean public RestTemplate rest() { return new RestTemplate(); }
}
"#;
        use EventRole::{Consumer, Producer};
        let d = |b: &str| format!("{{config spring.cloud.stream.bindings.{b}.destination}}");
        let bean = super::jvm::STREAM_BEAN_VIA;
        assert_eq!(
            events_shown(&extract("Streams.java", src)),
            vec![
                (Producer, d("orders-out-0"), "spring-cloud-stream", 7),
                (Consumer, d("payments-in-0"), bean, 9),
                (Producer, d("ticks-out-0"), bean, 10),
                (Consumer, d("invoice-in-0"), bean, 13),
                (Producer, d("invoice-out-0"), bean, 13),
            ]
        );
    }

    #[test]
    fn rabbit_templates_listeners_and_spring_application_events() {
        let src = r#"package com.acme.orders;
class Messaging {
    public static final String EXCHANGE_NAME = "orders-exchange";
    private final RabbitTemplate rabbitTemplate;
    private final ApplicationEventPublisher publisher;
    void send(Order o) {
        rabbitTemplate.convertAndSend(Messaging.EXCHANGE_NAME, "", o);
        rabbitTemplate.convertAndSend("orders", "order.created", o);
        jmsTemplate.convertAndSend("invoices", o);
        OrderCreatedEvent evt = new OrderCreatedEvent(o);
        publisher.publishEvent(evt);
    }
    @RabbitListener(queues = "orders-queue")
    void onOrder(Order o) {}
    @TransactionalEventListener
    public void onCreated(OrderCreatedEvent event) {}
}
class Ready implements ApplicationListener<ApplicationReadyEvent> {
    public void onApplicationEvent(ApplicationReadyEvent e) {}
}
"#;
        let f = extract("Messaging.java", src);
        let got: Vec<(EventRole, String, String, u32)> = f
            .events
            .iter()
            .map(|e| (e.role, e.topic.display(), e.via.clone(), e.line))
            .collect();
        let e = |r, t: &str, v: &str, l| (r, t.to_string(), v.to_string(), l);
        use EventRole::*;
        assert_eq!(
            got,
            vec![
                // An empty routing key: the exchange only; a constant stays a name.
                e(Producer, "{Messaging.EXCHANGE_NAME}", "amqp exchange", 7),
                // The routing key, and the exchange as an endpoint of its own.
                e(Producer, "order.created", "RabbitTemplate", 8),
                e(Producer, "orders", "amqp exchange", 8),
                e(Producer, "invoices", "JmsTemplate", 9),
                // Built where the event is constructed.
                e(Producer, "OrderCreatedEvent", "ApplicationEvent", 10),
                e(Consumer, "orders-queue", "@RabbitListener", 13),
                e(Consumer, "OrderCreatedEvent", "ApplicationEvent", 16),
                // Spring Boot publishes it: a framework lifecycle event.
                e(
                    Consumer,
                    "ApplicationReadyEvent",
                    crate::index::facts::FRAMEWORK_EVENT_VIA,
                    18
                ),
            ]
        );
    }

    #[test]
    fn spring_amqp_bindings_consume_their_exchange() {
        let src = r#"package com.acme.orders;
class RabbitConfig {
    public static final String EXCHANGE_NAME = "orders-exchange";
    @Bean
    Queue queue() { return new Queue("orders-queue", false); }
    @Bean
    FanoutExchange exchange() {
        return new FanoutExchange(EXCHANGE_NAME);
    }
    @Bean
    Binding binding(Queue queue, FanoutExchange exchange) {
        return BindingBuilder.bind(queue).to(exchange);
    }
    Binding inline(Queue q) { return BindingBuilder.bind(q).to(new TopicExchange("évènements")).with("k"); }
    Binding direct() { return new Binding("q", Binding.DestinationType.QUEUE, "audit", "k", null); }
    Binding toExchange() { return new Binding("x", Binding.DestinationType.EXCHANGE, "audit", "k", null); }
    Binding none(Queue q) { return BindingBuilder.bind(q).to(new DirectExchange("")).with("k"); }
    void route() { builder.bind(q).to(exchange); }
    @RabbitListener(bindings = @QueueBinding(value = @Queue("q"), exchange = @Exchange(value = "shop", type = "topic"), key = "order.*"))
    void on(Order o) {}
}
"#;
        let f = extract("RabbitConfig.java", src);
        let got = test_support::events_shown(&f);
        use EventRole::Consumer;
        let ex = crate::index::lang::common::AMQP_EXCHANGE_VIA;
        assert_eq!(
            got,
            vec![
                // The `@Bean` method the bound exchange is injected from.
                (Consumer, "{RabbitConfig.EXCHANGE_NAME}".to_string(), ex, 12),
                (Consumer, "évènements".to_string(), ex, 14),
                // A queue binding names its exchange; an exchange-to-exchange one does not.
                (Consumer, "audit".to_string(), ex, 15),
                // The default exchange is none; `builder.bind` is no BindingBuilder.
                (Consumer, "shop".to_string(), ex, 19),
            ]
        );
    }

    #[test]
    fn fluent_request_builders_and_joined_paths() {
        let src = r#"class KiotaCarts {
    private final CartsClient cartsClient;
    void go(String id, String item, String endpoint) {
        cartsClient.carts().byCustomerId(id).items().byItemId(item).delete();
        var cart = cartsClient.carts().byCustomerId(id).get();
        webClient.get().uri(joinPath(endpoint, "topology")).retrieve();
        builder.name().value().get();
    }
}
"#;
        let f = extract("KiotaCarts.java", src);
        assert_eq!(
            calls(&f),
            vec![
                // The client's name leads the URL: a host hint naming the service.
                c("DELETE", "{cartsClient}/carts/{}/items/{}"),
                c("GET", "{cartsClient}/carts/{}"),
                c("GET", "{}/topology"),
            ]
        );
    }

    #[test]
    fn apache_requests_are_sited_where_they_are_executed() {
        let src = r#"class CartHelper {
    private String baseUrl;
    public String addToCart(String id, String data) {
        HttpPost postRequest = new HttpPost(baseUrl + id);
        postRequest.setEntity(new StringEntity(data));
        try (CloseableHttpResponse res = httpClient.execute(postRequest)) {
            return res.toString();
        }
    }
    void ping() { new HttpGet("http://x/health"); }
}
"#;
        let f = extract("CartHelper.java", src);
        let lines = test_support::http_calls(&f);
        assert_eq!(
            lines,
            vec![
                (Some("POST".into()), "{baseUrl}{}".into(), 6),
                (Some("GET".into()), "http://x/health".into(), 10),
            ]
        );
    }

    #[test]
    fn getters_on_messages_are_not_rpc_calls() {
        let src = r#"class OffersClient {
    private final OffersGrpc.OffersBlockingStub stub = OffersGrpc.newBlockingStub(channel);
    List<Offer> load(Req req) {
        OffersResponse resp = stub.getOffers(req);
        return stub.getOffers().getOffersList();
    }
}
"#;
        let f = extract("OffersClient.java", src);
        let calls: Vec<(&str, u32)> = test_support::grpc_calls(&f)
            .into_iter()
            .map(|(_, m, l)| (m, l))
            .collect();
        assert_eq!(calls, vec![("getOffers", 4)]);
    }

    #[test]
    fn http_client_calls() {
        let src = r#"class C {
    private final RestTemplate rest;
    private final WebClient webClient;
    void go(String baseUrl, String id) {
        rest.getForObject("http://orders:8080/orders/{id}", Order.class, id);
        restTemplate.postForEntity(baseUrl + "/orders/" + id + "/items", body, Order.class);
        rest.exchange(baseUrl + "/orders", HttpMethod.PUT, entity, Void.class);
        rest.delete(String.format("%s/orders/%s", baseUrl, id));
        map.put("/not/http", 1);
        webClient.get().uri("/orders/{id}", id).retrieve();
        webClient.method(HttpMethod.PATCH).uri(b -> b.path("/orders/{id}").build(id));
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://inv/stock/" + id))
            .POST(BodyPublishers.noBody())
            .build();
        HttpRequest req2 = HttpRequest.newBuilder()
            .uri(URI.create(baseUrl + "/users"))
            .GET()
            .build();
        Request r = new Request.Builder().url(baseUrl + "/okhttp").delete().build();
        HttpGet g = new HttpGet("http://x/apache/" + id);
        String notUrl = "orders";
        rest.getForObject(notUrl, String.class);
        String url = baseUrl + "/orders/" + id + "/cancel";
        rest.postForObject(url, null, Void.class);
    }
}
"#;
        let f = extract("C.java", src);
        assert_eq!(
            calls(&f),
            vec![
                // URLs as the evaluator reads them; `baseUrl` and `id` are parameters.
                c("GET", "http://orders:8080/orders/{id}"),
                c("POST", "{}/orders/{}/items"),
                c("PUT", "{}/orders"),
                c("DELETE", "{}/orders/{}"),
                c("GET", "/orders/{id}"),
                c("PATCH", "/orders/{id}"),
                c("POST", "http://inv/stock/{}"),
                c("GET", "{}/users"),
                c("DELETE", "{}/okhttp"),
                c("GET", "http://x/apache/{}"),
                // A RestTemplate call is HTTP whatever its URL: kept (unresolvable).
                c("GET", "orders"),
                c("POST", "{}/orders/{}/cancel"),
            ]
        );
    }

    #[test]
    fn imported_implbase_value_params_and_other_http_styles() {
        let src = r#"package com.acme;
import com.acme.pb.OrderServiceGrpc.OrderServiceImplBase;

public class Impl extends OrderServiceImplBase {
    private final String topic;
    public Impl(@Value("${orders.topic:orders.v1}") String topic, KafkaTemplate<String, String> t) {
        this.topic = topic;
        t.send(topic, "x");
    }
}

@Controller("/micro")
class MicroController {
    @Get("/{id}")
    String get(String id) { return id; }
}

@HttpExchange("/remote")
interface RemoteApi {
    @GetExchange("/things/{id}")
    Thing thing(@PathVariable String id);
}

@RegisterRestClient
@Path("/stock")
interface StockClient {
    @GET
    @Path("/{sku}")
    Stock get(@PathParam("sku") String sku);
}
"#;
        let f = extract("Impl.java", src);
        assert_eq!(
            f.grpc,
            vec![GrpcFact::Server {
                service: "OrderService".into(),
                impl_type: Some("Impl".into()),
                line: 4
            }]
        );
        assert_eq!(
            events(&f),
            vec![(
                EventRole::Producer,
                Value::env("orders.topic", Some("orders.v1".into())),
                "KafkaTemplate".into()
            )]
        );
        assert_eq!(f.bindings[0].name, "Impl.topic");
        assert_eq!(
            routes(&f),
            vec![(
                "GET".to_string(),
                "/micro/{id}".to_string(),
                Some("get".to_string())
            )]
        );
        assert_eq!(
            calls(&f),
            vec![
                (Some("GET".into()), "/remote/things/{}".into()),
                (Some("GET".into()), "/stock/{}".into()),
            ]
        );
    }

    #[test]
    fn stray_closers_leave_the_next_class_whole() {
        let f = extract("x.java", "}}}} class B { void ok() {} }");
        assert_eq!(sym(&f, "ok").container.as_deref(), Some("B"));
    }
}

#[cfg(test)]
mod env_fallback_tests {
    use super::*;
    use crate::index::facts::EventRole;
    use crate::index::lang::test_support::{bindings, env, reference, topics};

    #[test]
    fn a_topic_from_an_optional_getenv_with_or_else() {
        let src = r#"package x;
class Publisher {
    private KafkaTemplate<String, String> kafkaTemplate;
    private final String topic = Optional.ofNullable(System.getenv("PAYMENTS_TOPIC")).orElse("payments");
    void publish() { kafkaTemplate.send(topic, "x"); }
    void again() { kafkaTemplate.send(Optional.ofNullable(System.getenv("T")).orElse("refunds"), "x"); }
}
"#;
        let f = extract("Publisher.java", src);
        assert_eq!(
            bindings(&f),
            vec![("Publisher.topic", env("PAYMENTS_TOPIC", Some("payments")))]
        );
        assert_eq!(
            topics(&f),
            vec![
                (EventRole::Producer, reference("topic"), 5),
                (EventRole::Producer, env("T", Some("refunds")), 6),
            ]
        );
    }

    #[test]
    fn a_value_field_with_a_placeholder_inside_a_url_binds_the_whole_url() {
        let src = r##"package x;
class Carts {
    @Value("http://${CARTS_HOST}/carts")
    private String url;
    @Value("#{systemProperties['x']}/y")
    private String spel;
    String get(String id) { return restTemplate.getForObject(url + "/" + id, String.class); }
}
"##;
        let f = extract("Carts.java", src);
        assert_eq!(
            bindings(&f),
            vec![(
                "Carts.url",
                crate::index::facts::Value {
                    parts: vec![
                        crate::index::facts::Part::Lit("http://".into()),
                        crate::index::facts::Part::Env {
                            var: "CARTS_HOST".into(),
                            default: None
                        },
                        crate::index::facts::Part::Lit("/carts".into()),
                    ]
                }
            )]
        );
    }
}
