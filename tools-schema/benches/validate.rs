//! Validation of a realistic 10-field tool-argument object: the compiled [`Validator`] beside a
//! direct call of the `jsonschema` crate on the same schema and value.
//!
//! Criterion measures each case; afterwards the bench times the pairs side by side
//! (interleaved rounds, median) and prints both figures and the ratio:
//!
//! ```sh
//! cargo bench -p tools-schema --bench validate
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use serde_json::{Value, json};
use tools_schema::Validator;

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "description": "Absolute path of the file"},
            "offset": {"type": "integer", "minimum": 0},
            "limit": {"type": "integer", "minimum": 1, "maximum": 10000},
            "mode": {"type": "string", "enum": ["exact", "regex", "glob"]},
            "case_sensitive": {"type": "boolean"},
            "include": {"type": "array", "items": {"type": "string"}, "maxItems": 20},
            "encoding": {"type": "string"},
            "context_lines": {"type": "integer", "minimum": 0, "maximum": 100},
            "max_bytes": {"type": "number", "exclusiveMinimum": 0},
            "output": {
                "type": "object",
                "properties": {
                    "format": {"type": "string", "enum": ["text", "json"]},
                    "color": {"type": "boolean"},
                },
                "required": ["format"],
                "additionalProperties": false,
            },
        },
        "required": ["path", "mode"],
        "additionalProperties": false,
    })
}

fn valid_args() -> Value {
    json!({
        "path": "/var/log/syslog",
        "offset": 120,
        "limit": 500,
        "mode": "regex",
        "case_sensitive": false,
        "include": ["*.log", "*.txt"],
        "encoding": "utf-8",
        "context_lines": 3,
        "max_bytes": 65536.5,
        "output": {"format": "json", "color": false},
    })
}

fn invalid_args() -> Value {
    json!({
        "offset": "ten",
        "limit": 0,
        "mode": "fast",
        "case_sensitive": false,
        "include": ["*.log", 7],
        "encoding": "utf-8",
        "context_lines": 3,
        "max_bytes": 65536.5,
        "output": {"colour": true},
    })
}

/// Median nanoseconds per call of `a` and `b`, timed in interleaved rounds.
fn side_by_side(mut a: impl FnMut(), mut b: impl FnMut()) -> (f64, f64) {
    const ROUNDS: usize = 21;
    const TARGET: Duration = Duration::from_millis(40);
    let iterations = |f: &mut dyn FnMut()| {
        let start = Instant::now();
        let mut n = 0u64;
        while start.elapsed() < TARGET / 4 {
            f();
            n += 1;
        }
        n.max(1) * 4
    };
    let na = iterations(&mut a);
    let nb = iterations(&mut b);
    let mut ta = Vec::with_capacity(ROUNDS);
    let mut tb = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for _ in 0..na {
            a();
        }
        ta.push(start.elapsed().as_nanos() as f64 / na as f64);
        let start = Instant::now();
        for _ in 0..nb {
            b();
        }
        tb.push(start.elapsed().as_nanos() as f64 / nb as f64);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    (median(&mut ta), median(&mut tb))
}

fn main() {
    let schema = schema();
    let ours = Validator::new(&schema).unwrap();
    let theirs = jsonschema::validator_for(&schema).unwrap();
    let valid = valid_args();
    let invalid = invalid_args();
    assert!(ours.is_valid(&valid) && theirs.is_valid(&valid));
    assert!(!ours.is_valid(&invalid) && !theirs.is_valid(&invalid));

    let mut c = Criterion::default().configure_from_args();
    {
        let mut group = c.benchmark_group("valid 10-field object");
        group.bench_function("tools_schema Validator::is_valid", |b| {
            b.iter(|| ours.is_valid(black_box(&valid)))
        });
        group.bench_function("tools_schema Validator::validate", |b| {
            b.iter(|| ours.validate(black_box(&valid)).is_ok())
        });
        group.bench_function("jsonschema Validator::is_valid", |b| {
            b.iter(|| theirs.is_valid(black_box(&valid)))
        });
        group.finish();
    }
    {
        let mut group = c.benchmark_group("invalid 10-field object");
        group.bench_function(
            "tools_schema Validator::validate (all violations, messages)",
            |b| b.iter(|| ours.validate(black_box(&invalid)).unwrap_err().len()),
        );
        group.bench_function("jsonschema iter_errors (all errors, messages)", |b| {
            b.iter(|| {
                theirs
                    .iter_errors(black_box(&invalid))
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
                    .len()
            })
        });
        group.bench_function("tools_schema Validator::is_valid", |b| {
            b.iter(|| ours.is_valid(black_box(&invalid)))
        });
        group.bench_function("jsonschema Validator::is_valid", |b| {
            b.iter(|| theirs.is_valid(black_box(&invalid)))
        });
        group.finish();
    }
    c.final_summary();

    println!();
    println!("side by side (median of interleaved rounds, ns per call):");
    let report = |label: &str, ours_ns: f64, theirs_label: &str, theirs_ns: f64| {
        println!(
            "  {label}: {ours_ns:.1} ns   vs   {theirs_label}: {theirs_ns:.1} ns   ratio {:.2}x",
            ours_ns / theirs_ns
        );
    };
    let (a, b) = side_by_side(
        || {
            black_box(ours.is_valid(black_box(&valid)));
        },
        || {
            black_box(theirs.is_valid(black_box(&valid)));
        },
    );
    report("valid, tools_schema is_valid", a, "jsonschema is_valid", b);
    let (a, b) = side_by_side(
        || {
            black_box(ours.validate(black_box(&valid)).is_ok());
        },
        || {
            black_box(theirs.is_valid(black_box(&valid)));
        },
    );
    report("valid, tools_schema validate", a, "jsonschema is_valid", b);
    let (a, b) = side_by_side(
        || {
            black_box(ours.validate(black_box(&invalid)).unwrap_err().len());
        },
        || {
            black_box(
                theirs
                    .iter_errors(black_box(&invalid))
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
                    .len(),
            );
        },
    );
    report(
        "invalid, tools_schema validate (report)",
        a,
        "jsonschema iter_errors + to_string",
        b,
    );
    println!(
        "  ({} violations reported: {:?})",
        ours.validate(&invalid).unwrap_err().len(),
        ours.validate(&invalid)
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    );
}
