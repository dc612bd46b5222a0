//! The Python half of the pre-run analysis (see [`crate::analysis`]): the program goes to
//! the warm zygote, which parses it with the interpreter's own `ast` (`runner/60_analysis.py`
//! `analyse_program`) and answers with the tool uses it found, on a socket of the request's
//! own, and with the program's code compiled from the tree it analysed, which the run takes
//! (a [`crate::PreparedProgram`]) instead of parsing and compiling the program again.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::frames::frame;
use super::{PythonMode, PythonRuntime};
use crate::analysis::{Literal, ProgramAnalysis, ToolUse};
use crate::{CodeFailure, CodeFailureKind, CodeLanguage, PreparedProgram};

/// The longest program analysed (64 KiB, some 1,500 lines); a longer one is not analysed (its
/// set is open), so the zygote, which serves forks in between, is never busy for long (the
/// interpreter's `ast` takes about half a millisecond per 1 KiB here).
pub(crate) const MAX_ANALYSED_BYTES: usize = 64 * 1024;

/// The largest answer read (16 MiB).
const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;

/// How long an analysis may take before the program runs unanalysed.
const ANALYSIS_TIMEOUT: Duration = Duration::from_secs(5);

/// The deepest literal read from the answer.
const MAX_LITERAL_DEPTH: usize = 80;

/// Analyses `program` in the zygote: `None` when it is not analysed (no zygote, too long, the
/// zygote did not answer), the run's own syntax failure when it does not parse.
pub(super) async fn analyse(
    runtime: &PythonRuntime,
    program: &str,
) -> Option<Result<ProgramAnalysis, CodeFailure>> {
    if runtime.inner.mode != PythonMode::Zygote || program.len() > MAX_ANALYSED_BYTES {
        return None;
    }
    let interpreter = runtime.interpreter().await.ok()?;
    let zygote = runtime.zygote(&interpreter).await.ok()?;
    let (host, child) = std::os::unix::net::UnixStream::pair().ok()?;
    host.set_nonblocking(true).ok()?;
    let mut host = tokio::net::UnixStream::from_std(host).ok()?;
    let request = frame(&json!({"program": program}));
    let talk = async move {
        host.write_all(&request).await.ok()?;
        let mut header = [0u8; 4];
        host.read_exact(&mut header).await.ok()?;
        let len = u32::from_be_bytes(header) as usize;
        if len > MAX_ANSWER_BYTES {
            return None;
        }
        let mut body = vec![0u8; len];
        host.read_exact(&mut body).await.ok()?;
        serde_json::from_slice::<Value>(&body).ok()
    };
    let both = async { tokio::join!(zygote.analyse(child.into()), talk) };
    let (served, answer) = tokio::time::timeout(ANALYSIS_TIMEOUT, both).await.ok()?;
    served.ok()?;
    let answer = answer?;
    let mut analysis = read_answer(&answer)?;
    // The program's code, compiled from the tree just analysed: the run takes it instead of
    // parsing and compiling the program again (`runner/60_analysis.py` `_prepared_code` checks it).
    if let Ok(analysis) = &mut analysis
        && let Some(code) = answer.get("code").and_then(Value::as_str)
    {
        analysis.prepared = Some(PreparedProgram {
            language: CodeLanguage::Python,
            work: code.to_owned(),
        });
    }
    Some(analysis)
}

/// The zygote's answer as an analysis.
fn read_answer(answer: &Value) -> Option<Result<ProgramAnalysis, CodeFailure>> {
    if let Some(syntax) = answer.get("syntax") {
        let message = syntax.get("message")?.as_str()?.to_owned();
        let position = |key: &str| {
            syntax
                .get(key)
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
        };
        let failure = CodeFailure::new(CodeFailureKind::Syntax, message, Vec::new())
            .at(position("line"), position("column"));
        return Some(Err(failure));
    }
    let open = answer.get("open")?.as_bool()?;
    let mut uses = Vec::new();
    for found in answer.get("uses")?.as_array()? {
        let [name, line, column, call, args] = found.as_array()?.as_slice() else {
            return None;
        };
        uses.push(ToolUse {
            name: name.as_str()?.to_owned(),
            line: u32::try_from(line.as_u64()?).ok()?,
            column: u32::try_from(column.as_u64()?).ok()?,
            call: call.as_bool()?,
            args: if args.is_null() {
                None
            } else {
                Some(literal(args, 0))
            },
        });
    }
    Some(Ok(ProgramAnalysis::new(uses, open)))
}

/// A literal as `runner/60_analysis.py` `_analysis_literal` writes it; anything else is unknown.
fn literal(value: &Value, depth: usize) -> Literal {
    if depth > MAX_LITERAL_DEPTH {
        return Literal::Unknown;
    }
    let Some(parts) = value.as_array() else {
        return Literal::Unknown;
    };
    match (parts.first().and_then(Value::as_str), parts.get(1)) {
        (Some("n"), None) => Literal::Null,
        (Some("b"), Some(Value::Bool(b))) => Literal::Bool(*b),
        (Some("i"), Some(n)) => n.as_i64().map_or(Literal::Unknown, Literal::Integer),
        (Some("f"), Some(n)) => n.as_f64().map_or(Literal::Unknown, Literal::Number),
        (Some("s"), Some(Value::String(s))) => Literal::String(s.clone()),
        (Some("a"), Some(Value::Array(items))) => {
            Literal::Array(items.iter().map(|i| literal(i, depth + 1)).collect())
        }
        (Some("o"), Some(Value::Array(entries))) => {
            let mut out = Vec::with_capacity(entries.len());
            for entry in entries {
                match entry.as_array().map(Vec::as_slice) {
                    Some([Value::String(key), value]) => {
                        out.push((key.clone(), literal(value, depth + 1)));
                    }
                    _ => return Literal::Unknown,
                }
            }
            Literal::Object(out)
        }
        _ => Literal::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::{Value, json};
    use tokio_util::sync::CancellationToken;

    use super::super::PythonRuntime;
    use super::analyse;
    use crate::{
        CallReply, CodeFailureKind, CodeHost, CodeLanguage, CodeLimits, CodeOutcome, CodeRuntime,
        PreparedProgram,
    };

    /// A host without tools.
    struct NoTools;

    impl CodeHost for NoTools {
        fn tool_names(&self) -> Vec<String> {
            Vec::new()
        }
        fn call(&self, _name: &str, _args: Value, reply: CallReply) {
            reply.send(Ok(Value::Null));
        }
    }

    async fn run(
        runtime: &PythonRuntime,
        program: &str,
        prepared: Option<PreparedProgram>,
    ) -> CodeOutcome {
        runtime
            .run_prepared(
                program,
                prepared,
                Arc::new(NoTools),
                &CodeLimits::default(),
                CancellationToken::new(),
            )
            .await
    }

    #[tokio::test]
    async fn the_run_takes_the_code_the_analysis_compiled_and_only_its_own() {
        let runtime = PythonRuntime::new();
        let analysed = "return 'compiled by the zygote'  # prepared-code test";
        let other = "return 'compiled by the run'  # prepared-code test";
        let Some(Ok(mut analysis)) = analyse(&runtime, analysed).await else {
            panic!("the program was not analysed");
        };
        let prepared = analysis.take_prepared().unwrap();
        assert_eq!(prepared.language(), CodeLanguage::Python);
        let code = prepared.work.clone();
        let (magic, blob) = code.split_once(':').unwrap();

        // The run uses what it is given: here another program's code.
        let done = run(&runtime, other, Some(prepared)).await.unwrap();
        assert_eq!(done.result, Some(json!("compiled by the zygote")));
        // Without it, the run compiles its own text.
        let done = run(&runtime, other, None).await.unwrap();
        assert_eq!(done.result, Some(json!("compiled by the run")));

        // Another interpreter's code, code that does not load, or another language's work is
        // compiled anew.
        for (language, work) in [
            (CodeLanguage::Python, format!("00000000:{blob}")),
            (CodeLanguage::Python, format!("{magic}:not base64!")),
            (CodeLanguage::TypeScript, code.clone()),
        ] {
            let done = run(&runtime, other, Some(PreparedProgram { language, work }))
                .await
                .unwrap();
            assert_eq!(done.result, Some(json!("compiled by the run")));
        }

        // A program that parses but does not compile gets no code; its run reports why.
        let broken = "nonlocal x  # prepared-code test\nreturn 1";
        let Some(Ok(mut analysis)) = analyse(&runtime, broken).await else {
            panic!("the program was not analysed");
        };
        assert_eq!(analysis.take_prepared(), None);
        let failure = run(&runtime, broken, None).await.unwrap_err();
        assert_eq!(failure.kind, CodeFailureKind::Syntax, "{failure:?}");
        assert!(failure.message.contains("nonlocal"), "{}", failure.message);
    }
}
