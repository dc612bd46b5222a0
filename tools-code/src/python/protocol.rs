//! The host's side of the runner's protocol: [`drive`] talks to one run child from its start
//! frame to its outcome, and treats every frame ([`ChildMessage`]) as untrusted.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::frames::{Inbox, Outbox, frame, frame_limit, reply_frame};
use super::held::{Answer, Calls, Held};
use super::{Ended, internal, sandbox};
use crate::output::Output;
use crate::{CallReply, CodeFailureKind, CodeHost, CodeLimits, from_hex, to_hex};
use tools_schema::excerpt::cut;

/// A frame from the child.
#[derive(Deserialize)]
#[serde(tag = "t", rename_all = "lowercase")]
pub(super) enum ChildMessage {
    /// The child's sandbox is in place; what follows may be the program's.
    Ready,
    Call {
        /// The child's token for the call, echoed in the reply; checked, never trusted.
        id: Value,
        name: String,
        args: Value,
    },
    Log {
        text: String,
        end: bool,
    },
    /// Clock readings of a replayable run, in milliseconds since the Unix epoch, in the order
    /// the program made them (sent before the frame that follows them).
    Clock {
        ms: Vec<f64>,
    },
    /// Draws of random bytes of a replayable run, each as hexadecimal text, in the order the
    /// program made them (sent before the frame that follows them). With `more`, the last one
    /// goes on in the next `entropy` frame (a large draw travels in pieces).
    Entropy {
        draws: Vec<String>,
        #[serde(default)]
        more: bool,
    },
    Done {
        #[serde(default)]
        result: Option<Value>,
    },
    Error {
        kind: String,
        message: String,
        #[serde(default)]
        line: Option<u32>,
        #[serde(default)]
        column: Option<u32>,
    },
}

/// Talks to one child until the run ends; never leaves a task behind.
pub(super) async fn drive(
    socket: std::os::unix::net::UnixStream,
    program: &str,
    code: Option<String>,
    host: Arc<dyn CodeHost>,
    limits: &CodeLimits,
    cancel: &CancellationToken,
) -> Ended {
    let deadline = tokio::time::Instant::now() + limits.timeout;
    if let Err(error) = socket.set_nonblocking(true) {
        return Ended::Completed(Err(internal(format!("run socket: {error}"))));
    }
    let stream = match tokio::net::UnixStream::from_std(socket) {
        Ok(stream) => stream,
        Err(error) => return Ended::Completed(Err(internal(format!("run socket: {error}")))),
    };
    let (mut reader, writer) = stream.into_split();
    let mut outbox = Outbox::default();

    let tool_names = host.tool_names();
    let frame_limit = frame_limit(limits, &tool_names);
    let mut start = serde_json::json!({
        "program": program,
        "tools": tool_names,
        "limits": {
            "memory_bytes": limits.memory_bytes,
            "stack_bytes": limits.stack_bytes,
            "max_call_bytes": limits.max_call_bytes,
            "max_output_bytes": limits.max_output_bytes,
        },
    });
    // Compiled by the zygote when the pre-run analysis read the program.
    if let Some(code) = code {
        start["code"] = Value::String(code);
    }
    // A run its host may replay: the seed of `random`, the clock readings and the draws of
    // random bytes to give back.
    let replayable = match host.determinism() {
        Some(determinism) => {
            let entropy: Vec<String> = determinism.entropy.iter().map(|d| to_hex(d)).collect();
            start["determinism"] = serde_json::json!({
                "seed": determinism.seed,
                "clock": determinism.clock,
                "entropy": entropy,
            });
            true
        }
        None => false,
    };
    // Only the run's tools are callable: a call frame naming anything else (only a program
    // that writes to the protocol socket itself can send one) is answered here.
    let tool_names: std::collections::HashSet<String> = tool_names.into_iter().collect();
    outbox.send(&writer, frame(&start));

    let (done_tx, mut done_rx) = mpsc::unbounded_channel::<Answer>();
    let mut calls = Calls::default();
    let mut held = Held::new(limits.memory_bytes);
    let mut inbox = Inbox::default();
    let mut output = Output::new(limits.max_output_bytes);
    let mut partial = String::new();
    // The first pieces of a draw of random bytes whose rest is still to come.
    let mut drawing: Option<Vec<u8>> = None;
    // Until the child's ready frame, only the runner writes to the socket.
    let mut ready = false;

    let ended = loop {
        inbox.make_room();
        tokio::select! {
            biased;
            () = cancel.cancelled() => {
                break Ended::Stopped(CodeFailureKind::Aborted, "the run was cancelled".to_owned());
            }
            () = tokio::time::sleep_until(deadline) => {
                break Ended::Stopped(
                    CodeFailureKind::Timeout,
                    format!("the program did not finish within {} ms", limits.timeout.as_millis()),
                );
            }
            Ok(()) = writer.writable(), if outbox.is_waiting() => {
                outbox.flush(&writer);
            }
            Some(answer) = done_rx.recv() => {
                // Only the call the host started under that id (it is still running: a
                // duplicate id ends the run).
                match calls.finish(&answer) {
                    Some(bytes) => {
                        held.args -= bytes;
                        outbox.send(&writer, reply_frame(answer.child, answer.result));
                        if let Some(ended) = held.check(&outbox, &mut output) {
                            break ended;
                        }
                    }
                    None => {
                        if let Ok(value) = answer.result {
                            tools_schema::deep::discard(value);
                        }
                    }
                }
            }
            read = reader.read_buf(&mut inbox.buffer) => {
                match read {
                    Ok(0) => {
                        let failure = output.fail(
                            CodeFailureKind::Internal,
                            "the Python process ended without reporting an outcome".to_owned(),
                            None,
                            None,
                        );
                        break Ended::ChildGone(failure);
                    }
                    Ok(_) => {}
                    Err(error) => break Ended::Completed(Err(internal(format!(
                        "reading from the Python process: {error}"
                    )))),
                }
                let mut ended = None;
                while ended.is_none() {
                    let body = match inbox.next_frame(frame_limit) {
                        Ok(Some(body)) => body,
                        Ok(None) => break,
                        Err(announced) => {
                            let message = format!(
                                "the Python process announced a {announced}-byte message, more \
                                 than this run's limits allow ({frame_limit} bytes, from \
                                 max_output_bytes and max_call_bytes); it was not read"
                            );
                            let failure =
                                output.fail(CodeFailureKind::OutputLimit, message, None, None);
                            ended = Some(Ended::Completed(Err(failure)));
                            break;
                        }
                    };
                    let frame_bytes = body.len();
                    let message = match serde_json::from_slice::<ChildMessage>(&inbox.buffer[body]) {
                        Ok(message) => message,
                        Err(error) => {
                            ended = Some(protocol_error(
                                &mut output,
                                &format!(
                                    "it wrote a message the runner does not send ({})",
                                    cut(&error.to_string())
                                ),
                            ));
                            break;
                        }
                    };
                    ended = match message {
                        ChildMessage::Ready if ready => Some(protocol_error(
                            &mut output,
                            "it wrote a frame the runner only sends before the program starts \
                             (ready)",
                        )),
                        ChildMessage::Ready => {
                            ready = true;
                            None
                        }
                        ChildMessage::Call { id, name, args } => {
                            let Some(id) = id.as_u64() else {
                                tools_schema::deep::discard(args);
                                let what = format!(
                                    "it sent a call with the id {}; a call id is an integer \
                                     from 0 to {}",
                                    cut(&id.to_string()),
                                    u64::MAX
                                );
                                ended = Some(protocol_error(&mut output, &what));
                                break;
                            };
                            if let Some(running) = calls.running.get(&id) {
                                tools_schema::deep::discard(args);
                                let what = format!(
                                    "it sent call id {id} while call {id} was still running (to \
                                     {:?}); a call id names one call until its reply",
                                    cut(&running.tool)
                                );
                                ended = Some(protocol_error(&mut output, &what));
                                break;
                            }
                            if tool_names.contains(&name) {
                                // A call the host answers inside `call` is answered at once;
                                // the answer of one that waits (the host runs it, so waiting
                                // calls overlap) comes back through `done`.
                                let (reply, answer) = CallReply::pair();
                                host.call(&name, args, reply);
                                match answer.try_take() {
                                    Some(result) => {
                                        let result = result.map_err(|f| f.message().to_owned());
                                        outbox.send(&writer, reply_frame(id, result));
                                    }
                                    None => {
                                        held.args += frame_bytes;
                                        calls.start(id, name, frame_bytes, answer, &done_tx);
                                    }
                                }
                            } else {
                                tools_schema::deep::discard(args);
                                let message = format!(
                                    "no tool named {:?} is bound in this run",
                                    cut(&name)
                                );
                                outbox.send(&writer, reply_frame(id, Err(message)));
                            }
                            held.check(&outbox, &mut output)
                        }
                        ChildMessage::Log { text, end } => {
                            partial.push_str(&text);
                            if !end {
                                (!output.fits(partial.len()))
                                    .then(|| Ended::Completed(Err(output.output_limit())))
                            } else if output.push(std::mem::take(&mut partial)) {
                                held.lines += 1;
                                held.check(&outbox, &mut output)
                            } else {
                                Some(Ended::Completed(Err(output.output_limit())))
                            }
                        }
                        ChildMessage::Clock { ms } if replayable => {
                            held.readings += ms.len();
                            for ms in ms {
                                host.clock_read(ms);
                            }
                            held.check(&outbox, &mut output)
                        }
                        ChildMessage::Clock { .. } => Some(protocol_error(
                            &mut output,
                            "it reported clock readings, which the runner reports only in a run \
                             its host replays",
                        )),
                        ChildMessage::Entropy { draws, more } if replayable => {
                            let last = draws.len();
                            let mut bad = false;
                            for (i, text) in draws.iter().enumerate() {
                                let Some(bytes) = from_hex(text) else {
                                    bad = true;
                                    break;
                                };
                                held.drawn = held.drawn.saturating_add(bytes.len());
                                let draw = match drawing.take() {
                                    Some(mut first) => {
                                        first.extend_from_slice(&bytes);
                                        first
                                    }
                                    None => {
                                        held.draws += 1;
                                        bytes
                                    }
                                };
                                if more && i + 1 == last {
                                    drawing = Some(draw);
                                } else {
                                    host.entropy_read(&draw);
                                }
                            }
                            if bad {
                                Some(protocol_error(
                                    &mut output,
                                    "it reported random bytes that are not hexadecimal text",
                                ))
                            } else {
                                held.check(&outbox, &mut output)
                            }
                        }
                        ChildMessage::Entropy { .. } => Some(protocol_error(
                            &mut output,
                            "it reported random bytes, which the runner reports only in a run \
                             its host replays",
                        )),
                        ChildMessage::Done { result } => {
                            let outcome = match result {
                                None => output.complete(None),
                                Some(value) => {
                                    let len =
                                        serde_json::to_vec(&value).map_or(usize::MAX, |v| v.len());
                                    output.complete(Some((value, len)))
                                }
                            };
                            Some(Ended::Completed(outcome))
                        }
                        ChildMessage::Error { kind, message, line, column } => {
                            Some(child_error(&mut output, ready, &kind, message, line, column))
                        }
                    };
                }
                if let Some(ended) = ended {
                    break ended;
                }
                inbox.compact();
            }
        }
    };

    // Settlement: stop listening to the calls still running and have the host stop them and
    // wait until each has ended, so none outlives the run. (Frames after the one that ended the
    // run are never read: a call the program sent after its outcome never starts.)
    calls.running.clear();
    host.settle().await;

    match ended {
        Ended::Stopped(kind, message) => {
            if !partial.is_empty() {
                let _ = output.push(std::mem::take(&mut partial));
            }
            Ended::Completed(Err(output.fail(kind, message, None, None)))
        }
        other => other,
    }
}

/// The failure a child's `error` frame reports. A sandbox refusal is the host's own words (it
/// tells the operator to change the policy), so it is believed only before the child's ready
/// frame, when nothing of the program has run; the other kinds are failures the program can
/// bring about itself, so a forged one says nothing the program could not. A kind the runner
/// never sends is the program's protocol error.
fn child_error(
    output: &mut Output,
    ready: bool,
    kind: &str,
    message: String,
    line: Option<u32>,
    column: Option<u32>,
) -> Ended {
    let (kind, message) = match kind {
        "sandbox" if !ready => (CodeFailureKind::Internal, sandbox::child_refusal(&message)),
        "sandbox" => {
            return protocol_error(
                output,
                "it wrote a frame the runner only sends before the program starts (a sandbox \
                 refusal); the sandbox was in place when the program started",
            );
        }
        "syntax" => (CodeFailureKind::Syntax, message),
        "runtime" => (CodeFailureKind::Runtime, message),
        "memory" => (CodeFailureKind::Memory, message),
        "invalid_result" => (
            CodeFailureKind::InvalidResult,
            format!("the program returned a value that is not JSON: {message}"),
        ),
        // The result's JSON text passed max_output_bytes: the host words it.
        "output_limit" => return Ended::Completed(Err(output.output_limit())),
        other => {
            let what = format!(
                "it wrote an error of kind {:?}, which the runner does not send",
                cut(other)
            );
            return protocol_error(output, &what);
        }
    };
    Ended::Completed(Err(output.fail(kind, message, line, column)))
}

/// A run that ends because the program wrote to the runner's socket what the runner would not:
/// a [`CodeFailureKind::Runtime`] failure of the program, never in the host's own words.
fn protocol_error(output: &mut Output, what: &str) -> Ended {
    let message = format!(
        "the program broke the runner's protocol (only the runner writes to its socket): {what}"
    );
    Ended::Completed(Err(output.fail(
        CodeFailureKind::Runtime,
        message,
        None,
        None,
    )))
}
