//! Workspace id and socket naming.
