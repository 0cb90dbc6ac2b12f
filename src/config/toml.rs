//! A small, strict TOML reader for our configuration file; values keep their line numbers.
//!
//! We read TOML 1.0 minus dates and times: comments, bare/quoted/dotted keys, `[table]`,
//! `[[array.of.tables]]`, all four string forms, integers (decimal, `0x`, `0o`, `0b`), floats,
//! booleans, arrays and inline tables. Anything the standard forbids (duplicate keys, a table
//! defined twice, extending an inline table, …) is an error with the line it happened on, so the
//! typed layer in [`super`] can point the user at the exact spot. We wrote our own instead of
//! pulling in the `toml` crate because the config needs only this much and binary size matters.

use std::fmt;

/// A parsed TOML value. Tables and arrays hold [`Item`]s so every nested value keeps its line.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Any of the four string forms, escapes resolved.
    String(String),
    /// A 64-bit signed integer.
    Integer(i64),
    /// A 64-bit float (incl. `inf` and `nan`).
    Float(f64),
    /// `true` or `false`.
    Boolean(bool),
    /// A static array or an array of tables (`[[x]]`).
    Array(Vec<Item>),
    /// A table: a `[header]` section, a dotted-key table or an inline table.
    Table(Table),
}

impl Value {
    /// The value's type with an article, for error messages ("expected a string, found an array").
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::String(_) => "a string",
            Value::Integer(_) => "an integer",
            Value::Float(_) => "a float",
            Value::Boolean(_) => "a boolean",
            Value::Array(_) => "an array",
            Value::Table(_) => "a table",
        }
    }

    #[cfg(test)]
    /// The string, when this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    #[cfg(test)]
    /// The table, when this is a table.
    pub fn as_table(&self) -> Option<&Table> {
        match self {
            Value::Table(t) => Some(t),
            _ => None,
        }
    }

    #[cfg(test)]
    /// The elements, when this is an array.
    pub fn as_array(&self) -> Option<&[Item]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
}

/// A value together with the 1-based line where its key (or, for array elements, the value
/// itself) appears, so configuration errors can name the line to fix.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// The value.
    pub value: Value,
    /// 1-based line of the key, the `[header]`, or the array element.
    pub line: u32,
}

/// How a table came into existence; decides whether it may still be extended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Kind {
    /// Created as the parent of a `[a.b]` header; a later `[a]` may still define it.
    #[default]
    Implicit,
    /// Defined by a `[header]` (or the root, or an `[[array]]` element).
    Header,
    /// Created by a dotted key (`a.b = 1`); only more dotted keys or sub-headers may extend it.
    Dotted,
    /// An inline table `{ … }`: complete once written.
    Inline,
}

/// A TOML table with its entries in file order. Lookups are linear: config tables are tiny.
#[derive(Debug, Clone, Default)]
pub struct Table {
    entries: Vec<(String, Item)>,
    kind: Kind,
    /// Keys whose array was created by `[[key]]` (and may therefore be appended to).
    array_tables: Vec<String>,
}

impl PartialEq for Table {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl Table {
    /// The entry under `key`, if any.
    pub fn get(&self, key: &str) -> Option<&Item> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The entries in the order they were first written.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Item)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    #[cfg(test)]
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    #[cfg(test)]
    /// True when the table has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn with_kind(kind: Kind) -> Table {
        Table {
            kind,
            ..Table::default()
        }
    }

    fn position(&self, key: &str) -> Option<usize> {
        self.entries.iter().position(|(k, _)| k == key)
    }

    fn is_array_table(&self, key: &str) -> bool {
        self.array_tables.iter().any(|k| k == key)
    }
}

/// A syntax or structure error: the 1-based line and a message that says what to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TomlError {
    /// 1-based line of the offending text.
    pub line: u32,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for TomlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for TomlError {}

/// Parses a whole TOML document into its root table.
pub fn parse(text: &str) -> Result<Table, TomlError> {
    let mut p = Parser {
        src: text.as_bytes(),
        pos: 0,
        line: 1,
        depth: 0,
    };
    if text.starts_with('\u{feff}') {
        p.pos = 3;
    }
    let mut root = Table::with_kind(Kind::Header);
    // Path of the current section from the root; array-of-tables segments mean "last element".
    let mut current: Vec<Key> = Vec::new();
    loop {
        p.skip_ws();
        match p.peek() {
            None => break,
            Some(b'#') => p.skip_comment(),
            Some(b'\n' | b'\r') => p.newline()?,
            Some(b'[') => {
                let line = p.line;
                p.pos += 1;
                let array = p.eat(b'[');
                p.skip_ws();
                let keys = p.parse_key()?;
                p.skip_ws();
                let close = if array { "]]" } else { "]" };
                if !p.eat(b']') || (array && !p.eat(b']')) {
                    return Err(p.err(format!(
                        "expected `{close}` to close the header [{}{}",
                        if array { "[" } else { "" },
                        dotted(&keys)
                    )));
                }
                open_section(&mut root, &keys, line, array)?;
                current = keys;
                p.expect_line_end("the table header")?;
            }
            Some(_) => {
                let (keys, item) = p.parse_key_value()?;
                let table = section_mut(&mut root, &current)?;
                insert_dotted(table, &current, &keys, item)?;
                p.expect_line_end("the value")?;
            }
        }
    }
    Ok(root)
}

/// One key segment and the line it was written on.
#[derive(Debug, Clone)]
struct Key {
    name: String,
    line: u32,
}

fn dotted(keys: &[Key]) -> String {
    keys.iter()
        .map(|k| display_key(&k.name))
        .collect::<Vec<_>>()
        .join(".")
}

fn display_key(k: &str) -> String {
    if !k.is_empty() && k.bytes().all(is_bare) {
        k.to_string()
    } else {
        format!("{k:?}")
    }
}

fn is_bare(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

fn structure_err(line: u32, message: String) -> TomlError {
    TomlError { line, message }
}

/// Walks from the root to the current section (last element of every array of tables).
fn section_mut<'t>(root: &'t mut Table, path: &[Key]) -> Result<&'t mut Table, TomlError> {
    let mut t = root;
    for key in path {
        let Some(idx) = t.position(&key.name) else {
            return Err(structure_err(key.line, "internal: section vanished".into()));
        };
        t = descend(&mut t.entries[idx].1.value, key.line)?;
    }
    Ok(t)
}

/// Steps into (or creates) the table `key` on the way to a `[header]`.
fn header_child<'t>(
    t: &'t mut Table,
    key: &Key,
    header_line: u32,
    shown: &str,
) -> Result<&'t mut Table, TomlError> {
    let idx = match t.position(&key.name) {
        Some(i) => i,
        None => {
            t.entries.push((
                key.name.clone(),
                Item {
                    value: Value::Table(Table::with_kind(Kind::Implicit)),
                    line: header_line,
                },
            ));
            t.entries.len() - 1
        }
    };
    let is_array = t.is_array_table(&key.name);
    let first = t.entries[idx].1.line;
    let problem = match &t.entries[idx].1.value {
        Value::Table(child) if child.kind == Kind::Inline => Some(format!(
            "cannot extend `{shown}`: it is an inline table (line {first}) and inline tables \
             are complete once written; move its keys into a [{shown}] section instead"
        )),
        Value::Table(_) => None,
        Value::Array(_) if is_array => None,
        other => Some(format!(
            "`{shown}` is already {} (line {first}), not a table; rename one of them",
            other.type_name()
        )),
    };
    if let Some(message) = problem {
        return Err(structure_err(header_line, message));
    }
    descend(&mut t.entries[idx].1.value, header_line)
}

/// The table a section path segment stands for: the table itself, or the last element of an
/// array of tables.
fn descend(value: &mut Value, line: u32) -> Result<&mut Table, TomlError> {
    match value {
        Value::Table(child) => Ok(child),
        Value::Array(items) => match items.last_mut().map(|i| &mut i.value) {
            Some(Value::Table(child)) => Ok(child),
            _ => Err(structure_err(
                line,
                "internal: not an array of tables".into(),
            )),
        },
        _ => Err(structure_err(line, "internal: not a table".into())),
    }
}

/// Handles `[a.b.c]` and `[[a.b.c]]`.
fn open_section(root: &mut Table, keys: &[Key], line: u32, array: bool) -> Result<(), TomlError> {
    let (last, prefix) = keys
        .split_last()
        .expect("parse_key returns at least one key");
    let mut t = root;
    for (i, key) in prefix.iter().enumerate() {
        t = header_child(t, key, line, &dotted(&keys[..=i]))?;
    }
    let shown = dotted(keys);
    let name = last.name.clone();
    let Some(idx) = t.position(&name) else {
        let table = Item {
            value: Value::Table(Table::with_kind(Kind::Header)),
            line,
        };
        if array {
            t.entries.push((
                name.clone(),
                Item {
                    value: Value::Array(vec![table]),
                    line,
                },
            ));
            t.array_tables.push(name);
        } else {
            t.entries.push((name, table));
        }
        return Ok(());
    };
    let is_array = t.is_array_table(&name);
    let entry = &mut t.entries[idx].1;
    let first = entry.line;
    match (&mut entry.value, array) {
        (Value::Array(items), true) if is_array => {
            items.push(Item {
                value: Value::Table(Table::with_kind(Kind::Header)),
                line,
            });
            Ok(())
        }
        (Value::Table(child), false) if child.kind == Kind::Implicit => {
            child.kind = Kind::Header;
            entry.line = line;
            Ok(())
        }
        (Value::Table(child), false) => Err(structure_err(
            line,
            match child.kind {
                Kind::Dotted => format!(
                    "table [{shown}] was already created by dotted keys on line {first}; \
                     keep its keys in one place"
                ),
                Kind::Inline => format!(
                    "table [{shown}] was already written as an inline table on line {first}; \
                     keep its keys in one place"
                ),
                _ => format!(
                    "table [{shown}] is defined twice (first on line {first}); merge the two \
                     sections"
                ),
            },
        )),
        (Value::Array(_), false) if is_array => Err(structure_err(
            line,
            format!(
                "[{shown}] is an array of tables (first [[{shown}]] on line {first}); write \
                 [[{shown}]] to add an element"
            ),
        )),
        (other, _) => Err(structure_err(
            line,
            format!(
                "`{shown}` is already {} (line {first}); {} cannot redefine it",
                other.type_name(),
                if array {
                    "an array of tables"
                } else {
                    "a table header"
                }
            ),
        )),
    }
}

/// Inserts `a.b.c = value` into `t`, creating dotted-key tables on the way.
fn insert_dotted(
    t: &mut Table,
    section: &[Key],
    keys: &[Key],
    item: Item,
) -> Result<(), TomlError> {
    let (last, prefix) = keys
        .split_last()
        .expect("parse_key returns at least one key");
    let full = |upto: usize| {
        let mut all: Vec<Key> = section.to_vec();
        all.extend_from_slice(&keys[..upto]);
        dotted(&all)
    };
    let mut t = t;
    for (i, key) in prefix.iter().enumerate() {
        let idx = match t.position(&key.name) {
            Some(idx) => idx,
            None => {
                t.entries.push((
                    key.name.clone(),
                    Item {
                        value: Value::Table(Table::with_kind(Kind::Dotted)),
                        line: key.line,
                    },
                ));
                t.entries.len() - 1
            }
        };
        let first = t.entries[idx].1.line;
        let problem = match &t.entries[idx].1.value {
            Value::Table(child) if child.kind == Kind::Dotted => None,
            Value::Table(child) if child.kind == Kind::Inline => Some(format!(
                "`{}` is an inline table (line {first}) and cannot be extended",
                full(i + 1)
            )),
            Value::Table(_) => Some(format!(
                "table [{}] is defined by a header (line {first}); write the key inside that \
                 section instead",
                full(i + 1)
            )),
            other => Some(format!(
                "`{}` is already {} (line {first}), not a table",
                full(i + 1),
                other.type_name()
            )),
        };
        if let Some(message) = problem {
            return Err(structure_err(key.line, message));
        }
        t = descend(&mut t.entries[idx].1.value, key.line)?;
    }
    if let Some(prev) = t.get(&last.name) {
        return Err(structure_err(
            last.line,
            format!(
                "duplicate key `{}` (first defined on line {}); remove one of them",
                full(keys.len()),
                prev.line
            ),
        ));
    }
    t.entries.push((last.name.clone(), item));
    Ok(())
}

/// Marks an inline table and the dotted-key tables inside it as complete.
fn seal(t: &mut Table) {
    t.kind = Kind::Inline;
    for (_, item) in &mut t.entries {
        if let Value::Table(child) = &mut item.value {
            seal(child);
        }
    }
}

/// The deepest nesting a document may have: arrays and inline tables inside each other, plus
/// the dotted parts of the keys on the way (`a.b.c = [{x = [1]}]` is 6 levels). A real
/// `mesh-mcp.toml` needs 4; the cap keeps a hostile file (`a = [[[[…`, 200,000 deep) from
/// overflowing the stack of the parser, or later of the code that walks or drops the values.
pub const MAX_NESTING: usize = 64;

struct Parser<'a> {
    src: &'a [u8],
    pos: usize,
    line: u32,
    /// The nesting levels open at the cursor (see [`MAX_NESTING`]).
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn peek_at(&self, n: usize) -> Option<u8> {
        self.src.get(self.pos + n).copied()
    }

    fn starts_with(&self, s: &[u8]) -> bool {
        self.src[self.pos..].starts_with(s)
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn too_deep(&self) -> TomlError {
        self.err(format!(
            "values and keys nested more than {MAX_NESTING} levels deep (arrays, inline tables \
             and dotted key parts); mesh-mcp.toml never needs more than 4"
        ))
    }

    fn err(&self, message: String) -> TomlError {
        TomlError {
            line: self.line,
            // Keys and values are quoted in the message: a 100 KB key is not sent back whole.
            message: crate::protocol::echo_quoted(&message),
        }
    }

    /// Describes the byte (or character) at the cursor for "found …" messages.
    fn found(&self) -> String {
        match self.peek() {
            None => "the end of the file".into(),
            Some(b'\n' | b'\r') => "the end of the line".into(),
            Some(_) => {
                let rest = std::str::from_utf8(&self.src[self.pos..]).unwrap_or("");
                match rest.chars().next() {
                    Some(c) => format!("`{c}`"),
                    None => "an invalid byte".into(),
                }
            }
        }
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    fn skip_comment(&mut self) {
        while !matches!(self.peek(), None | Some(b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// Consumes `\n` or `\r\n`.
    fn newline(&mut self) -> Result<(), TomlError> {
        let len = if self.starts_with(b"\n") {
            1
        } else if self.starts_with(b"\r\n") {
            2
        } else {
            0
        };
        if len > 0 {
            self.pos += len;
            self.line += 1;
            Ok(())
        } else {
            Err(self.err("a carriage return must be followed by a line feed".into()))
        }
    }

    /// Skips whitespace, newlines and comments (inside arrays).
    fn skip_blank(&mut self) -> Result<(), TomlError> {
        loop {
            self.skip_ws();
            match self.peek() {
                Some(b'#') => self.skip_comment(),
                Some(b'\n' | b'\r') => self.newline()?,
                _ => return Ok(()),
            }
        }
    }

    fn expect_line_end(&mut self, after: &str) -> Result<(), TomlError> {
        self.skip_ws();
        if self.peek() == Some(b'#') {
            self.skip_comment();
        }
        match self.peek() {
            None => Ok(()),
            Some(b'\n' | b'\r') => self.newline(),
            _ => Err(self.err(format!(
                "unexpected {} after {after}; each key and each [header] needs its own line \
                 (start a comment with `#`)",
                self.found()
            ))),
        }
    }

    fn parse_key(&mut self) -> Result<Vec<Key>, TomlError> {
        let mut keys = Vec::new();
        loop {
            self.skip_ws();
            let line = self.line;
            let name = match self.peek() {
                Some(quote @ (b'"' | b'\'')) => {
                    if self.starts_with(&[quote; 3]) {
                        return Err(self.err("a key cannot be a multi-line string".into()));
                    }
                    self.one_line_string(quote)?
                }
                Some(b) if is_bare(b) => {
                    let start = self.pos;
                    while self.peek().is_some_and(is_bare) {
                        self.pos += 1;
                    }
                    String::from_utf8_lossy(&self.src[start..self.pos]).into_owned()
                }
                _ => {
                    return Err(self.err(format!(
                        "expected a key, found {}; bare keys may use A-Z a-z 0-9 _ -, \
                         anything else needs quotes",
                        self.found()
                    )));
                }
            };
            keys.push(Key { name, line });
            if self.depth + keys.len() > MAX_NESTING {
                return Err(self.too_deep());
            }
            self.skip_ws();
            if !self.eat(b'.') {
                return Ok(keys);
            }
        }
    }

    fn parse_key_value(&mut self) -> Result<(Vec<Key>, Item), TomlError> {
        let line = self.line;
        let keys = self.parse_key()?;
        self.skip_ws();
        if !self.eat(b'=') {
            return Err(self.err(format!(
                "expected `=` after the key `{}`, found {}",
                dotted(&keys),
                self.found()
            )));
        }
        self.skip_ws();
        // The key's parts are levels of their own for the value below them.
        self.depth += keys.len();
        let value = self.parse_value(&dotted(&keys));
        self.depth -= keys.len();
        Ok((
            keys,
            Item {
                value: value?,
                line,
            },
        ))
    }

    fn parse_value(&mut self, key: &str) -> Result<Value, TomlError> {
        match self.peek() {
            None | Some(b'\n' | b'\r' | b'#') => {
                Err(self.err(format!("missing value after `{key} =`")))
            }
            Some(quote @ (b'"' | b'\'')) if self.starts_with(&[quote; 3]) => {
                self.multiline_string(quote).map(Value::String)
            }
            Some(quote @ (b'"' | b'\'')) => self.one_line_string(quote).map(Value::String),
            Some(b'[' | b'{') if self.depth >= MAX_NESTING => Err(self.too_deep()),
            Some(b'[') => {
                self.depth += 1;
                let value = self.array(key);
                self.depth -= 1;
                value
            }
            Some(b'{') => {
                self.depth += 1;
                let value = self.inline_table(key);
                self.depth -= 1;
                value
            }
            Some(b) if b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'_' | b'.') => {
                let start = self.pos;
                while self
                    .peek()
                    .is_some_and(|b| b.is_ascii_alphanumeric() || b"_+-.:".contains(&b))
                {
                    self.pos += 1;
                }
                let tok = String::from_utf8_lossy(&self.src[start..self.pos]).into_owned();
                match tok.as_str() {
                    "true" => Ok(Value::Boolean(true)),
                    "false" => Ok(Value::Boolean(false)),
                    _ => parse_number(&tok).map_err(|m| self.err(m)),
                }
            }
            _ => Err(self.err(format!(
                "expected a value for `{key}`, found {}",
                self.found()
            ))),
        }
    }

    fn array(&mut self, key: &str) -> Result<Value, TomlError> {
        let start = self.line;
        self.pos += 1; // [
        let mut items = Vec::new();
        loop {
            self.skip_blank()?;
            if self.eat(b']') {
                return Ok(Value::Array(items));
            }
            if self.peek().is_none() {
                return Err(self.err(format!(
                    "unterminated array for `{key}` (opened on line {start}); close it with `]`"
                )));
            }
            let line = self.line;
            let value = self.parse_value(key)?;
            items.push(Item { value, line });
            self.skip_blank()?;
            if self.eat(b']') {
                return Ok(Value::Array(items));
            }
            if !self.eat(b',') {
                return Err(self.err(format!(
                    "expected `,` or `]` in the array for `{key}` (opened on line {start}), \
                     found {}",
                    self.found()
                )));
            }
        }
    }

    fn inline_table(&mut self, key: &str) -> Result<Value, TomlError> {
        self.pos += 1; // {
        let mut table = Table::with_kind(Kind::Inline);
        self.skip_ws();
        if self.eat(b'}') {
            return Ok(Value::Table(table));
        }
        loop {
            self.skip_ws();
            if matches!(self.peek(), Some(b'\n' | b'\r') | None) {
                return Err(self.err(format!(
                    "inline table for `{key}` must be on one line; use a [{key}] section for \
                     longer tables"
                )));
            }
            if self.peek() == Some(b'}') {
                return Err(self.err(format!(
                    "trailing comma in the inline table for `{key}`; remove the last `,`"
                )));
            }
            let (keys, item) = self.parse_key_value()?;
            insert_dotted(&mut table, &[], &keys, item)?;
            self.skip_ws();
            if self.eat(b'}') {
                seal(&mut table);
                return Ok(Value::Table(table));
            }
            if !self.eat(b',') {
                return Err(self.err(format!(
                    "expected `,` or `}}` in the inline table for `{key}`, found {}",
                    self.found()
                )));
            }
        }
    }

    /// Reads one byte of string content, checking for control characters.
    fn content_byte(&mut self, multiline: bool, out: &mut Vec<u8>) -> Result<(), TomlError> {
        let b = self.src[self.pos];
        if b == b'\n' && multiline {
            self.line += 1;
        } else if b == b'\r' && multiline && self.peek_at(1) == Some(b'\n') {
            // Normalise CRLF to LF inside strings.
            self.pos += 1;
            return Ok(());
        } else if (b < 0x20 && b != b'\t') || b == 0x7f {
            return Err(self.err(format!(
                "control character U+{b:04X} in a string; write it as an escape (\\u{b:04X})"
            )));
        }
        out.push(b);
        self.pos += 1;
        Ok(())
    }

    fn finish(&self, out: Vec<u8>) -> Result<String, TomlError> {
        String::from_utf8(out).map_err(|_| self.err("string is not valid UTF-8".into()))
    }

    /// A one-line string opened by `quote`: a basic one (`"`, escapes read) or a literal one
    /// (`'`, every byte as written). One function, so the two cannot drift apart.
    fn one_line_string(&mut self, quote: u8) -> Result<String, TomlError> {
        let basic = quote == b'"';
        let start = self.line;
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None | Some(b'\n') | Some(b'\r') => {
                    let message = if basic {
                        "unterminated string; close it with `\"` on the same line \
                         (use \"\"\"…\"\"\" for text over several lines)"
                    } else {
                        "unterminated literal string; close it with `'` on the same \
                         line (use '''…''' for text over several lines)"
                    };
                    return Err(TomlError {
                        line: start,
                        message: message.into(),
                    });
                }
                Some(q) if q == quote => {
                    self.pos += 1;
                    return self.finish(out);
                }
                Some(b'\\') if basic => self.escape(&mut out)?,
                Some(_) => self.content_byte(false, &mut out)?,
            }
        }
    }

    /// A multi-line string opened by three `quote`s: basic (`"""`, escapes and line-ending
    /// backslashes read) or literal (`'''`); a newline right after the opening is dropped.
    fn multiline_string(&mut self, quote: u8) -> Result<String, TomlError> {
        let basic = quote == b'"';
        let start = self.line;
        self.pos += 3;
        self.trim_first_newline();
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => {
                    let message = if basic {
                        "unterminated multi-line string; close it with \"\"\""
                    } else {
                        "unterminated multi-line literal string; close it with '''"
                    };
                    return Err(TomlError {
                        line: start,
                        message: message.into(),
                    });
                }
                Some(q) if q == quote && self.starts_with(&[quote; 3]) => {
                    self.close_quotes(quote, &mut out)?;
                    return self.finish(out);
                }
                Some(b'\\') if basic && self.is_line_ending_backslash() => {
                    self.pos += 1;
                    loop {
                        match self.peek() {
                            Some(b' ' | b'\t') => self.pos += 1,
                            Some(b'\n' | b'\r') => self.newline()?,
                            _ => break,
                        }
                    }
                }
                Some(b'\\') if basic => self.escape(&mut out)?,
                Some(_) => self.content_byte(true, &mut out)?,
            }
        }
    }

    fn trim_first_newline(&mut self) {
        if self.starts_with(b"\n") {
            self.pos += 1;
            self.line += 1;
        } else if self.starts_with(b"\r\n") {
            self.pos += 2;
            self.line += 1;
        }
    }

    /// At a run of 3+ quotes that ends the string: up to two extra quotes belong to the content.
    fn close_quotes(&mut self, q: u8, out: &mut Vec<u8>) -> Result<(), TomlError> {
        let mut n = 0;
        while self.peek_at(n) == Some(q) {
            n += 1;
        }
        if n > 5 {
            return Err(self.err(
                "too many quotes in a row in a multi-line string; escape some \
                                  of them"
                    .into(),
            ));
        }
        out.extend(std::iter::repeat_n(q, n - 3));
        self.pos += n;
        Ok(())
    }

    fn is_line_ending_backslash(&self) -> bool {
        let mut i = 1;
        while matches!(self.peek_at(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        matches!(self.peek_at(i), Some(b'\n' | b'\r'))
    }

    fn escape(&mut self, out: &mut Vec<u8>) -> Result<(), TomlError> {
        self.pos += 1; // backslash
        let c = match self.peek() {
            Some(b'b') => '\u{8}',
            Some(b't') => '\t',
            Some(b'n') => '\n',
            Some(b'f') => '\u{c}',
            Some(b'r') => '\r',
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(u @ (b'u' | b'U')) => {
                let len = if u == b'u' { 4 } else { 8 };
                let digits = self
                    .src
                    .get(self.pos + 1..self.pos + 1 + len)
                    .and_then(|d| std::str::from_utf8(d).ok())
                    .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()));
                let Some(digits) = digits else {
                    return Err(self.err(format!("\\{} needs exactly {len} hex digits", u as char)));
                };
                let code = u32::from_str_radix(digits, 16).unwrap_or(u32::MAX);
                let Some(c) = char::from_u32(code) else {
                    return Err(self.err(format!(
                        "\\{}{digits} is not a Unicode scalar value",
                        u as char
                    )));
                };
                self.pos += len;
                c
            }
            _ => {
                return Err(self.err(format!(
                    "unknown escape `\\{}` in a \"basic\" string; write `\\\\` for a \
                     backslash, or use a 'literal string' (single quotes) for regexes and \
                     Windows paths",
                    self.found().trim_matches('`')
                )));
            }
        };
        self.pos += 1;
        let mut buf = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        Ok(())
    }
}

/// True when every `_` sits between two digits of the given class.
fn digits_ok(s: &str, is_digit: fn(u8) -> bool) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && is_digit(b[0])
        && is_digit(b[b.len() - 1])
        && b.iter().all(|&c| is_digit(c) || c == b'_')
        && !s.contains("__")
}

fn parse_number(tok: &str) -> Result<Value, String> {
    let bytes = tok.as_bytes();
    let is_date = tok.contains(':')
        || (bytes.len() >= 5 && bytes[..4].iter().all(u8::is_ascii_digit) && bytes[4] == b'-');
    if is_date {
        return Err(format!(
            "`{tok}` looks like a date or time, which mesh-mcp config does not support; write \
             it as a quoted string"
        ));
    }
    let invalid = || {
        format!(
            "invalid value `{tok}`; strings must be quoted (\"{tok}\"), numbers look like 42, \
             -1_000, 0x1f or 3.5"
        )
    };
    let (sign, body) = match tok.as_bytes()[0] {
        b'+' | b'-' => (&tok[..1], &tok[1..]),
        _ => ("", tok),
    };
    match body {
        "inf" => {
            return Ok(Value::Float(if sign == "-" {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }));
        }
        "nan" => return Ok(Value::Float(f64::NAN)),
        _ => {}
    }
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(digits) = body.strip_prefix(prefix) {
            let class: fn(u8) -> bool = match radix {
                16 => |b: u8| b.is_ascii_hexdigit(),
                8 => |b: u8| (b'0'..=b'7').contains(&b),
                _ => |b: u8| b == b'0' || b == b'1',
            };
            if !sign.is_empty() || !digits_ok(digits, class) {
                return Err(invalid());
            }
            return i64::from_str_radix(&digits.replace('_', ""), radix)
                .map(Value::Integer)
                .map_err(|_| format!("integer `{tok}` does not fit in 64 bits"));
        }
    }
    let dec = |b: u8| b.is_ascii_digit();
    let leading_zero = |int: &str| int.len() > 1 && int.starts_with('0');
    if body.contains(['.', 'e', 'E']) {
        let (mantissa, exponent) = match body.find(['e', 'E']) {
            Some(i) => (&body[..i], Some(&body[i + 1..])),
            None => (body, None),
        };
        let (int, frac) = match mantissa.split_once('.') {
            Some((i, f)) => (i, Some(f)),
            None => (mantissa, None),
        };
        let ok = digits_ok(int, dec)
            && !leading_zero(int)
            && frac.is_none_or(|f| digits_ok(f, dec))
            && exponent.is_none_or(|e| {
                let e = e.strip_prefix(['+', '-']).unwrap_or(e);
                digits_ok(e, dec)
            });
        if !ok {
            return Err(invalid());
        }
        return format!("{sign}{}", body.replace('_', ""))
            .parse::<f64>()
            .map(Value::Float)
            .map_err(|_| invalid());
    }
    if !digits_ok(body, dec) || leading_zero(body) {
        return Err(invalid());
    }
    format!("{sign}{}", body.replace('_', ""))
        .parse::<i64>()
        .map(Value::Integer)
        .map_err(|_| format!("integer `{tok}` does not fit in 64 bits"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get<'t>(t: &'t Table, path: &str) -> &'t Item {
        let mut parts = path.split('.');
        let mut item = t.get(parts.next().unwrap()).expect(path);
        for p in parts {
            item = item.value.as_table().expect(path).get(p).expect(path);
        }
        item
    }

    fn s(t: &Table, path: &str) -> String {
        get(t, path).value.as_str().expect(path).to_string()
    }

    fn err(text: &str) -> TomlError {
        parse(text).expect_err(text)
    }

    /// Asserts that `text` fails to parse with a message containing `message`, reported on
    /// `line` when one is given.
    #[track_caller]
    fn assert_err(text: &str, line: Option<u32>, message: &str) {
        let e = err(text);
        if let Some(line) = line {
            assert_eq!(e.line, line, "{e}");
        }
        assert!(e.message.contains(message), "{e}");
    }

    #[test]
    fn comments_blank_lines_and_bare_keys() {
        let t = parse("# top\n\n  a = 1 # trailing\nb-c_D9 = true\n\t# indented\n").unwrap();
        assert_eq!(get(&t, "a").value, Value::Integer(1));
        assert_eq!(get(&t, "a").line, 3);
        assert_eq!(get(&t, "b-c_D9").value, Value::Boolean(true));
        assert_eq!(get(&t, "b-c_D9").line, 4);
        let keys: Vec<_> = t.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["a", "b-c_D9"]);
    }

    #[test]
    fn quoted_and_dotted_keys() {
        let t = parse("\"a b\" = 1\n'c.d' = 2\nx . y.\"z\" = 3\nx.w = 4\n").unwrap();
        assert_eq!(get(&t, "a b").value, Value::Integer(1));
        assert_eq!(t.get("c.d").unwrap().value, Value::Integer(2));
        let x = get(&t, "x").value.as_table().unwrap();
        assert_eq!(get(x, "y.z").value, Value::Integer(3));
        assert_eq!(get(x, "w").value, Value::Integer(4));
        assert_eq!(get(&t, "x").line, 3);
    }

    #[test]
    fn tables_and_subtables() {
        let t = parse("[a]\nk = 1\n[a.b]\nk = 2\n[ c . \"d\" ]\nk = 3\n").unwrap();
        assert_eq!(get(&t, "a.k").value, Value::Integer(1));
        assert_eq!(get(&t, "a.b.k").value, Value::Integer(2));
        assert_eq!(get(&t, "c.d.k").value, Value::Integer(3));
        assert_eq!(get(&t, "a").line, 1);
        assert_eq!(get(&t, "a.b").line, 3);
    }

    #[test]
    fn implicit_table_may_be_defined_later_once() {
        let t = parse("[a.b]\nx = 1\n[a]\ny = 2\n").unwrap();
        assert_eq!(get(&t, "a.b.x").value, Value::Integer(1));
        assert_eq!(get(&t, "a.y").value, Value::Integer(2));
        assert_eq!(get(&t, "a").line, 3);
        assert_err(
            "[a.b]\n[a]\n[a]\n",
            Some(3),
            "defined twice (first on line 2)",
        );
    }

    #[test]
    fn arrays_of_tables() {
        let text = "[[p]]\nname = \"a\"\n[p.sub]\nx = 1\n\n[[p]]\nname = \"b\"\n[[p.q]]\ny = 1\n";
        let t = parse(text).unwrap();
        let p = get(&t, "p").value.as_array().unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].line, 1);
        assert_eq!(p[1].line, 6);
        let first = p[0].value.as_table().unwrap();
        assert_eq!(s(first, "name"), "a");
        assert_eq!(get(first, "sub.x").value, Value::Integer(1));
        let second = p[1].value.as_table().unwrap();
        assert_eq!(s(second, "name"), "b");
        assert_eq!(get(second, "q").value.as_array().unwrap().len(), 1);
        assert!(second.get("sub").is_none());
    }

    #[test]
    fn array_of_tables_conflicts() {
        assert_err("[[p]]\n[p]\n", Some(2), "write [[p]]");
        assert_err("p = [1]\n[[p]]\n", Some(2), "already an array");
        let e = err("[p]\n[[p]]\n");
        assert_eq!(e.line, 2);
    }

    #[test]
    fn basic_string_escapes() {
        let t = parse(r#"s = "a\tb\nc\"d\\e\u00e9\U0001F600\b\f\r""#).unwrap();
        assert_eq!(s(&t, "s"), "a\tb\nc\"d\\e\u{e9}\u{1F600}\u{8}\u{c}\r");
        let e = err("a = 1\nr = \"outbox\\.publish\"\n");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("unknown escape `\\.`"), "{e}");
        assert!(e.message.contains("literal string"), "{e}");
        assert!(
            err(r#"s = "\uD800""#)
                .message
                .contains("not a Unicode scalar")
        );
        assert!(err(r#"s = "\u12""#).message.contains("4 hex digits"));
        assert_eq!(err("a = 1\ns = \"open\nb = 2\n").line, 2);
        assert_err("s = \"tab\tok but \u{1} not\"", None, "control character");
    }

    #[test]
    fn literal_strings() {
        let t = parse(r#"r = 'outbox\.publish\(\s*"([^"]+)"'"#).unwrap();
        assert_eq!(s(&t, "r"), r#"outbox\.publish\(\s*"([^"]+)""#);
        assert_err(
            "x = 1\n\nr = 'open\n",
            Some(3),
            "unterminated literal string",
        );
    }

    #[test]
    fn multiline_strings() {
        let text = "a = \"\"\"\nline1\n  line2 \\\n    joined\\t\"\"\"\nb = '''\nraw \\n ''quoted'''''\nc = 1\n";
        let t = parse(text).unwrap();
        assert_eq!(s(&t, "a"), "line1\n  line2 joined\t");
        assert_eq!(s(&t, "b"), "raw \\n ''quoted''");
        assert_eq!(get(&t, "c").line, 7);
        assert_eq!(
            s(&parse("q = \"\"\"say \"hi\"\"\"\"").unwrap(), "q"),
            "say \"hi\""
        );
        assert_err(
            "x = 1\ns = \"\"\"never\nclosed\n",
            Some(2),
            "unterminated multi-line",
        );
        assert_err("\"\"\"k\"\"\" = 1", None, "multi-line");
    }

    #[test]
    fn crlf_line_endings() {
        let t = parse("a = 1\r\nb = \"\"\"x\r\ny\"\"\"\r\nc = 2\r\n").unwrap();
        assert_eq!(s(&t, "b"), "x\ny");
        assert_eq!(get(&t, "c").line, 4);
        assert_err("a = 1\rb = 2", None, "carriage return");
    }

    #[test]
    fn integers() {
        let t = parse("a = 42\nb = -17\nc = +3\nd = 1_000_000\ne = 0\nf = 0xff\ng = 0o17\nh = 0b101\ni = -0\nj = 0xDEAD_beef\n").unwrap();
        let ints: Vec<_> = t.iter().map(|(_, i)| i.value.clone()).collect();
        let want = [42, -17, 3, 1_000_000, 0, 255, 15, 5, 0, 0xdead_beef];
        assert_eq!(ints, want.map(Value::Integer));
        for bad in [
            "01",
            "1__0",
            "_1",
            "1_",
            "+0x1",
            "0xg",
            "12a",
            "9223372036854775808",
        ] {
            assert!(parse(&format!("n = {bad}")).is_err(), "{bad}");
        }
        assert_eq!(
            parse("n = -9223372036854775808")
                .unwrap()
                .get("n")
                .unwrap()
                .value,
            Value::Integer(i64::MIN)
        );
        assert_err("n = 99999999999999999999", None, "64 bits");
    }

    #[test]
    fn floats() {
        let t = parse("a = 3.5\nb = -0.01\nc = 5e+22\nd = 1e06\ne = -2E-2\nf = 6.626e-34\ng = 224_617.445_991\nh = inf\ni = -inf\nj = +1.5\n").unwrap();
        let f = |k: &str| match t.get(k).unwrap().value {
            Value::Float(x) => x,
            ref v => panic!("{k}: {v:?}"),
        };
        assert_eq!(f("a"), 3.5);
        assert_eq!(f("b"), -0.01);
        assert_eq!(f("c"), 5e22);
        assert_eq!(f("d"), 1e6);
        assert_eq!(f("e"), -2e-2);
        assert_eq!(f("f"), 6.626e-34);
        assert_eq!(f("g"), 224617.445991);
        assert_eq!(f("h"), f64::INFINITY);
        assert_eq!(f("i"), f64::NEG_INFINITY);
        assert_eq!(f("j"), 1.5);
        assert!(
            matches!(parse("n = nan").unwrap().get("n").unwrap().value, Value::Float(x) if x.is_nan())
        );
        for bad in [".5", "5.", "1.e5", "01.5", "1e", "1._5", "3.5.1"] {
            assert!(parse(&format!("n = {bad}")).is_err(), "{bad}");
        }
    }

    #[test]
    fn booleans_and_bare_words() {
        let t = parse("a = true\nb = false\n").unwrap();
        assert_eq!(get(&t, "a").value, Value::Boolean(true));
        assert_eq!(get(&t, "b").value, Value::Boolean(false));
        assert_err(
            "x = 1\nmode = allow_all\n",
            Some(2),
            "strings must be quoted (\"allow_all\")",
        );
        assert!(parse("a = True").is_err());
    }

    #[test]
    fn dates_are_rejected_clearly() {
        for d in [
            "1979-05-27",
            "1979-05-27T07:32:00Z",
            "07:32:00",
            "1979-05-27 07:32:00",
        ] {
            let e = err(&format!("a = 1\nd = {d}\n"));
            assert_eq!(e.line, 2, "{d}");
            assert!(e.message.contains("date or time"), "{d}: {e}");
        }
    }

    #[test]
    fn arrays() {
        let text = "a = [1, 2, 3]\nb = [\n  \"x\", # first\n  # between\n  'y',\n]\nc = []\nd = [[1, 2], [\"m\"], { k = 1 }]\ne = [ ]\n";
        let t = parse(text).unwrap();
        let a = get(&t, "a").value.as_array().unwrap();
        assert_eq!(a.len(), 3);
        let b = get(&t, "b").value.as_array().unwrap();
        assert_eq!(b.iter().map(|i| i.line).collect::<Vec<_>>(), [3, 5]);
        assert_eq!(b[1].value.as_str(), Some("y"));
        assert_eq!(get(&t, "c").value.as_array().unwrap().len(), 0);
        assert_eq!(get(&t, "c").line, 7);
        let d = get(&t, "d").value.as_array().unwrap();
        assert_eq!(d[0].value.as_array().unwrap().len(), 2);
        assert!(d[2].value.as_table().is_some());
        assert!(get(&t, "e").value.as_array().unwrap().is_empty());
        assert_err("a = [1 2]", None, "expected `,` or `]`");
        let e = err("a = [1,\n2,\n");
        assert!(
            e.message.contains("unterminated array") && e.message.contains("line 1"),
            "{e}"
        );
        assert_err("a = [,]", None, "expected a value");
    }

    #[test]
    fn inline_tables() {
        let t = parse("a = { k8s = \"kubernetes\", dlq = 'dead-letter-queue', n.m = 1 }\nb = {}\n")
            .unwrap();
        let a = get(&t, "a").value.as_table().unwrap();
        assert_eq!(
            a.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            ["k8s", "dlq", "n"]
        );
        assert_eq!(s(a, "k8s"), "kubernetes");
        assert_eq!(get(a, "n.m").value, Value::Integer(1));
        assert!(get(&t, "b").value.as_table().unwrap().is_empty());
        assert_err("a = { x = 1, }", None, "trailing comma");
        assert_err("a = { x = 1,\n y = 2 }", None, "one line");
        assert_err("a = { x = 1, x = 2 }", None, "duplicate key `x`");
        assert_err("a = { x = 1 }\n[a]\n", Some(2), "inline table");
        assert_err("a = { x = 1 }\na.y = 2\n", None, "cannot be extended");
        assert_err("a = { x.y = 1 }\n[a.x.z]\n", None, "inline table");
    }

    #[test]
    fn duplicate_keys_and_tables() {
        assert_err(
            "a = 1\nb = 2\na = 3\n",
            Some(3),
            "duplicate key `a` (first defined on line 1)",
        );
        assert_err(
            "[t]\nx = 1\n[u]\n[t]\n",
            Some(4),
            "[t] is defined twice (first on line 1)",
        );
        assert_err("[t]\nx.y = 1\nx.y = 2\n", Some(3), "duplicate key `t.x.y`");
        assert_err("a.b = 1\n[a]\n", None, "dotted keys on line 1");
        assert_err("[a.b]\n[a]\nb.c = 1\n", Some(3), "defined by a header");
        assert_err("a = 1\na.b = 2\n", None, "already an integer");
        assert_err("a = 1\n[a.b]\n", None, "already an integer");
    }

    #[test]
    fn dotted_tables_may_get_sub_headers() {
        let t = parse("[fruit]\napple.color = \"red\"\n[fruit.apple.texture]\nsmooth = true\n")
            .unwrap();
        assert_eq!(s(&t, "fruit.apple.color"), "red");
        assert_eq!(
            get(&t, "fruit.apple.texture.smooth").value,
            Value::Boolean(true)
        );
        assert_err("[fruit]\napple.color = 1\n[fruit.apple]\n", None, "dotted");
    }

    #[test]
    fn syntax_errors_name_lines() {
        assert_err(
            "a = 1\n\nname: \"x\"\n",
            Some(3),
            "expected `=` after the key `name`, found `:`",
        );
        assert_err("a = 1 b = 2", None, "own line");
        assert_err("[a\n", None, "expected `]`");
        assert_err("[[a]\n", None, "`]]`");
        assert_err("x = \n", None, "missing value after `x =`");
        assert_err("= 1", None, "expected a key");
        let e = err("[a] x = 1");
        assert!(e.message.contains("after the table header"), "{e}");
        assert_eq!(e.to_string(), format!("line 1: {}", e.message));
    }

    #[test]
    fn nesting_is_capped_with_a_line_numbered_error() {
        // 200,000 levels used to overflow the stack; now it is an error on the line it starts.
        let deep = format!("x = 1\na = {}", "[".repeat(200_000));
        let e = err(&deep);
        assert_eq!(e.line, 2);
        assert!(
            e.message.contains("nested more than 64 levels"),
            "{}",
            e.message
        );
        let deep_tables = format!("a = {}", "{b = ".repeat(100_000));
        assert!(err(&deep_tables).message.contains("nested more than 64"));
        let long_key = format!("{} = 1", vec!["k"; 100_000].join("."));
        assert!(err(&long_key).message.contains("nested more than 64"));
        let long_header = format!("[{}]\n", vec!["k"; 100_000].join("."));
        assert!(err(&long_header).message.contains("nested more than 64"));
        // Up to the cap is fine: 1 level for the key, 63 arrays.
        let ok = format!("a = {}1{}", "[".repeat(63), "]".repeat(63));
        assert!(parse(&ok).is_ok());
        let over = format!("a = {}1{}", "[".repeat(64), "]".repeat(64));
        assert!(err(&over).message.contains("nested more than 64"));
    }

    #[test]
    fn bom_and_empty_document() {
        assert!(parse("").unwrap().is_empty());
        let t = parse("\u{feff}a = 1").unwrap();
        assert_eq!(t.len(), 1);
        assert_eq!(t.get("a").unwrap().value, Value::Integer(1));
        assert_eq!(
            parse("\"\" = 1").unwrap().get("").unwrap().value,
            Value::Integer(1)
        );
    }
}
