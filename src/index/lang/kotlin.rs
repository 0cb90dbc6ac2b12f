//! Kotlin extractor: package, imports (with `as` aliases), classes (data, sealed, enum with
//! entries, annotation, value), objects and companion objects, interfaces, functions
//! (top-level, members, extensions), properties (`const val` and string-valued `val`s become
//! constants qualified like code references them), type aliases, primary-constructor
//! properties and secondary constructors, then the shared JVM framework recognisers
//! ([`super::jvm`]) for gRPC, Kafka and HTTP.
//!
//! Kotlin ends statements at newlines, so the walk is keyword-driven: at member level it
//! reacts only to declaration keywords, and skips every initializer, expression body and block
//! whole (an expression continues onto the next line only after an operator, or when that
//! line starts with one).

use super::jvm::{self, Ann, Dialect, Frame, MethodDecl, Src, TokKind, TypeDecl};
use crate::index::facts::{FileFacts, Import, SymbolKind};
use crate::index::lex::Syntax;

/// Extracts the facts of one Kotlin file (`.kt` or `.kts`).
pub fn extract(path: &str, text: &str) -> FileFacts {
    let _ = path;
    jvm::walk::extract(text, Syntax::KOTLIN, Dialect::Kotlin, |p| p.run())
}

/// Annotations and modifiers read before a declaration keyword.
#[derive(Default)]
struct Pending<'a> {
    start: Option<usize>,
    anns: Vec<Ann<'a>>,
    is_const: bool,
    is_enum: bool,
    is_companion: bool,
}

/// Marks the Kotlin walk.
enum Kotlin {}

type Parser<'s, 'a> = jvm::Walk<'s, 'a, Kotlin>;

fn is_modifier(w: &str) -> bool {
    matches!(
        w,
        "public"
            | "private"
            | "protected"
            | "internal"
            | "open"
            | "final"
            | "abstract"
            | "override"
            | "data"
            | "sealed"
            | "enum"
            | "annotation"
            | "inner"
            | "value"
            | "inline"
            | "lateinit"
            | "const"
            | "suspend"
            | "operator"
            | "infix"
            | "tailrec"
            | "external"
            | "expect"
            | "actual"
            | "companion"
            | "vararg"
            | "noinline"
            | "crossinline"
            | "reified"
    )
}

/// Operators that continue an expression across a line break, whether they end the line
/// before it or start the next one.
const CONTINUING_OPS: &[&str] = &[
    ".", "?.", "?:", "&&", "||", "+", "-", "*", "/", "%", "==", "!=", "..", "->", "=", ":", ",",
];

/// True when the token at `k` starts a line that continues the expression before it.
fn continues(src: &Src, k: usize) -> bool {
    let cont_start = src.toks.get(k).is_some_and(|t| match t.kind {
        TokKind::Punct => CONTINUING_OPS.contains(&t.text),
        TokKind::Ident => matches!(t.text, "as" | "is" | "else" | "catch" | "finally" | "by"),
        _ => false,
    });
    let cont_end = k
        .checked_sub(1)
        .and_then(|p| src.toks.get(p))
        .is_some_and(|t| match t.kind {
            TokKind::Punct => CONTINUING_OPS.contains(&t.text) || matches!(t.text, "(" | "[" | "{"),
            TokKind::Ident => matches!(t.text, "as" | "is" | "in" | "else" | "return" | "by"),
            _ => false,
        });
    cont_start || cont_end
}

impl<'s, 'a> Parser<'s, 'a> {
    fn run(&mut self) {
        let src = self.src;
        let n = src.len();
        let mut pending = Pending::default();
        let mut i = 0;
        while i < n {
            let t = src.toks[i];
            if t.kind == TokKind::Punct {
                match t.text {
                    "}" => {
                        self.close_body(i);
                        pending = Pending::default();
                        i += 1;
                        continue;
                    }
                    "@" if !self.in_enum_phase() => {
                        match jvm::parse_ann(src, i) {
                            Some(a) => {
                                pending.start.get_or_insert(i);
                                pending.anns.push(a);
                                i = a.end.max(i + 1);
                            }
                            None => i += 1,
                        }
                        continue;
                    }
                    _ => {}
                }
            }
            if self.in_enum_phase() {
                i = self.enum_entries(i);
                pending = Pending::default();
                continue;
            }
            match (t.kind, t.text) {
                (TokKind::Ident, w) if is_modifier(w) && src.ident(i + 1).is_some() => {
                    pending.start.get_or_insert(i);
                    match w {
                        "const" => pending.is_const = true,
                        "enum" => pending.is_enum = true,
                        "companion" => pending.is_companion = true,
                        _ => {}
                    }
                    i += 1;
                }
                (TokKind::Ident, "fun") if src.kw(i + 1, "interface") => {
                    pending.start.get_or_insert(i);
                    i += 1;
                }
                (TokKind::Ident, "package") => {
                    i = self.package(i);
                    pending = Pending::default();
                }
                (TokKind::Ident, "import") => {
                    i = self.import(i);
                    pending = Pending::default();
                }
                (TokKind::Ident, "class" | "interface" | "object") => {
                    i = self.type_decl(i, std::mem::take(&mut pending));
                }
                (TokKind::Ident, "fun") => {
                    i = self.function(i, std::mem::take(&mut pending));
                }
                (TokKind::Ident, "val" | "var") => {
                    i = self.property(i, std::mem::take(&mut pending));
                }
                (TokKind::Ident, "typealias") => {
                    i = self.typealias(i, std::mem::take(&mut pending));
                }
                (TokKind::Ident, "constructor") if !self.stack.is_empty() => {
                    i = self.secondary_ctor(i, std::mem::take(&mut pending));
                }
                (TokKind::Punct, "{") => {
                    i = src.close_or_end(i) + 1;
                    pending = Pending::default();
                }
                (TokKind::Punct, "=") => {
                    // A getter/setter body `get() = …` or a script expression.
                    i = self.expr_end(i + 1);
                    pending = Pending::default();
                }
                _ => {
                    i += 1;
                    pending = Pending::default();
                }
            }
        }
    }

    fn doc(&self, pending: &Pending, kw: usize) -> Option<u32> {
        let first = pending.start.unwrap_or(kw);
        jvm::doc_line(self.src.lx, self.src.line(first), !pending.anns.is_empty())
    }

    /// The index ending an expression starting at `i` (exclusive): a newline that does not
    /// continue it, or an unmatched closer / `;`.
    fn expr_end(&self, i: usize) -> usize {
        self.src
            .expr_end(i, usize::MAX, |k| !continues(self.src, k))
    }

    /// The end of a declaration header starting at `i`: the index of its body `{`, of `=`, or
    /// of the first token after it. Parentheses and brackets are skipped whole.
    fn header_end(&self, i: usize) -> usize {
        let src = self.src;
        let mut k = i;
        while k < src.len() {
            let t = src.toks[k];
            if t.kind == TokKind::Punct && matches!(t.text, "{" | "=" | "}" | ";" | ")" | "]") {
                return k;
            }
            // A new line that does not continue the header ends it (`{` on its own line was
            // taken as the body above).
            if t.nl_before && k > 0 && !continues(src, k) && !matches!(t.text, "where" | "<") {
                return k;
            }
            if src.is_opener(k) {
                k = src.close_or_end(k) + 1;
                continue;
            }
            if t.kind == TokKind::Punct && t.text == "<" {
                k = src.skip_generics(k).max(k + 1);
                continue;
            }
            // The next declaration on the same line (`class A; class B` is split by `;`).
            if k > i && t.kind == TokKind::Ident && matches!(t.text, "fun" | "val" | "var") {
                return k;
            }
            k += 1;
        }
        src.len()
    }

    /// `class`/`interface`/`object` at `kw`; returns the index after the header (the body,
    /// when there is one, is walked as members).
    fn type_decl(&mut self, kw: usize, pending: Pending<'a>) -> usize {
        let src = self.src;
        let word = src.toks[kw].text;
        // `object : Foo { … }` is an expression.
        let (name, name_at) = match src.ident(kw + 1) {
            Some(n) if !(word == "object" && n == "constructor") => (n, kw + 1),
            _ if word == "object" && pending.is_companion => ("Companion", kw),
            _ => {
                let e = self.expr_end(kw + 1);
                return e.max(kw + 1);
            }
        };
        let kind = if pending.is_enum {
            SymbolKind::Enum
        } else if word == "interface" {
            SymbolKind::Interface
        } else {
            SymbolKind::Class
        };
        let mut j = if name_at == kw { kw + 1 } else { name_at + 1 };
        j = src.skip_generics(j);
        // `class X @Inject private constructor(…)`.
        loop {
            if src.is(j, "@") {
                j = jvm::parse_ann(src, j).map_or(j + 1, |a| a.end.max(j + 1));
            } else if src
                .ident(j)
                .is_some_and(|w| is_modifier(w) || w == "constructor")
                && !src.toks[j].nl_before
            {
                j += 1;
            } else {
                break;
            }
        }
        let params = if src.is(j, "(") {
            let close = src.close_or_end(j);
            let p = Some((j + 1, close));
            j = close + 1;
            p
        } else {
            None
        };
        let mut supers = Vec::new();
        if src.is(j, ":") {
            let end = self.header_end(j + 1);
            for (a, b) in src.split_commas(j + 1, end) {
                if let Some((prev, last, _)) = src.type_path(a, b) {
                    supers.push((prev, last));
                }
            }
            j = end;
        } else {
            j = self.header_end(j);
        }
        let line = src.line(name_at);
        let doc = self.doc(&pending, kw);
        let body = src.is(j, "{").then(|| (j, src.close_or_end(j)));
        let end_line = body.map_or(src.line(j.saturating_sub(1).max(kw)), |(_, c)| src.line(c));
        let (parent, container) = self.container();
        let decl = TypeDecl {
            name,
            line,
            kind,
            anns: pending.anns,
            supers,
            span: (kw, body.map_or(j.saturating_sub(1).max(kw), |(_, c)| c)),
            parent,
            companion: pending.is_companion,
        };
        let (sym, ty) = self.out.push_type(decl, end_line, doc, container);
        if let Some((a, b)) = params {
            self.ctor_properties(a, b, name);
        }
        match body {
            Some((open, close)) => {
                self.stack.push(Frame {
                    ty,
                    sym,
                    close,
                    enum_phase: kind == SymbolKind::Enum,
                });
                open + 1
            }
            None => j.max(kw + 1),
        }
    }

    /// `val`/`var` parameters of a primary constructor become fields of `class`.
    fn ctor_properties(&mut self, a: usize, b: usize, class: &str) {
        let src = self.src;
        for (x, y) in src.split_commas(a, b) {
            let mut k = x;
            let mut annotated = false;
            while k < y {
                if src.is(k, "@") {
                    annotated = true;
                    k = jvm::parse_ann(src, k).map_or(k + 1, |an| an.end.max(k + 1));
                } else if src.ident(k).is_some_and(is_modifier) {
                    k += 1;
                } else {
                    break;
                }
            }
            if !(src.kw(k, "val") || src.kw(k, "var")) {
                continue;
            }
            let Some(name) = src.ident(k + 1) else {
                continue;
            };
            let line = src.line(k + 1);
            let doc = jvm::doc_line(src.lx, src.line(x), annotated);
            self.out.facts.push_symbol(
                name,
                SymbolKind::Field,
                (line, src.line(y - 1)),
                doc,
                Some(class.to_string()),
            );
        }
    }

    /// The name of a function or property after its keyword: skips type parameters and an
    /// extension receiver (`fun <T> List<T>.second()`, `val String.slug`). Returns the name's
    /// index.
    fn decl_name(&self, kw: usize) -> Option<usize> {
        let src = self.src;
        let mut k = src.skip_generics(kw + 1);
        let mut last = None;
        for _ in 0..16 {
            if src.is(k, "(") && last.is_some() {
                // The receiver was a function type or the name is followed by parameters.
                return last;
            }
            src.ident(k)?;
            last = Some(k);
            k = src.skip_generics(k + 1);
            if src.is(k, "?") {
                k += 1;
            }
            if src.is(k, ".") || src.is(k, "?.") {
                k += 1;
                continue;
            }
            return last;
        }
        last
    }

    fn function(&mut self, kw: usize, pending: Pending<'a>) -> usize {
        let src = self.src;
        let Some(name_at) = self
            .decl_name(kw)
            .filter(|&k| src.is(k + 1, "(") || src.is(k + 1, "<"))
        else {
            // `fun(x: Int) = …`: an anonymous function.
            return self.expr_end(kw + 1).max(kw + 1);
        };
        let name = src.toks[name_at].text;
        let open = src.skip_generics(name_at + 1);
        let after_params = if src.is(open, "(") {
            src.close_or_end(open) + 1
        } else {
            open
        };
        let e = self.header_end(after_params);
        let (end_line, next) = if src.is(e, "{") {
            let c = src.close_or_end(e);
            (src.line(c), c + 1)
        } else if src.is(e, "=") {
            let x = self.expr_end(e + 1);
            (src.line(x.saturating_sub(1)), x)
        } else {
            (src.line(e.saturating_sub(1)), e)
        };
        let (owner, container) = self.container();
        let kind = if owner.is_some() {
            SymbolKind::Method
        } else {
            SymbolKind::Function
        };
        let line = src.line(name_at);
        let doc = self.doc(&pending, kw);
        self.out
            .facts
            .push_symbol(name, kind, (line, end_line), doc, container);
        self.out.model.methods.push(MethodDecl {
            name,
            owner,
            anns: pending.anns,
        });
        next.max(kw + 1)
    }

    fn property(&mut self, kw: usize, pending: Pending<'a>) -> usize {
        let src = self.src;
        if src.is(kw + 1, "(") {
            // Destructuring `val (a, b) = …`.
            return self.expr_end(kw + 1).max(kw + 1);
        }
        let Some(name_at) = self.decl_name(kw) else {
            return kw + 1;
        };
        let name = src.toks[name_at].text;
        // Type, then `= init`, `by delegate`, or nothing.
        let mut k = name_at + 1;
        let mut init = None;
        let mut end = k;
        while k < src.len() {
            let t = src.toks[k];
            if k > name_at + 1 && t.nl_before && !continues(src, k) {
                end = k;
                break;
            }
            if t.kind == TokKind::Punct && t.text == "=" {
                let x = self.expr_end(k + 1);
                init = Some((k + 1, x));
                end = x;
                break;
            }
            if t.kind == TokKind::Ident && t.text == "by" {
                end = self.expr_end(k + 1);
                break;
            }
            if t.kind == TokKind::Punct && matches!(t.text, "{" | "}" | ")" | "]" | ";") {
                end = k;
                break;
            }
            if t.kind == TokKind::Punct && t.text == "<" {
                k = src.skip_generics(k).max(k + 1);
                continue;
            }
            if src.is_opener(k) {
                k = src.close_or_end(k) + 1;
                continue;
            }
            k += 1;
            end = k;
        }
        let (owner, container) = self.container();
        let upper = name.bytes().any(|b| b.is_ascii_uppercase())
            && name
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
        if let Some(range) = init {
            self.out
                .record_const(src, owner, name, range, src.line(name_at));
        }
        let constant = pending.is_const || (upper && src.kw(kw, "val"));
        let doc = self.doc(&pending, kw);
        let at = (name_at, end);
        self.out
            .push_value(src, at, constant, (owner, container), doc);
        end.max(kw + 1)
    }

    fn typealias(&mut self, kw: usize, pending: Pending<'a>) -> usize {
        let src = self.src;
        let Some(name) = src.ident(kw + 1) else {
            return kw + 1;
        };
        let eq = src.skip_generics(kw + 2);
        let end = if src.is(eq, "=") {
            self.expr_end(eq + 1)
        } else {
            eq
        };
        let doc = self.doc(&pending, kw);
        let lines = (src.line(kw + 1), src.line(end.saturating_sub(1)));
        self.push_member(name, SymbolKind::TypeAlias, lines, doc);
        end.max(kw + 1)
    }

    /// `constructor(…) : this(…) { … }` inside a class.
    fn secondary_ctor(&mut self, kw: usize, pending: Pending<'a>) -> usize {
        let src = self.src;
        if !src.is(kw + 1, "(") {
            return kw + 1;
        }
        let e = self.header_end(src.close_or_end(kw + 1) + 1);
        let (end_line, next) = if src.is(e, "{") {
            let c = src.close_or_end(e);
            (src.line(c), c + 1)
        } else {
            (src.line(e.saturating_sub(1)), e)
        };
        let (owner, container) = self.container();
        let Some(class) = container else {
            return next.max(kw + 1);
        };
        let doc = self.doc(&pending, kw);
        let line = src.line(kw);
        self.out.facts.push_symbol(
            &class,
            SymbolKind::Constructor,
            (line, end_line),
            doc,
            Some(class.clone()),
        );
        if let Some(o) = owner {
            let name = self.out.model.types[o].name;
            self.out.model.methods.push(MethodDecl {
                name,
                owner,
                anns: pending.anns,
            });
        }
        next.max(kw + 1)
    }

    /// Enum entries until the `;`, the members or the enum's `}`.
    fn enum_entries(&mut self, i: usize) -> usize {
        let Some(frame) = self.stack.last() else {
            return i + 1;
        };
        let (next, _) = self.out.enum_entries(self.src, frame.ty, i);
        // At the `}` the main loop closes the body.
        self.end_enum_phase();
        next
    }

    /// A dotted name starting at `at` (on one line), and the index after it.
    fn qualified(&self, at: usize) -> (Vec<&'a str>, usize) {
        self.src.dotted(at, true)
    }

    /// `package a.b.c`
    fn package(&mut self, at: usize) -> usize {
        self.out.package(self.src, at, true)
    }

    /// `import a.b.C`, `import a.b.*`, `import a.b.C as D`.
    fn import(&mut self, at: usize) -> usize {
        let src = self.src;
        let (segs, mut k) = self.qualified(at + 1);
        let mut star = false;
        if src.is(k, ".") && src.is(k + 1, "*") {
            star = true;
            k += 2;
        }
        let mut alias = None;
        if src.kw(k, "as") && !src.toks[k].nl_before {
            alias = src.ident(k + 1).map(str::to_string);
            k += 2;
        }
        if src.is(k, ";") {
            k += 1;
        }
        let Some(&last) = segs.last() else {
            return k.max(at + 1);
        };
        let names = if star {
            Vec::new()
        } else {
            vec![last.to_string()]
        };
        let renamed = match &alias {
            Some(local) if !star && local != last => vec![(last.to_string(), local.clone())],
            _ => Vec::new(),
        };
        self.out.facts.imports.push(Import {
            module: segs.join("."),
            names,
            alias,
            line: src.line(at),
            reexport: false,
            renamed,
        });
        k.max(at + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::facts::{EventRole, Value};
    use crate::index::lang::test_support::{
        self, assert_no_syms, consts, grpc_clients_owned, import_names, names, routes_borrowed, sym,
    };

    #[test]
    fn package_imports_and_declarations() {
        let src = r#"@file:JvmName("Orders")
package com.acme.orders

import com.acme.pb.OrderServiceGrpc
import com.acme.pb.*
import java.time.Instant as JInstant

/** An order. */
@Serializable
data class Order(
    val id: String,
    private val total: Long = 0,
    count: Int,
) : Entity(id), Comparable<Order> {
    override fun compareTo(other: Order): Int = id.compareTo(
        other.id
    )

    companion object {
        const val TOPIC = "orders.created"
        private val log = LoggerFactory.getLogger(Order::class.java)
        fun create(): Order = Order("x", 0, 1)
    }

    inner class Line(val sku: String)
}

sealed interface Result<out T> {
    data class Ok<T>(val value: T) : Result<T>
    object Err : Result<Nothing>
}

object Topics {
    const val ORDER_PAID = "orders.paid"
    val ORDER_SHIPPED: String = "orders.shipped"
    val lazyThing by lazy { fun inner() = 1; "x" }
}

enum class Status(val code: String) {
    NEW("new"),
    @Deprecated("no")
    PAID("paid") {
        override fun x() = 1
    },
    DONE;

    fun label() = code
}

typealias Handler<T> = (T) -> Unit

fun String.slug(): String =
    lowercase()
        .replace(" ", "-")

suspend fun <T : Comparable<T>> maxOf(
    a: T,
    b: T,
): T {
    val local = "not.a.constant.symbol"
    return if (a > b) a else b
}

val topLevel = "top.level"
private const val BASE_URL = "http://orders"
fun interface Callback { fun call() }

class Multi @Inject constructor(private val repo: Repo) {
    constructor(x: Int) : this(Repo(x)) {
        println(x)
    }
    init { val hidden = 1 }
}
"#;
        let f = extract("src/Order.kt", src);
        assert_eq!(f.package.as_deref(), Some("com.acme.orders"));
        let imps = import_names(&f);
        assert_eq!(
            imps,
            vec![
                (
                    "com.acme.pb.OrderServiceGrpc",
                    vec!["OrderServiceGrpc".to_string()],
                    None
                ),
                ("com.acme.pb", vec![], None),
                (
                    "java.time.Instant",
                    vec!["Instant".to_string()],
                    Some("JInstant")
                ),
            ]
        );
        let order = sym(&f, "Order");
        assert_eq!(
            (order.kind, order.line, order.end_line, order.doc_line),
            (SymbolKind::Class, 10, 26, Some(8))
        );
        assert_eq!(sym(&f, "id").container.as_deref(), Some("Order"));
        assert_eq!(sym(&f, "total").kind, SymbolKind::Field);
        assert_no_syms(&f, &["count"]);
        let cmp = sym(&f, "compareTo");
        assert_eq!(
            (cmp.kind, cmp.line, cmp.end_line),
            (SymbolKind::Method, 15, 17)
        );
        let companion = sym(&f, "Companion");
        assert_eq!(companion.container.as_deref(), Some("Order"));
        assert_eq!((companion.line, companion.end_line), (19, 23));
        assert_eq!(sym(&f, "TOPIC").kind, SymbolKind::Constant);
        assert_eq!(sym(&f, "TOPIC").container.as_deref(), Some("Companion"));
        assert_eq!(sym(&f, "log").kind, SymbolKind::Field);
        assert_eq!(sym(&f, "create").container.as_deref(), Some("Companion"));
        assert_eq!(sym(&f, "Line").container.as_deref(), Some("Order"));
        assert_eq!(sym(&f, "sku").container.as_deref(), Some("Line"));
        assert_eq!(sym(&f, "Result").kind, SymbolKind::Interface);
        assert_eq!(sym(&f, "Ok").container.as_deref(), Some("Result"));
        assert_eq!(sym(&f, "Err").container.as_deref(), Some("Result"));
        assert_eq!(sym(&f, "ORDER_SHIPPED").kind, SymbolKind::Constant);
        assert_eq!(sym(&f, "lazyThing").end_line, 36);
        assert_no_syms(&f, &["inner", "hidden"]);
        assert_eq!(sym(&f, "Status").kind, SymbolKind::Enum);
        let paid = sym(&f, "PAID");
        assert_eq!(
            (paid.kind, paid.line, paid.end_line, paid.doc_line),
            (SymbolKind::EnumValue, 42, 44, Some(41))
        );
        assert_eq!(sym(&f, "DONE").kind, SymbolKind::EnumValue);
        assert_eq!(sym(&f, "label").container.as_deref(), Some("Status"));
        assert_no_syms(&f, &["x"]);
        assert_eq!(sym(&f, "Handler").kind, SymbolKind::TypeAlias);
        let slug = sym(&f, "slug");
        assert_eq!(
            (
                slug.kind,
                slug.line,
                slug.end_line,
                slug.container.as_deref()
            ),
            (SymbolKind::Function, 52, 54, None)
        );
        let max = sym(&f, "maxOf");
        assert_eq!(
            (max.kind, max.line, max.end_line),
            (SymbolKind::Function, 56, 62)
        );
        assert_no_syms(&f, &["local"]);
        assert_eq!(sym(&f, "topLevel").kind, SymbolKind::Variable);
        assert_eq!(sym(&f, "BASE_URL").kind, SymbolKind::Constant);
        assert_eq!(sym(&f, "Callback").kind, SymbolKind::Interface);
        assert_eq!(sym(&f, "repo").container.as_deref(), Some("Multi"));
        let ctor = test_support::constructor(&f);
        assert_eq!(
            (ctor.name.as_str(), ctor.line, ctor.end_line),
            ("Multi", 69, 71)
        );
        assert_eq!(
            consts(&f),
            vec![
                ("Order.TOPIC", "orders.created"),
                ("Topics.ORDER_PAID", "orders.paid"),
                ("Topics.ORDER_SHIPPED", "orders.shipped"),
                ("Status.NEW", "new"),
                ("Status.PAID", "paid"),
                ("topLevel", "top.level"),
                ("BASE_URL", "http://orders"),
            ]
        );
    }

    #[test]
    fn comments_raw_strings_and_templates_are_ignored() {
        let src = r#"class Real {
    // class Fake1
    /* outer /* nested */ class Fake2 */
    val raw = """
        class Fake3 { fun no() }
        @KafkaListener(topics = ["nope"])
    """
    val tpl = "${'$'}{x} class Fake4 $raw"
    val `quoted name` = 1
    fun yes() {}
}
"#;
        let f = extract("Real.kt", src);
        assert_eq!(names(&f), vec!["Real", "raw", "tpl", "quoted name", "yes"]);
        assert_eq!(sym(&f, "raw").end_line, 7);
        assert!(f.events.is_empty());
        // A raw string is a literal binding; a template is a value with names in it.
        let c = consts(&f);
        assert!(
            c.iter()
                .any(|(n, v)| *n == "Real.raw" && v.contains("class Fake3"))
        );
        assert!(c.iter().any(|(n, v)| *n == "Real.tpl" && *v == "?"));
    }

    #[test]
    fn grpc_server_client_and_calls() {
        let src = r#"package com.acme
@GrpcService
class OrderServiceImpl(
    private val inventory: InventoryServiceGrpc.InventoryServiceBlockingStub,
) : OrderServiceGrpc.OrderServiceImplBase() {
    private val payments = PaymentServiceGrpc.newBlockingStub(channel)
    private val users: UserServiceGrpcKt.UserServiceCoroutineStub =
        UserServiceGrpcKt.UserServiceCoroutineStub(channel)
    lateinit var audit: AuditServiceGrpc.AuditServiceFutureStub

    override fun createOrder(request: CreateOrderRequest, obs: StreamObserver<Order>) {
        inventory.reserve(request)
        this.payments.withDeadlineAfter(3, TimeUnit.SECONDS).charge(request)
        audit.record(request)
        other.reserve(request)
    }

    suspend fun lookup() = users.getUser(req)
}

class Coroutine : ShippingServiceGrpcKt.ShippingServiceCoroutineImplBase() {
    override suspend fun ship(request: ShipRequest): ShipReply = ShipReply.getDefaultInstance()
}
"#;
        let f = extract("OrderServiceImpl.kt", src);
        let servers: Vec<(&str, Option<&str>)> = test_support::grpc_servers(&f)
            .into_iter()
            .map(|(s, i, _)| (s, i))
            .collect();
        assert_eq!(
            servers,
            vec![
                ("OrderService", Some("OrderServiceImpl")),
                ("ShippingService", Some("Coroutine")),
            ]
        );
        let clients = grpc_clients_owned(&f);
        assert_eq!(
            clients,
            vec![
                ("InventoryService".into(), Some("inventory".into()), 4),
                ("PaymentService".into(), Some("payments".into()), 6),
                ("UserService".into(), Some("users".into()), 8),
                ("AuditService".into(), Some("audit".into()), 9),
            ]
        );
        let calls: Vec<(String, String, u32)> = test_support::grpc_calls(&f)
            .into_iter()
            .filter_map(|(s, m, l)| Some((s?.to_string(), m.to_string(), l)))
            .collect();
        assert_eq!(
            calls,
            vec![
                ("InventoryService".into(), "reserve".into(), 12),
                ("PaymentService".into(), "charge".into(), 13),
                ("AuditService".into(), "record".into(), 14),
                ("UserService".into(), "getUser".into(), 18),
            ]
        );
        assert_eq!(sym(&f, "ship").container.as_deref(), Some("Coroutine"));
    }

    #[test]
    fn kafka_and_spring_value() {
        let src = r#"package com.acme
class Events(
    private val kafkaTemplate: KafkaTemplate<String, String>,
    @Value("\${app.kafka.out:orders.out}") private val outTopic: String,
) {
    @Value("\${app.kafka.audit}")
    lateinit var auditTopic: String

    companion object {
        const val PAID = "orders.paid"
    }

    @KafkaListener(topics = ["orders.created", "\${app.in:orders.in}"], groupId = "g")
    fun a(m: String) {}

    @KafkaListener(topics = [Topics.ORDER_CREATED])
    fun b(m: String) {}

    fun send(o: Order) {
        kafkaTemplate.send("orders.sent", o.id, o)
        kafkaTemplate.send(PAID, o)
        kafkaTemplate.send(outTopic, o)
        kafkaTemplate.send(auditTopic, o)
        kafkaTemplate.send("orders.$region", o)
        producer.send(ProducerRecord<String, String>("orders.record", "k", "v"))
        consumer.subscribe(listOf("orders.x"))
    }
}
"#;
        let f = extract("Events.kt", src);
        use EventRole::*;
        let got: Vec<(EventRole, Value, &str)> = f
            .events
            .iter()
            .map(|e| (e.role, e.topic.clone(), e.via.as_str()))
            .collect();
        let lit = |s: &str| Value::lit(s);
        assert_eq!(
            got,
            vec![
                (Consumer, lit("orders.created"), "@KafkaListener"),
                (
                    Consumer,
                    Value::env("app.in", Some("orders.in".into())),
                    "@KafkaListener"
                ),
                (
                    Consumer,
                    Value::reference("Topics.ORDER_CREATED"),
                    "@KafkaListener"
                ),
                (Producer, lit("orders.sent"), "KafkaTemplate"),
                (Producer, Value::reference("Events.PAID"), "KafkaTemplate"),
                (
                    Producer,
                    Value::env("app.kafka.out", Some("orders.out".into())),
                    "KafkaTemplate"
                ),
                (
                    Producer,
                    Value::env("app.kafka.audit", None),
                    "KafkaTemplate"
                ),
                (Producer, lit("orders.record"), "kafka-clients"),
                (Consumer, lit("orders.x"), "kafka-clients"),
            ]
        );
        assert_eq!(
            consts(&f),
            vec![
                ("Events.PAID", "orders.paid"),
                ("Events.outTopic", "orders.out"),
                // A property with no default binds the field to the property itself.
                ("Events.auditTopic", "?")
            ]
        );
    }

    #[test]
    fn spring_static_resource_handlers_are_routes() {
        let src = "class WebConfig : WebMvcConfigurer {\n  override fun addResourceHandlers(registry: ResourceHandlerRegistry) {\n    registry.addResourceHandler(\"/static/**\").addResourceLocations(\"classpath:/static/\")\n  }\n}\n";
        let f = extract("WebConfig.kt", src);
        let routes: Vec<(&str, &str, u32)> = routes_borrowed(&f)
            .into_iter()
            .map(|(m, p, _, l)| (m, p, l))
            .collect();
        assert_eq!(routes, vec![("GET", "/static/**", 3)]);
    }

    #[test]
    fn spring_routes_and_http_calls() {
        let src = r#"@RestController
@RequestMapping("/orders")
class OrderController(private val restTemplate: RestTemplate, private val client: HttpClient) {
    @GetMapping("/{id}")
    suspend fun get(@PathVariable id: String): Order = TODO()

    @PostMapping(value = ["/a", "/b"])
    fun create(@RequestBody o: Order) {}

    @RequestMapping(path = ["/x"], method = [RequestMethod.PUT])
    fun put() {}

    fun call(base: String, id: String) {
        restTemplate.getForObject("$base/users/${id}", User::class.java)
        restTemplate.getForObject<User>("http://users/users/$id")
        client.get("http://inventory/stock/$id")
        webClient.post().uri("/payments").retrieve()
        webClient.delete().uri { it.path("/payments/{id}").build(id) }.retrieve()
    }
}

@FeignClient(name = "users")
interface UsersClient {
    @GetMapping("/users/{id}")
    fun user(@PathVariable id: String): User
}
"#;
        let f = extract("OrderController.kt", src);
        let routes: Vec<(String, String, Option<String>)> = test_support::routes(&f)
            .into_iter()
            .map(|(m, p, h, _)| (m, p, h))
            .collect();
        let r = |m: &str, p: &str, h: &str| (m.to_string(), p.to_string(), Some(h.to_string()));
        assert_eq!(
            routes,
            vec![
                r("GET", "/orders/{id}", "get"),
                r("POST", "/orders/a", "create"),
                r("POST", "/orders/b", "create"),
                r("PUT", "/orders/x", "put"),
            ]
        );
        let calls: Vec<(Option<String>, String)> = test_support::http_calls(&f)
            .into_iter()
            .map(|(m, u, _)| (m, u))
            .collect();
        let c = |m: &str, p: &str| (Some(m.to_string()), p.to_string());
        // Declared (Feign) calls first, then client calls in file order.
        assert_eq!(
            calls,
            vec![
                c("GET", "/users/{}"),
                // Client calls as the evaluator reads them (`base`, `id` are parameters).
                c("GET", "{}/users/{}"),
                c("GET", "http://users/users/{}"),
                c("GET", "http://inventory/stock/{}"),
                c("POST", "/payments"),
                c("DELETE", "/payments/{id}"),
            ]
        );
    }

    #[test]
    fn stray_closers_and_a_body_less_class_leave_the_next_declarations_whole() {
        let f = extract("x.kt", "}}} class B { fun ok() {} }");
        assert_eq!(sym(&f, "ok").container.as_deref(), Some("B"));
        // A body-less class followed by a script block on the next line.
        let f = extract(
            "x.kts",
            "class App\nplugins { id(\"x\") }\nfun after() {}\n",
        );
        assert_eq!(sym(&f, "App").end_line, 1);
        assert_eq!(sym(&f, "after").container, None);
    }
}

#[cfg(test)]
mod env_fallback_tests {
    use super::*;
    use crate::index::facts::{EventRole, Value};
    use crate::index::lang::test_support::{bindings, env, events_shown, reference, topics};

    #[test]
    fn a_topic_from_getenv_with_an_elvis_default() {
        let src = r#"package x
class Publisher(private val kafkaTemplate: KafkaTemplate<String, String>) {
    private val topic = System.getenv("INVOICES_TOPIC") ?: "invoices"
    fun publish() { kafkaTemplate.send(topic, "x") }
    fun again() { kafkaTemplate.send(System.getenv("REFUNDS_TOPIC") ?: "refunds", "x") }
    fun later(name: String) { kafkaTemplate.send(name, "x") }
}
"#;
        let f = extract("Publisher.kt", src);
        assert_eq!(
            bindings(&f),
            vec![("Publisher.topic", env("INVOICES_TOPIC", Some("invoices")))]
        );
        assert_eq!(
            topics(&f),
            vec![
                // The field, resolved by the graph against the binding above.
                (EventRole::Producer, reference("topic"), 4),
                (
                    EventRole::Producer,
                    env("REFUNDS_TOPIC", Some("refunds")),
                    5
                ),
                // A parameter: kept, so the site is listed as unresolved.
                (EventRole::Producer, Value::dynamic(), 6),
            ]
        );
    }

    #[test]
    fn spring_cloud_stream_functional_beans_in_kotlin() {
        let src = r#"package com.acme
@Configuration
class Streams(private val streamBridge: StreamBridge) {
    @Bean
    fun orders(): Consumer<Order> = Consumer { }
    @Bean fun audit() = Function<Order, Audit> { it.audit() }
    @Bean fun mapper(): ObjectMapper = ObjectMapper()
    fun send(o: Order) = streamBridge.send("shipments-out-0", o)
}
"#;
        use EventRole::{Consumer, Producer};
        let d = |b: &str| format!("{{config spring.cloud.stream.bindings.{b}.destination}}");
        let bean = super::jvm::STREAM_BEAN_VIA;
        assert_eq!(
            events_shown(&extract("Streams.kt", src)),
            vec![
                (Consumer, d("orders-in-0"), bean, 5),
                (Consumer, d("audit-in-0"), bean, 6),
                (Producer, d("audit-out-0"), bean, 6),
                (Producer, d("shipments-out-0"), "spring-cloud-stream", 8),
            ]
        );
    }

    #[test]
    fn spring_amqp_exchanges_in_kotlin() {
        let src = r#"package shop
class RabbitConfig {
    companion object { const val EXCHANGE = "orders-exchange" }
    @Bean
    fun exchange(): TopicExchange = TopicExchange(EXCHANGE)
    @Bean
    fun binding(queue: Queue, exchange: TopicExchange): Binding =
        BindingBuilder.bind(queue).to(exchange).with("orders")
    fun send(rabbitTemplate: RabbitTemplate, o: Order) {
        rabbitTemplate.convertAndSend(EXCHANGE, "orders", o)
    }
    @RabbitListener(bindings = [QueueBinding(value = Queue("q"), exchange = Exchange("shop"), key = ["k"])])
    fun on(o: Order) {}
}
"#;
        let ex = crate::index::lang::common::AMQP_EXCHANGE_VIA;
        let f = extract("RabbitConfig.kt", src);
        let got = events_shown(&f);
        assert_eq!(
            got,
            vec![
                (
                    EventRole::Consumer,
                    "{RabbitConfig.EXCHANGE}".to_string(),
                    ex,
                    8
                ),
                (
                    EventRole::Producer,
                    "orders".to_string(),
                    "RabbitTemplate",
                    10
                ),
                // Read as written; the graph resolves the name.
                (EventRole::Producer, "{EXCHANGE}".to_string(), ex, 10),
                (EventRole::Consumer, "shop".to_string(), ex, 12),
            ]
        );
    }
}
