use serde::{Deserialize, Serialize};
use tools_runtime::ToolSchema;

/// A directory tree.
#[derive(Serialize, Deserialize, ToolSchema)]
struct Tree {
    name: String,
    children: Vec<Tree>,
}

fn main() {}
