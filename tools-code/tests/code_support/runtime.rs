//! The Code Mode runtimes under test, and the helpers that run a program on any of them.
//!
//! [`TestRuntime`] is what a runtime brings to the tests: how the suite builds it and what
//! "healthy" means for it. The helpers below are generic over it, so `code_conformance` runs
//! one case against both runtimes and the per-runtime modules use the same helpers.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tools_code::{
    CodeCompletion, CodeFailure, CodeFailureKind, CodeLanguage, CodeLimits, CodeOutcome,
    CodeRuntime,
};

use super::{TestHost, deadline_limits, hostile_limits, ordinary_limits, shared};

/// A Code Mode runtime as the tests use it.
pub trait TestRuntime: CodeRuntime + Sized {
    /// The language its programs are written in.
    const LANGUAGE: CodeLanguage;

    /// The runtime a test runs its programs on.
    fn for_tests() -> Self;

    /// Asserts that the next run works and that no earlier run left anything behind.
    async fn assert_healthy(&self);

    /// `typescript` or `python`, whichever is this runtime's: the text of a case (a program,
    /// rarely an expectation) that is written once per language.
    fn pick<T>(typescript: T, python: T) -> T {
        match Self::LANGUAGE {
            CodeLanguage::TypeScript => typescript,
            CodeLanguage::Python => python,
        }
    }
}

/// Runs `program` against `host`; a run that does not end within 60 s fails the test (a hang
/// is a failure, not a stuck test).
pub async fn run_with<R: CodeRuntime>(
    rt: &R,
    host: &Arc<TestHost>,
    program: &str,
    limits: &CodeLimits,
) -> CodeOutcome {
    let run = rt.run(
        program,
        shared(host.clone()),
        limits,
        CancellationToken::new(),
    );
    tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the run did not end")
}

/// The completion of `program` under [`ordinary_limits`]; panics with the failure otherwise.
pub async fn ok<R: CodeRuntime>(rt: &R, program: &str) -> CodeCompletion {
    let host = TestHost::new();
    match run_with(rt, &host, program, &ordinary_limits()).await {
        Ok(done) => done,
        Err(failure) => panic!("expected a completion, got {failure:?}"),
    }
}

/// The failure of `program` under `limits`; panics with the completion otherwise.
pub async fn fail<R: CodeRuntime>(rt: &R, program: &str, limits: &CodeLimits) -> CodeFailure {
    let host = TestHost::new();
    match run_with(rt, &host, program, limits).await {
        Ok(done) => panic!("expected a failure, got {done:?}"),
        Err(failure) => failure,
    }
}

/// Runs a hostile `program` on a fresh runtime under [`deadline_limits`] when the deadline must
/// stop it, [`hostile_limits`] otherwise: see [`hostile_with`].
pub async fn hostile<R: TestRuntime>(program: &str, kind: CodeFailureKind) -> CodeFailure {
    let limits = if kind == CodeFailureKind::Timeout {
        deadline_limits()
    } else {
        hostile_limits()
    };
    hostile_with::<R>(program, kind, &limits).await
}

/// Runs a hostile `program` on a fresh runtime, asserts that it fails as `kind` and that the
/// runtime is healthy after it, and returns the failure.
pub async fn hostile_with<R: TestRuntime>(
    program: &str,
    kind: CodeFailureKind,
    limits: &CodeLimits,
) -> CodeFailure {
    let rt = R::for_tests();
    let failure = fail(&rt, program, limits).await;
    assert_eq!(
        failure.kind,
        kind,
        "{}: {} ({} log lines)",
        failure.kind,
        failure.message,
        failure.logs.len()
    );
    rt.assert_healthy().await;
    failure
}

/// Runs each program under [`hostile_limits`] and asserts that it fails as `kind` with a message
/// that contains its needle; then that the runtime is healthy.
pub async fn assert_each_fails<R: TestRuntime>(
    rt: &R,
    kind: CodeFailureKind,
    cases: &[(&str, &str)],
) {
    for &(program, needle) in cases {
        let failure = fail(rt, program, &hostile_limits()).await;
        assert_eq!(failure.kind, kind, "{program}");
        assert!(
            failure.message.contains(needle),
            "{program}: {}",
            failure.message
        );
    }
    rt.assert_healthy().await;
}

/// The outcome of a program that tried to send a refused value (`label` names it) in a call's
/// arguments, logged the error it caught, then returned the value: the run fails as an invalid
/// result whose message names `result_path` and `needle`; its one log line, the call's error,
/// starts with `args_prefix` and names `needle`; and the call never reached the host.
pub fn assert_refused_both_ways(
    label: &str,
    outcome: CodeOutcome,
    host: &TestHost,
    needle: &str,
    result_path: &str,
    args_prefix: &str,
) {
    let failure = match outcome {
        Ok(done) => panic!("{label}: {done:?}"),
        Err(failure) => failure,
    };
    assert_eq!(
        failure.kind,
        CodeFailureKind::InvalidResult,
        "{label}: {failure:?}"
    );
    assert!(
        failure.message.contains(needle),
        "{label}: {}",
        failure.message
    );
    assert!(
        failure.message.contains(result_path),
        "{label}: {}",
        failure.message
    );
    assert_eq!(failure.logs.len(), 1, "{label}: {failure:?}");
    assert!(
        failure.logs[0].starts_with(args_prefix),
        "{label}: {:?}",
        failure.logs
    );
    assert!(
        failure.logs[0].contains(needle),
        "{label}: {:?}",
        failure.logs
    );
    assert_eq!(host.calls(), 0, "{label}");
}

/// The messages a program collected (`result["messages"]`) while it sent bad arguments one call
/// each, then one good call (`result["fine"]`): each message starts with the expected one, in
/// order, the good call's arguments came back, and only the good call reached the host.
/// Returns the messages.
pub fn assert_only_the_valid_call_was_sent<'a>(
    result: &'a serde_json::Value,
    host: &TestHost,
    expected: &[&str],
) -> Vec<&'a str> {
    let messages: Vec<&str> = result["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    for (message, expected) in messages.iter().zip(expected) {
        assert!(message.starts_with(expected), "{message} vs {expected}");
    }
    assert_eq!(messages.len(), expected.len());
    assert_eq!(
        result["fine"],
        serde_json::json!({ "ok": [0, 1.5, "", false, null] })
    );
    assert_eq!(host.calls(), 1, "only the valid call reached the host");
    messages
}

/// A string the runtime cut: it ends its quote with the marker and the count of bytes left
/// out, and the whole message stays short.
pub fn assert_cut(message: &str, left_out: usize) {
    assert!(
        message.contains(&format!("\u{2026} ({left_out} more bytes)")),
        "{}",
        &message[..message.len().min(600)]
    );
    assert!(message.len() < 1200, "{} bytes", message.len());
}

#[cfg(feature = "typescript")]
mod typescript {
    use serde_json::json;
    use tools_code::{CodeLanguage, TypeScriptRuntime};

    use super::{TestRuntime, ok};

    impl TestRuntime for TypeScriptRuntime {
        const LANGUAGE: CodeLanguage = CodeLanguage::TypeScript;

        /// A pool of one thread, so that a worker added or left stuck shows.
        fn for_tests() -> Self {
            TypeScriptRuntime::with_max_threads(1)
        }

        /// The next run works and the pool still has its single worker.
        async fn assert_healthy(&self) {
            let done = ok(self, "const x: number = 20; return x + 22;").await;
            assert_eq!(done.result, Some(json!(42)));
            assert_eq!(
                self.threads(),
                1,
                "the pool should still have exactly one worker"
            );
        }
    }
}

#[cfg(feature = "python")]
mod python {
    use std::time::Duration;

    use serde_json::json;
    use tools_code::{CodeLanguage, PythonMode, PythonRuntime};

    use super::super::children_of;
    use super::{TestRuntime, ok};

    impl TestRuntime for PythonRuntime {
        const LANGUAGE: CodeLanguage = CodeLanguage::Python;

        /// The default runtime: a zygote, sandboxed.
        fn for_tests() -> Self {
            PythonRuntime::new()
        }

        /// The next run works and the zygote has no child left behind: its only children are
        /// the spares waiting for the next runs. A finished run's child is released at once and
        /// reaped by the zygote as soon as it has died, so this waits (up to 5 s) for that.
        async fn assert_healthy(&self) {
            let done = ok(self, "x: int = 20\nreturn x + 22").await;
            assert_eq!(done.result, Some(json!(42)));
            if self.mode() == PythonMode::Zygote {
                let zygote = self.zygote_pid().await.expect("the zygote is running");
                let mut left = Vec::new();
                for _ in 0..500 {
                    let spares = self.spare_pids().await;
                    assert!(!spares.is_empty(), "no spare waits for the next run");
                    let children = children_of(zygote);
                    for spare in &spares {
                        assert!(
                            children.contains(spare),
                            "the spare {spare} is not a child of the zygote: {children:?}"
                        );
                    }
                    left = children
                        .into_iter()
                        .filter(|p| !spares.contains(p))
                        .collect();
                    if left.is_empty() {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                panic!("a run child was left behind: {left:?}");
            }
        }
    }
}
