//! What `tools-mcp serve` answers to input that is not a message, over stdio and HTTP: the
//! JSON-RPC parse error for text that is not JSON, invalid request for JSON that is no message,
//! each for its id when it has one and with `"id": null` when not; and it goes on serving.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use crate::support::{self, SERVER};

fn initialize(id: u64) -> String {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}
        }
    })
    .to_string()
}

/// The error of `answers` with this code, checking its `id` is present (a value or null).
fn error_with_code(answers: &[Value], code: i64) -> &Value {
    let answer = answers
        .iter()
        .find(|a| a["error"]["code"] == code)
        .unwrap_or_else(|| panic!("no error {code} in {answers:?}"));
    assert!(
        answer.as_object().unwrap().contains_key("id"),
        "an error without an id member: {answer}"
    );
    answer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_answers_lines_that_are_no_message() {
    let mut child = tokio::process::Command::new(SERVER)
        .arg("serve")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let input = [
        "this is not JSON".to_owned(),
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":"oops"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","surprise":true}"#.to_owned(),
        initialize(9),
    ];
    for line in &input {
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
    }
    stdin.flush().await.unwrap();
    let mut answers = Vec::new();
    let read = async {
        while answers.len() < input.len() {
            let line = lines
                .next_line()
                .await
                .unwrap()
                .expect("the server's output ended");
            answers.push(serde_json::from_str::<Value>(&line).unwrap());
        }
    };
    tokio::time::timeout(Duration::from_secs(60), read)
        .await
        .unwrap_or_else(|_| panic!("not every line was answered: {answers:?}"));
    let parse = error_with_code(&answers, -32700);
    assert_eq!(parse["id"], Value::Null);
    let invalid: Vec<&Value> = answers
        .iter()
        .filter(|a| a["error"]["code"] == -32600)
        .collect();
    assert_eq!(invalid.len(), 2, "{answers:?}");
    assert!(invalid.iter().any(|a| a["id"] == 3), "{answers:?}");
    assert!(
        invalid
            .iter()
            .any(|a| a.as_object().unwrap().get("id") == Some(&Value::Null)),
        "{answers:?}"
    );
    let served = answers.iter().find(|a| a["id"] == 9).unwrap();
    assert_eq!(
        served["result"]["protocolVersion"], "2025-11-25",
        "{served}"
    );
}

async fn post(url: &str, body: &str) -> (u16, String, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (addr, path) = rest.split_once('/').unwrap();
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST /{path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).await.unwrap();
    let (head, body) = reply.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_answers_bodies_that_are_no_message() {
    let (_server, url, _) = support::serve_http(&[]);
    let (status, head, body) = post(&url, "this is not JSON").await;
    assert_eq!(status, 400, "{head}{body}");
    assert!(head.contains("content-type: application/json"), "{head}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert!(answer.as_object().unwrap().contains_key("id"), "{answer}");
    assert_eq!(answer["id"], Value::Null);

    let (status, _, body) = post(
        &url,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":"oops"}"#,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert_eq!(answer["id"], 4);

    // The server still serves.
    let (status, _, body) = post(&url, &initialize(5)).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"id\":5"), "{body}");
}
