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

// ---------------------------------------------------------------------------------------------
// Daemon section (meshd and the `run` proxy): file-creation mask, advisory file locks, and the
// seccomp filter install. Kept apart from the signal and process helpers above.
// ---------------------------------------------------------------------------------------------

#[cfg(unix)]
mod daemon_ffi {
    use std::os::raw::{c_int, c_long, c_ulong};
    unsafe extern "C" {
        pub fn umask(mask: u32) -> u32;
        pub fn flock(fd: c_int, operation: c_int) -> c_int;
        #[cfg(target_os = "linux")]
        pub fn prctl(option: c_int, ...) -> c_int;
        #[cfg(target_os = "linux")]
        pub fn syscall(number: c_long, ...) -> c_long;
    }
    pub const LOCK_EX: c_int = 2;
    pub const LOCK_NB: c_int = 4;
    #[cfg(target_os = "linux")]
    pub const PR_SET_NO_NEW_PRIVS: c_int = 38;
    #[cfg(target_os = "linux")]
    pub const SECCOMP_SET_MODE_FILTER: c_ulong = 1;
    #[cfg(target_os = "linux")]
    pub const SECCOMP_FILTER_FLAG_TSYNC: c_ulong = 1;
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    pub const NR_SECCOMP: c_long = 317;
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "aarch64", target_arch = "riscv64")
    ))]
    pub const NR_SECCOMP: c_long = 277;
}

/// Sets the process file-creation mask and returns the previous one (Unix; a no-op returning
/// 0 elsewhere). The mask is process-wide: call it only while no other thread creates files.
pub fn set_umask(mask: u32) -> u32 {
    #[cfg(unix)]
    {
        // SAFETY: umask(2) cannot fail and only swaps a process attribute.
        unsafe { daemon_ffi::umask(mask) }
    }
    #[cfg(not(unix))]
    {
        let _ = mask;
        0
    }
}

/// Takes an exclusive advisory lock on `file` without blocking. `Ok(true)` when this process
/// now holds it, `Ok(false)` when another process does. The lock lives as long as the file
/// description (closing the file or the process ending releases it, also on SIGKILL).
pub fn try_lock_exclusive(file: &std::fs::File) -> std::io::Result<bool> {
    #[cfg(unix)]
    {
        use std::os::unix::io::AsRawFd;
        // SAFETY: flock(2) on a file descriptor we own for the duration of the call.
        let rc = unsafe {
            daemon_ffi::flock(file.as_raw_fd(), daemon_ffi::LOCK_EX | daemon_ffi::LOCK_NB)
        };
        if rc == 0 {
            return Ok(true);
        }
        let err = std::io::Error::last_os_error();
        if err.kind() == std::io::ErrorKind::WouldBlock {
            Ok(false)
        } else {
            Err(err)
        }
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        Ok(true)
    }
}

/// One classic BPF instruction (`struct sock_filter`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BpfInstruction {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

/// Installs `program` as a seccomp filter on every thread of the process (`TSYNC`), after
/// setting `no_new_privs`. Linux on x86_64, aarch64 and riscv64 only; elsewhere it returns an
/// `Unsupported` error.
pub fn install_seccomp_filter(program: &[BpfInstruction]) -> std::io::Result<()> {
    #[cfg(all(
        target_os = "linux",
        any(
            target_arch = "x86_64",
            target_arch = "aarch64",
            target_arch = "riscv64"
        )
    ))]
    {
        #[repr(C)]
        struct SockFprog {
            len: u16,
            filter: *const BpfInstruction,
        }
        let len = u16::try_from(program.len())
            .map_err(|_| std::io::Error::other("seccomp program longer than 65535 instructions"))?;
        let prog = SockFprog {
            len,
            filter: program.as_ptr(),
        };
        // SAFETY: prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) only sets a per-thread flag.
        let rc = unsafe {
            daemon_ffi::prctl(
                daemon_ffi::PR_SET_NO_NEW_PRIVS,
                1 as std::os::raw::c_ulong,
                0 as std::os::raw::c_ulong,
                0 as std::os::raw::c_ulong,
                0 as std::os::raw::c_ulong,
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: seccomp(2) reads `prog` and the instructions it points to, both alive for
        // the duration of the call; the kernel copies the program.
        let rc = unsafe {
            daemon_ffi::syscall(
                daemon_ffi::NR_SECCOMP,
                daemon_ffi::SECCOMP_SET_MODE_FILTER,
                daemon_ffi::SECCOMP_FILTER_FLAG_TSYNC,
                &prog as *const SockFprog,
            )
        };
        match rc {
            0 => Ok(()),
            rc if rc > 0 => Err(std::io::Error::other(format!(
                "thread {rc} could not be synchronised to the seccomp filter"
            ))),
            _ => Err(std::io::Error::last_os_error()),
        }
    }
    #[cfg(not(all(
        target_os = "linux",
        any(
            target_arch = "x86_64",
            target_arch = "aarch64",
            target_arch = "riscv64"
        )
    )))]
    {
        let _ = program;
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "seccomp filters are supported on Linux x86_64, aarch64 and riscv64 only",
        ))
    }
}
