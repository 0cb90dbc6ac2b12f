//! This process's stdin and stdout as async byte streams for the framing actor.
//!
//! A pipe or a socket (what MCP clients hand a server: Node's child processes get Unix socket
//! pairs, most other clients pipes) is put in non-blocking mode and registered with the smol
//! reactor, so the thread that runs the session reads and writes it itself: no thread hop
//! between a frame arriving and its answer leaving. Anything else — a regular file, a terminal,
//! `/dev/null` — goes through `smol::Unblock` and its helper thread, as does stdout when it is
//! the same file as stderr (a non-blocking stdout would then make log writes fail with
//! `EAGAIN`). The original status flags are put back when a stream is dropped, so a shell that
//! shares the file description never inherits a non-blocking descriptor from us.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_lite::io::{AsyncRead, AsyncWrite};

/// Boxed input: one instance of the session code serves every kind of stream.
pub type Input = Box<dyn AsyncRead + Unpin + Send>;
/// Boxed output (see [`Input`]).
pub type Output = Box<dyn AsyncWrite + Unpin + Send>;

/// Stdin and stdout for the session, each on the reactor when it can be.
pub fn streams() -> (Input, Output) {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let input: Input = match OnReactor::new(std::io::stdin().as_fd(), None) {
            Some(r) => Box::new(r),
            None => Box::new(smol::Unblock::new(std::io::stdin())),
        };
        let stderr = std::io::stderr();
        let output: Output = match OnReactor::new(std::io::stdout().as_fd(), Some(stderr.as_fd())) {
            Some(r) => Box::new(r),
            None => Box::new(smol::Unblock::new(std::io::stdout())),
        };
        tracing::debug!(target: "mesh::framing", "stdio ready");
        (input, output)
    }
    #[cfg(not(unix))]
    {
        (
            Box::new(smol::Unblock::new(std::io::stdin())),
            Box::new(smol::Unblock::new(std::io::stdout())),
        )
    }
}

/// A pipe or socket on the reactor: a duplicate of the descriptor (closing it leaves the
/// original open) in non-blocking mode, with the flags to restore.
#[cfg(unix)]
struct OnReactor {
    io: smol::Async<std::fs::File>,
    fd: std::os::fd::RawFd,
    flags: i32,
}

#[cfg(unix)]
impl OnReactor {
    /// `None` when `fd` is not a pipe or socket, or is the same file as `not_same_as`.
    fn new(
        fd: std::os::fd::BorrowedFd<'_>,
        not_same_as: Option<std::os::fd::BorrowedFd<'_>>,
    ) -> Option<OnReactor> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let file = std::fs::File::from(fd.try_clone_to_owned().ok()?);
        let meta = file.metadata().ok()?;
        if !(meta.file_type().is_fifo() || meta.file_type().is_socket()) {
            return None;
        }
        if let Some(other) = not_same_as {
            let other = std::fs::File::from(other.try_clone_to_owned().ok()?);
            let other = other.metadata().ok()?;
            if (other.dev(), other.ino()) == (meta.dev(), meta.ino()) {
                return None;
            }
        }
        let flags = crate::sys::status_flags(fd.as_raw_fd())?;
        let io = smol::Async::new(file).ok()?;
        Some(OnReactor {
            io,
            fd: fd.as_raw_fd(),
            flags,
        })
    }
}

#[cfg(unix)]
impl Drop for OnReactor {
    fn drop(&mut self) {
        crate::sys::set_status_flags(self.fd, self.flags);
    }
}

#[cfg(unix)]
impl AsyncRead for OnReactor {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

#[cfg(unix)]
impl AsyncWrite for OnReactor {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_close(cx)
    }
}
