//! Shipped execute wrappers, opt-in: install them with
//! [`Scope::wrap_execute`](crate::Scope::wrap_execute).
//!
//! - [`timeout`] enforces each definition's declared timeout and fails the call with
//!   `TOOL_TIMEOUT`;
//! - [`Metrics`] records per-tool call counts, failures and latencies.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use serde_json::Value;

use crate::errors::{ExecutionError, ToolError};
use crate::runtime::handle::{Dispatch, Next};

/// A wrapper that enforces [`ToolDefinition::timeout`](crate::ToolDefinition::timeout).
///
/// At the deadline it cancels the token the body sees, waits for the body to settle (bodies
/// are cooperative and are never abandoned), and fails the call with `TOOL_TIMEOUT`, whatever
/// the body returned. Tools without a timeout pass straight through. A tool whose timeout
/// [resets on progress](crate::definition::ToolDefinitionBuilder::timeout_resets_on_progress)
/// gets a new deadline at each progress report (see [`crate::progress`]) and fails with
/// "reported no progress for ..." when it goes quiet for the timeout, or "did not finish within
/// its maximum total time ..." at its maximum total time. Needs a Tokio runtime with the time
/// driver enabled.
///
/// ```
/// # async fn demo(scope: &tools_runtime::Scope) {
/// let _timeouts = scope.wrap_execute(tools_runtime::wrappers::timeout()).unwrap();
/// # }
/// ```
pub fn timeout()
-> impl Fn(Dispatch, Next) -> BoxFuture<'static, Result<Value, ToolError>> + Send + Sync + 'static {
    |mut dispatch: Dispatch, next: Next| -> BoxFuture<'static, Result<Value, ToolError>> {
        let Some(limit) = dispatch.definition().timeout() else {
            return next.run(dispatch);
        };
        let max_total = dispatch.definition().timeout_max_total();
        // Subscribed before the body starts, so no report is missed.
        let mut reports = max_total.map(|_| dispatch.execution().progress_reports());
        let deadline = dispatch.cancellation().child_token();
        dispatch.set_cancellation(deadline.clone());
        let tool = dispatch.definition().name().to_owned();
        Box::pin(async move {
            let start = tokio::time::Instant::now();
            let mut quiet_until = start + limit;
            let mut inner = std::pin::pin!(next.run(dispatch));
            let error = loop {
                let (until, error) = match max_total {
                    None => (
                        quiet_until,
                        ExecutionError::Timeout {
                            tool: tool.clone(),
                            millis: limit.as_millis(),
                        },
                    ),
                    Some(max) if start + max <= quiet_until => (
                        start + max,
                        ExecutionError::MaxTotalTime {
                            tool: tool.clone(),
                            millis: max.as_millis(),
                        },
                    ),
                    Some(_) => (
                        quiet_until,
                        ExecutionError::NoProgress {
                            tool: tool.clone(),
                            millis: limit.as_millis(),
                        },
                    ),
                };
                tokio::select! {
                    biased;
                    out = &mut inner => return out,
                    Some(Ok(())) = async {
                        match reports.as_mut() {
                            Some(reports) => Some(reports.changed().await),
                            None => None,
                        }
                    } => {
                        quiet_until = tokio::time::Instant::now() + limit;
                    }
                    () = tokio::time::sleep_until(until) => break error,
                }
            };
            deadline.cancel();
            let _settled = inner.await;
            Err(ToolError::from_execution(error))
        })
    }
}

/// Per-tool statistics recorded by [`Metrics`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ToolStats {
    /// Calls that reached the wrapper.
    pub calls: u64,
    /// Of those, how many failed.
    pub failures: u64,
    /// The sum of their latencies.
    pub total: Duration,
    /// The shortest latency.
    pub min: Duration,
    /// The longest latency.
    pub max: Duration,
}

impl ToolStats {
    /// The mean latency (zero before the first call).
    pub fn mean(&self) -> Duration {
        match u32::try_from(self.calls) {
            Ok(0) => Duration::ZERO,
            Ok(n) => self.total / n,
            Err(_) => Duration::from_secs_f64(self.total.as_secs_f64() / self.calls as f64),
        }
    }
}

/// Records per-tool call counts and latencies of the dispatch (wrappers registered after it,
/// and the body). Cheap to clone; clones share the numbers.
///
/// ```
/// # async fn demo(scope: &tools_runtime::Scope) {
/// let metrics = tools_runtime::wrappers::Metrics::new();
/// let _m = scope.wrap_execute(metrics.wrapper()).unwrap();
/// // ... run calls ...
/// let stats = metrics.get("read_file").unwrap_or_default();
/// println!("{} calls, mean {:?}", stats.calls, stats.mean());
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct Metrics(Arc<Mutex<BTreeMap<String, ToolStats>>>);

impl Metrics {
    /// Empty metrics.
    pub fn new() -> Self {
        Self::default()
    }

    /// The wrapper to install with [`Scope::wrap_execute`](crate::Scope::wrap_execute).
    pub fn wrapper(
        &self,
    ) -> impl Fn(Dispatch, Next) -> BoxFuture<'static, Result<Value, ToolError>> + Send + Sync + 'static
    {
        let metrics = self.clone();
        move |dispatch: Dispatch, next: Next| -> BoxFuture<'static, Result<Value, ToolError>> {
            let metrics = metrics.clone();
            let tool = dispatch.definition().name().to_owned();
            Box::pin(async move {
                let start = Instant::now();
                let out = next.run(dispatch).await;
                metrics.record(tool, start.elapsed(), out.is_err());
                out
            })
        }
    }

    fn record(&self, tool: String, latency: Duration, failed: bool) {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let s = map.entry(tool).or_default();
        s.min = if s.calls == 0 {
            latency
        } else {
            s.min.min(latency)
        };
        s.max = s.max.max(latency);
        s.calls += 1;
        s.failures += u64::from(failed);
        s.total += latency;
    }

    /// The statistics of one tool.
    pub fn get(&self, tool: &str) -> Option<ToolStats> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(tool)
            .copied()
    }

    /// The statistics of every tool, by name.
    pub fn snapshot(&self) -> BTreeMap<String, ToolStats> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}
