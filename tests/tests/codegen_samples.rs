//! Generated values through the generated types (issue #29): values that `hypothesis-jsonschema`
//! (PyPI; `scripts/test` installs a pinned version into `.tools/venv`) generates from each tool
//! schema of the open-and-untyped fixture, the construct fixture and the example catalog, the
//! values of `codegen_typecheck`'s hand-written sampler, and the hostile variants of both that
//! the schemas admit (`null`, `""` and `false` in place of each value and at the root, an extra
//! key in each object), all confirmed by the `jsonschema` validator, are
//! assigned to the generated types; `tsc --strict` and `mypy --strict` must accept every one.
//! A closed object must still reject an extra key in both languages (`@ts-expect-error`, and
//! `# type: ignore[...]` under `--warn-unused-ignores`, which `--strict` includes).
//!
//! The test fails, and never skips, when hypothesis-jsonschema is missing. Generation is
//! derandomized, so a run is repeatable; the whole test takes seconds (one generator process,
//! one `tsc` run and one `mypy` run).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::codegen_support::*;
use serde_json::{Value, json};
use std::fmt::Write as _;
use tools_codegen::{render_python, render_typescript};

/// Values drawn per schema.
const PER_SCHEMA: usize = 8;

/// Hostile variants kept per schema (on top of the drawn values).
const HOSTILE_PER_SCHEMA: usize = 32;

/// The catalogs sampled: hypothesis-jsonschema hangs on some of the adversarial fixture's
/// patterns, and the hostile catalog's schemas are all closed, so those two are left to the
/// hand-written sampler of `codegen_typecheck`.
const CATALOGS: [&str; 3] = ["open_and_untyped", "constructs", "example"];

/// The stand-ins for a value that `properties` (or `items`) without `type` admits.
fn scalars() -> [Value; 3] {
    [json!(null), json!(""), json!(false)]
}

/// The JSON pointers of the objects in `value`, outermost first, at most `limit` of them.
fn object_pointers(value: &Value, limit: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = vec![(String::new(), value)];
    while let Some((pointer, value)) = pending.pop() {
        if out.len() == limit {
            break;
        }
        match value {
            Value::Object(map) => {
                for (key, child) in map.iter().rev() {
                    let token = key.replace('~', "~0").replace('/', "~1");
                    pending.push((format!("{pointer}/{token}"), child));
                }
                out.push(pointer);
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate().rev() {
                    pending.push((format!("{pointer}/{i}"), child));
                }
            }
            _ => {}
        }
    }
    out
}

/// The hostile variants of `value`: the root, and each member of each object, replaced by
/// `null`, `""` and `false`; an extra key `foo` added to each object. Not yet checked against
/// the schema.
fn hostile_variants(value: &Value) -> Vec<Value> {
    let mut out: Vec<Value> = scalars().to_vec();
    for pointer in object_pointers(value, 16) {
        let mut extra = value.clone();
        if let Some(Value::Object(map)) = extra.pointer_mut(&pointer)
            && !map.contains_key("foo")
        {
            map.insert("foo".into(), json!(1));
            out.push(extra);
        }
        let Some(Value::Object(map)) = value.pointer(&pointer) else {
            continue;
        };
        for key in map.keys().take(8) {
            for stand_in in scalars() {
                let mut variant = value.clone();
                if let Some(Value::Object(map)) = variant.pointer_mut(&pointer) {
                    map.insert(key.clone(), stand_in);
                    out.push(variant);
                }
            }
        }
    }
    out
}

/// One schema's values: those drawn, those of the hand-written sampler (which fill in every
/// declared key, so each gets its hostile variants), and the hostile variants of both that the
/// schema accepts.
struct Sampled {
    drawn: Vec<Value>,
    hand: Vec<Value>,
    hostile: Vec<Value>,
}

impl Sampled {
    fn all(&self) -> impl Iterator<Item = &Value> {
        self.drawn.iter().chain(&self.hand).chain(&self.hostile)
    }
}

#[test]
fn generated_values_including_hostile_ones_type_check() {
    let dir = tempfile::tempdir().unwrap();
    let catalogs: Vec<_> = CATALOGS
        .iter()
        .map(|name| (*name, fixture_or_example(name)))
        .collect();

    // Every schema, in order: (catalog, tool index, "args" or "output", schema).
    let mut schemas = Vec::new();
    for (c, (_, catalog)) in catalogs.iter().enumerate() {
        for (t, tool) in catalog.tools().iter().enumerate() {
            schemas.push((c, t, "args", &tool.input_schema));
            if let Some(output) = &tool.output_schema {
                schemas.push((c, t, "output", output));
            }
        }
    }
    let plain: Vec<&Value> = schemas.iter().map(|(_, _, _, s)| *s).collect();
    let answers = hypothesis_samples(dir.path(), &plain, PER_SCHEMA);

    let mut sampled: Vec<Sampled> = Vec::new();
    let mut failures = Vec::new();
    let mut disagreements = Vec::new();
    let mut drawn_total = 0;
    for ((c, t, kind, schema), answer) in schemas.iter().zip(answers) {
        let label = format!(
            "{}.{}.{kind}",
            catalogs[*c].0,
            catalogs[*c].1.tools()[*t].name
        );
        let validator = validator(schema);
        let accepts = |v: &Value| validator.as_ref().is_some_and(|val| val.is_valid(v));
        let drawn = match answer {
            Ok(values) => values,
            Err(error) => {
                failures.push(format!("{label}: {error}"));
                Vec::new()
            }
        };
        drawn_total += drawn.len();
        let (drawn, rejected): (Vec<Value>, Vec<Value>) = drawn.into_iter().partition(accepts);
        disagreements.extend(rejected.into_iter().map(|v| format!("{label}: {v}")));
        let hand: Vec<Value> = samples(schema, true, 4)
            .into_iter()
            .filter(|v| !drawn.contains(v))
            .collect();
        let mut hostile: Vec<Value> = Vec::new();
        for value in hand.iter().chain(&drawn) {
            for variant in hostile_variants(value) {
                if hostile.len() < HOSTILE_PER_SCHEMA
                    && accepts(&variant)
                    && !drawn.contains(&variant)
                    && !hand.contains(&variant)
                    && !hostile.contains(&variant)
                {
                    hostile.push(variant);
                }
            }
        }
        sampled.push(Sampled {
            drawn,
            hand,
            hostile,
        });
    }

    // The generator covered the catalogs: every schema of the fixture and the example, and all
    // of the construct fixture's but the one with constructs outside the subset.
    let expected_failures: Vec<&str> = failures
        .iter()
        .map(String::as_str)
        .filter(|f| !f.starts_with("constructs.degraded.args:"))
        .collect();
    assert!(
        expected_failures.is_empty(),
        "hypothesis-jsonschema generated nothing for:\n{}",
        expected_failures.join("\n")
    );
    assert!(drawn_total >= 100, "only {drawn_total} values were drawn");
    // The Rust validator and Python's agree on nearly every drawn value (they may differ on
    // a regular expression's dialect).
    assert!(
        disagreements.len() * 10 <= drawn_total,
        "the jsonschema validator rejects {} of {drawn_total} drawn values:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );

    // The hostile cases are there.
    let values = |catalog: &str, tool: &str, kind: &str| -> Vec<&Value> {
        let i = schemas
            .iter()
            .position(|(c, t, k, _)| {
                catalogs[*c].0 == catalog && catalogs[*c].1.tools()[*t].name == tool && *k == kind
            })
            .unwrap_or_else(|| panic!("no schema {catalog}.{tool}.{kind}"));
        sampled[i].all().collect()
    };
    let untyped = values("open_and_untyped", "untyped_properties", "args");
    for stand_in in scalars() {
        for key in ["filter", "closed", "requiredOnly", "list"] {
            assert!(
                untyped.iter().any(|v| v.get(key) == Some(&stand_in)),
                "no sample of untyped_properties has {key}: {stand_in}"
            );
        }
        assert!(
            values("open_and_untyped", "untyped_root", "args").contains(&&stand_in),
            "no sample of untyped_root is {stand_in}"
        );
    }
    let open = values("open_and_untyped", "open_objects", "args");
    for pointer in [
        "/foo",
        "/absent/foo",
        "/explicit/foo",
        "/empty/foo",
        "/typed/foo",
        "/patterned/foo",
        "/nested/foo",
        "/nested/inner/foo",
    ] {
        assert!(
            open.iter().any(|v| v.pointer(pointer).is_some()),
            "no sample of open_objects has {pointer}"
        );
    }
    let closed = values("open_and_untyped", "closed_objects", "args");
    assert!(!closed.is_empty());
    assert!(
        closed
            .iter()
            .all(|v| v.get("foo").is_none() && v.pointer("/inner/foo").is_none()),
        "the validator let an extra key into a closed object"
    );

    // Every value through both languages' types.
    let mut ts_files = Vec::new();
    let mut py_files = Vec::new();
    let mut checked = 0;
    for (c, (name, catalog)) in catalogs.iter().enumerate() {
        let ts = render_typescript(catalog);
        let py = render_python(catalog);
        std::fs::write(dir.path().join(format!("sdk_{name}.ts")), &ts).unwrap();
        std::fs::write(dir.path().join(format!("sdk_{name}.py")), &py).unwrap();
        let mut ts_check =
            format!("import type {{ ToolArgsMap, ToolOutputMap }} from \"./sdk_{name}\";\n\n");
        let mut py_check = format!(
            "from typing import Any, Literal\n\nfrom sdk_{name} import *  # noqa: F403\n\n"
        );
        for (i, (_, t, kind, _)) in schemas.iter().enumerate() {
            if schemas[i].0 != c {
                continue;
            }
            let tool = &catalog.tools()[*t];
            let key = Value::String(tool.name.clone()).to_string();
            let (py_args, py_output) = python_signature(&py, &tool.name);
            let (map, py_type) = match *kind {
                "args" => ("ToolArgsMap", py_args),
                _ => ("ToolOutputMap", py_output),
            };
            for (n, value) in sampled[i].all().enumerate() {
                writeln!(
                    ts_check,
                    "export const {kind}_{t}_{n}: {map}[{key}] = {};",
                    ts_value(value)
                )
                .unwrap();
                writeln!(py_check, "{kind}_{t}_{n}: {py_type} = {}", py_value(value)).unwrap();
                checked += 1;
            }
        }
        if *name == "open_and_untyped" {
            // A closed object still rejects an extra key, at the root and nested.
            for (label, value) in [
                ("closed_root", json!({"a": "x", "foo": 1})),
                ("closed_nested", json!({"a": "x", "inner": {"foo": 1}})),
            ] {
                let schema = &catalog.tools()[0].input_schema;
                assert_eq!(catalog.tools()[0].name, "closed_objects");
                assert!(!validator(schema).unwrap().is_valid(&value), "{label}");
                writeln!(
                    ts_check,
                    "// @ts-expect-error a closed object takes no undeclared key\n\
                     export const {label}: ToolArgsMap[\"closed_objects\"] = {};",
                    ts_value(&value)
                )
                .unwrap();
                writeln!(
                    py_check,
                    "{label}: ClosedObjectsArgs = {}  # type: ignore[typeddict-unknown-key]",
                    py_value(&value)
                )
                .unwrap();
            }
        }
        for (file, text, files) in [
            (format!("check_{name}.ts"), ts_check, &mut ts_files),
            (format!("check_{name}.py"), py_check, &mut py_files),
        ] {
            std::fs::write(dir.path().join(&file), text).unwrap();
            files.push(file);
        }
        ts_files.push(format!("sdk_{name}.ts"));
        py_files.push(format!("sdk_{name}.py"));
    }
    assert!(checked >= 200, "only {checked} values were checked");
    run_tsc(dir.path(), &ts_files);
    run_mypy(dir.path(), &py_files);
}

/// A fixture by name, or the example catalog for `example`.
fn fixture_or_example(name: &str) -> tools_schema::Catalog {
    match name {
        "example" => example(),
        name => fixture(name),
    }
}
