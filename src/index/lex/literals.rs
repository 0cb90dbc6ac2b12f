//! The string literal forms of [`super::lex`]: for each language family, where a string (or
//! a heredoc) starting at an offset ends, and where its content lies. Each recogniser returns
//! (content start, content end, end past the closing delimiter[, raw]) and runs to the end of
//! the file when the literal is unterminated.

use super::{Backtick, SingleQuote, Syntax, is_ident_byte, memchr_nl, utf8_len};

/// Where the heredoc opener at `i` ends (just past its identifier/quotes).
pub(super) fn heredoc_opener_end(bytes: &[u8], i: usize) -> usize {
    let mut j = i;
    while j < bytes.len() && bytes[j] == b'<' {
        j += 1;
    }
    while j < bytes.len() && matches!(bytes[j], b'~' | b'-' | b'\'' | b'"') {
        j += 1;
    }
    while j < bytes.len() && (is_ident_byte(bytes[j]) || matches!(bytes[j], b'\'' | b'"')) {
        j += 1;
    }
    j
}

/// A heredoc at `i`: (body start, body end, offset past the terminator line).
pub(super) fn heredoc(bytes: &[u8], i: usize) -> Option<(usize, usize, usize)> {
    let php = bytes[i..].starts_with(b"<<<");
    if !php && !bytes[i..].starts_with(b"<<") {
        return None;
    }
    let mut j = i + if php { 3 } else { 2 };
    if !php && j < bytes.len() && matches!(bytes[j], b'~' | b'-') {
        j += 1;
    }
    if php {
        while j < bytes.len() && bytes[j] == b' ' {
            j += 1;
        }
    }
    let quoted = j < bytes.len() && matches!(bytes[j], b'\'' | b'"');
    if quoted {
        j += 1;
    }
    let id_start = j;
    while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
        j += 1;
    }
    let id = &bytes[id_start..j];
    // Ruby heredoc ids are conventionally upper case; this keeps `a << b` and `1 <<2` out.
    if id.is_empty()
        || !id[0].is_ascii_alphabetic()
        || (!php && !id.iter().all(|b| b.is_ascii_uppercase() || *b == b'_'))
    {
        return None;
    }
    let body_start = memchr_nl(bytes, j) + 1;
    if body_start > bytes.len() {
        return None;
    }
    let mut k = body_start;
    while k < bytes.len() {
        let nl = memchr_nl(bytes, k);
        let line = &bytes[k..nl];
        let trimmed = trim_ascii_start(line);
        if trimmed.starts_with(id) && trimmed[id.len()..].iter().all(|b| !is_ident_byte(*b)) {
            return Some((body_start, k, nl.min(bytes.len())));
        }
        k = nl + 1;
    }
    Some((body_start, bytes.len(), bytes.len()))
}

fn trim_ascii_start(s: &[u8]) -> &[u8] {
    let k = s
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(s.len());
    &s[k..]
}

/// A string starting at `i`: (content start, content end, end past the closing delimiter, raw).
pub(super) fn string_at(
    syntax: &Syntax,
    bytes: &[u8],
    i: usize,
) -> Option<(usize, usize, usize, bool)> {
    let b = bytes[i];
    // Prefixes must not continue an identifier (`bar"` is not a prefix).
    let prev_ident = i > 0 && is_ident_byte(bytes[i - 1]);
    if syntax.python_prefixes && !prev_ident && b.is_ascii_alphabetic() {
        return python_prefixed(bytes, i);
    }
    if syntax.rust_raw && !prev_ident && (b == b'r' || b == b'b') {
        return rust_prefixed(bytes, i);
    }
    if syntax.cpp_raw && !prev_ident && matches!(b, b'R' | b'u' | b'U' | b'L') {
        return cpp_prefixed(bytes, i);
    }
    if syntax.csharp_verbatim && (b == b'@' || b == b'$') {
        return csharp_prefixed(bytes, i);
    }
    if syntax.swift_raw && b == b'#' {
        let mut j = i;
        while j < bytes.len() && bytes[j] == b'#' {
            j += 1;
        }
        if j < bytes.len() && bytes[j] == b'"' {
            return Some(hashed_raw(bytes, j + 1, j - i));
        }
        return None;
    }
    match b {
        b'"' if syntax.double_quote => {
            if syntax.triple_quotes && bytes[i..].starts_with(b"\"\"\"") {
                return triple(bytes, i, b'"').map(|(cs, ce, e)| (cs, ce, e, false));
            }
            quoted(bytes, i, b'"', !syntax.multiline_strings, true)
                .map(|(cs, ce, e)| (cs, ce, e, false))
        }
        b'\'' => single_quoted(syntax, bytes, i),
        b'`' => backticked(syntax, bytes, i),
        _ => None,
    }
}

/// A raw string whose content starts at `cs` and which closes with a quote and `hashes`
/// hashes (Rust `r#"…"#`, Swift `#"…"#`); unterminated, it runs to the end of the file.
fn hashed_raw(bytes: &[u8], cs: usize, hashes: usize) -> (usize, usize, usize, bool) {
    let n = bytes.len();
    let mut k = cs;
    while k < n {
        if bytes[k] == b'"'
            && bytes[k + 1..].len() >= hashes
            && bytes[k + 1..k + 1 + hashes].iter().all(|&h| h == b'#')
        {
            return (cs, k, k + 1 + hashes, true);
        }
        k += 1;
    }
    (cs, n, n, true)
}

/// Python's prefixed strings at `i`: `r'…'`, `b"…"`, `f"""…"""` (up to three of `rbfu`).
fn python_prefixed(bytes: &[u8], i: usize) -> Option<(usize, usize, usize, bool)> {
    let n = bytes.len();
    let mut j = i;
    let mut raw = false;
    while j < n && j - i < 3 && matches!(bytes[j] | 0x20, b'r' | b'b' | b'f' | b'u') {
        raw |= bytes[j] | 0x20 == b'r';
        j += 1;
    }
    if j > i && j < n && (bytes[j] == b'"' || bytes[j] == b'\'') {
        // `f"""…"""`, `r'''…'''`: a prefixed triple-quoted string spans lines.
        let q = bytes[j];
        if bytes.get(j + 1) == Some(&q) && bytes.get(j + 2) == Some(&q) {
            return triple(bytes, j, q).map(|(cs, ce, e)| (cs, ce, e, raw));
        }
        return quoted(bytes, j, bytes[j], true, !raw).map(|(cs, ce, e)| (cs, ce, e, raw));
    }
    None
}

/// Rust's prefixed strings at `i`: `r"…"`, `r#"…"#`, `br"…"`, `b"…"`, `b'…'`.
fn rust_prefixed(bytes: &[u8], i: usize) -> Option<(usize, usize, usize, bool)> {
    let n = bytes.len();
    let b = bytes[i];
    let mut j = i;
    if bytes[j] == b'b' {
        j += 1;
    }
    if j < n && bytes[j] == b'r' {
        j += 1;
        let hashes_start = j;
        while j < n && bytes[j] == b'#' {
            j += 1;
        }
        if j < n && bytes[j] == b'"' {
            return Some(hashed_raw(bytes, j + 1, j - hashes_start));
        }
        return None;
    }
    if b == b'b' && j < n && bytes[j] == b'"' {
        return quoted(bytes, j, b'"', false, true).map(|(cs, ce, e)| (cs, ce, e, false));
    }
    if b == b'b' && j < n && bytes[j] == b'\'' {
        return quoted(bytes, j, b'\'', false, true).map(|(cs, ce, e)| (cs, ce, e, false));
    }
    None
}

/// C++'s prefixed strings at `i`: raw `R"delim(…)delim"` (with an encoding prefix or not)
/// and `u8"…"`, `L"…"`.
fn cpp_prefixed(bytes: &[u8], i: usize) -> Option<(usize, usize, usize, bool)> {
    let n = bytes.len();
    let mut j = i;
    while j < n && j - i < 3 && matches!(bytes[j], b'u' | b'U' | b'L' | b'8') {
        j += 1;
    }
    if j + 1 < n && bytes[j] == b'R' && bytes[j + 1] == b'"' {
        let ds = j + 2;
        let mut k = ds;
        while k < n && k - ds <= 16 && bytes[k] != b'(' {
            k += 1;
        }
        if k < n && bytes[k] == b'(' {
            let delim = &bytes[ds..k];
            let cs = k + 1;
            let mut m = cs;
            while m < n {
                if bytes[m] == b')'
                    && bytes[m + 1..].starts_with(delim)
                    && bytes.get(m + 1 + delim.len()) == Some(&b'"')
                {
                    return Some((cs, m, m + 2 + delim.len(), true));
                }
                m += 1;
            }
            return Some((cs, n, n, true));
        }
    }
    if j > i && j < n && bytes[j] == b'"' {
        return quoted(bytes, j, b'"', false, true).map(|(cs, ce, e)| (cs, ce, e, false));
    }
    None
}

/// C#'s prefixed strings at `i`: verbatim `@"…"` (doubled quotes), interpolated `$"…{x}…"`,
/// both (`$@"…"`), and raw `"""…"""` after a prefix.
fn csharp_prefixed(bytes: &[u8], i: usize) -> Option<(usize, usize, usize, bool)> {
    let n = bytes.len();
    let mut j = i;
    let mut verbatim = false;
    while j < n && j - i < 4 && matches!(bytes[j], b'@' | b'$') {
        verbatim |= bytes[j] == b'@';
        j += 1;
    }
    if !(j < n && bytes[j] == b'"' && j > i) {
        return None;
    }
    if bytes[j..].starts_with(b"\"\"\"") {
        return triple(bytes, j, b'"').map(|(cs, ce, e)| (cs, ce, e, true));
    }
    let interpolated = bytes[i..j].contains(&b'$');
    if verbatim {
        let cs = j + 1;
        let mut k = cs;
        while k < n {
            if interpolated && bytes[k] == b'{' {
                k = interpolation_hole_end(bytes, k);
                continue;
            }
            if bytes[k] == b'"' {
                if bytes.get(k + 1) == Some(&b'"') {
                    k += 2;
                    continue;
                }
                return Some((cs, k, k + 1, true));
            }
            k += 1;
        }
        return Some((cs, n, n, true));
    }
    let cs = j + 1;
    let mut k = cs;
    while k < n {
        match bytes[k] {
            b'\\' => k += 2,
            b'{' => k = interpolation_hole_end(bytes, k),
            b'"' => return Some((cs, k, k + 1, false)),
            _ => k += 1,
        }
    }
    Some((cs, n, n, false))
}

/// What a `'` at `i` starts under the language's [`SingleQuote`] rule: a string, a character,
/// nothing (a Rust lifetime or label; Swift's `'` is no quote).
fn single_quoted(syntax: &Syntax, bytes: &[u8], i: usize) -> Option<(usize, usize, usize, bool)> {
    let n = bytes.len();
    match syntax.single_quote {
        SingleQuote::String => {
            if syntax.python_prefixes && bytes[i..].starts_with(b"'''") {
                return triple(bytes, i, b'\'').map(|(cs, ce, e)| (cs, ce, e, false));
            }
            quoted(bytes, i, b'\'', !syntax.multiline_strings, true)
                .map(|(cs, ce, e)| (cs, ce, e, false))
        }
        SingleQuote::Char => char_literal(bytes, i),
        SingleQuote::CharOrLifetime => {
            // `'x'` or `'\…'` is a char; `'a` (lifetime, label) is not.
            if bytes.get(i + 1) == Some(&b'\\') {
                return char_literal(bytes, i);
            }
            let ch_len = bytes.get(i + 1).map_or(1, |&c| utf8_len(c)).min(n - i - 1);
            if ch_len > 0 && bytes.get(i + 1 + ch_len) == Some(&b'\'') {
                return Some((i + 1, i + 1 + ch_len, i + 2 + ch_len, false));
            }
            None
        }
        SingleQuote::Plain => None,
    }
}

/// What a backtick at `i` starts under the language's [`Backtick`] rule: a raw string (Go), a
/// quoted identifier (one line), a template literal (JS), or nothing.
fn backticked(syntax: &Syntax, bytes: &[u8], i: usize) -> Option<(usize, usize, usize, bool)> {
    let n = bytes.len();
    match syntax.backtick {
        Backtick::Plain => None,
        Backtick::Raw | Backtick::QuotedIdent => {
            let cs = i + 1;
            let mut k = cs;
            while k < n && bytes[k] != b'`' {
                if syntax.backtick == Backtick::QuotedIdent && bytes[k] == b'\n' {
                    return None;
                }
                k += 1;
            }
            Some((cs, k.min(n), (k + 1).min(n), true))
        }
        Backtick::Template => template(bytes, i).map(|(cs, ce, e)| (cs, ce, e, false)),
    }
}

/// A character literal at `i` (`'a'`, `'\n'`, `'\u{1F600}'`); a stray quote is code.
fn char_literal(bytes: &[u8], i: usize) -> Option<(usize, usize, usize, bool)> {
    let n = bytes.len();
    let cs = i + 1;
    let mut k = cs;
    while k < n && k - cs <= 12 {
        match bytes[k] {
            b'\\' => k += 2,
            b'\'' => return Some((cs, k, k + 1, false)),
            b'\n' => return None,
            _ => k += 1,
        }
    }
    None
}

/// A one-line (or escaped-newline) quoted string; unterminated strings end at the line end when
/// `single_line`, else at the end of the file.
fn quoted(
    bytes: &[u8],
    i: usize,
    q: u8,
    single_line: bool,
    escapes: bool,
) -> Option<(usize, usize, usize)> {
    let n = bytes.len();
    let cs = i + 1;
    let mut k = cs;
    while k < n {
        match bytes[k] {
            b'\\' if escapes => k += 2,
            c if c == q => return Some((cs, k, k + 1)),
            b'\n' if single_line => return Some((cs, k, k)),
            _ => k += 1,
        }
    }
    Some((cs, n, n))
}

/// Where the C# interpolation hole opening at `open` (`{`) ends: past its matching `}`, with
/// string and character literals inside it skipped (`$"{string.Join(",", ids)}"` is one
/// string); `{{` is an escaped brace, not a hole. An unclosed hole ends at the line's end.
fn interpolation_hole_end(bytes: &[u8], open: usize) -> usize {
    let n = bytes.len();
    if bytes.get(open + 1) == Some(&b'{') {
        return open + 2;
    }
    let mut depth = 0usize;
    let mut k = open;
    while k < n {
        match bytes[k] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return k + 1;
                }
            }
            q @ (b'"' | b'\'') => {
                let (_, _, end) = quoted(bytes, k, q, true, true).unwrap_or((k, k, k + 1));
                k = end.max(k + 1);
                continue;
            }
            b'\n' => return k,
            _ => {}
        }
        k += 1;
    }
    n
}

/// A triple-quoted string at `i`.
fn triple(bytes: &[u8], i: usize, q: u8) -> Option<(usize, usize, usize)> {
    let n = bytes.len();
    let cs = i + 3;
    let mut k = cs;
    while k + 2 < n + 2 && k < n {
        if bytes[k] == b'\\' {
            k += 2;
            continue;
        }
        if bytes[k] == q && bytes.get(k + 1) == Some(&q) && bytes.get(k + 2) == Some(&q) {
            // Swallow extra quotes that belong to the content (`""""x""""`).
            let mut end = k + 3;
            while end < n && bytes[end] == q {
                end += 1;
            }
            return Some((cs, end - 3, end));
        }
        k += 1;
    }
    Some((cs.min(n), n, n))
}

/// A JS template literal at `i`, including `${…}` substitutions (with nested strings and
/// templates) as part of the one literal.
fn template(bytes: &[u8], i: usize) -> Option<(usize, usize, usize)> {
    let n = bytes.len();
    let cs = i + 1;
    // Stack of contexts: true = inside template text, false = inside `${ }` code (with depth).
    let mut stack: Vec<(bool, usize)> = vec![(true, 0)];
    let mut k = cs;
    while k < n {
        let b = bytes[k];
        let Some(&mut (in_text, ref mut depth)) = stack.last_mut() else {
            break;
        };
        if in_text {
            match b {
                b'\\' => k += 2,
                b'`' => {
                    stack.pop();
                    if stack.is_empty() {
                        return Some((cs, k, k + 1));
                    }
                    k += 1;
                }
                b'$' if bytes.get(k + 1) == Some(&b'{') => {
                    stack.push((false, 1));
                    k += 2;
                }
                _ => k += 1,
            }
        } else {
            match b {
                b'{' => {
                    *depth += 1;
                    k += 1;
                }
                b'}' => {
                    *depth -= 1;
                    if *depth == 0 {
                        stack.pop();
                    }
                    k += 1;
                }
                b'`' => {
                    if stack.len() > 64 {
                        return Some((cs, n, n));
                    }
                    stack.push((true, 0));
                    k += 1;
                }
                b'"' | b'\'' => {
                    k = quoted(bytes, k, b, true, true).map_or(n, |(_, _, e)| e);
                }
                _ => k += 1,
            }
        }
    }
    Some((cs, n, n))
}
