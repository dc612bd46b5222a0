//! The tool catalog: reading, writing, names, and located errors.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::json;
use tools_schema::{
    Catalog, CatalogEntry, CatalogError, NameError, ToolAnnotations, ToolRef, validate_tool_name,
};

fn tool(name: &str) -> CatalogEntry {
    CatalogEntry {
        name: name.into(),
        description: format!("{name} tool"),
        input_schema: json!({"type": "object"}),
        output_schema: None,
        annotations: None,
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
        {"name": "write_file", "description": "Write.", "inputSchema": {"type": "object"}, "outputSchema": {"type": "string"}, "annotations": {"readOnlyHint": false}}
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
      },
      "annotations": {
        "readOnlyHint": false
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
fn annotations_are_read_leniently_and_written_back() {
    let catalog = Catalog::from_json_str(
        r#"[
        {"name": "a", "inputSchema": {}, "annotations": {"title": "Delete", "readOnlyHint": false,
            "destructiveHint": true, "idempotentHint": "yes", "openWorldHint": false, "other": 1}},
        {"name": "b", "inputSchema": {}, "annotations": {"idempotentHint": 3}},
        {"name": "c", "inputSchema": {}, "annotations": "not an object"}
    ]"#,
        None,
    )
    .unwrap();
    assert_eq!(
        catalog.get("a").unwrap().annotations,
        Some(ToolAnnotations {
            title: Some("Delete".into()),
            read_only_hint: Some(false),
            destructive_hint: Some(true),
            // A hint of the wrong type says nothing.
            idempotent_hint: None,
            open_world_hint: Some(false),
        })
    );
    // Nothing usable: no annotations.
    assert_eq!(catalog.get("b").unwrap().annotations, None);
    assert_eq!(catalog.get("c").unwrap().annotations, None);
    let written = catalog.to_json();
    assert_eq!(
        written["tools"][0]["annotations"],
        json!({"title": "Delete", "readOnlyHint": false, "destructiveHint": true, "openWorldHint": false})
    );
    assert!(written["tools"][1].get("annotations").is_none());
    assert_eq!(Catalog::from_json_value(written, None).unwrap(), catalog);
}

#[test]
fn serde_form_of_a_tool() {
    let t = CatalogEntry {
        output_schema: Some(json!(true)),
        ..tool("a")
    };
    let v = serde_json::to_value(&t).unwrap();
    assert_eq!(
        v,
        json!({"name": "a", "description": "a tool", "inputSchema": {"type": "object"}, "outputSchema": true})
    );
    let back: CatalogEntry = serde_json::from_value(v).unwrap();
    assert_eq!(back, t);
    let v = serde_json::to_value(tool("b")).unwrap();
    assert!(v.get("outputSchema").is_none());
    let minimal: CatalogEntry =
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
fn duplicates_are_rejected() {
    let error = Catalog::new(vec![tool("b"), tool("a"), tool("b")]).unwrap_err();
    assert_eq!(error.code(), "DUPLICATE_TOOL");
    assert_eq!(
        error.to_string(),
        "<input>: tool \"b\" is defined twice (entries #0 and #2); tool names must be unique"
    );
    let catalog = Catalog::new(vec![tool("z"), tool("a.b-c_D9")]).unwrap();
    assert_eq!(catalog.tools()[0].name, "a.b-c_D9");
    assert_eq!(
        Catalog::new(vec![]).unwrap().to_json(),
        json!({"tools": []})
    );
    // Boolean schemas are valid JSON Schema documents.
    let t = CatalogEntry {
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

/// Any string is a tool name; only a repeated name is refused, and the message quoting it is
/// bounded.
#[test]
fn any_name_is_accepted_and_only_duplicates_are_refused() {
    let long = "n".repeat(10_000_000);
    let names = [
        "",
        " ",
        "has space",
        "a/b",
        "ns:tool",
        "café",
        "日本語",
        "emoji 😀",
        "nul\u{0}byte",
        "line\nbreak",
        "quote\"and\\backslash",
        "\u{2028}",
        long.as_str(),
    ];
    let tools: Vec<CatalogEntry> = names.iter().map(|n| tool(n)).collect();
    let catalog = Catalog::new(tools).unwrap();
    assert_eq!(catalog.len(), names.len());
    let mut sorted: Vec<&str> = names.to_vec();
    sorted.sort();
    let read: Vec<&str> = catalog.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(read, sorted);
    // The names survive a round trip through the catalog's own text.
    let again = Catalog::from_json_str(&catalog.to_json_string(), None).unwrap();
    assert_eq!(again, catalog);

    let error = Catalog::new(vec![tool(&long), tool("x"), tool(&long)]).unwrap_err();
    assert_eq!(error.code(), "DUPLICATE_TOOL");
    let message = error.to_string();
    assert!(message.len() < 500, "{} bytes", message.len());
    assert!(
        message.contains(&format!(
            "tool \"{}\"… (9999800 more bytes) is defined twice",
            "n".repeat(tools_schema::excerpt::LIMIT)
        )),
        "{message:.400}"
    );
    let error = Catalog::from_json_str(
        r#"[{"name": "", "inputSchema": {}}, {"name": "", "inputSchema": {}}]"#,
        None,
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "<input>: tool \"\" is defined twice (entries #0 and #1); tool names must be unique"
    );
}

/// Shape errors quote a tool's name cut to the excerpt limit.
#[test]
fn shape_errors_cut_long_names() {
    let long = "é".repeat(1_000_000);
    let text = format!(r#"[{{"name": "{long}", "inputSchema": 7}}]"#);
    let message = Catalog::from_json_str(&text, None).unwrap_err().to_string();
    assert!(message.len() < 1000, "{} bytes", message.len());
    assert!(
        message.contains("… (1999600 more bytes) at /0/inputSchema"),
        "{message}"
    );
}

/// `"inputSchema": null` is a tool without arguments.
#[test]
fn a_null_input_schema_means_no_arguments() {
    let catalog =
        Catalog::from_json_str(r#"[{"name": "ping", "inputSchema": null}]"#, None).unwrap();
    assert_eq!(
        catalog.tools()[0].input_schema,
        json!({"type": "object", "additionalProperties": false})
    );
    assert_eq!(
        catalog.tools()[0].input_schema,
        tools_schema::no_arguments()
    );
    let built = Catalog::new(vec![CatalogEntry {
        input_schema: serde_json::Value::Null,
        ..tool("ping")
    }])
    .unwrap();
    assert_eq!(built.tools()[0].input_schema, tools_schema::no_arguments());
}

fn nested(levels: usize) -> String {
    format!(
        "{}{{\"type\": \"string\"}}{}",
        "{\"type\": \"object\", \"properties\": {\"a\": ".repeat(levels),
        "}}".repeat(levels)
    )
}

/// Schemas of any depth are read, written, cloned, compared and dropped, on the default test
/// thread stack.
#[test]
fn schemas_of_any_depth_are_read() {
    for levels in [200, 20_000] {
        let text = format!(
            r#"{{"tools": [{{"name": "deep", "inputSchema": {}}}]}}"#,
            nested(levels)
        );
        let catalog = Catalog::from_json_str(&text, Some("deep.json")).unwrap();
        assert_eq!(
            tools_schema::deep::depth(&catalog.tools()[0].input_schema),
            2 * levels + 2
        );
        let written = catalog.to_json_string();
        let again = Catalog::from_json_str(&written, None).unwrap();
        assert_eq!(again, catalog);
        let copy = catalog.clone();
        assert_eq!(copy, catalog);
        assert!(format!("{copy:?}").len() < 2000);
        drop(copy);
        drop(again);
        for tool in catalog.into_tools() {
            tools_schema::deep::drop_value(tool.input_schema);
        }
    }
}

/// Deep text that fails to parse, or whose deep parts are thrown away, is dropped without
/// recursion.
#[test]
fn deep_text_that_fails_or_is_discarded_is_dropped_safely() {
    let deep = nested(20_000);
    // An error after a deep complete value, inside an array.
    let text = format!(r#"[{{"name": "a", "inputSchema": {deep}}}, }}]"#);
    let error = Catalog::from_json_str(&text, None).unwrap_err();
    assert_eq!(error.code(), "CATALOG_PARSE");
    // An error inside the deep value.
    let text = format!(
        r#"[{{"name": "a", "inputSchema": {}x"#,
        &deep[..deep.len() / 2]
    );
    assert_eq!(
        Catalog::from_json_str(&text, None).unwrap_err().code(),
        "CATALOG_PARSE"
    );
    // Trailing text after a deep document.
    let text = format!(r#"[{{"name": "a", "inputSchema": {deep}}}] x"#);
    assert_eq!(
        Catalog::from_json_str(&text, None).unwrap_err().code(),
        "CATALOG_PARSE"
    );
    // A repeated key replaces a deep value; ignored keys and a shape error drop deep values.
    let text = format!(
        r#"{{"x": {deep}, "tools": [{{"name": "a", "_meta": {deep}, "inputSchema": {deep}, "inputSchema": {{}}}}]}}"#
    );
    let catalog = Catalog::from_json_str(&text, None).unwrap();
    assert_eq!(catalog.tools()[0].input_schema, json!({}));
    let text = format!(r#"[{{"name": "a", "inputSchema": {deep}}}, 5]"#);
    assert_eq!(
        Catalog::from_json_str(&text, None).unwrap_err().code(),
        "CATALOG_SHAPE"
    );
    let text = format!(
        r#"[{{"name": "a", "inputSchema": {deep}}}, {{"name": "a", "inputSchema": {{}}}}]"#
    );
    assert_eq!(
        Catalog::from_json_str(&text, None).unwrap_err().code(),
        "DUPLICATE_TOOL"
    );
}

/// A lone surrogate escape is named, with the position of its backslash.
#[test]
fn lone_surrogates_are_named_with_their_position() {
    let cases = [
        (
            "[{\"name\": \"a\\ud800\", \"inputSchema\": {}}]",
            1,
            13,
            "\\ud800: a high (first) half",
        ),
        (
            "[{\"name\": \"a\\ud800x\", \"inputSchema\": {}}]",
            1,
            13,
            "\\ud800",
        ),
        (
            "[{\"name\": \"a\\ud800\\n\", \"inputSchema\": {}}]",
            1,
            13,
            "\\ud800",
        ),
        (
            "[{\"name\": \"a\\ud800\\u0041\", \"inputSchema\": {}}]",
            1,
            13,
            "\\ud800",
        ),
        (
            "[\n {\"name\": \"\\ud83d\\ude00 ok \\udc00\"}]",
            2,
            28,
            "\\udc00: a low (second) half",
        ),
        ("{\"k\\\"\\\\\": 1, \"\\uDBFF\": 2}", 1, 15, "\\udbff"),
    ];
    for (text, line, column, what) in cases {
        let error = Catalog::from_json_str(text, Some("s.json")).unwrap_err();
        let message = error.to_string();
        assert!(
            message.starts_with(&format!(
                "s.json:{line}:{column}: invalid JSON: lone surrogate escape {what}"
            )),
            "{text}: {message}"
        );
        assert!(!message.contains("hex escape"), "{message}");
    }
    // A valid pair is a character.
    let catalog = Catalog::from_json_str(
        "[{\"name\": \"\\ud83d\\ude00\", \"inputSchema\": {}}]",
        None,
    )
    .unwrap();
    assert_eq!(catalog.tools()[0].name, "😀");
}
