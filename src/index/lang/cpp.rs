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

use std::collections::HashMap;

use super::bind::{Assignments, StmtStyle};
use super::common::{looks_like_topic, looks_like_url};
use super::tokens::{Rules, TokKind, Tokens};
use super::value::{ExprRules, eval};
use crate::index::facts::{
    Binding, EventFact, EventRole, FileFacts, GrpcFact, HttpFact, Import, Symbol, SymbolKind, Value,
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
                facts.imports.push(Import {
                    module: m.to_string(),
                    names: Vec::new(),
                    alias: None,
                    line,
                    reexport: false,
                });
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
            facts.symbols.push(Symbol {
                name: name.to_string(),
                kind,
                line,
                end_line: last,
                doc_line,
                container: None,
            });
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

impl<'a> Cpp<'_, '_, 'a> {
    fn decls(&mut self) {
        let t = self.t;
        let n = t.len();
        let mut frames: Vec<Frame<'a>> = Vec::new();
        let mut head: Option<usize> = None;
        let mut i = 0;
        while i < n {
            if let Some(top) = frames.last()
                && i >= top.end
            {
                let end = top.end;
                frames.pop();
                if i == end {
                    i += 1;
                }
                head = None;
                continue;
            }
            let frame = frames.last().copied();
            let limit = frame.map_or(n, |f| f.end);
            if t.is(i, "template") && t.is_punct(i + 1, b'<') {
                head.get_or_insert(i);
                i = self.skip_angles(i + 1).max(i + 1);
                continue;
            }
            if t.is_punct(i, b'[') && t.is_punct(i + 1, b'[') {
                head.get_or_insert(i);
                i = t.skip_group(i);
                continue;
            }
            if matches!(
                t.ident(i),
                Some("public" | "private" | "protected" | "signals" | "slots" | "Q_SLOTS")
            ) {
                let mut j = i + 1;
                if t.is(j, "slots") || t.is(j, "Q_SLOTS") {
                    j += 1;
                }
                if t.is_punct(j, b':') && !t.is_punct(j + 1, b':') {
                    i = j + 1;
                    head = None;
                    continue;
                }
            }
            if t.is_punct(i, b';') {
                i += 1;
                head = None;
                continue;
            }
            if matches!(t.ident(i), Some("friend" | "export")) {
                i += 1;
                continue;
            }
            let ctx = Ctx {
                frame,
                start: head.take().unwrap_or(i),
                limit,
            };
            let next = match t.ident(i) {
                Some("namespace") => {
                    let (next, f) = self.namespace(i, ctx);
                    frames.extend(f);
                    next
                }
                Some("inline") if t.is(i + 1, "namespace") => i + 1,
                Some("extern") if t.is_str(i + 1) && t.is_punct(i + 2, b'{') => {
                    frames.push(Frame {
                        end: t.close(i + 2).unwrap_or(n),
                        kind: FrameKind::Block,
                        name: None,
                    });
                    i + 3
                }
                Some("extern") if t.is_str(i + 1) => i + 2,
                Some("class" | "struct" | "union") => {
                    let (next, f) = self.class(i, ctx);
                    frames.extend(f);
                    next
                }
                Some("enum") => self.enumeration(i, ctx),
                Some("typedef") => self.typedef(i, ctx),
                Some("using") => self.using(i, ctx),
                Some(id)
                    if is_macro_name(id)
                        && !t.is_punct(i + 1, b'(')
                        && t.line(i + 1) > t.line(i) =>
                {
                    i + 1 // `Q_OBJECT` on its own line
                }
                _ => self.general(i, ctx),
            };
            i = next.max(i + 1);
        }
    }

    fn doc_line(&self, ctx: &Ctx, name_line: u32) -> Option<u32> {
        let start_line = self.t.line(ctx.start);
        self.t
            .lx
            .doc_comment_above(start_line)
            .or((start_line < name_line).then_some(start_line))
    }

    fn push_symbol(
        &mut self,
        name: &str,
        kind: SymbolKind,
        name_tok: usize,
        end_line: u32,
        ctx: &Ctx,
        container: Option<&str>,
    ) {
        let line = self.t.line(name_tok);
        let doc_line = self.doc_line(ctx, line);
        self.facts.symbols.push(Symbol {
            name: name.to_string(),
            kind,
            line,
            end_line: end_line.max(line),
            doc_line,
            container: container.map(str::to_string),
        });
    }

    /// Skips a `<…>` list at `k`; stops early at `;`, `{`, `}` or a closer (malformed).
    fn skip_angles(&self, k: usize) -> usize {
        let t = self.t;
        if !t.is_punct(k, b'<') {
            return k;
        }
        let mut depth = 0usize;
        let mut j = k;
        while j < t.len() {
            if t.is_punct(j, b'<') {
                depth += 1;
            } else if t.is_punct(j, b'>') && !(t.is_punct(j - 1, b'-') && t.joined(j - 1)) {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return j + 1;
                }
            } else if t.is_punct(j, b';')
                || t.is_punct(j, b'{')
                || t.is_punct(j, b'}')
                || t.is_punct(j, b')')
            {
                return j;
            } else if t.is_punct(j, b'(') || t.is_punct(j, b'[') {
                j = t.skip_group(j);
                continue;
            }
            j += 1;
        }
        j
    }

    /// The index of the `;` ending the statement at `k` (groups skipped), or of a closer, or
    /// `limit`.
    fn to_semicolon(&self, mut k: usize, limit: usize) -> usize {
        let t = self.t;
        while k < limit {
            if t.is_punct(k, b';') || t.is_punct(k, b'}') || t.is_punct(k, b')') {
                return k;
            }
            k = t.skip_group(k);
        }
        limit
    }

    fn container_of(ctx: &Ctx<'a>) -> Option<&'a str> {
        ctx.frame.and_then(|f| f.name)
    }

    fn namespace(&mut self, i: usize, ctx: Ctx<'a>) -> (usize, Option<Frame<'a>>) {
        let t = self.t;
        let mut j = i + 1;
        let mut last = None;
        while let Some(id) = t.ident(j) {
            last = Some(id);
            j += 1;
            if t.op2(j, b"::") {
                j += 2;
            } else {
                break;
            }
        }
        while t.is_punct(j, b'[') && t.is_punct(j + 1, b'[') {
            j = t.skip_group(j);
        }
        if !t.is_punct(j, b'{') {
            return (self.to_semicolon(j, ctx.limit) + 1, None);
        }
        if last.is_some() {
            let name = self.text_between(i + 1, j);
            self.push_symbol(
                &name,
                SymbolKind::Module,
                i + 1,
                t.group_end_line(j),
                &ctx,
                Self::container_of(&ctx),
            );
        }
        let frame = Frame {
            end: t.close(j).unwrap_or(t.len()),
            kind: FrameKind::Namespace,
            name: last,
        };
        (j + 1, Some(frame))
    }

    /// The source of tokens `s..e` without whitespace (`a :: b` → `a::b`; `operator bool`
    /// `operator bool` keeps the space between words).
    fn text_between(&self, s: usize, e: usize) -> String {
        let t = self.t;
        let mut out = String::new();
        for k in s..e {
            let word = |x: usize| matches!(t.kind(x), Some(TokKind::Ident | TokKind::Num));
            if k > s && word(k) && word(k - 1) {
                out.push(' ');
            }
            out.push_str(t.text(k));
        }
        out
    }

    fn class(&mut self, i: usize, ctx: Ctx<'a>) -> (usize, Option<Frame<'a>>) {
        let t = self.t;
        let is_class = t.is(i, "class");
        let mut j = i + 1;
        let mut name_tok = None;
        loop {
            if t.is_punct(j, b'[') && t.is_punct(j + 1, b'[') {
                j = t.skip_group(j);
            } else if matches!(t.ident(j), Some("alignas" | "__declspec" | "__attribute__"))
                && t.is_punct(j + 1, b'(')
            {
                j = t.skip_group(j + 1);
            } else if let Some(id) = t.ident(j)
                && id != "final"
            {
                name_tok = Some(j);
                j += 1;
                if t.op2(j, b"::") {
                    j += 2;
                }
            } else {
                break;
            }
        }
        if t.is_punct(j, b'<') {
            j = self.skip_angles(j);
        }
        if t.is(j, "final") {
            j += 1;
        }
        let colon = t.is_punct(j, b':') && !t.is_punct(j + 1, b':');
        if !colon && !t.is_punct(j, b'{') {
            if t.is_punct(j, b';') {
                return (j + 1, None); // forward declaration
            }
            return (self.general(i, ctx), None);
        }
        let mut open = j;
        if colon {
            open = j + 1;
            while open < ctx.limit && !t.is_punct(open, b'{') {
                if t.is_punct(open, b';') || t.is_punct(open, b'}') {
                    return (open + 1, None);
                }
                open = if t.is_punct(open, b'<') {
                    self.skip_angles(open).max(open + 1)
                } else {
                    t.skip_group(open)
                };
            }
            if !t.is_punct(open, b'{') {
                return (open, None);
            }
        }
        let name = name_tok.and_then(|k| t.ident(k));
        if let (Some(name), Some(nt)) = (name, name_tok) {
            let kind = if is_class {
                SymbolKind::Class
            } else {
                SymbolKind::Struct
            };
            self.push_symbol(
                name,
                kind,
                nt,
                t.group_end_line(open),
                &ctx,
                Self::container_of(&ctx),
            );
            if colon {
                self.grpc_bases(j + 1, open, name, t.line(nt));
            }
        }
        let frame = Frame {
            end: t.close(open).unwrap_or(t.len()),
            kind: FrameKind::Class,
            name,
        };
        (open + 1, Some(frame))
    }

    /// `: public Svc::Service`, `Svc::WithAsyncMethod_X<…>`, `Svc::CallbackService`.
    fn grpc_bases(&mut self, s: usize, e: usize, class: &str, line: u32) {
        let t = self.t;
        let first = self.facts.grpc.len();
        for k in s..e {
            let Some(id) = t.ident(k) else { continue };
            if k < 3 || !t.op2(k - 2, b"::") || t.op2(k + 1, b"::") || !is_grpc_service_base(id) {
                continue;
            }
            let Some(svc) = t.ident(k - 3) else { continue };
            if svc == "grpc" || svc == "std" {
                continue;
            }
            let dup = self.facts.grpc[first..].iter().any(|g| {
                matches!(g, GrpcFact::Server { service, impl_type: Some(c), .. }
                    if service == svc && c == class)
            });
            if !dup {
                self.facts.grpc.push(GrpcFact::Server {
                    service: svc.to_string(),
                    impl_type: Some(class.to_string()),
                    line,
                });
            }
        }
    }

    fn enumeration(&mut self, i: usize, ctx: Ctx<'a>) -> usize {
        let t = self.t;
        let mut j = i + 1;
        if t.is(j, "class") || t.is(j, "struct") {
            j += 1;
        }
        while t.is_punct(j, b'[') && t.is_punct(j + 1, b'[') {
            j = t.skip_group(j);
        }
        let name_tok = t.ident(j).map(|_| j);
        if name_tok.is_some() {
            j += 1;
        }
        if t.is_punct(j, b':') && !t.is_punct(j + 1, b':') {
            while j < ctx.limit
                && !t.is_punct(j, b'{')
                && !t.is_punct(j, b';')
                && !t.is_punct(j, b'}')
            {
                j += 1;
            }
        }
        if !t.is_punct(j, b'{') {
            if t.is_punct(j, b';') {
                return j + 1;
            }
            return self.general(i, ctx);
        }
        let name = name_tok.and_then(|k| t.ident(k));
        if let (Some(name), Some(nt)) = (name, name_tok) {
            self.push_symbol(
                name,
                SymbolKind::Enum,
                nt,
                t.group_end_line(j),
                &ctx,
                Self::container_of(&ctx),
            );
        }
        self.enum_values(j, name.or(Self::container_of(&ctx)));
        t.skip_group(j)
    }

    fn enum_values(&mut self, open: usize, container: Option<&str>) {
        let t = self.t;
        let end = t.close(open).unwrap_or(t.len());
        let mut k = open + 1;
        let mut at_start = true;
        while k < end {
            if t.is_punct(k, b',') {
                at_start = true;
                k += 1;
                continue;
            }
            if t.is_punct(k, b'[') && t.is_punct(k + 1, b'[') {
                k = t.skip_group(k);
                continue;
            }
            if at_start && let Some(v) = t.ident(k) {
                let line = t.line(k);
                self.facts.symbols.push(Symbol {
                    name: v.to_string(),
                    kind: SymbolKind::EnumValue,
                    line,
                    end_line: line,
                    doc_line: t.lx.doc_comment_above(line),
                    container: container.map(str::to_string),
                });
            }
            at_start = false;
            k = t.skip_group(k);
        }
    }

    fn typedef(&mut self, i: usize, ctx: Ctx<'a>) -> usize {
        let t = self.t;
        let mut j = i + 1;
        if matches!(t.ident(j), Some("struct" | "union" | "enum" | "class")) {
            let kw = t.text(j);
            let mut k = j + 1;
            if t.is(k, "class") {
                k += 1;
            }
            let tag = t.ident(k).map(|_| k);
            if tag.is_some() {
                k += 1;
            }
            if t.is_punct(k, b':') && kw == "enum" {
                while k < ctx.limit && !t.is_punct(k, b'{') && !t.is_punct(k, b';') {
                    k += 1;
                }
            }
            if t.is_punct(k, b'{') {
                let end_line = t.group_end_line(k);
                let container = Self::container_of(&ctx);
                if let Some(tag) = tag
                    && let Some(name) = t.ident(tag)
                {
                    let kind = match kw {
                        "enum" => SymbolKind::Enum,
                        "class" => SymbolKind::Class,
                        _ => SymbolKind::Struct,
                    };
                    self.push_symbol(name, kind, tag, end_line, &ctx, container);
                }
                // The aliases after the body: `} Name, *NamePtr;`.
                let after = t.skip_group(k);
                let end = self.to_semicolon(after, ctx.limit);
                let first_alias = (after..end).find_map(|x| t.ident(x));
                if kw == "enum" {
                    self.enum_values(k, tag.and_then(|x| t.ident(x)).or(first_alias));
                }
                for x in after..end {
                    if let Some(alias) = t.ident(x) {
                        self.push_symbol(
                            alias,
                            SymbolKind::TypeAlias,
                            x,
                            t.line(x),
                            &ctx,
                            container,
                        );
                    }
                }
                return end + 1;
            }
            j = k;
        }
        let end = self.to_semicolon(j, ctx.limit);
        // `typedef void (*Handler)(int);` names the pointer inside the first group.
        let mut name_tok = None;
        let mut k = j;
        while k < end {
            if t.is_punct(k, b'(') {
                if (t.is_punct(k + 1, b'*') || t.is_punct(k + 1, b'^')) && t.ident(k + 2).is_some()
                {
                    name_tok = Some(k + 2);
                    break;
                }
                k = t.skip_group(k);
                continue;
            }
            if t.is_punct(k, b'[') {
                k = t.skip_group(k);
                continue;
            }
            if t.ident(k).is_some() {
                name_tok = Some(k);
            }
            k += 1;
        }
        if let Some(nt) = name_tok
            && let Some(name) = t.ident(nt)
        {
            self.push_symbol(
                name,
                SymbolKind::TypeAlias,
                nt,
                t.line(end.min(t.len().saturating_sub(1))),
                &ctx,
                Self::container_of(&ctx),
            );
        }
        end + 1
    }

    fn using(&mut self, i: usize, ctx: Ctx<'a>) -> usize {
        let t = self.t;
        let end = self.to_semicolon(i + 1, ctx.limit);
        if let Some(name) = t.ident(i + 1)
            && t.is_punct(i + 2, b'=')
        {
            let end_line = t.line(end.min(t.len().saturating_sub(1)));
            self.push_symbol(
                name,
                SymbolKind::TypeAlias,
                i + 1,
                end_line,
                &ctx,
                Self::container_of(&ctx),
            );
        }
        end + 1
    }

    /// Any other declaration statement: a function (definition, or declaration in a class), a
    /// variable or constant, or something to skip. Returns the index after it.
    fn general(&mut self, i: usize, ctx: Ctx<'a>) -> usize {
        let t = self.t;
        let limit = ctx.limit;
        let mut is_const = false;
        let mut k = i;
        while k < limit {
            if t.is_punct(k, b';') {
                return k + 1;
            }
            if t.is_punct(k, b'}') {
                return k;
            }
            if t.is_punct(k, b')') || t.is_punct(k, b']') {
                return k + 1;
            }
            if t.is_punct(k, b'<') {
                k = self.skip_angles(k).max(k + 1);
                continue;
            }
            if t.is_punct(k, b'=') && !t.is_punct(k + 1, b'=') {
                return self.variable(k, None, ctx, is_const);
            }
            if t.is_punct(k, b'{') {
                if k > i
                    && (t.ident(k - 1).is_some() || t.is_punct(k - 1, b']'))
                    && !t.is_punct(k - 1, b')')
                {
                    return self.variable(k, Some(k), ctx, is_const);
                }
                return t.skip_group(k);
            }
            if let Some(id) = t.ident(k) {
                if matches!(id, "const" | "constexpr" | "constinit") {
                    is_const = true;
                }
                if id == "operator" {
                    let mut j = k + 1;
                    if t.is_punct(j, b'(') && t.is_punct(j + 1, b')') {
                        j += 2;
                    }
                    while j < limit && j < k + 10 && !t.is_punct(j, b'(') && !t.is_punct(j, b';') {
                        j += 1;
                    }
                    if t.is_punct(j, b'(') {
                        let name = self.text_between(k, j);
                        match self.function(k, &name, j, ctx) {
                            Some(next) => return next,
                            None => {
                                k = t.skip_group(j);
                                continue;
                            }
                        }
                    }
                    return self.to_semicolon(j, limit) + 1;
                }
                if t.is_punct(k + 1, b'(') {
                    if is_macro_name(id) || NOT_NAMES.contains(&id) {
                        // An attribute or macro call (`EXPORT(void)`, `__attribute__((x))`):
                        // a macro invocation on its own is a whole statement.
                        let after = t.skip_group(k + 1);
                        if k == i && t.line(after) > t.line(after - 1) && !t.is_punct(after, b';') {
                            return after;
                        }
                        k = after;
                        continue;
                    }
                    let name = if k > 0 && t.is_punct(k - 1, b'~') {
                        format!("~{id}")
                    } else {
                        id.to_string()
                    };
                    match self.function(k, &name, k + 1, ctx) {
                        Some(next) => return next,
                        None => {
                            k = t.skip_group(k + 1);
                            continue;
                        }
                    }
                }
            }
            k = t.skip_group(k);
        }
        limit
    }

    /// A function candidate named at `name_tok` with parameters at `open`. Returns the index
    /// after the statement when it is a function (recorded or not), `None` when the
    /// parentheses turned out not to be a parameter list.
    fn function(
        &mut self,
        name_tok: usize,
        name: &str,
        open: usize,
        ctx: Ctx<'a>,
    ) -> Option<usize> {
        let t = self.t;
        let close = t.close(open)?;
        let mut j = close + 1;
        // Qualifiers after the parameter list.
        loop {
            if let Some(id) = t.ident(j) {
                match id {
                    "const" | "volatile" | "override" | "final" | "mutable" | "constexpr" => j += 1,
                    "noexcept" | "throw" | "__attribute__" | "requires" => {
                        j += 1;
                        if t.is_punct(j, b'(') {
                            j = t.skip_group(j);
                        }
                    }
                    _ if is_macro_name(id) && t.line(j) == t.line(close) => {
                        j += 1;
                        if t.is_punct(j, b'(') {
                            j = t.skip_group(j);
                        }
                    }
                    _ => break,
                }
            } else if t.is_punct(j, b'&') {
                j += 1;
            } else if t.is_punct(j, b'[') && t.is_punct(j + 1, b'[') {
                j = t.skip_group(j);
            } else if t.op2(j, b"->") {
                // Trailing return type.
                j += 2;
                while j < ctx.limit
                    && !t.is_punct(j, b'{')
                    && !t.is_punct(j, b';')
                    && !t.is_punct(j, b'=')
                {
                    if t.is_punct(j, b'}') {
                        return Some(j);
                    }
                    j = if t.is_punct(j, b'<') {
                        self.skip_angles(j).max(j + 1)
                    } else {
                        t.skip_group(j)
                    };
                }
            } else {
                break;
            }
        }
        let mut body = None;
        let mut decl_end = None;
        if t.is(j, "try") && t.is_punct(j + 1, b'{') {
            j += 1;
        }
        if t.is_punct(j, b'{') {
            body = Some(j);
        } else if t.is_punct(j, b':') && !t.is_punct(j + 1, b':') {
            // Constructor initializer list: `: a_(x), b_{y} {`.
            let mut k = j + 1;
            while k < ctx.limit {
                if t.is_punct(k, b'{') && !(t.ident(k - 1).is_some() || t.is_punct(k - 1, b'>')) {
                    body = Some(k);
                    break;
                }
                if t.is_punct(k, b';') || t.is_punct(k, b'}') {
                    return Some(k + 1);
                }
                k = if t.is_punct(k, b'<') {
                    self.skip_angles(k).max(k + 1)
                } else {
                    t.skip_group(k)
                };
            }
            if body.is_none() {
                return Some(k);
            }
        } else if t.is_punct(j, b';') {
            decl_end = Some(j);
        } else if t.is_punct(j, b'=') && !t.is_punct(j + 1, b'=') {
            // `= 0;`, `= default;`, `= delete;`
            let end = self.to_semicolon(j, ctx.limit);
            if !matches!(t.ident(j + 1), Some("default" | "delete")) && !t.is(j + 1, "0") {
                return Some(end + 1);
            }
            decl_end = Some(end);
        } else if t.is_punct(j, b',') {
            // `Foo a(1), b(2);`: variables.
            return Some(self.to_semicolon(j, ctx.limit) + 1);
        } else if t.ident(j).is_some() && t.line(j) > t.line(close) {
            // A macro invocation without a semicolon (`Q_DECLARE_METATYPE(X)`).
            return Some(j);
        } else {
            return None;
        }
        // Name, qualifiers and kind.
        let mut q = if name.starts_with('~') {
            name_tok - 1
        } else {
            name_tok
        };
        let mut quals: Vec<&str> = Vec::new();
        while q >= 3 && t.op2(q - 2, b"::") {
            let Some(seg) = t.ident(q - 3) else { break };
            quals.push(seg);
            q -= 3;
        }
        let class_frame = match ctx.frame {
            Some(Frame {
                kind: FrameKind::Class,
                name,
                ..
            }) => Some(name),
            _ => None,
        };
        let (kind, container) = if let Some(&c) = quals.first() {
            if name == c {
                (SymbolKind::Constructor, Some(c))
            } else {
                (SymbolKind::Method, Some(c))
            }
        } else if let Some(c) = class_frame {
            if c.is_some_and(|c| c == name) {
                (SymbolKind::Constructor, c)
            } else {
                (SymbolKind::Method, c)
            }
        } else {
            (SymbolKind::Function, Self::container_of(&ctx))
        };
        let record = body.is_some() || (class_frame.is_some() && quals.is_empty());
        let next = match (body, decl_end) {
            (Some(b), _) => {
                let end_line = t.group_end_line(b);
                if record {
                    self.push_symbol(name, kind, name_tok, end_line, &ctx, container);
                }
                self.bodies.push((b, t.close(b).unwrap_or(t.len())));
                t.skip_group(b)
            }
            (None, Some(e)) => {
                if record {
                    let end_line = t.line(e.min(t.len().saturating_sub(1)));
                    self.push_symbol(name, kind, name_tok, end_line, &ctx, container);
                }
                e + 1
            }
            (None, None) => return None,
        };
        Some(next)
    }

    /// A variable or constant whose initializer starts at `eq` (`=`) or is the brace group at
    /// `brace`. Records constants (`const`/`constexpr`) and namespace-level variables.
    fn variable(&mut self, eq: usize, brace: Option<usize>, ctx: Ctx<'a>, is_const: bool) -> usize {
        let t = self.t;
        let (value_range, end) = match brace {
            Some(b) => {
                let close = t.close(b).unwrap_or(ctx.limit);
                (
                    (b + 1, close),
                    self.to_semicolon(t.skip_group(b), ctx.limit),
                )
            }
            None => {
                let end = self.to_semicolon(eq + 1, ctx.limit);
                ((eq + 1, end), end)
            }
        };
        let mut n = eq.saturating_sub(1);
        if t.is_punct(n, b']') {
            while n > 0 && !t.is_punct(n, b'[') {
                n -= 1;
            }
            n = n.saturating_sub(1);
        }
        let Some(name) = t.ident(n) else {
            return end + 1;
        };
        if NOT_NAMES.contains(&name) || name == "operator" {
            return end + 1;
        }
        let in_class = ctx.in_class();
        let kind = if is_const {
            SymbolKind::Constant
        } else if !in_class {
            SymbolKind::Variable
        } else {
            return end + 1; // a data member with a default value
        };
        let container = Self::container_of(&ctx);
        let end_line = t.end_line(end.min(t.len().saturating_sub(1)).max(n));
        self.push_symbol(name, kind, n, end_line, &ctx, container);
        if is_const {
            let value = self.value(value_range);
            if !value.is_dynamic() {
                let qualified = match (in_class, container) {
                    (true, Some(c)) => format!("{c}.{name}"),
                    _ => name.to_string(),
                };
                self.facts.bindings.push(Binding {
                    name: qualified,
                    value,
                    line: t.line(n),
                });
            }
        }
        end + 1
    }

    /// `s..e` without what does not change a string's value: a trailing `.c_str()` / `.data()`,
    /// and a brace-initialised wrapper around it (`cpr::Url{…}`, `std::string{…}`).
    fn peel(&self, (s, e): (usize, usize)) -> (usize, usize) {
        let t = self.t;
        let mut e = e.min(t.len());
        while e >= s + 4
            && t.is_punct(e - 4, b'.')
            && matches!(t.text(e - 3), "c_str" | "data")
            && t.is_punct(e - 2, b'(')
            && t.is_punct(e - 1, b')')
        {
            e -= 4;
        }
        let mut j = s;
        while t.ident(j).is_some() && t.op2(j + 1, b"::") {
            j += 3;
        }
        if t.ident(j).is_some() && t.is_punct(j + 1, b'{') && t.close(j + 1) == Some(e - 1) {
            return (j + 2, e - 1);
        }
        (s, e)
    }

    /// The value of the expression in `r`, read by the shared evaluator; adjacent literals
    /// (`"orders." "created"`) are one.
    fn value(&self, r: (usize, usize)) -> Value {
        let t = self.t;
        let (s, e) = self.peel(r);
        if s >= e {
            return Value::dynamic();
        }
        if e > s + 1 && (s..e).all(|k| t.is_str(k)) {
            let mut v = String::new();
            for k in s..e {
                v.push_str(&t.str_value(k).unwrap_or_default());
            }
            return Value::lit(v);
        }
        eval(t, (s, e), &ExprRules::CPP, self.asg)
    }

    // -----------------------------------------------------------------------------------------
    // Assignments and bindings
    // -----------------------------------------------------------------------------------------

    fn body_of(&self, at: usize) -> Option<usize> {
        let p = self.bodies.partition_point(|&(o, _)| o < at);
        let b = p.checked_sub(1)?;
        (at < self.bodies[b].1).then_some(b)
    }

    fn bind(&mut self, name: &'a str, svc: &str, at: usize) {
        let scope = match self.body_of(at) {
            Some(b) => Scope::Local(b, at),
            None => Scope::Field,
        };
        // A member assigned inside a method (`stub_ = Svc::NewStub(ch)`) is still a member.
        let scope = if name.ends_with('_') || name.starts_with("m_") {
            Scope::Field
        } else {
            scope
        };
        self.bindings
            .entry(name)
            .or_default()
            .push((svc.to_string(), scope));
    }

    // -----------------------------------------------------------------------------------------
    // gRPC, events, HTTP
    // -----------------------------------------------------------------------------------------

    fn patterns(&mut self) {
        let t = self.t;
        for k in 0..t.len() {
            let Some(id) = t.ident(k) else { continue };
            let scoped_by = |k: usize| -> Option<&'a str> {
                (k >= 3 && t.op2(k - 2, b"::"))
                    .then(|| t.ident(k - 3))
                    .flatten()
            };
            let member_call = k > 0
                && (t.is_punct(k - 1, b'.') || (k > 1 && t.op2(k - 2, b"->")))
                && t.is_punct(k + 1, b'(');
            match id {
                "NewStub" if t.is_punct(k + 1, b'(') => {
                    if let Some(svc) = scoped_by(k) {
                        self.new_stub(k, svc);
                    }
                }
                "Stub" | "StubInterface" if !t.is_punct(k + 1, b'(') && !t.op2(k + 1, b"::") => {
                    if let Some(svc) = scoped_by(k) {
                        self.typed_stub(k, svc);
                    }
                }
                "MessageBuilder" => self.message_builder(k),
                "subscribe" if member_call && (self.cppkafka || self.rdkafka) => {
                    let via = if self.cppkafka {
                        "cppkafka"
                    } else {
                        "librdkafka"
                    };
                    if let Some(&r) = t.args(k + 1).first() {
                        for (topic, line) in self.topic_list(r, k) {
                            self.push_event(EventRole::Consumer, topic, via, line);
                        }
                    }
                }
                "create" if t.is_punct(k + 1, b'(') && scoped_by(k) == Some("Topic") => {
                    let args = t.args(k + 1);
                    if let (Some(&(hs, he)), Some(&r)) = (args.first(), args.get(1)) {
                        let consumer = (hs..he)
                            .filter_map(|x| t.ident(x))
                            .any(|h| h.to_ascii_lowercase().contains("consumer"));
                        let role = if consumer {
                            EventRole::Consumer
                        } else {
                            EventRole::Producer
                        };
                        if let Some(topic) = self.topic_expr(r) {
                            self.push_event(role, topic, "librdkafka", t.line(k));
                        }
                    }
                }
                "produce" if member_call && self.rdkafka => {
                    if let Some(&r) = t.args(k + 1).first()
                        && let Some(topic) = self.topic_expr(r)
                    {
                        self.push_event(EventRole::Producer, topic, "librdkafka", t.line(k));
                    }
                }
                "Get" | "Post" | "Put" | "Delete" | "Patch" | "Head" | "Options"
                    if t.is_punct(k + 1, b'(') =>
                {
                    if scoped_by(k) == Some("cpr") {
                        self.cpr_call(k, id);
                    } else if member_call && self.httplib {
                        self.httplib_call(k, id);
                    }
                }
                "CROW_ROUTE" if t.is_punct(k + 1, b'(') => self.crow_route(k),
                "curl_easy_setopt" if t.is_punct(k + 1, b'(') => self.curl_url(k),
                _ => {}
            }
        }
    }

    /// `Svc::NewStub(channel)`, bound to `stub_ = …`, `auto stub = …`, `stub_(…)` in an
    /// initializer list or `std::unique_ptr<Svc::Stub> stub(…)`.
    fn new_stub(&mut self, k: usize, svc: &'a str) {
        let t = self.t;
        let mut start = k - 3;
        while start >= 3 && t.op2(start - 2, b"::") && t.ident(start - 3).is_some() {
            start -= 3;
        }
        let mut var = None;
        if start >= 2 && t.is_punct(start - 1, b'=') && !t.is_punct(start - 2, b'=') {
            var = t.ident(start - 2);
        } else if start >= 2
            && (t.is_punct(start - 1, b'(') || t.is_punct(start - 1, b'{'))
            && let Some(v) = t.ident(start - 2)
        {
            // `stub_(…)` in an initializer list or `unique_ptr<…> stub(…)`, not `f(…)`.
            let declares = start.checked_sub(3).is_some_and(|b| {
                t.is_punct(b, b':')
                    || t.is_punct(b, b',')
                    || t.is_punct(b, b'>')
                    || t.is_punct(b, b'*')
                    || t.is_punct(b, b'&')
                    || t.ident(b)
                        .is_some_and(|x| !matches!(x, "return" | "co_return"))
            });
            if declares && !NOT_NAMES.contains(&v) && !v.contains("make_") && v != "move" {
                var = Some(v);
            }
        }
        if let Some(v) = var {
            self.bind(v, svc, k);
        }
        self.facts.grpc.push(GrpcFact::Client {
            service: svc.to_string(),
            var: var.map(str::to_string),
            line: t.line(k),
        });
    }

    /// `std::unique_ptr<Svc::Stub> stub_;`, `Svc::StubInterface* stub`.
    fn typed_stub(&mut self, k: usize, svc: &'a str) {
        let t = self.t;
        let mut j = k + 1;
        while t.is_punct(j, b'>') || t.is_punct(j, b'*') || t.is_punct(j, b'&') || t.is(j, "const")
        {
            j += 1;
        }
        let Some(name) = t.ident(j) else { return };
        let ends = [b';', b'=', b'(', b'{', b',', b')'];
        if ends.iter().any(|&c| t.is_punct(j + 1, c)) {
            self.bind(name, svc, k);
        }
    }

    fn calls(&mut self) {
        let t = self.t;
        if self.bindings.is_empty() {
            return;
        }
        for k in 0..t.len() {
            // The shape first (cheap), the hash lookup last.
            if !t.is_punct(k + 1, b'.') && !t.op2(k + 1, b"->") {
                continue;
            }
            let Some(recv) = t.ident(k) else { continue };
            let Some(list) = self.bindings.get(recv) else {
                continue;
            };
            // `stub_->M(`, `stub.M(`, `stub_->async()->M(`, `stub_.get()->M(`.
            let mut j = k + 1;
            let mut method = None;
            for _ in 0..2 {
                let arrow = if t.op2(j, b"->") {
                    2
                } else if t.is_punct(j, b'.') {
                    1
                } else {
                    break;
                };
                let Some(m) = t.ident(j + arrow) else { break };
                if !t.is_punct(j + arrow + 1, b'(') {
                    break;
                }
                if matches!(m, "async" | "experimental_async" | "get")
                    && t.is_punct(j + arrow + 2, b')')
                {
                    j += arrow + 3;
                    continue;
                }
                method = Some((m, j + arrow));
                break;
            }
            let Some((m, mt)) = method else { continue };
            if !m.starts_with(|c: char| c.is_ascii_uppercase()) {
                continue;
            }
            let body = self.body_of(k);
            let hit = list.iter().rev().take(LOOKBACK).find(|(_, s)| match *s {
                Scope::Field => true,
                Scope::Local(b, from) => body == Some(b) && k > from,
            });
            let Some((svc, _)) = hit else { continue };
            let rpc = m
                .strip_prefix("PrepareAsync")
                .or_else(|| m.strip_prefix("Async"))
                .filter(|r| r.starts_with(|c: char| c.is_ascii_uppercase()))
                .unwrap_or(m);
            self.facts.grpc.push(GrpcFact::Call {
                service: Some(svc.clone()),
                receiver: recv.to_string(),
                method: rpc.to_string(),
                line: t.line(mt),
            });
        }
    }

    fn push_event(&mut self, role: EventRole, topic: Value, via: &str, line: u32) {
        self.facts.events.push(EventFact {
            role,
            topic,
            via: via.to_string(),
            line,
        });
    }

    /// cppkafka `MessageBuilder("t")` / `MessageBuilder builder(topic);`.
    fn message_builder(&mut self, k: usize) {
        let t = self.t;
        let open = if t.is_punct(k + 1, b'(') || t.is_punct(k + 1, b'{') {
            k + 1
        } else if t.ident(k + 1).is_some() && (t.is_punct(k + 2, b'(') || t.is_punct(k + 2, b'{')) {
            k + 2
        } else {
            return;
        };
        if let Some(&r) = t.args(open).first()
            && let Some(topic) = self.topic_expr(r)
        {
            self.push_event(EventRole::Producer, topic, "cppkafka", t.line(k));
        }
    }

    /// The topics of `{"a", "b"}`, `std::vector<std::string>{…}`, or a variable assigned one.
    fn topic_list(&self, (s, e): (usize, usize), at: usize) -> Vec<(Value, u32)> {
        let t = self.t;
        let open = (s..e).find(|&x| t.is_punct(x, b'{'));
        if let Some(open) = open
            && t.close(open).is_some_and(|c| c + 1 == e)
        {
            return t
                .args(open)
                .into_iter()
                .filter_map(|r| self.topic_expr(r).map(|x| (x, t.line(r.0))))
                .collect();
        }
        if e == s + 1
            && let Some(name) = t.ident(s)
            && let Some(a) = self.asg.last(name, at)
            && (a.rhs.0..a.rhs.1).any(|x| t.is_punct(x, b'{'))
        {
            return self.topic_list(a.rhs, a.at).into_iter().collect();
        }
        self.topic_expr((s, e))
            .map(|x| vec![(x, t.line(s))])
            .unwrap_or_default()
    }

    /// A topic argument: a literal that looks like a topic name, or whatever the evaluator
    /// reads (`getenv("T")`, a constant or macro left to the graph — `topics::kOrders` gives
    /// `topics.kOrders` — a local traced to its value, or a run-time value, kept so the graph
    /// lists the site as unresolved).
    fn topic_expr(&self, r: (usize, usize)) -> Option<Value> {
        let (s, e) = self.peel(r);
        if s >= e {
            return None;
        }
        let v = self.value((s, e));
        match v.as_lit() {
            Some(lit) => looks_like_topic(lit).then_some(v),
            None => Some(v),
        }
    }

    /// cpr: `cpr::Get(cpr::Url{"http://orders/x"}, …)`.
    fn cpr_call(&mut self, k: usize, id: &str) {
        let t = self.t;
        let args = t.args(k + 1);
        let url = args
            .iter()
            .find(|&&(a, b)| (a..b).any(|x| t.is(x, "Url")))
            .or(args.first());
        if let Some(&r) = url
            && let Some(url) = self.url(r, true)
        {
            self.facts.http.push(HttpFact::Call {
                method: Some(id.to_ascii_uppercase()),
                url,
                line: t.line(k),
            });
        }
    }

    /// cpp-httplib: `svr.Get("/x", handler)` is a route, `cli.Get("/x")` a call.
    fn httplib_call(&mut self, k: usize, id: &str) {
        let t = self.t;
        let args = t.args(k + 1);
        let Some(&(ps, pe)) = args.first() else {
            return;
        };
        let handler_arg = args.get(1).filter(|&&(a, b)| {
            args.len() == 2 && (t.is_punct(a, b'[') || (b == a + 1 && t.ident(a).is_some()))
        });
        if let Some(&(a, b)) = handler_arg {
            if pe == ps + 1
                && t.is_str(ps)
                && let Some(path) = t.str_value(ps).filter(|p| p.starts_with('/'))
            {
                let handler = (b == a + 1).then(|| t.text(a).to_string());
                self.facts.http.push(HttpFact::Route {
                    method: id.to_ascii_uppercase(),
                    path: path.into_owned(),
                    handler,
                    line: t.line(k),
                });
            }
            return;
        }
        // Any object may have a `Get`: the argument must read like a URL.
        if let Some(url) = self.url((ps, pe), false) {
            self.facts.http.push(HttpFact::Call {
                method: Some(id.to_ascii_uppercase()),
                url,
                line: t.line(k),
            });
        }
    }

    /// Crow: `CROW_ROUTE(app, "/orders/<int>").methods("POST"_method)(handler)`.
    fn crow_route(&mut self, k: usize) {
        let t = self.t;
        let args = t.args(k + 1);
        let Some(&(ps, pe)) = args.get(1) else { return };
        if pe != ps + 1 || !t.is_str(ps) {
            return;
        }
        let Some(path) = t.str_value(ps) else { return };
        let mut methods = Vec::new();
        if let Some(c) = t.close(k + 1)
            && t.is_punct(c + 1, b'.')
            && t.is(c + 2, "methods")
            && t.is_punct(c + 3, b'(')
        {
            let end = t.close(c + 3).unwrap_or(t.len());
            for x in c + 4..end {
                if t.is_str(x)
                    && let Some(m) = t.str_value(x)
                {
                    methods.push(m.to_ascii_uppercase());
                } else if t.op2(x.saturating_sub(2), b"::")
                    && t.is(x.saturating_sub(3), "HTTPMethod")
                    && let Some(m) = t.ident(x)
                {
                    methods.push(m.to_ascii_uppercase());
                }
            }
        }
        if methods.is_empty() {
            methods.push("ANY".to_string());
        }
        for method in methods {
            self.facts.http.push(HttpFact::Route {
                method,
                path: path.to_string(),
                handler: None,
                line: t.line(k),
            });
        }
    }

    /// libcurl: `curl_easy_setopt(h, CURLOPT_URL, url)`.
    fn curl_url(&mut self, k: usize) {
        let t = self.t;
        let args = t.args(k + 1);
        if let [_, (os, oe), r] = args[..]
            && oe == os + 1
            && t.kw(os, "CURLOPT_URL")
            && let Some(url) = self.url(r, true)
        {
            self.facts.http.push(HttpFact::Call {
                method: None,
                url,
                line: t.line(k),
            });
        }
    }

    /// The URL argument of an HTTP call. `sure` when the call is HTTP whatever its argument
    /// (cpr, libcurl); otherwise it must read like a URL, so `cache.Get(key)` is no request.
    fn url(&self, r: (usize, usize), sure: bool) -> Option<Value> {
        let (s, e) = self.peel(r);
        if s >= e {
            return None;
        }
        let v = self.value((s, e));
        (sure || looks_like_url(&v)).then_some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::lang::test_support::{
        brief, consts, consts_at, events, every_prefix, every_short_token_sequence, extract_each,
        grpc_clients, grpc_servers, import_lines, junk_bytes32, lit, names, sym,
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
        let calls: Vec<(&str, &str, &str, u32)> = f
            .grpc
            .iter()
            .filter_map(|g| match g {
                GrpcFact::Call {
                    service,
                    receiver,
                    method,
                    line,
                } => Some((
                    service.as_deref().unwrap_or("?"),
                    receiver.as_str(),
                    method.as_str(),
                    *line,
                )),
                _ => None,
            })
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
                HttpFact::Route { .. } => None,
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
        for end in 0..=src.len() {
            if src.is_char_boundary(end) {
                let _ = extract("p.cc", &src[..end]);
            }
        }
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
        let text = junk_bytes32(alphabet, 0x2545_f491);
        let f = extract("junk.cc", &text);
        assert!(f.symbols.len() < 200_000);
    }
}
