//! What the pipeline costs over calling a tool directly.
//!
//! Three cases, measured side by side in one run on a trivial tool whose arguments are a
//! 10-field object:
//!
//! - `floor`: validate the arguments with the tool's compiled validator and call the body
//!   directly (what a caller without a registry would pay at least);
//! - `execute/no_listeners`: [`ToolRuntime::execute`] with no hooks installed;
//! - `execute/one_of_each_hook`: with one pre-execute listener, one guard, one execute wrapper,
//!   one post-execute listener and one observer.
//!
//! Every case is driven by the same minimal executor (`futures::executor::block_on`), so the
//! differences are the pipeline's. After criterion's report, the bench prints the medians of
//! its own interleaved measurement, the overhead over the floor and the ratios. The targets are
//! at most 1 µs over the floor without listeners and at most 2 µs with one of each hook.
//!
//! Then the same call without listeners under three `tracing` set-ups, interleaved: no
//! subscriber (the pipeline creates no span), a subscriber that keeps nothing (a bare
//! `tracing_subscriber` registry: each span is created, recorded and dropped), and that registry
//! with `tools-otel`'s OpenTelemetry layer and a batch processor whose exporter drops every
//! batch (what the export costs a call, less the network). Target: under 2 µs a call added by the
//! OpenTelemetry layer. A fourth row, beside the target's, puts the same layer over a processor
//! that drops each span on the calling thread as it ends (no channel, no thread): not what
//! `tools-otel` installs, it tells the layer's cost from the batch processor's. `EXECUTE_PROFILE=otel:N` runs N calls under that layer and nothing else, for a
//! profiler (`otel-simple:N`, `registry:N` and `off:N` likewise under the other set-ups).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use futures::executor::block_on;
use serde_json::{Value, json};
use tools_runtime::hooks::PostDecision;
use tools_runtime::schema::Validator;
use tools_runtime::{Output, Scope, ToolCall, ToolDefinition, ToolError, ToolRuntime};

fn input_schema() -> Value {
    let mut props = serde_json::Map::new();
    for i in 0..10 {
        let kind = if i % 2 == 0 { "string" } else { "integer" };
        props.insert(format!("field{i}"), json!({"type": kind}));
    }
    json!({"type": "object", "properties": props, "required": ["field0", "field1"]})
}

fn args() -> Arc<Value> {
    let mut obj = serde_json::Map::new();
    for i in 0..10 {
        let v = if i % 2 == 0 {
            json!(format!("value {i}"))
        } else {
            json!(i * 1000)
        };
        obj.insert(format!("field{i}"), v);
    }
    Arc::new(Value::Object(obj))
}

/// The tool's body, shared by the floor and the registered definition.
async fn trivial(args: Arc<Value>) -> Result<Value, ToolError> {
    Ok(Value::Bool(args.get("field1").is_some()))
}

fn runtime(with_hooks: bool) -> (ToolRuntime, Scope) {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let def = ToolDefinition::builder("trivial")
        .input_schema(input_schema())
        .output(Output::json(json!({"type": "boolean"})))
        .execute(|args, _ctx| trivial(args))
        .build()
        .unwrap();
    std::mem::forget(plugin.register(def).unwrap());
    if with_hooks {
        std::mem::forget(plugin.on_pre_execute(|_, d| d).unwrap());
        std::mem::forget(plugin.guard(|_| None).unwrap());
        std::mem::forget(plugin.wrap_execute(|d, next| next.run(d)).unwrap());
        std::mem::forget(
            plugin
                .on_post_execute(|_, _| PostDecision::accept())
                .unwrap(),
        );
        std::mem::forget(
            plugin
                .on_result(|_, r| {
                    black_box(r);
                })
                .unwrap(),
        );
    }
    (rt, plugin)
}

struct Cases {
    validator: Validator,
    args: Arc<Value>,
    bare: ToolRuntime,
    hooked: ToolRuntime,
    _scopes: (Scope, Scope),
}

impl Cases {
    fn new() -> Self {
        let (bare, s1) = runtime(false);
        let (hooked, s2) = runtime(true);
        Cases {
            validator: Validator::new(&input_schema()).unwrap(),
            args: args(),
            bare,
            hooked,
            _scopes: (s1, s2),
        }
    }

    fn floor(&self) -> Result<Value, ToolError> {
        block_on(async {
            if let Err(v) = self.validator.validate(&self.args) {
                return Err(ToolError::new(v.to_string()));
            }
            trivial(self.args.clone()).await
        })
    }

    fn execute(&self, rt: &ToolRuntime) -> tools_runtime::ToolExecutionResult {
        block_on(rt.execute(ToolCall::new("call-1", "trivial", self.args.clone())))
    }
}

fn criterion_benches(c: &mut Criterion, cases: &Cases) {
    assert!(cases.floor().is_ok());
    assert_eq!(cases.execute(&cases.bare).value(), Some(&json!(true)));
    assert_eq!(cases.execute(&cases.hooked).value(), Some(&json!(true)));
    let mut group = c.benchmark_group("execute");
    group.bench_function("floor", |b| b.iter(|| black_box(cases.floor())));
    group.bench_function("no_listeners", |b| {
        b.iter(|| black_box(cases.execute(&cases.bare)))
    });
    group.bench_function("one_of_each_hook", |b| {
        b.iter(|| black_box(cases.execute(&cases.hooked)))
    });
    group.finish();
}

/// Per case, the minimum and the median nanoseconds per call over `rounds` interleaved rounds of
/// `per_round` calls. On a shared machine the minimum is the figure least disturbed by other
/// processes; the median is printed beside it.
fn interleaved(cases: &Cases, rounds: usize, per_round: u32) -> [(f64, f64); 3] {
    let mut samples: [Vec<f64>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..rounds {
        for (i, sample) in samples.iter_mut().enumerate() {
            let start = Instant::now();
            for _ in 0..per_round {
                match i {
                    0 => drop(black_box(cases.floor())),
                    1 => drop(black_box(cases.execute(&cases.bare))),
                    _ => drop(black_box(cases.execute(&cases.hooked))),
                }
            }
            sample.push(start.elapsed().as_nanos() as f64 / f64::from(per_round));
        }
    }
    samples.map(|mut s| {
        s.sort_by(f64::total_cmp);
        (s[0], s[s.len() / 2])
    })
}

/// An exporter that drops every batch.
#[derive(Debug)]
struct Dropping;

impl opentelemetry_sdk::trace::SpanExporter for Dropping {
    async fn export(
        &self,
        _batch: Vec<opentelemetry_sdk::trace::SpanData>,
    ) -> opentelemetry_sdk::error::OTelSdkResult {
        Ok(())
    }
}

/// A span processor that drops each span as it ends, on the thread that ends it.
#[derive(Debug)]
struct DroppingProcessor;

impl opentelemetry_sdk::trace::SpanProcessor for DroppingProcessor {
    fn on_start(&self, _span: &mut opentelemetry_sdk::trace::Span, _cx: &opentelemetry::Context) {}
    fn on_end(&self, span: opentelemetry_sdk::trace::SpanData) {
        drop(black_box(span));
    }
    fn force_flush(&self) -> opentelemetry_sdk::error::OTelSdkResult {
        Ok(())
    }
    fn shutdown_with_timeout(&self, _timeout: Duration) -> opentelemetry_sdk::error::OTelSdkResult {
        Ok(())
    }
}

/// The `tracing` set-ups of [`traced`], in its rows' order (the names `EXECUTE_PROFILE` takes).
const SETUPS: [&str; 4] = ["off", "registry", "otel", "otel-simple"];

/// The call without listeners under each `tracing` set-up of `setups` (indices into [`SETUPS`]),
/// interleaved: min / median ns (NaN for a set-up not run).
fn traced(cases: &Cases, rounds: usize, per_round: u32, setups: &[usize]) -> [(f64, f64); 4] {
    use tracing_subscriber::layer::SubscriberExt as _;
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_batch_exporter(Dropping)
        .build();
    // The same layer with each span dropped by its processor on the calling thread as it ends:
    // not what `tools-otel` installs (its exporter blocks), but it tells the layer's own cost
    // from the batch processor's (its channel, and its thread dropping the spans).
    let simple = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_span_processor(DroppingProcessor)
        .build();
    let registry = tracing::Dispatch::new(tracing_subscriber::registry());
    let otel = tracing::Dispatch::new(
        tracing_subscriber::registry().with(tools_otel::layer_for(&provider)),
    );
    let otel_simple =
        tracing::Dispatch::new(tracing_subscriber::registry().with(tools_otel::layer_for(&simple)));
    let mut samples: [Vec<f64>; 4] = Default::default();
    let run = || {
        for _ in 0..per_round {
            drop(black_box(cases.execute(&cases.bare)));
        }
    };
    for _ in 0..rounds {
        for (i, sample) in samples.iter_mut().enumerate() {
            if !setups.contains(&i) {
                continue;
            }
            let start = Instant::now();
            match i {
                0 => run(),
                1 => tracing::dispatcher::with_default(&registry, run),
                2 => tracing::dispatcher::with_default(&otel, run),
                _ => tracing::dispatcher::with_default(&otel_simple, run),
            }
            sample.push(start.elapsed().as_nanos() as f64 / f64::from(per_round));
        }
    }
    let _ = provider.shutdown();
    let _ = simple.shutdown();
    samples.map(|mut s| {
        if s.is_empty() {
            return (f64::NAN, f64::NAN);
        }
        s.sort_by(f64::total_cmp);
        (s[0], s[s.len() / 2])
    })
}

fn main() {
    let cases = Cases::new();
    // `EXECUTE_PROFILE=<set-up>:N` (`otel`, `otel-simple`, `registry` or `off`): N calls under
    // that `tracing` set-up and nothing else, a loop for a profiler.
    if let Ok(spec) = std::env::var("EXECUTE_PROFILE") {
        let (name, n) = spec.split_once(':').unwrap_or((spec.as_str(), ""));
        let n: u32 = n.parse().unwrap_or(100_000);
        let Some(setup) = SETUPS.iter().position(|s| *s == name) else {
            panic!("EXECUTE_PROFILE: {name:?} is none of {SETUPS:?}");
        };
        let ns = traced(&cases, 1, n, &[setup])[setup].0;
        println!("{name}: {ns:.0} ns per call over {n} calls");
        return;
    }
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    criterion_benches(&mut c, &cases);
    c.final_summary();

    let rounds = 201;
    let per_round = 2_000;
    let [floor, bare, hooked] = interleaved(&cases, rounds, per_round);
    println!();
    println!(
        "execute overhead ({rounds} interleaved rounds of {per_round} calls each, same executor; min / median ns per call):"
    );
    println!(
        "  floor (validate 10-field args + call the body): {:>6.0} / {:>6.0}",
        floor.0, floor.1
    );
    for (label, case, target) in [
        (
            "execute, no listeners:                         ",
            bare,
            1000.0,
        ),
        (
            "execute, one of each hook:                     ",
            hooked,
            2000.0,
        ),
    ] {
        println!(
            "  {label}  {:>6.0} / {:>6.0}   over the floor: +{:.0} / +{:.0} ns (target +{target:.0}), ratio {:.2}x / {:.2}x",
            case.0,
            case.1,
            case.0 - floor.0,
            case.1 - floor.1,
            case.0 / floor.0,
            case.1 / floor.1
        );
    }

    let rounds = 51;
    let per_round = 1_000;
    let [off, registry, otel, otel_simple] = traced(&cases, rounds, per_round, &[0, 1, 2, 3]);
    println!(
        "\nexecute without listeners under tracing ({rounds} interleaved rounds of {per_round} calls; min / median ns per call):"
    );
    println!(
        "  tracing off (no subscriber):                   {:>6.0} / {:>6.0}",
        off.0, off.1
    );
    println!(
        "  a subscriber that keeps nothing (registry):    {:>6.0} / {:>6.0}   +{:.0} / +{:.0} ns over off",
        registry.0,
        registry.1,
        registry.0 - off.0,
        registry.1 - off.1
    );
    println!(
        "  OpenTelemetry layer, exporter dropping batches: {:>6.0} / {:>6.0}   +{:.0} / +{:.0} ns over off (target +2000)",
        otel.0,
        otel.1,
        otel.0 - off.0,
        otel.1 - off.1
    );
    println!(
        "  the same layer, spans dropped as they end:      {:>6.0} / {:>6.0}   +{:.0} / +{:.0} ns over off",
        otel_simple.0,
        otel_simple.1,
        otel_simple.0 - off.0,
        otel_simple.1 - off.1
    );
}
