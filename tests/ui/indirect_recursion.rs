use serde::{Deserialize, Serialize};
use tools_runtime::ToolSchema;

#[derive(Serialize, Deserialize, ToolSchema)]
struct Folder {
    entries: Vec<Entry>,
}

#[derive(Serialize, Deserialize, ToolSchema)]
enum Entry {
    File(String),
    Folder(Folder),
}

fn main() {}
