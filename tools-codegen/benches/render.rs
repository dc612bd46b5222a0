//! Rendering speed on a 1,000-tool catalog, measured side by side with parsing the same catalog
//! from JSON (`Catalog::from_json_str`), the step every renderer input goes through anyway, and
//! with the CLI's lean reader (`ParsedCatalog::from_json_str`) on the same text.
//!
//! Prints criterion's figures for each step, then a side-by-side summary with the ratios.
//! The comparison with other generators (json-schema-to-typescript, datamodel-code-generator)
//! is `benches/codegen/compare.py` at the repository root.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;
use tools_codegen::{
    Catalog, ParsedCatalog, render_catalog_markdown, render_python, render_typescript,
};

mod support;
use support::{catalog_json, fastest};

fn bench(c: &mut Criterion) {
    let text = catalog_json(1000);
    let catalog = Catalog::from_json_str(&text, None).unwrap();
    let mut group = c.benchmark_group("1000_tools");
    group.sample_size(20);
    group.bench_function("parse_catalog_json (baseline)", |b| {
        b.iter(|| Catalog::from_json_str(black_box(&text), None).unwrap())
    });
    group.bench_function("ParsedCatalog::from_json_str", |b| {
        b.iter(|| ParsedCatalog::from_json_str(black_box(&text), None).unwrap())
    });
    group.bench_function("render_typescript", |b| {
        b.iter(|| render_typescript(black_box(&catalog)))
    });
    let parsed = ParsedCatalog::from_json_str(&text, None).unwrap();
    group.bench_function("render_typescript (ParsedCatalog)", |b| {
        b.iter(|| render_typescript(black_box(&parsed)))
    });
    group.bench_function("render_python", |b| {
        b.iter(|| render_python(black_box(&catalog)))
    });
    group.bench_function("render_catalog_markdown", |b| {
        b.iter(|| render_catalog_markdown(black_box(&catalog)))
    });
    group.finish();

    // `cargo test --all-targets` runs this binary once without `--bench` as a smoke test;
    // the side-by-side summary is for `cargo bench` only.
    if !std::env::args().any(|arg| arg == "--bench") {
        return;
    }
    // Side by side, in one run, for the printed ratios.
    let parse = fastest(15, || {
        drop(black_box(Catalog::from_json_str(&text, None).unwrap()))
    });
    let lean = fastest(15, || {
        drop(black_box(
            ParsedCatalog::from_json_str(&text, None).unwrap(),
        ))
    });
    let ts = fastest(15, || drop(black_box(render_typescript(&catalog))));
    let ts_lean = fastest(15, || drop(black_box(render_typescript(&parsed))));
    let py = fastest(15, || drop(black_box(render_python(&catalog))));
    let md = fastest(15, || drop(black_box(render_catalog_markdown(&catalog))));
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "\n1,000 tools ({} KiB of JSON), fastest of 15, compared against parsing the catalog JSON:",
        text.len() / 1024
    );
    println!("  parse catalog JSON (baseline)  {:8.2} ms", ms(parse));
    for (name, d) in [
        ("ParsedCatalog::from_json_str", lean),
        ("render_typescript", ts),
        ("render_typescript (parsed)", ts_lean),
        ("render_python", py),
        ("render_catalog_markdown", md),
    ] {
        println!(
            "  {name:<30} {:8.2} ms  = {:.2}x the parse",
            ms(d),
            d.as_secs_f64() / parse.as_secs_f64()
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
