//! What the brace-language extractors that walk [`Tokens`] with an explicit stack of regions
//! (C#, TypeScript, Swift) share: the region they push, the line a group closes on, the
//! literal bindings they record, and the order they return their facts in.

use super::bind::Assignments;
use super::tokens::Tokens;
use super::value::{ExprRules, eval};
use crate::index::facts::{Binding, FileFacts, HttpFact, Symbol, SymbolKind, Value};

/// A declaration region still to scan: tokens `a..b`, the type whose body it is (qualified,
/// for what it declares), and what a class body's members need to know about that class.
pub(crate) struct Region<C> {
    pub a: usize,
    pub b: usize,
    pub container: Option<String>,
    pub class: Option<C>,
}

impl<C> Region<C> {
    /// The whole file of `len` tokens, at top level.
    pub fn file(len: usize) -> Region<C> {
        Region {
            a: 0,
            b: len,
            container: None,
            class: None,
        }
    }

    /// The body of the group that opens at token `open` (to its close, or to `b` when it is
    /// not closed), declared in `container`.
    pub fn body(
        t: &Tokens,
        open: usize,
        b: usize,
        container: Option<String>,
        class: Option<C>,
    ) -> Region<C> {
        Region {
            a: open + 1,
            b: t.close(open).unwrap_or(b),
            container,
            class,
        }
    }
}

/// Where a declaration stands: the file's tokens, the line of the attributes or decorators
/// above it (when it has any) and the qualified name of the type or namespace it is declared
/// in (none at top level).
#[derive(Clone, Copy)]
pub(crate) struct Site<'s> {
    t: &'s Tokens<'s, 's>,
    pub container: Option<&'s str>,
    attr_line: Option<u32>,
}

impl<'s> Site<'s> {
    /// A declaration in the file of tokens `t`, in `container`, under attributes that start on
    /// `attr_line`.
    pub fn new(t: &'s Tokens<'s, 's>, container: Option<&'s str>, attr_line: Option<u32>) -> Self {
        Site {
            t,
            container,
            attr_line,
        }
    }

    /// The symbol declared here whose name is token `name_tok` (see [`Tokens::declaration`]).
    pub fn symbol(self, name: &str, kind: SymbolKind, name_tok: usize, end_line: u32) -> Symbol {
        let (attr_line, container) = (self.attr_line, self.container);
        self.t
            .declaration(name, kind, name_tok, end_line, attr_line, container)
    }
}

/// An extractor that records the declarations it finds at [`Site`]s.
pub(crate) trait Declares {
    /// The symbols of the file, to add to.
    fn symbols(&mut self) -> &mut Vec<Symbol>;

    /// Records the declaration at `site` whose name is token `name_tok` (see [`Site::symbol`]).
    fn declare(
        &mut self,
        site: Site,
        name: &str,
        kind: SymbolKind,
        name_tok: usize,
        end_line: u32,
    ) {
        let symbol = site.symbol(name, kind, name_tok, end_line);
        self.symbols().push(symbol);
    }
}

/// Walks a type's header (its base list and constraints) from token `j` to its body, before
/// `b`: returns the body's `{` (none when the header ends at `;`, `}` or `b`) and the token it
/// stopped at. Generic arguments and bracketed groups are skipped whole; `visit` sees every
/// other token.
pub(crate) fn type_header(
    t: &Tokens,
    mut j: usize,
    b: usize,
    mut visit: impl FnMut(usize),
) -> (Option<usize>, usize) {
    while j < b {
        match t.punct(j) {
            b'{' => return (Some(j), j),
            b';' | b'}' => break,
            b'<' => {
                j = t.skip_angles(j, b).max(j + 1);
                continue;
            }
            b'(' | b'[' => {
                j = t.skip_group(j);
                continue;
            }
            _ => visit(j),
        }
        j += 1;
    }
    (None, j)
}

/// The line of the token closing the group at `open` (the file's last line if unclosed).
pub(crate) fn close_line(t: &Tokens, open: usize) -> u32 {
    match t.close(open) {
        Some(c) => t.line(c),
        None => t.lx.line_count(),
    }
}

/// Records the member `member` (token `at`, one line) of the enum `container`.
pub(crate) fn push_enum_value(
    facts: &mut FileFacts,
    t: &Tokens,
    member: &str,
    at: usize,
    container: &str,
) {
    let line = t.line(at);
    let kind = SymbolKind::EnumValue;
    let symbol = t.declaration(member, kind, at, line, None, Some(container));
    facts.symbols.push(symbol);
}

/// Records the literal binding `name = value` on `line`.
pub(crate) fn push_lit(facts: &mut FileFacts, name: String, value: String, line: u32) {
    facts.bindings.push(Binding {
        name,
        value: Value::lit(value),
        line,
    });
}

/// The token before an expression that starts at `start`, past an `await` there.
pub(crate) fn before_await(t: &Tokens, start: usize) -> Option<usize> {
    let k = start.checked_sub(1)?;
    if t.is(k, "await") {
        return k.checked_sub(1);
    }
    Some(k)
}

/// Application-wide route prefixes: a call `.NAME(prefix, …)` for one of `names` (NestJS
/// `setGlobalPrefix`, ASP.NET `UsePathBase`), its first argument read with `rules`.
pub(crate) fn app_prefixes(
    t: &Tokens,
    asg: &Assignments,
    rules: &ExprRules,
    names: &[&str],
    facts: &mut FileFacts,
) {
    for k in 1..t.len() {
        if !t.ident(k).is_some_and(|n| names.contains(&n)) || !t.is(k - 1, ".") || !t.is(k + 1, "(")
        {
            continue;
        }
        if let Some(&(a, b)) = t.args(k + 1).first() {
            let prefix = eval(t, (a, b), rules, asg);
            if !prefix.parts.is_empty() {
                facts.http.push(HttpFact::AppPrefix {
                    prefix,
                    line: t.line(k),
                });
            }
        }
    }
}

/// The file's facts once the walk is done: the top-level assignments it did not record as
/// bindings exported (`asg` read with `rules`), all in [`sort_facts`] order.
pub(crate) fn finish(
    asg: &Assignments,
    t: &Tokens,
    rules: &ExprRules,
    mut facts: FileFacts,
) -> FileFacts {
    asg.export(t, rules, &mut facts);
    sort_facts(&mut facts);
    facts
}

/// Puts the facts in the order an extractor returns them: by line, events and HTTP facts
/// included.
pub(crate) fn sort_facts(facts: &mut FileFacts) {
    super::common::sort_by_line(facts);
    crate::order::sort_by_key(&mut facts.events, |e| e.line);
    crate::order::sort_by_key(&mut facts.http, HttpFact::line);
}
