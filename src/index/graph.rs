//! Resolution of per-file facts into one cross-service graph.
