//! Path jail, secret masking, prompt-injection neutralisation and stop rules (docs/ARCHITECTURE.md §6).
//!
//! Each piece is a small pure function or value type, so tools call them directly:
//! [`Jail::resolve`] before opening any path argument, [`mask_text`] on every snippet,
//! [`neutralise`] on docs at index time and [`decide`] before running a tool.

pub mod injection;
pub mod jail;
pub mod mask;
pub mod policy;

#[cfg(test)]
pub use injection::FILTERED;
pub use injection::{mark_invisible, neutralise, strip_hidden_html};
pub use jail::{Jail, PROHIBITED_ROOTS};
pub use mask::{LineContext, mask_line, mask_shapes, mask_text};
pub use policy::{Decision, GovernanceMode, StopRules, decide};
