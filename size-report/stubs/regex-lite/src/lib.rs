//! The API mesh-mcp uses from `regex-lite`, without an engine: every pattern fails to compile.
//! Only `size-report/run` builds against it, to measure what the real crate adds.

use std::fmt;

/// Never constructed: [`Regex::new`] always fails.
pub struct Regex(());

/// The one error: no engine in this stand-in.
#[derive(Debug)]
pub struct Error(());

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("regex engine left out of this build")
    }
}

impl std::error::Error for Error {}

/// A match (never produced).
pub struct Match<'h> {
    text: &'h str,
    start: usize,
}

impl<'h> Match<'h> {
    pub fn as_str(&self) -> &'h str {
        self.text
    }
    pub fn start(&self) -> usize {
        self.start
    }
}

/// Capture groups (never produced).
pub struct Captures<'h>(Vec<Option<Match<'h>>>);

impl<'h> Captures<'h> {
    pub fn get(&self, i: usize) -> Option<Match<'h>> {
        self.0.get(i).and_then(|m| m.as_ref()).map(|m| Match { text: m.text, start: m.start })
    }
}

impl Regex {
    pub fn new(_pattern: &str) -> Result<Regex, Error> {
        Err(Error(()))
    }
    pub fn captures_iter<'r, 'h>(&'r self, _haystack: &'h str) -> std::iter::Empty<Captures<'h>> {
        std::iter::empty()
    }
}
