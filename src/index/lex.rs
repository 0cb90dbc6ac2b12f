//! The lexer layer: comments, strings and nesting for each language family.
//!
//! [`lex`] turns a file into a [`Lexed`] view with the same byte offsets as the source:
//! `code` is the text with every comment and every string *content* replaced by spaces
//! (newlines kept, quotes kept), so an extractor can search `code` for `class`, `import` or
//! `.send(` without ever matching inside a comment or a string, and then ask for the string
//! literal at an offset ([`Lexed::string_at`]) to read a topic name or a route path. Comments
//! are remembered by line so extractors can find the doc comment above a declaration.
//!
//! The lexer is one linear pass, never recurses, never panics, and gives up gracefully on an
//! unterminated string or comment (it runs to the end of the file). A [`Syntax`] per language
//! says which comment and string forms exist.
//!
//! ```ignore
//! use mesh_mcp::index::lex::{lex, Syntax};
//! let l = lex(Syntax::GO, "x := \"// not a comment\" // a comment\n");
//! assert_eq!(l.code.trim_end(), "x := \"                \"");
//! assert_eq!(l.strings[0].value(), "// not a comment");
//! ```

pub mod cancel;
mod literals;

use std::borrow::Cow;
use std::iter::Peekable;
use std::str::Chars;

use super::facts::Language;
use literals::{heredoc, heredoc_opener_end, string_at};

/// What a language's source looks like to the lexer.
#[derive(Debug, Clone, Copy)]
pub struct Syntax {
    /// Line comment openers (`//`, `#`, `--`).
    pub line_comments: &'static [&'static str],
    /// Block comment delimiters (`/*`, `*/`).
    pub block_comment: Option<(&'static str, &'static str)>,
    /// Block comments nest (Rust, Swift, Kotlin, Scala).
    pub nested_comments: bool,
    /// `"…"` strings with backslash escapes.
    pub double_quote: bool,
    /// What a `'` starts.
    pub single_quote: SingleQuote,
    /// What a `` ` `` starts.
    pub backtick: Backtick,
    /// `"""…"""` strings (Python also `'''…'''`; Java, Kotlin, Swift, Scala, C# 11).
    pub triple_quotes: bool,
    /// Python: `'''…'''` as well, and string prefixes `r`, `b`, `f`, `u` in any mix.
    pub python_prefixes: bool,
    /// Rust `r"…"`, `r#"…"#`, `b"…"`, `br#"…"#`.
    pub rust_raw: bool,
    /// C++ `R"delim(…)delim"` (with `u8R`, `LR` … prefixes).
    pub cpp_raw: bool,
    /// C# `@"…"` verbatim strings (doubled quotes escape) and `$@"…"`.
    pub csharp_verbatim: bool,
    /// Swift `#"…"#` extended delimiters.
    pub swift_raw: bool,
    /// Ruby `=begin`/`=end` block comments and `<<~ID` heredocs; PHP `<<<ID` heredocs.
    pub heredocs: bool,
    /// Ordinary quoted strings may span lines (Rust, Ruby, PHP); elsewhere an unterminated
    /// quote ends at the end of its line, so one stray quote cannot swallow the file.
    pub multiline_strings: bool,
    /// JS/TS regular-expression literals (`/'/g`), told apart from division by what precedes.
    pub js_regex: bool,
}

/// The meaning of `'` in a language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SingleQuote {
    /// A string like `"…"` (JS, Python, Ruby, PHP, YAML).
    String,
    /// A character literal (`'a'`, `'\n'`) — C, C++, Java, C#, Go, Kotlin, Scala.
    Char,
    /// A character literal or a lifetime/label (`'a`): Rust.
    CharOrLifetime,
    /// Not a quote at all (Swift).
    Plain,
}

/// The meaning of `` ` `` in a language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backtick {
    /// Not a quote.
    Plain,
    /// A raw string without escapes (Go).
    Raw,
    /// A template literal with `${…}` substitutions (JS/TS): the whole literal is one string.
    Template,
    /// A quoted identifier (Kotlin, Scala, Swift): masked like a string.
    QuotedIdent,
}

const BASE: Syntax = Syntax {
    line_comments: &["//"],
    block_comment: Some(("/*", "*/")),
    nested_comments: false,
    double_quote: true,
    single_quote: SingleQuote::Char,
    backtick: Backtick::Plain,
    triple_quotes: false,
    python_prefixes: false,
    rust_raw: false,
    cpp_raw: false,
    csharp_verbatim: false,
    swift_raw: false,
    heredocs: false,
    multiline_strings: false,
    js_regex: false,
};

impl Syntax {
    /// C and C++ (raw strings `R"(…)"`).
    pub const C: Syntax = Syntax {
        cpp_raw: true,
        ..BASE
    };
    /// Go: raw strings in backticks, runes in single quotes.
    pub const GO: Syntax = Syntax {
        backtick: Backtick::Raw,
        ..BASE
    };
    /// Java (text blocks `"""…"""`).
    pub const JAVA: Syntax = Syntax {
        triple_quotes: true,
        ..BASE
    };
    /// Kotlin: nested comments, raw strings, quoted identifiers.
    pub const KOTLIN: Syntax = Syntax {
        nested_comments: true,
        triple_quotes: true,
        backtick: Backtick::QuotedIdent,
        ..BASE
    };
    /// Scala: like Kotlin.
    pub const SCALA: Syntax = Syntax::KOTLIN;
    /// C#: verbatim `@"…"`, interpolated `$"…"`, raw `"""…"""`.
    pub const CSHARP: Syntax = Syntax {
        csharp_verbatim: true,
        triple_quotes: true,
        ..BASE
    };
    /// Swift: nested comments, `"""…"""`, `#"…"#`, no character literals.
    pub const SWIFT: Syntax = Syntax {
        nested_comments: true,
        triple_quotes: true,
        swift_raw: true,
        single_quote: SingleQuote::Plain,
        backtick: Backtick::QuotedIdent,
        ..BASE
    };
    /// Rust: nested comments, raw and byte strings, lifetimes.
    pub const RUST: Syntax = Syntax {
        nested_comments: true,
        multiline_strings: true,
        rust_raw: true,
        single_quote: SingleQuote::CharOrLifetime,
        ..BASE
    };
    /// JavaScript and TypeScript: `'…'`, `"…"` and template literals.
    pub const JS: Syntax = Syntax {
        single_quote: SingleQuote::String,
        backtick: Backtick::Template,
        js_regex: true,
        ..BASE
    };
    /// Python: `#` comments, prefixed and triple-quoted strings.
    pub const PYTHON: Syntax = Syntax {
        line_comments: &["#"],
        block_comment: None,
        single_quote: SingleQuote::String,
        triple_quotes: true,
        python_prefixes: true,
        ..BASE
    };
    /// Ruby: `#` comments, `=begin`/`=end`, heredocs.
    pub const RUBY: Syntax = Syntax {
        line_comments: &["#"],
        block_comment: None,
        single_quote: SingleQuote::String,
        heredocs: true,
        multiline_strings: true,
        ..BASE
    };
    /// PHP: `//`, `#` and `/* */` comments, heredocs.
    pub const PHP: Syntax = Syntax {
        line_comments: &["//", "#"],
        single_quote: SingleQuote::String,
        heredocs: true,
        multiline_strings: true,
        ..BASE
    };

    /// The syntax of a source language (`None` for documents, which have their own parsers).
    pub fn of(lang: Language) -> Option<Syntax> {
        Some(match lang {
            Language::Go => Syntax::GO,
            Language::Java => Syntax::JAVA,
            Language::Kotlin => Syntax::KOTLIN,
            Language::Scala => Syntax::SCALA,
            Language::CSharp => Syntax::CSHARP,
            Language::Swift => Syntax::SWIFT,
            Language::Rust => Syntax::RUST,
            Language::TypeScript | Language::JavaScript => Syntax::JS,
            Language::Python => Syntax::PYTHON,
            Language::Ruby => Syntax::RUBY,
            Language::Php => Syntax::PHP,
            Language::C | Language::Cpp => Syntax::C,
            _ => return None,
        })
    }
}

/// A string literal: where its content is in the source, and the content itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StrLit<'a> {
    /// Byte offset of the opening delimiter (the quote, or the prefix such as `r#` or `@`).
    pub start: usize,
    /// Byte offset just past the closing delimiter.
    pub end: usize,
    /// The raw content between the delimiters, escapes not processed.
    pub raw: &'a str,
    /// 1-based line of the opening delimiter.
    pub line: u32,
    /// True for raw/verbatim forms whose backslashes are literal.
    pub is_raw: bool,
}

impl<'a> StrLit<'a> {
    /// The content with the common backslash escapes processed (`\"`, `\\`, `\n`, `\t`, `\'`);
    /// unknown escapes are kept as written.
    pub fn value(&self) -> Cow<'a, str> {
        if self.is_raw || !self.raw.contains('\\') {
            return Cow::Borrowed(self.raw);
        }
        Cow::Owned(unescape_with(self.raw, |next, _, out| match next {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some(q @ ('"' | '\'' | '\\' | '`' | '/' | '$')) => out.push(q),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }))
    }
}

/// Byte length of the UTF-8 character whose first byte is `b` (1 for ASCII and stray bytes).
pub(crate) fn utf8_len(b: u8) -> usize {
    match b {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}

/// Copies `s`, handing each backslash escape (the character after it, `None` for a trailing
/// backslash, and the rest of the input) to `escape` to write: the loop every unescaper shares.
pub(crate) fn unescape_with(
    s: &str,
    mut escape: impl FnMut(Option<char>, &mut Peekable<Chars<'_>>, &mut String),
) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            let next = chars.next();
            escape(next, &mut chars, &mut out);
        } else {
            out.push(c);
        }
    }
    out
}

/// A comment: its lines and whether it stands alone on its lines (not trailing code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Comment {
    pub start: usize,
    pub end: usize,
    pub first_line: u32,
    pub last_line: u32,
    /// True when only whitespace precedes the comment on its first line.
    pub own_line: bool,
}

/// A lexed file: the masked code, the string literals and the comments, all with source
/// offsets.
#[derive(Debug, Clone)]
pub struct Lexed<'a> {
    /// The source.
    pub text: &'a str,
    /// The source with comments and string contents replaced by spaces (same length, same
    /// newlines, delimiters kept).
    pub code: String,
    /// String literals in source order.
    pub strings: Vec<StrLit<'a>>,
    /// Comments in source order.
    pub comments: Vec<Comment>,
    /// Byte offset of the start of each line (`line_starts[0] == 0`).
    pub line_starts: Vec<usize>,
}

impl<'a> Lexed<'a> {
    /// The 1-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> u32 {
        line_at(&self.line_starts, offset)
    }

    /// The byte range of a 1-based line, without its newline.
    pub fn line_range(&self, line: u32) -> (usize, usize) {
        let i = (line.max(1) - 1) as usize;
        let start = self.line_starts.get(i).copied().unwrap_or(self.text.len());
        let end = self
            .line_starts
            .get(i + 1)
            .map_or(self.text.len(), |&n| n.saturating_sub(1));
        (start, end.max(start))
    }

    /// The source text of a 1-based line (without `\r\n`).
    pub fn source_line(&self, line: u32) -> &'a str {
        let (s, e) = self.line_range(line);
        self.text[s..e].trim_end_matches('\r')
    }

    /// The masked code of a 1-based line.
    pub fn code_line(&self, line: u32) -> &str {
        let (s, e) = self.line_range(line);
        self.code[s..e].trim_end_matches('\r')
    }

    /// The number of lines.
    pub fn line_count(&self) -> u32 {
        self.line_starts.len() as u32
    }

    /// The string literal whose opening delimiter is at `offset`, or else the first one that
    /// starts after `offset`.
    pub fn string_at(&self, offset: usize) -> Option<&StrLit<'a>> {
        let i = self.strings.partition_point(|s| s.start < offset);
        self.strings.get(i)
    }

    /// Every string literal starting in `from..to`.
    pub fn strings_in(&self, from: usize, to: usize) -> &[StrLit<'a>] {
        let a = self.strings.partition_point(|s| s.start < from);
        let b = self.strings.partition_point(|s| s.start < to);
        &self.strings[a..b.max(a)]
    }

    /// The string literal covering `offset` (between its delimiters or on them), if any.
    pub fn string_covering(&self, offset: usize) -> Option<&StrLit<'a>> {
        let i = self.strings.partition_point(|s| s.start <= offset);
        i.checked_sub(1)
            .and_then(|i| self.strings.get(i))
            .filter(|s| offset < s.end)
    }

    /// The first line of the doc comment block that ends right above `line` (comments on their
    /// own lines, contiguous, no blank line between them and the declaration), if any.
    /// Attribute/annotation lines between the comment and the declaration are the caller's
    /// business: pass the first annotation's line.
    pub fn doc_comment_above(&self, line: u32) -> Option<u32> {
        let mut want = line.checked_sub(1)?;
        let mut first = None;
        let idx = self.comments.partition_point(|c| c.last_line < line);
        for c in self.comments[..idx].iter().rev() {
            if c.last_line != want || !c.own_line {
                break;
            }
            first = Some(c.first_line);
            want = match c.first_line.checked_sub(1) {
                Some(w) if w > 0 => w,
                _ => break,
            };
        }
        first
    }

    /// The source text of a comment.
    pub fn comment_text(&self, c: &Comment) -> &'a str {
        &self.text[c.start..c.end]
    }

    /// The offset of the bracket closing the one at `open` (`{`, `(`, `[` or `<`), counted on
    /// the masked code; `None` when it is never closed.
    pub fn matching_close(&self, open: usize) -> Option<usize> {
        matching_close(&self.code, open)
    }

    #[cfg(test)]
    /// The 1-based line on which the block opened at `open` closes; the last line of the file
    /// when it never closes (a truncated file is indexed as far as it goes).
    pub fn block_end_line(&self, open: usize) -> u32 {
        match self.matching_close(open) {
            Some(c) => self.line_of(c),
            None => self.line_count(),
        }
    }

    /// The last line of an indentation block (Python, YAML-like): the last non-blank,
    /// non-comment line after `line` indented deeper than `line` itself.
    pub fn indent_block_end(&self, line: u32) -> u32 {
        let indent = |l: u32| -> Option<usize> {
            let code = self.code_line(l);
            // Leading ASCII whitespace by bytes (what `trim_start` trims below U+0080, without
            // a char decode and a call per character); a non-ASCII byte after it takes the
            // Unicode path.
            let b = code.as_bytes();
            let n = b
                .iter()
                .take_while(|&&c| matches!(c, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r'))
                .count();
            if b.get(n).is_some_and(|&c| c >= 0x80) {
                let t = code.trim_start();
                return (!t.is_empty()).then(|| code.len() - t.len());
            }
            (n < b.len()).then_some(n)
        };
        let Some(base) = indent(line) else {
            return line;
        };
        // The header may span lines (open brackets): skip to the line holding its `:`.
        let mut last = line;
        let mut l = line + 1;
        let mut depth = bracket_balance(self.code_line(line));
        while l <= self.line_count() && depth > 0 {
            depth += bracket_balance(self.code_line(l));
            last = l;
            l += 1;
        }
        while l <= self.line_count() {
            match indent(l) {
                Some(i) if i > base => last = l,
                Some(_) => break,
                None => {}
            }
            l += 1;
        }
        last
    }
}

fn bracket_balance(code: &str) -> i32 {
    code.bytes().fold(0, |d, b| match b {
        b'(' | b'[' | b'{' => d + 1,
        b')' | b']' | b'}' => d - 1,
        _ => d,
    })
}

/// The offset of the bracket closing the one at `open` in masked `code`.
pub fn matching_close(code: &str, open: usize) -> Option<usize> {
    let bytes = code.as_bytes();
    let (o, c) = match bytes.get(open)? {
        b'{' => (b'{', b'}'),
        b'(' => (b'(', b')'),
        b'[' => (b'[', b']'),
        b'<' => (b'<', b'>'),
        _ => return None,
    };
    let mut depth = 0usize;
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        if b == o {
            depth += 1;
        } else if b == c {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// True for bytes that can be part of an identifier (ASCII letters, digits, `_`, `$`, and any
/// non-ASCII byte).
#[inline]
pub fn is_ident_byte(b: u8) -> bool {
    IDENT_BYTES[b as usize]
}

/// [`is_ident_byte`] as a table: one load instead of four comparisons, in the innermost loops
/// of the lexer and every tokenizer.
const IDENT_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        table[i] = b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
        i += 1;
    }
    table
};

/// The identifier starting at `at` (after skipping whitespace), with its start offset.
pub fn ident_after(code: &str, at: usize) -> Option<(usize, &str)> {
    let bytes = code.as_bytes();
    let mut i = at;
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    let start = i;
    while i < bytes.len() && is_ident_byte(bytes[i]) {
        i += 1;
    }
    (i > start && !bytes[start].is_ascii_digit()).then(|| (start, &code[start..i]))
}

/// The identifier ending at `end` (after skipping whitespace backwards), with its start offset.
pub fn ident_before(code: &str, end: usize) -> Option<(usize, &str)> {
    let bytes = code.as_bytes();
    let mut i = end.min(bytes.len());
    while i > 0 && bytes[i - 1].is_ascii_whitespace() {
        i -= 1;
    }
    let stop = i;
    while i > 0 && is_ident_byte(bytes[i - 1]) {
        i -= 1;
    }
    (i < stop && !bytes[i].is_ascii_digit()).then(|| (i, &code[i..stop]))
}

/// The first non-whitespace byte at or after `at`, with its offset.
pub fn next_non_space(code: &str, at: usize) -> Option<(usize, u8)> {
    code.as_bytes()
        .iter()
        .enumerate()
        .skip(at)
        .find(|(_, b)| !b.is_ascii_whitespace())
        .map(|(i, &b)| (i, b))
}

/// The last non-whitespace byte before `end`, with its offset.
pub fn prev_non_space(code: &str, end: usize) -> Option<(usize, u8)> {
    let bytes = code.as_bytes();
    (0..end.min(bytes.len()))
        .rev()
        .find(|&i| !bytes[i].is_ascii_whitespace())
        .map(|i| (i, bytes[i]))
}

/// Every offset where `word` occurs in `code` as a whole identifier.
///
/// The leftmost non-overlapping occurrences, like `match_indices`, found by a plain byte loop
/// to each occurrence of the word's first byte and a comparison: callers look for short
/// keywords in short heads, where building a two-way searcher per call cost more than the
/// search.
pub fn find_word<'c>(code: &'c str, word: &'c str) -> impl Iterator<Item = usize> + 'c {
    let bytes = code.as_bytes();
    let w = word.as_bytes();
    let mut from = 0;
    std::iter::from_fn(move || {
        while from <= bytes.len() {
            let mut i = from;
            if let Some(&first) = w.first() {
                // A first byte of a UTF-8 encoding never occurs inside another character.
                while i < bytes.len() && bytes[i] != first {
                    i += 1;
                }
                if i == bytes.len() {
                    from = i + 1;
                    return None;
                }
            }
            let found = bytes[i..].starts_with(w);
            from = if found && !w.is_empty() {
                i + w.len()
            } else {
                // The empty word occurs at every character boundary.
                let mut next = i + 1;
                while next < bytes.len() && bytes[next] & 0xC0 == 0x80 {
                    next += 1;
                }
                next
            };
            if !found {
                continue;
            }
            let before_ok = i == 0 || !is_ident_byte(bytes[i - 1]);
            let after = i + w.len();
            let after_ok = after >= bytes.len() || !is_ident_byte(bytes[after]);
            if before_ok && after_ok {
                return Some(i);
            }
        }
        None
    })
}

/// `text` with every lone `\r` (an old Mac line break, not followed by `\n`) turned into
/// `\n`: same length, same offsets, so line numbers count `\n`, `\r\n` and a lone `\r` as one
/// break each, as editors show them. Borrowed when there is no lone `\r` (nearly always).
pub fn normalize_breaks(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    // Found with `str::find` (a `memchr`), not a closure per byte: this runs on every indexed
    // file, up to three times, and a byte loop at opt-level "z" was a tenth of a cold index.
    let lone_from = |mut from: usize| {
        while let Some(k) = text[from..].find('\r') {
            let i = from + k;
            if bytes.get(i + 1) != Some(&b'\n') {
                return Some(i);
            }
            from = i + 1;
        }
        None
    };
    let Some(first) = lone_from(0) else {
        return Cow::Borrowed(text);
    };
    let mut out = bytes.to_vec();
    let mut at = Some(first);
    while let Some(i) = at {
        out[i] = b'\n';
        at = lone_from(i + 1);
    }
    // ASCII for ASCII: still UTF-8.
    Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| text.to_string()))
}

/// Lexes `text` with the rules of `syntax`. A lone `\r` is a line break like `\n` (see
/// [`normalize_breaks`]): comments and one-line strings end there and lines count it; `code`
/// keeps every break byte as it is in `text`.
pub fn lex(syntax: Syntax, text: &str) -> Lexed<'_> {
    let scan = normalize_breaks(text);
    let bytes = scan.as_bytes();
    let n = bytes.len();
    let mut lx = Lexer::new(syntax, text, bytes);
    let (special, prefix) = dispatch_tables(&syntax);
    let mut i = 0usize;
    let mut poll = cancel::Every::new();
    while i < n {
        // An extraction given up by the indexer stops here; the rest stays unmasked (the
        // result is dropped anyway).
        if poll.stop() {
            break;
        }
        let b = bytes[i];
        // Fast path: most bytes cannot start a comment or a string. Identifiers are skipped
        // whole, so a prefix letter inside a word never starts a string.
        if !special[b as usize] {
            if is_ident_byte(b) {
                if prefix[b as usize]
                    && let Some(s) = string_at(&syntax, bytes, i)
                {
                    i = lx.string(i, s);
                    continue;
                }
                i = ident_end(bytes, i);
            } else {
                // A run of plain bytes (indentation, spaces, punctuation) in one step: each
                // would only come back here, and a round of the loop per byte costs more.
                i += 1 + bytes[i + 1..]
                    .iter()
                    .position(|&c| special[c as usize] || is_ident_byte(c))
                    .unwrap_or(n - i - 1);
            }
            continue;
        }
        // Comments, heredocs, strings with prefixes and special forms, JS regular
        // expressions, in that order; each says where the scan resumes.
        let resume = lx
            .line_comment(i)
            .or_else(|| lx.block_comment(i))
            .or_else(|| lx.ruby_block_comment(i))
            .or_else(|| lx.heredoc(i))
            .or_else(|| string_at(&syntax, bytes, i).map(|s| lx.string(i, s)))
            .or_else(|| lx.js_regex(i));
        if let Some(next) = resume {
            i = next;
            continue;
        }
        // Identifiers are skipped whole, so a prefix letter inside a word never starts a string.
        if is_ident_byte(b) {
            i = ident_end(bytes, i);
            continue;
        }
        i += 1;
    }
    lx.finish()
}

/// The end of the identifier starting at `i` (whose first byte is an identifier byte).
#[inline]
fn ident_end(bytes: &[u8], i: usize) -> usize {
    // An iterator walk, not an indexed loop: no bounds check per byte at opt-level "z".
    let rest = &bytes[i + 1..];
    i + 1
        + rest
            .iter()
            .position(|&c| !is_ident_byte(c))
            .unwrap_or(rest.len())
}

/// The 1-based line of byte offset `off`, given each line's start offset.
#[inline]
fn line_at(line_starts: &[usize], off: usize) -> u32 {
    match line_starts.binary_search(&off) {
        Ok(i) => i as u32 + 1,
        Err(i) => i as u32,
    }
}

/// The state of one [`lex`] pass: the source, the masked copy being built, and the strings and
/// comments found so far. Each method for a construct returns the offset where the scan
/// resumes when the construct starts at the offset it is given, else `None`.
struct Lexer<'a, 'b> {
    syntax: Syntax,
    text: &'a str,
    /// The bytes scanned: `text` with lone `\r` as `\n`.
    bytes: &'b [u8],
    code: Vec<u8>,
    strings: Vec<StrLit<'a>>,
    comments: Vec<Comment>,
    line_starts: Vec<usize>,
}

impl<'a, 'b> Lexer<'a, 'b> {
    fn new(syntax: Syntax, text: &'a str, bytes: &'b [u8]) -> Self {
        let n = bytes.len();
        // From `text`, not `bytes`: masking never touches `\r` or `\n`, so the breaks of the
        // masked code are the text's own.
        let mut code = text.as_bytes().to_vec();
        // A UTF-8 byte-order mark is not code (many C# and PowerShell-edited files start with
        // one): masked, so `using` on line 1 is still a keyword.
        if code.starts_with(&[0xEF, 0xBB, 0xBF]) {
            code[..3].fill(b' ');
        }
        // Sized for ~24-byte lines, so most files never grow it (growing was a realloc per
        // doubling, for every file).
        let mut line_starts = Vec::with_capacity(n / 24 + 2);
        line_starts.push(0usize);
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'\n' {
                line_starts.push(i + 1);
            }
        }
        Lexer {
            syntax,
            text,
            bytes,
            code,
            strings: Vec::new(),
            comments: Vec::new(),
            line_starts,
        }
    }

    /// The result: strings in source order, the masked code as a string.
    fn finish(self) -> Lexed<'a> {
        let Lexer {
            text,
            code,
            mut strings,
            comments,
            line_starts,
            ..
        } = self;
        crate::order::sort_by_key(&mut strings, |s| s.start);
        let code = String::from_utf8(code)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        Lexed {
            text,
            code,
            strings,
            comments,
            line_starts,
        }
    }

    #[inline]
    fn line_of(&self, off: usize) -> u32 {
        line_at(&self.line_starts, off)
    }

    /// Masks `from..to` (keeps newlines).
    #[inline]
    fn mask(&mut self, from: usize, to: usize) {
        let n = self.bytes.len();
        for b in &mut self.code[from.min(n)..to.min(n)] {
            if *b != b'\n' && *b != b'\r' {
                *b = b' ';
            }
        }
    }

    /// True when only whitespace precedes `at` on its line.
    fn own_line(&self, at: usize) -> bool {
        let ls = self.line_starts[(self.line_of(at) - 1) as usize];
        self.bytes[ls..at].iter().all(|b| b.is_ascii_whitespace())
    }

    /// Records the string `string_at` found at `start` and masks its content.
    #[inline]
    fn string(&mut self, start: usize, found: (usize, usize, usize, bool)) -> usize {
        let (content_start, content_end, end, is_raw) = found;
        self.strings.push(StrLit {
            start,
            end,
            raw: &self.text[content_start..content_end.max(content_start)],
            line: self.line_of(start),
            is_raw,
        });
        self.mask(content_start, content_end);
        end
    }

    /// Records the comment `start..end` (its last line is that of `last`) and masks it.
    fn comment(&mut self, start: usize, end: usize, last: usize, own_line: bool) -> usize {
        self.comments.push(Comment {
            start,
            end,
            first_line: self.line_of(start),
            last_line: self.line_of(last),
            own_line,
        });
        self.mask(start, end);
        end
    }

    /// A line comment at `i`.
    fn line_comment(&mut self, i: usize) -> Option<usize> {
        let (syntax, bytes) = (self.syntax, self.bytes);
        let b = bytes[i];
        let lc = syntax.line_comments.iter().find(|lc| {
            lc.as_bytes().first() == Some(&b) && bytes[i..].starts_with(lc.as_bytes())
        })?;
        // PHP `#[` is an attribute, not a comment.
        let php_attr = *lc == "#" && syntax.heredocs && bytes.get(i + 1) == Some(&b'[');
        if php_attr {
            return None;
        }
        let end = memchr_nl(bytes, i);
        let own_line = self.own_line(i);
        Some(self.comment(i, end, i, own_line))
    }

    /// A block comment at `i` (nested when the language nests them); an unterminated one
    /// runs to the end of the file.
    fn block_comment(&mut self, i: usize) -> Option<usize> {
        let (syntax, bytes) = (self.syntax, self.bytes);
        let n = bytes.len();
        let (open, close) = syntax.block_comment?;
        if open.as_bytes().first() != Some(&bytes[i]) || !bytes[i..].starts_with(open.as_bytes()) {
            return None;
        }
        let mut depth = 1usize;
        let mut j = i + open.len();
        // The first byte is compared before the whole delimiter: this loop runs once per byte
        // of every block comment (licence headers, doc comments), and a `starts_with` each was
        // a `memcmp` call per byte.
        // (`open` is not empty: its first byte matched above.)
        let (open_first, close_first) = (bytes[i], close.as_bytes().first().copied());
        while j < n && depth > 0 {
            let b = bytes[j];
            if syntax.nested_comments && b == open_first && bytes[j..].starts_with(open.as_bytes())
            {
                depth += 1;
                j += open.len();
            } else if close_first.is_none_or(|c| c == b) && bytes[j..].starts_with(close.as_bytes())
            {
                depth -= 1;
                j += close.len();
            } else {
                j += 1;
            }
        }
        let end = j.min(n);
        let own_line = self.own_line(i);
        Some(self.comment(i, end, end.saturating_sub(1).max(i), own_line))
    }

    /// Ruby `=begin` … `=end` at line starts.
    fn ruby_block_comment(&mut self, i: usize) -> Option<usize> {
        let (syntax, bytes) = (self.syntax, self.bytes);
        let n = bytes.len();
        let at_line_start = i == 0 || bytes[i - 1] == b'\n';
        if !(syntax.heredocs
            && bytes[i] == b'='
            && at_line_start
            && bytes[i..].starts_with(b"=begin")
            && syntax.line_comments == ["#"])
        {
            return None;
        }
        let mut j = i;
        let end = loop {
            let nl = memchr_nl(bytes, j);
            if nl >= n {
                break n;
            }
            j = nl + 1;
            if bytes[j..].starts_with(b"=end") {
                break memchr_nl(bytes, j);
            }
        };
        Some(self.comment(i, end, end.saturating_sub(1).max(i), true))
    }

    /// Heredocs: Ruby `<<~ID`, `<<-ID`, `<<ID` (uppercase id) and PHP `<<<ID`. The rest of
    /// the opener's line is code, scanned for strings; the scan resumes past the body.
    fn heredoc(&mut self, i: usize) -> Option<usize> {
        let bytes = self.bytes;
        if !(self.syntax.heredocs && bytes[i] == b'<') {
            return None;
        }
        let (body_start, body_end, after) = heredoc(bytes, i)?;
        self.strings.push(StrLit {
            start: i,
            end: after,
            raw: &self.text[body_start..body_end],
            line: self.line_of(i),
            is_raw: true,
        });
        self.mask(body_start, body_end);
        // Continue scanning right after the opener (the rest of its line is code).
        let i = heredoc_opener_end(bytes, i);
        // Skip the body when we reach it: mark it so the loop jumps over.
        let resume = body_end;
        // Scan the remainder of the opener line normally, then jump past the body.
        let line_end = memchr_nl(bytes, i);
        let sub = lex_span(
            &self.syntax,
            self.text,
            bytes,
            i,
            line_end,
            &mut self.code,
            &mut self.strings,
            &self.line_starts,
        );
        let _ = sub;
        Some(after.max(resume))
    }

    /// JS regular expressions: masked, not recorded as strings.
    fn js_regex(&mut self, i: usize) -> Option<usize> {
        if !(self.syntax.js_regex && self.bytes[i] == b'/' && regex_allowed(&self.code, i)) {
            return None;
        }
        let (close, end) = regex_end(self.bytes, i)?;
        self.mask(i + 1, close);
        Some(end)
    }
}

/// The bytes that may start a comment, a string or a regex in `syntax` (`special`), and the
/// identifier letters that may prefix a string (`prefix`: `r"…"`, `b'…'`, `R"(…)"`, `f"…"`).
fn dispatch_tables(syntax: &Syntax) -> ([bool; 256], [bool; 256]) {
    let mut special = [false; 256];
    for lc in syntax.line_comments {
        if let Some(&b) = lc.as_bytes().first() {
            special[b as usize] = true;
        }
    }
    if let Some((open, _)) = syntax.block_comment
        && let Some(&b) = open.as_bytes().first()
    {
        special[b as usize] = true;
    }
    special[b'"' as usize] = syntax.double_quote;
    special[b'\'' as usize] = syntax.single_quote != SingleQuote::Plain;
    special[b'`' as usize] = syntax.backtick != Backtick::Plain;
    if syntax.swift_raw {
        special[b'#' as usize] = true;
    }
    if syntax.csharp_verbatim {
        special[b'@' as usize] = true;
        special[b'$' as usize] = true;
    }
    if syntax.heredocs {
        special[b'<' as usize] = true;
        special[b'=' as usize] = true;
    }
    if syntax.js_regex {
        special[b'/' as usize] = true;
    }
    let mut prefix = [false; 256];
    let letters: &[u8] = if syntax.python_prefixes {
        b"rRbBfFuU"
    } else if syntax.rust_raw {
        b"rb"
    } else if syntax.cpp_raw {
        b"RuUL"
    } else {
        b""
    };
    for &l in letters {
        prefix[l as usize] = true;
    }
    (special, prefix)
}

/// Lexes strings (only) on the rest of a heredoc opener line.
#[allow(clippy::too_many_arguments)]
fn lex_span<'a>(
    syntax: &Syntax,
    text: &'a str,
    bytes: &[u8],
    mut i: usize,
    end: usize,
    code: &mut [u8],
    strings: &mut Vec<StrLit<'a>>,
    line_starts: &[usize],
) -> usize {
    while i < end {
        if let Some((cs, ce, e, raw)) = string_at(syntax, bytes, i) {
            strings.push(StrLit {
                start: i,
                end: e,
                raw: &text[cs..ce.max(cs)],
                line: line_at(line_starts, i),
                is_raw: raw,
            });
            let stop = ce.min(code.len());
            for b in &mut code[cs..stop] {
                if *b != b'\n' {
                    *b = b' ';
                }
            }
            i = e;
        } else if syntax
            .line_comments
            .iter()
            .any(|lc| bytes[i..].starts_with(lc.as_bytes()))
        {
            for b in &mut code[i..end] {
                *b = b' ';
            }
            return end;
        } else {
            i += 1;
        }
    }
    i
}

/// True when a `/` at `i` can start a regex literal, by [`regex_may_follow`].
fn regex_allowed(code: &[u8], i: usize) -> bool {
    let mut k = i;
    while k > 0 && code[k - 1].is_ascii_whitespace() {
        k -= 1;
    }
    if k == 0 {
        return regex_may_follow(None, None);
    }
    let p = code[k - 1];
    let word = is_ident_byte(p).then(|| {
        let mut s = k - 1;
        while s > 0 && is_ident_byte(code[s - 1]) {
            s -= 1;
        }
        &code[s..k]
    });
    regex_may_follow(Some(p), word)
}

/// True when a `/` can start a regex literal after the byte `prev` (none: the start of the
/// file), which ends the word `word` when it is part of one: after an operator, an opening
/// bracket, a separator, or a keyword such as `return`. The JSX scanner asks it too.
pub(crate) fn regex_may_follow(prev: Option<u8>, word: Option<&[u8]>) -> bool {
    let Some(prev) = prev else {
        return true;
    };
    if let Some(w) = word {
        return matches!(
            w,
            b"return"
                | b"typeof"
                | b"case"
                | b"in"
                | b"of"
                | b"void"
                | b"yield"
                | b"await"
                | b"delete"
        );
    }
    b"(,=:[!&|?{};+-*%<>~^".contains(&prev)
}

/// The closing `/` of a regex literal at `i` (on one line), and its end past the flags; the
/// JSX scanner skips regexes by it too.
pub(crate) fn regex_end(bytes: &[u8], i: usize) -> Option<(usize, usize)> {
    let next = *bytes.get(i + 1)?;
    if next == b'/' || next == b'*' || next == b'\n' {
        return None;
    }
    let mut k = i + 1;
    let mut in_class = false;
    while k < bytes.len() {
        match bytes[k] {
            b'\\' => k += 2,
            b'\n' => return None,
            b'[' => {
                in_class = true;
                k += 1;
            }
            b']' => {
                in_class = false;
                k += 1;
            }
            b'/' if !in_class => {
                let close = k;
                k += 1;
                while k < bytes.len() && bytes[k].is_ascii_alphabetic() {
                    k += 1;
                }
                return Some((close, k));
            }
            _ => k += 1,
        }
    }
    None
}

fn memchr_nl(bytes: &[u8], from: usize) -> usize {
    bytes[from.min(bytes.len())..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |p| from + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(l: &Lexed) -> Vec<String> {
        l.strings.iter().map(|s| s.value().into_owned()).collect()
    }

    #[test]
    fn comments_and_strings_are_masked_with_offsets_kept() {
        let src = "a = \"x // y\"; // c \"q\"\n/* b\n c */ d";
        let l = lex(Syntax::JAVA, src);
        assert_eq!(l.code.len(), src.len());
        assert!(!l.code.contains("//"));
        assert!(!l.code.contains('c'));
        assert!(l.code.ends_with(" d"));
        assert_eq!(strs(&l), vec!["x // y"]);
        assert_eq!(l.comments.len(), 2);
        assert_eq!(l.comments[1].first_line, 2);
        assert_eq!(l.comments[1].last_line, 3);
    }

    #[test]
    fn rust_raw_strings_lifetimes_chars_and_nested_comments() {
        let src = "fn f<'a>(x: &'a str) { let s = r#\"a \"quoted\" b\"#; let c = '\"'; let d = b'x'; /* outer /* inner */ still */ g() }";
        let l = lex(Syntax::RUST, src);
        assert_eq!(strs(&l), vec!["a \"quoted\" b", "\"", "x"]);
        assert!(l.code.contains("g()"));
        assert!(!l.code.contains("still"));
        assert!(l.code.contains("<'a>"));
    }

    #[test]
    fn go_raw_strings_and_runes() {
        let l = lex(Syntax::GO, "s := `a\n\"b`; r := '\\''; t := \"c\"");
        assert_eq!(strs(&l), vec!["a\n\"b", "'", "c"]);
        assert_eq!(l.strings[2].line, 2);
    }

    #[test]
    fn python_prefixes_triples_and_hash_comments() {
        let src = "x = f'{a}' # note\ny = r\"\\d+\"\n'''doc\nstring'''\nname = b'z'\n";
        let l = lex(Syntax::PYTHON, src);
        assert_eq!(strs(&l), vec!["{a}", "\\d+", "doc\nstring", "z"]);
        assert_eq!(l.comments.len(), 1);
        assert!(l.code.contains("name"));
    }

    #[test]
    fn python_prefixed_triple_quotes_span_lines() {
        let src = "q = f\"\"\"\nclass Nope {x}\n\"\"\"\nr = rb\'\'\'a\nb\'\'\'\nclass Yes: pass\n";
        let l = lex(Syntax::PYTHON, src);
        assert!(!l.code.contains("Nope"), "{}", l.code);
        assert!(l.code.contains("class Yes"));
        assert_eq!(strs(&l), vec!["\nclass Nope {x}\n", "a\nb"]);
    }

    #[test]
    fn js_templates_with_nested_substitutions() {
        let src = "fetch(`/orders/${id + `x${y}`}/items`); const q = 'it''s'; // end";
        let l = lex(Syntax::JS, src);
        assert_eq!(l.strings[0].raw, "/orders/${id + `x${y}`}/items");
        assert!(l.code.starts_with("fetch(`"));
        assert!(l.code.contains("); const q"));
    }

    #[test]
    fn js_regex_literals_and_single_line_strings() {
        let l = lex(
            Syntax::JS,
            "s.replace(/'/g, \"x\"); const d = a / b / c;\nlet t = 'ok';",
        );
        assert_eq!(strs(&l), vec!["x", "ok"]);
        let l = lex(Syntax::JAVA, "a = \"open\nclass B {}");
        assert!(l.code.contains("class B"));
    }

    #[test]
    fn csharp_verbatim_and_interpolated() {
        let l = lex(
            Syntax::CSHARP,
            "var p = @\"C:\\x\"\"y\"; var s = $\"orders.{id}\"; var r = \"\"\"raw \"q\" \"\"\";",
        );
        assert_eq!(strs(&l), vec!["C:\\x\"\"y", "orders.{id}", "raw \"q\" "]);
    }

    #[test]
    fn csharp_interpolation_holes_hold_strings() {
        let l = lex(
            Syntax::CSHARP,
            "var u = $\"{b}items/by?ids={string.Join(\"&ids=\", ids)}\"; var v = $\"{{x}}\"; class C {}",
        );
        assert_eq!(
            strs(&l),
            vec!["{b}items/by?ids={string.Join(\"&ids=\", ids)}", "{{x}}"]
        );
        assert!(l.code.contains("class C"));
        let l = lex(Syntax::CSHARP, "var u = $@\"{f(\"a\")}\\x\"; class D {}");
        assert_eq!(strs(&l), vec!["{f(\"a\")}\\x"]);
        assert!(l.code.contains("class D"));
    }

    #[test]
    fn cpp_raw_strings() {
        let l = lex(Syntax::C, "auto s = R\"xy(a)\" b)xy\"; int c = 'q';");
        assert_eq!(strs(&l), vec!["a)\" b", "q"]);
    }

    #[test]
    fn ruby_heredocs_and_begin_end() {
        let src = "x = <<~SQL\n  select 1 -- \"no\"\nSQL\n=begin\nclass Nope\n=end\nclass Yes\n";
        let l = lex(Syntax::RUBY, src);
        assert!(l.code.contains("class Yes"));
        assert!(!l.code.contains("Nope"));
        assert!(!l.code.contains("select"));
        assert_eq!(l.strings.len(), 1);
    }

    #[test]
    fn unterminated_forms_run_to_the_end_without_panicking() {
        for (syn, src) in [
            (Syntax::JAVA, "a /* never closed"),
            (Syntax::JAVA, "a \"never closed"),
            (Syntax::RUST, "r##\"open"),
            (Syntax::PYTHON, "'''open"),
            (Syntax::JS, "`${ `${"),
            (Syntax::C, "R\"d(open"),
            (Syntax::CSHARP, "@\"open"),
            (Syntax::RUBY, "<<~EOS\nbody"),
            (Syntax::GO, "`"),
            (Syntax::RUST, "'"),
            (Syntax::JAVA, "'"),
        ] {
            let l = lex(syn, src);
            assert_eq!(l.code.len(), src.len(), "{src}");
        }
    }

    #[test]
    fn a_lone_cr_is_a_line_break() {
        // Old-Mac line ends: the comment ends at its `\r`, lines count as in the LF file, and
        // the text and the masked code keep their break bytes.
        let src = "a // one\rb \"s\"\r\nc /* x */\rd";
        let l = lex(Syntax::GO, src);
        assert_eq!(l.line_count(), 4);
        assert_eq!(l.comments.len(), 2);
        assert_eq!(l.comments[0].first_line, 1);
        assert_eq!(l.comments[1].first_line, 3);
        assert_eq!(l.strings[0].line, 2);
        assert_eq!(l.source_line(2), "b \"s\"");
        assert_eq!(l.source_line(4), "d");
        assert_eq!(l.code_line(1).trim_end(), "a");
        assert_eq!(l.text, src);
        assert_eq!(l.code.len(), src.len());
        assert_eq!(l.code.as_bytes()[8], b'\r');
        assert_eq!(normalize_breaks("a\r\nb\rc\n"), "a\r\nb\nc\n");
        assert!(matches!(normalize_breaks("a\r\nb\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn doc_comments_above_and_blocks() {
        let src = "// one\n// two\nfn a() {\n  {\n  }\n}\n\n// detached\n\nfn b() {}\n";
        let l = lex(Syntax::RUST, src);
        assert_eq!(l.doc_comment_above(3), Some(1));
        assert_eq!(l.doc_comment_above(10), None);
        let open = l.code.find('{').unwrap();
        assert_eq!(l.block_end_line(open), 6);
    }

    #[test]
    fn python_indent_blocks() {
        let src =
            "class A(\n    B):\n    def f(self):\n        pass\n\n    # c\n    x = 1\ny = 2\n";
        let l = lex(Syntax::PYTHON, src);
        assert_eq!(l.indent_block_end(1), 7);
        assert_eq!(l.indent_block_end(3), 4);
    }

    #[test]
    fn find_word_matches_the_match_indices_definition() {
        let reference = |code: &str, word: &str| -> Vec<usize> {
            let bytes = code.as_bytes();
            code.match_indices(word)
                .map(|(i, _)| i)
                .filter(|&i| {
                    let after = i + word.len();
                    (i == 0 || !is_ident_byte(bytes[i - 1]))
                        && (after >= bytes.len() || !is_ident_byte(bytes[after]))
                })
                .collect()
        };
        let codes = [
            "",
            "a",
            "aa aaa a aa",
            "class Foo extends Bar { classy } (class)",
            "é class éclass class_ classé",
            "x.import import;import",
            "ééé é é",
        ];
        let words = ["", "a", "aa", "class", "import", "é", "éé", "x"];
        for code in codes {
            for word in words {
                assert_eq!(
                    find_word(code, word).collect::<Vec<_>>(),
                    reference(code, word),
                    "{code:?} {word:?}"
                );
            }
        }
    }

    #[test]
    fn word_and_ident_helpers() {
        let code = "class Foo extends Bar { classy }";
        assert_eq!(find_word(code, "class").collect::<Vec<_>>(), vec![0]);
        assert_eq!(ident_after(code, 5), Some((6, "Foo")));
        assert_eq!(ident_before(code, 21), Some((18, "Bar")));
        let l = lex(Syntax::JAVA, "a(\"x\", \"y\")");
        assert_eq!(l.string_at(0).unwrap().raw, "x");
        assert_eq!(l.strings_in(0, 11).len(), 2);
        assert_eq!(l.string_covering(3).unwrap().raw, "x");
        assert_eq!(l.line_of(0), 1);
    }

    #[test]
    fn deep_nesting_and_long_input_are_linear() {
        let src = "{".repeat(10_000) + &"}".repeat(10_000);
        let l = lex(Syntax::JAVA, &src);
        assert_eq!(l.matching_close(0), Some(src.len() - 1));
        let junk: String = (0..100_000u32)
            .map(|i| char::from(b"\"'`/*#\\{}\n ab"[(i * 7 % 13) as usize]))
            .collect();
        for syn in [Syntax::JS, Syntax::RUST, Syntax::PYTHON, Syntax::RUBY] {
            let l = lex(syn, &junk);
            assert_eq!(l.code.len(), junk.len());
        }
    }

    /// The example in the documentation above (private items have no doctests).
    #[test]
    fn documented_example_1() {
        use crate::index::lex::{Syntax, lex};
        let l = lex(Syntax::GO, "x := \"// not a comment\" // a comment\n");
        assert_eq!(l.code.trim_end(), "x := \"                \"");
        assert_eq!(l.strings[0].value(), "// not a comment");
    }
}
