//! Plain data: what one file contributes to the index.
