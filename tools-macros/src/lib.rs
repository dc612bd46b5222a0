//! Procedural macros of the toolkit: `#[tool]`, `#[tools]` and `#[derive(ToolSchema)]`.
//!
//! Depend on `tools-runtime` alone and use the macros through it
//! (`use tools_runtime::{tool, tools, ToolSchema};`): the code they generate names only
//! `::tools_runtime::__private` paths.
//!
//! # Writing a tool
//!
//! A tool is an ordinary function. Its parameters are the tool's parameters, its `///` text is
//! the description the model reads, and its return type gives the output schema:
//!
//! ```
//! use serde::Serialize;
//! use tools_runtime::{CancellationToken, ToolCall, ToolRuntime, ToolSchema, tool};
//!
//! /// A window of lines from a file.
//! #[derive(Serialize, ToolSchema)]
//! struct Window {
//!     lines: Vec<String>,
//!     /// Where the next window starts, if the file goes on.
//!     #[serde(skip_serializing_if = "Option::is_none")]
//!     next_offset: Option<u64>,
//! }
//!
//! /// Read lines from a text file.
//! #[tool(concurrency_safe, timeout = "30s")]
//! async fn read_file(
//!     /// Absolute path of the file.
//!     path: String,
//!     /// 1-based first line (default 1).
//!     offset: Option<u64>,
//!     #[context] cancel: CancellationToken,
//! ) -> Result<Window, std::io::Error> {
//!     let _ = (offset, cancel);
//!     Ok(Window { lines: vec![path], next_offset: None })
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! // The function stays plain Rust ...
//! let window = read_file("/etc/hosts".into(), None, CancellationToken::new()).await.unwrap();
//! assert_eq!(window.lines, ["/etc/hosts"]);
//!
//! // ... and `read_file::definition()` is the tool.
//! let definition = read_file::definition().unwrap();
//! assert_eq!(definition.description(), "Read lines from a text file.");
//! assert_eq!(definition.input_schema()["required"], serde_json::json!(["path"]));
//!
//! let runtime = ToolRuntime::new();
//! let scope = runtime.scope(); // what a scope registered goes when it is dropped
//! let _registration = scope.register(definition).unwrap();
//! let result = runtime
//!     .execute(ToolCall::new("call-1", "read_file", serde_json::json!({"path": "/a"})))
//!     .await;
//! assert_eq!(result.value(), Some(&serde_json::json!({"lines": ["/a"]})), "{}", result.text());
//! # }
//! ```
//!
//! ## What `#[tool]` generates
//!
//! The function is kept unchanged (minus the parameter attributes), so unit tests call it
//! directly. Beside it stands a same-named item in the type namespace with one method,
//! `read_file::definition() -> Result<ToolDefinition, DefinitionError>`, which builds the
//! definition: name, description, input and output schemas, body and declarations. Each call
//! composes the schemas afresh (no cache: a cached schema would be handed out as a copy, which
//! costs about what composing it does). `definition()` fails only when a hand-written
//! `ToolSchema` implementation produced a schema outside the supported subset.
//!
//! ## Parameters
//!
//! - The argument name is the parameter's identifier (`r#type` is `type`); `///` on a parameter
//!   is its description. The parameter object is open (unknown keys are ignored), as the
//!   specification's implicit parameter root is.
//! - `Option<T>` parameters are optional: a missing argument is `None`. The schema offers `T`
//!   only, so leaving the argument out is how the model says "none" (an explicit `null` fails
//!   validation with a message naming the argument). The same holds for `Option` fields of
//!   derived input types.
//! - Every other parameter type must implement `ToolSchema` and `serde::de::DeserializeOwned`;
//!   a type that does not is a compile error on that type naming the trait and the derive.
//! - References (`&str`), `impl Trait`, generic parameters, patterns and `unsafe`/`extern`
//!   functions are compile errors that say what to write instead (`String`, a concrete type, a
//!   plain name).
//!
//! ## Context parameters
//!
//! A parameter marked `#[context]` is injected by the runtime and never appears in the schema.
//! It is recognised by the marker, never by how its type is spelled, so type aliases and
//! re-exports work. Its type implements [`FromRunContext`](../tools_runtime/trait.FromRunContext.html):
//!
//! | type | value |
//! | --- | --- |
//! | `ToolRunContext` | the call's context: call id, token, parent, agent, cancellation, `defer_context`, shared state |
//! | `CancellationToken` | the token the body must observe |
//! | `Arc<T>` | shared state installed in the runtime (`ToolRuntime::insert_state`); the call fails if it is missing |
//! | your type | whatever your `FromRunContext` implementation extracts |
//!
//! ## Return type and failures
//!
//! - `T` (or no return type, which is `null`): the output schema is `T`'s serialize-side
//!   schema and the value is `T` serialized.
//! - A type spelled `Result<T, E>` (`std::result::Result`, or an alias named `Result` such as
//!   `io::Result<T>`): `Ok` as above; `Err` becomes a tool failure. A `ToolError` is kept as is;
//!   an `E` implementing `ToolFailure` keeps its own code; any other `E: Display` fails with code
//!   `TOOL_FAILED` and its `Display` text. Other aliases of `Result` must be spelled out.
//!
//! ## Keys of `#[tool(...)]`
//!
//! | key | meaning |
//! | --- | --- |
//! | `name = "..."` | the tool name (default: the function's name); checked at compile time against the catalog's rule (1 to 128 of `A-Z a-z 0-9 _ - .`), and `run_code` and `describe_tools` are reserved |
//! | `description = "..."` | the description, instead of the `///` text; one of the two is required |
//! | `timeout = "30s"` | a cooperative timeout: a number and unit (`ms`, `s`, `m`, `h`), combinable as `"1m30s"`; zero is a compile error |
//! | `long_running` | the tool's calls may run for minutes (`ToolDefinitionBuilder::long_running`: MCP serve offers it as a task) |
//! | `timeout_resets_on_progress = "1h"` | the timeout restarts at each progress report of the call (`ctx.progress(...)`), and this is the maximum total time; needs `timeout`, and at least as long |
//! | `concurrency_safe` | every call may overlap with other concurrency-safe calls |
//! | `concurrency_safe = path` | `fn(&A, &B, ...) -> bool` over references to the typed arguments, in order (context parameters excluded); arguments that do not deserialize classify as exclusive |
//! | `render = path` | `fn(&Value, &Value) -> Vec<ContentBlock>` from arguments and canonical value to content (default: a string as itself, anything else as JSON) |
//! | `presentation_meta = path` | `fn(&Value, &Value) -> Value`, metadata for top-level calls |
//! | `finalize_content = path` | `fn(&ToolExecution, &ToolExecutionResult) -> Option<Vec<ContentBlock>>` |
//! | `present_call = path` | `fn(&Value) -> Option<CallView>`, the tool's card for a call (see `tools_runtime::cards`) |
//! | `present_result = path` | `fn(&Value, &ResultRecord<'_>) -> Option<ResultView>`, the tool's card for a result, from the arguments and what a log keeps of the result |
//! | `callers = "direct"` / `"code"` / `"any"` | who may call the tool: only the model directly (left out of the Code Mode SDK), only `run_code` programs (not offered as a definition), or both (the default); see `tools_runtime::Callers` |
//! | `read_only`, `destructive`, `idempotent`, `open_world` | MCP's behaviour hints (`readOnlyHint`, ...): alone each says `true`, `= true` / `= false` says which; `read_only` with `destructive` is a compile error. They are listed with the tool's schemas and served over MCP (`ToolDefinitionBuilder::annotations`) |
//! | `title = "..."` | a title for people, served with the hints |
//!
//! An unknown key, or a key given twice, is a compile error on that key.
//!
//! ## Bodies and threads
//!
//! The runtime may move a call between threads, so the future of an `async` tool must be
//! `Send`; a body that holds a non-`Send` value (an `Rc`, a `RefCell` borrow) across an
//! `.await` is rejected at compile time with the compiler's explanation of which value and which
//! `.await`. A non-`async` tool runs inline on the executor's thread when called: keep it short,
//! or make it `async` and move blocking work to `tokio::task::spawn_blocking`.
//!
//! # Stateful tools: `#[tools]`
//!
//! Mark an inherent `impl` block `#[tools]` and its tool methods `#[tool]` (same keys). Methods
//! take `&self`; one call on an `Arc` of the value yields every definition of the block, each
//! holding a clone of the `Arc`:
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use tools_runtime::{tool, tools};
//!
//! #[derive(Debug, Default)]
//! struct Notes {
//!     lines: Mutex<Vec<String>>,
//! }
//!
//! #[tools]
//! impl Notes {
//!     /// Add a note.
//!     #[tool]
//!     async fn add_note(&self, text: String) -> usize {
//!         let mut lines = self.lines.lock().unwrap();
//!         lines.push(text);
//!         lines.len()
//!     }
//!
//!     /// List the notes.
//!     #[tool(concurrency_safe)]
//!     fn list_notes(&self) -> Vec<String> {
//!         self.lines.lock().unwrap().clone()
//!     }
//! }
//!
//! let definitions = Arc::new(Notes::default()).tool_definitions().unwrap();
//! let names: Vec<&str> = definitions.iter().map(|d| d.name()).collect();
//! assert_eq!(names, ["add_note", "list_notes"]);
//! ```
//!
//! `#[tools]` reads the block before macros inside it expand, so a macro call inside the block
//! is a compile error (a `#[tool]` it produced would otherwise be missed); a `#[tool]` method
//! outside a `#[tools]` block is a compile error too. Give each type one `#[tools]` block (it
//! generates `tool_definitions`), and no generic parameters.
//!
//! # Schemas of types: `#[derive(ToolSchema)]`
//!
//! The derive implements `ToolSchema` for a struct or an enum, following its serde attributes
//! so the schema states exactly what serde reads (`input_schema`, used for parameters) and
//! writes (`output_schema`, used for outputs). `///` texts become descriptions.
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use serde_json::json;
//! use tools_runtime::ToolSchema;
//!
//! /// A shell command.
//! #[derive(Serialize, Deserialize, ToolSchema)]
//! #[serde(tag = "action", rename_all = "snake_case")]
//! enum Command {
//!     /// Start a program.
//!     Start { program: String, #[serde(default)] args: Vec<String> },
//!     /// Stop everything.
//!     StopAll,
//! }
//!
//! let schema = Command::input_schema().to_json();
//! assert_eq!(schema["oneOf"][0]["properties"]["action"], json!({"type": "string", "const": "start"}));
//! assert_eq!(schema["oneOf"][0]["required"], json!(["action", "program"]));
//! assert_eq!(schema["oneOf"][1]["required"], json!(["action"]));
//! ```
//!
//! | serde attribute | schema |
//! | --- | --- |
//! | `rename`, `rename_all` (all eight cases, and the `serialize`/`deserialize` forms), `rename_all_fields` | the names serde uses on each side |
//! | `alias` | input side only (the output writes the main name): a variant alias joins the `enum`/tag values; a field alias is a property of its own with the field's schema. A required aliased field becomes a `oneOf` with one alternative per name, each listing every name, so exactly one name must be given, as serde demands (it rejects a duplicate). Past 16 alternatives in one object, the aliased fields are left out of `required` and their descriptions say that one name is required. An optional aliased field cannot say "at most one name" in the subset: the schema accepts two of its names, serde rejects that; the description asks for one |
//! | `default` (field or container) | the field is not required on input |
//! | `skip`, `skip_serializing`, `skip_deserializing` | the field or variant is absent on that side |
//! | `skip_serializing_if` | the field is not required on output (`Option::is_none` also drops `null` from its schema) |
//! | `tag`, `tag` + `content`, `untagged`, default external tagging | `oneOf` in that representation; a unit-only enum is a string `enum` |
//! | `transparent`, newtype structs | the inner type's schema |
//! | `flatten` | the fields merge into the object; a flattened enum multiplies the alternatives; a flattened map takes the leftover keys |
//! | `deny_unknown_fields` | a closed input object (outputs are always closed) |
//! | `from = "T"` / `into = "T"` | `T`'s input / output schema |
//! | `with`, `serialize_with`, `deserialize_with`, `try_from`, `remote`, `other`, variant-level `untagged`, `field_identifier`, `variant_identifier`, unknown keys | a compile error at the attribute: implement `ToolSchema` by hand for a newtype instead |
//!
//! Tuple structs and tuple variants (positional arrays) and unions are compile errors. `Option`
//! fields are optional on input; on output they are required and nullable unless skipped when
//! `None`.
//!
//! ## Recursive types
//!
//! The schema subset has no `$ref`, so a recursive type has no schema. A field whose type names
//! the deriving type itself (`children: Vec<Tree>`) is a compile error at that type. A cycle
//! through other derived types (`Folder` holds `Entry`, which holds `Folder`) cannot be seen by
//! a derive, which reads one type at a time; the compiler catches it as a cycle while
//! evaluating a hidden constant of the trait. rustc words that error itself (`error[E0391]:
//! cycle detected when simplifying constant ...`) and only the constant's name is ours, so the
//! name carries the message: `NO_SCHEMA_FOR_A_TYPE_THAT_CONTAINS_ITSELF__HOLD_THE_INNER_PART_AS_SERDE_JSON_VALUE`.
//! The error points at the derive of one type in the cycle, and its notes point at each field
//! type on the way round. To fix it, break the cycle: hold the nested part as
//! `serde_json::Value`, or bound the depth with a separate type for the inner level.
//! Cycles through a generic type's parameters, or through hand-written implementations, are not
//! detected; avoid them.
//!
//! Untagged enums: the alternatives must be distinguishable, since a value has to match exactly
//! one `oneOf` alternative.
//!
//! # How the crate is built
//!
//! In the manner of `serde_derive`: each macro parses its input into a typed model, validates
//! the model (collecting every error with the span of the offending token), then expands it;
//! with errors it emits them beside a stub, so one mistake gives one error rather than a cascade.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod case;
mod derive;
mod diag;
mod tool;

use proc_macro::TokenStream;

/// Turns a function into a tool; see the [crate documentation](crate).
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    tool::tool(args.into(), item.into()).into()
}

/// Turns the `#[tool]` methods of an `impl` block into tools bound to an `Arc` of the value; see
/// the [crate documentation](crate#stateful-tools-tools).
#[proc_macro_attribute]
pub fn tools(args: TokenStream, item: TokenStream) -> TokenStream {
    tool::tools(args.into(), item.into()).into()
}

/// Implements `ToolSchema` for a struct or enum, following its serde attributes; see the
/// [crate documentation](crate#schemas-of-types-derivetoolschema).
#[proc_macro_derive(ToolSchema)]
pub fn derive_tool_schema(input: TokenStream) -> TokenStream {
    match syn::parse::<syn::DeriveInput>(input) {
        Ok(input) => derive::derive(&input).into(),
        Err(e) => e.to_compile_error().into(),
    }
}
