//! The crawler: walks the roots honouring `.gitignore`, excludes and the parser guard.
