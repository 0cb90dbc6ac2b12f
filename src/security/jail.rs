//! The path jail: every path argument must resolve inside a configured root.
