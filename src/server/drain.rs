//! The drain barrier's wait group (ARCHITECTURE §2.5): one type for every place that must
//! wait, at shutdown, for the work it started — a session for its calls, batches and audit
//! rows ([`crate::server`]), `meshd` for its sessions ([`crate::daemon::serve`]).
//!
//! Built on a `bounded(1)` channel that is never sent on: every unit of work holds a clone of
//! the sender inside a [`Busy`] token, and the receiver's `recv` returns (with an error) once
//! the last clone is gone.

use std::time::Duration;

/// A wait group: hand a [`Busy`] token to each unit of work, then [`Drain::wait`] (or
/// [`Drain::wait_at_most`]) until every token has been dropped.
pub struct Drain {
    tx: async_channel::Sender<()>,
    rx: async_channel::Receiver<()>,
}

/// One unit of work in flight: the [`Drain`] it came from waits until it is dropped.
#[derive(Clone)]
pub struct Busy {
    _held: async_channel::Sender<()>,
}

impl Default for Drain {
    fn default() -> Self {
        Self::new()
    }
}

impl Drain {
    /// An empty wait group.
    pub fn new() -> Self {
        let (tx, rx) = async_channel::bounded::<()>(1);
        Drain { tx, rx }
    }

    /// A token for one more unit of work; hold it until the work is done.
    pub fn token(&self) -> Busy {
        Busy {
            _held: self.tx.clone(),
        }
    }

    /// Waits until every token handed out has been dropped.
    pub async fn wait(self) {
        let Drain { tx, rx } = self;
        drop(tx);
        let _ = rx.recv().await;
    }

    /// Waits as [`Drain::wait`] does, at most `limit`; whether every token was dropped in time.
    pub async fn wait_at_most(self, limit: Duration) -> bool {
        let Drain { tx, rx } = self;
        drop(tx);
        futures_lite::future::or(
            async {
                let _ = rx.recv().await;
                true
            },
            async {
                smol::Timer::after(limit).await;
                false
            },
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_for_the_last_token() {
        let drain = Drain::new();
        let first = drain.token();
        let second = first.clone();
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = done.clone();
        let worker = std::thread::spawn(move || {
            drop(first);
            std::thread::sleep(Duration::from_millis(20));
            flag.store(true, std::sync::atomic::Ordering::Release);
            drop(second);
        });
        smol::block_on(drain.wait());
        assert!(done.load(std::sync::atomic::Ordering::Acquire));
        worker.join().unwrap();
    }

    #[test]
    fn an_empty_group_is_drained_at_once_and_a_held_token_times_out() {
        assert!(smol::block_on(
            Drain::new().wait_at_most(Duration::from_secs(5))
        ));
        let drain = Drain::new();
        let _held = drain.token();
        assert!(!smol::block_on(
            drain.wait_at_most(Duration::from_millis(10))
        ));
    }
}
