//! The framing actor: newline-delimited JSON in, newline-delimited JSON out.
//!
//! A reader task splits the input into frames and a writer task owns the output; both are joined
//! to the session loop by bounded `async-channel` queues of [`QUEUE_CAPACITY`], so a flooding
//! client meets backpressure instead of unbounded memory. The writer is the only code that
//! writes to the server's stdout (or socket); it flushes after every frame.
//!
//! The reader never ends a session because of one bad frame: invalid UTF-8 becomes
//! [`Inbound::InvalidUtf8`] and a line longer than [`MAX_FRAME_BYTES`] is discarded up to its
//! newline and reported as [`Inbound::Oversized`]; a trailing `\r` is dropped.

use futures_lite::io::BufWriter;
use futures_lite::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Capacity of the inbound and outbound frame queues.
pub const QUEUE_CAPACITY: usize = 64;
/// The longest frame we accept: 8 MiB.
pub const MAX_FRAME_BYTES: usize = 8 * 1024 * 1024;

/// Bytes of frames the inbound queue may hold at once (one larger frame is always let
/// through): without it, 64 queued lines of up to 8 MiB each could park 512 MiB per client
/// while the session loop applies back-pressure.
pub const MAX_QUEUED_BYTES: usize = 8 * 1024 * 1024;

/// One unit the reader hands to the session loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inbound {
    /// A complete line of valid UTF-8 (without its line terminator; never empty).
    Frame(String),
    /// A line that was not valid UTF-8.
    InvalidUtf8,
    /// A line over [`MAX_FRAME_BYTES`], discarded up to its newline.
    Oversized,
}

/// Reads frames from `input` into `tx` until end of input or until the receiver goes away.
pub async fn read_frames<R: AsyncRead + Unpin>(mut input: R, tx: async_channel::Sender<Inbound>) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut line: Vec<u8> = Vec::new();
    let mut discarding = false;
    let mut queued = QueuedBytes(0);
    loop {
        let n = match input.read(&mut buf).await {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                tracing::debug!(target: "mesh::framing", "input read failed: {e}");
                break;
            }
        };
        if n == 0 {
            // End of input: a last line without a newline still counts.
            if !discarding && let Some(item) = finish(&mut line) {
                if matches!(item, Inbound::Frame(_)) {
                    crate::stages::frame_read();
                }
                queued.make_room(&tx, &item).await;
                let _ = tx.send(item).await;
            }
            tracing::debug!(target: "mesh::framing", "input closed");
            break;
        }
        for (i, segment) in buf[..n].split(|&b| b == b'\n').enumerate() {
            if i > 0 {
                // The segment before this one ended with a newline: a frame is complete.
                let item = if discarding {
                    discarding = false;
                    Some(Inbound::Oversized)
                } else {
                    finish(&mut line)
                };
                if let Some(item) = item {
                    if matches!(item, Inbound::Frame(_)) {
                        crate::stages::frame_read();
                    }
                    queued.make_room(&tx, &item).await;
                    if tx.send(item).await.is_err() {
                        return;
                    }
                }
            }
            if !discarding {
                if line.len() + segment.len() > MAX_FRAME_BYTES {
                    discarding = true;
                    line = Vec::new();
                } else {
                    line.extend_from_slice(segment);
                }
            }
        }
    }
}

/// Bytes of frames sent since the queue was last seen empty: an upper bound of what it holds.
struct QueuedBytes(usize);

impl QueuedBytes {
    /// Waits until `item` fits within [`MAX_QUEUED_BYTES`] of queued frames (an empty queue
    /// always takes it), then counts it.
    async fn make_room(&mut self, tx: &async_channel::Sender<Inbound>, item: &Inbound) {
        let len = match item {
            Inbound::Frame(s) => s.len(),
            _ => 0,
        };
        if tx.is_empty() {
            self.0 = 0;
        }
        while self.0 > 0 && self.0 + len > MAX_QUEUED_BYTES {
            smol::Timer::after(std::time::Duration::from_millis(1)).await;
            if tx.is_empty() || tx.is_closed() {
                self.0 = 0;
            }
        }
        self.0 += len;
    }
}

/// Turns the accumulated bytes of one line into an [`Inbound`] (`None` for a blank line),
/// leaving `line` empty.
fn finish(line: &mut Vec<u8>) -> Option<Inbound> {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    let bytes = std::mem::take(line);
    match String::from_utf8(bytes) {
        Ok(s) if s.trim().is_empty() => None,
        Ok(s) => Some(Inbound::Frame(s)),
        Err(_) => Some(Inbound::InvalidUtf8),
    }
}

/// Writes every frame from `rx` to `output`, one line each, flushing after every frame. Ends
/// when all senders are gone (after writing everything queued) or when the output fails (a
/// closed stdout), which it reports by returning `false`.
pub async fn write_frames<W: AsyncWrite + Unpin>(
    output: W,
    rx: async_channel::Receiver<String>,
) -> bool {
    let mut out = BufWriter::with_capacity(64 * 1024, output);
    while let Ok(frame) = rx.recv().await {
        crate::stages::picked(&frame);
        let mut ok = out.write_all(frame.as_bytes()).await.is_ok();
        if ok && !frame.ends_with('\n') {
            ok = out.write_all(b"\n").await.is_ok();
        }
        if ok {
            crate::stages::sending(&frame);
            ok = out.flush().await.is_ok();
            crate::stages::written(&frame);
        }
        if !ok {
            tracing::debug!(target: "mesh::framing", "output closed; stopping the writer");
            rx.close();
            return false;
        }
    }
    let _ = out.flush().await;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &[u8]) -> Vec<Inbound> {
        smol::block_on(async {
            let (tx, rx) = async_channel::bounded(QUEUE_CAPACITY);
            let data = input.to_vec();
            let reader =
                smol::spawn(
                    async move { read_frames(futures_lite::io::Cursor::new(data), tx).await },
                );
            let mut out = Vec::new();
            while let Ok(f) = rx.recv().await {
                out.push(f);
            }
            reader.await;
            out
        })
    }

    #[test]
    fn splits_lines_and_tolerates_crlf_and_blank_lines() {
        let got = frames(b"{\"a\":1}\r\n\n\r\n{\"b\":2}\n{\"c\":3}");
        assert_eq!(
            got,
            vec![
                Inbound::Frame("{\"a\":1}".into()),
                Inbound::Frame("{\"b\":2}".into()),
                Inbound::Frame("{\"c\":3}".into()),
            ]
        );
    }

    #[test]
    fn invalid_utf8_is_one_bad_frame_not_the_end() {
        let got = frames(b"\xff\xfe\n{\"ok\":1}\n");
        assert_eq!(
            got,
            vec![Inbound::InvalidUtf8, Inbound::Frame("{\"ok\":1}".into())]
        );
    }

    #[test]
    fn oversized_line_is_discarded_up_to_its_newline() {
        let mut input = vec![b'x'; MAX_FRAME_BYTES + 10];
        input.extend_from_slice(b"\n{\"ok\":1}\n");
        let got = frames(&input);
        assert_eq!(
            got,
            vec![Inbound::Oversized, Inbound::Frame("{\"ok\":1}".into())]
        );
    }

    #[test]
    fn writer_adds_newlines_and_reports_closed_output() {
        smol::block_on(async {
            let (tx, rx) = async_channel::bounded(4);
            tx.send("a".to_string()).await.unwrap();
            tx.send("b\n".to_string()).await.unwrap();
            drop(tx);
            let mut sink = Vec::new();
            assert!(write_frames(&mut sink, rx).await);
            assert_eq!(sink, b"a\nb\n");
        });
    }
}
