//! Progress reports of a running call (`ToolRunContext::progress`): what refuses one, who sees
//! them (the call's own sink, the listeners of its scopes), that nothing sees a report after
//! the call's result, and the timeout wrapper that resets on progress.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tools_runtime::error::DefinitionError;
use tools_runtime::progress::{Progress, ProgressError};
use tools_runtime::wrappers::timeout;
use tools_runtime::{Output, ToolCall, ToolDefinition, ToolRunContext, ToolRuntime, codes};

/// A tool whose body runs `body` with its context; the body's error becomes the call's.
fn tool_with<F>(name: &str, body: F) -> ToolDefinition
where
    F: Fn(ToolRunContext) -> Result<(), ProgressError> + Send + Sync + 'static,
{
    let body = Arc::new(body);
    ToolDefinition::builder(name)
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "string"})))
        .execute(move |_args, ctx| {
            let body = body.clone();
            async move {
                body(ctx)?;
                Ok(json!("ok"))
            }
        })
        .build()
        .unwrap()
}

type Seen = Arc<Mutex<Vec<(String, f64, Option<f64>, Option<String>)>>>;

fn record(seen: &Seen, who: &str, progress: &Progress) {
    seen.lock().unwrap().push((
        who.to_owned(),
        progress.done(),
        progress.total(),
        progress.message().map(str::to_owned),
    ));
}

#[tokio::test]
async fn reports_reach_the_calls_sink_then_its_scopes_listeners_in_order() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let _t = plugin
        .register(tool_with("copy", |ctx| {
            ctx.progress(Progress::new(1.0).with_total(4.0))?;
            ctx.progress(Progress::new(2.5).with_total(4.0).with_message("half way"))?;
            ctx.progress(Progress::new(4.0))
        }))
        .unwrap();
    let seen: Seen = Arc::default();
    let s = seen.clone();
    let _global = plugin
        .on_progress(move |exec, progress| {
            record(&s, &format!("global:{}", exec.call_id()), progress)
        })
        .unwrap();
    // An agent's listener sees the agent's calls only.
    let agent = rt.agent_scope();
    let s = seen.clone();
    let _agent = agent
        .on_progress(move |_exec, progress| record(&s, "agent", progress))
        .unwrap();
    let s = seen.clone();
    let call = ToolCall::new("c1", "copy", json!({}))
        .with_progress(move |progress| record(&s, "sink", progress));
    let result = rt.execute(call).await;
    assert_eq!(result.value(), Some(&json!("ok")), "{}", result.text());
    let first = std::mem::take(&mut *seen.lock().unwrap());
    let half = Some("half way".to_owned());
    assert_eq!(
        first,
        [
            ("sink".to_owned(), 1.0, Some(4.0), None),
            ("global:c1".to_owned(), 1.0, Some(4.0), None),
            ("sink".to_owned(), 2.5, Some(4.0), half.clone()),
            ("global:c1".to_owned(), 2.5, Some(4.0), half),
            ("sink".to_owned(), 4.0, None, None),
            ("global:c1".to_owned(), 4.0, None, None),
        ]
    );

    // From the agent scope, both listeners see it.
    let result = rt
        .execute(ToolCall::new("c2", "copy", json!({})).with_agent(agent.key()))
        .await;
    assert!(!result.is_error());
    let whos: Vec<String> = std::mem::take(&mut *seen.lock().unwrap())
        .into_iter()
        .map(|(who, ..)| who)
        .collect();
    assert_eq!(whos.iter().filter(|w| *w == "agent").count(), 3, "{whos:?}");
    assert_eq!(whos.iter().filter(|w| *w == "global:c2").count(), 3);
}

#[tokio::test]
async fn invalid_and_decreasing_reports_are_refused_with_their_codes_and_seen_by_nobody() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let outcomes: Arc<Mutex<Vec<String>>> = Arc::default();
    let o = outcomes.clone();
    let _t = plugin
        .register(tool_with("bad", move |ctx| {
            let attempts = [
                Progress::new(f64::NAN),
                Progress::new(-1.0),
                Progress::new(1.0).with_total(f64::INFINITY),
                Progress::new(2.0),
                Progress::new(2.0),
                Progress::new(1.5),
                Progress::new(3.0).with_message("m".repeat(500)),
            ];
            for attempt in attempts {
                let outcome = match ctx.progress(attempt) {
                    Ok(()) => "ok".to_owned(),
                    Err(error) => format!("{}: {error}", error.code()),
                };
                o.lock().unwrap().push(outcome);
            }
            // A refusal returned with `?` fails the call with its code.
            ctx.progress(Progress::new(0.5))
        }))
        .unwrap();
    let seen: Seen = Arc::default();
    let s = seen.clone();
    let _l = plugin
        .on_progress(move |_e, progress| record(&s, "listener", progress))
        .unwrap();
    let result = rt.execute(ToolCall::new("c", "bad", json!({}))).await;
    assert_eq!(
        result.code(),
        Some("PROGRESS_NOT_INCREASING"),
        "{}",
        result.text()
    );
    let outcomes = outcomes.lock().unwrap().clone();
    assert_eq!(
        outcomes[..3],
        [
            "PROGRESS_INVALID: progress of `bad`: done must be a finite number of at least 0, got NaN",
            "PROGRESS_INVALID: progress of `bad`: done must be a finite number of at least 0, got -1",
            "PROGRESS_INVALID: progress of `bad`: total must be a finite number of at least 0, got inf",
        ]
    );
    assert_eq!(outcomes[3], "ok");
    assert!(outcomes[4].starts_with(
        "PROGRESS_NOT_INCREASING: progress of `bad` must increase with each report: 2 after 2"
    ));
    assert!(outcomes[5].starts_with("PROGRESS_NOT_INCREASING"));
    assert_eq!(outcomes[6], "ok");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "only the valid reports are seen: {seen:?}");
    assert_eq!(seen[0].1, 2.0);
    // A long message is cut, saying how much was left out.
    assert_eq!(
        seen[1].3.as_deref(),
        Some(format!("{}… (300 more bytes)", "m".repeat(200)).as_str())
    );
}

#[tokio::test]
async fn nothing_sees_a_report_made_after_the_calls_result() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let kept: Arc<Mutex<Option<ToolRunContext>>> = Arc::default();
    let k = kept.clone();
    let _t = plugin
        .register(tool_with("leaky", move |ctx| {
            ctx.progress(Progress::new(1.0))?;
            *k.lock().unwrap() = Some(ctx);
            Ok(())
        }))
        .unwrap();
    let seen: Seen = Arc::default();
    let s = seen.clone();
    let call = ToolCall::new("c", "leaky", json!({}))
        .with_progress(move |progress| record(&s, "sink", progress));
    assert!(!rt.execute(call).await.is_error());
    let ctx = kept.lock().unwrap().take().unwrap();
    let late = ctx.progress(Progress::new(2.0)).unwrap_err();
    assert_eq!(late.code(), "PROGRESS_AFTER_END");
    assert_eq!(
        late.to_string(),
        "the call of `leaky` has ended; its progress can no longer be reported"
    );
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_panicking_listener_is_skipped_and_the_others_still_see_the_report() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let _t = plugin
        .register(tool_with("t", |ctx| ctx.progress(Progress::new(1.0))))
        .unwrap();
    let _p = plugin.on_progress(|_e, _p| panic!("listener bug")).unwrap();
    let seen: Seen = Arc::default();
    let s = seen.clone();
    let _l = plugin
        .on_progress(move |_e, progress| record(&s, "after", progress))
        .unwrap();
    let result = rt.execute(ToolCall::new("c", "t", json!({}))).await;
    assert_eq!(result.value(), Some(&json!("ok")));
    assert_eq!(seen.lock().unwrap().len(), 1);
}

/// A body that reports progress `reports` times, `every` apart, then returns; it stops early
/// (setting `stopped`) when cancelled.
fn reporter(
    name: &str,
    reports: u32,
    every: Duration,
    limit: Duration,
    max_total: Option<Duration>,
    stopped: Arc<AtomicBool>,
) -> ToolDefinition {
    let mut b = ToolDefinition::builder(name)
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "integer"})))
        .timeout(limit);
    if let Some(max_total) = max_total {
        b = b.timeout_resets_on_progress(max_total);
    }
    b.execute(move |_a, ctx| {
        let stopped = stopped.clone();
        async move {
            for i in 1..=reports {
                tokio::select! {
                    () = tokio::time::sleep(every) => {}
                    () = ctx.cancellation().cancelled() => {
                        stopped.store(true, Ordering::SeqCst);
                        return Ok(json!(0));
                    }
                }
                ctx.progress(Progress::new(f64::from(i)))?;
            }
            Ok(json!(reports))
        }
    })
    .build()
    .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_timeout_that_resets_on_progress_lets_a_reporting_call_run_past_it() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let _w = plugin.wrap_execute(timeout()).unwrap();
    let stopped = Arc::new(AtomicBool::new(false));
    // Ten reports 40 ms apart under a 100 ms timeout: 400 ms in all.
    let _r = plugin
        .register(reporter(
            "steady",
            10,
            Duration::from_millis(40),
            Duration::from_millis(100),
            Some(Duration::from_secs(10)),
            stopped.clone(),
        ))
        .unwrap();
    // The same under a timeout that does not reset.
    let _f = plugin
        .register(reporter(
            "fixed",
            10,
            Duration::from_millis(40),
            Duration::from_millis(100),
            None,
            stopped.clone(),
        ))
        .unwrap();
    let r = rt.execute(ToolCall::new("c1", "steady", json!({}))).await;
    assert_eq!(r.value(), Some(&json!(10)), "{}", r.text());
    assert!(!stopped.load(Ordering::SeqCst));
    let r = rt.execute(ToolCall::new("c2", "fixed", json!({}))).await;
    assert_eq!(r.code(), Some(codes::TOOL_TIMEOUT));
    assert_eq!(r.text(), "Error: `fixed` did not finish within 100 ms");
    assert!(stopped.load(Ordering::SeqCst));
}

#[tokio::test(start_paused = true)]
async fn a_call_that_goes_quiet_or_runs_past_its_maximum_total_time_is_stopped() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let _w = plugin.wrap_execute(timeout()).unwrap();
    let quiet_stopped = Arc::new(AtomicBool::new(false));
    // Reports 200 ms apart under a 100 ms timeout: quiet too long before its first report.
    let _q = plugin
        .register(reporter(
            "quiet",
            3,
            Duration::from_millis(200),
            Duration::from_millis(100),
            Some(Duration::from_secs(10)),
            quiet_stopped.clone(),
        ))
        .unwrap();
    let long_stopped = Arc::new(AtomicBool::new(false));
    // Reports 50 ms apart forever (1,000 of them) under a maximum total of 300 ms.
    let _l = plugin
        .register(reporter(
            "endless",
            1_000,
            Duration::from_millis(50),
            Duration::from_millis(100),
            Some(Duration::from_millis(300)),
            long_stopped.clone(),
        ))
        .unwrap();
    let r = rt.execute(ToolCall::new("c1", "quiet", json!({}))).await;
    assert_eq!(r.code(), Some(codes::TOOL_TIMEOUT));
    assert_eq!(r.text(), "Error: `quiet` reported no progress for 100 ms");
    assert!(quiet_stopped.load(Ordering::SeqCst));
    let r = rt.execute(ToolCall::new("c2", "endless", json!({}))).await;
    assert_eq!(r.code(), Some(codes::TOOL_TIMEOUT));
    assert_eq!(
        r.text(),
        "Error: `endless` did not finish within its maximum total time of 300 ms"
    );
    assert!(long_stopped.load(Ordering::SeqCst));
}

#[test]
fn a_timeout_that_resets_needs_a_timeout_and_a_maximum_at_least_as_long() {
    let builder = || {
        ToolDefinition::builder("t")
            .input_schema(json!({"type": "object"}))
            .output(Output::json(json!({"type": "integer"})))
            .execute(|_a, _c| async { Ok(json!(1)) })
    };
    let error = builder()
        .timeout_resets_on_progress(Duration::from_secs(60))
        .build()
        .unwrap_err();
    assert_eq!(error.code(), "INVALID_TIMEOUT");
    assert!(matches!(
        error,
        DefinitionError::InvalidProgressTimeout { .. }
    ));
    assert_eq!(
        error.to_string(),
        "tool `t`: a timeout that resets on progress needs a timeout (`timeout`) to reset"
    );
    let error = builder()
        .timeout(Duration::from_secs(60))
        .timeout_resets_on_progress(Duration::from_secs(30))
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "tool `t`: the maximum total time (30s) must be at least the timeout (60s)"
    );
    let def = builder()
        .timeout(Duration::from_secs(30))
        .timeout_resets_on_progress(Duration::from_secs(30))
        .build()
        .unwrap();
    assert_eq!(def.timeout_max_total(), Some(Duration::from_secs(30)));
}
