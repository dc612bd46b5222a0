//! One test per behaviour of the projections, decoders, limits, policies and names.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Value, json};
use tools_dialects::names::{NameMap, portable_name};
use tools_dialects::{
    CallError, Class, Dialect, Policy, check, parameters_of, project, project_request,
};
use tools_schema::CatalogEntry;

const OPENAI: Dialect = Dialect::OpenAiChat { strict: true };
const ANTHROPIC: Dialect = Dialect::Anthropic { strict: true };

fn tool(name: &str, input: Value) -> CatalogEntry {
    CatalogEntry {
        name: name.into(),
        description: "A tool.".into(),
        input_schema: input,
        output_schema: None,
        annotations: None,
    }
}

fn params(properties: Value, required: Value) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

#[test]
fn strict_openai_makes_optional_properties_required_and_nullable_and_decodes_null_as_absent() {
    let t = tool(
        "t",
        params(
            json!({"a": {"type": "string"}, "b": {"type": "integer"}}),
            json!(["a"]),
        ),
    );
    let p = project(&t, OPENAI, Policy::Error).unwrap();
    let schema = parameters_of(OPENAI, &p.definition).unwrap();
    assert_eq!(schema["required"], json!(["a", "b"]));
    assert_eq!(
        schema["properties"]["b"],
        json!({"anyOf": [{"type": "integer"}, {"type": "null"}]})
    );
    assert_eq!(
        p.decoder.decode(json!({"a": "x", "b": null})).unwrap(),
        json!({"a": "x"})
    );
    assert_eq!(
        p.decoder.decode(json!({"a": "x", "b": 2})).unwrap(),
        json!({"a": "x", "b": 2})
    );
    assert_eq!(
        p.decoder.encode(&json!({"a": "x"})).unwrap(),
        json!({"a": "x", "b": null})
    );
    let finding = p
        .findings
        .iter()
        .find(|f| f.path == "#/properties/b")
        .unwrap();
    assert_eq!(
        (finding.class, finding.rule),
        (Class::Reshaped, "openai-all-required")
    );
}

#[test]
fn an_optional_nullable_property_is_narrowed_an_explicit_null_cannot_be_sent() {
    let t = tool(
        "t",
        params(
            json!({"b": {"oneOf": [{"type": "integer"}, {"type": "null"}]}}),
            json!([]),
        ),
    );
    let p = project(&t, OPENAI, Policy::Error).unwrap();
    assert!(
        p.findings
            .iter()
            .any(|f| f.path == "#/properties/b" && f.class == Class::Narrowed)
    );
    let error = p.decoder.encode(&json!({"b": null})).unwrap_err();
    assert_eq!(
        (error.path.as_str(), error.code()),
        ("/b", "NOT_REPRESENTABLE")
    );
    // The node's own anyOf is wrapped, never merged into.
    let schema = parameters_of(OPENAI, &p.definition).unwrap();
    assert_eq!(
        schema["properties"]["b"],
        json!({"anyOf": [{"anyOf": [{"type": "integer"}, {"type": "null"}]}, {"type": "null"}]})
    );
}

#[test]
fn maps_become_pairs_and_come_back_and_bad_pairs_are_clear_errors() {
    let t = tool(
        "t",
        params(
            json!({"env": {"type": "object", "additionalProperties": {"type": "integer"}}}),
            json!(["env"]),
        ),
    );
    for dialect in [OPENAI, ANTHROPIC, Dialect::GeminiParameters] {
        let p = project(&t, dialect, Policy::Error).unwrap();
        let env = &parameters_of(dialect, &p.definition).unwrap()["properties"]["env"];
        assert_eq!(env["type"], json!("array"), "{dialect}");
        assert_eq!(env["items"]["required"], json!(["key", "value"]));
        let sent = json!({"env": [{"key": "A", "value": 1}, {"key": "B", "value": 2}]});
        assert_eq!(
            p.decoder.decode(sent).unwrap(),
            json!({"env": {"A": 1, "B": 2}})
        );
        let twice = json!({"env": [{"key": "A", "value": 1}, {"key": "A", "value": 2}]});
        let error = p.decoder.decode(twice).unwrap_err();
        assert_eq!(error.path, "/env/1/key");
        assert!(error.message.contains("given twice"), "{error}");
        let error = p.decoder.decode(json!({"env": {"A": 1}})).unwrap_err();
        assert_eq!(
            (error.path.as_str(), error.code()),
            ("/env", "INVALID_PROVIDER_ARGS")
        );
    }
    // Gemini's JSON Schema dialect types the map as it is.
    let p = project(&t, Dialect::GeminiJsonSchema, Policy::Error).unwrap();
    assert!(p.decoder.is_identity());
}

#[test]
fn gemini_wants_const_as_enum_and_string_enums_only() {
    let t = tool(
        "t",
        params(
            json!({"kind": {"type": "string", "const": "a"}, "level": {"type": "integer", "enum": [1, 2, 3]}}),
            json!(["kind", "level"]),
        ),
    );
    let p = project(&t, Dialect::GeminiParameters, Policy::Error).unwrap();
    let schema = parameters_of(Dialect::GeminiParameters, &p.definition).unwrap();
    assert_eq!(schema["properties"]["kind"]["enum"], json!(["a"]));
    assert_eq!(
        schema["properties"]["level"]["enum"],
        json!(["1", "2", "3"])
    );
    assert_eq!(schema["properties"]["level"]["type"], json!("string"));
    assert_eq!(
        p.decoder
            .decode(json!({"kind": "a", "level": "2"}))
            .unwrap(),
        json!({"kind": "a", "level": 2})
    );
    let error = p
        .decoder
        .decode(json!({"kind": "a", "level": "two"}))
        .unwrap_err();
    assert_eq!(error.path, "/level");
    let json_schema = project(&t, Dialect::GeminiJsonSchema, Policy::Error).unwrap();
    let schema = parameters_of(Dialect::GeminiJsonSchema, &json_schema.definition).unwrap();
    assert_eq!(
        schema["properties"]["kind"],
        json!({"type": "string", "enum": ["a"]})
    );
    assert!(
        json_schema
            .findings
            .iter()
            .any(|f| f.rule == "gemini-const-as-enum" && f.path == "#/properties/kind/const")
    );
}

#[test]
fn overlapping_one_of_is_unrepresentable_and_the_policy_decides() {
    let t = tool(
        "overlap",
        params(
            json!({"v": {"oneOf": [{"type": "integer"}, {"type": "number"}]}}),
            json!(["v"]),
        ),
    );
    let error = project(&t, OPENAI, Policy::Error).unwrap_err();
    assert_eq!(error.code(), "UNREPRESENTABLE");
    assert!(
        error.to_string().contains("\"overlap\"")
            && error.to_string().contains("#/properties/v/oneOf"),
        "{error}"
    );
    let warned = project(&t, OPENAI, Policy::Warn).unwrap();
    assert_eq!(warned.sent, OPENAI);
    assert!(
        warned
            .findings
            .iter()
            .any(|f| f.class == Class::Unrepresentable)
    );
    let fallen = project(&t, OPENAI, Policy::NonStrict).unwrap();
    assert_eq!(fallen.sent, Dialect::OpenAiChat { strict: false });
    assert_eq!(fallen.definition["function"]["strict"], json!(false));
    assert!(
        fallen
            .findings
            .iter()
            .any(|f| f.class == Class::Unrepresentable)
    );
    assert!(check::check(fallen.sent, &fallen.definition).is_empty());
}

#[test]
fn a_tagged_union_is_disjoint_becomes_any_of_and_decodes_through_the_right_branch() {
    let t = tool(
        "t",
        params(
            json!({"shape": {"oneOf": [
                {"type": "object", "properties": {"kind": {"type": "string", "const": "map"}, "m": {"type": "object", "additionalProperties": {"type": "string"}}}, "required": ["kind", "m"], "additionalProperties": false},
                {"type": "object", "properties": {"kind": {"type": "string", "const": "list"}, "m": {"type": "array", "items": {"type": "string"}}}, "required": ["kind", "m"], "additionalProperties": false}
            ]}}),
            json!(["shape"]),
        ),
    );
    let p = project(&t, OPENAI, Policy::Error).unwrap();
    assert!(
        p.findings
            .iter()
            .any(|f| f.path == "#/properties/shape/oneOf" && f.class == Class::Lossless)
    );
    let sent = json!({"shape": {"kind": "map", "m": [{"key": "a", "value": "b"}]}});
    assert_eq!(
        p.decoder.decode(sent).unwrap(),
        json!({"shape": {"kind": "map", "m": {"a": "b"}}})
    );
    let sent = json!({"shape": {"kind": "list", "m": ["x"]}});
    assert_eq!(
        p.decoder.decode(sent).unwrap(),
        json!({"shape": {"kind": "list", "m": ["x"]}})
    );
}

#[test]
fn any_value_is_json_text_in_strict_dialects() {
    let t = tool(
        "t",
        params(
            json!({"data": {"description": "Anything."}}),
            json!(["data"]),
        ),
    );
    let p = project(&t, ANTHROPIC, Policy::Error).unwrap();
    let data = &parameters_of(ANTHROPIC, &p.definition).unwrap()["properties"]["data"];
    assert_eq!(
        data,
        &json!({"type": "string", "description": "Anything. Any JSON value, written as JSON text."})
    );
    assert_eq!(
        p.decoder
            .decode(json!({"data": "[1, {\"a\": null}]"}))
            .unwrap(),
        json!({"data": [1, {"a": null}]})
    );
    let error = p.decoder.decode(json!({"data": "[1,"})).unwrap_err();
    assert_eq!(error.path, "/data");
}

#[test]
fn strict_anthropic_drops_bounds_and_clamps_min_items() {
    let t = tool(
        "t",
        params(
            json!({"n": {"type": "integer", "minimum": 1, "maximum": 9}, "xs": {"type": "array", "items": {"type": "string", "minLength": 2}, "minItems": 3, "uniqueItems": true}}),
            json!(["n", "xs"]),
        ),
    );
    let p = project(&t, ANTHROPIC, Policy::Error).unwrap();
    let schema = parameters_of(ANTHROPIC, &p.definition).unwrap();
    assert_eq!(schema["properties"]["n"], json!({"type": "integer"}));
    assert_eq!(
        schema["properties"]["xs"],
        json!({"type": "array", "items": {"type": "string"}, "minItems": 1})
    );
    let widened: Vec<&str> = p
        .findings
        .iter()
        .filter(|f| f.class == Class::Widened)
        .map(|f| f.path.as_str())
        .collect();
    assert_eq!(
        widened,
        [
            "#/properties/n/minimum",
            "#/properties/n/maximum",
            "#/properties/xs/items/minLength",
            "#/properties/xs/minItems",
            "#/properties/xs/uniqueItems"
        ]
    );
    // OpenAI keeps the numeric bounds and minItems but not minLength or uniqueItems.
    let p = project(&t, OPENAI, Policy::Error).unwrap();
    let schema = parameters_of(OPENAI, &p.definition).unwrap();
    assert_eq!(
        schema["properties"]["n"],
        json!({"type": "integer", "minimum": 1, "maximum": 9})
    );
    assert_eq!(
        schema["properties"]["xs"],
        json!({"type": "array", "items": {"type": "string"}, "minItems": 3})
    );
}

#[test]
fn strict_is_always_sent_explicitly_to_openai() {
    let t = tool("t", params(json!({}), json!([])));
    for strict in [true, false] {
        let chat = project(&t, Dialect::OpenAiChat { strict }, Policy::Error).unwrap();
        assert_eq!(chat.definition["function"]["strict"], json!(strict));
        let responses = project(&t, Dialect::OpenAiResponses { strict }, Policy::Error).unwrap();
        assert_eq!(responses.definition["strict"], json!(strict));
        assert_eq!(responses.definition["type"], json!("function"));
    }
}

fn nested_objects(levels: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 0..levels {
        schema = params(json!({"a": schema}), json!(["a"]));
    }
    schema
}

#[test]
fn openai_limits_are_checked_before_a_request_naming_tool_path_and_limit() {
    let error = project(&tool("deep", nested_objects(11)), OPENAI, Policy::Warn).unwrap_err();
    assert_eq!(error.code(), "PROVIDER_LIMIT");
    let text = error.to_string();
    assert!(
        text.contains("\"deep\"") && text.contains("at most 10 levels of object nesting"),
        "{text}"
    );
    assert!(text.contains(&"/properties/a".repeat(10)), "{text}");
    assert!(project(&tool("ok", nested_objects(10)), OPENAI, Policy::Error).is_ok());
    let fallen = project(&tool("deep", nested_objects(11)), OPENAI, Policy::NonStrict).unwrap();
    assert_eq!(fallen.sent, Dialect::OpenAiChat { strict: false });

    let values: Vec<String> = (0..1001).map(|i| format!("v{i}")).collect();
    let error = project(
        &tool(
            "enum",
            params(
                json!({"e": {"type": "string", "enum": values}}),
                json!(["e"]),
            ),
        ),
        OPENAI,
        Policy::Error,
    )
    .unwrap_err();
    assert!(
        error.to_string().contains("at most 1000 enum values"),
        "{error}"
    );
}

#[test]
fn anthropic_request_limits_count_strict_tools_optional_parameters_and_unions() {
    let simple = |i: usize| {
        tool(
            &format!("t{i}"),
            params(json!({"a": {"type": "string"}}), json!(["a"])),
        )
    };
    let tools: Vec<CatalogEntry> = (0..21).map(simple).collect();
    let error = project_request(&tools, ANTHROPIC, Policy::Error).unwrap_err();
    assert!(
        error.to_string().contains("\"t20\"")
            && error.to_string().contains("at most 20 strict tools"),
        "{error}"
    );
    let request = project_request(&tools, ANTHROPIC, Policy::NonStrict).unwrap();
    assert!(request.tools[..20].iter().all(|p| p.sent == ANTHROPIC));
    assert_eq!(request.tools[20].sent, Dialect::Anthropic { strict: false });
    assert!(request.tools[20].definition.get("strict").is_none());

    let optional = |i: usize| {
        let props: serde_json::Map<String, Value> = (0..5)
            .map(|j| (format!("o{j}"), json!({"type": "string"})))
            .collect();
        tool(&format!("t{i}"), params(Value::Object(props), json!([])))
    };
    let tools: Vec<CatalogEntry> = (0..5).map(optional).collect();
    let error = project_request(&tools, ANTHROPIC, Policy::Error).unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("\"t4\"")
            && text.contains("at most 24 optional parameters")
            && text.contains("/properties/o4"),
        "{text}"
    );

    let union = |i: usize| {
        let props: serde_json::Map<String, Value> = (0..9)
            .map(|j| {
                (
                    format!("u{j}"),
                    json!({"oneOf": [{"type": "string"}, {"type": "integer"}]}),
                )
            })
            .collect();
        let names: Vec<String> = (0..9).map(|j| format!("u{j}")).collect();
        tool(&format!("t{i}"), params(Value::Object(props), json!(names)))
    };
    let error = project_request(&[union(0), union(1)], ANTHROPIC, Policy::Error).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("at most 16 parameters with union types"),
        "{error}"
    );
    // The checker, written from the docs, agrees.
    let request = project_request(&[union(0), union(1)], ANTHROPIC, Policy::NonStrict).unwrap();
    let definitions: Vec<Value> = request.tools.iter().map(|p| p.definition.clone()).collect();
    assert!(check::check_request(ANTHROPIC, &definitions).is_empty());
    let mut both_strict = definitions.clone();
    both_strict[1] = project(&union(1), ANTHROPIC, Policy::Error)
        .unwrap()
        .definition;
    assert_eq!(check::check_request(ANTHROPIC, &both_strict).len(), 1);
}

#[test]
fn names_are_projected_reversibly_and_collisions_reported() {
    assert_eq!(portable_name("read_file"), "read_file");
    let dotted = portable_name("fs.read");
    assert!(dotted.starts_with("fs_read_") && dotted.len() == "fs_read_".len() + 8);
    let long = portable_name(&"x".repeat(100));
    assert_eq!(long.len(), 64);
    assert!(portable_name("1st").starts_with("_1st_"));
    assert!(portable_name("日本").starts_with("___"));
    let error = NameMap::new(["fs.read", dotted.as_str()]).unwrap_err();
    assert_eq!(error.code(), "NAME_COLLISION");
    assert!(error.to_string().contains("\"fs.read\""), "{error}");
    assert!(NameMap::new(["a", "a"]).is_err());

    let tools = vec![tool(
        "fs.read",
        params(json!({"p": {"type": "string"}}), json!([])),
    )];
    let request = project_request(&tools, OPENAI, Policy::Error).unwrap();
    assert_eq!(
        request.tools[0].definition["function"]["name"],
        json!(dotted)
    );
    let (name, args) = request.decode_call(&dotted, json!({"p": null})).unwrap();
    assert_eq!((name.as_str(), args), ("fs.read", json!({})));
    let error = request.decode_call("fs.read", json!({})).unwrap_err();
    assert!(matches!(error, CallError::UnknownName(_)));
    assert_eq!(error.code(), "UNKNOWN_TOOL");
    let error = request.decode_call(&dotted, json!([])).unwrap_err();
    assert_eq!(error.code(), "INVALID_PROVIDER_ARGS");
}

#[test]
fn schemas_deeper_than_the_limit_are_refused_without_recursion() {
    // Built by hand: `json!` would copy the value recursively.
    let mut deep = json!({"type": "string"});
    for _ in 0..100_000 {
        let mut node = serde_json::Map::new();
        node.insert("type".into(), json!("array"));
        node.insert("items".into(), deep);
        deep = Value::Object(node);
    }
    let mut properties = serde_json::Map::new();
    properties.insert("a".into(), deep);
    let mut root = serde_json::Map::new();
    root.insert("type".into(), json!("object"));
    root.insert("properties".into(), Value::Object(properties));
    let t = tool("deep", Value::Object(root));
    for dialect in Dialect::ALL {
        match project(&t, dialect, Policy::Warn) {
            Err(error) => assert_eq!(error.code(), "SCHEMA_TOO_DEEP"),
            Ok(_) => panic!("{dialect}"),
        }
    }
    tools_schema::deep::drop_value(t.input_schema);
}

#[test]
fn the_checker_refuses_what_each_provider_documents_as_refused() {
    let bad = |dialect: Dialect, definition: Value| {
        let violations = check::check(dialect, &definition);
        assert!(!violations.is_empty(), "{dialect}: {definition}");
        violations
    };
    let open = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    let v = bad(
        OPENAI,
        json!({"type": "function", "function": {"name": "t", "parameters": open, "strict": true}}),
    );
    assert!(v.iter().any(|v| v.rule == "openai-closed-objects"));
    assert!(v.iter().any(|v| v.rule == "openai-all-required"));
    bad(
        OPENAI,
        json!({"type": "function", "function": {"name": "t", "parameters": {"type": "object", "properties": {}, "additionalProperties": false}}}),
    );
    bad(
        OPENAI,
        json!({"type": "function", "function": {"name": "t", "strict": true, "parameters": {"type": "object", "properties": {"s": {"type": "string", "minLength": 1}}, "required": ["s"], "additionalProperties": false}}}),
    );
    bad(
        ANTHROPIC,
        json!({"name": "t", "strict": true, "input_schema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}, "additionalProperties": false}}),
    );
    bad(
        Dialect::GeminiParameters,
        json!({"name": "t", "parameters": {"type": "object", "properties": {"n": {"type": "integer", "enum": [1]}}}}),
    );
    bad(
        Dialect::GeminiParameters,
        json!({"name": "t", "parameters": {"type": "object", "additionalProperties": false}}),
    );
    bad(
        Dialect::GeminiJsonSchema,
        json!({"name": "t", "parametersJsonSchema": {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}}),
    );
    bad(
        Dialect::GeminiJsonSchema,
        json!({"name": "t", "parametersJsonSchema": {"type": "object", "properties": {"a": {"const": 1}}}}),
    );
    bad(
        Dialect::Anthropic { strict: false },
        json!({"name": "a b", "input_schema": {"type": "object"}}),
    );
    assert!(check::check(Dialect::GeminiJsonSchema, &json!({"name": "t", "parametersJsonSchema": {"type": "object", "$defs": {"x": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/x"}}}})).is_empty());
}

#[test]
fn schemas_just_within_the_depth_limit_project_in_every_dialect() {
    // Arrays nest one JSON level each: the deepest schema the limit lets through.
    let mut deep = json!({"type": "object", "additionalProperties": {"type": "integer"}});
    for _ in 0..(tools_dialects::MAX_SCHEMA_DEPTH - 5) {
        let mut node = serde_json::Map::new();
        node.insert("type".into(), json!("array"));
        node.insert("items".into(), deep);
        deep = Value::Object(node);
    }
    let mut properties = serde_json::Map::new();
    properties.insert("a".into(), deep);
    let mut root = serde_json::Map::new();
    root.insert("type".into(), json!("object"));
    root.insert("properties".into(), Value::Object(properties));
    let t = tool("deep", Value::Object(root));
    assert_eq!(
        tools_schema::deep::depth(&t.input_schema),
        tools_dialects::MAX_SCHEMA_DEPTH
    );
    for dialect in Dialect::ALL {
        // Within the depth limit; OpenAI's own nesting limit counts objects, not arrays.
        let p = project(&t, dialect, Policy::Warn).unwrap();
        assert!(check::check(p.sent, &p.definition).is_empty(), "{dialect}");
    }
}

#[test]
fn a_map_sent_as_pairs_beside_an_array_alternative_is_narrowed_and_an_ambiguous_value_refused() {
    // Found by the round-trip property test: as pairs, the empty map is `[]`, which is also the
    // array alternative's empty array, so `{}` would have come back as `[]`.
    let t = tool(
        "t",
        params(
            json!({"p": {"oneOf": [
                {"type": "number"},
                {"type": "array", "items": {"type": "null"}, "maxItems": 0},
                {"type": "object", "additionalProperties": {"type": "integer"}},
            ]}}),
            json!(["p"]),
        ),
    );
    let gemini = Dialect::GeminiParameters;
    let p = project(&t, gemini, Policy::Warn).unwrap();
    let finding = p
        .findings
        .iter()
        .find(|f| f.rule == "union-reshape")
        .unwrap();
    assert_eq!(finding.path, "#/properties/p/oneOf");
    assert_eq!(finding.class, Class::Narrowed);
    let error = p.decoder.encode(&json!({"p": {}})).unwrap_err();
    assert!(error.to_string().contains("another alternative"), "{error}");
    for value in [json!({"p": {"a": 3}}), json!({"p": []}), json!({"p": 2})] {
        let sent = p.decoder.encode(&value).unwrap();
        assert_eq!(p.decoder.decode(sent).unwrap(), value);
    }
    // Where the map keeps its type, nothing is ambiguous and nothing is reported.
    let mcp = project(&t, Dialect::Mcp, Policy::Warn).unwrap();
    assert!(mcp.findings.iter().all(|f| f.rule != "union-reshape"));
}
