//! One extractor per language: pure functions from file text to [`FileFacts`]. Each language
//! file exposes `pub fn extract(path: &str, text: &str) -> FileFacts`, where `path` is the
//! root-relative path with `/` (used for generated-code and test detection, never read).
//!
//! Source languages are lexed first ([`super::lex`]): extractors search the masked code, so
//! nothing inside a comment or a string is ever taken for a declaration or a call, and read
//! topic names and route paths from the string literals by offset. [`common`] holds what
//! several languages share (generated-code detection, path and topic literals).

use super::facts::{FileFacts, Language};

/// Extracts the facts of one file.
///
/// Line breaks are `\n`, `\r\n` and a lone `\r` alike: the text is handed on with every lone
/// `\r` as `\n` (same offsets), so no extractor reads an old-Mac file as one line.
pub fn extract(lang: Language, path: &str, text: &str) -> FileFacts {
    extract_normalized(lang, path, &super::lex::normalize_breaks(text))
}

/// [`extract`] of a text whose lone `\r` are already `\n`: the indexer normalizes each file
/// once for the extractor, the section texts and the patterns, and each search for a `\r`
/// is a pass over the whole file.
pub(crate) fn extract_normalized(lang: Language, path: &str, text: &str) -> FileFacts {
    let mut facts = match lang {
        Language::Go => go::extract(path, text),
        Language::Java => java::extract(path, text),
        Language::Kotlin => kotlin::extract(path, text),
        Language::Scala => scala::extract(path, text),
        Language::CSharp => csharp::extract_normalized(path, text),
        Language::Python => python::extract(path, text),
        Language::TypeScript | Language::JavaScript => typescript::extract(path, text),
        Language::Rust => rust::extract(path, text),
        Language::C | Language::Cpp => cpp::extract(path, text),
        Language::Ruby => ruby::extract(path, text),
        Language::Php => php::extract(path, text),
        Language::Swift => swift::extract(path, text),
        Language::Protobuf => protobuf::extract(path, text),
        Language::Markdown => markdown::extract(path, text),
        Language::Yaml => yaml::extract(path, text),
        Language::Properties => properties::extract(path, text),
        Language::MsBuild => msbuild::extract(path, text),
    };
    if !matches!(
        lang,
        Language::Protobuf
            | Language::Markdown
            | Language::Yaml
            | Language::Properties
            | Language::MsBuild
    ) && common::is_generated(path, text)
    {
        facts.generated = true;
    }
    route_symbols(&mut facts);
    facts
}

/// Every route served in code is also a declaration of kind `endpoint` named `METHOD /path`
/// (OpenAPI documents declare theirs already), so `smart_search` answers "which routes exist"
/// the way it answers "where is X declared".
fn route_symbols(facts: &mut FileFacts) {
    use super::facts::{Symbol, SymbolKind};
    if facts.symbols.iter().any(|s| s.kind == SymbolKind::Endpoint) {
        return;
    }
    let routes: Vec<Symbol> = facts
        .routes()
        .map(|(method, path, handler, line)| Symbol {
            name: format!("{method} {path}"),
            kind: SymbolKind::Endpoint,
            line,
            end_line: line,
            doc_line: None,
            container: handler.map(str::to_string),
        })
        .collect();
    if routes.is_empty() {
        return;
    }
    facts.symbols.extend(routes);
    crate::order::sort_by_key(&mut facts.symbols, |s| s.line);
}

#[cfg(test)]
mod aws_event_tests;
pub mod bind;
mod cfamily;
pub mod common;
pub mod cpp;
pub mod csharp;
mod deployment;
pub mod go;
#[cfg(test)]
mod hostile_input_tests;
#[cfg(test)]
mod http_call_tests;
pub mod java;
pub mod jvm;
pub mod kotlin;
pub mod markdown;
pub mod msbuild;
pub mod php;
pub mod properties;
pub mod protobuf;
pub mod python;
pub mod ruby;
pub mod rust;
pub mod scala;
mod script;
pub mod swift;
#[cfg(test)]
mod test_support;

#[cfg(test)]
mod line_end_tests {
    use super::*;

    /// Old-Mac `\r` line ends read like `\n` and `\r\n` for every language, through the
    /// one entry point the index uses (Go and Python here; their extractors count `\n`).
    #[test]
    fn old_mac_line_ends_number_lines_like_lf_and_crlf() {
        let cases = [
            (
                Language::Go,
                "a.go",
                "package a\n\n// Doc.\ntype Order struct{}\n\nfunc NewOrder() *Order { return nil }\n",
            ),
            (
                Language::Python,
                "a.py",
                "import os\n\n\nclass Order:\n    def total(self):\n        return 1\n",
            ),
        ];
        for (lang, path, lf) in cases {
            let lines = |text: &str| -> Vec<(String, u32)> {
                extract(lang, path, text)
                    .symbols
                    .iter()
                    .map(|s| (s.name.clone(), s.line))
                    .collect()
            };
            let want = lines(lf);
            assert!(want.iter().any(|(_, l)| *l >= 4), "{path}: {want:?}");
            assert_eq!(lines(&lf.replace('\n', "\r")), want, "{path}");
            assert_eq!(lines(&lf.replace('\n', "\r\n")), want, "{path}");
        }
    }
}
pub mod tokens;
pub mod typescript;
pub mod value;
pub mod yaml;
