//! Path jail, secret masking, prompt-injection neutralisation and stop rules (SPEC §7).

pub mod injection;
pub mod jail;
pub mod mask;
pub mod policy;
