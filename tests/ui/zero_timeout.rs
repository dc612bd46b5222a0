use tools_runtime::tool;

/// Echo the text back.
#[tool(timeout = "0s")]
async fn echo(text: String) -> String {
    text
}

fn main() {}
