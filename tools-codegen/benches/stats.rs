//! The cost of counting: `stats` (every tool projected into nine dialects with its findings and
//! tokenized twice, plus the four Code Mode presentations) on a 1,000-tool catalog, beside
//! rendering the TypeScript SDK of the same catalog. The encoders are loaded before the timing
//! starts (they are loaded once per process); loading them is timed on its own.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::{Duration, Instant};
use tools_codegen::stats::{Counter, stats};
use tools_codegen::{Catalog, render_typescript};

mod support;
use support::{catalog_json, fastest};

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
