//! A gitignore matcher with git's exact semantics.
