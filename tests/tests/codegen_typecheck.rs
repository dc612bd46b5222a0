//! The generated SDKs compile: every TypeScript file passes `tsc --strict --noEmit` and every
//! Python file passes `mypy --strict`, for the construct fixture, the adversarial fixture, the
//! example catalog and an empty catalog. Values each schema accepts (sampled, then confirmed by
//! the `jsonschema` validator) are assigned to the generated types, and a few values the schema
//! rejects must be rejected by the types too (`@ts-expect-error`, and `# type: ignore[...]`
//! under `--warn-unused-ignores`, which `--strict` includes).
//!
//! All files go through one `tsc` run and one `mypy` run to keep the test fast.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::codegen_support;

use codegen_support::*;
use serde_json::{Value, json};
use std::fmt::Write as _;
use tools_codegen::{json_schema_to_py, json_schema_to_ts, render_python, render_typescript};

const TS_PROGRAM: &str = r#"import { tools, callTool, ToolCallError, type ToolName } from "./sdk_example";

// The calls the usage text describes: awaiting, bracket access, Promise.all, callTool, and
// catching ToolCallError.
export async function program(): Promise<string[]> {
  const [file, hits] = await Promise.all([
    tools.read_file({ path: "README.md", limit: 20 }),
    tools.search_files({ pattern: "TODO", glob: null }),
  ]);
  const page = await tools["web-fetch"]({ url: "https://example.com", headers: { accept: "text/html" } });
  const title = page.status === "ok" ? (page.title ?? page.markdown) : page.reason;
  try {
    await callTool("write_file", { path: "notes.md", content: title });
  } catch (error) {
    if (error instanceof ToolCallError) {
      const failed: ToolName = error.toolName;
      return [failed, error.message];
    }
    throw error;
  }
  return [file.lines[0]?.text ?? "", String(hits.matches.length), String(file.totalLines)];
}

// @ts-expect-error a required key is missing
export const missing: Parameters<typeof tools.read_file>[0] = {};
// @ts-expect-error a key has the wrong type
export const wrongType: Parameters<typeof tools.read_file>[0] = { path: 1 };
// @ts-expect-error a closed object takes no undeclared key
export const undeclared: Parameters<typeof tools.read_file>[0] = { path: "a", nope: 1 };
// @ts-expect-error not one of the enum values
export const notInEnum: Parameters<typeof tools.search_files>[0] = { pattern: "x", mode: "fuzzy" };
// @ts-expect-error descriptions cannot inject declarations: `injected` does not exist
export { injected } from "./sdk_adversarial";
// @ts-expect-error not a tool
export const notATool: ToolName = "delete_everything";
// @ts-expect-error the output type is exact
export const wrongOutput: Awaited<ReturnType<typeof tools.write_file>> = { bytesWritten: "1", created: true };
"#;

const PY_PROGRAM: &str = r#"import asyncio

from sdk_example import ReadFileArgs, SearchFilesArgs, ToolCallError, WriteFileOutput, tools


async def program() -> list[str]:
    """The calls the usage text describes."""
    file, hits = await asyncio.gather(
        tools.read_file({"path": "README.md", "limit": 20}),
        tools.search_files({"pattern": "TODO", "glob": None}),
    )
    page = await tools["web-fetch"]({"url": "https://example.com", "headers": {"accept": "text/html"}})
    title = page["markdown"] if page["status"] == "ok" else page["reason"]
    try:
        await tools.write_file({"path": "notes.md", "content": title})
    except ToolCallError as error:
        return [error.tool_name, error.message]
    return [file["lines"][0]["text"], str(len(hits["matches"])), str(file["totalLines"])]


from sdk_adversarial import injected  # type: ignore[attr-defined]  # descriptions cannot inject code

missing: ReadFileArgs = {}  # type: ignore[typeddict-item]
wrong_type: ReadFileArgs = {"path": 1}  # type: ignore[typeddict-item]
undeclared: ReadFileArgs = {"path": "a", "nope": 1}  # type: ignore[typeddict-unknown-key]
not_in_enum: SearchFilesArgs = {"pattern": "x", "mode": "fuzzy"}  # type: ignore[typeddict-item]
wrong_output: WriteFileOutput = {"bytesWritten": "1", "created": True}  # type: ignore[typeddict-item]
"#;

/// A schema nested `levels` deep, alternating objects, arrays and nullable unions.
fn deep_schema(levels: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for i in 0..levels {
        schema = match i % 3 {
            0 => {
                json!({"type": "object", "properties": {"next": schema}, "required": ["next"], "additionalProperties": false})
            }
            1 => json!({"type": "array", "items": schema}),
            _ => {
                json!({"type": ["object", "null"], "properties": {"n": schema}, "additionalProperties": false})
            }
        };
    }
    schema
}

/// A value `deep_schema(levels)` accepts.
fn deep_value(levels: usize) -> Value {
    let mut value = json!("leaf");
    for i in 0..levels {
        value = match i % 3 {
            0 => json!({"next": value}),
            1 => json!([value]),
            _ => json!({"n": value}),
        };
    }
    value
}

#[test]
fn generated_sdks_and_sampled_values_type_check() {
    let dir = tempfile::tempdir().unwrap();
    let mut ts_files = Vec::new();
    let mut py_files = Vec::new();
    let mut sampled = 0;
    let mut tools_sampled = 0;
    let mut tools_total = 0;
    for (name, catalog) in all_catalogs() {
        let ts = render_typescript(&catalog);
        let py = render_python(&catalog);
        std::fs::write(dir.path().join(format!("sdk_{name}.ts")), &ts).unwrap();
        std::fs::write(dir.path().join(format!("sdk_{name}.py")), &py).unwrap();
        ts_files.push(format!("sdk_{name}.ts"));
        py_files.push(format!("sdk_{name}.py"));

        let mut ts_check =
            format!("import type {{ ToolArgsMap, ToolOutputMap }} from \"./sdk_{name}\";\n\n");
        let mut py_check = format!(
            "from typing import Any, Literal\n\nfrom sdk_{name} import *  # noqa: F403\n\n"
        );
        for (t, tool) in catalog.tools().iter().enumerate() {
            tools_total += 1;
            let (py_args, py_output) = python_signature(&py, &tool.name);
            let key = Value::String(tool.name.clone()).to_string();
            let mut any = false;
            let schemas = [
                ("args", "ToolArgsMap", Some(&tool.input_schema), &py_args),
                (
                    "output",
                    "ToolOutputMap",
                    tool.output_schema.as_ref(),
                    &py_output,
                ),
            ];
            for (kind, map, schema, py_type) in schemas {
                let Some(schema) = schema else { continue };
                for (i, value) in samples(schema, true, 4).iter().enumerate() {
                    writeln!(
                        ts_check,
                        "export const {kind}_{t}_{i}: {map}[{key}] = {};",
                        ts_value(value)
                    )
                    .unwrap();
                    sampled += 1;
                    any = true;
                }
                // Open objects get an undeclared key in both languages (Python's are used as
                // `Name | dict[str, Any]`, see `schema_rules`).
                for (i, value) in samples(schema, true, 4).iter().enumerate() {
                    writeln!(py_check, "{kind}_{t}_{i}: {py_type} = {}", py_value(value)).unwrap();
                    sampled += 1;
                    any = true;
                }
            }
            tools_sampled += usize::from(any);
        }
        std::fs::write(dir.path().join(format!("check_{name}.ts")), ts_check).unwrap();
        std::fs::write(dir.path().join(format!("check_{name}.py")), py_check).unwrap();
        ts_files.push(format!("check_{name}.ts"));
        py_files.push(format!("check_{name}.py"));
    }

    // The standalone renderers, on schemas deeper than the catalog admits: 200 levels (read to
    // `MAX_DEPTH`, then unknown), with a value 200 levels deep.
    let schema = deep_schema(200);
    let value = deep_value(200);
    assert!(validator(&schema).unwrap().is_valid(&value));
    std::fs::write(
        dir.path().join("deep.ts"),
        format!(
            "import type {{ JsonValue }} from \"./sdk_empty\";\nexport type Unused = JsonValue;\n\
             export type Deep = {};\nexport const deep: Deep = {};\n",
            json_schema_to_ts(&schema),
            ts_value(&value)
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("deep.py"),
        format!(
            "from typing import Any, Literal, TypeAlias\n\nDeep: TypeAlias = {}\ndeep: Deep = {}\nunused: Literal[1] | Any = 1\n",
            json_schema_to_py(&schema),
            py_value(&value)
        ),
    )
    .unwrap();
    ts_files.push("deep.ts".into());
    py_files.push("deep.py".into());

    std::fs::write(dir.path().join("program.ts"), TS_PROGRAM).unwrap();
    std::fs::write(dir.path().join("program.py"), PY_PROGRAM).unwrap();
    ts_files.push("program.ts".into());
    py_files.push("program.py".into());

    // The sampler must have exercised the fixtures, not skipped them.
    assert!(sampled > 300, "only {sampled} sampled values");
    assert!(
        tools_sampled * 10 >= tools_total * 9,
        "values were sampled for only {tools_sampled} of {tools_total} tools"
    );

    run_tsc(dir.path(), &ts_files);
    run_mypy(dir.path(), &py_files);
}
