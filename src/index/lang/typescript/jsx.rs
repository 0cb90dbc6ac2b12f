//! JSX text blanking: before lexing, a `.tsx`/`.jsx`/`.js` file's JSX text and the `/` of its
//! closing tags become spaces (offsets kept), so an apostrophe or a slash in markup never opens a
//! string or a regex for the lexer.

use crate::index::lex::is_ident_byte;

/// The source with JSX text and the `/` of closing tags blanked (newlines kept, offsets
/// unchanged), or `None` when the file holds no JSX or the JSX could not be followed to its
/// end (then the file is lexed as is).
///
/// A `<` starts an element only where an expression can start (after `(`, `=`, `:`, `?`, `,`,
/// `[`, `{`, `;`, `!`, `&&`, `||`, `=>`, `return` …) and before a name or `>`; in `.tsx`,
/// `<T,>` and `<T extends X>` stay generics. Elements, attribute expressions and template
/// literals nest on an explicit stack.
pub(super) fn blank_jsx_text(src: &str, tsx: bool) -> Option<String> {
    #[derive(Clone, Copy, PartialEq)]
    enum Ctx {
        Code(u32),
        Template,
        Tag { closing: bool },
        Children,
    }
    const MAX_DEPTH: usize = 512;
    // Every JSX element closes with `</` or `/>`: without either there is nothing to do.
    if !src.contains("</") && !src.contains("/>") {
        return None;
    }
    let b = src.as_bytes();
    let n = b.len();
    let mut stack = vec![Ctx::Code(0)];
    let mut blanks: Vec<(usize, usize)> = Vec::new();
    let blank = |blanks: &mut Vec<(usize, usize)>, from: usize, to: usize| match blanks.last_mut() {
        Some(last) if last.1 == from => last.1 = to,
        _ => blanks.push((from, to)),
    };
    // The last significant byte of code and, when it ends a word, the word's start.
    let mut prev: u8 = 0;
    let mut prev_at = 0usize;
    let mut word_start = usize::MAX;
    let mut found = false;
    let mut i = 0usize;
    while i < n {
        let &top = stack.last()?;
        if stack.len() > MAX_DEPTH {
            return None;
        }
        let c = b[i];
        match top {
            Ctx::Code(depth) => {
                if c.is_ascii_whitespace() {
                    i += 1;
                    continue;
                }
                if c == b'/' && b.get(i + 1) == Some(&b'/') {
                    i = b[i..].iter().position(|&x| x == b'\n').map_or(n, |p| i + p);
                    continue;
                }
                if c == b'/' && b.get(i + 1) == Some(&b'*') {
                    i = src[i + 2..].find("*/").map_or(n, |p| i + 2 + p + 2);
                    continue;
                }
                let word = (word_start != usize::MAX && is_ident_byte(prev))
                    .then(|| &b[word_start..=prev_at]);
                match c {
                    b'\'' | b'"' => {
                        i = skip_quoted(b, i, true);
                        prev = c;
                        prev_at = i.saturating_sub(1);
                        word_start = usize::MAX;
                        continue;
                    }
                    b'`' => {
                        stack.push(Ctx::Template);
                        i += 1;
                        continue;
                    }
                    b'/' if regex_may_start(prev, word) => {
                        if let Some(end) = regex_literal_end(b, i) {
                            i = end;
                            prev = b'/';
                            prev_at = end - 1;
                            word_start = usize::MAX;
                            continue;
                        }
                    }
                    b'{' => {
                        if let Some(top) = stack.last_mut() {
                            *top = Ctx::Code(depth + 1);
                        }
                    }
                    b'}' => {
                        if depth == 0 {
                            if stack.len() > 1 {
                                stack.pop();
                                i += 1;
                                prev = b'}';
                                prev_at = i - 1;
                                word_start = usize::MAX;
                                continue;
                            }
                        } else if let Some(top) = stack.last_mut() {
                            *top = Ctx::Code(depth - 1);
                        }
                    }
                    b'<' if jsx_may_start(b, i, prev, prev_at, word, tsx) => {
                        found = true;
                        stack.push(Ctx::Tag { closing: false });
                        i += 1;
                        continue;
                    }
                    _ => {}
                }
                if is_ident_byte(c) {
                    let s = i;
                    while i < n && is_ident_byte(b[i]) {
                        i += 1;
                    }
                    word_start = s;
                    prev = b[i - 1];
                    prev_at = i - 1;
                    continue;
                }
                prev = c;
                prev_at = i;
                word_start = usize::MAX;
                i += 1;
            }
            Ctx::Template => match c {
                b'\\' => i += 2,
                b'`' => {
                    stack.pop();
                    i += 1;
                    prev = b'`';
                    prev_at = i - 1;
                    word_start = usize::MAX;
                }
                b'$' if b.get(i + 1) == Some(&b'{') => {
                    stack.push(Ctx::Code(0));
                    prev = b'{';
                    word_start = usize::MAX;
                    i += 2;
                }
                _ => i += 1,
            },
            Ctx::Tag { closing } => match c {
                b'"' | b'\'' => i = skip_quoted(b, i, false),
                b'{' => {
                    stack.push(Ctx::Code(0));
                    prev = b'{';
                    word_start = usize::MAX;
                    i += 1;
                }
                b'/' if b.get(i + 1) == Some(&b'>') => {
                    blank(&mut blanks, i, i + 1);
                    stack.pop();
                    i += 2;
                    prev = b')';
                    word_start = usize::MAX;
                }
                b'>' => {
                    if closing {
                        stack.pop();
                        prev = b')';
                        word_start = usize::MAX;
                    } else if let Some(top) = stack.last_mut() {
                        *top = Ctx::Children;
                    }
                    i += 1;
                }
                // A `;` or a `}` cannot be in a tag: this `<` was not JSX after all.
                b';' | b'}' => return None,
                _ => i += 1,
            },
            Ctx::Children => match c {
                b'{' => {
                    stack.push(Ctx::Code(0));
                    prev = b'{';
                    word_start = usize::MAX;
                    i += 1;
                }
                b'<' => {
                    let mut j = i + 1;
                    while j < n && b[j].is_ascii_whitespace() {
                        j += 1;
                    }
                    if b.get(j) == Some(&b'/') {
                        blank(&mut blanks, j, j + 1);
                        if let Some(top) = stack.last_mut() {
                            *top = Ctx::Tag { closing: true };
                        }
                        i = j + 1;
                    } else if b.get(j).is_some_and(|&x| x == b'>' || is_ident_start(x)) {
                        stack.push(Ctx::Tag { closing: false });
                        i += 1;
                    } else {
                        blank(&mut blanks, i, i + 1);
                        i += 1;
                    }
                }
                b'\n' | b'\r' => i += 1,
                _ => {
                    blank(&mut blanks, i, i + 1);
                    i += 1;
                }
            },
        }
    }
    if !found || stack.len() != 1 {
        return None;
    }
    let mut out = b.to_vec();
    for (from, to) in blanks {
        for x in &mut out[from.min(n)..to.min(n)] {
            *x = b' ';
        }
    }
    // Only whole characters were blanked (text runs, ASCII slashes), so this stays UTF-8.
    String::from_utf8(out).ok()
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$'
}

/// Past the quoted string at `i` (`'` or `"`); single-line strings stop at the line end.
fn skip_quoted(b: &[u8], i: usize, single_line: bool) -> usize {
    let q = b[i];
    let mut k = i + 1;
    while k < b.len() {
        match b[k] {
            b'\\' if single_line => k += 2,
            x if x == q => return k + 1,
            b'\n' if single_line => return k,
            _ => k += 1,
        }
    }
    b.len()
}

/// Mirrors the lexer's rule: a `/` starts a regex after an operator, an opening bracket, a
/// separator, the start of the file or a keyword such as `return`.
fn regex_may_start(prev: u8, word: Option<&[u8]>) -> bool {
    if prev == 0 {
        return true;
    }
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

/// The end (past the flags) of a one-line regex literal at `i`.
fn regex_literal_end(b: &[u8], i: usize) -> Option<usize> {
    let next = *b.get(i + 1)?;
    if next == b'/' || next == b'*' || next == b'\n' {
        return None;
    }
    let mut k = i + 1;
    let mut in_class = false;
    while k < b.len() {
        match b[k] {
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
                k += 1;
                while k < b.len() && b[k].is_ascii_alphabetic() {
                    k += 1;
                }
                return Some(k);
            }
            _ => k += 1,
        }
    }
    None
}

/// True when the `<` at `i` opens a JSX element.
fn jsx_may_start(
    b: &[u8],
    i: usize,
    prev: u8,
    prev_at: usize,
    word: Option<&[u8]>,
    tsx: bool,
) -> bool {
    let Some(&next) = b.get(i + 1) else {
        return false;
    };
    if !(next == b'>' || is_ident_start(next)) {
        return false;
    }
    let after_expr_start = match word {
        Some(w) => matches!(
            w,
            b"return" | b"yield" | b"default" | b"case" | b"await" | b"else" | b"do"
        ),
        None => {
            prev == 0
                || b"(,=:?[{;!&|".contains(&prev)
                || (prev == b'>' && prev_at > 0 && b[prev_at - 1] == b'=')
        }
    };
    if !after_expr_start {
        return false;
    }
    if tsx && next != b'>' {
        // `<T,>(x) => …`, `<T extends U>(…)`, and `= <T>(x: T) => …` in a type position.
        let mut j = i + 1;
        while j < b.len() && is_ident_byte(b[j]) {
            j += 1;
        }
        let mut k = j;
        while k < b.len() && b[k].is_ascii_whitespace() {
            k += 1;
        }
        if b.get(k) == Some(&b',') || b[k.min(b.len())..].starts_with(b"extends ") {
            return false;
        }
        if b.get(k) == Some(&b'>') && matches!(prev, b'=' | b':') {
            let mut m = k + 1;
            while m < b.len() && b[m].is_ascii_whitespace() {
                m += 1;
            }
            if b.get(m) == Some(&b'(') {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::super::*;
    use crate::index::facts::SymbolKind;

    #[test]
    fn jsx_text_does_not_confuse_the_scanner() {
        let src = r#"import React, { useState } from 'react';

export const Toggle = <T,>(props: { value: T }) => {
  const [on, setOn] = useState<boolean>(false);
  return (
    <div className="toggle" onClick={() => setOn(!on)}>
      Don't click / here {on ? <b>it's on</b> : <i>off</i>}
      <img src="/x.png" alt='a "quote"' />
    </div>
  );
};

export function OrderList({ orders }: Props) {
  useEffect(() => {
    fetch('/api/orders');
  }, []);
  return <ul>{orders.map(o => <li key={o.id}>{o.name}'s order</li>)}</ul>;
}

export default class Page extends React.Component<Props> {
  render() {
    return <>
      <p>Isn't it "great"? {/* it's a comment */}</p>
    </>;
  }
}

const generic = <T extends object>(x: T) => x;
export const AFTER = 'still.parsed';
"#;
        assert!(blank_jsx_text(src, true).is_some());
        let f = extract("src/Toggle.tsx", src);
        let got: Vec<(&str, SymbolKind, u32, u32)> = f
            .symbols
            .iter()
            .map(|s| (s.name.as_str(), s.kind, s.line, s.end_line))
            .collect();
        assert_eq!(
            got,
            vec![
                ("Toggle", SymbolKind::Function, 3, 11),
                ("OrderList", SymbolKind::Function, 13, 18),
                ("Page", SymbolKind::Class, 20, 26),
                ("render", SymbolKind::Method, 21, 25),
                ("generic", SymbolKind::Function, 28, 28),
                ("AFTER", SymbolKind::Constant, 29, 29),
            ]
        );
        assert_eq!(constant(&f, "AFTER"), Some("still.parsed"));
        assert_eq!(
            calls(&f),
            vec![(Some("GET".into()), "/api/orders".into(), 15)]
        );
        // A `.ts` file is never treated as JSX (type assertions live there).
        let f = extract("a.ts", "const x = <Foo>bar;\nconst Y = 'y';");
        assert_eq!(constant(&f, "Y"), Some("y"));
    }

    #[test]
    fn jsx_in_plain_js_files() {
        let src = "function App() {\n  return <p>Don't stop</p>;\n}\nexport const B = 'b';\n";
        let f = extract("src/App.jsx", src);
        assert_eq!(sym(&f, "App").end_line, 3);
        assert_eq!(constant(&f, "B"), Some("b"));
        // A comparison is not JSX.
        assert!(blank_jsx_text("if (a <b) { x = 1 }", false).is_none());
    }
}
