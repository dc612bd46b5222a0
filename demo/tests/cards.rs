//! The cards the demo's tools produce: snapshots of the call and result cards of each tool
//! (success and failure), the same cards drawn from what a log keeps (no metadata, as for a
//! Code Mode sub-call), the generic fallback on content a tool did not write, and the drawing
//! of the cards as text, with and without colour.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use serde_json::{Value, json};
use tools_demo::show::{Style, call_card, result_card};
use tools_demo::workspace::Workspace;
use tools_demo::{setup, tools};
use tools_runtime::cards::{ResultRecord, ResultView};
use tools_runtime::{ContentBlock, PresentationMode, ToolCall, ToolDefinition};

fn definition(name: &str) -> ToolDefinition {
    tools::definitions()
        .unwrap()
        .into_iter()
        .find(|d| d.name() == name)
        .unwrap()
}

/// Runs `calls` one after another in a fresh workspace and returns, for each, its call card,
/// its result card, and the result card drawn again without metadata.
async fn cards(calls: &[(&str, Value)]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let ws = Arc::new(Workspace::create(&dir.path().join("ws")).unwrap());
    let demo = setup(None, PresentationMode::Native, Some(ws)).unwrap();
    let mut out = Vec::new();
    for (i, (name, args)) in calls.iter().enumerate() {
        let result = demo
            .runtime
            .execute(
                ToolCall::new(format!("c{i}"), *name, args.clone()).with_agent(demo.agent.key()),
            )
            .await;
        let def = definition(name);
        let record = ResultRecord {
            content: &result.content,
            is_error: result.is_error(),
            meta: result.meta.as_ref(),
        };
        let card = def.present_result(args, &record);
        // What a session log keeps, without metadata: the same card.
        let logged = ResultRecord {
            meta: None,
            ..record
        };
        assert_eq!(def.present_result(args, &logged), card, "{name} {args}");
        out.push(json!({
            "call": def.present_call(args),
            "content": result.text(),
            "result": card,
        }));
    }
    out
}

#[tokio::test]
async fn read_cards_number_the_lines_as_in_the_file() {
    insta::assert_json_snapshot!(
        "read",
        cards(&[
            (
                "read",
                json!({"path": "src/lib.rs", "offset": 8, "limit": 2})
            ),
            ("read", json!({"path": "notes.txt"})),
            ("read", json!({"path": "README.md", "offset": 40})),
            ("read", json!({"path": "missing.txt"})),
            ("read", json!({"path": "/etc/passwd"})),
        ])
        .await
    );
}

#[tokio::test]
async fn search_cards_group_the_matches_by_file() {
    insta::assert_json_snapshot!(
        "search",
        cards(&[
            ("search", json!({"pattern": "lamp"})),
            ("search", json!({"pattern": "nothing like this"})),
        ])
        .await
    );
}

#[tokio::test]
async fn write_cards_are_diffs_of_the_old_and_new_text() {
    insta::assert_json_snapshot!(
        "write",
        cards(&[
            ("write", json!({"path": "notes.txt", "content": "- the lamp starts on\n- TODO: remember the last state\n"})),
            ("write", json!({"path": "docs/new.md", "content": "new\nfile\n"})),
            ("write", json!({"path": "../escape.txt", "content": "x"})),
        ])
        .await
    );
}

#[tokio::test]
async fn shell_cards_are_terminals_with_an_exit_code() {
    insta::assert_json_snapshot!(
        "shell",
        cards(&[
            ("shell", json!({"command": "ls"})),
            ("shell", json!({"command": "ls src"})),
            ("shell", json!({"command": "cat notes.txt"})),
            ("shell", json!({"command": "wc -l README.md"})),
            ("shell", json!({"command": "rm -rf src"})),
            ("shell", json!({"command": "cat ../../etc/passwd"})),
            ("shell", json!({"command": "wc README.md"})),
        ])
        .await
    );
}

#[test]
fn content_a_tool_did_not_write_gets_the_generic_card_without_a_panic() {
    let odd = [
        "",
        "no header here",
        "README.md (x lines)\n  1\tfine",
        "3 matching lines\nno-colons",
        "Updated a (+1 -0)\n*not a diff line",
        "a (3 lines)\nno tab",
        "a (3 lines)\n  x\tnot a number",
        "1 matching lines\na:b:c",
    ];
    for name in ["read", "search", "write"] {
        let def = definition(name);
        for text in odd {
            let content = vec![ContentBlock::text(text)];
            let record = ResultRecord {
                content: &content,
                is_error: false,
                meta: None,
            };
            let args = json!({"path": "a", "pattern": "p", "content": ""});
            assert_eq!(
                def.present_result(&args, &record),
                ResultView::generic(&record),
                "{name}: {text:?}"
            );
        }
    }
}

#[tokio::test]
async fn cards_draw_as_text_in_colour_only_when_asked() {
    let calls = [
        (
            "write",
            json!({"path": "notes.txt", "content": "- the lamp starts on\n"}),
        ),
        ("read", json!({"path": "notes.txt"})),
        ("shell", json!({"command": "rm x"})),
    ];
    let mut plain = Vec::new();
    for card in cards(&calls).await {
        let view: ResultView = serde_json::from_value(card["result"].clone()).unwrap();
        let is_error = matches!(
            view,
            ResultView::Terminal {
                exit_code: Some(1),
                ..
            }
        );
        let call = serde_json::from_value(card["call"].clone()).unwrap();
        plain.extend(call_card(&call, Style::PLAIN));
        plain.extend(result_card(&view, is_error, Style::PLAIN));
        let coloured = result_card(&view, is_error, Style { color: true }).join("\n");
        assert!(coloured.contains("\x1b["), "{coloured}");
    }
    let plain = plain.join("\n");
    assert!(!plain.contains('\x1b'), "{plain}");
    insta::assert_snapshot!("drawn", plain);

    // The diff: removed lines red, added lines green.
    let view: ResultView =
        serde_json::from_value(cards(&calls[..1]).await[0]["result"].clone()).unwrap();
    let coloured = result_card(&view, false, Style { color: true }).join("\n");
    assert!(
        coloured.contains("\x1b[31m-- the lamp starts off\x1b[0m"),
        "{coloured}"
    );
    assert!(
        coloured.contains("\x1b[32m+- the lamp starts on\x1b[0m"),
        "{coloured}"
    );
}
