//! Trace context across MCP (W3C `traceparent`/`tracestate` in a request's `_meta`, where the
//! MCP 2026-07-28 revision places it, SEP-414), and the spans of the OpenTelemetry MCP semantic
//! conventions on both sides of a `tools/call`.
//!
//! - Import: [`client_span`] is the span an imported tool's `tools/call` runs in, `mcp
//!   tools/call` (exported as `tools/call <tool>`, kind client), with `mcp.method.name`,
//!   `gen_ai.tool.name` (the server's name of the tool), `gen_ai.operation.name =
//!   "execute_tool"`, `mcp.protocol.version`, `mcp.session.id` (an HTTP session's, when there is
//!   one), `network.transport` (`pipe` over stdio, `tcp` over HTTP), `network.protocol.name`
//!   (`http` over HTTP), `jsonrpc.request.id` once the request is sent, and on failure
//!   `error.type` with the ERROR status ([`failed`]). It is the child of the importing call's
//!   `execute_tool` span, and [`inject`] writes its context into the `_meta` of the request, so
//!   the server's span is its child.
//! - Serve: [`call_span`] is the span a served `tools/call` runs in, `mcp tools/call` (exported
//!   as `tools/call <tool>`, kind server), with `rpc.system = "mcp"`, `mcp.method.name`,
//!   `gen_ai.tool.name`, `gen_ai.operation.name`, `jsonrpc.request.id`, `mcp.protocol.version`,
//!   `mcp.session.id` (an HTTP session's), `network.transport` (`pipe` on stdio, `tcp` over
//!   HTTP), `network.protocol.name` (`http` over HTTP), and `error.type` with the ERROR status
//!   when the answer is an `isError` result (`tool_error`) or a JSON-RPC error (its code). When
//!   the request's `_meta` carries a valid `traceparent`, the span's parent is the caller's span
//!   ([`tools_otel::set_remote_parent`]), so the pipeline's `execute_tool <tool>` span, its
//!   child, is in the caller's trace. An invalid or absent one leaves the span where it was (a
//!   root, or the child of the current span); nothing fails.
//!
//! Parenting across processes needs the `otel` feature; without it `inject` writes nothing and
//! the spans are still made (for any `tracing` subscriber) but never parented from elsewhere.

use rmcp::model::{CallToolRequestParams, RequestId, RequestMetaObject};

/// What the spans of a `tools/call` say of the connection it goes over (the OpenTelemetry
/// conventions' `network.*` and `mcp.*` attributes); `None` is not recorded.
#[derive(Debug, Clone, Default)]
pub(crate) struct Wire {
    /// `network.transport`: `pipe` (stdio) or `tcp` (HTTP).
    pub(crate) transport: Option<&'static str>,
    /// `network.protocol.name`: `http` over HTTP.
    pub(crate) protocol: Option<&'static str>,
    /// `mcp.protocol.version`.
    pub(crate) version: Option<String>,
    /// `mcp.session.id`.
    pub(crate) session: Option<String>,
}

impl Wire {
    /// A stdio connection.
    pub(crate) fn stdio() -> Wire {
        Wire {
            transport: Some("pipe"),
            ..Wire::default()
        }
    }

    /// A streamable HTTP connection.
    pub(crate) fn http() -> Wire {
        Wire {
            transport: Some("tcp"),
            protocol: Some("http"),
            ..Wire::default()
        }
    }
}

/// Writes the current trace context into the `_meta` of `params` (feature `otel`).
#[cfg(feature = "otel")]
pub(crate) fn inject(params: &mut CallToolRequestParams) {
    use rmcp::model::RequestParamsMeta as _;
    if let Some(context) = tools_otel::current() {
        params.set_traceparent(&context.traceparent);
        if !context.tracestate.is_empty() {
            params.set_tracestate(&context.tracestate);
        }
    }
}

/// Without the `otel` feature there is no trace context to send.
#[cfg(not(feature = "otel"))]
pub(crate) fn inject(_params: &mut CallToolRequestParams) {}

/// The span an imported tool's `tools/call` of the server's `tool` runs in (see the module
/// doc); its request id is recorded with [`sent`] once the request is sent.
pub(crate) fn client_span(tool: &str, wire: &Wire) -> tracing::Span {
    tracing::info_span!(
        "mcp tools/call",
        error.type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
        jsonrpc.request.id = tracing::field::Empty,
        otel.name = %format_args!("tools/call {tool}"),
        otel.kind = "client",
        mcp.method.name = "tools/call",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = tool,
        mcp.protocol.version = wire.version.as_deref(),
        mcp.session.id = wire.session.as_deref(),
        network.transport = wire.transport,
        network.protocol.name = wire.protocol,
    )
}

/// Records the id of the request sent in `span` (a [`client_span`]).
pub(crate) fn sent(span: &tracing::Span, id: &RequestId) {
    if !span.is_disabled() {
        span.record("jsonrpc.request.id", tracing::field::display(id));
    }
}

/// Records a failure on `span` (a [`client_span`] or a [`call_span`]): `error.type` and the
/// ERROR status.
pub(crate) fn failed(span: &tracing::Span, error_type: &str) {
    if !span.is_disabled() {
        span.record("error.type", error_type);
        span.record("otel.status_code", "error");
    }
}

/// The span a served `tools/call` of `tool` with request `id` runs in, parented on the trace
/// context of `meta` when it carries a valid one (feature `otel`).
pub(crate) fn call_span(
    tool: &str,
    id: &RequestId,
    meta: &RequestMetaObject,
    wire: &Wire,
) -> tracing::Span {
    let span = tracing::info_span!(
        "mcp tools/call",
        error.type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
        otel.name = %format_args!("tools/call {tool}"),
        otel.kind = "server",
        rpc.system = "mcp",
        mcp.method.name = "tools/call",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %tool,
        jsonrpc.request.id = %id,
        mcp.protocol.version = wire.version.as_deref(),
        mcp.session.id = wire.session.as_deref(),
        network.transport = wire.transport,
        network.protocol.name = wire.protocol,
        user.id = tracing::field::Empty,
    );
    #[cfg(feature = "otel")]
    if !span.is_disabled()
        && let Some(traceparent) = meta.get_traceparent()
    {
        let tracestate = meta.get_tracestate().unwrap_or_default();
        if !tools_otel::set_remote_parent(&span, traceparent, tracestate) {
            tracing::debug!(
                traceparent = %tools_schema::excerpt::cut(traceparent),
                "tools/call: a traceparent that is no valid trace context; not parented on it"
            );
        }
    }
    #[cfg(not(feature = "otel"))]
    let _ = meta;
    span
}

/// Runs `future` inside `span`, without the instrumentation wrapper when no subscriber wants the
/// span.
pub(crate) async fn within<F: Future>(span: tracing::Span, future: F) -> F::Output {
    use tracing::Instrument as _;
    if span.is_disabled() {
        future.await
    } else {
        future.instrument(span).await
    }
}

#[cfg(all(test, feature = "otel"))]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use rmcp::model::{CallToolRequestParams, RequestParamsMeta as _};

    use super::inject;

    #[test]
    fn inject_writes_the_current_context_only_when_there_is_one() {
        let receiver = tools_otel::receiver::Receiver::start().unwrap();
        let (subscriber, guard) = tools_otel::Otel::new("inject")
            .endpoint(receiver.url())
            .subscriber()
            .unwrap()
            .expect("OpenTelemetry is set up");
        let (outside, inside, expected) = tracing::subscriber::with_default(subscriber, || {
            let mut outside = CallToolRequestParams::new("t");
            inject(&mut outside);
            tracing::info_span!("calling").in_scope(|| {
                let mut inside = CallToolRequestParams::new("t");
                inject(&mut inside);
                (outside, inside, tools_otel::current().unwrap())
            })
        });
        guard.shutdown();
        assert!(
            outside.meta.is_none(),
            "outside any span nothing is written"
        );
        assert_eq!(inside.traceparent(), Some(expected.traceparent.as_str()));
        assert!(expected.tracestate.is_empty());
        assert_eq!(inside.tracestate(), None, "an empty tracestate is not sent");
        // The keys on the wire are the spec's.
        let wire = serde_json::to_value(&inside).unwrap();
        assert_eq!(wire["_meta"]["traceparent"], expected.traceparent.as_str());
    }

    #[test]
    fn without_a_subscriber_nothing_is_written() {
        let mut params = CallToolRequestParams::new("t");
        tracing::info_span!("calling").in_scope(|| inject(&mut params));
        assert!(params.meta.is_none());
    }
}
