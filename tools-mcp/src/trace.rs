//! Trace context across MCP (W3C `traceparent`/`tracestate` in a request's `_meta`, where the
//! MCP 2026-07-28 revision places it, SEP-414).
//!
//! - Import: [`inject`] writes the current span's context (the importing call's `execute_tool`
//!   span) into the `_meta` of the `tools/call` it sends, `tracestate` only when it is not
//!   empty. With no valid context (no OpenTelemetry layer, no span) nothing is written.
//! - Serve: [`call_span`] is the span a served `tools/call` runs in, `mcp tools/call` (exported as
//!   `tools/call <tool>`, as OpenTelemetry's MCP conventions name a server's span), with
//!   `rpc.system = "mcp"`, `mcp.method.name`, `gen_ai.tool.name`, `gen_ai.operation.name` and
//!   `jsonrpc.request.id`. When the request's `_meta` carries a valid `traceparent`, the span's
//!   parent is the caller's span ([`tools_otel::set_remote_parent`]), so the pipeline's
//!   `execute_tool <tool>` span, its child, is in the caller's trace. An invalid or absent one
//!   leaves the span where it was (a root, or the child of the current span); nothing fails.
//!
//! Both need the `otel` feature; without it `inject` writes nothing and the span is still made
//! (for any `tracing` subscriber) but never parented from elsewhere.

use rmcp::model::{CallToolRequestParams, RequestId, RequestMetaObject};

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

/// The span a served `tools/call` of `tool` with request `id` runs in, parented on the trace
/// context of `meta` when it carries a valid one (feature `otel`).
pub(crate) fn call_span(tool: &str, id: &RequestId, meta: &RequestMetaObject) -> tracing::Span {
    let span = tracing::info_span!(
        "mcp tools/call",
        otel.name = %format_args!("tools/call {tool}"),
        otel.kind = "server",
        rpc.system = "mcp",
        mcp.method.name = "tools/call",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %tool,
        jsonrpc.request.id = %id,
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
