//! Scala extractor (Scala 2 and 3): package clauses (chained and block form), imports with
//! selectors and renames, classes, case classes, objects, traits, enums (Scala 3, with their
//! cases), defs, vals/vars, type members, in brace or indentation-based bodies; string
//! constants in objects and classes; then the shared JVM recognisers ([`super::jvm`]), which
//! know ScalaPB (`extends XGrpc.X`, `XGrpc.bindService(new Impl, ec)`, `XGrpc.stub(ch)` /
//! `blockingStub(ch)`) besides kafka-clients and the HTTP clients.
//!
//! Bodies are either braces (paired in one pass) or Scala 3 indentation after a trailing `:`;
//! an indented body ends at the first line indented no deeper than its header (an `end X`
//! marker belongs to it). Initializers and def bodies are skipped whole by the same rule.

use super::jvm::{self, Ann, Dialect, MethodDecl, Src, TokKind, TypeDecl};
use super::tokens::Tok;
use crate::index::facts::{FileFacts, Import, SymbolKind};
use crate::index::lex::{Syntax, lex};

/// Extracts the facts of one Scala file (`.scala` or `.sc`).
pub fn extract(path: &str, text: &str) -> FileFacts {
    let _ = path;
    let lx = lex(Syntax::SCALA, text);
    let src = Src::new(&lx, Dialect::Scala);
    let mut p = Parser {
        src: &src,
        out: jvm::Parsed::default(),
        stack: Vec::new(),
        packages: Vec::new(),
    };
    p.run();
    p.out.finish(&src)
}

/// How an open type body ends.
#[derive(Clone, Copy)]
enum Close {
    /// At this closing brace.
    Brace(usize),
    /// At the first line indented at or left of this column.
    Indent(usize),
}

struct Frame {
    ty: usize,
    sym: usize,
    close: Close,
    is_enum: bool,
}

#[derive(Default)]
struct Pending<'a> {
    start: Option<usize>,
    anns: Vec<Ann<'a>>,
    is_case: bool,
}

struct Parser<'s, 'a> {
    src: &'s Src<'a>,
    out: jvm::Parsed<'a>,
    stack: Vec<Frame>,
    packages: Vec<String>,
}

fn is_modifier(w: &str) -> bool {
    matches!(
        w,
        "private"
            | "protected"
            | "override"
            | "final"
            | "sealed"
            | "abstract"
            | "implicit"
            | "lazy"
            | "inline"
            | "opaque"
            | "transparent"
            | "open"
            | "infix"
            | "case"
    )
}

impl<'s, 'a> Parser<'s, 'a> {
    /// The column of token `i`.
    fn col(&self, i: usize) -> usize {
        let Some(t) = self.src.toks.get(i) else {
            return 0;
        };
        let ls = self
            .src
            .lx
            .line_starts
            .get((t.line.max(1) - 1) as usize)
            .copied()
            .unwrap_or(0);
        (t.start as usize).saturating_sub(ls)
    }

    /// The indentation of the line holding token `i` (the column of its first token).
    fn line_indent(&self, i: usize) -> usize {
        let mut j = i.min(self.src.len().saturating_sub(1));
        while j > 0 && !self.src.toks[j].nl_before {
            j -= 1;
        }
        self.col(j)
    }

    fn run(&mut self) {
        let src = self.src;
        let n = src.len();
        let mut pending = Pending::default();
        let mut i = 0;
        while i < n {
            let t = src.toks[i];
            if t.nl_before && self.dedent(i) {
                // `end X` closed a body: skip the marker's line.
                i += 1;
                while i < n && !src.toks[i].nl_before {
                    i += 1;
                }
                pending = Pending::default();
                continue;
            }
            match (t.kind, t.text) {
                (TokKind::Punct, "}") => {
                    if let Some(f) = self.stack.last()
                        && matches!(f.close, Close::Brace(c) if c == i)
                    {
                        self.pop(i, i);
                    }
                    pending = Pending::default();
                    i += 1;
                }
                (TokKind::Punct, "@") => match jvm::parse_ann(src, i) {
                    Some(a) => {
                        pending.start.get_or_insert(i);
                        pending.anns.push(a);
                        i = a.end.max(i + 1);
                    }
                    None => i += 1,
                },
                (TokKind::Punct, "{") => {
                    i = src.close_or_end(i) + 1;
                    pending = Pending::default();
                }
                (TokKind::Punct, "=") => {
                    let base = self.line_indent(i);
                    i = self.expr_end(i + 1, base).max(i + 1);
                    pending = Pending::default();
                }
                (TokKind::Ident, "case")
                    if !(src.kw(i + 1, "class") || src.kw(i + 1, "object"))
                        && self.stack.last().is_some_and(|f| f.is_enum) =>
                {
                    i = self.enum_cases(i, std::mem::take(&mut pending));
                }
                (TokKind::Ident, w) if is_modifier(w) => {
                    pending.start.get_or_insert(i);
                    if w == "case" {
                        pending.is_case = true;
                    }
                    i += 1;
                    // `private[pkg]`.
                    if src.is(i, "[") {
                        i = src.close_or_end(i) + 1;
                    }
                }
                (TokKind::Ident, "package") => {
                    i = self.package(i, std::mem::take(&mut pending));
                }
                (TokKind::Ident, "import") => {
                    i = self.import(i);
                    pending = Pending::default();
                }
                (TokKind::Ident, "class" | "trait" | "object" | "enum") => {
                    i = self.type_decl(i, std::mem::take(&mut pending));
                }
                (TokKind::Ident, "def") => {
                    i = self.def(i, std::mem::take(&mut pending));
                }
                (TokKind::Ident, "val" | "var" | "given") => {
                    i = self.value(i, std::mem::take(&mut pending));
                }
                (TokKind::Ident, "type") => {
                    i = self.type_member(i, std::mem::take(&mut pending));
                }
                (TokKind::Ident, "extension") if src.is(i + 1, "(") => {
                    // `extension (s: String) def x = …` / indented defs / `{ … }`: walk the
                    // defs as top-level members.
                    i = src.close_or_end(i + 1) + 1;
                    if src.is(i, "{") {
                        i += 1;
                    }
                    pending = Pending::default();
                }
                _ => {
                    i += 1;
                    pending = Pending::default();
                }
            }
        }
        let last = n.saturating_sub(1);
        while !self.stack.is_empty() {
            self.pop(last, last);
        }
    }

    /// Closes indentation bodies that the line starting at token `i` leaves. Returns true when
    /// the line is an `end` marker that closed one.
    fn dedent(&mut self, i: usize) -> bool {
        let col = self.col(i);
        while let Some(f) = self.stack.last() {
            let Close::Indent(c) = f.close else {
                return false;
            };
            if col > c {
                return false;
            }
            if self.src.kw(i, "end") && col == c {
                let mut j = i;
                while j + 1 < self.src.len() && !self.src.toks[j + 1].nl_before {
                    j += 1;
                }
                self.pop(j, j);
                return true;
            }
            self.pop(i.saturating_sub(1), i.saturating_sub(1));
        }
        false
    }

    /// Pops the innermost body, ending at token `last` (its end line) and `span_end`.
    fn pop(&mut self, last: usize, span_end: usize) {
        if let Some(f) = self.stack.pop() {
            self.out.facts.symbols[f.sym].end_line = self
                .src
                .end_line(last)
                .max(self.out.facts.symbols[f.sym].line);
            self.out.model.types[f.ty].span.1 = span_end;
        }
    }

    fn container(&self) -> (Option<usize>, Option<String>) {
        self.out.container(self.stack.last().map(|f| f.ty))
    }

    fn doc(&self, pending: &Pending, kw: usize) -> Option<u32> {
        let first = pending.start.unwrap_or(kw);
        jvm::doc_line(self.src.lx, self.src.line(first), !pending.anns.is_empty())
    }

    /// The end (exclusive) of an expression starting at `i` in a declaration whose line is
    /// indented at `base`: the first line indented no deeper, or an unmatched closer / `;`.
    fn expr_end(&self, i: usize, base: usize) -> usize {
        self.src.expr_end(i, usize::MAX, |k| self.col(k) <= base)
    }

    /// Where a declaration header that starts at token `from` stops: at the first token that
    /// starts a line indented no deeper than `base` (from token `newline_from` on), is one of
    /// the punctuation `stops`, or is one `also` accepts; bracketed groups are skipped whole.
    fn header_stop(
        &self,
        from: usize,
        newline_from: usize,
        base: usize,
        stops: &[&str],
        also: impl Fn(&Tok<'a>) -> bool,
    ) -> usize {
        let src = self.src;
        let mut j = from;
        while let Some(t) = src.toks.get(j) {
            if j >= newline_from && t.nl_before && self.col(j) <= base {
                break;
            }
            if t.kind == TokKind::Punct && stops.contains(&t.text) {
                break;
            }
            if also(t) {
                break;
            }
            if src.is_opener(j) {
                j = src.close_or_end(j) + 1;
                continue;
            }
            j += 1;
        }
        j
    }

    /// `package a.b` (chained clauses accumulate), `package a.b { … }`, `package object x`.
    fn package(&mut self, at: usize, pending: Pending<'a>) -> usize {
        let src = self.src;
        if src.kw(at + 1, "object") {
            return self.type_decl(at + 1, pending);
        }
        let (segs, mut k) = self.qualified(at + 1);
        if !segs.is_empty() {
            self.packages.push(segs.join("."));
            self.out.facts.package = Some(self.packages.join("."));
        }
        if src.is(k, "{") || (src.is(k, ":") && src.toks.get(k + 1).is_none_or(|t| t.nl_before)) {
            // A packaging block: its members are walked; its `}` is skipped as stray.
            k += 1;
        } else if src.is(k, ";") {
            k += 1;
        }
        k.max(at + 1)
    }

    /// A dotted name starting at `at`, and the index after it.
    fn qualified(&self, at: usize) -> (Vec<&'a str>, usize) {
        self.src.dotted(at, false)
    }

    /// `import a.b.C`, `import a.b._`, `import a.b.{C, D => E}`, `import a.b.C as D`,
    /// `import a.B, c.D` (one fact per clause).
    fn import(&mut self, at: usize) -> usize {
        let src = self.src;
        let line = src.line(at);
        let mut k = at + 1;
        loop {
            let mut segs: Vec<&str> = Vec::new();
            let mut names: Vec<String> = Vec::new();
            let mut renamed: Vec<(String, String)> = Vec::new();
            let mut alias = None;
            let mut whole = false;
            while let Some(id) = src.ident(k) {
                if k > at + 1 && src.toks[k].nl_before && segs.is_empty() {
                    break;
                }
                if id == "_" || id == "given" {
                    whole = true;
                    k += 1;
                    break;
                }
                segs.push(id);
                k += 1;
                if !src.is(k, ".") {
                    break;
                }
                k += 1;
                if src.is(k, "*") {
                    whole = true;
                    k += 1;
                    break;
                }
                if src.is(k, "{") {
                    let close = src.close_or_end(k);
                    let parts = src.split_commas(k + 1, close);
                    let single = parts.len() == 1;
                    for (a, b) in parts {
                        let Some(name) = src.ident(a) else { continue };
                        if name == "_" || name == "given" {
                            whole = true;
                            continue;
                        }
                        if b > a + 2 && (src.is(a + 1, "=>") || src.kw(a + 1, "as")) {
                            if src.kw(a + 2, "_") {
                                continue; // `C => _` hides C.
                            }
                            if single {
                                alias = src.ident(a + 2).map(str::to_string);
                            }
                            if let Some(local) = src.ident(a + 2).filter(|l| *l != name) {
                                renamed.push((name.to_string(), local.to_string()));
                            }
                        }
                        names.push(name.to_string());
                    }
                    k = close + 1;
                    break;
                }
            }
            if src.kw(k, "as") && !src.toks[k].nl_before {
                alias = src.ident(k + 1).map(str::to_string);
                k += 2;
            }
            if !segs.is_empty() {
                let module = segs.join(".");
                if names.is_empty() && !whole {
                    let last = segs.last().map_or(String::new(), |s| s.to_string());
                    // `import a.b.C as D` binds `C` as `D`.
                    if let Some(local) = alias.as_ref().filter(|l| **l != last) {
                        renamed.push((last.clone(), local.clone()));
                    }
                    names.push(last);
                } else if whole && names.is_empty() {
                    names.clear();
                }
                self.out.facts.imports.push(Import {
                    module,
                    names,
                    alias,
                    line,
                    reexport: false,
                    renamed,
                });
            }
            if src.is(k, ",") && !src.toks.get(k + 1).is_some_and(|t| t.nl_before) {
                k += 1;
                continue;
            }
            break;
        }
        if src.is(k, ";") {
            k += 1;
        }
        k.max(at + 1)
    }

    /// `class`/`trait`/`object`/`enum` at `kw`.
    fn type_decl(&mut self, kw: usize, pending: Pending<'a>) -> usize {
        let src = self.src;
        let word = src.toks[kw].text;
        let Some(name) = src.ident(kw + 1) else {
            return kw + 1;
        };
        let base = self.line_indent(pending.start.unwrap_or(kw));
        let kind = match word {
            "trait" => SymbolKind::Trait,
            "enum" => SymbolKind::Enum,
            _ => SymbolKind::Class,
        };
        let mut j = kw + 2;
        let mut params: Vec<(usize, usize)> = Vec::new();
        let mut supers: Vec<(Option<&'a str>, &'a str)> = Vec::new();
        let mut listing = false;
        let mut expect_super = false;
        let mut indent_body = false;
        while let Some(t) = src.toks.get(j) {
            if j > kw + 1 && t.nl_before && self.col(j) <= base {
                break;
            }
            match (t.kind, t.text) {
                (TokKind::Punct, "{") => break,
                (TokKind::Punct, ":") if src.toks.get(j + 1).is_none_or(|n| n.nl_before) => {
                    indent_body = true;
                    break;
                }
                (TokKind::Punct, "}" | ")" | "]" | ";" | "=") => break,
                (TokKind::Punct, "(") => {
                    if !listing {
                        params.push((j + 1, src.close_or_end(j)));
                    }
                    j = src.close_or_end(j) + 1;
                    continue;
                }
                (TokKind::Punct, "[") => {
                    j = src.close_or_end(j) + 1;
                    continue;
                }
                (TokKind::Punct, "@") => {
                    j = jvm::parse_ann(src, j).map_or(j + 1, |a| a.end.max(j + 1));
                    continue;
                }
                (TokKind::Punct, ",") if listing => expect_super = true,
                (TokKind::Ident, "extends") => {
                    listing = true;
                    expect_super = true;
                }
                (TokKind::Ident, "with") if listing => {
                    // Scala 3 `object X extends Y with` + indented body.
                    if src.toks.get(j + 1).is_none_or(|n| n.nl_before) {
                        indent_body = true;
                        break;
                    }
                    expect_super = true;
                }
                (TokKind::Ident, "derives") => listing = false,
                (TokKind::Ident, _) if listing && expect_super => {
                    if let Some((prev, last, at)) = src.type_path(j, src.len()) {
                        supers.push((prev, last));
                        j = at;
                    }
                    expect_super = false;
                }
                _ => {}
            }
            j += 1;
        }
        let line = src.line(kw + 1);
        let doc = self.doc(&pending, kw);
        let (parent, container) = self.container();
        let brace = src.is(j, "{");
        let (close, end_line, span_end, next) = if brace {
            let c = src.close_or_end(j);
            (Some(Close::Brace(c)), src.line(c), c, j + 1)
        } else if indent_body {
            (Some(Close::Indent(base)), src.line(j), j, j + 1)
        } else {
            let last = j.saturating_sub(1).max(kw + 1);
            (None, src.end_line(last), last, j)
        };
        let decl = TypeDecl {
            name,
            line,
            kind,
            anns: pending.anns,
            supers,
            span: (kw, span_end),
            parent,
            companion: false,
        };
        let (sym, ty) = self.out.push_type(decl, end_line, doc, container);
        // Constructor `val`s, and every parameter of a case class, are fields.
        if let Some(&(a, b)) = params.first() {
            self.ctor_fields(a, b, name, pending.is_case);
        }
        if let Some(close) = close {
            self.stack.push(Frame {
                ty,
                sym,
                close,
                is_enum: kind == SymbolKind::Enum,
            });
        }
        next.max(kw + 1)
    }

    fn ctor_fields(&mut self, a: usize, b: usize, class: &str, is_case: bool) {
        let src = self.src;
        for (x, y) in src.split_commas(a, b) {
            let mut k = x;
            let mut annotated = false;
            let mut is_val = is_case;
            while k < y {
                if src.is(k, "@") {
                    annotated = true;
                    k = jvm::parse_ann(src, k).map_or(k + 1, |an| an.end.max(k + 1));
                } else if src.kw(k, "val") || src.kw(k, "var") {
                    is_val = true;
                    k += 1;
                } else if src.ident(k).is_some_and(is_modifier) {
                    k += 1;
                    if src.is(k, "[") {
                        k = src.close_or_end(k) + 1;
                    }
                } else {
                    break;
                }
            }
            if !is_val || !src.is(k + 1, ":") {
                continue;
            }
            let Some(name) = src.ident(k) else { continue };
            let doc = jvm::doc_line(src.lx, src.line(x), annotated);
            self.out.facts.push_symbol(
                name,
                SymbolKind::Field,
                (src.line(k), src.line(y - 1)),
                doc,
                Some(class.to_string()),
            );
        }
    }

    fn def(&mut self, kw: usize, pending: Pending<'a>) -> usize {
        let src = self.src;
        let base = self.line_indent(pending.start.unwrap_or(kw));
        let name_tok = src.toks.get(kw + 1).copied();
        // Header: type params, parameter lists, result type, up to `=` / `{` / the line end.
        let j = self.header_stop(kw + 2, kw + 2, base, &["=", "{", "}", ")", ";"], |_| false);
        let (end_line, next) = if src.is(j, "=") {
            let e = self.expr_end(j + 1, base);
            (src.end_line(e.saturating_sub(1)), e)
        } else if src.is(j, "{") {
            let c = src.close_or_end(j);
            (src.line(c), c + 1)
        } else {
            (src.end_line(j.saturating_sub(1)), j)
        };
        let Some(name_tok) = name_tok.filter(|t| t.kind == TokKind::Ident) else {
            return next.max(kw + 1);
        };
        let (owner, container) = self.container();
        let (name, kind) = match (name_tok.text, &container) {
            ("this", Some(c)) => (c.clone(), SymbolKind::Constructor),
            (n, Some(_)) => (n.to_string(), SymbolKind::Method),
            (n, None) => (n.to_string(), SymbolKind::Function),
        };
        let doc = self.doc(&pending, kw);
        self.out
            .facts
            .push_symbol(&name, kind, (name_tok.line, end_line), doc, container);
        self.out.model.methods.push(MethodDecl {
            name: if kind == SymbolKind::Constructor {
                owner.map_or(name_tok.text, |o| self.out.model.types[o].name)
            } else {
                name_tok.text
            },
            owner,
            anns: pending.anns,
        });
        next.max(kw + 1)
    }

    /// `val`/`var`/`given` at `kw`.
    fn value(&mut self, kw: usize, pending: Pending<'a>) -> usize {
        let src = self.src;
        let base = self.line_indent(pending.start.unwrap_or(kw));
        let given = src.kw(kw, "given");
        let name_at = kw + 1;
        // The name: an identifier followed by `:`, `=` or the line end (patterns are skipped).
        let named = src.ident(name_at).is_some()
            && (src.is(name_at + 1, ":")
                || src.is(name_at + 1, "=")
                || src.toks.get(name_at + 1).is_none_or(|t| t.nl_before)
                || src.is(name_at + 1, ";"));
        let j = self.header_stop(name_at, kw + 2, base, &["=", "}", ")", ";"], |t| {
            given && (t.text == "{" || (t.text == "with" && t.kind == TokKind::Ident))
        });
        let (init, end) = if src.is(j, "=") {
            let e = self.expr_end(j + 1, base);
            (Some((j + 1, e)), e)
        } else if given {
            (None, self.expr_end(j, base))
        } else {
            (None, j)
        };
        if !named || given && !src.is(name_at + 1, ":") {
            return end.max(kw + 1);
        }
        let name = src.toks[name_at].text;
        let (owner, container) = self.container();
        if let Some(range) = init
            && !given
        {
            self.out
                .record_const(src, owner, name, range, src.line(name_at));
        }
        let constant = src.kw(kw, "val") && name.starts_with(|c: char| c.is_ascii_uppercase());
        let doc = self.doc(&pending, kw);
        let at = (name_at, end);
        self.out
            .push_value(src, at, constant, (owner, container), doc);
        end.max(kw + 1)
    }

    /// `type T = …`, `opaque type T = …`, abstract `type T`.
    fn type_member(&mut self, kw: usize, pending: Pending<'a>) -> usize {
        let src = self.src;
        let Some(name) = src.ident(kw + 1) else {
            return kw + 1;
        };
        let base = self.line_indent(pending.start.unwrap_or(kw));
        let j = self.header_stop(kw + 2, kw + 2, base, &["=", "}", ")", ";"], |_| false);
        let end = if src.is(j, "=") {
            self.expr_end(j + 1, base)
        } else {
            j
        };
        let doc = self.doc(&pending, kw);
        let container = self.container().1;
        self.out.facts.push_symbol(
            name,
            SymbolKind::TypeAlias,
            (src.line(kw + 1), src.end_line(end.saturating_sub(1))),
            doc,
            container,
        );
        end.max(kw + 1)
    }

    /// `case A, B` / `case C extends E(…)` / `case D(x: Int)` inside an enum.
    fn enum_cases(&mut self, kw: usize, pending: Pending<'a>) -> usize {
        let src = self.src;
        let Some(frame) = self.stack.last() else {
            return kw + 1;
        };
        let enum_name = self.out.model.types[frame.ty].name.to_string();
        let doc = self.doc(&pending, kw);
        let mut j = kw + 1;
        while let Some(name) = src.ident(j) {
            if j > kw + 1 && src.toks[j].nl_before {
                break;
            }
            let line = src.line(j);
            j += 1;
            if src.is(j, "(") || src.is(j, "[") {
                j = src.close_or_end(j) + 1;
            }
            self.out.facts.push_symbol(
                name,
                SymbolKind::EnumValue,
                (line, line),
                doc,
                Some(enum_name.clone()),
            );
            if src.is(j, ",") {
                j += 1;
                continue;
            }
            break;
        }
        // The rest of the case (`extends Color("r")`) up to the line end.
        while j < src.len() && !src.toks[j].nl_before && !src.is(j, "}") {
            if src.is_opener(j) {
                j = src.close_or_end(j) + 1;
                continue;
            }
            j += 1;
        }
        j.max(kw + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::facts::GrpcFact;
    use crate::index::lang::test_support::{
        assert_no_syms, constructor, consts, import_names, names, sym,
    };

    #[test]
    fn packages_imports_and_declarations() {
        let src = r#"package com.acme
package orders

import scala.concurrent.{ExecutionContext, Future => F}
import com.acme.pb._
import java.util.{List => JList}
import io.grpc.ManagedChannel, io.grpc.Server
import scala.jdk.CollectionConverters.*

/** Orders. */
@deprecated("x", "1")
final case class Order(id: String, total: Long)

sealed trait Event {
  def id: String
}

object Topics {
  val OrderCreated = "orders.created"
  final val OrderPaid: String = "orders.paid"
  val interpolated = s"orders.$region"
  private[acme] val limit = 10
}

class Service[F[_]: Monad](repo: Repo, val name: String)(implicit ec: ExecutionContext)
    extends Base with Logging {
  def find(
      id: String,
      limit: Int
  ): Future[Option[Order]] = {
    val local = 1
    repo.find(id)
  }

  def this(repo: Repo) = this(repo, "default")(ExecutionContext.global)

  lazy val cache = Map.empty[String, Order]
  type Key = String

  object Inner {
    def deep(): Unit = ()
  }
}

enum Color(val rgb: Int):
  case Red extends Color(0xff0000)
  case Green, Blue extends Color(0)

  def hex: String =
    val h = rgb.toHexString
    h
end Color

object Main extends App:
  def run(): Unit = println("x")
  val answer = 42

def topLevel(x: Int): Int = x + 1
"#;
        let f = extract("src/Orders.scala", src);
        assert_eq!(f.package.as_deref(), Some("com.acme.orders"));
        let imps = import_names(&f);
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            imps,
            vec![
                ("scala.concurrent", s(&["ExecutionContext", "Future"]), None),
                ("com.acme.pb", vec![], None),
                ("java.util", s(&["List"]), Some("JList")),
                ("io.grpc.ManagedChannel", s(&["ManagedChannel"]), None),
                ("io.grpc.Server", s(&["Server"]), None),
                ("scala.jdk.CollectionConverters", vec![], None),
            ]
        );
        let order = sym(&f, "Order");
        assert_eq!(
            (order.kind, order.line, order.end_line, order.doc_line),
            (SymbolKind::Class, 12, 12, Some(10))
        );
        assert_eq!(sym(&f, "total").container.as_deref(), Some("Order"));
        let event = sym(&f, "Event");
        assert_eq!((event.kind, event.end_line), (SymbolKind::Trait, 16));
        let abstract_id = f
            .symbols
            .iter()
            .find(|s| s.name == "id" && s.container.as_deref() == Some("Event"))
            .unwrap();
        assert_eq!(abstract_id.kind, SymbolKind::Method);
        assert_eq!(sym(&f, "OrderCreated").kind, SymbolKind::Constant);
        assert_eq!(sym(&f, "limit").container.as_deref(), Some("Topics"));
        let service = sym(&f, "Service");
        assert_eq!((service.line, service.end_line), (25, 43));
        assert_eq!(sym(&f, "name").container.as_deref(), Some("Service"));
        let find = sym(&f, "find");
        assert_eq!(
            (find.kind, find.line, find.end_line),
            (SymbolKind::Method, 27, 33)
        );
        assert_no_syms(&f, &["local", "h"]);
        let ctor = constructor(&f);
        assert_eq!((ctor.name.as_str(), ctor.line), ("Service", 35));
        assert_eq!(sym(&f, "cache").kind, SymbolKind::Field);
        assert_eq!(sym(&f, "Key").kind, SymbolKind::TypeAlias);
        assert_eq!(sym(&f, "deep").container.as_deref(), Some("Inner"));
        assert_eq!(sym(&f, "Inner").container.as_deref(), Some("Service"));
        let color = sym(&f, "Color");
        assert_eq!(
            (color.kind, color.line, color.end_line),
            (SymbolKind::Enum, 45, 52)
        );
        for v in ["Red", "Green", "Blue"] {
            assert_eq!(sym(&f, v).kind, SymbolKind::EnumValue);
            assert_eq!(sym(&f, v).container.as_deref(), Some("Color"));
        }
        let hex = sym(&f, "hex");
        assert_eq!(
            (hex.container.as_deref(), hex.end_line),
            (Some("Color"), 51)
        );
        let main = sym(&f, "Main");
        assert_eq!((main.line, main.end_line), (54, 56));
        assert_eq!(sym(&f, "run").container.as_deref(), Some("Main"));
        assert_eq!(sym(&f, "answer").container.as_deref(), Some("Main"));
        let top = sym(&f, "topLevel");
        assert_eq!(
            (top.kind, top.container.as_deref()),
            (SymbolKind::Function, None)
        );
        let consts = consts(&f);
        assert_eq!(
            consts,
            vec![
                ("Topics.OrderCreated", "orders.created"),
                ("Topics.OrderPaid", "orders.paid"),
                // From the shared tracker: every top-level val is a binding; an interpolated
                // or computed one holds names the graph resolves or reports.
                ("Topics.interpolated", "?"),
                ("Service.Key", "?"),
                ("hex", "?"),
                ("answer", "42"),
            ]
        );
    }

    #[test]
    fn comments_and_strings_are_ignored() {
        let src = r#"object Real {
  // class Fake1
  /* outer /* nested */ class Fake2 */
  val q = """class Fake3 { def no = 1 }"""
  val s = "class Fake4"
  def `weird name`(): Unit = ()
}
"#;
        let f = extract("Real.scala", src);
        assert_eq!(names(&f), vec!["Real", "q", "s", "weird name"]);
    }

    #[test]
    fn scalapb_servers_clients_and_calls() {
        let src = r#"package com.acme
import com.acme.orders.OrderServiceGrpc

class OrderServiceImpl(inventory: InventoryServiceGrpc.InventoryServiceStub)
    extends OrderServiceGrpc.OrderService {
  private val payments = PaymentServiceGrpc.blockingStub(channel)

  override def createOrder(req: CreateOrderRequest): Future[Order] = {
    payments.charge(req)
    inventory.reserve(req)
  }
}

object Server {
  val service = OrderServiceGrpc.bindService(new OrderServiceImpl(stub), ec)
  val users = UserServiceGrpc.stub(channel)
  def go() = users.getUser(req)
}
"#;
        let f = extract("OrderServiceImpl.scala", src);
        let got: Vec<String> = f
            .grpc
            .iter()
            .map(|g| match g {
                GrpcFact::Server {
                    service,
                    impl_type,
                    line,
                } => format!("server {service} {impl_type:?} {line}"),
                GrpcFact::Client { service, var, line } => {
                    format!("client {service} {var:?} {line}")
                }
                GrpcFact::Call {
                    service,
                    receiver,
                    method,
                    line,
                } => format!("call {service:?} {receiver}.{method} {line}"),
                GrpcFact::Handler { .. } => "handler".into(),
            })
            .collect();
        assert_eq!(
            got,
            vec![
                "server OrderService Some(\"OrderServiceImpl\") 4",
                "server OrderService Some(\"OrderServiceImpl\") 15",
                "client InventoryService Some(\"inventory\") 4",
                "client PaymentService Some(\"payments\") 6",
                "client UserService Some(\"users\") 16",
                "call Some(\"PaymentService\") payments.charge 9",
                "call Some(\"InventoryService\") inventory.reserve 10",
                "call Some(\"UserService\") users.getUser 17",
            ]
        );
        assert_eq!(
            sym(&f, "createOrder").container.as_deref(),
            Some("OrderServiceImpl")
        );
    }

    #[test]
    fn stray_closers_and_chained_packages_are_read_whole() {
        let f = extract("x.scala", "}}} object B { def ok = 1 }");
        assert_eq!(sym(&f, "ok").container.as_deref(), Some("B"));
        let f = extract("x.scala", "package a; package b.c\nobject X");
        assert_eq!(f.package.as_deref(), Some("a.b.c"));
    }
}
