//! Shared helpers of the codegen tests: fixtures, the type checkers, a value sampler and value
//! printers.

#![allow(dead_code)]

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use tools_schema::{Catalog, CatalogEntry};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the repository")
        .to_owned()
}

/// A fixture catalog from `tests/fixtures/codegen/<name>.json`.
pub fn fixture(name: &str) -> Catalog {
    let path = repo_root().join(format!("tests/fixtures/codegen/{name}.json"));
    Catalog::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// The example catalog the README's main-job command renders.
pub fn example() -> Catalog {
    Catalog::load(&repo_root().join("examples/catalog.json")).unwrap_or_else(|e| panic!("{e}"))
}

/// Every catalog the type checks cover, by a short name.
pub fn all_catalogs() -> Vec<(&'static str, Catalog)> {
    vec![
        ("constructs", fixture("constructs")),
        ("adversarial", fixture("adversarial")),
        ("open_and_untyped", fixture("open_and_untyped")),
        ("example", example()),
        ("empty", Catalog::new(Vec::new()).unwrap()),
        ("hostile", hostile()),
    ]
}

/// Names outside MCP's rule (empty, spaces, slashes, colons, quotes, non-ASCII, control
/// characters, names that mangle alike), a null input schema, and a schema nested 130 levels (past the
/// renderers' `MAX_DEPTH` and past the 128 levels `serde_json` reads by default).
pub fn hostile() -> Catalog {
    let mut deep = json!({"type": "string"});
    for _ in 0..130 {
        deep = json!({"type": "object", "properties": {"a": deep}, "required": ["a"], "additionalProperties": false});
    }
    let simple = json!({"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"], "additionalProperties": false});
    let names = [
        "",
        " ",
        "a b",
        "a  b",
        "a/b",
        "ns:tool",
        "x.y:z",
        "café",
        "cafe\u{301}",
        "日本語",
        "emoji 😀",
        "quote\"d",
        "back\\slash",
        "nul\u{0}",
        "line\nbreak",
        "\u{2028}",
        "*/",
        "${x}",
        "then ",
        "a-b ",
        "A B",
        "a_b",
        "1 2",
    ];
    let mut tools: Vec<CatalogEntry> = names
        .iter()
        .map(|name| CatalogEntry {
            name: (*name).to_owned(),
            description: format!("The tool named {name:?}."),
            input_schema: simple.clone(),
            output_schema: Some(json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"], "additionalProperties": false})), annotations: None,
        })
        .collect();
    tools.push(CatalogEntry {
        name: "no args".into(),
        description: String::new(),
        input_schema: Value::Null,
        output_schema: None,
        annotations: None,
    });
    tools.push(CatalogEntry {
        name: "deep one".into(),
        description: "Nested 130 levels.".into(),
        input_schema: deep.clone(),
        output_schema: Some(deep),
        annotations: None,
    });
    Catalog::new(tools).unwrap()
}

/// Runs `tests/fixtures/codegen/sample_values.py` (hypothesis-jsonschema) in `dir` on
/// `schemas`: per schema, up to `per_schema` values it accepts, or why none could be generated.
/// Fails the test when hypothesis-jsonschema is missing (`scripts/test` installs it into
/// `.tools/venv`): the sampled type checks never pass silently.
pub fn hypothesis_samples(
    dir: &Path,
    schemas: &[&Value],
    per_schema: usize,
) -> Vec<Result<Vec<Value>, String>> {
    let input = dir.join("schemas.json");
    let output = dir.join("samples.json");
    std::fs::write(&input, serde_json::to_string(schemas).unwrap()).unwrap();
    let script = repo_root().join("tests/fixtures/codegen/sample_values.py");
    let python = python();
    let run = Command::new(&python)
        .current_dir(dir)
        .arg(&script)
        .arg(&input)
        .arg(&output)
        .arg(per_schema.to_string())
        .output()
        .unwrap_or_else(|e| panic!("{} cannot be started: {e}", python.display()));
    assert!(
        run.status.success(),
        "sampling values with hypothesis-jsonschema failed ({}; run ./scripts/test, which          installs it into .tools/venv, or set TOOLS_PYTHON):\n{}{}",
        python.display(),
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    let text = std::fs::read_to_string(&output).unwrap();
    let answers: Vec<Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(answers.len(), schemas.len(), "one answer per schema");
    answers
        .into_iter()
        .map(|answer| match answer {
            Value::Object(mut map) => match (map.remove("values"), map.remove("error")) {
                (Some(Value::Array(values)), _) => Ok(values),
                (_, Some(Value::String(error))) => Err(error),
                other => panic!("unexpected answer {other:?}"),
            },
            other => panic!("unexpected answer {other}"),
        })
        .collect()
}

/// Finds a checker: the env var, then `.tools` in the repository, then `PATH`. A missing tool
/// fails the test: type checks never pass silently.
fn find_tool(var: &str, local: &str, name: &str) -> PathBuf {
    if let Some(path) = std::env::var_os(var) {
        return PathBuf::from(path);
    }
    let local = repo_root().join(local);
    if local.exists() {
        return local;
    }
    if let Some(paths) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&paths) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!(
        "`{name}` was not found (set {var}, or run ./scripts/test, which installs it into .tools): \
         the generated SDKs cannot be type-checked"
    );
}

pub fn tsc() -> PathBuf {
    find_tool("TOOLS_TSC", ".tools/node_modules/.bin/tsc", "tsc")
}

pub fn mypy() -> PathBuf {
    find_tool("TOOLS_MYPY", ".tools/venv/bin/mypy", "mypy")
}

pub fn python() -> PathBuf {
    find_tool("TOOLS_PYTHON", ".tools/venv/bin/python", "python3")
}

/// Runs one `tsc --strict --noEmit` over `files` (relative to `dir`); panics with its output on
/// any diagnostic.
pub fn run_tsc(dir: &Path, files: &[String]) {
    let output = Command::new(tsc())
        .current_dir(dir)
        .args([
            "--strict", "--noEmit", "--pretty", "false", "--target", "es2022",
        ])
        .args(["--module", "commonjs"])
        .args(files)
        .output()
        .expect("tsc runs");
    assert!(
        output.status.success(),
        "tsc --strict failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Runs one `mypy --strict` over `files` (relative to `dir`); panics with its output on any
/// error.
pub fn run_mypy(dir: &Path, files: &[String]) {
    let output = Command::new(mypy())
        .current_dir(dir)
        .args(["--strict", "--no-error-summary", "--cache-dir"])
        .arg(dir.join(".mypy_cache"))
        .args(files)
        .output()
        .expect("mypy runs");
    assert!(
        output.status.success(),
        "mypy --strict failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A TypeScript expression for a JSON value. `__proto__` keys are written as computed keys so
/// they create an own property instead of setting the prototype.
pub fn ts_value(value: &Value) -> String {
    match value {
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(ts_value).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => {
            let fields: Vec<String> = map
                .iter()
                .map(|(k, v)| {
                    let key = ts_str(k);
                    if k == "__proto__" {
                        format!("[{key}]: {}", ts_value(v))
                    } else {
                        format!("{key}: {}", ts_value(v))
                    }
                })
                .collect();
            format!("{{ {} }}", fields.join(", "))
        }
        Value::String(s) => ts_str(s),
        other => other.to_string(),
    }
}

fn ts_str(s: &str) -> String {
    Value::String(s.to_owned())
        .to_string()
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// A Python expression for a JSON value.
pub fn py_value(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => py_str(s),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(py_value).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", py_str(k), py_value(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn py_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A validator for `schema` under the first draft that accepts it (2020-12, then 7, then 4);
/// `None` when no draft compiles it (then nothing can be sampled from it).
pub fn validator(schema: &Value) -> Option<jsonschema::Validator> {
    jsonschema::draft202012::new(schema)
        .or_else(|_| jsonschema::draft7::new(schema))
        .or_else(|_| jsonschema::draft4::new(schema))
        .ok()
}

/// Candidate values for `schema`, most of them valid; `samples` filters them with a real
/// validator. With `extras`, objects that admit undeclared keys get one.
pub fn candidates(schema: &Value, extras: bool) -> Vec<Value> {
    let Some(map) = schema.as_object() else {
        return vec![json!(null), json!("s"), json!({"k": [1]})];
    };
    if let Some(c) = map.get("const") {
        return vec![c.clone()];
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        let mut out: Vec<Value> = values.iter().take(3).cloned().collect();
        out.extend(values.last().cloned());
        return out;
    }
    let types: Vec<String> = match map.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect(),
        _ => {
            if let Some(Value::Array(branches)) = map.get("oneOf") {
                return branches
                    .iter()
                    .flat_map(|b| candidates(b, extras))
                    .collect();
            }
            if map.contains_key("properties") || map.contains_key("required") {
                vec!["object".into()]
            } else if map.contains_key("items") {
                vec!["array".into()]
            } else {
                return vec![
                    json!(null),
                    json!(2),
                    json!("s"),
                    json!([true]),
                    json!({"k": "v"}),
                ];
            }
        }
    };
    let mut out = Vec::new();
    for t in types {
        match t.as_str() {
            "null" => out.push(json!(null)),
            "boolean" => out.extend([json!(true), json!(false)]),
            "string" => out.extend([json!("abc"), json!("")]),
            "number" => out.extend([json!(0.5), json!(0), json!(-3)]),
            "integer" => out.extend([json!(0), json!(7), json!(-1)]),
            "array" => {
                let items = match map.get("items") {
                    Some(items @ Value::Object(_)) => candidates(items, extras),
                    _ => vec![json!("x"), json!(1)],
                };
                out.push(json!([]));
                if let Some(first) = items.first() {
                    out.push(json!([first.clone()]));
                }
                if items.len() > 1 {
                    out.push(Value::Array(items.iter().take(3).cloned().collect()));
                }
            }
            "object" => out.extend(object_candidates(map, extras)),
            _ => {}
        }
    }
    out
}

fn object_candidates(map: &serde_json::Map<String, Value>, extras: bool) -> Vec<Value> {
    let required: Vec<&str> = match map.get("required") {
        Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let props: Vec<(String, Vec<Value>)> = match map.get("properties") {
        Some(Value::Object(p)) => p
            .iter()
            .map(|(k, s)| (k.clone(), candidates(s, extras)))
            .collect(),
        _ => Vec::new(),
    };
    let pick = |keys_all: bool, alt: usize| {
        let mut object = serde_json::Map::new();
        for (key, values) in &props {
            if (keys_all || required.contains(&key.as_str())) && !values.is_empty() {
                object.insert(key.clone(), values[alt.min(values.len() - 1)].clone());
            }
        }
        for key in &required {
            if !object.contains_key(*key) {
                object.insert((*key).to_owned(), json!(1));
            }
        }
        object
    };
    let mut out = vec![
        Value::Object(pick(false, 0)),
        Value::Object(pick(true, 0)),
        Value::Object(pick(true, 1)),
    ];
    let additional = map.get("additionalProperties");
    if extras || (props.is_empty() && required.is_empty()) {
        let extra_value = match additional {
            Some(Value::Bool(false)) => None,
            Some(schema @ Value::Object(_)) => candidates(schema, extras).into_iter().next(),
            _ => Some(json!({"nested": [1, "two", null]})),
        };
        if let Some(value) = extra_value {
            let mut object = pick(true, 0);
            object.insert("extra-key".into(), value);
            out.push(Value::Object(object));
        }
    }
    out
}

/// Up to `limit` distinct values that `schema` accepts (checked by `jsonschema`).
pub fn samples(schema: &Value, extras: bool, limit: usize) -> Vec<Value> {
    let Some(validator) = validator(schema) else {
        return Vec::new();
    };
    let mut out: Vec<Value> = Vec::new();
    for value in candidates(schema, extras) {
        if out.len() >= limit {
            break;
        }
        if validator.is_valid(&value) && !out.contains(&value) {
            out.push(value);
        }
    }
    out
}

/// A Python string literal as the SDK writes one (double quotes; control characters, line
/// separators and U+FEFF escaped).
fn py_literal(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            '\u{2028}' | '\u{2029}' | '\u{85}' | '\u{feff}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The Python argument and output types of `tool` as printed in the SDK text.
pub fn python_signature(sdk: &str, tool: &str) -> (String, String) {
    let method = format!("    async def {tool}(self, args: ");
    if let Some(start) = sdk.find(&method) {
        let line = sdk[start + method.len()..].lines().next().unwrap();
        let (args, rest) = line.split_once(", /) -> ").unwrap();
        return (args.to_owned(), rest.strip_suffix(':').unwrap().to_owned());
    }
    let marker = format!(
        "self, name: Literal[{}], /\n    ) -> Callable[[",
        py_literal(tool)
    );
    let start = sdk
        .find(&marker)
        .unwrap_or_else(|| panic!("no binding for {tool}"))
        + marker.len();
    let line = sdk[start..].lines().next().unwrap();
    let cut = line.rfind("], Awaitable[").unwrap();
    let args = &line[..cut];
    let output = line[cut + "], Awaitable[".len()..]
        .strip_suffix("]]:")
        .unwrap();
    (args.to_owned(), output.to_owned())
}
