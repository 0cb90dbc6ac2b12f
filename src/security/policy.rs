//! Stop rules: optional refusals for questions about guarded paths.
