//! Tool-owned presentation cards (the spec's "Tool-owned UI presentation" and the
//! `presentationMeta` clauses of "Key types"): the serialized shapes, the presenters and their
//! fallbacks, presentation metadata for top-level calls only, and re-rendering from a log.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tools_runtime::cards::{
    CallView, FileDiff, FileMatches, Location, NumberedLine, ResultRecord, ResultView, SearchShape,
    WebKind, WebSource,
};
use tools_runtime::{ContentBlock, Output, ToolCall, ToolDefinition, ToolRuntime, tool};

fn round_trip<T: Serialize + for<'de> Deserialize<'de> + PartialEq + std::fmt::Debug>(
    value: &T,
    expected: Value,
) {
    assert_eq!(serde_json::to_value(value).unwrap(), expected);
    let back: T = serde_json::from_value(expected).unwrap();
    assert_eq!(&back, value);
}

#[test]
fn call_views_serialize_with_the_spec_field_names() {
    round_trip(
        &CallView::Generic {
            title: "Fetch".into(),
            kind: Some("fetch".into()),
            raw_input: Some(json!({"url": "u"})),
            content: Some("c".into()),
            locations: Some(vec![Location {
                path: "/a".into(),
                line: Some(3),
            }]),
        },
        json!({"card": "generic", "title": "Fetch", "kind": "fetch", "rawInput": {"url": "u"},
               "content": "c", "locations": [{"path": "/a", "line": 3}]}),
    );
    round_trip(
        &CallView::Generic {
            title: "t".into(),
            kind: None,
            raw_input: None,
            content: None,
            locations: None,
        },
        json!({"card": "generic", "title": "t"}),
    );
    round_trip(
        &CallView::Terminal {
            title: "ls -l".into(),
            description: Some("list".into()),
            cwd: Some("/w".into()),
        },
        json!({"card": "terminal", "title": "ls -l", "description": "list", "cwd": "/w"}),
    );
    round_trip(
        &CallView::Diff {
            title: "edit a".into(),
            diffs: vec![FileDiff {
                path: "a".into(),
                old_text: Some("x".into()),
                new_text: "y".into(),
            }],
            locations: None,
        },
        json!({"card": "diff", "title": "edit a",
               "diffs": [{"path": "a", "oldText": "x", "newText": "y"}]}),
    );
}

#[test]
fn result_views_serialize_with_the_spec_field_names() {
    round_trip(
        &ResultView::Generic {
            title: None,
            content: Some("text".into()),
        },
        json!({"card": "generic", "content": "text"}),
    );
    round_trip(
        &ResultView::Terminal {
            title: Some("ls".into()),
            output: Some("a\nb".into()),
            exit_code: Some(0),
            signal: None,
        },
        json!({"card": "terminal", "title": "ls", "output": "a\nb", "exitCode": 0}),
    );
    round_trip(
        &ResultView::Diff {
            title: None,
            diffs: vec![FileDiff {
                path: "new".into(),
                old_text: None,
                new_text: "n".into(),
            }],
        },
        json!({"card": "diff", "diffs": [{"path": "new", "newText": "n"}]}),
    );
    round_trip(
        &ResultView::Search {
            shape: SearchShape::Matches {
                matches: vec![FileMatches {
                    path: "a.rs".into(),
                    lines: vec![NumberedLine {
                        number: 7,
                        text: "fn x".into(),
                    }],
                }],
            },
            title: Some("grep x".into()),
            truncated: true,
            total: 40,
        },
        json!({"card": "search", "shape": "matches", "title": "grep x", "truncated": true,
               "total": 40, "matches": [{"path": "a.rs", "lines": [{"number": 7, "text": "fn x"}]}]}),
    );
    round_trip(
        &ResultView::Search {
            shape: SearchShape::Paths {
                paths: vec!["a".into(), "b".into()],
            },
            title: None,
            truncated: false,
            total: 2,
        },
        json!({"card": "search", "shape": "paths", "paths": ["a", "b"], "truncated": false,
               "total": 2}),
    );
    round_trip(
        &ResultView::Read {
            title: None,
            path: "/f".into(),
            offset: 10,
            lines: vec![],
            total_lines: 3,
            lang: Some("rust".into()),
            content: Some(String::new()),
        },
        json!({"card": "read", "path": "/f", "offset": 10, "lines": [], "totalLines": 3,
               "lang": "rust", "content": ""}),
    );
    round_trip(
        &ResultView::Web {
            kind: WebKind::Search {
                query: "q".into(),
                sources: vec![WebSource {
                    title: "T".into(),
                    url: "https://e.invalid".into(),
                    snippet: None,
                }],
            },
            title: None,
        },
        json!({"card": "web", "kind": "search", "query": "q",
               "sources": [{"title": "T", "url": "https://e.invalid"}]}),
    );
    round_trip(
        &ResultView::Web {
            kind: WebKind::Fetch {
                url: "https://e.invalid".into(),
                status: Some(200),
                content_type: Some("text/html".into()),
                summary: None,
            },
            title: Some("fetch".into()),
        },
        json!({"card": "web", "kind": "fetch", "url": "https://e.invalid", "status": 200,
               "contentType": "text/html", "title": "fetch"}),
    );
}

/// A file-reading tool with its own cards and presentation metadata.
#[derive(Serialize, tools_runtime::ToolSchema)]
struct Window {
    lines: Vec<String>,
}

fn meta(args: &Value, value: &Value) -> Value {
    json!({"path": args["path"], "count": value["lines"].as_array().map_or(0, Vec::len)})
}

fn read_call(args: &Value) -> Option<CallView> {
    Some(CallView::Generic {
        title: format!("Read {}", args["path"].as_str()?),
        kind: Some("read".into()),
        raw_input: None,
        content: None,
        locations: Some(vec![Location {
            path: args["path"].as_str()?.to_owned(),
            line: None,
        }]),
    })
}

fn read_result(args: &Value, record: &ResultRecord<'_>) -> Option<ResultView> {
    if record.is_error {
        return None;
    }
    let meta = record.meta?;
    Some(ResultView::Read {
        title: None,
        path: args["path"].as_str()?.to_owned(),
        offset: args["offset"].as_u64().unwrap_or(1),
        lines: record
            .text()
            .lines()
            .enumerate()
            .map(|(i, text)| NumberedLine {
                number: args["offset"].as_u64().unwrap_or(1) + i as u64,
                text: text.to_owned(),
            })
            .collect(),
        total_lines: meta["count"].as_u64()?,
        lang: None,
        content: Some(record.text()),
    })
}

fn render_lines(_args: &Value, value: &Value) -> Vec<ContentBlock> {
    let lines: Vec<&str> = value["lines"]
        .as_array()
        .map(|l| l.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    vec![ContentBlock::text(lines.join("\n"))]
}

/// Read lines of a file.
#[tool(
    render = render_lines,
    presentation_meta = meta,
    present_call = read_call,
    present_result = read_result
)]
fn read(
    /// The file.
    path: String,
    /// The first line.
    offset: Option<u64>,
) -> Window {
    let _ = (path, offset);
    Window {
        lines: vec!["alpha".into(), "beta".into()],
    }
}

#[tokio::test]
async fn a_tool_made_with_the_macro_presents_its_own_cards() {
    let def = read::definition().unwrap();
    let args = json!({"path": "/etc/motd", "offset": 5});
    assert_eq!(
        def.present_call(&args),
        CallView::Generic {
            title: "Read /etc/motd".into(),
            kind: Some("read".into()),
            raw_input: None,
            content: None,
            locations: Some(vec![Location {
                path: "/etc/motd".into(),
                line: None
            }]),
        }
    );
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let _r = plugin.register(def.clone()).unwrap();
    let result = rt.execute(ToolCall::new("c1", "read", args.clone())).await;
    assert_eq!(result.meta, Some(json!({"path": "/etc/motd", "count": 2})));

    // Persist what a session log keeps (arguments, content, error flag, meta), drop the rest.
    let log = json!({
        "arguments": args,
        "content": result.content,
        "isError": result.is_error(),
        "meta": result.meta,
    });
    drop(result);
    let content: Vec<ContentBlock> = serde_json::from_value(log["content"].clone()).unwrap();
    let record = ResultRecord {
        content: &content,
        is_error: log["isError"].as_bool().unwrap(),
        meta: Some(&log["meta"]),
    };
    let card = def.present_result(&log["arguments"], &record);
    assert_eq!(
        serde_json::to_value(&card).unwrap(),
        json!({"card": "read", "path": "/etc/motd", "offset": 5, "totalLines": 2,
               "lines": [{"number": 5, "text": "alpha"}, {"number": 6, "text": "beta"}],
               "content": "alpha\nbeta"})
    );
}

#[tokio::test]
async fn presenters_fall_back_to_the_generic_card_on_old_arguments_none_or_a_panic() {
    let def = read::definition().unwrap();
    // An older log whose arguments no longer validate: no panic, the generic card.
    let old = json!({"file": "/etc/motd"});
    assert_eq!(def.present_call(&old), CallView::generic("read", &old));
    let content = vec![ContentBlock::text("alpha")];
    let record = ResultRecord {
        content: &content,
        is_error: false,
        meta: None,
    };
    assert_eq!(
        def.present_result(&old, &record),
        ResultView::Generic {
            title: None,
            content: Some("alpha".into())
        }
    );
    // Valid arguments, but the presenter says `None` (no meta): generic.
    assert_eq!(
        def.present_result(&json!({"path": "/x"}), &record),
        ResultView::generic(&record)
    );
    // A definition without presenters, and one whose presenter panics.
    let plain = ToolDefinition::builder("plain")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "null"})))
        .execute(|_a, _c| async { Ok(Value::Null) })
        .present_result(|_, _| panic!("a buggy presenter"))
        .build()
        .unwrap();
    assert_eq!(
        plain.present_call(&json!({"a": 1})),
        CallView::generic("plain", &json!({"a": 1}))
    );
    assert_eq!(
        plain.present_result(&json!({}), &record),
        ResultView::generic(&record)
    );
}

#[tokio::test]
async fn presentation_meta_is_computed_for_top_level_calls_only() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let _r = plugin.register(read::definition().unwrap()).unwrap();
    let top = rt
        .execute(ToolCall::new("c1", "read", json!({"path": "/a"})))
        .await;
    assert!(top.meta.is_some());
    // A nested call: one made with another execution's token as its parent.
    let tokens = std::sync::Arc::new(std::sync::Mutex::new(None));
    let t = tokens.clone();
    let _o = plugin
        .on_result(move |exec, _| *t.lock().unwrap() = Some(exec.token()))
        .unwrap();
    let _ = rt
        .execute(ToolCall::new("c0", "read", json!({"path": "/b"})))
        .await;
    let parent = tokens.lock().unwrap().unwrap();
    let nested = rt
        .execute(ToolCall::new("c2", "read", json!({"path": "/a"})).with_parent(parent))
        .await;
    assert!(!nested.is_error());
    assert_eq!(nested.meta, None);
}
