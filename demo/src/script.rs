//! The demo's script: the model's turns, run and printed act by act.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tools_code::{CodeMode, PythonRuntime, RecordingSink, SessionEvent, TypeScriptRuntime};
use tools_codegen::golden::{Golden, GoldenFile};
use tools_runtime::cards::ResultRecord;
use tools_runtime::{
    ContentBlock, ExecutionMode, PresentationMode, ToolCall, ToolDefinition, ToolExecutionResult,
};

use crate::show::{Style, call_card, result_card};
use crate::workspace::{BodySpan, FILES, Workspace};
use crate::{DemoError, Setup, setup, tools};

/// How the demo runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// The workspace folder (made fresh).
    pub workspace: PathBuf,
    /// Colours.
    pub style: Style,
    /// The demo's own binary, which the fifth act starts twice (one process pauses a call,
    /// another resumes it).
    pub exe: PathBuf,
}

/// How a run went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// Whether the Python part was skipped (no interpreter).
    pub python_skipped: bool,
}

/// The TypeScript program of the second act.
pub const TYPESCRIPT_PROGRAM: &str = r##"// Read three files at once: the calls overlap.
const [readme, lib, notes] = await Promise.all([
  tools.read({ path: "README.md" }),
  tools.read({ path: "src/lib.rs" }),
  tools.read({ path: "notes.txt" }),
]);
// A path outside the workspace: the guard refuses it and the program carries on.
let outside: string = "read";
try {
  await tools.read({ path: "../secret.txt" });
} catch (e) {
  if (!(e instanceof ToolCallError)) throw e;
  outside = `refused: ${e.message}`;
}
const todos = await tools.search({ pattern: "TODO" });
const summary = [
  "# Summary",
  "",
  ...[readme, lib, notes].map((f) => `- ${f.path}: ${f.total_lines} lines`),
  `- ${todos.total} open to-dos`,
  "",
].join("\n");
await tools.write({ path: "SUMMARY.md", content: summary });
console.log(`summarised ${[readme, lib, notes].length} files`);
return { todos: todos.matches.map((m) => `${m.path}:${m.line}`), outside };
"##;

/// The Python program of the third act: the same, in Python.
pub const PYTHON_PROGRAM: &str = r##"import asyncio

# Read three files at once: the calls overlap.
readme, lib, notes = await asyncio.gather(
    tools.read({"path": "README.md"}),
    tools.read({"path": "src/lib.rs"}),
    tools.read({"path": "notes.txt"}),
)
# A path outside the workspace: the guard refuses it and the program carries on.
try:
    await tools.read({"path": "../secret.txt"})
    outside = "read"
except ToolCallError as e:
    outside = f"refused: {e.message}"
todos = await tools.search({"pattern": "TODO"})
lines = ["# Summary", ""]
lines += [f"- {f['path']}: {f['total_lines']} lines" for f in (readme, lib, notes)]
lines += [f"- {todos['total']} open to-dos", "- checked again from Python", ""]
await tools.write({"path": "SUMMARY.md", "content": "\n".join(lines)})
print(f"summarised {len((readme, lib, notes))} files")
return {"todos": [f"{m['path']}:{m['line']}" for m in todos["matches"]], "outside": outside}
"##;

/// The model's native turn: seven calls, in its order.
pub fn native_turn() -> Vec<(&'static str, Value)> {
    vec![
        ("read", json!({"path": "README.md"})),
        ("read", json!({"path": "src/lib.rs", "offset": 6})),
        ("search", json!({"pattern": "TODO"})),
        (
            "write",
            json!({"path": "notes.txt", "content": "- the lamp starts off\n- TODO: remember the last state\n- the switch is `Lamp::toggle` in src/lib.rs\n"}),
        ),
        ("shell", json!({"command": "ls"})),
        ("shell", json!({"command": "wc -l notes.txt src/lib.rs"})),
        ("read", json!({"path": "../secret.txt"})),
    ]
}

/// Writes text lines with a style.
pub(crate) struct Printer<'a> {
    out: &'a mut dyn Write,
    pub(crate) style: Style,
}

impl Printer<'_> {
    pub(crate) fn line(&mut self, text: impl AsRef<str>) -> Result<(), DemoError> {
        writeln!(self.out, "{}", text.as_ref())?;
        Ok(())
    }

    pub(crate) fn lines(&mut self, indent: &str, lines: &[String]) -> Result<(), DemoError> {
        for line in lines {
            self.line(format!("{indent}{line}"))?;
        }
        Ok(())
    }

    pub(crate) fn heading(&mut self, text: &str) -> Result<(), DemoError> {
        self.line("")?;
        let rule = "═".repeat(text.chars().count() + 4);
        let style = self.style;
        self.line(style.cyan(&rule))?;
        self.line(style.heading(&format!("  {text}")))?;
        self.line(style.cyan(&rule))
    }

    pub(crate) fn sub(&mut self, text: &str) -> Result<(), DemoError> {
        self.line("")?;
        let style = self.style;
        self.line(style.bold(&format!("── {text}")))
    }
}

fn ms(d: Duration) -> String {
    format!("{} ms", d.as_millis())
}

/// Runs the whole demo, printing to `out`.
///
/// # Errors
///
/// When the workspace cannot be made, the registry refuses the setup, or `out` fails.
pub async fn run(options: &Options, out: &mut dyn Write) -> Result<Outcome, DemoError> {
    let style = options.style;
    let mut p = Printer { out, style };
    let ws = Arc::new(Workspace::create(&options.workspace)?);
    let definitions: BTreeMap<String, ToolDefinition> = tools::definitions()?
        .into_iter()
        .map(|d| (d.name().to_owned(), d))
        .collect();

    p.line(style.bold("tools-demo: a scripted model turn against four #[tool] tools"))?;
    p.line("No network, no API key: the model's calls and programs are written out below.")?;
    p.line(format!("workspace: {}", options.workspace.display()))?;
    for (path, text) in FILES {
        let lines = crate::show::count(text.lines().count() as u64, "line");
        p.line(style.dim(&format!("  {path} ({lines})")))?;
    }

    native(&mut p, &ws, &definitions).await?;

    let sink = RecordingSink::new();
    let ts = setup(
        Some(CodeMode::new(TypeScriptRuntime::new()).events(sink.clone())),
        PresentationMode::Code,
        Some(ws.clone()),
    )?;
    p.heading("2. Code Mode, TypeScript: the same agent, presented as code")?;
    code_act(&mut p, &ts, &sink, &definitions, "ts-1", TYPESCRIPT_PROGRAM).await?;
    drop(ts);

    p.heading("3. Code Mode, Python: the same program in Python")?;
    let python = PythonRuntime::new();
    let python_skipped = match python.warm_up().await {
        Err(failure) => {
            p.line(style.yellow(&format!(
                "SKIPPED: no Python interpreter (python3 on PATH, or TOOLS_PYTHON): {}",
                failure.message
            )))?;
            true
        }
        Ok(()) => {
            let sink = RecordingSink::new();
            let py = setup(
                Some(CodeMode::new(python).events(sink.clone())),
                PresentationMode::Code,
                Some(ws.clone()),
            )?;
            code_act(&mut p, &py, &sink, &definitions, "py-1", PYTHON_PROGRAM).await?;
            false
        }
    };

    generated(&mut p, ws.root())?;
    approvals_act(&mut p, ws.root(), &options.exe).await?;
    crate::mcp_act::mcp_act(&mut p, &ws).await?;
    Ok(Outcome { python_skipped })
}

async fn native(
    p: &mut Printer<'_>,
    ws: &Arc<Workspace>,
    definitions: &BTreeMap<String, ToolDefinition>,
) -> Result<(), DemoError> {
    let style = p.style;
    let setup = setup(None, PresentationMode::Native, Some(ws.clone()))?;
    p.heading("1. Native tools: one model turn, seven calls")?;

    let assembly = setup.runtime.assemble(setup.agent.key())?;
    p.sub("The prompt offers the tools as native function definitions")?;
    for tool in &assembly.tools {
        let bytes = serde_json::to_string(&**tool).map_or(0, |s| s.len());
        p.line(format!(
            "  {:<8} {}",
            tool.name,
            style.dim(&format!("{bytes} bytes of definition"))
        ))?;
    }

    let calls: Vec<ToolCall> = native_turn()
        .into_iter()
        .enumerate()
        .map(|(i, (name, args))| {
            ToolCall::new(format!("call-{}", i + 1), name, args).with_agent(setup.agent.key())
        })
        .collect();
    p.sub("The model's turn, and how each call may be scheduled (execution_mode)")?;
    for (i, call) in calls.iter().enumerate() {
        let mode = match setup.runtime.execution_mode(call) {
            ExecutionMode::Parallel => style.green("parallel "),
            ExecutionMode::Exclusive => style.yellow("exclusive"),
        };
        p.line(format!(
            "  [{}] {mode}  {} {}",
            i + 1,
            call.name,
            style.dim(&call.arguments.to_string())
        ))?;
    }

    let ids: Vec<String> = calls.iter().map(|c| c.call_id.clone()).collect();
    let names: Vec<String> = calls.iter().map(|c| c.name.clone()).collect();
    let args: Vec<Arc<Value>> = calls.iter().map(|c| c.arguments.clone()).collect();
    let started = Instant::now();
    let results = setup.runtime.execute_batch(calls, 4).await;
    let took = started.elapsed();

    p.sub(&format!(
        "execute_batch ran them in {} (the reads, the search and the shell each wait {} on purpose)",
        ms(took),
        ms(crate::workspace::LATENCY)
    ))?;
    let spans = ws.spans();
    let number = |id: &str| ids.iter().position(|i| i == id).map(|n| n + 1);
    for (i, id) in ids.iter().enumerate() {
        let line = match spans.iter().find(|s| &s.call_id == id) {
            None => style.red(&format!(
                "never ran: {}",
                results.get(i).and_then(|r| r.code()).unwrap_or("no result")
            )),
            Some(span) => {
                let with: Vec<String> = overlapping(span, &spans)
                    .into_iter()
                    .filter_map(|other| number(&other.call_id))
                    .map(|n| format!("[{n}]"))
                    .collect();
                let how = if with.is_empty() {
                    style.yellow("ran alone")
                } else {
                    style.green(&format!("overlapped {}", with.join(" ")))
                };
                format!("{how}  {}", style.dim(&format!("body {}", ms(span.took))))
            }
        };
        p.line(format!("  [{}] {:<7} {line}", i + 1, names[i]))?;
    }

    p.sub("Each call and its result, drawn through the tool's own cards")?;
    for (i, result) in results.iter().enumerate() {
        let Some(def) = definitions.get(&names[i]) else {
            continue;
        };
        let call = call_card(&def.present_call(&args[i]), style);
        p.line("")?;
        if let Some((first, rest)) = call.split_first() {
            p.line(format!("  [{}] {first}", i + 1))?;
            p.lines("      ", rest)?;
        }
        approvals(p, &setup, &ids[i], "      ")?;
        if let Some(code) = result.code() {
            p.line(format!("      {}", style.red(&format!("({code})"))))?;
        }
        p.lines("      ", &result_lines(def, &args[i], result, style))?;
    }
    Ok(())
}

fn approvals(
    p: &mut Printer<'_>,
    setup: &Setup,
    call_id: &str,
    indent: &str,
) -> Result<(), DemoError> {
    let style = p.style;
    for asked in setup.asked_by(call_id) {
        let answer = match asked.answer {
            tools_runtime::hooks::Approval::Approved => style.green("approved"),
            tools_runtime::hooks::Approval::Denied { .. } => style.red("denied"),
            tools_runtime::hooks::Approval::Deferred { .. } => style.yellow("deferred"),
        };
        p.line(format!(
            "{indent}{} \"{}\" → {answer} {}",
            style.yellow("? approval asked:"),
            asked.reason.as_deref().unwrap_or(""),
            style.dim("(the demo's scripted answer)")
        ))?;
    }
    Ok(())
}

fn result_lines(
    def: &ToolDefinition,
    args: &Value,
    result: &ToolExecutionResult,
    style: Style,
) -> Vec<String> {
    let record = ResultRecord {
        content: &result.content,
        is_error: result.is_error(),
        meta: result.meta.as_ref(),
    };
    result_card(&def.present_result(args, &record), record.is_error, style)
}

/// The spans that overlapped `span` (other than itself), in start order.
fn overlapping<'a>(span: &BodySpan, spans: &'a [BodySpan]) -> Vec<&'a BodySpan> {
    let mut with: Vec<&BodySpan> = spans
        .iter()
        .filter(|o| o.call_id != span.call_id && o.start < span.end && span.start < o.end)
        .collect();
    with.sort_by_key(|o| o.start);
    with
}

/// One sub-call as the session events tell it.
#[derive(Debug, Default)]
struct SubCall {
    tool: String,
    arguments: Value,
    content: Vec<ContentBlock>,
    is_error: bool,
    finished: bool,
}

async fn code_act(
    p: &mut Printer<'_>,
    setup: &Setup,
    sink: &RecordingSink,
    definitions: &BTreeMap<String, ToolDefinition>,
    call_id: &str,
    program: &str,
) -> Result<(), DemoError> {
    let style = p.style;
    let assembly = setup.runtime.assemble(setup.agent.key())?;
    p.sub("The prompt the agent's model receives (assemble)")?;
    p.line(style.dim("  section            order    bytes"))?;
    for section in &assembly.sections {
        p.line(format!(
            "  {:<18} {:>5} {:>8}",
            section.id,
            section.order,
            section.text.len()
        ))?;
    }
    for tool in &assembly.tools {
        let bytes = serde_json::to_string(&**tool).map_or(0, |s| s.len());
        p.line(format!(
            "  tool offered: {} {}",
            style.bold(&tool.name),
            style.dim(&format!("({bytes} bytes of definition)"))
        ))?;
    }

    p.sub("The model's program, sent as a run_code call")?;
    for (i, line) in program.lines().enumerate() {
        p.line(format!(
            "  {} {line}",
            style.dim(&format!("{:>3} │", i + 1))
        ))?;
    }

    let call = ToolCall::new(
        call_id,
        "run_code",
        json!({"code": program, "description": "Summarise the workspace"}),
    )
    .with_agent(setup.agent.key());
    let started = Instant::now();
    let result = setup.runtime.execute(call).await;
    let took = started.elapsed();

    p.sub("Its sub-calls, from the session events, each through its tool's cards")?;
    let mut subs: BTreeMap<u64, SubCall> = BTreeMap::new();
    for event in sink.take() {
        let n = event
            .id()
            .rsplit_once(":code:")
            .and_then(|(_, n)| n.parse().ok())
            .unwrap_or(0);
        let entry = subs.entry(n).or_default();
        match event {
            SessionEvent::CodeDispatchStart {
                tool, arguments, ..
            } => {
                entry.tool = tool;
                entry.arguments = (*arguments).clone();
            }
            SessionEvent::CodeDispatch {
                content, is_error, ..
            } => {
                entry.content = content;
                entry.is_error = is_error;
                entry.finished = true;
            }
            _ => {}
        }
    }
    let outcome = if result.is_error() {
        style.red("failed")
    } else {
        style.green("ok")
    };
    p.line(format!(
        "  {} {call_id}  \"Summarise the workspace\"  {outcome} {}",
        style.bold("run_code"),
        style.dim(&format!("in {}", ms(took)))
    ))?;
    let count = subs.len();
    for (i, (n, sub)) in subs.iter().enumerate() {
        let last = i + 1 == count;
        let (branch, stem) = if last {
            ("└─", "   ")
        } else {
            ("├─", "│  ")
        };
        let indent = format!("  {stem}   ");
        let Some(def) = definitions.get(&sub.tool) else {
            continue;
        };
        let call = call_card(&def.present_call(&sub.arguments), style);
        if let Some((first, rest)) = call.split_first() {
            p.line(format!(
                "  {branch} {} {first}",
                style.dim(&format!("#{n}"))
            ))?;
            p.lines(&indent, rest)?;
        }
        approvals(p, setup, &format!("{call_id}:code:{n}"), &indent)?;
        if !sub.finished {
            p.line(format!(
                "{indent}{}",
                style.dim("(still queued when the run ended)")
            ))?;
            continue;
        }
        let record = ResultRecord {
            content: &sub.content,
            is_error: sub.is_error,
            meta: None,
        };
        let card = result_card(
            &def.present_result(&sub.arguments, &record),
            sub.is_error,
            style,
        );
        p.lines(&indent, &card)?;
    }

    p.sub("What the model reads back")?;
    let text = result.text();
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            if result.is_error() {
                style.red(l)
            } else {
                l.to_owned()
            }
        })
        .collect();
    p.lines("  ", &lines)
}

/// Runs `tools-demo --approval-step <step> --out <root>`: one process of the fifth act.
fn approval_step(exe: &Path, step: &str, root: &Path) -> Result<std::process::Output, DemoError> {
    std::process::Command::new(exe)
        .args([
            "--approval-step".as_ref(),
            step.as_ref(),
            "--out".as_ref(),
            root.as_os_str(),
        ])
        .output()
        .map_err(|error| DemoError::Io {
            path: exe.to_owned(),
            error,
        })
}

async fn approvals_act(p: &mut Printer<'_>, root: &Path, exe: &Path) -> Result<(), DemoError> {
    use crate::approvals::{HANDLE_FILE, STORE_FILE, WRITTEN, WRITTEN_TEXT};
    let style = p.style;
    p.heading("5. An approval that outlives its process: one process asks, another resumes")?;
    let first = approval_step(exe, "pause", root)?;
    if !first.status.success() {
        return Err(DemoError::Approval(format!(
            "the pausing process failed: {}",
            String::from_utf8_lossy(&first.stderr)
        )));
    }
    p.line(format!(
        "  process 1 asked to write {WRITTEN}; its approval service answered {}",
        style.yellow("later")
    ))?;
    p.line(format!(
        "  the call was written to {STORE_FILE}, its handle to {HANDLE_FILE}, and the process exited"
    ))?;
    p.line(format!(
        "  {WRITTEN} exists now: {}",
        root.join(WRITTEN).exists()
    ))?;
    p.sub("What a reviewer reads on the handle (an HMAC binds it to exactly this call)")?;
    p.lines("  ", &crate::approvals::review(root)?)?;
    p.sub("A person approves; process 2 resumes the call from the file")?;
    let second = approval_step(exe, "resume", root)?;
    if !second.status.success() {
        return Err(DemoError::Approval(format!(
            "the resuming process failed: {}",
            String::from_utf8_lossy(&second.stderr)
        )));
    }
    p.line(format!("  {}", style.green("resumed; the write's result:")))?;
    let result: Vec<String> = String::from_utf8_lossy(&second.stdout)
        .trim_end()
        .lines()
        .map(str::to_owned)
        .collect();
    p.lines("    ", &result)?;
    let written = std::fs::read_to_string(root.join(WRITTEN)).unwrap_or_default();
    p.line(format!(
        "  {WRITTEN} holds what was reviewed: {}",
        written == WRITTEN_TEXT
    ))?;
    let third = approval_step(exe, "resume", root)?;
    let refused = String::from_utf8_lossy(&third.stderr);
    let code = tools_runtime::codes::APPROVAL_ALREADY_RESUMED;
    if third.status.success() || !refused.contains(code) {
        return Err(DemoError::Approval(format!(
            "a second resume was not refused as already resumed: {refused}"
        )));
    }
    p.line(format!(
        "  process 3 tries the same handle again: {}",
        style.red(&format!("refused ({code}): a call runs once"))
    ))?;
    p.line(format!(
        "  the store says: {}",
        crate::approvals::stored_state(root).await?
    ))?;
    Ok(())
}

fn generated(p: &mut Printer<'_>, root: &Path) -> Result<(), DemoError> {
    let style = p.style;
    p.heading("4. The SDKs and docs those programs were written against")?;
    let catalog = crate::catalog()?;
    let dir = root.join("generated");
    Golden::new(&dir).check_with(&catalog, true)?;
    for file in [
        GoldenFile::Sdk(tools_codegen::Language::TypeScript),
        GoldenFile::Sdk(tools_codegen::Language::Python),
        GoldenFile::Docs,
    ] {
        let path = dir.join(file.file_name());
        let bytes = std::fs::metadata(&path)
            .map_err(|error| DemoError::Io {
                path: path.clone(),
                error,
            })?
            .len();
        p.line(format!(
            "  {}  {}",
            path.display(),
            style.dim(&format!("{bytes} bytes"))
        ))?;
    }
    p.line(
        style.dim(
            "  Keep such files in git and test them: Golden::new(dir).assert_current(&catalog)",
        ),
    )?;
    p.line(style.dim(
        "  fails when the tools change without them (TOOLS_CODEGEN_UPDATE=1 rewrites them).",
    ))?;
    Ok(())
}
