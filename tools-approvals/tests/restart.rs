//! Restarts, for real: a child process (this test binary again, running [`child`]) pauses a call
//! into a SQLite file, writes the handle's text to a file and is killed with SIGKILL; the
//! call then runs exactly once from another process. A child killed during the resume leaves
//! the call `resuming`, and it never runs again.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tools_approvals::SqliteStore;
use tools_runtime::approvals::{
    ApprovalStore, CallFilter, CallQuery, CallState, CallStatus, PendingHandle, Settle,
};
use tools_runtime::hooks::Approval;
use tools_runtime::{Registration, Scope, ToolCall, ToolRuntime, codes};

use crate::support::{Effect, handle_of, install, lines, runtime};

/// The folder a child works in; set only in the children.
const CHILD_DIR: &str = "TOOLS_APPROVALS_CHILD_DIR";
/// What the child does: `pause` or `resume-and-hang`.
const CHILD_MODE: &str = "TOOLS_APPROVALS_CHILD_MODE";
/// The PostgreSQL connection settings a child keeps its calls in, instead of the folder's
/// SQLite file; set only in the children of the PostgreSQL test.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
const CHILD_PG: &str = "TOOLS_APPROVALS_CHILD_PG";

fn db(dir: &Path) -> PathBuf {
    dir.join("approvals.db")
}
fn side_effects(dir: &Path) -> PathBuf {
    dir.join("side-effects.txt")
}
fn handle_file(dir: &Path) -> PathBuf {
    dir.join("handle.txt")
}

/// A runtime over the SQLite file in a folder, whose `append` writes to the side-effect file
/// there (and hangs after it when asked).
struct Service {
    store: Arc<dyn ApprovalStore>,
    rt: ToolRuntime,
    _scope: Scope,
    _regs: Vec<Registration>,
}

fn service(dir: &Path, hang: bool) -> Service {
    service_on(Arc::new(SqliteStore::open(db(dir)).unwrap()), dir, hang)
}

/// The same over `store`.
fn service_on(store: Arc<dyn ApprovalStore>, dir: &Path, hang: bool) -> Service {
    let rt = runtime(store.clone());
    let scope = rt.scope();
    let regs = install(
        &scope,
        Effect::File {
            path: side_effects(dir),
            hang,
        },
    );
    Service {
        store,
        rt,
        _scope: scope,
        _regs: regs,
    }
}

/// The child's side: run only by the tests below, in a process of its own.
#[tokio::test]
#[ignore = "the child process of the restart tests, which run it"]
async fn child() {
    let (Some(dir), Some(mode)) = (std::env::var_os(CHILD_DIR), std::env::var(CHILD_MODE).ok())
    else {
        return;
    };
    let dir = PathBuf::from(dir);
    let hang = mode == "resume-and-hang";
    let Service { rt, .. } = &match std::env::var(CHILD_PG) {
        #[cfg(feature = "postgres")]
        Ok(conninfo) => service_on(
            Arc::new(
                tools_approvals::PostgresStore::connect(&conninfo)
                    .await
                    .unwrap(),
            ),
            &dir,
            hang,
        ),
        _ => service(&dir, hang),
    };
    match mode.as_str() {
        "pause" => {
            let paused = rt
                .execute(ToolCall::new("c1", "append", json!({"line": "ran c1"})))
                .await;
            let handle = handle_of(&paused);
            // Written whole or not at all: the parent reads it as soon as it exists.
            let tmp = dir.join("handle.tmp");
            std::fs::write(&tmp, handle.to_string()).unwrap();
            std::fs::rename(&tmp, handle_file(&dir)).unwrap();
        }
        "resume-and-hang" => {
            let text = std::fs::read_to_string(handle_file(&dir)).unwrap();
            let handle: PendingHandle = rt.parse_handle(&text).unwrap();
            // The body appends its line, then never returns.
            let _ = rt.resume(&handle, Approval::Approved).await;
        }
        other => panic!("unknown child mode {other}"),
    }
    // Wait to be killed.
    loop {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
}

/// Starts this binary's [`child`] in `mode`.
fn spawn_child(dir: &Path, mode: &str) -> Child {
    spawn_child_with(dir, mode, &[])
}

/// The same, with more variables set for the child.
fn spawn_child_with(dir: &Path, mode: &str, vars: &[(&str, &str)]) -> Child {
    let log = std::fs::File::create(dir.join(format!("child-{mode}.log"))).unwrap();
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "restart::child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DIR, dir)
        .env(CHILD_MODE, mode)
        .envs(vars.iter().copied())
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap()
}

/// Waits until `done` holds, failing if the child exits first or a minute passes.
fn wait_for(child: &mut Child, dir: &Path, mode: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!(
                "the child ({mode}) exited first ({status}):\n{}",
                std::fs::read_to_string(dir.join(format!("child-{mode}.log"))).unwrap_or_default()
            );
        }
        assert!(
            Instant::now() < deadline,
            "the child ({mode}) did not get there in 60 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGKILL, and the child is gone.
fn kill(mut child: Child) {
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status}");
}

/// A child pauses the call and is killed; returns the handle's text it left.
fn pause_in_a_child_and_kill_it(dir: &Path) -> String {
    let mut child = spawn_child(dir, "pause");
    wait_for(&mut child, dir, "pause", || handle_file(dir).exists());
    kill(child);
    std::fs::read_to_string(handle_file(dir)).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_paused_by_a_killed_process_runs_once_after_the_restart() {
    let dir = tempfile::tempdir().unwrap();
    let text = pause_in_a_child_and_kill_it(dir.path());
    assert!(
        lines(&side_effects(dir.path())).is_empty(),
        "nothing ran when the call paused"
    );

    // A new runtime over the same file, in this process.
    let Service { rt, .. } = &service(dir.path(), false);
    let handle: PendingHandle = rt.parse_handle(&text).unwrap();
    assert_eq!(rt.pending_calls(10).await.unwrap(), vec![handle.clone()]);
    let done = rt.resume(&handle, Approval::Approved).await.unwrap();
    assert_eq!(done.value(), Some(&json!("appended ran c1")), "{done:?}");
    assert_eq!(lines(&side_effects(dir.path())), ["ran c1"]);

    let again = rt.resume(&handle, Approval::Approved).await.unwrap_err();
    assert_eq!(again.code(), codes::APPROVAL_ALREADY_RESUMED, "{again}");
    assert_eq!(lines(&side_effects(dir.path())), ["ran c1"], "once only");

    // What the file says, to a third opener.
    let reader = SqliteStore::open(db(dir.path())).unwrap();
    let call = reader.get(&handle.id).await.unwrap().unwrap();
    assert_eq!(
        (call.state, call.outcome.as_deref()),
        (CallState::Done, Some("ok"))
    );
    assert!(rt.pending_calls(10).await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_killed_during_the_resume_leaves_the_call_claimed_and_it_never_runs_again() {
    let dir = tempfile::tempdir().unwrap();
    let text = pause_in_a_child_and_kill_it(dir.path());

    // A second child resumes; its body appends the line and hangs; it is killed there.
    let mut child = spawn_child(dir.path(), "resume-and-hang");
    let child_pid = child.id();
    wait_for(&mut child, dir.path(), "resume-and-hang", || {
        !lines(&side_effects(dir.path())).is_empty()
    });
    kill(child);
    assert_eq!(lines(&side_effects(dir.path())), ["ran c1"]);

    // Its body may have run (here it did): the call is never resumed again.
    let Service { store, rt, .. } = &service(dir.path(), false);
    let handle: PendingHandle = rt.parse_handle(&text).unwrap();
    let err = rt.resume(&handle, Approval::Approved).await.unwrap_err();
    assert_eq!(err.code(), codes::APPROVAL_ALREADY_RESUMED, "{err}");
    assert_eq!(lines(&side_effects(dir.path())), ["ran c1"]);
    let call = store.get(&handle.id).await.unwrap().unwrap();
    assert_eq!((call.state, call.outcome), (CallState::Resuming, None));
    assert!(rt.pending_calls(10).await.unwrap().is_empty());

    // The call is in doubt, and an operator sees it: resuming since when, by whom (the
    // child's default replica name, `host:pid`), and the refusal says so.
    let by = format!(":{child_pid}");
    assert!(err.to_string().contains("resuming since"), "{err}");
    assert!(err.to_string().contains(&by), "{err}");
    let in_doubt = rt
        .paused_calls(CallQuery::new(CallFilter::Resuming, 10))
        .await
        .unwrap();
    assert_eq!(in_doubt.len(), 1);
    assert_eq!(in_doubt[0].handle, handle);
    match &in_doubt[0].status {
        CallStatus::Resuming {
            since_ms: Some(since),
            by: Some(who),
        } => {
            assert!(*since >= handle.created_ms, "{since}");
            assert!(who.ends_with(&by), "{who}");
        }
        other => panic!("{other:?}"),
    }
    // Purging leaves it: its body may have run.
    rt.purge_pending().await.unwrap();
    assert!(store.get(&handle.id).await.unwrap().is_some());

    // Settled by hand as done, with a note; it still never runs.
    let settled = rt
        .settle_pending(&handle.id, Settle::Done, "the line is in the file")
        .await
        .unwrap();
    assert_eq!(
        settled.status,
        CallStatus::Done {
            outcome: None,
            note: Some("the line is in the file".to_owned())
        }
    );
    assert!(settled.settled_ms.is_some());
    let err = rt.resume(&handle, Approval::Approved).await.unwrap_err();
    assert_eq!(err.code(), codes::APPROVAL_ALREADY_RESUMED, "{err}");
    assert!(
        err.to_string()
            .contains("settled by hand: the line is in the file"),
        "{err}"
    );
    let err = rt
        .settle_pending(&handle.id, Settle::Failed, "again")
        .await
        .unwrap_err();
    assert_eq!(err.code(), codes::APPROVAL_NOT_IN_DOUBT, "{err}");
    assert_eq!(lines(&side_effects(dir.path())), ["ran c1"]);
}

/// A replica on PostgreSQL killed while its resumed body runs: the call is in doubt for every
/// other replica, which sees who claimed it and when, never runs it again, and settles it.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_during_a_resume_on_postgres_leaves_the_call_in_doubt() {
    use crate::pg::{Durability, PgServer};

    let dir = tempfile::tempdir().unwrap();
    let server = PgServer::start(Durability::Tests);
    let conninfo = server.database("killed").await;
    let store: Arc<dyn ApprovalStore> = Arc::new(
        tools_approvals::PostgresStore::connect(&conninfo)
            .await
            .unwrap(),
    );
    let Service { rt, .. } = &service_on(store.clone(), dir.path(), false);
    let paused = rt
        .execute(ToolCall::new("c1", "append", json!({"line": "ran c1"})))
        .await;
    let handle = handle_of(&paused);
    std::fs::write(handle_file(dir.path()), handle.to_string()).unwrap();

    let mut child = spawn_child_with(
        dir.path(),
        "resume-and-hang",
        &[(CHILD_PG, conninfo.as_str())],
    );
    let child_pid = child.id();
    wait_for(&mut child, dir.path(), "resume-and-hang", || {
        !lines(&side_effects(dir.path())).is_empty()
    });
    kill(child);

    let err = rt.resume(&handle, Approval::Approved).await.unwrap_err();
    assert_eq!(err.code(), codes::APPROVAL_ALREADY_RESUMED, "{err}");
    let by = format!(":{child_pid}");
    assert!(err.to_string().contains(&by), "{err}");
    let in_doubt = rt
        .paused_calls(CallQuery::new(CallFilter::Resuming, 10))
        .await
        .unwrap();
    assert_eq!(in_doubt.len(), 1, "{in_doubt:?}");
    assert!(
        matches!(&in_doubt[0].status, CallStatus::Resuming { by: Some(who), .. } if who.ends_with(&by)),
        "{in_doubt:?}"
    );
    rt.settle_pending(&handle.id, Settle::Done, "the line is in the file")
        .await
        .unwrap();
    let call = store.get(&handle.id).await.unwrap().unwrap();
    assert_eq!(call.state, CallState::Done);
    assert_eq!(lines(&side_effects(dir.path())), ["ran c1"], "once");
}
