//! Protobuf (`.proto`) extractor: the contract model the gRPC tools and the wire-format check
//! read, plus the service/rpc/message/enum declarations for search.
//!
//! A small tokenizer (comments, strings, identifiers, numbers, punctuation) feeds an iterative
//! statement parser that keeps its nesting on an explicit stack, so 10,000-deep input never
//! recurses. Malformed input yields whatever was recognised before and after the damage:
//! unknown statements are skipped to the next `;` or balanced block, unclosed blocks end at the
//! last token of the file.

use crate::index::facts::{
    FieldLabel, FileFacts, Import, ProtoEnum, ProtoEnumValue, ProtoField, ProtoFile, ProtoMessage,
    ProtoRpc, ProtoService, Symbol, SymbolKind,
};
use crate::index::lex::utf8_len;

/// The largest field number protobuf allows; `reserved 20 to max;` in a message ends here.
const MAX_FIELD_NUMBER: u32 = 536_870_911;

/// Blocks nested deeper than this are skipped whole (the crawl guard rejects such files
/// anyway); it keeps dotted names and the frame stack small on hostile input.
const MAX_NESTING: usize = 64;

/// Extracts the protobuf model (`FileFacts.proto`), the package and the declarations of one
/// `.proto` file. `path` is unused (kept for the common extractor signature).
///
/// Conventions: a `map<K, V>` field has `type_name` `map<K,V>` and label `Repeated` (a map is
/// a repeated entry message on the wire); a proto2 `group` is a field of the group's type plus
/// a nested message; `edition = "2023";` is recorded as syntax `editions 2023`; `extend`
/// blocks are skipped (extensions are not part of the message's own number space).
pub fn extract(path: &str, text: &str) -> FileFacts {
    let _ = path;
    // A lone `\r` (old Mac line ends) is a line break too, as in every other extractor.
    let text = &*crate::index::lex::normalize_breaks(text);
    let lexed = lex(text);
    let mut parser = Parser {
        src: text,
        toks: &lexed.toks,
        lines: &lexed.lines,
        i: 0,
        file: ProtoFile::default(),
        symbols: Vec::new(),
        imports: Vec::new(),
        stack: Vec::new(),
    };
    parser.run();
    let Parser {
        file,
        symbols,
        imports,
        ..
    } = parser;
    FileFacts {
        package: file.package.clone(),
        symbols,
        imports,
        proto: Some(file),
        ..FileFacts::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Tokenizer
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// An identifier, possibly dotted (`google.protobuf.Timestamp`, `.acme.Order`).
    Ident,
    /// A number literal as written (`1`, `0x1F`, `1.5e3`); the sign is a separate `-` token.
    Num,
    /// A string literal; `text` is the content between the quotes, escapes kept.
    Str,
    /// Any other single character.
    Punct,
}

#[derive(Debug, Clone, Copy)]
struct Tok<'a> {
    kind: Kind,
    text: &'a str,
    line: u32,
    /// Byte span of the whole token in the source (quotes included for strings).
    start: usize,
    end: usize,
}

/// Per-line flags used to find the comment block directly above a declaration.
const LINE_TOKEN: u8 = 1;
const LINE_COMMENT: u8 = 2;

struct Lexed<'a> {
    toks: Vec<Tok<'a>>,
    /// Index = 1-based line number; flags `LINE_TOKEN` / `LINE_COMMENT`.
    lines: Vec<u8>,
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn mark(lines: &mut Vec<u8>, line: u32, flag: u8) {
    let idx = line as usize;
    if lines.len() <= idx {
        lines.resize(idx + 1, 0);
    }
    lines[idx] |= flag;
}

/// Splits protobuf source into tokens. Never fails: an unterminated string ends at the end of
/// its line, an unterminated block comment at the end of the file, unknown bytes become
/// punctuation the parser ignores.
fn lex(src: &str) -> Lexed<'_> {
    let b = src.as_bytes();
    let n = b.len();
    let mut toks = Vec::new();
    let mut lines = vec![0u8; 2];
    let mut line: u32 = 1;
    let mut i = 0;
    while i < n {
        let c = b[i];
        let token = match c {
            b'\n' => {
                line += 1;
                i += 1;
                None
            }
            b' ' | b'\t' | b'\r' | 0x0B | 0x0C => {
                i += 1;
                None
            }
            b'/' if i + 1 < n && b[i + 1] == b'/' => {
                mark(&mut lines, line, LINE_COMMENT);
                while i < n && b[i] != b'\n' {
                    i += 1;
                }
                None
            }
            b'/' if i + 1 < n && b[i + 1] == b'*' => {
                mark(&mut lines, line, LINE_COMMENT);
                i += 2;
                while i < n && !(b[i] == b'*' && i + 1 < n && b[i + 1] == b'/') {
                    if b[i] == b'\n' {
                        line += 1;
                        mark(&mut lines, line, LINE_COMMENT);
                    }
                    i += 1;
                }
                i = (i + 2).min(n);
                None
            }
            b'"' | b'\'' => {
                let start = i;
                i += 1;
                while i < n && b[i] != c && b[i] != b'\n' {
                    if b[i] == b'\\' && i + 1 < n && b[i + 1] != b'\n' {
                        i += 1;
                    }
                    i += 1;
                }
                let content_end = i;
                if i < n && b[i] == c {
                    i += 1;
                }
                Some((Kind::Str, start + 1..content_end, start))
            }
            _ if is_ident_start(c) || (c == b'.' && i + 1 < n && is_ident_start(b[i + 1])) => {
                let start = i;
                i += 1;
                loop {
                    while i < n && is_ident_char(b[i]) {
                        i += 1;
                    }
                    if i + 1 < n && b[i] == b'.' && is_ident_start(b[i + 1]) {
                        i += 1;
                        continue;
                    }
                    break;
                }
                Some((Kind::Ident, start..i, start))
            }
            _ if c.is_ascii_digit() || (c == b'.' && i + 1 < n && b[i + 1].is_ascii_digit()) => {
                let start = i;
                let hex = c == b'0' && i + 1 < n && (b[i + 1] | 0x20) == b'x';
                i += 1;
                while i < n {
                    let d = b[i];
                    let exp_sign = !hex && (d == b'+' || d == b'-') && (b[i - 1] | 0x20) == b'e';
                    if is_ident_char(d) || d == b'.' || exp_sign {
                        i += 1;
                    } else {
                        break;
                    }
                }
                Some((Kind::Num, start..i, start))
            }
            _ => {
                let start = i;
                i = (i + utf8_len(c)).min(n);
                while i < n && !src.is_char_boundary(i) {
                    i += 1;
                }
                Some((Kind::Punct, start..i, start))
            }
        };
        if let Some((kind, range, start)) = token {
            mark(&mut lines, line, LINE_TOKEN);
            toks.push(Tok {
                kind,
                text: &src[range],
                line,
                start,
                end: i,
            });
        }
    }
    Lexed { toks, lines }
}

/// Parses an integer literal as protobuf writes it: decimal, `0x` hex or leading-`0` octal.
fn parse_int(s: &str) -> Option<i64> {
    let (digits, radix) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (h, 16)
    } else if s.len() > 1 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    if digits.is_empty() {
        return None;
    }
    i64::from_str_radix(digits, radix).ok()
}

// ---------------------------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------------------------

/// What the innermost open block is.
#[derive(Debug, Clone)]
enum Frame {
    /// A message body: index into `file.messages`, and its symbol.
    Message { mi: usize, sym: usize },
    /// A `oneof` body inside message `mi`.
    Oneof { mi: usize, name: String },
    /// An enum body: index into `file.enums`, and its symbol.
    Enum { ei: usize, sym: usize },
    /// A service body: index into `file.services`, and its symbol.
    Service { si: usize, sym: usize },
}

struct Parser<'a, 't> {
    src: &'a str,
    toks: &'t [Tok<'a>],
    lines: &'t [u8],
    i: usize,
    file: ProtoFile,
    symbols: Vec<Symbol>,
    imports: Vec<Import>,
    stack: Vec<Frame>,
}

impl<'a> Parser<'a, '_> {
    fn tok(&self, k: usize) -> Option<Tok<'a>> {
        self.toks.get(self.i + k).copied()
    }

    fn is_punct(&self, k: usize, p: &str) -> bool {
        self.tok(k)
            .is_some_and(|t| t.kind == Kind::Punct && t.text == p)
    }

    fn is_word(&self, k: usize, w: &str) -> bool {
        self.tok(k)
            .is_some_and(|t| t.kind == Kind::Ident && t.text == w)
    }

    fn ident(&self, k: usize) -> Option<Tok<'a>> {
        self.tok(k).filter(|t| t.kind == Kind::Ident)
    }

    fn last_line(&self) -> u32 {
        self.toks.last().map_or(1, |t| t.line)
    }

    /// The first line of the comment block that ends on the line directly above `line` (lines
    /// holding only comments), if any.
    fn doc_line(&self, line: u32) -> Option<u32> {
        let mut l = line as usize;
        let mut first = None;
        while l > 1 {
            let flags = self.lines.get(l - 1).copied().unwrap_or(0);
            if flags & LINE_COMMENT != 0 && flags & LINE_TOKEN == 0 {
                l -= 1;
                first = Some(l as u32);
            } else {
                break;
            }
        }
        first
    }

    fn push_symbol(
        &mut self,
        name: String,
        kind: SymbolKind,
        line: u32,
        start_line: u32,
        container: Option<String>,
    ) -> usize {
        self.symbols.push(Symbol {
            name,
            kind,
            line,
            end_line: line,
            doc_line: self.doc_line(start_line),
            container,
        });
        self.symbols.len() - 1
    }

    fn run(&mut self) {
        while self.i < self.toks.len() {
            if self.is_punct(0, "}") {
                let line = self.toks[self.i].line;
                self.i += 1;
                self.close_frame(line);
                continue;
            }
            if self.is_punct(0, ";") {
                self.i += 1;
                continue;
            }
            let start = self.i;
            let ok = match self.stack.last().cloned() {
                None => self.top_statement(),
                Some(Frame::Message { mi, .. }) => self.message_statement(mi, None),
                Some(Frame::Oneof { mi, name }) => self.message_statement(mi, Some(name)),
                Some(Frame::Enum { ei, .. }) => self.enum_statement(ei),
                Some(Frame::Service { si, .. }) => self.service_statement(si),
            };
            if !ok || self.i == start {
                self.i = start;
                self.skip_statement();
            }
        }
        let last = self.last_line();
        while !self.stack.is_empty() {
            self.close_frame(last);
        }
    }

    /// Pops the innermost block, recording `line` as its end.
    fn close_frame(&mut self, line: u32) {
        match self.stack.pop() {
            Some(Frame::Message { mi, sym }) => {
                self.file.messages[mi].end_line = line;
                self.symbols[sym].end_line = line;
            }
            Some(Frame::Enum { ei, sym }) => {
                self.file.enums[ei].end_line = line;
                self.symbols[sym].end_line = line;
            }
            Some(Frame::Service { si, sym }) => {
                self.file.services[si].end_line = line;
                self.symbols[sym].end_line = line;
            }
            Some(Frame::Oneof { .. }) | None => {}
        }
    }

    /// Skips one unrecognised statement: up to and including the next `;`, or a balanced
    /// `{ … }` block, stopping before a `}` that closes the enclosing block or before the head
    /// of a declaration (`message X {`, `rpc X (`), so one bad line loses nothing after it.
    /// Always advances.
    fn skip_statement(&mut self) {
        let n = self.toks.len();
        let begin = self.i;
        while self.i < n {
            let t = self.toks[self.i];
            if self.i > begin && self.at_declaration_head() {
                return;
            }
            if t.kind == Kind::Punct {
                match t.text {
                    ";" => {
                        self.i += 1;
                        return;
                    }
                    "}" if self.i > begin => return,
                    "{" => {
                        self.skip_block();
                        return;
                    }
                    _ => {}
                }
            }
            self.i += 1;
        }
    }

    /// True when the cursor is on `message|enum|service|oneof|extend Name {` or `rpc Name (`.
    fn at_declaration_head(&self) -> bool {
        let Some(t) = self.ident(0) else {
            return false;
        };
        match t.text {
            "message" | "enum" | "service" | "oneof" | "extend" => {
                self.ident(1).is_some() && self.is_punct(2, "{")
            }
            "rpc" => self.ident(1).is_some() && self.is_punct(2, "("),
            _ => false,
        }
    }

    /// With the cursor on `{`, moves past the matching `}` (or to the end of input) and returns
    /// the line of the closing brace.
    fn skip_block(&mut self) -> u32 {
        self.skip_group("{", "}", &[])
            .unwrap_or_else(|| self.last_line())
    }

    /// Skips a `[ … ]` option list if the cursor is on `[` (brackets balanced, stops at `;`).
    fn skip_brackets(&mut self) {
        if self.is_punct(0, "[") {
            self.skip_group("[", "]", &[";", "}"]);
        }
    }

    /// Moves from the cursor past the `close` that balances the `open`s before it, and returns
    /// that closer's line; stops on any of `stops` outside the pair, or at the end of input,
    /// with `None`.
    fn skip_group(&mut self, open: &str, close: &str, stops: &[&str]) -> Option<u32> {
        let mut depth = 0usize;
        while let Some(t) = self.tok(0) {
            if t.kind == Kind::Punct {
                if t.text == open {
                    depth += 1;
                } else if t.text == close {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        self.i += 1;
                        return Some(t.line);
                    }
                } else if stops.contains(&t.text) {
                    return None;
                }
            }
            self.i += 1;
        }
        None
    }

    /// Consumes a `;` if present (a missing one is tolerated).
    fn end_statement(&mut self) {
        if self.is_punct(0, ";") {
            self.i += 1;
        }
    }

    /// `syntax`, `edition`, `package`, `import`, `option`, `message`, `enum`, `service`,
    /// `extend` at file level. Returns false to have the statement skipped.
    fn top_statement(&mut self) -> bool {
        let Some(t) = self.ident(0) else {
            return false;
        };
        match t.text {
            "syntax" | "edition" => {
                if !self.is_punct(1, "=") {
                    return false;
                }
                let Some(v) = self.tok(2).filter(|t| t.kind == Kind::Str) else {
                    return false;
                };
                self.file.syntax = Some(if t.text == "edition" {
                    format!("editions {}", v.text)
                } else {
                    v.text.to_string()
                });
                self.i += 3;
                self.end_statement();
                true
            }
            "package" => {
                let Some(name) = self.ident(1) else {
                    return false;
                };
                self.file.package = Some(name.text.to_string());
                self.i += 2;
                self.end_statement();
                true
            }
            "import" => {
                let mut k = 1;
                if self.is_word(1, "public") || self.is_word(1, "weak") {
                    k = 2;
                }
                let Some(s) = self.tok(k).filter(|t| t.kind == Kind::Str) else {
                    return false;
                };
                self.file.imports.push(s.text.to_string());
                self.imports.push(Import {
                    reexport: k == 2 && self.is_word(1, "public"),
                    ..Import::whole_module(s.text.to_string(), None, t.line)
                });
                self.i += k + 1;
                self.end_statement();
                true
            }
            "option" => {
                if let Some(opt) = self.option() {
                    self.file.options.push(opt);
                }
                true
            }
            "message" | "enum" if self.is_punct(2, "{") => self.open_decl(t.text, None),
            "service" if self.is_punct(2, "{") => self.open_service(),
            _ => false,
        }
    }

    /// Parses `option name = value;` with the cursor on `option`. The value is the string
    /// content for string literals, otherwise the source text as written.
    fn option(&mut self) -> Option<(String, String)> {
        self.i += 1;
        let mut name = String::new();
        while let Some(t) = self.tok(0) {
            if t.kind == Kind::Punct && matches!(t.text, "=" | ";" | "{" | "}") {
                break;
            }
            name.push_str(t.text);
            self.i += 1;
        }
        if !self.is_punct(0, "=") {
            return None;
        }
        self.i += 1;
        let first = self.i;
        let mut depth = 0usize;
        while let Some(t) = self.tok(0) {
            if t.kind == Kind::Punct {
                match t.text {
                    "{" => depth += 1,
                    "}" if depth == 0 => break,
                    "}" => depth -= 1,
                    ";" if depth == 0 => break,
                    _ => {}
                }
            }
            self.i += 1;
        }
        let value_toks = &self.toks[first..self.i];
        self.end_statement();
        let value = if !value_toks.is_empty() && value_toks.iter().all(|t| t.kind == Kind::Str) {
            value_toks.iter().map(|t| t.text).collect::<String>()
        } else {
            match (value_toks.first(), value_toks.last()) {
                (Some(a), Some(b)) => self.src[a.start..b.end].trim().to_string(),
                _ => String::new(),
            }
        };
        Some((name, value))
    }

    /// Opens a `message Name {` or `enum Name {` (cursor on the keyword), nested under
    /// `parent` (a message index) when given.
    fn open_decl(&mut self, keyword: &str, parent: Option<usize>) -> bool {
        let (Some(kw), Some(name)) = (self.tok(0), self.ident(1)) else {
            return false;
        };
        if self.stack.len() >= MAX_NESTING {
            self.i += 2;
            self.skip_block();
            return true;
        }
        let container = parent.map(|mi| self.file.messages[mi].name.clone());
        let full = match &container {
            Some(p) => format!("{p}.{}", name.text),
            None => name.text.to_string(),
        };
        self.i += 3;
        if keyword == "message" {
            self.open_message(full, name.line, kw.line, container);
        } else {
            let sym = self.push_symbol(
                full.clone(),
                SymbolKind::Enum,
                name.line,
                kw.line,
                container,
            );
            self.file.enums.push(ProtoEnum {
                name: full,
                line: name.line,
                end_line: name.line,
                values: Vec::new(),
                reserved_numbers: Vec::new(),
                reserved_names: Vec::new(),
            });
            let ei = self.file.enums.len() - 1;
            self.stack.push(Frame::Enum { ei, sym });
        }
        true
    }

    fn open_message(
        &mut self,
        full: String,
        line: u32,
        start_line: u32,
        container: Option<String>,
    ) {
        let sym = self.push_symbol(
            full.clone(),
            SymbolKind::Message,
            line,
            start_line,
            container,
        );
        self.file.messages.push(ProtoMessage {
            name: full,
            line,
            end_line: line,
            fields: Vec::new(),
            reserved_numbers: Vec::new(),
            reserved_names: Vec::new(),
        });
        let mi = self.file.messages.len() - 1;
        self.stack.push(Frame::Message { mi, sym });
    }

    fn open_service(&mut self) -> bool {
        let (Some(kw), Some(name)) = (self.tok(0), self.ident(1)) else {
            return false;
        };
        self.i += 3;
        let sym = self.push_symbol(
            name.text.to_string(),
            SymbolKind::Service,
            name.line,
            kw.line,
            None,
        );
        self.file.services.push(ProtoService {
            name: name.text.to_string(),
            line: name.line,
            end_line: name.line,
            rpcs: Vec::new(),
        });
        let si = self.file.services.len() - 1;
        self.stack.push(Frame::Service { si, sym });
        true
    }

    /// One statement inside a message (or a `oneof` of message `mi` when `oneof` is set).
    fn message_statement(&mut self, mi: usize, oneof: Option<String>) -> bool {
        let Some(t) = self.ident(0) else {
            return false;
        };
        let opens_block = self.is_punct(2, "{");
        match t.text {
            // A `service` here means the message was never closed: recover at file level.
            "service" if opens_block => {
                let line = self.toks[self.i.saturating_sub(1)].line;
                while !self.stack.is_empty() {
                    self.close_frame(line);
                }
                self.open_service()
            }
            "message" | "enum" if opens_block && oneof.is_none() => {
                self.open_decl(t.text, Some(mi))
            }
            "oneof" if opens_block && oneof.is_none() => {
                if self.stack.len() >= MAX_NESTING {
                    self.i += 2;
                    self.skip_block();
                    return true;
                }
                let name = self.toks[self.i + 1].text.to_string();
                self.i += 3;
                self.stack.push(Frame::Oneof { mi, name });
                true
            }
            "option" | "extensions" | "extend" => false,
            "reserved" => {
                self.i += 1;
                let (nums, names) = self.reserved(i64::from(MAX_FIELD_NUMBER));
                let m = &mut self.file.messages[mi];
                m.reserved_numbers.extend(nums);
                m.reserved_names.extend(names);
                true
            }
            _ => self.field(mi, oneof),
        }
    }

    /// A field: `[label] type name = number [options];`, `map<K, V> name = number;`, or a
    /// proto2 `[label] group Name = number { … }`.
    fn field(&mut self, mi: usize, oneof: Option<String>) -> bool {
        let start_line = self.toks[self.i].line;
        let mut label = FieldLabel::Singular;
        if let Some(t) = self.ident(0) {
            let l = match t.text {
                "optional" => Some(FieldLabel::Optional),
                "repeated" => Some(FieldLabel::Repeated),
                "required" => Some(FieldLabel::Required),
                _ => None,
            };
            // `optional = 1;` would be a field named like a label with an implicit type: no.
            if let Some(l) = l
                && self.ident(1).is_some()
                && !self.is_punct(2, "=")
            {
                label = l;
                self.i += 1;
            }
        }
        let type_name;
        if self.is_word(0, "map") && self.is_punct(1, "<") {
            let (Some(k), Some(v)) = (self.ident(2), self.ident(4)) else {
                return false;
            };
            if !self.is_punct(3, ",") || !self.is_punct(5, ">") {
                return false;
            }
            type_name = format!("map<{},{}>", k.text, v.text);
            label = FieldLabel::Repeated;
            self.i += 6;
        } else if self.is_word(0, "group") && self.ident(1).is_some() && self.is_punct(2, "=") {
            let name = self.toks[self.i + 1];
            let Some(num) = self.tok(3).and_then(|t| parse_int(t.text)) else {
                return false;
            };
            self.i += 4;
            self.skip_brackets();
            if !self.is_punct(0, "{") {
                return false;
            }
            if self.stack.len() >= MAX_NESTING {
                self.skip_block();
                return true;
            }
            self.i += 1;
            let parent = self.file.messages[mi].name.clone();
            if let Ok(number) = u32::try_from(num) {
                self.file.messages[mi].fields.push(ProtoField {
                    name: name.text.to_ascii_lowercase(),
                    number,
                    type_name: name.text.to_string(),
                    label,
                    oneof,
                    line: name.line,
                });
            }
            let full = format!("{parent}.{}", name.text);
            self.open_message(full, name.line, start_line, Some(parent));
            return true;
        } else {
            let Some(t) = self.ident(0) else {
                return false;
            };
            type_name = t.text.to_string();
            self.i += 1;
        }
        let Some(name) = self.ident(0) else {
            return false;
        };
        if !self.is_punct(1, "=") {
            return false;
        }
        let Some(number) = self
            .tok(2)
            .filter(|t| t.kind == Kind::Num)
            .and_then(|t| parse_int(t.text))
            .and_then(|n| u32::try_from(n).ok())
        else {
            return false;
        };
        self.i += 3;
        self.skip_brackets();
        self.end_statement();
        self.file.messages[mi].fields.push(ProtoField {
            name: name.text.to_string(),
            number,
            type_name,
            label,
            oneof,
            line: name.line,
        });
        true
    }

    /// Parses the body of `reserved …;` (cursor after the keyword): numbers, `a to b`,
    /// `a to max`, negative numbers, quoted names and editions-style bare names. The ranges
    /// come as `T` (a field's or an enum value's number); one `T` cannot hold is left out.
    fn reserved<T: TryFrom<i64>>(&mut self, max: i64) -> (Vec<(T, T)>, Vec<String>) {
        let mut nums = Vec::new();
        let mut names = Vec::new();
        while let Some(t) = self.tok(0) {
            match t.kind {
                Kind::Punct if t.text == ";" => {
                    self.i += 1;
                    break;
                }
                Kind::Punct if t.text == "}" => break,
                Kind::Punct if t.text == "," => self.i += 1,
                Kind::Str | Kind::Ident => {
                    names.push(t.text.to_string());
                    self.i += 1;
                }
                Kind::Num | Kind::Punct => {
                    let Some(lo) = self.signed_int() else {
                        self.skip_statement();
                        break;
                    };
                    let mut hi = lo;
                    if self.is_word(0, "to") {
                        self.i += 1;
                        if self.is_word(0, "max") {
                            self.i += 1;
                            hi = max;
                        } else if let Some(h) = self.signed_int() {
                            hi = h;
                        }
                    }
                    if let (Ok(lo), Ok(hi)) = (T::try_from(lo), T::try_from(hi)) {
                        nums.push((lo, hi));
                    }
                }
            }
        }
        (nums, names)
    }

    /// Reads `[-]number` at the cursor.
    fn signed_int(&mut self) -> Option<i64> {
        let neg = self.is_punct(0, "-");
        let k = usize::from(neg);
        let t = self.tok(k).filter(|t| t.kind == Kind::Num)?;
        let v = parse_int(t.text)?;
        self.i += k + 1;
        Some(if neg { -v } else { v })
    }

    /// One statement inside an enum: `NAME = [-]number [options];`, `option …;`, `reserved …;`.
    fn enum_statement(&mut self, ei: usize) -> bool {
        let Some(t) = self.ident(0) else {
            return false;
        };
        match t.text {
            "option" => false,
            "reserved" if !self.is_punct(1, "=") => {
                self.i += 1;
                let (nums, names) = self.reserved(i64::from(i32::MAX));
                let e = &mut self.file.enums[ei];
                e.reserved_numbers.extend(nums);
                e.reserved_names.extend(names);
                true
            }
            _ => {
                if !self.is_punct(1, "=") {
                    return false;
                }
                self.i += 2;
                let Some(v) = self.signed_int().and_then(|v| i32::try_from(v).ok()) else {
                    return false;
                };
                self.skip_brackets();
                self.end_statement();
                let container = self.file.enums[ei].name.clone();
                self.push_symbol(
                    t.text.to_string(),
                    SymbolKind::EnumValue,
                    t.line,
                    t.line,
                    Some(container),
                );
                self.file.enums[ei].values.push(ProtoEnumValue {
                    name: t.text.to_string(),
                    number: v,
                    line: t.line,
                });
                true
            }
        }
    }

    /// One statement inside a service: `rpc Name (stream? Req) returns (stream? Res)` ending in
    /// `;` or an options block `{ … }`.
    fn service_statement(&mut self, si: usize) -> bool {
        let Some(t) = self.ident(0) else {
            return false;
        };
        if matches!(t.text, "message" | "enum" | "service") && self.is_punct(2, "{") {
            // The service was never closed: recover at file level.
            let line = self.toks[self.i.saturating_sub(1)].line;
            while !self.stack.is_empty() {
                self.close_frame(line);
            }
            return if t.text == "service" {
                self.open_service()
            } else {
                self.open_decl(t.text, None)
            };
        }
        if t.text != "rpc" {
            return false;
        }
        let Some(name) = self.ident(1) else {
            return false;
        };
        self.i += 2;
        let Some((request, client_streaming)) = self.rpc_type() else {
            return false;
        };
        if !self.is_word(0, "returns") {
            return false;
        }
        self.i += 1;
        let Some((response, server_streaming)) = self.rpc_type() else {
            return false;
        };
        let end_line = if self.is_punct(0, "{") {
            self.skip_block()
        } else {
            let l = self.tok(0).map_or(name.line, |t| t.line);
            if self.is_punct(0, ";") {
                self.i += 1;
                l
            } else {
                name.line
            }
        };
        let service = self.file.services[si].name.clone();
        let sym = self.push_symbol(
            format!("{service}.{}", name.text),
            SymbolKind::Rpc,
            name.line,
            t.line,
            Some(service),
        );
        self.symbols[sym].end_line = end_line;
        self.file.services[si].rpcs.push(ProtoRpc {
            name: name.text.to_string(),
            request,
            response,
            client_streaming,
            server_streaming,
            line: name.line,
        });
        true
    }

    /// `( [stream] Type )` at the cursor.
    fn rpc_type(&mut self) -> Option<(String, bool)> {
        if !self.is_punct(0, "(") {
            return None;
        }
        let (stream, k) = if self.is_word(1, "stream") && self.ident(2).is_some() {
            (true, 2)
        } else {
            (false, 1)
        };
        let ty = self.ident(k)?;
        if !self.is_punct(k + 1, ")") {
            return None;
        }
        self.i += k + 2;
        Some((ty.text.to_string(), stream))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::lang::test_support::extract_each;

    #[test]
    fn old_mac_line_ends_number_lines_like_lf_and_crlf() {
        // `\r`, `\r\n` and `\n` files give the same lines: before, a `\r`-only file was one
        // line and every fact sat on line 1 (and a `//` comment swallowed the rest).
        let lf = "syntax = \"proto3\";\npackage a.v1;\n// note\nmessage M {\n  string id = 1; // id\n  int64 at = 2;\n}\nservice S {\n  rpc Get(M) returns (M);\n}\n";
        let lines = |text: &str| {
            let f = extract("a.proto", text);
            let p = f.proto.expect("proto");
            let fields: Vec<(String, u32, u32)> = p.messages[0]
                .fields
                .iter()
                .map(|x| (x.name.clone(), x.number, x.line))
                .collect();
            let symbols: Vec<(String, u32)> =
                f.symbols.iter().map(|s| (s.name.clone(), s.line)).collect();
            (fields, symbols)
        };
        let want = lines(lf);
        assert_eq!(
            want.0,
            vec![("id".to_string(), 1, 5), ("at".to_string(), 2, 6)]
        );
        assert_eq!(lines(&lf.replace('\n', "\r")), want);
        assert_eq!(lines(&lf.replace('\n', "\r\n")), want);
    }

    const FULL: &str = r#"// Orders API.
syntax = "proto3";

package acme.orders.v1;

import "google/protobuf/timestamp.proto";
import public "acme/common/money.proto";
import weak "acme/legacy.proto";

option go_package = "github.com/acme/orders/gen/ordersv1";
option java_multiple_files = true;
option (acme.api) = { visibility: "public" };

/* The order service.
 * Handles orders. */
service OrderService {
  // Creates an order.
  rpc CreateOrder (CreateOrderRequest) returns (Order);
  rpc Watch (stream WatchRequest) returns (stream .acme.orders.v1.Order) {
    option (google.api.http) = { get: "/v1/orders/{id}" };
  }
  rpc Upload(stream Chunk) returns (Order) {}
}

// An order.
// Second line.
message Order {
  reserved 2, 9 to 11, 20 to max;
  reserved "legacy", "old_name";
  string id = 1 [deprecated = true, json_name = "orderId"];
  repeated Item items = 3;
  optional string note = 4; // trailing } { "
  map<string, int64> counts = 5;
  .acme.common.Money total = 6;
  google.protobuf.Timestamp created_at = 7;
  oneof payment {
    string card = 12;
    Voucher voucher = 13 [(acme.v) = "x;y"];
  }

  message Item {
    string sku = 1;
    int32 quantity = 0x2;
    enum Kind {
      KIND_UNSPECIFIED = 0;
      KIND_BOOK = 1;
    }
  }

  enum Status {
    option allow_alias = true;
    reserved -5 to -1, 100 to max;
    reserved "GONE";
    STATUS_UNSPECIFIED = 0;
    STATUS_NEW = 1;
    STATUS_FRESH = 1 [deprecated = true];
    STATUS_NEG = -2;
  }
}

extend google.protobuf.FieldOptions {
  string acme_tag = 50001;
}

message Legacy {
  required int32 a = 1;
  optional group Result = 2 {
    required string url = 3;
  }
  extensions 100 to 199;
  reserved a_b;
}
"#;

    fn msg<'f>(f: &'f ProtoFile, name: &str) -> &'f ProtoMessage {
        f.messages.iter().find(|m| m.name == name).expect(name)
    }

    #[test]
    fn full_file_model() {
        let facts = extract("a.proto", FULL);
        let f = facts.proto.as_ref().unwrap();
        assert_eq!(f.syntax.as_deref(), Some("proto3"));
        assert_eq!(facts.package.as_deref(), Some("acme.orders.v1"));
        assert_eq!(
            f.imports,
            vec![
                "google/protobuf/timestamp.proto",
                "acme/common/money.proto",
                "acme/legacy.proto"
            ]
        );
        assert!(facts.imports[1].reexport && !facts.imports[2].reexport);
        assert_eq!(facts.imports[0].line, 6);
        assert_eq!(
            f.options,
            vec![
                (
                    "go_package".to_string(),
                    "github.com/acme/orders/gen/ordersv1".to_string()
                ),
                ("java_multiple_files".to_string(), "true".to_string()),
                (
                    "(acme.api)".to_string(),
                    "{ visibility: \"public\" }".to_string()
                ),
            ]
        );

        assert_eq!(f.services.len(), 1);
        let s = &f.services[0];
        assert_eq!(
            (s.name.as_str(), s.line, s.end_line),
            ("OrderService", 16, 23)
        );
        let r: Vec<_> = s
            .rpcs
            .iter()
            .map(|r| {
                (
                    r.name.as_str(),
                    r.request.as_str(),
                    r.response.as_str(),
                    r.client_streaming,
                    r.server_streaming,
                    r.line,
                )
            })
            .collect();
        assert_eq!(
            r,
            vec![
                (
                    "CreateOrder",
                    "CreateOrderRequest",
                    "Order",
                    false,
                    false,
                    18
                ),
                (
                    "Watch",
                    "WatchRequest",
                    ".acme.orders.v1.Order",
                    true,
                    true,
                    19
                ),
                ("Upload", "Chunk", "Order", true, false, 22),
            ]
        );

        let o = msg(f, "Order");
        assert_eq!((o.line, o.end_line), (27, 59));
        assert_eq!(
            o.reserved_numbers,
            vec![(2, 2), (9, 11), (20, MAX_FIELD_NUMBER)]
        );
        assert_eq!(o.reserved_names, vec!["legacy", "old_name"]);
        let fields: Vec<_> = o
            .fields
            .iter()
            .map(|x| {
                (
                    x.name.as_str(),
                    x.number,
                    x.type_name.as_str(),
                    x.label,
                    x.oneof.as_deref(),
                )
            })
            .collect();
        use FieldLabel::*;
        assert_eq!(
            fields,
            vec![
                ("id", 1, "string", Singular, None),
                ("items", 3, "Item", Repeated, None),
                ("note", 4, "string", Optional, None),
                ("counts", 5, "map<string,int64>", Repeated, None),
                ("total", 6, ".acme.common.Money", Singular, None),
                ("created_at", 7, "google.protobuf.Timestamp", Singular, None),
                ("card", 12, "string", Singular, Some("payment")),
                ("voucher", 13, "Voucher", Singular, Some("payment")),
            ]
        );
        assert_eq!(o.fields[0].line, 30);

        let item = msg(f, "Order.Item");
        assert_eq!(item.fields[1].number, 2);
        assert_eq!((item.line, item.end_line), (41, 48));

        let kind = f
            .enums
            .iter()
            .find(|e| e.name == "Order.Item.Kind")
            .unwrap();
        assert_eq!(kind.values.len(), 2);
        let st = f.enums.iter().find(|e| e.name == "Order.Status").unwrap();
        let vals: Vec<_> = st
            .values
            .iter()
            .map(|v| (v.name.as_str(), v.number))
            .collect();
        assert_eq!(
            vals,
            vec![
                ("STATUS_UNSPECIFIED", 0),
                ("STATUS_NEW", 1),
                ("STATUS_FRESH", 1),
                ("STATUS_NEG", -2)
            ]
        );
        assert_eq!(st.reserved_numbers, vec![(-5, -1), (100, i32::MAX)]);
        assert_eq!(st.reserved_names, vec!["GONE"]);

        // extend is not a message; its field does not leak anywhere.
        assert!(
            f.messages
                .iter()
                .all(|m| m.fields.iter().all(|x| x.name != "acme_tag"))
        );

        let legacy = msg(f, "Legacy");
        assert_eq!(legacy.fields[0].label, Required);
        assert_eq!(
            (
                legacy.fields[1].name.as_str(),
                legacy.fields[1].type_name.as_str()
            ),
            ("result", "Result")
        );
        assert_eq!(legacy.reserved_names, vec!["a_b"]);
        assert_eq!(msg(f, "Legacy.Result").fields[0].number, 3);
        assert_eq!(f.messages.len(), 4);
    }

    #[test]
    fn full_file_symbols() {
        let facts = extract("a.proto", FULL);
        let find = |name: &str| facts.symbols.iter().find(|s| s.name == name).expect(name);
        let svc = find("OrderService");
        assert_eq!(svc.kind, SymbolKind::Service);
        assert_eq!((svc.line, svc.end_line, svc.doc_line), (16, 23, Some(14)));
        let rpc = find("OrderService.CreateOrder");
        assert_eq!(rpc.kind, SymbolKind::Rpc);
        assert_eq!(rpc.container.as_deref(), Some("OrderService"));
        assert_eq!((rpc.line, rpc.end_line, rpc.doc_line), (18, 18, Some(17)));
        let watch = find("OrderService.Watch");
        assert_eq!((watch.line, watch.end_line, watch.doc_line), (19, 21, None));
        let order = find("Order");
        assert_eq!(order.kind, SymbolKind::Message);
        assert_eq!(order.doc_line, Some(25));
        let inner = find("Order.Item");
        assert_eq!(inner.container.as_deref(), Some("Order"));
        assert_eq!(find("Order.Status").kind, SymbolKind::Enum);
        let v = find("STATUS_NEW");
        assert_eq!(v.kind, SymbolKind::EnumValue);
        assert_eq!(v.container.as_deref(), Some("Order.Status"));
        assert_eq!(find("Legacy.Result").kind, SymbolKind::Message);
        // The file's first comment is not attached to `syntax`, and nothing else is a symbol.
        assert_eq!(
            facts
                .symbols
                .iter()
                .filter(|s| s.kind == SymbolKind::EnumValue)
                .count(),
            6
        );
    }

    #[test]
    fn comments_and_strings_do_not_confuse() {
        let src = "message A {\n  // message Fake { int32 x = 9; }\n  /* } */ string s = 1 [default = \"}; message B {\"];\n  string t = 2; /* unterminated ";
        let facts = extract("x.proto", src);
        let f = facts.proto.unwrap();
        assert_eq!(f.messages.len(), 1);
        assert_eq!(f.messages[0].fields.len(), 2);
        assert_eq!(f.messages[0].end_line, 4);
    }

    #[test]
    fn editions_and_proto2() {
        let f = extract(
            "x.proto",
            "edition = \"2023\";\nmessage M { int32 a = 1; reserved b, c; }",
        )
        .proto
        .unwrap();
        assert_eq!(f.syntax.as_deref(), Some("editions 2023"));
        assert_eq!(f.messages[0].reserved_names, vec!["b", "c"]);
    }

    #[test]
    fn malformed_input_gives_partial_results() {
        // Missing closing brace of the message, then a service.
        let src = "syntax = \"proto3\";\nmessage A {\n  string a = 1;\n  int32 = ;\n  junk junk junk\n  string b = 2;\nservice S {\n  rpc M (A) returns (A);\n";
        let facts = extract("x.proto", src);
        let f = facts.proto.unwrap();
        let a = &f.messages[0];
        assert_eq!(a.name, "A");
        assert!(a.fields.iter().any(|x| x.name == "a"));
        assert_eq!(f.services.len(), 1);
        assert_eq!(f.services[0].rpcs.len(), 1);
        assert_eq!(f.services[0].end_line, 8);

        // Service never closed, then a message.
        let f = extract(
            "x.proto",
            "service S { rpc M (A) returns (B);\nmessage A { int32 x = 1; }",
        )
        .proto
        .unwrap();
        assert_eq!(f.services[0].end_line, 1);
        assert_eq!(f.messages[0].fields.len(), 1);

        // Stray braces, unterminated strings, binary junk.
        extract_each(
            extract,
            "x.proto",
            &[
                "}}}} message { = ; }\n\"unterminated\nmessage X { int32 y = 1; }",
                "\u{0}\u{1}\u{fffd}éé{{{[[[((( rpc ) returns",
                "option = ; option x = ; import ; package ; syntax = 3;",
                "message M { map<string, > m = 1; map<a,b> ok = 2; int32 big = 99999999999; }",
                "enum E { A = ; B = -x; C = 3 }",
                "service S { rpc (A) returns (B); rpc X (stream) returns (B); rpc Y (A) returns",
                "/* never closed",
                "\"",
                "",
            ],
        );
        let f = extract(
            "x.proto",
            "}}}} message { = ; }\n\"unterminated\nmessage X { int32 y = 1; }",
        )
        .proto
        .unwrap();
        assert_eq!(f.messages[0].name, "X");
        let f = extract(
            "x.proto",
            "message M { map<string, > m = 1; map<a,b> ok = 2; int32 big = 99999999999; }",
        )
        .proto
        .unwrap();
        assert_eq!(f.messages[0].fields.len(), 1);
        assert_eq!(f.messages[0].fields[0].type_name, "map<a,b>");
        let f = extract("x.proto", "enum E { A = ; B = -x; C = 3 }")
            .proto
            .unwrap();
        assert_eq!(f.enums[0].values.len(), 1);
        assert_eq!(f.enums[0].values[0].name, "C");
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        let mut src = String::new();
        for i in 0..10_000 {
            src.push_str(&format!("message M{i} {{\n"));
        }
        src.push_str("int32 x = 1;\n");
        let facts = extract("x.proto", &src);
        let f = facts.proto.unwrap();
        assert_eq!(f.messages.len(), MAX_NESTING);
        let mut ok = "message A { message B { int32 x = 1; } int32 y = 2; ".to_string();
        ok.push_str("oneof o { int32 z = 3; } }");
        let f = extract("x.proto", &ok).proto.unwrap();
        assert_eq!(f.messages[0].fields.len(), 2);
        let braces = "{".repeat(10_000) + &"[".repeat(10_000);
        let _ = extract("x.proto", &braces);
        let long = format!("message A {{ string {} = 1; }}", "x".repeat(1 << 20));
        assert_eq!(
            extract("x.proto", &long).proto.unwrap().messages[0]
                .fields
                .len(),
            1
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_int("0x1F"), Some(31));
        assert_eq!(parse_int("017"), Some(15));
        assert_eq!(parse_int("0"), Some(0));
        assert_eq!(parse_int("1.5"), None);
        assert_eq!(parse_int("0x"), None);
    }
}
