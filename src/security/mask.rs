//! Key-name based secret masking for snippets and configuration values.
