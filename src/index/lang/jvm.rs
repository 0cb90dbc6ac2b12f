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

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use super::bind::{Assignments, StmtStyle};
use super::common::{http_path_of, looks_like_http_path, looks_like_topic, looks_like_url};
use super::value::{ExprRules, eval};
use crate::index::facts::{
    Binding, EventFact, EventRole, FileFacts, GrpcFact, HttpFact, Part, SymbolKind, Value,
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

use super::tokens::{Rules, Tokens};
pub use super::tokens::{Tok, TokKind};

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

/// A Spring property placeholder `${name}` or `${name:default}` (nested defaults followed),
/// as `(name, default)`; `None` for anything else, including text around the placeholder.
pub fn spring_placeholder(s: &str) -> Option<(String, Option<String>)> {
    let inner = s.trim().strip_prefix("${")?.strip_suffix('}')?;
    if inner.contains("${") && inner.split_once(':').is_none_or(|(k, _)| k.contains('$')) {
        return None;
    }
    let (var, default) = match inner.split_once(':') {
        Some((v, d)) => (v, Some(d)),
        None => (inner, None),
    };
    if var.is_empty() || var.contains(['{', '}', ' ', '#']) {
        return None;
    }
    let mut default = default.map(str::to_string);
    // `${a:${b:orders}}`: the innermost literal default wins.
    for _ in 0..8 {
        match default.as_deref().and_then(spring_placeholder) {
            Some((_, d)) => default = d,
            None => break,
        }
    }
    if default
        .as_deref()
        .is_some_and(|d| d.contains("${") || d.contains("#{"))
    {
        default = None;
    }
    Some((var.to_string(), default))
}

/// The value a constant bound to `value` contributes: a placeholder gives its default (or
/// nothing), SpEL gives nothing, anything else itself.
fn const_value(value: &str) -> Option<String> {
    if value.contains("${") {
        return spring_placeholder(value).and_then(|(_, d)| d);
    }
    if value.contains("#{") {
        return None;
    }
    Some(value.to_string())
}

/// The topic a string literal names: a plain topic, or a Spring placeholder as an
/// environment lookup.
fn topic_of_literal(s: &str) -> Option<Value> {
    if s.contains("${") {
        return spring_placeholder(s).map(|(var, default)| Value::env(var, default));
    }
    if s.contains("#{") || !looks_like_topic(s) {
        return None;
    }
    Some(Value::lit(s.to_string()))
}

/// The string constants of one file, by qualified name (`Topics.ORDER_CREATED`, `BASE`).
#[derive(Debug, Default)]
pub struct Consts {
    values: HashMap<String, String>,
    /// Bare last segment → qualified name, `None` when several constants share it.
    by_last: HashMap<String, Option<String>>,
}

impl Consts {
    /// Records a constant and the [`Constant`] fact for it (placeholders give their default).
    pub fn record(&mut self, facts: &mut FileFacts, name: String, value: &str, line: u32) {
        let Some(value) = const_value(value) else {
            return;
        };
        let last = name.rsplit('.').next().unwrap_or(&name).to_string();
        self.by_last
            .entry(last)
            .and_modify(|q| {
                if q.as_deref() != Some(name.as_str()) {
                    *q = None;
                }
            })
            .or_insert_with(|| Some(name.clone()));
        self.values.insert(name.clone(), value.clone());
        facts.bindings.push(Binding {
            name,
            value: Value::lit(value),
            line,
        });
    }

    /// The qualified name and value a reference written `written` at a site inside the types
    /// `enclosing` (innermost first) refers to.
    pub fn resolve(&self, written: &str, enclosing: &[&str]) -> Option<(&str, &str)> {
        let get = |k: &str| {
            self.values
                .get_key_value(k)
                .map(|(k, v)| (k.as_str(), v.as_str()))
        };
        if let Some(hit) = get(written) {
            return Some(hit);
        }
        for t in enclosing {
            if let Some(hit) = get(&format!("{t}.{written}")) {
                return Some(hit);
            }
        }
        // `Outer.Topics.X` written, `Topics.X` recorded.
        let mut rest = written;
        while let Some((_, tail)) = rest.split_once('.') {
            if tail.contains('.')
                && let Some(hit) = get(tail)
            {
                return Some(hit);
            }
            rest = tail;
        }
        if !written.contains('.')
            && let Some(Some(q)) = self.by_last.get(written)
        {
            return get(q);
        }
        None
    }

    /// Evaluates a string expression: literals and constants joined by `+`.
    pub fn eval(&self, src: &Src, range: (usize, usize), enclosing: &[&str]) -> Option<String> {
        let mut out = String::new();
        for (a, b) in src.split_at(range.0, range.1, "+") {
            if b == a + 1
                && let Some(v) = src.plain_str(a)
            {
                out.push_str(&v);
                continue;
            }
            let path = ident_path(src, (a, b))?;
            out.push_str(self.resolve(&path, enclosing)?.1);
        }
        Some(out)
    }
}

/// `a.b.c` (with an optional leading `this.`) spanning exactly `a..b`, joined with dots.
fn ident_path(src: &Src, (a, b): (usize, usize)) -> Option<String> {
    let mut j = a;
    if src.kw(j, "this") && src.is(j + 1, ".") {
        j += 2;
    }
    let mut out = String::new();
    loop {
        out.push_str(src.ident(j)?);
        j += 1;
        if j == b {
            return Some(out);
        }
        if !src.is(j, ".") {
            return None;
        }
        out.push('.');
        j += 1;
    }
}

fn is_upper_snake(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_uppercase())
        && s.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
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
    /// The line of the name.
    pub line: u32,
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
            && (src.is(j + 1, "(")
                || src.is(j + 1, "{")
                || src.is(j + 1, ",")
                || src.is(j + 1, ";")
                || src.is(j + 1, "}")
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

/// What a variable is known to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held<'a> {
    KafkaTemplate,
    RestTemplate,
    Stub(&'a str),
}

const STUB_SUFFIXES: [&str; 5] = [
    "BlockingV2Stub",
    "BlockingStub",
    "FutureStub",
    "CoroutineStub",
    "Stub",
];

/// The service of a gRPC stub type `Svc…Stub` qualified by `qual` (`SvcGrpc`, `SvcGrpcKt`,
/// `ReactorSvcGrpc`).
fn stub_service<'a>(qual: &str, ty: &'a str) -> Option<&'a str> {
    let base = qual
        .strip_suffix("GrpcKt")
        .or_else(|| qual.strip_suffix("Grpc"))?;
    STUB_SUFFIXES.iter().find_map(|suf| {
        let svc = ty.strip_suffix(suf)?;
        (!svc.is_empty() && base.ends_with(svc)).then_some(svc)
    })
}

/// The service of a gRPC server base `Svc(Coroutine)ImplBase` qualified by `SvcGrpc`/`SvcGrpcKt`.
fn implbase_service<'a>(qual: Option<&str>, ty: &'a str) -> Option<&'a str> {
    let svc = ty.strip_suffix("ImplBase")?;
    let svc = svc.strip_suffix("Coroutine").unwrap_or(svc);
    if svc.is_empty() {
        return None;
    }
    let base = qual?
        .strip_suffix("GrpcKt")
        .or_else(|| qual?.strip_suffix("Grpc"))?;
    base.ends_with(svc).then_some(svc)
}

/// Everything [`recognize`] keeps while scanning one file.
struct Ctx<'s, 'a> {
    src: &'s Src<'a>,
    model: &'s Model<'a>,
    consts: &'s Consts,
    /// Simple names imported as `…XGrpc.XBlockingStub` (or `…XImplBase`) → qualifier.
    grpc_imports: HashMap<String, String>,
    /// Variables and fields by what they hold.
    held: HashMap<&'a str, Held<'a>>,
    /// `@Value("${x:y}")` fields and parameters → (property, default).
    value_bound: HashMap<&'a str, (String, Option<String>)>,
    /// Locals and fields bound once to a plain literal (`None` when bound to several).
    locals: HashMap<&'a str, Option<Cow<'a, str>>>,
    /// Variables bound once to an expression holding an HTTP path literal
    /// (`String url = base + "/orders/" + id;`) → that expression's token range.
    url_vars: HashMap<&'a str, Option<(usize, usize)>>,
    /// Every `name = value` of the file (the shared tracker), for what a name holds.
    asg: Assignments,
    /// How this dialect writes expressions, for the shared evaluator.
    rules: &'static ExprRules,
}

/// Runs every framework recogniser over a parsed file, appending to `facts`.
pub fn recognize<'a>(src: &Src<'a>, model: &Model<'a>, consts: &Consts, facts: &mut FileFacts) {
    let mut grpc_imports = HashMap::new();
    for imp in &facts.imports {
        let mut segs = imp.module.rsplit('.');
        if let (Some(last), Some(prev)) = (segs.next(), segs.next())
            && (prev.ends_with("Grpc") || prev.ends_with("GrpcKt"))
        {
            grpc_imports.insert(last.to_string(), prev.to_string());
        }
    }
    let mut cx = Ctx {
        src,
        model,
        consts,
        grpc_imports,
        held: HashMap::new(),
        value_bound: HashMap::new(),
        locals: HashMap::new(),
        url_vars: HashMap::new(),
        asg: Assignments::scan(
            src,
            if src.dialect == Dialect::Java {
                &StmtStyle::SEMICOLON
            } else {
                &StmtStyle::NEWLINE
            },
        ),
        rules: match src.dialect {
            Dialect::Java => &ExprRules::JAVA,
            Dialect::Kotlin => &ExprRules::KOTLIN,
            Dialect::Scala => &ExprRules::SCALA,
        },
    };
    cx.scan_bindings(facts);
    cx.grpc(facts);
    cx.kafka(facts);
    cx.http(facts);
    cx.asg.export(src, cx.rules, facts);
}

impl<'s, 'a> Ctx<'s, 'a> {
    /// The var a typed declaration at type token `k` names: Java `Type<…> name`, Kotlin/Scala
    /// `name: Qual.Type`.
    fn declared_var(&self, k: usize) -> Option<(usize, &'a str)> {
        let src = self.src;
        // `name: Type` / `name: Qual.Type`.
        let mut q = k;
        while q >= 2 && src.is(q - 1, ".") && src.ident(q - 2).is_some() {
            q -= 2;
        }
        if q >= 2 && src.is(q - 1, ":") && src.dialect != Dialect::Java {
            return src.ident(q - 2).map(|n| (q - 2, n));
        }
        // `Type<…> name` not followed by `(` (that would be a method returning the type).
        let mut j = src.skip_generics(k + 1);
        while src.is(j, "[") && src.is(j + 1, "]") {
            j += 2;
        }
        if src.dialect == Dialect::Java
            && let Some(n) = src.ident(j)
            && !src.is(j + 1, "(")
            && !src.is(j + 1, ".")
            && !matches!(n, "extends" | "implements" | "throws" | "instanceof")
        {
            return Some((j, n));
        }
        None
    }

    /// Finds typed declarations, `@Value` bindings and literal-bound locals in one pass.
    fn scan_bindings(&mut self, facts: &mut FileFacts) {
        let src = self.src;
        let n = src.len();
        for k in 0..n {
            let t = src.toks[k];
            if t.kind == TokKind::Punct && t.text == "@" {
                if src.kw(k + 1, "Value") || (src.is(k + 2, ":") && src.kw(k + 3, "Value")) {
                    self.value_annotation(k, facts);
                }
                continue;
            }
            if t.kind == TokKind::Punct && t.text == "=" {
                // `name = "literal"` (a field, local or Kotlin/Scala val).
                let named_arg = k >= 2 && (src.is(k - 2, "(") || src.is(k - 2, ","));
                if !named_arg
                    && let Some(name) = k.checked_sub(1).and_then(|p| src.ident(p))
                    && let Some(v) = src.plain_str(k + 1)
                    && (src.is(k + 2, ";")
                        || src.toks.get(k + 2).is_none_or(|t| t.nl_before)
                        || src.is(k + 2, ")")
                        || src.is(k + 2, "}"))
                {
                    self.locals
                        .entry(name)
                        .and_modify(|old| {
                            if old.as_deref() != Some(&*v) {
                                *old = None;
                            }
                        })
                        .or_insert(Some(v));
                }
                if !named_arg && let Some(name) = k.checked_sub(1).and_then(|p| src.ident(p)) {
                    let end = self.statement_end(k + 1);
                    let has_path = (k + 1..end.min(k + 65)).any(|j| {
                        src.lit(j).is_some_and(|l| {
                            let v = normalize_template(&l.value, l.templated);
                            v.starts_with('/') || v.contains("://") || v.starts_with("{}/")
                        })
                    });
                    if has_path && end > k + 1 {
                        let range = (k + 1, end);
                        self.url_vars
                            .entry(name)
                            .and_modify(|old| {
                                if *old != Some(range) {
                                    *old = None;
                                }
                            })
                            .or_insert(Some(range));
                    }
                }
                continue;
            }
            let Some(ty) = src.ident(k) else { continue };
            let held = match ty {
                "KafkaTemplate" | "ReactiveKafkaProducerTemplate" => Held::KafkaTemplate,
                "RestTemplate" | "TestRestTemplate" => Held::RestTemplate,
                _ => {
                    if !ty.ends_with("Stub") {
                        continue;
                    }
                    let qual = if k >= 2 && src.is(k - 1, ".") {
                        src.ident(k - 2)
                    } else {
                        self.grpc_imports.get(ty).map(String::as_str)
                    };
                    match qual.and_then(|q| stub_service(q, ty)) {
                        Some(svc) => Held::Stub(svc),
                        None => continue,
                    }
                }
            };
            if let Some((_, var)) = self.declared_var(k) {
                self.held.entry(var).or_insert(held);
            } else if src.is(src.skip_generics(k + 1), "(") {
                // A construction: `var t = new KafkaTemplate<>(pf)`, `val rest = RestTemplate()`.
                let start = if k >= 1 && src.kw(k - 1, "new") {
                    k - 1
                } else {
                    k
                };
                if let Some(var) = self.assigned_var(start) {
                    self.held.entry(var).or_insert(held);
                }
            }
        }
    }

    /// `@Value("${prop:default}") <decl>`: binds the declared name to the property, and records a
    /// constant for its default.
    fn value_annotation(&mut self, at: usize, facts: &mut FileFacts) {
        let src = self.src;
        let Some(ann) = parse_ann(src, at) else {
            return;
        };
        let Some((a, b)) = ann_attr(src, &ann, &["value"]) else {
            return;
        };
        if b != a + 1 {
            return;
        }
        let Some(v) = src.lit(a) else { return };
        let Some((var, default)) = spring_placeholder(&v.value) else {
            return;
        };
        // The declared name: skip modifiers/annotations; Kotlin `name: T`, Java `T name`.
        let mut j = ann.end;
        let mut last_ident = None;
        let mut steps = 0;
        while j < src.len() && steps < 24 {
            steps += 1;
            if src.is(j, "@") {
                j = parse_ann(src, j).map_or(j + 1, |x| x.end);
                continue;
            }
            let t = src.toks[j];
            if t.kind == TokKind::Punct {
                match t.text {
                    ":" if src.dialect != Dialect::Java => break,
                    "<" => {
                        j = src.skip_generics(j).max(j + 1);
                        continue;
                    }
                    "." | "?" | "[" | "]" => {}
                    _ => break,
                }
            } else if t.kind == TokKind::Ident {
                if matches!(t.text, "fun" | "void" | "def") {
                    return;
                }
                last_ident = Some(t.text);
            } else {
                break;
            }
            j += 1;
        }
        // A setter or method takes the value through its parameter: not a binding we can name.
        if src.is(j, "(") {
            return;
        }
        let Some(name) = last_ident else { return };
        if let Some(d) = &default {
            let qualified = match self.model.enclosing(at) {
                Some(t) => format!("{}.{}", self.model.qualifier(t), name),
                None => name.to_string(),
            };
            facts.bindings.push(Binding {
                name: qualified,
                value: Value::lit(d.clone()),
                line: ann.line,
            });
        }
        self.value_bound.insert(name, (var, default));
    }

    /// The topic an expression names (see the module docs), resolved against this file's
    /// constants so a bare `TOPIC` inside `Producer` becomes `Producer.TOPIC`.
    fn topic(&self, (a, b): (usize, usize)) -> Option<Value> {
        let src = self.src;
        if b <= a {
            return None;
        }
        if b == a + 1 && src.toks[a].kind == TokKind::Str {
            let lit = src.lit(a)?;
            if lit.templated {
                return None;
            }
            return topic_of_literal(&lit.value);
        }
        // Strip a value accessor: `Topics.ORDER_CREATED.getValue()`, `.value`, `.topic`.
        let mut end = b;
        if end >= a + 3 && src.is(end - 1, ")") && src.is(end - 2, "(") {
            end -= 2;
        }
        if end >= a + 3
            && src.is(end - 2, ".")
            && src.ident(end - 1).is_some_and(|m| {
                matches!(
                    m,
                    "value" | "getValue" | "topic" | "getTopic" | "topicName" | "getTopicName"
                )
            })
        {
            end -= 2;
        } else if end != b {
            return None;
        }
        let path = ident_path(src, (a, end))?;
        if !path.contains('.')
            && let Some((var, default)) = self.value_bound.get(path.as_str())
        {
            return Some(Value::env(var.clone(), default.clone()));
        }
        let enclosing = self.model.enclosing_names(a);
        if let Some((q, _)) = self.consts.resolve(&path, &enclosing) {
            return Some(Value::reference(q.to_string()));
        }
        if !path.contains('.')
            && let Some(Some(v)) = self.locals.get(path.as_str())
        {
            return topic_of_literal(v);
        }
        let mut segs = path.rsplit('.');
        let last = segs.next().unwrap_or("");
        let owner_is_type = segs
            .next()
            .is_some_and(|o| o.starts_with(|c: char| c.is_ascii_uppercase()));
        (is_upper_snake(last) || owner_is_type).then_some(Value::reference(path))
    }

    fn topics(&self, range: (usize, usize)) -> Vec<Value> {
        elements(self.src, range)
            .into_iter()
            .filter_map(|r| self.topic(r))
            .collect()
    }

    // ---- gRPC -------------------------------------------------------------------------------

    fn grpc(&self, facts: &mut FileFacts) {
        let src = self.src;
        // Servers from declarations.
        for ty in &self.model.types {
            let mut service: Option<&str> = None;
            for &(qual, name) in &ty.supers {
                let q = qual.or_else(|| self.grpc_imports.get(name).map(String::as_str));
                if let Some(s) = implbase_service(q, name) {
                    service = Some(s);
                    break;
                }
                // ScalaPB: `extends OrdersGrpc.Orders`; fs2-grpc: `extends OrdersFs2Grpc[F, M]`.
                if src.dialect == Dialect::Scala {
                    if let Some(q) = qual
                        && q.strip_suffix("Grpc") == Some(name)
                    {
                        service = Some(name);
                        break;
                    }
                    if let Some(s) = name.strip_suffix("Fs2Grpc").filter(|s| !s.is_empty()) {
                        service = Some(s);
                        break;
                    }
                }
            }
            let annotated = ty
                .anns
                .iter()
                .any(|a| matches!(a.name, "GrpcService" | "GRpcService"));
            if service.is_none() && annotated {
                // `@GrpcService class X extends OrdersImplBase` (nested class imported), or a
                // Quarkus/Mutiny service implementing the generated interface.
                service = ty
                    .supers
                    .iter()
                    .find_map(|&(_, n)| {
                        n.strip_suffix("ImplBase")
                            .map(|s| s.strip_suffix("Coroutine").unwrap_or(s))
                            .filter(|s| !s.is_empty())
                    })
                    .or(match ty.supers.as_slice() {
                        [(_, only)] => Some(*only),
                        _ => None,
                    });
            }
            if let Some(service) = service {
                facts.grpc.push(GrpcFact::Server {
                    service: service.to_string(),
                    impl_type: Some(ty.name.to_string()),
                    line: ty.line,
                });
            }
        }

        // Clients: constructions, then typed declarations without one.
        let mut clients: Vec<(u32, &'a str, Option<&'a str>)> = Vec::new();
        let mut constructed: HashSet<&'a str> = HashSet::new();
        let mut vars: HashMap<&'a str, &'a str> = HashMap::new();
        let n = src.len();
        for k in 0..n {
            let Some(q) = src.ident(k) else { continue };
            if !(q.ends_with("Grpc") || q.ends_with("GrpcKt")) || !src.is(k + 1, ".") {
                continue;
            }
            let Some(m) = src.ident(k + 2) else { continue };
            let base = q
                .strip_suffix("GrpcKt")
                .or_else(|| q.strip_suffix("Grpc"))
                .unwrap_or(q);
            let service = match m {
                "newBlockingStub" | "newStub" | "newFutureStub" | "newBlockingV2Stub" => Some(base),
                "stub" | "blockingStub" if src.dialect == Dialect::Scala => Some(base),
                "bindService" if src.dialect == Dialect::Scala => {
                    // ScalaPB `OrdersGrpc.bindService(new OrdersImpl, ec)`.
                    if src.is(k + 3, "(") {
                        let mut j = k + 4;
                        if src.kw(j, "new") {
                            j += 1;
                        }
                        let impl_type = src
                            .ident(j)
                            .filter(|s| s.starts_with(|c: char| c.is_ascii_uppercase()));
                        facts.grpc.push(GrpcFact::Server {
                            service: base.to_string(),
                            impl_type: impl_type.map(str::to_string),
                            line: src.toks[k].line,
                        });
                    }
                    None
                }
                _ => stub_service(q, m).filter(|_| m.ends_with("CoroutineStub")),
            };
            let Some(service) = service else { continue };
            let call = src.skip_generics(k + 3);
            if !src.is(call, "(") || service.is_empty() {
                continue;
            }
            let var = self.assigned_var(k);
            if let Some(v) = var {
                constructed.insert(v);
                vars.insert(v, service);
            }
            clients.push((src.toks[k].line, service, var));
            // `OrdersGrpc.newBlockingStub(ch).createOrder(req)`.
            let after = src.close_or_end(call) + 1;
            if let Some((mi, method)) = self.called_method(after) {
                facts.grpc.push(GrpcFact::Call {
                    service: Some(service.to_string()),
                    receiver: q.to_string(),
                    method: method.to_string(),
                    line: src.toks[mi].line,
                });
            }
        }
        // Typed declarations, in token order, that no construction already accounts for.
        let mut typed: Vec<(usize, &'a str, &'a str)> = Vec::new();
        for k in 0..n {
            let Some(ty) = src.ident(k).filter(|t| t.ends_with("Stub")) else {
                continue;
            };
            let qual = if k >= 2 && src.is(k - 1, ".") {
                src.ident(k - 2)
            } else {
                self.grpc_imports.get(ty).map(String::as_str)
            };
            let Some(svc) = qual.and_then(|q| stub_service(q, ty)) else {
                continue;
            };
            if let Some((vi, var)) = self.declared_var(k) {
                typed.push((vi, var, svc));
            }
        }
        let mut seen_typed: HashSet<&str> = HashSet::new();
        for (vi, var, svc) in typed {
            vars.entry(var).or_insert(svc);
            if !constructed.contains(var) && seen_typed.insert(var) {
                clients.push((src.toks[vi].line, svc, Some(var)));
            }
        }
        crate::order::sort_by_key(&mut clients, |c| c.0);
        for (line, service, var) in clients {
            facts.grpc.push(GrpcFact::Client {
                service: service.to_string(),
                var: var.map(str::to_string),
                line,
            });
        }
        if vars.is_empty() {
            return;
        }
        // Calls: `stub.createOrder(req)`, `this.stub.createOrder(req)`, through `with…(…)`.
        // Client variables are few: a bitmask of their lengths keeps this loop cheap.
        let lengths: u64 = vars.keys().fold(0, |m, v| m | (1u64 << v.len().min(63)));
        for k in 0..n {
            let Some(v) = src
                .ident(k)
                .filter(|v| lengths & (1u64 << v.len().min(63)) != 0)
            else {
                continue;
            };
            let Some(&svc) = vars.get(v) else { continue };
            if k >= 1 && src.is(k - 1, ".") && !(k >= 2 && src.kw(k - 2, "this")) {
                continue;
            }
            if let Some((mi, method)) = self.called_method(k + 1) {
                facts.grpc.push(GrpcFact::Call {
                    service: Some(svc.to_string()),
                    receiver: v.to_string(),
                    method: method.to_string(),
                    line: src.toks[mi].line,
                });
            }
        }
    }

    /// The RPC method called at `.m(` starting at token `i`, looking through stub
    /// configuration calls (`.withDeadlineAfter(…)`).
    fn called_method(&self, mut i: usize) -> Option<(usize, &'a str)> {
        let src = self.src;
        for _ in 0..8 {
            if !(src.is(i, ".") || src.is(i, "?.")) {
                return None;
            }
            let m = src.ident(i + 1)?;
            let open = src.skip_generics(i + 2);
            if !src.is(open, "(") {
                return None;
            }
            if m.starts_with("with") {
                i = src.close_or_end(open) + 1;
                continue;
            }
            if matches!(
                m,
                "getChannel" | "getCallOptions" | "toString" | "hashCode" | "equals" | "build"
            ) {
                return None;
            }
            // Every stub method takes a request or a response observer: a call without
            // arguments is a getter on a message (`response.getOffers()`), never an RPC.
            if src.close(open) == Some(open + 1) {
                return None;
            }
            return Some((i + 1, m));
        }
        None
    }

    /// The variable or field an expression starting at token `k` is assigned to
    /// (`this.stub = …`, `stub = …`, `Type stub = …`, `val stub: T = …`).
    fn assigned_var(&self, mut k: usize) -> Option<&'a str> {
        let src = self.src;
        while k >= 2 && src.is(k - 1, ".") && src.ident(k - 2).is_some() {
            k -= 2;
        }
        let eq = k.checked_sub(1)?;
        if !src.is(eq, "=") {
            return None;
        }
        // Kotlin/Scala `val name: Type = …`: the name after `val`/`var` in the statement.
        if src.dialect != Dialect::Java {
            let from = eq.saturating_sub(12);
            for j in (from..eq).rev() {
                if src.kw(j, "val") || src.kw(j, "var") {
                    return src.ident(j + 1);
                }
                if src.toks[j].nl_before {
                    break;
                }
            }
        }
        src.ident(eq.checked_sub(1)?)
    }

    // ---- Kafka ------------------------------------------------------------------------------

    fn kafka(&self, facts: &mut FileFacts) {
        let src = self.src;
        let n = src.len();
        fn push(facts: &mut FileFacts, role: EventRole, topic: Value, via: &str, line: u32) {
            facts.events.push(EventFact {
                role,
                topic,
                via: via.to_string(),
                line,
            });
        }
        // `@SendTo("t")` on a `@KafkaListener` method produces to `t`.
        let mut send_to: HashSet<usize> = HashSet::new();
        for m in &self.model.methods {
            if m.anns.iter().any(|a| a.name == "KafkaListener") {
                send_to.extend(m.anns.iter().filter(|a| a.name == "SendTo").map(|a| a.at));
            }
        }
        let mut in_send: HashSet<usize> = HashSet::new();
        for k in 0..n {
            let t = src.toks[k];
            if t.kind == TokKind::Punct && t.text == "@" {
                let Some(ann) = parse_ann(src, k) else {
                    continue;
                };
                match ann.name {
                    "KafkaListener" => {
                        if let Some(r) = ann_attr(src, &ann, &["topics"]) {
                            for topic in self.topics(r) {
                                push(
                                    facts,
                                    EventRole::Consumer,
                                    topic,
                                    "@KafkaListener",
                                    ann.line,
                                );
                            }
                        }
                        // `topicPartitions = [@TopicPartition(topic = "t", …)]`.
                        if let Some((a, b)) = ann.args {
                            for j in a..b.min(a + 512) {
                                if !(src.kw(j, "topic") && src.is(j + 1, "=")) {
                                    continue;
                                }
                                let mut e = j + 2;
                                while e < b
                                    && (src.toks[e].kind != TokKind::Punct || src.is(e, "."))
                                {
                                    e += 1;
                                }
                                if let Some(topic) = self.topic((j + 2, e)) {
                                    push(
                                        facts,
                                        EventRole::Consumer,
                                        topic,
                                        "@KafkaListener",
                                        src.toks[j].line,
                                    );
                                }
                            }
                        }
                    }
                    // Spring AMQP / JMS listeners: the queue or destination they consume.
                    "RabbitListener" | "JmsListener" | "SqsListener" => {
                        let keys: &[&str] = match ann.name {
                            "RabbitListener" => &["queues", "value"],
                            "JmsListener" => &["destination"],
                            _ => &["value", "queueNames"],
                        };
                        if let Some(r) = ann_attr(src, &ann, keys) {
                            for (a, b) in elements(src, r) {
                                let topic = eval(src, (a, b), self.rules, &self.asg);
                                push(
                                    facts,
                                    EventRole::Consumer,
                                    topic,
                                    ann_via(ann.name),
                                    ann.line,
                                );
                            }
                        }
                    }
                    // Spring application events: the listener method's first parameter type.
                    "EventListener" | "TransactionalEventListener" => {
                        if let Some((ev, line)) = self.listener_event(&ann) {
                            push(
                                facts,
                                EventRole::Consumer,
                                Value::lit(ev),
                                "ApplicationEvent",
                                line,
                            );
                        }
                    }
                    "SendTo" if send_to.contains(&k) => {
                        if let Some(r) = ann_attr(src, &ann, &["value"]) {
                            for topic in self.topics(r) {
                                push(facts, EventRole::Producer, topic, "@SendTo", ann.line);
                            }
                        }
                    }
                    _ => {}
                }
                continue;
            }
            if t.kind != TokKind::Ident {
                continue;
            }
            match t.text {
                "send" if k >= 2 && src.is(k - 1, ".") && src.is(k + 1, "(") => {
                    let Some(recv) = src.ident(k - 2) else {
                        continue;
                    };
                    let is_template = self.held.get(recv) == Some(&Held::KafkaTemplate)
                        || recv.to_ascii_lowercase().contains("kafkatemplate");
                    if !is_template {
                        continue;
                    }
                    let Some((a, b)) = src.first_arg(k + 1) else {
                        continue;
                    };
                    // `send(new ProducerRecord<>(…))`, `send(ProducerRecord(…))`.
                    let mut pr = a;
                    if src.kw(pr, "new") {
                        pr += 1;
                    }
                    if src.kw(pr, "ProducerRecord") {
                        in_send.insert(pr);
                        if let Some(topic) = self.record_topic(pr) {
                            push(facts, EventRole::Producer, topic, "KafkaTemplate", t.line);
                        }
                        continue;
                    }
                    if let Some(topic) = self.topic((a, b)) {
                        push(facts, EventRole::Producer, topic, "KafkaTemplate", t.line);
                    }
                }
                // Spring AMQP / JMS / STOMP templates: `convertAndSend(exchange, key, msg)`
                // names the routing key (or the exchange when the key is empty);
                // `convertAndSend(destination, msg)` the destination.
                "convertAndSend" | "convertSendAndReceive"
                    if k >= 2 && src.is(k - 1, ".") && src.is(k + 1, "(") =>
                {
                    let args = src.split_commas(k + 2, src.close_or_end(k + 1));
                    let recv = src.ident(k - 2).unwrap_or("").to_ascii_lowercase();
                    let via = if recv.contains("jms") {
                        "JmsTemplate"
                    } else if recv.contains("messaging") || recv.contains("simp") {
                        "SimpMessagingTemplate"
                    } else {
                        "RabbitTemplate"
                    };
                    let topic = match args.as_slice() {
                        [ex, key, _, ..] => {
                            let key_v = eval(src, *key, self.rules, &self.asg);
                            if key_v.as_lit().is_some_and(str::is_empty) {
                                eval(src, *ex, self.rules, &self.asg)
                            } else {
                                key_v
                            }
                        }
                        [dest, _] => eval(src, *dest, self.rules, &self.asg),
                        _ => continue,
                    };
                    push(facts, EventRole::Producer, topic, via, t.line);
                }
                // `publisher.publishEvent(new OrderCreatedEvent(…))`: a Spring application event
                // named by its type.
                "publishEvent" if k >= 2 && src.is(k - 1, ".") && src.is(k + 1, "(") => {
                    if let Some((a, b)) = src.first_arg(k + 1)
                        && let Some((ev, line)) = self.constructed_type(a, b, k)
                    {
                        push(
                            facts,
                            EventRole::Producer,
                            Value::lit(ev),
                            "ApplicationEvent",
                            line,
                        );
                    }
                }
                "ProducerRecord" if !in_send.contains(&k) => {
                    if let Some(topic) = self.record_topic(k) {
                        push(facts, EventRole::Producer, topic, "kafka-clients", t.line);
                    }
                }
                "KafkaHeaders"
                    if src.is(k + 1, ".") && src.kw(k + 2, "TOPIC") && src.is(k + 3, ",") =>
                {
                    // `MessageBuilder…setHeader(KafkaHeaders.TOPIC, "t")`.
                    let open = (0..k).rev().take(4).find(|&j| src.is(j, "("));
                    let end = open.map_or(n, |o| src.close_or_end(o));
                    if let Some(&r) = src.split_commas(k + 4, end).first()
                        && let Some(topic) = self.topic(r)
                    {
                        push(facts, EventRole::Producer, topic, "KafkaTemplate", t.line);
                    }
                }
                "subscribe" | "subscription"
                    if k >= 2 && src.is(k - 1, ".") && src.is(k + 1, "(") =>
                {
                    let Some((a, mut b)) = src.first_arg(k + 1) else {
                        continue;
                    };
                    // Scala `List("t").asJava`.
                    if b >= a + 3 && src.is(b - 2, ".") && src.kw(b - 1, "asJava") {
                        b -= 2;
                    }
                    let recv = src.ident(k - 2).unwrap_or("");
                    let consumerish = recv.to_ascii_lowercase().contains("consumer");
                    if builder_args(src, (a, b)).is_none() && !consumerish {
                        continue;
                    }
                    if src.kw(a, "Pattern") {
                        continue;
                    }
                    for topic in self.topics((a, b)) {
                        push(facts, EventRole::Consumer, topic, "kafka-clients", t.line);
                    }
                }
                _ => {}
            }
        }
        // `class X implements ApplicationListener<OrderCreated>`: X consumes the event.
        for ty in &self.model.types {
            if !ty.supers.iter().any(|(_, n)| *n == "ApplicationListener") {
                continue;
            }
            let (a, b) = ty.span;
            let header_end = (a..b.min(a + 96)).find(|&j| src.is(j, "{")).unwrap_or(b);
            if let Some(j) = (a..header_end).find(|&j| src.kw(j, "ApplicationListener"))
                && src.is(j + 1, "<")
                && let Some(ev) = src.ident(j + 2)
            {
                // The line that names the event type (`implements ApplicationListener<X>`).
                push(
                    facts,
                    EventRole::Consumer,
                    Value::lit(ev),
                    "ApplicationEvent",
                    src.line(j),
                );
            }
        }
    }

    /// The type an event argument is built from (`new X(…)`, Kotlin `X(…)`), or of the local
    /// it was assigned to before token `at`, with the line where it is built.
    fn constructed_type(&self, a: usize, b: usize, at: usize) -> Option<(&'a str, u32)> {
        self.constructed_type_in(a, b, at, 0)
    }

    /// [`Ctx::constructed_type`] `depth` assignments away from the call: a chain of locals is
    /// followed a few steps, never round a cycle (`x = y; y = x;`).
    fn constructed_type_in(
        &self,
        a: usize,
        b: usize,
        at: usize,
        depth: u8,
    ) -> Option<(&'a str, u32)> {
        let src = self.src;
        let mut j = a;
        if src.kw(j, "new") {
            j += 1;
        }
        let mut last = None;
        while let Some(id) = src.ident(j) {
            last = Some((id, j));
            if src.is(j + 1, ".") {
                j += 2;
            } else {
                break;
            }
        }
        if let Some((name, k)) = last
            && (src.is(k + 1, "(") || src.is(src.skip_generics(k + 1), "("))
            && name.starts_with(|c: char| c.is_ascii_uppercase())
        {
            return Some((name, src.line(a)));
        }
        if b == a + 1
            && depth < 4
            && let Some(name) = src.ident(a)
            && let Some(asg) = self.asg.last(name, at)
        {
            let (x, y) = asg.rhs;
            if x < y && x != a {
                return self.constructed_type_in(x, y, at, depth + 1);
            }
        }
        None
    }

    /// The event type an `@EventListener` method takes (`classes = X.class` or its first
    /// parameter's type), and the line of the method, which names it.
    fn listener_event(&self, ann: &Ann<'a>) -> Option<(&'a str, u32)> {
        let src = self.src;
        if let Some(r) = ann_attr(src, ann, &["classes", "value"]) {
            let (a, _) = *elements(src, r).first()?;
            return src.ident(a).map(|n| (n, ann.line));
        }
        // The method after the annotation: its `(`, then the first parameter.
        let mut k = ann.at + 1;
        let limit = (k + 64).min(src.len());
        let open = loop {
            if k >= limit {
                return None;
            }
            if src.is(k, "(") && src.ident(k - 1).is_some() && !src.is(k.saturating_sub(2), "@") {
                let name = k - 1;
                if !src.kw(name, ann.name) {
                    break k;
                }
            }
            k = if src.is(k, "(") {
                src.close_or_end(k) + 1
            } else {
                k + 1
            };
        };
        let (a, b) = src.first_arg(open)?;
        // Kotlin `event: OrderCreated`; Java `OrderCreated event` (annotations skipped).
        let ty = if let Some(c) = (a..b).find(|&j| src.is(j, ":")) {
            src.ident(c + 1)?
        } else {
            let idents: Vec<&str> = (a..b)
                .filter(|&j| !src.is(j.saturating_sub(1), "@") && !src.is(j.saturating_sub(1), "."))
                .filter_map(|j| src.ident(j))
                .filter(|w| *w != "final")
                .collect();
            *idents.get(idents.len().checked_sub(2)?)?
        };
        Some((ty, src.line(open.saturating_sub(1))))
    }

    /// The topic of `ProducerRecord(…)` whose name is token `k` (`new ProducerRecord<>(t, …)`,
    /// Kotlin `ProducerRecord<K, V>(t, …)`, Scala `new ProducerRecord[K, V](t, …)`).
    fn record_topic(&self, k: usize) -> Option<Value> {
        let src = self.src;
        let open = src.skip_generics(k + 1);
        if !src.is(open, "(") {
            return None;
        }
        self.topic(src.first_arg(open)?)
    }

    // ---- HTTP -------------------------------------------------------------------------------

    fn http(&self, facts: &mut FileFacts) {
        self.routes(facts);
        self.resource_handlers(facts);
        self.client_calls(facts);
    }

    /// Spring's static resources, `registry.addResourceHandler("/assets/**", "/img/**")`:
    /// each pattern is a `GET` route.
    fn resource_handlers(&self, facts: &mut FileFacts) {
        let src = self.src;
        for k in 1..src.len() {
            if src.ident(k) != Some("addResourceHandler")
                || !src.is(k - 1, ".")
                || !src.is(k + 1, "(")
            {
                continue;
            }
            let close = src.close_or_end(k + 1);
            for (a, b) in src.split_commas(k + 2, close) {
                if let Some(path) = src
                    .plain_str(a)
                    .filter(|p| b == a + 1 && p.starts_with('/'))
                {
                    facts.http.push(HttpFact::Route {
                        method: "GET".into(),
                        path: path.into_owned(),
                        handler: Some("addResourceHandler".into()),
                        line: src.toks[k].line,
                    });
                }
            }
        }
    }

    /// The string values of an annotation attribute (arrays expanded, constants resolved).
    fn ann_strings(&self, ann: &Ann, keys: &[&str]) -> Vec<String> {
        let Some(range) = ann_attr(self.src, ann, keys) else {
            return Vec::new();
        };
        let enclosing = self.model.enclosing_names(ann.at);
        elements(self.src, range)
            .into_iter()
            .filter_map(|r| self.consts.eval(self.src, r, &enclosing))
            .collect()
    }

    /// Route/call paths and verbs a method annotation declares, if it is a mapping annotation.
    fn mapping(&self, ann: &Ann) -> Option<(Vec<String>, Vec<String>)> {
        let src = self.src;
        let verb = |m: &str| m.to_ascii_uppercase();
        let (verbs, path_keys): (Vec<String>, &[&str]) = match ann.name {
            "GetMapping" | "PostMapping" | "PutMapping" | "DeleteMapping" | "PatchMapping" => (
                vec![verb(ann.name.trim_end_matches("Mapping"))],
                &["value", "path"],
            ),
            "GetExchange" | "PostExchange" | "PutExchange" | "DeleteExchange" | "PatchExchange" => {
                (
                    vec![verb(ann.name.trim_end_matches("Exchange"))],
                    &["value", "url"],
                )
            }
            "RequestMapping" | "HttpExchange" => {
                let mut verbs = Vec::new();
                if let Some(r) = ann_attr(src, ann, &["method"]) {
                    for (a, b) in elements(src, r) {
                        if let Some(last) = b
                            .checked_sub(1)
                            .filter(|&l| l >= a)
                            .and_then(|l| src.ident(l))
                        {
                            verbs.push(last.to_ascii_uppercase());
                        } else if let Some(v) = src.plain_str(a) {
                            verbs.push(v.to_ascii_uppercase());
                        }
                    }
                }
                if verbs.is_empty() {
                    verbs.push("ANY".to_string());
                }
                (verbs, &["value", "path", "url"])
            }
            // Micronaut.
            "Get" | "Post" | "Put" | "Delete" | "Patch" | "Head" | "Options" => {
                (vec![verb(ann.name)], &["value", "uri"])
            }
            _ => return None,
        };
        let mut paths = self.ann_strings(ann, path_keys);
        if paths.is_empty() {
            if ann_attr(src, ann, path_keys).is_some() {
                // A path we cannot evaluate: better no route than a wrong one.
                return None;
            }
            paths.push(String::new());
        }
        Some((verbs, paths))
    }

    fn routes(&self, facts: &mut FileFacts) {
        for m in &self.model.methods {
            let owner = m.owner.map(|o| &self.model.types[o]);
            let owner_anns: &[Ann] = owner.map_or(&[], |t| t.anns.as_slice());
            let has = |name: &str| owner_anns.iter().any(|a| a.name == name);
            // Declared clients: Feign, Spring HTTP interfaces, MicroProfile REST client.
            let client = has("FeignClient") || has("HttpExchange") || has("RegisterRestClient");
            let mut prefixes: Vec<String> = Vec::new();
            for a in owner_anns {
                match a.name {
                    "RequestMapping" | "Path" | "HttpExchange" => {
                        prefixes.extend(self.ann_strings(a, &["value", "path", "url"]));
                    }
                    // Micronaut `@Controller("/orders")` (Spring's `@Controller("x")` names a bean).
                    "Controller" => {
                        prefixes.extend(
                            self.ann_strings(a, &["value"])
                                .into_iter()
                                .filter(|p| p.starts_with('/')),
                        );
                    }
                    "FeignClient" => {
                        prefixes.extend(self.ann_strings(a, &["path"]));
                    }
                    _ => {}
                }
            }
            if prefixes.is_empty() {
                prefixes.push(String::new());
            }
            prefixes.truncate(8);
            // JAX-RS / Retrofit verbs and `@Path` on the method.
            let jaxrs_verb = m.anns.iter().find(|a| {
                matches!(
                    a.name,
                    "GET" | "POST" | "PUT" | "DELETE" | "PATCH" | "HEAD" | "OPTIONS"
                )
            });
            let mut found: Vec<(String, Vec<String>, u32)> = Vec::new();
            if let Some(v) = jaxrs_verb {
                if v.args.is_some() {
                    // Retrofit `@GET("orders/{id}")`: a declared call.
                    for p in self.ann_strings(v, &["value"]) {
                        let p = if p.starts_with('/') || p.contains("://") {
                            p
                        } else {
                            format!("/{p}")
                        };
                        if looks_like_http_path(&p)
                            && let Some(path) = http_path_of(&p)
                        {
                            facts.http.push(HttpFact::Call {
                                method: Some(v.name.to_string()),
                                url: Value::lit(path),
                                line: v.line,
                            });
                        }
                    }
                    continue;
                }
                let paths = m
                    .anns
                    .iter()
                    .find(|a| a.name == "Path")
                    .map_or_else(|| vec![String::new()], |p| self.ann_strings(p, &["value"]));
                found.push((v.name.to_string(), paths, v.line));
            }
            for a in &m.anns {
                if let Some((verbs, paths)) = self.mapping(a) {
                    for v in verbs {
                        found.push((v, paths.clone(), a.line));
                    }
                }
                if a.name == "RequestLine" {
                    // OpenFeign `@RequestLine("GET /orders/{id}")`.
                    for s in self.ann_strings(a, &["value"]) {
                        if let Some((verb, p)) = s.split_once(' ')
                            && let Some(path) = http_path_of(p.trim())
                        {
                            facts.http.push(HttpFact::Call {
                                method: Some(verb.to_ascii_uppercase()),
                                url: Value::lit(path),
                                line: a.line,
                            });
                        }
                    }
                }
            }
            for (verb, paths, line) in found {
                for prefix in &prefixes {
                    for p in &paths {
                        let path = join_paths(prefix, p);
                        if client {
                            let full = if let Some(url) = feign_url(self, owner_anns) {
                                join_paths(&url, &path)
                            } else {
                                path
                            };
                            if let Some(path) = http_path_of(&full) {
                                facts.http.push(HttpFact::Call {
                                    method: (verb != "ANY").then(|| verb.clone()),
                                    url: Value::lit(path),
                                    line,
                                });
                            }
                        } else {
                            facts.http.push(HttpFact::Route {
                                method: verb.clone(),
                                path,
                                handler: Some(m.name.to_string()),
                                line,
                            });
                        }
                    }
                }
            }
        }
    }

    /// The path of the URL argument `a..b`: literal parts concatenated with `+` (other parts
    /// become `{}`, a leading base URL variable is dropped), else the first path-like literal
    /// inside it.
    /// The URL of an HTTP client call's argument, read by the shared evaluator with the
    /// file's assignments (`restTemplate.getForObject(url, …)` with `url` a parameter is a
    /// call whose URL is run-time: kept, so the graph lists it as unresolved).
    fn url_path(&self, range: (usize, usize)) -> Option<Value> {
        let (a, b) = range;
        if a >= b {
            return None;
        }
        let src = self.src;
        // A URI builder lambda: `b -> b.path("/orders/{id}").build(id)` (Kotlin
        // `{ it.path(…) }`): the URL is the `.path(…)` arguments.
        let lambda = (src.ident(a).is_some() && src.is(a + 1, "->"))
            || src.is(a, "{")
            || (src.is(a, "(") && src.close(a).is_some_and(|c| src.is(c + 1, "->")))
            || (a..b.min(a + 64))
                .any(|j| src.is(j, ".") && src.kw(j + 1, "path") && src.is(j + 2, "("))
                && (a..b.min(a + 64)).any(|j| src.is(j, ".") && src.kw(j + 1, "build"));
        if lambda {
            let mut v = Value::default();
            for j in a..b {
                if src.is(j, ".")
                    && matches!(src.ident(j + 1), Some("path" | "pathSegment"))
                    && src.is(j + 2, "(")
                    && let Some(arg) = src.first_arg(j + 2)
                {
                    v.extend(eval(src, arg, self.rules, &self.asg));
                }
            }
            return (!v.parts.is_empty()).then_some(v);
        }
        Some(eval(src, (a, b), self.rules, &self.asg))
    }

    /// Kiota-style fluent request builders: `client.catalog().products().byProductId(id).get()`
    /// is `GET /catalog/products/{}` — each call without arguments a path segment, each
    /// `byX(arg)` a parameter, the verb last; the chain starts at a name holding a client.
    fn fluent_request(&self, verb_at: usize) -> Option<(String, Value)> {
        let src = self.src;
        let verb = src.ident(verb_at)?;
        let method = match verb {
            "get" | "post" | "put" | "delete" | "patch" => verb.to_ascii_uppercase(),
            _ => return None,
        };
        let mut segs: Vec<Option<&str>> = Vec::new();
        let mut k = verb_at.checked_sub(1)?;
        // Walk back over `.name(args)` links.
        loop {
            if !src.is(k, ".") {
                break;
            }
            let close = k.checked_sub(1)?;
            if !src.is(close, ")") {
                // The chain's root: a name (`catalogClient`, `this.client`).
                let root = src.ident(close)?;
                let lower = root.to_ascii_lowercase();
                if !(lower.ends_with("client") || lower.ends_with("api")) || segs.is_empty() {
                    return None;
                }
                break;
            }
            let open = src.open_of(close)?;
            let name = src.ident(open.checked_sub(1)?)?;
            let empty = open + 1 == close;
            if let Some(rest) = name
                .strip_prefix("by")
                .filter(|r| r.starts_with(|c: char| c.is_ascii_uppercase()))
            {
                let _ = rest;
                segs.push(None);
            } else if empty && name.bytes().next().is_some_and(|c| c.is_ascii_lowercase()) {
                segs.push(Some(name));
            } else {
                return None;
            }
            k = open.checked_sub(2)?;
            if segs.len() > 12 {
                return None;
            }
        }
        segs.reverse();
        // The client's name often names the service (`catalogClient`): a host hint.
        let root = src.ident(k.saturating_sub(1)).unwrap_or("");
        let mut url = Value::default();
        if !root.is_empty() {
            url.push(Part::Ref {
                name: root.to_string(),
                default: None,
            });
        }
        for seg in segs {
            match seg {
                Some(s) => url.push(Part::Lit(format!("/{s}"))),
                None => {
                    url.push(Part::Lit("/".into()));
                    url.push(Part::Dynamic);
                }
            }
        }
        Some((method, url))
    }

    /// The end of the statement or expression starting at token `i` (exclusive).
    fn statement_end(&self, i: usize) -> usize {
        let src = self.src;
        let mut j = i;
        let limit = (i + 400).min(src.len());
        while j < limit {
            let t = src.toks[j];
            if j > i && t.nl_before && src.dialect != Dialect::Java {
                let cont = t.kind == TokKind::Punct && matches!(t.text, "." | "?.");
                if !cont {
                    return j;
                }
            }
            if src.is_opener(j) {
                j = src.close_or_end(j) + 1;
                continue;
            }
            if t.kind == TokKind::Punct && matches!(t.text, ";" | ")" | "}" | "]") {
                return j;
            }
            j += 1;
        }
        limit
    }

    fn client_calls(&self, facts: &mut FileFacts) {
        let src = self.src;
        let n = src.len();
        let mut push = |method: Option<&str>, url: Option<Value>, line: u32| {
            if let Some(url) = url {
                facts.http.push(HttpFact::Call {
                    method: method.map(str::to_string),
                    url,
                    line,
                });
            }
        };
        for k in 0..n {
            let Some(name) = src.ident(k) else { continue };
            if !matches!(
                name,
                "getForObject"
                    | "getForEntity"
                    | "postForObject"
                    | "postForEntity"
                    | "postForLocation"
                    | "patchForObject"
                    | "headForHeaders"
                    | "optionsForAllow"
                    | "put"
                    | "delete"
                    | "exchange"
                    | "execute"
                    | "uri"
                    | "get"
                    | "post"
                    | "patch"
                    | "head"
                    | "options"
                    | "newBuilder"
                    | "Builder"
                    | "HttpGet"
                    | "HttpPost"
                    | "HttpPut"
                    | "HttpDelete"
                    | "HttpPatch"
                    | "HttpHead"
            ) {
                continue;
            }
            let dotted = k >= 1 && (src.is(k - 1, ".") || src.is(k - 1, "?."));
            let open = src.skip_generics(k + 1);
            // Kotlin trailing lambda: `.uri { it.path("/orders/{id}").build(id) }`.
            let lambda = name == "uri" && src.is(open, "{");
            if !src.is(open, "(") && !lambda {
                continue;
            }
            let close = src.close_or_end(open);
            let first_arg = if lambda {
                Some((open + 1, close))
            } else {
                src.first_arg(open)
            };
            let line = src.toks[k].line;
            if dotted {
                let recv = k.checked_sub(2).and_then(|r| src.ident(r)).unwrap_or("");
                let recv_lower = recv.to_ascii_lowercase();
                let rest_template = self.held.get(recv) == Some(&Held::RestTemplate)
                    || recv_lower.contains("resttemplate");
                let rt_method = match name {
                    "getForObject" | "getForEntity" => Some("GET"),
                    "postForObject" | "postForEntity" | "postForLocation" => Some("POST"),
                    "patchForObject" => Some("PATCH"),
                    "headForHeaders" => Some("HEAD"),
                    "optionsForAllow" => Some("OPTIONS"),
                    "put" if rest_template => Some("PUT"),
                    "delete" if rest_template => Some("DELETE"),
                    "exchange" | "execute" if rest_template => Some(""),
                    _ => None,
                };
                if let Some(mut method) = rt_method {
                    if method.is_empty() {
                        method = self.http_method_arg(open + 1, close).unwrap_or("");
                    }
                    let path = first_arg.and_then(|r| self.url_path(r));
                    push((!method.is_empty()).then_some(method), path, line);
                    continue;
                }
                if name == "uri" {
                    // WebClient / RestClient: `.get().uri("/orders/{id}")`,
                    // `.method(HttpMethod.GET).uri(…)`.
                    let verb = k.checked_sub(2).and_then(|p| {
                        if !src.is(p, ")") {
                            return None;
                        }
                        let o = src.open_of(p)?;
                        let m = src.ident(o.checked_sub(1)?)?;
                        if !src.is(o.checked_sub(2)?, ".") {
                            return None;
                        }
                        let verb_line = src.line(o - 1);
                        match m {
                            "get" | "post" | "put" | "delete" | "patch" | "head" | "options" => {
                                Some((m, verb_line))
                            }
                            "method" => self.http_method_arg(o + 1, p).map(|v| (v, verb_line)),
                            _ => None,
                        }
                    });
                    if let Some((verb, verb_line)) = verb {
                        // The site is the verb's call (`.get()`), the call's method name.
                        let path = first_arg.and_then(|r| self.url_path(r));
                        push(Some(&verb.to_ascii_uppercase()), path, verb_line);
                    }
                    continue;
                }
                // Ktor / Vert.x clients: `client.get("http://…/orders")`.
                if matches!(
                    name,
                    "get" | "post" | "put" | "delete" | "patch" | "head" | "options"
                ) && recv_lower.ends_with("client")
                    && !rest_template
                {
                    let path = src
                        .split_commas(open + 1, close)
                        .into_iter()
                        .find_map(|r| self.url_path(r).filter(looks_like_url));
                    push(Some(&name.to_ascii_uppercase()), path, line);
                    continue;
                }
            }
            if dotted && let Some((method, url)) = self.fluent_request(k) {
                push(Some(&method), Some(url), line);
                continue;
            }
            match name {
                // `HttpRequest.newBuilder(URI.create("http://…/x"))…POST(…)`,
                // OkHttp `Request.Builder().url("…").post(…)`.
                "newBuilder" if k >= 2 && src.kw(k - 2, "HttpRequest") => {
                    let end = self.statement_end(k);
                    let path = first_arg
                        .and_then(|r| self.url_path(r))
                        .or_else(|| self.chained_arg(close + 1, end, "uri"));
                    let method = self.chained_verb(close + 1, end, true);
                    push(method, path, line);
                }
                "Builder" if k >= 2 && src.kw(k - 2, "Request") => {
                    let end = self.statement_end(k);
                    let path = self.chained_arg(close + 1, end, "url");
                    let method = self.chained_verb(close + 1, end, false);
                    push(method, path, line);
                }
                "HttpGet" | "HttpPost" | "HttpPut" | "HttpDelete" | "HttpPatch" | "HttpHead"
                    if !dotted =>
                {
                    let path = first_arg.and_then(|r| self.url_path(r));
                    // The site is where the request is executed (`httpClient.execute(post)`),
                    // when the file executes it; else where it is built.
                    let sent = self
                        .asg
                        .holding(k)
                        .and_then(|a| Assignments::sent_at(src, a, &["execute", "executeOpen"]));
                    let line = sent.map_or(line, |s| src.line(s));
                    push(Some(&name[4..].to_ascii_uppercase()), path, line);
                }
                _ => {}
            }
        }
    }

    /// `HttpMethod.GET` (or `"GET"`) among the tokens `a..b`.
    fn http_method_arg(&self, a: usize, b: usize) -> Option<&'static str> {
        let src = self.src;
        (a..b.min(src.len()).min(a + 256)).find_map(|j| {
            let verb = if src.kw(j, "HttpMethod") && src.is(j + 1, ".") {
                src.ident(j + 2)?
            } else {
                return None;
            };
            const VERBS: [&str; 7] = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"];
            VERBS.iter().copied().find(|v| v.eq_ignore_ascii_case(verb))
        })
    }

    /// The URL path of the first `.name(arg)` call in `a..end` (unwrapping `URI.create(…)`).
    fn chained_arg(&self, a: usize, end: usize, name: &str) -> Option<Value> {
        let src = self.src;
        (a..end).find_map(|j| {
            if !(src.is(j, ".") && src.kw(j + 1, name) && src.is(j + 2, "(")) {
                return None;
            }
            let close = src.close_or_end(j + 2);
            self.url_path((j + 3, close))
        })
    }

    /// The HTTP verb set by a chained `.GET()`/`.POST(…)` (JDK) or `.get()`/`.post(…)` (OkHttp)
    /// call in `a..end`.
    fn chained_verb(&self, a: usize, end: usize, upper: bool) -> Option<&'static str> {
        let src = self.src;
        const VERBS: [&str; 6] = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"];
        (a..end).find_map(|j| {
            if !src.is(j, ".") || !src.is(j + 2, "(") {
                return None;
            }
            let m = src.ident(j + 1)?;
            if m == "method" {
                let v = src.plain_str(j + 3)?;
                return VERBS.iter().copied().find(|x| x.eq_ignore_ascii_case(&v));
            }
            VERBS.iter().copied().find(|v| {
                if upper {
                    *v == m
                } else {
                    v.eq_ignore_ascii_case(m) && m.bytes().all(|b| b.is_ascii_lowercase())
                }
            })
        })
    }
}

/// The `via` of a listener annotation.
fn ann_via(name: &str) -> &'static str {
    match name {
        "RabbitListener" => "@RabbitListener",
        "JmsListener" => "@JmsListener",
        _ => "@SqsListener",
    }
}

/// The literal base URL of a declared client (`@FeignClient(url = "http://x/api")`).
fn feign_url(cx: &Ctx, anns: &[Ann]) -> Option<String> {
    let a = anns.iter().find(|a| a.name == "FeignClient")?;
    let url = cx.ann_strings(a, &["url"]).into_iter().next()?;
    (url.contains("://") || url.starts_with('/')).then_some(url)
}

/// Joins a class-level prefix and a method path with exactly one `/` between them.
fn join_paths(prefix: &str, path: &str) -> String {
    let p = prefix.trim_end_matches('/');
    let q = path.trim_start_matches('/');
    let mut out = String::with_capacity(p.len() + q.len() + 2);
    if !p.is_empty() && !p.starts_with('/') && !p.contains("://") {
        out.push('/');
    }
    out.push_str(p);
    if !q.is_empty() || out.is_empty() {
        out.push('/');
    }
    out.push_str(q);
    out
}

/// A literal with Kotlin/Scala substitutions (`$id`, `${id}`) and `String.format` directives as
/// `{}` placeholders.
fn normalize_template(value: &str, templated: bool) -> Cow<'_, str> {
    if !templated && !value.contains('%') {
        return Cow::Borrowed(value);
    }
    let b = value.as_bytes();
    let mut out = String::with_capacity(value.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if templated && c == b'$' && b.get(i + 1) == Some(&b'{') {
            // `${…}` up to its closing brace (nested braces counted).
            let mut depth = 0usize;
            let mut j = i + 1;
            while j < b.len() {
                match b[j] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            out.push_str("{}");
            i = j + 1;
            continue;
        }
        if templated
            && c == b'$'
            && b.get(i + 1)
                .is_some_and(|&x| x.is_ascii_alphabetic() || x == b'_')
        {
            let mut j = i + 1;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            out.push_str("{}");
            i = j;
            continue;
        }
        if c == b'%' && b.get(i + 1).is_some_and(|x| matches!(x, b's' | b'd')) {
            out.push_str("{}");
            i += 2;
            continue;
        }
        // Copy one UTF-8 character.
        let len = match c {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        let end = (i + len).min(b.len());
        out.push_str(value.get(i..end).unwrap_or(""));
        i = end;
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders() {
        assert_eq!(
            spring_placeholder("${app.topic:orders.created}"),
            Some(("app.topic".into(), Some("orders.created".into())))
        );
        assert_eq!(
            spring_placeholder("${app.topic}"),
            Some(("app.topic".into(), None))
        );
        assert_eq!(
            spring_placeholder("${a:${b:orders}}"),
            Some(("a".into(), Some("orders".into())))
        );
        assert_eq!(spring_placeholder("x-${a}"), None);
        assert_eq!(spring_placeholder("#{'${a}'}"), None);
        assert_eq!(const_value("${a:b}").as_deref(), Some("b"));
        assert_eq!(const_value("${a}"), None);
        assert_eq!(const_value("orders").as_deref(), Some("orders"));
    }

    #[test]
    fn paths_join_and_templates() {
        assert_eq!(join_paths("/orders", "/{id}"), "/orders/{id}");
        assert_eq!(join_paths("/orders/", ""), "/orders");
        assert_eq!(join_paths("", ""), "/");
        assert_eq!(join_paths("api", "x"), "/api/x");
        assert_eq!(
            normalize_template("$base/orders/${id}", true),
            "{}/orders/{}"
        );
        assert_eq!(normalize_template("%s/orders/%d", false), "{}/orders/{}");
    }

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
