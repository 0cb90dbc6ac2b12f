//! A small, strict TOML reader for our configuration file; values keep their line numbers.
