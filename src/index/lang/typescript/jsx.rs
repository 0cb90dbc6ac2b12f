//! JSX text blanking: before lexing, a `.tsx`/`.jsx`/`.js` file's JSX text and the `/` of its
//! closing tags become spaces (offsets kept), so an apostrophe or a slash in markup never opens a
//! string or a regex for the lexer.

use crate::index::lex::{self, is_ident_byte};

/// The source with JSX text and the `/` of closing tags blanked (newlines kept, offsets
/// unchanged), or `None` when the file holds no JSX or the JSX could not be followed to its
/// end (then the file is lexed as is).
///
/// A `<` starts an element only where an expression can start (after `(`, `=`, `:`, `?`, `,`,
/// `[`, `{`, `;`, `!`, `&&`, `||`, `=>`, `return` …) and before a name or `>`; in `.tsx`,
/// `<T,>` and `<T extends X>` stay generics. Elements, attribute expressions and template
/// literals nest on an explicit stack.
pub(super) fn blank_jsx_text(src: &str, tsx: bool) -> Option<String> {
    const MAX_DEPTH: usize = 512;
    // Every JSX element closes with `</` or `/>`: without either there is nothing to do.
    if !src.contains("</") && !src.contains("/>") {
        return None;
    }
    let b = src.as_bytes();
    let n = b.len();
    let mut s = Scan {
        src,
        b,
        n,
        tsx,
        stack: vec![Ctx::Code(0)],
        blanks: Vec::new(),
        prev: 0,
        prev_at: 0,
        word_start: usize::MAX,
        found: false,
    };
    let mut i = 0usize;
    while i < n {
        let &top = s.stack.last()?;
        if s.stack.len() > MAX_DEPTH {
            return None;
        }
        let c = b[i];
        i = match top {
            Ctx::Code(depth) => s.code(i, c, depth),
            Ctx::Template => s.template(i, c),
            Ctx::Tag { closing } => s.tag(i, c, closing)?,
            Ctx::Children => s.children(i, c),
        };
    }
    if !s.found || s.stack.len() != 1 {
        return None;
    }
    s.blanked()
}

/// What the byte being scanned is part of: code (with its `{` depth), a template literal, a
/// tag, or an element's children.
#[derive(Clone, Copy, PartialEq)]
enum Ctx {
    Code(u32),
    Template,
    Tag { closing: bool },
    Children,
}

/// The state of [`blank_jsx_text`]'s scan: the contexts on their explicit stack, the byte
/// ranges to blank, and what the regex and JSX rules look back at.
struct Scan<'s> {
    src: &'s str,
    b: &'s [u8],
    n: usize,
    tsx: bool,
    stack: Vec<Ctx>,
    blanks: Vec<(usize, usize)>,
    // The last significant byte of code and, when it ends a word, the word's start.
    prev: u8,
    prev_at: usize,
    word_start: usize,
    found: bool,
}

impl Scan<'_> {
    /// Marks `from..to` to be blanked, merged with the previous range when they touch.
    fn blank(&mut self, from: usize, to: usize) {
        match self.blanks.last_mut() {
            Some(last) if last.1 == from => last.1 = to,
            _ => self.blanks.push((from, to)),
        }
    }

    /// One step in code at `i` (a byte `c`): skips whitespace, comments, strings and regex
    /// literals, follows `{`/`}`, and opens template literals and JSX elements. Returns where
    /// the scan goes on.
    fn code(&mut self, mut i: usize, c: u8, depth: u32) -> usize {
        let (src, b, n) = (self.src, self.b, self.n);
        if c.is_ascii_whitespace() {
            i += 1;
            return i;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            i = b[i..].iter().position(|&x| x == b'\n').map_or(n, |p| i + p);
            return i;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i = src[i + 2..].find("*/").map_or(n, |p| i + 2 + p + 2);
            return i;
        }
        let word = (self.word_start != usize::MAX && is_ident_byte(self.prev))
            .then(|| &b[self.word_start..=self.prev_at]);
        match c {
            b'\'' | b'"' => {
                i = skip_quoted(b, i, true);
                self.prev = c;
                self.prev_at = i.saturating_sub(1);
                self.word_start = usize::MAX;
                return i;
            }
            b'`' => {
                self.stack.push(Ctx::Template);
                i += 1;
                return i;
            }
            b'/' if lex::regex_may_follow((self.prev != 0).then_some(self.prev), word) => {
                if let Some((_, end)) = lex::regex_end(b, i) {
                    i = end;
                    self.prev = b'/';
                    self.prev_at = end - 1;
                    self.word_start = usize::MAX;
                    return i;
                }
            }
            b'{' => {
                if let Some(top) = self.stack.last_mut() {
                    *top = Ctx::Code(depth + 1);
                }
            }
            b'}' => {
                if depth == 0 {
                    if self.stack.len() > 1 {
                        self.stack.pop();
                        i += 1;
                        self.prev = b'}';
                        self.prev_at = i - 1;
                        self.word_start = usize::MAX;
                        return i;
                    }
                } else if let Some(top) = self.stack.last_mut() {
                    *top = Ctx::Code(depth - 1);
                }
            }
            b'<' if jsx_may_start(b, i, self.prev, self.prev_at, word, self.tsx) => {
                self.found = true;
                self.stack.push(Ctx::Tag { closing: false });
                i += 1;
                return i;
            }
            _ => {}
        }
        if is_ident_byte(c) {
            let s = i;
            while i < n && is_ident_byte(b[i]) {
                i += 1;
            }
            self.word_start = s;
            self.prev = b[i - 1];
            self.prev_at = i - 1;
            return i;
        }
        self.prev = c;
        self.prev_at = i;
        self.word_start = usize::MAX;
        i += 1;
        i
    }

    /// One step in a template literal: its end, or a `${` opening code.
    fn template(&mut self, mut i: usize, c: u8) -> usize {
        let b = self.b;
        match c {
            b'\\' => i += 2,
            b'`' => {
                self.stack.pop();
                i += 1;
                self.prev = b'`';
                self.prev_at = i - 1;
                self.word_start = usize::MAX;
            }
            b'$' if b.get(i + 1) == Some(&b'{') => {
                self.stack.push(Ctx::Code(0));
                self.prev = b'{';
                self.word_start = usize::MAX;
                i += 2;
            }
            _ => i += 1,
        }
        i
    }

    /// One step in a tag: attribute strings, `{` expressions, and the tag's end (`/>` blanks
    /// its slash); `None` when the `<` turns out not to be JSX.
    fn tag(&mut self, mut i: usize, c: u8, closing: bool) -> Option<usize> {
        let b = self.b;
        match c {
            b'"' | b'\'' => i = skip_quoted(b, i, false),
            b'{' => {
                self.stack.push(Ctx::Code(0));
                self.prev = b'{';
                self.word_start = usize::MAX;
                i += 1;
            }
            b'/' if b.get(i + 1) == Some(&b'>') => {
                self.blank(i, i + 1);
                self.stack.pop();
                i += 2;
                self.prev = b')';
                self.word_start = usize::MAX;
            }
            b'>' => {
                if closing {
                    self.stack.pop();
                    self.prev = b')';
                    self.word_start = usize::MAX;
                } else if let Some(top) = self.stack.last_mut() {
                    *top = Ctx::Children;
                }
                i += 1;
            }
            // A `;` or a `}` cannot be in a tag: this `<` was not JSX after all.
            b';' | b'}' => return None,
            _ => i += 1,
        }
        Some(i)
    }

    /// One step in an element's children: text is blanked (newlines kept); `{` opens code,
    /// `<` a child element or the closing tag (whose `/` is blanked).
    fn children(&mut self, mut i: usize, c: u8) -> usize {
        let (b, n) = (self.b, self.n);
        match c {
            b'{' => {
                self.stack.push(Ctx::Code(0));
                self.prev = b'{';
                self.word_start = usize::MAX;
                i += 1;
            }
            b'<' => {
                let mut j = i + 1;
                while j < n && b[j].is_ascii_whitespace() {
                    j += 1;
                }
                if b.get(j) == Some(&b'/') {
                    self.blank(j, j + 1);
                    if let Some(top) = self.stack.last_mut() {
                        *top = Ctx::Tag { closing: true };
                    }
                    i = j + 1;
                } else if b.get(j).is_some_and(|&x| x == b'>' || is_ident_start(x)) {
                    self.stack.push(Ctx::Tag { closing: false });
                    i += 1;
                } else {
                    self.blank(i, i + 1);
                    i += 1;
                }
            }
            b'\n' | b'\r' => i += 1,
            _ => {
                self.blank(i, i + 1);
                i += 1;
            }
        }
        i
    }

    /// The source with the marked ranges blanked.
    fn blanked(self) -> Option<String> {
        let (b, n) = (self.b, self.n);
        let mut out = b.to_vec();
        for (from, to) in self.blanks {
            for x in &mut out[from.min(n)..to.min(n)] {
                *x = b' ';
            }
        }
        // Only whole characters were blanked (text runs, ASCII slashes), so this stays UTF-8.
        String::from_utf8(out).ok()
    }
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
