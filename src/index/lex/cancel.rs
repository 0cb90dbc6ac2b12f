//! Cooperative cancellation of one file's extraction.
//!
//! A thread cannot be stopped from outside, so an extraction that runs past the per-file time
//! cap is asked to stop: the indexer raises the worker's [`Cancel`] flag, and the lexer and
//! the extractors' main loops poll [`cancelled`] (through [`Every`], a thread-local read and a
//! relaxed load every few hundred steps) and return what they have. The indexer has already
//! listed the file as rejected and drops that partial result, so the abandoned thread ends
//! within moments instead of running on for as long as the runaway input makes it.
//!
//! Extractors stay pure functions of their text: outside an indexing worker no flag is set
//! and [`cancelled`] is always false.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

thread_local! {
    static CURRENT: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// A stop request for the work running on one thread, raised from another.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    #[cfg(test)]
    /// A flag not raised yet.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Asks the work under [`Cancel::scope`] to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    #[cfg(test)]
    /// True once [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Runs `f` with this flag as the one [`cancelled`] reads on this thread (the previous
    /// one is put back afterwards, also on a panic).
    pub fn scope<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Restore(Option<Arc<AtomicBool>>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let prev = self.0.take();
                CURRENT.with(|c| *c.borrow_mut() = prev);
            }
        }
        let prev = CURRENT.with(|c| c.borrow_mut().replace(self.0.clone()));
        let _restore = Restore(prev);
        f()
    }
}

/// True when the work on this thread was asked to stop (never outside a [`Cancel::scope`]).
#[inline(never)]
pub fn cancelled() -> bool {
    CURRENT.with(|c| {
        c.borrow()
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
    })
}

/// A loop's poll of [`cancelled`], done once every 256 steps so it costs nothing measurable.
#[derive(Debug, Default)]
pub struct Every(u32);

impl Every {
    /// A poll that looks at the flag on its 256th step.
    pub fn new() -> Every {
        Every(0)
    }

    /// True when the loop should stop (checked every 256th call). Always inlined: the lexer
    /// calls it once per byte, and at opt-level "z" a call each was 2% of a cold index.
    #[inline(always)]
    pub fn stop(&mut self) -> bool {
        self.0 = self.0.wrapping_add(1);
        self.0.is_multiple_of(256) && cancelled()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_is_seen_only_inside_its_scope_and_on_its_thread() {
        assert!(!cancelled());
        let c = Cancel::new();
        c.cancel();
        assert!(c.is_cancelled());
        c.scope(|| {
            assert!(cancelled());
            // Another thread has no flag.
            std::thread::spawn(|| assert!(!cancelled())).join().unwrap();
            // A nested scope wins, then the outer one is back.
            Cancel::new().scope(|| assert!(!cancelled()));
            assert!(cancelled());
        });
        assert!(!cancelled());
        let _ = std::panic::catch_unwind(|| c.scope(|| panic!("inside")));
        assert!(!cancelled(), "restored after a panic");
    }

    #[test]
    fn every_polls_once_in_256_steps() {
        let c = Cancel::new();
        c.cancel();
        c.scope(|| {
            let mut e = Every::new();
            let steps = (1..=1000).find(|_| e.stop());
            assert_eq!(steps, Some(256));
        });
        let mut e = Every::new();
        assert!((0..1000).all(|_| !e.stop()), "no flag, no stop");
    }
}
