//! `tools-demo`: the toolkit's demo (see the crate docs of `tools_demo`).
//!
//! ```text
//! tools-demo [--out DIR]
//! ```
//!
//! `--out DIR` is the workspace folder the demo makes fresh (default `target/demo-workspace`);
//! a folder that exists must be empty or one an earlier run made.

#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use tools_demo::DemoError;
use tools_demo::script::{Options, run};
use tools_demo::show::Style;

const USAGE: &str = "usage: tools-demo [--out DIR]\n\n\
    Runs a scripted model turn against four #[tool] tools over a small workspace folder that it\n\
    makes fresh in DIR (default target/demo-workspace), natively and in Code Mode (TypeScript and\n\
    Python), and prints what happens. Colour only on a terminal; NO_COLOR turns it off.";

/// What this process does: the whole demo, or one process of its fifth act.
enum Task {
    Demo(Options),
    ApprovalStep(String, PathBuf),
}

fn options() -> Result<Option<Task>, DemoError> {
    let mut workspace = PathBuf::from("target").join("demo-workspace");
    let mut step = None;
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        match arg.to_str() {
            // One process of the fifth act (the demo starts itself with it).
            Some("--approval-step") => {
                step = args.next().and_then(|s| s.into_string().ok());
                if step.is_none() {
                    return Err(DemoError::Usage(format!(
                        "--approval-step needs `pause` or `resume`\n\n{USAGE}"
                    )));
                }
            }
            Some("--out") => {
                workspace = args
                    .next()
                    .map(PathBuf::from)
                    .ok_or_else(|| DemoError::Usage(format!("--out needs a folder\n\n{USAGE}")))?;
            }
            Some("-h" | "--help") => return Ok(None),
            _ => {
                return Err(DemoError::Usage(format!(
                    "unexpected argument `{}`\n\n{USAGE}",
                    arg.to_string_lossy()
                )));
            }
        }
    }
    if let Some(step) = step {
        return Ok(Some(Task::ApprovalStep(step, workspace)));
    }
    let exe = std::env::current_exe().map_err(|error| DemoError::Io {
        path: PathBuf::from("tools-demo"),
        error,
    })?;
    Ok(Some(Task::Demo(Options {
        workspace,
        style: Style::detect(),
        exe,
    })))
}

fn main() -> ExitCode {
    let task = match options() {
        Ok(Some(task)) => task,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("tools-demo: {error}");
            return ExitCode::from(2);
        }
    };
    // With the `otel` feature, every call of the demo is a span exported over OTLP (the
    // `OTEL_*` variables say where); the guard exports what is left when the demo ends.
    #[cfg(feature = "otel")]
    let _otel = match tools_otel::init("tools-demo") {
        Ok(guard) => guard,
        Err(error) => {
            eprintln!("tools-demo: {error} ({})", error.code());
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("tools-demo: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let done = match task {
        Task::Demo(options) => {
            let mut stdout = std::io::stdout().lock();
            runtime.block_on(run(&options, &mut stdout)).map(|_| ())
        }
        Task::ApprovalStep(step, root) => runtime.block_on(async {
            match step.as_str() {
                "pause" => tools_demo::approvals::pause(&root).await,
                "resume" => {
                    let text = tools_demo::approvals::resume(&root).await?;
                    println!("{text}");
                    Ok(())
                }
                other => Err(DemoError::Usage(format!(
                    "--approval-step takes `pause` or `resume`, not `{other}`"
                ))),
            }
        }),
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("tools-demo: {error} ({})", error.code());
            ExitCode::FAILURE
        }
    }
}
