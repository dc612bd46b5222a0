//! The HTTP client of an import: rmcp's reqwest client held to the import's limit of one
//! message, with an answer over the limit turned into that call's error, and a draft tool's task
//! support kept for rmcp to carry.
//!
//! rmcp's own client refuses a JSON body over its limit by failing the send (the call then looks
//! like a broken connection) and ends an SSE stream whose event is over it (the call then fails
//! with "stream closed"). Here both become a JSON-RPC error for the request's id that names the
//! limit (code [`MCP_MESSAGE_TOO_LARGE`](crate::codes::MCP_MESSAGE_TOO_LARGE) at the call).
//! HTTP clients stop reading at the limit, so the size is given as "more than" the limit.
//!
//! A `tools/list` answer that lists tools declaring the 2025-11-25 draft's
//! `execution.taskSupport` has it kept in each tool's `_meta` before rmcp reads it
//! ([`tasks_draft`](crate::tasks_draft)), whether it comes as an SSE event or as a plain JSON
//! body. rmcp's client parses a JSON body itself (dropping `execution`), so a `tools/list` is
//! posted here rather than by rmcp: as rmcp's reqwest client posts it and reads each kind of
//! answer (an SSE stream with rmcp's count of an event's size, a JSON body within the limit, an
//! HTTP failure as the same error), but with the body read here and handed to
//! [`carry_execution`](crate::tasks_draft::carry_execution) before it is parsed. Every other
//! request goes through rmcp's client.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::StatusCode;
use reqwest::header::{
    ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, RETRY_AFTER, WWW_AUTHENTICATE,
};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, RequestId, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_LAST_EVENT_ID, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, SseError, StreamableHttpClient,
    StreamableHttpClientTransportConfig, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::{Sse, SseStream};

use crate::wire::{Size, error_json, too_large};

const SETTING: &str = "ImportOptions::max_message_size";

/// What rmcp's client sends as `Accept` with a POST.
const ACCEPTS: &str = "text/event-stream, application/json";

/// The headers a caller's own may not replace, as rmcp's client has them (its
/// `MCP-Protocol-Version`, which it sets itself among them, is let through).
const RESERVED_HEADERS: [&str; 3] = ["accept", HEADER_SESSION_ID, HEADER_LAST_EVENT_ID];

/// What stands for a failure's body that could not be read, as rmcp's client has it.
const UNREAD_BODY: &str = "<failed to read response body>";

type HttpError = StreamableHttpError<reqwest::Error>;

/// rmcp's reqwest client, limited (see the module doc).
#[derive(Clone)]
pub(crate) struct LimitedClient {
    inner: reqwest::Client,
    limit: usize,
    /// The session id its last request carried (for the call spans' `mcp.session.id`).
    session: SessionSlot,
}

/// The id of an HTTP connection's session, once it has one.
pub(crate) type SessionSlot = Arc<std::sync::Mutex<Option<Arc<str>>>>;

impl LimitedClient {
    /// A client with the default reqwest settings rmcp uses.
    pub(crate) fn new(limit: usize) -> LimitedClient {
        LimitedClient {
            inner: reqwest::Client::default(),
            limit,
            session: SessionSlot::default(),
        }
    }

    /// The same client, noting the session id of its requests in `slot`.
    pub(crate) fn noting_session(mut self, slot: SessionSlot) -> LimitedClient {
        self.session = slot;
        self
    }

    /// rmcp's transport configuration for `url`, with the limit on JSON bodies and SSE events.
    pub(crate) fn config(&self, url: &str) -> StreamableHttpClientTransportConfig {
        StreamableHttpClientTransportConfig::with_uri(url)
            .max_sse_event_size(self.limit)
            .max_json_response_size(self.limit)
    }

    /// The limits rmcp's transport passes with each POST, for a caller that passes none.
    fn limits(&self) -> StreamableHttpResponseLimits {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = self.limit;
        limits.max_json_response_size = self.limit;
        limits
    }

    fn too_large(&self, id: RequestId) -> ServerJsonRpcMessage {
        ServerJsonRpcMessage::error(
            too_large("the server's answer", Size::OverLimit, self.limit, SETTING),
            Some(id),
        )
    }

    /// A `tools/list` request `id` posted, and its answer read, as rmcp's reqwest client does
    /// (its `post_message_with_response_limits` for a request), except that the body of a JSON
    /// answer is read here and given to
    /// [`carry_execution`](crate::tasks_draft::carry_execution) before it is parsed. A JSON body
    /// or SSE event is held to the import's limit (the one [`config`](Self::config) gave rmcp's
    /// transport, which passes it back in `limits`), and one over it is the request's error, as
    /// for rmcp's answers; `limits` gives the length of a failure's diagnostic.
    #[expect(
        clippy::too_many_arguments,
        reason = "rmcp's arguments of a POST, and the request's id"
    )]
    async fn post_listing(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        id: RequestId,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let mut request = self.inner.post(uri.as_ref()).header(ACCEPT, ACCEPTS);
        if let Some(token) = auth_header {
            request = request.bearer_auth(token);
        }
        for (name, value) in custom_headers {
            if RESERVED_HEADERS
                .iter()
                .any(|reserved| name.as_str().eq_ignore_ascii_case(reserved))
            {
                return Err(StreamableHttpError::ReservedHeaderConflict(
                    name.to_string(),
                ));
            }
            request = request.header(name, value);
        }
        let session_was_attached = session_id.is_some();
        if let Some(session_id) = session_id {
            request = request.header(HEADER_SESSION_ID, session_id.as_ref());
        }
        let response = request.json(&message).send().await?;
        let status = response.status();
        if let Some(error) = challenge(status, response.headers()) {
            return Err(error);
        }
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_was_attached {
            return Err(StreamableHttpError::SessionExpired);
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
        let is = |expected: &str| {
            content_type
                .as_deref()
                .is_some_and(|value| media_type_is(value, expected))
        };
        let (json, sse) = (is(JSON_MIME_TYPE), is(EVENT_STREAM_MIME_TYPE));
        let session = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        if !status.is_success() {
            return self
                .failure(response, id, json, session, limits.max_error_response_size)
                .await;
        }
        if sse {
            let events = events(response, self.limit);
            return Ok(StreamableHttpPostResponse::Sse(
                guard(events, id, self.limit),
                session,
            ));
        }
        if !json {
            return Err(StreamableHttpError::UnexpectedContentType(content_type));
        }
        let Some(body) = read_within(response, self.limit).await? else {
            return Ok(StreamableHttpPostResponse::Json(
                self.too_large(id),
                session,
            ));
        };
        // What rmcp would drop of a draft tool's task support, kept.
        let body = crate::tasks_draft::carry_execution(&body).unwrap_or(body);
        match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
            Ok(message) => Ok(StreamableHttpPostResponse::Json(message, session)),
            Err(e) => Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                format!(
                    "could not parse JSON response as ServerJsonRpcMessage: {e}: {}",
                    preview(&body, 256)
                ),
            ))),
        }
    }

    /// What rmcp's client makes of a POST's answer that is no success (nor a challenge, nor an
    /// expired session): a JSON-RPC error in a JSON body is the answer; otherwise a 429 or 5xx
    /// is its status, anything else an unexpected response with the start of its body.
    async fn failure(
        &self,
        response: reqwest::Response,
        id: RequestId,
        json: bool,
        session: Option<String>,
        diagnostic: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let status = response.status();
        // A rate limit, or a server failure whose body is no JSON, is its status, unread.
        let status_error = match http_status_error(status, response.headers()) {
            Some(error) if !json || status == StatusCode::TOO_MANY_REQUESTS => {
                return Err(error.into());
            }
            other => other,
        };
        let unauthorized = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
        let body = if json && !unauthorized {
            match read_within(response, self.limit).await {
                Ok(Some(body)) => {
                    if let Ok(error @ ServerJsonRpcMessage::Error(_)) =
                        serde_json::from_slice::<ServerJsonRpcMessage>(&body)
                    {
                        return Ok(StreamableHttpPostResponse::Json(error, session));
                    }
                    preview(&body, diagnostic).into_owned()
                }
                Ok(None) => {
                    return match status_error {
                        Some(error) => Err(error.into()),
                        None => Ok(StreamableHttpPostResponse::Json(
                            self.too_large(id),
                            session,
                        )),
                    };
                }
                Err(_) => preview(UNREAD_BODY.as_bytes(), diagnostic).into_owned(),
            }
        } else {
            match read_prefix(response, diagnostic).await {
                Ok(prefix) => String::from_utf8_lossy(&prefix).into_owned(),
                Err(_) => preview(UNREAD_BODY.as_bytes(), diagnostic).into_owned(),
            }
        };
        match status_error {
            Some(error) => Err(error.into()),
            None => Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                format!("HTTP {status}: {body}"),
            ))),
        }
    }
}

/// rmcp's error for a 401 or 403 that carries a challenge (`WWW-Authenticate`). The import does
/// not authorize, so the scope a 403 asks for is not read out.
fn challenge(status: StatusCode, headers: &HeaderMap) -> Option<HttpError> {
    if !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
        return None;
    }
    let header = headers.get(WWW_AUTHENTICATE)?;
    let Ok(header) = header.to_str() else {
        return Some(StreamableHttpError::UnexpectedServerResponse(
            Cow::Borrowed("invalid www-authenticate header value"),
        ));
    };
    let header = header.to_owned();
    Some(if status == StatusCode::UNAUTHORIZED {
        StreamableHttpError::AuthRequired(AuthRequiredError::new(header))
    } else {
        StreamableHttpError::InsufficientScope(InsufficientScopeError::new(header, None))
    })
}

/// The status of a 429 or 5xx answer, with its `Retry-After` as it came, as rmcp's client
/// keeps it.
fn http_status_error(status: StatusCode, headers: &HeaderMap) -> Option<HttpStatusError> {
    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
        return None;
    }
    let retry_after = headers
        .get(RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    Some(HttpStatusError::new(status.as_u16(), retry_after))
}

/// Whether the `Content-Type` `value` is the media type `expected` (its parameters aside, in
/// any case).
fn media_type_is(value: &str, expected: &str) -> bool {
    value
        .split(';')
        .next()
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case(expected))
}

/// The first `max` bytes of `bytes` as text, cut at a character.
fn preview(bytes: &[u8], max: usize) -> Cow<'_, str> {
    let text = String::from_utf8_lossy(bytes);
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(text[..end].to_owned())
}

/// The body of `response`, or `None` when it is over `max` bytes (read no further).
async fn read_within(
    response: reqwest::Response,
    max: usize,
) -> Result<Option<Vec<u8>>, reqwest::Error> {
    if response
        .content_length()
        .is_some_and(|length| length > max as u64)
    {
        return Ok(None);
    }
    let mut stream = response.bytes_stream();
    let mut body = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        if chunk.len() > max - body.len() {
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Some(body))
}

/// The first `max` bytes of the body of `response` (the rest not read).
async fn read_prefix(response: reqwest::Response, max: usize) -> Result<Vec<u8>, reqwest::Error> {
    let mut stream = response.bytes_stream();
    let mut body = Vec::new();
    while body.len() < max {
        let Some(chunk) = stream.next().await else {
            break;
        };
        let chunk = chunk?;
        let count = chunk.len().min(max - body.len());
        body.extend_from_slice(&chunk[..count]);
    }
    Ok(body)
}

/// Why the SSE stream of an answer posted here ended early.
#[derive(Debug, thiserror::Error)]
enum EventsError {
    /// An event was over the limit (rmcp's words for it).
    #[error("SSE event exceeded the maximum size of {0} bytes")]
    TooLarge(usize),
    /// The body could not be read.
    #[error(transparent)]
    Read(reqwest::Error),
}

/// The size of the SSE event being read, counted as rmcp's client counts it: the bytes of each
/// line that is no comment and one for its end, the line being read included.
struct EventSize {
    max: usize,
    retained: usize,
    line: usize,
    comment: bool,
    after_cr: bool,
}

impl EventSize {
    fn new(max: usize) -> EventSize {
        EventSize {
            max,
            retained: 0,
            line: 0,
            comment: false,
            after_cr: false,
        }
    }

    /// Counts `chunk`; `false` once the event is over the limit.
    fn take(&mut self, chunk: &[u8]) -> bool {
        for &byte in chunk {
            // A CR LF ends one line.
            if std::mem::take(&mut self.after_cr) && byte == b'\n' {
                continue;
            }
            match byte {
                b'\r' | b'\n' => {
                    if self.line == 0 {
                        // A blank line ends the event.
                        self.retained = 0;
                    } else if !self.comment {
                        self.retained = self.retained.saturating_add(self.line).saturating_add(1);
                    }
                    self.line = 0;
                    self.comment = false;
                    self.after_cr = byte == b'\r';
                }
                _ => {
                    if self.line == 0 {
                        self.comment = byte == b':';
                    }
                    self.line = self.line.saturating_add(1);
                }
            }
            if self.retained.saturating_add(self.line) > self.max {
                return false;
            }
        }
        true
    }
}

/// The SSE events of `response`; an event over `max` bytes ends the stream with
/// [`EventsError::TooLarge`].
fn events(response: reqwest::Response, max: usize) -> BoxStream<'static, Result<Sse, SseError>> {
    let mut size = EventSize::new(max);
    let bytes = response.bytes_stream().scan(false, move |failed, chunk| {
        if *failed {
            return std::future::ready(None);
        }
        let item = match chunk {
            Ok(chunk) if size.take(&chunk) => Ok(chunk),
            Ok(_) => Err(EventsError::TooLarge(max)),
            Err(e) => Err(EventsError::Read(e)),
        };
        *failed = item.is_err();
        std::future::ready(Some(item))
    });
    SseStream::from_bytes_stream(bytes).boxed()
}

/// Whether an SSE stream ended because an event was over the limit: the stream of an answer
/// posted here, or one of rmcp's, whose error type for it is private; its words are pinned with
/// the exact rmcp version, and a test holds them.
fn event_too_large(error: &SseError) -> bool {
    if let SseError::Body(source) = error
        && let Some(EventsError::TooLarge(_)) = source.downcast_ref::<EventsError>()
    {
        return true;
    }
    error
        .to_string()
        .contains("SSE event exceeded the maximum size")
}

fn request_id(message: &ClientJsonRpcMessage) -> Option<RequestId> {
    match message {
        ClientJsonRpcMessage::Request(request) => Some(request.id.clone()),
        _ => None,
    }
}

/// Whether `message` asks for `tools/list`, the one answer that lists tools.
fn lists_tools(message: &ClientJsonRpcMessage) -> bool {
    matches!(
        message,
        ClientJsonRpcMessage::Request(request)
            if matches!(request.request, ClientRequest::ListToolsRequest(_))
    )
}

/// The stream of a request's answer, with an event over the limit replaced by the request's
/// error, and a draft tool's task support kept.
fn guard(
    stream: BoxStream<'static, Result<Sse, SseError>>,
    id: RequestId,
    limit: usize,
) -> BoxStream<'static, Result<Sse, SseError>> {
    stream
        .scan(false, move |replaced, item| {
            // Nothing follows a replaced event: the stream had failed.
            if *replaced {
                return std::future::ready(None);
            }
            let item = match item {
                Err(e) if event_too_large(&e) => {
                    *replaced = true;
                    let error = too_large("the server's answer", Size::OverLimit, limit, SETTING);
                    let data = String::from_utf8_lossy(&error_json(Some(&id), &error)).into_owned();
                    Ok(Sse {
                        data: Some(data),
                        ..Sse::default()
                    })
                }
                Ok(mut event) => {
                    // What rmcp would drop of a draft tool's task support, kept.
                    if let Some(carried) = event
                        .data
                        .as_deref()
                        .and_then(|data| crate::tasks_draft::carry_execution(data.as_bytes()))
                    {
                        event.data = Some(String::from_utf8_lossy(&carried).into_owned());
                    }
                    Ok(event)
                }
                other => other,
            };
            std::future::ready(Some(item))
        })
        .boxed()
}

/// rmcp's `post_message_with_max_sse_event_size` and `get_stream_with_max_sse_event_size` keep
/// their default bodies, which come to `post_message` and `get_stream`: the event size they pass
/// is the one [`LimitedClient::config`] set, the import's limit, which those two apply.
impl StreamableHttpClient for LimitedClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let limits = self.limits();
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        if let Some(session) = &session_id {
            *crate::lock(&self.session) = Some(session.clone());
        }
        let id = request_id(&message);
        if let Some(id) = id.clone()
            && lists_tools(&message)
        {
            return self
                .post_listing(
                    uri,
                    message,
                    id,
                    session_id,
                    auth_header,
                    custom_headers,
                    limits,
                )
                .await;
        }
        let answer = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        match (answer, id) {
            (Err(StreamableHttpError::ResponseBodyTooLarge { .. }), Some(id)) => {
                Ok(StreamableHttpPostResponse::Json(self.too_large(id), None))
            }
            (Ok(StreamableHttpPostResponse::Sse(stream, session)), Some(id)) => Ok(
                StreamableHttpPostResponse::Sse(guard(stream, id, self.limit), session),
            ),
            (answer, _) => answer,
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                self.limit,
            )
            .await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// An SSE event that lists a draft tool keeps its task support for rmcp to carry.
    #[tokio::test]
    async fn an_sse_answer_keeps_a_draft_tools_task_support() {
        let list = serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
            {"name": "slow", "inputSchema": {"type": "object"},
             "execution": {"taskSupport": "required"}}
        ]}});
        let event = Sse {
            data: Some(list.to_string()),
            ..Sse::default()
        };
        let stream = futures::stream::iter([Ok(event)]).boxed();
        let events: Vec<_> = guard(stream, RequestId::Number(1), 1 << 20).collect().await;
        let data = events[0].as_ref().unwrap().data.clone().unwrap();
        let message: serde_json::Value = serde_json::from_str(&data).unwrap();
        assert_eq!(
            message["result"]["tools"][0]["_meta"][crate::tasks_draft::EXECUTION_META],
            serde_json::json!({"taskSupport": "required"})
        );
    }

    /// Serves one HTTP answer of `content_type` with `body` to the first request on a local
    /// port: its URL.
    async fn answer_once(content_type: &'static str, body: String) -> Arc<str> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut buf = vec![0; 64 * 1024];
            let _ = socket.read(&mut buf).await;
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            socket.write_all(head.as_bytes()).await.unwrap();
            socket.write_all(body.as_bytes()).await.unwrap();
        });
        format!("http://{addr}/").into()
    }

    fn list_request() -> ClientJsonRpcMessage {
        serde_json::from_value(serde_json::json!(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        ))
        .unwrap()
    }

    /// A `tools/list` answered with `content_type` and `body`, by a client of `limit`.
    async fn list(content_type: &'static str, body: String, limit: usize) -> ServerJsonRpcMessage {
        let uri = answer_once(content_type, body).await;
        let client = LimitedClient::new(limit);
        let answer = client
            .post_message(uri, list_request(), None, None, HashMap::new())
            .await;
        match answer {
            Ok(StreamableHttpPostResponse::Json(message, _)) => message,
            Ok(StreamableHttpPostResponse::Sse(stream, _)) => {
                let events: Vec<_> = stream.collect().await;
                let data = events[0].as_ref().unwrap().data.clone().unwrap();
                serde_json::from_str(&data).unwrap()
            }
            Ok(_) => panic!("accepted"),
            Err(e) => panic!("{e}"),
        }
    }

    fn draft_list() -> String {
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
            {"name": "slow", "inputSchema": {"type": "object"},
             "execution": {"taskSupport": "required"}}
        ]}})
        .to_string()
    }

    /// A tool list in a plain JSON body keeps a draft tool's task support, as in an SSE event.
    #[tokio::test]
    async fn a_json_tool_list_keeps_a_draft_tools_task_support() {
        for content_type in ["application/json", "text/event-stream"] {
            let body = if content_type == "application/json" {
                draft_list()
            } else {
                format!("data: {}\n\n", draft_list())
            };
            let ServerJsonRpcMessage::Response(response) = list(content_type, body, 1 << 20).await
            else {
                panic!("not a response");
            };
            let rmcp::model::ServerResult::ListToolsResult(list) = response.result else {
                panic!("not a tool list");
            };
            assert_eq!(
                crate::tasks_draft::task_support(&list.tools[0]),
                Some(crate::tasks_draft::TaskSupport::Required),
                "{content_type}"
            );
        }
    }

    /// A tool list over the limit, as a JSON body or an SSE event, is the request's error that
    /// names the limit.
    #[tokio::test]
    async fn a_tool_list_over_the_limit_is_the_requests_error() {
        let big = format!("{{\"pad\": \"{}\"}}", "x".repeat(4096));
        for (content_type, body) in [
            ("application/json", big.clone()),
            ("text/event-stream", format!("data: {big}\n\n")),
        ] {
            let ServerJsonRpcMessage::Error(error) = list(content_type, body, 1024).await else {
                panic!("not an error");
            };
            assert_eq!(error.id, Some(RequestId::Number(1)));
            assert!(
                error.error.message.contains("limit of 1024 bytes"),
                "{content_type}: {}",
                error.error.message
            );
        }
    }

    /// What an SSE stream gives: each event's data, or `None` for the end of an event over the
    /// limit.
    async fn outcome(
        stream: BoxStream<'static, Result<Sse, SseError>>,
    ) -> Vec<Option<Option<String>>> {
        stream
            .map(|item| match item {
                Ok(event) => Some(event.data),
                Err(e) if event_too_large(&e) => None,
                Err(e) => panic!("{e}"),
            })
            .collect()
            .await
    }

    /// An answer posted here counts an event's size as rmcp's client does.
    #[tokio::test]
    async fn events_are_held_to_the_limit_as_rmcp_holds_them() {
        let limit = 16;
        let bodies = [
            "data: 123456789\n\n".to_owned(),
            "data: 1234567890\n\n".to_owned(),
            "data: 12345678\r\n\r\ndata: 1234567890\r\n\r\n".to_owned(),
            ": a comment longer than sixteen bytes\ndata: 1\n\n".to_owned(),
            ": short\ndata: 1\n\n".to_owned(),
            "data: 12\ndata: 34\n\ndata: 5\n\n".to_owned(),
            "data: 12\n\ndata: 34\n\ndata: 5\n\n".to_owned(),
            "data: 123\rdata: 45\r\r".to_owned(),
            "data: 123\r\rdata: 45\r\r".to_owned(),
        ];
        for body in bodies {
            let uri = answer_once("text/event-stream", body.clone()).await;
            let rmcp = reqwest::Client::default()
                .get_stream_with_max_sse_event_size(uri, None, None, None, HashMap::new(), limit)
                .await
                .unwrap();
            let rmcp = outcome(rmcp).await;
            let response = reqwest::Response::from(hyper::Response::new(body.clone()));
            let ours = outcome(events(response, limit)).await;
            assert_eq!(ours, rmcp, "{body:?}");
        }
    }

    /// rmcp's words for an SSE event over the limit, which [`event_too_large`] relies on.
    #[tokio::test]
    async fn rmcp_says_an_event_is_too_large_in_the_words_looked_for() {
        use tokio::io::AsyncWriteExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut buf = vec![0; 64 * 1024];
            let _ = tokio::io::AsyncReadExt::read(&mut socket, &mut buf).await;
            let body = format!("data: {}\n\n", "x".repeat(4096));
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            socket.write_all(head.as_bytes()).await.unwrap();
            socket.write_all(body.as_bytes()).await.unwrap();
        });
        let client = reqwest::Client::default();
        let stream = client
            .get_stream_with_max_sse_event_size(
                format!("http://{addr}/").into(),
                None,
                None,
                None,
                HashMap::new(),
                1024,
            )
            .await
            .unwrap();
        let items: Vec<_> = stream.collect().await;
        let error = items.into_iter().find_map(Result::err).unwrap();
        assert!(event_too_large(&error), "{error}");
    }
}
