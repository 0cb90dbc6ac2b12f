//! The one token view every source extractor reads: a lexed file ([`Lexed`]) as a vector of
//! tokens with their bracket partners, built in one linear pass over the masked code.
//!
//! Comments never produce tokens and a string literal is one token, so extractors can write
//! patterns such as `pb . NewOrdersClient (` or `@GetMapping ( "…" )` as short token walks, and
//! `close` jumps over a block, an argument list or a composite literal in O(1). Languages
//! differ only in [`Rules`]: which multi-byte operators stay one token, whether `'x'` is a
//! character, whether `` `name` `` is an identifier. Malformed input never panics: an unclosed
//! opener has no partner (its group runs to the end of the file) and a stray closer is ignored.
//!
//! ```ignore
//! use mesh_mcp::index::lex::{Syntax, lex};
//! use mesh_mcp::index::lang::tokens::{Rules, Tokens};
//! let lx = lex(Syntax::JS, "client.get(`/orders/${id}`, opts)");
//! let t = Tokens::new(&lx, &Rules::JS);
//! assert_eq!(t.text(0), "client");
//! assert_eq!(t.close(3), Some(t.len() - 1));
//! assert_eq!(t.args(3).len(), 2);
//! ```

use std::borrow::Cow;

use crate::index::facts::{Symbol, SymbolKind};
use crate::index::lex::{Lexed, StrLit, is_ident_byte};

/// What a [`Tok`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokKind {
    /// An identifier or keyword (ASCII letters, digits, `_`, `$`, any non-ASCII byte; also a
    /// Kotlin/Scala/Swift `` `quoted` `` identifier, whose text is the name inside the ticks).
    Ident,
    /// A number literal (digits, then letters, digits, `_` and `.`).
    Num,
    /// A string literal (its whole source span, delimiters and prefix included).
    Str,
    /// A character literal (`'a'`, `L'a'`) in languages where `'` starts one: a value, never a
    /// name or a path.
    Char,
    /// Punctuation: one byte, or one of the multi-byte operators of [`Rules::ops`].
    Punct,
}

/// One token: its text, kind, byte span and 1-based line.
#[derive(Debug, Clone, Copy)]
pub struct Tok<'a> {
    /// The source text (for a quoted identifier, the name inside the ticks).
    pub text: &'a str,
    pub kind: TokKind,
    /// The byte of a one-byte punctuation token; 0 for every other token.
    pub punct: u8,
    /// True when a newline separates this token from the previous one (Kotlin, Scala, Swift,
    /// Go and Python end statements at newlines).
    pub nl_before: bool,
    /// Byte offset of the token's first byte in the source.
    pub start: u32,
    /// Byte offset just past the token.
    pub end: u32,
    /// 1-based line of the token's first byte.
    pub line: u32,
    /// For [`TokKind::Str`] and [`TokKind::Char`], the index of the literal in
    /// [`Lexed::strings`]; `u32::MAX` otherwise.
    pub lit: u32,
}

/// The per-language choices of the tokenizer.
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    /// Multi-byte operators kept as one token, longest first within a shared first byte
    /// (`===` before `==`). Every other punctuation byte is its own token, so languages with an
    /// empty list test operators as adjacent bytes ([`Tokens::op2`]).
    pub ops: &'static [&'static str],
    /// `'x'` is a character literal ([`TokKind::Char`]), not a string.
    pub char_quotes: bool,
}

impl Rules {
    /// Go, Rust, C and C++: single-byte punctuation, character literals.
    pub const C_FAMILY: Rules = Rules {
        ops: &[],
        char_quotes: true,
    };
    /// JavaScript and TypeScript.
    pub const JS: Rules = Rules {
        ops: &[
            "===", "!==", "...", "=>", "?.", "??", "||", "&&", "==", "!=", "::", "->",
        ],
        char_quotes: false,
    };
    /// C#: the JavaScript set, with character literals.
    pub const CSHARP: Rules = Rules {
        ops: Rules::JS.ops,
        char_quotes: true,
    };
    /// Swift: the JavaScript set (Swift has no `'`).
    pub const SWIFT: Rules = Rules {
        ops: Rules::JS.ops,
        char_quotes: false,
    };
    /// Java, Kotlin and Scala.
    pub const JVM: Rules = Rules {
        ops: &[
            "==", "!=", "<=", ">=", "->", "=>", "::", "&&", "||", "?.", "?:", "+=", "-=", "++",
            "..",
        ],
        char_quotes: true,
    };
    /// Python, Ruby and PHP (read through [`Tokens::range`] for expressions).
    pub const SCRIPT: Rules = Rules {
        ops: &[
            "===", "!==", "...", "=>", "?->", "->", "::", "??", "?:", "||", "&&", "==", "!=", "**",
            "//", "<<", ".=",
        ],
        char_quotes: false,
    };
}

const NO_PAIR: u32 = u32::MAX;

/// The tokens of a lexed file (or of a byte range of it) with their bracket partners.
pub struct Tokens<'l, 'a> {
    /// The lexed file the tokens point into.
    pub lx: &'l Lexed<'a>,
    /// The tokens, in source order.
    pub toks: Vec<Tok<'a>>,
    /// For a bracket token, the index of its partner (both directions); `NO_PAIR` otherwise.
    pair: Vec<u32>,
}

impl<'l, 'a> Tokens<'l, 'a> {
    /// Tokenizes the masked code of `lx`.
    pub fn new(lx: &'l Lexed<'a>, rules: &Rules) -> Self {
        Self::build(lx, rules, 0, lx.code.len(), &[])
    }

    /// Tokenizes the masked code of `lx`, leaving out every byte range in `skip` (sorted,
    /// non-overlapping; used for C preprocessor lines).
    pub fn with_skips(lx: &'l Lexed<'a>, rules: &Rules, skip: &[(usize, usize)]) -> Self {
        Self::build(lx, rules, 0, lx.code.len(), skip)
    }

    #[cfg(test)]
    /// Tokenizes only `from..to` of the masked code: the view the byte-scanning extractors
    /// (Python, Ruby, PHP) take of one expression to evaluate it with the shared analysis.
    pub fn range(lx: &'l Lexed<'a>, rules: &Rules, from: usize, to: usize) -> Self {
        Self::build(lx, rules, from, to.min(lx.code.len()), &[])
    }

    fn build(
        lx: &'l Lexed<'a>,
        rules: &Rules,
        from: usize,
        to: usize,
        skip: &[(usize, usize)],
    ) -> Self {
        let code = lx.code.as_bytes();
        let src = lx.text;
        let n = to;
        let mut toks: Vec<Tok<'a>> = Vec::with_capacity((n - from.min(n)) / 4 + 4);
        // Slices, not `Vec`s: at opt-level "z" indexing a `Vec` is a call per access.
        let starts = &lx.line_starts[..];
        let strings = &lx.strings[..];
        let mut li = match starts.binary_search(&from) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let mut si = strings.partition_point(|s| s.start < from);
        let mut ki = 0usize;
        let mut next_skip = skip.first().map_or(usize::MAX, |r| r.0);
        let mut last_line = 0u32;
        let mut i = from;
        while i < n {
            let b = code[i];
            if b.is_ascii_whitespace() {
                // The whole run at once (indentation, masked comments): no per-byte round of
                // the loop, and no bounds check per byte.
                i += 1 + code[i + 1..n]
                    .iter()
                    .position(|c| !c.is_ascii_whitespace())
                    .unwrap_or(n - i - 1);
                continue;
            }
            if i >= next_skip {
                // Skip ranges are sorted; a range may start inside a token already consumed.
                while ki < skip.len() && skip[ki].1 <= i {
                    ki += 1;
                }
                match skip.get(ki) {
                    Some(&(s, e)) if s <= i => {
                        i = e.max(i + 1);
                        ki += 1;
                        next_skip = skip.get(ki).map_or(usize::MAX, |r| r.0);
                        continue;
                    }
                    Some(&(s, _)) => next_skip = s,
                    None => next_skip = usize::MAX,
                }
            }
            while li + 1 < starts.len() && starts[li + 1] <= i {
                li += 1;
            }
            let line = li as u32 + 1;
            while si < strings.len() && strings[si].start < i {
                si += 1;
            }
            let nl_before = toks.is_empty() || line > last_line;
            if si < strings.len() && strings[si].start == i {
                let s = &strings[si];
                let end = s.end.clamp(i + 1, n.max(i + 1)).min(code.len());
                let text = src.get(i..end).unwrap_or("");
                let (kind, text, start, stop) = if b == b'`' && is_quoted_ident(lx, s) {
                    (
                        TokKind::Ident,
                        s.raw,
                        s.start + 1,
                        end.saturating_sub(1).max(s.start + 1),
                    )
                } else if rules.char_quotes
                    && (b == b'\'' || text.ends_with('\''))
                    && !text.contains('"')
                {
                    (TokKind::Char, text, i, end)
                } else {
                    (TokKind::Str, text, i, end)
                };
                toks.push(Tok {
                    text,
                    kind,
                    punct: 0,
                    nl_before,
                    start: start as u32,
                    end: stop as u32,
                    line,
                    lit: si as u32,
                });
                last_line = lx.line_of(end.saturating_sub(1).max(i));
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
                // An iterator walk: no bounds check per byte (the tokenizer's hottest loop).
                let rest = &code[i + 1..n];
                let len = rest.iter().position(|&c| !is_ident_byte(c));
                (TokKind::Ident, i + 1 + len.unwrap_or(rest.len()))
            } else {
                let mut j = i + op_len(rules.ops, &code[i..n]);
                // Keep a char boundary even for stray non-ASCII punctuation.
                while j < n && !src.is_char_boundary(j) {
                    j += 1;
                }
                (TokKind::Punct, j)
            };
            let punct = if kind == TokKind::Punct && end == i + 1 {
                b
            } else {
                0
            };
            toks.push(Tok {
                text: src.get(i..end).unwrap_or(""),
                kind,
                punct,
                nl_before,
                start: i as u32,
                end: end as u32,
                line,
                lit: u32::MAX,
            });
            last_line = line;
            i = end;
        }
        let pair = pair_brackets(&toks);
        Tokens { lx, toks, pair }
    }

    // The accessors below are forced inline: extractors call them several times per token
    // (hundreds of thousands of calls per corpus) and at opt-level "z" a plain `#[inline]`
    // stays a call whose setup costs more than the body.

    /// The number of tokens.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.toks.len()
    }

    /// Token `i`, if it exists.
    #[inline(always)]
    pub fn tok(&self, i: usize) -> Option<&Tok<'a>> {
        self.toks.get(i)
    }

    /// The kind of token `i`, `None` past the end.
    #[inline(always)]
    pub fn kind(&self, i: usize) -> Option<TokKind> {
        self.toks.get(i).map(|t| t.kind)
    }

    /// The source text of token `i` (empty past the end).
    #[inline(always)]
    pub fn text(&self, i: usize) -> &'a str {
        self.toks.get(i).map_or("", |t| t.text)
    }

    /// True when token `i` is exactly `s` (a string or character literal never matches).
    #[inline(always)]
    pub fn is(&self, i: usize, s: &str) -> bool {
        self.toks.get(i).is_some_and(|t| {
            t.text.len() == s.len()
                && !matches!(t.kind, TokKind::Str | TokKind::Char)
                && t.text == s
        })
    }

    /// True when token `i` is any of `texts` (as [`Tokens::is`] reads one).
    pub fn is_any(&self, i: usize, texts: &[&str]) -> bool {
        texts.iter().any(|s| self.is(i, s))
    }

    /// True when token `i` is the identifier or keyword `w`.
    #[inline(always)]
    pub fn kw(&self, i: usize, w: &str) -> bool {
        self.toks
            .get(i)
            // The length first: the string comparison is a call at opt-level "z".
            .is_some_and(|t| t.kind == TokKind::Ident && t.text.len() == w.len() && t.text == w)
    }

    /// The byte of the one-byte punctuation token at `i`, or 0 (any other token, or past the
    /// end): a cheap way to test several punctuation marks at once.
    #[inline(always)]
    pub fn punct(&self, i: usize) -> u8 {
        self.toks.get(i).map_or(0, |t| t.punct)
    }

    /// True when token `i` is the one-byte punctuation `c`.
    #[inline(always)]
    pub fn is_punct(&self, i: usize, c: u8) -> bool {
        self.punct(i) == c && c != 0
    }

    /// The identifier at `i`, if token `i` is one.
    #[inline(always)]
    pub fn ident(&self, i: usize) -> Option<&'a str> {
        self.toks
            .get(i)
            .filter(|t| t.kind == TokKind::Ident)
            .map(|t| t.text)
    }

    /// True when token `i` is a string literal (not a character literal).
    #[inline(always)]
    pub fn is_str(&self, i: usize) -> bool {
        self.kind(i) == Some(TokKind::Str)
    }

    /// The string literal of token `i`, if it is one.
    pub fn str_lit(&self, i: usize) -> Option<&'l StrLit<'a>> {
        let t = self.toks.get(i)?;
        if t.kind != TokKind::Str {
            return None;
        }
        self.lx.strings.get(t.lit as usize)
    }

    /// The value of the string literal at `i` (escapes processed), if token `i` is one.
    pub fn str_value(&self, i: usize) -> Option<Cow<'a, str>> {
        self.str_lit(i).map(|s| s.value())
    }

    /// The index of the bracket closing the opener at `i`, if `i` opens a closed group.
    #[inline(always)]
    pub fn close(&self, i: usize) -> Option<usize> {
        match self.pair.get(i) {
            Some(&p) if p != NO_PAIR && p as usize > i => Some(p as usize),
            _ => None,
        }
    }

    /// The index of the bracket closing the one at `i`; the end of the tokens when it never
    /// closes (or `i` is not an opener).
    #[inline(always)]
    pub fn close_or_end(&self, i: usize) -> usize {
        self.close(i).unwrap_or(self.toks.len())
    }

    /// The index of the bracket opening the one closed at `i`, if any.
    #[inline]
    pub fn open_of(&self, i: usize) -> Option<usize> {
        match self.pair.get(i) {
            Some(&p) if p != NO_PAIR && (p as usize) < i => Some(p as usize),
            _ => None,
        }
    }

    /// True when token `i` is `(`, `[` or `{`.
    #[inline(always)]
    pub fn is_opener(&self, i: usize) -> bool {
        matches!(self.punct(i), b'(' | b'[' | b'{')
    }

    /// True when token `i` is `)`, `]` or `}`.
    #[inline(always)]
    pub fn is_closer(&self, i: usize) -> bool {
        matches!(self.punct(i), b')' | b']' | b'}')
    }

    /// The index just past the group opened at `i` (the end of the file when it never
    /// closes); `i + 1` when `i` is not an opener.
    #[inline(always)]
    pub fn skip_group(&self, i: usize) -> usize {
        if self.is_opener(i) {
            self.close(i).map_or(self.len(), |c| c + 1)
        } else {
            i + 1
        }
    }

    /// The line of the last token of the group opened at `i` (the last line of the file when
    /// it never closes).
    pub fn group_end_line(&self, i: usize) -> u32 {
        match self.close(i) {
            Some(c) => self.line(c),
            None => self.lx.line_count(),
        }
    }

    /// The 1-based line of token `i` (the last line of the file past the end).
    #[inline(always)]
    pub fn line(&self, i: usize) -> u32 {
        self.toks
            .get(i)
            .map_or_else(|| self.lx.line_count(), |t| t.line)
    }

    /// The line of the last byte of token `i` (a string may span lines); the last line of the
    /// file past the end.
    pub fn end_line(&self, i: usize) -> u32 {
        match self.toks.get(i) {
            Some(t) if matches!(t.kind, TokKind::Str) => self
                .lx
                .line_of((t.end as usize).saturating_sub(1).max(t.start as usize)),
            Some(t) => t.line,
            None => self.lx.line_count(),
        }
    }

    /// Byte offset of token `i` in the source (the end of the text past the end).
    #[inline(always)]
    pub fn start(&self, i: usize) -> usize {
        self.toks
            .get(i)
            .map_or(self.lx.text.len(), |t| t.start as usize)
    }

    /// The token range covering the bytes `from..to`: the first token starting at or after
    /// `from` up to the last one ending at or before `to` (for extractors that scan bytes).
    pub fn range_of(&self, from: usize, to: usize) -> (usize, usize) {
        let a = self.toks.partition_point(|t| (t.start as usize) < from);
        let b = self.toks.partition_point(|t| (t.end as usize) <= to);
        (a, b.max(a))
    }

    /// True when a newline separates token `i` from the one before it (true past the end).
    #[inline(always)]
    pub fn nl_before(&self, i: usize) -> bool {
        self.toks.get(i).is_none_or(|t| t.nl_before)
    }

    /// True when token `i + 1` starts exactly where token `i` ends (`::`, `:=`, `->`).
    #[inline(always)]
    pub fn joined(&self, i: usize) -> bool {
        match (self.toks.get(i), self.toks.get(i + 1)) {
            (Some(a), Some(b)) => a.end == b.start,
            _ => false,
        }
    }

    /// True when tokens `i` and `i + 1` are the two punctuation bytes of `op` written together.
    #[inline]
    pub fn op2(&self, i: usize, op: &[u8; 2]) -> bool {
        self.is_punct(i, op[0]) && self.is_punct(i + 1, op[1]) && self.joined(i)
    }

    /// The `::` path of identifiers that starts at `i` (`a::b::c`): its last identifier (none
    /// when token `i` is no identifier) and the index of the token after it.
    pub fn path_end(&self, i: usize) -> (Option<&'a str>, usize) {
        let (mut j, mut last) = (i, None);
        while let Some(id) = self.ident(j) {
            last = Some(id);
            j += 1;
            if self.op2(j, b"::") {
                j += 2;
            } else {
                break;
            }
        }
        (last, j)
    }

    /// True when token `i` is the first token on its line.
    #[inline]
    pub fn first_on_line(&self, i: usize) -> bool {
        i == 0 || self.line(i - 1) != self.line(i)
    }

    /// The top-level arguments of the call or literal whose opener is at `open`: token ranges
    /// split on depth-0 commas, empty for `()` or when `open` is not an opener.
    pub fn args(&self, open: usize) -> Vec<(usize, usize)> {
        if !self.is_opener(open) {
            return Vec::new();
        }
        let end = self.close_or_end(open);
        self.args_between(open + 1, end)
    }

    /// The token ranges of `from..end` split on depth-0 commas (groups skipped whole); empty
    /// when the range is.
    pub fn args_between(&self, from: usize, end: usize) -> Vec<(usize, usize)> {
        self.split_at(from, end, ",")
    }

    /// Splits `from..to` at depth-0 tokens equal to `sep` (groups skipped whole); empty parts
    /// are dropped.
    pub fn split_at(&self, from: usize, to: usize, sep: &str) -> Vec<(usize, usize)> {
        let to = to.min(self.len());
        let mut out = Vec::new();
        let mut a = from;
        let mut j = from;
        while j < to {
            if self.is_opener(j) {
                j = self.skip_group(j).min(to);
                continue;
            }
            if self.is(j, sep) {
                if j > a {
                    out.push((a, j));
                }
                a = j + 1;
            }
            j += 1;
        }
        if to > a {
            out.push((a, to));
        }
        out
    }

    /// The index of the first token at or after `from` (and before `to`) that is `s` at
    /// bracket depth 0 relative to `from`; groups are skipped whole, a closer ends the search.
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

    /// The `<` matching the `>` at `close`, walking back over at most `max_steps` more tokens
    /// and giving up at any punctuation in `stops`: where type arguments `<…>` open.
    pub fn open_angle_before(&self, close: usize, stops: &[u8], max_steps: usize) -> Option<usize> {
        let mut depth = 0usize;
        let mut k = close;
        for _ in 0..=max_steps {
            match self.punct(k) {
                b'>' => depth += 1,
                b'<' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(k);
                    }
                }
                p if stops.contains(&p) => return None,
                _ => {}
            }
            k = k.checked_sub(1)?;
        }
        None
    }

    /// The callee chain ending at the token before `open` (a `(`), skipping `<…>` type
    /// arguments (`this.http.get<Order[]>(`, `GetFromJsonAsync<List<Order>>(`).
    pub fn callee(&self, open: usize) -> Option<Chain<'a>> {
        let mut k = open.checked_sub(1)?;
        if self.punct(k) == b'>' {
            k = self.open_angle_before(k, b";{}", 48)?.checked_sub(1)?;
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

    /// Skips a `<…>` generic list at `k` (C++, Rust: nested lists and groups skipped, the `>`
    /// of a `->` arrow does not close it); returns the index after it, or the index of the
    /// `{`, `;`, `}` or `)` that shows the list is malformed (the end when it never closes),
    /// or `k` when `k` is not a `<`.
    pub fn skip_generic_args(&self, k: usize) -> usize {
        if !self.is_punct(k, b'<') {
            return k;
        }
        let mut depth = 0usize;
        let mut j = k;
        while j < self.len() {
            if self.is_punct(j, b'<') {
                depth += 1;
            } else if self.is_punct(j, b'>')
                && !(j > 0 && self.is_punct(j - 1, b'-') && self.joined(j - 1))
            {
                depth -= 1;
                if depth == 0 {
                    return j + 1;
                }
            } else if matches!(self.punct(j), b'{' | b';' | b'}' | b')') {
                return j;
            } else if self.is_punct(j, b'(') || self.is_punct(j, b'[') {
                j = self.skip_group(j);
                continue;
            }
            j += 1;
        }
        j
    }

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

/// True when the backtick literal `s` is a quoted identifier: the lexer only makes a backtick
/// literal that stops at a newline for languages whose backticks quote names.
fn is_quoted_ident(lx: &Lexed, s: &StrLit) -> bool {
    // Go raw strings and JS templates may span lines and hold any text; a quoted identifier
    // is short, on one line and looks like a name.
    !s.raw.is_empty()
        && s.raw.len() <= 128
        && !s.raw.contains(['\n', '$', '{', '/', '\\', '"'])
        && lx.line_of(s.start) == lx.line_of(s.end.saturating_sub(1).max(s.start))
        && s.raw
            .bytes()
            .all(|b| is_ident_byte(b) || b == b' ' || b == b'-')
}

/// The byte length of the punctuation token at the start of `rest`: the longest operator of
/// `ops` it starts with, else 1.
#[inline]
fn op_len(ops: &[&str], rest: &[u8]) -> usize {
    let first = rest[0];
    // Every operator is ASCII punctuation: unless another one follows, this is a one-byte
    // token, without a look at the list (most punctuation is followed by a name or a space).
    if !rest.get(1).is_some_and(u8::is_ascii_punctuation) {
        return 1;
    }
    let mut best = 1;
    for op in ops {
        let o = op.as_bytes();
        if o[0] == first && o.len() > best && rest.starts_with(o) {
            best = o.len();
        }
    }
    // `?.` before a digit is a ternary (`a?.5:1`).
    if best == 2 && first == b'?' && rest[1] == b'.' && rest.get(2).is_some_and(u8::is_ascii_digit)
    {
        best = 1;
    }
    best
}

/// Pairs brackets in one pass with an explicit stack. A `}` abandons whatever is open inside
/// its block; a `)` or `]` never crosses an open `{` (a stray one inside a body must not end
/// the class around it) and looks at most 64 levels down; a closer with no opener is ignored.
fn pair_brackets(toks: &[Tok]) -> Vec<u32> {
    let mut pair = vec![NO_PAIR; toks.len()];
    let mut stack: Vec<(u32, u8)> = Vec::new();
    let mut open_counts = [0usize; 3];
    for (i, t) in toks.iter().enumerate() {
        let (kind, opening) = match t.punct {
            b'(' => (0u8, true),
            b'[' => (1, true),
            b'{' => (2, true),
            b')' => (0, false),
            b']' => (1, false),
            b'}' => (2, false),
            _ => continue,
        };
        if opening {
            stack.push((i as u32, kind));
            open_counts[kind as usize] += 1;
            continue;
        }
        if open_counts[kind as usize] == 0 {
            continue;
        }
        let reachable = kind == 2
            || stack
                .iter()
                .rev()
                .take(64)
                .take_while(|&&(_, k)| k != 2)
                .any(|&(_, k)| k == kind);
        if !reachable {
            continue;
        }
        while let Some((o, k)) = stack.pop() {
            open_counts[k as usize] -= 1;
            if k == kind {
                pair[o as usize] = i as u32;
                pair[i] = o;
                break;
            }
        }
    }
    pair
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

/// The doc line of a declaration: the first line of the comment block directly above its
/// first attribute/decorator line (or above the declaration when it has none), else that first
/// attribute line, else `None`.
pub fn doc_line(lx: &Lexed, decl_line: u32, attr_line: Option<u32>) -> Option<u32> {
    lx.doc_comment_above(attr_line.unwrap_or(decl_line))
        .or(attr_line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::lex::{Syntax, lex};

    /// `op_len` answers 1 without the list when no punctuation follows: true only while every
    /// operator of every rule set is ASCII punctuation.
    #[test]
    fn operators_are_ascii_punctuation() {
        for rules in [
            Rules::C_FAMILY,
            Rules::JS,
            Rules::CSHARP,
            Rules::SWIFT,
            Rules::JVM,
            Rules::SCRIPT,
        ] {
            for op in rules.ops {
                assert!(op.len() >= 2, "{op}");
                assert!(op.bytes().all(|b| b.is_ascii_punctuation()), "{op}");
            }
        }
    }

    #[test]
    fn tokens_strings_groups_and_operators() {
        let lx = lex(
            Syntax::JS,
            "a?.b(x, [1, 2], { k: 'v' }) // c(\nf(() => y ?? z, a?.5:1);\n",
        );
        let t = Tokens::new(&lx, &Rules::JS);
        let texts: Vec<&str> = (0..t.len()).map(|i| t.text(i)).collect();
        assert_eq!(
            texts,
            vec![
                "a", "?.", "b", "(", "x", ",", "[", "1", ",", "2", "]", ",", "{", "k", ":", "'v'",
                "}", ")", "f", "(", "(", ")", "=>", "y", "??", "z", ",", "a", "?", ".", "5", ":",
                "1", ")", ";"
            ]
        );
        assert_eq!(t.str_value(15).as_deref(), Some("v"));
        assert_eq!(t.kind(15), Some(TokKind::Str));
        assert_eq!(t.close(3), Some(17));
        assert_eq!(t.open_of(17), Some(3));
        assert_eq!(t.args(3), vec![(4, 5), (6, 11), (12, 17)]);
        assert_eq!(t.args(20), vec![]);
        assert_eq!(t.line(18), 2);
        assert!(t.nl_before(18) && !t.nl_before(19));
        assert!(t.is(22, "=>") && t.punct(22) == 0 && t.punct(19) == b'(');
        let c = t.callee(3).expect("callee");
        assert_eq!(
            (c.first(), c.last(), c.len, c.receiver()),
            ("a", "b", 2, Some("a"))
        );
        // Unclosed groups run to the end; stray closers are ignored.
        let lx = lex(Syntax::JS, "f(a, (b) ] c");
        let t = Tokens::new(&lx, &Rules::JS);
        assert_eq!(t.close(1), None);
        assert_eq!(t.skip_group(1), t.len());
        assert_eq!(t.close(4), Some(6));
    }

    #[test]
    fn tokens_spans_lines_strings_and_brackets() {
        let src = "f(a, \"x\")\n{ [ } ) g::h\n`raw\nline` 'c' 12.5e3";
        let l = lex(Syntax::GO, src);
        let t = Tokens::new(&l, &Rules::C_FAMILY);
        let texts: Vec<&str> = (0..t.len()).map(|i| t.text(i)).collect();
        assert_eq!(
            texts,
            vec![
                "f",
                "(",
                "a",
                ",",
                "\"x\"",
                ")",
                "{",
                "[",
                "}",
                ")",
                "g",
                ":",
                ":",
                "h",
                "`raw\nline`",
                "'c'",
                "12.5e3"
            ]
        );
        assert_eq!(t.close(1), Some(5));
        // `{ [ }`: the stray `[` is skipped, `{` still closes; the stray `)` is ignored.
        assert_eq!(t.close(6), Some(8));
        assert_eq!(t.close(7), None);
        assert_eq!(t.skip_group(7), t.len());
        assert_eq!(t.str_value(4).as_deref(), Some("x"));
        assert!(t.is_str(14) && !t.is_str(15) && t.kind(15) == Some(TokKind::Char));
        assert_eq!((t.line(14), t.end_line(14)), (3, 4));
        assert!(t.op2(11, b"::") && t.first_on_line(6) && !t.first_on_line(7));
        assert_eq!(t.args(1), vec![(2, 3), (4, 5)]);
        let skipped = Tokens::with_skips(&l, &Rules::C_FAMILY, &[(0, 10)]);
        assert_eq!(skipped.text(0), "{");
    }

    #[test]
    fn single_byte_rules_skips_chars_and_numbers() {
        let l = lex(Syntax::GO, "#x\nfoo := bar.Baz(1.5, \"s\", 'c') { } ]\nx");
        let t = Tokens::with_skips(&l, &Rules::C_FAMILY, &[(0, 3)]);
        assert_eq!(t.text(0), "foo");
        assert!(t.op2(1, b":="));
        assert!(t.is_punct(4, b'.') && t.joined(3));
        let open = 6;
        assert!(t.is_punct(open, b'('));
        assert_eq!(t.args(open).len(), 3);
        assert_eq!(t.kind(7), Some(TokKind::Num));
        assert_eq!(t.text(7), "1.5");
        assert!(t.is_str(9) && t.str_value(9).as_deref() == Some("s"));
        assert_eq!(t.kind(11), Some(TokKind::Char));
        assert!(!t.is_str(11));
        assert_eq!(t.skip_group(13), 15);
        assert_eq!(t.close(13), Some(14));
        assert_eq!(t.line(t.len() - 1), 3);
    }

    #[test]
    fn jvm_operators_and_quoted_identifiers() {
        let lx = lex(Syntax::KOTLIN, "val x = a ?: `my name`::class\n  .y");
        let t = Tokens::new(&lx, &Rules::JVM);
        let texts: Vec<&str> = (0..t.len()).map(|i| t.text(i)).collect();
        assert_eq!(
            texts,
            vec![
                "val", "x", "=", "a", "?:", "my name", "::", "class", ".", "y"
            ]
        );
        assert_eq!(t.kind(5), Some(TokKind::Ident));
        assert!(t.nl_before(8) && !t.nl_before(9));
    }

    #[test]
    fn a_range_tokenizes_one_expression() {
        let src = "x = 1\nurl = base + \"/orders/\" + oid\n";
        let lx = lex(Syntax::PYTHON, src);
        let from = src.find("base").unwrap();
        let t = Tokens::range(&lx, &Rules::SCRIPT, from, src.len() - 1);
        let texts: Vec<&str> = (0..t.len()).map(|i| t.text(i)).collect();
        assert_eq!(texts, vec!["base", "+", "\"/orders/\"", "+", "oid"]);
        assert_eq!(t.line(0), 2);
        assert_eq!(t.str_value(2).as_deref(), Some("/orders/"));
    }

    #[test]
    fn callee_chains_and_type_arguments() {
        let lx = lex(
            Syntax::CSHARP,
            "this._http.GetFromJsonAsync<List<Order>>(url); f().g(x);",
        );
        let t = Tokens::new(&lx, &Rules::CSHARP);
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
        let t = Tokens::new(&lx, &Rules::JS);
        assert_eq!(t.skip_angles(1, t.len()), 1);
    }

    #[test]
    fn malformed_input_never_panics() {
        for src in [
            "", "(", ")", "}{", "'", "\"", "`", "é(ü)", "a\u{0}b", "((((]]]]", "x?.", "?",
        ] {
            for syntax in [
                Syntax::JS,
                Syntax::GO,
                Syntax::KOTLIN,
                Syntax::PYTHON,
                Syntax::CSHARP,
            ] {
                let lx = lex(syntax, src);
                for rules in [Rules::JS, Rules::C_FAMILY, Rules::JVM, Rules::SCRIPT] {
                    let t = Tokens::new(&lx, &rules);
                    for i in 0..t.len() + 2 {
                        let _ = (
                            t.text(i),
                            t.close(i),
                            t.skip_group(i),
                            t.end_line(i),
                            t.args(i),
                        );
                        let _ = t.callee(i);
                    }
                    let _ = Tokens::range(&lx, &rules, src.len() / 2, src.len() + 3);
                }
            }
        }
    }

    /// The example in the documentation above (private items have no doctests).
    #[test]
    fn documented_example_1() {
        use crate::index::lang::tokens::{Rules, Tokens};
        use crate::index::lex::{Syntax, lex};
        let lx = lex(Syntax::JS, "client.get(`/orders/${id}`, opts)");
        let t = Tokens::new(&lx, &Rules::JS);
        assert_eq!(t.text(0), "client");
        assert_eq!(t.close(3), Some(t.len() - 1));
        assert_eq!(t.args(3).len(), 2);
    }
}
