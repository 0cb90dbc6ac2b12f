//! framing
