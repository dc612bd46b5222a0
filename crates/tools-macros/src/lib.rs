//! Procedural macros of the toolkit: `#[tool]`, `#[tools]` and `#[derive(ToolSchema)]`.
//!
//! Depend on `tools-runtime` and use the macros through it (`use tools_runtime::tool;`): the code
//! these macros generate names only `::tools_runtime::__private` paths.
