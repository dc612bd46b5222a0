//! Provider dialects of tool schemas.
//!
//! The registry holds one canonical schema per tool (the [`tools_schema`] subset). Every model
//! provider takes a different dialect of JSON Schema for tool definitions. This crate projects a
//! tool onto each of them, says what each projection lost or changed (a [`Finding`] per change,
//! with its path and the provider rule behind it), checks the providers' documented limits before
//! any request is made, and turns the model's arguments back into canonical arguments
//! ([`Decoder`]) so the tool body never sees a provider's shape.
//!
//! | [`Dialect`] | definition | schema rules |
//! | --- | --- | --- |
//! | `OpenAiChat { strict }` | `{"type": "function", "function": {name, description, parameters, strict}}` | strict: every property required (optional ones nullable), every object closed, supported keywords only, size limits |
//! | `OpenAiResponses { strict }` | `{"type": "function", name, description, parameters, strict}` | as Chat Completions |
//! | `Anthropic { strict }` | `{name, description, input_schema, strict?}` | strict: every object closed, no numeric or length bounds, `minItems` 0 or 1; per request at most 20 strict tools, 24 optional parameters, 16 unions |
//! | `GeminiParameters` | `{name, description, parameters}` | the OpenAPI 3.0 subset: no `additionalProperties`, `oneOf` or `const`, string enums only, `nullable` |
//! | `GeminiJsonSchema` | `{name, description, parametersJsonSchema}` | JSON Schema without `oneOf` and `const` |
//! | `Mcp` | `{name, description, inputSchema, outputSchema?}` (JSON Schema 2020-12) | none: the canonical schema as it is |
//!
//! Non-strict OpenAI and Anthropic send the canonical schema unchanged (`strict: false` is
//! always written for OpenAI). Every rule, with its source, is in [`rules::RULES`]. Strict
//! OpenAI also leaves out `minLength`, `maxLength` and `uniqueItems`, sends maps as
//! `[{key, value}]` and values of any type as JSON text, and holds a request to at most 10 levels
//! of objects, 5,000 properties, 1,000 enum values and 120,000 characters of names and values.
//!
//! A `oneOf` becomes `anyOf` only when its alternatives provably exclude each other (different
//! types, disjoint `enum`/`const` values, or a required tag property), and a null alternative
//! wraps a node instead of being merged into its `anyOf`. [`check`] is a checker of the
//! providers' rules written apart from the projection; the tests run it on every projection of
//! every corpus schema.
//!
//! # Findings and policy
//!
//! A [`Finding`] is `{path, rule, class}`: the JSON pointer (prefixed `#`) of the canonical
//! schema node, the id of the [rule](rules) and the [`Class`] of change: `lossless`,
//! `annotation-dropped`, `widened` (a constraint the provider cannot say is left to the tool's
//! own validation), `narrowed` (some canonical values can no longer be sent), `reshaped` (a
//! different shape that the decoder turns back) or `unrepresentable`. Findings of class
//! [`Class::Unrepresentable`] are what the [`Policy`] of a call decides about: fail, warn (keep
//! the best effort), or send that tool non-strict. A provider's size limits are always errors
//! ([`DialectError::Limit`]) naming the tool, the path and the limit.
//!
//! # Decoding
//!
//! A strict dialect reshapes some nodes: an optional property becomes required and nullable, a
//! map becomes an array of `{"key", "value"}` pairs, a value of any type becomes JSON text, a
//! Gemini number enum becomes strings. [`Decoder::decode`] undoes each, so
//! `decode(encode(v)) == v` for every canonical value `v` the projection can carry
//! ([`Decoder::encode`] says which it cannot).
//!
//! # Tool names
//!
//! [`names::NameMap`] projects names onto `^[A-Za-z_][A-Za-z0-9_-]{0,63}$` (a name outside it
//! gets `_` for each other character and a hash suffix), reports collisions as errors, and maps
//! the model's calls back; [`project_request`] uses it, and [`Request::decode_call`] turns a
//! model's call back into the tool's name and canonical arguments.
//!
//! # Example
//!
//! ```
//! use serde_json::json;
//! use tools_dialects::{Class, Dialect, Policy, project};
//! use tools_schema::CatalogEntry;
//!
//! let tool = CatalogEntry {
//!     name: "set_env".into(),
//!     description: "Set variables.".into(),
//!     input_schema: json!({
//!         "type": "object",
//!         "properties": {
//!             "vars": {"type": "object", "additionalProperties": {"type": "string"}},
//!             "scope": {"type": "string", "enum": ["user", "system"]}
//!         },
//!         "required": ["vars"],
//!         "additionalProperties": false
//!     }),
//!     output_schema: None,
//!     annotations: None,
//! };
//! let strict = project(&tool, Dialect::OpenAiChat { strict: true }, Policy::Error).unwrap();
//! assert_eq!(strict.definition["function"]["strict"], json!(true));
//! let params = &strict.definition["function"]["parameters"];
//! assert_eq!(params["required"], json!(["vars", "scope"]));
//! assert_eq!(params["properties"]["vars"]["type"], json!("array"));
//! assert!(strict.findings.iter().any(|f| f.class == Class::Reshaped && f.path == "#/properties/vars/additionalProperties"));
//!
//! // What the model sends, back to what the tool expects.
//! let sent = json!({"vars": [{"key": "PATH", "value": "/bin"}], "scope": null});
//! assert_eq!(strict.decoder.decode(sent).unwrap(), json!({"vars": {"PATH": "/bin"}}));
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod check;
mod dialect;
mod envelope;
mod finding;
pub mod names;
mod plan;
mod pointer;
mod project;
mod projection;
mod request;
pub mod rules;

pub use dialect::Dialect;
pub use envelope::parameters_of;
pub use finding::{Class, Finding};
pub use plan::{DecodeError, Decoder, EncodeError};
pub use projection::{DialectError, MAX_SCHEMA_DEPTH, Policy, Projection, project};
pub use request::{CallError, Request, project_request};
