//! What the per-language extractor tests share: finders that turn a [`FileFacts`] into rows an
//! `assert_eq!` can compare, [`Value`] shorthands, and the generators of hostile input
//! (every short token sequence, seeded junk, every prefix of a file). Kept in one place so a
//! test of a new language is written against the same helpers, and a fix to one reaches all.

use crate::index::facts::{EventRole, FileFacts, GrpcFact, HttpFact, Symbol, SymbolKind, Value};

/// The extract function every language exposes.
pub(crate) type Extract = fn(&str, &str) -> FileFacts;

/// The symbol named `name`; panics with the file's symbols when there is none.
pub(crate) fn sym<'f>(f: &'f FileFacts, name: &str) -> &'f Symbol {
    f.symbols
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no symbol {name} in {:#?}", f.symbols))
}

/// Whether the file declares a symbol named `name`.
pub(crate) fn has_sym(f: &FileFacts, name: &str) -> bool {
    f.symbols.iter().any(|s| s.name == name)
}

/// The names of the file's symbols, in order.
pub(crate) fn names(f: &FileFacts) -> Vec<&str> {
    f.symbols.iter().map(|s| s.name.as_str()).collect()
}

/// A symbol as (kind, line, end line, doc line, container).
pub(crate) fn brief(s: &Symbol) -> (SymbolKind, u32, u32, Option<u32>, Option<&str>) {
    (
        s.kind,
        s.line,
        s.end_line,
        s.doc_line,
        s.container.as_deref(),
    )
}

/// The literal value of the binding named `name` (`"?"` when it is not a literal).
pub(crate) fn constant<'f>(f: &'f FileFacts, name: &str) -> Option<&'f str> {
    f.bindings
        .iter()
        .find(|c| c.name == name)
        .map(|c| c.value.as_lit().unwrap_or("?"))
}

/// Every binding as (name, literal value or `"?"`).
pub(crate) fn consts(f: &FileFacts) -> Vec<(&str, &str)> {
    f.bindings
        .iter()
        .map(|c| (c.name.as_str(), c.value.as_lit().unwrap_or("?")))
        .collect()
}

/// A literal value.
pub(crate) fn lit(s: &str) -> Value {
    Value::lit(s.to_string())
}

/// A reference to a named constant.
pub(crate) fn reference(s: &str) -> Value {
    Value::reference(s.to_string())
}

/// An environment variable, with its default when the code gives one.
pub(crate) fn env(var: &str, default: Option<&str>) -> Value {
    Value::env(var.to_string(), default.map(str::to_string))
}

/// The file's events as (role, topic, via, line).
pub(crate) fn events(f: &FileFacts) -> Vec<(EventRole, Value, &str, u32)> {
    f.events
        .iter()
        .map(|e| (e.role, e.topic.clone(), e.via.as_str(), e.line))
        .collect()
}

/// The routes the file serves as (method, path, handler, line).
pub(crate) fn routes(f: &FileFacts) -> Vec<(String, String, Option<String>, u32)> {
    routes_borrowed(f)
        .into_iter()
        .map(|(m, p, h, l)| (m.to_string(), p.to_string(), h.map(str::to_string), l))
        .collect()
}

/// [`routes`] borrowed from the facts.
pub(crate) fn routes_borrowed(f: &FileFacts) -> Vec<(&str, &str, Option<&str>, u32)> {
    f.routes().collect()
}

/// The HTTP calls the file makes as (method, URL as the evaluator read it, line).
pub(crate) fn http_calls(f: &FileFacts) -> Vec<(Option<String>, String, u32)> {
    http_calls_borrowed(f)
        .into_iter()
        .map(|(m, u, l)| (m.map(str::to_string), u, l))
        .collect()
}

/// [`http_calls`] with the method borrowed from the facts.
pub(crate) fn http_calls_borrowed(f: &FileFacts) -> Vec<(Option<&str>, String, u32)> {
    f.http
        .iter()
        .filter_map(|h| match h {
            HttpFact::Call { method, url, line } => Some((method.as_deref(), url.display(), *line)),
            _ => None,
        })
        .collect()
}

/// A route fact, for comparing with `f.http` whole.
pub(crate) fn route(method: &str, path: &str, handler: Option<&str>, line: u32) -> HttpFact {
    HttpFact::Route {
        method: method.into(),
        path: path.into(),
        handler: handler.map(str::to_string),
        line,
    }
}

/// The gRPC calls the file makes as (service when known, method, line).
pub(crate) fn grpc_calls(f: &FileFacts) -> Vec<(Option<&str>, &str, u32)> {
    f.grpc
        .iter()
        .filter_map(|g| match g {
            GrpcFact::Call {
                service,
                method,
                line,
                ..
            } => Some((service.as_deref(), method.as_str(), *line)),
            _ => None,
        })
        .collect()
}

/// The gRPC calls the file makes as (service when known, receiver, method, line).
pub(crate) fn grpc_receiver_calls(f: &FileFacts) -> Vec<(Option<&str>, &str, &str, u32)> {
    f.grpc
        .iter()
        .filter_map(|g| match g {
            GrpcFact::Call {
                service,
                receiver,
                method,
                line,
            } => Some((
                service.as_deref(),
                receiver.as_str(),
                method.as_str(),
                *line,
            )),
            _ => None,
        })
        .collect()
}

/// An import as (module, names, alias, line, re-export).
pub(crate) type ImportRow<'a> = (&'a str, Vec<&'a str>, Option<&'a str>, u32, bool);

/// The file's imports as [`ImportRow`]s.
pub(crate) fn imports(f: &FileFacts) -> Vec<ImportRow<'_>> {
    f.imports
        .iter()
        .map(|i| {
            (
                i.module.as_str(),
                i.names.iter().map(String::as_str).collect(),
                i.alias.as_deref(),
                i.line,
                i.reexport,
            )
        })
        .collect()
}

/// Extracts every sequence of up to four tokens of `alphabet` (each followed by a space) as
/// file `path`: index arithmetic at the edges of a file must never panic.
pub(crate) fn every_short_token_sequence(extract: Extract, path: &str, alphabet: &[&str]) {
    let mut src = String::new();
    for len in 1..=4u32 {
        for mut code in 0..alphabet.len().pow(len) {
            src.clear();
            for _ in 0..len {
                src.push_str(alphabet[code % alphabet.len()]);
                src.push(' ');
                code /= alphabet.len();
            }
            let _ = extract(path, &src);
        }
    }
}

/// How many bytes (or characters) the junk generators below draw: every junk text is at
/// least this long.
pub(crate) const JUNK_LEN: usize = 200_000;

/// Extracts the junk text `junk` (at least [`JUNK_LEN`] bytes) as file `path` and checks what
/// hostile input must give: no panic, fewer symbols than [`JUNK_LEN`], each ending on or after
/// the line it starts on. Returns the facts for any further check.
pub(crate) fn extract_junk(extract: Extract, path: &str, junk: &str) -> FileFacts {
    let f = extract(path, junk);
    assert!(
        f.symbols.len() < JUNK_LEN,
        "{path}: {} symbols",
        f.symbols.len()
    );
    assert!(
        f.symbols.iter().all(|s| s.end_line >= s.line),
        "{path}: a symbol ends before it starts"
    );
    f
}

/// [`JUNK_LEN`] bytes drawn from `alphabet` by a 32-bit xorshift from `seed`, as text (a broken
/// multi-byte character replaced).
pub(crate) fn junk_bytes32(alphabet: &[u8], mut state: u32) -> String {
    let mut bytes = Vec::with_capacity(JUNK_LEN);
    while bytes.len() < JUNK_LEN {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        bytes.push(alphabet[(state as usize) % alphabet.len()]);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// [`JUNK_LEN`] characters, each a byte of `alphabet` (read as Latin-1) drawn by a 64-bit
/// xorshift from `seed`.
pub(crate) fn junk_chars64(alphabet: &[u8], mut seed: u64) -> String {
    (0..JUNK_LEN)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            char::from(alphabet[(seed % alphabet.len() as u64) as usize])
        })
        .collect()
}

/// At least [`JUNK_LEN`] bytes of the space-separated `pieces`, drawn by a 64-bit xorshift
/// from `state`, a space after one in three.
pub(crate) fn junk_pieces64(pieces: &str, mut state: u64) -> String {
    let pieces: Vec<&str> = pieces.split(' ').collect();
    let mut text = String::new();
    while text.len() < JUNK_LEN {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        text.push_str(pieces[(state % pieces.len() as u64) as usize]);
        if state.is_multiple_of(3) {
            text.push(' ');
        }
    }
    text
}

/// [`JUNK_LEN`] random bytes, as text (invalid UTF-8 replaced).
pub(crate) fn random_text(mut seed: u64) -> String {
    let bytes: Vec<u8> = (0..JUNK_LEN)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 24) as u8
        })
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Extracts every prefix of `text` that ends on a character boundary, the whole text
/// included, as file `path`: a file cut anywhere must never panic.
pub(crate) fn every_prefix(extract: Extract, path: &str, text: &str) {
    for end in (0..=text.len()).filter(|&e| text.is_char_boundary(e)) {
        let _ = extract(path, &text[..end]);
    }
}

/// Extracts one in `step` of the proper prefixes of `text` that end on a character boundary,
/// as file `path`: the cheaper form of [`every_prefix`] for a long fixture.
pub(crate) fn sampled_prefixes(extract: Extract, path: &str, text: &str, step: usize) {
    for cut in (0..text.len())
        .filter(|&c| text.is_char_boundary(c))
        .step_by(step)
    {
        let _ = extract(path, &text[..cut]);
    }
}

/// Extracts each snippet as file `path`: truncated and malformed code must never panic.
pub(crate) fn extract_each(extract: Extract, path: &str, snippets: &[&str]) {
    for src in snippets {
        let _ = extract(path, src);
    }
}

/// Every binding as (name, value).
pub(crate) fn bindings(f: &FileFacts) -> Vec<(&str, Value)> {
    f.bindings
        .iter()
        .map(|c| (c.name.as_str(), c.value.clone()))
        .collect()
}

/// Every binding as (name, literal value or `"?"`, line).
pub(crate) fn consts_at(f: &FileFacts) -> Vec<(&str, &str, u32)> {
    f.bindings
        .iter()
        .map(|c| (c.name.as_str(), c.value.as_lit().unwrap_or("?"), c.line))
        .collect()
}

/// The file's events as (role, topic, line), without the library.
pub(crate) fn topics(f: &FileFacts) -> Vec<(EventRole, Value, u32)> {
    f.events
        .iter()
        .map(|e| (e.role, e.topic.clone(), e.line))
        .collect()
}

/// The file's events as (role, topic as displayed, line).
pub(crate) fn topics_shown(f: &FileFacts) -> Vec<(EventRole, String, u32)> {
    f.events
        .iter()
        .map(|e| (e.role, e.topic.display(), e.line))
        .collect()
}

/// The events of the file as (role, topic as shown, via, line): the readable form the
/// pub/sub recogniser tests compare.
pub(crate) fn events_shown(f: &FileFacts) -> Vec<(EventRole, String, &str, u32)> {
    f.events
        .iter()
        .map(|e| (e.role, e.topic.display(), e.via.as_str(), e.line))
        .collect()
}

/// The gRPC servers the file registers as (service, implementing type, line).
pub(crate) fn grpc_servers(f: &FileFacts) -> Vec<(&str, Option<&str>, u32)> {
    f.grpc
        .iter()
        .filter_map(|g| match g {
            GrpcFact::Server {
                service,
                impl_type,
                line,
            } => Some((service.as_str(), impl_type.as_deref(), *line)),
            _ => None,
        })
        .collect()
}

/// The gRPC clients the file builds as (service, variable, line).
pub(crate) fn grpc_clients(f: &FileFacts) -> Vec<(&str, Option<&str>, u32)> {
    f.grpc
        .iter()
        .filter_map(|g| match g {
            GrpcFact::Client { service, var, line } => {
                Some((service.as_str(), var.as_deref(), *line))
            }
            _ => None,
        })
        .collect()
}

/// [`grpc_clients`] owned, as the JVM tests spell them.
pub(crate) fn grpc_clients_owned(f: &FileFacts) -> Vec<(String, Option<String>, u32)> {
    let rows = grpc_clients(f).into_iter();
    rows.map(|(s, v, l)| (s.to_string(), v.map(str::to_string), l))
        .collect()
}

/// The file's imports as (module, line).
pub(crate) fn import_lines(f: &FileFacts) -> Vec<(&str, u32)> {
    f.imports
        .iter()
        .map(|i| (i.module.as_str(), i.line))
        .collect()
}

/// The file's imports as (module, alias, line).
pub(crate) fn import_aliases(f: &FileFacts) -> Vec<(&str, Option<&str>, u32)> {
    f.imports
        .iter()
        .map(|i| (i.module.as_str(), i.alias.as_deref(), i.line))
        .collect()
}

/// The file's imports as (module, names, alias).
pub(crate) fn import_names(f: &FileFacts) -> Vec<(&str, Vec<String>, Option<&str>)> {
    f.imports
        .iter()
        .map(|i| (i.module.as_str(), i.names.clone(), i.alias.as_deref()))
        .collect()
}

/// The file's imports as (imported name, local name) pairs of names bound under another name.
pub(crate) fn import_renames(f: &FileFacts) -> Vec<(&str, &str)> {
    f.imports
        .iter()
        .flat_map(|i| i.renamed.iter().map(|(a, b)| (a.as_str(), b.as_str())))
        .collect()
}

// ---- Script extractors (PHP, Python, Ruby): shared assertions ----

/// Asserts that the file's HTTP calls are `want`, each as (method, URL as the evaluator read
/// it, line): every call of `want` has a method.
#[track_caller]
pub(crate) fn assert_http_calls(f: &FileFacts, want: &[(&str, &str, u32)]) {
    let want: Vec<(Option<&str>, String, u32)> = want
        .iter()
        .map(|&(m, u, l)| (Some(m), u.to_string(), l))
        .collect();
    assert_eq!(http_calls_borrowed(f), want);
}

/// A gRPC client fact, for comparing with `f.grpc` whole.
pub(crate) fn grpc_client_fact(service: &str, var: Option<&str>, line: u32) -> GrpcFact {
    GrpcFact::Client {
        service: service.into(),
        var: var.map(str::to_string),
        line,
    }
}

/// A gRPC call fact, for comparing with `f.grpc` whole.
pub(crate) fn grpc_call_fact(
    service: Option<&str>,
    receiver: &str,
    method: &str,
    line: u32,
) -> GrpcFact {
    GrpcFact::Call {
        service: service.map(str::to_string),
        receiver: receiver.into(),
        method: method.into(),
        line,
    }
}

/// A gRPC server fact, for comparing with `f.grpc` whole.
pub(crate) fn grpc_server_fact(service: &str, impl_type: Option<&str>, line: u32) -> GrpcFact {
    GrpcFact::Server {
        service: service.into(),
        impl_type: impl_type.map(str::to_string),
        line,
    }
}

// ---- Declarations: shared rows and assertions (TypeScript, Swift and the other C-family
// extractors) ----

/// A symbol as (name, kind, line, end line, container).
pub(crate) type DeclRow<'a> = (&'a str, SymbolKind, u32, u32, Option<&'a str>);

/// The file's symbols as [`DeclRow`]s, in order.
pub(crate) fn decl_rows(f: &FileFacts) -> Vec<DeclRow<'_>> {
    f.symbols
        .iter()
        .map(|s| {
            (
                s.name.as_str(),
                s.kind,
                s.line,
                s.end_line,
                s.container.as_deref(),
            )
        })
        .collect()
}

/// The file's symbols named `name`, as [`DeclRow`]s.
pub(crate) fn decls_named<'f>(f: &'f FileFacts, name: &str) -> Vec<DeclRow<'f>> {
    decl_rows(f).into_iter().filter(|d| d.0 == name).collect()
}

/// Asserts that each row of `want` is the one symbol of its name the file declares.
#[track_caller]
pub(crate) fn assert_declared_once(f: &FileFacts, want: &[DeclRow]) {
    for row in want {
        assert_eq!(decls_named(f, row.0), [*row], "symbol {}", row.0);
    }
}

// ---- JVM and script extractors: shared finders (added by the lang de-duplication) ----

/// The file's first constructor; panics with the file's symbols when there is none.
pub(crate) fn constructor(f: &FileFacts) -> &Symbol {
    f.symbols
        .iter()
        .find(|s| s.kind == SymbolKind::Constructor)
        .unwrap_or_else(|| panic!("no constructor in {:#?}", f.symbols))
}

/// Asserts that the file declares no symbol named any of `names`, naming the one it does.
#[track_caller]
pub(crate) fn assert_no_syms(f: &FileFacts, names: &[&str]) {
    for name in names {
        assert!(!has_sym(f, name), "{name} is a symbol: {:#?}", f.symbols);
    }
}

/// The file's configuration properties as (key, value, line).
pub(crate) fn properties(f: &FileFacts) -> Vec<(&str, &str, u32)> {
    f.properties
        .iter()
        .map(|p| (p.key.as_str(), p.value.as_str(), p.line))
        .collect()
}

/// Asserts that the file's configuration properties are `want`, each as (key, value, line).
#[track_caller]
pub(crate) fn assert_properties(f: &FileFacts, want: &[(&str, &str, u32)]) {
    assert_eq!(properties(f), want);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::facts::Language;
    use crate::index::lang::extract;

    /// One idiom, every language that has it: a name imported under another local name
    /// records both, so references to the local name reach the imported declaration.
    #[test]
    fn every_language_records_names_imported_under_another_name() {
        type Case<'a> = (Language, &'a str, &'a str, &'a [(&'a str, &'a str)]);
        let cases: &[Case] = &[
            (
                Language::Python,
                "app/main.py",
                "from app.api import router as orders_router, health\nfrom cfg import (BASE as API,)\n",
                &[("router", "orders_router"), ("BASE", "API")],
            ),
            (
                Language::TypeScript,
                "src/app.ts",
                "import { router as orders, health } from './orders';\nexport { a as b } from './ab';\n",
                &[("router", "orders"), ("a", "b")],
            ),
            (
                Language::JavaScript,
                "src/app.js",
                "const { BASE: api, other } = require('./config');\n",
                &[("BASE", "api")],
            ),
            (
                Language::Rust,
                "src/main.rs",
                "use crate::config::BASE as API;\nuse crate::routes::{orders as o, health};\n",
                &[("BASE", "API"), ("orders", "o")],
            ),
            (
                Language::Kotlin,
                "src/App.kt",
                "import com.acme.Config.BASE as API\nimport com.acme.Other\n",
                &[("BASE", "API")],
            ),
            (
                Language::Scala,
                "src/App.scala",
                "import com.acme.{Base => Api, Other}\nimport com.acme.conf.Url as U\n",
                &[("Base", "Api"), ("Url", "U")],
            ),
            (
                Language::Php,
                "src/app.php",
                "<?php\nuse App\\{Client as Http, Other};\n",
                &[("Client", "Http")],
            ),
        ];
        for (lang, path, src, want) in cases {
            let f = extract(*lang, path, src);
            assert_eq!(import_renames(&f), want.to_vec(), "{lang:?}: {src}");
        }
    }

    /// A name imported as itself is not a rename.
    #[test]
    fn a_name_imported_as_itself_is_not_renamed() {
        let cases: &[(Language, &str, &str)] = &[
            (Language::Python, "a.py", "from m import x as x\n"),
            (
                Language::TypeScript,
                "a.ts",
                "import { x as x } from './m';\n",
            ),
            (Language::Rust, "a.rs", "use m::x as _;\nuse m::{y as y};\n"),
            (Language::Kotlin, "a.kt", "import m.X as X\n"),
        ];
        for (lang, path, src) in cases {
            let f = extract(*lang, path, src);
            assert!(import_renames(&f).is_empty(), "{lang:?}: {src}");
        }
    }
}
