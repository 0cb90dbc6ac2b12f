//! The handful of Unix system calls we need, declared by hand against the C library that std
//! already links (no `libc` crate): termination signals turned into an async event, the
//! caller's uid, process liveness, and (Linux) inotify for the index watcher.

use std::sync::OnceLock;

#[cfg(unix)]
mod ffi {
    use std::os::raw::{c_int, c_void};
    unsafe extern "C" {
        #[cfg(not(target_os = "linux"))]
        pub fn signal(signum: c_int, handler: usize) -> usize;
        pub fn pipe(fds: *mut c_int) -> c_int;
        pub fn write(fd: c_int, buf: *const c_void, count: usize) -> isize;
        pub fn read(fd: c_int, buf: *mut c_void, count: usize) -> isize;
        pub fn getuid() -> u32;
        pub fn kill(pid: c_int, sig: c_int) -> c_int;
        pub fn fcntl(fd: c_int, cmd: c_int, ...) -> c_int;
    }
    pub const SIGINT: c_int = 2;
    pub const SIGTERM: c_int = 15;

    /// `struct sigaction` as glibc and musl lay it out on Linux: the handler, a 1024-bit
    /// signal mask, the flags, the restorer (set by the C library).
    #[cfg(target_os = "linux")]
    #[repr(C)]
    pub struct SigAction {
        pub handler: usize,
        pub mask: [u64; 16],
        pub flags: c_int,
        pub restorer: usize,
    }
    #[cfg(target_os = "linux")]
    pub const SA_RESTART: c_int = 0x1000_0000;
    #[cfg(target_os = "linux")]
    unsafe extern "C" {
        pub fn sigaction(signum: c_int, act: *const SigAction, old: *mut SigAction) -> c_int;
        pub fn __errno_location() -> *mut c_int;
    }
    pub const F_GETFL: c_int = 3;
    pub const F_SETFL: c_int = 4;
}

/// Marks the calling thread as background work (Linux `SCHED_BATCH`: no wake-up preemption,
/// so when it wakes it waits for its turn instead of interrupting a session's thread). A
/// no-op elsewhere, or when the call fails.
pub fn lower_thread_priority() {
    #[cfg(target_os = "linux")]
    {
        #[repr(C)]
        struct SchedParam {
            priority: std::os::raw::c_int,
        }
        unsafe extern "C" {
            fn sched_setscheduler(
                pid: std::os::raw::c_int,
                policy: std::os::raw::c_int,
                param: *const SchedParam,
            ) -> std::os::raw::c_int;
        }
        const SCHED_BATCH: std::os::raw::c_int = 3;
        let param = SchedParam { priority: 0 };
        // SAFETY: pid 0 is the calling thread; `param` is a valid struct for the call.
        unsafe {
            sched_setscheduler(0, SCHED_BATCH, &param);
        }
    }
}

/// The file status flags (`O_NONBLOCK`, `O_APPEND`, …) of an open file description (Unix).
#[cfg(unix)]
pub fn status_flags(fd: std::os::fd::RawFd) -> Option<i32> {
    // SAFETY: F_GETFL reads a flag word of a descriptor; an invalid one is an error return.
    let flags = unsafe { ffi::fcntl(fd, ffi::F_GETFL) };
    (flags >= 0).then_some(flags)
}

/// Sets the file status flags of an open file description (see [`status_flags`]).
#[cfg(unix)]
pub fn set_status_flags(fd: std::os::fd::RawFd, flags: i32) {
    // SAFETY: F_SETFL with a flag word read by F_GETFL from the same description.
    unsafe {
        ffi::fcntl(fd, ffi::F_SETFL, flags);
    }
}

#[cfg(unix)]
static SIGNAL_PIPE_WRITE: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

#[cfg(unix)]
extern "C" fn on_termination_signal(sig: std::os::raw::c_int) {
    // Only async-signal-safe work here: one write(2) to the self-pipe, with `errno` saved and
    // restored around it, so the interrupted code never sees the handler's error code.
    #[cfg(target_os = "linux")]
    // SAFETY: __errno_location returns this thread's errno slot, valid for the thread's life.
    let saved_errno = unsafe { *ffi::__errno_location() };
    let fd = SIGNAL_PIPE_WRITE.load(std::sync::atomic::Ordering::Relaxed);
    if fd >= 0 {
        let byte = sig as u8;
        // SAFETY: writing one byte from a valid stack buffer to a pipe fd we own.
        unsafe {
            ffi::write(fd, (&byte as *const u8).cast(), 1);
        }
    }
    #[cfg(target_os = "linux")]
    // SAFETY: as above; restores the value read on entry.
    unsafe {
        *ffi::__errno_location() = saved_errno;
    }
}

/// Installs `handler` for `signum` with `sigaction(2)`: the handler stays installed after it
/// runs (no `SA_RESETHAND`), and system calls it interrupts are restarted (`SA_RESTART`), so a
/// signal never surfaces as `EINTR` in another thread's I/O. Elsewhere than Linux, `signal(3)`.
#[cfg(unix)]
fn install_handler(signum: std::os::raw::c_int, handler: extern "C" fn(std::os::raw::c_int)) {
    #[cfg(target_os = "linux")]
    {
        let action = ffi::SigAction {
            handler: handler as usize,
            mask: [0; 16],
            flags: ffi::SA_RESTART,
            restorer: 0,
        };
        // SAFETY: `action` is a valid, fully initialised glibc/musl `struct sigaction` (an
        // empty mask: no other signal is blocked while the handler runs); the old action is
        // not asked for.
        unsafe {
            ffi::sigaction(signum, &action, std::ptr::null_mut());
        }
    }
    #[cfg(not(target_os = "linux"))]
    // SAFETY: installing a handler that only performs write(2).
    unsafe {
        ffi::signal(signum, handler as usize);
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
                    install_handler(ffi::SIGINT, on_termination_signal);
                    install_handler(ffi::SIGTERM, on_termination_signal);
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

// ─────────────────────────────────────────────────────────────────────────────────────────
// inotify (live index updates). Owned by the watcher (`index::watch`); kept apart from the
// signal/process helpers above and the socket/seccomp helpers so each can change alone.
// ─────────────────────────────────────────────────────────────────────────────────────────

/// Linux inotify, declared by hand: an instance with a wake-up pipe, so the watcher thread can
/// block in `poll(2)` with no timeout while nothing is pending (zero CPU when idle) and still
/// be stopped, plus the pure parser of the kernel's event records.
#[cfg(target_os = "linux")]
pub mod inotify {
    use std::ffi::{CString, OsString};
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::raw::{c_char, c_int, c_ulong, c_void};
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    use std::path::Path;
    use std::sync::Arc;
    use std::time::Duration;

    mod ffi {
        use std::os::raw::{c_char, c_int, c_ulong, c_void};

        #[repr(C)]
        pub struct PollFd {
            pub fd: c_int,
            pub events: i16,
            pub revents: i16,
        }

        unsafe extern "C" {
            pub fn inotify_init1(flags: c_int) -> c_int;
            pub fn inotify_add_watch(fd: c_int, path: *const c_char, mask: u32) -> c_int;
            pub fn inotify_rm_watch(fd: c_int, wd: c_int) -> c_int;
            pub fn poll(fds: *mut PollFd, nfds: c_ulong, timeout: c_int) -> c_int;
            pub fn pipe2(fds: *mut c_int, flags: c_int) -> c_int;
            pub fn read(fd: c_int, buf: *mut c_void, count: usize) -> isize;
            pub fn write(fd: c_int, buf: *const c_void, count: usize) -> isize;
        }
    }

    /// `O_NONBLOCK` / `IN_NONBLOCK` (x86, ARM, AArch64, RISC-V).
    const NONBLOCK: c_int = 0o4000;
    /// `O_CLOEXEC` / `IN_CLOEXEC`.
    const CLOEXEC: c_int = 0o2_000_000;
    const POLLIN: i16 = 0x1;

    #[cfg(test)]
    /// File was modified (`write`, `truncate`).
    pub const IN_MODIFY: u32 = 0x0000_0002;
    /// A file opened for writing was closed.
    pub const IN_CLOSE_WRITE: u32 = 0x0000_0008;
    /// An entry was moved out of the watched directory.
    pub const IN_MOVED_FROM: u32 = 0x0000_0040;
    /// An entry was moved into the watched directory.
    pub const IN_MOVED_TO: u32 = 0x0000_0080;
    /// An entry was created in the watched directory.
    pub const IN_CREATE: u32 = 0x0000_0100;
    /// An entry was deleted from the watched directory.
    pub const IN_DELETE: u32 = 0x0000_0200;
    /// The watched directory itself was deleted.
    pub const IN_DELETE_SELF: u32 = 0x0000_0400;
    /// The watched directory itself was moved.
    pub const IN_MOVE_SELF: u32 = 0x0000_0800;
    /// The file system holding the watched directory was unmounted.
    pub const IN_UNMOUNT: u32 = 0x0000_2000;
    /// The kernel queue overflowed: events were lost.
    pub const IN_Q_OVERFLOW: u32 = 0x0000_4000;
    /// The watch was removed (explicitly, or because its directory is gone).
    pub const IN_IGNORED: u32 = 0x0000_8000;
    /// Only watch the path if it is a directory.
    pub const IN_ONLYDIR: u32 = 0x0100_0000;
    /// Do not follow a symbolic link at the path.
    pub const IN_DONT_FOLLOW: u32 = 0x0200_0000;
    /// No events for children after they were unlinked.
    pub const IN_EXCL_UNLINK: u32 = 0x0400_0000;
    /// The subject of the event is a directory.
    pub const IN_ISDIR: u32 = 0x4000_0000;

    /// `ENOSPC` from `inotify_add_watch`: the per-user watch limit
    /// (`/proc/sys/fs/inotify/max_user_watches`) is reached.
    pub const ENOSPC: i32 = 28;

    /// One event record: the watch it came from, what happened, the rename cookie and the
    /// name of the entry inside the watched directory (none for events on the directory).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Event {
        pub wd: i32,
        pub mask: u32,
        pub cookie: u32,
        pub name: Option<OsString>,
    }

    /// What [`Inotify::wait`] saw.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Wait {
        /// Events are ready to read.
        Events,
        /// The [`Waker`] fired.
        Woken,
        /// The timeout passed with nothing to do.
        Timeout,
    }

    /// Parses the packed `struct inotify_event` records the kernel returns from `read(2)`
    /// (`wd: i32, mask: u32, cookie: u32, len: u32, name[len]` with NUL padding), appending
    /// them to `out`. A truncated trailing record is ignored.
    pub fn parse_events(bytes: &[u8], out: &mut Vec<Event>) {
        const HEADER: usize = 16;
        let mut at = 0usize;
        while bytes.len().saturating_sub(at) >= HEADER {
            let word = |i: usize| {
                let b = &bytes[at + i * 4..at + i * 4 + 4];
                [b[0], b[1], b[2], b[3]]
            };
            let wd = i32::from_ne_bytes(word(0));
            let mask = u32::from_ne_bytes(word(1));
            let cookie = u32::from_ne_bytes(word(2));
            let len = u32::from_ne_bytes(word(3)) as usize;
            let Some(end) = (at + HEADER).checked_add(len).filter(|&e| e <= bytes.len()) else {
                break;
            };
            let raw = &bytes[at + HEADER..end];
            let name_len = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
            let name = (name_len > 0).then(|| OsString::from_vec(raw[..name_len].to_vec()));
            out.push(Event {
                wd,
                mask,
                cookie,
                name,
            });
            at = end;
        }
    }

    /// Wakes a thread blocked in [`Inotify::wait`] (clonable, usable from any thread).
    #[derive(Debug, Clone)]
    pub struct Waker(Arc<OwnedFd>);

    impl Waker {
        /// Makes the next (or current) [`Inotify::wait`] return [`Wait::Woken`].
        pub fn wake(&self) {
            let byte = 1u8;
            // SAFETY: writing one byte from a valid stack buffer to a pipe we own; a full
            // pipe (EAGAIN) already guarantees a wake-up.
            unsafe {
                ffi::write(self.0.as_raw_fd(), (&byte as *const u8).cast::<c_void>(), 1);
            }
        }
    }

    /// An inotify instance plus a wake-up pipe. Both descriptors are non-blocking and
    /// close-on-exec, and are closed on drop.
    #[derive(Debug)]
    pub struct Inotify {
        fd: OwnedFd,
        wake_rx: OwnedFd,
        wake_tx: Arc<OwnedFd>,
    }

    impl Inotify {
        /// Creates an instance. Fails with `EMFILE` when the per-user instance limit
        /// (`/proc/sys/fs/inotify/max_user_instances`) is reached, `ENOSYS` without inotify.
        pub fn new() -> io::Result<Inotify> {
            // SAFETY: inotify_init1 takes flags only and returns a new fd or -1.
            let fd = unsafe { ffi::inotify_init1(NONBLOCK | CLOEXEC) };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: fd is a fresh descriptor we own.
            let fd = unsafe { OwnedFd::from_raw_fd(fd) };
            let mut fds: [c_int; 2] = [-1, -1];
            // SAFETY: pipe2 fills the two-element array we pass.
            if unsafe { ffi::pipe2(fds.as_mut_ptr(), NONBLOCK | CLOEXEC) } != 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: both descriptors are fresh and ours.
            let (wake_rx, wake_tx) =
                unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
            Ok(Inotify {
                fd,
                wake_rx,
                wake_tx: Arc::new(wake_tx),
            })
        }

        /// Adds (or updates) a watch on `path`; returns its watch descriptor. Watching the
        /// same inode twice returns the same descriptor.
        pub fn add_watch(&self, path: &Path, mask: u32) -> io::Result<i32> {
            let c_path = CString::new(path.as_os_str().as_bytes())
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in path"))?;
            // SAFETY: a valid NUL-terminated path and our inotify fd.
            let wd = unsafe {
                ffi::inotify_add_watch(self.fd.as_raw_fd(), c_path.as_ptr().cast::<c_char>(), mask)
            };
            if wd < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(wd)
            }
        }

        /// Removes a watch; the kernel then queues an `IN_IGNORED` event for it.
        pub fn rm_watch(&self, wd: i32) -> io::Result<()> {
            // SAFETY: plain syscall on our fd; an unknown wd is reported as EINVAL.
            if unsafe { ffi::inotify_rm_watch(self.fd.as_raw_fd(), wd) } != 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(())
            }
        }

        /// A handle that interrupts [`Inotify::wait`].
        pub fn waker(&self) -> Waker {
            Waker(self.wake_tx.clone())
        }

        /// Blocks until events are readable, the waker fires, or `timeout` passes (`None`:
        /// wait forever, no periodic wake-ups).
        pub fn wait(&self, timeout: Option<Duration>) -> io::Result<Wait> {
            let ms: c_int = match timeout {
                None => -1,
                Some(d) => {
                    // Round up, so a 0.4 ms remainder does not become a busy loop.
                    let ms = d.as_micros().div_ceil(1000);
                    c_int::try_from(ms).unwrap_or(c_int::MAX)
                }
            };
            let mut fds = [
                ffi::PollFd {
                    fd: self.fd.as_raw_fd(),
                    events: POLLIN,
                    revents: 0,
                },
                ffi::PollFd {
                    fd: self.wake_rx.as_raw_fd(),
                    events: POLLIN,
                    revents: 0,
                },
            ];
            loop {
                // SAFETY: two valid pollfd structs.
                let n = unsafe { ffi::poll(fds.as_mut_ptr(), fds.len() as c_ulong, ms) };
                if n < 0 {
                    let e = io::Error::last_os_error();
                    if e.kind() == io::ErrorKind::Interrupted {
                        continue;
                    }
                    return Err(e);
                }
                if n == 0 {
                    return Ok(Wait::Timeout);
                }
                if fds[1].revents != 0 {
                    let mut sink = [0u8; 64];
                    // SAFETY: draining the non-blocking pipe into a stack buffer.
                    while unsafe {
                        ffi::read(
                            self.wake_rx.as_raw_fd(),
                            sink.as_mut_ptr().cast::<c_void>(),
                            sink.len(),
                        )
                    } > 0
                    {}
                    return Ok(Wait::Woken);
                }
                return Ok(Wait::Events);
            }
        }

        /// Reads every queued event without blocking, appending them to `out`.
        pub fn read_events(&self, out: &mut Vec<Event>) -> io::Result<()> {
            // Room for at least one maximal record (16 + NAME_MAX + 1) many times over.
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                // SAFETY: reading into a buffer we own, with its length.
                let n = unsafe {
                    ffi::read(
                        self.fd.as_raw_fd(),
                        buf.as_mut_ptr().cast::<c_void>(),
                        buf.len(),
                    )
                };
                if n < 0 {
                    let e = io::Error::last_os_error();
                    match e.kind() {
                        io::ErrorKind::WouldBlock => return Ok(()),
                        io::ErrorKind::Interrupted => continue,
                        _ => return Err(e),
                    }
                }
                if n == 0 {
                    return Ok(());
                }
                parse_events(&buf[..n as usize], out);
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn record(wd: i32, mask: u32, cookie: u32, name: &[u8], padded: usize) -> Vec<u8> {
            let mut v = Vec::new();
            v.extend_from_slice(&wd.to_ne_bytes());
            v.extend_from_slice(&mask.to_ne_bytes());
            v.extend_from_slice(&cookie.to_ne_bytes());
            v.extend_from_slice(&(padded as u32).to_ne_bytes());
            let mut n = name.to_vec();
            n.resize(padded, 0);
            v.extend_from_slice(&n);
            v
        }

        #[test]
        fn parses_packed_records_with_padding() {
            let mut bytes = record(3, IN_CREATE | IN_ISDIR, 0, b"newdir", 16);
            bytes.extend(record(4, IN_DELETE_SELF, 0, b"", 0));
            bytes.extend(record(3, IN_MOVED_TO, 77, b"a.rs", 8));
            let mut out = Vec::new();
            parse_events(&bytes, &mut out);
            assert_eq!(out.len(), 3);
            assert_eq!(out[0].name.as_deref(), Some(std::ffi::OsStr::new("newdir")));
            assert_eq!(out[0].mask, IN_CREATE | IN_ISDIR);
            assert_eq!((out[1].wd, out[1].name.clone()), (4, None));
            assert_eq!(
                (out[2].cookie, out[2].name.clone()),
                (77, Some("a.rs".into()))
            );
        }

        #[test]
        fn truncated_or_lying_records_are_dropped() {
            let mut bytes = record(1, IN_MODIFY, 0, b"x.go", 8);
            bytes.extend(record(1, IN_MODIFY, 0, b"y.go", 8));
            let mut out = Vec::new();
            parse_events(&bytes[..bytes.len() - 3], &mut out);
            assert_eq!(out.len(), 1);
            let mut lying = record(1, IN_MODIFY, 0, b"", 0);
            lying[12..16].copy_from_slice(&u32::MAX.to_ne_bytes());
            out.clear();
            parse_events(&lying, &mut out);
            assert!(out.is_empty());
        }

        #[test]
        fn sees_a_created_file_and_wakes_up() {
            let dir = crate::scratch::fresh_dir("inotify");
            let ino = Inotify::new().unwrap();
            let wd = ino
                .add_watch(&dir, IN_CREATE | IN_CLOSE_WRITE | IN_ONLYDIR)
                .unwrap();
            assert_eq!(
                ino.wait(Some(Duration::from_millis(1))).unwrap(),
                Wait::Timeout
            );
            std::fs::write(dir.join("a.rs"), "fn a() {}").unwrap();
            assert_eq!(ino.wait(None).unwrap(), Wait::Events);
            let mut out = Vec::new();
            ino.read_events(&mut out).unwrap();
            assert!(out.iter().any(|e| e.wd == wd
                && e.mask & IN_CREATE != 0
                && e.name.as_deref() == Some(std::ffi::OsStr::new("a.rs"))));
            let waker = ino.waker();
            std::thread::spawn(move || waker.wake());
            assert_eq!(ino.wait(None).unwrap(), Wait::Woken);
            ino.rm_watch(wd).unwrap();
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}
