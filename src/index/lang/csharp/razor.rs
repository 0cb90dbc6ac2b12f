//! Razor files (`.razor` components, `.cshtml` views and pages) as C#.
//!
//! A Razor file is markup with C# in it. [`extract`] reads it in two parts:
//!
//! - **Directive facts**, line by line: `@using N` imports the namespace, `@namespace N` is the
//!   file's namespace, `@page "/route"` is a `GET` route served by the component, and
//!   `@inject T Name`, `@inherits B`, `@implements I`, `@typeparam T`, `@attribute [A]`,
//!   `@model M` shape the component class.
//! - **Navigation links** of the markup: `<a href="user/orders">`, `<NavLink href="cart">`,
//!   `<a href="item/@item.Id">` navigate to a page of the app ([`HttpFact::Navigate`]; an
//!   `@expr` in the value is a run-time part). A component's relative link is relative to the
//!   app's base (Blazor's `<base href="/">`); a view's (`.cshtml`) counts only from the root
//!   (`/x`, `~/x`), since a relative one depends on the page it is shown on.
//! - **C# text with the same line numbers** ([`to_csharp`]): the markup is blanked (its line
//!   breaks kept), the class-level code of `@code { … }` / `@functions { … }` is kept as the
//!   members of the component class, `@{ … }` blocks and inline `@expr` / `@(expr)` become
//!   statements of a method, `@inject T Name` a field. The C# extractor reads that text, so a
//!   component's members, calls, `HttpClient` requests and event publishing are found as in a
//!   `.cs` file.
//!
//! The component class is the file stem, declared at line 1 (a `.razor` file; an MVC view's
//! generated class is named by no one, so a `.cshtml` file declares no class). `_Imports.razor`,
//! `_ViewImports.cshtml` and `_ViewStart.cshtml` only carry directives for their folder.
//!
//! One linear pass over the bytes; brackets are matched by counting, strings and comments
//! skipped; an unterminated block runs to the end of the file. Never panics.

use crate::index::facts::{FileFacts, HttpFact, Import, Part, Symbol, SymbolKind, Value};

pub(super) use crate::index::facts::is_razor;

/// The name of the method the markup's statements are put in (never a symbol).
const MARKUP_METHOD: &str = "__razor_markup";
/// The class name of a file that declares no class (its symbol is dropped).
const NO_CLASS: &str = "__razor_file";

/// The facts of a Razor file at `path`: its directives, and the facts of its C# text as the C#
/// extractor reads them.
pub(super) fn extract(path: &str, text: &str) -> FileFacts {
    let doc = to_csharp(path, text);
    let mut facts = super::extract_code(&doc.csharp);
    // An injected service is a dependency, like a constructor parameter, not a declaration
    // (its field stays in the C# text for what it holds: an `HttpClient`, a gRPC client).
    facts.symbols.retain(|s| {
        s.name != MARKUP_METHOD
            && s.name != NO_CLASS
            && !(s.kind == SymbolKind::Field
                && doc
                    .injects
                    .iter()
                    .any(|(n, l)| *n == s.name && *l == s.line))
    });
    for s in &mut facts.symbols {
        if s.container.as_deref() == Some(NO_CLASS) {
            s.container = None;
        }
    }
    facts.imports = doc.imports;
    if doc.namespace.is_some() {
        facts.package = doc.namespace;
    }
    for (route, line) in doc.pages {
        facts.http.push(HttpFact::Route {
            method: "GET".to_string(),
            path: super::join_route("", &route),
            handler: (doc.class != NO_CLASS).then(|| doc.class.clone()),
            line,
        });
    }
    for (url, line) in doc.links {
        facts.http.push(HttpFact::Navigate { url, line });
    }
    facts.http.sort_by_key(HttpFact::line);
    // The class is declared even when its C# text reads as something else (a stray brace
    // in a directive the header copies).
    let declared = facts
        .symbols
        .iter()
        .any(|sym| sym.kind == SymbolKind::Class && sym.name == doc.class);
    if doc.class != NO_CLASS && !declared {
        let lines = text.bytes().filter(|&c| c == b'\n').count() + 1;
        facts.symbols.insert(
            0,
            Symbol {
                name: doc.class.clone(),
                kind: SymbolKind::Class,
                line: 1,
                end_line: u32::try_from(lines).unwrap_or(u32::MAX),
                doc_line: None,
                container: facts.package.clone(),
            },
        );
    }
    facts
}

/// A Razor file read as C#.
#[derive(Debug, Default)]
pub(super) struct RazorDoc {
    /// C# text with the line breaks of the file, in the same order.
    pub csharp: String,
    /// The component class (the file stem as an identifier), or [`NO_CLASS`].
    pub class: String,
    pub namespace: Option<String>,
    pub imports: Vec<Import>,
    /// `@page` routes as written, with their lines.
    pub pages: Vec<(String, u32)>,
    /// `@inject` names with their lines.
    pub injects: Vec<(String, u32)>,
    /// Navigation links of the markup (`<a href="…">`) with their lines.
    pub links: Vec<(Value, u32)>,
}

/// The component class of a file: its stem as a C# identifier, or [`NO_CLASS`] for the
/// folder-wide directive files and for MVC views.
fn class_name(path: &str) -> String {
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    let view = !file.to_ascii_lowercase().ends_with(".razor");
    if view || stem.is_empty() || matches!(stem, "_Imports" | "_ViewImports" | "_ViewStart") {
        return NO_CLASS.to_string();
    }
    let mut name: String = stem
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, '_');
    }
    name
}

/// Directives that take the rest of their line.
const LINE_DIRECTIVES: [&str; 15] = [
    "using",
    "namespace",
    "page",
    "inject",
    "inherits",
    "implements",
    "typeparam",
    "attribute",
    "layout",
    "model",
    "rendermode",
    "preservewhitespace",
    "addTagHelper",
    "removeTagHelper",
    "tagHelperPrefix",
];

/// Keywords of Razor code constructs whose header (`@if (…)`) is skipped; their block is read
/// as markup.
const CONTROL: [&str; 12] = [
    "if", "else", "foreach", "for", "while", "do", "switch", "try", "catch", "finally", "lock",
    "using",
];

/// Turns a Razor file into C# text with the same line breaks, and its directive facts.
pub(super) fn to_csharp(path: &str, text: &str) -> RazorDoc {
    let mut s = Scan {
        b: text.as_bytes(),
        text,
        out: String::with_capacity(text.len() / 2 + 64),
        in_markup_method: false,
        line: 1,
        doc: RazorDoc {
            class: class_name(path),
            ..RazorDoc::default()
        },
        component: path.to_ascii_lowercase().ends_with(".razor"),
        bases: Vec::new(),
        attrs: Vec::new(),
        typeparams: Vec::new(),
        implicit_ends: Default::default(),
    };
    s.run();
    s.finish()
}

struct Scan<'a> {
    b: &'a [u8],
    text: &'a str,
    out: String,
    /// The output is inside the markup method (statements), not at class level (members).
    in_markup_method: bool,
    /// The line of the byte being read (1-based).
    line: u32,
    doc: RazorDoc,
    /// A `.razor` component (its relative links are relative to the app's base), not a view.
    component: bool,
    bases: Vec<String>,
    attrs: Vec<String>,
    typeparams: Vec<String>,
    /// [`Scan::implicit_end`] by start: a link's `href="@x(…"` is read by the tag and again by
    /// the scan, and an unclosed call is a search to the end of the file each time.
    implicit_ends: std::cell::RefCell<std::collections::HashMap<usize, usize>>,
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

impl Scan<'_> {
    fn run(&mut self) {
        let mut i = 0;
        let mut line_start = true;
        while i < self.b.len() {
            let c = self.b[i];
            if c == b'\n' {
                self.newline();
                line_start = true;
                i += 1;
                continue;
            }
            if c == b'@' {
                i = self.at(i, line_start);
                line_start = false;
                continue;
            }
            if c == b'<' {
                // Read for its links only: its `@` transitions are read as usual.
                self.tag(i);
            }
            // A byte-order mark or blank keeps the line start.
            if self.b[i..].starts_with(b"\xEF\xBB\xBF") {
                i += 3;
                continue;
            }
            if !matches!(c, b' ' | b'\t' | b'\r') {
                line_start = false;
            }
            i += 1;
        }
    }

    fn newline(&mut self) {
        self.out.push('\n');
        self.line += 1;
    }

    /// Line breaks of `a..e`, nothing else (markup).
    fn blank(&mut self, a: usize, e: usize) {
        let e = e.min(self.b.len());
        for _ in self.b[a.min(e)..e].iter().filter(|&&c| c == b'\n') {
            self.newline();
        }
    }

    /// The text of `a..e` as code.
    fn keep(&mut self, a: usize, e: usize) {
        let e = e.min(self.b.len());
        let a = a.min(e);
        let Some(code) = self.text.get(a..e) else {
            self.blank(a, e);
            return;
        };
        self.line += code.bytes().filter(|&c| c == b'\n').count() as u32;
        self.out.push_str(code);
    }

    fn enter_class(&mut self) {
        if self.in_markup_method {
            self.out.push_str(" } ");
            self.in_markup_method = false;
        }
    }

    fn enter_method(&mut self) {
        if !self.in_markup_method {
            self.out.push_str(" void ");
            self.out.push_str(MARKUP_METHOD);
            self.out.push_str("() { ");
            self.in_markup_method = true;
        }
    }

    /// The identifier at `i`, and its end.
    fn word(&self, i: usize) -> (&str, usize) {
        let mut e = i;
        while e < self.b.len() && is_ident(self.b[e]) {
            e += 1;
        }
        (self.text.get(i..e).unwrap_or(""), e)
    }

    /// Past the end of line `i` is on (before its `\n`).
    fn line_end(&self, i: usize) -> usize {
        self.b[i.min(self.b.len())..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(self.b.len(), |k| i + k)
    }

    /// A transition `@` at `i`; returns where reading goes on.
    fn at(&mut self, i: usize, line_start: bool) -> usize {
        let b = self.b;
        let next = b.get(i + 1).copied().unwrap_or(0);
        // `user@example.com`: an `@` after a letter or digit is text.
        if i > 0 && b[i - 1].is_ascii_alphanumeric() {
            return i + 1;
        }
        match next {
            b'@' => i + 2,
            b'*' => {
                let end = find(b, i + 2, b"*@").map_or(b.len(), |k| k + 2);
                self.blank(i, end);
                end
            }
            b'{' => {
                let close = matching(b, i + 1);
                self.enter_method();
                self.keep(i + 1, close);
                self.out.push_str(" } ");
                close + 1
            }
            b'(' => {
                let close = matching(b, i + 1);
                self.enter_method();
                self.out.push_str("_ = ");
                self.keep(i + 1, close + 1);
                self.out.push_str("; ");
                close + 1
            }
            c if is_ident_start(c) => self.word_transition(i, line_start),
            _ => i + 1,
        }
    }

    /// `@word…` at `i`.
    fn word_transition(&mut self, i: usize, line_start: bool) -> usize {
        let b = self.b;
        let (w, we) = self.word(i + 1);
        let w = w.to_string();
        if line_start && LINE_DIRECTIVES.contains(&w.as_str()) {
            let after = b.get(we).copied().unwrap_or(b'\n');
            // `@using (var x = …) { … }` is a statement.
            let statement = w == "using" && {
                let rest = self.text.get(we..self.line_end(we)).unwrap_or("");
                rest.trim_start().starts_with('(')
            };
            if (after == b' ' || after == b'\t') && !statement {
                let end = self.line_end(we);
                let rest = self.text.get(we..end).unwrap_or("").trim().to_string();
                self.directive(&w, &rest);
                return end;
            }
        }
        match w.as_str() {
            "code" | "functions" => {
                let mut k = we;
                while k < b.len() && b[k].is_ascii_whitespace() {
                    k += 1;
                }
                if b.get(k) != Some(&b'{') {
                    return we;
                }
                self.blank(we, k);
                let close = matching(b, k);
                self.enter_class();
                self.keep(k + 1, close);
                close + 1
            }
            w if CONTROL.contains(&w) => {
                // The header is skipped; the block is read as markup.
                let mut k = we;
                while k < b.len() && (b[k] == b' ' || b[k] == b'\t') {
                    k += 1;
                }
                if b.get(k) == Some(&b'(') {
                    let close = matching(b, k);
                    self.blank(we, close + 1);
                    return close + 1;
                }
                we
            }
            "await" => {
                let mut k = we;
                while k < b.len() && (b[k] == b' ' || b[k] == b'\t') {
                    k += 1;
                }
                if !b.get(k).copied().is_some_and(is_ident_start) {
                    return we;
                }
                let end = self.implicit_end(k);
                self.enter_method();
                self.out.push_str("_ = await ");
                self.keep(k, end);
                self.out.push_str("; ");
                end
            }
            _ => {
                let end = self.implicit_end(i + 1);
                self.enter_method();
                self.out.push_str("_ = ");
                self.keep(i + 1, end);
                self.out.push_str("; ");
                end
            }
        }
    }

    /// The end of an implicit expression starting with an identifier at `i`: `a.b(c)[d]?.e`.
    fn implicit_end(&self, i: usize) -> usize {
        if let Some(&end) = self.implicit_ends.borrow().get(&i) {
            return end;
        }
        let end = self.read_implicit_end(i);
        self.implicit_ends.borrow_mut().insert(i, end);
        end
    }

    /// [`Scan::implicit_end`], read.
    fn read_implicit_end(&self, i: usize) -> usize {
        let b = self.b;
        let (_, mut e) = self.word(i);
        loop {
            match b.get(e) {
                Some(b'(') | Some(b'[') => {
                    let close = matching(b, e);
                    if close >= b.len() {
                        // An unclosed call in markup is text: stop before it.
                        return e;
                    }
                    e = close + 1;
                }
                Some(b'.') if b.get(e + 1).copied().is_some_and(is_ident_start) => {
                    e = self.word(e + 1).1;
                }
                Some(b'?')
                    if b.get(e + 1) == Some(&b'.')
                        && b.get(e + 2).copied().is_some_and(is_ident_start) =>
                {
                    e = self.word(e + 2).1;
                }
                _ => return e,
            }
        }
    }

    /// A markup tag at `i` (its `<`): the target of a link tag's `href` is a navigation.
    fn tag(&mut self, i: usize) {
        let b = self.b;
        let (name, mut k) = self.word(i + 1);
        if !(name.eq_ignore_ascii_case("a") || name == "NavLink") {
            return;
        }
        let mut newlines = 0u32;
        loop {
            while k < b.len() && b[k].is_ascii_whitespace() {
                newlines += u32::from(b[k] == b'\n');
                k += 1;
            }
            if k >= b.len() || matches!(b[k], b'>' | b'/' | b'<') {
                return;
            }
            let a = k;
            while k < b.len()
                && !(b[k].is_ascii_whitespace() || matches!(b[k], b'=' | b'>' | b'/' | b'<'))
            {
                k += 1;
            }
            let attr = self.text.get(a..k).unwrap_or("");
            let line = self.line + newlines;
            while k < b.len() && (b[k] == b' ' || b[k] == b'\t') {
                k += 1;
            }
            if b.get(k) != Some(&b'=') {
                continue;
            }
            k += 1;
            while k < b.len() && (b[k] == b' ' || b[k] == b'\t') {
                k += 1;
            }
            let (value, end) = self.attr_value(k);
            newlines += b[k.min(end)..end].iter().filter(|&&c| c == b'\n').count() as u32;
            k = end.max(k + 1);
            // `href=""` is the app's base; a value of run-time parts only names no page.
            let runtime_only = !value.parts.is_empty() && value.is_dynamic();
            if attr.eq_ignore_ascii_case("href") && !runtime_only {
                let relative = value
                    .as_lit()
                    .or(match value.parts.first() {
                        Some(Part::Lit(s)) => Some(s.as_str()),
                        _ => None,
                    })
                    .is_some_and(|s| !s.trim_start().starts_with(['/', '~']));
                if self.component || !relative {
                    self.doc.links.push((value, line));
                }
            }
        }
    }

    /// An attribute value at `k` (quoted or not) as a [`Value`]: its text, with each `@expr`
    /// or `@(expr)` a run-time part; and where it ends.
    fn attr_value(&self, k: usize) -> (Value, usize) {
        let b = self.b;
        let quote = b.get(k).copied().filter(|&q| q == b'"' || q == b'\'');
        let mut v = Value::default();
        let mut j = k + usize::from(quote.is_some());
        let mut lit = j;
        let flush = |v: &mut Value, a: usize, e: usize| {
            if let Some(text) = self.text.get(a..e) {
                v.push(Part::Lit(text.to_string()));
            }
        };
        while j < b.len() {
            let c = b[j];
            let ends = match quote {
                Some(q) => c == q || c == b'\n',
                None => c.is_ascii_whitespace() || c == b'>',
            };
            if ends {
                flush(&mut v, lit, j);
                return (v, j + usize::from(quote.is_some_and(|q| q == c)));
            }
            if c == b'@' {
                match b.get(j + 1).copied() {
                    Some(b'@') => {
                        flush(&mut v, lit, j + 1);
                        j += 2;
                        lit = j;
                        continue;
                    }
                    Some(b'(') => {
                        flush(&mut v, lit, j);
                        j = matching(b, j + 1).saturating_add(1);
                        v.push(Part::Dynamic);
                        lit = j;
                        continue;
                    }
                    Some(n) if is_ident_start(n) => {
                        flush(&mut v, lit, j);
                        let end = self.implicit_end(j + 1);
                        v.push(self.text.get(j + 1..end).map_or(Part::Dynamic, method_call));
                        j = end;
                        lit = j;
                        continue;
                    }
                    _ => {}
                }
            }
            j += 1;
        }
        flush(&mut v, lit, b.len());
        (v, b.len())
    }

    /// A line directive `@w rest` (its line is blanked; `@inject` and `@model` become fields).
    fn directive(&mut self, w: &str, rest: &str) {
        let rest = rest.trim_end_matches(';').trim();
        match w {
            "using" => {
                if let Some(imp) = using_import(rest, self.line) {
                    self.doc.imports.push(imp);
                }
            }
            "namespace" if is_dotted(rest) => self.doc.namespace = Some(rest.to_string()),
            "page" => {
                if let Some(route) = quoted(rest) {
                    self.doc.pages.push((route.to_string(), self.line));
                }
            }
            "inject" => {
                // `@inject T Name`: the type may be generic (`IOptions<X> options`).
                if let Some((ty, name)) = rest.rsplit_once([' ', '\t']) {
                    let (ty, name) = (ty.trim(), name.trim());
                    if is_type(ty) && is_dotted(name) && !name.contains('.') {
                        self.enter_class();
                        self.out.push_str(ty);
                        self.out.push(' ');
                        self.out.push_str(name);
                        self.out.push_str("; ");
                        self.doc.injects.push((name.to_string(), self.line));
                    }
                }
            }
            "model" if is_type(rest) => {
                self.enter_class();
                self.out.push_str(rest);
                self.out.push_str(" Model; ");
            }
            "inherits" if is_type(rest) => self.bases.insert(0, rest.to_string()),
            "implements" if is_type(rest) => self.bases.push(rest.to_string()),
            "typeparam" => {
                let name = rest.split_whitespace().next().unwrap_or("");
                if is_dotted(name) && !name.contains('.') {
                    self.typeparams.push(name.to_string());
                }
            }
            // Copied into the class header: nothing that could open a comment or a block.
            "attribute"
                if rest.starts_with('[')
                    && rest.ends_with(']')
                    && !rest.contains("/*")
                    && !rest.contains("//")
                    && !rest.contains(['{', '}', ';']) =>
            {
                self.attrs.push(rest.to_string())
            }
            _ => {}
        }
    }

    /// The C# text: the class header on line 1, the body, the closing braces.
    fn finish(mut self) -> RazorDoc {
        if self.in_markup_method {
            self.out.push_str(" }");
        }
        self.out.push_str(" }");
        let mut head = String::new();
        if let Some(ns) = &self.doc.namespace {
            head.push_str("namespace ");
            head.push_str(ns);
            head.push_str("; ");
        }
        for a in &self.attrs {
            head.push_str(a);
            head.push(' ');
        }
        head.push_str("public partial class ");
        head.push_str(&self.doc.class);
        if !self.typeparams.is_empty() {
            head.push('<');
            head.push_str(&self.typeparams.join(", "));
            head.push('>');
        }
        if !self.bases.is_empty() {
            head.push_str(" : ");
            head.push_str(&self.bases.join(", "));
        }
        head.push_str(" { ");
        self.out.insert_str(0, &head);
        self.doc.csharp = self.out;
        self.doc
    }
}

/// An implicit expression in markup: what a qualified method returns (`ItemHelper.Url(item)`
/// is the binding `ItemHelper.Url()` of the class's file), anything else a run-time part.
fn method_call(expr: &str) -> Part {
    let Some((head, _)) = expr.split_once('(') else {
        return Part::Dynamic;
    };
    let segs: Vec<&str> = head.split('.').collect();
    let plain = segs.len() >= 2
        && segs
            .iter()
            .all(|s| s.bytes().next().is_some_and(is_ident_start) && s.bytes().all(is_ident));
    // One call, at the end: its `(` closes last.
    if !plain || matching(expr.as_bytes(), head.len()) + 1 != expr.len() {
        return Part::Dynamic;
    }
    Part::Ref {
        name: super::uses::method_ref(segs[segs.len() - 2], segs[segs.len() - 1]),
        default: None,
    }
}

/// `@using N`, `@using static N`, `@using A = N` as an import.
fn using_import(rest: &str, line: u32) -> Option<Import> {
    let rest = rest.strip_prefix("static ").map_or(rest, str::trim);
    let (alias, module) = match rest.split_once('=') {
        Some((a, m)) => (Some(a.trim().to_string()), m.trim()),
        None => (None, rest),
    };
    is_dotted(module).then(|| Import::whole_module(module.to_string(), alias, line))
}

/// A (dotted) name: `eShop.WebApp.Services`.
fn is_dotted(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|p| {
            p.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
        })
        && s.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
}

/// A type as written in a directive: a dotted name with generic arguments, `?` and `[]`.
fn is_type(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && s.chars().all(|c| {
            c.is_alphanumeric() || matches!(c, '_' | '.' | '<' | '>' | ',' | ' ' | '?' | '[' | ']')
        })
        && s.matches('<').count() == s.matches('>').count()
}

/// The text of the first `"…"` in `s`.
fn quoted(s: &str) -> Option<&str> {
    let (_, rest) = s.split_once('"')?;
    let (q, _) = rest.split_once('"')?;
    Some(q)
}

/// The first index of `needle` in `b` at or after `from`.
fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    b.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|k| from + k)
}

/// The index of the bracket closing the one at `open` (`(`, `[` or `{`), skipping C# strings,
/// characters and comments; `b.len()` when it is never closed.
fn matching(b: &[u8], open: usize) -> usize {
    let (o, c) = match b.get(open) {
        Some(b'(') => (b'(', b')'),
        Some(b'[') => (b'[', b']'),
        Some(b'{') => (b'{', b'}'),
        _ => return b.len(),
    };
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        let x = b[i];
        if x == o {
            depth += 1;
        } else if x == c {
            depth -= 1;
            if depth == 0 {
                return i;
            }
        } else if x == b'"' {
            let verbatim = i > 0 && (b[i - 1] == b'@' || (i > 1 && b[i - 2] == b'@'));
            i = string_end(b, i, verbatim);
        } else if x == b'\'' {
            // A character literal is short; an apostrophe in text is not one.
            if let Some(k) = b[i + 1..].iter().take(8).position(|&q| q == b'\'')
                && !b[i + 1..i + 1 + k].contains(&b'\n')
            {
                i += k + 1;
            }
        } else if x == b'/' && b.get(i + 1) == Some(&b'/') {
            i = b[i..]
                .iter()
                .position(|&q| q == b'\n')
                .map_or(b.len(), |k| i + k);
            continue;
        } else if x == b'/' && b.get(i + 1) == Some(&b'*') {
            i = find(b, i + 2, b"*/").map_or(b.len(), |k| k + 1);
        }
        i += 1;
    }
    b.len()
}

/// The index of the quote closing the string opened at `q`; a regular string ends at the end
/// of its line.
fn string_end(b: &[u8], q: usize, verbatim: bool) -> usize {
    let mut i = q + 1;
    while i < b.len() {
        match b[i] {
            b'"' if verbatim && b.get(i + 1) == Some(&b'"') => i += 1,
            b'"' => return i,
            b'\\' if !verbatim => i += 1,
            b'\n' if !verbatim => return i - 1,
            _ => {}
        }
        i += 1;
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::facts::GrpcFact;

    fn facts(path: &str, src: &str) -> FileFacts {
        super::super::extract(path, src)
    }

    fn syms(f: &FileFacts) -> Vec<(String, SymbolKind, u32)> {
        f.symbols
            .iter()
            .map(|s| (s.name.clone(), s.kind, s.line))
            .collect()
    }

    fn routes(f: &FileFacts) -> Vec<(String, String, u32)> {
        f.http
            .iter()
            .filter_map(|h| match h {
                HttpFact::Route {
                    method, path, line, ..
                } => Some((method.clone(), path.clone(), *line)),
                _ => None,
            })
            .collect()
    }

    const ITEM_PAGE: &str = "\u{feff}@page \"/item/{itemId:int}\"\n\
@using System.Net\n\
@inject CatalogService CatalogService\n\
@inject HttpClient Http\n\
@attribute [Authorize]\n\
@implements IDisposable\n\
\n\
@if (item is not null)\n\
{\n\
    <CatalogListItem Item=\"item\" />\n\
    <p>Mail support@example.com, price $@item.Price.ToString(\"0.00\") @@home</p>\n\
    @* <p>@Hidden()</p> *@\n\
}\n\
@code {\n\
    private CatalogItem? item;\n\
    [Parameter] public int ItemId { get; set; }\n\
    protected override async Task OnInitializedAsync()\n\
    {\n\
        item = await CatalogService.GetCatalogItem(ItemId);\n\
        var r = await Http.GetAsync(\"/api/basket/items\");\n\
    }\n\
    public void Dispose() { }\n\
}\n";

    #[test]
    fn a_component_is_a_class_with_its_members_routes_and_calls() {
        let f = facts("src/WebApp/Components/Pages/Item/ItemPage.razor", ITEM_PAGE);
        let s = syms(&f);
        assert!(
            s.contains(&("ItemPage".into(), SymbolKind::Class, 1)),
            "{s:?}"
        );
        assert!(s.contains(&("item".into(), SymbolKind::Field, 15)), "{s:?}");
        assert!(
            s.contains(&("ItemId".into(), SymbolKind::Field, 16)),
            "{s:?}"
        );
        assert!(
            s.contains(&("OnInitializedAsync".into(), SymbolKind::Method, 17)),
            "{s:?}"
        );
        assert!(
            s.contains(&("Dispose".into(), SymbolKind::Method, 22)),
            "{s:?}"
        );
        // `@inject` is a dependency, not a declaration.
        assert!(
            !s.iter()
                .any(|(n, _, _)| n == "CatalogService" || n == "Http"),
            "{s:?}"
        );
        assert!(
            !s.iter()
                .any(|(n, _, _)| n == MARKUP_METHOD || n == "Hidden")
        );
        assert!(routes(&f).contains(&("GET".into(), "/item/{itemId:int}".into(), 1)));
        let calls: Vec<_> = f
            .http
            .iter()
            .filter_map(|h| match h {
                HttpFact::Call { method, url, line } => {
                    Some((method.clone(), url.display(), *line))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            calls,
            vec![(Some("GET".into()), "/api/basket/items".into(), 20)]
        );
        assert_eq!(f.imports.len(), 1);
        assert_eq!(
            (f.imports[0].module.as_str(), f.imports[0].line),
            ("System.Net", 2)
        );
    }

    #[test]
    fn the_csharp_text_keeps_every_line() {
        let d = to_csharp("a/ItemPage.razor", ITEM_PAGE);
        assert_eq!(
            d.csharp.matches('\n').count(),
            ITEM_PAGE.matches('\n').count()
        );
        assert!(
            d.csharp
                .starts_with("public partial class ItemPage : IDisposable { ")
                || d.csharp
                    .starts_with("[Authorize] public partial class ItemPage : IDisposable { ")
        );
        // Markup, the email, the escape and the comment leave nothing behind.
        assert!(!d.csharp.contains("example"));
        assert!(!d.csharp.contains("home"));
        assert!(!d.csharp.contains("Hidden"));
        assert!(!d.csharp.contains("<p>"));
        assert!(d.csharp.contains("_ = item.Price.ToString(\"0.00\");"));
    }

    #[test]
    fn directives_shape_the_class() {
        let src = "@namespace Shop.Ui.Grid\n@typeparam TItem where TItem : class\n@inherits LayoutComponentBase\n@inject IOptions<GridOptions> options\n<Row T=\"TItem\" />\n";
        let f = facts("ui/Grid.razor", src);
        assert_eq!(f.package.as_deref(), Some("Shop.Ui.Grid"));
        let class = f.symbols.iter().find(|s| s.name == "Grid").expect("class");
        assert_eq!((class.kind, class.line), (SymbolKind::Class, 1));
        assert!(!syms(&f).iter().any(|(n, _, _)| n == "options"));
        let d = to_csharp("ui/Grid.razor", src);
        assert!(
            d.csharp.starts_with(
                "namespace Shop.Ui.Grid; public partial class Grid<TItem> : LayoutComponentBase { "
            ),
            "{}",
            d.csharp
        );
    }

    #[test]
    fn folder_files_and_views_declare_no_class() {
        let f = facts("App/_Imports.razor", "@using A.B\n@namespace A.B.C\n");
        assert!(
            f.symbols.iter().all(|s| s.kind != SymbolKind::Class),
            "{:?}",
            f.symbols
        );
        assert_eq!(f.imports.len(), 1);
        let v = "@page \"/privacy\"\n@model PrivacyModel\n@{\n    ViewData[\"Title\"] = \"Privacy\";\n}\n<h1>@ViewData[\"Title\"]</h1>\n@functions {\n    public string Greet() => \"hi\";\n}\n";
        let f = facts("Pages/Privacy.cshtml", v);
        assert!(f.symbols.iter().all(|s| s.kind != SymbolKind::Class));
        let s = syms(&f);
        assert!(
            s.contains(&("Greet".into(), SymbolKind::Method, 8)),
            "{s:?}"
        );
        assert_eq!(routes(&f), vec![("GET".into(), "/privacy".into(), 1)]);
    }

    #[test]
    fn grpc_and_events_in_code_blocks_are_found() {
        let src = "@using Grpc.Net.Client\n@inject Basket.BasketClient Basket\n<button @onclick=\"Save\">Save</button>\n@code {\n    async Task Save() => await Basket.UpdateBasketAsync(new());\n}\n";
        let f = facts("c/Save.razor", src);
        assert!(
            f.grpc.iter().any(|g| matches!(g, GrpcFact::Call { method, line: 5, .. } if method.starts_with("UpdateBasket"))),
            "{:?}",
            f.grpc
        );
    }

    fn links(f: &FileFacts) -> Vec<(String, u32)> {
        f.http
            .iter()
            .filter_map(|h| match h {
                HttpFact::Navigate { url, line } => Some((url.display(), *line)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn an_unclosed_call_in_a_link_is_read_once_for_the_tag_and_the_scan() {
        // `<a href="item/@x(` repeated: the tag's reading and the scan each searched the rest
        // of the file for the call's close (384 KB: 14 s optimized, half of it the links).
        let src = "<a href=\"item/@Nav.Go(\n".repeat(2000);
        let f = facts("x/Comp.razor", &src);
        let found = links(&f);
        assert_eq!(found.len(), 2000);
        assert_eq!(found[1], ("item/{}(".to_string(), 2));
    }

    #[test]
    fn links_and_navigation_calls_are_navigations() {
        let src = "@inject NavigationManager Nav\n\
<a class=\"dropdown-item\" href=\"user/orders\">My orders</a>\n\
<NavLink Match=\"@NavLinkMatch.All\" href=\"@Nav.GetUriWithQueryParameter(\"page\", 2)\">2</NavLink>\n\
<a\n   href='item/@item.Id'>x</a> <a href=\"\">home</a>\n\
<link rel=\"stylesheet\" href=\"app.css\" /> <base href=\"/\" />\n\
<a href=\"https://example.com/x\">out</a> @* <a href=\"hidden\"> *@\n\
<a href=@(\"x\") title=\"a > b\" href=cart>c</a>\n\
@code {\n\
    void Done(int id) { Nav.NavigateTo($\"item/{id}\"); Nav.NavigateTo(uri: \"/cart\", forceLoad: true); }\n\
    void Back(string returnUrl) => Nav.NavigateTo(returnUrl);\n\
}\n";
        let f = facts("Components/Layout/UserMenu.razor", src);
        assert_eq!(
            links(&f),
            vec![
                ("user/orders".to_string(), 2),
                // What a method returns is the graph's to read (a `Class.Method()` binding).
                ("{Nav.GetUriWithQueryParameter()}".to_string(), 3),
                ("item/{}".to_string(), 5),
                ("".to_string(), 5),
                ("https://example.com/x".to_string(), 7),
                ("cart".to_string(), 8),
                ("item/{}".to_string(), 10),
                ("/cart".to_string(), 10),
            ]
        );
        // Each branch of a conditional target that is known.
        let code = "@code {\n  void Go(Uri url, string r, bool b) {\n    Nav.NavigateTo(url.IsAbsoluteUri ? \"/\" : r);\n    Nav.NavigateTo(b ? $\"item/{r}\" : (b ? \"cart\" : \"checkout\"));\n  }\n}\n";
        let f = facts("Pages/LogIn.razor", code);
        assert_eq!(
            links(&f),
            vec![
                ("/".to_string(), 3),
                ("item/{}".to_string(), 4),
                ("cart".to_string(), 4),
                ("checkout".to_string(), 4),
            ]
        );
        // A view's relative link depends on the page that shows it: only rooted ones count.
        let view = "<a href=\"~/grants\">g</a> <a href=\"diagnostics\">d</a> <a href=\"/Home/Privacy\">p</a>\n";
        let f = facts("Views/Home/Index.cshtml", view);
        assert_eq!(
            links(&f),
            vec![
                ("~/grants".to_string(), 1),
                ("/Home/Privacy".to_string(), 1)
            ]
        );
    }

    #[test]
    fn hostile_inputs_do_not_panic() {
        for src in [
            "@code {",
            "@code { void A() { \"unterminated",
            "@functions",
            "@(",
            "@{",
            "@*",
            "@",
            "@@",
            "x@",
            "@page",
            "@page \"",
            "@inject",
            "@inject T",
            "@typeparam",
            "@using (",
            "@if (",
            "@await",
            "@a.b(\"c\"",
            "@a[",
            "é@é @ü.ö(ß) @{ ü = \"ö\"; } @code { string ä = \"ü\"; }",
            "\u{feff}@page \"/é\"\r\n@code {\r\n int x;\r\n}\r\n",
            "@code { char c = '{'; string s = @\"}\"\"\"; /* } */ // }\n }",
            "<p>don't @if (a) { <b>'</b> }</p>",
            "<a",
            "<a href",
            "<a href=",
            "<a href=\"@",
            "<a href=\"@(",
            "<a href=\"x@@",
            "<NavLink href='é@ü.ö(\"",
            "<a =\"x\" href=é>",
            "@code { void A() => Nav.NavigateTo(a ? : ); }",
            // Found by the fuzzer: a comment opened in a copied directive hid the class.
            "@attribute [Authorize/*/*]\n@inherits A{\n@code {\n    int X;\n}\n",
        ] {
            let f = facts("x/Comp.razor", src);
            let d = to_csharp("x/Comp.razor", src);
            assert_eq!(
                d.csharp.matches('\n').count(),
                src.matches('\n').count(),
                "{src:?}"
            );
            assert!(
                f.symbols
                    .iter()
                    .any(|s| s.kind == SymbolKind::Class && s.name == "Comp"),
                "{src:?}"
            );
            let _ = facts("x/View.cshtml", src);
        }
    }

    #[test]
    fn crlf_lines_are_counted_once() {
        let src = "@page \"/a\"\r\n<p>x</p>\r\n@code {\r\n    int Count() => 1;\r\n}\r\n";
        let f = facts("x/A.razor", src);
        assert!(
            syms(&f).contains(&("Count".into(), SymbolKind::Method, 4)),
            "{:?}",
            f.symbols
        );
        assert_eq!(routes(&f), vec![("GET".into(), "/a".into(), 1)]);
    }

    #[test]
    fn non_ascii_markup_and_names() {
        let src = "<h1>Größe — ü</h1>\n@inject Käse Käse\n@code { int Zähler; }\n";
        let f = facts("x/Übersicht.razor", src);
        let s = syms(&f);
        assert!(
            s.contains(&("Übersicht".into(), SymbolKind::Class, 1)),
            "{s:?}"
        );
        assert!(
            s.contains(&("Zähler".into(), SymbolKind::Field, 3)),
            "{s:?}"
        );
    }
}
