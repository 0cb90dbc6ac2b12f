//! sys
