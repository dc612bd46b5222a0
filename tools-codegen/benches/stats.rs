//! The cost of counting: `stats` (every tool projected into nine dialects and tokenized twice,
//! plus both SDKs and the instructions) on a 1,000-tool catalog, beside rendering the
//! TypeScript SDK of the same catalog. The encoders are loaded before the timing starts (they
//! are loaded once per process); loading them is timed on its own.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use std::hint::black_box;
use std::time::{Duration, Instant};
use tools_codegen::stats::{Counter, stats};
use tools_codegen::{Catalog, render_typescript};

/// The same catalog shape as `benches/codegen/compare.py` generates.
fn catalog_json(count: usize) -> String {
    let tools: Vec<Value> = (0..count)
        .map(|i| {
            let mut properties = json!({
                "path": {"type": "string", "description": format!("Path for tool {i}.")},
                "limit": {"type": "integer", "minimum": 1, "maximum": 500},
                "mode": {"type": "string", "enum": ["fast", "exact", "fuzzy"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "dryRun": {"type": "boolean", "default": false},
                "filter": {
                    "type": "object",
                    "properties": {
                        "since": {"type": ["string", "null"], "format": "date-time"},
                        "owner": {"type": "string"},
                        "labels": {"type": "object", "additionalProperties": {"type": "string"}}
                    },
                    "required": ["owner"],
                    "additionalProperties": false
                }
            });
            if i % 4 == 1 {
                properties["target"] = json!({"oneOf": [
                    {"type": "object", "properties": {"kind": {"const": "file"}, "path": {"type": "string"}}, "required": ["kind", "path"], "additionalProperties": false},
                    {"type": "object", "properties": {"kind": {"const": "url"}, "url": {"type": "string"}}, "required": ["kind", "url"], "additionalProperties": false}
                ]});
            }
            if i % 4 == 2 {
                properties["weights"] = json!({"type": "array", "items": {"type": "array", "items": {"type": "number"}}});
            }
            json!({
                "name": format!("tool_{i:04}"),
                "description": format!("Tool number {i}: does one thing well."),
                "inputSchema": {"type": "object", "properties": properties, "required": ["path"], "additionalProperties": i % 4 != 3},
                "outputSchema": {
                    "type": "object",
                    "properties": {
                        "items": {"type": "array", "items": {
                            "type": "object",
                            "properties": {"id": {"type": "integer"}, "name": {"type": "string"}, "score": {"type": ["number", "null"]}},
                            "required": ["id", "name"],
                            "additionalProperties": false
                        }},
                        "total": {"type": "integer"},
                        "truncated": {"type": "boolean"}
                    },
                    "required": ["items", "total"],
                    "additionalProperties": false
                }
            })
        })
        .collect();
    json!({"tools": tools}).to_string()
}

/// The fastest of `runs` runs of `f`.
fn fastest(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn bench(c: &mut Criterion) {
    let start = Instant::now();
    Counter::get().unwrap();
    let load = start.elapsed();
    let catalog = Catalog::from_json_str(&catalog_json(1000), None).unwrap();
    let mut group = c.benchmark_group("1000_tools");
    group.sample_size(10);
    group.bench_function("render_typescript (baseline)", |b| {
        b.iter(|| render_typescript(black_box(&catalog)))
    });
    group.bench_function("stats", |b| b.iter(|| stats(black_box(&catalog)).unwrap()));
    group.finish();

    let ts = fastest(5, || drop(black_box(render_typescript(&catalog))));
    let counted = fastest(5, || drop(black_box(stats(&catalog).unwrap())));
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("\n1,000 tools, fastest of 5:");
    println!(
        "  load both encoders (once per process) {:9.2} ms",
        ms(load)
    );
    println!("  render_typescript (baseline)          {:9.2} ms", ms(ts));
    println!(
        "  stats (9 dialects x 2 encodings, SDKs) {:9.2} ms  ({:.1}x the SDK render)",
        ms(counted),
        counted.as_secs_f64() / ts.as_secs_f64()
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
