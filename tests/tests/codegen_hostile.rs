//! Catalogs built to make the SDK generator's output or work grow faster than the catalog (issue
//! #24): many required keys that `properties` does not declare over a large or nested
//! `additionalProperties` type, long `oneOf`s and `enum`s with repeats, many required names,
//! long tool names and keys, keys whose Python names come out alike. Each shape alone renders
//! (TypeScript, Python, Markdown, discovery declarations) within a bound on the output's size
//! in proportion to the catalog's, and the SDKs, with a value each schema accepts (confirmed
//! by the `jsonschema` validator) and one it rejects (in Python, unless what is rejected lies
//! inside an open object: `Shape::python_rejects`), pass `tsc --strict` and `mypy --strict`.
//!
//! The work the renderers do (comparisons, names tried) is counted and bounded by the unit
//! tests of `tools-codegen` (`distinct`, `lower`, `ts`, `py`), which can see the counters.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::codegen_support::*;
use serde_json::{Map, Value, json};
use std::fmt::Write as _;
use tools_codegen::{
    Language, render_catalog_markdown, render_declarations, render_python, render_typescript,
};
use tools_schema::{Catalog, CatalogEntry};

/// One hostile shape: a tool, a value its input schema accepts, and one it rejects.
struct Shape {
    name: String,
    input: Value,
    valid: Value,
    invalid: Value,
    /// The Python types reject `invalid` too: false where what the schema rejects is inside an
    /// open object below the root, which Python types as `Name | dict[str, Any]` (see
    /// `schema_rules`; at the root the check is held to the `TypedDict` itself).
    python_rejects: bool,
}

/// An object with one string property `key`, required, closed.
fn one_key(key: &str) -> Value {
    json!({"type": "object", "properties": {key: {"type": "string"}}, "required": [key],
           "additionalProperties": false})
}

/// `levels` objects, each requiring `a` and `b` without declaring them, over the level below.
fn nested(levels: usize) -> (Value, Value) {
    let mut schema = json!({"type": "string"});
    let mut value = json!("leaf");
    for _ in 0..levels {
        schema = json!({"type": "object", "additionalProperties": schema, "required": ["a", "b"]});
        value = json!({"a": value.clone(), "b": value});
    }
    (schema, value)
}

fn shapes() -> Vec<Shape> {
    let mut shapes = Vec::new();

    // 200 undeclared required keys over an object of 200 properties: a copy per key made the
    // text grow with the product.
    let properties: Map<String, Value> = (0..200)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    let keys: Vec<String> = (0..200).map(|i| format!("k{i}")).collect();
    let mut valid = Map::new();
    valid.insert("d".into(), json!("x"));
    for key in &keys {
        valid.insert(key.clone(), json!({"p7": "s"}));
    }
    let mut invalid = valid.clone();
    invalid.remove("k199");
    let mut required = vec!["d".to_owned()];
    required.extend(keys);
    shapes.push(Shape {
        name: "undeclared_object".into(),
        input: json!({"type": "object", "properties": {"d": {"type": "string"}},
                      "required": required,
                      "additionalProperties": {"type": "object", "properties": properties}}),
        valid: Value::Object(valid),
        invalid: Value::Object(invalid),
        python_rejects: true,
    });

    // 50 undeclared keys over a union of 20 closed objects (TypeScript `Record`, a Python
    // alias), and over an enum of 100 values.
    let alternatives: Vec<Value> = (0..20).map(|i| one_key(&format!("x{i}"))).collect();
    let keys: Vec<String> = (0..50).map(|i| format!("a{i}")).collect();
    let valid: Map<String, Value> = keys
        .iter()
        .map(|k| (k.clone(), json!({"x13": "s"})))
        .collect();
    let mut invalid = valid.clone();
    invalid.insert("a3".into(), json!({"x13": 1}));
    shapes.push(Shape {
        name: "undeclared_union".into(),
        input: json!({"type": "object", "required": keys,
                      "additionalProperties": {"oneOf": alternatives}}),
        valid: Value::Object(valid),
        invalid: Value::Object(invalid),
        python_rejects: true,
    });
    let values: Vec<String> = (0..100).map(|i| format!("value{i}")).collect();
    let keys: Vec<String> = (0..50).map(|i| format!("e{i}")).collect();
    let valid: Map<String, Value> = keys.iter().map(|k| (k.clone(), json!("value99"))).collect();
    let mut invalid = valid.clone();
    invalid.insert("e0".into(), json!("value100"));
    shapes.push(Shape {
        name: "undeclared_enum".into(),
        input: json!({"type": "object", "required": keys,
                      "additionalProperties": {"enum": values}}),
        valid: Value::Object(valid),
        invalid: Value::Object(invalid),
        python_rejects: true,
    });

    // The same nested 20 levels deep (a copy per key doubled the text at each level; no value
    // is given, as one needs 2^20 leaves), and 3 levels deep with a value.
    let (deep, _) = nested(20);
    shapes.push(Shape {
        name: "undeclared_nested".into(),
        input: json!({"type": "object", "properties": {"n": deep}}),
        valid: json!({}),
        invalid: json!({"n": {"a": 1}}),
        python_rejects: false,
    });
    let (schema, value) = nested(3);
    shapes.push(Shape {
        name: "undeclared_nested_small".into(),
        input: json!({"type": "object", "properties": {"n": schema}, "required": ["n"]}),
        valid: json!({"n": value}),
        invalid: json!({"n": {"a": {}}}),
        python_rejects: false,
    });

    // 2,000 `oneOf` alternatives (the first 1,000 given twice: the value taken matches one)
    // and 2,000 `enum` members, each given twice.
    let consts: Vec<Value> = (0..3000)
        .map(|i| json!({"const": format!("v{}", i % 2000)}))
        .collect();
    shapes.push(Shape {
        name: "one_of_many".into(),
        input: json!({"type": "object", "properties": {"x": {"oneOf": consts}}, "required": ["x"]}),
        valid: json!({"x": "v1999"}),
        invalid: json!({"x": "v2000"}),
        python_rejects: true,
    });
    let members: Vec<Value> = (0..4000).map(|i| json!(i % 2000)).collect();
    shapes.push(Shape {
        name: "enum_many".into(),
        input: json!({"type": "object", "properties": {"x": {"enum": members}}, "required": ["x"]}),
        valid: json!({"x": 1999}),
        invalid: json!({"x": 2000}),
        python_rejects: true,
    });
    // 500 object alternatives (a Python `TypedDict` each).
    let alternatives: Vec<Value> = (0..500).map(|i| one_key(&format!("y{i}"))).collect();
    shapes.push(Shape {
        name: "union_of_objects".into(),
        input: json!({"type": "object", "properties": {"x": {"oneOf": alternatives}},
                      "required": ["x"]}),
        valid: json!({"x": {"y499": "s"}}),
        invalid: json!({"x": {"y500": "s"}}),
        python_rejects: true,
    });

    // 2,000 properties, every one required.
    let properties: Map<String, Value> = (0..2000)
        .map(|i| (format!("r{i}"), json!({"type": "integer"})))
        .collect();
    let names: Vec<String> = properties.keys().cloned().collect();
    let valid: Map<String, Value> = names.iter().map(|n| (n.clone(), json!(1))).collect();
    let mut invalid = valid.clone();
    invalid.remove("r1999");
    shapes.push(Shape {
        name: "required_many".into(),
        input: json!({"type": "object", "properties": properties, "required": names,
                      "additionalProperties": false}),
        valid: Value::Object(valid),
        invalid: Value::Object(invalid),
        python_rejects: true,
    });

    // A 20,000-character tool name and key over 100 objects: every Python name under them
    // repeated both.
    let key = "k".repeat(20_000);
    let objects: Map<String, Value> = (0..100).map(|i| (format!("o{i}"), one_key("x"))).collect();
    shapes.push(Shape {
        name: "t".repeat(20_000),
        input: json!({"type": "object",
                      "properties": {&key: {"type": "object", "properties": objects,
                                            "additionalProperties": false}},
                      "required": [&key]}),
        valid: json!({&key: {"o99": {"x": "s"}}}),
        invalid: json!({&key: {"o99": {"x": 1}}}),
        python_rejects: true,
    });

    // 500 keys that all read `A` in a Python name (`a`, `a!`, `a#`, ...).
    let marks = [
        "!", "#", "$", "%", "&", "(", ")", "*", "+", ",", "-", ".", "/", ":", ";",
    ];
    let alike: Map<String, Value> = (0..500)
        .map(|i| {
            let key = format!("a{}{}", marks[i % marks.len()], "!".repeat(i / marks.len()));
            (key, one_key("x"))
        })
        .collect();
    shapes.push(Shape {
        name: "alike".into(),
        input: json!({"type": "object", "properties": alike}),
        valid: json!({"a/": {"x": "s"}, "a!!": {"x": "t"}}),
        invalid: json!({"a/": {"x": 2}}),
        python_rejects: true,
    });
    shapes
}

/// The size of the fixed text every render has (the SDK's own declarations), measured on an
/// empty catalog.
fn fixed_bytes() -> usize {
    let empty = Catalog::new(Vec::new()).unwrap();
    render_typescript(&empty)
        .len()
        .max(render_python(&empty).len())
        .max(render_catalog_markdown(&empty).len())
}

#[test]
fn hostile_shapes_render_within_a_size_bound_and_type_check() {
    let dir = tempfile::tempdir().unwrap();
    let mut ts_files = Vec::new();
    let mut py_files = Vec::new();
    let fixed = fixed_bytes();
    for (t, shape) in shapes().into_iter().enumerate() {
        let validator = validator(&shape.input).unwrap();
        assert!(validator.is_valid(&shape.valid), "{t}: the valid value");
        assert!(
            !validator.is_valid(&shape.invalid),
            "{t}: the invalid value"
        );
        let tool = CatalogEntry {
            name: shape.name.clone(),
            description: "A hostile shape.".into(),
            input_schema: shape.input.clone(),
            output_schema: None,
            annotations: None,
        };
        let catalog = Catalog::new(vec![tool]).unwrap();
        let input = serde_json::to_string(&catalog.tools()[0]).unwrap().len();

        // The bound: each output is at most a few times the catalog, beside the fixed text.
        // (A tool's name is printed five times in TypeScript; Markdown prints the schema
        // itself, pretty, and the types in a table. The shapes measured at most 1.8 times
        // their catalog in the SDKs and 4.3 times in Markdown.)
        let ts = render_typescript(&catalog);
        let py = render_python(&catalog);
        let md = render_catalog_markdown(&catalog);
        let ts_declarations = render_declarations(&catalog, &[&shape.name], Language::TypeScript);
        let py_declarations = render_declarations(&catalog, &[&shape.name], Language::Python);
        for (what, text, factor) in [
            ("TypeScript", &ts, 3),
            ("Python", &py, 3),
            ("Markdown", &md, 6),
            ("TypeScript declarations", &ts_declarations, 3),
            ("Python declarations", &py_declarations, 3),
        ] {
            assert!(
                text.len() <= factor * input + fixed,
                "{t}: {what}: {} bytes from {input} bytes of catalog",
                text.len()
            );
        }

        std::fs::write(dir.path().join(format!("sdk_{t}.ts")), &ts).unwrap();
        std::fs::write(dir.path().join(format!("sdk_{t}.py")), &py).unwrap();
        std::fs::write(
            dir.path().join(format!("declarations_{t}.py")),
            &py_declarations,
        )
        .unwrap();
        let key = Value::String(shape.name.clone()).to_string();
        let mut ts_check = format!(
            "import type {{ ToolArgsMap }} from \"./sdk_{t}\";\n\n\
             export const valid: ToolArgsMap[{key}] = {};\n",
            ts_value(&shape.valid)
        );
        let (py_args, _) = python_signature(&py, &shape.name);
        let mut py_check = format!(
            "from typing import Any\n\nfrom sdk_{t} import *  # noqa: F403\n\nvalid: {py_args} = {}\n",
            py_value(&shape.valid)
        );
        writeln!(
            ts_check,
            "// @ts-expect-error the schema rejects it\n\
             export const invalid: ToolArgsMap[{key}] = {};",
            ts_value(&shape.invalid)
        )
        .unwrap();
        // An open object's type is `Name | dict[str, Any]`, whose `dict` alternative takes any
        // dict (see `schema_rules`): the rejected value is held to the `TypedDict` itself.
        let py_typed_dict = py_args
            .strip_suffix(" | dict[str, Any]")
            .unwrap_or(&py_args);
        if shape.python_rejects {
            writeln!(
                py_check,
                "invalid: {py_typed_dict} = {}  # type: ignore[typeddict-item]",
                py_value(&shape.invalid)
            )
            .unwrap();
        }
        std::fs::write(dir.path().join(format!("check_{t}.ts")), ts_check).unwrap();
        std::fs::write(dir.path().join(format!("check_{t}.py")), py_check).unwrap();
        ts_files.extend([format!("sdk_{t}.ts"), format!("check_{t}.ts")]);
        py_files.extend([
            format!("sdk_{t}.py"),
            format!("check_{t}.py"),
            format!("declarations_{t}.py"),
        ]);
    }
    run_tsc(dir.path(), &ts_files);
    run_mypy(dir.path(), &py_files);
}
