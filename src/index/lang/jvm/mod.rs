//! What the JVM-family extractors (Java, Kotlin, Scala) share: a token stream over the masked
//! code with bracket pairs, annotation parsing, a file-local table of string constants, and
//! the framework recognisers.
//!
//! Each language parser walks the tokens once to find its declarations and fills a [`Model`]
//! (types with their annotations and supertypes, methods with their annotations). [`recognize`]
//! then reads that model and makes a few linear passes over the tokens to find what frameworks
//! say: gRPC servers (`*Grpc.*ImplBase`, `@GrpcService`, ScalaPB) and stubs with the calls made
//! on them, Spring Kafka and kafka-clients producers and consumers, Spring MVC / JAX-RS /
//! Micronaut routes, Feign / HTTP-interface / Retrofit declared calls, and RestTemplate,
//! WebClient, `java.net.http`, OkHttp, Apache and Ktor client calls. Nothing here allocates per
//! line or recurses on input, and every lookup is a hash map or a binary search.
//!
//! The files: this one holds the token view ([`Src`]), annotations and the declaration model;
//! `consts.rs` the string constants; `recognize.rs` the entry point [`recognize`] with the
//! bindings every recogniser reads; `grpc.rs`, `kafka.rs`, `routes.rs` and `clients.rs` one
//! family of framework facts each.

mod amqp;
mod clients;
mod consts;
mod functional;
mod grpc;
mod kafka;
mod ktor;
mod pubsub;
mod recognize;
mod routes;
pub mod walk;

pub use consts::Consts;
pub use pubsub::STREAM_BEAN_VIA;
pub use recognize::recognize;
pub use walk::{Frame, Walk};

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use super::bind::{Assignments, StmtStyle};
use super::common::{http_path_of, looks_like_http_path, looks_like_topic, looks_like_url};
use super::value::{ExprRules, eval};
use crate::index::facts::{
    Binding, EventRole, FileFacts, GrpcFact, HttpFact, Part, SymbolKind, Value,
};
use crate::index::lex::Lexed;

/// Which JVM language a file is written in (a few forms differ: `new`, type annotations,
/// string templates, generic brackets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Java,
    Kotlin,
    Scala,
}

pub use super::tokens::TokKind;
use super::tokens::{Rules, Tokens};

/// A lexed JVM file as the shared token view ([`Tokens`], with the JVM operator set) plus
/// the dialect, which decides the few forms that differ (`new`, string templates, generics).
/// It dereferences to the tokens, so `src.is(i, "(")` and `src.toks[i]` read them directly.
pub struct Src<'a> {
    pub t: Tokens<'a, 'a>,
    pub dialect: Dialect,
}

impl<'a> std::ops::Deref for Src<'a> {
    type Target = Tokens<'a, 'a>;
    fn deref(&self) -> &Tokens<'a, 'a> {
        &self.t
    }
}

impl<'a> Src<'a> {
    /// Tokenizes `lx.code` and pairs its brackets.
    pub fn new(lx: &'a Lexed<'a>, dialect: Dialect) -> Src<'a> {
        Src {
            t: Tokens::new(lx, &Rules::JVM),
            dialect,
        }
    }

    /// The literal at token `i` with its value, if the token is a string literal.
    fn lit(&self, i: usize) -> Option<Lit<'a>> {
        let t = self.toks.get(i).filter(|t| t.kind == TokKind::Str)?;
        let s = self.lx.strings.get(t.lit as usize)?;
        let templated = match self.dialect {
            Dialect::Java => false,
            Dialect::Kotlin => has_template(s.raw),
            // Scala interpolators are an identifier glued to the quote (`s"…"`, `f"…"`).
            Dialect::Scala => {
                i > 0
                    && self.toks[i - 1].kind == TokKind::Ident
                    && self.toks[i - 1].end == t.start
                    && s.raw.contains('$')
            }
        };
        Some(Lit {
            value: s.value(),
            templated,
        })
    }

    /// The value of a string literal at `i` that is not a template.
    fn plain_str(&self, i: usize) -> Option<Cow<'a, str>> {
        self.lit(i).filter(|l| !l.templated).map(|l| l.value)
    }

    /// Skips a generic argument list `<…>` (or Scala `[…]`) starting at `i`; returns the index
    /// after it, or `i` when there is none. Bounded so a stray `<` cannot scan the file.
    pub fn skip_generics(&self, i: usize) -> usize {
        if self.dialect == Dialect::Scala && self.is(i, "[") {
            return self.close_or_end(i) + 1;
        }
        if !self.is(i, "<") {
            return i;
        }
        let mut depth = 0usize;
        let mut j = i;
        while j < self.toks.len() && j - i < 64 {
            let t = &self.toks[j];
            if t.kind == TokKind::Punct {
                match t.text {
                    "<" => depth += 1,
                    ">" => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    "?" | "," | "." | "[" | "]" | "&" | "*" | "@" | ":" => {}
                    _ => return i,
                }
            }
            j += 1;
        }
        i
    }

    /// The first argument of the call whose `(` is token `open` (stops at the first top-level
    /// comma, so a long argument list costs nothing more).
    fn first_arg(&self, open: usize) -> Option<(usize, usize)> {
        let close = self.close_or_end(open);
        let mut j = open + 1;
        while j < close {
            if self.is_opener(j) {
                j = self.close_or_end(j) + 1;
                continue;
            }
            if self.is(j, ",") {
                break;
            }
            j += 1;
        }
        let end = j.min(close);
        (end > open + 1).then_some((open + 1, end))
    }

    /// Splits `from..to` at top-level commas (brackets skipped whole); empty parts dropped.
    pub fn split_commas(&self, from: usize, to: usize) -> Vec<(usize, usize)> {
        self.split_at(from, to, ",")
    }

    /// A dotted name starting at `at` (`a.b.C`) and the index after it; with `one_line`, a
    /// line break ends it (Kotlin, whose `package` and `import` have no `;`).
    pub fn dotted(&self, at: usize, one_line: bool) -> (Vec<&'a str>, usize) {
        let mut segs = Vec::new();
        let mut k = at;
        while let Some(id) = self.ident(k) {
            if one_line && k > at && self.toks[k].nl_before {
                break;
            }
            segs.push(id);
            k += 1;
            if self.is(k, ".")
                && self.ident(k + 1).is_some()
                && !(one_line && self.toks[k].nl_before)
            {
                k += 1;
            } else {
                break;
            }
        }
        (segs, k)
    }

    /// The type named from the identifier at `j` (`a.b.C`, its dots before `limit`): the last
    /// segment of its qualifier and its own (`(Some("b"), "C")`), and the index of the last.
    pub fn type_path(&self, j: usize, limit: usize) -> Option<(Option<&'a str>, &'a str, usize)> {
        let mut last = self.ident(j)?;
        let mut prev = None;
        let mut k = j;
        while k + 2 < limit
            && self.is(k + 1, ".")
            && let Some(next) = self.ident(k + 2)
        {
            prev = Some(last);
            last = next;
            k += 2;
        }
        Some((prev, last, k))
    }

    /// The end (exclusive) of an expression starting at `i`: the first token after `i` that
    /// starts a line and for which `line_ends` holds, or an unmatched closer or `;`, or
    /// `limit` (at most the token count). Brackets are skipped whole.
    pub fn expr_end(&self, i: usize, limit: usize, line_ends: impl Fn(usize) -> bool) -> usize {
        let limit = limit.min(self.len());
        let mut k = i;
        while k < limit {
            let t = self.toks[k];
            if k > i && t.nl_before && line_ends(k) {
                return k;
            }
            if self.is_opener(k) {
                k = self.close_or_end(k) + 1;
                continue;
            }
            if t.kind == TokKind::Punct && matches!(t.text, ")" | "]" | "}" | ";") {
                return k;
            }
            k += 1;
        }
        limit
    }
}

/// A string literal as an extractor sees it.
struct Lit<'a> {
    /// The value, escapes processed.
    value: Cow<'a, str>,
    /// True for a Kotlin/Scala template with substitutions (`"$base/x"`, `s"…$id"`).
    templated: bool,
}

/// True when a Kotlin string contains a `$name` or `${…}` substitution (an escaped `\$` is
/// a dollar sign).
fn has_template(raw: &str) -> bool {
    let b = raw.as_bytes();
    (0..b.len()).any(|i| {
        b[i] == b'$'
            && (i == 0 || b[i - 1] != b'\\')
            && b.get(i + 1)
                .is_some_and(|&c| c == b'{' || c.is_ascii_alphabetic() || c == b'_')
    })
}

/// An annotation (`@Name`, `@a.b.Name(args)`, Kotlin `@field:Name(args)`).
#[derive(Debug, Clone, Copy)]
pub struct Ann<'a> {
    /// The last segment of the name (`GetMapping`).
    pub name: &'a str,
    pub line: u32,
    /// Token index of the `@`.
    pub at: usize,
    /// Token range inside the parentheses, if any.
    pub args: Option<(usize, usize)>,
    /// Token index just past the annotation.
    pub end: usize,
}

/// Parses the annotation whose `@` is token `i`.
pub fn parse_ann<'a>(src: &Src<'a>, i: usize) -> Option<Ann<'a>> {
    if !src.is(i, "@") {
        return None;
    }
    let mut j = i + 1;
    // Kotlin use-site targets: `@field:Value(…)`, `@get:JsonProperty`, `@file:JvmName(…)`.
    if src.ident(j).is_some() && src.is(j + 1, ":") && src.ident(j + 2).is_some() {
        j += 2;
    }
    let mut name = src.ident(j)?;
    j += 1;
    while src.is(j, ".") {
        match src.ident(j + 1) {
            Some(next) => {
                name = next;
                j += 2;
            }
            None => break,
        }
    }
    let mut args = None;
    if src.is(j, "(") {
        let c = src.close_or_end(j);
        args = Some((j + 1, c));
        j = c + 1;
    }
    Some(Ann {
        name,
        line: src.toks[i].line,
        at: i,
        args,
        end: j.min(src.len()),
    })
}

/// The token range of an annotation attribute: `key = …` for one of `keys`, or the positional
/// argument when `keys` contains `"value"`.
fn ann_attr(src: &Src, ann: &Ann, keys: &[&str]) -> Option<(usize, usize)> {
    let (a, b) = ann.args?;
    for (x, y) in src.split_commas(a, b) {
        let named = src.ident(x).is_some() && src.is(x + 1, "=");
        if named {
            if src.ident(x).is_some_and(|k| keys.contains(&k)) && x + 2 < y {
                return Some((x + 2, y));
            }
        } else if keys.contains(&"value") {
            return Some((x, y));
        }
    }
    None
}

/// The elements of an array-valued expression: `{a, b}`, `[a, b]`, `arrayOf(a, b)`,
/// `List.of(a)`, `listOf(a)`, `Arrays.asList(a, b)`, `Collections.singletonList(a)`, `Seq(a)`;
/// anything else is one element.
fn elements(src: &Src, (a, b): (usize, usize)) -> Vec<(usize, usize)> {
    if b > a && (src.is(a, "{") || src.is(a, "[")) && src.close_or_end(a) + 1 == b {
        return src.split_commas(a + 1, b - 1);
    }
    if let Some((x, y)) = builder_args(src, (a, b)) {
        return src.split_commas(x, y);
    }
    vec![(a, b)]
}

/// The argument range of a collection builder call spanning exactly `a..b`.
fn builder_args(src: &Src, (a, b): (usize, usize)) -> Option<(usize, usize)> {
    const BUILDERS: [&str; 14] = [
        "of",
        "asList",
        "singletonList",
        "singleton",
        "listOf",
        "setOf",
        "arrayOf",
        "mutableListOf",
        "arrayListOf",
        "mutableSetOf",
        "List",
        "Set",
        "Seq",
        "Array",
    ];
    let mut j = a;
    let mut last = None;
    while j < b {
        let name = src.ident(j)?;
        last = Some(name);
        if src.is(j + 1, ".") {
            j += 2;
        } else {
            j += 1;
            break;
        }
    }
    if !BUILDERS.contains(&last?) {
        return None;
    }
    let j = src.skip_generics(j);
    (src.is(j, "(") && src.close_or_end(j) + 1 == b).then_some((j + 1, b - 1))
}

/// A declared type (class, interface, enum, record, object, trait).
#[derive(Debug, Clone)]
pub struct TypeDecl<'a> {
    /// The simple name (`Companion` for an unnamed companion object).
    pub name: &'a str,
    /// The line of the name.
    pub line: u32,
    pub kind: SymbolKind,
    /// Annotations on the declaration (`@RestController`, `@FeignClient`, `@GrpcService`).
    pub anns: Vec<Ann<'a>>,
    /// Supertypes as `(qualifier, name)`: `OrdersGrpc.OrdersImplBase` gives
    /// `(Some("OrdersGrpc"), "OrdersImplBase")`.
    pub supers: Vec<(Option<&'a str>, &'a str)>,
    /// Token indices from the declaring keyword to the body's last token (the closing brace,
    /// the end of an indented block, or the end of the header for a body-less type): the
    /// tokens this type encloses, constructor parameters included.
    pub span: (usize, usize),
    /// The enclosing type (index in [`Model::types`]).
    pub parent: Option<usize>,
    /// A Kotlin `companion object`: its members are qualified by the enclosing class.
    pub companion: bool,
}

/// A declared method or function, with its annotations.
#[derive(Debug, Clone)]
pub struct MethodDecl<'a> {
    pub name: &'a str,
    /// The declaring type (index in [`Model::types`]); `None` at top level.
    pub owner: Option<usize>,
    /// Annotations on the method (`@GetMapping("/x")`, `@KafkaListener(…)`).
    pub anns: Vec<Ann<'a>>,
}

/// What a language parser found: the declarations the framework recognisers read.
#[derive(Debug, Default)]
pub struct Model<'a> {
    pub types: Vec<TypeDecl<'a>>,
    pub methods: Vec<MethodDecl<'a>>,
    /// Type indices in span order (filled by [`Model::index`]).
    by_span: Vec<usize>,
}

impl<'a> Model<'a> {
    /// Prepares the enclosing-type lookup; call once after parsing.
    pub fn index(&mut self) {
        self.by_span = (0..self.types.len()).collect();
        crate::order::sort_by_key(&mut self.by_span, |&t| self.types[t].span.0);
    }

    /// The innermost type whose span contains token `i`.
    pub fn enclosing(&self, i: usize) -> Option<usize> {
        let k = self.by_span.partition_point(|&t| self.types[t].span.0 < i);
        let mut cur = k.checked_sub(1).map(|k| self.by_span[k]);
        for _ in 0..64 {
            let t = cur?;
            let (o, c) = self.types[t].span;
            if o < i && i <= c {
                return Some(t);
            }
            cur = self.types[t].parent;
        }
        None
    }

    /// The name members of type `t` are qualified with (a companion object's is its class's).
    pub fn qualifier(&self, t: usize) -> &'a str {
        let ty = &self.types[t];
        match (ty.companion, ty.parent) {
            (true, Some(p)) => self.types[p].name,
            _ => ty.name,
        }
    }

    /// The qualifier names around token `i`, innermost first.
    pub fn enclosing_names(&self, i: usize) -> Vec<&'a str> {
        let mut out: Vec<&'a str> = Vec::new();
        let mut cur = self.enclosing(i);
        while let Some(t) = cur {
            let q = self.qualifier(t);
            if out.last() != Some(&q) {
                out.push(q);
            }
            cur = self.types[t].parent;
            if out.len() > 64 {
                break;
            }
        }
        out
    }
}

/// The first line of the Javadoc/KDoc or annotation block of a declaration whose first token
/// (annotation or modifier) is on `first_line`.
pub fn doc_line(lx: &Lexed, first_line: u32, annotated: bool) -> Option<u32> {
    lx.doc_comment_above(first_line)
        .or(annotated.then_some(first_line))
}

/// One step through an enum's entries (`A, B("x") { … }, C;`), shared by Java and Kotlin.
pub enum EnumStep<'a> {
    /// An entry; `next` is the index after it (and its arguments and body).
    Entry {
        name: &'a str,
        line: u32,
        end_line: u32,
        doc_line: Option<u32>,
        /// The first argument when it is a plain string literal.
        value: Option<Cow<'a, str>>,
        next: usize,
    },
    /// The `;` ending the entries was at `next - 1`: members follow.
    Done { next: usize },
    /// The enum's `}` (or the end of the tokens) is at `at`.
    Close { at: usize },
    /// Token `at` does not start an entry: members follow from there.
    Members { at: usize },
}

/// Reads the next enum entry at or after token `j` (commas and annotations skipped).
pub fn enum_step<'a>(src: &Src<'a>, mut j: usize) -> EnumStep<'a> {
    let mut first_ann: Option<u32> = None;
    loop {
        let Some(t) = src.toks.get(j) else {
            return EnumStep::Close { at: j };
        };
        if t.kind == TokKind::Punct {
            match t.text {
                "}" => return EnumStep::Close { at: j },
                ";" => return EnumStep::Done { next: j + 1 },
                "," => {
                    j += 1;
                    continue;
                }
                "@" => {
                    first_ann.get_or_insert(t.line);
                    j = parse_ann(src, j).map_or(j + 1, |a| a.end.max(j + 1));
                    continue;
                }
                _ => {}
            }
        }
        let is_entry = src.ident(j).is_some()
            && (src.is_any(j + 1, &["(", "{", ",", ";", "}"])
                || src
                    .toks
                    .get(j + 1)
                    .is_none_or(|n| n.nl_before && src.dialect != Dialect::Java));
        if !is_entry || (src.dialect != Dialect::Java && is_decl_keyword(t.text)) {
            return EnumStep::Members { at: j };
        }
        let doc_line = match first_ann {
            Some(l) => src.lx.doc_comment_above(l).or(Some(l)),
            None => src.lx.doc_comment_above(t.line),
        };
        let mut k = j + 1;
        let mut value = None;
        if src.is(k, "(") {
            let close = src.close_or_end(k);
            if let Some(&(a, b)) = src.split_commas(k + 1, close).first()
                && b == a + 1
            {
                value = src.plain_str(a);
            }
            k = close + 1;
        }
        if src.is(k, "{") {
            k = src.close_or_end(k) + 1;
        }
        return EnumStep::Entry {
            name: t.text,
            line: t.line,
            end_line: src.line(k.saturating_sub(1)),
            doc_line,
            value,
            next: k,
        };
    }
}

/// Kotlin/Scala words that start a member declaration (never an enum entry).
fn is_decl_keyword(w: &str) -> bool {
    matches!(
        w,
        "fun"
            | "val"
            | "var"
            | "class"
            | "object"
            | "interface"
            | "typealias"
            | "init"
            | "constructor"
            | "companion"
            | "def"
            | "case"
            | "override"
            | "private"
            | "protected"
            | "internal"
            | "public"
            | "abstract"
            | "open"
            | "suspend"
    )
}

/// What a JVM parser (Java, Kotlin, Scala) builds as it walks a file: the facts, the model
/// of types and members the recognisers read, and the constants. Shared so the three parsers
/// record symbols and finish the same way.
#[derive(Default)]
pub struct Parsed<'a> {
    pub facts: FileFacts,
    pub model: Model<'a>,
    pub consts: Consts,
}

impl<'a> Parsed<'a> {
    /// Records the type `decl` as a symbol (to `end_line`, with its doc line and container)
    /// and in the model; returns the symbol's and the type's index.
    pub fn push_type(
        &mut self,
        decl: TypeDecl<'a>,
        end_line: u32,
        doc: Option<u32>,
        container: Option<String>,
    ) -> (usize, usize) {
        let sym =
            self.facts
                .push_symbol(decl.name, decl.kind, (decl.line, end_line), doc, container);
        self.model.types.push(decl);
        (sym, self.model.types.len() - 1)
    }

    /// Records a Kotlin or Scala `val`/`var` whose name is token `name_at` and whose
    /// declaration ends before token `end`: a constant when `constant`, else a field of the
    /// type `owner` or a top-level variable.
    pub fn push_value(
        &mut self,
        src: &Src<'a>,
        (name_at, end): (usize, usize),
        constant: bool,
        (owner, container): (Option<usize>, Option<String>),
        doc_line: Option<u32>,
    ) {
        let kind = if constant {
            SymbolKind::Constant
        } else if owner.is_some() {
            SymbolKind::Field
        } else {
            SymbolKind::Variable
        };
        let lines = (
            src.line(name_at),
            src.end_line(end.saturating_sub(1).max(name_at)),
        );
        self.facts
            .push_symbol(src.toks[name_at].text, kind, lines, doc_line, container);
    }

    /// `package a.b.c` (the `;` optional) at `at`: records the package; returns the index
    /// after the clause. `one_line` as for [`Src::dotted`].
    pub fn package(&mut self, src: &Src<'a>, at: usize, one_line: bool) -> usize {
        let (segs, next) = src.dotted(at + 1, one_line);
        if !segs.is_empty() {
            self.facts.package = Some(segs.join("."));
        }
        if src.is(next, ";") {
            next + 1
        } else {
            next.max(at + 1)
        }
    }

    /// Records the entries of the enum at model index `ty` from token `j` (each a symbol in
    /// the enum, `A("x")` also the constant `Enum.A`); returns where reading stopped, and
    /// true when that is the enum's `}` (or the end) rather than its members.
    pub fn enum_entries(&mut self, src: &Src<'a>, ty: usize, mut j: usize) -> (usize, bool) {
        let enum_name = self.model.types[ty].name;
        loop {
            match enum_step(src, j) {
                EnumStep::Entry {
                    name,
                    line,
                    end_line,
                    doc_line,
                    value,
                    next,
                } => {
                    if let Some(v) = value {
                        let qualified = format!("{enum_name}.{name}");
                        self.consts.record(&mut self.facts, qualified, &v, line);
                    }
                    let container = Some(enum_name.to_string());
                    let lines = (line, end_line);
                    self.facts
                        .push_symbol(name, SymbolKind::EnumValue, lines, doc_line, container);
                    j = next.max(j + 1);
                }
                EnumStep::Done { next } => return (next, false),
                EnumStep::Members { at } => return (at, false),
                EnumStep::Close { at } => return (at, true),
            }
        }
    }

    /// The type at index `ty` of the model, as (index, name) of a container.
    pub fn container(&self, ty: Option<usize>) -> (Option<usize>, Option<String>) {
        (ty, ty.map(|t| self.model.types[t].name.to_string()))
    }

    /// Records the constant `name` declared in the type at model index `owner` (or at top
    /// level) when its initializer at `range` evaluates: qualified by the enclosing type
    /// (`Topics.ORDER_CREATED`), and read with that type's constants in scope.
    pub fn record_const(
        &mut self,
        src: &Src<'a>,
        owner: Option<usize>,
        name: &str,
        range: (usize, usize),
        line: u32,
    ) {
        let qualifier = owner.map(|t| self.model.qualifier(t));
        let enclosing: Vec<&str> = qualifier.into_iter().collect();
        if let Some(value) = self.consts.eval(src, range, &enclosing) {
            let qualified = match qualifier {
                Some(q) => format!("{q}.{name}"),
                None => name.to_string(),
            };
            self.consts.record(&mut self.facts, qualified, &value, line);
        }
    }

    /// Indexes the model and runs the recognisers: the file's facts.
    pub fn finish(mut self, src: &Src<'a>) -> FileFacts {
        self.model.index();
        recognize(src, &self.model, &self.consts, &mut self.facts);
        self.facts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_pair_brackets_even_when_mismatched() {
        let lx = crate::index::lex::lex(crate::index::lex::Syntax::JAVA, "a({) b} [c");
        let src = Src::new(&lx, Dialect::Java);
        // `(` is never closed properly; `{` pairs with `}`.
        assert_eq!(src.close_or_end(2), 5);
        assert_eq!(src.close_or_end(1), src.len());
        assert_eq!(src.close_or_end(6), src.len());
    }
}
