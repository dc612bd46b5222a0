//! The HTTP client of an import: rmcp's reqwest client held to the import's limit of one
//! message, with an answer over the limit turned into that call's error.
//!
//! rmcp's own client refuses a JSON body over its limit by failing the send (the call then looks
//! like a broken connection) and ends an SSE stream whose event is over it (the call then fails
//! with "stream closed"). Here both become a JSON-RPC error for the request's id that names the
//! limit (code [`MCP_MESSAGE_TOO_LARGE`](crate::codes::MCP_MESSAGE_TOO_LARGE) at the call).
//! HTTP clients stop reading at the limit, so the size is given as "more than" the limit.
//!
//! An answer that comes as an SSE event and lists tools declaring the 2025-11-25 draft's
//! `execution.taskSupport` has it kept in each tool's `_meta` before rmcp reads it
//! ([`tasks_draft`](crate::tasks_draft)). One that comes as a plain JSON body is read by rmcp's
//! client itself, which drops it: such a server's tools are called without a task.

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use crate::wire::{Size, error_json, too_large};

const SETTING: &str = "ImportOptions::max_message_size";

/// rmcp's reqwest client, limited (see the module doc).
#[derive(Clone)]
pub(crate) struct LimitedClient {
    inner: reqwest::Client,
    limit: usize,
}

impl LimitedClient {
    /// A client with the default reqwest settings rmcp uses.
    pub(crate) fn new(limit: usize) -> LimitedClient {
        LimitedClient {
            inner: reqwest::Client::default(),
            limit,
        }
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
}

/// Whether an SSE stream ended because an event was over the limit. rmcp's error type for it
/// is private; its words are pinned with the exact rmcp version, and a test holds them.
fn event_too_large(error: &SseError) -> bool {
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
        let id = request_id(&message);
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
