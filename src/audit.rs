//! The hash-chained SQLite audit trail (SPEC §6).
