//! The handful of Unix system calls we need, declared by hand against the C library that std
//! already links (no `libc` crate): termination signals turned into an async event, the
//! caller's uid, and process liveness.

use std::sync::OnceLock;

#[cfg(unix)]
mod ffi {
    use std::os::raw::{c_int, c_void};
    unsafe extern "C" {
        pub fn signal(signum: c_int, handler: usize) -> usize;
        pub fn pipe(fds: *mut c_int) -> c_int;
        pub fn write(fd: c_int, buf: *const c_void, count: usize) -> isize;
        pub fn read(fd: c_int, buf: *mut c_void, count: usize) -> isize;
        pub fn getuid() -> u32;
        pub fn kill(pid: c_int, sig: c_int) -> c_int;
    }
    pub const SIGINT: c_int = 2;
    pub const SIGTERM: c_int = 15;
}

#[cfg(unix)]
static SIGNAL_PIPE_WRITE: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

#[cfg(unix)]
extern "C" fn on_termination_signal(sig: std::os::raw::c_int) {
    // Only async-signal-safe work here: one write(2) to the self-pipe.
    let fd = SIGNAL_PIPE_WRITE.load(std::sync::atomic::Ordering::Relaxed);
    if fd >= 0 {
        let byte = sig as u8;
        // SAFETY: writing one byte from a valid stack buffer to a pipe fd we own.
        unsafe {
            ffi::write(fd, (&byte as *const u8).cast(), 1);
        }
    }
}

/// A receiver that yields once per SIGINT/SIGTERM. The first call installs the handlers; every
/// call returns a clone of the same receiver. Used by the server loops to start the drain
/// barrier instead of dying with queued responses unwritten.
pub fn termination_signals() -> async_channel::Receiver<i32> {
    static RX: OnceLock<async_channel::Receiver<i32>> = OnceLock::new();
    RX.get_or_init(|| {
        let (tx, rx) = async_channel::unbounded();
        #[cfg(unix)]
        {
            let mut fds = [0i32; 2];
            // SAFETY: pipe(2) fills the two-element array we pass.
            if unsafe { ffi::pipe(fds.as_mut_ptr()) } == 0 {
                SIGNAL_PIPE_WRITE.store(fds[1], std::sync::atomic::Ordering::Relaxed);
                let read_fd = fds[0];
                let spawned = std::thread::Builder::new()
                    .name("mesh-signals".into())
                    .spawn(move || {
                        loop {
                            let mut byte = 0u8;
                            // SAFETY: reading one byte into a valid stack buffer.
                            let n = unsafe { ffi::read(read_fd, (&mut byte as *mut u8).cast(), 1) };
                            if n == 1 {
                                if tx.send_blocking(i32::from(byte)).is_err() {
                                    break;
                                }
                            } else if n == 0 {
                                break;
                            }
                        }
                    });
                if spawned.is_ok() {
                    let handler = on_termination_signal as extern "C" fn(std::os::raw::c_int);
                    // SAFETY: installing a handler that only performs write(2).
                    unsafe {
                        ffi::signal(ffi::SIGINT, handler as usize);
                        ffi::signal(ffi::SIGTERM, handler as usize);
                    }
                }
            }
        }
        #[cfg(not(unix))]
        drop(tx);
        rx
    })
    .clone()
}

/// The real user id of this process (0 on non-Unix).
pub fn uid() -> u32 {
    #[cfg(unix)]
    {
        // SAFETY: getuid(2) cannot fail.
        unsafe { ffi::getuid() }
    }
    #[cfg(not(unix))]
    {
        0
    }
}

/// True when a process with this pid exists (signal 0 probe).
pub fn process_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        // SAFETY: kill(2) with signal 0 only checks for existence and permission.
        let Ok(pid) = i32::try_from(pid) else {
            return false;
        };
        pid > 0 && unsafe { ffi::kill(pid, 0) } == 0
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        false
    }
}

/// Sends SIGTERM to a process; true when the signal was delivered.
pub fn terminate(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = i32::try_from(pid) else {
            return false;
        };
        // SAFETY: kill(2) with SIGTERM on a positive pid.
        pid > 0 && unsafe { ffi::kill(pid, ffi::SIGTERM) } == 0
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        false
    }
}
