//! OpenTelemetry for agent-tools: the toolkit's `tracing` spans, exported over OTLP.
//!
//! The toolkit's crates speak [`tracing`] only: every executed call is an `execute_tool <name>`
//! span with the OpenTelemetry GenAI conventions' attributes (`gen_ai.operation.name`,
//! `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.description`, `gen_ai.tool.type`) and
//! the toolkit's own under `agent_tools.*` (the execution token and its parent, the agent scope
//! and its presentation mode, the outcome and result code, the policy's answer, and the
//! duration of each phase of the pipeline in seconds), and a Code Mode run is a tree: the
//! `run_code` call's span holds the pre-run analysis, the run and one span per call its program
//! makes. This crate carries those spans to a collector: [`init`] installs a `tracing`
//! subscriber whose OpenTelemetry layer exports them with the OTLP HTTP exporter, configured the
//! standard way:
//!
//! | variable | meaning |
//! | --- | --- |
//! | `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_ENDPOINT` | where spans go (default `http://localhost:4318/v1/traces`) |
//! | `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT` | headers and timeout of each export |
//! | `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` | the resource (the service name defaults to the one given to [`Otel::new`]) |
//! | `OTEL_SDK_DISABLED=true` | nothing is installed; [`init`] returns a guard that does nothing |
//!
//! What is exported: the spans and events of the toolkit's own crates (the targets of
//! [`TOOLKIT_TARGETS`], at every level: `execute_tool` and the other spans above, and the
//! `tools/call` spans of `tools-mcp`), and nothing of the libraries beneath them (`rmcp`,
//! `hyper`, `reqwest`, ...), whose spans and events would each be a trace of its own in a
//! collector. A call of a tool of yours is an `execute_tool` span of the toolkit's, so it is
//! exported; a span or event your own code makes is under your crate's target: name it with
//! [`Otel::targets`], which takes a `tracing_subscriber` [`Targets`] filter in place of
//! [`toolkit_targets`] (start from that to keep the toolkit's).
//!
//! Spans are batched on a thread of the SDK's own; dropping the [`OtelGuard`] (or
//! [`OtelGuard::shutdown`]) exports what is left. For a subscriber of your own, [`Otel::layer`]
//! gives the layer (with the same filter) and the guard without installing anything. Nothing
//! here is compiled into the other crates: `tools-mcp serve` and the demo take it behind their
//! `otel` feature, and a program without a subscriber pays nothing for the spans (`tracing`
//! skips them).
//!
//! A trace crosses processes in W3C trace context (`traceparent`, `tracestate`): [`current`]
//! reads the current span's, and [`set_remote_parent`] makes a span the child of one that came
//! from elsewhere. `tools-mcp` carries it in each `tools/call`'s `_meta` (its `otel` feature),
//! so a call through an imported MCP tool and the server's execution of it are one trace. Read
//! a span's context that way (or with `OpenTelemetrySpanExt::context`): the layer does not make
//! an entered span OpenTelemetry's current context, which would cost every call more (see
//! [`layer_for`]).
//!
//! ```no_run
//! # fn main() -> Result<(), tools_otel::OtelError> {
//! // In main, before the runtime executes anything:
//! let _otel = tools_otel::init("my-agent")?;
//! // ... build the ToolRuntime and execute calls: each is a span in the collector ...
//! # Ok(())
//! # }
//! ```
//!
//! `cargo run -p tools-demo --features otel` runs the demo with it. To export more than the
//! toolkit's targets, name them:
//!
//! ```no_run
//! # fn main() -> Result<(), tools_otel::OtelError> {
//! use tracing::Level;
//!
//! let targets = tools_otel::toolkit_targets()
//!     .with_target("my_agent", Level::INFO)
//!     .with_target("rmcp", Level::DEBUG);
//! let _otel = tools_otel::Otel::new("my-agent").targets(targets).init()?;
//! # Ok(())
//! # }
//! ```
//!
//! A span beneath one that is not exported takes the nearest exported span above it as its
//! parent. [`Otel::layer`] gives the filtered layer for a subscriber of your own (a per-layer
//! filter), and [`layer_for`] the unfiltered one over a provider of your own. Integer attributes
//! (`agent_tools.token`, `agent_tools.parent`, `agent_tools.agent_scope`,
//! `agent_tools.code.sub_calls`) are exported as integers.
//!
//! # What the layer costs
//!
//! The layer does not make an entered span OpenTelemetry's current context
//! (tracing-opentelemetry's `with_context_activation(false)`): parents follow the `tracing`
//! spans. That, a call's strings recorded as `&str` (the layer copies each once) with the span's
//! name made once per definition, and the span entered once per poll (`tracing`'s `Instrument`
//! enters it once more to drop each finished future) are what keep the layer's cost down.
//! `cargo bench -p tools-runtime --bench execute` prints it: the call without hooks with tracing
//! off, under a bare `tracing_subscriber` registry, under the registry with [`layer_for`] over a
//! batch processor whose exporter drops every batch, and with the layer over a processor that
//! drops each span as it ends (no channel, no thread), interleaved, minimum and median ns per call
//! over tracing off. On a shared two-core machine (load 0.4 to 1.5; the runs in which tracing
//! off kept its usual speed, its minimum at most 690 ns and its median within 6% of it, 7 of 18)
//! the layer added +1,381 to +1,597 ns at the minimum and +1,543 to +1,798 at the median (the
//! registry alone +114 to +153 and +124 to +163; the layer without the batch processor +1,161 to
//! +1,192 and +1,207 to +1,268). Before those three changes (the toolkit at `6edf177`, its bench
//! run in turn with this one in the same session; 5 of 18 runs kept that speed) it added +1,887
//! to +2,104 and +2,134 to +2,323.
//!
//! The tests (`tools-otel/tests`) receive the spans on a loopback OTLP receiver ([`receiver`])
//! and check the tree, the names and the attributes (and that another target's span and event
//! are exported only when named), and check every attribute of a call's span, its value and its
//! type, as the SDK hands it to an exporter.

use std::collections::HashMap;
use std::time::Duration;

use opentelemetry::propagation::TextMapPropagator as _;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
pub use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::{Layer as _, SubscriberExt as _};

/// The OpenTelemetry layer of a subscriber `S`, as [`layer_for`] configures it.
pub type Layer<S> = tracing_opentelemetry::OpenTelemetryLayer<S, opentelemetry_sdk::trace::Tracer>;

/// [`Layer`] exporting only what a [`Targets`] filter lets through: what [`Otel::layer`] gives.
pub type FilteredLayer<S> = tracing_subscriber::filter::Filtered<Layer<S>, Targets, S>;

/// The targets (crate names, as `tracing` gives them) of the workspace's crates: what is
/// exported by default ([`toolkit_targets`]).
pub const TOOLKIT_TARGETS: &[&str] = &[
    "tools_runtime",
    "tools_code",
    "tools_mcp",
    "tools_approvals",
    "tools_codegen",
    "tools_dialects",
    "tools_schema",
    "tools_otel",
    "tools_demo",
];

/// The default filter: every span and event, at every level, of the [`TOOLKIT_TARGETS`], and
/// nothing else. Add your own targets to it for [`Otel::targets`]:
///
/// ```
/// use tracing::Level;
/// let targets = tools_otel::toolkit_targets()
///     .with_target("my_agent", Level::INFO)
///     .with_target("rmcp", Level::DEBUG);
/// let otel = tools_otel::Otel::new("my-agent").targets(targets);
/// # let _ = otel;
/// ```
pub fn toolkit_targets() -> Targets {
    Targets::new().with_targets(
        TOOLKIT_TARGETS
            .iter()
            .map(|target| (*target, tracing::Level::TRACE)),
    )
}

/// Why OpenTelemetry could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtelError {
    /// The OTLP exporter could not be built (an invalid endpoint or header).
    #[error("the OTLP exporter could not be built: {0}")]
    Exporter(#[source] opentelemetry_otlp::ExporterBuildError),
    /// Another `tracing` subscriber is installed already.
    #[error("a global tracing subscriber is already installed: {0}")]
    Subscriber(#[source] tracing::subscriber::SetGlobalDefaultError),
}

impl OtelError {
    /// The stable code of the error.
    pub fn code(&self) -> &'static str {
        match self {
            OtelError::Exporter(_) => "OTEL_EXPORTER",
            OtelError::Subscriber(_) => "OTEL_SUBSCRIBER",
        }
    }
}

/// How spans are exported: the OTLP HTTP exporter as the `OTEL_*` variables configure it, with
/// what the program overrides.
#[derive(Debug, Clone)]
pub struct Otel {
    service_name: String,
    endpoint: Option<String>,
    timeout: Option<Duration>,
    targets: Targets,
}

impl Otel {
    /// The configuration of the environment, with `service_name` as the service's name unless
    /// `OTEL_SERVICE_NAME` gives one.
    pub fn new(service_name: impl Into<String>) -> Self {
        Otel {
            service_name: service_name.into(),
            endpoint: None,
            timeout: None,
            targets: toolkit_targets(),
        }
    }

    /// Sends spans to `endpoint` (the full URL, such as `http://127.0.0.1:4318/v1/traces`),
    /// whatever the environment says.
    #[must_use]
    pub fn endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// Each export's timeout, whatever the environment says.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Which spans and events are exported, in place of [`toolkit_targets`] (the default):
    /// a [`Targets`] filter, by target and level. Build on [`toolkit_targets`] to keep the
    /// toolkit's spans, and add the targets of your code or of a library (`rmcp`, `hyper`,
    /// ...) whose spans you want too. A span that is not exported does not break the tree: a
    /// span beneath it takes the nearest exported span above as its parent.
    #[must_use]
    pub fn targets(mut self, targets: Targets) -> Self {
        self.targets = targets;
        self
    }

    /// The tracer provider, without a subscriber (`None` when `OTEL_SDK_DISABLED` is `true`).
    fn provider(&self) -> Result<Option<SdkTracerProvider>, OtelError> {
        if disabled(std::env::var("OTEL_SDK_DISABLED").ok().as_deref()) {
            return Ok(None);
        }
        let mut exporter = opentelemetry_otlp::SpanExporter::builder().with_http();
        if let Some(endpoint) = &self.endpoint {
            exporter = exporter.with_endpoint(endpoint.clone());
        }
        if let Some(timeout) = self.timeout {
            exporter = exporter.with_timeout(timeout);
        }
        let exporter = exporter.build().map_err(OtelError::Exporter)?;
        let mut resource = Resource::builder();
        if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
            resource = resource.with_service_name(self.service_name.clone());
        }
        // Batched on the SDK's own thread: the exporter's blocking client must not run on a
        // thread of the caller's async runtime, where spans end.
        Ok(Some(
            SdkTracerProvider::builder()
                .with_resource(resource.build())
                .with_batch_exporter(exporter)
                .build(),
        ))
    }

    /// The OpenTelemetry layer for a subscriber of your own, filtered by
    /// [`targets`](Self::targets) (a per-layer filter: the subscriber's other layers see
    /// everything), and the guard that flushes it (`None` when `OTEL_SDK_DISABLED` is `true`).
    pub fn layer<S>(&self) -> Result<Option<(FilteredLayer<S>, OtelGuard)>, OtelError>
    where
        S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
    {
        let Some(provider) = self.provider()? else {
            return Ok(None);
        };
        let layer = layer_for(&provider).with_filter(self.targets.clone());
        Ok(Some((layer, OtelGuard(Some(provider)))))
    }

    /// A subscriber exporting the spans and events [`targets`](Self::targets) lets through (a
    /// `tracing_subscriber` registry with the filtered OpenTelemetry layer), and its guard;
    /// `None` when `OTEL_SDK_DISABLED` is `true`. Install
    /// it for a scope with [`tracing::subscriber::set_default`] or for the process with
    /// [`tracing::subscriber::set_global_default`] (what [`init`] does).
    pub fn subscriber(
        &self,
    ) -> Result<Option<(impl tracing::Subscriber + Send + Sync + 'static, OtelGuard)>, OtelError>
    {
        Ok(self
            .layer()?
            .map(|(layer, guard)| (tracing_subscriber::registry().with(layer), guard)))
    }

    /// Installs [`subscriber`](Self::subscriber) as the process's subscriber.
    pub fn init(&self) -> Result<OtelGuard, OtelError> {
        match self.subscriber()? {
            None => Ok(OtelGuard(None)),
            Some((subscriber, guard)) => {
                tracing::subscriber::set_global_default(subscriber)
                    .map_err(OtelError::Subscriber)?;
                Ok(guard)
            }
        }
    }
}

/// The OpenTelemetry layer this crate installs, over a tracer provider of your own (your
/// exporter, your processor): spans carry the toolkit's attributes and no per-span extras
/// (source location, thread, target, time spent idle), which would cost each call more than the
/// rest of the layer.
///
/// It exports whatever reaches it: give it
/// `.with_filter(`[`toolkit_targets`]`())` (`tracing_subscriber::Layer::with_filter`) to
/// export what [`Otel::layer`] does.
///
/// Entering a span does not make it OpenTelemetry's current context
/// (`with_context_activation(false)`, as `tracing-opentelemetry` did before 0.32): parents
/// follow the `tracing` spans, and a span's trace context is read from the `tracing` span
/// ([`current`], `OpenTelemetrySpanExt::context`), not from `opentelemetry::Context::current()`.
/// Activating it would attach and detach an OpenTelemetry context at every enter and exit of
/// every span, and start each OpenTelemetry span at its first enter (behind a lock its
/// attributes then take one by one) rather than once, at its end.
pub fn layer_for<S>(provider: &SdkTracerProvider) -> Layer<S>
where
    S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
{
    tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("agent-tools"))
        .with_location(false)
        .with_threads(false)
        .with_target(false)
        .with_level(false)
        .with_tracked_inactivity(false)
        .with_context_activation(false)
}

/// Whether `OTEL_SDK_DISABLED` (its value, when set) turns the SDK off: `true`, in any case,
/// around spaces, as the specification says; anything else leaves it on.
fn disabled(value: Option<&str>) -> bool {
    value.is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// Exports the spans still waiting when dropped (or at [`shutdown`](Self::shutdown)).
#[derive(Debug)]
#[must_use = "dropping the guard shuts the exporter down"]
pub struct OtelGuard(Option<SdkTracerProvider>);

impl OtelGuard {
    /// Exports what is waiting and stops exporting; errors are logged, not returned (there is
    /// nobody left to tell).
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(provider) = self.0.take()
            && let Err(error) = provider.shutdown()
        {
            eprintln!("tools-otel: the last spans could not be exported: {error}");
        }
    }
}

impl Drop for OtelGuard {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Installs a process-wide subscriber that exports the toolkit's spans and events
/// ([`toolkit_targets`]) over OTLP, configured by the
/// `OTEL_*` variables, with `service_name` unless `OTEL_SERVICE_NAME` is set: the one call a
/// `main` makes. Keep the guard until the program ends.
pub fn init(service_name: &str) -> Result<OtelGuard, OtelError> {
    Otel::new(service_name).init()
}

/// W3C trace context (`traceparent` and `tracestate`), as it crosses a process boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    /// `00-<trace id>-<span id>-<flags>`.
    pub traceparent: String,
    /// Vendor entries; empty when there are none.
    pub tracestate: String,
}

/// The trace context of the current `tracing` span, when an OpenTelemetry layer records it
/// (`None` without one, or outside any span).
pub fn current() -> Option<TraceContext> {
    let context = tracing::Span::current().context();
    let mut carrier: HashMap<String, String> = HashMap::new();
    TraceContextPropagator::new().inject_context(&context, &mut carrier);
    let traceparent = carrier.remove("traceparent")?;
    Some(TraceContext {
        traceparent,
        tracestate: carrier.remove("tracestate").unwrap_or_default(),
    })
}

/// Makes `span` the child of the span `traceparent` names (another process's); whether it did
/// (an invalid `traceparent`, or no OpenTelemetry layer, leaves `span` as it was). Call it
/// before the span is first entered.
pub fn set_remote_parent(span: &tracing::Span, traceparent: &str, tracestate: &str) -> bool {
    let mut carrier: HashMap<String, String> = HashMap::new();
    carrier.insert("traceparent".to_owned(), traceparent.to_owned());
    if !tracestate.is_empty() {
        carrier.insert("tracestate".to_owned(), tracestate.to_owned());
    }
    let context = TraceContextPropagator::new().extract(&carrier);
    use opentelemetry::trace::TraceContextExt as _;
    if !context.span().span_context().is_valid() {
        return false;
    }
    span.set_parent(context).is_ok()
}

pub mod receiver;

#[cfg(test)]
mod tests {
    use super::disabled;

    #[test]
    fn only_true_disables_the_sdk() {
        for on in [None, Some(""), Some("false"), Some("1"), Some("yes")] {
            assert!(!disabled(on), "{on:?}");
        }
        for off in [Some("true"), Some("TRUE"), Some(" True ")] {
            assert!(disabled(off), "{off:?}");
        }
    }
}
