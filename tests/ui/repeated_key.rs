use tools_runtime::tool;

/// Echo the text back.
#[tool(name = "echo", name = "say")]
fn echo(text: String) -> String {
    text
}

fn main() {}
