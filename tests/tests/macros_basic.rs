//! End-to-end behaviour of `#[tool]`, `#[tools]` and `#[derive(ToolSchema)]`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tools_runtime::{
    CancellationToken, ToolCall, ToolRunContext, ToolRuntime, ToolSchema, tool, tools,
};

/// Add two numbers.
#[tool(concurrency_safe)]
fn add(
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
) -> i64 {
    a + b
}

#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "camelCase")]
struct Page {
    /// Lines of the page.
    lines: Vec<String>,
    total_lines: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_offset: Option<u64>,
}

/// Export everything, reporting progress.
#[tool(timeout = "30s", timeout_resets_on_progress = "1h", long_running)]
async fn export_all(
    #[context] ctx: ToolRunContext,
) -> Result<u32, tools_runtime::progress::ProgressError> {
    ctx.progress(tools_runtime::progress::Progress::new(1.0))?;
    Ok(1)
}

/// Read a file.
#[tool(timeout = "30s")]
async fn read_file(
    /// Path of the file.
    path: String,
    offset: Option<u64>,
    #[context] ctx: ToolRunContext,
    #[context] _cancel: CancellationToken,
) -> Result<Page, std::io::Error> {
    let _ = ctx.call_id();
    if path.is_empty() {
        return Err(std::io::Error::other("empty path"));
    }
    Ok(Page {
        lines: vec![path],
        total_lines: 1,
        next_offset: offset,
    })
}

struct Counter {
    base: i64,
}

#[tools]
impl Counter {
    /// Add to the base.
    #[tool]
    async fn bump(&self, by: i64) -> i64 {
        self.base + by
    }

    /// Show the base.
    #[tool(name = "show-base")]
    fn show(&self) -> String {
        self.base.to_string()
    }
}

#[test]
fn plain_call_and_schemas() {
    assert_eq!(add(1, 2), 3);
    let def = add::definition().unwrap();
    assert_eq!(def.name(), "add");
    assert_eq!(def.description(), "Add two numbers.");
    assert_eq!(
        def.input_schema(),
        &json!({"type": "object", "properties": {
            "a": {"type": "integer", "description": "The first addend."},
            "b": {"type": "integer", "description": "The second addend."}
        }, "required": ["a", "b"], "additionalProperties": true})
    );
    let def = read_file::definition().unwrap();
    assert_eq!(def.timeout(), Some(std::time::Duration::from_secs(30)));
    assert_eq!(def.timeout_max_total(), None);
    assert!(!def.is_long_running());
    let export = export_all::definition().unwrap();
    assert_eq!(export.timeout(), Some(std::time::Duration::from_secs(30)));
    assert_eq!(
        export.timeout_max_total(),
        Some(std::time::Duration::from_secs(3600))
    );
    assert!(export.is_long_running());
    println!(
        "{}",
        serde_json::to_string_pretty(def.input_schema()).unwrap()
    );
    println!(
        "{}",
        serde_json::to_string_pretty(def.output_schema()).unwrap()
    );
    println!(
        "{}",
        serde_json::to_string_pretty(&Page::output_schema().to_json()).unwrap()
    );
}

#[tokio::test]
async fn executes_through_the_runtime() {
    let runtime = ToolRuntime::new();
    let scope = runtime.scope();
    let _a = scope.register(add::definition().unwrap()).unwrap();
    let _r = scope.register(read_file::definition().unwrap()).unwrap();
    let counter = Arc::new(Counter { base: 10 });
    let mut regs = Vec::new();
    for def in counter.tool_definitions().unwrap() {
        regs.push(scope.register(def).unwrap());
    }
    let r = runtime
        .execute(ToolCall::new("1", "add", json!({"a": 2, "b": 3})))
        .await;
    assert_eq!(r.value(), Some(&json!(5)));
    let r = runtime
        .execute(ToolCall::new(
            "2",
            "read_file",
            json!({"path": "x", "offset": 4}),
        ))
        .await;
    assert_eq!(
        r.value(),
        Some(&json!({"lines": ["x"], "totalLines": 1, "nextOffset": 4}))
    );
    let r = runtime
        .execute(ToolCall::new("3", "read_file", json!({"path": ""})))
        .await;
    assert_eq!(r.text(), "Error: empty path");
    let r = runtime
        .execute(ToolCall::new("4", "bump", json!({"by": 5})))
        .await;
    assert_eq!(r.value(), Some(&json!(15)));
    let r = runtime
        .execute(ToolCall::new("5", "show-base", json!({})))
        .await;
    assert_eq!(r.value(), Some(&Value::String("10".into())));
}

/// Tools and schema types declared inside a function body (as in a test or a doctest) see the
/// block's other items: the expansion must not move code where they are out of scope.
#[tokio::test]
async fn tools_and_types_inside_a_function_body() {
    /// A local input type.
    #[derive(Deserialize, ToolSchema)]
    struct Span {
        start: u32,
        #[serde(alias = "stop")]
        end: u32,
    }

    /// A local output type.
    #[derive(Serialize, ToolSchema)]
    struct Length {
        length: u32,
    }

    fn checked(span: &Span) -> Result<u32, String> {
        span.end
            .checked_sub(span.start)
            .ok_or_else(|| format!("end {} is before start {}", span.end, span.start))
    }

    /// Measure a span.
    #[tool]
    async fn measure(span: Span) -> Result<Length, String> {
        checked(&span).map(|length| Length { length })
    }

    /// Measure a span at once.
    #[tool(name = "measure-now")]
    fn measure_now(span: Span) -> Result<Length, String> {
        checked(&span).map(|length| Length { length })
    }

    let runtime = ToolRuntime::new();
    let scope = runtime.scope();
    let _a = scope.register(measure::definition().unwrap()).unwrap();
    let _b = scope.register(measure_now::definition().unwrap()).unwrap();
    for name in ["measure", "measure-now"] {
        let ok = runtime
            .execute(ToolCall::new(
                "1",
                name,
                json!({"span": {"start": 2, "stop": 7}}),
            ))
            .await;
        assert_eq!(ok.value(), Some(&json!({"length": 5})), "{}", ok.text());
        let failed = runtime
            .execute(ToolCall::new(
                "2",
                name,
                json!({"span": {"start": 7, "end": 2}}),
            ))
            .await;
        assert!(failed.is_error());
        assert_eq!(failed.text(), "Error: end 2 is before start 7");
    }
}
