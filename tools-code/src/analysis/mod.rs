//! The pre-run analysis of a `run_code` program: the tool calls it can make, found before it
//! runs, so that a program that is provably wrong is refused without running and policy can
//! judge a program once for everything it may do.
//!
//! # What is found
//!
//! The program is parsed (TypeScript with the swc parser the runtime strips types with; Python
//! with the interpreter's own `ast`, in the runtime's warm zygote) and every place it names a
//! tool is a [`ToolUse`]: `tools.name(...)`, `tools["name"](...)`, `callTool("name", ...)`
//! (TypeScript) and a plain reference such as `const read = tools.read_file`. An alias
//! declared once and never reassigned (`const t = tools; t.read_file(...)`) is followed. Calls
//! inside callbacks count like any other; comments and strings that merely mention a tool do
//! not.
//!
//! The result is [`MayCall`]: the closed set of tools named, or open when the program reaches
//! tools in a way the analysis does not follow: a computed name (`tools[x]`, `callTool(x)`),
//! `tools` handed to anything but a member call (`f(tools)`, `const {a} = tools`), a rebound
//! `tools`/`callTool`/alias, and forms that can reach the global object or the `Function`
//! constructor (`globalThis`, `this`, `eval`, `Function`, `.constructor`, `with`; Python:
//! `getattr`, `globals`, `vars`, `eval`, `exec`, `__import__`, dunder attributes). A program the
//! analysis cannot read (deeper than [`MAX_ANALYSIS_NESTING`], a Python program over 64 KiB, or
//! a Python runtime without a zygote) is open too; so is every program under
//! [`CodeMode::pre_run_analysis(false)`](super::CodeMode::pre_run_analysis).
//!
//! # Cost
//!
//! The TypeScript analysis reads the tree the run's own check parses (the run then takes the
//! stripped text instead of stripping the program again), so what it adds to a run is its two
//! passes over the tree and the judging, on the caller's thread: for a 200-line program, tens
//! of microseconds against a run of more than a millisecond (`benches/analysis.rs` prints it).
//! The passes key their tables by swc's interned names, and a name the program uses many times
//! is looked up in the registry once. The Python analysis is a round trip to the zygote, where
//! the interpreter's `ast` is slower (milliseconds for a 200-line program); the zygote then
//! compiles the tree it analysed, and the run takes that code instead of parsing and compiling
//! the program again, so there too what the analysis adds is its walk (and the round trip).
//! Both languages keep this work in one bounded place, by language and the program's exact
//! text (`code/prepared.rs`).
//!
//! The bridge holds a program to a closed set: a call to a tool outside it fails in the program
//! (it can only happen through a form the analysis missed), so a listener that approves a
//! program by its `may_call` approves what actually runs. Each call still goes through the
//! pipeline on its own.
//!
//! # What is refused
//!
//! Only what is provably wrong, each with its line and column, and nothing of the program runs
//! (code [`CODE_NOT_RUN`], message starting "the program was not run"):
//!
//! - a direct call of a tool that is not in the SDK (with the closest names); a reference that
//!   is not a call (`if (tools.maybe)`, `tools.maybe?.()`) is never refused;
//! - a literal argument object that violates the tool's input schema: a fully literal object is
//!   checked by the tool's own validator (so every rule of the schema applies); an object with
//!   computed values is checked for missing required properties, unexpected properties of a
//!   closed object, and literals of the wrong type. An object with a spread, computed keys,
//!   methods or accessors, and spread arguments, are never checked. Raw definitions (which
//!   validate their own input) are not checked.
//!
//! A program that does not parse is reported exactly as the run would report it
//! (`CODE_RUN_FAILED`, `code run failed (syntax): ...`).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use tracing::Instrument as _;

use serde_json::{Map, Value};

#[cfg(feature = "typescript")]
use super::CodeLanguage;
use super::mode::{CODE_RUN_FAILED, CodeMode};
use crate::MayCall;
use crate::may_call::Prepared;
use tools_runtime::definition::RESERVED_NAMES;
use tools_runtime::error::ExecutionError;
use tools_runtime::{
    Extensions, PresentationMode, ScopeKey, ToolDefinition, ToolError, ToolRunContext, ToolRuntime,
};

#[cfg(feature = "typescript")]
pub(crate) mod typescript;

/// The stable code of a program refused before it ran.
pub const CODE_NOT_RUN: &str = "CODE_NOT_RUN";

/// How deep a program may nest (brackets, operator chains) and still be analysed; a deeper
/// program is not analysed (its set is open) and runs under the runtime's own limits. The
/// analysis runs on the caller's thread, whose stack is smaller than the runtime's workers'.
pub const MAX_ANALYSIS_NESTING: usize = 64;

/// The most problems a refusal lists.
const MAX_PROBLEMS: usize = 10;

/// A literal argument as far as the analysis knows it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Literal {
    /// A value computed at run time.
    Unknown,
    /// `null` / `None`.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integral number.
    Integer(i64),
    /// Any other finite number.
    Number(f64),
    /// A string.
    String(String),
    /// An array of literals (no spread, no holes).
    Array(Vec<Literal>),
    /// An object with these keys, last one wins (no spread, no computed key, no accessor).
    Object(Vec<(String, Literal)>),
}

impl Literal {
    /// The JSON value when everything in it is known.
    pub fn to_json(&self) -> Option<Value> {
        Some(match self {
            Literal::Unknown => return None,
            Literal::Null => Value::Null,
            Literal::Bool(b) => Value::Bool(*b),
            Literal::Integer(i) => Value::from(*i),
            Literal::Number(f) => serde_json::Number::from_f64(*f).map(Value::Number)?,
            Literal::String(s) => Value::String(s.clone()),
            Literal::Array(items) => Value::Array(
                items
                    .iter()
                    .map(Literal::to_json)
                    .collect::<Option<Vec<_>>>()?,
            ),
            Literal::Object(entries) => {
                let mut map = Map::new();
                for (k, v) in entries {
                    map.insert(k.clone(), v.to_json()?);
                }
                Value::Object(map)
            }
        })
    }

    /// The JSON type name (`integer` for integral numbers), `None` when unknown.
    fn type_name(&self) -> Option<&'static str> {
        Some(match self {
            Literal::Unknown => return None,
            Literal::Null => "null",
            Literal::Bool(_) => "boolean",
            // An integral float (Python's `1.0`) is an integer to JSON Schema.
            Literal::Integer(_) => "integer",
            Literal::Number(f) if f.fract() == 0.0 => "integer",
            Literal::Number(_) => "number",
            Literal::String(_) => "string",
            Literal::Array(_) => "array",
            Literal::Object(_) => "object",
        })
    }
}

/// One place where a program names a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolUse {
    /// The tool's name, as the program spells it.
    pub name: String,
    /// The 1-based line in the program.
    pub line: u32,
    /// The 1-based column (in characters) in the program.
    pub column: u32,
    /// Whether it is a direct call (so a name that is not in the SDK is an error for sure);
    /// `false` for a reference (`tools.name` not called, an optional call).
    pub call: bool,
    /// The first argument of a direct call, as far as it is literal (`{}` for a call without
    /// arguments); `None` when not a call or when the argument is spread.
    pub args: Option<Literal>,
}

/// What the analysis found in one program.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProgramAnalysis {
    /// Every place the program names a tool, in source order.
    pub uses: Vec<ToolUse>,
    /// Whether the program may reach tools the analysis cannot name.
    pub open: bool,
    /// The parse (or compile) the analysis made, which the run reuses.
    pub(crate) prepared: Option<crate::PreparedProgram>,
}

impl ProgramAnalysis {
    /// What an analysis found: the tool uses, in source order, and whether the program may
    /// reach tools it cannot name.
    pub fn new(uses: Vec<ToolUse>, open: bool) -> Self {
        ProgramAnalysis {
            uses,
            open,
            prepared: None,
        }
    }

    /// An analysis that found nothing and says the program may call anything.
    pub fn open() -> Self {
        Self::new(Vec::new(), true)
    }

    /// The work the analysis did that the run can reuse (taken).
    pub fn take_prepared(&mut self) -> Option<crate::PreparedProgram> {
        self.prepared.take()
    }
}

/// Analyses a TypeScript program as `run_code` does before running it: `None` when it is not
/// analysed (nested deeper than [`MAX_ANALYSIS_NESTING`]), the failure the run reports for a
/// program that does not parse, or the tool uses found. For a host that wants to look at a
/// program without running it (and for the bench).
///
/// ```
/// use tools_code::analysis::analyse_typescript;
///
/// let found = analyse_typescript("const t = tools;\nawait t.read_file({path: 'a'});")
///     .unwrap()
///     .unwrap();
/// assert!(!found.open);
/// assert_eq!(found.uses[0].name, "read_file");
/// assert_eq!((found.uses[0].line, found.uses[0].column), (2, 9));
/// ```
#[cfg(feature = "typescript")]
pub fn analyse_typescript(program: &str) -> Option<Result<ProgramAnalysis, super::CodeFailure>> {
    typescript::analyse(program)
}

/// For `benches/analysis.rs`, not public API: the parse [`analyse_typescript`] shares with the
/// run, alone (whether it gave a tree), so the bench can print what the analysis's own passes
/// cost beside it.
#[cfg(feature = "typescript")]
#[doc(hidden)]
pub fn __shared_parse_only(program: &str) -> bool {
    typescript::parse_only(program)
}

/// The tools of `scope`'s SDK: what programs are told they can call, and what the analysis
/// checks their names against (the visible tools whose [`Callers`](crate::Callers) allow
/// code; see [`ToolRuntime::sdk_names`]). Keep [`sdk_tool`] in step with it.
pub(crate) fn sdk_tools(runtime: &ToolRuntime, scope: ScopeKey) -> Vec<String> {
    runtime.sdk_names(scope)
}

/// The names a program run from `scope` has bound.
///
/// - A program whose set is closed binds that set: every tool it can reach is named in it
///   (any form the analysis does not follow opens the set), so what it binds does not grow
///   with the scope: a program checked to call two tools of a thousand binds two, and its run
///   starts as fast as in a scope of two.
/// - Otherwise (open, or not analysed) it binds every visible tool, so that a call of a
///   direct-only tool the analysis could not see reaches the pipeline and is refused there
///   with the way back, instead of failing as a missing function. The bridge has the
///   runtime bind these on first use ([`binds`]), so a run in a scope of a thousand tools
///   does not bind a thousand.
pub(crate) fn bound_tools(
    runtime: &ToolRuntime,
    scope: ScopeKey,
    may_call: Option<&MayCall>,
) -> Vec<String> {
    match may_call {
        Some(MayCall::Closed(names)) => names.iter().cloned().collect(),
        _ => runtime.visible_names(scope),
    }
}

/// Whether `name` is among [`bound_tools`], found without listing them.
pub(crate) fn binds(
    runtime: &ToolRuntime,
    scope: ScopeKey,
    may_call: Option<&MayCall>,
    name: &str,
) -> bool {
    match may_call {
        Some(MayCall::Closed(names)) => names.contains(name),
        // `visible_names` lists the registered tools the scope resolves, never the registry's
        // own.
        _ => !RESERVED_NAMES.contains(&name) && runtime.get(name, scope).is_some(),
    }
}

/// What a name a program calls is to its SDK.
pub(crate) enum Lookup {
    /// One of [`sdk_tools`], with its definition.
    Sdk(ToolDefinition),
    /// A tool the scope has that programs may not call: the refusal, with the way back.
    Refused(String),
    /// No tool of that name.
    Unknown,
}

/// What `name` is to `scope`'s SDK (found without listing the SDK).
pub(crate) fn sdk_tool(runtime: &ToolRuntime, scope: ScopeKey, name: &str) -> Lookup {
    if RESERVED_NAMES.contains(&name) {
        return Lookup::Unknown;
    }
    match runtime.get(name, scope) {
        Some(def) if def.callers().allows_code() => Lookup::Sdk(def),
        Some(_) => Lookup::Refused(
            ExecutionError::DirectCallersOnly {
                name: name.to_owned(),
                from_program: true,
                direct_offered: runtime
                    .presentation_mode(scope)
                    .is_some_and(PresentationMode::offers_native),
            }
            .to_string(),
        ),
        None => Lookup::Unknown,
    }
}

/// `run_code`'s prepare hook: analyses the program, refuses it when it is provably wrong, and
/// says what it may call.
pub(crate) async fn prepare(
    mode: Arc<CodeMode>,
    args: Arc<Value>,
    ctx: ToolRunContext,
) -> Result<Extensions, ToolError> {
    let mut out = Extensions::new();
    if !mode.analysis {
        out.insert(MayCall::Open);
        return Ok(out);
    }
    let Some(code) = args.get("code").and_then(Value::as_str) else {
        return Ok(out);
    };
    let span = tracing::info_span!("code_analysis", agent_tools.code.language = %mode.language());
    let analysed = match mode.language() {
        #[cfg(feature = "typescript")]
        CodeLanguage::TypeScript => span.in_scope(|| typescript::analyse(code)),
        _ => mode.runtime.analyse(code).instrument(span).await,
    };
    let mut analysis = match analysed {
        None => {
            out.insert(MayCall::Open);
            return Ok(out);
        }
        Some(Err(failure)) => {
            return Err(ToolError::with_code(
                CODE_RUN_FAILED,
                super::bridge::failure_message(&failure),
            ));
        }
        Some(Ok(analysis)) => analysis,
    };
    let scope = ctx.agent().unwrap_or(ScopeKey::GLOBAL);
    let runtime = ctx.runtime();
    match judge(
        &analysis,
        |name| sdk_tool(runtime, scope, name),
        || sdk_tools(runtime, scope),
    ) {
        Ok(may_call) => {
            out.insert(may_call);
            // The parse (or compile) the analysis made, for the run.
            out.insert(Prepared(Mutex::new(analysis.take_prepared())));
            Ok(out)
        }
        Err(problems) => {
            // A program the run would refuse as a syntax error is reported as that.
            #[cfg(feature = "typescript")]
            if mode.language() == CodeLanguage::TypeScript
                && let Some(failure) = typescript::syntax_failure(code)
            {
                return Err(ToolError::with_code(
                    CODE_RUN_FAILED,
                    super::bridge::failure_message(&failure),
                ));
            }
            Err(ToolError::with_code(CODE_NOT_RUN, refusal(&problems)))
        }
    }
}

/// A problem found at a position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    pub(crate) line: u32,
    pub(crate) column: u32,
    pub(crate) message: String,
}

/// Judges an analysis against the SDK (`tool` finds one of its definitions, `all` lists its
/// names for suggestions): the set the program may call, or every provable problem.
pub(crate) fn judge(
    analysis: &ProgramAnalysis,
    tool: impl Fn(&str) -> Lookup,
    all: impl FnOnce() -> Vec<String>,
) -> Result<MayCall, Vec<Problem>> {
    let mut names = BTreeSet::new();
    let mut problems = Vec::new();
    let mut all = Some(all);
    let mut listed: Vec<String> = Vec::new();
    // Each name is looked up once, however often the program uses it.
    let mut looked_up: HashMap<&str, Lookup> = HashMap::new();
    for used in &analysis.uses {
        let def = match looked_up
            .entry(used.name.as_str())
            .or_insert_with(|| tool(&used.name))
        {
            Lookup::Sdk(def) => def,
            Lookup::Refused(message) => {
                if used.call {
                    problems.push(Problem {
                        line: used.line,
                        column: used.column,
                        message: message.clone(),
                    });
                }
                continue;
            }
            Lookup::Unknown => {
                // A reference to a name the SDK does not bind reads `undefined`: it calls nothing.
                if used.call {
                    if let Some(list) = all.take() {
                        listed = list();
                    }
                    problems.push(Problem {
                        line: used.line,
                        column: used.column,
                        message: unknown_tool(&used.name, &listed),
                    });
                }
                continue;
            }
        };
        if !names.contains(&used.name) {
            names.insert(used.name.clone());
        }
        let Some(args) = &used.args else {
            continue;
        };
        if let Some(violations) = check_args(def, args) {
            problems.push(Problem {
                line: used.line,
                column: used.column,
                message: format!(
                    "the arguments of `{}` do not match its input schema: {violations}",
                    used.name
                ),
            });
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(if analysis.open {
        MayCall::Open
    } else {
        MayCall::Closed(names)
    })
}

/// The refusal message for `problems`.
pub(crate) fn refusal(problems: &[Problem]) -> String {
    let mut out = String::from("the program was not run: ");
    if let [only] = problems {
        out.push_str(&format!(
            "line {}, column {}: {}",
            only.line, only.column, only.message
        ));
        return out;
    }
    out.push_str(&format!("{} calls cannot succeed:", problems.len()));
    for p in problems.iter().take(MAX_PROBLEMS) {
        out.push_str(&format!(
            "\n- line {}, column {}: {}",
            p.line, p.column, p.message
        ));
    }
    if problems.len() > MAX_PROBLEMS {
        out.push_str(&format!("\n- and {} more", problems.len() - MAX_PROBLEMS));
    }
    out
}

/// `no tool named ...`, with up to three closest names of the SDK.
fn unknown_tool(name: &str, sdk: &[String]) -> String {
    let shown = tools_schema::excerpt::cut(name);
    // A little more lenient than the registry: a program's typo is found before it runs.
    let closest: Vec<String> =
        tools_runtime::suggest::closest(name, sdk.iter().map(String::as_str), 0.7)
            .into_iter()
            .map(|n| format!("`{n}`"))
            .collect();
    if closest.is_empty() {
        format!("no tool named `{shown}` in the SDK")
    } else {
        format!(
            "no tool named `{shown}` in the SDK; the closest names are {}",
            closest.join(", ")
        )
    }
}

/// The violations of `args` against `def`'s input schema, when provable.
fn check_args(def: &ToolDefinition, args: &Literal) -> Option<String> {
    if let Some(value) = args.to_json() {
        return def.check_input(&value)?.err();
    }
    if def.is_raw() {
        // A raw definition validates its own input.
        return None;
    }
    let mut violations = Vec::new();
    check_partial(def.input_schema(), args, &mut Vec::new(), &mut violations);
    if violations.is_empty() {
        None
    } else {
        Some(violations.join("; "))
    }
}

/// The deepest a partial literal is followed into its schema.
const MAX_CHECK_DEPTH: usize = 32;

/// One step of the path from a literal argument to a part of it.
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// The JSON pointer of `path` (written only for a violation).
fn pointer_of(path: &[Step<'_>]) -> String {
    let mut out = String::new();
    for step in path {
        out.push('/');
        match step {
            Step::Key(key) => out.push_str(&escape_pointer(key)),
            Step::Index(i) => out.push_str(&i.to_string()),
        }
    }
    out
}

/// `message`, after the pointer of `path` when it leads anywhere.
fn at(path: &[Step<'_>], message: String) -> String {
    if path.is_empty() {
        message
    } else {
        format!("{}: {message}", pointer_of(path))
    }
}

/// Checks a partly known literal against a raw schema with the keywords whose verdict a known
/// part alone decides: `type`, `required`, `additionalProperties: false` (without
/// `patternProperties`), and through `properties`, `additionalProperties` and `items`. Every
/// keyword of a schema must hold, so checking some of them refuses nothing valid. `path` leads
/// from the argument to `lit`.
fn check_partial<'a>(
    schema: &Value,
    lit: &'a Literal,
    path: &mut Vec<Step<'a>>,
    out: &mut Vec<String>,
) {
    if path.len() > MAX_CHECK_DEPTH || matches!(lit, Literal::Unknown) {
        return;
    }
    let Some(schema) = schema.as_object() else {
        return;
    };
    // `$ref` (a reference replaces the schema in older drafts): not followed.
    if schema.contains_key("$ref") {
        return;
    }
    if let (Some(ty), Some(actual)) = (schema.get("type"), lit.type_name())
        && !type_allows(ty, actual)
    {
        let expected = match ty {
            Value::String(s) => s.clone(),
            Value::Array(all) => all
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" or "),
            _ => return,
        };
        out.push(at(path, format!("expected {expected}, got {actual}")));
        return;
    }
    match lit {
        Literal::Object(entries) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            if let Some(required) = schema.get("required").and_then(Value::as_array) {
                for name in required.iter().filter_map(Value::as_str) {
                    if !entries.iter().any(|(k, _)| k == name) {
                        out.push(at(
                            path,
                            format!(
                                "missing required property {}",
                                Value::String(name.to_owned())
                            ),
                        ));
                    }
                }
            }
            let closed = schema.get("additionalProperties") == Some(&Value::Bool(false))
                && !schema.contains_key("patternProperties");
            let additional = schema
                .get("additionalProperties")
                .filter(|a| a.is_object() && !schema.contains_key("patternProperties"));
            let mut seen = BTreeSet::new();
            // Last one wins: check each key once, with its last value.
            for (key, value) in entries.iter().rev() {
                if !seen.insert(key.as_str()) {
                    continue;
                }
                match properties.and_then(|p| p.get(key)) {
                    Some(sub) => {
                        path.push(Step::Key(key));
                        check_partial(sub, value, path, out);
                        path.pop();
                    }
                    None if closed => {
                        let allowed: Vec<String> = properties
                            .map(|p| {
                                p.keys()
                                    .map(|k| Value::String(k.clone()).to_string())
                                    .collect()
                            })
                            .unwrap_or_default();
                        out.push(at(
                            path,
                            if allowed.is_empty() {
                                format!(
                                    "unexpected property {} (this object takes no properties)",
                                    Value::String(key.clone())
                                )
                            } else {
                                format!(
                                    "unexpected property {} (allowed: {})",
                                    Value::String(key.clone()),
                                    allowed.join(", ")
                                )
                            },
                        ));
                    }
                    None => {
                        if let Some(sub) = additional {
                            path.push(Step::Key(key));
                            check_partial(sub, value, path, out);
                            path.pop();
                        }
                    }
                }
            }
        }
        Literal::Array(items) => {
            if let Some(sub) = schema.get("items").filter(|s| s.is_object()) {
                for (i, item) in items.iter().enumerate() {
                    path.push(Step::Index(i));
                    check_partial(sub, item, path, out);
                    path.pop();
                }
            }
        }
        _ => {}
    }
}

/// Whether a schema's `type` admits a literal of JSON type `actual`.
fn type_allows(ty: &Value, actual: &str) -> bool {
    let one = |t: &str| t == actual || (t == "number" && actual == "integer");
    match ty {
        Value::String(t) => one(t),
        Value::Array(all) => all.iter().filter_map(Value::as_str).any(one),
        _ => true,
    }
}

fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}
