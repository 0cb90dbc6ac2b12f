//! The daemon accept loop.
