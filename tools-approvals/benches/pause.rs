//! What a pause costs a call, with each store, beside the same call approved inline.
//!
//! One tool (`append`, a trivial body), one pre-execute listener that asks, and an approval
//! service that answers at once: `Approved` for the inline row, `later()` for the store rows,
//! whose call pauses (`execute` writes it: one commit) and is then resumed from the handle's
//! text (`parse_handle`, then `resume`: read, claim, body, finish: two commits). The rows take turns call by call, so drift touches each
//! alike. SQLite in a temporary file (WAL, `synchronous = FULL`), PostgreSQL started by the
//! bench with its default durability (each commit flushed, `fsync` on), over loopback TCP:
//! each commit waits for the disk in both.
//!
//! `cargo bench -p tools-approvals --features postgres --bench pause` (needs `TOOLS_PG_BIN`,
//! as the tests do). Under `cargo test` (no `--bench`) it runs three rounds as a smoke test
//! and prints nothing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../tests/pg.rs"]
mod pg;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tools_approvals::{PostgresStore, SqliteStore};
use tools_runtime::approvals::{ApprovalKey, ApprovalStore, DurableApprovals, PendingHandle};
use tools_runtime::hooks::{Approval, PreDecision};
use tools_runtime::{
    Output, Registration, Scope, ToolCall, ToolDefinition, ToolError, ToolRuntime, codes,
};

/// A runtime whose `append` asks and is answered `answer`; durable over `store` when given.
fn service(
    store: Option<Arc<dyn ApprovalStore>>,
    answer: fn() -> Approval,
) -> (ToolRuntime, Scope, Vec<Registration>) {
    let mut builder = ToolRuntime::builder();
    if let Some(store) = store {
        let key = ApprovalKey::new(b"the bench's key, thirty-two b..").unwrap();
        builder = builder.durable_approvals(DurableApprovals::with_store(store, key));
    }
    let rt = builder.build().unwrap();
    let scope = rt.scope();
    let append = ToolDefinition::builder("append")
        .input_schema(json!({
            "type": "object",
            "properties": {"line": {"type": "string"}},
            "required": ["line"]
        }))
        .output(Output::json(json!({"type": "string"})))
        .execute(|args, _ctx| async move {
            Ok::<Value, ToolError>(json!(format!("appended {}", args["line"])))
        })
        .build()
        .unwrap();
    let regs = vec![
        scope.register(append).unwrap(),
        scope
            .on_pre_execute(|_exec, _| PreDecision::ask("appending needs a person"))
            .unwrap(),
        scope
            .set_approval(move |_exec, _reason| async move { answer() })
            .unwrap(),
    ];
    (rt, scope, regs)
}

fn call(i: usize) -> ToolCall {
    ToolCall::new(
        format!("c{i}"),
        "append",
        json!({"line": format!("line {i}")}),
    )
}

/// The times of one store's row.
#[derive(Default)]
struct Row {
    pause: Vec<Duration>,
    resume: Vec<Duration>,
}

/// Pauses call `i` through `rt` and resumes it; records both times.
async fn pause_and_resume(rt: &ToolRuntime, i: usize, row: &mut Row) {
    let start = Instant::now();
    let paused = rt.execute(call(i)).await;
    row.pause.push(start.elapsed());
    assert_eq!(paused.code(), Some(codes::APPROVAL_PENDING), "{paused:?}");
    // A host keeps the handle's text and reads it back to resume: the tag is checked then.
    let text = paused.pending.unwrap().handle().unwrap().to_string();
    let start = Instant::now();
    let handle: PendingHandle = rt.parse_handle(&text).unwrap();
    let done = rt.resume(&handle, Approval::Approved).await.unwrap();
    row.resume.push(start.elapsed());
    assert_eq!(done.code(), None, "{done:?}");
}

fn median(times: &mut [Duration]) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1e6
}

fn p90(times: &mut [Duration]) -> f64 {
    times.sort();
    times[(times.len() * 9) / 10].as_secs_f64() * 1e6
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let rounds = if bench { 300 } else { 3 };

    let dir = tempfile::tempdir().unwrap();
    let sqlite: Arc<dyn ApprovalStore> =
        Arc::new(SqliteStore::open(dir.path().join("approvals.db")).unwrap());
    let server = pg::PgServer::start(pg::Durability::Defaults);
    let conninfo = server.database("bench").await;
    let postgres: Arc<dyn ApprovalStore> =
        Arc::new(PostgresStore::connect(&conninfo).await.unwrap());

    let inline = service(None, || Approval::Approved);
    let on_sqlite = service(Some(sqlite), Approval::later);
    let on_postgres = service(Some(postgres), Approval::later);

    // Warm each path (statements prepared, pages cached).
    for i in 0..10.min(rounds) {
        assert_eq!(inline.0.execute(call(i)).await.code(), None);
        pause_and_resume(&on_sqlite.0, i, &mut Row::default()).await;
        pause_and_resume(&on_postgres.0, i, &mut Row::default()).await;
    }

    let mut approved = Vec::with_capacity(rounds);
    let (mut lite, mut pg) = (Row::default(), Row::default());
    for i in 0..rounds {
        let start = Instant::now();
        let result = inline.0.execute(call(i)).await;
        approved.push(start.elapsed());
        assert_eq!(result.code(), None, "{result:?}");
        pause_and_resume(&on_sqlite.0, 1_000 + i, &mut lite).await;
        pause_and_resume(&on_postgres.0, 1_000 + i, &mut pg).await;
    }
    if !bench {
        return;
    }

    let inline_us = median(&mut approved);
    println!(
        "`execute` approved inline vs paused into a store and resumed; {rounds} calls each, \
         taking turns (median, p90 in us):"
    );
    println!(
        "  {:<34} {:>10} {:>10} {:>12}",
        "", "median", "p90", "vs inline"
    );
    println!(
        "  {:<34} {:>10.1} {:>10.1} {:>12}",
        "inline approval (no pause)",
        inline_us,
        p90(&mut approved),
        "1.0x"
    );
    for (name, row) in [("SqliteStore", &mut lite), ("PostgresStore", &mut pg)] {
        let mut total: Vec<Duration> = row
            .pause
            .iter()
            .zip(&row.resume)
            .map(|(p, r)| *p + *r)
            .collect();
        for (what, times) in [
            ("execute that pauses", &mut row.pause),
            ("resume", &mut row.resume),
            ("pause + resume", &mut total),
        ] {
            let m = median(times);
            println!(
                "  {:<34} {:>10.1} {:>10.1} {:>11.1}x",
                format!("{name}: {what}"),
                m,
                p90(times),
                m / inline_us
            );
        }
        let added = median(&mut total) - inline_us;
        println!("  {name}: a pause adds {added:.1} us to the call (median)");
    }
}
