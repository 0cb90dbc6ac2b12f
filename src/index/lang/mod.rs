//! One extractor per language: pure functions from file text to [`FileFacts`]. Each language
//! file exposes `pub fn extract(path: &str, text: &str) -> FileFacts`, where `path` is the
//! root-relative path with `/` (used for generated-code and test detection, never read).

use super::facts::{FileFacts, Language};

/// Extracts the facts of one file. Unknown or not-yet-supported languages give empty facts.
pub fn extract(lang: Language, path: &str, text: &str) -> FileFacts {
    match lang {
        Language::Protobuf => protobuf::extract(path, text),
        Language::Markdown => markdown::extract(path, text),
        Language::Yaml => yaml::extract(path, text),
        Language::Properties => properties::extract(path, text),
        _ => FileFacts::default(),
    }
}

pub mod markdown;
pub mod properties;
pub mod protobuf;
pub mod yaml;
