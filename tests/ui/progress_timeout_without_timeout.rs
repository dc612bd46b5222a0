use tools_runtime::tool;

/// Export everything.
#[tool(timeout_resets_on_progress = "1h")]
async fn export(text: String) -> String {
    text
}

/// Export a part.
#[tool(timeout = "10m", timeout_resets_on_progress = "1m")]
async fn export_part(text: String) -> String {
    text
}

fn main() {}
