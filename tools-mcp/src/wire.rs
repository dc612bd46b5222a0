//! The wire under both directions: the size limit of one message, the JSON-RPC errors this crate
//! answers with, and the stdio framing.
//!
//! - [`DEFAULT_MAX_MESSAGE_SIZE`] is the one default limit of an incoming message, for serve and
//!   import, over stdio and over HTTP ([`McpServer::max_message_size`](crate::McpServer::max_message_size),
//!   [`ImportOptions::max_message_size`](crate::ImportOptions::max_message_size)).
//! - A message over the limit is never buffered whole: `IdScan` reads it as it streams past,
//!   keeping only its top-level `id` and whether it has a `method`, so the sender of an oversized
//!   request still gets a JSON-RPC error for its id, and an oversized answer fails the call it
//!   answers (with [`codes::MCP_MESSAGE_TOO_LARGE`](crate::codes::MCP_MESSAGE_TOO_LARGE)).
//! - `LineTransport` is the newline-delimited stdio transport of both roles (rmcp's drops an
//!   over-long line without a word, and a malformed one too, so a call waits forever). What it
//!   does with each line that is not a message:
//!
//!   | line | answered with | or, when it is an answer to us |
//!   | --- | --- | --- |
//!   | over the limit, with a method and an id | `-32600` for that id, naming size and limit | |
//!   | over the limit, with an id and no method | | the call it answers fails (too large) |
//!   | over the limit, id unreadable | `-32600`, `"id": null` (serve only) | |
//!   | not JSON | `-32700`, `"id": null` (serve only; import logs it) | |
//!   | JSON, not a valid message | `-32600` for its id, or `"id": null` (serve only) | the call it answers fails (unreadable) |
//!   | a notification the protocol does not define | ignored | |
//!
//!   An error without a readable id is written with `"id": null`, as JSON-RPC 2.0 asks.
//!
//!   On the import's side, a line that lists tools declaring the 2025-11-25 draft's
//!   `execution.taskSupport` has it kept in each tool's `_meta` before rmcp reads it
//!   (the crate's `tasks_draft` module), as rmcp's `Tool` has no place for it.

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::sync::Arc;

use rmcp::model::{ErrorCode, ErrorData, RequestId};
use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// Where an HTTP request came from, in its extensions for the tool call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HttpCaller {
    /// The client's address.
    pub ip: std::net::IpAddr,
}

/// The header that names a 2025-11-25 session.
pub(crate) const SESSION_HEADER: &str = "mcp-session-id";

/// The default limit of one incoming message, in bytes (16 MiB), for serve and import, over
/// stdio and over HTTP.
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 16 * 1024 * 1024;

/// The `data.reason` of the errors this crate makes up for a call whose answer it could not take
/// (too large, or unreadable), so the call's body can tell them from the server's own errors.
pub(crate) const REASON_TOO_LARGE: &str = "tools-mcp/messageTooLarge";
/// See [`REASON_TOO_LARGE`].
pub(crate) const REASON_UNREADABLE: &str = "tools-mcp/unreadableMessage";

/// At most this many error replies wait to be written; past that (a peer that sends garbage and
/// does not read), the replies are dropped rather than queued without bound.
const MAX_PENDING_REPLIES: usize = 64;

/// The longest raw `id` value an oversized message may carry and still be answered.
const MAX_ID_BYTES: usize = 256;
/// The longest raw key the scanner decodes to compare with `id` and `method`.
const MAX_KEY_BYTES: usize = 64;

/// What a message's size was, as far as it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Size {
    /// Exactly this many bytes.
    Exact(u64),
    /// More than the limit; the reader stopped counting (an HTTP client's limit).
    OverLimit,
}

/// The JSON-RPC error for a message over the limit: `-32600`, naming the size and the limit.
/// `what` says which message ("the request", "the answer").
pub(crate) fn too_large(what: &str, size: Size, limit: usize, setting: &str) -> ErrorData {
    let (message, size_json) = match size {
        Size::Exact(n) => (
            format!(
                "{what} is {n} bytes, over the limit of {limit} bytes for one MCP message \
                 ({setting})"
            ),
            json!(n),
        ),
        Size::OverLimit => (
            format!(
                "{what} is larger than the limit of {limit} bytes for one MCP message \
                 ({setting}; reading stopped at the limit)"
            ),
            Value::Null,
        ),
    };
    ErrorData::new(
        ErrorCode::INVALID_REQUEST,
        message,
        Some(json!({"reason": REASON_TOO_LARGE, "size": size_json, "limit": limit})),
    )
}

/// The JSON-RPC parse error (`-32700`) for input that is not JSON.
pub(crate) fn parse_error(detail: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::PARSE_ERROR,
        format!("Parse error: the message is not JSON ({detail})"),
        None,
    )
}

/// The JSON-RPC invalid-request error (`-32600`) for JSON that is not a valid message.
pub(crate) fn invalid_request(detail: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::INVALID_REQUEST,
        format!("Invalid request: {detail}"),
        None,
    )
}

/// The error a call receives when the answer to it could not be read.
fn unreadable_answer(detail: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::INTERNAL_ERROR,
        format!("the answer could not be read as an MCP message: {detail}"),
        Some(json!({"reason": REASON_UNREADABLE})),
    )
}

/// The reason this crate attached to an error it made up (see [`REASON_TOO_LARGE`]), if any.
pub(crate) fn made_up_reason(error: &ErrorData) -> Option<&str> {
    error
        .data
        .as_ref()
        .and_then(|d| d.get("reason"))
        .and_then(Value::as_str)
        .filter(|r| *r == REASON_TOO_LARGE || *r == REASON_UNREADABLE)
}

/// One JSON-RPC error response as a line of JSON text: `"id": null` when the id is unknown.
pub(crate) fn error_json(id: Option<&RequestId>, error: &ErrorData) -> Vec<u8> {
    let id = id.map_or(Value::Null, |id| id.clone().into_json_value());
    let message = json!({"jsonrpc": "2.0", "id": id, "error": error});
    serde_json::to_vec(&message).unwrap_or_else(|_| {
        // An `ErrorData` always serializes; this keeps the path free of a panic anyway.
        br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}"#
            .to_vec()
    })
}

/// Reads the top level of one JSON object as it streams past, in constant memory: its `id` (a
/// number or a string of at most 256 bytes) and whether it has a `method`. Used on a message
/// too large to keep.
#[derive(Debug, Default)]
pub(crate) struct IdScan {
    /// Nesting depth: 0 outside, 1 inside the top-level object.
    depth: usize,
    in_string: bool,
    escaped: bool,
    state: ScanState,
    /// The raw bytes of the key being read (bounded), with its quotes.
    key: Vec<u8>,
    key_long: bool,
    field: Field,
    /// The raw bytes of the `id` value being read (bounded).
    value: Vec<u8>,
    value_long: bool,
    id: Option<RequestId>,
    method: bool,
    bytes: u64,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum ScanState {
    /// Before the top-level `{`.
    #[default]
    Start,
    /// Inside the top level, before a key (or the closing brace).
    Key,
    /// After a key, before its colon.
    Colon,
    /// In a top-level value.
    Value,
    /// The top-level object is closed, or the text is not an object.
    Done,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Field {
    #[default]
    Other,
    Id,
    Method,
}

/// What [`IdScan`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scanned {
    /// The message's `id`, if it had a readable one.
    pub id: Option<RequestId>,
    /// Whether it had a `method` (a request or a notification).
    pub method: bool,
    /// How many bytes were read.
    pub bytes: u64,
}

impl IdScan {
    /// Reads the next bytes of the message.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        self.bytes = self.bytes.saturating_add(bytes.len() as u64);
        let mut i = 0;
        while i < bytes.len() {
            if self.state == ScanState::Done {
                return;
            }
            // Inside a string nobody keeps: skip to its next quote or backslash at once.
            if self.in_string && !self.escaped && !self.keeping() {
                match bytes[i..].iter().position(|b| *b == b'"' || *b == b'\\') {
                    Some(at) => i += at,
                    None => return,
                }
            }
            self.byte(bytes[i]);
            i += 1;
        }
    }

    /// Whether the bytes of the current string are kept (a key, or the `id` value).
    fn keeping(&self) -> bool {
        (self.depth == 1 && self.state == ScanState::Key)
            || (self.state == ScanState::Value && self.field == Field::Id)
    }

    fn keep(&mut self, b: u8) {
        if self.depth == 1 && self.state == ScanState::Key {
            if self.key.len() < MAX_KEY_BYTES {
                self.key.push(b);
            } else {
                self.key_long = true;
            }
        } else if self.state == ScanState::Value && self.field == Field::Id {
            if self.value.len() < MAX_ID_BYTES {
                self.value.push(b);
            } else {
                self.value_long = true;
            }
        }
    }

    fn byte(&mut self, b: u8) {
        if self.in_string {
            self.keep(b);
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if self.depth == 1 && self.state == ScanState::Key {
                    self.end_key();
                }
            }
            return;
        }
        match self.state {
            ScanState::Start => match b {
                b' ' | b'\t' | b'\r' | b'\n' => {}
                b'{' => {
                    self.depth = 1;
                    self.state = ScanState::Key;
                }
                _ => self.state = ScanState::Done,
            },
            ScanState::Key => match b {
                b'"' => {
                    self.key.clear();
                    self.key_long = false;
                    self.key.push(b);
                    self.in_string = true;
                }
                b'}' => self.state = ScanState::Done,
                _ => {}
            },
            ScanState::Colon => {
                if b == b':' {
                    self.state = ScanState::Value;
                    self.value.clear();
                    self.value_long = false;
                }
            }
            ScanState::Value => {
                if self.depth == 1 && (b == b',' || b == b'}') {
                    self.end_value();
                    self.state = if b == b',' {
                        ScanState::Key
                    } else {
                        ScanState::Done
                    };
                    return;
                }
                self.keep(b);
                match b {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => self.depth = self.depth.saturating_sub(1).max(1),
                    _ => {}
                }
            }
            ScanState::Done => {}
        }
    }

    fn end_key(&mut self) {
        self.state = ScanState::Colon;
        self.field = if self.key_long {
            Field::Other
        } else if self.key == br#""id""# {
            Field::Id
        } else if self.key == br#""method""# {
            Field::Method
        } else if self.key.contains(&b'\\') {
            // An escaped spelling of the key (`"\u0069d"`).
            match serde_json::from_slice::<String>(&self.key).as_deref() {
                Ok("id") => Field::Id,
                Ok("method") => Field::Method,
                _ => Field::Other,
            }
        } else {
            Field::Other
        };
    }

    fn end_value(&mut self) {
        match self.field {
            Field::Id if !self.value_long && self.id.is_none() => {
                self.id = serde_json::from_slice::<RequestId>(self.value.trim_ascii()).ok();
            }
            Field::Method => self.method = true,
            _ => {}
        }
        self.field = Field::Other;
    }

    /// What was found.
    pub(crate) fn finish(&self) -> Scanned {
        Scanned {
            id: self.id.clone(),
            method: self.method,
            bytes: self.bytes,
        }
    }
}

/// A raw look at a message that did not parse as one: its `id` and `method`, if it is JSON.
pub(crate) struct Glance {
    /// Whether the text is JSON at all.
    pub json: bool,
    /// Its top-level `id`, when that is a number or a string.
    pub id: Option<RequestId>,
    /// Its top-level `method`.
    pub method: Option<String>,
}

/// Looks at a message that failed to parse as a JSON-RPC message.
pub(crate) fn glance(bytes: &[u8]) -> Glance {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(value) => Glance {
            json: true,
            id: value
                .get("id")
                .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok()),
            method: value
                .get("method")
                .and_then(Value::as_str)
                .map(str::to_owned),
        },
        Err(_) => Glance {
            json: false,
            id: None,
            method: None,
        },
    }
}

/// Whether `method` is a notification the protocol defines (others are ignored when they do not
/// parse, as rmcp does for compatibility with peers that send their own).
fn is_standard_notification(method: &str) -> bool {
    matches!(
        method,
        "notifications/cancelled"
            | "notifications/initialized"
            | "notifications/message"
            | "notifications/progress"
            | "notifications/prompts/list_changed"
            | "notifications/resources/list_changed"
            | "notifications/resources/updated"
            | "notifications/roots/list_changed"
            | "notifications/subscriptions/acknowledged"
            | "notifications/tools/list_changed"
            | "notifications/tasks/status"
            | "notifications/elicitation/complete"
    )
}

type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// The writing half, with a buffer kept from one message to the next: a fresh buffer for each
/// large message would cost its page faults every time.
struct Out {
    w: Writer,
    buf: Vec<u8>,
}

/// A write buffer larger than this is not kept after its message.
const KEEP_BUFFER: usize = 64 * 1024 * 1024;
type Reader = Box<dyn AsyncRead + Send + Unpin>;

/// The newline-delimited JSON-RPC transport of stdio, for either role, with a limit on the size
/// of an incoming line (see the module doc for what happens to a line that is not a message).
///
/// It may own the server process at the other end (import): closing or dropping the transport
/// closes the server's stdin and starts its shutdown ([`crate::child`]).
pub(crate) struct LineTransport<Role: ServiceRole> {
    read: BufReader<Reader>,
    write: Arc<tokio::sync::Mutex<Option<Out>>>,
    /// Error replies spawned and not yet written.
    pending_replies: Arc<std::sync::atomic::AtomicUsize>,
    limit: usize,
    /// Which setting the limit comes from, for messages.
    setting: &'static str,
    /// Whether this side serves (it answers what it cannot read; a client only logs it).
    serving: bool,
    /// The line being read (kept across a cancelled `receive`).
    line: Vec<u8>,
    /// Set while an over-long line streams past.
    oversized: Option<IdScan>,
    /// Messages made up for the local service (the error of a call whose answer was unusable).
    local: VecDeque<RxJsonRpcMessage<Role>>,
    /// An answer to this id is dropped (a probe that was given up on).
    ignore: Option<RequestId>,
    child: Option<crate::child::ServerProcess>,
    _role: PhantomData<fn() -> Role>,
}

impl<Role: ServiceRole> LineTransport<Role> {
    /// A transport reading `read` and writing `write`. `serving` is true on the server side.
    pub(crate) fn new(
        read: impl AsyncRead + Send + Unpin + 'static,
        write: impl AsyncWrite + Send + Unpin + 'static,
        limit: usize,
        setting: &'static str,
        serving: bool,
    ) -> LineTransport<Role> {
        LineTransport {
            read: BufReader::with_capacity(64 * 1024, Box::new(read)),
            write: Arc::new(tokio::sync::Mutex::new(Some(Out {
                w: Box::new(write),
                buf: Vec::new(),
            }))),
            pending_replies: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
            limit,
            setting,
            serving,
            line: Vec::new(),
            oversized: None,
            local: VecDeque::new(),
            ignore: None,
            child: None,
            _role: PhantomData,
        }
    }

    /// The same transport, owning the server process at its other end.
    pub(crate) fn with_child(mut self, child: crate::child::ServerProcess) -> LineTransport<Role> {
        self.child = Some(child);
        self
    }

    /// The server's process id, if it owns one.
    pub(crate) fn child_id(&self) -> Option<u32> {
        self.child.as_ref().map(crate::child::ServerProcess::pid)
    }

    /// What says when the server's process is gone, if it owns one.
    pub(crate) fn child_gone(&self) -> Option<crate::child::Gone> {
        self.child.as_ref().map(crate::child::ServerProcess::gone)
    }

    /// Drops any answer to `id` from now on.
    pub(crate) fn ignore_answers_to(&mut self, id: RequestId) {
        self.ignore = Some(id);
    }

    /// Writes `bytes` and a newline as one message, in a task of its own, so a `receive` that is
    /// cancelled never leaves half a line on the wire.
    fn reply(&self, bytes: Vec<u8>) {
        use std::sync::atomic::Ordering;
        let pending = self.pending_replies.clone();
        if pending.fetch_add(1, Ordering::SeqCst) >= MAX_PENDING_REPLIES {
            pending.fetch_sub(1, Ordering::SeqCst);
            tracing::warn!("the MCP peer does not read its error replies; one was dropped");
            return;
        }
        let write = self.write.clone();
        tokio::spawn(async move {
            let fill = |buf: &mut Vec<u8>| {
                buf.extend_from_slice(&bytes);
                Ok(())
            };
            if let Err(e) = write_message(&write, fill).await {
                tracing::debug!(error = %e, "MCP error reply not sent");
            }
            pending.fetch_sub(1, Ordering::SeqCst);
        });
    }

    /// Answers a request this side cannot take.
    fn refuse(&self, id: Option<&RequestId>, error: &ErrorData) {
        self.reply(error_json(id, error));
    }

    /// Fails the local call that `id` answers.
    fn fail_local(&mut self, id: RequestId, error: ErrorData) {
        if self.ignore.as_ref() == Some(&id) {
            return;
        }
        self.local
            .push_back(RxJsonRpcMessage::<Role>::error(error, Some(id)));
    }

    /// Reads into `self.line` up to the end of a line. `Ok(true)`: a line is there (or an
    /// over-long one has passed and been dealt with); `Ok(false)`: end of input.
    async fn read_line(&mut self) -> std::io::Result<bool> {
        loop {
            let (used, done) = {
                let available = self.read.fill_buf().await?;
                if available.is_empty() {
                    return Ok(false);
                }
                let newline = available.iter().position(|b| *b == b'\n');
                let take = newline.map_or(available.len(), |at| at + 1);
                let chunk = &available[..take];
                if let Some(scan) = &mut self.oversized {
                    scan.feed(chunk);
                } else if self.line.len() + take > self.limit.saturating_add(1) {
                    // Over the limit (the newline is not counted): read on without keeping.
                    let mut scan = IdScan::default();
                    scan.feed(&self.line);
                    scan.feed(chunk);
                    self.line = Vec::new();
                    self.oversized = Some(scan);
                } else {
                    self.line.extend_from_slice(chunk);
                }
                (take, newline.is_some())
            };
            self.read.consume(used);
            if done {
                return Ok(true);
            }
        }
    }

    /// Deals with a line that was over the limit.
    fn oversized_line(&mut self, scan: &IdScan) {
        let found = scan.finish();
        // The newline is not part of the message.
        let size = Size::Exact(found.bytes.saturating_sub(1));
        tracing::warn!(
            bytes = found.bytes,
            limit = self.limit,
            "an MCP message over the size limit was read past"
        );
        match (found.method, found.id) {
            (true, Some(id)) => {
                let error = too_large("the request", size, self.limit, self.setting);
                self.refuse(Some(&id), &error);
            }
            (false, Some(id)) => {
                let error = too_large("the answer", size, self.limit, self.setting);
                self.fail_local(id, error);
            }
            (true, None) => {} // a notification: nobody to answer
            (false, None) => {
                if self.serving {
                    let error = too_large("a message", size, self.limit, self.setting);
                    self.refuse(None, &error);
                }
            }
        }
    }

    /// Deals with a line within the limit that is not a message.
    fn bad_line(&mut self, line: &[u8], error: &serde_json::Error) {
        let look = glance(line);
        let detail = tools_schema::excerpt::cut(&error.to_string()).into_owned();
        if !look.json {
            if self.serving {
                self.refuse(None, &parse_error(&detail));
            } else {
                tracing::warn!(error = %detail, "the MCP server wrote a line that is not JSON");
            }
            return;
        }
        match (look.method, look.id) {
            (Some(_), Some(id)) => self.refuse(Some(&id), &invalid_request(&detail)),
            (None, Some(id)) => self.fail_local(id, unreadable_answer(&detail)),
            (Some(method), None) => {
                if is_standard_notification(&method) {
                    tracing::warn!(%method, error = %detail, "an MCP notification was dropped");
                } else {
                    tracing::debug!(%method, "a notification MCP does not define was ignored");
                }
            }
            (None, None) => {
                if self.serving {
                    self.refuse(None, &invalid_request(&detail));
                } else {
                    tracing::warn!(error = %detail, "the MCP server wrote JSON that is no message");
                }
            }
        }
    }

    /// Whether a parsed message is an answer to the ignored id.
    fn ignored(&self, message: &RxJsonRpcMessage<Role>) -> bool {
        let Some(ignore) = &self.ignore else {
            return false;
        };
        match message {
            rmcp::model::JsonRpcMessage::Response(r) => &r.id == ignore,
            rmcp::model::JsonRpcMessage::Error(e) => e.id.as_ref() == Some(ignore),
            _ => false,
        }
    }
}

/// Writes one message, as `fill` puts it in the buffer, and a newline.
async fn write_message(
    write: &tokio::sync::Mutex<Option<Out>>,
    fill: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut guard = write.lock().await;
    let Some(out) = guard.as_mut() else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotConnected,
            "the MCP transport is closed",
        ));
    };
    out.buf.clear();
    fill(&mut out.buf)?;
    out.buf.push(b'\n');
    let written = match out.w.write_all(&out.buf).await {
        Ok(()) => out.w.flush().await,
        Err(e) => Err(e),
    };
    if out.buf.capacity() > KEEP_BUFFER {
        out.buf = Vec::new();
    }
    written
}

/// Puts the text of an outgoing message in `buf`; an error without an id gets `"id": null`.
fn encode<Role: ServiceRole>(
    item: &TxJsonRpcMessage<Role>,
    buf: &mut Vec<u8>,
) -> std::io::Result<()> {
    if let rmcp::model::JsonRpcMessage::Error(e) = item
        && e.id.is_none()
    {
        buf.extend_from_slice(&error_json(None, &e.error));
        return Ok(());
    }
    serde_json::to_writer(buf, item).map_err(std::io::Error::other)
}

impl<Role: ServiceRole> rmcp::transport::Transport<Role> for LineTransport<Role> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<Role>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = self.write.clone();
        async move { write_message(&write, |buf| encode::<Role>(&item, buf)).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<Role>> {
        loop {
            if let Some(message) = self.local.pop_front() {
                return Some(message);
            }
            match self.read_line().await {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => {
                    tracing::warn!(error = %e, "reading the MCP stream failed");
                    return None;
                }
            }
            if let Some(scan) = self.oversized.take() {
                self.oversized_line(&scan);
                continue;
            }
            let line = std::mem::take(&mut self.line);
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
            if text.iter().all(u8::is_ascii_whitespace) {
                self.line = reuse(line);
                continue;
            }
            // An import keeps what rmcp would drop of a draft tool's task support.
            let carried = if self.serving {
                None
            } else {
                crate::tasks_draft::carry_execution(text)
            };
            let text = carried.as_deref().unwrap_or(text);
            let parsed = serde_json::from_slice::<RxJsonRpcMessage<Role>>(text);
            match parsed {
                Ok(message) => {
                    if self.ignored(&message) {
                        tracing::debug!("a late answer to an abandoned MCP probe was dropped");
                    } else {
                        self.line = reuse(line);
                        return Some(message);
                    }
                }
                Err(e) => self.bad_line(text, &e),
            }
            self.line = reuse(line);
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Closing our end of the pipe tells a server to exit; its process is then stopped as
        // `crate::child` says, and awaited.
        drop(self.write.lock().await.take());
        if let Some(mut child) = self.child.take() {
            let mut gone = child.gone();
            child.stop();
            gone.wait().await;
        }
        Ok(())
    }
}

impl<Role: ServiceRole> Drop for LineTransport<Role> {
    /// A transport dropped without `close` (its runtime shut down, a connect given up on)
    /// closes the server's stdin when no write holds it, and starts the server's shutdown,
    /// which goes on without it.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            if let Ok(mut write) = self.write.try_lock() {
                drop(write.take());
            }
            child.stop();
        }
    }
}

/// An emptied line buffer, keeping its capacity (at most the limit) for the next line, as the
/// write side keeps its own.
fn reuse(mut line: Vec<u8>) -> Vec<u8> {
    line.clear();
    line
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn scan(text: &str, split: usize) -> Scanned {
        let mut s = IdScan::default();
        let (a, b) = text.as_bytes().split_at(split.min(text.len()));
        s.feed(a);
        s.feed(b);
        s.finish()
    }

    #[test]
    fn the_scanner_finds_the_top_level_id_wherever_it_is() {
        let big = "x".repeat(10_000);
        let texts = [
            format!(r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"a":"{big}"}}}}"#),
            format!(
                r#"{{"method":"tools/call","params":{{"id":99,"a":["{big}",{{"id":1}}]}},"id":7}}"#
            ),
            format!(r#" {{ "params" : "\"id\":5 {big}" , "\u0069d" : 7 , "method":"x"}}"#),
        ];
        for text in &texts {
            for split in [0, 1, 5, 17, text.len() / 2, text.len() - 1] {
                let found = scan(text, split);
                assert_eq!(found.id, Some(RequestId::Number(7)), "{split}");
                assert!(found.method);
            }
        }
        let string_id = scan(r#"{"id":"a\"b","result":{}}"#, 3);
        assert_eq!(string_id.id, Some(RequestId::String("a\"b".into())));
        assert!(!string_id.method);
    }

    #[test]
    fn the_scanner_gives_up_on_what_it_cannot_read() {
        assert_eq!(scan(r#"[{"id":1}]"#, 2).id, None);
        assert_eq!(scan(r#"{"id":null,"method":"m"}"#, 2).id, None);
        assert_eq!(scan(r#"{"id":{"x":1},"method":"m"}"#, 2).id, None);
        let long = format!(
            r#"{{"id":"{}","method":"m"}}"#,
            "y".repeat(MAX_ID_BYTES + 1)
        );
        assert_eq!(scan(&long, 9).id, None);
        assert_eq!(scan("not json at all", 3).id, None);
    }

    #[test]
    fn an_error_without_an_id_says_id_null() {
        let text = error_json(None, &parse_error("x"));
        let value: Value = serde_json::from_slice(&text).unwrap();
        assert_eq!(value["id"], Value::Null);
        assert!(value.as_object().unwrap().contains_key("id"));
        assert_eq!(value["error"]["code"], -32700);
    }
}
