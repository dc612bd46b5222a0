//! What the host holds on one run's behalf: the program's calls still running ([`Calls`]),
//! their answers ([`Answer`]), and the bytes, lines, clock readings and draws held against
//! the run's `memory_bytes` ([`Held`]).

use std::collections::HashMap;

use serde_json::Value;
use tokio::sync::mpsc;

use super::Ended;
use super::frames::Outbox;
use crate::output::Output;
use crate::{CallAnswer, CodeFailureKind};

/// A call's answer, from its reply.
pub(super) struct Answer {
    /// The id the host gave the call.
    pub(super) host: u64,
    /// The child's id for it, which the reply carries.
    pub(super) child: u64,
    pub(super) result: Result<Value, String>,
}

/// The program's calls still running, by the child's id for them. The child's id is only a
/// token to echo in the reply: the host gives each call an id of its own, so an answer is
/// matched to the call it started, and a child id that is still running cannot name a second
/// call (the run ends). The calls' work is the [`CodeHost`]'s: nothing here runs it.
///
/// [`CodeHost`]: crate::CodeHost
#[derive(Default)]
pub(super) struct Calls {
    pub(super) running: HashMap<u64, Running>,
    /// The host's id for the next call.
    next: u64,
}

/// A call still running.
pub(super) struct Running {
    /// The host's id for it.
    id: u64,
    pub(super) tool: String,
    /// The size of its frame: its arguments' JSON text, held until the call ends.
    bytes: usize,
}

impl Calls {
    /// Records call `child`, whose answer `answer` sends through `done` when the host gives it.
    pub(super) fn start(
        &mut self,
        child: u64,
        tool: String,
        bytes: usize,
        answer: CallAnswer,
        done: &mpsc::UnboundedSender<Answer>,
    ) {
        self.next += 1;
        let host = self.next;
        let running = Running {
            id: host,
            tool,
            bytes,
        };
        self.running.insert(child, running);
        let done = done.clone();
        answer.on_answer(move |result| {
            let result = result.map_err(|f| f.message().to_owned());
            let _ = done.send(Answer {
                host,
                child,
                result,
            });
        });
    }

    /// Forgets the call `answer` answers and returns the bytes it held, if it is the one
    /// running under that id.
    pub(super) fn finish(&mut self, answer: &Answer) -> Option<usize> {
        match self.running.get(&answer.child) {
            Some(running) if running.id == answer.host => {
                self.running.remove(&answer.child).map(|r| r.bytes)
            }
            _ => None,
        }
    }
}

/// What the host holds on one run's behalf that grows with what the program does and that no
/// other limit bounds, held to the run's `memory_bytes`: they are memory spent for the run,
/// outside the child where its own limit counts. The run fails as
/// [`CodeFailureKind::Memory`] as soon as together they pass it:
/// - the replies the child has not read (a program that calls without ever letting its event
///   loop read would otherwise pile them up in the host without end);
/// - the arguments of the calls still running (their frames' bytes), which the host's calls
///   hold until they end;
/// - one `String` per captured log line (the lines' text counts in `max_output_bytes`, but an
///   empty line costs the host a line all the same);
/// - in a replayable run, one `f64` per clock reading, which the host keeps for the run's
///   journal (a program that reads the clock in a loop would otherwise grow it without end),
///   and each draw of random bytes, its bytes and a `Vec` (24 bytes), kept for the same
///   journal.
///
/// Backpressure is no answer here: a child blocked writing a call while the host waits for it
/// to read its replies is a deadlock that ends only at the deadline. The frame being read is
/// bounded by the frame limit, a partial log line by `max_output_bytes`.
pub(super) struct Held {
    limit: usize,
    /// Bytes of the frames of the calls still running.
    pub(super) args: usize,
    /// Log lines captured.
    pub(super) lines: usize,
    /// Clock readings reported (a replayable run's).
    pub(super) readings: usize,
    /// Draws of random bytes reported (a replayable run's; one whose pieces are still coming
    /// included), and their bytes.
    pub(super) draws: usize,
    pub(super) drawn: usize,
}

impl Held {
    pub(super) fn new(limit: usize) -> Self {
        Held {
            limit,
            args: 0,
            lines: 0,
            readings: 0,
            draws: 0,
            drawn: 0,
        }
    }

    /// The run's end, a [`CodeFailureKind::Memory`] failure, once the host holds more than the
    /// limit (with the replies still in `outbox`).
    pub(super) fn check(&self, outbox: &Outbox, output: &mut Output) -> Option<Ended> {
        let message = self.exceeded(outbox.waiting())?;
        Some(Ended::Completed(Err(output.fail(
            CodeFailureKind::Memory,
            message,
            None,
            None,
        ))))
    }

    /// The failure message when, with `replies` bytes of replies not written to the child,
    /// the host holds more than the limit.
    fn exceeded(&self, replies: usize) -> Option<String> {
        let per_line = std::mem::size_of::<String>();
        let per_reading = std::mem::size_of::<f64>();
        let lines = self.lines.saturating_mul(per_line);
        let readings = self.readings.saturating_mul(per_reading);
        let per_draw = std::mem::size_of::<Vec<u8>>();
        let drawn = self
            .draws
            .saturating_mul(per_draw)
            .saturating_add(self.drawn);
        let total = replies
            .saturating_add(self.args)
            .saturating_add(lines)
            .saturating_add(readings)
            .saturating_add(drawn);
        if total <= self.limit {
            return None;
        }
        let largest = replies.max(self.args).max(lines).max(readings).max(drawn);
        let advice = if replies == largest {
            "a program must read the replies of its calls (await them) as they come"
        } else if self.args == largest {
            "a program must let its calls end (await them) before it starts more"
        } else if lines == largest {
            "the program printed too many lines"
        } else if readings == largest {
            "the program read the clock too often (a run that can pause for approval keeps \
             every reading for its replay)"
        } else {
            "the program drew too many random bytes (a run that can pause for approval keeps \
             every draw for its replay)"
        };
        // Only a replayable run reports readings: other runs' messages do not mention them.
        let clock = if self.readings > 0 {
            format!(
                ", {} clock readings ({per_reading} bytes each)",
                self.readings
            )
        } else {
            String::new()
        };
        // Nor of draws.
        let entropy = if self.draws > 0 {
            format!(
                ", {} draws of random bytes ({} bytes, and {per_draw} bytes each)",
                self.draws, self.drawn
            )
        } else {
            String::new()
        };
        Some(format!(
            "the host held {total} bytes for this run, more than its memory limit \
             (memory_bytes = {}): {replies} bytes of tool replies the program has not read, {} \
             bytes of arguments of calls still running, {} log lines ({per_line} bytes each; \
             their text counts in max_output_bytes){clock}{entropy}; {advice}",
            self.limit, self.args, self.lines
        ))
    }
}
