//! Procedural macros of the toolkit: `#[tool]`, `#[tools]` and `#[derive(ToolSchema)]`.
//!
//! Depend on `tools-runtime` and use the macros through it (`use tools_runtime::{tool, tools,
//! ToolSchema};`): the code these macros generate names only `::tools_runtime::__private`
//! paths. The macros are documented where they are re-exported, in `tools-runtime`.
//!
//! Each macro parses its input into a typed model, validates the model (collecting every error
//! with the span of the offending token), then expands it; with errors, it emits them beside a
//! stub so one mistake gives one error.

mod case;
mod derive;
mod diag;
mod tool;

use proc_macro::TokenStream;

/// Turns a function into a tool; see `tools_runtime::tool`.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    tool::tool(args.into(), item.into()).into()
}

/// Turns the `#[tool]` methods of an `impl` block into tools; see `tools_runtime::tools`.
#[proc_macro_attribute]
pub fn tools(args: TokenStream, item: TokenStream) -> TokenStream {
    tool::tools(args.into(), item.into()).into()
}

/// Implements `ToolSchema` following the type's serde attributes; see
/// `tools_runtime::ToolSchema`.
#[proc_macro_derive(ToolSchema)]
pub fn derive_tool_schema(input: TokenStream) -> TokenStream {
    match syn::parse::<syn::DeriveInput>(input) {
        Ok(input) => derive::derive(&input).into(),
        Err(e) => e.to_compile_error().into(),
    }
}
