//! A token view of masked code for the TypeScript/JavaScript, C# and Swift extractors: tokens
//! with their bracket pairs, call arguments, callee chains and type-argument skipping, plus the
//! route, doc-line and interpolation helpers those extractors share.

// ---------------------------------------------------------------------------------------------
// Tokens over masked code (shared by the brace-language extractors)
// ---------------------------------------------------------------------------------------------

use std::borrow::Cow;

use super::common::{http_path_of, looks_like_http_path};
use crate::index::facts::{Symbol, SymbolKind};
use crate::index::lex::{Lexed, StrLit, is_ident_byte};

/// What a [`Tok`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokKind {
    /// An identifier or keyword (ASCII letters, digits, `_`, `$`, any non-ASCII byte).
    Ident,
    /// A string literal, as recorded by the lexer (prefixes such as `$`, `@`, `#` included).
    Str,
    /// A number literal.
    Num,
    /// Punctuation: one byte, or one of the few multi-byte operators extractors care about
    /// (`=>`, `?.`, `??`, `...`, `||`, `&&`, `==`, `===`, `!=`, `!==`, `::`, `->`).
    Punct,
}

/// One token of a lexed file: byte span in the source, 1-based line, and for strings the
/// index of the literal in [`Lexed::strings`].
#[derive(Debug, Clone, Copy)]
pub struct Tok {
    pub kind: TokKind,
    pub start: u32,
    pub end: u32,
    pub line: u32,
    /// Index into `Lexed::strings` for [`TokKind::Str`]; `u32::MAX` otherwise.
    pub str_idx: u32,
    /// The byte of a one-byte punctuation token; 0 for every other token.
    pub punct: u8,
}

/// The tokens of a lexed file with their bracket pairs: one linear pass over the masked code,
/// so comments never produce tokens and every string literal is a single token. Brackets
/// (`(`, `[`, `{`) are matched once up front; mismatched closers are tolerated, so a
/// truncated or malformed file still tokenizes (its unclosed groups run to the end).
pub struct Toks<'l, 'a> {
    pub lx: &'l Lexed<'a>,
    pub toks: Vec<Tok>,
    /// For an opening bracket token, the index of its closing token; `u32::MAX` when unclosed
    /// or not an opener.
    close: Vec<u32>,
}

/// The length of the punctuation token at `i`: 3 for `===`, `!==`, `...`; 2 for `=>`, `?.`
/// (not before a digit: `a?.5:1` is a ternary), `??`, `||`, `&&`, `==`, `!=`, `::`, `->`;
/// else 1.
fn multi_punct_len(code: &[u8], i: usize) -> usize {
    let at = |k: usize| code.get(i + k).copied().unwrap_or(0);
    match (at(0), at(1), at(2)) {
        (b'=', b'=', b'=') | (b'!', b'=', b'=') | (b'.', b'.', b'.') => 3,
        (b'=', b'>' | b'=', _)
        | (b'?', b'?', _)
        | (b'|', b'|', _)
        | (b'&', b'&', _)
        | (b'!', b'=', _)
        | (b':', b':', _)
        | (b'-', b'>', _) => 2,
        (b'?', b'.', c) if !c.is_ascii_digit() => 2,
        _ => 1,
    }
}

impl<'l, 'a> Toks<'l, 'a> {
    /// Tokenizes the masked code of `lx`.
    pub fn new(lx: &'l Lexed<'a>) -> Self {
        let code = lx.code.as_bytes();
        let n = code.len();
        let mut toks: Vec<Tok> = Vec::with_capacity(n / 4);
        let mut si = 0usize;
        let mut li = 0usize;
        let mut i = 0usize;
        while i < n {
            let b = code[i];
            if b.is_ascii_whitespace() {
                i += 1;
                continue;
            }
            while li + 1 < lx.line_starts.len() && lx.line_starts[li + 1] <= i {
                li += 1;
            }
            let line = li as u32 + 1;
            while si < lx.strings.len() && lx.strings[si].start < i {
                si += 1;
            }
            if si < lx.strings.len() && lx.strings[si].start == i {
                let end = lx.strings[si].end.max(i + 1).min(n);
                toks.push(Tok {
                    kind: TokKind::Str,
                    start: i as u32,
                    end: end as u32,
                    line,
                    str_idx: si as u32,
                    punct: 0,
                });
                si += 1;
                i = end;
                continue;
            }
            let (kind, end) = if b.is_ascii_digit() {
                let mut j = i + 1;
                while j < n
                    && (is_ident_byte(code[j])
                        || (code[j] == b'.' && code.get(j + 1).is_some_and(u8::is_ascii_digit)))
                {
                    j += 1;
                }
                (TokKind::Num, j)
            } else if is_ident_byte(b) {
                let mut j = i + 1;
                while j < n && is_ident_byte(code[j]) {
                    j += 1;
                }
                (TokKind::Ident, j)
            } else {
                (TokKind::Punct, i + multi_punct_len(code, i))
            };
            let punct = if kind == TokKind::Punct && end == i + 1 {
                b
            } else {
                0
            };
            toks.push(Tok {
                kind,
                start: i as u32,
                end: end as u32,
                line,
                str_idx: u32::MAX,
                punct,
            });
            i = end;
        }
        let mut close = vec![u32::MAX; toks.len()];
        let mut stack: Vec<(usize, u8)> = Vec::new();
        for (ti, t) in toks.iter().enumerate() {
            match t.punct {
                b @ (b'(' | b'[' | b'{') => stack.push((ti, b)),
                b @ (b')' | b']' | b'}') => {
                    let want = match b {
                        b')' => b'(',
                        b']' => b'[',
                        _ => b'{',
                    };
                    // Tolerate a few unclosed inner groups; otherwise ignore a stray closer.
                    let depth = stack.len();
                    if let Some(pos) = stack
                        .iter()
                        .rev()
                        .take(8)
                        .position(|&(_, o)| o == want)
                        .map(|p| depth - 1 - p)
                    {
                        close[stack[pos].0] = ti as u32;
                        stack.truncate(pos);
                    }
                }
                _ => {}
            }
        }
        Toks { lx, toks, close }
    }

    /// The number of tokens.
    pub fn len(&self) -> usize {
        self.toks.len()
    }

    /// True when the file has no tokens.
    pub fn is_empty(&self) -> bool {
        self.toks.is_empty()
    }

    /// The masked-code text of token `i` (quotes and spaces for a string); "" past the end.
    pub fn text(&self, i: usize) -> &str {
        self.toks.get(i).map_or("", |t| {
            self.lx
                .code
                .get(t.start as usize..t.end as usize)
                .unwrap_or("")
        })
    }

    /// True when token `i` exists and its text is `s` (a string token never matches).
    #[inline]
    pub fn is(&self, i: usize, s: &str) -> bool {
        let Some(t) = self.toks.get(i) else {
            return false;
        };
        let want = s.as_bytes();
        if want.len() == 1 && t.punct != 0 {
            return t.punct == want[0];
        }
        let (a, b) = (t.start as usize, t.end as usize);
        b - a == want.len()
            && t.kind != TokKind::Str
            && self.lx.code.as_bytes().get(a..b) == Some(want)
    }

    /// The byte of the one-byte punctuation token at `i`, or 0 (any other token, or past the
    /// end): a cheap way to test several punctuation marks at once.
    #[inline]
    pub fn punct(&self, i: usize) -> u8 {
        self.toks.get(i).map_or(0, |t| t.punct)
    }

    /// The kind of token `i`, if it exists.
    pub fn kind(&self, i: usize) -> Option<TokKind> {
        self.toks.get(i).map(|t| t.kind)
    }

    /// The identifier at `i`, if token `i` is one.
    pub fn ident(&self, i: usize) -> Option<&str> {
        (self.kind(i) == Some(TokKind::Ident)).then(|| self.text(i))
    }

    /// The 1-based line of token `i` (the last line of the file past the end).
    pub fn line(&self, i: usize) -> u32 {
        self.toks.get(i).map_or(self.lx.line_count(), |t| t.line)
    }

    /// The line of the last byte of token `i` (a string token may span lines); the last line
    /// of the file past the end.
    pub fn end_line(&self, i: usize) -> u32 {
        match self.toks.get(i) {
            Some(t) => self
                .lx
                .line_of((t.end as usize).saturating_sub(1).max(t.start as usize)),
            None => self.lx.line_count(),
        }
    }

    /// The string literal of token `i`, if it is one.
    pub fn str_lit(&self, i: usize) -> Option<&StrLit<'a>> {
        let t = self.toks.get(i)?;
        (t.kind == TokKind::Str)
            .then(|| self.lx.strings.get(t.str_idx as usize))
            .flatten()
    }

    /// The value of the string literal at `i` (escapes processed), if token `i` is one.
    pub fn str_value(&self, i: usize) -> Option<Cow<'a, str>> {
        self.str_lit(i).map(|s| s.value())
    }

    /// The index of the token closing the bracket at `i`, if `i` opens a closed group.
    pub fn close(&self, i: usize) -> Option<usize> {
        self.close
            .get(i)
            .filter(|&&c| c != u32::MAX)
            .map(|&c| c as usize)
    }

    /// The index just past the group opened at `i` (or `i + 1` for any other token); the end of
    /// the file when the group never closes.
    pub fn skip_group(&self, i: usize) -> usize {
        if self.is_opener(i) {
            self.close(i).map_or(self.len(), |c| c + 1)
        } else {
            i + 1
        }
    }

    /// True when token `i` is `(`, `[` or `{`.
    #[inline]
    pub fn is_opener(&self, i: usize) -> bool {
        matches!(self.punct(i), b'(' | b'[' | b'{')
    }

    /// True when token `i` is `)`, `]` or `}`.
    #[inline]
    pub fn is_closer(&self, i: usize) -> bool {
        matches!(self.punct(i), b')' | b']' | b'}')
    }

    /// The index of the first token at or after `from` (and before `to`) that is `s` at
    /// bracket depth 0 relative to `from`; groups are skipped whole.
    pub fn find_at_depth0(&self, from: usize, to: usize, s: &str) -> Option<usize> {
        let mut j = from;
        while j < to.min(self.len()) {
            if self.is(j, s) {
                return Some(j);
            }
            if self.is_closer(j) {
                return None;
            }
            j = self.skip_group(j);
        }
        None
    }

    /// The top-level arguments of the call whose `(` is at `open`: token ranges split on
    /// depth-0 commas, empty for `()`.
    pub fn args(&self, open: usize) -> Vec<(usize, usize)> {
        let end = self.close(open).unwrap_or(self.len());
        self.args_between(open + 1, end)
    }

    /// The token ranges of `from..end` split on depth-0 commas (groups skipped whole); empty
    /// when the range is.
    pub fn args_between(&self, from: usize, end: usize) -> Vec<(usize, usize)> {
        let end = end.min(self.len());
        let mut out = Vec::new();
        let mut a = from;
        let mut j = a;
        while j < end {
            if self.punct(j) == b',' {
                out.push((a, j));
                a = j + 1;
                j += 1;
                continue;
            }
            j = self.skip_group(j).min(end);
        }
        if a < end {
            out.push((a, end));
        }
        out
    }
}

/// A callee chain (`this.orders.createOrder`, `axios.get`, `_http.GetFromJsonAsync`): up to six
/// dotted name segments before a call's `(`, with the index of its first token.
#[derive(Debug, Clone, Copy)]
pub struct Chain<'s> {
    pub segs: [&'s str; 6],
    pub len: usize,
    /// The index of the chain's first token.
    pub start: usize,
    /// The chain continues an expression that is not a plain name (`f().get(…)`, `x[0].y(…)`,
    /// or a chain longer than six segments).
    pub after_call: bool,
}

impl<'s> Chain<'s> {
    /// The called name (the last segment).
    pub fn last(&self) -> &'s str {
        self.segs[self.len.saturating_sub(1)]
    }

    /// The receiver of a method call (the segment before the method), unless it is `this`.
    pub fn receiver(&self) -> Option<&'s str> {
        (self.len >= 2)
            .then(|| self.segs[self.len - 2])
            .filter(|r| *r != "this")
    }

    /// The first segment.
    pub fn first(&self) -> &'s str {
        self.segs[0]
    }
}

impl Toks<'_, '_> {
    /// The callee chain ending at the token before `open` (a `(`), skipping `<…>` type
    /// arguments (`this.http.get<Order[]>(`, `GetFromJsonAsync<List<Order>>(`).
    pub fn callee(&self, open: usize) -> Option<Chain<'_>> {
        let mut k = open.checked_sub(1)?;
        if self.punct(k) == b'>' {
            // Walk back to the matching `<` (bounded).
            let mut depth = 0usize;
            let mut steps = 0;
            loop {
                match self.punct(k) {
                    b'>' => depth += 1,
                    b'<' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    b';' | b'{' | b'}' => return None,
                    _ => {}
                }
                steps += 1;
                if steps > 48 {
                    return None;
                }
                k = k.checked_sub(1)?;
            }
            k = k.checked_sub(1)?;
        }
        self.ident(k)?;
        let mut segs = [""; 6];
        let mut len = 0usize;
        let mut start = k;
        let dot = |i: usize| self.punct(i) == b'.' || self.is(i, "?.");
        while len < segs.len() {
            segs[len] = self.text(k);
            len += 1;
            start = k;
            if k >= 2 && dot(k - 1) && self.ident(k - 2).is_some() {
                k -= 2;
            } else {
                break;
            }
        }
        segs[..len].reverse();
        let after_call = start >= 1 && dot(start - 1);
        Some(Chain {
            segs,
            len,
            start,
            after_call,
        })
    }

    /// Past a `<…>` type-argument list at `j` (nested angles and groups skipped), or `j`
    /// itself when `j` is not a `<` or the list does not close before `b`, a `;`, a `}`, a
    /// `)` or 64 tokens (type arguments are short; the bound keeps a file of stray `<` linear).
    pub fn skip_angles(&self, j: usize, b: usize) -> usize {
        if self.punct(j) != b'<' {
            return j;
        }
        let mut depth = 0usize;
        let mut k = j;
        let b = b.min(j + 64);
        while k < b {
            match self.punct(k) {
                b'<' => depth += 1,
                b'>' => {
                    depth -= 1;
                    if depth == 0 {
                        return k + 1;
                    }
                }
                b';' | b'}' | b')' => return j,
                b'(' | b'[' | b'{' => {
                    k = self.skip_group(k);
                    continue;
                }
                _ => {}
            }
            k += 1;
        }
        j
    }
}

impl Toks<'_, '_> {
    /// The declaration whose name is token `name_tok`: its line, `end_line` (raised to that
    /// line when before it) and the doc line found above its attributes, where an `attr_line`
    /// after the name does not count.
    pub fn declaration(
        &self,
        name: &str,
        kind: SymbolKind,
        name_tok: usize,
        end_line: u32,
        attr_line: Option<u32>,
        container: Option<&str>,
    ) -> Symbol {
        let line = self.line(name_tok);
        Symbol {
            name: name.to_string(),
            kind,
            line,
            end_line: end_line.max(line),
            doc_line: doc_line(self.lx, line, attr_line.filter(|&a| a <= line)),
            container: container.map(str::to_string),
        }
    }
}

/// The doc line of a declaration: the first line of the comment block directly above its
/// first attribute/decorator line (or above the declaration when it has none), else that first
/// attribute line, else `None`.
pub fn doc_line(lx: &Lexed, decl_line: u32, attr_line: Option<u32>) -> Option<u32> {
    lx.doc_comment_above(attr_line.unwrap_or(decl_line))
        .or(attr_line)
}

/// Joins a route prefix and a sub-path with single slashes: `("orders", ":id")` gives
/// `/orders/:id`, `("/api/", "")` gives `/api`, `("", "")` gives `/`.
pub fn join_route(prefix: &str, sub: &str) -> String {
    let mut out = String::with_capacity(prefix.len() + sub.len() + 2);
    for part in [prefix, sub] {
        let p = part.trim_matches('/');
        if !p.is_empty() {
            out.push('/');
            out.push_str(p);
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// The HTTP path of a URL argument literal whose leading interpolation is a base URL:
/// `${BASE}/orders/${id}` (JS), `{baseUrl}/orders/{id}` (C#), `\(base)/orders` (Swift) give
/// `/orders/{}` / `/orders`; a literal that is already a path or URL is taken as is. `None`
/// when what remains is not an HTTP path ([`looks_like_http_path`]).
pub fn http_path_after_base(s: &str) -> Option<String> {
    let rest = strip_leading_interpolation(s);
    if looks_like_http_path(rest) {
        http_path_of(rest)
    } else {
        None
    }
}

/// `s` without one leading `${…}`, `{…}` or `\(…)` interpolation (balanced, so `${a({b})}` is
/// stripped whole); `s` itself when it does not start with one or never closes.
pub fn strip_leading_interpolation(s: &str) -> &str {
    let (open_len, open, close) = if s.starts_with("${") {
        (2, b'{', b'}')
    } else if s.starts_with('{') && !s.starts_with("{{") {
        (1, b'{', b'}')
    } else if s.starts_with("\\(") {
        (2, b'(', b')')
    } else {
        return s;
    };
    let mut depth = 1usize;
    for (k, &b) in s.as_bytes().iter().enumerate().skip(open_len) {
        if b == open {
            depth += 1;
        } else if b == close {
            depth -= 1;
            if depth == 0 {
                return &s[k + 1..];
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_strings_groups_and_operators() {
        use crate::index::lex::{Syntax, lex};
        let lx = lex(
            Syntax::JS,
            "a?.b(x, [1, 2], { k: 'v' }) // c(\nf(() => y ?? z, a?.5:1);\n",
        );
        let t = Toks::new(&lx);
        let texts: Vec<&str> = (0..t.len()).map(|i| t.text(i)).collect();
        assert_eq!(
            texts,
            vec![
                "a", "?.", "b", "(", "x", ",", "[", "1", ",", "2", "]", ",", "{", "k", ":", "' '",
                "}", ")", "f", "(", "(", ")", "=>", "y", "??", "z", ",", "a", "?", ".", "5", ":",
                "1", ")", ";"
            ]
        );
        assert_eq!(t.str_value(15).as_deref(), Some("v"));
        assert_eq!(t.kind(15), Some(TokKind::Str));
        assert_eq!(t.close(3), Some(17));
        assert_eq!(t.args(3), vec![(4, 5), (6, 11), (12, 17)]);
        assert_eq!(t.args(20), vec![]);
        assert_eq!(t.line(18), 2);
        assert!(t.is(22, "=>") && t.punct(22) == 0 && t.punct(19) == b'(');
        let c = t.callee(3).expect("callee");
        assert_eq!(
            (c.first(), c.last(), c.len, c.receiver()),
            ("a", "b", 2, Some("a"))
        );
        // Unclosed groups run to the end; stray closers are ignored.
        let lx = lex(Syntax::JS, "f(a, (b) ] c");
        let t = Toks::new(&lx);
        assert_eq!(t.close(1), None);
        assert_eq!(t.skip_group(1), t.len());
        assert_eq!(t.close(4), Some(6));
    }

    #[test]
    fn callee_chains_and_type_arguments() {
        use crate::index::lex::{Syntax, lex};
        let lx = lex(
            Syntax::CSHARP,
            "this._http.GetFromJsonAsync<List<Order>>(url); f().g(x);",
        );
        let t = Toks::new(&lx);
        let open = (0..t.len()).find(|&i| t.punct(i) == b'(').expect("paren");
        let c = t.callee(open).expect("chain");
        assert_eq!(&c.segs[..c.len], &["this", "_http", "GetFromJsonAsync"]);
        assert_eq!(c.receiver(), Some("_http"));
        assert!(!c.after_call);
        assert_eq!(t.skip_angles(5, t.len()), 11);
        let g = (open + 1..t.len())
            .filter(|&i| t.punct(i) == b'(')
            .nth(1)
            .expect("g(");
        assert!(t.callee(g).expect("g").after_call);
        let lx = lex(Syntax::JS, "a < b; c");
        let t = Toks::new(&lx);
        assert_eq!(t.skip_angles(1, t.len()), 1);
    }

    #[test]
    fn route_joins_and_interpolated_bases() {
        assert_eq!(join_route("orders", ":id"), "/orders/:id");
        assert_eq!(join_route("/api/", ""), "/api");
        assert_eq!(join_route("", ""), "/");
        assert_eq!(strip_leading_interpolation("${a({b})}/x"), "/x");
        assert_eq!(strip_leading_interpolation("{base}/x"), "/x");
        assert_eq!(strip_leading_interpolation("\\(base)/x"), "/x");
        assert_eq!(
            strip_leading_interpolation("{{literal}}/x"),
            "{{literal}}/x"
        );
        assert_eq!(strip_leading_interpolation("${open"), "${open");
        assert_eq!(
            http_path_after_base("${BASE}/orders/${id}").as_deref(),
            Some("/orders/{}")
        );
        assert_eq!(
            http_path_after_base("{baseUrl}/orders/{id}").as_deref(),
            Some("/orders/{}")
        );
        assert_eq!(http_path_after_base("${A}${B}"), None);
        assert_eq!(http_path_after_base("http://x/y").as_deref(), Some("/y"));
    }
}
