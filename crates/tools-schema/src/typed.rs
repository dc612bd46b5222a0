//! Schemas of Rust types: the `ToolSchema` trait that `#[derive(ToolSchema)]` implements and the
//! `#[tool]` macro uses for parameters and outputs.
