//! Optional persistent SQLite cache of extracted facts.
