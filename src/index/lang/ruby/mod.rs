//! Ruby extractor: declarations, requires, gRPC, Kafka and HTTP facts from one `.rb` file.
//!
//! The file is lexed once; the masked code is cut into statements (a line, continued inside
//! brackets, after a trailing `,`/`\`/operator, or before a leading `.method`), and `;` splits
//! statements on one line. One walk over the words of each statement keeps a stack of open
//! blocks: `class`/`module`/`def` and the other openers (`do`, and `if`/`unless`/`while`/
//! `until`/`case`/`begin`/`for` where they start an expression, never as modifiers) are closed
//! by `end`, which gives every declaration its end line and container. The same walk records
//! constants, requires, bindings (`@stub = Svc::Stub.new`, `consumer = kafka.consumer`), and
//! the calls on them: gRPC calls, Kafka producers/consumers (ruby-kafka, rdkafka, Racecar,
//! Karafka), Rails/Sinatra routes and Net::HTTP/Faraday/HTTParty calls.
//!
//! This file holds the statements and the walk; [`decls`] reads declarations, [`routes`] the
//! routing DSL, [`calls`] assignments and the calls on what they bind.

mod calls;
mod decls;
mod routes;

use calls::{assignment, call_token};
use decls::{constant_stmt, def_decl, mixin_stmt, require_stmt, type_decl};
use routes::dsl_stmt;

use std::collections::{HashMap, HashSet};

use super::bind::StmtStyle;
use super::common::{self, Brackets, ByteRanges};
use super::script;
use super::value::{ExprRules, eval, with_fallback};
use crate::index::facts::{
    Binding, EventRole, FileFacts, GrpcFact, HttpFact, Import, Part, Symbol, SymbolKind, Value,
};
use crate::index::lex::{self, Syntax, ident_after, ident_before, is_ident_byte};

/// Extracts the facts of one Ruby file.
pub fn extract(path: &str, text: &str) -> FileFacts {
    script::extract::<Ruby>(text, |src| {
        let code = src.code();
        let mut st = State {
            rdkafka: code.contains("Rdkafka"),
            httparty: code.contains("HTTParty"),
            routes_file: path.ends_with("routes.rb") || code.contains("routes.draw"),
            prefixes: vec![String::new()],
            ..State::default()
        };
        walk(src, &mut st);
        st.facts
    })
}

/// Ruby, as the script front end reads it.
struct Ruby;

impl script::Script for Ruby {
    const SYNTAX: Syntax = Syntax::RUBY;
    const STYLE: StmtStyle = StmtStyle::INDENT;
    const RULES: ExprRules = ExprRules::RUBY;
}

/// The file as the Ruby extractor reads it.
type Src<'a> = script::Src<'a, Ruby>;

#[derive(Debug, Clone, Copy)]
struct Stmt {
    start: usize,
    end: usize,
    line: u32,
}

/// What the children of a block see.
#[derive(Debug, Clone, Copy, Default)]
struct Ctx {
    /// The innermost class/module symbol.
    container: Option<usize>,
    /// The innermost `def` symbol (locals are scoped to it).
    def: Option<usize>,
    /// Index into `State::prefixes`: the route prefix of `namespace`/`scope`/`resources`.
    prefix: usize,
    /// Inside a Rails routes block (`routes.draw do`, `namespace … do`).
    in_routes: bool,
}

/// An open block: the declaration it closes (if any) and the context of its children.
#[derive(Debug, Clone, Copy)]
struct Block {
    symbol: Option<usize>,
    ctx: Ctx,
}

/// A gRPC stub bound to a name: `@stub`, or a local `stub` within its method.
struct StubVar {
    service: String,
    def: Option<usize>,
}

#[derive(Default)]
struct State {
    facts: FileFacts,
    rdkafka: bool,
    httparty: bool,
    routes_file: bool,
    prefixes: Vec<String>,
    /// Name as written (`@stub`, `stub`) → the stubs bound to it.
    stubs: HashMap<String, Vec<StubVar>>,
    /// Name → the library of the Kafka producer it holds.
    producers: HashMap<String, &'static str>,
    consumers: HashMap<String, &'static str>,
    http_clients: HashSet<String>,
}

/// Positional and keyword (`topic: x`, `:topic => x`) arguments of a call.
#[derive(Default)]
struct Args<'c> {
    positional: Vec<(usize, usize)>,
    keyword: Vec<(&'c str, (usize, usize))>,
}

impl Args<'_> {
    fn kw(&self, name: &str) -> Option<(usize, usize)> {
        self.keyword
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, r)| *r)
    }
}

/// The receiver chain of a call (`Orders::OrderService::Stub` in `…::Stub.new`, `@stub` in
/// `@stub.create_order`).
struct Chain<'c> {
    text: &'c str,
    start: usize,
    ends_with_call: Option<&'c str>,
}

impl Chain<'_> {
    /// The chain without `self.`.
    fn key(&self) -> &str {
        self.text.strip_prefix("self.").unwrap_or(self.text)
    }

    fn last(&self) -> &str {
        self.text
            .rsplit(['.', ':'])
            .next()
            .unwrap_or("")
            .trim_start_matches('@')
    }
}

impl<'a> ByteRanges for Src<'a> {
    fn code(&self) -> &str {
        &self.lx.code
    }

    /// The value of the expression at bytes `s..e`, read by the shared evaluator. Ruby's own
    /// literals come first: a symbol (`:orders`) is its name, a trailing `.freeze` changes
    /// nothing, and the block of `ENV.fetch("X") { "d" }` is the lookup's default.
    fn value(&self, s: usize, e: usize) -> Value {
        let (s, mut e) = self.trim(s, e);
        if let Some(v) = self.plain_string(s, e) {
            return Value::lit(v);
        }
        if self.code()[s..e].ends_with(".freeze") {
            e -= 7;
        }
        let t = self.t;
        let (a, b) = t.range_of(s, e);
        if b > a + 1
            && t.is_punct(b - 1, b'}')
            && let Some(o) = t.open_of(b - 1)
            && o > a
            && t.is_punct(o - 1, b')')
        {
            let left = eval(t, (a, o), &ExprRules::RUBY, self.asg);
            if let [Part::Env { .. }] = left.parts.as_slice() {
                let right = eval(t, (o + 1, b - 1), &ExprRules::RUBY, self.asg);
                return with_fallback(left, &right);
            }
        }
        // `URI.join(base, "/orders")`: the pieces, joined.
        if t.kw(a, "URI")
            && t.is_punct(a + 1, b'.')
            && t.kw(a + 2, "join")
            && t.is_punct(a + 3, b'(')
            && t.close(a + 3) == Some(b - 1)
        {
            let mut v = Value::default();
            for (x, y) in t.args(a + 3) {
                let mut piece = eval(t, (x, y), &ExprRules::RUBY, self.asg);
                if let (Some(Part::Lit(prev)), Some(Part::Lit(next))) =
                    (v.parts.last(), piece.parts.first_mut())
                    && prev.ends_with('/')
                    && next.starts_with('/')
                {
                    next.remove(0);
                }
                v.extend(piece);
            }
            return v;
        }
        eval(t, (a, b), &ExprRules::RUBY, self.asg)
    }
}

impl<'a> Src<'a> {
    /// The single string literal making up `s..e` (a trailing `.freeze` allowed), as
    /// (literal, whether it interpolates).
    fn literal(&self, s: usize, e: usize) -> Option<&lex::StrLit<'a>> {
        let (s, mut e) = self.trim(s, e);
        let code = self.code();
        if code[s..e].ends_with(".freeze") {
            e -= 7;
        }
        let l = self.lx.string_at(s).filter(|l| l.start == s)?;
        (l.end == e).then_some(l)
    }

    /// The value of a plain string (no `#{…}`), or of a symbol `:name` / `:"name"`.
    fn plain_string(&self, s: usize, e: usize) -> Option<String> {
        let (s, e) = self.trim(s, e);
        let code = self.code();
        if code.as_bytes().get(s) == Some(&b':') && code.as_bytes().get(s + 1) != Some(&b':') {
            if let Some((p, id)) = ident_after(code, s + 1).filter(|(p, _)| *p == s + 1) {
                return (p + id.len() == e).then(|| id.to_string());
            }
            return self.plain_string(s + 1, e);
        }
        let l = self.literal(s, e)?;
        let v = l.value();
        let interpolates = self.lx.text.as_bytes().get(l.start) == Some(&b'"') && v.contains("#{");
        (!interpolates).then(|| v.into_owned())
    }

    /// `s..e` as a constant path or a (possibly instance/global) variable, as written.
    fn name(&self, s: usize, e: usize) -> Option<&str> {
        let (s, e) = self.trim(s, e);
        let t = &self.code()[s..e];
        let body = t.trim_start_matches('@');
        let ok = !body.is_empty()
            && body.split("::").all(|seg| {
                seg.split('.').all(|p| {
                    !p.is_empty()
                        && !p.as_bytes()[0].is_ascii_digit()
                        && p.bytes().all(is_ident_byte)
                })
            });
        ok.then_some(t)
    }

    /// Splits call arguments at `s..e` into positional and keyword ranges.
    fn args(&self, s: usize, e: usize) -> Args<'_> {
        let code = self.code();
        let mut args = Args::default();
        for (a, z) in common::split_top(code, s, e, b',', &self.br) {
            let t = &code[a..z];
            // `name: value` (not `Mod::X`), or `:name => value`.
            if let Some((p, id)) = ident_after(code, a).filter(|(p, _)| *p == a) {
                let after = p + id.len();
                if code.as_bytes().get(after) == Some(&b':')
                    && code.as_bytes().get(after + 1) != Some(&b':')
                {
                    args.keyword.push((id, (after + 1, z)));
                    continue;
                }
            }
            if t.starts_with(':')
                && let Some(arrow) = t.find("=>")
                && let Some((_, id)) = ident_after(code, a + 1)
            {
                args.keyword.push((id, (a + arrow + 2, z)));
                continue;
            }
            if t.starts_with('*') || t.starts_with('&') {
                continue;
            }
            args.positional.push((a, z));
        }
        args
    }
}

/// Cuts the masked code into statements.
fn statements(src: &Src) -> Vec<Stmt> {
    let code = src.code().as_bytes();
    let n = code.len();
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        if code[i].is_ascii_whitespace() || code[i] == b';' {
            i += 1;
            continue;
        }
        let start = i;
        let j = src.statement_stop(start, b"\"'`", false, |nl| !continues(code, start, nl));
        let (_, e) = src.trim(start, j);
        if e > start {
            out.push(Stmt {
                start,
                end: e,
                line: src.line_of(start),
            });
        }
        i = j + 1;
    }
    out
}

/// Whether the statement continues past the newline at `nl`: the line ends with `,`, `\`,
/// `.`, `&&`, `||`, `=` or `+`, or the next code line starts with `.method` / `&.method`.
fn continues(code: &[u8], start: usize, nl: usize) -> bool {
    let mut k = nl;
    while k > start && code[k - 1].is_ascii_whitespace() {
        k -= 1;
    }
    if k > start {
        let last = code[k - 1];
        let prev = if k >= 2 { code[k - 2] } else { b' ' };
        match last {
            b',' | b'\\' => return true,
            b'.' if prev != b'.' => return true,
            b'&' if prev == b'&' => return true,
            b'|' if prev == b'|' => return true,
            b'+' => return true,
            b'=' if !matches!(prev, b'=' | b'!' | b'<' | b'>') => return true,
            _ => {}
        }
    }
    let mut m = nl + 1;
    while m < code.len() && (code[m] == b' ' || code[m] == b'\t' || code[m] == b'\r') {
        m += 1;
    }
    (code.get(m) == Some(&b'.') && code.get(m + 1) != Some(&b'.'))
        || (code.get(m) == Some(&b'&') && code.get(m + 1) == Some(&b'.'))
}

/// The identifiers of `code[s..e]` with their offsets, skipping `%w[…]`-style literals and
/// `/regex/` literals (whose words are not code).
fn words(src: &Src, s: usize, e: usize, out: &mut Vec<(usize, usize)>) {
    out.clear();
    let code = src.code().as_bytes();
    let mut i = s;
    while i < e {
        let b = code[i];
        if is_ident_byte(b) {
            let st = i;
            while i < e && is_ident_byte(code[i]) {
                i += 1;
            }
            out.push((st, i));
            continue;
        }
        if b == b'%'
            && i + 2 < e
            && matches!(
                code[i + 1],
                b'w' | b'W' | b'i' | b'I' | b'q' | b'Q' | b'r' | b's' | b'x'
            )
            && matches!(code[i + 2], b'[' | b'(' | b'{' | b'<' | b'|' | b'!' | b'/')
        {
            let d = code[i + 2];
            let close = match d {
                b'[' | b'(' | b'{' => src.br.close_of(i + 2),
                b'<' => code[i + 3..e]
                    .iter()
                    .position(|&c| c == b'>')
                    .map(|p| i + 3 + p),
                _ => code[i + 3..e]
                    .iter()
                    .position(|&c| c == d)
                    .map(|p| i + 3 + p),
            };
            i = close.map_or(i + 1, |c| c + 1);
            continue;
        }
        if b == b'/' && regex_can_start(code, s, i) {
            let mut k = i + 1;
            let mut close = None;
            while k < e && code[k] != b'\n' {
                match code[k] {
                    b'\\' => k += 1,
                    b'/' => {
                        close = Some(k);
                        break;
                    }
                    _ => {}
                }
                k += 1;
            }
            if let Some(c) = close {
                i = c + 1;
                continue;
            }
        }
        i += 1;
    }
}

/// A `/` starts a regex after an operator, an opening bracket, a comma, or at the start.
fn regex_can_start(code: &[u8], s: usize, i: usize) -> bool {
    let mut k = i;
    while k > s && (code[k - 1] == b' ' || code[k - 1] == b'\t') {
        k -= 1;
    }
    if k == s {
        return true;
    }
    let p = code[k - 1];
    if code.get(i + 1).is_some_and(|c| c.is_ascii_whitespace()) {
        return false;
    }
    matches!(
        p,
        b'(' | b',' | b'=' | b'~' | b'!' | b'|' | b'&' | b'{' | b'[' | b'?' | b':'
    ) || (k < i && is_ident_byte(p)) // `split /,/`, `when /x/`
}

/// How far a command call's arguments are searched for their end (`do`, `{`, a modifier).
const ARGS_WINDOW: usize = 512;

/// Route prefixes longer than this (nesting no real routes file reaches) open no more levels.
const MAX_PREFIX: usize = 1024;

const VERBS: [&str; 7] = ["get", "post", "put", "patch", "delete", "head", "options"];

/// The walk: declarations, blocks, bindings, calls.
fn walk(src: &Src, st: &mut State) {
    let code = src.code();
    let b = code.as_bytes();
    let stmts = statements(src);
    let mut stack: Vec<Block> = Vec::new();
    let root = Ctx {
        in_routes: st.routes_file,
        ..Ctx::default()
    };
    let mut toks: Vec<(usize, usize)> = Vec::new();
    for stmt in &stmts {
        if &code[stmt.start..stmt.end] == "__END__" {
            break;
        }
        let ctx = stack.last().map_or(root, |bl| bl.ctx);
        words(src, stmt.start, stmt.end, &mut toks);
        let first = toks
            .first()
            .filter(|(s, _)| *s == stmt.start)
            .map(|&(s, e)| &code[s..e]);
        // The context the next `do` of this statement opens (routing DSL blocks).
        let mut do_ctx: Option<Ctx> = None;
        let mut decl: Option<(usize, Block)> = None;
        match first {
            Some("class" | "module") => {
                // An unparsable header still opens a block, so its `end` stays balanced.
                decl = type_decl(src, st, stmt, &toks, ctx)
                    .or(Some((stmt.start, Block { symbol: None, ctx })));
            }
            Some("require" | "require_relative" | "load" | "autoload") => {
                require_stmt(src, st, stmt, &toks)
            }
            Some("include" | "extend" | "prepend") => mixin_stmt(src, st, stmt, &toks),
            _ => {}
        }
        if let Some(f) = first {
            if f.as_bytes()[0].is_ascii_uppercase() {
                constant_stmt(src, st, stmt, &toks, ctx);
            } else if let Some(c) = dsl_stmt(src, st, stmt, &toks, ctx) {
                do_ctx = Some(c);
            }
        }
        // `Rails.application.routes.draw do`, `App.routes.draw do` (Karafka).
        if st.routes_file && code[stmt.start..stmt.end].contains("routes.draw") {
            do_ctx = Some(Ctx {
                in_routes: true,
                ..ctx
            });
        }
        assignment(src, st, stmt, ctx);
        let mut loop_do = false;
        let mut k = 0;
        while k < toks.len() {
            let (ts, te) = toks[k];
            let w = &code[ts..te];
            k += 1;
            if let Some((at, block)) = decl
                && at == ts
            {
                stack.push(block);
                continue;
            }
            let prev = if ts > 0 { b[ts - 1] } else { b' ' };
            let next = b.get(te).copied().unwrap_or(b' ');
            let after_dot = prev == b'.' || (prev == b':' && ts >= 2 && b[ts - 2] == b':');
            let symbol = prev == b':' && !(ts >= 2 && b[ts - 2] == b':');
            let label = next == b':' && b.get(te + 1) != Some(&b':');
            let sigil = prev == b'@';
            let method_suffix = matches!(next, b'?' | b'!');
            if after_dot {
                call_token(src, st, stmt, ts, te, ctx);
                continue;
            }
            if symbol || label || sigil || method_suffix {
                continue;
            }
            match w {
                "def" => {
                    if let Some((block, endless)) = def_decl(src, st, stmt, te, ctx) {
                        // Skip the name tokens so a method named `end` or `if` is not a keyword.
                        let name_end = block_name_end(code, te);
                        while k < toks.len() && toks[k].0 < name_end {
                            k += 1;
                        }
                        if !endless {
                            stack.push(block);
                        }
                    }
                }
                "do" => {
                    if loop_do {
                        loop_do = false;
                    } else {
                        let child = do_ctx.take().unwrap_or(ctx);
                        stack.push(Block {
                            symbol: None,
                            ctx: child,
                        });
                    }
                }
                "if" | "unless" | "while" | "until" | "case" | "begin" | "for"
                    if expression_start(code, stmt.start, ts, &toks, k - 1) =>
                {
                    loop_do = matches!(w, "while" | "until" | "for");
                    stack.push(Block { symbol: None, ctx });
                }
                "end" => {
                    if let Some(bl) = stack.pop()
                        && let Some(i) = bl.symbol
                        && let Some(sym) = st.facts.symbols.get_mut(i)
                    {
                        sym.end_line = src.line_of(ts);
                    }
                }
                _ => call_token(src, st, stmt, ts, te, ctx),
            }
        }
    }
    let last = src.lx.line_count();
    for bl in stack {
        if let Some(i) = bl.symbol
            && let Some(sym) = st.facts.symbols.get_mut(i)
        {
            sym.end_line = last.max(sym.line);
        }
    }
}

/// Where a `def` name ends (`self.name?`, `name=`, `==`, `[]=`).
fn block_name_end(code: &str, after_def: usize) -> usize {
    let b = code.as_bytes();
    let mut i = after_def;
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'(' && b[i] != b';' {
        i += 1;
    }
    i
}

/// True when the keyword token `toks[k]` starts an expression (so it opens a block): first in
/// its statement, after an assignment `=`, an opening `(`, or `else`/`then`/`do`/`begin`.
fn expression_start(
    code: &str,
    stmt_start: usize,
    ts: usize,
    toks: &[(usize, usize)],
    k: usize,
) -> bool {
    if ts == stmt_start {
        return true;
    }
    let b = code.as_bytes();
    match lex::prev_non_space(&code[..ts], ts) {
        Some((p, b'=')) => !(p > 0 && matches!(b[p - 1], b'=' | b'!' | b'<' | b'>')),
        Some((_, b'(' | b'|')) => true,
        Some((p, _)) if is_ident_byte(b[p]) => {
            k > 0 && {
                let (ps, pe) = toks[k - 1];
                pe == p + 1 && matches!(&code[ps..pe], "else" | "then" | "do" | "begin" | "ensure")
            }
        }
        _ => false,
    }
}

fn container_name(st: &State, ctx: Ctx) -> Option<&str> {
    ctx.container
        .and_then(|i| st.facts.symbols.get(i))
        .map(|s| s.name.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::lang::test_support::{
        assert_http_calls, bindings, events, every_prefix, grpc_call_fact, grpc_client_fact,
        grpc_server_fact, lit, names, routes, sym,
    };

    #[test]
    fn modules_classes_methods_and_end_matching() {
        let src = r#"require "json"

module Shop
  # An order.
  # Second line.
  class Order < Base
    STATUS = "new".freeze

    def initialize(id)
      @id = id
      return if id.nil?
      x = if id > 1 then 2 else 3 end
      [1, 2].each do |i|
        puts i unless i.zero?
      end
      while id < 3 do id += 1 end
      y = %w[if end do]
      z = id =~ /end|if/
      label = { if: 1, end: 2 }
    end

    def self.build(
      a,
      b
    )
      new(a)
    end

    def paid? = @status == "paid"

    def status=(v)
      @status = v
    end

    class << self
      def helper; end
    end

    class Line; def total; 1; end; end
  end

  def top_helper
    begin
      1
    rescue StandardError
      2
    end
  end
end

def main
end
"#;
        let f = extract("lib/order.rb", src);
        let shop = sym(&f, "Shop");
        assert_eq!(
            (shop.kind, shop.line, shop.end_line),
            (SymbolKind::Module, 3, 49)
        );
        let order = sym(&f, "Order");
        assert_eq!(
            (order.kind, order.line, order.end_line, order.doc_line),
            (SymbolKind::Class, 6, 40, Some(4))
        );
        assert_eq!(order.container.as_deref(), Some("Shop"));
        let init = sym(&f, "initialize");
        assert_eq!(
            (init.kind, init.line, init.end_line),
            (SymbolKind::Constructor, 9, 20)
        );
        let build = sym(&f, "build");
        assert_eq!(
            (build.kind, build.line, build.end_line),
            (SymbolKind::Method, 22, 27)
        );
        assert_eq!(build.container.as_deref(), Some("Order"));
        let paid = sym(&f, "paid?");
        assert_eq!((paid.line, paid.end_line), (29, 29));
        assert_eq!(sym(&f, "status=").end_line, 33);
        let helper = sym(&f, "helper");
        assert_eq!(
            (helper.container.as_deref(), helper.line, helper.end_line),
            (Some("Order"), 36, 36)
        );
        assert_eq!(sym(&f, "Line").container.as_deref(), Some("Order"));
        assert_eq!(sym(&f, "total").container.as_deref(), Some("Line"));
        let top = sym(&f, "top_helper");
        assert_eq!(
            (top.kind, top.container.as_deref(), top.end_line),
            (SymbolKind::Method, Some("Shop"), 48)
        );
        let main = sym(&f, "main");
        assert_eq!(
            (main.kind, main.container.clone(), main.line, main.end_line),
            (SymbolKind::Function, None, 51, 52)
        );
        let status = sym(&f, "STATUS");
        assert_eq!(
            (status.kind, status.container.as_deref()),
            (SymbolKind::Constant, Some("Order"))
        );
        assert_eq!(
            f.bindings,
            vec![Binding {
                name: "Order.STATUS".into(),
                value: Value::lit("new"),
                line: 7
            }]
        );
    }

    #[test]
    fn constants_env_defaults_and_structs() {
        let src = r#"module Topics
  ORDER_CREATED = "orders.created"
  PAID = :orders_paid
  DLQ = ENV.fetch("DLQ_TOPIC", "orders.dlq")
  AUDIT = ENV.fetch("AUDIT_TOPIC") { "audit" }
  RAW = ENV["RAW_TOPIC"] || "raw.default"
  BROKERS = ENV.fetch("BROKERS", "k:9092").split(",")
  Point = Struct.new(:x, :y)
end
TOP = 'top.level'
"#;
        let f = extract("topics.rb", src);
        let consts = bindings(&f);
        let env = |v: &str, d: &str| Value::env(v, Some(d.to_string()));
        assert_eq!(
            consts,
            vec![
                ("Topics.ORDER_CREATED", lit("orders.created")),
                ("Topics.PAID", lit("orders_paid")),
                // Env lookups stay lookups with their defaults: the graph answers
                // `env DLQ_TOPIC default` and resolves the text to the default.
                ("Topics.DLQ", env("DLQ_TOPIC", "orders.dlq")),
                ("Topics.AUDIT", env("AUDIT_TOPIC", "audit")),
                ("Topics.RAW", env("RAW_TOPIC", "raw.default")),
                ("TOP", lit("top.level")),
            ]
        );
        assert_eq!(sym(&f, "Point").kind, SymbolKind::Class);
        assert_eq!(sym(&f, "BROKERS").kind, SymbolKind::Constant);
    }

    #[test]
    fn requires_and_mixins() {
        let src = "require \"kafka\"\nrequire_relative '../lib/recommender'\nrequire(\"net/http\")\nautoload :Orders, \"shop/orders\"\nclass A\n  include Comparable\n  extend Shop::Helpers\nend\n";
        let f = extract("a.rb", src);
        let imps: Vec<(&str, Vec<&str>, u32)> = f
            .imports
            .iter()
            .map(|i| {
                (
                    i.module.as_str(),
                    i.names.iter().map(String::as_str).collect(),
                    i.line,
                )
            })
            .collect();
        assert_eq!(
            imps,
            vec![
                ("kafka", vec![], 1),
                ("../lib/recommender", vec![], 2),
                ("net/http", vec![], 3),
                ("shop/orders", vec!["Orders"], 4),
                ("Comparable", vec![], 6),
                ("Shop::Helpers", vec![], 7),
            ]
        );
    }

    #[test]
    fn grpc_servers_stubs_and_calls() {
        let src = r#"require "orders_services_pb"

class OrderServer < Orders::OrderService::Service
  def create_order(req, _call)
    Orders::Order.new(id: "1")
  end
end

class Client
  def initialize(addr)
    @stub = Orders::OrderService::Stub.new(addr, :this_channel_is_insecure)
  end

  def create(req)
    @stub.create_order(req)
  end

  def get(id)
    stub = Inventory::InventoryService::Stub.new("inv:50051", :this_channel_is_insecure)
    stub.get_stock Inventory::Req.new(id: id)
    other.get_stock(1)
  end
end
Payments::PaymentService::Stub.new(addr, creds).charge(req)
"#;
        let f = extract("client.rb", src);
        assert_eq!(
            f.grpc,
            vec![
                grpc_server_fact("OrderService", Some("OrderServer"), 3),
                grpc_client_fact("OrderService", Some("stub"), 11),
                grpc_call_fact(Some("OrderService"), "stub", "create_order", 15),
                grpc_client_fact("InventoryService", Some("stub"), 19),
                grpc_call_fact(Some("InventoryService"), "stub", "get_stock", 20),
                grpc_client_fact("PaymentService", None, 24),
            ]
        );
        assert_eq!(
            sym(&f, "create_order").container.as_deref(),
            Some("OrderServer")
        );
    }

    #[test]
    fn kafka_ruby_kafka_rdkafka_racecar_karafka() {
        let src = r#"require "kafka"

class Events
  TOPIC = "orders.created"

  def initialize
    @kafka = Kafka.new(["k:9092"], client_id: "shop")
  end

  def publish(v)
    @kafka.deliver_message(v, topic: "orders.created")
    producer = @kafka.producer
    producer.produce(v, topic: Topics::ORDER_PAID)
    producer.produce v, topic: TOPIC
    consumer = @kafka.consumer(group_id: "g")
    consumer.subscribe("payments.done", start_from_beginning: false)
    consumer.subscribe ENV.fetch("IN_TOPIC", "in.default")
    @kafka.each_message(topic: "simple.topic") { |m| m }
    cache.produce(v, topic: "not.a.producer")
  end
end

class OrdersConsumer < Racecar::Consumer
  subscribes_to "orders.created", "orders.cancelled"
end
"#;
        let f = extract("events.rb", src);
        use EventRole::*;
        assert_eq!(
            events(&f),
            vec![
                (Producer, lit("orders.created"), "ruby-kafka", 11),
                (
                    Producer,
                    Value::reference("Topics.ORDER_PAID"),
                    "ruby-kafka",
                    13
                ),
                // A constant of the enclosing class is read by the shared tracker (the graph
                // could not resolve a bare `TOPIC` against the binding `Events.TOPIC`).
                (Producer, lit("orders.created"), "ruby-kafka", 14),
                (Consumer, lit("payments.done"), "ruby-kafka", 16),
                (
                    Consumer,
                    Value::env("IN_TOPIC", Some("in.default".into())),
                    "ruby-kafka",
                    17
                ),
                (Consumer, lit("simple.topic"), "ruby-kafka", 18),
                (Consumer, lit("orders.created"), "racecar", 24),
                (Consumer, lit("orders.cancelled"), "racecar", 24),
            ]
        );
        let src = r#"config = { "bootstrap.servers": "k:9092" }
producer = Rdkafka::Config.new(config).producer
producer.produce(topic: "rd.out", payload: "x")
consumer = Rdkafka::Config.new(config).consumer
consumer.subscribe("rd.in")
Karafka.producer.produce_sync(topic: "wd.out", payload: "x")

class KarafkaApp < Karafka::App
  routes.draw do
    topic :orders_created do
      consumer OrdersConsumer
    end
    topic "payments" do
      consumer PaymentsConsumer
    end
  end
end
"#;
        let f = extract("karafka.rb", src);
        assert_eq!(
            events(&f),
            vec![
                (Producer, lit("rd.out"), "rdkafka", 3),
                (Consumer, lit("rd.in"), "rdkafka", 5),
                (Producer, lit("wd.out"), "karafka", 6),
                (Consumer, lit("orders_created"), "karafka", 10),
                (Consumer, lit("payments"), "karafka", 13),
            ]
        );
        assert_eq!(sym(&f, "KarafkaApp").end_line, 17);
    }

    #[test]
    fn rails_and_sinatra_routes() {
        let src = r#"Rails.application.routes.draw do
  get "/health", to: "health#show"
  post "orders/:id/pay" => "orders#pay"
  resources :orders, only: [:index, :show]
  namespace :api do
    scope "/v1" do
      resources :carts, except: %i[update destroy] do
        resources :items, only: :create
      end
      match "search", to: "search#run", via: [:get, :post]
    end
  end
end
"#;
        let f = extract("config/routes.rb", src);
        let r = |m: &str, p: &str, h: Option<&str>, l: u32| {
            (m.to_string(), p.to_string(), h.map(String::from), l)
        };
        assert_eq!(
            routes(&f),
            vec![
                r("GET", "/health", Some("health#show"), 2),
                r("POST", "/orders/:id/pay", Some("orders#pay"), 3),
                r("GET", "/orders", Some("orders#index"), 4),
                r("GET", "/orders/:id", Some("orders#show"), 4),
                r("GET", "/api/v1/carts", Some("carts#index"), 7),
                r("POST", "/api/v1/carts", Some("carts#create"), 7),
                r("GET", "/api/v1/carts/:id", Some("carts#show"), 7),
                r(
                    "POST",
                    "/api/v1/carts/:cart_id/items",
                    Some("items#create"),
                    8
                ),
                r("GET", "/api/v1/search", Some("search#run"), 10),
                r("POST", "/api/v1/search", Some("search#run"), 10),
            ]
        );
        let src = "require 'sinatra'\n\nclass App < Sinatra::Base\n  get '/recommendations/:user_id' do\n    'x'\n  end\n\n  post('/orders') { 'y' }\n  # get '/commented' do\nend\n";
        let f = extract("app.rb", src);
        assert_eq!(
            routes(&f),
            vec![
                r("GET", "/recommendations/:user_id", None, 4),
                r("POST", "/orders", None, 8)
            ]
        );
        assert_eq!(sym(&f, "App").end_line, 10);
    }

    const IDIOMS: &str = r##"require "net/http"
require "faraday"
require "kafka"

BASE = ENV.fetch("ORDERS_URL", "http://orders:8080")
TOPIC = ENV.fetch("T", "orders")
PAYMENTS = ENV["PAYMENTS_URL"]

class OrdersClient
  def show(id)
    Net::HTTP.get(URI("#{BASE}/orders/#{id}"))
  end

  def pay(base, id, key)
    Net::HTTP.get(URI("#{base}/x"))
    HTTParty.post("#{PAYMENTS}/payments", body: {})
    Faraday.new(url: BASE).get("/health")
    conn = Faraday.new(url: BASE)
    conn.put("#{BASE}/orders/#{id}")
    cache.get(id)
    @cache_client.get(key)
    HTTParty.get(base + "/" + id)
    Net::HTTP.post_form(URI.join(BASE, "/refunds"), {})
    uri = URI.join(BASE, "/refunds")
    Net::HTTP.post_form(uri, {})
  end

  def publish(v, region)
    producer = @kafka.producer
    producer.produce(v, topic: ENV["ORDERS_TOPIC"])
    producer.produce(v, topic: ENV.fetch("T", "orders"))
    producer.produce(v, topic: TOPIC)
    producer.produce(v, topic: "orders.#{region}")
  end
end
"##;

    #[test]
    fn idioms_interpolation_env_and_clients() {
        let f = extract("orders_client.rb", IDIOMS);
        assert_http_calls(
            &f,
            &[
                // A module-level constant stays a reference for the graph; a parameter is a
                // run-time part.
                ("GET", "{BASE}/orders/{}", 11),
                ("GET", "{}/x", 15),
                ("POST", "{PAYMENTS}/payments", 16),
                ("GET", "/health", 17),
                ("PUT", "{BASE}/orders/{}", 19),
                // `cache.get(id)` and `@cache_client.get(key)` are lookups, not requests.
                // A base and `"/" + x` alone: a URL with no literal segment, which the graph
                // never matches to a route.
                ("GET", "{}/{}", 22),
                ("POST", "{BASE}/refunds", 23),
                // `URI.join(BASE, "/refunds")` through a variable: the shared join helper.
                ("POST", "{BASE}/refunds", 25),
            ],
        );
        use EventRole::*;
        assert_eq!(
            events(&f),
            vec![
                (Producer, Value::env("ORDERS_TOPIC", None), "ruby-kafka", 30),
                (
                    Producer,
                    Value::env("T", Some("orders".into())),
                    "ruby-kafka",
                    31
                ),
                (Producer, Value::reference("TOPIC"), "ruby-kafka", 32),
                // Built from a run-time part: kept, so the graph lists it as unresolved.
                (
                    Producer,
                    Value {
                        parts: vec![Part::Lit("orders.".into()), Part::Dynamic]
                    },
                    "ruby-kafka",
                    33
                ),
            ]
        );
        let bound: Vec<(&str, String)> = f
            .bindings
            .iter()
            .map(|b| (b.name.as_str(), b.value.display()))
            .collect();
        assert_eq!(
            bound,
            vec![
                ("BASE", "{env ORDERS_URL}".to_string()),
                ("TOPIC", "{env T}".to_string()),
                ("PAYMENTS", "{env PAYMENTS_URL}".to_string()),
            ]
        );
        assert_eq!(
            f.bindings[0].value.env_default().as_deref(),
            Some("http://orders:8080")
        );
    }

    #[test]
    fn idioms_truncated_and_non_ascii_never_panic() {
        every_prefix(extract, "x.rb", IDIOMS);
        let src = "BASÉ = ENV.fetch(\"ü\", \"é\")\nclass Ünï\n  def gét(ïd)\n    Net::HTTP.get(URI(\"#{BASÉ}/ördérs/#{ïd}\"))\n    HTTParty.get(\"#{é\n  end\nend\n";
        every_prefix(extract, "x.rb", src);
        let f = extract("x.rb", src);
        assert!(matches!(
            f.http.first(),
            Some(HttpFact::Call { url, .. }) if url.display() == "{BASÉ}/ördérs/{}"
        ));
    }

    #[test]
    fn comments_heredocs_and_strings_are_not_code() {
        let src = "# class Nope\n=begin\nclass Nope2\n=end\nsql = <<~SQL\n  class Nope3\n  end\nSQL\nx = \"def nope; end\"\nclass Yes\nend\n";
        let f = extract("a.rb", src);
        assert_eq!(names(&f), vec!["Yes"]);
        assert_eq!(sym(&f, "Yes").end_line, 11);
    }

    #[test]
    fn a_truncated_class_ends_at_the_end_of_the_file() {
        let f = extract("x.rb", "class A\n  def f\n    1\n");
        assert_eq!(sym(&f, "A").end_line, 4);
    }
}
