//! The tool catalog: reading, writing, names, and located errors.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::json;
use tools_schema::{Catalog, CatalogError, NameError, ToolRef, ToolSchema, validate_tool_name};

fn tool(name: &str) -> ToolSchema {
    ToolSchema {
        name: name.into(),
        description: format!("{name} tool"),
        input_schema: json!({"type": "object"}),
        output_schema: None,
    }
}

#[test]
fn reads_both_shapes_and_writes_sorted() {
    let wrapped = r#"{"tools": [
        {"name": "write_file", "description": "Write.", "inputSchema": {"type": "object"}, "outputSchema": {"type": "string"}, "title": "ignored", "annotations": {"readOnlyHint": false}},
        {"name": "read_file", "description": "Read.", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}
    ], "nextCursor": "x"}"#;
    let bare = r#"[
        {"name": "read_file", "description": "Read.", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}},
        {"name": "write_file", "description": "Write.", "inputSchema": {"type": "object"}, "outputSchema": {"type": "string"}}
    ]"#;
    let a = Catalog::from_json_str(wrapped, None).unwrap();
    let b = Catalog::from_json_str(bare, None).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.len(), 2);
    assert!(!a.is_empty());
    assert_eq!(a.tools()[0].name, "read_file");
    assert_eq!(
        a.get("write_file").unwrap().output_schema,
        Some(json!({"type": "string"}))
    );
    assert!(a.get("nope").is_none());
    let text = a.to_json_string();
    assert!(text.ends_with("}\n"));
    assert_eq!(
        text,
        r#"{
  "tools": [
    {
      "name": "read_file",
      "description": "Read.",
      "inputSchema": {
        "type": "object",
        "properties": {
          "path": {
            "type": "string"
          }
        }
      }
    },
    {
      "name": "write_file",
      "description": "Write.",
      "inputSchema": {
        "type": "object"
      },
      "outputSchema": {
        "type": "string"
      }
    }
  ]
}
"#
    );
    // What it writes, it reads back unchanged.
    assert_eq!(Catalog::from_json_str(&text, None).unwrap(), a);
    assert_eq!(Catalog::from_json_value(a.to_json(), Some("v")).unwrap(), a);
    assert_eq!(a.clone().into_tools().len(), 2);
}

#[test]
fn serde_form_of_a_tool() {
    let t = ToolSchema {
        output_schema: Some(json!(true)),
        ..tool("a")
    };
    let v = serde_json::to_value(&t).unwrap();
    assert_eq!(
        v,
        json!({"name": "a", "description": "a tool", "inputSchema": {"type": "object"}, "outputSchema": true})
    );
    let back: ToolSchema = serde_json::from_value(v).unwrap();
    assert_eq!(back, t);
    let v = serde_json::to_value(tool("b")).unwrap();
    assert!(v.get("outputSchema").is_none());
    let minimal: ToolSchema =
        serde_json::from_value(json!({"name": "m", "inputSchema": {}})).unwrap();
    assert_eq!(minimal.description, "");
}

#[test]
fn raw_schemas_are_kept_even_outside_the_subset() {
    let catalog = Catalog::from_json_str(
        r##"[{"name": "mcp.tool", "inputSchema": {"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"anyOf": []}}}}]"##,
        None,
    )
    .unwrap();
    assert!(catalog.tools()[0].input_schema.get("$defs").is_some());
    assert_eq!(catalog.tools()[0].description, "");
}

#[test]
fn parse_errors_name_file_line_and_column() {
    let error = Catalog::from_json_str(
        "{\n  \"tools\": [\n    {\"name\": 1,}\n  ]\n}",
        Some("cat.json"),
    )
    .unwrap_err();
    assert_eq!(error.code(), "CATALOG_PARSE");
    match &error {
        CatalogError::Parse {
            source_name,
            line,
            column,
            ..
        } => {
            assert_eq!(source_name, "cat.json");
            assert_eq!((*line, *column), (3, 16));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        error.to_string(),
        "cat.json:3:16: invalid JSON: trailing comma"
    );
    let error = Catalog::from_json_str("", None).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("<input>:1:0: invalid JSON: EOF"),
        "{error}"
    );
}

#[test]
fn shape_errors_name_the_tool_and_pointer() {
    let cases = [
        (r#"{"tool": []}"#, None, "", "there is no \"tools\" key"),
        (
            r#"{"tools": {}}"#,
            None,
            "/tools",
            "expected an array of tools, got an object",
        ),
        ("3", None, "", "got a number"),
        (
            r#"[1]"#,
            Some(ToolRef::Index(0)),
            "/0",
            "expected a tool object, got a number",
        ),
        (
            r#"{"tools": [{"description": "x"}]}"#,
            Some(ToolRef::Index(0)),
            "/tools/0",
            "no \"name\"",
        ),
        (
            r#"[{"name": 5}]"#,
            Some(ToolRef::Index(0)),
            "/0/name",
            "expected a string, got a number",
        ),
        (
            r#"[{"name": "a", "description": 1, "inputSchema": {}}]"#,
            Some(ToolRef::Name("a".into())),
            "/0/description",
            "expected a string",
        ),
        (
            r#"[{"name": "a"}]"#,
            Some(ToolRef::Name("a".into())),
            "/0",
            "no \"inputSchema\"",
        ),
        (
            r#"{"tools": [{"name": "ok", "inputSchema": {}}, {"name": "a", "inputSchema": "x"}]}"#,
            Some(ToolRef::Name("a".into())),
            "/tools/1/inputSchema",
            "expected a JSON Schema (an object or a boolean), got a string",
        ),
        (
            r#"[{"name": "a", "inputSchema": {}, "outputSchema": []}]"#,
            Some(ToolRef::Name("a".into())),
            "/0/outputSchema",
            "got an array",
        ),
    ];
    for (text, tool, pointer, message) in cases {
        let error = Catalog::from_json_str(text, Some("c.json")).unwrap_err();
        assert_eq!(error.code(), "CATALOG_SHAPE", "{text}");
        match &error {
            CatalogError::Shape {
                source_name,
                tool: t,
                pointer: p,
                message: m,
            } => {
                assert_eq!(source_name, "c.json");
                assert_eq!(t, &tool, "{text}");
                assert_eq!(p, pointer, "{text}");
                assert!(m.contains(message), "{text}: {m}");
            }
            other => panic!("{other:?}"),
        }
    }
    let error =
        Catalog::from_json_str(r#"[{"name": "a", "inputSchema": 1}]"#, Some("c.json")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "c.json: tool \"a\" at /0/inputSchema: expected a JSON Schema (an object or a boolean), got a number"
    );
    let error = Catalog::from_json_str(r#"{"tools": 1}"#, Some("c.json")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "c.json: /tools: expected an array of tools, got a number"
    );
}

#[test]
fn duplicates_and_bad_names_are_rejected() {
    let error = Catalog::new(vec![tool("b"), tool("a"), tool("b")]).unwrap_err();
    assert_eq!(error.code(), "DUPLICATE_TOOL");
    assert_eq!(
        error.to_string(),
        "<input>: tool \"b\" is defined twice (entries #0 and #2); tool names must be unique"
    );
    let error = Catalog::from_json_str(
        r#"{"tools": [{"name": "ok", "inputSchema": {}}, {"name": "has space", "inputSchema": {}}]}"#,
        Some("c.json"),
    )
    .unwrap_err();
    assert_eq!(error.code(), "INVALID_TOOL_NAME");
    assert_eq!(
        error.to_string(),
        "c.json: tool #1 (/tools/1/name): invalid name \"has space\": a tool name may contain only A-Z, a-z, 0-9, '_', '-' and '.'; found ' ' at position 3"
    );
    let catalog = Catalog::new(vec![tool("z"), tool("a.b-c_D9")]).unwrap();
    assert_eq!(catalog.tools()[0].name, "a.b-c_D9");
    assert_eq!(
        Catalog::new(vec![]).unwrap().to_json(),
        json!({"tools": []})
    );
    // Boolean schemas are valid JSON Schema documents.
    let t = ToolSchema {
        input_schema: json!(true),
        ..tool("t")
    };
    Catalog::new(vec![t]).unwrap();
}

#[test]
fn tool_names() {
    assert_eq!(validate_tool_name(""), Err(NameError::Empty));
    assert_eq!(validate_tool_name(&"a".repeat(128)), Ok(()));
    assert_eq!(
        validate_tool_name(&"a".repeat(129)),
        Err(NameError::TooLong { length: 129 })
    );
    assert_eq!(
        validate_tool_name("café"),
        Err(NameError::InvalidCharacter {
            character: 'é',
            position: 3
        })
    );
    for ok in ["read_file", "fs.read", "a-b", "A9", "_", "."] {
        assert_eq!(validate_tool_name(ok), Ok(()), "{ok}");
    }
    for bad in ["a b", "a/b", "a:b", "a@b", "ä"] {
        assert!(validate_tool_name(bad).is_err(), "{bad}");
    }
    assert_eq!(NameError::Empty.code(), "INVALID_TOOL_NAME");
}

#[test]
fn load_names_the_file() {
    let dir = std::env::temp_dir().join(format!("tools-schema-catalog-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("catalog.json");
    std::fs::write(
        &path,
        "{\"tools\": [{\"name\": \"t\", \"inputSchema\": {}}]}",
    )
    .unwrap();
    let catalog = Catalog::load(&path).unwrap();
    assert_eq!(catalog.tools()[0].name, "t");
    std::fs::write(&path, "{\"tools\": [\n}").unwrap();
    let error = Catalog::load(&path).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with(&format!("{}:2:1: invalid JSON", path.display())),
        "{error}"
    );
    let missing = dir.join("missing.json");
    let error = Catalog::load(&missing).unwrap_err();
    assert_eq!(error.code(), "CATALOG_IO");
    assert!(
        error
            .to_string()
            .starts_with(&format!("{}: cannot read", missing.display()))
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
