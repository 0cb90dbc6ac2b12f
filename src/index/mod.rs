//! The index: crawl, lex, extract, resolve into a graph, publish an immutable snapshot.

pub mod cache;
pub mod crawl;
pub mod facts;
pub mod graph;
pub mod ignore;
pub mod lang;
pub mod lex;
pub mod snapshot;
pub mod watch;
