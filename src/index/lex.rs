//! The lexer layer: comments, strings and nesting for each language family.
