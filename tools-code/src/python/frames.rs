//! The bytes on a run's socket: a frame is a 4-byte big-endian length and a JSON body. What the
//! host writes to the child waits in an [`Outbox`] until the socket takes it; what it reads
//! is cut into frames in place in an [`Inbox`], each bounded by [`frame_limit`] before its
//! body is read.

use serde_json::Value;

use crate::CodeLimits;

/// Room in a frame beyond what the run's limits count: the frame's own JSON around the value,
/// and a log piece (the runner sends long lines in pieces of 64 Ki characters, at most 6 bytes
/// each once escaped).
const FRAME_SLACK: usize = 512 * 1024;

/// The largest frame a child may send in a run with these limits and tool names: a result,
/// a log piece or a failure message fits `max_output_bytes` (more would fail the run as
/// `output_limit` anyway), and a call's arguments fit `max_call_bytes` (the runner refuses
/// larger ones in the program). A header announcing more fails the run before its body is read.
pub(super) fn frame_limit(limits: &CodeLimits, tool_names: &[String]) -> usize {
    let longest_name = tool_names.iter().map(String::len).max().unwrap_or(0);
    let call = limits
        .max_call_bytes
        .saturating_add(longest_name.saturating_mul(6));
    limits
        .max_output_bytes
        .max(call)
        .saturating_add(FRAME_SLACK)
}

/// The runner's first frame on a run's socket, whole (header and body): the child's sandbox is
/// in place and it has not read its program yet (`runner/00_channel.py` `Channel.ready`).
pub(crate) const READY_FRAME: [u8; 17] = *b"\0\0\0\x0d{\"t\":\"ready\"}";

/// Frames for the child not written yet. A frame is written at once when the socket takes
/// it (no writer task, no channel hop); what the socket does not take waits here, frame by
/// frame (never copied into one buffer, so what it holds is what is waiting), until the socket
/// is writable again, which the run's `select!` watches: the host never blocks on a child that
/// does not read. What waits here counts against the run's `memory_bytes` ([`Held`]).
///
/// [`Held`]: super::held::Held
#[derive(Default)]
pub(super) struct Outbox {
    frames: std::collections::VecDeque<Vec<u8>>,
    /// How much of the first frame is written.
    start: usize,
    /// The bytes not written yet.
    waiting: usize,
    /// The socket failed: the child is gone, and the read side reports it.
    broken: bool,
}

impl Outbox {
    /// The most frames one write hands the socket.
    const SLICES: usize = 64;

    pub(super) fn send(&mut self, writer: &tokio::net::unix::OwnedWriteHalf, frame: Vec<u8>) {
        if self.broken {
            return;
        }
        self.waiting += frame.len();
        self.frames.push_back(frame);
        if self.frames.len() == 1 {
            self.flush(writer);
        }
    }

    pub(super) fn is_waiting(&self) -> bool {
        !self.frames.is_empty()
    }

    /// The bytes not written yet.
    pub(super) fn waiting(&self) -> usize {
        self.waiting
    }

    /// Writes what the socket takes without blocking.
    pub(super) fn flush(&mut self, writer: &tokio::net::unix::OwnedWriteHalf) {
        while !self.frames.is_empty() {
            let mut slices = [std::io::IoSlice::new(&[]); Self::SLICES];
            let mut count = 0;
            for (i, frame) in self.frames.iter().take(Self::SLICES).enumerate() {
                let from = if i == 0 { self.start } else { 0 };
                slices[i] = std::io::IoSlice::new(&frame[from..]);
                count = i + 1;
            }
            match writer.try_write_vectored(&slices[..count]) {
                Ok(written) if written > 0 => self.advance(written),
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => break,
                // Nothing taken of a non-empty write, or an error: the child is gone.
                Ok(_) | Err(_) => {
                    self.broken = true;
                    self.frames.clear();
                    self.start = 0;
                    self.waiting = 0;
                }
            }
        }
    }

    /// Drops `written` bytes from the front.
    fn advance(&mut self, mut written: usize) {
        self.waiting -= written;
        while let Some(front) = self.frames.front() {
            let left = front.len() - self.start;
            if written < left {
                self.start += written;
                return;
            }
            written -= left;
            self.frames.pop_front();
            self.start = 0;
        }
    }
}

/// The reply frame for call `id`, serializing the value once.
pub(super) fn reply_frame(id: u64, result: Result<Value, String>) -> Vec<u8> {
    let mut body = format!("{{\"id\":{id},\"ok\":").into_bytes();
    match result {
        Ok(value) => {
            body.extend_from_slice(b"true,\"value\":");
            if serde_json::to_writer(&mut body, &value).is_err() {
                body.extend_from_slice(b"null");
            }
            tools_schema::deep::discard(value);
        }
        Err(message) => {
            body.extend_from_slice(b"false,\"message\":");
            let _ = serde_json::to_writer(&mut body, &message);
        }
    }
    body.push(b'}');
    let len = u32::try_from(body.len()).unwrap_or(u32::MAX);
    let mut out = Vec::with_capacity(body.len() + 4);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&body);
    out
}

pub(super) fn frame(value: &Value) -> Vec<u8> {
    let body = serde_json::to_vec(value).unwrap_or_default();
    let len = u32::try_from(body.len()).unwrap_or(u32::MAX);
    let mut out = Vec::with_capacity(body.len() + 4);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// The bytes read from a child, parsed into frames in place. Reading into it with `read_buf`
/// is cancel-safe (what was read stays here), so the run's `select!` reads the socket itself,
/// without a reader task and a channel hop per frame.
#[derive(Default)]
pub(super) struct Inbox {
    pub(super) buffer: Vec<u8>,
    /// Where the next frame starts in `buffer`.
    start: usize,
}

impl Inbox {
    /// Frames are read in chunks of at least this many bytes.
    const CHUNK: usize = 64 * 1024;
    /// The most a header makes the buffer reserve ahead of the bytes that arrived.
    const MAX_RESERVE: usize = 4 * 1024 * 1024;

    /// Makes room for the next read (a full `Vec` would otherwise read 64 bytes at a time).
    pub(super) fn make_room(&mut self) {
        if self.buffer.capacity() - self.buffer.len() < Self::CHUNK / 4 {
            self.buffer.reserve(Self::CHUNK);
        }
    }

    /// The range of the next whole frame's body in `buffer`, if one has arrived; `Err(length)`
    /// as soon as a header announces more than `limit` bytes, before any of the body is kept.
    pub(super) fn next_frame(
        &mut self,
        limit: usize,
    ) -> Result<Option<std::ops::Range<usize>>, usize> {
        let available = &self.buffer[self.start..];
        let Some(header) = available.first_chunk::<4>() else {
            return Ok(None);
        };
        let len = u32::from_be_bytes(*header) as usize;
        if len > limit {
            return Err(len);
        }
        if available.len() < 4 + len {
            // Room for what is announced, a bounded step at a time: memory follows the bytes
            // that really arrive, not the header's promise.
            let missing = 4 + len - available.len();
            self.buffer.reserve(missing.min(Self::MAX_RESERVE));
            return Ok(None);
        }
        let body = self.start + 4..self.start + 4 + len;
        self.start = body.end;
        Ok(Some(body))
    }

    /// Drops the frames already handled.
    pub(super) fn compact(&mut self) {
        if self.start > 0 {
            self.buffer.drain(..self.start);
            self.start = 0;
        }
    }
}
