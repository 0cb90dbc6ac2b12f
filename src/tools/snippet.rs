//! Snippets for `smart_search`: a declaration's doc comment and signature with the bodies of
//! functions stripped, in original line coordinates.
//!
//! Stripping works on the lexer's masked code, so braces inside strings and comments never
//! confuse it. In brace languages a block whose head has a parameter list (a function or
//! method body) collapses to `{ /* stripped */ }`; blocks of types, impls and namespaces stay
//! open so their members' signatures show. Python `def` bodies become `...` (docstring kept),
//! Ruby `def` bodies disappear up to their `end`. Protobuf, YAML and Markdown are never
//! stripped. A snippet shows at most [`MAX_LINES`] lines, each at most [`MAX_LINE_BYTES`].

use crate::index::facts::Language;
use crate::index::lex::{self, Lexed, Syntax};

/// The most lines a snippet shows after its doc comment.
pub const MAX_LINES: usize = 15;
/// The most doc-comment/annotation lines shown above a declaration.
pub const MAX_DOC_LINES: usize = 6;
/// Each shown line is cut to this many bytes, with `...`.
pub const MAX_LINE_BYTES: usize = 256;

/// A rendered snippet: its text and the original lines it spans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snippet {
    pub text: String,
    pub first_line: u32,
    pub last_line: u32,
}

/// Builds the snippet of the declaration spanning `line..=end_line` (doc comment from
/// `doc_line`) in `text`. With `include_body`, the original lines are shown unstripped (still
/// bounded by [`MAX_LINES`] × 4).
pub fn snippet(
    lang: Language,
    text: &str,
    doc_line: Option<u32>,
    line: u32,
    end_line: u32,
    include_body: bool,
) -> Snippet {
    // Where each line starts, as `str::lines` splits them (a last line without `\n` counts,
    // an empty text has none): one byte loop, where collecting `lines()` cost a fifth of a
    // snippet at opt-level "z".
    let bytes = text.as_bytes();
    let mut starts: Vec<usize> = Vec::with_capacity(bytes.len() / 24 + 2);
    if !bytes.is_empty() {
        starts.push(0);
    }
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' && i + 1 < bytes.len() {
            starts.push(i + 1);
        }
    }
    let total = starts.len().max(1) as u32;
    let line = line.clamp(1, total);
    let end_line = end_line.clamp(line, total);
    let doc_from = doc_line.filter(|&d| d < line).map_or(line, |d| {
        d.max(line.saturating_sub(MAX_DOC_LINES as u32)).max(1)
    });
    let get = |l: u32| -> &str {
        let Some(&start) = starts.get((l - 1) as usize) else {
            return "";
        };
        let end = starts.get(l as usize).map_or(bytes.len(), |&next| next - 1);
        let line = &text[start..end];
        // `lines()` drops the `\n` and one `\r` before it; the rest of the `\r`s go here too.
        line.strip_suffix('\n')
            .unwrap_or(line)
            .trim_end_matches('\r')
    };
    let mut out: Vec<(u32, String)> = (doc_from..line).map(|l| (l, get(l).to_string())).collect();
    let limit = if include_body {
        MAX_LINES * 4
    } else {
        MAX_LINES
    };
    let body_lines: Vec<(u32, String)> = match (include_body, Syntax::of(lang)) {
        (false, Some(syntax)) => {
            // Only the declaration's own lines are lexed (a declaration starts in code, so
            // the lexer starts there in the state it would be in): a hit in a long file no
            // longer costs a lexing of the whole file. Lines are counted from the slice.
            let from = starts.get((line - 1) as usize).copied().unwrap_or(0);
            let to = starts
                .get(end_line as usize)
                .map_or(bytes.len(), |&next| next);
            let lexed = lex::lex(syntax, &text[from..to]);
            let (first, last) = (1, end_line - line + 1);
            let mut lines = match lang {
                Language::Python => strip_python(&lexed, first, last),
                Language::Ruby => strip_ruby(&lexed, first, last),
                _ => strip_braces(&lexed, first, last),
            };
            for (l, _) in &mut lines {
                *l += line - 1;
            }
            lines
        }
        _ => (line..=end_line).map(|l| (l, get(l).to_string())).collect(),
    };
    let cut = body_lines.len() > limit;
    out.extend(body_lines.into_iter().take(limit));
    if cut {
        let indent: String = out
            .last()
            .map(|(_, s)| s.chars().take_while(|c| c.is_whitespace()).collect())
            .unwrap_or_default();
        let last = out.last().map_or(line, |(l, _)| *l);
        out.push((
            last,
            format!("{indent}… (declaration continues to L{end_line})"),
        ));
    }
    let first_line = out.first().map_or(line, |(l, _)| *l);
    // A collapsed body ends on the declaration's last line, so the range covers it.
    let last_line = if cut || !include_body {
        end_line
    } else {
        out.last().map_or(line, |(l, _)| *l).max(line)
    };
    let mut text_out = String::new();
    for (_, l) in &out {
        text_out.push_str(&cap_line(l));
        text_out.push('\n');
    }
    Snippet {
        text: text_out,
        first_line,
        last_line,
    }
}

fn cap_line(s: &str) -> String {
    if s.len() <= MAX_LINE_BYTES {
        return s.to_string();
    }
    let mut end = MAX_LINE_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

/// Keywords whose blocks hold members: never stripped.
const CONTAINER_WORDS: [&str; 14] = [
    "class",
    "interface",
    "struct",
    "enum",
    "trait",
    "impl",
    "object",
    "namespace",
    "record",
    "module",
    "extension",
    "protocol",
    "union",
    "actor",
];

/// True when the block opened at `open` is a function body: its head (back to the previous
/// `;`, `{` or `}`) has a parameter list and is not a type/namespace header.
fn is_body_block(code: &str, open: usize, floor: usize) -> bool {
    let bytes = code.as_bytes();
    let mut k = open;
    while k > floor {
        match bytes[k - 1] {
            b';' | b'{' | b'}' => break,
            _ => k -= 1,
        }
    }
    let head = &code[k..open];
    // One pass over the head's identifiers (maximal runs of identifier bytes, which is what
    // a whole-word match is) instead of one word search per container keyword.
    if head
        .as_bytes()
        .split(|&b| !lex::is_ident_byte(b))
        .any(|w| CONTAINER_WORDS.iter().any(|c| c.as_bytes() == w))
    {
        return false;
    }
    // A `{` inside an open parameter list is a type or object literal, not a body.
    let open_parens = head.bytes().fold(0i32, |d, b| match b {
        b'(' => d + 1,
        b')' => d - 1,
        _ => d,
    });
    open_parens <= 0 && (head.contains('(') || head.trim_end().ends_with("=>"))
}

/// Strips function bodies in a brace language between `line` and `end_line`.
fn strip_braces(lexed: &Lexed, line: u32, end_line: u32) -> Vec<(u32, String)> {
    let (start, _) = lexed.line_range(line);
    let (_, stop) = lexed.line_range(end_line);
    let code = lexed.code.as_bytes();
    let mut out: Vec<(u32, String)> = Vec::new();
    // Spans to elide: (open brace offset, close brace offset).
    let mut elide: Vec<(usize, usize)> = Vec::new();
    let mut i = start;
    while i < stop.min(code.len()) {
        if code[i] == b'{' && is_body_block(&lexed.code, i, start) {
            match lexed.matching_close(i) {
                Some(close) if close > i + 1 => {
                    elide.push((i, close));
                    i = close + 1;
                    continue;
                }
                _ => {}
            }
        }
        i += 1;
    }
    // The line the text in `buf` started on: a collapsed body keeps its signature's number.
    let mut buf_line = line;
    let mut buf = String::new();
    let mut pos = start;
    let text = lexed.text;
    let stop = stop.min(text.len());
    let mut e = 0;
    while pos < stop {
        if e < elide.len() && pos == elide[e].0 {
            buf.push_str("{ /* stripped */ }");
            let close = elide[e].1;
            pos = close + 1;
            e += 1;
            continue;
        }
        let next_stop = elide.get(e).map_or(stop, |s| s.0.min(stop));
        let chunk_end = text[pos..next_stop]
            .find('\n')
            .map_or(next_stop, |n| pos + n);
        buf.push_str(&text[pos..chunk_end]);
        pos = chunk_end;
        if pos < stop && text.as_bytes()[pos] == b'\n' {
            out.push((buf_line, std::mem::take(&mut buf).trim_end().to_string()));
            pos += 1;
            buf_line = lexed.line_of(pos);
        }
    }
    if !buf.trim().is_empty() || out.is_empty() {
        out.push((buf_line, buf.trim_end().to_string()));
    }
    out
}

/// Strips Python `def` bodies to `...`, keeping signatures and docstrings.
fn strip_python(lexed: &Lexed, line: u32, end_line: u32) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let mut l = line;
    while l <= end_line {
        let code = lexed.code_line(l);
        let trimmed = code.trim_start();
        let is_def = trimmed.starts_with("def ") || trimmed.starts_with("async def ");
        out.push((l, lexed.source_line(l).to_string()));
        if !is_def {
            l += 1;
            continue;
        }
        // The signature may span lines: find the line holding the `:` that ends it.
        let mut sig_end = l;
        let mut depth = 0i32;
        'sig: for sl in l..=end_line {
            for b in lexed.code_line(sl).bytes() {
                match b {
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => depth -= 1,
                    b':' if depth == 0 => {
                        sig_end = sl;
                        break 'sig;
                    }
                    _ => {}
                }
            }
        }
        for sl in l + 1..=sig_end {
            out.push((sl, lexed.source_line(sl).to_string()));
        }
        let block_end = lexed.indent_block_end(l).min(end_line);
        let indent: String = lexed
            .source_line(l)
            .chars()
            .take_while(|c| c.is_whitespace())
            .collect();
        // A docstring directly after the signature is kept.
        let mut next = sig_end + 1;
        while next <= block_end && lexed.code_line(next).trim().is_empty() {
            next += 1;
        }
        if next <= block_end
            && let Some(s) = lexed.string_at(lexed.line_range(next).0)
            && lexed.line_of(s.start) == next
            && lexed.code_line(next).trim_start().starts_with(['"', '\''])
        {
            let doc_end = lexed.line_of(s.end.saturating_sub(1).max(s.start));
            for dl in next..=doc_end.min(block_end) {
                out.push((dl, lexed.source_line(dl).to_string()));
            }
        }
        if block_end > sig_end {
            out.push((block_end, format!("{indent}    ...")));
        }
        l = block_end.max(sig_end) + 1;
    }
    out
}

/// Strips Ruby `def … end` bodies.
fn strip_ruby(lexed: &Lexed, line: u32, end_line: u32) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let mut l = line;
    while l <= end_line {
        let trimmed = lexed.code_line(l).trim_start();
        out.push((l, lexed.source_line(l).to_string()));
        if trimmed.starts_with("def ") && !trimmed.contains(" end") && !is_endless_def(trimmed) {
            let indent = lexed.code_line(l).len() - trimmed.len();
            // The matching `end` at the same indentation.
            let close = (l + 1..=end_line).find(|&k| {
                let c = lexed.code_line(k);
                let t = c.trim_start();
                c.len() - t.len() == indent && (t == "end" || t.starts_with("end "))
            });
            if let Some(close) = close {
                if close > l + 1 {
                    out.push((
                        close - 1,
                        format!("{}  # … stripped", &lexed.source_line(l)[..indent]),
                    ));
                }
                out.push((close, lexed.source_line(close).to_string()));
                l = close + 1;
                continue;
            }
        }
        l += 1;
    }
    out
}

/// True for a Ruby endless method (`def total(x) = x * 2`, `def name = @name`): an `=` outside
/// the parameter list, after a space or `)`. A default value (`limit = 3`) is inside the
/// parentheses and a setter (`def name=(v)`) has no space before its `=`.
fn is_endless_def(code: &str) -> bool {
    let bytes = code.as_bytes();
    let mut depth = 0i32;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'(' => depth += 1,
            b')' => depth -= 1,
            b'=' if depth == 0 => {
                let before = i.checked_sub(1).map(|j| bytes[j]);
                let after = bytes.get(i + 1).copied();
                if matches!(before, Some(b' ' | b')')) && !matches!(after, Some(b'=' | b'~' | b'>'))
                {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ruby_defaults_are_not_endless_methods() {
        assert!(!is_endless_def("def top_for(customer_id, limit = 3)"));
        assert!(!is_endless_def("def name=(value)"));
        assert!(!is_endless_def(
            "def initialize(brokers: ENV.fetch(\"K\", \"k\"))"
        ));
        assert!(is_endless_def("def total(x) = x * 2"));
        assert!(is_endless_def("def name = @name"));
        let src = "class R\n  def top_for(id, limit = 3)\n    scores = 1\n    scores\n  end\nend\n";
        let s = show(Language::Ruby, src, 1, 6);
        assert!(s.contains("# … stripped"), "{s}");
        assert!(!s.contains("scores = 1"), "{s}");
    }

    #[test]
    fn lines_split_as_str_lines_does() {
        for text in [
            "",
            "a",
            "a\n",
            "a\nb",
            "\n\n",
            "a\r\nb\r\n",
            "x\r\r\ny\rz\n\nlast",
            "é\nü\r\n",
        ] {
            let lines: Vec<&str> = text.lines().collect();
            for l in 1..=lines.len() as u32 + 2 {
                let want: String = lines
                    .get(l as usize - 1)
                    .copied()
                    .unwrap_or("")
                    .trim_end_matches('\r')
                    .to_string();
                let got = snippet(Language::Yaml, text, None, l, l, false);
                let clamped = l.clamp(1, lines.len().max(1) as u32);
                assert_eq!(got.first_line, clamped, "{text:?} line {l}");
                let want = if l as usize > lines.len() {
                    lines
                        .get(clamped as usize - 1)
                        .copied()
                        .unwrap_or("")
                        .trim_end_matches('\r')
                        .to_string()
                } else {
                    want
                };
                assert_eq!(got.text, format!("{want}\n"), "{text:?} line {l}");
            }
        }
    }

    fn show(lang: Language, src: &str, line: u32, end: u32) -> String {
        snippet(lang, src, None, line, end, false).text
    }

    #[test]
    fn function_bodies_collapse_and_class_members_stay() {
        let src = "public class OrderService {\n    private final Repo repo;\n    public Order create(String id) {\n        if (x) { y(); }\n        return repo.save(\"{ not a brace\");\n    }\n}\n";
        let s = show(Language::Java, src, 1, 7);
        assert!(
            s.contains("public Order create(String id) { /* stripped */ }"),
            "{s}"
        );
        assert!(s.contains("private final Repo repo;"));
        assert!(!s.contains("return"));
        let sn = snippet(Language::Java, src, None, 3, 6, false);
        assert_eq!((sn.first_line, sn.last_line), (3, 6));
    }

    #[test]
    fn go_rust_ts_signatures() {
        let go = "func (s *server) CreateOrder(ctx context.Context,\n    req *pb.Req) (*pb.Order, error) {\n\treturn nil, nil\n}\n";
        let s = show(Language::Go, go, 1, 4);
        assert!(
            s.contains("req *pb.Req) (*pb.Order, error) { /* stripped */ }"),
            "{s}"
        );
        let rs = "impl Orders for Svc {\n    async fn create(&self) -> Result<(), E> {\n        todo!()\n    }\n}\n";
        let s = show(Language::Rust, rs, 1, 5);
        assert!(s.contains("impl Orders for Svc {"), "{s}");
        assert!(s.contains("-> Result<(), E> { /* stripped */ }"), "{s}");
        let ts = "export const handler = async (req: Req) => {\n  return 1;\n};\n";
        let s = show(Language::TypeScript, ts, 1, 3);
        assert!(s.contains("=> { /* stripped */ };"), "{s}");
    }

    #[test]
    fn type_literals_in_parameters_are_not_bodies() {
        let ts = "export interface C {\n  get(req: { id: string }): Obs<O>;\n  run(x: number): void {\n    go();\n  }\n}\n";
        let s = show(Language::TypeScript, ts, 1, 6);
        assert!(s.contains("get(req: { id: string }): Obs<O>;"), "{s}");
        assert!(s.contains("run(x: number): void { /* stripped */ }"), "{s}");
    }

    #[test]
    fn python_keeps_signature_and_docstring() {
        let py = "class Servicer(Base):\n    def Reserve(self, request,\n                context):\n        \"\"\"Reserves stock.\"\"\"\n        x = 1\n        return x\n\n    def Other(self):\n        pass\n";
        let s = show(Language::Python, py, 1, 9);
        assert!(s.contains("context):"), "{s}");
        assert!(s.contains("Reserves stock."), "{s}");
        assert!(!s.contains("x = 1"), "{s}");
        assert!(s.contains("def Other(self):"), "{s}");
        assert!(s.contains("..."), "{s}");
    }

    #[test]
    fn ruby_def_bodies_are_stripped() {
        let rb = "class Recs\n  def top(n)\n    x = 1\n    x\n  end\nend\n";
        let s = show(Language::Ruby, rb, 1, 6);
        assert!(s.contains("def top(n)"), "{s}");
        assert!(!s.contains("x = 1"), "{s}");
        assert!(s.trim_end().ends_with("end"), "{s}");
    }

    #[test]
    fn docs_bodies_and_caps() {
        let src = "/// Creates.\n#[inline]\nfn f() {\n    1\n}\n";
        let sn = snippet(Language::Rust, src, Some(1), 3, 5, false);
        assert_eq!(sn.first_line, 1);
        assert!(sn.text.starts_with("/// Creates."));
        let body = snippet(Language::Rust, src, Some(1), 3, 5, true);
        assert!(body.text.contains("    1"));
        let long: String = (0..100).map(|i| format!("    x{i} = 1;\n")).collect();
        let src = format!("struct S {{\n{long}}}\n");
        let sn = snippet(Language::Rust, &src, None, 1, 102, false);
        assert_eq!(sn.text.lines().count(), MAX_LINES + 1);
        assert_eq!(sn.last_line, 102);
        let wide = format!("fn g() {{ {} }}\n", "a".repeat(1000));
        assert!(show(Language::Rust, &wide, 1, 1).len() < 300);
        // Lines out of range never panic.
        let sn = snippet(Language::Go, "package x\n", Some(0), 40, 10, false);
        assert_eq!(sn.first_line, 1);
    }
}
