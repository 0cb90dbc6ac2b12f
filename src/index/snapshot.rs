//! The immutable, shared index snapshot.
