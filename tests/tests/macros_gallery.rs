//! A gallery of realistic tools written with `#[tool]`, `#[tools]` and `#[derive(ToolSchema)]`.
//!
//! - The input and output JSON Schemas of every tool are pinned with `insta`.
//! - Schema and serde agree: property tests generate JSON values from each input schema and
//!   check that serde deserializes them, and that what serde then serializes validates against
//!   the output schema; every tool is also executed with generated arguments through the
//!   runtime, which validates arguments and outputs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value, json};
use tools_runtime::error::ToolFailure;
use tools_runtime::schema::{AdditionalProperties, Schema, SchemaKind, Validator};
use tools_runtime::{
    CancellationToken, ContentBlock, ToolCall, ToolDefinition, ToolExecution, ToolExecutionResult,
    ToolRunContext, ToolRuntime, ToolSchema, tool, tools,
};

// ------------------------------------------------------------------------------------------
// Types
// ------------------------------------------------------------------------------------------

/// A window of lines from a text file.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileWindow {
    /// The path that was read.
    path: String,
    /// 1-based number of the first line in `lines`.
    offset: u64,
    /// The lines, without their line breaks.
    lines: Vec<String>,
    /// Lines in the whole file.
    total_lines: u64,
    /// Where the next window starts, when the file goes on.
    #[serde(skip_serializing_if = "Option::is_none")]
    next_offset: Option<u64>,
}

/// A file-system failure with its own code.
#[derive(Debug)]
pub struct FsError(String);

impl std::fmt::Display for FsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no file at {}", self.0)
    }
}

impl ToolFailure for FsError {
    fn code(&self) -> &str {
        "NOT_FOUND"
    }
}

/// How `search` matches.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// The query is matched literally.
    Literal,
    /// The query is a regular expression.
    Regex,
    /// Letters of the query appear in order.
    Fuzzy,
}

/// One matching line.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
pub struct Match {
    path: String,
    /// 1-based line number.
    line: u32,
    text: String,
}

/// What `search` found.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
pub struct SearchResults {
    matches: Vec<Match>,
    /// Whether `matches` was capped.
    truncated: bool,
    total: u64,
}

/// An HTTP method.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum HttpMethod {
    Get,
    Post,
    Put,
    Delete,
}

/// The response of `http_fetch`.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
pub struct FetchResponse {
    status: u16,
    headers: BTreeMap<String, String>,
    body: String,
}

/// A process command.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Command {
    /// Start a program.
    Start {
        program: String,
        #[serde(default)]
        args: Vec<String>,
    },
    /// Stop a running process.
    Stop { pid: u32 },
    /// Report the running processes.
    Status,
}

/// What happened to a command, adjacently tagged.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(tag = "outcome", content = "detail", rename_all = "kebab-case")]
pub enum CommandOutcome {
    Started { pid: u32 },
    Stopped(u32),
    Listing(Vec<u32>),
    NothingToDo,
}

/// The kind of a directory entry.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    File,
    Directory,
    Symlink,
}

/// One directory entry.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
pub struct DirEntry {
    name: String,
    kind: EntryKind,
    /// Size in bytes, for files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
}

/// One replacement in a file.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    /// Text to find; must occur in the file.
    old_text: String,
    new_text: String,
    /// Replace every occurrence instead of exactly one.
    #[serde(default)]
    replace_all: bool,
}

/// What `edit_file` did.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
pub struct EditSummary {
    applied: usize,
    diff: String,
}

/// Measurement units.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "lowercase")]
pub enum Units {
    Metric,
    Imperial,
}

/// Wind at the surface.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
pub struct Wind {
    speed: f64,
    /// Compass direction the wind comes from, in degrees.
    direction_degrees: u16,
}

/// Current weather.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
pub struct Weather {
    temperature: f64,
    conditions: String,
    wind: Wind,
    units: Units,
}

/// How urgent an issue is.
#[derive(Debug, Clone, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Priority {
    /// Fix when convenient.
    Low,
    /// Fix this cycle.
    Normal,
    /// Drop everything.
    Critical,
}

/// The fields of a new issue.
#[derive(Debug, Clone, Serialize, Deserialize, ToolSchema)]
pub struct NewIssue {
    title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    body: Option<String>,
    #[serde(default)]
    labels: BTreeSet<String>,
    priority: Priority,
}

/// A created issue: its id and URL beside the fields it was created with.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
pub struct Issue {
    id: u64,
    url: String,
    #[serde(flatten)]
    fields: NewIssue,
}

/// Somebody to send mail to: a bare address or a name with an address.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(untagged)]
pub enum Recipient {
    Address(String),
    Named { name: String, address: String },
}

/// A language, as an IETF tag.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToolSchema)]
pub enum Language {
    #[serde(rename = "en")]
    English,
    #[serde(rename = "de", alias = "ger")]
    German,
    #[serde(rename = "ja")]
    Japanese,
}

/// A translation.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
pub struct Translation {
    #[serde(rename = "translatedText")]
    text: String,
    detected_source: Language,
}

/// One change to a to-do list, externally tagged.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
pub enum TodoOp {
    /// Add an item.
    Add { title: String },
    /// Complete the item with this id.
    Complete(u32),
    /// Remove every completed item.
    Clear,
}

/// An image format.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    Png,
    Jpeg,
    Webp,
}

/// A commit id.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(transparent)]
pub struct Sha(String);

/// Facts about an image.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
pub struct ImageInfo {
    width: u32,
    height: u32,
    format: ImageFormat,
    #[serde(skip)]
    decoded: Vec<u8>,
}

/// Someone invited to an event.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Attendee {
    email: String,
    #[serde(default)]
    is_optional: bool,
}

/// How an event repeats.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(tag = "every", rename_all = "lowercase")]
pub enum Recurrence {
    Day,
    Week { weekdays: Vec<u8> },
}

/// A calendar event.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Event {
    title: String,
    /// RFC 3339 start time.
    start_time: String,
    duration_minutes: u16,
    attendees: Vec<Attendee>,
    #[serde(default)]
    recurrence: Option<Recurrence>,
}

/// A made commit.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
pub struct CommitInfo {
    sha: Sha,
    files_changed: usize,
}

/// Rows returned by a query.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
pub struct QueryResult {
    columns: Vec<String>,
    rows: Vec<Vec<Value>>,
}

// ------------------------------------------------------------------------------------------
// Free tools
// ------------------------------------------------------------------------------------------

/// Read a window of lines from a text file.
#[tool(concurrency_safe, timeout = "30s")]
pub async fn read_file(
    /// Absolute path of the file.
    path: String,
    /// 1-based line to start from (default 1).
    offset: Option<u64>,
    /// Most lines to return (default 2000).
    limit: Option<u32>,
    #[context] cancel: CancellationToken,
) -> Result<FileWindow, FsError> {
    if cancel.is_cancelled() || path.contains("missing") {
        return Err(FsError(path));
    }
    let offset = offset.unwrap_or(1).max(1);
    let lines: Vec<String> = (0..limit.unwrap_or(3).min(3))
        .map(|i| format!("line {i}"))
        .collect();
    Ok(FileWindow {
        path,
        offset,
        total_lines: offset + lines.len() as u64,
        lines,
        next_offset: None,
    })
}

/// Write a file, replacing what was there.
#[tool]
pub fn write_file(
    path: PathBuf,
    content: String,
    create_dirs: Option<bool>,
) -> Result<u64, std::io::Error> {
    let _ = (path, create_dirs);
    Ok(content.len() as u64)
}

/// Search files for a query.
#[tool(concurrency_safe = search_is_cheap)]
pub async fn search(
    /// What to look for.
    query: String,
    mode: SearchMode,
    /// Cap on the matches returned.
    max_results: Option<u16>,
    /// Folders to search; all of the workspace when empty.
    paths: Vec<String>,
) -> SearchResults {
    let _ = (mode, paths);
    let n = u64::from(max_results.unwrap_or(1).min(2));
    SearchResults {
        matches: (0..n)
            .map(|i| Match {
                path: "a.rs".into(),
                line: i as u32 + 1,
                text: query.clone(),
            })
            .collect(),
        truncated: false,
        total: n,
    }
}

fn search_is_cheap(
    _query: &String,
    mode: &SearchMode,
    _max: &Option<u16>,
    _paths: &Vec<String>,
) -> bool {
    !matches!(mode, SearchMode::Regex)
}

/// Fetch a URL over HTTP.
#[tool(timeout = "1m")]
pub async fn http_fetch(
    url: String,
    method: HttpMethod,
    /// Request headers, by name.
    headers: HashMap<String, String>,
    body: Option<String>,
) -> FetchResponse {
    let _ = (method, body);
    FetchResponse {
        status: 200,
        headers: headers.into_iter().collect(),
        body: url,
    }
}

/// Start, stop or list processes.
#[tool]
pub fn process(command: Command) -> CommandOutcome {
    match command {
        Command::Start { .. } => CommandOutcome::Started { pid: 7 },
        Command::Stop { pid } => CommandOutcome::Stopped(pid),
        Command::Status => CommandOutcome::NothingToDo,
    }
}

/// List a directory.
#[tool(concurrency_safe)]
pub async fn list_dir(path: String, #[context] ctx: ToolRunContext) -> Vec<DirEntry> {
    let _ = ctx.call_id();
    vec![
        DirEntry {
            name: path,
            kind: EntryKind::Directory,
            size: None,
        },
        DirEntry {
            name: "f".into(),
            kind: EntryKind::File,
            size: Some(3),
        },
    ]
}

/// Apply exact-text replacements to a file.
#[tool]
pub async fn edit_file(path: String, edits: Vec<Edit>) -> EditSummary {
    EditSummary {
        applied: edits.len(),
        diff: format!("--- {path}"),
    }
}

/// Current weather for a city.
#[tool(name = "get_weather")]
pub async fn weather(city: String, units: Option<Units>) -> Weather {
    let _ = city;
    Weather {
        temperature: 21.5,
        conditions: "clear".into(),
        wind: Wind {
            speed: 3.0,
            direction_degrees: 270,
        },
        units: units.unwrap_or(Units::Metric),
    }
}

/// Evaluate an arithmetic expression.
#[tool]
pub fn calculate(expression: String) -> f64 {
    expression.len() as f64
}

/// Wait for a while.
#[tool]
pub async fn sleep(duration_ms: u32) {
    let _ = duration_ms;
}

/// File an issue in the tracker.
#[tool]
pub async fn create_issue(issue: NewIssue) -> Issue {
    Issue {
        id: 1,
        url: "https://tracker.invalid/1".into(),
        fields: issue,
    }
}

/// Send an email.
#[tool(description = "Send an email to one or more recipients.")]
pub async fn send_email(to: Vec<Recipient>, subject: String, body: String) -> usize {
    let _ = (subject, body);
    to.len()
}

/// Translate text.
#[tool]
pub async fn translate(text: String, target: Language, source: Option<Language>) -> Translation {
    let _ = target;
    Translation {
        text,
        detected_source: source.unwrap_or(Language::English),
    }
}

/// Change the to-do list.
#[tool]
pub fn update_todos(ops: Vec<TodoOp>) -> u32 {
    ops.len() as u32
}

/// Describe an image.
#[tool]
pub fn image_info(data_base64: String) -> ImageInfo {
    let info = ImageInfo {
        width: data_base64.len() as u32,
        height: 1,
        format: ImageFormat::Png,
        decoded: Vec::new(),
    };
    assert!(info.decoded.is_empty());
    info
}

/// Put an event in the calendar.
#[tool]
pub async fn schedule_event(event: Event) -> String {
    event.title
}

/// Commit staged changes.
#[tool(render = render_commit, finalize_content = finalize_commit, presentation_meta = commit_meta)]
pub async fn git_commit(message: String, paths: Vec<PathBuf>, amend: Option<bool>) -> CommitInfo {
    let _ = (message, amend);
    CommitInfo {
        sha: Sha("abc123".into()),
        files_changed: paths.len(),
    }
}

fn render_commit(_args: &Value, value: &Value) -> Vec<ContentBlock> {
    vec![ContentBlock::text(format!("committed {}", value["sha"]))]
}

fn finalize_commit(
    _exec: &ToolExecution,
    _result: &ToolExecutionResult,
) -> Option<Vec<ContentBlock>> {
    None
}

fn commit_meta(_args: &Value, value: &Value) -> Value {
    json!({"files": value["files_changed"]})
}

// ------------------------------------------------------------------------------------------
// Stateful tools
// ------------------------------------------------------------------------------------------

/// A database connection pool (a stand-in).
#[derive(Debug)]
pub struct Database {
    tables: Vec<String>,
}

#[tools]
impl Database {
    /// Run a read-only SQL query.
    #[tool(concurrency_safe)]
    async fn query(
        &self,
        /// The SQL text, with `?` placeholders.
        sql: String,
        /// Values for the placeholders, in order.
        params: Vec<Value>,
    ) -> QueryResult {
        QueryResult {
            columns: vec![sql],
            rows: vec![params],
        }
    }

    /// List the tables.
    #[tool]
    fn tables(&self) -> Vec<String> {
        self.tables.clone()
    }

    /// Insert one row; returns its id.
    #[tool]
    async fn insert(&self, table: String, row: Map<String, Value>) -> u64 {
        let _ = table;
        row.len() as u64
    }
}

/// An in-memory key-value store.
#[derive(Debug, Default)]
pub struct KvStore {
    entries: Mutex<HashMap<String, String>>,
}

#[tools]
impl KvStore {
    /// Read a key.
    #[tool(name = "kv_get")]
    async fn get(&self, key: String) -> Option<String> {
        self.entries.lock().unwrap().get(&key).cloned()
    }

    /// Write a key; returns whether it was new.
    #[tool(name = "kv_set")]
    async fn set(&self, key: String, value: String, ttl_seconds: Option<u64>) -> bool {
        let _ = ttl_seconds;
        self.entries.lock().unwrap().insert(key, value).is_none()
    }
}

fn gallery() -> Vec<ToolDefinition> {
    let mut defs = vec![
        read_file::definition().unwrap(),
        write_file::definition().unwrap(),
        search::definition().unwrap(),
        http_fetch::definition().unwrap(),
        process::definition().unwrap(),
        list_dir::definition().unwrap(),
        edit_file::definition().unwrap(),
        weather::definition().unwrap(),
        calculate::definition().unwrap(),
        sleep::definition().unwrap(),
        create_issue::definition().unwrap(),
        send_email::definition().unwrap(),
        translate::definition().unwrap(),
        update_todos::definition().unwrap(),
        image_info::definition().unwrap(),
        schedule_event::definition().unwrap(),
        git_commit::definition().unwrap(),
    ];
    defs.extend(
        Arc::new(Database {
            tables: vec!["users".into()],
        })
        .tool_definitions()
        .unwrap(),
    );
    defs.extend(Arc::new(KvStore::default()).tool_definitions().unwrap());
    defs
}

// ------------------------------------------------------------------------------------------
// Snapshots
// ------------------------------------------------------------------------------------------

#[test]
fn gallery_schemas_are_pinned() {
    let defs = gallery();
    assert_eq!(defs.len(), 22);
    for def in &defs {
        let entry = json!({
            "name": def.name(),
            "description": def.description(),
            "inputSchema": def.input_schema(),
            "outputSchema": def.output_schema(),
        });
        insta::assert_json_snapshot!(def.name(), entry);
    }
}

#[test]
fn plain_calls_still_work() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let window = rt
        .block_on(read_file(
            "/a".into(),
            Some(2),
            Some(1),
            CancellationToken::new(),
        ))
        .unwrap();
    assert_eq!(window.offset, 2);
    assert_eq!(calculate("1+1".into()), 3.0);
    assert!(search_is_cheap(
        &String::new(),
        &SearchMode::Literal,
        &None,
        &Vec::new()
    ));
}

#[tokio::test]
async fn errors_keep_their_codes_and_text() {
    let runtime = ToolRuntime::new();
    let scope = runtime.scope();
    let _r = scope.register(read_file::definition().unwrap()).unwrap();
    let r = runtime
        .execute(ToolCall::new("1", "read_file", json!({"path": "/missing"})))
        .await;
    assert_eq!(r.code(), Some("NOT_FOUND"));
    assert_eq!(r.text(), "Error: no file at /missing");
    let r = runtime
        .execute(ToolCall::new("2", "read_file", json!({"path": 3})))
        .await;
    assert_eq!(r.code(), Some("INVALID_ARGS"));
    let _w = scope.register(write_file::definition().unwrap()).unwrap();
    let r = runtime
        .execute(ToolCall::new(
            "3",
            "write_file",
            json!({"path": "/x", "content": "abc"}),
        ))
        .await;
    assert_eq!(r.value(), Some(&json!(3)));
}

#[test]
fn declarations_reach_the_definition() {
    let def = read_file::definition().unwrap();
    assert_eq!(def.timeout(), Some(std::time::Duration::from_secs(30)));
    assert!(def.has_concurrency_classifier());
    let def = http_fetch::definition().unwrap();
    assert_eq!(def.timeout(), Some(std::time::Duration::from_secs(60)));
    assert!(!def.has_concurrency_classifier());
    let def = git_commit::definition().unwrap();
    let content = def.render(&json!({}), &json!({"sha": "abc", "files_changed": 1}));
    assert_eq!(content, vec![ContentBlock::text("committed \"abc\"")]);
}

#[tokio::test]
async fn classifiers_see_typed_arguments() {
    let runtime = ToolRuntime::new();
    let scope = runtime.scope();
    let _s = scope.register(search::definition().unwrap()).unwrap();
    let mode = |args: Value| runtime.execution_mode(&ToolCall::new("c", "search", args));
    assert_eq!(
        format!(
            "{:?}",
            mode(json!({"query": "a", "mode": "literal", "paths": []}))
        ),
        "Parallel"
    );
    assert_eq!(
        format!(
            "{:?}",
            mode(json!({"query": "a", "mode": "regex", "paths": []}))
        ),
        "Exclusive"
    );
}

// ------------------------------------------------------------------------------------------
// Schema and serde agree
// ------------------------------------------------------------------------------------------

/// A strategy for JSON values the schema admits. Optional properties are included at random;
/// open objects sometimes get an extra key, which serde must ignore.
fn values(schema: &Schema) -> BoxedStrategy<Value> {
    match &schema.kind {
        SchemaKind::Any => prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i32>().prop_map(|i| json!(i)),
            "[a-z]{0,4}".prop_map(Value::String),
        ]
        .boxed(),
        SchemaKind::Null => Just(Value::Null).boxed(),
        SchemaKind::Boolean(b) => match (&b.const_value, &b.enum_values) {
            (Some(c), _) => Just(Value::Bool(*c)).boxed(),
            (None, Some(e)) => proptest::sample::select(e.clone())
                .prop_map(Value::Bool)
                .boxed(),
            _ => any::<bool>().prop_map(Value::Bool).boxed(),
        },
        SchemaKind::String(s) => {
            if let Some(c) = &s.const_value {
                return Just(Value::String(c.clone())).boxed();
            }
            if let Some(e) = &s.enum_values {
                return proptest::sample::select(e.clone())
                    .prop_map(Value::String)
                    .boxed();
            }
            let min = s.min_length.unwrap_or(0) as usize;
            let max = s.max_length.map_or(min + 6, |m| m as usize);
            proptest::collection::vec(proptest::char::any(), min..=max)
                .prop_map(|chars| Value::String(chars.into_iter().collect()))
                .boxed()
        }
        SchemaKind::Integer(n) => {
            let min = n
                .minimum
                .as_ref()
                .and_then(Number::as_i64)
                .unwrap_or(-1_000_000);
            let max = n
                .maximum
                .as_ref()
                .and_then(Number::as_i64)
                .unwrap_or(1_000_000);
            (min..=max).prop_map(|i| json!(i)).boxed()
        }
        SchemaKind::Number(_) => (-1.0e6..1.0e6f64).prop_map(|f| json!(f)).boxed(),
        SchemaKind::Array(a) => {
            let items = a
                .items
                .as_deref()
                .map_or_else(|| Just(Value::Null).boxed(), values);
            let min = a.min_items.unwrap_or(0) as usize;
            let max = a.max_items.map_or(min + 3, |m| m as usize);
            let unique = a.unique_items;
            proptest::collection::vec(items, min..=max)
                .prop_map(move |mut v| {
                    if unique {
                        let mut seen = Vec::new();
                        v.retain(|x| {
                            if seen.contains(x) {
                                false
                            } else {
                                seen.push(x.clone());
                                true
                            }
                        });
                    }
                    Value::Array(v)
                })
                .boxed()
        }
        SchemaKind::Object(o) => {
            let mut fields: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
            for (name, prop) in &o.properties {
                let name = name.clone();
                let value = values(prop);
                if o.required.contains(&name) {
                    fields.push(value.prop_map(move |v| Some((name.clone(), v))).boxed());
                } else {
                    fields.push(
                        proptest::option::of(value.prop_map(move |v| (name.clone(), v))).boxed(),
                    );
                }
            }
            let extra: BoxedStrategy<Vec<(String, Value)>> = match &o.additional_properties {
                AdditionalProperties::Deny => Just(Vec::new()).boxed(),
                AdditionalProperties::Allow => proptest::option::of(
                    any::<bool>().prop_map(|b| ("zz_extra".to_owned(), Value::Bool(b))),
                )
                .prop_map(|o| o.into_iter().collect())
                .boxed(),
                AdditionalProperties::Schema(s) => {
                    proptest::collection::vec(("k[a-z]{0,3}", values(s)), 0..3).boxed()
                }
            };
            (fields, extra)
                .prop_map(|(fields, extra)| {
                    let mut map = Map::new();
                    for (k, v) in extra {
                        map.insert(k, v);
                    }
                    for (k, v) in fields.into_iter().flatten() {
                        map.insert(k, v);
                    }
                    Value::Object(map)
                })
                .boxed()
        }
        SchemaKind::OneOf(alternatives) => {
            // A value built from one alternative may match another too (aliases: a value
            // giving two names of one field); keep the values that match exactly one.
            let whole = Validator::from_schema(schema).unwrap();
            proptest::strategy::Union::new(alternatives.iter().map(values).collect::<Vec<_>>())
                .prop_filter("matches exactly one alternative", move |v| {
                    whole.is_valid(v)
                })
                .boxed()
        }
    }
}

/// A type serde reads under several names per field (not used by a tool, so the tool gallery
/// stays as it is): required fields with aliases in an open and in a closed object.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
struct Contact {
    /// Who it is.
    #[serde(alias = "full_name", alias = "display_name")]
    name: String,
    #[serde(alias = "mail")]
    email: String,
    #[serde(default)]
    tags: Vec<String>,
    card: ContactCard,
}

/// The closed part of a contact.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ContactCard {
    #[serde(alias = "org")]
    organisation_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
}

/// Values generated from `T`'s input schema deserialize; what serde serializes back validates
/// against `T`'s output schema.
fn agree<T>(cases: u32)
where
    T: ToolSchema + Serialize + serde::de::DeserializeOwned,
{
    let input = T::input_schema();
    let input_validator = Validator::from_schema(&input).unwrap();
    let output_validator = Validator::from_schema(&T::output_schema()).unwrap();
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(cases));
    runner
        .run(&values(&input), |value| {
            prop_assert!(
                input_validator.is_valid(&value),
                "generator left the schema: {value}"
            );
            let typed: T = serde_json::from_value(value.clone())
                .map_err(|e| TestCaseError::fail(format!("serde rejected {value}: {e}")))?;
            let written = serde_json::to_value(&typed).unwrap();
            if let Err(violations) = output_validator.validate(&written) {
                return Err(TestCaseError::fail(format!(
                    "{written} breaks the output schema: {violations}"
                )));
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn every_gallery_type_agrees_with_serde() {
    agree::<FileWindow>(64);
    agree::<SearchMode>(16);
    agree::<SearchResults>(64);
    agree::<HttpMethod>(16);
    agree::<FetchResponse>(64);
    agree::<Command>(64);
    agree::<CommandOutcome>(64);
    agree::<DirEntry>(64);
    agree::<Vec<Edit>>(64);
    agree::<EditSummary>(32);
    agree::<Weather>(64);
    agree::<NewIssue>(64);
    agree::<Issue>(64);
    agree::<Recipient>(64);
    agree::<Language>(16);
    agree::<Translation>(32);
    agree::<Vec<TodoOp>>(64);
    agree::<ImageInfo>(32);
    agree::<Event>(64);
    agree::<CommitInfo>(32);
    agree::<QueryResult>(64);
    agree::<Option<Priority>>(16);
    agree::<HashMap<String, Option<u8>>>(32);
    agree::<BTreeSet<char>>(32);
    agree::<Contact>(128);
}

#[tokio::test]
async fn every_gallery_tool_accepts_arguments_from_its_schema() {
    let runtime = ToolRuntime::new();
    let scope = runtime.scope();
    let defs = gallery();
    let mut registrations = Vec::new();
    for def in &defs {
        registrations.push(scope.register(def.clone()).unwrap());
    }
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(24));
    for def in &defs {
        let schema = Schema::from_json(def.input_schema()).unwrap();
        for i in 0..24 {
            let args = values(&schema).new_tree(&mut runner).unwrap().current();
            let call = ToolCall::new(format!("{}-{i}", def.name()), def.name(), args.clone());
            let result = runtime.execute(call).await;
            if result.is_error() {
                // Only a tool's own failure is acceptable; never a disagreement about shapes.
                assert_eq!(
                    result.code(),
                    Some("NOT_FOUND"),
                    "{} with {args}: {}",
                    def.name(),
                    result.text()
                );
            }
        }
    }
}

/// The other direction for aliases: serde accepts a field under any one of its names, so the
/// input schema must too; two names of one field are rejected by both.
#[test]
fn aliases_agree_with_serde_in_both_directions() {
    let schema = Contact::input_schema();
    let validator = Validator::from_schema(&schema).unwrap();
    let names = [
        ("name", &["full_name", "display_name"][..]),
        ("email", &["mail"][..]),
    ];
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(64));
    let strategy = (values(&schema), any::<[usize; 2]>());
    runner
        .run(&strategy, |(value, picks)| {
            // Written back by serde: every field under its main name.
            let typed: Contact = serde_json::from_value(value).unwrap();
            let Value::Object(mut map) = serde_json::to_value(&typed).unwrap() else {
                panic!("a contact is an object")
            };
            for ((main, aliases), pick) in names.iter().zip(picks) {
                let field = map.remove(*main).unwrap();
                let key = match pick % (aliases.len() + 1) {
                    0 => *main,
                    i => aliases[i - 1],
                };
                map.insert(key.to_owned(), field);
            }
            let renamed = Value::Object(map.clone());
            prop_assert!(serde_json::from_value::<Contact>(renamed.clone()).is_ok());
            prop_assert!(validator.is_valid(&renamed), "schema rejects {renamed}");
            // The same field under two names: serde rejects the duplicate, and so must the schema.
            let (main, aliases) = names[0];
            let twice = if map.contains_key(main) {
                aliases[0]
            } else {
                main
            };
            map.insert(twice.to_owned(), json!("again"));
            let doubled = Value::Object(map);
            prop_assert!(serde_json::from_value::<Contact>(doubled.clone()).is_err());
            prop_assert!(!validator.is_valid(&doubled), "schema accepts {doubled}");
            Ok(())
        })
        .unwrap();
}

/// A type whose hand-written schema disagrees with its serde format: the agreement check must
/// catch it (so the check above can fail).
#[derive(Debug, Serialize, Deserialize)]
struct Lying(u32);

impl ToolSchema for Lying {
    fn input_schema() -> Schema {
        String::input_schema()
    }
    fn output_schema() -> Schema {
        String::output_schema()
    }
}

#[test]
fn the_agreement_check_catches_a_lying_schema() {
    let caught = std::panic::catch_unwind(|| agree::<Lying>(8));
    assert!(caught.is_err());
}

// ------------------------------------------------------------------------------------------
// Behaviour hints (MCP tool annotations)
// ------------------------------------------------------------------------------------------

/// Look a word up in the dictionary.
#[tool(read_only, idempotent, open_world = false, title = "Dictionary")]
fn look_up(word: String) -> String {
    word
}

/// Delete a note.
#[tool(destructive, idempotent = false)]
fn delete_note(id: u64) -> String {
    format!("deleted {id}")
}

#[test]
fn hints_become_the_definitions_annotations_and_its_catalog_entry() {
    let def = look_up::definition().unwrap();
    let expected = tools_runtime::ToolAnnotations {
        title: Some("Dictionary".into()),
        read_only_hint: Some(true),
        destructive_hint: None,
        idempotent_hint: Some(true),
        open_world_hint: Some(false),
    };
    assert_eq!(def.annotations(), Some(&expected));
    assert_eq!(def.catalog_entry().annotations, Some(expected));
    let def = delete_note::definition().unwrap();
    let annotations = def.annotations().unwrap();
    assert_eq!(
        (annotations.destructive_hint, annotations.idempotent_hint),
        (Some(true), Some(false))
    );
    // A tool that says nothing has no annotations.
    assert_eq!(plain_add::definition().unwrap().annotations(), None);
}

/// Add two numbers.
#[tool]
fn plain_add(a: i64, b: i64) -> i64 {
    a + b
}
