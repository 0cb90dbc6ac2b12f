//! One extractor per language: pure functions from file text to facts.
